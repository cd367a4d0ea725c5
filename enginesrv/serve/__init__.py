"""The server side: the TCP listener and its connections (``server``; each ``connection``
reads its requests with a ``reader`` under the ``limits``), the protocol session each
connection or stdio engine holds (``session``: its options in ``settings``, its game in
``positions``, its one search in ``searching``, run by its own ``bot`` or, for a game the
server referees, through ``hooks``), and the long-running programs that start them with a
worker pool (``app``: ``enginesrv serve`` and ``enginesrv engine``). Knows nothing of matches
and tournaments."""

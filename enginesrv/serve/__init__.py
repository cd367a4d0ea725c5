"""The server side: the TCP listener and its connections (``server``), the protocol session
each connection or stdio engine holds (``session``), and the long-running programs that start
them with a worker pool (``app``: ``enginesrv serve`` and ``enginesrv engine``). Knows nothing
of matches and tournaments."""

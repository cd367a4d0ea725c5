"""Where searches run: the pool of worker processes (``pool``), the worker each is
(``worker``), the time manager that turns clocks into a search's time (``timeman``), and the
fixed benchmark of ``enginesrv bench`` (``bench``). Used by the server and the arbiter alike."""

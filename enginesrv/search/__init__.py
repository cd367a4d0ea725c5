"""Where searches run: the pool of worker processes (``pool``), how it shares them among peers
(``share``) and starts, replaces and ends them (``processes``), the worker each is (``worker``),
the time manager that turns clocks into a search's time (``timeman``), and the fixed benchmark
of ``enginesrv bench`` (``bench``). Used by the server and the arbiter alike."""

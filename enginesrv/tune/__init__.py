"""Tuning a player's parameters by SPSA (``enginesrv tune``): the algorithm and its schedule
(``spsa``), a run's configuration (``config``) and stored state (``state``), the loop that
plays its game pairs on an event's runner (``run``), and what a run found (``report``)."""

"""The timeouts and sizes of an event on a cluster (``ClusterSettings``), in one value.

The coordinator is given them (``open_cluster_runner``, ``ClusterRunner``), hands them to its
result listener, and sends them to the workers with every game (``wire.GameTask``), so that
what a worker waits for is what the coordinator was told, not a default of the worker's own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """What bounds each wait and size of an event on a cluster; the defaults are those of the
    command line (which sets none of them)."""

    # -- the coordinator and the scheduler

    connect_timeout: float = 10.0
    """Seconds to reach the scheduler before the event gives up (and, with
    ``release_timeout``, what closing the Dask client may take at the end)."""
    look_timeout: float = 10.0
    """Seconds the scheduler is given to list its workers, or to cancel a task."""
    watch_interval: float = 1.0
    """Seconds between the coordinator's looks at the cluster's workers: a worker that joined
    is checked, one that left is dropped."""
    release_timeout: float = 10.0
    """Seconds the end of an event waits for the workers to end its engines."""
    queued_per_thread: int = 2
    """Games in flight per worker thread (``ClusterRunner.in_flight``)."""

    # -- the workers' checks (the preflight) and the workers that come and go

    preflight_timeout: float = 60.0
    """Seconds a worker's check (each player started once there: the preflight) may take; a
    worker whose check has not answered by then runs no player of the event."""
    rejoin_wait: float = 10.0
    """Seconds an event that lacks workers for a game waits, after a worker was lost, for
    another to join and pass its check (a nanny restarts its worker within seconds) before it
    stops."""
    checks_lost: int = 2
    """Workers lost during their checks, while an event waits for a worker for a game, after
    which it stops waiting: the check is then most likely what kills them (an engine that takes
    all the memory as it starts: each worker that a nanny starts again dies in its check)."""

    # -- a game's task

    sent_again: int = 3
    """Times a game is sent again because every worker it was sent to left the cluster before
    it ended (Dask would keep it waiting for them)."""
    retries: int = 2
    """Times a game whose task failed (an error on the worker, not a player's fault: those are
    forfeits inside the game) is run again before the event stops. A worker lost mid-game is
    Dask's to reschedule (``distributed.scheduler.allowed-failures``, 3 by default)."""
    stop_poll: float = 1.0
    """Seconds between a worker's looks at the event's stop flag, while it plays a game of the
    event (a stopped event's games end within this)."""

    # -- the results sent straight back (the worker's push, the coordinator's listener)

    push_timeout: float = 5.0
    """Seconds a worker gives the coordinator to take a result sent straight to it; past them,
    or when it cannot connect, the result goes back through Dask (and later ones of the event
    too)."""
    push_read_timeout: float = 10.0
    """Seconds the coordinator gives a connection to send its whole result."""
    ack_wait: float = 2.0
    """Seconds the coordinator may hold a worker's result unanswered while it stores it (the
    worker's next game waits on the answer, and the Dask messages of this one's end do not come
    while it is being stored)."""
    push_max_bytes: int = 64 << 20
    """The largest result sent straight: a worker sends a larger one through Dask, and the
    coordinator takes none larger (a record of 256 MiB, the records' cap, would go back through
    Dask)."""
    push_connections: int = 128
    """Connections the coordinator's result listener holds at once (each until its result is
    stored), when it has no admission of the process's to share; it closes any beyond, and their
    workers send those results through Dask."""

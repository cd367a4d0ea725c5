"""A bounded pool of search worker processes (see ``enginesrv.search.worker``), driven from trio.

``WorkerPool.search`` hands one job to an idle worker, forwards its progress, relays a stop and
bounds every wait:

* a stop (or the hard deadline) is sent to the worker, which then has ``grace`` seconds to
  answer; a worker still silent after that is killed and replaced, and the search ends with no
  result (the caller plays the best move reported so far, or any legal move);
* a worker that dies is replaced; its search ends with an error;
* a search or a stop that a worker does not take within the grace period, or
  ``SEND_FLOOR`` if longer (its input stays full: it is hung), gets it killed and replaced
  (the reason logged: ``STUCK``); a search it never took ends with that error;
* a caller that is cancelled (its client went away) gets its search stopped; the worker comes
  back to the pool once it has answered, or is killed after the grace period.

Workers are shared fairly among peers (``enginesrv.search.share``): no peer, on any number of
connections, keeps the workers from the others for longer than a slice, whether its searches
are infinite, deep or long. A search suspended for another peer's waits in turn and goes on
where it stood (``search``). The processes themselves are started, replaced and ended by
``enginesrv.search.processes``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import trio

from bots.engine import SearchInfo
from enginesrv.search.child import PoolJob, SearchOutcome, WorkerProcess
from enginesrv.search.jobs import SearchJob
from enginesrv.search.processes import READY_TIMEOUT, WORKER_COMMAND, WorkerSet
from enginesrv.search.resume import HELD_WAIT, LONGEST_SLICE, Turn
from enginesrv.search.share import SLICE, FairShare, Segment, Waiter
from enginesrv.search.waits import first_of
from protocol import rpc

__all__ = [
    "GRACE",
    "HELD_WAIT",
    "LONGEST_SLICE",
    "MIN_GRACE",
    "SLICE",
    "WORKER_COMMAND",
    "WorkerPool",
    "stall_grace",
]

GRACE = 0.2
"""Seconds a worker gets past its deadline, or after a stop, before it is killed."""
MIN_GRACE = 0.02
"""The shortest grace period ``stall_grace`` gives, however close the answer is due: a worker
killed for being a few milliseconds late costs more than it saves."""


STUCK = "the search worker does not read what it is sent"
"""Why a worker whose input stays full past its grace period is killed (a healthy worker
reads each message as it comes, so one ever waits only for room in the pipe)."""
SEND_FLOOR = 0.5
"""The shortest time a message to a worker is given, however short its grace: a healthy
worker takes even a 1 MiB search (Yin Yang's largest) within some 50 ms, a pause of its
garbage collector included, and a grace may be 0."""


async def _send(worker: WorkerProcess, data: bytes, within: float) -> str | None:
    """Send ``data`` to ``worker`` within ``within`` seconds (``SEND_FLOOR`` at least); None
    once sent, or why not: it died, or it is ``STUCK``."""
    with trio.move_on_after(max(within, SEND_FLOOR)):
        try:
            await worker.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return "the search worker died"
        return None
    return STUCK


def stall_grace(grace: float, deadline: float, due: float) -> float:
    """The grace period of a search whose deadline is ``deadline`` seconds after it was asked
    for and whose answer is due ``due`` seconds after (a clock less what the answer's way
    takes): ``grace``, shortened so that the stop of a worker that stalls (a grace period past
    the deadline) and its kill (one more) both come by then, and its best move so far is
    answered in time; at least ``MIN_GRACE``."""
    return min(grace, max(MIN_GRACE, (due - deadline) / 2))


class WorkerPool:
    """``size`` worker processes running ``command``, owned by ``nursery``: call ``start``
    first and ``aclose`` last.

    Args:
        per_peer: the most workers one peer may hold at once (None: no cap). Searches without
            a peer are not capped.
        hash_budget: MB of transposition tables all workers together may keep (None: no
            cap); each worker keeps at most its share, ``hash_share``.
        spare: workers started beyond ``size`` that only stand in: at most ``size`` search at
            once, but when a worker is killed (past its deadline) or dies, a spare takes the
            next search at once instead of that search waiting a second or more for a new
            process to start (at a fraction of a second per move, a loss on time).
        restart_spawner: whether a spawner that died (``forked.Spawner``) is started again;
            False where engines run beside the pool (an event's arbiter): then a pool whose
            spawner was killed replaces no worker, and its searches use those left.
        slice_seconds: seconds a search keeps its worker before it may be suspended for a
            peer holding fewer (0: never).
    """

    def __init__(  # noqa: PLR0913  (the keyword options of a public constructor, passed by name)
        self,
        nursery: trio.Nursery,
        size: int,
        *,
        grace: float = GRACE,
        command: tuple[str, ...] = WORKER_COMMAND,
        ready_timeout: float = READY_TIMEOUT,
        per_peer: int | None = None,
        hash_budget: int | None = None,
        spare: int = 0,
        restart_spawner: bool = True,
        slice_seconds: float = SLICE,
    ) -> None:
        self.nursery = nursery
        self.size = max(1, size)
        self.grace = grace
        self.spare = max(0, spare)
        self.hash_share = (
            None if hash_budget is None else max(1, hash_budget // (self.size + self.spare))
        )
        self._ids = itertools.count(1)
        self._share = FairShare(
            self.size, per_peer=per_peer, slice_seconds=slice_seconds, release=self._release
        )
        self._processes = WorkerSet(
            nursery,
            command=command,
            ready_timeout=ready_timeout,
            restart_spawner=restart_spawner,
            on_free=self._release,
            on_lost=self._share.fail_waiting,
        )

    async def start(self) -> None:
        """Start the workers and wait until they are ready (or ``ready_timeout`` has passed),
        so that no search pays for a worker's start-up."""
        await self._processes.start(self.size + self.spare)

    @property
    def idle(self) -> int:
        """Workers free right now."""
        return len(self._share.idle)

    @property
    def busy(self) -> int:
        """Workers searching, or finishing a stopped search, right now."""
        return len(self._processes.workers) - len(self._share.idle) - self._processes.pending

    def all_idle(self) -> bool:
        """Whether every worker is idle and none is being started."""
        return len(self._share.idle) == self.size + self.spare and self._processes.pending == 0

    @property
    def restarts(self) -> int:
        """Workers replaced so far (dead or killed)."""
        return self._processes.restarts

    @property
    def suspended(self) -> int:
        """Searches suspended so far, for another peer's."""
        return self._share.suspended

    @property
    def closed(self) -> bool:
        """Whether the pool is closing or closed (``kill_all``, ``aclose``)."""
        return self._processes.closed

    @property
    def lost(self) -> str | None:
        """Why the pool has no worker left and can start none (its spawner was killed)."""
        return self._processes.lost

    def _release(self, worker: WorkerProcess) -> None:
        """Take back a worker: idle again, or replaced if it died; then hand workers out."""
        if self._processes.closed:
            return
        if worker.is_alive():
            self._share.idle.append(worker)
        else:
            self.nursery.start_soon(self._processes.replace, worker)
        self._share.dispatch()

    # -- searching -----------------------------------------------------------------------------

    async def search(  # noqa: PLR0913  (keyword options, passed by name)
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
        on_worker: Callable[[bool], None] | None = None,
    ) -> SearchOutcome:
        """Run ``job`` on a worker.

        A search may be suspended for a peer holding fewer workers (``FairShare.lend_to``):
        stopped on its worker, its best move so far kept, it waits for a worker again and
        goes on where it stood (a new search of the position, with the time it has left: its
        wait while suspended does not count). It is answered only once it is done: an
        infinite search at its ``stop``, whatever happened between.

        Args:
            job: the search.
            on_info: called (synchronously, on the event loop) with each progress report.
            stop: set it to make the search return at once with its best move.
            hard_deadline: ``trio.current_time()`` by which a result must be back; past it
                (plus the grace period) the worker is killed. None: no deadline.
            on_wait: called when the job must wait for a free worker (at first, and again
                when it is suspended).
            peer: who asks (a client's address), for the per-peer cap and the fair queue.
            on_hold: called with True when a worker takes the search and False when it is
                suspended. When given, the search's time runs only while it holds a worker:
                its first wait does not count either (a refereed bot's clock is the
                referee's, and runs only while the bot searches), and its waits are
                bounded on their own, ``HELD_WAIT`` seconds in all.
            grace: this search's grace period (None: the pool's): how long a worker asked to
                stop may take to answer before it is killed.
            on_worker: called with True when a worker takes the search and False when it
                gives it back (done or suspended), changing nothing of its time (an
                account's quota counts the time its searches hold workers).
        """
        if self.hash_share is not None:
            job = replace(job, hash_budget=self.hash_share)
        turn = Turn(trio.current_time(), on_hold)
        while True:
            worker = await self._worker_for(
                turn, job, peer=peer, on_wait=on_wait, stop=stop, hard_deadline=hard_deadline
            )
            if isinstance(worker, SearchOutcome):
                return turn.unserved(worker)
            turn.taken()
            segment = turn.segment(job, peer, self._share.slice)
            if on_worker is not None:
                on_worker(True)
            try:
                outcome = await self._run(
                    worker,
                    turn.segment_job(job),
                    segment,
                    on_info=on_info,
                    stop=stop,
                    until=turn.until(hard_deadline),
                    before=turn.best,
                    grace=self.grace if grace is None else grace,
                )
            finally:
                if on_worker is not None:
                    on_worker(False)
            if outcome is not None:
                return outcome
            # suspended: go on later where it stood, on a warm table where it can
            turn.suspended(segment.outcome)
            job = replace(job, new_game=False)

    async def _worker_for(
        self,
        turn: Turn,
        job: SearchJob,
        *,
        peer: str | None,
        on_wait: Callable[[], None] | None,
        stop: trio.Event,
        hard_deadline: float | None,
    ) -> WorkerProcess | SearchOutcome:
        """A live worker for the next segment of ``job`` (the wait counted in ``turn``), or
        the outcome of a search that never got one."""
        waited_from = trio.current_time()
        until = turn.wait_until(hard_deadline, waited_from)
        while True:
            lost = self._no_worker()
            if lost is not None:
                return lost
            waiter = Waiter(peer, job.session, resuming=turn.resumed > 0, background=job.background)
            worker = await self._share.acquire(waiter, on_wait, stop, until)
            lost = self._no_worker()
            if worker is None and lost is not None:
                return lost
            if worker is None:
                # stopped, or out of time, before a worker was free: no search at all
                return SearchOutcome(None, killed=not stop.is_set())
            if worker.is_alive():
                turn.count_wait(trio.current_time() - waited_from)
                return worker
            self._share.give_back(peer, worker)  # died while idle: it is replaced

    async def _run(
        self,
        worker: WorkerProcess,
        job: SearchJob,
        segment: Segment,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        until: float,
        before: SearchOutcome | None,
        grace: float,
    ) -> SearchOutcome | None:
        """Run ``job`` on ``worker``: its outcome, or None when it was suspended (its outcome
        so far is then ``segment.outcome``)."""
        shown = 0 if before is None or before.last_info is None else before.last_info.depth or 0

        def forward(info: SearchInfo) -> None:
            # a search that goes on after a suspension starts its iterations again: the
            # depths already reported are not reported a second time
            if info.depth is None or info.depth > shown:
                on_info(info)

        running = PoolJob(next(self._ids), forward)
        worker.job = running
        peer = segment.peer
        released = False
        self._share.segments.add(segment)
        try:
            unsent = await _send(
                worker, rpc.pack_request(running.msgid, "search", job.to_map()), grace
            )
            if unsent is not None:
                running.error = unsent
                running.done.set()
            with trio.move_on_at(until):
                await first_of(running.done, stop, segment.suspend)
            suspended = not running.done.is_set() and segment.suspend.is_set()
            if not running.done.is_set():
                # stopped, suspended or past the hard deadline: the worker has the grace
                # period to answer
                unsent = await self._stop(worker, running, grace)
            outcome = SearchOutcome(running.result, running.error, False, running.last_info)
            if unsent == STUCK or not running.done.is_set():
                outcome.killed = True
                why = "no answer to stop" if stop.is_set() else "deadline"
                self._processes.kill(worker, STUCK if unsent == STUCK else why)
            released = True
            self._share.segments.discard(segment)
            if suspended and segment.lend_to is not None:
                self._share.hand_over(peer, worker, segment.lend_to)
            else:
                self._share.give_back(peer, worker)
            if suspended and running.error is None and not stop.is_set():
                segment.outcome = outcome
                return None
            if outcome.result is None and before is not None and before.result is not None:
                return before  # this part found nothing: the move found before stands
            return outcome
        finally:
            self._share.segments.discard(segment)
            if not released:
                # cancelled (the client went away): clean up without blocking the caller
                self.nursery.start_soon(self._abandon, worker, running, peer)

    def _no_worker(self) -> SearchOutcome | None:
        """The failed search of a pool that has no worker left and can start none."""
        if self._processes.lost is None:
            return None
        return SearchOutcome(None, f"no search worker left: {self._processes.lost}")

    async def _stop(self, worker: WorkerProcess, job: PoolJob, grace: float) -> str | None:
        """Stop ``job`` and give ``worker`` ``grace`` seconds to answer; None, or why the
        stop could not be sent (the caller kills a worker that has not answered)."""
        if job.done.is_set() or not worker.is_alive():
            return None
        unsent = await _send(worker, rpc.pack_notification("stop", {"search": job.msgid}), grace)
        if unsent is not None:
            return unsent
        with trio.move_on_after(grace):
            await job.done.wait()
        return None

    async def _abandon(self, worker: WorkerProcess, job: PoolJob, peer: str | None) -> None:
        with trio.move_on_after(self.grace * 2 + 1):  # the send may block on a full pipe
            await self._stop(worker, job, self.grace)
        if not job.done.is_set():
            self._processes.kill(worker, "abandoned")
        self._share.give_back(peer, worker)

    def kill_all(self) -> None:
        """Kill every worker at once (the second interrupt: no waiting for anything)."""
        self._processes.kill_all()

    async def aclose(self) -> None:
        """Stop every worker (end of input first, a kill if it lingers) and reap it."""
        self._share.idle.clear()
        await self._processes.aclose()

"""A bounded pool of search worker processes (see ``enginesrv.search.worker``), driven from trio.

``WorkerPool.search`` hands one job to an idle worker, forwards its progress, relays a stop and
bounds every wait:

* a stop (or the hard deadline) is sent to the worker, which then has ``grace`` seconds to
  answer; a worker still silent after that is killed and replaced, and the search ends with no
  result (the caller plays the best move reported so far, or any legal move);
* a worker that dies is replaced; its search ends with an error;
* a caller that is cancelled (its client went away) gets its search stopped; the worker comes
  back to the pool once it has answered, or is killed after the grace period.

Workers are shared fairly. Searches that must wait queue per peer (a client's address
prefix); a freed worker goes to the next peer in turn, so a peer that queues many searches
delays the others by at most one search each. A peer may also hold at most ``per_peer``
workers at once. And when a peer holding fewer workers than another waits, a search of that
other peer that has held its worker for ``slice`` seconds is suspended and its worker lent to
the waiting search (``_lend_to``, ``_hand_over``); the suspended search waits in turn and goes
on where it stood (``search``). So no peer, on any number of connections, keeps the workers
from the others for longer than a slice, whether its searches are infinite, deep or long.
Among the idle workers a search goes to the one that last searched for its session, where its
bot's table and the plan of its turn are warm.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import structlog
import trio

from bots.engine import SearchInfo
from enginesrv import orphans, reaper
from enginesrv.search import forked
from enginesrv.search.child import PoolJob, SearchOutcome, WorkerProcess
from enginesrv.search.forked import Spawner, SpawnerGoneError
from enginesrv.search.jobs import SearchJob
from enginesrv.search.waits import WorkerProcess as ProcessHandle
from enginesrv.search.waits import first_of, reap, stop
from protocol import rpc

GRACE = 0.2
"""Seconds a worker gets past its deadline, or after a stop, before it is killed."""
SLICE = 1.0
"""Seconds a search keeps its worker before it may be suspended for a peer holding fewer; it
doubles each time the search is resumed (up to ``LONGEST_SLICE``), so that a search with an
end of its own (a depth, a node count) is sure to reach it."""
LONGEST_SLICE = 64.0
HELD_WAIT = 300.0
"""Seconds at most a search whose time runs only while it holds a worker (``on_hold``) waits
for one, in all."""
READY_TIMEOUT = 30.0
"""Seconds a new worker gets to load the games and bots and report ready; one that does not
is handed out anyway (its first search then waits for it)."""
CLOSE_TIMEOUT = 0.5
"""Seconds a worker gets to exit once its input is closed before it is killed."""
REMEMBERED_SESSIONS = 1024
"""Sessions whose last worker the pool remembers, to send their next search there."""
WORKER_COMMAND = (sys.executable, "-m", "enginesrv.search.worker")
"""How a search worker is started."""

log = structlog.get_logger("enginesrv.search.pool")


@dataclass(eq=False)
class _Segment:
    """A search holding a worker, as ``_lend_to`` sees it."""

    peer: str | None
    since: float
    """When it took its worker (``trio.current_time``)."""
    ends: float
    """When its time is up (inf: an infinite, depth or node search)."""
    hold: float = SLICE
    """Seconds it keeps its worker before it may be suspended."""
    suspend: trio.Event = field(default_factory=trio.Event)
    outcome: SearchOutcome | None = None
    """What it had found when it was suspended."""
    lend_to: _Waiter | None = None
    """The search its worker goes to once it is suspended."""


def _better(before: SearchOutcome | None, now: SearchOutcome | None) -> SearchOutcome | None:
    """The outcome to keep of a search suspended once more: the later one, if it found a move
    (its iterations, on a table warmed by the earlier ones, are the better informed)."""
    if now is None or now.result is None:
        return before
    return now


@dataclass(eq=False)
class _Waiter:
    """A search waiting for a worker."""

    peer: str | None
    session: str | None = None
    granted: trio.Event = field(default_factory=trio.Event)
    worker: WorkerProcess | None = None
    resuming: bool = False
    """A suspended search waiting to go on (it waits out the longer holds of others)."""


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
    """

    def __init__(
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
        self.slice = slice_seconds
        """Seconds a search keeps its worker before it may be suspended (0: never)."""
        self._segments: set[_Segment] = set()
        self.suspended = 0
        """Searches suspended so far, for another peer's."""
        self.command = command
        self._spawner = (
            Spawner(restart=restart_spawner)
            if command == WORKER_COMMAND and forked.available()
            else None
        )
        """Forks the default workers (``enginesrv.search.spawner``): a worker started while
        engines of the same user run could be read by them as it starts."""
        self.ready_timeout = ready_timeout
        self.size = max(1, size)
        self.grace = grace
        self.per_peer = per_peer
        self.spare = max(0, spare)
        self.hash_share = (
            None if hash_budget is None else max(1, hash_budget // (self.size + self.spare))
        )
        self._ids = itertools.count(1)
        self._numbers = itertools.count(1)
        self._idle: list[WorkerProcess] = []
        self._last_worker: OrderedDict[str, WorkerProcess] = OrderedDict()
        """The worker that last searched for each session (the latest ``REMEMBERED_SESSIONS``)."""
        self._waiting: OrderedDict[str | None, deque[_Waiter]] = OrderedDict()
        self._holding: Counter[str | None] = Counter()
        self._held = 0
        """Workers handed out now (at most ``size``: the spares only stand in)."""
        self._workers: set[WorkerProcess] = set()
        self._pending = 0
        """Workers being started (spawned or replaced) that are not in ``_idle`` yet."""
        self.restarts = 0
        self.closed = False
        self.lost: str | None = None
        """Why the pool has no worker left and can start none (its spawner was killed)."""

    async def start(self) -> None:
        """Start the workers and wait until they are ready (or ``ready_timeout`` has passed),
        so that no search pays for a worker's start-up."""
        for _ in range(self.size + self.spare):
            await self._spawn()
        with trio.move_on_after(self.ready_timeout):
            for worker in list(self._workers):
                await worker.ready.wait()

    async def _start_worker(self) -> ProcessHandle:
        """A new worker: forked by the spawner (the default worker, where it can), else
        started, under the reaper (whatever a plug-in bot starts ends with its worker)."""
        if self._spawner is not None:
            return await self._spawner.fork()
        with orphans.spawning():
            process = await trio.lowlevel.open_process(
                reaper.command(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            orphans.known(process.pid)
        return process

    async def _spawn(self) -> None:
        self._pending += 1
        try:
            process = await self._start_worker()
        except BaseException:
            self._pending -= 1
            raise
        if self.closed:  # the pool closed while the process started: end it here
            self._pending -= 1
            stop(process)
            with trio.CancelScope(shield=True):
                await reap(process)
            orphans.forget(process.pid)
            return
        worker = WorkerProcess(next(self._numbers), process)
        self._workers.add(worker)
        self.nursery.start_soon(worker.read_frames)
        if self.ready_timeout > 0:
            self.nursery.start_soon(self._when_ready, worker)
        else:
            self._pending -= 1
            self._release(worker)

    async def _when_ready(self, worker: WorkerProcess) -> None:
        """Hand a new worker out once it reports ready (or after ``ready_timeout``)."""
        with trio.move_on_after(self.ready_timeout):
            await worker.ready.wait()
        self._pending -= 1
        self._release(worker)

    @property
    def idle(self) -> int:
        """Workers free right now."""
        return len(self._idle)

    @property
    def busy(self) -> int:
        """Workers searching, or finishing a stopped search, right now."""
        return len(self._workers) - len(self._idle) - self._pending

    def all_idle(self) -> bool:
        """Whether every worker is idle and none is being started."""
        return len(self._idle) == self.size + self.spare and self._pending == 0

    # -- fair hand-out -------------------------------------------------------------------------

    def _may_hold(self, peer: str | None) -> bool:
        return peer is None or self.per_peer is None or self._holding[peer] < self.per_peer

    def _dispatch(self) -> None:
        """Give idle workers to waiting searches, one peer after another in turn."""
        while self._idle and self._waiting and self._held < self.size:
            eligible = [p for p in self._waiting if self._may_hold(p)]
            if not eligible:
                return  # everyone waiting is at its cap
            peer = eligible[0]
            queue = self._waiting[peer]
            waiter = queue.popleft()
            if queue:
                self._waiting.move_to_end(peer)  # the next worker goes to another peer
            else:
                del self._waiting[peer]
            worker = self._warm_worker(waiter.session)
            self._holding[peer] += 1
            self._held += 1
            waiter.worker = worker
            waiter.granted.set()

    def _warm_worker(self, session: str | None) -> WorkerProcess:
        """Take the idle worker that last searched for ``session`` (its bot's table and the
        plan of its turn are warm there), else the most lately freed one."""
        warm = self._last_worker.get(session) if session is not None else None
        if warm is not None and warm in self._idle:
            self._idle.remove(warm)
            worker = warm
        else:
            worker = self._idle.pop()
        self._remember(session, worker)
        return worker

    def _remember(self, session: str | None, worker: WorkerProcess) -> None:
        """``worker`` is the one that last searched for ``session``."""
        if session is not None:
            self._last_worker[session] = worker
            self._last_worker.move_to_end(session)
            while len(self._last_worker) > REMEMBERED_SESSIONS:
                self._last_worker.popitem(last=False)

    def _release(self, worker: WorkerProcess) -> None:
        if self.closed:
            return
        if worker.is_alive():
            self._idle.append(worker)
        else:
            self.nursery.start_soon(self._replace, worker)
        self._dispatch()

    def _give_back(self, peer: str | None, worker: WorkerProcess) -> None:
        self._held -= 1
        self._holding[peer] -= 1
        if self._holding[peer] <= 0:
            del self._holding[peer]
        worker.job = None
        self._release(worker)

    async def _acquire(
        self,
        peer: str | None,
        session: str | None,
        on_wait: Callable[[], None] | None,
        stop: trio.Event,
        until: float,
        *,
        resuming: bool = False,
    ) -> WorkerProcess | None:
        """A worker for ``peer``, or None if ``stop`` is set, or ``until`` passes, before one
        is free. While it waits, every ``slice / 4`` seconds, it may have a worker lent to it
        (``_lend_to``)."""
        waiter = _Waiter(peer, session, resuming=resuming)
        self._waiting.setdefault(peer, deque()).append(waiter)
        self._dispatch()
        if not waiter.granted.is_set() and on_wait is not None:
            on_wait()
        try:
            with trio.move_on_at(until):
                while not (waiter.granted.is_set() or stop.is_set()):
                    with trio.move_on_after(self.slice / 4):
                        await first_of(waiter.granted, stop)
                    if not waiter.granted.is_set():
                        self._lend_to(waiter)
        except BaseException:
            self._withdraw(waiter)
            raise
        if waiter.worker is None:
            self._withdraw(waiter)
        return waiter.worker

    def _lend_to(self, waiter: _Waiter) -> None:
        """Suspend one search so that its worker goes to ``waiter``'s peer: a search of
        another peer that holds more workers than this one, that has searched for at least
        ``slice`` seconds since it last took a worker (for a suspended search that waits to
        go on, its own longer hold: ``_Segment.hold``) and has more than ``slice`` seconds
        left; the peer holding most first, then the search that has held its worker longest.
        A new search never waits more than a slice for a worker so, however often the search
        holding it was resumed. The arbiter's own searches (no peer) are never suspended,
        and none for them."""
        peer = waiter.peer
        if peer is None or not self._may_hold(peer) or self.slice <= 0:
            return
        now = trio.current_time()
        mine = self._holding[peer]
        candidates = [
            each
            for each in self._segments
            if each.peer is not None
            and each.peer != peer
            and self._holding[each.peer] > mine
            and now - each.since >= (each.hold if waiter.resuming else self.slice)
            and each.ends - now > self.slice
            and not each.suspend.is_set()
        ]
        if candidates:
            victim = max(candidates, key=lambda each: (self._holding[each.peer], -each.since))
            log.info("search_suspended", peer=victim.peer, held=round(now - victim.since, 3),
                     waiting=peer)  # fmt: skip
            self.suspended += 1
            victim.lend_to = waiter
            victim.suspend.set()

    def _withdraw(self, waiter: _Waiter) -> None:
        """Take a waiter out of the queue, or give back the worker it was granted."""
        if waiter.worker is not None:
            self._give_back(waiter.peer, waiter.worker)
            waiter.worker = None
            return
        queue = self._waiting.get(waiter.peer)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self._waiting[waiter.peer]

    # -- searching -----------------------------------------------------------------------------

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
    ) -> SearchOutcome:
        """Run ``job`` on a worker.

        When searches of peers holding fewer workers wait, a search that has held its
        worker for ``slice`` seconds may be suspended (its worker lent out, ``_lend_to``):
        it is stopped on its worker, its best move so far is kept, and it waits for a worker
        again, then goes on where it stood (a new search on the position, with the time it
        has left; the time it waited suspended is not counted against it). It is answered
        only once it is done: an infinite search at its ``stop``, whatever happened between.

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
        """
        if self.hash_share is not None:
            job = replace(job, hash_budget=self.hash_share)
        asked = trio.current_time()
        extra = 0.0
        """Seconds waited that are not the search's (suspended; the first wait with on_hold)."""
        best: SearchOutcome | None = None
        notify = on_wait
        resumed = 0
        waited = 0.0
        while True:
            waited_from = trio.current_time()
            if on_hold is not None:
                # its time does not run while it waits: the waits are bounded on their own
                wait_until = waited_from + max(0.0, HELD_WAIT - waited)
            else:
                wait_until = math.inf if hard_deadline is None else hard_deadline + extra
            worker = await self._worker_for(
                job, peer, notify, stop, wait_until, resuming=resumed > 0
            )
            if isinstance(worker, SearchOutcome):
                if best is not None and best.result is not None:
                    return best  # stopped while suspended: the best move of before
                return worker
            waited_now = trio.current_time() - waited_from
            waited += waited_now
            if on_hold is not None or resumed:
                extra += waited_now
            until = math.inf if hard_deadline is None else hard_deadline + extra
            if on_hold is not None:
                on_hold(True)
            segment_job = job
            if extra > 0 and job.issued is not None:
                segment_job = replace(job, issued=job.issued + extra)
            ends = math.inf if job.deadline is None else asked + extra + job.deadline
            hold = min(LONGEST_SLICE, self.slice * 2**resumed)
            segment = _Segment(peer, trio.current_time(), ends, hold)
            outcome = await self._run(
                worker, segment_job, segment, on_info=on_info, stop=stop, until=until, before=best
            )
            if outcome is not None:
                return outcome
            # suspended: go on later where it stood, on a warm table where it can
            if on_hold is not None:
                on_hold(False)
            best = _better(best, segment.outcome)
            job = replace(job, new_game=False)
            notify = on_wait
            resumed += 1

    async def _worker_for(
        self,
        job: SearchJob,
        peer: str | None,
        on_wait: Callable[[], None] | None,
        stop: trio.Event,
        until: float,
        *,
        resuming: bool = False,
    ) -> WorkerProcess | SearchOutcome:
        """A live worker for the job, or the outcome of a search that never got one."""
        while True:
            lost = self._no_worker()
            if lost is not None:
                return lost
            worker = await self._acquire(peer, job.session, on_wait, stop, until, resuming=resuming)
            lost = self._no_worker()
            if worker is None and lost is not None:
                return lost
            if worker is None:
                # stopped, or out of time, before a worker was free: no search at all
                return SearchOutcome(None, killed=not stop.is_set())
            if worker.is_alive():
                return worker
            self._give_back(peer, worker)  # died while idle: it is replaced

    async def _run(
        self,
        worker: WorkerProcess,
        job: SearchJob,
        segment: _Segment,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        until: float,
        before: SearchOutcome | None,
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
        self._segments.add(segment)
        try:
            try:
                await worker.send(rpc.pack_request(running.msgid, "search", job.to_map()))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                running.error = "the search worker died"
                running.done.set()
            with trio.move_on_at(until):
                await first_of(running.done, stop, segment.suspend)
            suspended = not running.done.is_set() and segment.suspend.is_set()
            if not running.done.is_set():
                # stopped, suspended or past the hard deadline: the worker has the grace
                # period to answer
                await self._stop(worker, running)
            outcome = SearchOutcome(running.result, running.error, False, running.last_info)
            if not running.done.is_set():
                outcome.killed = True
                self._kill(worker, "no answer to stop" if stop.is_set() else "deadline")
            released = True
            self._segments.discard(segment)
            if suspended and segment.lend_to is not None:
                self._hand_over(peer, worker, segment.lend_to)
            else:
                self._give_back(peer, worker)
            if suspended and running.error is None and not stop.is_set():
                segment.outcome = outcome
                return None
            if outcome.result is None and before is not None and before.result is not None:
                return before  # this part found nothing: the move found before stands
            return outcome
        finally:
            self._segments.discard(segment)
            if not released:
                # cancelled (the client went away): clean up without blocking the caller
                self.nursery.start_soon(self._abandon, worker, running, peer)

    def _hand_over(self, peer: str | None, worker: WorkerProcess, waiter: _Waiter) -> None:
        """Give a suspended search's worker to the search it was lent for, if that one still
        waits and may hold it (else back to the pool, which hands it out in turn): a worker
        lent to one peer must not go to another search of the peer it was taken from."""
        queue = self._waiting.get(waiter.peer)
        if (
            not worker.is_alive()
            or waiter.granted.is_set()
            or queue is None
            or waiter not in queue
            or not self._may_hold(waiter.peer)
        ):
            self._give_back(peer, worker)
            return
        queue.remove(waiter)
        if not queue:
            del self._waiting[waiter.peer]
        self._holding[peer] -= 1
        if self._holding[peer] <= 0:
            del self._holding[peer]
        worker.job = None
        self._holding[waiter.peer] += 1
        self._remember(waiter.session, worker)
        waiter.worker = worker
        waiter.granted.set()

    def _no_worker(self) -> SearchOutcome | None:
        """The failed search of a pool that has no worker left and can start none."""
        if self.lost is None:
            return None
        return SearchOutcome(None, f"no search worker left: {self.lost}")

    async def _stop(self, worker: WorkerProcess, job: PoolJob) -> None:
        if job.done.is_set() or not worker.is_alive():
            return
        try:
            await worker.send(rpc.pack_notification("stop", {"search": job.msgid}))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        with trio.move_on_after(self.grace):
            await job.done.wait()

    async def _abandon(self, worker: WorkerProcess, job: PoolJob, peer: str | None) -> None:
        with trio.move_on_after(self.grace * 2 + 1):  # the send may block on a full pipe
            await self._stop(worker, job)
        if not job.done.is_set():
            self._kill(worker, "abandoned")
        self._give_back(peer, worker)

    def _kill(self, worker: WorkerProcess, why: str) -> None:
        """Kill a worker; it is reaped and replaced when it is given back."""
        log.warning("worker_restart", worker=worker.number, reason=why)
        worker.alive = False
        if worker.process.returncode is None:
            stop(worker.process)

    async def _replace(self, worker: WorkerProcess) -> None:
        """Reap a dead or killed worker (its pipes closed, its exit awaited), start another."""
        if worker not in self._workers:
            return
        self._workers.discard(worker)
        self._pending += 1
        try:
            if worker.process.returncode is None:
                stop(worker.process)
            with trio.CancelScope(shield=True):
                await reap(worker.process)
            orphans.forget(worker.process.pid)
            self.restarts += 1
        finally:
            self._pending -= 1
        if not self.closed:
            try:
                await self._spawn()
            except SpawnerGoneError as exc:
                # the searches go to the workers left; with none left, each fails at once
                log.warning("worker_not_replaced", worker=worker.number, reason=str(exc))
                if not self._workers and not self._pending:
                    self.lost = str(exc)
                    for queue in self._waiting.values():
                        for waiter in queue:
                            waiter.granted.set()  # with no worker: the search fails

    def kill_all(self) -> None:
        """Kill every worker at once (the second interrupt: no waiting for anything)."""
        self.closed = True
        for worker in self._workers:
            if worker.process.returncode is None:
                stop(worker.process)
        if self._spawner is not None:
            self._spawner.close()

    async def aclose(self) -> None:
        """Stop every worker (end of input first, a kill if it lingers) and reap it."""
        self.closed = True
        workers = list(self._workers)
        self._workers.clear()
        self._idle.clear()
        for worker in workers:
            if not worker.ready.is_set() and worker.process.returncode is None:
                stop(worker.process)  # still starting: it has nothing to finish
            if worker.process.stdin is not None:
                with trio.move_on_after(0.2):
                    await worker.process.stdin.aclose()
        with trio.move_on_after(CLOSE_TIMEOUT):
            for worker in workers:
                await worker.process.wait()
        for worker in workers:
            if worker.process.returncode is None:
                stop(worker.process)
            await reap(worker.process)
            orphans.forget(worker.process.pid)
        if self._spawner is not None:
            await self._spawner.aclose()

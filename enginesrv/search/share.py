"""How a pool's workers are shared among peers (``FairShare``): who gets the next free worker,
and which search gives its worker up for another peer's.

Searches that must wait queue per peer (a client's address prefix); a freed worker goes to the
next peer in turn, so a peer that queues many searches delays the others by at most one search
each. A peer may hold at most ``per_peer`` workers at once. When a peer holding fewer workers
than another waits, a search of that other peer that has held its worker for a slice is
suspended and its worker lent to the waiting search (``lend_to``, ``hand_over``). Among the idle
workers a search goes to the one that last searched for its session, where its bot's table and
the plan of its turn are warm.
"""

from __future__ import annotations

from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
import trio

from enginesrv.search.child import SearchOutcome, WorkerProcess
from enginesrv.search.waits import first_of

SLICE = 1.0
"""Seconds a search keeps its worker before it may be suspended for a peer holding fewer; it
doubles each time the search is resumed (up to ``resume.LONGEST_SLICE``), so that a search with
an end of its own (a depth, a node count) is sure to reach it."""
REMEMBERED_SESSIONS = 1024
"""Sessions whose last worker the pool remembers, to send their next search there."""

log = structlog.get_logger("enginesrv.search.pool")


@dataclass(eq=False)
class Segment:
    """A search holding a worker, as ``FairShare.lend_to`` sees it."""

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
    lend_to: Waiter | None = None
    """The search its worker goes to once it is suspended."""
    background: bool = False
    """A search that gives its worker up to a search of its own peer (an analysis)."""


@dataclass(eq=False)
class Waiter:
    """A search waiting for a worker."""

    peer: str | None
    session: str | None = None
    granted: trio.Event = field(default_factory=trio.Event)
    worker: WorkerProcess | None = None
    resuming: bool = False
    """A suspended search waiting to go on (it waits out the longer holds of others)."""
    background: bool = False
    """A search that lets its own peer's other searches go first (an analysis)."""


class FairShare:
    """The idle workers of a pool and the searches waiting for them.

    Args:
        size: the most workers handed out at once (a pool's spares only stand in).
        per_peer: the most workers one peer may hold at once (None: no cap). Searches without
            a peer are not capped.
        slice_seconds: seconds a search keeps its worker before it may be suspended (0: never).
        release: takes back a worker that a search gave back (idle again, or replaced when it
            died) and calls ``dispatch``.
    """

    def __init__(
        self,
        size: int,
        *,
        per_peer: int | None,
        slice_seconds: float,
        release: Callable[[WorkerProcess], None],
    ) -> None:
        self.size = size
        self.per_peer = per_peer
        self.slice = slice_seconds
        self._release = release
        self.idle: list[WorkerProcess] = []
        self.waiting: OrderedDict[str | None, deque[Waiter]] = OrderedDict()
        self.holding: Counter[str | None] = Counter()
        self.held = 0
        """Workers handed out now (at most ``size``)."""
        self.segments: set[Segment] = set()
        """The searches holding a worker now, as ``lend_to`` chooses among them."""
        self.last_worker: OrderedDict[str, WorkerProcess] = OrderedDict()
        """The worker that last searched for each session (the latest ``REMEMBERED_SESSIONS``)."""
        self.suspended = 0
        """Searches suspended so far, for another peer's."""

    def may_hold(self, peer: str | None) -> bool:
        """Whether ``peer`` may take one more worker (it is under its cap)."""
        return peer is None or self.per_peer is None or self.holding[peer] < self.per_peer

    def dispatch(self) -> None:
        """Give idle workers to waiting searches, one peer after another in turn."""
        while self.idle and self.waiting and self.held < self.size:
            eligible = [p for p in self.waiting if self.may_hold(p)]
            if not eligible:
                return  # everyone waiting is at its cap
            peer = eligible[0]
            queue = self.waiting[peer]
            # a peer's own order: its searches before its analyses
            waiter = next((w for w in queue if not w.background), queue[0])
            queue.remove(waiter)
            if queue:
                self.waiting.move_to_end(peer)  # the next worker goes to another peer
            else:
                del self.waiting[peer]
            worker = self._warm_worker(waiter.session)
            self.holding[peer] += 1
            self.held += 1
            waiter.worker = worker
            waiter.granted.set()

    def _warm_worker(self, session: str | None) -> WorkerProcess:
        """Take the idle worker that last searched for ``session`` (its bot's table and the
        plan of its turn are warm there), else the most lately freed one."""
        warm = self.last_worker.get(session) if session is not None else None
        if warm is not None and warm in self.idle:
            self.idle.remove(warm)
            worker = warm
        else:
            worker = self.idle.pop()
        self._remember(session, worker)
        return worker

    def _remember(self, session: str | None, worker: WorkerProcess) -> None:
        """``worker`` is the one that last searched for ``session``."""
        if session is not None:
            self.last_worker[session] = worker
            self.last_worker.move_to_end(session)
            while len(self.last_worker) > REMEMBERED_SESSIONS:
                self.last_worker.popitem(last=False)

    def _unhold(self, peer: str | None) -> None:
        self.holding[peer] -= 1
        if self.holding[peer] <= 0:
            del self.holding[peer]

    def give_back(self, peer: str | None, worker: WorkerProcess) -> None:
        """``peer``'s search is done with ``worker``."""
        self.held -= 1
        self._unhold(peer)
        worker.job = None
        self._release(worker)

    async def acquire(
        self,
        waiter: Waiter,
        on_wait: Callable[[], None] | None,
        stop: trio.Event,
        until: float,
    ) -> WorkerProcess | None:
        """A worker for ``waiter``, or None if ``stop`` is set, or ``until`` passes, before one
        is free. While it waits, every ``slice / 4`` seconds, it may have a worker lent to it
        (``lend_to``)."""
        self.waiting.setdefault(waiter.peer, deque()).append(waiter)
        self.dispatch()
        if not waiter.granted.is_set():
            self.lend_to(waiter)  # the peer's own analyses give way at once
            if on_wait is not None:
                on_wait()
        try:
            with trio.move_on_at(until):
                while not (waiter.granted.is_set() or stop.is_set()):
                    with trio.move_on_after(self.slice / 4):
                        await first_of(waiter.granted, stop)
                    if not waiter.granted.is_set():
                        self.lend_to(waiter)
        except BaseException:
            self._withdraw(waiter)
            raise
        if waiter.worker is None:
            self._withdraw(waiter)
        return waiter.worker

    def lend_to(self, waiter: Waiter) -> None:
        """Suspend one search so that its worker goes to ``waiter``'s peer: a search of
        another peer that holds more workers than this one, that has searched for at least
        ``slice`` seconds since it last took a worker (for a suspended search that waits to
        go on, its own longer hold: ``Segment.hold``) and has more than ``slice`` seconds
        left; the peer holding most first, then the search that has held its worker longest.
        A new search never waits more than a slice for a worker so, however often the search
        holding it was resumed. The arbiter's own searches (no peer) are never suspended,
        and none for them. Before all that, a search that is no analysis (``background``)
        takes the worker of one of its own peer's analyses at once, the one that has held its
        worker longest: a peer's analyses never keep its own searches waiting."""
        peer = waiter.peer
        if peer is None or self.slice <= 0:
            return
        now = trio.current_time()
        if not waiter.background:
            own = [
                each
                for each in self.segments
                if each.peer == peer
                and each.background
                and each.ends - now > self.slice
                and not each.suspend.is_set()
            ]
            if own:
                self._suspend(min(own, key=lambda each: each.since), waiter, now)
                return
        if not self.may_hold(peer):
            return
        mine = self.holding[peer]
        candidates = [
            each
            for each in self.segments
            if each.peer is not None
            and each.peer != peer
            and self.holding[each.peer] > mine
            and now - each.since >= (each.hold if waiter.resuming else self.slice)
            and each.ends - now > self.slice
            and not each.suspend.is_set()
        ]
        if candidates:
            victim = max(candidates, key=lambda each: (self.holding[each.peer], -each.since))
            self._suspend(victim, waiter, now)

    def _suspend(self, victim: Segment, waiter: Waiter, now: float) -> None:
        """Suspend ``victim``, its worker lent to ``waiter``."""
        held = round(now - victim.since, 3)
        log.info("search_suspended", peer=victim.peer, held=held, waiting=waiter.peer)
        self.suspended += 1
        victim.lend_to = waiter
        victim.suspend.set()

    def _withdraw(self, waiter: Waiter) -> None:
        """Take a waiter out of the queue, or give back the worker it was granted."""
        if waiter.worker is not None:
            self.give_back(waiter.peer, waiter.worker)
            waiter.worker = None
            return
        queue = self.waiting.get(waiter.peer)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self.waiting[waiter.peer]

    def hand_over(self, peer: str | None, worker: WorkerProcess, waiter: Waiter) -> None:
        """Give a suspended search's worker to the search it was lent for, if that one still
        waits and may hold it (else back to the pool, which hands it out in turn): a worker
        lent to one peer must not go to another search of the peer it was taken from."""
        queue = self.waiting.get(waiter.peer)
        if (
            not worker.is_alive()
            or waiter.granted.is_set()
            or queue is None
            or waiter not in queue
            or (waiter.peer != peer and not self.may_hold(waiter.peer))
        ):
            self.give_back(peer, worker)
            return
        queue.remove(waiter)
        if not queue:
            del self.waiting[waiter.peer]
        self._unhold(peer)
        worker.job = None
        self.holding[waiter.peer] += 1
        self._remember(waiter.session, worker)
        waiter.worker = worker
        waiter.granted.set()

    def fail_waiting(self) -> None:
        """Wake every waiting search with no worker (the pool has none left): each fails."""
        for queue in self.waiting.values():
            for waiter in queue:
                waiter.granted.set()

"""The costly replies, computed off the event loop: one thread at a time per peer, and
``THREADS`` threads for the whole process, so that a peer that asks for them again and again
neither holds the loop (every connection's commands run on it) nor takes every thread; a
thread that frees goes to the peer that used them least lately (``Offloader``).

A command whose work grows with its input (``query moves`` on a position of tens of thousands
of moves, ``show``, a ``position`` with many moves) hands that work to ``offload``. The work
is pure computation on the session's own objects: the session answers one command at a time,
so nothing else touches them meanwhile. A thread holds Python's lock while it computes, and
gives it up to the loop every few milliseconds (``sys.getswitchinterval``), which is what
bounds the loop's wait.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import trio

THREADS = 1
"""Threads computing replies at once in the process (the search workers have the cores)."""

HALF_LIFE = 2.0
"""Seconds over which a peer's use of the threads counts half as much (``Offloader``)."""

MOST_PEERS_KEPT = 4096
"""Peers whose past use the offloader keeps at most (the least of it is forgotten first)."""

T = TypeVar("T")


@dataclass(order=True)
class _Waiter:
    """A peer's work waiting for a thread: served by its peer's past use, the least first,
    then in the order it came."""

    used: float
    seq: int
    granted: bool = field(default=False, compare=False)
    cancelled: bool = field(default=False, compare=False)
    event: trio.Event = field(default_factory=trio.Event, compare=False)


class Offloader:
    """The threads of one trio run (``current``).

    A thread that frees goes to the waiting work of the peer that used the threads least
    lately (its seconds of work, halved every ``HALF_LIFE`` seconds), not to the work that
    came first: a peer that asks for costly replies again and again, from one address or from
    many, then waits behind the others, and a peer that asks for one waits for at most the
    work that holds the thread, not for every peer's."""

    def __init__(self, threads: int = THREADS, *, half_life: float = HALF_LIFE) -> None:
        self.threads = threads
        self.half_life = half_life
        self.busy = 0
        """Threads computing now."""
        self._waiting: list[_Waiter] = []
        self._seq = itertools.count()
        self._used: dict[str, tuple[float, float]] = {}
        """Per peer, its decayed seconds of work and when they were counted."""
        self._peers: dict[str, tuple[trio.Lock, int]] = {}

    async def run(self, peer: str, work: Callable[[], T]) -> T:
        """``work()`` on a thread, once ``peer``'s previous work and a thread allow."""
        lock, users = self._peers.get(peer, (trio.Lock(), 0))
        self._peers[peer] = (lock, users + 1)
        try:
            async with lock:
                await self._acquire(peer)
                started = trio.current_time()
                try:
                    return await trio.to_thread.run_sync(work)
                finally:
                    self._charge(peer, trio.current_time() - started)
                    self._release()
        finally:
            lock, users = self._peers[peer]
            if users <= 1:
                del self._peers[peer]
            else:
                self._peers[peer] = (lock, users - 1)

    @property
    def waiting(self) -> int:
        """Work waiting for a thread."""
        return sum(not waiter.cancelled for waiter in self._waiting)

    def used(self, peer: str) -> float:
        """``peer``'s seconds of work lately, as the queue weighs them."""
        seconds, at = self._used.get(peer, (0.0, 0.0))
        decay: float = 0.5 ** ((trio.current_time() - at) / self.half_life)
        return seconds * decay

    async def _acquire(self, peer: str) -> None:
        if self.busy < self.threads and not self._waiting:
            self.busy += 1
            return
        waiter = _Waiter(self.used(peer), next(self._seq))
        heapq.heappush(self._waiting, waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self._release()  # the thread was handed over meanwhile: pass it on
            else:
                waiter.cancelled = True
            raise

    def _release(self) -> None:
        """A thread frees: to the waiter of the least use, else back to the pool."""
        while self._waiting:
            waiter = heapq.heappop(self._waiting)
            if not waiter.cancelled:
                waiter.granted = True
                waiter.event.set()
                return
        self.busy -= 1

    def _charge(self, peer: str, seconds: float) -> None:
        self._used[peer] = (self.used(peer) + seconds, trio.current_time())
        if len(self._used) > MOST_PEERS_KEPT:
            least = min(self._used, key=self.used)
            del self._used[least]


_CURRENT: trio.lowlevel.RunVar[Offloader] = trio.lowlevel.RunVar("enginesrv_offloader")


def current() -> Offloader:
    """The offloader of the running trio run (made on first use)."""
    try:
        return _CURRENT.get()
    except LookupError:
        offloader = Offloader()
        _CURRENT.set(offloader)
        return offloader


async def offload(peer: str | None, work: Callable[[], T]) -> T:
    """``work()`` computed on a thread, in ``peer``'s turn (None: the process's own)."""
    return await current().run(peer or "", work)

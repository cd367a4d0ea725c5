"""The costly replies, computed off the event loop: one thread at a time per peer, and
``THREADS`` threads for the whole process, so that a peer that asks for them again and again
neither holds the loop (every connection's commands run on it) nor takes every thread.

A command whose work grows with its input (``query moves`` on a position of tens of thousands
of moves, ``show``, a ``position`` with many moves) hands that work to ``offload``. The work
is pure computation on the session's own objects: the session answers one command at a time,
so nothing else touches them meanwhile. A thread holds Python's lock while it computes, and
gives it up to the loop every few milliseconds (``sys.getswitchinterval``), which is what
bounds the loop's wait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import trio

THREADS = 1
"""Threads computing replies at once in the process (the search workers have the cores)."""

T = TypeVar("T")


class Offloader:
    """The threads of one trio run (``current``)."""

    def __init__(self, threads: int = THREADS) -> None:
        self.limiter = trio.CapacityLimiter(threads)
        self._peers: dict[str, tuple[trio.Lock, int]] = {}

    async def run(self, peer: str, work: Callable[[], T]) -> T:
        """``work()`` on a thread, once ``peer``'s previous work and a thread allow."""
        lock, users = self._peers.get(peer, (trio.Lock(), 0))
        self._peers[peer] = (lock, users + 1)
        try:
            async with lock:
                return await trio.to_thread.run_sync(work, limiter=self.limiter)
        finally:
            lock, users = self._peers[peer]
            if users <= 1:
                del self._peers[peer]
            else:
                self._peers[peer] = (lock, users - 1)


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

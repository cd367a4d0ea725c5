"""How a player's connection is read once it has logged in (``LinkStream``): a little at a
time, and within its player's share of the event loop (``LoopBudget``)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import structlog
import trio
from anyio.abc import ByteStream

READ_CHUNK = 4096
"""The most bytes of a player's connection read at once (``LinkStream``)."""
LOOP_SHARE = 0.05
"""The share of the event loop's time each of a player's connections may take on average."""
LOOP_BURST = 0.25
"""The seconds of the loop each may take at once beyond its average."""

log = structlog.get_logger("enginesrv.ladder.reads")


class LoopBudget:
    """A player's share of the event loop, which all its connections draw on together:
    ``LOOP_SHARE`` of the time that passes for each connection it holds, kept up to
    ``LOOP_BURST`` seconds for each (a bucket of tokens refilled by the clock). It is the
    player's for good (``Door.budgets``): what it spent stays spent when it logs in again,
    and a connection may spend what its player's others did not."""

    def __init__(self, links: Callable[[], int] = lambda: 1) -> None:
        """``links``: how many connections the player holds now (being greeted included)."""
        self.left = LOOP_BURST
        self.links = links
        self._at = trio.current_time()

    def spend(self, seconds: float) -> bool:
        """Take ``seconds`` of the loop; whether the player had them."""
        now = trio.current_time()
        held = max(1, self.links())
        self.left = min(LOOP_BURST * held, self.left + (now - self._at) * LOOP_SHARE * held)
        self.left -= seconds
        self._at = now
        return self.left >= 0


class LinkStream(ByteStream):
    """A player's connection as its link reads it: what came after the login first, then
    at most ``READ_CHUNK`` bytes a read, so that one connection's turn on the event loop is
    a few milliseconds of decoding whatever it sends; the time spent on what it sends,
    measured from the moment a read returns to the next read (its decoding and routing),
    is taken from its player's ``LoopBudget``, past which the connection is closed: an
    engine's lines cost the loop a fraction of a percent, even MultiPV's hundreds a second,
    and a flood would take the loop from every game's clock."""

    def __init__(self, stream: ByteStream, first: bytes, budget: LoopBudget) -> None:
        self._stream = stream
        self._first = first
        self._budget = budget
        self._returned: float | None = None

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._first:
            data, self._first = self._first[:max_bytes], self._first[max_bytes:]
            return data
        if self._returned is not None:
            spent = trio.current_time() - self._returned  # what the last read's bytes cost
            if not self._budget.spend(spent):
                log.info("ladder_flood", detail=f"{spent * 1000:.0f} ms of the loop at once")
                raise anyio.BrokenResourceError("the player sent more than the ladder reads")
        data = await self._stream.receive(min(max_bytes, READ_CHUNK))
        self._returned = trio.current_time()
        return data

    async def send(self, item: bytes) -> None:
        await self._stream.send(item)

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()

    @property
    def extra_attributes(self):  # type: ignore[no-untyped-def]  # anyio's own signature
        return self._stream.extra_attributes

"""A connection's replies on their way out: encoded in its framing (``encode``), cut to fit its
limits (``shortened``), and queued within a bound until the client reads them (``Outbox``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import trio

from enginesrv.serve.settings import Framing
from protocol import messages as m
from protocol import mpack, text

WRITE_BATCH = 65536
"""Bytes of queued replies written at once."""
ERROR_TEXT = 1024
"""Bytes of an error's text (or an ``info string``) at most; longer ones are cut."""


def encode(framing: Framing, reply: m.Reply, msgid: int | None) -> bytes:
    """The bytes of a reply in a framing (empty when the framing says nothing)."""
    if framing == "text":
        return text.encode_reply(reply)
    if isinstance(reply, (m.Info, m.ErrorReply, m.InvalidMove, m.Analysis, m.TableNote)):
        return mpack.encode_reply(msgid, reply)
    if msgid is None:
        return b""  # a notification gets no response
    return mpack.encode_reply(msgid, reply)


def shortened(reply: m.Reply, room: int) -> m.Reply:
    """An error or ``info string`` whose text is cut to about ``room`` bytes (the text of an
    error may quote a long input); other replies are returned as they are."""
    cut = max(16, room)
    if isinstance(reply, m.ErrorReply) and len(reply.message.encode()) > cut:
        return m.ErrorReply(reply.code, reply.name, _cut(reply.message, cut), reply.data)
    if isinstance(reply, m.InvalidMove) and len(reply.move) + len(reply.reason) > cut:
        return m.InvalidMove(_cut(reply.move, cut // 2), _cut(reply.reason, cut // 2))
    if isinstance(reply, m.Info) and reply.string and len(reply.string.encode()) > cut:
        return m.Info(string=_cut(reply.string, cut), search=reply.search)
    return reply


def _cut(text_: str, room: int) -> str:
    data = text_.encode()
    if len(data) <= room:
        return text_
    return data[: room - 3].decode("utf-8", "ignore") + "..."


class Outbox:
    """Encoded replies waiting for the writer, counted in bytes.

    ``put`` never waits: a reply that would take a backlog over ``cap`` bytes is refused (the
    connection is then closed), and a droppable one (progress) is dropped once ``soft`` bytes
    wait or when it does not fit. A reply to a client that is keeping up (nothing waits) is
    always taken, however long, so the cap only ever closes a connection that does not read.
    """

    def __init__(self, cap: int, soft: int) -> None:
        self.cap = cap
        self.soft = soft
        self.size = 0
        self.closed = False
        self.budget: OutputBudget | None = None
        self._chunks: deque[bytes] = deque()
        self._lot = trio.lowlevel.ParkingLot()

    def put(self, data: bytes, *, droppable: bool = False) -> bool:
        """Queue ``data``; False when it does not fit under the cap."""
        if self.closed or not data:
            return True
        over = self.cap and self.size and self.size + len(data) > self.cap
        if droppable and (over or self.size >= self.soft):
            return True
        if over:
            return False
        self._chunks.append(data)
        self.size += len(data)
        self._lot.unpark_all()
        if self.budget is not None:
            self.budget.grew(len(data))
        return True

    async def get(self) -> bytes | None:
        """Up to ``WRITE_BATCH`` bytes of queued data (at least one reply), or None once the
        outbox is closed and empty. The bytes still count until ``sent`` is called."""
        while not self._chunks:
            if self.closed:
                return None
            await self._lot.park()
        batch = [self._chunks.popleft()]
        length = len(batch[0])
        while self._chunks and length + len(self._chunks[0]) <= WRITE_BATCH:
            chunk = self._chunks.popleft()
            batch.append(chunk)
            length += len(chunk)
        return b"".join(batch)

    def sent(self, count: int) -> None:
        """``count`` bytes of what ``get`` returned have been written."""
        count = min(count, self.size)  # none when the outbox was discarded meanwhile
        self.size -= count
        if self.budget is not None:
            self.budget.shrank(count)

    def close(self) -> None:
        """No more replies; ``get`` returns what is left, then None."""
        self.closed = True
        self._lot.unpark_all()

    def discard(self) -> None:
        """Drop everything queued (the client is gone)."""
        self._chunks.clear()
        if self.budget is not None:
            self.budget.shrank(self.size)
        self.size = 0
        self.close()


class OutputBudget:
    """The replies waiting unread on every connection of a server together, capped at ``cap``
    bytes (the ``outputtotal`` limit; 0: no cap). A reply that takes the total over the cap
    closes the connections holding most, largest first, until the total is back under it:
    many connections that each stay under their own cap cannot together take the memory."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.shed = 0
        """Connections closed for the budget."""
        self._holders: dict[Outbox, Callable[[str], None]] = {}

    def join(self, outbox: Outbox, lose: Callable[[str], None]) -> None:
        """Count ``outbox``; ``lose(reason)`` closes its connection when it must go."""
        outbox.budget = self
        self._holders[outbox] = lose
        self.size += outbox.size

    def leave(self, outbox: Outbox) -> None:
        """Stop counting ``outbox`` (its connection has ended)."""
        if self._holders.pop(outbox, None) is not None:
            self.size -= outbox.size
            outbox.budget = None

    def grew(self, count: int) -> None:
        self.size += count
        if self.cap and self.size > self.cap:
            self._shed()

    def shrank(self, count: int) -> None:
        self.size -= count

    def _shed(self) -> None:
        for outbox in sorted(self._holders, key=lambda each: each.size, reverse=True):
            if self.size <= self.cap or outbox.size == 0:
                return
            lose = self._holders[outbox]
            self.shed += 1
            lose(
                f"output budget: the server's connections together held more than {self.cap} "
                f"bytes of unread replies, and this one held the most ({outbox.size})"
            )
            self.leave(outbox)

"""The reading side of a connection (``RequestReader``): the client's bytes decoded into
requests and handed to the connection's handler, in order, with the read-ahead bounded.

The reader queues at most ``inflight`` requests for the handler (the channel it is given) and
at most ``READ_AHEAD`` of their cost; beyond either it stops reading, so a client that sends
faster than it is answered is slowed down by TCP (backpressure) instead of being refused. A
``position`` over the ``plies`` limit, or an ``analyse`` holding one, is refused as it is read,
so that its moves never wait in memory. Reading ends at the end of input, a lost connection, a
fatal decoding error, or a timeout (no first command in time; idle while no search runs), and
the handler is told why (``End``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from enginesrv.serve.limits import Limits
from enginesrv.serve.settings import too_many_analysed, too_many_moves
from protocol import messages as m
from protocol.errors import IDLE_TIMEOUT, PLY_LIMIT, ErrorCode, ProtocolError
from protocol.mpack import MsgpackDecoder
from protocol.text import TextDecoder

READ_AHEAD = 65536
"""What the requests read ahead of their answers may cost together (``_cost``), besides the
``inflight`` count: beyond it the connection stops reading until they are answered."""
TOKEN_COST = 64
"""The cost of a move of a ``position`` read ahead (about its size once decoded)."""
POSITION_COST = 192
"""The cost of a position of an ``analyse`` read ahead, besides its moves (about its size once
decoded)."""


@dataclass(frozen=True)
class End:
    """What the reader hands the handler last: why reading stopped."""

    reason: str
    reply: m.ErrorReply | None = None


Item = m.Request | ProtocolError | End
"""What the reader hands the handler: a request, a decoding error, or the end."""


def error_reply(code: ErrorCode, message: str) -> m.ErrorReply:
    return m.ErrorReply(code.code, code.name, message)


class RequestReader:
    """The reader of one connection (module docstring)."""

    def __init__(
        self,
        receive: Callable[[float], Awaitable[bytes | None]],
        limits: Limits,
        *,
        busy: Callable[[], bool],
        lose: Callable[[str], None],
    ) -> None:
        """``receive(deadline)`` gives the client's next bytes (b"" at the end of input,
        None at the deadline); ``busy()`` whether the connection is at work (a search runs,
        or a command), which is not idleness; ``lose(reason)`` is told of a lost connection."""
        self._receive = receive
        self.limits = limits
        self._busy = busy
        self._lose = lose
        self._queued = 0
        self._costs: deque[int] = deque()
        self._room = trio.lowlevel.ParkingLot()

    @property
    def queued(self) -> int:
        """The cost (``_cost``) of the requests read and not yet answered."""
        return self._queued

    async def run(
        self,
        decoder: TextDecoder | MsgpackDecoder,
        data: bytes,
        first_by: float,
        requests: trio.MemorySendChannel[Item],
    ) -> None:
        """Decode ``data`` and what follows it and hand each request (or decoding error) to
        the handler, then why reading stopped. ``first_by``: the deadline of the first whole
        command."""
        commands = 0
        while True:
            if data:
                try:
                    decoder.feed(data)
                except ProtocolError as exc:
                    await requests.send(exc)
                    await requests.send(End(exc.error.name))
                    return
                while True:
                    try:
                        message = decoder.next_message()
                    except ProtocolError as exc:
                        commands += 1
                        await requests.send(exc)
                        if exc.fatal:
                            await requests.send(End(exc.error.name))
                            return
                        continue
                    if message is None:
                        break
                    commands += 1
                    assert isinstance(message, m.Request)
                    await self._hand_on(message, decoder.last_size, requests)
            end = await self._next_chunk(commands, first_by)
            if isinstance(end, End):
                await requests.send(end)
                return
            data = end

    async def _hand_on(
        self, request: m.Request, size: int, requests: trio.MemorySendChannel[Item]
    ) -> None:
        screened = self._screen(request)
        if isinstance(screened, ProtocolError):
            await requests.send(screened)
            return
        await self._make_room(_cost(request, size))
        await requests.send(request)  # waits while `inflight` are queued

    async def _next_chunk(self, commands: int, first_by: float) -> bytes | End:
        """The next bytes, or why there are none (end of input, a lost connection, the
        first-command or the idle timeout)."""
        while True:
            if commands == 0:
                deadline = first_by
            elif self.limits.idle:
                deadline = trio.current_time() + self.limits.idle
            else:
                deadline = math.inf
            try:
                data = await self._receive(deadline)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._lose("connection lost")
                return End("connection lost")
            if data is None:
                if commands == 0:
                    return End("no command in time")
                if self._busy():
                    continue  # a search (or a command) is running: that is not idleness
                message = f"nothing received for {self.limits.idle:g} s"
                return End(IDLE_TIMEOUT.name, error_reply(IDLE_TIMEOUT, message))
            if not data:
                return End("end of input")
            return data

    def _screen(self, request: m.Request) -> m.Request | ProtocolError:
        """A request as it may wait in the queue: a ``position`` over the ``plies`` limit, or
        an ``analyse`` of such a position, is refused here, so that its moves are not kept
        while it waits (a frame of 65,536 short moves takes some 5 MB once decoded)."""
        command = request.command
        most = self.limits.plies
        text = None
        if isinstance(command, m.Position) and most and len(command.moves) > most:
            text = too_many_moves(len(command.moves), most)
        if isinstance(command, m.Analyse) and most:
            long = next((i for i in command.positions if len(i.moves) > most), None)
            text = None if long is None else too_many_analysed(long.id, len(long.moves), most)
        if text is not None:
            return ProtocolError(PLY_LIMIT, text, msgid=request.msgid, method=command.METHOD)
        return request

    async def _make_room(self, cost: int) -> None:
        """Wait until a request of ``cost`` fits in the read-ahead (``READ_AHEAD``; one always
        fits in an empty queue), then count it."""
        while self._queued and self._queued + cost > READ_AHEAD:
            await self._room.park()
        self._queued += cost
        self._costs.append(cost)

    def answered(self) -> None:
        """The handler is done with the oldest request read: it no longer counts."""
        self._queued -= self._costs.popleft()
        self._room.unpark_all()


def _cost(request: m.Request, size: int) -> int:
    """What a request read ahead costs: its bytes, and ``TOKEN_COST`` for each move of a
    ``position``, of a ``go``'s ``searchmoves`` and ``avoidmoves``, and of each position of an
    ``analyse`` with its lists (a short token takes 3 bytes on the wire and some 60 once
    decoded), and ``POSITION_COST`` for each of those positions."""
    command = request.command
    if isinstance(command, m.Position):
        return size + TOKEN_COST * len(command.moves)
    if isinstance(command, m.Go):
        return size + TOKEN_COST * (len(command.searchmoves) + len(command.avoidmoves))
    if isinstance(command, m.Analyse):
        items = command.positions
        tokens = sum(len(i.moves) + len(i.searchmoves) + len(i.avoidmoves) for i in items)
        return size + TOKEN_COST * tokens + POSITION_COST * len(items)
    return size

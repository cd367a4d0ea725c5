"""One client's connection: its limits (``Limits``), the bounded queue of replies waiting to be
written (``Outbox``), and the reading, framing and answering of its requests (``Connection``)."""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import structlog
import trio

from enginesrv.admission import PREFIX_V4, PREFIX_V6, Admission, descriptor_budget
from enginesrv.search.child import SearchRunner
from enginesrv.serve.outbox import ERROR_TEXT, Outbox, OutputBudget, encode, shortened
from enginesrv.serve.session import Session
from enginesrv.serve.settings import (
    MAX_CLOCK,
    MAX_MOVETIME,
    MAX_PLIES,
    Framing,
    SessionConfig,
    too_many_moves,
)
from protocol import messages as m
from protocol.errors import (
    BAD_FRAME,
    IDLE_TIMEOUT,
    PLY_LIMIT,
    SHUTTING_DOWN,
    TOO_MANY_CONNECTIONS,
    ErrorCode,
    ProtocolError,
)
from protocol.mpack import MsgpackDecoder
from protocol.sniff import sniff
from protocol.text import TextDecoder

SessionFactory = Callable[..., Session]
"""Makes a connection's session from ``Session``'s arguments (a subclass may referee a game)."""

RECEIVE = 65536
"""Bytes read from the client at once."""
FLUSH_TIMEOUT = 0.5
"""Seconds a closing connection gets to send what it has queued."""
READ_AHEAD = 65536
"""What the requests read ahead of their answers may cost together (``_cost``), besides the
``inflight`` count: beyond it the connection stops reading until they are answered."""
TOKEN_COST = 64
"""The cost of a move of a ``position`` read ahead (about its size once decoded)."""


@dataclass(frozen=True)
class Limits:
    """The limits of connections and of the server (0 means none; docs/protocol.md §2)."""

    line: int = 65536
    frame: int = 1024 * 1024
    inflight: int = 32
    idle: float = 300.0
    first_command: float = 10.0
    output: int = 8 * 1024 * 1024
    connections: int = 256
    peer_connections: int = 32
    peer_searches: int = 0
    hash_mb: int = 0
    movetime: int = MAX_MOVETIME
    clock: int = MAX_CLOCK
    plies: int = MAX_PLIES
    output_total: int = 64 * 1024 * 1024
    prefix_v4: int = PREFIX_V4
    prefix_v6: int = PREFIX_V6

    def admission(self, needs: int = 0) -> Admission:
        """The admission of these caps, within the descriptors left once ``needs`` (the
        workers' and engines') are kept (``descriptor_budget``)."""
        return Admission(
            connections=self.connections,
            peer_connections=self.peer_connections,
            descriptors=descriptor_budget(needs),
            prefix_v4=self.prefix_v4,
            prefix_v6=self.prefix_v6,
        )

    def announced(self) -> tuple[m.LimitInfo, ...]:
        """The ``limit`` lines of the handshake."""
        return (
            m.LimitInfo("line", self.line),
            m.LimitInfo("frame", self.frame),
            m.LimitInfo("inflight", self.inflight),
            m.LimitInfo("idle", round(self.idle * 1000)),
            m.LimitInfo("firstcommand", round(self.first_command * 1000)),
            m.LimitInfo("output", self.output),
            m.LimitInfo("connections", self.connections),
            m.LimitInfo("peerconnections", self.peer_connections),
            m.LimitInfo("peersearches", self.peer_searches),
            m.LimitInfo("hash", self.hash_mb),
            m.LimitInfo("movetime", self.movetime),
            m.LimitInfo("clock", self.clock),
            m.LimitInfo("plies", self.plies),
            m.LimitInfo("outputtotal", self.output_total),
            m.LimitInfo("peerprefix4", self.prefix_v4),
            m.LimitInfo("peerprefix6", self.prefix_v6),
        )


@dataclass(frozen=True)
class _End:
    """What the reader hands the handler last: why reading stopped."""

    reason: str
    reply: m.ErrorReply | None = None


class Connection:
    """One client: its stream, reader, handler, writer and session."""

    _ids = itertools.count(1)

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        config: SessionConfig,
        runner: SearchRunner,
        limits: Limits,
        peer: str,
        framing: Framing | None = None,
        session_factory: SessionFactory | None = None,
        output: OutputBudget | None = None,
        peer_key: str | None = None,
    ) -> None:
        """``output``: the budget of unread replies this connection shares with the others
        of its server (None: its own cap only). ``peer_key``: the peer the connection's
        searches and costly replies count against (``Admission.peer``; None: its address)."""
        self.peer_key = peer_key
        self.send_stream = send_stream
        self.receive_stream = receive_stream
        self.config = config
        self.runner = runner
        self.limits = limits
        self.peer = peer
        self.framing = framing
        self.session_factory: SessionFactory = session_factory or Session
        self.id = f"c{next(self._ids)}"
        self.log = structlog.get_logger("enginesrv.connection").bind(conn=self.id, peer=peer)
        self.outbox = Outbox(limits.output, min(limits.output or 1 << 20, 1 << 18))
        self.output = output
        if output is not None:
            output.join(self.outbox, self._lose)
        self.io_scope = trio.CancelScope()
        self.first_scope = trio.CancelScope()
        self.shutting_down = False
        self.gone: str | None = None
        """Why the client can no longer be answered (None while it can)."""
        self.ending = trio.Event()
        """Set once the connection is lost or told to shut down: it ends within
        ``FLUSH_TIMEOUT`` unless a write it cannot cancel holds it (a transport that shields
        its writes is then closed under it by its owner)."""
        self.started = trio.current_time()
        self.session: Session | None = None
        self.handling = False
        self.evicted: str | None = None
        """Why the connection was closed for a new peer's (``evict``)."""
        self._queued = 0
        """The cost (``_cost``) of the requests read and not yet answered."""
        self._costs: deque[int] = deque()
        self._room = trio.lowlevel.ParkingLot()

    # -- writing -------------------------------------------------------------------------------

    def _max_reply(self) -> int:
        if self.framing == "text":
            return self.limits.line or sys.maxsize
        return self.limits.frame or sys.maxsize

    def _queue(self, reply: m.Reply, msgid: int | None, *, droppable: bool = False) -> None:
        if self.gone is not None:
            return
        assert self.framing is not None
        # error texts are for people: one that quotes a long input is cut, so no client can
        # make the server echo a megabyte back
        data = encode(self.framing, shortened(reply, ERROR_TEXT), msgid)
        limit = self._max_reply()
        room = limit - 64
        while len(data) > limit and room > 64:
            # an error quoting a long input (msgpack quotes a rejected move twice: in the
            # message and in its data) is cut until it fits
            data = encode(self.framing, shortened(reply, room), msgid)
            room //= 4
        if not self.outbox.put(data, droppable=droppable):
            self._lose(f"output cap: more than {self.limits.output} bytes of replies were not read")

    async def send(self, reply: m.Reply, msgid: int | None) -> None:
        """Queue a reply (never waits; a client over its output cap is disconnected)."""
        self._queue(reply, msgid)
        await trio.lowlevel.checkpoint()

    def send_nowait(self, reply: m.Reply, msgid: int | None) -> None:
        """Queue a progress report, or drop it if the client is not keeping up."""
        self._queue(reply, msgid, droppable=True)

    def _lose(self, reason: str) -> None:
        """The client can no longer be answered: drop its queued work and replies at once."""
        if self.gone is not None:
            return
        self.gone = reason
        self.ending.set()
        self.log.info("client_lost", reason=reason)
        self.outbox.discard()
        self.io_scope.cancel()

    async def _writer(self) -> None:
        try:
            while (data := await self.outbox.get()) is not None:
                await self.send_stream.send_all(data)
                self.outbox.sent(len(data))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._lose("connection lost while writing")

    async def _raw(self, data: bytes) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            with trio.move_on_after(FLUSH_TIMEOUT):
                await self.send_stream.send_all(data)

    # -- the connection ------------------------------------------------------------------------

    async def _receive(self, deadline: float) -> bytes | None:
        """Bytes from the client; b"" at the end of input; None at ``deadline``."""
        with trio.move_on_at(deadline):
            return bytes(await self.receive_stream.receive_some(RECEIVE))
        return None

    async def run(self) -> None:
        """Serve the connection until the client quits or goes, a fatal error, or shutdown."""
        try:
            await self._run()
        finally:
            if self.output is not None:
                self.output.leave(self.outbox)

    async def _run(self) -> None:
        first = b""
        first_by = self.started + (self.limits.first_command or math.inf)
        if self.framing is None:
            got: bytes | None = None
            with self.first_scope:  # shutdown cancels the wait for the first byte too
                try:
                    got = await self._receive(first_by)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    got = b""
            if not got:
                if self.shutting_down:
                    why = "shutdown"
                else:
                    why = "no command in time" if got is None else "nothing received"
                self.log.info("connection_closed", reason=why)
                return
            first = got
            self.framing = sniff(first[0])
            if self.framing is None:
                await self._raw(
                    f"error {BAD_FRAME.code} {BAD_FRAME.name} the first byte {first[0]:#04x} "
                    "starts neither a text line nor a msgpack array\n".encode()
                )
                self.log.info("connection_closed", reason="unknown framing")
                return
        self.log = self.log.bind(framing=self.framing)
        self.log.info("connection_open")
        session = self.session_factory(
            self.config,
            self.runner,
            framing=self.framing,
            send=self.send,
            send_nowait=self.send_nowait,
            logger=self.log,
            peer=self.peer_key or peer_host(self.peer),
            max_reply=self._max_reply(),
        )
        self.session = session
        reason = "closed by the client"
        requests_send, requests_receive = trio.open_memory_channel[
            m.Request | ProtocolError | _End
        ](max(0, self.limits.inflight - 1) if self.limits.inflight else math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer)
            async with trio.open_nursery() as searches:
                with self.io_scope:
                    async with trio.open_nursery() as io:
                        io.start_soon(self._reader, first, first_by, requests_send)
                        reason = await self._handle(session, searches, requests_receive)
                        io.cancel_scope.cancel()
                if self.shutting_down:
                    reason = "shutdown" if self.evicted is None else "evicted"
                if self.gone is not None:
                    reason = self.gone
                    searches.cancel_scope.cancel()  # nobody to answer: free the workers now
                else:
                    # Stop what runs; its best move is still sent.
                    await session.stop_search()
                    if reason == "shutdown":
                        self._queue(_error_reply(SHUTTING_DOWN, "the server is stopping"), None)
                    elif self.evicted is not None:
                        self._queue(_error_reply(TOO_MANY_CONNECTIONS, self.evicted), None)
            self.outbox.close()  # the writer sends what is queued, then ends
            nursery.cancel_scope.deadline = trio.current_time() + FLUSH_TIMEOUT
        self.log.info("connection_closed", reason=reason)

    async def _reader(
        self,
        first: bytes,
        first_by: float,
        requests: trio.MemorySendChannel[m.Request | ProtocolError | _End],
    ) -> None:
        assert self.framing is not None
        decoder: TextDecoder | MsgpackDecoder
        if self.framing == "text":
            decoder = TextDecoder("server", max_line=self.limits.line or sys.maxsize)
        else:
            decoder = MsgpackDecoder("server", max_frame=self.limits.frame or 2**31)
        async with requests:
            try:
                await self._read_requests(decoder, first, first_by, requests)
            except trio.BrokenResourceError:
                # the handler has finished (quit, a fatal error) and closed its end while a
                # request or the end of input was on its way: there is no one left to tell
                return

    async def _read_requests(
        self,
        decoder: TextDecoder | MsgpackDecoder,
        data: bytes,
        first_by: float,
        requests: trio.MemorySendChannel[m.Request | ProtocolError | _End],
    ) -> None:
        """Decode what the client sends and hand each request (or decoding error) to the
        handler, then why reading stopped."""
        commands = 0
        while True:
            if data:
                try:
                    decoder.feed(data)
                except ProtocolError as exc:
                    await requests.send(exc)
                    await requests.send(_End(exc.error.name))
                    return
                while True:
                    try:
                        message = decoder.next_message()
                    except ProtocolError as exc:
                        commands += 1
                        await requests.send(exc)
                        if exc.fatal:
                            await requests.send(_End(exc.error.name))
                            return
                        continue
                    if message is None:
                        break
                    commands += 1
                    assert isinstance(message, m.Request)
                    screened = self._screen(message)
                    if isinstance(screened, ProtocolError):
                        await requests.send(screened)
                        continue
                    await self._make_room(_cost(message, decoder.last_size))
                    await requests.send(message)  # waits while `inflight` are queued
            end = await self._next_chunk(commands, first_by)
            if isinstance(end, _End):
                await requests.send(end)
                return
            data = end

    async def _next_chunk(self, commands: int, first_by: float) -> bytes | _End:
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
                return _End("connection lost")
            if data is None:
                if commands == 0:
                    return _End("no command in time")
                if self._busy():
                    continue  # a search (or a command) is running: that is not idleness
                message = f"nothing received for {self.limits.idle:g} s"
                return _End(IDLE_TIMEOUT.name, _error_reply(IDLE_TIMEOUT, message))
            if not data:
                return _End("end of input")
            return data

    def _busy(self) -> bool:
        session = self.session
        return self.handling or (session is not None and session.search is not None)

    async def _handle(
        self,
        session: Session,
        searches: trio.Nursery,
        requests: trio.MemoryReceiveChannel[m.Request | ProtocolError | _End],
    ) -> str:
        async with requests:
            async for item in requests:
                if isinstance(item, _End):
                    if item.reply is not None:
                        await session.reply(item.reply, None)
                    return item.reason
                self.handling = True
                try:
                    if isinstance(item, ProtocolError):
                        self.log.info("protocol_error", code=item.code, error=item.message)
                        await session.refuse(item)
                        if item.fatal:
                            return item.error.name
                    else:
                        try:
                            await session.handle(item, searches)
                        finally:
                            self._queued -= self._costs.popleft()
                            self._room.unpark_all()
                        if session.closing:
                            return "quit"
                finally:
                    self.handling = False
                # one command at a time per turn of the event loop: the others get theirs
                await trio.lowlevel.checkpoint()
        return "end of input"

    def _screen(self, request: m.Request) -> m.Request | ProtocolError:
        """A request as it may wait in the queue: a ``position`` over the ``plies`` limit is
        refused here, so that its moves are not kept while it waits (a frame of 65,536 short
        moves takes some 5 MB once decoded)."""
        command = request.command
        most = self.limits.plies
        if isinstance(command, m.Position) and most and len(command.moves) > most:
            return ProtocolError(
                PLY_LIMIT,
                too_many_moves(len(command.moves), most),
                msgid=request.msgid,
                method=command.METHOD,
            )
        return request

    async def _make_room(self, cost: int) -> None:
        """Wait until a request of ``cost`` fits in the read-ahead (``READ_AHEAD``; one always
        fits in an empty queue), then count it."""
        while self._queued and self._queued + cost > READ_AHEAD:
            await self._room.park()
        self._queued += cost
        self._costs.append(cost)

    def evict(self, reason: str) -> None:
        """Close the connection for a new peer's (``Admission``): as a shutdown, with error
        303 and ``reason``."""
        self.evicted = reason
        self.log.info("connection_evicted", reason=reason)
        self.shutdown()

    def shutdown(self) -> None:
        """Stop reading; the connection then stops its search, says why and closes."""
        self.shutting_down = True
        self.ending.set()
        self.first_scope.cancel()
        self.io_scope.cancel()


def _cost(request: m.Request, size: int) -> int:
    """What a request read ahead costs: its bytes, and ``TOKEN_COST`` for each move of a
    ``position`` (a short token takes 3 bytes on the wire and some 60 once decoded)."""
    command = request.command
    return size + (TOKEN_COST * len(command.moves) if isinstance(command, m.Position) else 0)


def _error_reply(code: ErrorCode, message: str) -> m.ErrorReply:
    return m.ErrorReply(code.code, code.name, message)


def peer_host(peer: str) -> str:
    """The address part of ``host:port`` (IPv6 included)."""
    host, sep, _ = peer.rpartition(":")
    return host if sep else peer

"""The trio server: connections, the TCP listener, the stdio engine and shutdown.

Per connection: the reader (this module's ``Connection.run``) decodes commands and hands them
to the ``Session`` one at a time; a single writer task drains a bounded queue of replies, so
lines and frames never interleave; searches run as tasks beside them and in worker processes
(``enginesrv.pool``), never on the event loop. The framing is the first byte's (``protocol.sniff``)
on TCP, and fixed for stdio.

Limits (docs/protocol.md §2): line and frame sizes are the decoders'; requests in flight are
counted per connection; a connection idle longer than the limit while no search runs is closed;
a server at its connection limit answers a new connection's first byte with error 303 and
closes it. A client that disconnects mid-search gets its search stopped and its worker back.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import structlog
import trio

from enginesrv.session import SearchRunner, Session, SessionConfig
from protocol import messages as m
from protocol import mpack, text
from protocol.errors import (
    BAD_FRAME,
    IDLE_TIMEOUT,
    SHUTTING_DOWN,
    TOO_MANY_CONNECTIONS,
    TOO_MANY_REQUESTS,
    ErrorCode,
    ProtocolError,
)
from protocol.mpack import MsgpackDecoder
from protocol.sniff import sniff
from protocol.text import TextDecoder

Framing = Literal["text", "msgpack"]

QUEUE = 256
"""Replies a connection may have waiting for its writer (progress reports beyond it are
dropped; everything else waits)."""
RECEIVE = 65536


@dataclass(frozen=True)
class Limits:
    """Per-connection limits (0 means none)."""

    line: int = 65536
    frame: int = 1024 * 1024
    inflight: int = 32
    idle: float = 300.0
    connections: int = 256

    def announced(self) -> tuple[m.LimitInfo, ...]:
        """The ``limit`` lines of the handshake."""
        return (
            m.LimitInfo("line", self.line),
            m.LimitInfo("frame", self.frame),
            m.LimitInfo("inflight", self.inflight),
            m.LimitInfo("idle", round(self.idle * 1000)),
        )


def encode(framing: Framing, reply: m.Reply, msgid: int | None) -> bytes:
    """The bytes of a reply in a framing (empty when the framing says nothing)."""
    if framing == "text":
        return text.encode_reply(reply)
    if isinstance(reply, (m.Info, m.ErrorReply, m.InvalidMove)):
        return mpack.encode_reply(msgid, reply)
    if msgid is None:
        return b""  # a notification gets no response
    return mpack.encode_reply(msgid, reply)


class Connection:
    """One client: its stream, decoder, writer queue and session."""

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
    ) -> None:
        self.send_stream = send_stream
        self.receive_stream = receive_stream
        self.config = config
        self.runner = runner
        self.limits = limits
        self.framing = framing
        self.id = f"c{next(self._ids)}"
        self.log = structlog.get_logger("enginesrv.connection").bind(conn=self.id, peer=peer)
        self._queue_send, self._queue_receive = trio.open_memory_channel[
            tuple[m.Reply, int | None]
        ](QUEUE)
        self.reader_scope = trio.CancelScope()
        self.shutting_down = False
        self.inflight = 0

    # -- writing -------------------------------------------------------------------------------

    async def _writer(self) -> None:
        framing = self.framing
        assert framing is not None
        try:
            async for reply, msgid in self._queue_receive:
                data = encode(framing, reply, msgid)
                if data:
                    await self.send_stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.log.info("peer_gone_while_writing")
        finally:
            # whoever still sends gets BrokenResourceError instead of waiting for ever
            await self._queue_receive.aclose()

    async def send(self, reply: m.Reply, msgid: int | None) -> None:
        """Queue a reply (waits while the queue is full)."""
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            await self._queue_send.send((reply, msgid))

    def send_nowait(self, reply: m.Reply, msgid: int | None) -> None:
        """Queue a progress report, or drop it if the client is not keeping up."""
        dropped = (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError)
        with contextlib.suppress(*dropped):
            self._queue_send.send_nowait((reply, msgid))

    async def _raw(self, data: bytes) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self.send_stream.send_all(data)

    # -- the connection ------------------------------------------------------------------------

    async def _first_chunk(self) -> bytes:
        idle = self.limits.idle or math.inf
        with trio.move_on_after(idle):
            return bytes(await self.receive_stream.receive_some(RECEIVE))
        return b""

    async def run(self, *, refuse: ErrorCode | None = None) -> None:
        """Serve the connection until the client quits or goes, a fatal error, or shutdown.

        Args:
            refuse: answer the first byte with this error and close (the connection limit).
        """
        first = b""
        if self.framing is None:
            first = await self._first_chunk()
            if not first:
                self.log.info("connection_closed", reason="nothing received")
                return
            self.framing = sniff(first[0])
            if self.framing is None:
                await self._raw(
                    f"error {BAD_FRAME.code} {BAD_FRAME.name} the first byte {first[0]:#04x} "
                    "starts neither a text line nor a msgpack array\n".encode()
                )
                self.log.info("connection_closed", reason="unknown framing")
                return
        self.log = self.log.bind(framing=self.framing)
        if refuse is not None:
            await self._raw(encode(self.framing, _error_reply(refuse, refuse.meaning), None))
            self.log.info("connection_refused", reason=refuse.name)
            return
        self.log.info("connection_open")
        session = Session(
            self.config,
            self.runner,
            framing=self.framing,
            send=self.send,
            send_nowait=self.send_nowait,
            logger=self.log,
        )
        reason = "closed by the client"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer)
            async with trio.open_nursery() as searches:
                with self.reader_scope:
                    reason = await self._read(session, searches, first)
                if self.shutting_down:
                    reason = "shutdown"
                # Stop what runs; its best move is still sent (the client may be gone).
                await session.stop_search()
                if reason == "shutdown":
                    await self.send(_error_reply(SHUTTING_DOWN, "the server is stopping"), None)
            await self._queue_send.aclose()  # the writer sends what is queued, then ends
        self.log.info("connection_closed", reason=reason)

    async def _read(self, session: Session, searches: trio.Nursery, first: bytes) -> str:
        assert self.framing is not None
        decoder: TextDecoder | MsgpackDecoder
        if self.framing == "text":
            decoder = TextDecoder("server", max_line=self.limits.line or sys.maxsize)
        else:
            decoder = MsgpackDecoder("server", max_frame=self.limits.frame or 2**31)
        data = first
        while True:
            if data:
                try:
                    decoder.feed(data)
                except ProtocolError as exc:
                    await self._report(session, exc)
                    return exc.error.name
                outcome = await self._drain(session, searches, decoder)
                if outcome is not None:
                    return outcome
            idle = self.limits.idle if session.search is None and self.limits.idle else math.inf
            with trio.move_on_after(idle) as scope:
                try:
                    data = bytes(await self.receive_stream.receive_some(RECEIVE))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return "connection lost"
            if scope.cancelled_caught:
                await session.reply(
                    _error_reply(IDLE_TIMEOUT, f"nothing received for {self.limits.idle:g} s"),
                    None,
                )
                return IDLE_TIMEOUT.name
            if not data:
                return "end of input"

    async def _drain(
        self, session: Session, searches: trio.Nursery, decoder: TextDecoder | MsgpackDecoder
    ) -> str | None:
        while True:
            try:
                message = decoder.next_message()
            except ProtocolError as exc:
                await self._report(session, exc)
                if exc.fatal:
                    return exc.error.name
                continue
            if message is None:
                return None
            assert isinstance(message, m.Request)
            if self.limits.inflight and self._pending(session) >= self.limits.inflight:
                await session.reply(
                    _error_reply(
                        TOO_MANY_REQUESTS,
                        f"{message.command.METHOD}: more than {self.limits.inflight} requests "
                        "in flight",
                    ),
                    message.msgid,
                )
                continue
            await session.handle(message, searches)
            if session.closing:
                return "quit"

    def _pending(self, session: Session) -> int:
        # Commands are answered in order, so what is in flight is a running search plus the
        # replies still queued for the writer.
        queued = self._queue_receive.statistics().current_buffer_used
        return queued + (1 if session.search is not None else 0)

    async def _report(self, session: Session, exc: ProtocolError) -> None:
        self.log.info("protocol_error", code=exc.code, error=exc.message)
        await session.reply(_error_reply(exc.error, exc.message), exc.msgid)

    def shutdown(self) -> None:
        """Stop reading; the connection then stops its search, says why and closes."""
        self.shutting_down = True
        self.reader_scope.cancel()


def _error_reply(code: ErrorCode, message: str) -> m.ErrorReply:
    return m.ErrorReply(code.code, code.name, message)


class Server:
    """The TCP server: accepts connections and tracks them for the limit and for shutdown."""

    def __init__(self, config: SessionConfig, runner: SearchRunner, limits: Limits) -> None:
        self.config = config
        self.runner = runner
        self.limits = limits
        self.connections: set[Connection] = set()
        self.log = structlog.get_logger("enginesrv.server")
        self.stopping = False
        self.stop = trio.Event()

    async def handle(self, stream: trio.SocketStream) -> None:
        """Serve one accepted TCP connection."""
        try:
            peer = "{}:{}".format(*stream.socket.getpeername()[:2])
        except OSError:
            peer = "?"
        connection = Connection(
            stream, stream, config=self.config, runner=self.runner, limits=self.limits, peer=peer
        )
        refuse = None
        if self.stopping:
            refuse = SHUTTING_DOWN
        elif self.limits.connections and len(self.connections) >= self.limits.connections:
            refuse = TOO_MANY_CONNECTIONS
        self.connections.add(connection)
        try:
            await connection.run(refuse=refuse)
        except Exception:  # a fault of ours must cost one connection, never the server
            connection.log.exception("connection_failed")
        finally:
            self.connections.discard(connection)
            with trio.move_on_after(1):
                await stream.aclose()

    def shutdown(self) -> None:
        """Stop every connection (each sends its best move and error 304, then closes)."""
        self.stopping = True
        for connection in list(self.connections):
            connection.shutdown()


async def serve(
    server: Server,
    host: str,
    port: int,
    *,
    on_ready: Callable[[str, int], None],
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen and serve until SIGINT/SIGTERM (or ``server.stop``); then stop accepting, let
    every connection send its best move and close, and return."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = listeners[0].socket.getsockname()
    async with trio.open_nursery() as connections:
        async with trio.open_nursery() as accepting:
            accepting.start_soon(
                functools.partial(
                    trio.serve_listeners, server.handle, listeners, handler_nursery=connections
                )
            )
            accepting.start_soon(_signals_to_stop, server)
            on_ready(bound[0], bound[1])
            task_status.started()
            await server.stop.wait()
            accepting.cancel_scope.cancel()
        for listener in listeners:
            await listener.aclose()
        server.shutdown()


async def _signals_to_stop(server: Server) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            server.log.info("signal", signal=signal.Signals(signum).name)
            server.stop.set()
            return


def stdio_streams() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
    """Standard output and input as trio streams (protocol bytes only on stdout)."""
    out = trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))
    inp = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    return out, inp

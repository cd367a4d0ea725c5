"""One client's connection: its streams, its session, the task that answers its requests one
at a time (the handler), the reading of them (``enginesrv.serve.reader``) and the bounded queue
of replies waiting to be written (``enginesrv.serve.outbox``)."""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
from dataclasses import dataclass

import structlog
import trio

from enginesrv.search.child import SearchRunner
from enginesrv.serve.auth import AuthRefusedError, Guard, refusal, unquoted
from enginesrv.serve.hooks import RefereeHooks
from enginesrv.serve.limits import Limits
from enginesrv.serve.outbox import ERROR_TEXT, Outbox, OutputBudget, encode, shortened
from enginesrv.serve.reader import End, Item, RequestReader, error_reply
from enginesrv.serve.session import Session
from enginesrv.serve.settings import Framing, SessionConfig
from protocol import messages as m
from protocol.errors import BAD_FRAME, SHUTTING_DOWN, TOO_MANY_CONNECTIONS, ProtocolError
from protocol.mpack import MsgpackDecoder
from protocol.sniff import sniff
from protocol.text import TextDecoder

__all__ = ["Connection", "Limits", "Serving", "peer_host"]

RECEIVE = 65536
"""Bytes read from the client at once."""
TOKEN_LOOK = 1.0
"""Seconds between two looks at whether a connection's token was revoked."""
FLUSH_TIMEOUT = 0.5
"""Seconds a closing connection gets to send what it has queued."""


@dataclass(frozen=True)
class Serving:
    """What the connections of a server share: their sessions' configuration, where their
    searches run, their limits, and the budget of the replies left unread on all of them
    (None: each connection's own cap only)."""

    config: SessionConfig
    runner: SearchRunner
    limits: Limits
    output: OutputBudget | None = None


class Connection:
    """One client: its stream, reader, handler, writer and session."""

    _ids = itertools.count(1)

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        serving: Serving,
        *,
        peer: str,
        framing: Framing | None = None,
        referee: RefereeHooks | None = None,
        peer_key: str | None = None,
        guard: Guard | None = None,
    ) -> None:
        """``framing``: the connection's, when it is known before its first byte (stdio, a
        WebSocket). ``referee``: the game the session plays, when the server referees it
        (``Session.attach``; None: a plain session). ``peer_key``: the peer the connection's
        searches and costly replies count against (``Admission.peer``; None: its address).
        ``guard``: what screens its commands until its token is accepted (None: a server
        that takes no tokens)."""
        self.peer_key = peer_key
        self.guard = guard or Guard(None, peer_key or peer_host(peer))
        self.send_stream = send_stream
        self.receive_stream = receive_stream
        self.serving = serving
        limits = self.limits = serving.limits
        self.peer = peer
        self.framing = framing
        self.referee = referee
        self.id = f"c{next(self._ids)}"
        self.log = structlog.get_logger("enginesrv.connection").bind(conn=self.id, peer=peer)
        self.outbox = Outbox(limits.output, min(limits.output or 1 << 20, 1 << 18))
        if serving.output is not None:
            serving.output.join(self.outbox, self._lose)
        self.io_scope = trio.CancelScope()
        self.first_scope = trio.CancelScope()
        self.shutting_down = False
        self.gone: str | None = None
        """Why the client can no longer be answered (None while it can)."""
        self.ending = trio.Event()
        """Set once the connection is lost, told to shut down or refused for its token: it
        ends within ``FLUSH_TIMEOUT`` unless a write it cannot cancel holds it (a transport
        that shields its writes is then closed under it by its owner)."""
        self.started = trio.current_time()
        self.session: Session | None = None
        self.handling = False
        self.late: str | None = None
        """Why the connection was refused for its token: none in time, or revoked
        (``_watch_token``)."""
        self.evicted: str | None = None
        """Why the connection was closed for a new peer's (``evict``)."""
        self.refused: str | None = None
        """Why the connection was closed for its token (``late``, or a command's refusal),
        once it was: a WebSocket's is then closed with the close code that says so."""
        self.reader = RequestReader(self._receive, limits, busy=self._busy, lose=self._lose)

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
            if self.serving.output is not None:
                self.serving.output.leave(self.outbox)

    async def _run(self) -> None:
        first = b""
        first_by = self.started + (self.limits.first_command or math.inf)
        if self.framing is None:
            got = await self._sniff(first_by)
            if got is None:
                return
            first = got
        assert self.framing is not None
        self.log = self.log.bind(framing=self.framing)
        if self.guard.through:  # else its first line says its token was accepted
            self.log.info("connection_open")
        session = Session(
            self.serving.config,
            self.serving.runner,
            framing=self.framing,
            send=self.send,
            send_nowait=self.send_nowait,
            logger=self.log,
            peer=self.peer_key or peer_host(self.peer),
            max_reply=self._max_reply(),
        )
        if self.referee is not None:
            session.attach(self.referee)
        grant, keeper = self.guard.grant, self.guard.keeper
        if grant is not None and keeper is not None:  # accepted before (a WebSocket's)
            session.count_against(*keeper.searching(self.serving.runner, grant))
        self.session = session
        reason = "closed by the client"
        requests_send, requests_receive = trio.open_memory_channel[Item](
            max(0, self.limits.inflight - 1) if self.limits.inflight else math.inf
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer)
            async with trio.open_nursery() as searches:
                with self.io_scope:
                    async with trio.open_nursery() as io:
                        io.start_soon(self._reader, first, first_by, requests_send)
                        if self.guard.keeper is not None:
                            io.start_soon(self._watch_token, first_by, io.cancel_scope)
                        reason = await self._handle(session, searches, requests_receive)
                        io.cancel_scope.cancel()
                if self.late is not None:
                    reason = self.late
                if self.shutting_down:
                    reason = "shutdown" if self.evicted is None else "evicted"
                if self.gone is not None:
                    reason = self.gone
                    searches.cancel_scope.cancel()  # nobody to answer: free the workers now
                else:
                    # Stop what runs; its best move is still sent.
                    await session.stop_search()
                    if self.late is not None:
                        self._queue(refusal(AuthRefusedError(self.late)), None)
                    elif reason == "shutdown":
                        self._queue(error_reply(SHUTTING_DOWN, "the server is stopping"), None)
                    elif self.evicted is not None:
                        self._queue(error_reply(TOO_MANY_CONNECTIONS, self.evicted), None)
            self.outbox.close()  # the writer sends what is queued, then ends
            nursery.cancel_scope.deadline = trio.current_time() + FLUSH_TIMEOUT
        self.log.info("connection_closed", reason=reason)

    async def _sniff(self, first_by: float) -> bytes | None:
        """The first bytes, whose first tells the framing (``self.framing``, then set); None
        when the connection is closed instead (nothing came in time, shutdown, neither
        framing)."""
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
            return None
        self.framing = sniff(got[0])
        if self.framing is None:
            await self._raw(
                f"error {BAD_FRAME.code} {BAD_FRAME.name} the first byte {got[0]:#04x} "
                "starts neither a text line nor a msgpack array\n".encode()
            )
            self.log.info("connection_closed", reason="unknown framing")
            return None
        return got

    async def _reader(
        self, first: bytes, first_by: float, requests: trio.MemorySendChannel[Item]
    ) -> None:
        assert self.framing is not None
        decoder: TextDecoder | MsgpackDecoder
        if self.framing == "text":
            decoder = TextDecoder("server", max_line=self.limits.line or sys.maxsize)
        else:
            decoder = MsgpackDecoder("server", max_frame=self.limits.frame or 2**31)
        async with requests:
            try:
                await self.reader.run(decoder, first, first_by, requests)
            except trio.BrokenResourceError:
                # the handler has finished (quit, a fatal error) and closed its end while a
                # request or the end of input was on its way: there is no one left to tell
                return

    def _busy(self) -> bool:
        session = self.session
        return self.handling or (session is not None and session.working)

    async def _handle(
        self,
        session: Session,
        searches: trio.Nursery,
        requests: trio.MemoryReceiveChannel[Item],
    ) -> str:
        async with requests:
            async for item in requests:
                if isinstance(item, End):
                    if item.reply is not None:
                        await session.reply(item.reply, None)
                    return item.reason
                self.handling = True
                if isinstance(item, ProtocolError) and not self.guard.through:
                    item = unquoted(item)
                try:
                    screened = await self._screen(session, item)
                    if isinstance(screened, str):
                        return screened
                    if screened:
                        continue
                    if isinstance(item, ProtocolError):
                        self.log.info("protocol_error", code=item.code, error=item.message)
                        await session.refuse(item)
                        if item.fatal:
                            return item.error.name
                    else:
                        try:
                            await session.handle(item, searches)
                        finally:
                            self.reader.answered()
                        if session.closing:
                            return "quit"
                finally:
                    self.handling = False
                # one command at a time per turn of the event loop: the others get theirs
                await trio.lowlevel.checkpoint()
        return "end of input"

    async def _watch_token(self, by: float, io: trio.CancelScope) -> None:
        """Refuse the connection when no token was accepted by ``by``, or, once one was,
        when it is revoked (looked at every ``TOKEN_LOOK`` seconds: a search it runs is
        stopped, its best move sent, then the refusal)."""
        keeper = self.guard.keeper
        assert keeper is not None
        while True:
            now = trio.current_time()
            grant = self.guard.grant
            if grant is None and now >= by:
                self.late = f"no token accepted within {self.limits.first_command:g} s"
                break
            if grant is not None and keeper.revoked(grant):
                self.late = "the token was revoked"
                break
            await trio.sleep_until(
                now + TOKEN_LOOK if grant is not None else min(by, now + TOKEN_LOOK)
            )
        self.log.info("auth_refused", reason=self.late)
        self.refused = self.late
        self.ending.set()  # a refused peer is owed no more than its refusal
        io.cancel()

    async def _screen(self, session: Session, item: m.Request | ProtocolError) -> bool | str:
        """Pass ``item`` through the guard: False when it goes on to the session, True when
        the guard answered it, the reason to close when the connection is refused."""
        try:
            passed = await self.guard.screen(item)
        except AuthRefusedError as exc:
            self.log.info("auth_refused", reason=exc.message)
            self.refused = exc.message
            self.ending.set()
            msgid = item.msgid
            await session.reply(refusal(exc), msgid)
            return "auth refused"
        if passed is None:
            return False
        grant, keeper = self.guard.grant, self.guard.keeper
        if grant is not None and keeper is not None and isinstance(passed.reply, m.Ack):
            self.log.info("auth_accepted", account=grant.name)
            session.count_against(*keeper.searching(self.serving.runner, grant))
        if isinstance(item, m.Request):
            self.reader.answered()
        if passed.reply is not None:
            await session.reply(passed.reply, item.msgid)
        return True

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


def peer_host(peer: str) -> str:
    """The address part of ``host:port`` (IPv6 included)."""
    host, sep, _ = peer.rpartition(":")
    return host if sep else peer

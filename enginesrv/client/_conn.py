"""The connection under ``AsyncEngine``: one reader task that decodes everything the engine
sends (with the protocol package's decoders, never by hand) and routes it, and the two ways of
asking, one per framing.

Text has no request ids, so a request is an *exchange*: its command, then a barrier (``ping N``
to an enginesrv server, whose pong carries the token back; ``isready`` to a plain UGI engine),
and every line up to the barrier's answer is the request's answer. Exchanges take turns. A
search is the exception: its ``info`` lines and its one ``bestmove`` go to the search whatever
exchange runs meanwhile, since no other request is answered with them. msgpack-RPC has ids: each
request waits for the response with its id, and ``info`` notifications carry their search's id.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence

import trio

from enginesrv.client.handle import Search
from enginesrv.client.types import (
    ClientError,
    EngineError,
    EngineTerminatedError,
    EngineTimeoutError,
    Framing,
    TraceCallback,
    TraceKind,
)
from protocol import messages as m
from protocol import mpack, text
from protocol.errors import BY_CODE, ProtocolError
from protocol.rpc import FrameReader

RECEIVE_SIZE = 65536
MAX_LINE = 1 << 20
"""The longest line the engine may send (the server's own replies are at most 64 KiB)."""
MAX_FRAME = 1 << 22
"""The largest msgpack frame the engine may send."""
MAX_LINES = 65536
"""The most lines one exchange may gather before its end (a listing is a few dozen)."""
MAX_EXCHANGE_BYTES = 8 << 20
"""The most bytes of lines one exchange may gather before its end (a handshake is some
kilobytes): without it an engine could make the client hold MAX_LINES lines of MAX_LINE bytes,
64 GiB, before its ``ugiok``. Parsed, a line of many short words (``var`` after ``var``) takes
some ten times its bytes, so the cap is a few MiB, not the line cap times many."""
STREAM_GONE = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)
"""What reading or writing a pipe or socket raises once the other end is gone."""


class _Pending:
    """A msgpack request waiting for its response."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = trio.Event()
        self.reply: m.RpcResult | None = None


def engine_error(reply: m.ErrorReply | m.InvalidMove) -> EngineError:
    """The exception for an error answer (``invalidmove`` is code 201, as in msgpack)."""
    if isinstance(reply, m.InvalidMove):
        data = {"move": reply.move, "reason": reply.reason}
        return EngineError(201, "illegal-move", f"{reply.move}: {reply.reason}", data)
    return EngineError(reply.code, reply.name, reply.message, reply.data)


class Connection:
    """The stream to one engine, its reader and the routing of what it sends."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        framing: Framing,
        where: str,
        *,
        max_exchange_bytes: int = MAX_EXCHANGE_BYTES,
    ) -> None:
        self.stream = stream
        self.framing = framing
        self.where = where
        """The engine as error messages name it (its command, or host:port)."""
        self.exit_code: Callable[[], int | None] = lambda: None
        self.is_process = False
        """Whether the stream is a child process's pipes (its end is an exit)."""
        self.ping_barrier = False
        """Whether the engine answers ``ping N`` (an enginesrv server): the text barrier."""
        self.search: Search | None = None
        self.ended: ClientError | None = None
        self.reader_done = trio.Event()
        self.unsolicited: m.ErrorReply | None = None
        """The last error the engine sent that answered no request (``idle-timeout``...)."""
        self.writes = 0
        """Writes begun: a request cut off after this changed may have reached the engine."""
        self._send_lock = trio.Lock()
        self._turn = trio.Lock()  # text exchanges take turns
        self._collect: trio.MemorySendChannel[m.ReplyLine] | None = None
        self.max_exchange_bytes = max_exchange_bytes
        self.kept = 0
        """Bytes of the lines the running exchange has gathered (never over the cap: the line
        that would pass it ends the connection instead)."""
        self._ending = ""
        """What ends the running exchange, as messages name it (``ugiok``, ``readyok``)."""
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._text = text.TextDecoder("client", max_line=MAX_LINE)
        self._mpack = mpack.MsgpackDecoder("client", max_frame=MAX_FRAME)
        self._trace: TraceCallback | None = None
        self._traced_frames: dict[TraceKind, FrameReader] = {}

    # -- the trace -------------------------------------------------------------------------

    def set_trace(self, trace: TraceCallback | None) -> None:
        """Tell ``trace`` every line written and read from now on (``TraceCallback``)."""
        self._trace = trace
        if trace is not None and self.framing == "msgpack":
            # the frames are read a second time for the trace, as they came: the decoder
            # hands on only what it understood
            self._traced_frames = {"send": FrameReader(MAX_FRAME), "recv": FrameReader(MAX_FRAME)}

    def _traced(self, kind: TraceKind, data: bytes) -> None:
        """Tell the trace the lines (text) or frames (msgpack) of ``data``, sent or read."""
        trace = self._trace
        if trace is None:
            return
        if self.framing == "text":
            if kind == "send":  # a whole line: what is read is traced by ``_take_lines``
                for line in data.decode("utf-8", "replace").removesuffix("\n").split("\n"):
                    trace(kind, line)
            return
        reader = self._traced_frames.get(kind)
        if reader is None:
            return
        try:
            reader.feed(data)
            while True:
                whole, frame = reader.next_frame()
                if not whole:
                    return
                trace(kind, json.dumps(frame, ensure_ascii=False, default=repr))
        except ProtocolError as exc:  # the decoder fails on it too and ends the connection
            trace(kind, f"(not msgpack-RPC from here on: {exc})")
            del self._traced_frames[kind]

    # -- the end ---------------------------------------------------------------------------

    def end(self, reason: ClientError) -> None:
        """The connection is over: every wait ends with ``reason`` (the first reason sticks)."""
        if self.ended is None:
            self.ended = reason
            if self._trace is not None:
                self._trace("end", str(reason))
        if self._collect is not None:
            self._collect.close()
        for pending in self._pending.values():
            pending.done.set()
        if self.search is not None:
            self.search.fail(self.ended)
            self.let_go()

    def let_go(self) -> None:
        """The search has had its answer (or never will): the connection holds it no more."""
        if self.search is not None:
            self.search.answered.set()
            self.search = None

    def check_open(self) -> None:
        if self.ended is not None:
            raise self.ended

    def _gone(self, detail: str) -> EngineTerminatedError:
        code = self.exit_code()
        tail = "" if code is None else f", exit code {code}"
        extra = ""
        if self.unsolicited is not None:
            u = self.unsolicited
            extra = f"; its last word: error {u.code} {u.name} {u.message}".rstrip()
        return EngineTerminatedError(f"{self.where}: {detail}{tail}{extra}")

    # -- reading ---------------------------------------------------------------------------

    async def read_loop(self) -> None:
        """Read and route until the stream ends (run in a nursery)."""
        reason: ClientError | None = None
        try:
            while reason is None:
                data = await self.stream.receive_some(RECEIVE_SIZE)
                if not data:
                    what = "it exited" if self.is_process else "the connection closed"
                    reason = self._gone(what)
                    break
                reason = self._take(data)
        except STREAM_GONE as exc:
            reason = self._gone(f"the connection failed ({exc})")
        except Exception as exc:  # a fault here must end this connection, not the program
            reason = ClientError(f"{self.where}: the client failed reading it ({exc!r})")
        finally:
            self.end(reason or self._gone("the connection was closed"))
            self.reader_done.set()

    def _take(self, data: bytes | bytearray) -> ClientError | None:
        """Decode and route ``data``; a reason to end when the engine broke the framing."""
        try:
            if self.framing == "text":
                self._text.feed(bytes(data))
                self._take_lines()
            else:
                self._traced("recv", bytes(data))
                self._mpack.feed(bytes(data))
                self._take_frames()
        except ProtocolError as exc:  # a fatal one: the stream cannot be read on
            return self._gone(f"it sent what the protocol does not allow ({exc})")
        return None

    def _take_lines(self) -> None:
        while True:
            # line by line, not ``next_message``: the trace is told every line, read or not
            raw = self._text.next_line()  # a broken stream raises (fatal)
            if raw is None or self.ended is not None:
                return  # what comes after the end is not routed (nor kept)
            if self._trace is not None:
                self._trace("recv", raw)
            try:
                line = text.parse_reply_line(raw)
            except ProtocolError as exc:
                if exc.fatal:
                    raise
                if exc.method == "bestmove" and self.search is not None:
                    # a best move that cannot be read still ends the search
                    search = self.search
                    self.let_go()
                    search.fail(ClientError(f"{self.where}: {exc}"))
                continue  # one bad line (a plain UGI engine's chatter): on to the next
            if line is None:
                continue  # a blank line
            assert not isinstance(line, m.Request)  # a client's decoder reads replies only
            self._route_line(line, raw)

    def _take_frames(self) -> None:
        while (frame := self._mpack.next_message()) is not None:
            assert not isinstance(frame, m.Request)  # a client's decoder reads replies only
            self._route_frame(frame)

    def _route_line(self, line: m.ReplyLine, raw: str) -> None:
        search = self.search
        if isinstance(line, m.Info):
            if search is not None:
                search.note(line)
        elif isinstance(line, m.BestMove):
            if search is not None:
                self.let_go()
                search.finish(line)
        elif self._collect is not None:
            if isinstance(line, m.ErrorReply) and _is_fatal(line.code):
                self.unsolicited = line  # the connection ends next: say why
            size = len(raw.encode("utf-8"))  # counted before it is kept, so never over the cap
            if self.kept + size > self.max_exchange_bytes:
                cap = _amount(self.max_exchange_bytes)
                self.end(self._gone(f"it sent more than {cap} before {self._ending}"))
                return
            self.kept += size
            try:
                self._collect.send_nowait(line)
            except trio.WouldBlock:
                self.end(self._gone(f"more than {MAX_LINES} lines answered one request"))
        elif search is not None and isinstance(line, m.ErrorReply | m.InvalidMove):
            # no request waits: the answer of a ``go`` sent without a barrier
            error = engine_error(line)
            search.fail(error)
            # an enginesrv server ends every refused ``go`` with ``bestmove none``, but one
            # refused as 204 (another search runs, whose ``bestmove`` comes next): the search
            # stays until that ``bestmove none``, so that it is not taken for the next one's
            if error.code == 204:
                self.let_go()
        elif isinstance(line, m.ErrorReply):
            self.unsolicited = line

    def _route_frame(self, frame: m.RpcResult | m.Info | m.ErrorReply | m.Notification) -> None:
        search = self.search
        if isinstance(frame, m.RpcResult):
            if search is not None and frame.msgid == search.msgid:
                self.let_go()
                if frame.error is not None:
                    search.fail(engine_error(frame.error))
                    return
                try:
                    reply = mpack.parse_result("go", frame.result)
                except ProtocolError as exc:
                    search.fail(ClientError(f"{self.where}: an answer to go: {exc}"))
                    return
                assert isinstance(reply, m.BestMove)
                search.finish(reply)
                return
            pending = self._pending.get(frame.msgid)
            if pending is not None:
                pending.reply = frame
                pending.done.set()
        elif isinstance(frame, m.Info):
            if search is not None and frame.search in (None, search.msgid):
                search.note(frame)
        elif isinstance(frame, m.ErrorReply):
            self.unsolicited = frame

    # -- writing ---------------------------------------------------------------------------

    async def send(self, command: m.Command, msgid: int | None = None) -> None:
        """Write one command (in msgpack, a request with ``msgid`` or a notification)."""
        self.check_open()
        if self.framing == "text":
            data = text.encode_command(command)
        elif msgid is None:
            data = mpack.encode_notify(command)
        else:
            data = mpack.encode_request(msgid, command)
        async with self._send_lock:
            self._traced("send", data)
            self.writes += 1  # from here on, some of it may have gone out
            try:
                await self.stream.send_all(data)
            except STREAM_GONE as exc:
                error = self._gone(f"it cannot be written to ({exc})")
                self.end(error)
                raise self.ended or error from None

    # -- asking ----------------------------------------------------------------------------

    def new_id(self) -> int:
        return next(self._ids)

    async def exchange(
        self,
        commands: Sequence[m.Command],
        timeout: float,
        *,
        until: Callable[[m.ReplyLine], bool] | None = None,
        ending: str | None = None,
    ) -> list[m.ReplyLine]:
        """Text: send ``commands``, then a barrier, and return every line that answered them
        (the barrier's answer left out); with ``until``, no barrier: the lines up to and with
        the first for which it is true (``ending`` names it in messages: ``ugiok``).

        Raises:
            EngineTimeoutError: no end within ``timeout`` seconds (the connection is ended).
            EngineTerminatedError: the engine went away first, or sent more than MAX_LINES
                lines or ``max_exchange_bytes`` bytes before the end (the connection is ended).
        """
        async with self._turn:
            self.check_open()
            collect, lines_in = trio.open_memory_channel[m.ReplyLine](MAX_LINES)
            barrier: m.Command = m.IsReady()
            if until is None:
                if self.ping_barrier:
                    barrier = m.Ping(next(self._tokens))
                token = barrier.token if isinstance(barrier, m.Ping) else None
                end = _barrier_end(token)
                self._ending = "readyok" if token is None else f"pong {token}"
            else:
                end = until
                what = commands[0].METHOD if commands else "the request"
                self._ending = ending or f"the end of its answer to {what}"
            self.kept = 0
            lines: list[m.ReplyLine] = []
            self._collect = collect
            answered = False
            writes = self.writes
            try:
                with trio.fail_after(timeout):
                    for command in commands:
                        await self.send(command)
                    if until is None:
                        await self.send(barrier)
                    async for line in lines_in:
                        if end(line):
                            if until is not None:
                                lines.append(line)
                            answered = True
                            return lines
                        lines.append(line)
                        if len(lines) > MAX_LINES:
                            flood = self._gone(f"more than {MAX_LINES} lines answered one request")
                            self.end(flood)
                            raise flood
                    self.check_open()
                    raise self._gone("the answer stopped")  # not reached: closed means ended
            except trio.TooSlowError:
                what = commands[0].METHOD if commands else "the request"
                error = EngineTimeoutError(
                    f"{self.where}: no answer to {what} within {timeout:g} s"
                )
                self.end(error)
                raise error from None
            finally:
                self._collect = None
                if not answered and self.ended is None and self.writes != writes:
                    # cancelled half-way: its answer would be taken for the next request's
                    cut = f"{self.where}: a request was cancelled before its answer"
                    self.end(ClientError(f"{cut}; the answers after it cannot be trusted"))

    async def start(self, go: m.Go, search: Search, timeout: float, confirm: bool) -> None:
        """Send ``go`` for ``search`` (already ``self.search``). Text with ``confirm``: with a
        barrier, so that a refusal raises here (``AsyncEngine.start_search``)."""
        if self.framing == "msgpack" or not confirm:
            if self.framing == "msgpack":
                search.msgid = self.new_id()
            with trio.move_on_after(timeout) as scope:
                await self.send(go, search.msgid)
            if scope.cancelled_caught:
                late = EngineTimeoutError(f"{self.where}: go could not be sent in {timeout:g} s")
                self.end(late)
                raise late
            return
        error = first_error(await self.exchange([go], timeout))
        if error is not None:
            if error.code not in (203, 206):
                # refused (its ``bestmove none``, if any, came before the barrier's answer)
                raise error
            # a game over or a hidden position: the handle says why, with no move
            search.fail(error)
            search.error = error

    async def request(self, command: m.Command, timeout: float) -> m.Reply:
        """msgpack: send ``command`` as a request and return its parsed result.

        Raises:
            EngineError: the engine answered with an error.
            EngineTimeoutError: no answer within ``timeout`` seconds (a late one is dropped).
            EngineTerminatedError: the engine went away first.
        """
        msgid = self.new_id()
        pending = _Pending(command.METHOD)
        self._pending[msgid] = pending
        try:
            with trio.fail_after(timeout):
                await self.send(command, msgid)
                await pending.done.wait()
        except trio.TooSlowError:
            raise EngineTimeoutError(
                f"{self.where}: no answer to {command.METHOD} within {timeout:g} s"
            ) from None
        finally:
            self._pending.pop(msgid, None)
        if pending.reply is None:
            self.check_open()
            raise self._gone("no answer")
        if pending.reply.error is not None:
            raise engine_error(pending.reply.error)
        try:
            return mpack.parse_result(command.METHOD, pending.reply.result)
        except ProtocolError as exc:
            raise ClientError(f"{self.where}: an answer to {command.METHOD}: {exc}") from None


def _is_fatal(code: int) -> bool:
    known = BY_CODE.get(code)
    return known is not None and known.fatal


def _amount(count: int) -> str:
    """``count`` bytes for a person: ``8 MiB`` when whole mebibytes, else ``4096 bytes``."""
    return f"{count >> 20} MiB" if count and count % (1 << 20) == 0 else f"{count} bytes"


def _barrier_end(token: int | None) -> Callable[[m.ReplyLine], bool]:
    if token is None:
        return lambda line: isinstance(line, m.ReadyOk)
    return lambda line: isinstance(line, m.Pong) and line.token == token


def first_error(lines: Sequence[m.ReplyLine]) -> EngineError | None:
    """The error among an exchange's answer lines, if any."""
    for line in lines:
        if isinstance(line, m.ErrorReply | m.InvalidMove):
            return engine_error(line)
    return None


def answers(command: m.IsReady | m.Ping) -> Callable[[m.ReplyLine], bool]:
    """What ends the answer to ``isready`` or ``ping N`` (or an error line)."""
    if isinstance(command, m.Ping):
        token = command.token
        return lambda x: isinstance(x, m.ErrorReply) or (isinstance(x, m.Pong) and x.token == token)
    return lambda x: isinstance(x, m.ReadyOk | m.ErrorReply)

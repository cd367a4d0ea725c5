"""The connection under ``AsyncEngine``: one reader task that decodes everything the engine
sends (with the protocol package's decoders, never by hand) and routes it to whoever waits for
it, the state of its search (``protocol.state``: ``begin`` it as its ``go`` is sent, the reader
moves it on, ``let_go`` ends it), and the writing of commands. How a request waits for its
answer is ``_asking``'s.

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
from collections.abc import Callable

import anyio
from anyio.abc import ByteStream
from anyio.streams.memory import MemoryObjectSendStream

from enginesrv.client._args import amount, is_fatal
from enginesrv.client.handle import AnalysisWait, Pending, Search
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
from protocol import state as s
from protocol.errors import ProtocolError
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
LAST_WORDS_WAIT = 0.5
"""Seconds a failed write waits for the reader to read what the engine sent before it went
away (its reason, such as ``error 304 shutting-down``)."""
STREAM_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
"""What reading or writing a pipe or socket raises once the other end is gone."""
HIDDEN = m.Auth("***")
"""What the trace shows of an ``auth`` command: never its token."""


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
        stream: ByteStream,
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
        self.machine = s.SearchMachine()
        """The state of ``search`` (idle with none; closed once the connection has ended)."""
        self.ended: ClientError | None = None
        self.reader_done = anyio.Event()
        self.unsolicited: m.ErrorReply | None = None
        """The last error the engine sent that answered no request (``idle-timeout``...)."""
        self.writes = 0
        """Writes begun: a request cut off after this changed may have reached the engine."""
        self._send_lock = anyio.Lock()
        self.turn = anyio.Lock()
        """Held by the running text exchange: exchanges take turns."""
        self.collect: MemoryObjectSendStream[m.ReplyLine] | None = None
        """Where the lines answering the running exchange go."""
        self.max_exchange_bytes = max_exchange_bytes
        self.kept = 0
        """Bytes of the lines the running exchange has gathered (never over the cap: the line
        that would pass it ends the connection instead)."""
        self.ending = ""
        """What ends the running exchange, as messages name it (``ugiok``, ``readyok``)."""
        self.pending: dict[int, Pending] = {}
        """The msgpack requests waiting for their responses, by id."""
        self.analyses: dict[str, AnalysisWait] = {}
        """The positions of ``analyse`` requests waiting for their answers, by id."""
        self._ids = itertools.count(1)
        self.tokens = itertools.count(1)
        """The tokens of the ``ping`` barriers."""
        self._text = text.TextDecoder("client", max_line=MAX_LINE)
        self._mpack = mpack.MsgpackDecoder("client", max_frame=MAX_FRAME)
        self._trace: TraceCallback | None = None
        self._traced_frames: dict[TraceKind, FrameReader] = {}
        self.auth: m.Auth | None = None
        """The token for a server that asks for one (``repr`` hides it; ``_asking.greet``)."""
        self.authenticated = False

    # -- the trace -------------------------------------------------------------------------

    def set_trace(self, trace: TraceCallback | None) -> None:
        """Tell ``trace`` every line written and read from now on (``TraceCallback``)."""
        self._trace = trace
        if trace is not None and self.framing == "msgpack":
            # the frames are read a second time for the trace, as they came: the decoder
            # hands on only what it understood
            self._traced_frames = {"send": FrameReader(MAX_FRAME), "recv": FrameReader(MAX_FRAME)}

    def _tell_trace(self, kind: TraceKind, text: str) -> None:
        """Tell the trace one line; a trace that fails is dropped, and the connection ends
        with its error (the caller's callback: its error is the caller's to see)."""
        trace = self._trace
        if trace is None:
            return
        try:
            trace(kind, text)
        except Exception as exc:
            self._trace = None
            self.end(ClientError(f"{self.where}: the trace callback failed ({exc!r})"))

    def _traced(self, kind: TraceKind, data: bytes) -> None:
        """Tell the trace the lines (text) or frames (msgpack) of ``data``, sent or read."""
        if self._trace is None:
            return
        if self.framing == "text":
            if kind == "send":  # a whole line: what is read is traced by ``_take_lines``
                for line in data.decode("utf-8", "replace").removesuffix("\n").split("\n"):
                    self._tell_trace(kind, line)
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
                self._tell_trace(kind, json.dumps(frame, ensure_ascii=False, default=repr))
        except ProtocolError as exc:  # the decoder fails on it too and ends the connection
            self._tell_trace(kind, f"(not msgpack-RPC from here on: {exc})")
            del self._traced_frames[kind]

    # -- the end ---------------------------------------------------------------------------

    def end(self, reason: ClientError) -> None:
        """The connection is over: every wait ends with ``reason`` (the first reason sticks)."""
        if self.ended is None:
            self.ended = reason
            self._tell_trace("end", str(reason))
        if self.collect is not None:
            self.collect.close()
        for pending in self.pending.values():
            pending.done.set()
        for wait in self.analyses.values():
            wait.fail(self.ended)
        if self.search is not None:
            self.search.fail(self.ended)
        self.let_go(s.CLOSE)

    def begin(self, search: Search) -> None:
        """``search``'s ``go`` is about to be sent: the connection's search from now on.

        Raises:
            SearchStateError: a search is held already (the caller waits for it first).
        """
        self.machine.process(s.GO)
        self.search = search

    def let_go(self, event: s.SearchEvent) -> None:
        """The search has had its answer (``ANSWER``), is given up (``ABANDON``), or the
        connection ended (``CLOSE``): the connection holds it no more."""
        self.machine.process(event)
        if self.search is not None:
            self.search.answered.set()
            self.search = None

    def check_open(self) -> None:
        if self.ended is not None:
            raise self.ended

    def gone(self, detail: str) -> EngineTerminatedError:
        """The error of an engine that went away (its exit code and last word, if known)."""
        code = self.exit_code()
        tail = "" if code is None else f", exit code {code}"
        extra = ""
        if self.unsolicited is not None:
            u = self.unsolicited
            extra = f"; its last word: error {u.code} {u.name} {u.message}".rstrip()
        return EngineTerminatedError(f"{self.where}: {detail}{tail}{extra}")

    # -- reading ---------------------------------------------------------------------------

    async def read_loop(self) -> None:
        """Read and route until the stream ends (run in a task group, or as the loop's own
        task: ``_spawn``)."""
        reason: ClientError | None = None
        try:
            while reason is None:
                reason = self._take(await self.stream.receive(RECEIVE_SIZE))
        except anyio.EndOfStream:
            reason = self.gone("it exited" if self.is_process else "the connection closed")
        except STREAM_GONE as exc:
            reason = self.gone(f"the connection failed ({exc})")
        except Exception as exc:  # a fault here must end this connection, not the program
            reason = ClientError(f"{self.where}: the client failed reading it ({exc!r})")
        finally:
            self.end(reason or self.gone("the connection was closed"))
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
            return self.gone(f"it sent what the protocol does not allow ({exc})")
        return None

    def _take_lines(self) -> None:
        while True:
            # line by line, not ``next_message``: the trace is told every line, read or not
            raw = self._text.next_line()  # a broken stream raises (fatal)
            if raw is None or self.ended is not None:
                return  # what comes after the end is not routed (nor kept)
            self._tell_trace("recv", raw)
            try:
                line = text.parse_reply_line(raw)
            except ProtocolError as exc:
                if exc.fatal:
                    raise
                if exc.method == "bestmove" and self.search is not None:
                    # a best move that cannot be read still ends the search
                    search = self.search
                    self.let_go(s.ANSWER)
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

    def _route_analysis(self, line: m.AnalysisInfo | m.AnalysisOk) -> None:
        """A line of an answered position: to its ``analyse``, whatever request runs."""
        if isinstance(line, m.AnalysisInfo):
            wait = self.analyses.get(line.id)
            if wait is not None:
                wait.note(line.info)
            return
        wait = self.analyses.pop(line.id, None)
        if wait is not None:
            wait.finish(text.analysis_of(line, wait.lines))

    def _route_line(self, line: m.ReplyLine, raw: str) -> None:
        search = self.search
        if isinstance(line, m.AnalysisInfo | m.AnalysisOk):
            self._route_analysis(line)
        elif isinstance(line, m.Info):
            if search is not None:
                search.note(line)
        elif isinstance(line, m.BestMove):
            if search is not None:
                self.let_go(s.ANSWER)
                search.finish(line)
        elif self.collect is not None:
            if isinstance(line, m.ErrorReply) and is_fatal(line.code):
                self.unsolicited = line  # the connection ends next: say why
            size = len(raw.encode("utf-8"))  # counted before it is kept, so never over the cap
            if self.kept + size > self.max_exchange_bytes:
                cap = amount(self.max_exchange_bytes)
                self.end(self.gone(f"it sent more than {cap} before {self.ending}"))
                return
            self.kept += size
            try:
                self.collect.send_nowait(line)
            except anyio.WouldBlock:
                self.end(self.gone(f"more than {MAX_LINES} lines answered one request"))
        elif search is not None and isinstance(line, m.ErrorReply | m.InvalidMove):
            # no request waits: the answer of a ``go`` sent without a barrier
            error = engine_error(line)
            search.fail(error)
            # an enginesrv server ends every refused ``go`` with ``bestmove none``, but one
            # refused as 204 (another search runs, whose ``bestmove`` comes next): the search
            # stays until that ``bestmove none``, so that it is not taken for the next one's
            if error.code == 204:
                self.let_go(s.ANSWER)
            elif self.machine.allows(s.REFUSE):  # not again for a second error
                self.machine.process(s.REFUSE)
        elif isinstance(line, m.ErrorReply):
            self.unsolicited = line

    def _route_frame(
        self, frame: m.RpcResult | m.Info | m.ErrorReply | m.Analysis | m.Notification
    ) -> None:
        search = self.search
        if isinstance(frame, m.Analysis):
            wait = self.analyses.pop(frame.id, None)
            if wait is not None:
                wait.finish(frame)
        elif isinstance(frame, m.RpcResult):
            if search is not None and frame.msgid == search.msgid:
                self.let_go(s.ANSWER)
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
            pending = self.pending.get(frame.msgid)
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
        data = self._encode(command, msgid)
        async with self._send_lock:
            # a token is never traced: an ``auth`` shows a stand-in in its place
            shown = self._encode(HIDDEN, msgid) if isinstance(command, m.Auth) else data
            self._traced("send", shown)
            self.writes += 1  # from here on, some of it may have gone out
            try:
                await self.stream.send(data)
            except anyio.get_cancelled_exc_class():
                # cut off part-way: what the engine got of it cannot be known, and the next
                # write would be read as its rest
                cut = f"{self.where}: a write did not finish in time (cut off part-way)"
                self.end(EngineTimeoutError(cut))
                raise
            except STREAM_GONE as exc:
                # an engine that leaves may have said why first: the reader takes its last
                # words (and then the end of the stream) before the reason is settled
                with anyio.move_on_after(LAST_WORDS_WAIT):
                    await self.reader_done.wait()
                error = self.gone(f"it cannot be written to ({exc!r})")
                self.end(error)
                raise self.ended or error from None

    def _encode(self, command: m.Command, msgid: int | None) -> bytes:
        if self.framing == "text":
            return text.encode_command(command)
        if msgid is None:
            return mpack.encode_notify(command)
        return mpack.encode_request(msgid, command)

    def new_id(self) -> int:
        """A new msgpack request id."""
        return next(self._ids)

"""The client library (``enginesrv.client``) against scripted engines: ``AsyncEngine`` on one
end of an in-memory stream, a peer on the other that decodes what the client sends with the
protocol package's server-side decoders and answers as its script says (politely, late, never,
out of order, with garbage or not at all). Then the argument checks (nothing is sent for a bad
argument) and small subprocess engines, to show that every process the client starts is ended.

Every test runs on trio and on asyncio. The in-memory tests run on virtual time (trio's
``MockClock`` with ``autojump_threshold=0``; on asyncio, ``JumpingLoop``): time jumps whenever
every task waits, so a 0.2 s timeout costs no real time and elapsed times are exact (virtual)
figures, and a hang becomes a ``TimeoutError`` after 300 virtual seconds instead of stalling
the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import math
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgpack
import pytest
import trio.lowlevel
import trio.testing
from anyio.abc import ByteStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from enginesrv.client import (
    STOP_GRACE,
    AsyncEngine,
    ClientError,
    Clock,
    Engine,
    EngineError,
    EngineTerminatedError,
    EngineTimeoutError,
    LegalMoves,
    MoveScore,
    Score,
)
from enginesrv.client._conn import (
    MAX_EXCHANGE_BYTES,
    MAX_FRAME,
    MAX_LINE,
    MAX_LINES,
    RECEIVE_SIZE,
    Connection,
)
from enginesrv.client.types import Framing
from protocol import messages as m
from protocol import mpack, text
from protocol.errors import ProtocolError
from tests.enginesrv.test_pool import children

FRAMINGS: tuple[Framing, ...] = ("text", "msgpack")
START = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
QUICK = 0.2
"""The timeout of the calls that must fail: the engine under test never answers them."""
SLACK = 0.5
"""Virtual seconds a bounded call may take beyond its timeout (closing, a quit)."""
HELLO = m.Handshake(
    name="fake",
    author="the tests",
    version="0.0",
    protocol=1,
    games=(m.GameInfo("yoxii", ("White", "Black"), START),),
    bots=(m.BotInfo("scripted", ("yoxii",)),),
    options=(
        m.OptionSpec("Hash", "spin", "64", 1, 512),
        m.OptionSpec("Compat", "check", "false"),
    ),
    limits=(m.LimitInfo("line", 65536), m.LimitInfo("frame", 1048576)),
)
QUERIES: dict[str, m.ResponseValue] = {
    "gameover": False,
    "p1turn": True,
    "result": "none",
    "moves": ("c3", "c4"),
    "position": START,
    "turn": "p1",
    "outcome": None,
    "phase": "t",
    "clock": "none",
    "played": (),
}
STREAM_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError)


BACKENDS = ("trio", "asyncio")
"""The event loops every test runs on (the client is one code path on anyio)."""


class JumpingSelector(selectors.DefaultSelector):
    """asyncio's selector for a loop on virtual time (``JumpingLoop``): when nothing is ready
    to read or write, the loop's clock jumps to its next timer instead of sleeping, as trio's
    ``MockClock(autojump_threshold=0)`` does."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        if timeout is None:  # no timer at all: only I/O (a thread's wake-up) can come
            return super().select(None)
        self.now += timeout
        return []


class JumpingLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on virtual time: ``time()`` is the selector's jumping clock."""

    def __init__(self) -> None:
        self._jumping = JumpingSelector()
        super().__init__(self._jumping)

    def time(self) -> float:
        return self._jumping.now


def on_both_loops(
    bound: float, virtual: bool
) -> Callable[[Callable[..., Awaitable[None]]], Callable[..., None]]:
    """Run an async test on each of ``BACKENDS`` (its ``backend`` parameter), bounded by
    ``bound`` seconds; on virtual time with ``virtual`` (trio's jumping mock clock, or
    ``JumpingLoop``), so that a hang fails fast and elapsed times are exact."""

    def decorate(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
        @functools.wraps(fn)
        def run(*args: Any, backend: str, **kwargs: Any) -> None:
            async def main() -> None:
                with anyio.fail_after(bound):
                    await fn(*args, **kwargs)

            options: dict[str, Any] = {}
            if virtual:
                if backend == "trio":
                    options["clock"] = trio.testing.MockClock(autojump_threshold=0)
                else:
                    options["loop_factory"] = JumpingLoop
            anyio.run(main, backend=backend, backend_options=options)

        signature = inspect.signature(fn)
        backend = inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY, annotation=str)
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), backend]
        )
        parametrized: Callable[..., None] = pytest.mark.parametrize("backend", BACKENDS)(run)
        return parametrized

    return decorate


async def settle() -> None:
    """Wait until every other task waits for something: trio's ``wait_all_tasks_blocked``;
    on asyncio the same test by polling with zero sleeps (anyio's own sleeps 0.1 s a poll,
    which would move a virtual clock)."""
    if trio.lowlevel.in_trio_run():
        await trio.testing.wait_all_tasks_blocked()
        return
    this = asyncio.current_task()

    def running(task: asyncio.Task[Any]) -> bool:
        waiter = task._fut_waiter  # type: ignore[attr-defined]
        return task is not this and (waiter is None or waiter.done())

    while any(running(task) for task in asyncio.all_tasks()):
        await asyncio.sleep(0)


client_test = on_both_loops(300, virtual=True)
"""An in-memory test: on virtual time, a hang a failure after 300 virtual seconds."""
real_clock_test = on_both_loops(10, virtual=False)
"""A test of real processes or sockets: on the real clock, bounded by 10 s."""


# ---------------------------------------------------------------------------------------------
# The scripted peer


Handler = Callable[["Peer", m.Request], Awaitable[None]]


class Peer:
    """The engine's end of the stream: every request the client sends, decoded, goes to the
    script (``handler``) in order; the script answers with ``answer`` or raw ``write``."""

    def __init__(self, stream: ByteStream, framing: Framing) -> None:
        self.stream = stream
        self.framing = framing
        self.commands: list[m.Command] = []
        self.received = bytearray()
        self.search: m.Request | None = None
        """A ``go`` waiting for its ``stop``."""
        self.held: list[m.Request] = []
        self.queries = dict(QUERIES)
        self.client: AsyncEngine | None = None
        self.batch: list[bytes] | None = None
        """When a list: answers wait in it until ``flush`` (one write for many answers)."""
        self.count = 0

    def encode(self, reply: m.Reply, msgid: int | None = None) -> bytes:
        if self.framing == "text":
            return text.encode_reply(reply)
        if isinstance(reply, m.Info) and msgid is not None:
            reply = dataclasses.replace(reply, search=msgid)
        return mpack.encode_reply(msgid, reply)

    async def write(self, data: bytes) -> None:
        if not data:
            return
        if self.batch is not None:
            self.batch.append(data)
            return
        with contextlib.suppress(*STREAM_GONE):
            await self.stream.send(data)

    async def flush(self) -> None:
        if self.batch:
            data, self.batch[:] = b"".join(self.batch), []
            with contextlib.suppress(*STREAM_GONE):
                await self.stream.send(data)

    async def answer(self, request: m.Request, *replies: m.Reply) -> None:
        await self.write(b"".join(self.encode(r, request.msgid) for r in replies))

    async def close(self) -> None:
        with contextlib.suppress(*STREAM_GONE):
            await self.stream.aclose()

    def got(self, kind: type[Any]) -> list[Any]:
        """The commands of one class received so far."""
        return [c for c in self.commands if isinstance(c, kind)]

    async def serve(self, handler: Handler, greeting: bytes = b"") -> None:
        """Decode and hand on every request until the client closes (a bad one is answered
        with its error, as a server would)."""
        decoder: text.TextDecoder | mpack.MsgpackDecoder
        if self.framing == "text":
            decoder = text.TextDecoder("server", max_line=1 << 24)
        else:
            decoder = mpack.MsgpackDecoder("server", max_frame=1 << 24)
        await self.write(greeting)
        with contextlib.suppress(anyio.EndOfStream, *STREAM_GONE):
            while True:
                data = await self.stream.receive(1 << 16)
                self.received += data
                decoder.feed(bytes(data))
                while True:
                    try:
                        request = decoder.next_message()
                    except ProtocolError as exc:
                        if exc.fatal:
                            return
                        error = m.ErrorReply(exc.code, exc.error.name, exc.message)
                        await self.answer(m.Request(m.IsReady(), exc.msgid), error)
                        continue
                    if request is None:
                        break
                    assert isinstance(request, m.Request)
                    self.commands.append(request.command)
                    await handler(self, request)
                await self.flush()


def info(depth: int, cp: int, nodes: int, *pv: str, bound: str | None = None) -> m.Info:
    return m.Info(depth=depth, score=m.Score("cp", cp, bound), nodes=nodes, pv=pv)  # type: ignore[arg-type]


async def polite(peer: Peer, request: m.Request) -> None:
    """A well-behaved engine: everything answered at once, ``go infinite`` answered by its
    ``stop``, a depth search by two ``info`` and ``bestmove c3``."""
    command = request.command
    match command:
        case m.Ugi():
            await peer.answer(request, HELLO)
        case m.IsReady():
            await peer.answer(request, m.ReadyOk())
        case m.Ping(token):
            await peer.answer(request, m.Pong(token))
        case m.Query(what):
            await peer.answer(request, m.Response(peer.queries[what]))
        case m.Play(move):
            await peer.answer(request, m.Response(f"{START} {move}"))
        case m.Undo():
            await peer.answer(request, m.Response(START))
        case m.Go(infinite=True):
            peer.search = request
        case m.Go():
            done = m.BestMove("c3", depth=2, nodes=30, stopped=False)
            await peer.answer(request, info(1, 10, 8, "c3"), info(2, 12, 30, "c3", "4@c4"), done)
        case m.Stop():
            if peer.search is not None:
                go, peer.search = peer.search, None
                await peer.answer(go, info(3, 7, 90, "c4"), m.BestMove("c4", stopped=True))
            if request.msgid is not None:
                await peer.answer(request, m.Ack())
        case m.Quit():
            await peer.close()
        case _:
            await peer.answer(request, m.Ack())


async def mute(peer: Peer, request: m.Request) -> None:
    """Reads everything and answers nothing, not even the handshake."""


async def deaf(peer: Peer, request: m.Request) -> None:
    """Answers the first handshake, then nothing at all (but keeps reading)."""
    if isinstance(request.command, m.Ugi) and not peer.got(m.Ugi)[1:]:
        await polite(peer, request)


def unwrapped(fn: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
    """An async context manager whose lone error comes out bare, not in an ExceptionGroup (the
    peer's task group would wrap it)."""
    manager = contextlib.asynccontextmanager(fn)

    @contextlib.asynccontextmanager
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        try:
            async with manager(*args, **kwargs) as value:
                yield value
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    return wrapper


class MemoryStream(ByteStream):
    """One end of an in-memory byte stream (``memory_stream_pair``): what is sent waits,
    unbounded, until the other end reads it; closing an end is the other's end of stream."""

    def __init__(
        self, sending: MemoryObjectSendStream[bytes], receiving: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self.sending = sending
        self.receiving = receiving
        self.unread = b""

    async def send(self, item: bytes) -> None:
        if item:
            await self.sending.send(bytes(item))
        else:
            await anyio.lowlevel.checkpoint()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self.unread:
            self.unread = await self.receiving.receive()
        data, self.unread = self.unread[:max_bytes], self.unread[max_bytes:]
        return data

    async def send_eof(self) -> None:
        self.sending.close()
        await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self.sending.close()
        self.receiving.close()
        await anyio.lowlevel.checkpoint()


def memory_stream_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected ends of an in-memory byte stream, on either event loop."""
    one_sends, two_receives = anyio.create_memory_object_stream[bytes](math.inf)
    two_sends, one_receives = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryStream(one_sends, one_receives), MemoryStream(two_sends, two_receives)


@unwrapped
async def fake_engine(
    handler: Handler = polite,
    framing: Framing = "text",
    *,
    handshake: bool = True,
    timeout: float = 1.0,
    greeting: bytes = b"",
    pair: Callable[[], tuple[ByteStream, ByteStream]] = memory_stream_pair,
    max_exchange_bytes: int = MAX_EXCHANGE_BYTES,
) -> AsyncIterator[tuple[AsyncEngine, Peer]]:
    """An ``AsyncEngine`` on one end of ``pair()``, ``handler`` on the other (built the way
    ``AsyncEngine.connect_in`` builds one)."""
    client_end, peer_end = pair()
    peer = Peer(peer_end, framing)
    async with anyio.create_task_group() as group:
        group.start_soon(peer.serve, handler, greeting)
        connection = Connection(client_end, framing, "fake", max_exchange_bytes=max_exchange_bytes)
        engine = AsyncEngine(connection)
        peer.client = engine
        try:
            await engine._start(group, handshake, timeout)
            yield engine, peer
        finally:
            await engine.aclose()
            group.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await peer_end.aclose()


def elapsed_since(start: float) -> float:
    return anyio.current_time() - start


# ---------------------------------------------------------------------------------------------
# A polite engine, in both framings (the baseline the hostile ones are measured against)


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_a_polite_engine_answers_every_call(framing: Framing) -> None:
    """Every method of AsyncEngine against a well-behaved scripted engine: the handshake's
    figures, typed query values, positions from play/undo, and both kinds of search."""
    async with fake_engine(polite, framing) as (engine, peer):
        assert engine.info.name == "fake"
        assert engine.info.protocol == 1
        assert engine.info.game("yoxii") == HELLO.games[0]
        assert engine.info.option("HASH") == HELLO.options[0]
        assert engine.info.limits == {"line": 65536, "frame": 1048576}
        assert engine.framing == framing
        assert engine.where == "fake"
        assert engine.process is None
        await engine.set_option("Hash", 16)
        await engine.set_option("Compat", False)
        await engine.new_game("yoxii")
        await engine.position(START, ["c3", "4@c4"])
        await engine.isready()
        await engine.ping(42)
        assert await engine.query("gameover") is False
        assert await engine.query("p1turn") is True
        assert await engine.query("outcome") is None
        assert await engine.query("turn") == "p1"
        assert await engine.legal_moves() == ("c3", "c4")
        assert await engine.play("c3") == f"{START} c3"
        assert await engine.undo() == START
        notes: list[m.Info] = []
        result = await engine.go(depth=2, on_info=notes.append)
        assert (result.move, result.depth, result.nodes) == ("c3", 2, 30)
        assert result.pv == ("c3", "4@c4")
        assert [n.depth for n in notes] == [1, 2]
        handle = await engine.start_search(infinite=True)
        assert not handle.done
        await engine.ping(7)
        await handle.stop()
        result = await handle.result(1)
        assert result.move == "c4"
        assert result.stopped is (True if framing == "msgpack" else None)
        assert engine.alive
    sent = peer.got(m.SetOption)
    assert sent == [m.SetOption("Hash", "16"), m.SetOption("Compat", "false")]
    assert peer.got(m.Position) == [m.Position(START, ("c3", "4@c4"))]


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_engine_that_answers_everything_in_one_write(framing: Framing) -> None:
    """The engine holds its answers back and sends them in one write (text: at each barrier,
    so that a search's info lines, its bestmove and the barrier's pong come together): every
    answer still reaches its call, and a search that ended before start_search returned
    gives its result."""

    async def batched(peer: Peer, request: m.Request) -> None:
        if peer.batch is None:
            peer.batch = []
        await polite(peer, request)
        if framing == "text" and isinstance(
            request.command, m.Ugi | m.Ping | m.IsReady | m.Stop | m.Quit
        ):
            await peer.flush()

    async with fake_engine(batched, framing) as (engine, peer):
        await engine.set_option("Hash", 16)
        await engine.position(None, ["c3"])
        assert await engine.query("turn") == "p1"
        assert await engine.play("c4") == f"{START} c4"
        handle = await engine.start_search(depth=2)
        result = await handle.result(1)
        assert (result.move, result.nodes, result.depth) == ("c3", 30, 2)
        handle = await engine.start_search(infinite=True)
        await engine.stop()
        assert (await handle.result(1)).move == "c4"
        await engine.isready()
        assert peer.batch == []


@client_test
async def test_text_answers_of_a_search_interleave_with_another_request() -> None:
    """A search's info lines and bestmove that come in the middle of another request's answer
    go to the search, and the request still gets its own answer."""

    async def interleaving(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Query) and peer.search is not None:
            peer.search = None
            await peer.write(b"info depth 4 nodes 500 pv e5\nresponse p1\nbestmove e5\n")
            return
        await polite(peer, request)

    async with fake_engine(interleaving, "text") as (engine, _):
        handle = await engine.start_search(infinite=True)
        assert await engine.query("turn") == "p1"
        result = await handle.result(1)
        assert (result.move, result.depth, result.nodes) == ("e5", 4, 500)


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_calls_from_many_tasks_are_answered_each_with_its_own_answer(
    framing: Framing,
) -> None:
    """Twenty tasks asking at once (text: exchanges take turns; msgpack: ids) each get the
    answer to their own question."""
    got: dict[int, object] = {}

    async def ask(i: int, engine: AsyncEngine) -> None:
        got[i] = await engine.query("position" if i % 2 else "turn")

    async with fake_engine(polite, framing) as (engine, _), anyio.create_task_group() as group:
        for i in range(20):
            group.start_soon(ask, i, engine)
    assert got == {i: START if i % 2 else "p1" for i in range(20)}


# ---------------------------------------------------------------------------------------------
# An engine that never answers


CALLS: dict[str, Callable[[AsyncEngine], Awaitable[object]]] = {
    "handshake": lambda e: e.handshake(QUICK),
    "isready": lambda e: e.isready(QUICK),
    "ping": lambda e: e.ping(5, QUICK),
    "set_option": lambda e: e.set_option("Hash", 16, QUICK),
    "new_game": lambda e: e.new_game("yoxii", QUICK),
    "position": lambda e: e.position(None, ["c3"], QUICK),
    "query": lambda e: e.query("turn", QUICK),
    "legal_moves": lambda e: e.legal_moves(QUICK),
    "play": lambda e: e.play("c3", QUICK),
    "undo": lambda e: e.undo(1, QUICK),
}


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("call", sorted(CALLS))
@client_test
async def test_a_silent_engine_times_out_every_call(framing: Framing, call: str) -> None:
    """Each call to an engine that reads but never answers raises EngineTimeoutError at its
    timeout. Text then gives the connection up (a late answer would be taken for the next
    one); msgpack keeps it, since a late answer is known by its id."""
    async with fake_engine(deaf, framing) as (engine, _):
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError, match=r"within 0\.2 s"):
            await CALLS[call](engine)
        assert QUICK <= elapsed_since(start) < QUICK + SLACK
        assert engine.alive is (framing == "msgpack")


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_silent_engine_handshake_fails_within_its_timeout(framing: Framing) -> None:
    """An engine that never answers ugi: the start raises EngineTimeoutError at its timeout."""
    start = anyio.current_time()
    with pytest.raises(EngineTimeoutError, match="no answer to ugi"):
        async with fake_engine(mute, framing, timeout=QUICK):
            pass
    assert elapsed_since(start) < QUICK + SLACK


@client_test
async def test_after_a_text_timeout_every_call_fails_at_once() -> None:
    """Once a text call has timed out the connection is over: later calls raise at once
    (no new wait) and nothing more is sent."""
    async with fake_engine(deaf, "text") as (engine, peer):
        with pytest.raises(EngineTimeoutError):
            await engine.isready(QUICK)
        sent = len(peer.commands)
        start = anyio.current_time()
        for call in CALLS.values():
            with pytest.raises(ClientError):
                await call(engine)
        with pytest.raises(ClientError):
            await engine.start_search(depth=1)
        assert elapsed_since(start) == 0
        assert len(peer.commands) == sent


@client_test
async def test_a_silent_text_engine_times_out_the_start_of_a_search() -> None:
    """Text: start_search waits for the barrier behind go; no answer is EngineTimeoutError at
    its timeout."""
    async with fake_engine(deaf, "text") as (engine, peer):
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError, match="no answer to go"):
            await engine.start_search(depth=1, timeout=QUICK)
        assert elapsed_since(start) < QUICK + SLACK
        assert peer.got(m.Go) == [m.Go(depth=1)]


@client_test
async def test_a_silent_msgpack_engine_times_out_the_result_of_a_search() -> None:
    """msgpack: start_search returns once go is sent; the handle's result times out, and the
    search (and the connection) go on."""
    async with fake_engine(deaf, "msgpack") as (engine, _):
        handle = await engine.start_search(depth=1, timeout=QUICK)
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError, match=r"no best move within 0\.2 s"):
            await handle.result(QUICK)
        assert QUICK <= elapsed_since(start) < QUICK + SLACK
        assert not handle.done
        assert engine.alive


@pytest.mark.parametrize(
    "framing",
    [
        "text",
        "msgpack",
    ],
)
@client_test
async def test_go_against_a_silent_engine_is_bounded_by_its_timeout(framing: Framing) -> None:
    """go(timeout=T) against an engine that never answers raises EngineTimeoutError after at
    most T, the stop's grace, and a moment to close; the engine is closed."""
    async with fake_engine(deaf, framing) as (engine, _):
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError):
            await engine.go(depth=1, timeout=QUICK)
        assert elapsed_since(start) < QUICK + STOP_GRACE + SLACK
        assert not engine.alive


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_quit_and_aclose_of_a_silent_engine_are_bounded(framing: Framing) -> None:
    """quit(timeout) of an engine that never leaves returns after its timeout and a bounded
    close; a second quit and aclose return at once."""
    async with fake_engine(deaf, framing) as (engine, peer):
        start = anyio.current_time()
        await engine.quit(QUICK)
        assert elapsed_since(start) < QUICK + SLACK + 1.0
        assert not engine.alive
        start = anyio.current_time()
        await engine.quit(QUICK)
        await engine.aclose()
        assert elapsed_since(start) == 0
        assert peer.got(m.Quit)


@pytest.mark.parametrize("framing", FRAMINGS)
@real_clock_test
async def test_a_silent_engine_does_not_hang_on_the_real_clock(framing: Framing) -> None:
    """The same timeouts on the real clock: a 0.2 s call against a silent engine returns (with
    EngineTimeoutError) well within 5 s of wall time."""
    async with fake_engine(deaf, framing) as (engine, _):
        start = time.monotonic()
        with pytest.raises(EngineTimeoutError):
            await engine.query("position", QUICK)
        assert time.monotonic() - start < 5


class Clogged(ByteStream):
    """An engine's input that fills up: the first ``accept`` writes go through, every later
    one waits for ever; reads wait for ever too (until the stream is closed)."""

    def __init__(self, accept: int = 0) -> None:
        self.accept = accept
        self.written: list[bytes] = []
        self.closed = anyio.Event()

    async def send(self, item: bytes) -> None:
        if self.closed.is_set():
            raise anyio.ClosedResourceError
        if len(self.written) >= self.accept:
            await self.closed.wait()
            raise anyio.ClosedResourceError
        self.written.append(bytes(item))
        await anyio.lowlevel.checkpoint()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await self.closed.wait()
        raise anyio.ClosedResourceError

    async def send_eof(self) -> None:
        await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self.closed.set()
        await anyio.lowlevel.checkpoint()


NEVER_READ: dict[str, Callable[[AsyncEngine], Awaitable[object]]] = {
    "isready": lambda e: e.isready(QUICK),
    "query": lambda e: e.query("turn", QUICK),
    "start_search": lambda e: e.start_search(depth=1, timeout=QUICK),
}


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("call", sorted(NEVER_READ))
@client_test
async def test_an_engine_that_never_reads_times_out_the_write(framing: Framing, call: str) -> None:
    """An engine that does not read its input (every write waits for ever): the call still
    raises EngineTimeoutError at its timeout, and closing the engine afterwards is bounded."""
    async with anyio.create_task_group() as group:
        engine = AsyncEngine(Connection(Clogged(), framing, "fake"))
        await engine._start(group, False, QUICK)
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError):
            await NEVER_READ[call](engine)
        assert elapsed_since(start) < QUICK + SLACK
        start = anyio.current_time()
        await engine.aclose()
        assert elapsed_since(start) < SLACK + 1.0
        group.cancel_scope.cancel()


@client_test
async def test_go_is_bounded_when_the_engine_stops_reading_after_go() -> None:
    """An engine that reads go, then nothing more (its input fills up): go(timeout=T) still
    ends within T, the stop's grace and a moment to close."""
    stream = Clogged(accept=1)  # the go; then it reads no more
    async with anyio.create_task_group() as group:
        engine = AsyncEngine(Connection(stream, "msgpack", "fake"))
        await engine._start(group, False, QUICK)
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError):
            await engine.go(depth=1, timeout=QUICK)
        assert elapsed_since(start) < QUICK + STOP_GRACE + SLACK
        assert len(stream.written) == 1
        await engine.aclose()
        group.cancel_scope.cancel()


# ---------------------------------------------------------------------------------------------
# Late, out-of-order and interleaved answers


@client_test
async def test_msgpack_answers_out_of_order_reach_their_requests() -> None:
    """msgpack responses may come in any order: two queries answered last-first each get their
    own value."""

    async def backwards(peer: Peer, request: m.Request) -> None:
        if not isinstance(request.command, m.Query):
            await polite(peer, request)
            return
        peer.held.append(request)
        if len(peer.held) == 2:
            for held in reversed(peer.held):
                what = held.command.what  # type: ignore[union-attr]
                await peer.answer(held, m.Response(QUERIES[what]))

    got: dict[str, object] = {}

    async def ask(what: str, engine: AsyncEngine) -> None:
        got[what] = await engine.query(what)

    async with fake_engine(backwards, "msgpack") as (engine, peer):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, "turn", engine)
            await settle()
            group.start_soon(ask, "position", engine)
        assert got == {"turn": "p1", "position": START}
        assert [r.msgid for r in peer.held] == [2, 3]


@client_test
async def test_msgpack_readyok_overtakes_a_running_go() -> None:
    """msgpack: requests sent while a search runs are answered while it runs."""
    async with fake_engine(polite, "msgpack") as (engine, _):
        handle = await engine.start_search(infinite=True)
        await engine.isready()
        await engine.ping(3)
        assert await engine.query("position") == START
        assert not handle.done
        await handle.stop()
        assert (await handle.result(1)).move == "c4"


@client_test
async def test_msgpack_late_answer_after_a_timeout_is_dropped() -> None:
    """msgpack: an answer that comes after its call timed out is dropped by its id; the
    engine stays usable and later calls get their own answers."""

    async def slow_first(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Query):
            peer.count += 1
            if peer.count == 1:
                peer.held.append(request)
                return
            await peer.answer(request, m.Response(f"fresh {peer.count}"))
            if peer.held:
                await peer.answer(peer.held.pop(), m.Response("late"))
            return
        await polite(peer, request)

    async with fake_engine(slow_first, "msgpack") as (engine, _):
        with pytest.raises(EngineTimeoutError):
            await engine.query("position", QUICK)
        assert engine.alive
        assert await engine.query("position") == "fresh 2"
        assert await engine.query("position") == "fresh 3"
        await engine.isready()
        assert engine.alive


@client_test
async def test_text_call_cancelled_by_the_caller_does_not_shift_answers() -> None:
    """Text: a query cancelled by the caller while its answer is on the way must not make the
    next query return the cancelled one's answer."""

    async def slow(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Query):
            peer.count += 1
            await anyio.sleep(0.5)
            await peer.answer(request, m.Response("first" if peer.count == 1 else "second"))
            return
        await polite(peer, request)

    async with fake_engine(slow, "text") as (engine, _):
        with anyio.move_on_after(0.1):
            await engine.query("position")
        try:
            value = await engine.query("position", timeout=5)
        except ClientError:
            return  # refusing is fine; a wrong answer is not
        assert value == "second"


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_a_cancelled_start_search_leaves_no_search_behind(framing: Framing) -> None:
    """start_search cancelled before go is sent: the session has no search, so position and
    a new search work."""
    async with fake_engine(polite, framing) as (engine, peer):
        with anyio.CancelScope() as scope:
            scope.cancel()
            await engine.start_search(depth=1)
        assert not peer.got(m.Go)
        await engine.position(None, ["c3"])
        assert (await engine.go(depth=1)).move == "c3"


@client_test
async def test_the_bestmove_none_of_a_refused_go_is_not_taken_for_the_next_go() -> None:
    """An enginesrv server ends a refused ``go`` (here 101, bad arguments) with ``bestmove
    none``. When that line comes in a later read than the error, a ``go`` sent at once
    without a barrier must not get it for its own answer: the client waits for it first."""
    refused: list[float] = []

    async def refuses_first(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go) and not refused:
            refused.append(anyio.current_time())
            await peer.answer(request, m.ErrorReply(101, "bad-arguments", "go: depth 0"))
            await anyio.sleep(0.5)
            await peer.answer(request, m.BestMove("none"))
            return
        await polite(peer, request)

    async with fake_engine(refuses_first) as (engine, peer):
        first = await engine.start_search(depth=1, confirm=False)
        with pytest.raises(EngineError) as caught:
            await first.result()
        assert caught.value.code == 101
        second = await engine.start_search(depth=1, confirm=False)
        result = await second.result()
        assert result.move == "c3"  # the second go's own answer, not the first's none
        assert len(peer.got(m.Go)) == 2
        # and it was sent only once the first go's answer had come
        assert elapsed_since(refused[0]) >= 0.5


# ---------------------------------------------------------------------------------------------
# Garbage, floods and disconnections


@real_clock_test
async def test_a_text_line_of_2_mib_without_a_newline_ends_the_connection() -> None:
    """An engine that answers isready with 2 MiB and no line end: the client gives up once the
    line is over its limit (1 MiB), without reading on, and the call raises
    EngineTerminatedError."""
    sent = 0

    async def flood(peer: Peer, request: m.Request) -> None:
        nonlocal sent
        if not isinstance(request.command, m.IsReady):
            await polite(peer, request)
            return
        chunk = b"x" * RECEIVE_SIZE
        while sent * len(chunk) < 2 * 1024 * 1024:
            assert peer.client is not None
            if not peer.client.alive:
                return
            await peer.write(chunk)
            sent += 1
            await settle()

    async with fake_engine(flood, "text") as (engine, _):
        with pytest.raises(EngineTerminatedError, match="longer than"):
            await engine.isready(5)
        assert not engine.alive
        assert sent <= MAX_LINE // RECEIVE_SIZE + 2
        with pytest.raises(EngineTerminatedError):
            await engine.query("turn")


@real_clock_test
async def test_a_msgpack_frame_over_the_limit_ends_the_connection() -> None:
    """An engine that starts a frame announcing an 8 MiB string and sends its bytes: the client
    gives up before buffering more than its frame limit, and the call raises
    EngineTerminatedError."""
    sent = 0

    async def flood(peer: Peer, request: m.Request) -> None:
        nonlocal sent
        if not isinstance(request.command, m.IsReady):
            await polite(peer, request)
            return
        size = 8 * 1024 * 1024
        head = bytes([0x94, 0x01, request.msgid or 0, 0xC0, 0x81, 0xA5]) + b"value"
        await peer.write(head + b"\xdb" + size.to_bytes(4, "big"))
        chunk = b"x" * RECEIVE_SIZE
        while sent * len(chunk) < size:
            assert peer.client is not None
            if not peer.client.alive:
                return
            await peer.write(chunk)
            sent += 1
            await settle()

    async with fake_engine(flood, "msgpack") as (engine, _):
        with pytest.raises(EngineTerminatedError):
            await engine.isready(5)
        assert not engine.alive
        assert sent <= MAX_FRAME // RECEIVE_SIZE + 2


@real_clock_test
async def test_more_lines_than_one_answer_may_hold_end_the_connection() -> None:
    """An engine that answers one request with more than MAX_LINES lines before its barrier:
    the connection is ended instead of gathering them all."""

    async def chatty(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Ping | m.IsReady):
            await peer.write(b"id x y\n" * (MAX_LINES + 10))
        await polite(peer, request)

    async with fake_engine(chatty, "text") as (engine, _):
        with pytest.raises(EngineTerminatedError, match="lines answered one request"):
            await engine.isready(5)
        assert not engine.alive


SMALL_CAP = 64 * 1024
"""A cap on one exchange's bytes small enough that a test crosses it with a few lines."""
PAD = b"x" * 4000


def hoarder(lines: int, pad: bytes = PAD) -> Handler:
    """A text engine that answers ``ugi`` with ``lines`` option lines of ``pad`` (each well
    under the line cap), all in one write, then ``ugiok``; the rest politely."""

    async def handle(peer: Peer, request: m.Request) -> None:
        if not isinstance(request.command, m.Ugi):
            await polite(peer, request)
            return
        options = (b"option name Pad%d type string default %s\n" % (i, pad) for i in range(lines))
        await peer.write(b"".join(options) + b"id protocol 1\nugiok\n")

    return handle


@client_test
async def test_option_lines_over_the_byte_cap_before_ugiok_end_the_handshake() -> None:
    """An engine that sends more bytes of option lines before ``ugiok`` than one exchange may
    gather: the handshake fails naming the engine and the cap, the connection is ended, and
    the client kept no more than the cap of them (the line that would pass it is dropped)."""
    lines = 2 * SMALL_CAP // len(PAD)
    async with fake_engine(
        hoarder(lines), "text", handshake=False, max_exchange_bytes=SMALL_CAP
    ) as (engine, _):
        with pytest.raises(EngineTerminatedError) as caught:
            await engine.handshake(5)
        assert str(caught.value) == f"fake: it sent more than {SMALL_CAP} bytes before ugiok"
        assert not engine.alive
        kept = engine._conn.kept
        assert SMALL_CAP - len(PAD) - 64 < kept <= SMALL_CAP
        with pytest.raises(EngineTerminatedError, match="more than"):
            await engine.isready(5)


@client_test
async def test_option_lines_over_the_default_byte_cap_end_the_handshake() -> None:
    """The default cap (8 MiB): nine option lines of nearly 1 MiB, each under the line cap,
    end the handshake before ``ugiok``."""
    pad = b"x" * (MAX_LINE - 100)
    async with fake_engine(hoarder(9, pad), "text", handshake=False) as (engine, _):
        with pytest.raises(
            EngineTerminatedError, match=r"^fake: it sent more than 8 MiB before ugiok$"
        ):
            await engine.handshake(5)
        assert engine._conn.kept <= MAX_EXCHANGE_BYTES


@client_test
async def test_the_byte_cap_holds_per_exchange_and_names_the_barrier() -> None:
    """Under the cap, the handshake is accepted, and each later exchange has the whole cap
    again; an answer over it before the barrier's ``pong`` ends the connection."""
    lines = SMALL_CAP // len(PAD) - 2
    flood = b"".join(b"id x %s\n" % PAD for _ in range(lines))

    async def chatty(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Query):
            await peer.write(flood * (2 if request.command.what == "turn" else 1))
        await hoarder(lines)(peer, request)

    async with fake_engine(chatty, "text", max_exchange_bytes=SMALL_CAP) as (engine, _):
        assert len(engine.info.options) == lines
        for _ in range(3):
            assert await engine.query("p1turn") is True
        with pytest.raises(
            EngineTerminatedError, match=r"^fake: it sent more than \d+ bytes before pong \d+$"
        ):
            await engine.query("turn")
        assert engine._conn.kept <= SMALL_CAP


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_info_lines_of_a_search_are_merged_not_gathered(framing: Framing) -> None:
    """Progress reports go to the search, which keeps only the latest figures: many more bytes
    of ``info`` than one exchange may gather, during a search and during an ``isready`` that
    runs beside it, neither end the connection nor are kept."""
    pv = tuple(f"c{i % 7 + 1}" for i in range(1000))  # some 3 KB a line
    reports = 4 * SMALL_CAP // 3000

    async def verbose(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go):
            peer.search = request
            await peer.answer(request, *(info(d, d, d, *pv) for d in range(1, reports)))
        elif isinstance(request.command, m.IsReady) and peer.search is not None:
            await peer.answer(
                peer.search, *(info(d, d, d, *pv) for d in range(reports, 2 * reports))
            )
            await polite(peer, request)
        else:
            await polite(peer, request)

    async with fake_engine(verbose, framing, max_exchange_bytes=SMALL_CAP) as (engine, _):
        handle = await engine.start_search(infinite=True, timeout=5)
        await engine.isready(5)
        await handle.stop()
        result = await handle.result(5)
        assert result.move == "c4"
        assert handle.last_info.depth == 3  # the stop's own report, the last
        assert engine.alive
        assert engine._conn.kept <= SMALL_CAP


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_invalid_utf8_ends_the_connection(framing: Framing) -> None:
    """An answer that is not valid UTF-8 (a text line, a msgpack string) ends the connection
    with EngineTerminatedError; later calls raise it at once."""

    async def garbled(peer: Peer, request: m.Request) -> None:
        if not isinstance(request.command, m.Query):
            await polite(peer, request)
        elif framing == "text":
            await peer.write(b"response \xff\xfe\n")
        else:
            frame = msgpack.packb([1, request.msgid, None, {"value": "ZZ"}])
            await peer.write(frame.replace(b"\xa2ZZ", b"\xa2\xff\xfe"))

    async with fake_engine(garbled, framing) as (engine, _):
        with pytest.raises(EngineTerminatedError, match=r"(?i)utf-8"):
            await engine.query("position")
        assert not engine.alive
        with pytest.raises(EngineTerminatedError):
            await engine.isready()


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_engine_that_disconnects_mid_search(framing: Framing) -> None:
    """The engine starts a search, reports once, then the connection closes: the handle's
    result raises EngineTerminatedError, and on_info had the report."""

    async def vanish(peer: Peer, request: m.Request) -> None:
        command = request.command
        if isinstance(command, m.Go):
            peer.search = request
            await peer.answer(request, info(1, 5, 10, "c3"))
            if framing == "msgpack":
                await peer.close()
        elif isinstance(command, m.Ping) and peer.search is not None:
            await polite(peer, request)  # the barrier behind go: start_search returns
            await peer.close()
        else:
            await polite(peer, request)

    notes: list[m.Info] = []
    async with fake_engine(vanish, framing) as (engine, _):
        handle = await engine.start_search(depth=9, on_info=notes.append)
        with pytest.raises(EngineTerminatedError, match="closed"):
            await handle.result(5)
        assert handle.done
        assert not engine.alive
        assert [n.nodes for n in notes] == [10]
        with pytest.raises(EngineTerminatedError):
            await engine.position()


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_unsolicited_fatal_error_is_named_when_the_engine_leaves(
    framing: Framing,
) -> None:
    """An engine that sends error 302 idle-timeout on its own and closes: the next call's
    EngineTerminatedError quotes that last word."""

    async def timing_out(peer: Peer, request: m.Request) -> None:
        await polite(peer, request)
        if isinstance(request.command, m.Ugi):
            await anyio.sleep(1)
            await peer.write(peer.encode(m.ErrorReply(302, "idle-timeout", "idle for 1 s")))
            await peer.close()

    async with fake_engine(timing_out, framing) as (engine, _):
        await anyio.sleep(2)
        with pytest.raises(EngineTerminatedError, match="error 302 idle-timeout"):
            await engine.isready()


@pytest.mark.parametrize(
    "framing",
    [
        "text",
        "msgpack",
    ],
)
@client_test
async def test_a_fatal_error_during_a_request_is_named(framing: Framing) -> None:
    """An engine that answers a request with error 304 shutting-down and closes: the call's
    EngineTerminatedError says so."""

    async def shutting_down(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Query):
            await peer.write(peer.encode(m.ErrorReply(304, "shutting-down", "bye")))
            await peer.close()
            return
        await polite(peer, request)

    async with fake_engine(shutting_down, framing) as (engine, _):
        with pytest.raises(EngineTerminatedError, match="304"):
            await engine.query("turn")


@client_test
async def test_a_msgpack_engine_that_sends_a_request_is_dropped() -> None:
    """An engine that sends a request, as a client would, is not speaking to a client: the
    connection ends."""

    async def confused(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.IsReady):
            await peer.write(mpack.encode_request(9, m.IsReady()))
            return
        await polite(peer, request)

    async with fake_engine(confused, "msgpack") as (engine, _):
        with pytest.raises(EngineTerminatedError, match=r"not a response|as a client would"):
            await engine.isready()


@client_test
async def test_a_malformed_msgpack_handshake_is_a_client_error() -> None:
    """A msgpack ugi answered with a result that is not a map: ClientError from the start."""

    async def odd(peer: Peer, request: m.Request) -> None:
        await peer.write(msgpack.packb([1, request.msgid, None, "hello"]))

    with pytest.raises(ClientError, match="an answer to ugi"):
        async with fake_engine(odd, "msgpack"):
            pass


# ---------------------------------------------------------------------------------------------
# Plain UGI engines


UGI_HELLO = (
    b"id name Plain\r\n"
    b"id author Someone Else\n"
    b"option name Hash type spin default 16 min 1 max 1024\n"
    b"option name UCI_Variant type combo default yoxii var yoxii\n"
    b"ugiok\n"
)


def plain_ugi(chatter: bytes = b"", delay: float = 0) -> Handler:
    """A plain UGI engine: no ``id protocol``; ``ping`` is unknown to it (ignored, as UCI
    engines ignore unknown input); every answer after ``delay`` seconds, each in its own
    write."""

    async def handle(peer: Peer, request: m.Request) -> None:
        if delay:
            await anyio.sleep(delay)
        match request.command:
            case m.Ugi():
                await peer.write(chatter + UGI_HELLO)
            case m.Ping():
                pass
            case m.Query(what):
                await peer.answer(request, m.Response(peer.queries[what]))
            case m.Go():
                await peer.write(b"info depth 1 score cp 3 nodes 9 pv c3\nbestmove c3\n")
            case _:
                await polite(peer, request)

    return handle


@client_test
async def test_plain_ugi_chatter_before_ugiok_is_skipped() -> None:
    """Lines a plain UGI engine prints that are no protocol (a banner, its own info strings,
    malformed keyword lines, blank lines, CRLF ends) are skipped; the handshake still reads
    the id and option lines."""
    banner = b"Fairy-Stockfish 14 by Fabian Fichter et al.\n"
    chatter = (
        b"info string variant yoxii loaded\n"
        b"hello there\r\n"
        b"\n"
        b"   \t \n"
        b"id\n"
        b"option name Broken type nonsense\n"
        b"bestmove\n"
        b"error not-a-number oops\n"
        b"copyprotection ok\n"
    )
    async with fake_engine(plain_ugi(chatter), "text", greeting=banner) as (engine, _):
        assert engine.info.name == "Plain"
        assert engine.info.author == "Someone Else"
        assert engine.info.protocol == 0
        assert [o.name for o in engine.info.options] == ["Hash", "UCI_Variant"]
        hash_option = engine.info.option("hash")
        assert hash_option is not None
        assert (hash_option.min, hash_option.max, hash_option.default) == (1, 1024, "16")
        assert await engine.query("p1turn") is True


@client_test
async def test_plain_ugi_engine_gets_isready_as_barrier_not_ping() -> None:
    """Without ``id protocol`` the engine is taken for plain UGI: every exchange ends with
    isready (which it knows), never with ping (which it would ignore)."""
    async with fake_engine(plain_ugi(), "text") as (engine, peer):
        assert engine.info.protocol == 0
        await engine.position(None, ["c3"])
        assert await engine.query("p1turn") is True
        assert await engine.legal_moves() == ("c3", "c4")
        result = await engine.go(depth=1)
        assert (result.move, result.nodes, result.score) == ("c3", 9, Score("cp", 3))
        await engine.set_option("Hash", 32)
        assert not peer.got(m.Ping)
        assert len(peer.got(m.IsReady)) >= 5


@client_test
async def test_plain_ugi_isready_then_query() -> None:
    """isready, then a query, to a plain UGI engine that answers each line a moment after
    reading it (in its own write): the query gets its answer."""
    async with fake_engine(plain_ugi(delay=0.01), "text") as (engine, _):
        await engine.isready()
        assert await engine.query("p1turn") is True


@pytest.mark.parametrize("answer", [b"bestmove\n", b"bestmove  \t\r\n"], ids=["bare", "blank"])
@client_test
async def test_text_bestmove_without_a_move_fails_the_search_only(answer: bytes) -> None:
    """A ``bestmove`` line with no move: the search ends with a ClientError (the answer
    cannot be read; the engine did not go away), and the session stays usable."""

    async def moveless(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go) and peer.count == 0:
            peer.count += 1
            await peer.write(b"info depth 1 nodes 5\n" + answer)
            return
        await polite(peer, request)

    async with fake_engine(moveless, "text") as (engine, _):
        handle = await engine.start_search(depth=1)
        with pytest.raises(ClientError, match="bestmove") as caught:
            await handle.result(1)
        assert not isinstance(caught.value, EngineTerminatedError | EngineTimeoutError)
        assert engine.alive
        await engine.isready()
        assert (await engine.go(depth=2)).move == "c3"


@pytest.mark.parametrize(
    "result", [{}, {"move": None}, {"move": 7}], ids=["no-move", "nil", "not-text"]
)
@client_test
async def test_msgpack_go_result_without_a_move(result: dict[str, object]) -> None:
    """A msgpack go result without a move (none, nil, or not a string): move None, the
    figures kept, and the session stays usable."""

    async def moveless(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go) and peer.count == 0:
            peer.count += 1
            await peer.answer(request, info(1, 5, 10, "c3"))
            await peer.write(msgpack.packb([1, request.msgid, None, result]))
            return
        await polite(peer, request)

    async with fake_engine(moveless, "msgpack") as (engine, _):
        first = await engine.go(depth=1)
        assert (first.move, first.nodes) == (None, 10)
        assert engine.alive
        assert (await engine.go(depth=2)).move == "c3"


@pytest.mark.parametrize("none", ["none", "(none)", "0000"])
@client_test
async def test_text_bestmove_none_in_its_ugi_and_uci_forms(none: str) -> None:
    """``bestmove none`` and UCI's ``(none)`` and ``0000`` all give a result with move None."""

    async def no_move(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go):
            await peer.write(f"bestmove {none}\n".encode())
            return
        await polite(peer, request)

    async with fake_engine(no_move, "text") as (engine, _):
        assert (await engine.go(depth=1)).move is None


# ---------------------------------------------------------------------------------------------
# Searches: figures, errors, stops


@pytest.mark.parametrize(
    ("framing", "final", "score", "nodes", "exact"),
    [
        pytest.param("text", {}, Score("cp", 35, "lower"), 1000, Score("cp", 20), id="text"),
        pytest.param("msgpack", {}, Score("cp", 35, "lower"), 1000, Score("cp", 20),
                     id="msgpack-from-info"),
        pytest.param("msgpack", {"score": {"cp": 40, "bound": "upper"}, "nodes": 1500},
                     Score("cp", 40, "upper"), 1500, Score("cp", 20), id="msgpack-result-bound"),
        pytest.param("msgpack", {"score": {"cp": 50}, "nodes": 1600}, Score("cp", 50), 1600,
                     Score("cp", 50), id="msgpack-result-exact"),
    ],
)  # fmt: skip
@client_test
async def test_search_figures_with_a_bound_score(
    framing: Framing, final: dict[str, object], score: Score, nodes: int, exact: Score
) -> None:
    """``info depth 2 score cp 35 lowerbound nodes 1000`` after an exact cp 20: the result has
    nodes 1000, bound "lower" and exact_score cp 20 (the last score that was not a bound);
    figures carried by a msgpack result override the reports."""

    async def bounded(peer: Peer, request: m.Request) -> None:
        if not isinstance(request.command, m.Go):
            await polite(peer, request)
        elif framing == "text":
            await peer.write(
                b"info depth 1 score cp 20 nodes 100 pv c3 4@c4\n"
                b"info depth 2 score cp 35 lowerbound nodes 1000\n"
                b"bestmove c3\n"
            )
        else:
            notes = [
                {"search": request.msgid, "depth": 1, "score": {"cp": 20}, "nodes": 100,
                 "pv": ["c3", "4@c4"]},
                {"search": request.msgid, "depth": 2, "score": {"cp": 35, "bound": "lower"},
                 "nodes": 1000},
            ]  # fmt: skip
            frames = [msgpack.packb([2, "info", [note]]) for note in notes]
            result = {"move": "c3", **final}
            await peer.write(b"".join(frames) + msgpack.packb([1, request.msgid, None, result]))

    async with fake_engine(bounded, framing) as (engine, _):
        result = await engine.go(depth=2)
    assert result.move == "c3"
    assert result.score == score
    assert result.bound == score.bound
    assert result.nodes == nodes
    assert result.exact_score == exact
    assert result.depth == 2
    assert result.pv == ("c3", "4@c4")


@client_test
async def test_text_info_with_unknown_keys_and_mate_scores() -> None:
    """Info lines of other engines: unknown keys (tthits, multipv) are skipped, UCI's
    ``score mate -3`` is a loss in 3, a malformed info line is skipped, not fatal."""

    async def uci_like(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go):
            await peer.write(
                b"info depth 3 multipv 1 score mate -3 tthits 17 nodes 77 time 5 pv c3\n"
                b"info depth x\n"
                b"info currmove c4 currmovenumber 2\n"
                b"bestmove c3 ponder c4\n"
            )
            return
        await polite(peer, request)

    notes: list[m.Info] = []
    async with fake_engine(uci_like, "text") as (engine, _):
        result = await engine.go(depth=3, on_info=notes.append)
        assert engine.alive
    assert result.score == Score("loss", 3)
    assert (result.depth, result.nodes, result.time, result.ponder) == (3, 77, 5, "c4")
    assert result.exact_score == Score("loss", 3)
    assert len(notes) == 2


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_go_on_a_finished_game_is_error_203(framing: Framing) -> None:
    """An engine that refuses go with 203 game-over (text: with its bestmove none; msgpack:
    data {"move": nil}): go raises EngineError 203, the handle of start_search too, and no
    search is left behind."""

    async def over(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go):
            error = m.ErrorReply(203, "game-over", "go: the game is over", {"move": None})
            if framing == "text":
                await peer.answer(request, error, m.BestMove(None))
            else:
                await peer.answer(request, error)
            return
        await polite(peer, request)

    async with fake_engine(over, framing) as (engine, _):
        with pytest.raises(EngineError) as caught:
            await engine.go(depth=1)
        assert (caught.value.code, caught.value.name) == (203, "game-over")
        handle = await engine.start_search(depth=1)
        with pytest.raises(EngineError, match="203"):
            await handle.result(1)
        await engine.position()
        assert engine.alive


@client_test
async def test_text_go_refused_without_bestmove_raises_at_the_start() -> None:
    """Text: a go answered by error 101 (and no bestmove) raises EngineError from
    start_search, and leaves no search behind."""

    async def picky(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go) and peer.count == 0:
            peer.count += 1
            await peer.answer(request, m.ErrorReply(101, "bad-arguments", "go: no"))
            return
        await polite(peer, request)

    async with fake_engine(picky, "text") as (engine, _):
        with pytest.raises(EngineError, match="101 bad-arguments"):
            await engine.start_search(depth=1)
        assert (await engine.go(depth=1)).move == "c3"


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_on_info_callback_that_raises(framing: Framing) -> None:
    """A callback's exception is the caller's: go raises it, after the search ended, and the
    session goes on."""

    def boom(note: m.Info) -> None:
        raise RuntimeError(f"boom at depth {note.depth}")

    async with fake_engine(polite, framing) as (engine, _):
        with pytest.raises(RuntimeError, match="boom at depth 1"):
            await engine.go(depth=2, on_info=boom)
        assert engine.alive
        assert (await engine.go(depth=2)).move == "c3"


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_a_short_result_timeout_leaves_the_search_running(framing: Framing) -> None:
    """handle.result(timeout) on an infinite search: EngineTimeoutError, the search and the
    connection go on, and stop then gives the best move."""
    async with fake_engine(polite, framing) as (engine, _):
        handle = await engine.start_search(infinite=True)
        with pytest.raises(EngineTimeoutError):
            await handle.result(QUICK)
        assert engine.alive
        assert not handle.done
        assert await engine.query("turn") == "p1"
        await engine.stop()
        assert (await handle.result(1)).move == "c4"
        assert handle.last_info.depth == 3


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_commands_refused_during_a_search_until_it_is_stopped(framing: Framing) -> None:
    """While a search runs that no stop was sent for, the commands the protocol refuses then
    raise ClientError without being sent; queries go through; after stop, position waits for
    the best move and runs."""
    async with fake_engine(polite, framing) as (engine, peer):
        handle = await engine.start_search(infinite=True)
        refused: list[Callable[[], Awaitable[object]]] = [
            engine.position,
            lambda: engine.set_option("Hash", 1),
            engine.new_game,
            lambda: engine.play("c3"),
            engine.undo,
            lambda: engine.start_search(depth=1),
            lambda: engine.go(depth=1),
        ]
        for call in refused:
            with pytest.raises(ClientError, match="a search is running"):
                await call()
        assert await engine.query("position") == START
        await engine.isready()
        assert peer.got(m.Go) == [m.Go(infinite=True)]
        assert not peer.got(m.Position)
        await handle.stop()
        await engine.position(None, ["c4"])
        assert handle.done
        assert (await handle.result()).move == "c4"
        names = [type(c).__name__ for c in peer.commands]
        assert names.index("Stop") < names.index("Position")


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_engine_that_ignores_stop(framing: Framing) -> None:
    """A search whose engine never answers the stop: the next position waits its timeout and
    the stop's grace, then raises EngineTimeoutError and gives the engine up; go(timeout)
    on such an engine is bounded the same way."""

    async def stubborn(peer: Peer, request: m.Request) -> None:
        if not isinstance(request.command, m.Stop):
            await polite(peer, request)

    async with fake_engine(stubborn, framing) as (engine, _):
        handle = await engine.start_search(infinite=True)
        await handle.stop()
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError, match="no best move after stop"):
            await engine.position(timeout=QUICK)
        assert elapsed_since(start) < QUICK + STOP_GRACE + SLACK
        assert not engine.alive
        with pytest.raises(EngineTimeoutError):
            await handle.result(0)
    async with fake_engine(stubborn, framing) as (engine, _):
        start = anyio.current_time()
        with pytest.raises(EngineTimeoutError, match="nor after stop"):
            await engine.go(infinite=True, timeout=QUICK)
        assert elapsed_since(start) < QUICK + STOP_GRACE + SLACK
        assert not engine.alive


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_a_late_best_move_within_the_stop_grace_is_returned(framing: Framing) -> None:
    """go(timeout) that runs out: the search is stopped, and its best move, sent in answer to
    the stop, is returned rather than an error."""
    async with fake_engine(polite, framing) as (engine, _):
        result = await engine.go(infinite=True, timeout=QUICK)
        assert result.move == "c4"
        assert engine.alive


# ---------------------------------------------------------------------------------------------
# Odd values in answers


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    ("value", "moves", "total", "note"),
    [
        pytest.param("", (), 0, "", id="empty"),
        pytest.param("c3 c4 d5", ("c3", "c4", "d5"), 3, "", id="list"),
        pytest.param("count 900 moves a1 a2", ("a1", "a2"), 900, "", id="cut"),
        pytest.param("count 26904200625 laws:<law>,<law> writes", (), 26904200625,
                     "laws:<law>,<law> writes", id="uncountable"),
    ],
)  # fmt: skip
@client_test
async def test_legal_moves_in_every_form(
    framing: Framing, value: str, moves: tuple[str, ...], total: int, note: str
) -> None:
    """``query moves`` answered as a list, as nothing, as ``count N moves M ...`` (cut to fit)
    or as ``count N TEXT`` (too many to list): LegalMoves with its total and note."""
    listed = framing == "msgpack" and not value.startswith("count")

    async def answers(peer: Peer, request: m.Request) -> None:
        peer.queries["moves"] = tuple(value.split()) if listed else value
        await polite(peer, request)

    async with fake_engine(answers, framing) as (engine, _):
        got = await engine.legal_moves()
    assert isinstance(got, LegalMoves)
    assert (tuple(got), got.total, got.note) == (moves, total, note)
    assert got.complete is (total == len(moves))


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_query_values_have_the_same_types_in_both_framings(framing: Framing) -> None:
    """The answers of a scripted engine, as each framing carries them, come out as the same
    Python values: bools, None, text, and a mapping for an outcome, a clock and a table."""

    async def finished(peer: Peer, request: m.Request) -> None:
        peer.queries.update(
            gameover=True, p1turn=False, result="p2win", turn="none", moves=(),
            outcome={"winner": "p2", "reason": "totem-blocked"},
            clock={"p1": 1200, "p2": 0, "running": "none"}, played=("c3", "4@c4"),
            scores=("c5", "cp", "415", "2", "exact", "d5", "win", "3", "2", "lower"),
            table={"game": 2, "seat": "p1", "plies": 0, "offer": "none", "token": "Ab-9_x"},
        )  # fmt: skip
        await polite(peer, request)

    async with fake_engine(finished, framing) as (engine, _):
        got = {what: await engine.query(what) for what in m.QUERY_WHATS}
    assert got == {
        "gameover": True,
        "p1turn": False,
        "result": "p2win",
        "moves": (),
        "position": START,
        "turn": "none",
        "outcome": {"winner": "p2", "reason": "totem-blocked"},
        "phase": "t",
        "clock": {"p1": 1200, "p2": 0, "running": "none"},
        "played": ("c3", "4@c4"),
        "scores": (
            MoveScore("c5", m.Score("cp", 415), 2, None),
            MoveScore("d5", m.Score("win", 3), 2, "lower"),
        ),
        "table": {"game": 2, "seat": "p1", "plies": 0, "offer": "none", "token": "Ab-9_x"},
    }


@pytest.mark.parametrize("count", ["\u00b2", "9" * 5000])
@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_a_hostile_move_count_is_not_a_value_error(framing: Framing, count: str) -> None:
    """A ``query moves`` answer with an odd count gives LegalMoves or a ClientError, never a
    ValueError (which the library uses for the caller's bad arguments)."""

    async def odd(peer: Peer, request: m.Request) -> None:
        peer.queries["moves"] = f"count {count} moves c3"
        await polite(peer, request)

    async with fake_engine(odd, framing) as (engine, _):
        try:
            moves = await engine.legal_moves()
        except ClientError:
            return
        assert "c3" in moves or count in moves


@pytest.mark.parametrize("protocol", ["\u00b2", "9" * 5000])
@client_test
async def test_a_hostile_protocol_version_is_not_a_value_error(protocol: str) -> None:
    """An ``id protocol`` that is no plain number: the handshake takes the engine for plain UGI
    (protocol 0) or raises ClientError, never a ValueError."""

    async def odd(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Ugi):
            await peer.write(f"id name odd\nid protocol {protocol}\nugiok\n".encode())
            return
        await polite(peer, request)

    async with fake_engine(odd, "text", handshake=False) as (engine, _):
        try:
            info_ = await engine.handshake(1)
        except ClientError:
            return
        assert info_.name == "odd"


# ---------------------------------------------------------------------------------------------
# Argument checks: a ValueError naming the input, and nothing sent


BAD_ARGUMENTS: dict[str, tuple[Callable[[AsyncEngine], Awaitable[object]], str]] = {
    "move-with-space": (lambda e: e.position(None, ["c3", "4@c4 d5"]), "'4@c4 d5'"),
    "move-with-newline": (lambda e: e.position(None, ["c3\nquit"]), "'c3\\\\nquit'"),
    "move-with-tab": (lambda e: e.position(None, ["c3\t"]), "'c3\\\\t'"),
    "empty-move": (lambda e: e.position(None, [""]), "''"),
    "play-with-newline": (lambda e: e.play("c3\nquit"), "'c3\\\\nquit'"),
    "play-with-space": (lambda e: e.play("c3 c4"), "'c3 c4'"),
    "play-with-nbsp": (lambda e: e.play("c3\u00a0c4"), "c3"),
    "play-with-line-separator": (lambda e: e.play("c3\u2028go"), "c3"),
    "position-with-newline": (lambda e: e.position(START + "\ngo infinite"), "go infinite"),
    "position-with-cr": (lambda e: e.position(START + "\r"), "3T3"),
    "option-value-newline": (lambda e: e.set_option("Hash", "16\nquit"), "'16\\\\nquit'"),
    "option-value-cr": (lambda e: e.set_option("Hash", "16\rquit"), "'16\\\\rquit'"),
    "option-name-newline": (lambda e: e.set_option("Ha\nsh", 16), "'Ha\\\\nsh'"),
    "option-name-nul": (lambda e: e.set_option("Hash\x00", 16), "Hash"),
    "game-with-space": (lambda e: e.new_game("yo xii"), "'yo xii'"),
    "game-with-newline": (lambda e: e.new_game("yoxii\nquit"), "'yoxii\\\\nquit'"),
    "negative-depth": (lambda e: e.go(depth=-1), "depth -1"),
    "negative-movetime": (lambda e: e.start_search(movetime=-5), "movetime -5"),
    "negative-nodes": (lambda e: e.go(nodes=-2), "nodes -2"),
    "undo-zero": (lambda e: e.undo(0), "undo 0"),
    "unknown-query": (lambda e: e.query("colour"), "'colour'"),
}


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
@client_test
async def test_bad_arguments_raise_value_error_before_anything_is_sent(
    framing: Framing, case: str
) -> None:
    """A move with white space or a line break, free text with a control character, a
    negative limit, a query of nothing known: ValueError quoting the input, nothing written
    to the engine, the session as before."""
    call, quoted = BAD_ARGUMENTS[case]
    async with fake_engine(polite, framing) as (engine, peer):
        before = bytes(peer.received)
        with pytest.raises(ValueError, match=quoted):
            await call(engine)
        await settle()
        assert bytes(peer.received) == before
        assert engine.alive
        assert await engine.query("turn") == "p1"


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda e: e.ping(-1), id="ping-negative"),
        pytest.param(lambda e: e.ping(2**63), id="ping-2^63"),
        pytest.param(lambda e: e.go(depth=2**64), id="depth-2^64"),
        pytest.param(lambda e: e.go(nodes=2**63), id="nodes-2^63"),
        pytest.param(lambda e: e.go(clock=Clock(p1inc=-1)), id="p1inc-negative"),
        pytest.param(lambda e: e.go(clock=Clock(movestogo=-1)), id="movestogo-negative"),
        pytest.param(lambda e: e.undo(2**64), id="undo-2^64"),
    ],
)
@client_test
async def test_out_of_range_integers_raise_value_error_before_anything_is_sent(
    framing: Framing, call: Callable[[AsyncEngine], Awaitable[object]]
) -> None:
    """An integer the protocol cannot carry is a ValueError, raised before anything is sent,
    as a negative depth or undo(0) is."""
    async with fake_engine(polite, framing) as (engine, peer):
        before = bytes(peer.received)
        with pytest.raises(ValueError, match=r"\d"):
            await call(engine)
        assert bytes(peer.received) == before


@client_test
async def test_a_go_that_cannot_be_sent_leaves_the_session_usable() -> None:
    """A go that fails before it is written leaves no phantom search behind."""
    async with fake_engine(polite, "msgpack") as (engine, _):
        with contextlib.suppress(Exception):
            await engine.go(depth=2**64)
        await engine.position(None, ["c3"])
        assert (await engine.go(depth=1)).move == "c3"


@pytest.mark.parametrize("framing", FRAMINGS)
@client_test
async def test_an_option_name_with_the_word_value_is_refused(framing: Framing) -> None:
    """An option name the text framing cannot carry (it holds the word ``value``): ValueError,
    before anything is sent, in both framings alike."""
    async with fake_engine(polite, framing) as (engine, peer):
        before = bytes(peer.received)
        with pytest.raises(ValueError, match="Game value yinsh"):
            await engine.set_option("Game value yinsh")
        assert bytes(peer.received) == before


# ---------------------------------------------------------------------------------------------
# Engine processes: every process started is ended


MINI = r"""
import sys
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "ugi":
        print("id name mini\nid protocol 1\nugiok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "ping":
        print("pong", words[1], flush=True)
    elif words[0] == "quit":
        break
"""
"""A tiny text engine: the handshake, isready and ping; it leaves on quit."""

SAY_PID = "import os, sys; sys.stderr.write(f'{os.getpid()}\\n'); sys.stderr.flush()\n"


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie no parent has reaped yet counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_gone(pid: int, seconds: float = 5) -> bool:
    """Whether process ``pid`` ends within ``seconds`` (a kill takes a moment to land)."""
    deadline = time.monotonic() + seconds
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@contextlib.contextmanager
def pids_written(path: Path) -> Iterator[list[int]]:
    """A list filled, at the end of the block, with the pids a script wrote to ``path``."""
    pids: list[int] = []
    yield pids
    pids.extend(int(word) for word in path.read_text().split())


def test_sync_engine_quit_ends_the_process() -> None:
    """Engine.popen, then quit: the process is gone, reaped; calls afterwards raise
    EngineTerminatedError; a second quit does nothing."""
    before = children()
    engine = Engine.popen([sys.executable, "-c", MINI])
    started = children() - before
    assert len(started) == 1
    alive_at_first = engine.alive  # a name, so that mypy does not keep engine.alive narrowed
    assert alive_at_first
    engine.isready()
    engine.ping(3)
    engine.quit()
    assert all(gone(pid) for pid in started)
    assert children() == before
    assert not engine.alive
    with pytest.raises(EngineTerminatedError):
        engine.isready()
    engine.quit()


def test_sync_engine_block_ends_the_process_on_an_error() -> None:
    """An exception in the ``with Engine.popen(...)`` block: it propagates, and the process
    is ended on the way out."""
    before = children()
    with pytest.raises(KeyError, match="inside"), Engine.popen([sys.executable, "-c", MINI]):
        raise KeyError("inside")
    assert children() == before


def test_sync_popen_of_a_missing_program() -> None:
    """A command that cannot be started: EngineTerminatedError, no process left."""
    before = children()
    with pytest.raises(EngineTerminatedError, match="cannot start"):
        Engine.popen(["/nonexistent/engine-binary"])
    with pytest.raises(ValueError, match="empty"):
        Engine.popen([])
    assert children() == before


def test_sync_popen_of_a_program_that_exits_at_once() -> None:
    """A program that prints a line and exits before the handshake: EngineTerminatedError
    naming it, and it is reaped."""
    before = children()
    with pytest.raises(EngineTerminatedError, match=r"closed|exit"):
        Engine.popen([sys.executable, "-c", "print('hello')"])
    assert children() == before


def test_sync_popen_of_a_silent_program_times_out_and_kills_it(tmp_path: Path) -> None:
    """A program that never answers the handshake: EngineTimeoutError at the timeout, and the
    process is killed and reaped."""
    err = tmp_path / "pids"
    with err.open("wb") as stderr, pids_written(err) as pids:
        script = SAY_PID + "import time; time.sleep(30)"
        with pytest.raises(EngineTimeoutError, match=r"no answer to ugi within 0\.4 s"):
            Engine.popen([sys.executable, "-c", script], stderr=stderr, timeout=0.4)
    assert len(pids) == 1
    assert gone(pids[0])


def test_an_engine_that_ignores_quit_is_killed(tmp_path: Path) -> None:
    """An engine that answers the handshake but never leaves, not even on quit or the end of
    its input: quit(timeout) kills it."""
    err = tmp_path / "pids"
    script = SAY_PID + (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('id name stubborn\\nid protocol 1\\nugiok', flush=True)\n"
        "time.sleep(30)\n"
    )
    with err.open("wb") as stderr, pids_written(err) as pids:
        engine = Engine.popen([sys.executable, "-c", script], stderr=stderr, timeout=5)
        start = time.monotonic()
        engine.quit(timeout=0.2)
        assert time.monotonic() - start < 5
    assert gone(pids[0])


def test_what_an_engine_started_is_ended_with_it(tmp_path: Path) -> None:
    """An engine that starts a child of its own (which keeps the pipes open) and then exits:
    quit ends the child too (the engine runs in a process group of its own)."""
    err = tmp_path / "pids"
    script = SAY_PID + (
        "import subprocess, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
        "sys.stderr.write(f'{child.pid}\\n'); sys.stderr.flush()\n"
        "print('id name parent\\nid protocol 1\\nugiok', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    with (
        err.open("wb") as stderr,
        pids_written(err) as pids,
        Engine.popen([sys.executable, "-c", script], stderr=stderr, timeout=5) as engine,
    ):
        assert engine.info.name == "parent"
        engine.quit(timeout=0.5)
    assert len(pids) == 2
    assert gone(pids[0])  # the engine: reaped by the client
    assert wait_gone(pids[1])  # its child: killed with its process group


@real_clock_test
async def test_async_popen_process_is_ended_when_the_block_is_left() -> None:
    """AsyncEngine.popen: the process property, and its returncode once the block is left
    (normally, by an error, or by cancellation); popen_in with aclose alike."""
    async with AsyncEngine.popen([sys.executable, "-c", MINI]) as engine:
        process = engine.process
        assert process is not None
        running = process.returncode is None  # a name, so that mypy does not narrow it
        assert running
        await engine.isready()
    assert process.returncode is not None

    with contextlib.suppress(BaseExceptionGroup, KeyError):
        async with AsyncEngine.popen([sys.executable, "-c", MINI]) as engine:
            process = engine.process
            raise KeyError("inside")
    assert process is not None
    assert process.returncode is not None

    with anyio.CancelScope() as scope:
        async with AsyncEngine.popen([sys.executable, "-c", MINI]) as engine:
            process = engine.process
            scope.cancel()
            await anyio.sleep_forever()
    assert process is not None
    assert process.returncode is not None

    async with anyio.create_task_group() as group:
        engine = await AsyncEngine.popen_in(group, [sys.executable, "-c", MINI])
        assert engine.info.name == "mini"
        await engine.aclose()
        assert engine.process is not None
        assert engine.process.returncode is not None


@real_clock_test
async def test_async_popen_raises_its_errors_bare() -> None:
    """``async with AsyncEngine.popen(...)`` of a program that exits at once raises
    EngineTerminatedError itself, as Engine.popen does."""
    with pytest.raises(EngineTerminatedError):
        async with AsyncEngine.popen([sys.executable, "-c", "pass"]):
            pass


def test_engine_calls_from_several_threads_are_answered_in_turn() -> None:
    """The sync Engine, called from four threads at once, answers each call."""
    errors: list[BaseException] = []
    with Engine.popen([sys.executable, "-c", MINI]) as engine:

        def work() -> None:
            try:
                for token in range(20):
                    engine.ping(token)
                    engine.isready()
            except BaseException as exc:  # handed to the test thread
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert engine.alive
    assert errors == []


def test_the_stderr_of_an_engine_can_be_sent_anywhere() -> None:
    """stderr=DEVNULL hides what the engine writes there; the engine works as usual."""
    script = "import sys; sys.stderr.write('noise\\n' * 1000)\n" + MINI
    with Engine.popen([sys.executable, "-c", script], stderr=subprocess.DEVNULL) as engine:
        engine.isready()


def test_an_engine_that_crashes_mid_session(tmp_path: Path) -> None:
    """An engine that exits (code 3) instead of answering: the call raises
    EngineTerminatedError, the engine is no longer alive, and its process is reaped."""
    err = tmp_path / "pids"
    script = SAY_PID + MINI.replace(
        'print("readyok", flush=True)', "sys.exit(3)"
    )  # isready: it dies
    with err.open("wb") as stderr, pids_written(err) as pids:
        engine = Engine.popen([sys.executable, "-c", script], stderr=stderr)
        with pytest.raises(EngineTerminatedError, match=r"closed|exit"):
            engine.isready()
        assert not engine.alive
        engine.quit()
    assert gone(pids[0])


def test_popen_passes_the_environment_and_the_directory(tmp_path: Path) -> None:
    """popen's env and cwd reach the engine (its name here is built from both)."""
    script = "import os\n" + MINI.replace(
        'print("id name mini', 'print("id name", os.environ["NAME"], os.getcwd(), "'
    )
    env = {**os.environ, "NAME": "from-env"}
    with Engine.popen([sys.executable, "-c", script], env=env, cwd=str(tmp_path)) as engine:
        assert engine.info.name == f"from-env {tmp_path}"
        engine.isready()


def test_connect_to_a_server_that_never_answers() -> None:
    """A listening socket that accepts and says nothing: connect's handshake raises
    EngineTimeoutError at its timeout; a closed port raises EngineTerminatedError."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        start = time.monotonic()
        with pytest.raises(EngineTimeoutError, match="no answer to ugi"):
            Engine.connect("127.0.0.1", port, timeout=0.3)
        assert time.monotonic() - start < 5
        with pytest.raises(EngineTimeoutError):
            Engine.connect("127.0.0.1", port, framing="msgpack", timeout=0.3)
    with pytest.raises(EngineTerminatedError, match="cannot connect"):
        Engine.connect("127.0.0.1", port, timeout=2)


FORGETFUL = r"""
import subprocess, sys
from enginesrv.client import Engine
STUBBORN = (
    "import sys, time\n"
    "for line in sys.stdin:\n"
    "    w = line.split()\n"
    "    if w[:1] == ['ugi']: print('id name x'); print('ugiok', flush=True)\n"
    "time.sleep(60)\n"
)
engine = Engine.popen([sys.executable, "-c", STUBBORN], stderr=subprocess.DEVNULL)
print(engine.pid, flush=True)
"""


def test_an_engine_the_program_forgot_to_quit_is_ended_when_it_exits() -> None:
    """A program that opens an Engine and exits without quit: the engine, which would outlive
    the end of its input by a minute, is killed as the program exits."""
    proc = subprocess.run(
        [sys.executable, "-c", FORGETFUL], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.05)
    assert gone(pid)

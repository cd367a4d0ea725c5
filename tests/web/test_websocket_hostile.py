"""/ws against the worst clients: ones that never read, send everything at once, send lines and
messages over the limits, mix the framings, send garbage, leave in the middle of a bot's
search, open too many sockets, or hope to read a bot's hidden laws (docs/protocol.md §2, §3,
§6 and §8; enginesrv/web/transport.py).

Each test runs the in-process server of ``tests.web.webpeer`` in its own trio run. The tests
that look inside the server (its connections, a search runner that records what it is asked)
do so to check what a client cannot see: whether a connection is gone, whether a worker is
free, how far ahead of the handler the reader has read.

hypercorn keeps the task of every closed WebSocket until its next ping is due (its
``_send_pings`` loop sleeps ``PING_INTERVAL``, 30 s, before it looks again), so every server
that served a WebSocket takes its whole grace (``GRACE``, 2 s) to stop. The tests shorten the
grace (``short_grace``), but for the test of the shutdown itself.
"""

from __future__ import annotations

import contextlib
import functools
import random
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, MutableMapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit

import msgpack
import pytest
import trio
from structlog.testing import capture_logs
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    connect_websocket_url,
    open_websocket_url,
)
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection, TextMessage
from wsproto.events import Message as WsMessage
from wsproto.events import Request as WsRequest
from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import FrameProtocol

import games
from enginesrv.admission import event_admission
from enginesrv.event.feed import Feed
from enginesrv.serve import connection as connection_module
from enginesrv.serve.connection import Connection, Limits
from enginesrv.serve.session import Session
from enginesrv.web import run as web_run
from enginesrv.web.app import WS_PEER_CONNECTIONS
from enginesrv.web.referee import Referee
from enginesrv.web.watch import serve_watch
from protocol.text import TextDecoder
from tests.enginesrv.peer import ThreadRunner
from tests.trio_run import trio_test
from tests.web.webpeer import (
    Web,
    binary_socket,
    drop,
    http_get,
    running_web,
    text_socket,
    upgraded,
)

Message = str | bytes
LogEntry = MutableMapping[str, Any]

FAULTS = frozenset({"connection_failed", "internal_error", "search_failed", "close_failed"})
"""Log events that mean a fault of the server (docs/protocol.md §6: 500 is logged)."""

# Black to act at turn 1 with two adaptation laws that fit the start board: its `query moves`
# is 3,243 tokens, about 58 KB (docs/yinyang.md; rules/yinyang.md §8.2)
ADAPTING = (
    "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
)
FLOOD = 300
"""`query moves` sent at once by a client that never reads: about 17 MB of replies."""


LIVELY = 2.0
"""Seconds within which another client is answered while one misbehaves: a frozen server
takes far longer (the floods here hold seconds of work); a busy test machine does not."""

REAL_GRACE = web_run.GRACE
"""The grace as served (tests/web/conftest.py shortens it for the other tests)."""


# -- helpers -----------------------------------------------------------------------------------


def faults(logs: Iterable[LogEntry]) -> list[LogEntry]:
    """The log entries that report a fault of the server (an exception, an error)."""
    return [
        entry
        for entry in logs
        if entry.get("event") in FAULTS
        or entry.get("log_level") in ("error", "critical", "exception")
        or "exc_info" in entry
    ]


def events(logs: Iterable[LogEntry], name: str) -> list[LogEntry]:
    return [entry for entry in logs if entry.get("event") == name]


def close_of(exc: ConnectionClosed) -> tuple[int, str]:
    """The close code and reason of a closed socket."""
    assert exc.reason is not None
    return int(exc.reason.code), exc.reason.reason or ""


def lines_of(message: Message) -> list[str]:
    """The lines of a text message, cut at LF only (the protocol's line end, §4)."""
    assert isinstance(message, str), f"a binary message on a text socket: {message!r}"
    assert message.endswith("\n"), f"a message that does not end a line: {message!r}"
    return message[:-1].split("\n")


def frames_of(message: Message) -> list[Any]:
    assert isinstance(message, bytes), f"a text message on a binary socket: {message!r}"
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(message)
    return list(unpacker)


class Lines:
    """A text socket read line by line, cut at LF only, keeping every message received."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.pending: list[str] = []
        self.messages: list[Message] = []

    async def send(self, *lines: str) -> None:
        await self.ws.send_message("\n".join(lines))

    async def line(self, timeout: float = 10) -> str:
        while not self.pending:
            with trio.fail_after(timeout):
                message = await self.ws.get_message()
            self.messages.append(message)
            self.pending.extend(lines_of(message))
        return self.pending.pop(0)

    async def ask(self, command: str) -> str:
        await self.send(command)
        line = await self.line()
        assert line.startswith("response"), f"{command}: {line}"
        return line[9:]

    async def quiet(self, seconds: float = 0.3) -> None:
        """Nothing more arrives within ``seconds``."""
        with trio.move_on_after(seconds):
            message = await self.ws.get_message()
            raise AssertionError(f"an unexpected message: {message!r}")


@asynccontextmanager
async def lines_socket(url: str) -> AsyncIterator[Lines]:
    async with open_websocket_url(url) as ws:
        yield Lines(ws)


async def until_closed(ws: WebSocketConnection, timeout: float = 10) -> tuple[list[Message], int]:
    """The messages the server still sends, and its close code, once it closes the socket."""
    received: list[Message] = []
    with trio.fail_after(timeout):
        while True:
            try:
                received.append(await ws.get_message())
            except ConnectionClosed as exc:
                await drop(ws)
                return received, close_of(exc)[0]


async def pong_time(web: Web, token: int) -> float:
    """Seconds a fresh socket waits for its `pong` (fails after 2 s)."""
    async with text_socket(web.ws()) as peer:
        start = trio.current_time()
        await peer.send(f"ping {token}")
        with trio.fail_after(2):
            assert await peer.line() == f"pong {token}"
        return trio.current_time() - start


async def only_connection(web: Web) -> Connection:
    """The server's one connection, once it has one (a socket joins after its first message)."""
    assert await wait_for(lambda: len(web.server.connections) == 1, 5)
    (conn,) = web.server.connections
    return conn


async def wait_for(predicate: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    """Whether ``predicate`` becomes true within ``timeout`` seconds."""
    with trio.move_on_after(timeout):
        while not predicate():
            await trio.sleep(step)
        return True
    return False


@asynccontextmanager
async def never_reading(url: str) -> AsyncIterator[WebSocketConnection]:
    """A socket whose client reads nothing: trio-websocket stops reading its TCP stream once
    a message waits unread. At the end its TCP stream is closed (the server's write then
    fails) and its reader, which waits for someone to take that message, is cancelled."""
    async with trio.open_nursery() as nursery:
        ws = await connect_websocket_url(nursery, url, message_queue_size=0)
        try:
            yield ws
        finally:
            await drop(ws)
            nursery.cancel_scope.cancel()


class TrackingRunner(ThreadRunner):
    """A thread runner that counts the searches running now and records each one's peer."""

    def __init__(self) -> None:
        super().__init__()
        self.active = 0
        self.infos = 0
        self.peers: list[str | None] = []
        self.started = trio.Event()

    async def search(self, job: Any, **kwargs: Any) -> Any:
        self.active += 1
        self.peers.append(kwargs.get("peer"))
        self.started.set()
        report = kwargs["on_info"]

        def on_info(info: Any) -> None:
            self.infos += 1
            report(info)

        kwargs["on_info"] = on_info
        try:
            return await super().search(job, **kwargs)
        finally:
            self.active -= 1


# -- a client that never reads -----------------------------------------------------------------


def flood_message() -> str:
    return "\n".join(["uginewgame yinyang", f"position fen {ADAPTING}"] + ["query moves"] * FLOOD)


async def new_connection(web: Web, before: set[Connection]) -> Connection:
    """The connection that joins the server after ``before`` (at its first message)."""
    assert await wait_for(lambda: len(web.server.connections - before) == 1, 5)
    (conn,) = web.server.connections - before
    return conn


@trio_test
async def test_a_never_reading_client_is_cut_off_at_its_output_cap_and_others_go_on() -> None:
    cap = 256 * 1024
    latencies: list[float] = []
    with capture_logs() as logs:
        async with (
            running_web(limits=Limits(output=cap)) as web,
            text_socket(web.ws()) as other,
            trio.open_nursery() as nursery,
        ):
            await other.send("ping 0")
            assert await other.line() == "pong 0"
            before = set(web.server.connections)
            done = trio.Event()

            async def keep_pinging() -> None:
                token = 1
                while not done.is_set():
                    start = trio.current_time()
                    await other.send(f"ping {token}")
                    assert await other.line(timeout=2) == f"pong {token}"
                    latencies.append(trio.current_time() - start)
                    token += 1
                    await trio.sleep(0.005)

            nursery.start_soon(keep_pinging)
            async with never_reading(web.ws()) as hog:
                await hog.send_message(flood_message())
                conn = await new_connection(web, before)
                assert await wait_for(lambda: conn.gone is not None, 5), "never cut off"
                await trio.sleep(0.2)
                done.set()
                assert conn.gone is not None
                assert conn.gone.startswith(f"output cap: more than {cap} bytes")
                assert conn.outbox.size == 0  # what it left queued is dropped: memory bounded
                (lost,) = [e for e in events(logs, "client_lost") if e["conn"] == conn.id]
                assert lost["reason"] == conn.gone
            # its TCP stream closed, the server's blocked write fails and the socket goes
            assert await wait_for(lambda: web.server.connections == before, 3)
    # the other socket was answered all along, at once
    assert len(latencies) >= 5, latencies
    assert max(latencies) < LIVELY, f"a ping waited {max(latencies):.3f} s behind the flood"
    assert not faults(logs), faults(logs)


@trio_test
async def test_a_client_over_its_output_cap_is_disconnected_although_it_never_reads() -> None:
    """§2: over its output cap the connection is closed, also when its client never reads
    (hypercorn shields its writes from cancellation: a write to such a client would otherwise
    block the connection's end for good, and keep its place in the connection counts)."""
    cap = 256 * 1024
    async with running_web(limits=Limits(output=cap)) as web, never_reading(web.ws()) as hog:
        await hog.send_message(flood_message())
        conn = await only_connection(web)
        assert await wait_for(lambda: conn.gone is not None, 5)
        # docs/protocol.md §2: "the connection is closed"; the flush of a closing
        # connection is bounded (FLUSH_TIMEOUT, 0.5 s)
        # the socket is let go a moment after its connection (its close, under the guard)
        closed = await wait_for(
            lambda: conn not in web.server.connections and "127.0.0.1" not in web.app.per_host,
            3,
        )
        assert closed, f"still served 3 s after {conn.gone!r}"


@trio_test
async def test_a_client_that_never_reads_does_not_hold_up_the_server_stopping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """§2: the server stops within 2 s, also with a client that reads nothing while replies
    wait (hypercorn's shielded write must not hold up the shutdown)."""
    monkeypatch.setattr(web_run, "GRACE", REAL_GRACE)  # the shutdown as served
    stopped = trio.Event()
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[Web]) -> None:
            async with running_web() as web:  # the default output cap: it is never reached
                task_status.started(web)
                await web.server.stop.wait()
            stopped.set()

        web: Web = await nursery.start(serve)
        try:
            async with never_reading(web.ws()) as hog:
                flood = ["uginewgame yinyang", f"position fen {ADAPTING}"] + ["query moves"] * 30
                await hog.send_message("\n".join(flood))
                conn = await only_connection(web)
                assert await wait_for(lambda: conn.outbox.size > 0, 5)  # its writer is stuck
                assert conn.gone is None  # far below its output cap
                web.server.stop.set()
                with trio.move_on_after(4):
                    await stopped.wait()
                assert stopped.is_set(), "the server had not stopped 4 s after it was told to"
        finally:
            with trio.fail_after(5):
                await stopped.wait()


@trio_test
async def test_progress_to_a_client_that_does_not_read_is_dropped_not_queued() -> None:
    """A client that reads nothing while replies wait gets no progress queued (docs/protocol.md
    §2: `info` is dropped once 256 KiB wait), is not disconnected for it, and still gets every
    reply and its one best move once it reads."""
    runner = TrackingRunner()
    soft = 256 * 1024
    with capture_logs() as logs:
        async with (
            running_web(limits=Limits(output=2 * 1024 * 1024), runner=runner) as web,
            never_reading(web.ws()) as ws,
        ):
            setup = ["uginewgame yinyang", f"position fen {ADAPTING}", "query moves"]
            await ws.send_message("\n".join(setup + ["query moves"] * 11))
            conn = await only_connection(web)
            assert await wait_for(lambda: conn.outbox.size >= soft, 5)
            await trio.sleep(0.2)  # the TCP buffers are full, the writer waits
            waiting = conn.outbox.size
            await ws.send_message("setoption name Bot value alphabeta\ngo infinite")
            # three reports, or fewer from a search that proved its result and ended early
            assert await wait_for(
                lambda: runner.infos >= 3 or (runner.infos >= 1 and runner.active == 0), 5
            )
            await trio.sleep(0.2)
            assert conn.outbox.size == waiting  # every report dropped, none queued
            assert conn.gone is None
            await ws.send_message("stop\nping 7")
            seen: list[str] = []
            with trio.fail_after(10):
                while "pong 7" not in seen or not any(x.startswith("bestmove ") for x in seen):
                    seen.extend(lines_of(await ws.get_message()))
                await ws.send_message("ping 8")  # a barrier: nothing else comes before its pong
                while "pong 8" not in seen:
                    seen.extend(lines_of(await ws.get_message()))
            answers = [line for line in seen if line.startswith("response ")]
            assert len(answers) == 12
            assert len(set(answers)) == 1  # each in full
            assert len(answers[0]) > 50_000
            best = [line for line in seen if line.startswith("bestmove ")]
            assert len(best) == 1, best
            assert conn.gone is None
    assert not faults(logs), faults(logs)


# -- everything in one message -----------------------------------------------------------------


class GatedSession(Session):
    """A session that answers nothing until ``gate`` is set (a slow handler)."""

    gate: trio.Event | None = None

    async def handle(self, request: Any, nursery: trio.Nursery) -> None:
        if GatedSession.gate is not None:
            await GatedSession.gate.wait()
        await super().handle(request, nursery)


class CountingDecoder(TextDecoder):
    """A server-side text decoder that counts the commands it has decoded."""

    decoded = 0

    def next_message(self) -> Any:
        message = super().next_message()
        if message is not None:
            CountingDecoder.decoded += 1
        return message


@trio_test
async def test_hundreds_of_commands_in_one_message_are_all_answered_in_order() -> None:
    start = games.load("yoxii").new_state()
    after = start.copy()
    after.push(after.parse_move("c5"))
    commands = ["uginewgame yoxii"]
    expected: list[str] = []
    for i in range(250):
        commands += [f"ping {i}", "query turn", "isready", "query phase", "nonsense"]
        expected += [f"pong {i}", "response p1", "readyok", "response t", "error 100"]
    # the Totem's move leaves White to place a piece, then back to the start
    commands += ["play c5", "query turn", "undo", "query position", "ping -1", "ping 1"]
    expected += [
        f"response {after.to_string()}",
        "response p1",
        f"response {start.to_string()}",
        f"response {start.to_string()}",
        "error 101 bad-arguments ping: token '-1' is below 0",
        "pong 1",
    ]
    async with running_web() as web, lines_socket(web.ws()) as peer:
        await peer.send(*commands)
        got = [await peer.line() for _ in expected]
        assert len(got) == len(expected)
        for line, want in zip(got, expected, strict=True):
            assert line.startswith(want), (line, want)
        await peer.quiet()


@trio_test
async def test_inflight_slows_the_reader_of_one_big_message_and_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inflight = 8
    count = 400
    CountingDecoder.decoded = 0
    monkeypatch.setattr(GatedSession, "gate", trio.Event())
    monkeypatch.setattr(connection_module, "Session", GatedSession)
    monkeypatch.setattr(connection_module, "TextDecoder", CountingDecoder)
    async with running_web(limits=Limits(inflight=inflight)) as web, lines_socket(web.ws()) as peer:
        await peer.send(*(f"ping {i}" for i in range(count)))
        assert await wait_for(lambda: CountingDecoder.decoded >= inflight, 5)
        await trio.sleep(0.3)  # time enough to read on, if nothing held the reader back
        # one in the handler, inflight - 1 queued, one waiting to be queued
        assert inflight <= CountingDecoder.decoded <= inflight + 1, CountingDecoder.decoded
        # more messages pile up behind it, unread
        await peer.send(*(f"ping {i}" for i in range(count, count + 50)))
        await trio.sleep(0.1)
        assert CountingDecoder.decoded <= inflight + 1
        assert GatedSession.gate is not None
        GatedSession.gate.set()
        got = [await peer.line() for _ in range(count + 50)]
        assert got == [f"pong {i}" for i in range(count + 50)]
        assert CountingDecoder.decoded == count + 50
        await peer.quiet()


# -- over the limits ---------------------------------------------------------------------------


@trio_test
async def test_a_line_over_the_line_limit_is_error_102_and_closes_the_socket() -> None:
    limits = Limits(line=1000)
    with capture_logs() as logs:
        async with running_web(limits=limits) as web:
            # a line of exactly the limit is a line like any other: 101, and the session goes on
            async with lines_socket(web.ws()) as peer:
                await peer.send("ping " + "1" * 995)
                line = await peer.line()
                assert line.startswith("error 101 bad-arguments ping: token '111")
                assert len(line) + 1 <= 1000  # no reply is longer than the line limit (§2)
                await peer.send("ping 1\r")  # a CR before the line end is no part of the line
                assert await peer.line() == "pong 1"
            # one byte more, between two good lines of one message: 102, then the close
            async with open_websocket_url(web.ws()) as ws:
                await ws.send_message("ping 2\nping " + "2" * 996 + "\nping 3")
                received, code = await until_closed(ws)
                lines = [line for message in received for line in lines_of(message)]
                assert lines[0] == "pong 2"
                assert lines[1].startswith("error 102 frame-too-large ")
                assert "1001 bytes" in lines[1]
                assert lines[2:] == []  # §6: after an error that closes, nothing more
                assert code == 1000
            assert await pong_time(web, 4) < LIVELY
    assert not faults(logs), faults(logs)


@trio_test
async def test_a_message_over_the_websocket_message_limit_closes_only_that_socket(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # hypercorn's websocket_max_message_size is 4 x max(line, frame) (enginesrv/web/run.py)
    limits = Limits(line=1000, frame=2000)
    biggest = 4 * 2000
    with capture_logs() as logs:
        async with running_web(limits=limits) as web, lines_socket(web.ws()) as other:
            await other.send("ping 0")
            assert await other.line() == "pong 0"
            # the largest message (of short lines) is whole and answered in full
            async with lines_socket(web.ws()) as peer:
                body = "\n".join(f"ping {i:03}" for i in range(biggest // 9))
                body += "\n" + " " * (biggest - len(body) - 1)
                assert len(body) == biggest
                await peer.send(body)
                got = [await peer.line() for _ in range(biggest // 9)]
                assert got == [f"pong {i}" for i in range(biggest // 9)]
            # one byte more: hypercorn closes the socket with 1009 (message too big)
            async with open_websocket_url(web.ws()) as ws:
                await ws.send_message("ping 1")
                await ws.get_message()
                await ws.send_message("ping 2\n" + " " * (biggest - 6))
                received, code = await until_closed(ws)
                assert received == []
                assert code == 1009
            # a binary one too
            async with open_websocket_url(web.ws()) as ws:
                frame = msgpack.packb([0, 1, "ping", [{"token": 1}]])
                await ws.send_message(frame + msgpack.packb("x" * biggest))
                received, code = await until_closed(ws)
                assert code == 1009
            # the server goes on: the socket that was open and new ones
            await other.send("ping 5")
            assert await other.line() == "pong 5"
            assert await pong_time(web, 6) < LIVELY
            assert await wait_for(lambda: len(web.server.connections) == 1, 3)
    assert not faults(logs), faults(logs)
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@trio_test
async def test_a_message_that_never_ends_holds_no_more_than_the_message_limit() -> None:
    """A peer that starts a message and sends continuation frames without end, before any
    command: the server refuses it at the limit (1009) and holds nothing more of it, however
    much comes (hypercorn's own buffer kept all of it: ``CappedBuffer``)."""
    limits = Limits(line=1000, frame=2000)
    sent = 20 * 1024 * 1024
    async with running_web(limits=limits) as web:
        stream, _ws = await raw_socket(web)
        frames = FrameProtocol(client=True, extensions=[])
        chunk = "x" * 1000
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            with trio.fail_after(20):
                for _ in range(sent // len(chunk)):
                    await stream.send_all(bytes(frames.send_data(chunk, fin=False)))
                # what the socket's buffers still hold is a small part of it; a new socket's
                # pong lets the server's loop read on meanwhile, and shows it is lively
                assert await pong_time(web, 1) < LIVELY
            grown = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
            await trio.aclose_forcefully(stream)
    assert grown < 2 * 1024 * 1024, f"{grown:,} bytes held for {sent:,} sent"


@trio_test
async def test_the_message_limit_counts_bytes_not_characters() -> None:
    """A text message is measured in UTF-8 bytes: 2,001 emoji (8,004 bytes, 2,001 characters)
    are over a limit of 8,000, as the server holds each character in up to 4 bytes."""
    async with running_web(limits=Limits(line=1000, frame=2000)) as web:
        async with open_websocket_url(web.ws()) as ws:
            await ws.send_message("\U0001f600" * 2001)
            received, code = await until_closed(ws)
        assert (received, code) == ([], 1009)
        async with open_websocket_url(web.ws()) as ws:  # exactly at the limit: a message
            await ws.send_message("ping 1\n" + "\U0001f600" * 1998)
            assert await ws.get_message() == "pong 1\n"


@trio_test
async def test_the_server_takes_no_compression_and_inflates_nothing() -> None:
    """A handshake that offers permessage-deflate is accepted without it, and a compressed
    frame (16 KB that would inflate to 16 MiB) ends the connection, inflated by no one."""
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = bomb.compress(b"a" * (16 << 20)) + bomb.flush(zlib.Z_SYNC_FLUSH)
    payload = payload.removesuffix(b"\x00\x00\xff\xff")
    async with running_web() as web:
        url = urlsplit(web.ws())
        assert url.hostname is not None
        assert url.port is not None
        stream = await trio.open_tcp_stream(url.hostname, url.port)
        client = WSConnection(ConnectionType.CLIENT)
        request = WsRequest(
            host=f"{url.hostname}:{url.port}", target="/ws", extensions=[PerMessageDeflate()]
        )
        tracemalloc.start()
        try:
            await stream.send_all(client.send(request))
            accepted: list[AcceptConnection] = []
            with trio.fail_after(5):
                while not accepted:
                    client.receive_data(await stream.receive_some(65536))
                    accepted = [e for e in client.events() if isinstance(e, AcceptConnection)]
            assert accepted[0].extensions == []
            before = tracemalloc.get_traced_memory()[0]
            frame = FrameProtocol(client=True, extensions=[])
            head = bytearray(frame.send_data(payload, fin=True))
            head[0] |= 0x40  # RSV1: a compressed message
            await stream.send_all(bytes(head))
            data = b""
            with trio.fail_after(5):
                while chunk := await stream.receive_some(65536):
                    data += chunk
            grown = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
            await trio.aclose_forcefully(stream)
        # wsproto takes the frame for a protocol error and hypercorn drops the connection
        # (it sends no close frame for one): nothing was answered, nothing inflated
        client.receive_data(data)
        assert [e for e in client.events() if isinstance(e, WsMessage)] == []
        assert grown < 2 * 1024 * 1024, f"{grown:,} bytes for {len(payload):,} sent"
        assert await pong_time(web, 1) < LIVELY


# -- a refereed game and its bot's search ------------------------------------------------------


@trio_test
async def test_a_page_that_leaves_during_the_bots_search_costs_nothing_more() -> None:
    runner = TrackingRunner()
    slow = "game=yoxii&opponent=bot:alphabeta&side=p2&movetime=1200"
    with capture_logs() as logs:
        async with running_web(runner=runner) as web:
            async with open_websocket_url(web.ws(slow)) as ws:
                await ws.send_message("go")
                with trio.fail_after(5):
                    await runner.started.wait()
                await trio.sleep(0.1)
                assert runner.active == 1
            # the page is gone: its search ends (at the latest when its time is up) and so
            # does its connection
            assert await wait_for(lambda: runner.active == 0, 5)
            assert await wait_for(lambda: not web.server.connections, 3)
            # later pages play as usual, and the bot answers them
            rng = random.Random(3)
            query = "game=yoxii&opponent=bot:random&side=p1"
            async with text_socket(web.ws(query)) as page:
                for _ in range(6):
                    if await page.ask("query turn") == "p1":
                        moves = (await page.ask("query moves")).split()
                        await page.ask(f"play {rng.choice(moves)}")
                    else:
                        await page.send("go")
                        assert (await page.expect("bestmove ")) != "bestmove none"
                assert len((await page.ask("query played")).split()) == 6
            assert runner.active == 0
    assert not faults(logs), faults(logs)
    closed = events(logs, "connection_closed")
    assert len(closed) == 2, closed


@trio_test
async def test_a_page_that_leaves_during_the_bots_search_frees_the_worker_at_once() -> None:
    """§3: a client that leaves mid-search has its search stopped and its worker freed at
    once; for a refereed game that is the bot's search, which must not run to its move time."""
    runner = TrackingRunner()
    slow = "game=yoxii&opponent=bot:alphabeta&side=p2&movetime=3000"
    async with running_web(runner=runner) as web:
        async with open_websocket_url(web.ws(slow)) as ws:
            await ws.send_message("go")
            with trio.fail_after(5):
                await runner.started.wait()
            await trio.sleep(0.1)
        try:
            freed = await wait_for(lambda: runner.active == 0, 1.0)
            assert freed, "the bot still searches 1 s after its page left"
        finally:
            await wait_for(lambda: runner.active == 0, 5)


@trio_test
async def test_a_refereed_bots_search_counts_as_the_pages_address() -> None:
    """§2 (peersearches): a refereed game's bot searches as the page's address, as a plain
    session's searches do, or a page could hold every worker."""
    runner = TrackingRunner()
    async with running_web(runner=runner) as web:
        async with text_socket(web.ws()) as plain:
            await plain.send("uginewgame yoxii", "setoption name Bot value random", "go depth 1")
            await plain.expect("bestmove ")
        async with text_socket(web.ws("game=yoxii&opponent=bot:random&side=p2")) as page:
            await page.send("go")
            await page.expect("bestmove ")
    assert runner.peers[0] == "127.0.0.1"  # a plain session's search
    assert runner.peers[1] == "127.0.0.1", runner.peers  # the refereed game's bot


@trio_test
async def test_a_refereed_game_refuses_what_a_thinking_bot_forbids() -> None:
    """`go` twice, `play` and `undo` while the bot thinks: error 204 each (§3), the game
    unchanged, exactly one best move for the accepted `go`."""
    query = "game=yoxii&opponent=bot:alphabeta&side=p2&movetime=400"
    async with running_web() as web:
        async with lines_socket(web.ws(query)) as page:
            start = await page.ask("query position")
            await page.send("go", "go", "play c5", "undo", "undo 1", "query turn", "ping 1")
            lines = [await page.line() for _ in range(7)]
            assert lines[0].startswith("error 204 search-in-progress go")
            assert lines[1].startswith("error 204 search-in-progress play")
            assert lines[2].startswith("error 204 search-in-progress undo")
            assert lines[3].startswith("error 204 search-in-progress undo")
            assert lines[4:6] == ["response p1", "pong 1"]  # §3: answered during a search
            assert lines[6].startswith("bestmove ")
            bot_move = lines[6].split()[1]
            await page.quiet(0.4)  # no second best move, ever
            played = (await page.ask("query played")).split()
            assert played == [bot_move]
            assert await page.ask("query position") != start
            # the bot (Black) still places a piece: `stop` does not hurry it, and what follows
            # the stop waits for its move (§3), then runs on the person's turn
            await page.send("go", "stop", "go", "query turn")
            lines = [await page.line() for _ in range(4)]
            assert lines[0].startswith("bestmove ")
            assert lines[1].startswith("error 101 bad-arguments go: it is your decision")
            assert lines[2] == "bestmove none"  # the refused go's own answer
            assert lines[3] == "response p2"
            await page.quiet(0.4)
            assert len((await page.ask("query played")).split()) == 2
            assert await page.ask("undo 2") == start
        # msgpack: the second go is an error response; the first has the one result
        async with binary_socket(web.ws(query)) as bpage:
            await bpage.request(1, "go")
            await bpage.request(2, "go")
            await bpage.request(3, "undo", {"count": 1})
            second = await bpage.response(2)
            assert second[2][0] == 204
            third = await bpage.response(3)
            assert third[2][0] == 204
            first = await bpage.response(1)
            assert first[2] is None
            assert first[3]["move"]
            with trio.move_on_after(0.4):
                extra = await bpage.frame()
                raise AssertionError(f"a frame after the best move: {extra!r}")


# -- mixed framings and garbage ----------------------------------------------------------------


@trio_test
async def test_alternating_and_empty_messages_on_a_text_socket() -> None:
    async with running_web() as web, lines_socket(web.ws()) as peer:
        await peer.ws.send_message("")  # an empty first message: nothing to answer
        await peer.send("ping 0")
        assert await peer.line() == "pong 0"
        for i in range(1, 11):
            await peer.ws.send_message(msgpack.packb([0, i, "ping", [{"token": i}]]))
            await peer.ws.send_message("")
            await peer.ws.send_message(b"")
            await peer.send(f"ping {i}")
        for i in range(1, 11):
            refused = await peer.line()
            size = len(msgpack.packb([0, i, "ping", [{"token": i}]]))
            assert refused.startswith(f"error 103 bad-frame a binary message of {size} bytes ")
            assert "speaks text" in refused
            empty = await peer.line()
            assert empty.startswith("error 103 bad-frame a binary message of 0 bytes ")
            assert await peer.line() == f"pong {i}"
        await peer.quiet()


@trio_test
async def test_alternating_and_empty_messages_on_a_binary_socket() -> None:
    async with running_web() as web, binary_socket(web.ws()) as peer:
        await peer.ws.send_message(b"")  # an empty first message fixes the framing: binary
        await peer.ws.send_message("ping 1")
        await peer.request(1, "ping", {"token": 1})
        refused = await peer.frame()
        assert refused[:2] == [2, "error"]
        assert refused[2][0]["code"] == 103
        assert "a text message ('ping 1')" in refused[2][0]["message"]
        assert (await peer.response(1))[3] == {"token": 1}
        for i in range(2, 8):
            await peer.ws.send_message(f"ping {i}")
            await peer.ws.send_message(b"")
            await peer.ws.send_message("")
            await peer.request(i, "ping", {"token": i})
        for i in range(2, 8):
            first, second = await peer.frame(), await peer.frame()
            assert f"('ping {i}')" in first[2][0]["message"]
            assert "a text message ('')" in second[2][0]["message"]
            reply = await peer.frame()
            assert reply == [1, i, None, {"token": i}]


@trio_test
async def test_a_first_binary_message_that_is_no_msgpack_request() -> None:
    async with running_web() as web:
        # a TLS handshake's first bytes are msgpack integers, not an array: 103, fatal (§6)
        async with open_websocket_url(web.ws()) as ws:
            await ws.send_message(b"\x16\x03\x01\x02\x00")
            received, code = await until_closed(ws)
            (frame,) = [f for message in received for f in frames_of(message)]
            assert frame[:2] == [2, "error"]
            error = frame[2][0]
            assert error["code"] == 103
            assert error["name"] == "bad-frame"
            assert "must be an array, got int" in error["message"]
            assert code == 1000
        # a TLS record header whose length byte starts a msgpack string that is cut: the
        # message ends inside a frame, so it is refused whole and the session goes on
        async with binary_socket(web.ws()) as peer:
            await peer.ws.send_message(b"\x16\x03\x01\x00\xa5")
            frame = await peer.frame()
            assert frame[:2] == [2, "error"]
            assert frame[2][0]["code"] == 103
            message = frame[2][0]["message"]
            assert message.startswith("a binary message of 5 bytes ")
            assert "ends inside a msgpack frame (its last 1 bytes)" in message
            await peer.request(1, "ping", {"token": 1})
            assert await peer.response(1) == [1, 1, None, {"token": 1}]
        # a frame that is an array but not a request: 103, fatal
        async with open_websocket_url(web.ws()) as ws:
            await ws.send_message(msgpack.packb([7, 7, 7]))
            received, code = await until_closed(ws)
            (frame,) = [f for message in received for f in frames_of(message)]
            assert frame[2][0]["code"] == 103
            assert "not a request or notification: [7, 7, 7]" in frame[2][0]["message"]
        assert await pong_time(web, 1) < LIVELY


@trio_test
async def test_a_binary_message_of_no_msgpack_at_all_is_named_as_such() -> None:
    """A binary message whose first byte starts no msgpack value is refused (whole, the
    session goes on) with an error that says so and names the byte, not as a cut frame."""
    async with running_web() as web, binary_socket(web.ws()) as peer:
        await peer.ws.send_message(b"\xc1\xc1\xc1")
        frame = await peer.frame()
        assert frame[:2] == [2, "error"]
        error = frame[2][0]
        assert error["code"] == 103
        await peer.request(1, "ping", {"token": 1})  # refused whole: the session goes on
        assert (await peer.response(1))[3] == {"token": 1}
        assert "ends inside" not in error["message"], error["message"]
        assert "0xc1" in error["message"], error["message"]


async def raw_socket(web: Web) -> tuple[trio.SocketStream, WSConnection]:
    """A WebSocket opened by hand (wsproto), to send frames no library would."""
    url = urlsplit(web.ws())
    assert url.hostname is not None
    assert url.port is not None
    stream = await trio.open_tcp_stream(url.hostname, url.port)
    return stream, await upgraded(stream, f"{url.hostname}:{url.port}")


def masked_text_frame(payload: bytes) -> bytes:
    """One final text frame from a client (masked), of any bytes, valid UTF-8 or not."""
    assert len(payload) < 126
    mask = bytes([0x5A, 0xA5, 0x3C, 0xC3])
    return (
        bytes([0x81, 0x80 | len(payload)])
        + mask
        + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
    )


@trio_test
async def test_a_text_message_of_invalid_utf8_closes_that_socket_only() -> None:
    """A WebSocket text message must be UTF-8 (RFC 6455 §8.1): the socket ends there (the
    ASGI server drops it before the protocol sees a byte), and the server goes on."""
    with capture_logs() as logs:
        async with running_web() as web:
            stream, ws = await raw_socket(web)
            try:
                await stream.send_all(masked_text_frame(b"ping 1"))
                got: list[Any] = []
                with trio.fail_after(5):
                    while not any(isinstance(e, TextMessage) for e in got):
                        ws.receive_data(await stream.receive_some(65536))
                        got.extend(ws.events())
                assert [e.data for e in got if isinstance(e, TextMessage)] == ["pong 1\n"]
                await stream.send_all(masked_text_frame(b"ping \xff\xfe 2\nping 3"))
                answered: list[str] = []
                with trio.fail_after(5):
                    while data := await stream.receive_some(65536):
                        ws.receive_data(data)
                        answered += [e.data for e in ws.events() if isinstance(e, TextMessage)]
                assert answered == []  # nothing of the bad message was run
            finally:
                await stream.aclose()
            assert await wait_for(lambda: not web.server.connections, 3)
            assert await pong_time(web, 4) < LIVELY
    assert not faults(logs), faults(logs)


BAD_TEXT = (
    ("ping\x004", "error 100 unknown-command unknown command 'ping\\x004'"),
    ("\x00", "error 100 unknown-command unknown command '\\x00'"),
    ("\x01\x02\x7f", "error 100 unknown-command unknown command '\\x01\\x02\\x7f'"),
    ("\x1b[2J\x1b[H", "error 100 unknown-command unknown command '\\x1b[2J\\x1b[H'"),
    ("ping \x00", "error 101 bad-arguments ping: token '\\x00' is not a whole number"),
    ("query \x07moves", "error 101 bad-arguments query: '\\x07moves' is not one of "),
    ("\ufeffping 1", "error 100 unknown-command unknown command '\\ufeffping'"),
    ("play \x00c5", "error 200 no-game"),
)
"""Text messages of control characters, NUL, an escape sequence, a byte-order mark; each
with the start of the line it must get."""


@trio_test
async def test_text_with_control_characters_gets_errors_that_quote_it_escaped() -> None:
    async with running_web() as web, lines_socket(web.ws()) as peer:
        for sent, _ in BAD_TEXT:
            await peer.send(sent)
        await peer.send("ping 9")
        got = [await peer.line() for _ in range(len(BAD_TEXT) + 1)]
        for (sent, expected), line in zip(BAD_TEXT, got[:-1], strict=True):
            assert line.startswith(expected), (sent, line)
        assert got[-1] == "pong 9"  # the session goes on
        await peer.quiet()
        # no reply carries a raw control character back to the page
        for message in peer.messages:
            assert isinstance(message, str)
            assert not [c for c in message if (ord(c) < 0x20 and c != "\n") or c == "\x7f"]


@trio_test
async def test_only_spaces_and_tabs_separate_tokens() -> None:
    """§4.2: WSP = SP | HTAB and a token is any character but white space, so other
    Unicode white space and control characters stay inside their token."""
    async with running_web() as web, lines_socket(web.ws()) as peer:
        await peer.send("ping\t1")
        assert await peer.line() == "pong 1"  # a tab is white space (§4.2)
        for separator in ("\x1f", "\x0b", "\x0c", "\x85", "\xa0", "\u2028", "\u3000"):
            await peer.send(f"ping{separator}2")
            line = await peer.line()
            assert line.startswith("error 100 unknown-command"), (separator, line)


# -- too many sockets --------------------------------------------------------------------------


@trio_test
async def test_thirty_sockets_from_one_address() -> None:
    """A peer's WebSockets have a cap below its connections': over it, a socket is closed
    with 1013 and the reason, and the peer can still load the page."""
    async with running_web() as web, AsyncExitStack() as stack:
        cap = WS_PEER_CONNECTIONS
        sockets = [await stack.enter_async_context(open_websocket_url(web.ws())) for _ in range(30)]
        answered: list[int] = []
        refused: list[tuple[int, int, str]] = []
        for i, ws in enumerate(sockets):
            try:
                await ws.send_message(f"ping {i}")
                with trio.fail_after(5):
                    assert await ws.get_message() == f"pong {i}\n"
                answered.append(i)
            except ConnectionClosed as exc:
                refused.append((i, *close_of(exc)))
                await drop(ws)
        assert answered == list(range(cap))
        assert [i for i, _, _ in refused] == list(range(cap, 30))
        for _, code, reason in refused:
            assert code == 1013
            assert reason == f"127.0.0.1 holds its limit of {cap} WebSockets"
        assert web.app.refused == 30 - cap
        # the page still loads beside them
        status, _, body = await http_get(web.url, "/")
        assert status == 200
        assert b"<html" in body.lower()
        # the first ones still work, together
        for i, ws in enumerate(sockets[:cap]):
            await ws.send_message(f"ping {100 + i}")
        for i, ws in enumerate(sockets[:cap]):
            with trio.fail_after(5):
                assert await ws.get_message() == f"pong {100 + i}\n"
        # one leaves: there is room for one more, not two
        await sockets[0].aclose()
        assert await wait_for(lambda: web.app.per_host["127.0.0.1"] == cap - 1, 3)
        again = await stack.enter_async_context(open_websocket_url(web.ws()))
        await again.send_message("ping 1")
        with trio.fail_after(5):
            assert await again.get_message() == "pong 1\n"
        async with open_websocket_url(web.ws()) as extra:
            _, code = await until_closed(extra)
            assert code == 1013


@trio_test
async def test_websockets_count_in_the_servers_connection_cap() -> None:
    """Every door counts in one cap: with two WebSockets and a TCP session open, a fourth
    connection is closed before a byte of it is read, on the web port as on the TCP port."""
    async with (
        running_web(limits=Limits(connections=3)) as web,
        text_socket(web.ws()) as a,
        text_socket(web.ws()) as b,
    ):
        for peer in (a, b):
            await peer.send("ping 1")
            assert await peer.line() == "pong 1"
        # a TCP client joins: the server's third connection
        tcp = await trio.open_tcp_stream("127.0.0.1", web.port)
        try:
            await tcp.send_all(b"ping 2\n")
            with trio.fail_after(5):
                assert await tcp.receive_some(100) == b"pong 2\n"
            assert await closed_at_the_door(web.web_port, WS_UPGRADE)
            assert await closed_at_the_door(web.port, b"isready\n")
            assert web.server.admission.refused == 2
        finally:
            await tcp.aclose()
        # the TCP session and a WebSocket leave: only b is held, and a WebSocket fits again
        await a.ws.aclose()
        assert await wait_for(lambda: web.server.admission.held == 1, 3)
        async with text_socket(web.ws()) as again:
            await again.send("ping 3")
            assert await again.line() == "pong 3"


WS_UPGRADE = (
    b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def closed_at_the_door(port: int, request: bytes) -> bool:
    """Whether a new connection to ``port`` is closed with nothing sent, whatever it asks."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        with contextlib.suppress(trio.BrokenResourceError):
            await stream.send_all(request)
        with trio.fail_after(5):
            try:
                return await stream.receive_some(100) == b""
            except trio.BrokenResourceError:
                return True  # reset: closed with the request unread


@trio_test
async def test_sockets_opened_together_respect_the_servers_connection_cap() -> None:
    """Connections count in the server's cap from the moment they are accepted, not from
    their first message: sockets opened together cannot go over it."""
    async with running_web(limits=Limits(connections=3)) as web, AsyncExitStack() as stack:
        sockets = [await stack.enter_async_context(open_websocket_url(web.ws())) for _ in range(3)]
        assert [await closed_at_the_door(web.web_port, WS_UPGRADE) for _ in range(2)] == [
            True,
            True,
        ]
        for i, ws in enumerate(sockets):
            await ws.send_message(f"ping {i}")
            with trio.fail_after(5):
                assert await ws.get_message() == f"pong {i}\n"
        assert len(web.server.connections) == 3


# -- Yin Yang: the bot's laws stay hidden ------------------------------------------------------

YINYANG = games.load("yinyang")
BOT_FIELD = 4
"""White's (p2's) law field in a Yin Yang position string (rules/yinyang.md §8.1)."""
OWN_FIELD = 3


def law_entries(field: str) -> list[tuple[str, str]]:
    """The (flag, law) pairs of a law field ("none": none; "?" entries have no law)."""
    if field == "none":
        return []
    return [(entry[0], entry[1:]) for entry in field.split(",") if entry != "?"]


def person_setup(rng: random.Random) -> str:
    """Four laws for Black under which Black has a first move (else most games end at once;
    Black's first move depends on Black's laws only, since hidden laws never block)."""
    start = YINYANG.new_state()
    setups = start.legal_moves()
    while True:
        move = setups[rng.randrange(len(setups))]
        state = start.copy()
        state.push(move)
        answers = state.legal_moves()
        state.push(answers[rng.randrange(len(answers))])
        if len(state.legal_moves()):
            return start.move_to_str(move)


def drawn_laws(drawing: list[str], heading: str) -> list[str | None]:
    """The four laws a `show` drawing draws under ``heading`` as law texts (None for ``?``):
    each is a column of 16 characters, its 2x2 cause and effect on the third and fourth
    lines (games/yinyang.py, render_state)."""
    start = next(i for i, line in enumerate(drawing) if line.startswith(heading))
    upper, lower = drawing[start + 3], drawing[start + 4]
    laws: list[str | None] = []
    for slot in range(4):
        top = upper[2 + 16 * slot : 18 + 16 * slot]
        bottom = lower[2 + 16 * slot : 18 + 16 * slot]
        if top.startswith("?"):
            laws.append(None)
            continue
        cause = top[0] + top[2] + bottom[0] + bottom[2]
        effect = "*" if top[7] == "*" else top[7] + top[9] + bottom[7] + bottom[9]
        laws.append(f"{cause}>{effect}")
    return laws


def the_referee(web: Web, before: set[Referee]) -> Referee:
    (referee,) = set(web.app.referees) - before
    return referee


def leaks(
    messages: list[Message], revealed_by: list[set[str]], bot_laws: set[str], own: set[str]
) -> list[tuple[int, str]]:
    """(message index, law) for every bot law a message held before the person's view had
    revealed it (``revealed_by[i]``: the laws revealed once message i was received)."""
    found = []
    for i, message in enumerate(messages):
        assert isinstance(message, str)
        for law in bot_laws - own:
            if law in message and law not in revealed_by[i]:
                found.append((i, law))
    return found


class LawWatch:
    """The page of one refereed Yin Yang game, watched for White's laws: what the referee holds
    against what the page's views had revealed when each message arrived."""

    def __init__(self, page: Lines, referee: Referee) -> None:
        self.page = page
        self.referee = referee
        self.bot_laws: set[str] = set()
        self.own: set[str] = set()
        self.revealed: set[str] = set()
        self.revealed_by: list[set[str]] = []
        self.moves_answers: set[int] = set()
        """Indexes of the answers to `query moves`: the person's own choices, which list
        every law text (an adaptation may write any law)."""

    def note(self) -> None:
        """Take in the messages received since the last note."""
        # what the referee holds (White's laws, even rewritten ones), and what the page
        # was shown: a position string in an answer reveals White's + laws
        fields = self.referee.state.to_string().split()
        self.bot_laws.update(law for _, law in law_entries(fields[BOT_FIELD]))
        self.own.update(law for _, law in law_entries(fields[OWN_FIELD]))
        while len(self.revealed_by) < len(self.page.messages):
            message = self.page.messages[len(self.revealed_by)]
            assert isinstance(message, str)
            for line in lines_of(message):
                self.note_view(line)
            self.revealed_by.append(set(self.revealed))

    def note_view(self, line: str) -> None:
        """The laws a line reveals if it is a view: the answer to `query position`, `play`,
        `undo`, or in `show`."""
        view = line.removeprefix("response ").removeprefix("show position: ")
        fields = view.split()
        if view != line and len(fields) == 8 and fields[0].count("/") == 3:
            for flag, law in law_entries(fields[BOT_FIELD]):
                assert flag == "+", f"a hidden law of White in a view: {line}"
                self.revealed.add(law)
            self.own.update(law for _, law in law_entries(fields[OWN_FIELD]))

    async def ask(self, command: str) -> str:
        answer = await self.page.ask(command)
        if command == "query moves":
            self.moves_answers.add(len(self.page.messages) - 1)
        self.note()
        return answer

    async def show(self) -> None:
        """`show` draws the laws as diagrams, not as text: read White's back from it."""
        await self.page.send("show")
        drawing = []
        while (line := await self.page.line()) != "showok":
            drawing.append(line.removeprefix("show "))
        self.note()
        fields = self.referee.state.to_string().split()
        if fields[BOT_FIELD] != "none":
            # White's laws drawn as far as they are revealed, the person's own in full
            white = [e[1:] if e[0] == "+" else None for e in fields[BOT_FIELD].split(",")]
            assert drawn_laws(drawing, "White (p2) laws") == white
            black = [e[1:] for e in fields[OWN_FIELD].split(",")]
            assert drawn_laws(drawing, "Black (p1) laws") == black

    async def play_person(self, rng: random.Random) -> None:
        """Black's turn: a random move of those listed (or a setup, too many to list)."""
        moves = await self.ask("query moves")
        if moves.startswith("count ") and " moves " not in moves:
            token = person_setup(rng)  # the setup decision: too many to list
        else:
            listed = moves.split(" moves ", 1)[-1] if moves.startswith("count ") else moves
            token = rng.choice(listed.split())
        position = await self.ask(f"play {token}")
        assert position == await self.ask("query position")

    async def play_bot(self) -> None:
        """White's turn: the bot moves."""
        await self.page.send("go")
        best = await self.page.line()
        assert best.startswith("bestmove "), best
        assert best != "bestmove none"
        self.note()

    def check_no_leaks(self) -> None:
        """No message showed one of White's laws before it was revealed (query moves aside)."""
        final = self.referee.state.to_string().split()[BOT_FIELD].split(",")
        assert len(final) == 4
        assert {entry[1:] for entry in final} <= self.bot_laws
        messages = self.page.messages
        checked = [m for i, m in enumerate(messages) if i not in self.moves_answers]
        checked_by = [r for i, r in enumerate(self.revealed_by) if i not in self.moves_answers]
        found = leaks(checked, checked_by, self.bot_laws, self.own)
        assert not found, f"White's laws shown before they were revealed: {found}"
        # what White never revealed appears in no message at all (query moves aside)
        never = self.bot_laws - self.revealed - self.own
        text = "".join(str(m) for m in checked)
        assert not [law for law in never if law in text]

    async def check_last_view(self) -> None:
        """The page's last view shows White's laws exactly as far as they are revealed."""
        final = self.referee.state.to_string().split()[BOT_FIELD].split(",")
        view = (await self.page.ask("query position")).split()
        assert view[BOT_FIELD].split(",") == [e if e[0] == "+" else "?" for e in final]
        assert view[OWN_FIELD] == self.referee.state.to_string().split()[OWN_FIELD]


async def play_yinyang(web: Web, rng: random.Random) -> tuple[int, set[str], set[str]]:
    """Play one refereed Yin Yang game to its end as Black against bot:random (seeded by the
    server's ``seeds``: the game replays), checking that no message to the page carries one
    of White's laws before White revealed it. Returns the plies played, the laws White
    revealed and all the laws it held (an adaptation rewrites one, hidden again)."""
    before = set(web.app.referees)
    query = urlencode({"game": "yinyang", "opponent": "bot:random", "side": "p1"})
    async with lines_socket(web.ws(query)) as page:
        assert await page.ask("query turn") == "p1"
        watch = LawWatch(page, the_referee(web, before))
        plies = 0
        while plies < 1500:
            if plies % 10 == 3:
                await watch.show()
            await watch.ask("query position")
            if await watch.ask("query gameover") == "true":
                break
            if await watch.ask("query turn") == "p1":
                await watch.play_person(rng)
            else:
                await watch.play_bot()
            plies += 1
        assert await watch.ask("query gameover") == "true", "the game did not end"
        await watch.ask("query outcome")
        await watch.ask("query played")
        await watch.show()
        watch.check_no_leaks()
        await watch.check_last_view()
        return plies, watch.revealed, watch.bot_laws


@trio_test
async def test_yinyang_the_page_never_learns_the_bots_hidden_laws() -> None:
    rng = random.Random(11)
    plies = 0
    seen_revealed = seen_hidden = seen_rewritten = False
    async with running_web(seeds=random.Random(1)) as web:
        for _ in range(20):
            played, revealed, held = await play_yinyang(web, rng)
            plies += played
            seen_revealed = seen_revealed or bool(revealed)
            seen_hidden = seen_hidden or bool(held - revealed)
            seen_rewritten = seen_rewritten or len(held) > 4
            if seen_revealed and seen_hidden and seen_rewritten and plies >= 200:
                break
    # the games checked what matters: laws revealed, laws kept, laws rewritten
    assert seen_revealed, "the bot revealed no law: nothing was checked"
    assert seen_hidden
    assert seen_rewritten
    assert plies >= 200


def test_helpers_find_a_leak() -> None:
    """The secrecy check itself: a law shown before its reveal, or never revealed, is found."""
    law = "bwbb>b.bb"
    messages: list[Message] = ["response x\n", f"response {law}\n", f"response +{law}\n"]
    assert leaks(messages, [set(), set(), {law}], {law}, set()) == [(1, law)]
    assert leaks(messages, [set(), set(), {law}], {law}, {law}) == []
    assert law_entries("+a>b,-c>*,?,?") == [("+", "a>b"), ("-", "c>*")]
    drawing = games.load("yinyang").state_from_string(ADAPTING).render().split("\n")
    assert drawn_laws(drawing, "Black (p1) laws") == [
        "bwbb>b.bb",
        "..bb>bbbb",
        "bwbw>*",
        "bw.w>b..w",
    ]
    assert drawn_laws(drawing, "White (p2) laws") == [
        "wbww>w.ww",
        "..ww>wwww",
        "wbwb>*",
        ".bb.>wbbw",
    ]


async def handshake_status(
    base: str, *origins: bytes, host: str | None = None, path: str = "/ws"
) -> int:
    """The HTTP status the web front at ``base`` (``http://HOST:PORT/``) answers a WebSocket
    handshake to ``path`` that names ``origins`` (each an ``Origin`` header) and ``host``
    (default: the address the test reaches it at): 101 when it accepts it."""
    url = urlsplit(base)
    assert url.hostname is not None
    assert url.port is not None
    stream = await trio.open_tcp_stream(url.hostname, url.port)
    try:
        ws = WSConnection(ConnectionType.CLIENT)
        request = WsRequest(
            host=host or f"{url.hostname}:{url.port}",
            target=path,
            extra_headers=[(b"origin", origin) for origin in origins],
        )
        await stream.send_all(ws.send(request))
        with trio.fail_after(5):
            while True:
                ws.receive_data(await stream.receive_some(65536))
                for event in ws.events():
                    if isinstance(event, AcceptConnection):
                        return 101
                    if isinstance(event, RejectConnection):
                        return event.status_code
    finally:
        await trio.aclose_forcefully(stream)


@trio_test
async def test_another_sites_page_cannot_open_a_websocket_nor_take_the_peers_share() -> None:
    """A page of another site, which the browser lets open a WebSocket to any address and
    names in ``Origin``, is refused before it holds a socket (HTTP 403), however many times it
    tries; the server's own page (``Origin`` its own host) and programs (no ``Origin``) are
    served. Cross-site WebSocket hijacking, as the attacker's page would try it."""
    peer_cap = 4
    async with running_web(peer_cap=peer_cap) as web:
        own = f"http://127.0.0.1:{web.web_port}".encode()
        for origin in (
            b"http://evil.example",
            b"http://127.0.0.2:" + str(web.web_port).encode(),
            b"http://127.0.0.1:1",
            b"null",
            own.replace(b"http://", b"ftp://"),
        ):
            for _ in range(peer_cap + 2):
                assert await handshake_status(web.url, origin) == 403, origin
        # DNS rebinding: the attacker's own name pointed at the server's address, so that
        # its page's Origin and Host agree
        rebound = f"rebind.evil.example:{web.web_port}"
        assert await handshake_status(web.url, f"http://{rebound}".encode(), host=rebound) == 403
        # two Origins, the server's own last
        assert await handshake_status(web.url, b"http://evil.example", own) == 403
        assert web.app.per_host == {}
        # a name the server is told is its own (--web-name), and localhost, are taken
        web.app.names = frozenset({"games.example.org"})
        named = f"games.example.org:{web.web_port}"
        assert await handshake_status(web.url, f"https://{named}".encode(), host=named) == 101
        local = f"localhost:{web.web_port}"
        assert await handshake_status(web.url, f"http://{local}".encode(), host=local) == 101
        # the server's own page, and a program, are served: the attempts took no share
        async with AsyncExitStack() as stack:
            for i in range(peer_cap):
                headers = [(b"Origin", own)] if i % 2 else []
                ws = await stack.enter_async_context(
                    open_websocket_url(web.ws(), extra_headers=headers, connect_timeout=5)
                )
                await ws.send_message("ping 1")
                assert await ws.get_message() == "pong 1\n"


@trio_test
async def test_an_origin_that_is_no_url_is_refused_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An ``Origin`` (or ``Host``) with an unclosed ``[`` made the URL parser raise: hypercorn
    answered 500 and logged a traceback, some 2.9 KB of the server's log a connection, at
    will. It is refused as another site's page is."""
    async with running_web() as web:
        for origin, host in ((b"http://[", None), (b"http://[::1", "[::1"), (b"http://x", "[x")):
            for _ in range(3):
                assert await handshake_status(web.url, origin, host=host) == 403, origin
        assert await handshake_status(web.url, b"http://[", path="/events") == 403
        assert web.app.per_host == {}
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@trio_test
async def test_another_sites_page_cannot_watch_an_event_either() -> None:
    """A watch page's ``/events`` takes the same rule: another site's page is refused before
    it is a WebSocket, the event's own page is served."""
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        page = await nursery.start(
            functools.partial(
                serve_watch, Feed(), stop, host="127.0.0.1", port=0,
                admission=event_admission(2),
            )
        )  # fmt: skip
        url = urlsplit(page)
        own = f"http://{url.netloc}".encode()
        assert await handshake_status(page, b"http://evil.example", path="/events") == 403
        rebound = f"rebind.evil.example:{url.port}"
        assert (
            await handshake_status(page, f"http://{rebound}".encode(), host=rebound, path="/events")
            == 403
        )
        assert await handshake_status(page, own, path="/events") == 101
        stop.set()

"""The web port among many clients (docs/protocol.md §2, "HTTP"; docs/security.md, "Network
clients"): admitted connections, their timeouts, the page's files, and refereed games within
the server's limits, attacked as clients that hold, trickle or never read would."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import games
from bots.engine import SearchResult
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
from enginesrv.serve.settings import SessionConfig
from enginesrv.web.gamespec import GameSpec, GameSpecError, parse_game_spec
from enginesrv.web.http import GuardedStream, HttpTimeouts
from enginesrv.web.referee import Referee
from tests.enginesrv.peer import connect_from
from tests.processes import ended, line_within, rest_within
from tests.trio_run import trio_test
from tests.web.test_websocket import closed_with
from tests.web.test_websocket_hostile import WS_UPGRADE, wait_for
from tests.web.webpeer import http_get, running_web, text_socket

SHORT = HttpTimeouts(keep_alive=0.5, read=0.5, write=0.5)


async def connect(port: int, local: str = "127.0.0.1") -> trio.SocketStream:
    return await connect_from(local, "127.0.0.1", port)


async def read_response(stream: trio.SocketStream) -> tuple[bytes, bytes]:
    """One whole HTTP response (its head and its body, by its Content-Length)."""
    data = b""
    with trio.fail_after(5):
        while b"\r\n\r\n" not in data:
            chunk = await stream.receive_some(65536)
            assert chunk, f"closed after {data!r}"
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            chunk = await stream.receive_some(65536)
            assert chunk
            body += chunk
    return head, body


async def closed_by_server(stream: trio.SocketStream, within: float = 5) -> bool:
    with trio.fail_after(within):
        try:
            return await stream.receive_some(65536) == b""
        except trio.BrokenResourceError:
            return True


@trio_test
async def test_an_idle_keep_alive_connection_is_closed() -> None:
    """A client that fetches a file and keeps its connection does not keep it for ever."""
    async with running_web(timeouts=SHORT) as web:
        stream = await connect(web.web_port)
        async with stream:
            request = b"GET /static/app.js HTTP/1.1\r\nHost: x\r\n\r\n"
            await stream.send_all(request)
            head, body = await read_response(stream)
            assert head.startswith(b"HTTP/1.1 200")
            assert b"import" in body or b"function" in body
            await stream.send_all(request)  # kept alive: a second request is answered
            head, _ = await read_response(stream)
            assert head.startswith(b"HTTP/1.1 200")
            assert await closed_by_server(stream)
        assert await wait_for(lambda: web.server.admission.held == 0, 5)


@trio_test
async def test_a_request_whose_headers_never_end_is_closed() -> None:
    async with running_web(timeouts=SHORT) as web:
        stream = await connect(web.web_port)
        async with stream:
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            with trio.fail_after(5):
                closed = False
                while not closed:  # a header byte now and then: never a whole request
                    try:
                        await stream.send_all(b"X")
                    except trio.BrokenResourceError:
                        break
                    with trio.move_on_after(0.1):
                        try:
                            closed = await stream.receive_some(100) == b""
                        except trio.BrokenResourceError:
                            # closed with our last byte unread: the kernel resets it
                            closed = True
            assert await wait_for(lambda: web.server.admission.held == 0, 5)


@trio_test
async def test_a_write_that_does_not_end_closes_its_connection() -> None:
    left, right = trio.socket.socketpair()
    for end in (left, right):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    closed: list[bool] = []
    guarded = GuardedStream(trio.SocketStream(left), 0, 0.3, lambda: closed.append(True))
    with trio.fail_after(5), pytest.raises(trio.BrokenResourceError, match=r"within 0\.3 s"):
        await guarded.send_all(b"x" * (4 << 20))  # the other end never reads
    assert closed == [True]
    right.close()


@trio_test
async def test_the_pages_files_come_from_memory_with_etags() -> None:
    async with running_web() as web:
        status, headers, body = await http_get(web.url, "/static/app.js")
        assert status == 200
        assert headers["content-type"].startswith("text/javascript")
        tag = headers["etag"]
        stream = await connect(web.web_port)
        async with stream:
            await stream.send_all(
                f"GET /static/app.js HTTP/1.1\r\nHost: x\r\nIf-None-Match: {tag}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            with trio.fail_after(5):
                reply = b""
                while chunk := await stream.receive_some(65536):
                    reply += chunk
            assert reply.startswith(b"HTTP/1.1 304")
        for path in ("/static/../../pyproject.toml", "/static/nothing.js", "/static/"):
            status, _, _ = await http_get(web.url, path)
            assert status == 404, path
        assert len(body) > 1000


# -- refereed games within the server's limits -------------------------------------------------


def test_a_refereed_game_keeps_to_the_servers_time_limits() -> None:
    with pytest.raises(GameSpecError, match=r"movetime '60001': .* 1 to 60000 \(limit movetime\)"):
        parse_game_spec("game=yoxii&opponent=bot:random&movetime=60001")
    with pytest.raises(GameSpecError, match=r"movetime '9{20}': .* 1 to 60000"):
        parse_game_spec("game=yoxii&opponent=bot:random&movetime=" + "9" * 30)
    with pytest.raises(GameSpecError, match=r"limit of 86400 s on a clock \(limit clock\)"):
        parse_game_spec("game=yoxii&opponent=bot:random&tc=86401")
    with pytest.raises(GameSpecError, match=r"limit of 60 s on a clock"):
        parse_game_spec("game=yoxii&tc=10%2B61", max_clock=60_000)
    spec = parse_game_spec("game=yoxii&opponent=bot:random&movetime=60000&tc=86400")
    assert spec is not None
    assert spec.movetime == 60_000


@trio_test
async def test_a_refereed_games_address_over_a_limit_is_closed_with_4400() -> None:
    async with running_web() as web:
        code, reason = await closed_with(web, "game=yoxii&opponent=bot:random&movetime=3600000")
        assert code == 4400
        assert "(limit movetime)" in reason


@trio_test
async def test_a_refereed_game_is_adjudicated_at_the_ply_limit() -> None:
    """Two people cannot grow a refereed game without end: at the server's ply limit it is a
    draw, as the arbiter adjudicates its --max-plies."""
    config = SessionConfig(default_bot="alphabeta", max_plies=4)
    async with running_web(config=config) as web, text_socket(web.ws("game=yoxii")) as page:
        state = games.load("yoxii").new_state()
        for _ in range(4):
            token = state.move_to_str(state.legal_moves()[0])
            state.push(state.legal_moves()[0])
            assert await page.ask(f"play {token}") == state.to_string()
        assert await page.ask("query outcome") == "winner=draw reason=max-plies"
        await page.send(f"play {state.move_to_str(state.legal_moves()[0])}")
        assert await page.line() == "error 203 game-over play: the game is over (draw (max-plies))"
        await page.send("undo")
        assert await page.line() == (
            "error 203 game-over undo: the game ended by max-plies, which is final"
        )


class WaitingRunner:
    """A search runner whose searches first wait ``wait`` seconds for a worker, then search
    ``search`` seconds (on the test's clock), then answer the first legal move."""

    def __init__(self, wait: float, search: float) -> None:
        self.wait = wait
        self.search_time = search

    async def search(self, job: SearchJob, **kwargs: Any) -> SearchOutcome:
        on_hold: Callable[[bool], None] | None = kwargs.get("on_hold")
        await trio.sleep(self.wait)
        if on_hold is not None:
            on_hold(True)
        await trio.sleep(self.search_time)
        state = games.load(job.game).state_from_string(job.position)
        move = state.legal_moves()[0]
        return SearchOutcome(SearchResult(move, state.move_to_str(move)))


def test_a_refereed_bots_clock_stops_while_it_waits_for_a_worker() -> None:
    """A bot kept waiting for a worker (the workers busy with other peers' searches) loses
    none of its clock to the wait: its clock runs only while its search holds a worker."""

    async def main() -> None:
        spec = parse_game_spec("game=yoxii&opponent=bot:random&side=p2&tc=10")
        assert isinstance(spec, GameSpec)
        referee = Referee(spec, WaitingRunner(wait=30.0, search=0.25))
        await referee.start()
        referee.tick()
        shown = await referee.bot_decision()
        assert shown is not None
        assert referee.clocks is not None
        assert referee.clocks.remaining[0] == pytest.approx(10_000 - 250, abs=1)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# -- descriptors -------------------------------------------------------------------------------


LOW_DESCRIPTORS = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160)); "
    "os.execv(sys.executable, [sys.executable, '-m', 'enginesrv.cli', *sys.argv[1:]])"
)
"""Runs the command line given after it with a limit of 160 descriptors."""


def test_an_http_hoard_under_a_low_descriptor_limit_leaves_a_fresh_peer_served() -> None:
    """300 connections from 10 addresses that fetch a file and hold their connections, under
    a limit of 160 descriptors: the server keeps descriptors for itself, and a fresh address
    is served on the TCP port, the page and a WebSocket."""
    server = subprocess.Popen(
        [sys.executable, "-c", LOW_DESCRIPTORS, "serve", "--port", "0", "--web", "0",
         "--workers", "1", "--game", "yoxii"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        listening = line_within(server).split()[1]
        page = line_within(server).split()[1]
        tcp_port = int(listening.rsplit(":", 1)[1])
        web_port = int(page.rstrip("/").rsplit(":", 1)[1])

        async def main() -> None:
            hoard: list[trio.SocketStream] = []
            try:
                for number in range(300):
                    stream = await connect(web_port, f"127.0.6.{number % 10 + 1}")
                    hoard.append(stream)
                    with contextlib.suppress(trio.BrokenResourceError):
                        await stream.send_all(b"GET /static/app.js HTTP/1.1\r\nHost: x\r\n\r\n")
                await trio.sleep(0.5)
                fds = len(os.listdir(f"/proc/{server.pid}/fd"))
                assert fds < 160 - 30, f"{fds} descriptors open"
                fresh = await connect(tcp_port, "127.0.7.1")
                async with fresh:
                    await fresh.send_all(b"isready\n")
                    with trio.fail_after(5):
                        assert await fresh.receive_some(100) == b"readyok\n"
                status, _, _ = await http_get(page, "/", local="127.0.7.2")
                assert status == 200
                ws = await connect(web_port, "127.0.7.3")
                async with ws:
                    await ws.send_all(WS_UPGRADE)
                    with trio.fail_after(5):
                        assert (await ws.receive_some(100)).startswith(b"HTTP/1.1 101")
            finally:
                for stream in hoard:
                    await trio.aclose_forcefully(stream)

        trio.run(main)
    finally:
        try:
            assert ended(server, 15) == 0  # SIGTERM: a clean stop
        finally:
            if server.stdout is not None:
                server.stdout.close()


FAKE = Path(__file__).parent.parent / "enginesrv" / "fakes" / "fake_engine.py"


def test_watchers_of_an_event_are_refused_before_its_engines_lack_a_descriptor(
    tmp_path: Path,
) -> None:
    """A match of external engines with its watching page, under a limit of 160
    descriptors: 300 connections hoard the page while the engines are started game after
    game, and no engine fails to start for it (none stalls or crashes): the page's
    connections are admitted within the descriptors the games leave."""
    engine = f"cmd:{sys.executable} {FAKE} good"
    out = tmp_path / "event"
    match = subprocess.Popen(
        [sys.executable, "-c", LOW_DESCRIPTORS, "match", "yoxii", engine, engine,
         "--games", "24", "--concurrency", "2", "--web", "0", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        page = line_within(match).split()[1]
        web_port = int(page.rstrip("/").rsplit(":", 1)[1])

        async def hoard() -> None:
            held: list[trio.SocketStream] = []
            try:
                for number in range(300):
                    try:
                        stream = await connect(web_port, f"127.0.8.{number % 10 + 1}")
                    except OSError:
                        break  # the event is over: its page is gone
                    held.append(stream)
                    with contextlib.suppress(trio.BrokenResourceError):
                        await stream.send_all(b"GET /static/app.js HTTP/1.1\r\nHost: x\r\n\r\n")
                with trio.move_on_after(20):
                    while match.poll() is None:
                        await trio.sleep(0.1)
            finally:
                for stream in held:
                    await trio.aclose_forcefully(stream)

        trio.run(hoard)
        assert match.wait(timeout=60) == 0, rest_within(match, pipe="stderr")
    finally:
        ended(match)
        for pipe in (match.stdout, match.stderr):
            if pipe is not None:
                pipe.close()
    with sqlite3.connect(out / "results.sqlite") as db:
        reasons = sorted({row[0] for row in db.execute("SELECT reason FROM games")})
        count = db.execute("SELECT count(*) FROM games").fetchone()[0]
    assert count == 24
    assert not {"stall", "crash", "time-forfeit"} & set(reasons), reasons


@asynccontextmanager
async def hogged_pool(slice_seconds: float) -> AsyncIterator[WorkerPool]:
    """A pool of one real worker, which another address holds with an infinite search until
    the block ends."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, per_peer=1, slice_seconds=slice_seconds)
        await pool.start()
        hog_stop = trio.Event()
        yinsh = games.load("yinsh").new_state().to_string()
        hog = SearchJob(session="hog", game="yinsh", position=yinsh, bot="alphabeta", options=())
        nursery.start_soon(
            functools.partial(
                pool.search, hog, on_info=lambda info: None, stop=hog_stop,
                hard_deadline=None, peer="10.9.9.9",
            )
        )  # fmt: skip
        try:
            yield pool
        finally:
            hog_stop.set()
            with trio.CancelScope(shield=True):
                await pool.aclose()


@trio_test
async def test_a_refereed_bot_kept_waiting_by_a_real_pool_keeps_its_clock() -> None:
    """With real workers: another address holds the only worker longer than the bot's whole
    clock; the bot waits (its clock stopped), then moves, and has not lost on time."""
    async with hogged_pool(slice_seconds=2.0) as pool:
        await trio.sleep(0.3)
        spec = parse_game_spec("game=yoxii&opponent=bot:random&side=p2&tc=1")
        assert isinstance(spec, GameSpec)
        referee = Referee(spec, pool, peer="10.8.8.8")
        await referee.start()
        referee.tick()
        with trio.fail_after(30):
            shown = await referee.bot_decision()
        assert shown is not None, referee.forfeit_detail
        assert referee.outcome() is None
        assert referee.clocks is not None
        assert 0 < referee.clocks.remaining[0] < 1000  # the bot, p1: only its search counted
        assert pool.suspended == 1


H2C_HEAD = (
    b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
    b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"
)


@pytest.mark.parametrize(
    "chunks",
    [
        [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
        [b"PR", b"I * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
        [H2C_HEAD + b"Upgrade: h2c\r\n\r\n"],
        [H2C_HEAD + b"Upgrade:\r\n h2c\r\n\r\n"],  # a folded value
        [H2C_HEAD + b"upgrade:\r\n\t\r\n  H2C\r\n\r\n"],
        [H2C_HEAD + b"Upgrade:" + b" " * 100, b" " * 10 + b"h2c\r\n\r\n"],  # split
        [b"GET /static/app.js HTTP/1.1\r\nHost: x\r\n\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
        [
            b"GET /static/app.js HTTP/1.1\r\nHost: x\r\n\r\n"
            + H2C_HEAD
            + b"Upgrade:\r\n\th2c\r\n\r\n"
        ],
    ],
)
def test_http2_is_not_served(chunks: list[bytes]) -> None:
    """HTTP/2 would carry many WebSockets, each a session, on one admitted connection, and
    streams the timeouts do not see: its preface or an upgrade to it (however folded or
    split) closes the connection."""

    async def main() -> None:
        async with running_web() as web:
            stream = await connect(web.web_port)
            async with stream:
                for chunk in chunks:
                    with contextlib.suppress(trio.BrokenResourceError):
                        await stream.send_all(chunk)
                    await trio.sleep(0.1)
                got = b""
                with trio.fail_after(5):
                    try:
                        while chunk := await stream.receive_some(65536):
                            got += chunk
                    except trio.BrokenResourceError:
                        pass
                assert b" 101 " not in got
                assert b"HTTP/2" not in got
                assert got == b"" or got.startswith(b"HTTP/1.1 200")

    trio.run(main)


@trio_test
async def test_a_page_that_leaves_while_its_bot_waits_for_a_worker_is_gone_at_once() -> None:
    """The bot waits for the only worker (another address holds it); its page closes: the
    bot's search leaves the queue and the session ends at once, without waiting for a worker
    to search for no one."""
    async with hogged_pool(slice_seconds=60.0) as pool, running_web(runner=pool) as web:
        query = "game=yoxii&opponent=bot:random&side=p2&tc=60"
        async with text_socket(web.ws(query)) as page:
            await page.send("go")
            assert await wait_for(lambda: bool(pool._share.waiting), 5)
        assert await wait_for(lambda: not web.server.connections, 5)
        assert not pool._share.waiting
        assert pool.busy == 1  # the hog's, still

"""The server under pressure: one best move per ``go`` whatever happens (stops that overtake
their search, a client leaving, a worker that crashes or ignores its stop), pipelined bursts
and backpressure, the output cap and reply sizes, admission, per-peer search caps, options
that take effect as reported, the hash budget, and a flood that must not stall other clients.

Real sockets on port 0 and, where the pool is the subject, real worker processes (or the fake
worker of ``fakes/fake_worker.py``). Every wait is bounded and waits for the event itself.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import trio
import trio.testing

import games
from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
from enginesrv.search.worker import BOTS_PER_WORKER, _Worker
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server
from enginesrv.serve.session import Session
from enginesrv.serve.settings import SessionConfig
from protocol import messages as m
from tests.enginesrv.peer import (
    MsgpackPeer,
    TextPeer,
    ThreadRunner,
    open_stream,
    running_server,
    serving,
)
from tests.enginesrv.test_pool import job, settled
from tests.trio_run import trio_test

FAKE_WORKER = Path(__file__).parent / "fakes" / "fake_worker.py"
VIEW = "bwww/bwww/bbbw/bbbw b start -bbbb>*,-..w.>bbw.,-wwww>w.ww,-.ww.>bwwb ?,?,?,? 8 10 1"
"""Black's view of a Yin Yang position, Black to act: its 3244 moves are known."""
HIDDEN = "L1@a1:L2=bwbw>bwb."
"""After this move of Black's, White acts with laws that are hidden in the view."""
YOXII = games.load("yoxii")
YOXII_START = YOXII.new_state().to_string()


def _after(game: str, *tokens: str) -> str:
    state = games.load(game).new_state()
    for token in tokens:
        state.push(state.parse_move(token))
    return state.to_string()


AFTER_C5 = _after("yoxii", "c5")


def legal(game: str, position: str | None, token: str) -> bool:
    """Whether ``token`` is a legal move of ``position`` (None: the start position)."""
    rules = games.load(game)
    state = rules.new_state() if position is None else rules.state_from_string(position)
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


def sorted_moves(game: str, position: str) -> list[str]:
    state = games.load(game).state_from_string(position)
    return sorted(state.move_to_str(move) for move in state.legal_moves())


def bestmoves(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("bestmove")]


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("error", "invalidmove"))]


def depths(lines: list[str]) -> list[int]:
    """The depths of the ``info depth N ...`` lines."""
    return [int(line.split()[2]) for line in lines if line.startswith("info depth ")]


async def ready(peer: TextPeer) -> list[str]:
    """Send ``isready``; the lines up to and including its ``readyok``."""
    await peer.send("isready")
    return await peer.until("readyok")


def is_waiting(line: str) -> bool:
    """Whether a line is the ``info string`` that says a search waits for a worker."""
    return line.startswith("info string") and "waiting" in line


async def waiting_for_a_worker(peer: TextPeer) -> None:
    """Read until the server says that the search waits for a worker."""
    while not is_waiting(await peer.line()):
        pass


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (at most ``timeout`` seconds) until ``check()`` holds."""
    with trio.fail_after(timeout):
        while not check():
            await trio.sleep(0.01)


def pool_of(server: Server) -> WorkerPool:
    assert isinstance(server.runner, WorkerPool)
    return server.runner


def pack(*frames: list[Any]) -> bytes:
    return b"".join(msgpack.packb(frame) for frame in frames)


async def frames_until(peer: MsgpackPeer, msgid: int) -> list[Any]:
    """Frames up to and including the response to ``msgid``."""
    out = []
    while True:
        frame = await peer.frame()
        out.append(frame)
        if frame[0] == 1 and frame[1] == msgid:
            return out


def responses(frames: list[Any], msgid: int) -> list[Any]:
    return [f for f in frames if f[0] == 1 and f[1] == msgid]


@contextlib.asynccontextmanager
async def fake_pool(mode: str, *, grace: float = 0.2) -> Any:
    """A pool of one fake worker (``fakes/fake_worker.py MODE``)."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, command=(sys.executable, str(FAKE_WORKER), mode), grace=grace)
        await pool.start()
        try:
            yield pool
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


@contextlib.asynccontextmanager
async def hand_made_pool(size: int, **kwargs: Any) -> Any:
    """A pool of real workers built by the test (to pass as ``runner=``)."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, size, **kwargs)
        await pool.start()
        try:
            yield pool
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


# -- 1. exactly one best move per go ---------------------------------------------------------


@trio_test
async def test_text_stops_that_overtake_or_precede_commands_give_one_bestmove_each() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (server, port):
        peer = await TextPeer.connect(port)
        # go infinite and its stop in one write
        await peer.send("go infinite", "stop")
        lines = await peer.until("bestmove")
        assert legal("yoxii", None, lines[-1].split()[1]), lines
        lines = await ready(peer)
        assert bestmoves(lines) == [], lines
        # stop, then position and go at once: they wait for the stopped search's bestmove
        await peer.send("go infinite")
        await peer.until("info depth")
        await peer.send(
            "stop", "position startpos moves c5", "go depth 2", "query position", "isready"
        )
        lines = await peer.until("readyok")
        if len(bestmoves(lines)) < 2:
            lines += await peer.until("bestmove")
        assert errors(lines) == [], lines
        first, second = bestmoves(lines)
        assert legal("yoxii", None, first.split()[1]), lines
        assert legal("yoxii", AFTER_C5, second.split()[1]), lines
        assert lines.index(first) < lines.index(f"response {AFTER_C5}"), lines
        lines = await ready(peer)
        assert bestmoves(lines) == [], lines
        # without a stop, a position during a search is still refused
        await peer.send("go infinite", "position startpos", "query position")
        lines = await peer.until("response ")
        assert errors(lines)[0].startswith("error 204 search-in-progress position:"), lines
        assert lines[-1] == f"response {AFTER_C5}"
        await peer.send("stop")
        assert len(bestmoves(await peer.until("bestmove"))) == 1
        assert bestmoves(await ready(peer)) == []
        await settled(pool_of(server))


@trio_test
async def test_msgpack_stops_that_overtake_or_precede_commands_give_one_response_each() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (server, port):
        peer = await MsgpackPeer.connect(port)
        # go infinite and a stop notification in one write
        await peer.stream.send_all(
            pack([0, 1, "go", [{"infinite": True}]], [2, "stop", [{}]], [0, 2, "isready", [{}]])
        )
        frames = await frames_until(peer, 2)
        if not responses(frames, 1):
            frames += await frames_until(peer, 1)
        [answer] = responses(frames, 1)
        assert answer[2] is None, answer
        assert legal("yoxii", None, answer[3]["move"])
        # a stop by id, then position, go and query at once
        await peer.request(3, "go", {"infinite": True})
        await peer.request(4, "isready")
        await frames_until(peer, 4)
        await peer.stream.send_all(
            pack(
                [2, "stop", [{"search": 3}]],
                [0, 5, "position", [{"moves": ["c5"]}]],
                [0, 6, "go", [{"depth": 2}]],
                [0, 7, "query", [{"what": "position"}]],
            )
        )
        frames = await frames_until(peer, 7)
        if not responses(frames, 6):
            frames += await frames_until(peer, 6)
        ids = [f[1] for f in frames if f[0] == 1]
        assert sorted(ids) == [3, 5, 6, 7], frames
        assert ids.index(3) < ids.index(5), frames  # the position waited for the best move
        by_id = {f[1]: f for f in frames if f[0] == 1}
        assert by_id[3][2] is None
        assert legal("yoxii", None, by_id[3][3]["move"])
        assert by_id[5] == [1, 5, None, {}]
        assert by_id[6][2] is None
        assert legal("yoxii", AFTER_C5, by_id[6][3]["move"])
        assert by_id[7] == [1, 7, None, {"value": AFTER_C5}]
        assert [f for f in frames if f[0] == 2 and f[1] == "error"] == []
        # nothing more for any of those ids
        await peer.request(8, "isready")
        assert [f for f in await frames_until(peer, 8) if f[0] == 1] == [[1, 8, None, {}]]
        await settled(pool_of(server))


@trio_test
async def test_a_stop_before_the_search_has_a_worker_gives_one_bestmove() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (server, port):
        holder = await TextPeer.connect(port)
        await holder.send("go infinite")
        await holder.until("info depth")  # the only worker is busy
        waiting = await TextPeer.connect(port)
        await waiting.send("go infinite", "stop")
        lines = await waiting.until("bestmove")
        assert legal("yoxii", None, lines[-1].split()[1]), lines
        assert bestmoves(await ready(waiting)) == []
        mp = await MsgpackPeer.connect(port)
        await mp.stream.send_all(pack([0, 1, "go", [{"infinite": True}]], [2, "stop", [{}]]))
        answer = await mp.response(1)
        assert answer[2] is None, answer
        assert legal("yoxii", None, answer[3]["move"])
        await mp.request(2, "isready")
        assert [f for f in await frames_until(mp, 2) if f[0] == 1] == [[1, 2, None, {}]]
        # the stopped searches never took the worker: the holder still has it
        assert pool_of(server).idle == 0
        await holder.send("stop")
        assert len(bestmoves(await holder.until("bestmove"))) == 1
        await settled(pool_of(server))
        assert pool_of(server).restarts == 0


@trio_test
async def test_a_client_leaving_mid_search_or_while_waiting_frees_the_worker() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (server, port):
        pool = pool_of(server)
        text = await TextPeer.connect(port)
        await text.send("go infinite")
        await text.until("info depth")
        assert not pool.all_idle()
        await text.aclose()
        await eventually(pool.all_idle)
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "go", {"infinite": True})
        while (await mp.frame())[:2] != [2, "info"]:
            pass
        assert not pool.all_idle()
        await mp.aclose()
        await eventually(pool.all_idle)
        # one holds the worker, one waits for it and leaves; a newcomer is served after the
        # holder stops
        holder = await TextPeer.connect(port)
        await holder.send("go infinite")
        await holder.until("info depth")
        leaving = await TextPeer.connect(port)
        await leaving.send("go infinite")
        await waiting_for_a_worker(leaving)
        await leaving.aclose()
        await holder.send("stop")
        await holder.until("bestmove")
        await eventually(pool.all_idle)
        newcomer = await TextPeer.connect(port)
        await newcomer.send("go depth 2")
        lines = await newcomer.until("bestmove")
        assert legal("yoxii", None, lines[-1].split()[1])
        await eventually(pool.all_idle)
        assert pool.restarts == 0


@trio_test
async def test_a_worker_that_ignores_stop_is_killed_and_the_best_move_so_far_is_played() -> None:
    reported = max(sorted_moves("yoxii", YOXII_START))
    first = YOXII.new_state()
    assert reported != first.move_to_str(first.legal_moves()[0])  # not the fallback move
    async with (
        fake_pool("ignore-stop") as pool,
        running_server(runner=pool, game="yoxii") as (
            _,
            port,
        ),
    ):
        peer = await TextPeer.connect(port)
        await peer.send("go infinite")
        info = await peer.until("info depth 1")
        assert info[-1].split()[-1] == reported
        await peer.send("stop")
        assert (await peer.until("bestmove"))[-1] == f"bestmove {reported}"
        assert bestmoves(await ready(peer)) == []
        await settled(pool)
        assert pool.restarts == 1
        # past its deadline (and the grace period) it is killed too
        await peer.send("go movetime 100")
        lines = await peer.until("bestmove")
        assert lines[-1] == f"bestmove {reported}", lines
        assert bestmoves(await ready(peer)) == []
        await settled(pool)
        assert pool.restarts == 2
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "go", {"infinite": True})
        while (await mp.frame())[:2] != [2, "info"]:
            pass
        await mp.notify("stop")
        answer = await mp.response(1)
        assert answer[2] is None, answer
        assert answer[3]["move"] == reported
        assert answer[3]["stopped"] is True
        await settled(pool)
        assert pool.restarts == 3


@trio_test
async def test_a_worker_that_crashes_mid_search_still_gives_one_legal_move() -> None:
    async with (
        fake_pool("crash") as pool,
        running_server(runner=pool, game="yoxii") as (
            _,
            port,
        ),
    ):
        peer = await TextPeer.connect(port)
        await peer.send("go depth 3")
        lines = await peer.until("bestmove")
        assert legal("yoxii", None, lines[-1].split()[1]), lines
        assert bestmoves(await ready(peer)) == []
        await settled(pool)
        assert pool.restarts == 1
        await peer.send("go infinite")
        await eventually(lambda: pool.restarts == 2)  # it crashed again, on this search
        await peer.send("stop")
        lines = await peer.until("bestmove")
        assert legal("yoxii", None, lines[-1].split()[1]), lines
        assert bestmoves(await ready(peer)) == []
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "go", {"depth": 2})
        answer = await mp.response(1)
        assert answer[2] is None, answer
        assert legal("yoxii", None, answer[3]["move"])
        await settled(pool)


@trio_test
async def test_go_on_a_view_whose_side_to_act_has_hidden_laws_is_error_206() -> None:
    async with running_server(game="yinyang") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {VIEW}", "go depth 1")
        move = (await peer.until("bestmove"))[-1].split()[1]
        assert legal("yinyang", VIEW, move)
        await peer.send(f"position fen {VIEW} moves {HIDDEN}", "go depth 1")
        assert (await peer.line()).startswith("error 206 moves-hidden ")
        assert await peer.line() == "bestmove none"
        assert await ready(peer) == ["readyok"]
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "position", {"fen": VIEW, "moves": [HIDDEN]})
        assert await mp.response(1) == [1, 1, None, {}]
        await mp.request(2, "go", {"depth": 1})
        await mp.request(3, "isready")
        frames = await frames_until(mp, 3)
        [answer] = responses(frames, 2)
        assert answer[2][:2] == [206, "moves-hidden"], answer
        assert isinstance(answer[2][2], str)
        assert answer[2][3] == {"move": None}
        assert answer[3] is None
        assert [f for f in frames if f[0] == 1] == [answer, [1, 3, None, {}]]


# -- 2. pipelining and backpressure ----------------------------------------------------------


def _burst() -> tuple[list[str], list[str]]:
    """100 commands and the replies they must get, in order."""
    state = YOXII.new_state()
    firsts = sorted_moves("yoxii", YOXII_START)
    commands: list[str] = []
    expected: list[str] = []
    for i in range(25):
        move = firsts[i % len(firsts)]
        after = state.copy()
        after.push(after.parse_move(move))
        commands += ["isready", f"ping {i}", f"position startpos moves {move}", "query position"]
        expected += ["readyok", f"pong {i}", f"response {after.to_string()}"]
    return commands, expected


@trio_test
async def test_a_burst_of_100_text_commands_is_answered_in_order() -> None:
    commands, expected = _burst()
    for limits in (Limits(), Limits(inflight=2)):
        async with running_server(game="yoxii", limits=limits) as (_, port):
            peer = await TextPeer.connect(port)
            await peer.send(*commands)
            lines = [await peer.line() for _ in expected]
            assert lines == expected
            assert await ready(peer) == ["readyok"]


@trio_test
async def test_a_burst_of_100_msgpack_requests_is_answered_without_error_301() -> None:
    for limits in (Limits(), Limits(inflight=4)):
        async with running_server(game="yoxii", limits=limits) as (_, port):
            peer = await MsgpackPeer.connect(port)
            burst = []
            for msgid in range(1, 101):
                if msgid % 2:
                    burst.append([0, msgid, "ping", [{"token": msgid}]])
                else:
                    burst.append([0, msgid, "query", [{"what": "turn"}]])
            await peer.stream.send_all(pack(*burst))
            frames = await frames_until(peer, 100)
            assert [f[1] for f in frames] == list(range(1, 101))
            assert all(f[2] is None for f in frames), [f for f in frames if f[2] is not None]


class GateRunner:
    """A runner whose searches end only when ``gate`` is set (whatever their stop says)."""

    def __init__(self) -> None:
        self.gate = trio.Event()

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        del job, on_info, stop, hard_deadline, on_wait, peer, grace
        await self.gate.wait()
        return SearchOutcome(None)


@trio_test
async def test_a_go_refused_with_204_gets_no_bestmove_when_the_search_ends_meanwhile() -> None:
    """The running search ends while the 204 refusing a second ``go`` is being sent (its
    outbox is full): the search's ``bestmove`` is the one that comes, no ``bestmove none``
    for the refused go after it (docs/protocol.md §3)."""
    runner = GateRunner()
    sent: list[m.Reply] = []

    async def send(reply: m.Reply, msgid: int | None) -> None:
        del msgid
        sent.append(reply)
        if isinstance(reply, m.ErrorReply) and reply.code == 204:
            runner.gate.set()
            await trio.testing.wait_all_tasks_blocked()  # the search ends and answers here

    session = Session(
        SessionConfig(default_game="yoxii"),
        runner,
        framing="text",
        send=send,
        send_nowait=lambda reply, msgid: sent.append(reply),
    )
    async with trio.open_nursery() as nursery:
        await session.handle(m.Request(m.Go(depth=3)), nursery)
        await session.handle(m.Request(m.Go(depth=3)), nursery)
    assert [type(reply) for reply in sent] == [m.ErrorReply, m.BestMove], sent
    error, best = sent
    assert isinstance(error, m.ErrorReply)
    assert error.code == 204
    assert isinstance(best, m.BestMove)
    assert best.move is not None


@trio_test
async def test_the_server_stops_reading_while_its_requests_are_not_handled() -> None:
    runner = GateRunner()
    async with running_server(runner=runner, game="yoxii", limits=Limits(inflight=4)) as (
        _,
        port,
    ):
        peer = await TextPeer.connect(port)
        # the position after the stop waits for the search, which waits for the gate
        await peer.send("go infinite", "stop", "position startpos")
        padded = ("isready" + " " * 30000 + "\n").encode()
        lines_to_send = 1000  # 30 MB in all: more than the socket buffers hold
        sent = 0
        done = trio.Event()

        async def sender() -> None:
            nonlocal sent
            for _ in range(lines_to_send // 50):
                await peer.stream.send_all(padded * 50)
                sent += 50
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            await trio.testing.wait_all_tasks_blocked(cushion=0.05)
            assert not done.is_set()  # the server stopped reading: the client is held back
            assert sent < lines_to_send
            runner.gate.set()
            assert (await peer.line()).startswith("bestmove ")
            for _ in range(lines_to_send):
                assert await peer.line() == "readyok"
        assert await ready(peer) == ["readyok"]


# -- 3. the output cap and the size of replies ------------------------------------------------


@trio_test
async def test_a_client_that_never_reads_is_disconnected_at_the_output_cap() -> None:
    async with running_server(game="yinyang", limits=Limits(output=100_000)) as (server, port):
        other = await TextPeer.connect(port)
        assert await ready(other) == ["readyok"]
        stream = await open_stream(port)
        mine = stream.socket.getsockname()[1]
        flood = f"position fen {VIEW}\n" + "query moves\n" * 150  # about 9 MB of replies
        await stream.send_all(flood.encode())

        def gone() -> bool:
            return not any(c.peer.endswith(f":{mine}") for c in server.connections)

        await eventually(gone, timeout=10)
        assert await TextPeer(stream).closed()
        assert await ready(other) == ["readyok"]
        await other.send(f"position fen {VIEW}", "query moves")
        assert len((await other.expect("response ")).split()) == 1 + 3244


async def read_frames(
    stream: trio.SocketStream, unpacker: msgpack.Unpacker, frames: list[Any], count: int
) -> None:
    """Read msgpack frames from ``stream`` into ``frames`` until it holds ``count``."""
    with trio.fail_after(10):
        while len(frames) < count:
            data = await stream.receive_some(65536)
            assert data, "closed"
            unpacker.feed(data)
            frames.extend(unpacker)


@trio_test
async def test_no_reply_is_longer_than_the_line_or_frame_limit() -> None:
    everything = sorted_moves("yinyang", VIEW)
    assert len(everything) == 3244
    async with running_server(game="yinyang", limits=Limits(line=2000, frame=2000)) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {VIEW}", "query moves")
        line = await peer.expect("response count 3244 moves ")
        assert len(line.encode()) <= 2000
        listed = line.split()[4:]
        assert listed
        assert listed == everything[: len(listed)]
        assert await ready(peer) == ["readyok"]
        stream = await open_stream(port)
        await stream.send_all(pack([0, 1, "position", [{"fen": VIEW}]]))
        unpacker = msgpack.Unpacker(raw=False)
        got: list[Any] = []
        with trio.fail_after(10):
            while not got:
                unpacker.feed(await stream.receive_some(65536))
                got.extend(unpacker)
        assert got == [[1, 1, None, {}]]
        start = unpacker.tell()
        await stream.send_all(pack([0, 2, "query", [{"what": "moves"}]]))
        await read_frames(stream, unpacker, got, 2)
        assert unpacker.tell() - start <= 2000
        value = got[1][3]["value"]
        assert isinstance(value, str), got[1]
        assert value.startswith("count 3244 moves ")
        tokens = value.split()[3:]
        assert tokens
        assert tokens == everything[: len(tokens)]


@trio_test
async def test_a_long_move_list_is_gathered_page_by_page() -> None:
    """``query moves start K`` gives the sorted list from its K-th move on, as much as fits a
    reply: a client asking from what it has gathers the whole list, in both framings."""
    everything = sorted_moves("yinyang", VIEW)
    async with running_server(game="yinyang", limits=Limits(line=2000, frame=2000)) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {VIEW}")
        gathered: list[str] = []
        pages = 0
        while len(gathered) < len(everything):
            await peer.send(f"query moves start {len(gathered)}")
            line = await peer.expect("response count 3244 moves")
            assert len(line.encode()) <= 2000
            page = line.split()[4:]
            assert page, f"no progress at {len(gathered)}"
            gathered += page
            pages += 1
        assert gathered == everything
        assert pages >= sum(len(t) + 1 for t in everything) // 2000  # each cut to the line
        await peer.send("query moves start 3244")  # past the end: an empty page
        assert await peer.expect("response ") == "response count 3244 moves"
        await peer.send("query position start 1", "query moves start -1")
        assert (await peer.expect("error ")).startswith("error 101 bad-arguments query:")
        assert (await peer.expect("error ")).startswith("error 101 bad-arguments query moves")
        stream = await open_stream(port)
        unpacker = msgpack.Unpacker(raw=False)
        frames: list[Any] = []
        requests = [
            [0, 1, "position", [{"fen": VIEW}]],
            [0, 2, "query", [{"what": "moves", "start": 3000}]],
            [0, 3, "query", [{"what": "phase", "start": 3}]],
        ]
        await stream.send_all(b"".join(pack(r) for r in requests))
        await read_frames(stream, unpacker, frames, 3)
        value = frames[1][3]["value"]
        assert value.startswith("count 3244 moves ")
        assert value.split()[3:] == everything[3000 : 3000 + len(value.split()) - 3]
        assert frames[2][2] is not None  # an error: start goes with moves only


# -- 4. admission ----------------------------------------------------------------------------


async def refused(peer: TextPeer) -> None:
    """The server closes the connection without sending a byte, even after a command."""
    with contextlib.suppress(trio.BrokenResourceError):
        await peer.send("isready")
    assert await peer.closed()
    assert peer.buffer == b""


@trio_test
async def test_the_per_peer_connection_cap_counts_each_address_apart() -> None:
    async with running_server(game="yoxii", limits=Limits(peer_connections=2)) as (server, port):
        first = TextPeer(await open_stream(port))
        second = TextPeer(await open_stream(port))
        for peer in (first, second):
            assert await ready(peer) == ["readyok"]
        await refused(TextPeer(await open_stream(port)))
        elsewhere = TextPeer(await open_stream(port, "127.0.0.2"))
        assert await ready(elsewhere) == ["readyok"]
        assert await ready(first) == ["readyok"]
        # once one has left, there is room again
        await first.aclose()
        await eventually(lambda: server.admission.per_peer["127.0.0.1"] < 2)
        again = TextPeer(await open_stream(port))
        assert await ready(again) == ["readyok"]


@trio_test
async def test_a_connection_without_a_whole_first_command_is_closed() -> None:
    async with running_server(game="yoxii", limits=Limits(first_command=0.3)) as (_, port):
        early = await TextPeer.connect(port)
        assert await ready(early) == ["readyok"]
        silent = await TextPeer.connect(port)
        partial = await TextPeer.connect(port)
        await partial.stream.send_all(b"isre")
        half_frame = await MsgpackPeer.connect(port)
        await half_frame.stream.send_all(pack([0, 1, "isready", [{}]])[:3])
        assert await silent.closed()
        assert silent.buffer == b""
        assert await partial.closed()
        with trio.fail_after(10):
            while await half_frame.stream.receive_some(65536):
                pass
        # one that sent its first command in time is not affected
        assert await ready(early) == ["readyok"]


@trio_test
async def test_the_global_connection_cap_closes_extra_connections_silently() -> None:
    async with running_server(game="yoxii", limits=Limits(connections=2)) as (_, port):
        here = TextPeer(await open_stream(port))
        there = TextPeer(await open_stream(port, "127.0.0.2"))
        for peer in (here, there):
            assert await ready(peer) == ["readyok"]
        await refused(TextPeer(await open_stream(port, "127.0.0.2")))
        await refused(TextPeer(await open_stream(port)))
        assert await ready(here) == ["readyok"]
        assert await ready(there) == ["readyok"]


# -- 5. the per-peer search cap and fairness ---------------------------------------------------


class _Search:
    """One pool search run in the background, with events for its milestones."""

    def __init__(self, pool: WorkerPool, peer: str, search: SearchJob) -> None:
        self.pool = pool
        self.peer = peer
        self.job = search
        self.stop = trio.Event()
        self.started = trio.Event()
        self.waited = trio.Event()
        self.done = trio.Event()
        self.outcome: SearchOutcome | None = None

    def _info(self, info: SearchInfo) -> None:
        del info
        self.started.set()

    async def run(self) -> None:
        self.outcome = await self.pool.search(
            self.job, on_info=self._info, stop=self.stop, hard_deadline=None,
            on_wait=self.waited.set, peer=self.peer,
        )  # fmt: skip
        self.done.set()


INFINITE = job(bot="alphabeta")
"""A search with no limit: it runs until it is stopped."""


@trio_test
async def test_the_pool_caps_the_workers_of_a_peer_and_serves_another_at_once() -> None:
    async with hand_made_pool(2, per_peer=1) as pool, trio.open_nursery() as searches:
        a1 = _Search(pool, "a", INFINITE)
        searches.start_soon(a1.run)
        with trio.fail_after(10):
            await a1.started.wait()
        a2 = _Search(pool, "a", INFINITE)
        searches.start_soon(a2.run)
        with trio.fail_after(10):
            await a2.waited.wait()
        assert pool.idle == 1  # a worker is free, but not for peer a
        b = _Search(pool, "b", job(bot="alphabeta", depth=2))
        with trio.fail_after(10):
            await b.run()
        assert not b.waited.is_set()
        assert b.outcome is not None
        assert b.outcome.result is not None
        assert b.outcome.result.token
        assert not a2.started.is_set()
        assert pool.idle == 1
        a1.stop.set()
        with trio.fail_after(10):
            await a1.done.wait()
            await a2.started.wait()
        a2.stop.set()
        with trio.fail_after(10):
            await a2.done.wait()
        for search in (a1, a2):
            assert search.outcome is not None
            assert search.outcome.result is not None
            assert search.outcome.result.token
        await settled(pool)
        assert pool.restarts == 0


@trio_test
async def test_a_freed_worker_goes_to_the_next_peer_in_turn() -> None:
    async with hand_made_pool(1) as pool, trio.open_nursery() as searches:
        holder = _Search(pool, "a", INFINITE)
        searches.start_soon(holder.run)
        with trio.fail_after(10):
            await holder.started.wait()
        queued = [_Search(pool, p, INFINITE) for p in ("a", "a", "b")]
        for search in queued:  # queued one after the other: a, a, then b
            searches.start_soon(search.run)
            with trio.fail_after(10):
                await search.waited.wait()
        order = []
        running = holder
        for _ in queued:
            running.stop.set()
            with trio.fail_after(10):
                await running.done.wait()
                while not any(s.started.is_set() for s in queued if s not in order):
                    await trio.sleep(0.01)
            [running] = [s for s in queued if s.started.is_set() and s not in order]
            order.append(running)
        running.stop.set()
        assert order == [queued[0], queued[2], queued[1]]  # b's search did not wait for a's two
        await settled(pool)


@trio_test
async def test_the_server_caps_searches_per_peer_address() -> None:
    async with (
        hand_made_pool(2, per_peer=1) as pool,
        running_server(runner=pool, game="yoxii", bot="alphabeta") as (_, port),
    ):
        holder = TextPeer(await open_stream(port))
        await holder.send("go infinite")
        await holder.until("info depth")
        second = TextPeer(await open_stream(port))
        await second.send("go infinite")
        await waiting_for_a_worker(second)
        assert pool.idle == 1
        other = TextPeer(await open_stream(port, "127.0.0.2"))
        await other.send("go depth 2")
        lines = await other.until("bestmove")
        assert not any(is_waiting(line) for line in lines), lines
        assert legal("yoxii", None, lines[-1].split()[1])
        await holder.send("stop")
        await holder.until("bestmove")
        await second.until("info depth")  # it has the worker the holder left
        await second.send("stop")
        await second.until("bestmove")
        for peer in (holder, second, other):
            assert bestmoves(await ready(peer)) == []
        await settled(pool)


# -- 6. options take effect as reported --------------------------------------------------------


@trio_test
async def test_a_bot_change_resets_its_options_in_the_listing_and_in_the_worker() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("options")
        defaults = await peer.until("optionsok")
        await peer.send("setoption name Depth value 1", "go depth 3")
        assert max(depths(await peer.until("bestmove"))) == 1  # the cap holds
        await peer.send(
            "setoption name SecretSeed value 5",
            "setoption name Quiescence value false",
            "setoption name Bot value alphabeta",
            "options",
        )
        listing = await peer.until("optionsok")
        assert "option name Depth type spin default 0 min 0 max 128" in listing
        assert listing == defaults
        await peer.send("go depth 3")
        lines = await peer.until("bestmove")
        assert max(depths(lines)) == 3, lines  # no longer capped at depth 1
        await peer.send("setoption name Depth value 1", "go movetime 300")
        assert max(depths(await peer.until("bestmove"))) == 1
        await peer.send("setoption name Bot value random", "setoption name Bot value alphabeta")
        await peer.send("go movetime 300")
        assert max(depths(await peer.until("bestmove"))) >= 2


def test_a_kept_bot_takes_the_defaults_of_options_a_job_does_not_name() -> None:
    worker = _Worker(io.BytesIO())
    given = (
        ("Aspiration", "50"), ("Depth", "1"), ("Hash", "8"), ("Quiescence", "false"),
        ("Reductions", "false"), ("Samples", "2"), ("SecretSeed", "9"),
        ("EvalYoxiiMobility", "-3"),
    )  # fmt: skip
    bot = worker.bot_for(job(bot="alphabeta", options=given))
    assert {name: bot.values[name] for name, _ in given} == {
        "Aspiration": 50, "Depth": 1, "Hash": 8, "Quiescence": False, "Reductions": False,
        "Samples": 2, "SecretSeed": 9, "EvalYoxiiMobility": -3,
    }  # fmt: skip
    assert all(bot.values[o.name] == o.default for o in bot.options if o.name not in dict(given))
    again = worker.bot_for(job(bot="alphabeta", options=()))
    assert again is bot
    assert bot.values == {option.name: option.default for option in bot.options}


# -- 7. the hash budget ------------------------------------------------------------------------


@trio_test
async def test_hash_is_capped_by_the_servers_budget() -> None:
    limits = Limits()
    config = SessionConfig(
        default_game="yoxii", default_bot="alphabeta", limits=limits.announced(),
        hash_limit=32, hash_budget=64,
    )  # fmt: skip
    async with serving(Server(config, ThreadRunner(), limits)) as port:
        peer = TextPeer(await open_stream(port))
        await peer.send("options")
        assert "option name Hash type spin default 32 min 1 max 32" in await peer.until("optionsok")
        await peer.send("setoption name Hash value 33", "isready")
        refusal = await peer.line()
        assert refusal.startswith("error 101 bad-arguments "), refusal
        assert "64" in refusal
        assert "budget" in refusal
        assert await peer.line() == "readyok"
        await peer.send("setoption name Hash value 32", "isready")
        assert await peer.line() == "readyok"
        await peer.send("setoption name Hash value 16", "options")
        assert "option name Hash type spin default 16 min 1 max 32" in await peer.until("optionsok")
        mp = MsgpackPeer(await open_stream(port))
        await mp.request(1, "setoption", {"name": "Hash", "value": "33"})
        answer = await mp.response(1)
        assert answer[2][:2] == [101, "bad-arguments"]
        assert "64" in answer[2][2]
        await mp.request(2, "setoption", {"name": "Hash", "value": 32})
        assert await mp.response(2) == [1, 2, None, {}]


def test_a_worker_keeps_bots_within_the_hash_budget() -> None:
    worker = _Worker(io.BytesIO())

    def keep(session: str, hash_mb: int, budget: int | None = 40) -> list[str]:
        worker.bot_for(
            job(session=session, bot="alphabeta", options=(("Hash", str(hash_mb)),),
                hash_budget=budget)
        )  # fmt: skip
        return [key[0] for key in worker.bots]

    def held() -> int:
        return sum(int(bot.values["Hash"] or 0) for bot in worker.bots.values())

    assert keep("s1", 16) == ["s1"]
    assert keep("s2", 16) == ["s1", "s2"]
    assert keep("s3", 16) == ["s2", "s3"]  # 48 MB > 40: the least recently used goes
    assert held() <= 40
    assert keep("s2", 16) == ["s3", "s2"]
    assert keep("s4", 30) == ["s4"]
    assert held() <= 40
    assert keep("s5", 100) == ["s5"]  # the newest always stays, its table cut to the budget
    assert held() == 40
    worker.bots.clear()
    for number in range(BOTS_PER_WORKER + 2):
        keep(f"t{number}", 1, None)
    assert len(worker.bots) == BOTS_PER_WORKER


# -- 8. a flood does not stall other clients ---------------------------------------------------


async def send_quietly(stream: trio.SocketStream, data: bytes) -> None:
    """Send ``data``; the stream being closed meanwhile (by either end) is no error."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(data)


async def isready_20_times(peer: TextPeer) -> None:
    """20 sequential ``isready``s, all answered within a generous bound."""
    with trio.fail_after(5):
        for _ in range(20):
            await peer.send("isready")
            assert await peer.line() == "readyok"


@trio_test
async def test_a_flood_that_is_never_read_does_not_stall_another_client() -> None:
    flood = (f"position fen {VIEW}\n" + "query moves\n" * 2000).encode()
    async with running_server(game="yinyang") as (server, port):
        other = await TextPeer.connect(port)
        assert await ready(other) == ["readyok"]

        def gone(stream: trio.SocketStream) -> Callable[[], bool]:
            """Whether the server holds no connection from ``stream`` (ask while it is open)."""
            mine = f":{stream.socket.getsockname()[1]}"
            return lambda: not any(c.peer.endswith(mine) for c in server.connections)

        # the flooder closes, unread, as soon as the server has begun answering
        stream = await open_stream(port)
        first_gone = gone(stream)

        async def flood_then_close() -> None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(flood)
                await trio.lowlevel.wait_readable(stream.socket)
            await stream.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood_then_close)
            await isready_20_times(other)
        await eventually(first_gone)
        # the flooder stays connected, unread, while the other client asks
        stream = await open_stream(port)
        second_gone = gone(stream)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_quietly, stream, flood)
            with trio.fail_after(10):
                await trio.lowlevel.wait_readable(stream.socket)
            await isready_20_times(other)
            await stream.aclose()  # cancels the send if it is still held back
        await eventually(second_gone)
        assert len(server.connections) == 1
        assert await ready(other) == ["readyok"]


@trio_test
async def test_a_client_that_reads_is_never_cut_off_by_the_output_cap() -> None:
    # every reply of this session is longer than the whole cap, yet the client reads each
    async with running_server(game="yinyang", limits=Limits(output=1_000)) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {VIEW}")
        for _ in range(5):
            await peer.send("query moves")
            assert len(await peer.expect("response ")) > 1_000
        await peer.send("ugi")
        await peer.until("ugiok")
        await peer.send("isready")
        assert await peer.line() == "readyok"


@trio_test
async def test_an_error_quoting_a_long_input_is_cut() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {'x' * 60_000}", f"play {'y' * 60_000}", "isready")
        invalid = await peer.expect("error 202 invalid-position ")
        assert len(invalid) <= 1_100
        refused = await peer.expect("invalidmove ")
        assert len(refused) <= 1_100
        assert await peer.line() == "readyok"
        packed = await MsgpackPeer.connect(port)
        await packed.request(1, "play", {"move": "z" * 900_000})
        frame = await packed.response(1)
        assert frame[2][0] == 201
        assert len(msgpack.packb(frame)) <= 4_096

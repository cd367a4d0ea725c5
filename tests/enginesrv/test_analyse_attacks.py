"""``analyse`` and ``cancel`` (docs/protocol.md §4.1) attacked as hostile network clients would:
the memory a session's waiting positions hold, cancelled positions, the read-ahead of long
requests, the one thread that replays them, the workers other peers' analyses wait for, the
exactly-one answer of each position, refereed games and malformed requests."""

from __future__ import annotations

import functools
import gc
import random
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import trio

import games
from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.serve import offload
from enginesrv.serve.reader import POSITION_COST, READ_AHEAD, TOKEN_COST
from enginesrv.serve.server import Server
from enginesrv.serve.session import Session
from protocol.messages import MAX_POSITIONS
from tests.enginesrv.peer import MsgpackPeer, TextPeer, open_stream, running_server
from tests.trio_run import trio_test

YINSH_10_1 = "position startpos moves h6 g6 g8 c6 e10 f8 g11 e9 h11 d7"
"""The Yinsh position of docs/protocol.md §10.1."""


class HeldRunner:
    """A runner whose every search holds its worker until it is stopped (as a search of depth
    60 would), then reports that it found nothing; it counts the searches it was given."""

    def __init__(self) -> None:
        self.started = 0

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
        del job, on_info, hard_deadline, on_wait, peer, on_hold, grace
        self.started += 1
        await stop.wait()
        return SearchOutcome(None)


@functools.cache
def long_game(plies: int = 2000) -> tuple[str, ...]:
    """``plies`` moves of a Yohoho game that goes on past them (a random game of 2117 plies)."""
    rng = random.Random(36)
    state = games.load("yohoho").new_state()
    moves: list[str] = []
    while len(moves) < plies:
        legal = state.legal_moves()
        move = legal[rng.randrange(len(legal))]
        moves.append(state.move_to_str(move))
        state.push(move)
    assert not state.is_terminal()
    return tuple(moves)


def session_of(server: Server, host: str = "127.0.0.1") -> Session:
    """The session of the one connection from ``host``."""
    (session,) = [
        c.session
        for c in server.connections
        if c.session is not None and c.peer.rsplit(":", 1)[0] == host
    ]
    return session


async def lines(peer: TextPeer, count: int) -> list[str]:
    return [await peer.line() for _ in range(count)]


# -- memory ------------------------------------------------------------------------------------


@trio_test
async def test_waiting_positions_hold_their_position_not_the_game_replayed_to_it() -> None:
    """Eight positions reached by a game of 2,000 plies wait behind a long search: they hold
    a position each, not the 2,000 undo records of the replay (5.4 MB held before: a
    session's 1,024 such positions took 700 MB, a peer's 32 sessions 22 GB)."""
    async with running_server(runner=HeldRunner(), game="yohoho") as (server, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "analyse", {"positions": [{"id": "hold", "depth": 60}]})
        moves = list(long_game())
        positions = [{"id": f"p{i}", "depth": 1, "moves": moves} for i in range(8)]
        # the same frame refused at its first position: the decoder's buffer has grown to it
        bad = [{**positions[0], "fen": "?"}, *positions[1:]]
        await peer.request(2, "analyse", {"positions": bad})
        assert (await peer.response(2))[2][0] == 202
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await peer.request(3, "analyse", {"positions": positions})
            await peer.request(4, "isready")
            assert (await peer.response(4))[2:] == [None, {}]
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert peer.seen == []
        assert session_of(server).analyses.held == 9
        assert grown < 400_000, grown


@trio_test
async def test_cancelled_positions_leave_the_queue_at_once() -> None:
    """Behind a search that goes on, a client queues a thousand positions and cancels them,
    again and again: each is answered once, and none is kept (the cap on held positions
    counted them out while their entries stayed queued, without bound)."""
    async with running_server(runner=HeldRunner(), game="yoxii") as (server, port):
        peer = await TextPeer.connect(port)
        await peer.send("analyse id hold depth 60 startpos")
        ids = [f"w{i}" for i in range(1000)]
        request = "analyse " + " ".join(f"id {i} depth 1 startpos" for i in ids)
        for _ in range(5):
            await peer.send(request, "cancel " + " ".join(ids))
            assert await lines(peer, len(ids)) == [
                f"analysisok id {i} bestmove none cancelled" for i in ids
            ]
        analyses = session_of(server).analyses
        assert (analyses.held, analyses.waiting) == (1, 0)


# -- the exactly-one answer ----------------------------------------------------------------------


@trio_test
async def test_a_position_cancelled_while_it_waits_is_never_searched() -> None:
    """``cancel`` of every position while one is searched: that one answers ``stopped``, and
    every waiting one ``cancelled`` with no move. (The search that ended as the answers went
    out started the next waiting position, which then answered a move it never searched.)"""
    runner = HeldRunner()
    async with running_server(runner=runner, game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        ids = [f"w{i}" for i in range(300)]
        waiting = " ".join(f"id {i} depth 1 startpos" for i in ids)
        await peer.send(f"analyse id hold depth 60 startpos {waiting}", "cancel")
        answers = await lines(peer, len(ids) + 1)
        stopped = [a for a in answers if a.startswith("analysisok id hold bestmove ")]
        assert len(stopped) == 1, answers[:5]
        assert stopped[0].endswith(" stopped")
        answers.remove(stopped[0])
        assert answers == [f"analysisok id {i} bestmove none cancelled" for i in ids]
        assert runner.started == 1


# -- reading ahead -------------------------------------------------------------------------------


async def _watch_queued(server: Server, most: list[int]) -> None:
    while True:
        for connection in server.connections:
            most[0] = max(most[0], connection.reader.queued)
        await trio.sleep(0)


@trio_test
async def test_the_moves_of_an_analyse_count_in_the_read_ahead() -> None:
    """Requests of analyses of long positions, sent faster than they are answered, are read
    only as far as the read-ahead allows, their moves counted as a ``position``'s are."""
    async with running_server(runner=HeldRunner(), game="yohoho") as (server, port):
        moves = " ".join(long_game()[:60])
        requests = [f"analyse id a{n} depth 1 startpos moves {moves}\n" for n in range(400)]
        peer = await TextPeer.connect(port)
        most = [0]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_queued, server, most)
            await peer.stream.send_all("".join(requests).encode() + b"isready\n")
            assert await peer.line() == "readyok"
            nursery.cancel_scope.cancel()
        one = len(requests[0]) + TOKEN_COST * 60 + POSITION_COST
        assert one < READ_AHEAD < most[0] + one
        assert most[0] <= READ_AHEAD
        assert session_of(server).analyses.held == 400


@trio_test
async def test_an_analyse_over_the_ply_limit_is_refused_before_it_waits() -> None:
    """A position of 5,000 moves is refused as it is read (error 305 naming its id, answered
    in turn), so that its moves never wait in the read-ahead."""
    async with running_server(game="yoxii") as (server, port):
        peer = await MsgpackPeer.connect(port)
        positions = [{"id": "ok", "depth": 1}, {"id": "long", "depth": 1, "moves": ["a1"] * 5000}]
        most = [0]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_queued, server, most)
            for msgid in range(1, 4):
                await peer.request(msgid, "analyse", {"positions": positions})
            await peer.request(4, "isready")
            for msgid in range(1, 4):
                frame = await peer.response(msgid)
                assert frame[2][:3] == [
                    305,
                    "ply-limit",
                    "analyse: id long: 5000 moves are over the server's limit of 4000 plies "
                    "(limit plies)",
                ]
            assert (await peer.response(4))[2:] == [None, {}]
            nursery.cancel_scope.cancel()
        assert peer.seen == []  # no position of a refused request was answered
        assert most[0] < 100  # only the isready waited


@trio_test
async def test_more_positions_than_one_request_may_hold_are_refused_before_they_are_read() -> None:
    """A frame of tens of thousands of positions took a quarter of a second of the event loop
    to read, each time: a request over ``MAX_POSITIONS`` is refused on its count, before its
    positions are read (here the first is malformed, and goes unread)."""
    async with running_server(game="yoxii") as (_, port):
        peer = await MsgpackPeer.connect(port)
        many = [{"id": 5}] + [{"id": f"{i:x}"} for i in range(40_000)]
        await peer.request(1, "analyse", {"positions": many})
        assert (await peer.response(1))[2][:3] == [
            101,
            "bad-arguments",
            f"analyse: 40001 positions are over the {MAX_POSITIONS} one request may hold; "
            "send them in several",
        ]
        await peer.request(2, "ping", {"token": 7})
        assert (await peer.response(2))[2:] == [None, {"token": 7}]
        text = await TextPeer.connect(port)
        await text.send("analyse" + " id a startpos" * (MAX_POSITIONS + 1))
        assert await text.line() == (
            f"error 101 bad-arguments analyse: {MAX_POSITIONS + 1} positions are over the "
            f"{MAX_POSITIONS} one request may hold; send them in several"
        )


# -- the thread that replays them --------------------------------------------------------------


@trio_test
async def test_a_long_request_takes_the_replay_thread_a_turn_at_a_time() -> None:
    """A request of positions of 40,000 moves in all is replayed on the one thread of costly
    work in turns of a few thousand moves: another peer's ``position`` of a hundred moves is
    answered between two turns, not after the whole request (it waited seconds behind one)."""
    async with running_server(runner=HeldRunner(), game="yohoho") as (_, port):
        hog = MsgpackPeer(await open_stream(port, "127.0.0.2"))
        moves = list(long_game())
        positions = [{"id": f"p{i}", "depth": 1, "moves": moves} for i in range(20)]
        other = await TextPeer.connect(port, local="127.0.0.3")
        order: list[str] = []
        await hog.request(1, "analyse", {"positions": positions})
        await hog.request(2, "isready")
        offloader = offload.current()
        with trio.fail_after(10):
            while offloader.busy == 0:  # the hog's request is being replayed
                await trio.sleep(0.001)
        await other.send(f"position startpos moves {' '.join(moves[:100])}", "isready")

        async def answered(name: str, wait: Callable[[], Any]) -> None:
            await wait()
            order.append(name)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answered, "other", functools.partial(other.expect, "readyok"))
            nursery.start_soon(answered, "hog", functools.partial(hog.response, 2))
        assert order == ["other", "hog"]


# -- the workers -------------------------------------------------------------------------------


@trio_test
async def test_other_peers_load_cannot_make_an_analysis_come_back_unsearched() -> None:
    """Two addresses hold both workers with ``go infinite``; a third's analysis of 300 ms
    waits for a worker lent by a suspended search (a second), then searches its 300 ms. Its
    time ran while it waited: it was answered ``stopped`` with a move it never searched."""
    async with running_server(workers=2, per_peer=1, game="yinsh", bot="alphabeta") as (
        server,
        port,
    ):
        hogs = [await TextPeer.connect(port, local=f"127.0.0.{i}") for i in (3, 4)]
        for hog in hogs:
            await hog.send(YINSH_10_1, "go infinite")
            await hog.expect("info depth")  # it holds a worker
        third = await TextPeer.connect(port, local="127.0.0.5")
        await third.send("analyse id a movetime 300 startpos moves h6 g6")
        with trio.fail_after(20):
            answer = await third.until("analysisok")
        assert answer[0].startswith("analysisinfo id a depth "), answer
        assert not answer[-1].endswith(" stopped"), answer
        assert int(answer[-1].split(" nodes ")[1].split()[0]) > 0
        assert getattr(server.runner, "suspended", 0) >= 1


@trio_test
async def test_a_client_that_leaves_frees_its_analysis_worker_at_once() -> None:
    """A peer's deep analysis holds the only worker; it disconnects; another peer's search
    takes the worker at once, not by suspending it a second later."""
    async with running_server(workers=1, per_peer=1, game="yinsh", bot="alphabeta") as (
        server,
        port,
    ):
        pool: Any = server.runner
        stream = await open_stream(port, "127.0.0.2")
        await stream.send_all(b"analyse id deep depth 60 startpos moves h6 g6\n")
        with trio.fail_after(10):
            while pool.busy == 0:
                await trio.sleep(0.001)
        await stream.aclose()
        other = await TextPeer.connect(port, local="127.0.0.3")
        await other.send(YINSH_10_1, "go depth 2")
        with trio.fail_after(5):
            answer = await other.until("bestmove")
        assert "stopped" not in answer[-1]
        assert pool.suspended == 0


# -- sessions and their ids ----------------------------------------------------------------------


@trio_test
async def test_a_session_cannot_cancel_or_collide_with_anothers_ids() -> None:
    """Ids are a session's own: another session's ``cancel`` of them is passed over, and it
    may use the same ids; an id is free again once its answer is sent."""
    runner = HeldRunner()
    async with running_server(runner=runner, game="yoxii") as (_, port):
        owner = await TextPeer.connect(port)
        thief = await TextPeer.connect(port, local="127.0.0.9")
        await owner.send("analyse id a depth 60 startpos id b depth 1 startpos", "isready")
        assert await owner.line() == "readyok"
        await thief.send("cancel a b", "analyse id x depth 60 startpos id b depth 1 startpos")
        await thief.send("cancel b", "isready")
        assert await lines(thief, 2) == ["analysisok id b bestmove none cancelled", "readyok"]
        await owner.send("analyse id b depth 1 startpos")
        assert (await owner.line()).startswith(
            "error 101 bad-arguments analyse: id b is being analysed already"
        )
        await owner.send("cancel b", "analyse id b depth 1 startpos", "cancel", "isready")
        answers = await lines(owner, 4)
        assert answers[:2] == ["analysisok id b bestmove none cancelled"] * 2
        (stopped,) = [a for a in answers[2:] if a != "readyok"]
        assert stopped.startswith("analysisok id a bestmove ")
        assert stopped.endswith(" stopped")


@trio_test
async def test_msgpack_answers_every_position_once_and_the_request_last() -> None:
    """A msgpack client's request of positions, some with nothing to search, then ``quit``
    while one is searched: each position is answered once, the request's response after its
    last, and the ``quit``'s after that."""
    async with running_server(runner=HeldRunner(), game="yoxii") as (_, port):
        peer = await MsgpackPeer.connect(port)
        over = "Dbc/CaaCd/AB1bb1c/BDdCaDA/Cc1BTBA/aAcBd/cbA b t w:0010 b:1100"
        positions = [
            {"id": "run", "depth": 60},
            {"id": "over", "depth": 1, "fen": over},
            {"id": "wait", "depth": 1, "moves": ["c5"]},
        ]
        await peer.request(1, "analyse", {"positions": positions})
        await peer.request(2, "quit")
        frames = [await peer.frame() for _ in range(5)]
        kinds = [(f[0], f[1] if f[0] == 1 else f[2][0]["id"]) for f in frames]
        assert kinds == [(2, "over"), (2, "wait"), (2, "run"), (1, 1), (1, 2)]
        assert frames[0][2][0]["error"]["code"] == 203
        assert frames[1][2][0]["cancelled"] is True
        assert frames[1][2][0]["move"] is None
        assert frames[2][2][0]["stopped"] is True
        with pytest.raises(EOFError):
            await peer.frame()


# -- refereed games and malformed requests -------------------------------------------------------


@trio_test
async def test_a_page_of_a_refereed_game_cannot_analyse_positions_of_its_choosing() -> None:
    """A page of a refereed game cannot have positions of its choosing searched on its
    socket (another socket's game would be)."""
    pytest.importorskip("trio_websocket")
    from tests.web.webpeer import running_web, text_socket

    query = "game=yoxii&opponent=bot:random&side=p1"
    async with running_web() as web, text_socket(web.ws(query)) as peer:
        await peer.send("analyse id a depth 1 startpos")
        line = await peer.line()
        assert line.startswith("error 101 bad-arguments analyse: this socket is a game the ")
        await peer.send("cancel", "isready")
        assert await peer.line() == "readyok"


BAD = "error 101 bad-arguments "
BAD_TEXT = {
    "analyse": BAD + "analyse: no position given; usage: analyse [priority N] id ID [depth N] "
    "[nodes N] [movetime T] [multipv K] [searchmoves M ...] [avoidmoves M ...] "
    "startpos|fen POSITION [moves M ...] [id ...]",
    "analyse priority 2147483648 id a depth 1 startpos": BAD
    + "analyse: priority 2147483648 is over 2147483647",
    "analyse id depth depth 1 startpos": BAD
    + "analyse: id 'depth': 'depth' is a word of analyse, not an id",
    "analyse id a depth 0 startpos": BAD + "analyse: id a: depth '0' is below 1",
    "analyse id a depth -3 startpos": BAD + "analyse: id a: depth '-3' is below 1",
    "analyse id a depth 1 fen moves c5": BAD + "analyse: id a: the position string is missing",
    "analyse id a depth 1 startpos go": BAD + "analyse: id a: unexpected 'go' after the position",
    "analyse id a searchmoves depth 1 startpos": BAD
    + "analyse: id a: searchmoves needs at least one move",
    "analyse id " + "x" * 65 + " depth 1 startpos": BAD
    + f"analyse: id '{'x' * 65}': an id has at most 64 characters, not 65",
    "analyse id a depth 1 startpos id a depth 2 startpos": BAD + "analyse: id a is given twice",
    "analyse id a depth 1 startpos moves zz9": "invalidmove zz9 analyse: id a: not a move token: "
    "a Totem move is its destination square (d5), a placement is <value>@<square> (3@c5), in "
    "lowercase without spaces",
    "analyse id a depth 1 fen 1 2 3": "error 202 invalid-position analyse: id a: '1 2 3': "
    "syntax: expected 5 fields (board side phase wstock bstock) separated by single spaces",
    "analyse id a movetime 60001 startpos": BAD
    + "analyse: id a: movetime 60001 is over the server's limit of 60000 ms (limit movetime)",
    "analyse id a depth 1 multipv 2 startpos": BAD
    + "analyse: id a: bot 'random' reports one line: multipv above 1 needs a bot that offers "
    "it (the handshake's analysis lines)",
    "cancel moves": BAD + "cancel: id 'moves': 'moves' is a word of analyse, not an id",
}


@trio_test
async def test_malformed_analyse_lines_get_one_error_naming_the_input() -> None:
    """Each is one line naming the position (or the word) and the reason; the session goes
    on, holding nothing."""
    async with running_server(game="yoxii") as (server, port):
        peer = await TextPeer.connect(port)
        for line, answer in BAD_TEXT.items():
            await peer.send(line)
            assert await peer.line() == answer
        await peer.send("ping 1")
        assert await peer.line() == "pong 1"
        assert session_of(server).analyses.held == 0


@trio_test
async def test_a_peers_analysis_gives_its_worker_to_the_peers_own_go_at_once() -> None:
    """A peer at its share of the workers, all held by its deep analysis, asks for a move: the
    analysis is suspended for it at once (never a search of the peer kept waiting behind its
    own analyses), the ``go`` is searched to its depth, and the analysis goes on after it and
    still answers its ``cancel`` with lines."""
    async with running_server(workers=2, per_peer=1, game="yinsh", bot="alphabeta") as (
        server,
        port,
    ):
        pool: Any = server.runner
        peer = await TextPeer.connect(port, local="127.0.0.2")
        await peer.send("analyse id deep depth 60 startpos moves h6 g6")
        with trio.fail_after(10):
            while pool.busy == 0:
                await trio.sleep(0.001)
        await peer.send(YINSH_10_1, "go depth 2")
        with trio.fail_after(5):
            answer = await peer.until("bestmove")
        assert answer[-1] != "bestmove none"
        assert any(line.startswith("info depth 2 ") for line in answer)
        assert pool.suspended == 1
        await peer.send("cancel deep")
        with trio.fail_after(5):
            deep = await peer.until("analysisok")
        assert deep[-1].startswith("analysisok id deep bestmove ")
        assert deep[-1].endswith(" stopped")
        assert deep[0].startswith("analysisinfo id deep depth ")

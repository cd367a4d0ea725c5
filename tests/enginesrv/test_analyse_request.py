"""``analyse`` and ``cancel`` over a real server, as a GUI and as a careless or hostile client use
them, in both framings: each position answered exactly once with its id; the same move, lines
and nodes as ``go`` finds on a fresh session; ``multipv``; the queue's priority and the
positions searched at once; ``cancel`` of waiting and running positions; a refused request
that starts nothing; the ``analyses`` limit; positions with nothing to search (203, 206);
``analyse`` beside a running ``go``; ``quit``, shutdown and a client that leaves; a refereed
game; and the client library's ``analyse`` and ``cancel``."""

from __future__ import annotations

import random
import socket
import struct
from collections.abc import Collection
from typing import Any

import pytest
import trio
import trio.testing

import games
from enginesrv.client import AnalysisItem, AsyncEngine, ClientError, Engine, EngineError
from enginesrv.client.types import Framing
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.connection import Limits
from enginesrv.serve.settings import SessionConfig
from protocol import messages as m
from protocol.mpack import analysis_from_map, params_of
from protocol.text import TextDecoder, analysis_of, encode_reply, parse_reply_line
from tests.enginesrv.peer import (
    MsgpackPeer,
    RecordingThreadRunner,
    TextPeer,
    ThreadRunner,
    running_server,
)
from tests.enginesrv.test_client import FINISHED, START_MOVES, engines
from tests.enginesrv.test_robustness import HIDDEN, VIEW
from tests.enginesrv.test_server import OVER, T7
from tests.trio_run import trio_test
from tests.web.webpeer import running_web, text_socket

__all__ = ["engines"]  # the module's two engines, one per framing (test_client's fixture)

FRAMINGS: tuple[Framing, ...] = ("text", "msgpack")
YOXII = games.load("yoxii")
HOLD = "movetime 60000"
"""A limit no test waits for: a position searched with it runs until it is cancelled."""
GAME_OVER = "error 203 game-over analyse: id {}: the game is over"


def config(**changes: Any) -> SessionConfig:
    """A yoxii session with the alphabeta bot and the default limits, and ``changes``."""
    base: dict[str, Any] = {
        "default_game": "yoxii",
        "default_bot": "alphabeta",
        "limits": Limits().announced(),
    }
    return SessionConfig(**(base | changes))


def position_of(game: str, fen: str | None, moves: Collection[str]) -> games.State:
    return games.replay(games.load(game), fen, moves)


def is_legal(state: games.State, token: str | None) -> bool:
    if token is None:
        return False
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


async def answers(peer: TextPeer, ids: Collection[str]) -> tuple[dict[str, str], list[str]]:
    """Lines until each of ``ids`` has its ``analysisok``: that line of each id, and every line
    read. No id is answered twice, none but ``ids`` at all, and the lines of an answer are
    one block (its ``analysisinfo`` lines, then its ``analysisok``)."""
    ends: dict[str, str] = {}
    lines: list[str] = []
    block: str | None = None  # the id whose analysisinfo lines are being read
    while len(ends) < len(ids):
        line = await peer.line()
        lines.append(line)
        if line.startswith("analysisinfo "):
            assert block in (None, line.split()[2]), f"answers interleaved: {lines}"
            block = line.split()[2]
        elif line.startswith("analysisok "):
            ident = line.split()[2]
            assert block in (None, ident), f"answers interleaved: {lines}"
            block = None
            assert ident in ids, f"an answer for {ident!r}, which was not asked: {line}"
            assert ident not in ends, f"{ident!r} answered twice: {ends[ident]!r}, {line!r}"
            ends[ident] = line
    return ends, lines


def answered_order(lines: list[str]) -> list[str]:
    return [line.split()[2] for line in lines if line.startswith("analysisok ")]


def read_analysis(lines: list[str], ident: str) -> m.Analysis:
    """The answer of ``ident`` among text lines, as a client reads it."""
    infos: list[m.Info] = []
    for line in lines:
        read = parse_reply_line(line)
        if isinstance(read, m.AnalysisInfo) and read.id == ident:
            infos.append(read.info)
        elif isinstance(read, m.AnalysisOk) and read.id == ident:
            return analysis_of(read, infos)
    raise AssertionError(f"no answer for {ident!r} in {lines}")


async def notes_until(peer: MsgpackPeer, msgid: int) -> tuple[list[m.Analysis], list[Any]]:
    """Frames up to the response to ``msgid``: the ``analysis`` notifications among them, read
    as a client reads them (no id twice), and every frame."""
    frames: list[Any] = []
    found: list[m.Analysis] = []
    while True:
        frame = await peer.frame()
        frames.append(frame)
        if frame[0] == 2 and frame[1] == "analysis":
            found.append(analysis_from_map(frame[2][0]))
            assert len({a.id for a in found}) == len(found), f"an id answered twice: {found}"
        if frame[0] == 1 and frame[1] == msgid:
            return found, frames


def analyse_params(line: str) -> dict[str, Any]:
    """The msgpack params of an ``analyse`` written as a text line."""
    decoder = TextDecoder("server")
    decoder.feed(line.encode() + b"\n")
    request = decoder.next_message()
    assert isinstance(request, m.Request)
    assert isinstance(request.command, m.Analyse)
    return params_of(request.command)


class GatedRunner:
    """Searches that find nothing and last until they are stopped; the jobs given, in order,
    and how many ran at once at most."""

    def __init__(self) -> None:
        self.jobs: list[SearchJob] = []
        self.running = 0
        self.most = 0
        self._changed = trio.Event()

    async def started(self, count: int) -> None:
        """Wait until ``count`` searches have started (the caller bounds the wait)."""
        while len(self.jobs) < count:
            await self._changed.wait()

    async def search(self, job: SearchJob, *, stop: trio.Event, **_: Any) -> SearchOutcome:
        self.jobs.append(job)
        self.running += 1
        self.most = max(self.most, self.running)
        self._changed.set()
        self._changed = trio.Event()
        try:
            await stop.wait()
        finally:
            self.running -= 1
        return SearchOutcome(None)


class FailingRunner(ThreadRunner):
    """Its first search fails; the others search."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def search(self, job: SearchJob, **kwargs: Any) -> SearchOutcome:
        if not self.failed:
            self.failed = True
            raise RuntimeError("the worker fell over")
        return await super().search(job, **kwargs)


def searched_positions(jobs: list[SearchJob]) -> list[str]:
    return [job.position for job in jobs]


def after(*moves: str) -> str:
    """The yoxii position after ``moves`` from the start, as a job carries it."""
    return position_of("yoxii", None, moves).to_string()


# -- every position answered once ---------------------------------------------------------------

MIXED = (
    "analyse id a depth 2 startpos id b depth 1 multipv 3 startpos moves e4 4@e5 "
    f"id c nodes 300 fen {after('c5', '4@c6')} id over depth 3 fen {FINISHED} "
    "id e depth 2 searchmoves c3 e5 startpos id f movetime 30 avoidmoves c5 startpos"
)
MIXED_IDS = ("a", "b", "c", "over", "e", "f")


def check_mixed(found: dict[str, m.Analysis]) -> None:
    """The answers of ``MIXED``, whichever framing carried them."""
    assert set(found) == set(MIXED_IDS)
    assert found["over"] == m.Analysis(
        "over", None, error=m.ErrorReply(203, "game-over", "analyse: id over: the game is over")
    )
    start = YOXII.new_state()
    for ident in ("a", "e", "f"):
        assert is_legal(start, found[ident].move), found[ident]
    assert is_legal(position_of("yoxii", None, ["e4", "4@e5"]), found["b"].move)
    assert is_legal(position_of("yoxii", None, ["c5", "4@c6"]), found["c"].move)
    assert [line.depth for line in found["a"].lines] == [2]
    lines = found["b"].lines
    assert [line.multipv for line in lines] == [1, 2, 3]
    assert len({line.pv[0] for line in lines}) == 3
    assert found["b"].move == lines[0].pv[0]
    scores = [line.score.value for line in lines if line.score is not None]
    assert scores == sorted(scores, reverse=True)
    assert found["e"].move in ("c3", "e5")
    assert found["f"].move != "c5"
    for ident in ("a", "b", "c", "e"):  # a movetime search may end by its time (f): stopped
        assert (found[ident].stopped, found[ident].cancelled) == (False, False)
        assert found[ident].move == found[ident].lines[0].pv[0]


@trio_test
async def test_every_position_is_answered_once_with_its_id_in_text() -> None:
    async with running_server(config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(MIXED)
        ends, lines = await answers(peer, MIXED_IDS)
        check_mixed({i: read_analysis(lines, i) for i in MIXED_IDS})
        assert ends["over"] == "analysisok id over bestmove none " + GAME_OVER.format("over")
        assert all(line.startswith("analysis") for line in lines)
        await peer.send("ping 1")
        assert await peer.until("pong 1") == ["pong 1"]  # nothing more came


@trio_test
async def test_every_position_is_answered_once_with_its_id_in_msgpack() -> None:
    async with running_server(config=config()) as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(5, "analyse", analyse_params(MIXED))
        found, frames = await notes_until(peer, 5)
        assert frames[-1] == [1, 5, None, {}]  # the response comes after the last answer
        assert len(found) == len(frames) - 1 == len(MIXED_IDS)
        assert {a.request for a in found} == {5}
        check_mixed({a.id: a for a in found})
        await peer.request(6, "ping", {"token": 1})
        assert await peer.frame() == [1, 6, None, {"token": 1}]  # nothing more came


# -- the same as go on a fresh session ----------------------------------------------------------

YINSH_RINGS = ("h6", "g6", "g8", "c6", "e10", "f8", "g11", "e9", "h11", "d7")


@pytest.mark.parametrize(
    ("game", "fen", "moves", "depth", "lines", "framing"),
    [
        ("yoxii", None, (), 5, 1, "text"),
        ("yoxii", None, ("e4", "4@e5", "f3", "4@e3"), 4, 3, "msgpack"),
        ("yinsh", T7, (), 2, 3, "text"),
        ("yinsh", None, YINSH_RINGS, 2, 1, "msgpack"),
    ],
)
@trio_test
async def test_an_analysis_finds_what_go_finds_on_a_fresh_session(
    game: str, fen: str | None, moves: tuple[str, ...], depth: int, lines: int, framing: Framing
) -> None:
    """The same move, and each line with the same depth, score, nodes and variation: the
    position, the view and the limits reach the worker as ``go`` hands them over, and an
    analysis starts from an empty table."""
    where = "startpos" if fen is None else f"fen {fen}"
    if moves:
        where += " moves " + " ".join(moves)
    async with running_server(workers=1, config=config()) as (_, port):
        go = await TextPeer.connect(port)
        await go.send(f"uginewgame {game}", f"setoption name MultiPV value {lines}")
        await go.send(f"position {where}", f"go depth {depth}")
        searched = [parse_reply_line(line) for line in await go.until("bestmove")]
        best = searched.pop()
        assert isinstance(best, m.BestMove)
        last = {i.multipv or 1: i for i in searched if isinstance(i, m.Info) and i.depth == depth}
        request = f"analyse id p depth {depth} multipv {lines} {where}"
        if framing == "text":
            peer = await TextPeer.connect(port)
            await peer.send(f"uginewgame {game}", request)
            found = read_analysis((await answers(peer, ["p"]))[1], "p")
        else:
            mp = await MsgpackPeer.connect(port)
            await mp.request(1, "uginewgame", {"game": game})
            await mp.request(2, "analyse", analyse_params(request))
            [found], _ = await notes_until(mp, 2)
    assert found.move == best.move
    assert len(found.lines) == lines == len(last)
    for n, line in enumerate(found.lines, 1):
        expected = last[n]
        assert line.multipv == n
        assert (line.depth, line.seldepth, line.score, line.nodes, line.pv) == (
            expected.depth, expected.seldepth, expected.score, expected.nodes, expected.pv
        )  # fmt: skip
    assert found.nodes == last[1].nodes
    assert len({line.pv[0] for line in found.lines}) == lines


async def go_nodes(peer: TextPeer, depth: int) -> int:
    """The nodes of a ``go depth`` on the session's position."""
    await peer.send(f"go depth {depth}")
    info = parse_reply_line((await peer.until("bestmove"))[-2])
    assert isinstance(info, m.Info)
    assert info.nodes is not None
    return info.nodes


async def analysis_nodes(peer: TextPeer, ident: str, depth: int) -> int:
    await peer.send(f"analyse id {ident} depth {depth} startpos")
    found = read_analysis((await answers(peer, [ident]))[1], ident)
    assert found.nodes is not None
    return found.nodes


@trio_test
async def test_analyses_keep_a_table_of_their_own_apart_from_the_game() -> None:
    """On real workers, which keep a session's tables: an analysis does not search from the
    table of the session's game, nor disturb it, and keeps its own from one analysis to the
    next."""
    async with running_server(workers=1, config=config()) as (_, port):
        plain = await TextPeer.connect(port)
        await plain.send("position startpos")
        fresh = await go_nodes(plain, 5)
        warm = await go_nodes(plain, 5)
        assert warm < fresh  # the game's table is kept from one go to the next
        mixed = await TextPeer.connect(port)
        await mixed.send("position startpos")
        assert await go_nodes(mixed, 5) == fresh
        assert await analysis_nodes(mixed, "p", 5) == fresh  # an empty table, not the game's
        assert await analysis_nodes(mixed, "q", 5) < fresh  # its own, kept
        assert await go_nodes(mixed, 5) == warm  # the game's table as the first go left it


# -- the queue: priority, positions at once, cancel -----------------------------------------------


@trio_test
async def test_a_later_request_of_higher_priority_is_searched_first() -> None:
    """One position at a time: while ``hold`` runs the others wait; once it is cancelled they
    are searched by priority, then in the order they came, and answered in that order."""
    runner = RecordingThreadRunner()
    async with running_server(runner=runner, config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            f"analyse id hold {HOLD} startpos id q1 depth 1 startpos moves c3 "
            "id q2 depth 1 startpos moves c4",
            "analyse priority 5 id hi1 depth 1 startpos moves c5 id hi2 depth 1 startpos moves d3",
            "analyse priority -3 id lo depth 1 startpos moves d5",
            "analyse id q3 depth 1 startpos moves e3",
            "ping 1",
        )
        assert await peer.line() == "pong 1"  # nothing answered: all wait for hold
        await peer.send("cancel hold")
        order = ["hold", "hi1", "hi2", "q1", "q2", "q3", "lo"]
        ends, lines = await answers(peer, order)
        assert answered_order(lines) == order
        assert ends["hold"].endswith(" stopped")
        assert is_legal(YOXII.new_state(), ends["hold"].split()[4])
        assert all(not ends[i].endswith(("stopped", "cancelled")) for i in order[1:])
    moves = {"hi1": "c5", "hi2": "d3", "q1": "c3", "q2": "c4", "q3": "e3", "lo": "d5"}
    assert searched_positions(runner.jobs) == [after()] + [after(moves[i]) for i in order[1:]]


@trio_test
async def test_analyses_at_once_positions_are_searched_together() -> None:
    runner = GatedRunner()
    async with running_server(runner=runner, config=config(analyses_at_once=2)) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "analyse id a depth 9 startpos moves c3 id b depth 9 startpos moves c4 "
            "id c depth 9 startpos moves c5 id d depth 9 startpos moves d3"
        )
        with trio.fail_after(5):
            await runner.started(2)
        await peer.send("ping 1")
        assert await peer.line() == "pong 1"
        assert sorted(searched_positions(runner.jobs)) == sorted([after("c3"), after("c4")])
        await peer.send("cancel a")
        ends, _ = await answers(peer, ["a"])
        with trio.fail_after(5):
            await runner.started(3)  # a's place goes to the next
        assert searched_positions(runner.jobs)[2] == after("c5")
        await peer.send("cancel")
        ends, lines = await answers(peer, ["b", "c", "d"])
        assert ends["d"] == "analysisok id d bestmove none cancelled"
        assert answered_order(lines)[0] == "d"  # at once; the searched ones after their stop
    assert runner.most == 2
    assert len(runner.jobs) == 3  # d was never searched
    for ident, first in (("b", "c4"), ("c", "c5")):
        move = ends[ident].split()[4]
        assert ends[ident] == f"analysisok id {ident} bestmove {move} stopped"
        assert is_legal(position_of("yoxii", None, [first]), move)


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_cancel_answers_a_waiting_position_at_once_and_stops_a_running_one(
    framing: Framing,
) -> None:
    request = f"analyse id run {HOLD} startpos id w1 depth 2 startpos id w2 depth 2 startpos"
    async with running_server(config=config()) as (_, port):
        if framing == "text":
            peer = await TextPeer.connect(port)
            await peer.send(request, "stop", "cancel w2 unknown", "ping 1")  # stop: go's only
            assert await peer.until("pong 1") == [
                "analysisok id w2 bestmove none cancelled",
                "pong 1",
            ]
            await peer.send("cancel run")
            _, lines = await answers(peer, ["run", "w1"])
            assert answered_order(lines) == ["run", "w1"]
            await peer.send("cancel run w1 w2", "ping 2")  # all answered: nothing more
            assert await peer.until("pong 2") == ["pong 2"]
            found = {i: read_analysis(lines, i) for i in ("run", "w1")}
        else:
            mp = await MsgpackPeer.connect(port)
            await mp.request(1, "analyse", analyse_params(request))
            await mp.request(2, "stop")
            stopped = await mp.frame()  # no go runs: 205; stop is go's, the analyses run on
            assert stopped[:2] == [1, 2]
            assert stopped[2][:2] == [205, "not-searching"]
            await mp.request(3, "cancel", {"ids": ["w2", "unknown"]})
            notes, frames = await notes_until(mp, 3)
            assert notes == [m.Analysis("w2", None, cancelled=True)]
            assert frames[-1] == [1, 3, None, {}]
            await mp.request(4, "cancel", {"ids": ["run"]})
            notes, frames = await notes_until(mp, 1)  # the cancel's response, before run's stop
            assert [f[:2] for f in frames if f[0] == 1] == [[1, 4], [1, 1]]
            assert [a.id for a in notes] == ["run", "w1"]
            found = {a.id: a for a in notes}
    run = found["run"]
    assert (run.stopped, run.cancelled) == (True, False)
    assert is_legal(YOXII.new_state(), run.move)
    assert (found["w1"].stopped, found["w1"].cancelled) == (False, False)
    assert [line.depth for line in found["w1"].lines] == [2]


@trio_test
async def test_an_id_held_already_is_refused_and_the_held_position_goes_on() -> None:
    runner = RecordingThreadRunner()
    async with running_server(runner=runner, config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            f"analyse id a {HOLD} startpos",
            "analyse id b depth 1 startpos id a depth 1 startpos",
            "ping 1",
        )
        assert await peer.until("pong 1") == [
            "error 101 bad-arguments analyse: id a is being analysed already",
            "pong 1",
        ]
        other = await TextPeer.connect(port)  # ids are a session's own
        await other.send("analyse id a depth 1 startpos")
        await answers(other, ["a"])
        await peer.send("cancel a")
        ends, lines = await answers(peer, ["a"])
        assert ends["a"].endswith(" stopped")
        await peer.send("analyse id a depth 1 startpos")  # answered: the id is free again
        ends, more = await answers(peer, ["a"])
        assert not ends["a"].endswith(" stopped")
        assert all(not line.startswith("analysisok id b ") for line in lines + more)
    assert len(runner.jobs) == 3


# -- a refused request starts nothing -------------------------------------------------------------

FIVE_MOVES = "c5 4@c6 e4 4@e5 b4"
REFUSALS = [
    ("", "id ok depth 1 startpos", 101, "analyse: id ok is given twice"),
    ("", "id bad startpos", 101, "analyse: id bad: give it a depth, nodes or a movetime"),
    ("", "id bad nodes 5 movetime 1001 startpos", 101,
     "analyse: id bad: movetime 1001 is over the server's limit of 1000 ms (limit movetime)"),
    ("", "id bad depth 1 fen 3/5/7/3T3/7/5/3 w t", 202,
     "analyse: id bad: '3/5/7/3T3/7/5/3 w t': syntax: expected 5 fields (board side phase "
     "wstock bstock) separated by single spaces"),
    ("", "id bad depth 1 startpos moves c5 4@c6 zz", 201,
     "zz: analyse: id bad: not a move token: a Totem move is its destination square (d5), a "
     "placement is <value>@<square> (3@c5), in lowercase without spaces"),
    ("", f"id bad depth 1 startpos moves {FIVE_MOVES}", 305,
     "analyse: id bad: 5 moves are over the server's limit of 4 plies (limit plies)"),
    ("", "id bad depth 1 searchmoves c5 a1 startpos", 101,
     "analyse: id bad: searchmoves 'a1': a1 is not a square of the board (a cut-off corner)"),
    ("", "id bad depth 1 searchmoves c5 avoidmoves c5 startpos", 101,
     "analyse: id bad: searchmoves and avoidmoves leave no legal move"),
    ("", "id bad depth 1 multipv 257 startpos", 101, "analyse: id bad: multipv 257 is over 256"),
    ("greedy", "id bad depth 1 multipv 2 startpos", 101,
     "analyse: id bad: bot 'greedy' reports one line: multipv above 1 needs a bot that offers "
     "it (the handshake's analysis lines)"),
    ("greedy", "id bad depth 1 avoidmoves c5 startpos", 101,
     "analyse: id bad: bot 'greedy' searches every move: searchmoves and avoidmoves need a bot "
     "that offers them (the handshake's analysis lines)"),
]  # fmt: skip
NAMES = {101: "bad-arguments", 201: "illegal-move", 202: "invalid-position", 305: "ply-limit"}


def refusal_line(code: int, message: str) -> str:
    """The text framing's refusal: ``invalidmove MOVE REASON`` for an illegal move."""
    if code == 201:
        move, reason = message.split(": ", 1)
        return f"invalidmove {move} {reason}"
    return f"error {code} {NAMES[code]} {message}"


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(("bot", "bad", "code", "message"), REFUSALS, ids=[r[1] for r in REFUSALS])
@trio_test
async def test_a_refused_request_starts_nothing(
    framing: Framing, bot: str, bad: str, code: int, message: str
) -> None:
    """The good position before the bad one is not searched, not held, never answered: the
    next request may take its id, and its one answer is the only one that comes."""
    runner = RecordingThreadRunner()
    limits = Limits(movetime=1000, plies=4)
    session = config(max_movetime=1000, max_plies=4, limits=limits.announced())
    request = f"analyse id ok depth 1 startpos {bad}"
    again = "analyse id ok depth 1 startpos"
    async with running_server(runner=runner, limits=limits, config=session) as (_, port):
        if framing == "text":
            peer = await TextPeer.connect(port)
            if bot:
                await peer.send(f"setoption name Bot value {bot}")
            await peer.send(request, "ping 1")
            assert await peer.until("pong 1") == [refusal_line(code, message), "pong 1"]
            assert runner.jobs == []
            await peer.send(again)
            await answers(peer, ["ok"])  # its one answer, and no other
            await peer.send("ping 2")
            assert await peer.until("pong 2") == ["pong 2"]
        else:
            mp = await MsgpackPeer.connect(port)
            if bot:
                await mp.request(1, "setoption", {"name": "Bot", "value": bot})
            await mp.request(2, "analyse", analyse_params(request))
            await mp.request(3, "ping", {"token": 3})
            refused, frames = await notes_until(mp, 3)
            assert refused == []
            [answer] = [f for f in frames if f[0] == 1 and f[1] == 2]
            assert answer[2][:3] == [code, NAMES[code], message]
            assert answer[3] is None
            assert runner.jobs == []
            await mp.request(4, "analyse", analyse_params(again))
            found, frames = await notes_until(mp, 4)
            assert [a.id for a in found] == ["ok"]
            assert len(frames) == 2
    assert len(runner.jobs) == 1


@trio_test
async def test_a_session_holds_at_most_the_analyses_limit() -> None:
    limits = Limits(analyses=3)
    async with running_server(
        limits=limits, config=config(max_analyses=3, limits=limits.announced())
    ) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("ugi")
        assert "limit analyses 3" in await peer.until("ugiok")
        await peer.send(
            "analyse id x1 depth 1 startpos id x2 depth 1 startpos id x3 depth 1 startpos "
            "id x4 depth 1 startpos",
            f"analyse id h {HOLD} startpos id w depth 1 startpos",
            "analyse id x1 depth 1 startpos id x2 depth 1 startpos",
            "ping 1",
        )
        assert await peer.until("pong 1") == [
            "error 300 busy analyse: 4 positions and the 0 held would be over the 3 a session "
            "may hold at once (limit analyses); wait for answers or cancel some",
            "error 300 busy analyse: 2 positions and the 2 held would be over the 3 a session "
            "may hold at once (limit analyses); wait for answers or cancel some",
            "pong 1",
        ]
        await peer.send("analyse id x1 depth 1 startpos", "ping 2")  # up to the limit is held
        assert await peer.until("pong 2") == ["pong 2"]
        await peer.send("cancel")
        ends, _ = await answers(peer, ["h", "w", "x1"])
        assert (ends["w"], ends["x1"]) == (
            "analysisok id w bestmove none cancelled", "analysisok id x1 bestmove none cancelled"
        )  # fmt: skip
        await peer.send("ping 3")
        assert await peer.until("pong 3") == ["pong 3"]  # x2, x3, x4: never


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_the_default_limit_is_1024_positions(framing: Framing) -> None:
    many = [f"id p{i} depth 1 startpos" for i in range(1, 1024)]
    full = " ".join(["analyse", f"id p0 {HOLD} startpos", *many])
    over = " ".join([full, "id p1024 depth 1 startpos"])
    ids = [f"p{i}" for i in range(1024)]
    async with running_server(config=config()) as (_, port):
        if framing == "text":
            peer = await TextPeer.connect(port)
            await peer.send("ugi")
            assert "limit analyses 1024" in await peer.until("ugiok")
            await peer.send(over, full, "cancel")
            assert (await peer.line()).startswith(
                "error 300 busy analyse: 1025 positions and the 0 held would be over the 1024"
            )
            ends, _ = await answers(peer, ids)
            assert sum(line.endswith(" cancelled") for line in ends.values()) == 1023
        else:
            mp = await MsgpackPeer.connect(port)
            await mp.request(1, "analyse", analyse_params(over))
            busy = (
                "analyse: 1025 positions and the 0 held would be over the 1024 a session may "
                "hold at once (limit analyses); wait for answers or cancel some"
            )
            assert await mp.frame() == [1, 1, [300, "busy", busy, None], None]
            await mp.request(2, "analyse", analyse_params(full))
            await mp.request(3, "cancel")
            found, frames = await notes_until(mp, 2)
            assert sorted(a.id for a in found) == sorted(ids)
            assert sum(a.cancelled for a in found) == 1023
            assert frames[-1] == [1, 2, None, {}]


# -- nothing to search: answered at once --------------------------------------------------------


@pytest.mark.parametrize(("game", "fen"), [("yoxii", FINISHED), ("yinsh", OVER)])
@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_a_finished_game_is_answered_at_once_with_203(
    framing: Framing, game: str, fen: str
) -> None:
    request = f"analyse id hold {HOLD} startpos id over depth 2 fen {fen}"
    over = m.Analysis(
        "over", None, error=m.ErrorReply(203, "game-over", "analyse: id over: the game is over")
    )
    async with running_server(config=config(default_game=game)) as (_, port):
        if framing == "text":
            peer = await TextPeer.connect(port)
            await peer.send(request, "ping 1")
            assert await peer.until("pong 1") == [
                "analysisok id over bestmove none " + GAME_OVER.format("over"),
                "pong 1",
            ]  # before the position ahead of it, which still runs
            await peer.send("cancel")
            ends, _ = await answers(peer, ["hold"])
            assert ends["hold"].endswith(" stopped")
        else:
            mp = await MsgpackPeer.connect(port)
            await mp.request(1, "analyse", analyse_params(request))
            await mp.request(2, "ping", {"token": 2})
            found, frames = await notes_until(mp, 2)
            assert found == [over]
            assert found[0].request == 1
            assert len(frames) == 2
            await mp.request(3, "cancel")
            found, frames = await notes_until(mp, 1)
            assert [a.id for a in found] == ["hold"]
            assert found[0].stopped


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_hidden_moves_are_answered_at_once_with_206(framing: Framing) -> None:
    """Yin Yang: a view whose side to act has hidden laws has nothing to search; the view of
    the side to act is searched."""
    request = f"analyse id h depth 1 fen {VIEW} moves {HIDDEN} id v depth 1 fen {VIEW}"
    hidden = (
        "analyse: id h: the side to act has moves that depend on information hidden in this "
        "position; send the position of the side to act (its own view)"
    )
    async with running_server(config=config(default_game="yinyang")) as (_, port):
        if framing == "text":
            peer = await TextPeer.connect(port)
            await peer.send(request)
            ends, lines = await answers(peer, ["h", "v"])
            assert answered_order(lines) == ["h", "v"]
            assert ends["h"] == f"analysisok id h bestmove none error 206 moves-hidden {hidden}"
            found = read_analysis(lines, "v")
        else:
            mp = await MsgpackPeer.connect(port)
            await mp.request(1, "analyse", analyse_params(request))
            notes, _ = await notes_until(mp, 1)
            assert notes[0] == m.Analysis(
                "h", None, error=m.ErrorReply(206, "moves-hidden", hidden)
            )
            found = notes[1]
    assert is_legal(position_of("yinyang", VIEW, []), found.move)
    assert found.error is None


@trio_test
async def test_a_failed_search_is_still_answered_and_the_queue_goes_on() -> None:
    first = YOXII.new_state()
    token = first.move_to_str(first.legal_moves()[0])
    async with running_server(runner=FailingRunner(), config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("analyse id f depth 2 startpos id g depth 2 startpos")
        ends, _ = await answers(peer, ["f", "g"])
    assert ends["f"] == (
        f"analysisok id f bestmove {token} stopped error 500 internal analyse: id f: search "
        "failed (RuntimeError)"
    )  # a legal move all the same
    assert is_legal(first, ends["g"].split()[4])
    assert " error " not in ends["g"]


@trio_test
async def test_analyse_without_a_game_is_error_200() -> None:
    async with running_server(config=config(default_game=None)) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("analyse id a depth 1 startpos", "ping 1")
        assert await peer.until("pong 1") == [
            "error 200 no-game analyse: no game is set; send setoption name Game value NAME",
            "pong 1",
        ]


@trio_test
async def test_analyse_as_a_msgpack_notification_is_refused() -> None:
    runner = RecordingThreadRunner()
    async with running_server(runner=runner, config=config()) as (_, port):
        mp = await MsgpackPeer.connect(port)
        await mp.notify("analyse", analyse_params("analyse id a depth 1 startpos"))
        await mp.request(1, "ping", {"token": 1})
        assert await mp.frame() == [
            2, "error",
            [{"code": 101, "name": "bad-arguments",
              "message": "analyse: send it as a request; its response ends it", "data": None}],
        ]  # fmt: skip
        assert await mp.frame() == [1, 1, None, {"token": 1}]
        await mp.request(2, "analyse", analyse_params("analyse id a depth 1 startpos"))
        found, frames = await notes_until(mp, 2)  # the id was never taken
        assert [a.id for a in found] == ["a"]
        assert len(frames) == 2
    assert len(runner.jobs) == 1


# -- beside a go ------------------------------------------------------------------------------


@trio_test
async def test_analyse_and_cancel_are_answered_while_go_infinite_runs_in_text() -> None:
    async with running_server(config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos moves c5", "go infinite")
        await peer.expect("info depth")
        await peer.send("analyse id a depth 3 startpos", "cancel nothing")
        ends, lines = await answers(peer, ["a"])
        assert not [line for line in lines if line.startswith(("bestmove", "error"))]
        assert is_legal(YOXII.new_state(), ends["a"].split()[4])
        await peer.send("stop")
        lines = await peer.until("bestmove")
        assert is_legal(position_of("yoxii", None, ["c5"]), lines[-1].split()[1])
        await peer.send("isready")
        assert [line for line in await peer.until("readyok") if line.startswith("best")] == []


@trio_test
async def test_analyse_and_cancel_are_answered_while_go_infinite_runs_in_msgpack() -> None:
    async with running_server(config=config()) as (_, port):
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "position", {"moves": ["c5"]})
        await mp.request(2, "go", {"infinite": True})
        while (await mp.frame())[:2] != [2, "info"]:
            pass
        await mp.request(3, "analyse", analyse_params("analyse id a depth 3 startpos"))
        await mp.request(4, "cancel", {"ids": ["nothing"]})
        found, frames = await notes_until(mp, 3)
        assert [a.id for a in found] == ["a"]
        assert is_legal(YOXII.new_state(), found[0].move)
        assert [f for f in frames if f[0] == 1] == [[1, 4, None, {}], [1, 3, None, {}]]  # no 204
        await mp.request(5, "stop")
        answer = await mp.response(2)
        assert is_legal(position_of("yoxii", None, ["c5"]), answer[3]["move"])
        await mp.request(6, "isready")
        await mp.response(6)
        assert [f for f in mp.seen if f[0] == 1 and f[1] == 2] == []


# -- the end of a session ---------------------------------------------------------------------

WAITING = [f"w{i}" for i in range(200)]
HELD = " ".join(
    ["analyse", f"id run {HOLD} startpos", *(f"id {i} depth 1 startpos" for i in WAITING)]
)


def check_ended(found: dict[str, str]) -> None:
    """The answers of ``HELD`` at the end of a session: each waiting one cancelled, the running
    one stopped with a legal move."""
    assert set(found) == {"run", *WAITING}
    for ident in WAITING:
        assert found[ident] == f"analysisok id {ident} bestmove none cancelled"
    assert found["run"].endswith(" stopped")
    assert is_legal(YOXII.new_state(), found["run"].split()[4])


def encode_answer(answer: m.Analysis) -> str:
    """The ``analysisok`` line of an answer."""
    return encode_reply(answer).decode().splitlines()[-1]


@trio_test
async def test_quit_answers_every_held_position_before_closing_in_text() -> None:
    async with running_server(config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(HELD, "ping 1")
        assert await peer.line() == "pong 1"
        await peer.send("quit")
        assert await peer.closed()
        lines = peer.buffer.decode().splitlines()
    check_ended({line.split()[2]: line for line in lines if line.startswith("analysisok")})
    assert len([line for line in lines if line.startswith("analysisok")]) == len(WAITING) + 1


@trio_test
async def test_quit_answers_every_held_position_before_closing_in_msgpack() -> None:
    async with running_server(config=config()) as (_, port):
        mp = await MsgpackPeer.connect(port)
        await mp.request(1, "analyse", analyse_params(HELD))
        await mp.request(2, "quit")
        found, frames = await notes_until(mp, 1)
        assert await mp.frame() == [1, 2, None, {}]
        with pytest.raises(EOFError):
            await mp.frame()
    check_ended({a.id: encode_answer(a) for a in found})
    assert len(found) == len(frames) - 1 == len(WAITING) + 1


@trio_test
async def test_shutdown_answers_every_held_position_then_says_so() -> None:
    async with running_server(config=config()) as (server, port):
        peer = await TextPeer.connect(port)
        await peer.send(HELD, "ping 1")
        assert await peer.line() == "pong 1"
        server.stop.set()
        assert await peer.closed()
        lines = peer.buffer.decode().splitlines()
    answered = [line for line in lines if line.startswith("analysisok")]
    check_ended({line.split()[2]: line for line in answered})
    assert len(answered) == len(WAITING) + 1
    assert lines[-1] == "error 304 shutting-down the server is stopping"


@pytest.mark.parametrize("how", ["close", "reset"])
@trio_test
async def test_a_client_that_leaves_mid_analysis_frees_the_workers(how: str) -> None:
    """Real workers, two; a session's analyses search two at once and take both. When their
    client goes (a close, or a reset: the server sees a lost connection), both workers go to
    the clients waiting, well before any slice would lend them."""
    session = config(analyses_at_once=2)
    async with running_server(workers=2, slice_seconds=60, config=session) as (_, port):
        leaving = await TextPeer.connect(port, local="127.0.0.2")
        await leaving.send(
            f"analyse id a {HOLD} startpos id b {HOLD} startpos id c depth 1 startpos", "ping 1"
        )
        assert await leaving.line() == "pong 1"
        first = await TextPeer.connect(port, local="127.0.0.3")
        await first.send("go infinite")
        await first.expect("info string waiting for a search worker")
        if how == "reset":
            leaving.stream.socket.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
        await leaving.aclose()
        second = await TextPeer.connect(port, local="127.0.0.4")
        await second.send("go infinite")
        with trio.fail_after(5):
            await first.until("info depth")
            await second.until("info depth")  # both workers: the two searches run at once
        for peer in (first, second):
            await peer.send("stop")
            assert not (await peer.until("bestmove"))[-1].endswith("none")


@pytest.mark.parametrize("ids", ["", "hold w1 w2 w3"])
@trio_test
async def test_a_cancel_starts_none_of_the_positions_it_cancels(ids: str) -> None:
    """The running position's place is not given to a waiting one that the same ``cancel``
    ends: each waiting one is answered ``cancelled`` and never searched."""
    runner = GatedRunner()
    async with running_server(runner=runner, config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "analyse id hold depth 9 startpos id w1 depth 1 startpos id w2 depth 1 startpos "
            "id w3 depth 1 startpos"
        )
        with trio.fail_after(5):
            await runner.started(1)
        await peer.send(f"cancel {ids}".strip())
        ends, _ = await answers(peer, ["hold", "w1", "w2", "w3"])
    assert len(runner.jobs) == 1
    assert ends["hold"].endswith(" stopped")
    for ident in ("w1", "w2", "w3"):
        assert ends[ident] == f"analysisok id {ident} bestmove none cancelled"


# -- a game the server referees ---------------------------------------------------------------


@trio_test
async def test_a_refereed_game_refuses_analyse_and_a_plain_socket_takes_it() -> None:
    refusal = (
        "error 101 bad-arguments analyse: this socket is a game the server referees; open a "
        "new socket for another game"
    )
    async with running_web() as web:
        async with text_socket(web.ws("game=yoxii&opponent=bot:random&side=p1")) as refereed:
            await refereed.send("analyse id a depth 1 startpos", "ping 1")
            assert await refereed.line() == refusal
            assert await refereed.line() == "pong 1"
            assert await refereed.ask("query played") == ""  # the game is as it was
        async with text_socket(web.ws()) as plain:
            await plain.send("uginewgame yoxii", "analyse id a depth 1 startpos")
            answer = await plain.line()
            while answer.startswith("analysisinfo"):
                answer = await plain.line()
            assert answer.startswith("analysisok id a bestmove ")
            assert is_legal(YOXII.new_state(), answer.split()[4])


# -- the client library ---------------------------------------------------------------------------


@pytest.fixture(params=FRAMINGS)
def engine(request: pytest.FixtureRequest, engines: dict[Framing, Engine]) -> Engine:
    """The real engine of one framing (one worker: one position searched at a time), with
    the alphabeta bot on yoxii and nothing held."""
    chosen = engines[request.param]
    assert chosen.alive
    chosen.cancel()
    chosen.set_option("Bot", "alphabeta")
    chosen.new_game("yoxii")
    return chosen


def test_engine_analyse_returns_every_id_in_the_order_given(engine: Engine) -> None:
    told: list[m.Analysis] = []
    positions = [
        AnalysisItem("z", depth=3),
        AnalysisItem("over", FINISHED, depth=2),
        AnalysisItem("a", None, ("c5", "4@c6"), nodes=500, multipv=2),
        AnalysisItem("m", depth=2, searchmoves=("e3", "e5")),
    ]
    found = engine.analyse(positions, on_result=told.append)
    assert list(found) == ["z", "over", "a", "m"]
    assert sorted(a.id for a in told) == sorted(found)  # once each, as each came
    assert all(found[a.id] is a for a in told)
    assert told[0].id == "over"  # answered at once, before those searched
    assert found["over"].error == m.ErrorReply(
        203, "game-over", "analyse: id over: the game is over"
    )
    assert found["z"].move in START_MOVES
    assert [line.depth for line in found["z"].lines] == [3]
    assert is_legal(position_of("yoxii", None, ["c5", "4@c6"]), found["a"].move)
    assert [line.multipv for line in found["a"].lines] == [1, 2]
    assert found["m"].move in ("e3", "e5")
    assert all(not (a.stopped or a.cancelled) for a in found.values())


@pytest.mark.parametrize(
    ("item", "code", "text"),
    [
        (AnalysisItem("bad", "junk", depth=1), 202, "analyse: id bad: 'junk': syntax: "),
        (AnalysisItem("bad", None, ("c5", "zz"), depth=1), 201, "zz: analyse: id bad: "),
        (AnalysisItem("bad"), 101, "analyse: id bad: give it a depth, nodes or a movetime"),
        (AnalysisItem("bad", movetime=60001), 101, "analyse: id bad: movetime 60001 is over"),
    ],
)
def test_engine_analyse_raises_the_refusal_and_holds_nothing(
    engine: Engine, item: AnalysisItem, code: int, text: str
) -> None:
    told: list[m.Analysis] = []
    positions = [AnalysisItem("ok", depth=1), item]
    with pytest.raises(EngineError) as caught:
        engine.analyse(positions, on_result=told.append)
    assert caught.value.code == code
    assert caught.value.text.startswith(text), caught.value.text
    assert told == []
    again = engine.analyse([AnalysisItem("ok", depth=1), AnalysisItem("bad", depth=1)])
    assert list(again) == ["ok", "bad"]  # neither id was taken


def test_engine_analyse_refuses_an_id_given_twice_itself(engine: Engine) -> None:
    twice = [AnalysisItem("ok", depth=1), AnalysisItem("ok", depth=2)]
    with pytest.raises(ClientError, match=r"^analyse: id ok is given twice"):
        engine.analyse(twice)
    assert list(engine.analyse(twice[:1])) == ["ok"]


@pytest.mark.parametrize(
    ("positions", "priority"),
    [
        ([], 0),
        ([AnalysisItem("depth", depth=1)], 0),
        ([AnalysisItem("a b", depth=1)], 0),
        ([AnalysisItem("i" * 65, depth=1)], 0),
        ([AnalysisItem("a", depth=1)], 2**31),
        ([AnalysisItem("a", depth=1)], True),
    ],
)
def test_engine_analyse_refuses_what_it_cannot_send(
    engine: Engine, positions: list[AnalysisItem], priority: int
) -> None:
    with pytest.raises(ValueError, match=r"^analyse: "):
        engine.analyse(positions, priority=priority)
    with pytest.raises(ValueError, match=r"^cancel: id 'moves': "):
        engine.cancel(["moves"])
    assert list(engine.analyse([AnalysisItem("a", depth=1)])) == ["a"]


def test_engine_analyse_past_its_timeout_cancels_the_rest(engine: Engine) -> None:
    told: list[str] = []
    found = engine.analyse(
        [AnalysisItem("run", movetime=60000), AnalysisItem("w1", depth=1),
         AnalysisItem("w2", depth=1)],
        timeout=0.2,
        on_result=lambda a: told.append(a.id),
    )  # fmt: skip
    assert list(found) == ["run", "w1", "w2"]
    assert sorted(told) == ["run", "w1", "w2"]
    assert (found["run"].stopped, found["run"].cancelled) == (True, False)
    assert found["run"].move in START_MOVES
    for ident in ("w1", "w2"):
        assert found[ident] == m.Analysis(ident, None, cancelled=True)
    assert list(engine.analyse([AnalysisItem("run", depth=1)])) == ["run"]  # free again


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_async_engine_cancel_and_analyse_beside_a_search(framing: Framing) -> None:
    async with (
        running_server(config=config()) as (_, port),
        AsyncEngine.connect("127.0.0.1", port, framing=framing) as engine,
    ):
        await engine.position(None, ["c5"])
        search = await engine.start_search(infinite=True)
        found: dict[str, m.Analysis] = {}

        async def analyse() -> None:
            items = [AnalysisItem("x", movetime=60000), AnalysisItem("y", depth=2)]
            found.update(await engine.analyse(items))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(analyse)
            await trio.testing.wait_all_tasks_blocked()  # its request is sent
            await engine.cancel(["x"])
        assert list(found) == ["x", "y"]
        assert (found["x"].stopped, found["x"].cancelled) == (True, False)
        assert found["x"].move in START_MOVES
        assert (found["y"].stopped, found["y"].cancelled) == (False, False)
        assert not search.done
        await engine.stop()
        result = await search.result()
        assert is_legal(position_of("yoxii", None, ["c5"]), result.move)


def a_forced_position(game: games.Game) -> str:
    """A position of ``game`` (not finished) with a single legal move, from seeded random games."""
    rng = random.Random(7)
    for _ in range(200):
        state = game.new_state()
        while not state.is_terminal():
            moves = state.legal_moves()
            if len(moves) == 1:
                return state.to_string()
            state.push(moves[rng.randrange(len(moves))])
    raise AssertionError("no forced position found")


@pytest.mark.parametrize("game", ["yoxii", "yohoho"])
@trio_test
async def test_a_forced_position_is_searched_for_its_score(game: str) -> None:
    """``go`` plays a single legal move at once, without a score; an analysis wants the score
    of the position, so it searches it to the depth asked."""
    fen = a_forced_position(games.load(game))
    async with running_server(workers=1, config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"uginewgame {game}", f"analyse id f depth 2 fen {fen}")
        found = read_analysis((await answers(peer, ["f"]))[1], "f")
    [only] = games.load(game).state_from_string(fen).legal_moves()
    assert found.move == games.load(game).state_from_string(fen).move_to_str(only)
    [line] = found.lines
    assert line.depth == 2
    assert line.score is not None
    assert line.pv[0] == found.move


@trio_test
async def test_a_yin_yang_analysis_answers_its_lines_without_their_notes() -> None:
    """Yin Yang's search notes its samples on each line (`string samples ...`); an analysis'
    answer keeps the line (its depth, score and variation), not the note."""
    fen = (
        "bww./bwww/bbbw/b.bb b start -.ww.>bwwb,+wwbw>wwb.,-ww.w>*,-b..b>*"
        " -bwbb>.wbb,-.b..>wbw.,-...b>....,-.w.b>wwwb 8 10 7"
    )
    async with running_server(workers=1, config=config()) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("uginewgame yinyang", f"analyse id y depth 2 fen {fen}")
        ends, lines = await answers(peer, ["y"])
    found = read_analysis(lines, "y")
    assert found.error is None, ends
    [line] = found.lines
    assert line.depth == 2
    assert line.score is not None
    assert line.pv[0] == found.move
    assert not any("string" in text for text in lines)

"""``go searchmoves`` and ``go avoidmoves`` from a hostile or careless client: a frame of tens of
thousands of tokens against a Yin Yang position of 14,589 moves, avoidmoves in the setup (405^4
moves, never listed), a ``go`` whose search never ran (stopped before a worker was free, a
runner that failed), whose one ``bestmove`` is still a move it allowed; the read-ahead's count
of a go's moves; the client given an iterator. Each test failed before its fix."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import games
from bots.engine import SearchInfo
from enginesrv.client._args import go_command
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.reader import TOKEN_COST, _cost
from protocol import messages as m
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.trio_run import trio_test

YINYANG = games.load("yinyang")
CROWDED = "bwbw/bwbw/bwbw/bwbw b start -bwbw>*,-wbwb>*,-bbww>*,-wwbb>* ?,?,?,? 8 10 1"
"""Black's view of a position of 14,589 legal moves (its four adaptations at every anchor)."""


class NoSearchRunner:
    """Answers every search with no result, as the pool does for a ``go`` stopped before a
    worker was free, or one whose worker failed."""

    def __init__(self) -> None:
        self.jobs: list[SearchJob] = []

    async def search(self, job: SearchJob, **_: Any) -> SearchOutcome:
        self.jobs.append(job)
        return SearchOutcome(None)


@trio_test
async def test_a_long_move_list_is_read_off_the_event_loop_once_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """50,000 copies of one token (a frame of 950 kB) against 14,589 legal moves held the
    event loop for seconds: each copy was parsed and looked for in the legal list there."""
    view = YINYANG.state_from_string(CROWDED)
    last = view.move_to_str(view.legal_moves()[-1])
    kind = type(view)
    original = kind.parse_move
    parsed: list[int] = []

    def watched(self: games.State, text: str) -> int:
        if text == last:
            parsed.append(threading.get_ident())
        return original(self, text)

    monkeypatch.setattr(kind, "parse_move", watched)
    async with running_server(game="yinyang", bot="alphabeta") as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "position", {"fen": CROWDED})
        assert (await peer.response(1))[2] is None
        go = {"depth": 1, "searchmoves": [last] * 50_000, "avoidmoves": [last]}
        await peer.request(2, "go", go)
        reply = await peer.response(2)
        assert reply[2] == [
            101,
            "bad-arguments",
            "go: searchmoves and avoidmoves leave no legal move",
            None,
        ]
        await peer.request(3, "isready")
        assert (await peer.response(3))[2] is None
    assert len(parsed) == 2  # once in each list
    assert threading.get_ident() not in parsed


@trio_test
async def test_a_go_that_never_searched_answers_a_move_it_allows() -> None:
    runner = NoSearchRunner()
    start = games.load("yoxii").new_state()
    first = start.move_to_str(start.legal_moves()[0])
    second = start.move_to_str(start.legal_moves()[1])
    async with running_server(game="yoxii", bot="alphabeta", runner=runner) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos", "go depth 1 searchmoves e5 d3 avoidmoves e5")
        assert await peer.line() == "bestmove d3"
        await peer.send(f"go depth 1 avoidmoves {first}")
        assert await peer.line() == f"bestmove {second}"
        await peer.send("go depth 1")
        assert await peer.line() == f"bestmove {first}"
    assert [job.searchmoves for job in runner.jobs] == [("e5", "d3"), None, None]


@trio_test
async def test_avoidmoves_in_the_yin_yang_setup_is_answered_without_an_error() -> None:
    """It failed in the search (the setup's moves were iterated), the client was sent error
    500, and its bestmove was the very move it avoided."""
    setup = YINYANG.new_state()
    first = setup.move_to_str(setup.legal_moves()[0])
    async with running_server(game="yinyang", bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos", f"go depth 1 avoidmoves {first}")
        answer = await peer.line()
        assert answer.startswith("bestmove laws:"), answer
        move = answer.split()[1]
        assert move != first
        assert setup.parse_move(move) in setup.legal_moves()
    async with running_server(game="yinyang", bot="alphabeta", runner=NoSearchRunner()) as (
        _,
        port,
    ):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos", f"go depth 1 avoidmoves {first}")
        assert await peer.line() == f"bestmove {setup.move_to_str(setup.legal_moves()[1])}"


def test_the_runner_here_answers_like_the_pool() -> None:
    """``NoSearchRunner`` returns what ``WorkerPool`` returns for a stop before a worker."""
    outcome = SearchOutcome(None)
    assert (outcome.result, outcome.error, outcome.killed, outcome.last_info) == (
        None,
        None,
        False,
        None,
    )
    assert SearchInfo().pv == ()


def test_the_client_sends_every_move_of_an_iterator() -> None:
    """Its tokens were checked by reading the iterator, which then gave the ``go`` none: a
    search of every move instead of the moves asked for."""
    given = iter(["e3", "e4"])
    go = go_command(2, None, None, None, False, given, (t for t in ["c5"]))  # type: ignore[arg-type]
    assert (go.searchmoves, go.avoidmoves) == (("e3", "e4"), ("c5",))
    with pytest.raises(ValueError, match="a word of go's own"):
        go_command(2, None, None, None, False, iter(["e3", "depth"]), ())  # type: ignore[arg-type]


def test_the_moves_of_a_go_read_ahead_count_as_those_of_a_position() -> None:
    """Each move waiting in the read-ahead costs what it takes decoded, in ``go`` as in
    ``position``: 900 short moves of a go (2.7 kB on the wire, 54 kB decoded) counted as their
    bytes let some twenty such requests wait at once."""
    moves = ("e3",) * 900
    go = m.Request(m.Go(searchmoves=moves[:600], avoidmoves=moves[600:]), msgid=1)
    position = m.Request(m.Position(None, moves), msgid=2)
    assert _cost(go, 2700) == _cost(position, 2700) == 2700 + TOKEN_COST * 900
    assert _cost(m.Request(m.Go(depth=3), msgid=3), 12) == 12

"""Analysis over the protocol: the ``MultiPV`` option, ``go searchmoves`` and ``go
avoidmoves``, and the handshake's ``analysis`` lines, through the client library against the
real engine (``enginesrv engine`` over stdio, one process per framing for the module), as a
GUI uses them; and the errors of each, as a careless or hostile client sends them."""

from __future__ import annotations

import pytest

from enginesrv.client import Engine, EngineError, MoveScore
from enginesrv.client._args import move_scores
from enginesrv.client.types import Framing
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, ProtocolError
from protocol.text import TextDecoder, encode_command, parse_info
from tests.enginesrv.test_client import START_MOVES, engines

__all__ = ["engines"]  # the module's two engines, one per framing (test_client's fixture)

FRAMINGS: tuple[Framing, ...] = ("text", "msgpack")


@pytest.fixture(params=FRAMINGS)
def engine(request: pytest.FixtureRequest, engines: dict[Framing, Engine]) -> Engine:
    chosen = engines[request.param]
    assert chosen.alive
    chosen.set_option("Bot", "alphabeta")
    chosen.set_option("MultiPV", 1)
    chosen.new_game("yoxii")
    chosen.position()
    return chosen


def _lines(infos: list[m.Info], depth: int) -> list[m.Info]:
    return [i for i in infos if i.depth == depth and i.string is None]


def test_the_handshake_names_the_bots_that_offer_analysis(engine: Engine) -> None:
    bots = {bot.name: bot for bot in engine.info.bots}
    assert bots["alphabeta"].analysis == ("multipv", "searchmoves")
    assert bots["greedy"].analysis == ()
    assert bots["random"].analysis == ()
    multipv = next(o for o in engine.info.options if o.name == "MultiPV")
    assert (multipv.type, multipv.default, multipv.min, multipv.max) == ("spin", "1", 1, 256)


def test_multipv_reports_k_lines_a_depth_best_first(engine: Engine) -> None:
    engine.set_option("MultiPV", 3)
    infos: list[m.Info] = []
    result = engine.go(depth=3, on_info=infos.append)
    for depth in (1, 2, 3):
        lines = _lines(infos, depth)
        assert [i.multipv for i in lines] == [1, 2, 3]
        firsts = [i.pv[0] for i in lines]
        assert len(set(firsts)) == 3
        assert set(firsts) <= set(START_MOVES)
        values = [i.score.value for i in lines if i.score is not None]
        assert len(values) == 3
        assert values == sorted(values, reverse=True)
    best = _lines(infos, 3)[0]
    # the result's figures are the first line's, though the third came last
    assert result.move == best.pv[0]
    assert result.score == best.score
    assert result.pv == best.pv


def test_more_lines_than_moves_reports_one_a_move(engine: Engine) -> None:
    engine.set_option("MultiPV", 256)
    infos: list[m.Info] = []
    engine.go(depth=1, on_info=infos.append)
    lines = _lines(infos, 1)
    assert sorted(i.pv[0] for i in lines) == sorted(START_MOVES)
    assert [i.multipv for i in lines] == list(range(1, len(START_MOVES) + 1))


def test_searchmoves_and_avoidmoves_restrict_the_first_decision(engine: Engine) -> None:
    infos: list[m.Info] = []
    result = engine.go(depth=2, searchmoves=["e3"], on_info=infos.append)
    assert result.move == "e3"
    assert infos
    assert {i.pv[0] for i in infos if i.pv} == {"e3"}  # searched, not played unsearched
    assert result.depth == 2
    engine.set_option("MultiPV", 8)
    infos = []
    engine.go(depth=2, avoidmoves=["c5", "d5", "e5"], on_info=infos.append)
    assert sorted(i.pv[0] for i in _lines(infos, 2)) == ["c3", "c4", "d3", "e3", "e4"]
    infos = []
    engine.go(depth=2, searchmoves=["c5", "d5", "e3"], avoidmoves=["d5"], on_info=infos.append)
    assert sorted(i.pv[0] for i in _lines(infos, 2)) == ["c5", "e3"]


def test_the_placement_of_a_restricted_turn_is_in_its_line(engine: Engine) -> None:
    """A line is the side's turn: the Totem move, then the placement after it."""
    engine.set_option("MultiPV", 2)
    infos: list[m.Info] = []
    engine.go(depth=2, searchmoves=["c3", "e5"], on_info=infos.append)
    lines = _lines(infos, 2)
    assert {i.pv[0] for i in lines} == {"c3", "e5"}
    assert all(len(i.pv) == 2 and "@" in i.pv[1] for i in lines)


@pytest.mark.parametrize(
    ("searchmoves", "avoidmoves", "message"),
    [
        (["a1"], [], "go: searchmoves 'a1': a1 is not a square of the board (a cut-off corner)"),
        (["d4"], [], "go: searchmoves 'd4': the Totem is on d4 already; it must move"),
        (["c5", "zz"], [], "go: searchmoves 'zz': "),
        ([], ["1@c5"], "go: avoidmoves '1@c5': phase t: White must first move the Totem"),
        (["c5"], ["c5"], "go: searchmoves and avoidmoves leave no legal move"),
        ([], list(START_MOVES), "go: searchmoves and avoidmoves leave no legal move"),
    ],
)
def test_a_bad_list_is_error_101_naming_the_token(
    engine: Engine, searchmoves: list[str], avoidmoves: list[str], message: str
) -> None:
    with pytest.raises(EngineError) as caught:
        engine.go(depth=1, searchmoves=searchmoves, avoidmoves=avoidmoves)
    assert caught.value.code == 101
    assert caught.value.text.startswith(message), caught.value.text
    assert engine.go(depth=1).move in START_MOVES  # the session goes on


def test_a_bot_without_analysis_refuses_lines_and_lists(engine: Engine) -> None:
    engine.set_option("MultiPV", 2)
    engine.set_option("Bot", "greedy")  # back to one line with it
    with pytest.raises(EngineError) as caught:
        engine.set_option("MultiPV", 2)
    assert caught.value.code == 101
    assert "bot 'greedy' reports one line: MultiPV must be 1" in caught.value.text
    with pytest.raises(EngineError) as caught:
        engine.go(depth=1, searchmoves=["c5"])
    assert caught.value.code == 101
    assert "bot 'greedy' searches every move" in caught.value.text
    assert engine.go(depth=1).move in START_MOVES
    engine.set_option("Bot", "alphabeta")
    infos: list[m.Info] = []
    engine.go(depth=2, on_info=infos.append)
    assert infos
    assert {i.multipv for i in infos} == {None}  # MultiPV went back to 1 with greedy


def test_the_client_refuses_a_list_the_text_framing_could_not_carry(engine: Engine) -> None:
    for moves in (["depth"], ["c5 d5"], [""], "c5"):
        with pytest.raises((ValueError, TypeError)):
            engine.go(depth=1, searchmoves=moves)
    assert engine.go(depth=1).move in START_MOVES


# -- the text framing's words ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "searchmoves", "avoidmoves", "depth"),
    [
        ("go depth 3 searchmoves c5 e3", ("c5", "e3"), (), 3),
        ("go searchmoves c5 e3 depth 3", ("c5", "e3"), (), 3),
        ("go avoidmoves c5 searchmoves e3 e4 depth 2", ("e3", "e4"), ("c5",), 2),
    ],
)
def test_go_lists_run_to_the_next_word(
    line: str, searchmoves: tuple[str, ...], avoidmoves: tuple[str, ...], depth: int
) -> None:
    decoder = TextDecoder("server")
    decoder.feed(line.encode() + b"\n")
    request = decoder.next_message()
    assert isinstance(request, m.Request)
    go = request.command
    assert isinstance(go, m.Go)
    assert (go.searchmoves, go.avoidmoves, go.depth) == (searchmoves, avoidmoves, depth)
    assert (
        encode_command(go)
        == (
            f"go depth {depth}"
            + (f" searchmoves {' '.join(searchmoves)}" if searchmoves else "")
            + (f" avoidmoves {' '.join(avoidmoves)}" if avoidmoves else "")
            + "\n"
        ).encode()
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("go searchmoves", "go: searchmoves needs at least one move"),
        ("go searchmoves depth 2", "go: searchmoves needs at least one move"),
        ("go searchmoves c5 searchmoves e3", "go: searchmoves given twice"),
    ],
)
def test_a_malformed_list_is_error_101(line: str, message: str) -> None:
    decoder = TextDecoder("server")
    decoder.feed(line.encode() + b"\n")
    with pytest.raises(ProtocolError) as caught:
        decoder.next_message()
    assert caught.value.code == BAD_ARGUMENTS.code
    assert message in str(caught.value)


def test_info_multipv_reads_and_writes() -> None:
    info = parse_info(
        [
            "depth",
            "4",
            "seldepth",
            "6",
            "multipv",
            "2",
            "score",
            "cp",
            "12",
            "nodes",
            "9",
            "pv",
            "c5",
            "1@c6",
        ]
    )
    assert (info.multipv, info.depth, info.pv) == (2, 4, ("c5", "1@c6"))


# -- query scores --------------------------------------------------------------------------------


def test_query_scores_lists_every_first_decision_searched(engine: Engine) -> None:
    assert engine.scores() == ()  # no search yet in this position
    result = engine.go(depth=3)
    scores = engine.scores()
    assert all(isinstance(s, MoveScore) for s in scores)
    assert engine.query("scores") == scores  # the same, asked plainly
    assert sorted(s.move for s in scores) == sorted(START_MOVES)
    best = scores[0]
    assert (best.move, best.score, best.depth, best.bound) == (
        result.move, result.score, 3, None
    )  # fmt: skip
    assert all(s.bound in (None, "upper", "lower") for s in scores)
    engine.set_option("MultiPV", 8)
    engine.go(depth=3)
    every = engine.scores()
    assert {(s.depth, s.bound) for s in every} == {(3, None)}  # a line a move: all exact
    values = [s.score.value for s in every]
    assert values == sorted(values, reverse=True)


def test_query_scores_forgets_them_when_the_position_changes(engine: Engine) -> None:
    engine.go(depth=2, searchmoves=["c5", "e3"])
    scores = engine.scores()
    assert sorted(s.move for s in scores) == ["c5", "e3"]  # only the moves searched
    engine.play("c5")
    assert engine.scores() == ()
    engine.undo()
    assert len(engine.scores()) == 2  # the same position again: the same search's
    engine.position(None, ["c5"])
    assert engine.scores() == ()


def test_query_scores_words_read_back() -> None:
    words = ("c5", "cp", "415", "3", "exact", "e3", "cp", "-20", "3", "upper", "c4", "win")
    assert move_scores(words) == (
        MoveScore("c5", m.Score("cp", 415), 3, None),
        MoveScore("e3", m.Score("cp", -20), 3, "upper"),
    )
    assert move_scores(" ".join(words[:5])) == (MoveScore("c5", m.Score("cp", 415), 3, None),)
    assert move_scores("c5 mate 3 2 exact") == ()
    assert move_scores(None) == ()

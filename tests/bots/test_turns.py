"""Whole turns in alphabeta: a later decision of a turn, reached by playing the principal
variation of the search of its first decision, is answered from that search under a clock
(``Limits.from_pv``), and searched afresh anywhere else."""

from __future__ import annotations

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits, Score, SearchInfo, SearchResult

NOTE = "from the search of this turn's first decision"
DEEP = Limits(depth=3, from_pv=True)
"""Depth 3 reaches depth >= 2 deterministically (a plan needs it); from a clock."""

# the first decision of a turn of two: Yohoho after White's single first sub-move (i3-j4),
# Black to make two sub-moves; Yoxii's start, White to move the Totem and then place
FIRST_DECISION = {
    "yohoho": "1ccgrgcc1/8/4a4/8/9/8/9/3A4/1CCGRGCC1 b 1 0",
    "yoxii": "3/5/7/3T3/7/5/3 w t w:5553 b:5553",
}
# Yinsh (tests/data/yinsh T2a): e1-e6 makes White's row e1-e5, then a row and a ring to remove
YINSH_ROW = "WWWW/7/8/9/Wbbbb5/9/10/9/8/6B/BBBB w m 0-0 47"
# Yin Yang (tests/data/yinyang case-06): the bot's best move is a piece move, then more
YINYANG_MOVE = (
    "..ww/...w/..../bb.. b start -..bb>bbbb,-....>ww..,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 0 2 41"
)


def bot_for(game: games.Game) -> AlphaBeta:
    bot = AlphaBeta()
    bot.new_game(game)
    return bot


def first_search(
    name: str, limits: Limits = DEEP
) -> tuple[games.Game, AlphaBeta, games.State, SearchResult]:
    """A bot that searched the first decision of a two-decision turn of ``name``, the
    position after its best move (the turn's second decision) and its result."""
    game = games.load(name)
    bot = bot_for(game)
    state = game.state_from_string(FIRST_DECISION[name])
    assert state.turn_position() == (0, 2)
    result = bot.search(state, limits)
    assert result.move is not None
    state.push(result.move)
    assert state.turn_position() == (1, 2), "the best move leaves the turn to finish"
    return game, bot, state, result


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
@pytest.mark.parametrize("round_trip", [False, True])
def test_the_second_decision_is_answered_from_the_first_search(name: str, round_trip: bool) -> None:
    game, bot, state, first = first_search(name)
    assert first.depth == 3
    assert first.nodes > 0
    assert len(first.pv) >= 2
    if round_trip:  # as a server gets it: a position string
        state = game.state_from_string(state.to_string())
    before = state.to_string()
    infos: list[SearchInfo] = []
    second = bot.search(state, DEEP, on_info=infos.append)
    assert state.to_string() == before, "the bot changed the position it was given"
    assert second.nodes == 0
    assert second.token == first.pv[1]
    assert second.move == state.parse_move(first.pv[1])
    assert second.move in state.legal_moves()
    assert second.pv == first.pv[1:]
    assert second.depth == first.depth - 1
    assert second.score == first.score
    assert not second.stopped
    assert len(infos) == 1
    assert infos[0].string == NOTE
    assert infos[0].nodes == 0
    assert infos[0].pv == second.pv


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_under_a_clocks_limits_the_second_decision_is_answered_at_once(name: str) -> None:
    # a stopped clock: the target never passes, and the depth ends the first search
    timed = Limits(depth=3, target=30.0, deadline=60.0, clock=lambda: 0.0, from_pv=True)
    _, bot, state, first = first_search(name, timed)
    assert first.depth == 3
    second = bot.search(state, Limits(target=0.5, deadline=1.0, from_pv=True))
    assert second.nodes == 0
    assert second.token == first.pv[1]


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_a_plan_never_crosses_the_end_of_the_turn(name: str) -> None:
    _, bot, state, _ = first_search(name)
    second = bot.search(state, DEEP)
    assert second.nodes == 0
    assert second.move is not None
    mover = state.to_move()
    state.push(second.move)
    assert state.to_move() != mover
    infos: list[SearchInfo] = []
    reply = bot.search(state, DEEP, on_info=infos.append)  # the opponent's turn
    assert reply.nodes > 0
    assert all(info.string != NOTE for info in infos)


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_without_from_pv_the_second_decision_is_searched(name: str) -> None:
    _, bot, state, _ = first_search(name)
    infos: list[SearchInfo] = []
    second = bot.search(state, Limits(depth=3), on_info=infos.append)
    assert second.nodes > 0
    assert second.depth == 3
    assert all(info.string != NOTE for info in infos)
    assert second.move in state.legal_moves()
    # the plan went with that search: asking again with from_pv searches too
    assert bot.search(state, DEEP).nodes > 0


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_another_first_decision_than_the_planned_one_is_searched(name: str) -> None:
    game = games.load(name)
    bot = bot_for(game)
    state = game.state_from_string(FIRST_DECISION[name])
    first = bot.search(state, DEEP)
    assert len(first.pv) >= 2
    other = None
    for move in state.legal_moves():
        if move == first.move:
            continue
        state.push(move)
        if state.turn_position() == (1, 2):
            other = move
            break
        state.pop()
    assert other is not None, "no other first decision continues the turn"
    second = bot.search(state, DEEP)
    assert second.nodes > 0
    assert second.move in state.legal_moves()


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_a_new_game_forgets_the_plan(name: str) -> None:
    game, bot, state, _ = first_search(name)
    bot.new_game(game)
    assert bot.search(state, DEEP).nodes > 0


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_any_search_in_between_consumes_the_plan(name: str) -> None:
    game, bot, state, first = first_search(name)
    # another second decision of the same turn (after another first one), searched between
    elsewhere = game.state_from_string(FIRST_DECISION[name])
    other = next(
        m for m in elsewhere.legal_moves() if m != first.move and _continues(elsewhere.copy(), m)
    )
    elsewhere.push(other)
    assert elsewhere.to_string() != state.to_string()
    bot.search(elsewhere, Limits(depth=2))
    assert bot.search(state, DEEP).nodes > 0


def _continues(state: games.State, move: games.Move) -> bool:
    """Whether ``move`` played in ``state`` (which it changes) leaves the same player to act."""
    mover = state.to_move()
    state.push(move)
    return state.to_move() == mover and not state.is_terminal()


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_a_shallow_search_plans_nothing(name: str) -> None:
    _, bot, state, first = first_search(name, Limits(depth=1, from_pv=True))
    assert first.depth == 1
    assert bot.search(state, DEEP).nodes > 0


def test_a_yinsh_turn_of_three_decisions_is_answered_from_the_ring_move_search() -> None:
    game = games.load("yinsh")
    bot = bot_for(game)
    state = game.state_from_string(YINSH_ROW)
    first = bot.search(state, DEEP)
    assert first.pv == ("e1-e6", "x:e1-e5", "r:e6")
    assert first.move is not None
    state.push(first.move)
    assert state.turn_position() == (1, 3)
    row = bot.search(game.state_from_string(state.to_string()), DEEP)
    assert (row.token, row.nodes, row.depth, row.pv) == ("x:e1-e5", 0, 2, ("x:e1-e5", "r:e6"))
    assert row.move is not None
    state.push(row.move)
    assert state.turn_position() == (2, 3)
    ring = bot.search(state, DEEP)
    assert (ring.token, ring.nodes, ring.depth, ring.pv) == ("r:e6", 0, 1, ("r:e6",))
    assert ring.move is not None
    state.push(ring.move)
    assert state.to_move() == games.P2
    assert bot.search(state, DEEP).nodes > 0


def test_a_proven_score_from_the_plan_counts_from_the_position_it_answers() -> None:
    """A win in N plies at the turn's first decision is a win in N - k plies k plies later:
    the answer from the plan says what a search of that position would say."""
    game = games.load("yinsh+blitz")
    # tests/data/yinsh T7 in blitz: e3-e6 makes White's row, and its removal wins at once
    state = game.state_from_string("2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41")
    bot = bot_for(game)
    first = bot.search(state, DEEP)
    assert first.token == "e3-e6"
    assert first.score is not None
    assert first.score.kind == "win"
    assert first.move is not None
    state.push(first.move)
    second = bot.search(state, DEEP)
    assert second.nodes == 0
    assert second.score == Score("win", first.score.value - 1)


def test_yinyang_never_answers_from_a_plan() -> None:
    game = games.load("yinyang")
    bot = bot_for(game)
    bot.set_option("SecretSeed", "1")  # the sampled worlds repeat
    state = game.state_from_string(YINYANG_MOVE).view(games.P1)  # what Black may know
    first = bot.search(state, DEEP)
    assert first.move is not None
    assert len(first.pv) >= 2
    assert first.depth >= 2
    state.push(first.move)
    assert state.turn_position() == (1, 2), "a piece move: the turn goes on"
    for again in (state, game.state_from_string(state.to_string())):
        infos: list[SearchInfo] = []
        second = bot.search(again, DEEP, on_info=infos.append)
        assert second.nodes > 0
        assert all(info.string != NOTE for info in infos)

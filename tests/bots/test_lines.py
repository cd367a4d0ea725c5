"""Analysis searches: several lines (``Limits.lines``, MultiPV) and a restricted root
(``Limits.root_moves``: ``searchmoves``, ``avoidmoves``).

The compiled search must agree with the reference on everything, lines included, on the hash
game and on the bench positions of the real games. What the lines mean is checked on the bot
as a GUI uses it: k distinct first decisions, best first, each with the score a search of that
move alone (a restricted search on a fresh table) gives it at the same depth.
"""

from __future__ import annotations

import random

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import CompiledMemory, Core, compiled_search
from bots.engine import Limits, SearchInfo, SearchResult, never_stop
from bots.eval import evaluator_for
from bots.search import Searcher, SearchMemory, SearchOptions, TranspositionTable
from enginesrv.search.bench import SEARCH_BENCH
from tests.bots.hashgame import HashEvaluator, HashGame
from tests.bots.test_compiled import Pair, core
from tests.bots.test_compiled_games import _both, _core, _fresh_memory

__all__ = ["core"]  # the hash game's compiled core, a module fixture

GAMES = ("yinsh", "yohoho", "yoxii")


def _lines_of(infos: list[SearchInfo], depth: int) -> list[SearchInfo]:
    return [info for info in infos if info.depth == depth and info.line is not None]


# -- the compiled search against the reference -------------------------------------------------


@pytest.mark.parametrize("reductions", [False, True])
@pytest.mark.parametrize("lines", [2, 3, 40])
def test_lines_on_the_hash_game_equal_the_reference(
    core: Core, lines: int, reductions: bool
) -> None:
    options = SearchOptions(reductions=reductions, aspiration=10)
    for seed in range(40):
        pair = Pair(core, HashEvaluator())
        state = HashGame(seed, length=12, width=6).new_state()
        for limits in (Limits(depth=5, lines=lines), Limits(nodes=900, lines=lines)):
            pair.assert_equal(state, limits, options)


def test_a_restricted_root_on_the_hash_game_equals_the_reference(core: Core) -> None:
    rng = random.Random(5)
    searched = 0
    for seed in range(60):
        pair = Pair(core, HashEvaluator())
        state = HashGame(seed, length=12, width=6).new_state()
        legal = list(state.legal_moves())
        allowed = tuple(rng.sample(legal, rng.randint(1, len(legal))))
        limits = Limits(depth=4, lines=rng.randint(1, 3), root_moves=allowed)
        result = pair.assert_equal(state, limits, SearchOptions(reductions=seed % 2 == 0))
        assert result.move in allowed
        searched += result.nodes
    assert searched > 60 * 4  # one allowed move is searched too, not answered at once


def test_a_move_that_is_not_legal_is_refused_by_both(core: Core) -> None:
    state = HashGame(3, length=12, width=6).new_state()
    illegal = max(state.legal_moves()) + 1000
    limits = Limits(depth=3, root_moves=(state.legal_moves()[0], illegal))
    memory = SearchMemory(TranspositionTable(1))
    with pytest.raises(ValueError, match=f"^root_moves: move {illegal} is not legal here$"):
        Searcher(
            state.copy(),
            evaluator=HashEvaluator(),
            memory=memory,
            limits=limits,
            stop=never_stop,
            on_info=lambda info: None,
        ).run()
    with pytest.raises(ValueError, match=f"^root_moves: move {illegal} is not legal here$"):
        compiled_search(
            core,
            state.copy(),
            evaluator=HashEvaluator(),
            memory=CompiledMemory(core, memory.table.size),
            limits=limits,
            stop=never_stop,
            on_info=lambda info: None,
            options=SearchOptions(),
        )


@pytest.mark.parametrize("name", GAMES)
def test_lines_of_the_bench_positions_equal_the_reference(name: str) -> None:
    compiled = _core(name)
    game = games.load(name)
    for case in SEARCH_BENCH[name]:
        state = game.state_from_string(case.position)
        legal = list(state.legal_moves())
        limits = Limits(depth=case.depth, lines=3)
        _both(compiled, name, state, limits, _fresh_memory(compiled), reductions=True)
        allowed = tuple(legal[::3])
        restricted = Limits(depth=case.depth, lines=2, root_moves=allowed)
        reference, _ = _both(compiled, name, state, restricted, _fresh_memory(compiled))
        assert reference.move in allowed


# -- what the lines mean -------------------------------------------------------------------------


def _search(name: str, state: games.State, limits: Limits) -> tuple[SearchResult, list[SearchInfo]]:
    """A search by a fresh alphabeta (an empty table) as a session's would go."""
    bot = AlphaBeta()
    bot.new_game(state.game)
    infos: list[SearchInfo] = []
    return bot.search(state.copy(), limits, never_stop, infos.append), infos


@pytest.mark.parametrize("name", GAMES)
def test_k_lines_are_k_distinct_moves_best_first_each_scored_as_alone(name: str) -> None:
    game = games.load(name)
    for case in SEARCH_BENCH[name]:
        state = game.state_from_string(case.position)
        result, infos = _search(name, state, Limits(depth=case.depth, lines=3))
        last = _lines_of(infos, case.depth)
        assert [info.line for info in last] == [1, 2, 3], case.position
        firsts = [info.pv[0] for info in last]
        assert len(set(firsts)) == 3
        values = [info.score.value for info in last if info.score is not None]
        assert len(values) == 3
        assert all(info.score is not None and info.score.kind == "cp" for info in last)
        assert values == sorted(values, reverse=True)
        assert result.token == firsts[0]
        assert result.score == last[0].score
        for info in last:
            alone, _ = _search(
                name, state, Limits(depth=case.depth, root_moves=(state.parse_move(info.pv[0]),))
            )
            assert alone.token == info.pv[0]
            assert alone.score == info.score, (case.position, info.pv[0])


def test_more_lines_than_moves_gives_one_per_move() -> None:
    game = games.load("yoxii")
    state = game.state_from_string(SEARCH_BENCH["yoxii"][0].position)
    moves = state.legal_moves()
    allowed = tuple(moves[:2])
    _, infos = _search("yoxii", state, Limits(depth=2, lines=9, root_moves=allowed))
    last = _lines_of(infos, 2)
    assert sorted(state.parse_move(info.pv[0]) for info in last) == sorted(allowed)


def test_one_line_reports_no_line_number() -> None:
    game = games.load("yohoho")
    _, infos = _search("yohoho", game.new_state(), Limits(depth=3))
    assert infos
    assert {info.line for info in infos} == {None}


def test_an_analysis_is_never_answered_from_the_turns_plan() -> None:
    """Yoxii's placement after a Totem move searched under a clock is answered from the plan;
    asked for lines or for some moves only, it is searched."""
    game = games.load("yoxii")
    clock = Limits(depth=4, from_pv=True)
    answers = []
    for analysis in (clock, Limits(depth=4, from_pv=True, lines=2)):
        bot = AlphaBeta()
        bot.new_game(game)
        state = game.new_state()
        first = bot.search(state.copy(), clock)
        assert first.move is not None
        state.push(first.move)
        infos: list[SearchInfo] = []
        answers.append((bot.search(state.copy(), analysis, never_stop, infos.append), infos))
    (planned, _), (searched, infos) = answers
    assert planned.nodes == 0
    assert searched.nodes > 0
    assert {info.line for info in infos if info.depth == 4} == {1, 2}


# -- Yin Yang: the determinized search ---------------------------------------------------------


def _yin_yang_position(game: games.Game) -> games.State:
    """A position of a seeded random game past the laws of setup, with several moves."""
    evaluator = evaluator_for("yinyang")
    for seed in range(50):
        rng = random.Random(seed)
        state = game.new_state()
        while not state.is_terminal() and state.ply() < 12:
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
        if not state.is_terminal() and len(evaluator.search_moves(state)) >= 4:
            return state
    raise AssertionError("no position found")


def _yin_yang_bot(game: games.Game) -> AlphaBeta:
    """alphabeta for Yin Yang with one sample, its chance seeded: the same search each run."""
    bot = AlphaBeta()
    bot.set_option("SecretSeed", "7")
    bot.set_option("Samples", "1")
    bot.new_game(game)
    return bot


def test_yin_yang_lines_and_a_restricted_root() -> None:
    game = games.load("yinyang")
    bot = _yin_yang_bot(game)
    state = _yin_yang_position(game)
    view = state.view(state.to_move())
    infos: list[SearchInfo] = []
    result = bot.search(view.copy(), Limits(depth=2, lines=3), never_stop, infos.append)
    last = _lines_of(infos, 2)
    assert [info.line for info in last] == [1, 2, 3]
    assert len({info.pv[0] for info in last}) == 3
    values = [info.score.value for info in last if info.score is not None]
    assert values == sorted(values, reverse=True)
    assert result.token == last[0].pv[0]
    offered = list(evaluator_for("yinyang").search_moves(view))
    allowed = (offered[-1],)
    alone = bot.search(view.copy(), Limits(depth=2, root_moves=allowed))
    assert alone.move == offered[-1]
    assert alone.nodes > 0


# -- the score of every root move ----------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_root_scores_hold_every_move_searched(name: str) -> None:
    """Every first decision is listed once with the depth of its last search; the best move's
    score is the search's, exact; with a line per move every score is exact."""
    game = games.load(name)
    case = SEARCH_BENCH[name][0]
    state = game.state_from_string(case.position)
    legal = sorted(state.move_to_str(m) for m in state.legal_moves())
    result, _ = _search(name, state, Limits(depth=case.depth))
    scores = result.root_scores
    assert sorted(s.token for s in scores) == legal
    assert scores[0].depth == case.depth
    assert scores[0].token == result.token
    assert (scores[0].score, scores[0].bound) == (result.score, None)
    depths = [s.depth for s in scores]
    assert depths == sorted(depths, reverse=True)
    every, _ = _search(name, state, Limits(depth=case.depth, lines=len(legal)))
    assert {s.bound for s in every.root_scores} == {None}
    assert {s.depth for s in every.root_scores} == {case.depth}
    values = [s.score.value for s in every.root_scores]
    assert values == sorted(values, reverse=True)
    for each in every.root_scores[:3]:
        alone, _ = _search(
            name, state, Limits(depth=case.depth, root_moves=(state.parse_move(each.token),))
        )
        assert alone.score == each.score


def test_yin_yang_root_scores_hold_every_move_searched() -> None:
    game = games.load("yinyang")
    bot = _yin_yang_bot(game)
    view = _yin_yang_position(game)
    view = view.view(view.to_move())
    offered = list(evaluator_for("yinyang").search_moves(view))
    result = bot.search(view.copy(), Limits(depth=2))
    scores = result.root_scores
    assert sorted(s.token for s in scores) == sorted(view.move_to_str(m) for m in offered)
    assert (scores[0].token, scores[0].score, scores[0].bound) == (result.token, result.score, None)
    assert {s.bound for s in scores[1:]} <= {"upper"}
    every = bot.search(view.copy(), Limits(depth=2, lines=len(offered)))
    assert {s.bound for s in every.root_scores} == {None}


@pytest.mark.parametrize("lines", [8, 200])
def test_many_lines_keep_the_deadline_on_the_injected_clock(core: Core, lines: int) -> None:
    """Lines multiply the work of a depth, not the time a search may take: the deadline
    ends it where it ends a search of one line."""
    from tests.bots.test_compiled import FakeClock, _deep_game

    clock = FakeClock(0.0005)
    result = compiled_search(
        core,
        _deep_game(),
        evaluator=HashEvaluator(),
        memory=CompiledMemory(core, 1 << 14),
        limits=Limits(deadline=0.25, clock=clock, lines=lines),
        stop=never_stop,
        on_info=lambda info: None,
        options=SearchOptions(),
    )
    assert result.stopped
    assert result.move is not None
    elapsed = clock.now - (100.0 + 2 * clock.step)
    assert 0.25 <= elapsed <= 0.25 + 2 * clock.step + 1e-9

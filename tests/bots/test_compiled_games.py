"""The games' compiled search cores against the Python reference search.

On the ``enginesrv bench`` positions at their depths, on positions of seeded play and under
node limits, each core (given a table of as many slots as the reference's) must return what
``bots.search.Searcher`` returns: move, score, depth, seldepth, nodes, line, table use and every
``info``, and keep the same history. Under ``ENGINESRV_PURE_PYTHON`` there is no core, and
alphabeta searches on the reference.
"""

from __future__ import annotations

import os
import random

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import CompiledMemory, Core, compiled_search, core_for
from bots.engine import Limits, SearchInfo, SearchResult, never_stop
from bots.eval import evaluator_for
from bots.search import Searcher, SearchMemory, SearchOptions, TranspositionTable
from enginesrv.search.bench import SEARCH_BENCH
from tests.bots.test_compiled import _figures, _history, _info_figures

PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))
GAMES = ("yinsh", "yinsh+blitz", "yohoho", "yoxii")
Memories = tuple[SearchMemory, CompiledMemory]


def _core(name: str) -> Core:
    core = core_for(name)
    if PURE:
        assert core is None
        pytest.skip("no compiled core under ENGINESRV_PURE_PYTHON")
    assert core is not None, f"the compiled core of {name} was not built"
    return core


def _both(
    core: Core,
    name: str,
    state: games.State,
    limits: Limits,
    memory: Memories,
    reductions: bool = False,
) -> tuple[SearchResult, SearchResult]:
    reference_memory, compiled_memory = memory
    evaluator = evaluator_for(name)
    options = SearchOptions(aspiration=evaluator.aspiration, reductions=reductions)
    infos: tuple[list[SearchInfo], list[SearchInfo]] = ([], [])
    reference = Searcher(
        state.copy(),
        evaluator=evaluator,
        memory=reference_memory,
        limits=limits,
        stop=never_stop,
        on_info=infos[0].append,
        options=options,
    ).run()
    compiled = compiled_search(
        core,
        state.copy(),
        evaluator=evaluator_for(name),
        memory=compiled_memory,
        limits=limits,
        stop=never_stop,
        on_info=infos[1].append,
        options=options,
    )
    assert _figures(compiled) == _figures(reference), (state.to_string(), limits)
    assert _info_figures(infos[1]) == _info_figures(infos[0])
    assert _history(compiled_memory) == reference_memory.history
    return reference, compiled


def _fresh_memory(core: Core) -> Memories:
    reference = SearchMemory(TranspositionTable(16))
    return reference, CompiledMemory(core, reference.table.size)


@pytest.mark.parametrize("reductions", [False, True])
@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii"])
def test_the_bench_positions_are_searched_alike(name: str, reductions: bool) -> None:
    core = _core(name)
    game = games.load(name)
    for case in SEARCH_BENCH[name]:
        state = game.state_from_string(case.position)
        limits = Limits(depth=case.depth)
        reference, _ = _both(core, name, state, limits, _fresh_memory(core), reductions)
        assert reference.nodes > 100


@pytest.mark.parametrize("name", GAMES)
def test_games_of_seeded_play_are_searched_alike(name: str) -> None:
    """A game played by the searches themselves, table and history kept from move to move,
    with depth and node limits in turn; some random moves to vary the positions."""
    core = _core(name)
    game = games.load(name)
    rng = random.Random(name)
    memory = _fresh_memory(core)
    state = game.new_state()
    plies = 0
    while not state.is_terminal() and plies < 60:
        limits = Limits(depth=2 + plies % 3) if plies % 2 else Limits(nodes=400 + 37 * plies)
        reference, _ = _both(core, name, state, limits, memory, reductions=plies % 4 < 2)
        move = reference.move
        if rng.random() < 0.3:
            move = rng.choice(state.legal_moves())
        assert move is not None
        state.push(move)
        plies += 1
    assert plies >= 20


@pytest.mark.parametrize("name", GAMES)
def test_alphabeta_searches_with_the_core(name: str) -> None:
    """The bot uses the core, its table within its Hash, and answers as the core does."""
    core = _core(name)
    game = games.load(name)
    bot = AlphaBeta()
    bot.set_option("Hash", "2")
    bot.new_game(game)
    state = game.new_state()
    result = bot.search(state, Limits(depth=3))
    memory = bot._compiled
    assert memory is not None
    assert memory.core is core
    assert len(memory.table) + len(memory.history) <= 2 * 1024 * 1024
    direct = compiled_search(
        core,
        state,
        evaluator=evaluator_for(name),
        memory=CompiledMemory.of_megabytes(core, 2),
        limits=Limits(depth=3),
        stop=never_stop,
        on_info=lambda info: None,
        options=SearchOptions(aspiration=evaluator_for(name).aspiration),
    )
    assert _figures(result)[:7] == _figures(direct)[:7]

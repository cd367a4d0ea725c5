"""The search core against exhaustive minimax, proven results, limits, stop and determinism."""

from __future__ import annotations

import itertools
import random
import tracemalloc

import pytest

from bots.engine import Limits, Score, SearchInfo, SearchResult, StopFn, never_stop
from bots.eval import Evaluator
from bots.search import (
    CHECK_EVERY,
    INF,
    REDUCE_DEPTH,
    Searcher,
    SearchMemory,
    SearchOptions,
    TranspositionTable,
    terminal_score,
    to_score,
)
from games import State
from tests.bots.toy import Nim, NimEvaluator, TreeEvaluator, TreeGame


def minimax(state: State, evaluator: Evaluator, depth: int, ply: int = 0) -> int:
    """Plain depth-limited negamax with the same conventions as the core, no pruning."""
    if depth == 0:
        return evaluator.evaluate(state)
    me = state.to_move()
    best = -INF
    for move in state.legal_moves():
        state.push(move)
        if state.is_terminal():
            value = terminal_score(state.outcome(), me, ply + 1)
        elif state.to_move() == me:
            value = minimax(state, evaluator, depth - 1, ply + 1)
        else:
            value = -minimax(state, evaluator, depth - 1, ply + 1)
        state.pop()
        best = max(best, value)
    return best


def search(
    state: State,
    evaluator: Evaluator,
    limits: Limits,
    *,
    megabytes: int = 1,
    stop: StopFn = never_stop,
    infos: list[SearchInfo] | None = None,
) -> SearchResult:
    return Searcher(
        state,
        evaluator=evaluator,
        memory=SearchMemory(TranspositionTable(megabytes)),
        limits=limits,
        stop=stop,
        on_info=(infos.append if infos is not None else lambda info: None),
        options=SearchOptions(quiescence=False),
    ).run()


@pytest.mark.parametrize(("seed", "depth"), list(itertools.product(range(30), (1, 2, 3, 5))))
def test_alphabeta_equals_minimax_on_random_trees(seed: int, depth: int) -> None:
    game = TreeGame(seed)
    state = game.new_state()
    evaluator = TreeEvaluator()
    expected = minimax(state.copy(), evaluator, depth)
    result = search(state, evaluator, Limits(depth=depth))
    assert result.score == to_score(expected)
    # the chosen move is one of the best
    assert result.move is not None
    state.push(result.move)
    me = 0
    if state.is_terminal():
        value = terminal_score(state.outcome(), me, 1)
    elif state.to_move() == me:
        value = minimax(state, evaluator, depth - 1, 1)
    else:
        value = -minimax(state, evaluator, depth - 1, 1)
    assert value == expected
    state.pop()
    assert state.to_string() == ""  # the position is left as it was


def test_same_player_plies_are_not_negated() -> None:
    # a tree in which some player acts twice in a row somewhere on the principal lines
    game = TreeGame(3)
    state = game.new_state()
    seen_twice = False
    stack = [state.copy()]
    while stack:
        node = stack.pop()
        for move in node.legal_moves():
            node.push(move)
            if not node.is_terminal():
                if node.to_move() == node.copy().to_move() and node.path[:-1]:
                    parent = game.state_from_string(",".join(map(str, node.path[:-1])))
                    seen_twice |= parent.to_move() == node.to_move()
                stack.append(node.copy())
            node.pop()
    assert seen_twice


@pytest.mark.parametrize("heap", range(1, 14))
def test_proven_results_and_their_distance(heap: int) -> None:
    state = Nim(heap).new_state()
    result = search(state, NimEvaluator(), Limits(depth=heap + 1))
    if heap == 1:
        assert (result.move, result.score, result.nodes) == (1, None, 0)  # forced: no search
    elif heap <= 3:
        assert result.score == Score("win", 1)
        assert result.move == heap
    elif heap % 4:
        assert result.score == Score("win", 2 * (heap // 4) + 1)
        assert result.move == heap % 4
    else:
        assert result.score == Score("loss", 2 * (heap // 4))


def test_transposition_table_size_does_not_change_fixed_depth_results() -> None:
    for seed in range(15):
        state = TreeGame(seed, length=9).new_state()
        small = search(state, TreeEvaluator(), Limits(depth=6), megabytes=1)
        large = search(state, TreeEvaluator(), Limits(depth=6), megabytes=16)
        assert (small.move, small.score) == (large.move, large.score)


def test_fixed_depth_is_deterministic() -> None:
    state = TreeGame(11, length=10).new_state()
    first = search(state, TreeEvaluator(), Limits(depth=7))
    second = search(state, TreeEvaluator(), Limits(depth=7))
    assert (first.move, first.score, first.nodes, first.pv) == (
        second.move,
        second.score,
        second.nodes,
        second.pv,
    )


def test_node_limit_is_obeyed_and_deterministic() -> None:
    state = TreeGame(5, length=14).new_state()
    first = search(state, TreeEvaluator(), Limits(nodes=3000))
    second = search(state, TreeEvaluator(), Limits(nodes=3000))
    assert first.nodes <= 3000 + 1
    assert (first.move, first.nodes) == (second.move, second.nodes)
    assert not first.stopped


def test_stop_is_polled_every_few_nodes() -> None:
    state = TreeGame(8, length=30).new_state()
    searcher_nodes: list[int] = []

    def stop() -> bool:
        searcher_nodes.append(0)
        return len(searcher_nodes) > 20

    result = search(state, TreeEvaluator(), Limits(), stop=stop)
    assert result.stopped
    assert result.move is not None
    # polled once every CHECK_EVERY nodes: stopping after 21 polls means about 21 * CHECK_EVERY
    assert result.nodes <= 21 * CHECK_EVERY + 1


def test_deadline_on_an_injected_clock() -> None:
    ticks = itertools.count()

    def clock() -> float:
        return next(ticks) / 1000  # every look at the clock is one millisecond later

    state = TreeGame(9, length=30).new_state()
    result = search(state, TreeEvaluator(), Limits(deadline=0.05, clock=clock))
    assert result.stopped
    assert result.move in state.legal_moves()


def test_infos_report_each_iteration_with_a_legal_pv() -> None:
    infos: list[SearchInfo] = []
    state = TreeGame(2, length=8).new_state()
    result = search(state, TreeEvaluator(), Limits(depth=5), infos=infos)
    assert [info.depth for info in infos] == list(range(1, len(infos) + 1))
    assert infos[-1].pv == result.pv
    assert result.pv[0] == result.token
    replay = state.copy()
    for token in result.pv:
        replay.push(replay.parse_move(token))


@pytest.mark.parametrize("nodes", [300, 1000, 3000])
def test_a_search_cut_short_reads_its_line_from_the_root(nodes: int) -> None:
    """A search ended by a limit in the middle of the tree returns the whole line of its last
    iteration, read from the root (it used to be read from wherever the tree was cut, which
    left only the first move)."""
    infos: list[SearchInfo] = []
    state = TreeGame(8, length=30).new_state()
    searcher = Searcher(
        state,
        evaluator=TreeEvaluator(),
        memory=SearchMemory(TranspositionTable(1)),
        limits=Limits(nodes=nodes),
        stop=never_stop,
        on_info=infos.append,
        options=SearchOptions(quiescence=False),
    )
    result = searcher.run()
    assert result.nodes >= nodes  # cut short
    assert state.ply() == 0  # the searcher's position is back at the root
    assert len(infos[-1].pv) > 1
    assert result.pv == infos[-1].pv


def test_a_single_legal_move_is_played_without_search() -> None:
    state = Nim(1).new_state()
    result = search(state, NimEvaluator(), Limits(depth=9))
    assert (result.move, result.nodes) == (1, 0)


def test_replacement_keeps_deeper_entries_of_the_current_search() -> None:
    table = TranspositionTable(1)
    key = 12345
    other = key + table.size  # same slot, other position
    table.store(key, 6, 0, 10, 3)
    table.store(other, 2, 0, 20, 4)
    assert table.probe(key) is not None
    assert table.probe(other) is None
    table.new_search()
    table.store(other, 2, 0, 20, 4)  # the old entry is from an older search: replaced
    assert table.probe(other) is not None


def test_clearing_a_table_forgets_what_was_stored_and_skips_an_unused_one() -> None:
    from bots.search import EXACT

    table = TranspositionTable(1)
    fresh = table.slots
    table.clear()
    assert table.slots is fresh  # nothing written: no new list of a million slots
    table.store(12345, 3, EXACT, 7, 9)
    assert table.probe(12345) is not None
    table.clear()
    assert table.probe(12345) is None
    assert table.slots is not fresh
    kept = table.slots
    table.new_search()
    table.clear()  # a search that stored nothing leaves nothing to forget
    assert table.slots is kept


def test_a_full_table_holds_no_more_than_its_size() -> None:
    """A table's entries, all written, take at most the megabytes it was given, so that the
    server's hash budget bounds what its workers hold."""
    rng = random.Random(3)
    tracemalloc.start()
    try:
        table = TranspositionTable(4)
        for index in range(table.size):
            table.slots[index] = (
                rng.getrandbits(64), rng.randint(1, 60), rng.randint(0, 2),
                rng.randint(-40_000, 40_000), rng.getrandbits(40), rng.randint(0, 255),
            )  # fmt: skip
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held <= 4 * 1024 * 1024
    assert (
        table.size * 2 * 196 > 4 * 1024 * 1024
    )  # and not far below: the next size up would not fit


def _searched(seed: int, depth: int, reductions: bool) -> SearchResult:
    """A search of a seeded game of hashes (six moves a node, so late moves exist)."""
    from tests.bots.hashgame import HashEvaluator, HashGame

    return Searcher(
        HashGame(seed, length=12, width=6).new_state(),
        evaluator=HashEvaluator(),
        memory=SearchMemory(TranspositionTable(1)),
        limits=Limits(depth=depth),
        stop=never_stop,
        on_info=lambda info: None,
        options=SearchOptions(quiescence=False, reductions=reductions),
    ).run()


@pytest.mark.parametrize("seed", range(20))
def test_reductions_change_nothing_below_their_depth(seed: int) -> None:
    """No node of a search of 3 plies or less is deep enough to be reduced: the same tree."""
    for depth in (1, 2, REDUCE_DEPTH):
        plain = _searched(seed, depth, reductions=False)
        reduced = _searched(seed, depth, reductions=True)
        figures = [(r.move, r.score, r.depth, r.seldepth, r.nodes, r.pv) for r in (plain, reduced)]
        assert figures[1] == figures[0]


@pytest.mark.parametrize(
    ("name", "index", "depth"),
    [("yinsh", 2, 6), ("yohoho", 1, 5), ("yoxii", 0, 6), ("yoxii", 1, 6)],
)
def test_reductions_search_fewer_nodes_in_real_positions(name: str, index: int, depth: int) -> None:
    """In a game, where a move's value at one depth says much of its value at the next, the
    reduced search of ``enginesrv bench`` positions visits fewer nodes."""
    import games
    from bots.eval import evaluator_for
    from enginesrv.search.bench import SEARCH_BENCH

    state = games.load(name).state_from_string(SEARCH_BENCH[name][index].position)
    nodes = []
    for reductions in (False, True):
        evaluator = evaluator_for(name)
        result = Searcher(
            state.copy(),
            evaluator=evaluator,
            memory=SearchMemory(TranspositionTable(16)),
            limits=Limits(depth=depth),
            stop=never_stop,
            on_info=lambda info: None,
            options=SearchOptions(aspiration=evaluator.aspiration, reductions=reductions),
        ).run()
        assert result.move is not None
        assert result.depth == depth
        nodes.append(result.nodes)
    assert nodes[1] < nodes[0]

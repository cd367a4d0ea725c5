"""Search under hidden information by determinization.

A player of a game with secrets (Yin Yang's hidden laws) sees a *view*: the position with the
opponent's secrets blanked out. The search cannot look ahead from a view, because the
opponent's replies depend on what is hidden. Determinization (perfect-information Monte Carlo
sampling, the method of Ginsberg's bridge program GIB) completes the view into several full
positions consistent with everything the player knows, searches each one as a game of perfect
information and adds up, move by move, the values found in every sample. The move with the
best total is played.

The samples are searched in step: depth 1 in every sample, then depth 2, and so on, so that the
values added up always come from the same depth; when time runs out the last depth finished in
every sample decides. Each root move is searched with a full window (``Searcher.root_values``),
because a bound is not a value that can be added. Proven wins and losses count as values just
beyond any evaluation, so a move that wins in every sample outranks everything, and a move that
loses in some samples pays for it in proportion. The score reported for a view that hides
something is that mean (``cp``), never a proven result: a win in every sample may still rest on
the guesses.

The known weaknesses of the method (it assumes the player will learn the secrets after this
move, "strategy fusion") matter little when, as in Yin Yang, the secrets are revealed the
moment they are used.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bots.engine import InfoFn, Limits, Score, SearchInfo, SearchResult, StopFn
from bots.eval import MAX_EVAL, Evaluator, HiddenInformation
from bots.search import MAX_PLY, PROVEN, WIN, SearchAbortedError, Searcher, TranspositionTable
from games import Move, State


def _additive(value: int) -> int:
    """A search value on a scale where values of several samples can be added: proven results
    just beyond every evaluation, sooner wins (and later losses) better."""
    if value >= PROVEN:
        return 2 * MAX_EVAL - (WIN - value)
    if value <= -PROVEN:
        return -2 * MAX_EVAL + (WIN + value)
    return value


def _combined_score(values: Sequence[int], hidden: bool) -> Score:
    """The score to report for a move with these sample values: a win or a loss only when the
    position hides nothing (a result proven in every sample may still depend on a guess), else
    the mean value, proven results counted just beyond every evaluation."""
    if not hidden and all(v >= PROVEN for v in values):
        return Score("win", max(WIN - v for v in values))
    if not hidden and all(v <= -PROVEN for v in values):
        return Score("loss", min(WIN + v for v in values))
    mean = sum(_additive(v) for v in values) // len(values)
    return Score("cp", max(-MAX_EVAL + 1, min(MAX_EVAL - 1, mean)))


def determinized_search(
    state: State,
    *,
    evaluator: Evaluator,
    hidden: HiddenInformation,
    table: TranspositionTable,
    history: dict[Move, int],
    limits: Limits,
    stop: StopFn,
    on_info: InfoFn,
    rng: random.Random,
    samples: int,
    quiescence: bool = True,
) -> SearchResult:
    """Search the view ``state`` over up to ``samples`` completions of it (module docstring).

    Depth limits apply to every sample, a node limit to all samples together, time limits to
    the whole search. A view that hides nothing is searched once, as it is.
    """
    chosen = hidden.choose_without_search(state, rng)
    if chosen is not None:
        hidden.remember(state, chosen)
        token = state.move_to_str(chosen)
        return SearchResult(chosen, token, depth=0, nodes=0, pv=(token,))
    root_moves = list(evaluator.search_moves(state))
    if not root_moves:
        return SearchResult(None, None)
    if len(root_moves) == 1 and not limits.is_infinite:
        move = root_moves[0]
        hidden.remember(state, move)
        token = state.move_to_str(move)
        return SearchResult(move, token, pv=(token,))

    is_hidden = hidden.is_hidden(state)
    worlds = hidden.samples(state, rng, samples) if is_hidden else [state.copy()]
    share = None if limits.nodes is None else max(1, limits.nodes // len(worlds))
    sample_limits = Limits(None, share, limits.target, limits.deadline, limits.clock)
    searchers = [
        Searcher(
            world,
            evaluator=evaluator,
            table=table,
            history=history,
            limits=sample_limits,
            stop=stop,
            on_info=lambda info: None,
            quiescence=quiescence,
        )
        for world in worlds
    ]
    started = limits.clock()
    best_move, best_score, best_depth = root_moves[0], Score("cp", 0), 0
    pv: tuple[str, ...] = (state.move_to_str(best_move),)
    max_depth = limits.depth if limits.depth is not None else MAX_PLY
    try:
        for depth in range(1, max_depth + 1):
            per_move: dict[Move, list[int]] = {move: [] for move in root_moves}
            for searcher in searchers:
                for move, value in searcher.root_values(depth, root_moves).items():
                    per_move[move].append(value)
            totals = {move: sum(_additive(v) for v in vals) for move, vals in per_move.items()}
            # stable: among equal totals the earlier (previously better) move stays first
            root_moves.sort(key=lambda m: -totals[m])
            best_move, best_depth = root_moves[0], depth
            best_score = _combined_score(per_move[best_move], is_hidden)
            pv = _line(searchers, best_move, state)
            elapsed = limits.clock() - started
            nodes = sum(s.nodes for s in searchers)
            on_info(
                SearchInfo(
                    depth=depth,
                    seldepth=max(s.seldepth for s in searchers),
                    score=best_score,
                    nodes=nodes,
                    nps=int(nodes / elapsed) if elapsed > 0 else 0,
                    time=int(elapsed * 1000),
                    pv=pv,
                    hashfull=table.hashfull(),
                    string=f"samples {len(worlds)}",
                )
            )
            if all(v >= PROVEN for v in per_move[best_move]) or all(
                v <= -PROVEN for vals in per_move.values() for v in vals
            ):
                break  # won in every sample, or lost whatever is played
            if limits.target is not None and elapsed >= limits.target * 0.5:
                break  # the next depth costs several times this one
    except SearchAbortedError:
        pass
    hidden.remember(state, best_move)
    elapsed = limits.clock() - started
    return SearchResult(
        move=best_move,
        token=state.move_to_str(best_move),
        score=best_score if best_depth else None,
        depth=best_depth,
        seldepth=max(s.seldepth for s in searchers),
        nodes=sum(s.nodes for s in searchers),
        time=int(elapsed * 1000),
        pv=pv,
        hashfull=table.hashfull(),
        stopped=any(s.stopped for s in searchers),
    )


def _line(searchers: Sequence[Searcher], move: Move, state: State) -> tuple[str, ...]:
    """A principal variation starting with ``move``: the first sample's line if it starts
    there, else the move alone (the other samples' lines may pass through hidden laws)."""
    line = searchers[0].principal_variation()
    token = state.move_to_str(move)
    return line if line[:1] == (token,) else (token,)

"""Search under hidden information by determinization.

A player of a game with secrets (Yin Yang's hidden laws) sees a *view*: the position with the
opponent's secrets blanked out. The search cannot look ahead from a view, because the
opponent's replies depend on what is hidden. Determinization (perfect-information Monte Carlo
sampling, the method of Ginsberg's bridge program GIB) completes the view into several full
positions consistent with everything the player knows and searches them as games of perfect
information. The classic method adds up, move by move, the values found in every sample and
plays the move with the best total; at the time a move gets here that costs too much depth,
and the samples are used as below.

How the samples are used. Searched to the end in step (depth 1 in every sample, then depth 2,
and so on, the values added up move by move), eight samples cost eight times the nodes of one,
two to three plies at a fraction of a second per move (the effective branching factor is near
2.2), and that depth was worth more than the samples: Samples=8 lost to Samples=1 at 0.3 s a
move that way, and also with a shallow screen of every root move over all samples before one
sample deepened, with a check of one sample's best moves for forced losses in the others, and
with one sample's tree in which the others counted at the leaves. One sample's tree plays that
sample's guesses as certain: a law it made up for the opponent is a move the tree fears (or
counts on) at every depth.

So with more than one distinct sample one tree is searched, the view's own: the opponent's
``?`` laws are no moves in it (a player whose only tokens may be hidden is judged, not taken as
stuck), and at each leaf each sample fills them in as it drew them, so that what they would do
there (``Evaluator.over_samples``) is weighed by how likely the samples make it, the samples'
values averaged as expected scores. A law seen applied or rewritten in a line counts as the
line has it. The tree is smaller than a sample's (the opponent has fewer moves), which pays for
evaluating every leaf once per sample. With one sample (``Samples=1``, or samples that all
agree) its tree is searched: a single guess is played as it is. At the root the best move so
far is searched with a full window and the others with a null window at its value
(``_best_root_move``, which can also add up several samples' values as expected scores,
refuting with null windows at each sample's best value the moves that cannot beat the best
sum).

A world drawn more than once counts as often as it was drawn.

Values of several samples, where they are added up (``_best_root_move`` over more than one
sample), are added as *expected scores*, not as raw values: an evaluation
``v`` counts as the logistic ``1 / (1 + exp(-v / scale))`` (the evaluator's
``expectation_scale``), a proven win as 1 and a proven loss as 0 (sooner wins and later losses
a hair better). Raw sums, with a loss counted just beyond every evaluation, made a loss in one
sample of eight outweigh any difference of position. The score reported for a view that hides
something is never a proven result: a win found in one sample, or in the view's tree, may still
rest on the guess or on a hidden law the opponent has not used yet.

The known weaknesses of the method (it assumes the player will learn the secrets after this
move, "strategy fusion") matter little when, as in Yin Yang, the secrets are revealed the
moment they are used.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from bots.engine import InfoFn, Limits, RootScore, Score, SearchInfo, SearchResult, StopFn
from bots.eval import MAX_EVAL, Evaluator, HiddenInformation
from bots.search import (
    DEFAULT_OPTIONS,
    MAX_PLY,
    PROVEN,
    WIN,
    SearchAbortedError,
    Searcher,
    SearchMemory,
    SearchOptions,
    root_moves_of,
)
from games import Move, State

_PLY_EPSILON = 1e-8
"""How much a proven result's expected score moves per ply of distance (sooner wins and later
losses first), far below any difference an evaluation makes."""


def expected_score(value: int, scale: float) -> float:
    """The expected score (0 to 1) of a search value: the logistic of an evaluation, 1 for a
    proven win and 0 for a proven loss (module docstring)."""
    if value >= PROVEN:  # WIN less the plies to the win: above every evaluation, sooner higher
        return 1.0 + _PLY_EPSILON * (value - PROVEN + 1)
    if value <= -PROVEN:  # the plies to the loss less WIN: below them all, sooner lower
        return -_PLY_EPSILON * (-PROVEN - value + 1)
    return 1.0 / (1.0 + math.exp(-value / scale))


def _centipawns(expectation: float, scale: float) -> int:
    """The evaluation whose expected score is ``expectation``: the inverse of the logistic,
    within the evaluations' range."""
    e = min(max(expectation, 1e-12), 1.0 - 1e-12)
    value = round(scale * math.log(e / (1.0 - e)))
    return max(-MAX_EVAL + 1, min(MAX_EVAL - 1, value))


def _combined_score(values: Sequence[int], hidden: bool, scale: float) -> Score:
    """The score to report for a move with these sample values: a win or a loss only when the
    position hides nothing (a result proven in every sample may still depend on a guess), else
    the mean expected score in centipawns."""
    if not hidden and all(v >= PROVEN for v in values):
        return Score("win", max(WIN - v for v in values))
    if not hidden and all(v <= -PROVEN for v in values):
        return Score("loss", min(WIN + v for v in values))
    if all(v >= PROVEN for v in values):
        return Score("cp", MAX_EVAL - 1)
    if all(v <= -PROVEN for v in values):
        return Score("cp", -MAX_EVAL + 1)
    if len(values) == 1:
        return Score("cp", values[0])
    mean = sum(expected_score(v, scale) for v in values) / len(values)
    return Score("cp", _centipawns(mean, scale))


@dataclass(frozen=True, slots=True)
class Sampling:
    """How the hidden information of a view is filled in: up to ``samples`` completions of it,
    drawn by ``hidden`` with ``rng``."""

    hidden: HiddenInformation
    rng: random.Random
    samples: int


def determinized_search(
    state: State,
    *,
    evaluator: Evaluator,
    sampling: Sampling,
    memory: SearchMemory,
    limits: Limits,
    stop: StopFn,
    on_info: InfoFn,
    options: SearchOptions = DEFAULT_OPTIONS,
) -> SearchResult:
    """Search the view ``state`` with the completions ``sampling`` draws (module docstring):
    the tree of the first, the others at its leaves. A view that hides nothing is searched as
    it is.
    """
    begun = limits.clock()
    hidden, rng = sampling.hidden, sampling.rng
    allowed, avoided = limits.root_moves, limits.avoid_moves
    chosen = hidden.choose_without_search(state, rng)
    # a ply chosen without search keeps its choice unless the caller avoids it
    if chosen is not None and allowed is None and chosen not in avoided:
        hidden.remember(state, chosen)
        token = state.move_to_str(chosen)
        return SearchResult(chosen, token, depth=0, nodes=0, pv=(token,))
    root_moves = root_moves_of(state, evaluator, allowed, avoided)
    if not root_moves:
        return SearchResult(None, None)
    if len(root_moves) == 1 and not limits.searches_forced:
        move = root_moves[0]
        hidden.remember(state, move)
        token = state.move_to_str(move)
        return SearchResult(move, token, pv=(token,))

    is_hidden = hidden.is_hidden(state)
    scale = evaluator.expectation_scale
    drawn = hidden.samples(state, rng, sampling.samples) if is_hidden else [state.copy()]
    worlds, weights = _distinct(drawn)
    if len(worlds) > 1:
        # one tree, the view's own, in which the hidden laws count at the leaves as the
        # samples fill them
        tree: State = state.copy()
        lead_evaluator = evaluator.over_samples(tree, worlds, weights)
    else:
        # one guess only: its laws are played as they are
        tree, lead_evaluator = worlds[0], evaluator
    # the time drawing the samples took counts against this decision's time
    spent = limits.clock() - begun
    target = None if limits.target is None else max(0.0, limits.target - spent)
    deadline = None if limits.deadline is None else max(0.0, limits.deadline - spent)
    lead = Searcher(
        tree,
        evaluator=lead_evaluator,
        memory=memory,
        limits=Limits(None, limits.nodes, target, deadline, limits.clock),
        stop=stop,
        on_info=lambda info: None,
        options=options,
    )
    started = limits.clock()
    best_move, best_score, best_depth = root_moves[0], Score("cp", 0), 0
    pv: tuple[str, ...] = (state.move_to_str(best_move),)
    max_depth = limits.depth if limits.depth is not None else MAX_PLY
    note = f"samples {len(drawn)} ({len(worlds)} distinct)"
    lines = max(1, min(limits.lines, len(root_moves)))
    seen: dict[Move, RootScore] = {}
    try:
        for depth in range(1, max_depth + 1):
            found, root_moves, best_values = _lines(
                lead, root_moves, lines, depth, state, (is_hidden, scale), seen
            )
            best_move, best_depth = root_moves[0], depth
            best_score, pv = found[0]
            if not limits.restricted:  # only a search of every move speaks for the position
                lead.store_root(depth, best_move, best_values[0])
            elapsed = limits.clock() - started
            for index, (score, line) in enumerate(found, 1):
                on_info(
                    SearchInfo(
                        depth=depth,
                        seldepth=lead.seldepth,
                        score=score,
                        nodes=lead.nodes,
                        nps=int(lead.nodes / elapsed) if elapsed > 0 else 0,
                        time=int(elapsed * 1000),
                        pv=line,
                        hashfull=memory.table.hashfull(),
                        string=note,
                        line=index if lines > 1 else None,
                    )
                )
            if abs(best_values[0]) >= PROVEN:
                break  # won or lost by force (in the tree searched)
            if target is not None and elapsed >= target * 0.5:
                break  # the next depth costs several times this one
    except SearchAbortedError:
        pass
    hidden.remember(state, best_move)
    elapsed = limits.clock() - begun
    return SearchResult(
        move=best_move,
        token=state.move_to_str(best_move),
        score=best_score if best_depth else None,
        depth=best_depth,
        seldepth=lead.seldepth,
        nodes=lead.nodes,
        time=int(elapsed * 1000),
        pv=pv,
        hashfull=memory.table.hashfull(),
        stopped=lead.stopped,
        root_scores=_ordered(seen),
    )


def _lines(
    lead: Searcher,
    root_moves: list[Move],
    lines: int,
    depth: int,
    state: State,
    scored: tuple[bool, float],
    seen: dict[Move, RootScore],
) -> tuple[list[tuple[Score, tuple[str, ...]]], list[Move], list[int]]:
    """One depth's ``lines`` best lines, each the best of the moves the lines before it did
    not take (``_best_root_move``), with its score (``_combined_score`` with ``scored``: whether
    the view hides something, and the scale) and principal variation; the root moves with the
    lines' first, in their order, then the others best first; and the first line's values.
    ``seen`` gets each move's score at this depth: a line's exact, another's an upper bound
    (its expected score as centipawns)."""
    is_hidden, scale = scored
    found: list[tuple[Score, tuple[str, ...]]] = []
    first: list[int] = []
    rest, taken = root_moves, 0
    for _ in range(lines):
        values, totals = _best_root_move([lead], [1], rest, depth, scale)
        # stable: among equal values the earlier (previously better) move stays first
        rest = sorted(rest, key=lambda m: -totals[m])
        first = first or values
        score = _combined_score(values, is_hidden, scale)
        found.append((score, _line([lead], rest[0], state)))
        seen[rest[0]] = RootScore(state.move_to_str(rest[0]), score, depth)
        for move in rest[1:]:
            bound = Score("cp", _centipawns(totals[move], scale))
            seen[move] = RootScore(state.move_to_str(move), bound, depth, "upper")
        root_moves = [*root_moves[:taken], *rest]
        rest, taken = rest[1:], taken + 1
    return found, root_moves, first


def _ordered(seen: dict[Move, RootScore]) -> tuple[RootScore, ...]:
    """``seen``'s scores, deepest first, then best first (a win above any evaluation, the
    sooner the better; a loss below, the later the better)."""

    def rank(each: RootScore) -> tuple[int, int]:
        value = each.score.value
        worth = {"win": WIN - value, "loss": value - WIN}.get(each.score.kind, value)
        return -each.depth, -worth

    return tuple(sorted(seen.values(), key=rank))


def _distinct(drawn: list[State]) -> tuple[list[State], list[int]]:
    """The distinct worlds drawn, each with how often it was drawn: a world drawn several
    times is searched once and counted as often."""
    weight_of: dict[int, int] = {}
    worlds: list[State] = []
    for world in drawn:
        key = world.key()
        if key not in weight_of:
            worlds.append(world)
            weight_of[key] = 0
        weight_of[key] += 1
    return worlds, [weight_of[world.key()] for world in worlds]


def _best_root_move(
    searchers: Sequence[Searcher],
    weights: Sequence[int],
    root_moves: Sequence[Move],
    depth: int,
    scale: float,
) -> tuple[list[int], dict[Move, float]]:
    """The move with the best weighted sum of expected scores over the samples at ``depth``,
    first among equals in ``root_moves`` order: its exact value in each sample, and per root
    move its sum (exact for the best, an upper bound for the others). The first sample's
    principal variation is left starting with that move.

    The first move is searched with a full window in every sample. Each other move is first
    tried with a null window at the best move's value in each sample: where it is no better
    there, that bound is all the sum needs, and if the sum of the bounds (with the exact values
    of the samples where it was better) does not beat the best sum, the move cannot either.
    Only a move that may beat it is searched exactly in every sample. The choice is the one
    full windows for every move would make, for a fraction of the nodes (the idea of principal
    variation search, applied to a sum over samples)."""
    lead = searchers[0]
    first = root_moves[0]
    best = [searcher.root_value(depth, first) for searcher in searchers]
    best_line = list(lead.pv_table[1])
    best_total = _weighted_sum(best, weights, scale)
    best_move = first
    totals = {first: best_total}
    for move in root_moves[1:]:
        values: list[int] = []
        exact: list[bool] = []
        line: list[Move] | None = None
        for searcher, threshold in zip(searchers, best, strict=True):
            value = searcher.root_value(depth, move, threshold, threshold + 1)
            known = value > threshold
            if known:  # better in this sample: its exact value there
                value = searcher.root_value(depth, move)
                if searcher is lead:
                    line = list(lead.pv_table[1])
            values.append(value)
            exact.append(known)
        total = _weighted_sum(values, weights, scale)
        if total > best_total and not all(exact):
            for i, searcher in enumerate(searchers):
                if not exact[i]:
                    values[i] = searcher.root_value(depth, move)
                    if searcher is lead:
                        line = list(lead.pv_table[1])
            total = _weighted_sum(values, weights, scale)
        totals[move] = total
        if total > best_total:
            best, best_total, best_move = values, total, move
            best_line = line or []
    lead.pv_table[0] = [best_move, *best_line]
    return best, totals


def _weighted_sum(values: Sequence[int], weights: Sequence[int], scale: float) -> float:
    return sum(w * expected_score(v, scale) for v, w in zip(values, weights, strict=True))


def _line(searchers: Sequence[Searcher], move: Move, state: State) -> tuple[str, ...]:
    """A principal variation starting with ``move``: the first sample's line if it starts
    there, else the move alone (the other samples' lines may pass through hidden laws)."""
    line = searchers[0].principal_variation()
    token = state.move_to_str(move)
    return line if line[:1] == (token,) else (token,)

"""The game-agnostic alpha-beta search core.

Iterative deepening over a negamax with principal variation search, aspiration windows at the
root, a transposition table, killer and history move ordering and a quiescence search over the
moves the game's evaluation marks as noisy.

Several plies in a row may belong to one player (Yinsh removals, Yoxii's two-part turn), so
scores are kept from the point of view of the side to act at each node and negated only where
``to_move()`` changes between a node and its child. A finished game has nobody to act; its
value is scored from the point of view of the player who made the last move.

Scores: evaluations stay below ``MAX_EVAL``; a proven win in N plies from the root is
``WIN - N`` and a loss ``-(WIN - N)``. In the transposition table such scores are stored
relative to the node (plies from the node), so an entry stays valid at any depth.

Determinism: with depth or node limits only, a search visits the same nodes in the same order
on every run (no clocks, no hash randomisation: move ordering breaks ties by the move's value).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

from bots.engine import InfoFn, Limits, RootScore, Score, SearchInfo, SearchResult, StopFn
from bots.eval import MAX_EVAL, Evaluator
from games import Move, Outcome, State

WIN = 10_000_000
"""The score of a win at the root; a win in N plies scores WIN - N."""
PROVEN = WIN - 10_000
"""Scores at or above this magnitude are proven results."""
INF = WIN + 1
MAX_PLY = 128
QUIESCENCE_PLIES = 8
"""How far quiescence may go beyond the nominal depth."""
CHECK_EVERY = 128
"""Nodes between two looks at the clock and the stop flag (well under 20 ms of search)."""
REDUCE_DEPTH = 3
REDUCE_AFTER = 3
"""Late move reductions (``SearchOptions.reductions``): at ``REDUCE_DEPTH`` plies and more,
every move of a node from the ``REDUCE_AFTER``-th on (counting from 0: after the table's move
and the killers, which the order puts first) is searched one ply shallower with a null window
first; only a move that beats alpha there is searched again at full depth."""
CHECK_GAP = 0.004
"""Seconds a timed search lets pass between two looks at the clock at most: where nodes are
slow (an evaluation that solves endgames), it looks more often than every ``CHECK_EVERY``."""
ASPIRATION = 50
"""The default half-width of the root window around the previous iteration's value."""

EXACT, LOWER, UPPER = 0, 1, 2
"""Bound kinds of a transposition table entry."""

ENTRY_BYTES = 200
"""Memory of one table entry, for the size option, rounded up: a list slot (8 bytes), a tuple
of six ints (88), a 64-bit key (36), and a move and a score that small-int caching does not
cover; measured with ``tracemalloc`` on a full table of typical entries (196 bytes each). A
table never holds more than its ``Hash``, so that a worker's tables stay within its share of
the server's budget."""


class LazyMoves(Sequence[Move]):
    """The legal moves of a position, generated only if someone looks at them.

    Quiescence hands this to ``Evaluator.noisy_moves``: an evaluation that finds its noisy
    moves by itself (and most positions have none) then never pays for a full generation.
    Valid only until the position changes.
    """

    __slots__ = ("_moves", "_state")

    def __init__(self, state: State) -> None:
        self._state = state
        self._moves: Sequence[Move] | None = None

    def _get(self) -> Sequence[Move]:
        if self._moves is None:
            self._moves = self._state.legal_moves()
        return self._moves

    def __len__(self) -> int:
        return len(self._get())

    @overload
    def __getitem__(self, index: int) -> Move: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Move]: ...
    def __getitem__(self, index: int | slice) -> Move | Sequence[Move]:
        return self._get()[index]

    def __contains__(self, move: object) -> bool:
        return move in self._get()

    def __iter__(self) -> Iterator[Move]:
        return iter(self._get())


class SearchAbortedError(Exception):
    """Raised inside the search when a limit or a stop request ends it."""


class TranspositionTable:
    """A fixed number of slots indexed by the low bits of the position key.

    Each slot holds ``(key, depth, bound, score, move, age)``. Replacement keeps the more
    useful entry: a new entry replaces one from an older search, one for the same position, or
    one searched less deep; otherwise the old deeper entry stays (depth-preferred with aging).
    """

    def __init__(self, megabytes: int) -> None:
        slots = max(1024, megabytes * 1024 * 1024 // ENTRY_BYTES)
        self.size = 1 << (slots.bit_length() - 1)  # a power of two, so a mask indexes
        self.mask = self.size - 1
        self.slots: list[tuple[int, int, int, int, Move, int] | None] = [None] * self.size
        self.age = 0
        self.searched = False
        """Whether entries may have been written since the table was made or cleared."""

    def clear(self) -> None:
        """Forget everything (nothing to do when no search used the table since: a fresh
        table of 64 MB takes milliseconds to make again)."""
        if not self.searched:
            return
        self.slots = [None] * self.size
        self.age = 0
        self.searched = False

    def new_search(self) -> None:
        """Mark the entries written from now on as the newest."""
        self.age = (self.age + 1) & 0xFF

    def probe(self, key: int) -> tuple[int, int, int, int, Move, int] | None:
        """The entry of ``key``, or None."""
        entry = self.slots[key & self.mask]
        if entry is not None and entry[0] == key:
            return entry
        return None

    def store(self, key: int, depth: int, bound: int, score: int, move: Move) -> None:
        """Store a result, under the replacement policy of the class docstring."""
        self.searched = True
        index = key & self.mask
        old = self.slots[index]
        if old is None or old[5] != self.age or old[0] == key or depth >= old[1]:
            if move < 0 and old is not None and old[0] == key:
                move = old[4]  # keep the best move known for this position
            self.slots[index] = (key, depth, bound, score, move, self.age)

    def hashfull(self) -> int:
        """Permille of the first 1000 slots holding entries of the current search."""
        sample = self.slots[: min(1000, self.size)]
        used = sum(1 for e in sample if e is not None and e[5] == self.age)
        return used * 1000 // len(sample)


def terminal_score(outcome: Outcome | None, me: int, ply: int) -> int:
    """The value of a finished game for seat ``me``, reached ``ply`` plies from the root."""
    if outcome is None or outcome.winner_seat is None:
        return 0
    return WIN - ply if outcome.winner_seat == me else -(WIN - ply)


def to_score(value: int) -> Score:
    """A root value as a ``Score``: ``cp`` or a proven ``win``/``loss`` in plies."""
    if value >= PROVEN:
        return Score("win", WIN - value)
    if value <= -PROVEN:
        return Score("loss", WIN + value)
    return Score("cp", value)


@dataclass
class _Progress:
    depth: int = 0
    value: int = 0
    move: Move = -1
    pv: tuple[Move, ...] = ()


@dataclass(slots=True)
class SearchMemory:
    """What a bot keeps from one search to the next: its transposition table and the history
    counts of the moves that cut off."""

    table: TranspositionTable
    history: dict[Move, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """How a search goes about it (a bot's options ``Quiescence`` and ``Aspiration``).

    Attributes:
        quiescence: whether the leaves are searched on through the noisy moves.
        aspiration: the half-width of the root window around the previous iteration's value.
        reductions: late move reductions below the root (``REDUCE_DEPTH``, ``REDUCE_AFTER``).
    """

    quiescence: bool = True
    aspiration: int = ASPIRATION
    reductions: bool = False


DEFAULT_OPTIONS = SearchOptions()


class Searcher:
    """One search of one position. Create it, call ``run``; reusable tables are passed in."""

    def __init__(
        self,
        state: State,
        *,
        evaluator: Evaluator,
        memory: SearchMemory,
        limits: Limits,
        stop: StopFn,
        on_info: InfoFn,
        options: SearchOptions = DEFAULT_OPTIONS,
    ) -> None:
        self.state = state
        self.aspiration = options.aspiration
        self.evaluator = evaluator
        self.table = memory.table
        self.history = memory.history
        self.limits = limits
        self.stop = stop
        self.on_info = on_info
        self.quiescence = options.quiescence
        self.reductions = options.reductions
        self.nodes = 0
        self.seldepth = 0
        # a timed search starts by looking often and widens the interval while nodes are fast
        self.check_every = CHECK_EVERY if limits.deadline is None else 8
        self.next_check = self.check_every
        self.last_check = limits.clock()
        self.killers: list[list[Move]] = [[-1, -1] for _ in range(MAX_PLY + QUIESCENCE_PLIES + 2)]
        self.pv_table: list[list[Move]] = [[] for _ in range(MAX_PLY + QUIESCENCE_PLIES + 2)]
        self.started = limits.clock()
        self.stopped = False
        self.root_scores: dict[Move, tuple[int, int, int]] = {}
        """Per first decision searched: the depth, value and bound of its last search."""
        # Looked at on every node, besides the periodic check: a node can be slow (an
        # evaluation that solves an endgame), and a batch of them between two periodic checks
        # would overrun the deadline by their sum. One clock read per node costs well under 1%.
        self.clock = limits.clock
        self.timed = limits.deadline is not None
        self.deadline_at = math.inf if limits.deadline is None else self.started + limits.deadline

    # -- limits --------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds since the search started, on the limits' clock."""
        return self.limits.clock() - self.started

    def _check(self) -> None:
        limits = self.limits
        if limits.deadline is not None:
            # adapt the interval to the speed of the nodes (only under a deadline: with depth
            # and node limits the search must stay the same from run to run)
            now = limits.clock()
            gap = now - self.last_check
            self.last_check = now
            if gap > CHECK_GAP:
                self.check_every = max(1, int(self.check_every * CHECK_GAP / gap))
            elif gap < CHECK_GAP / 4 and self.check_every < CHECK_EVERY:
                self.check_every *= 2
        self.next_check = self.nodes + self.check_every
        if limits.nodes is not None and self.nodes >= limits.nodes:
            raise SearchAbortedError
        if self.stop():
            self.stopped = True
            raise SearchAbortedError
        if limits.deadline is not None and self.elapsed() >= limits.deadline:
            self.stopped = True
            raise SearchAbortedError

    # -- the driver ----------------------------------------------------------------------------

    def run(self) -> SearchResult:
        """Iterative deepening until a limit; the result of the last completed iteration (or of
        the interrupted one, once its first root move has been searched)."""
        state = self.state
        self.table.new_search()
        root_moves = self._root_moves()
        if not root_moves:
            return SearchResult(None, None)
        if len(root_moves) == 1 and not self.limits.searches_forced:
            # A forced move needs no search: do not spend the clock on it.
            move = root_moves[0]
            return SearchResult(move, state.move_to_str(move), pv=(state.move_to_str(move),))
        best = _Progress(move=root_moves[0], pv=(root_moves[0],))
        max_depth = self.limits.depth if self.limits.depth is not None else MAX_PLY
        guesses = [0] * max(1, min(self.limits.lines, len(root_moves)))
        root_ply = state.ply()
        try:
            for depth in range(1, max_depth + 1):
                found = self._iteration(depth, guesses, root_moves, best)
                for index, line in enumerate(found, 1):
                    self._report(line, index if len(found) > 1 else None)
                # the lines' moves first, in their order, for the next iteration
                chosen = [line.move for line in found]
                root_moves = chosen + [move for move in root_moves if move not in chosen]
                guesses = [line.value for line in found]
                value = best.value
                if abs(value) >= PROVEN and WIN - abs(value) <= depth:
                    break  # a proven result within the full-width horizon: nothing to improve
                target = self.limits.target
                if target is not None and self.elapsed() >= target * 0.6:
                    break  # the next iteration would likely not finish before the target
        except SearchAbortedError:
            # the tree's moves are not popped on the way out: back to the root, where the
            # principal variation is read
            while state.ply() > root_ply:
                state.pop()
        return self._result(best)

    def _root_moves(self) -> list[Move]:
        limits = self.limits
        return root_moves_of(self.state, self.evaluator, limits.root_moves, limits.avoid_moves)

    def _iteration(
        self, depth: int, guesses: list[int], root_moves: list[Move], best: _Progress
    ) -> list[_Progress]:
        """One iteration: a line per guess (the value each line had at the depth before), each
        the best of the root moves the lines before it did not take, with its exact value.
        ``best`` is the first, updated as soon as it is known (a stop during a later line still
        plays it). Only a search of every root move stores the root in the table."""
        value, move, pv = self._aspiration(
            depth, guesses[0], root_moves, best, store=not self.limits.restricted
        )
        best.depth, best.value, best.move, best.pv = depth, value, move, pv
        found = [best]
        rest = [other for other in root_moves if other != move]
        for guess in guesses[1:]:
            value, move, pv = self._aspiration(depth, guess, rest, _Progress(), store=False)
            found.append(_Progress(depth, value, move, pv))
            rest.remove(move)
        return found

    def _aspiration(
        self, depth: int, guess: int, root_moves: list[Move], best: _Progress, *, store: bool
    ) -> tuple[int, Move, tuple[Move, ...]]:
        if depth < 3 or abs(guess) >= PROVEN:
            return self._root(depth, -INF, INF, root_moves, best, store)
        delta = self.aspiration
        alpha, beta = guess - delta, guess + delta
        while True:
            value, move, pv = self._root(depth, alpha, beta, root_moves, best, store)
            if value <= alpha:
                alpha = max(-INF, alpha - delta * 4)
            elif value >= beta:
                beta = min(INF, beta + delta * 4)
            else:
                return value, move, pv
            delta *= 4
            if delta > 4 * MAX_EVAL:
                alpha, beta = -INF, INF

    def _root(
        self,
        depth: int,
        alpha: int,
        beta: int,
        root_moves: list[Move],
        best: _Progress,
        store: bool,
    ) -> tuple[int, Move, tuple[Move, ...]]:
        state = self.state
        me = state.to_move()
        alpha_start = alpha
        best_value = -INF
        best_move = root_moves[0]
        first = True
        for move in root_moves:
            state.push(move)
            try:
                low, high = alpha, beta
                if first:
                    value = self._child(me, depth - 1, alpha, beta, 1)
                else:
                    high = alpha + 1
                    value = self._child(me, depth - 1, alpha, alpha + 1, 1)
                    if alpha < value < beta:
                        high = beta
                        value = self._child(me, depth - 1, alpha, beta, 1)
            finally:
                state.pop()
            bound = UPPER if value <= low else LOWER if value >= high else EXACT
            self.root_scores[move] = (depth, value, bound)
            if value > best_value:
                best_value, best_move = value, move
                self.pv_table[0] = [move, *self.pv_table[1]]
                if not first and value > alpha:
                    # An interrupted iteration still plays a move proven better than the
                    # previous iteration's choice.
                    best.move, best.value, best.pv = move, value, tuple(self.pv_table[0])
                if value > alpha:
                    alpha = value
                    if value >= beta:
                        break
            first = False
        bound = EXACT
        if best_value <= alpha_start:
            bound = UPPER
        elif best_value >= beta:
            bound = LOWER
        if store:
            self.table.store(state.key(), depth, bound, best_value, best_move)
        return best_value, best_move, tuple(self.pv_table[0])

    def root_values(self, depth: int, root_moves: Sequence[Move]) -> dict[Move, int]:
        """The exact value of every root move searched to ``depth`` plies, each with a full
        window (no cut-offs between root moves): the plain way to add up the values of one move
        over several positions, which ``bots.determinize`` does for far fewer nodes (the tests
        hold it to this). The best move is stored in the table, so the next depth searches it
        first below the root.

        Raises:
            SearchAbortedError: a limit or a stop request ended the search; the values of this depth
                are incomplete.
        """
        state = self.state
        me = state.to_move()
        values: dict[Move, int] = {}
        best_move, best_value = -1, -INF
        for move in root_moves:
            state.push(move)
            try:
                value = self._child(me, depth - 1, -INF, INF, 1)
            finally:
                state.pop()
            values[move] = value
            if value > best_value:
                best_value, best_move = value, move
                self.pv_table[0] = [move, *self.pv_table[1]]
        if best_move >= 0:
            self.table.store(state.key(), depth, EXACT, best_value, best_move)
        return values

    def root_value(self, depth: int, move: Move, alpha: int = -INF, beta: int = INF) -> int:
        """The value of root move ``move`` searched to ``depth`` plies within (alpha, beta),
        fail-soft: at most ``alpha`` is an upper bound, at least ``beta`` a lower bound; with a
        full window (the default) it is exact, and ``pv_table[1]`` then holds the line below it.

        Raises:
            SearchAbortedError: a limit or a stop request ended the search.
        """
        state = self.state
        me = state.to_move()
        state.push(move)
        try:
            value = self._child(me, depth - 1, alpha, beta, 1)
        finally:
            state.pop()
        return value

    def store_root(self, depth: int, move: Move, value: int) -> None:
        """Remember ``move`` as the best at the root for ``depth`` (the next depth searches it
        first below the root)."""
        self.table.store(self.state.key(), depth, EXACT, value, move)

    def principal_variation(self) -> tuple[str, ...]:
        """The tokens of the last best line found at the root (empty before any)."""
        return self._tokens(self.pv_table[0])

    # -- the tree ------------------------------------------------------------------------------

    def _child(self, me: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The value for ``me`` of the position just pushed, within (alpha, beta) for ``me``."""
        state = self.state
        if state.is_terminal():
            self.nodes += 1
            if self.nodes >= self.next_check or (self.timed and self.clock() >= self.deadline_at):
                self._check()
            self.pv_table[ply] = []
            return terminal_score(state.outcome(), me, ply)
        if state.to_move() == me:
            return self._negamax(depth, alpha, beta, ply)
        return -self._negamax(depth, -beta, -alpha, ply)

    def _negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        self.nodes += 1
        if self.nodes >= self.next_check or (self.timed and self.clock() >= self.deadline_at):
            self._check()
        self.pv_table[ply] = []
        if ply > self.seldepth:
            self.seldepth = ply
        if depth <= 0 or ply >= MAX_PLY:
            return self._quiesce(alpha, beta, ply, 0)

        state = self.state
        key = state.key()
        alpha_start = alpha
        tt_move: Move = -1
        entry = self.table.probe(key)
        if entry is not None:
            tt_move = entry[4]
            if entry[1] >= depth:
                score = _from_table(entry[3], ply)
                bound = entry[2]
                if (
                    bound == EXACT
                    or (bound == LOWER and score >= beta)
                    or (bound == UPPER and score <= alpha)
                ):
                    return score

        moves = self._ordered(state, tt_move, ply)
        if not moves:
            # not over, yet no move known: a view's player whose only tokens may be hidden
            return self.evaluator.evaluate(state)
        me = state.to_move()
        best_value = -INF
        best_move: Move = -1
        reduce_from = REDUCE_AFTER if self.reductions and depth >= REDUCE_DEPTH else len(moves)
        for i, move in enumerate(moves):
            state.push(move)
            if i == 0:
                value = self._child(me, depth - 1, alpha, beta, ply + 1)
            else:
                value = self._later_child(me, depth, alpha, beta, ply, i >= reduce_from)
            state.pop()
            if value > best_value:
                best_value, best_move = value, move
                if value > alpha:
                    alpha = value
                    self.pv_table[ply] = [move, *self.pv_table[ply + 1]]
                    if value >= beta:
                        self._reward(move, depth, ply)
                        break
        bound = UPPER if best_value <= alpha_start else LOWER if best_value >= beta else EXACT
        self.table.store(key, depth, bound, _to_table(best_value, ply), best_move)
        return best_value

    def _later_child(
        self, me: int, depth: int, alpha: int, beta: int, ply: int, reduced: bool
    ) -> int:
        """A move after a node's first, just pushed: a null window first (one ply shallower
        when ``reduced``, then at full depth if it beat alpha there), a full window only for a
        value inside (alpha, beta)."""
        if reduced:
            value = self._child(me, depth - 2, alpha, alpha + 1, ply + 1)
            if value <= alpha:
                return value
        value = self._child(me, depth - 1, alpha, alpha + 1, ply + 1)
        if alpha < value < beta:
            value = self._child(me, depth - 1, alpha, beta, ply + 1)
        return value

    def _quiesce(self, alpha: int, beta: int, ply: int, qply: int) -> int:
        state = self.state
        evaluator = self.evaluator
        if not self.quiescence or qply >= QUIESCENCE_PLIES or ply >= MAX_PLY + QUIESCENCE_PLIES:
            return evaluator.evaluate(state)
        if evaluator.is_quiet(state):
            stand = evaluator.evaluate(state)
            if stand >= beta:
                return stand
            alpha = max(alpha, stand)
            moves = evaluator.noisy_moves(state, LazyMoves(state))
            best_value = stand
        else:
            # in the middle of a forced sequence the static value is not used: all moves are
            # searched, and the evaluation is taken only if there are none
            moves = evaluator.order_moves(state, evaluator.search_moves(state))
            best_value = -INF
            if not moves:
                return evaluator.evaluate(state)
        if not moves:
            return best_value
        me = state.to_move()
        for move in moves:
            state.push(move)
            self.nodes += 1
            if self.nodes >= self.next_check or (self.timed and self.clock() >= self.deadline_at):
                self._check()
            if ply + 1 > self.seldepth:
                self.seldepth = ply + 1
            if state.is_terminal():
                value = terminal_score(state.outcome(), me, ply + 1)
            elif state.to_move() == me:
                value = self._quiesce(alpha, beta, ply + 1, qply + 1)
            else:
                value = -self._quiesce(-beta, -alpha, ply + 1, qply + 1)
            state.pop()
            if value > best_value:
                best_value = value
                if value > alpha:
                    alpha = value
                    if value >= beta:
                        break
        return best_value

    # -- ordering ------------------------------------------------------------------------------

    def _ordered(self, state: State, tt_move: Move, ply: int) -> list[Move]:
        moves = self.evaluator.order_moves(state, self.evaluator.search_moves(state))
        history = self.history
        killers = self.killers[ply]
        if history:
            # stable sort: the evaluation's order breaks ties
            moves.sort(key=lambda m: -history.get(m, 0))
        front: list[Move] = []
        for special in (tt_move, killers[0], killers[1]):
            if special >= 0 and special not in front and special in moves:
                front.append(special)
        if front:
            moves = front + [m for m in moves if m not in front]
        return moves

    def _reward(self, move: Move, depth: int, ply: int) -> None:
        killers = self.killers[ply]
        if killers[0] != move:
            killers[1] = killers[0]
            killers[0] = move
        self.history[move] = self.history.get(move, 0) + depth * depth

    # -- reporting -----------------------------------------------------------------------------

    def _report(self, best: _Progress, line: int | None = None) -> None:
        elapsed = self.elapsed()
        self.on_info(
            SearchInfo(
                depth=best.depth,
                seldepth=max(self.seldepth, best.depth),
                score=to_score(best.value),
                nodes=self.nodes,
                nps=int(self.nodes / elapsed) if elapsed > 0 else 0,
                time=int(elapsed * 1000),
                pv=self._tokens(best.pv),
                hashfull=self.table.hashfull(),
                line=line,
            )
        )

    def _tokens(self, pv: Sequence[Move]) -> tuple[str, ...]:
        state = self.state
        tokens: list[str] = []
        pushed = 0
        for move in pv:
            if move not in state.legal_moves():
                break  # never print a move that is not legal where it stands
            tokens.append(state.move_to_str(move))
            state.push(move)
            pushed += 1
        for _ in range(pushed):
            state.pop()
        return tuple(tokens)

    def _result(self, best: _Progress) -> SearchResult:
        state = self.state
        return SearchResult(
            move=best.move,
            token=state.move_to_str(best.move),
            score=to_score(best.value) if best.depth else None,
            depth=best.depth,
            seldepth=max(self.seldepth, best.depth),
            nodes=self.nodes,
            time=int(self.elapsed() * 1000),
            pv=self._tokens(best.pv) or (state.move_to_str(best.move),),
            hashfull=self.table.hashfull(),
            stopped=self.stopped,
            root_scores=root_scores(state, self.root_scores),
        )


def root_scores(state: State, scores: dict[Move, tuple[int, int, int]]) -> tuple[RootScore, ...]:
    """The ``RootScore`` of each move of ``scores`` (its depth, value and bound), deepest
    first, then best first, then in the order of the moves."""
    kinds: dict[int, Literal["lower", "upper"] | None] = {
        EXACT: None,
        LOWER: "lower",
        UPPER: "upper",
    }
    ordered = sorted(scores.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return tuple(
        RootScore(state.move_to_str(move), to_score(value), depth, kinds[bound])
        for move, (depth, value, bound) in ordered
    )


def root_moves_of(
    state: State,
    evaluator: Evaluator,
    allowed: Sequence[Move] | None,
    avoided: Sequence[Move] = (),
) -> list[Move]:
    """The first decisions to search in ``state``, in the evaluation's order: all it offers
    (``Evaluator.search_moves``), or those of ``allowed`` (``Limits.root_moves``; a legal move
    it does not offer comes after, in the order given), less those ``avoided``. When the
    evaluation offers none of the legal moves left, the first of them.

    Raises:
        ValueError: a move of ``allowed`` is not legal in ``state``.
    """
    offered = list(evaluator.search_moves(state))
    if allowed is None and not avoided:
        return offered
    out = offered
    if allowed is not None:
        wanted = set(allowed)
        kept = [move for move in offered if move in wanted]
        seen = set(kept)
        later = [move for move in dict.fromkeys(allowed) if move not in seen]
        legal = state.legal_moves() if later else ()
        # a look-up for each (a lazy sequence, Yin Yang's setup, answers ``in`` at once)
        known = set(legal) if isinstance(legal, list | tuple) else legal
        for move in later:
            if move not in known:
                raise ValueError(f"root_moves: move {move} is not legal here")
        out = kept + later
    shunned = set(avoided)
    out = [move for move in out if move not in shunned]
    if not out and allowed is None:
        # by index: a lazy sequence of legal moves is never iterated whole
        legal = state.legal_moves()
        out = next(([legal[i]] for i in range(len(legal)) if legal[i] not in shunned), [])
    return out


def _to_table(score: int, ply: int) -> int:
    if score >= PROVEN:
        return score + ply
    if score <= -PROVEN:
        return score - ply
    return score


def _from_table(score: int, ply: int) -> int:
    if score >= PROVEN:
        return score - ply
    if score <= -PROVEN:
        return score + ply
    return score

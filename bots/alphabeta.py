"""``alphabeta``: the main bot, the search core of ``bots.search`` with each game's evaluation.

Options: ``Hash`` (transposition table size in MB), ``Depth`` (a cap on the iteration depth, 0
for none), ``Quiescence`` (search noisy moves beyond the horizon), ``Reductions`` (late move
reductions, ``bots.search.REDUCE_DEPTH``; games of perfect information), ``Aspiration`` (the
half-width of the root window around the previous iteration's value; 0, the default, takes the
game's own, see ``Evaluator.aspiration``), and for games of hidden
information (Yin Yang) ``Samples`` (how many completions of a view are drawn, 8 by default:
one is searched as it is; several count at the leaves of the view's own tree, see
``bots.determinize``) and ``SecretSeed`` (0, the default: its
choices of chance, the laws written at setup and the worlds sampled, come from the operating
system's randomness, so an opponent cannot predict them; any other value repeats them; see
``bots.chance``). The table
and the history of good moves are kept from one move to the next within a game and cleared by
``new_game``.

Evaluation weights: every weight ``bots.eval.tuning`` lists is an option too (``EvalYinsh...``,
``EvalYohoho...``, ``EvalYoxii...``), hidden from a plain listing (``Option.hidden``) and
bearing on its own game only. A search evaluates with an evaluator of the weights the options
hold at that moment: the evaluator of a game is made again only when its weights change (and
the table and history, filled under the old ones, are then cleared), so a bot that a server's
worker keeps pays nothing for weights that stay, and two bots of different weights in one
process never share an evaluation.

Analysis: ``Limits.lines`` above 1 (MultiPV) or ``Limits.root_moves`` (``searchmoves``,
``avoidmoves``) make the search report the best lines among the root moves allowed, each with
its exact score; such a search makes no late move reductions, so that a line's score is the one
its move gets searched alone (a reduction depends on the history the other moves left), and is
never answered from a turn's plan.

Whole turns: where a player makes several decisions in a row (Yohoho's two sub-moves, Yoxii's
Totem move and placement, Yinsh's removals), the search of the turn's first decision already
looked through the rest of the turn. Under a clock (``Limits.from_pv``) a later decision of the
turn, reached by playing that search's principal variation, is answered from it at once; any
other position, or a fixed time, depth or node count per decision, is searched as usual.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import ClassVar

from bots import levels
from bots.chance import SECRET_SEED_OPTION, SEED_OPTION, Chance
from bots.compiled import CompiledMemory, Core, compiled_search, core_for
from bots.determinize import Sampling, determinized_search
from bots.engine import (
    Engine,
    InfoFn,
    LevelInfo,
    Limits,
    Option,
    OptionError,
    Score,
    SearchInfo,
    SearchResult,
    StopFn,
    ignore_info,
    never_stop,
)
from bots.eval import Evaluated, Evaluator, evaluator_for
from bots.eval.tuning import TUNABLES, Tunable, tunables_for
from bots.levels import LEVELS
from bots.search import MAX_PLY, Searcher, SearchMemory, SearchOptions, TranspositionTable
from games import Game, GameError, Move, State


@dataclass(frozen=True, slots=True)
class _TurnPlan:
    """The rest of a turn as a search planned it: the position it expects next (the same
    player to act) and the principal variation from there."""

    position: str
    pv: tuple[str, ...]
    score: Score | None
    depth: int


def weight_options() -> tuple[Option, ...]:
    """The evaluation weights as options: hidden, each naming the games it bears on."""
    games: dict[str, list[str]] = {}
    first: dict[str, Tunable] = {}
    for game, tunables in TUNABLES.items():
        for tunable in tunables:
            first.setdefault(tunable.name, tunable)
            games.setdefault(tunable.name, []).append(game)
    return tuple(
        Option(t.name, "spin", t.default, t.low, t.high, hidden=True, games=tuple(games[t.name]))
        for t in first.values()
    )


class AlphaBeta(Evaluated, Engine):
    """Iterative deepening alpha-beta with a transposition table (see ``bots.search``)."""

    name: ClassVar[str] = "alphabeta"
    analysis: ClassVar[bool] = True
    levels: ClassVar[tuple[LevelInfo, ...]] = levels.infos()
    options: ClassVar[tuple[Option, ...]] = (
        Option("Hash", "spin", 64, 1, 4096),
        Option("Depth", "spin", 0, 0, MAX_PLY),
        Option("Quiescence", "check", True),
        Option("Reductions", "check", True),
        Option("Aspiration", "spin", 0, 0, 10_000),
        Option("Samples", "spin", 8, 1, 64),
        Option("Level", "spin", len(LEVELS), 1, len(LEVELS)),
        SEED_OPTION,
        SECRET_SEED_OPTION,
        *weight_options(),
    )

    def __init__(self) -> None:
        super().__init__()
        self._table: TranspositionTable | None = None
        self._table_mb = 0
        self._compiled: CompiledMemory | None = None
        self._compiled_mb = 0
        self._history: dict[Move, int] = {}
        self._evaluators: dict[str, tuple[tuple[int, ...], Evaluator]] = {}
        """Per game, the weights of its options and the evaluator made with them."""
        self._plan: _TurnPlan | None = None

    def _evaluator(self, game: Game) -> Evaluator:
        """The evaluator of ``game`` under the weights the options hold now: the one made
        before while they stay the same, a new one when they changed (and then the table and
        history, whose values came from the old weights, start afresh)."""
        tunables = tunables_for(game.name)
        weights = tuple(int(self.values[t.name] or 0) for t in tunables)
        made = self._evaluators.get(game.name)
        if made is not None and made[0] == weights:
            return made[1]
        values = {t.name: w for t, w in zip(tunables, weights, strict=True) if w != t.default}
        try:
            evaluator = evaluator_for(game.name, values or None)
        except KeyError:
            raise OptionError(f"{self.name} does not play {game.name}") from None
        if made is not None:
            self._forget()
        self._evaluators[game.name] = (weights, evaluator)
        return evaluator

    def _table_for_options(self) -> TranspositionTable:
        megabytes = int(self.values["Hash"] or 1)
        if self._table is None or megabytes != self._table_mb:
            self._table = TranspositionTable(megabytes)
            self._table_mb = megabytes
        return self._table

    def _memory(self) -> SearchMemory:
        return SearchMemory(self._table_for_options(), self._history)

    def _compiled_memory(self, core: Core) -> CompiledMemory:
        """The compiled search's memory (one at a time: the core of the game being played)."""
        megabytes = int(self.values["Hash"] or 1)
        memory = self._compiled
        if memory is None or memory.core is not core or megabytes != self._compiled_mb:
            # drop the old table before making the new one: never two in memory at once
            history = memory.history if memory is not None and memory.core is core else None
            self._compiled = None
            memory = self._compiled = CompiledMemory.of_megabytes(core, megabytes)
            self._compiled_mb = megabytes
            if history is not None:  # a new Hash makes a new table; the history stays
                memory.history = history
                memory.searched = True  # so that a new game clears it
        return memory

    def new_game(self, game: Game) -> None:
        hidden = self._evaluator(game).hidden_information()
        if hidden is not None:
            hidden.new_game()
        self._forget()

    def _forget(self) -> None:
        """Clear what the searches so far learnt: the tables, the history, the turn's plan."""
        if self._table is not None:
            self._table.clear()
        if self._compiled is not None:
            self._compiled.clear()
        self._history.clear()
        self._plan = None

    def search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        chosen = levels.level(int(self.values["Level"] or len(LEVELS)), state.game.name)
        quiescence = bool(self.values["Quiescence"])
        if chosen.full:
            return self._search(state, limits, stop, on_info, quiescence=quiescence)
        analysing = limits.lines > 1 or limits.restricted
        chance = Chance(state, int(self.values["Seed"] or 0), int(self.values["SecretSeed"] or 0))
        hidden = self._evaluator(state.game).hidden_information() is not None
        rng = chance.secret if hidden else chance.public
        moves = state.count_moves()
        if not analysing and chosen.random_share and rng.random() < chosen.random_share:
            self._plan = None
            move = chance.pick(state, state.legal_moves())
            token = state.move_to_str(move)
            return SearchResult(move, token, pv=(token,))
        if not analysing and moves > levels.MOST_SCORED and chosen.large_skill < 1.0:
            planned = self._plan_large(state, chosen.large_skill, chance, rng)
            if planned is not None:
                return planned
        limits = chosen.limits(limits, moves, analysing=analysing)
        quiescence = quiescence and chosen.quiescence
        result = self._search(state, limits, stop, on_info, quiescence=quiescence)
        if analysing:
            return result
        drawn = levels.draw(result, chosen, state.game.name, rng)
        if drawn is None:
            return result
        self._plan = None  # the turn goes on from another move than the search's
        token, entry = drawn
        return replace(
            result,
            move=state.parse_move(token),
            token=token,
            score=entry.score,
            depth=entry.depth,
            pv=(token,),
        )

    def _plan_large(
        self, state: State, skill: float, chance: Chance, rng: random.Random
    ) -> SearchResult | None:
        """A decision too large to score made with a level's ``skill`` (``Level.large_skill``):
        by the game's own plan if it has one (the hidden information's choice without search),
        else at random with probability ``1 - skill``; None to search it as usual."""
        hidden = self._evaluator(state.game).hidden_information()
        move = None if hidden is None else hidden.choose_without_search(state, rng, skill)
        if move is None:
            if rng.random() < skill:
                return None
            move = chance.pick(state, state.legal_moves())
        elif hidden is not None:
            hidden.remember(state, move)
        self._plan = None
        token = state.move_to_str(move)
        return SearchResult(move, token, pv=(token,))

    def _search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn,
        on_info: InfoFn,
        *,
        quiescence: bool,
    ) -> SearchResult:
        """The search at full strength (what ``Level`` leaves of ``limits``, with quiescence
        or without)."""
        cap = int(self.values["Depth"] or 0)
        evaluator = self._evaluator(state.game)
        hidden = evaluator.hidden_information()
        if hidden is not None:
            sampling = Sampling(
                hidden,
                # every choice of chance alphabeta makes is hidden from the opponent
                rng=Chance(state, 0, int(self.values["SecretSeed"] or 0)).secret,
                samples=int(self.values["Samples"] or 8),
            )
            return determinized_search(
                state.copy(),
                evaluator=evaluator,
                sampling=sampling,
                memory=self._memory(),
                limits=_capped(limits, cap),
                stop=stop,
                on_info=on_info,
                options=SearchOptions(quiescence=quiescence),
            )
        plan, self._plan = self._plan, None
        analysing = limits.lines > 1 or limits.restricted
        if limits.from_pv and plan is not None and not analysing:
            planned = _from_plan(state, plan)
            if planned is not None:
                result, self._plan = planned
                note = "from the search of this turn's first decision"
                on_info(
                    SearchInfo(result.depth, score=result.score, nodes=0, pv=result.pv, string=note)
                )
                return result
        options = SearchOptions(
            quiescence=quiescence,
            aspiration=int(self.values["Aspiration"] or evaluator.aspiration),
            # an analysis's lines are scored as each move would be searched alone: a reduction
            # depends on the history the other moves left, so none is made
            reductions=bool(self.values["Reductions"]) and not analysing,
        )
        core = core_for(state.game.name)
        if core is not None:
            result = compiled_search(
                core,
                state.copy(),
                evaluator=evaluator,
                memory=self._compiled_memory(core),
                limits=_capped(limits, cap),
                stop=stop,
                on_info=on_info,
                options=options,
            )
        else:
            result = Searcher(
                state.copy(),
                evaluator=evaluator,
                memory=self._memory(),
                limits=_capped(limits, cap),
                stop=stop,
                on_info=on_info,
                options=options,
            ).run()
        self._plan = _plan_after(state, result.move, result.pv, result.score, result.depth)
        return result


def _plan_after(
    state: State, move: Move | None, pv: tuple[str, ...], score: Score | None, depth: int
) -> _TurnPlan | None:
    """What is left of the turn once ``move`` (``pv[0]``) is played in ``state``: None when
    the turn ends with it, or nothing of the variation is left."""
    if move is None or len(pv) < 2 or depth < 2:
        return None
    after = state.copy()
    after.push(move)
    if after.is_terminal() or after.to_move() != state.to_move():
        return None
    if score is not None and score.kind in ("win", "loss"):
        # a proven result counts plies from the position searched: one fewer from the next
        score = Score(score.kind, max(1, score.value - 1))
    return _TurnPlan(after.to_string(), pv[1:], score, depth - 1)


def _from_plan(state: State, plan: _TurnPlan) -> tuple[SearchResult, _TurnPlan | None] | None:
    """The answer ``plan`` gives in ``state`` and the plan after it, or None when ``state`` is
    not the position the plan expected or its move is not legal there."""
    if state.to_string() != plan.position:
        return None
    token = plan.pv[0]
    try:
        move = state.parse_move(token)
    except GameError:
        return None
    if move not in state.legal_moves():
        return None
    result = SearchResult(move, token, plan.score, depth=plan.depth, nodes=0, pv=plan.pv)
    return result, _plan_after(state, move, plan.pv, plan.score, plan.depth)


def _capped(limits: Limits, cap: int) -> Limits:
    """``limits`` with the depth capped at ``cap`` (0: no cap)."""
    if not cap or (limits.depth is not None and limits.depth <= cap):
        return limits
    return replace(limits, depth=cap)

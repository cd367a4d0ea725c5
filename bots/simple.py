"""The two reference bots: ``random`` and ``greedy``.

``random`` plays a uniformly random legal move from a seeded generator: the floor every other
bot must beat. ``greedy`` looks one ply ahead with the game's evaluation (a finished game
counts as won or lost outright) and breaks ties at random: the first real opponent. Where a
ply has more than ``GREEDY_LIMIT`` legal moves (Yin Yang's setup: 405^4 ways to write four
laws) greedy plays a random one, as ``random`` does.
"""

from __future__ import annotations

import random
from typing import ClassVar

from bots.engine import (
    Engine,
    InfoFn,
    Limits,
    Option,
    OptionError,
    Score,
    SearchResult,
    StopFn,
    ignore_info,
    never_stop,
)
from bots.eval import Evaluator, evaluated_games, evaluator_for
from bots.search import WIN, terminal_score, to_score
from games import Game, State

GREEDY_LIMIT = 100_000
"""Above this many legal moves greedy does not look at each one but plays a random move."""

SEED_OPTION = Option("Seed", "spin", 0, 0, 2**31 - 1)
"""The generator's seed; the same seed, game and moves give the same choices."""


class _Seeded(Engine):
    options: ClassVar[tuple[Option, ...]] = (SEED_OPTION,)

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random(0)
        self._seeded_with: object = None

    def set_option(self, name: str, text: str | None) -> None:
        super().set_option(name, text)
        self._seeded_with = None

    def new_game(self, game: Game) -> None:
        del game
        self._seeded_with = None

    def rng(self) -> random.Random:
        """The generator, reseeded after a new game or a new seed."""
        seed = self.values["Seed"]
        if self._seeded_with != seed:
            self._rng = random.Random(seed)
            self._seeded_with = seed
        return self._rng


class RandomBot(_Seeded):
    """A uniformly random legal move."""

    name: ClassVar[str] = "random"

    def search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        del limits, stop, on_info
        moves = state.legal_moves()
        if not len(moves):
            return SearchResult(None, None)
        move = moves[self.rng().randrange(len(moves))]
        token = state.move_to_str(move)
        return SearchResult(move, token, depth=0, nodes=1, pv=(token,))


class GreedyBot(_Seeded):
    """The legal move with the best evaluation one ply ahead."""

    name: ClassVar[str] = "greedy"

    def __init__(self) -> None:
        super().__init__()
        self._evaluators: dict[str, Evaluator] = {}

    def game_names(self) -> tuple[str, ...]:
        """The games that have an evaluation."""
        return evaluated_games()

    def search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        del limits, stop, on_info
        evaluator = self._evaluators.get(state.game.name)
        if evaluator is None:
            try:
                evaluator = self._evaluators[state.game.name] = evaluator_for(state.game.name)
            except KeyError:
                raise OptionError(f"greedy does not play {state.game.name}") from None
        moves = state.legal_moves()
        if not len(moves):
            return SearchResult(None, None)
        if len(moves) > GREEDY_LIMIT:
            move = moves[self.rng().randrange(len(moves))]
            token = state.move_to_str(move)
            return SearchResult(move, token, depth=0, nodes=1, pv=(token,))
        me = state.to_move()
        work = state.copy()
        best_value = -WIN - 1
        best: list[int] = []
        for move in moves:
            work.push(move)
            if work.is_terminal():
                value = terminal_score(work.outcome(), me, 1)
            elif work.to_move() == me:
                value = evaluator.evaluate(work)
            else:
                value = -evaluator.evaluate(work)
            work.pop()
            if value > best_value:
                best_value, best = value, [move]
            elif value == best_value:
                best.append(move)
        move = best[self.rng().randrange(len(best))] if len(best) > 1 else best[0]
        token = state.move_to_str(move)
        score: Score = to_score(best_value)
        return SearchResult(move, token, score, depth=1, nodes=len(moves), pv=(token,))

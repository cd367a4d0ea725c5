"""The reference bots: ``random``, ``greedy`` and ``noisy``.

``random`` plays a uniformly random legal move from seeded generators: the floor every other
bot must beat. ``greedy`` looks one ply ahead with the game's evaluation (a finished game
counts as won or lost outright) and breaks ties at random: the first real opponent. Where a
ply has more than ``GREEDY_LIMIT`` legal moves (Yin Yang's setup: 405^4 ways to write four
laws) greedy plays a random one, as ``random`` does. Their chance is split as
``bots.chance`` says: ``Seed`` repeats what the opponent sees, ``SecretSeed`` (0: the
operating system's randomness) what it is not shown.

``noisy`` is greedy with each move's value blurred by seeded Gaussian noise of standard
deviation ``Blur`` times the distance between its options ``Aim`` and ``Peak``: a bot whose
strength is greatest at a setting known in advance (``Aim`` = ``Peak``) and falls away
smoothly on either side, to check that a tuner (``enginesrv tune``) finds it.
"""

from __future__ import annotations

from typing import ClassVar

from bots.chance import SECRET_SEED_OPTION, SEED_OPTION, Chance
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
from bots.eval import Evaluated, Evaluator, evaluator_for
from bots.search import WIN, terminal_score, to_score
from games import State

GREEDY_LIMIT = 100_000
"""Above this many legal moves greedy does not look at each one but plays a random move."""


class _Seeded(Engine):
    options: ClassVar[tuple[Option, ...]] = (SEED_OPTION, SECRET_SEED_OPTION)

    def chance(self, state: State) -> Chance:
        """The generators for a search of ``state``."""
        seed, secret_seed = self.values["Seed"], self.values["SecretSeed"]
        return Chance(state, int(seed or 0), int(secret_seed or 0))


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
        move = self.chance(state).pick(state, moves)
        token = state.move_to_str(move)
        return SearchResult(move, token, depth=0, nodes=1, pv=(token,))


class GreedyBot(Evaluated, _Seeded):
    """The legal move with the best evaluation one ply ahead."""

    name: ClassVar[str] = "greedy"

    def __init__(self) -> None:
        super().__init__()
        self._evaluators: dict[str, Evaluator] = {}

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
            move = self.chance(state).pick(state, moves)
            token = state.move_to_str(move)
            return SearchResult(move, token, depth=0, nodes=1, pv=(token,))
        me = state.to_move()
        blur = self.blur()
        rng = self.chance(state).public
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
            if blur:
                value += round(rng.gauss(0.0, blur))
            work.pop()
            if value > best_value:
                best_value, best = value, [move]
            elif value == best_value:
                best.append(move)
        move = self.chance(state).pick(state, best)
        token = state.move_to_str(move)
        score: Score = to_score(best_value)
        return SearchResult(move, token, score, depth=1, nodes=len(moves), pv=(token,))

    def blur(self) -> float:
        """The standard deviation of the noise added to each move's value: none."""
        return 0.0


class NoisyBot(GreedyBot):
    """Greedy, its values blurred in proportion to how far ``Aim`` is from ``Peak`` (module
    docstring)."""

    name: ClassVar[str] = "noisy"
    options: ClassVar[tuple[Option, ...]] = (
        *GreedyBot.options,
        Option("Aim", "spin", 0, 0, 1000),
        Option("Peak", "spin", 500, 0, 1000),
        Option("Blur", "spin", 2, 0, 1000),
    )

    def blur(self) -> float:
        aim, peak, blur = self.values["Aim"], self.values["Peak"], self.values["Blur"]
        assert isinstance(aim, int)
        assert isinstance(peak, int)
        assert isinstance(blur, int)
        return float(abs(aim - peak) * blur)

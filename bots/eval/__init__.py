"""Evaluations per game, separate from the game-agnostic search.

Each game module ``bots.eval.<game>`` defines an ``Evaluator`` subclass; ``evaluator_for``
maps game names to them. An evaluation is called on non-terminal positions only and scores
them from the side to act (``state.to_move()``), in hundredths of the game's unit (a Yinsh
ring, a Yohoho point...), comfortably inside ``MAX_EVAL`` so that proven results always sort
above every evaluation.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Mapping, Sequence

from games import Move, State

MAX_EVAL = 100_000
"""No evaluation may reach this magnitude (proven wins and losses are scored above it)."""


class Evaluator:
    """The evaluation of one game, and its advice to the search.

    Subclasses implement ``evaluate`` and may override the hooks.

    Attributes:
        aspiration: the half-width of the search's root window around the previous
            iteration's value; games whose values swing from one ply to the next want more.
        expectation_scale: the evaluation at which the side to act is taken to score about
            73% (the logistic's unit): how a determinized search turns the values of several
            samples into expected scores it can average (``bots.determinize``).
    """

    aspiration: int = 50
    expectation_scale: float = 400.0

    @classmethod
    def tuned(cls, game: str, values: Mapping[str, int]) -> Evaluator:
        """An evaluator of ``game`` whose weights take the options ``values`` (by option name,
        ``bots.eval.tuning``; a weight no option names stays at its default). The default
        evaluator for a game without weight options."""
        del game, values
        return cls()

    def evaluate(self, state: State) -> int:
        """The value of a non-terminal position for the side to act."""
        raise NotImplementedError

    def noisy_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """The moves worth searching beyond the horizon (quiescence): the ones that change the
        evaluation sharply, such as captures or row completions. None by default."""
        del state, moves
        return []

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """``moves`` in a good order for the search (most promising first). As given by
        default; the search still puts its transposition, killer and history moves first."""
        del state
        return list(moves)

    def prepare(self) -> None:
        """Build any tables now rather than in the first search (a worker process calls this
        when it starts, so that no move's clock pays for it). Nothing by default."""

    def search_moves(self, state: State) -> Sequence[Move]:
        """The moves the search tries in ``state``: every legal move by default. A game whose
        legal moves include large families of near-twins (Yin Yang's 1,620 rewrites of each
        adaptation) returns a useful subset instead; every move returned must be legal."""
        return state.legal_moves()

    def over_samples(
        self, lead: State, others: Sequence[State], weights: Sequence[int]
    ) -> Evaluator:
        """The evaluation to search ``lead``, one completion of a view, with: by default this
        one. A game of hidden information may return one that counts what is hidden at the
        root as the mean over all the completions ``lead`` and ``others`` (each with its
        weight) instead of as ``lead`` has it (``bots.determinize``)."""
        del lead, others, weights
        return self

    def hidden_information(self) -> HiddenInformation | None:
        """How to play this game when a position hides part of itself (a player's view), or
        None for a game of perfect information (the default)."""
        return None

    def is_quiet(self, state: State) -> bool:
        """Whether standing on the static evaluation is sound here. A position in the middle of
        a forced sequence (a row that must be removed) is not quiet: quiescence then searches
        all its moves. Quiet by default."""
        del state
        return True


class HiddenInformation:
    """What a search needs to play a game of hidden information by determinization: a
    player's view is completed into full positions (samples) consistent with what that player
    has seen, each sample is searched as a game of perfect information, and the values of each
    move are added up over the samples (``bots.determinize``).

    An instance belongs to one engine and one game at a time: ``new_game`` clears what it
    remembers of the game so far.
    """

    def new_game(self) -> None:
        """Forget the positions seen in the previous game."""

    def is_hidden(self, state: State) -> bool:
        """Whether ``state`` hides something from its holder (else it is searched as it is)."""
        raise NotImplementedError

    def choose_without_search(
        self, state: State, rng: random.Random, skill: float = 1.0
    ) -> Move | None:
        """A move for a ply the search cannot enumerate (Yin Yang's setup, 405^4 choices), or
        None to search as usual. ``skill`` (0 to 1) is the share of the choice made as the bot
        makes it, the rest at random (a level's, ``bots.levels.Level.large_skill``)."""
        del state, rng, skill
        return None

    def samples(self, state: State, rng: random.Random, count: int) -> list[State]:
        """Up to ``count`` full positions consistent with the view ``state`` and with the views
        remembered from this game; their legal moves for the holder equal the view's."""
        raise NotImplementedError

    def remember(self, state: State, move: Move) -> None:
        """Note that the holder of the view ``state`` played ``move`` there."""
        del state, move


# game name -> (module, class)
_EVALUATORS: dict[str, tuple[str, str]] = {}


def register(names: Sequence[str], module: str, cls: str) -> None:
    """Declare the evaluator of some games (used by this package's table below)."""
    for name in names:
        _EVALUATORS[name] = (module, cls)


def has_evaluator(game: str) -> bool:
    """Whether an evaluation exists for ``game``."""
    return game in _EVALUATORS


def evaluated_games() -> tuple[str, ...]:
    """The games that have an evaluation, sorted."""
    return tuple(sorted(_EVALUATORS))


def evaluator_for(game: str, values: Mapping[str, int] | None = None) -> Evaluator:
    """A fresh evaluator for ``game``, with the weights of the options ``values`` (by option
    name, ``bots.eval.tuning``) or, by default, its own.

    Raises:
        KeyError: no evaluation exists for ``game``.
    """
    module, cls = _EVALUATORS[game]
    factory: type[Evaluator] = getattr(importlib.import_module(module), cls)
    return factory() if values is None else factory.tuned(game, values)


class Evaluated:
    """The games a bot that plays by these evaluations plays, and what its scores mean: a
    mixin before ``bots.engine.Engine`` in a bot's bases."""

    @classmethod
    def expectation_scale(cls, game: str) -> float | None:
        """The scale of the game's evaluation (``Evaluator.expectation_scale``)."""
        return evaluator_for(game).expectation_scale if game in evaluated_games() else None

    def game_names(self) -> tuple[str, ...]:
        """The games that have an evaluation."""
        return evaluated_games()


register(("yinsh", "yinsh+blitz"), "bots.eval.yinsh", "YinshEvaluator")
register(("yohoho",), "bots.eval.yohoho", "YohohoEvaluator")
register(("yoxii",), "bots.eval.yoxii", "YoxiiEvaluator")
register(("yinyang",), "bots.eval.yinyang", "YinYangEvaluator")

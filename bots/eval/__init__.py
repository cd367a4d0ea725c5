"""Evaluations per game, separate from the game-agnostic search.

Each game module ``bots.eval.<game>`` defines an ``Evaluator`` subclass; ``evaluator_for``
maps game names to them. An evaluation is called on non-terminal positions only and scores
them from the side to act (``state.to_move()``), in hundredths of the game's unit (a Yinsh
ring, a Yohoho point...), comfortably inside ``MAX_EVAL`` so that proven results always sort
above every evaluation.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from games import Move, State

MAX_EVAL = 100_000
"""No evaluation may reach this magnitude (proven wins and losses are scored above it)."""


class Evaluator:
    """The evaluation of one game, and its advice to the search.

    Subclasses implement ``evaluate`` and may override the two hooks.
    """

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

    def is_quiet(self, state: State) -> bool:
        """Whether standing on the static evaluation is sound here. A position in the middle of
        a forced sequence (a row that must be removed) is not quiet: quiescence then searches
        all its moves. Quiet by default."""
        del state
        return True


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


def evaluator_for(game: str) -> Evaluator:
    """A fresh evaluator for ``game``.

    Raises:
        KeyError: no evaluation exists for ``game``.
    """
    module, cls = _EVALUATORS[game]
    factory: type[Evaluator] = getattr(importlib.import_module(module), cls)
    return factory()


register(("yinsh", "yinsh+blitz"), "bots.eval.yinsh", "YinshEvaluator")
register(("yohoho",), "bots.eval.yohoho", "YohohoEvaluator")
register(("yoxii",), "bots.eval.yoxii", "YoxiiEvaluator")

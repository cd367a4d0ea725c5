"""What a compiled core's ``inspect`` must report for a position, from the reference: the rules
(``State``) and the evaluation (``Evaluator``) as ``bots.search`` calls them."""

from __future__ import annotations

from typing import Any

from bots.eval import Evaluator
from bots.search import LazyMoves
from games import State

Row = tuple[Any, ...]
"""A row of mixed fields (tests index it): key, to_move (-1 once over), terminal, winner (seat,
-1 for a draw, None while not over), legal, search, ordered, value, quiet, noisy (the last three
None once over)."""


def reference_row(state: State, evaluator: Evaluator) -> Row:
    """The row of ``state`` by the reference."""
    legal = tuple(state.legal_moves())
    outcome = state.outcome()
    if outcome is not None:
        winner = -1 if outcome.winner_seat is None else outcome.winner_seat
        return (state.key(), -1, True, winner, legal, (), (), None, None, None)
    searched = list(evaluator.search_moves(state))
    return (
        state.key(),
        state.to_move(),
        False,
        None,
        legal,
        tuple(searched),
        tuple(evaluator.order_moves(state, searched)),
        evaluator.evaluate(state),
        evaluator.is_quiet(state),
        tuple(evaluator.noisy_moves(state, LazyMoves(state))),
    )

"""How a move played is judged against the best line (``enginesrv analyse``).

Each position a player acted in is searched; its score is the value of the best line for the
side that acted. The move played is worth what the next position is worth to the same side
(the next position's score, negated when the other side acts there; for the last move of a
finished game, its outcome). Both are turned into expected scores (``expected``: a win 1, a
loss 0, an evaluation ``v`` the logistic ``1 / (1 + exp(-v / scale))`` with the game's
``Evaluator.expectation_scale``), and the move's **loss** is the drop, never below 0, in
percentage points. A loss of at least 10 points marks the move ``?!`` (an inaccuracy), 20 ``?``
(a mistake), 30 ``??`` (a blunder), as lichess marks moves by the drop of the winning chance.

A player's **accuracy** follows lichess's: each move's is ``103.1668 * exp(-0.04354 * loss) -
3.1669`` (its loss in points), kept within 0 to 100, and the player's is the mean over its
moves; 100 for moves that lose nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from bots.engine import Score

MARKS: tuple[tuple[float, str], ...] = ((30.0, "??"), (20.0, "?"), (10.0, "?!"))
"""The mark of a move by its loss in expected-score points, the largest threshold first."""


def expected(score: Score, scale: float) -> float:
    """The expected score (0 to 1) of the side a ``score`` is from."""
    if score.kind == "win":
        return 1.0
    if score.kind == "loss":
        return 0.0
    return 1.0 / (1.0 + math.exp(-score.value / scale))


def mark(loss: float) -> str | None:
    """``??``, ``?`` or ``?!`` for a move that loses ``loss`` points or more; else None."""
    return next((sign for threshold, sign in MARKS if loss >= threshold), None)


def accuracy(loss: float) -> float:
    """A move's accuracy (0 to 100) from its loss in expected-score points."""
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * loss) - 3.1669))


@dataclass(frozen=True, slots=True)
class Verdict:
    """A move played, judged: its loss in expected-score points and its mark."""

    loss: float
    mark: str | None


def verdict(before: float, after: float) -> Verdict:
    """The verdict of a move from the mover's expected score before it (the best line's) and
    after it (what the move played left)."""
    loss = max(0.0, (before - after) * 100.0)
    return Verdict(loss, mark(loss))


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    """One player's moves judged: how many, the mean loss, the accuracy, and the count of
    each mark."""

    player: str
    moves: int
    mean_loss: float
    accuracy: float
    marks: dict[str, int]

    def to_json(self) -> dict[str, object]:
        return {
            "player": self.player,
            "moves": self.moves,
            "mean_loss": round(self.mean_loss, 2),
            "accuracy": round(self.accuracy, 1),
            "marks": dict(self.marks),
        }


def summarise(player: str, verdicts: Sequence[Verdict]) -> PlayerSummary:
    """The summary of ``player``'s judged moves."""
    counts = {sign: 0 for _, sign in MARKS}
    for each in verdicts:
        if each.mark is not None:
            counts[each.mark] += 1
    if not verdicts:
        return PlayerSummary(player, 0, 0.0, 100.0, counts)
    losses = [v.loss for v in verdicts]
    mean = sum(losses) / len(losses)
    return PlayerSummary(
        player, len(losses), mean, sum(accuracy(x) for x in losses) / len(losses), counts
    )

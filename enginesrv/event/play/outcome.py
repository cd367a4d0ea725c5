"""How a refereed game ended (``Outcome``): who won, and why (``Termination``), from the
arbiter to the store, the feed, the reports and the web (python-chess's ``chess.Outcome`` is
the model).

``games.Outcome`` is the rules' own word on a finished position (a winner and a reason named
in the game's rule file, with the game's scores). A refereed game may end before the rules
say anything (a forfeit, an adjudication), so the referee's ``Outcome`` does not extend it: it
holds a ``Termination`` (the rules, or one of the arbiter's reasons of design §6), the winning
seat (None: a draw), and, when the rules ended the game, the rules' reason. Its text forms
(``result``: ``p1``, ``p2``, ``draw``; ``reason``) are the ones records and stores keep.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import games
from games.base import Winner


class Termination(enum.StrEnum):
    """Why a refereed game ended: by its rules, or for one of the arbiter's reasons."""

    RULES = "rules"
    """The position is over by the game's rules (``Outcome.rules_reason`` says how)."""
    TIME_FORFEIT = "time-forfeit"
    ILLEGAL_MOVE = "illegal-move"
    CRASH = "crash"
    STALL = "stall"
    DISCONNECT = "disconnect"
    MAX_PLIES = "max-plies"
    REPETITION = "repetition"
    RESIGN = "resign"
    SCORE_ADJUDICATION = "score-adjudication"
    AGREEMENT = "agreement"
    """A draw both players agreed to (a game between two people)."""

    @property
    def is_forfeit(self) -> bool:
        """Whether the loser misbehaved (on time, an illegal move, a crash, a stall or a
        lost connection)."""
        return self in _FORFEITS


_FORFEITS = frozenset(
    {
        Termination.TIME_FORFEIT,
        Termination.ILLEGAL_MOVE,
        Termination.CRASH,
        Termination.STALL,
        Termination.DISCONNECT,
    }
)


def other(seat: int) -> int:
    """The opponent of ``seat`` (0 is p1, 1 is p2)."""
    return 1 - seat


def seat_name(seat: int) -> Winner:
    """``p1`` or ``p2``, as records and the protocol name a seat."""
    return "p1" if seat == 0 else "p2"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a refereed game ended (module docstring)."""

    termination: Termination
    winner: int | None
    """The winning seat (0: p1, 1: p2); None for a draw."""
    rules_reason: str = ""
    """With ``Termination.RULES``: the reason the game's rule file names (``goal-row``)."""

    @classmethod
    def by_rules(cls, outcome: games.Outcome) -> Outcome:
        """The end the rules of the game gave."""
        return cls(Termination.RULES, outcome.winner_seat, outcome.reason)

    @classmethod
    def loss(cls, seat: int, termination: Termination) -> Outcome:
        """``seat`` lost, for ``termination`` (a forfeit, a resignation)."""
        return cls(termination, other(seat))

    @classmethod
    def draw(cls, termination: Termination) -> Outcome:
        return cls(termination, None)

    @classmethod
    def parse(cls, result: str, reason: str) -> Outcome:
        """The outcome whose text forms are ``result`` and ``reason`` (as records, stores and
        the protocol keep them).

        Raises:
            ValueError: a ``result`` other than ``p1``, ``p2`` or ``draw``.
        """
        seats = {"p1": 0, "p2": 1, "draw": None}
        if result not in seats:
            raise ValueError(f"result {result!r}: not p1, p2 or draw")
        try:
            termination = Termination(reason)
        except ValueError:
            return cls(Termination.RULES, seats[result], reason)
        if termination is Termination.RULES:
            return cls(Termination.RULES, seats[result], reason)
        return cls(termination, seats[result])

    @property
    def result(self) -> Winner:
        """``p1``, ``p2`` or ``draw``."""
        return "draw" if self.winner is None else seat_name(self.winner)

    @property
    def reason(self) -> str:
        """The rules' reason, or the arbiter's (``Termination``'s value)."""
        if self.termination is Termination.RULES:
            return self.rules_reason
        return self.termination.value

    def points(self, seat: int) -> float:
        """What the game gives ``seat``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == seat else 0.0

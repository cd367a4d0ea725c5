"""Who plays whom on a ladder, and with which colours (``pair``): a pure function of who is
waiting and what was played, so that its rules can be tested one by one.

* The longest waiting player is paired first, with the waiting opponent it has met least
  (every game of the ladder counted), the longer waiting of equals first: opponents rotate.
* A player never meets itself (two links of one account), and two house bots never meet
  (they are there to rate the players, and a pair of them would hold the ladder's cores).
* The game, when the two share several: the one the two have played least, then the
  ladder's order.
* Colours: each player's balance is its games as p1 less its games as p2 (over every game of
  the ladder); the lower balance is p1, and between equals colours alternate with the games
  the two have played together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Waiting:
    """A link waiting for a game: its player, the games it plays, whether it is a house bot.
    ``key`` tells links apart."""

    key: int
    name: str
    games: frozenset[str]
    house: bool = False


@dataclass
class History:
    """What the ladder has played, as pairing counts it."""

    met: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Games between two players (their names in order)."""
    first: Counter[str] = field(default_factory=Counter)
    """Games as p1 less games as p2, per player."""
    played: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Games per (game, player)."""

    def note(self, game: str, p1: str, p2: str) -> None:
        """A game paired (counted from the moment it is: games run at once rotate too)."""
        self.met[_key(p1, p2)] += 1
        self.first[p1] += 1
        self.first[p2] -= 1
        self.played[(game, p1)] += 1
        self.played[(game, p2)] += 1

    @classmethod
    def of(cls, games: Iterable[tuple[str, str, str]]) -> History:
        """The history of stored games, each (game, p1, p2)."""
        history = cls()
        for game, p1, p2 in games:
            history.note(game, p1, p2)
        return history


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class Pairing:
    """A game to start: which game, p1 and p2."""

    game: str
    p1: Waiting
    p2: Waiting


def pair(waiting: Sequence[Waiting], history: History, order: Sequence[str]) -> list[Pairing]:
    """The games to start now (module docstring); ``waiting`` is the longest waiting first,
    ``order`` the ladder's games. Each pairing is noted in ``history``."""
    free = list(waiting)
    out: list[Pairing] = []
    while free:
        a = free.pop(0)
        best: tuple[int, int] | None = None
        chosen = -1
        for index, b in enumerate(free):
            if b.name == a.name or (a.house and b.house) or not a.games & b.games:
                continue
            rank = (history.met[_key(a.name, b.name)], index)
            if best is None or rank < best:
                best, chosen = rank, index
        if chosen < 0:
            continue
        b = free.pop(chosen)
        game = _game(a, b, history, order)
        p1, p2 = _colours(a, b, history)
        history.note(game, p1.name, p2.name)
        out.append(Pairing(game, p1, p2))
    return out


def _game(a: Waiting, b: Waiting, history: History, order: Sequence[str]) -> str:
    shared = [game for game in order if game in a.games and game in b.games]
    return min(
        shared,
        key=lambda game: (
            history.played[(game, a.name)] + history.played[(game, b.name)],
            shared.index(game),
        ),
    )


def _colours(a: Waiting, b: Waiting, history: History) -> tuple[Waiting, Waiting]:
    fa, fb = history.first[a.name], history.first[b.name]
    if fa != fb:
        return (a, b) if fa < fb else (b, a)
    low, high = (a, b) if a.name <= b.name else (b, a)
    together = history.met[_key(a.name, b.name)]
    return (low, high) if together % 2 == 0 else (high, low)

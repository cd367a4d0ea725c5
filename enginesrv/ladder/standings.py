"""A ladder's standings in one game: every pair of players' games (``PairingResult``, as an
event's), fitted into ratings with intervals exactly as ``enginesrv results`` fits an event
(``report.pairing_ratings``), and the leaderboard made of them.

The scale: the ratings are anchored at the ladder's first house bot (0), when it has one, so
that they stay comparable over months of players coming and going; without house bots, the
rated players average 0. A player's rating is shown once it has played ``min_games`` games;
before that it is listed as provisional, its games counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from enginesrv.event.results.ratings import RatingError, RatingTable
from enginesrv.event.results.report import pairing_ratings, player_names
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.standings import PairingResult

FORM = 10
"""The recent games a leaderboard line shows (``WDL`` letters, newest last)."""


@dataclass(frozen=True, slots=True)
class Line:
    """One player's line of the leaderboard: ``elo`` and ``error`` (the interval's half
    width) are None while it is provisional or has no finite rating (``note`` says why)."""

    player: str
    elo: float | None
    error: float | None
    games: int
    score: float
    form: str
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "player": self.player,
            "elo": self.elo,
            "error": self.error,
            "games": self.games,
            "score": self.score,
            "form": self.form,
            "note": self.note or None,
        }


class Board:
    """The standings of one game of the ladder, updated game by game (``add``)."""

    def __init__(self, anchor: str | None, min_games: int) -> None:
        self.anchor = anchor
        self.min_games = min_games
        self.pairings: dict[tuple[str, str], PairingResult] = {}
        self.form: dict[str, deque[str]] = {}
        self.games = 0

    def add(self, row: GameRow) -> None:
        key = (row.first, row.second)
        pairing = self.pairings.get(key)
        if pairing is None:
            pairing = self.pairings[key] = PairingResult(row.first, row.second)
        pairing.add(row)
        self.games += 1
        for name, points in ((row.first, row.first_points), (row.second, 1 - row.first_points)):
            letter = "W" if points == 1 else "L" if points == 0 else "D"
            self.form.setdefault(name, deque(maxlen=FORM)).append(letter)

    def add_all(self, rows: Iterable[GameRow]) -> Board:
        for row in rows:
            self.add(row)
        return self

    @property
    def standings(self) -> list[PairingResult]:
        """The pairings in the order their first games were stored."""
        return list(self.pairings.values())

    def ratings(self) -> RatingTable:
        """The fit of every game so far (``report.pairing_ratings``), anchored at the house
        bot when it has a finite rating."""
        standings = self.standings
        names = player_names(standings)
        anchor = self.anchor if self.anchor in names else None
        try:
            return pairing_ratings(standings, names, anchor=anchor)
        except RatingError:  # the anchor has no finite rating yet
            return pairing_ratings(standings, names)

    def leaderboard(self) -> list[Line]:
        """Every player: the rated ones by rating, then the provisional ones by games."""
        table = self.ratings()
        rated, provisional = [], []
        for rating in table.ratings:
            form = "".join(self.form.get(rating.player, ()))
            if rating.games < self.min_games:
                note = f"provisional: {rating.games} of {self.min_games} games"
                provisional.append(
                    Line(rating.player, None, None, rating.games, rating.score, form, note)
                )
            else:
                rated.append(
                    Line(
                        rating.player,
                        rating.elo,
                        rating.error,
                        rating.games,
                        rating.score,
                        form,
                        rating.note,
                    )
                )
        provisional.sort(key=lambda line: -line.games)
        return rated + provisional


def board_json(board: Board) -> dict[str, object]:
    """One game's standings as ``results --json`` and ``DIR/leaderboard.json`` give them."""
    table = board.ratings()
    return {
        "games": board.games,
        "anchor": table.anchor,
        "pairings": [pairing.to_json() for pairing in board.standings],
        "ratings": [rating.to_json() for rating in table.ratings],
        "leaderboard": [line.to_json() for line in board.leaderboard()],
    }


def ladder_json(games: dict[str, Board], tc: str) -> dict[str, object]:
    """A ladder's standings, game by game."""
    return {
        "ladder": {"games": list(games), "tc": tc},
        "results": {game: board_json(board) for game, board in games.items()},
    }

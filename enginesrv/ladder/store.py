"""Where a ladder keeps its games: for each game it plays, a folder (``DIR/GAME/``) of seasons,
each an event's store as ``enginesrv.event.results.store`` makes it (``season-N/results.sqlite``
and ``season-N/games/game-NNNNN.txt``) of at most ``MAX_SCHEDULE`` games, the cap every store
is read under; a full season is followed by the next. A game is stored as an event stores it
(its record, then its row in one transaction), the moment it ends, so a ladder killed at any
point loses only the games being played. Game numbers run on across seasons.

A ladder's row: ``first`` and ``second`` are the two players in the order of their names
(``standings`` pairs rows by them), ``p1`` and ``p2`` the seats, ``round`` the season,
``pair`` the game's own number (no two games of a ladder make a pair of swapped colours) and
``pairing`` and ``opening`` 0.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from enginesrv.event.config import MAX_SCHEDULE, EventError
from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.play.records import format_record
from enginesrv.event.results.files import RECORDS_DIR, record_name
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB, open_stored, store_game
from enginesrv.ladder.settings import LadderError, LadderSettings

SEASON = re.compile(r"season-([1-9][0-9]{0,5})")
"""A season's folder name."""
SEASON_GAMES = MAX_SCHEDULE
MAX_GAME_ID = 1 << 48
"""The largest game number a ladder stores (thousands of years of games a second); a store
holding a larger one is damaged."""
"""The games of one season: the most a store holds."""


def season_dirs(section: Path) -> list[tuple[int, Path]]:
    """The seasons of one game's folder, in order (none when it does not exist)."""
    try:
        entries = list(section.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise LadderError(f"{section}: {exc.strerror or exc}") from None
    found = []
    for entry in entries:
        match = SEASON.fullmatch(entry.name)
        if match is None:
            continue
        for place in (entry, entry / RECORDS_DIR):
            if place.is_symlink():  # its games would be read, and written, elsewhere
                raise LadderError(f"{place} is a symbolic link: the ladder's store is damaged")
        if entry.is_dir():
            found.append((int(match.group(1)), entry))
    return sorted(found)


def stored_seasons(section: Path) -> list[tuple[int, Path]]:
    """The seasons of one game's folder that hold a store. The last season may have none:
    a ladder killed as it made it (it had stored no game there); an earlier one is damaged.

    Raises:
        LadderError: a season before the last without its store.
    """
    seasons = season_dirs(section)
    for _, folder in seasons[:-1]:
        if not (folder / "results.sqlite").exists():
            raise LadderError(f"{folder} has no results.sqlite: the ladder's store is damaged")
    if seasons and not (seasons[-1][1] / "results.sqlite").exists():
        seasons.pop()
    return seasons


def read_rows(section: Path) -> Iterator[GameRow]:
    """Every game stored in one game's folder, season by season (read-only).

    Raises:
        LadderError: a damaged store (named; it is kept as it is).
    """
    for _, folder in stored_seasons(section):
        try:
            db = open_stored(folder, "a season of the ladder with no store")
        except EventError as exc:
            raise LadderError(str(exc)) from None
        try:
            rows = db.rows()
        except EventError as exc:
            raise LadderError(str(exc)) from None
        finally:
            db.close()
        yield from rows


@dataclass
class Seats:
    """Who played a game, by name: p1 and p2."""

    p1: str
    p2: str


class Section:
    """The games of one game of the ladder (module docstring): ``open`` it, then ``keep``
    each finished game, one at a time (from a thread: each write waits on the disk)."""

    def __init__(self, folder: Path, game: str, settings: LadderSettings) -> None:
        self.folder = folder / game
        self.game = game
        self.settings = settings
        self.rows: list[GameRow] = []
        """The games stored in the seasons before this run, then each one kept."""
        self._db: ResultsDB | None = None
        self._season = 0
        self._in_season = 0
        self._next_id = 1

    def open(self) -> list[GameRow]:
        """Read the seasons (the last one opened for writing); the games stored so far.

        Raises:
            LadderError: a damaged store, or one that cannot be made.
        """
        seasons = stored_seasons(self.folder)
        self.rows = list(read_rows(self.folder))
        self._next_id = max((row.id for row in self.rows), default=0) + 1
        if self._next_id > MAX_GAME_ID:
            raise LadderError(
                f"{self.folder}: a stored game's number is past any a ladder makes: the "
                "ladder's store is damaged"
            )
        if seasons:
            self._season, last = seasons[-1]
            self._in_season = sum(1 for row in self.rows if row.round == self._season)
            try:
                self._db = ResultsDB(last / "results.sqlite")
            except EventError as exc:
                raise LadderError(str(exc)) from None
            self._db.write_ahead()
        return list(self.rows)

    def _new_season(self) -> ResultsDB:
        if self._db is not None:
            self._db.close()
        self._season += 1
        folder = self.folder / f"season-{self._season}"
        meta = {"ladder": json.dumps({"game": self.game, "tc": self.settings.tc})}
        try:
            (folder / "games").mkdir(parents=True, exist_ok=True)
            db = ResultsDB.create(folder / "results.sqlite", None, meta)
        except (OSError, EventError) as exc:
            raise LadderError(f"{folder}: cannot make the season's store: {exc}") from None
        db.write_ahead()
        self._db, self._in_season = db, 0
        return db

    def keep(self, seats: Seats, result: GameResult, seeds: tuple[int, int]) -> GameRow:
        """Store a finished game (its record, then its row with a hidden-information game's
        secret seeds); its row. In a thread, one at a time.

        Raises:
            LadderError: it could not be written.
        """
        db = self._db
        if db is None or self._in_season >= SEASON_GAMES:
            db = self._new_season()
        game_id = self._next_id
        first, second = sorted((seats.p1, seats.p2))
        outcome = result.outcome
        row = GameRow(
            id=game_id,
            round=self._season,
            pairing=0,
            first=first,
            second=second,
            p1=seats.p1,
            p2=seats.p2,
            pair=game_id,
            opening=0,
            winner=outcome.result,
            reason=outcome.reason,
            first_points=outcome.points(0 if seats.p1 == first else 1),
            plies=result.plies,
            wall=result.wall,
            engine_time=result.engine_time,
            record=record_name(game_id),
        )
        meta = [] if seeds == (0, 0) else [(f"seeds:{game_id}", json.dumps(list(seeds)))]
        try:
            store_game(
                db,
                row,
                out_dir=self.folder / f"season-{self._season}",
                record_name=row.record,
                record_text=format_record(result.record),
                meta=meta,
            )
        except (OSError, EventError) as exc:
            raise LadderError(f"{self.folder}: cannot store game {game_id}: {exc}") from None
        self._next_id += 1
        self._in_season += 1
        self.rows.append(row)
        return row

    def row(self, game_id: int) -> GameRow | None:
        """The stored game ``game_id``, if there is one."""
        at = bisect.bisect_left(self.rows, game_id, key=lambda row: row.id)
        return self.rows[at] if at < len(self.rows) and self.rows[at].id == game_id else None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

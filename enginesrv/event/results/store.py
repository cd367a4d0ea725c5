"""The results of an event (``--out DIR``): ``DIR/results.sqlite`` holds the configuration and
one row per finished game, ``DIR/games/game-NNNNN.txt`` the game records. A game is written
(record file first, then its row, in one transaction) only once it has ended, so an event
killed at any point, ``kill -9`` included, loses at most the games that were being played.
A damaged store is an ``EventError`` naming the file, and nothing deletes or rewrites a
results file it could not read."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, get_type_hints

from enginesrv.event.config import MAX_SCHEDULE, EventConfig, EventError
from enginesrv.event.results.files import MAX_STORED_VALUE, check_store_file
from enginesrv.event.results.rows import GAME_COLUMNS, GameRow, row_problem, shared, short
from enginesrv.event.results.stored_config import StoredConfigError, read_config
from enginesrv.event.results.wording import quoted
from enginesrv.safefiles import FileRefusedError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    pairing INTEGER NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    p1 TEXT NOT NULL,
    p2 TEXT NOT NULL,
    pair INTEGER NOT NULL,
    opening INTEGER NOT NULL,
    winner TEXT NOT NULL,
    reason TEXT NOT NULL,
    first_points REAL NOT NULL,
    plies INTEGER NOT NULL,
    wall REAL NOT NULL,
    engine_time REAL NOT NULL,
    record TEXT
);
"""


_SCHEMA_OBJECTS = frozenset(
    {
        ("table", "meta", "meta"),
        ("table", "games", "games"),
        ("index", "sqlite_autoindex_meta_1", "meta"),
    }
)
"""What ``sqlite_master`` of a store holds (``_SCHEMA``): its two tables and the index of
``meta``'s primary key; anything else (a trigger, a view, another index) is refused."""


class ResultsDB:
    """The SQLite store of one event (``:memory:`` when there is no ``--out``).

    ``ResultsDB(path)`` opens a store that exists and checks it, writing nothing: its pages,
    its tables and columns, and then each value read (``config``, ``rows``). Whatever is wrong
    (not SQLite, damaged pages, a table or column missing or not a plain one, a value longer
    than ``MAX_STORED_VALUE``, a configuration or a game row that does not parse or is out of
    range) is an ``EventError`` naming the file, which is kept as it is. With ``read_only``
    SQLite opens it read-only. A new store is made by ``ResultsDB.create``.
    """

    def __init__(self, path: Path | None, *, read_only: bool = False) -> None:
        self.path = path
        self._write_ahead = False
        try:
            if path is None:
                self.db = sqlite3.connect(":memory:", check_same_thread=False)
                self.db.executescript(_SCHEMA)
                return
            # mode=rw: never create the file (a missing store is not an empty one)
            # used by one thread at a time: the event loop's, or the one a game is stored from
            mode = "ro" if read_only else "rw"
            self.db = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode={mode}", uri=True, check_same_thread=False
            )
            # a crafted value of a gigabyte is refused by SQLite, not read into memory
            self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_STORED_VALUE)
            # no function of the schema (a view's, an index's) may have a side effect
            self.db.execute("PRAGMA trusted_schema = OFF")
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            self._check()
        except EventError:
            self.db.close()
            raise

    @classmethod
    def create(
        cls, path: Path | None, config: EventConfig | None, meta: Mapping[str, str] | None = None
    ) -> ResultsDB:
        """A new store holding ``config`` (None: none, for a ladder's season, which keeps its
        own settings in ``meta``), the entries ``meta`` (what a tuning run keeps beside the
        event) and no game. The file appears whole or not at all (it is made under
        a temporary name, then linked into place), and one that exists is never replaced.

        Raises:
            EventError: the file cannot be made, or ``path`` exists.
        """
        entries = dict(meta or {})
        if config is not None:
            entries["config"] = config.to_json()  # no entry of meta replaces it
        if path is None:
            store = cls(None)
            for key, value in entries.items():
                store.put(key, value)
            return store
        tmp = path.with_name(path.name + ".new")
        try:
            # what a run killed while making the store left: it never held a game
            for stale in (tmp, tmp.with_name(tmp.name + "-journal")):
                stale.unlink(missing_ok=True)
            db = sqlite3.connect(tmp)
            try:
                db.executescript(_SCHEMA)
                with db:
                    db.executemany("INSERT INTO meta VALUES (?, ?)", entries.items())
            finally:
                db.close()
            try:
                os.link(tmp, path)  # fails, rather than replace, if path exists
            except FileExistsError:
                raise EventError(
                    f"{path} already exists; it is kept as it is: add --resume to finish its "
                    "event, or choose another --out"
                ) from None
            except OSError:
                # a file system without hard links: rename, which would replace, if still free
                if path.exists():
                    raise
                os.rename(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
        except sqlite3.Error as exc:
            raise EventError(f"{path}: cannot create the results database: {exc}") from None
        except OSError as exc:
            raise EventError(
                f"{path}: cannot create the results database: {exc.strerror or exc}"
            ) from None
        return cls(path)

    def write_ahead(self) -> None:
        """Log this run's writes ahead (SQLite's WAL) from the first game it stores until
        ``close``: a game's commit then syncs one file once (a rollback journal syncs itself
        and the database, and makes and removes a file each time), and readers (``enginesrv
        results`` while the event runs) never wait on a commit. Measured on a cluster event
        on two cores: 2.2 ms from a result's arrival to its row, against 3.5. A run that
        stores no game leaves the file as it was; a file system that cannot (a network one)
        keeps the rollback journal."""
        self._write_ahead = self.path is not None

    def _start_write_ahead(self) -> None:
        self._write_ahead = False
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA journal_mode=WAL")

    def close(self) -> None:
        """Close the store, as one file again: a store left in WAL mode would need its
        ``-wal`` and ``-shm`` files beside it and a folder it may write to, to be read (when
        another process reads it now, the WAL mode stays until the next run closes it)."""
        if self.path is not None:
            with contextlib.suppress(sqlite3.Error):
                mode = self.db.execute("PRAGMA journal_mode").fetchone()
                if mode is not None and str(mode[0]).lower() == "wal":
                    self.db.execute("PRAGMA journal_mode=DELETE")
        self.db.close()

    def _damaged(self, what: str) -> EventError:
        return EventError(
            f"{self.path}: the results database is damaged ({what}); it is kept as it is"
        )

    def _error(self, exc: sqlite3.Error) -> EventError:
        """A SQLite error as an ``EventError`` naming the file."""
        text = short(str(exc), 200)
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_TOOBIG":
            return self._damaged(f"a value longer than {MAX_STORED_VALUE:,} bytes")
        if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or text.startswith(
            ("no such table", "no such column")
        ):
            return self._damaged(text)
        if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            return EventError(f"{self.path}: the results database is busy ({text}); try again")
        return EventError(f"{self.path}: the results database failed ({text})")

    @contextlib.contextmanager
    def _sqlite(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _check(self) -> None:
        """Check the schema, the pages, the tables and their columns (a damaged store raises).
        The schema must hold the two tables and their automatic index only: a trigger would run
        what the file says on every write (``--resume`` writes; a trigger that never ends, or
        one that rewrites the results), and a view, an index on an expression, a virtual table
        or a computed column on a read (a recursive view never ends)."""
        with self._sqlite():
            for kind, name, table in self.db.execute(
                "SELECT type, name, tbl_name FROM sqlite_master"
            ).fetchall():
                if (str(kind), str(name), str(table)) not in _SCHEMA_OBJECTS:
                    raise self._damaged(
                        f"its schema holds {short(str(kind))} {quoted(str(name), 40)}, which an "
                        "event never makes"
                    )
            problems = [str(row[0]) for row in self.db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise self._damaged(short(problems[0] if problems else "no answer", 200))
            for table, wanted in (("meta", ("key", "value")), ("games", GAME_COLUMNS)):
                kind = self.db.execute(
                    "SELECT type, sql FROM sqlite_master WHERE name = ?", (table,)
                ).fetchall()
                if not kind:
                    raise self._damaged(f"no table {table}")
                if kind[0][0] != "table" or str(kind[0][1]).upper().startswith("CREATE VIRTUAL"):
                    raise self._damaged(f"{table} is not a plain table")
                columns = self.db.execute(f"PRAGMA table_xinfo({table})").fetchall()
                if any(row[6] for row in columns):  # hidden: 2 and 3 are computed columns
                    raise self._damaged(f"table {table} has a computed column")
                have = {str(row[1]) for row in columns}
                if not have:
                    raise self._damaged(f"no table {table}")
                missing = [name for name in wanted if name not in have]
                if missing:
                    raise self._damaged(f"table {table} has no column {', '.join(missing)}")

    def get(self, key: str) -> str | None:
        with self._sqlite():
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        if not isinstance(row[0], str):
            raise self._damaged(f"meta {key!r} is {short(repr(row[0]))}, not text")
        return row[0]

    def items(self, prefix: str) -> list[tuple[str, str]]:
        """The meta entries whose key begins with ``prefix``, by key; each value is text."""
        out: list[tuple[str, str]] = []
        with self._sqlite():
            raw = self.db.execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
                (len(prefix), prefix),
            )
            for key, value in raw:
                if not isinstance(key, str) or not isinstance(value, str):
                    raise self._damaged(f"meta {short(repr(key))} is not text")
                if len(out) >= MAX_SCHEDULE:
                    raise self._damaged(f"more than {MAX_SCHEDULE:,} entries {prefix}*")
                out.append((key, value))
        return out

    def put(self, key: str, value: str) -> None:
        with self._sqlite(), self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def config(self) -> EventConfig | None:
        """The stored configuration, checked field by field; ``None`` if there is none."""
        text = self.get("config")
        if text is None:
            return None
        try:
            return read_config(text)
        except StoredConfigError as exc:
            raise self._damaged(str(exc)) from None

    def add(self, row: GameRow, meta: Sequence[tuple[str, str]] = ()) -> None:
        """Store a finished game and, in the same transaction, the ``meta`` entries that go
        with it (its secret seeds; a tuning run's iteration and step)."""
        if self._write_ahead:
            self._start_write_ahead()
        with self._sqlite(), self.db:
            for entry in meta:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", entry)
            self.db.execute(
                f"INSERT OR REPLACE INTO games ({', '.join(GAME_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(GAME_COLUMNS))})",
                (
                    row.id,
                    row.round,
                    row.pairing,
                    row.first,
                    row.second,
                    row.p1,
                    row.p2,
                    row.pair,
                    row.opening,
                    row.winner,
                    row.reason,
                    row.first_points,
                    row.plies,
                    row.wall,
                    row.engine_time,
                    row.record,
                ),
            )

    def rows(self) -> list[GameRow]:
        """Every finished game, by id, each value checked; at most ``MAX_SCHEDULE``."""
        hints = get_type_hints(GameRow)
        out: list[GameRow] = []
        with self._sqlite():
            raw = self.db.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games ORDER BY id")
            # one row at a time: the same names over and over are kept once
            for values in raw:
                if len(out) >= MAX_SCHEDULE:
                    # no event has more: a crafted store of small rows is not all kept
                    raise self._damaged(f"more than {MAX_SCHEDULE:,} games, more than an event has")
                row = GameRow(*(shared(value) for value in values))
                out.append(self._checked(row, values, hints))
        return out

    def _checked(self, row: GameRow, values: tuple[object, ...], hints: dict[str, Any]) -> GameRow:
        """``row``, once each of its ``values`` has the type of its field and a value a run
        stores."""
        problem = row_problem(row, values, hints)
        if problem is not None:
            raise self._damaged(problem)
        return row


def store_game(
    db: ResultsDB,
    row: GameRow,
    *,
    out_dir: Path | None,
    record_name: str | None,
    record_text: str,
    meta: Sequence[tuple[str, str]] = (),
) -> None:
    """Keep a finished game: its record file, then its row with the ``meta`` entries that go
    with it (its secret seeds, if any) in one transaction (a stored row always has the rest).
    One at a time."""
    if out_dir is not None and record_name is not None:
        _write_atomic(out_dir / record_name, record_text)
    db.add(row, meta)


def _write_atomic(path: Path, text: str) -> None:
    """Write a file so that it is either absent or complete (write, flush, rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    # one a killed run left is removed; one planted as a link is removed, never followed
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with open(os.open(tmp, flags, 0o666), "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def open_stored(out_dir: Path, missing: str) -> ResultsDB:
    """The store of ``out_dir``, checked as a file and opened read-only.

    Raises:
        EventError: no database there (``missing`` says what that means), a file that is not
            read (a link, a FIFO, past its cap) or a damaged store, named.
    """
    path = out_dir / "results.sqlite"
    try:
        check_store_file(path)
    except FileNotFoundError:
        raise EventError(f"{path} does not exist: {missing}") from None
    except FileRefusedError as exc:
        raise EventError(f"{exc.reason}: it is not read") from None
    except OSError as exc:
        raise EventError(
            f"{path}: cannot read the results database: {exc.strerror or exc}"
        ) from None
    return ResultsDB(path, read_only=True)


def stored_event(out_dir: Path, missing: str) -> tuple[EventConfig, list[GameRow]]:
    """The configuration and finished games stored in ``out_dir``, read without writing.

    Raises:
        EventError: no database there (``missing`` says what that means), no event in it, or
            a damaged one (the error names the file, which is kept as it is).
    """
    path = out_dir / "results.sqlite"
    db = open_stored(out_dir, missing)
    try:
        config = db.config()
        if config is None:
            raise EventError(f"{path} holds no event configuration; it is kept as it is")
        return config, db.rows()
    finally:
        db.close()

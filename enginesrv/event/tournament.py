"""Matches and tournaments: the schedule, concurrent games, SQLite results, resume, SPRT.

An event (``EventConfig``) is a match of two players or a tournament of several, round robin
or gauntlet (the first player meets every other). Every pairing plays ``rounds * games`` games;
game k of a pairing gives the first-named player p1 when k is even, p2 when odd, so games come
in pairs with colours swapped; with ``repeat`` both games of a pair start from the same opening
(``--openings``), otherwise each game takes the next opening. The schedule and every game's
bot seeds (``Seed``) follow from the configuration and the seed alone, never from the order
games finish in, so a resumed event ends with exactly the games an uninterrupted one plays. In
a game with hidden information (Yin Yang) each built-in bot also gets a ``SecretSeed`` for the
choices its opponent is not shown (``bots.chance``), drawn from the operating system for each
game, so that the event's seed does not give a bot's secret laws away; they are kept in memory
only and stored (``seeds:ID`` in the meta table) once the game is over, for audit.

Storage (``--out DIR``): ``DIR/results.sqlite`` holds the configuration and one row per finished
game; ``DIR/games/game-NNNNN.txt`` the game records (design §6); ``DIR/logs/NAME.stderr`` what
each ``cmd:`` engine wrote to its standard error. A game is written (record
file first, then its row, in one transaction) only once it has ended, so an event killed at
any point, ``kill -9`` included, loses at most the games that were being played, and
``--resume`` plays exactly those and the ones never started. One run at a time holds the
directory (``DIR/lock``, ``lock_event``); a damaged store is an ``EventError`` naming the file,
and nothing deletes or rewrites a results file it could not read.

SPRT (``--sprt``, two players): after each game, from the tenth on, the log-likelihood ratio of
the pairing is compared with the bounds (pentanomial when game pairs are complete, trinomial
otherwise); when one is crossed the event stops, and the games still running are abandoned and
not counted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import itertools
import json
import math
import os
import random
import secrets
import shutil
import sqlite3
import time
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import trio

import games
from enginesrv.event import stats
from enginesrv.event.arbiter import (
    Adjudication,
    DrawRule,
    GameResult,
    GameSetup,
    MoveLimits,
    Opening,
    ResignRule,
    TimeControl,
    play_game,
    read_openings,
)
from enginesrv.event.players import (
    MOVE_TIMEOUT,
    Deadlines,
    ForfeitError,
    Player,
    PlayerSpec,
    PlayerSpecError,
    check_bot,
    control_character,
    make_player,
    parse_player,
)
from enginesrv.event.records import Record, format_record
from enginesrv.search.pool import WorkerPool


class EventError(ValueError):
    """A configuration or storage problem that stops the event before or while it runs; the
    message says what and how to fix it."""


@dataclass(frozen=True)
class EventConfig:
    """Everything that defines an event (stored with its results, so ``--resume`` needs
    nothing else)."""

    game: str
    players: tuple[str, ...]
    gauntlet: bool = False
    games: int = 2
    rounds: int = 1
    repeat: bool = False
    openings: str | None = None
    openings_order: str = "sequential"
    tc: str | None = None
    st: float | None = None
    depth: int | None = None
    nodes: int | None = None
    max_plies: int = 1000
    repetitions: int = 0
    resign: str | None = None
    draw: str | None = None
    timemargin: int = 0
    seed: int = 1
    concurrency: int = 1
    sprt: str | None = None
    event: str = "enginesrv"
    startup_timeout: float = 10.0
    ready_timeout: float = 5.0
    move_timeout: float = MOVE_TIMEOUT
    isolate: bool = False

    def to_json(self) -> str:
        """The configuration as JSON."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> EventConfig:
        """The inverse of ``to_json`` (unknown keys ignored)."""
        raw = json.loads(text)
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        values["players"] = tuple(values.get("players", ()))
        return cls(**values)

    def schedule_key(self) -> dict[str, object]:
        """The fields the schedule and the games depend on (a resumed event must keep them)."""
        keep = (
            "game", "players", "gauntlet", "games", "rounds", "repeat", "openings",
            "openings_order", "tc", "st", "depth", "nodes", "seed",
        )  # fmt: skip
        return {k: getattr(self, k) for k in keep}

    def move_limits(self) -> MoveLimits:
        """The limits of each decision.

        Raises:
            EventError: a bad time control, or no limit at all.
        """
        try:
            tc = TimeControl.parse(self.tc) if self.tc else None
        except ValueError as exc:
            raise EventError(str(exc)) from None
        st_ms = round(self.st * 1000) if self.st is not None else None
        if tc is None and st_ms is None and self.depth is None and self.nodes is None:
            raise EventError("give a limit: --tc, --st, --depth or --nodes")
        if tc is not None and st_ms is not None:
            raise EventError("--tc and --st exclude each other")
        return MoveLimits(tc, st_ms, self.depth, self.nodes)

    def adjudication(self) -> Adjudication:
        """The adjudication rules.

        Raises:
            EventError: a bad resign or draw rule.
        """
        try:
            resign = ResignRule.parse(self.resign) if self.resign else None
            draw = DrawRule.parse(self.draw) if self.draw else None
        except ValueError as exc:
            raise EventError(str(exc)) from None
        return Adjudication(self.max_plies, self.repetitions, resign, draw, self.timemargin)

    def sprt_params(self) -> stats.SprtParams | None:
        """The SPRT parameters, if any.

        Raises:
            EventError: bad parameters, or SPRT with more than two players.
        """
        if not self.sprt:
            return None
        if len(self.players) != 2:
            raise EventError("--sprt needs exactly two players")
        try:
            return stats.parse_sprt(self.sprt)
        except ValueError as exc:
            raise EventError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the schedule. ``first`` and ``second`` index the pairing's players (the
    first-named is ``first``); ``p1`` is the one that moves first."""

    id: int
    round: int
    pairing: int
    first: int
    second: int
    p1: int
    pair: int
    opening: int


def pairings(count: int, gauntlet: bool) -> list[tuple[int, int]]:
    """The pairings of ``count`` players: every two (round robin) or the first with each."""
    if gauntlet:
        return [(0, j) for j in range(1, count)]
    return [(i, j) for i in range(count) for j in range(i + 1, count)]


def make_schedule(config: EventConfig, openings: int) -> list[ScheduledGame]:
    """The games of the event, in the order they are started (module docstring)."""
    pairs = pairings(len(config.players), config.gauntlet)
    order = list(range(openings))
    if config.openings_order == "random":
        random.Random(f"openings:{config.seed}").shuffle(order)
    out: list[ScheduledGame] = []
    for rnd in range(config.rounds):
        for number, (i, j) in enumerate(pairs):
            for g in range(config.games):
                k = rnd * config.games + g
                pair = k // 2
                slot = pair if config.repeat else k
                out.append(
                    ScheduledGame(
                        id=len(out) + 1,
                        round=rnd + 1,
                        pairing=number,
                        first=i,
                        second=j,
                        p1=i if k % 2 == 0 else j,
                        pair=pair,
                        opening=order[slot % openings],
                    )
                )
    return out


def game_seeds(config: EventConfig, game_id: int) -> tuple[int, int]:
    """The ``Seed`` of p1's and p2's bots in one game: from the event seed and the game alone."""
    rng = random.Random(f"game:{config.seed}:{game_id}")
    return rng.randrange(2**31), rng.randrange(2**31)


def secret_seeds() -> tuple[int, int]:
    """The ``SecretSeed`` of p1's and p2's bots in a game with hidden information: drawn from the
    operating system, so that no one who knows the event's seed can compute a bot's secret
    choices (Yin Yang laws)."""
    return secrets.randbelow(2**31 - 1) + 1, secrets.randbelow(2**31 - 1) + 1


def isolation(out_dir: Path | None, command: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The bubblewrap command that ``--isolate`` puts before a ``cmd:`` engine: the file
    system read-only, a private /tmp, a /proc of its own (it sees no other process) and, over
    the event's directory, an empty one. What the engine needs from the real /tmp (its own
    files named on its command line, the working directory) is bound into the private one,
    read-only."""
    wrapper = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    wrapper += ["--tmpfs", "/tmp"]
    tmp = Path("/tmp")
    needed = {Path.cwd().resolve()}
    for word in command:
        if word.startswith("-"):
            continue
        with contextlib.suppress(OSError, ValueError):
            path = Path(word).resolve()
            if path.exists():
                needed.add(path)
    for path in sorted(p for p in needed if p.is_relative_to(tmp) and p != tmp):
        wrapper += ["--ro-bind", str(path), str(path)]
    if out_dir is not None:
        event = str(out_dir.resolve())
        wrapper += ["--tmpfs", event]  # after the binds: hidden even inside one of them
    wrapper += ["--unshare-pid", "--die-with-parent", "--new-session", "--"]
    return tuple(wrapper)


def display_names(specs: Iterable[PlayerSpec]) -> list[str]:
    """Unique display names: a repeated name gets ``#2``, ``#3``..."""
    out: list[str] = []
    for spec in specs:
        name = spec.name
        n = 1
        while name in out:
            n += 1
            name = f"{spec.name}#{n}"
        out.append(name)
    return out


# -- storage -------------------------------------------------------------------------------------

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


@dataclass(frozen=True, slots=True)
class GameRow:
    """A finished game as stored."""

    id: int
    round: int
    pairing: int
    first: str
    second: str
    p1: str
    p2: str
    pair: int
    opening: int
    winner: str
    reason: str
    first_points: float
    plies: int
    wall: float
    engine_time: float
    record: str | None


_GAME_COLUMNS = tuple(f.name for f in fields(GameRow))


class ResultsDB:
    """The SQLite store of one event (``:memory:`` when there is no ``--out``).

    ``ResultsDB(path)`` opens a store that exists and checks it, writing nothing: its pages,
    its tables and columns, and then each value read (``config``, ``rows``). Whatever is wrong
    (not SQLite, damaged pages, a table or column missing, a configuration or a game row that
    does not parse) is an ``EventError`` naming the file, which is kept as it is. A new store
    is made by ``ResultsDB.create``.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        try:
            if path is None:
                self.db = sqlite3.connect(":memory:", check_same_thread=False)
                self.db.executescript(_SCHEMA)
                return
            # mode=rw: never create the file (a missing store is not an empty one)
            # used by one thread at a time: the event loop's, or the one a game is stored from
            self.db = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=rw", uri=True, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            self._check()
        except EventError:
            self.db.close()
            raise

    @classmethod
    def create(cls, path: Path | None, config: EventConfig) -> ResultsDB:
        """A new store holding ``config`` and no game. The file appears whole or not at all
        (it is made under a temporary name, then linked into place), and one that exists is
        never replaced.

        Raises:
            EventError: the file cannot be made, or ``path`` exists.
        """
        if path is None:
            store = cls(None)
            store.put("config", config.to_json())
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
                    db.execute("INSERT INTO meta VALUES ('config', ?)", (config.to_json(),))
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

    def close(self) -> None:
        self.db.close()

    def _damaged(self, what: str) -> EventError:
        return EventError(
            f"{self.path}: the results database is damaged ({what}); it is kept as it is"
        )

    def _error(self, exc: sqlite3.Error) -> EventError:
        """A SQLite error as an ``EventError`` naming the file."""
        text = _short(str(exc), 200)
        name = getattr(exc, "sqlite_errorname", "")
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
        """Check the pages, the tables and their columns (a damaged store raises)."""
        with self._sqlite():
            problems = [str(row[0]) for row in self.db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise self._damaged(_short(problems[0] if problems else "no answer", 200))
            for table, wanted in (("meta", ("key", "value")), ("games", _GAME_COLUMNS)):
                have = {str(row[1]) for row in self.db.execute(f"PRAGMA table_info({table})")}
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
            raise self._damaged(f"meta {key!r} is {_short(repr(row[0]))}, not text")
        return row[0]

    def put(self, key: str, value: str) -> None:
        with self._sqlite(), self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def config(self) -> EventConfig | None:
        """The stored configuration, checked field by field; ``None`` if there is none."""
        text = self.get("config")
        if text is None:
            return None
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise self._damaged(f"the stored configuration is not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise self._damaged("the stored configuration is not a JSON object")
        hints = get_type_hints(EventConfig)
        for f in fields(EventConfig):
            if f.name not in raw:
                continue
            value = raw[f.name]
            if not _fits(tuple(value) if isinstance(value, list) else value, hints[f.name]):
                raise self._damaged(
                    f"the stored configuration has {f.name} = {_short(json.dumps(value))}"
                )
        try:
            config = EventConfig.from_json(text)
        except (TypeError, ValueError, AttributeError) as exc:
            raise self._damaged(f"the stored configuration is not valid: {exc}") from None
        if len(config.players) < 2:
            raise self._damaged("the stored configuration has fewer than two players")
        return config

    def add(self, row: GameRow) -> None:
        """Store a finished game (one transaction)."""
        with self._sqlite(), self.db:
            self.db.execute(
                f"INSERT OR REPLACE INTO games ({', '.join(_GAME_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_GAME_COLUMNS))})",
                (
                    row.id, row.round, row.pairing, row.first, row.second, row.p1, row.p2,
                    row.pair, row.opening, row.winner, row.reason, row.first_points, row.plies,
                    row.wall, row.engine_time, row.record,
                ),
            )  # fmt: skip

    def rows(self) -> list[GameRow]:
        """Every finished game, by id, each value checked."""
        with self._sqlite():
            cursor = self.db.execute(f"SELECT {', '.join(_GAME_COLUMNS)} FROM games ORDER BY id")
            raw = cursor.fetchall()
        hints = get_type_hints(GameRow)
        out = []
        for values in raw:
            row = GameRow(*values)
            for name, value in zip(_GAME_COLUMNS, values, strict=True):
                if not _fits(value, hints[name]) or not _plausible(name, value):
                    raise self._damaged(
                        f"game {_short(repr(row.id))} has {name} = {_short(repr(value))}"
                    )
            out.append(row)
        return out


def _fits(value: object, hint: Any) -> bool:
    """Whether a value read back from the store has the type of its field."""
    origin = get_origin(hint)
    if origin in (types.UnionType, Union):
        return any(_fits(value, arg) for arg in get_args(hint))
    if origin is tuple:
        args = get_args(hint)
        if not isinstance(value, tuple):
            return False
        return len(args) != 2 or args[1] is not Ellipsis or all(_fits(v, args[0]) for v in value)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if hint is str:
        return isinstance(value, str)
    return True


def _plausible(column: str, value: object) -> bool:
    """Whether a game row's value (of the right type) is one a run stores."""
    if column == "winner":
        return value in ("p1", "p2", "draw")
    if column == "first_points":
        return value in (0, 0.5, 1)
    if column in ("id", "round"):
        return isinstance(value, int) and value >= 1
    if column in ("pairing", "pair", "opening", "plies", "wall", "engine_time"):
        return not isinstance(value, int | float) or value >= 0
    return True


def _short(text: str, limit: int = 60) -> str:
    """``text`` on one line and cut to ``limit`` characters (for an error message)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


LOCK_NAME = "lock"
"""The lock file of an event directory (``lock_event``)."""

_held: set[Path] = set()
"""The event directories this process holds."""


@contextlib.contextmanager
def lock_event(out_dir: Path | None) -> Iterator[None]:
    """Hold the event directory ``out_dir`` (made if missing) while the block runs, so that a
    second run on it, ``--resume`` included, is refused instead of playing the same games.

    ``DIR/lock`` is locked with ``flock`` and holds the holder's PID. The kernel drops the lock
    when the process ends however it ends, so the file a killed run leaves blocks nothing; on
    leaving, the file is removed (while still locked: whoever opened it meanwhile sees that it
    is gone and takes a new one). Holding a directory this process already holds is a no-op;
    ``None`` (no ``--out``) holds nothing.

    Raises:
        EventError: another process holds the directory (the message names its PID), or the
            directory or its lock file cannot be made.
    """
    if out_dir is None or out_dir.resolve() in _held:
        yield
        return
    key = out_dir.resolve()
    # the directories made here, deepest first: removed on leaving if the run left them empty
    made = list(itertools.takewhile(lambda p: not p.exists(), (out_dir, *out_dir.parents)))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / LOCK_NAME
        fd = _take_lock(out_dir, path)
    except OSError as exc:
        _remove_empty(made)
        raise EventError(
            f"{out_dir}: cannot create the results directory: {exc.strerror or exc}"
        ) from None
    except EventError:
        _remove_empty(made)
        raise
    _held.add(key)
    try:
        yield
    finally:
        _held.discard(key)
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)
        _remove_empty(made)


def _remove_empty(dirs: list[Path]) -> None:
    """Remove ``dirs`` in turn, stopping at the first that is not empty."""
    for path in dirs:
        try:
            path.rmdir()
        except OSError:
            return


def _take_lock(out_dir: Path, path: Path) -> int:
    """Lock ``path`` for this process and write our PID into it; returns its descriptor."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise EventError(f"{path}: cannot open the lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fd)
            os.close(fd)
            raise EventError(
                f"{out_dir} is in use by another run (PID {holder}); wait for it or stop it"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise EventError(f"{path}: cannot lock the directory: {exc.strerror or exc}") from None
        try:
            current: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(os.fstat(fd), current):
            break
        os.close(fd)  # the run that held it removed it as it left: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as exc:
        os.close(fd)
        raise EventError(f"{path}: cannot write the lock file: {exc.strerror or exc}") from None
    return fd


def _lock_holder(fd: int) -> str:
    """The PID written in a lock file another process holds (``unknown`` if none yet)."""
    for _ in range(20):  # the holder writes it just after locking
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return text
        time.sleep(0.005)
    return "unknown"


# -- statistics ------------------------------------------------------------------------------------


@dataclass
class PairingResult:
    """The games of one pairing from the first-named player's side."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pairs: dict[int, list[float]] = field(default_factory=dict)

    def add(self, row: GameRow) -> None:
        if row.first_points == 1:
            self.wins += 1
        elif row.first_points == 0:
            self.losses += 1
        else:
            self.draws += 1
        self.pairs.setdefault(row.pair, []).append(row.first_points)

    def summary(self, sprt: stats.SprtParams | None = None) -> stats.PairingStats:
        """W/D/L, Elo, LOS, the pentanomial of complete pairs, and the LLR when SPRT runs."""
        trinomial = stats.Trinomial(self.wins, self.draws, self.losses)
        complete = [(p[0], p[1]) for p in self.pairs.values() if len(p) == 2]
        # one pair says nothing of the spread between pairs: the trinomial is used until two
        penta = stats.pentanomial_from_pairs(complete) if len(complete) >= 2 else None
        return stats.summarize(trinomial, penta, sprt)

    def to_json(self, sprt: stats.SprtParams | None = None) -> dict[str, object]:
        out: dict[str, object] = {"p1": self.first, "p2": self.second}
        out.update(self.summary(sprt).to_json())
        return out


def pairing_results(
    rows: Iterable[GameRow], names: list[str], gauntlet: bool
) -> list[PairingResult]:
    """One ``PairingResult`` per pairing of the event, in schedule order."""
    out = [PairingResult(names[i], names[j]) for i, j in pairings(len(names), gauntlet)]
    for row in rows:
        if 0 <= row.pairing < len(out):
            out[row.pairing].add(row)
    return out


# -- running ---------------------------------------------------------------------------------------


@dataclass
class Finished:
    """What the progress display is told after each game."""

    game: ScheduledGame
    result: GameResult
    names: tuple[str, str]
    done: int
    total: int
    pairings: list[PairingResult]
    sprt: stats.SprtParams | None
    elapsed: float


class _Slot:
    """The player instances of one concurrent game slot (one per player, started lazily)."""

    def __init__(
        self,
        specs: list[PlayerSpec],
        pool: WorkerPool | None,
        deadlines: Deadlines,
        logs: Path | None,
        isolate: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
    ) -> None:
        self.specs = specs
        self.pool = pool
        self.deadlines = deadlines
        self.logs = logs
        self.isolate = isolate
        """The command to run a ``cmd:`` engine's command under (``--isolate``), if any."""
        self.players: dict[int, Player] = {}

    async def get(self, index: int, game: games.Game) -> Player:
        player = self.players.get(index)
        if player is not None and player.alive:
            return player
        if player is not None:
            await player.close()
        stderr = None
        if self.logs is not None:
            safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in self.specs[index].name)
            stderr = self.logs / f"{safe}.stderr"
        spec = self.specs[index]
        wrapper = self.isolate(spec.command) if self.isolate and spec.kind == "cmd" else ()
        player = make_player(spec, self.pool, self.deadlines, stderr=stderr, wrapper=wrapper)
        self.players[index] = player
        await player.start(game)
        return player

    async def close(self) -> None:
        with trio.CancelScope(shield=True):
            for player in self.players.values():
                await player.close()
            self.players.clear()


def prepare(config: EventConfig, out_dir: Path | None, *, resume: bool) -> EventConfig:
    """Check the configuration (or load it, resuming) before anything runs.

    Raises:
        EventError: a bad configuration, or a results directory that does not fit.
    """
    if resume:
        if out_dir is None:
            raise EventError("--resume needs --out DIR, the directory of the event")
        stored, _ = _stored_event(out_dir, "nothing to resume")
        if config.players and config.schedule_key() != stored.schedule_key():
            differ = [k for k, v in config.schedule_key().items() if stored.schedule_key()[k] != v]
            raise EventError(
                f"--resume: the command line differs from the stored event in {', '.join(differ)}"
                "; give only --resume --out DIR, or the same arguments"
            )
        config = stored if not config.players else config
    elif out_dir is not None and (out_dir / "results.sqlite").exists():
        raise EventError(
            f"{out_dir} already holds an event: add --resume to finish it, or choose another --out"
        )
    if config.game not in games.available():
        raise EventError(f"unknown game {config.game!r}; known: {', '.join(games.available())}")
    if config.isolate and shutil.which("bwrap") is None:
        raise EventError(
            "--isolate needs bubblewrap (the bwrap command), which is not installed: install "
            "it (Debian: apt-get install bubblewrap) or leave --isolate out"
        )
    bad = control_character(config.event)
    if bad is not None:
        raise EventError(f"--event {config.event!r}: the name contains a control character ({bad})")
    if len(config.players) < 2:
        raise EventError("an event needs at least two players")
    for text in config.players:
        try:
            spec = parse_player(text)
            if spec.kind == "bot":
                check_bot(spec, config.game)
        except PlayerSpecError as exc:
            raise EventError(str(exc)) from None
    if config.games < 1 or config.rounds < 1 or config.concurrency < 1:
        raise EventError("--games, --rounds and --concurrency must be at least 1")
    if config.repeat and config.games % 2:
        raise EventError("--repeat plays each opening twice: --games must be even")
    config.move_limits()
    config.adjudication()
    config.sprt_params()
    if config.openings and not resume:
        # stored as an absolute path, so that --resume works from any directory
        config = dataclasses.replace(config, openings=str(Path(config.openings).resolve()))
    return config


async def run_event(
    config: EventConfig,
    out_dir: Path | None,
    *,
    on_game: Callable[[Finished], None],
    on_start: Callable[[int, int], None] = lambda done, total: None,
    on_tick: Callable[[float], None] | None = None,
) -> list[PairingResult]:
    """Play the event's games not yet stored (``prepare`` first), ``config.concurrency`` at
    a time; report each finished game (``on_game``) and, every second, the time since the
    start (``on_tick``, for a live display); return the standings. ``out_dir`` is held
    (``lock_event``) throughout.

    Raises:
        EventError: a player that cannot play (unknown bot, bad option, a game the engine does
            not play), an unreadable openings file, a results directory that another run
            holds or that cannot be written, or a damaged results database (kept as it is).
    """
    with lock_event(out_dir):
        return await _run_event(
            config, out_dir, on_game=on_game, on_start=on_start, on_tick=on_tick
        )


async def _run_event(
    config: EventConfig,
    out_dir: Path | None,
    *,
    on_game: Callable[[Finished], None],
    on_start: Callable[[int, int], None],
    on_tick: Callable[[float], None] | None,
) -> list[PairingResult]:
    """``run_event`` with ``out_dir`` held."""
    game = games.load(config.game)
    specs = [parse_player(text) for text in config.players]
    names = display_names(specs)
    specs = [
        PlayerSpec(s.text, s.kind, n, s.bot, s.options, s.command, s.host, s.port)
        for s, n in zip(specs, names, strict=True)
    ]
    openings: list[Opening] = [Opening()]
    if config.openings:
        try:
            openings = read_openings(Path(config.openings), game)
        except ValueError as exc:
            raise EventError(str(exc)) from None
    schedule = make_schedule(config, len(openings))
    limits = config.move_limits()
    rules = config.adjudication()
    sprt = config.sprt_params()
    deadlines = Deadlines(config.startup_timeout, config.ready_timeout, move=config.move_timeout)

    db_path = None
    if out_dir is not None:
        try:
            (out_dir / "games").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventError(f"{out_dir}: cannot create the results directory: {exc}") from None
        db_path = out_dir / "results.sqlite"
    # only a store this run makes may be removed (when it ends before a game is stored)
    created = db_path is None or not db_path.exists()
    db = ResultsDB.create(db_path, config) if created else ResultsDB(db_path)
    try:
        if db.config() is None:
            db.put("config", config.to_json())
        rows = db.rows()
    except EventError:
        db.close()
        raise
    done_ids = {row.id for row in rows}
    standings = pairing_results(rows, names, config.gauntlet)
    pending = [g for g in schedule if g.id not in done_ids]
    total = len(schedule)
    done = len(done_ids & {g.id for g in schedule})
    on_start(done, total)
    if sprt is not None and _decided(standings[0], sprt):
        pending = []
    started = trio.current_time()
    stop = trio.Event()
    failure: list[BaseException] = []
    queue_send, queue_receive = trio.open_memory_channel[ScheduledGame](len(pending) or 1)
    for item in pending:
        queue_send.send_nowait(item)
    queue_send.close()

    store_lock = trio.Lock()

    async def slot_task(pool: WorkerPool | None, cancel: trio.CancelScope) -> None:
        nonlocal done
        slot = _Slot(
            specs,
            pool,
            deadlines,
            None if out_dir is None else out_dir / "logs",
            (lambda command: isolation(out_dir, command)) if config.isolate else None,
        )
        try:
            async for item in queue_receive:
                if stop.is_set():
                    break
                result, seeds = await _play(
                    game,
                    slot,
                    item,
                    names=names,
                    openings=openings,
                    limits=limits,
                    rules=rules,
                    config=config,
                )
                record_text = format_record(result.record)
                record_name = None
                if out_dir is not None:
                    record_name = f"games/game-{item.id:05d}.txt"
                first_points = _points(result.winner, item.p1 == item.first)
                row = GameRow(
                    item.id, item.round, item.pairing, names[item.first], names[item.second],
                    names[item.p1], names[item.second if item.p1 == item.first else item.first],
                    item.pair, item.opening, result.winner, result.reason, first_points,
                    result.plies, result.wall, result.engine_time, record_name,
                )  # fmt: skip
                secret = None
                if game.hidden_information:
                    # the secret seeds are kept for audit, once the game is over (stored
                    # before its row: a stored game always has them)
                    secret = (f"seeds:{item.id}", json.dumps(list(seeds)))
                async with store_lock:
                    # in a thread: the file and database writes wait on the disk (an fsync
                    # each), and the other games' clocks run on this event loop meanwhile
                    store = functools.partial(
                        _store_game, db, row, out_dir=out_dir, record_name=record_name,
                        record_text=record_text, secret=secret,
                    )  # fmt: skip
                    await trio.to_thread.run_sync(store)
                standings[item.pairing].add(row)
                done += 1
                p1_name, p2_name = row.p1, row.p2
                on_game(
                    Finished(
                        item, result, (p1_name, p2_name), done, total, standings, sprt,
                        trio.current_time() - started,
                    )
                )  # fmt: skip
                if sprt is not None and _decided(standings[0], sprt):
                    stop.set()
                    cancel.cancel()
        except (PlayerSpecError, EventError, OSError, sqlite3.Error) as exc:
            failure.append(exc)
            stop.set()
            cancel.cancel()
        finally:
            await slot.close()

    try:
        async with trio.open_nursery() as nursery:
            pool: WorkerPool | None = None
            if any(s.kind == "bot" for s in specs) and pending:
                # a spare: a worker killed past its deadline must not make the next move of
                # its game wait for a new process
                pool = WorkerPool(nursery, config.concurrency, spare=1)
                await pool.start()
            ticker = trio.CancelScope()

            async def tick(report: Callable[[float], None]) -> None:
                with ticker:
                    while True:
                        await trio.sleep(1)
                        report(trio.current_time() - started)

            if on_tick is not None:
                nursery.start_soon(tick, on_tick)
            try:
                async with trio.open_nursery() as games_nursery:
                    for _ in range(min(config.concurrency, len(pending))):
                        games_nursery.start_soon(slot_task, pool, games_nursery.cancel_scope)
            finally:
                ticker.cancel()
                if pool is not None:
                    with trio.CancelScope(shield=True):
                        await pool.aclose()
        if failure:
            error = failure[0]
            if db_path is not None and created and done == 0:
                # this run made the store and stored no game in it: leave no event behind, so
                # the corrected command runs (a store that was there before is never removed)
                db.close()
                db_path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    (db_path.parent / "games").rmdir()
            if isinstance(error, OSError):
                raise EventError(f"cannot write the results: {error}") from None
            if isinstance(error, sqlite3.Error):
                raise EventError(f"the results database failed: {error}") from None
            raise EventError(str(error)) from None
    finally:
        db.close()
    return standings


async def _play(
    game: games.Game,
    slot: _Slot,
    item: ScheduledGame,
    *,
    names: list[str],
    openings: list[Opening],
    limits: MoveLimits,
    rules: Adjudication,
    config: EventConfig,
) -> tuple[GameResult, tuple[int, int]]:
    """One game of the schedule and its bots' secret seeds; a player that cannot start loses
    it with the reason."""
    p2 = item.second if item.p1 == item.first else item.first
    seats = (item.p1, p2)
    setup = GameSetup(
        key=f"g{item.id}",
        names=(names[seats[0]], names[seats[1]]),
        limits=limits,
        adjudication=rules,
        opening=openings[item.opening],
        seeds=game_seeds(config, item.id),
        secret_seeds=secret_seeds() if game.hidden_information else (0, 0),
        event=config.event,
    )
    players: list[Player] = []
    for seat, index in enumerate(seats):
        try:
            players.append(await slot.get(index, game))
        except ForfeitError as exc:
            return _no_start(game, setup, seat, exc), setup.secret_seeds
    result = await play_game(game, (players[0], players[1]), setup)
    for seat in result.failed:
        await players[seat].close()
    return result, setup.secret_seeds


def _no_start(game: games.Game, setup: GameSetup, seat: int, exc: ForfeitError) -> GameResult:
    """The result of a game a player could not start: it loses with the reason."""
    winner = "p2" if seat == 0 else "p1"
    record = Record(
        headers={
            "Game": game.name,
            "Start": setup.opening.start or "startpos",
            "Event": setup.event,
            "P1": setup.names[0],
            "P2": setup.names[1],
            "TimeControl": setup.limits.describe(),
            "Result": winner,
            "Reason": exc.reason,
        },
        moves=[],
        comments=[f"p{seat + 1} {setup.names[seat]} did not start: {exc.detail}"],
    )
    return GameResult(winner, exc.reason, record, 0, 0.0, 0.0, (seat,))


def _points(winner: str, first_is_p1: bool) -> float:
    if winner == "draw":
        return 0.5
    return 1.0 if (winner == "p1") == first_is_p1 else 0.0


SPRT_MIN_GAMES = 10
"""SPRT decides nothing before this many games: on a handful of games the approximate
log-likelihood ratio is unreliable (one win alone would cross the bounds)."""


def _decided(pairing: PairingResult, sprt: stats.SprtParams) -> bool:
    if pairing.wins + pairing.draws + pairing.losses < SPRT_MIN_GAMES:
        return False
    return pairing.summary(sprt).decision is not None


def _store_game(
    db: ResultsDB,
    row: GameRow,
    *,
    out_dir: Path | None,
    record_name: str | None,
    record_text: str,
    secret: tuple[str, str] | None,
) -> None:
    """Keep a finished game: its record file, its secret seeds (if any), then its row (a
    stored row always has the rest). Run in a thread, one at a time."""
    if out_dir is not None and record_name is not None:
        _write_atomic(out_dir / record_name, record_text)
    if secret is not None:
        db.put(*secret)
    db.add(row)


def _write_atomic(path: Path, text: str) -> None:
    """Write a file so that it is either absent or complete (write, flush, rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _stored_event(out_dir: Path, missing: str) -> tuple[EventConfig, list[GameRow]]:
    """The configuration and finished games stored in ``out_dir``, read without writing.

    Raises:
        EventError: no database there (``missing`` says what that means), no event in it, or
            a damaged one (the error names the file, which is kept as it is).
    """
    path = out_dir / "results.sqlite"
    if not path.exists():
        raise EventError(f"{path} does not exist: {missing}")
    db = ResultsDB(path)
    try:
        config = db.config()
        if config is None:
            raise EventError(f"{path} holds no event configuration; it is kept as it is")
        return config, db.rows()
    finally:
        db.close()


def load_results(out_dir: Path) -> tuple[EventConfig, list[PairingResult], list[GameRow]]:
    """The configuration, standings and games of a stored event.

    Raises:
        EventError: no event there, or a damaged one.
    """
    config, rows = _stored_event(out_dir, f"no event results in {out_dir}")
    try:
        names = display_names(parse_player(text) for text in config.players)
        config.sprt_params()
    except (PlayerSpecError, EventError) as exc:
        raise EventError(
            f"{out_dir / 'results.sqlite'}: the results database is damaged (the stored "
            f"configuration is not valid: {exc}); it is kept as it is"
        ) from None
    return config, pairing_results(rows, names, config.gauntlet), rows

"""Matches and tournaments: the schedule, concurrent games, SQLite results, resume, SPRT.

An event (``EventConfig``) is a match of two players or a tournament of several, round robin
or gauntlet (the first player meets every other). Every pairing plays ``rounds * games`` games;
game k of a pairing gives the first-named player p1 when k is even, p2 when odd, so games come
in pairs with colours swapped; with ``repeat`` both games of a pair start from the same opening
(``--openings``), otherwise each game takes the next opening. The schedule and every game's
bot seeds follow from the configuration and the seed alone, never from the order games finish
in, so a resumed event ends with exactly the games an uninterrupted one plays.

Storage (``--out DIR``): ``DIR/results.sqlite`` holds the configuration and one row per finished
game; ``DIR/games/game-NNNNN.txt`` the game records (design §6); ``DIR/logs/NAME.stderr`` what
each ``cmd:`` engine wrote to its standard error. A game is written (record
file first, then its row, in one transaction) only once it has ended, so an event killed at
any point, ``kill -9`` included, loses at most the games that were being played, and
``--resume`` plays exactly those and the ones never started.

SPRT (``--sprt``, two players): after each game, from the tenth on, the log-likelihood ratio of
the pairing is compared with the bounds (pentanomial when game pairs are complete, trinomial
otherwise); when one is crossed the event stops, and the games still running are abandoned and
not counted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import trio

import games
from enginesrv import stats
from enginesrv.arbiter import (
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
from enginesrv.players import (
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
from enginesrv.pool import WorkerPool
from enginesrv.records import Record, format_record


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

    def schedule_key(self) -> dict[str, Any]:
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
    """The seeds of p1's and p2's bots in one game (from the event seed and the game alone)."""
    rng = random.Random(f"game:{config.seed}:{game_id}")
    return rng.randrange(2**31), rng.randrange(2**31)


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


class ResultsDB:
    """The SQLite store of one event (``:memory:`` when there is no ``--out``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(":memory:" if path is None else str(path))
            self.db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise EventError(f"{path}: cannot open the results database: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def config(self) -> EventConfig | None:
        text = self.get("config")
        return None if text is None else EventConfig.from_json(text)

    def add(self, row: GameRow) -> None:
        """Store a finished game (one transaction)."""
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row.id, row.round, row.pairing, row.first, row.second, row.p1, row.p2,
                    row.pair, row.opening, row.winner, row.reason, row.first_points, row.plies,
                    row.wall, row.engine_time, row.record,
                ),
            )  # fmt: skip

    def rows(self) -> list[GameRow]:
        """Every finished game, by id."""
        cursor = self.db.execute("SELECT * FROM games ORDER BY id")
        return [GameRow(*row) for row in cursor.fetchall()]


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

    def to_json(self, sprt: stats.SprtParams | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"p1": self.first, "p2": self.second}
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
    ) -> None:
        self.specs = specs
        self.pool = pool
        self.deadlines = deadlines
        self.logs = logs
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
        player = make_player(self.specs[index], self.pool, self.deadlines, stderr=stderr)
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
    start (``on_tick``, for a live display); return the standings.

    Raises:
        EventError: a player that cannot play (unknown bot, bad option, a game the engine does
            not play), an unreadable openings file, or a results directory that cannot be
            written.
    """
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
    db = ResultsDB(db_path)
    if db.config() is None:
        db.put("config", config.to_json())
    rows = db.rows()
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

    async def slot_task(pool: WorkerPool | None, cancel: trio.CancelScope) -> None:
        nonlocal done
        slot = _Slot(specs, pool, deadlines, None if out_dir is None else out_dir / "logs")
        try:
            async for item in queue_receive:
                if stop.is_set():
                    break
                result = await _play(
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
                    _write_atomic(out_dir / record_name, record_text)
                first_points = _points(result.winner, item.p1 == item.first)
                row = GameRow(
                    item.id, item.round, item.pairing, names[item.first], names[item.second],
                    names[item.p1], names[item.second if item.p1 == item.first else item.first],
                    item.pair, item.opening, result.winner, result.reason, first_points,
                    result.plies, result.wall, result.engine_time, record_name,
                )  # fmt: skip
                db.add(row)
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
                pool = WorkerPool(nursery, config.concurrency)
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
            if db_path is not None and not db.rows():
                # nothing was played: leave no event behind, so the corrected command runs
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
) -> GameResult:
    """One game of the schedule; a player that cannot start loses it with the reason."""
    p2 = item.second if item.p1 == item.first else item.first
    seats = (item.p1, p2)
    setup = GameSetup(
        key=f"g{item.id}",
        names=(names[seats[0]], names[seats[1]]),
        limits=limits,
        adjudication=rules,
        opening=openings[item.opening],
        seeds=game_seeds(config, item.id),
        event=config.event,
    )
    players: list[Player] = []
    for seat, index in enumerate(seats):
        try:
            players.append(await slot.get(index, game))
        except ForfeitError as exc:
            return _no_start(game, setup, seat, exc)
    result = await play_game(game, (players[0], players[1]), setup)
    for seat in result.failed:
        await players[seat].close()
    return result


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


def _write_atomic(path: Path, text: str) -> None:
    """Write a file so that it is either absent or complete (write, flush, rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _stored_event(out_dir: Path, missing: str) -> tuple[EventConfig, list[GameRow]]:
    """The configuration and finished games stored in ``out_dir``.

    Raises:
        EventError: no database there (``missing`` says what that means), or no event in it.
    """
    path = out_dir / "results.sqlite"
    if not path.exists():
        raise EventError(f"{path} does not exist: {missing}")
    db = ResultsDB(path)
    try:
        config = db.config()
        if config is None:
            raise EventError(f"{path} holds no event configuration")
        return config, db.rows()
    finally:
        db.close()


def load_results(out_dir: Path) -> tuple[EventConfig, list[PairingResult], list[GameRow]]:
    """The configuration, standings and games of a stored event.

    Raises:
        EventError: no event there.
    """
    config, rows = _stored_event(out_dir, f"no event results in {out_dir}")
    names = display_names(parse_player(text) for text in config.players)
    return config, pairing_results(rows, names, config.gauntlet), rows

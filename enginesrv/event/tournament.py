"""Running an event: its games played a few at a time, each stored when it ends, resume, SPRT.

An event (``prepared.PreparedEvent``) is a match of two players or a tournament of several,
round robin or gauntlet (the first player meets every other). Its games (``schedule``) are
played by a runner (``runners.base.GameRunner``: on this machine, or on the workers of a Dask
cluster), ``runner.lanes()`` at a time, and a finished game is stored at once
(``results.store``): ``--resume`` plays exactly the games that were being played and the ones
never started. In a game with hidden information (Yin Yang) each built-in bot also gets a
``SecretSeed`` for the choices its opponent is not shown (``bots.chance``), drawn from the
operating system where the game is played (``play.plan``), so that the event's seed does not
give a bot's secret laws away; they are kept in memory only, and stored (``seeds:ID`` in the
meta table) once the game is over, for audit.

SPRT (``--sprt``, two players): after each game, from the 40th on (``MIN_SPRT_GAMES``), the
log-likelihood ratio of the pairing is compared with the bounds (pentanomial when game pairs are
complete, trinomial otherwise); when one is crossed the event stops, and the games still
running are abandoned and not counted.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from enginesrv.event.config import EventError
from enginesrv.event.feed import Feed, event_message, result_message, standings_message
from enginesrv.event.lock import lock_event
from enginesrv.event.opened import OpenedStore, open_event_store
from enginesrv.event.play.arbiter import GameResult, MoveObserver
from enginesrv.event.play.openings import Opening, opening_state
from enginesrv.event.play.plan import GamePlan, Played
from enginesrv.event.play.players import PlayerSpecError
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.results import stats
from enginesrv.event.results.standings import PairingResult, decided, pairing_results
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.results.wording import result_words
from enginesrv.event.runners.base import GameRunner, Venue
from enginesrv.event.runners.local import LocalVenue
from enginesrv.event.schedule import ScheduledGame, make_schedule


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


@dataclass(frozen=True)
class Observers:
    """Who is told how an event goes: ``on_game`` after each game, ``on_start`` once with
    the games done and in all, ``on_tick`` every second with the time since the start (for a
    live display), and ``feed``'s watchers move by move."""

    on_game: Callable[[Finished], None]
    on_start: Callable[[int, int], None] = lambda done, total: None
    on_tick: Callable[[float], None] | None = None
    feed: Feed | None = None


async def run_event(
    event: PreparedEvent,
    out_dir: Path | None,
    *,
    on_game: Callable[[Finished], None],
    on_start: Callable[[int, int], None] = lambda done, total: None,
    on_tick: Callable[[float], None] | None = None,
    feed: Feed | None = None,
    venue: Venue | None = None,
) -> list[PairingResult]:
    """Play the event's games not yet stored (``prepare`` first) at ``venue`` (None: here,
    ``runners.local.LocalVenue()``; ``runners.cluster.ClusterVenue``: on the workers of a
    Dask cluster) and return the standings. ``out_dir`` is held (``lock_event``) throughout.
    ``on_game``, ``on_start``, ``on_tick`` and ``feed``: ``Observers``.

    Raises:
        EventError: a player that cannot play (unknown bot, bad option, a game the engine does
            not play, an external engine that cannot be started or reached: each is started
            once before the first game, ``preflight``), ``debug`` with neither traces nor
            ``out_dir``, an unreadable openings file, a results directory that another run
            holds or that cannot be written, or a damaged results database (kept as it is).
    """
    observers = Observers(on_game, on_start, on_tick, feed)
    with lock_event(out_dir):
        async with (venue or LocalVenue()).open(event, out_dir) as runner:
            return await run_games(event, out_dir, runner, observers)


async def run_games(
    event: PreparedEvent, out_dir: Path | None, runner: GameRunner, observers: Observers
) -> list[PairingResult]:
    """The tournament loop: open the store, queue the games not yet stored, play them with
    ``runner``, ``runner.lanes()`` at a time, store each as it ends, publish the standings and
    stop when SPRT decides. Returns the standings."""
    openings = event.openings()
    schedule = make_schedule(event.config, len(openings))
    async with _open_store(event, out_dir, schedule, runner) as run:
        observers.on_start(run.done, len(schedule))
        if observers.feed is not None:
            control = event.limits.describe() + "".join(
                f"; {s.name} tc={s.tc}" for s in event.specs if s.tc is not None
            )
            total = len(schedule)
            observers.feed.publish(
                event_message(event.config.event, event.game, event.names, total, control)
            )
            observers.feed.publish(standings_message(run.standings, run.done, total, event.sprt))
        await run.play_all(runner, openings, observers)
        return run.standings


@contextlib.asynccontextmanager
async def _open_store(
    event: PreparedEvent, out_dir: Path | None, schedule: list[ScheduledGame], runner: GameRunner
) -> AsyncIterator[_Run]:
    """The event's store, opened or made (``opened.open_event_store``), and what is left to
    play."""
    runs: list[_Run] = []

    def pending(db: ResultsDB) -> bool:
        runs.append(_Run(event, out_dir, db, schedule))
        return bool(runs[0].pending)

    async with open_event_store(event, out_dir, runner, pending=pending) as opened:
        run = runs[0] if runs else _Run(event, out_dir, opened.db, schedule)
        run.opened = opened
        yield run


class _Run:
    """One run of an event: its store, standings and the games left (``run_games``)."""

    def __init__(
        self,
        event: PreparedEvent,
        out_dir: Path | None,
        db: ResultsDB,
        schedule: list[ScheduledGame],
    ) -> None:
        self.event = event
        self.out_dir = out_dir
        self.db = db
        self.total = len(schedule)
        rows = db.rows()
        self.done_ids = {row.id for row in rows}
        self.standings = pairing_results(rows, event.names, event.config.gauntlet)
        self.pending = [g for g in schedule if g.id not in self.done_ids]
        if event.sprt is not None and decided(self.standings[0], event.sprt):
            self.pending = []
        self.done = len(self.done_ids & {g.id for g in schedule})
        self.opened: OpenedStore | None = None
        """The store as this run opened it (it counts the games the run stores)."""
        self._stop = False
        self._failure: list[BaseException] = []
        self._started = 0.0

    async def play_all(
        self, runner: GameRunner, openings: list[Opening], observers: Observers
    ) -> None:
        """Play the pending games, ``runner.lanes()`` at a time (SPRT may stop them)."""
        self._started = trio.current_time()
        send, receive = trio.open_memory_channel[ScheduledGame](len(self.pending) or 1)
        for item in self.pending:
            send.send_nowait(item)
        send.close()
        async with trio.open_nursery() as nursery:
            if observers.on_tick is not None:
                nursery.start_soon(_tick, observers.on_tick, self._started)
            try:
                async with trio.open_nursery() as lanes:
                    lane = _Lane(runner, receive, openings, observers, lanes.cancel_scope)
                    for _ in range(min(runner.lanes(), len(self.pending))):
                        lanes.start_soon(self._lane, lane)
            finally:
                nursery.cancel_scope.cancel()
        if self._failure:
            raise _event_error(self._failure[0]) from None

    async def _lane(self, lane: _Lane) -> None:
        """Play games from the queue until it is empty or the event stops."""
        try:
            async for item in lane.queue:
                if self._stop:
                    break
                await self._play(lane, item)
        except (PlayerSpecError, EventError, OSError, sqlite3.Error) as exc:
            self._failure.append(exc)
            self._stop = True
            lane.cancel.cancel()

    async def _play(self, lane: _Lane, item: ScheduledGame) -> None:
        """Play one game, store it, tell the observers, and stop the event when SPRT
        decides."""
        event, feed = self.event, lane.observers.feed
        plan = event.plan(item, lane.openings)
        on_move = _announce(event, plan, lane.runner, feed)
        played = await lane.runner.play(plan, on_move)
        if feed is not None:
            feed.publish(_result_message(plan, played.result))
        if not await self._keep(lane.runner, item, played):
            return
        elapsed = trio.current_time() - self._started
        lane.observers.on_game(
            Finished(
                item,
                played.result,
                plan.setup.names,
                self.done,
                self.total,
                self.standings,
                event.sprt,
                elapsed,
            )
        )
        if feed is not None:
            feed.publish(standings_message(self.standings, self.done, self.total, event.sprt))
        if event.sprt is not None and decided(self.standings[0], event.sprt):
            self._stop = True
            lane.cancel.cancel()

    async def _keep(self, runner: GameRunner, item: ScheduledGame, played: Played) -> bool:
        """Store a finished game (unless a result of it is stored already) and count it;
        whether it was."""
        if item.id in self.done_ids:
            # a game's identity is its number in the schedule: a second result of it (a
            # cluster that ran it twice) is dropped
            runner.settle(item.id, stored=False)
            return False
        assert self.opened is not None
        row = await self.opened.keep(self.event, item, played, runner)
        self.done_ids.add(item.id)
        self.standings[item.pairing].add(row)
        self.done += 1
        return True


@dataclass(frozen=True)
class _Lane:
    """What every lane of a run shares: the runner, the queue of games, the openings, the
    observers, and the scope that stops every lane."""

    runner: GameRunner
    queue: trio.MemoryReceiveChannel[ScheduledGame]
    openings: list[Opening]
    observers: Observers
    cancel: trio.CancelScope


def _announce(
    event: PreparedEvent, plan: GamePlan, runner: GameRunner, feed: Feed | None
) -> MoveObserver | None:
    """Tell ``feed``'s watchers that the game of ``plan`` begins; what to tell its moves."""
    if feed is None:
        return None
    setup = plan.setup
    base = None
    clocks = [each.clock for each in setup.seat_limits]
    if runner.live and clocks[0] is not None and clocks[1] is not None:
        base = (clocks[0].base_ms, clocks[1].base_ms)
    start = opening_state(event.game, setup.opening)
    return feed.game(plan.game_id, plan.round, setup.names, start, base)


def _result_message(plan: GamePlan, result: GameResult) -> dict[str, object]:
    words = result_words(result.outcome, plan.setup.names, result.detail)
    return result_message(plan.game_id, result.outcome, result.plies, words)


async def _tick(report: Callable[[float], None], started: float) -> None:
    while True:
        await trio.sleep(1)
        report(trio.current_time() - started)


def _event_error(error: BaseException) -> EventError:
    if isinstance(error, OSError):
        return EventError(f"cannot write the results: {error}")
    if isinstance(error, sqlite3.Error):
        return EventError(f"the results database failed: {error}")
    return EventError(str(error))

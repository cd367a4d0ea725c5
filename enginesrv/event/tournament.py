"""Running an event: its games played a few at a time, each stored when it ends, resume, SPRT.

An event (``config.EventConfig``) is a match of two players or a tournament of several, round
robin or gauntlet (the first player meets every other). Its games (``schedule``) are played
``concurrency`` at a time, each slot with player instances of its own (``slots.Slot``), and a
finished game is stored at once (``store``): ``--resume`` plays exactly the games that were
being played and the ones never started. In a game with hidden information (Yin Yang) each
built-in bot also gets a ``SecretSeed`` for the choices its opponent is not shown
(``bots.chance``), drawn from the operating system for each game, so that the event's seed
does not give a bot's secret laws away; they are kept in memory only, and stored (``seeds:ID``
in the meta table) once the game is over, for audit.

SPRT (``--sprt``, two players): after each game, from the tenth on, the log-likelihood ratio of
the pairing is compared with the bounds (pentanomial when game pairs are complete, trinomial
otherwise); when one is crossed the event stops, and the games still running are abandoned and
not counted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import json
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import outcome
import structlog
import trio

import games
from enginesrv.admission import Admission
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.feed import Feed, event_message, result_message, standings_message
from enginesrv.event.lock import lock_event
from enginesrv.event.play.arbiter import GameResult, GameSetup, no_start, play_game
from enginesrv.event.play.bot_player import check_bot
from enginesrv.event.play.contain import check_containment, wrapper_for
from enginesrv.event.play.controls import Adjudication, MoveLimits, TimeControl
from enginesrv.event.play.openings import Opening, opening_state, read_openings
from enginesrv.event.play.players import (
    ForfeitError,
    Player,
    PlayerSpecError,
    parse_player,
)
from enginesrv.event.play.preflight import check_players
from enginesrv.event.play.records import format_record
from enginesrv.event.play.slots import Slot
from enginesrv.event.results import stats
from enginesrv.event.results.files import record_name as stored_record_name
from enginesrv.event.results.standings import PairingResult, decided, pairing_results, points
from enginesrv.event.results.store import GameRow, ResultsDB, store_game, stored_event
from enginesrv.event.results.wording import quoted, result_words
from enginesrv.event.schedule import (
    ScheduledGame,
    game_seeds,
    make_schedule,
    named_specs,
    secret_seeds,
)
from enginesrv.search.pool import WorkerPool

if TYPE_CHECKING:
    from enginesrv.event.runners.cluster import ClusterRunner, TaskResult

log = structlog.get_logger("enginesrv.event.tournament")


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


def prepare(config: EventConfig, out_dir: Path | None, *, resume: bool) -> EventConfig:
    """Check the configuration (or load it, resuming) before anything runs.

    Raises:
        EventError: a bad configuration, or a results directory that does not fit.
    """
    if resume:
        if out_dir is None:
            raise EventError("--resume needs --out DIR, the directory of the event")
        stored, _ = stored_event(out_dir, "nothing to resume")
        if config.players and config.schedule_key() != stored.schedule_key():
            differ = [k for k, v in config.schedule_key().items() if stored.schedule_key()[k] != v]
            raise EventError(
                f"--resume: the command line differs from the stored event in {', '.join(differ)}"
                "; give only --resume --out DIR, or the same arguments"
            )
        if not config.players and config.debug:
            stored = dataclasses.replace(stored, debug=True)  # --resume --out DIR --debug
        config = stored if not config.players else config
        if not config.event:
            config = dataclasses.replace(config, event=stored.event)
    elif out_dir is not None and (out_dir / "results.sqlite").exists():
        raise EventError(
            f"{out_dir} already holds an event: add --resume to finish it, or choose another --out"
        )
    if config.game not in games.available():
        known = ", ".join(games.available())
        raise EventError(f"unknown game {quoted(config.game)}; known: {known}")
    check_containment(config)
    if not config.event:
        config = dataclasses.replace(config, event=f"{config.game} {dt.date.today().isoformat()}")
    if len(config.players) < 2:
        raise EventError("an event needs at least two players")
    config.check()  # every setting's type and range, whichever door it came by
    for text in config.players:
        try:
            spec = parse_player(text)
            if spec.kind == "bot":
                check_bot(spec, config.game)
        except PlayerSpecError as exc:
            raise EventError(str(exc)) from None
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
    feed: Feed | None = None,
    traces: Path | None = None,
    cluster: str | None = None,
    cluster_listen: tuple[str, int] | None = ("", 0),
    on_notice: Callable[[str], None] | None = None,
    admission: Admission | None = None,
) -> list[PairingResult]:
    """Play the event's games not yet stored (``prepare`` first), ``config.concurrency`` at
    a time; report each finished game (``on_game``) and, every second, the time since the
    start (``on_tick``, for a live display); return the standings. Before any game,
    ``on_notice`` (default: a warning logged) is told in one line when the ``cmd:`` engines
    run uncontained in a game that would contain them (``contain.wrapper_for``).
    ``out_dir`` is held (``lock_event``) throughout. ``feed`` is told the games move by
    move (its watchers). With ``config.debug`` the external engines' protocol traces are
    published in ``traces`` (default ``out_dir/logs``) as each game ends. With ``cluster``
    (a Dask scheduler's address) the games are played on its workers
    (``enginesrv.event.runners.cluster``), two per worker thread at a time; they send each result
    straight back to a listener on ``cluster_listen`` (``cluster.parse_listen``; None:
    through Dask), whose connections ``admission`` admits (the one of the event's watching
    page, when it has one).

    Raises:
        EventError: a player that cannot play (unknown bot, bad option, a game the engine does
            not play, an external engine that cannot be started or reached: a local event
            starts each once before its first game, ``preflight``), ``debug`` with neither
            ``traces`` nor ``out_dir``, an unreadable openings file, a results directory that
            another run holds or that cannot be written, or a damaged results database (kept
            as it is).
    """
    run_games = functools.partial(
        _run_games, config, out_dir, on_game=on_game, on_start=on_start, on_tick=on_tick,
        feed=feed, traces=traces, on_notice=on_notice,
    )  # fmt: skip
    with lock_event(out_dir):
        if cluster is None:
            return await run_games(runner=None)
        return await _run_on_cluster(config, cluster, cluster_listen, run_games, admission)


async def _run_on_cluster(
    config: EventConfig,
    cluster: str,
    listen: tuple[str, int] | None,
    run_games: Callable[..., Awaitable[list[PairingResult]]],
    admission: Admission | None = None,
) -> list[PairingResult]:
    """``run_games(runner=...)`` with a client of the Dask scheduler at ``cluster``, taking
    the results the workers send straight back on ``listen``."""
    from enginesrv.event.runners.cluster import ClusterRunner  # noqa: PLC0415 (an optional extra)

    if config.debug and not all(parse_player(text).kind == "bot" for text in config.players):
        raise EventError("--debug traces the engines of local games only: leave out --cluster")
    if config.isolate:
        raise EventError("--isolate runs on this machine only: leave out --cluster")
    async with ClusterRunner(cluster, config, listen, admission=admission) as runner:
        try:
            async with trio.open_nursery() as nursery:

                async def serve_and_run() -> list[PairingResult]:
                    await runner.serve(nursery)
                    return await run_games(runner=runner)

                # what the event raises leaves the listener's nursery as it is, not in a group
                done = await outcome.acapture(serve_and_run)
                nursery.cancel_scope.cancel()
            return done.unwrap()
        finally:
            if runner.overheads:
                ordered = sorted(runner.overheads)
                transfers = sorted(runner.transfers)
                stores = sorted(runner.stores)
                log.info(
                    "cluster_games_stored", games=len(ordered),
                    overhead_ms_median=round(1000 * ordered[len(ordered) // 2], 2),
                    overhead_ms_max=round(1000 * ordered[-1], 2),
                    transfer_ms_median=round(1000 * transfers[len(transfers) // 2], 2),
                    store_ms_median=round(1000 * stores[len(stores) // 2], 2),
                    sent_straight=runner.delivered,
                )  # fmt: skip


async def _run_games(
    config: EventConfig,
    out_dir: Path | None,
    *,
    on_game: Callable[[Finished], None],
    on_start: Callable[[int, int], None],
    on_tick: Callable[[float], None] | None,
    feed: Feed | None,
    traces: Path | None,
    runner: ClusterRunner | None,
    on_notice: Callable[[str], None] | None,
) -> list[PairingResult]:
    """Play the games here (``runner`` None) or on a cluster."""
    game = games.load(config.game)
    specs = named_specs(config.players)
    names = [s.name for s in specs]
    if not config.debug or all(s.kind == "bot" for s in specs):
        traces = None  # a bot's searches run in the arbiter's own workers: nothing to trace
    elif traces is None:
        if out_dir is None:
            raise EventError("--debug needs a directory for its traces: give --out DIR")
        traces = out_dir / "logs"
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
    deadlines = config.deadlines()
    in_flight = config.concurrency
    if runner is not None:
        # before the store is made: an event that no worker can play leaves nothing behind
        for warning in await runner.preflight(names):
            log.warning("cluster_worker_cannot_run", detail=warning)
        in_flight = runner.in_flight()
    containment = await trio.to_thread.run_sync(
        functools.partial(wrapper_for, config, game, out_dir, cluster=runner is not None)
    )  # it may probe bubblewrap, once per process
    if containment.notice is not None:
        if on_notice is None:
            log.warning("engines_uncontained", detail=containment.notice)
        else:
            on_notice(containment.notice)
    isolate = containment.wrap
    check = None  # a local event starts its external engines once before any game (preflight)
    if runner is None:
        check = functools.partial(check_players, specs, game, deadlines, isolate)

    db_path = None if out_dir is None else out_dir / "results.sqlite"
    # only a store this run makes may be removed (when it ends before a game is stored)
    created = db_path is None or not db_path.exists()
    if check is not None and created:
        await check()  # before the store is made: a player that cannot play leaves nothing
    if out_dir is not None:
        try:
            (out_dir / "games").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventError(f"{out_dir}: cannot create the results directory: {exc}") from None
    db = ResultsDB.create(db_path, config) if created else ResultsDB(db_path)
    db.write_ahead()
    try:
        if db.config() is None:
            db.put("config", config.to_json())
        rows = db.rows()
        done_ids = {row.id for row in rows}
        standings = pairing_results(rows, names, config.gauntlet)
        pending = [g for g in schedule if g.id not in done_ids]
        if sprt is not None and decided(standings[0], sprt):
            pending = []
        if check is not None and not created and pending:
            await check()  # resumed: before any game, the stored ones left as they are
    except EventError:
        db.close()
        raise
    total = len(schedule)
    done = len(done_ids & {g.id for g in schedule})
    on_start(done, total)
    if feed is not None:
        control = limits.describe() + "".join(
            f"; {s.name} tc={s.tc}" for s in specs if s.tc is not None
        )
        feed.publish(event_message(config.event, game, names, total, control))
        feed.publish(standings_message(standings, done, total, sprt))
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
        slot = Slot(
            specs,
            pool,
            deadlines,
            None if out_dir is None else out_dir / "logs",
            isolate,
            traces=traces,
            log_cap=config.log_cap << 20,
        )
        try:
            async for item in queue_receive:
                if stop.is_set():
                    break
                answer: TaskResult | None = None
                if runner is not None:
                    result, seeds, answer = await _play_on_cluster(
                        runner, item, names, openings, feed
                    )
                else:
                    result, seeds = await play_scheduled(
                        game,
                        slot,
                        item,
                        names=names,
                        openings=openings,
                        limits=limits,
                        rules=rules,
                        config=config,
                        feed=feed,
                        own=[s.tc for s in specs],
                    )
                if item.id in done_ids:
                    # a game's identity is its number in the schedule: a second result of
                    # it (a cluster that ran it twice) is dropped
                    log.warning("duplicate_result_dropped", game=item.id)
                    if runner is not None:
                        runner.settle(item.id)
                    continue
                record_text = format_record(result.record)
                record_name = None
                if out_dir is not None:
                    record_name = stored_record_name(item.id)
                first_points = points(result.winner, item.p1 == item.first)
                row = GameRow(
                    item.id, item.round, item.pairing, names[item.first], names[item.second],
                    names[item.p1], names[item.second if item.p1 == item.first else item.first],
                    item.pair, item.opening, result.winner, result.reason, first_points,
                    result.plies, result.wall, result.engine_time, record_name,
                )  # fmt: skip
                secret = None
                if game.hidden_information:
                    # the secret seeds are kept for audit, once the game is over (stored
                    # with its row: a stored game always has them)
                    secret = (f"seeds:{item.id}", json.dumps(list(seeds)))
                store = functools.partial(
                    store_game, db, row, out_dir=out_dir, record_name=record_name,
                    record_text=record_text, secret=secret,
                )  # fmt: skip
                if runner is None:
                    async with store_lock:
                        # in a thread: the file and database writes wait on the disk (an
                        # fsync each), and the other games' clocks run on this event loop
                        await trio.to_thread.run_sync(store)
                else:
                    # here: no clock runs on this loop (the games are on the workers), and
                    # a thread's two hand-overs would cost more than the writes hold it
                    try:
                        store()
                    finally:
                        runner.settle(item.id)
                    if answer is not None:
                        runner.stored(item.id, answer)
                done_ids.add(item.id)
                standings[item.pairing].add(row)
                done += 1
                p1_name, p2_name = row.p1, row.p2
                on_game(
                    Finished(
                        item, result, (p1_name, p2_name), done, total, standings, sprt,
                        trio.current_time() - started,
                    )
                )  # fmt: skip
                if feed is not None:
                    feed.publish(standings_message(standings, done, total, sprt))
                if sprt is not None and decided(standings[0], sprt):
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
            if runner is None and any(s.kind == "bot" for s in specs) and pending:
                # a spare: a worker killed past its deadline must not make the next move of
                # its game wait for a new process
                # engines run beside it: a killed spawner is not started again (forked.Spawner)
                pool = WorkerPool(nursery, config.concurrency, spare=1, restart_spawner=False)
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
                    for _ in range(min(in_flight, len(pending))):
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


async def _play_on_cluster(
    runner: ClusterRunner,
    item: ScheduledGame,
    names: list[str],
    openings: list[Opening],
    feed: Feed | None,
) -> tuple[GameResult, tuple[int, int], TaskResult]:
    """One game of the schedule played on a worker of the cluster; the watchers of ``feed``
    see it begin and end (its moves are not sent back while it runs)."""
    p2 = item.second if item.p1 == item.first else item.first
    seats = (names[item.p1], names[p2])
    if feed is not None:
        game = games.load(runner.config.game)
        feed.game(item.id, item.round, seats, opening_state(game, openings[item.opening]), None)
    answer = await runner.play(item, openings[item.opening], seats)
    result = answer.result
    assert result is not None  # ``play`` raises for a game abandoned
    result.record.comments.append(f"played on the worker {answer.worker}")
    if feed is not None:
        words = result_words(result.winner, result.reason, seats, result.detail)
        feed.publish(result_message(item.id, result.winner, result.reason, result.plies, words))
    return result, answer.secret_seeds, answer


async def play_scheduled(
    game: games.Game,
    slot: Slot,
    item: ScheduledGame,
    *,
    names: list[str],
    openings: Sequence[Opening] | Mapping[int, Opening],
    limits: MoveLimits,
    rules: Adjudication,
    config: EventConfig,
    feed: Feed | None = None,
    own: list[TimeControl | None] | None = None,
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
        own=(None, None) if own is None else (own[seats[0]], own[seats[1]]),
    )
    players: list[Player] = []
    for seat, index in enumerate(seats):
        try:
            players.append(await slot.get(index, game))
        except ForfeitError as exc:
            await slot.publish_traces(item.id, seats)
            return no_start(game, setup, seat, exc), setup.secret_seeds
    on_move = None
    if feed is not None:
        start = opening_state(game, setup.opening)
        clocks = [each.clock for each in setup.seat_limits]
        base = None
        if clocks[0] is not None and clocks[1] is not None:
            base = (clocks[0].base_ms, clocks[1].base_ms)
        on_move = feed.game(item.id, item.round, setup.names, start, base)
    finished = False
    try:
        result = await play_game(game, (players[0], players[1]), setup, on_move=on_move)
        finished = True
    finally:
        # the game is over (or stopped for good): its protocol traces may be read now; before
        # a failed player is closed, so that its trace ends where its game did
        with trio.CancelScope(shield=True):
            await slot.publish_traces(item.id, seats, finished=finished)
    if feed is not None:
        words = result_words(result.winner, result.reason, setup.names, result.detail)
        feed.publish(result_message(item.id, result.winner, result.reason, result.plies, words))
    for seat in result.failed:
        await players[seat].close()
    return result, setup.secret_seeds

"""The command line of events: ``enginesrv match``, ``enginesrv tournament`` and
``enginesrv results``, run with the progress display and the result tables.

Their flags are in ``event_args``; the same settings may come from a TOML file (``--config``),
the command line winning (``event_config``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO, TypeVar

import outcome
import trio

from enginesrv import orphans
from enginesrv.admission import Admission, event_admission
from enginesrv.cli.common import Handler, Subcommands
from enginesrv.cli.display import Display, write_tables
from enginesrv.cli.event_args import add_event, add_results
from enginesrv.cli.event_config import event_config
from enginesrv.cli.ladder_report import ladder_boards, write_ladder_report
from enginesrv.cli.report import write_report
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.feed import Feed
from enginesrv.event.lock import lock_event
from enginesrv.event.prepared import PreparedEvent, prepare
from enginesrv.event.results.ratings import RatingError
from enginesrv.event.results.report import report_json
from enginesrv.event.results.standings import PairingResult, load_results
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.runners.base import Venue
from enginesrv.event.runners.cluster import ClusterVenue
from enginesrv.event.runners.local import LocalVenue
from enginesrv.event.tournament import run_event
from enginesrv.ladder.settings import LadderError, LadderSettings
from enginesrv.ladder.standings import Board, ladder_json
from enginesrv.tune.config import TUNE_KEY

T = TypeVar("T")


def add_event_commands(sub: Subcommands, fail: type[Exception]) -> None:
    """Register ``match``, ``tournament`` and ``results`` on the subcommands ``sub``; ``fail``
    is the CLI's error type."""
    for tournament in (False, True):
        p = add_event(sub, tournament=tournament)
        p.set_defaults(func=_handler(fail, tournament=tournament))
    add_results(sub).set_defaults(func=_results_handler(fail))


def _handler(fail: type[Exception], *, tournament: bool) -> Handler:
    command = "tournament" if tournament else "match"

    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        if args.cluster is not None and not args.cluster.strip():
            raise fail("--cluster needs the scheduler's address: tcp://HOST:PORT")
        if hasattr(args, "cluster_listen") and not args.cluster:
            raise fail("--cluster-listen goes with --cluster: give both, or neither")
        config = event_config(args, fail, tournament)
        out_dir = Path(args.out) if args.out else None
        with contextlib.ExitStack() as held:
            event = _prepared(held, config, out_dir, resume=args.resume, fail=fail)
            standings = _play(
                args, out, err, event=event, out_dir=out_dir, fail=fail, command=command
            )
        write_tables(out, event.sprt, standings)

    return run


def _prepared(
    held: contextlib.ExitStack,
    config: EventConfig,
    out_dir: Path | None,
    *,
    resume: bool,
    fail: type[Exception],
) -> PreparedEvent:
    """The event to play, checked and parsed (``prepare``): ``config``, or with ``resume``
    the event stored in ``out_dir``, whose lock ``held`` keeps."""
    try:
        # the directory is this run's from the look at what it holds to the last game
        held.enter_context(lock_event(out_dir))
        event = prepare(config, out_dir, resume=resume)
        if resume and out_dir is not None and _holds_tuning_run(out_dir):
            # its games would be played without their probes, and then taken as the run's
            raise EventError(
                f"{out_dir} holds a tuning run: resume it with enginesrv tune --resume "
                f"--out {out_dir}"
            )
        return event
    except EventError as exc:
        raise fail(str(exc)) from None


def _holds_tuning_run(out_dir: Path) -> bool:
    """Whether the event stored in ``out_dir`` (read and checked by ``prepare``) is the games
    of a tuning run (``enginesrv tune``)."""
    db = ResultsDB(out_dir / "results.sqlite", read_only=True)
    try:
        return db.get(TUNE_KEY) is not None
    finally:
        db.close()


def _play(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    *,
    event: PreparedEvent,
    out_dir: Path | None,
    fail: type[Exception],
    command: str,
) -> list[PairingResult]:
    """Play the event, shown as it goes; its standings at the end."""
    config = event.config
    traces = debug_traces(event, out_dir, err, command)
    display = Display(out, err, event, live=err.isatty())
    if args.cluster:
        display.where = f"on the cluster {args.cluster}"
    # the event's doors (its watching page, its cluster result port) share one
    # admission, within the descriptors its own games leave
    admission = event_admission(config.concurrency)
    watch = _watch_front(args, out, fail, admission)
    # the arbiter is the last reaper of its engines' processes (``orphans``)
    orphans.adopt()
    play = functools.partial(
        run_event,
        event,
        out_dir,
        on_game=display.game,
        on_start=display.start,
        on_tick=display.tick if display.live else None,
        venue=event_venue(args, traces, admission, functools.partial(warn, err, command)),
    )
    try:
        return run_shown(
            lambda: swept(functools.partial(_run_watched, watch, play)), display.close, fail
        )
    except OSError as exc:
        raise fail(f"--web {args.web}: cannot listen: {exc.strerror or exc}") from None


def run_shown(
    main: Callable[[], Awaitable[T]], close: Callable[[], None], fail: type[Exception]
) -> T:
    """Run ``main`` (an event's loop) with trio, then ``close`` its display, whatever happens:
    an ``EventError`` becomes the command's one-line error, and an interrupt leaves what was
    stored (``--resume`` goes on from there)."""
    try:
        return trio.run(main)
    except EventError as exc:
        raise fail(str(exc)) from None
    except BaseExceptionGroup as group:
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        raise
    finally:
        close()


async def swept(run: Callable[[], Awaitable[T]]) -> T:
    """``run()``, while what an engine leaves when it kills its reaper is swept
    (``orphans.watch``); what it raises is raised as it is."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(orphans.watch)
        done = await outcome.acapture(run)
        nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(orphans.sweep)  # the last engines are closed: all of it
    return done.unwrap()


def warn(err: TextIO, command: str, text: str) -> None:
    """A one-line warning of the event on ``err``."""
    err.write(f"enginesrv {command}: warning: {text}\n")
    err.flush()


def event_venue(
    args: argparse.Namespace,
    traces: Path | None,
    admission: Admission,
    on_notice: Callable[[str], None],
) -> Venue:
    """Where the event's games are played: on the cluster of ``--cluster``, else here."""
    if args.cluster:
        listen = getattr(args, "cluster_listen", ("", 0))
        return ClusterVenue(args.cluster, listen, admission=admission)
    return LocalVenue(traces=traces, on_notice=on_notice)


def debug_traces(
    event: PreparedEvent, out_dir: Path | None, err: TextIO, command: str
) -> Path | None:
    """Where ``--debug`` publishes its traces: ``DIR/logs`` (None: the default), or without
    ``--out`` a new temporary directory, named on ``err``."""
    if not event.config.debug:
        return None
    if event.all_bots:
        err.write(f"{command}: --debug traces cmd: and tcp: engines; this event has none\n")
        return None
    if out_dir is not None:
        return None
    traces = Path(tempfile.mkdtemp(prefix="enginesrv-debug-"))
    err.write(f"{command}: --debug without --out: the protocol traces go to {traces}/\n")
    err.flush()
    return traces


Watch = Callable[[Feed, trio.Event, trio.TaskStatus[str]], Awaitable[None]]


def _watch_front(
    args: argparse.Namespace, out: TextIO, fail: type[Exception], admission: Admission
) -> Watch | None:
    """The watching page ``--web`` asks for (None without it), admitting its connections
    with ``admission``."""
    if args.web is None:
        return None
    try:
        from enginesrv.web.watch import serve_watch  # noqa: PLC0415 (the web extra may be missing)
    except ImportError as exc:
        raise fail(
            f"--web needs the web extra ({exc.name} is missing): pip install 'enginesrv[web]'"
        ) from None

    async def watch(feed: Feed, stop: trio.Event, task_status: trio.TaskStatus[str]) -> None:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(
                functools.partial(
                    serve_watch,
                    feed,
                    stop,
                    host=args.web_host,
                    port=args.web,
                    admission=admission,
                )
            )
            out.write(f"web {url}\n")
            out.flush()
            task_status.started(url)

    return watch


async def _run_watched(
    watch: Watch | None, run: Callable[..., Awaitable[list[PairingResult]]]
) -> list[PairingResult]:
    """Run the event; with a watching page, serve it from before the first game to the end."""
    if watch is None:
        return await run()
    feed = Feed()
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(watch, feed, stop)
        try:
            # what the event raises (an EventError) leaves the page's nursery as it is, not
            # in an exception group: the command prints it as its one-line error
            done = await outcome.acapture(run, feed=feed)
        finally:
            feed.publish({"type": "end"})
            stop.set()
    return done.unwrap()


def _results_handler(fail: type[Exception]) -> Handler:
    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        del err
        try:
            ladder = ladder_boards(Path(args.dir), args.anchor)
        except LadderError as exc:
            raise fail(str(exc)) from None
        if ladder is not None:
            _ladder_results(out, ladder, json_out=args.json, fail=fail)
            return
        try:
            config, standings, rows = load_results(Path(args.dir))
        except EventError as exc:
            raise fail(str(exc)) from None
        try:
            if args.json:
                payload = report_json(config, standings, rows, Path(args.dir), anchor=args.anchor)
                out.write(json.dumps(payload, indent=2) + "\n")
                return
            # whole or not at all: an error (a bad --anchor) comes after the first tables
            report = io.StringIO()
            write_report(report, config, standings, rows, Path(args.dir), anchor=args.anchor)
        except (EventError, RatingError) as exc:
            raise fail(str(exc)) from None
        out.write(report.getvalue())

    return run


def _ladder_results(
    out: TextIO,
    ladder: tuple[LadderSettings, dict[str, Board]],
    *,
    json_out: bool,
    fail: type[Exception],
) -> None:
    """``enginesrv results`` of a ladder's folder (``cli.ladder_report``)."""
    settings, boards = ladder
    try:
        if json_out:
            out.write(json.dumps(ladder_json(boards, settings.tc), indent=2) + "\n")
            return
        report = io.StringIO()
        write_ladder_report(report, settings, boards)
    except RatingError as exc:
        raise fail(str(exc)) from None
    out.write(report.getvalue())

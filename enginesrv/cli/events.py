"""The command line of events: ``enginesrv match``, ``enginesrv tournament`` and
``enginesrv results``, with the progress display and the result tables.

Flags follow cutechess-cli and fastchess where they have one (``--tc 40/60+0.6``, ``--st``,
``--games``, ``--rounds``, ``--repeat``, ``--openings``, ``--concurrency``, ``--sprt``); the
same settings may come from a TOML file (``--config``), the command line winning.
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
from typing import Any, TextIO, TypeVar

import outcome
import trio

import games
from enginesrv import orphans
from enginesrv.admission import Admission, event_admission
from enginesrv.cli.common import port
from enginesrv.cli.display import Display, write_report, write_tables
from enginesrv.cli.event_config import event_config, setting_type
from enginesrv.cli.event_config import toml_settings as _toml_settings  # noqa: F401 (its former name)
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.feed import Feed
from enginesrv.event.lock import lock_event
from enginesrv.event.play.controls import DEFAULT_MAX_PLIES
from enginesrv.event.play.players import parse_player
from enginesrv.event.prepared import prepare
from enginesrv.event.results.ratings import RatingError
from enginesrv.event.results.report import report_json
from enginesrv.event.results.standings import PairingResult, load_results
from enginesrv.event.runners.cluster import parse_listen
from enginesrv.event.tournament import run_event

T = TypeVar("T")

Handler = Callable[[argparse.Namespace, TextIO, TextIO], None]


def cluster_listen(text: str) -> tuple[str, int] | None:
    """``--cluster-listen``: ``[HOST][:PORT]`` or ``off``."""
    try:
        return parse_listen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_event_commands(sub: Any, fail: type[Exception]) -> None:
    """Register ``match``, ``tournament`` and ``results`` on the subcommands ``sub`` (an
    argparse subparsers object); ``fail`` is the CLI's error type."""
    players_help = (
        "bot:NAME[:OPTION=VALUE,...] (a built-in or plug-in bot, e.g. bot:alphabeta:Hash=64), "
        "cmd:COMMAND (an engine speaking the text protocol or UGI over stdio), or "
        "tcp:HOST:PORT (a running server); name=NAME: before any of them names the player, "
        "tc=TC: gives it a time control of its own (tc=1:00+1:bot:alphabeta)"
    )
    for name, tournament, summary, description, count in (
        (
            "match", False, "play a match between two players",
            "Play a match between two players as a fair arbiter: every move checked with the "
            "rules, clocks kept on the arbiter's side, forfeits and adjudications recorded with "
            "their reason, colours alternated.", "the two players",
        ),
        (
            "tournament", True, "play a round robin or gauntlet tournament",
            "Play every pairing of the players (round robin), or the first player against each "
            "other one (--gauntlet).", "two or more players",
        ),
    ):  # fmt: skip
        p = sub.add_parser(name, help=summary, description=f"{description} {players_help}.")
        p.add_argument(
            "game", metavar="GAME", nargs="?", help="game: " + ", ".join(games.available())
        )
        p.add_argument("players", metavar="PLAYER", nargs="*", help=count)
        _add_event_flags(p, tournament=tournament)
        p.set_defaults(func=_handler(fail, tournament=tournament))

    p = sub.add_parser(
        "results",
        help="print the results of a match or tournament directory",
        description="Print the results stored in DIR/results.sqlite: per pairing W/D/L (from "
        "the first-named player's side), score, Elo with its 95% interval, LOS, the pentanomial "
        "of paired games, and the SPRT log-likelihood ratio when SPRT ran; a rating table of "
        "all players fitted by maximum likelihood over all games (docs/tournaments.md); the "
        "crosstable; how each player's games ended; and each player's search depth, nodes per "
        "second and time where the engines reported them.",
    )
    p.add_argument("dir", metavar="DIR", help="the --out directory of the event")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: pairings, ratings, crosstable, reasons, search",
    )
    p.add_argument(
        "--anchor",
        metavar="NAME",
        help="rate the player NAME at 0 Elo (without it the rated players average 0)",
    )
    p.set_defaults(func=_results_handler(fail))


def _add_event_flags(p: argparse.ArgumentParser, *, tournament: bool) -> None:
    a = p.add_argument
    a("--config", metavar="FILE", help="a TOML file of settings (game, players, and the flags)")
    a(
        "--tc", metavar="TC",
        help="each player's clock, [MOVES/]TIME[+INC] with TIME in seconds, M:SS or H:MM:SS "
        "and INC in seconds (e.g. 40/60+0.6, 2+0.05, 1:30+1), or inf (no clock); a player's "
        "own tc=TC: replaces it (and --st) for that player",
    )  # fmt: skip
    a(
        "--st",
        metavar="SECONDS",
        type=setting_type("st", float),
        help="seconds per move (default 1, no other limit)",
    )
    a("--depth", metavar="D", type=setting_type("depth", int), help="search depth per move")
    a("--nodes", metavar="N", type=setting_type("nodes", int), help="nodes per move")
    a(
        "--games",
        metavar="N",
        type=setting_type("games", int),
        help="games per pairing and round (default 2)",
    )
    a("--rounds", metavar="N", type=setting_type("rounds", int), help="rounds (default 1)")
    a(
        "--repeat",
        action="store_true",
        default=None,
        help="play each opening twice, colours swapped",
    )
    a("--openings", metavar="FILE", help="openings: 'moves TOKEN ...' or 'fen POSITION' lines")
    a(
        "--openings-order",
        choices=("sequential", "random"),
        help="take the openings in file order (default) or shuffled by --seed",
    )
    a(
        "--concurrency",
        metavar="N",
        type=setting_type("concurrency", int),
        help="games played at once (default 1)",
    )
    a(
        "--seed",
        metavar="S",
        type=setting_type("seed", int),
        help="the seed of every random choice (default 1)",
    )
    a("--out", metavar="DIR", help="keep DIR/results.sqlite, DIR/games/ and DIR/logs/ (to resume)")
    a("--resume", action="store_true", help="finish the event stored in --out DIR")
    a("--sprt", metavar="elo0=E0,elo1=E1,alpha=A,beta=B", help="stop at an SPRT decision")
    a(
        "--max-plies",
        metavar="N",
        type=setting_type("max_plies", int),
        help=f"adjudicate a draw after N plies (default {DEFAULT_MAX_PLIES})",
    )
    a(
        "--repetitions",
        metavar="N",
        type=setting_type("repetitions", int),
        help="a draw when a position occurs N times",
    )
    a("--resign", metavar="movecount=N,score=CP", help="resign on a low score held N moves")
    a("--draw", metavar="movenumber=N,movecount=N,score=CP", help="a draw on level scores")
    a(
        "--timemargin",
        metavar="MS",
        type=setting_type("timemargin", int),
        help="lateness forgiven on a clock (default 0)",
    )
    a("--event", metavar="NAME", help="the event name written into the records")
    a(
        "--startup-timeout",
        metavar="SECONDS",
        type=setting_type("startup_timeout", float),
        help="wait for ugiok (default 10)",
    )
    a(
        "--ready-timeout",
        metavar="SECONDS",
        type=setting_type("ready_timeout", float),
        help="wait for readyok (default 5)",
    )
    a(
        "--move-timeout", metavar="SECONDS", type=setting_type("move_timeout", float),
        help="without a clock (--depth, --nodes), the longest one move may take before the "
        "player is forfeited with stall (default 60)",
    )  # fmt: skip
    a(
        "--isolate", action="store_true", default=None,
        help="run each cmd: engine under bubblewrap (bwrap): the file system read-only, its "
        "own /proc, a private empty /tmp, /var/tmp, /dev/shm and TMPDIR, no view of the "
        "event's directory, and no network",
    )  # fmt: skip
    a(
        "--isolate-network", action="store_true", default=None,
        help="with --isolate: keep the host's network for the engines",
    )  # fmt: skip
    a(
        "--no-contain", action="store_true", default=None,
        help="in a game with hidden information (yinyang), run the cmd: engines as they are; "
        "by default they run as under --isolate but with the network, where bubblewrap can",
    )  # fmt: skip
    a(
        "--debug", action="store_true", default=None,
        help="trace every line sent to and read from each cmd: and tcp: engine, time-stamped, "
        "into DIR/logs/game-NNNNN-pS-NAME.trace once each game is over (without --out, into a "
        "temporary directory named on stderr)",
    )  # fmt: skip
    a(
        "--log-cap", metavar="MIB", type=setting_type("log_cap", int),
        help="keep at most MIB mebibytes of each cmd: engine's standard error, and of each "
        "--debug trace, per game; the rest is left out, and the log says where it was cut "
        "(default 64)",
    )  # fmt: skip
    a(
        "--cluster", metavar="tcp://HOST:PORT", default=None,
        help="play the games on the workers of the Dask scheduler at this address, as many at "
        "once as it has worker threads; this machine keeps the results, records and display "
        "(docs/distributed.md; needs the distributed extra)",
    )  # fmt: skip
    a(
        "--cluster-listen", metavar="[HOST][:PORT]|off", type=cluster_listen,
        default=argparse.SUPPRESS,
        help="with --cluster: where the workers send each game's result straight back (default: "
        "this machine's address on the way to the scheduler, any free port); off: the results "
        "come through Dask, a few milliseconds later each",
    )  # fmt: skip
    a(
        "--rating-interval", metavar="N", type=setting_type("rating_interval", int),
        help="print the rating table after every N games (default 0: at the end only)",
    )  # fmt: skip
    if tournament:
        a("--gauntlet", action="store_true", default=None, help="the first player meets the rest")
    a(
        "--web", metavar="PORT", type=port, default=None,
        help="serve a page to watch the games live and replay the finished ones on PORT (0: "
        "any free port), and their feed on /events; prints 'web http://HOST:PORT/' first "
        "(docs/web.md; needs the web extra)",
    )  # fmt: skip
    a("--web-host", metavar="HOST", default="127.0.0.1", help="the address of --web (127.0.0.1)")


def _handler(fail: type[Exception], *, tournament: bool) -> Handler:
    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        if args.cluster is not None and not args.cluster.strip():
            raise fail("--cluster needs the scheduler's address: tcp://HOST:PORT")
        if hasattr(args, "cluster_listen") and not args.cluster:
            raise fail("--cluster-listen goes with --cluster: give both, or neither")
        config = event_config(args, fail, tournament)
        out_dir = Path(args.out) if args.out else None
        with contextlib.ExitStack() as held:
            try:
                # the directory is this run's from the look at what it holds to the last game
                held.enter_context(lock_event(out_dir))
                # checked and parsed once: the stored event on --resume, with the name an
                # unnamed event is given
                event = prepare(config, out_dir, resume=args.resume)
            except EventError as exc:
                raise fail(str(exc)) from None
            config = event.config
            traces = _debug_traces(config, out_dir, err, "tournament" if tournament else "match")
            display = Display(out, err, config, live=err.isatty())
            if args.cluster:
                display.where = f"on the cluster {args.cluster}"
            # the event's doors (its watching page, its cluster result port) share one
            # admission, within the descriptors its own games leave
            admission = event_admission(config.concurrency)
            watch = _watch_front(args, out, fail, admission)
            # the arbiter is the last reaper of its engines' processes (``orphans``)
            orphans.adopt()
            try:
                standings = trio.run(
                    lambda: _swept(
                        functools.partial(
                            _run_watched,
                            watch,
                            functools.partial(
                                run_event,
                                event,
                                out_dir,
                                on_game=display.game,
                                on_start=display.start,
                                on_tick=display.tick if display.live else None,
                                traces=traces,
                                cluster=args.cluster,
                                cluster_listen=getattr(args, "cluster_listen", ("", 0)),
                                admission=admission,
                                on_notice=functools.partial(
                                    _warn, err, "tournament" if tournament else "match"
                                ),
                            ),
                        )
                    )
                )
            except OSError as exc:
                display.close()
                raise fail(f"--web {args.web}: cannot listen: {exc.strerror or exc}") from None
            except EventError as exc:
                display.close()
                raise fail(str(exc)) from None
            except BaseExceptionGroup as group:
                display.close()
                if group.subgroup(KeyboardInterrupt) is not None:
                    raise KeyboardInterrupt from None  # the games stored so far are kept
                raise
            display.close()
        write_tables(out, config, standings)

    return run


async def _swept(run: Callable[[], Awaitable[T]]) -> T:
    """``run()``, while what an engine leaves when it kills its reaper is swept
    (``orphans.watch``); what it raises is raised as it is."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(orphans.watch)
        done = await outcome.acapture(run)
        nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(orphans.sweep)  # the last engines are closed: all of it
    return done.unwrap()


def _warn(err: TextIO, command: str, text: str) -> None:
    """A one-line warning of the event on ``err``."""
    err.write(f"enginesrv {command}: warning: {text}\n")
    err.flush()


def _debug_traces(
    config: EventConfig, out_dir: Path | None, err: TextIO, command: str
) -> Path | None:
    """Where ``--debug`` publishes its traces: ``DIR/logs`` (None: the default), or without
    ``--out`` a new temporary directory, named on ``err``."""
    if not config.debug:
        return None
    if not any(parse_player(text).kind != "bot" for text in config.players):
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

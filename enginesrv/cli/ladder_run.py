"""``enginesrv ladder run``: a ladder server (``enginesrv.ladder.server``, docs/ladder.md)."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import trio

from enginesrv.cli.common import (
    CommandError,
    natural_at_most,
    port,
    seconds,
    seconds_or_zero,
    tls_context,
)
from enginesrv.event.play.players import PlayerSpec, PlayerSpecError, name_problem, parse_player
from enginesrv.ladder.server import open_ladder, serve_ladder, watch_signals
from enginesrv.ladder.settings import (
    GRACE,
    LINKS_PER_PLAYER,
    MIN_GAMES,
    LadderError,
    LadderSettings,
)
from enginesrv.ladder.state import CHALLENGES, LadderRun
from enginesrv.logs import configure as configure_logging
from enginesrv.logs import tell
from enginesrv.serve.app import exit_on_early_signal
from enginesrv.serve.certificates import ignore_hangups, server_context
from protocol.login import NAME


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """The options of ``ladder run``."""
    run.add_argument(
        "--game",
        action="append",
        default=[],
        metavar="GAME",
        required=True,
        help="a game the ladder plays (repeat for several); a bot plays those its engine "
        "names, or the first when it names none",
    )
    run.add_argument("--tc", required=True, metavar="TC", help="the games' clock: 2+0.05, 1:00+1")
    run.add_argument("--out", required=True, metavar="DIR", help="the ladder's folder")
    run.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    run.add_argument("--port", type=port, default=7780, help="the port (0: a free one)")
    run.add_argument(
        "--house",
        action="append",
        default=[],
        metavar="SPEC",
        help="a house bot, always connected: bot:alphabeta:Level=3, optionally after "
        "name=NAME: (repeat for several; the first anchors the ratings at 0)",
    )
    run.add_argument(
        "--grace",
        type=seconds_or_zero,
        default=GRACE,
        metavar="S",
        help=f"seconds a disconnected player has to come back into its game (default {GRACE:g})",
    )
    run.add_argument(
        "--min-games",
        type=int,
        default=MIN_GAMES,
        metavar="N",
        help=f"games before a rating is shown (default {MIN_GAMES})",
    )
    run.add_argument(
        "--games-per-player",
        type=int,
        default=LINKS_PER_PLAYER,
        metavar="N",
        help=f"connections (games at once) one player may hold (default {LINKS_PER_PLAYER})",
    )
    run.add_argument(
        "--web",
        type=port,
        metavar="PORT",
        help="a web port too (0: a free one): the page of live games, /ladder.json, the "
        "records, and bots over WebSocket at /bot; prints 'web URL' after the listening line",
    )
    run.add_argument(
        "--challenges",
        type=natural_at_most(1000),
        default=CHALLENGES,
        metavar="N",
        help="games people may play against the bots from the web page at once, one an "
        f"address (0: none; default {CHALLENGES}); they are not rated",
    )
    run.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="serve TLS with this certificate chain (read again on SIGHUP, for a renewed one)",
    )
    run.add_argument("--tls-key", metavar="FILE", help="the certificate's private key")
    run.add_argument(
        "--startup-timeout",
        type=seconds,
        default=10.0,
        metavar="S",
        help="seconds a bot has to answer ugi once logged in (default 10)",
    )
    run.add_argument("--log-json", action="store_true", help="logs as JSON lines on stderr")


def house_specs(texts: list[str]) -> tuple[PlayerSpec, ...]:
    """The ``--house`` specs: bots only, each with a ladder name of its own."""
    specs = []
    for text in texts:
        try:
            spec = parse_player(text)
        except PlayerSpecError as exc:
            raise CommandError(f"--house: {exc}") from None
        if spec.kind != "bot":
            raise CommandError(f"--house {text!r}: a house bot is bot:NAME[:OPTIONS]")
        if NAME.fullmatch(spec.name) is None or name_problem(spec.name):
            raise CommandError(
                f"--house {text!r}: its name {spec.name!r} is no player's name (a letter, then "
                "up to 31 of A-Z a-z 0-9 _ . -): give one with name=NAME:"
            )
        specs.append(spec)
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise CommandError("--house: two house bots share a name; give each one with name=NAME:")
    return tuple(specs)


def cmd_ladder_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv ladder run``."""
    del err
    exit_on_early_signal()
    if args.tls_cert is not None:
        ignore_hangups()  # SIGHUP reads the certificate again
    try:
        settings = LadderSettings.make(args.game, args.tc)
    except LadderError as exc:
        raise CommandError(str(exc)) from None
    if args.min_games < 0 or args.games_per_player < 1:
        raise CommandError("--min-games is 0 or more, --games-per-player 1 or more")
    run = LadderRun(
        folder=Path(args.out),
        settings=settings,
        house=house_specs(args.house),
        grace=args.grace,
        min_games=args.min_games,
        links_per_player=args.games_per_player,
        host=args.host,
        port=args.port,
        tls=tls_context(args.tls_cert, args.tls_key),
        reload_tls=functools.partial(server_context, args.tls_cert, args.tls_key, ask=False),
        web=args.web,
        challenges=args.challenges,
    )
    run.deadlines.startup = args.startup_timeout
    configure_logging(json=args.log_json)

    listening: list[str] = []

    def ready(host: str, bound: int) -> None:
        listening.append(f"{host}:{bound}")
        tell(f"listening {host}:{bound}\n", out)

    def page(url: str) -> None:
        tell(f"web {url}\n", out)

    try:
        trio.run(functools.partial(_main, run, ready, page))
    except (LadderError, OSError, BaseExceptionGroup) as caught:
        failure = _first_failure(caught)
        if isinstance(failure, LadderError):
            raise CommandError(str(failure)) from None
        if isinstance(failure, OSError):
            why = failure.strerror or str(failure)
            if listening:  # it served, then failed: no listening went wrong
                raise CommandError(f"stopped on {listening[0]}: {why}") from None
            raise CommandError(f"cannot listen on {args.host}:{args.port}: {why}") from None
        raise


def _first_failure(exc: BaseException) -> BaseException | None:
    """The first ``LadderError`` or ``OSError`` in ``exc`` (an exception group's leaves)."""
    if isinstance(exc, LadderError | OSError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_failure(inner)
            if found is not None:
                return found
    return None


async def _main(
    run: LadderRun, ready: Callable[[str, int], None], page: Callable[[str], None]
) -> None:
    async with open_ladder(run) as ladder, trio.open_nursery() as nursery:
        await nursery.start(watch_signals, ladder.stop)
        await serve_ladder(ladder, on_ready=ready, on_page=page)
        nursery.cancel_scope.cancel()
    tell("ladder: stopped; the games being played were not stored\n")

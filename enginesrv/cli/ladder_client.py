"""``enginesrv ladder-client``: connect a local engine, or one of our bots, to a ladder
(``enginesrv.ladder.client``, docs/ladder.md)."""

from __future__ import annotations

import argparse
import functools
import signal
import ssl
from typing import TextIO

import trio

from enginesrv import orphans
from enginesrv.cli.common import CommandError, Subcommands, positive
from enginesrv.cli.events import swept
from enginesrv.event.play.contain import UNCONTAINED, sandbox_command, sandbox_problem
from enginesrv.event.play.players import PlayerSpecError, parse_player
from enginesrv.event.results.wording import printable
from enginesrv.ladder.client import (
    ClientSettings,
    LadderClientError,
    bot_command,
    option_lines,
    run_client,
)
from enginesrv.logs import tell
from enginesrv.safefiles import FileRefusedError, open_regular, read_capped
from protocol.login import NAME, TOKEN

MAX_TOKEN_FILE = 1024


def add_ladder_client(sub: Subcommands) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "ladder-client",
        help="connect an engine (or one of our bots) to a ladder",
        description="Connect to a ladder (enginesrv ladder run) as player NAME and let "
        "the engine play there: COMMAND (after --) is started as an event starts a cmd: "
        "engine once the ladder accepts the login, and bytes pass both ways; a dropped "
        "connection is made again with backoff. Instead of a command, bot:NAME[:OPTION="
        "VALUE,...] runs one of our bots. Runs until SIGINT or SIGTERM.",
    )
    p.add_argument("--server", required=True, metavar="HOST:PORT", help="the ladder's address")
    p.add_argument("--name", required=True, help="the player's name on the ladder")
    p.add_argument(
        "--token-file", required=True, metavar="F", help="a file holding the player's token"
    )
    p.add_argument("--tls", action="store_true", help="connect with TLS (the system's CAs)")
    p.add_argument(
        "--tls-ca", metavar="FILE", help="with --tls: trust this certificate (a ladder's own)"
    )
    p.add_argument(
        "--games",
        type=positive,
        default=1,
        metavar="N",
        help="games to play at once: N connections, an engine each (default 1)",
    )
    p.add_argument(
        "--no-contain",
        action="store_true",
        help="run the engine as it is, not in the sandbox (bubblewrap) an event would use",
    )
    p.add_argument(
        "engine",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND... | bot:NAME",
        help="the engine's command line, or bot:NAME[:OPTION=VALUE,...]",
    )
    return p


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"--server {text!r}: write HOST:PORT with a port 1-65535")
    return host.strip("[]"), int(port)


def _token(path: str) -> str:
    try:
        data = read_capped(open_regular(path), MAX_TOKEN_FILE)
    except FileRefusedError as exc:
        raise CommandError(f"--token-file: {exc.reason}") from None
    except OSError as exc:
        raise CommandError(f"--token-file {printable(path)}: {exc.strerror or exc}") from None
    token = data.decode("ascii", "replace").strip()
    if TOKEN.fullmatch(token) is None:
        raise CommandError(f"--token-file {printable(path)}: it holds no token")
    return token


def _engine(
    words: list[str], contain: bool, err: TextIO
) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """The engine's command, the lines it is sent first, and whether its stderr is dropped."""
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        raise CommandError("give the engine: -- COMMAND..., or bot:NAME")
    first: tuple[str, ...] = ()
    if len(words) == 1 and words[0].startswith("bot:"):
        try:
            spec = parse_player(words[0])
        except PlayerSpecError as exc:
            raise CommandError(str(exc)) from None
        command = bot_command(spec.bot)
        first = tuple(line.decode() for line in option_lines(spec.options))
        quiet = True
    else:
        command, quiet = tuple(words), False
    if contain:
        problem = sandbox_problem(network=True)
        if problem is None:
            command = sandbox_command(None, command, network=True) + command
        else:
            err.write(f"ladder-client: the engine runs uncontained: {problem}; {UNCONTAINED}\n")
    return command, first, quiet


def cmd_ladder_client(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv ladder-client``."""
    del out
    host, port = _address(args.server)
    if NAME.fullmatch(args.name) is None:
        raise CommandError(f"--name {args.name!r}: a letter, then up to 31 of A-Z a-z 0-9 _ . -")
    token = _token(args.token_file)
    tls = None
    if args.tls or args.tls_ca:
        try:
            tls = ssl.create_default_context(cafile=args.tls_ca)
        except (OSError, ssl.SSLError) as exc:
            raise CommandError(f"--tls-ca: {printable(str(exc))}") from None
    command, first, quiet = _engine(args.engine, not args.no_contain, err)

    def say(text: str) -> None:
        tell(f"ladder-client: {printable(text)}\n", err)

    settings = ClientSettings(
        host,
        port,
        args.name,
        token,
        command,
        first_lines=tuple(line.encode() for line in first),
        tls=tls,
        games=args.games,
        quiet_engine=quiet,
        say=say,
    )
    orphans.adopt()  # what an engine leaves when it kills its reaper is ended too
    try:
        trio.run(functools.partial(swept, functools.partial(_main, settings)))
    except LadderClientError as exc:
        raise CommandError(printable(str(exc))) from None
    except BaseExceptionGroup as group:
        found = group.subgroup(LadderClientError)
        if found is None:
            raise
        first_error = found.exceptions[0]
        while isinstance(first_error, BaseExceptionGroup):
            first_error = first_error.exceptions[0]
        raise CommandError(printable(str(first_error))) from None


async def _main(settings: ClientSettings) -> None:
    stop = trio.Event()
    async with trio.open_nursery() as nursery:

        async def signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                async for _ in received:
                    stop.set()
                    return

        nursery.start_soon(signals)
        await run_client(settings, stop)
        nursery.cancel_scope.cancel()
    tell("ladder-client: stopped\n")

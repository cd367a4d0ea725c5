"""The long-running commands and the checker: ``serve``, ``engine`` and ``check`` (their
flags are checked here; the programs themselves are ``enginesrv.serve.app``)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import ssl
import stat
from pathlib import Path
from typing import TextIO

import trio

from bots.registry import BotError, load_all
from enginesrv.cli.check import run_check
from enginesrv.cli.check_wire import Access, AccessError
from enginesrv.cli.common import CommandError, tls_context
from enginesrv.cli.rules import load_game
from enginesrv.event.results.wording import printable
from enginesrv.logs import configure as configure_logging
from enginesrv.safefiles import FileRefusedError, open_regular, read_capped
from enginesrv.serve.app import (
    WebStarter,
    exit_on_early_signal,
    peer_searches,
    run_engine,
    run_server,
)
from enginesrv.serve.auth import Keeper
from enginesrv.serve.certificates import ignore_hangups, server_context
from enginesrv.serve.connection import Limits
from enginesrv.serve.settings import SessionConfig
from enginesrv.tokens import TokenFile, TokenFileError
from protocol.text import MAX_AUTH_TOKEN


def _session_config(args: argparse.Namespace, limits: Limits, at_once: int) -> SessionConfig:
    """The sessions' configuration; ``at_once``: the positions of a session's analyses
    searched at once."""
    if args.game is not None:
        load_game(args.game)
    try:
        bots = load_all()  # a broken plug-in stops start-up here, by name
    except BotError as exc:
        raise CommandError(str(exc)) from None
    if args.bot not in bots:
        raise CommandError(f"bot {args.bot!r}: unknown; known bots: {', '.join(sorted(bots))}")
    budget = limits.hash_mb or None
    return SessionConfig(
        default_game=args.game,
        default_bot=args.bot,
        limits=limits.announced(),
        hash_limit=None if budget is None else max(1, budget // args.workers),
        hash_budget=budget,
        grace=args.stop_grace / 1000,
        max_movetime=limits.movetime,
        max_clock=limits.clock,
        max_plies=limits.plies,
        max_analyses=limits.analyses,
        analyses_at_once=at_once,
    )


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv serve``."""
    del out, err
    exit_on_early_signal()
    if args.tls_cert is not None:
        ignore_hangups()  # SIGHUP reads the certificate again
    _check_output_cap(args.max_output_bytes, max(args.max_line, args.max_frame))
    base = Limits(
        line=args.max_line,
        frame=args.max_frame,
        idle=args.idle_timeout,
        first_command=args.first_command_timeout,
        output=args.max_output_bytes,
        connections=args.max_connections,
        peer_connections=args.max_connections_per_peer,
        hash_mb=args.max_hash,
        movetime=args.max_movetime,
        clock=args.max_clock,
        plies=args.max_plies,
        analyses=args.max_analyses,
        output_total=args.max_output_total,
        prefix_v4=args.peer_prefix_v4,
        prefix_v6=args.peer_prefix_v6,
    )
    limits = dataclasses.replace(base, peer_searches=peer_searches(base, args.workers))
    config = _session_config(args, limits, limits.peer_searches)
    web = _web_front(args)
    keeper = _keeper(args.tokens)
    if keeper is not None:
        config = dataclasses.replace(config, auth="token")
    tls = tls_context(args.tls_cert, args.tls_key)
    configure_logging(json=args.log_json)
    where = f"{args.host}:{args.port}"
    if args.web is not None:
        where += f" (or the web port {args.web})"
    try:
        trio.run(
            functools.partial(
                run_server,
                host=args.host,
                port=args.port,
                workers=args.workers,
                limits=limits,
                config=config,
                web=web,
                keeper=keeper,
                tls=tls,
                reload_tls=functools.partial(
                    server_context, args.tls_cert, args.tls_key, ask=False
                ),
            )
        )
    except OSError as exc:
        raise CommandError(f"cannot listen on {where}: {_os_reason(exc)}") from None
    except BaseExceptionGroup as group:
        failure = _first_os_error(group)
        if failure is None:
            raise
        raise CommandError(f"cannot listen on {where}: {_os_reason(failure)}") from None


def _keeper(path: str | None) -> Keeper | None:
    """The tokens of ``--tokens`` (None without it), their file read once to check it."""
    if path is None:
        return None
    tokens = TokenFile(Path(path))
    if not tokens.path.is_file():
        raise CommandError(
            f"--tokens {printable(path)}: no such file (make it: enginesrv token add NAME "
            "--file FILE)"
        )
    try:
        tokens.accounts()
    except TokenFileError as exc:
        raise CommandError(f"--tokens: {printable(str(exc))}") from None
    return Keeper(tokens)


def _web_front(args: argparse.Namespace) -> WebStarter | None:
    """The web front ``--web`` asks for (None without it)."""
    if args.web is None:
        return None
    try:
        from enginesrv.web.http import HttpTimeouts  # noqa: PLC0415 (the web extra may be missing)
        from enginesrv.web.run import SocketPolicy, serve_web  # noqa: PLC0415
    except ImportError as exc:
        raise CommandError(
            f"--web needs the web extra ({exc.name} is missing): pip install 'enginesrv[web]'"
        ) from None
    return functools.partial(
        serve_web,
        host=args.host,
        port=args.web,
        sockets=SocketPolicy(
            args.max_websockets_per_peer,
            frozenset(name.lower().rstrip(".") for name in args.web_name),
        ),
        timeouts=HttpTimeouts(keep_alive=args.http_idle_timeout),
    )


def _os_reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


def _first_os_error(group: BaseExceptionGroup[BaseException]) -> OSError | None:
    for exc in group.exceptions:
        if isinstance(exc, OSError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _first_os_error(exc)
            if found is not None:
                return found
    return None


def _check_output_cap(cap: int, largest: int) -> None:
    if 0 < cap < largest:
        raise CommandError(
            f"--max-output-bytes {cap}: must be 0 (no limit) or at least the largest reply, "
            f"{largest} bytes (the line and frame limits)"
        )


MAX_TOKEN_FILE = 4096
"""The most of a ``check --token-file`` read (its first line holds the token)."""

NO_GAME_WARNING = (
    "enginesrv engine: warning: no --game: 'query', 'position' and 'go' answer error 200 "
    "no-game until a client sends 'setoption name Game value NAME'; a UGI manager "
    "(cutegames) sends none and waits for ever, so start it as 'enginesrv engine --game GAME'\n"
)
"""Written on stderr at once when ``enginesrv engine`` starts without ``--game``."""


def cmd_engine(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv engine``."""
    del out
    exit_on_early_signal()
    defaults = Limits()
    _check_output_cap(args.max_output_bytes, max(defaults.line, defaults.frame))
    limits = Limits(
        idle=0,
        first_command=0,
        connections=0,
        peer_connections=0,
        output=args.max_output_bytes,
        hash_mb=args.max_hash,
        peer_searches=1,
        movetime=args.max_movetime,
        clock=args.max_clock,
        plies=args.max_plies,
        analyses=args.max_analyses,
        output_total=0,
    )
    # one client has the workers: its analyses search on all of them
    config = _session_config(args, limits, args.workers)
    configure_logging(json=args.log_json)
    if args.game is None:
        err.write(NO_GAME_WARNING)
        err.flush()
    trio.run(
        functools.partial(
            run_engine, framing=args.framing, workers=args.workers, limits=limits, config=config
        )
    )


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv check``."""
    command = [c for c in args.engine if c != "--"] if args.engine else []
    if (args.connect is None) == (not command):
        raise CommandError("give either --connect HOST:PORT or -- COMMAND ...")
    access = _check_access(args)
    connect = None
    if args.connect is not None:
        host, _, port = args.connect.rpartition(":")
        if not host or not port.isdigit():
            raise CommandError(f"--connect {args.connect!r}: write HOST:PORT")
        connect = (host, int(port))
    try:
        ok = run_check(
            connect=connect,
            command=command or None,
            game=args.game,
            out=out,
            err=err,
            handshake_timeout=args.handshake_timeout,
            access=access,
        )
    except OSError as exc:
        raise CommandError(f"cannot reach {args.connect or command[0]!r}: {exc}") from None
    except AccessError as exc:
        raise CommandError(f"{args.connect}: {exc}") from None
    if not ok:
        raise SystemExit(1)


def _check_access(args: argparse.Namespace) -> Access | None:
    """How ``check --connect`` reaches its server: ``--tls``, ``--tls-ca``, ``--token-file``
    (None without them, which go with ``--connect`` only)."""
    given = [
        flag
        for flag, value in (
            ("--tls", args.tls),
            ("--tls-ca", args.tls_ca),
            ("--token-file", args.token_file),
        )
        if value
    ]
    if not given:
        return None
    if args.connect is None:
        raise CommandError(f"{given[0]} goes with --connect HOST:PORT (a server, not a command)")
    tls = None
    if args.tls or args.tls_ca is not None:
        try:
            tls = ssl.create_default_context(cafile=args.tls_ca)
        except OSError as exc:  # ssl.SSLError included
            why = printable(_os_reason(exc))
            raise CommandError(
                f"--tls-ca {printable(args.tls_ca)}: cannot be read as certificates ({why})"
            ) from None
    token = None if args.token_file is None else _read_token(args.token_file)
    return Access(tls=tls, token=token)


def _read_token(path: str) -> str:
    """The token on the first line of ``path``, a regular file not readable by every user.
    No error quotes what the file holds."""
    where = f"--token-file {printable(path)}"
    try:
        fd = open_regular(path)
        try:
            shared = os.name == "posix" and bool(os.fstat(fd).st_mode & stat.S_IROTH)
        except OSError:
            os.close(fd)
            raise
        if shared:
            os.close(fd)
            raise CommandError(
                f"{where}: readable by every user of this machine; make it private first "
                "(chmod 600)"
            )
        data = read_capped(fd, MAX_TOKEN_FILE)
    except FileRefusedError as exc:
        raise CommandError(f"{where}: {exc.reason}") from None
    except OSError as exc:
        raise CommandError(f"{where}: {_os_reason(exc)}") from None
    token = data.split(b"\n", 1)[0].rstrip(b"\r").decode("ascii", errors="replace")
    name, _, secret = token.partition(":")
    if not (name and secret and len(token) <= MAX_AUTH_TOKEN and token.isprintable()) or any(
        c.isspace() or c == "\ufffd" for c in token
    ):
        raise CommandError(
            f"{where}: its first line is not NAME:TOKEN (as enginesrv token add prints it)"
        )
    return token

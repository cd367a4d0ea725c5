"""The arguments of the long-running commands and the checker: ``serve``, ``engine`` and
``check``. Each ``add_*`` adds its command's parser to the subcommands and returns it; the
command's handler (``enginesrv.cli.programs``) is set by ``build_parser``."""

from __future__ import annotations

import argparse
import os

from enginesrv.admission import PREFIX_V6, WEBSOCKETS_PER_PEER
from enginesrv.cli.common import (
    Subcommands,
    natural,
    natural_at_most,
    port,
    positive,
    prefix_bits,
    seconds,
    seconds_or_zero,
)
from enginesrv.serve.settings import MAX_ANALYSES, MAX_CLOCK, MAX_MOVETIME, MAX_PLIES


def add_serve(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv serve``."""
    p = sub.add_parser(
        "serve",
        help="run the TCP server (both framings on one port)",
        description="Serve the enginesrv protocol (docs/protocol.md) on TCP: text (UGI) and "
        "msgpack-RPC on the same port, chosen by the first byte. Prints exactly one line "
        "'listening HOST:PORT' on stdout when ready; logs go to stderr. SIGINT or SIGTERM stops "
        "accepting, stops every search (sending its best move; a worker that does not answer "
        "is killed after the stop grace) and exits 0; a second signal exits at once. Every "
        "limit below is announced to clients in the handshake. With --web the browser app "
        "is served too.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=port, default=7777, help="port, 1-65535 (7777; 0: any free port)")
    _add_server_args(p)
    _add_peer_limits(p)
    _add_connection_limits(p)
    _add_web_args(p)
    _add_access_args(p)
    return p


def _add_access_args(p: argparse.ArgumentParser) -> None:
    """Who may use the server, and how its ports are spoken to."""
    p.add_argument(
        "--tokens",
        metavar="FILE",
        help="serve only clients that present a token of FILE (enginesrv token add NAME "
        "--file FILE), on both ports; without a token a client gets the handshake only",
    )
    p.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="speak TLS only, on both ports, with this certificate chain (PEM; read again "
        "on SIGHUP, for a renewed one)",
    )
    p.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM)")


def _add_peer_limits(p: argparse.ArgumentParser) -> None:
    """What the server's connections, and each peer's, may hold together."""
    p.add_argument(
        "--max-connections",
        metavar="N",
        type=natural,
        default=256,
        help="connections served at once (256; 0: no limit); one more is closed at once",
    )
    p.add_argument(
        "--max-connections-per-peer",
        metavar="N",
        type=natural,
        default=32,
        help="connections one peer may hold, on the TCP and the web port together (32; 0: no "
        "limit); a peer is an address prefix (--peer-prefix-v4, --peer-prefix-v6)",
    )
    p.add_argument(
        "--peer-prefix-v4",
        metavar="BITS",
        type=prefix_bits(32),
        default=32,
        help="the bits of an IPv4 address that name one peer (32: each address)",
    )
    p.add_argument(
        "--peer-prefix-v6",
        metavar="BITS",
        type=prefix_bits(128),
        default=PREFIX_V6,
        help=f"the bits of an IPv6 address that name one peer ({PREFIX_V6}: a site's /48, of "
        "which a host is commonly handed a /64 and a home a /56)",
    )
    p.add_argument(
        "--max-output-total",
        metavar="BYTES",
        type=natural_at_most(1 << 50),
        default=64 << 20,
        help="replies left unread on every connection together (67108864; 0: no limit); "
        "over it, the connections holding most are closed first",
    )
    p.add_argument(
        "--max-searches-per-peer",
        metavar="N",
        type=natural,
        default=0,
        help="searches one peer address may run at once (default: half the workers, at "
        "least 1); more wait their turn",
    )


def _add_connection_limits(p: argparse.ArgumentParser) -> None:
    """What one connection may take: time, and the size of what it sends."""
    p.add_argument(
        "--first-command-timeout",
        metavar="S",
        type=seconds_or_zero,
        default=10.0,
        help="close a connection that has not sent a whole command within S seconds (10; 0: never)",
    )
    p.add_argument(
        "--idle-timeout",
        metavar="S",
        type=seconds_or_zero,
        default=300.0,
        help="close a connection idle this many seconds while no search runs (300; 0: never)",
    )
    p.add_argument(
        "--max-line",
        metavar="BYTES",
        type=positive,
        default=65536,
        help="longest text line (65536)",
    )
    p.add_argument(
        "--max-frame",
        metavar="BYTES",
        type=positive,
        default=1048576,
        help="largest msgpack frame (1048576)",
    )


def _add_web_args(p: argparse.ArgumentParser) -> None:
    """The browser app's port (``--web``) and its limits."""
    p.add_argument(
        "--web",
        metavar="PORT",
        type=port,
        default=None,
        help="also serve the browser app and its WebSocket endpoint /ws on PORT (0: any free "
        "port), on the same host; prints 'web http://HOST:PORT/' after the listening line "
        "(docs/web.md; needs the web extra)",
    )
    p.add_argument(
        "--http-idle-timeout",
        metavar="S",
        type=seconds,
        default=30.0,
        help="close an HTTP connection of the web port idle this many seconds between "
        "requests, or before its first request is whole (30)",
    )
    p.add_argument(
        "--web-name",
        metavar="NAME",
        action="append",
        default=[],
        help="a host name the browser app is loaded from (repeatable; behind a reverse proxy, "
        "its public name): WebSockets are taken from pages of an address, localhost or these "
        "names only, so that another site cannot borrow the server by a name of its own",
    )
    p.add_argument(
        "--max-websockets-per-peer",
        metavar="N",
        type=natural,
        default=WEBSOCKETS_PER_PEER,
        help=f"WebSocket sessions one peer may hold ({WEBSOCKETS_PER_PEER}; 0: no limit); they "
        "count in --max-connections and --max-connections-per-peer too",
    )


def add_engine(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv engine``."""
    p = sub.add_parser(
        "engine",
        help="one protocol session over stdin/stdout (for GUIs and tournament managers)",
        description="Speak the enginesrv protocol on stdin/stdout, as an engine that GUIs and "
        "tournament managers (UGI ones included) start as a subprocess. Only protocol output "
        "goes to stdout, flushed per line; logs go to stderr. End of input acts as quit. "
        "A UGI manager (cutegames) never sets the Game option, so start the engine for it with "
        "--game GAME; without --game a warning says so on stderr at start-up.",
    )
    p.add_argument(
        "--framing", choices=("text", "msgpack"), default="text", help="text (default) or msgpack"
    )
    _add_server_args(p, workers=1)
    return p


def _add_server_args(p: argparse.ArgumentParser, workers: int | None = None) -> None:
    """The arguments ``serve`` and ``engine`` share: the sessions' game and bot, the workers
    (``workers`` of them by default, else one per CPU) and the search's limits."""
    p.add_argument("--game", metavar="GAME", help="the game sessions start with")
    p.add_argument("--bot", metavar="BOT", default="alphabeta", help="the bot (alphabeta)")
    p.add_argument(
        "--workers",
        metavar="N",
        type=positive,
        default=workers or os.cpu_count() or 1,
        help="search worker processes (default: %(default)s)",
    )
    p.add_argument(
        "--max-output-bytes",
        metavar="BYTES",
        type=natural,
        default=8 * 1024 * 1024,
        help="replies a client may leave unread before it is disconnected (8388608; 0: no "
        "limit; else at least --max-frame and --max-line)",
    )
    _add_search_limits(p)
    p.add_argument("--log-json", action="store_true", help="log JSON lines on stderr")


def _add_search_limits(p: argparse.ArgumentParser) -> None:
    """What a session's searches may take: memory, time, plies."""
    p.add_argument(
        "--max-hash",
        metavar="MB",
        type=natural,
        default=512,
        help="transposition table memory of all workers together (512; 0: no limit); a "
        "session's Hash is at most this divided by the workers",
    )
    p.add_argument(
        "--max-movetime",
        metavar="MS",
        type=natural_at_most(1 << 31),
        default=MAX_MOVETIME,
        help=f"the longest go movetime, and the most a search takes from a clock ({MAX_MOVETIME}; "
        "0: no limit); a longer movetime is refused",
    )
    p.add_argument(
        "--max-clock",
        metavar="MS",
        type=natural_at_most(1 << 40),
        default=MAX_CLOCK,
        help=f"the most time a go may say a clock shows ({MAX_CLOCK}: a day; 0: no limit)",
    )
    p.add_argument(
        "--max-plies",
        metavar="N",
        type=natural_at_most(1 << 30),
        default=MAX_PLIES,
        help=f"the plies a session's game may reach ({MAX_PLIES}; 0: no limit); more are "
        "refused with error 305",
    )
    p.add_argument(
        "--max-analyses",
        metavar="N",
        type=natural_at_most(1 << 20),
        default=MAX_ANALYSES,
        help=f"positions of analyse requests a session holds at once, waiting or searched "
        f"({MAX_ANALYSES}; 0: no limit); more are refused with error 300",
    )
    p.add_argument(
        "--stop-grace",
        metavar="MS",
        type=natural,
        default=200,
        help="how long a search may take to answer a stop or overrun its deadline before its "
        "worker is killed and replaced (200)",
    )


def add_check(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv check``."""
    p = sub.add_parser(
        "check",
        help="check that a server or engine speaks the protocol",
        description="Run a scripted conversation (handshake, options, positions, legal moves, "
        "play/undo, go with each limit, stop and isready during a search, the error codes it "
        "can provoke) against a running server (--connect HOST:PORT, both framings) or an "
        "engine command given after -- (text framing over its stdin/stdout). Prints PASS or "
        "FAIL per check on stdout; exit status 1 if any check fails. The engine's standard "
        "error (its log lines) stays off the report: when a check fails, its last lines are "
        "shown on stderr. A server started with --tls-cert or --tokens is checked with --tls "
        "or --tls-ca, and --token-file.",
    )
    p.add_argument("--connect", metavar="HOST:PORT", help="a running server")
    p.add_argument(
        "--tls",
        action="store_true",
        help="with --connect: speak TLS, the server's certificate verified against the "
        "system's authorities",
    )
    p.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="with --connect: speak TLS, trusting the certificates of FILE (PEM: an "
        "authority, or the server's own certificate); implies --tls",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="with --connect: present the token on the first line of FILE (NAME:TOKEN, as "
        "enginesrv token add prints it) to a server that requires one; FILE must not be "
        "readable by every user",
    )
    p.add_argument("--game", default="yinsh", help="the game to check with (yinsh)")
    p.add_argument(
        "--handshake-timeout",
        metavar="S",
        type=seconds,
        default=5.0,
        help="seconds the engine or server has to answer ugi (5); without a handshake the "
        "run ends there",
    )
    p.add_argument(
        "engine",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="-- COMMAND ...: an engine to start",
    )
    return p

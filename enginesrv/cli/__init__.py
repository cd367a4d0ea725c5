"""The ``enginesrv`` command line.

Every subcommand prints its result on stdout in a form other tools may parse, and chatter
(progress, timings, log lines) on stderr. Every error, from a bad argument to an unreadable
file, is one line on stderr naming the input and the reason, with exit status 2; never a
traceback. An interrupt (Ctrl-C) ends a command with status 130.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

import games
from enginesrv import __version__, reaper
from enginesrv.admission import PREFIX_V6, WEBSOCKETS_PER_PEER
from enginesrv.cli.common import (
    EXIT_USAGE,
    CommandError,
    natural,
    natural_at_most,
    port,
    positive,
    prefix_bits,
    seconds,
    seconds_or_zero,
)
from enginesrv.cli.events import add_event_commands
from enginesrv.cli.programs import cmd_check, cmd_engine, cmd_serve
from enginesrv.cli.rules import (
    cmd_bench,
    cmd_export,
    cmd_moves,
    cmd_perft,
    cmd_replay,
    cmd_show,
)
from enginesrv.event.results.wording import printable
from enginesrv.logs import configure as configure_logging
from enginesrv.serve.settings import MAX_CLOCK, MAX_MOVETIME, MAX_PLIES


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with a pointer to --help)."""

    def error(self, message: str) -> NoReturn:
        message = printable(message)
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def _add_position_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", metavar="GAME", help="game name: " + ", ".join(games.available()))
    p.add_argument(
        "--pos",
        metavar="POSITION",
        help="start from this position string (quote it) instead of the start position",
    )
    p.add_argument(
        "--moves",
        metavar="MOVE",
        nargs="+",
        default=[],
        help="move tokens to play first, each checked for legality",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``enginesrv`` command."""
    parser = _Parser(
        prog="enginesrv",
        description="Engine server for Yinsh, Yohoho, Yoxii and Yin Yang: rules tools, "
        "bots, the engine protocol and matches.",
        epilog="Results go to stdout; progress, timings and log lines to stderr. Exit status: "
        "0 on success, 1 when 'check' finds a failing check, 2 for bad input (one line on "
        "stderr), 130 when interrupted (Ctrl-C; 'interrupted' on stderr), except 'serve' and "
        "'engine', which stop gracefully on SIGINT and exit 0.",
    )
    parser.add_argument("--version", action="version", version=f"enginesrv {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "perft",
        help="count the positions DEPTH plies ahead (rules test)",
        description="Count the leaf nodes DEPTH plies below a position, one ply per decision. "
        "The count is the last line of stdout; with --divide a 'MOVE COUNT' line per legal move "
        "comes first. Timing goes to stderr.",
    )
    _add_position_args(p)
    p.add_argument("depth", metavar="DEPTH", type=natural, help="plies to look ahead (>= 0)")
    p.add_argument("--divide", action="store_true", help="print the count below each root move")
    p.set_defaults(func=cmd_perft)

    p = sub.add_parser(
        "moves",
        help="list the legal move tokens of a position",
        description="Print the legal move tokens of a position, one per line, sorted.",
    )
    _add_position_args(p)
    p.set_defaults(func=cmd_moves)

    p = sub.add_parser(
        "show",
        help="draw a position with its side to act, phase and counters",
        description="Draw the board with coordinates, and print the side to act, the phase, "
        "the game's counters, the position string and, once the game is over, the outcome.",
    )
    _add_position_args(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "replay",
        help="replay game records, checking every move",
        description="Replay a game record (the enginesrv record format, or a boardspace .sgf for "
        "Yinsh), checking every move, and print the final position and outcome. A bad record "
        "stops at its first bad move, with the move's number and the reason. A file of several "
        "records (as 'enginesrv export' writes) is checked game by game, each in a block "
        "headed 'game K (line L)', then 'checked N games, B bad'; the error names the first "
        "bad game and its line.",
    )
    p.add_argument("game", metavar="GAME", help="game name: " + ", ".join(games.available()))
    p.add_argument("file", metavar="FILE", help="the record file (one record or many)")
    p.add_argument(
        "--game", dest="pick", metavar="K", type=positive,
        help="only the K-th game of a file of several records (1 = the first)",
    )  # fmt: skip
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--ply", metavar="N", type=natural,
        help="also draw the board after ply N (0: the start) of each game, as 'show' does",
    )  # fmt: skip
    shown.add_argument(
        "--step", action="store_true", help="also draw the board after every ply of each game"
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "export",
        help="write all games of an event into one record file",
        description="Write the record of every finished game of a match or tournament "
        "(DIR/results.sqlite and DIR/games/) into one file, in game order, one record after "
        "another, each beginning with its '# Game:' header; 'enginesrv replay' reads it back. "
        "FILE is replaced if it exists; nothing is written when the export fails. A game whose "
        "record is missing or unreadable fails the export, naming the game, unless "
        "--skip-missing.",
    )
    p.add_argument("dir", metavar="DIR", help="the --out directory of the event")
    p.add_argument(
        "-o", "--output", metavar="FILE", required=True,
        help="the file to write ('-': standard output)",
    )  # fmt: skip
    p.add_argument(
        "--skip-missing", action="store_true",
        help="leave out games whose record is missing or unreadable, with a warning on stderr "
        "for each",
    )  # fmt: skip
    p.set_defaults(func=cmd_export)

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
    p.add_argument(
        "--max-connections", metavar="N", type=natural, default=256,
        help="connections served at once (256; 0: no limit); one more is closed at once",
    )  # fmt: skip
    p.add_argument(
        "--max-connections-per-peer", metavar="N", type=natural, default=32,
        help="connections one peer may hold, on the TCP and the web port together (32; 0: no "
        "limit); a peer is an address prefix (--peer-prefix-v4, --peer-prefix-v6)",
    )  # fmt: skip
    p.add_argument(
        "--peer-prefix-v4", metavar="BITS", type=prefix_bits(32), default=32,
        help="the bits of an IPv4 address that name one peer (32: each address)",
    )  # fmt: skip
    p.add_argument(
        "--peer-prefix-v6", metavar="BITS", type=prefix_bits(128), default=PREFIX_V6,
        help=f"the bits of an IPv6 address that name one peer ({PREFIX_V6}: a site's /48, of "
        "which a host is commonly handed a /64 and a home a /56)",
    )  # fmt: skip
    p.add_argument(
        "--max-output-total", metavar="BYTES", type=natural_at_most(1 << 50), default=64 << 20,
        help="replies left unread on every connection together (67108864; 0: no limit); "
        "over it, the connections holding most are closed first",
    )  # fmt: skip
    p.add_argument(
        "--max-searches-per-peer", metavar="N", type=natural, default=0,
        help="searches one peer address may run at once (default: half the workers, at "
        "least 1); more wait their turn",
    )  # fmt: skip
    p.add_argument(
        "--first-command-timeout", metavar="S", type=seconds_or_zero, default=10.0,
        help="close a connection that has not sent a whole command within S seconds "
        "(10; 0: never)",
    )  # fmt: skip
    p.add_argument(
        "--idle-timeout", metavar="S", type=seconds_or_zero, default=300.0,
        help="close a connection idle this many seconds while no search runs (300; 0: never)",
    )  # fmt: skip
    p.add_argument("--max-line", metavar="BYTES", type=positive, default=65536,
                   help="longest text line (65536)")  # fmt: skip
    p.add_argument("--max-frame", metavar="BYTES", type=positive, default=1048576,
                   help="largest msgpack frame (1048576)")  # fmt: skip
    p.add_argument(
        "--web", metavar="PORT", type=port, default=None,
        help="also serve the browser app and its WebSocket endpoint /ws on PORT (0: any free "
        "port), on the same host; prints 'web http://HOST:PORT/' after the listening line "
        "(docs/web.md; needs the web extra)",
    )  # fmt: skip
    p.add_argument(
        "--http-idle-timeout", metavar="S", type=seconds, default=30.0,
        help="close an HTTP connection of the web port idle this many seconds between "
        "requests, or before its first request is whole (30)",
    )  # fmt: skip
    p.add_argument(
        "--max-websockets-per-peer", metavar="N", type=natural, default=WEBSOCKETS_PER_PEER,
        help=f"WebSocket sessions one peer may hold ({WEBSOCKETS_PER_PEER}; 0: no limit); they "
        "count in --max-connections and --max-connections-per-peer too",
    )  # fmt: skip
    p.set_defaults(func=cmd_serve)

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
    p.set_defaults(func=cmd_engine)

    p = sub.add_parser(
        "check",
        help="check that a server or engine speaks the protocol",
        description="Run a scripted conversation (handshake, options, positions, legal moves, "
        "play/undo, go with each limit, stop and isready during a search, the error codes it "
        "can provoke) against a running server (--connect HOST:PORT, both framings) or an "
        "engine command given after -- (text framing over its stdin/stdout). Prints PASS or "
        "FAIL per check on stdout; exit status 1 if any check fails. The engine's standard "
        "error (its log lines) stays off the report: when a check fails, its last lines are "
        "shown on stderr.",
    )
    p.add_argument("--connect", metavar="HOST:PORT", help="a running server")
    p.add_argument("--game", default="yinsh", help="the game to check with (yinsh)")
    p.add_argument(
        "--handshake-timeout", metavar="S", type=seconds, default=5.0,
        help="seconds the engine or server has to answer ugi (5); without a handshake the "
        "run ends there",
    )  # fmt: skip
    p.add_argument(
        "engine",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="-- COMMAND ...: an engine to start",
    )
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "bench",
        help="benchmark the search (default) or the rules (--rules)",
        description="Search fixed positions of each game with alphabeta at a fixed depth and "
        "print nodes, time and nodes/s per position; with --rules, run fixed perft positions "
        "and seeded random playouts instead (each game's playouts line says how many games were "
        "played to their end by the rules and how many stopped at the turn cap). The last "
        "line is 'bench: nodes N time MS nps R'; "
        "its node total is a signature that changes only when the search, the evaluations or "
        "the rules change.",
    )
    p.add_argument(
        "--game",
        metavar="GAME",
        action="append",
        help="only this game (repeatable); default: every game with bench positions",
    )
    p.add_argument("--depth", metavar="D", type=positive, help="search depth for every position")
    p.add_argument("--rules", action="store_true", help="benchmark the rules engines instead")
    p.add_argument(
        "--deep", action="store_true", help="with --rules: include the deep perft targets"
    )
    p.add_argument(
        "--playouts",
        metavar="N",
        type=natural,
        default=200,
        help="with --rules: random games per game (default 200)",
    )
    p.set_defaults(func=cmd_bench)

    add_event_commands(sub, CommandError)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)
    return parser


def _add_server_args(p: argparse.ArgumentParser, workers: int | None = None) -> None:
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
        "--max-output-bytes", metavar="BYTES", type=natural, default=8 * 1024 * 1024,
        help="replies a client may leave unread before it is disconnected (8388608; 0: no "
        "limit; else at least --max-frame and --max-line)",
    )  # fmt: skip
    p.add_argument(
        "--max-hash", metavar="MB", type=natural, default=512,
        help="transposition table memory of all workers together (512; 0: no limit); a "
        "session's Hash is at most this divided by the workers",
    )  # fmt: skip
    p.add_argument(
        "--max-movetime", metavar="MS", type=natural_at_most(1 << 31), default=MAX_MOVETIME,
        help=f"the longest go movetime, and the most a search takes from a clock ({MAX_MOVETIME}; "
        "0: no limit); a longer movetime is refused",
    )  # fmt: skip
    p.add_argument(
        "--max-clock", metavar="MS", type=natural_at_most(1 << 40), default=MAX_CLOCK,
        help=f"the most time a go may say a clock shows ({MAX_CLOCK}: a day; 0: no limit)",
    )  # fmt: skip
    p.add_argument(
        "--max-plies", metavar="N", type=natural_at_most(1 << 30), default=MAX_PLIES,
        help=f"the plies a session's game may reach ({MAX_PLIES}; 0: no limit); more are "
        "refused with error 305",
    )  # fmt: skip
    p.add_argument(
        "--stop-grace", metavar="MS", type=natural, default=200,
        help="how long a search may take to answer a stop or overrun its deadline before its "
        "worker is killed and replaced (200)",
    )  # fmt: skip
    p.add_argument("--log-json", action="store_true", help="log JSON lines on stderr")


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; a word no command takes is refused by the command it was given to, so
    the error names that command (``enginesrv check: error: ...``), not ``enginesrv``."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        command: argparse.ArgumentParser = args.command_parser
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parse(argv)
    configure_logging()  # every log line on stderr, whatever the command
    # the arbiter and the server hold players' secrets and engines' logs: their memory,
    # open files and environment are closed to other processes of the user
    reaper.set_dumpable(False)
    func: Callable[[argparse.Namespace, TextIO, TextIO], None] = args.func
    try:
        func(args, sys.stdout, sys.stderr)
    except CommandError as exc:
        sys.stdout.flush()
        # one line, whatever the input quoted in it held
        sys.stderr.write(f"enginesrv {args.command}: error: {printable(str(exc))}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write(f"enginesrv {args.command}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (``enginesrv moves yinsh | head``): not an error of ours.
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

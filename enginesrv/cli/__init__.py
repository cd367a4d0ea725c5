"""The ``enginesrv`` command line.

Every subcommand prints its result on stdout in a form other tools may parse, and chatter
(progress, timings, log lines) on stderr. Every error, from a bad argument to an unreadable
file, is one line on stderr naming the input and the reason, with exit status 2; never a
traceback. An interrupt (Ctrl-C) ends a command with status 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from enginesrv import __version__, reaper
from enginesrv.cli.analyse import add_analyse, cmd_analyse
from enginesrv.cli.common import EXIT_USAGE, CommandError, Handler, Parser, Subcommands
from enginesrv.cli.events import add_event_commands
from enginesrv.cli.export import cmd_export
from enginesrv.cli.ladder import add_ladder, cmd_ladder
from enginesrv.cli.ladder_client import add_ladder_client, cmd_ladder_client
from enginesrv.cli.program_args import add_check, add_engine, add_serve
from enginesrv.cli.programs import cmd_check, cmd_engine, cmd_serve
from enginesrv.cli.rules import cmd_bench, cmd_moves, cmd_perft, cmd_replay, cmd_show
from enginesrv.cli.rules_args import (
    add_bench,
    add_export,
    add_moves,
    add_perft,
    add_replay,
    add_show,
)
from enginesrv.cli.selfplay import add_selfplay, cmd_selfplay
from enginesrv.cli.token import add_token, cmd_token
from enginesrv.cli.tune import add_tune_commands
from enginesrv.cli.version import add_version, cmd_version
from enginesrv.event.results.wording import printable
from enginesrv.logs import configure as configure_logging

AddCommand = Callable[[Subcommands], argparse.ArgumentParser]
"""What adds a command's parser to the subcommands, and returns it."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``enginesrv`` command."""
    parser = Parser(
        prog="enginesrv",
        description="Engine server for Yinsh, Yohoho, Yoxii and Yin Yang: rules tools, "
        "bots, the engine protocol and matches.",
        epilog="Results go to stdout; progress, timings and log lines to stderr. Exit status: "
        "0 on success, 1 when 'check' finds a failing check, 2 for bad input (one line on "
        "stderr), 130 when interrupted (Ctrl-C; 'interrupted' on stderr), except 'serve' and "
        "'engine', which stop gracefully on SIGINT and exit 0.",
    )
    parser.add_argument("--version", action="version", version=f"enginesrv {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for add, handler in _commands():
        add(sub).set_defaults(func=handler)
    add_event_commands(sub, CommandError)
    add_tune_commands(sub, CommandError)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)
    return parser


def _commands() -> tuple[tuple[AddCommand, Handler], ...]:
    """Each command but the events' (``add_event_commands``), in the order ``--help`` lists
    them: what adds its parser, and its handler. The handlers are this module's names, looked
    up as the parser is built, so that a test can stand in for one."""
    return (
        (add_perft, cmd_perft),
        (add_moves, cmd_moves),
        (add_show, cmd_show),
        (add_replay, cmd_replay),
        (add_export, cmd_export),
        (add_serve, cmd_serve),
        (add_engine, cmd_engine),
        (add_check, cmd_check),
        (add_bench, cmd_bench),
        (add_analyse, cmd_analyse),
        (add_selfplay, cmd_selfplay),
        (add_ladder, cmd_ladder),
        (add_ladder_client, cmd_ladder_client),
        (add_token, cmd_token),
        (add_version, cmd_version),
    )


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
    func: Handler = args.func
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

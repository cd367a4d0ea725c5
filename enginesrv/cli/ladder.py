"""``enginesrv ladder``: a ladder's players (``add``, ``revoke``, ``list``): accounts whose
tokens are kept only as salted hashes in the ladder's folder (docs/ladder.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from enginesrv.cli.common import CommandError, Parser, Subcommands
from enginesrv.cli.ladder_run import add_run_arguments, cmd_ladder_run
from enginesrv.event.results.wording import printable
from enginesrv.ladder.accounts import players
from enginesrv.tokens import TokenFileError


def add_ladder(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv ladder`` and its subcommands."""
    p = sub.add_parser(
        "ladder",
        help="a ladder: run it; its players: add, revoke, list",
        description="The players of a ladder kept in the folder --out: each an account with "
        "a token, which the ladder keeps only as a salted hash (scrypt) in DIR/tokens.",
    )
    commands = p.add_subparsers(dest="ladder_command", metavar="SUBCOMMAND", parser_class=Parser)
    commands.required = True
    add = commands.add_parser(
        "add",
        help="add a player and print its token (once)",
        description="Add player NAME and print its new token on stdout: the only time it is "
        "shown (the ladder keeps its hash). Give it to the player's ladder client.",
    )
    add.add_argument("name", metavar="NAME", help="a letter, then up to 31 letters, digits, _ . -")
    revoke = commands.add_parser(
        "revoke",
        help="remove a player: its token is refused from then on",
        description="Remove player NAME: its token is refused from now on.",
    )
    revoke.add_argument("name", metavar="NAME")
    listing = commands.add_parser(
        "list", help="the players", description="Each player's name and when its token was made."
    )
    listing.add_argument("--json", action="store_true", help="a JSON array of objects")
    for command in (add, revoke, listing):
        command.add_argument("--out", metavar="DIR", required=True, help="the ladder's folder")
    run = commands.add_parser(
        "run",
        help="run the ladder: bots connect, are paired and play rated games",
        description="Run a ladder server: bots log in with their tokens (docs/protocol.md "
        "§11), are paired around the clock at --tc, and every game is stored in --out and "
        "rated. Prints 'listening HOST:PORT' when ready; SIGINT or SIGTERM stops it, and the "
        "same command goes on where it was.",
    )
    add_run_arguments(run)
    return p


def cmd_ladder(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv ladder SUBCOMMAND`` (module docstring)."""
    if args.ladder_command == "run":
        cmd_ladder_run(args, out, err)
        return
    folder = Path(args.out)
    if not folder.is_dir():
        if args.ladder_command != "add":
            raise CommandError(f"{printable(args.out)}: no such folder")
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            raise CommandError(f"{printable(args.out)}: {exc.strerror or exc}") from None
    tokens = players(folder)
    try:
        if args.ladder_command == "add":
            out.write(tokens.add(args.name) + "\n")
            err.write(f"ladder: player {args.name} added; its token is shown only now\n")
        elif args.ladder_command == "revoke":
            tokens.revoke(args.name)
            err.write(f"ladder: player {args.name} revoked\n")
        elif args.json:
            listed = [{"name": a.name, "created": a.created} for a in tokens.accounts()]
            out.write(json.dumps(listed) + "\n")
        else:
            for account in tokens.accounts():
                out.write(f"{account.name}  {account.created}\n")
    except (ValueError, TokenFileError) as exc:
        raise CommandError(printable(str(exc))) from None

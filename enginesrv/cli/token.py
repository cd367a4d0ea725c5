"""``enginesrv token``: the clients of a server with tokens (``add``, ``revoke``, ``list``):
accounts whose tokens are kept only as salted hashes in a token file (``serve --tokens``;
docs/security.md)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TextIO

from enginesrv.cli.common import CommandError, Parser, Subcommands, positive
from enginesrv.event.results.wording import printable
from enginesrv.tokens import Quotas, TokenFile, TokenFileError


def add_token(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv token`` and its subcommands."""
    p = sub.add_parser(
        "token",
        help="the clients of a server with tokens: add, revoke, list",
        description="The accounts of a token file (enginesrv serve --tokens FILE): each a name "
        "and a token, which the file keeps only as a salted hash (scrypt). A client presents "
        "its token as NAME:TOKEN (auth NAME:TOKEN; docs/protocol.md §2).",
    )
    commands = p.add_subparsers(dest="token_command", metavar="SUBCOMMAND", parser_class=Parser)
    commands.required = True
    add = commands.add_parser(
        "add",
        help="add an account and print its token (once)",
        description="Add account NAME and print its token, NAME:TOKEN, on stdout: the only "
        "time it is shown (the file keeps its hash). A running server takes it at once.",
    )
    add.add_argument("name", metavar="NAME", help="a letter, then up to 31 letters, digits, _ . -")
    add.add_argument(
        "--searches",
        metavar="N",
        type=positive,
        help="searches (and analysed positions) the account may run at once (default: a "
        "peer's share, --max-searches-per-peer)",
    )
    add.add_argument(
        "--hour",
        metavar="S",
        type=positive,
        help="seconds of search the account may use in any hour (default: no quota)",
    )
    revoke = commands.add_parser(
        "revoke",
        help="remove an account: its token is refused from then on",
        description="Remove account NAME: its token is refused from now on, and a running "
        "server closes the connections that presented it at their next command.",
    )
    revoke.add_argument("name", metavar="NAME")
    listing = commands.add_parser(
        "list",
        help="the accounts",
        description="Each account's name, when its token was made, and its quotas.",
    )
    listing.add_argument("--json", action="store_true", help="a JSON array of objects")
    for command in (add, revoke, listing):
        command.add_argument("--file", metavar="FILE", required=True, help="the token file")
    return p


def cmd_token(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv token SUBCOMMAND`` (module docstring)."""
    path = Path(args.file)
    if args.token_command != "add" and not path.is_file():
        raise CommandError(f"{printable(args.file)}: no such token file")
    tokens = TokenFile(path)
    try:
        if args.token_command == "add":
            token = tokens.add(args.name, Quotas(args.searches, args.hour))
            out.write(f"{args.name}:{token}\n")
            err.write(f"token: account {args.name} added; its token is shown only now\n")
        elif args.token_command == "revoke":
            tokens.revoke(args.name)
            err.write(f"token: account {args.name} revoked\n")
        elif args.json:
            listed = [
                {"name": a.name, "created": a.created, **dataclasses.asdict(a.quotas)}
                for a in tokens.accounts()
            ]
            out.write(json.dumps(listed) + "\n")
        else:
            for account in tokens.accounts():
                quotas = " ".join(account.quotas.words()) or "-"
                out.write(f"{account.name}  {account.created}  {quotas}\n")
    except (ValueError, TokenFileError) as exc:
        raise CommandError(printable(str(exc))) from None

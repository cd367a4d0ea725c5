"""``enginesrv token``: the clients of a server with tokens (``add``, ``set``, ``revoke``,
``list``):
accounts whose tokens are kept only as salted hashes in a token file (``serve --tokens``;
docs/security.md)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from enginesrv.cli.common import CommandError, Parser, Subcommands
from enginesrv.event.results.wording import printable
from enginesrv.tokens import MAX_QUOTA, Quotas, TokenFile, TokenFileError


def add_token(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv token`` and its subcommands."""
    p = sub.add_parser(
        "token",
        help="the clients of a server with tokens: add, set, revoke, list",
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
        type=quota_value,
        help="searches (and analysed positions) the account may run at once (default: a "
        "peer's share, --max-searches-per-peer)",
    )
    add.add_argument(
        "--hour",
        metavar="S",
        type=quota_value,
        help="seconds of search the account may use in any hour (default: no quota)",
    )
    quotas = commands.add_parser(
        "set",
        help="change an account's quotas (its token stays)",
        description="Change the quotas of account NAME; its token stays, and a running server "
        "applies them to the account's open connections within a second. A quota not given "
        "stays as it was; 'none' removes it.",
    )
    quotas.add_argument("name", metavar="NAME")
    quotas.add_argument(
        "--searches",
        metavar="N",
        type=quota,
        help="searches the account may run at once, or none (a peer's share)",
    )
    quotas.add_argument(
        "--hour",
        metavar="S",
        type=quota,
        help="seconds of search the account may use in any hour, or none (no quota)",
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
    for command in (add, quotas, revoke, listing):
        command.add_argument("--file", metavar="FILE", required=True, help="the token file")
    return p


def quota(text: str) -> int:
    """A quota of ``set``: a whole number from 1 to ``MAX_QUOTA``, or ``none`` (0: none)."""
    return 0 if text == "none" else quota_value(text, " (or none)")


def quota_value(text: str, other: str = "") -> int:
    """A quota: a whole number from 1 to ``MAX_QUOTA``, in ASCII digits."""
    digits = text.isascii() and text.isdigit() and len(text) <= len(str(MAX_QUOTA))
    if not digits or not 1 <= int(text) <= MAX_QUOTA:
        shown = printable(text if len(text) <= 20 else text[:20] + "...")
        raise argparse.ArgumentTypeError(
            f"{shown!r}: a quota is a whole number from 1 to {MAX_QUOTA:,}{other}"
        )
    return int(text)


def _changed(args: argparse.Namespace) -> Callable[[Quotas], Quotas]:
    """What ``token set`` makes of an account's quotas: those given, the others kept."""
    if args.searches is None and args.hour is None:
        raise CommandError("token set: give --searches N or --hour S (none removes one)")

    def change(before: Quotas) -> Quotas:
        searches = before.searches if args.searches is None else args.searches or None
        hour = before.hour if args.hour is None else args.hour or None
        return Quotas(searches, hour)

    return change


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
        elif args.token_command == "set":
            given = tokens.requota(args.name, _changed(args))
            words = " ".join(given.words()) or "no quotas"
            err.write(f"token: account {args.name} now has {words}\n")
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

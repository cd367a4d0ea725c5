"""What every command of the command line shares: the error a command raises for bad input
(one line on stderr, exit status 2), the parser that reports a usage error the same way, and
the argument types of its flags."""

from __future__ import annotations

import argparse
import ssl
import sys
from collections.abc import Callable
from typing import NoReturn, TextIO, TypeAlias

from enginesrv.event.results.wording import printable
from enginesrv.serve.certificates import CertificateError, server_context

EXIT_USAGE = 2


class CommandError(Exception):
    """A user-facing failure: printed as one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with a pointer to --help)."""

    def error(self, message: str) -> NoReturn:
        message = printable(message)
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


Handler: TypeAlias = Callable[[argparse.Namespace, TextIO, TextIO], None]
"""What runs a command: its arguments, stdout and stderr."""
Subcommands: TypeAlias = "argparse._SubParsersAction[Parser]"
"""The subcommands of the ``enginesrv`` parser, to which each command adds its own parser."""


def natural(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def prefix_bits(most: int) -> Callable[[str], int]:
    """The type of a flag giving a prefix length: 1 to ``most`` bits."""

    def parse(text: str) -> int:
        value = natural(text)
        if not 0 < value <= most:
            raise argparse.ArgumentTypeError(f"{text!r} is not a prefix length (1-{most} bits)")
        return value

    return parse


def natural_at_most(most: int) -> Callable[[str], int]:
    """The type of a flag giving a whole number from 0 to ``most``."""

    def parse(text: str) -> int:
        value = natural(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"{text!r} is over {most}")
        return value

    return parse


def positive(text: str) -> int:
    """A whole number, 1 or more."""
    value = natural(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def port(text: str) -> int:
    """A TCP port, or 0 for any free one."""
    value = natural(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535, or 0 for any)")
    return value


def seconds(text: str) -> float:
    """A positive, finite number of seconds (below a million)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def seconds_or_zero(text: str) -> float:
    """``seconds``, or 0 (for a limit that can be turned off)."""
    return 0.0 if text.strip() in ("0", "0.0") else seconds(text)


def tls_context(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """The server's TLS context of ``--tls-cert`` and ``--tls-key`` (None without them)."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise CommandError("--tls-cert and --tls-key go together")
    try:
        return server_context(cert, key)
    except CertificateError as exc:
        raise CommandError(printable(str(exc))) from None  # it names the file and the option

"""What every command of the command line shares: the error a command raises for bad input
(one line on stderr, exit status 2)."""

from __future__ import annotations

EXIT_USAGE = 2


class CommandError(Exception):
    """A user-facing failure: printed as one line on stderr, exit status 2."""

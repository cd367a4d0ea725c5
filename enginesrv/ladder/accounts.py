"""A ladder's players: the accounts of its folder's token file (``DIR/tokens``)."""

from __future__ import annotations

from pathlib import Path

from enginesrv.tokens import TokenFile

TOKENS = "tokens"
"""The token file's name in a ladder's folder."""


def players(folder: Path) -> TokenFile:
    """The token file of the ladder kept in ``folder``."""
    return TokenFile(folder / TOKENS)

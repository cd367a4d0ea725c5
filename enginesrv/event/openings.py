"""Openings: the start positions and first moves games of an event are played from, read from a
file (``read_openings``), and the position each leads to (``opening_state``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import games


@dataclass(frozen=True, slots=True)
class Opening:
    """A start position (None: the game's) and moves played from it before the engines."""

    start: str | None = None
    moves: tuple[str, ...] = ()
    label: str = ""


class OpeningsError(ValueError):
    """A bad openings file; the message names the file, the line and the reason."""


def read_openings(path: Path, game: games.Game) -> list[Opening]:
    """The openings of a file (design §6): ``moves TOKEN ...`` from the start, or
    ``fen POSITION``; ``#`` starts a comment. Each is replayed to check it.

    Raises:
        OpeningsError: unreadable file, a bad line, or no opening at all.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningsError(f"{path}: cannot read the openings: {exc}") from None
    openings: list[Opening] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        rest = rest.strip()
        if kind == "moves":
            opening = Opening(None, tuple(rest.split()), line)
        elif kind == "fen" and rest:
            opening = Opening(rest, (), line)
        else:
            raise OpeningsError(
                f"{path}:{number}: write 'moves TOKEN TOKEN ...' or 'fen POSITION', not {line!r}"
            )
        try:
            state = opening_state(game, opening)
        except games.GameError as exc:
            raise OpeningsError(f"{path}:{number}: {exc}") from None
        if state.is_terminal():
            raise OpeningsError(f"{path}:{number}: the game is already over after this opening")
        openings.append(opening)
    if not openings:
        raise OpeningsError(f"{path}: no opening in the file")
    return openings


def opening_state(game: games.Game, opening: Opening) -> games.State:
    """The position an opening leads to.

    Raises:
        games.GameError: a bad position string or move.
    """
    return games.replay(game, opening.start or None, opening.moves)

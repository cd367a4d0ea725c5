"""The plies of a record to analyse: for each, the position its mover acted in, as the mover
saw it (a Yin Yang view hides the other side's laws: the analysis never searches what the
player could not know), and what followed."""

from __future__ import annotations

from dataclasses import dataclass

import games
from enginesrv.event.play.records import Record


class BadRecordError(ValueError):
    """A record that cannot be analysed: its message names the line and the reason."""


@dataclass(frozen=True, slots=True)
class Ply:
    """One decision of a game.

    Attributes:
        number: its place in the game, from 1.
        mover: the seat that made it (0 = p1).
        token: the move played.
        position: the position string the mover acted in, as the mover saw it.
    """

    number: int
    mover: int
    token: str
    position: str


@dataclass(frozen=True, slots=True)
class Game:
    """A record's plies, and the outcome its last move reached (None: the game did not end
    by the rules, or the record stops before the end)."""

    plies: tuple[Ply, ...]
    outcome: games.Outcome | None


def plies_of(game: games.Game, record: Record, source: str) -> Game:
    """Every ply of ``record`` (a game of ``game``), replayed and checked.

    Raises:
        BadRecordError: the start position or a move is not valid; the message names
            ``source``, the line and the reason.
    """
    try:
        state = games.replay(game, record.start_position(), [])
    except games.GameError as exc:
        raise BadRecordError(f"{source}: the start position: {exc}") from None
    plies: list[Ply] = []
    for number, entry in enumerate(record.moves, 1):
        if state.is_terminal():
            raise BadRecordError(f"{source}:{entry.line}: move {number} comes after the end")
        mover = state.to_move()
        position = state.view(mover).to_string()
        try:
            games.replay(game, state, [entry.token], first=number)
        except games.ReplayError as exc:
            raise BadRecordError(f"{source}:{entry.line}: {exc}") from None
        plies.append(Ply(number, mover, entry.token, position))
    return Game(tuple(plies), state.outcome() if state.is_terminal() else None)

"""A finished game as an event's store keeps it (``GameRow``): made from the game by keyword
(``game_row``), and checked value by value when it is read back (``row_problem``), since a
store is a file anyone may have written."""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Union, get_args, get_origin

from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.results.files import record_name
from enginesrv.event.results.wording import quoted
from enginesrv.event.schedule import ScheduledGame
from games.base import Winner


@dataclass(frozen=True, slots=True)
class GameRow:
    """A finished game as stored."""

    id: int
    round: int
    pairing: int
    first: str
    second: str
    p1: str
    p2: str
    pair: int
    opening: int
    winner: Winner
    reason: str
    first_points: float
    plies: int
    wall: float
    engine_time: float
    record: str | None


GAME_COLUMNS = tuple(f.name for f in fields(GameRow))


def game_row(
    item: ScheduledGame, names: list[str], result: GameResult, *, with_record: bool
) -> GameRow:
    """The stored row of the game ``item`` between the players ``names`` that ended with
    ``result`` (its record in ``games/`` when ``with_record``)."""
    outcome = result.outcome
    return GameRow(
        id=item.id,
        round=item.round,
        pairing=item.pairing,
        first=names[item.first],
        second=names[item.second],
        p1=names[item.p1],
        p2=names[item.p2],
        pair=item.pair,
        opening=item.opening,
        winner=outcome.result,
        reason=outcome.reason,
        first_points=outcome.points(0 if item.p1 == item.first else 1),
        plies=result.plies,
        wall=result.wall,
        engine_time=result.engine_time,
        record=record_name(item.id) if with_record else None,
    )


MAX_ROW_TEXT = 200
"""The longest text a game row holds: a player's name (at most 100 characters, then ``#N``
when two share one) or a reason (a few words). A longer one is a crafted row, refused before
it is printed or used as a key."""


def row_problem(row: GameRow, values: tuple[object, ...], hints: dict[str, Any]) -> str | None:
    """What is wrong with ``row`` as read back (``values``, its columns; ``hints``, the types
    of ``GameRow``'s fields), in words; None: each value has its field's type and is one a
    run stores."""
    for name, value in zip(GAME_COLUMNS, values, strict=True):
        if not fits(value, hints[name]) or not _plausible(name, value):
            shown = quoted(value, 40) if isinstance(value, str) else short(repr(value))
            return f"game {short(repr(row.id))} has {name} = {shown}"
    return None


def shared(value: Any) -> Any:
    """A short text of a row (a player, a seat, a reason) as one shared string: a store of
    many games holds a handful of them, each many times."""
    return sys.intern(value) if isinstance(value, str) and len(value) <= 100 else value


def fits(value: object, hint: Any) -> bool:
    """Whether a value read back from the store has the type of its field."""
    origin = get_origin(hint)
    if origin in (types.UnionType, Union):
        return any(fits(value, arg) for arg in get_args(hint))
    if origin is tuple:
        args = get_args(hint)
        if not isinstance(value, tuple):
            return False
        return len(args) != 2 or args[1] is not Ellipsis or all(fits(v, args[0]) for v in value)
    check = _SCALARS.get(hint)
    return check is None or check(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_SCALARS: dict[Any, Callable[[object], bool]] = {
    type(None): lambda value: value is None,
    bool: lambda value: isinstance(value, bool),
    int: _is_int,
    float: _is_finite,
    str: lambda value: isinstance(value, str),
}
"""The check of a value of each plain type a stored field may have (others pass: a
``Literal``'s values are checked by ``_plausible``)."""


def _plausible(column: str, value: object) -> bool:
    """Whether a game row's value (of the right type) is one a run stores."""
    if column == "winner":
        return value in ("p1", "p2", "draw")
    if column == "first_points":
        return value in (0, 0.5, 1)
    if column in ("id", "round"):
        return isinstance(value, int) and value >= 1
    if column in ("pairing", "pair", "opening", "plies", "wall", "engine_time"):
        return not isinstance(value, int | float) or value >= 0
    if column in ("first", "second", "p1", "p2", "reason"):
        return not isinstance(value, str) or len(value) <= MAX_ROW_TEXT
    return True


def short(text: str, limit: int = 60) -> str:
    """``text`` on one line and cut to ``limit`` characters (for an error message)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

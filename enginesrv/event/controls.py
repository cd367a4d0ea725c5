"""The limits and rules a game is played under: time controls (``TimeControl``), fixed move
limits (``MoveLimits``), and the adjudication of resigns, draws and long games
(``Adjudication``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_PLIES = 1000
"""Games longer than this are adjudicated a draw (``max-plies``); the rules of Yohoho and Yin
Yang let a game go on for ever."""


_TC_RE = re.compile(r"(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``[MOVES/]SECONDS[+INCREMENT]``: a clock of ``base_ms``, plus ``inc_ms`` per move, plus
    ``base_ms`` again every ``moves`` moves when given."""

    base_ms: int
    inc_ms: int = 0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``40/60+0.6``, ``60+0.6`` or ``60`` (seconds).

        Raises:
            ValueError: another form, or a clock of no time; the message names the text.
        """
        m = _TC_RE.fullmatch(text.strip())
        if m is None:
            raise ValueError(
                f"time control {text!r}: write [MOVES/]SECONDS[+INCREMENT], e.g. 40/60+0.6, "
                "2+0.05 or 60"
            )
        moves = int(m.group(1)) if m.group(1) else None
        base = round(float(m.group(2)) * 1000)
        inc = round(float(m.group(3)) * 1000) if m.group(3) else 0
        if base <= 0 or moves == 0:
            raise ValueError(f"time control {text!r}: the clock must hold some time")
        return cls(base, inc, moves)

    def __str__(self) -> str:
        text = f"{self.base_ms / 1000:g}"
        if self.moves:
            text = f"{self.moves}/{text}"
        if self.inc_ms:
            text += f"+{self.inc_ms / 1000:g}"
        return text


@dataclass(frozen=True, slots=True)
class MoveLimits:
    """What bounds each decision: a clock, a time per move, a depth, a node count."""

    tc: TimeControl | None = None
    st_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def describe(self) -> str:
        """The record's ``TimeControl`` text."""
        parts = []
        if self.tc is not None:
            parts.append(f"tc={self.tc}")
        if self.st_ms is not None:
            parts.append(f"st={self.st_ms / 1000:g}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        return " ".join(parts) or "none"


def _key_values(text: str, what: str, keys: Sequence[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or key not in keys:
            raise ValueError(f"{what} {text!r}: {part!r} is not one of {', '.join(keys)}=N")
        try:
            values[key] = int(value)
        except ValueError:
            raise ValueError(f"{what} {text!r}: {value!r} is not a whole number") from None
        if values[key] < 0:
            raise ValueError(f"{what} {text!r}: {key} must not be negative")
    missing = [k for k in keys if k not in values]
    if missing:
        raise ValueError(f"{what} {text!r}: missing {', '.join(missing)}")
    return values


@dataclass(frozen=True, slots=True)
class ResignRule:
    """Resign for a player whose score is at most ``-score`` for ``movecount`` own moves."""

    movecount: int
    score: int

    @classmethod
    def parse(cls, text: str) -> ResignRule:
        """Parse ``movecount=N,score=CP``."""
        v = _key_values(text, "resign rule", ("movecount", "score"))
        return cls(max(1, v["movecount"]), v["score"])


@dataclass(frozen=True, slots=True)
class DrawRule:
    """A draw once, from ply ``movenumber`` on, both players' scores have stayed within
    ``score`` of zero for ``movecount`` moves in a row."""

    movenumber: int
    movecount: int
    score: int

    @classmethod
    def parse(cls, text: str) -> DrawRule:
        """Parse ``movenumber=N,movecount=N,score=CP``."""
        v = _key_values(text, "draw rule", ("movenumber", "movecount", "score"))
        return cls(v["movenumber"], max(1, v["movecount"]), v["score"])


@dataclass(frozen=True, slots=True)
class Adjudication:
    """How the arbiter ends games the rules do not end (module docstring)."""

    max_plies: int = DEFAULT_MAX_PLIES
    repetitions: int = 0
    """A draw when one position has been seen this many times (0: never)."""
    resign: ResignRule | None = None
    draw: DrawRule | None = None
    timemargin_ms: int = 0
    """How far past its clock a player may answer before it forfeits."""

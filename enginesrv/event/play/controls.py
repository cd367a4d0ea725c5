"""The limits and rules a game is played under: time controls (``TimeControl``), fixed move
limits (``MoveLimits``), and the adjudication of resigns, draws and long games
(``Adjudication``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

DEFAULT_MAX_PLIES = 1000
"""Games longer than this are adjudicated a draw (``max-plies``); the rules of Yohoho and Yin
Yang let a game go on for ever."""


_TC_RE = re.compile(r"(?:([0-9]+)/)?([0-9:.]+)(?:\+([0-9]+(?:\.[0-9]+)?))?")
_TIME_RE = re.compile(r"([0-9]+)(?::([0-9]{2}))?(?::([0-9]{2}))?(\.[0-9]+)?")
MAX_CLOCK_MS = 2**31 - 1
"""The largest base time or increment (24 days): engines read clocks as 32-bit numbers."""
_FORMS = (
    "write [MOVES/]TIME[+INCREMENT], TIME in seconds, M:SS or H:MM:SS and INCREMENT in "
    "seconds (e.g. 40/60+0.6, 2+0.05, 1:30+1, 1:00:00), or inf"
)


def _whole(digits: str, tc: str, unit: str) -> int:
    """A whole number of the control ``tc``, refused before it is converted when it has more
    digits than any allowed value (a long enough one would not even convert)."""
    if len(digits.lstrip("0")) > len(str(MAX_CLOCK_MS)):
        limit = MAX_CLOCK_MS // 1000 if unit == "seconds" else MAX_CLOCK_MS
        raise ValueError(f"time control {tc!r}: at most {limit} {unit}")
    return int(digits)


def _seconds_ms(text: str, tc: str) -> int:
    """``SECONDS``, ``M:SS`` or ``H:MM:SS`` (with a fraction of the last) in milliseconds."""
    m = _TIME_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"time control {tc!r}: {text!r} is not a time; {_FORMS}")
    first, second, third, fraction = m.groups()
    fields = [_whole(first, tc, "seconds")] + [int(f) for f in (second, third) if f is not None]
    if any(f >= 60 for f in fields[1:]):
        raise ValueError(f"time control {tc!r}: minutes and seconds after a ':' are below 60")
    seconds = 0
    for value in fields:
        seconds = seconds * 60 + value
    return round((seconds + float(fraction or 0)) * 1000)


def _seconds_text(ms: int) -> str:
    """Milliseconds as seconds, exactly, without trailing zeros (``1500`` -> ``1.5``)."""
    whole, part = divmod(ms, 1000)
    return f"{whole}.{part:03d}".rstrip("0").rstrip(".") if part else str(whole)


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``[MOVES/]TIME[+INCREMENT]``: a clock of ``base_ms``, plus ``inc_ms`` per move, plus
    ``base_ms`` again every ``moves`` moves when given; or ``inf`` (``infinite``): no clock
    at all, the player thinks as long as it likes."""

    base_ms: int
    inc_ms: int = 0
    moves: int | None = None
    infinite: bool = False

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``40/60+0.6``, ``60+0.6``, ``60`` (seconds), ``1:30+1`` (M:SS),
        ``1:00:00`` (H:MM:SS), ``40/1:30:00+30`` or ``inf``.

        Raises:
            ValueError: another form, a clock of no time or of more than ``MAX_CLOCK_MS``;
                the message names the text.
        """
        body = text.strip()
        if body.lower() == "inf":
            return INFINITE
        m = _TC_RE.fullmatch(body)
        if m is None:
            raise ValueError(f"time control {text!r}: {_FORMS}")
        moves = _whole(m.group(1), text, "moves") if m.group(1) else None
        base = _seconds_ms(m.group(2), text)
        # exactly, in decimal: a float of enough digits is infinite, and has no whole value
        inc_ms = Decimal(m.group(3) or 0) * 1000
        if inc_ms > MAX_CLOCK_MS:
            raise ValueError(f"time control {text!r}: at most {MAX_CLOCK_MS // 1000} seconds")
        inc = round(inc_ms)
        if base <= 0 or moves == 0:
            raise ValueError(f"time control {text!r}: the clock must hold some time")
        if max(base, inc) > MAX_CLOCK_MS:
            raise ValueError(f"time control {text!r}: at most {MAX_CLOCK_MS // 1000} seconds")
        if (moves or 0) > MAX_CLOCK_MS:
            raise ValueError(f"time control {text!r}: at most {MAX_CLOCK_MS} moves")
        return cls(base, inc, moves)

    def __str__(self) -> str:
        """The control in seconds (``1:30+1`` reads ``90+1``; ``inf``): ``parse`` gives it
        back."""
        if self.infinite:
            return "inf"
        text = _seconds_text(self.base_ms)
        if self.moves:
            text = f"{self.moves}/{text}"
        if self.inc_ms:
            text += f"+{_seconds_text(self.inc_ms)}"
        return text


INFINITE = TimeControl(0, infinite=True)
"""``inf``: no clock."""


@dataclass(frozen=True, slots=True)
class MoveLimits:
    """What bounds each decision: a clock, a time per move, a depth, a node count."""

    tc: TimeControl | None = None
    st_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    @property
    def clock(self) -> TimeControl | None:
        """The clock the arbiter keeps (None: no clock, with ``tc=inf`` too)."""
        return None if self.tc is None or self.tc.infinite else self.tc

    def own(self, tc: TimeControl | None) -> MoveLimits:
        """These limits for a player with a control of its own (None: these): ``tc`` replaces
        the clock or the time per move; the depth and node limits stay."""
        return self if tc is None else MoveLimits(tc, None, self.depth, self.nodes)

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


def describe_seats(limits: tuple[MoveLimits, MoveLimits]) -> str:
    """The record's ``TimeControl`` text for two players' limits: one description when they
    are the same, else each seat's (``p1 tc=60+1, p2 tc=30+0.5``)."""
    if limits[0] == limits[1]:
        return limits[0].describe()
    return f"p1 {limits[0].describe()}, p2 {limits[1].describe()}"


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

"""An event's configuration (``EventConfig``): the players, the game, the limits and rules,
the schedule's shape and the results directory, checked as a whole; ``EventError`` for
anything that stops an event.

Every value is checked in one place, ``check_setting`` (one value) and ``EventConfig.check``
(all of them, and how they fit together), whichever door it came in by: a flag, a TOML event
file or a stored event. A value comes from a file as any TOML or JSON type, so each check
looks at the type first (``True`` is not a number, ``"false"`` is not a boolean). The ranges
bound what an event can cost before it starts: at most ``MAX_SCHEDULE`` games in all, so that
its schedule is always small enough to build.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

import games
from enginesrv.event.play.controls import (
    Adjudication,
    DrawRule,
    MoveLimits,
    ResignRule,
    TimeControl,
)
from enginesrv.event.play.players import (
    MOVE_TIMEOUT,
    Deadlines,
    PlayerSpecError,
    name_problem,
    parse_player,
)
from enginesrv.event.results import stats
from enginesrv.event.results.files import MAX_PLIES

MAX_SCHEDULE = 10_000
"""The most games an event may have: pairings x games x rounds. What such an event stores is
read back whole: its store fits under ``files.MAX_STORE_BYTES`` whatever the names, and
``results`` reads it within seconds."""
MAX_PLAYERS = 1000
"""The most players of an event (a gauntlet of 1000 plays 999 pairings; a round robin of more
than 141 players has more games than ``MAX_SCHEDULE``)."""
MAX_SECONDS = 86_400.0
"""The longest time per move and the longest wait (``--st``, ``--*-timeout``): a day."""
MIN_SECONDS = 0.001
"""The shortest time per move and the shortest wait: a millisecond, the unit of ``go
movetime`` (a shorter ``--st`` would be sent as 0 ms)."""
MAX_PATH = 4096
"""The longest path of an openings file, in characters (Linux's ``PATH_MAX``)."""

WHOLE_RANGES: dict[str, tuple[int, int]] = {
    "games": (1, MAX_SCHEDULE),
    "rounds": (1, MAX_SCHEDULE),
    "concurrency": (1, 256),
    "max_plies": (1, MAX_PLIES),
    "repetitions": (0, 1000),
    "timemargin": (0, 3_600_000),
    "seed": (0, 2**63 - 1),
    "depth": (1, 1000),
    "nodes": (1, 10**12),
    "log_cap": (1, 1024),
    "rating_interval": (0, MAX_SCHEDULE),
}
"""The whole-number settings and the smallest and largest value of each."""
SECONDS_SETTINGS = ("st", "startup_timeout", "ready_timeout", "move_timeout")
"""Settings in seconds: at least ``MIN_SECONDS``, at most ``MAX_SECONDS``, a whole number or
not."""
BOOLEAN_SETTINGS = ("gauntlet", "repeat", "isolate", "isolate_network", "no_contain", "debug")
OPTIONAL_SETTINGS = frozenset({"depth", "nodes", "st", "tc", "sprt", "resign", "draw", "openings"})
"""Settings that may be left unset (None)."""
OPENINGS_ORDERS = ("sequential", "random")


class EventError(ValueError):
    """A configuration or storage problem that stops the event before or while it runs; the
    message says what and how to fix it."""


class SettingError(EventError):
    """One setting of the wrong type or out of its range, or settings that do not fit
    together; ``key`` names it (the field of ``EventConfig``), ``reason`` says what it must be
    and quotes the value."""

    def __init__(self, key: str, reason: str, *, together: tuple[str, ...] = ()) -> None:
        super().__init__(reason if together else f"{key}: {reason}")
        self.key = key
        self.reason = reason
        self.together = together
        """The other settings ``key`` does not fit with (the message then names none)."""


def shown(value: object, limit: int = 60) -> str:
    """A value as an error message quotes it: its ``repr`` (control characters escaped, so
    the message stays one line), cut after ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_whole(key: str, value: object) -> None:
    low, high = WHOLE_RANGES[key]
    if not _is_whole(value) or not low <= value <= high:  # type: ignore[operator]
        raise SettingError(
            key, f"{shown(value)} is not a whole number of at least {low} and at most {high:,}"
        )


def _check_seconds(key: str, value: object) -> None:
    number = isinstance(value, float | int) and not isinstance(value, bool)
    if not number or not MIN_SECONDS <= value <= MAX_SECONDS:  # type: ignore[operator]  # (NaN fails too)
        raise SettingError(
            key,
            f"{shown(value)} is not a number of seconds of at least {MIN_SECONDS} and at most "
            f"{MAX_SECONDS:,.0f}",
        )


def _check_parsed(key: str, value: object, parse: Callable[[str], object], form: str) -> None:
    if not isinstance(value, str):
        raise SettingError(key, f"a string such as {form}, not {shown(value)}")
    try:
        parse(value)
    except ValueError as exc:
        raise SettingError(key, str(exc)) from None


def _check_game(value: object) -> None:
    known = games.available()
    if not isinstance(value, str) or value not in known:
        raise SettingError("game", f"unknown game {shown(value)}; known: {', '.join(known)}")


def _check_event(value: object) -> None:
    if not isinstance(value, str):
        raise SettingError("event", f"a name (a string), not {shown(value)}")
    problem = name_problem(value) if value else None  # "": named by its game and date
    if problem is not None:
        raise SettingError("event", f"the name {shown(value)} {problem}")


def _check_openings(value: object) -> None:
    if not isinstance(value, str) or not value or "\0" in value or len(value) > MAX_PATH:
        raise SettingError(
            "openings", f"the path of a file (up to {MAX_PATH} characters), not {shown(value)}"
        )


def _check_players(value: object) -> None:
    if not isinstance(value, tuple | list) or not all(isinstance(p, str) for p in value):
        raise SettingError("players", f"a list of player specs (strings), not {shown(value)}")
    if not 2 <= len(value) <= MAX_PLAYERS:
        raise SettingError("players", f"2 to {MAX_PLAYERS} players, not {len(value)}")
    for text in value:
        try:
            spec = parse_player(text)
        except PlayerSpecError as exc:
            raise SettingError("players", str(exc)) from None
        problem = name_problem(spec.name)
        if problem is not None:
            raise SettingError(
                "players",
                f"player {shown(text)}: the name {shown(spec.name)} {problem}"
                + ("" if "name=" in text else "; give it another with name=NAME:"),
            )


_TEXT_CHECKS: dict[str, tuple[Callable[[str], object], str]] = {
    "tc": (TimeControl.parse, '"60+1"'),
    "sprt": (stats.parse_sprt, '"elo0=0,elo1=5,alpha=0.05,beta=0.05"'),
    "resign": (ResignRule.parse, '"movecount=3,score=600"'),
    "draw": (DrawRule.parse, '"movenumber=40,movecount=8,score=10"'),
}


def check_setting(key: str, value: object) -> None:
    """Check one setting of ``EventConfig`` (``key`` its field) for its type and range.

    Raises:
        SettingError: naming the key, what it must be, and the value.
    """
    if value is None and key in OPTIONAL_SETTINGS:
        return
    if key in WHOLE_RANGES:
        _check_whole(key, value)
    elif key in SECONDS_SETTINGS:
        _check_seconds(key, value)
    elif key in BOOLEAN_SETTINGS:
        if not isinstance(value, bool):
            raise SettingError(key, f"true or false, not {shown(value)}")
    elif key in _TEXT_CHECKS:
        _check_parsed(key, value, *_TEXT_CHECKS[key])
    elif key == "openings_order":
        if value not in OPENINGS_ORDERS:
            raise SettingError(key, f"sequential or random, not {shown(value)}")
    elif key == "game":
        _check_game(value)
    elif key == "event":
        _check_event(value)
    elif key == "openings":
        _check_openings(value)
    elif key == "players":
        _check_players(value)
    else:
        raise SettingError(key, "not a setting of an event")


def schedule_size(players: int, gauntlet: bool, games: int, rounds: int) -> int:
    """The number of games of an event, counted without building its schedule."""
    pairings = players - 1 if gauntlet else players * (players - 1) // 2
    return pairings * games * rounds


@dataclass(frozen=True)
class EventConfig:
    """Everything that defines an event (stored with its results, so ``--resume`` needs
    nothing else)."""

    game: str
    players: tuple[str, ...]
    gauntlet: bool = False
    games: int = 2
    rounds: int = 1
    repeat: bool = False
    openings: str | None = None
    openings_order: str = "sequential"
    tc: str | None = None
    st: float | None = None
    depth: int | None = None
    nodes: int | None = None
    max_plies: int = 1000
    repetitions: int = 0
    resign: str | None = None
    draw: str | None = None
    timemargin: int = 0
    seed: int = 1
    concurrency: int = 1
    sprt: str | None = None
    event: str = ""
    """The event's name in its records; ``prepare`` names an unnamed event by its game and
    the date it starts (``yoxii 2026-12-01``)."""
    startup_timeout: float = 10.0
    ready_timeout: float = 5.0
    move_timeout: float = MOVE_TIMEOUT
    isolate: bool = False
    """Run every ``cmd:`` engine under bubblewrap (``--isolate``; ``contain``)."""
    isolate_network: bool = False
    """With ``isolate``, keep the host's network for the engines (``--isolate-network``)."""
    no_contain: bool = False
    """In a game with hidden information, run the ``cmd:`` engines uncontained
    (``--no-contain``); by default they are contained (``contain.wrapper_for``)."""
    debug: bool = False
    """Keep a protocol trace of every external engine in each game (``--debug``); stored, so
    that ``--resume`` keeps it, but not part of the schedule."""
    log_cap: int = 64
    """The most mebibytes kept of each stream of one ``cmd:`` engine in one game: its
    standard error and its protocol trace (``--log-cap``; ``private_log``)."""
    rating_interval: int = 0
    """Show the rating table after every this many games while the event runs (0: at the end
    only); a display setting, not part of the schedule."""

    def check(self) -> None:
        """Check every setting for its type and range (``check_setting``), then how they fit
        together: at most ``MAX_SCHEDULE`` games, an even ``games`` with ``repeat``, a limit
        per move, the adjudication and SPRT rules. Touches no file and starts nothing.

        Raises:
            SettingError: a setting of the wrong type or out of range, naming it.
            EventError: settings that do not fit together.
        """
        for f in fields(self):
            check_setting(f.name, getattr(self, f.name))
        size = schedule_size(len(self.players), self.gauntlet, self.games, self.rounds)
        if size > MAX_SCHEDULE:
            raise SettingError(
                "games",
                f"the event would have {size:,} games (pairings x games x rounds), more than "
                f"{MAX_SCHEDULE:,}",
                together=("rounds", "players", "gauntlet"),
            )
        if self.repeat and self.games % 2:
            raise SettingError(
                "games",
                f"--repeat plays each opening twice: games must be even, not {self.games}",
                together=("repeat",),
            )
        self.move_limits()
        self.adjudication()
        self.sprt_params()

    def to_json(self) -> str:
        """The configuration as JSON."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> EventConfig:
        """The inverse of ``to_json`` (unknown keys ignored)."""
        raw = json.loads(text)
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        values["players"] = tuple(values.get("players", ()))
        return cls(**values)

    def schedule_key(self) -> dict[str, object]:
        """The fields the schedule and the games depend on (a resumed event must keep them)."""
        keep = (
            "game",
            "players",
            "gauntlet",
            "games",
            "rounds",
            "repeat",
            "openings",
            "openings_order",
            "tc",
            "st",
            "depth",
            "nodes",
            "seed",
        )
        key = {k: getattr(self, k) for k in keep}
        if self.tc:
            # one clock however it is written: 1:30+1 is 90+1
            with contextlib.suppress(ValueError):
                key["tc"] = str(TimeControl.parse(self.tc))
        return key

    def move_limits(self) -> MoveLimits:
        """The limits of each decision.

        Raises:
            EventError: a bad time control, or no limit at all.
        """
        try:
            tc = TimeControl.parse(self.tc) if self.tc else None
        except ValueError as exc:
            raise EventError(str(exc)) from None
        st_ms = round(self.st * 1000) if self.st is not None else None
        if tc is None and st_ms is None and self.depth is None and self.nodes is None:
            raise EventError("give a limit: --tc, --st, --depth or --nodes")
        if tc is not None and st_ms is not None:
            raise EventError("--tc and --st exclude each other")
        return MoveLimits(tc, st_ms, self.depth, self.nodes)

    def deadlines(self) -> Deadlines:
        """How long a player may take to start, to get ready and, without a clock, to move."""
        return Deadlines(self.startup_timeout, self.ready_timeout, move=self.move_timeout)

    def adjudication(self) -> Adjudication:
        """The adjudication rules.

        Raises:
            EventError: a bad resign or draw rule.
        """
        try:
            resign = ResignRule.parse(self.resign) if self.resign else None
            draw = DrawRule.parse(self.draw) if self.draw else None
        except ValueError as exc:
            raise EventError(str(exc)) from None
        return Adjudication(self.max_plies, self.repetitions, resign, draw, self.timemargin)

    def sprt_params(self) -> stats.SprtParams | None:
        """The SPRT parameters, if any.

        Raises:
            EventError: bad parameters, or SPRT with more than two players.
        """
        if not self.sprt:
            return None
        if len(self.players) != 2:
            raise EventError("--sprt needs exactly two players")
        try:
            return stats.parse_sprt(self.sprt)
        except ValueError as exc:
            raise EventError(str(exc)) from None

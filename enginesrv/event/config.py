"""An event's configuration (``EventConfig``): the players, the game, the limits and rules,
the schedule's shape and the results directory, checked as a whole; ``EventError`` for
anything that stops an event."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, fields

from enginesrv.event import stats
from enginesrv.event.controls import Adjudication, DrawRule, MoveLimits, ResignRule, TimeControl
from enginesrv.event.players import (
    MOVE_TIMEOUT,
    Deadlines,
)


class EventError(ValueError):
    """A configuration or storage problem that stops the event before or while it runs; the
    message says what and how to fix it."""


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
            "game", "players", "gauntlet", "games", "rounds", "repeat", "openings",
            "openings_order", "tc", "st", "depth", "nodes", "seed",
        )  # fmt: skip
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

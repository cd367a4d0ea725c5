"""The clocks of one game (``GameClock``): the arbiter's and the web referee's.

Each seat has a control of its own or none (``TimeControl``; None: the seat has no clock, as
under a fixed move time). A decision (one ply) is a move: once its time is spent, the
increment is added, and a control of N moves adds its base time again after every N
decisions of that player. A clock may also be left running (``run``) and read while it runs
(``left``): the web referee shows a person's clock going down between two decisions; the
arbiter measures each decision and counts it as it ends (``decided``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from enginesrv.event.play.controls import TimeControl


@dataclass
class GameClock:
    """Both seats' time left (ms), their decisions so far, and whose clock runs since when."""

    controls: tuple[TimeControl | None, TimeControl | None]
    remaining: list[float] = field(default_factory=list)
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    running: int | None = None
    """The seat whose clock runs (``run``), if any."""
    since: float = 0.0
    """When the running clock was started (seconds, ``trio.current_time``)."""

    def __post_init__(self) -> None:
        if not self.remaining:
            self.remaining = [0.0 if c is None else float(c.base_ms) for c in self.controls]

    @classmethod
    def both(cls, control: TimeControl) -> GameClock:
        """A clock of the same control for both seats."""
        return cls((control, control))

    def has_clock(self, seat: int) -> bool:
        return self.controls[seat] is not None

    @property
    def shown(self) -> tuple[float, float] | None:
        """Both seats' time left, when both have a clock (what a spectator is shown)."""
        if self.controls[0] is None or self.controls[1] is None:
            return None
        return self.remaining[0], self.remaining[1]

    def moves_to_go(self, seat: int) -> int | None:
        """The decisions of ``seat`` left before its control adds time again (None: no such
        control)."""
        control = self.controls[seat]
        if control is None or not control.moves:
            return None
        return control.moves - self.decisions[seat] % control.moves

    def left(self, seat: int, now: float | None = None) -> float:
        """The time ``seat`` has left (ms); at ``now``, less what its running clock spent."""
        spent = 0.0
        if now is not None and self.running == seat:
            spent = (now - self.since) * 1000
        return self.remaining[seat] - spent

    def decided(self, seat: int, spent_ms: float = 0.0) -> None:
        """``seat`` made a decision that took ``spent_ms`` not yet counted (a running clock
        counted its own): take it off, add the increment, and the base time again when the
        control's moves are done."""
        control = self.controls[seat]
        if control is None:
            return
        self.remaining[seat] += control.inc_ms - spent_ms
        self.decisions[seat] += 1
        if control.moves and self.decisions[seat] % control.moves == 0:
            self.remaining[seat] += control.base_ms

    def run(self, seat: int | None, now: float) -> None:
        """Stop the running clock (its time is spent) and start that of ``seat`` (None:
        none runs)."""
        if self.running is not None:
            self.remaining[self.running] = self.left(self.running, now)
        self.running = seat
        self.since = now

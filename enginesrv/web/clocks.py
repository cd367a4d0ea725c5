"""The clocks of a game the server referees (``enginesrv.web.referee``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from enginesrv.event.play.controls import TimeControl


@dataclass
class Clocks:
    """Both players' time (ms) and whose runs since when (``trio.current_time``)."""

    control: TimeControl
    left: list[float] = field(default_factory=list)
    running: int | None = None
    since: float = 0.0

    def __post_init__(self) -> None:
        self.left = [float(self.control.base_ms)] * 2

    def now_left(self, seat: int, now: float) -> float:
        spent = (now - self.since) * 1000 if self.running == seat else 0.0
        return self.left[seat] - spent

    def run(self, seat: int | None, now: float) -> None:
        """Stop the running clock (its time is spent) and start ``seat``'s."""
        if self.running is not None:
            self.left[self.running] = self.now_left(self.running, now)
        self.running = seat
        self.since = now

    def decided(self, seat: int) -> None:
        self.left[seat] += self.control.inc_ms

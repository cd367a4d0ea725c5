"""What a search of the pool carries across its segments (each a run on one worker, until it
ends or is suspended for another peer's search), in ``Turn``: its time, which does not run
while it waits suspended, and its best move so far."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import trio

from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.share import Segment

LONGEST_SLICE = 64.0
"""The longest a resumed search keeps its worker before it may be suspended again."""
HELD_WAIT = 300.0
"""Seconds at most a search whose time runs only while it holds a worker (``on_hold``) waits
for one, in all."""


def better(before: SearchOutcome | None, now: SearchOutcome | None) -> SearchOutcome | None:
    """The outcome to keep of a search suspended once more: the later one, if it found a move
    (its iterations, on a table warmed by the earlier ones, are the better informed)."""
    if now is None or now.result is None:
        return before
    return now


@dataclass
class Turn:
    """One search across its segments: its time and its best move so far."""

    asked: float
    """When the search was asked for (``trio.current_time``)."""
    on_hold: Callable[[bool], None] | None
    """Told when a worker takes the search (True) and when it is suspended (False); when
    given, the search's time runs only while it holds a worker."""
    extra: float = 0.0
    """Seconds waited that are not the search's (suspended; the first wait when ``held``)."""
    waited: float = 0.0
    """Seconds waited for a worker in all."""
    resumed: int = 0
    """Times it was suspended and went on."""
    best: SearchOutcome | None = None
    """The outcome kept of its suspended segments."""

    @property
    def held(self) -> bool:
        """Whether its time runs only while it holds a worker."""
        return self.on_hold is not None

    def taken(self) -> None:
        """A worker takes the search."""
        if self.on_hold is not None:
            self.on_hold(True)

    def suspended(self, outcome: SearchOutcome | None) -> None:
        """A segment was suspended with ``outcome`` (what it had found): keep the better one,
        and go on."""
        if self.on_hold is not None:
            self.on_hold(False)
        self.best = better(self.best, outcome)
        self.resumed += 1

    def unserved(self, outcome: SearchOutcome) -> SearchOutcome:
        """The answer of a search that got no worker for its next segment (``outcome``): the
        move found before, if it was stopped while suspended."""
        if self.best is not None and self.best.result is not None:
            return self.best
        return outcome

    def wait_until(self, hard_deadline: float | None, now: float) -> float:
        """Until when the search may wait for a worker, from ``now``."""
        if self.held:
            # its time does not run while it waits: the waits are bounded on their own
            return now + max(0.0, HELD_WAIT - self.waited)
        return self.until(hard_deadline)

    def count_wait(self, seconds: float) -> None:
        """Count ``seconds`` waited for a worker (against the search only at its first wait,
        and only when its time runs while it waits)."""
        self.waited += seconds
        if self.held or self.resumed:
            self.extra += seconds

    def until(self, hard_deadline: float | None) -> float:
        """The hard deadline, moved on by the waits that are not the search's."""
        return math.inf if hard_deadline is None else hard_deadline + self.extra

    def segment(self, job: SearchJob, peer: str | None, slice_seconds: float) -> Segment:
        """The next segment of the search, taking its worker now."""
        ends = math.inf if job.deadline is None else self.asked + self.extra + job.deadline
        hold = min(LONGEST_SLICE, slice_seconds * 2**self.resumed)
        return Segment(peer, trio.current_time(), ends, hold, background=job.background)

    def segment_job(self, job: SearchJob) -> SearchJob:
        """The job as the next segment runs it: issued later by the waits not counted."""
        if self.extra > 0 and job.issued is not None:
            return replace(job, issued=job.issued + self.extra)
        return job

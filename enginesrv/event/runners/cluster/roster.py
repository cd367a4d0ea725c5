"""Which workers of a Dask cluster may play an event's games: the roster that the coordinator
keeps (``watch.WorkerWatch`` feeds it).

A worker may play a game only once its check (the preflight: each player of the event started
once and stopped, on that worker) has said that it runs both of the game's players. Workers come
and go while an event runs, and the roster follows them:

- a worker lost during its check is dropped (its check will never answer);
- a worker that joins later is checked, and gets no game before its check has passed;
- the event lacks workers for two players only when no worker that passed the check for both
  is left, no worker is being checked, and no worker was lost so recently that its nanny may
  still bring it back (``rejoin_wait``).

Sans-I/O: the caller tells the roster what it sees (the cluster's workers, the checks' answers),
with the time of its own clock; the roster says who may play, and how long to wait for more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

LOST_IN_CHECK = "left the cluster during its check"
LOST = "left the cluster"
NAMED_LOST = 8
"""The workers lost that ``reasons`` names, the latest; it counts the others."""


@dataclass
class WorkerRoster:
    """The workers of a cluster as one event sees them (module docstring)."""

    players: tuple[str, ...]
    """The event's players, by name: what a check starts."""
    rejoin_wait: float
    """Seconds after a worker is lost during which the event still waits for workers to join
    (a nanny restarting its worker) before it lacks them."""
    present: set[str] = field(default_factory=set)
    """The workers in the cluster at the last look, checked or not."""
    checking: set[str] = field(default_factory=set)
    """The present workers whose check has not answered."""
    cannot: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per worker whose check answered, the players it cannot run and why ({}: it runs all)."""
    lost: dict[str, str] = field(default_factory=dict)
    """Per worker that left the cluster, how (``LOST_IN_CHECK`` or ``LOST``)."""
    last_loss: float | None = None
    """When a worker was last seen gone (the caller's clock)."""
    checks_lost: int = 0
    """Workers lost during their checks, in all (the check may be what kills them: an engine
    that takes all the memory as it starts)."""

    def see(self, workers: Iterable[str], now: float) -> tuple[list[str], list[str]]:
        """The workers in the cluster at ``now``. Returns the workers that joined (now being
        checked: the caller starts their checks) and those that left, both sorted."""
        seen = set(workers)
        joined = sorted(seen - self.present)
        left = sorted(self.present - seen)
        for worker in joined:  # back at the address of one lost (a fixed port): a new one
            self.lost.pop(worker, None)
            self.cannot.pop(worker, None)
        for worker in left:
            self.lost[worker] = LOST_IN_CHECK if worker in self.checking else LOST
            self.checks_lost += worker in self.checking
            self.checking.discard(worker)
            self.present.discard(worker)
        if left:
            self.last_loss = now
        self.present.update(joined)
        self.checking.update(joined)
        return joined, left

    def checked(self, worker: str, problems: dict[str, str]) -> bool:
        """The check of ``worker`` answered: the players it cannot run, with why. Whether the
        answer counts (False: the worker had left, or was not being checked)."""
        if worker not in self.checking:
            return False
        self.checking.discard(worker)
        self.cannot[worker] = {name: why for name, why in problems.items() if name in self.players}
        return True

    def failed(self, worker: str, why: str) -> bool:
        """The check of ``worker`` failed as a whole (an error, no answer in time): the worker
        runs no player. Whether this counts (as for ``checked``)."""
        return self.checked(worker, dict.fromkeys(self.players, why))

    def able(self, *players: str) -> list[str]:
        """The workers, sorted, now in the cluster, whose check passed for every one of
        ``players``."""
        return sorted(
            worker
            for worker in self.present
            if worker in self.cannot and not any(p in self.cannot[worker] for p in players)
        )

    def wait_until(self, now: float) -> float | None:
        """Until when an event that lacks workers should wait for more before it gives up:
        ``math.inf`` while a check runs (it ends, and says so), the end of ``rejoin_wait``
        after a loss, or None: nothing is coming."""
        if self.checking:
            return math.inf
        if self.last_loss is not None and now < self.last_loss + self.rejoin_wait:
            return self.last_loss + self.rejoin_wait
        return None

    def reasons(self, *players: str) -> str:
        """Why no worker runs all of ``players``: each worker known, with its reason, on one
        line (``tcp://A: crash: ...; tcp://B: left the cluster``)."""
        parts = []
        lost = list(self.lost)[-NAMED_LOST:]
        for worker in sorted(self.present | set(lost)):
            if worker in self.lost:
                parts.append(f"{worker}: {self.lost[worker]}")
            elif worker in self.checking:
                parts.append(f"{worker}: its check has not answered")
            else:
                problems = self.cannot.get(worker, {})
                whys = [(p, problems[p]) for p in players if p in problems]
                if whys and (len(players) == 1 or whys == [(p, whys[0][1]) for p in players]):
                    parts.append(f"{worker}: {whys[0][1]}")  # one reason for every player
                elif whys:
                    parts.append(f"{worker}: " + ", ".join(f"{p}: {why}" for p, why in whys))
        if len(self.lost) > len(lost):
            parts.append(f"{len(self.lost) - len(lost)} more workers that left the cluster")
        return "; ".join(parts) if parts else "the cluster has no worker"

"""What crosses machines in an event on a cluster: a game's task (``GameTask``), sent through
Dask to a worker, and its result (``TaskResult``), sent back either as the task's value or
straight to the coordinator's result listener in one frame:

    the magic ``ESR1``, the event's token (16 bytes), the game's number (8 bytes), the length
    of the payload (4 bytes), all big-endian (``HEADER``); then the payload, the
    ``TaskResult`` pickled.

The coordinator answers one byte, ``ACK``, once it has taken (and stored) the result, or closes
the connection unanswered; the worker then returns that result through Dask.

The dask and distributed packages are the ``distributed`` extra: this package imports them
only inside its functions (``import_distributed``), so that the rest of the event code never
needs them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from enginesrv.event.config import EventError
from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.play.plan import GamePlan
from enginesrv.event.runners.cluster.settings import ClusterSettings

EXTRA = "pip install 'enginesrv[distributed]'"
MAGIC = b"ESR1"
HEADER = struct.Struct(">4s16sQI")
"""magic, the event's token, the game's number, the length of the pickled ``TaskResult``."""
ACK = b"\x01"


def import_distributed() -> Any:
    """The ``distributed`` package, or an ``EventError`` that says what to install."""
    try:
        import distributed  # noqa: PLC0415 (the distributed extra may be missing)
    except ImportError as exc:
        raise EventError(
            f"--cluster needs the distributed extra ({exc.name} is missing): {EXTRA}"
        ) from None
    return distributed


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """Where a worker sends a finished game's result: the coordinator's result listener."""

    host: str
    port: int
    token: bytes
    """The event's secret (16 random bytes): a result sent without it is not taken."""

    def __repr__(self) -> str:  # the token stays out of Dask's logs and dashboards
        return f"ReplyTo({self.host!r}, {self.port})"


@dataclass(frozen=True, slots=True)
class GameTask:
    """What a worker needs to play one game of the schedule."""

    config: str
    """The event's configuration (``EventConfig.to_json``)."""
    plan: GamePlan
    stop: str = ""
    """The name of the Dask ``Event`` that the coordinator sets when the event stops (an SPRT
    decision, Ctrl-C, an error): a game still running then is abandoned within
    ``settings.stop_poll``."""
    reply: ReplyTo | None = None
    """The coordinator's result listener; None: the result goes back as the task's value."""
    settings: ClusterSettings = field(default_factory=ClusterSettings)
    """The coordinator's: what the worker waits for (``stop_poll``, ``push_timeout``) and the
    largest result it sends straight (``push_max_bytes``)."""


@dataclass(frozen=True, slots=True)
class TaskResult:
    """A game played on a worker: its result, the bots' secret seeds, and where it ran."""

    result: GameResult | None
    """None: the game was abandoned because the event stopped."""
    secret_seeds: tuple[int, int]
    worker: str
    finished_at: float = 0.0
    """The worker's clock (``time.time()``) when the game ended."""
    delivered: bool = False
    """The result went straight to the coordinator (``GameTask.reply``), which took it: this
    answer, the task's value, carries no result."""

"""What the tournament loop asks of a place that plays games (``GameRunner``).

The loop (``enginesrv.event.tournament``) owns the event: its schedule, store, standings,
feed and SPRT. A runner owns the playing: its processes, its engines, its machines. The loop
runs ``lanes()`` games at a time, each ``await runner.play(plan, on_move)``, stores the game
and then tells the runner ``settle(game_id, stored)``. Where an event is played is a
``Venue`` (``LocalVenue``, ``ClusterVenue``): the settings of a kind of runner, which opens
one for an event. A new kind of runner (a ladder's connected bots, another cluster manager)
is one new module with a runner and its venue; the loop does not change.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import outcome
import trio

from enginesrv.event.play.arbiter import MoveObserver
from enginesrv.event.play.plan import GamePlan, Played

if TYPE_CHECKING:
    from enginesrv.event.prepared import PreparedEvent


class GameRunner(Protocol):
    """Plays the games of one event (module docstring). Made, and ended, by an ``open_*``
    async context manager of its module, which owns everything it starts."""

    clocks_here: bool
    """Whether games' clocks run on this event loop: the loop then stores each game off it (in
    a thread), so that a disk's fsync never delays a move's clock."""
    live: bool
    """Whether ``on_move`` is told the moves while they are played (a cluster's games are
    seen only as they begin and end)."""

    async def check(self) -> None:
        """Make sure every player can play here before the first game (an external engine
        started once, a cluster's workers checked); called once, before the first ``play``.

        Raises:
            EventError: a player that cannot play here, named, with the reason.
        """
        ...

    def lanes(self) -> int:
        """How many games to play at once (asked after ``check``)."""
        ...

    async def play(self, plan: GamePlan, on_move: MoveObserver | None) -> Played:
        """Play one game. A player's misbehaviour is the game's result, never an exception.

        Raises:
            EventError: the game could not be played here at all (the event stops, and may
                resume); ``PlayerSpecError`` and ``OSError`` likewise.
        """
        ...

    def settle(self, game_id: int, *, stored: bool) -> None:
        """The result of ``game_id`` (from ``play``) is stored, or dropped, or will not be."""
        ...


class Venue(Protocol):
    """Where an event's games are played: the settings of one kind of runner."""

    def open(
        self, event: PreparedEvent, out_dir: Path | None
    ) -> contextlib.AbstractAsyncContextManager[GameRunner]:
        """A runner of ``event`` (whose results directory is ``out_dir``), ended with the
        ``async with``.

        Raises:
            EventError: the event cannot be played here (said in one line).
        """
        ...


@contextlib.asynccontextmanager
async def open_background() -> AsyncIterator[trio.Nursery]:
    """A nursery for a runner's background tasks (its pool of searches, its listener, its
    watchers), cancelled when the body of the ``async with`` ends. What the body raises
    leaves as it is, not inside an exception group, so that the tournament loop's
    ``EventError`` reaches its caller as one."""
    failed: outcome.Error | None = None
    async with trio.open_nursery() as nursery:
        try:
            yield nursery
        except BaseException as exc:  # re-raised as it is once the background has ended
            failed = outcome.Error(exc)
        nursery.cancel_scope.cancel()
    if failed is not None:
        failed.unwrap()

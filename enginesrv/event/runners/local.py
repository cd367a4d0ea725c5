"""The games of an event played on this machine (``LocalRunner``).

Each game in progress has a ``Slot``: the player instances it plays with, started when first
needed and kept for the next game of the slot (an external engine is not started again for
every game). The built-in bots search in a pool of worker processes shared by every game (one
per game at once, and a spare, so that a worker killed past its deadline does not make the
next move of its game wait for a new process), started with the first game that has a bot.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

from enginesrv.event.config import EventError
from enginesrv.event.play.arbiter import MoveObserver
from enginesrv.event.play.contain import Wrap, wrapper_for
from enginesrv.event.play.plan import GamePlan, Played, play_planned
from enginesrv.event.play.preflight import check_players
from enginesrv.event.play.slots import Slot
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.runners.base import open_background
from enginesrv.search.pool import WorkerPool

log = structlog.get_logger("enginesrv.event.runners.local")


class LocalRunner:
    """Plays an event's games here (module docstring); made by ``open_local_runner``."""

    clocks_here = True
    live = True

    def __init__(
        self,
        event: PreparedEvent,
        nursery: trio.Nursery,
        *,
        logs: Path | None,
        traces: Path | None,
        isolate: Wrap | None,
    ) -> None:
        self.event = event
        self._nursery = nursery
        self._logs = logs
        self._traces = traces
        self._isolate = isolate
        self._pool: WorkerPool | None = None
        self._pool_lock = trio.Lock()
        self._idle: list[Slot] = []
        """Slots whose last game ended normally: their players are ready for another."""
        self._slots: set[Slot] = set()

    async def check(self) -> None:
        """Start each external engine once, with the event's ``trial_options``, and stop it
        again (``preflight.check_players``)."""
        event = self.event
        await check_players(
            event.specs, event.game, event.deadlines, self._isolate, event.trial_options
        )

    def lanes(self) -> int:
        return self.event.config.concurrency

    async def play(self, plan: GamePlan, on_move: MoveObserver | None) -> Played:
        slot = self._idle.pop() if self._idle else await self._new_slot()
        finished = False
        try:
            played = await play_planned(self.event.game, slot, plan, on_move)
            finished = True
        finally:
            if finished:
                self._idle.append(slot)
            else:  # stopped mid-game: its players are in no state for another
                self._slots.discard(slot)
                await slot.close()
        return played

    def settle(self, game_id: int, *, stored: bool) -> None:
        """Nothing waits on a stored game here."""

    async def _new_slot(self) -> Slot:
        event = self.event
        slot = Slot(
            list(event.specs),
            await self._bot_pool(),
            event.deadlines,
            self._logs,
            self._isolate,
            traces=self._traces,
            log_cap=event.config.log_cap << 20,
        )
        self._slots.add(slot)
        return slot

    async def _bot_pool(self) -> WorkerPool | None:
        """The pool of the bots' searches, started with the first game that has a bot."""
        if not any(spec.kind == "bot" for spec in self.event.specs):
            return None
        async with self._pool_lock:
            if self._pool is None:
                # engines run beside it: a killed spawner is not started again
                # (forked.Spawner)
                pool = WorkerPool(
                    self._nursery,
                    self.event.config.concurrency,
                    spare=1,
                    restart_spawner=False,
                )
                await pool.start()
                self._pool = pool
        return self._pool

    async def aclose(self) -> None:
        """End every player and the pool of searches."""
        with trio.CancelScope(shield=True):
            for slot in list(self._slots):
                await slot.close()
            self._slots.clear()
            self._idle.clear()
            if self._pool is not None:
                await self._pool.aclose()


@contextlib.asynccontextmanager
async def open_local_runner(
    event: PreparedEvent,
    out_dir: Path | None,
    *,
    traces: Path | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> AsyncIterator[LocalRunner]:
    """A ``LocalRunner`` for ``event`` whose records live in ``out_dir``; with ``--debug``,
    the external engines' protocol traces are published in ``traces`` (default
    ``out_dir/logs``). ``on_notice`` (default: a warning logged) is told in one line when the
    ``cmd:`` engines run uncontained in a game that would contain them.

    Raises:
        EventError: ``--debug`` with neither ``traces`` nor ``out_dir``.
    """
    if not event.config.debug or event.all_bots:
        traces = None  # a bot's searches run in the arbiter's own workers: nothing to trace
    elif traces is None:
        if out_dir is None:
            raise EventError("--debug needs a directory for its traces: give --out DIR")
        traces = out_dir / "logs"
    containment = await trio.to_thread.run_sync(
        functools.partial(wrapper_for, event.config, event.game, out_dir)
    )  # it may probe bubblewrap, once per process
    if containment.notice is not None:
        if on_notice is None:
            log.warning("engines_uncontained", detail=containment.notice)
        else:
            on_notice(containment.notice)
    logs = None if out_dir is None else out_dir / "logs"
    async with open_background() as nursery:
        runner = LocalRunner(event, nursery, logs=logs, traces=traces, isolate=containment.wrap)
        try:
            yield runner
        finally:
            await runner.aclose()


@dataclass(frozen=True)
class LocalVenue:
    """This machine (``open_local_runner``): with ``--debug``, the external engines' protocol
    traces published in ``traces`` (None: ``out_dir/logs``); ``on_notice`` told when the
    ``cmd:`` engines run uncontained (None: a warning logged)."""

    traces: Path | None = None
    on_notice: Callable[[str], None] | None = None

    def open(
        self, event: PreparedEvent, out_dir: Path | None
    ) -> contextlib.AbstractAsyncContextManager[LocalRunner]:
        return open_local_runner(event, out_dir, traces=self.traces, on_notice=self.on_notice)

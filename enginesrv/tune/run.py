"""Running a tuning run: SPSA's iterations (``spsa``) played as game pairs by an event's runner
(``runners.base.GameRunner``: on this machine, or on the workers of a Dask cluster), every
game stored as it ends and every step as it is taken (``state``).

Games, not iterations, are handed to the runner's lanes: a free lane takes the next game of
the oldest iteration dispatched that still has one, or else dispatches the next iteration
from the current ``theta``. With two lanes the two games of a pair are played at once and
each iteration starts from the step before it (SPSA as Spall wrote it); with more, several
iterations are in flight and each steps from ``theta`` as it stands when its pair ends (as
fishtest's workers do).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from enginesrv.event.config import EventError
from enginesrv.event.lock import lock_event
from enginesrv.event.opened import OpenedStore, open_event_store
from enginesrv.event.play.openings import Opening
from enginesrv.event.play.plan import Played
from enginesrv.event.play.players import GameOptions
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.runners.base import GameRunner, Venue
from enginesrv.event.runners.local import LocalVenue
from enginesrv.tune import spsa
from enginesrv.tune.config import TUNE_KEY, TuneConfig
from enginesrv.tune.state import (
    Iteration,
    Step,
    TuneState,
    opening_line,
    probe_key,
    step_key,
)

Meta = list[tuple[str, str]]
"""Meta entries stored with a game (key, value)."""


@dataclass(frozen=True)
class PreparedTune:
    """A tuning run ready to play: what it tunes and the event of its games."""

    tune: TuneConfig
    event: PreparedEvent


@dataclass(frozen=True)
class Stepped:
    """What the progress display is told after each step."""

    step: Step
    state: TuneState
    elapsed: float
    """Seconds since this run began."""
    steps_before: int
    """Steps taken before this run began (resumed)."""


@dataclass(frozen=True)
class TuneObservers:
    """Who is told how a run goes: ``on_step`` after each step, ``on_start`` once with the
    state the run begins from, ``on_tick`` every second with the time since the start."""

    on_step: Callable[[Stepped], None]
    on_start: Callable[[TuneState], None] = lambda state: None
    on_tick: Callable[[float], None] | None = None


async def run_tune(
    prepared: PreparedTune,
    out_dir: Path | None,
    observers: TuneObservers,
    *,
    venue: Venue | None = None,
) -> TuneState:
    """Play the run's iterations not yet done at ``venue`` (None: here), ``out_dir`` held
    throughout (``lock_event``), and return the final state.

    Raises:
        EventError: as ``tournament.run_event``: a player that cannot play, an unreadable
            openings file, a results directory that another run holds or that cannot be
            written, a damaged store (kept as it is).
    """
    start = tuple((p.name, spsa.engine_value(p, p.start)) for p in prepared.tune.params)
    # an external engine is tried with the start values before the first game: one that
    # refuses a parameter (a name it does not know) would lose every game, each pair a draw
    event = dataclasses.replace(prepared.event, trial_options=start)
    with lock_event(out_dir):
        async with (venue or LocalVenue()).open(event, out_dir) as runner:
            return await tune_games(prepared, out_dir, runner, observers)


async def tune_games(
    prepared: PreparedTune, out_dir: Path | None, runner: GameRunner, observers: TuneObservers
) -> TuneState:
    """The loop of a run on ``runner`` (module docstring)."""
    event = prepared.event
    openings = event.openings()
    loaded: list[TuneState] = []

    def pending(db: ResultsDB) -> bool:
        loaded.append(TuneState.load(prepared.tune, db))
        return len(loaded[0].steps) < prepared.tune.schedule.iterations

    meta = {TUNE_KEY: prepared.tune.to_json()}
    async with open_event_store(event, out_dir, runner, pending=pending, meta=meta) as opened:
        state = loaded[0] if loaded else TuneState.load(prepared.tune, opened.db)
        _check_openings(state, openings, opened.db)
        run = _TuneRun(prepared, opened, state, openings, runner)
        observers.on_start(state)
        await run.play(observers)
        return state


def _check_openings(state: TuneState, openings: list[Opening], db: ResultsDB) -> None:
    """Check that each iteration with a game left to play names one of the event's
    ``openings``, and the one it was played from (its file may have changed since the
    iteration was stored).

    Raises:
        EventError: the first that does not, naming it.
    """
    count = len(openings)
    for k, iteration in sorted(state.iterations.items()):
        if len(state.points.get(k, {})) == 2:
            continue
        played = f"{db.path}: iteration {k} was played from opening {iteration.opening + 1}"
        if not 0 <= iteration.opening < count:
            raise EventError(
                f"{played}, and the openings file now holds {count}: its other game cannot "
                "be played from the same opening (was the file changed?)"
            )
        line = iteration.line
        if line and opening_line(openings[iteration.opening]) != line:
            raise EventError(
                f"{played}, and the openings file now holds another opening there: its other "
                "game cannot be played from the same opening (was the file changed?)"
            )


class _TuneRun:
    """One run of a tuning run: its store, state and lanes (``tune_games``)."""

    def __init__(
        self,
        prepared: PreparedTune,
        opened: OpenedStore,
        state: TuneState,
        openings: list[Opening],
        runner: GameRunner,
    ) -> None:
        self.tune = prepared.tune
        self.event = prepared.event
        self.opened = opened
        self.state = state
        self.openings = openings
        self.runner = runner
        self.waiting = collections.deque(
            (k, slot)
            for k in sorted(state.iterations)
            for slot in (0, 1)
            if slot not in state.points.get(k, {})
        )
        """The games of the iterations dispatched that are neither stored nor begun."""
        self.stored_probes = set(state.iterations)
        """The iterations whose probe is stored (with the first of their games stored)."""
        self.last = max(state.iterations, default=0)
        """The highest iteration dispatched."""
        self.free = collections.deque(
            k for k in range(1, self.last + 1) if k not in state.iterations
        )
        """Iterations below the last one dispatched that none was (their games were all lost
        when a run was killed), dispatched first."""
        self.steps_before = len(state.steps)
        self.started = 0.0
        self.observers = TuneObservers(lambda stepped: None)
        self.failure: list[BaseException] = []

    async def play(self, observers: TuneObservers) -> None:
        """Take the steps a run left untaken, then play the games left, a lane per game the
        runner plays at once."""
        self.observers = observers
        self.started = trio.current_time()
        for k in sorted(self.state.iterations):
            if k not in self.state.stepped and self.state.result(k) is not None:
                # a step is stored with its pair's second game: only a store of another
                # version of this program can lack one
                taken = self._take_step(k)
                put = functools.partial(self.opened.db.put, step_key(k), taken.to_json())
                await self.opened.write(put, in_thread=self.runner.clocks_here)
                self._tell(taken)
        async with trio.open_nursery() as nursery:
            if observers.on_tick is not None:
                nursery.start_soon(_tick, observers.on_tick, self.started)
            try:
                async with trio.open_nursery() as lanes:
                    for _ in range(self.runner.lanes()):
                        lanes.start_soon(self._lane, lanes.cancel_scope)
            finally:
                nursery.cancel_scope.cancel()
        if self.failure:
            raise EventError(_failure_words(self.failure[0])) from None

    async def _lane(self, cancel: trio.CancelScope) -> None:
        """Play games until none is left; a failure to store stops every lane."""
        try:
            while (job := self._next()) is not None:
                iteration, slot = job
                played = await self._play(iteration, slot)
                taken: list[Step] = []
                entries = functools.partial(self._entries, iteration, slot, taken)
                item = iteration.game(slot)
                await self.opened.keep(self.event, item, played, self.runner, with_row=entries)
                self.stored_probes.add(iteration.probe.k)
                for each in taken:
                    self._tell(each)
        except (ValueError, OSError, sqlite3.Error) as exc:  # EventError, PlayerSpecError
            self.failure.append(exc)
            cancel.cancel()

    def _entries(self, iteration: Iteration, slot: int, taken: list[Step], row: GameRow) -> Meta:
        """What is stored with game ``slot`` of ``iteration`` (its row ``row``): the
        iteration's probe with its first game stored, and the step (taken now, into
        ``taken``) with its second, so that a game and what follows from it are kept in one
        transaction, as many as a match has."""
        k = iteration.probe.k
        out = [] if k in self.stored_probes else [(probe_key(k), iteration.to_json())]
        self.state.add_game(row)
        if self.state.result(k) is not None and k not in self.state.stepped:
            step = self._take_step(k)
            taken.append(step)
            out.append((step_key(k), step.to_json()))
        return out

    def _next(self) -> tuple[Iteration, int] | None:
        """The next game to play (its iteration and slot): the first one waiting of an
        iteration dispatched, or the first of a new one."""
        state = self.state
        if self.waiting:
            k, slot = self.waiting.popleft()
            return state.iterations[k], slot
        if self.free:
            k = self.free.popleft()
        else:
            k = self.last + 1
            if k > self.tune.schedule.iterations:
                return None
            self.last = k
        iteration = self._dispatch(k)
        state.iterations[k] = iteration
        self.waiting.append((k, 1))
        return iteration, 0

    def _dispatch(self, k: int) -> Iteration:
        """Iteration ``k``'s probe around the current ``theta`` and its opening, drawn from
        the event's seed and ``k`` alone."""
        seed = self.event.config.seed
        rng = random.Random(f"spsa:{seed}:{k}")
        tune = self.tune
        probe = spsa.probe(tune.params, tune.schedule, self.state.theta, k, rng, tune.rounding)
        count = len(self.openings)
        if self.event.config.openings_order == "random":
            opening = random.Random(f"openings:{seed}:{k}").randrange(count)
        else:
            opening = (k - 1) % count
        return Iteration(probe, opening, opening_line(self.openings[opening]))

    async def _play(self, iteration: Iteration, slot: int) -> Played:
        """Game ``slot`` of ``iteration``, each side given its values for this game only."""
        item = iteration.game(slot)
        plan = self.event.plan(item, self.openings)
        sides = (self._options(iteration.probe.plus), self._options(iteration.probe.minus))
        setup = dataclasses.replace(plan.setup, options=(sides[item.p1], sides[item.p2]))
        return await self.runner.play(dataclasses.replace(plan, setup=setup), None)

    def _options(self, values: tuple[float, ...]) -> GameOptions:
        params = self.tune.params
        return tuple((p.name, spsa.engine_value(p, v)) for p, v in zip(params, values, strict=True))

    def _take_step(self, k: int) -> Step:
        """Take iteration ``k``'s step (its games are in ``state.points``) from the current
        ``theta``; the caller stores it."""
        state, tune = self.state, self.tune
        result = state.result(k)
        assert result is not None
        probe = state.iterations[k].probe
        theta = spsa.step(tune.params, tune.schedule, state.theta, probe, result)
        taken = Step(k, len(state.steps) + 1, result, theta)
        state.steps.append(taken)
        state.theta = theta
        return taken

    def _tell(self, taken: Step) -> None:
        elapsed = trio.current_time() - self.started
        self.observers.on_step(Stepped(taken, self.state, elapsed, self.steps_before))


async def _tick(report: Callable[[float], None], started: float) -> None:
    while True:
        await trio.sleep(1)
        report(trio.current_time() - started)


def _failure_words(error: BaseException) -> str:
    if isinstance(error, OSError):
        return f"cannot write the results: {error}"
    if isinstance(error, sqlite3.Error):
        return f"the results database failed: {error}"
    return str(error)

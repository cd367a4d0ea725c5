"""What the tuning tests share: a run made and played in this process (``prepared``, ``play``),
a runner that records what each game was given and can stop the run (``SpyVenue``), the
store read back as plain data, and the checks every finished or resumed run must pass."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import MoveObserver
from enginesrv.event.play.plan import GamePlan, Played
from enginesrv.event.play.players import GameOptions
from enginesrv.event.prepared import PreparedEvent, prepare
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.runners.base import GameRunner, Venue
from enginesrv.event.runners.local import LocalVenue
from enginesrv.tune import spsa
from enginesrv.tune.config import TUNE_KEY, TuneConfig
from enginesrv.tune.run import PreparedTune, Stepped, TuneObservers, run_tune
from enginesrv.tune.spsa import Param, Probe
from enginesrv.tune.state import Iteration, Step, TuneState, probe_key, step_key

AIM = "Aim=100:0:1000:50"
"""The noisy bot's ``Aim`` from far below its ``Peak`` (500), over its whole range."""
LIMIT = 60.0
"""Seconds any one run in these tests may take (they take a few)."""


def tune_config(games: int, *params: str, player: str = "bot:noisy", **schedule: Any) -> TuneConfig:
    """A checked run of ``games`` games of ``player`` over ``params`` (default: ``AIM``)."""
    parsed = tuple(Param.parse(text) for text in params or (AIM,))
    return TuneConfig.of(player, parsed, games, **schedule)


def prepared(
    tune: TuneConfig, out: Path | None, *, resume: bool = False, **settings: Any
) -> PreparedTune:
    """``tune`` on Yohoho at ``st=0.3``, seed 1 and concurrency 2 unless ``settings`` say
    otherwise, prepared as the command line prepares it."""
    base = EventConfig(game="yohoho", players=(), **{"st": 0.3, "concurrency": 2, **settings})
    event = prepare(tune.event_config(base), out, resume=resume)
    return PreparedTune(tune, event)


@dataclass
class Seen:
    """What the observers of a run were told: the steps, and the state it began from."""

    steps: list[Stepped] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    """The steps stored when the run began."""


def play(
    run: PreparedTune, out: Path | None, venue: Venue | None = None, log: list[str] | None = None
) -> tuple[TuneState, Seen]:
    """Play ``run`` to its end in this process; its final state and what was observed (each
    step also as ``step K`` in ``log``)."""
    seen = Seen()

    def on_step(stepped: Stepped) -> None:
        seen.steps.append(stepped)
        if log is not None:
            log.append(f"step {stepped.step.k}")

    observers = TuneObservers(
        on_step=on_step, on_start=lambda state: seen.started.append(len(state.steps))
    )

    async def main() -> TuneState:
        with trio.fail_after(LIMIT):
            return await run_tune(run, out, observers, venue=venue)

    return trio.run(main), seen


# -- a runner that records and stops -------------------------------------------------------------


@dataclass(frozen=True)
class Given:
    """A game as the runner was handed it: its id, its seats' names and per-game options."""

    game_id: int
    names: tuple[str, str]
    options: tuple[GameOptions, GameOptions]


@dataclass
class Spy:
    """What a ``SpyVenue``'s runners saw, over every run it served."""

    given: list[Given] = field(default_factory=list)
    stored: list[int] = field(default_factory=list)
    """The ids of the games stored, in the order the runner was told."""
    log: list[str] = field(default_factory=list)
    """``game ID`` as each game is handed to the runner (``play`` adds ``step K``)."""
    stop_after: int | None = None
    """Stop the run (an ``EventError`` from ``settle``) right after this many games of it are
    stored: as a ``kill -9`` after a game's row is written and before anything else is."""
    in_run: int = 0


class SpyRunner:
    """A runner that plays through ``inner`` and tells ``spy`` what it does."""

    def __init__(self, inner: GameRunner, spy: Spy) -> None:
        self.inner = inner
        self.spy = spy
        self.clocks_here = inner.clocks_here
        self.live = inner.live

    async def check(self) -> None:
        await self.inner.check()

    def lanes(self) -> int:
        return self.inner.lanes()

    async def play(self, plan: GamePlan, on_move: MoveObserver | None) -> Played:
        setup = plan.setup
        self.spy.given.append(Given(plan.game_id, setup.names, setup.options))
        self.spy.log.append(f"game {plan.game_id}")
        return await self.inner.play(plan, on_move)

    def settle(self, game_id: int, *, stored: bool) -> None:
        self.inner.settle(game_id, stored=stored)
        if not stored:
            return
        self.spy.stored.append(game_id)
        self.spy.in_run += 1
        if self.spy.in_run == self.spy.stop_after:
            raise EventError(f"stopped after game {game_id}")


@dataclass
class SpyVenue:
    """Where a run is played through a ``SpyRunner`` (on this machine by default)."""

    spy: Spy
    inner: Venue = field(default_factory=LocalVenue)

    def open(
        self, event: PreparedEvent, out_dir: Path | None
    ) -> contextlib.AbstractAsyncContextManager[GameRunner]:
        return self._open(event, out_dir)

    @contextlib.asynccontextmanager
    async def _open(self, event: PreparedEvent, out_dir: Path | None) -> AsyncIterator[GameRunner]:
        self.spy.in_run = 0
        async with self.inner.open(event, out_dir) as runner:
            yield SpyRunner(runner, self.spy)


# -- the store, read back -------------------------------------------------------------------------


def meta(out: Path, prefix: str) -> dict[str, Any]:
    """The meta entries of ``out``'s store whose keys begin with ``prefix``, JSON-decoded."""
    db = sqlite3.connect(out / "results.sqlite")
    try:
        found = db.execute("SELECT key, value FROM meta WHERE key LIKE ?", (prefix + "%",))
        return {key: json.loads(value) for key, value in found}
    finally:
        db.close()


def probes(out: Path) -> dict[int, dict[str, Any]]:
    """The iterations dispatched, by number."""
    return {entry["k"]: entry for entry in meta(out, "probe:").values()}


def steps(out: Path) -> list[dict[str, Any]]:
    """The steps taken, in the order they were."""
    return sorted(meta(out, "step:").values(), key=lambda s: int(s["seq"]))


def rows(out: Path) -> dict[int, tuple[str, str, float, str]]:
    """Each stored game's p1, p2, the ``+`` side's points and the reason, by id."""
    db = sqlite3.connect(out / "results.sqlite")
    try:
        found = db.execute("SELECT id, p1, p2, first_points, reason FROM games ORDER BY id")
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in found}
    finally:
        db.close()


def expected_options(
    tune: TuneConfig, entry: dict[str, Any], game_id: int
) -> tuple[GameOptions, GameOptions]:
    """The options of p1 and p2 in game ``game_id`` of the iteration ``entry`` (a stored
    probe): the ``+`` side moves first in its pair's first game, the ``-`` side in the
    second."""
    plus, minus = (
        tuple((p.name, spsa.engine_value(p, v)) for p, v in zip(tune.params, values, strict=True))
        for values in (entry["plus"], entry["minus"])
    )
    return (plus, minus) if game_id % 2 else (minus, plus)


def assert_given_the_stored_probes(tune: TuneConfig, out: Path, given: list[Given]) -> None:
    """Every game handed to a runner had its iteration's stored probe, each side its own."""
    stored = probes(out)
    plus, minus = tune.names
    assert given
    for each in given:
        k = (each.game_id + 1) // 2
        assert each.options == expected_options(tune, stored[k], each.game_id), each
        assert each.names == ((plus, minus) if each.game_id % 2 else (minus, plus)), each


def assert_complete(tune: TuneConfig, out: Path) -> None:
    """``out`` holds the whole run, each piece once and consistent with the others: every
    game of every iteration, every step in order, each step's result the one of its pair
    and each ``theta`` the step of the one before from its iteration's probe."""
    n = tune.schedule.iterations
    games = rows(out)
    assert sorted(games) == list(range(1, 2 * n + 1))
    plus, minus = tune.names
    for game_id, (p1, p2, _, _) in games.items():
        assert (p1, p2) == ((plus, minus) if game_id % 2 else (minus, plus)), game_id
    stored = probes(out)
    assert sorted(stored) == list(range(1, n + 1))
    taken = steps(out)
    assert [s["seq"] for s in taken] == list(range(1, n + 1))
    assert sorted(s["k"] for s in taken) == list(range(1, n + 1))
    theta = tuple(p.start for p in tune.params)
    for s in taken:
        k = s["k"]
        result = round(sum(2 * games[g][2] - 1 for g in (2 * k - 1, 2 * k)))
        assert s["result"] == result, s
        entry = stored[k]
        probe = spsa.Probe(k, tuple(entry["flips"]), tuple(entry["plus"]), tuple(entry["minus"]))
        theta = spsa.step(tune.params, tune.schedule, theta, probe, result)
        assert tuple(s["theta"]) == theta, s


def assert_dispatched_from_the_steps(tune: TuneConfig, out: Path) -> None:
    """With one game at a time, iteration ``k`` is dispatched around ``theta`` after step
    ``k - 1`` (the start for the first): each stored probe is that ``theta`` moved by
    ``c_k`` along its flips, clipped and rounded."""
    theta = tuple(p.start for p in tune.params)
    taken = {s["k"]: s for s in steps(out)}
    for k, entry in sorted(probes(out).items()):
        for i, param in enumerate(tune.params):
            c = tune.schedule.c(param, k)
            for side, sign in (("plus", 1), ("minus", -1)):
                value = param.clip(theta[i] + sign * c * entry["flips"][i])
                assert entry[side][i] == (round(value) if param.integer else value), (k, side)
        if k in taken:
            theta = tuple(taken[k]["theta"])


def stored_run(
    out: Path,
    tune: TuneConfig,
    thetas: list[tuple[float, ...]],
    reasons: tuple[str, str] = ("goal-row", "goal-row"),
) -> None:
    """A run's store holding one step per value of ``thetas`` (each its iteration's, with
    its probe and its two games: the ``+`` side wins the first, the ``-`` side the second,
    ended for ``reasons``; no record is needed to read the steps)."""
    out.mkdir(parents=True)
    event = prepared(tune, out).event
    names = event.names
    db = ResultsDB.create(out / "results.sqlite", event.config, {TUNE_KEY: tune.to_json()})
    try:
        count = len(tune.params)
        for k, theta in enumerate(thetas, 1):
            probe = Probe(k, (1,) * count, theta, theta)
            iteration = Iteration(probe, 0)
            db.put(probe_key(k), iteration.to_json())
            for slot, reason in enumerate(reasons):
                item = iteration.game(slot)
                p1, p2 = names[item.p1], names[item.p2]
                db.add(GameRow(
                    item.id, item.round, item.pairing, names[0], names[1], p1, p2, item.pair,
                    item.opening, "p1", reason, 1.0 - slot, 20, 0.1, 0.01, None,
                ))  # fmt: skip
            db.put(step_key(k), Step(k, k, 0, theta).to_json())
    finally:
        db.close()

"""How large a tuning run's results store may grow (``store_bound``), so that a run whose store
would pass the cap every reader keeps to (``files.MAX_STORE_BYTES``) is refused before it
begins: such a store could not be resumed nor reported once written.

A run's store holds, beside an event's rows, each iteration's probe (its flips and the values
of both sides) and step (``theta`` after it): some 80 bytes a parameter an iteration, which
with 64 parameters written with a decimal point over 10,000 games made a store of 42 MB.
The bound is measured, not modelled: a sample of iterations whose every value is written at
its longest (``WIDEST``), with the run's own names, is stored in SQLite in memory, and what
the sample's second half took is taken again for every iteration past it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.outcome import Termination
from enginesrv.event.results.files import MAX_STORE_BYTES
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.results.wording import quoted
from enginesrv.tune.config import TUNE_KEY, TuneConfig
from enginesrv.tune.spsa import Probe
from enginesrv.tune.state import LINE_DIGITS, Iteration, Step, probe_key, step_key

SAMPLE = 64
"""Iterations stored to measure what one takes (twice: the first ``SAMPLE`` and as many
again)."""
WIDEST = -1.2345678901234567e-100
"""A value of a parameter written with a decimal point, or of ``theta``, at its longest in
JSON (24 characters: each such value of a run is at most as long)."""
MARGIN = 1.1
"""The bound is what the sample says, and a tenth more."""


def store_bound(tune: TuneConfig, hidden_information: bool, config_bytes: int) -> int:
    """The most bytes the results store of ``tune`` takes once all its games are stored, with
    a stored event configuration of ``config_bytes`` (its secret seeds too, in a game of
    ``hidden_information``)."""
    return _Growth.of(tune, hidden_information, config_bytes).bound(tune.schedule.iterations)


def check_store_size(tune: TuneConfig, hidden_information: bool, config_bytes: int) -> None:
    """Refuse a run whose store could pass ``MAX_STORE_BYTES`` (``store_bound``).

    Raises:
        EventError: naming the parameters, the games and the most games they may have.
    """
    growth = _Growth.of(tune, hidden_information, config_bytes)
    if growth.bound(tune.schedule.iterations) <= MAX_STORE_BYTES:
        return
    most = growth.most_iterations()
    count = len(tune.params)
    raise EventError(
        f"games: {count} parameter{'s' if count != 1 else ''} of {quoted(tune.player)} over "
        f"{tune.games:,} games would make a results store past its cap of "
        f"{MAX_STORE_BYTES:,} bytes (one that could not be resumed nor reported): give at most "
        f"{2 * most:,} games, or fewer parameters"
    )


@dataclass(frozen=True)
class _Growth:
    """What a run's store takes: ``first`` bytes for the first ``sample`` iterations, then
    ``each`` for every one past them, and ``fixed`` besides (module docstring)."""

    first: int
    sample: int
    each: float
    fixed: int

    @classmethod
    def of(cls, tune: TuneConfig, hidden_information: bool, config_bytes: int) -> _Growth:
        sample = min(tune.schedule.iterations, SAMPLE)
        first = _stored_size(tune, sample, hidden_information)
        twice = _stored_size(tune, 2 * sample, hidden_information)
        fixed = 2 * (config_bytes + len(tune.to_json()))
        return cls(first, sample, (twice - first) / sample, fixed)

    def bound(self, iterations: int) -> int:
        grown = self.first + self.each * max(0, iterations - self.sample)
        return math.ceil(MARGIN * grown) + self.fixed

    def most_iterations(self) -> int:
        """The most iterations whose bound is within ``MAX_STORE_BYTES``."""
        room = (MAX_STORE_BYTES - self.fixed) / MARGIN - self.first
        most = self.sample + max(0, math.floor(room / self.each)) if self.each > 0 else 0
        while most > 1 and self.bound(most) > MAX_STORE_BYTES:
            most -= 1
        return most


def _stored_size(tune: TuneConfig, iterations: int, hidden_information: bool) -> int:
    """The bytes of an in-memory store of ``iterations`` of ``tune`` at their widest."""
    db = ResultsDB(None)
    try:
        _fill(db, tune, iterations, hidden_information)
        pages = db.db.execute("PRAGMA page_count").fetchone()[0]
        size = db.db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    return int(pages) * int(size)


def write_widest(tune: TuneConfig, hidden_information: bool, path: Path) -> int:
    """Write at ``path`` the store of the whole of ``tune`` at its widest, as a run writes
    its store (write-ahead, a game a transaction), and return its size once closed: what
    ``store_bound`` bounds."""
    config = EventConfig("yinsh", tune.players, games=tune.games)
    db = ResultsDB.create(path, config, {TUNE_KEY: tune.to_json()})
    try:
        db.write_ahead()
        _fill(db, tune, tune.schedule.iterations, hidden_information)
    finally:
        db.close()
    return path.stat().st_size


def _fill(db: ResultsDB, tune: TuneConfig, iterations: int, hidden_information: bool) -> None:
    """Store in ``db`` the games, probes and steps of ``iterations`` of ``tune``, every value
    at its longest."""
    params = tune.params
    plus, minus = tune.names
    values = tuple(_widest(p.low, p.high) if p.integer else WIDEST for p in params)
    reason = max((t.value for t in Termination), key=len)
    for k in range(1, iterations + 1):
        probe = Probe(k, (-1,) * len(params), values, values)
        step = Step(k, k, -2, (WIDEST,) * len(params))
        for slot in (0, 1):
            game_id = 2 * k - 1 + slot
            p1, p2 = (plus, minus) if slot == 0 else (minus, plus)
            row = GameRow(
                game_id, k, 0, plus, minus, p1, p2, k, 10**9, "draw", reason, 0.5,
                10**9, 1e15 + 0.1, 1e15 + 0.1, f"games/game-{game_id:05d}.txt",
            )  # fmt: skip
            meta = [
                (probe_key(k), Iteration(probe, 10**9, "f" * LINE_DIGITS).to_json())
                if slot == 0
                else (step_key(k), step.to_json())
            ]
            if hidden_information:
                meta.append((f"seeds:{game_id}", f"[{2**63 - 1}, {2**63 - 1}]"))
            db.add(row, meta)


def _widest(low: float, high: float) -> float:
    """The bound of an integer parameter whose value is the longest in JSON (``-1e12`` is
    written ``-1000000000000.0``)."""
    return max((low, high), key=lambda v: len(repr(float(v))))

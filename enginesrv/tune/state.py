"""What a tuning run has done, as its results store keeps it: each game played (a row of the
games table, as an event's) and, in the same transaction, what follows from it: with an
iteration's first game stored, the iteration (its probe and opening, ``probe:K`` in the meta
table), and with its second, its step (``step:K``: the pair's result and ``theta`` after it,
numbered in the order the steps were taken). A tuning run thus commits once per game, as a
match does.

A run killed at any point, ``kill -9`` included, resumes from it (``TuneState.load``): an
iteration with one game stored plays the other with its stored probe, one with none stored
is dispatched again (from the same seed), and ``theta`` is the one after the last step
stored. An iteration whose games are stored but whose step is not (a store written otherwise)
takes it first. A step stored must agree with its games, and the steps be numbered 1, 2, ...
in the order they were taken: a store where they do not is refused as damaged.

The games lost by a forfeit (``FORFEITS``: on time, an illegal move, a crash) are counted by
reason: such a game says more of the machine or the engine than of the weights, and a run
with many is shown as such.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from enginesrv.event.config import EventError
from enginesrv.event.play.openings import Opening
from enginesrv.event.results.report import FORFEITS
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.schedule import ScheduledGame
from enginesrv.tune.config import TuneConfig
from enginesrv.tune.spsa import Param, Probe

PROBE = "probe:"
_HEX = "0123456789abcdef"
STEP = "step:"


def probe_key(k: int) -> str:
    """The meta key of iteration ``k``'s probe (keys sort as the iterations do)."""
    return f"{PROBE}{k:06d}"


def step_key(k: int) -> str:
    """The meta key of iteration ``k``'s step."""
    return f"{STEP}{k:06d}"


LINE_DIGITS = 16
"""Hex digits of an opening's digest (``opening_line``)."""


def opening_line(opening: Opening) -> str:
    """A digest of ``opening`` (its start and moves), stored with an iteration so that a
    resume can tell whether the opening it names is still the one its first game began from."""
    text = json.dumps([opening.start, list(opening.moves)])
    return hashlib.sha256(text.encode()).hexdigest()[:LINE_DIGITS]


@dataclass(frozen=True, slots=True)
class Iteration:
    """An iteration dispatched: its probe, the opening of its game pair (its number in the
    event's openings) and that opening's digest (``opening_line``; empty in a store written
    before digests were kept)."""

    probe: Probe
    opening: int
    line: str = ""

    def to_json(self) -> str:
        p = self.probe
        data = {"k": p.k, "flips": p.flips, "plus": p.plus, "minus": p.minus}
        return json.dumps({**data, "opening": self.opening, "line": self.line})

    def game(self, slot: int) -> ScheduledGame:
        """Game ``slot`` (0: the ``+`` side moves first, 1: the ``-`` side) of the pair, as
        an event's scheduled game whose players are the ``+`` side (0) and the ``-`` side."""
        k = self.probe.k
        return ScheduledGame(
            id=game_id(k, slot),
            round=k,
            pairing=0,
            first=0,
            second=1,
            p1=slot,
            pair=k,
            opening=self.opening,
        )


def game_id(k: int, slot: int) -> int:
    """The id of game ``slot`` (0 or 1) of iteration ``k``: 1 and 2 for the first, and so on."""
    return 2 * k - 1 + slot


@dataclass(frozen=True, slots=True)
class Step:
    """A step taken: the iteration, its place in the order of steps (1, 2, ...), the pair's
    result (wins minus losses of the ``+`` side) and ``theta`` after it."""

    k: int
    seq: int
    result: int
    theta: tuple[float, ...]

    def to_json(self) -> str:
        data = {"k": self.k, "seq": self.seq, "result": self.result, "theta": self.theta}
        return json.dumps(data)


@dataclass
class TuneState:
    """A run's iterations, games and steps so far (module docstring)."""

    tune: TuneConfig
    theta: tuple[float, ...]
    iterations: dict[int, Iteration] = field(default_factory=dict)
    points: dict[int, dict[int, float]] = field(default_factory=dict)
    """Per iteration, the ``+`` side's points in each of its games stored (by slot)."""
    steps: list[Step] = field(default_factory=list)
    forfeits: collections.Counter[str] = field(default_factory=collections.Counter)
    """The games stored that ended by a forfeit, by reason (``time-forfeit``, ...)."""

    @classmethod
    def load(cls, tune: TuneConfig, db: ResultsDB) -> TuneState:
        """The state ``db`` holds (a new run's: ``theta`` at the start, nothing done).

        Raises:
            EventError: an entry that does not parse or does not fit the run, named.
        """
        state = cls(tune, tuple(p.start for p in tune.params))
        try:
            for key, text in db.items(PROBE):
                state._add_iteration(key, text)
            for row in db.rows():
                state.add_game(row)
            steps = [_step(key, text, tune.params) for key, text in db.items(STEP)]
        except (ValueError, KeyError, TypeError) as exc:
            raise EventError(f"{db.path}: the tuning run is damaged: {exc}") from None
        state.steps = sorted(steps, key=lambda s: s.seq)
        if state.steps:
            state.theta = state.steps[-1].theta
        for number, each in enumerate(state.steps, 1):
            if each.seq != number:
                # a step takes the next number: with a gap or a number twice, the steps of a
                # resumed run would sort before older ones, and ``theta`` go back to an old one
                raise EventError(
                    f"{db.path}: the tuning run is damaged: step {each.k} is number "
                    f"{each.seq} in the order of the steps, where {number} is due (the "
                    f"{len(state.steps)} steps stored are numbered 1 to {len(state.steps)})"
                )
            if each.k not in state.iterations:
                raise EventError(
                    f"{db.path}: the tuning run is damaged: step {each.k} has no iteration"
                )
            played = state.result(each.k)
            if played != each.result:
                games = "one game or none stored" if played is None else f"games of {played:+d}"
                raise EventError(
                    f"{db.path}: the tuning run is damaged: step {each.k} took a result of "
                    f"{each.result:+d} from {games}"
                )
        return state

    def _add_iteration(self, key: str, text: str) -> None:
        data = _decoded(key, text)
        count = len(self.tune.params)
        k = _whole(data["k"], 1, self.tune.schedule.iterations)
        if key != probe_key(k):
            raise ValueError(f"{key} holds iteration {k}")
        flips = tuple(_whole(f, -1, 1) for f in _list(data["flips"], count))
        if 0 in flips:
            raise ValueError(f"{key}: a flip is 0")
        plus = tuple(_finite(v) for v in _list(data["plus"], count))
        minus = tuple(_finite(v) for v in _list(data["minus"], count))
        opening = _whole(data["opening"], 0, 10**9)
        line = data.get("line", "")
        if not isinstance(line, str) or line.strip(_HEX) or len(line) not in (0, LINE_DIGITS):
            raise ValueError(f"{key}: the opening's digest {str(line)[:60]!r} is not one")
        self.iterations[k] = Iteration(Probe(k, flips, plus, minus), opening, line)

    def add_game(self, row: GameRow) -> None:
        """Count the game ``row`` (stored, or being stored) in its iteration's points.

        Raises:
            ValueError: its iteration was not dispatched.
        """
        k, slot = (row.id + 1) // 2, (row.id + 1) % 2
        if k not in self.iterations:
            raise ValueError(f"game {row.id} belongs to no iteration")
        self.points.setdefault(k, {})[slot] = row.first_points
        if row.reason in FORFEITS:
            self.forfeits[row.reason] += 1

    @property
    def stepped(self) -> set[int]:
        """The iterations whose step is taken."""
        return {s.k for s in self.steps}

    def result(self, k: int) -> int | None:
        """Iteration ``k``'s result once both its games are stored (None before)."""
        points = self.points.get(k, {})
        if len(points) < 2:
            return None
        return round(sum(2 * p - 1 for p in points.values()))

    def games_stored(self) -> int:
        return sum(len(p) for p in self.points.values())


def _step(key: str, text: str, params: Sequence[Param]) -> Step:
    data = _decoded(key, text)
    k = _whole(data["k"], 1, 10**9)
    if key != step_key(k):
        raise ValueError(f"{key} holds the step of iteration {k}")
    theta = tuple(_finite(v) for v in _list(data["theta"], len(params)))
    for param, value in zip(params, theta, strict=True):
        if not param.low <= value <= param.high:
            raise ValueError(
                f"{key}: {param.name} {value:g} is outside {param.low:g} to {param.high:g}"
            )
    return Step(k, _whole(data["seq"], 1, 10**9), _whole(data["result"], -2, 2), theta)


def _decoded(key: str, text: str) -> Any:
    """The JSON ``text`` of the entry ``key``.

    Raises:
        ValueError: not JSON, or nested so deep that the parser would recurse past its limit.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{key} nests lists or objects too deep") from None


def _list(value: object, count: int) -> Sequence[object]:
    if not isinstance(value, list) or len(value) != count:
        raise ValueError(f"{str(value)[:60]} is not a list of {count}")
    return value


def _whole(value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{str(value)[:60]} is not a whole number from {low} to {high}")
    return value


def _finite(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{str(value)[:60]} is not a number")
    return float(value)

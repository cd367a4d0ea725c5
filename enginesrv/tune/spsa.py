"""Simultaneous perturbation stochastic approximation (SPSA) as fishtest runs it: the
parameters, the gain schedules, the probes of one iteration and the step a result makes.

Each iteration ``k`` (1, 2, ...) flips a fair coin per parameter (``flip`` is +1 or -1) and
plays the bot with ``theta + c_k * flip`` against the bot with ``theta - c_k * flip``: one
game pair from one opening, colours swapped. The pair's result (wins minus losses of the
``+`` side, -2 to 2) moves every parameter along its flip:

    theta += a_k / c_k * result * flip        (then clipped to [min, max])

The schedules are fishtest's (and Spall's). A parameter's perturbation shrinks from
``c_1 = c_end * N**gamma`` to ``c_end`` at the last of the ``N`` iterations
(``c_k = c_end * (N / k)**gamma``); its gain is ``a_k = a_end * ((A + N) / (A + k))**alpha``
with ``a_end = r_end * c_end**2``, so that the last step is ``r_end * c_end * result``: a
learning rate ``r_end`` shared by every parameter, in units of each one's ``c_end``. The
defaults: ``alpha`` 0.602 and ``gamma`` 0.101 (Spall's), ``A`` a tenth of the iterations
(the early steps, when ``a_k`` is largest, are tempered by it), and ``r_end`` 30 divided by
the iterations. Fishtest's usual 0.002 suits its runs of 30,000 game pairs and more; the
expected drift of a run grows with ``r_end`` times its iterations and its noise with
``r_end`` times their square root, so a rate inverse to the run's length lets a parameter
travel the same way in a run of a few hundred pairs as in a long one, and a longer run end
nearer its optimum.

An integer parameter is sent to the engine rounded: to the nearest integer
(``deterministic``, fishtest's default) or, with ``randomized``, up with the probability of
its fractional part (fishtest's other choice: the value's mean is then exact, so that a
perturbation smaller than 1 still moves the mean of what the engine plays with).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from enginesrv.event.results.wording import quoted

Rounding = Literal["deterministic", "randomized"]
ROUNDINGS: tuple[Rounding, ...] = ("deterministic", "randomized")

ALPHA = 0.602
"""The default decay of the gain ``a_k`` (Spall's)."""
GAMMA = 0.101
"""The default decay of the perturbation ``c_k`` (Spall's)."""
R_SCALE = 30.0
"""The default learning rate at the last iteration is this divided by the iterations
(``Schedule.r_end``)."""
C_END_PARTS = 20
"""A parameter's default ``c_end``: its range divided by this."""
MAX_PARAMS = 64
"""The most parameters one tuning run moves."""
MAX_MAGNITUDE = 1e12
"""The largest magnitude of a parameter's bounds (an engine's spin option is an integer)."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""A parameter is an engine option: a letter, then letters, digits and ``_`` (64 at most)."""
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class ParamError(ValueError):
    """A parameter or schedule setting that cannot be used; the message quotes it."""


@dataclass(frozen=True, slots=True)
class Param:
    """One tuned parameter: an engine option with its start, its bounds and its ``c_end``
    (the perturbation at the last iteration). ``integer``: the engine takes whole numbers
    (every value of its spec was written without a decimal point)."""

    name: str
    start: float
    low: float
    high: float
    c_end: float
    integer: bool = True

    @classmethod
    def parse(cls, text: str) -> Param:
        """``NAME=START:MIN:MAX[:STEP]``, ``STEP`` being ``c_end`` (default: the range
        divided by ``C_END_PARTS``).

        Raises:
            ParamError: the text does not have that form, or its numbers do not fit.
        """
        name, sep, rest = text.partition("=")
        parts = rest.split(":")
        if not sep or len(parts) not in (3, 4):
            raise ParamError(f"parameter {quoted(text)}: not NAME=START:MIN:MAX[:STEP]")
        numbers = []
        for part in parts:
            if not _NUMBER.fullmatch(part.strip()):
                raise ParamError(f"parameter {quoted(text)}: {quoted(part)} is not a number")
            numbers.append(float(part))
        integer = not any(("." in p or "e" in p.lower()) for p in parts[:3])
        step = numbers[3] if len(numbers) == 4 else None
        return cls.of(name, numbers[0], numbers[1], numbers[2], step, integer=integer)

    @classmethod
    def of(
        cls,
        name: str,
        start: float,
        low: float,
        high: float,
        step: float | None = None,
        *,
        integer: bool = True,
    ) -> Param:
        """A parameter from its values, checked (``step`` None: the default ``c_end``).

        Raises:
            ParamError: a name that is not an option's, or numbers that do not fit.
        """
        where = f"parameter {quoted(name)}"
        if not _NAME.fullmatch(name):
            raise ParamError(f"{where}: a name is a letter, then letters, digits or _ (64 at most)")
        for value in (start, low, high, step if step is not None else 1.0):
            if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
                raise ParamError(f"{where}: {value!r} is not a finite number of at most 1e12")
        if not low < high:
            raise ParamError(f"{where}: MIN {low:g} is not below MAX {high:g}")
        if not low <= start <= high:
            raise ParamError(f"{where}: START {start:g} is not within {low:g} to {high:g}")
        if integer and not all(v == int(v) for v in (start, low, high)):
            raise ParamError(f"{where}: an integer parameter has whole START, MIN and MAX")
        c_end = (high - low) / C_END_PARTS if step is None else step
        if not 0 < c_end <= (high - low) / 2:
            raise ParamError(
                f"{where}: STEP {c_end:g} is not above 0 and at most half the range "
                f"({(high - low) / 2:g})"
            )
        return cls(name, float(start), float(low), float(high), float(c_end), integer)

    def clip(self, value: float) -> float:
        """``value`` within the bounds."""
        return min(max(value, self.low), self.high)

    def spec(self) -> str:
        """The parameter as ``NAME=START:MIN:MAX:STEP`` (``Param.parse`` reads it back)."""
        return f"{self.name}={_num(self.start, self.integer)}:{_num(self.low, self.integer)}:" + (
            f"{_num(self.high, self.integer)}:{_num(self.c_end, self.c_end.is_integer())}"
        )


def _num(value: float, integer: bool) -> str:
    return str(int(value)) if integer else repr(value)


@dataclass(frozen=True, slots=True)
class Schedule:
    """The gains of a run of ``iterations`` game pairs (module docstring)."""

    iterations: int
    a_offset: float
    """Fishtest's and Spall's ``A``."""
    alpha: float
    gamma: float
    r_end: float

    @classmethod
    def of(
        cls,
        iterations: int,
        *,
        a_offset: float | None = None,
        alpha: float = ALPHA,
        gamma: float = GAMMA,
        r_end: float | None = None,
    ) -> Schedule:
        """A checked schedule (``a_offset`` None: a tenth of ``iterations``; ``r_end`` None:
        ``R_SCALE / iterations``).

        Raises:
            ParamError: a value out of its range, named.
        """
        offset = iterations / 10 if a_offset is None else a_offset
        rate = R_SCALE / max(1, iterations) if r_end is None else r_end
        checks = (  # each named as its flag and its key in a TOML file are
            ("iterations", iterations, 1, 10**9),
            ("a-offset", offset, 0, 10**9),
            ("alpha", alpha, 0, 10),
            ("gamma", gamma, 0, 10),
            ("r-end", rate, 1e-9, 1e6),
        )
        for name, value, low, high in checks:
            if not (isinstance(value, int | float) and low <= value <= high):
                raise ParamError(f"{name}: {value!r} is not a number from {low:g} to {high:g}")
        return cls(iterations, float(offset), float(alpha), float(gamma), float(rate))

    def c(self, param: Param, k: int) -> float:
        """The perturbation of ``param`` at iteration ``k`` (1-based)."""
        return param.c_end * float((self.iterations / k) ** self.gamma)

    def a(self, param: Param, k: int) -> float:
        """The gain of ``param`` at iteration ``k``."""
        a_end = self.r_end * param.c_end**2
        n, offset = self.iterations, self.a_offset
        return a_end * float(((offset + n) / (offset + k)) ** self.alpha)


@dataclass(frozen=True, slots=True)
class Probe:
    """One iteration's perturbation: its number, each parameter's flip, and the values the
    ``+`` and ``-`` sides play with (clipped; rounded for integer parameters)."""

    k: int
    flips: tuple[int, ...]
    plus: tuple[float, ...]
    minus: tuple[float, ...]


def probe(
    params: Sequence[Param],
    schedule: Schedule,
    theta: Sequence[float],
    k: int,
    rng: random.Random,
    rounding: Rounding = "deterministic",
) -> Probe:
    """The probe of iteration ``k`` around ``theta``, its flips and roundings drawn from
    ``rng``."""
    flips = tuple(1 if rng.getrandbits(1) else -1 for _ in params)
    plus: list[float] = []
    minus: list[float] = []
    for param, value, flip in zip(params, theta, flips, strict=True):
        c = schedule.c(param, k)
        for side, sign in ((plus, 1), (minus, -1)):
            sent = param.clip(value + sign * c * flip)
            if param.integer:
                sent = _round(sent, rng, rounding)
            side.append(sent)
    return Probe(k, flips, tuple(plus), tuple(minus))


def _round(value: float, rng: random.Random, rounding: Rounding) -> float:
    if rounding == "randomized":
        return float(math.floor(value + rng.random()))
    return float(round(value))


def step(
    params: Sequence[Param],
    schedule: Schedule,
    theta: Sequence[float],
    found: Probe,
    result: int,
) -> tuple[float, ...]:
    """``theta`` moved by the ``result`` (wins minus losses of the ``+`` side) of the probe
    ``found``, each parameter clipped to its bounds."""
    out = []
    for param, value, flip in zip(params, theta, found.flips, strict=True):
        gain = schedule.a(param, found.k) / schedule.c(param, found.k)
        out.append(param.clip(value + gain * result * flip))
    return tuple(out)


def engine_value(param: Param, value: float) -> str:
    """``value`` as the engine is given it: a whole number for an integer parameter."""
    if param.integer:
        return str(int(value))
    return f"{value:.6g}"

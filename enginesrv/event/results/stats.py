"""Match statistics for a two-player arbiter: Elo estimate, error bar, LOS and SPRT.

Pure functions of the result counts, in the manner of cutechess-cli, fastchess and fishtest:

* **Trinomial** results count single games (wins, draws, losses of the first player).
* **Pentanomial** results count game *pairs*: the same opening played twice with the colours
  swapped, classed by the first player's total points in the pair (0, 0.5, 1, 1.5 or 2). Pairs
  cancel most of an opening's bias, so their variance is the honest one for paired schedules.

Conventions, chosen once for the whole module:

* Elo is **logistic** Elo: a score ``s`` is worth ``-400 * log10(1/s - 1)`` points.
* A score of 0 or 1 (or beyond) is worth ``-inf`` / ``+inf`` Elo: no finite clamp is applied.
* ``ci95`` is the **half-width** of the 95% interval in Elo (what cutechess and fastchess print
  after ``+/-``); it is ``inf`` when the interval reaches a score of 0 or 1 (or there are no
  games), since the Elo scale is unbounded there, and ``0.0`` when the results have no variance
  but the score is strictly between 0 and 1 (e.g. all draws).
* SPRT bounds ``elo0``/``elo1`` are in logistic Elo (fastchess's default model, and fishtest's
  ``logistic`` model); the log-likelihood ratio uses the generalized SPRT approximation.
* :meth:`PairingStats.to_json` gives strict JSON values: non-finite floats become ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal law, Phi^-1(0.975)."""
REGULARIZE = 1e-3
"""Stand-in for an empty result class in the LLR, as fishtest and fastchess do."""

Decision = Literal["H0", "H1"]


# --------------------------------------------------------------------------------------------
# Result counts


def _check_counts(kind: str, **counts: int) -> None:
    for name, value in counts.items():
        if value < 0:
            raise ValueError(f"{kind}: {name} must not be negative, got {value}")


@dataclass(frozen=True, slots=True)
class Trinomial:
    """Single-game results of the first player: wins, draws and losses."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        _check_counts("Trinomial", wins=self.wins, draws=self.draws, losses=self.losses)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Points per game, in [0, 1]; 0.5 when no game was played."""
        return self.points / self.games if self.games else 0.5


_PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score per game for each pentanomial class, ll..ww."""


@dataclass(frozen=True, slots=True)
class Pentanomial:
    """Game pairs, classed by the first player's points over the pair.

    ``ll``: 0 points; ``ld``: 0.5; ``dd_wl``: 1 (two draws, or a win and a loss); ``wd``: 1.5;
    ``ww``: 2.
    """

    ll: int
    ld: int
    dd_wl: int
    wd: int
    ww: int

    def __post_init__(self) -> None:
        _check_counts(
            "Pentanomial", ll=self.ll, ld=self.ld, dd_wl=self.dd_wl, wd=self.wd, ww=self.ww
        )

    def counts(self) -> tuple[int, int, int, int, int]:
        """The five counts in order ll, ld, dd_wl, wd, ww."""
        return (self.ll, self.ld, self.dd_wl, self.wd, self.ww)

    @property
    def pairs(self) -> int:
        return sum(self.counts())

    @property
    def games(self) -> int:
        return 2 * self.pairs

    @property
    def points(self) -> float:
        return 0.5 * self.ld + self.dd_wl + 1.5 * self.wd + 2.0 * self.ww

    @property
    def score(self) -> float:
        """Points per game, in [0, 1]; 0.5 when no pair was played."""
        return self.points / self.games if self.games else 0.5


_PAIR_CLASS = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 3, 2.0: 4}
_GAME_SCORES = frozenset((0.0, 0.5, 1.0))


def pentanomial_from_pairs(pairs: Iterable[tuple[float, float]]) -> Pentanomial:
    """Count game pairs given, per pair, the first player's two game scores (0, 0.5 or 1).

    Raises:
        ValueError: a game score is not 0, 0.5 or 1.
    """
    counts = [0, 0, 0, 0, 0]
    for index, (first, second) in enumerate(pairs):
        if first not in _GAME_SCORES or second not in _GAME_SCORES:
            raise ValueError(
                f"pair {index}: game scores must be 0, 0.5 or 1, got ({first!r}, {second!r})"
            )
        counts[_PAIR_CLASS[first + second]] += 1
    return Pentanomial(*counts)


# --------------------------------------------------------------------------------------------
# Elo


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for an expected score: ``-400 * log10(1/score - 1)``.

    A score of 0 or below gives ``-inf``; 1 or above gives ``+inf``; NaN gives NaN.
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no negative zero at 0.5


def score_from_elo(elo: float) -> float:
    """Expected score for a logistic Elo difference (the inverse of :func:`elo_from_score`)."""
    # 1 / (1 + 10^(-elo/400)) written with tanh, which cannot overflow for huge |elo|.
    return 0.5 * (1.0 + math.tanh(elo * math.log(10.0) / 800.0))


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """An Elo difference and the half-width of its 95% interval (see the module's notes).

    ``score`` is the mean score per game and ``stderr`` the standard error of that mean.
    """

    elo: float
    ci95: float
    score: float
    stderr: float


def _mean_and_variance(values: Iterable[float], weights: Iterable[float]) -> tuple[float, float]:
    """Mean and population variance of a discrete distribution given by (unnormalized) weights."""
    pairs = list(zip(values, weights, strict=True))
    total = sum(w for _, w in pairs)
    mean = sum(v * w for v, w in pairs) / total
    variance = sum(w * (v - mean) ** 2 for v, w in pairs) / total
    return mean, max(0.0, variance)


def _estimate(values: tuple[float, ...], counts: tuple[int, ...]) -> EloEstimate:
    # The idea of cutechess's Elo class and fastchess's EloWDL / EloPentanomial: the sample mean
    # score, the per-sample variance of the score, the standard error of the mean over the
    # samples (games, or pairs), a normal 95% interval on the score, mapped to Elo at both ends.
    samples = sum(counts)
    if samples == 0:
        return EloEstimate(elo=0.0, ci95=math.inf, score=0.5, stderr=math.inf)
    mean, variance = _mean_and_variance(values, counts)
    stderr = math.sqrt(variance / samples)
    elo = elo_from_score(mean)
    high = elo_from_score(mean + Z95 * stderr)
    low = elo_from_score(mean - Z95 * stderr)
    ci95 = (high - low) / 2.0 if math.isfinite(high) and math.isfinite(low) else math.inf
    return EloEstimate(elo=elo, ci95=ci95, score=mean, stderr=stderr)


def elo_estimate(t: Trinomial) -> EloEstimate:
    """Elo and 95% half-width from single games (the variance of one game's score).

    No games: elo 0, ci95 inf. All wins (losses): elo +inf (-inf), ci95 inf. All draws: elo 0,
    ci95 0.
    """
    return _estimate((1.0, 0.5, 0.0), (t.wins, t.draws, t.losses))


def elo_estimate_pentanomial(pn: Pentanomial) -> EloEstimate:
    """Elo and 95% half-width from game pairs (variance of a pair's mean score, over pairs).

    Degenerate inputs behave as in :func:`elo_estimate`.
    """
    return _estimate(_PAIR_VALUES, pn.counts())


def los(t: Trinomial) -> float:
    """Likelihood of superiority: ``0.5 * (1 + erf((W - L) / sqrt(2 * (W + L))))``.

    Draws carry no information here (as in cutechess-cli); 0.5 when there are no decisive games.
    """
    decisive = t.wins + t.losses
    if decisive == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((t.wins - t.losses) / math.sqrt(2.0 * decisive)))


# --------------------------------------------------------------------------------------------
# SPRT


@dataclass(frozen=True, slots=True)
class SprtParams:
    """A sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1.

    ``elo0`` and ``elo1`` are logistic Elo; ``alpha`` and ``beta`` are the type I and type II
    error rates.

    Raises:
        ValueError: a value is not finite, ``elo0 >= elo1``, alpha or beta is not strictly
            between 0 and 1, or ``alpha + beta >= 1``.
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"sprt: {name} must be a finite number")
        if self.elo0 >= self.elo1:
            raise ValueError(f"sprt: elo0 ({self.elo0}) must be less than elo1 ({self.elo1})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"sprt: {name} must be strictly between 0 and 1, got {value}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("sprt: alpha + beta must be less than 1")

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)


_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta")


def parse_sprt(text: str) -> SprtParams:
    """Parse ``"elo0=0,elo1=5,alpha=0.05,beta=0.05"`` (any order, spaces allowed, all required).

    Raises:
        ValueError: with a message naming the bad part.
    """
    values: dict[str, float] = {}
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            raise ValueError(f"sprt: empty part in {text!r}")
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise ValueError(f"sprt: part {part!r} is not key=value")
        if key not in _SPRT_KEYS:
            raise ValueError(f"sprt: unknown key {key!r} in {part!r}")
        if key in values:
            raise ValueError(f"sprt: {key!r} given twice ({part!r})")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"sprt: {key} is not a number in {part!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"sprt: {key} must be finite in {part!r}")
        values[key] = number
    missing = [key for key in _SPRT_KEYS if key not in values]
    if missing:
        raise ValueError(f"sprt: missing {', '.join(missing)} in {text!r}")
    return SprtParams(**values)


def _llr(values: tuple[float, ...], counts: tuple[int, ...], p: SprtParams) -> float:
    # Generalized SPRT with the approximation of Michel Van den Bergh ("GSPRT approximation",
    # fishtest's LLR_alt2): per sample, LLR ~ (s1 - s0) * (2 * mean - s0 - s1) / (2 * var), with
    # the empirical mean and variance of a sample's score and s0, s1 the scores of elo0, elo1.
    # Empty classes are given a tiny count first, like fishtest and fastchess, so that the
    # variance is never zero (all draws, all wins).
    if sum(counts) == 0:
        return 0.0
    weights = [float(c) if c else REGULARIZE for c in counts]
    n = sum(weights)
    mean, variance = _mean_and_variance(values, weights)
    s0, s1 = score_from_elo(p.elo0), score_from_elo(p.elo1)
    return 0.5 * n * (s1 - s0) * (2.0 * mean - s0 - s1) / variance


def llr_trinomial(t: Trinomial, p: SprtParams) -> float:
    """Log-likelihood ratio of H1 over H0 from single games (logistic Elo bounds).

    Uses the generalized SPRT approximation (fishtest's ``LLR_alt2``); fishtest and fastchess
    now solve the exact constrained maximum likelihood instead, which agrees closely for the
    narrow Elo bounds used in practice. 0.0 with no games.
    """
    return _llr((1.0, 0.5, 0.0), (t.wins, t.draws, t.losses), p)


def llr_pentanomial(pn: Pentanomial, p: SprtParams) -> float:
    """Log-likelihood ratio of H1 over H0 from game pairs (logistic Elo bounds).

    One sample is a pair, scored by its points per game (0, 0.25, 0.5, 0.75, 1); otherwise as
    :func:`llr_trinomial`. 0.0 with no pairs.
    """
    return _llr(_PAIR_VALUES, pn.counts(), p)


def sprt_decision(llr: float, p: SprtParams) -> Decision | None:
    """``"H1"`` once ``llr >= p.upper``, ``"H0"`` once ``llr <= p.lower``, else None."""
    if llr >= p.upper:
        return "H1"
    if llr <= p.lower:
        return "H0"
    return None

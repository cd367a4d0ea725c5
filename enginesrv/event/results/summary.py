"""One pairing's statistics together (``summarize``): W/D/L, score, Elo with its interval, LOS,
the pentanomial of the game pairs and the SPRT's log-likelihood ratio and decision, as the
standings and ``enginesrv results`` show them (formulas in ``stats``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from enginesrv.event.results.stats import (
    Decision,
    EloEstimate,
    Pentanomial,
    SprtParams,
    Trinomial,
    elo_estimate,
    elo_estimate_pentanomial,
    llr_pentanomial,
    llr_trinomial,
    los,
    sprt_decision,
)


@dataclass(frozen=True, slots=True)
class PairingStats:
    """All the statistics of one pairing (first player against second).

    ``estimate`` comes from the pentanomial when one was given, else from the trinomial; ``llr``
    and ``decision`` likewise, and are None when no SPRT ran (``decision`` is also None while
    the test continues).
    """

    trinomial: Trinomial
    pentanomial: Pentanomial | None
    estimate: EloEstimate
    los: float
    sprt: SprtParams | None
    llr: float | None
    decision: Decision | None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; every key is always present.

        ``elo``/``elo_ci95`` are None when not finite (all wins or losses, no games);
        ``pentanomial`` is ``[ll, ld, dd_wl, wd, ww]`` or None without pair data; ``llr`` is
        None when no SPRT ran.
        """
        t = self.trinomial
        return {
            "wins": t.wins,
            "draws": t.draws,
            "losses": t.losses,
            "games": t.games,
            "score": t.score,
            "elo": _finite_or_none(self.estimate.elo),
            "elo_ci95": _finite_or_none(self.estimate.ci95),
            "los": self.los,
            "pentanomial": list(self.pentanomial.counts())
            if self.pentanomial is not None
            else None,
            "llr": _finite_or_none(self.llr),
        }


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


MIN_SPRT_GAMES = 40
"""Games before an SPRT may decide. The LLR divides by the spread of the results seen so far,
and from a handful of games (colour-swapped pairs between near-deterministic bots often score
the same) that spread is guessed far too small: ten games once accepted H0 at -3.03."""


def summarize(
    t: Trinomial, pn: Pentanomial | None = None, sprt: SprtParams | None = None
) -> PairingStats:
    """Gather the statistics of a pairing; the pentanomial, when given, drives Elo and LLR.
    The SPRT decides nothing before ``MIN_SPRT_GAMES`` games."""
    estimate = elo_estimate_pentanomial(pn) if pn is not None else elo_estimate(t)
    llr: float | None = None
    decision: Decision | None = None
    if sprt is not None:
        llr = llr_pentanomial(pn, sprt) if pn is not None else llr_trinomial(t, sprt)
        if t.games >= MIN_SPRT_GAMES:
            decision = sprt_decision(llr, sprt)
    return PairingStats(
        trinomial=t,
        pentanomial=pn,
        estimate=estimate,
        los=los(t),
        sprt=sprt,
        llr=llr,
        decision=decision,
    )

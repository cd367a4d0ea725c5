"""Match statistics: each value checked against an independent computation in the test."""

from __future__ import annotations

import json
import math
import statistics
from statistics import NormalDist

import pytest

from enginesrv.event.results.stats import (
    Pentanomial,
    SprtParams,
    Trinomial,
    elo_estimate,
    elo_estimate_pentanomial,
    elo_from_score,
    llr_pentanomial,
    llr_trinomial,
    los,
    parse_sprt,
    pentanomial_from_pairs,
    sprt_decision,
)
from enginesrv.event.results.summary import summarize

SPRT = SprtParams(elo0=0.0, elo1=5.0, alpha=0.05, beta=0.05)
GAME_VALUES = (1.0, 0.5, 0.0)
PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)


# ---- independent helpers (a different route from the module's) -----------------------------


def game_scores(t: Trinomial) -> list[float]:
    return [1.0] * t.wins + [0.5] * t.draws + [0.0] * t.losses


def pair_scores(pn: Pentanomial) -> list[float]:
    """Each pair as its mean score per game."""
    return [v for v, n in zip(PAIR_VALUES, pn.counts(), strict=True) for _ in range(n)]


def logit_elo(s: float) -> float:
    """Logistic Elo as 400 * log10(s / (1 - s)), algebraically the same as the module's form."""
    return 400.0 * math.log10(s / (1.0 - s))


def elo_to_score(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def direct_ci95(samples: list[float]) -> float:
    """95% half-width in Elo from a raw list of per-sample scores."""
    mean = statistics.fmean(samples)
    se = math.sqrt(statistics.pvariance(samples) / len(samples))
    z = NormalDist().inv_cdf(0.975)
    return (logit_elo(mean + z * se) - logit_elo(mean - z * se)) / 2.0


def approx_llr(samples: list[float], p: SprtParams) -> float:
    """GSPRT approximation from raw per-sample scores: N (s1-s0)(2m-s0-s1) / (2 var)."""
    s0, s1 = elo_to_score(p.elo0), elo_to_score(p.elo1)
    mean, var = statistics.fmean(samples), statistics.pvariance(samples)
    return len(samples) * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def mle_with_mean(values: tuple[float, ...], counts: tuple[int, ...], s: float) -> list[float]:
    """The multinomial distribution of largest likelihood for ``counts`` whose mean is ``s``.

    Lagrange: p_i = phat_i / (1 + theta (a_i - s)), theta the root (by bisection) of
    sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0, a decreasing function of theta.
    """
    n = sum(counts)
    phat = [c / n for c in counts]
    dev = [a - s for a in values]
    lo, hi = -1.0 / max(dev), -1.0 / min(dev)
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(p * d / (1 + mid * d) for p, d in zip(phat, dev, strict=True)) > 0:
            lo = mid
        else:
            hi = mid
    theta = (lo + hi) / 2
    return [p / (1 + theta * d) for p, d in zip(phat, dev, strict=True)]


def exact_llr(values: tuple[float, ...], counts: tuple[int, ...], p: SprtParams) -> float:
    """Exact generalized LLR: sum of count * log of the two constrained MLE probabilities."""
    p0 = mle_with_mean(values, counts, elo_to_score(p.elo0))
    p1 = mle_with_mean(values, counts, elo_to_score(p.elo1))
    assert math.isclose(sum(a * q for a, q in zip(values, p1, strict=True)), elo_to_score(p.elo1))
    return sum(c * math.log(b / a) for c, a, b in zip(counts, p0, p1, strict=True))


# ---- counts --------------------------------------------------------------------------------


def test_trinomial_counts_and_score() -> None:
    t = Trinomial(wins=60, draws=20, losses=20)
    assert t.games == 100
    assert t.score == pytest.approx(statistics.fmean(game_scores(t)))
    assert t.score == pytest.approx(0.7)
    assert Trinomial(0, 0, 0).score == 0.5
    with pytest.raises(ValueError, match="wins"):
        Trinomial(-1, 0, 0)


def test_pentanomial_from_pairs_counts_each_class() -> None:
    pairs = [
        (0.0, 0.0),  # ll
        (0.5, 0.0),  # ld
        (0.0, 0.5),  # ld
        (0.5, 0.5),  # dd
        (1.0, 0.0),  # wl
        (0.0, 1.0),  # lw
        (1.0, 0.5),  # wd
        (1.0, 1.0),  # ww
        (1.0, 1.0),  # ww
        (1.0, 1.0),  # ww
    ]
    pn = pentanomial_from_pairs(pairs)
    assert pn == Pentanomial(ll=1, ld=2, dd_wl=3, wd=1, ww=3)
    assert pn.counts() == (1, 2, 3, 1, 3)
    assert pn.pairs == 10
    assert pn.games == 20
    # the score per game is the same whether counted by pairs or by games
    assert pn.score == pytest.approx(statistics.fmean([x for pair in pairs for x in pair]))
    assert pentanomial_from_pairs([]) == Pentanomial(0, 0, 0, 0, 0)
    assert Pentanomial(0, 0, 0, 0, 0).score == 0.5


def test_pentanomial_from_pairs_rejects_bad_scores() -> None:
    with pytest.raises(ValueError, match="pair 1"):
        pentanomial_from_pairs([(1.0, 0.0), (0.25, 0.5)])
    with pytest.raises(ValueError, match="pair 0"):
        pentanomial_from_pairs([(2.0, 0.0)])


# ---- Elo ---------------------------------------------------------------------------------


def test_elo_from_score_values_and_ends() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.85
    assert elo_from_score(0.3) == pytest.approx(-elo_from_score(0.7))
    for s in (0.01, 0.2, 0.64, 0.99):
        assert elo_from_score(s) == pytest.approx(logit_elo(s))
        assert elo_to_score(elo_from_score(s)) == pytest.approx(s)
    assert elo_from_score(0.0) == -math.inf
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(-0.1) == -math.inf
    assert elo_from_score(1.2) == math.inf


def test_known_example_60_20_20() -> None:
    est = elo_estimate(Trinomial(wins=60, draws=20, losses=20))
    assert est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(147.19, abs=0.01)
    # per-game variance 0.16 over 100 games: standard error 0.04
    assert est.stderr == pytest.approx(0.04)
    assert est.ci95 == pytest.approx(direct_ci95(game_scores(Trinomial(60, 20, 20))))


@pytest.mark.parametrize(
    "t", [Trinomial(60, 20, 20), Trinomial(13, 51, 7), Trinomial(120, 300, 180), Trinomial(3, 2, 4)]
)
def test_trinomial_ci_matches_direct_formula(t: Trinomial) -> None:
    samples = game_scores(t)
    est = elo_estimate(t)
    assert est.elo == pytest.approx(logit_elo(statistics.fmean(samples)), abs=1e-9)
    assert est.ci95 == pytest.approx(direct_ci95(samples))
    assert est.ci95 > 0


@pytest.mark.parametrize(
    "pn",
    [
        Pentanomial(3, 10, 20, 12, 5),
        Pentanomial(50, 400, 1000, 450, 60),
        Pentanomial(0, 1, 0, 1, 0),
    ],
)
def test_pentanomial_ci_matches_direct_formula(pn: Pentanomial) -> None:
    samples = pair_scores(pn)
    est = elo_estimate_pentanomial(pn)
    assert est.score == pytest.approx(statistics.fmean(samples))
    assert est.elo == pytest.approx(logit_elo(statistics.fmean(samples)), abs=1e-9)
    assert est.stderr == pytest.approx(math.sqrt(statistics.pvariance(samples) / pn.pairs))
    assert est.ci95 == pytest.approx(direct_ci95(samples))


def test_pairs_narrow_the_interval_when_openings_are_balanced() -> None:
    # Every pair is a win and a loss (a colour-biased opening): games vary, pairs do not.
    pn = Pentanomial(0, 0, 100, 0, 0)
    t = Trinomial(wins=100, draws=0, losses=100)
    assert elo_estimate(t).ci95 > 40
    assert elo_estimate_pentanomial(pn).ci95 == 0.0


def test_degenerate_elo_estimates() -> None:
    none = elo_estimate(Trinomial(0, 0, 0))
    assert (none.elo, none.ci95, none.score) == (0.0, math.inf, 0.5)
    wins = elo_estimate(Trinomial(10, 0, 0))
    assert (wins.elo, wins.ci95) == (math.inf, math.inf)
    losses = elo_estimate(Trinomial(0, 0, 10))
    assert (losses.elo, losses.ci95) == (-math.inf, math.inf)
    draws = elo_estimate(Trinomial(0, 10, 0))
    assert (draws.elo, draws.ci95) == (0.0, 0.0)
    # an interval that runs past a score of 1 has no finite Elo bound
    assert elo_estimate(Trinomial(9, 0, 1)).ci95 == math.inf
    assert elo_estimate(Trinomial(1, 0, 1)).ci95 == math.inf
    assert elo_estimate_pentanomial(Pentanomial(0, 0, 0, 0, 0)).ci95 == math.inf
    assert elo_estimate_pentanomial(Pentanomial(0, 0, 0, 0, 4)).elo == math.inf
    assert elo_estimate_pentanomial(Pentanomial(0, 0, 7, 0, 0)).ci95 == 0.0


def test_los() -> None:
    assert los(Trinomial(0, 0, 0)) == 0.5
    assert los(Trinomial(0, 30, 0)) == 0.5
    assert los(Trinomial(17, 5, 17)) == pytest.approx(0.5)
    for w, d, lo in ((60, 20, 20), (12, 40, 15), (5, 0, 0)):
        z = (w - lo) / math.sqrt(w + lo)
        assert los(Trinomial(w, d, lo)) == pytest.approx(NormalDist().cdf(z))
    assert los(Trinomial(60, 20, 20)) > 0.999
    assert los(Trinomial(20, 20, 60)) < 0.001


# ---- SPRT --------------------------------------------------------------------------------


def test_parse_sprt_and_bounds() -> None:
    p = parse_sprt("elo0=0,elo1=5,alpha=0.05,beta=0.05")
    assert p == SPRT
    assert parse_sprt(" beta=0.1 , alpha=0.02, elo1=2.5,elo0=-1.5 ") == SprtParams(
        -1.5, 2.5, 0.02, 0.1
    )
    assert p.upper == pytest.approx(math.log(19))
    assert p.lower == pytest.approx(-math.log(19))
    q = SprtParams(0, 5, alpha=0.1, beta=0.2)
    assert q.lower == pytest.approx(math.log(0.2 / 0.9))
    assert q.upper == pytest.approx(math.log(0.8 / 0.1))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("elo0=0,elo1=5,alpha=0.05", "beta"),
        ("elo0=0,elo1=5,alpha=0.05,beta=x", "beta=x"),
        ("elo0=0,elo1=5,alpha=0.05,gamma=1", "gamma"),
        ("elo0=0,elo1=5,alpha=0.05,beta", "'beta'"),
        ("elo0=0,elo0=1,elo1=5,alpha=0.05,beta=0.05", "elo0=1"),
        ("elo0=0,,elo1=5,alpha=0.05,beta=0.05", "empty"),
        ("elo0=nan,elo1=5,alpha=0.05,beta=0.05", "elo0=nan"),
        ("", "empty"),
        ("elo0=5,elo1=0,alpha=0.05,beta=0.05", "elo0"),
        ("elo0=0,elo1=5,alpha=1.5,beta=0.05", "alpha"),
        ("elo0=0,elo1=5,alpha=0.05,beta=0", "beta"),
        ("elo0=0,elo1=5,alpha=0.6,beta=0.5", "alpha \\+ beta"),
    ],
)
def test_parse_sprt_errors_name_the_bad_part(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_sprt(text)


@pytest.mark.parametrize(
    "t", [Trinomial(1200, 2600, 1100), Trinomial(30, 40, 20), Trinomial(7, 9, 11)]
)
def test_llr_trinomial(t: Trinomial) -> None:
    llr = llr_trinomial(t, SPRT)
    assert llr == pytest.approx(approx_llr(game_scores(t), SPRT))
    # near the hypotheses, the approximation tracks the exact generalized LLR
    exact = exact_llr(GAME_VALUES, (t.wins, t.draws, t.losses), SPRT)
    assert llr == pytest.approx(exact, rel=0.03, abs=0.01)


@pytest.mark.parametrize("pn", [Pentanomial(50, 400, 1000, 450, 60), Pentanomial(3, 10, 20, 12, 5)])
def test_llr_pentanomial(pn: Pentanomial) -> None:
    llr = llr_pentanomial(pn, SPRT)
    assert llr == pytest.approx(approx_llr(pair_scores(pn), SPRT))
    assert llr == pytest.approx(exact_llr(PAIR_VALUES, pn.counts(), SPRT), rel=0.03, abs=0.01)


def test_sprt_decision_on_one_sided_results() -> None:
    strong = llr_trinomial(Trinomial(600, 300, 100), SPRT)
    weak = llr_trinomial(Trinomial(100, 300, 600), SPRT)
    assert strong >= SPRT.upper
    assert weak <= SPRT.lower
    assert sprt_decision(strong, SPRT) == "H1"
    assert sprt_decision(weak, SPRT) == "H0"
    assert sprt_decision(llr_trinomial(Trinomial(11, 20, 10), SPRT), SPRT) is None
    assert sprt_decision(SPRT.upper, SPRT) == "H1"
    assert sprt_decision(SPRT.lower, SPRT) == "H0"
    assert sprt_decision(0.0, SPRT) is None
    assert sprt_decision(math.nan, SPRT) is None
    pn_strong = llr_pentanomial(Pentanomial(10, 40, 200, 150, 100), SPRT)
    pn_weak = llr_pentanomial(Pentanomial(100, 150, 200, 40, 10), SPRT)
    assert sprt_decision(pn_strong, SPRT) == "H1"
    assert sprt_decision(pn_weak, SPRT) == "H0"


def test_degenerate_llr() -> None:
    assert llr_trinomial(Trinomial(0, 0, 0), SPRT) == 0.0
    assert llr_pentanomial(Pentanomial(0, 0, 0, 0, 0), SPRT) == 0.0
    all_wins = llr_trinomial(Trinomial(50, 0, 0), SPRT)
    assert math.isfinite(all_wins)
    assert sprt_decision(all_wins, SPRT) == "H1"
    # all draws: exactly 0 Elo with no spread, so elo0 = 0 is far likelier than elo1 = 5
    all_draws = llr_trinomial(Trinomial(0, 200, 0), SPRT)
    assert math.isfinite(all_draws)
    assert sprt_decision(all_draws, SPRT) == "H0"
    all_ww = llr_pentanomial(Pentanomial(0, 0, 0, 0, 20), SPRT)
    assert math.isfinite(all_ww)
    assert all_ww > SPRT.upper


# ---- summary -----------------------------------------------------------------------------


def test_summarize_trinomial_only() -> None:
    t = Trinomial(60, 20, 20)
    out = summarize(t).to_json()
    assert set(out) == {
        "wins", "draws", "losses", "games", "score", "elo", "elo_ci95", "los", "pentanomial", "llr"
    }  # fmt: skip
    assert (out["wins"], out["draws"], out["losses"], out["games"]) == (60, 20, 20, 100)
    assert out["score"] == pytest.approx(0.7)
    assert out["elo"] == pytest.approx(logit_elo(0.7))
    assert out["elo_ci95"] == pytest.approx(direct_ci95(game_scores(t)))
    assert out["los"] == pytest.approx(NormalDist().cdf(40 / math.sqrt(80)))
    assert out["pentanomial"] is None
    assert out["llr"] is None


def test_summarize_with_pairs_and_sprt() -> None:
    pairs = (
        [(1.0, 1.0)] * 4
        + [(1.0, 0.5)] * 30
        + [(0.5, 0.5)] * 50
        + [(0.0, 1.0)] * 15
        + [(0.0, 0.5)] * 5
        + [(0.0, 0.0)] * 2
    )
    pn = pentanomial_from_pairs(pairs)
    games = [x for pair in pairs for x in pair]
    t = Trinomial(games.count(1.0), games.count(0.5), games.count(0.0))
    s = summarize(t, pn, SPRT)
    out = s.to_json()
    assert out["pentanomial"] == [2, 5, 65, 30, 4]
    assert out["games"] == 212
    assert out["elo_ci95"] == pytest.approx(direct_ci95(pair_scores(pn)))
    assert out["elo_ci95"] != pytest.approx(direct_ci95(games))
    llr = out["llr"]
    assert isinstance(llr, float)
    assert llr == pytest.approx(approx_llr(pair_scores(pn), SPRT))
    assert s.decision == sprt_decision(llr, SPRT)
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize(
    "t", [Trinomial(0, 0, 0), Trinomial(25, 0, 0), Trinomial(0, 0, 25), Trinomial(0, 25, 0)]
)
def test_summarize_degenerate_is_strict_json(t: Trinomial) -> None:
    out = summarize(t, None, SPRT).to_json()
    text = json.dumps(out, allow_nan=False)  # raises on inf / nan
    assert json.loads(text) == out
    if t.wins == t.games > 0 or t.losses == t.games > 0:
        assert out["elo"] is None
        assert out["elo_ci95"] is None
    if t.draws == t.games:
        assert out["elo"] == 0.0
    assert isinstance(out["llr"], float)


def test_an_sprt_decides_nothing_from_a_handful_of_games() -> None:
    from enginesrv.event.results.summary import MIN_SPRT_GAMES, summarize

    sprt = SprtParams(0.0, 50.0, 0.05, 0.05)
    # five colour-swapped pairs, four of them split: the spread looks tiny, the LLR large
    few = Pentanomial(0, 1, 4, 0, 0)
    assert llr_pentanomial(few, sprt) <= sprt.lower
    early = summarize(Trinomial(3, 3, 4), few, sprt)
    assert early.llr is not None
    assert early.llr <= sprt.lower
    assert early.decision is None
    # the same results, many times over: decided
    many = Pentanomial(0, 8, 32, 0, 0)
    late = summarize(Trinomial(24, 24, 32), many, sprt)
    assert late.trinomial.games >= MIN_SPRT_GAMES
    assert late.decision == "H0"

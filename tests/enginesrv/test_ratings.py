"""The rating table of ``enginesrv results``: a maximum-likelihood fit of the logistic Elo model
over all games, checked against an independent fit written here in the simplest way
(minorization-maximization for the Bradley-Terry model, Hunter 2004), and the cases where no
finite rating exists."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from enginesrv.event.play.outcome import Outcome
from enginesrv.event.results import ratings
from enginesrv.event.results.ratings import Encounter, RatingError, expected, fit_ratings
from enginesrv.event.results.report import crosstable, reasons
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.standings import PairingResult
from enginesrv.event.results.stats import Z95
from enginesrv.event.results.wording import result_words


def reference_fit(encounters: list[Encounter], names: list[str]) -> dict[str, float]:
    """Bradley-Terry strengths by MM iterations (a draw half a win for each side): gamma_i =
    points_i / sum_j n_ij / (gamma_i + gamma_j); Elo = 400 log10 gamma, averaged to 0."""
    gamma = dict.fromkeys(names, 1.0)
    won = dict.fromkeys(names, 0.0)
    games: dict[tuple[str, str], float] = {}
    for e in encounters:
        won[e.a] += e.points
        won[e.b] += e.games - e.points
        games[(e.a, e.b)] = games.get((e.a, e.b), 0.0) + e.games
        games[(e.b, e.a)] = games.get((e.b, e.a), 0.0) + e.games
    for _ in range(20000):
        new = {}
        for i in names:
            denominator = sum(n / (gamma[i] + gamma[j]) for (a, j), n in games.items() if a == i)
            new[i] = won[i] / denominator
        # rescale so the geometric mean stays 1 (the scale is free)
        mean = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        new = {k: v / mean for k, v in new.items()}
        if max(abs(new[k] - gamma[k]) for k in names) < 1e-13:
            gamma = new
            break
        gamma = new
    elo = {k: 400 * math.log10(v) for k, v in gamma.items()}
    mean = sum(elo.values()) / len(elo)
    return {k: v - mean for k, v in elo.items()}


def round_robin(
    strengths: dict[str, float], games_per_pair: int, seed: int, draw: float = 0.25
) -> list[Encounter]:
    rng = random.Random(seed)
    out = []
    for a, b in itertools.combinations(strengths, 2):
        p = expected(strengths[a] - strengths[b])
        for _ in range(games_per_pair):
            u = rng.random()
            # a draw takes from both sides' chances, keeping the expected score p
            if u < draw:
                points = 0.5
            else:
                points = 1.0 if rng.random() < p else 0.0
            out.append(Encounter(a, b, 1, points))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_four_players_48_games_agree_with_a_reference_fit(seed: int) -> None:
    strengths = {"a": 0.0, "b": 120.0, "c": -80.0, "d": 250.0}
    encounters = round_robin(strengths, 8, seed)
    assert sum(e.games for e in encounters) == 48
    table = fit_ratings(encounters, list(strengths))
    names = [r.player for r in table.ratings if r.elo is not None]
    if len(names) < 4:
        pytest.skip("a perfect score in this draw; covered elsewhere")
    reference = reference_fit(encounters, list(strengths))
    elos: list[float] = []
    for r in table.ratings:
        assert r.elo is not None
        assert abs(r.elo - reference[r.player]) < 1.0, (r.player, r.elo, reference[r.player])
        elos.append(r.elo)
    assert abs(sum(r.elo or 0.0 for r in table.ratings)) < 1e-6
    # best first
    assert elos == sorted(elos, reverse=True)


def test_eight_players_uneven_schedule_agree_with_a_reference_fit() -> None:
    rng = random.Random(11)
    strengths = {f"p{i}": rng.uniform(-300, 300) for i in range(8)}
    encounters = [e for e in round_robin(strengths, 6, 5) if rng.random() < 0.8]
    table = fit_ratings(encounters, list(strengths))
    rated = [r.player for r in table.ratings if r.elo is not None]
    assert len(rated) == 8
    reference = reference_fit(encounters, list(strengths))
    for r in table.ratings:
        assert r.elo is not None
        assert abs(r.elo - reference[r.player]) < 1.0


def test_two_players_match_the_closed_form() -> None:
    # 7.5 of 10: the difference is the Elo of a 75% score, split either side of 0
    table = fit_ratings([Encounter("x", "y", 10, 7.5)])
    x, y = table.get("x"), table.get("y")
    assert x.elo is not None
    assert y.elo is not None
    diff = -400 * math.log10(1 / 0.75 - 1)
    assert x.elo == pytest.approx(diff / 2, abs=1e-6)
    assert y.elo == pytest.approx(-diff / 2, abs=1e-6)
    # the information of the difference is K^2 n p (1 - p); each rating carries half of it
    k = math.log(10) / 400
    sd_diff = 1 / math.sqrt(k * k * 10 * 0.75 * 0.25)
    assert x.error == pytest.approx(Z95 * sd_diff / 2, rel=1e-6)
    anchored = fit_ratings([Encounter("x", "y", 10, 7.5)], anchor="y")
    assert anchored.get("y").elo == 0.0
    assert anchored.get("y").error == 0.0
    assert anchored.get("x").elo == pytest.approx(diff, abs=1e-6)
    assert anchored.get("x").error == pytest.approx(Z95 * sd_diff, rel=1e-6)


def test_anchor_shifts_the_table_without_changing_differences() -> None:
    encounters = round_robin({"a": 0.0, "b": 100.0, "c": 200.0}, 20, 3)
    free = fit_ratings(encounters)
    anchored = fit_ratings(encounters, anchor="b")
    assert anchored.get("b").elo == 0.0
    for name in "ac":
        f, a, b = free.get(name).elo, anchored.get(name).elo, free.get("b").elo
        assert f is not None
        assert a is not None
        assert b is not None
        assert a == pytest.approx(f - b, abs=1e-6)
    with pytest.raises(RatingError, match="'zz' is not a player"):
        fit_ratings(encounters, anchor="zz")


def test_a_perfect_and_a_zero_score_get_no_rating_and_the_rest_are_fitted_alone() -> None:
    core = round_robin({"a": 0.0, "b": 100.0, "c": -100.0}, 10, 2)
    top = [Encounter("top", name, 4, 4.0) for name in "abc"]
    bottom = [Encounter(name, "low", 3, 3.0) for name in "abc"]
    table = fit_ratings([*core, *top, *bottom, Encounter("top", "low", 2, 2.0)])
    assert table.get("top").elo is None
    assert "won every game" in table.get("top").note
    assert table.get("low").elo is None
    assert "lost every game" in table.get("low").note
    assert table.get("top").games == 14
    assert table.get("top").score == 1.0
    alone = fit_ratings(core)
    for name in "abc":
        assert table.get(name).elo == pytest.approx(alone.get(name).elo, abs=1e-6)
    # the unrated come last; asking to anchor one of them is an error that says why
    assert [r.player for r in table.ratings][-2:] == ["top", "low"]
    with pytest.raises(RatingError, match="'top' has no finite rating"):
        fit_ratings([*core, *top], anchor="top")


def test_a_pair_that_beat_everyone_else_is_not_rated_against_them() -> None:
    # x and y drew each other and beat a and b every time: no finite rating ties the groups
    encounters = [
        Encounter("x", "y", 2, 1.0),
        Encounter("a", "b", 4, 2.5),
        *[Encounter(p, q, 2, 2.0) for p in "xy" for q in "ab"],
    ]
    table = fit_ratings(encounters)
    rated = {r.player for r in table.ratings if r.elo is not None}
    assert len(rated) == 2
    for r in table.ratings:
        if r.elo is None:
            assert r.note


def test_a_one_sided_match_rates_neither_player() -> None:
    # the loser is not left to be rated alone (at 0 +/- 0, above the winner)
    for encounters in ([Encounter("a", "b", 1, 1.0)], [Encounter("a", "b", 4, 0.0)]):
        table = fit_ratings(encounters)
        assert [r.elo for r in table.ratings] == [None, None]
        assert [r.error for r in table.ratings] == [None, None]


def test_a_one_sided_match_names_the_winner_first_and_says_why() -> None:
    table = fit_ratings([Encounter("a", "b", 4, 0.0)])
    assert [r.player for r in table.ratings] == ["b", "a"]
    assert "won every game" in table.get("b").note
    assert "lost every game" in table.get("a").note


def test_a_chain_of_wins_leaves_nobody_rated_alone() -> None:
    # a beat b, b beat c: once a and c are out, b alone has nobody to be rated against
    table = fit_ratings([Encounter("a", "b", 1, 1.0), Encounter("b", "c", 1, 1.0)])
    assert [r.elo for r in table.ratings] == [None, None, None]
    assert all(r.note for r in table.ratings)


def test_an_anchor_without_a_rating_is_refused_also_when_nobody_is_rated() -> None:
    with pytest.raises(RatingError, match="'b' has no finite rating"):
        fit_ratings([Encounter("a", "b", 4, 4.0)], anchor="b")


def test_the_inverse_of_an_information_matrix() -> None:
    rng = random.Random(4)
    size = 12
    a = [[rng.uniform(-1, 1) for _ in range(size)] for _ in range(size)]
    # symmetric positive definite, as an information matrix is: a a^T + I
    m = [
        [sum(a[i][k] * a[j][k] for k in range(size)) + (i == j) for j in range(size)]
        for i in range(size)
    ]
    inverse = ratings._inverse(m)
    for i in range(size):
        for j in range(size):
            product = sum(m[i][k] * inverse[k][j] for k in range(size))
            assert product == pytest.approx(float(i == j), abs=1e-9)


def test_no_games_and_one_player() -> None:
    table = fit_ratings([], ["a", "b"])
    assert all(r.elo is None and r.note == "no games" for r in table.ratings)


def test_crosstable_and_reasons() -> None:
    pairing = PairingResult("a", "b", wins=3, draws=1, losses=2)
    table = crosstable([pairing, PairingResult("a", "c")], ["a", "b", "c"])
    assert table == {"a": {"b": [3, 1, 2]}, "b": {"a": [2, 1, 3]}, "c": {}}

    def row(first: str, second: str, points: float, reason: str) -> GameRow:
        return GameRow(0, 1, 0, first, second, first, second, 0, 0, "p1", reason, points, 10,
                       1.0, 1.0, None)  # fmt: skip

    rows = [
        row("a", "b", 1.0, "time-forfeit"),
        row("a", "b", 0.0, "goal-row"),
        row("a", "b", 0.5, "max-plies"),
        row("b", "a", 1.0, "goal-row"),
    ]
    assert reasons(rows, ["a", "b"]) == {
        "a": {"loss:goal-row": 2, "draw:max-plies": 1, "win:time-forfeit": 1},
        "b": {"win:goal-row": 2, "draw:max-plies": 1, "loss:time-forfeit": 1},
    }


def test_result_words_say_who_won_and_why() -> None:
    names = ("alphabeta", "greedy")
    assert (
        result_words(Outcome.parse("p2", "time-forfeit"), names, "239 ms used of 200 ms")
        == "greedy wins: alphabeta lost on time (239 ms used of 200 ms)"
    )
    assert (
        result_words(Outcome.parse("p1", "totem-blocked"), names) == "alphabeta wins: totem blocked"
    )
    assert (
        result_words(Outcome.parse("draw", "max-plies"), names) == "draw: the ply limit was reached"
    )
    assert (
        result_words(Outcome.parse("p1", "crash"), names, "exit 3")
        == "alphabeta wins: greedy crashed (exit 3)"
    )
    # the same player on both seats: the seats say who is who
    assert result_words(Outcome.parse("p1", "goal-row"), ("x", "x")).startswith("x (p1) wins")
    for reason in ("time-forfeit", "illegal-move", "stall", "crash", "disconnect", "resign"):
        assert "p1" not in result_words(Outcome.parse("p2", reason), names)


def test_the_note_says_against_whom_a_score_is_perfect() -> None:
    # top won every game; once it is set aside, a has won every game left (not every game)
    encounters = [
        *[Encounter("top", name, 2, 2.0) for name in "abc"],
        Encounter("a", "b", 2, 2.0),
        Encounter("a", "c", 2, 2.0),
        Encounter("b", "c", 4, 2.5),
    ]
    table = fit_ratings(encounters)
    assert table.get("top").note == "won every game"
    assert table.get("a").note == "won every game against the players left to rate"
    assert table.get("b").elo is not None
    assert table.get("c").elo is not None

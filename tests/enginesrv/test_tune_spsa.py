"""SPSA's arithmetic (``enginesrv.tune.spsa``): the parameters as written, the gain schedules
against values worked out by hand, the probes (clipping, rounding) and the steps."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from enginesrv.tune.spsa import (
    MAX_PARAMS,
    Param,
    ParamError,
    Probe,
    Schedule,
    engine_value,
    probe,
    step,
)

AIM = Param.parse("Aim=100:0:1000:50")


# -- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Aim=100:0:1000", Param("Aim", 100, 0, 1000, 50, integer=True)),
        ("Aim=100:0:1000:50", Param("Aim", 100, 0, 1000, 50, integer=True)),
        ("Aim=100:0:1000:0.5", Param("Aim", 100, 0, 1000, 0.5, integer=True)),
        ("Aim=+5:-3:7", Param("Aim", 5, -3, 7, 0.5, integer=True)),
        ("x_1=1:0:2", Param("x_1", 1, 0, 2, 0.1, integer=True)),
        ("Aim= 5 : 0 : 10 ", Param("Aim", 5, 0, 10, 0.5, integer=True)),
        ("Aim=0.5:0:1", Param("Aim", 0.5, 0, 1, 0.05, integer=False)),
        ("Aim=1:0.:4", Param("Aim", 1, 0, 4, 0.2, integer=False)),
        ("Aim=.5:0:1:.25", Param("Aim", 0.5, 0, 1, 0.25, integer=False)),
        ("Aim=5:0:1e1", Param("Aim", 5, 0, 10, 0.5, integer=False)),
        ("Aim=5:0:10E0", Param("Aim", 5, 0, 10, 0.5, integer=False)),
        ("Aim=-1e3:-2e3:1e12", Param("Aim", -1000, -2000, 1e12, (1e12 + 2000) / 20, False)),
        ("A" * 64 + "=1:0:2", Param("A" * 64, 1, 0, 2, 0.1, integer=True)),
        ("Aim=1:0:2:0.123456789", Param("Aim", 1, 0, 2, 0.123456789, integer=True)),
    ],
)
def test_the_forms_of_a_parameter(text: str, expected: Param) -> None:
    parsed = Param.parse(text)
    assert parsed == expected
    assert type(parsed.start) is float
    assert type(parsed.c_end) is float
    # the spec it writes reads back as the same parameter
    assert Param.parse(parsed.spec()) == parsed


def test_integer_detection_looks_at_start_min_and_max_only() -> None:
    # a decimal point or an exponent in any of the three makes a real parameter; STEP's
    # own form does not matter
    assert Param.parse("Aim=1:0:8:0.5").integer
    assert Param.parse("Aim=1:0:8:1e-1").integer
    for text in ("Aim=1.0:0:8", "Aim=1:0.0:8", "Aim=1:0:8.", "Aim=1:0:8e0", "Aim=1:0:8E0"):
        assert not Param.parse(text).integer, text
    assert engine_value(Param.parse("Aim=1:0:8"), 7.0) == "7"
    assert engine_value(Param.parse("Aim=1.0:0:8"), 7.0) == "7"
    assert engine_value(Param.parse("Aim=1.0:0:8"), 0.1234567) == "0.123457"


def test_the_default_step_is_a_twentieth_of_the_range() -> None:
    assert Param.parse("Aim=100:0:1000").c_end == 50
    assert Param.parse("Aim=0:-1:1").c_end == 0.1
    assert Param.of("Aim", 3, 1, 5).c_end == 0.2
    assert Param.of("Aim", 3, 1, 5, 2).c_end == 2  # at most half the range


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Aim", "parameter 'Aim': not NAME=START:MIN:MAX[:STEP]"),
        ("Aim=", "parameter 'Aim=': not NAME=START:MIN:MAX[:STEP]"),
        ("Aim=1:2", "parameter 'Aim=1:2': not NAME=START:MIN:MAX[:STEP]"),
        ("Aim=1:0:2:1:1", "parameter 'Aim=1:0:2:1:1': not NAME=START:MIN:MAX[:STEP]"),
        ("1:0:2", "parameter '1:0:2': not NAME=START:MIN:MAX[:STEP]"),
        ("Aim=x:0:2", "parameter 'Aim=x:0:2': 'x' is not a number"),
        ("Aim=:0:2", "parameter 'Aim=:0:2': '' is not a number"),
        ("Aim=1:0:2:", "parameter 'Aim=1:0:2:': '' is not a number"),
        ("Aim=nan:0:2", "parameter 'Aim=nan:0:2': 'nan' is not a number"),
        ("Aim=1:-inf:2", "parameter 'Aim=1:-inf:2': '-inf' is not a number"),
        ("Aim=1:0:1_000", "parameter 'Aim=1:0:1_000': '1_000' is not a number"),
        ("Aim=0x1:0:2", "parameter 'Aim=0x1:0:2': '0x1' is not a number"),
        ("Aim=1:0:2=3", "parameter 'Aim=1:0:2=3': '2=3' is not a number"),
        ("=1:0:2", "parameter '': a name is a letter, then letters, digits or _ (64 at most)"),
        ("1a=1:0:2", "parameter '1a': a name is a letter, then letters, digits or _ (64 at most)"),
        (
            "a b=1:0:2",
            "parameter 'a b': a name is a letter, then letters, digits or _ (64 at most)",
        ),
        (
            "A" * 65 + "=1:0:2",
            f"parameter '{'A' * 65}': a name is a letter, then letters, digits or _ (64 at most)",
        ),
        ("Aim=5:10:10", "parameter 'Aim': MIN 10 is not below MAX 10"),
        ("Aim=5:10:0", "parameter 'Aim': MIN 10 is not below MAX 0"),
        ("Aim=11:0:10", "parameter 'Aim': START 11 is not within 0 to 10"),
        ("Aim=-1:0:10", "parameter 'Aim': START -1 is not within 0 to 10"),
        ("Aim=5:0:10:0", "parameter 'Aim': STEP 0 is not above 0 and at most half the range (5)"),
        (
            "Aim=5:0:10:-1",
            "parameter 'Aim': STEP -1 is not above 0 and at most half the range (5)",
        ),
        (
            "Aim=5:0:10:5.5",
            "parameter 'Aim': STEP 5.5 is not above 0 and at most half the range (5)",
        ),
        (
            "Aim=1e13:0:1e14",
            "parameter 'Aim': 10000000000000.0 is not a finite number of at most 1e12",
        ),
        ("Aim=1:0:" + "9" * 400, "parameter 'Aim': inf is not a finite number of at most 1e12"),
    ],
)
def test_each_refusal_is_one_line_quoting_the_input(text: str, message: str) -> None:
    with pytest.raises(ParamError) as caught:
        Param.parse(text)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_of_refuses_what_parse_cannot_write() -> None:
    with pytest.raises(ParamError, match=r"^parameter 'Aim': an integer parameter has whole"):
        Param.of("Aim", 0.5, 0, 1)
    with pytest.raises(ParamError, match=r"^parameter 'Aim': nan is not a finite number"):
        Param.of("Aim", 1, 0, 2, math.nan, integer=False)
    assert MAX_PARAMS == 64


# -- the schedule --------------------------------------------------------------------------------


def test_schedule_defaults() -> None:
    schedule = Schedule.of(100)
    assert schedule == Schedule(100, a_offset=10.0, alpha=0.602, gamma=0.101, r_end=0.3)
    assert Schedule.of(7).a_offset == 0.7
    assert Schedule.of(7).r_end == 30 / 7
    given = Schedule.of(100, a_offset=0, alpha=1, gamma=0, r_end=0.002)
    assert given == Schedule(100, 0.0, 1.0, 0.0, 0.002)


def test_the_gains_at_the_first_and_the_last_iteration_by_hand() -> None:
    """N = 100 iterations, c_end = 50: A = 10, r_end = 0.3, a_end = 0.3 * 50**2 = 750.
    c_1 = 50 * 100**0.101 = 79.610436..., a_1 = 750 * (110 / 11)**0.602 = 2999.585623...
    (worked out with bc)."""
    schedule = Schedule.of(100)
    assert schedule.c(AIM, 1) == pytest.approx(79.610436352558, rel=1e-12)
    assert schedule.a(AIM, 1) == pytest.approx(2999.585623208229, rel=1e-12)
    assert schedule.c(AIM, 100) == 50.0  # c_N is c_end
    assert schedule.a(AIM, 100) == pytest.approx(750.0, rel=1e-15)
    # the perturbation shrinks and the gain falls, every iteration
    cs = [schedule.c(AIM, k) for k in range(1, 101)]
    gains = [schedule.a(AIM, k) for k in range(1, 101)]
    assert all(x > y for x, y in itertools.pairwise(cs))
    assert all(x > y for x, y in itertools.pairwise(gains))


def test_the_first_and_last_steps_by_hand() -> None:
    schedule = Schedule.of(100)
    # the first step of a won pair: a_1 / c_1 * 2 = 75.356592945287
    first = step([AIM], schedule, (300.0,), Probe(1, (1,), (380.0,), (220.0,)), 2)
    assert first[0] == pytest.approx(300 + 75.356592945287, rel=1e-12)
    # the last: r_end * c_end * result = 0.3 * 50 * result, along the flip
    for result in (-2, -1, 0, 1, 2):
        for flip in (1, -1):
            last = step([AIM], schedule, (300.0,), Probe(100, (flip,), (0,), (0,)), result)
            assert last[0] == pytest.approx(300 + 15 * result * flip, abs=1e-12)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"iterations": 0}, "iterations: 0 is not a number from 1 to 1e+09"),
        ({"iterations": 10**9 + 1}, "iterations: 1000000001 is not a number from 1 to 1e+09"),
        ({"iterations": 10, "a_offset": -1}, "a-offset: -1 is not a number from 0 to 1e+09"),
        ({"iterations": 10, "alpha": 11}, "alpha: 11 is not a number from 0 to 10"),
        ({"iterations": 10, "alpha": math.nan}, "alpha: nan is not a number from 0 to 10"),
        ({"iterations": 10, "gamma": -0.1}, "gamma: -0.1 is not a number from 0 to 10"),
        ({"iterations": 10, "r_end": 0}, "r-end: 0 is not a number from 1e-09 to 1e+06"),
        ({"iterations": 10, "r_end": math.inf}, "r-end: inf is not a number from 1e-09 to 1e+06"),
    ],
)
def test_a_schedule_out_of_range_is_refused_by_name(
    settings: dict[str, float], message: str
) -> None:
    iterations = int(settings.pop("iterations"))
    with pytest.raises(ParamError) as caught:
        Schedule.of(iterations, **settings)
    assert str(caught.value) == message


# -- probes and steps ----------------------------------------------------------------------------


def test_a_probe_is_theta_plus_and_minus_c_along_the_flips() -> None:
    params = [AIM, Param.parse("Blur=2.5:0:5"), Param.parse("Peak=500:0:1000:50")]
    schedule = Schedule.of(100)
    theta = (300.0, 2.5, 500.0)
    found = probe(params, schedule, theta, 100, random.Random(3))
    assert found.k == 100
    for i, param in enumerate(params):
        c = schedule.c(param, 100)
        assert found.plus[i] == theta[i] + c * found.flips[i]
        assert found.minus[i] == theta[i] - c * found.flips[i]
    # the same generator gives the same probe; the flips are fair coins
    assert probe(params, schedule, theta, 100, random.Random(3)) == found
    flips = [probe([AIM], schedule, (300.0,), 1, random.Random(i)).flips[0] for i in range(400)]
    assert set(flips) == {-1, 1}
    assert 150 < flips.count(1) < 250  # 400 fair coins: 5 standard deviations either way


def test_a_probe_is_clipped_at_the_bounds() -> None:
    schedule = Schedule.of(100)
    for theta in (0.0, 10.0, 990.0, 1000.0):
        for seed in range(8):
            found = probe([AIM], schedule, (theta,), 1, random.Random(seed))
            c = schedule.c(AIM, 1)  # 79.6: past either bound from each theta here
            flip = found.flips[0]
            assert found.plus[0] == round(min(1000.0, max(0.0, theta + c * flip)))
            assert found.minus[0] == round(min(1000.0, max(0.0, theta - c * flip)))
    at_low = probe([AIM], schedule, (0.0,), 1, random.Random(0))
    assert sorted((at_low.plus[0], at_low.minus[0])) == [0.0, 80.0]


def test_deterministic_rounding_is_to_the_nearest_whole_number() -> None:
    schedule = Schedule.of(100)
    # c_100 = 50: 300.3 +- 50 -> 350 and 250; c_1 = 79.61: 300 +- 79.61 -> 380 and 220
    for seed in range(6):
        found = probe([AIM], schedule, (300.3,), 100, random.Random(seed))
        assert sorted((found.plus[0], found.minus[0])) == [250.0, 350.0]
        found = probe([AIM], schedule, (300.0,), 1, random.Random(seed))
        assert sorted((found.plus[0], found.minus[0])) == [220.0, 380.0]
    # a real parameter is not rounded
    real = Param.parse("Blur=2.5:0:5:0.3")
    found = probe([real], schedule, (2.5,), 100, random.Random(1))
    assert sorted((found.plus[0], found.minus[0])) == pytest.approx([2.2, 2.8], abs=1e-12)


def test_randomized_rounding_keeps_the_mean() -> None:
    """c_end = 0.3 on an integer parameter at theta = 100: deterministic rounding sends 100 to
    both sides (a perturbation lost); randomized rounding sends 100 or 101 to the ``+1`` side
    with a mean of 100.3, so flip * (sent - theta) averages c = 0.3 on the ``+`` side and -0.3
    on the ``-`` side."""
    fine = Param.parse("Aim=100:0:1000:0.3")
    schedule = Schedule.of(50)
    rng = random.Random(2024)
    draws = 20_000
    plus, minus, sent = [], [], set()
    for _ in range(draws):
        found = probe([fine], schedule, (100.0,), 50, rng, "randomized")
        flip = found.flips[0]
        plus.append(flip * (found.plus[0] - 100))
        minus.append(flip * (found.minus[0] - 100))
        sent |= {found.plus[0], found.minus[0]}
    assert sent == {99.0, 100.0, 101.0}
    # each draw is c's fraction rounded up or down: sd sqrt(0.3 * 0.7) = 0.458, so the mean of
    # 20,000 has a standard error of 0.00324; 5 of them either way
    bound = 5 * math.sqrt(0.3 * 0.7 / draws)
    assert abs(statistics.fmean(plus) - 0.3) < bound
    assert abs(statistics.fmean(minus) + 0.3) < bound
    lost = probe([fine], schedule, (100.0,), 50, random.Random(1), "deterministic")
    assert (lost.plus, lost.minus) == ((100.0,), (100.0,))


def test_a_step_moves_along_flip_times_result_and_is_clipped() -> None:
    params = [AIM, Param.parse("Peak=500:0:1000:50")]
    schedule = Schedule.of(100)
    found = Probe(100, (1, -1), (0.0, 0.0), (0.0, 0.0))
    assert step(params, schedule, (300.0, 300.0), found, 2) == (330.0, 270.0)
    assert step(params, schedule, (300.0, 300.0), found, -1) == (285.0, 315.0)
    assert step(params, schedule, (300.0, 300.0), found, 0) == (300.0, 300.0)
    assert step(params, schedule, (990.0, 10.0), found, 2) == (1000.0, 0.0)
    assert step(params, schedule, (5.0, 995.0), found, -2) == (0.0, 1000.0)
    # the gain of iteration k, not of the last
    early = step(params, schedule, (300.0, 300.0), Probe(1, (1, 1), (0, 0), (0, 0)), 1)
    gain = schedule.a(AIM, 1) / schedule.c(AIM, 1)
    assert early == pytest.approx((300 + gain, 300 + gain), rel=1e-15)
    # a step keeps a real value as it is: it is the probe that rounds
    assert step([AIM], schedule, (300.0,), Probe(50, (1,), (0,), (0,)), 1)[0] % 1 != 0

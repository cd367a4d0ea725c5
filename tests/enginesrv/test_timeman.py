"""Time management: a pure function from clocks to a target and a deadline."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enginesrv.search.timeman import (
    DEADLINE_FACTOR,
    DEADLINE_SHARE,
    DEFAULT_MOVES_TO_GO,
    FOLLOW_SHARE,
    HORIZON_MARGIN,
    MAX_SHARE,
    MIN_HORIZON,
    MIN_MS,
    RESERVE_INCREMENTS,
    STALL_MS,
    Budget,
    SearchTime,
    allot,
    reserve_ms,
    search_time,
)
from protocol import messages as m


def test_movetime_is_exact_less_overhead() -> None:
    assert allot(movetime_ms=1000, overhead_ms=50) == Budget(950, 950)
    assert allot(movetime_ms=10, overhead_ms=50) == Budget(MIN_MS, MIN_MS)


def test_no_clock_means_no_time_limit() -> None:
    assert allot() == Budget(None, None)


def test_a_typical_clock() -> None:
    budget = allot(time_ms=60_000, inc_ms=500, overhead_ms=50)
    assert budget.target_ms is not None
    assert budget.deadline_ms is not None
    assert 2000 < budget.target_ms < 3500  # about a 25th of the clock plus most of the increment
    assert budget.target_ms < budget.deadline_ms <= 0.7 * 60_000


def test_movestogo_spreads_the_clock() -> None:
    few = allot(time_ms=10_000, movestogo=2, overhead_ms=0)
    many = allot(time_ms=10_000, movestogo=40, overhead_ms=0)
    assert few.target_ms is not None
    assert many.target_ms is not None
    assert few.target_ms > many.target_ms


def test_a_games_estimate_of_its_length_is_the_horizon_with_a_margin() -> None:
    # an increment of 400, no overhead, a turn of one decision: the reserve for a stall is
    # 150 ms, and the target left / horizon + 0.75 * 400
    left = 120_000 - 150

    def target(expected: int | None, movestogo: int | None = None) -> int | None:
        return allot(
            time_ms=120_000, inc_ms=400, movestogo=movestogo, overhead_ms=0, expected=expected
        ).target_ms

    assert (HORIZON_MARGIN, MIN_HORIZON, reserve_ms(400)) == (2, 8, 150)
    assert target(None) == round(left / DEFAULT_MOVES_TO_GO + 300)
    assert target(10) == round(left / 12 + 300)  # 10 left and the margin
    assert target(6) == round(left / 8 + 300)  # never shorter than MIN_HORIZON
    assert target(1) == round(left / 8 + 300)
    assert target(23) == target(40) == target(None)  # never longer than the default
    assert target(10, movestogo=30) == round(left / 30 + 300)  # the clock's own count wins


@pytest.mark.parametrize("expected", [1, 6, 10, 40])
def test_a_clock_without_an_increment_keeps_the_default_horizon(expected: int) -> None:
    """Nothing refills such a clock: a game longer than its estimate would find it empty."""
    for turn in ((0, 1), (0, 2), (1, 2)):
        plain = allot(time_ms=60_000, overhead_ms=50, turn=turn)
        assert allot(time_ms=60_000, overhead_ms=50, turn=turn, expected=expected) == plain


def test_a_games_estimate_shares_a_turn_as_before() -> None:
    # a Yoxii turn of two decisions with 6 expected left: a horizon of 8, the turn a quarter
    # of what is left (8000 less the reserve of two increments), and both increments
    first = allot(time_ms=8000, inc_ms=50, overhead_ms=0, turn=(0, 2), expected=6)
    second = allot(time_ms=8000, inc_ms=50, overhead_ms=0, turn=(1, 2), expected=6)
    turn = (8000 - 100) * 2 / 8 + 0.75 * 50 * 2
    assert first.target_ms == round(turn * (1 - FOLLOW_SHARE))
    assert second.target_ms == round(turn * FOLLOW_SHARE)


def test_an_empty_or_negative_clock_still_gets_a_tiny_search() -> None:
    assert allot(time_ms=-200, overhead_ms=50) == Budget(MIN_MS, MIN_MS)


CLOCKS = {
    "time_ms": st.integers(-1000, 10**8),
    "inc_ms": st.integers(0, 10**6),
    "movestogo": st.none() | st.integers(0, 200),
    "overhead": st.integers(0, 5000),
}
"""Any clock: nearly empty or past zero, huge, with or without moves to go and overhead."""


@given(**CLOCKS, expected=st.none() | st.integers(1, 100))
def test_budget_never_plans_to_flag(
    time_ms: int, inc_ms: int, movestogo: int | None, overhead: int, expected: int | None
) -> None:
    budget = allot(
        time_ms=time_ms, inc_ms=inc_ms, movestogo=movestogo, overhead_ms=overhead,
        expected=expected,
    )  # fmt: skip
    assert budget.target_ms is not None
    assert budget.deadline_ms is not None
    assert MIN_MS <= budget.target_ms <= budget.deadline_ms
    left = max(0, time_ms - overhead)
    assert budget.deadline_ms <= max(MIN_MS, round(left * 0.7))


@given(**CLOCKS)
def test_a_clock_with_an_increment_keeps_a_reserve_for_a_stall(
    time_ms: int, inc_ms: int, movestogo: int | None, overhead: int
) -> None:
    budget = allot(time_ms=time_ms, inc_ms=inc_ms, movestogo=movestogo, overhead_ms=overhead)
    assert budget.deadline_ms is not None
    reserve = min(STALL_MS, RESERVE_INCREMENTS * inc_ms)
    assert reserve_ms(inc_ms) == reserve
    assert budget.deadline_ms <= max(MIN_MS, time_ms - overhead - reserve)


@pytest.mark.parametrize("expected", [None, 2])
@pytest.mark.parametrize("turn", [(0, 1), (0, 2)])
@pytest.mark.parametrize(("inc_ms", "overhead"), [(50, 50), (20, 10), (1000, 50)])
def test_a_bot_living_on_its_increment_keeps_its_margin(
    turn: tuple[int, int], inc_ms: int, overhead: int, expected: int | None
) -> None:
    """A bot that spends its whole deadline on every decision, late in a long game (5 s and
    ``inc_ms`` a decision, as the ladder's 5+0.05), settles on a clock that leaves every move
    its overhead and the reserve past the deadline."""
    clock = 5000
    margins = []
    for _ in range(3000):
        budget = allot(
            time_ms=clock, inc_ms=inc_ms, overhead_ms=overhead, turn=turn, expected=expected
        )
        assert budget.deadline_ms is not None
        margins.append(clock - budget.deadline_ms)
        clock += inc_ms - budget.deadline_ms
    assert min(margins) >= overhead + reserve_ms(inc_ms)
    assert clock > overhead + reserve_ms(inc_ms)  # settled: the clock no longer drains


# -- whole turns --------------------------------------------------------------------------------


def old_allot(
    time_ms: int | None, inc_ms: int, movestogo: int | None, movetime_ms: int | None, overhead: int
) -> Budget:
    """The time manager as it was before turns were budgeted (one decision = one move)."""
    overhead = max(0, overhead)
    if movetime_ms is not None:
        exact = max(MIN_MS, movetime_ms - overhead)
        return Budget(exact, exact)
    if time_ms is None:
        return Budget(None, None)
    left = max(0, time_ms - overhead - reserve_ms(inc_ms))
    horizon = movestogo if movestogo is not None and movestogo > 0 else DEFAULT_MOVES_TO_GO
    target = min(left / horizon + max(0, inc_ms) * 0.75, left * MAX_SHARE)
    deadline = min(target * DEADLINE_FACTOR, left * DEADLINE_SHARE)
    if movestogo == 1:
        target = deadline = left * DEADLINE_SHARE
    return Budget(max(MIN_MS, round(target)), max(MIN_MS, round(deadline)))


@given(
    time_ms=st.none() | st.integers(-1000, 10**8),
    inc_ms=st.integers(0, 10**6),
    movestogo=st.none() | st.integers(0, 200),
    movetime=st.none() | st.integers(0, 10**6),
    overhead=st.integers(0, 5000),
)
def test_a_single_decision_turn_is_the_old_budget(
    time_ms: int | None, inc_ms: int, movestogo: int | None, movetime: int | None, overhead: int
) -> None:
    old = old_allot(time_ms, inc_ms, movestogo, movetime, overhead)
    kwargs = {"time_ms": time_ms, "inc_ms": inc_ms, "movestogo": movestogo,
              "movetime_ms": movetime, "overhead_ms": overhead}  # fmt: skip
    assert allot(**kwargs) == old  # type: ignore[arg-type]
    assert allot(**kwargs, turn=(0, 1)) == old  # type: ignore[arg-type]


def test_a_two_decision_turn_gives_its_first_decision_most_of_it() -> None:
    # caps far away: the turn plans 2 * (600_000 - 150)/25 + 0.75 * 2000 * 2 = 50_988 ms (the
    # reserve for a stall is 150 ms)
    first = allot(time_ms=600_000, inc_ms=2000, overhead_ms=0, turn=(0, 2))
    second = allot(time_ms=600_000, inc_ms=2000, overhead_ms=0, turn=(1, 2))
    assert FOLLOW_SHARE == 0.2
    assert reserve_ms(2000) == 150
    assert first == Budget(40_790, round(40_790.4 * DEADLINE_FACTOR))  # 0.8 of the turn
    assert second == Budget(10_198, round(10_197.6 * DEADLINE_FACTOR))  # 0.2 of the turn


def test_a_three_decision_turn_shares_out_its_budget() -> None:
    # 3 * 500_000/25 = 60_000 ms for the turn, no increment: 0.6, 0.2, 0.2 of it
    targets = [allot(time_ms=500_000, overhead_ms=0, turn=(made, 3)).target_ms for made in range(3)]
    assert targets == [36_000, 12_000, 12_000]


@pytest.mark.parametrize("decisions", [2, 3])
@pytest.mark.parametrize(("time_ms", "inc_ms"), [(600_000, 0), (300_000, 3000), (90_000, 500)])
def test_a_turn_costs_what_its_decisions_did_one_by_one(
    decisions: int, time_ms: int, inc_ms: int
) -> None:
    single = allot(time_ms=time_ms, inc_ms=inc_ms, overhead_ms=0).target_ms
    parts = [
        allot(time_ms=time_ms, inc_ms=inc_ms, overhead_ms=0, turn=(made, decisions)).target_ms
        for made in range(decisions)
    ]
    assert single is not None
    assert all(part is not None for part in parts)
    total = sum(part for part in parts if part is not None)
    assert abs(total - decisions * single) <= decisions  # rounding of each part
    # a later decision of the turn gets less than a single-decision turn would
    assert all(part is not None and part < single for part in parts[1:])


def test_a_turn_spent_from_the_clock_costs_no_more_than_its_decisions_did() -> None:
    """The later decisions read the clock the first one left: the turn costs no more."""
    time_ms, inc_ms = 120_000, 1000
    single = allot(time_ms=time_ms, inc_ms=inc_ms, overhead_ms=0).target_ms
    assert single is not None
    left, spent = time_ms, 0
    for made in range(2):
        target = allot(time_ms=left, inc_ms=inc_ms, overhead_ms=0, turn=(made, 2)).target_ms
        assert target is not None
        spent += target
        left += inc_ms - target
    assert spent <= 2 * single
    assert spent >= 0.9 * 2 * single


def test_movestogo_counts_the_decisions_of_the_turn() -> None:
    one = allot(time_ms=40_000, movestogo=40, overhead_ms=0, turn=(0, 1))
    first = allot(time_ms=40_000, movestogo=40, overhead_ms=0, turn=(0, 2))
    second = allot(time_ms=40_000, movestogo=40, overhead_ms=0, turn=(1, 2))
    assert one.target_ms == 1000
    assert first.target_ms == 1600  # 0.8 of 2/40 of the clock
    assert second.target_ms == 400  # 0.2 of it


@pytest.mark.parametrize("turn", [(0, 1), (0, 2), (1, 2), (0, 3), (2, 3)])
def test_movetime_and_no_clock_ignore_the_turn(turn: tuple[int, int]) -> None:
    assert allot(movetime_ms=1000, overhead_ms=50, turn=turn) == Budget(950, 950)
    assert allot(time_ms=60_000, movetime_ms=300, overhead_ms=0, turn=turn) == Budget(300, 300)
    assert allot(turn=turn) == Budget(None, None)


TURNS = st.integers(1, 4).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n)))
"""(made, decisions) of a turn of up to four decisions."""


@given(**CLOCKS, turn=TURNS)
def test_a_turns_decisions_never_plan_to_flag(
    time_ms: int, inc_ms: int, movestogo: int | None, overhead: int, turn: tuple[int, int]
) -> None:
    budget = allot(
        time_ms=time_ms, inc_ms=inc_ms, movestogo=movestogo, overhead_ms=overhead, turn=turn
    )
    assert budget.target_ms is not None
    assert budget.deadline_ms is not None
    assert MIN_MS <= budget.target_ms <= budget.deadline_ms
    left = max(0, time_ms - overhead)
    assert budget.deadline_ms <= max(MIN_MS, round(left * DEADLINE_SHARE))
    if movestogo != 1:  # the last move before a control may use the safe share of it all
        assert budget.target_ms <= max(MIN_MS, round(left * MAX_SHARE))
    # no decision of a turn gets more than the turn's first one
    first = allot(
        time_ms=time_ms, inc_ms=inc_ms, movestogo=movestogo, overhead_ms=overhead,
        turn=(0, turn[1]),
    )  # fmt: skip
    assert first.target_ms is not None
    assert budget.target_ms <= first.target_ms


def test_search_time_reads_the_movers_clock() -> None:
    """The one conversion from ``go`` to a job's time: each seat's own clock and increment,
    the move time exactly, and from_pv only for a clock that budgets turns."""
    go = m.Go(p1time=60_000, p2time=1_000, p1inc=0, p2inc=0)
    p1 = search_time(go, 0, (0, 1), 50)
    p2 = search_time(go, 1, (0, 1), 50)
    assert p1.target is not None
    assert p2.target is not None
    assert p1.target > p2.target  # p1 has sixty times the clock
    assert (p1.from_pv, p2.from_pv) == (True, True)
    exact = search_time(m.Go(movetime=500), 0, (0, 1), 50)
    assert (exact.target, exact.deadline, exact.from_pv) == (0.45, 0.45, False)
    assert search_time(m.Go(infinite=True, p1time=1000), 0, (0, 1), 50) == SearchTime(
        None, None, False
    )
    assert search_time(m.Go(depth=3), 0, (0, 1), 50) == SearchTime(None, None, False)
    assert not search_time(m.Go(p1time=5000, depth=4), 0, (0, 1), 50).from_pv
    second = search_time(m.Go(p1time=10_000), 0, (1, 2), 50)
    first = search_time(m.Go(p1time=10_000), 0, (0, 2), 50)
    assert second.target is not None
    assert first.target is not None
    assert second.target < first.target  # a turn's later decision gets a fifth


# -- light decisions (State.time_weight) ---------------------------------------------------------


def test_a_light_decision_gets_its_weight_of_the_budget_and_a_deadline_in_proportion() -> None:
    """A Yinsh ring placement at 5+3: 0.08 of an ordinary decision's plan, increment included."""
    light = allot(time_ms=300_000, inc_ms=3000, overhead_ms=50, weight=0.08)
    left = 300_000 - 50 - 150  # the overhead and the reserve for a stall
    planned = 0.08 * (left / DEFAULT_MOVES_TO_GO + 3000 * 0.75)
    assert light == Budget(round(planned), round(planned * DEADLINE_FACTOR))
    assert light == Budget(1139, 2848)


@pytest.mark.parametrize("weight", [1.0, 0.0, -0.5, 1.5, float("nan"), float("inf")])
def test_a_weight_outside_zero_to_one_is_an_ordinary_decision(weight: float) -> None:
    ordinary = allot(time_ms=300_000, inc_ms=3000, overhead_ms=50)
    assert allot(time_ms=300_000, inc_ms=3000, overhead_ms=50, weight=weight) == ordinary


@given(**CLOCKS, turn=TURNS, weight=st.floats(0.001, 1.0))
def test_a_light_decision_never_gets_more_than_an_ordinary_one(
    time_ms: int,
    inc_ms: int,
    movestogo: int | None,
    overhead: int,
    turn: tuple[int, int],
    weight: float,
) -> None:
    def budget(weight: float) -> Budget:
        return allot(
            time_ms=time_ms,
            inc_ms=inc_ms,
            movestogo=movestogo,
            overhead_ms=overhead,
            turn=turn,
            weight=weight,
        )

    light, ordinary = budget(weight), budget(1.0)
    assert light.target_ms is not None
    assert light.deadline_ms is not None
    assert ordinary.target_ms is not None
    assert ordinary.deadline_ms is not None
    assert MIN_MS <= light.target_ms <= ordinary.target_ms
    assert light.target_ms <= light.deadline_ms <= ordinary.deadline_ms


def test_search_time_budgets_by_the_decisions_weight() -> None:
    go = m.Go(p1time=300_000, p2time=300_000, p1inc=3000, p2inc=3000)
    light = search_time(go, 0, (0, 1), 50, weight=0.08)
    assert (light.target, light.deadline, light.from_pv) == (1.139, 2.848, True)
    assert search_time(go, 0, (0, 1), 50) == search_time(go, 0, (0, 1), 50, weight=1.0)

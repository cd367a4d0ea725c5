"""Time management: a pure function from clocks to a target and a deadline."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from enginesrv.timeman import MIN_MS, Budget, allot


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


def test_an_empty_or_negative_clock_still_gets_a_tiny_search() -> None:
    assert allot(time_ms=-200, overhead_ms=50) == Budget(MIN_MS, MIN_MS)


@given(
    time_ms=st.integers(-1000, 10**8),
    inc_ms=st.integers(0, 10**6),
    movestogo=st.none() | st.integers(0, 200),
    overhead=st.integers(0, 5000),
)
def test_budget_never_plans_to_flag(
    time_ms: int, inc_ms: int, movestogo: int | None, overhead: int
) -> None:
    budget = allot(time_ms=time_ms, inc_ms=inc_ms, movestogo=movestogo, overhead_ms=overhead)
    assert budget.target_ms is not None
    assert budget.deadline_ms is not None
    assert MIN_MS <= budget.target_ms <= budget.deadline_ms
    left = max(0, time_ms - overhead)
    assert budget.deadline_ms <= max(MIN_MS, round(left * 0.7))

"""A search worker that stalls (its core taken by another process, a pause of its interpreter)
late in a game played on the increment: the session asks the pool to stop it a grace period
past its deadline and to kill it a grace period later, and on a clock both fit before the
answer is due (the mover's clock less ``MoveOverhead``), so that the best move found so far
leaves in time. The pool's own grace (200 ms, twice over) would come after such a clock
ran out."""

from __future__ import annotations

import pytest

from enginesrv.search.pool import GRACE
from enginesrv.serve.bot import MIN_GRACE
from tests.enginesrv.peer import RecordingThreadRunner, TextPeer, running_server
from tests.enginesrv.test_server import trio_test


async def asked(go: str) -> tuple[float, float | None, float | None, float | None]:
    """When the one search of ``go`` was asked for, its deadline, hard deadline and grace."""
    runner = RecordingThreadRunner()
    async with running_server(runner=runner, game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(go)
        lines = await peer.until("bestmove")
    assert lines[-1].startswith("bestmove ")
    assert lines[-1] != "bestmove none"
    assert len(runner.calls) == 1
    now, hard, grace = runner.calls[0]
    return now, runner.jobs[0].deadline, hard, grace


@pytest.mark.parametrize(("clock", "inc"), [(300, 50), (190, 50), (500, 100)])
@trio_test
async def test_on_a_low_clock_the_stop_and_the_kill_come_before_the_answer_is_due(
    clock: int, inc: int
) -> None:
    now, deadline, hard, grace = await asked(
        f"go p1time {clock} p2time {clock} p1inc {inc} p2inc {inc}"
    )
    assert deadline is not None
    assert hard is not None
    assert grace is not None
    due = (clock - 50) / 1000  # MoveOverhead, 50 ms by default
    assert grace < GRACE
    assert grace == pytest.approx(max(MIN_GRACE, (due - deadline) / 2))
    # asked to stop a grace period past the deadline, killed one more grace period later:
    # when the answer is due (the hard deadline was taken a moment before the call)
    assert hard - now <= deadline + grace
    assert deadline + 2 * grace == pytest.approx(due)


@pytest.mark.parametrize(
    "go",
    [
        "go p1time 60000 p2time 60000 p1inc 500 p2inc 500",  # time to spare: the pool's grace
        "go movetime 100",  # no clock to run out
        "go p1time 300 p2time 300 movetime 100",  # movetime wins over the clock
    ],
)
@trio_test
async def test_with_time_to_spare_the_pools_grace_stands(go: str) -> None:
    _, deadline, hard, grace = await asked(go)
    assert deadline is not None
    assert hard is not None
    assert grace == GRACE


@trio_test
async def test_on_a_nearly_empty_clock_the_grace_is_the_least_one() -> None:
    _, deadline, hard, grace = await asked("go p1time 60 p2time 60 p1inc 50 p2inc 50")
    assert deadline is not None
    assert hard is not None
    assert grace == MIN_GRACE

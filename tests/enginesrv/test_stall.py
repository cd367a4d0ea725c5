"""A search worker that stalls (its core taken by another process, a pause of its interpreter)
late in a game played on the increment: the session asks the pool to stop it a grace period
past its deadline and to kill it a grace period later, and on a clock both fit before the
answer is due (the mover's clock less ``MoveOverhead``), so that the best move found so far
leaves in time. The pool's own grace (200 ms, twice over) would come after such a clock
ran out. The same for the arbiter's own bots (``BotPlayer``), whose clock ends at the
request's ``forfeit_at``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio

import games
from bots.engine import SearchInfo
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import Clocks, ForfeitError, GoRequest, Reply, parse_player
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import GRACE, MIN_GRACE
from tests.enginesrv.peer import RecordingThreadRunner, TextPeer, running_server
from tests.trio_run import trio_test


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


# -- the arbiter's own bots (bot:NAME in a match) ---------------------------------------------

YOXII = games.load("yoxii")


class StalledPool:
    """A pool whose worker stalls: it notes the hard deadline and grace it is given and
    answers as the pool does once it has killed the worker, with the last progress report
    (``last``) the worker sent, if any."""

    def __init__(self, last: SearchInfo | None) -> None:
        self.last = last
        self.calls: list[tuple[float, float | None, float | None, float | None]] = []

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        del on_info, stop, on_wait, peer, on_hold
        self.calls.append((trio.current_time(), job.deadline, hard_deadline, grace))
        return SearchOutcome(None, killed=True, last_info=self.last)


async def stalled_go(pool: StalledPool, clock_ms: int, inc_ms: int) -> tuple[Reply, float]:
    """The bot player's reply to a Yoxii decision on a stalled pool, and its forfeit time."""
    player = BotPlayer(parse_player("bot:alphabeta"), pool)
    await player.start(YOXII)
    await player.new_game("g1", 5)
    forfeit_at = trio.current_time() + clock_ms / 1000
    clocks = Clocks(p1time=clock_ms, p2time=clock_ms, p1inc=inc_ms, p2inc=inc_ms)
    request = GoRequest(
        seat=0, position=YOXII.new_state().to_string(), start=None, moves=(), clocks=clocks,
        forfeit_at=forfeit_at, turn=(0, 2), weight=1.0,
    )  # fmt: skip
    return await player.go(request), forfeit_at


@pytest.mark.parametrize(("clock", "inc"), [(300, 50), (190, 50), (60_000, 500)])
@trio_test
async def test_a_bot_players_stalled_worker_is_stopped_and_killed_before_its_clock_ends(
    clock: int, inc: int
) -> None:
    pool = StalledPool(SearchInfo(depth=3, nodes=900, time=40, pv=("d3", "c2")))
    reply, forfeit_at = await stalled_go(pool, clock, inc)
    assert reply.token == "d3"  # the best move the worker reported
    assert (reply.depth, reply.nodes, reply.search_ms) == (3, 900, 40)
    [(now, deadline, hard, grace)] = pool.calls
    assert deadline is not None
    assert hard is not None
    assert grace is not None
    # (the player read the time a moment before the pool was called: microseconds)
    expected = min(GRACE, max(MIN_GRACE, (forfeit_at - now - deadline) / 2))
    assert grace == pytest.approx(expected, abs=1e-3)
    assert hard <= now + deadline + grace
    # the kill (a grace period past the hard deadline) comes before the clock runs out
    assert hard + grace <= forfeit_at + 1e-9


@trio_test
async def test_a_bot_players_stalled_worker_that_reported_nothing_loses_on_time() -> None:
    with pytest.raises(ForfeitError) as raised:
        await stalled_go(StalledPool(None), 300, 50)
    assert raised.value.reason is Termination.TIME_FORFEIT

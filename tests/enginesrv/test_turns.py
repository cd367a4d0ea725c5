"""Whole turns under a clock, from the server's side: a session and a match's bot player ask
for answers from the plan of the turn (``SearchJob.from_pv``) only when the time is a real clock,
budget the decision by where it stands in its turn, and a real worker answers a Yohoho turn's
second sub-move from the search of its first."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio

import games
from bots.engine import SearchInfo, SearchResult
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.players import Clocks, GoRequest, parse_player
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.timeman import allot
from games.yinsh import PLACEMENT_TIME_WEIGHT
from tests.enginesrv.peer import RecordingThreadRunner, TextPeer, running_server
from tests.trio_run import trio_test

NOTE = "from the search of this turn's first decision"
YOXII = games.load("yoxii")
YOHOHO = games.load("yohoho")
# Yohoho after White's single first sub-move: Black's turn of two sub-moves
YOHOHO_TURN = "1ccgrgcc1/8/4a4/8/9/8/9/3A4/1CCGRGCC1 b 1 0"
CLOCK = "p1time 600000 p2time 600000"
LIMIT = 20.0
"""Seconds any one test may take (each is far quicker)."""


class CapturingRunner:
    """A search runner that keeps the jobs it is given and answers each at once with a legal
    move of the job's position."""

    def __init__(self) -> None:
        self.jobs: list[SearchJob] = []

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
        del on_info, stop, hard_deadline, on_wait, peer, grace
        self.jobs.append(job)
        state = games.load(job.game).state_from_string(job.position)
        move = state.legal_moves()[0]
        return SearchOutcome(SearchResult(move, state.move_to_str(move), depth=1, nodes=1))


# -- a match's bot player -----------------------------------------------------------------------


async def bot_job(
    clocks: Clocks, turn: tuple[int, int] = (0, 1), seat: int = 0, weight: float = 1.0
) -> SearchJob:
    """The job a bot player sends for one Yoxii decision under ``clocks``."""
    runner = CapturingRunner()
    player = BotPlayer(parse_player("bot:alphabeta"), runner)
    await player.start(YOXII)
    await player.new_game("g1", 5)
    state = YOXII.new_state()
    request = GoRequest(
        seat=seat, position=state.to_string(), start=None, moves=(), clocks=clocks,
        forfeit_at=None, turn=turn, weight=weight,
    )  # fmt: skip
    reply = await player.go(request)
    assert reply.token is not None
    assert len(runner.jobs) == 1
    return runner.jobs[0]


@pytest.mark.parametrize(
    ("clocks", "from_pv"),
    [
        (Clocks(p1time=60_000, p2time=60_000), True),
        (Clocks(p1time=60_000, p2time=60_000, p1inc=500, p2inc=500, movestogo=20), True),
        (Clocks(p1time=60_000), True),
        (Clocks(p2time=60_000), False),  # the mover has no clock
        (Clocks(movetime=500), False),
        (Clocks(p1time=60_000, p2time=60_000, movetime=500), False),
        (Clocks(depth=3), False),
        (Clocks(p1time=60_000, p2time=60_000, depth=3), False),
        (Clocks(nodes=1000), False),
        (Clocks(p1time=60_000, p2time=60_000, nodes=1000), False),
        (Clocks(), False),
    ],
    ids=lambda value: str(value).replace(" ", "") if isinstance(value, Clocks) else str(value),
)
@trio_test
async def test_a_bot_player_plans_turns_only_under_a_clock(clocks: Clocks, from_pv: bool) -> None:
    with trio.fail_after(LIMIT):
        job = await bot_job(clocks)
    assert job.from_pv is from_pv


@pytest.mark.parametrize(
    ("turn", "weight"), [((0, 1), 1.0), ((0, 2), 1.0), ((1, 2), 1.0), ((0, 1), 0.08), ((0, 1), 0.5)]
)
@trio_test
async def test_a_bot_player_budgets_the_decision_by_its_place_in_the_turn_and_its_weight(
    turn: tuple[int, int], weight: float
) -> None:
    clocks = Clocks(p1time=300_000, p2time=300_000, p1inc=3000, p2inc=3000)
    with trio.fail_after(LIMIT):
        job = await bot_job(clocks, turn=turn, weight=weight)
    overhead = BotPlayer(parse_player("bot:alphabeta"), None).overhead_ms
    budget = allot(time_ms=300_000, inc_ms=3000, overhead_ms=overhead, turn=turn, weight=weight)
    assert budget.target_ms is not None
    assert budget.deadline_ms is not None
    assert job.target == budget.target_ms / 1000
    assert job.deadline == budget.deadline_ms / 1000


# -- a session ----------------------------------------------------------------------------------


UNTIL_STOPPED = {f"go {CLOCK} infinite", "go p2time 60000"}
"""Searches with no limit for the mover: they end only with a ``stop``."""


@pytest.mark.parametrize(
    ("go", "from_pv"),
    [
        (f"go {CLOCK}", True),
        (f"go {CLOCK} p1inc 100 p2inc 100 movestogo 10", True),
        ("go p1time 60000", True),
        ("go p2time 60000", False),  # p1 acts: its clock is not given
        (f"go {CLOCK} movetime 100", False),
        (f"go {CLOCK} depth 1", False),
        (f"go {CLOCK} nodes 500", False),
        (f"go {CLOCK} infinite", False),
        ("go movetime 100", False),
        ("go depth 1", False),
    ],
)
@trio_test
async def test_a_session_plans_turns_only_under_a_clock(go: str, from_pv: bool) -> None:
    runner = RecordingThreadRunner()
    with trio.fail_after(LIMIT):
        async with running_server(runner=runner, game="yoxii", bot="random") as (_, port):
            peer = await TextPeer.connect(port)
            await peer.send("position startpos", go)
            if go in UNTIL_STOPPED:
                await peer.send("stop")
            await peer.until("bestmove")
    assert len(runner.jobs) == 1
    assert runner.jobs[0].from_pv is from_pv


@trio_test
async def test_a_session_budgets_the_second_decision_of_a_turn() -> None:
    runner = RecordingThreadRunner()
    with trio.fail_after(LIMIT):
        async with running_server(runner=runner, game="yoxii", bot="random") as (_, port):
            peer = await TextPeer.connect(port)
            await peer.send("setoption name MoveOverhead value 0")
            await peer.send("position startpos", "go p1time 60000 p2time 60000")
            await peer.until("bestmove")
            await peer.send("position startpos moves c5", "go p1time 60000 p2time 60000")
            await peer.until("bestmove")
    first, second = runner.jobs
    for job, turn in ((first, (0, 2)), (second, (1, 2))):
        target = allot(time_ms=60_000, overhead_ms=0, turn=turn).target_ms
        assert target is not None
        assert job.target == target / 1000
    assert first.target is not None
    assert second.target is not None
    assert second.target < first.target
    assert first.from_pv
    assert second.from_pv


@trio_test
async def test_a_session_budgets_a_yinsh_placement_by_its_weight() -> None:
    """The ten ring placements weigh ``PLACEMENT_TIME_WEIGHT``; the first ring move is ordinary."""
    placements = ["e5", "f6", "d4", "g7", "e6", "f5", "d5", "g6", "e4", "f7"]
    go = "go p1time 300000 p2time 300000 p1inc 3000 p2inc 3000"
    runner = RecordingThreadRunner()
    with trio.fail_after(LIMIT):
        async with running_server(runner=runner, game="yinsh", bot="random") as (_, port):
            peer = await TextPeer.connect(port)
            await peer.send("setoption name MoveOverhead value 0")
            for made in (0, 9, 10):
                await peer.send(f"position startpos moves {' '.join(placements[:made])}", go)
                await peer.until("bestmove")
    weights = (PLACEMENT_TIME_WEIGHT, PLACEMENT_TIME_WEIGHT, 1.0)
    for job, weight in zip(runner.jobs, weights, strict=True):
        budget = allot(time_ms=300_000, inc_ms=3000, overhead_ms=0, weight=weight)
        assert budget.target_ms is not None
        assert budget.deadline_ms is not None
        assert (job.target, job.deadline) == (budget.target_ms / 1000, budget.deadline_ms / 1000)


# -- a real worker, end to end ------------------------------------------------------------------


async def search_lines(peer: TextPeer, *lines: str) -> tuple[list[str], str]:
    """The ``info`` lines and the best move of one search."""
    await peer.send(*lines)
    out = await peer.until("bestmove")
    return [line for line in out if line.startswith("info ")], out[-1].split()[1]


def pv_of(info: str) -> list[str]:
    words = info.split()
    assert "pv" in words, info
    tail = words[words.index("pv") + 1 :]
    return tail[: tail.index("string")] if "string" in tail else tail


@pytest.mark.parametrize(
    ("second_go", "planned"),
    [(f"go {CLOCK}", True), ("go movetime 300", False), ("go depth 3", False)],
)
@trio_test
async def test_the_server_answers_a_yohoho_second_sub_move_from_the_first(
    second_go: str, planned: bool
) -> None:
    with trio.fail_after(60):
        async with running_server(workers=1, game="yohoho", bot="alphabeta") as (_, port):
            peer = await TextPeer.connect(port)
            # the depth cap makes the first search reach depth 3 and stop there
            await peer.send("setoption name Depth value 3")
            infos, first = await search_lines(peer, f"position fen {YOHOHO_TURN}", f"go {CLOCK}")
            assert all(NOTE not in info for info in infos)
            plan = pv_of(infos[-1])
            assert plan[0] == first
            assert len(plan) >= 2
            infos, second = await search_lines(
                peer, f"position fen {YOHOHO_TURN} moves {first}", second_go
            )
    state = YOHOHO.state_from_string(YOHOHO_TURN)
    state.push(state.parse_move(first))
    assert state.parse_move(second) in state.legal_moves()
    noted = [info for info in infos if NOTE in info]
    if planned:
        assert second == plan[1]
        assert len(noted) == 1
        assert " nodes 0 " in noted[0]
        assert noted[0].endswith("string " + NOTE)
        assert pv_of(noted[0]) == plan[1:]
    else:
        assert noted == []


# -- the arbiter ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["yoxii", "yohoho"])
def test_the_arbiter_tells_each_player_where_it_stands_in_its_turn(name: str) -> None:
    from tests.enginesrv.test_arbiter import Scripted, play, random_mover

    game = games.load(name)
    one, two = Scripted(game, random_mover(1)), Scripted(game, random_mover(2))
    result = play(game, (one, two))
    assert result.reason
    turns = set()
    estimates: set[int | None] = set()
    for request in one.requests + two.requests:
        state = game.state_from_string(request.position)
        assert request.turn == state.turn_position(), request.position
        assert request.expected == state.decisions_left(), request.position
        turns.add(request.turn)
        estimates.add(request.expected)
    assert turns >= {(0, 2), (1, 2)}
    if name == "yoxii":  # it estimates the game's length: fewer decisions left as it goes
        assert len(estimates) > 5
        assert None not in estimates
    else:
        assert estimates == {None}


def test_the_arbiter_tells_each_player_the_weight_of_its_decision() -> None:
    from tests.enginesrv.test_arbiter import Scripted, play, random_mover

    game = games.load("yinsh")
    one, two = Scripted(game, random_mover(1)), Scripted(game, random_mover(2))
    result = play(game, (one, two))
    assert result.reason
    weights = []
    for request in one.requests + two.requests:
        state = game.state_from_string(request.position)
        assert request.weight == state.time_weight(), request.position
        weights.append(request.weight)
    assert weights.count(PLACEMENT_TIME_WEIGHT) == 10
    assert len(weights) > 10

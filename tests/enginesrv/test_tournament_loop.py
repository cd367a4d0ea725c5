"""The tournament loop alone (``tournament.run_games``), over a fake runner on trio's
``MockClock``: how many games run at once, that each game of the schedule is played and stored
exactly once, resume, SPRT stopping the lanes, a second result of a game dropped, a runner that
fails, and the clock of the live display. No process is started and no time passes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import trio
import trio.testing

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import GameResult, MoveObserver
from enginesrv.event.play.outcome import Outcome, Termination
from enginesrv.event.play.plan import GamePlan, Played
from enginesrv.event.play.records import Record
from enginesrv.event.prepared import PreparedEvent, prepare
from enginesrv.event.results.store import stored_event
from enginesrv.event.tournament import Finished, Observers, run_games

GAME_SECONDS = 10.25
"""How long each fake game takes, on the mock clock (not a whole number of seconds: the
display's tick never falls on a game's end)."""


class FakeRunner:
    """Plays each game in ``GAME_SECONDS`` of the mock clock; p1 wins, unless ``winner``
    says otherwise for a game id; ``fail_at`` makes the game of that id raise; ``stagger``
    lengthens each game by that many seconds times its lane's number, so that no two end at
    once. With
    ``clocks_here`` the loop stores each game in a thread, during which the mock clock
    jumps (nothing on the loop is awake), so only the tests that do not measure time use
    it."""

    live = True

    def __init__(
        self,
        lanes: int,
        *,
        winner: Mapping[int, int | None] | None = None,
        fail_at: int | None = None,
        clocks_here: bool = False,
        stagger: float = 0.0,
    ) -> None:
        self._lanes = lanes
        self.stagger = stagger
        self.clocks_here = clocks_here
        self.winner = winner or {}
        self.fail_at = fail_at
        self.checks = 0
        self.running = 0
        self.most_running = 0
        self.played: list[int] = []
        self.settled: list[tuple[int, bool]] = []
        self.cancelled: list[int] = []

    async def check(self) -> None:
        self.checks += 1

    def lanes(self) -> int:
        return self._lanes

    async def play(self, plan: GamePlan, on_move: MoveObserver | None) -> Played:
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await trio.sleep(GAME_SECONDS + self.stagger * (plan.game_id % self._lanes))
        except trio.Cancelled:
            self.cancelled.append(plan.game_id)
            raise
        finally:
            self.running -= 1
        if plan.game_id == self.fail_at:
            raise EventError(f"game {plan.game_id} could not be played")
        self.played.append(plan.game_id)
        winner = self.winner.get(plan.game_id, 0)
        outcome = Outcome(Termination.RULES, winner, "goal-row")
        record = Record(headers={"Game": "yoxii", "Result": outcome.result})
        return Played(GameResult(outcome, record, 7, GAME_SECONDS, 1.0), (0, 0))

    def settle(self, game_id: int, *, stored: bool) -> None:
        self.settled.append((game_id, stored))


def event_of(tmp_path: Path | None, games: int, sprt: str | None = None) -> PreparedEvent:
    config = EventConfig(
        "yoxii", ("bot:random", "bot:greedy"), depth=1, event="loop", games=games, sprt=sprt
    )
    return prepare(config, tmp_path, resume=False)


def run(
    event: PreparedEvent,
    out_dir: Path | None,
    runner: FakeRunner,
    on_tick: Callable[[float], None] | None = None,
) -> tuple[list[Finished], float]:
    """Run the loop on a mock clock: what ``on_game`` was told, and the clock's time at the
    end."""
    seen: list[Finished] = []
    clock = trio.testing.MockClock(autojump_threshold=0)

    async def main() -> float:
        await run_games(event, out_dir, runner, Observers(seen.append, on_tick=on_tick))
        return trio.current_time()

    return seen, trio.run(main, clock=clock)


def test_lanes_play_each_game_once_at_the_runners_pace(tmp_path: Path) -> None:
    event = event_of(tmp_path, games=8)
    runner = FakeRunner(3)
    seen, ended = run(event, tmp_path, runner)
    assert sorted(runner.played) == list(range(1, 9))
    assert runner.most_running == 3
    # 8 games, 3 at a time, 10 s each: three rounds of the lanes
    assert ended == pytest.approx(3 * GAME_SECONDS)
    assert [done.done for done in seen] == list(range(1, 9))
    assert {done.game.id for done in seen} == set(range(1, 9))
    assert runner.settled == [(done.game.id, True) for done in seen]
    assert runner.checks == 1
    _, rows = stored_event(tmp_path, "")
    assert sorted(row.id for row in rows) == list(range(1, 9))
    # p1 won each game; the first-named player (random) was p1 in the odd games
    assert [row.first_points for row in sorted(rows, key=lambda r: r.id)] == [1, 0] * 4
    assert all((row.winner, row.reason) == ("p1", "goal-row") for row in rows)


def test_a_resumed_event_plays_only_the_games_not_stored(tmp_path: Path) -> None:
    event = event_of(tmp_path, games=6)
    first = FakeRunner(2, fail_at=5)
    with pytest.raises(EventError, match="game 5 could not be played"):
        run(event, tmp_path, first)
    _, rows = stored_event(tmp_path, "")
    stored = {row.id for row in rows}
    assert stored == set(first.played)
    assert 5 not in stored
    assert len(stored) < 6
    resumed = prepare(EventConfig("", ()), tmp_path, resume=True)
    second = FakeRunner(2)
    seen, _ = run(resumed, tmp_path, second)
    assert sorted(second.played) == sorted(set(range(1, 7)) - stored)
    assert second.checks == 1  # resumed with games left: checked before the first
    assert seen[-1].done == 6
    _, rows = stored_event(tmp_path, "")
    assert sorted(row.id for row in rows) == list(range(1, 7))


def test_a_failed_run_that_stored_nothing_leaves_no_event(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    event = event_of(out, games=2)
    with pytest.raises(EventError, match="game 1 could not be played"):
        run(event, out, FakeRunner(1, fail_at=1))
    assert not (out / "results.sqlite").exists()
    assert not (out / "games").exists()


def test_sprt_stops_every_lane_once_it_decides(tmp_path: Path) -> None:
    # p1 wins every game and the colours alternate: the first-named scores 1, 0, 1, 0 ...;
    # with the second-named winning them all (p2 wins the odd games) SPRT decides H0 soon
    winner = {game_id: 1 if game_id % 2 else 0 for game_id in range(1, 201)}
    event = event_of(tmp_path, games=200, sprt="elo0=0,elo1=200,alpha=0.05,beta=0.05")
    runner = FakeRunner(4, winner=winner, stagger=0.5)
    seen, _ = run(event, tmp_path, runner)
    assert event.sprt is not None
    decided_at = seen[-1].done
    assert 10 <= decided_at < 200
    assert seen[-1].pairings[0].summary(event.sprt).decision in ("H0", "H1")
    # the games running when it decided were cancelled, not counted
    assert runner.cancelled
    assert not set(runner.cancelled) & {done.game.id for done in seen}
    _, rows = stored_event(tmp_path, "")
    assert len(rows) == decided_at


def test_the_display_is_told_the_time_every_second(tmp_path: Path) -> None:
    ticks: list[float] = []
    run(event_of(None, games=2), None, FakeRunner(1), on_tick=ticks.append)
    # two games of 10.25 s, one at a time: a tick at each whole second before the end
    assert ticks == [float(s) for s in range(1, 21)]


@pytest.mark.parametrize("clocks_here", [True, False])
def test_games_are_stored_with_or_without_clocks_on_the_loop(
    tmp_path: Path, clocks_here: bool
) -> None:
    event = event_of(tmp_path, games=4)
    runner = FakeRunner(2, clocks_here=clocks_here)
    run(event, tmp_path, runner)
    _, rows = stored_event(tmp_path, "")
    assert sorted(row.id for row in rows) == [1, 2, 3, 4]
    assert sorted(runner.settled) == [(1, True), (2, True), (3, True), (4, True)]

"""Every wait of the arbiter is bounded, and nothing an engine starts outlives it: a per-move
cap without a clock, for external engines and bots alike, and the engine's process group
ended with it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.players import Clocks, Deadlines, ForfeitError, parse_player
from enginesrv.search.pool import WorkerPool
from tests.enginesrv.test_players import YOXII, fake, request
from tests.enginesrv.test_shutdown import STUBBORN
from tests.trio_run import trio_test

LIMIT = 10.0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@trio_test
async def test_an_engine_that_answers_isready_but_never_bestmove_is_a_stall() -> None:
    player = TextEnginePlayer(fake("nobest"), Deadlines(ping_every=0.1, ready=1.0, move=0.5))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            await player.new_game("g1", 1)
            asked = trio.current_time()
            with pytest.raises(ForfeitError) as info:
                await player.go(request(clocks=Clocks(depth=1)))
            assert info.value.reason == "stall"
            assert "move timeout" in info.value.detail
            assert trio.current_time() - asked < 0.5 + 1.0  # the cap, plus a second at most
        finally:
            await player.close()


@trio_test
async def test_a_bot_without_a_clock_is_stopped_at_the_move_timeout() -> None:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.1, command=(sys.executable, "-c", STUBBORN))
        await pool.start()
        player = BotPlayer(parse_player("bot:random"), pool, move_timeout=0.4)
        await player.start(YOXII)
        await player.new_game("g1", 1)
        with trio.fail_after(LIMIT), pytest.raises(ForfeitError) as info:
            await player.go(request(clocks=Clocks(depth=1)))
        assert info.value.reason == "stall"
        assert "move timeout" in info.value.detail
        await pool.aclose()


@trio_test
async def test_what_an_engine_started_is_ended_with_it(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    player = TextEnginePlayer(fake("fork", str(pidfile)))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        with pytest.raises(ForfeitError) as info:
            await player.go(
                request(clocks=Clocks(movetime=200), forfeit_at=trio.current_time() + 2)
            )
        assert info.value.reason in ("crash", "time-forfeit")
        child = int(pidfile.read_text())
        # the engine is gone, and the reaper it ran under ended its child with it, before
        # the player is closed
        while _alive(child):
            await trio.sleep(0.02)  # bounded by fail_after
        await player.close()
    assert not _alive(child)


def test_a_match_without_a_clock_against_a_silent_engine_ends(tmp_path: Path) -> None:
    from tests.enginesrv.test_tournament import ROOT, cli, stored

    fake = f"{sys.executable} {ROOT / 'tests' / 'enginesrv' / 'fakes' / 'fake_engine.py'}"
    pidfile = tmp_path / "child.pid"
    out = tmp_path / "event"
    proc = cli(
        "tournament", "yoxii", "name=rnd:bot:random", f"name=nobest:cmd:{fake} nobest",
        f"name=fork:cmd:{fake} fork {pidfile}", "--depth", "1", "--games", "2",
        "--move-timeout", "0.5", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = stored(out)
    reasons = {(p1, p2): reason for _, p1, p2, _, reason, _ in rows}
    assert {reasons[("rnd", "nobest")], reasons[("nobest", "rnd")]} == {"stall"}
    assert "crash" in {reasons[("fork", "rnd")], reasons[("rnd", "fork")]}
    # the match is over: nothing the engines started is left
    assert not _alive(int(pidfile.read_text()))


@trio_test
async def test_an_engines_standard_error_is_published_only_once_its_game_is_over(
    tmp_path: Path,
) -> None:
    log = tmp_path / "logs" / "fake.stderr"
    player = TextEnginePlayer(fake("good"), stderr=log)
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        await player.go(request(clocks=Clocks(depth=1)))
        await player.go(request(moves=("c5",), clocks=Clocks(depth=1)))
        # during the game nothing of it is where the event's readers look
        assert not log.exists() or "thinking" not in log.read_text()
        await player.new_game("g2", 2)  # the first game is over: it is published
        assert log.read_text().count("thinking about go") == 2
        await player.go(request(clocks=Clocks(depth=1)))
        await player.close()
    assert log.read_text().count("thinking about go") == 3

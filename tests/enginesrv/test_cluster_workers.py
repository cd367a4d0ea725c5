"""Workers that come and go while an event runs on a cluster: the coordinator's roster
(``enginesrv.event.runners.cluster.roster``), then whole events on loopback ``dask scheduler``
and ``dask worker`` processes (each worker with its nanny), where a worker and its nanny are
killed during the preflight, a worker joins after it, or every worker is lost during it."""

from __future__ import annotations

import dataclasses
import math
import sys
import threading
import time
from pathlib import Path

import pytest
import trio

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.records import parse_record
from enginesrv.event.prepared import prepare
from enginesrv.event.runners.cluster import ClusterVenue
from enginesrv.event.runners.cluster.coordinator import ClusterRunner
from enginesrv.event.runners.cluster.roster import LOST, LOST_IN_CHECK, WorkerRoster
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.tournament import Finished, run_event
from tests.enginesrv.cluster_support import DaskProcesses, dask_processes, stored

FAKE = Path(__file__).resolve().parent / "fakes" / "fake_engine.py"
PLAYED_ON = "played on the worker "
WAIT = 30.0
"""Seconds any one wait of these tests may take (far more than any of them needs)."""

# -- the roster ---------------------------------------------------------------------------------


def roster_of(*workers: str) -> WorkerRoster:
    roster = WorkerRoster(("a", "b"), rejoin_wait=10.0)
    assert roster.see(workers, 0.0) == (sorted(workers), [])
    return roster


def test_a_worker_gets_games_only_once_its_check_passed_for_both_players() -> None:
    roster = roster_of("w1", "w2", "w3")
    assert roster.able("a", "b") == []  # being checked
    assert roster.checked("w1", {})
    assert roster.checked("w2", {"b": "crash: exit 3"})
    assert roster.able("a", "b") == ["w1"]
    assert roster.able("a") == ["w1", "w2"]
    assert roster.wait_until(1.0) == math.inf  # w3's check runs
    assert roster.failed("w3", "did not start the players within 60 s")
    assert roster.able("a", "b") == ["w1"]
    assert roster.wait_until(1.0) is None


def test_a_worker_lost_during_its_check_is_dropped_and_its_late_answer_ignored() -> None:
    roster = roster_of("w1", "w2")
    assert roster.checked("w1", {})
    assert roster.see(["w1"], 5.0) == ([], ["w2"])
    assert roster.lost == {"w2": LOST_IN_CHECK}
    assert roster.checks_lost == 1
    assert not roster.checking
    assert not roster.checked("w2", {})  # its answer after all: too late
    assert roster.able("a", "b") == ["w1"]
    # a worker started again at the address of one lost (a fixed port) is checked anew
    assert roster.see(["w1", "w2"], 6.0) == (["w2"], [])
    assert "w2" not in roster.lost
    assert roster.able("a", "b") == ["w1"]
    assert roster.checked("w2", {})
    assert roster.able("a", "b") == ["w1", "w2"]


def test_a_worker_that_joins_later_is_checked_and_then_plays() -> None:
    roster = roster_of("w1")
    assert roster.checked("w1", {})
    assert roster.see(["w1", "w9"], 3.0) == (["w9"], [])
    assert roster.checking == {"w9"}
    assert roster.able("a", "b") == ["w1"]
    assert roster.checked("w9", {})
    assert roster.able("a", "b") == ["w1", "w9"]


def test_workers_lack_only_when_none_is_coming() -> None:
    """After the last able worker is lost, the event waits ``rejoin_wait`` for another (a
    nanny restarting it), as long as a check runs, and no longer."""
    roster = roster_of("w1", "w2")
    assert roster.checked("w1", {})
    assert roster.checked("w2", {"a": "crash: exit 3"})
    assert roster.see(["w2"], 100.0) == ([], ["w1"])
    assert roster.lost == {"w1": LOST}
    assert roster.able("a", "b") == []
    assert roster.wait_until(101.0) == 110.0
    assert roster.wait_until(110.0) is None
    assert roster.reasons("a", "b") == "w1: left the cluster; w2: a: crash: exit 3"
    assert roster.see(["w2", "w3"], 111.0) == (["w3"], [])
    assert roster.wait_until(112.0) == math.inf


def test_the_reasons_are_one_line_per_worker_and_name_each_player_when_they_differ() -> None:
    roster = roster_of("w1", "w2", "w3")
    assert roster.failed("w1", "the check failed: boom")
    assert roster.checked("w2", {"a": "crash: x", "b": "stall: y"})
    assert roster.see(["w1", "w2"], 1.0) == ([], ["w3"])
    assert roster.reasons("a", "b") == (
        "w1: the check failed: boom; w2: a: crash: x, b: stall: y; "
        "w3: left the cluster during its check"
    )
    assert roster.reasons("b") == "w1: the check failed: boom; w2: stall: y; " + (
        "w3: left the cluster during its check"
    )
    assert WorkerRoster(("a",), 1.0).reasons("a") == "the cluster has no worker"


def test_the_reasons_name_the_latest_workers_lost_and_count_the_others() -> None:
    roster = WorkerRoster(("a", "b"), rejoin_wait=1.0)
    for n in range(20):
        roster.see([f"w{n:02}"], float(n))
        roster.checked(f"w{n:02}", {})
    roster.see([], 20.0)
    text = roster.reasons("a", "b")
    assert text.count("left the cluster") == 8 + 1
    assert "w19: left the cluster" in text
    assert "w11: left" not in text
    assert text.endswith("; 12 more workers that left the cluster")


# -- whole events on dask processes -------------------------------------------------------------

ENGINE = """\
import os, pathlib, sys, time
marks, holds, fake = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(holds):  # the first HOLDS starts hold, each until its worker is gone
    try:
        fd = os.open(marks / f"hold-{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        continue
    # the worker: the parent of the reaper this engine runs under
    reaper = pathlib.Path(f"/proc/{os.getppid()}/stat").read_text()
    worker = int(reaper.rsplit(")", 1)[1].split()[1])
    os.write(fd, f"{worker}\\n".encode())
    os.close(fd)
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{worker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(1)
if os.environ.get("ENGINESRV_TEST_NO_ENGINE"):  # this worker cannot run it
    (marks / f"refused-{os.getpid()}").touch()
    sys.exit(3)
os.execv(sys.executable, [sys.executable, fake, "good"])
"""
"""A ``cmd:`` engine (the fake engine's ``good`` mode) whose first HOLDS starts never answer:
each writes its worker's process id to ``MARKS/hold-I`` and waits until that worker is gone;
on a worker started with ``ENGINESRV_TEST_NO_ENGINE`` set it cannot start (exit 3)."""


def engine(tmp_path: Path, holds: int) -> tuple[str, Path]:
    """The player (named ``slow``) and its marks folder."""
    script = tmp_path / "slow_engine.py"
    script.write_text(ENGINE)
    marks = tmp_path / "marks"
    marks.mkdir()
    return f"name=slow:cmd:{sys.executable} {script} {marks} {holds} {FAKE}", marks


def kill_holders(dask: DaskProcesses, marks: Path, holds: int, killed: list[float]) -> None:
    """In a thread: as each of the first ``holds`` starts of the engine holds, kill its worker
    with its nanny (so during its check: the check waits on that start); the time of each
    kill in ``killed``."""

    def run() -> None:
        deadline = time.monotonic() + WAIT
        for i in range(holds):
            mark = marks / f"hold-{i}"
            while not (mark.exists() and mark.read_text().endswith("\n")):
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
            dask.kill_with_nanny(int(mark.read_text()))
            killed.append(time.monotonic())

    threading.Thread(target=run, daemon=True).start()


def event(
    config: EventConfig, out: Path, address: str, settings: ClusterSettings | None = None
) -> list[Finished]:
    """Run the event on the cluster at ``address`` (90 s at most), within ``settings``; its
    games as stored."""
    seen: list[Finished] = []
    event = prepare(config, out, resume=False)

    async def main() -> None:
        with trio.fail_after(3 * WAIT):
            await run_event(
                event, out, on_game=seen.append, venue=ClusterVenue(address, settings=settings)
            )

    trio.run(main)
    return seen


CONFIG = EventConfig(game="yoxii", players=("bot:greedy",), games=6, depth=1, event="workers")


def workers_of(out: Path) -> list[str]:
    """Per stored game, the worker its record says it was played on."""
    names = []
    for path in sorted((out / "games").iterdir()):
        comments = parse_record(path.read_text()).comments
        names += [c.removeprefix(PLAYED_ON) for c in comments if c.startswith(PLAYED_ON)]
    return names


def test_a_worker_killed_with_its_nanny_during_the_preflight_leaves_the_event_to_the_others(
    tmp_path: Path,
) -> None:
    """Two workers; the first start of an engine player holds until its worker and that
    worker's nanny are killed: one worker is lost during its check, for good. It is dropped,
    and the event plays every game on the other, each stored once (it used to wait out the
    preflight's deadline, then fail the whole event)."""
    settings = ClusterSettings(preflight_timeout=20.0)  # before: the event failed after it
    player, marks = engine(tmp_path, holds=1)
    config = dataclasses.replace(CONFIG, players=(player, "bot:greedy"))
    out = tmp_path / "ev"
    killed: list[float] = []
    with dask_processes(tmp_path) as dask:
        dask.worker()
        dask.worker()
        pids = dask.wait_for_workers(2)
        kill_holders(dask, marks, 1, killed)
        played = event(config, out, dask.address, settings)
    assert len(killed) == 1
    victim = next(w for w, pid in pids.items() if pid == int((marks / "hold-0").read_text()))
    assert sorted(f.game.id for f in played) == [1, 2, 3, 4, 5, 6]  # each stored once
    assert [row[0] for row in stored(out)] == [1, 2, 3, 4, 5, 6]
    assert set(workers_of(out)) == set(pids) - {victim}


def test_a_worker_that_joins_after_the_preflight_is_checked_before_it_gets_a_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after the preflight, a worker joins on which the engine player cannot start: it
    is checked as it joins, and so gets no game (unchecked, it took its share of them and
    forfeited each one), while the event plays every game on the first worker."""
    player, marks = engine(tmp_path, holds=0)
    config = dataclasses.replace(CONFIG, players=(player, "bot:greedy"))
    out = tmp_path / "ev"
    preflight = ClusterRunner.preflight
    with dask_processes(tmp_path) as dask:
        dask.worker()
        first = dask.wait_for_workers(1)

        async def then_a_worker_joins(runner: ClusterRunner, names: list[str]) -> list[str]:
            warnings = await preflight(runner, names)
            dask.worker(env={"ENGINESRV_TEST_NO_ENGINE": "1"})
            await trio.to_thread.run_sync(dask.wait_for_workers, 2)
            # the games go out once it has started the engine (been checked, here), or,
            # if nothing checks it, after a while: its share of them then reaches it
            with trio.move_on_after(10):
                while not list(marks.glob("refused-*")):
                    await trio.sleep(0.05)
            return warnings

        monkeypatch.setattr(ClusterRunner, "preflight", then_a_worker_joins)
        played = event(config, out, dask.address)
    assert list(marks.glob("refused-*")), "the worker that joined was not checked"
    assert sorted(f.game.id for f in played) == [1, 2, 3, 4, 5, 6]
    assert {row[4] for row in stored(out)} & {"crash", "disconnect"} == set()
    assert set(workers_of(out)) == set(first)


def test_when_every_worker_is_lost_during_the_preflight_the_error_names_the_players(
    tmp_path: Path,
) -> None:
    """Both workers are killed with their nannies while they check the players: the event
    stops at once (once nothing came back in ``rejoin_wait``) with one line that names both
    players and says what became of each worker, and leaves no store behind."""
    # preflight_timeout: before, the error came after it; rejoin_wait: not there before
    settings = ClusterSettings(preflight_timeout=20.0, rejoin_wait=1.0)
    player, marks = engine(tmp_path, holds=2)
    config = dataclasses.replace(CONFIG, players=(player, "bot:greedy"))
    out = tmp_path / "ev"
    killed: list[float] = []
    with dask_processes(tmp_path) as dask:
        dask.worker()
        dask.worker()
        pids = dask.wait_for_workers(2)
        kill_holders(dask, marks, 2, killed)
        with pytest.raises(EventError) as caught:
            event(config, out, dask.address, settings)
    assert len(killed) == 2
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("--cluster: no worker can run the players slow and greedy: ")
    for worker in pids:
        assert f"{worker}: left the cluster during its check" in message
    assert time.monotonic() - killed[-1] < 10.0  # not the preflight's deadline
    assert not (out / "results.sqlite").exists()

"""A tuning run stopped part-way (a failure, or ``kill -9``) and resumed: in the end exactly its
games and steps, no stored game played again, each game with its iteration's stored probe,
the step a stopped run owed taken first; and the ``--resume`` that does not fit refused."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.results.store import ResultsDB
from enginesrv.tune.config import TUNE_KEY
from tests.enginesrv.test_event_files import run_main
from tests.enginesrv.test_tournament import ROOT, cli
from tests.enginesrv.tune_support import (
    Spy,
    SpyVenue,
    assert_complete,
    assert_dispatched_from_the_steps,
    assert_given_the_stored_probes,
    play,
    prepared,
    probes,
    rows,
    steps,
    tune_config,
)


def test_a_stopped_run_takes_the_step_it_owed_then_plays_only_what_is_left(
    tmp_path: Path,
) -> None:
    """One game at a time, stopped right after game 6 (the second of iteration 3) is stored:
    iteration 3's step is stored with it (one transaction). A store that lacks it (written
    otherwise: here the entry is deleted) is resumed by taking it before any game, then
    playing games 7 to 10 only, each with its iteration's probe, dispatched from the steps
    before it."""
    tune = tune_config(10)
    out = tmp_path / "run"
    spy = Spy(stop_after=6)
    with pytest.raises(EventError, match=r"^stopped after game 6$"):
        play(prepared(tune, out, concurrency=1), out, SpyVenue(spy), spy.log)
    assert sorted(rows(out)) == [1, 2, 3, 4, 5, 6]
    assert sorted(probes(out)) == [1, 2, 3]
    assert [(s["k"], s["seq"]) for s in steps(out)] == [(1, 1), (2, 2), (3, 3)]
    with contextlib.closing(sqlite3.connect(out / "results.sqlite")) as db, db:
        db.execute("DELETE FROM meta WHERE key = 'step:000003'")
    spy.log.clear()
    spy.stop_after = None
    state, seen = play(prepared(tune, out, resume=True, concurrency=1), out, SpyVenue(spy), spy.log)
    assert seen.started == [2]
    assert spy.log == [
        "step 3", "game 7", "game 8", "step 4", "game 9", "game 10", "step 5",
    ]  # fmt: skip
    assert [s.steps_before for s in seen.steps] == [2, 2, 2]
    assert len(state.steps) == 5
    assert_complete(tune, out)
    assert_dispatched_from_the_steps(tune, out)
    assert_given_the_stored_probes(tune, out, spy.given)
    assert [g.game_id for g in spy.given] == list(range(1, 11))
    # a finished run resumed plays and steps nothing, and leaves its store as it was
    before = (rows(out), probes(out), steps(out))
    _, again = play(prepared(tune, out, resume=True, concurrency=1), out, SpyVenue(spy))
    assert (again.started, again.steps, len(spy.given)) == ([5], [], 10)
    assert (rows(out), probes(out), steps(out)) == before


def test_a_run_stopped_with_games_in_flight_replays_only_those(tmp_path: Path) -> None:
    """Two games at a time, stopped after its fifth stored game: the game in the other lane is
    lost, and the resume plays it again with the probe stored for it; no stored game is
    played again; every iteration whose pair was stored is stepped before any game."""
    tune = tune_config(16)
    out = tmp_path / "run"
    spy = Spy(stop_after=5)
    with pytest.raises(EventError, match=r"^stopped after game \d+$"):
        play(prepared(tune, out), out, SpyVenue(spy), spy.log)
    kept = rows(out)
    assert len(kept) == 5
    owed = sorted(
        k for k in probes(out) if {2 * k - 1, 2 * k} <= set(kept)
        and k not in {s["k"] for s in steps(out)}
    )  # fmt: skip
    first_run = len(spy.given)
    spy.log.clear()
    spy.stop_after = None
    play(prepared(tune, out, resume=True), out, SpyVenue(spy), spy.log)
    again = [g.game_id for g in spy.given[first_run:]]
    assert sorted(again) == sorted(set(range(1, 17)) - set(kept))  # each once, none stored
    assert spy.log[: len(owed)] == [f"step {k}" for k in owed]
    assert_complete(tune, out)
    assert_given_the_stored_probes(tune, out, spy.given)
    assert {g: kept[g] for g in kept} == {g: rows(out)[g] for g in kept}


def _stored_count(out: Path) -> int:
    if not (out / "results.sqlite").exists():
        return 0
    try:
        return len(rows(out))
    except sqlite3.Error:  # busy with a write: look again
        return 0


def test_a_killed_tune_resumes_to_exactly_its_games_and_steps(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    args = [
        "tune", "yohoho", "bot:noisy", "--param", "Aim=100:0:1000:50", "--games", "16",
        "--st", "0.3", "--concurrency", "2", "--seed", "5", "--out", str(out),
    ]  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", *args], cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _stored_count(out) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    partial, dispatched, taken = rows(out), probes(out), steps(out)
    # killed after some games were stored and before the last: else the resume below would
    # have nothing to resume, or play the run from its start
    assert 5 <= len(partial) < 16, f"killed after {len(partial)} games"
    resumed = cli("tune", "--resume", "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert f", resuming after {len(taken)} iterations\n" in resumed.stderr
    stepped = re.findall(r"^iteration (\d+)/8: ", resumed.stdout, flags=re.MULTILINE)
    assert sorted(map(int, stepped)) == sorted(set(range(1, 9)) - {s["k"] for s in taken})
    tune = tune_config(16)
    assert_complete(tune, out)
    # what was stored before the kill is kept as it was: the games, the steps, the probes
    assert {g: rows(out)[g] for g in partial} == partial
    assert steps(out)[: len(taken)] == taken
    assert {k: probes(out)[k] for k in dispatched} == dispatched
    assert len(list((out / "games").glob("game-*.txt"))) == 16
    assert (out / "trajectory.svg").is_file()


def _stored_run(out: Path, *params: str, games: int = 10) -> None:
    """A tuning run's store as the command line makes it, with nothing played yet."""
    tune = tune_config(games, *params)
    out.mkdir()
    config = prepared(tune, out).event.config
    ResultsDB.create(out / "results.sqlite", config, {TUNE_KEY: tune.to_json()}).close()


def _stored_match(out: Path) -> None:
    out.mkdir()
    config = EventConfig("yohoho", ("bot:noisy", "bot:greedy"), st=0.3, event="a match")
    ResultsDB.create(out / "results.sqlite", config).close()


RUN = ("yohoho", "bot:noisy", "--games", "10", "--st", "0.3", "--concurrency", "2")
DIFFERS = (
    "enginesrv tune: error: --resume: the command line differs from the stored run in its "
    "player, parameters or schedule; give only --resume --out DIR, or the same arguments\n"
)


@pytest.mark.parametrize(
    "changed",
    [
        ("--param", "Aim=200:0:1000:50"),
        ("--param", "Aim=100:0:1000:40"),
        ("--param", "Aim=100:0:1000:50", "--param", "Blur=2:0:10"),
        ("--param", "Aim=100:0:1000:50", "--r-end", "0.5"),
        ("--param", "Aim=100:0:1000:50", "--alpha", "0.7"),
        ("--param", "Aim=100:0:1000:50", "--rounding", "randomized"),
    ],
)
def test_resume_with_other_parameters_or_schedule_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changed: tuple[str, ...]
) -> None:
    out = tmp_path / "run"
    _stored_run(out)
    before = (out / "results.sqlite").read_bytes()
    assert run_main(capsys, "tune", *RUN, *changed, "--resume", "--out", str(out)) == (
        2, "", DIFFERS,
    )  # fmt: skip
    assert (out / "results.sqlite").read_bytes() == before


def test_resume_with_the_same_arguments_or_none_is_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both reach the run: its player is checked, here with a parameter the bot lacks."""
    out = tmp_path / "run"
    _stored_run(out, "Nope=1:0:2")
    for extra in (("--param", "Nope=1:0:2", *RUN), ()):
        code, text, err = run_main(capsys, "tune", *extra, "--resume", "--out", str(out))
        assert (code, text) == (2, ""), err
        assert err.startswith("enginesrv tune: error: player 'bot:noisy': noisy has no option")


def test_resume_of_a_directory_that_holds_no_tuning_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match = tmp_path / "match"
    _stored_match(match)
    code, text, err = run_main(capsys, "tune", "--resume", "--out", str(match))
    store = match / "results.sqlite"
    assert (code, text, err) == (
        2, "", f"enginesrv tune: error: {store} holds a match or tournament, not a tuning run\n",
    )  # fmt: skip
    empty = tmp_path / "empty"
    empty.mkdir()
    code, text, err = run_main(capsys, "tune", "--resume", "--out", str(empty))
    assert (code, text) == (2, "")
    assert err.count("\n") == 1
    assert str(empty) in err
    assert "nothing to resume" in err
    code, text, err = run_main(capsys, "tune", "--resume")
    assert (code, text, err) == (
        2, "", "enginesrv tune: error: --resume needs --out DIR, the directory of the event\n",
    )  # fmt: skip


def test_a_match_does_not_resume_a_tuning_run(tmp_path: Path) -> None:
    """Its games would be played without their probes, and ``tune --resume`` would then take
    them as the run's (a tournament's resume is the same code). In a process of its own:
    were it taken, games would be played."""
    out = tmp_path / "run"
    _stored_run(out)
    before = (out / "results.sqlite").read_bytes()
    proc = cli("match", "--resume", "--out", str(out))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"enginesrv match: error: {out} holds a tuning run: resume it with "
        f"enginesrv tune --resume --out {out}\n"
    )
    assert (out / "results.sqlite").read_bytes() == before


def test_an_iteration_with_no_game_stored_below_the_last_is_played_on_resume(
    tmp_path: Path,
) -> None:
    """A run killed with several iterations in flight can keep a later iteration's games and
    none of an earlier one's (here made so by deleting iteration 2's games and entries, and
    iteration 3's step): the resume takes iteration 3's step, then dispatches iteration 2
    again, so that the run still ends with every iteration, each stepped once."""
    tune = tune_config(6)
    out = tmp_path / "run"
    spy = Spy()
    play(prepared(tune, out, concurrency=1), out, SpyVenue(spy))
    with contextlib.closing(sqlite3.connect(out / "results.sqlite")) as db, db:
        db.execute("DELETE FROM games WHERE id IN (3, 4)")
        db.execute("DELETE FROM meta WHERE key IN ('probe:000002', 'step:000002', 'step:000003')")
    spy.log.clear()
    state, _ = play(prepared(tune, out, resume=True, concurrency=1), out, SpyVenue(spy), spy.log)
    assert spy.log == ["step 3", "game 3", "game 4", "step 2"]
    assert sorted(rows(out)) == [1, 2, 3, 4, 5, 6]
    assert sorted(probes(out)) == [1, 2, 3]
    assert [(s["k"], s["seq"]) for s in steps(out)] == [(1, 1), (3, 2), (2, 3)]
    assert [s.k for s in state.steps] == [1, 3, 2]

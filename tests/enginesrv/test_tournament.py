"""Matches and tournaments end to end: the schedule, the commands, SQLite results, resuming
after kill -9, SPRT, TOML settings, and plug-in bots."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
import trio

import games
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.records import parse_record
from enginesrv.event.prepared import prepare
from enginesrv.event.schedule import make_schedule, pairings
from enginesrv.event.tournament import run_event

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", *args],
        capture_output=True, text=True, check=False, env=env, cwd=ROOT, timeout=240,
    )  # fmt: skip


def stored(out: Path) -> list[tuple[int, str, str, str, str, int]]:
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return db.execute(
            "SELECT id, p1, p2, winner, reason, plies FROM games ORDER BY id"
        ).fetchall()
    finally:
        db.close()


# -- the schedule ----------------------------------------------------------------------------------


def test_round_robin_and_gauntlet_pairings() -> None:
    assert pairings(3, gauntlet=False) == [(0, 1), (0, 2), (1, 2)]
    assert pairings(4, gauntlet=True) == [(0, 1), (0, 2), (0, 3)]


def test_schedule_alternates_colours_and_repeats_openings() -> None:
    config = EventConfig("yoxii", ("bot:a", "bot:b", "bot:c"), games=4, rounds=2, repeat=True)
    schedule = make_schedule(config, openings=3)
    assert len(schedule) == 3 * 4 * 2
    assert [g.id for g in schedule] == list(range(1, 25))
    first_pairing = [g for g in schedule if g.pairing == 0]
    assert [g.p1 for g in first_pairing] == [0, 1] * 4
    # each pair of games shares an opening; pairs take the openings in turn
    assert [g.opening for g in first_pairing] == [0, 0, 1, 1, 2, 2, 0, 0]
    assert [g.pair for g in first_pairing] == [0, 0, 1, 1, 2, 2, 3, 3]
    plain = make_schedule(EventConfig("yoxii", ("bot:a", "bot:b"), games=4), openings=3)
    assert [g.opening for g in plain] == [0, 1, 2, 0]
    shuffled = EventConfig("yoxii", ("bot:a", "bot:b"), games=6, openings_order="random")
    assert make_schedule(shuffled, 3) == make_schedule(shuffled, 3)


def test_prepare_rejects_bad_events(tmp_path: Path) -> None:
    good = EventConfig("yoxii", ("bot:random", "bot:greedy"), depth=1)
    for bad, message in [
        (EventConfig("chess", good.players, depth=1), "unknown game 'chess'"),
        (EventConfig("yoxii", ("bot:random",), depth=1), "at least two players"),
        (EventConfig("yoxii", ("bot:random", "rnd"), depth=1), "player 'rnd'"),
        (EventConfig("yoxii", good.players), "give a limit"),
        (EventConfig("yoxii", good.players, tc="fast"), "time control 'fast'"),
        (EventConfig("yoxii", good.players, depth=1, repeat=True, games=3), "must be even"),
        (EventConfig("yoxii", good.players, depth=1, sprt="elo0=0"), "missing"),
        (EventConfig("yoxii", (*good.players, "bot:random"), depth=1, sprt="elo0=0,elo1=5,"
         "alpha=0.05,beta=0.05"), "exactly two players"),
        (EventConfig("yoxii", good.players, depth=1, resign="movecount=2"), "resign rule"),
    ]:  # fmt: skip
        with pytest.raises(EventError, match=message):
            prepare(bad, None, resume=False)
    with pytest.raises(EventError, match="nothing to resume"):
        prepare(good, tmp_path, resume=True)


# -- running ---------------------------------------------------------------------------------------


def test_an_event_stores_results_and_records_that_replay(tmp_path: Path) -> None:
    event = prepare(
        EventConfig("yohoho", ("bot:random", "bot:random:Seed=3", "bot:greedy"), depth=1,
                    max_plies=120, concurrency=2),
        tmp_path, resume=False,
    )  # fmt: skip
    seen = []
    standings = trio.run(
        lambda: run_event(event, tmp_path, on_game=lambda done: seen.append(done.game.id))
    )
    assert sorted(seen) == list(range(1, 7))
    assert [(p.first, p.second) for p in standings] == [
        ("random", "random:Seed=3"), ("random", "greedy"), ("random:Seed=3", "greedy"),
    ]  # fmt: skip
    assert sum(p.wins + p.draws + p.losses for p in standings) == 6
    rows = stored(tmp_path)
    assert [r[0] for r in rows] == list(range(1, 7))
    for game_id, p1, p2, winner, reason, plies in rows:
        record = parse_record((tmp_path / "games" / f"game-{game_id:05d}.txt").read_text())
        assert (record.headers["P1"], record.headers["P2"]) == (p1, p2)
        assert (record.headers["Result"], record.headers["Reason"]) == (winner, reason)
        state = games.load("yohoho").new_state()
        for move in record.moves:
            state.push(state.parse_move(move.token))
        assert state.to_string() == record.headers["Final"]
        assert len(record.moves) == plies
    # an event is not run twice into one directory
    with pytest.raises(EventError, match="already holds an event"):
        prepare(event.config, tmp_path, resume=False)


def test_match_command_results_and_json(tmp_path: Path) -> None:
    out = tmp_path / "m"
    proc = cli("match", "yoxii", "bot:random", "name=other:bot:random:Seed=9", "--games", "4",
               "--depth", "1", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("game 1/4: random (p1) vs other (p2): ")
    assert lines[1].startswith("game 2/4: other (p1) vs random (p2): ")
    assert "; score random " in lines[0]
    assert lines[4].split() == ["pairing", "W", "D", "L", "games", "score", "elo", "+/-95%",
                                "LOS", "pentanomial"]  # fmt: skip
    assert lines[5].startswith("random vs other")
    replay = cli("replay", "yoxii", str(out / "games" / "game-00001.txt"))
    assert replay.returncode == 0, replay.stderr
    result = cli("results", str(out), "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    [pairing] = payload["pairings"]
    assert (pairing["p1"], pairing["p2"], pairing["games"]) == ("random", "other", 4)
    assert pairing["wins"] + pairing["draws"] + pairing["losses"] == 4
    assert {"elo", "elo_ci95", "los", "pentanomial", "llr"} <= set(pairing)
    assert sum(pairing["pentanomial"]) == 2
    table = cli("results", str(out))
    assert table.returncode == 0
    assert "random vs other" in table.stdout


def test_event_command_errors_are_one_line(tmp_path: Path) -> None:
    for args, message in [
        (("match", "yoxii", "bot:random", "bot:random:Speed=9", "--depth", "1"),
         "random has no option 'Speed' (its options: Seed, SecretSeed)"),
        (("match", "yoxii", "bot:random"), "a match has two players, got 1"),
        (("match", "yoxii", "bot:random", "bot:nobot", "--depth", "1"), "nobot"),
        (("tournament", "yoxii", "bot:random", "bot:greedy", "--tc", "1/"), "time control"),
        (("results", str(tmp_path)), "no event results"),
        (("match", "--resume"), "--resume needs --out DIR"),
    ]:  # fmt: skip
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert proc.stderr.count("\n") <= 2, proc.stderr


def test_toml_settings_with_the_command_line_winning(tmp_path: Path) -> None:
    config = tmp_path / "event.toml"
    config.write_text(
        'game = "yoxii"\n'
        'players = ["bot:random", { name = "g", spec = "bot:greedy", options = { Seed = 4 } }]\n'
        "depth = 1\ngames = 6\nseed = 5\n"
    )
    out = tmp_path / "t"
    proc = cli("tournament", "--config", str(config), "--games", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert len(stored(out)) == 2
    assert "random vs g" in proc.stdout
    db = sqlite3.connect(out / "results.sqlite")
    [(text,)] = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
    db.close()
    assert json.loads(text)["players"] == ["bot:random", "name=g:options=Seed=4:bot:greedy"]
    config.write_text('game = "yoxii"\nspeed = 3\n')
    bad = cli("tournament", "--config", str(config))
    assert bad.returncode == 2
    assert "unknown setting 'speed'" in bad.stderr


def test_sprt_stops_the_match(tmp_path: Path) -> None:
    out = tmp_path / "s"
    proc = cli("match", "yoxii", "bot:alphabeta:Depth=2", "bot:random", "--depth", "2",
               "--games", "200", "--sprt", "elo0=0,elo1=400,alpha=0.1,beta=0.1",
               "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    played = len(stored(out))
    assert 10 <= played < 200  # no decision before 10 games
    assert "H1 accepted" in proc.stdout
    payload = json.loads(cli("results", str(out), "--json").stdout)
    assert payload["pairings"][0]["llr"] >= 2.19  # log((1 - 0.1) / 0.1)


def _tournament_args(out: Path) -> list[str]:
    return [
        "tournament", "yoxii", "bot:alphabeta:Depth=1", "bot:greedy", "bot:random",
        "--depth", "2", "--games", "4", "--seed", "11", "--concurrency", "2", "--out", str(out),
    ]  # fmt: skip


def test_a_killed_tournament_resumes_to_the_same_results(tmp_path: Path) -> None:
    reference = tmp_path / "whole"
    proc = cli(*_tournament_args(reference))
    assert proc.returncode == 0, proc.stderr
    expected = stored(reference)
    assert len(expected) == 12
    rng = random.Random(7)
    for attempt in range(3):
        out = tmp_path / f"killed{attempt}"
        child = subprocess.Popen(
            [sys.executable, "-m", "enginesrv.cli", *_tournament_args(out)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        target = rng.randrange(1, 11)
        while time.monotonic() < deadline:
            if (out / "results.sqlite").exists() and len(stored(out)) >= target:
                break
            time.sleep(0.02)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        partial = stored(out)
        # killed after its first game was stored and before its last: else the resume below
        # would play the event from its start, or only reopen it finished
        assert 0 < len(partial) < len(expected), f"killed after {len(partial)} games"
        assert partial == [row for row in expected if row[0] in {r[0] for r in partial}]
        resumed = cli("tournament", "--resume", "--out", str(out))
        assert resumed.returncode == 0, resumed.stderr
        assert f", resuming after {len(partial)} games\n" in resumed.stderr
        # the resume plays exactly the games not stored before the kill, each once
        played = re.findall(r"^game (\d+)/12: ", resumed.stdout, flags=re.MULTILINE)
        assert sorted(map(int, played)) == [row[0] for row in expected if row not in partial]
        assert stored(out) == expected
        assert len(list((out / "games").glob("game-*.txt"))) == 12


def test_plugin_example_installs_and_plays(tmp_path: Path) -> None:
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--target", str(target), str(ROOT / "examples" / "plugin_bot")],
        capture_output=True, text=True, check=False, timeout=240,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    proc = cli("match", "yoxii", "bot:mybot", "bot:random", "--games", "1", "--depth", "1",
               env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "mybot (p1) vs random (p2)" in proc.stdout


def test_misbehaving_engines_lose_with_the_right_reason_and_the_event_completes(
    tmp_path: Path,
) -> None:
    fake = f"{sys.executable} {ROOT / 'tests' / 'enginesrv' / 'fakes' / 'fake_engine.py'}"
    # each starts and greets, then misbehaves in its games (one that never greets stops the
    # event before its first game: test_preflight)
    expected = {
        "crash": {"crash"},
        "hang": {"time-forfeit"},
        "illegal": {"illegal-move"},
        "late": {"time-forfeit"},
        "noready": {"stall"},
    }
    players = [f"name=good:cmd:{fake} good"] + [f"name={m}:cmd:{fake} {m}" for m in expected]
    players.append(f"name=ugi:cmd:{fake} ugi")
    out = tmp_path / "fakes"
    proc = cli("tournament", "yoxii", *players, "--gauntlet", "--st", "0.3", "--games", "2",
               "--ready-timeout", "0.5", "--concurrency", "2", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = stored(out)
    assert len(rows) == 2 * (len(expected) + 1)
    for _, p1, p2, winner, reason, _ in rows:
        bad = p2 if p1 == "good" else p1
        if bad == "ugi":
            assert reason not in {"crash", "stall", "time-forfeit", "illegal-move"}
            continue
        assert reason in expected[bad], (p1, p2, reason)
        assert winner == ("p1" if p1 == "good" else "p2"), (p1, p2, winner)
    # every engine started as a command has its standard error kept
    logs = {path.name for path in (out / "logs").iterdir()}
    assert {f"{name}.stderr" for name in ["good", *expected, "ugi"]} <= logs


def test_live_display_on_a_terminal_and_plain_lines_otherwise() -> None:
    from io import StringIO

    from enginesrv.cli.display import Display

    event = prepare(
        EventConfig("yoxii", ("bot:random", "bot:greedy"), games=2, st=0.6), None, resume=False
    )
    for live in (True, False):
        out, err = StringIO(), StringIO()
        display = Display(out, err, event, live=live)
        trio.run(
            partial(
                run_event,
                event,
                None,
                on_game=display.game,
                on_start=display.start,
                on_tick=display.tick if live else None,
            )
        )
        display.close()
        lines = out.getvalue().splitlines()
        assert [line[:9] for line in lines] == ["game 1/2:", "game 2/2:"]
        status = err.getvalue()
        assert status.startswith("match yoxii: bot:random vs bot:greedy, 2 games")
        if live:
            assert "\r\x1b[K[1/2] random vs greedy: " in status
            assert " eta " in status
            assert status.endswith("\r\x1b[K")  # the status line is cleared at the end
        else:
            assert "\x1b" not in status
            assert status.count("\n") == 1


def test_finished_games_are_stored_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the record file and the database are written with an fsync each: on the event loop,
    # that wait would be charged to the engines of the games still running
    import threading

    from enginesrv.event.results import store

    writers: list[bool] = []
    real = store._write_atomic

    def spy(path: Path, text: str) -> None:
        writers.append(threading.current_thread() is threading.main_thread())
        real(path, text)

    monkeypatch.setattr(store, "_write_atomic", spy)
    event = prepare(
        EventConfig("yoxii", ("bot:random", "bot:greedy"), depth=1, games=4, concurrency=2),
        tmp_path, resume=False,
    )  # fmt: skip
    trio.run(lambda: run_event(event, tmp_path, on_game=lambda done: None))
    assert writers == [False] * 4
    assert [r[0] for r in stored(tmp_path)] == [1, 2, 3, 4]

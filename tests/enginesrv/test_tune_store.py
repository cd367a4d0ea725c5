"""A tuning run's store: the meta entries it adds to an event's (``ResultsDB.create(...,
meta=...)``, ``ResultsDB.items(prefix)``), and a damaged entry (a probe, a step or the run's
configuration, edited by hand) refused as one ``EventError`` that names the file, by
``tune --resume`` and by ``tune-report`` alike, never a traceback; the file is kept as it
is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import trio

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.results.store import ResultsDB
from enginesrv.tune.config import TUNE_KEY, TuneConfig
from enginesrv.tune.run import TuneObservers, run_tune
from tests.enginesrv.test_event_files import run_main
from tests.enginesrv.test_tournament import cli
from tests.enginesrv.tune_support import prepared, stored_run, tune_config

CONFIG = EventConfig("yohoho", ("bot:noisy", "bot:greedy"), st=0.3, event="a store")


def test_meta_entries_are_made_with_the_store_and_read_by_exact_prefix(tmp_path: Path) -> None:
    entries = {
        "probe:000002": "b", "probe:000001": "a", "probes": "x", "xprobe:000001": "y",
        "a_b": "1", "aXb": "2", "50%": "3", "50x": "4", "Probe:000003": "z",
    }  # fmt: skip
    path = tmp_path / "results.sqlite"
    for db in (ResultsDB.create(path, CONFIG, entries), ResultsDB.create(None, CONFIG, entries)):
        try:
            assert db.config() == CONFIG
            assert db.items("probe:") == [("probe:000001", "a"), ("probe:000002", "b")]
            assert db.items("a_") == [("a_b", "1")]  # no LIKE pattern: _ and % are themselves
            assert db.items("50%") == [("50%", "3")]
            assert db.items("nothing") == []
            assert [key for key, _ in db.items("")] == sorted([*entries, "config"])
            assert db.get("xprobe:000001") == "y"
        finally:
            db.close()
    assert not path.with_name("results.sqlite.new").exists()
    with pytest.raises(EventError, match="already exists; it is kept as it is"):
        ResultsDB.create(path, CONFIG, {"probe:000001": "other"})
    db = ResultsDB(path, read_only=True)
    try:
        assert db.items("probe:000001") == [("probe:000001", "a")]
    finally:
        db.close()


def test_meta_entries_cannot_replace_the_configuration(tmp_path: Path) -> None:
    db = ResultsDB.create(tmp_path / "results.sqlite", CONFIG, {"config": "{}", "tune": "x"})
    try:
        assert db.config() == CONFIG
        assert db.get("tune") == "x"
    finally:
        db.close()


def test_an_entry_that_is_not_text_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    ResultsDB.create(path, CONFIG, {"probe:000001": "a"}).close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("INSERT INTO meta VALUES ('probe:000002', x'00ff')")
    raw.close()
    db = ResultsDB(path, read_only=True)
    try:
        with pytest.raises(EventError) as caught:
            db.items("probe:")
    finally:
        db.close()
    assert str(caught.value) == (
        f"{path}: the results database is damaged (meta 'probe:000002' is not text); it is "
        "kept as it is"
    )


# -- damaged entries of a run --------------------------------------------------------------------


def _good(key: str) -> dict[str, Any]:
    k = int(key.split(":")[1])
    if key.startswith("probe:"):
        return {"k": k, "flips": [1], "plus": [150.0], "minus": [50.0], "opening": 0}
    return {"k": k, "seq": k, "result": 0, "theta": [100.0]}


DEEP = "[" * 100_000 + "]" * 100_000

DAMAGE: list[tuple[str, dict[str, Any] | str, str]] = [
    ("probe:000002", {"flips": [0]}, "probe:000002: a flip is 0"),
    ("probe:000002", {"flips": [2]}, "2 is not a whole number from -1 to 1"),
    ("probe:000002", {"flips": [1, -1]}, "[1, -1] is not a list of 1"),
    ("probe:000002", {"plus": [float("nan")]}, "nan is not a number"),
    ("probe:000002", {"minus": ["50"]}, "50 is not a number"),
    ("probe:000002", {"k": 9}, "9 is not a whole number from 1 to 3"),
    ("probe:000002", {"k": 1}, "probe:000002 holds iteration 1"),
    ("probe:000002", {"opening": -1}, "-1 is not a whole number from 0 to 1000000000"),
    ("probe:000002", {"line": "xyz"}, "probe:000002: the opening's digest 'xyz' is not one"),
    (
        "probe:000002",
        {"line": "ABCDEF0123456789"},
        "probe:000002: the opening's digest 'ABCDEF0123456789' is not one",
    ),
    ("probe:000002", {"line": 7}, "probe:000002: the opening's digest '7' is not one"),
    ("step:000002", {"theta": [100.0, 5.0]}, "[100.0, 5.0] is not a list of 1"),
    ("step:000002", {"theta": [float("nan")]}, "nan is not a number"),
    ("step:000002", {"theta": [float("inf")]}, "inf is not a number"),
    ("step:000002", {"theta": [True]}, "True is not a number"),
    ("step:000002", {"theta": [1000.5]}, "step:000002: Aim 1000.5 is outside 0 to 1000"),
    ("step:000002", {"result": 3}, "3 is not a whole number from -2 to 2"),
    ("step:000002", {"seq": 0}, "0 is not a whole number from 1 to 1000000000"),
    (
        "step:000002",
        {"seq": 5},
        "step 2 is number 5 in the order of the steps, where 2 is due (the 2 steps stored are "
        "numbered 1 to 2)",
    ),
    (
        "step:000002",
        {"seq": 1},
        "step 2 is number 1 in the order of the steps, where 2 is due (the 2 steps stored are "
        "numbered 1 to 2)",
    ),
    ("step:000002", {"k": 3}, "step:000002 holds the step of iteration 3"),
    ("step:000002", "{", "Expecting property name enclosed in double quotes"),
    ("step:000002", "[]", "list indices must be integers or slices, not str"),
    ("step:000002", DEEP, "step:000002 nests lists or objects too deep"),
    ("probe:000002", DEEP, "probe:000002 nests lists or objects too deep"),
]


def _damaged_run(tmp_path: Path, key: str, change: dict[str, Any] | str) -> tuple[TuneConfig, Path]:
    """A run of 3 iterations, 2 of them stepped, whose entry ``key`` has ``change`` (its
    fields replaced, or its whole text)."""
    tune = tune_config(6)
    out = tmp_path / "run"
    stored_run(out, tune, [(100.0,), (100.0,)])
    text = change if isinstance(change, str) else json.dumps({**_good(key), **change})
    raw = sqlite3.connect(out / "results.sqlite")
    with raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = ?", (text, key))
    raw.close()
    return tune, out


@pytest.mark.parametrize(("key", "change", "reason"), DAMAGE)
def test_a_damaged_entry_is_one_error_naming_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    key: str,
    change: dict[str, Any] | str,
    reason: str,
) -> None:
    tune, out = _damaged_run(tmp_path, key, change)
    store = out / "results.sqlite"
    before = store.read_bytes()
    expected = f"{store}: the tuning run is damaged: {reason}"
    code, text, err = run_main(capsys, "tune-report", str(out))
    assert (code, text) == (2, "")
    assert err.startswith(f"enginesrv tune-report: error: {expected}")
    assert err.count("\n") == 1
    # a resumed run reads the store as it opens it, before any game
    with pytest.raises(EventError) as caught:
        trio.run(
            run_tune, prepared(tune, out, resume=True), out, TuneObservers(lambda stepped: None)
        )
    assert str(caught.value).startswith(expected)
    assert "\n" not in str(caught.value)
    assert store.read_bytes() == before
    assert not (out / "trajectory.svg").exists()


def test_a_step_or_a_game_of_no_iteration_is_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _damaged_run(tmp_path, "probe:000002", {})
    store = out / "results.sqlite"
    raw = sqlite3.connect(store)
    with raw:
        raw.execute("DELETE FROM meta WHERE key = 'probe:000002'")
        raw.execute("DELETE FROM games WHERE pair = 2")
    raw.close()
    assert run_main(capsys, "tune-report", str(out)) == (
        2, "", f"enginesrv tune-report: error: {store}: the tuning run is damaged: step 2 has "
        "no iteration\n",
    )  # fmt: skip
    _, out = _damaged_run(tmp_path / "game", "probe:000002", {})
    store = out / "results.sqlite"
    raw = sqlite3.connect(store)
    with raw:  # game 5 is the first of iteration 3, which was never dispatched
        raw.execute(
            "INSERT INTO games VALUES (5, 3, 0, 'noisy+', 'noisy-', 'noisy+', 'noisy-', 3, 0, "
            "'p1', 'goal-row', 1.0, 10, 0.1, 0.01, NULL)"
        )
    raw.close()
    assert run_main(capsys, "tune-report", str(out)) == (
        2, "", f"enginesrv tune-report: error: {store}: the tuning run is damaged: game 5 "
        "belongs to no iteration\n",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"player": 7}, "player is 7, not a player spec"),
        ({"player": "nope:x"}, "player 'nope:x'"),
        ({"params": [{"name": "Aim"}]}, "'start'"),
        ({"params": "Aim"}, "a parameter is 'A'"),
        ({"rounding": "up"}, "rounding: 'up' is not one of deterministic, randomized"),
        ({"schedule": {"iterations": 3}}, "'a_offset'"),
        (DEEP, "it nests lists or objects too deep"),
        ("{", "Expecting property name enclosed in double quotes"),
    ],
)
def test_a_damaged_run_configuration_is_one_error_naming_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, Any] | str,
    reason: str,
) -> None:
    tune, out = _damaged_run(tmp_path, "probe:000002", {})
    store = out / "results.sqlite"
    text = (
        change if isinstance(change, str) else json.dumps({**json.loads(tune.to_json()), **change})
    )
    raw = sqlite3.connect(store)
    with raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = ?", (text, TUNE_KEY))
    raw.close()
    code, out_text, err = run_main(capsys, "tune-report", str(out))
    assert (code, out_text) == (2, "")
    assert err.startswith(
        f"enginesrv tune-report: error: {store}: the stored tuning configuration is damaged: "
    ), err
    assert reason in err
    assert err.count("\n") == 1


def test_tune_resume_refuses_a_damaged_store_in_one_line(tmp_path: Path) -> None:
    """The command itself, in a process of its own (a run that went on would play games),
    on the entry that once made the parser recurse past its limit."""
    key, change, reason = DAMAGE[-1]
    _, out = _damaged_run(tmp_path, key, change)
    proc = cli("tune", "--resume", "--out", str(out))
    store = out / "results.sqlite"
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.endswith(
        f"enginesrv tune: error: {store}: the tuning run is damaged: {reason}\n"
    ), proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("UPDATE games SET first_points = 1.0 WHERE id = 4", "games of +2"),
        ("UPDATE games SET first_points = 0.5 WHERE id = 3", "games of -1"),
        ("DELETE FROM games WHERE id = 4", "one game or none stored"),
        ("DELETE FROM games WHERE pair = 2", "one game or none stored"),
    ],
)
def test_a_step_that_its_games_do_not_give_is_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str, reason: str
) -> None:
    """A step is stored with its pair's second game: a store where a step's result is not
    its games' was written otherwise, and its ``theta`` cannot be trusted."""
    _, out = _damaged_run(tmp_path, "probe:000002", {})
    store = out / "results.sqlite"
    raw = sqlite3.connect(store)
    with raw:
        raw.execute(sql)
    raw.close()
    assert run_main(capsys, "tune-report", str(out)) == (
        2, "", f"enginesrv tune-report: error: {store}: the tuning run is damaged: step 2 took "
        f"a result of +0 from {reason}\n",
    )  # fmt: skip

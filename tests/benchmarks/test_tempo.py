"""benchmarks/tempo.py: the fit of the tempo per phase, and a run over a record file whose gaps
its own printed tempo closes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import games
from benchmarks.tempo import fit
from enginesrv.event.play.records import Record, RecordMove, format_record

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "benchmarks" / "tempo.py"


def test_the_fit_solves_the_gaps_of_a_two_decision_turn() -> None:
    # t -> p by the same side: T[t] - T[p] = 320; p -> t by the other: T[p] + T[t] = 380
    tempo = fit({("t", "p", 1): 320.0, ("p", "t", -1): 380.0})
    assert tempo == pytest.approx({"t": 350.0, "p": 30.0})


def test_the_fit_of_one_decision_turns_is_half_the_gap() -> None:
    assert fit({("play", "play", -1): 84.0}) == pytest.approx({"play": 42.0})


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_printed_tempo_closes_the_gaps_of_the_records(tmp_path: Path) -> None:
    game = games.load("yoxii")
    rng = random.Random(5)
    records = []
    for _ in range(3):
        state = game.new_state()
        moves = []
        while not state.is_terminal():
            legal = state.legal_moves()
            move = legal[rng.randrange(len(legal))]
            moves.append(RecordMove(state.move_to_str(move)))
            state.push(move)
        records.append(format_record(Record({"Game": "yoxii"}, moves)))
    path = tmp_path / "games.txt"
    path.write_text("\n".join(records))
    none = ("--option", "EvalYoxiiTempoTotem=0", "--option", "EvalYoxiiTempoPlace=0")
    first = run("yoxii", str(path), "--json", *none)
    assert first.returncode == 0, first.stderr
    tempo = json.loads(first.stdout)["tempo"]
    assert set(tempo) == {"t", "p"}
    again = run(
        "yoxii", str(path), "--json",
        "--option", f"EvalYoxiiTempoTotem={tempo['t']}",
        "--option", f"EvalYoxiiTempoPlace={tempo['p']}",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    groups = json.loads(again.stdout)["groups"]
    assert {(g["phase"], g["child"], g["same_side"]) for g in groups} == {
        ("t", "p", True),
        ("p", "t", False),
    }
    # rounded to whole points twice (the tempo given, the gaps printed): at most a point off
    assert all(abs(g["mean_gap"]) <= 1 for g in groups), groups


def test_a_record_of_another_game_is_no_measurement(tmp_path: Path) -> None:
    path = tmp_path / "games.txt"
    path.write_text(format_record(Record({"Game": "yohoho"}, [])))
    done = run("yoxii", str(path))
    assert done.returncode == 1
    assert done.stderr.strip() == "no position to measure: are the records of this game?"


def test_a_bad_option_is_named(tmp_path: Path) -> None:
    path = tmp_path / "games.txt"
    path.write_text(format_record(Record({"Game": "yoxii"}, [])))
    done = run("yoxii", str(path), "--option", "EvalYoxiiTempoTotem=x")
    assert done.returncode == 1
    assert done.stderr.strip() == "--option 'EvalYoxiiTempoTotem=x': expected NAME=INTEGER"

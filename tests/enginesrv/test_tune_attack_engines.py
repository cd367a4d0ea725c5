"""Tuning runs attacked by the engine tuned: one whose refusal of a per-game option is a
mebibyte long, one that does not know a parameter or refuses its start value, one that never
answers its ``setoption`` or leaves at it. Each stops the run before its first game in one
line, or forfeits only its game with a reason cut to size; nothing it started is left."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from enginesrv.event.config import EventError
from enginesrv.event.results import files
from tests.enginesrv.test_tune_attacks import enginesrv
from tests.enginesrv.tune_support import play, prepared, probes, rows, tune_config

FAKES = Path(__file__).with_name("fakes")

# -- an engine's answer to a per-game option -----------------------------------------------------


def test_an_engines_long_refusal_of_its_value_keeps_the_record_readable(tmp_path: Path) -> None:
    """An engine answers each ``setoption`` of its tuned option with an error line just under
    the client's cap of a mebibyte: the forfeit quoted all of it in the game's record, which
    then passed the record's cap, and ``enginesrv results`` refused the whole run."""
    engine = f"name=tf:cmd:{sys.executable} {FAKES / 'tune_engine.py'} longerror Knob 500"
    tune = tune_config(2, "Knob=500:0:1000:20", player=engine)
    out = tmp_path / "run"
    play(prepared(tune, out, concurrency=1, max_plies=8, st=0.05), out)
    assert [reason for _, _, _, reason in rows(out).values()] == ["crash", "crash"]
    probe = probes(out)[1]
    for game_id, side, value in ((1, "tf+", probe["plus"][0]), (2, "tf-", probe["minus"][0])):
        text = (out / "games" / f"game-{game_id:05d}.txt").read_text()
        assert len(text.encode()) < files.MAX_HEADER_BYTES, game_id
        comment = next(line for line in text.splitlines() if line.startswith("# p1 "))
        said = f"setoption name Knob value {value:.0f} was refused: error 101 bad-arguments: "
        assert comment == f"# p1 {side}: " + (said + "y" * 1000)[:997] + "..."
    report = enginesrv("results", str(out))
    assert report.returncode == 0, report.stderr


# -- an engine that does not take its parameters -------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "param", "refusal"),
    [
        ("ignore", "Knobb=500:0:1000", "unknown option Knobb"),
        ("error", "Knob=500:0:1000", "Knob does not take 500"),
    ],
)
def test_an_engine_that_refuses_its_start_values_stops_the_run_before_any_game(
    tmp_path: Path, mode: str, param: str, refusal: str
) -> None:
    """A parameter the engine does not know (a typo) made every game a forfeit of the side
    that moved first, every pair a draw (result +0), and the run ended with its start values
    and not a word of why."""
    command = f"{sys.executable} {FAKES / 'tune_engine.py'} {mode} Knob 500"
    tune = tune_config(4, param, player=f"name=tf:cmd:{command}")
    out = tmp_path / "run"
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, concurrency=1, max_plies=8, st=0.05), out)
    name = param.split("=", maxsplit=1)[0]
    assert str(caught.value) == (
        f"player 'name=tf+:cmd:{command}' cannot play: setoption name {name} value 500 was "
        f"refused: error 101 bad-arguments: setoption: {refusal}"
    )
    assert not (out / "results.sqlite").exists()


def _processes_naming(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in line:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize(
    ("mode", "what"),
    [("mute", "no answer to setoption within 1 s"), ("exit", "it exited(, exit code 3)?")],
)
def test_an_engine_that_never_answers_or_leaves_at_its_option_stops_the_run_and_ends(
    tmp_path: Path, mode: str, what: str
) -> None:
    """Its games would each have been lost at their start, and its reason read ``uginewgame:
    ...`` though the engine was never sent one; nothing it started is left running."""
    token = f"tune-attack-{mode}-{os.getpid()}"
    command = f"{sys.executable} {FAKES / 'tune_engine.py'} {mode} Knob {token}"
    tune = tune_config(4, "Knob=500:0:1000", player=f"name=tf:cmd:{command}")
    out = tmp_path / "run"
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, concurrency=1, ready_timeout=1.0), out)
    said = f"player 'name=tf+:cmd:{command}' cannot play: setoption name Knob value 500: "
    assert re.fullmatch(re.escape(f"{said}{command}: ") + what, str(caught.value)), caught.value
    assert _processes_naming(token) == []
    assert not (out / "results.sqlite").exists()

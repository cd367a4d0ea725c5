"""Tuning runs attacked: a results directory that someone else wrote (links and FIFOs planted
where ``tune-report`` writes its picture, a store that is not a regular file, a stored event
whose players are not the run's, an iteration whose opening is gone), text that a terminal or
an SVG cannot take (a command line's lone surrogate, a bidirectional override), hostile
``--param`` text of a mebibyte, and an engine whose refusal of a per-game option is a
mebibyte long. Each is refused in one line naming the input, or handled, never a traceback;
nothing outside the directory is written."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import games
from enginesrv.event.config import EventError
from enginesrv.event.results import files
from tests.enginesrv.test_event_files import run_main
from tests.enginesrv.test_tournament import ROOT
from tests.enginesrv.tune_support import (
    Spy,
    SpyVenue,
    play,
    prepared,
    probes,
    rows,
    stored_run,
    tune_config,
)

FAKES = Path(__file__).with_name("fakes")


def enginesrv(*args: str) -> subprocess.CompletedProcess[str]:
    """``enginesrv ARGS`` in a process of its own (a real terminal's encoding), bounded."""
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", *args],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=30,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip


def _two_steps(out: Path, player: str = "bot:noisy") -> None:
    stored_run(out, tune_config(6, player=player), [(100.0,), (120.0,)])


# -- the picture ---------------------------------------------------------------------------------


def test_a_link_planted_as_the_picture_is_replaced_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory passed around may hold ``trajectory.svg`` as a symbolic link, or a hard
    link, to a file of the reader's: ``tune-report DIR`` wrote the picture through it."""
    for kind in ("symbolic", "hard"):
        out = tmp_path / kind
        _two_steps(out)
        victim = tmp_path / f"victim-{kind}"
        victim.write_text("the reader's own file\n")
        if kind == "symbolic":
            (out / "trajectory.svg").symlink_to(victim)
        else:
            os.link(victim, out / "trajectory.svg")
        code, text, err = run_main(capsys, "tune-report", str(out))
        assert (code, err) == (0, ""), err
        assert text.endswith(f"picture {out / 'trajectory.svg'}\n")
        assert victim.read_text() == "the reader's own file\n"
        picture = out / "trajectory.svg"
        assert picture.is_file()
        assert not picture.is_symlink()
        assert picture.stat().st_nlink == 1
        assert ET.parse(picture).getroot().tag == "{http://www.w3.org/2000/svg}svg"
        assert sorted(p.name for p in out.iterdir()) == ["results.sqlite", "trajectory.svg"]


def test_a_fifo_planted_as_the_picture_is_replaced_not_written_into(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no reader, writing into a FIFO waits for ever; with one (here, opened first so
    that the test cannot hang), whoever reads it gets the picture."""
    out = tmp_path / "run"
    _two_steps(out)
    fifo = out / "trajectory.svg"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        code, _, err = run_main(capsys, "tune-report", str(out))
        assert (code, err) == (0, "")
        assert os.read(reader, 1) == b""  # nothing was written into it
    finally:
        os.close(reader)
    assert fifo.is_file()


def test_a_store_that_is_not_a_regular_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tune-report`` checks the store as ``results`` does: a FIFO, a link or a store past
    its cap is refused in one line (it ended in a traceback)."""
    fifo_dir, link_dir, big_dir = tmp_path / "fifo", tmp_path / "link", tmp_path / "big"
    for each in (fifo_dir, link_dir):
        each.mkdir()
    os.mkfifo(fifo_dir / "results.sqlite")
    _two_steps(tmp_path / "real")
    (link_dir / "results.sqlite").symlink_to(tmp_path / "real" / "results.sqlite")
    _two_steps(big_dir)
    with open(big_dir / "results.sqlite", "r+b") as store:
        store.truncate(files.MAX_STORE_BYTES + 1)
    for directory, what in (
        (fifo_dir, "is a FIFO, not a regular file"),
        (link_dir, "is a symbolic link, not a regular file"),
        (big_dir, f"is larger than {files.MAX_STORE_BYTES:,} bytes"),
    ):
        code, text, err = run_main(capsys, "tune-report", str(directory))
        assert (code, text) == (2, "")
        assert err == (
            f"enginesrv tune-report: error: {directory / 'results.sqlite'} {what}: it is not read\n"
        )


# -- a stored run whose parts disagree -----------------------------------------------------------


def test_a_stored_event_whose_players_are_not_the_runs_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    """The run's configuration says ``bot:noisy`` (what ``tune-report`` shows), the stored
    event of its games a command: ``tune --resume`` ran the command."""
    marker = tmp_path / "ran"
    for change in ("players", "games"):
        out = tmp_path / change
        _two_steps(out)
        with sqlite3.connect(out / "results.sqlite") as db:
            config = json.loads(
                db.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0]
            )
            if change == "players":
                config["players"] = [f"name=noisy{s}:cmd:touch {marker}" for s in "+-"]
            else:
                config["games"] = 8
            db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
        db.close()
        store = out / "results.sqlite"
        expected = (
            f"{store}: the tuning run is damaged: the players or the number of its games are "
            "not those of its configuration ('bot:noisy', 6 games)\n"
        )
        resumed = enginesrv("tune", "--resume", "--out", str(out))
        assert (resumed.returncode, resumed.stdout) == (2, "")
        assert resumed.stderr == f"enginesrv tune: error: {expected}"
        report = enginesrv("tune-report", str(out))
        assert (report.returncode, report.stderr) == (
            2,
            f"enginesrv tune-report: error: {expected}",
        )
        assert not marker.exists()


def test_an_iteration_whose_opening_left_the_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """An iteration's second game is played from its first's opening, stored by number: an
    openings file shortened since (or a crafted probe) made the resume end in an
    ``IndexError`` traceback."""
    start = games.load("yohoho").start_position
    openings = tmp_path / "openings.txt"
    openings.write_text(f"fen {start}\n" * 3)
    tune = tune_config(10)
    out = tmp_path / "run"
    spy = Spy(stop_after=5)  # one game at a time: iteration 3 (opening 3) has one game stored
    with pytest.raises(EventError, match=r"^stopped after game 5$"):
        play(prepared(tune, out, concurrency=1, openings=str(openings)), out, SpyVenue(spy))
    assert (sorted(rows(out)), probes(out)[3]["opening"]) == ([1, 2, 3, 4, 5], 2)
    openings.write_text(f"fen {start}\n")
    before = (out / "results.sqlite").read_bytes()
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, resume=True, concurrency=1, openings=str(openings)), out)
    assert str(caught.value) == (
        f"{out / 'results.sqlite'}: iteration 3 was played from opening 3, and the openings "
        "file now holds 1: its other game cannot be played from the same opening (was the "
        "file changed?)"
    )
    assert (out / "results.sqlite").read_bytes() == before


# -- text a terminal or a picture cannot take ----------------------------------------------------


def test_a_player_of_a_lone_surrogate_or_an_override_is_shown_escaped(tmp_path: Path) -> None:
    """A command line's argument that is not UTF-8 is a lone surrogate (``\\udcff``) in
    Python: printing the paste line ended ``tune-report`` in a ``UnicodeEncodeError``
    traceback, and the picture could not be written; a right-to-left override reached the
    terminal as it was."""
    out = tmp_path / "run"
    _two_steps(out, player="name=eng:cmd:./engine \udcff \u202eevil \uffff")
    report = enginesrv("tune-report", str(out))
    assert (report.returncode, report.stderr) == (0, "")
    assert "player name=eng:options=Aim=120:cmd:./engine \\udcff \\u202eevil \uffff\n" in (
        report.stdout
    )
    title = ET.parse(out / "trajectory.svg").getroot()[1]
    assert title.text == "name=eng:cmd:./engine \\udcff \\u202eevil \\uffff: 2 of 3 iterations"
    as_json = enginesrv("tune-report", str(out), "--json")
    assert json.loads(as_json.stdout)["player"] == "name=eng:cmd:./engine \udcff \u202eevil \uffff"


def test_hostile_parameter_text_is_quoted_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A parameter of half a mebibyte, on the command line or in a file (a string of
    ``params`` or the key of a table): the error quoted all of it, twice."""
    big = "A" * 500_000
    head = 'game = "yohoho"\nplayer = "bot:noisy"\ngames = 4\n'
    files_ = {
        "number": f'{head}params = ["Aim={big}:0:9"]\n',
        "name": f'{head}params = ["{big}=1:0:9"]\n',
        "table": f"{head}[params.{big}]\nstart = 1\n",
        "table name": f"{head}[params.{big}]\nstart = 1\nmin = 0\nmax = 9\n",
    }
    for what, text in files_.items():
        path = tmp_path / f"{what}.toml"
        path.write_text(text)
        code, _, err = run_main(capsys, "tune", "--config", str(path))
        assert (code, err.count("\n")) == (2, 1), what
        assert len(err) < 300, (what, err[:300])
    code, _, err = run_main(capsys, "tune", "yohoho", "bot:noisy", "--games", "4", "--param", big)
    assert (code, err) == (
        2, f"enginesrv tune: error: parameter '{'A' * 77}'...: not NAME=START:MIN:MAX[:STEP]\n"
    )  # fmt: skip


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


# -- seeds ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["SecretSeed", "seed"])
def test_a_seed_is_no_parameter(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """A run that tuned ``SecretSeed`` gave each side of a Yin Yang game a secret of 1 to
    100 that follows from ``--seed`` (the arbiter draws one of 63 bits from the system for
    each game), and stored for audit the seeds the arbiter drew, which the bots never
    played with."""
    code, out, err = run_main(
        capsys, "tune", "yinyang", "bot:alphabeta", "--param", f"{name}=5:1:100", "--games", "2"
    )
    assert (code, out) == (2, "")
    assert err == (
        f"enginesrv tune: error: parameter {name!r} is a seed, which the arbiter draws for each "
        "game (a secret one from the system's randomness): it has no best value\n"
    )


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

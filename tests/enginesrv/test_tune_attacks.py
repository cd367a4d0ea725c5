"""Tuning runs attacked: a results directory that someone else wrote (links and FIFOs planted
where ``tune-report`` writes its picture, a store that is not a regular file, a stored event
whose players are not the run's, an iteration whose opening is gone), text that a terminal or
an SVG cannot take (a command line's lone surrogate, a bidirectional override), hostile
``--param`` text of a mebibyte, a seed as a parameter, and links planted where a resumed run
writes (its lock, a record's temporary file, ``games/``). Each is refused in one line naming
the input, or handled, never a traceback; nothing outside the directory is written. (The
engine's own attacks: ``test_tune_attack_engines.py``.)"""

from __future__ import annotations

import json
import os
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


def test_an_iteration_whose_opening_was_replaced_in_the_file_is_refused(tmp_path: Path) -> None:
    """The file keeps its length but not its lines: the second game of iteration 3 would be
    played from another opening than its first, and the pair would measure nothing."""
    lines = ["moves i1-c7 i9-j8", "moves e1-g3 c9-d8", "moves i3-j2 c9-d8"]
    openings = tmp_path / "openings.txt"
    openings.write_text("\n".join(lines) + "\n")
    tune = tune_config(10)
    out = tmp_path / "run"
    spy = Spy(stop_after=5)
    with pytest.raises(EventError, match=r"^stopped after game 5$"):
        play(prepared(tune, out, concurrency=1, openings=str(openings)), out, SpyVenue(spy))
    assert probes(out)[3]["opening"] == 2
    before = (out / "results.sqlite").read_bytes()
    openings.write_text("\n".join([*lines[:2], "moves e1-g3 i9-j8"]) + "\n")
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, resume=True, concurrency=1, openings=str(openings)), out)
    assert str(caught.value) == (
        f"{out / 'results.sqlite'}: iteration 3 was played from opening 3, and the openings "
        "file now holds another opening there: its other game cannot be played from the same "
        "opening (was the file changed?)"
    )
    assert (out / "results.sqlite").read_bytes() == before
    # the first two lines changed instead (their iterations are complete): the run goes on
    openings.write_text("\n".join(["moves i3-j2 i9-j8", "moves i3-j2 c9-d8", lines[2]]) + "\n")
    state, _ = play(prepared(tune, out, resume=True, concurrency=1, openings=str(openings)), out)
    assert len(state.steps) == 5


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


# -- links planted where a resumed run writes ----------------------------------------------------


def _victim(tmp_path: Path, name: str) -> Path:
    victim = tmp_path / name
    victim.write_text("the user's own file\n")
    return victim


@pytest.mark.parametrize("kind", ["symbolic", "hard"])
def test_a_link_planted_as_the_lock_is_refused_and_its_target_kept(
    tmp_path: Path, kind: str
) -> None:
    """A run holds its directory with ``DIR/lock``, which it truncates and writes its PID
    into: a link planted there (a run of ``bot:noisy`` whose players one read and trusted)
    truncated the file it named."""
    out = tmp_path / "run"
    tune = tune_config(4)
    stored_run(out, tune, [])
    victim = _victim(tmp_path, "victim")
    if kind == "symbolic":
        (out / "lock").symlink_to(victim)
    else:
        os.link(victim, out / "lock")
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, resume=True), out)
    assert victim.read_text() == "the user's own file\n"
    assert str(caught.value) == (
        f"{out / 'lock'}: cannot open the lock file: Too many levels of symbolic links"
        if kind == "symbolic"
        else f"{out / 'lock'} is not a lock file (a regular file of one link): it is left as it is"
    )
    assert rows(out) == {}


def test_a_link_planted_as_a_records_temporary_file_is_removed_not_followed(
    tmp_path: Path,
) -> None:
    """A record is written under ``NAME.tmp`` and renamed: a link planted as the temporary
    file of the next game's record had the record written over the file it named, and left
    the link as the record."""
    out = tmp_path / "run"
    tune = tune_config(2)
    stored_run(out, tune, [])
    (out / "games").mkdir()
    victim = _victim(tmp_path, "victim")
    (out / "games" / "game-00001.txt.tmp").symlink_to(victim)
    play(prepared(tune, out, resume=True, concurrency=1), out)
    assert victim.read_text() == "the user's own file\n"
    record = out / "games" / "game-00001.txt"
    assert not record.is_symlink()
    assert record.read_text().startswith("# Game: yohoho\n")
    assert sorted(p.name for p in (out / "games").iterdir()) == ["game-00001.txt", "game-00002.txt"]


def test_a_games_directory_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """``games/`` planted as a link to another directory: the records were written there."""
    out = tmp_path / "run"
    tune = tune_config(2)
    stored_run(out, tune, [])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "games").symlink_to(elsewhere)
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, resume=True, concurrency=1), out)
    assert str(caught.value) == (
        f"{out / 'games'} is a symbolic link: the records are kept in {out}"
    )
    assert list(elsewhere.iterdir()) == []
    assert rows(out) == {}

"""``enginesrv selfplay`` against damaged and hostile run folders: crafted settings and parts,
interrupted saves, paths that name no file. Each run is ``yoxii --games 3 --depth 1`` (about a
second)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from enginesrv.cli import main
from enginesrv.selfplay import store
from tests.enginesrv.test_event_files import run_main

ARGS = ("yoxii", "--games", "3", "--depth", "1", "--workers", "1")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file a whole run of ARGS writes (made once for the module)."""
    out = tmp_path_factory.mktemp("reference") / "reference.npz"
    assert main(["selfplay", *ARGS, "--out", str(out)]) == 0
    return out


def config_of(reference: Path) -> str:
    """The config.json text a run of ARGS writes (from its finished file)."""
    with np.load(reference, allow_pickle=False) as data:
        return str(data["config"])


def one_line_refusal(capsys: pytest.CaptureFixture[str], out: Path) -> str:
    code, stdout, err = run_main(capsys, "selfplay", *ARGS, "--out", str(out))
    lines = [line for line in err.splitlines() if not line.startswith("selfplay: ")]
    assert (code, stdout) == (2, ""), err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("text", ["[1, 2]", '"yoxii"', "3", "null"])
def test_a_config_json_that_is_not_an_object_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    """OUT.parts/config.json holding JSON that is not an object: one line naming it, not a
    traceback."""
    out = tmp_path / "a.npz"
    folder = tmp_path / "a.npz.parts"
    folder.mkdir()
    (folder / "config.json").write_text(text)
    line = one_line_refusal(capsys, out)
    assert "config.json" in line


@pytest.mark.parametrize("data", [b"not json", b"\xff\xfe\x00"])
def test_a_damaged_config_json_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    """A damaged config.json is refused, but the message is the JSON decoder's alone
    (``Expecting value: line 1 column 1 (char 0)``): it must name the file."""
    out = tmp_path / "a.npz"
    folder = tmp_path / "a.npz.parts"
    folder.mkdir()
    (folder / "config.json").write_bytes(data)
    assert "config.json" in one_line_refusal(capsys, out)


def _garbage(path: Path, reference: Path) -> None:
    path.write_bytes(b"garbage\n")


def _truncated(path: Path, reference: Path) -> None:
    path.write_bytes(reference.read_bytes()[:3000])


def _missing_keys(path: Path, reference: Path) -> None:
    np.savez(path, action=np.zeros(3, dtype=np.int32))


def _other_game(path: Path, reference: Path) -> None:
    np.savez(path, **store.GameRows(0).arrays(0, 0, (15, 11, 11)))  # a yinsh part, no rows
    with np.load(path) as part:
        arrays = {key: part[key] for key in part.files}
    arrays["observation"] = np.zeros((1, 15, 11, 11), dtype=np.float32)
    for key in ("action", "player", "ply", "result", "game", "moves_count"):
        arrays[key] = np.zeros(1, dtype=arrays[key].dtype)
    np.savez(path, **arrays)


DAMAGE = {
    "garbage": _garbage,
    "truncated": _truncated,
    "missing_keys": _missing_keys,
    "other_game": _other_game,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_part_is_played_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reference: Path, damage: str
) -> None:
    """A part file that cannot be read as a game of this run (garbage, cut short, arrays
    missing, another game's shapes) is removed and its game played again: the file is
    whole, and the run says so."""
    out = tmp_path / "a.npz"
    folder = tmp_path / "a.npz.parts"
    folder.mkdir()
    (folder / "config.json").write_text(config_of(reference))
    DAMAGE[damage](folder / "game-000000.npz", reference)
    code, _, err = run_main(capsys, "selfplay", *ARGS, "--out", str(out))
    assert code == 0, err
    assert "selfplay: 1 damaged part files, played again" in err.splitlines()
    with np.load(out, allow_pickle=False) as data:
        assert data["game_number"].tolist() == [0, 1, 2]
    assert not folder.exists()


def test_a_part_of_another_run_is_not_joined_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reference: Path
) -> None:
    """A well-formed part of another run (its game 1, put in the place of game 0) is no
    part of game 0: it is played again, and the file holds each game once."""
    config = config_of(reference)
    with np.load(reference, allow_pickle=False) as data:
        rows = data["game"] == 1
        moves = np.repeat(rows, data["moves_count"])
        trail = slice(int(data["trail_offset"][1]), int(data["trail_offset"][2]))
        part: dict[str, Any] = {
            **{key: data[key][rows] for key in store.PER_ROW},
            **{key: data[key][moves] for key in store.PER_MOVE},
            **{key: data[key][1:2] for key in store.PER_GAME},
            "trail_action": data["trail_action"][trail],
        }
    out = tmp_path / "a.npz"
    folder = tmp_path / "a.npz.parts"
    folder.mkdir()
    (folder / "config.json").write_text(config)
    np.savez(folder / "game-000000.npz", **part)
    code, _, err = run_main(capsys, "selfplay", *ARGS, "--out", str(out))
    assert code == 0, err
    assert "selfplay: 1 damaged part files, played again" in err.splitlines()
    with np.load(out, allow_pickle=False) as joined:
        assert joined["game_number"].tolist() == [0, 1, 2]


def test_a_run_interrupted_while_saving_a_part_goes_on_to_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a part is being written takes the temporary file away; one a kill -9
    left behind is removed by the next run, which finishes the file with status 0 (it
    used to fail with "OUT: Directory not empty", and every run after it again)."""
    calls: list[int] = []
    savez = np.savez

    def savez_interrupted(file: Any, **arrays: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            file.write(b"PK\x03\x04")  # a zip begun
            raise KeyboardInterrupt
        savez(file, **arrays)

    monkeypatch.setattr(np, "savez", savez_interrupted)
    out = tmp_path / "a.npz"
    code, _, err = run_main(capsys, "selfplay", *ARGS, "--out", str(out))
    assert code == 130, err
    folder = tmp_path / "a.npz.parts"
    assert sorted(folder.glob(".game-*.npz")) == []  # the interrupted save took its file away
    # what a save killed with -9 leaves, written by another process
    (folder / ".game-000001.1.npz").write_bytes(b"PK\x03\x04")
    monkeypatch.setattr(np, "savez", savez)
    code, _, err = run_main(capsys, "selfplay", *ARGS, "--out", str(out))
    assert code == 0, err
    assert not folder.exists()
    with np.load(out, allow_pickle=False) as data:
        assert data["game_number"].tolist() == [0, 1, 2]
    assert json.loads(str(np.load(out)["config"]))["games"] == 3


@pytest.mark.parametrize("out", [".", "", "x" * 252 + ".npz"])
def test_an_out_path_without_a_name_or_too_long_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    """``--out .`` (or ``""``): a path that names no file; a name longer than the file
    system takes (ENAMETOOLONG): each one line, status 2, no traceback."""
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run_main(capsys, "selfplay", *ARGS, "--out", out)
    assert (code, stdout) == (2, ""), err
    assert err.count("\n") == 1, err


def test_a_fifo_for_config_json_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO put in the place of config.json would hold a plain read for ever: it is
    refused at once, in one line naming it."""
    out = tmp_path / "a.npz"
    folder = tmp_path / "a.npz.parts"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    line = one_line_refusal(capsys, out)
    assert "config.json: is a FIFO, not a regular file" in line


def test_a_second_run_on_the_same_file_is_refused_while_the_first_holds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a.npz"
    first = store.Parts(out)
    first.begin({"game": "yoxii", "games": 3})
    try:
        assert "another run writes it now" in one_line_refusal(capsys, out)
    finally:
        first.close()
    assert "holds the games of other settings" in one_line_refusal(capsys, out)


def test_an_out_that_is_a_folder_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.npz").mkdir()
    assert "a folder; name a file to write" in one_line_refusal(capsys, tmp_path / "a.npz")
    assert not (tmp_path / "a.npz.parts").exists()


def children_of(pid: int) -> set[int]:
    """PIDs of the child processes of ``pid`` (from /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    if file.read().rsplit(")", 1)[1].split()[1] == str(pid):
                        out.add(int(entry))
            except OSError:
                pass
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_workers_end_with_a_coordinator_killed_with_9(tmp_path: Path) -> None:
    """kill -9 of ``enginesrv selfplay`` while its workers play: no worker outlives it, and
    the games saved are kept for the next run."""
    out = tmp_path / "k.npz"
    command = [sys.executable, "-m", "enginesrv.cli", "selfplay", "yinsh", "--games", "400",
               "--depth", "1", "--workers", "2", "--out", str(out)]  # fmt: skip
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        folder = tmp_path / "k.npz.parts"
        deadline = time.monotonic() + 60
        while not list(folder.glob("game-*.npz")) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = children_of(run.pid)
        assert len(workers) >= 2, workers  # the two workers (and the resource tracker)
    finally:
        run.kill()
        run.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if alive(pid)]
    assert list(folder.glob("game-*.npz"))

"""``--isolate``: each ``cmd:`` engine runs under bubblewrap with a private /tmp, its own
/proc and no view of the event's directory, seeing of the host's /tmp only what its command
names (an engine in a virtual environment under /tmp starts); an engine that cannot start
is told why in one line; without bubblewrap it is a clear error. The other temporary
directories, the network and the default containment: test_contain.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from enginesrv.event.play.contain import sandbox_command, temporary_dirs
from enginesrv.event.play.engine_player import START_ERROR_CHARS, start_error
from tests.enginesrv.test_tournament import ROOT, cli, stored

FAKE = ROOT / "tests" / "enginesrv" / "fakes" / "fake_engine.py"


def _snoops(out: Path) -> list[dict[str, int]]:
    text = (out / "logs" / "snoop.stderr").read_text()
    return [
        {key: int(value) for key, value in re.findall(r"(\w+)=(-?\d+)", line)}
        for line in text.splitlines()
        if line.startswith("snoop ")
    ]


def _event_dir(tmp_path: Path) -> Path:
    # outside /tmp (which the sandbox replaces anyway), so that hiding it is what is tested
    base = Path.home() / ".cache" / "enginesrv-tests"
    base.mkdir(parents=True, exist_ok=True)
    out = base / tmp_path.name
    shutil.rmtree(out, ignore_errors=True)
    return out


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    """A directory of the host's /tmp itself (whatever TMPDIR says): what is tested is what
    an isolated engine sees of that /tmp."""
    with tempfile.TemporaryDirectory(prefix="enginesrv-isolate-", dir="/tmp") as name:
        yield Path(name)


@pytest.mark.usefixtures("sandbox")
def test_an_isolated_engine_sees_no_event_files_no_processes_and_its_own_tmp(
    tmp_path: Path,
) -> None:
    out = _event_dir(tmp_path)
    # a file of the host's /tmp, named to the engine by its name alone (a path on an engine's
    # command line is bound into its sandbox: that is how it finds its own files)
    marker = Path("/tmp") / f"enginesrv-test-marker-{os.getpid()}"
    marker.write_text("secret")
    try:
        for isolate in (False, True):
            shutil.rmtree(out, ignore_errors=True)
            snoop = f"name=snoop:cmd:{sys.executable} {FAKE} snoop {out} {marker.name}"
            proc = cli(
                "match", "yoxii", snoop,
                "bot:random", "--depth", "1", "--games", "2", "--out", str(out),
                *(["--isolate"] if isolate else []),
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            seen = _snoops(out)
            assert seen
            if isolate:
                assert all(s["dir"] <= 0 for s in seen), seen  # an empty directory at most
                assert all(s["procs"] <= 4 for s in seen), seen  # bwrap, its init, the engine
                assert all(s["marker"] == 0 for s in seen), seen
            else:  # the control: without --isolate all of it is in view
                assert any(s["dir"] > 0 for s in seen), seen
                assert any(s["procs"] > 4 for s in seen), seen
                assert all(s["marker"] == 1 for s in seen), seen
    finally:
        shutil.rmtree(out, ignore_errors=True)
        marker.unlink(missing_ok=True)


def test_isolate_without_bubblewrap_is_a_clear_error(tmp_path: Path) -> None:
    proc = cli(
        "match", "yoxii", "bot:random", "bot:greedy", "--depth", "1", "--isolate",
        "--out", str(tmp_path / "event"),
        env={**os.environ, "PATH": str(tmp_path)},  # no bwrap to be found
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "--isolate needs bubblewrap" in proc.stderr


@pytest.mark.usefixtures("sandbox")
def test_an_isolated_engine_in_a_virtual_environment_under_tmp_starts_and_plays(
    tmp_path: Path, host_tmp: Path
) -> None:
    # Python finds its environment from the path it is run by (venv/bin/python, a link to
    # the base interpreter), and the engine's script is named by a link under /tmp too: all
    # of it must be seen in the sandbox where the command names it, and the rest of /tmp not
    venv = host_tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    script = host_tmp / "engine.py"
    script.symlink_to(FAKE)
    out = _event_dir(tmp_path)
    marker = Path("/tmp") / f"enginesrv-test-marker-{os.getpid()}"
    marker.write_text("secret")
    try:
        snoop = f"name=snoop:cmd:{venv}/bin/python {script} snoop {out} {marker.name}"
        proc = cli(
            "match", "yoxii", snoop, "bot:random", "--depth", "1", "--games", "2",
            "--out", str(out), "--isolate",
            env={**os.environ, "PYTHONPATH": str(ROOT)},  # the fake engine imports games
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "crashed" not in proc.stdout, proc.stdout
        games = stored(out)
        assert len(games) == 2, games
        assert all(plies > 0 for *_, plies in games), games
        seen = _snoops(out)
        assert seen
        assert all(s["dir"] <= 0 and s["marker"] == 0 for s in seen), seen
    finally:
        shutil.rmtree(out, ignore_errors=True)
        marker.unlink(missing_ok=True)


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize(
    ("name", "why"),
    [("missing/engine", "No such file or directory"), ("not-executable", "Permission denied")],
)
def test_an_isolated_engine_that_cannot_start_is_told_why_in_one_line(
    tmp_path: Path, host_tmp: Path, name: str, why: str
) -> None:
    engine = host_tmp / name
    if name == "not-executable":
        engine.write_text("#!/bin/sh\n")
    out = tmp_path / "event"
    proc = cli(
        "match", "yoxii", f"name=broken:cmd:{engine}", "bot:random", "--depth", "1",
        "--games", "2", "--out", str(out), "--isolate",
        env={**os.environ, "LC_ALL": "C"},  # bwrap's reason, as the test expects it
    )  # fmt: skip
    # started once under the sandbox before the first game, it stops the event
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"enginesrv match: error: player 'name=broken:cmd:{engine}' "), line
    assert line.endswith(f"bwrap: execvp {engine}: {why}"), line
    assert "--ro-bind" not in line, line  # the reason, not the sandbox's command line
    assert not out.exists()


def test_a_wrappers_error_is_quoted_on_one_line_escaped_and_capped() -> None:
    wrappers = ("reaper", "/usr/bin/bwrap")
    said = b"bwrap: execvp /tmp/a\x1b[2J\tb\xc2\x9b\xff: No such file\nmore\n"
    expected = "bwrap: execvp /tmp/a\\x1b[2J\\x09b\\x9b\\xff: No such file"
    assert start_error(said, wrappers) == expected
    quoted = start_error(b"bwrap: " + b"x" * 10_000, wrappers)
    assert quoted is not None
    assert len(quoted) == START_ERROR_CHARS
    assert quoted.endswith("...")
    # the reaper's words name the program and the reason alone
    said = b"reaper: cannot start ./engine: Permission denied\n"
    assert start_error(said, wrappers) == "./engine: Permission denied"
    # the engine's own words (it started), or nothing said: no wrapper's error
    said = b"Traceback (most recent call last):\nbwrap: not from bwrap\n"
    assert start_error(said, wrappers) is None
    assert start_error(b"", wrappers) is None
    assert start_error(b"bwrap: not ours to quote\n", ("reaper",)) is None


def test_isolation_binds_what_the_command_names_and_no_more_of_tmp(
    host_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = host_tmp / "envs" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "python").symlink_to("/bin/sh")  # a program outside /tmp, as a base is
    (host_tmp / "engine.py").symlink_to(FAKE)
    (host_tmp / "weights.bin").write_bytes(b"")
    (host_tmp / "other").write_text("not named")
    private = venv / "private"  # the arbiter's temporary directory, inside a bound one
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.chdir("/")  # a working directory outside /tmp: nothing to bind for it
    wrapper = sandbox_command(
        None,
        (str(venv / "bin" / "python"), str(host_tmp / "engine.py"),
         f"--weights={host_tmp / 'weights.bin'}", "-v", "other"),
    )  # fmt: skip
    binds = {wrapper[i + 1] for i, word in enumerate(wrapper) if word == "--ro-bind"}
    named = {str(venv), str(host_tmp / "engine.py"), str(host_tmp / "weights.bin")}
    # the script as resolved too, when this checkout itself lies in a hidden temporary
    # directory (/tmp, /var/tmp...)
    hidden = temporary_dirs()
    resolved = (
        {str(FAKE.resolve())} if any(FAKE.resolve().is_relative_to(d) for d in hidden) else set()
    )
    assert binds - {"/"} == named | resolved
    assert wrapper[wrapper.index("--tmpfs", wrapper.index(str(venv))) + 1] == str(private)

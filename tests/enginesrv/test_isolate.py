"""``--isolate``: each ``cmd:`` engine runs under bubblewrap with a private /tmp, its own
/proc and no view of the event's directory; without bubblewrap it is a clear error."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.enginesrv.test_tournament import ROOT, cli

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


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
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

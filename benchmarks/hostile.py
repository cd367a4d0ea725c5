"""Arbiter targets against hostile engines: every wait ends within its cap plus 1 s, and no
process an engine started is left after the match.

Usage: python benchmarks/hostile.py [--move-timeout 2] [--ready-timeout 1]
                                    [--startup-timeout 1] [--runs 3]

Each case runs ``enginesrv match yoxii`` as a user would, a scripted engine
(``tests/enginesrv/fakes/fake_engine.py``, as p1) against ``bot:random``, one game, and
measures the wait: the game's time as the arbiter stored it, less that of the same match
against a well-behaved engine (the fastest of ``--runs``; both stop after two plies), or where
the engine fails before the game begins (the handshake), the same difference of the whole
command's time. That is how long the arbiter waited on the hostile engine before it gave up;
closing it afterwards (``quit``, a grace, then the kill) is shown besides:

* ``nobest``: answers ``isready`` but never ``bestmove``, no clock (``--depth 1``): forfeited
  with ``stall`` within ``--move-timeout`` + 1 s;
* ``silent``: never answers ``ugi``: ``stall`` within ``--startup-timeout`` + 1 s;
* ``noready``: no ``readyok`` after ``uginewgame``: ``stall`` within ``--ready-timeout`` + 1 s;
* ``hang``: silent after ``go`` under ``--st 0.2``: ``time-forfeit`` within 0.2 s + 1 s;
* ``fork``: starts a child that sleeps for a minute, then exits without answering: ``crash``
  at once, and the child is gone when the match command returns.

After every case it also looks for any process still running in the case's own directory
(each match runs in one; what it starts inherits it): the target is none. Exit status 1 when
a target is missed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "enginesrv" / "fakes" / "fake_engine.py"
SLACK_S = 1.0


def leftovers(directory: Path) -> list[int]:
    """PIDs of live processes working in ``directory`` (a case's: the match runs there, and
    whatever it starts inherits it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if (cwd == directory or directory in cwd.parents) and state != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@dataclass(frozen=True)
class Run:
    """One match: the command's wall time, the game's (from its first request to its end, as
    the arbiter stored it; 0 when the game never began), the record's reason, the process."""

    wall: float
    game_wall: float
    reason: str
    proc: subprocess.CompletedProcess[str]


def match(mode: str, flags: list[str], case: Path) -> Run:
    """Run one match of the fake engine in ``mode`` (as p1) against ``bot:random``."""
    pidfile = case / "child.pid"
    fake_args = [str(pidfile)] if mode == "fork" else []
    engine = shlex.join([sys.executable, str(FAKE), mode, *fake_args])
    event = case / "event"
    command = [
        sys.executable, "-m", "enginesrv.cli", "match", "yoxii", f"cmd:{engine}", "bot:random",
        "--games", "1", "--max-plies", "2", "--concurrency", "1", "--out", str(event), *flags,
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=case
    )
    wall = time.monotonic() - started
    record = next((event / "games").glob("game-*.txt"), None)
    text = record.read_text(encoding="utf-8") if record else ""
    reason = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                   if line.startswith("# Reason:")), "none")  # fmt: skip
    game_wall = 0.0
    if (event / "results.sqlite").exists():
        db = sqlite3.connect(event / "results.sqlite")
        try:
            row = db.execute("SELECT wall FROM games").fetchone()
        finally:
            db.close()
        game_wall = float(row[0]) if row else 0.0
    return Run(wall, game_wall, reason, proc)


def run_case(
    mode: str, flags: list[str], cap: float, want: str, *, work: Path, baseline: Run
) -> bool:
    case = work / mode
    case.mkdir()
    run = match(mode, flags, case)
    left = leftovers(case)
    pidfile = case / "child.pid"
    child_left = mode == "fork" and pidfile.exists() and alive(int(pidfile.read_text() or "0"))
    if run.game_wall > 0:  # the game began: the arbiter timed the wait itself
        waited = max(0.0, run.game_wall - baseline.game_wall)
    else:  # it failed before the game (the handshake): the command's time tells
        waited = max(0.0, run.wall - baseline.wall)
    ok = run.proc.returncode == 0 and run.reason == want and waited <= cap + SLACK_S
    ok = ok and not left and not child_left
    print(
        f"{mode:8} {'PASS' if ok else 'FAIL'} | {run.reason} (want {want}) | waited "
        f"{waited:.2f} s for a cap of {cap:.1f} s (target: at most {cap + SLACK_S:.1f}); the "
        f"match took {run.wall - baseline.wall:+.2f} s over the baseline | processes left "
        f"{len(left) + int(child_left)}",
        flush=True,
    )
    if run.proc.returncode != 0:
        print(f"  exit {run.proc.returncode}: {run.proc.stderr.strip()[-500:]}", flush=True)
    for pid in left:
        os.kill(pid, 9)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--move-timeout", type=float, default=2.0)
    parser.add_argument("--ready-timeout", type=float, default=1.0)
    parser.add_argument("--startup-timeout", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3, help="runs of the baseline (the least)")
    args = parser.parse_args()
    timeouts = [
        "--move-timeout", str(args.move_timeout), "--ready-timeout", str(args.ready_timeout),
        "--startup-timeout", str(args.startup_timeout),
    ]  # fmt: skip
    cases = [
        ("nobest", ["--depth", "1"], args.move_timeout, "stall"),
        ("silent", ["--depth", "1"], args.startup_timeout, "stall"),
        ("noready", ["--depth", "1"], args.ready_timeout, "stall"),
        ("hang", ["--st", "0.2"], 0.2, "time-forfeit"),
        ("fork", ["--depth", "1"], 0.0, "crash"),
    ]
    ok = True
    with tempfile.TemporaryDirectory(prefix="hostile-bench-") as work:
        # what a match costs when nobody waits: start-up, handshake, two quick plies
        runs = []
        for number in range(args.runs):
            case = Path(work) / f"good{number}"
            case.mkdir()
            run = match("good", ["--depth", "1", *timeouts], case)
            if run.proc.returncode != 0 or run.reason != "max-plies":
                print(f"baseline failed: {run.reason}, {run.proc.stderr.strip()[-500:]}")
                return 1
            runs.append(run)
        baseline = min(runs, key=lambda r: r.wall)
        print(
            f"baseline (a well-behaved engine, 2 plies): the match {baseline.wall:.2f} s, "
            f"its game {baseline.game_wall:.2f} s",
            flush=True,
        )
        for mode, flags, cap, reason in cases:
            ok = (
                run_case(mode, [*flags, *timeouts], cap, reason, work=Path(work), baseline=baseline)
                and ok
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Killed workers lose no game and double none: the same event played again and again on a
loopback Dask cluster, a worker killed in each run.

Usage: python benchmarks/cluster_faults.py [--runs 10] [--games 24] [--kill-after 3]
       [--fault mid-event|preflight] [--json]

Each run starts ``python -m dask scheduler`` and two ``python -m dask worker --nthreads 1``
processes on loopback, each in a process group of its own, then ``enginesrv match yoxii
PLAYER bot:greedy --depth 3 --games N --cluster ...`` into a new folder. One worker's process
group then gets SIGKILL:

- ``--fault mid-event`` (the default): the workers run with ``--no-nanny`` (a killed worker
  stays dead), PLAYER is ``bot:alphabeta:Depth=3``, and the kill comes once the match has
  printed ``--kill-after`` game lines.
- ``--fault preflight``: the workers run with their nannies, and the kill takes a worker and
  its nanny together (nothing starts that worker again) during the preflight. PLAYER is
  ``enginesrv engine --game yoxii`` (alphabeta) as a ``cmd:`` engine, through a wrapper whose
  first start of the run holds until its worker is gone: the worker that starts it first is
  killed while its check waits on that start.

The run counts the games the match printed and stored: lost (scheduled, not stored), doubled
(printed twice; a stored game is one database row by its number), and different (stored, but
not as the same event played locally stores it: the bots are deterministic at a fixed depth),
and times the match. At the end of a run every process it started is killed.

Target: 0 lost, 0 doubled and 0 different games over all runs; every run's match ends with
exit status 0. The exit status is 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import distributed

ENV = dict(os.environ, DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
HOLD_FIRST = """\
import os, pathlib, sys, time
try:  # the first start of the run holds, until its worker is gone (killed)
    fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
except FileExistsError:
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
worker = os.getppid()
os.write(fd, f"{worker}\\n".encode())
os.close(fd)
deadline = time.monotonic() + 60
while os.getppid() == worker and time.monotonic() < deadline:
    time.sleep(0.05)
sys.exit(1)
"""
"""``python HOLD_FIRST MARK COMMAND...``: the engine COMMAND, but the first start (the one that
creates MARK, writing its worker's process id there) never answers."""


def player(fault: str, mark: Path) -> str:
    if fault == "mid-event":
        return "bot:alphabeta:Depth=3"
    script = mark.parent / "hold_first.py"
    script.write_text(HOLD_FIRST)
    return (
        f"name=alphabeta-cmd:cmd:{sys.executable} {script} {mark} -m enginesrv.cli engine "
        "--game yoxii"
    )


def match(out: Path, games: int, first: str, extra: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "enginesrv.cli", "match", "yoxii", first, "bot:greedy",
        "--depth", "3", "--games", str(games), "--out", str(out), *extra,
    ]  # fmt: skip


def rows(out: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return db.execute(
            "SELECT id, p1, p2, winner, reason, first_points, plies FROM games ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def kill_holder(mark: Path, nannies: list[subprocess.Popen[bytes]]) -> bool:
    """Once the held start has written ``mark`` (at most 60 s), SIGKILL the process group of
    the nanny of the worker that started it; whether it did."""
    deadline = time.monotonic() + 60
    while not (mark.exists() and mark.read_text().endswith("\n")):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    worker = int(mark.read_text())
    stat = Path(f"/proc/{worker}/stat").read_text()
    nanny = int(stat.rsplit(")", 1)[1].split()[1])  # the worker's parent
    for proc in nannies:
        if proc.pid == nanny:
            os.killpg(proc.pid, signal.SIGKILL)
            return True
    return False


def one_run(tmp: Path, games: int, kill_after: int, fault: str) -> dict[str, object]:
    started: list[subprocess.Popen[bytes]] = []

    def spawn(*args: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            list(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
            start_new_session=True,
        )  # fmt: skip
        started.append(proc)
        return proc

    scheduler_file = tmp / "scheduler.json"
    try:
        spawn(sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
              "--no-dashboard", "--scheduler-file", str(scheduler_file))  # fmt: skip
        deadline = time.monotonic() + 30
        while not scheduler_file.exists():
            if time.monotonic() > deadline:
                raise SystemExit("the scheduler did not start in 30 s")
            time.sleep(0.1)
        address = ""
        while not address:  # the file may be seen before it is written in full
            with contextlib.suppress(ValueError):
                address = json.loads(scheduler_file.read_text())["address"]
            if time.monotonic() > deadline:
                raise SystemExit("the scheduler did not start in 30 s")
        worker = (
            sys.executable, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file),
            "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
            *(["--no-nanny"] if fault == "mid-event" else []),
        )  # fmt: skip
        workers = [spawn(*worker) for _ in range(2)]
        # both in the cluster before the match starts: both are in its preflight
        # the ignore: distributed's Client.__init__ has no annotations
        with distributed.Client(  # type: ignore[no-untyped-call]
            address, timeout=30, set_as_default=False
        ) as client:
            client.wait_for_workers(2, timeout=60)
        out = tmp / "event"
        mark = tmp / "held"
        began = time.monotonic()
        event = subprocess.Popen(
            match(out, games, player(fault, mark), ["--cluster", address]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        )  # fmt: skip
        assert event.stdout is not None
        printed = []
        if fault == "preflight":
            killed = kill_holder(mark, workers)
        else:
            for _ in range(kill_after):
                line = event.stdout.readline()
                if not line:
                    break
                printed.append(line)
            os.killpg(workers[0].pid, signal.SIGKILL)
            killed = True
        rest, err = event.communicate(timeout=600)
        seconds = time.monotonic() - began
        printed += rest.splitlines()
        ids = [int(line.split()[1].split("/")[0]) for line in printed if line.startswith("game ")]
        stored = rows(out) if (out / "results.sqlite").exists() else []
        return {
            "killed": killed,
            "seconds": seconds,
            "status": event.returncode,
            "error": err.strip().splitlines()[-1] if event.returncode else "",
            "ids": ids,
            "rows": stored,
        }
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs (default 10)")
    parser.add_argument("--games", type=int, default=24, help="games per run (default 24)")
    parser.add_argument(
        "--kill-after", type=int, default=3, help="game lines before the kill (default 3)"
    )
    parser.add_argument(
        "--fault", choices=("mid-event", "preflight"), default="mid-event",
        help="kill a worker mid-event (no nanny; default), or a worker and its nanny during "
        "the preflight",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the totals as JSON too")
    args = parser.parse_args()
    totals = {"lost": 0, "doubled": 0, "different": 0, "failed_runs": 0, "not_killed": 0}
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="enginesrv-faults-") as tmp:
        local = Path(tmp) / "local"
        local.mkdir()
        held = local / "held"
        first = player(args.fault, held)
        held.touch()  # held already: the local run's engine starts at once
        proc = subprocess.run(
            match(local / "event", args.games, first, []),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"the local run failed: {proc.stderr.strip()}")
        expected = rows(local / "event")
        for run in range(1, args.runs + 1):
            folder = Path(tmp) / f"run{run}"
            folder.mkdir()
            got = one_run(folder, args.games, args.kill_after, args.fault)
            ids = got["ids"]
            stored = got["rows"]
            assert isinstance(ids, list)
            assert isinstance(stored, list)
            stored_ids = [row[0] for row in stored]
            lost = len(set(range(1, args.games + 1)) - set(stored_ids))
            doubled = len(ids) - len(set(ids))
            different = sum(1 for row in stored if row not in expected)
            totals["lost"] += lost
            totals["doubled"] += doubled
            totals["different"] += different
            totals["failed_runs"] += got["status"] != 0
            totals["not_killed"] += not got["killed"]
            seconds = got["seconds"]
            assert isinstance(seconds, float)
            times.append(seconds)
            print(
                f"run {run}: exit {got['status']} in {seconds:.1f} s, {len(stored)} stored, "
                f"lost {lost}, doubled {doubled}, different {different}"
                + ("" if got["killed"] else ", no worker killed")
                + (f"; {got['error']}" if got["error"] else ""),
                flush=True,
            )
    ok = not any(totals.values())
    when = "during the preflight" if args.fault == "preflight" else "mid-event"
    print(
        f"{args.runs} runs with a worker killed {when}: lost {totals['lost']}, doubled "
        f"{totals['doubled']}, different {totals['different']}, failed runs "
        f"{totals['failed_runs']}, runs with no kill {totals['not_killed']} "
        f"{'PASS' if ok else 'FAIL'} (target: all 0); match {min(times):.1f} to "
        f"{max(times):.1f} s"
    )
    if args.json:
        print(json.dumps(totals))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

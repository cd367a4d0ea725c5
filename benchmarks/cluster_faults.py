"""Killed workers lose no game and double none: the same event played again and again on a
loopback Dask cluster, a worker killed in the middle of each run.

Usage: python benchmarks/cluster_faults.py [--runs 10] [--games 24] [--kill-after 3] [--json]

Each run starts ``python -m dask scheduler`` and two ``python -m dask worker --nthreads 1
--no-nanny`` processes (no nanny: a killed worker stays dead), each in a process group of its
own, then ``enginesrv match yoxii bot:alphabeta:Depth=3 bot:greedy --depth 3 --games N
--cluster ...`` into a new folder. Once the match has printed ``--kill-after`` game lines, one
worker's process group gets SIGKILL. The run counts the games the match printed and stored:
lost (scheduled, not stored), doubled (printed twice; a stored game is one database row by its
number), and different (stored, but not as the same event played locally stores it: the bots
are deterministic at a fixed depth). At the end of a run every process it started is killed.

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

ENV = dict(os.environ, DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")


def match(out: Path, games: int, extra: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:alphabeta:Depth=3",
        "bot:greedy", "--depth", "3", "--games", str(games), "--out", str(out), *extra,
    ]  # fmt: skip


def rows(out: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return db.execute(
            "SELECT id, p1, p2, winner, reason, first_points, plies FROM games ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def one_run(tmp: Path, games: int, kill_after: int) -> dict[str, object]:
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
        spawn(sys.executable, "-m", "dask", "scheduler", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))  # fmt: skip
        deadline = time.monotonic() + 30
        while not scheduler_file.exists():
            if time.monotonic() > deadline:
                raise SystemExit("the scheduler did not start in 30 s")
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        worker = (
            sys.executable, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file),
            "--nthreads", "1", "--no-nanny", "--no-dashboard",
        )  # fmt: skip
        workers = [spawn(*worker) for _ in range(2)]
        out = tmp / "event"
        event = subprocess.Popen(
            match(out, games, ["--cluster", address]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        )  # fmt: skip
        assert event.stdout is not None
        printed = []
        for _ in range(kill_after):
            line = event.stdout.readline()
            if not line:
                break
            printed.append(line)
        os.killpg(workers[0].pid, signal.SIGKILL)
        rest, err = event.communicate(timeout=600)
        printed += rest.splitlines()
        ids = [int(line.split()[1].split("/")[0]) for line in printed if line.startswith("game ")]
        stored = rows(out) if (out / "results.sqlite").exists() else []
        return {
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
    parser.add_argument("--json", action="store_true", help="print the totals as JSON too")
    args = parser.parse_args()
    totals = {"lost": 0, "doubled": 0, "different": 0, "failed_runs": 0}
    with tempfile.TemporaryDirectory(prefix="enginesrv-faults-") as tmp:
        local = Path(tmp) / "local"
        proc = subprocess.run(
            match(local, args.games, []), capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise SystemExit(f"the local run failed: {proc.stderr.strip()}")
        expected = rows(local)
        for run in range(1, args.runs + 1):
            folder = Path(tmp) / f"run{run}"
            folder.mkdir()
            got = one_run(folder, args.games, args.kill_after)
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
            print(
                f"run {run}: exit {got['status']}, {len(stored)} stored, lost {lost}, doubled "
                f"{doubled}, different {different}" + (f"; {got['error']}" if got["error"] else ""),
                flush=True,
            )
    ok = not any(totals.values())
    print(
        f"{args.runs} runs with a worker killed: lost {totals['lost']}, doubled "
        f"{totals['doubled']}, different {totals['different']}, failed runs "
        f"{totals['failed_runs']} {'PASS' if ok else 'FAIL'} (target: all 0)"
    )
    if args.json:
        print(json.dumps(totals))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

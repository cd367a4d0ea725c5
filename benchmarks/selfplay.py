"""Self-play speed: ``enginesrv selfplay`` of alphabeta at depth 1, positions written a second
per worker once the workers have started (the file's rows: the bot's decisions, each searched
on the worker pool and observed in the environment).

Usage: python benchmarks/selfplay.py [--games 200] [--workers 2] [--only yoxii]

Target: at least 1,000 positions a second per worker in Yoxii and Yinsh on 2 workers (exit
status 1 when missed). Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = 1000
GAMES = ("yoxii", "yinsh")


def measure(game: str, games: int, workers: int, folder: Path) -> dict[str, object]:
    out = folder / f"{game}.npz"
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "selfplay", game, "--games", str(games),
         "--depth", "1", "--workers", str(workers), "--out", str(out), "--json"],
        capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"selfplay {game} failed: {proc.stderr.strip().splitlines()[-1:]}")
    summary: dict[str, object] = json.loads(proc.stdout)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games a game (200)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=GAMES, action="append")
    args = parser.parse_args()
    missed = False
    print(f"{'game':<6} {'games':>5} {'rows':>7} {'positions/s':>11} {'per worker':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for game in args.only or GAMES:
            summary = measure(game, args.games, args.workers, Path(folder))
            per_worker = int(str(summary["positions_per_second_per_worker"]))
            print(
                f"{game:<6} {summary['games']:>5} {summary['rows']:>7} "
                f"{summary['positions_per_second']:>11} {per_worker:>10}",
                flush=True,
            )
            missed |= per_worker < TARGET
    print(
        f"target: at least {TARGET} positions a second per worker:", "missed" if missed else "met"
    )
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()

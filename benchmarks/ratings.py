"""The rating table's speed: a 4-player round robin of 48 games rated in under 1 s.

Usage: python benchmarks/ratings.py [--players 4] [--games 48] [--repeat 50] [--json]

1. fit: ``fit_ratings`` on a round robin of ``--players`` players and ``--games`` games (drawn
   from known strengths with a fixed seed), ``--repeat`` times; the median and the max.
2. results: a real event of the same shape is played first (``enginesrv tournament yoxii`` with
   ``bot:random`` players under different seeds, ``--depth 1``, into a temporary folder), then
   ``python -m enginesrv.cli results DIR`` and ``results DIR --json`` are timed as a user runs
   them: a new process each, the interpreter's start included, which reads the store, replays
   every record for the search figures and fits the ratings. Five runs of each; the median.

Target: every median under 1 s. The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from enginesrv.event.results.ratings import Encounter, expected, fit_ratings

TARGET_S = 1.0


def synthetic(players: int, games: int, seed: int = 1) -> list[Encounter]:
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    strength = {name: rng.uniform(-200, 200) for name in names}
    pairs = list(itertools.combinations(names, 2))
    out = []
    for k in range(games):
        a, b = pairs[k % len(pairs)]
        u = rng.random()
        points = 0.5 if u < 0.2 else float(rng.random() < expected(strength[a] - strength[b]))
        out.append(Encounter(a, b, 1, points))
    return out


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.strip()}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4, help="players (default 4)")
    parser.add_argument("--games", type=int, default=48, help="games in all (default 48)")
    parser.add_argument("--repeat", type=int, default=50, help="fits timed (default 50)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    if args.players < 2 or args.games < 1:
        parser.error("--players must be at least 2 and --games at least 1")

    encounters = synthetic(args.players, args.games)
    fits = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        fit_ratings(encounters)
        fits.append(time.perf_counter() - started)
    fit_median = statistics.median(fits)
    print(
        f"fit: {args.players} players, {args.games} games: median {fit_median * 1000:.2f} ms, "
        f"max {max(fits) * 1000:.2f} ms over {args.repeat} fits "
        f"{'PASS' if fit_median < TARGET_S else 'FAIL'} (target < {TARGET_S:g} s)"
    )

    pairs = args.players * (args.players - 1) // 2
    per_pairing = max(1, args.games // pairs)
    with tempfile.TemporaryDirectory(prefix="enginesrv-ratings-") as tmp:
        out = Path(tmp) / "event"
        players = [f"name=r{i}:bot:random:Seed={i + 1}" for i in range(args.players)]
        run = subprocess.run(
            [sys.executable, "-m", "enginesrv.cli", "tournament", "yoxii", *players,
             "--depth", "1", "--games", str(per_pairing), "--out", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if run.returncode != 0:
            raise SystemExit(f"the tournament failed: {run.stderr.strip()}")
        played = per_pairing * pairs
        cmd = [sys.executable, "-m", "enginesrv.cli", "results", str(out)]
        text = statistics.median(timed(cmd) for _ in range(5))
        as_json = statistics.median(timed([*cmd, "--json"]) for _ in range(5))
    ok = fit_median < TARGET_S and text < TARGET_S and as_json < TARGET_S
    print(
        f"results: {args.players} players, {played} games played: `enginesrv results` median "
        f"{text:.3f} s, `--json` median {as_json:.3f} s (a new process each) "
        f"{'PASS' if text < TARGET_S and as_json < TARGET_S else 'FAIL'} "
        f"(target < {TARGET_S:g} s)"
    )
    if args.json:
        figures = {"fit_median_s": fit_median, "fit_max_s": max(fits), "results_s": text,
                   "results_json_s": as_json, "games": played}  # fmt: skip
        print(json.dumps(figures))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Does ``enginesrv tune`` find a known optimum? The synthetic bot ``noisy`` (greedy with each
move's value blurred by Gaussian noise of standard deviation ``Blur * |Aim - Peak|``, so that
it plays best at ``Aim = Peak = 500``) is tuned from a distant start, ``Aim = 100`` in
``[0, 1000]``, in several runs with different seeds.

Usage: python benchmarks/tune_synthetic.py [--runs 5] [--games 600] [--start 100] [--json]

Each run is ``enginesrv tune yohoho bot:noisy --param Aim=START:0:1000:50 --games 600 --st 0.3
--concurrency 2 --seed S`` in a new process and a temporary results directory; its final value
is ``tune-report --json``'s. The strength curve of ``noisy`` in Yohoho (measured with
``enginesrv match``, 40 games each): Aim 488 against the peak scores 57%, 475: 28%, 440: 12%;
far from it the slope is gentler (Aim 200 against 100: 60%).

Target: every run ends within 10% of the range of the peak (``|Aim - 500| <= 100``) in at most
600 games. The exit status is 1 when a run misses it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEAK, LOW, HIGH = 500, 0, 1000
TOLERANCE = 0.10
"""The largest distance from the peak accepted, as a share of the range."""


def tune(out: Path, seed: int, games: int, start: int) -> tuple[float, float]:
    """One run's final ``Aim`` and wall time (seconds)."""
    command = [
        sys.executable, "-m", "enginesrv.cli", "tune", "yohoho", "bot:noisy",
        "--param", f"Aim={start}:{LOW}:{HIGH}:50", "--games", str(games), "--st", "0.3",
        "--concurrency", "2", "--seed", str(seed), "--out", str(out),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"tune failed (seed {seed}): {done.stderr.strip()[-500:]}")
    report = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "tune-report", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(report.stdout)["values"]["Aim"]), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs, seeds 1..RUNS (default 5)")
    parser.add_argument("--games", type=int, default=600, help="games per run (default 600)")
    parser.add_argument("--start", type=int, default=100, help="Aim's start (default 100)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tune-synthetic-") as scratch:
        for seed in range(1, args.runs + 1):
            final, took = tune(Path(scratch) / str(seed), seed, args.games, args.start)
            error = abs(final - PEAK) / (HIGH - LOW)
            rows.append({"seed": seed, "final": final, "error": error, "seconds": took})
            if not args.json:
                verdict = "ok" if error <= TOLERANCE else "MISSED"
                print(
                    f"seed {seed}: Aim {final:g} ({100 * error:.1f}% of the range from {PEAK}), "
                    f"{args.games} games in {took:.0f} s: {verdict}",
                    flush=True,
                )
    missed = [r for r in rows if r["error"] > TOLERANCE]
    if args.json:
        print(json.dumps({"games": args.games, "start": args.start, "runs": rows}, indent=2))
    else:
        worst = max(r["error"] for r in rows)
        print(f"worst {100 * worst:.1f}% of the range (target {100 * TOLERANCE:.0f}%)")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()

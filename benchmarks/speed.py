"""Search speed against a fixed baseline: nodes per second of alphabeta on the ``enginesrv
bench`` positions and depths, for the working tree and for a chosen commit, per game.

Usage: python benchmarks/speed.py [--game G ...] [--baseline COMMIT] [--runs 5]

Both sides search the positions and depths of the baseline's own ``enginesrv bench`` (so the
trees are comparable: same positions, depths and search settings) in fresh processes, runs
interleaved (baseline, new, baseline, new, ...) so that a machine's changing load falls on
both; each side's figure is its best run. It prints, per game, the nodes (equal on both sides
when the search, evaluations and rules search the same tree), both nodes-per-second figures and
their ratio; the target is a ratio of at least 1.5. The baseline is checked out once as a git
worktree under ``.ladder`` (as ``benchmarks/ladder.py`` does). Exit status 1 when a game's
ratio is below ``--target``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.ladder import BASELINE, ROOT, worktree

PROBE = """
import json, sys, time
from bots.alphabeta import AlphaBeta
from bots.engine import Limits
import games
cases = json.loads(sys.argv[1])
out = {}
def run(game, positions):
    nodes = 0
    for position, depth in positions:
        bot = AlphaBeta()
        bot.new_game(game)
        nodes += bot.search(game.state_from_string(position), Limits(depth=depth)).nodes
    return nodes
for name, positions in cases.items():
    game = games.load(name)
    run(game, positions)  # warm-up: imports, tables built on first use
    started = time.perf_counter()
    nodes = run(game, positions)
    out[name] = [nodes, time.perf_counter() - started]
print(json.dumps(out))
"""
"""Run in a child process with the side's source first on its path: node counts and seconds
of a game's bench searches (a fresh bot per position, as ``enginesrv bench`` does), after one
untimed pass that loads the game's modules and tables."""

CASES = """
import json
from enginesrv.search.bench import SEARCH_BENCH
print(json.dumps({g: [[c.position, c.depth] for c in cs] for g, cs in SEARCH_BENCH.items()}))
"""


def run(source: Path, code: str, *args: str) -> str:
    env_path = str(source)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, check=False, cwd=source,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"speed: the probe failed in {source}: {proc.stderr.strip()[-800:]}")
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="repeatable (default: every bench game)")
    parser.add_argument("--baseline", default=BASELINE, help=f"a commit (default {BASELINE})")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target", type=float, default=1.5)
    args = parser.parse_args()
    base = worktree(args.baseline)
    cases = json.loads(run(base, CASES))
    if args.game:
        unknown = set(args.game) - set(cases)
        if unknown:
            raise SystemExit(f"speed: no bench positions for {', '.join(sorted(unknown))}")
        cases = {g: cases[g] for g in args.game}
    best: dict[str, dict[str, tuple[int, float]]] = {"base": {}, "new": {}}
    for number in range(args.runs):
        for side, source in (("base", base), ("new", ROOT)):
            figures = json.loads(run(source, PROBE, json.dumps(cases)))
            for game, (nodes, seconds) in figures.items():
                old = best[side].get(game)
                if old is None or seconds < old[1]:
                    best[side][game] = (nodes, seconds)
        print(f"run {number + 1}/{args.runs} done", file=sys.stderr, flush=True)
    ok = True
    print(f"baseline {base.name} against the working tree, best of {args.runs} runs")
    for game in cases:
        (bn, bs), (nn, ns) = best["base"][game], best["new"][game]
        ratio = (nn / ns) / (bn / bs)
        same = "same tree" if bn == nn else f"trees differ ({bn} vs {nn} nodes)"
        ok = ok and ratio >= args.target
        print(
            f"{game:8} base {bn / bs:9.0f} nps | new {nn / ns:9.0f} nps | x{ratio:.2f} "
            f"({'PASS' if ratio >= args.target else 'below'} {args.target}) | {same}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

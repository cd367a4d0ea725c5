"""Yin Yang search speed: alphabeta's determinized search of views as it meets them in play.

Usage: python benchmarks/yinyang_speed.py [--depth 8] [--positions 24] [--repeat 3]
       python benchmarks/yinyang_speed.py --compare [--runs 3]
       python benchmarks/yinyang_speed.py --profile [--top 30]

The positions are fixed by ``--seed``: ``--games`` games between two alphabeta bots (secret
seeds from ``--seed``, ``--play-nodes`` nodes a decision) are played in this process, and the
views of the side to act at the start of its turns from turn 3 on are kept when a search of
them counts the hidden laws at the leaves over several samples (``over_samples`` gives the
sampled evaluation, not the plain one) and has more than one move to choose from; ``--positions``
of them, evenly spread, are measured. Each is searched by a fresh ``AlphaBeta`` (``SecretSeed``
set, ``Samples`` 8: deterministic) to ``--depth``, ``--repeat`` times; its best time counts.

Prints per position the nodes, the time and the nodes per second, then the totals and the
signature: the total of the nodes and a digest of the moves chosen, which must be the same with
and without the native accelerators (``ENGINESRV_PURE_PYTHON=1``): the trees are the same.

``--compare`` runs the measurement in child processes, alternately with the accelerators and
without (``ENGINESRV_PURE_PYTHON=1``, which is the search as it was before Yin Yang had one),
``--runs`` times each, and prints both best figures and their ratio; exit status 1 when the
signatures differ or the ratio is below ``--target`` (1.0: no slower). ``--profile`` runs the
measurement once under cProfile and prints where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from bots.alphabeta import AlphaBeta  # noqa: E402
from bots.chance import Chance  # noqa: E402
from bots.engine import Limits  # noqa: E402
from bots.eval import yinyang  # noqa: E402
from games import Game, State  # noqa: E402
from games.native import PURE_PYTHON  # noqa: E402
from games.yinyang import YinYangState  # noqa: E402

SAMPLES = 8
"""alphabeta's default ``Samples``."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One position's search: its nodes, best time in seconds and the move chosen."""

    nodes: int
    seconds: float
    token: str


def _bot(game: Game, secret_seed: int) -> AlphaBeta:
    bot = AlphaBeta()
    bot.set_option("SecretSeed", str(secret_seed))
    bot.set_option("Samples", str(SAMPLES))
    bot.new_game(game)
    return bot


def _sampled(view: State, secret_seed: int) -> bool:
    """Whether a fresh bot's search of ``view`` counts the hidden laws over several samples:
    the samples it draws (the same generator, the same draws) differ, and the root has more
    than one move."""
    evaluator = yinyang.YinYangEvaluator()
    if len(evaluator.search_moves(view)) < 2:
        return False
    rng = Chance(view, 0, secret_seed).secret
    drawn = evaluator.hidden_information().samples(view, rng, SAMPLES)
    weight: dict[int, int] = {}
    worlds: list[State] = []
    for world in drawn:
        if world.key() not in weight:
            worlds.append(world)
            weight[world.key()] = 0
        weight[world.key()] += 1
    if len(worlds) < 2:
        return False
    weights = [weight[world.key()] for world in worlds]
    return evaluator.over_samples(view, worlds, weights) is not evaluator


def positions(args: argparse.Namespace) -> list[str]:
    """The views measured (module docstring), as position strings."""
    game = games.load("yinyang")
    found: list[str] = []
    for number in range(args.games):
        players = [_bot(game, args.seed * 1000 + 2 * number + seat + 1) for seat in (0, 1)]
        state = game.new_state()
        assert isinstance(state, YinYangState)
        while not state.is_terminal() and state.ply() < args.plies:
            seat = state.to_move()
            view = state.view(seat)
            if state.phase() == "start" and state.turn() >= 3 and view.is_view():
                text = view.to_string()
                if _sampled(game.state_from_string(text), args.seed):
                    found.append(text)
            result = players[seat].search(view, Limits(nodes=args.play_nodes))
            assert result.token is not None
            state.push(state.parse_move(result.token))
    if len(found) < args.positions:
        raise SystemExit(f"yinyang_speed: only {len(found)} positions found; play more games")
    step = len(found) / args.positions
    return [found[int(i * step)] for i in range(args.positions)]


def measure(texts: list[str], args: argparse.Namespace) -> list[Measured]:
    """Each position searched ``--repeat`` times by a fresh bot; the best time of each."""
    game = games.load("yinyang")
    out: list[Measured] = []
    for text in texts:
        best: Measured | None = None
        for _ in range(args.repeat):
            bot = _bot(game, args.seed)
            state = game.state_from_string(text)
            started = time.perf_counter()
            result = bot.search(state, Limits(depth=args.depth))
            seconds = time.perf_counter() - started
            run = Measured(result.nodes, seconds, result.token or "-")
            if best is not None and (run.nodes, run.token) != (best.nodes, best.token):
                raise SystemExit(f"yinyang_speed: two searches of {text!r} differ")
            if best is None or run.seconds < best.seconds:
                best = run
        assert best is not None
        out.append(best)
    return out


def signature(runs: list[Measured]) -> tuple[int, str]:
    """The total of the nodes, and a digest of every position's nodes and move."""
    text = ";".join(f"{r.nodes}:{r.token}" for r in runs)
    return sum(r.nodes for r in runs), hashlib.sha256(text.encode()).hexdigest()[:12]


def report(texts: list[str], runs: list[Measured]) -> dict[str, object]:
    """Print the figures of one measurement and return its totals."""
    native = "native" if yinyang._native is not None else "Python"
    print(f"evaluation: {native} ({PURE_PYTHON}={os.environ.get(PURE_PYTHON, '')!r})")
    print(f"{'#':>3} {'turn':>4} {'nodes':>8} {'ms':>9} {'nodes/s':>9}  move")
    for i, (text, run) in enumerate(zip(texts, runs, strict=True)):
        turn = text.rsplit(" ", 1)[1]
        rate = run.nodes / run.seconds if run.seconds > 0 else 0.0
        print(
            f"{i:>3} {turn:>4} {run.nodes:>8} {run.seconds * 1000:>9.1f} {rate:>9.0f}  {run.token}"
        )
    nodes, digest = signature(runs)
    seconds = sum(r.seconds for r in runs)
    print(f"total: {nodes} nodes in {seconds:.3f} s, {nodes / seconds:.0f} nodes/s")
    print(f"signature: {nodes} nodes, moves {digest}")
    return {"nodes": nodes, "digest": digest, "seconds": seconds}


def compare(args: argparse.Namespace, argv: list[str]) -> int:
    """The measurement in child processes, with and without the accelerators, interleaved."""
    child = [sys.executable, str(Path(__file__).resolve()), *argv, "--json"]
    child.remove("--compare")
    best: dict[bool, dict[str, object]] = {}
    for run in range(args.runs):
        for pure in (True, False):
            env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON}
            if pure:
                env[PURE_PYTHON] = "1"
            out = subprocess.run(child, env=env, capture_output=True, text=True, check=True)
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            label = "Python" if pure else "native"
            rate = figures["nodes"] / figures["seconds"]
            print(f"run {run + 1} {label}: {figures['nodes']} nodes, {rate:.0f} nodes/s")
            kept = best.get(pure)
            if kept is None or figures["seconds"] < float(str(kept["seconds"])):
                best[pure] = figures
    python, native = best[True], best[False]
    same = (python["nodes"], python["digest"]) == (native["nodes"], native["digest"])
    rates = [int(str(f["nodes"])) / float(str(f["seconds"])) for f in (python, native)]
    print(f"Python evaluation: {rates[0]:.0f} nodes/s (best of {args.runs})")
    print(f"native evaluation: {rates[1]:.0f} nodes/s (best of {args.runs})")
    print(f"ratio {rates[1] / rates[0]:.2f} (target {args.target:g}); signatures equal: {same}")
    return 0 if same and rates[1] >= args.target * rates[0] else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description="Yin Yang determinized search speed")
    parser.add_argument("--depth", type=int, default=8, help="search depth (default 8)")
    parser.add_argument("--positions", type=int, default=24, help="positions measured (24)")
    parser.add_argument("--repeat", type=int, default=3, help="searches per position (3)")
    parser.add_argument("--games", type=int, default=6, help="games played for them (6)")
    parser.add_argument("--plies", type=int, default=200, help="longest game (200 plies)")
    parser.add_argument("--play-nodes", type=int, default=500, help="nodes a decision (500)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and searches")
    parser.add_argument("--compare", action="store_true", help="native against Python")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (--compare)")
    parser.add_argument("--target", type=float, default=1.0, help="least ratio (--compare)")
    parser.add_argument("--profile", action="store_true", help="run once under cProfile")
    parser.add_argument("--top", type=int, default=30, help="functions listed (--profile)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.depth, args.positions, args.repeat, args.games, args.runs) < 1:
        parser.error("the depth and the counts must be at least 1")
    if args.compare:
        return compare(args, argv)
    texts = positions(args)
    measure(texts[:1], args)  # warm-up: the tables built on first use
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        runs = measure(texts, args)
        profiler.disable()
        report(texts, runs)
        stats = pstats.Stats(profiler).strip_dirs()
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
        return 0
    runs = measure(texts, args)
    totals = report(texts, runs)
    if args.json:
        print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

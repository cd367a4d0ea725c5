"""Search and rules speed against a fixed baseline: nodes per second of alphabeta on the
``enginesrv bench`` positions and depths, for the working tree and for a chosen commit, per
game; with ``--rules``, perft and random playouts. Both sides search without late move
reductions (``Reductions``, which the baseline does not have), so that their trees are equal.

Usage: python benchmarks/speed.py [--game G ...] [--baseline COMMIT] [--runs 5] [--target X]
       python benchmarks/speed.py --rules [--game G ...] [--baseline COMMIT] [--runs 3]

Both sides search the positions and depths of the baseline's own ``enginesrv bench`` (so the
trees are comparable: same positions, depths and search settings) in fresh processes, runs
interleaved (baseline, new, baseline, new, ...) so that a machine's changing load falls on
both; each side's figure is its best run. It prints, per game, the nodes (equal on both sides
when the search, evaluations and rules search the same tree), both nodes-per-second figures and
their ratio; the target is a ratio of at least 1.5. The baseline is checked out once as a git
worktree under ``.ladder`` (as ``benchmarks/ladder.py`` does). Exit status 1 when a game's
ratio is below ``--target``. The working tree's search is also checked against its own Python
reference: the compiled core, given a table of as many slots as the reference's, must search
the same trees (``same as the reference``), which is what makes its speed comparable.

``--rules`` times, per game, perft on the ``enginesrv bench --rules`` positions (and, for
Yinsh, the position after the placements ``h6 g6 g8 c6 e10 f8 g11 e9 h11 d7`` to depth 4) and
seeded random playouts (pushed to the end of the game or the bench's turn cap, then popped
back), four ways: the baseline through ``games.perft`` and the State API (with its native
accelerators), the working tree the same way, the working tree's pure-Python reference
(``ENGINESRV_PURE_PYTHON=1``), and the working tree's compiled core (``core.perft``,
``core.playouts``). Leaf counts must agree on every side; each figure is the best of the runs.
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
def run(bot, game, positions):
    nodes = 0
    for position, depth in positions:
        bot.new_game(game)
        nodes += bot.search(game.state_from_string(position), Limits(depth=depth)).nodes
    return nodes
for name, positions in cases.items():
    game = games.load(name)
    bot = AlphaBeta()
    if "Reductions" in bot.values:  # the baseline's search, with no late move reductions
        bot.set_option("Reductions", "false")
    run(bot, game, positions)  # warm-up: imports, tables built and memory touched on first use
    started = time.perf_counter()
    nodes = run(bot, game, positions)
    out[name] = [nodes, time.perf_counter() - started]
print(json.dumps(out))
"""
"""Run in a child process with the side's source first on its path: node counts and seconds
of a game's bench searches (one bot, cleared by ``new_game`` before each position, as
``enginesrv bench`` does), after one untimed pass that loads the game's modules and tables and
touches the bot's memory."""

CASES = """
import json
from enginesrv.search.bench import SEARCH_BENCH
print(json.dumps({g: [[c.position, c.depth] for c in cs] for g, cs in SEARCH_BENCH.items()}))
"""


EQUAL = """
import json, sys
from bots.compiled import CompiledMemory, compiled_search, core_for
from bots.engine import Limits, never_stop
from bots.eval import evaluator_for
from bots.search import Searcher, SearchMemory, SearchOptions, TranspositionTable
import games
cases = json.loads(sys.argv[1])
out = {}
for name, positions in cases.items():
    core = core_for(name)
    if core is None:
        out[name] = "no compiled core"
        continue
    game = games.load(name)
    differ = []
    for position, depth in positions:
        figures = []
        for compiled in (False, True):
            evaluator = evaluator_for(name)
            table = TranspositionTable(16)
            options = SearchOptions(aspiration=evaluator.aspiration)
            common = dict(evaluator=evaluator, limits=Limits(depth=depth), stop=never_stop,
                          on_info=lambda info: None, options=options)
            state = game.state_from_string(position)
            if compiled:
                memory = CompiledMemory(core, table.size)
                r = compiled_search(core, state, memory=memory, **common)
            else:
                r = Searcher(state, memory=SearchMemory(table), **common).run()
            figures.append([r.nodes, r.token, str(r.score), list(r.pv)])
        if figures[0] != figures[1]:
            differ.append([position, depth, figures])
    out[name] = differ or "same"
print(json.dumps(out))
"""
"""Run on the working tree: per game, whether the compiled core and the Python reference,
each with a table of the same number of slots, search every bench position alike."""

RULES = """
import json, random, sys, time
import games
cases, playouts, mode = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
TURNS = {"yohoho": 200, "yinyang": 200}
def api_playouts(game, count, max_turns):
    rng = random.Random(1)
    plies = 0
    for _ in range(count):
        state = game.new_state()
        depth = turns = 0
        mover = state.to_move()
        while not state.is_terminal() and depth < 10000:
            if max_turns is not None and turns >= max_turns:
                break
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
            depth += 1
            if max_turns is not None and state.to_move() != mover:
                mover, turns = state.to_move(), turns + 1
        plies += depth
        for _ in range(depth):
            state.pop()
    return plies
out = {}
for name, positions in cases.items():
    game = games.load(name)
    if mode == "core":
        from bots.compiled import core_for
        core = core_for(name)
        if core is None:
            continue
        perft = core.perft
        play = lambda n: core.playouts(game.new_state(), n, 1, TURNS.get(name))[1]
    else:
        perft = games.perft
        play = lambda n: api_playouts(game, n, TURNS.get(name))
    rows = []
    for position, depth in positions:
        state = game.state_from_string(position)
        started = time.perf_counter()
        rows.append([perft(state, depth), time.perf_counter() - started])
    if playouts:
        started = time.perf_counter()
        rows.append([play(playouts), time.perf_counter() - started])
    out[name] = rows
print(json.dumps(out))
"""
"""Run in a child process with a side's source first on its path: per game, per perft case
(leaves, seconds), then the playouts (plies, seconds). ``mode`` is ``api`` (the State API) or
``core`` (the compiled core)."""

RULE_CASES = """
import json
import games
from enginesrv.search.bench import BENCH
cases = {g: [[c.position, c.depth] for c in cs] for g, cs in BENCH.items()}
after = games.replay(games.load("yinsh"), None, "h6 g6 g8 c6 e10 f8 g11 e9 h11 d7".split())
cases["yinsh"].append([after.to_string(), 4])
print(json.dumps(cases))
"""


def run(source: Path, code: str, *args: str, pure: bool = False) -> str:
    env_path = str(source)
    env = {"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    if pure:
        env["ENGINESRV_PURE_PYTHON"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, check=False, cwd=source, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"speed: the probe failed in {source}: {proc.stderr.strip()[-800:]}")
    return proc.stdout


def _select(
    cases: dict[str, list[list[object]]], chosen: list[str] | None
) -> dict[str, list[list[object]]]:
    if not chosen:
        return cases
    unknown = set(chosen) - set(cases)
    if unknown:
        raise SystemExit(f"speed: no bench positions for {', '.join(sorted(unknown))}")
    return {g: cases[g] for g in chosen}


def _per_second(row: list[float]) -> float:
    return row[0] / row[1] if row[1] > 0 else 0.0


def rules(args: argparse.Namespace) -> int:
    """The ``--rules`` comparison; prints a table per game, exits 1 when leaf counts differ."""
    base = worktree(args.baseline)
    cases = _select(json.loads(run(ROOT, RULE_CASES)), args.game)
    sides = {
        "base": (base, "api", False),
        "api": (ROOT, "api", False),
        "reference": (ROOT, "api", True),
        "core": (ROOT, "core", False),
    }
    best: dict[str, dict[str, list[list[float]]]] = {side: {} for side in sides}
    for number in range(args.runs):
        for side, (source, mode, pure) in sides.items():
            figures = json.loads(
                run(source, RULES, json.dumps(cases), str(args.playouts), mode, pure=pure)
            )
            for game, rows in figures.items():
                old = best[side].setdefault(game, rows)
                for i, row in enumerate(rows):
                    if row[1] < old[i][1]:
                        old[i] = row
        print(f"run {number + 1}/{args.runs} done", file=sys.stderr, flush=True)
    ok = True
    print(f"rules: baseline {base.name}, best of {args.runs} runs; figures per second")
    for game, positions in cases.items():
        labels = [f"perft {i + 1} depth {depth}" for i, (_, depth) in enumerate(positions)]
        labels.append(f"playouts {args.playouts} (plies)")
        print(f"{game}:")
        for i, label in enumerate(labels):
            row = {side: best[side][game][i] for side in sides if game in best[side]}
            # the core's playouts draw from a generator of their own: other games, other plies
            counted = [r for side, r in row.items() if side != "core" or i < len(positions)]
            same = len({int(r[0]) for r in counted}) == 1
            ok = ok and same
            rates = " | ".join(f"{side} {_per_second(r):11.0f}" for side, r in row.items())
            if "core" in row:
                rates += f" | core/base x{_per_second(row['core']) / _per_second(row['base']):.2f}"
            print(f"  {label:28} {rates}{'' if same else ' | COUNTS DIFFER'}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="repeatable (default: every bench game)")
    parser.add_argument("--baseline", default=BASELINE, help=f"a commit (default {BASELINE})")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target", type=float, default=1.5)
    parser.add_argument("--rules", action="store_true", help="perft and playouts instead")
    parser.add_argument("--playouts", type=int, default=200, help="with --rules (default 200)")
    args = parser.parse_args()
    if args.rules:
        return rules(args)
    base = worktree(args.baseline)
    cases = _select(json.loads(run(base, CASES)), args.game)
    equal = json.loads(run(ROOT, EQUAL, json.dumps(cases)))
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
        reference = equal[game]
        if reference == "same":
            reference = "same as the reference"
        elif isinstance(reference, list):
            reference = f"DIFFERS from the reference: {reference}"
            ok = False
        ok = ok and ratio >= args.target
        print(
            f"{game:8} base {bn / bs:9.0f} nps | new {nn / ns:9.0f} nps | x{ratio:.2f} "
            f"({'PASS' if ratio >= args.target else 'below'} {args.target}) | {same} | "
            f"{reference}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

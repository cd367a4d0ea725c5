"""Measure alphabeta's levels (the ``Level`` option, ``bots.levels``) in one game against a
fixed pool: greedy, random and the levels themselves.

Usage: python benchmarks/levels.py GAME [--games 200] [--st 0.2] [--concurrency 2]
                                   [--out DIR] [--resume]

It plays, one after another, with ``enginesrv match``: level 1 against greedy, level 1 against
random, and each level against the level below it, ``--games`` games each (from the ladder's
openings, ``.ladder/openings-GAME.txt``, each twice with the colours swapped; Yin Yang from its
start, its bots' chance making the games differ). A level below the top is bounded by its
depth and nodes, not by time: it is given 10 seconds a move, more than its budget takes, so
that the figures do not depend on the machine. The top level, alphabeta at full strength, and
greedy and random play at ``--st`` seconds a move, the documented time control of the table.
Each match is kept in ``--out`` (default ``.ladder/levels/GAME``) and ``--resume`` finishes
the one cut off.

It prints each match (W-D-L, score, Elo difference and its 95% interval), the checks the
levels must pass (each level scores at least 65% against the level below; level 1 at most 40%
against greedy), and each level's Elo on a chain from greedy at ``bots.levels.ANCHOR`` (the
intervals of the matches on the way added in quadrature), ready to paste into
``bots.levels.ELO``. Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.tune_eval import openings, run  # noqa: E402
from bots.levels import ANCHOR, LEVELS  # noqa: E402 (after the path is set)

STRONGER = 0.65
"""The least score of a level against the level below."""
BEGINNER = 0.40
"""The most score of level 1 against greedy."""
BUDGETED_MOVE = "1/10"
"""The clock of a level below the top: ten seconds a move, more than its budget takes."""


@dataclass(frozen=True)
class Match:
    """One match of the pool: ``first`` against ``second`` (player specs by name)."""

    name: str
    first: str
    second: str


def player(number: int) -> str:
    """The player spec of level ``number``."""
    if number == len(LEVELS):
        return f"name=L{number}:bot:alphabeta"
    return f"name=L{number}:tc={BUDGETED_MOVE}:bot:alphabeta:Level={number}"


def matches() -> list[Match]:
    """The pool's matches, in the order they are played."""
    out = [
        Match("L1-greedy", player(1), "name=greedy:bot:greedy"),
        Match("L1-random", player(1), "name=random:bot:random"),
    ]
    out += [Match(f"L{n + 1}-L{n}", player(n + 1), player(n)) for n in range(1, len(LEVELS))]
    return out


def play(game: str, match: Match, args: argparse.Namespace, out: Path) -> dict[str, object]:
    """Play ``match`` (or finish it with ``--resume``); its pairing from ``enginesrv
    results --json``."""
    where = out / match.name
    done = where / "results.sqlite"
    tool = [sys.executable, "-m", "enginesrv.cli"]
    if not done.exists() or args.resume:
        if done.exists():
            command = [*tool, "match", "--resume", "--out", str(where)]
        else:
            book = []
            if game != "yinyang":
                book = ["--openings", str(openings(game)), "--repeat"]
                book += ["--openings-order", "random"]
            command = [
                *tool, "match", game, match.first, match.second, "--st", str(args.st),
                "--games", str(args.games), "--concurrency", str(args.concurrency), *book,
                "--out", str(where), "--event", f"levels {game} {match.name}",
            ]  # fmt: skip
        print("levels:", " ".join(command), flush=True)
        status = run(command)
        if status != 0:
            raise SystemExit(status)
    report = subprocess.run(
        [*tool, "results", str(where), "--json"], capture_output=True, text=True, check=True
    )
    pairing: dict[str, object] = json.loads(report.stdout)["pairings"][0]
    return pairing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="yinsh, yinsh+blitz, yohoho, yoxii or yinyang")
    parser.add_argument("--games", type=int, default=200, help="games a match (200)")
    parser.add_argument("--st", type=float, default=0.2, help="seconds a move at the top (0.2)")
    parser.add_argument("--concurrency", type=int, default=2, help="games at once (2)")
    parser.add_argument("--out", help="the matches' directory (default .ladder/levels/GAME)")
    parser.add_argument("--resume", action="store_true", help="finish the matches in --out")
    args = parser.parse_args()
    out = Path(args.out) if args.out else ROOT / ".ladder" / "levels" / args.game
    out.mkdir(parents=True, exist_ok=True)
    results = {match.name: play(args.game, match, args, out) for match in matches()}
    return report(args.game, results)


def _figure(value: object) -> float:
    """An Elo figure of ``enginesrv results --json``: None when a match was all won or all
    lost (no finite figure)."""
    return math.inf if value is None else float(value)  # type: ignore[arg-type]


def report(game: str, results: dict[str, dict[str, object]]) -> int:
    """Print the matches, the checks and the chain of Elo; 0 when every check passes."""
    print(f"\nlevels of alphabeta in {game}")
    print(f"{'match':<12} {'W-D-L':>11} {'score':>6} {'elo':>7} {'+/-95%':>7}  check")
    passed = True
    for name, pairing in results.items():
        score = float(pairing["score"])  # type: ignore[arg-type]
        check = ""
        if name == "L1-greedy":
            ok = score <= BEGINNER
            check = f"{'pass' if ok else 'FAIL'} (at most {BEGINNER:.0%})"
            passed &= ok
        elif name != "L1-random":
            ok = score >= STRONGER
            check = f"{'pass' if ok else 'FAIL'} (at least {STRONGER:.0%})"
            passed &= ok
        wdl = f"{pairing['wins']}-{pairing['draws']}-{pairing['losses']}"
        elo, ci = _figure(pairing["elo"]), _figure(pairing["elo_ci95"])
        print(f"{name:<12} {wdl:>11} {score:>6.1%} {elo:>+7.0f} {ci:>7.0f}  {check}")
    chain: dict[int, tuple[int, int]] = {}
    elo, variance = float(ANCHOR), 0.0
    for number in range(1, len(LEVELS) + 1):
        name = "L1-greedy" if number == 1 else f"L{number}-L{number - 1}"
        pairing = results[name]
        step, ci = _figure(pairing["elo"]), _figure(pairing["elo_ci95"])
        if not (math.isfinite(step) and math.isfinite(ci)):
            print(f"level {number}: its match has no finite Elo (all won or all lost)")
            passed = False
            break
        elo += step
        variance += ci * ci
        chain[number] = (round(elo), round(math.sqrt(variance)))
    print(f"\nElo, greedy at {ANCHOR}: paste into bots.levels.ELO")
    print(f'    "{game}": {{{", ".join(f"{n}: {v}" for n, v in chain.items())}}},')
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

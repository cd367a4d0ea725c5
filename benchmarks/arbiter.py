"""Arbiter targets: built-in bots keep their time, also on a busy machine; the arbiter's own
overhead per move.

Usage: python benchmarks/arbiter.py [--game G ...] [--games 50] [--control st=0.2 ...]
                                    [--player alphabeta] [--opponent greedy]
                                    [--concurrency 2] [--busy] [--max-plies N] [--out DIR]

For every game (default: yinsh, yohoho, yoxii, yinyang) and every control (default: ``st=0.2``
and ``tc=2+0.05``) it plays a match between the two bots through the arbiter exactly as
``enginesrv match`` does (worker processes, clocks on the arbiter's side), then reports:

* games, plies and the time forfeits of the bots (target: none);
* the overrun of every move: the time the arbiter measured from ``go`` to the answer minus the
  time the move was given (its ``--st``, or what its clock allowed), read from the records'
  ``over=`` notes: p50, p99 and the largest (target: p99 at most 10 ms);
* the arbiter's overhead per move (the games' wall time minus the go-to-answer times).

``--busy`` keeps one extra CPU-bound process per core running during the matches, as a machine
that also does other work: the bots must keep their deadlines anyway. Every process it starts
is ended when it stops. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from enginesrv.event.config import EventConfig
from enginesrv.event.tournament import Finished, prepare, run_event

GAMES = ("yinsh", "yohoho", "yoxii", "yinyang")
CONTROLS = ("st=0.2", "tc=2+0.05")
P99_TARGET_MS = 10
OVER = re.compile(r"\bover=(-?\d+)")


def percentile(values: list[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_one(args: argparse.Namespace, game: str, control: str, root: Path) -> bool:
    kind, _, value = control.partition("=")
    if kind not in ("st", "tc") or not value:
        raise SystemExit(f"--control {control!r}: write st=SECONDS or tc=TC")
    out = root / f"{game}-{kind}"
    limit = {"st": float(value)} if kind == "st" else {"tc": value}
    config = prepare(
        EventConfig(
            game,
            (f"name=a:bot:{args.player}", f"name=b:bot:{args.opponent}"),
            games=args.games,
            concurrency=args.concurrency,
            max_plies=args.max_plies,
            event="arbiter benchmark",
            **limit,
        ),
        out,
        resume=False,
    )
    finished: list[Finished] = []

    def on_game(done: Finished) -> None:
        finished.append(done)
        if done.done % 10 == 0 or done.done == done.total:
            print(f"  {game} {control}: {done.done}/{done.total} games", file=sys.stderr)

    started = time.monotonic()
    trio.run(lambda: run_event(config, out, on_game=on_game))
    wall = time.monotonic() - started
    results = [f.result for f in finished]
    plies = sum(r.plies for r in results)
    forfeits = sum(1 for r in results if r.reason == "time-forfeit")
    overruns = [
        int(match.group(1))
        for path in sorted((out / "games").glob("game-*.txt"))
        for match in OVER.finditer(path.read_text(encoding="utf-8"))
    ]
    game_wall = sum(r.wall for r in results)
    engine = sum(r.engine_time for r in results)
    own = 1000 * (game_wall - engine) / max(1, plies)
    p99 = percentile(overruns, 0.99) if overruns else 0
    ok = forfeits == 0 and p99 <= P99_TARGET_MS
    over = (
        f"overrun p50 {percentile(overruns, 0.5)} ms p99 {p99} ms max {max(overruns)} ms"
        if overruns
        else "no timed move"
    )
    reasons: dict[str, int] = {}
    for r in results:
        reasons[r.reason] = reasons.get(r.reason, 0) + 1
    print(
        f"{game:8} {control:10} {'PASS' if ok else 'FAIL'} | {len(results)} games, {plies} "
        f"plies, {wall:.0f} s | time forfeits {forfeits} | {over} over {len(overruns)} moves "
        f"| arbiter overhead {own:.2f} ms/move | "
        + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())),
        flush=True,
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", choices=GAMES, help="repeatable (all four)")
    parser.add_argument("--games", type=int, default=50, help="games per game and control")
    parser.add_argument("--control", action="append", help="st=S or tc=TC, repeatable")
    parser.add_argument("--player", default="alphabeta")
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--max-plies", type=int, default=400)
    parser.add_argument("--busy", action="store_true", help="one CPU-bound process per core")
    parser.add_argument("--out", help="keep the events here (default: a temporary directory)")
    args = parser.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="arbiter-bench-"))
    burners: list[subprocess.Popen[bytes]] = []
    try:
        if args.busy:
            for _ in range(os.cpu_count() or 1):
                burners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        print(
            f"{args.player} vs {args.opponent}, concurrency {args.concurrency}"
            f"{', busy: ' + str(len(burners)) + ' CPU-bound processes' if burners else ''}",
            flush=True,
        )
        ok = True
        for game in args.game or GAMES:
            for control in args.control or CONTROLS:
                ok = run_one(args, game, control, root) and ok
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f"events: {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

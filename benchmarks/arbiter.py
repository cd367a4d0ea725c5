"""Arbiter targets: its own overhead per move, and no time forfeits the harness causes.

Usage: python benchmarks/arbiter.py [--game yoxii] [--games 200] [--tc 2+0.05]
                                    [--concurrency 2] [--out DIR]

Plays a match between two ``alphabeta`` bots through the arbiter exactly as ``enginesrv match``
does (worker processes, clocks on the arbiter's side), then reports:

* games, plies, and the time forfeits (target: none);
* the arbiter's overhead per move: the games' wall time minus the time from each ``go`` to its
  answer (target: at most 5 ms on average), and, for information, minus the search time the
  bots themselves reported (the difference is transport to and from the worker processes);
* the results table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import trio

from enginesrv.eventcli import write_tables
from enginesrv.tournament import EventConfig, Finished, prepare, run_event


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="yoxii")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--tc", default="2+0.05")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--out", help="keep the results here (default: a temporary directory)")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="arbiter-bench-"))
    config = prepare(
        EventConfig(
            args.game,
            ("name=a:bot:alphabeta", "name=b:bot:alphabeta"),
            games=args.games,
            tc=args.tc,
            concurrency=args.concurrency,
            event="arbiter benchmark",
        ),
        out,
        resume=False,
    )
    finished: list[Finished] = []

    def on_game(done: Finished) -> None:
        finished.append(done)
        if done.done % 10 == 0 or done.done == done.total:
            print(f"  {done.done}/{done.total} games", file=sys.stderr, flush=True)

    started = time.monotonic()
    standings = trio.run(lambda: run_event(config, out, on_game=on_game))
    wall = time.monotonic() - started
    results = [f.result for f in finished]
    plies = sum(r.plies for r in results)
    forfeits = sum(1 for r in results if r.reason == "time-forfeit")
    game_wall = sum(r.wall for r in results)
    engine = sum(r.engine_time for r in results)
    search = sum(r.search_time for r in results)
    print(f"{args.game}, tc {args.tc}, concurrency {args.concurrency}: {len(results)} games, "
          f"{plies} plies, {wall:.1f} s")  # fmt: skip
    print(f"time forfeits: {forfeits}")
    own = 1000 * (game_wall - engine) / plies
    transport = 1000 * (game_wall - search) / plies
    print(f"arbiter overhead per move (wall - go-to-answer): {own:.2f} ms")
    print(f"overhead per move incl. transport (wall - reported search): {transport:.2f} ms")
    reasons: dict[str, int] = {}
    for r in results:
        reasons[r.reason] = reasons.get(r.reason, 0) + 1
    print("reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    write_tables(sys.stdout, config, standings)
    print(f"results: {out}")
    return 1 if forfeits else 0


if __name__ == "__main__":
    sys.exit(main())

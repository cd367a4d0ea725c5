"""How fast alphabeta obeys ``stop``: the time from the stop request to the search's return.

Usage: python benchmarks/stop_latency.py [--game G ...] [--trials 30] [--target-ms 20]

For each game's ``enginesrv bench`` positions, alphabeta (the compiled core where the game has
one, else the Python reference; ``ENGINESRV_PURE_PYTHON=1`` for the reference everywhere)
starts an infinite search in this process; another thread sets the stop flag after a random
delay of 5 to 300 ms (seeded) and takes the time; the search's ``stop`` callable is the flag's
``is_set``, as the server's worker polls it. It prints per game the median, the 99th percentile
and the worst latency in milliseconds, and exits with status 1 when a worst case exceeds
``--target-ms``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import core_for
from bots.engine import Limits
from enginesrv.search.bench import SEARCH_BENCH


def one_trial(bot: AlphaBeta, state: games.State, delay: float) -> float:
    """Seconds from the stop request to the search's return."""
    flag = threading.Event()
    asked: list[float] = []

    def ask() -> None:
        time.sleep(delay)
        asked.append(time.perf_counter())
        flag.set()

    helper = threading.Thread(target=ask)
    helper.start()
    bot.search(state, Limits(), stop=flag.is_set)
    returned = time.perf_counter()
    helper.join()
    return returned - asked[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="repeatable (default: every bench game)")
    parser.add_argument("--trials", type=int, default=30, help="per position (default 30)")
    parser.add_argument("--target-ms", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ok = True
    for name in args.game or list(SEARCH_BENCH):
        game = games.load(name)
        latencies: list[float] = []
        for case in SEARCH_BENCH[name]:
            bot = AlphaBeta()
            bot.new_game(game)
            for _ in range(args.trials):
                state = game.state_from_string(case.position)
                latencies.append(one_trial(bot, state, rng.uniform(0.005, 0.3)) * 1000)
        latencies.sort()
        worst = latencies[-1]
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        search = "compiled" if core_for(name) is not None else "python"
        verdict = "PASS" if worst <= args.target_ms else "over"
        ok = ok and worst <= args.target_ms
        print(
            f"{name:8} {search:8} {len(latencies)} stops: median "
            f"{statistics.median(latencies):.2f} ms, p99 {p99:.2f} ms, worst {worst:.2f} ms "
            f"({verdict} {args.target_ms:g} ms)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

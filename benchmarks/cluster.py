"""Games per minute of one event played here and on a loopback Dask cluster, and the
coordinator's cost per game.

Usage: python benchmarks/cluster.py [--games 200] [--depth 3] [--json] [--tune]

The event is ``enginesrv match yoxii bot:alphabeta bot:greedy --depth 3 --games 200`` (the
bots are deterministic at a fixed depth, so every run plays the same games). It is played
three times, each as a new ``enginesrv`` process writing its own ``--out`` folder:

1. local: ``--concurrency 2``;
2. cluster of 1: ``--cluster`` to a ``LocalCluster`` of one worker process with one thread;
3. cluster of 2: the same with two workers.

Each run's wall time gives its games per minute. The cluster runs also print the coordinator's
cost per game, from the ``cluster_games_stored`` line the command logs at the end: the time
from a game's end on its worker to its row in the coordinator's store (median and max), in two
parts: the result's way back (sent straight to the coordinator, or through Dask with
``--through-dask``) and its storing. On loopback the worker's clock and the coordinator's are
the same clock.

The clusters' workers run with Dask's statistical profiler off
(``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``, as docs/distributed.md advises): it
samples every worker thread's stack every 10 ms, which on two cores delays the workers'
messages. ``--profiler`` leaves it on.

Targets: the cluster of 2 within 15% of local concurrency 2 in games per minute; the
coordinator's median cost under 5 ms per game. The exit status is 1 when one is missed. The
last lines estimate, on paper, how many workers one coordinator can feed.

``--tune`` measures instead what a tuning run costs its coordinator: ``enginesrv tune yoxii
bot:alphabeta --param EvalYoxiiMobility=...`` and a match of alphabeta against alphabeta with
another weight, the same number of games at the same depth, each on a cluster of 2 (the
tuning run also stores an iteration's probe and step per two games). Target: the tuning run's
median cost and processor time per game no more than the match's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

RATIO_TARGET = 0.85
OVERHEAD_TARGET_MS = 5.0


TUNE_PARAM = "EvalYoxiiMobility=15:-60:60:3"
"""What ``--tune`` tunes: a weight of alphabeta's Yoxii evaluation."""
MATCH = ["match", "yoxii", "bot:alphabeta", "bot:greedy"]
"""The event measured (the words of its command before the flags)."""
TUNE = ["tune", "yoxii", "bot:alphabeta", "--param", TUNE_PARAM]
TUNE_MATCH = ["match", "yoxii", "bot:alphabeta", "bot:alphabeta:EvalYoxiiMobility=18"]
"""A match of the games a tuning run plays: alphabeta against itself with another weight."""


def play(
    out: Path, games: int, depth: int, extra: list[str], *, event: list[str] = MATCH
) -> tuple[float, str, float]:
    """The wall time of one ``enginesrv`` event (``event``: its command's words before the
    flags), its stderr, and the processor time (user and system, all its threads) of the
    command's own process: on a cluster, the coordinator's."""
    command = [
        sys.executable, "-m", "enginesrv.cli", *event,
        "--depth", str(depth), "--games", str(games), "--out", str(out), *extra,
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{proc.stderr[-2000:]}")
    # a cluster's workers are this process's children too, but none ends during the run
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return took, proc.stderr, cpu


def overhead(stderr: str) -> tuple[float, float]:
    """The median and max cost per game of the ``cluster_games_stored`` log line."""
    median = re.search(r"overhead_ms_median=([\d.]+)", stderr)
    worst = re.search(r"overhead_ms_max=([\d.]+)", stderr)
    if median is None or worst is None:
        raise SystemExit("no cluster_games_stored line in the command's log")
    return float(median.group(1)), float(worst.group(1))


TUNE_ROUNDS = 5
"""``--tune`` plays the match and the tuning run this many times each, alternating, and
compares their medians: two runs of the same event differ by 10-30% in these figures."""


def tune_costs(games: int, depth: int) -> int:
    """``--tune``: the coordinator's cost per game (median, and processor time) of a tuning
    run of ``games`` games of alphabeta against itself, and of a match of as many games of
    the same kind (alphabeta against alphabeta with another weight), both on a cluster of 2,
    each ``TUNE_ROUNDS`` times. Target: the tuning run's medians no more than the match's
    (within 5%, the noise left in a median of five)."""
    costs: dict[str, list[tuple[float, float]]] = {"match": [], "tune": []}
    with tempfile.TemporaryDirectory(prefix="enginesrv-cluster-tune-") as tmp:
        # the ignore: distributed's LocalCluster.__init__ has no annotations
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        extra = ["--cluster", cluster.scheduler_address]
        try:
            for rnd in range(TUNE_ROUNDS):
                for kind, event in (("match", TUNE_MATCH), ("tune", TUNE)):
                    out = Path(tmp) / f"{kind}{rnd}"
                    took, err, cpu = play(out, games, depth, extra, event=event)
                    _, _, fixed = play(Path(f"{out}-fixed"), 2, depth, extra, event=event)
                    per_game = 1000 * max(0.0, cpu - fixed) / max(1, games - 2)
                    median, _ = overhead(err)
                    costs[kind].append((median, per_game))
                    print(
                        f"{kind}: {games} games in {took:.1f} s; coordinator cost per game "
                        f"median {median:.2f} ms, processor time {per_game:.2f} ms",
                        flush=True,
                    )
        finally:
            cluster.close()
    found = {
        kind: tuple(statistics.median(run[i] for run in runs) for i in (0, 1))
        for kind, runs in costs.items()
    }
    for kind, (median, per_game) in found.items():
        print(f"{kind}, medians of {TUNE_ROUNDS}: cost per game {median:.2f} ms, processor "
              f"time {per_game:.2f} ms")  # fmt: skip
    ok = all(found["tune"][i] <= found["match"][i] * 1.05 for i in (0, 1))
    print(f"tune's cost per game against a match's: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games (default 200)")
    parser.add_argument("--depth", type=int, default=3, help="the bots' depth (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--profiler", action="store_true", help="leave Dask's worker profiler on")
    parser.add_argument(
        "--through-dask", action="store_true",
        help="the results come back as the tasks' values (--cluster-listen off)",
    )  # fmt: skip
    parser.add_argument(
        "--tune", action="store_true",
        help="instead: the coordinator's cost per game of enginesrv tune against a match of "
        "the same games, on a cluster of 2",
    )  # fmt: skip
    args = parser.parse_args()
    if not args.profiler:
        os.environ["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"
    if args.tune:
        return tune_costs(args.games + args.games % 2, args.depth)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="enginesrv-cluster-") as tmp:
        took, _, _ = play(Path(tmp) / "local", args.games, args.depth, ["--concurrency", "2"])
        figures["local_gpm"] = args.games / took * 60
        print(f"local, concurrency 2: {args.games} games in {took:.1f} s, "
              f"{figures['local_gpm']:.1f} games/min", flush=True)  # fmt: skip
        for workers in (1, 2):
            # the ignore: distributed's LocalCluster.__init__ has no annotations
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
            extra = ["--cluster", cluster.scheduler_address,
                     *(["--cluster-listen", "off"] if args.through_dask else [])]  # fmt: skip
            try:
                took, err, cpu = play(
                    Path(tmp) / f"cluster{workers}", args.games, args.depth, extra
                )
                # the coordinator's fixed cost (starting, connecting, the preflight), from an
                # event of two games, is taken out of its processor time per game
                _, _, fixed = play(Path(tmp) / f"fixed{workers}", 2, args.depth, extra)
            finally:
                cluster.close()
            figures[f"cluster{workers}_cpu_ms_per_game"] = (
                1000 * max(0.0, cpu - fixed) / max(1, args.games - 2)
            )
            median, worst = overhead(err)
            for part in ("transfer", "store"):
                found = re.search(part + r"_ms_median=([\d.]+)", err)
                figures[f"cluster{workers}_{part}_ms_median"] = (
                    float(found.group(1)) if found else float("nan")
                )
            figures[f"cluster{workers}_gpm"] = args.games / took * 60
            figures[f"cluster{workers}_overhead_ms_median"] = median
            figures[f"cluster{workers}_overhead_ms_max"] = worst
            print(
                f"cluster of {workers} worker{'s' if workers > 1 else ''} x 1 thread: "
                f"{args.games} games in {took:.1f} s, {figures[f'cluster{workers}_gpm']:.1f} "
                f"games/min; coordinator cost per game median {median:.2f} ms, max "
                f"{worst:.2f} ms (median parts: the result's way back "
                f"{figures[f'cluster{workers}_transfer_ms_median']:.2f} ms, storing it "
                f"{figures[f'cluster{workers}_store_ms_median']:.2f} ms)",
                flush=True,
            )
    ratio = figures["cluster2_gpm"] / figures["local_gpm"]
    median = figures["cluster2_overhead_ms_median"]
    ok_ratio = ratio >= RATIO_TARGET
    ok_overhead = median < OVERHEAD_TARGET_MS
    print(
        f"cluster of 2 / local: {ratio:.2f} {'PASS' if ok_ratio else 'FAIL'} "
        f"(target >= {RATIO_TARGET:.2f})"
    )
    print(
        f"coordinator cost per game: median {median:.2f} ms "
        f"{'PASS' if ok_overhead else 'FAIL'} (target < {OVERHEAD_TARGET_MS:g} ms)"
    )
    # on paper: the coordinator's own processor time per game (taking the result in, storing
    # it, sending the next game, the display; all its threads) bounds the games it can take in
    # on one core; the storing alone, one game at a time, bounds them too
    store = figures["cluster2_store_ms_median"]
    cpu = figures["cluster2_cpu_ms_per_game"]
    per_thread_s = 60 / figures["cluster1_gpm"]
    capacity = 1000 / max(cpu, store, 1e-3)
    print(
        f"on paper: a game costs the coordinator {cpu:.2f} ms of processor time, and storing "
        f"it {store:.2f} ms (median), so one coordinator takes in about {capacity:,.0f} "
        f"games/s; at {per_thread_s:.2f} s per game and worker thread (this event) that feeds "
        f"about {capacity * per_thread_s:,.0f} worker threads, and at a typical 10+0.1 game of "
        f"about 60 s, about {capacity * 60:,.0f}"
    )
    if args.json:
        print(json.dumps(figures))
    return 0 if ok_ratio and ok_overhead else 1


if __name__ == "__main__":
    sys.exit(main())

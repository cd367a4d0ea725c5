"""Tune a game's evaluation weights with ``enginesrv tune``, and print the SPRT that checks the
result against the weights of today.

Usage: python benchmarks/tune_eval.py GAME [--games 4000] [--tc 2+0.02] [--params NAME,...]
                                      [--divide 40] [--concurrency 2] [--out DIR] [--resume]

The working tree's alphabeta is tuned (``enginesrv tune GAME bot:alphabeta``) on the weight
options of GAME's evaluation (``bots.eval.tuning.TUNABLES``; all of them, or those of
``--params``), each from its default within its option's range, its ``STEP`` (``c_end``) the
range divided by ``--divide`` (at least 1). The games start from the ladder's openings
(``.ladder/openings-GAME.txt``, made by ``benchmarks/openings.py`` on first use), each pair from a
random line. The run is kept in ``--out`` (default ``.ladder/tune/GAME-GAMES``) and resumes
with ``--resume`` (a run stopped with Ctrl-C or ``kill`` loses only the games being played).

At the end it prints the tuned values (``enginesrv tune-report``) and the command of the check:
``benchmarks/ladder.py GAME --tc 5+0.05 --baseline HEAD --new HEAD --new-option ...`` (the
tuned weights on the new side only), for a gain: elo0 = 0, elo1 = 30.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ladder import play  # noqa: E402 (after the path is set)
from bots.eval.tuning import TUNABLES  # noqa: E402

LADDER = ROOT / ".ladder"


def openings(game: str) -> Path:
    """The ladder's openings file of ``game``, made on first use."""
    made = LADDER / f"openings-{game}.txt"
    if not made.exists():
        LADDER.mkdir(exist_ok=True)
        script = ROOT / "benchmarks" / "openings.py"
        subprocess.run([sys.executable, str(script), game, "--out", str(made)], check=True)
    return made


def params(game: str, names: list[str] | None, divide: int) -> list[str]:
    """``NAME=START:MIN:MAX:STEP`` of each weight tuned."""
    known = {t.name: t for t in TUNABLES.get(game, ())}
    if not known:
        sys.exit(f"{game} has no weight options (bots/eval/tuning.py)")
    chosen = names or list(known)
    unknown = [n for n in chosen if n not in known]
    if unknown:
        sys.exit(f"{game} has no weight {unknown[0]}; its weights: {', '.join(known)}")
    out = []
    for name in chosen:
        t = known[name]
        step = max(1, (t.high - t.low) // divide)
        out.append(f"{t.name}={t.default}:{t.low}:{t.high}:{step}")
    return out


def run(command: list[str]) -> int:
    """Run the tuning ``command`` to its end in the repository; its exit status (a SIGTERM to
    this script stops it too, ``ladder.play``)."""
    return play(command, ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="yinsh, yinsh+blitz, yohoho or yoxii")
    parser.add_argument("--games", type=int, default=4000, help="games in all (default 4000)")
    parser.add_argument("--tc", default="2+0.02", help="the clock of each game (2+0.02)")
    parser.add_argument("--params", help="the weights to tune, comma-separated (default: all)")
    parser.add_argument("--divide", type=int, default=40, help="STEP = range / DIVIDE (40)")
    parser.add_argument("--concurrency", type=int, default=2, help="games at once (default 2)")
    parser.add_argument("--out", help="the run's directory (default .ladder/tune/GAME-GAMES)")
    parser.add_argument("--resume", action="store_true", help="finish the run in --out")
    args = parser.parse_args()
    out = Path(args.out) if args.out else LADDER / "tune" / f"{args.game}-{args.games}"
    tune = [sys.executable, "-m", "enginesrv.cli", "tune"]
    if args.resume:
        command = [*tune, "--resume", "--out", str(out)]
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        names = args.params.split(",") if args.params else None
        command = [*tune, args.game, "bot:alphabeta", "--games", str(args.games)]
        for param in params(args.game, names, args.divide):
            command += ["--param", param]
        command += [
            "--tc", args.tc, "--concurrency", str(args.concurrency), "--openings",
            str(openings(args.game)), "--openings-order", "random", "--out", str(out),
        ]  # fmt: skip
    print(" ".join(command), file=sys.stderr, flush=True)
    status = run(command)
    if status != 0:
        sys.exit(status)
    report = subprocess.run(
        [*tune[:-1], "tune-report", str(out), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    values = json.loads(report.stdout)["values"]
    options = " ".join(f"--new-option {name}={value}" for name, value in values.items())
    print(
        f"check: python benchmarks/ladder.py {args.game} --tc 5+0.05 --baseline HEAD --new HEAD "
        f"{options} --elo0 0 --elo1 30 --games 4000 --out .ladder/runs/{args.game}-tuned"
    )


if __name__ == "__main__":
    main()

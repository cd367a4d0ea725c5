"""How long ``enginesrv analyse`` takes: a record of 60 plies or more analysed at a fixed time
a position, on N workers, against the target of the analysis issue (a 60-ply Yinsh record at
``--movetime 500`` on 2 workers in at most 20 s beyond the workers' start).

Usage: python benchmarks/analyse.py [--record FILE] [--game yinsh] [--movetime 500]
                                    [--workers 2] [--target 20]

The record is the first 60 plies of ``tests/data/yinsh/records/bga_862307561.txt`` unless
``--record`` names another (all its plies then). Prints the seconds until the workers were
ready, the seconds of the searches after that, and PASS or FAIL against ``--target``; exit
status 1 on a FAIL. Run it on a quiet machine: the searches take their time, the rest is
overhead.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from enginesrv.event.play.records import format_record, parse_record  # noqa: E402

DEFAULT_RECORD = ROOT / "tests" / "data" / "yinsh" / "records" / "bga_862307561.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, help="a record file (default: 60 plies of Yinsh)")
    parser.add_argument("--game", default="yinsh")
    parser.add_argument("--movetime", type=int, default=500, help="ms a position (500)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--target", type=float, default=20.0, help="seconds beyond the start")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="analyse-bench-") as folder:
        source = Path(folder) / "game.txt"
        if args.record is None:
            record = parse_record(DEFAULT_RECORD.read_text(encoding="utf-8"))
            record.moves = record.moves[:60]
            record.headers.pop("Final", None)
            record.headers.pop("Result", None)
            source.write_text(format_record(record), encoding="utf-8")
        else:
            source.write_text(args.record.read_text(encoding="utf-8"), encoding="utf-8")
        plies = len(parse_record(source.read_text(encoding="utf-8")).moves)
        command = [
            sys.executable, "-m", "enginesrv.cli", "analyse", args.game, str(source),
            "--movetime", str(args.movetime), "--workers", str(args.workers), "--json",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        print(done.stderr.strip(), file=sys.stderr)
        return 2
    seconds = json.loads(done.stdout)["seconds"]
    searching = seconds["all"] - seconds["workers"]
    verdict = "PASS" if searching <= args.target else "FAIL"
    print(
        f"{plies} plies at {args.movetime} ms on {args.workers} workers: workers ready in "
        f"{seconds['workers']:.2f} s, searches {searching:.2f} s (target {args.target:g} s): "
        f"{verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

"""Strength against a fixed baseline: an SPRT match of today's alphabeta against the alphabeta
of a chosen commit, each run as an external engine (``enginesrv engine``), through the
project's own arbiter.

Usage: python benchmarks/ladder.py GAME [--tc 10+0.1 | --st S] [--elo0 0] [--elo1 50]
                                   [--alpha 0.05] [--beta 0.05] [--games 4000]
                                   [--concurrency 2] [--baseline COMMIT|.] [--new COMMIT]
                                   [--option NAME=VALUE ...] [--new-option NAME=VALUE ...]
                                   [--base-option NAME=VALUE ...] [--out DIR] [--resume]

``--baseline .`` runs the working tree on both sides: with ``--new-option`` and
``--base-option`` it measures one option of today's bot against another (for example
``--new-option Samples=8 --base-option Samples=1``).

The baseline (default ``BASELINE``, the last commit of the arbiter's time keeping, on which the
stronger-bots work is measured) is checked out once as a git worktree under ``.ladder/COMMIT``
(ignored by git; its native accelerators are built in place) and run from there: ``env
PYTHONSAFEPATH=1 PYTHONPATH=WORKTREE python -m enginesrv.cli engine --bot alphabeta``, so its
search, evaluation and rules are that commit's and its worker processes inherit them. The new
side is the working tree (or ``--new COMMIT``, checked out the same way). Both sides pay the
same protocol and process costs.

Between near-deterministic bots one start position gives much the same game every time, so the
games start from an openings file (``--openings``; by default ``.ladder/openings-GAME.txt``,
written by ``benchmarks/openings.py`` on first use), each line played twice with colours
swapped (``--repeat``), in an order shuffled by the seed.

The match stops at the SPRT's decision; it is an ordinary event directory (``--out``, default
``.ladder/runs/GAME-TC-BASELINE``), so ``--resume`` goes on where an interrupted run stopped,
across sessions, and ``enginesrv results DIR`` prints it. Ctrl-C, or a SIGTERM to the ladder,
stops the match with it: the games stored are kept, those in flight are played again. Exit
status: 0 when H1 is accepted (the new bot is stronger by elo1), 1 for H0, 2 when no decision
was reached.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "4396702"
"""The commit the stronger-bots measurements compare against."""
LADDER = ROOT / ".ladder"


def worktree(commit: str) -> Path:
    """A checkout of ``commit`` under ``.ladder``, made once."""
    full = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if full.returncode != 0:
        raise SystemExit(f"ladder: no commit {commit!r}: {full.stderr.strip()}")
    path = LADDER / full.stdout.strip()[:12]
    if not (path / "enginesrv").is_dir():
        LADDER.mkdir(exist_ok=True)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
            check=True, capture_output=True,
        )  # fmt: skip
        if (path / "setup.py").exists():  # its native accelerators, built in place
            subprocess.run(
                [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                cwd=path, check=True, capture_output=True,
            )  # fmt: skip
    return path


def engine(name: str, source: Path | None, options: list[str]) -> str:
    """The player spec of alphabeta run from ``source`` (None: the working tree)."""
    command = [sys.executable, "-m", "enginesrv.cli", "engine", "--bot", "alphabeta"]
    if source is not None:
        # PYTHONSAFEPATH: ``python -m`` would otherwise put the working directory (the
        # arbiter's, this checkout) first on the path of the engine and of its workers
        command = ["env", "PYTHONSAFEPATH=1", f"PYTHONPATH={source}", *command]
    prefix = f"name={name}:"
    if options:
        prefix += "options=" + ",".join(options) + ":"
    return f"{prefix}cmd:{shlex.join(command)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", help="yinsh, yinsh+blitz, yohoho, yoxii or yinyang")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument("--tc", help="a clock per player (default 10+0.1)")
    limit.add_argument("--st", help="a fixed time per move, seconds")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=50.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--games", type=int, default=4000, help="the most games (pairs)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--baseline",
        default=BASELINE,
        help=f"a commit (default {BASELINE}), or . for the working tree",
    )
    parser.add_argument("--new", help="a commit for the new side (default: the working tree)")
    parser.add_argument(
        "--option", action="append", default=[], help="NAME=VALUE for both sides, repeatable"
    )
    parser.add_argument(
        "--new-option", action="append", default=[], help="NAME=VALUE for the new side only"
    )
    parser.add_argument(
        "--base-option", action="append", default=[], help="NAME=VALUE for the baseline only"
    )
    parser.add_argument(
        "--openings",
        help="an openings file (default: .ladder/openings-GAME.txt, made by "
        "benchmarks/openings.py on first use; none for Yin Yang), played with --repeat",
    )
    parser.add_argument("--out", help="the event directory")
    parser.add_argument("--resume", action="store_true", help="go on with --out")
    args = parser.parse_args()
    base = None if args.baseline == "." else worktree(args.baseline)
    new = worktree(args.new) if args.new else None
    base_name = "worktree" if base is None else base.name
    control = ["--st", args.st] if args.st else ["--tc", args.tc or "10+0.1"]
    label = (args.st and f"st{args.st}") or (args.tc or "10+0.1")
    out = Path(args.out) if args.out else LADDER / "runs" / f"{args.game}-{label}-{base_name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    openings = args.openings
    if openings is None and args.game != "yinyang":
        made = LADDER / f"openings-{args.game}.txt"
        if not made.exists():
            print(f"ladder: writing {made}", flush=True)
            subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / "openings.py"), args.game,
                 "--out", str(made)],
                check=True,
            )  # fmt: skip
        openings = str(made)
    book = ["--openings", openings, "--repeat", "--openings-order", "random"] if openings else []
    command = [
        sys.executable, "-m", "enginesrv.cli", "match", args.game,
        engine("new", new, [*args.option, *args.new_option]),
        engine("base", base, [*args.option, *args.base_option]),
        *control, *book, "--games", str(args.games), "--concurrency", str(args.concurrency),
        "--sprt", f"elo0={args.elo0},elo1={args.elo1},alpha={args.alpha},beta={args.beta}",
        "--out", str(out), "--event", f"ladder {args.game} against {base_name}",
    ]  # fmt: skip
    if args.resume:
        if not (out / "results.sqlite").exists():
            raise SystemExit(f"ladder: nothing to resume in {out}")
        # the stored event holds the players and limits; the flags above are not repeated
        command = [sys.executable, "-m", "enginesrv.cli", "match", "--resume", "--out", str(out)]
    print("ladder:", shlex.join(command), flush=True)
    status = play(command)
    if status != 0:
        return status
    text = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "results", str(out)],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    print(text, end="")
    if "H1 accepted" in text:
        return 0
    if "H0 accepted" in text:
        return 1
    return 2


def play(command: list[str], cwd: Path | None = None) -> int:
    """Run the match (or tuning) ``command`` to its end, in ``cwd``; its exit status. A
    SIGTERM to this script stops it the same way (it keeps the games stored and drops those
    in flight, so that ``--resume`` goes on), rather than leaving it running without the
    script."""
    proc = subprocess.Popen(command, cwd=cwd)

    def stop(signum: int, frame: object) -> None:
        proc.terminate()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
        if proc.poll() is None:  # the script itself failed: the match ends with it
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())

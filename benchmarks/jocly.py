"""Strength against Jocly's Yohoho AI, through the project's own arbiter.

The working tree's alphabeta (``enginesrv engine --bot alphabeta``, as ``ladder.py`` runs it)
plays Jocly's own AI at one of its levels, both as external engines.

Usage: python benchmarks/jocly.py [--games 100] [--tc 6+0.1] [--level admiral]
                                  [--concurrency 1] [--target 90] [--openings FILE|none]
                                  [--out DIR] [--resume] [--no-verify]

Jocly's side is ``benchmarks/jocly/driver.js`` (node), which speaks the text protocol and plays
Jocly's alpha-beta at the level's own parameters (maximum depth, node budget, candidate turns);
its npm dependencies (the ``jocly`` package, at the version ``package-lock.json`` pins) are
installed on first use with ``npm ci``. The games start from the ladder's openings file
(``.ladder/openings-yohoho.txt``, written by ``benchmarks/openings.py`` on first use), each line
twice with colours swapped: Jocly breaks ties between equally scored turns at random (from the
``Seed`` the arbiter gives every game), but from the start position alone games still repeat
(two of ten did); ``--openings none`` plays from the start position.

After the match it prints the standings (wins, draws, losses, alphabeta's score, Elo with its
95% interval, time forfeits and illegal moves of each side), what the driver reported of its
own searches (turns searched at the level's full node budget; Jocly's candidate turns refused
by our rules; board disagreements), and replays every game with
``benchmarks/jocly/verify.js``: every legal turn at every turn start, played in Jocly's model,
must give the position our rules give. Exit status 1 when alphabeta scores under ``--target``
percent (or a check fails), 2 when the match could not be played (one line on standard error
saying why: node or npm missing, npm ci failing, nothing to resume).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from enginesrv.event.play.records import parse_record  # noqa: E402
from games.native import native_module  # noqa: E402

DRIVER = ROOT / "benchmarks" / "jocly"
LEVELS = ("cabin-boy", "sailor", "officer", "captain", "admiral")
ALPHABETA = "alphabeta"


def die(reason: str) -> NoReturn:
    """One line on standard error, and exit status 2."""
    print(f"jocly: {reason}", file=sys.stderr)
    raise SystemExit(2)


def install() -> None:
    """``npm ci`` in the driver's folder, once (when its ``node_modules`` lacks jocly)."""
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            die(f"{program} is not installed (the driver runs on Node.js)")
    if (DRIVER / "node_modules" / "jocly" / "package.json").exists():
        return
    print(f"jocly: npm ci in {DRIVER}", flush=True)
    done = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"], cwd=DRIVER, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        die(f"npm ci failed in {DRIVER}: {last}")


def players(level: str) -> tuple[str, str]:
    """The two player specs: alphabeta of this checkout, Jocly at ``level``."""
    ours = [sys.executable, "-m", "enginesrv.cli", "engine", "--bot", "alphabeta"]
    theirs = ["node", str(DRIVER / "driver.js")]
    return (
        f"name={ALPHABETA}:cmd:{shlex.join(ours)}",
        f"name=jocly-{level}:options=Level={level}:cmd:{shlex.join(theirs)}",
    )


def openings(given: str | None) -> str:
    """The openings file: ``given``, or the ladder's (written on first use)."""
    if given is not None:
        return given
    made = ROOT / ".ladder" / "openings-yohoho.txt"
    if not made.exists():
        made.parent.mkdir(parents=True, exist_ok=True)
        print(f"jocly: writing {made}", flush=True)
        script = ROOT / "benchmarks" / "openings.py"
        command = [sys.executable, str(script), "yohoho", "--out", str(made)]
        if subprocess.run(command, check=False).returncode != 0:
            die(f"could not write {made}")
    return str(made)


def match_command(args: argparse.Namespace, out: Path) -> list[str]:
    base = [sys.executable, "-m", "enginesrv.cli", "match"]
    if args.resume:
        if not (out / "results.sqlite").exists():
            die(f"nothing to resume in {out}")
        return [*base, "--resume", "--out", str(out)]
    book = ["--openings", openings(args.openings), "--repeat"] if args.openings != "none" else []
    return [
        *base, "yohoho", *players(args.level), "--tc", args.tc, *book,
        "--games", str(args.games), "--concurrency", str(args.concurrency),
        "--out", str(out), "--event", f"alphabeta against Jocly {args.level}",
    ]  # fmt: skip


def results(out: Path) -> dict[str, Any]:
    text = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "results", str(out), "--json"],
        capture_output=True, text=True, check=False, cwd=ROOT,
    ).stdout  # fmt: skip
    try:
        data: dict[str, Any] = json.loads(text)
    except ValueError:
        die(f"no results in {out}")
    return data


def score_interval(points: float, games: int) -> tuple[float, float]:
    """The 95% Wilson interval of a score of ``points`` in ``games`` games."""
    if games == 0:
        return (0.0, 1.0)
    z = 1.96
    p = points / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def standings(data: dict[str, Any]) -> float:
    """Print the standings from alphabeta's side; its score in percent."""
    pairing = data["pairings"][0]
    sign = 1 if pairing["p1"] == ALPHABETA else -1
    w, d, l = pairing["wins"], pairing["draws"], pairing["losses"]  # noqa: E741
    if sign < 0:
        w, l = l, w  # noqa: E741
    games = w + d + l
    points = w + d / 2
    score = 100 * points / games if games else 0.0
    print(f"\n{games} games: alphabeta {w} wins, {d} draws, {l} losses: score {score:.1f}%")
    if pairing["elo"] is not None and pairing["elo_ci95"] is not None:
        value, error = sign * pairing["elo"], pairing["elo_ci95"]
        print(f"Elo {value:+.1f} +/- {error:.1f} (95%, as the arbiter reports it)")
    low, high = score_interval(points, games)
    print(
        f"score 95% interval (Wilson) {100 * low:.1f}% to {100 * high:.1f}%: "
        f"Elo {elo(low):+.0f} to {elo(high):+.0f}"
    )
    for player, reasons in sorted(data["reasons"].items()):
        ends = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
        time_lost = reasons.get("loss:time-forfeit", 0)
        illegal = reasons.get("loss:illegal-move", 0)
        other = sum(reasons.get(f"loss:{r}", 0) for r in ("crash", "stall", "disconnect"))
        print(
            f"  {player}: {ends}; lost on time {time_lost}, illegal moves {illegal}, "
            f"other forfeits (crash, stall, disconnect) {other}"
        )
    return score


def driver_report(out: Path) -> int:
    """Sum the driver's ``game summary`` lines from its standard error; the number of board
    disagreements it saw."""
    pattern = re.compile(
        r"(\d+) turns searched, (\d+) at the level's full budget; mean budget ([\d.]+) .*?; "
        r"(\d+) candidates refused as illegal in (\d+) turns; (\d+) board mismatches"
    )
    turns = full = refused = refused_turns = mismatches = 0
    for log in sorted((out / "logs").glob("jocly-*.stderr")):
        for match in pattern.finditer(log.read_text(encoding="utf-8", errors="replace")):
            turns += int(match[1])
            full += int(match[2])
            refused += int(match[4])
            refused_turns += int(match[5])
            mismatches += int(match[6])
    if turns:
        print(
            f"Jocly searched {turns} turns, {full} ({100 * full / turns:.0f}%) with the level's "
            f"full node budget; {refused} of its candidate turns refused by our rules "
            f"(in {refused_turns} turns); {mismatches} board disagreements"
        )
    return mismatches


def verify(out: Path, level: str) -> bool:
    """Replay the event's games through ``verify.js``; whether all agreed."""
    lines = []
    for path in sorted((out / "games").glob("game-*.txt")):
        record = parse_record(path.read_text(encoding="utf-8"), str(path))
        start = record.headers.get("Start", "startpos")
        head = "" if start in ("", "startpos") else f"fen {start} "
        lines.append(head + "moves " + " ".join(move.token for move in record.moves))
    done = subprocess.run(
        ["node", str(DRIVER / "verify.js"), level], input="\n".join(lines) + "\n",
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("refused "):
            print("  Jocly " + line)
    print((done.stdout.strip().splitlines() or [done.stderr.strip()])[-1])
    return done.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--tc", default="6+0.1", help="a clock per player (default 6+0.1)")
    parser.add_argument("--level", default="admiral", choices=LEVELS, help="Jocly's level")
    parser.add_argument("--concurrency", type=int, default=1, help="games at once (default 1)")
    parser.add_argument(
        "--target", type=float, default=90.0, help="alphabeta's least score, %% (default 90)"
    )
    parser.add_argument(
        "--openings",
        help="an openings file, each line played twice (default: the ladder's, "
        ".ladder/openings-yohoho.txt), or none",
    )
    parser.add_argument("--out", help="the event directory (default .ladder/runs/jocly-LEVEL-TC)")
    parser.add_argument("--resume", action="store_true", help="go on with --out")
    parser.add_argument("--no-verify", action="store_true", help="skip replaying the games")
    args = parser.parse_args()
    default = ROOT / ".ladder" / "runs" / f"jocly-{args.level}-{args.tc}"
    out = Path(args.out) if args.out else default
    install()
    if native_module("bots._core_yohoho") is None:
        print("jocly: warning: alphabeta runs without its compiled core (pip install -e .)")
    out.parent.mkdir(parents=True, exist_ok=True)
    command = match_command(args, out)
    print("jocly:", shlex.join(command), flush=True)
    if subprocess.run(command, check=False, cwd=ROOT).returncode != 0:
        return 2
    data = results(out)
    score = standings(data)
    agreed = driver_report(out) == 0
    # the level actually played (a resumed event keeps its own): from the player's name
    names = [r["player"] for r in data["ratings"] if r["player"].startswith("jocly-")]
    level = names[0].removeprefix("jocly-") if names else args.level
    if not args.no_verify:
        agreed = verify(out, level) and agreed
    if score < args.target:
        print(f"jocly: alphabeta scored {score:.1f}%, under the target of {args.target:g}%")
        return 1
    return 0 if agreed else 1


if __name__ == "__main__":
    sys.exit(main())

"""What a player's lost games say about it, read from a finished match's records (a
``benchmarks/ladder.py`` or ``enginesrv match --out`` directory).

Usage: python benchmarks/losses.py RUN_DIR [--player new] [--margin 100] [--json]

Every game the player lost is replayed with the rules, each decision given to whoever made it,
and the player's own scores (``score=cp:N`` or ``score=mate:N``, from the mover's side, as its
engine reported them) are read along the game. For each loss it prints:

* how the game ended and after how many plies;
* the **turning point**: the player's last decision at which it still thought itself no worse
  than ``-margin`` (centipawns), with the plies left from there to the end, the move it made
  and the position before it (a position string for ``enginesrv show``). A loss whose turning
  point lies few plies before the end is one the search did not see coming: a horizon;
* the **largest drop**: the two consecutive decisions of the player between which its score
  fell the most, and the opponent's moves in between.

Then a summary: the losses by how they ended, and the plies from the turning point to the end
(median, and how many losses came within 4, 8 and 16 plies of a position the player still
judged even). The Yinsh losses against 8019f6d and the Yohoho ones against Jocly were read so.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from enginesrv.event.play.records import RecordError, parse_record  # noqa: E402

MATE = 100_000
"""A ``mate:N`` score, in centipawns (less the plies to it)."""


@dataclass(frozen=True)
class Decision:
    """One decision of the player: its ply, token, reported score and the position before."""

    ply: int
    token: str
    score: int | None
    position: str


@dataclass(frozen=True)
class Loss:
    """What one lost game says (module docstring)."""

    game: str
    seat: int
    reason: str
    plies: int
    turning: Decision | None
    to_end: int | None
    drop: tuple[Decision, Decision] | None
    between: tuple[str, ...]


def score_of(annotations: tuple[tuple[str, str], ...]) -> int | None:
    """The ``score=`` annotation in centipawns, or None."""
    for key, value in annotations:
        if key != "score":
            continue
        kind, _, number = value.partition(":")
        try:
            n = int(number)
        except ValueError:
            return None
        if kind == "cp":
            return n
        if kind == "mate":
            return MATE - abs(n) if n > 0 else -(MATE - abs(n))
    return None


def read_loss(path: Path, player: str, margin: int) -> Loss | None:
    """The loss of ``player`` in the record at ``path``, or None when it did not lose there."""
    record = parse_record(path.read_text(), str(path))
    headers = record.headers
    names = (headers.get("P1"), headers.get("P2"))
    if player not in names:
        return None
    seat = names.index(player)
    if headers.get("Result") != ("p2" if seat == 0 else "p1"):
        return None
    game = games.load(headers.get("Game", ""))
    start = headers.get("Start", "startpos")
    state = game.new_state() if start == "startpos" else game.state_from_string(start)
    mine: list[Decision] = []
    tokens: list[tuple[int, int, str]] = []  # ply, mover, token
    for ply, move in enumerate(record.moves):
        mover = state.to_move()
        if mover == seat:
            mine.append(Decision(ply, move.token, score_of(move.annotations), state.to_string()))
        tokens.append((ply, mover, move.token))
        state.push(state.parse_move(move.token))
    plies = len(record.moves)
    scored = [d for d in mine if d.score is not None]
    turning = next(
        (d for d in reversed(scored) if d.score is not None and d.score >= -margin), None
    )
    drop = None
    between: tuple[str, ...] = ()
    if len(scored) >= 2:
        pairs = list(itertools.pairwise(scored))
        before, after = max(pairs, key=lambda p: (p[0].score or 0) - (p[1].score or 0))
        drop = (before, after)
        between = tuple(
            t for ply, mover, t in tokens if before.ply < ply < after.ply and mover != seat
        )
    return Loss(
        game=path.name,
        seat=seat,
        reason=headers.get("Reason", "?"),
        plies=plies,
        turning=turning,
        to_end=None if turning is None else plies - turning.ply,
        drop=drop,
        between=between,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a match's --out directory")
    parser.add_argument("--player", default="new", help="the player whose losses to read")
    parser.add_argument(
        "--margin", type=int, default=100, help="centipawns below zero still judged even"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per loss")
    args = parser.parse_args()
    paths = sorted((args.run / "games").glob("game-*.txt"))
    if not paths:
        raise SystemExit(f"losses.py: no game records in {args.run / 'games'}")
    losses: list[Loss] = []
    for path in paths:
        try:
            loss = read_loss(path, args.player, args.margin)
        except (RecordError, ValueError) as exc:
            raise SystemExit(f"losses.py: {path}: {exc}") from None
        if loss is not None:
            losses.append(loss)
    if args.json:
        for loss in losses:
            print(json.dumps(asdict(loss)))
        return
    print(f"{args.player}: {len(losses)} games lost of {len(paths)}")
    for loss in losses:
        print(f"\n{loss.game}: lost as p{loss.seat + 1} ({loss.reason}) after {loss.plies} plies")
        if loss.turning is not None:
            t = loss.turning
            print(
                f"  turning point: ply {t.ply} ({loss.to_end} plies before the end), "
                f"score {t.score:+d}, played {t.token}"
            )
            print(f"    position before it: {t.position}")
        else:
            print(f"  never judged itself within {args.margin} of even")
        if loss.drop is not None:
            a, b = loss.drop
            print(
                f"  largest drop: {a.score:+d} at ply {a.ply} ({a.token}) to {b.score:+d} at ply "
                f"{b.ply}; the opponent played {' '.join(loss.between) or 'nothing'} in between"
            )
    if losses:
        reasons: dict[str, int] = {}
        for loss in losses:
            reasons[loss.reason] = reasons.get(loss.reason, 0) + 1
        print("\nlost by: " + ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())))
        ends = [loss.to_end for loss in losses if loss.to_end is not None]
        if ends:
            within = ", ".join(f"{sum(e <= n for e in ends)} within {n}" for n in (4, 8, 16))
            print(
                f"plies from the turning point to the end: median {statistics.median(ends):g}; "
                f"{within}"
            )


if __name__ == "__main__":
    main()

"""How much a game's evaluation swings from one decision to the next, and the tempo terms that
would take the swing out: a starting point for tuning them.

Usage: python benchmarks/tempo.py GAME RECORD... [--option NAME=VALUE ...] [--json]

A search compares values of positions at different depths: a late move reduction searches a
move one decision shallower, the transposition table answers with a value of another depth,
quiescence stands pat. Where a game's turn has several decisions (Yoxii's Totem move, then its
placement), a position one decision deeper is often one of the other kind, and if the
evaluation is worth more to the side to act before its Totem move than before its placement,
every such comparison is off by that much.

For every position of the games in the RECORD files (``enginesrv`` game records, as a match's
``--out`` keeps them) that is not over, and whose static value is not a proven one, this takes
the best value the side to act reaches one decision on, by the static evaluation alone (a
child's value is negated where the other side acts in it), less the position's own value: the
gap. Positions are grouped by their phase and their children's (all the children of a
position are assumed to be of one phase and one side to act, as they are in Yinsh, Yohoho and
Yoxii). An evaluation that added a tempo ``T[phase]`` for the side to act would close the
gaps where, for each group, ``T[phase] - sign * T[child phase]`` equals its mean gap (``sign``
+1 where the same side acts in the child, else -1); the least-squares solution is printed. It
comes on top of any tempo the evaluation has: ``--option`` sets a game's own tempo weights to 0
to measure without them (Yoxii: ``EvalYoxiiTempoTotem=0``, ``EvalYoxiiTempoPlace=0``).

The best child is a maximum over many noisy values, so the gaps run somewhat high: tune from
the printed values (``enginesrv tune``, ``benchmarks/tune_eval.py``) rather than take them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import games  # noqa: E402 (after the path is set)
from bots.eval import MAX_EVAL, Evaluator, evaluator_for  # noqa: E402
from enginesrv.event.play.records import Record, RecordError  # noqa: E402
from enginesrv.event.play.sgf import read_records_file  # noqa: E402
from games import GameError, State  # noqa: E402

PROVEN = MAX_EVAL // 2
"""Static values at least this large either way are taken for proven ones and left out."""

Group = tuple[str, str, int]
"""A position's phase, its children's phase, and +1 where the same side acts in them, else -1."""


def gaps_of(state: State, evaluator: Evaluator) -> tuple[Group, int] | None:
    """The group and the gap of ``state`` (None: over, proven, or no child to compare)."""
    if state.is_terminal():
        return None
    own = evaluator.evaluate(state)
    if abs(own) >= PROVEN:
        return None
    me = state.to_move()
    best: int | None = None
    group: Group | None = None
    for move in state.legal_moves():
        state.push(move)
        if not state.is_terminal():
            value = evaluator.evaluate(state)
            sign = 1 if state.to_move() == me else -1
            if abs(value) < PROVEN:
                best = sign * value if best is None else max(best, sign * value)
                if group is None:
                    group = (state.phase(), state.phase(), sign)
        state.pop()
    if best is None or group is None:
        return None
    return (state.phase(), group[1], group[2]), best - own


def replay(
    game: games.Game, record: Record, evaluator: Evaluator, found: dict[Group, list[int]]
) -> None:
    """Add the gap of every position of ``record`` to ``found``."""
    start = record.start_position()
    state = game.new_state() if start is None else game.state_from_string(start)
    for move in record.moves:
        measured = gaps_of(state, evaluator)
        if measured is not None:
            found.setdefault(measured[0], []).append(measured[1])
        if state.is_terminal():
            return
        state.push(state.parse_move(move.token))


def fit(means: dict[Group, float]) -> dict[str, float]:
    """The tempo per phase closing the mean gaps, by least squares."""
    phases = sorted({g[0] for g in means} | {g[1] for g in means})
    index = {p: i for i, p in enumerate(phases)}
    rows = []
    for phase, child, sign in means:
        row = [0.0] * len(phases)
        row[index[phase]] += 1.0
        row[index[child]] -= sign
        rows.append(row)
    solution = np.linalg.lstsq(np.array(rows), np.array(list(means.values())), rcond=None)[0]
    return {p: float(solution[index[p]]) for p in phases}


def options(pairs: list[str]) -> dict[str, int]:
    """``NAME=VALUE`` pairs as the evaluation's weight options."""
    values: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            values[name] = int(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            sys.exit(f"--option {pair!r}: expected NAME=INTEGER")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="yinsh, yinsh+blitz, yohoho or yoxii")
    parser.add_argument("records", nargs="+", type=Path, help="game record files")
    parser.add_argument("--option", action="append", default=[], help="a weight, NAME=VALUE")
    parser.add_argument("--json", action="store_true", help="print an object, not a table")
    args = parser.parse_args()
    try:
        game = games.load(args.game)
        evaluator = evaluator_for(args.game, options(args.option) or None)
    except (KeyError, GameError) as error:
        sys.exit(f"{args.game}: no such game with an evaluation ({error})")
    found: dict[Group, list[int]] = {}
    for path in args.records:
        try:
            records = read_records_file(path)
        except (OSError, RecordError) as error:
            sys.exit(f"{path}: {error}")
        for record in records:
            if record.game not in (None, args.game):
                continue
            try:
                replay(game, record, evaluator, found)
            except GameError as error:
                sys.exit(f"{path}:{record.line}: {error}")
    if not found:
        sys.exit("no position to measure: are the records of this game?")
    means = {group: statistics.fmean(values) for group, values in found.items()}
    tempo = fit(means)
    if args.json:
        groups = [
            {"phase": p, "child": c, "same_side": s == 1, "positions": len(found[(p, c, s)]),
             "mean_gap": round(means[(p, c, s)], 1)}
            for p, c, s in sorted(found)
        ]  # fmt: skip
        print(json.dumps({"groups": groups, "tempo": {p: round(v) for p, v in tempo.items()}}))
        return
    print(f"{'phase':>6} {'child':>6} {'side':>6} {'positions':>10} {'mean gap':>9} {'median':>7}")
    for phase, child, sign in sorted(found):
        values = found[(phase, child, sign)]
        side = "same" if sign == 1 else "other"
        print(
            f"{phase:>6} {child:>6} {side:>6} {len(values):>10} "
            f"{means[(phase, child, sign)]:>9.1f} {statistics.median(values):>7.1f}"
        )
    print("tempo closing the gaps: " + ", ".join(f"{p} {v:+.0f}" for p, v in tempo.items()))


if __name__ == "__main__":
    main()

"""The time alphabeta spends on a game's opening decisions under a real clock, through the one
time manager matches and the web use (``enginesrv.search.timeman.search_time``).

Usage: python benchmarks/opening_time.py [--game yinsh] [--tc 5:00+3] [--decisions 10]
                                         [--runs 3] [--target 30] [--overhead 50]

Two alphabeta bots play the game's first ``--decisions`` decisions (Yinsh: the ten ring
placements) in this process, each with its own clock: every decision is budgeted by
``search_time`` from the clocks as they stand, with the decision's place in its turn, its
weight (``State.time_weight``) and the game's estimate of the decisions left
(``State.decisions_left``), searched with that target and deadline, and its time taken off
the mover's clock, the increment added, as the arbiter does. Each run after the first starts
from a different first decision (the n-th legal one, played at once and counted among the
``--decisions`` untimed), so the runs are not one game. It prints
every decision (the budget, the time used, the depth reached), each run's total for each side
and for both, and exits with status 1 when a run's decisions took more than ``--target``
seconds together.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits
from enginesrv.event.play.controls import TimeControl
from enginesrv.search.timeman import search_time
from protocol import messages as m


def one_run(game: games.Game, run: int, args: argparse.Namespace) -> float:
    """Play the opening once; print each decision; the seconds all of them took."""
    control = TimeControl.parse(args.tc)
    if control.infinite:
        raise SystemExit("opening_time: --tc needs a clock")
    clocks = [float(control.base_ms), float(control.base_ms)]
    bots = (AlphaBeta(), AlphaBeta())
    for bot in bots:
        bot.new_game(game)
    state = game.new_state()
    if run > 0:  # a different first decision for every run after the first
        moves = state.legal_moves()
        state.push(moves[(run * 7) % len(moves)])
    spent = [0.0, 0.0]
    while state.ply() < args.decisions and not state.is_terminal():
        seat = state.to_move()
        go = m.Go(
            p1time=round(clocks[0]),
            p2time=round(clocks[1]),
            p1inc=control.inc_ms,
            p2inc=control.inc_ms,
        )
        budget = search_time(
            go,
            seat,
            state.turn_position(),
            args.overhead,
            weight=state.time_weight(),
            expected=state.decisions_left(),
        )
        limits = Limits(target=budget.target, deadline=budget.deadline, from_pv=budget.from_pv)
        began = time.monotonic()
        result = bots[seat].search(state, limits)
        used = time.monotonic() - began
        assert result.move is not None, state.to_string()
        clocks[seat] += control.inc_ms - used * 1000
        spent[seat] += used
        print(
            f"  {state.ply():3d} p{seat + 1} {result.token:>6} {state.phase_name():<12}"
            f" weight {state.time_weight():.2f}  target {budget.target or 0:6.2f} s"
            f"  deadline {budget.deadline or 0:6.2f} s  used {used:6.2f} s  depth {result.depth}",
            flush=True,
        )
        state.push(result.move)
    total = spent[0] + spent[1]
    print(f"run {run + 1}: p1 {spent[0]:.1f} s, p2 {spent[1]:.1f} s, both {total:.1f} s")
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="yinsh")
    parser.add_argument(
        "--tc",
        default="5:00+3",
        help="a clock per player, as --tc of a match (default 5:00+3: five minutes, 3 s a move)",
    )
    parser.add_argument("--decisions", type=int, default=10, help="decisions of both sides")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target", type=float, default=30.0, help="seconds, both sides")
    parser.add_argument("--overhead", type=int, default=50, help="MoveOverhead, ms")
    args = parser.parse_args()
    try:
        game = games.load(args.game)
        TimeControl.parse(args.tc)
    except (KeyError, ValueError) as exc:
        parser.error(str(exc))
    worst = 0.0
    for run in range(args.runs):
        worst = max(worst, one_run(game, run, args))
    ok = worst <= args.target
    print(
        f"worst run: {worst:.1f} s for {args.decisions} decisions (target {args.target} s): "
        f"{'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""What knowing the opponent's hidden laws is worth to alphabeta in Yin Yang: an upper bound on
what any use of the determinizer's samples can gain.

Usage: python benchmarks/yinyang_oracle.py [--games 200] [--st 0.3] [--jobs 2] [--seed 1]

Plays games in this process's workers (no arbiter, no engine processes) between two copies of
today's alphabeta with ``Samples=1`` under the same time per decision: the *oracle* searches
the whole position (it sees the opponent's hidden laws, which no player of a real game may),
the other searches its own view as in a match. Colours alternate; setups are each bot's own
(a fresh random secret seed per game). The oracle is what a determinizer with a perfect guess
would play: a way of using several samples that cannot tell the true laws from the others
gains at most about this much over one sample (the issue's Samples=8 against Samples=1).

Prints the oracle's wins, draws and losses, its score, the Elo difference with a 95%
interval, and the log-likelihood ratio of an SPRT with ``--elo0``/``--elo1`` (for reading
only: the run plays ``--games`` games and stops).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from bots.engine import Engine, Limits  # noqa: E402
from bots.registry import create_bot  # noqa: E402
from enginesrv.event.results.stats import (  # noqa: E402
    SprtParams,
    Trinomial,
    elo_estimate,
    llr_trinomial,
)
from enginesrv.search.timeman import allot  # noqa: E402
from games.yinyang import YinYangState  # noqa: E402

MAX_PLIES = 1000
"""A game this long is a draw, as in the arbiter (``DEFAULT_MAX_PLIES``)."""


def _bot(seed: int) -> Engine:
    bot = create_bot("alphabeta")
    bot.set_option("Samples", "1")
    bot.set_option("SecretSeed", str(seed))
    return bot


def play(args: tuple[int, int, int, int]) -> tuple[float, int, float, bool]:
    """One game: the oracle's score (1, 0.5 or 0), the plies, the slowest decision's overrun
    of its deadline in seconds, and whether the winner's last turn applied a law that was
    hidden when the turn began (a *surprise*: the loser could only have guessed it)."""
    index, oracle_seat, movetime_ms, seed = args
    game = games.load("yinyang")
    rng = random.Random(seed * 1_000_003 + index)
    players = (_bot(rng.randrange(1, 2**31)), _bot(rng.randrange(1, 2**31)))
    for bot in players:
        bot.new_game(game)
    state = game.new_state()
    assert isinstance(state, YinYangState)
    worst = -1.0
    surprise = False
    hidden_at_start: tuple[str, ...] | None = None
    while not state.is_terminal() and state.ply() < MAX_PLIES:
        seat = state.to_move()
        if state.phase() == "start":
            surprise = False
            hidden_at_start = state.view(1 - seat).law_entries(seat)
        position = state.copy() if seat == oracle_seat else state.view(seat)
        budget = allot(movetime_ms=movetime_ms, overhead_ms=0, turn=state.turn_position())
        assert budget.target_ms is not None
        assert budget.deadline_ms is not None
        started = time.monotonic()
        result = players[seat].search(
            position,
            Limits(target=budget.target_ms / 1000, deadline=budget.deadline_ms / 1000),
        )
        worst = max(worst, time.monotonic() - started - budget.deadline_ms / 1000)
        if result.token is None:
            raise RuntimeError(f"game {index}: no move at ply {state.ply()}")
        if result.token.startswith("L") and state.phase() != "setup":
            entries = hidden_at_start
            surprise |= entries is not None and entries[int(result.token[1]) - 1] == "?"
        state.push(state.parse_move(result.token))
    outcome = state.outcome()
    if outcome is None or outcome.winner_seat is None:
        return 0.5, state.ply(), worst, False
    won = 1.0 if outcome.winner_seat == oracle_seat else 0.0
    return won, state.ply(), worst, surprise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Yin Yang: alphabeta seeing the opponent's hidden laws against alphabeta "
        "seeing its own view (Samples=1 both), in process"
    )
    parser.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    parser.add_argument("--st", type=float, default=0.3, help="seconds per decision (0.3)")
    parser.add_argument("--jobs", type=int, default=2, help="games at once (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' secret seeds")
    parser.add_argument("--elo0", type=float, default=0.0, help="SPRT H0 (default 0)")
    parser.add_argument("--elo1", type=float, default=35.0, help="SPRT H1 (default 35)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.jobs < 1 or args.st <= 0:
        parser.error("--games and --jobs must be at least 1 and --st above 0")
    sprt = SprtParams(args.elo0, args.elo1, 0.05, 0.05)
    movetime_ms = round(args.st * 1000)
    tasks = [(i, i % 2, movetime_ms, args.seed) for i in range(args.games)]
    wins = draws = losses = 0
    plies: list[int] = []
    worst = -1.0
    surprises = [0, 0]  # the oracle's wins, its losses, that were surprises
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for done, (score, length, overrun, surprise) in enumerate(
            pool.imap_unordered(play, tasks), start=1
        ):
            wins += score == 1.0
            draws += score == 0.5
            losses += score == 0.0
            plies.append(length)
            worst = max(worst, overrun)
            if surprise and score != 0.5:
                surprises[score == 0.0] += 1
            if done % 10 == 0 or done == args.games:
                t = Trinomial(wins, draws, losses)
                est = elo_estimate(t)
                print(
                    f"{done}/{args.games} games ({time.monotonic() - started:.0f} s): "
                    f"oracle {wins}-{draws}-{losses}, score {est.score:.1%}, "
                    f"elo {est.elo:+.1f} +/- {est.ci95:.1f}, "
                    f"LLR {llr_trinomial(t, sprt):.2f} (elo0 {args.elo0:g}, elo1 {args.elo1:g})",
                    flush=True,
                )
    print(
        f"won by a law hidden when the winning turn began: {surprises[0]} of the oracle's "
        f"{wins} wins, {surprises[1]} of its {losses} losses"
    )
    print(
        f"mean game length {sum(plies) / len(plies):.1f} plies; slowest decision "
        f"{worst * 1000:+.0f} ms past its deadline"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

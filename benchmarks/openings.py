"""Opening files for strength measurements: short random lines from the start position that a
shallow search judges about even, one ``moves TOKEN ...`` line each (the ``--openings``
format).

Usage: python benchmarks/openings.py GAME [--count 2000] [--plies 6] [--max-score 150]
                                     [--depth 2] [--seed 1] [--out FILE]

Between two near-deterministic bots every game from one start position is much the same game,
so a match from the start position alone measures one game many times over (an SPRT then sees
no spread, and decides from noise). Each line here is ``--plies`` random legal decisions from the
start (a whole number of turns where the game has multi-decision turns, so that the first
engine move starts a turn), kept when it is not over and alphabeta at ``--depth`` scores it
within ``--max-score`` of even; duplicates are dropped. Played with ``--repeat``, each line is a
pair of games with colours swapped. Yin Yang has no opening file: its secret laws vary every
game already. Without ``--out`` the lines go to standard output.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits


def line(game: games.Game, rng: random.Random, plies: int) -> tuple[str, ...] | None:
    """``plies`` random decisions from the start, stopping at a turn's end, or None when the
    game ended on the way."""
    state = game.new_state()
    tokens: list[str] = []
    while len(tokens) < plies or state.turn_position()[0] > 0:
        if state.is_terminal():
            return None
        moves = state.legal_moves()
        move = moves[rng.randrange(len(moves))]
        tokens.append(state.move_to_str(move))
        state.push(move)
    return None if state.is_terminal() else tuple(tokens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", help="yinsh, yinsh+blitz, yohoho or yoxii")
    parser.add_argument("--count", type=int, default=2000, help="lines to write")
    parser.add_argument("--plies", type=int, default=6, help="random decisions per line")
    parser.add_argument("--max-score", type=int, default=150, help="centipawns from even")
    parser.add_argument("--depth", type=int, default=2, help="the judging search's depth")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="the file to write (default: standard output)")
    args = parser.parse_args()
    try:
        game = games.load(args.game)
    except games.UnknownGameError as exc:
        raise SystemExit(f"openings: {exc}") from None
    if game.hidden_information:
        raise SystemExit(f"openings: {args.game} has hidden information; play it without")
    rng = random.Random(f"openings:{args.game}:{args.seed}")
    judge = AlphaBeta()
    seen: set[tuple[str, ...]] = set()
    lines: list[str] = []
    tries = 0
    while len(lines) < args.count:
        tries += 1
        if tries > 50 * args.count:
            raise SystemExit(f"openings: only {len(lines)} even lines in {tries} tries")
        tokens = line(game, rng, args.plies)
        if tokens is None or tokens in seen:
            continue
        state = game.new_state()
        for token in tokens:
            state.push(state.parse_move(token))
        judge.new_game(game)
        result = judge.search(state, Limits(depth=args.depth))
        score = result.score
        if score is None or score.kind != "cp" or abs(score.value) > args.max_score:
            continue
        seen.add(tokens)
        lines.append("moves " + " ".join(tokens))
        if len(lines) % 200 == 0:
            print(f"openings: {len(lines)}/{args.count}", file=sys.stderr, flush=True)
    text = (
        f"# {args.game}: {args.count} lines of {args.plies} random plies, |score| <= "
        f"{args.max_score} at depth {args.depth}, seed {args.seed}\n" + "\n".join(lines) + "\n"
    )
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

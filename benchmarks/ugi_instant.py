"""A plain UGI engine that answers every ``go`` at once with a random legal move of one game
(``--game``, default yoxii): the probe of ``ladder_server.py``, whose recorded move times are
then the ladder's own latency (the round trip from its ``go`` to the answer, no thinking).

It names no game in its handshake and has no options, as a plain UGI engine: a ladder gives it
the ladder's first game. Usage: python benchmarks/ugi_instant.py [--game yoxii] [--seed N]
"""

from __future__ import annotations

import argparse
import random
import sys

import games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="yoxii", choices=games.available())
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    game = games.load(args.game)
    rng = random.Random(args.seed)
    state = game.new_state()
    out = sys.stdout
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "ugi":
            out.write("id name instant\nid author enginesrv benchmarks\nugiok\n")
        elif command == "isready":
            out.write("readyok\n")
        elif command == "position":
            state = _position(game, words[1:])
        elif command == "go":
            moves = state.legal_moves()
            best = state.move_to_str(rng.choice(moves)) if moves else "none"
            out.write(f"info depth 1 time 0\nbestmove {best}\n")
        elif command == "quit":
            return
        out.flush()


def _position(game: games.Game, words: list[str]) -> games.State:
    """The state of ``position startpos|fen TEXT... [moves M...]``."""
    moves: list[str] = []
    if "moves" in words:
        at = words.index("moves")
        words, moves = words[:at], words[at + 1 :]
    if words[:1] == ["fen"]:
        state = game.state_from_string(" ".join(words[1:]))
    else:
        state = game.new_state()
    for token in moves:
        state.push(state.parse_move(token))
    return state


if __name__ == "__main__":
    main()

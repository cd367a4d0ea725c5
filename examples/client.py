"""Ask an engine for a move with ``enginesrv.client``: set a position, search with progress
shown, print the best move, then play it and show the legal replies.

Usage: python examples/client.py [--connect HOST:PORT | --engine COMMAND...]
                                 [--framing text|msgpack] [--game yoxii]
                                 [--fen POSITION] [--moves M ...] [--movetime MS]

Without ``--connect`` it starts ``enginesrv engine`` as a subprocess and talks to it over
stdin/stdout; with ``--connect`` it talks to a running server (``enginesrv serve``).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

from enginesrv.client import ClientError, Engine, EngineError
from protocol.messages import Info


def show(info: Info) -> None:
    """Print one progress report of the search."""
    if info.depth is not None:
        print(f"  depth {info.depth} score {info.score} nodes {info.nodes} pv {' '.join(info.pv)}")


def open_engine(args: argparse.Namespace) -> Engine:
    if args.connect:
        host, _, port = args.connect.rpartition(":")
        return Engine.connect(host or "127.0.0.1", int(port), framing=args.framing)
    command = shlex.split(args.engine) if args.engine else [
        sys.executable, "-m", "enginesrv.cli", "engine", "--framing", args.framing,
    ]  # fmt: skip
    return Engine.popen(command, framing=args.framing, stderr=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", metavar="HOST:PORT", help="a running server")
    parser.add_argument("--engine", metavar="COMMAND", help="an engine command to start")
    parser.add_argument("--framing", choices=("text", "msgpack"), default="text")
    parser.add_argument("--game", default="yoxii")
    parser.add_argument("--fen", help="a position string (default: the start)")
    parser.add_argument("--moves", nargs="*", default=[], help="moves to play first")
    parser.add_argument("--movetime", type=int, default=500, help="milliseconds to think")
    args = parser.parse_args()
    try:
        with open_engine(args) as engine:
            info = engine.info
            print(f"connected to {info.name} {info.version} (protocol {info.protocol})")
            engine.new_game(args.game)
            engine.position(args.fen, args.moves)
            print(f"position: {engine.query('position')}")
            best = engine.go(movetime=args.movetime, on_info=show)
            print(f"bestmove {best.move} (score {best.score}, depth {best.depth})")
            if best.move is not None:
                print(f"after it: {engine.play(best.move)}")
                replies = engine.legal_moves()
                print(f"{replies.total} legal replies: {' '.join(replies[:10])}")
    except EngineError as exc:
        print(f"the engine refused: {exc}", file=sys.stderr)
        return 1
    except ClientError as exc:
        print(f"no answer: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

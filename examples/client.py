"""Ask an engine for a move with ``enginesrv.client``: set a position, search with progress
shown, print the best move, then play it and show the legal replies.

Usage: python examples/client.py [--connect HOST:PORT | --engine COMMAND...]
                                 [--framing text|msgpack] [--game yoxii]
                                 [--fen POSITION] [--moves M ...] [--movetime MS]
                                 [--tls] [--tls-ca FILE] [--token-file FILE]

Without ``--connect`` it starts ``enginesrv engine`` as a subprocess and talks to it over
stdin/stdout; with ``--connect`` it talks to a running server (``enginesrv serve``): over TLS
with ``--tls`` (the system's authorities) or ``--tls-ca FILE``, presenting the token on the
first line of ``--token-file`` to a server that requires one.
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


def open_engine(args: argparse.Namespace, token: str | None) -> Engine:
    if args.connect:
        host, _, port = args.connect.rpartition(":")
        return Engine.connect(
            host or "127.0.0.1",
            int(port),
            framing=args.framing,
            tls=args.tls,
            cafile=args.tls_ca,
            token=token,
        )
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
    parser.add_argument("--tls", action="store_true", help="with --connect: speak TLS")
    parser.add_argument("--tls-ca", metavar="FILE", help="TLS, trusting FILE's certificates")
    parser.add_argument("--token-file", metavar="FILE", help="a file holding NAME:TOKEN")
    args = parser.parse_args()
    if (args.tls or args.tls_ca or args.token_file) and not args.connect:
        parser.error("--tls, --tls-ca and --token-file go with --connect")
    token = None
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as file:
                token = file.readline().strip()  # NAME:TOKEN, never on the command line
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not a text file"
            print(f"--token-file {args.token_file}: {why}", file=sys.stderr)
            return 2
    try:
        with open_engine(args, token) as engine:
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
    except ValueError as exc:  # a token that is not NAME:TOKEN, among others
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

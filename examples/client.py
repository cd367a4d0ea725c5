"""A msgpack client for an enginesrv server: set a position, search with a progress stream,
print the best move.

Usage: python examples/client.py [--host 127.0.0.1] [--port 7777] [--game yinsh]
                                 [--fen POSITION] [--moves M ...] [--movetime MS]

Start a server first (``enginesrv serve``). Frames are msgpack-RPC (docs/protocol.md §5):
requests ``[0, id, method, [params]]``, responses ``[1, id, error, result]``, and ``info``
notifications ``[2, "info", [{...}]]`` while the search runs.
"""

from __future__ import annotations

import argparse
import socket
from typing import Any

import msgpack


class Client:
    """One connection; ``call`` sends a request and returns its result, printing the
    progress notifications that arrive meanwhile."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=60)
        self.unpacker = msgpack.Unpacker(raw=False)
        self.next_id = 1

    def call(self, method: str, **params: Any) -> Any:
        msgid = self.next_id
        self.next_id += 1
        self.sock.sendall(msgpack.packb([0, msgid, method, [params]]))
        while True:
            for frame in self.unpacker:
                if frame[0] == 2 and frame[1] == "info":
                    info = frame[2][0]
                    pv = " ".join(info.get("pv", []))
                    print(f"  depth {info.get('depth')} score {info.get('score')} "
                          f"nodes {info.get('nodes')} pv {pv}")  # fmt: skip
                elif frame[0] == 1 and frame[1] == msgid:
                    if frame[2] is not None:
                        code, name, message, _ = frame[2]
                        raise SystemExit(f"{method}: error {code} {name}: {message}")
                    return frame[3]
            data = self.sock.recv(65536)
            if not data:
                raise SystemExit("the server closed the connection")
            self.unpacker.feed(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7777)
    parser.add_argument("--game", default="yinsh")
    parser.add_argument("--fen", help="a position string (default: the start)")
    parser.add_argument("--moves", nargs="*", default=[], help="moves to play first")
    parser.add_argument("--movetime", type=int, default=1000, help="milliseconds to think")
    args = parser.parse_args()
    client = Client(args.host, args.port)
    hello = client.call("ugi", protocol=1, client="examples/client.py")
    print(f"connected to {hello['name']} {hello['version']} (protocol {hello['protocol']})")
    client.call("setoption", name="Game", value=args.game)
    position: dict[str, Any] = {"moves": args.moves}
    if args.fen:
        position["fen"] = args.fen
    client.call("position", **position)
    print(f"position: {client.call('query', what='position')['value']}")
    best = client.call("go", movetime=args.movetime)
    print(f"bestmove {best['move']} (score {best.get('score')}, depth {best.get('depth')})")
    client.sock.close()


if __name__ == "__main__":
    main()

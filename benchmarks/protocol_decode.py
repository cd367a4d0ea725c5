"""Decoding throughput of both framings (issue target: 100,000 messages/s each, one core).

Usage: python benchmarks/protocol_decode.py [--count N]

Decodes N typical client messages (a mix of position with a move list, go with clocks,
isready, query and setoption) fed in 4 KiB chunks, as a socket would deliver them, and prints
messages, seconds and messages per second for each framing.
"""

from __future__ import annotations

import argparse
import time

from protocol import messages as m
from protocol.mpack import MsgpackDecoder, encode_request
from protocol.text import TextDecoder, encode_command

TYPICAL: list[m.Command] = [
    m.Position(
        "4/7/5B2/6B2/8BW/6B2/4B1W2W/3W4W/8/7/4 w m 0-0 51",
        ("g11-g9", "c6-c1", "h11-g10", "e9-e5", "g10-f10", "c1-c2"),
    ),
    m.Go(p1time=60000, p2time=58000, p1inc=500, p2inc=500),
    m.IsReady(),
    m.Query("moves"),
    m.SetOption("Hash", "64"),
    m.Position(None, ("f6", "e5", "d4")),
    m.Go(depth=6),
    m.Ping(17),
]


def run(name: str, decoder: TextDecoder | MsgpackDecoder, stream: bytes, expected: int) -> float:
    started = time.perf_counter()
    count = 0
    for i in range(0, len(stream), 4096):
        decoder.feed(stream[i : i + 4096])
        while decoder.next_message() is not None:
            count += 1
    elapsed = time.perf_counter() - started
    assert count == expected, (count, expected)
    rate = count / elapsed
    print(f"{name}: messages {count} seconds {elapsed:.3f} messages/s {rate:,.0f}")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000, help="messages per framing")
    args = parser.parse_args()
    commands = [TYPICAL[i % len(TYPICAL)] for i in range(args.count)]
    text = b"".join(encode_command(c) for c in commands)
    packed = b"".join(encode_request(i & 0xFFFF, c) for i, c in enumerate(commands))
    run("text", TextDecoder(), text, args.count)
    run("msgpack", MsgpackDecoder(), packed, args.count)


if __name__ == "__main__":
    main()

"""A misbehaving search worker for the pool tests: ``python fake_worker.py MODE``.

It speaks the worker pipe protocol of ``enginesrv.search.worker`` (msgpack frames on
stdin/stdout): it sends ``[2, "ready", []]`` at start, then reads ``[0, id, "search", [job]]``
requests and ``[2, "stop", [{"search": id}]]`` notifications.

Modes:

* ``ignore-stop``: on each search it reports one progress notification
  ``[2, "info", [{"search": id, "depth": 1, "pv": [TOKEN]}]]``, TOKEN being the last legal move
  (sorted by token) of the job's position, so that it differs from the first move the server
  would fall back on; then it never answers, and ignores every stop. It leaves at the end of
  its input.
* ``crash``: exits (status 3) on its first search, without answering.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import msgpack

import games

MODES = ("ignore-stop", "crash")


def send(frame: list[Any]) -> None:
    sys.stdout.buffer.write(msgpack.packb(frame, use_bin_type=True))
    sys.stdout.buffer.flush()


def last_token(job: dict[str, Any]) -> str:
    """The last legal move, by token, of the job's position."""
    state = games.load(job["game"]).state_from_string(job["position"])
    return max(state.move_to_str(move) for move in state.legal_moves())


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in MODES:
        sys.stderr.write(f"fake_worker: the mode is one of {', '.join(MODES)}\n")
        sys.exit(2)
    send([2, "ready", []])
    unpacker = msgpack.Unpacker(raw=False)
    while chunk := os.read(sys.stdin.fileno(), 65536):
        unpacker.feed(chunk)
        for frame in unpacker:
            if frame[0] != 0 or frame[2] != "search":
                continue  # a stop: ignored
            if mode == "crash":
                os._exit(3)
            msgid, job = frame[1], frame[3][0]
            send([2, "info", [{"search": msgid, "depth": 1, "pv": [last_token(job)]}]])


if __name__ == "__main__":
    main()

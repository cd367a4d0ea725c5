"""Send a UGI session to a server or an engine line by line, waiting for each answer, and
print the exchange: "> " before each line sent, "< " before each line received.

Usage: python examples/ugi_session.py FILE [--connect HOST:PORT | --engine COMMAND]

FILE holds one command per line; it may also be a transcript such as
examples/ugi-session.txt, whose ``> `` lines are sent and whose ``< `` and ``#`` lines are
skipped. After a ``go`` the next line waits for that search's ``bestmove`` (unless it is
``go infinite``, which waits for a ``stop``), so a ``quit`` at the end of the file cannot stop
the search before it has reported anything, as it does when the file is piped into ``nc``.
Without ``--connect`` it starts ``enginesrv engine`` and talks to it over stdin/stdout. Uses
the standard library only.
"""

from __future__ import annotations

import argparse
import queue
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

QUIET = 0.2
"""Seconds of silence after a command that has no answer of its own (setoption, position...),
which is how long an error about it takes at most to come back on a local connection."""
WAIT = 60.0
"""Seconds at most to wait for any one answer."""
ANSWERS: dict[str, Callable[[str], bool]] = {
    "ugi": lambda line: line == "ugiok",
    "isready": lambda line: line == "readyok",
    "ping": lambda line: line.startswith("pong"),
    "query": lambda line: line.split(" ")[0] in ("response", "invalidmove", "error"),
    "play": lambda line: line.split(" ")[0] in ("response", "invalidmove", "error"),
    "undo": lambda line: line.split(" ")[0] in ("response", "error"),
    "bots": lambda line: line in ("botsok",) or line.startswith("error"),
    "options": lambda line: line in ("optionsok",) or line.startswith("error"),
    "show": lambda line: line in ("showok",) or line.startswith("error"),
}
"""For the commands that answer: the line that ends the answer."""


def commands(path: Path) -> Iterator[str]:
    """The lines of ``path`` to send."""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if raw.startswith("> "):
            yield raw[2:].strip()
        elif line and not line.startswith(("<", "#")):
            yield line


class Peer:
    """Lines to and from a server or an engine; a thread reads them into a queue."""

    def __init__(self, reader: IO[bytes], write: Callable[[bytes], None]) -> None:
        self.write = write
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(reader,), daemon=True).start()

    def _read(self, reader: IO[bytes]) -> None:
        for raw in reader:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        print(f"> {line}", flush=True)
        self.write(line.encode() + b"\n")

    def receive(self, timeout: float) -> str | None:
        """The next line, printed; None at the end of the stream. Raises ``queue.Empty``
        after ``timeout`` seconds without one."""
        line = self.lines.get(timeout=timeout)
        if line is not None:
            print(f"< {line}", flush=True)
        return line


def wait_for(peer: Peer, done: Callable[[str], bool], what: str) -> bool:
    """Print lines until one for which ``done`` holds; False at the end of the stream."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            line = peer.receive(max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError(f"no {what} within {WAIT:.0f} s") from None
        if line is None:
            return False
        if done(line):
            return True


def drain(peer: Peer, quiet: float) -> bool:
    """Print lines until ``quiet`` seconds pass without one; False at the end of the stream."""
    while True:
        try:
            if peer.receive(quiet) is None:
                return False
        except queue.Empty:
            return True


def is_bestmove(line: str) -> bool:
    return line.startswith("bestmove")


def run(peer: Peer, lines: Iterator[str]) -> None:
    """Send ``lines``, each once the answer to the one before has come."""
    searching = False  # a go infinite waits for its stop
    for line in lines:
        peer.send(line)
        word = line.split(" ")[0]
        if word == "quit":
            drain(peer, WAIT)
            return
        if word == "go" and "infinite" not in line.split(" "):
            alive = wait_for(peer, is_bestmove, "bestmove")
        elif word == "go":
            searching, alive = True, drain(peer, QUIET)
        elif word == "stop" and searching:
            searching, alive = False, wait_for(peer, is_bestmove, "bestmove")
        elif word in ANSWERS:
            alive = wait_for(peer, ANSWERS[word], f"answer to {word}")
        else:
            alive = drain(peer, QUIET)
        if not alive:
            print("(the connection closed)", file=sys.stderr)
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("file", type=Path, help="the commands, one a line, or a transcript")
    parser.add_argument("--connect", metavar="HOST:PORT", help="a running server")
    parser.add_argument(
        "--engine", metavar="COMMAND", help="an engine command to start (enginesrv engine)"
    )
    args = parser.parse_args()
    try:
        lines = list(commands(args.file))
    except OSError as exc:
        print(f"{args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        if args.connect:
            host, _, port = args.connect.rpartition(":")
            if not port.isdigit():
                print(f"--connect {args.connect}: expected HOST:PORT", file=sys.stderr)
                return 2
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=10) as sock:
                sock.settimeout(None)
                with sock.makefile("rb") as reader:
                    run(Peer(reader, sock.sendall), iter(lines))
            return 0
        command = shlex.split(args.engine) if args.engine else [
            sys.executable, "-m", "enginesrv.cli", "engine",
        ]  # fmt: skip
        with subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as engine:
            assert engine.stdin is not None
            assert engine.stdout is not None
            stdin = engine.stdin

            def write(data: bytes) -> None:
                stdin.write(data)
                stdin.flush()

            run(Peer(engine.stdout, write), iter(lines))
            stdin.close()
            engine.wait(timeout=10)
    except (OSError, ValueError, TimeoutError, subprocess.TimeoutExpired) as exc:
        print(f"{args.connect or args.engine or 'enginesrv engine'}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

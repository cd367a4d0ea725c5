"""Send a UGI session to a server or an engine line by line, waiting for each answer, and
print the exchange: "> " before each line sent, "< " before each line received.

Usage: python examples/ugi_session.py FILE [--connect HOST:PORT | --engine COMMAND]
                                       [--tls] [--tls-ca FILE] [--token-file FILE]

FILE holds one command per line; it may also be a transcript such as
examples/ugi-session.txt, whose ``> `` lines are sent and whose ``< `` and ``#`` lines are
skipped. After a ``go`` the next line waits for that search's ``bestmove`` (unless it is
``go infinite``, which waits for a ``stop``), so a ``quit`` at the end of the file cannot stop
the search before it has reported anything, as it does when the file is piped into ``nc``.
Without ``--connect`` it starts ``enginesrv engine`` and talks to it over stdin/stdout. A
server started with ``--tls-cert`` is reached with ``--tls`` (the system's authorities) or
``--tls-ca FILE``; one started with ``--tokens`` is sent ``auth NAME:TOKEN`` first, the token
read from the first line of ``--token-file`` and shown as ``auth ***``. Uses the standard
library only.
"""

from __future__ import annotations

import argparse
import queue
import shlex
import socket
import ssl
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
    """Lines to and from a server or an engine: ``next_line(timeout)`` gives the next line
    received (None at the end of the stream), or raises ``queue.Empty``."""

    def __init__(
        self, next_line: Callable[[float], str | None], write: Callable[[bytes], None]
    ) -> None:
        self.next_line = next_line
        self.write = write

    def send(self, line: str, shown: str | None = None) -> None:
        print(f"> {shown or line}", flush=True)
        self.write(line.encode() + b"\n")

    def receive(self, timeout: float) -> str | None:
        """The next line, printed; None at the end of the stream. Raises ``queue.Empty``
        after ``timeout`` seconds without one."""
        line = self.next_line(timeout)
        if line is not None:
            print(f"< {line}", flush=True)
        return line


def thread_lines(reader: IO[bytes]) -> Callable[[float], str | None]:
    """The lines of ``reader`` (an engine's stdout), read by a thread into a queue."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for raw in reader:
            lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lambda timeout: lines.get(timeout=timeout)


def socket_lines(sock: socket.socket) -> Callable[[float], str | None]:
    """The lines of ``sock``, read in the caller's thread: a TLS socket must not be read by one
    thread while another writes to it."""
    buffer = bytearray()

    def next_line(timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in buffer:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            try:
                data = sock.recv(65536)
            except TimeoutError:
                raise queue.Empty from None
            finally:
                sock.settimeout(None)  # sends wait as long as they must
            if not data:
                if not buffer:
                    return None
                buffer.extend(b"\n")  # the last line, which has no end of line
            buffer.extend(data)
        end = buffer.index(b"\n")
        line = buffer[:end].decode("utf-8", "replace").rstrip("\r")
        del buffer[: end + 1]
        return line

    return next_line


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


def connect(args: argparse.Namespace, lines: list[str]) -> None:
    """Send ``lines`` to the server of ``--connect``, over TLS and with a token if asked."""
    host, _, port = args.connect.rpartition(":")
    host = host or "127.0.0.1"
    token = None
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as file:
            token = file.readline().strip()
    with socket.create_connection((host, int(port)), timeout=10) as plain:
        sock = plain
        if args.tls or args.tls_ca:
            context = ssl.create_default_context(cafile=args.tls_ca)
            sock = context.wrap_socket(plain, server_hostname=host)
        with sock:
            peer = Peer(socket_lines(sock), sock.sendall)
            if token:
                peer.send(f"auth {token}", shown="auth ***")
            run(peer, iter(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("file", type=Path, help="the commands, one a line, or a transcript")
    parser.add_argument("--connect", metavar="HOST:PORT", help="a running server")
    parser.add_argument(
        "--engine", metavar="COMMAND", help="an engine command to start (enginesrv engine)"
    )
    parser.add_argument("--tls", action="store_true", help="with --connect: speak TLS")
    parser.add_argument("--tls-ca", metavar="FILE", help="TLS, trusting FILE's certificates")
    parser.add_argument("--token-file", metavar="FILE", help="a file holding NAME:TOKEN")
    args = parser.parse_args()
    if (args.tls or args.tls_ca or args.token_file) and not args.connect:
        parser.error("--tls, --tls-ca and --token-file go with --connect")
    try:
        lines = list(commands(args.file))
    except OSError as exc:
        print(f"{args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        if args.connect:
            if not args.connect.rpartition(":")[2].isdigit():
                print(f"--connect {args.connect}: expected HOST:PORT", file=sys.stderr)
                return 2
            connect(args, lines)
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

            run(Peer(thread_lines(engine.stdout), write), iter(lines))
            stdin.close()
            engine.wait(timeout=10)
    except (OSError, ValueError, TimeoutError, subprocess.TimeoutExpired) as exc:
        print(f"{args.connect or args.engine or 'enginesrv engine'}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

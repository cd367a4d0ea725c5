"""``enginesrv check``: a compliance checker for servers and engines speaking the protocol.

It runs a scripted conversation and prints one ``PASS``/``FAIL`` line per check: the text
framing over a TCP connection or with a command it starts (an engine on stdin/stdout), and over
TCP the msgpack framing too. Every read has a deadline, so a silent peer fails a check instead
of hanging the checker.
"""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any, TextIO

import msgpack

READ_TIMEOUT = 10.0


class PeerError(Exception):
    """The peer closed, went silent, or answered something unexpected."""


class _Lines:
    """Line-oriented reading with deadlines over a socket or a process's pipes."""

    def __init__(self, send: Callable[[bytes], None], receive: Callable[[float], bytes]) -> None:
        self._send = send
        self._receive = receive
        self.buffer = b""

    def send(self, *lines: str) -> None:
        self._send("".join(f"{line}\n" for line in lines).encode())

    def line(self, timeout: float = READ_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerError(f"no line within {timeout:g} s")
            data = self._receive(left)
            if not data:
                raise PeerError("the peer closed the connection")
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")

    def until(self, prefix: str, timeout: float = READ_TIMEOUT) -> list[str]:
        lines: list[str] = []
        while not lines or not lines[-1].startswith(prefix):
            lines.append(self.line(timeout))
        return lines


def _socket_lines(host: str, port: int) -> tuple[_Lines, socket.socket]:
    sock = socket.create_connection((host, port), timeout=READ_TIMEOUT)

    def receive(timeout: float) -> bytes:
        sock.settimeout(timeout)
        try:
            return sock.recv(65536)
        except TimeoutError:
            raise PeerError(f"no answer within {timeout:.1f} s") from None

    return _Lines(sock.sendall, receive), sock


class Checker:
    """Runs the checks and keeps the tally."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.passed = 0
        self.failed = 0

    def check(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except (PeerError, AssertionError, OSError, ValueError, KeyError, IndexError) as exc:
            self.failed += 1
            self.out.write(f"FAIL {name}: {exc or type(exc).__name__}\n")
        else:
            self.passed += 1
            self.out.write(f"PASS {name}\n")
        self.out.flush()


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def check_text(checker: Checker, peer: _Lines, game: str) -> None:
    """The text framing checks."""
    state: dict[str, Any] = {}

    def handshake() -> None:
        peer.send("ugi")
        lines = peer.until("ugiok")
        _expect(lines[0].startswith("id name "), f"first line {lines[0]!r} is not 'id name'")

    def ready() -> None:
        peer.send("isready")
        _expect(peer.line() == "readyok", "isready was not answered with readyok")

    def options() -> None:
        peer.send(f"setoption name Game value {game}", "isready")
        line = peer.line()
        _expect(line == "readyok", f"setoption Game {game}: got {line!r}")

    def moves() -> None:
        peer.send("position startpos", "query moves")
        line = peer.line()
        _expect(line.startswith("response "), f"query moves: got {line!r}")
        state["moves"] = line.split()[1:]
        _expect(bool(state["moves"]), "no legal move at the start")

    def play_undo() -> None:
        peer.send("query position", f"play {state['moves'][0]}", "undo", "query position")
        start, played, undone, again = (peer.line() for _ in range(4))
        _expect(played.startswith("response ") and played != start, f"play: got {played!r}")
        _expect(undone == start == again, f"undo did not restore the position: {undone!r}")

    def go(limit: str) -> Callable[[], None]:
        def run() -> None:
            peer.send("position startpos", f"go {limit}")
            best = peer.until("bestmove")[-1].split()
            _expect(len(best) >= 2 and best[1] in state["moves"], f"illegal {best!r}")

        return run

    def during_search() -> None:
        peer.send("go infinite", "isready")
        _expect(peer.line(2.0) == "readyok", "isready not answered during the search")
        peer.send("position startpos")
        line = peer.line()
        _expect(line.startswith("error 204 "), f"position during search: got {line!r}")
        started = time.monotonic()
        peer.send("stop")
        best = peer.until("bestmove")[-1]
        _expect(time.monotonic() - started < 1.0, "stop took more than 1 s")
        _expect(best.split()[1] in state["moves"], f"illegal {best!r} after stop")

    def error(command: str, prefix: str) -> Callable[[], None]:
        def run() -> None:
            peer.send(command)
            line = peer.line()
            _expect(line.startswith(prefix), f"{command!r}: expected {prefix!r}, got {line!r}")

        return run

    checker.check("text: handshake ugi ... ugiok", handshake)
    checker.check("text: isready -> readyok", ready)
    checker.check(f"text: setoption name Game value {game}", options)
    checker.check("text: position startpos, query moves", moves)
    checker.check("text: play and undo", play_undo)
    for limit in ("depth 1", "nodes 200", "movetime 200", "p1time 2000 p2time 2000"):
        checker.check(f"text: go {limit}", go(limit))
    checker.check("text: isready and 204 during go infinite, then stop", during_search)
    checker.check("text: unknown command is error 100", error("frobnicate", "error 100 "))
    checker.check("text: bad arguments are error 101", error("go depth x", "error 101 "))
    checker.check("text: bad position is error 202", error("position fen x y", "error 202 "))
    checker.check(
        "text: illegal move is invalidmove", error("position startpos moves zz99", "invalidmove ")
    )
    checker.check("text: impossible undo is error 101", error("undo 999", "error 101 "))


def check_msgpack(checker: Checker, host: str, port: int, game: str) -> None:
    """The msgpack framing checks (over TCP)."""
    sock = socket.create_connection((host, port), timeout=READ_TIMEOUT)
    unpacker = msgpack.Unpacker(raw=False)

    def call(msgid: int, method: str, params: dict[str, Any]) -> list[Any]:
        sock.sendall(msgpack.packb([0, msgid, method, [params]]))
        deadline = time.monotonic() + READ_TIMEOUT
        while True:
            for frame in unpacker:
                if frame[0] == 1 and frame[1] == msgid:
                    return list(frame)
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = sock.recv(65536)
            if not data:
                raise PeerError("the peer closed the connection")
            unpacker.feed(data)

    def hello() -> None:
        answer = call(1, "ugi", {"protocol": 1})
        _expect(answer[2] is None and answer[3]["protocol"] == 1, f"ugi: {answer!r}")

    def go() -> None:
        call(2, "setoption", {"name": "Game", "value": game})
        answer = call(3, "go", {"depth": 1})
        _expect(answer[2] is None and isinstance(answer[3]["move"], str), f"go: {answer!r}")

    def error(msgid: int, method: str, params: dict[str, Any], code: int) -> Callable[[], None]:
        def run() -> None:
            answer = call(msgid, method, params)
            _expect(answer[2] is not None and answer[2][0] == code, f"{method}: {answer!r}")

        return run

    try:
        checker.check("msgpack: ugi with protocol 1", hello)
        checker.check("msgpack: go depth 1 answered with a move", go)
        checker.check("msgpack: unknown method is error 100", error(4, "fly", {}, 100))
        checker.check("msgpack: wrong params are error 101", error(5, "go", {"depth": "x"}, 101))
        checker.check(
            "msgpack: stop of no search is error 205", error(6, "stop", {"search": 99}, 205)
        )
    finally:
        sock.close()


def run_check(
    *, connect: tuple[str, int] | None, command: list[str] | None, game: str, out: TextIO
) -> bool:
    """Run every check against a server (``connect``) or an engine command; True if all pass."""
    checker = Checker(out)
    if connect is not None:
        peer, sock = _socket_lines(*connect)
        try:
            check_text(checker, peer, game)
        finally:
            sock.close()
        check_msgpack(checker, connect[0], connect[1], game)
    else:
        if not command:
            raise ValueError("no command to start")
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        if proc.stdin is None or proc.stdout is None:
            raise OSError("the engine's pipes could not be opened")
        stdin, stdout = proc.stdin, proc.stdout

        def send(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        def receive(timeout: float) -> bytes:
            with selectors.DefaultSelector() as sel:
                sel.register(stdout, selectors.EVENT_READ)
                if not sel.select(timeout):
                    raise PeerError(f"no answer within {timeout:.1f} s")
            return os.read(stdout.fileno(), 65536)

        try:
            check_text(checker, _Lines(send, receive), game)
            send(b"quit\n")
            proc.wait(timeout=10)
        except (PeerError, OSError, subprocess.TimeoutExpired) as exc:
            checker.failed += 1
            out.write(f"FAIL the engine process: {exc}\n")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            stdin.close()
            stdout.close()
    total = checker.passed + checker.failed
    if checker.failed:
        out.write(f"check: {checker.failed} of {total} checks fail\n")
    else:
        out.write(f"check: all {total} checks pass\n")
    return checker.failed == 0

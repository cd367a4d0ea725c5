"""The tools of ``enginesrv check``: the tally of checks (``Checker``), what a failing check
raises, and the raw connections (``Raw``) on which the checks that must send malformed
traffic on purpose speak bytes, to a server or to an engine process started once more."""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import IO, TextIO

from enginesrv.client import ClientError, EngineError
from protocol import rpc
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder
from protocol.text import TextDecoder

READ_TIMEOUT = 10.0
"""Seconds a check waits for each answer."""
SENT = (OSError, ValueError, KeyError, IndexError)
"""What else a check may raise when the peer's answers are not what it needs: a failed check."""


class PeerError(Exception):
    """The peer closed, went silent, or answered something unexpected."""


class GaveUpError(Exception):
    """A check failed that every later check needs (the handshake): the run ends."""


class Raw:
    """Bytes out, and what comes back decoded by the protocol's client-side decoders: for the
    checks that send malformed traffic on purpose."""

    def __init__(
        self,
        send: Callable[[bytes], None],
        receive: Callable[[float], bytes],
        decoder: TextDecoder | MsgpackDecoder,
    ) -> None:
        self._send = send
        self._receive = receive
        self._decoder = decoder

    def send(self, *lines: str) -> None:
        self._send("".join(f"{line}\n" for line in lines).encode())

    def send_frame(self, frame: object) -> None:
        self._send(rpc.pack(frame))

    def next(self, timeout: float = READ_TIMEOUT) -> object:
        """The next message, decoded; lines that are not messages are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._decoder.next_message()
            except ProtocolError as exc:
                if exc.fatal:
                    raise PeerError(f"it broke the framing: {exc}") from None
                continue
            if message is not None:
                return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerError(f"no answer within {timeout:g} s")
            data = self._receive(left)
            if not data:
                raise PeerError("the peer closed the connection")
            self._decoder.feed(data)

    def until(self, kind: type | tuple[type, ...], timeout: float = READ_TIMEOUT) -> object:
        """The next message of ``kind``, skipping others (progress, listings)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(max(0.0, deadline - time.monotonic()))
            if isinstance(message, kind):
                return message


@contextlib.contextmanager
def raw_socket(host: str, port: int, framing: str) -> Iterator[Raw]:
    sock = socket.create_connection((host, port), timeout=READ_TIMEOUT)

    def receive(timeout: float) -> bytes:
        sock.settimeout(timeout)
        try:
            return sock.recv(65536)
        except TimeoutError:
            raise PeerError(f"no answer within {timeout:.1f} s") from None

    decoder = TextDecoder("client") if framing == "text" else MsgpackDecoder("client")
    try:
        yield Raw(sock.sendall, receive, decoder)
    finally:
        sock.close()


@contextlib.contextmanager
def raw_process(command: list[str], checker: Checker, stderr: IO[bytes]) -> Iterator[Raw]:
    """The engine started once more for the raw checks; at the end, ``quit`` and a check that
    it exits by itself. Its standard error goes to ``stderr``."""
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0
    )
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
        yield Raw(send, receive, TextDecoder("client"))
        send(b"quit\n")
        proc.wait(timeout=10)
    except (PeerError, OSError, subprocess.TimeoutExpired) as exc:
        checker.failed += 1
        checker.out.write(f"FAIL the engine process: {exc}\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stdin.close()
        stdout.close()


class Checker:
    """Runs the checks and keeps the tally."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.passed = 0
        self.failed = 0

    def check(self, name: str, fn: Callable[[], None]) -> bool:
        """Run one check and report it; whether it passed."""
        try:
            fn()
        except (PeerError, ClientError, AssertionError, *SENT) as exc:
            self.failed += 1
            self.out.write(f"FAIL {name}: {exc or type(exc).__name__}\n")
            self.out.flush()
            return False
        self.passed += 1
        self.out.write(f"PASS {name}\n")
        self.out.flush()
        return True


def expect(condition: bool, message: str) -> None:
    """Fail the check, with ``message``, unless ``condition`` (not an ``assert``: it holds
    under ``python -O`` too)."""
    if not condition:
        raise AssertionError(message)


def expect_error(fn: Callable[[], object], code: int, what: str) -> EngineError:
    """The EngineError ``fn`` must raise, with ``code``."""
    try:
        fn()
    except EngineError as exc:
        expect(exc.code == code, f"{what}: expected error {code}, got {exc}")
        return exc
    raise AssertionError(f"{what}: expected error {code}, got no error")

"""The tools of ``enginesrv check``: the tally of checks (``Checker``), what a failing check
raises, and the raw connections (``Raw``) on which the checks that must send malformed
traffic on purpose speak bytes, to a server or to an engine process started once more. A
server's connections, raw or through the client, go over TLS and present a token as
``Access`` says."""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Literal, TextIO

from enginesrv.client import ClientError, Engine, EngineError
from protocol import messages as m
from protocol import rpc
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder, parse_result
from protocol.text import TextDecoder

READ_TIMEOUT = 10.0
"""Seconds a check waits for each answer."""
SENT = (OSError, ValueError, KeyError, IndexError)
"""What else a check may raise when the peer's answers are not what it needs: a failed check."""


class PeerError(Exception):
    """The peer closed, went silent, or answered something unexpected."""


class GaveUpError(Exception):
    """A check failed that every later check needs (the handshake): the run ends."""


class AccessError(Exception):
    """The server requires a token and none was given, or refused the one given: no check
    can run, and the run ends with this one line. It never quotes the token."""


Framing = Literal["text", "msgpack"]


@dataclass(frozen=True)
class Access:
    """How the checks reach a server: over TLS with ``tls`` (None: plain TCP), presenting
    ``token`` (``NAME:TOKEN``; never shown) when the handshake asks for one."""

    tls: ssl.SSLContext | None = None
    token: str | None = field(default=None, repr=False)

    def connect(self, host: str, port: int, framing: Framing, timeout: float) -> Engine:
        """A client connection, TLS and token included."""
        tls = False if self.tls is None else self.tls
        return Engine.connect(
            host, port, framing=framing, timeout=timeout, tls=tls, token=self.token
        )


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
def raw_socket(host: str, port: int, framing: Framing, access: Access) -> Iterator[Raw]:
    """A raw connection to a server, over TLS if ``access`` says so (nothing is sent yet:
    ``open_session`` greets the server and presents the token).

    Raises:
        OSError: the server cannot be reached, or the TLS handshake fails.
    """
    sock = socket.create_connection((host, port), timeout=READ_TIMEOUT)
    if access.tls is not None:
        try:
            sock = access.tls.wrap_socket(sock, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            sock.close()
            raise OSError(
                f"TLS: certificate verify failed: {exc.verify_message or exc.reason}"
            ) from None
        except OSError as exc:  # ssl.SSLError included
            sock.close()
            reason = exc.reason if isinstance(exc, ssl.SSLError) else None
            raise OSError(f"TLS: the handshake failed ({reason or exc})") from None

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


def open_session(raw: Raw, framing: Framing, access: Access, timeout: float) -> None:
    """Greet a server on a raw connection and present the token if its handshake asks for
    one (in msgpack only with a token: the text greeting has found out already whether one is
    needed).

    Raises:
        AccessError: the server requires a token and none was given, or refused it.
        PeerError: no handshake within ``timeout`` seconds, or a broken one.
    """
    if framing == "msgpack":
        if access.token is None:
            return
        raw.send_frame([0, 1, "ugi", [{"protocol": m.PROTOCOL_VERSION}]])
        answer = _response(raw, 1, timeout)
        try:
            hello = None if answer.error is not None else parse_result("ugi", answer.result)
        except ProtocolError as exc:
            raise PeerError(f"ugi: {exc}") from None
        if isinstance(hello, m.Handshake) and _wants_token(hello.auth, access):
            raw.send_frame([0, 2, "auth", [{"token": access.token}]])
            _accepted(_response(raw, 2, timeout).error, access)
        return
    raw.send("ugi")
    deadline = time.monotonic() + timeout
    wanted = None
    try:
        while not isinstance(message := raw.next(deadline - time.monotonic()), m.UgiOk):
            if isinstance(message, m.AuthLine):
                wanted = message.kind
    except PeerError as exc:
        if access.tls is not None:
            raise
        raise PeerError(f"{exc} (if the server speaks TLS: give --tls or --tls-ca)") from None
    if _wants_token(wanted, access):
        raw.send(f"auth {access.token}", "isready")
        reply = raw.until((m.ReadyOk, m.ErrorReply), timeout)
        _accepted(reply if isinstance(reply, m.ErrorReply) else None, access)


def _response(raw: Raw, msgid: int, timeout: float) -> m.RpcResult:
    """The response to request ``msgid``."""
    deadline = time.monotonic() + timeout
    while True:
        answer = raw.until(m.RpcResult, max(0.0, deadline - time.monotonic()))
        assert isinstance(answer, m.RpcResult)
        if answer.msgid == msgid:
            return answer


def _wants_token(kind: str | None, access: Access) -> bool:
    """Whether to present the token for a handshake that asks for ``kind``."""
    if kind is None:
        return False
    if kind != "token":
        raise AccessError(f"the server requires auth {kind}, which the check cannot give")
    if access.token is None:
        raise AccessError("the server requires a token: give --token-file FILE (NAME:TOKEN)")
    return True


def _accepted(error: m.ErrorReply | None, access: Access) -> None:
    """Raise AccessError for the server's refusal of the token (``error``)."""
    if error is None:
        return
    why = f"error {error.code} {error.name} {error.message}"
    token = access.token or ""
    for secret in (token, token.partition(":")[2]):
        if secret:  # a server may quote it; this check does not
            why = why.replace(secret, "***")
    raise AccessError(f"the server refused the token of --token-file: {why}")


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

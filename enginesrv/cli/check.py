"""``enginesrv check``: a compliance checker for servers and engines speaking the protocol.

It runs a scripted conversation and prints one ``PASS``/``FAIL`` line per check: the text
framing over a TCP connection or with a command it starts (an engine on stdin/stdout), and over
TCP the msgpack framing too. The well-formed conversation goes through ``enginesrv.client``;
the malformed commands a check must send on purpose go out as raw bytes on a second connection
(or a second engine process), and what comes back is decoded by the protocol package. Every
read has a deadline, so a silent peer fails a check instead of hanging the checker; a peer
that does not answer the handshake within a few seconds ends the run there, since no other
check can run without it. An engine's standard error (its log lines) is kept off the report:
it is collected, and its last lines are shown on stderr when a check fails.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import IO, TextIO

from enginesrv.client import ClientError, Clock, Engine, EngineError, LegalMoves
from protocol import messages as m
from protocol import rpc
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder
from protocol.text import TextDecoder

READ_TIMEOUT = 10.0
HANDSHAKE_TIMEOUT = 5.0
"""Seconds the peer has to answer ``ugi`` (``--handshake-timeout``) before the run ends."""
LOG_TAIL = 20
"""Lines of the engine's standard error shown when a check fails."""
LOG_TAIL_BYTES = 64 << 10
"""The most of the end of the engine's standard error read for them (it may have written a
great deal), and ``LOG_LINE_CHARS`` the most of one line shown."""
LOG_LINE_CHARS = 500
SENT = (OSError, ValueError, KeyError, IndexError)


class PeerError(Exception):
    """The peer closed, went silent, or answered something unexpected."""


class GaveUpError(Exception):
    """A check failed that every later check needs (the handshake): the run ends."""


class _Raw:
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
def _raw_socket(host: str, port: int, framing: str) -> Iterator[_Raw]:
    sock = socket.create_connection((host, port), timeout=READ_TIMEOUT)

    def receive(timeout: float) -> bytes:
        sock.settimeout(timeout)
        try:
            return sock.recv(65536)
        except TimeoutError:
            raise PeerError(f"no answer within {timeout:.1f} s") from None

    decoder = TextDecoder("client") if framing == "text" else MsgpackDecoder("client")
    try:
        yield _Raw(sock.sendall, receive, decoder)
    finally:
        sock.close()


@contextlib.contextmanager
def _raw_process(command: list[str], checker: Checker, stderr: IO[bytes]) -> Iterator[_Raw]:
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
        yield _Raw(send, receive, TextDecoder("client"))
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


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _error(fn: Callable[[], object], code: int, what: str) -> EngineError:
    """The EngineError ``fn`` must raise, with ``code``."""
    try:
        fn()
    except EngineError as exc:
        _expect(exc.code == code, f"{what}: expected error {code}, got {exc}")
        return exc
    raise AssertionError(f"{what}: expected error {code}, got no error")


def check_text(checker: Checker, open_engine: Callable[[], Engine], raw: _Raw, game: str) -> None:
    """The text framing checks: the conversation through the client, the malformed commands
    on ``raw``."""
    opened: list[Engine] = []
    state: dict[str, LegalMoves] = {}

    def engine() -> Engine:
        if not opened:
            raise PeerError("no engine: the handshake failed")
        return opened[0]

    def handshake() -> None:
        opened.append(open_engine())
        _expect(bool(engine().info.name), "the handshake has no 'id name'")

    def options() -> None:
        engine().set_option("Game", game)
        raw.send(f"setoption name Game value {game}", "isready")
        raw.until(m.ReadyOk)

    def moves() -> None:
        engine().position()
        state["moves"] = engine().legal_moves()
        _expect(bool(state["moves"]), "no legal move at the start")

    def play_undo() -> None:
        e = engine()
        start = e.query("position")
        played = e.play(state["moves"][0])
        _expect(played != start, f"play: the position did not change: {played!r}")
        undone = e.undo()
        _expect(undone == start == e.query("position"), f"undo did not restore: {undone!r}")

    def go(depth: int | None = None, nodes: int | None = None, movetime: int | None = None,
           clock: Clock | None = None) -> Callable[[], None]:  # fmt: skip
        def run() -> None:
            engine().position()
            best = engine().go(depth=depth, nodes=nodes, movetime=movetime, clock=clock)
            _expect(best.move in state["moves"], f"illegal {best!r}")

        return run

    def during_search() -> None:
        raw.send("position startpos", "go infinite", "isready")
        raw.until(m.ReadyOk, 2.0)
        raw.send("position startpos")
        answer = raw.until((m.ErrorReply, m.InvalidMove))
        _expect(isinstance(answer, m.ErrorReply) and answer.code == 204, f"got {answer!r}")
        started = time.monotonic()
        raw.send("stop")
        best = raw.until(m.BestMove)
        _expect(time.monotonic() - started < 1.0, "stop took more than 1 s")
        assert isinstance(best, m.BestMove)
        _expect(best.move in state["moves"], f"illegal {best.move!r} after stop")

    def raw_error(command: str, code: int) -> Callable[[], None]:
        def run() -> None:
            raw.send(command)
            answer = raw.until((m.ErrorReply, m.InvalidMove))
            ok = isinstance(answer, m.ErrorReply) and answer.code == code
            _expect(ok, f"{command!r}: expected error {code}, got {answer!r}")
            if command.startswith("go "):  # a refused go still gets its one bestmove
                best = raw.until(m.BestMove, 2.0)
                assert isinstance(best, m.BestMove)
                _expect(best.move is None, f"{command!r}: expected bestmove none, got {best!r}")

        return run

    def bad_position() -> None:
        _error(lambda: engine().position("x y"), 202, "position fen x y")

    def bad_undo() -> None:
        _error(lambda: engine().undo(999), 101, "undo 999")

    def invalid_move() -> None:
        exc = _error(lambda: engine().position(None, ["zz99"]), 201, "an illegal move")
        _expect(exc.data is not None and exc.data.get("move") == "zz99", f"got {exc}")

    try:
        if not checker.check("text: handshake ugi ... ugiok", handshake):
            raise GaveUpError("no handshake, and no other check can run without one")
        checker.check("text: isready -> readyok", lambda: engine().isready())
        checker.check(f"text: setoption name Game value {game}", options)
        checker.check("text: position startpos, query moves", moves)
        checker.check("text: play and undo", play_undo)
        checker.check("text: go depth 1", go(depth=1))
        checker.check("text: go nodes 200", go(nodes=200))
        checker.check("text: go movetime 200", go(movetime=200))
        checker.check("text: go p1time 2000 p2time 2000", go(clock=Clock(2000, 2000)))
        checker.check("text: isready and 204 during go infinite, then stop", during_search)
        checker.check("text: unknown command is error 100", raw_error("frobnicate", 100))
        checker.check(
            "text: bad arguments are error 101, then bestmove none",
            raw_error("go depth x", 101),
        )
        checker.check("text: bad position is error 202", bad_position)
        checker.check("text: illegal move is invalidmove", invalid_move)
        checker.check("text: impossible undo is error 101", bad_undo)
    finally:
        for e in opened:
            e.quit()


def check_msgpack(checker: Checker, host: str, port: int, game: str) -> None:
    """The msgpack framing checks (over TCP)."""
    opened: list[Engine] = []

    def hello() -> None:
        opened.append(Engine.connect(host, port, framing="msgpack", timeout=READ_TIMEOUT))
        _expect(opened[0].info.protocol == 1, f"ugi: protocol {opened[0].info.protocol}")

    def go() -> None:
        if not opened:
            raise PeerError("no connection: the handshake failed")
        opened[0].set_option("Game", game)
        best = opened[0].go(depth=1)
        _expect(isinstance(best.move, str), f"go: {best!r}")

    def error(msgid: int, method: str, params: dict[str, object], code: int) -> Callable[[], None]:
        def run() -> None:
            with _raw_socket(host, port, "msgpack") as raw:
                raw.send_frame([0, msgid, method, [params]])
                answer = raw.until(m.RpcResult)
                assert isinstance(answer, m.RpcResult)
                got = answer.error.code if answer.error is not None else None
                _expect(answer.msgid == msgid and got == code, f"{method}: {answer!r}")

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
        for e in opened:
            e.quit()


def run_check(
    *,
    connect: tuple[str, int] | None,
    command: list[str] | None,
    game: str,
    out: TextIO,
    err: TextIO,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
) -> bool:
    """Run every check against a server (``connect``) or an engine command; True if all pass.
    The report goes to ``out``; the engine's own log lines, when a check fails, to ``err``.

    Raises:
        OSError: the server cannot be reached at all, or the command cannot be started.
    """
    checker = Checker(out)
    gave_up: str | None = None
    with tempfile.TemporaryFile() as log:
        try:
            if connect is not None:
                host, port = connect
                with _raw_socket(host, port, "text") as raw:
                    check_text(
                        checker,
                        lambda: Engine.connect(host, port, timeout=handshake_timeout),
                        raw,
                        game,
                    )
                check_msgpack(checker, host, port, game)
            else:
                if not command:
                    raise ValueError("no command to start")
                with _raw_process(command, checker, log) as raw:
                    check_text(
                        checker,
                        lambda: Engine.popen(command, stderr=log, timeout=handshake_timeout),
                        raw,
                        game,
                    )
        except GaveUpError as exc:
            gave_up = str(exc)
        if checker.failed:
            _show_log(log, err)
    total = checker.passed + checker.failed
    if gave_up is not None:
        out.write(f"enginesrv check: gave up: {gave_up}\n")
    elif checker.failed:
        out.write(f"enginesrv check: {checker.failed} of {total} checks fail\n")
    else:
        out.write(f"enginesrv check: all {total} checks pass\n")
    return checker.failed == 0


def _show_log(log: IO[bytes], err: TextIO) -> None:
    """The last lines the engine wrote on its standard error, for a failed run."""
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - LOG_TAIL_BYTES))
    lines = log.read().decode(errors="replace").splitlines()
    if size > LOG_TAIL_BYTES:
        lines = lines[1:]  # the first may be the end of a longer line
    if not lines:
        return
    tail = lines[-LOG_TAIL:]
    err.write("enginesrv check: the engine's last lines on its standard error:\n")
    for line in tail:
        cut = f" ... ({len(line) - LOG_LINE_CHARS} more)" if len(line) > LOG_LINE_CHARS else ""
        err.write(f"  {line[:LOG_LINE_CHARS]}{cut}\n")
    err.flush()

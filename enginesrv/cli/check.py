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

import os
import tempfile
import time
from collections.abc import Callable
from typing import IO, TextIO

from enginesrv.cli.check_wire import (
    READ_TIMEOUT,
    Access,
    Checker,
    GaveUpError,
    PeerError,
    Raw,
    expect,
    expect_error,
    open_session,
    raw_process,
    raw_socket,
)
from enginesrv.client import Clock, Engine, LegalMoves
from protocol import messages as m

HANDSHAKE_TIMEOUT = 5.0
"""Seconds the peer has to answer ``ugi`` (``--handshake-timeout``) before the run ends."""
LOG_TAIL = 20
"""Lines of the engine's standard error shown when a check fails."""
LOG_TAIL_BYTES = 64 << 10
"""The most of the end of the engine's standard error read for them (it may have written a
great deal), and ``LOG_LINE_CHARS`` the most of one line shown."""
LOG_LINE_CHARS = 500


def check_text(
    checker: Checker,
    open_engine: Callable[[], Engine],
    raw: Raw,
    game: str,
    greet: Callable[[], None] | None = None,
) -> None:
    """The text framing checks: the conversation through the client, the malformed commands
    on ``raw`` (a server's greeted by ``greet`` first, in the handshake check)."""
    _TextChecks(open_engine, raw, game, greet).run(checker)


class _TextChecks:
    """The checks of the text framing, in the order they run: the conversation goes through
    the client (the engine ``open_engine`` opens at the handshake), the malformed commands and
    the commands sent during a search through ``raw``."""

    def __init__(
        self,
        open_engine: Callable[[], Engine],
        raw: Raw,
        game: str,
        greet: Callable[[], None] | None,
    ) -> None:
        self.open_engine = open_engine
        self.raw = raw
        self.greet = greet
        self.game = game
        self.opened: list[Engine] = []
        # the legal moves at the start, once that check passed: a later check that needs them
        # fails with KeyError before
        self.found: dict[str, LegalMoves] = {}

    def run(self, checker: Checker) -> None:
        """Run every check, with ``checker`` keeping the tally.

        Raises:
            GaveUpError: the handshake failed, and no other check can run without one.
        """
        try:
            if not checker.check("text: handshake ugi ... ugiok", self.handshake):
                raise GaveUpError("no handshake, and no other check can run without one")
            for name, check in self.checks():
                checker.check(name, check)
        finally:
            for e in self.opened:
                e.quit()

    def checks(self) -> list[tuple[str, Callable[[], None]]]:
        """Every check after the handshake: its name, and what it runs."""
        return [
            ("text: isready -> readyok", self.isready),
            (f"text: setoption name Game value {self.game}", self.options),
            ("text: position startpos, query moves", self.moves),
            ("text: play and undo", self.play_undo),
            ("text: go depth 1", self.go(depth=1)),
            ("text: go nodes 200", self.go(nodes=200)),
            ("text: go movetime 200", self.go(movetime=200)),
            ("text: go p1time 2000 p2time 2000", self.go(clock=Clock(2000, 2000))),
            ("text: isready and 204 during go infinite, then stop", self.during_search),
            ("text: unknown command is error 100", self.raw_error("frobnicate", 100)),
            (
                "text: bad arguments are error 101, then bestmove none",
                self.raw_error("go depth x", 101),
            ),
            ("text: bad position is error 202", self.bad_position),
            ("text: illegal move is invalidmove", self.invalid_move),
            ("text: impossible undo is error 101", self.bad_undo),
        ]

    def engine(self) -> Engine:
        if not self.opened:
            raise PeerError("no engine: the handshake failed")
        return self.opened[0]

    def handshake(self) -> None:
        if self.greet is not None:
            self.greet()
        self.opened.append(self.open_engine())
        expect(bool(self.engine().info.name), "the handshake has no 'id name'")

    def isready(self) -> None:
        self.engine().isready()

    def options(self) -> None:
        self.engine().set_option("Game", self.game)
        self.raw.send(f"setoption name Game value {self.game}", "isready")
        self.raw.until(m.ReadyOk)

    def moves(self) -> None:
        self.engine().position()
        self.found["moves"] = self.engine().legal_moves()
        expect(bool(self.found["moves"]), "no legal move at the start")

    def play_undo(self) -> None:
        e = self.engine()
        start = e.query("position")
        played = e.play(self.found["moves"][0])
        expect(played != start, f"play: the position did not change: {played!r}")
        undone = e.undo()
        expect(undone == start == e.query("position"), f"undo did not restore: {undone!r}")

    def go(
        self,
        *,
        depth: int | None = None,
        nodes: int | None = None,
        movetime: int | None = None,
        clock: Clock | None = None,
    ) -> Callable[[], None]:
        """The check of a go with these limits: it answers a legal move."""

        def run() -> None:
            self.engine().position()
            best = self.engine().go(depth=depth, nodes=nodes, movetime=movetime, clock=clock)
            expect(best.move in self.found["moves"], f"illegal {best!r}")

        return run

    def during_search(self) -> None:
        raw = self.raw
        raw.send("position startpos", "go infinite", "isready")
        raw.until(m.ReadyOk, 2.0)
        raw.send("position startpos")
        answer = raw.until((m.ErrorReply, m.InvalidMove))
        expect(isinstance(answer, m.ErrorReply) and answer.code == 204, f"got {answer!r}")
        started = time.monotonic()
        raw.send("stop")
        best = raw.until(m.BestMove)
        expect(time.monotonic() - started < 1.0, "stop took more than 1 s")
        assert isinstance(best, m.BestMove)
        expect(best.move in self.found["moves"], f"illegal {best.move!r} after stop")

    def raw_error(self, command: str, code: int) -> Callable[[], None]:
        """The check that ``command``, sent as it is, is refused with error ``code``."""

        def run() -> None:
            self.raw.send(command)
            answer = self.raw.until((m.ErrorReply, m.InvalidMove))
            ok = isinstance(answer, m.ErrorReply) and answer.code == code
            expect(ok, f"{command!r}: expected error {code}, got {answer!r}")
            if command.startswith("go "):  # a refused go still gets its one bestmove
                best = self.raw.until(m.BestMove, 2.0)
                assert isinstance(best, m.BestMove)
                expect(best.move is None, f"{command!r}: expected bestmove none, got {best!r}")

        return run

    def bad_position(self) -> None:
        expect_error(lambda: self.engine().position("x y"), 202, "position fen x y")

    def bad_undo(self) -> None:
        expect_error(lambda: self.engine().undo(999), 101, "undo 999")

    def invalid_move(self) -> None:
        exc = expect_error(lambda: self.engine().position(None, ["zz99"]), 201, "an illegal move")
        expect(exc.data is not None and exc.data.get("move") == "zz99", f"got {exc}")


def check_msgpack(checker: Checker, host: str, port: int, game: str, access: Access) -> None:
    """The msgpack framing checks (over TCP)."""
    opened: list[Engine] = []

    def hello() -> None:
        opened.append(access.connect(host, port, "msgpack", READ_TIMEOUT))
        expect(opened[0].info.protocol == 1, f"ugi: protocol {opened[0].info.protocol}")

    def go() -> None:
        if not opened:
            raise PeerError("no connection: the handshake failed")
        opened[0].set_option("Game", game)
        best = opened[0].go(depth=1)
        expect(isinstance(best.move, str), f"go: {best!r}")

    def error(msgid: int, method: str, params: dict[str, object], code: int) -> Callable[[], None]:
        def run() -> None:
            with raw_socket(host, port, "msgpack", access) as raw:
                open_session(raw, "msgpack", access, READ_TIMEOUT)
                raw.send_frame([0, msgid, method, [params]])
                answer = raw.until(m.RpcResult)
                assert isinstance(answer, m.RpcResult)
                got = answer.error.code if answer.error is not None else None
                expect(answer.msgid == msgid and got == code, f"{method}: {answer!r}")

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
    access: Access | None = None,
) -> bool:
    """Run every check against a server (``connect``, reached as ``access`` says: TLS, a
    token) or an engine command; True if all pass. The report goes to ``out``; the engine's
    own log lines, when a check fails, to ``err``.

    Raises:
        OSError: the server cannot be reached at all, or the command cannot be started.
        AccessError: the server requires a token that was not given, or refused it.
    """
    checker = Checker(out)
    gave_up: str | None = None
    with tempfile.TemporaryFile() as log:
        try:
            if connect is not None:
                host, port = connect
                reach = access or Access()
                with raw_socket(host, port, "text", reach) as raw:
                    check_text(
                        checker,
                        lambda: reach.connect(host, port, "text", handshake_timeout),
                        raw,
                        game,
                        lambda: open_session(raw, "text", reach, handshake_timeout),
                    )
                check_msgpack(checker, host, port, game, reach)
            else:
                if not command:
                    raise ValueError("no command to start")
                with raw_process(command, checker, log) as raw:
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

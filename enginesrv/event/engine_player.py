"""The ``cmd:`` and ``tcp:`` players: an external engine speaking the text protocol (plain UGI
is enough), started as a command or reached over TCP, spoken to through
``enginesrv.client``.

With ``--debug`` each player keeps a protocol trace (``ProtocolTrace``): every line sent to
its engine and read from it, time-stamped. Like the engine's standard error it may hold the
engine's secrets (its Yin Yang laws), so it stays in a private file of the arbiter's while the
game runs and is published (``publish_trace``) once the game is over, one file per game and
player. Each player's trace holds only its own engine's lines: what its opponent was told
never enters it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

import trio

import games
from bots.engine import Score
from enginesrv.client import (
    AsyncEngine,
    ClientError,
    Clock,
    EngineError,
    EngineInfo,
    EngineTimeoutError,
)
from enginesrv.event.players import (
    Deadlines,
    ForfeitError,
    GoRequest,
    Player,
    PlayerSpec,
    PlayerSpecError,
    Reply,
)

TRACE_CAP = 64 << 20
"""The most bytes of one game's protocol trace of one engine; the rest is left out."""
_ARROWS: dict[str, str] = {"send": ">", "recv": "<", "end": "#"}
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127) if c != 9}
"""Control characters in a line are written escaped: a trace is read on a terminal."""
_ALL_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127, *range(0x80, 0xA0))}
"""The control characters escaped in a line quoted in a one-line message: tabs too."""
WRAPPER_ERROR_CHARS = 300
"""The most characters of a wrapper's error quoted in a message (``wrapper_error``)."""


NAME_BYTES = 100
"""The most bytes of a player's name in a file name (a file name holds 255)."""


def file_safe_name(name: str) -> str:
    """A player's name as part of a file name: letters, digits and ``-_.=`` kept, any other
    character ``_``; a name longer than ``NAME_BYTES`` (in UTF-8) is cut, and ends with a
    hash of the whole name so that two long names stay apart."""
    safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in name)
    if len(safe.encode()) <= NAME_BYTES:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:12]
    cut = safe.encode()[: NAME_BYTES - len(digest) - 1].decode("utf-8", "ignore")
    return f"{cut}-{digest}"


def trace_file_name(game_id: int, seat: int, name: str) -> str:
    """The file of the trace of game ``game_id`` of the player ``name`` in seat ``seat`` (0 =
    p1), e.g. ``game-00001-p1-alphabeta.trace``; the name as ``file_safe_name`` makes it, as
    for the engine's standard error."""
    return f"game-{game_id:05d}-p{seat + 1}-{file_safe_name(name)}.trace"


def _stamp(now: float) -> str:
    """``now`` (``time.time()``) as UTC ISO 8601 with milliseconds: 2026-11-29T14:03:07.412Z."""
    whole = int(now)
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        + f".{int((now - whole) * 1000):03d}Z"
    )


class ProtocolTrace:
    """The protocol trace of one external engine: a ``TraceCallback`` for ``enginesrv.client``
    writing each line as ``TIME > LINE`` (sent to the engine), ``TIME < LINE`` (read from it)
    or ``TIME # NOTE`` (the connection ended, the trace was cut), ``TIME`` in UTC with
    milliseconds, to a private file (made only when there is a line to keep). ``publish``
    hands what was gathered since the last time to a public file and begins afresh. At most
    ``cap`` bytes are kept between two publications; then one note says the rest is left out.
    """

    def __init__(self, cap: int = TRACE_CAP) -> None:
        self.cap = cap
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        self._size = 0
        self._cut = False

    def __call__(self, kind: str, line: str) -> None:
        if self._cut:
            return
        now = _stamp(time.time())
        entry = f"{now} {_ARROWS[kind]} {line.translate(_ESCAPES)}\n".encode(
            "utf-8", "backslashreplace"
        )
        if self._size + len(entry) > self.cap:
            self._cut = True
            cap = f"{self.cap >> 20} MiB" if self.cap % (1 << 20) == 0 else f"{self.cap} bytes"
            entry = f"{now} # cut: more than {cap} in this game; the rest is left out\n".encode()
        try:
            if self._file is None:
                # in a private file (mode 0600, outside the event's directory) until the game
                # is over
                fd, name = tempfile.mkstemp(prefix="enginesrv-trace-")
                self._file, self._path = os.fdopen(fd, "wb"), Path(name)
            self._file.write(entry)
        except OSError:
            self._cut = True  # a full disk: the trace ends, not the game
        self._size += len(entry)

    def _take(self) -> Path | None:
        """The private file of what was gathered (None: nothing was), closed; from now on
        lines go to a new one."""
        file, path = self._file, self._path
        self._file, self._path, self._size, self._cut = None, None, 0, False
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()
        return path

    async def publish(self, target: Path, header: str) -> Path | None:
        """Write ``header`` (a ``#`` comment line) and the lines gathered since the last call
        to ``target`` (replaced if it exists: a game played again on ``--resume`` has a new
        trace), in a thread; the file written, or None when there was nothing to write or
        it could not be written."""
        private = self._take()
        if private is None:
            return None
        return await trio.to_thread.run_sync(_publish_file, private, target, header)

    def close(self) -> None:
        """Drop what was not published (the lines after a player's last game)."""
        private = self._take()
        if private is not None:
            with contextlib.suppress(OSError):
                private.unlink()


def _publish_file(private: Path, target: Path, header: str) -> Path | None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(private, "rb") as source, open(target, "wb") as public:
            public.write(f"# {header}\n".encode("utf-8", "backslashreplace"))
            shutil.copyfileobj(source, public)
        return target
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            private.unlink()


class EngineHello:
    """What an external engine's handshake told the arbiter: its options (lowercased names)
    and the games it says it plays (none: a plain UGI engine that does not say)."""

    def __init__(self, info: EngineInfo | None = None) -> None:
        self.options = {o.name.lower() for o in info.options} if info else set()
        self.games = {g.name for g in info.games} if info else set()


class TextEnginePlayer(Player):
    """An external engine speaking the text protocol (UGI commands suffice): started as a
    command (``cmd:``) or reached over TCP (``tcp:``), spoken to through ``enginesrv.client``.
    """

    def __init__(
        self,
        spec: PlayerSpec,
        deadlines: Deadlines | None = None,
        *,
        stderr: Path | None = None,
        wrapper: tuple[str, ...] = (),
        traces: Path | None = None,
    ) -> None:
        super().__init__(spec)
        self.deadlines = deadlines or Deadlines()
        self.wrapper = wrapper
        """A command a ``cmd:`` engine is run under (``--isolate``: bubblewrap)."""
        self.stderr = stderr
        """Where a ``cmd:`` engine's standard error is published (appended) once each game
        is over; None: discarded. While a game runs it goes to a private file of its own."""
        self._private: Path | None = None
        self._published = 0
        self.traces = traces
        """The directory each game's protocol trace is published in once the game is over
        (``publish_trace``; ``--debug``); None: no trace is kept."""
        self._trace: ProtocolTrace | None = None
        self.engine: AsyncEngine | None = None
        self.hello = EngineHello()
        self.game = ""

    @property
    def process(self) -> trio.Process | None:
        """The engine's process (``cmd:``), once started."""
        return self.engine.process if self.engine is not None else None

    @property
    def _gone(self) -> str:
        return "disconnect" if self.spec.kind == "tcp" else "crash"

    def _forfeit(self, exc: ClientError, doing: str) -> ForfeitError:
        """The forfeit for a failed exchange: a stall when an answer did not come in time,
        else the engine went away (a crash, or a disconnect over TCP)."""
        self.alive = False
        if isinstance(exc, EngineTimeoutError):
            return ForfeitError("stall", f"{doing}: {exc}")
        return ForfeitError(self._gone, f"{doing}: {exc}")

    @property
    def _engine(self) -> AsyncEngine:
        if self.engine is None or not self.engine.alive:
            self.alive = False
            raise ForfeitError(self._gone, "the engine is not running")
        return self.engine

    async def start(self, game: games.Game) -> None:
        self.game = game.name
        deadlines = self.deadlines
        if self.traces is not None and self._trace is None:
            self._trace = ProtocolTrace()
        try:
            if self.spec.kind == "tcp":
                self.engine = await AsyncEngine.connect_in(
                    None, self.spec.host, self.spec.port, timeout=deadlines.startup,
                    trace=self._trace,
                )  # fmt: skip
            else:
                errors: int | IO[bytes] = subprocess.DEVNULL
                if self.stderr is not None or self.wrapper:
                    # what an engine writes during a game may hold its secrets (Yin Yang
                    # laws): it is kept where the event's readers cannot look until then;
                    # a wrapper's own error is read from there (``wrapper_error``)
                    fd, name = tempfile.mkstemp(prefix="enginesrv-stderr-")
                    self._private, self._published = Path(name), 0
                    errors = os.fdopen(fd, "ab")
                try:
                    self.engine = await AsyncEngine.popen_in(
                        None,
                        [*self.wrapper, *self.spec.command],
                        stderr=errors,
                        timeout=deadlines.startup,
                        trace=self._trace,
                    )
                finally:
                    if not isinstance(errors, int):
                        errors.close()  # the child has its own copy of the descriptor
        except EngineTimeoutError as exc:
            raise ForfeitError("stall", f"no ugiok within {deadlines.startup:g} s: {exc}") from None
        except ClientError as exc:
            # a wrapper that fails says why only on its standard error: the user is told
            reason = await self._wrapper_error()
            raise ForfeitError(self._gone, f"cannot start it: {reason or exc}") from None
        self.alive = True
        engine = self.engine
        self.hello = EngineHello(engine.info)
        if self.hello.games and game.name not in self.hello.games:
            await self.close()
            raise PlayerSpecError(
                f"player {self.spec.text!r}: the engine plays {', '.join(sorted(self.hello.games))}"
                f", not {game.name}"
            )
        try:
            if "game" in self.hello.options:
                await engine.set_option("Game", game.name, deadlines.ready)
            for key, value in self.spec.options:
                await engine.set_option(key, value, deadlines.ready)
            await engine.isready(deadlines.ready)
        except EngineError as exc:
            await self.close()
            raise PlayerSpecError(f"player {self.spec.text!r}: the engine refused: {exc}") from None
        except ClientError as exc:
            raise self._forfeit(exc, "the handshake") from None

    async def _wrapper_error(self) -> str | None:
        """What the wrapper said when it could not start the engine (``wrapper_error``);
        None without a wrapper, or when it did not say."""
        if not self.wrapper or self._private is None:
            return None
        return await trio.to_thread.run_sync(wrapper_error, self._private, self.wrapper[0])

    async def publish_stderr(self) -> None:
        """Append what the engine wrote to its standard error since the last call to the
        public log (the game it was written in is over). Copied in a thread, in pieces: an
        engine may have written a great deal, and the other games' clocks run on this event
        loop meanwhile."""
        if self._private is None or self.stderr is None:
            return
        self._published = await trio.to_thread.run_sync(
            _append_from, self._private, self._published, self.stderr
        )

    async def publish_trace(self, game_id: int, seat: int, *, finished: bool = True) -> Path | None:
        """Publish the protocol trace gathered since the last call (the handshake's too, for
        the first game of a new engine) as the trace of game ``game_id``, played in ``seat``
        (0 = p1): ``traces/game-NNNNN-pS-NAME.trace`` (``trace_file_name``). Call it once the
        game is over, or stopped for good (not ``finished``: the header says so). The file
        written; None without ``traces`` or when there was nothing to write."""
        if self._trace is None or self.traces is None:
            return None
        target = self.traces / trace_file_name(game_id, seat, self.spec.name)
        stopped = "" if finished else " (stopped before its end)"
        header = (
            f"protocol trace of game {game_id}{stopped}, p{seat + 1} {self.spec.name} "
            f"({self.spec.text}); times in UTC; > to the engine, < from it, # notes"
        )
        return await self._trace.publish(target, header)

    async def new_game(self, key: str, seed: int, secret_seed: int = 0) -> None:
        del key, secret_seed  # an engine's secrets are its own to draw
        await self.publish_stderr()  # the previous game is over
        engine = self._engine
        try:
            if "seed" in self.hello.options:
                try:
                    await engine.set_option("Seed", seed, self.deadlines.ready)
                except EngineError:
                    # the handshake's bot had a Seed; the one an option chose since has not
                    self.hello.options.discard("seed")
            await engine.new_game(timeout=self.deadlines.ready)
        except EngineError as exc:
            raise ForfeitError("crash", f"uginewgame was refused: {exc}") from None
        except ClientError as exc:
            raise self._forfeit(exc, "uginewgame") from None

    async def go(self, request: GoRequest) -> Reply:
        engine = self._engine
        deadlines = self.deadlines
        clocks = request.clocks
        try:
            if request.start is None:
                await engine.position(request.position, timeout=deadlines.ready)
            else:
                await engine.position(request.start, request.moves, timeout=deadlines.ready)
            started = trio.current_time()
            handle = await engine.start_search(
                depth=clocks.depth,
                movetime=clocks.movetime,
                nodes=clocks.nodes,
                clock=Clock(clocks.p1time, clocks.p2time, clocks.p1inc, clocks.p2inc,
                            clocks.movestogo),
                timeout=deadlines.ready,
                confirm=False,  # a silent engine is judged by its clock, or by isready
            )  # fmt: skip
        except EngineError as exc:
            raise ForfeitError("crash", f"the engine refused the position or go: {exc}") from None
        except ClientError as exc:
            raise self._forfeit(exc, "position and go") from None
        # without a clock, a silent engine is told apart from a long search by isready
        limit = request.forfeit_at if request.forfeit_at is not None else math.inf
        cap = started + deadlines.move if request.forfeit_at is None else math.inf
        ping_at = started + deadlines.ping_every if request.forfeit_at is None else math.inf
        while True:
            wake = min(limit, cap, ping_at)
            try:
                result = await handle.result(max(0.0, wake - trio.current_time()))
                break
            except EngineTimeoutError:
                pass
            except EngineError as exc:
                if exc.code in (203, 206):  # refused, with its ``bestmove none``
                    return Reply(None, trio.current_time() - started)
                raise ForfeitError("crash", f"the search failed: {exc}") from None
            except ClientError as exc:
                raise self._forfeit(exc, "the search") from None
            now = trio.current_time()
            if now >= limit:
                self.alive = False
                raise ForfeitError("time-forfeit", f"no bestmove within {now - started:.3f} s")
            if now >= cap:
                self.alive = False
                raise ForfeitError(
                    "stall", f"no bestmove within the move timeout of {deadlines.move:g} s"
                )
            try:
                await engine.isready(deadlines.ready)
            except EngineTimeoutError:
                self.alive = False
                raise ForfeitError(
                    "stall", f"no readyok within {deadlines.ready:g} s while searching"
                ) from None
            except ClientError as exc:
                raise self._forfeit(exc, "isready while searching") from None
            ping_at = trio.current_time() + deadlines.ping_every
        elapsed = trio.current_time() - started
        score = result.exact_score  # adjudication reads it: a bound is not a score
        return Reply(
            result.move,
            elapsed,
            None if score is None else Score(score.kind, score.value),
            result.depth or 0,
            result.nodes or 0,
            result.time,
        )

    async def close(self) -> None:
        self.alive = False
        engine, self.engine = self.engine, None
        # shielded: called while the event is being cancelled, it must still end the engine;
        # every wait inside is bounded
        with trio.CancelScope(shield=True):
            if engine is not None:
                await engine.aclose()
            await self.publish_stderr()
            if self._trace is not None:
                self._trace.close()
                self._trace = None
            if self._private is not None:
                with contextlib.suppress(OSError):
                    self._private.unlink()
                self._private = None


def wrapper_error(stderr: Path, program: str) -> str | None:
    """What the wrapper ``program`` (``bwrap``) said when it could not start a command, from
    the file of its standard error: its first line, when that begins with the program's
    name and a colon (``bwrap: execvp ./engine: No such file or directory``; the wrapper
    speaks before the command it starts can). Control characters are escaped and the line
    cut to ``WRAPPER_ERROR_CHARS`` characters. None when there is no such line."""
    try:
        with open(stderr, "rb") as file:
            head = file.read(4 * WRAPPER_ERROR_CHARS)
    except OSError:
        return None
    line = head.partition(b"\n")[0].decode("utf-8", "backslashreplace")
    if not line.startswith(f"{os.path.basename(program)}: "):
        return None
    line = line.translate(_ALL_ESCAPES)
    if len(line) > WRAPPER_ERROR_CHARS:
        line = line[: WRAPPER_ERROR_CHARS - 3] + "..."
    return line


def _append_from(source: Path, offset: int, target: Path) -> int:
    """Append ``source`` from byte ``offset`` on to ``target`` (made even when there is
    nothing to add: it was looked at); the offset reached. Errors leave it where it was."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(source, "rb") as private, open(target, "ab") as public:
            private.seek(offset)
            shutil.copyfileobj(private, public)
            return private.tell()
    except OSError:
        return offset

"""The ``cmd:`` and ``tcp:`` players: an external engine speaking the text protocol (plain UGI
is enough), started as a command or reached over TCP, spoken to through
``enginesrv.client``.

A ``cmd:`` engine runs under the reaper (``enginesrv.reaper``), which ends every process it
started when it is closed, and under the containment wrapper when the event has one
(``enginesrv.event.play.contain``). What it writes on its standard error, and with ``--debug``
its protocol trace (``enginesrv.event.play.trace``), may hold its secrets (its Yin Yang laws):
both are kept in ``PrivateLog``s, out of every engine's reach and capped, and published under
the event's ``logs/`` once the game they were written in is over.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

import trio
from anyio.abc import Process

import games
from bots.engine import Score
from enginesrv import orphans, reaper
from enginesrv.client import (
    AsyncEngine,
    ClientError,
    Clock,
    EngineError,
    EngineInfo,
    EngineTimeoutError,
)
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import (
    Deadlines,
    ForfeitError,
    GameOptions,
    GoRequest,
    Player,
    PlayerSpec,
    PlayerSpecError,
    Reply,
)
from enginesrv.event.play.private_log import LOG_CAP, Kept, PipeDrain, PrivateLog, publish
from enginesrv.event.play.trace import ALL_ESCAPES, ProtocolTrace, trace_file_name

START_ERROR_CHARS = 300
"""The most characters of a wrapper's error quoted in a message (``start_error``)."""
START_ERROR_WAIT = 1.0
"""Seconds an engine that could not start is given to finish saying why on its standard
error (the pipe ends when its process and all it started are gone)."""


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
        log_cap: int = LOG_CAP,
    ) -> None:
        super().__init__(spec)
        self.deadlines = deadlines or Deadlines()
        self.wrapper = wrapper
        """A command a ``cmd:`` engine is run under (``--isolate``: bubblewrap)."""
        self.stderr = stderr
        """Where a ``cmd:`` engine's standard error is published (appended) once each game
        is over; None: discarded. While a game runs it is kept in a ``PrivateLog``."""
        self.log_cap = log_cap
        """The most bytes of each stream (standard error, trace) kept per game."""
        self._errors: PrivateLog | None = None
        self._drain: PipeDrain | None = None
        self._pid: int | None = None
        """The process id of the engine's reaper (known to ``orphans``) while it is known."""
        self.traces = traces
        """The directory each game's protocol trace is published in once the game is over
        (``publish_trace``; ``--debug``); None: no trace is kept."""
        self._trace: ProtocolTrace | None = None
        self.engine: AsyncEngine | None = None
        self.hello = EngineHello()
        self.game = ""

    @property
    def process(self) -> Process | None:
        """The engine's process (``cmd:``), once started."""
        return self.engine.process if self.engine is not None else None

    @property
    def _gone(self) -> Termination:
        return Termination.DISCONNECT if self.spec.kind == "tcp" else Termination.CRASH

    def _forfeit(self, exc: ClientError, doing: str) -> ForfeitError:
        """The forfeit for a failed exchange: a stall when an answer did not come in time,
        else the engine went away (a crash, or a disconnect over TCP)."""
        self.alive = False
        if isinstance(exc, EngineTimeoutError):
            return ForfeitError(Termination.STALL, f"{doing}: {exc}")
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
            self._trace = ProtocolTrace(self.log_cap)
        try:
            if self.spec.kind == "tcp":
                self.engine = await AsyncEngine.connect_in(
                    None,
                    self.spec.host,
                    self.spec.port,
                    timeout=deadlines.startup,
                    trace=self._trace,
                )
            else:
                await self._start_process()
        except EngineTimeoutError:
            raise ForfeitError(
                Termination.STALL, f"no ugiok within {deadlines.startup:g} s"
            ) from None
        except ClientError as exc:
            # a wrapper (or the reaper) that fails says why only on its standard error
            reason = await self._start_error()
            raise ForfeitError(self._gone, f"cannot start it: {reason or exc}") from None
        await self.prepare(game)

    async def prepare(self, game: games.Game) -> None:
        """Ready the greeted engine for ``game`` (it must play it when it names its games;
        told it with a ``Game`` option; given the spec's options). Raises as ``start``."""
        self.game = game.name
        self.alive = True
        engine, deadlines = self._engine, self.deadlines
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

    async def _start_process(self) -> None:
        """Start the ``cmd:`` engine under the reaper (and the wrapper, if any), its standard
        error read into a ``PrivateLog`` by a thread of its own."""
        if self._errors is None:
            self._errors = PrivateLog(self.log_cap)
        read, write = os.pipe()
        try:
            with orphans.spawning():
                engine = await AsyncEngine.popen_in(
                    None,
                    reaper.command([*self.wrapper, *self.spec.command]),
                    stderr=write,
                    timeout=self.deadlines.startup,
                    handshake=False,
                    trace=self._trace,
                    name=" ".join(self.spec.command),
                )
                assert engine.process is not None
                self._pid = engine.process.pid
                orphans.known(self._pid)
        finally:
            os.close(write)  # the engine has its own; the pipe ends when the last holder does
            self._drain = PipeDrain(read, self._errors, f"stderr {self.spec.name}")
        try:
            await engine.handshake(self.deadlines.startup)
        except BaseException:
            with trio.CancelScope(shield=True):
                await engine.aclose()
            raise
        self.engine = engine

    async def _drained(self, wait: float) -> None:
        """Wait at most ``wait`` seconds for the standard error's pipe to end (the engine
        and everything it started are gone)."""
        drain = self._drain
        if drain is not None and await trio.to_thread.run_sync(drain.join, wait):
            self._drain = None

    async def _start_error(self) -> str | None:
        """What the reaper or the wrapper said when it could not start the engine
        (``start_error``); None when neither did."""
        if self._errors is None:
            return None
        await self._drained(START_ERROR_WAIT)
        programs = (reaper.NAME, *self.wrapper[:1])
        return start_error(self._errors.head(4 * START_ERROR_CHARS), programs)

    async def publish_stderr(self) -> None:
        """Append what the engine wrote to its standard error since the last call to the
        public log (the game it was written in is over), in a thread: an engine may have
        written a great deal, and the other games' clocks run on this event loop meanwhile.
        The log is made even when there is nothing to add (the engine was looked at).
        Without a public log it is dropped."""
        if self._errors is None:
            return
        if self._drain is not None:
            await trio.to_thread.run_sync(self._drain.pump)  # all it wrote up to now
        kept = self._errors.take()
        if self.stderr is None:
            if kept is not None:
                kept.close()
            return
        await trio.to_thread.run_sync(
            functools.partial(publish, kept or Kept.nothing(), self.stderr, append=True)
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

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
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
            for name, value in options:
                sent = f"setoption name {name} value {value}"
                try:
                    await engine.set_option(name, value, self.deadlines.ready)
                except EngineError as exc:
                    raise ForfeitError(Termination.CRASH, f"{sent} was refused: {exc}") from None
                except ClientError as exc:  # no answer, or gone: named by what it was sent
                    raise self._forfeit(exc, sent) from None
            await engine.new_game(timeout=self.deadlines.ready)
        except EngineError as exc:
            raise ForfeitError(Termination.CRASH, f"uginewgame was refused: {exc}") from None
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
                clock=Clock(
                    clocks.p1time, clocks.p2time, clocks.p1inc, clocks.p2inc, clocks.movestogo
                ),
                timeout=deadlines.ready,
                confirm=False,  # a silent engine is judged by its clock, or by isready
            )
        except EngineError as exc:
            raise ForfeitError(
                Termination.CRASH, f"the engine refused the position or go: {exc}"
            ) from None
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
                raise ForfeitError(Termination.CRASH, f"the search failed: {exc}") from None
            except ClientError as exc:
                raise self._forfeit(exc, "the search") from None
            now = trio.current_time()
            if now >= limit:
                self.alive = False
                raise ForfeitError(
                    Termination.TIME_FORFEIT, f"no bestmove within {now - started:.3f} s"
                )
            if now >= cap:
                self.alive = False
                raise ForfeitError(
                    Termination.STALL,
                    f"no bestmove within the move timeout of {deadlines.move:g} s",
                )
            try:
                await engine.isready(deadlines.ready)
            except EngineTimeoutError:
                self.alive = False
                raise ForfeitError(
                    Termination.STALL, f"no readyok within {deadlines.ready:g} s while searching"
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
            if self._pid is not None:
                orphans.forget(self._pid)
                self._pid = None
            await trio.to_thread.run_sync(orphans.sweep)  # had it killed its reaper
            await self._drained(START_ERROR_WAIT)  # what it wrote last, to its end
            await self.publish_stderr()
            if self._errors is not None:
                self._errors.close()
                self._errors = None
            if self._trace is not None:
                self._trace.close()
                self._trace = None


def start_error(head: bytes, programs: tuple[str, ...]) -> str | None:
    """Why a wrapper or the reaper could not start a command, from the first bytes of its
    standard error: the first line, when it begins with one of ``programs``' names and a
    colon (``bwrap: execvp ./engine: No such file or directory``: a wrapper speaks before the
    command it starts can). The reaper's ``reaper: cannot start PROGRAM: REASON`` is quoted
    as ``PROGRAM: REASON``. Control characters are escaped and the line cut to
    ``START_ERROR_CHARS`` characters. None when there is no such line."""
    line = head.partition(b"\n")[0].decode("utf-8", "backslashreplace")
    names = {os.path.basename(program) for program in programs}
    if not any(line.startswith(f"{name}: ") for name in names):
        return None
    line = line.removeprefix(f"{reaper.NAME}: cannot start ").translate(ALL_ESCAPES)
    if len(line) > START_ERROR_CHARS:
        line = line[: START_ERROR_CHARS - 3] + "..."
    return line

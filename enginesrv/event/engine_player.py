"""The ``cmd:`` and ``tcp:`` players: an external engine speaking the text protocol (plain UGI
is enough), started as a command or reached over TCP, spoken to through
``enginesrv.client``."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import tempfile
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
        try:
            if self.spec.kind == "tcp":
                self.engine = await AsyncEngine.connect_in(
                    None, self.spec.host, self.spec.port, timeout=deadlines.startup
                )
            else:
                errors: int | IO[bytes] = subprocess.DEVNULL
                if self.stderr is not None:
                    # what an engine writes during a game may hold its secrets (Yin Yang
                    # laws): it is kept where the event's readers cannot look until then
                    fd, name = tempfile.mkstemp(prefix="enginesrv-stderr-")
                    self._private, self._published = Path(name), 0
                    errors = os.fdopen(fd, "ab")
                try:
                    self.engine = await AsyncEngine.popen_in(
                        None,
                        [*self.wrapper, *self.spec.command],
                        stderr=errors,
                        timeout=deadlines.startup,
                    )
                finally:
                    if not isinstance(errors, int):
                        errors.close()  # the child has its own copy of the descriptor
        except EngineTimeoutError as exc:
            raise ForfeitError("stall", f"no ugiok within {deadlines.startup:g} s: {exc}") from None
        except ClientError as exc:
            raise ForfeitError(self._gone, f"cannot start it: {exc}") from None
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
            if self._private is not None:
                with contextlib.suppress(OSError):
                    self._private.unlink()
                self._private = None


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

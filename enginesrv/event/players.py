"""The players of matches and tournaments, behind one async interface.

* ``bot:NAME[:OPTION=VALUE,...]``: a built-in or plug-in bot, searching in a worker process of
  the arbiter's pool (``enginesrv.search.pool``), so a slow or broken bot never blocks the arbiter;
* ``cmd:COMMAND``: an external engine started as a command (split like a shell would, no shell
  run) that speaks the text protocol over stdin/stdout; plain UGI engines included;
* ``tcp:HOST:PORT``: a running server (``enginesrv serve``) or any engine listening there,
  spoken to in the text framing.

``name=`` before any of them sets the display name (``name=new:bot:alphabeta:Depth=4``).

The arbiter drives a ``Player`` through ``start`` (launch and handshake), ``new_game`` before
each game, ``go`` for each decision and ``close``. Every wait has a deadline. A misbehaving
player raises ``ForfeitError`` with one of the forfeit reasons of design §6: ``crash`` (the
process ended or the bot failed), ``disconnect`` (the TCP peer went away), ``stall`` (no
``ugiok``/``readyok`` in time, or no answer to ``isready`` while searching without a clock) or
``time-forfeit`` (no move by the time the clock ran out). A player that failed is dead; the
arbiter starts it afresh for its next game.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import trio

import games
from bots.engine import Engine, OptionError, Score
from bots.registry import BotError, create_bot
from enginesrv.client import (
    AsyncEngine,
    ClientError,
    Clock,
    EngineError,
    EngineInfo,
    EngineTimeoutError,
)
from enginesrv.search import timeman
from enginesrv.search.pool import SearchRunner
from enginesrv.search.worker import SearchJob
from protocol import messages as m

PlayerKind = Literal["bot", "cmd", "tcp"]

_BOT_INSTANCES = itertools.count(1)
BOT_OVERHEAD_MS = 50
"""Milliseconds a bot keeps back from each move's time for the trip to and from its worker
and for the moments a busy machine does not run it: the arbiter measures the whole."""
MOVE_TIMEOUT = 60.0
"""Seconds a search without a clock may take by default (``--move-timeout``)."""


class PlayerSpecError(ValueError):
    """A player spec that cannot be used; the message names the spec and the reason."""


class ForfeitError(Exception):
    """A player misbehaved: ``reason`` is the forfeit reason, ``detail`` says what happened."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A parsed player spec (module docstring)."""

    text: str
    kind: PlayerKind
    name: str
    bot: str = ""
    options: tuple[tuple[str, str], ...] = ()
    command: tuple[str, ...] = ()
    host: str = ""
    port: int = 0


def control_character(text: str) -> str | None:
    """The first control character of ``text`` (newline, carriage return, NUL, ...) as a
    readable escape, or None: such a character would end a protocol line early, so that the
    rest reached an engine as a command of its own."""
    for char in text:
        if ord(char) < 32 or ord(char) == 127:
            return repr(char)[1:-1]
    return None


def _check_field(text: str, what: str, value: str) -> None:
    bad = control_character(value)
    if bad is not None:
        raise PlayerSpecError(f"player {text!r}: {what} contains a control character ({bad})")


def _check_spec(spec: PlayerSpec) -> PlayerSpec:
    for key, value in spec.options:
        _check_field(spec.text, f"option {key!r}", key)
        _check_field(spec.text, f"the value of option {key!r}", value)
    for word in spec.command:
        _check_field(spec.text, "the command", word)
    _check_field(spec.text, "the host", spec.host)
    _check_field(spec.text, "the bot name", spec.bot)
    _check_field(spec.text, "the name", spec.name)  # last: it may be made of the fields above
    return spec


def _parse_options(text: str, opts: str) -> tuple[tuple[str, str], ...]:
    options: list[tuple[str, str]] = []
    for pair in opts.split(","):
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise PlayerSpecError(f"player {text!r}: option {pair!r} is not NAME=VALUE")
        options.append((key.strip(), value.strip()))
    return tuple(options)


def parse_player(text: str) -> PlayerSpec:
    """Parse ``bot:...``, ``cmd:...`` or ``tcp:HOST:PORT``, each optionally after the prefixes
    ``name=NAME:`` (the display name) and ``options=NAME=VALUE,...:`` (options set with
    ``setoption`` on an external engine, e.g. ``options=Bot=alphabeta,Hash=64:tcp:host:7777``;
    for a bot, added to its own).

    Raises:
        PlayerSpecError: not one of those forms; the message shows the forms.
    """
    spec = text.strip()
    name = ""
    extra: tuple[tuple[str, str], ...] = ()
    while spec.startswith(("name=", "options=")):
        key, _, spec = spec.partition("=")
        value, sep, spec = spec.partition(":")
        if not sep or not value:
            raise PlayerSpecError(f"player {text!r}: write {key}=...:<player>")
        if key == "name":
            name = value
        else:
            extra += _parse_options(text, value)
    kind, _, rest = spec.partition(":")
    bot, _, opts = rest.partition(":")
    if kind == "bot" and bot:
        options = (_parse_options(text, opts) if opts else ()) + extra
        label = bot + (":" + ",".join(f"{k}={v}" for k, v in options) if options else "")
        return _check_spec(PlayerSpec(text, "bot", name or label, bot=bot, options=options))
    if kind == "cmd" and rest.strip():
        try:
            command = tuple(shlex.split(rest))
        except ValueError as exc:
            raise PlayerSpecError(f"player {text!r}: the command cannot be split: {exc}") from None
        if not command or not command[0]:
            raise PlayerSpecError(f"player {text!r}: the command is empty")
        label = command[0].rsplit("/", 1)[-1]
        return _check_spec(PlayerSpec(text, "cmd", name or label, options=extra, command=command))
    if kind == "tcp" and rest:
        host, sep, port_text = rest.rpartition(":")
        if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise PlayerSpecError(f"player {text!r}: write tcp:HOST:PORT with a port 1-65535")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]  # an IPv6 address: tcp:[::1]:5000
        return _check_spec(
            PlayerSpec(text, "tcp", name or rest, options=extra, host=host, port=int(port_text))
        )
    raise PlayerSpecError(
        f"player {text!r}: write bot:NAME[:OPTION=VALUE,...] (a built-in or plug-in bot), "
        "cmd:COMMAND (an engine over stdio) or tcp:HOST:PORT (a running server), optionally "
        "after name=NAME: and options=NAME=VALUE,...:"
    )


Clocks = m.Go
"""What the arbiter tells the mover about time and depth: the protocol's ``go`` message."""


def is_timed(clocks: Clocks) -> bool:
    """Whether a clock or a move time bounds this search."""
    return clocks.movetime is not None or clocks.p1time is not None or clocks.p2time is not None


@dataclass(frozen=True, slots=True)
class GoRequest:
    """One decision asked of a player.

    Attributes:
        seat: the mover (0 = p1).
        position: the position string the player is given (its own view).
        start: the start position string of the game and ``moves`` the tokens played since,
            when the player may be given the history (games of perfect information); None when
            it must be given ``position`` alone (a view hiding the opponent's secrets).
        clocks: the limits of this search.
        forfeit_at: ``trio.current_time()`` after which the move is too late (None: no clock).
        turn: where the decision stands in the mover's turn (``State.turn_position``).
    """

    seat: int
    position: str
    start: str | None
    moves: tuple[str, ...]
    clocks: Clocks
    forfeit_at: float | None
    turn: tuple[int, int] = (0, 1)


@dataclass(frozen=True, slots=True)
class Reply:
    """A player's answer: the token (None: the player had no move), the last score, depth
    and nodes it reported, and the seconds from the ``go`` to the answer, measured by the
    arbiter."""

    token: str | None
    elapsed: float
    score: Score | None = None
    depth: int = 0
    nodes: int = 0
    search_ms: int | None = None
    """The search time the player itself reported (``time`` of its last ``info``)."""


@dataclass
class Deadlines:
    """Seconds the arbiter waits for each answer of an external engine."""

    startup: float = 10.0
    ready: float = 5.0
    ping_every: float = 5.0
    """While a search without a clock runs: seconds between two ``isready`` checks."""
    move: float = MOVE_TIMEOUT
    """The longest a search without a clock (depth, nodes) may take before the player is
    forfeited with ``stall``: an engine that answers ``isready`` but never ``bestmove`` cannot
    hold a game for ever."""


class Player(ABC):
    """One player instance; it plays one game at a time."""

    def __init__(self, spec: PlayerSpec) -> None:
        self.spec = spec
        self.alive = False

    @property
    def name(self) -> str:
        """The display name."""
        return self.spec.name

    @abstractmethod
    async def start(self, game: games.Game) -> None:
        """Launch and greet the player.

        Raises:
            PlayerSpecError: the player cannot play at all (unknown bot, bad option, a game it
                does not play): a configuration error, not a forfeit.
            ForfeitError: it did not start or answer in time.
        """

    @abstractmethod
    async def new_game(self, key: str, seed: int, secret_seed: int = 0) -> None:
        """Prepare a new game (``key`` names it). ``seed`` is given to a bot with a ``Seed``
        option; ``secret_seed`` (not 0) to a built-in bot's ``SecretSeed``, over the private
        channel to its worker only: an external engine draws its own secrets.

        Raises:
            ForfeitError: no answer in time, or the player is gone.
        """

    @abstractmethod
    async def go(self, request: GoRequest) -> Reply:
        """Ask for a decision.

        Raises:
            ForfeitError: crash, disconnect, stall or time-forfeit.
        """

    @abstractmethod
    async def close(self) -> None:
        """Let the player go (never raises)."""


# -- bots in worker processes ---------------------------------------------------------------------


def check_bot(spec: PlayerSpec, game: str) -> Engine:
    """A configured instance of a ``bot:`` player's bot, to check that it can play ``game``.

    Raises:
        PlayerSpecError: an unknown bot, a game it does not play, or a bad option.
    """
    try:
        engine = create_bot(spec.bot)
    except BotError as exc:
        raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    if not engine.supports(game):
        raise PlayerSpecError(f"player {spec.text!r}: {spec.bot} does not play {game}")
    for key, value in spec.options:
        try:
            engine.set_option(key, value)
        except OptionError as exc:
            raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    return engine


class BotPlayer(Player):
    """A bot searching in the arbiter's worker pool.

    With a clock the bot keeps its tables from one move to the next when the pool gives it the
    same worker; without one (depth or node limits) every search starts afresh, so that a game
    replays exactly whatever worker it lands on (resumed tournaments end as uninterrupted ones).
    """

    def __init__(
        self,
        spec: PlayerSpec,
        pool: SearchRunner | None,
        *,
        overhead_ms: int = BOT_OVERHEAD_MS,
        move_timeout: float = MOVE_TIMEOUT,
    ) -> None:
        super().__init__(spec)
        self.pool = pool
        self.overhead_ms = overhead_ms
        self.move_timeout = move_timeout
        self.game = ""
        self.session = ""
        self.instance = next(_BOT_INSTANCES)
        self.game_key = ""
        self.seed = 0
        self.secret_seed = 0
        self.fresh = True
        self.has_seed = False
        self.has_secret_seed = False

    async def start(self, game: games.Game) -> None:
        engine = check_bot(self.spec, game.name)
        self.has_seed = any(option.name == "Seed" for option in engine.options)
        self.has_secret_seed = any(option.name == "SecretSeed" for option in engine.options)
        self.game = game.name
        self.alive = True

    async def new_game(self, key: str, seed: int, secret_seed: int = 0) -> None:
        # one worker-side bot per player instance, not per game: a new game clears its tables
        # (new_game), while a bot per game would make the workers drop a full table at every
        # game's first moves, time that move's clock pays for
        self.session = f"{self.spec.name}#{self.instance}"
        self.game_key = key
        self.seed = seed
        self.secret_seed = secret_seed
        self.fresh = True

    async def go(self, request: GoRequest) -> Reply:
        clocks = request.clocks
        budget = timeman.search_time(clocks, request.seat, request.turn, self.overhead_ms)
        options = self.spec.options
        given = {k.lower() for k, _ in options}
        if self.has_seed and "seed" not in given:
            options = (*options, ("Seed", str(self.seed)))
        if self.has_secret_seed and self.secret_seed and "secretseed" not in given:
            options = (*options, ("SecretSeed", str(self.secret_seed)))
        job = SearchJob(
            session=self.session,
            game=self.game,
            position=request.position,
            bot=self.spec.bot,
            options=tuple((k, v) for k, v in options),
            depth=clocks.depth,
            nodes=clocks.nodes,
            target=budget.target,
            deadline=budget.deadline,
            new_game=self.fresh or not is_timed(clocks),
            game_key=self.game_key,
            issued=time.monotonic(),
            from_pv=budget.from_pv,
        )
        self.fresh = False
        if self.pool is None:
            raise ForfeitError("crash", "no search workers are running")
        started = trio.current_time()
        hard = request.forfeit_at
        if hard is None:
            hard = started + self.move_timeout
        outcome = await self.pool.search(
            job, on_info=lambda info: None, stop=trio.Event(), hard_deadline=hard
        )
        elapsed = trio.current_time() - started
        result = outcome.result
        if outcome.error is not None:
            raise ForfeitError("crash", f"the bot failed: {outcome.error}")
        if result is None:
            if request.forfeit_at is not None:
                raise ForfeitError("time-forfeit", f"no move after {elapsed:.3f} s")
            if outcome.killed:
                raise ForfeitError(
                    "stall", f"no move within the move timeout of {self.move_timeout:g} s"
                )
            raise ForfeitError("stall", "the search ended without a move")
        return Reply(result.token, elapsed, result.score, result.depth, result.nodes, result.time)

    async def close(self) -> None:
        self.alive = False


# -- external engines over the text protocol ------------------------------------------------------


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


def make_player(
    spec: PlayerSpec,
    pool: SearchRunner | None,
    deadlines: Deadlines | None = None,
    *,
    stderr: Path | None = None,
    wrapper: tuple[str, ...] = (),
) -> Player:
    """A fresh player instance for ``spec`` (bots share ``pool``; a ``cmd:`` engine's standard
    error is appended to ``stderr`` when given)."""
    if spec.kind == "bot":
        return BotPlayer(spec, pool, move_timeout=(deadlines or Deadlines()).move)
    return TextEnginePlayer(spec, deadlines, stderr=stderr, wrapper=wrapper)

"""One protocol session: the game, the position, the options and at most one running search.

The session turns protocol commands into replies (docs/protocol.md is the contract). It is
framing-aware only where the protocol says the framings differ (silent successes, the answer
to ``go`` on a finished game, ``Compat``); encoding is the connection's job. Every command is
checked completely before anything changes, so a rejected command leaves the session exactly
as it was. Searches run elsewhere (a ``SearchRunner``: the worker pool, or a thread in tests);
while one runs, the session keeps answering the commands that do not change it, refuses the
others (204) until a ``stop`` arrives, and after a stop makes them wait for the search's best
move. Every accepted ``go`` is answered exactly once, by ``_run_search`` or ``_no_move``, even
when the runner fails.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import structlog
import trio

import games
from bots import registry
from bots.engine import Engine, OptionError, Score, SearchInfo, SearchResult
from bots.registry import BotError
from enginesrv import __version__
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import GRACE, SearchOutcome, SearchRunner
from enginesrv.search.timeman import search_time
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    GAME_OVER,
    INTERNAL,
    INVALID_POSITION,
    MOVES_HIDDEN,
    NO_GAME,
    NOT_SEARCHING,
    SEARCH_IN_PROGRESS,
    UNKNOWN_COMMAND,
    UNSUPPORTED_VERSION,
    ErrorCode,
)

MOVES_LISTED = 100_000
"""``query moves`` lists at most this many moves; beyond it, it reports the count."""
MOVES_PER_TURN = 256
"""Moves of a ``position`` command replayed between two yields to the event loop."""
REPLY_OVERHEAD = {"text": len("response "), "msgpack": 64}
"""Bytes of a ``query moves`` reply besides its tokens (the keyword; msgpack's envelope)."""
TOKEN_OVERHEAD = {"text": 1, "msgpack": 3}
"""Bytes a token costs besides its text: a space, or at most a msgpack string header."""

READ_ONLY = (m.Ugi, m.IsReady, m.Ping, m.Stop, m.Quit, m.Query, m.Bots, m.Options, m.Show)
"""The commands answered even while a search runs (docs/protocol.md §3)."""

Framing = Literal["text", "msgpack"]


@dataclass(frozen=True)
class SessionConfig:
    """What every session of a server shares."""

    name: str = "enginesrv"
    author: str = "the enginesrv developers"
    default_game: str | None = None
    default_bot: str = "alphabeta"
    limits: tuple[m.LimitInfo, ...] = ()
    hash_limit: int | None = None
    """The largest ``Hash`` (MB) one search may have: the server's hash budget shared by its
    workers (None: only the option's own maximum)."""
    hash_budget: int | None = None
    """The server's hash budget (MB), named when a ``Hash`` over ``hash_limit`` is refused."""
    grace: float = GRACE
    """Seconds a search gets past its deadline before the worker is killed."""


Send = Callable[[m.Reply, int | None], Awaitable[None]]
SendNowait = Callable[[m.Reply, int | None], None]


class _Error(Exception):
    """A command is rejected: the reply to send instead of its result."""

    def __init__(self, reply: m.ErrorReply | m.InvalidMove) -> None:
        super().__init__(str(reply))
        self.reply = reply


def _error(code: ErrorCode, message: str, data: dict[str, object] | None = None) -> _Error:
    return _Error(m.ErrorReply(code.code, code.name, message, data))


@dataclass
class _Search:
    msgid: int | None
    infinite: bool
    stop: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)


SESSION_OPTIONS = ("Game", "Bot", "Hash", "MoveOverhead", "Compat")
DEFAULT_HASH = 64
MAX_HASH = 4096


class Session:
    """The state of one connection and the handler of its commands."""

    _ids = itertools.count(1)

    def __init__(
        self,
        config: SessionConfig,
        runner: SearchRunner,
        *,
        framing: Framing,
        send: Send,
        send_nowait: SendNowait,
        logger: structlog.typing.FilteringBoundLogger | None = None,
        peer: str | None = None,
        max_reply: int = 65536,
    ) -> None:
        self.config = config
        self.peer = peer
        self.max_reply = max_reply
        self.runner = runner
        self.framing = framing
        self._send = send
        self._send_nowait = send_nowait
        self.id = f"s{next(self._ids)}"
        self.log = logger or structlog.get_logger("enginesrv.serve.session")
        self.game: games.Game | None = None
        self.state: games.State | None = None
        self.played: list[str] = []
        self.bot_name = config.default_bot
        self.bot_options: dict[str, str | None] = {}
        self.hash_mb = min(DEFAULT_HASH, config.hash_limit or DEFAULT_HASH)
        self.move_overhead = 50
        self.compat = False
        self.fresh_game = True
        self.search: _Search | None = None
        self.closing = False
        if config.default_game is not None:
            self._set_game(games.load(config.default_game))

    # -- replies -------------------------------------------------------------------------------

    async def reply(self, reply: m.Reply, msgid: int | None) -> None:
        """Send a reply, turning errors into ``info string`` lines in Compat mode."""
        if self.compat and self.framing == "text":
            if isinstance(reply, m.ErrorReply):
                if reply.code == UNKNOWN_COMMAND.code:
                    return  # strict UCI clients expect unknown input to be ignored
                reply = m.Info(string=f"error {reply.code} {reply.name} {reply.message}")
            elif isinstance(reply, m.InvalidMove):
                reply = m.Info(string=f"invalidmove {reply.move} {reply.reason}")
        await self._send(reply, msgid)

    # -- dispatch ------------------------------------------------------------------------------

    async def handle(self, request: m.Request, nursery: trio.Nursery) -> None:
        """Answer one command. Never raises for bad input: errors become replies."""
        command = request.command
        msgid = request.msgid
        try:
            search = self.search
            if search is not None and not isinstance(command, READ_ONLY):
                if not search.stop.is_set():
                    raise _error(
                        SEARCH_IN_PROGRESS,
                        f"{command.METHOD}: a search is running; send stop first",
                    )
                # After a stop, commands wait for that search's best move, then run. The wait
                # is bounded: the pool kills a worker that does not answer within its grace.
                await search.done.wait()
            reply = await self._dispatch(command, msgid, nursery)
        except _Error as exc:
            self.log.info("command_error", command=command.METHOD, error=str(exc.reply))
            await self.reply(exc.reply, msgid)
            return
        except Exception as exc:  # a fault of ours: report it, keep the session (code 500)
            self.log.exception("internal_error", command=command.METHOD)
            text = f"{command.METHOD}: internal error ({type(exc).__name__}); it has been logged"
            await self.reply(m.ErrorReply(INTERNAL.code, INTERNAL.name, text), msgid)
            return
        if reply is not None:
            await self.reply(reply, msgid)

    async def _dispatch(
        self, command: m.Command, msgid: int | None, nursery: trio.Nursery
    ) -> m.Reply | None:
        match command:
            case m.Ugi(protocol=version):
                if version is not None and version != m.PROTOCOL_VERSION:
                    raise _error(
                        UNSUPPORTED_VERSION,
                        f"ugi: protocol {version} is not spoken here (this server speaks "
                        f"{m.PROTOCOL_VERSION})",
                    )
                return self._handshake()
            case m.IsReady():
                return m.ReadyOk()
            case m.Ping(token):
                return m.Pong(token)
            case m.SetOption(name, value):
                self._set_option(name, value)
                return m.Ack()
            case m.NewGame(name):
                self._new_game(name)
                return m.Ack()
            case m.Position(fen, moves):
                await self._set_position(fen, moves)
                return m.Ack()
            case m.Go():
                await self._go(command, msgid, nursery)
                return None
            case m.Stop(search):
                return self._stop(search, msgid)
            case m.Quit():
                await self._quit()
                return m.Ack()
            case m.Query(what):
                return m.Response(self._query(what))
            case m.Play(token):
                return m.Response(self._play(token))
            case m.Undo(n):
                return m.Response(self._undo(n))
            case m.Bots():
                return m.BotList(self._bots())
            case m.Options():
                return m.OptionList(self._options())
            case m.Show():
                return m.ShowText(self._show())

    # -- handshake, options --------------------------------------------------------------------

    def _handshake(self) -> m.Handshake:
        return m.Handshake(
            name=self.config.name,
            author=self.config.author,
            version=__version__,
            protocol=m.PROTOCOL_VERSION,
            games=_game_infos(),
            bots=self._bots(),
            options=self._options(),
            limits=self.config.limits,
        )

    def _bots(self) -> tuple[m.BotInfo, ...]:
        return _bot_infos()

    def _bot_class(self) -> type[Engine]:
        return _bot_class(self.bot_name)

    def _options(self) -> tuple[m.OptionSpec, ...]:
        specs = [
            m.OptionSpec(
                "Game",
                "combo",
                self.game.name if self.game is not None else "",
                vars=tuple(games.available()),
            ),
            m.OptionSpec("Bot", "combo", self.bot_name, vars=tuple(_bot_names())),
            m.OptionSpec("Hash", "spin", str(self.hash_mb), 1, self._hash_max()),
            m.OptionSpec("MoveOverhead", "spin", str(self.move_overhead), 0, 5000),
            m.OptionSpec("Compat", "check", "true" if self.compat else "false"),
        ]
        for option in self._bot_class().options:
            if option.name.lower() in (n.lower() for n in SESSION_OPTIONS):
                continue
            current = self.bot_options.get(option.name)
            default = current if current is not None else option.text(option.default)
            specs.append(
                m.OptionSpec(
                    option.name,
                    option.type,
                    None if option.type == "button" else default,
                    option.min,
                    option.max,
                    option.vars,
                )
            )
        return tuple(specs)

    def _set_option(self, name: str, value: str | None) -> None:
        key = name.strip().lower()
        if key == "game":
            game = self._load_game(value or "", "setoption")
            self._set_game(game)
        elif key == "bot":
            chosen = next((b for b in _bot_names() if b.lower() == (value or "").lower()), None)
            if chosen is None:
                raise _error(
                    BAD_ARGUMENTS,
                    f"setoption: unknown bot {value!r}; known bots: {', '.join(_bot_names())}",
                )
            try:
                plays = _plays(chosen)
            except BotError as exc:
                raise _error(BAD_ARGUMENTS, f"setoption: {exc}") from None
            if self.game is not None and plays is not None and self.game.name not in plays:
                raise _error(
                    BAD_ARGUMENTS, f"setoption: bot {chosen!r} does not play {self.game.name}"
                )
            self.bot_name = chosen
            self.bot_options = {}  # the new bot starts from its defaults, and so do its tables
            self.fresh_game = True
        elif key == "hash":
            self.hash_mb = self._hash(name, value)
        elif key == "moveoverhead":
            self.move_overhead = self._spin(name, value, 0, 5000)
        elif key == "compat":
            lowered = (value or "").strip().lower()
            if lowered not in ("true", "false"):
                raise _error(BAD_ARGUMENTS, f"setoption: Compat is true or false, not {value!r}")
            self.compat = lowered == "true"
        else:
            self._set_bot_option(name, value)

    def _hash_max(self) -> int:
        limit = self.config.hash_limit
        return MAX_HASH if limit is None else max(1, min(MAX_HASH, limit))

    def _hash(self, name: str, value: str | None) -> int:
        number = self._spin(name, value, 1, MAX_HASH)
        if number > self._hash_max():
            budget = self.config.hash_budget
            whose = (
                f"the server's hash budget of {budget} MB leaves {self._hash_max()} MB "
                "to each search"
                if budget is not None
                else f"the most a search may have is {self._hash_max()} MB"
            )
            raise _error(BAD_ARGUMENTS, f"setoption: Hash {number} MB is too much: {whose}")
        return number

    def _spin(self, name: str, value: str | None, low: int, high: int) -> int:
        try:
            number = int((value or "").strip())
        except ValueError:
            raise _error(
                BAD_ARGUMENTS, f"setoption: {name} needs a whole number, not {value!r}"
            ) from None
        if not low <= number <= high:
            raise _error(BAD_ARGUMENTS, f"setoption: {name} must be in {low}..{high}")
        return number

    def _set_bot_option(self, name: str, value: str | None) -> None:
        options = self._bot_class().options
        option = next((o for o in options if o.name.lower() == name.strip().lower()), None)
        if option is None:
            session = {n.lower() for n in SESSION_OPTIONS}
            own = [o.name for o in options if o.name.lower() not in session]
            known = ", ".join([*SESSION_OPTIONS, *own])
            raise _error(BAD_ARGUMENTS, f"setoption: unknown option {name!r} (options: {known})")
        try:
            option.parse(value)
        except OptionError as exc:
            raise _error(BAD_ARGUMENTS, f"setoption: {exc}") from None
        self.bot_options[option.name] = value

    def _job_options(self) -> tuple[tuple[str, str | None], ...]:
        """Every option of the bot with the value ``options`` reports, so the worker's bot
        searches with exactly those (a kept bot never keeps a value the session dropped)."""
        options: dict[str, str | None] = {}
        for option in self._bot_class().options:
            if option.type == "button":
                continue
            if option.name == "Hash":
                options["Hash"] = str(self.hash_mb)
            elif option.name in self.bot_options:
                options[option.name] = self.bot_options[option.name]
            elif option.default is not None:
                options[option.name] = option.text(option.default)
        return tuple(sorted(options.items()))

    # -- game and position ---------------------------------------------------------------------

    def _load_game(self, name: str, verb: str) -> games.Game:
        try:
            return games.load(name.strip())
        except games.UnknownGameError as exc:
            raise _error(BAD_ARGUMENTS, f"{verb}: unknown game {name!r}; {exc.reason}") from None

    def _set_game(self, game: games.Game) -> None:
        self.game = game
        self.state = game.new_state()
        self.played = []
        self.fresh_game = True
        if not _supports(self.bot_name, game.name):
            # keep a bot that plays the game: the default, else any
            for name in [self.config.default_bot, *_bot_names()]:
                if _supports(name, game.name):
                    self.bot_name = name
                    self.bot_options = {}
                    break

    def _require_game(self, verb: str) -> tuple[games.Game, games.State]:
        if self.game is None or self.state is None:
            raise _error(NO_GAME, f"{verb}: no game is set; send setoption name Game value NAME")
        return self.game, self.state

    def _new_game(self, name: str | None) -> None:
        if name is not None:
            self._set_game(self._load_game(name, "uginewgame"))
            return
        game, _ = self._require_game("uginewgame")
        self._set_game(game)

    async def _set_position(self, fen: str | None, moves: tuple[str, ...]) -> None:
        game, _ = self._require_game("position")
        try:
            state = game.state_from_string(fen) if fen is not None else game.new_state()
        except games.InvalidPositionError as exc:
            raise _error(INVALID_POSITION, f"position {fen!r}: {exc.reason}") from None
        # a frame may carry a hundred thousand moves: let the other clients run between
        # pieces of them. Moves as the session's holder was shown them (a view may be given
        # the opponent's Yin Yang setup as laws:?,?,?,?).
        for first in range(0, len(moves), MOVES_PER_TURN):
            try:
                games.replay(
                    game, state, moves[first : first + MOVES_PER_TURN], shown=True, first=first + 1
                )
            except games.ReplayError as exc:
                raise _Error(m.InvalidMove(exc.text, exc.reason)) from None
            if first + MOVES_PER_TURN < len(moves):
                await trio.lowlevel.checkpoint()
        self.state = state
        self.played = list(moves)

    def _play(self, token: str) -> str:
        _, state = self._require_game("play")
        if state.is_terminal():
            raise _error(GAME_OVER, f"play: the game is over ({state.outcome()})")
        try:
            move = state.parse_shown_move(token)  # as the session's holder was shown it
        except games.GameError as exc:
            raise _Error(m.InvalidMove(token, exc.reason)) from None
        state.push(move)
        self.played.append(token)
        return state.to_string()

    def _undo(self, n: int) -> str:
        _, state = self._require_game("undo")
        available = min(len(self.played), state.ply())
        if n > available:
            raise _error(
                BAD_ARGUMENTS, f"undo: only {available} move(s) can be taken back, not {n}"
            )
        for _ in range(n):
            state.pop()
            self.played.pop()
        return state.to_string()

    def _query(self, what: str) -> m.ResponseValue:
        _, state = self._require_game("query")
        outcome = state.outcome()
        match what:
            case "gameover":
                return state.is_terminal()
            case "p1turn":
                return state.to_move() == games.P1
            case "result":
                if outcome is None:
                    return "none"
                return "draw" if outcome.winner == "draw" else f"{outcome.winner}win"
            case "moves":
                count = state.count_moves()
                if count > MOVES_LISTED:
                    return f"count {count} {state.describe_moves()}".rstrip()
                return self._fit_moves(sorted(state.move_to_str(mv) for mv in state.legal_moves()))
            case "position":
                return state.to_string()
            case "turn":
                seat = state.to_move()
                return "none" if seat < 0 else f"p{seat + 1}"
            case "outcome":
                return None if outcome is None else outcome.as_dict()
            case _:  # "phase"
                return state.phase()

    def _fit_moves(self, tokens: list[str]) -> m.ResponseValue:
        """The move list, or, when it would make a reply longer than the line or frame limit,
        ``count N moves`` and the first moves that fit (docs/protocol.md §4.1)."""
        room = self.max_reply - REPLY_OVERHEAD[self.framing]
        extra = TOKEN_OVERHEAD[self.framing]
        costs = [len(t.encode()) + extra for t in tokens]
        if sum(costs) <= room:
            return tuple(tokens)
        head = f"count {len(tokens)} moves"
        room -= len(head)
        kept = 0
        for cost in costs:
            if cost > room:
                break
            room -= cost
            kept += 1
        return " ".join([head, *tokens[:kept]])

    def _show(self) -> str:
        game, state = self._require_game("show")
        seat = state.to_move()
        turn = "nobody (game over)" if seat < 0 else f"{game.colours[seat]} (p{seat + 1})"
        lines = [
            state.render(),
            f"to act:   {turn}",
            f"phase:    {state.phase()} ({state.phase_name()})",
            f"position: {state.to_string()}",
        ]
        if (outcome := state.outcome()) is not None:
            lines.append(f"outcome:  {outcome}")
        return "\n".join(lines)

    # -- searching -----------------------------------------------------------------------------

    async def _go(self, go: m.Go, msgid: int | None, nursery: trio.Nursery) -> None:
        if self.framing == "msgpack" and msgid is None:
            raise _error(BAD_ARGUMENTS, "go: send it as a request; its result is the best move")
        game, state = self._require_game("go")
        if state.is_terminal():
            await self._no_move(GAME_OVER, "go: the game is over", msgid)
            return
        if state.moves_hidden():
            await self._no_move(
                MOVES_HIDDEN,
                "go: the side to act has moves that depend on information hidden in this "
                "position; send the position of the side to act (its own view)",
                msgid,
            )
            return
        seat = state.to_move()
        budget = search_time(go, seat, state.turn_position(), self.move_overhead)
        infinite = go.infinite or (
            budget.deadline is None and go.depth is None and go.nodes is None
        )
        # The bot searches from what the side to act may know. A plain UGI manager hands
        # both sides the full move list, the other side's secret laws included; the search
        # never sees them (for a perfect-information game the view is the position itself).
        job = SearchJob(
            session=self.id,
            game=game.name,
            position=state.view(seat).to_string(),
            bot=self.bot_name,
            options=self._job_options(),
            depth=go.depth,
            nodes=go.nodes,
            target=budget.target,
            deadline=budget.deadline,
            new_game=self.fresh_game,
            issued=time.monotonic(),
            from_pv=budget.from_pv,
        )
        self.fresh_game = False
        search = _Search(msgid, infinite)
        self.search = search
        nursery.start_soon(self._run_search, job, search, state.copy())

    async def _no_move(self, code: ErrorCode, message: str, msgid: int | None) -> None:
        """Answer a ``go`` that has no move to search: the error, then its one best move
        (none). In msgpack both are the one error response, with ``{move: nil}``."""
        if self.framing == "msgpack":
            raise _error(code, message, {"move": None})
        await self.reply(m.ErrorReply(code.code, code.name, message), msgid)
        await self._send(m.BestMove(None), msgid)

    async def _run_search(self, job: SearchJob, search: _Search, state: games.State) -> None:
        log = self.log.bind(search=search.msgid)
        log.info("search_start", bot=job.bot, depth=job.depth, nodes=job.nodes,
                 deadline=job.deadline)  # fmt: skip
        grace = self.config.grace
        hard = None if job.deadline is None else trio.current_time() + job.deadline + grace
        sent_best = False
        try:

            def on_info(info: SearchInfo) -> None:
                self._send_nowait(_info_reply(info, search.msgid), search.msgid)

            def on_wait() -> None:
                self._send_nowait(
                    m.Info(
                        string="waiting for a search worker (all are busy, or this address "
                        "has its share)",
                        search=search.msgid,
                    ),
                    search.msgid,
                )

            try:
                outcome = await self.runner.search(
                    job,
                    on_info=on_info,
                    stop=search.stop,
                    hard_deadline=hard,
                    on_wait=on_wait,
                    peer=self.peer,
                )
            except Exception as exc:  # a fault of ours: the go still gets its one answer
                log.exception("search_failed")
                outcome = SearchOutcome(None, error=f"search failed ({type(exc).__name__})")
            if search.infinite and not search.stop.is_set():
                await search.stop.wait()  # UCI: no bestmove before stop in infinite mode
            best = _best_of(outcome, state)
            if outcome.error is not None:
                await self.reply(m.ErrorReply(INTERNAL.code, INTERNAL.name, outcome.error), None)
            log.info(
                "search_end",
                move=best.move,
                depth=best.depth,
                nodes=best.nodes,
                time=best.time,
                killed=outcome.killed,
            )
            self.search = None
            await self._send(best, search.msgid)
            sent_best = True
        finally:
            if self.search is search:
                self.search = None
            search.done.set()
            if not sent_best:
                log.info("search_abandoned")

    def _stop(self, search_id: int | None, msgid: int | None) -> m.Reply | None:
        search = self.search
        if search is None or (search_id is not None and search_id != search.msgid):
            if self.framing == "msgpack" and msgid is not None:
                which = "no search" if search_id is None else f"no search {search_id}"
                raise _error(NOT_SEARCHING, f"stop: {which} is running")
            return None  # UCI: a stop without a search is ignored
        search.stop.set()
        return m.Ack()

    async def _quit(self) -> None:
        self.closing = True
        await self.stop_search()

    async def stop_search(self) -> None:
        """Stop the running search, if any, and wait until its best move has been sent."""
        search = self.search
        if search is not None:
            search.stop.set()
            await search.done.wait()


def _best_of(outcome: SearchOutcome, state: games.State) -> m.BestMove:
    """The one answer to a ``go``: the search's move if it is legal, else the first move of
    the last reported line, else any legal move (None only when there is none)."""
    result: SearchResult | None = outcome.result
    candidates: list[str] = []
    if result is not None and result.token is not None:
        candidates.append(result.token)
    if outcome.last_info is not None and outcome.last_info.pv:
        candidates.append(outcome.last_info.pv[0])
    token = next((t for t in candidates if _is_legal(state, t)), None)
    if token is None:
        moves = state.legal_moves()
        token = state.move_to_str(moves[0]) if len(moves) else None
    if result is not None and token is not None and token == result.token:
        return m.BestMove(
            token,
            score=_score(result.score),
            depth=result.depth,
            seldepth=result.seldepth,
            nodes=result.nodes,
            time=result.time,
            pv=result.pv,
            stopped=result.stopped or outcome.killed,
        )
    return m.BestMove(token, stopped=True)


def _is_legal(state: games.State, token: str) -> bool:
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


def prepare_handshake(default_bot: str) -> None:
    """Build now, once, what every handshake tells (the games, the bots and what each plays,
    the default bot's options). Built on the first client's ``ugi`` instead, it held the event
    loop, and so every other connection, for about a tenth of a second."""
    _game_infos()
    _bot_infos()
    with contextlib.suppress(BotError):
        _bot_class(default_bot)


@functools.cache
def _game_infos() -> tuple[m.GameInfo, ...]:
    """The handshake's games (built once: the registry does not change while serving)."""
    infos = []
    for name in games.available():
        game = games.load(name)
        infos.append(m.GameInfo(name, game.colours, game.start_position))
    return tuple(infos)


@functools.cache
def _bot_names() -> tuple[str, ...]:
    """The registered bots (read once: scanning the installed distributions takes
    milliseconds, and the bots cannot change while a server runs)."""
    return tuple(registry.bot_names())


@functools.cache
def _bot_class(name: str) -> type[Engine]:
    """The class of a registered bot (loaded once; see ``registry.bot_class``)."""
    return registry.bot_class(name)


@functools.cache
def _plays(bot: str) -> tuple[str, ...] | None:
    """The games ``bot`` plays, None for every game (asked once per bot).

    Raises:
        BotError: the bot cannot be built.
    """
    return _bot_class(bot)().game_names()


def _supports(bot: str, game: str) -> bool:
    try:
        plays = _plays(bot)
    except BotError:
        return False
    return plays is None or game in plays


@functools.cache
def _bot_infos() -> tuple[m.BotInfo, ...]:
    """The bots and the games each plays (built once)."""
    out = []
    for name in _bot_names():
        try:
            plays = _plays(name)
        except BotError:
            continue
        out.append(m.BotInfo(name, tuple(plays) if plays is not None else tuple(games.available())))
    return tuple(out)


def _score(score: Score | None) -> m.Score | None:
    return None if score is None else m.Score(score.kind, score.value)


def _info_reply(info: SearchInfo, search: int | None) -> m.Info:
    return m.Info(
        depth=info.depth,
        seldepth=info.seldepth,
        score=_score(info.score),
        nodes=info.nodes,
        nps=info.nps,
        time=info.time,
        hashfull=info.hashfull,
        pv=info.pv,
        string=info.string,
        search=search,
    )

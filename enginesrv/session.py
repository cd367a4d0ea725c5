"""One protocol session: the game, the position, the options and at most one running search.

The session turns protocol commands into replies (docs/protocol.md is the contract). It is
framing-aware only where the protocol says the framings differ (silent successes, the answer
to ``go`` on a finished game, ``Compat``); encoding is the connection's job. Every command is
checked completely before anything changes, so a rejected command leaves the session exactly
as it was. Searches run elsewhere (a ``SearchRunner``: the worker pool, or a thread in tests);
while one runs, the session keeps answering the commands that do not change it.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import structlog
import trio

import games
from bots.engine import Engine, OptionError, Score, SearchInfo, SearchResult
from bots.registry import BotError, bot_class, bot_names, create_bot
from enginesrv import __version__
from enginesrv.pool import GRACE, SearchOutcome
from enginesrv.timeman import allot
from enginesrv.worker import SearchJob
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    GAME_OVER,
    INTERNAL,
    INVALID_POSITION,
    NO_GAME,
    NOT_SEARCHING,
    SEARCH_IN_PROGRESS,
    UNKNOWN_COMMAND,
    UNSUPPORTED_VERSION,
    ErrorCode,
)

MOVES_LISTED = 100_000
"""``query moves`` lists at most this many moves; beyond it, it reports the count."""

READ_ONLY = (m.Ugi, m.IsReady, m.Ping, m.Stop, m.Quit, m.Query, m.Bots, m.Options, m.Show)
"""The commands answered even while a search runs (docs/protocol.md §3)."""

Framing = Literal["text", "msgpack"]


class SearchRunner(Protocol):
    """Where searches run: ``WorkerPool`` in the server, a thread in tests."""

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
    ) -> SearchOutcome:
        """Run one search (see ``WorkerPool.search``)."""
        ...


@dataclass(frozen=True)
class SessionConfig:
    """What every session of a server shares."""

    name: str = "enginesrv"
    author: str = "the enginesrv developers"
    default_game: str | None = None
    default_bot: str = "alphabeta"
    limits: tuple[m.LimitInfo, ...] = ()


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
    ) -> None:
        self.config = config
        self.runner = runner
        self.framing = framing
        self._send = send
        self._send_nowait = send_nowait
        self.id = f"s{next(self._ids)}"
        self.log = logger or structlog.get_logger("enginesrv.session")
        self.game: games.Game | None = None
        self.state: games.State | None = None
        self.played: list[str] = []
        self.bot_name = config.default_bot
        self.bot_options: dict[str, str | None] = {}
        self.hash_mb = 64
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
            if self.search is not None and not isinstance(command, READ_ONLY):
                raise _error(
                    SEARCH_IN_PROGRESS,
                    f"{command.METHOD}: a search is running; send stop first",
                )
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
                self._set_position(fen, moves)
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
        game_infos = []
        for name in games.available():
            game = games.load(name)
            game_infos.append(m.GameInfo(name, game.colours, game.start_position))
        return m.Handshake(
            name=self.config.name,
            author=self.config.author,
            version=__version__,
            protocol=m.PROTOCOL_VERSION,
            games=tuple(game_infos),
            bots=self._bots(),
            options=self._options(),
            limits=self.config.limits,
        )

    def _bots(self) -> tuple[m.BotInfo, ...]:
        out = []
        for name in bot_names():
            try:
                plays = create_bot(name).game_names()
            except BotError:
                continue
            out.append(
                m.BotInfo(name, tuple(plays) if plays is not None else tuple(games.available()))
            )
        return tuple(out)

    def _bot_class(self) -> type[Engine]:
        return bot_class(self.bot_name)

    def _options(self) -> tuple[m.OptionSpec, ...]:
        specs = [
            m.OptionSpec(
                "Game",
                "combo",
                self.game.name if self.game is not None else "",
                vars=tuple(games.available()),
            ),
            m.OptionSpec("Bot", "combo", self.bot_name, vars=tuple(bot_names())),
            m.OptionSpec("Hash", "spin", str(self.hash_mb), 1, 4096),
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
            chosen = next((b for b in bot_names() if b.lower() == (value or "").lower()), None)
            if chosen is None:
                raise _error(
                    BAD_ARGUMENTS,
                    f"setoption: unknown bot {value!r}; known bots: {', '.join(bot_names())}",
                )
            try:
                engine = create_bot(chosen)
            except BotError as exc:
                raise _error(BAD_ARGUMENTS, f"setoption: {exc}") from None
            if self.game is not None and not engine.supports(self.game.name):
                raise _error(
                    BAD_ARGUMENTS, f"setoption: bot {chosen!r} does not play {self.game.name}"
                )
            self.bot_name = chosen
            self.bot_options = {}
        elif key == "hash":
            self.hash_mb = self._spin(name, value, 1, 4096)
        elif key == "moveoverhead":
            self.move_overhead = self._spin(name, value, 0, 5000)
        elif key == "compat":
            lowered = (value or "").strip().lower()
            if lowered not in ("true", "false"):
                raise _error(BAD_ARGUMENTS, f"setoption: Compat is true or false, not {value!r}")
            self.compat = lowered == "true"
        else:
            self._set_bot_option(name, value)

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
        probe = create_bot(self.bot_name)
        try:
            option = probe.option(name)
        except OptionError:
            known = ", ".join([*SESSION_OPTIONS, *(o.name for o in probe.options)])
            raise _error(
                BAD_ARGUMENTS, f"setoption: unknown option {name!r} (options: {known})"
            ) from None
        try:
            option.parse(value)
        except OptionError as exc:
            raise _error(BAD_ARGUMENTS, f"setoption: {exc}") from None
        self.bot_options[option.name] = value

    def _job_options(self) -> tuple[tuple[str, str | None], ...]:
        names = {o.name for o in self._bot_class().options}
        options = dict(self.bot_options)
        if "Hash" in names:
            options["Hash"] = str(self.hash_mb)
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
        if not create_bot(self.bot_name).supports(game.name):
            # keep a bot that plays the game: the default, else any
            for name in [self.config.default_bot, *bot_names()]:
                if create_bot(name).supports(game.name):
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

    def _set_position(self, fen: str | None, moves: tuple[str, ...]) -> None:
        game, _ = self._require_game("position")
        try:
            state = game.state_from_string(fen) if fen is not None else game.new_state()
        except games.InvalidPositionError as exc:
            raise _error(INVALID_POSITION, f"position {fen!r}: {exc.reason}") from None
        for token in moves:
            try:
                state.push(state.parse_move(token))
            except games.GameError as exc:
                raise _Error(m.InvalidMove(token, exc.reason)) from None
        self.state = state
        self.played = list(moves)

    def _play(self, token: str) -> str:
        _, state = self._require_game("play")
        if state.is_terminal():
            raise _error(GAME_OVER, f"play: the game is over ({state.outcome()})")
        try:
            move = state.parse_move(token)
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
                return tuple(sorted(state.move_to_str(mv) for mv in state.legal_moves()))
            case "position":
                return state.to_string()
            case "turn":
                seat = state.to_move()
                return "none" if seat < 0 else f"p{seat + 1}"
            case "outcome":
                return None if outcome is None else outcome.as_dict()
            case _:  # "phase"
                return state.phase()

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
            # exactly one bestmove per go, even here
            if self.framing == "msgpack" and msgid is not None:
                raise _error(GAME_OVER, "go: the game is over", {"move": None})
            await self.reply(
                m.ErrorReply(GAME_OVER.code, GAME_OVER.name, "go: the game is over"), msgid
            )
            await self._send(m.BestMove(None), msgid)
            return
        seat = state.to_move()
        budget = allot(
            time_ms=go.p1time if seat == 0 else go.p2time,
            inc_ms=(go.p1inc if seat == 0 else go.p2inc) or 0,
            movestogo=go.movestogo,
            movetime_ms=go.movetime,
            overhead_ms=self.move_overhead,
        )
        infinite = go.infinite or (
            budget.deadline_ms is None and go.depth is None and go.nodes is None
        )
        job = SearchJob(
            session=self.id,
            game=game.name,
            position=state.to_string(),
            bot=self.bot_name,
            options=self._job_options(),
            depth=go.depth,
            nodes=go.nodes,
            target=None if go.infinite or budget.target_ms is None else budget.target_ms / 1000,
            deadline=None
            if go.infinite or budget.deadline_ms is None
            else budget.deadline_ms / 1000,
            new_game=self.fresh_game,
        )
        self.fresh_game = False
        search = _Search(msgid, infinite)
        self.search = search
        nursery.start_soon(self._run_search, job, search, state.copy())

    async def _run_search(self, job: SearchJob, search: _Search, state: games.State) -> None:
        log = self.log.bind(search=search.msgid)
        log.info("search_start", bot=job.bot, depth=job.depth, nodes=job.nodes,
                 deadline=job.deadline)  # fmt: skip
        hard = None if job.deadline is None else trio.current_time() + job.deadline + GRACE
        sent_best = False
        try:

            def on_info(info: SearchInfo) -> None:
                self._send_nowait(_info_reply(info, search.msgid), search.msgid)

            def on_wait() -> None:
                self._send_nowait(
                    m.Info(
                        string="all search workers are busy; waiting for one", search=search.msgid
                    ),
                    search.msgid,
                )

            outcome = await self.runner.search(
                job, on_info=on_info, stop=search.stop, hard_deadline=hard, on_wait=on_wait
            )
            if search.infinite and not search.stop.is_set():
                await search.stop.wait()  # UCI: no bestmove before stop in infinite mode
            best = self._best_of(outcome, state)
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

    def _best_of(self, outcome: SearchOutcome, state: games.State) -> m.BestMove:
        result: SearchResult | None = outcome.result
        candidates: list[str] = []
        if result is not None and result.token is not None:
            candidates.append(result.token)
        if outcome.last_info is not None and outcome.last_info.pv:
            candidates.append(outcome.last_info.pv[0])
        candidates.append(state.move_to_str(state.legal_moves()[0]))  # any legal move will do
        token = next(t for t in candidates if _is_legal(state, t))
        if result is not None and token == result.token:
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


def _is_legal(state: games.State, token: str) -> bool:
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


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

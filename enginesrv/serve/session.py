"""One protocol session: the game, the position, the options and at most one running search.

The session turns protocol commands into replies (docs/protocol.md is the contract). It is
framing-aware only where the protocol says the framings differ (silent successes, the answer
to ``go`` on a finished game, ``Compat``); encoding is the connection's job. Every command is
checked completely before anything changes, so a rejected command leaves the session exactly
as it was. Searches run elsewhere (a ``SearchRunner``: the worker pool, or a thread in tests);
while one runs, the session keeps answering the commands that do not change it, refuses the
others (204) until a ``stop`` arrives, and after a stop makes them wait for the search's best
move. Every accepted ``go`` is answered exactly once, by ``_run_search`` or ``_no_move``, even
when the runner fails; in the text framing a refused one, when no other search runs, gets its
error and then ``bestmove none`` (``_refused_go``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
import trio

import games
from bots.engine import Score, SearchInfo, SearchResult
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.search.timeman import search_time
from enginesrv.serve.offload import offload
from enginesrv.serve.positions import Positions
from enginesrv.serve.settings import (
    DEFAULT_HASH,
    Framing,
    RequestError,
    SessionConfig,
    request_error,
)
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    GAME_OVER,
    INTERNAL,
    MOVES_HIDDEN,
    NOT_SEARCHING,
    SEARCH_IN_PROGRESS,
    UNKNOWN_COMMAND,
    UNSUPPORTED_VERSION,
    ErrorCode,
    ProtocolError,
)

READ_ONLY = (m.Ugi, m.IsReady, m.Ping, m.Stop, m.Quit, m.Query, m.Bots, m.Options, m.Show)
"""The commands answered even while a search runs (docs/protocol.md §3)."""


Send = Callable[[m.Reply, int | None], Awaitable[None]]
SendNowait = Callable[[m.Reply, int | None], None]


@dataclass
class _Search:
    msgid: int | None
    infinite: bool
    stop: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)


class Session(Positions):
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

    async def refuse(self, error: ProtocolError) -> None:
        """Answer a command the decoder rejected. After a ``stop`` it is answered once the
        stopped search has sent its best move, as any command after a stop runs; a refused
        ``go`` then gets its ``bestmove none`` too."""
        search = self.search
        if not error.fatal and search is not None and search.stop.is_set():
            await search.done.wait()  # bounded: a worker that ignores stop is killed
        busy = self.search is not None
        await self.reply(m.ErrorReply(error.code, error.error.name, error.message), error.msgid)
        if not error.fatal and error.method == m.Go.METHOD:
            await self._refused_go(error.msgid, busy=busy)

    async def _refused_go(self, msgid: int | None, *, busy: bool) -> None:
        """After the error of a refused ``go``, its one best move in the text framing:
        ``bestmove none``, so that a client waiting for it does not wait for ever (Compat
        mode included). Not when another search ran as it was refused (``busy``, taken
        before its error was sent: that search may end while the error waits in the
        outbox): the running search's ``bestmove`` is the one that comes. In msgpack the
        error response is the one answer."""
        if self.framing == "text" and not busy:
            await self._send(m.BestMove(None), msgid)

    # -- dispatch ------------------------------------------------------------------------------

    async def handle(self, request: m.Request, nursery: trio.Nursery) -> None:
        """Answer one command. Never raises for bad input: errors become replies."""
        command = request.command
        msgid = request.msgid
        try:
            search = self.search
            if search is not None and not isinstance(command, READ_ONLY):
                if not search.stop.is_set():
                    raise request_error(
                        SEARCH_IN_PROGRESS,
                        f"{command.METHOD}: a search is running; send stop first",
                    )
                # After a stop, commands wait for that search's best move, then run. The wait
                # is bounded: the pool kills a worker that does not answer within its grace.
                await search.done.wait()
            reply = await self._dispatch(command, msgid, nursery)
        except RequestError as exc:
            busy = self.search is not None  # before the reply's await, in which it may end
            self.log.info("command_error", command=command.METHOD, error=str(exc.reply))
            await self.reply(exc.reply, msgid)
            if isinstance(command, m.Go):
                await self._refused_go(msgid, busy=busy)
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
                    raise request_error(
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
                if what == "moves":  # a list of up to a hundred thousand moves
                    return m.Response(await offload(self.peer, lambda: self._query(what)))
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
                return m.ShowText(await offload(self.peer, self._show))

    # -- handshake, options --------------------------------------------------------------------

    async def _go(self, go: m.Go, msgid: int | None, nursery: trio.Nursery) -> None:
        if self.framing == "msgpack" and msgid is None:
            raise request_error(
                BAD_ARGUMENTS, "go: send it as a request; its result is the best move"
            )
        self._check_go_limits(go)
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
        budget = search_time(
            go, seat, state.turn_position(), self.move_overhead, most_ms=self.config.max_movetime
        )
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

    def _check_go_limits(self, go: m.Go) -> None:
        """Refuse a ``go`` whose times are over the server's limits (docs/protocol.md §2)."""
        most = self.config.max_movetime
        if most and go.movetime is not None and go.movetime > most:
            raise request_error(
                BAD_ARGUMENTS,
                f"go: movetime {go.movetime} is over the server's limit of {most} ms "
                "(limit movetime)",
            )
        clock = self.config.max_clock
        if clock:
            for name in ("p1time", "p2time", "p1inc", "p2inc"):
                value = getattr(go, name)
                if value is not None and value > clock:
                    raise request_error(
                        BAD_ARGUMENTS,
                        f"go: {name} {value} is over the server's limit of {clock} ms on a "
                        "clock (limit clock)",
                    )

    async def _no_move(self, code: ErrorCode, message: str, msgid: int | None) -> None:
        """Answer a ``go`` that has no move to search: the error, then its one best move
        (none). In msgpack both are the one error response, with ``{move: nil}``."""
        if self.framing == "msgpack":
            raise request_error(code, message, {"move": None})
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
                raise request_error(NOT_SEARCHING, f"stop: {which} is running")
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

"""One protocol session: the options, the board (game, position, moves played) and at most one
running search.

The session turns protocol commands into replies (docs/protocol.md is the contract). It is
framing-aware only where the protocol says the framings differ (silent successes, the answer
to ``go`` on a finished game, ``Compat``); encoding is the connection's job. Every command is
checked completely before anything changes, so a rejected command leaves the session exactly
as it was.

The search is the protocol's (``protocol.state``, kept by a ``SearchSlot``): while one runs the
session keeps answering the commands that do not change it, refuses the others (204) until a
``stop`` arrives, and after a stop makes them wait for the search's best move. Every accepted
``go`` is answered exactly once, by its slot or by ``_no_move``, even when the search fails; in
the text framing a refused one, when no other search runs, gets its error and then ``bestmove
none`` (``_refused_go``). What searches is the session's own bot on a ``SearchRunner``
(``enginesrv.serve.bot``), or, in a game the server referees, the referee's other player
(``RefereeHooks``, plugged in with ``attach``).
"""

from __future__ import annotations

import functools
import itertools

import structlog
import trio

import games
from enginesrv.search.child import SearchRunner
from enginesrv.serve.analyses import Analyses
from enginesrv.serve.bot import BotSearch, plan_job
from enginesrv.serve.catalog import bot_infos
from enginesrv.serve.hooks import Refereed, RefereeHooks
from enginesrv.serve.offload import offload
from enginesrv.serve.positions import Board
from enginesrv.serve.searching import Decide, SearchSlot, Send, SendNowait
from enginesrv.serve.settings import (
    Framing,
    NoMoveError,
    Options,
    RequestError,
    SessionConfig,
    check_searches,
    load_game,
    request_error,
)
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    INTERNAL,
    NOT_SEARCHING,
    SEARCH_IN_PROGRESS,
    UNKNOWN_COMMAND,
    UNSUPPORTED_VERSION,
    ProtocolError,
)

READ_ONLY = (
    m.Ugi,
    m.IsReady,
    m.Ping,
    m.Stop,
    m.Quit,
    m.Query,
    m.Bots,
    m.Options,
    m.Show,
    m.Analyse,
    m.Cancel,
)
"""The commands answered even while a search runs (docs/protocol.md §3)."""
QUESTIONS = (m.Ugi, m.IsReady, m.Ping, m.Query, m.Bots, m.Options, m.Show)
"""The commands that change nothing in the session."""


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
        """``send`` queues a reply (``send_nowait`` a progress report, which may be dropped);
        ``peer`` is whose share of the workers and threads its searches and costly replies
        take; ``max_reply`` the longest reply the connection may send."""
        self.config = config
        self.peer = peer
        self.runner = runner
        self.framing = framing
        self._send = send
        self._send_nowait = send_nowait
        self.id = f"s{next(self._ids)}"
        self.log = logger or structlog.get_logger("enginesrv.serve.session")
        self.options = Options(config)
        self.board = Board(config, framing=framing, max_reply=max_reply, peer=peer)
        self.slot = SearchSlot(send, self.log)
        self.analyses = Analyses(
            runner,
            send,
            peer=peer,
            log=self.log,
            at_once=config.analyses_at_once,
            most=config.max_analyses,
            grace=config.grace,
        )
        self.refereed: Refereed | None = None
        self.closing = False
        if config.default_game is not None:
            self._set_game(games.load(config.default_game))

    def count_against(self, peer: str, runner: SearchRunner) -> None:
        """Search on ``runner`` from now on, counted against ``peer`` (an account's)."""
        self.peer = self.board.peer = self.analyses.peer = peer
        self.runner = self.analyses.runner = runner

    def attach(self, referee: RefereeHooks) -> None:
        """Play the game ``referee`` keeps from now on (module docstring)."""
        self.refereed = Refereed(referee, self.board)

    @property
    def busy(self) -> bool:
        """Whether a search runs (its best move not yet sent)."""
        return self.slot.busy

    @property
    def working(self) -> bool:
        """Whether a search runs or an analysis is held (an answer is still to come)."""
        return self.slot.busy or self.analyses.held > 0

    # -- replies -------------------------------------------------------------------------------

    async def reply(self, reply: m.Reply, msgid: int | None) -> None:
        """Send a reply, turning errors into ``info string`` lines in Compat mode."""
        if self.options.compat and self.framing == "text":
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
        if not error.fatal and self.slot.stopping:
            await self.slot.answered()  # bounded: a worker that ignores stop is killed
        busy = self.busy
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

    async def _no_move(self, error: NoMoveError, msgid: int | None) -> None:
        """Answer a ``go`` that has no move to search: the error, then its one best move
        (none). In msgpack both are the one error response, with ``{move: nil}``."""
        code = error.code
        if self.framing == "msgpack":
            raise request_error(code, error.message, {"move": None})
        await self.reply(m.ErrorReply(code.code, code.name, error.message), msgid)
        await self._send(m.BestMove(None), msgid)

    # -- dispatch ------------------------------------------------------------------------------

    async def handle(self, request: m.Request, nursery: trio.Nursery) -> None:
        """Answer one command. Never raises for bad input: errors become replies."""
        command = request.command
        msgid = request.msgid
        try:
            if self.slot.busy and not isinstance(command, READ_ONLY):
                if not self.slot.stopping:
                    raise request_error(
                        SEARCH_IN_PROGRESS,
                        f"{command.METHOD}: a search is running; send stop first",
                    )
                # After a stop, commands wait for that search's best move, then run. The wait
                # is bounded: the pool kills a worker that does not answer within its grace.
                await self.slot.answered()
            if self.refereed is not None:
                self.refereed.admit(command, searching=self.slot.busy)
            reply: m.Reply | None
            if isinstance(command, QUESTIONS):
                reply = await self._answer(command)
            elif isinstance(command, m.Analyse):
                await self._analyse(command, msgid, nursery)
                reply = None
            elif isinstance(command, m.Cancel):
                await self.analyses.cancel(command.ids)
                reply = m.Ack()
            else:
                reply = await self._order(command, msgid, nursery)
        except RequestError as exc:
            busy = self.busy  # before the reply's await, in which the search may end
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

    async def _answer(self, command: m.Command) -> m.Reply:
        """The answer to a command that changes nothing (``QUESTIONS``)."""
        match command:
            case m.Ugi(protocol=version):
                if version is not None and version != m.PROTOCOL_VERSION:
                    raise request_error(
                        UNSUPPORTED_VERSION,
                        f"ugi: protocol {version} is not spoken here (this server speaks "
                        f"{m.PROTOCOL_VERSION})",
                    )
                return self.options.handshake(self.board.game)
            case m.IsReady():
                return m.ReadyOk()
            case m.Ping(token):
                return m.Pong(token)
            case m.Query(what, start):
                return m.Response(await self._ask(what, start))
            case m.Bots():
                return m.BotList(bot_infos())
            case m.Options(every):
                return m.OptionList(self.options.specs(self.board.game, every=every))
            case m.Show():
                return m.ShowText(await offload(self.peer, self.board.show))
        raise TypeError(f"{command.METHOD} is not a question")

    async def _order(
        self, command: m.Command, msgid: int | None, nursery: trio.Nursery
    ) -> m.Reply | None:
        """Carry out a command that may change the session; its reply, if it has one."""
        match command:
            case m.SetOption(name, value):
                self._set_option(name, value)
                return m.Ack()
            case m.NewGame(name):
                self._new_game(name)
                return m.Ack()
            case m.Position(fen, moves):
                await self.board.set_position(fen, moves)
                return m.Ack()
            case m.Go():
                await self._go(command, msgid, nursery)
                return None
            case m.Stop(search):
                return self._stop(search, msgid)
            case m.Quit():
                self.closing = True
                await self.stop_search()
                return m.Ack()
            case m.Play() | m.Undo() | m.Resign() | m.Offer() | m.Decline():
                return m.Response(self._change_game(command))
        raise TypeError(f"{command.METHOD} is not an order")

    # -- the game ------------------------------------------------------------------------------

    def _set_option(self, name: str, value: str | None) -> None:
        if name.strip().lower() == "game":
            self._set_game(load_game(value or "", "setoption"))
        else:
            self.options.set(name, value, self.board.game)

    def _set_game(self, game: games.Game) -> None:
        self.board.set_game(game)
        self.options.new_game(game)

    def _new_game(self, name: str | None) -> None:
        if name is not None:
            self._set_game(load_game(name, "uginewgame"))
            return
        game, _ = self.board.require("uginewgame")
        self._set_game(game)

    def _change_game(
        self, command: m.Play | m.Undo | m.Resign | m.Offer | m.Decline
    ) -> m.ResponseValue:
        """A decision, one taken back, a resignation or an offer; ``response``'s value."""
        refereed = self.refereed
        match command:
            case m.Play(token):
                return self.board.play(token) if refereed is None else refereed.play(token)
            case m.Undo(n):
                return self.board.undo(n) if refereed is None else refereed.undo(n)
        if refereed is None:
            raise request_error(
                BAD_ARGUMENTS, f"{command.METHOD}: only in a game the server referees"
            )
        return refereed.act(command)

    async def _ask(self, what: str, start: int = 0) -> m.ResponseValue:
        if what == "moves":  # a list of up to a hundred thousand moves
            return await offload(self.peer, lambda: self._query(what, start))
        return self._query(what)

    def _query(self, what: str, start: int = 0) -> m.ResponseValue:
        if self.refereed is not None:
            value = self.refereed.query(what)
            if value is not None:
                return value
        if what == "table":
            raise request_error(BAD_ARGUMENTS, "query table: only a game between two pages has one")
        return self.board.query(what, start)

    # -- searching -----------------------------------------------------------------------------

    async def _go(self, go: m.Go, msgid: int | None, nursery: trio.Nursery) -> None:
        notification = self.framing == "msgpack" and msgid is None
        try:
            if self.refereed is not None:
                self.refereed.hooks.go(notification=notification)
                decide: Decide = self._referee_decides
            else:
                check_searches(self.config, "go", self.runner)
                decide = await self._bot_search(go, msgid, notification=notification)
        except NoMoveError as exc:
            await self._no_move(exc, msgid)
            return
        self.slot.start(msgid, decide, nursery)

    async def _bot_search(self, go: m.Go, msgid: int | None, *, notification: bool) -> BotSearch:
        """The search of the session's bot for ``go``."""
        if notification:
            raise request_error(
                BAD_ARGUMENTS, "go: send it as a request; its result is the best move"
            )
        plan = await plan_job(go, self.board, self.options, self.id)
        self.options.fresh_game = False
        assert self.board.state is not None  # a job was planned on it
        return BotSearch(
            runner=self.runner,
            job=plan.job,
            state=self.board.state.copy(),
            msgid=msgid,
            infinite=plan.infinite,
            latest=plan.latest,
            grace=self.config.grace,
            peer=self.peer,
            log=self.log,
            reply=self.reply,
            send_nowait=self._send_nowait,
            on_scores=functools.partial(self.board.keep_scores, self.board.state.to_string()),
        )

    async def _referee_decides(self, stop: trio.Event) -> m.BestMove:
        """The other side's decision in a refereed game, as the client is shown it."""
        assert self.refereed is not None
        decision = await self.refereed.hooks.decide(stop)
        self.refereed.take_view()
        if decision.move is None:
            await self.reply(m.Info(string=decision.reason), None)
        return m.BestMove(decision.move)

    async def _analyse(self, command: m.Analyse, msgid: int | None, nursery: trio.Nursery) -> None:
        if self.framing == "msgpack" and msgid is None:
            raise request_error(
                BAD_ARGUMENTS, "analyse: send it as a request; its response ends it"
            )
        game, _ = self.board.require("analyse")
        check_searches(self.config, "analyse", self.runner)
        await self.analyses.request(command, game, self.options, self.id, msgid, nursery)

    def _stop(self, search_id: int | None, msgid: int | None) -> m.Reply | None:
        if self.slot.stop(search_id):
            return m.Ack()
        if self.framing == "msgpack" and msgid is not None:
            which = "no search" if search_id is None else f"no search {search_id}"
            raise request_error(NOT_SEARCHING, f"stop: {which} is running")
        return None  # UCI: a stop without a search is ignored

    async def stop_search(self) -> None:
        """Stop the running search, if any, and wait until its best move has been sent. The
        client goes (``quit``, or the connection ends): a referee is told so first."""
        if self.refereed is not None:
            self.refereed.hooks.leave()
        await self.slot.stop_and_wait()
        await self.analyses.cancel_and_wait()

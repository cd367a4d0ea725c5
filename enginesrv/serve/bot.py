"""The searches of a session's own bot: a ``go`` checked and turned into a job (``plan_job``),
the job searched on the runner (``BotSearch``: the worker pool, or a thread in tests), and the
``go``'s one best move made of whatever came of it (``best_of``), even when the runner
failed."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
import trio

import games
from bots.engine import RootScore, Score, SearchInfo, SearchResult
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import stall_grace
from enginesrv.search.timeman import search_time
from enginesrv.serve.offload import offload
from enginesrv.serve.positions import Board
from enginesrv.serve.searching import Send, SendNowait
from enginesrv.serve.settings import (
    MOVES_ON_LOOP,
    NoMoveError,
    Options,
    SessionConfig,
    request_error,
)
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, GAME_OVER, INTERNAL, MOVES_HIDDEN

CLOCKS = ("p1time", "p2time", "p1inc", "p2inc")
HIDDEN = (
    "the side to act has moves that depend on information hidden in this position; send "
    "the position of the side to act (its own view)"
)
WAITING = "waiting for a search worker (all are busy, or this address has its share)"


@dataclass(frozen=True)
class Plan:
    """What a ``go`` asks of the session's bot (``plan_job``)."""

    job: SearchJob
    infinite: bool
    """Whether the answer waits for a ``stop`` (UCI's ``infinite``: no limit at all, or ``go
    infinite``)."""
    latest: float | None
    """Seconds after the ``go`` by which its answer must leave for the mover's clock to
    still show time, ``MoveOverhead`` kept back for the way to the client; None when no clock
    limits the search."""


async def plan_job(go: m.Go, board: Board, options: Options, session: str) -> Plan:
    """The job of a ``go`` for the session's bot, whether its answer waits for a ``stop``, and
    by when the mover's clock needs it (``Plan``). Its lists of moves are read off the event
    loop when they are long (``root_tokens``).

    Raises:
        RequestError: the ``go`` is over the server's limits, or no game is set.
        NoMoveError: there is nothing to search (the game is over, or the moves of the side
            to act are hidden from the session).
    """
    check_go_limits(go, options.config)
    game, state = board.require("go")
    check_searchable(state, "go")
    # a frame may carry tens of thousands of tokens: read off the event loop
    roots = functools.partial(
        root_tokens, go.searchmoves, go.avoidmoves, state.view(state.to_move()), options
    )
    listed = len(go.searchmoves) + len(go.avoidmoves)
    restricted = await offload(board.peer, roots) if listed > MOVES_ON_LOOP else roots()
    return plan_of(go, game, state, options, session, restricted)


def check_searchable(state: games.State, verb: str) -> None:
    """Raises NoMoveError when ``state`` has nothing to search: the game is over, or the moves
    of the side to act are hidden from the session."""
    if state.is_terminal():
        raise NoMoveError(GAME_OVER, f"{verb}: the game is over")
    if state.moves_hidden():
        raise NoMoveError(MOVES_HIDDEN, f"{verb}: {HIDDEN}")


def plan_of(
    go: m.Go,
    game: games.Game,
    state: games.State,
    options: Options,
    session: str,
    restricted: dict[str, Any],
    *,
    lines: int | None = None,
) -> Plan:
    """The ``Plan`` of ``go`` on ``state`` (checked by the caller: searchable, within the
    limits, its first decisions read as ``restricted`` by ``root_tokens``); ``lines``: the
    lines to report (None: the session's ``MultiPV``)."""
    seat = state.to_move()
    budget = search_time(
        go,
        seat,
        state.turn_position(),
        options.move_overhead,
        most_ms=options.config.max_movetime,
        weight=state.time_weight(),
        expected=state.decisions_left(),
    )
    infinite = go.infinite or (budget.deadline is None and go.depth is None and go.nodes is None)
    clock = go.p1time if seat == 0 else go.p2time
    latest = None
    if clock is not None and go.movetime is None and not go.infinite:
        latest = max(0, clock - max(0, options.move_overhead)) / 1000
    # The bot searches from what the side to act may know. A plain UGI manager hands both
    # sides the full move list, the other side's secret laws included; the search never sees
    # them (for a perfect-information game the view is the position itself).
    job = SearchJob(
        session=session,
        game=game.name,
        position=state.view(seat).to_string(),
        bot=options.bot_name,
        options=options.job_options(),
        depth=go.depth,
        nodes=go.nodes,
        target=budget.target,
        deadline=budget.deadline,
        new_game=options.fresh_game,
        issued=time.monotonic(),
        from_pv=budget.from_pv,
        lines=options.multipv if lines is None else lines,
        **restricted,
    )
    return Plan(job, infinite, latest)


def root_tokens(
    searchmoves: tuple[str, ...],
    avoidmoves: tuple[str, ...],
    view: games.State,
    options: Options,
    verb: str = "go",
) -> dict[str, Any]:
    """The first decisions a search may take, as a job's ``searchmoves`` and ``avoidmoves``:
    each token checked legal in the position searched, ``view``, and written as the game
    writes it. ``verb`` begins the errors (``go``, or ``analyse: id A``).

    Raises:
        RequestError: error 101 naming the first token that is unknown, malformed or not
            legal, or saying that no legal move is left; or the bot cannot restrict its
            search.
    """
    if not searchmoves and not avoidmoves:
        return {}
    if not options.bot_class().analysis:
        raise request_error(
            BAD_ARGUMENTS,
            f"{verb}: bot {options.bot_name!r} searches every move: searchmoves and "
            "avoidmoves need a bot that offers them (the handshake's analysis lines)",
        )
    found: dict[str, dict[int, str]] = {"searchmoves": {}, "avoidmoves": {}}
    legal = view.legal_moves()
    # a look-up for each (a lazy sequence, Yin Yang's setup, answers ``in`` at once)
    known = set(legal) if isinstance(legal, list | tuple) else legal
    for key, given in (("searchmoves", searchmoves), ("avoidmoves", avoidmoves)):
        moves = found[key]
        for token in dict.fromkeys(given):  # each token once, however often given
            try:
                move = view.parse_move(token)
            except games.GameError as exc:
                raise request_error(BAD_ARGUMENTS, f"{verb}: {key} {exc}") from None
            if move not in known:
                raise request_error(BAD_ARGUMENTS, f"{verb}: {key} {token}: not legal here")
            moves.setdefault(move, view.move_to_str(move))
    wanted, avoided = found["searchmoves"], found["avoidmoves"]
    left = len([m for m in wanted if m not in avoided]) if wanted else view.count_moves()
    if not wanted:
        left -= len(avoided)
    if left <= 0:
        raise request_error(
            BAD_ARGUMENTS, f"{verb}: searchmoves and avoidmoves leave no legal move"
        )
    return {
        "searchmoves": tuple(wanted.values()) if wanted else None,
        "avoidmoves": tuple(avoided.values()),
    }


def check_go_limits(go: m.Go, config: SessionConfig) -> None:
    """Refuse a ``go`` whose times are over the server's limits (docs/protocol.md §2).

    Raises:
        RequestError: error 101, naming the limit.
    """
    most = config.max_movetime
    if most and go.movetime is not None and go.movetime > most:
        raise request_error(
            BAD_ARGUMENTS,
            f"go: movetime {go.movetime} is over the server's limit of {most} ms (limit movetime)",
        )
    clock = config.max_clock
    if clock:
        for name in CLOCKS:
            value = getattr(go, name)
            if value is not None and value > clock:
                raise request_error(
                    BAD_ARGUMENTS,
                    f"go: {name} {value} is over the server's limit of {clock} ms on a "
                    "clock (limit clock)",
                )


@dataclass
class BotSearch:
    """One ``go`` of the session's bot: its job, searched on the runner."""

    runner: SearchRunner
    job: SearchJob
    state: games.State
    """A copy of the position searched, on which the best move is checked."""
    msgid: int | None
    infinite: bool
    """Whether the answer waits for a ``stop`` (UCI's ``infinite``)."""
    grace: float
    peer: str | None
    log: structlog.typing.FilteringBoundLogger
    reply: Send
    """Sends an error to the client (Compat turns it into an ``info string``)."""
    send_nowait: SendNowait
    """Sends progress, dropped when the client does not keep up."""
    latest: float | None = None
    """``Plan.latest``: the answer leaves by then even from a worker that stalls."""
    on_scores: Callable[[tuple[RootScore, ...]], None] | None = None
    """Told what the search learnt of each first decision (``query scores``)."""

    async def __call__(self, stop: trio.Event) -> m.BestMove:
        """Search until the job's limits, ``stop`` or a failure; the ``go``'s best move."""
        job = self.job
        log = self.log.bind(search=self.msgid)
        log.info(
            "search_start", bot=job.bot, depth=job.depth, nodes=job.nodes, deadline=job.deadline
        )
        grace = self.grace
        if self.latest is not None and job.deadline is not None:
            # a worker that stalls (its core taken, a pause of its interpreter) is stopped
            # and killed before the answer is due on the clock, and its best move so far sent
            grace = stall_grace(grace, job.deadline, self.latest)
        hard = None if job.deadline is None else trio.current_time() + job.deadline + grace
        try:
            outcome = await self.runner.search(
                job,
                on_info=self._on_info,
                stop=stop,
                hard_deadline=hard,
                on_wait=self._on_wait,
                peer=self.peer,
                grace=grace,
            )
        except Exception as exc:  # a fault of ours: the go still gets its one answer
            log.exception("search_failed")
            outcome = SearchOutcome(None, error=f"search failed ({type(exc).__name__})")
        if self.infinite and not stop.is_set():
            await stop.wait()  # UCI: no bestmove before stop in infinite mode
        best = best_of(outcome, self.state, job)
        if self.on_scores is not None and outcome.result is not None:
            self.on_scores(outcome.result.root_scores)
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
        return best

    def _on_info(self, info: SearchInfo) -> None:
        self.send_nowait(info_reply(info, self.msgid), self.msgid)

    def _on_wait(self) -> None:
        self.send_nowait(m.Info(string=WAITING, search=self.msgid), self.msgid)


def best_of(outcome: SearchOutcome, state: games.State, job: SearchJob) -> m.BestMove:
    """The one answer to a ``go``: the search's move if it is legal, else the first move of
    the last reported line, else any move the ``go`` allows (``job``'s ``searchmoves`` and
    ``avoidmoves``; None only when there is none)."""
    result: SearchResult | None = outcome.result
    candidates: list[str] = []
    if result is not None and result.token is not None:
        candidates.append(result.token)
    if outcome.last_info is not None and outcome.last_info.pv:
        candidates.append(outcome.last_info.pv[0])
    token = next((t for t in candidates if _is_legal(state, t)), None)
    if token is None:
        token = _allowed_move(state, job)
    if result is not None and token is not None and token == result.token:
        return m.BestMove(
            token,
            score=score_reply(result.score),
            depth=result.depth,
            seldepth=result.seldepth,
            nodes=result.nodes,
            time=result.time,
            pv=result.pv,
            stopped=result.stopped or outcome.killed,
        )
    return m.BestMove(token, stopped=True)


def _allowed_move(state: games.State, job: SearchJob) -> str | None:
    """A move of ``state`` that ``job`` allows, for a search that found none: the first of its
    ``searchmoves`` it does not avoid, or the first legal move it does not avoid (by index: a
    lazy sequence, Yin Yang's setup, is never iterated whole)."""
    avoided = set(job.avoidmoves)
    if job.searchmoves is not None:
        return next((t for t in job.searchmoves if t not in avoided), None)
    moves = state.legal_moves()
    tokens = (state.move_to_str(moves[i]) for i in range(len(moves)))
    return next((t for t in tokens if t not in avoided), None)


def _is_legal(state: games.State, token: str) -> bool:
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


def score_reply(score: Score | None) -> m.Score | None:
    """A search's score as the protocol writes it."""
    return None if score is None else m.Score(score.kind, score.value)


def info_reply(info: SearchInfo, search: int | None) -> m.Info:
    """A search's progress as an ``info`` reply, tagged with its search's id."""
    return m.Info(
        depth=info.depth,
        seldepth=info.seldepth,
        score=score_reply(info.score),
        nodes=info.nodes,
        nps=info.nps,
        time=info.time,
        hashfull=info.hashfull,
        pv=info.pv,
        string=info.string,
        search=search,
        multipv=info.line,
    )

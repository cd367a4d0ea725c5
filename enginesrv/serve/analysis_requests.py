"""The checking of an ``analyse`` request (docs/protocol.md §4.1): every position read,
replayed and given its job, or the request refused whole (``RequestError``) before anything
starts.

Replaying is the costly part: a request may hold a hundred thousand moves. It is done in parts
of at most ``MOVES_AT_ONCE`` moves (``parts``), each on the thread of costly work in its peer's
turn (``enginesrv.serve.offload``), so that a long request takes the thread from the other
peers for no longer than a ``position`` at the ``plies`` limit does. A position keeps only what
its search needs: its job, and its position as the worker searches it (not the state the replay
built, whose undo records grow with the game: some 700 KB for a game of 2,000 plies).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import games
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.bot import check_searchable, plan_of, root_tokens
from enginesrv.serve.offload import offload
from enginesrv.serve.settings import (
    MAX_LINES,
    MOVES_ON_LOOP,
    NoMoveError,
    Options,
    RequestError,
    SessionConfig,
    request_error,
    too_many_analysed,
)
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, INVALID_POSITION, PLY_LIMIT

MOVES_AT_ONCE = 4096
"""The most moves (and tokens of ``searchmoves`` and ``avoidmoves``) checked in one turn of the
thread (``parts``); a position of more is checked alone."""


@dataclass(frozen=True)
class Checked:
    """A position of a request, checked: its job and the position it searches, or the answer
    it gets at once (nothing to search)."""

    id: str
    job: SearchJob | None = None
    state: games.State | None = None
    answer: m.Analysis | None = None


async def check_request(
    command: m.Analyse, game: games.Game, options: Options, session: str, peer: str | None
) -> list[Checked]:
    """Every position of ``command`` checked (``prepare``), a part at a time (module
    docstring).

    Raises:
        RequestError: a position cannot be analysed as given; the error names its id.
    """
    checked: list[Checked] = []
    for part in parts(command.positions):
        work = functools.partial(prepare, part, game, options, session)
        checked += await offload(peer, work) if _tokens(part) > MOVES_ON_LOOP else work()
    return checked


def parts(items: Sequence[m.AnalysisItem]) -> Iterator[Sequence[m.AnalysisItem]]:
    """``items`` in runs of at most ``MOVES_AT_ONCE`` tokens (at least one position each)."""
    start = count = 0
    for i, item in enumerate(items):
        size = _tokens((item,))
        if i > start and count + size > MOVES_AT_ONCE:
            yield items[start:i]
            start, count = i, 0
        count += size
    if start < len(items):
        yield items[start:]


def _tokens(items: Sequence[m.AnalysisItem]) -> int:
    return sum(len(i.moves) + len(i.searchmoves) + len(i.avoidmoves) + 1 for i in items)


def prepare(
    items: Sequence[m.AnalysisItem], game: games.Game, options: Options, session: str
) -> list[Checked]:
    """The positions ``items`` checked and turned into jobs (module docstring); pure
    computation, run on a thread when they are long.

    Raises:
        RequestError: a position cannot be analysed as given; the error names its id.
    """
    return [_check(item, game, options, session) for item in items]


def _check(item: m.AnalysisItem, game: games.Game, options: Options, session: str) -> Checked:
    verb = f"analyse: id {item.id}"
    _check_limits(item, options, verb)
    state = _replay(item, game, options.config, verb)
    try:
        check_searchable(state, verb)
    except NoMoveError as exc:
        error = m.ErrorReply(exc.code.code, exc.code.name, exc.message)
        return Checked(item.id, answer=m.Analysis(item.id, None, error=error))
    view = state.view(state.to_move())
    restricted = root_tokens(item.searchmoves, item.avoidmoves, view, options, verb)
    go = m.Go(movetime=item.movetime, depth=item.depth, nodes=item.nodes)
    plan = plan_of(go, game, state, options, analysis_session(session), restricted)
    lines = options.multipv if item.multipv is None else item.multipv
    job = dataclasses.replace(
        plan.job, new_game=False, lines=lines, background=True, score_forced=True
    )
    # the position as the worker reads it, without the replay's undo records
    return Checked(item.id, job=job, state=game.state_from_string(job.position))


def analysis_session(session: str) -> str:
    """The key under which a session's analyses keep their tables on the workers: their own,
    apart from those of the session's games."""
    return f"{session}/analyse"


def _check_limits(item: m.AnalysisItem, options: Options, verb: str) -> None:
    if item.depth is None and item.nodes is None and item.movetime is None:
        raise request_error(BAD_ARGUMENTS, f"{verb}: give it a depth, nodes or a movetime")
    most = options.config.max_movetime
    if most and item.movetime is not None and item.movetime > most:
        raise request_error(
            BAD_ARGUMENTS,
            f"{verb}: movetime {item.movetime} is over the server's limit of {most} ms "
            "(limit movetime)",
        )
    if item.multipv is not None:
        if item.multipv > MAX_LINES:
            raise request_error(
                BAD_ARGUMENTS, f"{verb}: multipv {item.multipv} is over {MAX_LINES}"
            )
        if item.multipv > 1 and not options.bot_class().analysis:
            raise request_error(
                BAD_ARGUMENTS,
                f"{verb}: bot {options.bot_name!r} reports one line: multipv above 1 needs "
                "a bot that offers it (the handshake's analysis lines)",
            )


def _replay(
    item: m.AnalysisItem, game: games.Game, config: SessionConfig, verb: str
) -> games.State:
    most = config.max_plies
    if most and len(item.moves) > most:
        raise request_error(PLY_LIMIT, too_many_analysed(item.id, len(item.moves), most))
    try:
        state = game.state_from_string(item.fen) if item.fen is not None else game.new_state()
    except games.InvalidPositionError as exc:
        raise request_error(INVALID_POSITION, f"{verb}: {item.fen!r}: {exc.reason}") from None
    try:
        games.replay(game, state, item.moves, shown=True)
    except games.ReplayError as exc:
        raise RequestError(m.InvalidMove(exc.text, f"{verb}: {exc.reason}")) from None
    return state

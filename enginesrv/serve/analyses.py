"""A session's analyses: the positions of its ``analyse`` requests (docs/protocol.md §4.1).

Each request is checked whole when it comes (``enginesrv.serve.analysis_requests``, on a thread
when it is long): every position is read, replayed and given its job, or the request is refused
and nothing starts. Its positions then wait in the session's queue, highest priority first and
in the order they came among equals, and are searched on the session's share of the workers
(``at_once`` at a time; the pool's fair share decides which peer's search gets a free worker).
Each is answered exactly once (``m.Analysis``): with its lines and best move when its search
ends (reached its limit, or was cancelled while it ran), at once with an error when there is
nothing to search (the game is over, the side to act's moves are hidden), or at once as
cancelled when it is cancelled before its search. In msgpack the request's own response,
``{}``, follows its last position's answer. A timed position's time runs only while it holds a
worker: it has no clock, and a wait for a worker (other peers holding theirs) or a suspension
costs it none of its search.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
import trio

import games
from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.analysis_requests import Checked, check_request
from enginesrv.serve.bot import best_of, info_reply
from enginesrv.serve.settings import MAX_ANALYSES, Options, request_error
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, BUSY, INTERNAL

Send = Callable[[m.Reply, int | None], Awaitable[None]]


class Lines:
    """The lines a search reported, kept as they come (``add``): the lines of the deepest
    iteration, and of the one before it for the lines a stopped iteration did not reach."""

    def __init__(self) -> None:
        self.current: dict[int, m.Info] = {}
        self.previous: dict[int, m.Info] = {}

    def add(self, info: SearchInfo) -> None:
        """A progress report of the search (a line of an iteration, or text). A line's own
        note (Yin Yang's samples) is not part of an answer's line: the line is kept without it."""
        depth = info.depth
        if not info.pv or depth is None:
            return
        if info.string is not None:
            info = dataclasses.replace(info, string=None)
        index = info.line or 1
        best = self.current.get(1)
        if index == 1 and best is not None and best.depth is not None and depth > best.depth:
            self.previous, self.current = self.current, {}
        # an answer's line: the figures of the line, not those of the moment (nps, hashfull)
        line = info_reply(info, None)
        self.current[index] = dataclasses.replace(line, nps=None, hashfull=None, multipv=index)

    def final(self) -> tuple[m.Info, ...]:
        """The lines, best first, numbered from 1: the deepest iteration's, then those of the
        iteration before for first decisions it did not reach."""
        lines = [self.current[i] for i in sorted(self.current)]
        firsts = {info.pv[0] for info in lines}
        lines += [
            info
            for i, info in sorted(self.previous.items())
            if i > len(lines) and info.pv[0] not in firsts
        ]
        return tuple(dataclasses.replace(info, multipv=n) for n, info in enumerate(lines, 1))


@dataclass(eq=False)
class _Batch:
    """One ``analyse`` request: its id, and its positions not yet answered."""

    msgid: int | None
    left: int


@dataclass(eq=False)
class _Held:
    """A position waiting or searched."""

    id: str
    batch: _Batch
    job: SearchJob
    state: games.State
    stop: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)
    running: bool = False
    cancelled: bool = False


class Analyses:
    """The analyses of one session (module docstring)."""

    def __init__(
        self,
        runner: SearchRunner,
        send: Send,
        *,
        peer: str | None,
        log: structlog.typing.FilteringBoundLogger,
        at_once: int,
        most: int = MAX_ANALYSES,
        grace: float,
    ) -> None:
        """``send`` sends an answer; ``at_once``: the positions searched at once; ``most``:
        the positions held at once (0: no limit); ``grace``: a stopped search's time to answer."""
        self.runner = runner
        self._send = send
        self.peer = peer
        self.log = log
        self.at_once = max(1, at_once)
        self.most = most
        self.grace = grace
        self._held: dict[str, _Held] = {}
        self._queue: list[tuple[int, int, _Held]] = []
        self._order = itertools.count()
        self._running = 0

    @property
    def held(self) -> int:
        """The positions waiting or searched."""
        return len(self._held)

    @property
    def waiting(self) -> int:
        """The entries of the queue of positions waiting for their search."""
        return len(self._queue)

    def check(self, command: m.Analyse) -> None:
        """Refuse a request whose ids are not new, or that would hold too many positions.

        Raises:
            RequestError: 101 for an id given twice or held already; 300 over ``most``.
        """
        seen: set[str] = set()
        for item in command.positions:
            if item.id in seen:
                raise request_error(BAD_ARGUMENTS, f"analyse: id {item.id} is given twice")
            if item.id in self._held:
                raise request_error(
                    BAD_ARGUMENTS, f"analyse: id {item.id} is being analysed already"
                )
            seen.add(item.id)
        count = len(command.positions)
        if self.most and self.held + count > self.most:
            raise request_error(
                BUSY,
                f"analyse: {count} positions and the {self.held} held would be over the "
                f"{self.most} a session may hold at once (limit analyses); wait for answers "
                "or cancel some",
            )

    async def request(
        self,
        command: m.Analyse,
        game: games.Game,
        options: Options,
        session: str,
        msgid: int | None,
        nursery: trio.Nursery,
    ) -> None:
        """Take the request ``command`` of msgid ``msgid``: check it whole (``check``, then
        ``check_request``, a part at a time on a thread when it is long), then queue it
        (``start``).

        Raises:
            RequestError: it is refused; nothing of it runs.
        """
        self.check(command)
        checked = await check_request(command, game, options, session, self.peer)
        await self.start(msgid, checked, command.priority, nursery)

    async def start(
        self, msgid: int | None, checked: list[Checked], priority: int, nursery: trio.Nursery
    ) -> None:
        """Queue the checked positions of a request (``prepare``), answer at once those with
        nothing to search, and start searching."""
        batch = _Batch(msgid, len(checked))
        waiting = []
        for each in checked:
            if each.job is None or each.state is None:
                continue
            held = _Held(each.id, batch, each.job, each.state)
            self._held[each.id] = held
            heapq.heappush(self._queue, (-priority, next(self._order), held))
            waiting.append(each.id)
        self.log.info("analyse", positions=len(checked), queued=len(waiting), priority=priority)
        for each in checked:
            if each.answer is not None:
                await self._answer(batch, each.answer)
        self._fill(nursery)

    def _fill(self, nursery: trio.Nursery) -> None:
        """Start the waiting positions of highest priority while fewer than ``at_once``
        run."""
        while self._queue and self._running < self.at_once:
            _, _, held = heapq.heappop(self._queue)
            if held.cancelled:
                continue
            held.running = True
            self._running += 1
            nursery.start_soon(self._search, held, nursery)

    async def _search(self, held: _Held, nursery: trio.Nursery) -> None:
        lines = Lines()
        job = dataclasses.replace(held.job, issued=time.monotonic())
        try:
            outcome = await self._outcome(held, job, lines)
            self._release(held)
            await self._answer(held.batch, _answer_of(held, outcome, lines, job))
        finally:  # also when cancelled: the client is gone, nobody to answer
            self._release(held)
            held.done.set()
        self._fill(nursery)

    async def _outcome(self, held: _Held, job: SearchJob, lines: Lines) -> SearchOutcome:
        """What the search of ``held`` found, even when it failed."""
        hard = None if job.deadline is None else trio.current_time() + job.deadline + self.grace
        try:
            return await self.runner.search(
                job,
                on_info=lines.add,
                stop=held.stop,
                hard_deadline=hard,
                peer=self.peer,
                grace=self.grace,
                # a timed search's time runs only while it holds a worker (module docstring)
                on_hold=None if job.deadline is None else _holding,
            )
        except Exception as exc:  # a fault of ours: the position still gets its answer
            self.log.exception("analysis_failed", id=held.id)
            return SearchOutcome(None, error=f"search failed ({type(exc).__name__})")

    def _release(self, held: _Held) -> None:
        """``held`` no longer runs: its place goes to the next (once)."""
        if held.running:
            held.running = False
            self._running -= 1
            self._held.pop(held.id, None)

    async def _answer(self, batch: _Batch, answer: m.Analysis) -> None:
        """Send the answer of a position; the request's response after its last."""
        await self._send(dataclasses.replace(answer, request=batch.msgid), None)
        batch.left -= 1
        if batch.left == 0 and batch.msgid is not None:
            await self._send(m.Ack(), batch.msgid)

    async def cancel(self, ids: tuple[str, ...]) -> None:
        """End the positions of ``ids`` (none: all): one waiting is answered as cancelled at
        once, one searched is stopped and answers with what it found. Ids not held are
        passed over (their answer may be on its way). Every one is ended before the first
        answer goes out: a search that ends meanwhile starts none of them, and none stays
        queued."""
        chosen = (
            [self._held[i] for i in ids if i in self._held] if ids else list(self._held.values())
        )
        waiting = []
        for held in chosen:
            if held.running:
                held.stop.set()
                continue
            held.cancelled = True
            del self._held[held.id]
            waiting.append(held)
        if waiting:
            self._queue = [entry for entry in self._queue if not entry[2].cancelled]
            heapq.heapify(self._queue)
        for held in waiting:
            await self._answer(held.batch, m.Analysis(held.id, None, cancelled=True))

    async def cancel_and_wait(self) -> None:
        """Cancel every position, and wait until each searched one has answered (bounded:
        the pool kills a worker that does not answer a stop within its grace)."""
        running = [held for held in self._held.values() if held.running]
        await self.cancel(())
        for held in running:
            await held.done.wait()


def _holding(holds: bool) -> None:
    """A search's time runs only while it holds a worker (``WorkerPool.search``'s
    ``on_hold``); nothing else is told."""
    del holds


def _answer_of(held: _Held, outcome: SearchOutcome, lines: Lines, job: SearchJob) -> m.Analysis:
    """A searched position's answer: its best move (``best_of``), its lines, and an error
    if the search failed. ``stopped`` when a ``cancel`` stopped it, or when it came back with
    nothing (killed, or never given a worker): its move was then not searched. A search that
    reached its ``movetime`` was not stopped."""
    best = best_of(outcome, held.state, job)
    error = None
    if outcome.error is not None:
        error = m.ErrorReply(
            INTERNAL.code, INTERNAL.name, f"analyse: id {held.id}: {outcome.error}"
        )
    return m.Analysis(
        held.id,
        best.move,
        lines.final(),
        best.nodes,
        best.time,
        stopped=held.stop.is_set() or outcome.killed or outcome.result is None,
        error=error,
    )

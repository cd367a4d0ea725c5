"""A search: its state as the reader fills it in (``Search``), and the handle a caller holds
(``SearchHandle``, from ``AsyncEngine.start_search``); a position of an ``analyse`` request
until its answer (``AnalysisWait``)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable

import anyio

from enginesrv.client._args import STOP_GRACE
from enginesrv.client.types import ClientError, EngineTimeoutError, SearchResult
from protocol import messages as m


class Search:
    """One ``go`` until its answer: the figures of its progress, then its result or error."""

    def __init__(self, on_info: Callable[[m.Info], None] | None) -> None:
        self.on_info = on_info
        self.msgid: int | None = None
        self.done = anyio.Event()
        self.answered = anyio.Event()
        """Set once the connection holds this search no more: its ``bestmove`` (or, in
        msgpack, its response) has come, or the connection ended. A refused ``go`` is done
        at its error but answered only at the ``bestmove none`` that follows it."""
        self.result: SearchResult | None = None
        self.error: BaseException | None = None
        self.last = m.Info()
        self.exact: m.Score | None = None

    def note(self, info: m.Info) -> None:
        """Progress: keep the figures it has (of the best line, when the engine reports
        several: ``multipv`` 1), and hand it to the caller's ``on_info``."""
        if self.done.is_set():
            return
        if info.multipv is not None and info.multipv > 1:
            self._tell(info)  # a lesser line: the search's figures are the first line's
            return
        last = self.last
        self.last = m.Info(
            depth=info.depth if info.depth is not None else last.depth,
            seldepth=info.seldepth if info.seldepth is not None else last.seldepth,
            score=info.score if info.score is not None else last.score,
            nodes=info.nodes if info.nodes is not None else last.nodes,
            time=info.time if info.time is not None else last.time,
            pv=info.pv or last.pv,
        )
        if info.score is not None and info.score.bound is None:
            self.exact = info.score
        self._tell(info)

    def _tell(self, info: m.Info) -> None:
        if self.on_info is not None and self.error is None:
            try:
                self.on_info(info)
            except Exception as exc:  # the caller's callback: its error is the caller's
                self.error = exc

    def finish(self, best: m.BestMove) -> None:
        """The answer: the move, with the figures the answer carries (msgpack) or else those
        the search last reported."""
        if self.done.is_set():
            return
        last = self.last
        score = best.score if best.score is not None else last.score
        move = best.move if best.move not in ("(none)", "0000") else None  # UCI's forms of none
        exact = self.exact
        if best.score is not None and best.score.bound is None:
            exact = best.score
        self.result = SearchResult(
            move=move,
            score=score,
            bound=score.bound if score is not None else None,
            depth=best.depth if best.depth is not None else last.depth,
            seldepth=best.seldepth if best.seldepth is not None else last.seldepth,
            nodes=best.nodes if best.nodes is not None else last.nodes,
            time=best.time if best.time is not None else last.time,
            pv=best.pv or last.pv,
            ponder=best.ponder,
            stopped=best.stopped,
            exact_score=exact,
        )
        self.done.set()

    def fail(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class Pending:
    """A msgpack request waiting for its response."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.reply: m.RpcResult | None = None


MAX_ANALYSIS_LINES = 1024
"""The most lines kept for one position (a server reports at most 256)."""


class AnalysisWait:
    """One position of an ``analyse`` request until its answer."""

    def __init__(self, on_result: Callable[[m.Analysis], None] | None) -> None:
        self.on_result = on_result
        self.lines: list[m.Info] = []
        self.result: m.Analysis | None = None
        self.error: BaseException | None = None
        self.done = anyio.Event()

    def note(self, info: m.Info) -> None:
        """One of its lines (text framing)."""
        if len(self.lines) < MAX_ANALYSIS_LINES:
            self.lines.append(info)

    def finish(self, result: m.Analysis) -> None:
        """Its answer; the caller's ``on_result`` is told (in the reader task)."""
        if self.done.is_set():
            return
        self.result = result
        self.done.set()
        if self.on_result is not None:
            try:
                self.on_result(result)
            except Exception as exc:  # the caller's callback: its error is the caller's
                self.error = exc

    def fail(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class SearchHandle:
    """A running search: stop it, or wait for its result."""

    def __init__(
        self, search: Search, stop: Callable[[float], Awaitable[None]], where: str
    ) -> None:
        self._search = search
        self._stop = stop
        self._where = where

    @property
    def done(self) -> bool:
        """Whether the search has ended (its result, or its error, is there)."""
        return self._search.done.is_set()

    @property
    def last_info(self) -> m.Info:
        """The search's figures so far (each the latest reported)."""
        return self._search.last

    async def stop(self, timeout: float = 10.0) -> None:
        """Ask the engine to end the search now; its best move follows (``result``). The
        ``stop`` must go out within ``timeout`` seconds, or the engine is given up."""
        await self._stop(timeout)

    async def stop_quietly(self, grace: float = STOP_GRACE) -> None:
        """Stop the search and wait a moment for its best move (none is owed to anyone);
        errors are the connection's (it ends on them), not the caller's."""
        with contextlib.suppress(ClientError), anyio.move_on_after(grace):
            await self._stop(grace)
            await self.result(grace)

    async def result(self, timeout: float | None = None) -> SearchResult:
        """The search's result, once it has ended; waits at most ``timeout`` seconds (None:
        as long as the search takes).

        Raises:
            EngineTimeoutError: not ended within ``timeout`` (the search goes on).
            EngineError: the engine refused the search (for example 203: the game is over).
            EngineTerminatedError: the engine went away first.
        """
        search = self._search
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            await search.done.wait()
        if not search.done.is_set():
            raise EngineTimeoutError(f"{self._where}: no best move within {timeout:g} s")
        return self.outcome()

    async def result_or_stop(
        self, left: float | None, timeout: float | None, give_up: Callable[[], Awaitable[None]]
    ) -> SearchResult:
        """``go``'s wait: the result within ``left`` seconds (of the call's ``timeout``).
        Then the search is stopped, and a best move that comes within ``STOP_GRACE`` is still
        returned; else the engine is given up (``give_up``) and ``EngineTimeoutError`` raised.
        A caller cancelled meanwhile stops the search (the engine goes idle)."""
        try:
            return await self.result(left)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self.stop_quietly()
            raise
        except EngineTimeoutError:
            await self.stop(STOP_GRACE)
            try:
                return await self.result(STOP_GRACE)
            except EngineTimeoutError as exc:
                await give_up()
                raise EngineTimeoutError(
                    f"{self._where}: no best move within {timeout:g} s, nor after stop"
                ) from exc

    def outcome(self) -> SearchResult:
        """The result of a search that has ended (``done``), or its error raised."""
        search = self._search
        if search.error is not None:
            raise search.error
        if search.result is None:
            raise ValueError("the search has not ended yet")
        return search.result

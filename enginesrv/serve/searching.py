"""A session's one search (``SearchSlot``): its state, kept by the protocol's state machine
(``protocol.state``), the task that runs it and sends its one best move, and its stop.

What searches is not the slot's business: a ``Decide`` is handed the event a stop sets and
returns the best move (the session's bot on the worker pool, ``enginesrv.serve.bot``, or a
referee's other player). The slot sees to it that the best move is sent exactly once, and that
a search whose client has gone is dropped at once, freeing its worker.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
import trio

from protocol import messages as m
from protocol import state as s

Send = Callable[[m.Reply, int | None], Awaitable[None]]
SendNowait = Callable[[m.Reply, int | None], None]
Decide = Callable[[trio.Event], Awaitable[m.BestMove]]
"""A search: given the event a stop sets, the best move of its ``go``."""


@dataclass
class _Search:
    msgid: int | None
    stop: trio.Event = field(default_factory=trio.Event)
    done: trio.Event = field(default_factory=trio.Event)
    """Set once the search's best move is sent, or once it never will be."""


class SearchSlot:
    """The search a session runs, if any (module docstring)."""

    def __init__(self, send: Send, log: structlog.typing.FilteringBoundLogger) -> None:
        """``send`` sends the best move; ``log`` is the session's."""
        self.machine = s.SearchMachine()
        self._send = send
        self._log = log
        self._search: _Search | None = None

    @property
    def busy(self) -> bool:
        """Whether a search runs: its best move has not been sent."""
        return self.machine.holding

    @property
    def stopping(self) -> bool:
        """Whether the running search was asked to stop (its best move is on its way)."""
        return self.machine.state is s.STOPPING

    async def answered(self) -> None:
        """Wait until the running search, if any, has sent its best move. Bounded once it is
        stopping: the pool kills a worker that does not answer within its grace."""
        if self._search is not None:
            await self._search.done.wait()

    def start(self, msgid: int | None, decide: Decide, nursery: trio.Nursery) -> None:
        """Run ``decide`` as the answer to the ``go`` of ``msgid``, in ``nursery``.

        Raises:
            SearchStateError: a search is running already (the caller checks first).
        """
        self.machine.process(s.GO)
        search = _Search(msgid)
        self._search = search
        nursery.start_soon(self._run, search, decide)

    async def _run(self, search: _Search, decide: Decide) -> None:
        try:
            best = await decide(search.stop)
            self.machine.process(s.ANSWER)
            self._search = None
            await self._send(best, search.msgid)
        finally:
            if self._search is search:  # cancelled: the client is gone, nobody to answer
                self._search = None
                self.machine.process(s.CLOSE)
                self._log.info("search_abandoned", search=search.msgid)
            search.done.set()

    def stop(self, search_id: int | None = None) -> bool:
        """Ask the running search to stop, if one runs (and, with ``search_id``, if it is the
        ``go`` of that id); whether one was asked."""
        search = self._search
        if search is None or (search_id is not None and search_id != search.msgid):
            return False
        self.machine.process(s.STOP)
        search.stop.set()
        return True

    async def stop_and_wait(self) -> None:
        """Stop the running search, if any, and wait until its best move has been sent."""
        if self.stop():
            await self.answered()

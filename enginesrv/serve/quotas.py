"""What one account may use (``enginesrv token add NAME --searches N --hour S``): searches at
once, and seconds of search in any hour, over all its connections together.

Once a connection's token is accepted, its searches (``go``, each analysed position, a game
the web port referees against a bot) count against its account instead of its address: the
workers are shared among accounts (``peersearches`` each, at most, as among addresses) and
each account's quotas hold across however many connections and addresses it uses. A
``Metered`` runner stands between the session and the pool:

* ``searches``: a search over the quota waits for one of the account's own to end (told so
  with the ``info string`` of a search waiting for a worker);
* ``hour``: the seconds its searches took in the last hour, those running included. A search
  started with none left is refused (error 300, saying when more will be left); one running
  is stopped, and answers with its best move so far, once the account's time is used up.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.tokens import Quotas

HOUR = 3600.0
CHECK_EVERY = 0.05
"""The least seconds between two looks at a running search's account (``_cut_off``)."""
_KEYS = itertools.count()


def account_peer(name: str) -> str:
    """The peer an account's searches count against (no address has an ``@``)."""
    return f"@{name}"


@dataclass
class Usage:
    """One account's use of the server (module docstring)."""

    quotas: Quotas
    clock: Callable[[], float] = trio.current_time
    done: deque[tuple[float, float]] = field(default_factory=deque)
    """(when it ended, seconds) of each search ended in the last hour."""
    running: dict[int, float] = field(default_factory=dict)
    """When each running search started."""
    limiter: trio.CapacityLimiter | None = None

    def __post_init__(self) -> None:
        if self.quotas.searches is not None:
            self.limiter = trio.CapacityLimiter(self.quotas.searches)

    def used(self) -> float:
        """Seconds of search in the last hour, those running included."""
        now = self.clock()
        while self.done and self.done[0][0] <= now - HOUR:
            self.done.popleft()
        return sum(seconds for _, seconds in self.done) + sum(
            now - start for start in self.running.values()
        )

    def left(self) -> float:
        """Seconds of search left this hour (``math.inf`` without an hourly quota)."""
        if self.quotas.hour is None:
            return math.inf
        return self.quotas.hour - self.used()

    def more_in(self) -> float:
        """Seconds until some time is left again (the oldest search's hour ends)."""
        if not self.done:
            return 0.0
        return max(0.0, self.done[0][0] + HOUR - self.clock())

    def start(self, key: int) -> None:
        self.running[key] = self.clock()

    def end(self, key: int) -> None:
        start = self.running.pop(key, None)
        if start is not None:
            now = self.clock()
            self.done.append((now, now - start))


@dataclass
class Accounts:
    """Each account's use, kept while the server runs (one entry an account that has
    connected; a revoked account's entry is forgotten when its quotas are looked up no
    more, which costs nothing: the token file bounds them)."""

    usage: dict[str, Usage] = field(default_factory=dict)

    def of(self, name: str, quotas: Quotas) -> Usage:
        """``name``'s use, under its quotas as the token file has them now."""
        usage = self.usage.get(name)
        if usage is None or usage.quotas != quotas:
            fresh = Usage(quotas)
            if usage is not None:  # quotas changed: what was used still counts
                fresh.done, fresh.running = usage.done, usage.running
            usage = self.usage[name] = fresh
        return usage


class Metered:
    """A ``SearchRunner`` that counts account ``name``'s searches (module docstring)."""

    def __init__(self, inner: SearchRunner, name: str, usage: Usage) -> None:
        self.inner = inner
        self.name = name
        self.usage = usage

    def refusal(self, verb: str) -> str | None:
        """Why ``verb`` (``go``, ``analyse``) starts no search now (None: it may)."""
        if self.usage.left() > 0:
            return None
        return (
            f"{verb}: {self.name} has used its {self.usage.quotas.hour} s of search in the "
            f"last hour; more in {math.ceil(self.usage.more_in())} s"
        )

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        """Run the search within the account's quotas (``WorkerPool.search``)."""
        limiter = self.usage.limiter
        if limiter is not None and limiter.available_tokens == 0 and on_wait is not None:
            on_wait()
        async with limiter if limiter is not None else contextlib.nullcontext():
            if self.usage.left() <= 0:
                return SearchOutcome(None, "the account's search time for this hour is used")
            key = next(_KEYS)
            self.usage.start(key)
            inner_stop = trio.Event()
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_relay, stop, inner_stop)
                    nursery.start_soon(self._cut_off, inner_stop)
                    outcome = await self.inner.search(
                        job,
                        on_info=on_info,
                        stop=inner_stop,
                        hard_deadline=hard_deadline,
                        on_wait=on_wait,
                        peer=peer,
                        on_hold=on_hold,
                        grace=grace,
                    )
                    nursery.cancel_scope.cancel()
            finally:
                self.usage.end(key)
            return outcome

    async def _cut_off(self, stop: trio.Event) -> None:
        """Stop the search once the account has no time left (looked at again as often as
        the time left, shared among its running searches, could run out)."""
        while True:
            left = self.usage.left()
            if left <= 0:
                stop.set()
                return
            if math.isinf(left):
                return
            await trio.sleep(max(CHECK_EVERY, left / max(1, len(self.usage.running))))


async def _relay(outer: trio.Event, inner: trio.Event) -> None:
    await outer.wait()
    inner.set()

"""What one account may use (``enginesrv token add NAME --searches N --hour S``): searches at
once, and seconds of search in any hour, over all its connections together.

Once a connection's token is accepted, its searches (``go``, each analysed position, a game
the web port referees against a bot) count against its account instead of its address: the
workers are shared among accounts (``peersearches`` each, at most, as among addresses) and
each account's quotas hold across however many connections and addresses it uses. A
``Metered`` runner stands between the session and the pool:

* ``searches``: a search over the quota waits for one of the account's own to end (told so
  with the ``info string`` of a search waiting for a worker);
* ``hour``: the seconds its searches held workers in the last hour, those holding one now
  included (a wait for a worker, or a suspension, costs none). A search started with none
  left is refused (error 300, saying when more will be left); one running is stopped, and
  answers with its best move so far, once the account's time is used up.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
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
    """One account's use of the server (module docstring): the time its searches held
    workers, those ended in the last hour and those holding one now."""

    quotas: Quotas
    clock: Callable[[], float] = trio.current_time
    done: deque[tuple[float, float]] = field(default_factory=deque)
    """(when it let its worker go, seconds it held it) of each hold in the last hour; kept
    only under an hourly quota."""
    spent: float = 0.0
    """The seconds of ``done``."""
    holding: dict[int, float] = field(default_factory=dict)
    """Since when each search holding a worker now has held it."""
    changed: trio.Event = field(default_factory=trio.Event)
    """Set (and replaced) when a search takes a worker: the searches watching the time left
    look again (``Metered``)."""
    limiter: trio.CapacityLimiter | None = None

    def __post_init__(self) -> None:
        if self.quotas.searches is not None:
            self.limiter = trio.CapacityLimiter(self.quotas.searches)

    def requota(self, quotas: Quotas) -> None:
        """The account's quotas changed: searches at once from now on (those running go
        on), and its searches look at the time left again."""
        self.quotas = quotas
        if quotas.searches is None:
            self.limiter = None
        elif self.limiter is None:
            self.limiter = trio.CapacityLimiter(quotas.searches)
        else:
            self.limiter.total_tokens = quotas.searches
        if quotas.hour is None:
            self.done.clear()
            self.spent = 0.0
        self.changed.set()
        self.changed = trio.Event()

    def _forget_old(self, now: float) -> None:
        while self.done and self.done[0][0] <= now - HOUR:
            self.spent -= self.done.popleft()[1]
        if not self.done:
            self.spent = 0.0  # no rounding left over

    def used(self) -> float:
        """Seconds of search in the last hour, those holding a worker now included."""
        now = self.clock()
        self._forget_old(now)
        return self.spent + sum(now - start for start in self.holding.values())

    def left(self) -> float:
        """Seconds of search left this hour (``math.inf`` without an hourly quota)."""
        if self.quotas.hour is None:
            return math.inf
        return self.quotas.hour - self.used()

    def more_in(self) -> float:
        """Seconds until some time is left again (the oldest hold's hour ends)."""
        if not self.done:
            return 0.0
        return max(0.0, self.done[0][0] + HOUR - self.clock())

    def hold(self, key: int, holding: bool) -> None:
        """Search ``key`` took a worker (``holding``) or let it go."""
        now = self.clock()
        if holding:
            self.holding[key] = now
            self.changed.set()
            self.changed = trio.Event()
            return
        start = self.holding.pop(key, None)
        if start is not None and self.quotas.hour is not None:
            self._forget_old(now)
            self.done.append((now, now - start))
            self.spent += now - start


@dataclass
class Accounts:
    """Each account's use, kept while the server runs: one entry an account that has
    connected (the token file bounds them), whose quotas follow the file."""

    usage: dict[str, Usage] = field(default_factory=dict)

    def of(self, name: str, quotas: Quotas) -> Usage:
        """``name``'s use, under its quotas as the token file has them now (changed in
        place: every connection of the account shares the one entry, and what it used still
        counts)."""
        usage = self.usage.get(name)
        if usage is None:
            usage = self.usage[name] = Usage(quotas)
        elif usage.quotas != quotas:
            usage.requota(quotas)
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
            hold = functools.partial(self.usage.hold, next(_KEYS))
            inner_stop = trio.Event()
            pooled = isinstance(self.inner, WorkerPool)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_relay, stop, inner_stop)
                    nursery.start_soon(self._cut_off, inner_stop)
                    if not pooled:  # a runner of its own: it holds its worker throughout
                        hold(True)
                    outcome = await self.inner.search(
                        job,
                        on_info=on_info,
                        stop=inner_stop,
                        hard_deadline=hard_deadline,
                        on_wait=on_wait,
                        peer=peer,
                        on_hold=on_hold,
                        grace=grace,
                        **({"on_worker": hold} if pooled else {}),
                    )
                    nursery.cancel_scope.cancel()
            finally:
                hold(False)
            return outcome

    async def _cut_off(self, stop: trio.Event) -> None:
        """Stop the search once the account has no time left: looked at again when the time
        left could have run out, the account's searches holding workers using it together,
        and whenever another of them takes a worker."""
        while True:
            left = self.usage.left()
            if left <= 0:
                stop.set()
                return
            holding = max(1, len(self.usage.holding))
            wait = math.inf if math.isinf(left) else max(CHECK_EVERY, left / holding)
            with trio.move_on_after(wait):  # no hourly quota: until the quotas change
                await self.usage.changed.wait()


async def _relay(outer: trio.Event, inner: trio.Event) -> None:
    await outer.wait()
    inner.set()

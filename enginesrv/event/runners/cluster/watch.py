"""The coordinator's watch over a cluster's workers while an event runs (``WorkerWatch``):
the I/O around the sans-I/O ``roster.WorkerRoster``.

Before the first game every worker is checked (the preflight: ``worker.preflight_task``,
pinned to it). Then, every ``watch_interval``, the scheduler is asked for its workers: one that
joined is checked in its turn, one that left is dropped. The roster says who may play a game;
``wait_for`` waits for the workers that a game lacks, for as long as one may still come.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import outcome
import structlog
import trio

from enginesrv.event.config import EventError
from enginesrv.event.play.players import GameOptions
from enginesrv.event.runners.cluster import futures
from enginesrv.event.runners.cluster.roster import WorkerRoster
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.worker import preflight_task

log = structlog.get_logger("enginesrv.cluster")


class WorkerWatch:
    """The workers of the cluster at ``address`` as an event sees them (module docstring);
    ``run`` names the event's tasks, ``config_json`` is its configuration (what a check
    starts) and ``trial_options`` the options a check gives each external engine for a new
    game (``PreparedEvent.trial_options``)."""

    def __init__(
        self,
        address: str,
        config_json: str,
        run: str,
        settings: ClusterSettings,
        trial_options: GameOptions = (),
    ):
        self.address = address
        self.config_json = config_json
        self.trial_options = trial_options
        self.run = run
        self.settings = settings
        self.roster: WorkerRoster | None = None
        """The workers that may play the event's games (from ``preflight`` on)."""
        self.changed = trio.Event()
        """Set, and replaced, whenever the roster changes (``note_change``)."""
        self.client: Any = None
        self._nursery: trio.Nursery | None = None
        self._checks = 0
        self._preflown = False

    async def preflight(
        self, client: Any, nursery: trio.Nursery, names: Sequence[str]
    ) -> list[str]:
        """Check every worker of the cluster that ``client`` reaches: each of the players
        ``names`` started once there and stopped. A worker lost during its check is dropped;
        the workers that join later are checked as they come, in ``nursery``, for as long as
        it runs, and get no game before theirs has passed. Returns a warning per worker that
        cannot run a player or was lost.

        Raises:
            EventError: no worker, or a player that no worker left can run (named, with each
                worker's reason).
        """
        self.client = client
        self._nursery = nursery
        roster = self.roster = WorkerRoster(tuple(names), self.settings.rejoin_wait)
        present = await self._members()
        if present is None:
            raise EventError(f"--cluster {self.address}: the scheduler did not list its workers")
        if not present:
            raise EventError(f"--cluster {self.address}: the cluster has no worker")
        first = self._saw(present)
        nursery.start_soon(self._watch)
        while roster.checking & set(first):  # each check ends within preflight_timeout
            await self.changed.wait()
        await self.wait_for(lambda: all(roster.able(name) for name in names))
        lacking = [name for name in names if not roster.able(name)]
        if lacking:
            raise EventError(
                f"--cluster: no worker can run the player{'s' if len(lacking) > 1 else ''} "
                f"{_and(lacking)}: {roster.reasons(*lacking)}"
            )
        self._preflown = True
        warnings = [f"worker {worker} {how}: dropped" for worker, how in roster.lost.items()]
        for worker, problems in sorted(roster.cannot.items()):
            warnings.extend(_cannot_run(worker, problems))
        return warnings

    def current(self) -> WorkerRoster:
        """The roster (``preflight`` made it)."""
        if self.roster is None:
            raise RuntimeError("ClusterRunner: no preflight")
        return self.roster

    async def wait_for(self, done: Callable[[], bool]) -> None:
        """Wait until ``done()``, or until no worker that could make it so is coming: none is
        being checked, and none was lost within ``rejoin_wait`` (its nanny may restart it);
        at most ``preflight_timeout + rejoin_wait`` in all, or until ``checks_lost`` workers
        were lost during their checks."""
        roster = self.current()
        settings = self.settings
        give_up = trio.current_time() + settings.preflight_timeout + roster.rejoin_wait
        checks_lost = roster.checks_lost
        while not done():
            now = trio.current_time()
            until = roster.wait_until(now)
            if (
                until is None
                or now >= give_up
                or roster.checks_lost - checks_lost >= settings.checks_lost
            ):
                return
            with trio.move_on_at(min(until, give_up)):
                await self.changed.wait()

    async def all_gone(self, workers: Sequence[str]) -> None:
        """Wait until every one of ``workers`` has left the cluster."""
        roster = self.current()
        while any(worker in roster.present for worker in workers):
            await self.changed.wait()

    def note_change(self) -> None:
        """Wake whatever waits on the roster."""
        self.changed.set()
        self.changed = trio.Event()

    def _saw(self, present: set[str]) -> list[str]:
        """The cluster's workers now: those that joined are checked (in the background),
        those that left are dropped. Returns those that joined."""
        roster = self.current()
        joined, left = roster.see(present, trio.current_time())
        for worker in left:
            if self._preflown:  # those lost before are in the preflight's warnings
                log.warning("cluster_worker_lost", worker=worker, how=roster.lost[worker])
        nursery = self._nursery
        assert nursery is not None
        for worker in joined:
            nursery.start_soon(self._check, worker)
        if joined or left:
            self.note_change()
        return joined

    async def _watch(self) -> None:
        """Look at the cluster's workers every ``watch_interval``, for as long as the event
        runs (``_saw``)."""
        while True:
            await trio.sleep(self.settings.watch_interval)
            present = await self._members()
            if present is not None:  # the scheduler did not answer: the games will say so
                self._saw(present)

    async def _members(self) -> set[str] | None:
        """The workers in the cluster, as the scheduler lists them; None if it does not
        within ``look_timeout``."""
        client = self.client
        timeout = self.settings.look_timeout

        def ask() -> set[str]:
            return set(client.nthreads(callback_timeout=timeout))

        with trio.move_on_after(timeout + 1):
            try:
                return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
            except Exception:  # unreachable, closed, or timed out (what Dask raises varies)
                return None
        return None

    async def _check(self, worker: str) -> None:
        """Run the preflight on ``worker`` (its task pinned there) and tell the roster what it
        said; a check that does not answer within ``preflight_timeout`` fails."""
        roster = self.current()
        self._checks += 1
        try:
            future = self.client.submit(
                preflight_task,
                self.config_json,
                self.trial_options,
                key=f"enginesrv-preflight-{self.run}-{self._checks}",
                workers=[worker],
                allow_other_workers=False,
                pure=False,
            )
        except Exception as exc:  # a client closing under the event: what Dask raises varies
            roster.failed(worker, futures.one_line(f"the check could not be sent: {exc}"))
            self.note_change()
            return
        got = await self._answer(worker, future)
        if got is None:
            timeout = self.settings.preflight_timeout
            counted = roster.failed(worker, f"did not start the players within {timeout:g} s")
            await futures.cancel(future, self.settings.look_timeout)
        else:
            try:
                counted = roster.checked(worker, got.unwrap())
            except Exception as exc:  # the check itself failed on that worker
                counted = roster.failed(worker, futures.one_line(f"the check failed: {exc}"))
        if counted and self._preflown:  # those of the first workers are the preflight's
            for detail in _cannot_run(worker, roster.cannot[worker]):
                log.warning("cluster_worker_cannot_run", detail=detail)
        self.note_change()

    async def _answer(self, worker: str, future: Any) -> outcome.Outcome[dict[str, str]] | None:
        """What the check ``future`` on ``worker`` answered (or raised); None if it did not
        answer within ``preflight_timeout``, or if ``worker`` left first (``_saw`` dropped it:
        its check would never run)."""
        roster = self.current()
        ended = futures.ended(future)
        got: list[outcome.Outcome[dict[str, str]]] = []

        async def fetch() -> None:
            await ended.wait()
            await futures.value_of(future, got)

        async def gone() -> None:
            while worker in roster.checking:
                await self.changed.wait()

        with trio.move_on_after(self.settings.preflight_timeout):
            await futures.first(fetch, gone)
        return got[0] if got else None


def _cannot_run(worker: str, problems: dict[str, str]) -> list[str]:
    """A line per player that ``worker`` cannot run, with why, by name."""
    return [f"worker {worker} cannot run {name}: {why}" for name, why in sorted(problems.items())]


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

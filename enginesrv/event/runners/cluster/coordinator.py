"""The coordinator's end of an event on a cluster (``ClusterRunner``, made by
``open_cluster_runner``): a Dask client that sends each game to a worker as a task and takes
its result back, for the tournament loop (``runners.base.GameRunner``).

A game goes only to the workers whose check passed for both of its players (``watch``); its
result comes straight from the worker (``listener``) or as the task's value, whichever comes
first. A game whose workers all left the cluster before it ended is sent again; one whose task
failed is run again by Dask (``ClusterSettings.retries``), then stops the event.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import outcome
import structlog
import trio

from enginesrv.admission import Admission
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import MoveObserver
from enginesrv.event.play.plan import GamePlan, Played
from enginesrv.event.play.players import GameOptions
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.runners.base import open_background
from enginesrv.event.runners.cluster import futures
from enginesrv.event.runners.cluster.costs import StoreCosts
from enginesrv.event.runners.cluster.listener import ResultListener, start_listener
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.watch import WorkerWatch
from enginesrv.event.runners.cluster.wire import GameTask, TaskResult, import_distributed
from enginesrv.event.runners.cluster.worker import play_task, release_task

log = structlog.get_logger("enginesrv.cluster")
KEPT = "the finished games are kept: --resume to go on"


class ClusterRunner:
    """The coordinator's end (module docstring): a Dask client of the scheduler at
    ``address`` that plays games of the event of ``config`` as tasks (``play``), taking their
    results straight back on ``listen`` (``listener.parse_listen``'s; None: through Dask
    only), admitted by ``admission`` (None: an admission of its own). ``names``: the players'
    display names (``check`` makes sure each can play, given ``trial_options`` for a new game:
    ``PreparedEvent.trial_options``)."""

    clocks_here = False
    live = False

    def __init__(
        self,
        address: str,
        config: EventConfig,
        listen: tuple[str, int] | None = ("", 0),
        *,
        admission: Admission | None = None,
        names: Sequence[str] = (),
        settings: ClusterSettings | None = None,
        trial_options: GameOptions = (),
    ) -> None:
        self.address = address
        self.names = list(names)
        self.admission = admission
        self.listen = listen
        self.settings = settings or ClusterSettings()
        self.listener: ResultListener | None = None
        self.config = config
        self.config_json = config.to_json()
        self.client: Any = None
        self._nursery: trio.Nursery | None = None
        """Where the workers are watched and checked while the event runs (``serve``'s)."""
        self._run = uuid.uuid4().hex[:8]
        self.stop_name = f"enginesrv-stop-{self._run}"
        self.workers = WorkerWatch(
            address, self.config_json, self._run, self.settings, trial_options
        )
        self.costs = StoreCosts()
        self._answers: dict[int, TaskResult] = {}
        """The answers of the games played and not yet settled."""

    async def __aenter__(self) -> ClusterRunner:
        distributed = import_distributed()
        timeout = self.settings.connect_timeout

        def connect() -> Any:
            return distributed.Client(self.address, timeout=timeout, set_as_default=False)

        try:
            self.client = await trio.to_thread.run_sync(connect)
        except (OSError, TimeoutError, ValueError) as exc:
            raise EventError(
                f"--cluster {self.address}: cannot reach the scheduler: {exc}"
            ) from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        settings = self.settings
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(settings.connect_timeout + settings.release_timeout),
        ):
            await trio.to_thread.run_sync(self._finish, client, abandon_on_cancel=True)

    def _finish(self, client: Any) -> None:
        """In a thread, at the end: the games still running on workers end within
        ``stop_poll``, the engines kept for the event's next game are ended (a scheduler that
        is gone has nothing left to stop), and ``client`` is closed."""
        distributed = import_distributed()
        with contextlib.suppress(Exception):
            distributed.Event(self.stop_name, client=client).set()
            deadline = time.monotonic() + self.settings.release_timeout
            releases = [
                client.submit(
                    release_task,
                    self.config_json,
                    key=f"enginesrv-release-{self._run}-{i}",
                    workers=[worker],
                    allow_other_workers=False,
                    pure=False,
                )
                for i, worker in enumerate(client.nthreads())
            ]
            for future in releases:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
        client.close()

    async def serve(self, nursery: trio.Nursery) -> None:
        """Take the results sent straight from the workers, in ``nursery``, until it ends
        (``listener.start_listener``). With a scheduler not on plain TCP (its TLS keeps the
        results), or ``--cluster-listen off``, every result comes through Dask. The cluster's
        workers are watched and checked in ``nursery`` too, from ``preflight`` on.

        Raises:
            EventError: ``--cluster-listen`` names an address this machine cannot listen on.
        """
        self._nursery = nursery
        if self.listen is not None:
            self.listener = await start_listener(
                nursery, self.address, self.listen, self.admission, self.settings
            )

    def settle(self, game_id: int, *, stored: bool = False) -> None:
        """The result of the game ``game_id`` (from ``play``) is stored, or dropped, or will
        not be: its worker, if it sent it straight, is answered; a game ``stored`` is counted
        in what storing costs."""
        if self.listener is not None:
            self.listener.settle(game_id)
        answer = self._answers.pop(game_id, None)
        if stored and answer is not None:
            self.costs.stored(game_id, answer.finished_at)

    def threads(self) -> int:
        """The worker threads of the cluster now."""
        return max(1, sum(int(n) for n in self.client.nthreads().values()))

    def lanes(self) -> int:
        return self.in_flight()

    def in_flight(self) -> int:
        """Games sent to the cluster at once: ``queued_per_thread`` (two) per worker thread,
        so that a thread that ends a game starts the next one queued at the scheduler at once,
        while this machine takes in and stores the game that ended (one at a time per thread
        would leave every thread idle for that trip)."""
        return self.settings.queued_per_thread * self.threads()

    async def check(self) -> None:
        """Check every worker (``preflight``); a worker that cannot run a player, or was
        lost, is logged."""
        for warning in await self.preflight(self.names):
            log.warning("cluster_worker_cannot_run", detail=warning)

    async def preflight(self, names: list[str]) -> list[str]:
        """Check every worker of the cluster, and go on checking those that join, in the
        nursery given to ``serve``, which must have been called (``WorkerWatch.preflight``).

        Raises:
            EventError: no worker, or a player that no worker left can run.
        """
        nursery = self._nursery
        if nursery is None:
            raise RuntimeError("ClusterRunner.preflight before serve")
        return await self.workers.preflight(self.client, nursery, names)

    async def play(self, plan: GamePlan, on_move: MoveObserver | None = None) -> Played:
        """Play one game on a worker whose check passed for both players; ``settle`` it once
        its result is stored (or dropped). A game whose workers were all lost before it ended
        is sent again, to those of the moment. Its moves are not sent back while it runs
        (``on_move`` is not told them).

        Raises:
            EventError: the game could not be played (no worker left can run both players,
                its workers died too often, the scheduler went away, the task failed); the
                event stops and may resume.
        """
        game_id = plan.game_id
        listener = self.listener
        reply = None if listener is None else listener.reply
        came = None if listener is None else listener.expect(game_id)
        task = GameTask(self.config_json, plan, self.stop_name, reply, self.settings)
        answer: TaskResult | None = None
        try:
            answer = await self._play(task, plan.setup.names, came)
        finally:
            if answer is None or answer.result is None:
                self.settle(game_id)
        result = answer.result
        if result is None:
            raise EventError(f"--cluster: game {game_id} was abandoned on its worker")
        self._answers[game_id] = answer
        where = f"played on the worker {answer.worker}"
        record = dataclasses.replace(result.record, comments=[*result.record.comments, where])
        return Played(dataclasses.replace(result, record=record), answer.secret_seeds)

    async def _play(
        self, task: GameTask, names: tuple[str, str], came: trio.Event | None
    ) -> TaskResult:
        """Send ``task`` to the workers that can run both ``names``, again while they are all
        lost before it ends (``sent_again`` times at most); its answer."""
        game_id = task.plan.game_id
        roster = self.workers.current()
        sent_again = self.settings.sent_again
        for sent in range(sent_again + 1):
            await self.workers.wait_for(lambda: bool(roster.able(*names)))
            allowed = roster.able(*names)
            if not allowed:
                raise EventError(
                    f"--cluster: no worker left can run both {names[0]} and {names[1]} (game "
                    f"{game_id}): {roster.reasons(*names)}; {KEPT}"
                )
            # never to a worker not checked (one that joined, unchecked, would be free to
            # take it), and so, when all of these are lost, never run: sent again
            future = self.client.submit(
                play_task,
                task,
                key=f"enginesrv-game-{self._run}-{game_id}" + (f"-{sent}" if sent else ""),
                workers=allowed,
                allow_other_workers=False,
                pure=False,
                retries=self.settings.retries,
            )
            try:
                return await self._answer(future, game_id, came, allowed)
            except _StrandedError:
                await futures.cancel(future, self.settings.look_timeout)
            except BaseException as exc:
                future.cancel()
                error = _game_error(exc, game_id)
                if error is None:
                    raise
                raise error from None
        raise EventError(
            f"--cluster: game {game_id} lost all the workers it was sent to {sent_again + 1} "
            f"times; {KEPT}"
        )

    async def _answer(
        self, future: Any, game_id: int, came: trio.Event | None, sent_to: list[str]
    ) -> TaskResult:
        """The game's result: sent straight by its worker (``came``) or the task's value,
        whichever comes first. Raises what the task raised, if that comes first, and
        ``_StrandedError`` if every worker of ``sent_to`` leaves the cluster first."""
        came_wait = None if came is None else came.wait

        async def stranded() -> None:
            await self.workers.all_gone(sent_to)

        # told by Dask that the task ended, not given its value: a result that came straight
        # leaves the task's value (a marker) unfetched, and no thread waits for a game that
        # is still being played (trio lends 40 at most)
        ended = futures.ended(future)
        first = await futures.first(came_wait, ended.wait, stranded)
        if (pushed := self._pushed(game_id)) is not None:
            return pushed
        if first == 2:
            raise _StrandedError
        # the task ended (or failed): its value, still listening for a result sent straight
        # (the value may be a marker of a run of the game on another worker, after the one
        # that ended here was lost before its value was fetched)
        value: list[outcome.Outcome[TaskResult]] = []

        async def fetch() -> None:
            await futures.value_of(future, value)

        first = await futures.first(came_wait, fetch, stranded)
        if (pushed := self._pushed(game_id)) is not None:
            return pushed
        if first == 2:
            raise _StrandedError
        answer = value[0].unwrap()
        if answer.delivered:
            # sent straight and taken, so ``came`` is set before this answer: cannot be
            raise EventError(f"--cluster: game {game_id}'s result was sent but not taken")
        self.costs.received[game_id] = time.time()
        return answer

    def _pushed(self, game_id: int) -> TaskResult | None:
        """The game's result if its worker sent it straight and it was taken."""
        listener = self.listener
        if listener is None or game_id not in listener.results:
            return None
        answer, self.costs.received[game_id] = listener.results[game_id]
        self.costs.delivered += 1
        return answer


class _StrandedError(Exception):
    """Every worker a game was sent to left the cluster before it ended (``ClusterRunner``)."""


def _game_error(exc: BaseException, game_id: int) -> BaseException | None:
    """The one-line ``EventError`` for what a game's task raised; None: raise ``exc`` as it
    is (an ``EventError`` already, or not an error: a cancellation)."""
    if isinstance(exc, import_distributed().KilledWorker):
        return EventError(
            f"--cluster: game {game_id} lost its worker too many times "
            f"({futures.one_line(str(exc))}); {KEPT}"
        )
    if isinstance(exc, EventError) or not isinstance(exc, Exception):
        return None
    return EventError(
        f"--cluster: game {game_id} could not be played on the cluster: "
        f"{futures.one_line(f'{type(exc).__name__}: {exc}')}; {KEPT}"
    )


@contextlib.asynccontextmanager
async def open_cluster_runner(
    event: PreparedEvent,
    address: str,
    listen: tuple[str, int] | None = ("", 0),
    *,
    admission: Admission | None = None,
    settings: ClusterSettings | None = None,
) -> AsyncIterator[ClusterRunner]:
    """A ``ClusterRunner`` of the event on the cluster whose scheduler is at ``address``,
    taking the results the workers send straight back on ``listen`` (admitted by
    ``admission``), bounded by ``settings`` (None: the defaults); at its end, what storing its
    games cost is logged.

    Raises:
        EventError: ``--debug`` with external engines or ``--isolate`` (both are for games
            on this machine), a scheduler that cannot be reached, or a ``listen`` address
            this machine cannot listen on.
    """
    if event.config.debug and not event.all_bots:
        raise EventError("--debug traces the engines of local games only: leave out --cluster")
    if event.config.isolate:
        raise EventError("--isolate runs on this machine only: leave out --cluster")
    runner = ClusterRunner(
        address,
        event.config,
        listen,
        admission=admission,
        names=event.names,
        settings=settings,
        trial_options=event.trial_options,
    )
    async with runner:
        try:
            async with open_background() as nursery:
                await runner.serve(nursery)
                yield runner
        finally:
            runner.costs.log()


@dataclasses.dataclass(frozen=True)
class ClusterVenue:
    """The Dask cluster whose scheduler is at ``address`` (``open_cluster_runner``): the
    results sent straight back to a listener on ``listen`` (``parse_listen``; None: through
    Dask), whose connections ``admission`` admits, within ``settings``."""

    address: str
    listen: tuple[str, int] | None = ("", 0)
    admission: Admission | None = None
    settings: ClusterSettings | None = None

    def open(
        self, event: PreparedEvent, out_dir: Path | None
    ) -> contextlib.AbstractAsyncContextManager[ClusterRunner]:
        del out_dir  # the coordinator keeps the store; the workers write nothing of it
        return open_cluster_runner(
            event, self.address, self.listen, admission=self.admission, settings=self.settings
        )

"""The worker processes of a pool (``WorkerSet``): started (forked by the spawner where it can,
else run under the reaper), handed to the pool once ready, killed past a deadline, replaced
once dead, and ended with the pool."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable

import structlog
import trio

from enginesrv import orphans, reaper
from enginesrv.search import forked
from enginesrv.search.child import WorkerProcess
from enginesrv.search.forked import Spawner, SpawnerGoneError
from enginesrv.search.waits import WorkerProcess as ProcessHandle
from enginesrv.search.waits import reap, stop

READY_TIMEOUT = 30.0
"""Seconds a new worker gets to load the games and bots and report ready; one that does not
is handed out anyway (its first search then waits for it)."""
CLOSE_TIMEOUT = 0.5
"""Seconds a worker gets to exit once its input is closed before it is killed."""
WORKER_COMMAND = (sys.executable, "-m", "enginesrv.search.worker")
"""How a search worker is started."""

log = structlog.get_logger("enginesrv.search.pool")


class WorkerSet:
    """The processes running ``command``, owned by ``nursery``.

    Args:
        ready_timeout: seconds a new worker gets to report ready before it is handed out.
        restart_spawner: whether a spawner that died (``forked.Spawner``) is started again.
        on_free: takes a worker that is ready (a new one, or one that replaced a dead one).
        on_lost: called once no worker is left and none can be started (``lost`` says why).
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        command: tuple[str, ...],
        ready_timeout: float,
        restart_spawner: bool,
        on_free: Callable[[WorkerProcess], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.nursery = nursery
        self.command = command
        self.ready_timeout = ready_timeout
        self.spawner = (
            Spawner(restart=restart_spawner)
            if command == WORKER_COMMAND and forked.available()
            else None
        )
        """Forks the default workers (``enginesrv.search.spawner``): a worker started while
        engines of the same user run could be read by them as it starts."""
        self._on_free = on_free
        self._on_lost = on_lost
        self._numbers = itertools.count(1)
        self.workers: set[WorkerProcess] = set()
        self.pending = 0
        """Workers being started (spawned or replaced) that are not handed out yet."""
        self.restarts = 0
        self.closed = False
        self.lost: str | None = None
        """Why no worker is left and none can be started (the spawner was killed)."""

    async def start(self, count: int) -> None:
        """Start ``count`` workers and wait until they are ready (or ``ready_timeout`` has
        passed)."""
        for _ in range(count):
            await self.spawn()
        with trio.move_on_after(self.ready_timeout):
            for worker in list(self.workers):
                await worker.ready.wait()

    async def _open_process(self) -> ProcessHandle:
        """A new worker: forked by the spawner (the default worker, where it can), else
        started, under the reaper (whatever a plug-in bot starts ends with its worker)."""
        if self.spawner is not None:
            return await self.spawner.fork()
        with orphans.spawning():
            process = await trio.lowlevel.open_process(
                reaper.command(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            orphans.known(process.pid)
        return process

    async def spawn(self) -> None:
        """Start one worker; it goes to ``on_free`` once ready."""
        self.pending += 1
        try:
            process = await self._open_process()
        except BaseException:
            self.pending -= 1
            raise
        if self.closed:  # the pool closed while the process started: end it here
            self.pending -= 1
            stop(process)
            with trio.CancelScope(shield=True):
                await reap(process)
            orphans.forget(process.pid)
            return
        worker = WorkerProcess(next(self._numbers), process)
        self.workers.add(worker)
        self.nursery.start_soon(worker.read_frames)
        if self.ready_timeout > 0:
            self.nursery.start_soon(self._when_ready, worker)
        else:
            self.pending -= 1
            self._on_free(worker)

    async def _when_ready(self, worker: WorkerProcess) -> None:
        """Hand a new worker out once it reports ready (or after ``ready_timeout``)."""
        with trio.move_on_after(self.ready_timeout):
            await worker.ready.wait()
        self.pending -= 1
        self._on_free(worker)

    def kill(self, worker: WorkerProcess, why: str) -> None:
        """Kill a worker; it is reaped and replaced when it is given back."""
        log.warning("worker_restart", worker=worker.number, reason=why)
        worker.alive = False
        if worker.process.returncode is None:
            stop(worker.process)

    async def replace(self, worker: WorkerProcess) -> None:
        """Reap a dead or killed worker (its pipes closed, its exit awaited), start another."""
        if worker not in self.workers:
            return
        self.workers.discard(worker)
        self.pending += 1
        try:
            if worker.process.returncode is None:
                stop(worker.process)
            with trio.CancelScope(shield=True):
                await reap(worker.process)
            orphans.forget(worker.process.pid)
            self.restarts += 1
        finally:
            self.pending -= 1
        if not self.closed:
            try:
                await self.spawn()
            except SpawnerGoneError as exc:
                # the searches go to the workers left; with none left, each fails at once
                log.warning("worker_not_replaced", worker=worker.number, reason=str(exc))
                if not self.workers and not self.pending:
                    self.lost = str(exc)
                    self._on_lost()

    def kill_all(self) -> None:
        """Kill every worker at once (the second interrupt: no waiting for anything)."""
        self.closed = True
        for worker in self.workers:
            if worker.process.returncode is None:
                stop(worker.process)
        if self.spawner is not None:
            self.spawner.close()

    async def aclose(self) -> None:
        """Stop every worker (end of input first, a kill if it lingers) and reap it."""
        self.closed = True
        workers = list(self.workers)
        self.workers.clear()
        for worker in workers:
            if not worker.ready.is_set() and worker.process.returncode is None:
                stop(worker.process)  # still starting: it has nothing to finish
            if worker.process.stdin is not None:
                with trio.move_on_after(0.2):
                    await worker.process.stdin.aclose()
        with trio.move_on_after(CLOSE_TIMEOUT):
            for worker in workers:
                await worker.process.wait()
        for worker in workers:
            if worker.process.returncode is None:
                stop(worker.process)
            await reap(worker.process)
            orphans.forget(worker.process.pid)
        if self.spawner is not None:
            await self.spawner.aclose()

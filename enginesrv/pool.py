"""A bounded pool of search worker processes (see ``enginesrv.worker``), driven from trio.

``WorkerPool.search`` hands one job to an idle worker (waiting for one if all are busy),
forwards its progress, relays a stop, and enforces a hard deadline: a worker that has not
answered by then, or within a grace period after a stop, is killed and replaced, and the search
ends with no result (the session then plays the best move reported so far, or a legal move).
A worker that dies is replaced; its search ends with an error. If the caller is cancelled (the
client went away), the search is stopped and the worker returns to the pool once it has
answered, or is killed after the grace period.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import structlog
import trio

from bots.engine import SearchInfo, SearchResult
from enginesrv.worker import SearchJob, info_from_map, result_from_map

GRACE = 0.5
"""Seconds a worker gets past its deadline, or after a stop, before it is killed."""
READY_TIMEOUT = 30.0
"""Seconds a new worker gets to load the games and bots and report ready; one that does not
is handed out anyway (its first search then waits for it)."""

log = structlog.get_logger("enginesrv.pool")


@dataclass
class SearchOutcome:
    """How a search ended: a result, or why there is none."""

    result: SearchResult | None
    error: str | None = None
    killed: bool = False
    last_info: SearchInfo | None = None


@dataclass
class _Job:
    msgid: int
    on_info: Callable[[SearchInfo], None]
    done: trio.Event = field(default_factory=trio.Event)
    result: SearchResult | None = None
    error: str | None = None
    last_info: SearchInfo | None = None


class _Worker:
    """One child process and the task that reads its frames."""

    def __init__(self, number: int, process: trio.Process) -> None:
        self.number = number
        self.process = process
        self.job: _Job | None = None
        self.alive = True
        self.ready = trio.Event()

    def is_alive(self) -> bool:
        """Whether the process still answers (its pipe is open)."""
        return self.alive

    async def send(self, frame: list[Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(msgpack.packb(frame, use_bin_type=True))

    async def read_frames(self) -> None:
        """Route the worker's frames to its current job until the pipe closes."""
        assert self.process.stdout is not None
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=4 * 1024 * 1024)
        try:
            while True:
                chunk = await self.process.stdout.receive_some(65536)
                if not chunk:
                    break
                unpacker.feed(chunk)
                for frame in unpacker:
                    self._route(frame)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ValueError):
            pass
        finally:
            self.alive = False
            self.ready.set()
            job = self.job
            if job is not None and not job.done.is_set():
                job.error = "the search worker died"
                job.done.set()

    def _route(self, frame: list[Any]) -> None:
        if frame[0] == 2 and frame[1] == "ready":
            self.ready.set()
            return
        job = self.job
        if job is None:
            return
        if frame[0] == 2 and frame[1] == "info":
            params = frame[2][0]
            if params.get("search") == job.msgid:
                info = info_from_map(params)
                job.last_info = info
                job.on_info(info)
        elif frame[0] == 1 and frame[1] == job.msgid:
            if frame[2] is not None:
                job.error = str(frame[2][2])
            else:
                job.result = result_from_map(frame[3])
            job.done.set()


class WorkerPool:
    """``size`` worker processes running ``command``, owned by ``nursery``: call ``start``
    first and ``aclose`` last."""

    def __init__(
        self,
        nursery: trio.Nursery,
        size: int,
        *,
        grace: float = GRACE,
        command: tuple[str, ...] = (sys.executable, "-m", "enginesrv.worker"),
        ready_timeout: float = READY_TIMEOUT,
    ) -> None:
        self.nursery = nursery
        self.command = command
        self.ready_timeout = ready_timeout
        self.size = max(1, size)
        self.grace = grace
        self._ids = itertools.count(1)
        self._numbers = itertools.count(1)
        self._idle_send, self._idle_receive = trio.open_memory_channel[_Worker](math.inf)
        self._workers: set[_Worker] = set()
        self.restarts = 0
        self.closed = False

    async def start(self) -> None:
        """Start the workers and wait until they are ready (or ``ready_timeout`` has passed),
        so that no search pays for a worker's start-up."""
        for _ in range(self.size):
            await self._spawn()
        with trio.move_on_after(self.ready_timeout):
            for worker in list(self._workers):
                await worker.ready.wait()

    async def _spawn(self) -> None:
        process = await trio.lowlevel.open_process(
            list(self.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        worker = _Worker(next(self._numbers), process)
        self._workers.add(worker)
        self.nursery.start_soon(worker.read_frames)
        if self.ready_timeout > 0:
            self.nursery.start_soon(self._when_ready, worker)
        else:
            self._idle_send.send_nowait(worker)

    async def _when_ready(self, worker: _Worker) -> None:
        """Hand a new worker out once it reports ready (or after ``ready_timeout``)."""
        with trio.move_on_after(self.ready_timeout):
            await worker.ready.wait()
        self._idle_send.send_nowait(worker)

    @property
    def idle(self) -> int:
        """Workers free right now."""
        return self._idle_receive.statistics().current_buffer_used

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
    ) -> SearchOutcome:
        """Run ``job`` on a worker.

        Args:
            job: the search.
            on_info: called (synchronously, on the event loop) with each progress report.
            stop: set it to make the search return at once with its best move.
            hard_deadline: ``trio.current_time()`` by which a result must be back; past it
                (plus the grace period) the worker is killed. None: no deadline.
            on_wait: called once if the job must wait for a free worker.
        """
        if self.idle == 0 and on_wait is not None:
            on_wait()
        worker = await self._idle_receive.receive()
        while not worker.is_alive():  # died while idle: replace it and take another
            await self._replace(worker)
            worker = await self._idle_receive.receive()
        running = _Job(next(self._ids), on_info)
        worker.job = running
        released = False
        try:
            await worker.send([0, running.msgid, "search", [job.to_map()]])
            async with trio.open_nursery() as watch:

                async def relay_stop() -> None:
                    await stop.wait()
                    await self._stop(worker, running)

                watch.start_soon(relay_stop)
                with trio.move_on_at(math.inf if hard_deadline is None else hard_deadline):
                    await running.done.wait()
                watch.cancel_scope.cancel()
            if not running.done.is_set():
                # past the hard deadline: stop it, then kill it if it stays silent
                await self._stop(worker, running)
            outcome = SearchOutcome(running.result, running.error, False, running.last_info)
            if not running.done.is_set():
                outcome.killed = True
                await self._kill(worker, "deadline")
            elif not worker.is_alive():
                await self._replace(worker)
            else:
                worker.job = None
                self._idle_send.send_nowait(worker)
            released = True
            return outcome
        finally:
            if not released:
                # cancelled (the client went away): clean up without blocking the caller
                self.nursery.start_soon(self._abandon, worker, running)

    async def _stop(self, worker: _Worker, job: _Job) -> None:
        if job.done.is_set() or not worker.is_alive():
            return
        try:
            await worker.send([2, "stop", [{"search": job.msgid}]])
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        with trio.move_on_after(self.grace):
            await job.done.wait()

    async def _abandon(self, worker: _Worker, job: _Job) -> None:
        await self._stop(worker, job)
        if job.done.is_set() and worker.is_alive():
            worker.job = None
            self._idle_send.send_nowait(worker)
        else:
            await self._kill(worker, "abandoned")

    async def _kill(self, worker: _Worker, why: str) -> None:
        log.warning("worker_restart", worker=worker.number, reason=why)
        worker.process.kill()
        await self._replace(worker)

    async def _replace(self, worker: _Worker) -> None:
        """Reap a dead or killed worker (its pipes closed, its exit awaited), start another."""
        if worker.process.returncode is None:
            worker.process.kill()
        with trio.CancelScope(shield=True):
            await _reap(worker.process)
        if worker in self._workers:
            self._workers.discard(worker)
            self.restarts += 1
            if not self.closed:
                await self._spawn()

    async def aclose(self) -> None:
        """Stop every worker (end of input first, a kill if it lingers) and reap it."""
        self.closed = True
        workers = list(self._workers)
        self._workers.clear()
        for worker in workers:
            if worker.process.stdin is not None:
                with trio.move_on_after(0.2):
                    await worker.process.stdin.aclose()
        with trio.move_on_after(1.0):
            for worker in workers:
                await worker.process.wait()
        for worker in workers:
            if worker.process.returncode is None:
                worker.process.kill()
            await _reap(worker.process)


async def _reap(process: trio.Process) -> None:
    """Close a child's pipes and wait for its exit (no zombie, no open file left)."""
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            await pipe.aclose()
    await process.wait()

"""What a search comes to (``SearchOutcome``), the interface of anything that runs searches
(``SearchRunner``), and one worker child process as the pool sees it: its pipe, its frames and
the job it runs (``WorkerProcess``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from bots.engine import SearchInfo, SearchResult
from enginesrv.search.jobs import SearchJob, info_from_map, result_from_map
from enginesrv.search.waits import WorkerProcess as ProcessHandle
from protocol import rpc
from protocol.errors import ProtocolError

MAX_WORKER_FRAME = 4 * 1024 * 1024


@dataclass
class SearchOutcome:
    """How a search ended: a result, or why there is none."""

    result: SearchResult | None
    error: str | None = None
    killed: bool = False
    last_info: SearchInfo | None = None


@dataclass
class PoolJob:
    msgid: int
    on_info: Callable[[SearchInfo], None]
    done: trio.Event = field(default_factory=trio.Event)
    result: SearchResult | None = None
    error: str | None = None
    last_info: SearchInfo | None = None


class WorkerProcess:
    """One child process and the task that reads its frames."""

    def __init__(self, number: int, process: ProcessHandle) -> None:
        self.number = number
        self.process = process
        self.job: PoolJob | None = None
        self.alive = True
        self.ready = trio.Event()

    def is_alive(self) -> bool:
        """Whether the process still answers (its pipe is open)."""
        return self.alive

    async def send(self, data: bytes) -> None:
        """Write one packed frame to the worker."""
        assert self.process.stdin is not None
        await self.process.stdin.send_all(data)

    async def read_frames(self) -> None:
        """Route the worker's frames to its current job until the pipe closes."""
        assert self.process.stdout is not None
        frames = rpc.FrameReader(MAX_WORKER_FRAME)
        try:
            while True:
                chunk = await self.process.stdout.receive_some(65536)
                if not chunk:
                    break
                frames.feed(chunk)
                for message in frames.envelopes():
                    self._route(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ProtocolError):
            pass
        finally:
            self.alive = False
            self.ready.set()
            job = self.job
            if job is not None and not job.done.is_set():
                job.error = "the search worker died"
                job.done.set()

    def _route(self, message: rpc.Envelope) -> None:
        if message.kind == rpc.NOTIFY and message.method == "ready":
            self.ready.set()
            return
        job = self.job
        if job is None:
            return
        if message.kind == rpc.NOTIFY and message.method == "info":
            if message.params.get("search") == job.msgid:
                info = info_from_map(dict(message.params))
                job.last_info = info
                job.on_info(info)
        elif message.kind == rpc.RESPONSE and message.msgid == job.msgid:
            error = message.error
            if error is not None:
                job.error = (
                    str(error[2]) if isinstance(error, list) and len(error) > 2 else str(error)
                )
            elif isinstance(message.result, dict):
                job.result = result_from_map(message.result)
            else:
                job.error = f"a malformed answer: {message.result!r:.80}"
            job.done.set()


class SearchRunner(Protocol):
    """Where searches run: ``WorkerPool`` in the server, a thread in tests."""

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
        """Run one search (see ``WorkerPool.search``)."""

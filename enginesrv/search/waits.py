"""Small waits of the pool: for the first of several events (``first_of``), and for a worker
process to end (``stop``, ``reap``). A worker forked by the spawner is killed outright (the
spawner ends what it started); one started under the reaper (``enginesrv.reaper``) gets SIGTERM,
on which its reaper kills it and every process it started, at once."""

from __future__ import annotations

from typing import Protocol

import trio


async def first_of(*events: trio.Event) -> None:
    """Wait until any of ``events`` is set."""
    if any(e.is_set() for e in events):
        await trio.lowlevel.checkpoint()
        return
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(wait, event)


class WorkerProcess(Protocol):
    """A worker's process as the pool uses it: a ``trio.Process``, or a worker the spawner
    forked (``enginesrv.search.forked.ForkedProcess``)."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    @property
    def stdin(self) -> trio.abc.SendStream | None: ...
    @property
    def stdout(self) -> trio.abc.ReceiveStream | None: ...
    @property
    def stderr(self) -> trio.abc.ReceiveStream | None: ...
    async def wait(self) -> int: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


REAP_WAIT = 1.0
"""Seconds a stopped worker's reaper gets to end it and exit before it is killed itself."""


def stop(process: WorkerProcess) -> None:
    """End a worker now, with everything it started: SIGTERM to its reaper."""
    if process.returncode is None:
        process.terminate()


async def reap(process: WorkerProcess, wait: float = REAP_WAIT) -> None:
    """Close a child's pipes and wait for its exit (no zombie, no open file left): ``wait``
    seconds, then it is killed."""
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            await pipe.aclose()
    with trio.move_on_after(wait):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()

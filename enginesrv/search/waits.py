"""Small waits of the pool: for the first of several events (``first_of``), and for a worker
process to end (``stop``, ``reap``). A worker runs under the reaper (``enginesrv.reaper``):
SIGTERM to it kills the worker and every process the worker started, at once."""

from __future__ import annotations

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


REAP_WAIT = 1.0
"""Seconds a stopped worker's reaper gets to end it and exit before it is killed itself."""


def stop(process: trio.Process) -> None:
    """End a worker now, with everything it started: SIGTERM to its reaper."""
    if process.returncode is None:
        process.terminate()


async def reap(process: trio.Process, wait: float = REAP_WAIT) -> None:
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

"""Two small waits of the pool: for the first of several events (``first_of``), and for a worker
process to end, killed if it does not (``reap``)."""

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


async def reap(process: trio.Process) -> None:
    """Close a child's pipes and wait for its exit (no zombie, no open file left)."""
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            await pipe.aclose()
    await process.wait()

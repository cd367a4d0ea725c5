"""Where a connection's reader runs: in the caller's task group (a trio nursery or an anyio
task group), or, with none, in a task of the event loop's own that outlives the block that
opened the engine (so that the caller's errors are not handed back wrapped in exception
groups, as a task group around the caller's block would hand them)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVarTuple

import trio

Ts = TypeVarTuple("Ts")


class Spawner(Protocol):
    """What starts a task: ``trio.Nursery`` and ``anyio.abc.TaskGroup`` both do."""

    def start_soon(
        self,
        func: Callable[[*Ts], Coroutine[Any, Any, object]],
        *args: *Ts,
        name: object = None,
    ) -> object: ...


_RUNNING: set[asyncio.Task[None]] = set()
"""The loop's own tasks started here, held until they end (asyncio keeps only a weak
reference to a task)."""


def spawn_reader(fn: Callable[[], Awaitable[None]], name: str) -> None:
    """Run ``fn`` as a task of the running loop's own: a system task under trio, a loop task
    under asyncio. ``fn`` must catch its own errors (a system task's error ends the run)."""
    if trio.lowlevel.in_trio_run():
        trio.lowlevel.spawn_system_task(fn, name=name)
        return

    async def run() -> None:
        await fn()

    task = asyncio.get_running_loop().create_task(run(), name=name)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)

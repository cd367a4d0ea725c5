"""Dask futures seen from the coordinator's trio loop: when one ends, its value, cancelling it,
and waiting for the first of several things.

A Dask client runs in threads of its own: a future says it is done through a callback in one
of them, and its value is fetched by a blocking call. Nothing here waits in a thread for a
task still running (trio lends 40 threads at most, and an event has more games in flight).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import outcome
import trio

T = TypeVar("T")


def ended(future: Any) -> trio.Event:
    """An event set when the Dask ``future`` is done (finished, failed or cancelled)."""
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def on_done(_: Any) -> None:  # in a thread of the Dask client
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(done.set, trio_token=token)

    future.add_done_callback(on_done)
    return done


async def value_of(future: Any, into: list[outcome.Outcome[T]]) -> None:
    """Fetch the value of a Dask ``future`` that is done (or what it raised) into ``into``."""
    into.append(
        await trio.to_thread.run_sync(outcome.capture, future.result, abandon_on_cancel=True)
    )


async def cancel(future: Any, timeout: float) -> None:
    """Cancel a task (at most ``timeout``: an unreachable scheduler has nothing to cancel)."""
    with trio.move_on_after(timeout):
        with contextlib.suppress(Exception):  # what Dask raises then varies
            await trio.to_thread.run_sync(future.cancel, abandon_on_cancel=True)


async def first(*waits: Callable[[], Awaitable[object]] | None) -> int:
    """Wait until the first of ``waits`` (those not None) returns; its index."""
    done: list[int] = []
    async with trio.open_nursery() as nursery:

        async def run(index: int, wait: Callable[[], Awaitable[object]]) -> None:
            await wait()
            done.append(index)
            nursery.cancel_scope.cancel()

        for index, wait in enumerate(waits):
            if wait is not None:
                nursery.start_soon(run, index, wait)
    return done[0]


def one_line(text: str) -> str:
    """``text`` on one line: Dask's errors may hold newlines, and the command's error is one
    line."""
    return " ".join(text.split())

"""Running an async test under trio, bounded as a whole (``trio_test``)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import trio

BOUND = 30.0
"""Seconds any one test may run before it fails (each takes far less)."""


def trio_test(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on the real clock, bounded by ``BOUND`` seconds."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        async def main() -> None:
            with trio.fail_after(BOUND):
                await fn(*args, **kwargs)

        trio.run(main)

    return run


async def read_to_end(stream: trio.abc.ReceiveStream, within: float = 5.0) -> bytes:
    """Everything ``stream`` receives until its end (a reset counts as one), failing the
    test after ``within`` seconds."""
    got = b""
    with trio.fail_after(within):
        try:
            while chunk := await stream.receive_some(65536):
                got += chunk
        except trio.BrokenResourceError:
            pass
    return got

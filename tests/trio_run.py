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

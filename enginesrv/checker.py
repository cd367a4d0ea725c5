"""Checking tokens off the event loop (``Checker``), for every door that takes them: a
ladder's logins and a server's ``auth``."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import threading
from collections.abc import Callable

import trio

from enginesrv.tokens import Grant, TokenFile

CHECK_QUEUE = 32
"""Checks waiting at most; one more is refused (``CheckerBusyError``: try again)."""


class CheckerBusyError(Exception):
    """``CHECK_QUEUE`` checks wait already."""


class Checker:
    """Checks tokens one at a time, in a thread of its own that runs at the lowest priority
    (nice 19): a check costs some milliseconds of a core (``enginesrv.tokens``), and a flood
    of them must take that time from nothing but idle cores, never from the searches, the
    games' engines or the event loop. At most ``CHECK_QUEUE`` checks wait or run."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.waiting = 0

    async def check(self, tokens: TokenFile, name: str, token: str) -> Grant | None:
        """What ``name``'s token grants when ``token`` is it (``TokenFile.grant``).

        Raises:
            CheckerBusyError: ``CHECK_QUEUE`` checks wait already.
            TokenFileError: the token file cannot be read.
        """
        if self.waiting >= CHECK_QUEUE:
            raise CheckerBusyError
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, "token-check", _lowest)
        # a check counts until it has run or left the queue: a wait given up (its connection
        # evicted, out of time) takes its check out of the queue, or, running, counts on
        self.waiting += 1
        done = trio.Event()
        trio_token = trio.lowlevel.current_trio_token()
        future = self._pool.submit(tokens.grant, name, token)
        future.add_done_callback(functools.partial(_tell, trio_token, self._ended, done))
        try:
            await done.wait()
        except trio.Cancelled:
            future.cancel()
            raise
        return future.result()

    def _ended(self, done: trio.Event) -> None:
        self.waiting -= 1
        done.set()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _tell(
    trio_token: trio.lowlevel.TrioToken,
    ended: Callable[[trio.Event], None],
    done: trio.Event,
    _: object,
) -> None:
    """Tell the loop a check has ended (one that ends after the server has stopped tells no
    one)."""
    with contextlib.suppress(trio.RunFinishedError):
        trio_token.run_sync_soon(ended, done)


def _lowest() -> None:
    """Run the calling thread at the lowest priority (nice 19), where the system allows."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)

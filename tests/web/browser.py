"""A server with its web front in a thread of the test process, and Debian's chromium driven
by Playwright, for the browser tests."""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio

from tests.web.webpeer import Web, running_web

CHROMIUM = os.environ.get("ENGINESRV_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def need_chromium() -> None:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no chromium at {CHROMIUM} (Debian's chromium package; .ci/run installs it)")


@dataclass
class ServerThread:
    """``running_web`` in a thread of its own (its own trio run) until ``stop``."""

    web: Web | None = None
    errors: list[BaseException] = field(default_factory=list)
    _stop: trio.Event | None = None
    _token: trio.lowlevel.TrioToken | None = None

    def stop(self) -> None:
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)


@contextmanager
def server_thread(**kwargs: Any) -> Iterator[ServerThread]:
    holder = ServerThread()
    ready: queue.Queue[bool] = queue.Queue()

    async def main() -> None:
        holder._stop = trio.Event()
        holder._token = trio.lowlevel.current_trio_token()
        async with running_web(**kwargs) as web:
            holder.web = web
            ready.put(True)
            await holder._stop.wait()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # reported to the test below
            holder.errors.append(exc)
            ready.put(False)

    thread = threading.Thread(target=run, name="web-server", daemon=True)
    thread.start()
    assert ready.get(timeout=30), f"the server did not start: {holder.errors}"
    try:
        yield holder
    finally:
        holder.stop()
        thread.join(timeout=30)
    assert not holder.errors, holder.errors

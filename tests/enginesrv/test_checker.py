"""The token checker (``enginesrv.checker.Checker``): one check at a time on its thread, at
most ``CHECK_QUEUE`` waiting or running, and a wait given up takes its check out of the
queue, as a flood of connections evicted or out of time would give theirs up."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import trio

from enginesrv.checker import CHECK_QUEUE, Checker, CheckerBusyError
from enginesrv.tokens import Grant, TokenFile
from tests.trio_run import trio_test

BOUND = 10.0


@trio_test
async def test_checks_given_up_leave_the_queue_and_the_cap_counts_what_is_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = TokenFile(tmp_path / "tokens")
    good = file.add("alice")
    real = file.grant
    gate = threading.Event()
    ran: list[str] = []

    def held(name: str, token: str) -> Grant | None:
        ran.append(token)
        assert gate.wait(BOUND)
        return real(name, token)

    monkeypatch.setattr(file, "grant", held)
    checker = Checker()
    try:
        async with trio.open_nursery() as nursery:
            for _ in range(CHECK_QUEUE):
                nursery.start_soon(checker.check, file, "alice", "W" * 43)
            await trio.sleep(0.1)
            assert checker.waiting == CHECK_QUEUE
            with pytest.raises(CheckerBusyError):
                await checker.check(file, "alice", good)
            nursery.cancel_scope.cancel()
        await trio.sleep(0)  # the queued checks' ends are told on the loop
        assert checker.waiting == 1, "only the check running on the thread still counts"
        gate.set()
        assert await checker.check(file, "alice", good) is not None
        assert checker.waiting == 0
        assert ran == ["W" * 43, good], "a check whose wait was given up ran all the same"
    finally:
        gate.set()
        checker.close()

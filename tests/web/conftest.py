"""The web tests' settings."""

from __future__ import annotations

import pytest

from enginesrv.web import run as web_run


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """hypercorn keeps the task of a closed WebSocket until its next ping is due (30 s), so a
    server that served one takes its whole grace to stop: the tests shorten it (a test of the
    shutdown itself sets it back)."""
    monkeypatch.setattr(web_run, "GRACE", 0.2)

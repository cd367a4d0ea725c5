"""What the cluster tests share: a loopback ``LocalCluster`` and a look into an event's store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest


def local_scheduler() -> Iterator[str]:
    """A ``LocalCluster`` of two worker processes with a thread each; its scheduler's address.
    Wrap it in a fixture (``pytest.fixture(scope="module")(local_scheduler)``)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def stored(out: Path) -> list[tuple[object, ...]]:
    """The event's stored games, by id: what two runs of one event must agree on."""
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return db.execute(
            "SELECT id, p1, p2, winner, reason, first_points, plies FROM games ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def journal_mode(path: Path) -> str:
    """The journal mode a new connection finds the store in (``delete`` when at rest)."""
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()

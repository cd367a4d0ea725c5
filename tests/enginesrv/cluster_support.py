"""What the cluster tests share: a loopback ``LocalCluster``, loopback ``dask scheduler`` and
``dask worker`` processes, and a look into an event's store."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

WAIT = 30.0
"""Seconds the Dask processes are given to start (far more than they need)."""


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


class DaskProcesses:
    """A ``dask scheduler`` and ``dask worker`` processes on loopback, as a cluster of
    machines runs them: each worker with its nanny (the ``dask worker`` process, whose child is
    the worker), each in a process group of its own, so that one SIGKILL to the group kills a
    worker and its nanny together (nothing starts that worker again). Use ``dask_processes``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.scheduler_file = folder / "scheduler.json"
        self.env = dict(os.environ, DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
        self.started: list[subprocess.Popen[bytes]] = []
        self.address = ""

    def spawn(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dask", *args], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env={**self.env, **(env or {})}, start_new_session=True,
        )  # fmt: skip
        self.started.append(proc)
        return proc

    def start_scheduler(self) -> str:
        """Start the scheduler; its address."""
        self.spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(self.scheduler_file))  # fmt: skip
        deadline = time.monotonic() + WAIT
        while not self.scheduler_file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.05)
        while not self.address:  # the file may be seen before it is written in full
            with contextlib.suppress(ValueError):
                self.address = json.loads(self.scheduler_file.read_text())["address"]
            assert time.monotonic() < deadline, "the scheduler did not start"
        return self.address

    def worker(self, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start a worker of one thread, with its nanny (the process returned)."""
        return self.spawn("worker", "--scheduler-file", str(self.scheduler_file), "--host",
                          "127.0.0.1", "--nthreads", "1", "--no-dashboard", env=env)  # fmt: skip

    def wait_for_workers(self, count: int) -> dict[str, int]:
        """Wait until the cluster has ``count`` workers; each one's address and process id."""
        distributed = pytest.importorskip("distributed")
        with distributed.Client(self.address, timeout=WAIT, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=WAIT)
            return dict(client.run(os.getpid))

    def kill_with_nanny(self, worker_pid: int) -> None:
        """SIGKILL the worker of process ``worker_pid`` and its nanny, together."""
        stat = Path(f"/proc/{worker_pid}/stat").read_text()
        nanny = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: its parent
        proc = next(p for p in self.started if p.pid == nanny)
        os.killpg(proc.pid, signal.SIGKILL)

    def close(self) -> None:
        for proc in self.started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=WAIT)


@contextlib.contextmanager
def dask_processes(folder: Path) -> Iterator[DaskProcesses]:
    """A ``DaskProcesses`` whose scheduler has started; every process it started is killed at
    the end."""
    pytest.importorskip("distributed")
    dask = DaskProcesses(folder)
    try:
        dask.start_scheduler()
        yield dask
    finally:
        dask.close()

"""Shutdown with a worker that ignores ``stop``: the best move still goes out, the server
stops, the worker is killed, and a second signal exits at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import trio

from enginesrv.search.pool import WorkerPool
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server, open_listeners, serve
from enginesrv.serve.settings import SessionConfig
from tests.enginesrv.peer import TextPeer
from tests.enginesrv.test_pool import children
from tests.processes import ended, line_within, stopping
from tests.trio_run import trio_test

STUBBORN = textwrap.dedent(
    """
    import os, sys, msgpack
    pids = os.environ.get("STUBBORN_PIDS")
    if pids:
        with open(os.path.join(pids, str(os.getpid())), "w"):
            pass
    sys.stdout.buffer.write(msgpack.packb([2, "ready", []]))
    sys.stdout.buffer.flush()
    sys.stdin.buffer.read()  # takes searches and stops alike, and never answers
    """
)
"""A search worker that never answers a search, not even after ``stop``."""


@trio_test
async def test_shutdown_kills_a_worker_that_ignores_stop_and_still_answers_go() -> None:
    before = children()
    config = SessionConfig(default_game="yoxii", default_bot="random", grace=0.2)
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.2, command=(sys.executable, "-c", STUBBORN))
        await pool.start()
        server = Server(config, pool, Limits())
        listeners = await open_listeners("127.0.0.1", 0)
        ports: list[int] = []
        await nursery.start(
            lambda task_status: serve(
                server, listeners, on_ready=lambda h, p: ports.append(p), task_status=task_status
            )
        )
        peer = await TextPeer.connect(ports[0])
        await peer.send("go infinite", "isready")
        assert await peer.line() == "readyok"
        server.stop.set()
        with trio.fail_after(5):  # the grace is 0.2 s: far less than this
            lines = await peer.until("error 304")
        best = [line for line in lines if line.startswith("bestmove ")]
        assert len(best) == 1
        assert best[0] != "bestmove none"  # a legal move, although the worker said nothing
        assert await peer.closed()
        await peer.aclose()
        with trio.fail_after(5):
            await pool.aclose()
    assert children() - before == set()


def _serve_script(grace: float) -> str:
    return textwrap.dedent(
        f"""
        import functools, sys, trio
        from enginesrv import logs
        from enginesrv.serve.app import run_server
        from enginesrv.serve.connection import Limits
        from enginesrv.serve.settings import SessionConfig
        config = SessionConfig(default_game="yoxii", default_bot="random", grace={grace})
        logs.configure(json=True)  # on stderr, as `enginesrv serve --log-json` has them
        trio.run(functools.partial(
            run_server, host="127.0.0.1", port=0, workers=1, limits=Limits(), config=config,
            worker_command=(sys.executable, "-c", {STUBBORN!r}),
        ))
        """
    )


def _start(
    grace: float, pids: Path, stderr: int = subprocess.DEVNULL
) -> tuple[subprocess.Popen[str], socket.socket]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _serve_script(grace)],
        stdout=subprocess.PIPE, stderr=stderr, text=True,
        env={**os.environ, "STUBBORN_PIDS": str(pids)},
    )  # fmt: skip
    try:
        ready = line_within(proc)
        assert ready.startswith("listening 127.0.0.1:"), ready
    except BaseException:
        with stopping(proc):  # the server is ended, and the failure goes on
            raise
    sock = socket.create_connection(("127.0.0.1", int(ready.rsplit(":", 1)[1])), timeout=20)
    sock.sendall(b"go infinite\nisready\n")
    buffer = b""
    while b"readyok" not in buffer:
        data = sock.recv(4096)
        assert data, buffer
        buffer += data
    return proc, sock


def _wait_for_log(proc: subprocess.Popen[str], event: str, **fields: object) -> None:
    """Read the server's JSON log lines (its stderr, a pipe) up to the first of ``event`` with
    ``fields``, for 20 s at most."""
    deadline = time.monotonic() + 20
    while True:
        try:
            line = line_within(proc, max(0.0, deadline - time.monotonic()), pipe="stderr")
        except AssertionError as exc:
            raise AssertionError(f"no {event} {fields} logged: {exc}") from None
        entry = json.loads(line)
        if entry["event"] == event and fields.items() <= entry.items():
            return


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(_gone(pid) for pid in pids):
            return True
        time.sleep(0.02)
    return False


def test_sigterm_stops_the_server_although_its_worker_ignores_stop(tmp_path: Path) -> None:
    proc, sock = _start(0.2, tmp_path)
    try:
        workers = [int(p.name) for p in tmp_path.iterdir()]
        assert len(workers) == 1
        proc.send_signal(signal.SIGTERM)
        buffer = b""
        while b"error 304" not in buffer:
            data = sock.recv(4096)
            assert data, buffer
            buffer += data
        assert buffer.count(b"bestmove ") == 1
        assert b"bestmove none" not in buffer
        assert proc.wait(timeout=20) == 0
        assert _wait_gone(workers)
    finally:
        sock.close()
        ended(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_second_signal_exits_at_once_and_kills_the_workers(tmp_path: Path) -> None:
    # a grace of a minute: the first signal's shutdown would wait that long for the worker
    proc, sock = _start(60.0, tmp_path, stderr=subprocess.PIPE)
    try:
        workers = [int(p.name) for p in tmp_path.iterdir()]
        proc.send_signal(signal.SIGTERM)
        # taken: a second signal sent before it was would be merged into it
        _wait_for_log(proc, "signal", signal="SIGTERM", count=1)
        assert proc.poll() is None  # still waiting for the stubborn worker
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 130
        assert _wait_gone(workers)
    finally:
        sock.close()
        ended(proc)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()

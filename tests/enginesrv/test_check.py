"""``enginesrv check`` passes against our own stdio engine and our own server (both framings),
and fails, check by check, against a peer that is not an engine."""

from __future__ import annotations

import socket
import subprocess
import sys


def test_check_passes_against_the_stdio_engine() -> None:
    # stderr merged into stdout, as on a terminal: the engine's log lines stay off the report.
    # The handshake may take its time: a fresh install compiles its modules on this first
    # start, beside the other tests' processes (what is checked is what the engine answers)
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "check", "--game", "yoxii",
         "--handshake-timeout", "30", "--",
         sys.executable, "-m", "enginesrv.cli", "engine", "--game", "yoxii", "--bot", "random"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    report = proc.stdout.splitlines()
    assert all(line.startswith("PASS text: ") for line in report[:-1]), proc.stdout
    assert report[-1] == "enginesrv check: all 15 checks pass"


def test_check_passes_against_the_server() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--game", "yinsh", "--bot", "random"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        port = server.stdout.readline().rsplit(":", 1)[1].strip()
        proc = subprocess.run(
            [sys.executable, "-m", "enginesrv.cli", "check", "--connect", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "PASS msgpack: stop of no search is error 205" in proc.stdout
        assert proc.stdout.splitlines()[-1] == "enginesrv check: all 20 checks pass"
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0
        if server.stdout is not None:
            server.stdout.close()


def test_check_fails_against_something_that_is_not_an_engine() -> None:
    silent = [sys.executable, "-c", "print('hello')"]  # says hello and leaves
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "check", "--", *silent],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "FAIL text: handshake" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("enginesrv check: gave up: no handshake")


def test_check_needs_a_target() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "check"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--connect HOST:PORT or -- COMMAND" in proc.stderr


def test_an_unreachable_server_is_one_clear_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, and nobody listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "check", "--connect", f"127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"enginesrv check: error: cannot reach '127.0.0.1:{port}'")
    assert "Traceback" not in proc.stderr

"""``enginesrv check`` passes against our own stdio engine and our own server (both framings),
over TLS and with a token too, and fails, check by check, against a peer that is not an
engine."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.tokens import TokenFile
from tests.processes import ended, line_within
from tests.tls_files import certificate_files


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
        port = line_within(server).rsplit(":", 1)[1].strip()
        proc = subprocess.run(
            [sys.executable, "-m", "enginesrv.cli", "check", "--connect", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "PASS msgpack: stop of no search is error 205" in proc.stdout
        assert proc.stdout.splitlines()[-1] == "enginesrv check: all 20 checks pass"
    finally:
        assert ended(server, 30) == 0  # SIGTERM: a clean stop
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


# -- a server with TLS and tokens --------------------------------------------------------------


def check(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "check", *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def private(path: Path, text: str) -> str:
    """``path`` written with ``text``, readable by its owner only; its name."""
    path.touch(mode=0o600)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_check_passes_against_a_server_with_tls_and_tokens(tmp_path: Path) -> None:
    """``--tls-ca`` and ``--token-file`` reach a ``serve --tokens --tls-cert --tls-key``:
    every check passes, and the token shows nowhere; without ``--token-file``, with the
    system's authorities only, or with a token the server does not know, the run stops at
    once on one line."""
    certificate_files(tmp_path)
    secret = TokenFile(tmp_path / "tokens").add("alice")
    token = private(tmp_path / "alice.token", f"alice:{secret}\n")
    wrong = private(tmp_path / "wrong.token", "alice:" + "W" * 43)
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--game", "yinsh", "--bot", "random", "--tokens", str(tmp_path / "tokens"),
         "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        where = f"127.0.0.1:{line_within(server).rsplit(':', 1)[1].strip()}"
        ca = str(tmp_path / "ca.pem")
        proc = check("--connect", where, "--tls-ca", ca, "--token-file", token)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.splitlines()[-1] == "enginesrv check: all 20 checks pass"
        assert secret not in proc.stdout + proc.stderr
        proc = check("--connect", where, "--tls-ca", ca)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr == (
            f"enginesrv check: error: {where}: the server requires a token: give --token-file "
            "FILE (NAME:TOKEN)\n"
        )
        proc = check("--connect", where, "--tls", "--token-file", token)  # not a public CA
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr.startswith(
            f"enginesrv check: error: cannot reach '{where}': TLS: certificate verify failed: "
        )
        proc = check("--connect", where, "--tls-ca", ca, "--token-file", wrong)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr == (
            f"enginesrv check: error: {where}: the server refused the token of --token-file: "
            "error 307 auth-refused the token is not accepted\n"
        )
    finally:
        assert ended(server, 30) == 0  # SIGTERM: a clean stop
        if server.stdout is not None:
            server.stdout.close()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--tls", "--", "enginesrv", "engine"], "--tls goes with --connect HOST:PORT"),
        (["--token-file", "t", "--", "x"], "--token-file goes with --connect HOST:PORT"),
        (["--connect", "127.0.0.1:1", "--tls-ca", "{tmp}/none"], "--tls-ca {tmp}/none: cannot"),
        (["--connect", "127.0.0.1:1", "--token-file", "{tmp}/none"], "no such file"),
        (["--connect", "127.0.0.1:1", "--token-file", "{tmp}/open"], "readable by every user"),
        (["--connect", "127.0.0.1:1", "--token-file", "{tmp}/two"], "is not NAME:TOKEN"),
    ],
)
def test_check_refuses_access_flags_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Status 2 and one line, which never quotes what a token file holds."""
    (tmp_path / "open").write_text("alice:sEcReT\n", encoding="utf-8")
    (tmp_path / "open").chmod(0o644)
    private(tmp_path / "two", "alice: sEcReT\n")
    try:
        code = main(["check", *(arg.replace("{tmp}", str(tmp_path)) for arg in argv)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert says.replace("{tmp}", str(tmp_path)) in err
    assert "sEcReT" not in err

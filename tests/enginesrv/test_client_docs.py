"""The client's documentation runs: the first program of docs/client.md, and
examples/client.py over stdio (both framings) and against a server, and with
examples/ugi_session.py against a server over TLS with a token."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from enginesrv.tokens import TokenFile
from tests.processes import ended, line_within
from tests.tls_files import certificate_files

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, check=False,
        cwd=ROOT,
    )  # fmt: skip


def test_the_first_program_of_the_client_docs_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "client.md").read_text(encoding="utf-8")
    program = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    script = tmp_path / "first.py"
    script.write_text(program, encoding="utf-8")
    proc = run([str(script)])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("enginesrv ['yinsh'")
    assert re.fullmatch(r"\d+ legal moves, for example \S+", lines[1])
    assert re.fullmatch(r"best \S+ score (cp|win|loss) -?\d+ depth \d+", lines[2]), lines[2]
    assert lines[3].startswith("after it: ")
    assert lines[4] == "refused: 201 illegal-move"


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_the_async_program_of_the_client_docs_runs(tmp_path: Path, loop: str) -> None:
    """The second program, on asyncio as written, and on trio with the last line the docs
    give for it."""
    text = (ROOT / "docs" / "client.md").read_text(encoding="utf-8")
    program = re.findall(r"```python\n(.*?)```", text, re.S)[1]
    assert "AsyncEngine" in program
    assert program.endswith("asyncio.run(main())\n")
    if loop == "trio":
        assert "`trio.run(main)`" in text
        program = program.replace("asyncio.run(main())", "import trio\n\ntrio.run(main)")
    script = tmp_path / "second.py"
    script.write_text(program, encoding="utf-8")
    proc = run([str(script)])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"timed: \S+ depth \d+", lines[0]), lines
    assert re.fullmatch(r"stopped: \S+ depth (\d+|None)", lines[1]), lines


def test_the_example_client_over_stdio_in_both_framings() -> None:
    for framing in ("text", "msgpack"):
        proc = run(["examples/client.py", "--framing", framing, "--movetime", "100"])
        assert proc.returncode == 0, proc.stderr
        assert "connected to enginesrv" in proc.stdout
        assert re.search(r"^bestmove \S+ \(score ", proc.stdout, re.M), proc.stdout
        assert re.search(r"^\d+ legal replies: ", proc.stdout, re.M), proc.stdout


def test_the_example_client_names_a_refused_move() -> None:
    proc = run(["examples/client.py", "--moves", "zz9"])
    assert proc.returncode == 1
    assert "the engine refused: error 201 illegal-move: zz9" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_example_client_against_a_server() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = line_within(server).rsplit(":", 1)[1].strip()
        for framing in ("text", "msgpack"):
            proc = run([
                "examples/client.py", "--connect", f"127.0.0.1:{port}", "--framing", framing,
                "--game", "yinsh", "--movetime", "100",
            ])  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert re.search(r"^bestmove \S+ ", proc.stdout, re.M), proc.stdout
    finally:
        assert ended(server, 30) == 0  # SIGTERM: a clean stop
        if server.stdout is not None:
            server.stdout.close()


def test_the_examples_reach_a_server_with_tls_and_a_token(tmp_path: Path) -> None:
    """examples/client.py and examples/ugi_session.py with --tls-ca and --token-file: the
    session is served, and the token is shown as ``auth ***``."""
    certificate_files(tmp_path)
    secret = TokenFile(tmp_path / "tokens").add("alice")
    (tmp_path / "alice.token").write_text(f"alice:{secret}\n", encoding="utf-8")
    (tmp_path / "session.txt").write_text("ugi\nisready\nquery turn\nquit\n", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--game", "yoxii", "--tokens", str(tmp_path / "tokens"),
         "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = line_within(server).rsplit(":", 1)[1].strip()
        access = ["--connect", f"127.0.0.1:{port}", "--tls-ca", str(tmp_path / "ca.pem"),
                  "--token-file", str(tmp_path / "alice.token")]  # fmt: skip
        proc = run(["examples/client.py", *access, "--movetime", "100"])
        assert proc.returncode == 0, proc.stderr
        assert re.search(r"^bestmove \S+ ", proc.stdout, re.M), proc.stdout
        proc = run(["examples/ugi_session.py", str(tmp_path / "session.txt"), *access])
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[:2] == ["> auth ***", "> ugi"]
        assert lines[-3:] == ["> query turn", "< response p1", "> quit"]
        assert secret not in proc.stdout + proc.stderr
    finally:
        assert ended(server, 30) == 0  # SIGTERM: a clean stop
        if server.stdout is not None:
            server.stdout.close()

"""What a client can make the server log: its lines cut, each connection's lines rationed."""

from __future__ import annotations

import errno
import io
import socket
import subprocess
import sys
from typing import Any

import pytest
import structlog

from enginesrv.logs import BURST, LOG_VALUE, ConnectionRations, configure, cut_values, tell
from tests.processes import ended, line_within


def test_a_long_value_is_cut_and_its_length_said() -> None:
    event: dict[str, Any] = {"event": "command_error", "error": "x" * 60_000, "code": 101}
    cut_values(None, "info", event)
    assert event["error"] == "x" * LOG_VALUE + "... (60,000 characters)"
    assert event["code"] == 101
    short = {"event": "e", "error": "y" * LOG_VALUE}
    assert cut_values(None, "info", dict(short)) == short


def test_a_connections_lines_are_rationed_and_the_held_back_counted() -> None:
    now = [0.0]
    rations = ConnectionRations(burst=3, per_second=2.0, clock=lambda: now[0])

    def log(conn: str, name: str = "command_error") -> dict[str, Any] | None:
        try:
            return dict(rations(None, "info", {"event": name, "conn": conn}))
        except structlog.DropEvent:
            return None

    assert log("c1", "connection_open") is not None  # always, and free
    assert [log("c1") is not None for _ in range(5)] == [True, True, True, False, False]
    assert log("c2") is not None  # another connection has its own ration
    now[0] = 0.5  # one line earned back
    assert log("c1") == {"event": "command_error", "conn": "c1", "held_back": 2}
    assert log("c1") is None
    assert log("c1", "connection_closed") == {
        "event": "connection_closed", "conn": "c1", "held_back": 1,
    }  # fmt: skip
    assert "c1" not in rations.buckets  # its end forgets it
    assert log("other-kind-of-line-without-conn") is not None


def test_a_client_that_sends_huge_bad_lines_writes_a_bounded_log(tmp_path: Any) -> None:
    """A real server: 200 bad commands of 60 KB each cost a few KB of log, not 12 MB."""
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "enginesrv.cli", "serve", "--host", "127.0.0.1", "--port", "0",
             "--workers", "1"],
            stdout=subprocess.PIPE, stderr=err,
        )  # fmt: skip
        try:
            ready = line_within(server)
            assert ready.startswith("listening 127.0.0.1:"), ready
            port = int(ready.split()[1].rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
                bad = b"".join(b"play " + b"x" * 60_000 + b"\n" for _ in range(200))
                client.sendall(b"uginewgame yoxii\n" + bad + b"quit\n")
                received = io.BytesIO()
                while chunk := client.recv(65536):
                    received.write(chunk)
            assert received.getvalue().count(b"invalidmove ") == 200
        finally:
            ended(server, 20)
            if server.stdout is not None:
                server.stdout.close()
    text = log.read_text()
    assert text.count("command_error") == BURST
    assert max(len(line) for line in text.splitlines()) < 2 * LOG_VALUE + 200
    assert len(text) < 40_000


def test_refusals_and_connections_that_never_spoke_share_one_ration() -> None:
    """Thousands of connections a second that are refused, or close before a whole command,
    write a bounded log together; the lines of connections that spoke keep their own."""
    now = [0.0]
    rations = ConnectionRations(burst=3, per_second=2.0, clock=lambda: now[0])

    def log(event: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return dict(rations(None, "info", event))
        except structlog.DropEvent:
            return None

    refused = {"event": "connection_refused", "peer": "10.0.0.1", "reason": "a cap"}
    silent = [{"event": "connection_closed", "conn": f"c{i}", "reason": "nothing received"}
              for i in range(3)]  # fmt: skip
    assert [log(refused) is not None for _ in range(3)] == [True, True, True]
    assert [log(event) for event in silent] == [None, None, None]
    assert log({"event": "connection_open", "conn": "c9"}) is not None  # one that speaks
    assert log({"event": "connection_closed", "conn": "c9"}) is not None
    now[0] = 0.5
    assert log(refused) == {**refused, "held_back": 3}
    assert log({"event": "something_else"}) is not None  # no one connection's: not rationed
    assert len(rations.buckets) == 0


def test_a_flood_of_wrong_tokens_shares_the_one_ration_of_refusals() -> None:
    """Each connection of a flood of wrong tokens logs its refusal and its end (its start is
    logged only once a token is accepted): together, within the refusals' one ration."""
    now = [0.0]
    rations = ConnectionRations(burst=3, per_second=2.0, clock=lambda: now[0])

    def log(event: dict[str, Any]) -> bool:
        try:
            rations(None, "info", event)
        except structlog.DropEvent:
            return False
        return True

    written = 0
    for i in range(100):
        written += log({"event": "auth_refused", "conn": f"c{i}", "reason": "not accepted"})
        written += log({"event": "connection_closed", "conn": f"c{i}", "reason": "auth refused"})
        written += log({"event": "tls_refused", "peer": "10.0.0.1"})
    assert written == 3
    assert len(rations.buckets) == 0


class _HungUp(io.StringIO):
    """A standard error whose terminal has hung up: every write and flush fails."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")


def test_a_log_that_cannot_be_written_loses_its_lines_not_the_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hung-up terminal, a full disk or a closed pipe as standard error: logging goes on
    without raising (the lines are lost, there being nowhere to say so)."""
    saved = structlog.get_config()
    configure()
    try:
        log = structlog.get_logger("test")
        monkeypatch.setattr(sys, "stderr", _HungUp())
        log.warning("tls_reloaded")
        closed = io.StringIO()
        closed.close()
        monkeypatch.setattr(sys, "stderr", closed)
        log.warning("tls_reloaded")
    finally:
        structlog.configure(**saved)


def test_a_program_without_a_standard_error_still_runs() -> None:
    """``enginesrv version 2>&-``: no standard error at all loses what would be written on
    it, and nothing else."""
    ran = subprocess.run(
        ["sh", "-c", 'exec "$0" -m enginesrv.cli version 2>&-', sys.executable],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
        timeout=60,
    )
    assert ran.returncode == 0
    assert ran.stdout.startswith("enginesrv ")


def test_tell_writes_and_loses_what_it_cannot_write(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = io.StringIO()
    tell("game 1 yoxii: a - b: 1-0\n", shown)
    assert shown.getvalue() == "game 1 yoxii: a - b: 1-0\n"
    tell("lost\n", _HungUp())
    monkeypatch.setattr(sys, "stderr", None)
    tell("lost\n")

"""``enginesrv token add|set|revoke|list`` and ``enginesrv serve --tokens --tls-cert --tls-key``
as a user types them: what they print, what they refuse (status 2, one line, no traceback),
and a real server that a client reaches over TLS with its token."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.client import Engine, EngineError
from enginesrv.tokens import Quotas, TokenFile
from tests.processes import line_within, stopping
from tests.tls_files import certificate_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def sigterm_kept() -> Iterator[None]:
    """``serve`` makes SIGTERM exit at once until it watches its signals: the handler this
    process had is put back after each test."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line of a refused command (status 2, nothing on stdout, no traceback)."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.removesuffix("\n")


def test_add_prints_the_token_once_and_keeps_its_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "tokens"
    code, out, err = run(capsys, "token", "add", "alice", "--file", str(file), "--hour", "600")
    assert code == 0
    name, secret = out.strip().split(":")
    assert name == "alice"
    assert err == "token: account alice added; its token is shown only now\n"
    assert secret not in file.read_text()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert TokenFile(file).check("alice", secret)
    code, out, _ = run(capsys, "token", "list", "--file", str(file))
    assert code == 0
    assert out.startswith("alice  ")
    assert out.endswith("  hour=600\n")
    code, out, _ = run(capsys, "token", "list", "--file", str(file), "--json")
    listed = json.loads(out)
    assert [(a["name"], a["searches"], a["hour"]) for a in listed] == [("alice", None, 600)]
    code, _, err = run(capsys, "token", "revoke", "alice", "--file", str(file))
    assert (code, err) == (0, "token: account alice revoked\n")
    assert not TokenFile(file).check("alice", secret)


def test_set_changes_the_quotas_given_and_keeps_the_token_and_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = str(tmp_path / "tokens")
    secret = run(capsys, "token", "add", "alice", "--file", file, "--hour", "600")[1]
    run(capsys, "token", "add", "bob", "--file", file, "--searches", "3")
    code, out, err = run(capsys, "token", "set", "alice", "--searches", "2", "--file", file)
    assert (code, out, err) == (0, "", "token: account alice now has searches=2 hour=600\n")
    code, _, err = run(capsys, "token", "set", "alice", "--hour", "none", "--file", file)
    assert (code, err) == (0, "token: account alice now has searches=2\n")
    code, _, err = run(capsys, "token", "set", "alice", "--searches", "none", "--file", file)
    assert (code, err) == (0, "token: account alice now has no quotas\n")
    listed = json.loads(run(capsys, "token", "list", "--file", file, "--json")[1])
    assert [(a["name"], a["searches"], a["hour"]) for a in listed] == [
        ("alice", None, None),
        ("bob", 3, None),
    ]
    assert TokenFile(Path(file)).check("alice", secret.strip().split(":")[1])


def test_set_changes_made_at_once_are_all_kept(tmp_path: Path) -> None:
    """Each change reads and writes the file under its lock: none is lost to another."""
    tokens = TokenFile(tmp_path / "tokens")
    for name in ("alice", "bob"):
        tokens.add(name)

    def raise_hour(name: str) -> None:
        for _ in range(20):
            tokens.requota(name, lambda q: Quotas(q.searches, (q.hour or 0) + 1))

    threads = [threading.Thread(target=raise_hour, args=(n,)) for n in ("alice", "bob") * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert [(a.name, a.quotas.hour) for a in tokens.accounts()] == [("alice", 40), ("bob", 40)]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("token", "add", "9lives"), "name '9lives': a letter, then up to 31"),
        (("token", "revoke", "bob"), "no such token file"),
        (("token", "list"), "no such token file"),
        (("token", "add", "alice", "--searches", "0"), "--searches: "),
        (("token", "set", "alice", "--hour", "60"), "no such token file"),
        (
            ("token", "add", "alice", "--searches", "1000000000"),
            "--searches: '1000000000': a quota is a whole number from 1 to 999,999,999",
        ),
    ],
)
def test_token_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    assert says in refusal(capsys, *argv, "--file", str(tmp_path / "tokens"))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("set", "bob", "--hour", "60"), "name 'bob': no such account"),
        (("set", "alice"), "token set: give --searches N or --hour S (none removes one)"),
        (
            ("set", "alice", "--hour", "0"),
            "--hour: '0': a quota is a whole number from 1 to 999,999,999 (or none)",
        ),
        (("set", "alice", "--searches", "many"), "--searches: 'many': a quota is a whole"),
        (("set", "alice", "--searches", "+5"), "--searches: '+5': a quota is a whole"),
        (("set", "alice", "--searches", "\u0665"), "--searches: '\u0665': a quota is a whole"),
        (("set", "alice", "--hour", "9" * 5000), "--hour: '" + "9" * 20 + "...': a quota"),
        (
            ("set", "alice", "--hour", "1000000000"),
            "--hour: '1000000000': a quota is a whole number from 1 to 999,999,999 (or none)",
        ),
    ],
)
def test_set_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    file = tmp_path / "tokens"
    TokenFile(file).add("alice", Quotas(hour=600))
    assert says in refusal(capsys, "token", *argv, "--file", str(file))
    assert [a.quotas for a in TokenFile(file).accounts()] == [Quotas(hour=600)]


def test_the_largest_quota_is_written_and_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What ``token`` writes, its reader reads (a quota it could not would leave the file
    unreadable, and every login refused)."""
    file = str(tmp_path / "tokens")
    run(capsys, "token", "add", "alice", "--file", file, "--searches", "999999999")
    code, _, err = run(capsys, "token", "set", "alice", "--hour", "999999999", "--file", file)
    assert (code, err) == (0, "token: account alice now has searches=999999999 hour=999999999\n")
    assert [a.quotas for a in TokenFile(Path(file)).accounts()] == [Quotas(999999999, 999999999)]


def test_a_link_planted_beside_the_file_is_never_written_through(tmp_path: Path) -> None:
    """The file is written to a new file of a random name, then renamed: a link put where a
    writer could be expected to write is left alone, and so is what it points to."""
    target = tmp_path / "elsewhere"
    target.write_text("kept\n")
    tokens = TokenFile(tmp_path / "tokens")
    for pid in range(os.getpid() - 2, os.getpid() + 3):
        (tmp_path / f".tokens.{pid}.tmp").symlink_to(target)
    tokens.add("alice")
    tokens.requota("alice", lambda q: Quotas(hour=60))
    tokens.revoke("alice")
    assert target.read_text() == "kept\n"
    assert tokens.accounts() == []
    assert sorted(p.name for p in tmp_path.iterdir() if not p.is_symlink()) == [
        ".tokens.lock",
        "elsewhere",
        "tokens",
    ]


def test_a_write_cut_off_by_ctrl_c_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = TokenFile(tmp_path / "tokens")
    tokens.add("alice")

    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tokens.add("bob")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tokens.lock", "tokens"]
    assert [a.name for a in tokens.accounts()] == ["alice"]


def test_serve_refuses_a_missing_token_file_and_half_a_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing"
    line = refusal(capsys, "serve", "--port", "0", "--tokens", str(missing))
    assert line == (
        f"enginesrv serve: error: --tokens {missing}: no such file "
        "(make it: enginesrv token add NAME --file FILE)"
    )
    line = refusal(capsys, "serve", "--port", "0", "--tls-cert", str(missing))
    assert line == "enginesrv serve: error: --tls-cert and --tls-key go together"
    line = refusal(
        capsys, "serve", "--port", "0", "--tls-cert", str(missing), "--tls-key", str(missing)
    )
    assert line == f"enginesrv serve: error: --tls-cert {missing}: No such file or directory"
    damaged = tmp_path / "damaged"
    damaged.write_text("alice not-a-digest 2026\n")
    line = refusal(capsys, "serve", "--port", "0", "--tokens", str(damaged))
    assert line.startswith(f"enginesrv serve: error: --tokens: {damaged}, line 1: not NAME scrypt")


def test_a_real_server_with_tokens_and_tls_serves_a_client_that_has_both(tmp_path: Path) -> None:
    """``enginesrv serve --tokens --tls-cert --tls-key --web 0``: its web page is https, and
    the client library connects verified, with its token; a wrong token is refused."""
    certificate_files(tmp_path)
    token = "alice:" + TokenFile(tmp_path / "tokens").add("alice")
    command = [
        sys.executable,
        "-m",
        "enginesrv.cli",
        "serve",
        "--port",
        "0",
        "--web",
        "0",
        "--workers",
        "1",
        "--game",
        "yoxii",
        "--tokens",
        str(tmp_path / "tokens"),
        "--tls-cert",
        str(tmp_path / "cert.pem"),
        "--tls-key",
        str(tmp_path / "key.pem"),
    ]
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        listening = line_within(server)
        assert listening.startswith("listening 127.0.0.1:"), listening
        assert line_within(server).startswith("web https://127.0.0.1:")
        port = int(listening.rsplit(":", 1)[1])
        ca = str(tmp_path / "ca.pem")
        with Engine.connect("127.0.0.1", port, cafile=ca, token=token) as engine:
            assert engine.info.auth == "token"
            assert "c5" in engine.legal_moves()
        with pytest.raises(EngineError) as refused:
            Engine.connect("127.0.0.1", port, cafile=ca, token="alice:" + "W" * 43)
        assert refused.value.code == 307
    finally:
        server.send_signal(signal.SIGTERM)
        with stopping(server):  # ended and its pipes closed, should it outlast the timeout
            _, err = server.communicate(timeout=15)
    assert server.returncode == 0, err
    assert token.split(":")[1] not in err


def test_the_files_comments_and_blank_lines_stay_where_they_were(tmp_path: Path) -> None:
    """An operator's notes in the file (``#`` lines, blank lines) are kept by every change,
    and each account keeps its line."""
    file = tmp_path / "tokens"
    tokens = TokenFile(file)
    tokens.add("alice")
    tokens.add("bob")
    alice, bob = file.read_text().splitlines()
    file.write_text(f"# clients of the club\n{alice}\n\n# bob: until March, é\n{bob}\n")
    tokens.add("carol")
    tokens.requota("bob", lambda q: Quotas(hour=60))
    tokens.revoke("alice")
    lines = file.read_text().splitlines()
    assert lines[:3] == ["# clients of the club", "", "# bob: until March, é"]
    assert lines[3] == bob + " hour=60"
    assert lines[4].startswith("carol ")
    assert len(lines) == 5
    assert [a.name for a in tokens.accounts()] == ["bob", "carol"]

"""A server with TLS reads its certificate again on SIGHUP (``enginesrv.serve.certificates``): a
renewed certificate is served to new connections on both ports without a restart, open
connections go on, and files that cannot be loaded change nothing, whatever they are (a pipe,
an endless or huge file, a key with a passphrase)."""

from __future__ import annotations

import math
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing
import trustme
from cryptography.hazmat.primitives import serialization

from enginesrv.client import Engine
from enginesrv.serve.certificates import (
    MAX_PEM,
    RELOAD_LIMIT,
    CertificateError,
    reload,
    server_context,
)
from enginesrv.serve.tls import TlsDoor
from tests.processes import ended, line_within
from tests.tls_files import certificate_files

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 20.0
"""Seconds a started server is given to serve the renewed certificate (it reads two small
files on a thread: this bounds the wait, it does not measure it)."""


@pytest.fixture(autouse=True)
def sighup_kept() -> Iterator[None]:
    """trio's signal receiver puts back the handler it found; this checks nothing is left."""
    before = signal.getsignal(signal.SIGHUP)
    yield
    assert signal.getsignal(signal.SIGHUP) == before


def renew(folder: Path) -> trustme.CA:
    """New ``cert.pem`` and ``key.pem`` in ``folder`` (each renamed into place, as a renewal
    tool writes them), from a new authority: its ``ca.pem`` is written beside them as
    ``ca2.pem``."""
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    for name, pem in (("key.pem", issued.private_key_pem), ("cert.pem", issued.cert_chain_pems[0])):
        pem.write_to_path(str(folder / f"{name}.new"))
        (folder / f"{name}.new").replace(folder / name)
    authority.cert_pem.write_to_path(str(folder / "ca2.pem"))
    return authority


def verified_by(ca: Path, port: int) -> bool:
    """Whether the server at ``port`` shows a certificate that ``ca`` signed."""
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        try:
            with context.wrap_socket(raw, server_hostname="127.0.0.1"):
                return True
        except ssl.SSLCertVerificationError:
            return False


def test_reload_replaces_the_context_and_a_failed_one_keeps_it(tmp_path: Path) -> None:
    certificate_files(tmp_path)
    first = server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    door = TlsDoor(first, 1.0)

    def broken() -> ssl.SSLContext:
        (tmp_path / "key.pem").write_text("not a key\n")
        return server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))

    async def main() -> None:
        assert not await reload(broken, door.use, trio.CapacityLimiter(1))
        assert door.context is first
        renew(tmp_path)
        load = lambda: server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))  # noqa: E731
        assert await reload(load, door.use, trio.CapacityLimiter(1))
        assert door.context is not first

    trio.run(main)


def test_a_reload_that_hangs_is_given_up_and_the_next_waits_for_its_thread(
    tmp_path: Path,
) -> None:
    """Files that never finish reading (a stuck disk) do not hold a reload for ever: past
    ``RELOAD_LIMIT`` it is given up and the context stays; while its thread still reads, the
    next reload starts none of its own (threads do not pile up), and once it has ended they
    do again."""
    certificate_files(tmp_path)
    first = server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    door = TlsDoor(first, 1.0)
    release = threading.Event()
    calls: list[str] = []

    def stuck() -> ssl.SSLContext:
        calls.append("stuck")
        release.wait(30)
        return first

    def good() -> ssl.SSLContext:
        calls.append("good")
        return server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))

    clock = trio.testing.MockClock(autojump_threshold=0)

    async def main() -> None:
        reading = trio.CapacityLimiter(1)
        began = trio.current_time()
        assert not await reload(stuck, door.use, reading)
        assert trio.current_time() - began == pytest.approx(RELOAD_LIMIT)
        assert door.context is first
        while not calls:  # its thread may start after it was given up
            await trio.sleep(0.01)
        assert not await reload(good, door.use, reading)
        assert calls == ["stuck"]
        release.set()
        while reading.borrowed_tokens:
            await trio.sleep(0.01)
        # the clock stands still from here: the good reload's thread takes what time it takes
        clock.autojump_threshold = math.inf
        assert await reload(good, door.use, reading)
        assert calls == ["stuck", "good"]
        assert door.context is not first

    try:
        trio.run(main, clock=clock)
    finally:
        release.set()


@pytest.mark.parametrize("kind", ["pipe", "huge", "directory", "device"])
def test_a_certificate_that_is_not_a_small_regular_file_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    """A pipe (that no one writes, or that never ends), a file past ``MAX_PEM`` bytes, a
    directory or a device is refused before it is read, naming it."""
    certificate_files(tmp_path)
    cert = tmp_path / "cert.pem"
    cert.unlink()
    if kind == "pipe":
        os.mkfifo(cert)
    elif kind == "huge":
        cert.write_bytes(b"-" * (MAX_PEM + 1))
    elif kind == "directory":
        cert.mkdir()
    else:
        cert.symlink_to("/dev/zero")
    with pytest.raises(CertificateError) as refused:
        server_context(str(cert), str(tmp_path / "key.pem"), ask=False)
    assert str(refused.value).startswith(f"--tls-cert {cert}: ")


def test_at_start_the_files_may_be_pipes_read_once_and_loaded_as_read(tmp_path: Path) -> None:
    """``serve --tls-cert <(...)``: at start a pipe is read (once: a pipe cannot be read
    twice), and what was read is what is loaded, from memory, not the path opened again."""
    certificate_files(tmp_path)
    pem = (tmp_path / "cert.pem").read_bytes()
    pipe = tmp_path / "cert-pipe"
    os.mkfifo(pipe)

    def feed() -> None:
        with pipe.open("wb") as writer:
            writer.write(pem)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    made: list[ssl.SSLContext] = []
    loader = threading.Thread(
        target=lambda: made.append(server_context(str(pipe), str(tmp_path / "key.pem"))),
        daemon=True,
    )
    loader.start()
    loader.join(timeout=10)
    if loader.is_alive():  # it opened the pipe again: let it go before failing
        with pipe.open("wb"):
            pass
    assert len(made) == 1


def test_a_reload_refuses_a_key_with_a_passphrase_without_asking(tmp_path: Path) -> None:
    """A reload cannot ask for a passphrase (nobody is at the terminal, and OpenSSL's
    question would hold the process's signals): such a key is refused at once."""
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    key = serialization.load_pem_private_key(issued.private_key_pem.bytes(), None)
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"a passphrase"),
        )
    )
    issued.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    with pytest.raises(CertificateError) as refused:
        server_context(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"), ask=False)
    assert str(refused.value) == f"--tls-key {tmp_path / 'key.pem'}: needs a passphrase"


def _until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_sighup_serves_a_renewed_certificate_on_both_ports(tmp_path: Path) -> None:
    """``enginesrv serve --tls-cert --tls-key --web 0``, its files renewed and SIGHUP sent:
    new connections on both ports get the new certificate; a connection opened before goes
    on; a SIGHUP with a broken key file is logged and changes nothing."""
    certificate_files(tmp_path)
    command = [
        sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--web", "0",
        "--workers", "1", "--game", "yoxii",
        "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"),
    ]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    logged: list[str] = []
    assert server.stderr is not None
    reader = threading.Thread(target=lambda: logged.extend(server.stderr or ()), daemon=True)
    reader.start()
    try:
        listening = line_within(server)
        assert listening.startswith("listening 127.0.0.1:"), listening
        web = line_within(server)
        assert web.startswith("web https://127.0.0.1:"), web
        port = int(listening.rsplit(":", 1)[1])
        web_port = int(web.strip().rstrip("/").rsplit(":", 1)[1])
        with Engine.connect("127.0.0.1", port, cafile=str(tmp_path / "ca.pem")) as before:
            renew(tmp_path)
            server.send_signal(signal.SIGHUP)
            assert _until(lambda: any("tls_reloaded" in line for line in logged))
            assert verified_by(tmp_path / "ca2.pem", port)
            assert verified_by(tmp_path / "ca2.pem", web_port)
            assert not verified_by(tmp_path / "ca.pem", port)
            assert "c5" in before.legal_moves()  # the connection opened before goes on
        (tmp_path / "key.pem").write_text("not a key\n")
        server.send_signal(signal.SIGHUP)
        assert _until(lambda: any("tls_reload_failed" in line for line in logged))
        assert verified_by(tmp_path / "ca2.pem", port)
        assert verified_by(tmp_path / "ca2.pem", web_port)
    finally:
        ended(server, 15)  # SIGTERM: a clean stop, whose status is checked below
        reader.join(timeout=5)
        for pipe in (server.stdout, server.stderr):
            if pipe is not None:
                pipe.close()
    err = "".join(logged)
    assert server.returncode == 0, err
    assert "Traceback" not in err
    assert (err.count("tls_reloaded"), err.count("tls_reload_failed")) == (1, 1), err


def test_hangups_through_a_stop_do_not_end_the_server_with_a_signal(tmp_path: Path) -> None:
    """SIGHUPs that keep coming while a TLS server stops (after its watcher has gone) are
    ignored: it exits 0, as a stop should, not killed by SIGHUP."""
    certificate_files(tmp_path)
    command = [
        sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
        "--game", "yoxii",
        "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"),
    ]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert line_within(server).startswith("listening 127.0.0.1:")
        server.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + DEADLINE
        while server.poll() is None and time.monotonic() < deadline:
            server.send_signal(signal.SIGHUP)
            time.sleep(0.002)
        assert server.wait(timeout=15) == 0
    finally:
        ended(server)
        assert server.stdout is not None
        server.stdout.close()

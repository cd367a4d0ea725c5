"""A ladder given ``--tls-cert``/``--tls-key`` speaks TLS only, and a client verifies it: the
certificates of a test authority (``trustme``)."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import ssl
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
import trio
import trustme
from trio_websocket import open_websocket_url

from enginesrv.ladder.accounts import players
from enginesrv.ladder.client import ClientSettings, run_client
from enginesrv.ladder.server import open_ladder, serve_ladder, use_certificate
from enginesrv.ladder.state import Ladder, LadderRun
from protocol.login import encode_login
from tests.ladder.support import ladder_run, serving, trio_test
from tests.trio_run import read_to_end


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def _tls_run(folder: Path, authority: trustme.CA) -> tuple[LadderRun, str]:
    """A Yoxii ladder serving TLS with a certificate for 127.0.0.1, and alice's token."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server)
    token = players(folder).add("alice")
    return ladder_run(folder, tls=server), token


def _trusting(authority: trustme.CA) -> ssl.SSLContext:
    client = ssl.create_default_context()
    authority.configure_trust(client)
    return client


@trio_test
async def test_a_client_that_trusts_the_ladders_certificate_logs_in_over_tls(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """Over a TLS connection verified against the ladder's certificate, a good login is
    answered with ``ugi``."""
    run, token = _tls_run(tmp_path, authority)
    async with serving(run) as ladder:
        await _logs_in(ladder, token, authority)


async def _logs_in(ladder: Ladder, token: str, authority: trustme.CA) -> None:
    stream = await anyio.connect_tcp(
        "127.0.0.1",
        ladder.address[1],
        ssl_context=_trusting(authority),
        tls_hostname="127.0.0.1",
        tls_standard_compatible=False,
    )
    async with stream:
        await stream.send(encode_login("alice", token, "text"))
        with trio.fail_after(10):
            first = await stream.receive()
    assert first.split(b"\n")[0] == b"ugi"


@trio_test
async def test_a_client_that_does_not_trust_it_is_stopped_by_verification(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """A client with the system's authorities only refuses the ladder's certificate: the
    handshake fails before a byte of the login is sent."""
    run, _ = _tls_run(tmp_path, authority)
    async with serving(run) as ladder:
        with pytest.raises(ssl.SSLCertVerificationError):
            await anyio.connect_tcp(
                "127.0.0.1",
                ladder.address[1],
                ssl_context=ssl.create_default_context(),
                tls_hostname="127.0.0.1",
            )


@trio_test
async def test_a_plain_connection_to_a_tls_ladder_gets_no_session(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """A login sent in the clear to a TLS ladder is never read as a login: the connection
    ends without ``ugi`` (the ladder's TLS handshake fails on it)."""
    run, token = _tls_run(tmp_path, authority)
    async with serving(run) as ladder:
        await _in_the_clear(ladder, token)


async def _in_the_clear(ladder: Ladder, token: str) -> None:
    stream = await anyio.connect_tcp("127.0.0.1", ladder.address[1])
    got = b""
    async with stream:
        await stream.send(encode_login("alice", token, "text"))
        with trio.fail_after(15):
            try:
                while True:
                    got += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass
    assert b"ugi" not in got
    assert ladder.door is not None
    assert ladder.door.accepted == 0


@trio_test
async def test_the_ladder_client_logs_in_over_tls_with_the_ladders_authority(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """``ladder-client --tls-ca``: the client's own TLS path, up to the ladder accepting its
    login and greeting its engine."""
    run, token = _tls_run(tmp_path, authority)
    async with serving(run) as ladder:
        await _client_logs_in(ladder, token, authority)


async def _client_logs_in(ladder: Ladder, token: str, authority: trustme.CA) -> None:
    said: list[str] = []
    stop = trio.Event()

    def say(text: str) -> None:
        said.append(text)
        if text == "logged in":
            stop.set()

    settings = ClientSettings(
        "127.0.0.1",
        ladder.address[1],
        "alice",
        token,
        (sys.executable, "-m", "enginesrv.cli", "engine", "--bot", "alphabeta"),
        tls=_trusting(authority),
        tls_name="127.0.0.1",
        quiet_engine=True,
        say=say,
    )
    with trio.fail_after(20):
        await run_client(settings, stop)
    assert said[0] == "logged in"


@trio_test
async def test_the_ladders_web_port_speaks_tls_too(tmp_path: Path, authority: trustme.CA) -> None:
    """A bot's ``/bot`` socket carries its token: over TLS only, verified, as the bot door."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server)
    server.set_alpn_protocols(["http/1.1"])
    token = players(tmp_path).add("alice")
    pages: list[str] = []
    run = ladder_run(tmp_path, tls=server, web=0)
    async with open_ladder(run) as ladder, trio.open_nursery() as nursery:
        await nursery.start(
            functools.partial(
                serve_ladder, ladder, on_ready=lambda h, p: None, on_page=pages.append
            )
        )
        try:
            assert pages[0].startswith("https://127.0.0.1:")
            url = pages[0].replace("https", "wss") + "bot"
            async with open_websocket_url(url, ssl_context=_trusting(authority)) as ws:
                await ws.send_message(f"login alice {token}")
                with trio.fail_after(10):
                    assert (await ws.get_message()) == "ugi\n"
            host, port = pages[0].split("//")[1].rstrip("/").split(":")
            stream = await trio.open_tcp_stream(host, int(port))
            async with stream:
                await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                data = await read_to_end(stream, 2)
                assert b"HTTP/1.1" not in data
        finally:
            ladder.stop.set()


async def _shows_a_certificate_of(authority: trustme.CA, port: int) -> bool:
    """Whether the TLS port ``port`` shows a certificate ``authority`` signed."""
    stream = await trio.open_ssl_over_tcp_stream(
        "127.0.0.1", port, ssl_context=_trusting(authority), https_compatible=True
    )
    try:
        await stream.do_handshake()
        return True
    except trio.BrokenResourceError as exc:
        if isinstance(exc.__cause__, ssl.SSLCertVerificationError):
            return False
        raise
    finally:
        await trio.aclose_forcefully(stream)


def _first_and_renewed(authority: trustme.CA) -> tuple[ssl.SSLContext, ssl.SSLContext, trustme.CA]:
    """A server context of ``authority``'s certificate, one of a renewed certificate (another
    authority's), and that authority."""
    renewed = trustme.CA()
    first = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(first)
    reloaded = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    renewed.issue_cert("127.0.0.1").configure_cert(reloaded)
    return first, reloaded, renewed


@contextlib.asynccontextmanager
async def _serving_with_page(
    run: LadderRun, before: Callable[[Ladder], None] = lambda ladder: None
) -> AsyncIterator[tuple[Ladder, int]]:
    """The ladder of ``run`` (``before`` done to it first) serving, and its web port."""
    pages: list[str] = []
    async with open_ladder(run) as ladder, trio.open_nursery() as nursery:
        before(ladder)
        await nursery.start(
            functools.partial(
                serve_ladder, ladder, on_ready=lambda h, p: None, on_page=pages.append
            )
        )
        try:
            yield ladder, int(pages[0].rstrip("/").rsplit(":", 1)[1])
        finally:
            ladder.stop.set()


@trio_test
async def test_sighup_gives_both_ports_a_renewed_certificate(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """``ladder run --tls-cert --tls-key`` reads its certificate again on SIGHUP: the bot
    port's and the web port's new connections get the renewed one."""
    first, reloaded, renewed = _first_and_renewed(authority)
    run = ladder_run(tmp_path, tls=first, web=0, reload_tls=lambda: reloaded)
    async with _serving_with_page(run) as (ladder, web):
        for port in (ladder.address[1], web):
            assert await _shows_a_certificate_of(authority, port)
        os.kill(os.getpid(), signal.SIGHUP)
        with trio.fail_after(10):
            while not await _shows_a_certificate_of(renewed, ladder.address[1]):
                await trio.sleep(0.02)
        assert await _shows_a_certificate_of(renewed, web)
        assert not await _shows_a_certificate_of(authority, web)


@trio_test
async def test_a_certificate_renewed_before_the_web_port_opens_is_the_one_it_serves(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """A reload that comes while the ladder starts (its house bots' workers, before the web
    port is open) is not lost on the web port: it opens with the certificate of then."""
    first, reloaded, renewed = _first_and_renewed(authority)
    run = ladder_run(tmp_path, tls=first, web=0)
    # as the watcher does, before the ports are open
    async with _serving_with_page(run, lambda ladder: use_certificate(ladder, reloaded)) as (
        ladder,
        web,
    ):
        for port in (ladder.address[1], web):
            assert await _shows_a_certificate_of(renewed, port)

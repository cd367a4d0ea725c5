"""The client library over TLS and with a token (``connect(..., tls=True, cafile=...,
token=...)``, docs/client.md "TLS and tokens") against a server run in this process, in both
framings: the server's certificate is issued by a test authority (``trustme``) that only the
clients given its file trust. A token shows in no trace line, error, ``repr`` or log event."""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import structlog
import trio
import trustme

from enginesrv.client import AsyncEngine, ClientError, Engine, EngineError, EngineTerminatedError
from enginesrv.client.types import Framing, TraceKind
from enginesrv.serve.auth import Keeper
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server
from enginesrv.serve.settings import SessionConfig
from enginesrv.tokens import TokenFile
from tests.enginesrv.peer import ThreadRunner, serving
from tests.trio_run import trio_test

FRAMINGS: tuple[Framing, ...] = ("text", "msgpack")
HOST = "127.0.0.1"
WAIT = 5.0
"""Seconds each client call may take (each takes milliseconds)."""


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def cafile(authority: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The test authority's certificate, as a file a client is told to trust."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(path))
    return str(path)


@dataclass
class Running:
    """A server of this process: its port, and the token of its account ``alice`` (None for
    a server that takes no tokens)."""

    port: int
    token: str | None
    keeper: Keeper | None


@asynccontextmanager
async def running(
    folder: Path, authority: trustme.CA | None, *, tokens: bool
) -> AsyncIterator[Running]:
    """A Yoxii server (random bot, searches in threads) on a free port: over TLS with a
    certificate of ``authority`` for 127.0.0.1 and localhost (None: plain TCP), asking for a
    token when ``tokens``."""
    tls = None
    if authority is not None:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert(HOST, "localhost").configure_cert(tls)
    keeper, token = None, None
    if tokens:
        file = TokenFile(folder / "server.tokens")
        token = f"alice:{file.add('alice')}"
        keeper = Keeper(file)
    limits = Limits()
    config = SessionConfig(
        default_game="yoxii",
        default_bot="random",
        limits=limits.announced(),
        auth=None if keeper is None else "token",
    )
    server = Server(config, ThreadRunner(), limits, keeper=keeper, tls=tls)
    try:
        async with serving(server) as port:
            yield Running(port, token, keeper)
    finally:
        if keeper is not None:
            keeper.close()


@dataclass
class Trace:
    """Every line a client's trace callback was told."""

    lines: list[str] = field(default_factory=list)

    def __call__(self, kind: TraceKind, text: str) -> None:
        self.lines.append(f"{kind} {text}")

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def secret_of(token: str) -> str:
    """The part of ``NAME:TOKEN`` that must never be shown."""
    return token.partition(":")[2]


# -- TLS ------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_a_client_that_trusts_the_authority_plays_over_tls(
    tmp_path: Path, authority: trustme.CA, cafile: str, framing: Framing
) -> None:
    """``cafile`` implies TLS: the certificate is verified against it, and the session works
    (a round trip, a query, a short search)."""
    async with (
        running(tmp_path, authority, tokens=False) as server,
        AsyncEngine.connect(HOST, server.port, framing=framing, cafile=cafile, timeout=WAIT) as e,
    ):
        assert e.info.name == "enginesrv"
        assert e.info.auth is None
        await e.isready(WAIT)
        await e.position()
        moves = await e.legal_moves(WAIT)
        result = await e.go(movetime=50, timeout=WAIT)
        assert result.move in moves


@trio_test
async def test_a_context_of_the_callers_and_another_name_to_verify(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """``tls=`` takes the caller's own context; ``server_hostname`` is the name checked (the
    certificate names localhost too)."""
    context = ssl.create_default_context()
    authority.configure_trust(context)
    async with (
        running(tmp_path, authority, tokens=False) as server,
        AsyncEngine.connect(
            HOST, server.port, tls=context, server_hostname="localhost", timeout=WAIT
        ) as engine,
    ):
        await engine.ping(7, WAIT)


async def refusal_of_tls(port: int, **tls: object) -> ClientError:
    with pytest.raises(ClientError) as caught:
        async with AsyncEngine.connect(HOST, port, timeout=WAIT, **tls):  # type: ignore[arg-type]
            pass
    return caught.value


@trio_test
async def test_a_client_that_does_not_trust_the_authority_is_refused(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """With the system's authorities only, the certificate is not trusted: a ``ClientError``
    of one line that says so, with no TLS traceback chained to it."""
    async with running(tmp_path, authority, tokens=False) as server:
        error = await refusal_of_tls(server.port, tls=True)
    message = str(error)
    assert message.startswith(f"{HOST}:{server.port}: TLS: certificate verify failed"), message
    assert "\n" not in message
    assert error.__cause__ is None
    assert error.__suppress_context__


@trio_test
async def test_a_certificate_for_another_name_is_refused(
    tmp_path: Path, authority: trustme.CA, cafile: str
) -> None:
    """The certificate is trusted, but it is not that of the name the client checks."""
    async with running(tmp_path, authority, tokens=False) as server:
        error = await refusal_of_tls(
            server.port, cafile=cafile, server_hostname="elsewhere.example"
        )
    assert "certificate verify failed" in str(error)
    assert "elsewhere.example" in str(error)


@trio_test
async def test_tls_and_plain_tcp_do_not_meet(
    tmp_path: Path, authority: trustme.CA, cafile: str
) -> None:
    """A client in the clear is told by a TLS server that it speaks TLS only; a TLS client of
    a plain server fails its handshake. Both are ``ClientError``s, neither hangs."""
    async with running(tmp_path, authority, tokens=False) as server:
        with pytest.raises(EngineTerminatedError, match="TLS only"):
            async with AsyncEngine.connect(HOST, server.port, timeout=WAIT):
                pass
    async with running(tmp_path, None, tokens=False) as plain:
        error = await refusal_of_tls(plain.port, cafile=cafile)
    assert f"{HOST}:{plain.port}" in str(error)


def test_arguments_that_do_not_go_together_are_refused_before_connecting() -> None:
    async def main() -> None:
        context = ssl.create_default_context()
        with pytest.raises(ValueError, match="cafile goes with tls=True"):
            await AsyncEngine.connect_in(None, HOST, 9, tls=context, cafile="ca.pem")
        with pytest.raises(ValueError, match="over TLS only"):
            await AsyncEngine.connect_in(None, HOST, 9, server_hostname="localhost")
        with pytest.raises(ClientError, match="cafile"):
            await AsyncEngine.connect_in(None, HOST, 9, cafile="/nonexistent/ca.pem")

    trio.run(main)


# -- tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_a_token_is_accepted_and_never_shown(
    tmp_path: Path,
    authority: trustme.CA,
    cafile: str,
    framing: Framing,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Over TLS, a server that asks for a token gets it before anything else the client
    sends; the trace shows ``auth ***`` in its place, and no ``repr`` or log line has it."""
    caplog.set_level(logging.DEBUG)
    trace = Trace()
    with structlog.testing.capture_logs() as events:
        async with running(tmp_path, authority, tokens=True) as server:
            assert server.token is not None
            async with AsyncEngine.connect(
                HOST,
                server.port,
                framing=framing,
                cafile=cafile,
                token=server.token,
                trace=trace,
                timeout=WAIT,
            ) as engine:
                assert engine.info.auth == "token"
                await engine.set_option("Hash", 16, WAIT)
                assert await engine.query("gameover", WAIT) is False
                result = await engine.go(movetime=50, timeout=WAIT)
                assert result.move is not None
                shown = [repr(engine), repr(engine.info), repr(engine._conn), repr(vars(engine))]
            assert server.keeper is not None
            assert server.keeper.accepted == 1
    sent = [line for line in trace.lines if line.startswith("send ")]
    assert "ugi" in sent[0]
    assert "auth" in sent[1]
    assert "***" in sent[1]
    assert any("auth_accepted" in repr(event) for event in events)
    secret = secret_of(server.token)
    for text in (trace.text, *shown, repr(events), caplog.text):
        assert secret not in text


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_wrong_token_is_refused_with_the_servers_reason(
    tmp_path: Path, authority: trustme.CA, cafile: str, framing: Framing
) -> None:
    """The server's refusal (error 307) is the error, with its reason; neither it, nor the
    trace, nor the server's log events quote the token."""
    trace = Trace()
    wrong = "alice:" + "x" * 43

    async def main() -> EngineError:
        async with running(tmp_path, authority, tokens=True) as server:
            with pytest.raises(EngineError) as caught:
                async with AsyncEngine.connect(
                    HOST,
                    server.port,
                    framing=framing,
                    cafile=cafile,
                    token=wrong,
                    trace=trace,
                    timeout=WAIT,
                ):
                    pass
            assert server.keeper is not None
            assert server.keeper.refused == 1
        return caught.value

    with structlog.testing.capture_logs() as events:
        error = trio.run(main)
    assert error.code == 307
    assert error.name == "auth-refused"
    assert "the token is not accepted" in str(error)
    assert events, "the server logs the refusal"
    for shown in (str(error), repr(error), trace.text, repr(events)):
        assert secret_of(wrong) not in shown


@pytest.mark.parametrize("framing", FRAMINGS)
@trio_test
async def test_a_server_that_asks_for_a_token_refuses_a_client_without_one(
    tmp_path: Path, framing: Framing
) -> None:
    """No token for a server that asks for one: a ``ClientError`` saying how to give it,
    before the client sends anything else."""
    trace = Trace()
    async with running(tmp_path, None, tokens=True) as server:
        with pytest.raises(ClientError) as caught:
            async with AsyncEngine.connect(
                HOST, server.port, framing=framing, trace=trace, timeout=WAIT
            ):
                pass
    expected = f"{HOST}:{server.port} requires a token: pass token=NAME:TOKEN"
    assert str(caught.value) == expected
    assert not any("auth" in line for line in trace.lines if line.startswith("send "))


@trio_test
async def test_a_server_without_tokens_is_not_sent_one(tmp_path: Path) -> None:
    """A token given to a server that asks for none stays with the client."""
    trace = Trace()
    token = "alice:" + "y" * 43
    async with (
        running(tmp_path, None, tokens=False) as server,
        AsyncEngine.connect(HOST, server.port, token=token, trace=trace, timeout=WAIT) as e,
    ):
        await e.isready(WAIT)
    assert not any(line.startswith("send auth") for line in trace.lines)
    assert secret_of(token) not in trace.text


def test_a_malformed_token_is_refused_without_being_quoted() -> None:
    """A token that is not one word ``NAME:TOKEN`` is a ``ValueError`` before any
    connection, and its message does not repeat it."""

    async def main() -> None:
        for token in ("alice secret-part", "secretpart", "alice:", "alice:secret\npart"):
            with pytest.raises(ValueError, match="NAME:TOKEN") as caught:
                await AsyncEngine.connect_in(None, HOST, 9, token=token)
            assert "secret" not in str(caught.value)

    trio.run(main)


@trio_test
async def test_the_blocking_engine_connects_with_tls_and_a_token(
    tmp_path: Path, authority: trustme.CA, cafile: str
) -> None:
    """``Engine.connect`` takes the same keywords (its calls run in a thread here, beside the
    server's loop)."""
    async with running(tmp_path, authority, tokens=True) as server:
        token = server.token
        assert token is not None

        def play() -> str:
            with Engine.connect(HOST, server.port, cafile=cafile, token=token) as engine:
                assert engine.info.auth == "token"
                engine.position()
                result = engine.go(movetime=50, timeout=WAIT)
                assert result.move is not None
                return repr(engine) + repr(vars(engine))

        shown = await trio.to_thread.run_sync(play)
    assert secret_of(token) not in shown

"""The web port of a server with tokens, attacked as a page or program without one would: a
socket's first message is its token, and nothing (a game, a seat, a table to watch) is had
before it (enginesrv.web.signin; docs/web.md, "Signing in")."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgpack
import pytest
import trio
import trustme
from trio_websocket import ConnectionClosed, open_websocket_url
from wsproto.events import CloseConnection, TextMessage
from wsproto.frame_protocol import FrameProtocol

from enginesrv.serve.auth import Keeper
from enginesrv.serve.connection import Limits
from enginesrv.serve.settings import SessionConfig
from enginesrv.tokens import TokenFile
from enginesrv.web.signin import CLOSE_AUTH
from tests.trio_run import read_to_end, trio_test
from tests.web.webpeer import (
    Web,
    binary_socket,
    drop,
    http_get,
    running_web,
    text_socket,
    upgraded,
)

GAME = "game=yoxii&opponent=bot:random&side=p1"
REFUSED = "error 307 auth-refused the token is not accepted\n"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # length 0, type SETTINGS, stream 0
HALF_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"  # a ClientHello's first bytes


@asynccontextmanager
async def token_web(
    folder: Path, *, limits: Limits | None = None, tls: ssl.SSLContext | None = None
) -> AsyncIterator[tuple[Web, str]]:
    """A web front whose token file holds alice; yields it and alice's token."""
    limits = limits or Limits()
    file = TokenFile(folder / "tokens")
    token = "alice:" + file.add("alice")
    config = SessionConfig(default_game=None, limits=limits.announced(), auth="token")
    keeper = Keeper(file)
    try:
        async with running_web(limits=limits, config=config, keeper=keeper, tls=tls) as web:
            yield web, token
    finally:
        keeper.close()


async def refused(
    url: str, first: str | bytes | None, tls: ssl.SSLContext | None = None
) -> tuple[list[str | bytes], int, str]:
    """What a socket that sends ``first`` (nothing: None) gets before the server closes it,
    and the close code and reason."""
    got: list[str | bytes] = []
    async with open_websocket_url(url, ssl_context=tls) as ws:
        if first is not None:
            await ws.send_message(first)
        try:
            with trio.fail_after(10):
                while True:
                    got.append(await ws.get_message())
        except ConnectionClosed as exc:
            await drop(ws)
            assert exc.reason is not None
            return got, exc.reason.code, exc.reason.reason or ""


@trio_test
async def test_the_page_is_told_a_token_is_needed_and_no_other_site_may_frame_it(
    tmp_path: Path,
) -> None:
    async with token_web(tmp_path) as (web, _token):
        status, _, body = await http_get(web.url, "/config.json")
        assert status == 200
        assert json.loads(body)["auth"] is True
        status, headers, _ = await http_get(web.url, "/")
        assert status == 200
        assert headers["content-security-policy"] == "frame-ancestors 'none'"
        assert headers["x-frame-options"] == "DENY"


@trio_test
async def test_a_game_is_had_only_after_the_token(tmp_path: Path) -> None:
    """A socket that asks for a game and sends anything but its token first is refused
    before the game is looked at: no referee, no bot."""
    async with token_web(tmp_path) as (web, _token):
        got, code, reason = await refused(web.ws(GAME), "ugi")
        assert (code, reason) == (
            CLOSE_AUTH,
            "auth first: a socket's first message is auth NAME:TOKEN, alone",
        )
        assert got == ["error 307 auth-refused " + reason + "\n"]
        got, code, reason = await refused(web.ws(GAME), "auth alice:" + "W" * 43)
        assert (got, code, reason) == ([REFUSED], CLOSE_AUTH, "the token is not accepted")
        assert len(web.app.referees) == 0


@pytest.mark.parametrize(
    "first",
    ["auth {token}\nquery turn", "auth {token}\nauth {token}", "auth", "auth a b", "{token}", ""],
)
@trio_test
async def test_the_first_message_is_the_token_alone(tmp_path: Path, first: str) -> None:
    async with token_web(tmp_path) as (web, token):
        got, code, reason = await refused(web.ws(), first.format(token=token))
        assert code == CLOSE_AUTH
        assert reason.startswith("auth first:")
        assert token.split(":")[1] not in repr(got) + reason


@trio_test
async def test_a_good_token_opens_a_game_in_either_framing(tmp_path: Path) -> None:
    async with token_web(tmp_path) as (web, token):
        async with text_socket(web.ws(GAME)) as peer:
            await peer.send(f"auth {token}")
            assert await peer.ask("query turn") == "p1"
            assert len(web.app.referees) == 1
        async with binary_socket(web.ws()) as packed:
            await packed.request(1, "auth", {"token": token})
            assert await packed.response(1) == [1, 1, None, {}]
            await packed.request(2, "uginewgame", {"game": "yoxii"})
            await packed.request(3, "query", {"what": "turn"})
            assert (await packed.response(3))[3] == {"value": "p1"}


@trio_test
async def test_a_socket_that_sends_no_token_in_time_is_closed(tmp_path: Path) -> None:
    async with token_web(tmp_path, limits=Limits(first_command=0.5)) as (web, _token):
        started = trio.current_time()
        got, code, _ = await refused(web.ws(GAME), None)
        assert (got, code) == ([], 4408)
        assert trio.current_time() - started < 3


@trio_test
async def test_a_spectator_needs_a_token_too(tmp_path: Path) -> None:
    async with token_web(tmp_path) as (web, token):
        got, code, _ = await refused(web.ws("watch=" + "x" * 22, path="events"), "hello")
        assert code == CLOSE_AUTH
        assert got == [
            "error 307 auth-refused auth first: a socket's first message is auth "
            "NAME:TOKEN, alone\n"
        ]
        _, code, reason = await refused(web.ws("watch=" + "x" * 22, path="events"), f"auth {token}")
        assert (code, reason) == (4400, "watch: no game has this link (it may have ended long ago)")


@trio_test
async def test_a_binary_socket_is_refused_in_msgpack(tmp_path: Path) -> None:
    async with token_web(tmp_path) as (web, _token):
        wrong = msgpack.packb([0, 5, "auth", [{"token": "alice:" + "W" * 43}]])
        got, code, _ = await refused(web.ws(), wrong)
        assert code == CLOSE_AUTH
        assert isinstance(got[0], bytes)
        assert msgpack.unpackb(got[0])[:3] == [
            1,
            5,
            [307, "auth-refused", "the token is not accepted", None],
        ]


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@trio_test
async def test_the_web_port_speaks_tls_only(tmp_path: Path, authority: trustme.CA) -> None:
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server)
    server.set_alpn_protocols(["http/1.1"])
    client = ssl.create_default_context()
    authority.configure_trust(client)
    async with token_web(tmp_path, tls=server) as (web, token):
        assert web.url.startswith("https://")
        async with text_socket(web.ws(GAME), tls=client) as peer:
            await peer.send(f"auth {token}")
            assert await peer.ask("query turn") == "p1"
        # in the clear, the port answers nothing and closes
        host, port = web.url.split("//")[1].rstrip("/").split(":")
        stream = await trio.open_tcp_stream(host, int(port))
        async with stream:
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            data = await read_to_end(stream, 1)
            assert b"HTTP/1.1" not in data


def web_context(authority: trustme.CA) -> ssl.SSLContext:
    """The server's context as ``enginesrv.cli.common.tls_context`` makes it (ALPN http/1.1)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    return context


@trio_test
async def test_over_tls_the_web_port_speaks_no_http2(tmp_path: Path) -> None:
    """HTTP/2 is refused in the clear (``GuardedStream._asks_http2``) because one connection
    would carry many WebSockets that the connection caps do not count. Inside TLS the guard
    reads ciphertext, and hypercorn switches to HTTP/2 on the preface whatever ALPN chose:
    the preface must be refused there too."""
    authority = trustme.CA()
    async with token_web(tmp_path, tls=web_context(authority)) as (web, _token):
        client = ssl.create_default_context()
        authority.configure_trust(client)
        client.set_alpn_protocols(["http/1.1"])
        stream = await trio.open_tcp_stream("127.0.0.1", web.web_port)
        secure = trio.SSLStream(stream, client, server_hostname="127.0.0.1")
        await secure.do_handshake()
        assert secure.selected_alpn_protocol() == "http/1.1"
        await secure.send_all(PREFACE + EMPTY_SETTINGS)
        got = b""
        with trio.move_on_after(3):
            try:
                while chunk := await secure.receive_some(65536):
                    got += chunk
            except trio.BrokenResourceError:
                pass
        # an HTTP/2 server answers with its SETTINGS frame (type 4 at byte 3)
        assert not (len(got) >= 9 and got[3] == 0x04), f"HTTP/2 spoken inside TLS: {got[:40]!r}"
        await secure.aclose()


@trio_test
async def test_a_revoked_tokens_spectator_feed_is_closed(tmp_path: Path) -> None:
    """A feed is no protocol connection, yet its token is looked at as theirs is: revoked,
    the socket is closed with 4401 within a few seconds."""
    async with token_web(tmp_path) as (web, token):
        async with open_websocket_url(web.ws("game=yoxii&opponent=invite")) as player:
            await player.send_message(f"auth {token}")
            await player.send_message("isready")
            with trio.fail_after(5):
                while await player.get_message() != "readyok\n":
                    pass
            (table,) = web.app.tables.tables
            url = web.ws(f"watch={table.watch_token}", path="events")
            async with open_websocket_url(url) as spectator:
                await spectator.send_message(f"auth {token}")
                with trio.fail_after(5):
                    await spectator.get_message()  # the feed has begun
                TokenFile(tmp_path / "tokens").revoke("alice")
                code = None
                with trio.move_on_after(3):
                    try:
                        while True:
                            await spectator.get_message()
                    except ConnectionClosed as exc:
                        code = None if exc.reason is None else exc.reason.code
                await drop(spectator)
            await drop(player)
        assert code == CLOSE_AUTH, "the revoked token's feed is still served"


@trio_test
async def test_a_web_connection_mid_tls_handshake_does_not_hold_the_shutdown(
    tmp_path: Path,
) -> None:
    authority = trustme.CA()
    streams = []
    async with token_web(tmp_path, tls=web_context(authority)) as (web, _token):
        for _ in range(3):
            stream = await trio.open_tcp_stream("127.0.0.1", web.web_port)
            await stream.send_all(HALF_HELLO)
            streams.append(stream)
        await trio.sleep(0.3)
        began = trio.current_time()
        web.server.stop.set()
    took = trio.current_time() - began
    for stream in streams:
        await stream.aclose()
    # the TCP port's handshakes end at the stop (TlsDoor.secure watches it); the web port's
    # wait for their time limit or hypercorn's graceful timeout
    assert took < 0.5, f"the shutdown waited {took:.2f} s for a handshake that never ends"


async def refused_while_speaking(web: Web, token: str) -> tuple[int | None, str]:
    """A socket that sends ``token`` and then, once the refusal's error line has come, its next
    command, as a page does that sends its first command without waiting (the refusal's close
    frame may still be on its way); it answers the close frame it reads, as a browser does.
    Its close code, and how its stream ended: "end", or the error that ended it."""
    stream = await trio.open_tcp_stream("127.0.0.1", web.web_port)
    code: int | None = None
    try:
        client = await upgraded(stream, f"127.0.0.1:{web.web_port}", "/ws?" + GAME)
        await stream.send_all(client.send(TextMessage(f"auth {token}")))
        data = b""
        while b"auth-refused" not in data:
            got = await stream.receive_some(65536)
            assert got, "the stream ended before the refusal"
            data += got
        # the command goes out before the close frame is read (the client would refuse to
        # send it once it has)
        await stream.send_all(command_frame("isready"))
        client.receive_data(data)
        while code is None:
            for event in client.events():
                if isinstance(event, CloseConnection):
                    code = event.code
                    await stream.send_all(client.send(event.response()))
            if code is None:
                client.receive_data(await stream.receive_some(65536) or None)
        while await stream.receive_some(65536):
            pass
    except trio.BrokenResourceError as exc:
        return code, str(exc.__cause__ or exc)
    finally:
        await stream.aclose()
    return code, "end"


def command_frame(text: str) -> bytes:
    """A client's text frame holding ``text`` (masked, as RFC 6455 wants a client's)."""
    return bytes(FrameProtocol(client=True, extensions=[]).send_data(text, fin=True))


@trio_test
async def test_a_refused_tokens_close_code_reaches_a_page_that_goes_on_speaking(
    tmp_path: Path,
) -> None:
    """The server waits for the peer's close frame before it closes the TCP stream: a command
    of the page that reaches a stream already closed is answered with a reset, which can cost
    the page the close frame it has not read yet (its code then reads as 1006 and the page
    cannot tell that its token was refused). Ten sockets, each with a wrong token."""
    async with token_web(tmp_path) as (web, _token):
        for _ in range(10):
            code, ended = await refused_while_speaking(web, "alice:" + "W" * 43)
            assert (code, ended) == (CLOSE_AUTH, "end")


@trio_test
async def test_a_revoked_tokens_game_is_closed_with_4401(tmp_path: Path) -> None:
    """A game's socket whose token is revoked gets the refusal and the close code 4401 with
    its reason, as a refused token does, so that the page asks for a token again."""
    async with token_web(tmp_path) as (web, token):
        async with open_websocket_url(web.ws(GAME)) as ws:
            await ws.send_message(f"auth {token}")
            await ws.send_message("isready")
            with trio.fail_after(5):
                while await ws.get_message() != "readyok\n":
                    pass
            TokenFile(tmp_path / "tokens").revoke("alice")
            got: list[str | bytes] = []
            closed: tuple[int, str | None] | None = None
            with trio.move_on_after(5):
                try:
                    while True:
                        got.append(await ws.get_message())
                except ConnectionClosed as exc:
                    assert exc.reason is not None
                    closed = (exc.reason.code, exc.reason.reason)
            await drop(ws)
        assert closed == (CLOSE_AUTH, "the token was revoked"), got
        assert got[-1:] == ["error 307 auth-refused the token was revoked\n"]


@trio_test
async def test_a_revoked_tokens_socket_that_does_not_read_is_cut_off_within_seconds(
    tmp_path: Path,
) -> None:
    """A socket whose peer has stopped reading, with replies stuck in the server's write, is
    closed under its connection soon after its token is revoked (``StuckGuard``), not when
    the write's own limit (30 s) ends it."""
    async with token_web(tmp_path) as (web, token):
        sock = trio.socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await sock.connect(("127.0.0.1", web.web_port))
        stream = trio.SocketStream(sock)
        try:
            client = await upgraded(stream, f"127.0.0.1:{web.web_port}", "/ws?" + GAME)
            await stream.send_all(client.send(TextMessage(f"auth {token}")))
            # replies pile up in the server (a write is stuck), short of the output cap
            with trio.fail_after(10):
                while not [c for c in web.server.connections if c.outbox.size > 1 << 20]:
                    await stream.send_all(client.send(TextMessage("ugi\n" * 200)))
                    await trio.sleep(0.01)
            TokenFile(tmp_path / "tokens").revoke("alice")
            with trio.fail_after(8):
                while web.server.connections:
                    await trio.sleep(0.05)
        finally:
            await trio.aclose_forcefully(stream)

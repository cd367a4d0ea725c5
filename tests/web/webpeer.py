"""A server with its web front on free ports, in the test's trio run, and WebSocket peers."""

from __future__ import annotations

import random
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import msgpack
import trio
from trio_websocket import WebSocketConnection, open_websocket_url
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request

from enginesrv.serve.auth import Keeper
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server, open_listeners, serve
from enginesrv.serve.settings import SessionConfig
from enginesrv.web.app import WS_PEER_CONNECTIONS, WebApp
from enginesrv.web.http import HttpTimeouts
from enginesrv.web.run import serve_web
from tests.enginesrv.peer import ThreadRunner, connect_from


@dataclass
class Web:
    server: Server
    app: WebApp
    url: str
    """``http://127.0.0.1:PORT/``"""
    port: int
    """The TCP protocol port."""

    @property
    def web_port(self) -> int:
        return int(self.url.rstrip("/").rsplit(":", 1)[1])

    def ws(self, query: str = "", path: str = "ws") -> str:
        scheme = self.url.replace("https://", "wss://").replace("http://", "ws://")
        return scheme + path + (f"?{query}" if query else "")


@asynccontextmanager
async def running_web(
    *,
    limits: Limits | None = None,
    peer_cap: int = WS_PEER_CONNECTIONS,
    runner: Any = None,
    seeds: random.Random | None = None,
    timeouts: HttpTimeouts | None = None,
    config: SessionConfig | None = None,
    keeper: Keeper | None = None,
    tls: ssl.SSLContext | None = None,
) -> AsyncIterator[Web]:
    """``seeds``: the refereed bots' seeds (None: unpredictable, as in the server);
    ``timeouts``: the web port's HTTP timeouts (None: the server's); ``keeper``: the tokens
    clients must present; ``tls``: both ports speak TLS only."""
    limits = limits or Limits()
    config = config or SessionConfig(
        default_game=None, default_bot="alphabeta", limits=limits.announced()
    )
    runner = runner or ThreadRunner()
    server = Server(config, runner, limits, keeper=keeper, tls=tls)
    app = WebApp(server, runner, peer_cap=peer_cap, seeds=seeds)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            lambda task_status: serve_web(
                server,
                runner,
                host="127.0.0.1",
                port=0,
                app=app,
                timeouts=timeouts,
                task_status=task_status,
            )
        )
        ports: list[int] = []
        listeners = await open_listeners("127.0.0.1", 0)
        await nursery.start(
            lambda task_status: serve(
                server, listeners, on_ready=lambda h, p: ports.append(p), task_status=task_status
            )
        )
        try:
            yield Web(server, app, url, ports[0])
        finally:
            server.stop.set()


async def http_get(
    url: str, path: str, *, local: str | None = None, timeout: float = 5
) -> tuple[int, dict[str, str], bytes]:
    """``GET path`` on the web port of ``url`` over a connection of its own (``Connection:
    close``), from the address ``local`` if given: the status, the headers (lower-case
    names) and the body."""
    host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
    with trio.fail_after(timeout):
        stream = await connect_from(local or "127.0.0.1", host, int(port))
        async with stream:
            request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
            await stream.send_all(request.encode())
            data = b""
            while len(data) < 1 << 22:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


async def drop(ws: WebSocketConnection) -> None:
    """Close the client's TCP stream of a socket the server closed: trio-websocket's client
    waits for the server's TCP close and then leaves its own stream open (a ResourceWarning)."""
    await ws._stream.aclose()


class TextSocket:
    """A WebSocket speaking the text framing, line by line."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.pending: list[str] = []
        self.messages: list[str | bytes] = []
        """Every message received, as it came (for the tests of what reaches a page)."""

    async def send(self, *lines: str) -> None:
        await self.ws.send_message("\n".join(lines))

    async def line(self, timeout: float = 10) -> str:
        while not self.pending:
            with trio.fail_after(timeout):
                message = await self.ws.get_message()
            self.messages.append(message)
            assert isinstance(message, str), f"a binary message on a text socket: {message!r}"
            assert message.endswith("\n"), f"a message that does not end a line: {message!r}"
            self.pending.extend(message.splitlines())
        return self.pending.pop(0)

    async def expect(self, prefix: str, timeout: float = 10) -> str:
        """The next line that starts with ``prefix`` (lines before it are skipped)."""
        while True:
            line = await self.line(timeout)
            if line.startswith(prefix):
                return line

    async def ask(self, command: str) -> str:
        """The value of ``response`` to one command."""
        await self.send(command)
        line = await self.line()
        assert line.startswith("response"), f"{command}: {line}"
        return line[9:]


class BinarySocket:
    """A WebSocket speaking msgpack-RPC."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.frames: list[Any] = []

    async def request(self, msgid: int, method: str, params: dict[str, Any] | None = None) -> None:
        frame = [0, msgid, method, [params] if params is not None else []]
        await self.ws.send_message(msgpack.packb(frame))

    async def frame(self, timeout: float = 10) -> Any:
        while not self.frames:
            with trio.fail_after(timeout):
                message = await self.ws.get_message()
            assert isinstance(message, bytes), f"a text message on a binary socket: {message!r}"
            unpacker = msgpack.Unpacker(raw=False)
            unpacker.feed(message)
            self.frames.extend(unpacker)
        return self.frames.pop(0)

    async def response(self, msgid: int) -> Any:
        while True:
            frame = await self.frame()
            if frame[0] == 1 and frame[1] == msgid:
                return frame


@asynccontextmanager
async def text_socket(url: str, tls: ssl.SSLContext | None = None) -> AsyncIterator[TextSocket]:
    async with open_websocket_url(url, ssl_context=tls) as ws:
        yield TextSocket(ws)


@asynccontextmanager
async def binary_socket(url: str, tls: ssl.SSLContext | None = None) -> AsyncIterator[BinarySocket]:
    async with open_websocket_url(url, ssl_context=tls) as ws:
        yield BinarySocket(ws)


async def upgraded(stream: trio.abc.Stream, host: str, target: str = "/ws") -> WSConnection:
    """A WebSocket opened by hand (wsproto) on ``stream``, to send frames no library would:
    the handshake for ``target`` at ``host`` (``HOST:PORT``), once the server accepts it."""
    ws = WSConnection(ConnectionType.CLIENT)
    await stream.send_all(ws.send(Request(host=host, target=target)))
    with trio.fail_after(5):
        while not any(isinstance(event, AcceptConnection) for event in ws.events()):
            ws.receive_data(bytes(await stream.receive_some(65536)))
    return ws

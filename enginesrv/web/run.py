"""Serving the ASGI application (``enginesrv.web.http``) beside the TCP server, until the server
stops, its connections admitted with the TCP port's."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import trio
from hypercorn.config import Config

from enginesrv.search.child import SearchRunner
from enginesrv.serve.server import Server
from enginesrv.web.app import WS_PEER_CONNECTIONS, WebApp
from enginesrv.web.http import KEEP_ALIVE, HttpTimeouts, serve_http

PING_INTERVAL = 30.0
"""Seconds between the WebSocket pings hypercorn sends (a dead peer is found out)."""
GRACE = 1.5
"""Seconds the web server's connections get to end once the server stops (hypercorn waits
that long for every WebSocket it served: it keeps the task of a closed one until its next ping
is due). Longer than ``app.ABORT_AFTER``, so that a connection stuck in a write is closed under
it first."""


def bind_text(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def web_config(max_message: int, keep_alive: float = KEEP_ALIVE) -> Config:
    """hypercorn's settings for a web port (the address is bound by ``open_web``)."""
    config = Config()
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.websocket_max_message_size = max_message
    config.websocket_ping_interval = PING_INTERVAL
    config.graceful_timeout = GRACE
    config.keep_alive_timeout = keep_alive
    return config


async def open_web(host: str, port: int) -> tuple[list[trio.SocketListener], str]:
    """The listening sockets of a web port and its page's address (``http://HOST:PORT/``,
    the port bound when ``port`` is 0).

    Raises:
        OSError: the address cannot be listened on.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = listeners[0].socket.getsockname()
    return listeners, f"http://{bind_text(str(bound[0]), int(bound[1]))}/"


@dataclass(frozen=True, slots=True)
class SocketPolicy:
    """Whose WebSockets a web front takes: at most ``peer_cap`` a peer (0: no cap), from
    pages loaded from an address, ``localhost`` or one of ``names`` (``foreign_origin``)."""

    peer_cap: int = WS_PEER_CONNECTIONS
    names: frozenset[str] = frozenset()


async def serve_web(
    server: Server,
    runner: SearchRunner,
    *,
    host: str,
    port: int,
    sockets: SocketPolicy | None = None,
    app: WebApp | None = None,
    timeouts: HttpTimeouts | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page and ``/ws`` on ``host:port`` until ``server.stop``; reports the page's
    address (``http://HOST:PORT/``, the port bound when ``port`` is 0) once it is served.
    ``app`` is the application to serve (by default a new one for ``server``, whose
    WebSockets follow ``sockets``). Its
    connections are admitted by the server's ``Admission``, with the TCP port's, and have
    the ``timeouts`` of ``HttpTimeouts`` (the defaults: 30 s each).

    Raises:
        OSError: the address cannot be listened on.
    """
    sockets = sockets or SocketPolicy()
    app = app or WebApp(server, runner, peer_cap=sockets.peer_cap, names=sockets.names)
    limits = server.limits
    # a message holds whole lines or frames: one of the largest, with room for a few more
    largest = max(limits.line or 65536, limits.frame or 1 << 20)
    timeouts = timeouts or HttpTimeouts()
    config = web_config(largest * 4, timeouts.keep_alive)
    listeners, page = await open_web(host, port)
    if server.tls is not None:
        page = page.replace("http://", "https://", 1)
    serving = functools.partial(
        serve_http,
        app.asgi(),
        config,
        listeners,
        server.admission,
        door="web",
        stop=server.stop,
        timeouts=timeouts,
        tls=server.tls,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(serving)
        task_status.started(page)

"""Serving the ASGI application with hypercorn's trio worker, beside the TCP server, until the
server stops."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import cast

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.typing import ASGIFramework
from starlette.routing import BaseRoute

from enginesrv.search.child import SearchRunner
from enginesrv.serve.server import Server
from enginesrv.web.app import WS_PEER_CONNECTIONS, WebApp

PING_INTERVAL = 30.0
"""Seconds between the WebSocket pings hypercorn sends (a dead peer is found out)."""
GRACE = 1.5
"""Seconds the web server's connections get to end once the server stops (hypercorn waits
that long for every WebSocket it served: it keeps the task of a closed one until its next ping
is due). Longer than ``app.ABORT_AFTER``, so that a connection stuck in a write is closed under
it first."""


def bind_text(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def web_config(host: str, port: int, max_message: int) -> Config:
    config = Config()
    config.bind = [bind_text(host, port)]
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.websocket_max_message_size = max_message
    config.websocket_ping_interval = PING_INTERVAL
    config.graceful_timeout = GRACE
    config.keep_alive_timeout = 30
    return config


async def serve_web(
    server: Server,
    runner: SearchRunner,
    *,
    host: str,
    port: int,
    peer_cap: int = WS_PEER_CONNECTIONS,
    routes: Sequence[BaseRoute] = (),
    app: WebApp | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page and ``/ws`` on ``host:port`` until ``server.stop``; reports the page's
    address (``http://HOST:PORT/``, the port bound when ``port`` is 0) once it is served.
    ``app`` is the application to serve (by default a new one for ``server``).

    Raises:
        OSError: the address cannot be listened on.
    """
    app = app or WebApp(server, runner, peer_cap=peer_cap)
    limits = server.limits
    # a message holds whole lines or frames: one of the largest, with room for a few more
    largest = max(limits.line or 65536, limits.frame or 1 << 20)
    config = web_config(host, port, largest * 4)
    # starlette's and hypercorn's ASGI types are each their own spelling of the same protocol
    asgi = cast(ASGIFramework, app.asgi(routes))
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            functools.partial(serve, asgi, config, shutdown_trigger=server.stop.wait)
        )
        bound = binds[0] if binds else f"http://{bind_text(host, port)}"
        task_status.started(bound.rstrip("/") + "/")

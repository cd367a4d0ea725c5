"""Watching an event in the browser: ``enginesrv match/tournament --web PORT`` serves the page
and ``/events``, a WebSocket on which each text message is one JSON message of the event's feed
(``enginesrv.event.feed``; docs/web.md, "The event feed"): first a snapshot, then what happens.

A watcher that does not read is dropped by the feed once a whole queue waits for it; its
socket is then closed with code 1013, and the page reconnects for a fresh snapshot.

A watcher is sent its messages in bursts, ``SEND_DELAY`` after the first of them. A move is
published on the arbiter's event loop between one player's answer and the next player's
``go``; sent at once, it was encoded and written to the watcher (waking its browser, which
then drew it) in that gap, before the next search reached a worker, on the clock of that
move. A search worker that is idle for 20 ms collects its garbage, and a search that comes
meanwhile waits for the collection (up to 400 ms of a 500 ms move were seen). Paced, the
watch's work comes while the next search runs, once for all the moves of a burst (a bot that
answers at once, a turn of several decisions). For the same reason the page's first requests
are answered once in process before the server listens (``_warm_up``): the very first one
loads code and tables, 20 to 30 ms of the loop's time, which would come whenever a person
opens the page, in the middle of a move.
"""

from __future__ import annotations

import functools

import structlog
import trio
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp, Scope
from starlette.types import Message as AsgiMessage
from starlette.websockets import WebSocket

from enginesrv.admission import Admission
from enginesrv.event.feed import Feed
from enginesrv.web.http import (
    end_websocket,
    foreign_origin,
    keep_transport,
    mark_websocket,
    serve_http,
)
from enginesrv.web.pages import page_app, page_routes
from enginesrv.web.run import open_web, web_config
from enginesrv.web.sockets import CLOSE_CAP, CLOSE_POLICY, StarletteSocket, serve_feed

MAX_WATCHERS = 256
"""Watchers served at once."""
WARM_UP_PATHS = ("/", "/static/app.js")
"""The requests answered in process before the first game (``_warm_up``)."""
WARM_UP_TIMEOUT = 5.0
"""Seconds each of them may take."""
SEND_DELAY = 0.1
"""Seconds a watcher's messages wait to be sent in one burst (module docstring)."""

log = structlog.get_logger("enginesrv.web.watch")


class WatchApp:
    """The page and ``/events`` of a running event."""

    def __init__(
        self,
        feed: Feed,
        stop: trio.Event,
        *,
        max_watchers: int = MAX_WATCHERS,
        send_delay: float = SEND_DELAY,
    ) -> None:
        self.feed = feed
        self.stop = stop
        self.max_watchers = max_watchers
        self.send_delay = send_delay
        self.watchers = 0

    def asgi(self) -> ASGIApp:
        routes = page_routes(
            {"play": False, "watch": True}, [WebSocketRoute("/events", self.events)]
        )
        return keep_transport(page_app(routes))

    async def events(self, websocket: WebSocket) -> None:
        if foreign_origin(websocket.scope) is not None:
            # another site's page (a watch page is loaded from an address or localhost)
            await websocket.close(CLOSE_POLICY)  # HTTP 403
            return
        mark_websocket(websocket.scope)
        await websocket.accept()
        socket = StarletteSocket(websocket)
        if self.watchers >= self.max_watchers:
            await socket.close(CLOSE_CAP, f"the event has its {self.max_watchers} watchers")
            return
        self.watchers += 1
        try:
            await serve_feed(socket, self.feed, self.stop, self.send_delay)
        finally:
            self.watchers -= 1
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await socket.close()
                await end_websocket(websocket.scope)


async def _warm_up(app: ASGIApp, path: str) -> None:
    """Answer one ``GET path`` in process, before the first game: the first requests load code
    and tables (anyio's trio backend, the MIME types: 20 to 30 ms), which must not happen on
    the arbiter's event loop while a clock runs, when a person opens the page."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"accept-encoding", b"gzip")],
        "client": None,
        "server": None,
    }
    answered = trio.Event()
    asked = False

    async def receive() -> AsgiMessage:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await answered.wait()  # the client goes once it has the whole answer
        return {"type": "http.disconnect"}

    async def send(message: AsgiMessage) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            answered.set()

    with trio.move_on_after(WARM_UP_TIMEOUT):
        await app(scope, receive, send)


async def serve_watch(
    feed: Feed,
    stop: trio.Event,
    *,
    host: str,
    port: int,
    admission: Admission,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page and ``/events`` until ``stop``; reports the page's address once served.
    Its connections are admitted by ``admission`` (``admission.event_admission``).

    Raises:
        OSError: the address cannot be listened on.
    """
    asgi = WatchApp(feed, stop).asgi()
    for path in WARM_UP_PATHS:
        await _warm_up(asgi, path)
    listeners, page = await open_web(host, port)
    serving = functools.partial(
        serve_http, asgi, web_config(65536), listeners, admission, door="watch", stop=stop
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(serving)
        task_status.started(page)

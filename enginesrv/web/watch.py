"""Watching an event in the browser: ``enginesrv match/tournament --web PORT`` serves the page
and ``/events``, a WebSocket on which each text message is one JSON message of the event's feed
(``enginesrv.event.feed``; docs/web.md, "The event feed"): first a snapshot, then what happens.

A watcher that does not read is dropped by the feed once a whole queue waits for it; its
socket is then closed with code 1013, and the page reconnects for a fresh snapshot.
"""

from __future__ import annotations

import functools
import json
from typing import cast

import structlog
import trio
from hypercorn.trio import serve
from hypercorn.typing import ASGIFramework
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from enginesrv.event.feed import Feed
from enginesrv.web.app import (
    CLOSE_CAP,
    StarletteSocket,
    StuckGuard,
    keep_transport,
    page_app,
    page_routes,
)
from enginesrv.web.run import web_config

MAX_WATCHERS = 256
"""Watchers served at once."""

log = structlog.get_logger("enginesrv.web.watch")


class WatchApp:
    """The page and ``/events`` of a running event."""

    def __init__(self, feed: Feed, stop: trio.Event, *, max_watchers: int = MAX_WATCHERS) -> None:
        self.feed = feed
        self.stop = stop
        self.max_watchers = max_watchers
        self.watchers = 0

    def asgi(self) -> ASGIApp:
        routes = page_routes({"play": False, "watch": True}, [
            WebSocketRoute("/events", self.events)
        ])  # fmt: skip
        return keep_transport(page_app(routes))

    async def events(self, websocket: WebSocket) -> None:
        await websocket.accept()
        socket = StarletteSocket(websocket)
        if self.watchers >= self.max_watchers:
            await socket.close(CLOSE_CAP, f"the event has its {self.max_watchers} watchers")
            return
        self.watchers += 1
        guard = StuckGuard(socket)
        try:
            async with trio.open_nursery() as nursery:

                async def until_gone() -> None:
                    # a watcher sends nothing that matters; its close ends the feed to it
                    while await socket.receive() is not None:
                        pass
                    guard.release()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(until_gone)
                with self.feed.subscribe() as subscription:
                    # a watcher that does not read blocks a write for good once the feed
                    # drops it: its TCP stream is then closed under it
                    nursery.start_soon(guard.watch, subscription.dropped)
                    nursery.start_soon(guard.watch, self.stop)
                    async for message in subscription.messages:
                        await socket.send(json.dumps(message, separators=(",", ":")))
                # the feed dropped this watcher: it fell a whole queue behind
                await socket.close(CLOSE_CAP, "this watcher fell behind: reconnect")
                guard.release()
                nursery.cancel_scope.cancel()
        except trio.BrokenResourceError:
            guard.release()  # the watcher went away
        finally:
            self.watchers -= 1
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await socket.close()


async def serve_watch(
    feed: Feed,
    stop: trio.Event,
    *,
    host: str,
    port: int,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page and ``/events`` until ``stop``; reports the page's address once served.

    Raises:
        OSError: the address cannot be listened on.
    """
    app = cast(ASGIFramework, WatchApp(feed, stop).asgi())  # the two libraries' ASGI types agree
    config = web_config(host, port, 65536)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            functools.partial(serve, app, config, shutdown_trigger=stop.wait)
        )
        task_status.started(binds[0].rstrip("/") + "/")

"""The ASGI application: the page, its static files and the protocol endpoint ``/ws``.

``/ws`` makes each accepted WebSocket one protocol ``Connection`` of the server, with the
server's limits. Its HTTP connection was admitted with every other (``enginesrv.web.http``);
WebSockets have a per-peer cap of their own besides, below a peer's connections, so that a
browser whose tabs hold many sockets can still load the page. ``/ws?game=...&opponent=...``
opens a game the server referees (``enginesrv.web.referee``). A socket that is refused is
accepted and then closed at once with a code and a reason a page can show: 1013 for the
WebSocket cap, 4400 for a bad game address.
"""

from __future__ import annotations

import hashlib
import random
import weakref
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import structlog
import trio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from enginesrv.admission import WEBSOCKETS_PER_PEER
from enginesrv.search.child import SearchRunner
from enginesrv.serve.connection import peer_host
from enginesrv.serve.server import Server
from enginesrv.web.gamespec import GameSpecError, parse_game_spec
from enginesrv.web.http import (
    end_websocket,
    foreign_origin,
    keep_transport,
    mark_websocket,
    transport_of,
)
from enginesrv.web.referee import Referee
from enginesrv.web.refereed import RefereedGame
from enginesrv.web.transport import (
    Message,
    MessageReceiveStream,
    MessageSendStream,
    framing_of,
)
from protocol import messages as m
from protocol.errors import BAD_FRAME

WS_PEER_CONNECTIONS = WEBSOCKETS_PER_PEER
"""WebSockets one peer may hold at once by default."""
CLOSE_CAP = 1013
CLOSE_POLICY = 1008
"""A WebSocket another site's page opened (refused before it is accepted: HTTP 403)."""
CLOSE_BAD_GAME = 4400
CLOSE_REASON_BYTES = 123
"""The most bytes a close frame's reason may hold (RFC 6455 §5.5: 125 with the code)."""
CLOSE_NO_COMMAND = 4408

log = structlog.get_logger("enginesrv.web")


def static_dir() -> str:
    """The folder of the page's files, inside the installed package."""
    return str(resources.files("enginesrv.web") / "static")


STATIC_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
"""The media types of the page's files (others are served as bytes)."""


class StaticFiles:
    """The page's files, read once into memory and answered as whole responses: an answer
    ends when its bytes are written, so an HTTP connection that keeps alive is closed after
    the keep-alive timeout like any other (a streamed file response waits for the client to
    go instead). Each has an ETag, and a request that names it is answered 304."""

    def __init__(self, folder: str) -> None:
        self.files: dict[str, tuple[bytes, str, str]] = {}
        root = Path(folder)
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in STATIC_TYPES:
                data = path.read_bytes()
                tag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                name = path.relative_to(root).as_posix()
                self.files[name] = (data, STATIC_TYPES[path.suffix], tag)

    def response(self, name: str, request: Request) -> Response:
        found = self.files.get(name)
        if found is None:
            return PlainTextResponse("not found", status_code=404)
        data, media_type, tag = found
        headers = {"ETag": tag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers=headers)
        return Response(data, media_type=media_type, headers=headers)


def page_routes(features: dict[str, bool], routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The page (``/``), its files (``/static``), what this server offers it
    (``/config.json``: ``{"play": bool, "watch": bool}``) and ``routes``."""
    files = StaticFiles(static_dir())

    async def index(request: Request) -> Response:
        return files.response("index.html", request)

    async def static(request: Request) -> Response:
        return files.response(str(request.path_params["name"]), request)

    async def config(request: Request) -> Response:
        del request
        return JSONResponse(features)

    return [
        Route("/", index),
        Route("/config.json", config),
        *routes,
        Route("/static/{name:path}", static),
    ]


def page_app(routes: Sequence[BaseRoute]) -> Starlette:
    """The application of ``routes``; its HTTP answers are gzipped for the browsers that ask
    (the page's modules shrink to about a third)."""
    return Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=1024)])


ABORT_AFTER = 1.0
"""Seconds a connection that is ending may still be writing before its TCP stream is closed
under it (longer than the connection's own flush, ``FLUSH_TIMEOUT``)."""


class StuckGuard:
    """Closes a socket's TCP stream under it when its connection is stuck in a write: once one
    of the events it watches is set, after ``ABORT_AFTER`` seconds, or at once if the handler
    is torn down (hypercorn's shutdown deadline) before the guard is let go (``release``)."""

    def __init__(self, socket: StarletteSocket) -> None:
        self.socket = socket
        self.released = False

    def release(self) -> None:
        """The socket ended cleanly: nothing to close under it."""
        self.released = True

    async def watch(self, event: trio.Event) -> None:
        try:
            await event.wait()
            await trio.sleep(ABORT_AFTER)
        except trio.Cancelled:
            if not self.released:
                await self._abort("the handler was stopped while a write could be stuck")
            raise
        await self._abort("a write did not end")

    async def _abort(self, reason: str) -> None:
        log.info("websocket_aborted", reason=reason)
        with trio.CancelScope(shield=True):
            await self.socket.abort()


class StarletteSocket:
    """An accepted starlette WebSocket as a ``MessageSocket``."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.closed = False

    async def receive(self) -> Message | None:
        if self.closed:
            return None
        try:
            message = await self.websocket.receive()
        except (WebSocketDisconnect, RuntimeError):
            message = {"type": "websocket.disconnect"}
        if message["type"] == "websocket.disconnect":
            self.closed = True
            return None
        text = message.get("text")
        if text is not None:
            return str(text)
        data = message.get("bytes")
        return bytes(data) if data is not None else ""

    async def send(self, message: Message) -> None:
        if self.closed:
            raise trio.BrokenResourceError("the WebSocket is closed")
        try:
            if isinstance(message, str):
                await self.websocket.send_text(message)
            else:
                await self.websocket.send_bytes(message)
        except Exception as exc:  # the ASGI server's own error for a socket that went
            self.closed = True
            raise trio.BrokenResourceError("the WebSocket is closed") from exc

    async def abort(self) -> None:
        """Close the TCP connection under the socket at once. hypercorn shields its writes
        from cancellation, so a write to a peer that does not read would otherwise block for
        good, and with it the connection's end and the server's shutdown; closing the stream
        makes that write fail."""
        self.closed = True
        stream = transport_of(self.websocket.scope)
        if stream is None:
            log.warning("websocket_abort_unavailable")
            return
        with trio.CancelScope(shield=True):
            await stream.aclose()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if self.closed or self.websocket.application_state == WebSocketState.DISCONNECTED:
            self.closed = True
            return
        self.closed = True
        try:
            await self.websocket.close(code, close_reason(reason))
        except Exception:  # already gone: nothing to close
            log.debug("close_failed")


def close_reason(text: str) -> str:
    """``text`` cut to what a close frame may carry: 123 bytes of UTF-8, whole characters."""
    data = text.encode("utf-8")
    if len(data) <= CLOSE_REASON_BYTES:
        return text
    return data[: CLOSE_REASON_BYTES - 3].decode("utf-8", "ignore") + "..."


class WebApp:
    """The page and ``/ws`` of one server (module docstring)."""

    def __init__(
        self,
        server: Server,
        runner: SearchRunner,
        *,
        peer_cap: int,
        seeds: random.Random | None = None,
        names: frozenset[str] = frozenset(),
    ) -> None:
        """``seeds``: where refereed bots' seeds come from (None: the operating system's
        randomness; a seeded generator replays games, for tests); ``names``: the host names
        the page may be loaded from besides addresses and ``localhost`` (``foreign_origin``)."""
        self.names = names
        self.server = server
        self.runner = runner
        self.peer_cap = peer_cap
        self.seeds = seeds
        self.per_host: Counter[str] = Counter()
        self.refused = 0
        self.referees: weakref.WeakSet[Referee] = weakref.WeakSet()
        """The refereed games being played (for the tests and for watching)."""

    def routes(self, extra: Sequence[BaseRoute] = ()) -> list[BaseRoute]:
        return page_routes(
            {"play": True, "watch": False}, [WebSocketRoute("/ws", self.protocol_socket), *extra]
        )

    def asgi(self, extra: Sequence[BaseRoute] = ()) -> ASGIApp:
        return keep_transport(page_app(self.routes(extra)))

    async def protocol_socket(self, websocket: WebSocket) -> None:
        client = websocket.client
        host = client.host if client is not None else "?"
        peer = f"{host}:{client.port if client is not None else 0}"
        foreign = foreign_origin(websocket.scope, self.names)
        if foreign is not None:
            # another site's page: refused before it is a WebSocket (HTTP 403), so that it
            # holds nothing of the peer's share
            self.refused += 1
            log.info("websocket_refused", peer=peer, reason=foreign)
            await websocket.close(CLOSE_POLICY)
            return
        mark_websocket(websocket.scope)
        await websocket.accept()
        socket = StarletteSocket(websocket)
        # the connection under the socket was admitted by the web port (every door's caps);
        # a peer's WebSockets have a cap of their own besides
        key = self.server.admission.peer(host)
        refusal = None
        if self.server.admission.stopping:
            refusal = "the server is stopping"
        elif self.peer_cap and self.per_host[key] >= self.peer_cap:
            refusal = f"{key} holds its limit of {self.peer_cap} WebSockets"
        if refusal is not None:
            self.refused += 1
            log.info("websocket_refused", peer=peer, reason=refusal)
            await socket.close(CLOSE_CAP, refusal)
            return
        self.per_host[key] += 1  # counted from now on, no wait before
        try:
            await self._serve(socket, peer)
        finally:
            self.per_host[key] -= 1
            if self.per_host[key] <= 0:
                del self.per_host[key]
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await socket.close()
                await end_websocket(websocket.scope)

    async def _serve(self, socket: StarletteSocket, peer: str) -> None:
        """One admitted socket: its game, its first message, then its connection."""
        try:
            config = self.server.config
            spec = parse_game_spec(
                socket.websocket.url.query,
                max_movetime=config.max_movetime,
                max_clock=config.max_clock,
            )
        except GameSpecError as exc:
            log.info("websocket_refused", peer=peer, reason=str(exc))
            await socket.close(CLOSE_BAD_GAME, str(exc))
            return
        game: RefereedGame | None = None
        if spec is not None:
            referee = Referee(
                spec,
                self.runner,
                peer=self.server.admission.peer(peer_host(peer)),
                seeds=self.seeds,
                max_plies=config.max_plies,
                max_movetime=config.max_movetime,
            )
            await referee.start()
            self.referees.add(referee)
            game = RefereedGame(referee)
        first = await self._first_message(socket)
        if first is None:
            await socket.close(CLOSE_NO_COMMAND, "no message in time, or the server stops")
            return
        framing = framing_of(first)
        receive = MessageReceiveStream(socket, framing, first)
        connection = self.server.connection(
            MessageSendStream(socket, framing),
            receive,
            peer=peer,
            framing=framing,
            referee=game,
        )

        async def refused(reason: str) -> None:
            await connection.send(m.ErrorReply(BAD_FRAME.code, BAD_FRAME.name, reason), None)

        receive.refused = refused
        ended = trio.Event()
        guard = StuckGuard(socket)
        async with trio.open_nursery() as guarding:
            # hypercorn shields its writes: a write to a peer that does not read blocks the
            # connection's end, or the close frame after it, until the stream is closed under
            # it, ABORT_AFTER seconds after the connection began to end
            guarding.start_soon(guard.watch, connection.ending)
            guarding.start_soon(guard.watch, ended)
            await self.server.run_connection(connection)
            ended.set()
            await socket.close()
            guard.release()
            guarding.cancel_scope.cancel()

    async def _first_message(self, socket: StarletteSocket) -> Message | None:
        """The socket's first message (its kind is the socket's framing); None when none comes
        within the first-command limit or the server stops first."""
        first: Message | None = None
        async with trio.open_nursery() as nursery:

            async def stopping() -> None:
                await self.server.stop.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(stopping)
            with trio.move_on_after(self.server.limits.first_command or float("inf")):
                first = await socket.receive()
            nursery.cancel_scope.cancel()
        return first

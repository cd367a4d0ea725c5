"""The ladder's web port (``ladder run --web PORT``): bots over WebSocket, the standings, the
games' records and the live games.

* ``/bot``: a WebSocket on which a bot speaks as on the TCP port (docs/protocol.md §11): its
  first message is its login, text messages carry the text framing (whole lines; a message's
  last line needs no line end) and binary ones msgpack. It is the same door
  (``door.Door``), admitted once with the web port's HTTP connection. A page of another site
  cannot open it (a bot sends no ``Origin``; a browser does).
* ``/ladder.json``: the standings, as ``enginesrv results DIR --json`` gives them.
* ``/games/GAME/ID``: the record of stored game ID of GAME, as text.
* ``/events``, ``/events/GAME``: the live games of the ladder's first game (or of GAME) as an
  event's watch feed (docs/web.md, "The event feed"): the page (``/``) follows them.
* ``/recent.json``: the last ``RECENT`` games stored of each game, the newest first.
* ``/players.json``: the players connected, whether each is free to be challenged, and the
  challenges played.
* ``/ws``: the protocol, as on ``serve --web``, from a server of rules only (its bot searches
  nothing): the page replays records with it, and ``/ws?game=...&opponent=ladder:NAME``
  plays a connected bot (``enginesrv.ladder.challenge``).
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import structlog
import trio
from anyio.abc import ByteStream
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from enginesrv.admission import Admission
from enginesrv.event.config import EventError
from enginesrv.event.feed import Feed
from enginesrv.event.play.controls import DEFAULT_MAX_PLIES
from enginesrv.event.results.files import read_stored_record
from enginesrv.ladder.challenge import LadderChallenges
from enginesrv.ladder.standings import ladder_json
from enginesrv.ladder.state import Ladder
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.catalog import prepare_handshake
from enginesrv.serve.limits import Limits
from enginesrv.serve.server import Server
from enginesrv.serve.settings import SessionConfig
from enginesrv.serve.tls import TlsDoor
from enginesrv.web.app import WS_PEER_CONNECTIONS, WebApp
from enginesrv.web.http import (
    KEEP_ALIVE,
    end_websocket,
    foreign_origin,
    keep_transport,
    mark_websocket,
    serve_http,
)
from enginesrv.web.pages import page_app, page_routes
from enginesrv.web.run import open_web, web_config
from enginesrv.web.sockets import CLOSE_CAP, CLOSE_POLICY, StarletteSocket, serve_feed
from enginesrv.web.transport import Message

CHALLENGE_CLOCK = 1_800_000
"""Milliseconds a challenge's clock may start with at most: half an hour."""
RECENT = 30
"""Games of each game ``/recent.json`` lists."""
NO_SEARCH = (
    "this server searches nothing: its page replays the ladder's games, and its games are "
    "against the ladder's bots (opponent=ladder:NAME)"
)
MAX_MESSAGE = 1 << 20
"""The largest WebSocket message taken (a login, a line or a frame of the protocol)."""
MAX_WATCHERS = 256
SEND_DELAY = 0.1

log = structlog.get_logger("enginesrv.ladder.web")


class SocketStream(ByteStream):
    """A bot's WebSocket as the byte stream the door reads (module docstring): each text
    message's lines, a line end added where its last line has none; each binary message's
    bytes; replies sent in the kind of the first message."""

    def __init__(self, socket: StarletteSocket) -> None:
        self.socket = socket
        self.kind: type[str] | type[bytes] | None = None
        self._held = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._held:
            message: Message | None = await self.socket.receive()
            if message is None:
                raise anyio.EndOfStream
            if self.kind is None:
                self.kind = type(message)
            if isinstance(message, str):
                self._held = (message if message.endswith("\n") else message + "\n").encode()
            else:
                self._held = message
        data, self._held = self._held[:max_bytes], self._held[max_bytes:]
        return data

    async def send(self, item: bytes) -> None:
        try:
            if self.kind is bytes:
                await self.socket.send(item)
            else:
                await self.socket.send(item.decode("utf-8", "replace"))
        except trio.BrokenResourceError:
            raise anyio.BrokenResourceError from None

    async def send_eof(self) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await self.socket.close()


class NoSearch:
    """The ``SearchRunner`` of a server whose sessions' bot searches nothing (``searches``
    refuses every ``go`` and ``analyse`` before one could come here)."""

    async def search(self, job: SearchJob, **kwargs: Any) -> SearchOutcome:
        del job, kwargs
        return SearchOutcome(None, error=NO_SEARCH)


def rules_server(ladder: Ladder, admission: Admission) -> Server:
    """The protocol server of the page's ``/ws``: rules only, its connections admitted
    with the ladder's others."""
    config = SessionConfig(
        name="enginesrv ladder",
        default_game=ladder.run.settings.games[0],
        searches=NO_SEARCH,
        max_clock=CHALLENGE_CLOCK,
        max_plies=DEFAULT_MAX_PLIES,
    )
    return Server(config, NoSearch(), Limits(), admission=admission)


class LadderWeb:
    """The routes of the web port (module docstring)."""

    def __init__(self, ladder: Ladder, feeds: dict[str, Feed], server: Server) -> None:
        self.ladder = ladder
        self.feeds = feeds
        self.watchers = 0
        self.challenges = LadderChallenges(ladder, ladder.run.challenges)
        self.app = WebApp(
            server, server.runner, peer_cap=WS_PEER_CONNECTIONS, challenges=self.challenges
        )

    def asgi(self) -> ASGIApp:
        routes = [
            WebSocketRoute("/bot", self.bot),
            WebSocketRoute("/ws", self.app.protocol_socket),
            WebSocketRoute("/events", self.events),
            WebSocketRoute("/events/{game}", self.events),
            Route("/ladder.json", self.standings),
            Route("/recent.json", self.recent),
            Route("/players.json", self.players),
            Route("/games/{game}/{number:int}", self.record),
        ]
        features = {"play": False, "watch": True, "ladder": True}
        return keep_transport(page_app(page_routes(features, routes)))

    async def bot(self, websocket: WebSocket) -> None:
        if websocket.headers.get("origin") is not None:
            await websocket.close(CLOSE_POLICY)  # a page's: bots send no Origin
            return
        door = self.ladder.door
        assert door is not None
        mark_websocket(websocket.scope)
        await websocket.accept()
        client = websocket.client
        host = client.host if client is not None else "unknown"
        try:
            await door.handle(SocketStream(StarletteSocket(websocket)), host, admitted=True)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await end_websocket(websocket.scope)

    async def events(self, websocket: WebSocket) -> None:
        if foreign_origin(websocket.scope) is not None:
            await websocket.close(CLOSE_POLICY)
            return
        game = websocket.path_params.get("game", self.ladder.run.settings.games[0])
        feed = self.feeds.get(str(game))
        mark_websocket(websocket.scope)
        await websocket.accept()
        socket = StarletteSocket(websocket)
        if feed is None or self.watchers >= MAX_WATCHERS:
            why = "no such game here" if feed is None else "the ladder has all its watchers"
            await socket.close(CLOSE_CAP, why)
            return
        self.watchers += 1
        try:
            await serve_feed(socket, feed, self.ladder.stop, SEND_DELAY)
        finally:
            self.watchers -= 1
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await socket.close()
                await end_websocket(websocket.scope)

    async def standings(self, request: Request) -> Response:
        del request
        ladder = self.ladder
        return JSONResponse(ladder_json(ladder.boards, ladder.run.settings.tc))

    async def recent(self, request: Request) -> Response:
        del request
        recent = {}
        for name, section in self.ladder.sections.items():
            rows = section.rows[-RECENT:][::-1]
            recent[name] = [
                {
                    "id": row.id,
                    "p1": row.p1,
                    "p2": row.p2,
                    "winner": str(row.winner),
                    "reason": row.reason,
                    "plies": row.plies,
                }
                for row in rows
            ]
        return JSONResponse({"games": recent})

    async def players(self, request: Request) -> Response:
        del request
        ladder = self.ladder
        found = []
        for name, links in sorted(ladder.lobby.links.items()):
            free = [link for link in links if not link.busy and link.alive and not link.revoked]
            games_ = sorted({game for link in links for game in link.games})
            house = any(link.house for link in links)
            found.append({"name": name, "house": house, "games": games_, "free": bool(free)})
        challenges = self.challenges
        return JSONResponse(
            {
                "games": list(ladder.run.settings.games),
                "players": found,
                "challenges": {"most": challenges.most, "playing": len(challenges.lent)},
            }
        )

    async def record(self, request: Request) -> Response:
        game = str(request.path_params["game"])
        number = int(request.path_params["number"])
        section = self.ladder.sections.get(game)
        row = None if section is None else section.row(number)
        if section is None or row is None:
            return PlainTextResponse("no such game\n", status_code=404)
        folder = section.folder / f"season-{row.round}"
        try:
            data = await trio.to_thread.run_sync(
                read_stored_record, folder, row.record or "", row.id
            )
        except (EventError, OSError):
            return PlainTextResponse("the record cannot be read\n", status_code=404)
        return Response(data, media_type="text/plain; charset=utf-8")


async def serve_ladder_web(
    ladder: Ladder,
    feeds: dict[str, Feed],
    admission: Admission,
    *,
    host: str,
    port: int,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the web port until the ladder stops; reports the page's address once served.
    With the run's ``tls`` the port speaks TLS only (the bots' ``/bot`` sockets carry their
    tokens), and takes the renewed certificates the ladder is given (``Ladder.tls_users``).

    Raises:
        OSError: the address cannot be listened on.
    """
    server = rules_server(ladder, admission)
    prepare_handshake(server.config.default_bot)  # not on the loop at the first page's ugi
    app = LadderWeb(ladder, feeds, server).asgi()
    listeners, page = await open_web(host, port)
    door = None
    if ladder.run.tls is not None:  # the certificate of now: a reload may have come since start
        door = TlsDoor(ladder.run.tls, KEEP_ALIVE)
        ladder.tls_users.append(door.use)
        page = page.replace("http://", "https://", 1)
    serving = functools.partial(
        serve_http,
        app,
        web_config(MAX_MESSAGE),
        listeners,
        admission,
        door="web",
        stop=ladder.stop,
        tls=door,
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_with, ladder, server)
        await nursery.start(serving)
        task_status.started(page)


async def _stop_with(ladder: Ladder, server: Server) -> None:
    """Stop the page's protocol sessions with the ladder."""
    await ladder.stop.wait()
    server.stop.set()
    server.shutdown()

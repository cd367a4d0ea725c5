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

import functools
import random
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import parse_qsl, urlencode

import structlog
import trio
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from enginesrv.admission import WEBSOCKETS_PER_PEER
from enginesrv.search.child import SearchRunner
from enginesrv.serve.connection import peer_host
from enginesrv.serve.hooks import RefereeHooks
from enginesrv.serve.server import Server
from enginesrv.tokens import Grant
from enginesrv.web.challenge import Challenges, Opponent
from enginesrv.web.gamespec import INVITE, GameSpec, GameSpecError, parse_game_spec
from enginesrv.web.http import (
    end_websocket,
    foreign_origin,
    keep_transport,
    mark_websocket,
)
from enginesrv.web.pages import page_app, page_routes
from enginesrv.web.referee import Referee
from enginesrv.web.refereed import RefereedGame
from enginesrv.web.signin import CLOSE_AUTH, signed_in, until_revoked
from enginesrv.web.sockets import (
    CLOSE_BAD_GAME,
    CLOSE_CAP,
    CLOSE_NO_COMMAND,
    CLOSE_POLICY,
    StarletteSocket,
    StuckGuard,
)
from enginesrv.web.table import GRACE, TableError
from enginesrv.web.tables import KEY, SeatGame, SeatHeldError, Tables, tell_table, watch_table
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

log = structlog.get_logger("enginesrv.web")


class WebApp:
    """The page, ``/ws`` and the spectators' ``/events`` of one server (module docstring)."""

    def __init__(
        self,
        server: Server,
        runner: SearchRunner,
        *,
        peer_cap: int,
        seeds: random.Random | None = None,
        names: frozenset[str] = frozenset(),
        grace: float = GRACE,
        challenges: Challenges | None = None,
    ) -> None:
        """``seeds``: where refereed bots' seeds come from (None: the operating system's
        randomness; a seeded generator replays games, for tests); ``names``: the host names
        the page may be loaded from besides addresses and ``localhost`` (``foreign_origin``);
        ``grace``: the seconds a player of a game between two pages may be away;
        ``challenges``: the players this server's games are against instead of its bots and
        people (a ladder's: ``enginesrv.web.challenge``)."""
        self.names = names
        self.challenges = challenges
        self.server = server
        self.runner = runner
        self.peer_cap = peer_cap
        self.seeds = seeds
        self.per_host: Counter[str] = Counter()
        self.refused = 0
        self.referees: weakref.WeakSet[Referee] = weakref.WeakSet()
        """The refereed games being played (for the tests and for watching)."""
        self.tables = Tables(runner, max_plies=server.config.max_plies, grace=grace)

    def routes(self, extra: Sequence[BaseRoute] = ()) -> list[BaseRoute]:
        sockets = [
            WebSocketRoute("/ws", self.protocol_socket),
            WebSocketRoute("/events", self.spectate),
            *extra,
        ]
        auth = self.server.keeper is not None
        return page_routes({"play": True, "watch": False, "invite": True, "auth": auth}, sockets)

    def asgi(self, extra: Sequence[BaseRoute] = ()) -> ASGIApp:
        return keep_transport(page_app(self.routes(extra)))

    async def protocol_socket(self, websocket: WebSocket) -> None:
        await self._admitted(websocket, self._serve)

    async def spectate(self, websocket: WebSocket) -> None:
        await self._admitted(websocket, self._watch)

    async def _admitted(
        self, websocket: WebSocket, serve: Callable[[StarletteSocket, str], Awaitable[None]]
    ) -> None:
        """Accept a WebSocket of the server's own page within its peer's cap, and ``serve`` it."""
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
            await serve(socket, peer)
        finally:
            self.per_host[key] -= 1
            if self.per_host[key] <= 0:
                del self.per_host[key]
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await socket.close()
                await end_websocket(websocket.scope)

    def _game_of(self, query: str, peer: str, grant: Grant | None) -> RefereeHooks | None:
        """The game a ``/ws`` address asks for: a bot's or one screen's, a new table, or a
        player's seat at one (``GameSpecError`` or ``TableError`` when it cannot be had);
        a bot's searches count against ``grant``'s account, when the page has one."""
        fields = dict(parse_qsl(query, keep_blank_values=True))
        key = fields.pop("key", "")
        if key and not KEY.fullmatch(key):
            raise GameSpecError("key: write 16 to 64 letters, digits, - or _ (the browser's own)")
        if "table" in fields:
            if len(fields) > 1:
                raise GameSpecError("table: a player's link has no other field but key")
            found = self.tables.player(fields["table"])
            if found is None:
                raise GameSpecError("table: no game has this link (it may have ended long ago)")
            return SeatGame(*found, key)
        config = self.server.config
        kind = "" if self.challenges is None else self.challenges.kind
        spec = parse_game_spec(
            urlencode(fields),
            max_movetime=config.max_movetime,
            max_clock=config.max_clock,
            external=kind,
        )
        owner = self.server.admission.peer(peer_host(peer))
        if spec is not None and self.challenges is not None:
            return self._challenge(spec, owner, self.challenges)
        if spec is not None and spec.opponent == INVITE:
            table = self.tables.create(spec, owner, key)
            return SeatGame(table, 0, table.players[0].key or key)
        if key:
            raise GameSpecError("key: only a game between two pages takes one")
        if spec is None:
            return None
        keeper = self.server.keeper
        if grant is None or keeper is None:
            return RefereedGame(self._referee(spec, owner))
        return RefereedGame(self._referee(spec, *keeper.searching(self.runner, grant)))

    def _referee(
        self,
        spec: GameSpec,
        owner: str,
        runner: SearchRunner | None = None,
        opponent: Opponent | None = None,
    ) -> Referee:
        """The referee of a game of ``owner``'s page against a bot searching on ``runner``
        (by default the server's) or ``opponent`` (not one of the server's), kept for the
        tests and for watching."""
        config = self.server.config
        referee = Referee(
            spec,
            runner or self.runner,
            peer=owner,
            seeds=self.seeds,
            max_plies=config.max_plies,
            max_movetime=config.max_movetime,
            opponent=opponent,
        )
        self.referees.add(referee)
        return referee

    def _challenge(self, spec: GameSpec, owner: str, challenges: Challenges) -> RefereedGame:
        """A game against a player of ``challenges`` (``GameSpecError`` or ``TableError``
        when it cannot be had)."""
        prefix = challenges.kind + ":"
        if not spec.opponent.startswith(prefix):
            raise GameSpecError(
                f"opponent {spec.opponent[:40]!r}: the games here are against its "
                f"{challenges.kind}'s bots: write {prefix}NAME"
            )
        if spec.control is None:
            raise GameSpecError(f"tc: a game against the {challenges.kind}'s bots has a clock")
        opponent = challenges.claim(spec, spec.opponent.removeprefix(prefix), owner)
        referee = self._referee(spec, owner, opponent=opponent)
        return RefereedGame(referee, functools.partial(challenges.release, opponent))

    async def _signed_in(self, socket: StarletteSocket, peer: str) -> Grant | None:
        """The socket's grant (None: refused, or a server without tokens)."""
        if self.server.keeper is None:
            return None
        wait = self.server.limits.first_command or float("inf")
        key = self.server.admission.peer(peer_host(peer))
        return await signed_in(socket, self.server.keeper, key, wait, self.server.stop)

    async def _serve(self, socket: StarletteSocket, peer: str) -> None:
        """One admitted socket: its token, its game, its first message, then its
        connection."""
        grant = await self._signed_in(socket, peer)
        if grant is None and self.server.keeper is not None:
            return
        try:
            game = self._game_of(socket.websocket.url.query, peer, grant)
            if isinstance(game, SeatGame):
                self.tables.join(game.table, game.player, game.key)
        except (GameSpecError, TableError) as exc:
            log.info("websocket_refused", peer=peer, reason=str(exc))
            bad = isinstance(exc, GameSpecError | SeatHeldError)
            code = CLOSE_BAD_GAME if bad else CLOSE_CAP
            await socket.close(code, str(exc))
            return
        try:
            failed = await game.start() if isinstance(game, RefereedGame) else None
            if failed is not None:
                await socket.close(CLOSE_CAP, failed)
                return
            async with trio.open_nursery() as nursery:
                if isinstance(game, RefereedGame) and game.referee.final:
                    nursery.start_soon(game.release_at_end)
                await self._converse(socket, peer, game, grant)
                nursery.cancel_scope.cancel()
        finally:
            if isinstance(game, SeatGame):
                game.table.leave(game.player)
            elif isinstance(game, RefereedGame):
                await game.release()

    async def _converse(
        self, socket: StarletteSocket, peer: str, game: RefereeHooks | None, grant: Grant | None
    ) -> None:
        """The socket's first message, then its protocol connection."""
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
            grant=grant,
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
            if isinstance(game, SeatGame):
                guarding.start_soon(tell_table, game, connection)
            await self.server.run_connection(connection)
            ended.set()
            if connection.refused is None:
                await socket.close()
            else:  # the page asks for a token again (docs/web.md, "Signing in")
                await socket.close(CLOSE_AUTH, connection.refused)
            guard.release()
            guarding.cancel_scope.cancel()

    async def _watch(self, socket: StarletteSocket, peer: str) -> None:
        """A spectator of a table: its feed, until either side goes."""
        grant = await self._signed_in(socket, peer)
        if grant is None and self.server.keeper is not None:
            return
        fields = dict(parse_qsl(socket.websocket.url.query, keep_blank_values=True))
        table = self.tables.watched(fields.get("watch", ""))
        refusal = (
            "watch: no game has this link (it may have ended long ago)"
            if table is None
            else self.tables.spectator_refusal(table, self.server.admission)
        )
        if table is None or refusal is not None:
            log.info("websocket_refused", peer=peer, reason=refusal)
            await socket.close(CLOSE_BAD_GAME if table is None else CLOSE_CAP, refusal or "")
            return
        table.watchers += 1
        self.tables.watchers += 1
        try:
            feed = functools.partial(watch_table, socket, table, self.server.stop)
            keeper = self.server.keeper
            await (
                feed()
                if grant is None or keeper is None
                else until_revoked(socket, keeper, grant, feed)
            )
        finally:
            table.watchers -= 1
            self.tables.watchers -= 1

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

"""The ladder's door: where bots connect (docs/protocol.md §11, docs/ladder.md).

A connection is first admitted (``enginesrv.admission``: the caps on connections, per peer
and in all, shared with the ladder's web port), then must log in within ``LOGIN_TIMEOUT``
seconds (``protocol.login``). The token is checked against the token file as it is now (a
revoked player is refused at once), one at a time in a thread of the lowest priority
(``Checker``), so that a flood of logins takes from the games nothing but idle time. A
failed login counts against its address (``tries``): an address that failed too often is
refused before its token is looked at. Every refusal is the one fatal error
``306 login-refused``, whose text says nothing of which part was wrong.

An accepted connection is greeted as an engine (``ugi``, its ``id`` and ``ugiok``) and joins
the lobby as a link of its player; it plays the ladder's games its engine names (``id``'s
games), or, when it names none (a plain UGI engine), the ladder's first game.
"""

from __future__ import annotations

import contextlib
import functools
import math
import ssl
from pathlib import Path

import anyio
import structlog
import trio
from anyio.abc import ByteStream
from anyio.streams.tls import TLSStream

from enginesrv.admission import Admission, Ticket
from enginesrv.checker import Checker, CheckerBusyError
from enginesrv.client import AsyncEngine, ClientError, EngineInfo
from enginesrv.event.play.players import Deadlines
from enginesrv.ladder.accounts import players
from enginesrv.ladder.lobby import Link, Lobby
from enginesrv.ladder.reads import LinkStream, LoopBudget
from enginesrv.serve.outbox import encode
from enginesrv.tokens import TokenFileError
from enginesrv.tries import Tries
from protocol import messages as m
from protocol.errors import LOGIN_REFUSED, ErrorCode, ProtocolError
from protocol.login import Login, LoginReader
from protocol.sniff import Framing, sniff

DRAIN_SECONDS = 1.0
DRAIN_BYTES = 1 << 20
"""How long, and how much, a refused connection is read after its refusal (module
docstring of ``_refuse``)."""
LOGIN_TIMEOUT = 10.0
"""Seconds a new connection has to send its login."""

log = structlog.get_logger("enginesrv.ladder.door")


class RefusedError(Exception):
    """A connection refused with ``code`` and a message."""

    def __init__(self, code: ErrorCode, message: str, framing: Framing = "text") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.framing = framing


def playable(info: EngineInfo, ladder_games: tuple[str, ...]) -> frozenset[str]:
    """The ladder's games an engine plays: those it names, or the first with none named."""
    named = {game.name for game in info.games}
    if not named:
        return frozenset(ladder_games[:1])
    return frozenset(game for game in ladder_games if game in named)


class Door:
    """The ladder's door (module docstring)."""

    def __init__(
        self,
        folder: Path,
        lobby: Lobby,
        admission: Admission,
        games: tuple[str, ...],
        deadlines: Deadlines,
        *,
        tries: Tries | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.tokens = players(folder)
        self.lobby = lobby
        self.admission = admission
        self.games = games
        self.deadlines = deadlines
        self.tries = tries or Tries()
        self.tls = tls
        """With a context: every connection speaks TLS (its handshake once admitted)."""
        self.checker = Checker()
        self.budgets: dict[str, LoopBudget] = {}
        """Each player's share of the loop, kept across its connections (one that comes
        back finds what it spent still spent); one an account at most."""
        self.refused = 0
        self.accepted = 0

    def use(self, tls: ssl.SSLContext) -> None:
        """Give the new connections ``tls`` (a renewed certificate)."""
        self.tls = tls

    async def handle(self, stream: ByteStream, host: str, *, admitted: bool = False) -> None:
        """Serve one connection from ``host`` until it ends (never raises); ``admitted``:
        its connection holds a ticket already, and its TLS is the web port's (a WebSocket
        of the web port)."""
        ticket = None if admitted else self.admission.admit(host, "ladder")
        try:
            if isinstance(ticket, str):
                self.refused += 1
                return  # over a cap: closed with nothing sent (docs/protocol.md, 303)
            with ticket or contextlib.nullcontext(), trio.CancelScope() as scope:
                if ticket is not None:  # until it has logged in, a newcomer may take its place
                    ticket.on_evict = lambda why: scope.cancel()
                if self.tls is not None and not admitted:
                    stream = await self._tls(stream)
                await self._serve(stream, host, ticket)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        except (OSError, ssl.SSLError):
            pass
        except Exception as exc:  # a fault of the door: one connection lost, never the ladder
            log.error("ladder_door_fault", peer=host, detail=repr(exc)[:240])
        finally:
            await anyio.aclose_forcefully(stream)

    async def _tls(self, stream: ByteStream) -> ByteStream:
        """``stream`` once its TLS handshake is done, within the login's time (after the
        connection was admitted: a handshake is a held connection)."""
        assert self.tls is not None
        with anyio.fail_after(LOGIN_TIMEOUT):
            try:
                return await TLSStream.wrap(
                    stream, server_side=True, ssl_context=self.tls, standard_compatible=False
                )
            except TimeoutError:
                raise anyio.BrokenResourceError from None

    async def _serve(self, stream: ByteStream, host: str, ticket: Ticket | None) -> None:
        try:
            await self._session(stream, host, ticket)
        except RefusedError as exc:
            self.refused += 1
            await self._refuse(stream, exc)

    async def _refuse(self, stream: ByteStream, exc: RefusedError, *, drain: bool = True) -> None:
        """Send the refusal, then (``drain``: nothing else reads the stream) read what the
        peer still sends for a moment, so that it gets an end of stream, not a reset that
        could drop the refusal on its way."""
        reply = m.ErrorReply(exc.code.code, exc.code.name, exc.message)
        caught = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream)
        with anyio.move_on_after(self.deadlines.ready), contextlib.suppress(*caught, OSError):
            await stream.send(encode(exc.framing, reply, None))
            with contextlib.suppress(NotImplementedError, *caught, OSError):
                await stream.send_eof()
            if not drain:
                return
            with anyio.move_on_after(DRAIN_SECONDS):
                drained = 0
                while drained < DRAIN_BYTES:
                    drained += len(await stream.receive(65536))

    async def _session(self, stream: ByteStream, host: str, ticket: Ticket | None) -> None:
        login, rest = await self._login(stream)
        peer = self.admission.peer(host)
        digest = await self._check(login, peer)
        if ticket is not None:  # a player's connection: no newcomer takes its place
            ticket.on_evict = None
            if self.admission.may_trust():
                ticket.trust()
        why = self.lobby.refusal(login.name)
        if why is not None:
            raise RefusedError(LOGIN_REFUSED, why, login.framing)
        with self.lobby.holding(login.name):  # its slot, from now until it joins or fails
            try:
                engine = await AsyncEngine.over(
                    LinkStream(stream, rest, self._budget_of(login.name)),
                    login.name,  # in messages, records and pages: never its address
                    framing=login.framing,
                    timeout=self.deadlines.startup,
                )
            except ClientError as exc:
                log.info("ladder_greeting_failed", player=login.name, peer=host, detail=str(exc))
                return
            games = playable(engine.info, self.games)
            if not games:
                # told before the connection is closed (and sent nothing after: no quit)
                await self._refuse(
                    stream,
                    RefusedError(
                        LOGIN_REFUSED,
                        f"the engine plays none of the ladder's games ({', '.join(self.games)})",
                        login.framing,
                    ),
                    drain=False,  # the engine's reader reads the stream
                )
                self.refused += 1
                await anyio.aclose_forcefully(stream)
                with trio.CancelScope(shield=True):
                    await engine.aclose()
                return
            link = Link(login.name, engine, host, games, digest=digest)
            self.lobby.join(link)
        try:
            self.accepted += 1
            log.info("ladder_joined", player=login.name, peer=host, games=sorted(games))
            try:
                await engine.wait_closed()
            finally:
                self.lobby.leave(link)
                log.info("ladder_left", player=login.name, peer=host)
        finally:
            with trio.CancelScope(shield=True):
                await engine.aclose()

    async def _login(self, stream: ByteStream) -> tuple[Login, bytes]:
        reader = LoginReader()
        first = b""
        with anyio.move_on_after(LOGIN_TIMEOUT):
            while True:
                try:
                    data = await stream.receive(512)
                except anyio.EndOfStream:
                    raise anyio.BrokenResourceError from None
                first = first or data[:1]
                try:
                    login = reader.feed(data)
                except ProtocolError as exc:
                    raise RefusedError(exc.error, exc.message, _framing(first)) from None
                if login is not None:
                    return login, reader.rest
        raise RefusedError(LOGIN_REFUSED, f"no login within {LOGIN_TIMEOUT:g} s", _framing(first))

    def _budget_of(self, name: str) -> LoopBudget:
        """``name``'s share of the loop (a new one at its first login), sized by the
        connections it holds."""
        budget = self.budgets.get(name)
        if budget is None:
            budget = self.budgets[name] = LoopBudget(functools.partial(self.lobby.held, name))
        return budget

    async def _check(self, login: Login, peer: str) -> str:
        wait = self.tries.wait(peer)
        if wait > 0:
            raise RefusedError(
                LOGIN_REFUSED,
                f"too many failed logins from {peer}: try again in {math.ceil(wait)} s",
                login.framing,
            )
        if self.lobby.is_house(login.name):
            raise RefusedError(
                LOGIN_REFUSED, f"{login.name} is a house bot of this ladder", login.framing
            )
        # the try is counted before the check and given back if it succeeds, so that logins
        # at once from one address get no more checks than logins one after the other
        self.tries.failed(peer)
        try:
            grant = await self.checker.check(self.tokens, login.name, login.token)
        except CheckerBusyError:  # busy: not a try
            self.tries.refund(peer)
            raise RefusedError(
                LOGIN_REFUSED, "the ladder is busy with other logins: try again", login.framing
            ) from None
        except TokenFileError as exc:
            log.error("ladder_tokens_unreadable", detail=str(exc))
            self.tries.refund(peer)
            raise RefusedError(
                LOGIN_REFUSED, "the ladder cannot read its players now", login.framing
            ) from None
        if grant is None:
            raise RefusedError(
                LOGIN_REFUSED, "the name or the token is not accepted", login.framing
            )
        self.tries.refund(peer)
        return grant.digest


def _framing(first: bytes) -> Framing:
    """The framing a connection's first byte picks (text when it picks none)."""
    return (sniff(first[0]) if first else None) or "text"

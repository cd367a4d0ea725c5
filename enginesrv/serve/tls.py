"""The TLS of a server's protocol port (``serve --tls-cert --tls-key``; docs/protocol.md §2).

A connection, once admitted, does its TLS handshake within the ``firstcommand`` limit (or
until the server stops); the framing rule of §2 then applies inside it. A client that speaks
the protocol in the clear is told so, in its framing, and closed.

A handshake costs the event loop about a millisecond of work, so that a flood of them would
slow every other client down. Two rules keep it from doing so:

* a peer does at most ``HANDSHAKES_PER_PEER`` handshakes at once (its other connections wait
  their turn, within their time limit): a flood from a few addresses takes a few handshakes'
  time of each turn of the loop;
* on a server with tokens, a peer that has presented too many wrong ones (``Tries``) has its
  connections closed at once, before their handshake: guessing tokens costs the server
  nothing but an accepted and closed connection (the refusal's words would need the
  handshake; the wait is the same as the refusal would say).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import AsyncIterator
from typing import Any

import structlog
import trio

from enginesrv.serve.auth import Keeper
from enginesrv.serve.outbox import encode
from protocol import messages as m
from protocol.errors import BAD_FRAME
from protocol.sniff import sniff

TLS_HANDSHAKE_BYTE = 0x16
"""The first byte of a TLS handshake (a ClientHello record)."""
HANDSHAKES_PER_PEER = 2
"""TLS handshakes one peer does at once."""
CLEAR_DRAIN = 1 << 16
"""Bytes read at most from a client in the clear after its refusal."""

log = structlog.get_logger("enginesrv.serve.tls")


class TlsDoor:
    """The TLS context of a port and its handshakes under way (module docstring)."""

    def __init__(self, context: ssl.SSLContext, limit: float, keeper: Keeper | None = None) -> None:
        """``limit``: the seconds a handshake may take (0: no limit); ``keeper``: the
        server's tokens, whose tries shut a peer out."""
        self.context = context
        self.limit = limit or float("inf")
        self.keeper = keeper
        self.handshaking: dict[str, trio.CapacityLimiter] = {}
        """Each peer's handshakes at once (a peer is dropped once it has none)."""
        self.refused = 0

    def use(self, context: ssl.SSLContext) -> None:
        """Give the port's new connections ``context`` (a renewed certificate)."""
        self.context = context

    def shut_out(self, peer: str) -> bool:
        """Whether ``peer`` is refused before its handshake (it presented too many wrong
        tokens), counted and logged."""
        if self.keeper is None or self.keeper.tries.wait(peer) <= 0:
            return False
        self.refused += 1
        log.info("tls_refused", peer=peer, reason="too many wrong tokens")
        return True

    @contextlib.asynccontextmanager
    async def turn(self, peer: str) -> AsyncIterator[None]:
        """One of ``peer``'s handshakes at once, within the time limit (its end cancels the
        block)."""
        limiter = self.handshaking.get(peer)
        if limiter is None:
            limiter = self.handshaking[peer] = trio.CapacityLimiter(HANDSHAKES_PER_PEER)
        try:
            with trio.move_on_after(self.limit):
                async with limiter:
                    yield
        finally:
            if limiter.borrowed_tokens == 0 and limiter.statistics().tasks_waiting == 0:
                self.handshaking.pop(peer, None)

    async def handshake(self, secure: trio.SSLStream[Any], peer: str, stop: trio.Event) -> bool:
        """Whether ``secure``'s handshake is done, in ``peer``'s turn and time, before
        ``stop`` (a web port's connection: hypercorn reads its requests over ``secure``)."""
        if self.shut_out(peer):
            return False
        async with self.turn(peer):
            if self.shut_out(peer):  # its tries ran out while it waited its turn
                return False
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cancel_on, stop, nursery.cancel_scope)
                try:  # caught here, not out of the nursery as a group
                    await secure.do_handshake()
                    return True
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    pass
                finally:
                    nursery.cancel_scope.cancel()
        self.refused += 1
        log.info("tls_refused", peer=peer)
        return False

    async def secure(
        self, stream: trio.SocketStream, peer: str, stop: trio.Event
    ) -> trio.abc.Stream:
        """``stream`` once its TLS handshake is done, or ``stream`` itself when it has none
        (the module docstring's reasons, the time limit, or ``stop``): the protocol port's
        connections, whose client in the clear is told so."""
        if self.shut_out(peer):
            return stream
        secure = trio.SSLStream(stream, self.context, server_side=True, https_compatible=False)
        with trio.move_on_after(self.limit) as waited:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cancel_on, stop, nursery.cancel_scope)
                try:
                    if await self._first(stream, secure, peer):
                        return secure
                finally:
                    nursery.cancel_scope.cancel()
        self.refused += 1
        log.info("tls_refused", peer=peer, late=waited.cancelled_caught)
        return stream

    async def _first(
        self, stream: trio.SocketStream, secure: trio.SSLStream[trio.SocketStream], peer: str
    ) -> bool:
        """Whether ``secure``'s handshake is done (False: the client spoke in the clear, and
        was told so, or its connection broke)."""
        try:
            first = await stream.socket.recv(1, socket.MSG_PEEK)
            if first[:1] != bytes([TLS_HANDSHAKE_BYTE]):
                await _clear_refusal(stream, first)
                return False
            async with self.turn(peer):
                if self.shut_out(peer):  # its tries ran out while it waited its turn
                    return False
                await secure.do_handshake()
                return True
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        return False


async def _cancel_on(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _clear_refusal(stream: trio.SocketStream, first: bytes) -> None:
    """Tell a client that speaks the protocol in the clear to a TLS port so, in its framing
    (nothing to one that speaks neither)."""
    framing = sniff(first[0]) if first else None
    if framing is None:
        return
    reply = m.ErrorReply(BAD_FRAME.code, BAD_FRAME.name, "this port speaks TLS only")
    with trio.move_on_after(1):
        await stream.send_all(encode(framing, reply, None))
        await stream.send_eof()
        # what it sent is read (a little, for a moment), so that it gets the refusal and an
        # end of stream rather than a reset that could drop the refusal on its way
        drained = 0
        while drained < CLEAR_DRAIN and (chunk := await stream.receive_some(65536)):
            drained += len(chunk)

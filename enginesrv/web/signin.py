"""A WebSocket's token, on a server with tokens (``enginesrv serve --tokens``; docs/web.md).

The page (or any program) sends its token as the socket's first message, before the socket
is anything else: a text message ``auth NAME:TOKEN`` or a binary message holding the
msgpack ``auth`` request. Only then is its game looked for, its seat taken or its table
watched, so that a page without a token makes the server do nothing but check one (at the
``Keeper``'s cost and rate: ``enginesrv.serve.auth``). An accepted token is answered as
``auth`` is (text: nothing; msgpack: its response), a refused one with ``error 307
auth-refused`` in the message's framing and the close code ``CLOSE_AUTH``. The token is
never in the page's address, where proxies and logs would keep it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from enginesrv.serve.auth import AuthRefusedError, Keeper, refusal
from enginesrv.serve.connection import TOKEN_LOOK
from enginesrv.serve.outbox import encode
from enginesrv.serve.settings import Framing
from enginesrv.tokens import Grant
from enginesrv.web.sockets import CLOSE_NO_COMMAND, StarletteSocket
from enginesrv.web.transport import Message, framing_of
from protocol import messages as m
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder
from protocol.text import TextDecoder

CLOSE_AUTH = 4401
"""The close code of a socket whose token was not accepted (or that sent none first)."""
FIRST = "auth first: a socket's first message is auth NAME:TOKEN, alone"


async def signed_in(
    socket: StarletteSocket, keeper: Keeper, peer: str, wait: float, stop: trio.Event
) -> Grant | None:
    """What the token of the socket's first message grants; None once the socket is
    refused and closed (no message within ``wait`` seconds or before ``stop``, no token, a
    token refused)."""
    first: Message | None = None
    with trio.move_on_after(wait):
        async with trio.open_nursery() as nursery:

            async def stopping() -> None:
                await stop.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(stopping)
            first = await socket.receive()
            nursery.cancel_scope.cancel()
    if first is None:
        await socket.close(CLOSE_NO_COMMAND, "no token in time, or the server stops")
        return None
    framing = framing_of(first)
    word, msgid = token_of(first)
    try:
        if word is None:
            raise AuthRefusedError(FIRST)
        grant = await keeper.check(word, peer)
    except AuthRefusedError as exc:
        await _send(socket, framing, refusal(exc), msgid)
        await socket.close(CLOSE_AUTH, exc.message)
        return None
    if framing == "msgpack" and msgid is not None:
        await _send(socket, framing, m.Ack(), msgid)
    return grant


async def until_revoked(
    socket: StarletteSocket, keeper: Keeper, grant: Grant, serve: Callable[[], Awaitable[None]]
) -> None:
    """``serve`` the socket (a spectator's feed) until it ends, or until ``grant``'s token is
    revoked: then the socket is closed with ``CLOSE_AUTH`` (looked at every ``TOKEN_LOOK``
    seconds, as a protocol connection's token is)."""
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            while not keeper.revoked(grant):
                await trio.sleep(TOKEN_LOOK)
            await socket.close(CLOSE_AUTH, "the token was revoked")
            nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        await serve()
        nursery.cancel_scope.cancel()


def token_of(message: Message) -> tuple[str | None, int | None]:
    """The token of a message holding one ``auth`` command and nothing else, and the
    msgpack request's id (None, None for any other message)."""
    data = message.encode("utf-8", "replace") if isinstance(message, str) else message
    first: object = None
    rest: object = None
    try:
        if isinstance(message, str):
            text = TextDecoder("server")
            text.feed(data if data.endswith(b"\n") else data + b"\n")
            first, rest = text.next_message(), text.next_message()
        else:
            frames = MsgpackDecoder("server")
            frames.feed(data)
            first, rest = frames.next_message(), frames.next_message()
    except ProtocolError:
        return None, None
    if isinstance(first, m.Request) and isinstance(first.command, m.Auth) and rest is None:
        return first.command.token, first.msgid
    return None, None


async def _send(
    socket: StarletteSocket, framing: Framing, reply: m.Reply, msgid: int | None
) -> None:
    try:
        data = encode(framing, reply, msgid)
        await socket.send(data.decode("utf-8") if framing == "text" else data)
    except trio.BrokenResourceError:
        pass

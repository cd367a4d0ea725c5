"""One WebSocket as the byte streams of a protocol ``Connection``.

The framing of a socket is the kind of its first message: text messages carry the text framing,
binary messages msgpack-RPC (docs/web.md). Each message holds whole lines or whole frames:

* a text message's last line needs no newline (the end of the message ends it);
* a binary message that ends inside a frame is refused whole, with an error, and so is a
  message of the other kind; the session goes on.

Replies leave as the connection's writer batches them (whole replies, never a part of one),
one message per batch, in the socket's kind. The socket itself is reached through
``MessageSocket``, so the tests can stand in for the ASGI server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import trio

from enginesrv.serve.settings import Framing
from protocol.rpc import frames_problem

Message = str | bytes


class MessageSocket(Protocol):
    """The two directions of an accepted WebSocket."""

    async def receive(self) -> Message | None:
        """The next message; None once the peer has closed (or the socket broke)."""

    async def send(self, message: Message) -> None:
        """Send one message; raises ``trio.BrokenResourceError`` once the peer is gone."""


def framing_of(message: Message) -> Framing:
    """The framing a socket speaks when this is its first message."""
    return "text" if isinstance(message, str) else "msgpack"


class MessageReceiveStream(trio.abc.ReceiveStream):
    """The bytes of a socket's messages, checked message by message (module docstring)."""

    def __init__(self, socket: MessageSocket, framing: Framing, first: Message) -> None:
        self.socket = socket
        self.framing = framing
        self.refused: Callable[[str], Awaitable[None]] | None = None
        """Called with the reason when a message is refused (the connection sends an error)."""
        self._buffer = b""
        self._first: Message | None = first
        self._closed = False

    async def _refuse(self, reason: str) -> None:
        if self.refused is not None:
            await self.refused(reason)

    async def _bytes_of(self, message: Message) -> bytes | None:
        """The bytes to decode of a message, or None when it is refused or empty."""
        if self.framing == "text":
            if not isinstance(message, str):
                await self._refuse(
                    f"a binary message of {len(message)} bytes on a socket that speaks text "
                    "(its first message was text): send text messages only"
                )
                return None
            if not message:
                return None
            data = message.encode()
            return data if data.endswith(b"\n") else data + b"\n"
        if isinstance(message, str):
            await self._refuse(
                f"a text message ({message[:40]!r}) on a socket that speaks msgpack (its first "
                "message was binary): send binary messages only"
            )
            return None
        if not message:
            return None
        problem = frames_problem(message)
        if problem is not None:
            await self._refuse(
                f"a binary message of {len(message)} bytes is refused whole: {problem}; a "
                "message must hold whole msgpack frames"
            )
            return None
        return message

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._closed:
            raise trio.ClosedResourceError("the stream is closed")
        while not self._buffer:
            if self._first is not None:
                message: Message | None = self._first
                self._first = None
            else:
                message = await self.socket.receive()
            if message is None:
                return b""
            data = await self._bytes_of(message)
            if data is not None:
                self._buffer = data
        size = len(self._buffer) if max_bytes is None else max(1, max_bytes)
        chunk, self._buffer = self._buffer[:size], self._buffer[size:]
        return chunk

    async def aclose(self) -> None:
        self._closed = True
        await trio.lowlevel.checkpoint()


class MessageSendStream(trio.abc.SendStream):
    """Each ``send_all`` is one message of the socket's kind (the writer sends whole replies)."""

    def __init__(self, socket: MessageSocket, framing: Framing) -> None:
        self.socket = socket
        self.framing = framing
        self._closed = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the stream is closed")
        payload = bytes(data)
        if not payload:
            await trio.lowlevel.checkpoint()
            return
        if self.framing == "text":
            await self.socket.send(payload.decode("utf-8", "replace"))
        else:
            await self.socket.send(payload)

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self._closed = True
        await trio.lowlevel.checkpoint()

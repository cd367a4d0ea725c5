"""An accepted WebSocket as the web side uses it (``StarletteSocket``), the guard that closes
one stuck in a write (``StuckGuard``), its close codes, and the sending of a feed to a
watcher (``serve_feed``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import structlog
import trio
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from enginesrv.event.feed import Feed
from enginesrv.event.feed import Message as FeedMessage
from enginesrv.web.http import transport_of
from enginesrv.web.transport import Message

CLOSE_CAP = 1013
CLOSE_POLICY = 1008
"""A WebSocket another site's page opened (refused before it is accepted: HTTP 403)."""
CLOSE_BAD_GAME = 4400
CLOSE_REASON_BYTES = 123
"""The most bytes a close frame's reason may hold (RFC 6455 §5.5: 125 with the code)."""
CLOSE_NO_COMMAND = 4408

log = structlog.get_logger("enginesrv.web")


ABORT_AFTER = 1.0
"""Seconds a connection that is ending may still be writing before its TCP stream is closed
under it (longer than the connection's own flush, ``FLUSH_TIMEOUT``)."""
CLOSE_SETTLE = 1.0
"""Seconds a socket the server closes waits for the peer's close frame in answer (RFC 6455
§7.1.1: the server closes the TCP stream once both have sent theirs). A stream closed at once
answers whatever the peer sent meanwhile (a page's next command, sent with its token) with a
reset, which can cost the peer the close frame still unread, and with it the close code: a
refused token's 4401 would reach the page as 1006. What arrives meanwhile is dropped."""
SETTLE_BYTES = 64 * 1024
"""What a socket reads (and drops) while it waits for the peer's close frame, at most: once
past it, no more messages (the last may take it past by one message); a page has a command
or two on its way, a peer that sends more is cut off at once."""


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
        if not self.socket.close_sent:  # past it, the socket only waits for the peer's close
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
        self.close_sent = False
        """Whether the close frame has gone (no write of the socket's can be stuck after it)."""

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
        """Send the close frame, then wait for the peer's (``CLOSE_SETTLE``, reading at most
        ``SETTLE_BYTES``)."""
        if self.closed or self.websocket.application_state == WebSocketState.DISCONNECTED:
            self.closed = True
            return
        self.closed = True
        try:
            await self.websocket.close(code, close_reason(reason))
        except Exception:  # already gone: nothing to close
            log.debug("close_failed")
            return
        self.close_sent = True
        dropped = 0
        with trio.move_on_after(CLOSE_SETTLE):
            while dropped <= SETTLE_BYTES:
                try:
                    message = await self.websocket.receive()
                except (WebSocketDisconnect, RuntimeError):
                    return
                if message["type"] == "websocket.disconnect":
                    return
                dropped += len(message.get("text") or message.get("bytes") or b"")


def close_reason(text: str) -> str:
    """``text`` cut to what a close frame may carry: 123 bytes of UTF-8, whole characters."""
    data = text.encode("utf-8")
    if len(data) <= CLOSE_REASON_BYTES:
        return text
    return data[: CLOSE_REASON_BYTES - 3].decode("utf-8", "ignore") + "..."


async def serve_feed(
    socket: StarletteSocket,
    feed: Feed,
    stop: trio.Event,
    delay: float,
    beside: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Send ``feed`` to a watcher, as JSON text messages, each burst ``delay`` seconds after
    its first message (``enginesrv.web.watch``), until the watcher goes, ``stop``, or the
    feed drops it for falling a whole queue behind (then closed with 1013: it reconnects for
    a fresh snapshot). ``beside`` runs meanwhile."""
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
            if beside is not None:
                nursery.start_soon(beside)
            with feed.subscribe() as subscription:
                # a watcher that does not read blocks a write for good once the feed drops
                # it: its TCP stream is then closed under it
                nursery.start_soon(guard.watch, subscription.dropped)
                nursery.start_soon(guard.watch, stop)
                async for message in subscription.messages:
                    await trio.sleep(delay)
                    for each in [message, *_queued(subscription.messages)]:
                        await socket.send(json.dumps(each, separators=(",", ":")))
            # the feed dropped this watcher: it fell a whole queue behind
            await socket.close(CLOSE_CAP, "this watcher fell behind: reconnect")
            guard.release()
            nursery.cancel_scope.cancel()
    except trio.BrokenResourceError:
        guard.release()  # the watcher went away


def _queued(messages: trio.MemoryReceiveChannel[FeedMessage]) -> list[FeedMessage]:
    """The messages waiting in ``messages`` now (none once it has ended)."""
    out: list[FeedMessage] = []
    while True:
        try:
            out.append(messages.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return out

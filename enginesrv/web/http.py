"""The web ports' HTTP server: hypercorn's HTTP/1.1 and WebSocket protocol on connections this
module accepts itself, so that each is admitted (``enginesrv.admission``) before a byte of it
is read, and each read and write has a time limit.

hypercorn's own ``serve`` accepts every connection it can: nothing would count them, and a
peer could hold descriptors until the process has none left for its engines and workers.
Here each accepted connection asks the process's ``Admission`` first (closed at once when it
is refused) and is then served by hypercorn's ``TCPServer``, over a ``GuardedStream``:

* an HTTP connection is closed once it has been idle for ``keep_alive`` seconds between
  requests (hypercorn's keep-alive timeout, which also bounds the wait for a request's
  headers), and once a read of a request has waited ``read_timeout`` seconds;
* a write that has not ended within ``write_timeout`` seconds (a client that does not read)
  closes the connection;
* a WebSocket (``mark_websocket``) has no read timeout: its session's own limits apply
  (docs/protocol.md §2), and hypercorn pings it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import ipaddress
import math
import re
import socket
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import structlog
import trio
from hypercorn.config import Config
from hypercorn.protocol import ws_stream
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ASGIFramework, LifespanState
from hypercorn.utils import wrap_app
from starlette.types import ASGIApp, Scope
from wsproto.connection import Connection as WSConnection
from wsproto.events import Message

from enginesrv.admission import Admission
from enginesrv.serve.tls import TlsDoor

READ_TIMEOUT = 30.0
"""Seconds an HTTP connection's read may wait while a request is being received."""
WRITE_TIMEOUT = 30.0
"""Seconds one write may take before its connection is closed."""
KEEP_ALIVE = 30.0
"""Seconds an HTTP connection may stay idle between requests (and before its first)."""

HTTP2 = re.compile(
    rb"(?:^|\n)PRI[ \t]+\*[ \t]+HTTP/2\.0|\nupgrade[ \t]*:(?:[ \t]|\r?\n[ \t])*h2c",
    re.IGNORECASE,
)
"""What asks for HTTP/2: its preface, or an upgrade to it, its value on folded lines too
(``GuardedStream``)."""
IDLE_AFTER = 1.0
"""Seconds without a byte either way after which a plain HTTP connection counts as idle (the
first to be closed when its peer, or a newcomer, needs a slot)."""
TAIL = 20 * 1024
"""Bytes of what was read kept to find ``HTTP2`` across reads: more than a request's whole
head may hold (hypercorn's ``h11_max_incomplete_size``, 16 KiB), so that no split and no run
of white space hides it."""

log = structlog.get_logger("enginesrv.web.http")


class CappedBuffer(ws_stream.WebsocketBuffer):
    """hypercorn's buffer of a WebSocket message being received, checked before it grows.

    hypercorn's own writes a frame's data first and compares the size after, counts a text
    message in characters (4 bytes each in memory for an emoji), keeps what it holds once it
    has refused a message (close code 1009), and refuses each frame that follows by leaving
    the rest of what was read unparsed: a peer that never ends a message (continuation frames
    without end) grew the server's memory without bound, before sending a token. This one
    counts UTF-8 bytes, refuses the frame that would take the message past
    ``websocket_max_message_size`` and drops what it held; the rest of that message is
    dropped as it comes, and its end (or the end of the next message) is told to the
    application as the socket's end."""

    def __init__(self, max_length: int) -> None:
        super().__init__(max_length)
        self.refused = False

    def extend(self, event: Message[Any]) -> None:
        if self.refused:
            return
        data = event.data
        size = len(data) if isinstance(data, bytes) or data.isascii() else len(data.encode())
        if self.length + size > self.max_length:
            self.value = None
            self.length = 0
            self.refused = True
            raise ws_stream.FrameTooLargeError
        if self.value is None:
            self.value = io.StringIO() if isinstance(data, str) else io.BytesIO()
        self.value.write(data)
        self.length += size

    def clear(self) -> None:
        super().clear()
        self.refused = False

    def to_message(self) -> dict[str, Any]:
        if self.refused:
            return {"type": "websocket.disconnect", "code": 1009}
        message: dict[str, Any] = super().to_message()
        return message


class PlainHandshake(ws_stream.Handshake):
    """hypercorn's WebSocket handshake, without the compression it would agree to
    (permessage-deflate): wsproto inflates what it reads without a cap, before any message
    is measured, so that 65 KB of a peer's frames took 64 MiB of the server's memory and
    its time. A compressed frame is then a protocol error, which ends the connection (with
    no close frame: hypercorn sends none for one)."""

    def accept(
        self, subprotocol: str | None, additional_headers: Iterable[tuple[bytes, bytes]]
    ) -> tuple[int, list[tuple[bytes, bytes]], WSConnection]:
        self.extensions = None
        return super().accept(subprotocol, additional_headers)


# hypercorn makes each socket's buffer and handshake by these names (checked by the tests of
# the web port)
ws_stream.WebsocketBuffer = CappedBuffer  # type: ignore[misc]
ws_stream.Handshake = PlainHandshake  # type: ignore[misc]


@dataclass(frozen=True)
class HttpTimeouts:
    """The time limits of a web port's connections, in seconds (0: none)."""

    keep_alive: float = KEEP_ALIVE
    read: float = READ_TIMEOUT
    write: float = WRITE_TIMEOUT


class GuardedStream(trio.abc.HalfCloseableStream):
    """A TCP stream whose reads (until it carries a WebSocket) and writes have time limits:
    over TLS, the stream of plain text inside it (so that what it reads is what hypercorn
    reads, and the ASGI server sees no TLS to negotiate another protocol by)."""

    def __init__(
        self,
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
        read_timeout: float,
        write_timeout: float,
        on_close: Callable[[], None] = lambda: None,
    ):
        """``on_close`` is called once the stream is closed (its descriptor is free: hypercorn
        keeps a closed WebSocket's task until its next ping is due)."""
        self.stream = stream
        tcp = stream if isinstance(stream, trio.SocketStream) else stream.transport_stream
        self.socket = tcp.socket
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self.on_close = on_close
        self.websocket = False
        self._tail = b""
        self._sending = trio.Lock()
        """Held by a write or a half close: hypercorn half-closes a connection it ends without
        its lock, and a ping written meanwhile met trio's ``BusyResourceError``, which
        nothing caught (the web server stopped)."""
        self.last_io = trio.current_time()
        """When it last read or wrote (``trio.current_time``)."""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.last_io = trio.current_time()
        with trio.move_on_after(self.write_timeout or math.inf) as scope:
            async with self._sending:
                await self.stream.send_all(data)
        self.last_io = trio.current_time()
        if scope.cancelled_caught:
            await trio.aclose_forcefully(self)
            raise trio.BrokenResourceError(f"a write did not end within {self.write_timeout:g} s")

    def idle(self) -> bool:
        """Whether it is a plain HTTP connection that has read and written nothing for
        ``IDLE_AFTER`` seconds (waiting for its next request)."""
        return not self.websocket and trio.current_time() - self.last_io >= IDLE_AFTER

    def evict(self, reason: str) -> None:
        """Close the connection for a new peer's (``Admission``): its reads end, its writes
        fail, and hypercorn closes it."""
        log.info("http_connection_evicted", reason=reason)
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        # TLS has no half close; during a write, the close that follows ends the stream
        if isinstance(self.stream, trio.SocketStream) and not self._sending.locked():
            async with self._sending:
                await self.stream.send_eof()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        limit = math.inf if self.websocket or not self.read_timeout else self.read_timeout
        with trio.move_on_after(limit) as scope:
            data = await self.stream.receive_some(max_bytes)
            self.last_io = trio.current_time()
            if not self.websocket and self._asks_http2(data):
                await trio.aclose_forcefully(self)
                raise trio.BrokenResourceError("HTTP/2 is not served")
            return data
        assert scope.cancelled_caught
        raise trio.BrokenResourceError(f"nothing read within {self.read_timeout:g} s")

    def _asks_http2(self, data: bytes | bytearray) -> bool:
        """Whether the client asks for HTTP/2, by its preface or an ``Upgrade: h2c``. It is
        not spoken here: on one connection it would carry many WebSockets (each a session)
        and streams that the timeouts above do not see; such a connection is closed."""
        seen = self._tail + bytes(data)
        self._tail = seen[-TAIL:]
        return HTTP2.search(seen) is not None

    async def aclose(self) -> None:
        try:
            # TLS says goodbye with a write, which a client that does not read could hold
            with trio.move_on_after(self.write_timeout or math.inf) as scope:
                await self.stream.aclose()
            if scope.cancelled_caught:
                await trio.aclose_forcefully(self.stream)
        finally:
            self.on_close()


RAW_SEND = "enginesrv.raw_send"
"""The scope key under which ``keep_transport`` keeps the ASGI server's own send."""


def keep_transport(app: ASGIApp) -> ASGIApp:
    """``app`` with the ASGI server's own ``send`` of each WebSocket kept in its scope, so
    that ``transport_of`` can find the TCP stream under it."""

    async def kept(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            scope = {**scope, RAW_SEND: send}
        await app(scope, receive, send)

    return kept


def transport_of(scope: Scope) -> trio.abc.AsyncResource | None:
    """The TCP stream under a WebSocket served by hypercorn's trio ``TCPServer``, or None.
    The way there is hypercorn's (0.18): its send is a bound method of the WebSocket stream,
    whose ``send`` is one of the HTTP protocol's, whose ``send`` is the TCP server's, which
    holds the ``stream``."""
    link: Any = scope.get(RAW_SEND)
    for _ in range(6):
        owner = getattr(link, "__self__", None)
        if owner is None:
            return None
        stream = getattr(owner, "stream", None)
        if isinstance(stream, trio.abc.Stream):
            return stream
        link = getattr(owner, "send", None)
    return None


async def end_websocket(scope: Scope) -> None:
    """Close the connection under a WebSocket whose session has ended (its close frame sent
    or received): hypercorn would keep it, and its descriptor and admission, until its next
    ping is due."""
    stream = transport_of(scope)
    if isinstance(stream, GuardedStream):
        await trio.aclose_forcefully(stream)


def foreign_origin(scope: Scope, names: frozenset[str] = frozenset()) -> str | None:
    """Why a WebSocket handshake comes from another site's page, or None when it does not.

    A browser names the page that opens a WebSocket in ``Origin`` and lets any site open one
    to any address, this server's on loopback or the LAN included. The server's own page has
    the origin of the ``Host`` it was loaded from; and so that another site cannot become
    "the server's own" by pointing a name of its own at the server's address (DNS
    rebinding), that host must be an address, ``localhost``, or one of ``names`` (the
    server's own names, ``--web-name``). Programs that are no browser send no ``Origin`` and
    are not concerned: the page is the only client a site could borrow."""
    raw = _header(scope, b"origin")
    if not raw:
        return None
    if len(raw) > 1:
        return "several Origin headers"
    origin = raw[0].decode("latin-1")
    hosts = _header(scope, b"host")
    host = hosts[0].decode("latin-1").lower() if len(hosts) == 1 else ""
    try:
        parsed = urllib.parse.urlsplit(origin)
        name = (urllib.parse.urlsplit(f"//{host}").hostname or "").rstrip(".")
    except ValueError:  # an unclosed "[" (an IPv6 address): a refusal, never a traceback
        return f"origin {origin!r} or host {host!r} is no address"
    if parsed.scheme not in ("http", "https") or not host or parsed.netloc.lower() != host:
        return f"origin {origin!r} is not the page of host {host!r}"
    if not (
        _is_address(name) or name == "localhost" or name.endswith(".localhost") or name in names
    ):
        return f"host {name!r} is no address of the server nor one of its names (--web-name)"
    return None


def _header(scope: Scope, name: bytes) -> list[bytes]:
    """The values of the request's header ``name`` (lower case), in order."""
    return [bytes(value) for key, value in scope.get("headers", []) if bytes(key).lower() == name]


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def mark_websocket(scope: Scope) -> None:
    """The connection under this WebSocket no longer has a read timeout (its session's idle
    limit applies)."""
    stream = transport_of(scope)
    if isinstance(stream, GuardedStream):
        stream.websocket = True


async def serve_http(  # noqa: PLR0913  (keyword options, passed by name)
    app: ASGIApp,
    config: Config,
    listeners: list[trio.SocketListener],
    admission: Admission,
    *,
    door: str,
    stop: trio.Event,
    timeouts: HttpTimeouts | None = None,
    tls: TlsDoor | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``listeners`` until ``stop``; then stop accepting and give the
    connections ``config.graceful_timeout`` seconds to end. ``timeouts`` (default
    ``HttpTimeouts()``): the reads' and writes' (the keep-alive one is ``config``'s);
    ``tls``: every connection speaks TLS (its handshake over the guarded stream, in its
    peer's turn: ``TlsDoor``)."""
    timeouts = timeouts or HttpTimeouts()
    wrapped = wrap_app(cast(ASGIFramework, app), config.wsgi_max_body_size, "asgi")
    context = WorkerContext(None)

    async def handle(stream: trio.SocketStream) -> None:
        try:
            host = str(stream.socket.getpeername()[0])
        except OSError:
            host = "?"
        ticket = admission.admit(host, door)
        if isinstance(ticket, str):
            await trio.aclose_forcefully(stream)
            return
        with ticket:
            secure = None if tls is None else trio.SSLStream(stream, tls.context, server_side=True)
            guarded = GuardedStream(secure or stream, timeouts.read, timeouts.write, ticket.release)
            ticket.on_evict = guarded.evict
            ticket.idle = guarded.idle
            peer = admission.peer(host)
            if (
                secure is not None
                and tls is not None
                and not await tls.handshake(secure, peer, stop)
            ):
                await trio.aclose_forcefully(guarded)
                return
            state: LifespanState = {}
            server = TCPServer(wrapped, config, context, state, guarded)  # type: ignore[arg-type]
            try:
                await server.run()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                log.debug("http_connection_broken", peer=host)
            except Exception:  # a fault of hypercorn's or ours costs one connection only
                log.exception("http_connection_failed", peer=host)

    async with trio.open_nursery() as connections:
        async with trio.open_nursery() as accepting:
            await accepting.start(
                functools.partial(
                    trio.serve_listeners, handle, listeners, handler_nursery=connections
                )
            )
            task_status.started()
            await stop.wait()
            accepting.cancel_scope.cancel()
        for listener in listeners:
            with trio.CancelScope(shield=True):
                await listener.aclose()
        await context.terminated.set()
        connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout

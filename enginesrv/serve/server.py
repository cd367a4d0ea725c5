"""The trio server: connections, the TCP listener, the stdio engine and shutdown.

Per connection three tasks share the work (docs/protocol.md §2 and §3 are the contract):

* the **reader** receives bytes, decodes them and queues at most ``inflight`` requests for the
  handler; when that queue is full it stops reading, so a client that sends faster than it is
  answered is slowed down by TCP (backpressure) instead of being refused;
* the **handler** answers the requests one at a time, in order, through the ``Session``, and
  yields to the other connections after every one, so no client's burst stalls the event loop;
* the **writer** sends the encoded replies from an ``Outbox`` counted in bytes. A client that
  does not read until its outbox holds ``output`` bytes is disconnected: its memory is bounded.
  Progress reports are dropped rather than queued while a client is behind.

Searches run as tasks beside them and in worker processes (``enginesrv.search.pool``), never on the
event loop. When the client goes away (its connection breaks, or it is disconnected), what it
left queued is discarded at once and its search is cancelled, which frees the worker.

Admission (``Server``): every accepted connection asks the server's ``Admission`` (shared
with the web front: ``enginesrv.admission``) before a byte is read; one over a cap is closed
at once (its framing is not known yet, so nothing is sent) and the reason is logged, and one
closed for a newcomer's sake (``Connection.evict``) is told so with error 303. A connection
that has not sent a whole first command within ``first_command`` seconds is closed; later, one
idle longer than ``idle`` while no search runs gets error 302 and is closed. The replies left
unread on all connections together are capped (``OutputBudget``).
"""

from __future__ import annotations

import functools
import os
import ssl
import sys
from collections.abc import Callable

import structlog
import trio

from enginesrv.admission import Admission
from enginesrv.search.child import SearchRunner
from enginesrv.serve.auth import Guard, Keeper
from enginesrv.serve.connection import Connection, Serving, peer_host
from enginesrv.serve.hooks import RefereeHooks
from enginesrv.serve.limits import Limits
from enginesrv.serve.outbox import OutputBudget
from enginesrv.serve.settings import Framing, SessionConfig
from enginesrv.serve.tls import TlsDoor
from enginesrv.tokens import Grant

STOP_MARGIN = 2.0
"""Seconds past the workers' grace that stopping connections have to send their best moves
and close; what is still running then is cancelled (a search that never answers its stop, a
peer that never reads), so a stop always ends."""


class Server:
    """The TCP server: admits connections and tracks them for the caps and for shutdown."""

    def __init__(
        self,
        config: SessionConfig,
        runner: SearchRunner,
        limits: Limits,
        *,
        admission: Admission | None = None,
        keeper: Keeper | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``admission``: the caps this server's doors share (by default, those of ``limits``
        within the process's descriptor budget); ``keeper``: the tokens its clients must
        present (None: none); ``tls``: the context of a server that speaks TLS only."""
        self.keeper = keeper
        self.tls = None if tls is None else TlsDoor(tls, limits.first_command, keeper)
        self.config = config
        self.runner = runner
        self.limits = limits
        self.admission = admission or limits.admission()
        self.output = OutputBudget(limits.output_total)
        """The replies waiting, unread, on every connection together (``outputtotal``)."""
        self.connections: set[Connection] = set()
        self.log = structlog.get_logger("enginesrv.serve.server")
        self.stop = trio.Event()

    @property
    def refused(self) -> int:
        return self.admission.refused

    async def handle(self, stream: trio.SocketStream) -> None:
        """Serve one accepted TCP connection (or close it at once if it is over a cap)."""
        try:
            peer = "{}:{}".format(*stream.socket.getpeername()[:2])
        except OSError:
            peer = "?:?"
        accepted = trio.current_time()
        ticket = self.admission.admit(peer_host(peer), "tcp")
        secure: trio.abc.Stream = stream
        try:
            if isinstance(ticket, str):
                return
            with ticket:
                if self.tls is not None:
                    ticket.on_evict = lambda why: stream.socket.close()
                    key = self.admission.peer(peer_host(peer))
                    secure = await self.tls.secure(stream, key, self.stop)
                    if secure is stream:
                        return
                connection = self.connection(secure, secure, peer=peer)
                connection.started = accepted  # a TLS handshake's time counts in its limits
                ticket.on_evict = connection.evict
                await self.run_connection(connection)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await secure.aclose()
                await stream.aclose()

    def connection(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        peer: str,
        framing: Framing | None = None,
        referee: RefereeHooks | None = None,
        grant: Grant | None = None,
    ) -> Connection:
        """A new connection of this server's (any transport), under its limits and budgets;
        ``referee``: the game its session plays, when the server referees it; ``grant``:
        what its token, accepted already (a WebSocket's: ``enginesrv.web.signin``),
        grants."""
        key = self.admission.peer(peer_host(peer))
        guard = Guard(self.keeper, key)
        guard.grant = grant
        return Connection(
            send_stream,
            receive_stream,
            Serving(self.config, self.runner, self.limits, self.output),
            peer=peer,
            framing=framing,
            referee=referee,
            peer_key=key,
            guard=guard,
        )

    async def run_connection(self, connection: Connection) -> None:
        """Serve an admitted connection (of any transport), in the server's connections (the
        cap and shutdown see it) while it runs."""
        self.connections.add(connection)
        try:
            await connection.run()
        except Exception:  # a fault of ours must cost one connection, never the server
            connection.log.exception("connection_failed")
        finally:
            self.connections.discard(connection)

    def shutdown(self) -> None:
        """Stop every connection (each sends its best move and error 304, then closes)."""
        self.admission.stopping = True
        for connection in list(self.connections):
            connection.shutdown()


async def open_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """Bind the listening sockets (raises ``OSError`` for a port in use, an unknown host or
    an address that is not this machine's)."""
    return await trio.open_tcp_listeners(port, host=host)


async def serve(
    server: Server,
    listeners: list[trio.SocketListener],
    *,
    on_ready: Callable[[str, int], None],
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve on ``listeners`` until ``server.stop`` is set; then stop accepting, let every
    connection send its best move and close, and return (within the workers' grace and
    ``STOP_MARGIN``: what has not ended then is cancelled)."""
    bound = listeners[0].socket.getsockname()
    async with trio.open_nursery() as connections:
        async with trio.open_nursery() as accepting:
            accepting.start_soon(
                functools.partial(
                    trio.serve_listeners, server.handle, listeners, handler_nursery=connections
                )
            )
            on_ready(bound[0], bound[1])
            task_status.started()
            await server.stop.wait()
            accepting.cancel_scope.cancel()
        for listener in listeners:
            await listener.aclose()
        server.shutdown()
        connections.cancel_scope.deadline = trio.current_time() + server.config.grace + STOP_MARGIN


def stdio_streams() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
    """Standard output and input as trio streams (protocol bytes only on stdout)."""
    out = trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))
    inp = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    return out, inp

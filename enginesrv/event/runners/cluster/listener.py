"""The coordinator's end of the results sent straight from the workers: where it listens
(``--cluster-listen``, ``parse_listen``; the address the workers are given, ``route_address``)
and the listener itself (``ResultListener``), started by ``start_listener``.

Through Dask alone a result takes four trips (the worker tells the scheduler, the scheduler
tells the client, the client asks the worker for it, the worker answers), each waiting on a
message batch or a busy process; measured on two cores, that was 10 to 14 ms of a game's 17 to
22 ms from its end to its row in the store. So while an event runs, the coordinator listens
for its results on a TCP port of its own, and a worker that ends a game sends the result there
(the frame of ``wire``), proven by the event's token; the coordinator answers once the game is
stored. A connection that sends anything else, too slowly or too much, is closed, and the
worker then returns the result through Dask.
"""

from __future__ import annotations

import hmac
import pickle
import secrets
import socket
import time
from urllib.parse import urlsplit

import structlog
import trio

from enginesrv.admission import Admission, Ticket, descriptor_budget
from enginesrv.event.config import EventError
from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.wire import ACK, HEADER, MAGIC, ReplyTo, TaskResult

log = structlog.get_logger("enginesrv.cluster")


def parse_listen(text: str) -> tuple[str, int] | None:
    """``--cluster-listen``: ``off`` (None), ``HOST``, ``HOST:PORT``, ``:PORT`` or ``[V6]:PORT``
    (``HOST`` empty: the address of this machine on the way to the scheduler; port 0: any free).

    Raises:
        ValueError: not one of these, or a port out of range.
    """
    text = text.strip()
    if text == "off":
        return None
    host, port = text, "0"
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: expected [ADDRESS]:PORT")
        port = rest[1:] if rest else "0"
    elif text.count(":") == 1:
        host, port = text.split(":")
    elif text.count(":") > 1:
        raise ValueError(f"{text!r}: write an IPv6 address in brackets, [ADDRESS]:PORT")
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: the port must be a number from 0 to 65535")
    if any(c.isspace() for c in host):
        raise ValueError(f"{text!r}: the host has a space")
    return host, int(port)


def route_address(scheduler: str) -> str | None:
    """The address of this machine that packets to the scheduler at ``scheduler`` leave from
    (the workers reach it, as the scheduler reaches them); None for a scheduler not on plain
    TCP (a ``tls://`` cluster's results stay in its encrypted channel, Dask's)."""
    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    if parts.scheme != "tcp" or not parts.hostname:
        return None
    try:
        port = parts.port or 8786
        family, _, _, _, where = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(where)  # a datagram socket sends nothing when connected
            return str(probe.getsockname()[0])
    except (OSError, ValueError, IndexError):
        return None


async def start_listener(
    nursery: trio.Nursery,
    scheduler: str,
    listen: tuple[str, int],
    admission: Admission | None,
    settings: ClusterSettings,
) -> ResultListener | None:
    """A ``ResultListener`` for an event on the cluster whose scheduler is at ``scheduler``,
    serving in ``nursery`` on ``listen`` (``parse_listen``'s), or None with a scheduler not on
    plain TCP (its TLS keeps the results: they come through Dask).

    Raises:
        EventError: ``listen`` names an address this machine cannot listen on.
    """
    host, port = listen
    advertise = route_address(scheduler)  # None: not a plain-TCP cluster
    if advertise is not None and host not in ("", "0.0.0.0", "::"):
        advertise = host
    if host in ("0.0.0.0", "::") and advertise is not None:
        # every address of the family the workers are given (an IPv6 listener of trio's
        # takes no IPv4 connection, and the other way round)
        host = "::" if ":" in advertise else "0.0.0.0"
    if advertise is None:
        log.info("cluster_results_through_dask", scheduler=scheduler)
        return None
    listener = ResultListener(admission, settings)
    try:
        await listener.serve(nursery, host or advertise, port, advertise)
    except OSError as exc:
        raise EventError(
            f"--cluster-listen {host}:{port}: cannot listen: {exc.strerror or exc}"
        ) from None
    return listener


class ResultListener:
    """A TCP listener that takes, for each game the event waits for, one result sent with the
    event's token (module docstring)."""

    def __init__(
        self, admission: Admission | None = None, settings: ClusterSettings | None = None
    ) -> None:
        """``admission``: the process's, shared with its other doors (None: one of its own,
        of ``settings.push_connections``, within the descriptors the process has left).
        ``settings``: the event's (``push_read_timeout``, ``ack_wait``,
        ``push_max_bytes``)."""
        self.settings = settings or ClusterSettings()
        connections = self.settings.push_connections
        self.admission = admission or Admission(
            connections=connections, trusted=connections, descriptors=descriptor_budget(0)
        )
        self.token = secrets.token_bytes(16)
        self.reply: ReplyTo | None = None
        self.waiting: dict[int, trio.Event] = {}
        self.results: dict[int, tuple[TaskResult, float]] = {}
        """Per game waited for, the result taken and when (``time.time()``)."""
        self.settled: dict[int, trio.Event] = {}
        """Per game waited for, set when its result is stored (``settle``): then the worker
        is answered."""
        self.open = 0
        self.refused = 0
        """Connections closed without taking a result (a wrong token, a bad frame, too slow)."""

    async def serve(self, nursery: trio.Nursery, host: str, port: int, advertise: str) -> None:
        """Listen on ``host:port`` (``host`` empty: every address) until ``nursery`` ends; the
        workers are told to connect to ``advertise``.

        Raises:
            OSError: the address cannot be listened on.
        """
        listeners = await trio.open_tcp_listeners(port, host=host or None)
        # a name of both an IPv4 and an IPv6 address gets one listener each, on different
        # ports when any is free: the workers are given one port, so one listener is kept
        for extra in listeners[1:]:
            await extra.aclose()
        await nursery.start(trio.serve_listeners, self._take, listeners[:1])
        bound = listeners[0].socket.getsockname()[1]
        self.reply = ReplyTo(advertise, int(bound), self.token)

    def expect(self, game_id: int) -> trio.Event:
        """The event set when the game's result has come; ``settle`` it once stored."""
        waiter = self.waiting[game_id] = trio.Event()
        self.settled[game_id] = trio.Event()
        return waiter

    def settle(self, game_id: int) -> None:
        """The game's result is stored (or dropped): answer its worker, forget the game."""
        self.waiting.pop(game_id, None)
        self.results.pop(game_id, None)
        settled = self.settled.pop(game_id, None)
        if settled is not None:
            settled.set()

    async def _take(self, stream: trio.SocketStream) -> None:
        try:
            host = str(stream.socket.getpeername()[0])
        except OSError:
            host = "?"
        ticket = self.admission.admit(host, "results")
        if isinstance(ticket, str):
            self.refused += 1
            await trio.aclose_forcefully(stream)
            return
        self.open += 1
        try:
            async with stream:
                taken = False
                with trio.move_on_after(self.settings.push_read_timeout):
                    taken = await self._read(stream, ticket)
                if not taken:
                    self.refused += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.refused += 1
        finally:
            self.open -= 1
            ticket.release()

    async def _read(self, stream: trio.SocketStream, ticket: Ticket) -> bool:
        header = await _receive_exactly(stream, HEADER.size)
        if header is None:
            return False
        magic, token, game_id, length = HEADER.unpack(header)
        if magic != MAGIC or not hmac.compare_digest(token, self.token):
            return False
        if self.admission.may_trust():
            # one of the event's own workers: it no longer counts against its address, so
            # that a host of many workers is not refused
            ticket.trust()
        if length > self.settings.push_max_bytes:
            log.warning("cluster_result_too_large", game=game_id, bytes=length)
            return False
        payload = await _receive_exactly(stream, length)
        answer = None if payload is None else _unpickled(payload, game_id)
        if answer is None:
            return False
        await self._keep(game_id, answer)
        await stream.send_all(ACK)
        return True

    async def _keep(self, game_id: int, answer: TaskResult) -> None:
        """Keep the result of a game waited for, and wait (at most ``ack_wait``) until it is
        stored. A result of a game no longer waited for (played again after its worker was
        lost, and already stored) is dropped: the worker need not send it again."""
        waiter = self.waiting.get(game_id)
        settled = self.settled.get(game_id)
        if waiter is not None and settled is not None and game_id not in self.results:
            self.results[game_id] = (answer, time.time())
            waiter.set()
            # answered once stored: the worker's task ends then, and the Dask messages of
            # its end (Python work in this process's Dask thread) come after the store's
            # writes, not in the middle of them
            with trio.move_on_after(self.settings.ack_wait):
                await settled.wait()


def _unpickled(payload: bytes, game_id: int) -> TaskResult | None:
    """The ``TaskResult`` of a game's frame, or None (logged) if it is not one."""
    try:
        answer = pickle.loads(payload)  # the token proved the sender one of our workers
    except Exception as exc:  # a worker of another version: its result comes through Dask
        log.warning("cluster_result_unreadable", game=game_id, error=type(exc).__name__)
        return None
    if not isinstance(answer, TaskResult) or not isinstance(answer.result, GameResult):
        log.warning("cluster_result_unreadable", game=game_id, error="not a game result")
        return None
    return answer


async def _receive_exactly(stream: trio.SocketStream, size: int) -> bytes | None:
    """``size`` bytes from ``stream``, or None if it ends first."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = await stream.receive_some(min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)

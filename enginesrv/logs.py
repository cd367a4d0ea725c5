"""Logging: structlog, always on stderr (stdout may carry the protocol, or a result other
tools parse), readable on a terminal, one JSON object per line with ``--log-json``.

Every program of the command line configures it before it starts (``enginesrv.cli.main``);
``serve`` and ``engine`` configure it again for ``--log-json``. Log lines are written to
whatever ``sys.stderr`` is when they are logged, so a stream swapped later (a test's
capture, a worker that turns its stdout into a frame stream) never receives a line meant for
another."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, MutableMapping
from typing import Any, TextIO

import structlog

LOG_VALUE = 240
"""The most characters of one value a log line keeps: a longer one (a client's line quoted in
an error, say) is cut, and its length is written instead of the rest."""
BURST = 30
"""Log lines one connection may have written at once before its lines are rationed."""
PER_SECOND = 2.0
"""Log lines a connection earns back per second, once it has spent its ``BURST``."""
KEPT_CONNECTIONS = 4096
"""Connections whose rations are remembered (the least recently logged are forgotten)."""
ALWAYS = frozenset({"connection_open", "connection_closed"})
OPENS = frozenset({"connection_open", "auth_accepted"})
"""Events that give a connection its own ration: it has spoken (on a server with tokens, its
token was accepted)."""
"""Events logged whatever a connection's ration: its beginning and its end."""
FLOODS = frozenset(
    {
        "connection_refused",
        "websocket_refused",
        "connection_evicted",
        "auth_refused",
        "tls_refused",
        "tokens_unreadable",
    }
)
"""Events that many clients can cause at once (a flood of connections over a cap, of wrong
tokens, of TLS handshakes from an address out of tries): they share one ration, ``SHARED``,
and so does the end of a connection refused so (it logged nothing else)."""
SHARED = "refused, and connections that never spoke"
"""What ``ConnectionRations.shared`` rations: ``FLOODS`` and the ends of connections that
logged nothing before (closed before a whole command: thousands a second can come and go
so)."""


def tell(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` for people on ``stream`` (standard error unless given) and flush it. A
    stream that cannot be written (a hung-up terminal, a pipe whose reader is gone, none at
    all) loses it: what a long-running program says about itself never stops it."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        target = sys.stderr if stream is None else stream
        target.write(text)
        target.flush()


def _on_a_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):  # no standard error, or a closed one
        return False


class _Stderr:
    """The process's current standard error, looked up at every write. A line it cannot
    write (a hung-up terminal, a full disk, a pipe whose reader is gone) is lost: a log that
    cannot be written never stops the program."""

    def write(self, text: str) -> int:
        try:
            return sys.stderr.write(text)
        except (OSError, ValueError, AttributeError):  # closed (ValueError), or none at all
            return 0

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()


def cut_values(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A processor: every string value over ``LOG_VALUE`` characters cut, its length said."""
    for key, value in event.items():
        if isinstance(value, str) and len(value) > LOG_VALUE:
            event[key] = f"{value[:LOG_VALUE]}... ({len(value):,} characters)"
    return event


class ConnectionRations:
    """A processor: each connection's log lines (those with a ``conn`` key) rationed by a
    token bucket, ``BURST`` at once and ``PER_SECOND`` after, so that a client cannot make
    the server write more than a bounded log whatever it sends. Lines held back are counted;
    the next line let through says how many (``held_back``). Its ``ALWAYS`` events (a
    connection's start and end) are always written."""

    def __init__(
        self,
        *,
        burst: int = BURST,
        per_second: float = PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.per_second = per_second
        self.clock = clock
        self.buckets: OrderedDict[object, list[float]] = OrderedDict()
        """Per connection: tokens left, when they were counted, lines held back."""
        self.shared = [float(burst), clock(), 0.0]
        """The same for ``SHARED``."""

    def __call__(self, _logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
        conn = event.get("conn")
        name = event.get("event")
        if conn is None and name not in FLOODS:
            return event
        if conn is None or name in FLOODS:
            return self._shared(event)
        if conn not in self.buckets and name not in OPENS:
            # a connection that has not opened (its framing unknown, or no token accepted
            # yet): what it causes is a flood's, however it ends
            return self._shared(event)
        bucket = self.buckets.pop(conn, None) or [float(self.burst), self.clock(), 0.0]
        if name != "connection_closed":
            self.buckets[conn] = bucket
            while len(self.buckets) > KEPT_CONNECTIONS:
                self.buckets.popitem(last=False)
        return self._spend(bucket, event, free=name in ALWAYS)

    def _shared(self, event: MutableMapping[str, Any]) -> Any:
        """``event`` within the one ration that refusals and silent connections share."""
        return self._spend(self.shared, event, free=False)

    def _spend(self, bucket: list[float], event: MutableMapping[str, Any], *, free: bool) -> Any:
        """``event`` if ``bucket`` (tokens left, when they were counted, lines held back) has
        a token for it (``free``: it needs none), with the lines held back before it said;
        else it is dropped and counted."""
        now = self.clock()
        tokens = min(float(self.burst), bucket[0] + (now - bucket[1]) * self.per_second)
        bucket[1] = now
        if not free:
            if tokens < 1:
                bucket[0] = tokens
                bucket[2] += 1
                raise structlog.DropEvent
            tokens -= 1
        bucket[0] = tokens
        if bucket[2]:
            event["held_back"] = int(bucket[2])
            bucket[2] = 0
        return event


def configure(*, json: bool = False, level: int = logging.INFO) -> None:
    """Send every structlog logger to stderr, rendered for people or as JSON lines."""
    renderer: structlog.typing.Processor
    if json:
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=_on_a_terminal())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            ConnectionRations(),
            cut_values,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )

"""Logging: structlog, always on stderr (stdout may carry the protocol, or a result other
tools parse), readable on a terminal, one JSON object per line with ``--log-json``.

Every program of the command line configures it before it starts (``enginesrv.cli.main``);
``serve`` and ``engine`` configure it again for ``--log-json``. Log lines are written to
whatever ``sys.stderr`` is when they are logged, so a stream swapped later (a test's
capture, a worker that turns its stdout into a frame stream) never receives a line meant for
another."""

from __future__ import annotations

import logging
import sys

import structlog


class _Stderr:
    """The process's current standard error, looked up at every write."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(*, json: bool = False, level: int = logging.INFO) -> None:
    """Send every structlog logger to stderr, rendered for people or as JSON lines."""
    renderer: structlog.typing.Processor
    if json:
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )

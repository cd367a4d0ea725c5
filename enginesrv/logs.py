"""Logging: structlog, always on stderr (stdout may carry the protocol), readable on a
terminal, one JSON object per line with ``--log-json``."""

from __future__ import annotations

import logging
import sys

import structlog


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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )

"""The long-running programs: ``enginesrv serve`` (TCP) and ``enginesrv engine`` (stdio).

Both stop on SIGINT or SIGTERM: the first signal stops accepting and stops every search (a
worker that ignores the stop is killed after the grace period), sends each its best move and
exits 0 once every connection has closed and every worker has ended; a second signal kills the
workers and exits at once. A server with TLS reads its certificate again on SIGHUP
(``enginesrv.serve.certificates``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import signal
import ssl
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol

import structlog
import trio

from enginesrv.logs import tell
from enginesrv.search.pool import WORKER_COMMAND, WorkerPool
from enginesrv.serve.auth import Keeper
from enginesrv.serve.catalog import prepare_handshake
from enginesrv.serve.certificates import watch_reloads
from enginesrv.serve.connection import Connection, Serving
from enginesrv.serve.limits import Limits
from enginesrv.serve.server import Server, open_listeners, serve, stdio_streams
from enginesrv.serve.settings import Framing, SessionConfig

EXIT_SECOND_SIGNAL = 130


class WebStarter(Protocol):
    """Starts a web front of the server (``enginesrv.web``) and reports the page's address
    once it is served; it returns once ``server.stop`` is set and its connections ended."""

    def __call__(
        self, server: Server, runner: WorkerPool, *, task_status: trio.TaskStatus[str]
    ) -> Awaitable[None]: ...


log = structlog.get_logger("enginesrv.serve.app")


def _print_ready(host: str, port: int) -> None:
    # the one line other tools wait for; everything else goes to stderr
    tell(f"listening {host}:{port}\n", sys.stdout)


def raise_descriptor_limit() -> None:
    """Let the process hold as many descriptors as the system allows (connections)."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or hard > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def peer_searches(limits: Limits, workers: int) -> int:
    """The per-peer search cap: the limit given, else half the workers (at least one)."""
    return limits.peer_searches or max(1, workers // 2)


async def run_server(  # noqa: PLR0913  (keyword options, passed by name)
    *,
    host: str,
    port: int,
    workers: int,
    limits: Limits,
    config: SessionConfig,
    worker_command: tuple[str, ...] | None = None,
    web: WebStarter | None = None,
    keeper: Keeper | None = None,
    tls: ssl.SSLContext | None = None,
    reload_tls: Callable[[], ssl.SSLContext] | None = None,
) -> None:
    """Serve TCP until SIGINT/SIGTERM; returns after every connection has closed and every
    worker process has ended. ``worker_command`` replaces the search worker (tests run
    misbehaving ones); ``web`` adds the web front (its line ``web URL`` follows
    ``listening``); ``keeper``: the tokens clients must present; ``tls``: both ports speak
    TLS only, with the context ``reload_tls`` makes again on each SIGHUP (if given).

    Raises:
        OSError: the address cannot be listened on (before anything else starts; the web
            front's address, before any client is served).
    """
    listeners = await open_listeners(host, port)
    raise_descriptor_limit()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(
            nursery,
            workers,
            grace=config.grace,
            per_peer=peer_searches(limits, workers),
            hash_budget=limits.hash_mb or None,
            command=worker_command or WORKER_COMMAND,
        )
        # descriptors kept for the workers (two pipes each, and the spawner's) beyond the
        # admission's own reserve
        admission = limits.admission(needs=4 * workers + 8)
        if admission.cap() and admission.cap() != limits.connections:
            # the descriptors allow fewer connections than asked: the handshake says so
            limits = dataclasses.replace(limits, connections=admission.cap())
            config = dataclasses.replace(config, limits=limits.announced())
        server = Server(config, pool, limits, admission=admission, keeper=keeper, tls=tls)
        await nursery.start(_watch_signals, server.stop.set, pool)
        if server.tls is not None and reload_tls is not None:
            await nursery.start(watch_reloads, reload_tls, server.tls.use)
        try:
            await _start_unless(pool, server.stop)
            prepare_handshake(config.default_bot)  # before the first client, not on its ugi
            if not server.stop.is_set():
                async with trio.open_nursery() as fronts:
                    page = None
                    if web is not None:
                        page = await fronts.start(functools.partial(web, server, pool))

                    def ready(host: str, port: int) -> None:
                        _print_ready(host, port)
                        if page is not None:
                            tell(f"web {page}\n", sys.stdout)

                    await serve(server, listeners, on_ready=ready)
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()
            if keeper is not None:
                keeper.close()
            nursery.cancel_scope.cancel()


async def run_engine(
    *, framing: Framing, workers: int, limits: Limits, config: SessionConfig
) -> None:
    """One session over stdin/stdout until ``quit``, end of input, or SIGINT/SIGTERM."""
    out, inp = stdio_streams()
    async with trio.open_nursery() as nursery:
        # a spare: a worker killed past its deadline must not make the next move wait for a
        # new process (one session searches on one worker at a time)
        pool = WorkerPool(
            nursery, workers, grace=config.grace, hash_budget=limits.hash_mb or None, spare=1
        )
        connection = Connection(
            out, inp, Serving(config, pool, limits), peer="stdio", framing=framing
        )
        stopped = trio.Event()

        def stop() -> None:
            stopped.set()
            connection.shutdown()

        await nursery.start(_watch_signals, stop, pool)
        try:
            await _start_unless(pool, stopped)
            prepare_handshake(config.default_bot)
            if not stopped.is_set():
                await connection.run()
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()
                await out.aclose()
            nursery.cancel_scope.cancel()


async def _start_unless(pool: WorkerPool, stop: trio.Event) -> None:
    """Start the pool's workers, unless ``stop`` is set first (a signal during start-up)."""
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            await stop.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        await pool.start()
        nursery.cancel_scope.cancel()


def exit_on_early_signal() -> None:
    """Until the server watches its signals, SIGTERM exits at once with status 0 (nothing
    has started that needs stopping yet)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))


async def _watch_signals(
    first: Callable[[], None],
    pool: WorkerPool,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """The first SIGINT/SIGTERM stops gracefully; a second one exits at once."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        count = 0
        async for signum in signals:
            count += 1
            log.info("signal", signal=signal.Signals(signum).name, count=count)
            if count == 1:
                first()
                continue
            pool.kill_all()
            tell("enginesrv: second signal: exiting now\n")
            os._exit(EXIT_SECOND_SIGNAL)

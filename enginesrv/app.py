"""The long-running programs: ``enginesrv serve`` (TCP) and ``enginesrv engine`` (stdio)."""

from __future__ import annotations

import signal
import sys

import trio

from enginesrv.pool import WorkerPool
from enginesrv.server import Connection, Framing, Limits, Server, serve, stdio_streams
from enginesrv.session import SessionConfig


def _print_ready(host: str, port: int) -> None:
    # the one line other tools wait for; everything else goes to stderr
    sys.stdout.write(f"listening {host}:{port}\n")
    sys.stdout.flush()


async def run_server(
    *, host: str, port: int, workers: int, limits: Limits, config: SessionConfig
) -> None:
    """Serve TCP until SIGINT/SIGTERM; exits after every connection has closed and every
    worker process has ended."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, workers)
        try:
            await pool.start()
            server = Server(config, pool, limits)
            await serve(server, host, port, on_ready=_print_ready)
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


async def run_engine(*, framing: Framing, workers: int, config: SessionConfig) -> None:
    """One session over stdin/stdout until ``quit``, end of input, or SIGINT/SIGTERM."""
    out, inp = stdio_streams()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, workers)
        try:
            await pool.start()
            connection = Connection(
                out,
                inp,
                config=config,
                runner=pool,
                limits=Limits(idle=0, connections=0),
                peer="stdio",
                framing=framing,
            )
            async with trio.open_nursery() as watch:
                watch.start_soon(_shutdown_on_signal, connection)
                await connection.run()
                watch.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()
                await out.aclose()


async def _shutdown_on_signal(connection: Connection) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            connection.shutdown()
            return

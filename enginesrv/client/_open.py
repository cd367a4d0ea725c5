"""Starting an engine process or connecting to a server, and ending either for good."""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO

import anyio
from anyio.abc import Process
from anyio.streams.stapled import StapledByteStream

from enginesrv.client._args import KILL_WAIT, TERM_WAIT
from enginesrv.client._conn import STREAM_GONE, Connection
from enginesrv.client.types import (
    ClientError,
    EngineTerminatedError,
    EngineTimeoutError,
    Framing,
)
from protocol import messages as m


async def open_process(
    argv: Sequence[str],
    framing: Framing,
    stderr: int | IO[bytes] | None,
    cwd: str | None,
    env: Mapping[str, str] | None,
    *,
    name: str | None = None,
) -> tuple[Connection, Process]:
    """Start ``argv`` with pipes on its stdin and stdout, in a session of its own (so that
    whatever it starts can be ended with it); messages name it ``name`` (default: the
    command line)."""
    if not argv:
        raise ValueError("popen: the command is empty")
    where = " ".join(argv) if name is None else name
    try:
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise EngineTerminatedError(f"{where}: cannot start it ({exc})") from None
    assert process.stdin is not None
    assert process.stdout is not None
    conn = Connection(StapledByteStream(process.stdin, process.stdout), framing, where)
    conn.exit_code = lambda: process.returncode
    conn.is_process = True
    return conn, process


def tls_context(
    tls: bool | ssl.SSLContext, cafile: str | None, server_hostname: str | None
) -> ssl.SSLContext | None:
    """The TLS context ``connect``'s arguments ask for (None: plain TCP): the caller's own,
    or one that verifies the server's certificate and name against ``cafile`` (given: it
    implies TLS) or the system's authorities.

    Raises:
        ValueError: arguments that do not go together.
        ClientError: ``cafile`` cannot be read as certificates.
    """
    if isinstance(tls, ssl.SSLContext):
        if cafile is not None:
            raise ValueError("connect: cafile goes with tls=True (load it into your own context)")
        return tls
    if not tls and cafile is None:
        if server_hostname is not None:
            raise ValueError("connect: server_hostname is checked over TLS only: pass tls=True")
        return None
    try:
        return ssl.create_default_context(cafile=cafile)
    except OSError as exc:  # ssl.SSLError included
        raise ClientError(f"cafile {cafile}: cannot be read as certificates ({exc})") from None


async def open_tcp(
    host: str,
    port: int,
    framing: Framing,
    timeout: float,
    tls: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
) -> Connection:
    """Connect to ``host:port`` within ``timeout`` seconds, the TLS handshake included when
    ``tls`` is given (the certificate checked for ``server_hostname``, default ``host``)."""
    where = f"{host}:{port}"
    try:
        with anyio.move_on_after(timeout):
            if tls is None:
                return Connection(await anyio.connect_tcp(host, port), framing, where)
            stream = await anyio.connect_tcp(
                host,
                port,
                ssl_context=tls,
                tls_hostname=server_hostname or host,
                tls_standard_compatible=False,
            )
            return Connection(stream, framing, where)
    except ssl.SSLCertVerificationError as exc:
        why = exc.verify_message or exc.reason
        raise ClientError(f"{where}: TLS: certificate verify failed: {why}") from None
    except ssl.SSLError as exc:
        raise ClientError(f"{where}: TLS: the handshake failed ({exc.reason or exc})") from None
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        raise EngineTerminatedError(
            f"{where}: the connection closed in the TLS handshake"
        ) from None
    except OSError as exc:
        raise EngineTerminatedError(f"{where}: cannot connect ({exc})") from None
    raise EngineTimeoutError(f"{where}: no connection within {timeout:g} s")


async def shut(conn: Connection, process: Process | None, wait: float = KILL_WAIT) -> None:
    """End the connection and the process now: ``quit`` (if the connection is still open),
    ``wait`` seconds for the process to exit, then SIGTERM to its whole group and, after
    ``TERM_WAIT`` seconds more, SIGKILL. Never raises."""
    try:
        with anyio.CancelScope(shield=True):
            await _shut(conn, process, wait)
    finally:
        # a cancellation the shield does not hold (asyncio's own ``task.cancel``) must not
        # leave the engine running: its whole group is killed at once
        conn.end(EngineTerminatedError(f"{conn.where}: the connection was closed"))
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)


async def _shut(conn: Connection, process: Process | None, wait: float) -> None:
    if conn.ended is None:
        with contextlib.suppress(ClientError), anyio.move_on_after(0.2):
            await conn.send(m.Quit())
    conn.end(EngineTerminatedError(f"{conn.where}: the connection was closed"))
    if process is not None:
        with anyio.move_on_after(wait):
            await process.wait()
        # SIGTERM first: a program may end what it started (a reaper does: see
        # ``enginesrv.reaper``), then SIGKILL for the whole group
        for number, grace in ((signal.SIGTERM, TERM_WAIT), (signal.SIGKILL, 0.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, number)
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            process.kill()
        await process.wait()
    with contextlib.suppress(*STREAM_GONE):
        await conn.stream.aclose()
    with anyio.move_on_after(1.0):
        await conn.reader_done.wait()

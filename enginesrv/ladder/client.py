"""``enginesrv ladder-client``: a local engine joins a ladder (docs/ladder.md, "Joining").

Each of ``games`` lanes connects out to the ladder, logs in (docs/protocol.md §11), and once
the ladder answers with its first command starts the engine (a ``cmd:`` command, or one of
our bots as ``enginesrv engine --bot NAME``) under the reaper, which ends everything the
engine starts, and, where bubblewrap works and the ladder plays a game of hidden information,
in the sandbox an event gives such an engine (``event.play.contain``). From then on the lane
passes bytes both ways: the ladder speaks to the engine as an arbiter does. When either side
ends, the engine is ended and the lane connects again after a pause that doubles from
``BACKOFF`` up to ``BACKOFF_MAX`` seconds (with jitter), and starts over from ``BACKOFF`` once
a connection has lasted ``STABLE`` seconds. A refused login whose reason will not change
(a wrong name or token, an engine that plays none of the ladder's games) stops the client.
"""

from __future__ import annotations

import contextlib
import random
import ssl
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio
import trio
from anyio.abc import ByteReceiveStream, ByteSendStream, ByteStream

from enginesrv import orphans, reaper
from protocol.login import encode_login

BACKOFF = 1.0
BACKOFF_MAX = 60.0
STABLE = 60.0
CONNECT_TIMEOUT = 10.0
FIRST_LINE_TIMEOUT = 30.0
"""Seconds the ladder has to answer a login (with ``ugi``, or an error)."""
FIRST_LINE_MAX = 4096
KILL_WAIT = 2.0
FINAL = ("the name or the token is not accepted", "the engine plays none of the ladder's games")
"""The beginnings of the refusals that trying again cannot change."""


class LadderClientError(Exception):
    """The client cannot go on (a refusal that will not change), in one line."""


@dataclass
class ClientSettings:
    """Where to connect and what to run."""

    host: str
    port: int
    name: str
    token: str
    command: tuple[str, ...]
    """The engine's command, the wrapper (if any) before it."""
    first_lines: tuple[bytes, ...] = ()
    """Lines the engine is sent before the ladder's (a bot's options)."""
    tls: ssl.SSLContext | None = None
    tls_name: str | None = None
    games: int = 1
    quiet_engine: bool = False
    """Whether the engine's standard error is dropped (our bots' logs)."""
    say: Callable[[str], None] = field(default=lambda text: None)


async def run_client(settings: ClientSettings, stop: trio.Event) -> None:
    """Run ``settings.games`` lanes until ``stop`` is set.

    Raises:
        LadderClientError: the ladder refused the login for a reason that will not change.
    """
    async with trio.open_nursery() as nursery:
        for lane in range(settings.games):
            nursery.start_soon(_lane, settings, lane, stop)
        await stop.wait()
        nursery.cancel_scope.cancel()


async def _lane(settings: ClientSettings, lane: int, stop: trio.Event) -> None:
    delay = BACKOFF
    label = f"lane {lane + 1}: " if settings.games > 1 else ""
    while not stop.is_set():
        began = trio.current_time()
        why = await _session(settings)
        lasted = trio.current_time() - began
        if lasted >= STABLE:
            delay = BACKOFF
        wait = min(BACKOFF_MAX, delay * random.uniform(0.75, 1.25))
        settings.say(f"{label}{why}; connecting again in {wait:.1f} s")
        await trio.sleep(wait)
        delay = min(BACKOFF_MAX, delay * 2)


async def _session(settings: ClientSettings) -> str:
    """One connection, from connecting to its end; what ended it, in words."""
    try:
        with anyio.fail_after(CONNECT_TIMEOUT):
            stream: ByteStream
            if settings.tls is None:
                stream = await anyio.connect_tcp(settings.host, settings.port)
            else:
                stream = await anyio.connect_tcp(
                    settings.host,
                    settings.port,
                    ssl_context=settings.tls,
                    tls_hostname=settings.tls_name or settings.host,
                    tls_standard_compatible=False,
                )
    except TimeoutError:
        return f"no connection within {CONNECT_TIMEOUT:g} s"
    except (OSError, ssl.SSLError) as exc:
        return f"cannot connect: {exc}"
    async with stream:
        try:
            await stream.send(encode_login(settings.name, settings.token, "text"))
            first = await _first_line(stream)
        except (anyio.BrokenResourceError, anyio.EndOfStream, OSError, ssl.SSLError):
            return "the ladder closed the connection"
        except TimeoutError:
            return f"the ladder did not answer the login within {FIRST_LINE_TIMEOUT:g} s"
        if first.startswith(b"error "):
            said = first.decode("utf-8", "replace").strip()
            if any(reason in said for reason in FINAL):
                raise LadderClientError(f"the ladder refused the login: {said}")
            return f"the ladder refused the login: {said}"
        settings.say("logged in")
        return await _relay(settings, stream, first)


async def _first_line(stream: ByteStream) -> bytes:
    """The ladder's first line (``ugi``, or its refusal), with anything after it."""
    data = b""
    with anyio.fail_after(FIRST_LINE_TIMEOUT):
        while b"\n" not in data:
            if len(data) > FIRST_LINE_MAX:
                raise anyio.BrokenResourceError
            data += await stream.receive()
    return data


async def _relay(settings: ClientSettings, stream: ByteStream, first: bytes) -> str:
    """Start the engine and pass bytes both ways until either side ends."""
    try:
        with orphans.spawning():
            process = await anyio.open_process(
                reaper.command(settings.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL if settings.quiet_engine else None,
                start_new_session=True,
            )
        orphans.known(process.pid)
    except OSError as exc:
        return f"cannot start the engine: {exc.strerror or exc}"
    assert process.stdin is not None
    assert process.stdout is not None
    ended = ["the ladder closed the connection"]
    try:
        async with anyio.create_task_group() as group:
            for line in settings.first_lines:
                await process.stdin.send(line)
            await process.stdin.send(first)

            async def pump(source: ByteReceiveStream, sink: ByteSendStream, what: str) -> None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                    async for chunk in source:
                        await sink.send(chunk)
                ended[0] = what
                group.cancel_scope.cancel()

            group.start_soon(pump, stream, process.stdin, "the ladder closed the connection")
            group.start_soon(pump, process.stdout, stream, "the engine ended")
    except (anyio.BrokenResourceError, OSError):
        ended[0] = "the engine ended"
    finally:
        with trio.CancelScope(shield=True):
            await _ended(process)
    return ended[0]


async def _end(process: anyio.abc.Process) -> None:
    """End the engine: close its input (a UGI engine quits), then SIGTERM, then SIGKILL."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError):
        assert process.stdin is not None
        await process.stdin.aclose()
    with anyio.move_on_after(KILL_WAIT):
        await process.wait()
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    with anyio.move_on_after(KILL_WAIT):
        await process.wait()
        return
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()


async def _ended(process: anyio.abc.Process) -> None:
    """End the engine (``_end``), then sweep what it left behind had it killed its reaper
    (``orphans``: the client is a subreaper)."""
    try:
        await _end(process)
    finally:
        orphans.forget(process.pid)
        await trio.to_thread.run_sync(orphans.sweep)


def bot_command(name: str) -> tuple[str, ...]:
    """The command of our bot ``name`` as an engine over stdio."""
    return (sys.executable, "-m", "enginesrv.cli", "engine", "--bot", name, "--workers", "1")


def option_lines(options: Sequence[tuple[str, str]]) -> tuple[bytes, ...]:
    """``setoption`` lines of a bot's options."""
    return tuple(f"setoption name {k} value {v}\n".encode() for k, v in options)

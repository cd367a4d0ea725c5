"""Test helpers for the server: a thread search runner, an in-process server on port 0, and
scripted peers that read with deadlines (no fixed sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import msgpack
import trio

import games
from bots.engine import SearchInfo
from bots.registry import create_bot
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import SLICE, WorkerPool
from enginesrv.serve.connection import Limits as ConnLimits
from enginesrv.serve.server import Server, open_listeners, serve
from enginesrv.serve.settings import SessionConfig

TIMEOUT = 10.0
_OPEN: list[trio.SocketStream] = []
"""Client streams opened by peers; ``running_server`` closes them when it ends."""


class ThreadRunner:
    """Runs each search in a thread of the test process (the server uses processes)."""

    def __init__(self) -> None:
        self.searches = 0

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        del hard_deadline, on_wait, peer, grace
        self.searches += 1
        flag = threading.Event()
        token = trio.lowlevel.current_trio_token()
        last: list[SearchInfo] = []

        def report(info: SearchInfo) -> None:
            last[:] = [info]
            trio.from_thread.run_sync(on_info, info, trio_token=token)

        def run() -> Any:
            bot = create_bot(job.bot)
            for name, value in job.options:
                bot.set_option(name, value)
            state = games.load(job.game).state_from_string(job.position)
            bot.new_game(state.game)
            limits = job.limits_in(state, time.monotonic())
            return bot.search(state, limits, stop=flag.is_set, on_info=report)

        async with trio.open_nursery() as nursery:

            async def relay() -> None:
                try:
                    await stop.wait()
                finally:  # also when the caller is cancelled (its client went away)
                    flag.set()

            nursery.start_soon(relay)
            result = await trio.to_thread.run_sync(run)
            nursery.cancel_scope.cancel()
        return SearchOutcome(result, last_info=last[0] if last else None)


class RecordingThreadRunner(ThreadRunner):
    """``ThreadRunner`` that keeps the jobs it runs and, per search, when it was asked, the
    hard deadline and the grace period it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[SearchJob] = []
        self.calls: list[tuple[float, float | None, float | None]] = []

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        self.jobs.append(job)
        self.calls.append((trio.current_time(), hard_deadline, grace))
        return await super().search(
            job, on_info=on_info, stop=stop, hard_deadline=hard_deadline, on_wait=on_wait,
            peer=peer, on_hold=on_hold, grace=grace,
        )  # fmt: skip


@asynccontextmanager
async def running_server(
    *,
    runner: Any = None,
    limits: ConnLimits | None = None,
    game: str | None = "yinsh",
    bot: str = "random",
    workers: int = 0,
    per_peer: int | None = None,
    slice_seconds: float = SLICE,
    config: SessionConfig | None = None,
) -> AsyncIterator[tuple[Server, int]]:
    """A server on 127.0.0.1:<free port>; ``workers`` > 0 uses real worker processes, of
    which one peer holds at most ``per_peer``, each for ``slice_seconds`` when others wait
    (``WorkerPool``)."""
    limits = limits or ConnLimits()
    config = config or SessionConfig(default_game=game, default_bot=bot, limits=limits.announced())
    async with trio.open_nursery() as nursery:
        pool = None
        if workers:
            pool = WorkerPool(nursery, workers, per_peer=per_peer, slice_seconds=slice_seconds)
            await pool.start()
            runner = pool
        server = Server(config, runner or ThreadRunner(), limits)
        ports: list[int] = []
        listeners = await open_listeners("127.0.0.1", 0)
        await nursery.start(
            lambda task_status: serve(
                server, listeners, on_ready=lambda h, p: ports.append(p), task_status=task_status,
            )
        )  # fmt: skip
        try:
            yield server, ports[0]
        finally:
            with trio.CancelScope(shield=True):
                while _OPEN:
                    await _OPEN.pop().aclose()
            server.stop.set()
            if pool is not None:
                with trio.CancelScope(shield=True):
                    await pool.aclose()


async def connect_from(local: str, host: str, port: int) -> trio.SocketStream:
    """A TCP connection to ``host:port`` from the address ``local`` (any of 127.0.0.0/8 on
    loopback: each one is another peer to the server)."""
    sock = trio.socket.socket()
    await sock.bind((local, 0))
    await sock.connect((host, port))
    return trio.SocketStream(sock)


class TextPeer:
    """A client speaking the text framing."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    @classmethod
    async def connect(cls, port: int, local: str | None = None) -> TextPeer:
        """A connection to ``port``, from the loopback address ``local`` if given."""
        stream = await connect_from(local or "127.0.0.1", "127.0.0.1", port)
        _OPEN.append(stream)
        return cls(stream)

    async def send(self, *lines: str) -> None:
        await self.stream.send_all("".join(line + "\n" for line in lines).encode())

    async def line(self) -> str:
        """The next line (fails the test after TIMEOUT seconds)."""
        with trio.fail_after(TIMEOUT):
            while b"\n" not in self.buffer:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise EOFError(f"connection closed; unread: {self.buffer!r}")
                self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    async def expect(self, prefix: str) -> str:
        """The next line, which must start with ``prefix``."""
        line = await self.line()
        assert line.startswith(prefix), f"expected {prefix!r}, got {line!r}"
        return line

    async def until(self, prefix: str) -> list[str]:
        """Lines up to and including the first that starts with ``prefix``."""
        lines = []
        while True:
            line = await self.line()
            lines.append(line)
            if line.startswith(prefix):
                return lines

    async def closed(self) -> bool:
        """Whether the server closes the connection (after any remaining lines)."""
        with trio.fail_after(TIMEOUT):
            while True:
                try:
                    data = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    return True
                if not data:
                    return True
                self.buffer += data

    async def aclose(self) -> None:
        await self.stream.aclose()


class MsgpackPeer:
    """A client speaking msgpack-RPC."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.unpacker = msgpack.Unpacker(raw=False)
        self.frames: list[Any] = []
        self.seen: list[Any] = []

    @classmethod
    async def connect(cls, port: int) -> MsgpackPeer:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        _OPEN.append(stream)
        return cls(stream)

    async def request(self, msgid: int, method: str, params: dict[str, Any] | None = None) -> None:
        await self.stream.send_all(msgpack.packb([0, msgid, method, [params or {}]]))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.stream.send_all(msgpack.packb([2, method, [params or {}]]))

    async def frame(self) -> Any:
        with trio.fail_after(TIMEOUT):
            while not self.frames:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise EOFError("connection closed")
                self.unpacker.feed(data)
                self.frames.extend(self.unpacker)
        return self.frames.pop(0)

    async def response(self, msgid: int) -> Any:
        """The response to ``msgid`` (other frames met on the way are kept in ``seen``)."""
        while True:
            frame = await self.frame()
            if frame[0] == 1 and frame[1] == msgid:
                return frame
            self.seen.append(frame)

    async def aclose(self) -> None:
        await self.stream.aclose()


async def open_stream(port: int, local: str | None = None) -> trio.SocketStream:
    """A client stream to 127.0.0.1:``port``, from the address ``local`` (a loopback address
    such as 127.0.0.2) if given; ``running_server`` and ``serving`` close it when they end."""
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=local)
    _OPEN.append(stream)
    return stream


@asynccontextmanager
async def serving(server: Server) -> AsyncIterator[int]:
    """Serve ``server`` (built by the caller, with its own config and runner) on
    127.0.0.1:<free port>, yielding the port; the runner is the caller's to close."""
    async with trio.open_nursery() as nursery:
        ports: list[int] = []
        listeners = await open_listeners("127.0.0.1", 0)
        await nursery.start(
            lambda task_status: serve(
                server, listeners, on_ready=lambda h, p: ports.append(p), task_status=task_status,
            )
        )  # fmt: skip
        try:
            yield ports[0]
        finally:
            with trio.CancelScope(shield=True):
                while _OPEN:
                    await _OPEN.pop().aclose()
            server.stop.set()

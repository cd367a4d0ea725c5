"""The anyio client (AsyncEngine on trio and asyncio) against what a hostile engine or an
impatient caller does to it: writes cut off part-way, floods of huge move pages, deadlines
during the close, a trace callback that fails, a cancelled go. The fake engines are
test_client_hostile's."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import signal
import sys
import time

import anyio
import pytest
import trio

from enginesrv.client import AsyncEngine, ClientError, EngineTimeoutError
from protocol import messages as m
from tests.enginesrv.test_client_hostile import (
    QUICK,
    START,
    MemoryStream,
    Peer,
    client_test,
    fake_engine,
    memory_stream_pair,
    polite,
)


class FillingPipe(MemoryStream):
    """A pipe that fills up once ``room`` is set: the next write larger than ``room`` goes out
    only in part (as trio's FdStream writes what the pipe takes, then waits to write more),
    and waits until cancelled; writes after that go through (the engine read on)."""

    room: int | None = None

    async def send(self, item: bytes) -> None:
        if self.room is not None and len(item) > self.room:
            part, self.room = bytes(item[: self.room]), None
            await self.sending.send(part)
            await anyio.sleep_forever()
        await super().send(item)


@client_test
async def test_a_msgpack_request_cut_off_mid_write_does_not_glue_the_next_one_to_it() -> None:
    """msgpack: a request whose write its own timeout cuts off half-way (the engine was busy
    and its pipe full) leaves half a frame on the wire. The connection must then be ended
    (as in text), or what follows must reach the engine whole: else the next request is read
    as the rest of the half frame, the engine sees a bad frame (a real enginesrv engine exits
    on it), and every later call fails."""
    ends: list[FillingPipe] = []

    def pair() -> tuple[MemoryStream, MemoryStream]:
        client_end, peer_end = memory_stream_pair()
        client_end.__class__ = FillingPipe
        assert isinstance(client_end, FillingPipe)
        ends.append(client_end)
        return client_end, peer_end

    async with fake_engine(polite, "msgpack", pair=pair) as (engine, peer):
        ends[0].room = 100
        with pytest.raises(EngineTimeoutError):
            await engine.position(None, ["c3"] * 200, timeout=QUICK)
        if engine.alive:  # kept: what follows must reach the engine whole
            assert await engine.query("position", timeout=1) == START
            assert peer.got(m.Query)


@client_test
async def test_legal_moves_gathering_is_bounded_in_bytes() -> None:
    """docs/client.md: what an engine sends is bounded, so that a hostile one cannot make the
    client hold much memory (8 MiB for one call's answer). legal_moves gathers pages of a
    long list with no bound in bytes: here 24 pages of one 1 MiB move each (it would go on
    to 100,000 pages: 100 GiB)."""
    pages = 24
    big = 1 << 20

    async def pager(peer: Peer, request: m.Request) -> None:
        command = request.command
        if isinstance(command, m.Query) and command.what == "moves":
            k = command.start or 0
            move = f"{k:06d}" + "x" * (big - 100)
            answer = f"count 100000 moves {move}" if k < pages else "count 100000 moves"
            await peer.answer(request, m.Response(answer))
            return
        await polite(peer, request)

    async with fake_engine(pager, "text") as (engine, _):
        try:
            moves = await engine.legal_moves()
        except ClientError:
            return  # refusing the flood is fine
        assert sum(len(move) for move in moves) <= 8 << 20


STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "sys.stdin.readline()\n"
    "print('id name stubborn\\nid protocol 1\\nugiok', flush=True)\n"
    "time.sleep(60)\n"
)
"""An engine that answers ugi, then ignores quit, the end of its input and SIGTERM."""


def test_asyncio_a_deadline_during_the_close_still_ends_the_process() -> None:
    """asyncio: ``async with asyncio.timeout(T): async with AsyncEngine.popen(...)``, and T
    runs out while the block's exit waits for a stubborn engine to go (quit, then up to 2 s
    before SIGKILL). The close is shielded on trio; on asyncio a native cancel goes through
    anyio's shield and ``shut`` stops half-way: the engine's group is then killed at once,
    not left running for good."""

    async def main() -> bool:
        engine: AsyncEngine | None = None
        try:
            async with asyncio.timeout(1.0):
                async with AsyncEngine.popen([sys.executable, "-c", STUBBORN], timeout=5) as e:
                    engine = e
                    await asyncio.sleep(0.5)  # the deadline comes during the exit
        except TimeoutError:
            pass
        assert engine is not None
        assert engine.process is not None
        process = engine.process
        deadline = time.monotonic() + 4
        while process.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        ended = process.returncode is not None
        if not ended:  # clean up after the finding, so that the loop closes cleanly
            os.killpg(process.pid, signal.SIGKILL)
            async with asyncio.timeout(10):
                await process.wait()
            with contextlib.suppress(Exception):
                await process.aclose()
        return ended

    try:
        ended = asyncio.run(main())
    finally:
        gc.collect()  # what the finding left open is collected here, not in a later test
    assert ended, "the engine outlived its block"


def test_trio_a_trace_callback_that_fails_does_not_end_the_run() -> None:
    """trio, reader as a system task (popen_in(None, ...), as the arbiter opens its engines):
    a trace callback that fails on a line the engine sends (here: an ASCII-only log told
    a non-ASCII line) must end that connection with a ClientError, not the program (an
    error escaping the reader's system task would end trio.run with TrioInternalError)."""
    script = (
        "import sys\n"
        "sys.stdin.readline()\n"
        "print('id name snow\\nugiok', flush=True)\n"
        "sys.stdin.readline()\n"
        "print('info string \\u2603\\nreadyok', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    log = io.TextIOWrapper(io.BytesIO(), encoding="ascii")

    def trace(kind: str, line: str) -> None:
        log.write(f"{kind} {line}\n")

    async def main() -> float:
        engine = await AsyncEngine.popen_in(None, [sys.executable, "-c", script], trace=trace)
        start = time.monotonic()
        with pytest.raises(ClientError):
            await engine.isready(3)
        await engine.aclose()
        return time.monotonic() - start

    died = ""
    elapsed = 0.0
    try:
        elapsed = anyio.run(main, backend="trio")
    except trio.TrioInternalError as exc:  # kept as text: its frames hold the pipes open
        died = f"trio.run died: {exc!r} from {exc.__cause__!r}"
    gc.collect()  # what the finding left open is collected here, not in a later test
    assert not died, died
    assert elapsed < 2  # the connection ended at once, not at the call's timeout


@client_test
async def test_a_go_cancelled_by_its_caller_leaves_the_session_usable() -> None:
    """docs/client.md: a call cancelled half-way leaves the engine usable, or ends the
    connection with a ClientError that says so. ``go`` cancelled by the caller's own scope
    while the engine searches does neither: the search goes on with no handle, and the next
    ``position`` raises "a search is running: stop it" on a connection still alive."""

    async def searches_until_stopped(peer: Peer, request: m.Request) -> None:
        if isinstance(request.command, m.Go):
            peer.search = request  # answered at its stop
            return
        await polite(peer, request)

    async with fake_engine(searches_until_stopped) as (engine, _):
        with anyio.move_on_after(0.5):
            await engine.go(depth=30)
        if engine.alive:
            await engine.position(None, ["c3"])

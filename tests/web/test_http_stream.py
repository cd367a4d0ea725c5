"""The web port's connections under hypercorn (``enginesrv.web.http``): a half close that meets
a write, and a fault in one connection's handling, cost that connection at most, never the web
server."""

from __future__ import annotations

import contextlib

import pytest
import trio
from hypercorn.trio.tcp_server import TCPServer

from enginesrv.web import http
from enginesrv.web.http import GuardedStream
from tests.trio_run import trio_test
from tests.web.webpeer import http_get, running_web


@trio_test
async def test_a_half_close_and_a_write_at_once_do_not_collide() -> None:
    """hypercorn half-closes a connection it ends without its own send lock, while its ping
    task may be writing: either order, on fifty connections, raises nothing but what a
    closed stream raises."""
    for round_ in range(50):
        near, far = trio.socket.socketpair()
        guarded = GuardedStream(trio.SocketStream(near), 0, 0)
        other = trio.SocketStream(far)

        async def write(stream: GuardedStream) -> None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(b"ping")

        async with trio.open_nursery() as nursery:
            if round_ % 2:
                nursery.start_soon(guarded.send_eof)
                nursery.start_soon(write, guarded)
            else:
                nursery.start_soon(write, guarded)
                nursery.start_soon(guarded.send_eof)
        await guarded.aclose()
        await other.aclose()


@trio_test
async def test_a_fault_in_one_connection_leaves_the_web_port_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    faults: list[int] = []

    class Faulty(TCPServer):
        async def run(self) -> None:
            if not faults:
                faults.append(1)
                raise RuntimeError("a fault in one connection")
            await super().run()

    monkeypatch.setattr(http, "TCPServer", Faulty)
    async with running_web() as web:
        with pytest.raises(Exception):  # noqa: B017, PT011  (the connection is dropped)
            await http_get(web.url, "/")
        status, _, body = await http_get(web.url, "/")
        assert status == 200
        assert b"<html" in body.lower()
    assert faults == [1]

"""How the web side closes a socket (``StarletteSocket.close``): its close frame, then the wait
for the peer's, which reads at most ``SETTLE_BYTES`` of what the peer sends meanwhile and never
longer than ``CLOSE_SETTLE``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import trio
import trio.testing
from starlette.websockets import WebSocket, WebSocketState

from enginesrv.web.sockets import CLOSE_SETTLE, SETTLE_BYTES, StarletteSocket
from tests.trio_run import trio_test


@dataclass
class Peer:
    """A starlette WebSocket as the web side sees it, whose peer sends ``before`` messages of
    ``size`` characters after the server's close frame, then its own close (never, with
    ``before`` None); ``silent``: it sends nothing at all."""

    before: int | None
    size: int = 1024
    silent: bool = False
    application_state: WebSocketState = WebSocketState.CONNECTED
    closed_with: tuple[int, str] | None = None
    reads: int = 0

    async def close(self, code: int, reason: str) -> None:
        self.closed_with = (code, reason)
        self.application_state = WebSocketState.DISCONNECTED

    async def receive(self) -> dict[str, Any]:
        assert self.closed_with is not None, "read before the close frame went"
        if self.silent:
            await trio.sleep_forever()
        await trio.lowlevel.checkpoint()
        self.reads += 1
        if self.before is not None and self.reads > self.before:
            return {"type": "websocket.disconnect", "code": 1000}
        return {"type": "websocket.receive", "text": "x" * self.size}


def socket_of(peer: Peer) -> StarletteSocket:
    return StarletteSocket(cast(WebSocket, peer))


@trio_test
async def test_the_close_waits_for_the_peers_close_dropping_what_comes_first() -> None:
    peer = Peer(before=3)
    socket = socket_of(peer)
    await socket.close(4401, "the token is not accepted")
    assert peer.closed_with == (4401, "the token is not accepted")
    assert peer.reads == 4  # three messages dropped, then the peer's close
    assert socket.closed
    assert socket.close_sent
    assert await socket.receive() is None


@trio_test
async def test_a_peer_that_floods_after_the_close_is_read_no_further_than_the_cap() -> None:
    peer = Peer(before=None)
    await socket_of(peer).close()
    assert peer.reads == SETTLE_BYTES // peer.size + 1


def test_a_peer_that_never_answers_is_waited_for_no_longer_than_the_settle() -> None:
    clock = trio.testing.MockClock(autojump_threshold=0)
    peer = Peer(before=None, silent=True)

    async def main() -> float:
        start = trio.current_time()
        await socket_of(peer).close()
        return trio.current_time() - start

    assert trio.run(main, clock=clock) == CLOSE_SETTLE


@trio_test
async def test_a_socket_closed_twice_sends_one_close_frame() -> None:
    peer = Peer(before=0)
    socket = socket_of(peer)
    await socket.close(1013, "full")
    await socket.close(1000, "again")
    assert peer.closed_with == (1013, "full")
    assert peer.reads == 1

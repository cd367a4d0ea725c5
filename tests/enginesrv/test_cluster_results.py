"""The results a worker sends straight back to the coordinator
(``enginesrv.event.runners.cluster``, its ``listener`` and ``host``): the coordinator's
``ResultListener`` and its frames, a worker's ``WorkerHost.push``, the ``--cluster-listen``
address, and whole events on a real ``LocalCluster`` (two worker processes with one thread
each, on loopback) with the results sent straight, through Dask (``--cluster-listen off``),
and sent to an address where nothing listens."""

from __future__ import annotations

import dataclasses
import functools
import pickle
import re
import socket
import subprocess
import sys
import time
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import outcome
import pytest
import trio
import trio.testing
from structlog.testing import capture_logs

from enginesrv.admission import Admission
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.play.outcome import Outcome
from enginesrv.event.play.records import Record, RecordMove
from enginesrv.event.prepared import prepare
from enginesrv.event.runners.cluster import ClusterVenue, wire
from enginesrv.event.runners.cluster.coordinator import ClusterRunner
from enginesrv.event.runners.cluster.host import WorkerHost
from enginesrv.event.runners.cluster.listener import ResultListener, parse_listen, route_address
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.wire import ReplyTo, TaskResult
from enginesrv.event.tournament import Finished, run_event
from tests.enginesrv.cluster_support import local_scheduler, stored

scheduler = pytest.fixture(scope="module", name="scheduler")(local_scheduler)

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
ACK = b"\x01"
WAIT = 5.0
"""Seconds any one wait of these tests may take (far more than any of them needs)."""
DEFAULTS = ClusterSettings()


# -- results and frames ------------------------------------------------------------------------


def answer(game_id: int = 1, winner: str = "p1") -> TaskResult:
    """A finished game's result as a worker sends it."""
    record = Record(
        headers={"Game": "yoxii", "Result": f"{winner} wins"},
        moves=[RecordMove("e5"), RecordMove("d4", (("ms", "3"),))],
        comments=[f"game {game_id}"],
    )
    result = GameResult(
        Outcome.parse(winner, "totem blocked"), record, 2, 0.5, 0.25, search_time=0.2
    )
    return TaskResult(result, (11, 22), "tcp://10.0.0.9:4000", 1234.5)


def frame(
    reply: ReplyTo,
    game_id: int,
    what: object,
    *,
    magic: bytes = b"ESR1",
    token: bytes | None = None,
    length: int | None = None,
    raw: bytes | None = None,
) -> bytes:
    """A frame as a worker sends it: the header, then ``what`` pickled (or ``raw``)."""
    payload = pickle.dumps(what, protocol=pickle.HIGHEST_PROTOCOL) if raw is None else raw
    header = wire.HEADER.pack(
        magic,
        reply.token if token is None else token,
        game_id,
        len(payload) if length is None else length,
    )
    return header + payload


async def exchange(reply: ReplyTo, data: bytes, *, eof: bool = False) -> bytes:
    """Connect to the listener, send ``data`` (then the end of our side, ``eof``) and return
    all it sends back until it closes the connection: the ack, or nothing."""
    got = bytearray()
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream(reply.host, reply.port)
        async with stream:
            try:
                await stream.send_all(data)
                if eof:
                    await stream.send_eof()
                while chunk := await stream.receive_some():
                    got += chunk
            except trio.BrokenResourceError:  # closed with our bytes unread: a reset
                pass
    return bytes(got)


def listening(
    body: Callable[[ResultListener], Awaitable[None]],
    admission: Admission | None = None,
    settings: ClusterSettings = DEFAULTS,
) -> None:
    """Run ``body`` with a listener of ``settings`` on a free loopback port, in ``trio.run``;
    what it raises is raised as it is (not in an exception group)."""

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listener = ResultListener(admission, settings)
            await listener.serve(nursery, "127.0.0.1", 0, "127.0.0.1")
            done = await outcome.acapture(bounded, listener)
            nursery.cancel_scope.cancel()
        done.unwrap()

    async def bounded(listener: ResultListener) -> None:
        with trio.fail_after(4 * WAIT):
            await body(listener)

    trio.run(main)


def reply_of(listener: ResultListener) -> ReplyTo:
    assert listener.reply is not None
    return listener.reply


async def settled() -> None:
    """Every task of the listener has done what it can (its counts are up to date)."""
    await trio.testing.wait_all_tasks_blocked()


async def taken(
    listener: ResultListener, game_id: int, send: Callable[[], Awaitable[T]]
) -> tuple[tuple[TaskResult, float], T]:
    """``send()`` a result of the game ``game_id``, which the listener waits for, and play
    the coordinator's part: once the game's event is set, note what the listener keeps for
    it, and ``settle`` the game (as the event does once it has stored the result; the
    listener holds its answer to the worker until then). Returns what was kept, and what
    ``send()`` returned."""
    came = listener.waiting[game_id]
    sent: list[T] = []

    async def sender() -> None:
        sent.append(await send())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sender)
        with trio.fail_after(WAIT):
            await came.wait()
        kept = listener.results[game_id]
        listener.settle(game_id)
    return kept, sent[0]


def sends(listener: ResultListener, game_id: int, what: object) -> Callable[[], Awaitable[bytes]]:
    """What ``exchange`` of a valid frame of ``what`` for the game ``game_id`` does."""
    reply = reply_of(listener)
    return functools.partial(exchange, reply, frame(reply, game_id, what))


async def takes_a_valid_one(listener: ResultListener, game_id: int = 7) -> None:
    """The listener takes a valid result of a game it waits for: acked, kept, its event set;
    and that counts as no refusal."""
    refused = listener.refused
    came = listener.expect(game_id)
    sent = answer(game_id)
    (kept, at), got = await taken(listener, game_id, sends(listener, game_id, sent))
    assert got == ACK
    assert came.is_set()
    assert kept == sent
    assert at > 0
    await settled()
    assert listener.refused == refused
    assert listener.open == 0


# -- the coordinator's listener ----------------------------------------------------------------


def test_the_reply_address_is_the_port_listened_on_with_the_events_token() -> None:
    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        assert reply.host == "127.0.0.1"
        assert reply.port > 0
        assert reply.token == listener.token
        assert len(reply.token) == 16
        assert reply.token.hex() not in repr(reply)  # the secret stays out of Dask's logs
        assert ResultListener().token != listener.token  # one secret an event

    listening(body)


def test_a_valid_result_is_acked_kept_and_wakes_its_waiter() -> None:
    async def body(listener: ResultListener) -> None:
        came = listener.expect(3)
        listener.expect(4)  # another game, still waited for
        assert not came.is_set()
        sent = answer(3, winner="p2")
        before = time.time()
        (kept, at), got = await taken(listener, 3, sends(listener, 3, sent))
        assert got == ACK
        assert came.is_set()
        assert kept == sent
        assert kept.result is not None
        assert kept.result.record.tokens() == ["e5", "d4"]
        assert before <= at <= time.time()
        assert list(listener.waiting) == [4]
        assert not listener.waiting[4].is_set()
        await settled()
        assert listener.refused == 0
        assert listener.open == 0

    listening(body)


def test_a_second_result_of_the_same_game_is_acked_and_the_first_is_kept() -> None:
    """A second result of a game (played twice), sent while the first is kept."""

    async def body(listener: ResultListener) -> None:
        listener.expect(3)
        first, second = answer(3, winner="p1"), answer(3, winner="p2")

        acks: list[bytes] = []
        async with trio.open_nursery() as nursery:

            async def send_first() -> None:
                acks.append(await sends(listener, 3, first)())

            nursery.start_soon(send_first)
            with trio.fail_after(WAIT):
                await listener.waiting[3].wait()
            assert await sends(listener, 3, second)() == ACK  # taken, and dropped
            assert listener.results[3][0] == first
            listener.settle(3)
        assert acks == [ACK]
        await settled()
        assert listener.refused == 0

    listening(body)


def test_a_result_of_a_game_not_waited_for_is_acked_and_dropped() -> None:
    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        came = listener.expect(1)
        assert await exchange(reply, frame(reply, 99, answer(99))) == ACK
        assert listener.results == {}
        assert not came.is_set()
        # nor one of a game that was waited for, and is no more (stored by another way)
        listener.expect(5)
        listener.settle(5)
        assert await exchange(reply, frame(reply, 5, answer(5))) == ACK
        assert listener.results == {}
        await settled()
        assert listener.refused == 0
        await takes_a_valid_one(listener, 1)

    listening(body)


def flip(token: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in token)


# Each: what a connection sends, and whether it then ends its side. Sent without the end,
# the listener must close the connection on its own, at once (push_read_timeout is made a
# minute long: a listener that waits for more would not close it within WAIT).
BAD: dict[str, Callable[[ReplyTo], tuple[bytes, bool]]] = {
    "wrong token": lambda r: (frame(r, 1, answer(1), token=flip(r.token)), False),
    "a token of zeros": lambda r: (frame(r, 1, answer(1), token=bytes(16)), False),
    "wrong magic": lambda r: (frame(r, 1, answer(1), magic=b"ESR2"), False),
    "oversized": lambda r: (frame(r, 1, None, length=DEFAULTS.push_max_bytes + 1, raw=b""), False),
    "truncated payload": lambda r: (frame(r, 1, answer(1))[:-5], True),
    "header only": lambda r: (frame(r, 1, answer(1))[: wire.HEADER.size], True),
    "half a header": lambda r: (frame(r, 1, answer(1))[:10], True),
    "nothing": lambda r: (b"", True),
    "empty payload": lambda r: (frame(r, 1, None, raw=b""), False),
    "garbage pickle": lambda r: (frame(r, 1, None, raw=b"\x80\x05garbage, not a pickle"), False),
    "not a TaskResult": lambda r: (frame(r, 1, {"result": answer(1).result}), False),
    "a GameResult alone": lambda r: (frame(r, 1, answer(1).result), False),
    "an abandoned game": lambda r: (frame(r, 1, TaskResult(None, (0, 0), "w", 1.0)), False),
    "a result that is no GameResult": lambda r: (
        frame(r, 1, dataclasses.replace(answer(1), result=cast(Any, "p1 wins"))),
        False,
    ),
}
LOGGED = {
    "oversized": "cluster_result_too_large",
    "garbage pickle": "cluster_result_unreadable",
    "empty payload": "cluster_result_unreadable",
    "not a TaskResult": "cluster_result_unreadable",
    "a GameResult alone": "cluster_result_unreadable",
    "an abandoned game": "cluster_result_unreadable",
    "a result that is no GameResult": "cluster_result_unreadable",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_frame_is_closed_without_the_ack_and_the_next_valid_one_is_taken(
    case: str,
) -> None:
    settings = ClusterSettings(push_read_timeout=60.0)

    async def body(listener: ResultListener) -> None:
        came = listener.expect(1)
        data, eof = BAD[case](reply_of(listener))
        with capture_logs() as logs:
            assert await exchange(reply_of(listener), data, eof=eof) == b""
            await settled()
        assert listener.refused == 1
        assert listener.open == 0
        assert listener.results == {}
        assert not came.is_set()
        events = [each["event"] for each in logs]
        if case in LOGGED:
            assert events == [LOGGED[case]]
            assert logs[0]["game"] == 1
        else:
            assert events == []
        await takes_a_valid_one(listener, 1)
        assert listener.refused == 1

    listening(body, settings=settings)


def test_an_oversized_result_is_refused_from_its_header() -> None:
    """The payload of a length over ``push_max_bytes`` is not read: a connection that sent the
    header only is closed at once (it is made small here, so that a full frame over it is
    cheap), and one just at the limit is taken."""
    sent = answer(2)
    size = len(pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL))
    settings = ClusterSettings(push_read_timeout=60.0, push_max_bytes=size)

    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        listener.expect(2)
        header = frame(reply, 2, sent, length=size + 1)[: wire.HEADER.size]
        started = trio.current_time()
        assert await exchange(reply, header) == b""
        assert trio.current_time() - started < WAIT
        await settled()
        assert listener.refused == 1
        (kept, _), got = await taken(listener, 2, sends(listener, 2, sent))  # at the limit
        assert got == ACK
        assert kept == sent

    listening(body, settings=settings)


def test_a_connection_that_stalls_is_closed_after_the_read_timeout() -> None:
    settings = ClusterSettings(push_read_timeout=0.3)

    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        came = listener.expect(1)
        started = trio.current_time()
        # half a header, and then nothing: not the end of the stream, just silence
        assert await exchange(reply, frame(reply, 1, answer(1))[:10]) == b""
        assert trio.current_time() - started >= 0.3
        # a whole header and part of its payload, and then nothing
        assert await exchange(reply, frame(reply, 1, answer(1))[:-3]) == b""
        await settled()
        assert listener.refused == 2
        assert not came.is_set()
        await takes_a_valid_one(listener, 1)

    listening(body, settings=settings)


def test_connections_beyond_the_limit_are_closed_at_once() -> None:
    settings = ClusterSettings(push_connections=3, push_read_timeout=60.0)

    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        came = listener.expect(1)
        held = [await trio.open_tcp_stream(reply.host, reply.port) for _ in range(3)]
        try:
            for stream in held:
                await stream.send_all(b"ESR1")  # a header begun, and no more
            await settled()
            assert listener.open == 3
            assert listener.refused == 0
            # a fourth, even with a valid frame, is closed at once, unread
            assert await exchange(reply, frame(reply, 1, answer(1))) == b""
            await settled()
            assert listener.refused == 1
            assert listener.open == 3
            assert listener.results == {}
            assert not came.is_set()
            # a worker whose push meets a full listener sends that result through Dask, and
            # tries the next one straight again
            host = host_without_pool()
            assert not await WorkerHost.push(host, reply, 1, answer(1), settings)
            assert host.unreachable == set()
            await settled()
            assert listener.refused == 2
        finally:
            for stream in held:
                await stream.aclose()
        await settled()
        assert listener.open == 0
        assert listener.refused == 5  # the three held ones ended before a whole header
        await takes_a_valid_one(listener, 1)

    listening(body, settings=settings)


def test_workers_that_presented_the_token_do_not_count_against_their_host() -> None:
    """The result port admits connections as every door does, two per address here; a host of
    many workers is not refused for it: those that presented the event's token are counted
    apart, while strangers from the same address are held to the cap."""
    admission = Admission(connections=50, peer_connections=2)

    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        for game in (1, 2, 3, 4):
            listener.expect(game)
        held = []
        try:
            for game in (1, 2, 3):  # each a worker: a whole header with the token, then a pause
                stream = await trio.open_tcp_stream(reply.host, reply.port)
                held.append(stream)
                await stream.send_all(frame(reply, game, answer(game))[: wire.HEADER.size])
                await settled()
            assert admission.holding_trusted == 3
            assert admission.per_peer["127.0.0.1"] == 0
            strangers = [await trio.open_tcp_stream(reply.host, reply.port) for _ in range(3)]
            held.extend(strangers)
            await settled()
            assert admission.per_peer["127.0.0.1"] == 2  # the third stranger was refused
            assert admission.refused == 1
            for stream in strangers:
                await stream.aclose()
            await settled()
            # a fourth worker still gets its result taken
            result, _ = await taken(listener, 4, sends(listener, 4, answer(4)))
            assert result[0].result == answer(4).result
        finally:
            for stream in held:
                await stream.aclose()

    listening(body, admission)


def test_the_worker_is_answered_once_its_result_is_stored() -> None:
    """The ack of a result the event waits for comes when the coordinator has stored it
    (``settle``), not before: the worker's task ends after the store's writes."""
    settings = ClusterSettings(ack_wait=60.0)

    async def body(listener: ResultListener) -> None:
        came = listener.expect(1)
        acks: list[bytes] = []
        async with trio.open_nursery() as nursery:

            async def send() -> None:
                acks.append(await sends(listener, 1, answer(1))())

            nursery.start_soon(send)
            with trio.fail_after(WAIT):
                await came.wait()
            await settled()
            assert acks == []  # held while the result is being stored
            assert listener.results[1][0] == answer(1)
            listener.settle(1)
        assert acks == [ACK]
        assert listener.results == {}
        await settled()
        assert listener.refused == 0

    listening(body, settings=settings)


def test_a_result_never_stored_is_answered_after_ack_wait() -> None:
    settings = ClusterSettings(ack_wait=0.3)

    async def body(listener: ResultListener) -> None:
        listener.expect(1)
        started = trio.current_time()
        assert await sends(listener, 1, answer(1))() == ACK
        assert trio.current_time() - started >= 0.3
        assert listener.results[1][0] == answer(1)  # kept, for the coordinator to take
        await settled()
        assert listener.refused == 0

    listening(body, settings=settings)


@pytest.mark.parametrize(
    ("scheduler_address", "listen", "expected"),
    [
        ("tcp://127.0.0.1:8786", ("", 0), "127.0.0.1"),
        ("tcp://127.0.0.1:8786", ("0.0.0.0", 0), "127.0.0.1"),
        ("tcp://127.0.0.1:8786", ("127.0.0.1", 0), "127.0.0.1"),
        ("127.0.0.1:8786", ("", 0), "127.0.0.1"),
        ("tcp://127.0.0.1:8786", None, None),
        # a TLS cluster keeps the results in its own encrypted connections, even with a
        # host given: the frames (the event's token, pickles) never go in clear
        ("tls://127.0.0.1:8786", ("", 0), None),
        ("tls://127.0.0.1:8786", ("127.0.0.1", 0), None),
    ],
)
def test_the_runner_listens_where_the_workers_can_reach_it(
    scheduler_address: str, listen: tuple[str, int] | None, expected: str | None
) -> None:
    """``ClusterRunner.serve`` (no scheduler needed): the address the workers are given."""
    runner = ClusterRunner(scheduler_address, CONFIG, listen)

    async def main() -> ReplyTo | None:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(WAIT):
                await runner.serve(nursery)
            nursery.cancel_scope.cancel()
        return None if runner.listener is None else runner.listener.reply

    reply = trio.run(main)
    if expected is None:
        assert runner.listener is None
        assert reply is None
    else:
        assert reply is not None
        assert reply.host == expected
        assert reply.port > 0


def test_the_runner_says_which_address_it_cannot_listen_on() -> None:
    runner = ClusterRunner("tcp://127.0.0.1:8786", CONFIG, ("192.0.2.1", 0))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            done = await outcome.acapture(runner.serve, nursery)
            nursery.cancel_scope.cancel()
        done.unwrap()  # the error as it is, not in the nursery's group

    with pytest.raises(EventError, match=r"--cluster-listen 192\.0\.2\.1:0: cannot listen"):
        trio.run(main)
    assert runner.listener is None


# -- a worker's push ---------------------------------------------------------------------------


def closed_port() -> int:
    """A loopback port that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def host_without_pool() -> WorkerHost:
    """What ``WorkerHost.push`` uses of its host (the set of addresses that did not take a
    result), without the host's thread and search processes."""
    return cast(WorkerHost, types.SimpleNamespace(unreachable=set()))


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Each connection opened with ``trio.open_tcp_stream`` from now on, by address."""
    calls: list[tuple[str, int]] = []
    real = trio.open_tcp_stream

    async def spy(host: str, port: int, **kwargs: Any) -> trio.SocketStream:
        calls.append((host, port))
        return await real(host, port, **kwargs)

    monkeypatch.setattr(trio, "open_tcp_stream", spy)
    return calls


def test_a_push_nothing_listens_for_marks_the_address_and_is_not_tried_again(
    connects: list[tuple[str, int]],
) -> None:
    host = host_without_pool()
    reply = ReplyTo("127.0.0.1", closed_port(), bytes(range(16)))

    async def main() -> tuple[bool, bool]:
        with trio.fail_after(WAIT):
            first = await WorkerHost.push(host, reply, 1, answer(1), DEFAULTS)
            second = await WorkerHost.push(host, reply, 2, answer(2), DEFAULTS)
        return first, second

    assert trio.run(main) == (False, False)
    assert host.unreachable == {("127.0.0.1", reply.port, reply.token)}
    assert connects == [("127.0.0.1", reply.port)]  # the second push did not connect


def test_a_push_the_listener_takes_is_true_and_marks_nothing(
    connects: list[tuple[str, int]],
) -> None:
    host = host_without_pool()
    dead = ReplyTo("127.0.0.1", closed_port(), bytes(16))
    reply = dead  # the listener's, once it listens

    async def body(listener: ResultListener) -> None:
        nonlocal reply
        reply = reply_of(listener)
        came = listener.expect(4)
        sent = answer(4)
        (kept, _), pushed = await taken(
            listener, 4, lambda: WorkerHost.push(host, reply, 4, sent, DEFAULTS)
        )
        assert pushed
        assert came.is_set()
        assert kept == sent
        assert host.unreachable == set()
        # another event's listener, unreachable, is marked; this one is not
        assert not await WorkerHost.push(host, dead, 5, answer(5), DEFAULTS)
        assert host.unreachable == {(dead.host, dead.port, dead.token)}
        listener.expect(6)
        (kept, _), pushed = await taken(
            listener, 6, lambda: WorkerHost.push(host, reply, 6, answer(6), DEFAULTS)
        )
        assert pushed
        assert kept == answer(6)
        await settled()
        assert listener.refused == 0

    listening(body)
    assert connects == [(reply.host, reply.port), (dead.host, dead.port), (reply.host, reply.port)]


def test_a_push_the_listener_closes_unanswered_is_refused_for_that_result_only() -> None:
    """A connection closed without an answer (here: another event's token; also a listener
    full or a frame it cannot read) sends that result through Dask, and the next is tried."""
    host = host_without_pool()

    async def body(listener: ResultListener) -> None:
        reply = reply_of(listener)
        other = ReplyTo(reply.host, reply.port, flip(reply.token))
        listener.expect(1)
        assert not await WorkerHost.push(host, other, 1, answer(1), DEFAULTS)
        assert host.unreachable == set()
        assert listener.results == {}
        await settled()
        assert listener.refused == 1
        # the event's own token is still taken at the same address
        (kept, _), pushed = await taken(
            listener, 1, lambda: WorkerHost.push(host, reply, 1, answer(1), DEFAULTS)
        )
        assert pushed
        assert kept == answer(1)

    listening(body)


def test_a_push_that_gets_no_ack_in_time_marks_the_address() -> None:
    """A coordinator that reads the result and answers nothing (or not the ack byte)."""
    settings = ClusterSettings(push_timeout=0.3)
    host = host_without_pool()
    answers = {"silent": b"", "wrong byte": b"\x00"}

    async def main() -> list[bool]:
        pushed: list[bool] = []
        async with trio.open_nursery() as nursery:
            for what in answers.values():

                async def handler(stream: trio.SocketStream, what: bytes = what) -> None:
                    async with stream:
                        await stream.receive_some()
                        if what:
                            await stream.send_all(what)
                        await trio.sleep_forever()

                listeners = await nursery.start(
                    functools.partial(trio.serve_tcp, handler, 0, host="127.0.0.1")
                )
                port = listeners[0].socket.getsockname()[1]
                reply = ReplyTo("127.0.0.1", port, bytes(16))
                started = trio.current_time()
                with trio.fail_after(WAIT):
                    pushed.append(await WorkerHost.push(host, reply, 1, answer(1), settings))
                if not what:
                    assert trio.current_time() - started >= 0.3
            nursery.cancel_scope.cancel()
        return pushed

    assert trio.run(main) == [False, False]
    assert len(host.unreachable) == 2


# -- --cluster-listen and the address the workers are given ------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("off", None),
        (" off ", None),
        ("", ("", 0)),
        (":0", ("", 0)),
        (":9000", ("", 9000)),
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("127.0.0.1", ("127.0.0.1", 0)),
        ("0.0.0.0:65535", ("0.0.0.0", 65535)),
        ("[::1]:9000", ("::1", 9000)),
        ("[::1]", ("::1", 0)),
        ("myhost", ("myhost", 0)),
        ("myhost:1", ("myhost", 1)),
    ],
)
def test_parse_listen(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("::1", "brackets"),
        ("fe80::1:9000", "brackets"),
        ("1.2.3.4:99999", "0 to 65535"),
        ("host:65536", "0 to 65535"),
        ("host:-1", "0 to 65535"),
        ("host:", "0 to 65535"),
        ("[::1]:", "0 to 65535"),
        ("host:\u0663", "0 to 65535"),  # a digit, but not an ASCII one
        ("host:http", "0 to 65535"),
        ("a b:1", "space"),
        ("a\tb", "space"),
        ("[::1", r"\[ADDRESS\]:PORT"),
        ("[::1]x", r"\[ADDRESS\]:PORT"),
        ("[::1]9000", r"\[ADDRESS\]:PORT"),
    ],
)
def test_parse_listen_refuses(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        parse_listen(text)
    assert repr(text.strip()) in str(caught.value)  # the message names what was given


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("tcp://127.0.0.1:8786", "127.0.0.1"),
        ("127.0.0.1:8786", "127.0.0.1"),
        ("tcp://127.0.0.1", "127.0.0.1"),
        ("tls://127.0.0.1:8786", None),
        ("ucx://127.0.0.1:8786", None),
        ("inproc://x", None),
        ("tcp://no-such-host.invalid:1", None),
        ("tcp://127.0.0.1:99999", None),
        ("tcp://:8786", None),
    ],
)
def test_route_address(address: str, expected: str | None) -> None:
    assert route_address(address) == expected


# -- the command line, without a cluster -------------------------------------------------------


def match(*extra: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    where = [] if out is None else ["--out", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:greedy", "bot:random",
         "--depth", "1", *extra, *where],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=120,
    )  # fmt: skip


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("enginesrv match: error: ")
    assert proc.stdout == ""
    return proc.stderr


def test_cluster_listen_without_cluster_is_an_error(tmp_path: Path) -> None:
    err = one_line_error(match("--games", "2", "--cluster-listen", ":0", out=tmp_path / "ev"))
    assert "--cluster-listen" in err
    assert "--cluster" in err.replace("--cluster-listen", "")
    assert not (tmp_path / "ev" / "results.sqlite").exists()


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_cluster_address_is_an_error_not_a_local_event(
    tmp_path: Path, address: str
) -> None:
    err = one_line_error(match("--games", "2", "--cluster", address, out=tmp_path / "ev"))
    assert "--cluster needs the scheduler's address" in err
    assert not (tmp_path / "ev").exists()


def test_a_bad_cluster_listen_value_is_named() -> None:
    bad = ("--cluster-listen", "1.2.3.4:99999", "--cluster", "tcp://127.0.0.1:1")
    err = one_line_error(match("--games", "2", *bad))
    assert "--cluster-listen" in err
    assert "1.2.3.4:99999" in err
    assert "reach the scheduler" not in err  # refused before any connection is tried


# -- on a real cluster -------------------------------------------------------------------------


GAMES = 4
CONFIG = EventConfig(
    game="yoxii", players=("bot:greedy", "bot:random"), depth=1, games=GAMES, event="straight"
)
STORED = re.compile(r"\bcluster_games_stored\b.*?\bsent_straight=(\d+)")


def sent_straight(stderr: str) -> int:
    """``sent_straight`` of the one ``cluster_games_stored`` line of a run's log."""
    found = STORED.findall(stderr)
    assert len(found) == 1, stderr
    return int(found[0])


def cli_on_cluster(scheduler: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = match("--games", str(GAMES), "--cluster", scheduler, *extra, out=out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    games = sorted(int(line.split()[1].split("/")[0]) for line in proc.stdout.splitlines()
                   if line.startswith("game "))  # fmt: skip
    assert games == list(range(1, GAMES + 1))
    return proc


@pytest.fixture(scope="module")
def straight(scheduler: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A match on the cluster from the command line, its results sent straight back: its
    log (stderr) and its directory."""
    out = tmp_path_factory.mktemp("straight") / "ev"
    return cli_on_cluster(scheduler, out).stderr, out


def test_every_result_of_a_match_on_the_cluster_comes_straight(
    straight: tuple[str, Path],
) -> None:
    err, out = straight
    assert sent_straight(err) == GAMES
    assert re.search(rf"\bcluster_games_stored\b.*\bgames={GAMES}\b", err)
    rows = stored(out)
    assert [row[0] for row in rows] == list(range(1, GAMES + 1))


def test_cluster_listen_on_loopback_sends_them_straight(scheduler: str, tmp_path: Path) -> None:
    proc = cli_on_cluster(scheduler, tmp_path / "ev", "--cluster-listen", "127.0.0.1")
    assert sent_straight(proc.stderr) == GAMES


def test_cluster_listen_off_sends_them_through_dask_and_stores_the_same(
    scheduler: str, straight: tuple[str, Path], tmp_path: Path
) -> None:
    proc = cli_on_cluster(scheduler, tmp_path / "ev", "--cluster-listen", "off")
    assert sent_straight(proc.stderr) == 0
    assert stored(tmp_path / "ev") == stored(straight[1])


def test_a_cluster_listen_address_not_of_this_machine_is_one_error(
    scheduler: str, tmp_path: Path
) -> None:
    proc = match("--games", "2", "--cluster", scheduler, "--cluster-listen", "192.0.2.1:0",
                 out=tmp_path / "ev")  # fmt: skip
    err = one_line_error(proc)
    assert "--cluster-listen 192.0.2.1:0: cannot listen" in err


def unreachable_on_this_worker() -> set[tuple[str, int, bytes]]:
    """On a worker (``Client.run``): the reply addresses its games found unreachable."""
    instance = WorkerHost._instance
    return set() if instance is None else set(instance.unreachable)


def test_results_sent_where_nothing_listens_come_through_dask(
    scheduler: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The workers are given an address where nothing listens: each finds it unreachable,
    returns its results as the tasks' values, and the event stores every game once, as a
    local run of the same event stores them."""
    distributed = pytest.importorskip("distributed")
    dead = closed_port()
    listeners: list[ResultListener] = []
    serve = ResultListener.serve

    async def serve_elsewhere(
        self: ResultListener, nursery: trio.Nursery, host: str, port: int, advertise: str
    ) -> None:
        await serve(self, nursery, host, port, advertise)
        self.reply = ReplyTo("127.0.0.1", dead, self.token)
        listeners.append(self)

    monkeypatch.setattr(ResultListener, "serve", serve_elsewhere)
    seen: list[Finished] = []
    remote, local = tmp_path / "remote", tmp_path / "local"
    event = prepare(CONFIG, remote, resume=False)
    with capture_logs() as logs:
        trio.run(
            lambda: run_event(event, remote, on_game=seen.append, venue=ClusterVenue(scheduler))
        )
    summary = [each for each in logs if each["event"] == "cluster_games_stored"]
    assert len(summary) == 1
    assert summary[0]["games"] == GAMES
    assert summary[0]["sent_straight"] == 0
    assert sorted(done.game.id for done in seen) == list(range(1, GAMES + 1))
    rows = stored(remote)
    assert [row[0] for row in rows] == list(range(1, GAMES + 1))
    (listener,) = listeners
    assert listener.results == {}
    assert listener.waiting == {}  # every game waited for was forgotten once stored
    assert listener.refused == 0
    with distributed.Client(scheduler, set_as_default=False) as client:
        found = client.run(unreachable_on_this_worker)
    marked: set[tuple[str, int, bytes]] = set().union(*found.values())
    assert ("127.0.0.1", dead, listener.token) in marked
    local_event = prepare(CONFIG, local, resume=False)
    trio.run(lambda: run_event(local_event, local, on_game=lambda done: None))
    assert rows == stored(local)


def test_the_workers_send_no_result_straight_that_the_coordinators_settings_forbid(
    scheduler: str, tmp_path: Path
) -> None:
    """The coordinator's settings travel to the workers with each game: with a
    ``push_max_bytes`` that no result fits in, no worker sends one straight (the listener sees
    none too large: none reaches it), and every result comes through Dask."""
    out = tmp_path / "ev"
    event = prepare(CONFIG, out, resume=False)
    settings = ClusterSettings(push_max_bytes=1)
    with capture_logs() as logs:
        trio.run(
            lambda: run_event(
                event,
                out,
                on_game=lambda done: None,
                venue=ClusterVenue(scheduler, settings=settings),
            )
        )
    events = [each["event"] for each in logs]
    assert "cluster_result_too_large" not in events
    (summary,) = [each for each in logs if each["event"] == "cluster_games_stored"]
    assert summary["games"] == GAMES
    assert summary["sent_straight"] == 0
    assert [row[0] for row in stored(out)] == list(range(1, GAMES + 1))

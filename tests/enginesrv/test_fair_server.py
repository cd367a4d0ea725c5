"""A fair server: what many clients on many addresses share (docs/protocol.md §2, "Sharing
among peers"; docs/security.md, "Network clients"), attacked as such clients would."""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable

import pytest
import trio

import games
from enginesrv.admission import Admission, Ticket, peer_of
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
from enginesrv.search.share import Segment, Waiter
from enginesrv.serve.connection import Limits
from enginesrv.serve.offload import Offloader
from enginesrv.serve.outbox import Outbox, OutputBudget
from enginesrv.serve.reader import READ_AHEAD, TOKEN_COST
from enginesrv.serve.settings import SessionConfig
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.trio_run import trio_test

YINSH_10_1 = "position startpos moves h6 g6 g8 c6 e10 f8 g11 e9 h11 d7"
"""The Yinsh position of docs/protocol.md §10.1."""
YINYANG_VIEW = (
    "position fen bwww/bwww/bbbw/bbbw b start -bbbb>*,-..w.>bbw.,-wwww>w.ww,-.ww.>bwwb "
    "?,?,?,? 8 10 1"
)
"""A Yin Yang view whose side to act has tens of thousands of moves."""


# -- who a peer is -----------------------------------------------------------------------------


def test_a_peer_is_an_ipv4_address_or_an_ipv6_48() -> None:
    assert peer_of("10.1.2.3") == "10.1.2.3"
    assert peer_of("::ffff:10.1.2.3") == "10.1.2.3"
    assert peer_of("2001:db8:1:2::1") == "2001:db8:1::/48"
    assert peer_of("2001:db8:1:ff02:ffff:ffff:ffff:ffff") == "2001:db8:1::/48"
    assert peer_of("2001:db8:2:2::1") == "2001:db8:2::/48"
    assert peer_of("2001:db8:1:2::1", prefix_v6=64) == "2001:db8:1:2::/64"
    assert peer_of("10.1.2.3", prefix_v4=24) == "10.1.2.0/24"
    assert peer_of("2001:db8:1:2::1", prefix_v6=128) == "2001:db8:1:2::1"
    assert peer_of("stdio") == "stdio"


def test_a_whole_ipv6_site_counts_as_one_peer() -> None:
    """A site handed a /48 (a /64 per host, a /56 per home) can come from as many addresses
    as it likes: its connections are counted together."""
    admission = Admission(connections=100, peer_connections=3)
    hosts = [f"2001:db8:7:{subnet:x}::{i:x}" for subnet, i in ((0, 1), (1, 1), (0xFF00, 2))]
    hosts += ["2001:db8:7:ffff::9", "2001:db8:7:1234::5"]
    tickets = [admission.admit(host, "tcp") for host in hosts]
    assert [isinstance(t, Ticket) for t in tickets] == [True, True, True, False, False]
    assert tickets[3] == "2001:db8:7::/48 holds its limit of 3 connections"
    assert isinstance(admission.admit("2001:db8:8::1", "tcp"), Ticket)


def test_peers_that_take_their_share_leave_room_for_new_ones() -> None:
    """Peers that each fill their per-peer cap stop at three quarters of the server: the
    rest is for peers that hold almost nothing; once that is full too, a new peer's
    connection takes the newest of the peer holding most."""
    admission = Admission(connections=32, peer_connections=8)
    evicted: list[str] = []
    held = {}
    for peer in range(8):
        got = [admission.admit(f"10.0.0.{peer}", "web") for _ in range(8)]
        for number, ticket in enumerate(got):
            if isinstance(ticket, Ticket):
                ticket.on_evict = lambda why, name=f"{peer}.{number}": evicted.append(name)
        held[peer] = sum(isinstance(t, Ticket) for t in got)
    # three peers take 24, the next ones 2 each from the reserve until the server is full;
    # the last one's two take the newest connections of peers holding most
    # (among peers holding as many, the newest connection goes first)
    assert held == {0: 8, 1: 8, 2: 8, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2}
    assert evicted == ["2.7", "1.7"]
    assert admission.held == 32
    fresh = admission.admit("10.0.1.1", "tcp")
    assert isinstance(fresh, Ticket)
    assert evicted == ["2.7", "1.7", "0.7"]
    assert admission.held == 32
    again = admission.admit("10.0.1.1", "tcp")  # holds 1: still a newcomer
    assert isinstance(again, Ticket)
    assert evicted == ["2.7", "1.7", "0.7", "2.6"]
    third = admission.admit("10.0.1.1", "tcp")
    assert third == "the server holds its limit of 32 connections"
    assert admission.evicted == 4


def test_peers_holding_as_many_as_a_victim_cannot_aim_evictions_at_it() -> None:
    """An older peer holding two (a person's two games) and newer peers holding as many: a
    newcomer's eviction takes the newest connection among them, not the older peer's."""
    admission = Admission(connections=8, peer_connections=8)
    evicted: list[str] = []
    for name, host in (("victim-1", "10.0.0.1"), ("victim-2", "10.0.0.1"),
                       ("a-1", "10.0.1.1"), ("a-2", "10.0.1.1"),
                       ("b-1", "10.0.1.2"), ("b-2", "10.0.1.2"),
                       ("c-1", "10.0.1.3"), ("d-1", "10.0.1.4")):  # fmt: skip
        ticket = admission.admit(host, "tcp")
        assert isinstance(ticket, Ticket), name
        ticket.on_evict = lambda why, name=name: evicted.append(name)
    assert isinstance(admission.admit("10.0.2.1", "tcp"), Ticket)
    assert evicted == ["b-2"]


def test_a_full_server_of_small_peers_refuses_a_newcomer() -> None:
    admission = Admission(connections=4, peer_connections=8)
    for peer in range(4):
        ticket = admission.admit(f"10.0.0.{peer}", "tcp")
        assert isinstance(ticket, Ticket)
        ticket.on_evict = lambda why: pytest.fail("no peer holds more than the newcomer")
    assert admission.admit("10.0.1.1", "tcp") == "the server holds its limit of 4 connections"


def test_a_peer_at_its_cap_closes_its_own_idle_http_connection_first() -> None:
    """A browser keeps idle keep-alive connections: at its cap, its next connection takes the
    oldest of them, never a session; with none idle it is refused."""
    admission = Admission(connections=100, peer_connections=3)
    closed: list[str] = []
    idle = {"http-1": True, "http-2": True}
    for name in ("session", "http-1", "http-2"):
        ticket = admission.admit("10.0.0.1", "web")
        assert isinstance(ticket, Ticket)
        ticket.on_evict = lambda why, name=name: closed.append(name)
        if name.startswith("http"):
            ticket.idle = lambda name=name: idle[name]
    assert isinstance(admission.admit("10.0.0.1", "web"), Ticket)
    assert closed == ["http-1"]
    idle["http-2"] = False  # busy answering a request
    assert admission.admit("10.0.0.1", "web") == "10.0.0.1 holds its limit of 3 connections"
    assert closed == ["http-1"]


def test_a_full_server_closes_an_idle_http_connection_before_a_game() -> None:
    admission = Admission(connections=4, peer_connections=10)
    closed: list[str] = []
    for name in ("game-1", "idle-http", "game-2"):
        ticket = admission.admit("10.0.0.1", "web")
        assert isinstance(ticket, Ticket)
        ticket.on_evict = lambda why, name=name: closed.append(name)
        if name == "idle-http":
            ticket.idle = lambda: True
    assert isinstance(admission.admit("10.0.0.2", "tcp"), Ticket)  # full now
    assert isinstance(admission.admit("10.0.0.3", "tcp"), Ticket)
    assert closed == ["idle-http"]
    assert isinstance(admission.admit("10.0.0.4", "tcp"), Ticket)
    assert closed == ["idle-http", "game-2"]


def test_the_descriptor_budget_caps_the_connections() -> None:
    admission = Admission(connections=100, peer_connections=0, descriptors=5)
    tickets = [admission.admit(f"10.0.0.{i}", "http") for i in range(6)]
    assert tickets[-1] == "the server holds the 5 connections its descriptors allow"
    assert isinstance(tickets[0], Ticket)
    tickets[0].release()
    tickets[0].release()  # twice is once
    assert admission.held == 4
    assert isinstance(admission.admit("10.0.0.9", "http"), Ticket)


def test_a_trusted_connection_no_longer_counts_against_its_peer() -> None:
    admission = Admission(connections=10, peer_connections=2, trusted=1)
    first = admission.admit("10.0.0.1", "results")
    assert isinstance(first, Ticket)
    first.trust()
    assert admission.per_peer["10.0.0.1"] == 0
    assert admission.may_trust() is False
    second = admission.admit("10.0.0.1", "results")
    third = admission.admit("10.0.0.1", "results")
    assert isinstance(second, Ticket)
    assert isinstance(third, Ticket)
    first.release()
    assert admission.holding_trusted == 0
    assert admission.held == 2


@trio_test
async def test_eight_addresses_that_fill_their_share_cannot_lock_out_a_ninth() -> None:
    """8 addresses x 8 connections on a server of 32: a new address is still served."""
    limits = Limits(connections=32, peer_connections=8)
    async with running_server(limits=limits) as (server, port):
        held: list[TextPeer] = []
        for peer in range(1, 9):
            for _ in range(8):
                client = await TextPeer.connect(port, local=f"127.0.1.{peer}")
                held.append(client)
        served = 0
        for client in held:
            await client.send("isready")
        for client in held:
            try:
                if await client.line() == "readyok":
                    served += 1
            except (EOFError, trio.BrokenResourceError):
                pass
        # three of them 8, the next four 2 each from the reserve; the last one's two took
        # the newest of the third and the second address (before they spoke: closed with
        # nothing sent)
        assert served == 32
        assert server.admission.evicted == 2
        fresh = await TextPeer.connect(port, local="127.0.2.1")
        await fresh.send("isready")
        assert await fresh.line() == "readyok"
        # the newest connection of a peer holding most was closed for it, with error 303
        assert server.admission.evicted == 3
        assert await held[7].line() == (
            "error 303 too-many-connections the server is full and 127.0.1.1 holds the most "
            "connections: its newest is closed for a new peer"
        )
        assert await held[7].closed()


# -- the search workers ------------------------------------------------------------------------


async def lines_until(peer: TextPeer, prefix: str) -> list[str]:
    with trio.fail_after(20):
        return await peer.until(prefix)


@trio_test
async def test_two_addresses_holding_infinite_searches_cannot_starve_a_third() -> None:
    """Two addresses hold both workers with ``go infinite``; a third's ``go depth 3`` is
    searched (its worker is lent by a suspended search) and the infinite searches still
    answer once each, after their stop, with a legal move."""
    async with running_server(
        workers=2, per_peer=1, slice_seconds=0.3, game="yinsh", bot="alphabeta"
    ) as (server, port):
        hogs = [await TextPeer.connect(port, local=f"127.0.0.{i}") for i in (3, 4)]
        for hog in hogs:
            await hog.send(YINSH_10_1, "go infinite")
            await hog.expect("info depth")  # it holds a worker
        third = await TextPeer.connect(port, local="127.0.0.5")
        await third.send(YINSH_10_1, "go depth 3")
        lines = await lines_until(third, "bestmove")
        assert any(line.startswith("info depth 3 ") for line in lines), lines
        assert not lines[-1].startswith("bestmove none")
        assert "stopped" not in lines[-1]
        pool = server.runner
        assert getattr(pool, "suspended", 0) >= 1
        for hog in hogs:
            # nothing but progress before the stop: an infinite search answers at its stop
            await hog.send("isready")
            early = await lines_until(hog, "readyok")
            assert not [line for line in early if line.startswith("bestmove")]
            await hog.send("stop")
            answer = await lines_until(hog, "bestmove")
            token = answer[-1].split()[1]
            state = games.replay(games.load("yinsh"), None, YINSH_10_1.split()[3:])
            state.parse_move(token)
            await hog.send("isready")
            assert await lines_until(hog, "readyok")
            assert not [line for line in hog.buffer.decode().splitlines() if "bestmove" in line]


@trio_test
async def test_a_search_stopped_while_suspended_answers_with_its_best_move_so_far() -> None:
    async with running_server(
        workers=1, per_peer=1, slice_seconds=0.3, game="yinsh", bot="alphabeta"
    ) as (server, port):
        first = await TextPeer.connect(port, local="127.0.0.6")
        await first.send(YINSH_10_1, "go infinite")
        await first.expect("info depth")
        second = await TextPeer.connect(port, local="127.0.0.7")
        await second.send(YINSH_10_1, "go infinite")
        await second.expect("info string waiting for a search worker")
        await second.expect("info depth")  # the first lent it the worker
        assert getattr(server.runner, "suspended", 0) == 1
        await first.send("stop")
        answer = await lines_until(first, "bestmove")
        assert answer[-1].split()[1] != "none"
        await second.send("stop")
        assert (await lines_until(second, "bestmove"))[-1].split()[1] != "none"


@trio_test
async def test_a_lent_worker_goes_to_the_peer_it_was_lent_for() -> None:
    """One worker: an address runs an infinite search and queues two more; another address's
    search must get the worker lent by the first, not the first address's next search."""
    async with running_server(
        workers=1, per_peer=1, slice_seconds=0.3, game="yinsh", bot="alphabeta"
    ) as (server, port):
        hogs = [await TextPeer.connect(port, local="127.0.0.8") for _ in range(3)]
        await hogs[0].send(YINSH_10_1, "go infinite")
        await hogs[0].expect("info depth")
        for hog in hogs[1:]:
            await hog.send(YINSH_10_1, "go infinite")
            await hog.expect("info string waiting for a search worker")
        other = await TextPeer.connect(port, local="127.0.0.9")
        await other.send(YINSH_10_1, "go depth 2")
        lines = await lines_until(other, "bestmove")
        assert any(line.startswith("info depth 2 ") for line in lines), lines
        assert getattr(server.runner, "suspended", 0) == 1
        for hog in hogs:
            await hog.send("stop")
        for hog in hogs:  # the queued ones never searched: any legal move, still one
            assert (await lines_until(hog, "bestmove"))[-1].split()[1] != "none"


@trio_test
async def test_a_resumed_search_keeps_its_worker_longer_each_time() -> None:
    """Two addresses take turns on one worker: each time a search is resumed it keeps the
    worker twice as long before it may be suspended again, so a deep search still ends."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, per_peer=1, slice_seconds=0.2)
        await pool.start()
        try:
            stops = {"10.0.0.1": trio.Event(), "10.0.0.2": trio.Event()}
            yinsh = games.load("yinsh").new_state().to_string()
            for peer, stop in stops.items():
                job = SearchJob(session=peer, game="yinsh", position=yinsh, bot="alphabeta",
                                options=())  # fmt: skip
                nursery.start_soon(
                    functools.partial(
                        pool.search,
                        job,
                        on_info=lambda info: None,
                        stop=stop,
                        hard_deadline=None,
                        peer=peer,
                    )
                )
            seen: list[tuple[str | None, float]] = []
            with trio.fail_after(20):
                while len(seen) < 4:
                    for segment in list(pool._share.segments):
                        if (segment.peer, segment.hold) not in seen:
                            seen.append((segment.peer, segment.hold))
                    await trio.sleep(0.01)
            first = seen[0][0]
            second = "10.0.0.2" if first == "10.0.0.1" else "10.0.0.1"
            assert seen == [(first, 0.2), (second, 0.2), (first, 0.4), (second, 0.4)]
            for stop in stops.values():
                stop.set()
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


@trio_test
async def test_a_new_search_waits_a_slice_however_long_the_holder_may_keep_its_worker() -> None:
    """A search resumed many times keeps its worker longer against other suspended searches,
    never against a new one: holds grown on purpose (by addresses that each suspend it once)
    cannot keep a third address waiting."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, per_peer=1, slice_seconds=1.0)
        now = trio.current_time()
        held = Segment("10.0.0.1", since=now - 1.5, ends=math.inf, hold=64.0)
        pool._share.segments.add(held)
        pool._share.holding["10.0.0.1"] = 1
        pool._share.lend_to(Waiter("10.0.0.2", resuming=True))
        assert not held.suspend.is_set()  # a suspended one waits out the hold
        pool._share.lend_to(Waiter("10.0.0.3"))
        assert held.suspend.is_set()  # a new one waits a slice
        young = Segment("10.0.0.4", since=now - 0.5, ends=math.inf, hold=1.0)
        pool._share.segments.add(young)
        pool._share.holding["10.0.0.4"] = 1
        pool._share.lend_to(Waiter("10.0.0.5"))
        assert not young.suspend.is_set()  # not before its slice
        nursery.cancel_scope.cancel()


# -- limits of a session -----------------------------------------------------------------------


@trio_test
async def test_the_handshake_announces_the_limits_of_fairness() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("ugi")
        lines = await peer.until("ugiok")
        for line in (
            "limit movetime 60000",
            "limit clock 86400000",
            "limit plies 4000",
            "limit outputtotal 67108864",
            "limit peerprefix4 32",
            "limit peerprefix6 48",
        ):
            assert line in lines


@trio_test
async def test_a_search_over_the_movetime_or_clock_limit_is_refused_naming_it() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos", "go movetime 60001")
        assert await peer.line() == (
            "error 101 bad-arguments go: movetime 60001 is over the server's limit of 60000 "
            "ms (limit movetime)"
        )
        assert await peer.line() == "bestmove none"
        await peer.send("go p1time 1000 p2time 86400001")
        assert await peer.line() == (
            "error 101 bad-arguments go: p2time 86400001 is over the server's limit of "
            "86400000 ms on a clock (limit clock)"
        )
        assert await peer.line() == "bestmove none"
        await peer.send("go movetime 60000", "stop")
        assert (await lines_until(peer, "bestmove"))[-1] != "bestmove none"


@trio_test
async def test_a_session_cannot_grow_past_the_ply_limit() -> None:
    config = SessionConfig(default_game="yoxii", default_bot="random", max_plies=4)
    async with running_server(config=config) as (_, port):
        peer = await TextPeer.connect(port)
        state = games.load("yoxii").new_state()
        moves = []
        for _ in range(5):
            move = state.legal_moves()[0]
            moves.append(state.move_to_str(move))
            state.push(move)
        await peer.send(f"position startpos moves {' '.join(moves)}")
        assert await peer.line() == (
            "error 305 ply-limit position: 5 moves are over the server's limit of 4 plies in "
            "a session's game (limit plies)"
        )
        await peer.send("query position")
        assert await peer.line() == "response " + games.load("yoxii").new_state().to_string()
        await peer.send(f"position startpos moves {' '.join(moves[:4])}")
        await peer.send(f"play {moves[4]}")
        assert (await peer.line()).startswith("error 305 ply-limit play: the game has reached")
        await peer.send("undo", f"play {moves[3]}")
        assert (await peer.line()).startswith("response ")
        assert (await peer.line()).startswith("response ")


# -- memory --------------------------------------------------------------------------------------


def test_the_output_budget_closes_the_connection_holding_most_first() -> None:
    budget = OutputBudget(1000)
    lost: list[str] = []
    boxes = [Outbox(10_000, 10_000) for _ in range(3)]

    def losing(number: int) -> Callable[[str], None]:
        return lambda why: lost.append(f"{number}: {why}")

    for number, box in enumerate(boxes):
        budget.join(box, losing(number))
    assert boxes[0].put(b"x" * 300)
    assert boxes[1].put(b"x" * 500)
    assert boxes[2].put(b"x" * 100)
    assert lost == []
    assert boxes[2].put(b"x" * 200)  # 1100 in all: the one holding most goes
    assert len(lost) == 1
    assert lost[0].startswith("1: output budget:")
    assert budget.size == 600
    assert budget.shed == 1


@trio_test
async def test_connections_that_never_read_cannot_take_the_memory_together() -> None:
    """Six addresses flood replies they never read, each under its own output cap: together
    they go over the server's budget, and the ones holding most are closed; a client that
    reads is served."""
    limits = Limits(output=4 << 20, output_total=2 << 20)
    async with running_server(limits=limits, game="yinyang") as (server, port):
        flood = (f"{YINYANG_VIEW}\n" + "query moves\n" * 400).encode()
        floods = [await TextPeer.connect(port, local=f"127.0.3.{i}") for i in range(1, 7)]
        for peer in floods:
            with trio.move_on_after(2):
                await peer.stream.send_all(flood)
        with trio.fail_after(30):
            while server.output.shed == 0:
                await trio.sleep(0.05)
        assert server.output.size <= 2 << 20
        reader = await TextPeer.connect(port, local="127.0.3.9")
        await reader.send("isready")
        assert await reader.line() == "readyok"


# -- the event loop ------------------------------------------------------------------------------


@trio_test
async def test_costly_replies_run_on_one_thread_and_one_at_a_time_per_peer() -> None:
    offloader = Offloader(threads=1)
    running: list[str] = []
    most = {"all": 0}
    threads = set()

    def work(peer: str) -> Callable[[], str]:
        def compute() -> str:
            threads.add(threading.get_ident())
            running.append(peer)
            most["all"] = max(most["all"], len(running))
            for _ in range(20000):
                pass
            running.remove(peer)
            return peer

        return compute

    results: list[str] = []
    async with trio.open_nursery() as nursery:
        for peer in ("a", "a", "a", "b", "b"):

            async def one(peer: str = peer) -> None:
                results.append(await offloader.run(peer, work(peer)))

            nursery.start_soon(one)
    assert sorted(results) == ["a", "a", "a", "b", "b"]
    assert most["all"] == 1
    assert threading.get_ident() not in threads


async def _until(condition: Callable[[], bool]) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(0.001)


@trio_test
async def test_a_freed_thread_goes_to_the_peer_that_used_the_threads_least() -> None:
    """A peer that has just used the thread for a while waits behind one that has not, though
    it asked first: many costly replies of some peers do not keep another's one waiting."""
    offloader = Offloader(threads=1)
    blocker = threading.Event()
    order: list[str] = []

    def busy_for(seconds: float, name: str) -> Callable[[], None]:
        def compute() -> None:
            time.sleep(seconds)
            order.append(name)

        return compute

    await offloader.run("hog", busy_for(0.05, "hog's first"))
    assert offloader.used("hog") > 0.02
    async with trio.open_nursery() as nursery:
        nursery.start_soon(offloader.run, "holder", blocker.wait)
        await _until(lambda: offloader.busy == 1)
        nursery.start_soon(offloader.run, "hog", busy_for(0, "hog's second"))
        await _until(lambda: offloader.waiting == 1)
        nursery.start_soon(offloader.run, "light", busy_for(0, "light"))
        await _until(lambda: offloader.waiting == 2)
        blocker.set()
    assert order == ["hog's first", "light", "hog's second"]
    assert (offloader.busy, offloader.waiting) == (0, 0)


@trio_test
async def test_a_waiter_cancelled_gives_its_place_on_and_no_thread_is_lost() -> None:
    """A waiter cancelled before its turn (its client gone) is skipped, even though it came
    first by the peers' use; the thread goes to the next, and comes back to the pool."""
    offloader = Offloader(threads=1)
    blocker = threading.Event()
    done: list[str] = []
    await offloader.run("next", lambda: time.sleep(0.02))  # "next" has used the thread
    leaver = trio.CancelScope()

    async def gives_up() -> None:
        with leaver:
            await offloader.run("leaver", lambda: done.append("leaver"))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(offloader.run, "holder", blocker.wait)
        await _until(lambda: offloader.busy == 1)
        nursery.start_soon(offloader.run, "next", lambda: done.append("next"))
        await _until(lambda: offloader.waiting == 1)
        nursery.start_soon(gives_up)  # would go before "next", which has used the thread
        await _until(lambda: offloader.waiting == 2)
        leaver.cancel()
        await _until(lambda: offloader.waiting == 1)
        blocker.set()
    assert done == ["next"]
    assert (offloader.busy, offloader.waiting) == (0, 0)
    await offloader.run("after", lambda: done.append("after"))  # the thread is there still
    assert done == ["next", "after"]


@trio_test
async def test_query_moves_on_a_huge_list_is_computed_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = games.load("yinyang").state_from_string(YINYANG_VIEW.split(" ", 2)[2])
    kind = type(state)
    original = kind.count_moves
    seen: list[int] = []

    def counting(self: games.State) -> int:
        seen.append(threading.get_ident())
        return original(self)

    monkeypatch.setattr(kind, "count_moves", counting)
    async with running_server(game="yinyang") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(YINYANG_VIEW, "query moves")
        reply = await peer.line()
        assert reply.startswith("response L1@"), reply[:200]
    assert seen
    assert threading.get_ident() not in seen


# -- what waits to be answered ---------------------------------------------------------------------


@trio_test
async def test_a_position_over_the_ply_limit_is_refused_before_it_waits() -> None:
    """A frame of 65,536 short moves takes megabytes once decoded: it is refused as it is
    read (error 305, answered in turn, the session going on), not kept in the queue."""
    async with running_server(game="yoxii") as (_, port):
        peer = await MsgpackPeer.connect(port)
        moves = ["a1"] * 65536
        for msgid in range(1, 4):
            await peer.request(msgid, "position", {"moves": moves})
        await peer.request(4, "isready")
        for msgid in range(1, 4):
            frame = await peer.frame()
            assert frame[1] == msgid
            assert frame[2][:2] == [305, "ply-limit"]
            assert frame[2][2] == (
                "position: 65536 moves are over the server's limit of 4000 plies in a "
                "session's game (limit plies)"
            )
        assert (await peer.frame())[1] == 4


@trio_test
async def test_requests_read_ahead_are_bounded_in_bytes_and_moves() -> None:
    """A client that sends long positions faster than they are answered is read only as far
    as the read-ahead allows: what waits stays within ``READ_AHEAD`` (and one request)."""
    async with running_server(game="yoxii") as (server, port):
        state = games.load("yoxii").new_state()
        moves: list[str] = []
        while len(moves) < 60 and not state.is_terminal():
            move = state.legal_moves()[0]
            moves.append(state.move_to_str(move))
            state.push(move)
        line = f"position startpos moves {' '.join(moves)}\n".encode()
        peer = await TextPeer.connect(port)
        most = 0

        async def watch() -> None:
            nonlocal most
            while True:
                for connection in server.connections:
                    most = max(most, connection.reader.queued)
                await trio.sleep(0)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            with trio.move_on_after(3):
                await peer.stream.send_all(line * 400 + b"isready\n")
            assert await lines_until(peer, "readyok")
            nursery.cancel_scope.cancel()
        one = len(line) + TOKEN_COST * len(moves)
        assert one < READ_AHEAD < most + one
        assert most <= READ_AHEAD

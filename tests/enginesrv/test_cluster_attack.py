"""Attacks on the results sent straight back from the workers (``enginesrv.event.runners.cluster``)
and on the cluster branch of the event loop: races of a push with the Dask future, the address
the workers are given, errors in storing, readers of a running event's store, a peer that holds
the result port: the ways an event on a cluster could lose, double or stall a game, and what a
hostile peer could do through the result port."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
import types
from pathlib import Path
from typing import Any, cast

import outcome
import pytest
import trio
from structlog.testing import capture_logs

from enginesrv.event import opened
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import GameResult, GameSetup
from enginesrv.event.play.outcome import Outcome
from enginesrv.event.play.plan import GamePlan, Played
from enginesrv.event.play.records import Record, RecordMove
from enginesrv.event.prepared import PreparedEvent, prepare
from enginesrv.event.results.store import store_game, stored_event
from enginesrv.event.runners.cluster import ClusterVenue
from enginesrv.event.runners.cluster.coordinator import ClusterRunner
from enginesrv.event.runners.cluster.host import WorkerHost
from enginesrv.event.runners.cluster.listener import ResultListener
from enginesrv.event.runners.cluster.roster import WorkerRoster
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.wire import ReplyTo, TaskResult
from enginesrv.event.tournament import Finished, run_event
from tests.enginesrv.cluster_support import journal_mode, local_scheduler

scheduler = pytest.fixture(scope="module", name="scheduler")(local_scheduler)

WAIT = 5.0
"""Seconds any one wait of these tests may take."""
CONFIG = EventConfig(
    game="yoxii", players=("bot:greedy", "bot:random"), depth=1, games=4, event="attack"
)


def answer(game_id: int = 1) -> TaskResult:
    record = Record(
        headers={"Game": "yoxii", "Result": "p1 wins"},
        moves=[RecordMove("e5"), RecordMove("d4")],
        comments=[f"game {game_id}"],
    )
    result = GameResult(Outcome.parse("p1", "totem blocked"), record, 2, 0.5, 0.25, search_time=0.2)
    return TaskResult(result, (11, 22), "tcp://10.0.0.9:4000", 1234.5)


def plan(game_id: int) -> GamePlan:
    """The plan of game ``game_id`` of ``CONFIG`` between the players a (p1) and b."""
    event = PreparedEvent.of(CONFIG)
    setup = GameSetup(f"g{game_id}", ("a", "b"), event.limits, event.adjudication)
    return GamePlan(game_id, 1, (0, 1), setup)


def host_without_pool() -> WorkerHost:
    return cast(WorkerHost, types.SimpleNamespace(unreachable=set()))


def checked(*workers: str) -> WorkerRoster:
    """A roster of ``workers``, each checked and able to run the players a and b."""
    roster = WorkerRoster(("a", "b"), rejoin_wait=0.0)
    roster.see(workers, 0.0)
    for worker in workers:
        roster.checked(worker, {})
    return roster


# -- a push racing the Dask future ---------------------------------------------------------------


class RecomputedFuture:
    """A Dask future as the client sees it when the worker that played the game through Dask
    (its coordinator unreachable from there, or its push closed unanswered: the listener
    full) dies after the task ended and before the client fetched its value: the task is
    done (its callbacks run), then ``result()`` waits while the scheduler runs the game again
    on another worker, which reaches the coordinator, sends the result straight and returns
    the marker."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.recomputed = threading.Event()
        self.value: TaskResult | None = None
        self.cancelled = False

    def add_done_callback(self, fn: Any) -> None:
        threading.Thread(target=fn, args=(self,), daemon=True).start()  # done at once

    def result(self) -> TaskResult:
        self.asked.set()
        assert self.recomputed.wait(4 * WAIT)
        assert self.value is not None
        return self.value

    def cancel(self) -> None:
        self.cancelled = True


def test_a_game_recomputed_after_its_worker_died_is_taken_from_its_push() -> None:
    """The task's end can come first (its worker returned the whole result through Dask) and
    its value then be a marker: the worker was lost before the client fetched the value, and
    Dask ran the game again on another worker, which sent the result straight. That result is
    taken, not "sent but not taken" (an error that stopped the event)."""
    settings = ClusterSettings(ack_wait=0.3)
    future = RecomputedFuture()
    submitted: list[Any] = []

    def submit(fn: Any, task: Any, **kwargs: Any) -> RecomputedFuture:
        submitted.append(task)
        return future

    runner = ClusterRunner("tcp://127.0.0.1:1", CONFIG, settings=settings)
    runner.client = types.SimpleNamespace(submit=submit)
    runner.workers.roster = checked("tcp://a:1", "tcp://b:1")
    sent = answer(1)

    async def main() -> outcome.Outcome[Played]:
        async with trio.open_nursery() as nursery:
            listener = ResultListener(settings=settings)
            await listener.serve(nursery, "127.0.0.1", 0, "127.0.0.1")
            runner.listener = listener
            got: list[outcome.Outcome[Played]] = []

            async def play() -> None:
                got.append(await outcome.acapture(runner.play, plan(1), None))

            with trio.fail_after(4 * WAIT):
                nursery.start_soon(play)
                await trio.to_thread.run_sync(future.asked.wait, WAIT)
                reply = listener.reply
                assert reply is not None
                # the worker that ran the game again sends it straight: taken, and answered
                # (after ack_wait: nothing stores it while the runner waits on Dask)
                assert await WorkerHost.push(host_without_pool(), reply, 1, sent, settings)
                assert listener.results[1][0] == sent
                future.value = TaskResult(None, (0, 0), "tcp://b:1", 1.0, delivered=True)
                future.recomputed.set()
                while not got:
                    await trio.sleep(0.01)
            runner.settle(1)
            nursery.cancel_scope.cancel()
        return got[0]

    done = trio.run(main)
    assert submitted
    # raises EventError: "game 1's result was sent but not taken"
    played = done.unwrap()
    assert sent.result is not None
    assert played.secret_seeds == sent.secret_seeds
    worker = f"played on the worker {sent.worker}"
    taken = dataclasses.replace(sent.result.record, comments=[*sent.result.record.comments, worker])
    assert played.result == dataclasses.replace(sent.result, record=taken)


def test_an_error_from_the_cluster_is_one_line() -> None:
    """A task's error from Dask may hold a newline (a ``FutureCancelledError`` when the
    scheduler is lost mid-event: "...cancelled for reason: scheduler-connection-lost.\\nClient
    lost the connection..."); the command's error stays one line. Seen by killing a ``dask
    scheduler`` mid-event."""
    distributed = pytest.importorskip("distributed")
    lost = distributed.client.FutureCancelledError(
        "enginesrv-game-x-5", "scheduler-connection-lost",
        "Client lost the connection to the scheduler. Please check your connection and re-run "
        "your work.",
    )  # fmt: skip

    class Lost:
        def result(self) -> TaskResult:
            raise lost

        def cancel(self) -> None:
            pass

    runner = ClusterRunner("tcp://127.0.0.1:1", CONFIG, None)
    runner.client = types.SimpleNamespace(submit=lambda *a, **k: Lost())
    runner.workers.roster = checked("tcp://a:1")

    async def main() -> None:
        with trio.fail_after(WAIT):
            await runner.play(plan(5), None)

    with pytest.raises(EventError, match="could not be played on the cluster") as caught:
        trio.run(main)
    assert "\n" not in str(caught.value), str(caught.value)


# -- the address the workers are given -----------------------------------------------------------


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    ("scheduler_address", "listen"),
    [
        ("tcp://127.0.0.1:8786", ("::", 0)),  # --cluster-listen [::]:PORT, an IPv4 cluster
        ("tcp://[::1]:8786", ("0.0.0.0", 0)),  # --cluster-listen 0.0.0.0:PORT, an IPv6 one
    ],
)
def test_listening_on_every_address_is_reachable_at_the_address_given(
    scheduler_address: str, listen: tuple[str, int]
) -> None:
    """A wildcard host ("0.0.0.0" or "::") listens on every address of the family of the
    address the workers are given (this machine's on the route to the scheduler): trio's IPv6
    listeners take no IPv4 connection, so ``[::]:PORT`` on an IPv4 cluster, or ``0.0.0.0:PORT``
    on an IPv6 one, would leave nothing listening where the workers are sent."""
    if "[" in scheduler_address and not ipv6_loopback():
        pytest.skip("no IPv6 loopback")
    runner = ClusterRunner(scheduler_address, CONFIG, listen)

    async def main() -> tuple[ReplyTo | None, str]:
        problem = ""
        async with trio.open_nursery() as nursery:
            with trio.fail_after(WAIT):
                await runner.serve(nursery)
                reply = None if runner.listener is None else runner.listener.reply
                if reply is not None:
                    try:
                        stream = await trio.open_tcp_stream(reply.host, reply.port)
                    except OSError as exc:
                        problem = str(exc)
                    else:
                        await stream.aclose()
            nursery.cancel_scope.cancel()
        return reply, problem

    reply, problem = trio.run(main)
    assert reply is not None
    assert problem == "", f"the workers are sent to {reply}, where nothing listens: {problem}"


# -- whole events on a cluster -------------------------------------------------------------------


@pytest.fixture
def listeners(monkeypatch: pytest.MonkeyPatch) -> list[ResultListener]:
    """Each result listener an event starts from now on."""
    made: list[ResultListener] = []
    serve = ResultListener.serve

    async def spy(self: ResultListener, *args: Any) -> None:
        await serve(self, *args)
        made.append(self)

    monkeypatch.setattr(ResultListener, "serve", spy)
    return made


def side_files(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith("results.sqlite-"))


def test_a_store_that_fails_mid_event_stops_it_at_once_and_leaves_one_file(
    scheduler: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listeners: list[ResultListener],
) -> None:
    """The third game's record cannot be written (the disk full, the directory made
    unwritable): the event stops with one error, the two games stored are kept, the listener
    forgets every game (no worker held for ack_wait), and the store is one file again."""
    calls: list[int] = []
    failed_at: list[float] = []
    real = store_game

    def failing(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            failed_at.append(time.monotonic())
            raise OSError(28, "No space left on device")
        real(*args, **kwargs)

    monkeypatch.setattr(opened, "store_game", failing)
    out = tmp_path / "ev"
    event = prepare(dataclasses.replace(CONFIG, games=40), out, resume=False)
    with pytest.raises(EventError, match=r"cannot write the results: .*No space left"):
        trio.run(
            lambda: run_event(event, out, on_game=lambda done: None, venue=ClusterVenue(scheduler))
        )
    # at once: from the failed store to the error, no wait for any of the cluster's timeouts,
    # of which ack_wait (a worker's result held unanswered, 2 s) is the shortest
    assert time.monotonic() - failed_at[0] < ClusterSettings().ack_wait
    (listener,) = listeners
    assert listener.waiting == {}
    assert listener.results == {}
    assert listener.settled == {}
    _, rows = stored_event(out, "")
    assert len(rows) == 2
    assert side_files(out) == []
    assert journal_mode(out / "results.sqlite") == "delete"


def test_enginesrv_results_reads_a_running_cluster_event_and_leaves_its_log_alone(
    scheduler: str, tmp_path: Path
) -> None:
    """``enginesrv results DIR`` (``stored_event``: a read-write connection that tries to
    make the store one file again when it closes) while the event runs: it reads every game
    stored so far, the event goes on logging ahead, and ends as one file."""
    out = tmp_path / "ev"
    event = prepare(dataclasses.replace(CONFIG, games=6), out, resume=False)
    seen: list[tuple[int, int, str]] = []

    def on_game(done: Finished) -> None:
        started = time.monotonic()
        _, rows = stored_event(out, "")
        assert time.monotonic() - started < 1  # never waits on the running event
        seen.append((done.done, len(rows), journal_mode(out / "results.sqlite")))

    trio.run(lambda: run_event(event, out, on_game=on_game, venue=ClusterVenue(scheduler)))
    assert [(done, count) for done, count, _ in seen] == [(n, n) for n in range(1, 7)]
    assert {mode for _, _, mode in seen} == {"wal"}
    assert side_files(out) == []
    assert journal_mode(out / "results.sqlite") == "delete"


def test_a_peer_holding_every_result_connection_only_diverts_results_through_dask(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A peer without the token holds every connection the listener takes (a header begun,
    never finished): the workers' pushes are closed unanswered, each result comes through
    Dask, and the event stores every game once, without waiting on the peer."""
    settings = ClusterSettings(push_connections=2, push_read_timeout=60.0)
    serve = ResultListener.serve
    made: list[ResultListener] = []

    async def held_serve(
        self: ResultListener, nursery: trio.Nursery, host: str, port: int, advertise: str
    ) -> None:
        await serve(self, nursery, host, port, advertise)
        made.append(self)
        reply = self.reply
        assert reply is not None
        streams = [await trio.open_tcp_stream(reply.host, reply.port) for _ in range(2)]
        for stream in streams:
            await stream.send_all(b"ESR1")

        async def hold() -> None:
            try:
                await trio.sleep_forever()
            finally:
                for stream in streams:
                    stream.socket.close()

        nursery.start_soon(hold)
        while self.open < 2:
            await trio.sleep(0.01)

    monkeypatch.setattr(ResultListener, "serve", held_serve)
    out = tmp_path / "ev"
    event = prepare(CONFIG, out, resume=False)
    started = time.monotonic()
    with capture_logs() as logs:
        trio.run(
            lambda: run_event(
                event,
                out,
                on_game=lambda done: None,
                venue=ClusterVenue(scheduler, settings=settings),
            )
        )
    assert time.monotonic() - started < 30
    (summary,) = [each for each in logs if each["event"] == "cluster_games_stored"]
    assert summary["games"] == 4
    assert summary["sent_straight"] == 0
    _, rows = stored_event(out, "")
    assert [row.id for row in rows] == [1, 2, 3, 4]
    (listener,) = made
    assert listener.refused >= 4
    assert listener.waiting == {}

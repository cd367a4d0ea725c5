"""Worker processes: real searches, a client leaving mid-search, stuck and dying workers,
the stdio engine and shutdown by signal, all with real child processes."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import msgpack
import pytest
import trio
from structlog.testing import capture_logs

import games
from bots.engine import SearchInfo
from enginesrv import reaper
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import STUCK, WorkerPool
from tests.enginesrv.peer import TextPeer, running_server
from tests.processes import ended, line_within, rest_within
from tests.trio_run import trio_test

YOXII = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"


def job(**kwargs: object) -> SearchJob:
    fields: dict[str, object] = {
        "session": "t", "game": "yoxii", "position": YOXII, "bot": "random", "options": (),
    }  # fmt: skip
    fields.update(kwargs)
    return SearchJob(**fields)  # type: ignore[arg-type]


def children() -> set[int]:
    """PIDs of this process's child processes (from /proc)."""
    me = str(os.getpid())
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] == me:
                        out.add(int(entry))
            except OSError:
                pass
    return out


async def settled(pool: WorkerPool) -> None:
    """Wait (at most 10 s) until every worker is idle again: a killed or dead worker is
    replaced in the background, after the search that lost it has returned."""
    with trio.fail_after(10):
        while not pool.all_idle():
            await trio.sleep(0.01)


@trio_test
async def test_real_workers_search_and_leave_no_process_behind() -> None:
    before = children()
    async with running_server(workers=2, game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("go depth 1")
        assert (await peer.until("bestmove"))[-1].startswith("bestmove ")
        # one spawner, which forked the two workers (enginesrv.search.spawner)
        (spawner,) = children() - before
        workers = reaper.descendants(spawner)
        assert len(workers) == 2
        assert set(workers.values()) <= set("RS")
    assert children() - before == set()
    assert [pid for pid in (spawner, *workers) if os.path.exists(f"/proc/{pid}")] == []


@trio_test
async def test_a_client_leaving_mid_search_frees_its_worker() -> None:
    async with running_server(workers=1, game="yoxii", bot="alphabeta") as (_, port):
        leaving = await TextPeer.connect(port)
        await leaving.send("setoption name Bot value random", "go infinite", "isready")
        assert await leaving.line() == "readyok"
        await leaving.aclose()
        staying = await TextPeer.connect(port)
        await staying.send("setoption name Bot value random", "go depth 1")
        lines = await staying.until("bestmove")
        assert lines[-1].startswith("bestmove ")


@trio_test
async def test_a_silent_worker_is_killed_at_the_deadline_and_replaced() -> None:
    silent = (sys.executable, "-c", "import sys; sys.stdin.buffer.read()")
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.1, command=silent, ready_timeout=0)
        await pool.start()
        outcome = await pool.search(
            job(), on_info=lambda i: None, stop=trio.Event(),
            hard_deadline=trio.current_time() + 0.2,
        )  # fmt: skip
        assert outcome.killed
        assert outcome.result is None
        await settled(pool)
        assert pool.restarts == 1
        assert pool.idle == 1
        await pool.aclose()


async def fill_input(pool: WorkerPool) -> None:
    """Fill the input pipe of the pool's one worker, which does not read it, to the brim."""
    (worker,) = pool._processes.workers
    with trio.move_on_after(0.5):  # a pipe holds some 64 KiB: full long before
        while True:
            await worker.send(b"\0" * 4096)


@trio_test
async def test_a_worker_that_does_not_read_its_search_is_killed_within_its_grace() -> None:
    """A worker whose input stays full (hung, or stopped by a signal) cannot hold a search
    for ever, not even one without a deadline: the search is not sent within the grace
    period, so the worker is killed and replaced and the search ends with why."""
    deaf = (sys.executable, "-c", "import time; time.sleep(600)")
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.1, command=deaf, ready_timeout=0)
        await pool.start()
        await fill_input(pool)
        outcome = await pool.search(
            job(), on_info=lambda i: None, stop=trio.Event(), hard_deadline=None
        )
        assert outcome.error == STUCK
        assert outcome.killed
        assert outcome.result is None
        await settled(pool)
        assert pool.restarts == 1
        await pool.aclose()


@trio_test
async def test_a_stop_that_a_worker_does_not_read_still_ends_its_search() -> None:
    """A worker that took its search and then stopped reading: the stop cannot be sent, and
    the worker is killed within its grace period all the same."""
    deaf = (sys.executable, "-c", "import os, time; os.read(0, 1); time.sleep(600)")
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.1, command=deaf, ready_timeout=0)
        await pool.start()
        stop = trio.Event()
        outcomes: list[SearchOutcome] = []

        async def search() -> None:
            outcomes.append(
                await pool.search(job(), on_info=lambda i: None, stop=stop, hard_deadline=None)
            )

        nursery.start_soon(search)
        (worker,) = pool._processes.workers
        while worker.job is None:
            await trio.sleep(0.01)
        await fill_input(pool)
        with capture_logs() as logs:
            stop.set()
            while not outcomes:
                await trio.sleep(0.01)
        assert outcomes[0].killed
        assert outcomes[0].result is None
        assert [e["reason"] for e in logs if e["event"] == "worker_restart"] == [STUCK]
        await settled(pool)
        assert pool.restarts == 1
        await pool.aclose()


@trio_test
async def test_a_grace_of_zero_still_hands_healthy_workers_their_searches() -> None:
    """``--stop-grace 0``: a worker is given ``SEND_FLOOR`` to take a message however short
    its grace, so a healthy one is never taken for stuck."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0)
        await pool.start()
        for _ in range(3):
            outcome = await pool.search(
                job(depth=1), on_info=lambda i: None, stop=trio.Event(),
                hard_deadline=None,
            )  # fmt: skip
            assert outcome.error is None
            assert not outcome.killed
            assert outcome.result is not None
        assert pool.restarts == 0
        await pool.aclose()


@trio_test
async def test_a_dying_worker_gives_an_error_and_is_replaced() -> None:
    dying = (sys.executable, "-c", "import sys; sys.stdin.buffer.read(1)")
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, command=dying, ready_timeout=0)
        await pool.start()
        outcome = await pool.search(
            job(), on_info=lambda i: None, stop=trio.Event(), hard_deadline=None
        )
        assert outcome.error == "the search worker died"
        await settled(pool)
        assert pool.restarts == 1
        await pool.aclose()


@trio_test
async def test_searches_wait_for_a_free_worker() -> None:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1)
        await pool.start()
        waited: list[bool] = []
        infos: list[SearchInfo] = []
        results = []

        async def one(stop: trio.Event) -> None:
            outcome = await pool.search(
                job(bot="random"), on_info=infos.append, stop=stop, hard_deadline=None,
                on_wait=lambda: waited.append(True),
            )  # fmt: skip
            results.append(outcome.result)

        async with trio.open_nursery() as searches:
            for _ in range(2):
                searches.start_soon(one, trio.Event())
        assert waited == [True]
        assert all(r is not None and r.token for r in results)
        await pool.aclose()


def test_stdio_engine_speaks_only_protocol_on_stdout() -> None:
    script = "\n".join(
        ["ugi", "isready", "position startpos moves f6", "query turn", "go depth 1", "quit", ""]
    )
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "engine", "--game", "yinsh", "--bot", "random"],
        input=script, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "id name enginesrv"
    assert "ugiok" in lines
    assert "readyok" in lines
    assert "response p2" in lines
    assert lines[-1].startswith("bestmove ")
    keywords = {"id", "game", "bot", "analysis", "level", "expectation", "limit", "option"}
    keywords |= {"ugiok", "readyok"}
    keywords.add("response")
    keywords.add("bestmove")
    assert {line.split()[0] for line in lines} <= keywords | {"info"}
    assert "connection_open" in proc.stderr  # logs go to stderr


def test_sigterm_sends_best_moves_and_exits_cleanly() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--game", "yoxii", "--bot", "random"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        ready = line_within(proc)
        assert ready.startswith("listening 127.0.0.1:")
        port = int(ready.rsplit(":", 1)[1])
        import socket

        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"go infinite\nisready\n")
            buffer = b""
            while b"readyok" not in buffer:
                buffer += sock.recv(4096)
            proc.send_signal(signal.SIGTERM)
            while b"error 304" not in buffer:
                data = sock.recv(4096)
                assert data, buffer
                buffer += data
        assert b"bestmove " in buffer
        assert proc.wait(timeout=20) == 0
        assert rest_within(proc) == ""  # exactly one line on stdout
    finally:
        ended(proc)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


def test_a_stop_that_overtakes_its_search_stops_it_when_it_starts() -> None:
    import io
    import threading

    import msgpack

    from enginesrv.search.worker import _Worker

    out = io.BytesIO()
    worker = _Worker(out)
    worker.request_stop(7)  # the stop of search 7 arrives before search 7 starts
    infinite = job(bot="alphabeta")  # no limit at all: only a stop ends it
    thread = threading.Thread(target=worker.search, args=(7, infinite), daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert not thread.is_alive(), "the search ignored the stop that came before it"
    frames = list(msgpack.Unpacker(io.BytesIO(out.getvalue()), raw=False))
    answer = frames[-1]
    assert answer[:3] == [1, 7, None]
    assert answer[3]["stopped"]
    # a stop for an earlier search does not stop the next one
    worker.request_stop(3)
    worker.search(8, job(bot="random"))
    assert not worker.stop_flag.is_set()


def test_a_job_counts_its_time_from_when_the_move_was_asked_for() -> None:
    timed = job(target=0.15, deadline=0.15, issued=100.0)
    limits = timed.limits(100.05)  # it reached the worker 50 ms late
    assert limits.deadline is not None
    assert limits.target is not None
    assert abs(limits.deadline - 0.10) < 1e-9
    assert abs(limits.target - 0.10) < 1e-9
    late = timed.limits(101.0)  # later than its whole budget: it still searches a moment
    assert late.deadline is not None
    assert 0 < late.deadline < 0.01
    assert job(depth=3).limits(5.0).deadline is None


def test_a_kept_bot_starts_afresh_when_its_next_search_is_for_another_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from bots.simple import RandomBot
    from enginesrv.search.worker import _Worker

    started: list[str] = []
    monkeypatch.setattr(RandomBot, "new_game", lambda self, game: started.append(game.name))
    worker = _Worker(io.BytesIO())
    worker.search(1, job(game_key="g1"))
    worker.search(2, job(game_key="g1"))
    assert started == []  # a new bot, then the same game: nothing to forget
    worker.search(3, job(game_key="g2"))
    assert started == ["yoxii"]
    worker.search(4, job(game_key="g2", new_game=True))
    assert started == ["yoxii", "yoxii"]


# -- whole turns: from_pv on the job, and a session's search on its own worker -------------------

# Yohoho: White's single first sub-move i3-j4 made; Black's two-sub-move turn starts
YOHOHO_TURN = "1ccgrgcc1/8/4a4/8/9/8/9/3A4/1CCGRGCC1 b 1 0"


def test_a_job_carries_from_pv_to_the_worker_and_its_limits() -> None:
    timed = job(target=1.0, deadline=2.0, from_pv=True)
    raw = timed.to_map()
    assert raw["from_pv"] is True
    assert SearchJob.from_map(raw) == timed
    assert SearchJob.from_map(raw).from_pv
    assert timed.limits(0.0).from_pv
    plain = job(target=1.0, deadline=2.0)
    assert not plain.from_pv
    assert SearchJob.from_map(plain.to_map()) == plain
    assert not plain.limits(0.0).from_pv
    older = dict(raw)
    del older["from_pv"]  # a job map from before the field: no plan is used
    assert not SearchJob.from_map(older).from_pv


def _answers(out: io.BytesIO) -> dict[int, dict[str, Any]]:
    """The result maps a worker wrote, by search id."""
    frames = list(msgpack.Unpacker(io.BytesIO(out.getvalue()), raw=False))
    return {frame[1]: frame[3] for frame in frames if frame[0] == 1}


@pytest.mark.parametrize(("from_pv", "planned"), [(True, True), (False, False)])
def test_a_worker_answers_a_turns_second_decision_from_the_plan_only_with_from_pv(
    from_pv: bool, planned: bool
) -> None:
    from enginesrv.search.worker import _Worker

    game = games.load("yohoho")
    out = io.BytesIO()
    worker = _Worker(out)
    first = job(game="yohoho", position=YOHOHO_TURN, bot="alphabeta", depth=3, from_pv=True)
    worker.search(1, first)
    answer = _answers(out)[1]
    assert len(answer["pv"]) >= 2
    state = game.state_from_string(YOHOHO_TURN)
    state.push(state.parse_move(answer["token"]))
    assert state.phase() == "2"
    second = replace(first, position=state.to_string(), from_pv=from_pv)
    worker.search(2, second)
    reply = _answers(out)[2]
    assert state.parse_move(reply["token"]) in state.legal_moves()
    if planned:
        assert reply["nodes"] == 0
        assert reply["token"] == answer["pv"][1]
        assert reply["pv"] == answer["pv"][1:]
    else:
        assert reply["nodes"] > 0


PID_WORKER = """
import os, sys, msgpack
def send(frame):
    sys.stdout.buffer.write(msgpack.packb(frame, use_bin_type=True))
    sys.stdout.buffer.flush()
def answer(msgid):
    send([2, "info", [{"search": msgid, "string": str(os.getpid())}]])
    send([1, msgid, None, {"token": "c4", "depth": 1, "nodes": 1}])
send([2, "ready", []])
held = set()
unpacker = msgpack.Unpacker(raw=False)
while chunk := os.read(0, 65536):
    unpacker.feed(chunk)
    for frame in unpacker:
        if frame[0] == 0 and frame[2] == "search":
            if frame[3][0].get("depth") is None:
                held.add(frame[1])  # no depth: it runs until stopped
            else:
                answer(frame[1])
        elif frame[0] == 2 and frame[1] == "stop" and frame[2][0]["search"] in held:
            held.discard(frame[2][0]["search"])
            answer(frame[2][0]["search"])
"""
"""A worker that names itself: each answer comes with an ``info`` whose string is its PID.
A search with a depth is answered at once; one without runs until it is stopped."""


async def _until(condition: Callable[[], bool]) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(0.005)


class _PidPool:
    """A pool of ``PID_WORKER``s and searches that report the PID that ran them."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool

    async def search(self, session: str, stop: trio.Event | None = None) -> str:
        """The PID of the worker that ran a search for ``session``: held until ``stop`` is
        set if given, else answered at once."""
        outcome = await self.pool.search(
            job(session=session, depth=None if stop is not None else 1), on_info=lambda i: None,
            stop=trio.Event() if stop is None else stop, hard_deadline=None,
        )  # fmt: skip
        assert outcome.result is not None
        assert outcome.last_info is not None
        assert outcome.last_info.string is not None
        return outcome.last_info.string

    async def both_at_once(self, first: str, second: str) -> dict[str, str]:
        """Searches for two sessions that overlap, so that each gets a worker of its own;
        ``second`` is stopped (and its worker freed) before ``first``."""
        pids: dict[str, str] = {}
        stops = {first: trio.Event(), second: trio.Event()}

        async def one(session: str) -> None:
            pids[session] = await self.search(session, stops[session])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, first)
            await _until(lambda: self.pool.idle == 1)
            nursery.start_soon(one, second)
            await _until(lambda: self.pool.idle == 0)
            stops[second].set()
            await _until(lambda: second in pids)
            stops[first].set()
        assert pids[first] != pids[second]
        return pids


@asynccontextmanager
async def pid_pool(size: int) -> AsyncIterator[_PidPool]:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, size, command=(sys.executable, "-c", PID_WORKER))
        await pool.start()
        try:
            yield _PidPool(pool)
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


@trio_test
async def test_each_session_goes_back_to_its_own_worker() -> None:
    async with pid_pool(2) as pids:
        own = await pids.both_at_once("a", "b")  # "a" freed its worker last
        for _ in range(3):
            # both workers idle each time: without the affinity both would take the one
            # freed last
            assert await pids.search("b") == own["b"]
            assert await pids.search("a") == own["a"]
        assert await pids.search("b") == own["b"]
        assert await pids.search("b") == own["b"]
        assert await pids.search("a") == own["a"]


@trio_test
async def test_a_new_session_takes_the_worker_freed_last() -> None:
    async with pid_pool(2) as pids:
        own = await pids.both_at_once("a", "b")  # "a" freed its worker last
        assert await pids.search("new") == own["a"]
        assert await pids.search("b") == own["b"]  # and "b" keeps its own
        assert await pids.search("newer") == own["b"]


@trio_test
async def test_a_session_whose_worker_is_busy_takes_another_at_once() -> None:
    async with pid_pool(2) as pids:
        own = await pids.both_at_once("a", "b")
        hold = trio.Event()
        got: dict[str, str] = {}

        async def held() -> None:
            got["held"] = await pids.search("b", hold)  # on "b"'s worker

        async with trio.open_nursery() as nursery:
            nursery.start_soon(held)
            await _until(lambda: pids.pool.idle == 1)
            # "b"'s worker is busy: "b" does not wait for it
            got["b"] = await pids.search("b")
            hold.set()
        assert got["held"] == own["b"]
        assert got["b"] == own["a"]
        # "b" now last searched on the other worker, and goes back there
        assert await pids.search("b") == own["a"]


@trio_test
async def test_the_pool_remembers_a_bounded_number_of_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from enginesrv.search import share

    monkeypatch.setattr(share, "REMEMBERED_SESSIONS", 2)
    async with pid_pool(1) as pids:
        for session in ("a", "b", "c"):
            await pids.search(session)
        assert list(pids.pool._share.last_worker) == ["b", "c"]  # "a", the oldest, is forgotten
        await pids.search("b")
        assert list(pids.pool._share.last_worker) == ["c", "b"]


@trio_test
async def test_a_spare_stands_in_at_once_for_a_killed_worker_and_adds_no_search() -> None:
    silent = (sys.executable, "-c", "import sys; sys.stdin.buffer.read()")
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, grace=0.1, command=silent, ready_timeout=0, spare=1)
        await pool.start()
        assert pool.idle == 2
        outcome = await pool.search(
            job(), on_info=lambda i: None, stop=trio.Event(),
            hard_deadline=trio.current_time() + 0.2,
        )  # fmt: skip
        assert outcome.killed
        # the killed worker is still being replaced, but the spare is there for the next move
        assert pool.idle == 1
        waited: list[bool] = []
        outcome = await pool.search(
            job(), on_info=lambda i: None, stop=trio.Event(),
            hard_deadline=trio.current_time() + 0.2, on_wait=lambda: waited.append(True),
        )  # fmt: skip
        assert waited == []  # granted the spare at once, not after a new process started
        assert outcome.killed  # (silent as well, so it too is killed)
        await settled(pool)
        assert pool.restarts == 2
        assert pool.idle == 2
        await pool.aclose()


@trio_test
async def test_a_spare_does_not_let_more_searches_run_at_once() -> None:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, spare=1)
        await pool.start()
        waited: list[bool] = []
        results = []

        async def one() -> None:
            outcome = await pool.search(
                job(bot="random"), on_info=lambda i: None, stop=trio.Event(),
                hard_deadline=None, on_wait=lambda: waited.append(True),
            )  # fmt: skip
            results.append(outcome.result)

        async with trio.open_nursery() as searches:
            for _ in range(2):
                searches.start_soon(one)
        assert waited == [True]
        assert len(results) == 2
        assert all(r is not None and r.token for r in results)
        await pool.aclose()


async def _spawned(pool: WorkerPool) -> tuple[int, list[int]]:
    """The pool's spawner and the workers it forked, once both workers are up."""
    assert pool._processes.spawner is not None
    while True:
        process = pool._processes.spawner._process
        if process is not None:
            workers = list(reaper.descendants(process.pid))
            if len(workers) == 2:
                return process.pid, workers
        await trio.sleep(0.01)  # bounded by the caller's fail_after


@trio_test
async def test_a_server_pool_starts_a_killed_spawner_again() -> None:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, spare=1)
        await pool.start()
        with trio.fail_after(30):
            spawner, workers = await _spawned(pool)
            for pid in (spawner, *workers):
                os.kill(pid, signal.SIGKILL)
            outcome = await pool.search(
                job(), on_info=lambda i: None, stop=trio.Event(), hard_deadline=None
            )
            errors = []
            while outcome.result is None:  # each dead worker fails one search, then a new one
                errors.append(outcome.error)
                outcome = await pool.search(
                    job(), on_info=lambda i: None, stop=trio.Event(), hard_deadline=None
                )
        assert set(errors) <= {"the search worker died"}
        assert len(errors) <= 2
        assert pool._processes.spawner is not None
        assert pool._processes.spawner._process is not None
        assert pool._processes.spawner._process.pid != spawner  # a new spawner forked new workers
        await pool.aclose()


@trio_test
async def test_an_event_pool_whose_spawner_was_killed_fails_its_searches_at_once() -> None:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, spare=1, restart_spawner=False)
        await pool.start()
        with trio.fail_after(30):
            spawner, workers = await _spawned(pool)
            for pid in (spawner, *workers):
                os.kill(pid, signal.SIGKILL)
            errors = set()
            for _ in range(3):
                outcome = await pool.search(
                    job(), on_info=lambda i: None, stop=trio.Event(), hard_deadline=None
                )
                assert outcome.result is None
                errors.add(outcome.error)
        assert "no search worker left: the spawner of the search workers is gone" in errors
        await pool.aclose()

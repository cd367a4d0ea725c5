"""An account's quotas (``enginesrv token add NAME --searches N --hour S``): what it uses over
all its connections, attacked as a client that opens more of them, or searches for ever,
would (enginesrv.serve.quotas)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
from enginesrv.serve.auth import Keeper
from enginesrv.serve.connection import Limits
from enginesrv.serve.quotas import HOUR, Accounts, Metered, Usage
from enginesrv.serve.server import Server
from enginesrv.serve.settings import SessionConfig
from enginesrv.tokens import Account, Quotas, TokenFile
from tests.enginesrv.peer import TextPeer, ThreadRunner, serving
from tests.trio_run import trio_test


class PeerRunner(ThreadRunner):
    """Records whom each search counts against, and when each ran."""

    def __init__(self) -> None:
        super().__init__()
        self.peers: list[str | None] = []
        self.spans: list[tuple[float, float]] = []

    async def search(self, job: SearchJob, **kwargs: Any) -> SearchOutcome:
        self.peers.append(kwargs.get("peer"))
        started = trio.current_time()
        try:
            return await super().search(job, **kwargs)
        finally:
            self.spans.append((started, trio.current_time()))


async def signed_in(port: int, token: str, local: str = "127.0.0.1") -> TextPeer:
    peer = await TextPeer.connect(port, local)
    await peer.send(f"auth {token}", "uginewgame yoxii", "setoption name Bot value alphabeta")
    await peer.send("isready")
    assert await peer.line() == "readyok"
    return peer


def quota_server(folder: Path, quotas: Quotas, runner: PeerRunner) -> tuple[Server, str, Keeper]:
    file = TokenFile(folder / "tokens")
    token = "alice:" + file.add("alice", quotas)
    limits = Limits()
    config = SessionConfig(default_game="yoxii", limits=limits.announced(), auth="token")
    keeper = Keeper(file)
    return Server(config, runner, limits, keeper=keeper), token, keeper


def test_an_hours_use_counts_the_holding_searches_and_forgets_the_old_ones() -> None:
    now = [0.0]
    usage = Usage(Quotas(hour=100), clock=lambda: now[0])
    usage.hold(1, True)
    now[0] = 30
    assert usage.used() == 30
    usage.hold(1, False)
    usage.hold(2, True)
    now[0] = 50
    assert usage.used() == 50
    assert usage.left() == 50
    usage.hold(2, False)
    now[0] = HOUR + 29
    assert usage.used() == 50  # a hold counts until an hour after it ended
    now[0] = HOUR + 30
    assert usage.used() == 20
    assert usage.more_in() == 20
    now[0] = HOUR + 50
    assert usage.used() == 0
    assert len(usage.done) == 0
    assert Usage(Quotas()).left() == math.inf


@trio_test
async def test_a_search_stops_when_the_accounts_time_is_used_and_the_next_is_refused(
    tmp_path: Path,
) -> None:
    runner = PeerRunner()
    server, token, keeper = quota_server(tmp_path, Quotas(hour=1), runner)
    async with serving(server) as port:
        peer = await signed_in(port, token)
        started = trio.current_time()
        await peer.send("go movetime 20000")
        await peer.until("bestmove ")
        assert 0.9 < trio.current_time() - started < 3
        other = await signed_in(port, token, "127.0.0.9")  # another address: the same account
        await other.send("go movetime 100")
        line = await other.line()
        assert line.startswith(
            "error 300 busy go: alice has used its 1 s of search in the last hour; more in "
        )
        assert await other.line() == "bestmove none"
        await other.send("analyse id a startpos")
        assert (await other.expect("error ")).startswith("error 300 busy analyse: alice has used")
    assert runner.peers == ["@alice"]
    keeper.close()


@trio_test
async def test_an_account_runs_no_more_searches_at_once_than_its_quota(tmp_path: Path) -> None:
    """Two connections from two addresses: the second search waits until the first ends."""
    runner = PeerRunner()
    server, token, keeper = quota_server(tmp_path, Quotas(searches=1), runner)
    async with serving(server) as port:
        first = await signed_in(port, token, "127.0.0.2")
        second = await signed_in(port, token, "127.0.0.3")
        await first.send("go infinite")
        await first.expect("info ")
        await second.send("go movetime 50")
        waiting = await second.line()
        assert waiting.startswith("info string"), waiting
        with trio.move_on_after(0.5):
            await second.until("bestmove")
            raise AssertionError("the second search ran beside the first")
        await first.send("stop")
        await first.until("bestmove ")
        await second.until("bestmove ")
    assert runner.peers == ["@alice", "@alice"]
    (_, first_end), (second_start, _) = runner.spans[0], runner.spans[1]
    assert second_start >= first_end
    keeper.close()


def test_quotas_follow_the_token_file(tmp_path: Path) -> None:
    file = TokenFile(tmp_path / "tokens")
    file.add("alice", Quotas(searches=2, hour=600))
    file.add("bob")
    lines = (tmp_path / "tokens").read_text().splitlines()
    assert lines[0].endswith(" searches=2 hour=600")
    assert len(lines[1].split()) == 3
    assert [a.quotas for a in file.accounts()] == [Quotas(2, 600), Quotas()]


class UntilStopped:
    """A search that runs until it is stopped (``go infinite`` on a worker of its own)."""

    async def search(self, job: Any, *, stop: trio.Event, **_: Any) -> SearchOutcome:
        await stop.wait()
        return SearchOutcome(None, "stopped")


async def metered_search(metered: Metered) -> SearchOutcome:
    return await metered.search(
        None,  # type: ignore[arg-type]
        on_info=lambda _: None,
        stop=trio.Event(),
        hard_deadline=None,
    )


@pytest.mark.parametrize("at_once", [2, 4, 8])
def test_searches_at_once_use_no_more_than_the_hour(at_once: int) -> None:
    """Each search looks at the time left again when another takes a worker: searches
    started one after another stop together when the hour is used (a look planned for a
    search alone once gave 2 searches 150 s of a 100 s hour, 8 of them 272 s)."""

    async def main() -> None:
        usage = Usage(Quotas(hour=100))
        metered = Metered(UntilStopped(), "alice", usage)
        async with trio.open_nursery() as nursery:
            for _ in range(at_once):
                nursery.start_soon(metered_search, metered)
                await trio.sleep(1)
        assert usage.used() <= 100.1, usage.used()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


class Instant:
    async def search(self, job: Any, **_: Any) -> SearchOutcome:
        await trio.sleep(0.001)
        return SearchOutcome(None, "done")


def test_an_accounts_past_searches_are_not_kept_for_ever() -> None:
    """Without an hourly quota nothing is kept; with one, what is older than an hour is
    dropped as searches end (2,000 searches, then one two hours later)."""

    async def main() -> None:
        for quotas in (Quotas(), Quotas(hour=3600)):
            usage = Usage(quotas)
            metered = Metered(Instant(), "alice", usage)
            for _ in range(2000):
                await metered_search(metered)
            assert len(usage.done) == (0 if quotas.hour is None else 2000)
            await trio.sleep(2 * HOUR)
            await metered_search(metered)
            assert len(usage.done) <= 1, (quotas, len(usage.done))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@trio_test
async def test_a_wait_for_a_worker_is_not_counted_against_the_hour(tmp_path: Path) -> None:
    """On a real pool of one worker, bob's infinite search holds it while alice's waits:
    her 2 s hour is not spent waiting, and her search then runs (to its depth, which has no
    deadline that the wait could use up)."""
    file = TokenFile(tmp_path / "tokens")
    alice = "alice:" + file.add("alice", Quotas(hour=2))
    bob = "bob:" + file.add("bob")
    limits = Limits()
    config = SessionConfig(default_game="yoxii", limits=limits.announced(), auth="token")
    keeper = Keeper(file)
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1, slice_seconds=0)
        await pool.start()
        server = Server(config, pool, limits, keeper=keeper)
        try:
            async with serving(server) as port:
                hog = await signed_in(port, bob, "127.0.0.2")
                await hog.send("go infinite")
                await hog.expect("info ")
                victim = await signed_in(port, alice, "127.0.0.3")
                await victim.send("go depth 4")
                await trio.sleep(2.5)
                await hog.send("stop")
                await hog.until("bestmove ")
                lines = await victim.until("bestmove ")
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()
            keeper.close()
    assert any(line.startswith("info depth") for line in lines), lines
    used = keeper.accounts.usage["alice"].used()
    assert 0 < used < 1.5, used


def set_quotas(file: TokenFile, quotas: Quotas) -> None:
    """What an operator does by hand: the line's quotas changed, its token kept."""
    (account,) = file.accounts()
    file._write([Account(account.name, account.digest, account.created, quotas)])


@trio_test
async def test_a_quota_change_does_not_give_an_account_a_second_limiter(tmp_path: Path) -> None:
    runner = PeerRunner()
    server, token, keeper = quota_server(tmp_path, Quotas(searches=1), runner)
    async with serving(server) as port:
        first = await signed_in(port, token, "127.0.0.2")
        await first.send("go infinite")
        await first.expect("info ")
        # the operator adds an hourly quota (or changes any quota); searches=1 stays
        set_quotas(keeper.tokens, Quotas(searches=1, hour=3600))
        second = await signed_in(port, token, "127.0.0.3")
        await second.send("go movetime 50")
        ran_beside = False
        with trio.move_on_after(1):
            await second.until("bestmove")
            ran_beside = True
        await first.send("stop")
        await first.until("bestmove ")
        assert not ran_beside, "searches=1, yet two searches of the account ran at once"
    keeper.close()


def test_the_hour_is_one_total_across_a_quota_change() -> None:
    now = [0.0]
    accounts = Accounts()
    old = accounts.of("alice", Quotas(hour=100))
    old.clock = lambda: now[0]
    old.hold(1, True)
    now[0] = 60
    new = accounts.of("alice", Quotas(hour=90))
    new.clock = lambda: now[0]
    old.hold(1, False)  # the old connection's search ends: 60 s used
    assert old.used() == 60
    assert new.used() == 60, f"the new quota sees {new.used()} s of the 60 used"


@trio_test
async def test_an_hourly_quota_added_applies_to_the_accounts_open_connections(
    tmp_path: Path,
) -> None:
    """The operator reins an account in by giving it an hour of 1 s: its connection opened
    before goes on searching as if it had none (its grant's quotas are those of its sign-in,
    and its ``Usage`` the old entry, which keeps no hour)."""
    runner = PeerRunner()
    server, token, keeper = quota_server(tmp_path, Quotas(), runner)
    async with serving(server) as port:
        old = await signed_in(port, token, "127.0.0.2")
        set_quotas(keeper.tokens, Quotas(hour=1))
        await trio.sleep(0.1)
        began = trio.current_time()
        await old.send("go movetime 4000")
        await old.until("bestmove")
        took = trio.current_time() - began
        assert took < 2.5, f"a search of {took:.1f} s under an hour of 1 s"
    keeper.close()

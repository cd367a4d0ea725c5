"""How a player's connection is read (``enginesrv.ladder.reads``): within its player's share
of the event loop, which all of the player's connections draw on together. The time the
ladder spends on what a connection sent is the time from a read's return to the next read:
here the clock is a ``MockClock``, moved on by hand between reads."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import trio
import trio.testing

from enginesrv.ladder.accounts import players
from enginesrv.ladder.reads import LOOP_BURST, LOOP_SHARE, READ_CHUNK, LinkStream, LoopBudget
from tests.ladder.support import FakeBot, ladder_run, mock_trio_test, serving, trio_test
from tests.ladder.test_ladder_challenge import until


class Endless(anyio.abc.ByteStream):
    """A stream that has bytes to read every ``wait`` seconds (0: always, a bot that sends
    without end)."""

    def __init__(self, wait: float = 0.0) -> None:
        self.wait = wait
        self.asked: list[int] = []

    async def receive(self, max_bytes: int = 65536) -> bytes:
        self.asked.append(max_bytes)
        await trio.sleep(self.wait)
        return b"x\n" * (max_bytes // 2)

    async def send(self, item: bytes) -> None:
        del item

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def clock() -> trio.testing.MockClock:
    found = trio.lowlevel.current_clock()
    assert isinstance(found, trio.testing.MockClock)
    return found


@mock_trio_test
async def test_a_connection_within_its_share_is_read_for_ever() -> None:
    """An hour of reads, each costing the loop 4% of the time between them: never closed,
    and no read asks for more than ``READ_CHUNK`` bytes."""
    inner = Endless(wait=0.96)  # the link waits for more ...
    link = LinkStream(inner, b"", LoopBudget())
    for _ in range(3600):
        await link.receive()
        clock().jump(0.04)  # ... once the bytes it read took 40 ms of the loop
    assert max(inner.asked) == READ_CHUNK


@mock_trio_test
async def test_a_connection_past_its_share_is_closed_once_its_burst_is_spent() -> None:
    """Reads each costing 10 ms of the loop, one after the other: the burst
    (``LOOP_BURST``) and what the clock adds meanwhile (``LOOP_SHARE``) are spent after
    some 26 reads, and the connection is closed."""
    link = LinkStream(Endless(), b"", LoopBudget())
    reads = 0
    closed = False
    while not closed and reads < 1000:
        try:
            await link.receive()
        except anyio.BrokenResourceError:
            closed = True
        else:
            reads += 1
            clock().jump(0.010)
    assert closed
    expected = LOOP_BURST / (0.010 * (1 - LOOP_SHARE))
    assert reads == int(expected) + 1


@mock_trio_test
async def test_the_connections_of_one_player_share_one_share() -> None:
    """Adversary 2. Promise: a player's connections together take no more of the loop than
    their number of shares (docs/ladder.md, "Limits").

    Mallory holds two connections: a share of 0.5 s at once between them. The first takes
    0.4 s of the loop (more than one connection's 0.25 s: it may spend what the other did
    not), and the second then 0.2 s: 0.6 s together, past the two shares, so the second is
    closed. Bob's one connection, with a share of his own, is read on."""
    mallory = LoopBudget(lambda: 2)
    first = LinkStream(Endless(), b"", mallory)
    second = LinkStream(Endless(), b"", mallory)
    bob = LinkStream(Endless(), b"", LoopBudget())
    await trio.sleep(5)  # her bucket fills to the two shares meanwhile
    await first.receive()
    clock().jump(0.4)
    await first.receive()  # its bytes took 0.4 s of the loop: within the two shares
    await second.receive()
    await bob.receive()
    clock().jump(0.2)
    await bob.receive()  # 0.2 s of his own share
    with pytest.raises(anyio.BrokenResourceError):
        await second.receive()  # 0.2 s more of Mallory's: 0.6 s of her 0.5 s and 0.06 s


@trio_test
async def test_a_players_share_is_kept_across_its_connections(tmp_path: Path) -> None:
    """Adversary 2. Promise: a player cannot have its share of the loop back by logging in
    again: each of its connections draws on the one ``LoopBudget`` the door keeps for its
    name, which outlives them; another player has its own.

    Alice's first connection spends all of her share (and more); she logs in again at
    once. Her new connection is closed at its greeting, her share still spent, while Bob
    logs in and joins."""
    alice = players(tmp_path).add("alice")
    bob = players(tmp_path).add("bob")
    async with serving(ladder_run(tmp_path)) as ladder, trio.open_nursery() as nursery:
        door = ladder.door
        assert door is not None
        first = trio.CancelScope()

        async def run(scope: trio.CancelScope, bot: FakeBot) -> None:
            with scope:
                await bot.run(ladder.address[1])

        nursery.start_soon(run, first, FakeBot("alice", alice))
        await until(lambda: ladder.lobby.counts().get("alice") == 1)
        kept = door.budgets["alice"]
        kept.left = -1.0  # all of it spent, and more: 20 s of the clock to earn back
        first.cancel()
        await until(lambda: "alice" not in ladder.lobby.counts())
        again = FakeBot("alice", alice)
        with trio.fail_after(10):
            await again.run(ladder.address[1])  # it ends: the ladder closed it
        assert again.first_line == "ugi"  # logged in, then closed at its greeting
        nursery.start_soon(run, trio.CancelScope(), FakeBot("bob", bob))
        await until(lambda: ladder.lobby.counts() == {"bob": 1})
        assert door.budgets["alice"] is kept
        assert door.budgets["bob"] is not kept
        nursery.cancel_scope.cancel()

"""The players connected to a ladder (``enginesrv.ladder.lobby.Lobby``), on a ``MockClock``:
links join, idle and leave; the idle ones are listed the longest waiting first; an account
past its links is refused; a game that lost its player reclaims the next link that comes in
under its name within its wait, and a link handed over just as that wait ends is idle again,
not lost."""

from __future__ import annotations

import trio
import trio.lowlevel

from enginesrv.ladder.lobby import Link, Lobby
from tests.ladder.support import mock_trio_test

GAMES = frozenset({"yoxii"})


def link(name: str) -> Link:
    return Link(name, None, "127.0.0.1", GAMES)


@mock_trio_test
async def test_links_join_idle_and_leave() -> None:
    """Idle links are listed by when they became idle (then by when they were made); a busy
    one is not listed; one that idles again goes last; joining wakes the pairer; one that
    leaves is gone, and a player with no link left is no longer listed."""
    lobby = Lobby(8)
    alice1, bob, alice2 = link("alice"), link("bob"), link("alice")
    woken = lobby.changed
    lobby.join(alice1)
    assert woken.is_set()
    assert not lobby.changed.is_set()  # a new event for the next change
    await trio.sleep(1)
    lobby.join(bob)
    lobby.join(alice2)
    assert (alice1.since, bob.since, alice2.since) == (0.0, 1.0, 1.0)
    assert lobby.idle_links() == [alice1, bob, alice2]
    assert lobby.counts() == {"alice": 2, "bob": 1}
    alice1.busy = True
    assert lobby.idle_links() == [bob, alice2]
    await trio.sleep(5)
    lobby.idle(alice1)
    assert (alice1.busy, alice1.since) == (False, 6.0)
    assert lobby.idle_links() == [bob, alice2, alice1]
    lobby.leave(bob)
    lobby.leave(bob)  # twice: nothing more happens
    assert lobby.idle_links() == [alice2, alice1]
    assert lobby.counts() == {"alice": 2}
    lobby.leave(alice1)
    lobby.leave(alice2)
    assert (lobby.idle_links(), lobby.counts(), lobby.links) == ([], {}, {})


@mock_trio_test
async def test_a_player_past_its_links_is_refused() -> None:
    """With 2 links a player, a third of alice's is refused naming the limit; bob is not,
    and once one of alice's links leaves, she may connect again."""
    lobby = Lobby(2)
    first, second = link("alice"), link("alice")
    assert lobby.refusal("alice") is None
    lobby.join(first)
    assert lobby.refusal("alice") is None
    lobby.join(second)
    assert lobby.refusal("alice") == "alice holds its limit of 2 connections"
    assert lobby.refusal("bob") is None
    lobby.leave(first)
    assert lobby.refusal("alice") is None


@mock_trio_test
async def test_reclaim_takes_the_next_link_of_the_name_within_its_wait() -> None:
    """A link of another name joins idle; the next of the name is handed to the reclaiming
    game at once (busy, not idle); the one after that joins idle again."""
    lobby = Lobby(8)
    alice, bob, later = link("alice"), link("bob"), link("alice")
    got: list[tuple[Link | None, float]] = []

    async def reclaim() -> None:
        found = await lobby.reclaim("alice", 10.0)
        got.append((found, trio.current_time()))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reclaim)
        await trio.sleep(3)
        lobby.join(bob)
        assert lobby.idle_links() == [bob]
        lobby.join(alice)
        assert alice.busy
        assert lobby.idle_links() == [bob]
    assert got == [(alice, 3.0)]
    assert lobby.counts() == {"alice": 1, "bob": 1}
    lobby.join(later)
    assert not later.busy
    assert lobby.idle_links() == [bob, later]


@mock_trio_test
async def test_two_games_that_want_one_player_back_are_served_in_turn() -> None:
    """The game that began waiting first gets the first link, the other the second."""
    lobby = Lobby(8)
    first, second = link("alice"), link("alice")
    got: dict[str, Link | None] = {}

    async def reclaim(label: str, after: float) -> None:
        await trio.sleep(after)
        got[label] = await lobby.reclaim("alice", 10.0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reclaim, "early", 0.0)
        nursery.start_soon(reclaim, "late", 1.0)
        await trio.sleep(2)
        lobby.join(first)
        lobby.join(second)
    assert got == {"early": first, "late": second}
    assert lobby.idle_links() == []


@mock_trio_test
async def test_reclaim_gives_none_once_its_wait_is_over() -> None:
    """No link within the wait: None, exactly when it ends; a link that comes in afterwards
    joins idle; a wait already past (negative) ends at once."""
    lobby = Lobby(8)
    began = trio.current_time()
    assert await lobby.reclaim("alice", 5.0) is None
    assert trio.current_time() - began == 5.0
    late = link("alice")
    lobby.join(late)
    assert not late.busy
    assert lobby.idle_links() == [late]
    began = trio.current_time()
    assert await lobby.reclaim("bob", -3.0) is None
    assert trio.current_time() == began


class JoinAsTheWaitEnds(trio.abc.Instrument):
    """Joins ``link`` to ``lobby`` just before ``task`` runs again once the clock has
    reached ``at``: after its wait was cut short, before it could see so."""

    def __init__(self, lobby: Lobby, link: Link, at: float) -> None:
        self.lobby = lobby
        self.link = link
        self.at = at
        self.task: trio.lowlevel.Task | None = None
        self.joined_at: float | None = None

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task and self.joined_at is None and trio.current_time() >= self.at:
            self.joined_at = trio.current_time()
            self.lobby.join(self.link)


@mock_trio_test
async def test_a_link_handed_over_as_the_wait_ends_is_idle_again() -> None:
    """A link that comes in at the very moment a game's wait for its player ends (handed to
    the game, which no longer takes it) is not lost: it is idle, and listed."""
    lobby = Lobby(8)
    alice = link("alice")
    instrument = JoinAsTheWaitEnds(lobby, alice, 5.0)
    instrument.task = trio.lowlevel.current_task()
    trio.lowlevel.add_instrument(instrument)
    try:
        found = await lobby.reclaim("alice", 5.0)
    finally:
        trio.lowlevel.remove_instrument(instrument)
    assert instrument.joined_at == 5.0
    assert found is None
    assert not alice.busy
    assert lobby.idle_links() == [alice]
    assert alice.since == 5.0
    other = link("alice")
    lobby.join(other)  # nobody waits any more: idle too
    assert lobby.idle_links() == [alice, other]

"""How often one address may fail to log in (``enginesrv.tries.Tries``), on a clock the
test moves: five failures at once, then one more every twelve seconds, never more than five
saved up; the peers remembered are capped, the least recently failed forgotten first."""

from __future__ import annotations

import pytest

from enginesrv.tries import BURST, PEERS, REFILL, Tries


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_defaults() -> None:
    """Five failures at once, one more every 12 s, 4096 peers remembered."""
    assert (BURST, REFILL, PEERS) == (5, 12.0, 4096)
    tries = Tries(clock=FakeClock())
    assert (tries.burst, tries.refill, tries.peers) == (5, 12.0, 4096)


def test_five_failures_are_allowed_and_the_sixth_try_waits_12_s() -> None:
    """After four failures a peer may try at once; after the fifth it waits 12 s, however
    often it fails meanwhile; other peers are not affected."""
    clock = FakeClock()
    tries = Tries(clock=clock)
    for _ in range(4):
        assert tries.wait("10.0.0.1") == 0.0
        tries.failed("10.0.0.1")
    assert tries.wait("10.0.0.1") == 0.0
    tries.failed("10.0.0.1")
    assert tries.wait("10.0.0.1") == 12.0
    for _ in range(10):
        tries.failed("10.0.0.1")
    assert tries.wait("10.0.0.1") == 12.0
    assert tries.wait("10.0.0.2") == 0.0


def test_a_try_comes_back_every_12_s_up_to_five() -> None:
    """The wait runs down with the clock; after 12 s one failure is allowed, after a minute
    five, and never more than five however long the peer stays away."""
    clock = FakeClock()
    tries = Tries(clock=clock)
    for _ in range(BURST):
        tries.failed("p")
    clock.now += 3.0
    assert tries.wait("p") == pytest.approx(9.0)
    clock.now += 9.0
    assert tries.wait("p") == 0.0
    tries.failed("p")
    assert tries.wait("p") == 12.0
    clock.now += 3600.0
    for _ in range(BURST):
        assert tries.wait("p") == 0.0
        tries.failed("p")
    assert tries.wait("p") == 12.0


def test_a_partly_refilled_bucket_counts_its_fraction() -> None:
    """Half a refill after two failures of five leaves three and a half: three more failures
    allowed, then a wait of the half refill still missing (6 s)."""
    clock = FakeClock()
    tries = Tries(clock=clock)
    tries.failed("p")
    tries.failed("p")
    clock.now += 6.0
    for _ in range(3):
        assert tries.wait("p") == 0.0
        tries.failed("p")
    assert tries.wait("p") == pytest.approx(6.0)


def test_the_least_recently_failed_peer_is_forgotten_past_the_cap() -> None:
    """With room for three peers, a fourth pushes out the one whose last failure is oldest
    (a failure again moves a peer to the newest), which may then try again at once."""
    clock = FakeClock()
    tries = Tries(burst=1, refill=100.0, peers=3, clock=clock)
    for peer in ("a", "b", "c"):
        tries.failed(peer)
        clock.now += 1.0
    tries.failed("a")  # now b is the least recently failed
    clock.now += 1.0
    tries.failed("d")
    assert {peer: tries.wait(peer) > 0 for peer in "abcd"} == {
        "a": True,
        "b": False,
        "c": True,
        "d": True,
    }
    assert tries.wait("c") == pytest.approx(100.0 - 2.0)  # c failed 2 s ago
    tries.failed("e")  # c goes now
    assert [peer for peer in "abcde" if tries.wait(peer) > 0] == ["a", "d", "e"]

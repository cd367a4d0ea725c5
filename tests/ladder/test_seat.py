"""A connected player whose connection drops during a game (``enginesrv.ladder.seat``), over
real TCP to a ladder served in this process: one that logs in again within the grace is given
its game back and finishes it on the new connection, the game stored as if nothing had
happened; one that does not come back loses by ``disconnect`` once the grace is over."""

from __future__ import annotations

from pathlib import Path

import trio

from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.records import parse_record
from enginesrv.ladder.accounts import players
from enginesrv.ladder.state import Ladder
from tests.ladder.support import FakeBot, first_move_game, ladder_run, on_games, serving, trio_test

DROP_AT = 3
"""Alice's connection drops instead of answering her third ``go`` (ply 5: yoxii's turns are
two plies)."""


def wants_back(ladder: Ladder, name: str) -> bool:
    """Whether a game of the ladder waits for ``name`` to come back."""
    return name in ladder.lobby._wanted


async def wait_for(ladder: Ladder, name: str) -> None:
    while not wants_back(ladder, name):
        await trio.sleep(0.005)


def record_moves(folder: Path, row_record: str | None) -> list[str]:
    assert row_record is not None
    text = (folder / "yoxii" / "season-1" / row_record).read_text(encoding="utf-8")
    return [move.token for move in parse_record(text).moves]


@trio_test
async def test_a_player_that_comes_back_within_the_grace_finishes_its_game(
    tmp_path: Path,
) -> None:
    """Alice (p1) drops at her third decision; a new connection of hers, logged in while the
    game waits for her, is told the game and asked again from the whole position: the game
    two first-move players play is stored whole (every move once, the end the rules give),
    with no forfeit, and her new connection is the one that played on."""
    tokens = players(tmp_path)
    alice_token, bob_token = tokens.add("alice"), tokens.add("bob")
    moves, end = first_move_game()
    dropping = FakeBot("alice", alice_token, drop_at=DROP_AT)
    back, bob = FakeBot("alice", alice_token), FakeBot("bob", bob_token)
    async with serving(ladder_run(tmp_path, grace=10.0)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bob.run, ladder.address[1])
            nursery.start_soon(dropping.run, ladder.address[1])
            await wait_for(ladder, "alice")
            nursery.start_soon(back.run, ladder.address[1])
            await done.wait()
            nursery.cancel_scope.cancel()
    row, result = ended[0].row, ended[0].result
    assert (row.p1, row.p2) == ("alice", "bob")
    assert result.outcome.termination is Termination.RULES
    assert result.failed == ()
    assert record_moves(tmp_path, row.record) == moves
    assert row.plies == len(moves)
    assert f"{row.winner} wins ({row.reason})" in end
    assert dropping.gos == DROP_AT
    assert back.commands[:3] == ["ugi", "isready", "uginewgame"]
    position = next(line for line in back.commands if line.startswith("position"))
    assert position.endswith(" moves " + " ".join(moves[:4]))  # where it was


@trio_test
async def test_a_player_that_does_not_come_back_loses_by_disconnect(tmp_path: Path) -> None:
    """Alice (p1) drops at her third decision and does not come back: once the grace (0.3 s)
    is over she loses by ``disconnect``, the game stored with the four plies played."""
    tokens = players(tmp_path)
    alice_token, bob_token = tokens.add("alice"), tokens.add("bob")
    moves, _ = first_move_game()
    dropping, bob = FakeBot("alice", alice_token, drop_at=DROP_AT), FakeBot("bob", bob_token)
    async with serving(ladder_run(tmp_path, grace=0.3)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bob.run, ladder.address[1])
            nursery.start_soon(dropping.run, ladder.address[1])
            await wait_for(ladder, "alice")
            waited_from = trio.current_time()
            await done.wait()
            waited = trio.current_time() - waited_from
            assert not wants_back(ladder, "alice")
            nursery.cancel_scope.cancel()
        assert ladder.sections["yoxii"].rows == [ended[0].row]
    row, result = ended[0].row, ended[0].result
    assert (row.p1, row.p2, row.winner, row.reason) == ("alice", "bob", "p2", "disconnect")
    assert (row.first, row.first_points) == ("alice", 0.0)
    assert result.outcome == result.outcome.loss(0, Termination.DISCONNECT)
    assert result.failed == (0,)
    assert result.detail.endswith("; it did not come back within the grace of 0.3 s")
    assert record_moves(tmp_path, row.record) == moves[:4]
    assert row.plies == 4
    assert waited >= 0.25


@trio_test
async def test_the_wait_for_a_player_never_passes_its_clock(tmp_path: Path) -> None:
    """Alice drops while she is to move, with a grace (10 s) longer than her clock (some 2 s
    at 2+0.05): she loses by ``disconnect`` once her clock is out, not once the grace is."""
    tokens = players(tmp_path)
    alice_token, bob_token = tokens.add("alice"), tokens.add("bob")
    dropping, bob = FakeBot("alice", alice_token, drop_at=DROP_AT), FakeBot("bob", bob_token)
    async with serving(ladder_run(tmp_path, grace=10.0)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bob.run, ladder.address[1])
            nursery.start_soon(dropping.run, ladder.address[1])
            await wait_for(ladder, "alice")
            waited_from = trio.current_time()
            await done.wait()
            waited = trio.current_time() - waited_from
            nursery.cancel_scope.cancel()
    row = ended[0].row
    assert (row.p1, row.winner, row.reason, row.plies) == ("alice", "p2", "disconnect", 4)
    assert 1.0 <= waited <= 5.0  # her clock (some 2.1 s left), far from the grace

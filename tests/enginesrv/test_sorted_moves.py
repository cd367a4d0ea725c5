"""The process's table of sorted move lists (``enginesrv.serve.positions.SortedMoves``): a
list is sorted once while it is held, the table holds at most its capacity of moves, the least
recently used list going first, and a page past the end of a list lists nothing; the client
library gathers a long list page by page."""

from __future__ import annotations

import pytest

import games
from enginesrv.client import AsyncEngine
from enginesrv.client.types import Framing
from enginesrv.serve import positions
from enginesrv.serve.connection import Limits
from enginesrv.serve.positions import SortedMoves
from enginesrv.serve.settings import SessionConfig
from tests.enginesrv.peer import running_server
from tests.enginesrv.test_robustness import VIEW, YOXII, sorted_moves
from tests.trio_run import trio_test


def test_a_list_is_sorted_once_and_the_least_recently_used_goes_first() -> None:
    yoxii = YOXII.new_state()
    yinyang = games.load("yinyang").state_from_string(VIEW)
    after = yoxii.copy()
    after.push(after.legal_moves()[0])
    # room for all three lists but one move
    sizes = [len(s.legal_moves()) for s in (yinyang, yoxii, after)]
    table = SortedMoves(capacity=sum(sizes) - 1, shortest=1)
    first = table.of(yinyang)
    assert list(first) == sorted_moves("yinyang", VIEW)
    assert table.of(yinyang) is first  # held: not listed again
    start = table.of(yoxii)
    assert table.of(yinyang) is first  # both fit
    table.of(after)  # over the capacity: the least recently used (Yoxii's start) goes
    assert table.of(yinyang) is first
    assert table.of(yoxii) is not start
    assert table.of(yoxii) == start


def test_a_list_longer_than_the_table_or_short_is_not_held() -> None:
    yinyang = games.load("yinyang").state_from_string(VIEW)
    table = SortedMoves(capacity=100, shortest=1)
    assert table.of(yinyang) is not table.of(yinyang)
    yoxii = YOXII.new_state()  # 8 moves: listed again each time, never held
    table = SortedMoves(capacity=10**6)
    assert table.of(yoxii) is not table.of(yoxii)


def test_the_table_holds_at_most_its_number_of_lists() -> None:
    """Lists of many positions (a Yin Yang position with another turn number each) take one
    place each: the table keeps its number of lists and its moves bounded whatever comes."""
    table = SortedMoves(capacity=10**6, shortest=1, most_lists=4)
    base = VIEW.rsplit(" ", 1)[0]
    yinyang = games.load("yinyang")
    for turn in range(1, 41, 2):
        table.of(yinyang.state_from_string(f"{base} {turn}"))
    assert len(table) == 4
    assert table.held == 4 * 3244


def test_a_page_past_the_end_lists_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []

    def listing(state: games.State) -> tuple[str, ...]:
        listed.append(state.to_string())
        return ()

    monkeypatch.setattr(positions.SORTED_MOVES, "of", listing)
    board = positions.Board(SessionConfig(), framing="text", max_reply=65536, peer=None)
    board.hold(games.load("yinyang"), games.load("yinyang").state_from_string(VIEW), [])
    assert board.query("moves", 3244) == "count 3244 moves"
    assert board.query("moves", 10**9) == "count 3244 moves"
    assert listed == []


@pytest.mark.parametrize("framing", ["text", "msgpack"])
@trio_test
async def test_the_client_gathers_a_long_list_whole(framing: Framing) -> None:
    """``legal_moves`` of the client library asks for the pages of a list cut to the reply's
    limit, and gives the whole of it."""
    async with (
        running_server(game="yinyang", limits=Limits(line=2000, frame=2000)) as (_, port),
        AsyncEngine.connect("127.0.0.1", port, framing=framing) as engine,
    ):
        await engine.position(VIEW, [])
        moves = await engine.legal_moves()
    assert moves.complete
    assert list(moves) == sorted_moves("yinyang", VIEW)

"""The Yinsh evaluation: colour symmetry, bounds, every phase, noisy moves and clear preferences."""

from __future__ import annotations

import random

import pytest

import games
from bots.engine import Limits
from bots.eval import MAX_EVAL, evaluator_for
from bots.eval.yinsh import LATTICE, YinshEvaluator, row_moves, terms, to_lattice
from bots.search import Searcher, SearchMemory, TranspositionTable
from games import State
from games.yinsh import BIT, COORDS, N_POINTS, RAYS, WINDOW_MASK, YinshGame, YinshState

VARIANTS = ("yinsh", "yinsh+blitz")
SWAP = str.maketrans("WBwb", "BWbw")


def swap_colours(position: str) -> str:
    """The same position with the colours exchanged: pieces, side to act, removed counts."""
    board, side, phase, removed, pool = position.split(" ")
    white, black = removed.split("-")
    return f"{board.translate(SWAP)} {side.translate(SWAP)} {phase} {black}-{white} {pool}"


def random_positions(variant: str, n_games: int, seed: int) -> list[str]:
    """Every non-terminal position of ``n_games`` seeded random games."""
    game = games.load(variant)
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n_games):
        state = game.new_state()
        while not state.is_terminal():
            out.append(state.to_string())
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return out


@pytest.fixture(scope="module")
def positions() -> dict[str, list[str]]:
    return {v: random_positions(v, 12 if v == "yinsh" else 30, 7) for v in VARIANTS}


def test_the_registry_gives_this_evaluator() -> None:
    for variant in VARIANTS:
        assert isinstance(evaluator_for(variant), YinshEvaluator)


def test_lattice_layout_is_a_one_to_one_shifted_copy() -> None:
    assert len(set(LATTICE)) == N_POINTS
    for p in range(N_POINTS):
        assert to_lattice(BIT[p]) == 1 << LATTICE[p]


def _slow_counts(state: YinshState, colour: int) -> tuple[int, ...]:
    """The per-colour counts of ``terms``, point by point and window by window."""
    mine, theirs = state.markers_mask(colour), state.markers_mask(colour ^ 1)
    rings = state.rings_mask(colour)
    markers = mine | theirs
    occupied = markers | state.rings_mask(0) | state.rings_mask(1)
    two = three = three_mixed = four = four_flip = threat = 0
    for window in WINDOW_MASK:
        own, contested = (mine & window).bit_count(), bool(theirs & window)
        two += own == 2 and not contested
        three += own == 3 and not contested
        three_mixed += own == 3 and contested
        four += own == 4 and not contested
        four_flip += own == 4 and contested
        threat += own == 4 and bool(rings & window)
    ring_points = [p for p in range(N_POINTS) if rings >> p & 1]
    mobility = sum(
        1
        for p in range(N_POINTS)
        if not occupied >> p & 1 and any(ray and ray[0] in ring_points for ray in RAYS[p])
    )
    contact = sum(1 for p in ring_points for ray in RAYS[p] if ray and markers >> ray[0] & 1)

    def within(p: int, limit: int) -> bool:
        q, r = COORDS[p]
        return max(abs(q - 5), abs(r - 6), abs(q - r + 1)) <= limit

    centre = [sum(within(p, limit) for p in ring_points) for limit in (3, 2, 1)]
    return (
        mine.bit_count(), mobility, contact, *centre, two, three, three_mixed, four, four_flip,
        threat,
    )  # fmt: skip


def test_the_bitboard_counts_match_a_plain_count(positions: dict[str, list[str]]) -> None:
    game = YinshGame("yinsh")
    for pos in positions["yinsh"][::3]:
        state = game.state_from_string(pos)
        t = terms(state)
        for colour, suffix in ((0, "_w"), (1, "_b")):
            names = (
                "markers", "mobility", "contact", "centre3", "centre2", "centre1", "two",
                "three", "three_mixed", "four", "four_flip", "threat",
            )  # fmt: skip
            fast = tuple(getattr(t, name + suffix) for name in names)
            assert fast == _slow_counts(state, colour), pos


@pytest.mark.parametrize("variant", VARIANTS)
def test_colour_swapped_positions_evaluate_the_same(
    variant: str, positions: dict[str, list[str]]
) -> None:
    game = games.load(variant)
    evaluator = YinshEvaluator()
    checked = 0
    for pos in positions[variant]:
        if pos.split(" ")[2] == "p":
            continue  # White places first: a swapped placement is not a valid string
        swapped = game.state_from_string(swap_colours(pos))
        assert evaluator.evaluate(game.state_from_string(pos)) == evaluator.evaluate(swapped), pos
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("variant", VARIANTS)
def test_colour_swapped_placements_evaluate_the_same(
    variant: str, positions: dict[str, list[str]]
) -> None:
    # Placement strings cannot be swapped (White places first), so build the swapped state.
    game = YinshGame(variant)
    evaluator = YinshEvaluator()
    for pos in positions[variant][:400]:
        state = game.state_from_string(pos)
        if state.phase() != "p":
            continue
        swapped = YinshState(
            game,
            rings=(state.rings_mask(1), state.rings_mask(0)),
            markers=(0, 0),
            side=state.to_move() ^ 1,
            phase=0,
            removed=(0, 0),
            pool=51,
        )
        assert evaluator.evaluate(state) == evaluator.evaluate(swapped), pos


@pytest.mark.parametrize("variant", VARIANTS)
def test_bounds_and_every_phase(variant: str, positions: dict[str, list[str]]) -> None:
    game = games.load(variant)
    evaluator = YinshEvaluator()
    phases: set[str] = set()
    for pos in positions[variant]:
        state = game.state_from_string(pos)
        value = evaluator.evaluate(state)
        assert isinstance(value, int)
        assert abs(value) < MAX_EVAL
        phases.add(state.phase())
    expected = {"p", "m", "x", "r", "X", "R"} if variant == "yinsh" else {"p", "m", "x", "r"}
    assert expected <= phases


def test_phase_n_and_extremes_are_in_bounds() -> None:
    evaluator = YinshEvaluator()
    game = games.load("yinsh")
    for pos in (
        "WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 b n 1-0 51",  # after a pass
        # two rings up, last marker, a row and a ring to take: as extreme as it gets
        "bbw1/Www1bw1/Bbbw2w1/1bwwb1w1w/bwWw2w1ww/wbBbbb1b1/wwbBb1b1b1/wbb3b1b/BbWwbw2/Wbww1ww/"
        "1wW1 b m 0-1 1",
    ):
        state = game.state_from_string(pos)
        assert abs(evaluator.evaluate(state)) < MAX_EVAL
        for move in state.legal_moves():
            state.push(move)
            if not state.is_terminal():
                assert abs(evaluator.evaluate(state)) < MAX_EVAL
            state.pop()


@pytest.mark.parametrize("variant", VARIANTS)
def test_noisy_moves_are_exactly_the_row_completions(
    variant: str, positions: dict[str, list[str]]
) -> None:
    game = games.load(variant)
    evaluator = YinshEvaluator()
    with_rows = 0
    for pos in positions[variant]:
        state = game.state_from_string(pos)
        moves = state.legal_moves()
        noisy = evaluator.noisy_moves(state, moves)
        assert len(set(noisy)) == len(noisy)
        assert set(noisy) <= set(moves)
        if state.phase() not in ("m", "n"):
            assert noisy == []
            continue
        completing = []
        for move in moves:
            state.push(move)
            if state.phase() == "x":  # the mover has a row to remove
                completing.append(move)
            state.pop()
        assert sorted(noisy) == sorted(completing), pos
        with_rows += bool(completing)
        # ordering puts them first and keeps every move
        ordered = evaluator.order_moves(state, moves)
        assert sorted(ordered) == sorted(moves)
        assert set(ordered[: len(noisy)]) == set(noisy)
    assert with_rows > 20


def test_only_removal_phases_are_not_quiet(positions: dict[str, list[str]]) -> None:
    game = games.load("yinsh")
    evaluator = YinshEvaluator()
    for pos in positions["yinsh"][::5]:
        state = game.state_from_string(pos)
        assert evaluator.is_quiet(state) == (state.phase() in ("p", "m", "n"))


def _value(pos: str, variant: str = "yinsh") -> int:
    return YinshEvaluator().evaluate(games.load(variant).state_from_string(pos))


def test_a_ring_ahead_is_clearly_better() -> None:
    # the same board, White one ring up, then Black one ring up (a ring removed far away)
    white_up = "4/7/8/9/2w1W5/9/10/9/8/1WWW2B/BBBB w m 1-0 50"
    assert _value(white_up) > 600
    assert _value(white_up.replace(" w m ", " b m ")) < -600
    black_up = "4/7/8/9/2w1W5/9/10/9/8/WWWW2B/1BBB w m 0-1 50"
    assert _value(black_up) < -600


def test_the_race_makes_a_ring_worth_more_when_the_pool_is_low() -> None:
    board = (
        "bbw1/Www1bw1/Bbbw2w1/1bwwb1w1w/bwWw2w1ww/wbBbbb1b1/wwbBb1b1b1/wbb3b1b/BbWwbw2/Wbww1ww/1wW1"
    )
    game = games.load("yinsh")
    low = game.state_from_string(f"{board} b m 0-1 1")
    evaluator = YinshEvaluator()
    assert evaluator.evaluate(low) > 1500


def test_a_pending_row_counts_like_a_ring() -> None:
    # White has just made two rows (phase x): that is two rings for White
    assert _value("2ww/3ww2/3ww3/3ww4/2wwwW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40") > 1500
    # a row for each colour: even
    assert abs(_value("2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40")) < 300
    # Black must remove the row White made for him (phase X)
    assert _value("3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB b X 1-0 45") > -300


def test_a_ring_threat_is_an_asset() -> None:
    # White: markers e1-e4 and a ring on e5: moving it completes the row. Black has nothing.
    threat = "WWWW/7/8/9/wwwwW5/9/10/9/8/6B/BBBB w m 0-0 47"
    quiet = "WWWW/7/8/9/wwwW6/9/10/9/8/6B/BBBB w m 0-0 48"
    assert _value(threat) > _value(quiet) + 150
    assert _value(threat.replace(" w m ", " b m ")) < -150


def test_a_central_ring_beats_an_edge_ring_in_placement() -> None:
    centre = "4/7/8/9/10/4W4/10/9/8/7/4 b p 0-0 51"
    edge = "W3/7/8/9/10/9/10/9/8/7/4 b p 0-0 51"
    assert _value(centre) < _value(edge)  # from Black's side: White's centre ring is worse
    assert _value(centre) < -20


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_search_takes_a_row_and_removes_sensibly(variant: str) -> None:
    # P32 of the benchmark: White can make a row with h9-i9
    pos = "4/2b4/bbb2b2/6B2/4BBb1bW/2BbbbbWW/4Bbwwww/2wwwwW1w/3bW3/7/4 w m 0-0 29"
    state = games.load(variant).state_from_string(pos)
    result = Searcher(
        state,
        evaluator=YinshEvaluator(),
        memory=SearchMemory(TranspositionTable(4)),
        limits=Limits(depth=2),
        stop=lambda: False,
        on_info=lambda info: None,
    ).run()
    assert result.token is not None
    state.push(state.parse_move(result.token))
    assert state.phase() == "x"


def test_evaluation_does_not_change_the_state(positions: dict[str, list[str]]) -> None:
    game = games.load("yinsh")
    evaluator = YinshEvaluator()
    for pos in positions["yinsh"][::7]:
        state: State = game.state_from_string(pos)
        evaluator.evaluate(state)
        evaluator.noisy_moves(state, state.legal_moves())
        evaluator.order_moves(state, state.legal_moves())
        assert state.to_string() == pos


def test_row_moves_agree_with_the_rules_on_a_known_position() -> None:
    # T8b: one marker left; only f4-b4 makes a row
    game = games.load("yinsh")
    state = game.state_from_string(
        "bbw1/Www1bw1/Bbbw2w1/1bwwb1w1w/bwWw2w1ww/wbBbbb1b1/wwbBb1b1b1/wbb3b1b/BbWwbw2/Wbww1ww/"
        "1wW1 b m 0-1 1"
    )
    assert isinstance(state, YinshState)
    assert [state.move_to_str(m) for m in row_moves(state)] == ["f4-b4"]


def test_the_removable_rows_do_not_depend_on_the_order_they_are_listed_in() -> None:
    """Rows A and C are disjoint and B overlaps both: listed B first, a greedy count in list
    order finds one removable row, listed A first two. The evaluation caches values by position,
    and one position may list its rows in either order by the moves that reached it."""
    from bots.eval.yinsh import _disjoint_rows
    from games.yinsh import POINT_OF_NAME, WINDOW_OF_ENDS

    def window(first: str, last: str) -> int:
        return WINDOW_OF_ENDS[(POINT_OF_NAME[first], POINT_OF_NAME[last])]

    a, b, c = window("e1", "e5"), window("e4", "e8"), window("e6", "e10")
    counts = {_disjoint_rows(rows) for rows in ((a, b, c), (b, a, c), (c, b, a), (b, c, a))}
    assert counts == {2}

"""The Yoxii evaluation: colour symmetry, the board's reflections, bounds, both phases, clear
preferences, the exact one-turn closures and the endgame solver.

Colour symmetry cannot go through position strings: rule V4 wants equal piece counts when
White acts and one White piece more when Black acts, so the colour-swapped string of a valid
position is never valid. The swapped positions are built with the ``YoxiiState`` constructor
instead, and the public accessors check that they are the exact mirror image. The board's eight
reflections and rotations keep the counts, so those go through strings.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bots.alphabeta import AlphaBeta
from bots.engine import Limits
from bots.eval import MAX_EVAL, evaluator_for
from bots.eval.yoxii import HEURISTIC_CAP, SOLVE_EMPTIES, SOLVED, Weights, YoxiiEvaluator
from games import State
from games.yoxii import COORDS, N_SQUARES, YoxiiGame, YoxiiState, format_board

GAME = YoxiiGame()

WHITE_CLOSES_AND_WINS = "1Ta/BCDa1/7/6a/7/5/3 w t w:5442 b:2553"
"""White steps the Totem to c7, must place on d7 (a 4) and Black, with no piece next to c7,
cannot move: White 13 - Black 0."""
BLACK_FORCED_TO_LOSE = "T2/BCD2/a1a1a2/7/6A/5/3 b p w:4442 b:2553"
"""Black must place on d7, the last empty neighbour of c7; White's runs from c7 end on Black
pieces (a5, c5, e5), so White cannot move and wins 9 to at most 4."""
WHITE_STRONGER_REGION = "3/5/2DC3/3T3/2ab3/5/3 w t w:5542 b:4453"
"""White's 4 and 3 next to the Totem against Black's 1 and 2."""


def random_positions(seed: int, games: int) -> list[YoxiiState]:
    """Every non-terminal position of ``games`` seeded random games."""
    rng = random.Random(seed)
    out: list[YoxiiState] = []
    for _ in range(games):
        state = GAME.state_from_string(GAME.start_position)
        while not state.is_terminal():
            out.append(state.copy())
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return out


def bits(mask: int) -> list[int]:
    return [s for s in range(N_SQUARES) if mask >> s & 1]


def packed_values(state: YoxiiState) -> int:
    """``value - 1`` of each piece in two bits per square (the constructor's ``values``)."""
    occupied = state.pieces_mask(0) | state.pieces_mask(1)
    return sum((state.value_at(s) - 1) << 2 * s for s in bits(occupied))


def colour_swapped(state: YoxiiState) -> YoxiiState:
    """The same position with the colours of the pieces, the stocks and the side swapped."""
    stocks = (state.stock(1), state.stock(0))  # 3 bits per value, 12 per player, Black above
    packed = sum(n << 3 * (4 * p + v) for p in range(2) for v, n in enumerate(stocks[p]))
    swapped = YoxiiState(
        GAME,
        pieces=(state.pieces_mask(1), state.pieces_mask(0)),
        values=packed_values(state),
        totem=state.totem(),
        stock=packed,
        side=state.to_move() ^ 1,
        phase=0 if state.phase() == "t" else 1,
    )
    # the mirror image, as the public accessors see it
    assert swapped.pieces_mask(0) == state.pieces_mask(1)
    assert swapped.pieces_mask(1) == state.pieces_mask(0)
    assert swapped.stock(0) == state.stock(1)
    assert swapped.stock(1) == state.stock(0)
    assert swapped.to_move() == state.to_move() ^ 1
    assert swapped.phase() == state.phase()
    board, board_swapped = state.to_string().split(" ")[0], swapped.to_string().split(" ")[0]
    assert board_swapped == board.translate(str.maketrans("ABCDabcd", "abcdABCD"))
    return swapped


SYMMETRIES: list[Callable[[int, int], tuple[int, int]]] = [
    lambda f, r: (f, r),
    lambda f, r: (6 - f, r),
    lambda f, r: (f, 6 - r),
    lambda f, r: (6 - f, 6 - r),
    lambda f, r: (r, f),
    lambda f, r: (6 - r, f),
    lambda f, r: (r, 6 - f),
    lambda f, r: (6 - r, 6 - f),
]
"""The eight symmetries of the octagon (the rules treat all 8 directions alike)."""


def transformed(state: YoxiiState, symmetry: Callable[[int, int], tuple[int, int]]) -> str:
    """The position string of ``state`` reflected or rotated by ``symmetry``."""
    index = {c: s for s, c in enumerate(COORDS)}
    image = [index[symmetry(*COORDS[s])] for s in range(N_SQUARES)]
    white = sum(1 << image[s] for s in bits(state.pieces_mask(0)))
    black = sum(1 << image[s] for s in bits(state.pieces_mask(1)))
    values = sum(
        (state.value_at(s) - 1) << 2 * image[s]
        for s in bits(state.pieces_mask(0) | state.pieces_mask(1))
    )
    board = format_board(white, black, values, image[state.totem()])
    return f"{board} {' '.join(state.to_string().split(' ')[1:])}"


@pytest.fixture(scope="module")
def positions() -> list[YoxiiState]:
    return random_positions(seed=2024, games=40)


def test_registered() -> None:
    assert isinstance(evaluator_for("yoxii"), YoxiiEvaluator)


def test_colour_swap_gives_the_same_score(positions: list[YoxiiState]) -> None:
    evaluator = YoxiiEvaluator()
    for state in positions:
        assert evaluator.evaluate(colour_swapped(state)) == evaluator.evaluate(state), state


def test_reflections_and_rotations_give_the_same_score(positions: list[YoxiiState]) -> None:
    # An uncapped solver: with the cap, a solve could finish in one square order and not in
    # another; the proven scores themselves do not depend on the order.
    evaluator = YoxiiEvaluator(solve_nodes=10**7)
    for state in positions[::3]:
        expected = evaluator.evaluate(state)
        for symmetry in SYMMETRIES[1:]:
            image = GAME.state_from_string(transformed(state, symmetry))
            assert evaluator.evaluate(image) == expected, (state, image)


def test_bounds_and_both_phases(positions: list[YoxiiState]) -> None:
    evaluator = YoxiiEvaluator()
    seen = set()
    for state in positions:
        value = evaluator.evaluate(state)
        assert type(value) is int
        assert -MAX_EVAL < value < MAX_EVAL
        seen.add(state.phase())
    assert seen == {"t", "p"}


def test_winning_closure_is_proven() -> None:
    value = YoxiiEvaluator().evaluate(GAME.state_from_string(WHITE_CLOSES_AND_WINS))
    assert value == SOLVED + 100 * 13 + 10 * 4


def test_forced_losing_closure_is_proven() -> None:
    value = YoxiiEvaluator().evaluate(GAME.state_from_string(BLACK_FORCED_TO_LOSE))
    # Black's best: its 4 on d7, 4 points against 9, one piece against three
    assert value == -SOLVED + 100 * (4 - 9) + 10 * (1 - 3)


def test_prefers_the_side_with_the_stronger_region() -> None:
    state = GAME.state_from_string(WHITE_STRONGER_REGION)
    value = YoxiiEvaluator().evaluate(state)
    assert 200 < value < SOLVED
    assert YoxiiEvaluator().evaluate(colour_swapped(state)) == value


def test_forced_winning_placement_is_proven() -> None:
    # after the Totem step to c7 White's only square is d7, which shuts Black in
    state = GAME.state_from_string(WHITE_CLOSES_AND_WINS)
    state.push(state.parse_move("c7"))
    assert state.phase() == "p"
    assert YoxiiEvaluator().evaluate(state) == SOLVED + 100 * 13 + 10 * 4


def test_the_tempo_weights_add_to_the_heuristic_of_their_phase_only(
    positions: list[YoxiiState],
) -> None:
    plain = YoxiiEvaluator(Weights(tempo_totem=0, tempo_place=0))
    tempo = YoxiiEvaluator(Weights(tempo_totem=300, tempo_place=-70))
    seen = {"t": 0, "p": 0, "proven": 0}
    for state in positions:
        before = plain.evaluate(state)
        after = tempo.evaluate(state)
        assert tempo.evaluate_python(state) == after, state
        if abs(before) >= SOLVED - 4000:
            assert after == before, state  # a proven score takes no tempo
            seen["proven"] += 1
        elif before < 0 or 70 < before < HEURISTIC_CAP - 300:
            # the heuristic's value: a closure floor under it (a loss, or a draw's 0 under a
            # value above 70) stays under it with either tempo
            assert after - before == (300 if state.phase() == "t" else -70), state
            seen[state.phase()] += 1
    assert min(seen.values()) >= 5, seen


def solve(state: State, alpha: int = -1, beta: int = 1) -> int:
    """Win (1), draw (0) or loss (-1) for the side to act, by alpha-beta over the public API."""
    me = state.to_move()
    best = -2
    for move in state.legal_moves():
        state.push(move)
        if state.is_terminal():
            outcome = state.outcome()
            assert outcome is not None
            seat = outcome.winner_seat
            value = 0 if seat is None else (1 if seat == me else -1)
        elif state.to_move() == me:
            value = solve(state, alpha, beta)
        else:
            value = -solve(state, -beta, -alpha)
        state.pop()
        if value > best:
            best = value
            alpha = max(alpha, value)
            if alpha >= beta:
                break
    return best


def test_endgame_solver_agrees_with_exhaustive_search() -> None:
    evaluator = YoxiiEvaluator(solve_nodes=10**7)
    checked = 0
    for state in random_positions(seed=7, games=80):
        empty = 36 - (state.pieces_mask(0) | state.pieces_mask(1)).bit_count()
        if empty > SOLVE_EMPTIES:
            continue
        value = evaluator.evaluate(state)
        proven = (value >= SOLVED) - (value <= -SOLVED)
        if value != 0:
            assert abs(value) >= SOLVED - 4000, state  # a solved position: a proven score
        assert proven == solve(state.copy()), state
        checked += 1
    assert checked >= 15


def test_alphabeta_takes_the_winning_closure() -> None:
    bot = AlphaBeta()
    bot.new_game(GAME)
    result = bot.search(GAME.state_from_string(WHITE_CLOSES_AND_WINS), Limits(depth=2))
    assert result.token == "c7"
    assert result.score is not None
    assert result.score.kind == "win"

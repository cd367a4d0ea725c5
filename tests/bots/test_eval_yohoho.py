"""The Yohoho evaluation: colour symmetry on mirrored positions, bounds, every phase, the noisy
moves, the move order, and positions where one side is clearly better."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import games
from bots.eval import MAX_EVAL, evaluator_for
from bots.eval import yohoho as yohoho_eval
from bots.eval.yohoho import YohohoEvaluator
from games import State
from games.yohoho import CAPTURE, FULL_MASK, N_CELLS

YOHOHO = games.load("yohoho")
EVAL = YohohoEvaluator()


def state(pos: str) -> State:
    return YOHOHO.state_from_string(pos)


def mirror_cell(name: str) -> str:
    """Reflection in row 5: (x, y) -> (x, 10 - y); east stays east, so the wind is unchanged."""
    return f"{name[0]}{10 - int(name[1:])}"


def mirror_position(pos: str) -> str:
    """The same position with the colours swapped (rows reversed, case swapped, side swapped)."""
    board, side, phase, first = pos.split(" ")
    rows = board.split("/")[::-1]
    phase = phase if phase == "1" else "2:" + mirror_cell(phase[2:])
    return f"{'/'.join(r.swapcase() for r in rows)} {'b' if side == 'w' else 'w'} {phase} {first}"


def random_positions(count: int, seed: int) -> Iterator[State]:
    """Non-terminal states along seeded random games (the start included), ``count`` in all."""
    rng = random.Random(seed)
    made = 0
    while True:
        s = YOHOHO.new_state()
        while not s.is_terminal():
            yield s
            made += 1
            if made >= count:
                return
            moves = s.legal_moves()
            if rng.random() < 0.01:
                break
            s.push(moves[rng.randrange(len(moves))])


def test_registered() -> None:
    assert isinstance(evaluator_for("yohoho"), YohohoEvaluator)


def test_colour_symmetry_on_mirrored_positions() -> None:
    checked = phases = 0
    for s in random_positions(1500, seed=5):
        pos = s.to_string()
        if pos.endswith(" 1"):
            continue  # White's single first sub-move has no Black counterpart
        twin = state(mirror_position(pos))
        assert twin.to_string() == mirror_position(pos)
        assert EVAL.evaluate(twin) == EVAL.evaluate(s), pos
        checked += 1
        phases += s.phase() == "2"
    assert checked > 1000
    assert phases > 300


def test_bounds_over_random_positions() -> None:
    for s in random_positions(1500, seed=6):
        value = EVAL.evaluate(s)
        assert isinstance(value, int)
        assert -MAX_EVAL < value < MAX_EVAL, s.to_string()


# One position per phase and rule situation (rules §4, §9.3).
PHASES = {
    "start (White's single first sub-move)": "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1",
    "phase 1": "1ccgrgcc1/8/4a4/8/9/4A3/9/8/1CCGRGCC1 b 1 0",
    "phase 2": "1ccgrgcc1/8/9/3a4/9/4A3/9/8/1CCGRGCC1 b 2:h6 0",
    "capture available": "1c1g5/3g1A2/4a4/8/5GR2/2C1c3/r8/8/2CG2CC1 w 1 0",
    "Arno: escape or freeing capture": "4a3r/8/9/3gg3/1c2A4/G7/9/8/R8 w 1 0",
    "Arno: phase 2 after the escape": "4a3r/8/9/3gg3/1c7/G2A4/9/8/R8 w 2:h4 0",
    "Arno: escape only": "3g2c2/1c6/3cg2c1/8/2C2r3/3CGa2/5AC2/1C1G4/4R4 b 1 0",
    "Arno: freeing capture only": "3r5/8/2g2c3/2R1g3/2cac4/3AG3/3CG4/4C3/9 w 1 0",
    "Arno in play": "3g1gc2/8/5r3/A4c2/4c4/3G4/3a1R3/1C1G4/2C4C1 b 1 0",
    "bare board": "4a4/8/9/8/9/8/9/7r/1AC4cR w 1 0",
}


@pytest.mark.parametrize("pos", PHASES.values(), ids=PHASES.keys())
def test_every_phase_is_evaluated(pos: str) -> None:
    s = state(pos)
    assert not s.is_terminal()
    value = EVAL.evaluate(s)
    assert -MAX_EVAL < value < MAX_EVAL
    assert s.to_string() == pos, "evaluate must not change the position"
    if not pos.endswith(" 1"):
        assert EVAL.evaluate(state(mirror_position(pos))) == value


def test_noisy_moves_are_the_legal_captures() -> None:
    seen = 0
    for s in random_positions(800, seed=7):
        moves = s.legal_moves()
        noisy = EVAL.noisy_moves(s, moves)
        captures = [m for m in moves if m & CAPTURE]
        assert sorted(noisy) == sorted(captures)
        assert all(s.move_to_str(m).startswith("x:") for m in noisy)
        seen += len(noisy)
    assert seen > 0


def test_move_order_is_a_permutation_with_captures_first() -> None:
    for s in random_positions(400, seed=8):
        moves = s.legal_moves()
        ordered = EVAL.order_moves(s, moves)
        assert sorted(ordered) == sorted(moves)
        kinds = [bool(m & CAPTURE) for m in ordered]
        assert kinds == sorted(kinds, reverse=True), s.to_string()


# White's Admiral on p8 may step onto o9 or q9 (rows 9 and 8 have nothing to stop it).
ADMIRAL_AT_THE_GOAL = "1ccgrgc2/7A/4a4/8/9/8/4c4/8/1CCGRGCC1"
# Black has lost a Galleon; everything else is the start.
GALLEON_AHEAD = "1ccgr1cc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1"


def test_an_admiral_a_step_from_its_goal_row() -> None:
    white_to_act = EVAL.evaluate(state(ADMIRAL_AT_THE_GOAL + " w 1 0"))
    black_to_act = EVAL.evaluate(state(ADMIRAL_AT_THE_GOAL + " b 1 0"))
    assert white_to_act > 2000  # the step wins at once
    assert black_to_act < -100  # Black must stop it with its whole turn
    # Mid-turn: White still has its second sub-move for the step.
    moved_first = ADMIRAL_AT_THE_GOAL.replace("/8/1CCGRGCC1", "/3G4/1CC1RGCC1")
    assert EVAL.evaluate(state(moved_first + " w 2:h2 0")) > 2000
    # ... but not when the Admiral itself made the first sub-move: it steps next turn, which
    # Black cannot stop here (a won race, not a win now)
    stepped = EVAL.evaluate(state(ADMIRAL_AT_THE_GOAL + " w 2:p8 0"))
    assert stepped < EVAL.evaluate(state(moved_first + " w 2:h2 0"))
    assert stepped < white_to_act


def test_a_galleon_ahead() -> None:
    assert EVAL.evaluate(state(GALLEON_AHEAD + " w 1 0")) > 100
    assert EVAL.evaluate(state(GALLEON_AHEAD + " b 1 0")) < -100
    assert EVAL.evaluate(state(mirror_position(GALLEON_AHEAD + " w 1 0"))) > 100


def test_quiet_except_under_arnos_rule() -> None:
    assert EVAL.is_quiet(state(PHASES["phase 1"]))
    assert EVAL.is_quiet(state(PHASES["phase 2"]))
    assert EVAL.is_quiet(state(PHASES["Arno: phase 2 after the escape"]))
    for name in ("Arno: escape or freeing capture", "Arno: escape only", "Arno in play"):
        assert not EVAL.is_quiet(state(PHASES[name])), name


def test_a_capturable_admiral_is_bad_for_its_side() -> None:
    # Arno's rule: White must spend its turn on the Admiral (three escapes or a capture).
    arno = state(PHASES["Arno: escape or freeing capture"])
    calm = state("4a3r/7g/9/3g4/1c2A4/G7/9/8/R8 w 1 0")  # the Galleon on p8 instead of j6
    assert EVAL.evaluate(arno) < EVAL.evaluate(calm)


# -- races ---------------------------------------------------------------------------------------

# Black to act, up a Galleon if it takes f2; but its own Admiral (e3) needs two turns to row 1
# and White's (m7) two to row 9, White moving first after the capture, with nothing of Black's
# able to get in its way in time.
CAPTURE_LOSES_THE_RACE = "1cc6/3gr3/6A2/4g3/9/3c4/1Ra6/2C1G3/9 b 1 0"
# Black to act: x:g5 wins a Galleon, but then White's Admiral (a7, on the west edge) steps to
# b8 and Black can close only one of a9 and c9; d8-b8 stands in its way first.
CAPTURE_OPENS_THE_EDGE = "9/1cg5/A8/3a4/3G5/8/9/8/4R3r b 1 0"


def after(position: str, token: str) -> State:
    played = state(position)
    played.push(played.parse_move(token))
    return played


@pytest.mark.parametrize(
    ("position", "capture"),
    [(CAPTURE_LOSES_THE_RACE, "x:f2"), (CAPTURE_OPENS_THE_EDGE, "x:g5")],
)
def test_a_material_lead_does_not_hide_a_lost_race(position: str, capture: str) -> None:
    taken = after(position, capture)
    assert taken.to_move() == 0
    # White, to act, wins the race whatever Black's extra Galleon is worth
    assert EVAL.evaluate(taken) > 2000


def test_a_race_the_defender_can_still_stop_is_not_decided() -> None:
    # Black to act first can put its Chebec on b8, the one cell of the Admiral's route
    assert abs(EVAL.evaluate(state(CAPTURE_OPENS_THE_EDGE))) < 2000
    # ... and once it stands there, White's Admiral has no open route at all
    blocked = after(CAPTURE_OPENS_THE_EDGE, "d8-b8")
    assert abs(EVAL.evaluate(blocked)) < 2000


def test_the_search_races_instead_of_capturing() -> None:
    from bots.alphabeta import AlphaBeta
    from bots.engine import Limits

    bot = AlphaBeta()
    bot.new_game(YOHOHO)
    for position in (CAPTURE_LOSES_THE_RACE, CAPTURE_OPENS_THE_EDGE):
        result = bot.search(state(position), Limits(depth=3))
        assert result.token is not None
        assert not result.token.startswith("x:"), (position, result.token)
    bot.new_game(YOHOHO)
    result = bot.search(state(CAPTURE_LOSES_THE_RACE), Limits(depth=2))
    assert result.score is not None
    # the race is seen as won at depth 2 (a win of 1 turn's difference, not a few pawns)
    assert result.score.kind == "win" or result.score.value > 2000


def test_races_are_judged_the_same_for_both_colours() -> None:
    for position, capture in ((CAPTURE_LOSES_THE_RACE, "x:f2"), (CAPTURE_OPENS_THE_EDGE, "x:g5")):
        taken = after(position, capture)
        mirrored = state(mirror_position(taken.to_string()))
        assert EVAL.evaluate(mirrored) == EVAL.evaluate(taken)


def _row(row: int) -> int:
    """The cells of one row, as a bitboard."""
    cells = 0
    for c in range(N_CELLS):
        if yohoho_eval.ROW_OF[c] == row:
            cells |= 1 << c
    return cells


@pytest.mark.parametrize("up", [True, False])
def test_a_row_of_enemy_ships_costs_the_admiral_a_turn_and_unsafe_cells_stop_it(up: bool) -> None:
    """The distance to the goal row counts turns: a step onto an enemy ship's cell costs two
    (the capture first), a cell where the Admiral may not stop is no step at all."""
    dist = yohoho_eval._dist_up if up else yohoho_eval._dist_down
    start, wall = (3, 6) if up else (7, 4)
    admiral = 1 << next(c for c in range(N_CELLS) if yohoho_eval.ROW_OF[c] == start)
    full = FULL_MASK
    assert dist(admiral, full, 0) == 6
    ships = _row(wall)
    assert dist(admiral, full & ~ships, ships) == 7
    # the same row unsafe (enemy strength above 5 next to each cell): no route past it
    assert dist(admiral, full & ~ships, 0) == yohoho_eval._FAR
    # one cell open in the row: the route around a capture is taken where it is shorter
    gap = ships & -ships
    assert dist(admiral, (full & ~ships) | gap, ships & ~gap) <= 7
    # a blocker on the goal row itself: captured, then stepped on
    goal = _row(9 if up else 1)
    assert dist(admiral, full & ~goal, goal) == 7

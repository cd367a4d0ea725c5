"""``State.turn_position``: where a decision stands in its player's turn, in every phase of every
game, reached by playing real moves from the start or from the positions of tests/data."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

import games

DATA = Path(__file__).parent.parent / "data"
YOHOHO = games.load("yohoho")
YOXII = games.load("yoxii")
YINYANG = games.load("yinyang")

# Yin Yang: both setups of the rules' example law sets (tests/data/yinyang t-01, t-02), and the
# turn-3 position before Black's piece move b2-c2 (t-11)
YY_SETUP_P1 = "laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w"
YY_SETUP_P2 = "laws:wbww>w.ww,..ww>wwww,wbwb>*,.bb.>wbbw"
YY_TURN3 = (
    "bwww/bwww/bb.w/bbbw b start -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w "
    "+wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 3"
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


YINSH_CASES = {case["id"]: case for case in read_jsonl(DATA / "yinsh" / "yinsh-cases.jsonl")}


def play(state: games.State, *tokens: str) -> games.State:
    """``state`` after ``tokens`` (each checked), for chaining."""
    for token in tokens:
        state.push(state.parse_move(token))
    return state


def random_positions(game: games.Game, seed: int, games_: int = 6) -> list[games.State]:
    """Every position (as a copy) of a few seeded random games of ``game``."""
    rng = random.Random(seed)
    out: list[games.State] = []
    for _ in range(games_):
        state = game.new_state()
        out.append(state.copy())
        while not state.is_terminal() and state.ply() < 300:
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
            out.append(state.copy())
    return out


def assert_survives_its_string(state: games.State) -> None:
    """The turn position is the position's: a position string gives it back."""
    again = state.game.state_from_string(state.to_string())
    assert again.turn_position() == state.turn_position(), state.to_string()


# -- the default ------------------------------------------------------------------------------


def test_a_state_makes_one_decision_a_turn_by_default() -> None:
    from tests.bots.toy import Nim

    assert Nim(5).new_state().turn_position() == (0, 1)


# -- Yohoho -------------------------------------------------------------------------------------


def test_yohoho_whites_first_turn_is_a_single_sub_move() -> None:
    state = YOHOHO.new_state()
    assert state.phase() == "1"
    assert state.to_move() == games.P1
    assert state.turn_position() == (0, 1)
    assert_survives_its_string(state)


def test_yohoho_turns_are_two_sub_moves_after_whites_first() -> None:
    state = YOHOHO.new_state()
    state.push(state.legal_moves()[0])  # White's single first sub-move: the turn ends
    assert state.to_move() == games.P2
    assert state.phase() == "1"
    assert state.turn_position() == (0, 2)
    assert_survives_its_string(state)
    first = next(
        m for m in state.legal_moves() if not state.move_to_str(m).startswith("x:")
    )  # a first sub-move, not a capture
    state.push(first)
    assert state.to_move() == games.P2, "a first sub-move leaves the same side to act"
    assert state.phase() == "2"
    assert state.turn_position() == (1, 2)
    assert_survives_its_string(state)
    state.push(state.legal_moves()[0])
    assert state.to_move() == games.P1
    assert state.phase() == "1"
    assert state.turn_position() == (0, 2), "White's later turns have two sub-moves"
    assert_survives_its_string(state)


def test_yohoho_first_turn_flag_in_a_position_string() -> None:
    start = YOHOHO.start_position
    assert start.endswith(" w 1 1")
    assert YOHOHO.state_from_string(start).turn_position() == (0, 1)
    # the same board with the first-turn flag cleared: a turn of two sub-moves
    assert YOHOHO.state_from_string(start[: -len("1")] + "0").turn_position() == (0, 2)


@pytest.mark.parametrize("seed", [1, 2])
def test_yohoho_turn_position_in_every_position_of_random_games(seed: int) -> None:
    positions = random_positions(YOHOHO, seed)
    phases = set()
    for before, state in itertools.pairwise(positions):
        if state.ply() == 0 or state.is_terminal():
            continue
        phases.add(state.phase())
        expected = {"1": (0, 2), "2": (1, 2)}[state.phase()]
        assert state.turn_position() == expected, state.to_string()
        # a second sub-move always continues the same side's turn
        if state.phase() == "2":
            assert before.to_move() == state.to_move()
            assert before.phase() == "1"
    assert phases == {"1", "2"}
    for state in positions[::17]:
        assert_survives_its_string(state)


# -- Yoxii ----------------------------------------------------------------------------------------


def test_yoxii_a_totem_move_then_a_placement() -> None:
    state = YOXII.new_state()
    assert state.phase() == "t"
    assert state.turn_position() == (0, 2)
    play(state, "c5")  # the Totem
    assert state.to_move() == games.P1
    assert state.phase() == "p"
    assert state.turn_position() == (1, 2)
    assert_survives_its_string(state)
    state.push(state.legal_moves()[0])  # the placement ends the turn
    assert state.to_move() == games.P2
    assert state.phase() == "t"
    assert state.turn_position() == (0, 2)
    assert_survives_its_string(state)


@pytest.mark.parametrize("seed", [3, 4])
def test_yoxii_turn_position_in_every_position_of_random_games(seed: int) -> None:
    positions = random_positions(YOXII, seed)
    for before, state in itertools.pairwise(positions):
        if state.ply() == 0 or state.is_terminal():
            continue
        made = 1 if state.phase() == "p" else 0
        assert state.turn_position() == (made, 2), state.to_string()
        # the turn goes on exactly when the same player acts again
        assert (before.to_move() == state.to_move()) == (made == 1)


# -- Yinsh --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_yinsh_placement_and_ring_moves_are_single_decisions(name: str) -> None:
    game = games.load(name)
    state = game.new_state()
    assert state.phase() == "p"
    assert state.turn_position() == (0, 1)
    for _ in range(10):  # all ten rings
        state.push(state.legal_moves()[0])
        assert state.turn_position() == (0, 1)
    assert state.phase() == "m"
    after_pass = games.load("yinsh").state_from_string(YINSH_CASES["T9b"]["after"])
    assert after_pass.phase() == "n"
    assert after_pass.turn_position() == (0, 1)


def test_yinsh_own_row_then_own_ring_after_the_ring_move() -> None:
    case = YINSH_CASES["T2a"]  # e1-e6 makes White's row e1-e5
    state = games.load("yinsh").state_from_string(case["pos"])
    assert state.turn_position() == (0, 1)
    play(state, "e1-e6")
    assert state.phase() == "x"
    assert state.to_move() == games.P1
    assert state.turn_position() == (1, 3)
    assert_survives_its_string(state)
    play(state, "x:e1-e5")
    assert state.phase() == "r"
    assert state.to_move() == games.P1
    assert state.turn_position() == (2, 3)
    assert_survives_its_string(state)
    play(state, "r:e6")
    assert state.to_string() == YINSH_CASES["T2c"]["after"]
    assert state.to_move() == games.P2
    assert state.turn_position() == (0, 1)


def test_yinsh_a_row_made_by_the_opponent_is_removed_before_the_move() -> None:
    state = games.load("yinsh").state_from_string(YINSH_CASES["T3a"]["pos"])
    play(state, "e3-e5")  # White flips e4 into Black's row a4-e4
    assert state.phase() == "X"
    assert state.to_move() == games.P2
    assert state.turn_position() == (0, 3)
    assert_survives_its_string(state)
    play(state, "x:a4-e4")
    assert state.phase() == "R"
    assert state.to_move() == games.P2
    assert state.turn_position() == (1, 3)
    assert_survives_its_string(state)
    play(state, "r:k7")
    assert state.to_string() == YINSH_CASES["T3c"]["after"]
    assert state.phase() == "m"
    assert state.to_move() == games.P2


def test_yinsh_turn_position_of_every_case_after_position() -> None:
    expected = {"p": (0, 1), "m": (0, 1), "n": (0, 1), "e": (0, 1),
                "x": (1, 3), "r": (2, 3), "X": (0, 3), "R": (1, 3)}  # fmt: skip
    seen = set()
    for case in YINSH_CASES.values():
        game = games.load(case["variant"])
        state = game.state_from_string(case["after"])
        seen.add(state.phase())
        assert state.turn_position() == expected[state.phase()], case["id"]
    assert seen >= {"m", "n", "e", "x", "r", "X", "R"}


# -- Yin Yang ---------------------------------------------------------------------------------


def test_yinyang_each_setup_is_a_turn_of_its_own() -> None:
    state = YINYANG.new_state()
    assert state.phase() == "setup"
    assert state.turn_position() == (0, 1)
    play(state, YY_SETUP_P1)
    assert state.phase() == "setup"
    assert state.to_move() == games.P2
    assert state.turn_position() == (0, 1)
    play(state, YY_SETUP_P2)
    assert state.phase() == "start"
    assert state.to_move() == games.P1
    assert state.turn_position() == (0, 2)
    assert_survives_its_string(state)


def test_yinyang_a_piece_move_then_a_law_or_end() -> None:
    state = YINYANG.state_from_string(YY_TURN3)
    assert state.turn_position() == (0, 2)
    play(state, "b2-c2")
    assert state.phase() == "moved"
    assert state.to_move() == games.P1
    assert state.turn_position() == (1, 2)
    assert_survives_its_string(state)
    play(state, "end")
    assert state.phase() == "start"
    assert state.to_move() == games.P2
    assert state.turn_position() == (0, 2)


def test_yinyang_views_agree_on_the_turn_position() -> None:
    start = YINYANG.state_from_string(YY_TURN3)
    moved = play(start.copy(), "b2-c2")
    for state in (start, moved):
        for player in (games.P1, games.P2):
            view = state.view(player)
            assert view.turn_position() == state.turn_position()
            assert_survives_its_string(view)


# -- all games ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii"])
def test_a_turn_position_is_always_well_formed(name: str) -> None:
    for state in random_positions(games.load(name), seed=11, games_=3):
        made, decisions = state.turn_position()
        assert decisions >= 1
        assert 0 <= made < decisions


# -- State.time_weight -------------------------------------------------------------------------


def test_a_decision_weighs_one_by_default() -> None:
    from tests.bots.toy import Nim

    assert Nim(5).new_state().time_weight() == 1.0


@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_yinsh_weighs_the_ten_ring_placements_and_nothing_else(name: str) -> None:
    from games.yinsh import PLACEMENT_TIME_WEIGHT

    game = games.load(name)
    for positions in (random_positions(game, 7, 2), random_positions(game, 8, 2)):
        weights = [state.time_weight() for state in positions]
        # each game's first ten positions are placements; none after them is
        per_game = [i for i, state in enumerate(positions) if state.ply() == 0]
        for start in per_game:
            assert weights[start : start + 10] == [PLACEMENT_TIME_WEIGHT] * 10
            assert weights[start + 10] == 1.0
        assert weights.count(PLACEMENT_TIME_WEIGHT) == 10 * len(per_game)
        for state in positions:
            again = game.state_from_string(state.to_string())
            assert again.time_weight() == state.time_weight(), state.to_string()
            assert (state.time_weight() < 1.0) is (state.phase() == "p")


@pytest.mark.parametrize("name", ["yohoho", "yoxii", "yinyang"])
def test_the_other_games_weigh_every_decision_one(name: str) -> None:
    game = games.load(name)
    assert {state.time_weight() for state in random_positions(game, 3, 3)} == {1.0}


# -- State.decisions_left ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz", "yohoho", "yinyang"])
def test_a_game_without_an_estimate_of_its_length_gives_none(name: str) -> None:
    game = games.load(name)
    assert {state.decisions_left() for state in random_positions(game, 5, 2)} == {None}


def test_yoxii_estimates_the_decisions_left_from_the_pieces_placed() -> None:
    from games.yoxii import EXPECTED_TURNS, YoxiiState

    for state in random_positions(YOXII, 9, 4):
        assert isinstance(state, YoxiiState)
        placed = sum((state.pieces_mask(player)).bit_count() for player in (games.P1, games.P2))
        assert state.decisions_left() == max(2, EXPECTED_TURNS - placed), state.to_string()
        again = YOXII.state_from_string(state.to_string())
        assert again.decisions_left() == state.decisions_left(), state.to_string()
    state = YOXII.new_state()
    assert state.decisions_left() == EXPECTED_TURNS
    play(state, "c5")  # both decisions of a turn share the turn's estimate
    assert state.decisions_left() == EXPECTED_TURNS
    state.push(state.legal_moves()[0])
    assert state.decisions_left() == EXPECTED_TURNS - 1

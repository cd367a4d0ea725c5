"""Yoxii rules: the vectors of tests/data/yoxii, an independent reference, notation, position
strings, and one regression test per tricky rule of rules/yoxii.md."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import games
from enginesrv.cli import main
from games import yoxii

DATA = Path(__file__).parent.parent / "data" / "yoxii"
YOXII = games.load("yoxii")
START = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
FULL_BOARD = "cBd/CcCBA/TAdaCcc/bDaaCcb/dCaADbA/BbbBB/DAa w t w:0000 b:0000"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def sorted_tokens(state: games.State) -> list[str]:
    return sorted(state.move_to_str(m) for m in state.legal_moves())


def play(pos: str, *tokens: str) -> games.State:
    state = YOXII.state_from_string(pos)
    for token in tokens:
        state.push(state.parse_move(token))
    return state


def outcome_dict(state: games.State) -> dict[str, str | int] | None:
    """The outcome as the data files write it: without ``reason``, which is checked here."""
    outcome = state.outcome()
    if outcome is None:
        return None
    out = outcome.as_dict()
    assert out.pop("reason") == "totem-blocked"
    return out


# -- an independent reference, written straight from the rule file on (file, rank) pairs --------


def _on_board(f: int, r: int) -> bool:
    return 0 <= f <= 6 and 0 <= r <= 6 and min(f, 6 - f) + min(r, 6 - r) >= 2


_DIRS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))


def _name(c: tuple[int, int]) -> str:
    return "abcdefg"[c[0]] + str(c[1] + 1)


def _grid(board: str) -> dict[tuple[int, int], str]:
    """Every square mapped to its letter, ``.`` when empty."""
    grid: dict[tuple[int, int], str] = {}
    for r, rank in zip(range(6, -1, -1), board.split("/"), strict=True):
        items: list[str] = []
        for ch in rank:
            items.extend("." * int(ch) if ch.isdigit() else ch)
        files = [f for f in range(7) if _on_board(f, r)]
        grid.update(zip(((f, r) for f in files), items, strict=True))
    return grid


def reference_moves(pos: str) -> list[str]:
    """The sorted legal tokens of ``pos`` by rules R1-R8 and E1."""
    board, side, phase, wstock, bstock = pos.split(" ")
    grid = _grid(board)
    totem = next(c for c, ch in grid.items() if ch == "T")
    own = "ABCD" if side == "w" else "abcd"
    if phase == "t":
        out = []
        for df, dr in _DIRS:
            c = (totem[0] + df, totem[1] + dr)
            first = grid.get(c, "off")
            if first == ".":
                out.append(_name(c))
            elif first in own:
                while grid.get(c, "off") in own:
                    c = (c[0] + df, c[1] + dr)
                if grid.get(c) == ".":
                    out.append(_name(c))
        return sorted(out)
    around = [(totem[0] + df, totem[1] + dr) for df, dr in _DIRS]
    targets = [c for c in around if grid.get(c) == "."] or [c for c in grid if grid[c] == "."]
    stock = (wstock if side == "w" else bstock)[2:]
    return sorted(f"{v}@{_name(c)}" for v in "1234" if stock[int(v) - 1] != "0" for c in targets)


def reference_outcome(pos: str) -> dict[str, str | int] | None:
    """E3-E6 for a terminal ``pos``; None while the game goes on."""
    if pos.split(" ")[2] != "t" or reference_moves(pos):
        return None
    grid = _grid(pos.split(" ", maxsplit=1)[0])
    totem = next(c for c, ch in grid.items() if ch == "T")
    region = [grid[c] for df, dr in _DIRS if (c := (totem[0] + df, totem[1] + dr)) in grid]
    sw = sum("ABCD".index(ch) + 1 for ch in region if ch in "ABCD")
    sb = sum("abcd".index(ch) + 1 for ch in region if ch in "abcd")
    cw = sum(ch in "ABCD" for ch in region)
    cb = sum(ch in "abcd" for ch in region)
    winner = "p1" if (sw, cw) > (sb, cb) else "p2" if (sw, cw) < (sb, cb) else "draw"
    return {
        "winner": winner, "score_p1": sw, "score_p2": sb, "count_p1": cw, "count_p2": cb,
        "margin": abs(sw - sb),
    }  # fmt: skip


def reference_play(pos: str, token: str) -> str:
    """The position string after ``token`` (legal in ``pos``), by rules R1-R8."""
    board, side, phase, wstock, bstock = pos.split(" ")
    grid = _grid(board)
    if phase == "t":
        totem = next(c for c, ch in grid.items() if ch == "T")
        grid[totem] = "."
        grid[("abcdefg".index(token[0]), int(token[1]) - 1)] = "T"
        phase = "p"
    else:
        value = int(token[0])
        grid[("abcdefg".index(token[2]), int(token[3]) - 1)] = " ABCD abcd"[
            value + 5 * (side == "b")
        ]
        stock = wstock if side == "w" else bstock
        stock = stock[: value + 1] + str(int(stock[value + 1]) - 1) + stock[value + 2 :]
        wstock, bstock = (stock, bstock) if side == "w" else (wstock, stock)
        side, phase = ("b" if side == "w" else "w"), "t"
    ranks = []
    for r in range(6, -1, -1):
        rank = "".join(grid[(f, r)] for f in range(7) if _on_board(f, r))
        for n in range(7, 0, -1):
            rank = rank.replace("." * n, str(n))
        ranks.append(rank)
    return f"{'/'.join(ranks)} {side} {phase} {wstock} {bstock}"


def test_engine_agrees_with_the_reference_over_random_games() -> None:
    rng = random.Random(4)
    positions = 0
    for _ in range(60):
        state = YOXII.new_state()
        while True:
            pos = state.to_string()
            assert sorted_tokens(state) == reference_moves(pos), pos
            assert state.count_moves() == len(reference_moves(pos)), pos
            assert outcome_dict(state) == reference_outcome(pos), pos
            positions += 1
            if state.is_terminal():
                break
            move = rng.choice(state.legal_moves())
            state.push(move)
            assert state.to_string() == reference_play(pos, state.move_to_str(move)), pos
    assert positions > 60 * 40


# -- geometry (rules §2) ------------------------------------------------------------------------

NEIGHBOUR_TABLE = """
c7 -- -- d7 d6 c6 b6 -- --
d7 -- -- e7 e6 d6 c6 c7 --
e7 -- -- -- f6 e6 d6 d7 --
b6 -- c7 c6 c5 b5 a5 -- --
c6 c7 d7 d6 d5 c5 b5 b6 --
d6 d7 e7 e6 e5 d5 c5 c6 c7
e6 e7 -- f6 f5 e5 d5 d6 d7
f6 -- -- -- g5 f5 e5 e6 e7
a5 -- b6 b5 b4 a4 -- -- --
b5 b6 c6 c5 c4 b4 a4 a5 --
c5 c6 d6 d5 d4 c4 b4 b5 b6
d5 d6 e6 e5 e4 d4 c4 c5 c6
e5 e6 f6 f5 f4 e4 d4 d5 d6
f5 f6 -- g5 g4 f4 e4 e5 e6
g5 -- -- -- -- g4 f4 f5 f6
a4 a5 b5 b4 b3 a3 -- -- --
b4 b5 c5 c4 c3 b3 a3 a4 a5
c4 c5 d5 d4 d3 c3 b3 b4 b5
d4 d5 e5 e4 e3 d3 c3 c4 c5
e4 e5 f5 f4 f3 e3 d3 d4 d5
f4 f5 g5 g4 g3 f3 e3 e4 e5
g4 g5 -- -- -- g3 f3 f4 f5
a3 a4 b4 b3 b2 -- -- -- --
b3 b4 c4 c3 c2 b2 -- a3 a4
c3 c4 d4 d3 d2 c2 b2 b3 b4
d3 d4 e4 e3 e2 d2 c2 c3 c4
e3 e4 f4 f3 f2 e2 d2 d3 d4
f3 f4 g4 g3 -- f2 e2 e3 e4
g3 g4 -- -- -- -- f2 f3 f4
b2 b3 c3 c2 c1 -- -- -- a3
c2 c3 d3 d2 d1 c1 -- b2 b3
d2 d3 e3 e2 e1 d1 c1 c2 c3
e2 e3 f3 f2 -- e1 d1 d2 d3
f2 f3 g3 -- -- -- e1 e2 e3
c1 c2 d2 d1 -- -- -- -- b2
d1 d2 e2 e1 -- -- -- c1 c2
e1 e2 f2 -- -- -- -- d1 d2
"""


def test_squares_are_the_37_of_the_octagon_in_canonical_order() -> None:
    assert yoxii.N_SQUARES == 37
    order = "c7 d7 e7 b6 c6 d6 e6 f6 a5 b5 c5 d5 e5 f5 g5 a4 b4 c4 d4 e4 f4 g4 "
    order += "a3 b3 c3 d3 e3 f3 g3 b2 c2 d2 e2 f2 c1 d1 e1"
    assert " ".join(yoxii.SQUARE_NAMES) == order
    for corner in ("a1", "b1", "a2", "f1", "g1", "g2", "a6", "a7", "b7", "g6", "f7", "g7"):
        assert corner not in yoxii.SQUARE_OF_NAME


def test_neighbours_follow_the_table_of_the_rule_file() -> None:
    rows = [line.split() for line in NEIGHBOUR_TABLE.strip().splitlines()]
    assert [row[0] for row in rows] == list(yoxii.SQUARE_NAMES)
    for name, *expected in rows:
        s = yoxii.SQUARE_OF_NAME[name]
        got = [yoxii.SQUARE_NAMES[ray[0]] if ray else "--" for ray in yoxii.RAYS[s]]
        assert got == expected, name
        assert yoxii.NEIGHBOURS_MASK[s].bit_count() == 8 - expected.count("--")


# -- the data vectors ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", read_jsonl("yoxii-moves.jsonl"), ids=lambda c: c["id"])
def test_move_lists_and_outcomes(case: dict[str, Any]) -> None:
    state = YOXII.state_from_string(case["pos"])
    assert state.to_string() == case["pos"]
    assert sorted_tokens(state) == case["moves"]
    assert state.count_moves() == len(case["moves"])
    if "outcome" in case:
        assert state.is_terminal()
        assert state.to_move() == games.NOBODY
        assert outcome_dict(state) == case["outcome"]
    else:
        assert not state.is_terminal()
        assert state.outcome() is None
    # the reference of the random-game test passes the same vectors
    assert reference_moves(case["pos"]) == case["moves"]
    assert outcome_dict(state) == reference_outcome(case["pos"])


@pytest.mark.slow
def test_perft_from_the_start_at_depth_6() -> None:
    # depths past those of the data file (it stops at depth 4)
    state = YOXII.new_state()
    assert games.perft(state, 5) == 338_176
    assert games.perft(state, 6) == 8_463_360
    assert state.to_string() == START


# -- turn structure (rules §4) ------------------------------------------------------------------


def test_a_turn_is_a_totem_move_then_a_placement_by_the_same_player() -> None:
    state = YOXII.new_state()
    assert (state.to_move(), state.phase(), state.phase_name()) == (0, "t", "Totem move")
    assert sorted_tokens(state) == ["c3", "c4", "c5", "d3", "d5", "e3", "e4", "e5"]
    state.push(state.parse_move("d5"))
    assert (state.to_move(), state.phase(), state.phase_name()) == (0, "p", "placement")
    assert state.to_string() == "3/5/3T3/7/7/5/3 w p w:5553 b:5553"
    state.push(state.parse_move("3@d4"))
    assert (state.to_move(), state.phase()) == (1, "t")
    assert state.to_string() == "3/5/3T3/3C3/7/5/3 b t w:5543 b:5553"
    assert sorted_tokens(state) == ["c4", "c5", "c6", "d6", "e4", "e5", "e6"]
    state.push(state.parse_move("c5"))
    state.push(state.parse_move("2@c6"))
    assert state.to_string() == "3/1b3/2T4/3C3/7/5/3 w t w:5543 b:5453"
    assert sorted_tokens(state) == ["b4", "b5", "b6", "c4", "d5", "d6", "e3"]
    state.push(state.parse_move("e3"))
    assert state.to_string() == "3/1b3/7/3C3/4T2/5/3 w p w:5543 b:5453"
    assert state.count_moves() == 28


def test_placement_may_use_the_square_the_totem_just_left() -> None:
    state = play(START, "e4")
    assert "1@d4" in sorted_tokens(state)
    assert len(sorted_tokens(state)) == 32


# -- one regression test per tricky rule (rules §5, §6) -----------------------------------------


def test_jump_needs_an_unbroken_run_of_own_pieces_ending_on_an_empty_square() -> None:
    # jumps over one piece, over a run of two, and diagonally
    assert sorted_tokens(play("a1a/5/2D4/3TA2/3B3/2C2/a1a w t w:4442 b:1553")) == [
        "b6", "c3", "c4", "d1", "d5", "e3", "e5", "f4",
    ]  # fmt: skip
    # own run then an opponent piece: nothing in that direction
    assert "g4" not in sorted_tokens(play("3/5/7/3TAa1/7/5/3 w t w:4553 b:4553"))
    # own run up to the edge: nothing in that direction
    assert sorted_tokens(play("3/5/7/7/6a/2T2/1A1 w t w:4553 b:4553")) == [
        "c1", "c2", "c3", "d3", "e1", "e2", "e3",
    ]  # fmt: skip
    # a jump lands on the first empty square, never further (no slide after a jump)
    tokens = sorted_tokens(play("3/5/7/3TA2/7/5/3 b t w:4553 b:5553"))
    assert "f4" not in tokens
    tokens = sorted_tokens(play("3/5/7/3TA2/7/5/a2 w t w:4553 b:4553"))
    assert "f4" in tokens
    assert "g4" not in tokens


def test_jump_length_is_limited_only_by_the_board() -> None:
    assert "g4" in sorted_tokens(play("a1a/5/6a/TBBBBB1/7/5/a1a w t w:5053 b:0553"))
    assert sorted_tokens(play("2a/a4/a6/5A1/4A2/2A2/T2 w t w:2553 b:2553")) == [
        "b2", "c2", "d1", "g5",
    ]  # fmt: skip


def test_opponent_pieces_are_never_jumped() -> None:
    state = play("a1a/5/2D4/3TA2/3B3/2C2/a2 b t w:4442 b:2553")
    assert sorted_tokens(state) == ["c3", "c4", "d5", "e3", "e5"]
    with pytest.raises(games.IllegalMoveError, match="opponent"):
        state.parse_move("f4")


def test_totem_can_be_stuck_for_one_player_but_not_the_other() -> None:
    # Black to act jumps out of a surrounded c7; White, on the same kind of board, could not.
    state = play("Tc1/bDA2/2a1a2/A5A/6A/5/3 b t w:1552 b:3443")
    assert not state.is_terminal()
    assert state.to_move() == 1
    assert sorted_tokens(state) == ["a5", "e7"]
    stuck = play("Tc1/bDA2/2a1a2/A5A/7/5/3 w t w:2552 b:3443")
    assert stuck.is_terminal()
    assert stuck.legal_moves() == []
    # Black's jump is an ordinary Totem move: the turn goes on with Black's placement
    state.push(state.parse_move("e7"))
    assert (state.is_terminal(), state.to_move(), state.phase()) == (False, 1, "p")


def test_surrounded_totem_allows_placement_on_any_empty_square() -> None:
    state = play("3/5/4abc/3TA1d/4BCD/5/3 w t w:4442 b:4442", "f4")
    assert state.to_string() == "3/5/4abc/4ATd/4BCD/5/3 w p w:4442 b:4442"
    tokens = sorted_tokens(state)
    assert len(tokens) == 4 * 28
    assert "1@d4" in tokens  # the square the Totem left is far away, but free
    assert "1@c7" in tokens
    assert state.count_moves() == 112
    state.push(state.parse_move("4@c7"))
    assert state.to_string() == "D2/5/4abc/4ATd/4BCD/5/3 b t w:4441 b:4442"


def test_exhausted_value_is_neither_offered_nor_accepted() -> None:
    state = play("a1a/5/D2T2D/7/7/5/D1a w p w:5550 b:2553")
    tokens = sorted_tokens(state)
    assert len(tokens) == 24
    assert not any(t.startswith("4@") for t in tokens)
    with pytest.raises(games.IllegalMoveError, match="no piece of value 4"):
        state.parse_move("4@c4")
    # placing the last piece of a value takes the value out of the stock
    state = play("a1a/5/D2T2D/7/7/5/A1a w p w:4551 b:2553", "4@c5")
    assert state.to_string() == "a1a/5/D1DT2D/7/7/5/A1a b t w:4550 b:2553"


def test_equal_scores_are_decided_by_the_piece_count() -> None:
    state = play("1AT/badAB/Bbb1Caa/DDbCCBd/CB1d1Bc/bDAcC/cc1 b t w:2000 b:2010")
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.winner == "p1"
    assert dict(outcome.scores) == {
        "score_p1": 4, "score_p2": 4, "count_p1": 3, "count_p2": 1, "margin": 0,
    }  # fmt: skip
    assert outcome.winner_seat == games.P1


def test_equal_scores_and_counts_are_a_draw() -> None:
    for pos in (
        "Tc1/bDA2/2a1a2/A5A/7/5/3 w t w:2552 b:3443",
        "aA1/daBdc/bDTCbd1/1cbABBB/AAA1BaC/1cacC/DDc b t w:0020 b:1200",
    ):
        outcome = play(pos).outcome()
        assert outcome is not None
        assert outcome.winner == "draw"
        assert outcome.winner_seat is None
        assert dict(outcome.scores)["margin"] == 0
        assert str(outcome).startswith("draw (totem-blocked)")


def test_full_board_ends_the_game() -> None:
    # Black's 18th piece fills the last square: White, to act, cannot move the Totem.
    state = play("cBd/CcCBA/TAdaCcc/1DaaCcb/dCaADbA/BbbBB/DAa b p w:0000 b:0100")
    assert sorted_tokens(state) == ["2@a4"]
    state.push(state.parse_move("2@a4"))
    assert state.to_string() == FULL_BOARD
    assert state.is_terminal()
    assert state.to_move() == games.NOBODY
    assert outcome_dict(state) == {
        "winner": "p1", "score_p1": 8, "score_p2": 2, "count_p1": 3, "count_p2": 1, "margin": 6,
    }  # fmt: skip
    assert state.key() == YOXII.state_from_string(FULL_BOARD).key()
    with pytest.raises(games.IllegalMoveError, match="game is over"):
        state.parse_move("b6")
    state.pop()
    assert not state.is_terminal()


def test_game_can_end_with_empty_squares_elsewhere() -> None:
    state = play("1AT/badAB/Bbb1Caa/DDbCCBd/CB1d1Bc/bDAcC/cc1 b t w:2000 b:2010")
    assert isinstance(state, yoxii.YoxiiState)
    assert state.is_terminal()
    c7 = yoxii.BIT[yoxii.SQUARE_OF_NAME["c7"]]
    assert not (state.pieces_mask(games.P1) | state.pieces_mask(games.P2)) & c7
    assert yoxii.SQUARE_NAMES[state.totem()] == "e7"


# -- notation (rules §7) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("D5", "not a move token"),
        ("d5 ", "not a move token"),
        (" d5", "not a move token"),
        ("d05", "not a move token"),
        ("d8", "not a move token"),
        ("h4", "not a move token"),
        ("", "not a move token"),
        ("a1", "not a square of the board"),
        ("g7", "not a square of the board"),
        ("3@a7", "not a square of the board"),
        ("c5@3", "value first"),
        ("5@c5", "not a piece value"),
        ("0@c5", "not a piece value"),
        ("3@C5", "not a square"),
        ("3@", "not a square"),
        ("3 @c5", "not a piece value"),
        ("3@@c5", "not a square"),
    ],
)
def test_malformed_tokens_are_invalid(token: str, reason: str) -> None:
    state = YOXII.new_state()
    with pytest.raises(games.InvalidMoveError, match=reason) as info:
        state.parse_move(token)
    assert info.value.text == token
    assert state.to_string() == START


@pytest.mark.parametrize(
    ("pos", "token", "reason"),
    [
        (START, "3@d5", "must first move the Totem"),
        (START, "d6", "cannot slide"),
        (START, "d4", "must move"),
        (START, "c6", "not on a line"),
        ("3/5/3T3/7/7/5/3 w p w:5553 b:5553", "d6", "must place a piece"),
        ("3/5/3T3/7/7/5/3 w p w:5553 b:5553", "1@d5", "Totem stands on d5"),
        ("3/5/3T3/7/7/5/3 w p w:5553 b:5553", "1@d3", "not next to the Totem on d5"),
        ("3/5/3T3/3C3/7/5/3 b t w:5543 b:5553", "d4", "occupied"),
        ("3/5/3T3/3C3/7/5/3 b t w:5543 b:5553", "d3", "opponent"),
        ("3/1b3/2T4/3C3/7/5/3 w t w:5543 b:5453", "c7", "opponent"),
        ("3/1b3/7/3C3/4T2/5/3 w p w:5543 b:5453", "1@d4", "occupied"),
        ("a1a/5/D2T2D/7/7/5/D1a w p w:5550 b:2553", "4@d4", "no piece of value 4"),
        (FULL_BOARD, "b6", "game is over"),
    ],
)
def test_well_formed_but_illegal_tokens(pos: str, token: str, reason: str) -> None:
    state = YOXII.state_from_string(pos)
    with pytest.raises(games.IllegalMoveError, match=reason) as info:
        state.parse_move(token)
    assert info.value.text == token
    assert state.to_string() == pos


def test_tokens_round_trip_and_sort_as_the_rule_file_says() -> None:
    state = play(START, "d5")
    moves = state.legal_moves()
    tokens = [state.move_to_str(m) for m in moves]
    assert [state.parse_move(t) for t in tokens] == list(moves)
    assert sorted(tokens)[:3] == ["1@c4", "1@c5", "1@c6"]


# -- position strings (rules §8) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pos", "field"),
    [
        ("3/5/7/3T3/7/5/3 w t w:5553", "syntax"),
        ("3/5/7/3T3/7/5/3  w t w:5553 b:5553", "syntax"),
        (" 3/5/7/3T3/7/5/3 w t w:5553 b:5553", "syntax"),
        ("3/5/7/3T3/7/5/3 w t w:5553 b:5553 ", "syntax"),
        ("3/5/7/3T3/7/5 w t w:5553 b:5553", "board"),  # V1: 6 ranks
        ("3/5/7/3T4/7/5/3 w t w:5553 b:5553", "board"),  # V1: a square beyond g4
        ("4/5/7/3T3/7/5/3 w t w:5553 b:5553", "board"),  # V1: a square beyond e7 (f7)
        ("3/5/7/3T2/7/5/3 w t w:5553 b:5553", "board"),  # V1: a square short
        ("3/5/7/3T21/7/5/3 w t w:5553 b:5553", "board"),  # V6: adjacent run digits
        ("3/5/7/3T03/7/5/3 w t w:5553 b:5553", "board"),  # V6: a zero
        ("3/5/7/3X3/7/5/3 w t w:5553 b:5553", "board"),
        ("3/5/7/7/7/5/3 w t w:5553 b:5553", "board"),  # V2: no Totem
        ("3/5/7/2TT3/7/5/3 w t w:5553 b:5553", "board"),  # V2: two Totems
        ("T2/5/7/3T3/7/5/3 w t w:5553 b:5553", "board"),  # V2: two Totems
        ("3/5/7/3T3/7/5/3 x t w:5553 b:5553", "side"),
        ("3/5/7/3T3/7/5/3 b t w:5553 b:5553", "side"),  # V4: Black to act, no piece yet
        ("3/5/3T3/3C3/7/5/3 w t w:5543 b:5553", "side"),  # V4: White to act, one piece more
        ("3/5/3T3/3c3/7/5/3 b t w:5553 b:5543", "side"),  # V4: Black first
        ("3/5/7/3T3/7/5/3 w x w:5553 b:5553", "phase"),
        (FULL_BOARD.replace(" w t ", " w p "), "phase"),  # V5
        ("3/5/3T3/3C3/7/5/3 b t w:5553 b:5553", "wstock"),  # V3
        ("3/5/3T3/3c3/7/5/3 w t w:5553 b:5553", "bstock"),  # V3
        ("3/5/7/3T3/7/5/3 w t w:5554 b:5553", "wstock"),  # V3: more than the initial count
        ("3/5/7/3T3/7/5/3 w t w:555 b:5553", "wstock"),
        ("3/5/7/3T3/7/5/3 w t b:5553 w:5553", "wstock"),
        ("3/5/7/3T3/7/5/3 w t w:5553 b:55530", "bstock"),
        ("3/5/7/3T3/7/5/3 w t w:5553 b:555\u0663", "bstock"),  # an Arabic-Indic digit
    ],
)
def test_invalid_positions_name_the_field(pos: str, field: str) -> None:
    with pytest.raises(games.InvalidPositionError) as info:
        YOXII.state_from_string(pos)
    assert info.value.field == field
    assert pos in str(info.value)


def test_stock_that_does_not_match_the_board_says_so() -> None:
    with pytest.raises(games.InvalidPositionError, match="1 piece of value 3") as info:
        YOXII.state_from_string("3/5/3T3/3C3/7/5/3 b t w:5553 b:5553")
    assert info.value.field == "wstock"


@pytest.mark.parametrize(
    "pos",
    [
        START,
        "3/5/3T3/7/7/5/3 w p w:5553 b:5553",
        "3/1b3/7/3C3/4T2/5/3 w p w:5543 b:5453",
        "3/5/4abc/4ATd/4BCD/5/3 w p w:4442 b:4442",
        "Tc1/bDA2/2a1a2/A5A/7/5/3 w t w:2552 b:3443",
        FULL_BOARD,
    ],
)
def test_position_strings_round_trip(pos: str) -> None:
    state = YOXII.state_from_string(pos)
    assert state.to_string() == pos
    assert str(state) == pos


def test_keys_follow_the_position_not_the_path() -> None:
    a = play(START, "d5", "1@d4", "c5", "2@c6")
    b = play(START, "c4", "1@d4", "c5", "2@c6")  # another Totem path, the same position
    assert a.to_string() == b.to_string()
    assert a.key() == b.key() == YOXII.state_from_string(a.to_string()).key()
    assert a.key() != play(START, "d5", "2@d4", "c5", "1@c6").key()  # values count
    assert a.key() != play(START, "d5", "1@d4", "c5", "2@c6", "b5").key()  # phase counts
    c = play("3/5/3T3/7/7/5/3 w p w:5553 b:5553")
    d = play(START, "d5")
    assert c.key() == d.key()
    d.pop()
    assert d.key() == YOXII.new_state().key()


def test_copy_is_independent() -> None:
    state = play(START, "d5")
    twin = state.copy()
    twin.push(twin.parse_move("1@d4"))
    assert state.to_string() == "3/5/3T3/7/7/5/3 w p w:5553 b:5553"
    assert twin.ply() == 2
    assert state.ply() == 1


# -- drawing and the command line ---------------------------------------------------------------


def test_render_draws_the_octagon_with_pieces_stocks_and_region() -> None:
    text = play(START, "d5", "3@d4", "c5", "2@c6").render()
    lines = text.splitlines()
    assert lines[0].split() == list("abcdefg")
    board = "\n".join(lines[1:16])
    assert board.count("T") == 1
    assert "W3" in board
    assert "B2" in board
    assert board.count(".") + board.count("*") == 37 - 3
    assert board.count("*") == 6  # the empty neighbours of c5
    assert [line.split()[0] for line in lines if line[:3].strip().isdigit()] == list("7654321")
    assert "White (p1)   5  5  4  3    17" in text
    assert "Black (p2)   5  4  5  3    17" in text
    assert "White 3 points (1 piece), Black 2 points (1 piece)" in text


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


def test_cli_commands_work_for_yoxii(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run_cli(capsys, "perft", "yoxii", "3") == (0, "1792\n")
    code, out = run_cli(capsys, "moves", "yoxii", "--moves", "d5", "3@d4")
    assert (code, out.split()) == (0, ["c4", "c5", "c6", "d6", "e4", "e5", "e6"])
    code, out = run_cli(capsys, "show", "yoxii", "--pos", FULL_BOARD)
    assert code == 0
    assert "+---------------+" in out
    assert "to act:   nobody (game over)" in out
    assert "phase:    t (game over: White cannot move the Totem)" in out
    assert "outcome:  p1 wins (totem-blocked) score_p1=8 score_p2=2" in out

    state = YOXII.new_state()
    rng = random.Random(11)
    tokens = []
    while not state.is_terminal():
        move = rng.choice(state.legal_moves())
        tokens.append(state.move_to_str(move))
        state.push(move)
    outcome = state.outcome()
    assert outcome is not None
    record = tmp_path / "game.txt"
    record.write_text(
        f"# Game: yoxii\n# Result: {outcome.winner}\n# Final: {state.to_string()}\n"
        + "\n".join(tokens)
        + "\n",
        encoding="utf-8",
    )
    code, out = run_cli(capsys, "replay", "yoxii", str(record))
    assert code == 0
    assert f"final {state.to_string()}" in out
    assert f"outcome {outcome}" in out

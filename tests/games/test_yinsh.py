"""Yinsh rules: the vectors of tests/data/yinsh, notation, position strings and regressions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import games
from games import yinsh

DATA = Path(__file__).parent.parent / "data" / "yinsh"
YINSH = games.load("yinsh")
BLITZ = games.load("yinsh+blitz")
T7 = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def sorted_tokens(state: games.State) -> list[str]:
    return sorted(state.move_to_str(m) for m in state.legal_moves())


# -- geometry ----------------------------------------------------------------------------------


def test_board_geometry_matches_the_rule_file() -> None:
    assert yinsh.N_POINTS == 85
    assert yinsh.POINT_NAMES[42] == "f6"
    assert yinsh.N_WINDOWS == 123
    assert max(len(ws) for ws in yinsh.WINDOWS_AT) == 15
    for corner in ("a1", "a6", "f1", "f11", "k6", "k11"):
        assert corner not in yinsh.POINT_OF_NAME
    # 33 lines, 11 per axis, with the lengths of rules §2.4
    lengths = sorted(
        len(r) + 1
        for p in range(85)
        for r in (yinsh.RAYS[p][0],)
        if yinsh.COORDS[p][1] == yinsh.ROW_RANGE[yinsh.COLUMNS[yinsh.COORDS[p][0]]][0]
    )
    assert lengths == [4, 4, 7, 7, 8, 8, 9, 9, 9, 10, 10]


def test_neighbours_follow_the_table() -> None:
    def neighbour(name: str, direction: int) -> str | None:
        ray = yinsh.RAYS[yinsh.POINT_OF_NAME[name]][direction]
        return yinsh.POINT_NAMES[ray[0]] if ray else None

    # up, down, up-right, down-left, down-right, up-left (rules §2.5)
    assert [neighbour("e1", d) for d in range(6)] == ["e2", None, "f2", None, None, "d1"]
    assert [neighbour("f6", d) for d in range(6)] == ["f7", "f5", "g7", "e5", "g6", "e6"]
    assert [neighbour("k10", d) for d in range(6)] == [None, "k9", None, "j9", None, "j10"]
    assert neighbour("d5", 4) == "e5"  # (+1, 0) is a direction; (+1, -1) is not


# -- data vectors ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", read_jsonl("yinsh-moves.jsonl"), ids=lambda c: c["id"])
def test_move_lists(case: dict[str, Any]) -> None:
    state = YINSH.state_from_string(case["pos"])
    assert state.to_string() == case["pos"]
    assert sorted_tokens(state) == case["moves"]
    assert state.count_moves() == len(case["moves"])
    outcome = state.outcome()
    if "outcome" in case:
        assert outcome is not None
        assert outcome.as_dict() == case["outcome"]
        assert state.is_terminal()
    else:
        assert outcome is None


@pytest.mark.parametrize("case", read_jsonl("yinsh-cases.jsonl"), ids=lambda c: c["id"])
def test_regression_cases(case: dict[str, Any]) -> None:
    state = games.load(case["variant"]).state_from_string(case["pos"])
    for token in case["play"]:
        state.push(state.parse_move(token))
    assert state.to_string() == case["after"]
    assert sorted_tokens(state) == case["moves"]
    outcome = state.outcome()
    assert (outcome.winner if outcome else None) == case["outcome"]
    # the incremental key equals the key of the same position parsed afresh
    fresh = state.game.state_from_string(case["after"])
    assert state.key() == fresh.key()


def _record_tokens(path: Path) -> tuple[list[str], dict[str, str]]:
    tokens, header = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            header[key] = value
        elif line and not line.startswith("#"):
            tokens.append(line)
    return tokens, header


RECORD_WINNERS = {
    "Y-DrMih-Dumbot-2026-02-20-0858": "p2",
    "Y-DrMih-Dumbot-2026-02-23-1415": "p1",
    "Y-BraveCombo-Dumbot-2026-03-20-0237": "p2",
    "Y-phiulbrich-BestBot-2026-03-21-2221": None,  # resignation: not over by the rules
    "Y-BestBot-BOkpc-2026-03-13-1856": None,
    "bga_862307561": "p2",
}


@pytest.mark.parametrize("name", sorted(RECORD_WINNERS))
def test_real_games_replay_to_their_results(name: str) -> None:
    tokens, header = _record_tokens(DATA / "records" / f"{name}.txt")
    state = YINSH.new_state()
    for token in tokens:
        state.push(state.parse_move(token))
    assert state.to_string() == header["Final position"]
    outcome = state.outcome()
    assert (outcome.winner if outcome else None) == RECORD_WINNERS[name]
    if outcome is not None:
        assert outcome.reason == "target-reached"
    while state.ply():
        state.pop()
    assert state.to_string() == YINSH.start_position


# -- rules details -----------------------------------------------------------------------------


def test_blitz_mover_wins_when_both_colours_make_a_row() -> None:
    state = BLITZ.state_from_string(T7)
    for token in ("e3-e6", "x:a4-e4", "r:j5"):
        state.push(state.parse_move(token))
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.winner == "p1"
    assert outcome.reason == "target-reached"
    assert dict(outcome.scores) == {"score_p1": 1, "score_p2": 0, "margin": 1}
    assert state.to_move() == games.NOBODY
    assert state.legal_moves() == []


def test_same_player_acts_several_plies_in_a_row() -> None:
    state = YINSH.state_from_string(T7)
    seats = []
    for token in ("e3-e6", "x:a4-e4", "r:j5", "x:a5-e5", "r:k7"):
        seats.append(state.to_move())
        state.push(state.parse_move(token))
    assert seats == [0, 0, 0, 1, 1]
    assert (state.to_move(), state.phase()) == (1, "m")


def test_two_passes_end_the_game_scored_like_pool_empty() -> None:
    pos = "w3/wb4w/WwbwwwwB/BWwbwwwbW/wbb4bbw/wbb3bb1/b1ww2wb2/2bb1ww2/2wbww2/2bwb2/bWBw w m 1-2 6"
    state = YINSH.state_from_string(pos)
    state.push(state.parse_move("pass"))
    assert state.phase() == "n"
    assert state.to_move() == 1
    state.push(state.parse_move("pass"))
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.winner, outcome.reason) == ("p2", "two-passes")


def test_pass_is_illegal_while_a_ring_can_move() -> None:
    state = YINSH.state_from_string(T7)
    with pytest.raises(games.IllegalMoveError, match="pass is legal only"):
        state.parse_move("pass")


def test_last_marker_with_a_row_keeps_the_game_going() -> None:
    pos = (
        "bbw1/Www1bw1/Bbbw2w1/1bwwb1w1w/bwWw2w1ww/wbBbbb1b1/wwbBb1b1b1/wbb3b1b/BbWwbw2/"
        "Wbww1ww/1wW1 b m 0-1 1"
    )
    state = YINSH.state_from_string(pos)
    assert isinstance(state, yinsh.YinshState)
    state.push(state.parse_move("f4-b4"))
    assert state.pool() == 0
    assert state.phase() == "x"
    state.push(state.parse_move("x:f3-f7"))
    state.push(state.parse_move("r:c1"))
    assert (state.phase(), state.pool()) == ("m", 5)


# -- notation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("F6", "is not a point"),
        ("f 6", "is not a point"),
        ("e05", "is not a point"),
        ("a1", "is not a point of the board"),
        ("x:e7-e3", "wrong order"),
        ("x:e3-e6", "not 4 steps apart"),
        ("x:e3", "x:<first end>-<last end>"),
        ("e1-e2-e3", "<from>-<to>"),
        ("", "is not a point"),
        ("PASS", "is not a point"),
    ],
)
def test_malformed_tokens_are_invalid(token: str, reason: str) -> None:
    state = YINSH.state_from_string(T7)
    with pytest.raises(games.InvalidMoveError, match=reason) as info:
        state.parse_move(token)
    assert info.value.text == token
    assert state.to_string() == T7


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("e3-e8", "cannot reach"),
        ("d5-e4", "not on a line"),
        ("e3-e3", "at least one point"),
        ("k7-k6", "is not a point"),
        ("a2-a3", "no White ring on a2"),
        ("f6", "wants a ring move"),
        ("x:a4-e4", "wants a ring move"),
        ("r:e3", "wants a ring move"),
    ],
)
def test_well_formed_but_illegal_tokens(token: str, reason: str) -> None:
    state = YINSH.state_from_string(T7)
    with pytest.raises((games.IllegalMoveError, games.InvalidMoveError), match=reason):
        state.parse_move(token)
    assert state.to_string() == T7


def test_illegal_move_error_is_a_value_error_with_the_token() -> None:
    state = YINSH.state_from_string(T7)
    with pytest.raises(ValueError, match="e3-e8"):
        state.parse_move("e3-e8")


def test_nothing_is_legal_on_a_finished_game() -> None:
    state = YINSH.state_from_string("3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB - e 1-0 45")
    with pytest.raises(games.IllegalMoveError, match="over"):
        state.parse_move("pass")


# -- position strings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pos", "field"),
    [
        ("4/7/8/9/10/9/10/9/8/7/4 w p 0-0", "syntax"),
        ("4/7/8/9/10/9/10/9/8/7/4  w p 0-0 51", "syntax"),
        (" 4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51", "syntax"),
        ("4/7/8/9/10/9/10/9/8/7 w p 0-0 51", "board"),
        ("4/7/8/9/10/9/10/9/8/6/4 w p 0-0 51", "board"),
        ("4/7/8/9/10/9/10/9/8/43/4 w p 0-0 51", "board"),
        ("4/7/8/9/10/9/10/9/8/7/04 w p 0-0 51", "board"),
        ("4/7/8/9/10/9/10/9/8/7/3x w p 0-0 51", "board"),
        ("4/7/8/9/10/9/10/9/8/7/4 x p 0-0 51", "side"),
        ("4/7/8/9/10/9/10/9/8/7/4 w q 0-0 51", "phase"),
        ("4/7/8/9/10/9/10/9/8/7/4 w p 00 51", "removed"),
        ("4/7/8/9/10/9/10/9/8/7/4 w p 0-0 051", "pool"),
        ("4/7/8/9/10/9/10/9/8/7/4 w p 0-0 50", "pool"),  # V2
        ("4/7/8/9/10/9/10/9/8/7/w3 w p 0-0 50", "phase"),  # V3 markers in placement
        ("4/7/8/9/10/9/10/9/8/7/W3 w p 0-0 51", "side"),  # V3 wrong side
        ("WWWW/7/8/9/10/9/10/9/8/7/4 w m 0-0 51", "removed"),  # V4
        ("WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 - m 1-0 51", "side"),  # V5
        ("4/7/8/9/5W4/9/10/9/8/6B/BBBB w r 3-0 51", "removed"),  # V6
        ("WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 w m 1-0 0", "pool"),  # V2 and V7
        ("WWWW/7/8/9/wwwwwW4/9/10/9/8/6B/BBBB w m 0-0 46", "board"),  # V7 row at a ring move
        ("WWWW/7/8/9/5W4/9/10/9/8/6B/BBBB w x 0-0 51", "phase"),  # V8 no row to remove
        ("2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB b X 0-0 40", "phase"),  # V8 other row
    ],
)
def test_invalid_positions_name_the_field(pos: str, field: str) -> None:
    with pytest.raises(games.InvalidPositionError) as info:
        YINSH.state_from_string(pos)
    assert info.value.field == field
    assert pos in str(info.value)


def test_blitz_rejects_a_count_at_the_target_outside_the_end() -> None:
    pos = "WWWW/7/8/9/10/9/10/9/8/6B/BBBB b m 1-0 51"
    assert YINSH.state_from_string(pos).to_string() == pos
    with pytest.raises(games.InvalidPositionError, match="target 1"):
        BLITZ.state_from_string(pos)


@pytest.mark.parametrize(
    "pos",
    [
        "4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51",
        "4/7/5B2/6B2/8BW/6B2/4B1W2W/3W4W/8/7/4 w m 0-0 51",
        "2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40",
        "3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB b X 1-0 45",
        "WWWW/7/8/9/5W4/9/10/9/8/6B/BBBB w r 0-0 51",
        "WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 b n 1-0 51",
        "3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB - e 1-0 45",
    ],
)
def test_position_strings_round_trip(pos: str) -> None:
    state = YINSH.state_from_string(pos)
    assert state.to_string() == pos
    assert str(state) == pos


def test_keys_distinguish_side_and_phase() -> None:
    a = YINSH.state_from_string("WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 w m 1-0 51")
    b = YINSH.state_from_string("WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 b n 1-0 51")
    assert a.key() != b.key()
    a.push(a.parse_move("pass"))
    assert a.key() == b.key()


def test_render_shows_every_point_and_the_counters() -> None:
    text = YINSH.state_from_string(T7).render()
    board = "\n".join(text.splitlines()[1:20])
    assert board.count("W") == 5
    assert board.count("B") == 5
    assert board.count("w") == 5
    assert board.count("b") == 5
    assert board.count(".") == 85 - 20
    assert "41 in the pool" in text
    assert text.splitlines()[0].split() == list("abcdefghijk")

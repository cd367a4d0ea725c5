"""The Yoxii environment: its action table and its planes, checked against positions decoded
here by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import envs
import games
from envs.yoxii import SQUARES, TOKENS

DATA = Path(__file__).parents[2] / "tests" / "data" / "yoxii"
SHARED = Path(__file__).parents[3] / "shared" / "data" / "yoxii"


def test_the_action_table_is_as_documented() -> None:
    adapter = envs.adapter("yoxii")
    assert adapter.size == 185 == len(TOKENS) == len(set(TOKENS))
    assert SQUARES[:8] == ("c7", "d7", "e7", "b6", "c6", "d6", "e6", "f6")
    assert SQUARES[-3:] == ("c1", "d1", "e1")
    assert adapter.index("d4") == 18  # docs/envs.md's examples
    assert adapter.index("3@c5") == 121
    assert all(adapter.index(adapter.token(i)) == i for i in range(adapter.size))


def test_every_legal_token_of_the_rules_vectors_has_its_action() -> None:
    """Each position of the rules' move vectors: the legal actions are exactly the legal
    tokens, one each."""
    adapter = envs.adapter("yoxii")
    game = games.load("yoxii")
    files = sorted(SHARED.glob("*.jsonl")) + sorted(DATA.glob("*.jsonl"))
    assert files
    seen = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if "pos" not in case:
                continue
            state = game.state_from_string(case["pos"])
            actions, moves = adapter.legal(state, ())
            tokens = sorted(state.move_to_str(move) for move in moves)
            assert sorted(adapter.token(a) for a in actions) == tokens
            seen += 1
    assert seen > 10


def cell(square: str) -> tuple[int, int]:
    return int(square[1]) - 1, "abcdefg".index(square[0])


def test_the_planes_of_a_position_from_each_side() -> None:
    """White (p1) has placed a 4 on c5 and a 1 on e3, Black (p2) a 2 on d5; the Totem is on
    d2 and Black is to place: every plane as docs/envs.md says, own pieces first."""
    position = "3/5/2Db3/7/4A2/2T2/3 b p w:4552 b:5453"
    env = envs.make("yoxii")
    env.reset(options={"position": position})
    assert env.agent_selection == "player_1"
    white = env.observe("player_0")["observation"]
    black = env.observe("player_1")["observation"]
    for planes, own, other in ((white, "WHITE", "BLACK"), (black, "BLACK", "WHITE")):
        pieces = {"WHITE": {3: "c5", 0: "e3"}, "BLACK": {1: "d5"}}
        expected = np.zeros((19, 7, 7), dtype=np.float32)
        for value, square in pieces[own].items():
            expected[value][cell(square)] = 1
        for value, square in pieces[other].items():
            expected[4 + value][cell(square)] = 1
        expected[8][cell("d2")] = 1
        for square in SQUARES:
            expected[9][cell(square)] = 1
        stock = {"WHITE": (4, 5, 5, 2), "BLACK": (5, 4, 5, 3)}
        for value, count in enumerate(stock[own]):
            expected[11 + value] = count / (5, 5, 5, 3)[value]
        for value, count in enumerate(stock[other]):
            expected[15 + value] = count / (5, 5, 5, 3)[value]
        assert np.array_equal(planes, expected), own
    assert int(white[9].sum()) == 37
    placed = env.adapter.token(min(env.legal_actions()))
    value, square = int(placed[0]), placed[2:]
    env.step(min(env.legal_actions()))  # Black places: the Totem is White's to move next
    assert env.observe("player_0")["observation"][10].all()
    assert env.observe("player_0")["observation"][4 + value - 1][cell(square)] == 1
    assert env.observe("player_1")["observation"][value - 1][cell(square)] == 1

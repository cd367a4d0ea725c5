"""The Yohoho environment: the action table against the rules' notation (rules/yohoho.md §2,
§7), every legal token of the rules' vectors and of random games, and the observation planes
against positions decoded here independently (§8)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import envs
import games
from envs import yohoho as env_yohoho
from envs.core import AGENTS
from games import yohoho as rules

DATA = Path(__file__).parent.parent / "data" / "yohoho"
GAME = games.load("yohoho")

# the rules' data (§2): a cell is a letter (x = 0..16) and a row (y = 1..9) with x + y odd;
# the §2 table lists them row 1 first, left to right
CELLS = [f"{'abcdefghijklmnopq'[x]}{y}" for y in range(1, 10) for x in range(17) if (x + y) % 2]
XY = {c: ("abcdefghijklmnopq".index(c[0]), int(c[1])) for c in CELLS}
NAME_OF = {xy: c for c, xy in XY.items()}
DIRS = {"E": (2, 0), "NE": (1, 1), "NW": (-1, 1), "W": (-2, 0), "SW": (-1, -1), "SE": (1, -1)}

START = "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1"
PHASE2 = "1ccgrgcc1/8/9/3a4/9/4A3/9/8/1CCGRGCC1 b 2:h6 0"
GOAL = "3A4r/8/9/8/6a2/8/9/8/R7C b 1 0"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def sorted_tokens(state: games.State) -> list[str]:
    return sorted(state.move_to_str(m) for m in state.legal_moves())


def data_positions() -> list[tuple[str, list[str]]]:
    """(position, its legal tokens) of every position of the rules' files."""
    out = [(case["pos"], case["moves"]) for case in read_jsonl("yohoho-moves.jsonl")]
    for line in (DATA / "yohoho.perft").read_text(encoding="utf-8").splitlines():
        if line.startswith("pos "):
            out.append((line[4:], sorted_tokens(GAME.state_from_string(line[4:]))))
    return out


def cell(name: str) -> tuple[int, int]:
    """``[row - 1, letter]`` of a cell in a plane."""
    x, y = XY[name]
    return y - 1, x


def plane_of(cells: list[str]) -> npt.NDArray[np.float32]:
    out = np.zeros((9, 17), dtype=np.float32)
    for c in cells:
        out[cell(c)] = 1.0
    return out


def decode(position: str) -> dict[str, list[str]]:
    """The cells of each piece letter of a position string, walked cell by cell (§8)."""
    pieces: dict[str, list[str]] = {letter: [] for letter in "AGCRagcr"}
    for y, row in zip(range(9, 0, -1), position.split(maxsplit=1)[0].split("/"), strict=True):
        x = 1 - y % 2  # odd rows start at a, even rows at b
        for item in re.findall(r"[1-9]|[AGCRagcr]", row):
            if item.isdigit():
                x += 2 * int(item)
            else:
                pieces[item].append(NAME_OF[(x, y)])
                x += 2
        assert x in (17, 18)
    return pieces


def expected_planes(position: str, seat: int, terminal: bool) -> npt.NDArray[np.float32]:
    """The planes of docs/envs.md ("Yohoho"), built from the position string here."""
    _, side, phase, first = position.split()
    pieces = decode(position)
    letters = "AGCRagcr" if seat == 0 else "agcrAGCR"
    planes = np.zeros((14, 9, 17), dtype=np.float32)
    for plane, letter in enumerate(letters):
        planes[plane] = plane_of(pieces[letter])
    planes[8] = plane_of(CELLS)
    planes[9] = plane_of([c for c in CELLS if XY[c][1] == (9 if seat == 0 else 1)])
    planes[10] = side == "wb"[seat] and not terminal
    planes[11] = phase != "1"
    if phase != "1":
        planes[12] = plane_of([phase[2:]])
    planes[13] = first == "1"
    return planes


def observation(position: str, agent: str) -> npt.NDArray[np.float32]:
    env = envs.make("yohoho")
    env.reset(options={"position": position})
    planes = env.observe(agent)["observation"]
    assert isinstance(planes, np.ndarray)
    return planes


def nonzero(plane: npt.NDArray[np.float32]) -> list[tuple[int, int]]:
    return sorted((int(r), int(c)) for r, c in zip(*np.nonzero(plane), strict=True))


# -- the action table --------------------------------------------------------------------------


def line_pairs() -> set[tuple[str, str]]:
    """Every (from, to) a Rock could sail: any distance, six directions (rule 3)."""
    pairs = set()
    for c in CELLS:
        x, y = XY[c]
        for dx, dy in DIRS.values():
            k = 1
            while (x + k * dx, y + k * dy) in NAME_OF:
                pairs.add((c, NAME_OF[(x + k * dx, y + k * dy)]))
                k += 1
    return pairs


def test_the_action_table_has_its_documented_blocks() -> None:
    adapter = envs.adapter("yohoho")
    assert adapter.size == 1653 == 1576 + 77
    tokens = [adapter.token(i) for i in range(adapter.size)]
    assert len(set(tokens)) == adapter.size
    assert all(adapter.index(token) == i for i, token in enumerate(tokens))
    assert tuple(CELLS) == env_yohoho.CELLS  # the order of the rules' §2 table
    assert env_yohoho.CELLS.index("i3") == 21
    assert env_yohoho.CELLS.index("q9") == 76
    walked = line_pairs()
    pairs = [(f, t) for f in CELLS for t in CELLS if (f, t) in walked]
    assert len(pairs) == len(walked) == 1576
    assert tokens[:1576] == [f"{f}-{t}" for f, t in pairs]  # by origin, then destination
    assert tokens[1576:] == ["x:" + c for c in CELLS]
    assert env_yohoho.CAPTURE == 1576


def test_the_documented_examples() -> None:
    adapter = envs.adapter("yohoho")
    examples = {"a1-c1": 0, "e1-b4": 46, "i3-j4": 431, "x:a1": 1576, "x:h6": 1622, "x:q9": 1652}
    for token, action in examples.items():
        assert adapter.index(token) == action
        assert adapter.token(action) == token
    # the formula of the sub-move block: MOVE_START[f] + rank of t among f's line-mates
    for token, (start, rank) in {"e1-b4": (34, 12), "i3-j4": (418, 13)}.items():
        f, t = token.split("-")
        assert env_yohoho.MOVE_START[CELLS.index(f)] == start
        assert [CELLS[j] for j in env_yohoho.LINE_MATES[CELLS.index(f)]].index(t) == rank


def test_every_action_is_a_canonical_token() -> None:
    state = GAME.new_state()
    adapter = envs.adapter("yohoho")
    for token in map(adapter.token, range(adapter.size)):
        assert state.move_to_str(rules.parse_token(token)) == token


def check_legal(adapter: envs.Adapter, state: games.State, tokens: list[str]) -> None:
    """Every legal token has its action, and ``legal`` gives exactly them."""
    actions, moves = adapter.legal(state, ())
    assert sorted(adapter.token(a) for a in actions) == sorted(tokens)
    assert [adapter.token(a) for a in actions] == [state.move_to_str(m) for m in moves]
    assert sorted(adapter.index(t) for t in tokens) == sorted(actions)


def test_every_legal_token_of_the_rules_vectors_has_its_action() -> None:
    adapter = envs.adapter("yohoho")
    positions = data_positions()
    assert len(positions) == 354 + 3
    kinds: set[bool] = set()
    for position, tokens in positions:
        state = GAME.state_from_string(position)
        assert sorted_tokens(state) == sorted(tokens)
        check_legal(adapter, state, tokens)
        kinds.update(token[:2] == "x:" for token in tokens)
    assert kinds == {True, False}


def test_every_legal_token_of_random_games_has_its_action() -> None:
    rng = random.Random(11)
    adapter = envs.adapter("yohoho")
    captures = 0
    for _ in range(3):
        state = GAME.new_state()
        while not state.is_terminal() and state.ply() < 200:
            tokens = sorted_tokens(state)
            check_legal(adapter, state, tokens)
            captures += sum(token.startswith("x:") for token in tokens)
            state.push(rng.choice(state.legal_moves()))
    assert captures > 0


# -- the observation planes --------------------------------------------------------------------


def test_the_planes_of_the_start() -> None:
    """The start (rules §3, decoded by hand there), White to act on its first turn."""
    white = [["i3"], ["g1", "k1"], ["c1", "e1", "m1", "o1"], ["i1"]]
    black = [["i7"], ["g9", "k9"], ["c9", "e9", "m9", "o9"], ["i9"]]
    for agent, own, other, goal in (
        ("player_0", white, black, 9),
        ("player_1", black, white, 1),
    ):
        planes = observation(START, agent)
        assert planes.shape == (14, 9, 17)
        assert planes.dtype == np.float32
        for plane, cells in enumerate(own + other):
            assert nonzero(planes[plane]) == sorted(cell(c) for c in cells)
        assert planes[8].sum() == 77
        assert nonzero(planes[8]) == [
            (y, x) for y in range(9) for x in range(17) if (x + y) % 2 == 0
        ]
        goal_row = "acegikmoq" if goal % 2 else "bdfhjlnp"
        assert nonzero(planes[9]) == sorted(cell(f"{c}{goal}") for c in goal_row)
        assert (planes[10] == (1.0 if agent == "player_0" else 0.0)).all()
        assert not planes[11].any()
        assert not planes[12].any()
        assert (planes[13] == 1).all()


def test_the_planes_of_a_second_sub_move() -> None:
    """Black has played ``i7-h6`` first and moves another piece now."""
    black = observation(PHASE2, "player_1")
    white = observation(PHASE2, "player_0")
    assert nonzero(black[0]) == [cell("h6")] == nonzero(white[4])
    assert nonzero(black[4]) == [cell("j4")] == nonzero(white[0])
    assert (black[10] == 1).all()
    assert not white[10].any()
    for planes in (black, white):
        assert (planes[11] == 1).all()
        assert nonzero(planes[12]) == [(5, 7)]  # h6: row 6, letter h
        assert not planes[13].any()
    for plane in range(4):  # own and opponent swap
        assert (black[plane] == white[plane + 4]).all()
        assert (black[plane + 4] == white[plane]).all()


def test_nobody_acts_in_a_finished_game() -> None:
    """White's Admiral has reached g9: the position names Black, but the game is over."""
    for agent in AGENTS:
        planes = observation(GOAL, agent)
        assert not planes[10:].any()
    assert nonzero(observation(GOAL, "player_0")[0]) == [cell("g9")]


def test_the_planes_of_every_position_met() -> None:
    """The rules' positions and random plies, from each side, against ``expected_planes``."""
    adapter = envs.adapter("yohoho")
    positions = [position for position, _ in data_positions()]
    rng = random.Random(2)
    state = GAME.new_state()
    while not state.is_terminal() and state.ply() < 300:
        positions.append(state.to_string())
        state.push(rng.choice(state.legal_moves()))
    for position in positions:
        state = GAME.state_from_string(position)
        for seat in (0, 1):
            planes = adapter.observe(state.view(seat), seat, ())
            expected = expected_planes(position, seat, state.is_terminal())
            assert np.array_equal(planes, expected), position
    assert any(p.split()[2] != "1" for p in positions)
    assert any(GAME.state_from_string(p).is_terminal() for p in positions)


def test_max_plies_by_default() -> None:
    env = envs.make("yohoho")
    assert env.max_plies == env_yohoho.MAX_PLIES == 1000
    assert GAME.max_plies is None  # the rules do not bound a game
    assert envs.make("yohoho", max_plies=50).max_plies == 50

"""The Yinsh environments (``yinsh``, ``yinsh+blitz``): the action table against the rules'
notation (rules/yinsh.md §2, §7), every legal token of the rules' vectors and of random games,
and the observation planes against positions decoded here independently (§8)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import envs
import games
from envs import yinsh as env_yinsh
from envs.core import AGENTS
from games import yinsh as rules

DATA = Path(__file__).parent.parent / "data" / "yinsh"
NAMES = ("yinsh", "yinsh+blitz")

# the rules' data (§2.1), and the point order of §2.6, built here from them
ROW_RANGE = {"a": (2, 5), "b": (1, 7), "c": (1, 8), "d": (1, 9), "e": (1, 10), "f": (2, 10),
             "g": (2, 11), "h": (3, 11), "i": (4, 11), "j": (5, 11), "k": (7, 10)}  # fmt: skip
POINTS = [f"{c}{r}" for c, (low, high) in ROW_RANGE.items() for r in range(low, high + 1)]
XY = {p: ("abcdefghijk".index(p[0]), int(p[1:])) for p in POINTS}
DIRECTIONS = ((0, 1), (0, -1), (1, 1), (-1, -1), (1, 0), (-1, 0))
AXES = ((0, 1), (1, 0), (1, 1))
NAME_OF = {xy: p for p, xy in XY.items()}

T7 = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"
T7B = "3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB b X 1-0 45"
T13B = "w3/wb4w/WwbwwwwB/BWwbwwwbW/wbb4bbw/wbb3bb1/b1ww2wb2/2bb1ww2/2wbww2/2bwb2/bWBw - e 1-2 6"
T10A = "3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB - e 1-0 45"


def read_jsonl(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def data_positions() -> list[tuple[str, str, list[str]]]:
    """(variant, position, its legal tokens) of every position of the rules' files."""
    out = [("yinsh", case["pos"], case["moves"]) for case in read_jsonl("yinsh-moves.jsonl")]
    for case in read_jsonl("yinsh-cases.jsonl"):
        out.append((case["variant"], case["after"], case["moves"]))
        state = games.load(case["variant"]).state_from_string(case["pos"])
        out.append((case["variant"], case["pos"], sorted_tokens(state)))
    for line in (DATA / "yinsh.perft").read_text(encoding="utf-8").splitlines():
        if line.startswith("pos "):
            position = line[4:]
            out.append(("yinsh", position, sorted_tokens(rules_state("yinsh", position))))
    return out


def rules_state(variant: str, position: str) -> games.State:
    return games.load(variant).state_from_string(position)


def sorted_tokens(state: games.State) -> list[str]:
    return sorted(state.move_to_str(m) for m in state.legal_moves())


def cell(point: str) -> tuple[int, int]:
    """``[row - 1, column]`` of a point in a plane."""
    q, r = XY[point]
    return r - 1, q


def plane_of(points: list[str]) -> npt.NDArray[np.float32]:
    out = np.zeros((11, 11), dtype=np.float32)
    for p in points:
        out[cell(p)] = 1.0
    return out


def decode(position: str) -> dict[str, list[str]]:
    """The points of each piece letter (W, B, w, b) of a position string, walked point by
    point (rules §8.1)."""
    board = position.split(maxsplit=1)[0]
    pieces: dict[str, list[str]] = {"W": [], "B": [], "w": [], "b": []}
    for letter, column in zip("abcdefghijk", board.split("/"), strict=True):
        row = ROW_RANGE[letter][0]
        for item in re.findall(r"10|[1-9]|[WBwb]", column):
            if item.isdigit():
                row += int(item)
            else:
                pieces[item].append(f"{letter}{row}")
                row += 1
        assert row == ROW_RANGE[letter][1] + 1
    return pieces


def expected_planes(position: str, seat: int, target: int) -> npt.NDArray[np.float32]:
    """The planes of docs/envs.md ("Yinsh"), built from the position string here."""
    _, side, phase, removed, pool = position.split()
    pieces = decode(position)
    letters = "WwBb" if seat == 0 else "BbWw"  # its rings, markers; the opponent's
    planes = np.zeros((15, 11, 11), dtype=np.float32)
    for plane, letter in enumerate(letters):
        planes[plane] = plane_of(pieces[letter])
    planes[4] = plane_of(POINTS)
    planes[5] = 1.0 if side == "wb"[seat] else 0.0
    planes[6] = phase == "p"
    planes[7] = phase in "mn"
    planes[8] = phase in "xX"
    planes[9] = phase in "rR"
    planes[10] = phase in "XR"
    planes[11] = phase == "n"
    counts = [int(n) for n in removed.split("-")]
    planes[12] = np.float32(counts[seat] / target)
    planes[13] = np.float32(counts[1 - seat] / target)
    planes[14] = np.float32(int(pool) / 51)
    return planes


def observation(name: str, position: str, agent: str) -> npt.NDArray[np.float32]:
    env = envs.make(name)
    env.reset(options={"position": position})
    planes = env.observe(agent)["observation"]
    assert isinstance(planes, np.ndarray)
    return planes


# -- the action table --------------------------------------------------------------------------


def line_pairs() -> list[tuple[str, str]]:
    """Every ordered pair of distinct points on a common line, walking the six directions."""
    pairs = []
    for p in POINTS:
        q, r = XY[p]
        for dq, dr in DIRECTIONS:
            k = 1
            while (q + k * dq, r + k * dr) in NAME_OF:
                pairs.append((p, NAME_OF[(q + k * dq, r + k * dr)]))
                k += 1
    return pairs


def windows() -> list[str]:
    """The 123 windows (rules §2.4): 5 consecutive points of a line, first end first."""
    out = []
    for dq, dr in AXES:
        for p in POINTS:
            q, r = XY[p]
            if all((q + k * dq, r + k * dr) in NAME_OF for k in range(1, 5)):
                out.append(f"{p}-{NAME_OF[(q + 4 * dq, r + 4 * dr)]}")
    return out


@pytest.mark.parametrize("name", NAMES)
def test_the_action_table_has_its_documented_blocks(name: str) -> None:
    adapter = envs.adapter(name)
    assert isinstance(adapter, env_yinsh.YinshAdapter)
    assert adapter.size == 2142 == 85 + 1848 + 1 + 123 + 85
    tokens = [adapter.token(i) for i in range(adapter.size)]
    assert len(set(tokens)) == adapter.size
    assert all(adapter.index(token) == i for i, token in enumerate(tokens))
    assert tuple(POINTS) == env_yinsh.POINTS  # the rules' §2.6 order
    assert tokens[0:85] == POINTS
    walked = set(line_pairs())
    pairs = [(o, t) for o in POINTS for t in POINTS if (o, t) in walked]
    assert len(pairs) == len(line_pairs()) == 1848
    assert tokens[85:1933] == [f"{o}-{t}" for o, t in pairs]  # by origin, then destination
    assert tokens[1933] == "pass"
    assert tokens[1934:2057] == ["x:" + w for w in windows()]
    assert tokens[2057:2142] == ["r:" + p for p in POINTS]
    assert (env_yinsh.MOVE, env_yinsh.PASS, env_yinsh.ROW, env_yinsh.RING) == (85, 1933, 1934, 2057)
    assert sorted(windows()) == sorted(rules.WINDOW_NAMES)


def test_the_documented_examples() -> None:
    adapter = envs.adapter("yinsh")
    examples = {"f6": 42, "a2-b3": 89, "e1-e8": 682, "pass": 1933, "x:e3-e7": 1948,
                "x:a4-e8": 2018, "r:a2": 2057, "r:f6": 2099}  # fmt: skip
    for token, action in examples.items():
        assert adapter.index(token) == action
        assert adapter.token(action) == token
    # the formula of the ring-move block: 85 + MOVE_START[o] + rank of t among o's line-mates
    assert env_yinsh.MOVE_START[POINTS.index("e1")] == 588
    mates = [POINTS[j] for j in env_yinsh.LINE_MATES[POINTS.index("e1")]]
    assert mates.index("e8") == 9
    assert env_yinsh.MOVE_START[0] == 0
    assert [POINTS[j] for j in env_yinsh.LINE_MATES[0]].index("b3") == 4
    with pytest.raises(ValueError, match="'e8-e1x' is no action of this game"):
        adapter.index("e8-e1x")


def test_every_action_is_a_canonical_token() -> None:
    """The engine reads each token as canonical and prints it back unchanged."""
    state = rules_state("yinsh", games.load("yinsh").start_position)
    adapter = envs.adapter("yinsh")
    for token in map(adapter.token, range(adapter.size)):
        assert state.move_to_str(rules.parse_token(token)) == token


def check_legal(adapter: envs.Adapter, state: games.State, tokens: list[str]) -> None:
    """Every legal token has its action, and ``legal`` gives exactly them."""
    actions, moves = adapter.legal(state, ())
    assert sorted(adapter.token(a) for a in actions) == sorted(tokens)
    assert [adapter.token(a) for a in actions] == [state.move_to_str(m) for m in moves]
    assert sorted(adapter.index(t) for t in tokens) == sorted(actions)


def test_every_legal_token_of_the_rules_vectors_has_its_action() -> None:
    positions = data_positions()
    assert len(positions) > 60
    phases = set()
    for variant, position, tokens in positions:
        state = rules_state(variant, position)
        assert sorted_tokens(state) == sorted(tokens)
        check_legal(envs.adapter(variant), state, tokens)
        phases.add(position.split()[2])
    assert phases == set("pmnxrXRe")


@pytest.mark.parametrize("name", NAMES)
def test_every_legal_token_of_random_games_has_its_action(name: str) -> None:
    rng = random.Random(name)
    adapter = envs.adapter(name)
    plies = 0
    while plies < 400:
        state = games.load(name).new_state()
        while not state.is_terminal():
            check_legal(adapter, state, sorted_tokens(state))
            state.push(rng.choice(state.legal_moves()))
            plies += 1
        assert state.ply() <= games.load(name).max_plies  # type: ignore[operator]


# -- the observation planes --------------------------------------------------------------------


def test_the_planes_of_a_known_position() -> None:
    """T7 (rules §8.3, decoded by hand there): White to move."""
    white_rings = ["e3", "j5", "j6", "j7", "j8"]
    black_rings = ["j11", "k7", "k8", "k9", "k10"]
    white_markers = ["a4", "b4", "c4", "d4", "e5"]
    black_markers = ["a5", "b5", "c5", "d5", "e4"]
    for agent, (own, other) in zip(
        AGENTS,
        (
            ((white_rings, white_markers), (black_rings, black_markers)),
            ((black_rings, black_markers), (white_rings, white_markers)),
        ),
        strict=True,
    ):
        planes = observation("yinsh", T7, agent)
        assert planes.shape == (15, 11, 11)
        assert planes.dtype == np.float32
        for plane, points in enumerate((*own, *other)):
            assert sorted(zip(*np.nonzero(planes[plane]), strict=True)) == sorted(
                cell(p) for p in points
            )
            assert planes[plane].sum() == 5
        assert planes[4].sum() == 85
        for corner in ("a1", "a6", "f1", "f11", "k6", "k11"):
            q, r = "abcdefghijk".index(corner[0]), int(corner[1:])
            assert planes[4, r - 1, q] == 0
        assert planes[4, 5, 5] == 1  # f6, the centre
        assert (planes[5] == (1.0 if agent == "player_0" else 0.0)).all()
        assert (planes[7] == 1).all()
        for plane in (6, 8, 9, 10, 11, 12, 13):
            assert not planes[plane].any()
        assert (planes[14] == np.float32(41 / 51)).all()


def test_the_planes_of_removals_forced_by_the_opponent() -> None:
    """T7b: Black removes the row White's move made for him; White has removed one ring."""
    black = observation("yinsh", T7B, "player_1")
    white = observation("yinsh", T7B, "player_0")
    assert (black[5] == 1).all()
    assert not white[5].any()
    assert [p for p in range(5, 12) if black[p].any()] == [5, 8, 10]
    assert [p for p in range(5, 12) if white[p].any()] == [8, 10]
    for planes in (black, white):
        assert (planes[8] == 1).all()
        assert (planes[10] == 1).all()
        assert (planes[14] == np.float32(45 / 51)).all()
    assert (white[12] == np.float32(1 / 3)).all()
    assert not white[13].any()
    assert (black[13] == np.float32(1 / 3)).all()
    assert not black[12].any()
    # own and opponent swap: Black's rings are White's opponent's rings
    assert (black[0] == white[2]).all()
    assert (black[1] == white[3]).all()
    assert (black[2] == white[0]).all()
    assert (black[3] == white[1]).all()


@pytest.mark.parametrize(
    ("position", "planes"),
    [
        ("4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51", [6]),
        ("WWWW/1BBBBB1/8/9/10/9/10/9/8/7/4 b n 1-0 51", [7, 11]),
        ("2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40", [8]),
        ("WWWW/7/8/9/5W4/9/10/9/8/6B/BBBB w r 0-0 51", [9]),
        ("4/7/8/9/2w1W5/9/10/9/8/WWWW2B/BBBB b R 0-0 50", [9, 10]),
        (T7B, [8, 10]),
        (T13B, []),
    ],
)
def test_the_phase_planes(position: str, planes: list[int]) -> None:
    for agent in AGENTS:
        observed = observation("yinsh", position, agent)
        assert [p for p in range(6, 12) if observed[p].any()] == planes
        assert all((observed[p] == 1).all() for p in planes)


@pytest.mark.parametrize("name", NAMES)
def test_the_planes_of_every_position_met(name: str) -> None:
    """The rules' positions and random games, from each side, against ``expected_planes``."""
    adapter = envs.adapter(name)
    target = 1 if name == "yinsh+blitz" else 3
    positions = [pos for variant, pos, _ in data_positions() if variant == name]
    rng = random.Random(name)
    for _ in range(4):
        state = games.load(name).new_state()
        while not state.is_terminal():
            positions.append(state.to_string())
            state.push(rng.choice(state.legal_moves()))
        positions.append(state.to_string())
    assert len(positions) > 150
    for position in positions:
        state = rules_state(name, position)
        for seat in (0, 1):
            planes = adapter.observe(state.view(seat), seat, ())
            assert planes.dtype == np.float32
            assert np.array_equal(planes, expected_planes(position, seat, target)), position
            assert planes.min() >= 0
            assert planes.max() <= 1


def test_blitz_planes_count_removed_rings_against_its_target_of_one() -> None:
    """T10a: in blitz White's one ring wins; in the standard game one ring is a third."""
    white = observation("yinsh+blitz", T10A, "player_0")
    black = observation("yinsh+blitz", T10A, "player_1")
    assert (white[12] == 1).all()
    assert not white[13].any()
    assert (black[13] == 1).all()
    assert not black[12].any()
    assert not white[5:12].any()
    assert not black[5:12].any()  # over: nobody acts, no phase
    standard = observation("yinsh", T7B, "player_0")
    assert (standard[12] == np.float32(1 / 3)).all()
    blitz, standard_adapter = envs.adapter("yinsh+blitz"), envs.adapter("yinsh")
    assert isinstance(blitz, env_yinsh.BlitzAdapter)
    assert isinstance(standard_adapter, env_yinsh.YinshAdapter)
    assert (blitz.target, standard_adapter.target) == (1, 3)


@pytest.mark.parametrize("name", NAMES)
def test_a_game_ends_by_itself(name: str) -> None:
    """No ``max_plies``: the marker pool bounds a game (173 plies at most, rules §5)."""
    env = envs.make(name)
    assert env.max_plies is None
    assert games.load(name).max_plies == 10 + 71 + 72 + 20
    rng = random.Random(5)
    for _ in range(3):
        env.reset()
        for _agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            assert not truncated
            env.step(None if terminated else rng.choice(env.legal_actions()))
        assert env.state.is_terminal()
        assert env.plies <= 173

"""The compiled core of Yoxii (bots/_core_yoxii.c: native/core/yoxii.h under the shared search)
against the Python reference: keys, rules and evaluation at every ply of seeded games, the
endgame solver's node cap to the node, perft, playouts, and the refusal of what it does not
know. Skipped when the module is not built."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import games
from bots.eval.yohoho import YohohoEvaluator
from bots.eval.yoxii import SOLVE_EMPTIES, SOLVED, Weights, YoxiiEvaluator
from enginesrv.search.bench import BENCH, SEARCH_BENCH
from games import Move, State
from games.native import native_module
from games.yoxii import NEIGHBOURS_MASK, YoxiiState
from tests.bots.inspect_rows import Row, reference_row
from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
CORE: Any = native_module("bots._core_yoxii")
pytestmark = pytest.mark.skipif(
    CORE is None, reason="bots._core_yoxii is not built or is turned off"
)

YOXII = games.load("yoxii")
START = YOXII.start_position
BENCH_POSITIONS = sorted(
    {case.position for case in BENCH["yoxii"] + SEARCH_BENCH["yoxii"]} | {START}
)
TUNED = Weights(
    ring1=90,
    ring2=7,
    ring3=-3,
    count1=0,
    mobility=40,
    stock=(1, 2, 3, 50),
    tempo_totem=-70,
    tempo_place=130,
)
"""Other weights, every one changed, so that the core must read them from the evaluator."""


def evaluators() -> list[YoxiiEvaluator]:
    """The default evaluator and one with other weights and a small node cap (past which the
    solver gives up more often)."""
    return [YoxiiEvaluator(), YoxiiEvaluator(TUNED, solve_nodes=200)]


def checked_row(state: State, evaluator: YoxiiEvaluator) -> Row:
    """The reference's row, its evaluation also checked against the Python one (the default
    evaluator's runs on the native accelerator)."""
    row = reference_row(state, evaluator)
    if not state.is_terminal():
        assert evaluator.evaluate_python(state) == row[7]
    return row


def reference_rows(state: State, evaluator: YoxiiEvaluator, moves: list[Move]) -> list[Row]:
    rows = [checked_row(state, evaluator)]
    for move in moves:
        state.push(move)
        rows.append(checked_row(state, evaluator))
    for _ in moves:
        state.pop()
    return rows


def random_game(state: State, rng: random.Random, *, long: bool = False) -> list[Move]:
    """The moves of a seeded random game from ``state`` to its end (``state`` is left as it
    was). ``long``: a move that ends the game at once is avoided while another exists, so that
    more games reach the few empty squares of the endgame solver."""
    moves: list[Move] = []
    while not state.is_terminal():
        legal = list(state.legal_moves())
        move = legal[rng.randrange(len(legal))]
        if long:
            rng.shuffle(legal)
            for candidate in legal:
                state.push(candidate)
                ends = state.is_terminal()
                state.pop()
                if not ends:
                    move = candidate
                    break
        state.push(move)
        moves.append(move)
    for _ in moves:
        state.pop()
    return moves


def features(state: State, row: Row) -> set[str]:
    """The phases and rules a position exercises, as the reference sees it."""
    assert isinstance(state, YoxiiState)
    found: set[str] = set()
    if state.is_terminal():
        found.add(("White wins", "Black wins", "draw")[row[3]])
        return found
    side = state.to_move()
    legal = state.legal_moves()
    near = NEIGHBOURS_MASK[state.totem()]
    if state.phase() == "t":
        found.add("phase t")
        if any(not near >> m & 1 for m in legal):
            found.add("jump")
    else:
        found.add("phase p")
        if any(not near >> (m & 63) & 1 for m in legal):
            found.add("placement anywhere")
        stock = state.stock(side)
        if 0 in stock and any(stock):
            found.add("a value used up")
    empties = 36 - (state.pieces_mask(0) | state.pieces_mask(1)).bit_count()
    value = row[7]
    if abs(value) >= SOLVED and empties > SOLVE_EMPTIES + 1:
        found.add("closure")
    elif empties <= SOLVE_EMPTIES:
        found.add("endgame")
    return found


def check_games(starts: list[str], count: int, seed: int, *, long: bool = False) -> set[str]:
    """``inspect`` equal to the reference at every ply of ``count`` seeded games from each
    position, with both evaluators; the features met."""
    rng = random.Random(seed)
    met: set[str] = set()
    for position in starts:
        for _ in range(count):
            state = YOXII.state_from_string(position)
            moves = random_game(state, rng, long=long)
            for evaluator in evaluators():
                got = CORE.inspect(state, evaluator, moves)
                want = reference_rows(state, evaluator, moves)
                assert len(got) == len(want) == len(moves) + 1
                for ply, (a, b) in enumerate(zip(got, want, strict=True)):
                    assert a == b, (position, moves, ply)
            for ply, move in enumerate([*moves, None]):
                met |= features(state, want[ply])
                if move is not None:
                    state.push(move)
    return met


def test_inspect_is_the_reference_at_every_ply_of_random_games_from_the_start() -> None:
    met = check_games([START], 300, 1) | check_games([START], 150, 2, long=True)
    expected = {"phase t", "phase p", "jump", "placement anywhere", "a value used up",
                "White wins", "Black wins", "draw", "closure", "endgame"}  # fmt: skip
    assert met == expected


def test_inspect_is_the_reference_from_the_bench_positions() -> None:
    met = check_games(BENCH_POSITIONS, 100, 3)
    assert {"phase t", "phase p", "jump", "White wins", "Black wins", "closure"} <= met


def data_cases() -> list[dict[str, Any]]:
    path = DATA / "yoxii" / "yoxii-moves.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_inspect_is_the_reference_on_the_rules_vectors() -> None:
    for case in data_cases():
        state = YOXII.state_from_string(case["pos"])
        for evaluator in evaluators():
            assert CORE.inspect(state, evaluator, []) == reference_rows(state, evaluator, [])


def endgames(seed: int, count: int) -> Iterator[YoxiiState]:
    """Positions of long random games with few enough empty squares for the solver."""
    rng = random.Random(seed)
    for _ in range(count):
        state = YOXII.new_state()
        assert isinstance(state, YoxiiState)
        for move in random_game(state, rng, long=True):
            state.push(move)
            empties = 36 - (state.pieces_mask(0) | state.pieces_mask(1)).bit_count()
            if not state.is_terminal() and empties <= SOLVE_EMPTIES + 1:
                yield state


def solver_nodes(state: YoxiiState, cap: int) -> int | None:
    """The nodes the reference's solver takes on ``state`` (None: it is not reached, or it
    needs more than ``cap``)."""
    evaluator = YoxiiEvaluator(solve_nodes=cap)
    evaluator._solver.nodes = -1
    evaluator.evaluate_python(state)
    nodes = evaluator._solver.nodes
    return nodes if 0 <= nodes <= cap else None


def test_the_solver_gives_up_at_the_reference_node_exactly() -> None:
    """With a cap of exactly the nodes the solver needs, the core solves; one fewer, it falls
    back on the heuristic: the same nodes are counted in the same order."""
    boundaries = 0
    for state in endgames(4, 200):
        nodes = solver_nodes(state, 20_000)
        if nodes is None:
            continue
        values = []
        for cap in (nodes - 1, nodes):
            evaluator = YoxiiEvaluator(solve_nodes=cap)
            value = CORE.inspect(state, evaluator, [])[0][7]
            assert value == evaluator.evaluate(state), (state.to_string(), cap)
            values.append(value)
        boundaries += values[0] != values[1]
    assert boundaries >= 50


# -- perft and playouts -------------------------------------------------------------------------


def perft_vectors() -> list[tuple[str, int, int]]:
    """(position, depth, nodes) of tests/data/yoxii/yoxii.perft."""
    out: list[tuple[str, int, int]] = []
    position = ""
    for line in (DATA / "yoxii" / "yoxii.perft").read_text("utf-8").splitlines():
        key, _, value = line.partition(" ")
        if key == "pos":
            position = value
        elif key == "perft":
            depth, nodes = value.split()
            out.append((position, int(depth), int(nodes)))
    return out


def test_perft_is_the_reference_on_the_bench_positions_and_the_rules_vectors() -> None:
    for position in BENCH_POSITIONS:
        state = YOXII.state_from_string(position)
        for depth in range(5):
            assert CORE.perft(state, depth) == games.perft(state, depth), (position, depth)
    for position, depth, nodes in perft_vectors():
        assert CORE.perft(YOXII.state_from_string(position), depth) == nodes, (position, depth)


def test_playouts_play_every_game_to_its_end_and_restore_the_position() -> None:
    for position in BENCH_POSITIONS:
        state = YOXII.state_from_string(position)
        key = state.key()
        finished, plies = CORE.playouts(state, 300, 7)
        assert finished == 300  # a Yoxii game always ends (within 72 plies)
        assert 300 <= plies <= 300 * 72
        assert CORE.playouts(state, 300, 7) == (finished, plies)  # seeded
        assert state.key() == key
        assert CORE.inspect(state, YoxiiEvaluator(), [])[0][0] == key


# -- refusals -----------------------------------------------------------------------------------


def one_line_error(call: Callable[[], object], kind: type[Exception], name: str) -> None:
    with pytest.raises(kind) as caught:
        call()
    message = str(caught.value)
    assert name in message, message
    assert "\n" not in message


def damaged(change: Callable[[YoxiiState], None]) -> YoxiiState:
    state = YOXII.state_from_string("3/1b3/2T4/3C3/7/5/3 w t w:5543 b:5453")
    assert isinstance(state, YoxiiState)
    change(state)
    return state


DAMAGE: list[tuple[str, Callable[[YoxiiState], None], type[Exception]]] = [
    ("_key", lambda s: setattr(s, "_key", s._key ^ 1), ValueError),
    ("_white", lambda s: setattr(s, "_white", s._white | s._black), ValueError),
    ("_white", lambda s: setattr(s, "_white", 1 << 40), ValueError),
    ("_white", lambda s: setattr(s, "_white", -1), ValueError),
    ("_black", lambda s: setattr(s, "_black", "x"), TypeError),
    ("_totem", lambda s: setattr(s, "_totem", 37), ValueError),
    ("_totem", lambda s: setattr(s, "_totem", 18), ValueError),  # d4 holds White's 3
    ("_values", lambda s: setattr(s, "_values", s._values | 1), ValueError),
    ("_values", lambda s: setattr(s, "_values", 1 << 80), ValueError),
    ("_over", lambda s: setattr(s, "_over", True), ValueError),
    ("_side", lambda s: setattr(s, "_side", 2), ValueError),
    ("_phase", lambda s: setattr(s, "_phase", -1), ValueError),
    ("_stock", lambda s: setattr(s, "_stock", 1 << 30), ValueError),
]


@pytest.mark.parametrize(("name", "change", "kind"), DAMAGE)
def test_a_damaged_state_is_refused_with_an_error_naming_the_field(
    name: str, change: Callable[[YoxiiState], None], kind: type[Exception]
) -> None:
    state = damaged(change)
    one_line_error(lambda: CORE.inspect(state, YoxiiEvaluator(), []), kind, name)
    one_line_error(lambda: CORE.perft(state, 2), kind, name)


def test_a_state_or_an_evaluator_of_another_game_is_refused() -> None:
    yinsh = games.load("yinsh").new_state()
    one_line_error(lambda: CORE.perft(yinsh, 1), TypeError, "YoxiiState")
    one_line_error(lambda: CORE.inspect(yinsh, YoxiiEvaluator(), []), TypeError, "YoxiiState")
    state = YOXII.new_state()
    one_line_error(lambda: CORE.inspect(state, YohohoEvaluator(), []), TypeError, "YoxiiEvaluator")
    huge = YoxiiEvaluator()
    huge.weights = Weights(mobility=10**20)  # the native evaluation refuses it when made
    one_line_error(lambda: CORE.inspect(state, huge, []), ValueError, "mobility")
    stock = YoxiiEvaluator()
    stock.weights = stock.weights._replace(stock=(1, 2, 3))  # type: ignore[arg-type]  # damaged
    one_line_error(lambda: CORE.inspect(state, stock, []), ValueError, "stock")


INIT_DAMAGE = """
import importlib, sys
import games.yoxii as g, bots.eval.yoxii as e
def attempt(module, name, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        importlib.import_module("bots._core_yoxii")
        print("imported")
    except Exception as exc:
        print(type(exc).__name__, str(exc).replace(chr(10), " "))
    setattr(module, name, old)
attempt(g, "Z_TOTEM", g.Z_TOTEM[:-1])
attempt(g, "Z_PIECE", ((g.Z_PIECE[0][0][:5] + (1 << 64,) + g.Z_PIECE[0][0][6:],) * 4,) * 2)
attempt(g, "NEIGHBOURS_MASK", (0,) + g.NEIGHBOURS_MASK[1:])
attempt(g, "RAYS", g.RAYS[:3] + (g.RAYS[4],) + g.RAYS[4:])
attempt(e, "_RING2", e._RING3)
attempt(e, "SOLVED", -1)
attempt(g, "Z_TURN", None)
attempt(g, "NEIGHBOURS_MASK", (1.5,) * 37)
attempt(g, "Z_TURN", g.Z_TURN)
"""


def test_damaged_tables_of_the_reference_fail_the_import_with_an_error_naming_them() -> None:
    """The tables are read and checked when the module loads: damage leaves it unloaded (the
    Python code then runs on the reference), and a later, sound import succeeds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's build
    out = subprocess.run(
        [sys.executable, "-c", INIT_DAMAGE],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    ).stdout.splitlines()
    names = ["Z_TOTEM", "Z_PIECE", "NEIGHBOURS_MASK", "RAYS", "_RING2", "SOLVED", "Z_TURN",
             "NEIGHBOURS_MASK"]  # fmt: skip
    assert len(out) == len(names) + 1, out
    for line, name in zip(out, names, strict=False):
        assert line.startswith("ValueError"), line
        assert name in line, line
    assert out[-1] == "imported"

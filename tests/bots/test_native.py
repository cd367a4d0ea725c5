"""The native evaluations agree with their Python references, position by position; they
refuse damaged init tables and bad ints.

Each accelerator is one module per process: every test that re-inits one restores it with the
reference's tables (the ``restored`` fixture). The helpers for damaging tables are those of
tests/games/test_native.py.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import games
from bots.engine import Limits
from bots.eval import yinsh as yinsh_eval
from bots.eval import yohoho as yohoho_eval
from bots.eval import yoxii as yoxii_eval
from bots.simple import GreedyBot
from games import State
from games import yinsh as yinsh_rules
from games import yoxii as yoxii_rules
from tests.bots.test_core_yoxii import TUNED
from tests.bots.test_eval_yohoho import (
    ADMIRAL_AT_THE_GOAL,
    CAPTURE_LOSES_THE_RACE,
    CAPTURE_OPENS_THE_EDGE,
    mirror_position,
)
from tests.games.test_native import (
    BAD_BOARDS,
    RAYS_DAMAGE,
    Damage,
    Reentrant,
    becomes,
    init_args,
    longer,
    refused,
    restore,
    shorter,
)

YOHOHO = games.load("yohoho")
PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))


YOXII = games.load("yoxii")


def test_the_native_evaluations_are_built_and_used() -> None:
    if PURE:
        assert yohoho_eval._native is None
        assert yoxii_eval._native is None
        assert yinsh_eval._native is None
        return
    assert yinsh_eval._native is not None, "bots/eval/_yinsh_native.c was not built"
    assert yinsh_eval._counts is yinsh_eval._counts_native
    assert yohoho_eval._native is not None, "bots/eval/_yohoho_native.c was not built"
    assert yoxii_eval._native is not None, "bots/eval/_yoxii_native.c was not built"
    assert yoxii_eval.YoxiiEvaluator()._native is yoxii_eval._native


def test_the_pure_python_switch_turns_them_off() -> None:
    modules = (
        "bots.eval.yohoho",
        "bots.eval.yoxii",
        "bots.eval.yinsh",
        "bots.eval.yinyang",
        "games.yinsh",
        "games.yohoho",
    )
    code = (
        "import importlib; from bots.compiled import core_for; "
        f"print(all(importlib.import_module(m)._native is None for m in {modules!r}) and "
        "all(core_for(g) is None for g in ('yinsh', 'yinsh+blitz', 'yohoho', 'yoxii')))"
    )
    env = {**os.environ, "ENGINESRV_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    ).stdout
    assert out.strip() == "True"


YOXII_TUNED = TUNED
"""Every Yoxii weight changed (the compiled core's tests use the same)."""
YOHOHO_TUNED = yohoho_eval.Weights(
    chebec=73,
    galleon=190,
    row_step=41,
    prog=(0, 310, 190, 120, 50, 33, 17, 4, 1, -3, -2, 0, 2),
    race=(0, -7, 130, 70, 49, 22, 11, 3, 1, 0, 2, 5, 1, -1),
    step_safe=(-101, -47, -13, 1, 6, 9),
    robust=(-61, -23, 1, 2, 3, 4),
    rock_cone=37,
    pressure=7,
    attacked=(301, 249, 141, 91, -71, -61),
    trap_soon=2999,
    win_now=4999,
    own_hang_p1=(-33, 81),
    enemy_hang_p1=-51,
    own_hang_p2=(27, -91),
    enemy_hang_p2=17,
    tempo_p1=11,
    tempo_p2=-21,
    race_horizon=6,
    race_won=3001,
    race_turn=149,
)
"""Every Yohoho weight changed (the tables of the default lengths, which the C one reads)."""


def test_an_evaluator_of_other_weights_has_its_own_native_copy_of_them() -> None:
    assert yoxii_eval.YoxiiEvaluator()._native_weights is None  # init's: the defaults
    assert yohoho_eval.YohohoEvaluator()._native_weights is None
    others: list[Any] = [
        yoxii_eval.YoxiiEvaluator(YOXII_TUNED),
        yoxii_eval.YoxiiEvaluator(solve_nodes=100),
        yohoho_eval.YohohoEvaluator(YOHOHO_TUNED),
    ]
    for evaluator in others:
        assert (evaluator._native_weights is None) == PURE


def games_of(seed: int, count: int, *, greedy: bool) -> Iterator[State]:
    """Every position of ``count`` games: random ones, or greedy ones with some random moves
    (greedy bots race their Admirals, which is where the race terms are at work)."""
    rng = random.Random(seed)
    bots = (GreedyBot(), GreedyBot())
    for number in range(count):
        for side, bot in enumerate(bots):
            bot.set_option("Seed", str(seed * 1000 + number * 2 + side))
            bot.new_game(YOHOHO)
        state = YOHOHO.new_state()
        while not state.is_terminal() and state.ply() < 240:
            yield state
            if greedy and rng.random() < 0.7:
                move = bots[state.to_move()].search(state, Limits(depth=1)).move
                assert move is not None
            else:
                moves = state.legal_moves()
                move = moves[rng.randrange(len(moves))]
            state.push(move)


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize("greedy", [False, True])
def test_the_native_yohoho_evaluation_is_the_python_one(greedy: bool) -> None:
    evaluator = yohoho_eval.YohohoEvaluator()
    checked = decided = 0
    for state in games_of(11 + greedy, 70, greedy=greedy):
        native = evaluator.evaluate(state)
        assert native == evaluator.evaluate_python(state), state.to_string()
        checked += 1
        weights = yohoho_eval.DEFAULT_WEIGHTS
        decided += abs(native) >= weights.race_won - 150 * weights.race_horizon
    assert checked > 2000
    if greedy:
        assert decided > 20  # the race verdicts were exercised, not only the plain terms


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
def test_the_native_evaluation_on_the_hand_made_positions_and_their_mirrors() -> None:
    evaluator = yohoho_eval.YohohoEvaluator()
    positions = [
        ADMIRAL_AT_THE_GOAL + " w 1 0",
        ADMIRAL_AT_THE_GOAL + " b 1 0",
        ADMIRAL_AT_THE_GOAL + " w 2:p8 0",
        CAPTURE_LOSES_THE_RACE,
        CAPTURE_OPENS_THE_EDGE,
        YOHOHO.start_position,
    ]
    for text in positions:
        variants = {text} if text.endswith(" 1") else {text, mirror_position(text)}
        for variant in variants:
            state = YOHOHO.state_from_string(variant)
            assert evaluator.evaluate(state) == evaluator.evaluate_python(state), variant


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
def test_the_native_module_refuses_bad_input_with_an_error() -> None:
    native = yohoho_eval._native
    assert native is not None
    with pytest.raises(ValueError, match="eight"):
        native.evaluate((1, 2, 3), 0, -1)
    with pytest.raises(TypeError):
        native.evaluate(("a",) * 8, 0, -1)  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(ValueError, match="Admirals"):
        native.evaluate((0,) * 8, 0, -1)
    with pytest.raises(ValueError, match="off the board"):
        native.evaluate((1 << 100,) + (1,) * 7, 0, -1)


def yoxii_games(seed: int, count: int) -> Iterator[State]:
    """Every position of ``count`` random Yoxii games (played to the end: the closures and the
    endgame solver are exercised in the last plies)."""
    rng = random.Random(seed)
    for _ in range(count):
        state = YOXII.new_state()
        while not state.is_terminal():
            yield state
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yoxii_evaluation_is_the_python_one() -> None:
    evaluator = yoxii_eval.YoxiiEvaluator()
    reference = yoxii_eval.YoxiiEvaluator()
    checked = proven = 0
    for state in yoxii_games(21, 150):
        value = evaluator.evaluate(state)
        assert value == reference.evaluate_python(state), state.to_string()
        checked += 1
        proven += abs(value) >= yoxii_eval.SOLVED
    assert checked > 5000
    assert proven > 300  # the closures and the solver were exercised, not only the heuristic


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yoxii_totem_destinations_are_the_rules_ones() -> None:
    from games.yoxii import YoxiiState, totem_destinations

    native = yoxii_eval._native
    assert native is not None
    for state in yoxii_games(22, 40):
        assert isinstance(state, YoxiiState)
        pieces = (state.pieces_mask(0), state.pieces_mask(1))
        t = state.totem()
        for side in (0, 1):
            own, opp = pieces[side], pieces[1 - side]
            assert native.destinations(t, own, opp) == totem_destinations(t, own, opp)


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yoxii_module_refuses_bad_input_with_an_error() -> None:
    native = yoxii_eval._native
    assert native is not None
    with pytest.raises(ValueError, match="out of range"):
        native.evaluate(0, 0, 0, 99, 0, 0, 0)
    with pytest.raises(ValueError, match="off the board"):
        native.evaluate(1 << 40, 0, 0, 3, 0, 0, 0)
    with pytest.raises(TypeError):
        native.evaluate(0, 0, "x", 3, 0, 0, 0)  # type: ignore[arg-type]  # the wrong type on purpose


def yinsh_counts_agree(name: str, count: int) -> tuple[int, int]:
    """Compare the native board counts with the reference's in every position of ``count``
    random games; the number of positions, and of ring threats counted."""
    from games.yinsh import YinshState

    game = games.load(name)
    rng = random.Random(name)
    checked = threats = 0
    for _ in range(count):
        state = game.new_state()
        while not state.is_terminal():
            assert isinstance(state, YinshState)
            counts = yinsh_eval._counts_native(state)
            assert counts == yinsh_eval._counts_python(state), state.to_string()
            checked += 1
            threats += counts[-1] + counts[-2]
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return checked, threats


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_the_native_yinsh_counts_are_the_python_ones(name: str) -> None:
    checked, threats = yinsh_counts_agree(name, 80)
    assert checked > 4000
    assert threats > 0  # four markers and a ring in a window: the rarest count was exercised


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
def test_the_native_yinsh_counts_refuse_bad_input_with_an_error() -> None:
    native = yinsh_eval._native
    assert native is not None
    with pytest.raises(ValueError, match="off the board"):
        native.counts(1 << 100, 0, 0, 0)
    with pytest.raises(TypeError):
        native.counts(0, 0, 0, "x")  # type: ignore[arg-type]


# -- damaged init tables -----------------------------------------------------------------------


@pytest.fixture
def restored() -> Iterator[None]:
    yield
    restore(yinsh_eval, yohoho_eval, yoxii_eval)


def _windows_damage() -> list[Damage]:
    t = "windows"
    return [
        Damage(t, (1,), shorter, "122 windows"),
        Damage(t, (1,), longer, "124 windows"),
        Damage(t, (1, 7), shorter, "a window of four"),
        Damage(t, (1, 7), longer, "a window of six"),
        Damage(t, (1, 7), becomes(3), "an int for a window"),
        Damage(t, (1, 7, 2), becomes(85), "a point off the board"),
        Damage(t, (1, 7, 2), becomes(-1), "a negative point"),
        Damage(t, (1, 7, 2), becomes("x"), "a string"),
        Damage(t, (1, 7, 2), becomes(yinsh_rules.WINDOW_POINTS[7][1]), "a point twice"),
    ]


def _yohoho_damage() -> list[Damage]:
    out = []
    for arg, table in enumerate(("NBR", "SHIP_NBR", "RADIUS2", "CONE_UP", "CONE_DOWN")):
        out += [
            Damage(table, (arg,), shorter, "76 cells"),
            Damage(table, (arg,), longer, "78 cells"),
            Damage(table, (arg, 5), becomes(1 << 77), "a cell off the board"),
            Damage(table, (arg, 5), becomes(-1), "a negative board"),
            Damage(table, (arg, 5), becomes("x"), "a string"),
        ]
    for arg, table, good, bad in (
        (5, "ROW_OF", 1, (10, 0, -1)),
        (7, "SHIFTS", 1, (77, -77, 1 << 64)),
    ):
        out += [
            Damage(table, (arg,), shorter, "an entry missing"),
            Damage(table, (arg,), longer, "an entry too many"),
            Damage(table, (arg, 0), becomes("x"), "a string"),
            Damage(table, (arg, 0), becomes(float(good)), "a float"),
        ]
        out += [Damage(table, (arg, 0), becomes(v), f"{v} out of range") for v in bad]
    for arg, table in ((6, "SOURCE"), (8, "GOAL_MASK")):
        out += [
            Damage(table, (arg,), shorter, "an entry missing"),
            Damage(table, (arg, 1), becomes(1 << 77), "a cell off the board"),
            Damage(table, (arg, 1), becomes(-1), "a negative board"),
            Damage(table, (arg, 1), becomes("x"), "a string"),
        ]
    far, horizon = len(yohoho_eval._native_weights()) - 1, len(yohoho_eval._native_weights()) - 5
    return [
        *out,
        Damage("SHIP_NBR", (1, 5), becomes(0b111111), "six neighbours a ship can go to"),
        Damage("FULL_MASK", (9,), becomes(1 << 77), "a cell off the board"),
        Damage("FULL_MASK", (9,), becomes(-1), "negative"),
        Damage("FULL_MASK", (9,), becomes("x"), "a string"),
        Damage("FULL_MASK", (9,), becomes((1,)), "a tuple"),
        Damage("weights", (10,), shorter, "a weight missing"),
        Damage("weights", (10,), longer, "a weight too many"),
        Damage("weights", (10, 0), becomes(1 << 40), "a weight out of range"),
        Damage("weights", (10, 0), becomes(-(1 << 40)), "a weight negative out of range"),
        Damage("weights", (10, 0), becomes("x"), "a string"),
        Damage("weights", (10, far), becomes(13), "_FAR beyond PROG"),
        Damage("weights", (10, far), becomes(0), "_FAR zero"),
        Damage("weights", (10, horizon), becomes(31), "RACE_HORIZON beyond the layers"),
        Damage("weights", (10, horizon), becomes(-1), "RACE_HORIZON negative"),
    ]


def _yoxii_damage() -> list[Damage]:
    rays, neighbours = yoxii_rules.RAYS, yoxii_rules.NEIGHBOURS_MASK
    s, d = next((s, d) for s in range(37) for d in range(8) if len(rays[s][d]) >= 2)
    far = next(q for q in range(37) if q != s and not neighbours[s] >> q & 1)
    out = []
    for arg, table in enumerate(("NEIGHBOURS_MASK", "RING2", "RING3")):
        out += [
            Damage(table, (arg,), shorter, "36 squares"),
            Damage(table, (arg, 5), becomes(1 << 37), "a square off the board"),
            Damage(table, (arg, 5), becomes(-1), "a negative board"),
            Damage(table, (arg, 5), becomes("x"), "a string"),
        ]
    return [
        *out,
        Damage("RAYS", (3,), shorter, "36 squares"),
        Damage("RAYS", (3, s), shorter, "seven directions"),
        Damage("RAYS", (3, s), becomes(4), "an int for a square's rays"),
        Damage("RAYS", (3, s, d), becomes(tuple(range(1, 11))), "a ray of ten"),
        Damage("RAYS", (3, s, d, 1), becomes(37), "a square off the board"),
        Damage("RAYS", (3, s, d, 1), becomes(-1), "a negative square"),
        Damage("RAYS", (3, s, d, 1), becomes("x"), "a string"),
        Damage("RAYS", (3, s, d, 0), becomes(far), "a ray starting away from the square"),
        Damage("FULL_MASK", (4,), becomes(1 << 37), "a square off the board"),
        Damage("FULL_MASK", (4,), becomes(-1), "negative"),
        Damage("FULL_MASK", (4,), becomes("x"), "a string"),
        Damage("weights", (5,), shorter, "a weight missing"),
        Damage("weights", (5,), longer, "a weight too many"),
        Damage("weights", (5, 0), becomes(1 << 31), "a weight out of range"),
        Damage("weights", (5, 0), becomes("x"), "a string"),
        Damage("weights", (5, 7), becomes(-1), "SOLVED negative"),
        Damage("weights", (5, 9), becomes(38), "SOLVE_EMPTIES beyond the board"),
        Damage("weights", (5, 10), becomes(-1), "SOLVE_NODES negative"),
        Damage("stock values", (6,), shorter, "4095 stocks"),
        Damage("stock values", (6,), longer, "4097 stocks"),
        Damage("stock values", (6, 9), becomes(1 << 31), "a value out of range"),
        Damage("stock values", (6, 9), becomes(-(1 << 31)), "a value negative out of range"),
        Damage("stock values", (6, 9), becomes("x"), "a string"),
    ]


def probe_counts(native: Any) -> object:
    return native.counts(0, 0, 0, 0)


def probe_yohoho(native: Any) -> object:
    state: Any = YOHOHO.new_state()
    return native.evaluate(state.packed_pieces(), 0, -1)


def probe_yoxii(native: Any) -> object:
    return native.evaluate(0, 0, 0, 3, 0, 0, 0)


COUNTS_DAMAGE = [*RAYS_DAMAGE, *_windows_damage()]
YOHOHO_DAMAGE = _yohoho_damage()
YOXII_DAMAGE = _yoxii_damage()
SPECS = [
    # the Python module that loads the accelerator, its damages, a call of its own
    pytest.param(yinsh_eval, COUNTS_DAMAGE, probe_counts, id="yinsh"),
    pytest.param(yohoho_eval, YOHOHO_DAMAGE, probe_yohoho, id="yohoho"),
    pytest.param(yoxii_eval, YOXII_DAMAGE, probe_yoxii, id="yoxii"),
]


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
@pytest.mark.parametrize("damage", COUNTS_DAMAGE, ids=str)
def test_the_yinsh_counts_refuse_a_damaged_table(damage: Damage, restored: None) -> None:
    refused(yinsh_eval, damage, probe_counts)


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize("damage", YOHOHO_DAMAGE, ids=str)
def test_the_yohoho_evaluation_refuses_a_damaged_table(damage: Damage, restored: None) -> None:
    refused(yohoho_eval, damage, probe_yohoho)


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize("damage", YOXII_DAMAGE, ids=str)
def test_the_yoxii_evaluation_refuses_a_damaged_table(damage: Damage, restored: None) -> None:
    refused(yoxii_eval, damage, probe_yoxii)


def _yohoho_evaluations_agree(count: int) -> int:
    evaluator = yohoho_eval.YohohoEvaluator()
    checked = 0
    for state in games_of(13, count, greedy=True):
        assert evaluator.evaluate(state) == evaluator.evaluate_python(state), state.to_string()
        checked += 1
    return checked


def _yoxii_evaluations_agree(count: int) -> int:
    from games.yoxii import YoxiiState, totem_destinations

    native = yoxii_eval._native
    assert native is not None
    evaluator = yoxii_eval.YoxiiEvaluator()
    checked = 0
    for state in yoxii_games(23, count):
        assert evaluator.evaluate(state) == evaluator.evaluate_python(state), state.to_string()
        assert isinstance(state, YoxiiState)
        own, opp, t = state.pieces_mask(0), state.pieces_mask(1), state.totem()
        assert native.destinations(t, own, opp) == totem_destinations(t, own, opp)
        checked += 1
    return checked


@pytest.mark.parametrize(
    ("owner", "damages", "probe", "agree"),
    [
        pytest.param(
            yinsh_eval,
            COUNTS_DAMAGE,
            probe_counts,
            lambda: yinsh_counts_agree("yinsh", 3)[0],
            id="yinsh",
        ),
        pytest.param(
            yohoho_eval,
            YOHOHO_DAMAGE,
            probe_yohoho,
            lambda: _yohoho_evaluations_agree(5),
            id="yohoho",
        ),
        pytest.param(
            yoxii_eval, YOXII_DAMAGE, probe_yoxii, lambda: _yoxii_evaluations_agree(4), id="yoxii"
        ),
    ],
)
def test_after_a_failed_init_an_evaluation_refuses_then_a_good_one_restores_it(
    owner: ModuleType,
    damages: list[Damage],
    probe: Callable[[Any], object],
    agree: Callable[[], int],
    restored: None,
) -> None:
    if owner._native is None:
        pytest.skip("not built")
    # the damage is in the last table read: the others were already written over
    last = max(damage.path[0] for damage in damages)
    refused(owner, next(d for d in damages if d.path[0] == last), probe)
    owner._load_native()
    probe(owner._native)
    assert agree() > 100


@pytest.mark.parametrize(("owner", "damages", "probe"), SPECS)
def test_a_call_while_init_reads_the_tables_is_refused(
    owner: ModuleType, damages: list[Damage], probe: Callable[[Any], object], restored: None
) -> None:
    if owner._native is None:
        pytest.skip("not built")
    args = init_args(owner)
    table = Reentrant(args[0], owner._native, probe)
    owner._native.init(table, *args[1:])
    assert table.refused  # unready from the start of init, not only after a failure
    probe(owner._native)  # and ready at its end


# -- reading ints ------------------------------------------------------------------------------


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
@pytest.mark.parametrize(("value", "error"), [*BAD_BOARDS, (1 << 85, ValueError)])
@pytest.mark.parametrize("position", range(4))
def test_the_yinsh_counts_refuse_a_bad_board(position: int, value: object, error: type) -> None:
    native: Any = yinsh_eval._native  # wrong types on purpose
    boards: list[object] = [0, 0, 0, 0]
    boards[position] = value
    with pytest.raises(error):
        native.counts(*boards)


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize(("value", "error"), [*BAD_BOARDS, (1 << 77, ValueError)])
@pytest.mark.parametrize("position", [0, 3])
def test_the_yohoho_evaluation_refuses_a_bad_board(
    position: int, value: object, error: type
) -> None:
    native: Any = yohoho_eval._native  # wrong types on purpose
    state: Any = YOHOHO.new_state()
    pieces = list(state.packed_pieces())
    pieces[position] = value
    with pytest.raises(error):
        native.evaluate(tuple(pieces), 0, -1)


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize(("value", "error"), [*BAD_BOARDS, (1 << 74, ValueError)])
def test_the_yoxii_evaluation_refuses_bad_square_values(value: object, error: type) -> None:
    native: Any = yoxii_eval._native  # wrong types on purpose
    with pytest.raises(error):
        native.evaluate(0, 0, value, 3, 0, 0, 0)


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1, 0, 0, 3, 0, 0, 0), OverflowError),
        ((0, 1 << 64, 0, 3, 0, 0, 0), OverflowError),
        ((1 << 37, 0, 0, 3, 0, 0, 0), ValueError),
        ((0, 0, 0, 3, 0, 2, 0), ValueError),  # a side
        ((0, 0, 0, 3, -1, 0, 0), ValueError),  # a stock
        ((0, 0, 0, 3, 0, 0, 2), ValueError),  # a phase
        ((0, 0, 0, 3, 0, 0, "0"), TypeError),
    ],
)
def test_the_yoxii_evaluation_refuses_a_bad_field(args: tuple[object, ...], error: type) -> None:
    native: Any = yoxii_eval._native  # wrong types on purpose
    with pytest.raises(error):
        native.evaluate(*args)


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((3, -1, 0), OverflowError),
        ((3, 0, 1 << 64), OverflowError),
        ((3, 1 << 37, 0), ValueError),
        ((37, 0, 0), ValueError),
        ((-1, 0, 0), ValueError),
        (("3", 0, 0), TypeError),
    ],
)
def test_the_yoxii_destinations_refuse_bad_input(args: tuple[object, ...], error: type) -> None:
    native: Any = yoxii_eval._native  # wrong types on purpose
    with pytest.raises(error):
        native.destinations(*args)


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
def test_a_lone_ring_anywhere_sees_its_neighbours() -> None:
    """Every point, the high half of the board (bits 64 to 84) included: its bits are read
    whole. A lone White ring's mobility is its number of neighbours."""
    native = yinsh_eval._native
    assert native is not None
    for p, rays in enumerate(yinsh_rules.RAYS):
        counts = native.counts(0, 0, 1 << p, 0)
        assert counts[0] == sum(1 for ray in rays if ray)
        assert native.counts(0, 0, 0, 1 << p)[1] == counts[0]


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yohoho_evaluation_divides_negative_weights_as_python_does() -> None:
    """Python's ``//`` rounds down, C's ``/`` towards zero: with negative hanging-ship weights
    (a tuning run may try them) the two differed by one wherever a product was not a multiple
    of 100."""
    negative = yohoho_eval.DEFAULT_WEIGHTS._replace(
        own_hang_p1=(-37, -51),
        enemy_hang_p1=-43,
        own_hang_p2=(-29, -61),
        enemy_hang_p2=-47,
        attacked=tuple(-v - 1 for v in yohoho_eval.DEFAULT_WEIGHTS.attacked),
    )
    evaluator = yohoho_eval.YohohoEvaluator(negative)
    hanging = 0
    for state in games_of(5, 40, greedy=True):
        value = evaluator.evaluate(state)
        assert value == evaluator.evaluate_python(state), state.to_string()
        hanging += value % 100 != 0
    assert hanging > 100


# -- other weights, by turns with the defaults --------------------------------------------------


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yohoho_evaluation_of_other_weights_is_the_python_one() -> None:
    """Evaluators of the default and of other weights by turns, position by position: each
    evaluation reads its own evaluator's weights, never those of the one before."""
    evaluators = (yohoho_eval.YohohoEvaluator(), yohoho_eval.YohohoEvaluator(YOHOHO_TUNED))
    checked = differ = 0
    for state in games_of(14, 30, greedy=True):
        values = [evaluator.evaluate(state) for evaluator in evaluators]
        assert values == [e.evaluate_python(state) for e in evaluators], state.to_string()
        checked += 1
        differ += values[0] != values[1]
    assert checked > 800
    assert differ > checked * 9 // 10


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
def test_the_native_yoxii_evaluation_of_other_weights_is_the_python_one() -> None:
    """The same for Yoxii, with a smaller node cap for the endgame solver too."""
    evaluators = (yoxii_eval.YoxiiEvaluator(), yoxii_eval.YoxiiEvaluator(YOXII_TUNED, 100))
    references = (yoxii_eval.YoxiiEvaluator(), yoxii_eval.YoxiiEvaluator(YOXII_TUNED, 100))
    checked = differ = 0
    for state in yoxii_games(24, 40):
        values = [evaluator.evaluate(state) for evaluator in evaluators]
        assert values == [r.evaluate_python(state) for r in references], state.to_string()
        checked += 1
        differ += values[0] != values[1]
    assert checked > 1000
    assert differ > checked // 2


def _weights_damage(damages: list[Damage], tables: tuple[str, ...]) -> list[Any]:
    return [pytest.param(d, id=str(d)) for d in damages if d.table in tables]


@pytest.mark.skipif(yohoho_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize("damage", _weights_damage(YOHOHO_DAMAGE, ("weights",)))
def test_the_yohoho_weights_are_checked_as_init_checks_them(damage: Damage) -> None:
    native: Any = yohoho_eval._native
    with pytest.raises(ValueError, match=r"^weights[\[:]"):
        native.weights(damage.applied(init_args(yohoho_eval))[10])
    probe_yohoho(native)  # the module is as ready as it was


@pytest.mark.skipif(yoxii_eval._native is None, reason="the native evaluation is not built")
@pytest.mark.parametrize("damage", _weights_damage(YOXII_DAMAGE, ("weights", "stock values")))
def test_the_yoxii_weights_are_checked_as_init_checks_them(damage: Damage) -> None:
    native: Any = yoxii_eval._native
    with pytest.raises(ValueError, match=rf"^{damage.table}[\[:]"):
        native.weights(*damage.applied(init_args(yoxii_eval))[5:7])
    probe_yoxii(native)


@pytest.mark.skipif(PURE, reason="the native evaluations are not built")
def test_an_evaluation_takes_only_weights_of_its_own_module() -> None:
    yohoho: Any = yohoho_eval._native  # wrong types on purpose
    yoxii: Any = yoxii_eval._native
    if yohoho is None or yoxii is None:
        pytest.skip("not built")
    own = yohoho_eval.YohohoEvaluator(YOHOHO_TUNED)._native_weights
    other = yoxii_eval.YoxiiEvaluator(YOXII_TUNED)._native_weights
    pieces = YOHOHO.new_state().packed_pieces()  # type: ignore[attr-defined]
    assert yohoho.evaluate(pieces, 0, -1, own) != yohoho.evaluate(pieces, 0, -1)
    for wrong in (other, "weights", None):
        with pytest.raises(ValueError, match="PyCapsule"):
            yohoho.evaluate(pieces, 0, -1, wrong)
    with pytest.raises(ValueError, match="PyCapsule"):
        yoxii.evaluate(0, 0, 0, 3, 0, 0, 0, own)
    with pytest.raises(TypeError):
        yohoho.evaluate(pieces, 0, -1, own, own)

"""The native accelerators agree with their Python references, position by position."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest

import games
from bots.engine import Limits
from bots.eval import yinsh as yinsh_eval
from bots.eval import yohoho as yohoho_eval
from bots.eval import yoxii as yoxii_eval
from bots.simple import GreedyBot
from games import State
from tests.bots.test_eval_yohoho import (
    ADMIRAL_AT_THE_GOAL,
    CAPTURE_LOSES_THE_RACE,
    CAPTURE_OPENS_THE_EDGE,
    mirror_position,
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
    modules = ("bots.eval.yohoho", "bots.eval.yoxii", "bots.eval.yinsh", "games.yinsh",
               "games.yohoho")  # fmt: skip
    code = (
        "import importlib; "
        f"print(all(importlib.import_module(m)._native is None for m in {modules!r}))"
    )
    env = {**os.environ, "ENGINESRV_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.strip() == "True"


def test_a_yoxii_evaluator_with_other_weights_uses_the_reference() -> None:
    tuned = yoxii_eval.YoxiiEvaluator(yoxii_eval.Weights(ring1=90))
    assert tuned._native is None
    capped = yoxii_eval.YoxiiEvaluator(solve_nodes=100)
    assert capped._native is None
    state = YOXII.new_state()
    assert tuned.evaluate(state) == tuned.evaluate_python(state)


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
    for state in games_of(11 + greedy, 60, greedy=greedy):
        native = evaluator.evaluate(state)
        assert native == evaluator.evaluate_python(state), state.to_string()
        checked += 1
        decided += abs(native) >= yohoho_eval.RACE_WON - 150 * yohoho_eval.RACE_HORIZON
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


@pytest.mark.skipif(yinsh_eval._native is None, reason="the native counts are not built")
@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_the_native_yinsh_counts_are_the_python_ones(name: str) -> None:
    from games.yinsh import YinshState

    game = games.load(name)
    rng = random.Random(name)
    checked = threats = 0
    for _ in range(80):
        state = game.new_state()
        while not state.is_terminal():
            assert isinstance(state, YinshState)
            counts = yinsh_eval._counts_native(state)
            assert counts == yinsh_eval._counts_python(state), state.to_string()
            checked += 1
            threats += counts[-1] + counts[-2]
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
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

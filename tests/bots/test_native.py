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
from bots.eval import yohoho as yohoho_eval
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


def test_the_native_evaluation_is_built_and_used() -> None:
    if PURE:
        assert yohoho_eval._native is None
        return
    assert yohoho_eval._native is not None, "bots/eval/_yohoho_native.c was not built"


def test_the_pure_python_switch_turns_it_off() -> None:
    code = "import bots.eval.yohoho as y; print(y._native is None)"
    env = {**os.environ, "ENGINESRV_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.strip() == "True"


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
        native.evaluate(("a",) * 8, 0, -1)
    with pytest.raises(ValueError, match="Admirals"):
        native.evaluate((0,) * 8, 0, -1)

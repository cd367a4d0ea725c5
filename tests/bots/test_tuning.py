"""The evaluation weights as options of alphabeta (bots/eval/tuning.py): their names, defaults
and ranges, the evaluator each set of options makes, and that the Python reference, the native
evaluation and the compiled core all evaluate with the options' weights."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import core_for
from bots.engine import Limits
from bots.eval import evaluated_games, evaluator_for, tuning
from bots.eval import yinsh as yinsh_eval
from bots.eval import yohoho as yohoho_eval
from bots.eval.tuning import Tunable, tunables_for
from games import Move, State
from tests.bots.inspect_rows import reference_row

TUNED_GAMES = ("yinsh", "yinsh+blitz", "yohoho", "yoxii")


def perturbed(tunable: Tunable, k: int) -> int:
    """A value of ``tunable`` other than its default, within its range, up or down by ``k``."""
    step = (tunable.high - tunable.low) // 9 + 1
    for sign in (1, -1) if k % 2 else (-1, 1):
        value = min(tunable.high, max(tunable.low, tunable.default + sign * step))
        if value != tunable.default:
            return value
    raise AssertionError(tunable)


def every_option_perturbed(game: str) -> dict[str, int]:
    return {t.name: perturbed(t, k) for k, t in enumerate(tunables_for(game))}


def sets_of(evaluator: Any, game: str) -> dict[str, Any]:
    """The weight sets of an evaluator, by name."""
    if game.startswith("yinsh"):
        own = "blitz_weights" if game == "yinsh+blitz" else "weights"
        return {"play": getattr(evaluator, own), "placement": evaluator.placement_weights}
    return {"play": evaluator.weights}


def set_of(tunable: Tunable) -> str:
    return "placement" if tunable in tuning.YINSH_PLACEMENT else "play"


# -- the table of options ------------------------------------------------------------------------


def test_the_names_are_unique_and_say_their_game() -> None:
    names = [option.name.lower() for option in AlphaBeta.options]
    assert len(names) == len(set(names))
    prefixes = {"yinsh": "EvalYinsh", "yinsh+blitz": "EvalYinsh", "yohoho": "EvalYohoho"}
    for game in TUNED_GAMES:
        prefix = prefixes.get(game, "EvalYoxii")
        assert tunables_for(game)
        assert all(t.name.startswith(prefix) for t in tunables_for(game))
    assert tunables_for("yinyang") == ()
    assert set(tuning.TUNABLES) == set(evaluated_games()) - {"yinyang"}


@pytest.mark.parametrize("game", TUNED_GAMES)
def test_every_default_is_the_evaluations_own_and_inside_its_range(game: str) -> None:
    default = sets_of(evaluator_for(game), game)
    for tunable in tunables_for(game):
        assert tunable.low <= tunable.default <= tunable.high, tunable
        assert tunable.low < tunable.high
        weight = getattr(default[set_of(tunable)], tunable.field)
        if tunable.percent:
            assert tunable.default == 100
            assert isinstance(weight, tuple)
        elif tunable.index is not None:
            assert weight[tunable.index] == tunable.default, tunable.name
        else:
            assert weight == tunable.default, tunable.name
    at_defaults = {t.name: t.default for t in tunables_for(game)}
    assert sets_of(evaluator_for(game, at_defaults), game) == default


def test_the_options_of_alphabeta_are_hidden_and_name_their_games() -> None:
    hidden = {o.name: o for o in AlphaBeta.options if o.hidden}
    assert {o.name for o in AlphaBeta.options if not o.hidden} >= {"Hash", "Depth", "Samples"}
    for game in TUNED_GAMES:
        for tunable in tunables_for(game):
            option = hidden[tunable.name]
            assert (option.type, option.default, option.min, option.max) == (
                "spin",
                tunable.default,
                tunable.low,
                tunable.high,
            )
            assert option.games is not None
            assert game in option.games
    assert hidden["EvalYinshMarker"].games == ("yinsh", "yinsh+blitz")
    assert hidden["EvalYohohoGalleon"].games == ("yohoho",)


@pytest.mark.parametrize("game", TUNED_GAMES)
def test_each_option_moves_its_own_weight_and_no_other(game: str) -> None:
    default = sets_of(evaluator_for(game), game)
    for k, tunable in enumerate(tunables_for(game)):
        value = perturbed(tunable, k)
        made = sets_of(evaluator_for(game, {tunable.name: value}), game)
        group = set_of(tunable)
        for name, weights in made.items():
            for field in weights._fields:
                old, new = getattr(default[name], field), getattr(weights, field)
                if name != group or field != tunable.field:
                    assert new == old, (tunable.name, name, field)
                elif tunable.percent:
                    assert new == tuple((v * value + 50) // 100 for v in old)
                elif tunable.index is not None:
                    assert new[tunable.index] == value
                    assert [v for i, v in enumerate(new) if i != tunable.index] == [
                        v for i, v in enumerate(old) if i != tunable.index
                    ]
                else:
                    assert new == value


def test_a_percent_rounds_to_the_nearest() -> None:
    scale = tuning.Tunable("X", "prog", 100, 0, 400, "", percent=True)
    weights = yohoho_eval.DEFAULT_WEIGHTS._replace(prog=(0, 1, 3, -3, 5, -5, 300))
    assert tuning.apply(weights, [scale], {"X": 150}).prog == (0, 2, 5, -4, 8, -7, 450)
    assert tuning.apply(weights, [scale], {"X": 100}) is weights


def test_yinsh_options_set_the_variant_played() -> None:
    values = {"EvalYinshMarker": 90, "EvalYinshPlaceCentre1": -5}
    standard = evaluator_for("yinsh", values)
    blitz = evaluator_for("yinsh+blitz", values)
    assert isinstance(standard, yinsh_eval.YinshEvaluator)
    assert isinstance(blitz, yinsh_eval.YinshEvaluator)
    assert standard.weights.marker == blitz.blitz_weights.marker == 90
    assert standard.blitz_weights == blitz.weights == yinsh_eval.STANDARD_WEIGHTS
    assert standard.placement_weights.centre1 == blitz.placement_weights.centre1 == -5


# -- the bot: one evaluator per set of weights ----------------------------------------------------


def test_alphabeta_makes_an_evaluator_again_only_when_the_weights_change() -> None:
    bot = AlphaBeta()
    yohoho = games.load("yohoho")
    first = bot._evaluator(yohoho)
    assert bot._evaluator(yohoho) is first
    assert isinstance(first, yohoho_eval.YohohoEvaluator)
    assert first.weights == yohoho_eval.DEFAULT_WEIGHTS
    assert first._native_weights is None  # the defaults: the native evaluation's own
    bot.set_option("EvalYinshMarker", "99")  # another game's weight
    assert bot._evaluator(yohoho) is first
    bot.set_option("EvalYohohoGalleon", "260")
    second = bot._evaluator(yohoho)
    assert isinstance(second, yohoho_eval.YohohoEvaluator)
    assert second.weights.galleon == 260
    assert bot._evaluator(yohoho) is second
    bot.set_option("evalyohohogalleon", str(yohoho_eval.DEFAULT_WEIGHTS.galleon))  # its default
    third = bot._evaluator(yohoho)
    assert third is not second
    assert isinstance(third, yohoho_eval.YohohoEvaluator)
    assert third.weights == yohoho_eval.DEFAULT_WEIGHTS


def test_a_search_after_new_weights_starts_with_an_empty_table() -> None:
    bot = AlphaBeta()
    bot.set_option("Hash", "1")
    state = games.load("yoxii").new_state()
    bot.new_game(state.game)
    bot.search(state, Limits(depth=2))
    table = bot._compiled if bot._compiled is not None else bot._table
    assert table is not None
    learnt = [table.searched]
    bot._history[0] = 1
    bot.set_option("EvalYoxiiRing2", "40")
    bot._evaluator(state.game)
    learnt.append(table.searched)
    assert learnt == [True, False]
    assert not bot._history
    assert bot._plan is None


# -- the reference, the native evaluation and the core under the options' weights ---------------


def random_game(game: games.Game, seed: str, plies: int) -> tuple[State, list[Move]]:
    rng = random.Random(seed)
    state = game.new_state()
    moves: list[Move] = []
    while len(moves) < plies and not state.is_terminal():
        move = rng.choice(list(state.legal_moves()))
        state.push(move)
        moves.append(move)
    for _ in moves:
        state.pop()
    return state, moves


@pytest.mark.parametrize(
    ("game", "plies"), [("yinsh", 70), ("yinsh+blitz", 50), ("yohoho", 120), ("yoxii", 40)]
)
def test_every_weight_perturbed_reaches_the_reference_the_native_code_and_the_core(
    game: str, plies: int
) -> None:
    bot = AlphaBeta()
    for name, value in every_option_perturbed(game).items():
        bot.set_option(name, str(value))
    rules = games.load(game)
    evaluator = bot._evaluator(rules)
    plain = evaluator_for(game)
    core = core_for(game)
    checked = differ = 0
    for seed in range(3):
        state, moves = random_game(rules, f"{game}{seed}", plies)
        rows = core.inspect(state, evaluator, moves) if core is not None else None
        for ply in range(len(moves) + 1):
            row = reference_row(state, evaluator)
            if rows is not None:
                assert rows[ply] == row, f"{state.to_string()} (ply {ply})"
            if not state.is_terminal():
                python = getattr(evaluator, "evaluate_python", evaluator.evaluate)(state)
                assert row[7] == python  # the native evaluation, where there is one
                differ += python != plain.evaluate(state)
                checked += 1
            if ply < len(moves):
                state.push(moves[ply])
    assert checked > 60
    assert differ > checked // 2


def test_docs_bots_lists_every_weight_option_with_its_default_and_range() -> None:
    text = (Path(__file__).parent.parent.parent / "docs" / "bots.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if "| `Eval" in line}
    every = {t.name: t for game in TUNED_GAMES for t in tunables_for(game)}
    assert set(rows) == {f"`{name}`" for name in every}
    for name, tunable in every.items():
        cells = [cell.strip() for cell in rows[f"`{name}`"].split("|")[2:4]]
        assert cells == [str(tunable.default), f"{tunable.low}..{tunable.high}"], name


def test_the_yoxii_stock_table_is_the_worth_of_each_stock() -> None:
    """Built anew for each set of stock weights a tuner tries, by sums over the four counts."""
    from bots.eval import yoxii as yoxii_eval

    for weights in ((0, 5, 10, 20), (1, -2, 3, 50), (7, 0, -9, 4)):
        table = yoxii_eval._stock_table(weights)
        assert len(table) == 4096
        for stock in range(4096):
            counts = [stock >> 3 * value & 7 for value in range(4)]
            assert table[stock] == sum(w * n for w, n in zip(weights, counts, strict=True))

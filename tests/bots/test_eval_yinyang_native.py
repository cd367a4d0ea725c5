"""The native Yin Yang evaluation (bots/eval/_yinyang_native.c) agrees with its Python
reference: the plain evaluation, the evaluation over a determinized search's samples (to the
bit of the double before rounding), the laws an adaptation writes in the search and the move
order; its tables are checked when it starts, and the pure-Python switch turns it off."""

from __future__ import annotations

import importlib
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits
from bots.eval import yinyang
from bots.eval.yinyang import YinYangEvaluator, YinYangHidden, _SampledThreats
from games import Move, State
from games.yinyang import LAW_OF_TEXT, YinYangState
from tests.bots.test_eval_yinyang import random_positions, state_of

GAME = games.load("yinyang")
PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))


@pytest.fixture(scope="module")
def native() -> Iterator[yinyang._Native]:
    """The native module, ready with the reference's tables (also under the pure-Python
    switch, which only keeps the evaluator from using it); skips when it is not built."""
    try:
        module = importlib.import_module("bots.eval._yinyang_native")
    except ImportError:
        pytest.skip("bots/eval/_yinyang_native.c is not built")
    raw = cast(yinyang._Native, module)
    raw.init(yinyang.native_tables())
    yield raw
    raw.init(yinyang.native_tables())  # whatever a test did to it


def views_of(positions: Sequence[YinYangState]) -> Iterator[YinYangState]:
    """Each position (phases start and moved), and both players' views of it."""
    for state in positions:
        yield state
        yield state.view(0)
        yield state.view(1)


def test_the_native_evaluation_is_built_and_used(native: yinyang._Native) -> None:
    if PURE:
        assert yinyang._native is None
    else:
        assert yinyang._native is native


def test_the_pure_python_switch_turns_it_off(native: yinyang._Native) -> None:
    code = (
        "from bots.eval import yinyang; import games; "
        "state = games.load('yinyang').state_from_string("
        f"{START_VIEW!r}); "
        "print(yinyang._native is None, yinyang.YinYangEvaluator().evaluate(state))"
    )
    env = {**os.environ, "ENGINESRV_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    ).stdout.split()
    reference = YinYangEvaluator().evaluate_python(state_of(START_VIEW))
    assert out == ["True", str(reference)]


START_VIEW = (
    "bwww/bw.w/bbbw/bbbw w start ?,?,?,+wwww>www. -.wbw>*,-w.bb>*,-bbw.>b.w.,-ww..>* 8 10 2"
)


def test_the_plain_evaluation_is_the_reference(native: yinyang._Native) -> None:
    evaluator = YinYangEvaluator()
    checked = 0
    for state in views_of(random_positions(1500, 33)):
        if state.is_terminal():
            continue
        assert native.evaluate(state) == evaluator.evaluate_python(state), state.to_string()
        checked += 1
    assert checked > 4000


def lines_from(view: YinYangState, rng: random.Random, plies: int) -> Iterator[YinYangState]:
    """``view`` and the positions of a random line of at most ``plies`` from it (laws applied,
    revealed and rewritten on the way)."""
    line = view.copy()
    for _ in range(plies):
        if line.is_terminal():
            return
        yield line
        moves = line.legal_moves()
        if not moves:
            return
        line.push(moves[rng.randrange(len(moves))])


def check_sampled(native: yinyang._Native, averaged: _SampledThreats, state: State) -> None:
    """The native evaluation over the samples equals the reference, to the bit before it is
    rounded."""
    plan = native.plan(
        averaged.variants.get(0), averaged.variants.get(1), averaged.weights, averaged._scale
    )
    logit, reference = native.sampled_logit(state, plan), averaged.logit_python(state)
    assert logit.hex() == reference.hex(), state.to_string()
    assert native.evaluate_sampled(state, plan) == averaged.evaluate_python(state)


@pytest.mark.parametrize(
    ("count", "weighting"),
    [(2, "ones"), (4, "random"), (8, "drawn"), (16, "random"), (32, "drawn")],
)
def test_the_evaluation_over_samples_is_the_reference(
    native: yinyang._Native, count: int, weighting: str
) -> None:
    rng = random.Random(f"{count} {weighting}")
    evaluator = YinYangEvaluator()
    checked = 0
    for referee in random_positions(120, count):
        for viewer in (0, 1):
            view = referee.view(viewer)
            if not view.is_view() or view.is_terminal():
                continue
            worlds = YinYangHidden().samples(view, rng, count)
            if weighting == "ones":
                weights = [1] * len(worlds)
            elif weighting == "random":
                weights = [rng.randint(1, 9) for _ in worlds]
            else:  # as the search weighs them: each distinct world by how often it was drawn
                keys = [world.key() for world in worlds]
                worlds = [w for i, w in enumerate(worlds) if keys.index(w.key()) == i]
                weights = [keys.count(world.key()) for world in worlds]
            averaged = evaluator.over_samples(view, worlds, weights)
            if not isinstance(averaged, _SampledThreats):
                continue
            for state in lines_from(view, rng, 8):
                check_sampled(native, averaged, state)
                checked += 1
    assert checked > 1000


def test_a_side_left_only_hidden_laws_is_evaluated_as_the_reference(
    native: yinyang._Native,
) -> None:
    # White to act has no piece and no law it has shown: the completions where none of its
    # hidden laws fits count as lost (the rarest branch of the evaluation over the samples)
    referee = state_of(
        "..../..../..../b... w start -bbbb>*,-....>bb..,-bbbb>b.bb,-bbbb>bbb. "
        "-wwww>w.ww,-wwww>ww.w,-wwww>www.,-wwww>* 8 10 20"
    )
    laws = referee.laws(1)[0]
    assert laws is not None
    worlds = [referee]
    for text in ("....>ww..", "b...>....", "...b>*", "wwww>*"):
        worlds.append(referee.with_laws(1, (LAW_OF_TEXT[text], laws[1], laws[2], laws[3])))
    for weights in ([3, 1, 1, 1, 1], [1, 2, 3, 4, 5], [0, 0, 1, 0, 7]):
        averaged = YinYangEvaluator().over_samples(referee.view(0), worlds, weights)
        assert isinstance(averaged, _SampledThreats)
        check_sampled(native, averaged, referee.view(0))


def test_the_search_advice_is_the_reference(native: yinyang._Native) -> None:
    evaluator = YinYangEvaluator()
    rng = random.Random(7)
    checked = 0
    for state in views_of(random_positions(600, 34)):
        black, white = state.board_masks()
        for side in (0, 1):
            expected = yinyang.rewrite_laws_python(state, side, black, white)
            assert native.rewrite_laws(state, side, black, white) == expected
        if state.is_terminal():
            continue
        moves = list(evaluator.search_moves(state))
        for _ in range(2):  # the order of equals is kept (a stable sort)
            expected_order = evaluator.order_moves_python(state, moves)
            assert native.order_moves(state, moves) == expected_order, state.to_string()
            rng.shuffle(moves)
        checked += 1
    assert checked > 1500


def played_views(seed: int, games_: int, nodes: int) -> list[YinYangState]:
    """The views at the start of each turn of games between two alphabeta bots."""
    out: list[YinYangState] = []
    for number in range(games_):
        players = []
        for seat in (0, 1):
            bot = AlphaBeta()
            bot.set_option("SecretSeed", str(seed * 100 + 2 * number + seat + 1))
            bot.new_game(GAME)
            players.append(bot)
        state = GAME.new_state()
        assert isinstance(state, YinYangState)
        while not state.is_terminal() and state.ply() < 80:
            view = state.view(state.to_move())
            if state.phase() == "start" and view.is_view():
                out.append(view)
            result = players[state.to_move()].search(view, Limits(nodes=nodes))
            assert result.token is not None
            state.push(state.parse_move(result.token))
    return out


def test_a_search_meets_the_reference_at_every_node(
    native: yinyang._Native, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alphabeta's determinized search of views from seeded play, with each evaluation, each
    move order and each choice of laws to write checked against the reference as it is made;
    the search is the one the reference alone makes (same nodes, same move)."""
    counts = {"sampled": 0, "plain": 0, "order": 0, "rewrite": 0}

    def sampled(self: _SampledThreats, state: State) -> int:
        check_sampled(native, self, state)
        counts["sampled"] += 1
        return self.evaluate_python(state)

    def plain(self: YinYangEvaluator, state: State) -> int:
        value = self.evaluate_python(state)
        assert native.evaluate(state) == value
        counts["plain"] += 1
        return value

    def order(self: YinYangEvaluator, state: State, moves: Sequence[Move]) -> list[Move]:
        ordered = self.order_moves_python(state, moves)
        assert native.order_moves(state, moves) == ordered
        counts["order"] += 1
        return ordered

    def rewrite(state: YinYangState, side: int, black: int, white: int) -> list[int]:
        laws = yinyang.rewrite_laws_python(state, side, black, white)
        assert native.rewrite_laws(state, side, black, white) == laws
        counts["rewrite"] += 1
        return laws

    views = played_views(3, 2, 200)[::3][:8]
    assert len(views) == 8

    def search(view: YinYangState, samples: int) -> tuple[int, str | None]:
        bot = AlphaBeta()
        bot.set_option("SecretSeed", "5")
        bot.set_option("Samples", str(samples))  # 1: a guess searched with the plain evaluation
        bot.new_game(GAME)
        result = bot.search(view.copy(), Limits(depth=5))
        return result.nodes, result.token

    def searches() -> list[tuple[int, str | None]]:
        return [search(view, samples) for view in views for samples in (8, 1)]

    with monkeypatch.context() as patch:
        patch.setattr(yinyang, "_native", None)
        reference = searches()
    hooks: list[tuple[object, str, Callable[..., object]]] = [
        (_SampledThreats, "evaluate", sampled),
        (YinYangEvaluator, "evaluate", plain),
        (YinYangEvaluator, "order_moves", order),
        (yinyang, "rewrite_laws", rewrite),
    ]
    with monkeypatch.context() as patch:
        for owner, name, hook in hooks:
            patch.setattr(owner, name, hook)
        checked = searches()
    assert checked == reference
    with monkeypatch.context() as patch:
        patch.setattr(yinyang, "_native", native)
        assert searches() == reference
    assert counts["sampled"] > 1000
    assert counts["plain"] > 1000
    assert counts["order"] > 500
    assert counts["rewrite"] > 50


def first_leaf(table: object) -> list[int]:
    """The indices of the first int in a nested table."""
    path: list[int] = []
    while isinstance(table, tuple | list):
        index = next(
            i for i, item in enumerate(table) if not isinstance(item, tuple | list) or item
        )
        path.append(index)
        table = table[index]
    return path


def with_leaf(table: object, path: list[int], value: object) -> object:
    """``table`` with its int at ``path`` replaced by ``value``."""
    if not path:
        return value
    assert isinstance(table, tuple | list)
    items = list(table)
    items[path[0]] = with_leaf(items[path[0]], path[1:], value)
    return tuple(items)


def damaged_tables() -> Iterator[tuple[str, str, dict[str, object]]]:
    """Per table: its name, what was done to it and the tables with it damaged so."""
    good = yinyang.native_tables()
    for name, table in good.items():
        yield name, "left out", {k: v for k, v in good.items() if k != name}
        yield name, "a string", {**good, name: "x"}
        yield name, "out of range", {**good, name: with_leaf(table, first_leaf(table), 10**12)}
        if isinstance(table, tuple):
            yield name, "cut short", {**good, name: table[:-1]}


@pytest.mark.parametrize(
    ("name", "damage", "tables"),
    [pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in damaged_tables()],
)
def test_a_damaged_table_is_refused_by_name_and_leaves_the_module_unready(
    native: yinyang._Native, name: str, damage: str, tables: dict[str, object]
) -> None:
    state = state_of(START_VIEW)
    with pytest.raises(ValueError, match=f"^{re.escape(name)}: "):
        native.init(tables)
    with pytest.raises(RuntimeError, match="init"):
        native.evaluate(state)
    native.init(yinyang.native_tables())
    assert native.evaluate(state) == YinYangEvaluator().evaluate_python(state)


def test_a_damaged_state_is_refused_by_field(native: yinyang._Native) -> None:
    for field, value in (
        ("_b", 1 << 16),
        ("_side", 2),
        ("_phase", -1),
        ("_rev", (16, 0)),
        ("_laws", ((1, 2, 3), None)),
        ("_laws", ((1, 2, 3, 406), None)),
    ):
        state = state_of(START_VIEW)
        setattr(state, field, value)
        with pytest.raises(ValueError, match=f"^{field}: "):
            native.evaluate(state)
    with pytest.raises(AttributeError):
        native.evaluate(cast(State, object()))


def test_completions_the_native_plan_does_not_take_are_evaluated_by_the_reference(
    native: yinyang._Native, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yinyang, "_native", native)
    view = state_of(START_VIEW)
    worlds = YinYangHidden().samples(view, random.Random(5), 6)
    averaged = YinYangEvaluator().over_samples(view, worlds, [1] * len(worlds))
    assert isinstance(averaged, _SampledThreats)
    with pytest.raises(ValueError, match="weights"):
        native.plan(averaged.variants.get(0), averaged.variants.get(1), [1, -1], 300.0)
    with pytest.raises(ValueError, match="variants"):
        native.plan(averaged.variants.get(0), averaged.variants.get(1), [1, 1], 300.0)
    averaged.weights = [2, -1, 1, 1, 1, 1][: len(worlds)]
    assert averaged.evaluate(view) == averaged.evaluate_python(view)
    assert averaged._plan is yinyang._NO_PLAN

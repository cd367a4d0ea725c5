"""Yohoho's compiled core (native/core/yohoho.h, in bots._core_yohoho) against the reference.

Ply by ply along seeded random games, from the start, the bench positions and the positions of
the rule vectors, the core must answer what games/yohoho.py and bots/eval/yohoho.py answer: the
key, who acts, the end and its winner, the legal, searched, ordered and noisy moves, the value
and quiet; with the default weights and with other ones. Every phase and end of the game must
be reached on the way (counted). Then perft, the fixed-depth search against bots/search.py, and
the refusal of states, evaluators and tables that are not Yohoho's or are damaged.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import games
from bots.compiled import CompiledMemory, Core, compiled_search, core_for
from bots.engine import Limits, SearchResult, never_stop
from bots.eval import yohoho as yohoho_eval
from bots.eval.yohoho import DEFAULT_WEIGHTS, Weights, YohohoEvaluator
from bots.eval.yoxii import YoxiiEvaluator
from bots.search import DEFAULT_OPTIONS, Searcher, SearchMemory, TranspositionTable
from enginesrv.search.bench import BENCH, SEARCH_BENCH, PerftCase
from games import Move, State
from games.yohoho import FULL_MASK, YohohoState, _enemy_strength, _robust_pieces
from tests.bots.inspect_rows import reference_row

CORE = core_for("yohoho")
pytestmark = pytest.mark.skipif(
    CORE is None, reason="no compiled core (not built, or ENGINESRV_PURE_PYTHON)"
)

YOHOHO = games.load("yohoho")
DATA = Path(__file__).parent.parent / "data" / "yohoho"
RECORDS = [
    json.loads(line)
    for line in (DATA / "yohoho-moves.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
STARTS = (
    YOHOHO.start_position,
    *(case.position for case in BENCH["yohoho"] + SEARCH_BENCH["yohoho"]),
)


@pytest.fixture
def core() -> Core:
    assert CORE is not None
    return CORE


# -- the reference's answers ---------------------------------------------------------------------


def phase_of(state: YohohoState) -> str:
    """Which rules the position exercises (the phases and ends the test must reach)."""
    if state.is_terminal():
        outcome = state.outcome()
        assert outcome is not None
        return "end: " + outcome.reason
    if state.phase() == "2":
        return "second sub-move"
    if state.is_first_turn():
        return "first turn"
    own, enemy = state._own_enemy()
    if _enemy_strength(own[0].bit_length() - 1, *enemy[:3]) > 5:
        return "Arno's rule"
    if _robust_pieces(own, FULL_MASK ^ state._occ) < 2:
        return "completion rule, move by move"
    if any(move >> 14 for move in state.legal_moves()):  # a capture
        return "start of a turn, with captures"
    return "start of a turn"


PHASES = {
    "first turn",
    "start of a turn",
    "start of a turn, with captures",
    "completion rule, move by move",
    "Arno's rule",
    "second sub-move",
    "end: goal-row",
    "end: admiral-trapped",
    "end: no-legal-action",
}


def random_games(seed: int, count: int, plies: int) -> Iterator[tuple[State, list[Move]]]:
    """Seeded random games of at most ``plies`` plies: the start state and the moves."""
    rng = random.Random(seed)
    for _ in range(count):
        state = YOHOHO.state_from_string(rng.choice(STARTS))
        moves: list[Move] = []
        while len(moves) < plies and not state.is_terminal():
            move = rng.choice(state.legal_moves())
            state.push(move)
            moves.append(move)
        for _ in moves:
            state.pop()
        yield state, moves


def compare(
    core: Core, state: State, moves: list[Move], evaluator: YohohoEvaluator
) -> Counter[str]:
    """``inspect`` against the reference at every ply of ``moves``; the phases seen."""
    got = core.inspect(state, evaluator, moves)
    assert len(got) == len(moves) + 1
    seen: Counter[str] = Counter()
    for ply in range(len(moves) + 1):
        assert isinstance(state, YohohoState)
        seen[phase_of(state)] += 1
        expected = reference_row(state, evaluator)
        assert got[ply] == expected, f"{state.to_string()} (ply {ply})"
        if ply < len(moves):
            state.push(moves[ply])
    for _ in moves:
        state.pop()
    return seen


def compare_everywhere(
    core: Core, seed: int, count: int, weights: Weights = DEFAULT_WEIGHTS
) -> Counter[str]:
    """``compare`` along random games and on every position of the rule vectors, with an
    evaluator of ``weights``."""
    evaluator = YohohoEvaluator(weights)
    seen: Counter[str] = Counter()
    for state, moves in random_games(seed, count, 150):
        seen += compare(core, state, moves, evaluator)
    for record in RECORDS:
        seen += compare(core, YOHOHO.state_from_string(record["pos"]), [], evaluator)
    return seen


# -- other weights ------------------------------------------------------------------------------

OTHER_WEIGHTS = Weights(
    chebec=73,
    galleon=190,
    row_step=41,
    prog=(0, 310, 190, 120, 50, 33, 17, 4, 1, -3, -2, 0),  # shorter: _FAR is 10 below
    race=(0, -7, 130, 70, 49, 22, 11, 3, 1, 0, 2, 5),
    step_safe=(-101, -47, -13, 1, 6, 9),
    robust=(-61, -23, 1, 2, 3, 4),
    rock_cone=37,
    pressure=7,
    attacked=(301, 249, 141, 91, -71, -61),  # odd and negative: floor division by 2
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
"""Every weight changed: the core must read each from the evaluator."""


@pytest.fixture
def other_weights(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """For evaluators of ``OTHER_WEIGHTS``: the module's other constants changed too (``LIMIT``
    reached, so the clamp is exercised; ``_FAR`` 10, for the shorter tables), evaluated by the
    Python reference (the native evaluation's tables have the default lengths); counts the
    races found decided."""
    monkeypatch.setattr(yohoho_eval, "_native", None)
    monkeypatch.setattr(yohoho_eval, "LIMIT", 2500)
    monkeypatch.setattr(yohoho_eval, "_FAR", 10)
    monkeypatch.setattr(yohoho_eval, "_RACES", {})
    decided: Counter[str] = Counter()
    race = yohoho_eval._race

    def counting_race(
        admiral: int,
        up: bool,
        passable: int,
        empty: int,
        *,
        defenders: tuple[int, int, int, int],
        defenders_first: bool,
        horizon: int,
    ) -> int:
        turns = race(
            admiral,
            up,
            passable,
            empty,
            defenders=defenders,
            defenders_first=defenders_first,
            horizon=horizon,
        )
        decided["decided" if turns else "open"] += 1
        return turns

    monkeypatch.setattr(yohoho_eval, "_race", counting_race)
    return decided


# -- the tests -----------------------------------------------------------------------------------


def test_inspect_equals_the_reference_at_every_ply(core: Core) -> None:
    seen = compare_everywhere(core, seed=1, count=250)
    assert set(seen) == PHASES, seen


def test_inspect_equals_the_reference_with_other_weights(
    core: Core, other_weights: Counter[str]
) -> None:
    seen = compare_everywhere(core, seed=2, count=80, weights=OTHER_WEIGHTS)
    assert set(seen) == PHASES, seen
    assert other_weights["decided"], other_weights
    assert other_weights["open"], other_weights


@pytest.mark.parametrize("case", BENCH["yohoho"], ids=lambda case: case.name)
def test_perft_equals_the_reference(core: Core, case: PerftCase) -> None:
    position, depth = case.position, min(case.depth, 3)
    state = YOHOHO.state_from_string(position)
    for d in range(depth + 1):
        assert core.perft(state, d) == games.perft(state, d)
    assert state.to_string() == position


def test_perft_of_the_rule_vectors(core: Core) -> None:
    lines = (DATA / "yohoho.perft").read_text(encoding="utf-8").splitlines()
    state: State | None = None
    checked = 0
    for line in lines:
        if line.startswith("pos "):
            state = YOHOHO.state_from_string(line[4:])
        elif line.startswith("perft ") and state is not None:
            _, depth, count = line.split()
            assert core.perft(state, int(depth)) == int(count)
            checked += 1
    assert checked >= 9


def test_playouts_are_seeded_and_leave_the_state() -> None:
    assert CORE is not None
    state = YOHOHO.state_from_string(YOHOHO.start_position)
    first = CORE.playouts(state, 50, 7, 200)
    assert first == CORE.playouts(state, 50, 7, 200)
    finished, plies = first
    assert 0 < finished <= 50
    assert plies > 50
    assert CORE.perft(state, 1) == 50  # the core's copy was popped back; the state untouched
    assert state.to_string() == YOHOHO.start_position


def searches(
    core: Core, state: State, depth: int, weights: Weights = DEFAULT_WEIGHTS
) -> tuple[SearchResult, SearchResult]:
    """The reference search and the compiled one of ``state`` to ``depth``, tables alike, with
    evaluators of ``weights``."""
    memory = SearchMemory(TranspositionTable(1))
    reference = Searcher(
        state,
        evaluator=YohohoEvaluator(weights),
        memory=memory,
        limits=Limits(depth=depth),
        stop=never_stop,
        on_info=lambda info: None,
    ).run()
    compiled = compiled_search(
        core,
        state,
        evaluator=YohohoEvaluator(weights),
        memory=CompiledMemory(core, memory.table.size),
        limits=Limits(depth=depth),
        stop=never_stop,
        on_info=lambda info: None,
        options=DEFAULT_OPTIONS,
    )
    return reference, compiled


def figures(result: SearchResult) -> tuple[object, ...]:
    return (result.move, result.score, result.depth, result.seldepth, result.nodes, result.pv)


@pytest.mark.parametrize("case", SEARCH_BENCH["yohoho"], ids=lambda case: case.name)
def test_the_bench_searches_equal_the_reference(core: Core, case: PerftCase) -> None:
    state = YOHOHO.state_from_string(case.position)
    reference, compiled = searches(core, state, case.depth)
    assert figures(compiled) == figures(reference)


def test_searches_from_the_rule_vectors_equal_the_reference(core: Core) -> None:
    rng = random.Random(3)
    for record in rng.sample(RECORDS, 12):
        state = YOHOHO.state_from_string(record["pos"])
        reference, compiled = searches(core, state, 3)
        assert figures(compiled) == figures(reference), record["pos"]


def test_searches_with_other_weights_equal_the_reference(
    core: Core, other_weights: Counter[str]
) -> None:
    for case in SEARCH_BENCH["yohoho"]:
        state = YOHOHO.state_from_string(case.position)
        reference, compiled = searches(core, state, 3, OTHER_WEIGHTS)
        assert figures(compiled) == figures(reference), case.name


# -- refusals ------------------------------------------------------------------------------------


def one_line(error: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    text = str(error.value)
    assert "\n" not in text
    for word in words:
        assert word in text, text


def test_a_state_of_another_game_is_refused(core: Core) -> None:
    with pytest.raises(TypeError) as error:
        core.perft(games.load("yoxii").new_state(), 1)
    one_line(error, "Yohoho")


def damaged(change: str) -> State:
    state = YOHOHO.state_from_string(BENCH["yohoho"][1].position)
    assert isinstance(state, YohohoState)
    pcs = state._pcs
    if change == "_pcs":
        state._pcs = (pcs[0] | pcs[5], *pcs[1:])  # two pieces on a cell
    elif change == "_pcs count":
        state._pcs = pcs[:7]
    elif change == "_occ":
        state._occ ^= 1 << 40
    elif change == "_side":
        state._side = 2
    elif change == "_p2":
        state._p2 = (FULL_MASK ^ state._occ).bit_length() - 1  # an empty cell
    elif change == "_first":
        state._first = 1
        state._side = 1
    elif change == "_key":
        state._key ^= 1
    return state


@pytest.mark.parametrize("change", ["_pcs", "_pcs count", "_occ", "_side", "_p2", "_first", "_key"])
def test_a_damaged_state_is_refused_naming_the_field(core: Core, change: str) -> None:
    field = change.split(maxsplit=1)[0]
    with pytest.raises(ValueError, match=field) as error:
        core.inspect(damaged(change), YohohoEvaluator(), [])
    one_line(error, field)


def test_an_evaluator_of_another_game_is_refused(core: Core) -> None:
    with pytest.raises(TypeError) as error:
        core.inspect(YOHOHO.new_state(), YoxiiEvaluator(), [])
    one_line(error, "YohohoEvaluator")


class _Renamed(YohohoEvaluator):
    """The reference under another name: evaluated as it is."""


class _Flat(YohohoEvaluator):
    """An evaluation the core does not know."""

    def evaluate(self, state: State) -> int:
        del state
        return 0


def test_a_subclass_is_taken_unless_it_replaces_a_hook(core: Core) -> None:
    state = YOHOHO.new_state()
    assert core.inspect(state, _Renamed(), []) == core.inspect(state, YohohoEvaluator(), [])
    with pytest.raises(TypeError) as error:
        core.inspect(state, _Flat(), [])
    one_line(error, "_Flat", "evaluate")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("step_safe", (1, 2, 3)),
        ("step_safe", 5),
        ("prog", (0, 1)),
        ("_FAR", 0),
        ("chebec", "70"),
        ("LIMIT", 1 << 40),
    ],
)
def test_damaged_weights_are_refused_naming_them(
    core: Core, monkeypatch: pytest.MonkeyPatch, name: str, value: object
) -> None:
    monkeypatch.setattr(yohoho_eval, "_native", None)  # which refuses them too, at once
    if name.isupper() or name.startswith("_"):
        monkeypatch.setattr(yohoho_eval, name, value)  # a constant of the module
        evaluator = YohohoEvaluator()
    else:
        damage: dict[str, Any] = {name: value}
        evaluator = YohohoEvaluator(DEFAULT_WEIGHTS._replace(**damage))
    with pytest.raises((ValueError, TypeError)) as error:
        core.inspect(YOHOHO.new_state(), evaluator, [])
    one_line(error, name)


DAMAGED_TABLES = """
import importlib
import games.yohoho as rules
import bots.eval.yohoho as evaluation

def attempt():
    try:
        importlib.import_module("bots._core_yohoho")
    except ValueError as error:
        return str(error)
    return "imported"

MISSING = object()
for module, name, damage in [
    (rules, "Z_PIECE", lambda t: t[:7]),
    (rules, "Z_PIECE", lambda t: ((-1, *t[0][1:]), *t[1:])),
    (rules, "Z_BLACK", lambda z: 1 << 64),
    (rules, "Z_FIRST", lambda z: MISSING),
    (rules, "Z_PHASE2", lambda t: t[:-1]),
    (rules, "Z_PHASE2", lambda t: 5),
    (rules, "NBR", lambda t: (t[0] | 1 << 60, *t[1:])),
    (rules, "SOURCE", lambda t: t[:5]),
    (rules, "SOURCE", lambda t: ("a", *t[1:])),
    (evaluation, "CONE_UP", lambda t: (*t[:-1], 1 << 80)),
    (evaluation, "ROW_OF", lambda t: MISSING),
]:
    saved = getattr(module, name)
    broken = damage(saved)
    if broken is MISSING:
        delattr(module, name)
    else:
        setattr(module, name, broken)
    print(attempt())
    setattr(module, name, saved)
print(attempt())
"""


def test_damaged_tables_leave_the_module_unimported_until_they_are_whole() -> None:
    out = subprocess.run(
        [sys.executable, "-c", DAMAGED_TABLES],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()
    names = ["Z_PIECE", "Z_PIECE", "Z_BLACK", "Z_FIRST", "Z_PHASE2", "Z_PHASE2", "NBR"]
    names += ["SOURCE", "SOURCE", "CONE_UP", "ROW_OF"]
    assert len(out) == len(names) + 1, out
    for line, name in zip(out, names, strict=False):
        assert line.startswith(name + ":"), (name, line)
    assert out[-1] == "imported"

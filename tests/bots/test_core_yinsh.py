"""The compiled core of Yinsh (bots._core_yinsh) equals the reference, position by position.

``inspect`` loads a reference State and Evaluator into the core and reports, at the start and
after each move of a line, what the core's rules and evaluation say; every field must equal what
games/yinsh.py and bots/eval/yinsh.py say about the same position. The lines are seeded random
games from the start, from the bench positions and from the rules' test cases, in both variants,
with the default evaluator and with one of other weights; the test counts the phases, endings
and evaluation terms it went through and asserts that each was reached.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

import games
from bots.compiled import CompiledMemory, Core, compiled_search, core_for
from bots.engine import Limits, never_stop
from bots.eval.yinsh import BLITZ_WEIGHTS, Weights, YinshEvaluator, terms
from bots.search import LazyMoves, Searcher, SearchMemory, SearchOptions, TranspositionTable
from enginesrv.search.bench import BENCH, SEARCH_BENCH
from games import Move, State
from games.base import perft
from games.native import native_module
from games.yinsh import WINDOW_POINTS, YinshGame, YinshState
from tests.bots.inspect_rows import reference_row
from tests.bots.test_compiled import _figures

_MODULE = native_module("bots._core_yinsh")
CORE = cast(Core, _MODULE)
pytestmark = pytest.mark.skipif(
    _MODULE is None, reason="bots._core_yinsh is not built (or ENGINESRV_PURE_PYTHON is set)"
)

CASES = Path(__file__).parent.parent / "data" / "yinsh" / "yinsh-cases.jsonl"
VARIANTS = ("yinsh", "yinsh+blitz")

TUNED = YinshEvaluator(
    Weights(ring=900, race=40, race_pool=30, tempo=-20, marker=50, threat_next=500),
    BLITZ_WEIGHTS._replace(threat_win_next=4000, three_mixed_next=-9, four_flip_other=7),
    Weights(mobility=5, centre1=99, centre2=-3, centre3=1, tempo=17, contact=-5),
)
"""Other weights in all three sets, so that each set is read from the evaluator."""


def note(state: YinshState, evaluator: YinshEvaluator, seen: Counter[str]) -> None:
    """Count what this position exercises (phases, endings, terms, advice)."""
    outcome = state.outcome()
    if outcome is not None:
        seen[outcome.reason] += 1
        seen["winner " + outcome.winner] += 1
        return
    seen["phase " + state.phase()] += 1
    seen[state.game.name] += 1
    rows = state.pending_rows(state.to_move())
    if len(rows) > 1:
        seen["several rows"] += 1
        masks = [sum(1 << p for p in WINDOW_POINTS[w]) for w in rows]
        if any(a & b for i, a in enumerate(masks) for b in masks[i + 1 :]):
            seen["crossing rows"] += 1
    if state.phase() in "mn" and evaluator.noisy_moves(state, LazyMoves(state)):
        seen["row-completing moves"] += 1
    t = terms(state)
    if t.threat_w or t.threat_b:
        seen["ring threat"] += 1
        if t.target - 1 in (t.removed_w, t.removed_b):
            seen["ring threat near the win"] += 1
    if t.pool < 16 and t.removed_w != t.removed_b:
        seen["race"] += 1


def random_line(state: State, seed: int, plies: int) -> list[Move]:
    """A seeded random line of at most ``plies`` moves from ``state`` (left unchanged)."""
    rng = random.Random(seed)
    line: list[Move] = []
    while not state.is_terminal() and len(line) < plies:
        moves = state.legal_moves()
        move = moves[rng.randrange(len(moves))]
        state.push(move)
        line.append(move)
    for _ in line:
        state.pop()
    return line


def check_line(
    state: YinshState, evaluator: YinshEvaluator, line: list[Move], seen: Counter[str]
) -> None:
    """The core's report along ``line`` equals the reference's at every ply."""
    got = CORE.inspect(state, evaluator, line)
    assert len(got) == len(line) + 1
    for ply, row in enumerate(got):
        want = reference_row(state, evaluator)
        assert row == want, f"ply {ply} of {line}: {state.to_string()}"
        note(state, evaluator, seen)
        if ply < len(line):
            state.push(line[ply])
    for _ in line:
        state.pop()


def read_cases() -> list[dict[str, Any]]:
    with CASES.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def starts() -> Iterator[tuple[str, str, int]]:
    """(variant, position, games from it): the start, the bench positions, the rules' cases."""
    for variant in VARIANTS:
        yield variant, games.load(variant).start_position, 40
        for case in BENCH["yinsh"] + SEARCH_BENCH["yinsh"]:
            yield variant, case.position, 8
    for record in read_cases():
        for position in dict.fromkeys((record["pos"], record["after"])):
            yield record["variant"], position, 1


WANTED = (
    *(f"phase {p}" for p in "pmnxrXR"),
    *VARIANTS,
    *("target-reached", "pool-empty", "two-passes", "winner p1", "winner p2", "winner draw"),
    *("several rows", "crossing rows", "row-completing moves"),
    *("ring threat", "ring threat near the win", "race"),
)
"""What the random games must go through: every phase, ending and result, and the evaluation's
rarer cases."""


@pytest.mark.parametrize("evaluator", [YinshEvaluator(), TUNED], ids=["default", "tuned"])
def test_inspect_equals_the_reference_along_random_games(evaluator: YinshEvaluator) -> None:
    seen: Counter[str] = Counter()
    for index, (variant, position, count) in enumerate(starts()):
        state = games.load(variant).state_from_string(position)
        assert isinstance(state, YinshState)
        for seed in range(count):
            check_line(state, evaluator, random_line(state, index * 100 + seed, 200), seen)
    assert [w for w in WANTED if not seen[w]] == [], dict(seen)


@pytest.mark.parametrize("variant", VARIANTS)
def test_perft_equals_the_reference_on_the_bench_positions(variant: str) -> None:
    game = games.load(variant)
    for case in BENCH["yinsh"]:
        state = game.state_from_string(case.position)
        depth = min(case.depth, 2 if case.name == "start" else 3)
        assert CORE.perft(state, depth) == perft(state, depth), case.name
        assert state.ply() == 0


def test_playouts_finish_their_games_and_leave_the_state() -> None:
    state = games.load("yinsh").new_state()
    key = state.key()
    finished, plies = CORE.playouts(state, 50, 7)
    assert finished == 50
    assert 50 * 40 < plies <= 50 * YinshGame.max_plies
    assert CORE.playouts(state, 50, 7) == (finished, plies)
    assert state.key() == key


def one_line(error: BaseException) -> str:
    text = str(error)
    assert text
    assert "\n" not in text
    return text


def test_another_games_state_is_refused() -> None:
    with pytest.raises(TypeError) as caught:
        CORE.perft(games.load("yohoho").new_state(), 1)
    assert "YinshState" in one_line(caught.value)


@pytest.mark.parametrize(
    ("slot", "value", "named"),
    [
        ("_key", 12345, "_key"),
        ("_wr", 1 << 90, "_wr"),
        ("_pool", 50, "_pool"),
        ("_phase", 9, "_phase"),
        ("_side", -1, "_side"),
        ("_rows_w", (3,), "_rows_w"),
        ("_target", 2, "_target"),
        ("_rem_w", "1", "_rem_w"),
    ],
)
def test_a_damaged_state_is_refused(slot: str, value: object, named: str) -> None:
    state = games.load("yinsh").state_from_string(BENCH["yinsh"][2].position)
    setattr(state, slot, value)
    with pytest.raises((ValueError, TypeError)) as caught:
        CORE.inspect(state, YinshEvaluator(), [])
    assert named in one_line(caught.value)


def test_a_foreign_or_damaged_evaluator_is_refused() -> None:
    state = games.load("yinsh").new_state()
    with pytest.raises(TypeError) as caught:
        CORE.inspect(state, cast(YinshEvaluator, object()), [])
    assert "YinshEvaluator" in one_line(caught.value)
    short = YinshEvaluator()
    short.blitz_weights = cast(Weights, (1, 2, 3))
    with pytest.raises(ValueError, match="blitz_weights"):
        CORE.inspect(state, short, [])
    huge = YinshEvaluator(Weights(ring=1 << 40))
    with pytest.raises(ValueError, match="weights") as caught_huge:
        CORE.inspect(state, huge, [])
    one_line(caught_huge.value)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_search_with_other_weights_equals_the_reference(variant: str) -> None:
    """The search of bots.compiled over this core, with the tuned evaluator, on the bench
    positions: the same move, score, nodes and line as the Python search."""
    core = core_for(variant)
    assert core is not None
    game = games.load(variant)
    for case in SEARCH_BENCH["yinsh"]:
        state = game.state_from_string(case.position)
        table = TranspositionTable(1 << 12)
        options = SearchOptions(aspiration=TUNED.aspiration)
        limits = Limits(depth=case.depth)
        reference = Searcher(
            state.copy(),
            evaluator=TUNED,
            memory=SearchMemory(table),
            limits=limits,
            stop=never_stop,
            on_info=lambda info: None,
            options=options,
        ).run()
        compiled = compiled_search(
            core,
            state.copy(),
            evaluator=TUNED,
            memory=CompiledMemory(core, table.size),
            limits=limits,
            stop=never_stop,
            on_info=lambda info: None,
            options=options,
        )
        assert _figures(compiled) == _figures(reference), case.name


DAMAGE = """
import importlib, json
import bots.eval.yinsh as evaluation
import games.yinsh as rules
from games.native import native_module
def attempt():
    try:
        importlib.import_module("bots._core_yinsh")
    except ValueError as error:
        return str(error)
    return "imported"
windows = list(rules.WINDOW_POINTS)
windows[7] = windows[8]
damages = [
    (rules, "Z_TURN", rules.Z_TURN[:23]),
    (rules, "Z_RING", (rules.Z_RING[0], (1 << 64,) * rules.N_POINTS)),
    (rules, "Z_WINDOW", (rules.Z_WINDOW[1], rules.Z_WINDOW[0])),
    (rules, "WINDOW_POINTS", tuple(windows)),
    (rules, "COORDS", rules.COORDS[::-1]),
    (evaluation, "C2", evaluation.C3),
    (evaluation, "_PLACEMENT_RANK", (0,) * rules.N_POINTS),
    (rules, "Z_FLIP", None),
    (rules, "N_WINDOWS", "123"),
    (evaluation, "C1", -1),
]
out = []
for module, name, value in damages:
    saved = getattr(module, name)
    if value is None:
        delattr(module, name)
    else:
        setattr(module, name, value)
    out.append([name, attempt()])
    setattr(module, name, saved)
saved = rules.Z_TURN
rules.Z_TURN = ()
out.append(["absent when damaged", native_module("bots._core_yinsh") is None])
rules.Z_TURN = saved
out.append(["none", attempt()])
print(json.dumps(out))
"""


def test_a_damaged_table_stops_the_import_with_its_name() -> None:
    """core_init checks what it reads from the reference modules: a damaged, missing or
    mistyped table is a ValueError naming it and no module (native_module then answers None:
    the reference runs); once repaired, the module imports."""
    proc = subprocess.run(
        [sys.executable, "-c", DAMAGE], capture_output=True, text=True, check=True, timeout=120
    )
    results = json.loads(proc.stdout)
    assert results[-2:] == [["absent when damaged", True], ["none", "imported"]]
    for name, message in results[:-2]:
        assert message.startswith(name + ":"), (name, message)
        one_line(ValueError(message))

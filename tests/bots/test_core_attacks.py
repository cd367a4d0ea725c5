"""The compiled cores (native/core/) under attack: positions the parsers accept but play rarely
reaches, limits at their extremes, and hostile callers of the module functions (wrong types,
damaged or misaligned memory, callables that raise or change things under the search). Each
must end in the reference's answer or a clean Python exception, never a crash or a silent
difference. What crashed the interpreter runs in a child process."""

from __future__ import annotations

import math
import mmap
import os
import random
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import CompiledMemory, Core, compiled_search, core_for
from bots.engine import Limits, never_stop
from bots.eval import evaluator_for
from bots.search import CHECK_EVERY, Searcher, SearchMemory, SearchOptions, TranspositionTable
from games import State
from games.yinsh import RAYS as YINSH_RAYS
from games.yohoho import COORDS as YOHOHO_COORDS
from tests.bots.inspect_rows import reference_row
from tests.bots.test_compiled import _figures

ROOT = Path(__file__).resolve().parents[2]
GAMES = ("yinsh", "yohoho", "yoxii")
YOXII_DRAW = "ba1/B1BAT/2AddC1/1B1aCBc/cBcc1C1/a1dCA/1Cc b t w:2003 b:2400"
"""Near the end of a game that is drawn: every iteration to any depth scores 0 and is not a
proven result, so a deep search runs all its iterations over a small tree."""


def _core(name: str) -> Core:
    core = core_for(name)
    if core is None:
        pytest.skip(f"no compiled core of {name} (not built, or ENGINESRV_PURE_PYTHON)")
    return core


def _both(name: str, state: State, limits: Limits, options: SearchOptions | None = None) -> None:
    """The reference's and the core's search of ``state`` (tables of the same slots) agree."""
    core = _core(name)
    evaluator = evaluator_for(name)
    options = options or SearchOptions(aspiration=evaluator.aspiration)
    memory = SearchMemory(TranspositionTable(0))
    reference = Searcher(
        state.copy(),
        evaluator=evaluator,
        memory=memory,
        limits=limits,
        stop=never_stop,
        on_info=lambda info: None,
        options=options,
    ).run()
    compiled = compiled_search(
        core,
        state.copy(),
        evaluator=evaluator_for(name),
        memory=CompiledMemory(core, memory.table.size),
        limits=limits,
        stop=never_stop,
        on_info=lambda info: None,
        options=options,
    )
    assert _figures(compiled) == _figures(reference)


def _arguments(name: str, **changes: object) -> dict[str, object]:
    """The keyword arguments of a core's ``search`` (a depth-2 search from the start)."""
    core = _core(name)
    memory = CompiledMemory(core, 1024)
    arguments: dict[str, object] = {
        "state": games.load(name).new_state(),
        "evaluator": evaluator_for(name),
        "table": memory.table,
        "history": memory.history,
        "age": 1,
        "generation": 1,
        "depth": 2,
        "nodes": None,
        "deadline": None,
        "target": None,
        "search_forced": False,
        "clock": lambda: 0.0,
        "stop": never_stop,
        "report": lambda *figures: None,
        "quiescence": True,
        "aspiration": 50,
    }
    arguments.update(changes)
    return arguments


def _search(name: str, **changes: object) -> Any:
    return _core(name).search(**_arguments(name, **changes))  # type: ignore[arg-type]


def _child(code: str) -> str:
    """The output of ``code`` run by a fresh interpreter on this checkout's build (a crash
    there fails the test rather than the run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout.strip()


# -- findings: each failed before its fix -------------------------------------------------------


@pytest.mark.parametrize("name", ["yohoho", "yoxii"])
def test_a_wide_aspiration_searches_as_the_reference(name: str) -> None:
    """A window of guess +- 2**31 - 1 overflowed the int it was passed in (search.h)."""
    state = games.load(name).new_state()
    _both(name, state, Limits(depth=3), SearchOptions(aspiration=2**31 - 1))


def test_a_depth_beyond_max_ply_is_searched_as_the_reference() -> None:
    """``go depth 300`` is a valid request: the core refused any depth over 128 (search.h)."""
    _both("yoxii", games.load("yoxii").state_from_string(YOXII_DRAW), Limits(depth=300))
    bot = AlphaBeta()
    result = bot.search(games.load("yoxii").new_state(), Limits(depth=10**12, nodes=3000))
    assert result.move is not None


@pytest.mark.parametrize("name", GAMES)
def test_a_generation_is_read_whole(name: str) -> None:
    """``generation`` was read modulo 2**64 (the "k" format): 2**64 + 1 searched as 1."""
    with pytest.raises(ValueError, match="generation"):
        _search(name, generation=2**64 + 1)
    with pytest.raises(TypeError, match="generation"):
        _search(name, generation=1.0)


@pytest.mark.parametrize("name", GAMES)
def test_memory_that_is_not_aligned_is_refused(name: str) -> None:
    """A view into a buffer at an odd offset: entries were read and written misaligned."""
    core = _core(name)
    memory = CompiledMemory(core, 1024)
    table = memoryview(bytearray(len(memory.table) + 1))[1:]
    history = memoryview(bytearray(len(memory.history) + 4))[4:]
    with pytest.raises(ValueError, match="aligned"):
        _search(name, table=table)
    with pytest.raises(ValueError, match="aligned"):
        _search(name, history=history)


def _counts(core: Core, history: bytearray | mmap.mmap) -> dict[int, int]:
    """The history's counts by slot offset (the slots that hold a move)."""
    out: dict[int, int] = {}
    for offset in range(core.HISTORY_HEADER_BYTES, len(history), core.HISTORY_SLOT_BYTES):
        move1, count = struct.unpack_from("qq", history, offset)
        if move1:
            out[offset] = count
    return out


@pytest.mark.parametrize("name", GAMES)
def test_history_counts_at_the_top_stay_there(name: str) -> None:
    """A history handed over with counts of 2**63 - 1 (the memory is the caller's): adding to
    them overflowed (signed overflow; the build's -fwrapv made them negative)."""
    core = _core(name)
    memory = CompiledMemory(core, 1024)
    _search(name, table=memory.table, history=memory.history, depth=3)
    counts = _counts(core, memory.history)
    assert counts
    top = 2**63 - 1
    for offset in counts:  # the moves that cut off here, which will again
        struct.pack_into("q", memory.history, offset + 8, top)
    _search(name, table=memory.table, history=memory.history, depth=3, generation=2)
    after = _counts(core, memory.history)
    assert all(after[offset] == top for offset in counts)


@pytest.mark.parametrize("name", GAMES)
def test_the_evaluator_is_required(name: str) -> None:
    """None searched and inspected with an evaluation of zero weights, without a word."""
    core = _core(name)
    with pytest.raises(TypeError):
        _search(name, evaluator=None)
    with pytest.raises(TypeError):
        core.inspect(games.load(name).new_state(), None, [])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", GAMES)
def test_a_state_subclass_is_refused(name: str) -> None:
    """A subclass may have other rules, which the reference plays and the core did not: Yoxii
    and Yohoho took any instance (Yinsh wanted the class itself)."""
    base = type(games.load(name).new_state())

    class Other(base):  # type: ignore[valid-type,misc]  # a class made at run time
        __slots__ = ()

        def legal_moves(self) -> list[int]:
            return list(super().legal_moves())[:1]

    state = games.load(name).new_state()
    state.__class__ = Other
    with pytest.raises(TypeError):
        _search(name, state=state)


def test_playouts_of_a_position_without_moves_end() -> None:
    """A Yoxii placer whose stock is emptied by hand has no move and is not over (the
    reference's search answers None): a playout divided by its zero moves (SIGFPE)."""
    _core("yoxii")
    out = _child(
        "import games\n"
        "from bots.compiled import core_for\n"
        "state = games.load('yoxii').state_from_string('3/5/3T3/7/7/5/3 w p w:5553 b:5553')\n"
        "state._stock = 0\n"
        "print(core_for('yoxii').playouts(state, 3, 1))\n"
    )
    assert out == "(0, 0)"


MEDDLING = """
import games
from bots.compiled import core_for
from bots.eval import evaluator_for

name = {name!r}
state = games.load(name).new_state()
walk, moves = state.copy(), []
for _ in range(12):
    moves.append(walk.legal_moves()[0])
    walk.push(moves[-1])


class Meddling:
    # a table or weights whose reading runs Python code that empties the list of moves
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, attr):
        moves.clear()
        return getattr(self.inner, attr)

    def __len__(self):
        moves.clear()
        return len(self.inner)

    def __getitem__(self, i):
        moves.clear()
        return self.inner[i]


evaluator = evaluator_for(name)
evaluator.weights = Meddling(evaluator.weights)
print(len(core_for(name).inspect(state, evaluator, moves)))
"""


@pytest.mark.parametrize("name", GAMES)
def test_inspect_keeps_its_moves_while_the_evaluator_loads(name: str) -> None:
    """Loading the evaluator (or a state) may run Python code: code that emptied the list of
    moves made inspect read past its end (a crash)."""
    _core(name)
    assert _child(MEDDLING.format(name=name)) == "13"


# -- angles that held -------------------------------------------------------------------------


def _max_moves(name: str) -> int:
    value = getattr(_core(name), "MAX_MOVES")  # noqa: B009  (not in the Core protocol)
    assert isinstance(value, int)
    return value


def test_the_move_arrays_hold_the_worst_positions() -> None:
    """CORE_MAX_MOVES against the most moves a parsed position can have: Yinsh 5 rings of at
    most the longest rays (or 85 placements, 123 rows); Yohoho an Admiral (5), 2 Galleons (10
    each), 4 Chebecs (15 each), a Rock (its rays) and 6 captures; Yoxii 4 values on 32 empty
    squares around a shut-in Totem (R6), which the core lists as the reference does."""
    yinsh_rays = max(sum(len(ray) for ray in rays) for rays in YINSH_RAYS)
    assert max(5 * yinsh_rays, 85, 123) < _max_moves("yinsh")
    cells = set(YOHOHO_COORDS)
    rock = 0
    for x, y in cells:
        reach = 0
        for dx, dy in ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1)):
            step = 1
            while (x + step * dx, y + step * dy) in cells:
                reach += 1
                step += 1
        rock = max(rock, reach)
    assert 5 + 2 * 10 + 4 * 15 + rock + 6 < _max_moves("yohoho")
    yoxii = games.load("yoxii")
    state = yoxii.state_from_string("TA1/aBb2/7/7/7/5/3 w p w:4453 b:4453")
    rows = _core("yoxii").inspect(state, evaluator_for("yoxii"), [])
    assert rows == [reference_row(state, evaluator_for("yoxii"))]
    assert len(state.legal_moves()) == 4 * 32 < _max_moves("yoxii")


class _Clock:
    """A clock that moves ``step`` seconds at each reading (backwards first, if asked)."""

    def __init__(self, step: float, back: int = 0) -> None:
        self.now = 1000.0
        self.step = step
        self.back = back

    def __call__(self) -> float:
        if self.back:
            self.back -= 1
            self.now -= 1.0
        else:
            self.now += self.step
        return self.now


@pytest.mark.parametrize("name", GAMES)
def test_a_deadline_is_kept_on_the_injected_clock(name: str) -> None:
    """Under a deadline the core stops at the first look past it, even on a clock that ran
    backwards first (the reference's deadline is measured from the start's reading)."""
    for back in (0, 3):
        clock = _Clock(0.001, back)
        raw = _search(name, depth=None, deadline=0.05, clock=clock)
        stopped, elapsed = raw[7], raw[9]
        assert stopped
        assert 0.05 <= elapsed <= 0.05 + 3 * clock.step


@pytest.mark.parametrize("name", GAMES)
def test_stop_is_polled_every_check_at_most(name: str) -> None:
    polls = [0]

    def stop() -> bool:
        polls[0] += 1
        return polls[0] > 3

    raw = _search(name, depth=None, stop=stop)
    assert raw[7]  # stopped
    assert raw[4] <= 4 * CHECK_EVERY


def _resize(buffer: bytearray) -> Callable[[], bool]:
    def stop() -> bool:
        buffer.extend(b"\0" * 24)
        return False

    return stop


@pytest.mark.parametrize("name", GAMES)
def test_hostile_arguments_end_in_exceptions(name: str) -> None:
    class Bad:
        def __index__(self) -> int:
            raise ZeroDivisionError

        def __float__(self) -> float:
            raise ZeroDivisionError

        def __bool__(self) -> bool:
            raise ZeroDivisionError

    def raising() -> bool:
        raise KeyError("stop broke")

    core = _core(name)
    table = bytearray(len(CompiledMemory(core, 1024).table))
    closing = mmap.mmap(-1, len(table))
    cases: list[tuple[dict[str, object], type[BaseException] | tuple[type[BaseException], ...]]] = [
        ({"state": object()}, (TypeError, AttributeError)),
        ({"evaluator": evaluator_for("yinyang")}, TypeError),
        ({"table": [0] * 24}, TypeError),
        ({"age": -1}, ValueError),
        ({"age": 2**70}, OverflowError),
        ({"age": 1.5}, TypeError),
        ({"depth": -1}, ValueError),
        ({"depth": 2.0}, TypeError),
        ({"depth": Bad()}, TypeError),
        ({"nodes": -5}, ValueError),
        ({"nodes": 2**64}, ValueError),
        ({"deadline": math.nan}, ValueError),
        ({"deadline": Bad()}, ZeroDivisionError),
        ({"target": -0.5}, ValueError),
        ({"search_forced": Bad()}, ZeroDivisionError),
        ({"quiescence": Bad()}, ZeroDivisionError),
        ({"aspiration": 2**31}, OverflowError),
        ({"aspiration": -3}, ValueError),
        ({"clock": 5}, TypeError),
        ({"depth": None, "deadline": 1.0, "clock": Bad}, ZeroDivisionError),
        ({"depth": None, "deadline": 1.0, "clock": lambda: 10**400}, OverflowError),
        ({"stop": raising}, KeyError),
        ({"stop": Bad}, ZeroDivisionError),
        ({"report": lambda *a: 1 / 0}, ZeroDivisionError),
        ({"table": table, "depth": 4, "stop": _resize(table)}, BufferError),
        ({"table": closing, "depth": 4, "stop": closing.close}, BufferError),
    ]
    for changes, error in cases:
        with pytest.raises(error):
            _search(name, **changes)
    shared = bytearray(48)  # a table of 2 slots and a history of 2 in one buffer: in bounds
    state = games.load(name).new_state()
    assert _search(name, table=shared, history=shared)[0] in state.legal_moves()
    with pytest.raises(ValueError, match="not legal"):
        core.inspect(state, evaluator_for(name), [10**6])
    with pytest.raises(ValueError, match="move"):
        core.inspect(state, evaluator_for(name), [2**40])
    with pytest.raises(ValueError, match="too many"):
        core.inspect(state, evaluator_for(name), [0] * 5000)
    with pytest.raises(ValueError, match="depth"):
        core.perft(state, 10**3)
    with pytest.raises(OverflowError):
        core.perft(state, 2**40)
    with pytest.raises(ValueError, match="count"):
        core.playouts(state, -1, 0)
    with pytest.raises(ValueError, match="max_turns"):
        core.playouts(state, 1, 0, -1)
    with pytest.raises(TypeError):
        core.playouts(state, 1.0, 0)  # type: ignore[arg-type]  # wrong on purpose


@pytest.mark.parametrize("name", GAMES)
def test_damaged_entries_of_a_live_table_are_searched_through(name: str) -> None:
    """A table whose entries of this search are damaged while it runs (any score, move,
    depth and bound): the core ends its search with a legal move (the memory is the caller's,
    and run under the sanitizers this was free of undefined behaviour)."""
    core = _core(name)
    rng = random.Random(name)
    memory = CompiledMemory(core, 1024)
    state = games.load(name).new_state()
    for _ in range(12):
        state.push(rng.choice(state.legal_moves()))
    _search(name, state=state, table=memory.table, history=memory.history, depth=3)

    def damage() -> None:
        for offset in range(0, len(memory.table), core.TT_ENTRY_BYTES):
            key, _, _, _, _, age, generation = struct.unpack_from("<QiihBBI", memory.table, offset)
            if generation:
                score = rng.choice([2**31 - 1, -(2**31), 9_999_999, -9_999_999, 3])
                move = rng.choice([-1, 2**31 - 1, -(2**31), rng.randrange(1 << 15)])
                depth = rng.choice([2**15 - 1, -(2**15), 1, 40])
                bound = rng.choice([0, 1, 2, 255])
                struct.pack_into(
                    "<QiihBBI", memory.table, offset, key, score, move, depth, bound, age,
                    generation,
                )  # fmt: skip

    polls = [0]

    def meddle() -> bool:
        polls[0] += 1
        damage()
        return polls[0] > 1000  # the search looped for ever on a value outside its window

    damage()
    raw = _search(
        name, state=state, table=memory.table, history=memory.history, depth=4, stop=meddle
    )
    assert not raw[7]  # not stopped: it ended by itself
    assert raw[0] in state.legal_moves()


def test_node_limits_from_unusual_positions_equal_the_reference() -> None:
    """Node limits around the first look at them (CHECK_EVERY) from positions of the rules'
    examples that play rarely reaches: a jump into a shut pocket, a second sub-move pending."""
    yoxii = games.load("yoxii").state_from_string("3/5/4abc/3TA1d/4BCD/5/3 w t w:4442 b:4442")
    yohoho = games.load("yohoho").state_from_string(
        "1ccgrgcc1/8/4a4/8/9/8/4A4/7C/1C1GRGCC1 w 2:p2 0"
    )
    for nodes in (1, 127, 128, 129, 500):
        _both("yoxii", yoxii, Limits(nodes=nodes))
        _both("yohoho", yohoho, Limits(nodes=nodes))


def test_settings_that_are_not_ints_are_refused() -> None:
    """An evaluator of the reference's class whose weights are not ints (a float, a string,
    one too many): a TypeError or ValueError naming them, not a search on what they truncate
    to."""
    yinsh = evaluator_for("yinsh")
    yinsh.weights = yinsh.weights._replace(**{yinsh.weights._fields[0]: 1.5})  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="weights"):
        _search("yinsh", evaluator=yinsh)
    yinsh = evaluator_for("yinsh")
    yinsh.placement_weights = (*yinsh.placement_weights, 0)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="placement_weights"):
        _search("yinsh", evaluator=yinsh)
    yoxii = evaluator_for("yoxii")
    yoxii.weights = yoxii.weights._replace(mobility="15")  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="mobility"):
        _search("yoxii", evaluator=yoxii)
    yoxii = evaluator_for("yoxii")
    yoxii._solver.cap = 3000.0  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="cap"):
        _search("yoxii", evaluator=yoxii)

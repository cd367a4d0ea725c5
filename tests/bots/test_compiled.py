"""The compiled search (native/core/search.h) against the reference (bots/search.py).

The search itself is tested on the hash game (tests/bots/hashgame.py and its C twin
hashgame_core.c, built here with the system's compiler): transpositions, players acting several
plies in a row, terminals at any depth, positions that are not quiet and noisy moves, so every
branch of the search is taken. At fixed depths and node counts the two searches must agree on
everything: move, score, depth, seldepth, nodes, line, table use, every ``info``, and the history
they keep. Time is tested on injected clocks: the compiled search reads no other.
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from bots.compiled import CompiledMemory, Core, compiled_search
from bots.engine import Limits, SearchInfo, SearchResult, never_stop
from bots.search import DEFAULT_OPTIONS, Searcher, SearchMemory, SearchOptions, TranspositionTable
from tests.bots.hashgame import HashEvaluator, HashGame, HashState

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Core]:
    """The hash game's core, compiled as setup.py compiles the games' (no -m flags)."""
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.skip("no gcc to build the hash game's core")
    out = tmp_path_factory.mktemp("core") / (
        "hashgame_core" + sysconfig.get_config_var("EXT_SUFFIX")
    )
    command = [
        compiler,
        "-O1",
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wno-unused-parameter",
        "-fPIC",
        "-shared",
        f"-I{sysconfig.get_paths()['include']}",
        f"-I{ROOT / 'native'}",
        str(ROOT / "tests" / "bots" / "hashgame_core.c"),
        "-o",
        str(out),
    ]
    built = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert built.returncode == 0, built.stderr
    spec = importlib.util.spec_from_file_location("hashgame_core", out)
    assert spec is not None
    assert spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("hashgame_core", None)


def _figures(result: SearchResult) -> tuple[object, ...]:
    return (
        result.move,
        result.token,
        result.score,
        result.depth,
        result.seldepth,
        result.nodes,
        result.pv,
        result.hashfull,
        result.stopped,
        result.root_scores,
    )


def _info_figures(infos: list[SearchInfo]) -> list[tuple[object, ...]]:
    return [(i.depth, i.seldepth, i.score, i.nodes, i.pv, i.hashfull, i.line) for i in infos]


def _history(memory: CompiledMemory) -> dict[int, int]:
    """The compiled history as the reference's dict of move -> count."""
    out: dict[int, int] = {}
    data = memory.history
    header = memory.core.HISTORY_HEADER_BYTES
    for offset in range(header, len(data), memory.core.HISTORY_SLOT_BYTES):
        move1, value = struct.unpack_from("qq", data, offset)
        if move1:
            out[move1 - 1] = value
    return out


class Pair:
    """The reference and the compiled search of one game, each with its own memory of the
    same number of table slots."""

    def __init__(self, core: Core, evaluator: HashEvaluator, megabytes: int = 1) -> None:
        self.core = core
        self.evaluator = evaluator
        self.memory = SearchMemory(TranspositionTable(megabytes))
        self.compiled = CompiledMemory(core, self.memory.table.size)

    def both(
        self, state: HashState, limits: Limits, options: SearchOptions = DEFAULT_OPTIONS
    ) -> tuple[SearchResult, list[SearchInfo], SearchResult, list[SearchInfo]]:
        reference_infos: list[SearchInfo] = []
        compiled_infos: list[SearchInfo] = []
        reference = Searcher(
            state.copy(),
            evaluator=self.evaluator,
            memory=self.memory,
            limits=limits,
            stop=never_stop,
            on_info=reference_infos.append,
            options=options,
        ).run()
        compiled = compiled_search(
            self.core,
            state.copy(),
            evaluator=self.evaluator,
            memory=self.compiled,
            limits=limits,
            stop=never_stop,
            on_info=compiled_infos.append,
            options=options,
        )
        return reference, reference_infos, compiled, compiled_infos

    def assert_equal(
        self, state: HashState, limits: Limits, options: SearchOptions = DEFAULT_OPTIONS
    ) -> SearchResult:
        reference, reference_infos, compiled, compiled_infos = self.both(state, limits, options)
        assert _figures(compiled) == _figures(reference), (state.to_string(), limits)
        assert _info_figures(compiled_infos) == _info_figures(reference_infos)
        assert _history(self.compiled) == self.memory.history
        return reference


@pytest.mark.parametrize("reductions", [False, True])
@pytest.mark.parametrize("depth", [1, 2, 3, 5, 7])
def test_fixed_depth_searches_equal_the_reference(core: Core, depth: int, reductions: bool) -> None:
    searched = 0
    options = SearchOptions(reductions=reductions)
    for seed in range(120):
        pair = Pair(core, HashEvaluator())
        result = pair.assert_equal(
            HashGame(seed, length=12, width=6).new_state(), Limits(depth=depth), options
        )
        searched += result.nodes
    assert searched > 120 * depth  # real trees, not forced moves


def test_whole_games_with_memory_kept_equal_the_reference(core: Core) -> None:
    """Table and history carried from move to move, node limits that cut iterations short,
    quiescence on and off, narrow and wide windows."""
    plans = [
        (Limits(depth=6), SearchOptions(quiescence=True, aspiration=10)),
        (Limits(nodes=3000), SearchOptions(quiescence=False, aspiration=10)),
        (Limits(depth=8), SearchOptions(quiescence=True, aspiration=200)),
        (Limits(nodes=777), SearchOptions(quiescence=False, aspiration=1)),
        (Limits(depth=4, nodes=500), SearchOptions()),
        (Limits(depth=7), SearchOptions(aspiration=10, reductions=True)),
        (Limits(nodes=2000), SearchOptions(quiescence=False, aspiration=10, reductions=True)),
    ]
    cut_short = 0
    for seed in range(50):
        pair = Pair(core, HashEvaluator(spread=300))
        state = HashGame(seed, length=16, width=7).new_state()
        for limits, options in plans:
            if state.is_terminal():
                break
            result = pair.assert_equal(state, limits, options)
            cut_short += limits.nodes is not None and result.nodes >= limits.nodes
            state.push(result.move)  # type: ignore[arg-type]  # a position with moves
    assert cut_short > 10


def test_proven_results_and_small_tables_equal_the_reference(core: Core) -> None:
    """Deep searches of short games (wins and losses in plies, a search that stops once the
    result is proven) in a table small enough that entries are replaced."""
    proven = 0
    for seed in range(60):
        pair = Pair(core, HashEvaluator(), megabytes=0)  # 1024 slots
        result = pair.assert_equal(HashGame(seed, length=9, width=4).new_state(), Limits(depth=12))
        proven += result.score is not None and result.score.kind != "cp"
    assert proven > 10


def test_forced_and_finished_positions(core: Core) -> None:
    pair = Pair(core, HashEvaluator())
    game = HashGame(3, length=6, width=1)  # one move everywhere
    state = game.new_state()
    assert len(state.legal_moves()) == 1
    reference, _, compiled, compiled_infos = pair.both(state, Limits(depth=5))
    assert _figures(compiled) == _figures(reference)
    assert compiled.nodes == 0
    assert compiled.pv == (compiled.token,)
    assert not compiled_infos
    # an infinite search of a forced move still searches (to the end of this short game)
    assert pair.assert_equal(state, Limits()).nodes > 0
    # and so does an analysis's, for the score of the position
    scored = pair.assert_equal(state, Limits(depth=3, score_forced=True))
    assert scored.nodes > 0
    assert scored.score is not None
    assert scored.depth == 3
    while not state.is_terminal():
        state.push(state.legal_moves()[0])
    reference, _, compiled, _ = pair.both(state, Limits(depth=3))
    assert compiled == reference == SearchResult(None, None)


class FakeClock:
    """A clock that advances ``step`` seconds at each reading, counting its readings."""

    def __init__(self, step: float) -> None:
        self.now = 100.0
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.step
        return self.now


def _deep_game() -> HashState:
    return HashGame(11, length=100, width=8, ending=10**9).new_state()


def test_the_deadline_ends_the_search_on_the_injected_clock(core: Core) -> None:
    clock = FakeClock(0.0005)
    memory = CompiledMemory(core, 1 << 14)
    result = compiled_search(
        core,
        _deep_game(),
        evaluator=HashEvaluator(),
        memory=memory,
        limits=Limits(deadline=0.25, clock=clock),
        stop=never_stop,
        on_info=lambda info: None,
        options=SearchOptions(),
    )
    assert result.stopped
    assert result.move is not None
    assert result.depth >= 1
    # every reading is one step; the search starts at its second reading and ends at its first
    # look past the deadline (a reading for the interval, one for the deadline), then reads
    # the time it took
    elapsed = clock.now - (100.0 + 2 * clock.step)
    assert 0.25 <= elapsed <= 0.25 + 2 * clock.step + 1e-9
    assert abs(result.time - elapsed * 1000) <= 1


def test_the_target_ends_the_iterations(core: Core) -> None:
    """No new iteration once 60% of the target has passed; the result is not 'stopped'."""
    clock = FakeClock(0.0001)
    infos: list[SearchInfo] = []
    result = compiled_search(
        core,
        _deep_game(),
        evaluator=HashEvaluator(),
        memory=CompiledMemory(core, 1 << 14),
        limits=Limits(target=0.01, deadline=10.0, clock=clock),
        stop=never_stop,
        on_info=infos.append,
        options=SearchOptions(),
    )
    assert not result.stopped
    assert infos
    assert result.depth == infos[-1].depth
    assert infos[-1].time is not None
    assert infos[-1].time >= 6
    assert all(i.time is not None and i.time < 6 for i in infos[:-1])


def _stop_after(polls: int) -> tuple[Callable[[], bool], list[int]]:
    seen = [0]

    def stop() -> bool:
        seen[0] += 1
        return seen[0] > polls

    return stop, seen


@pytest.mark.parametrize("timed", [False, True])
def test_stop_is_obeyed_at_the_next_look(core: Core, timed: bool) -> None:
    """``stop`` is polled every CHECK_EVERY nodes at most (fewer under a deadline), and the
    search returns at the first poll that says stop, with the last completed iteration."""
    for polls in (0, 1, 5, 40):
        stop, seen = _stop_after(polls)
        clock = FakeClock(0.0)
        result = compiled_search(
            core,
            _deep_game(),
            evaluator=HashEvaluator(),
            memory=CompiledMemory(core, 1 << 14),
            limits=Limits(deadline=60.0, clock=clock) if timed else Limits(),
            stop=stop,
            on_info=lambda info: None,
            options=SearchOptions(),
        )
        assert result.stopped
        assert seen[0] == polls + 1
        assert result.nodes <= (polls + 1) * 128


def test_errors_of_the_callables_reach_the_caller(core: Core) -> None:
    def broken() -> bool:
        raise KeyError("stop broke")

    def broken_clock() -> float:
        raise ZeroDivisionError("clock broke")

    def search(stop: Callable[[], bool], limits: Limits) -> SearchResult:
        return compiled_search(
            core,
            _deep_game(),
            evaluator=HashEvaluator(),
            memory=CompiledMemory(core, 1024),
            limits=limits,
            stop=stop,
            on_info=lambda info: None,
            options=SearchOptions(),
        )

    with pytest.raises(KeyError, match="stop broke"):
        search(broken, Limits())
    with pytest.raises(ZeroDivisionError, match="clock broke"):
        search(never_stop, Limits(deadline=1.0, clock=broken_clock))


def test_bad_arguments_are_refused_with_their_names(core: Core) -> None:
    state = _deep_game()
    memory = CompiledMemory(core, 1024)

    def call(**changes: object) -> object:
        arguments: dict[str, object] = {
            "state": state,
            "evaluator": HashEvaluator(),
            "table": memory.table,
            "history": memory.history,
            "age": 1,
            "generation": 1,
            "depth": 2,
            "nodes": None,
            "deadline": None,
            "target": None,
            "search_forced": False,
            "clock": FakeClock(0.0),
            "stop": never_stop,
            "report": lambda *figures: None,
            "quiescence": True,
            "aspiration": 50,
        }
        arguments.update(changes)
        return core.search(**arguments)  # type: ignore[arg-type]  # wrong on purpose

    assert call() is not None
    cases: list[tuple[dict[str, object], type[Exception] | tuple[type[Exception], ...], str]] = [
        ({"table": bytearray(1000)}, ValueError, "table"),
        ({"table": b"\0" * len(memory.table)}, BufferError, "writable"),
        ({"history": bytearray(17)}, ValueError, "history"),
        ({"age": 256}, ValueError, "age"),
        ({"generation": 0}, ValueError, "generation"),
        ({"generation": 1 << 32}, (ValueError, OverflowError), "generation"),
        ({"depth": -1}, ValueError, "depth"),
        ({"depth": 10**30}, ValueError, "depth"),
        ({"nodes": "many"}, TypeError, "nodes"),
        ({"deadline": -1.0}, ValueError, "deadline"),
        ({"aspiration": 0}, ValueError, "aspiration"),
        ({"stop": None}, TypeError, "callables"),
        ({"state": object()}, AttributeError, "game"),
    ]
    for changes, error, words in cases:
        with pytest.raises(error, match=words):
            call(**changes)


@pytest.mark.parametrize("megabytes", [1, 2, 16, 64, 300])
def test_a_memory_holds_no_more_than_its_hash(core: Core, megabytes: int) -> None:
    """Table and history together stay within the bot's ``Hash`` (the server shares its
    ``--max-hash`` among workers by it), and the table takes at least half of it."""
    memory = CompiledMemory.of_megabytes(core, megabytes)
    held = len(memory.table) + len(memory.history)
    assert held <= megabytes * 1024 * 1024
    assert len(memory.table) * 2 >= megabytes * 1024 * 1024 - len(memory.history)
    assert memory.slots & (memory.slots - 1) == 0


def test_clearing_a_memory_forgets_its_table_and_history(core: Core) -> None:
    pair = Pair(core, HashEvaluator())
    state = HashGame(4, length=12, width=6).new_state()
    first = pair.assert_equal(state, Limits(depth=5))
    assert bytes(pair.compiled.table).strip(b"\0")
    assert _history(pair.compiled)
    pair.compiled.clear()
    assert bytes(pair.compiled.table).strip(b"\0")  # the entries stay, of an old generation
    assert not _history(pair.compiled)
    assert pair.compiled.age == 0
    assert pair.compiled.generation == 2
    # a cleared memory searches as a fresh one
    fresh = Pair(core, HashEvaluator())
    again = compiled_search(
        core,
        state.copy(),
        evaluator=HashEvaluator(),
        memory=pair.compiled,
        limits=Limits(depth=5),
        stop=never_stop,
        on_info=lambda info: None,
        options=DEFAULT_OPTIONS,
    )
    assert _figures(again) == _figures(fresh.assert_equal(state, Limits(depth=5)))
    assert _figures(again) == _figures(first)


def test_the_last_generation_clears_the_table_for_real(core: Core) -> None:
    pair = Pair(core, HashEvaluator())
    pair.assert_equal(HashGame(4, length=12, width=6).new_state(), Limits(depth=4))
    pair.compiled.generation = (1 << 32) - 1
    pair.compiled.clear()
    assert pair.compiled.generation == 1
    assert not bytes(pair.compiled.table).strip(b"\0")

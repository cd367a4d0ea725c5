"""The compiled search cores: ``bots.search`` in C over each game's rules and evaluation in C.

A core (``bots._core_<game>``, built from native/core/) runs the search of
``bots.search.Searcher.run`` on its own copy of the position, with the same iterative
deepening, windows, transposition table, killer and history ordering and quiescence, and the
game's rules and evaluation compiled. The Python search stays the reference: at a fixed depth
or node count, given tables of the same number of slots, a core visits the same nodes in the
same order and returns the same move, score and line (tests/bots/test_compiled.py).

``core_for(game)`` gives a game's core, or None when it is not built, when
``ENGINESRV_PURE_PYTHON`` is set, or for a game without one (Yin Yang); the bot then searches on
the reference. What a bot keeps between searches (the table, the history of moves that cut off,
the table's age) is a ``CompiledMemory`` of plain zeroed memory that any core reads and writes.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

from bots.engine import InfoFn, Limits, SearchInfo, SearchResult, StopFn
from bots.eval import Evaluator
from bots.search import SearchOptions, root_scores, to_score
from games import Move, State
from games.native import native_module

HISTORY_SLOTS = 1 << 14
"""Slots of the history of moves that cut off. A history takes new moves up to three quarters
full (12,288), more than the distinct moves of any game with a core: Yinsh has at most 7,433
(85 placements, 85 x 84 ring moves, 123 rows, 85 ring removals), Yohoho 5,929 (77 x 76 slides
and 77 captures), Yoxii a few hundred. A full history would make the core differ from the
reference, whose dict grows."""

_CORES: dict[str, str] = {
    "yinsh": "bots._core_yinsh",
    "yinsh+blitz": "bots._core_yinsh",
    "yohoho": "bots._core_yohoho",
    "yoxii": "bots._core_yoxii",
}

Buffer: TypeAlias = bytearray | mmap.mmap
"""Writable memory a core keeps its table or history in."""

RawResult = tuple[
    Move, int, int, int, int, tuple[Move, ...], int, bool, bool, float,
    tuple[tuple[Move, int, int, int], ...],
]  # fmt: skip
"""move, value, depth, seldepth, nodes, pv, hashfull, stopped, forced, seconds, and per root
move searched (move, depth, value, bound)."""
"""What a core's ``search`` returns: move, value, depth, seldepth, nodes, pv, hashfull,
stopped, forced (a single legal move, answered without search), seconds on the clock."""


class Core(Protocol):
    """A compiled core module (native/core/search.h)."""

    TT_ENTRY_BYTES: int
    HISTORY_SLOT_BYTES: int
    HISTORY_HEADER_BYTES: int

    def search(  # noqa: PLR0913  (the C function's keyword arguments)
        self,
        *,
        state: State,
        evaluator: Evaluator,
        table: Buffer,
        history: Buffer,
        age: int,
        generation: int,
        depth: int | None,
        nodes: int | None,
        deadline: float | None,
        target: float | None,
        search_forced: bool,
        clock: object,
        stop: StopFn,
        report: object,
        quiescence: bool,
        aspiration: int,
        reductions: bool = False,
        lines: int = 1,
        root_moves: tuple[Move, ...] | None = None,
    ) -> RawResult | None: ...

    def inspect(
        self, state: State, evaluator: Evaluator, moves: list[Move], /
    ) -> list[tuple[object, ...]]: ...

    def perft(self, state: State, depth: int, /) -> int: ...

    def playouts(
        self, state: State, count: int, seed: int, max_turns: int | None = None, /
    ) -> tuple[int, int]: ...


def core_for(game: str) -> Core | None:
    """The compiled core of ``game``, or None (not built, turned off, or none for the game)."""
    name = _CORES.get(game)
    if name is None:
        return None
    return native_module(name)


def _zeroed(size: int) -> mmap.mmap:
    """``size`` bytes of zeroed memory that take no time to make: private anonymous pages the
    system zeroes as they are first touched (a bytearray would zero the whole table up front,
    which costs more than a short search)."""
    private = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    if private:
        return mmap.mmap(-1, size, flags=private)
    return mmap.mmap(-1, size)


def history_bytes(core: Core) -> int:
    """The size of a history of ``core``."""
    return core.HISTORY_HEADER_BYTES + HISTORY_SLOTS * core.HISTORY_SLOT_BYTES


@dataclass(slots=True)
class CompiledMemory:
    """What a bot keeps from one compiled search to the next (see ``bots.search.SearchMemory``,
    its reference): the transposition table, the history counts and the table's age."""

    core: Core
    slots: int
    table: mmap.mmap = field(init=False)
    history: mmap.mmap = field(init=False)
    age: int = 0
    generation: int = 1
    """Entries of other generations are empty: clearing the table is a new generation."""
    searched: bool = False

    def __post_init__(self) -> None:
        self.table = _zeroed(self.slots * self.core.TT_ENTRY_BYTES)
        self.history = _zeroed(self._history_bytes())

    @classmethod
    def of_megabytes(cls, core: Core, megabytes: int) -> CompiledMemory:
        """A memory of at most ``megabytes`` in all (the bot's ``Hash``): the history, and a
        table of as many slots as the rest holds (at least 1024)."""
        history = history_bytes(core)
        slots = max(1024, (megabytes * 1024 * 1024 - history) // core.TT_ENTRY_BYTES)
        return cls(core, 1 << (slots.bit_length() - 1))

    def _history_bytes(self) -> int:
        return history_bytes(self.core)

    def megabytes(self) -> float:
        """The memory held, in MiB."""
        return (len(self.table) + len(self.history)) / (1024 * 1024)

    def clear(self) -> None:
        """Forget every entry and every count (a new game). The table's pages stay: the next
        game finds them ready (a fresh page costs microseconds at first touch)."""
        if not self.searched:
            return
        self.generation += 1
        if self.generation >= 1 << 32:  # once in four billion games: zero it for real
            self.table = _zeroed(len(self.table))
            self.generation = 1
        self.history[:] = bytes(len(self.history))
        self.age = 0
        self.searched = False


def compiled_search(
    core: Core,
    state: State,
    *,
    evaluator: Evaluator,
    memory: CompiledMemory,
    limits: Limits,
    stop: StopFn,
    on_info: InfoFn,
    options: SearchOptions,
) -> SearchResult:
    """One search of ``state`` by ``core``: what ``bots.search.Searcher(...).run()`` returns."""

    def report(
        depth: int,
        seldepth: int,
        value: int,
        nodes: int,
        pv: tuple[Move, ...],
        full: int,
        seconds: float,
        line: int,
    ) -> None:
        on_info(
            SearchInfo(
                depth=depth,
                seldepth=seldepth,
                score=to_score(value),
                nodes=nodes,
                nps=int(nodes / seconds) if seconds > 0 else 0,
                time=int(seconds * 1000),
                pv=tokens(state, pv),
                hashfull=full,
                line=line or None,
            )
        )

    memory.age = (memory.age + 1) & 0xFF
    raw = core.search(
        state=state,
        evaluator=evaluator,
        table=memory.table,
        history=memory.history,
        age=memory.age,
        generation=memory.generation,
        depth=limits.depth,
        nodes=limits.nodes,
        deadline=limits.deadline,
        target=limits.target,
        search_forced=limits.score_forced or limits.is_infinite,
        clock=limits.clock,
        stop=stop,
        report=report,
        quiescence=options.quiescence,
        aspiration=options.aspiration,
        reductions=options.reductions,
        lines=limits.lines,
        root_moves=_allowed(state, limits),
    )
    if raw is None:
        return SearchResult(None, None)
    move, value, depth, seldepth, nodes, pv, hashfull, stopped, forced, seconds, scores = raw
    token = state.move_to_str(move)
    if forced:
        return SearchResult(move, token, pv=(token,))
    memory.searched = True
    return SearchResult(
        move=move,
        token=token,
        score=to_score(value) if depth else None,
        depth=depth,
        seldepth=seldepth,
        nodes=nodes,
        time=int(seconds * 1000),
        pv=tokens(state, pv) or (token,),
        hashfull=hashfull,
        stopped=stopped,
        root_scores=root_scores(state, {m: (d, v, b) for m, d, v, b in scores}),
    )


def _allowed(state: State, limits: Limits) -> tuple[Move, ...] | None:
    """The root moves the core may search: ``Limits.root_moves`` (or every legal move) less
    ``Limits.avoid_moves``; None: all (``bots.search.root_moves_of`` in the reference)."""
    if not limits.avoid_moves:
        # each once, as the reference takes them (the core holds at most CORE_MAX_MOVES)
        return None if limits.root_moves is None else tuple(dict.fromkeys(limits.root_moves))
    avoided = set(limits.avoid_moves)
    allowed = limits.root_moves if limits.root_moves is not None else state.legal_moves()
    return tuple(move for move in dict.fromkeys(allowed) if move not in avoided)


def tokens(state: State, pv: tuple[Move, ...]) -> tuple[str, ...]:
    """The tokens of ``pv`` from ``state``, up to the first move that is not legal where it
    stands (``bots.search.Searcher._tokens``)."""
    out: list[str] = []
    pushed = 0
    for move in pv:
        if move not in state.legal_moves():
            break
        out.append(state.move_to_str(move))
        state.push(move)
        pushed += 1
    for _ in range(pushed):
        state.pop()
    return tuple(out)

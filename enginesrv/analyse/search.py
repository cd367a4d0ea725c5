"""The searches of an analysis: each distinct position searched once on a pool of worker
processes, several at a time, each result kept as it comes in a file of its own
(``Found.store``) so that an analysis stopped at any point (Ctrl-C, ``kill -9``) goes on where
it stood: a position found there under the same limits is not searched again.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import trio

from bots.engine import Score
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import GRACE, WorkerPool

MAX_STORE_BYTES = 64 * 1024 * 1024
"""The largest progress file read back; a larger one is refused (it is no analysis's)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How long each position is searched: a fixed time (ms) or a fixed depth."""

    movetime: int | None = None
    depth: int | None = None

    def describe(self) -> str:
        return f"movetime={self.movetime}" if self.movetime is not None else f"depth={self.depth}"


@dataclass(frozen=True, slots=True)
class Found:
    """What the search of a position found: the best line's score (from the side to act),
    its move and line, and the depth reached."""

    score: Score
    best: str
    pv: tuple[str, ...]
    depth: int

    def to_json(self, key: str) -> str:
        score = [self.score.kind, self.score.value]
        data = {"key": key, "score": score, "best": self.best, "pv": self.pv, "depth": self.depth}
        return json.dumps(data, separators=(",", ":"))


def position_key(game: str, position: str, limits: Limits) -> str:
    """The key of a position searched under ``limits`` in the progress file."""
    text = "\n".join((game, position, limits.describe()))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def read_store(path: Path) -> dict[str, Found]:
    """The results a progress file holds; a line that does not read (the last one of a run
    killed while writing it) is left out.

    Raises:
        OSError: the file cannot be read, or is larger than ``MAX_STORE_BYTES``.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return {}
    if size > MAX_STORE_BYTES:
        raise OSError(f"{path}: larger than {MAX_STORE_BYTES} bytes: not an analysis's progress")
    found: dict[str, Found] = {}
    with path.open(encoding="utf-8", errors="replace") as file:
        for line in file:
            entry = _entry(line)
            if entry is not None:
                found[entry[0]] = entry[1]
    return found


def _entry(line: str) -> tuple[str, Found] | None:
    try:
        data = json.loads(line)
        kind, value = data["score"]
        pv = tuple(str(token) for token in data["pv"])
        if kind not in ("cp", "win", "loss") or not isinstance(value, int):
            return None
        found = Found(Score(kind, value), str(data["best"]), pv, int(data["depth"]))
        return str(data["key"]), found
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


async def search_positions(
    game: str,
    positions: Iterable[str],
    limits: Limits,
    *,
    workers: int,
    store: Path | None,
    on_found: Callable[[str, Found | None], None],
    options: tuple[tuple[str, str | None], ...] = (),
    timing: Timing | None = None,
) -> dict[str, Found]:
    """Search each position of ``positions`` (each once) under ``limits`` on ``workers``
    worker processes, and return what was found by position; ``on_found`` is told each
    position as it is done (None: its search failed). Results already in ``store`` are taken
    from it; new ones are appended to it as they come. ``timing`` gets the seconds the
    workers took to be ready and those of the whole.

    Raises:
        OSError: the progress file cannot be read or written.
    """
    timing = timing if timing is not None else Timing()
    began = time.monotonic()
    known = read_store(store) if store is not None else {}
    out: dict[str, Found] = {}
    waiting: collections.deque[str] = collections.deque()
    for position in dict.fromkeys(positions):
        hit = known.get(position_key(game, position, limits))
        if hit is not None:
            out[position] = hit
            on_found(position, hit)
        else:
            waiting.append(position)
    if not waiting:
        return out
    writer = None if store is None else store.open("a", encoding="utf-8")
    sink = _Sink(game, limits, out, writer, on_found)
    try:
        async with trio.open_nursery() as nursery:
            pool = WorkerPool(nursery, max(1, min(workers, len(waiting))))
            try:
                await pool.start()
                timing.ready = time.monotonic() - began
                async with trio.open_nursery() as lanes:
                    for lane in range(pool.size):
                        lanes.start_soon(_lane, pool, lane, waiting, options, sink)
            finally:
                await pool.aclose()
    finally:
        if writer is not None:
            writer.close()
    timing.total = time.monotonic() - began
    return out


@dataclass
class Timing:
    """Seconds an analysis's searches took: until the workers were ready, and in all."""

    ready: float = 0.0
    total: float = 0.0


@dataclass
class _Sink:
    """Where the lanes put what they find."""

    game: str
    limits: Limits
    out: dict[str, Found]
    writer: TextIO | None
    on_found: Callable[[str, Found | None], None]

    def put(self, position: str, found: Found | None) -> None:
        if found is not None:
            self.out[position] = found
            if self.writer is not None:
                key = position_key(self.game, position, self.limits)
                self.writer.write(found.to_json(key) + "\n")
                self.writer.flush()
                os.fsync(self.writer.fileno())
        self.on_found(position, found)


async def _lane(
    pool: WorkerPool,
    lane: int,
    waiting: collections.deque[str],
    options: tuple[tuple[str, str | None], ...],
    sink: _Sink,
) -> None:
    limits = sink.limits
    seconds = None if limits.movetime is None else limits.movetime / 1000
    while waiting:
        position = waiting.popleft()
        job = SearchJob(
            session=f"analyse-{lane}",
            game=sink.game,
            position=position,
            bot="alphabeta",
            options=options,
            depth=limits.depth,
            target=seconds,
            deadline=seconds,
            new_game=True,  # each position on a fresh table: a depth's result is the same
            score_forced=True,  # a forced move's position has a score too
            issued=time.monotonic(),
        )
        hard = None if seconds is None else trio.current_time() + seconds + 5 * GRACE
        outcome = await pool.search(job, on_info=_ignore, stop=trio.Event(), hard_deadline=hard)
        result = outcome.result
        found = None
        if result is not None and result.token is not None and result.score is not None:
            found = Found(result.score, result.token, result.pv, result.depth)
        sink.put(position, found)


def _ignore(info: object) -> None:
    del info

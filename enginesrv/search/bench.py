"""``enginesrv bench``: fixed benchmarks with a node-count signature.

The search bench (the default) runs alphabeta at a fixed depth on fixed positions of each game
(each line says whether the compiled core or the Python reference searched);
the rules bench (``--rules``) counts perft positions (the public push/pop/legal_moves path, the
last ply counted) and runs seeded random playouts (push to the end, then pop back). Every count
is deterministic, so the node total is a signature: it changes only when the search, an
evaluation, the rules or the benchmark change, while the times show the speed.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TextIO

import games
from bots.alphabeta import AlphaBeta
from bots.compiled import core_for
from bots.engine import Limits

MAX_PLAYOUT_PLIES = 10_000
"""A safety net for games the rules do not bound; a playout that hits it is counted as-is."""

PLAYOUT_TURNS: dict[str, int] = {"yohoho": 200, "yinyang": 200}
"""Per game, the turn cap of its issue's playout target ("random games of at most 200 turns");
a turn is a run of plies by one player. Games not listed play to the end (or the safety net)."""


@dataclass(frozen=True, slots=True)
class PerftCase:
    """One benchmark position: a name, a position string and a depth."""

    name: str
    position: str
    depth: int


YINSH_P10 = "4/7/5B2/6B2/8BW/6B2/4B1W2W/3W4W/8/7/4 w m 0-0 51"

BENCH: dict[str, tuple[PerftCase, ...]] = {
    "yinsh": (
        PerftCase("start", "4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51", 3),
        PerftCase("P10", YINSH_P10, 3),
        PerftCase(
            "P32", "4/2b4/bbb2b2/6B2/4BBb1bW/2BbbbbWW/4Bbwwww/2wwwwW1w/3bW3/7/4 w m 0-0 29", 3
        ),
        PerftCase("T7", "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41", 3),
    ),
    "yoxii": (PerftCase("rand-04", "3/DaA2/1d2b2/2C4/2T4/2C2/3 b t w:4532 b:4452", 7),),
    "yohoho": (
        PerftCase("start", "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1", 3),
        PerftCase("goal-step", "1c1g5/3g1A2/4a4/8/5GR2/2C1c3/r8/8/2CG2CC1 w 1 0", 4),
        PerftCase("arno", "3g1gc2/8/5r3/A4c2/4c4/3G4/3a1R3/1C1G4/2C4C1 b 1 0", 4),
    ),
    "yinyang": (
        PerftCase(
            "post-setup-default",
            "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
            "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1",
            2,
        ),
        PerftCase(
            "rand-29",
            "..b./b.ww/w.b./b... w start +w..w>...w,+.b.b>...b,-ww.w>.w.w,+wwbb>ww.b "
            "+bww.>.ww.,+.bww>.b.w,+b.w.>*,-wbwb>.bwb 8 10 36",
            4,
        ),
    ),
}
"""Quick perft positions per game (a few seconds in all)."""

DEEP: dict[str, tuple[PerftCase, ...]] = {
    "yinsh": (PerftCase("P10", YINSH_P10, 4),),
    "yoxii": (PerftCase("start", "3/5/7/3T3/7/5/3 w t w:5553 b:5553", 6),),
    "yohoho": (PerftCase("start", "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1", 4),),
}
"""The deep targets of the issues (``--deep``)."""


SEARCH_BENCH: dict[str, tuple[PerftCase, ...]] = {
    "yinsh": (
        PerftCase("start", "4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51", 2),
        PerftCase("P10", YINSH_P10, 3),
        PerftCase(
            "P32", "4/2b4/bbb2b2/6B2/4BBb1bW/2BbbbbWW/4Bbwwww/2wwwwW1w/3bW3/7/4 w m 0-0 29", 4
        ),
    ),
    "yohoho": (
        PerftCase("start", "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1", 4),
        PerftCase("arno", "3g1gc2/8/5r3/A4c2/4c4/3G4/3a1R3/1C1G4/2C4C1 b 1 0", 4),
    ),
    "yoxii": (
        PerftCase("start", "3/5/7/3T3/7/5/3 w t w:5553 b:5553", 4),
        PerftCase("rand-04", "3/DaA2/1d2b2/2C4/2T4/2C2/3 b t w:4532 b:4452", 5),
    ),
}
"""Search positions per game, with the depth alphabeta searches them to (a cleared bot each)."""


def random_playouts(
    game: games.Game, count: int, seed: int = 1, max_turns: int | None = None
) -> tuple[int, int]:
    """Play ``count`` seeded random games through push, then pop each back to the start.

    A game stops early after ``max_turns`` turns (None: no cap but ``MAX_PLAYOUT_PLIES``).

    Returns:
        (games finished by the rules, plies pushed).
    """
    rng = random.Random(seed)
    finished = 0
    plies = 0
    for _ in range(count):
        state = game.new_state()
        depth = 0
        turns = 0
        mover = state.to_move()
        while not state.is_terminal() and depth < MAX_PLAYOUT_PLIES:
            if max_turns is not None and turns >= max_turns:
                break
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
            depth += 1
            if max_turns is not None and state.to_move() != mover:
                mover = state.to_move()
                turns += 1
        finished += state.is_terminal()
        plies += depth
        while depth:
            state.pop()
            depth -= 1
    return finished, plies


def run_bench(
    names: list[str] | None, *, deep: bool, playouts: int, out: TextIO, err: TextIO
) -> int:
    """Run the benchmark for ``names`` (default: every game with bench positions).

    Returns the node total (the signature), which is also printed as the last line.
    """
    selected = names if names is not None else [n for n in games.available() if n in BENCH]
    total_nodes = 0
    total_time = 0.0
    for name in selected:
        game = games.load(name)
        cases = BENCH.get(name, ()) + (DEEP.get(name, ()) if deep else ())
        for case in cases:
            err.write(f"{name} {case.name} depth {case.depth} ...\n")
            state = game.state_from_string(case.position)
            started = time.perf_counter()
            leaves = games.perft(state, case.depth)
            elapsed = time.perf_counter() - started
            total_nodes += leaves
            total_time += elapsed
            out.write(
                f"{name} perft {case.name} depth {case.depth}: leaves {leaves} "
                f"seconds {elapsed:.3f} leaves/s {_rate(leaves, elapsed)}\n"
            )
        if playouts:
            err.write(f"{name} {playouts} random playouts ...\n")
            started = time.perf_counter()
            cap = PLAYOUT_TURNS.get(name)
            finished, plies = random_playouts(game, playouts, max_turns=cap)
            elapsed = time.perf_counter() - started
            total_nodes += plies
            total_time += elapsed
            out.write(
                f"{name} playouts {playouts}: {playout_ends(playouts, finished, cap)}; "
                f"plies {plies} seconds {elapsed:.3f} plies/s {_rate(plies, elapsed)}\n"
            )
    out.write(
        f"bench: nodes {total_nodes} time {round(total_time * 1000)} "
        f"nps {_rate(total_nodes, total_time)}\n"
    )
    return total_nodes


def playout_ends(count: int, finished: int, max_turns: int | None) -> str:
    """How ``count`` playouts ended, in words: ``finished`` reached the end of the game by the
    rules, the others stopped at the turn cap (or the ply safety net without one)."""
    ended = f"{finished} played to the end of the game"
    stopped = count - finished
    if not stopped:
        return ended
    if max_turns is None:
        return f"{ended}, {stopped} stopped at the {MAX_PLAYOUT_PLIES}-ply safety net"
    return f"{ended}, {stopped} stopped at the {max_turns}-turn cap"


def _search_kind(game: str) -> str:
    """Which search alphabeta runs for ``game``: the compiled core, or the Python reference
    (no core for the game, not built, or ``ENGINESRV_PURE_PYTHON``). Their tables differ in
    slots per megabyte, so their node counts may differ where entries collide."""
    return "compiled" if core_for(game) is not None else "python"


def _rate(count: int, seconds: float) -> int:
    return round(count / seconds) if seconds > 0 else 0


def run_search_bench(
    names: list[str] | None, *, depth: int | None, out: TextIO, err: TextIO
) -> int:
    """Search every bench position of ``names`` (default: all) with alphabeta at the
    position's depth (or ``depth``); print one line each and the signature line.

    One bot per game searches every position after a ``new_game``, which clears its table and
    history (the results are those of a fresh bot), twice: a first, untimed pass touches the
    table's memory and loads what a first search loads, as a bot's first game does; the second
    is timed.

    Returns the node total.
    """
    selected = names if names is not None else [n for n in games.available() if n in SEARCH_BENCH]
    total_nodes = 0
    total_time = 0.0
    for name in selected:
        game = games.load(name)
        bot = AlphaBeta()
        bot.set_option("Hash", "16")
        cases = [(case, depth if depth is not None else case.depth) for case in SEARCH_BENCH[name]]
        err.write(f"{name}: a first pass, untimed ...\n")
        for case, plies in cases:
            bot.new_game(game)
            bot.search(game.state_from_string(case.position), Limits(depth=plies))
        for case, plies in cases:
            err.write(f"{name} {case.name} depth {plies} ...\n")
            bot.new_game(game)
            state = game.state_from_string(case.position)
            started = time.perf_counter()
            result = bot.search(state, Limits(depth=plies))
            elapsed = time.perf_counter() - started
            total_nodes += result.nodes
            total_time += elapsed
            out.write(
                f"{name} {case.name} depth {plies}: nodes {result.nodes} "
                f"time {round(elapsed * 1000)} nps {_rate(result.nodes, elapsed)} "
                f"move {result.token} score {result.score} search {_search_kind(name)}\n"
            )
    out.write(
        f"bench: nodes {total_nodes} time {round(total_time * 1000)} "
        f"nps {_rate(total_nodes, total_time)}\n"
    )
    return total_nodes

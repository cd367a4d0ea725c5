"""The rules tools of the command line: ``perft``, ``moves``, ``show``, ``replay`` and
``bench``."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import TextIO

import games
from enginesrv.cli.common import CommandError
from enginesrv.event.records import RecordError
from enginesrv.event.sgf import read_record_file
from enginesrv.search.bench import run_bench, run_search_bench


def load_game(name: str) -> games.Game:
    """The game called ``name``, or a CommandError naming the known games."""
    try:
        return games.load(name)
    except games.UnknownGameError as exc:
        raise CommandError(f"game {name!r}: {exc.reason}") from None


def build_state(game: games.Game, pos: str | None, moves: Sequence[str]) -> games.State:
    """The position ``pos`` (or the start) after playing ``moves``, each checked."""
    try:
        # moves as anyone was shown them: a Yin Yang setup may be ``laws:?,?,?,?``
        return games.replay(game, pos, moves, shown=True)
    except games.InvalidPositionError as exc:
        raise CommandError(f"position {pos!r}: {exc.reason}") from None
    except games.ReplayError as exc:
        raise CommandError(str(exc)) from None


def seat_name(game: games.Game, seat: int) -> str:
    """``White (p1)`` and so on; ``nobody`` for a finished game."""
    if seat < 0:
        return "nobody (game over)"
    return f"{game.colours[seat]} (p{seat + 1})"


# ---------------------------------------------------------------------------------------------
# Commands


def cmd_perft(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv perft``."""
    state = build_state(load_game(args.game), args.pos, args.moves)
    depth: int = args.depth
    started = time.perf_counter()
    if args.divide and depth >= 1:
        total = 0
        for token, count in games.perft_divide(state, depth):
            out.write(f"{token} {count}\n")
            total += count
    else:
        total = games.perft(state, depth)
    elapsed = time.perf_counter() - started
    out.write(f"{total}\n")
    rate = total / elapsed if elapsed > 0 else 0.0
    err.write(f"perft {depth}: {total} leaves in {elapsed:.3f} s ({rate:,.0f} leaves/s)\n")


def cmd_moves(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv moves``: the sorted tokens, or for a huge move set (Yin Yang's setup,
    405^4 tokens) the line ``count N`` and one line telling how such a token is written."""
    del err
    listed_at_most = 100_000
    state = build_state(load_game(args.game), args.pos, args.moves)
    count = state.count_moves()
    if count > listed_at_most:
        out.write(f"count {count}\n")
        out.write((state.describe_moves() or "too many moves to list") + "\n")
        return
    for token in sorted(state.move_to_str(m) for m in state.legal_moves()):
        out.write(token + "\n")


def describe(state: games.State) -> str:
    """The text of ``enginesrv show``: board, side, phase, position string, outcome."""
    game = state.game
    lines = [
        state.render(),
        f"to act:   {seat_name(game, state.to_move())}",
        f"phase:    {state.phase()} ({state.phase_name()})",
        f"position: {state.to_string()}",
    ]
    outcome = state.outcome()
    if outcome is not None:
        lines.append(f"outcome:  {outcome}")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv show``."""
    del err
    state = build_state(load_game(args.game), args.pos, args.moves)
    out.write(describe(state) + "\n")


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv replay``."""
    del err
    game = load_game(args.game)
    path: str = args.file
    try:
        record = read_record_file(path)
    except RecordError as exc:
        raise CommandError(str(exc)) from None
    if record.game is not None and record.game != game.name:
        raise CommandError(f"{path}: the record is a {record.game!r} game, not {game.name!r}")
    start = record.start_position()
    try:
        state = games.replay(game, start, [entry.token for entry in record.moves])
    except games.InvalidPositionError as exc:
        raise CommandError(f"{path}: Start position {start!r}: {exc.reason}") from None
    except games.ReplayError as exc:
        line = record.moves[exc.number - 1].line
        raise CommandError(f"{path}:{line}: {exc}") from None
    final = state.to_string()
    if record.final is not None and record.final != final:
        raise CommandError(
            f"{path}: the moves lead to {final!r}, but the record's Final is {record.final!r}"
        )
    outcome = state.outcome()
    result = record.result()
    if outcome is not None and result.winner not in (None, "*", outcome.winner):
        raise CommandError(
            f"{path}: the game ends '{outcome.winner}' but the record's Result is {result.text!r}"
        )
    out.write(f"plies {len(record.moves)}\n")
    out.write(f"final {final}\n")
    out.write(f"outcome {outcome if outcome is not None else '* (the game is not over)'}\n")
    if result.text:
        out.write(f"result {result.text}\n")
    reason = record.headers.get("Reason")
    if reason:
        out.write(f"reason {reason}\n")


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv bench``."""
    names: list[str] = args.game or []
    for name in names:
        load_game(name)
    if args.rules:
        run_bench(names or None, deep=args.deep, playouts=args.playouts, out=out, err=err)
    else:
        run_search_bench(names or None, depth=args.depth, out=out, err=err)

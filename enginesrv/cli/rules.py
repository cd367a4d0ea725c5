"""The rules tools of the command line: ``perft``, ``moves``, ``show``, ``replay`` (game
records checked move by move) and ``bench``; and what the other commands share with them:
loading a game by name, playing moves on a position, naming a seat."""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Iterator, Sequence
from typing import TextIO

import games
from enginesrv.cli.common import CommandError
from enginesrv.event.play.records import Record, RecordError
from enginesrv.event.play.sgf import generate_records_file
from enginesrv.event.results.wording import cut, printable, quoted
from enginesrv.search.bench import run_bench, run_search_bench

MAX_POSITION = 400
"""The most characters of a position an error message quotes: the longest a game writes is
under 200 (a Yinsh board), so a quoted position read from a file is whole unless crafted."""


def load_game(name: str) -> games.Game:
    """The game called ``name``, or a CommandError naming the known games."""
    try:
        return games.load(name)
    except games.UnknownGameError as exc:
        raise CommandError(f"game {quoted(name)}: {exc.reason}") from None


def build_state(game: games.Game, pos: str | None, moves: Sequence[str]) -> games.State:
    """The position ``pos`` (or the start) after playing ``moves``, each checked."""
    try:
        # moves as anyone was shown them: a Yin Yang setup may be ``laws:?,?,?,?``
        return games.replay(game, pos, moves, shown=True)
    except games.InvalidPositionError as exc:
        raise CommandError(f"position {quoted(pos or '', MAX_POSITION)}: {exc.reason}") from None
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


class BadGameError(Exception):
    """A game whose record is bad: it does not replay (``replay``), or it is missing or cannot
    be read (``export``); ``line`` of the file (0: none) and the reason."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(line, reason)
        self.line = line
        self.reason = reason


def _board(label: str, state: games.State) -> str:
    return f"{label}\n{describe(state)}\n\n"


def _replay_record(
    game: games.Game,
    record: Record,
    *,
    ply: int | None,
    step: bool,
    short_ok: bool,
    out: TextIO,
) -> list[str]:
    """Replay one record, checking every move, its Final and its Result; the boards that
    ``ply`` or ``step`` ask for go to ``out`` as they are reached. A game shorter than
    ``ply`` is an error, or with ``short_ok`` a line saying so.

    Returns:
        The summary lines (plies, final, outcome, result, reason).

    Raises:
        BadGameError: the first thing that is wrong.
    """
    state = _start(game, record)
    if ply is not None and ply > len(record.moves):
        beyond = f"--ply {ply}: the game has {len(record.moves)} plies"
        if not short_ok:
            raise BadGameError(record.line, beyond)
        out.write(beyond + "\n")
    if step or ply == 0:
        out.write(_board("ply 0 (start)", state))
    for number, entry in enumerate(record.moves, 1):
        mover = seat_name(game, state.to_move())
        try:
            games.replay(game, state, [entry.token], first=number)
        except games.ReplayError as exc:
            raise BadGameError(entry.line, cut(str(exc))) from None
        if step or ply == number:
            notes = " ".join(f"{key}={value}" for key, value in entry.annotations)
            label = f"ply {number}: {entry.token} by {mover}" + (f"  ; {notes}" if notes else "")
            out.write(_board(printable(cut(label)), state))
    return _ending(record, state)


def _start(game: games.Game, record: Record) -> games.State:
    """The position ``record`` starts from.

    Raises:
        BadGameError: the record is of another game than ``game``, or its start position is
            refused.
    """
    if record.game is not None and record.game != game.name:
        raise BadGameError(
            record.line, f"the record is a {quoted(record.game)} game, not {game.name!r}"
        )
    start = record.start_position()
    try:
        return game.state_from_string(start) if start is not None else game.new_state()
    except games.InvalidPositionError as exc:
        raise BadGameError(
            record.line, f"Start position {quoted(start or '', MAX_POSITION)}: {cut(exc.reason)}"
        ) from None


def _ending(record: Record, state: games.State) -> list[str]:
    """The summary lines of ``record`` replayed to ``state``: plies, final, outcome, result,
    reason.

    Raises:
        BadGameError: the record's Final or Result is not where its moves lead.
    """
    final = state.to_string()
    if record.final is not None and record.final != final:
        raise BadGameError(
            record.line,
            f"the moves lead to {quoted(final, MAX_POSITION)}, but the record's Final is "
            f"{quoted(record.final, MAX_POSITION)}",
        )
    outcome = state.outcome()
    result = record.result()
    if outcome is not None and result.winner not in (None, "*", outcome.winner):
        raise BadGameError(
            record.line,
            f"the game ends '{outcome.winner}' but the record's Result is {quoted(result.text)}",
        )
    lines = [
        f"plies {len(record.moves)}",
        f"final {final}",
        f"outcome {outcome if outcome is not None else '* (the game is not over)'}",
    ]
    if result.text:
        lines.append(f"result {printable(cut(result.text))}")
    reason = record.headers.get("Reason")
    if reason:
        lines.append(f"reason {printable(cut(reason))}")
    return lines


def _players(record: Record) -> str:
    p1, p2 = record.headers.get("P1"), record.headers.get("P2")
    return printable(f": {cut(p1)} vs {cut(p2)}") if p1 and p2 else ""


MAX_BAD_GAMES = 10
"""``replay`` of a file of several games stops checking at this bad game: each bad game is
reported, up to this many, and a crafted file of bad ones is not read to its end."""


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv replay``: every record of the file, or the one ``--game`` picks.

    A file of one record prints its summary as it always did. A file of several gives each
    game a block headed ``game K (line L)``, a bad game's block ending in ``error REASON``,
    then ``checked N games, B bad``; the first bad game is the command's error, and the check
    stops at the ``MAX_BAD_GAMES``-th. The file is read a record at a time
    (``generate_records_file``): a record that cannot be read is the command's error when it
    is reached.
    """
    del err
    game = load_game(args.game)
    path: str = args.file
    records = generate_records_file(path)
    # the record after the first tells whether the file holds several
    pair = (_next_record(records), _next_record(records))
    ahead = [record for record in pair if record is not None]
    several = len(ahead) > 1
    picked: int | None = args.pick
    chosen = _chosen(path, records, ahead, picked)
    # several games checked in one go: a bad one is reported in its block, and the next checked
    every = several and picked is None
    first_bad: CommandError | None = None
    bad = checked = 0
    for number, record in chosen:
        checked += 1
        if several:
            out.write(f"game {number} (line {record.line}){_players(record)}\n")
        try:
            lines = _replay_record(
                game, record, ply=args.ply, step=args.step, short_ok=every, out=out
            )
        except BadGameError as exc:
            where = f"{path}:{exc.line}" if exc.line else path
            error = CommandError(
                f"{where}: game {number}: {exc.reason}" if several else f"{where}: {exc.reason}"
            )
            if not every:
                raise error from None
            out.write(f"error line {exc.line or record.line}: {printable(exc.reason)}\n\n")
            first_bad, bad = first_bad or error, bad + 1
            del record  # not kept while the next record is read
            if bad == MAX_BAD_GAMES:
                break  # a file of bad games is not read to its end
            continue
        out.write("".join(line + "\n" for line in lines) + ("\n" if several else ""))
        del record
    stopped = bad == MAX_BAD_GAMES
    if every:
        after = f", stopped at the {MAX_BAD_GAMES}th bad game" if stopped else ""
        out.write(f"checked {checked} games, {bad} bad{after}\n")
    if first_bad is not None:
        many = f"the first of {bad} bad games" + (", the check stopped there" if stopped else "")
        raise CommandError(f"{first_bad} ({many})" if bad > 1 else str(first_bad))


def _chosen(
    path: str, records: Iterator[Record], ahead: list[Record], picked: int | None
) -> Iterator[tuple[int, Record]]:
    """The games to check, with their numbers: every record of the file (``ahead`` its first
    ones, already read), or the one ``--game`` picks (``picked``).

    Raises:
        CommandError: the file holds fewer than ``picked`` games.
    """
    if picked is None:
        return enumerate(itertools.chain(_drain(ahead), _rest(records)), 1)
    record, held = _pick(records, ahead, picked)
    if record is None:
        counted = f"{held} game" + ("s" if held > 1 else "")
        raise CommandError(f"{path}: --game {picked}: the file holds {counted}")
    return iter([(picked, record)])


def _next_record(records: Iterator[Record]) -> Record | None:
    """The next record of a file, None after the last; one that cannot be read is the
    command's error."""
    try:
        return next(records, None)
    except RecordError as exc:
        raise CommandError(str(exc)) from None


def _drain(ahead: list[Record]) -> Iterator[Record]:
    """The records of ``ahead``, each let go of as it is handed on (a long record is not
    kept while the next is read)."""
    while ahead:
        yield ahead.pop(0)


def _rest(records: Iterator[Record]) -> Iterator[Record]:
    while (record := _next_record(records)) is not None:
        yield record


def _pick(records: Iterator[Record], ahead: list[Record], picked: int) -> tuple[Record | None, int]:
    """Record number ``picked`` of the file (``ahead`` are its first ones, already read), or
    None and how many the file holds (each is read and checked, none kept)."""
    held = 0
    for held, record in enumerate(itertools.chain(_drain(ahead), _rest(records)), 1):
        if held == picked:
            return record, held
    return None, held


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv bench``."""
    names: list[str] = args.game or []
    for name in names:
        load_game(name)
    if args.rules:
        run_bench(names or None, deep=args.deep, playouts=args.playouts, out=out, err=err)
    else:
        run_search_bench(names or None, depth=args.depth, out=out, err=err)

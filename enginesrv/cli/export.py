"""``enginesrv export``: the records of an event's games, in game order, into one file that
``enginesrv replay`` reads back; whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from enginesrv.cli.common import CommandError
from enginesrv.cli.rules import BadGameError, load_game
from enginesrv.event.config import EventError
from enginesrv.event.play.records import RecordError
from enginesrv.event.play.sgf import stored_record_text
from enginesrv.event.results.files import check_stored_record
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import stored_event
from enginesrv.event.results.wording import printable, quoted
from enginesrv.safefiles import FileRefusedError


def cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv export``: the records of an event's games, by game id, into one file.

    Every record's file is checked first, none read (``files.check_stored_record``: a
    refused or missing one fails the export before anything is written); then each record is
    read, checked as a record of the event's game and written, one at a time: what an export
    holds is one record, and what it reads is what it writes, once. A file given with ``-o``
    is written under a temporary name beside it and renamed into place once whole, so a
    failed export leaves it as it was; on stdout, the games before a record found bad are
    written already. A game whose record is missing or unreadable fails the export (naming
    the game and the file) unless ``--skip-missing`` leaves it out with a warning on ``err``.
    """
    directory = Path(args.dir)
    try:
        config, rows = stored_event(
            directory, "not an event directory (the --out DIR of a match or tournament)"
        )
    except EventError as exc:
        raise CommandError(str(exc)) from None
    game = load_game(config.game).name
    target: str = args.output
    if target != "-":
        _check_output(directory, Path(target))
    kept: list[GameRow] = []
    for row in rows:
        try:
            _check_record_file(directory, row)
        except BadGameError as exc:
            _left_out(args, err, row, exc)
        else:
            kept.append(row)
    written = 0

    def write(file: TextIO) -> None:
        nonlocal written
        for row in kept:
            try:
                text = _stored_record(directory, row, game)
            except BadGameError as exc:
                _left_out(args, err, row, exc)
                continue
            # an export goes to a terminal too: every line printable
            file.write(("\n" if written else "") + _printable_lines(text))
            written += 1

    if target == "-":
        write(out)
    else:
        _write_whole(Path(target), write)
    where = "stdout" if target == "-" else target
    skipped = len(rows) - written
    left_out = f" ({skipped} left out)" if skipped else ""
    err.write(f"enginesrv export: {written} games of {directory} written to {where}{left_out}\n")


def _left_out(args: argparse.Namespace, err: TextIO, row: GameRow, exc: BadGameError) -> None:
    """A game whose record is bad: the export's error, or with ``--skip-missing`` a warning."""
    if not args.skip_missing:
        raise CommandError(
            f"game {row.id}: {exc.reason} (--skip-missing exports the other games)"
        ) from None
    err.write(f"enginesrv export: warning: game {row.id} left out: {printable(exc.reason)}\n")


def _write_whole(target: Path, write: Callable[[TextIO], None]) -> None:
    """``write`` into ``target``, whole or not at all: a regular file (or none yet) is written
    under a temporary name in its directory, then renamed over it (its mode kept); anything
    else (a device such as ``/dev/null``, a FIFO) is written to directly.

    Raises:
        CommandError: it cannot be written.
    """
    try:
        real = Path(os.path.realpath(target))
        try:
            info: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(target, "w", encoding="utf-8") as file:
                write(file)
            return
        temporary = real.with_name(f".{real.name}.{os.getpid()}.export")
        try:
            with open(temporary, "x", encoding="utf-8") as file:
                write(file)
            if info is not None:
                os.chmod(temporary, stat.S_IMODE(info.st_mode))
            os.replace(temporary, real)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise CommandError(f"-o {target}: cannot write: {exc.strerror or exc}") from None


def _check_record_file(directory: Path, row: GameRow) -> None:
    """Refuse the record of a stored game before the export writes anything, reading none of
    it (``files.check_stored_record``).

    Raises:
        BadGameError: the game has no record, or it is missing or cannot be opened.
        CommandError: the store names a record that is refused: a crafted store, whose other
            games are not exported either.
    """
    if row.record is None:
        raise BadGameError(0, "the event kept no record of it")
    with _record_errors(directory, row, row.record):
        check_stored_record(directory, row.record, row.id)


@contextlib.contextmanager
def _record_errors(directory: Path, row: GameRow, record: str) -> Iterator[None]:
    """What a stored game's record file may raise, as ``export`` reports it: a refused record
    ends the export (``CommandError``), a missing or unreadable one is a bad game."""
    path = directory / record
    try:
        yield
    except FileRefusedError as exc:
        raise CommandError(
            f"game {row.id}: its record {quoted(record)} {exc.reason}; nothing is exported"
        ) from None
    except FileNotFoundError:
        raise BadGameError(0, f"its record {path} is missing") from None
    except OSError as exc:
        raise BadGameError(0, f"its record {path}: cannot read file: {exc.strerror}") from None


def _printable_lines(text: str) -> str:
    """``text`` with each of its lines ``printable``."""
    if text.replace("\n", "").isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))


def _check_output(directory: Path, target: Path) -> None:
    """Refuse an output that would overwrite the event's own files."""
    own = [directory / "results.sqlite", directory / "games"]
    resolved = target.resolve()
    for path in own:
        mine = path.resolve()
        if resolved == mine or mine in resolved.parents:
            raise CommandError(
                f"-o {target}: that is the event's own {path.name}; choose another file"
            )


def _stored_record(directory: Path, row: GameRow, game: str) -> str:
    """The text of the record of a stored game, read and checked as a record of ``game``
    (as the arbiter wrote it: a record is not parsed and written again, which for a long
    one would take more memory than the reading).

    Raises:
        BadGameError: the record is missing or is not a record of ``game``.
        CommandError: the store names a record that is refused (``files.read_stored_record``):
            a crafted store, whose other games are not exported either.
    """
    if row.record is None:
        raise BadGameError(0, "the event kept no record of it")
    path = directory / row.record
    try:
        with _record_errors(directory, row, row.record):
            text, record = stored_record_text(directory, row.record, row.id)
    except RecordError as exc:
        raise BadGameError(0, f"its record {exc}") from None
    if record.game != game:
        raise BadGameError(0, f"its record {path} is not a {quoted(game)} game record")
    return text.rstrip("\n") + "\n"

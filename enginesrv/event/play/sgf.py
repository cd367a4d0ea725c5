"""Game records in other formats: Boardspace's SGF files of Yinsh games
(``import_boardspace_sgf``), and reading a record file of either kind by its name
(``read_record_file``, and ``generate_records_file`` for a file of several records), or the
record an event's store names (``stored_record``). Every read is of a regular file and capped
(``enginesrv.event.results.files``)."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from enginesrv.event.play.records import (
    Record,
    RecordError,
    RecordMove,
    generate_records,
    normalise,
    parse_record,
)
from enginesrv.event.results.files import (
    MAX_RECORD_BYTES,
    MAX_RECORD_LINES,
    read_file,
    read_stored_record,
)
from enginesrv.event.results.wording import MAX_QUOTED, cut, printable
from enginesrv.safefiles import FileRefusedError, open_regular

# One SGF lexeme: whitespace, punctuation, or a property with its bracketed values. A value is
# scanned unrolled and possessive (runs of plain characters, each escape a pair): one pass,
# no state kept per character or per value (``(?:[^\]\\]|\\.)*`` kept some 200 bytes a
# character, 274 MB for a value of 1 MiB), and the same values matched.
_SGF_VALUE_TEXT = r"[^\]\\]*+(?:\\.[^\]\\]*+)*+"
_SGF_LEXEME = re.compile(
    r"(?P<space>\s++)|(?P<punct>[();])"
    rf"|(?P<ident>[A-Za-z][A-Za-z0-9]*+)(?P<values>(?:\s*+\[{_SGF_VALUE_TEXT}\])++)",
    re.DOTALL,
)
_SGF_VALUE = re.compile(rf"\[({_SGF_VALUE_TEXT})\]", re.DOTALL)
_SGF_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class _Property:
    ident: str
    values: tuple[str, ...]
    line: int


def _sgf_nodes(text: str, source: str) -> list[list[_Property]]:
    """The nodes of a single-game SGF without variations, each a list of properties."""
    nodes: list[list[_Property]] = []
    line, pos, depth, opened = 1, 0, 0, False
    while pos < len(text):
        match = _SGF_LEXEME.match(text, pos)
        if match is None:
            raise RecordError(source, line, f"malformed SGF near {text[pos : pos + 20]!r}")
        punct = match.group("punct")
        if punct == "(":
            if opened:
                raise RecordError(source, line, "SGF variations or collections are not supported")
            opened, depth = True, 1
        elif punct == ")":
            if depth != 1:
                raise RecordError(source, line, "unbalanced ')' in SGF")
            depth = 0
        elif punct == ";" or match.group("ident"):
            if depth != 1:
                raise RecordError(source, line, "SGF node outside '(...)'")
            if punct == ";":
                nodes.append([])
            elif not nodes:
                raise RecordError(source, line, "SGF property before the first ';'")
            else:
                values = _SGF_VALUE.findall(match.group("values"))
                unescaped = tuple(_SGF_ESCAPE.sub(r"\1", value) for value in values)
                nodes[-1].append(_Property(match.group("ident"), unescaped, line))
        line += match.group().count("\n")
        pos = match.end()
    if depth:
        raise RecordError(source, line, "SGF game not closed by ')'")
    return nodes


def _point(column: str, row: str) -> str:
    """A boardspace point (column letter, row number) in the project notation, e.g. ``e10``."""
    if not (len(column) == 1 and "a" <= column <= "z" and row.isascii() and row.isdigit()):
        raise ValueError(f"bad point {column.upper()} {row}")
    return f"{column}{int(row)}"


def _point_order(point: str) -> tuple[str, int]:
    # Rows compare as numbers: e9 comes before e10.
    return point[0], int(point[1:])


def _boardspace_step(words: list[str], held: str | None) -> tuple[str | None, str | None]:
    """Translate one lowercased boardspace command (no sequence number, not id/resign).

    Args:
        words: the command split into lowercased words.
        held: the point of a ring picked up and not yet dropped, or None.

    Returns:
        ``(token or None, held afterwards)``.

    Raises:
        ValueError: the command is not understood or out of place; the text is the reason.
    """
    match words:
        case ["start" | "done" | "pick" | "time", *_]:
            return None, held
        case ["place", "w" | "b", column, row] | ["pickb", column, row] if held is None:
            return None, _point(column, row)
        case ["drop", "board", column, row] | ["dropb", column, row] if held is not None:
            target = _point(column, row)
            # Putting a ring back where it was picked up is no move.
            return (None if target == held else f"{held}-{target}"), None
        case ["drop" | "dropb", *_] if held is None:
            raise ValueError("drop with no ring picked up")
        case _ if held is not None:
            raise ValueError(f"the ring picked up at {held} was not dropped before")
        case ["place", "wr" | "br", column, row]:
            return _point(column, row), None
        case ["move", column1, row1, column2, row2]:
            return f"{_point(column1, row1)}-{_point(column2, row2)}", None
        case ["remove", "w" | "b", column1, row1, column2, row2]:
            ends = sorted((_point(column1, row1), _point(column2, row2)), key=_point_order)
            return f"x:{ends[0]}-{ends[1]}", None
        case ["remove", "wr" | "br", column, row]:
            return f"r:{_point(column, row)}", None
    raise ValueError("unknown boardspace command")


def import_boardspace_sgf(text: str, source: str = "<string>") -> Record:
    """Convert a boardspace.net YINSH game (``GM[24]``) to a record in the project notation.

    Commands are the values of ``P0[...]`` (White, p1) and ``P1[...]`` (Black, p2), with an
    optional leading sequence number. Placements ``place wr|br C R`` give ``cR``; a ring picked
    up with ``place w|b C R`` (or ``pickb C R``) and put down with ``drop board C R`` (or
    ``dropb C R``) gives one ring move ``c1-c2``, as does ``move C R C R``; dropping a ring back
    where it was picked up is no move. ``remove w|b`` rows give ``x:a-b`` with the ends in
    canonical order (smaller column letter first, or the smaller row number in one column);
    ``remove wr|br C R`` gives ``r:cR``. ``Start``, ``Done``, ``pick`` and ``time`` are skipped;
    ``id "NAME"`` gives the ``P1``/``P2`` header. ``Resign`` ends the record: ``Result`` is the
    other player and ``Reason`` is ``resign``. Without a resignation there is no ``Result``:
    boardspace's ``RE[...]`` is localised free text and is ignored. A ring still held when the
    record ends is no move and is ignored.

    Other headers: ``Game: yinsh``, ``Event`` from ``GN[...]``, ``Date`` from ``DT[...]`` (raw
    text with whitespace runs collapsed); the comment ``source: boardspace sgf`` is added. A ring
    move made by pick-up and drop carries the line of the pick-up.

    Args:
        text: the SGF text.
        source: name used in error messages.

    Returns:
        The record, without annotations.

    Raises:
        RecordError: for malformed SGF, a game other than ``GM[24]``, or a command that is not
            understood or out of place (e.g. a drop with no ring held), naming its line.
    """
    nodes = _sgf_nodes(normalise(text), source)
    if not nodes:
        raise RecordError(source, 0, "no SGF node found")
    record = Record(headers={"Game": "yinsh"}, comments=["source: boardspace sgf"])
    _read_game_info(nodes[0], record, source)
    commands = (
        (prop.ident, value, prop.line)
        for node in nodes
        for prop in node
        if prop.ident in ("P0", "P1")
        for value in prop.values
    )
    _read_commands(commands, record, source)
    return record


def _read_game_info(root: list[_Property], record: Record, source: str) -> None:
    """The headers of the SGF's root node (``GM``, ``GN``, ``DT``) into ``record``."""
    for prop in root:
        value = " ".join(" ".join(prop.values).split())
        if prop.ident == "GM" and value != "24":
            raise RecordError(
                source,
                prop.line,
                f"GM[{printable(cut(value, MAX_QUOTED))}] is not a boardspace YINSH game",
            )
        if prop.ident in ("GN", "DT"):
            record.headers["Event" if prop.ident == "GN" else "Date"] = value


def _read_commands(commands: Iterable[tuple[str, str, int]], record: Record, source: str) -> None:
    """The players' commands (``P0``/``P1``, their value, its line) into ``record``'s moves
    and headers (``import_boardspace_sgf``)."""
    held: str | None = None  # the point of a ring picked up and not yet dropped
    held_line = 0
    for player, command, line in commands:
        words = command.split()
        if words and words[0].isdigit():
            words = words[1:]
        verb = words[0].lower() if words else ""
        if verb == "id":
            record.headers["P1" if player == "P0" else "P2"] = " ".join(words[1:]).strip('"')
            continue
        if verb == "resign":
            record.headers["Result"] = "p2" if player == "P0" else "p1"
            record.headers["Reason"] = "resign"
            break
        try:
            token, now_held = _boardspace_step([word.lower() for word in words], held)
        except ValueError as error:
            # the command as one line, cut: a value may span several lines, hold control
            # characters, or be a megabyte long
            said = cut(str(error), MAX_QUOTED)
            shown = printable(f"{said}: {player}[{cut(' '.join(command.split()), MAX_QUOTED)}]")
            raise RecordError(source, line, shown) from None
        if token is not None:
            # A token completed by a drop belongs to the node where the ring was picked up.
            record.moves.append(RecordMove(token, (), held_line if held else line))
        if now_held is not None and held is None:
            held_line = line
        held = now_held


def read_record_file(path: str | os.PathLike[str]) -> Record:
    """Read a record file, importing it as boardspace SGF when it is one.

    The SGF importer is used when the name ends with ``.sgf`` (any case) or the text starts,
    after whitespace, with ``(;``; otherwise ``parse_record``. A UTF-8 byte order mark is
    ignored. Only a regular file is read (a FIFO or a device is refused without waiting on
    it), and only up to ``MAX_RECORD_BYTES``.

    Args:
        path: the file to read.

    Returns:
        The record.

    Raises:
        RecordError: for any problem, with the path as ``source``. A file that cannot be read
            or is not UTF-8 gives line 0; ``OSError`` and ``UnicodeDecodeError`` never escape.
    """
    name = os.fspath(path)
    text = _decode(name, _read_bytes(name, lambda: read_file(name, MAX_RECORD_BYTES)))
    if _is_sgf(name, text):
        return import_boardspace_sgf(text, name)
    return parse_record(text, name)


def stored_record(out_dir: Path, name: str, game_id: int) -> Record:
    """The record ``name`` that an event's store names for game ``game_id``, read from
    ``out_dir`` as ``files.read_stored_record`` allows (``games/game-NNNNN.txt`` of that game,
    a regular file of one link, capped) and parsed in the project's format (the arbiter
    writes no other).

    Raises:
        FileRefusedError: the name or the file is refused.
        OSError: it cannot be read (``FileNotFoundError``: it is missing).
        RecordError: it is not UTF-8 or not a record, naming ``out_dir/name``.
    """
    return stored_record_text(out_dir, name, game_id)[1]


def stored_record_text(out_dir: Path, name: str, game_id: int) -> tuple[str, Record]:
    """``stored_record``, and its text (line ends made ``\\n``, a byte order mark dropped):
    what an export writes is the text the arbiter wrote, checked."""
    source = str(out_dir / name)
    text = normalise(_decode(source, read_stored_record(out_dir, name, game_id)))
    return text, parse_record(text, source)


def read_records_file(path: str | os.PathLike[str]) -> list[Record]:
    """Every record of a file (``generate_records_file``), in a list."""
    return list(generate_records_file(path))


MAX_RECORDS_FILE = 64 << 20
"""The largest file of records read (64 MiB, some 20,000 games as ``enginesrv export``
writes them): what is longer is refused unread. The file is read a line at a time and
parsed a record at a time, so what it costs in memory is one record's worth."""


def generate_records_file(path: str | os.PathLike[str]) -> Iterator[Record]:
    """The records of a file of one or more records (``records.generate_records``), or of
    one boardspace SGF game, read as they are needed.

    The file is told apart as by ``read_record_file``. It must be a regular file of at most
    ``MAX_RECORDS_FILE`` bytes, each record in it at most ``MAX_RECORD_BYTES`` characters and
    ``MAX_RECORD_LINES`` lines.

    Raises:
        RecordError: (when the record it concerns is reached) as ``read_record_file`` does.
    """
    name = os.fspath(path)
    fd = _read_bytes(name, lambda: open_regular(name))
    with io.BufferedReader(io.FileIO(fd, "r"), buffer_size=1 << 16) as file:
        size = os.fstat(fd).st_size
        if size > MAX_RECORDS_FILE:
            raise RecordError(
                name, 0, f"cannot read file: it is larger than {MAX_RECORDS_FILE:,} bytes"
            )
        head = _read_bytes(name, lambda: file.peek(1 << 16)[: 1 << 16])
        if _is_sgf(name, head.decode("utf-8", "replace").removeprefix("\ufeff")):
            data = _read_bytes(name, lambda: file.read(MAX_RECORD_BYTES + 1))
            if len(data) > MAX_RECORD_BYTES:
                raise RecordError(
                    name, 0, f"cannot read file: it is larger than {MAX_RECORD_BYTES:,} bytes"
                )
            yield import_boardspace_sgf(_decode(name, data), name)
            return
        yield from generate_records(
            _file_lines(file, name), name, max_chars=MAX_RECORD_BYTES, max_lines=MAX_RECORD_LINES
        )


def _file_lines(file: io.BufferedReader[io.FileIO], name: str) -> Iterator[tuple[int, str]]:
    """The lines of ``file`` as ``(number, text)``, read one at a time, numbered and split
    as ``records.normalise`` does (``\\r\\n``, ``\\n`` and ``\\r`` each end a line), a byte
    order mark dropped; at most ``MAX_RECORDS_FILE`` bytes and lines of at most
    ``MAX_RECORD_BYTES``."""
    number = offset = 0
    readline = file.readline
    while line := _read_line(name, readline):
        if len(line) > MAX_RECORD_BYTES:
            raise RecordError(name, number + 1, f"a line longer than {MAX_RECORD_BYTES:,} bytes")
        if offset + len(line) > MAX_RECORDS_FILE:
            raise RecordError(
                name, 0, f"cannot read file: it is larger than {MAX_RECORDS_FILE:,} bytes"
            )
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not UTF-8 text (bad byte at offset {offset + error.start})"
            raise RecordError(name, 0, reason) from None
        if not offset:
            text = text.removeprefix("\ufeff")
        offset += len(line)
        # the line ends as normalise has them: \r\n, then a lone \r, each end one line
        body = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
        for piece in body.split("\r"):
            number += 1
            yield number, piece


def _read_line(name: str, readline: Callable[[int], bytes]) -> bytes:
    """The next line of a file (``b""`` at its end), at most ``MAX_RECORD_BYTES + 1`` bytes;
    an ``OSError`` as a ``RecordError`` at line 0."""
    try:
        return readline(MAX_RECORD_BYTES + 1)
    except OSError as error:
        raise RecordError(name, 0, f"cannot read file: {error.strerror or error}") from None


def _is_sgf(name: str, text: str) -> bool:
    return name.lower().endswith(".sgf") or text.lstrip().startswith("(;")


_T = TypeVar("_T")


def _read_bytes(name: str, read: Callable[[], _T]) -> _T:
    """What ``read`` returns; its ``OSError`` or refusal as a ``RecordError`` at line 0."""
    try:
        return read()
    except FileRefusedError as error:
        raise RecordError(name, 0, f"cannot read file: it {error.reason}") from None
    except OSError as error:
        raise RecordError(name, 0, f"cannot read file: {error.strerror or error}") from None


def _decode(name: str, data: bytes) -> str:
    """``data`` as text (a byte order mark dropped), or a ``RecordError`` at line 0."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text (bad byte at offset {error.start})"
        raise RecordError(name, 0, reason) from None

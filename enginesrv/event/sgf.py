"""Game records in other formats: Boardspace's SGF files of Yinsh games
(``import_boardspace_sgf``), and reading a record file of either kind by its name
(``read_record_file``, and ``read_records_file`` for a file of several records)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from enginesrv.event.records import (
    Record,
    RecordError,
    RecordMove,
    normalise,
    parse_record,
    parse_records,
)

# One SGF lexeme: whitespace, punctuation, or a property with its bracketed values.
_SGF_LEXEME = re.compile(
    r"(?P<space>\s+)|(?P<punct>[();])"
    r"|(?P<ident>[A-Za-z][A-Za-z0-9]*)(?P<values>(?:\s*\[(?:[^\]\\]|\\.)*\])+)",
    re.DOTALL,
)
_SGF_VALUE = re.compile(r"\[((?:[^\]\\]|\\.)*)\]", re.DOTALL)
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
    for prop in nodes[0]:
        value = " ".join(" ".join(prop.values).split())
        if prop.ident == "GM" and value != "24":
            raise RecordError(source, prop.line, f"GM[{value}] is not a boardspace YINSH game")
        if prop.ident in ("GN", "DT"):
            record.headers["Event" if prop.ident == "GN" else "Date"] = value

    held: str | None = None  # the point of a ring picked up and not yet dropped
    held_line = 0
    commands = (
        (prop.ident, value, prop.line)
        for node in nodes
        for prop in node
        if prop.ident in ("P0", "P1")
        for value in prop.values
    )
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
            raise RecordError(source, line, f"{error}: {player}[{command.strip()}]") from None
        if token is not None:
            # A token completed by a drop belongs to the node where the ring was picked up.
            record.moves.append(RecordMove(token, (), held_line if held else line))
        if now_held is not None and held is None:
            held_line = line
        held = now_held
    return record


def read_record_file(path: str | os.PathLike[str]) -> Record:
    """Read a record file, importing it as boardspace SGF when it is one.

    The SGF importer is used when the name ends with ``.sgf`` (any case) or the text starts,
    after whitespace, with ``(;``; otherwise ``parse_record``. A UTF-8 byte order mark is
    ignored.

    Args:
        path: the file to read.

    Returns:
        The record.

    Raises:
        RecordError: for any problem, with the path as ``source``. A file that cannot be read
            or is not UTF-8 gives line 0; ``OSError`` and ``UnicodeDecodeError`` never escape.
    """
    name, text = _read_text(path)
    if _is_sgf(name, text):
        return import_boardspace_sgf(text, name)
    return parse_record(text, name)


def read_records_file(path: str | os.PathLike[str]) -> list[Record]:
    """Read a file of one or more records (``parse_records``), or one boardspace SGF game.

    The file is told apart, and errors are raised, as by ``read_record_file``.
    """
    name, text = _read_text(path)
    if _is_sgf(name, text):
        return [import_boardspace_sgf(text, name)]
    return parse_records(text, name)


def _is_sgf(name: str, text: str) -> bool:
    return name.lower().endswith(".sgf") or text.lstrip().startswith("(;")


MAX_RECORDS_FILE = 256 << 20
"""The largest file of records read (256 MiB, some 50,000 games): what is longer (a device
such as /dev/zero, a file that is not records) is refused instead of filling the memory."""


def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The file's name and its text (a byte order mark dropped); a RecordError at line 0."""
    name = os.fspath(path)
    try:
        chunks: list[bytes] = []
        size = 0
        with open(name, "rb") as file:
            while size <= MAX_RECORDS_FILE and (chunk := file.read(1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_RECORDS_FILE:
            raise RecordError(
                name, 0, f"larger than {MAX_RECORDS_FILE:,} bytes: not a file of records"
            )
        text = data.decode("utf-8-sig")
    except OSError as error:
        raise RecordError(name, 0, f"cannot read file: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text (bad byte at offset {error.start})"
        raise RecordError(name, 0, reason) from error
    return name, text

"""Game records: the project's text format, and import of boardspace.net YINSH SGF files.

A record is UTF-8 text: header lines ``# Key: value``, then one move token per line, each
optionally followed by ``  ; key=value ...`` annotations. Other ``#`` lines are free comments and
blank lines are ignored::

    # Game: yinsh
    # P1: alice
    # Result: p2 wins 3-2
    # a free comment
    e6
    f7  ; ms=1200 score=35 depth=9

This module is plain text processing: it never checks that a token is a legal move (that is the
rules engine's job) and imports nothing of the project, so it can be used by any tool.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

#: Header keys in the order ``format_record`` writes them.
HEADER_KEYS: tuple[str, ...] = (
    "Game", "Start", "Event", "Date", "P1", "P2", "TimeControl", "Opening", "Result", "Reason",
    "Final",
)  # fmt: skip

#: Older spellings accepted by ``parse_record``, mapped to their canonical key.
HEADER_ALIASES: dict[str, str] = {"Variant": "Game", "Final position": "Final"}

#: ``Reason`` values the arbiter may write; games add their own outcome reasons. Not enforced.
ARBITER_REASONS: frozenset[str] = frozenset({
    "time-forfeit", "illegal-move", "crash", "stall", "disconnect", "max-plies", "repetition",
    "resign", "score-adjudication",
})  # fmt: skip

Winner = Literal["p1", "p2", "draw", "*"]

_ANNOTATION_SEP = "  ; "
_HEADER_LINE = re.compile(r"#\s*([^:]*?)\s*:(.*)", re.DOTALL)
_WINNERS: dict[str, Winner] = {"p1": "p1", "p2": "p2", "draw": "draw", "Draw": "draw", "*": "*"}
_RESULT_NEW = re.compile(r"\s*(p1|p2|draw|\*)(?!\S)")
_RESULT_OLD = (re.compile(r"\((p[12])\b"), re.compile(r"\b(p[12])\b"), re.compile(r"\b([Dd]raw)\b"))


class RecordError(ValueError):
    """A record that cannot be read, parsed, imported or written.

    Attributes:
        source: the file name, or ``"<string>"`` for text given directly.
        line: 1-based line number of the problem, or 0 when it is not tied to a line.
        reason: what is wrong, in a few words.
    """

    def __init__(self, source: str, line: int, reason: str) -> None:
        # All three go to args so the exception survives pickling (e.g. across processes).
        super().__init__(source, line, reason)
        self.source = source
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RecordMove:
    """One move line of a record.

    ``line`` is provenance for error messages only and is left out of equality and hashing, so
    the same moves read from differently laid out files compare equal.

    Attributes:
        token: the move token, without whitespace.
        annotations: ``(key, value)`` pairs in file order, e.g. ``(("ms", "1200"),)``.
        line: line number in the source (for an SGF import, the line of the SGF command).
    """

    token: str
    annotations: tuple[tuple[str, str], ...] = ()
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class ResultTag:
    """The ``Result`` header, understood as far as possible.

    Attributes:
        winner: ``"p1"``, ``"p2"``, ``"draw"`` or ``"*"`` (unfinished); None when there is no
            ``Result`` header or its text cannot be understood.
        text: the raw header value (``""`` when absent).
    """

    winner: Winner | None
    text: str


@dataclass
class Record:
    """A parsed game record.

    Attributes:
        headers: canonical key -> value, in the order read. Values have no surrounding
            whitespace.
        moves: the move lines in order.
        comments: free comment lines without the leading ``#`` (and one following space).
    """

    headers: dict[str, str] = field(default_factory=dict)
    moves: list[RecordMove] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def game(self) -> str | None:
        """The ``Game`` header (e.g. ``"yinsh+blitz"``), or None."""
        return self.headers.get("Game")

    @property
    def start(self) -> str | None:
        """The raw ``Start`` header, or None. See ``start_position``."""
        return self.headers.get("Start")

    @property
    def final(self) -> str | None:
        """The ``Final`` position string, or None."""
        return self.headers.get("Final")

    def start_position(self) -> str | None:
        """The position string to start from, or None for the game's start position.

        None when ``Start`` is absent, empty or ``startpos``.
        """
        start = self.start
        return None if not start or start == "startpos" else start

    def result(self) -> ResultTag:
        """The ``Result`` header, with the winner understood from the new or the old form.

        The new form starts with the word ``p1``, ``p2``, ``draw`` or ``*``. The older free
        form (``Black (p2, Dumbot) wins 3-2``) is understood from the first ``(p1``/``(p2``,
        else the first word ``p1``/``p2``, else the word ``draw``/``Draw``.
        """
        text = self.headers.get("Result")
        if text is None:
            return ResultTag(None, "")
        if match := _RESULT_NEW.match(text):
            return ResultTag(_WINNERS[match.group(1)], text)
        for pattern in _RESULT_OLD:
            if match := pattern.search(text):
                return ResultTag(_WINNERS[match.group(1)], text)
        return ResultTag(None, text)

    def tokens(self) -> list[str]:
        """The move tokens in order, without annotations."""
        return [move.token for move in self.moves]


def _normalise(text: str) -> str:
    # One newline convention (the SGF fixtures mix CRLF and LF) and no BOM, so that line
    # numbers match what an editor shows.
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _header_key(line: str) -> tuple[str, str] | None:
    """``(canonical key, value)`` when ``line`` is a header line, else None."""
    match = _HEADER_LINE.fullmatch(line)
    if match is None:
        return None
    key = HEADER_ALIASES.get(match.group(1), match.group(1))
    return (key, match.group(2).strip()) if key in HEADER_KEYS else None


def _has_space(text: str) -> bool:
    return any(char.isspace() for char in text)


def parse_record(text: str, source: str = "<string>") -> Record:
    """Parse a record in the project's text format.

    A ``# Key: value`` line is a header when Key is in ``HEADER_KEYS`` or ``HEADER_ALIASES``
    (stored under the canonical key); any other ``#`` line is a comment, wherever it appears.

    Args:
        text: the record text. ``\\n``, ``\\r\\n`` and ``\\r`` line ends are all accepted.
        source: name used in error messages.

    Returns:
        The record; move lines carry their line numbers.

    Raises:
        RecordError: on the first problem, naming its line: a header after the first move, a
            repeated header, a move line with whitespace other than the ``"  ; "`` separator,
            or an annotation that is not ``key=value`` (both sides non-empty).
    """
    record = Record()
    for number, line in enumerate(_normalise(text).split("\n"), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            header = _header_key(line)
            if header is None:
                comment = line[1:]
                record.comments.append(comment[1:] if comment.startswith(" ") else comment)
                continue
            key, value = header
            if record.moves:
                raise RecordError(source, number, f"header {key!r} after the first move")
            if key in record.headers:
                raise RecordError(source, number, f"repeated header {key!r}")
            record.headers[key] = value
            continue
        token, separator, notes = line.partition(_ANNOTATION_SEP)
        if _has_space(token):
            raise RecordError(source, number, f"whitespace in move line {line!r}")
        annotations: list[tuple[str, str]] = []
        for item in notes.split(" ") if separator else ():
            key, equals, value = item.partition("=")
            if not (key and equals and value) or _has_space(item):
                raise RecordError(source, number, f"malformed annotation {item!r} (want key=value)")
            annotations.append((key, value))
        record.moves.append(RecordMove(token, tuple(annotations), number))
    return record


def format_record(record: Record) -> str:
    """Write a record in the project's text format.

    Headers come first in the order of ``HEADER_KEYS`` (other keys after them, in insertion
    order), then the comments, then the moves. ``parse_record(format_record(r)) == r`` for every
    record this accepts whose header keys are all canonical; other keys are written, but read
    back as comments.

    Args:
        record: the record to write.

    Returns:
        The text, ending with a newline.

    Raises:
        RecordError: (line 0) when the record cannot be written so that it reads back the
            same: a line break in any text, a header key containing ``:`` or a value with
            surrounding whitespace, a comment that would read back as a header, an empty token
            or one with whitespace or a leading ``#``, an annotation key or value that is
            empty or has whitespace, or an ``=`` in an annotation key.
    """

    def check(ok: bool, what: str, text: str) -> None:
        if not ok:
            raise RecordError("<record>", 0, f"cannot write {what} {text!r}")

    def one_line(text: str) -> bool:
        return "\n" not in text and "\r" not in text

    rank = {key: index for index, key in enumerate(HEADER_KEYS)}
    lines: list[str] = []
    for key in sorted(record.headers, key=lambda key: rank.get(key, len(rank))):
        value = record.headers[key]
        check(bool(key) and ":" not in key and one_line(key) and key == key.strip(), "key", key)
        check(one_line(value) and value == value.strip(), f"{key} value", value)
        lines.append(f"# {key}: {value}")
    for comment in record.comments:
        check(one_line(comment) and _header_key(f"# {comment}") is None, "comment", comment)
        lines.append(f"# {comment}")
    for move in record.moves:
        token = move.token
        check(bool(token) and not _has_space(token) and not token.startswith("#"), "token", token)
        for key, value in move.annotations:
            check(bool(key) and "=" not in key and not _has_space(key), "annotation key", key)
            check(bool(value) and not _has_space(value), "annotation value", value)
        notes = " ".join(f"{key}={value}" for key, value in move.annotations)
        lines.append(f"{token}{_ANNOTATION_SEP}{notes}" if notes else token)
    return "\n".join(lines) + "\n"


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
    nodes = _sgf_nodes(_normalise(text), source)
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
    name = os.fspath(path)
    try:
        with open(name, "rb") as file:
            data = file.read()
        text = data.decode("utf-8-sig")
    except OSError as error:
        raise RecordError(name, 0, f"cannot read file: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text (bad byte at offset {error.start})"
        raise RecordError(name, 0, reason) from error
    if name.lower().endswith(".sgf") or text.lstrip().startswith("(;"):
        return import_boardspace_sgf(text, name)
    return parse_record(text, name)

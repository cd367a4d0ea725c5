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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from enginesrv.event.results.wording import quoted

#: Header keys in the order ``format_record`` writes them.
HEADER_KEYS: tuple[str, ...] = (
    "Game",
    "Start",
    "Event",
    "Date",
    "P1",
    "P2",
    "TimeControl",
    "Opening",
    "Result",
    "Reason",
    "Final",
)

#: Older spellings accepted by ``parse_record``, mapped to their canonical key.
HEADER_ALIASES: dict[str, str] = {"Variant": "Game", "Final position": "Final"}

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
        line: the line of the source where the record begins (its first line that is not
            blank; 1 for an empty text). Provenance for messages only, left out of equality.
    """

    headers: dict[str, str] = field(default_factory=dict)
    moves: list[RecordMove] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    line: int = field(default=1, compare=False)

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


def normalise(text: str) -> str:
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


_SPACE = re.compile(r"\s")
"""What ``str.isspace`` calls whitespace (both use Unicode's table)."""
_MOVE_LINE = r"[^\s#]\S*(?:  ; [^\s=]+=\S+(?: [^\s=]+=\S+)*)?"
_MOVE_LINES = re.compile(rf"{_MOVE_LINE}(?:\n{_MOVE_LINE})*")
"""Move lines that read back as written, but for an ``=`` in an annotation's key (its value may
hold one): a token without whitespace that does not start with ``#``, then annotations
``key=value`` without whitespace (the separators are single spaces, so the pieces cannot run
into each other)."""


def _has_space(text: str) -> bool:
    return _SPACE.search(text) is not None


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
            repeated header, a move line with whitespace other than the ``"  ; "`` separator
            or with no token before it, or an annotation that is not ``key=value`` (both sides
            non-empty).
    """
    return _parse_lines(enumerate(normalise(text).split("\n"), 1), source)


def parse_records(text: str, source: str = "<string>") -> list[Record]:
    """Parse a text of one or more records, one after another (as ``enginesrv export``
    writes them).

    A record begins at a ``# Game:`` header line that comes after a move, or after another
    ``Game`` header, of the record being read; every other line, comments and blank lines
    between records included, belongs to the record before it. So a text of one record gives
    ``[parse_record(text)]``, and every record keeps the line numbers of the whole text.

    Args:
        text: the text; line ends as for ``parse_record``.
        source: name used in error messages.

    Returns:
        The records in order, at least one (an empty text is one empty record).

    Raises:
        RecordError: on the first problem of any record, naming its line in the whole text.
    """
    return list(generate_records(enumerate(normalise(text).split("\n"), 1), source))


def generate_records(
    lines: Iterable[tuple[int, str]],
    source: str = "<string>",
    *,
    max_chars: int | None = None,
    max_lines: int | None = None,
) -> Iterator[Record]:
    """The records of ``lines`` (``(line number, text)`` pairs, without line ends), told
    apart as by ``parse_records``, each parsed when it is complete: a file of records is read
    one record at a time, never whole.

    Raises:
        RecordError: on the first problem of a record, when that record is reached; or a
            record longer than ``max_chars`` characters, line ends included, or of more than
            ``max_lines`` lines, when the line past the cap is read (naming it).
    """
    chunk: list[tuple[int, str]] = []
    size = 0
    has_moves = has_game = False
    for number, line in lines:
        if not line.strip():
            pass
        elif not line.startswith("#"):
            has_moves = True
        elif (header := _header_key(line)) is not None and header[0] == "Game":
            if has_moves or has_game:
                yield _parse_lines(chunk, source)
                chunk, size = [], 0
                has_moves = False
            has_game = True
        chunk.append((number, line))
        size += len(line) + 1
        if max_chars is not None and size > max_chars:
            raise RecordError(source, chunk[0][0], f"a record longer than {max_chars:,} characters")
        if max_lines is not None and len(chunk) > max_lines:
            reason = f"a record of more than {max_lines:,} lines (it begins at line {chunk[0][0]})"
            raise RecordError(source, number, reason)
    yield _parse_lines(chunk, source)


def _parse_lines(lines: Iterable[tuple[int, str]], source: str) -> Record:
    """The record of ``lines`` (``(line number, text)`` pairs): see ``parse_record``."""
    record = Record()
    begun = False
    for number, line in lines:
        if not line.strip():
            continue
        if not begun:
            record.line, begun = number, True
        if line.startswith("#"):
            header = _header_key(line)
            if header is None:
                comment = line[1:]
                record.comments.append(comment[1:] if comment.startswith(" ") else comment)
                continue
            key, value = header
            if record.moves:
                raise RecordError(source, number, f"header {quoted(key)} after the first move")
            if key in record.headers:
                raise RecordError(source, number, f"repeated header {quoted(key)}")
            record.headers[key] = value
            continue
        token, separator, notes = line.partition(_ANNOTATION_SEP)
        if not token:
            raise RecordError(
                source, number, f"no move token before the annotations in {quoted(line)}"
            )
        if _has_space(token):
            raise RecordError(source, number, f"whitespace in move line {quoted(line)}")
        annotations: list[tuple[str, str]] = []
        for item in notes.split(" ") if separator else ():
            key, equals, value = item.partition("=")
            if not (key and equals and value) or _has_space(item):
                raise RecordError(
                    source, number, f"malformed annotation {quoted(item)} (want key=value)"
                )
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
            raise RecordError("<record>", 0, f"cannot write {what} {quoted(text)}")

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
    # a game's record is written as it ends, so the moves are checked in one pass over their
    # text; only when that fails is each piece looked at, to name the one at fault
    moves = "\n".join(
        [
            f"{m.token}{_ANNOTATION_SEP}{' '.join([f'{k}={v}' for k, v in m.annotations])}"
            if m.annotations
            else m.token
            for m in record.moves
        ]
    )
    keys = {key for move in record.moves for key, _ in move.annotations}
    # (a line break inside a piece would pass as two move lines: the lines are counted too)
    if record.moves and (
        _MOVE_LINES.fullmatch(moves) is None
        or moves.count("\n") != len(record.moves) - 1
        or any("=" in key for key in keys)
    ):
        for move in record.moves:
            token = move.token
            check(
                bool(token) and not _has_space(token) and not token.startswith("#"), "token", token
            )
            for key, value in move.annotations:
                check(bool(key) and "=" not in key and not _has_space(key), "annotation key", key)
                check(bool(value) and not _has_space(value), "annotation value", value)
        raise AssertionError("a move line that reads back otherwise")  # pragma: no cover
    if record.moves:
        lines.append(moves)
    return "\n".join(lines) + "\n"

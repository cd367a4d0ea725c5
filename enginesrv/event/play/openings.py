"""Openings: the start positions and first moves games of an event are played from, read from a
file (``read_openings``), and the position each leads to (``opening_state``)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import games

OPENINGS_CAP = 1 << 20
"""The largest openings file read, in bytes (1 MiB: some 70,000 openings, checked in a few
seconds; a larger file is refused, not cut)."""
_SHOWN = 200
"""The most characters of a reason quoted in a message."""
_QUOTED = 80
"""The most characters of a game's error on an opening line (it quotes the token or the
position) in a message; no other content of a line is ever quoted."""
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127, *range(0x80, 0xA0))}
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


@dataclass(frozen=True, slots=True)
class Opening:
    """A start position (None: the game's) and moves played from it before the engines."""

    start: str | None = None
    moves: tuple[str, ...] = ()
    label: str = ""


class OpeningsError(ValueError):
    """A bad openings file; the message names the file, the line and the reason."""


def printable(text: object) -> str:
    """``text`` (a path) for a message of one line: control characters escaped."""
    return str(text).translate(_ESCAPES)


def _cut(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def check_regular_file(path: Path, cap: int) -> None:
    """Refuse ``path`` unless it is a regular file (links followed) of at most ``cap`` bytes,
    looking at it without opening it: opening a FIFO waits for a writer.

    Raises:
        ValueError: it does not exist, cannot be looked at, is something else than a regular
            file (a directory, a FIFO, a device such as ``/dev/zero``, a socket) or is larger;
            the message says which, in a few words.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    except ValueError as exc:  # a NUL in the path
        raise ValueError(str(exc)) from None
    kind = _not_regular(info.st_mode)
    if kind is not None:
        raise ValueError(f"{kind}, not a regular file")
    if info.st_size > cap:
        raise ValueError(f"{info.st_size:,} bytes, more than the {cap:,} a file may have here")


def read_regular_file(path: Path, cap: int) -> bytes:
    """The bytes of the regular file ``path`` of at most ``cap`` bytes. Never blocks on a
    FIFO put in its place meanwhile (it is opened without waiting, and looked at again once
    open), and never reads more than ``cap + 1`` bytes, whatever the file does meanwhile.

    Raises:
        ValueError: as ``check_regular_file``, or it could not be opened or read.
    """
    check_regular_file(path, cap)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise ValueError(f"{kind}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 16, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if size > cap:
        raise ValueError(f"more than the {cap:,} bytes a file may have here")
    return b"".join(chunks)


def read_openings(path: Path, game: games.Game) -> list[Opening]:
    """The openings of a file (design §6): ``moves TOKEN ...`` from the start, or
    ``fen POSITION``; ``#`` starts a comment. Each is replayed to check it. The file must be
    a regular file of at most ``OPENINGS_CAP`` bytes of UTF-8.

    Raises:
        OpeningsError: not such a file, a bad line, or no opening at all; one line.
    """
    where = printable(path)
    try:
        text = read_regular_file(path, OPENINGS_CAP).decode("utf-8")
    except ValueError as exc:  # UnicodeDecodeError included
        raise OpeningsError(f"{where}: cannot read the openings: {_cut(str(exc))}") from None
    openings: list[Opening] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        rest = rest.strip()
        if kind == "moves":
            opening = Opening(None, tuple(rest.split()), line)
        elif kind == "fen" and rest:
            opening = Opening(rest, (), line)
        else:
            # nothing of the line is quoted: the file may be any file (a crafted store can
            # name one), and its line a secret
            raise OpeningsError(
                f"{where}:{number}: write 'moves TOKEN TOKEN ...' or 'fen POSITION': line "
                f"{number} is neither"
            )
        try:
            state = opening_state(game, opening)
        except games.GameError as exc:
            # a token or position of an opening line, cut short
            raise OpeningsError(f"{where}:{number}: {_cut(printable(exc), _QUOTED)}") from None
        if state.is_terminal():
            raise OpeningsError(f"{where}:{number}: the game is already over after this opening")
        openings.append(opening)
    if not openings:
        raise OpeningsError(f"{where}: no opening in the file")
    return openings


def opening_state(game: games.Game, opening: Opening) -> games.State:
    """The position an opening leads to.

    Raises:
        games.GameError: a bad position string or move.
    """
    return games.replay(game, opening.start or None, opening.moves)

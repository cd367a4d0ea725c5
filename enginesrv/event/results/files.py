"""Reading files that someone else may have written: the records an event's store names, the
store itself, and a file of records a user names.

A store is data, and data can be crafted: a record path in ``results.sqlite`` may point at
``/etc/passwd``, ``/dev/zero``, a FIFO or a symbolic link out of the event's directory. So a
store is read only through what is inside its own directory (``DIR/results.sqlite`` and
``DIR/games/NAME``), every file is opened without following a symbolic link at its last step
and without blocking, checked to be a regular file on the descriptor it was opened as (no race
can swap in a device between a check and the read), and read up to a cap: at most ``cap + 1``
bytes are ever read, and a file longer than the cap is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from enginesrv.safefiles import FileRefusedError, file_kind, open_regular, read_capped

MAX_RECORD_BYTES = 1 << 20
"""The longest game record read (1 MiB). Parsed, a record takes up to about 50 times its size
in memory (a line per ply of one-character moves), so the cap bounds what one crafted record
can cost: some 50 MB. What an event writes fits (``MAX_PLIES``, ``MAX_PLY_LINE_BYTES``)."""

MAX_PLY_LINE_BYTES = 320
"""The longest line the arbiter writes for one ply: a token of at most 64 characters (the
longest of any game is a Yin Yang setup, 44), then ``  ; `` and its annotations ``ms``,
``over``, ``score``, ``depth``, ``nodes``, ``shown`` (a token again) and ``clock``, each
number at most 20 characters (the protocol carries 64-bit integers): 302 bytes with its line
end."""

MAX_HEADER_BYTES = 16 << 10
"""What a record's headers and comments take at most, bar an opening: names of at most 100
characters (400 bytes of UTF-8), positions, the time control, a few comments."""

MAX_PLIES = 3000
"""The largest ``max_plies`` of an event: a game of that many plies, each of the longest line
(``MAX_PLY_LINE_BYTES``), with its headers (``MAX_HEADER_BYTES``), is a record that fits in
``MAX_RECORD_BYTES``. (The default is 1,000 plies; the longest game of any rules here ends
well before.)"""

MAX_RECORD_LINES = 10_000
"""The most lines of a record read from a file given to ``replay``: more than three times
what the longest game an event plays takes (``MAX_PLIES`` plies and a few header and comment
lines), and enough for a record written by hand; a record of more lines is refused where
its line count passes the cap, so a record of a million one-character lines costs no more
than its first ten thousand."""

MAX_STORE_ROW_BYTES = 2_200
"""What one game takes at most in ``results.sqlite``: its row (measured: 2,053 bytes, with
both players' names of 100 characters of 4 bytes of UTF-8 each, stored twice) and the entry
of its secret seeds (a game with hidden information)."""

MAX_STORE_BYTES = 24 << 20
"""The largest ``results.sqlite`` opened (24 MiB): it holds an event of the most games
(``config.MAX_SCHEDULE``, 10,000) of the longest rows (``MAX_STORE_ROW_BYTES``) and its
stored configuration (at most ``MAX_STORED_VALUE``). A store is read whole (SQLite checks
every page, then every row is checked and kept; a store of more games than an event may have
is refused), and at this cap it is read in a few seconds and some 90 MB of reads."""

MAX_STORED_VALUE = 1 << 20
"""The longest text or blob a store's row may hold (1 MiB): the stored configuration of an
event of 1,000 players is well below; SQLite refuses to read a longer value."""

RECORDS_DIR = "games"
"""Where an event's records are, in its directory (``DIR/games/game-NNNNN.txt``)."""

MAX_RESULTS_RECORD_BYTES = 64 << 20
"""The most bytes of records ``enginesrv results`` reads for its search figures (64 MiB,
as much as a file given to ``replay``): some 10,000 games of 60 plies with every annotation,
read in about 5 s. The games whose records come past it are not counted, and the report says
how many; ``export`` reads every record, writing each as it is read."""


def record_name(game_id: int) -> str:
    """The record an event writes for game ``game_id``, relative to its directory
    (``games/game-00001.txt``): a store may name no other for that game, so no two games
    share a record."""
    return f"{RECORDS_DIR}/game-{game_id:05d}.txt"


def read_file(path: str | os.PathLike[str], cap: int) -> bytes:
    """The bytes of the regular file ``path`` (a symbolic link to one is followed), at most
    ``cap`` of them (``open_regular``, ``read_capped``)."""
    return read_capped(open_regular(path), cap)


def record_path_problem(name: str, game_id: int) -> str | None:
    """Why the record path ``name`` stored for game ``game_id`` is refused, or None: a store
    names a game's record as the event wrote it (``record_name``: ``games/game-NNNNN.txt``,
    relative to the event's directory), and nothing else is read."""
    path = PurePosixPath(name)
    if "\0" in name:
        return "holds a NUL character"
    if path.is_absolute():
        return "is an absolute path, outside the event's directory"
    if ".." in path.parts:
        return "goes up with '..', outside the event's directory"
    if len(path.parts) != 2 or path.parts[0] != RECORDS_DIR or name != f"{path}":
        return f"is not a file of the event's {RECORDS_DIR}/ directory"
    if name != record_name(game_id):
        return f"is not the record the event writes for game {game_id} ({record_name(game_id)})"
    return None


def read_stored_record(out_dir: Path, name: str, game_id: int) -> bytes:
    """The bytes of the record ``name`` an event's store names for game ``game_id``, from
    ``out_dir/games/`` (``open_stored_record``), at most ``MAX_RECORD_BYTES`` of them.

    Raises:
        FileRefusedError: the name or the file is refused, with the reason.
        OSError: it cannot be read; ``FileNotFoundError`` when it (or ``games/``) is missing.
    """
    return read_capped(open_stored_record(out_dir, name, game_id), MAX_RECORD_BYTES)


def check_stored_record(out_dir: Path, name: str, game_id: int) -> None:
    """Refuse the record ``name`` of game ``game_id`` as ``read_stored_record`` would, or a
    record longer than its cap, reading none of it.

    Raises:
        FileRefusedError: the name or the file is refused, with the reason.
        OSError: it cannot be opened; ``FileNotFoundError`` when it is missing.
    """
    fd = open_stored_record(out_dir, name, game_id)
    try:
        if os.fstat(fd).st_size > MAX_RECORD_BYTES:
            raise FileRefusedError(f"is larger than {MAX_RECORD_BYTES:,} bytes")
    finally:
        os.close(fd)


def open_stored_record(out_dir: Path, name: str, game_id: int) -> int:
    """A descriptor of the record ``name`` an event's store names for game ``game_id``, in
    ``out_dir/games/``.

    The name must be the one the event writes for that game (``record_path_problem``);
    ``games`` must be a directory of ``out_dir`` and the record a regular file in it, neither
    reached through a symbolic link, of one link only (a hard link could be a file of
    anywhere on the file system).

    Raises:
        FileRefusedError: the name or the file is refused, with the reason.
        OSError: it cannot be opened; ``FileNotFoundError`` when it (or ``games/``) is missing.
    """
    problem = record_path_problem(name, game_id)
    if problem is not None:
        raise FileRefusedError(problem)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        folder = os.open(out_dir / RECORDS_DIR, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileRefusedError(
                f"is in {RECORDS_DIR}/, which is not a directory of the event's own (a "
                "symbolic link, or a file)"
            ) from None
        raise
    try:
        fd = open_regular(PurePosixPath(name).name, follow=False, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        links = os.fstat(fd).st_nlink
    except BaseException:
        os.close(fd)
        raise
    if links > 1:
        os.close(fd)
        raise FileRefusedError(
            f"has {links} hard links (a record the event writes has one): it may be a file "
            "from outside the event's directory"
        )
    return fd


def check_store_file(path: Path) -> None:
    """Check ``results.sqlite`` before SQLite opens it, and the files SQLite would open
    beside it (``-journal``, ``-wal``, ``-shm``) where they exist: each a regular file
    reached without a symbolic link (a FIFO would block SQLite's ``open``, a device would
    never end), the store at most ``MAX_STORE_BYTES`` long and its log as well.

    Raises:
        FileRefusedError: naming the file (as ``PATH is ...``).
        OSError: the store cannot be looked at (``FileNotFoundError`` when it is missing).
    """
    for suffix in ("", "-journal", "-wal", "-shm"):
        file = path.with_name(path.name + suffix)
        try:
            info = os.lstat(file)
        except FileNotFoundError:
            if not suffix:
                raise
            continue
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(f"{file} is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > MAX_STORE_BYTES:
            raise FileRefusedError(f"{file} is larger than {MAX_STORE_BYTES:,} bytes")

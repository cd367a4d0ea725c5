"""Opening a file someone else may have made, safely: not following a symbolic link at its
last step where none may be followed, without blocking (a FIFO with no writer would block
``open`` for ever), checked to be a regular file on the descriptor it was opened as (no race
can swap in a device between a check and the read), and read up to a cap (at most ``cap + 1``
bytes are ever read). Shared by every reader of such files: an event's store and records, a
token file, a self-play run's parts."""

from __future__ import annotations

import errno
import fcntl
import os
import stat


class FileRefusedError(Exception):
    """A file that is not read: not a regular file, a symbolic link where none is followed,
    outside the directory it must be in, or longer than its cap. ``reason`` says which, in a
    few words that follow the file's name (``is a FIFO, not a regular file``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def file_kind(mode: int) -> str:
    """What a file of mode ``mode`` is, as an error message names it (``a FIFO``)."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular(
    path: str | os.PathLike[str], *, follow: bool = True, dir_fd: int | None = None
) -> int:
    """A descriptor of the regular file ``path``, opened for reading.

    The file is opened without blocking (a FIFO with no writer would block ``open`` for
    ever), then checked with ``fstat``: what was opened is what is checked. With ``follow``
    false a symbolic link at the last step of the path is refused.

    Raises:
        FileRefusedError: not a regular file, or a symbolic link where none is followed.
        OSError: it cannot be opened (``FileNotFoundError`` when it does not exist).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise FileRefusedError("is a symbolic link, which is not followed") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefusedError(f"is {file_kind(mode)}, not a regular file")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_capped(fd: int, cap: int) -> bytes:
    """All of the regular file open as ``fd`` (which is closed), or a refusal if it is longer
    than ``cap`` bytes: its size is looked at first, and at most ``cap + 1`` bytes are read
    (a file that grows while it is read is caught too).

    Raises:
        FileRefusedError: longer than ``cap``.
        OSError: a read failed.
    """
    try:
        if os.fstat(fd).st_size > cap:
            raise FileRefusedError(f"is larger than {cap:,} bytes")
        chunks: list[bytes] = []
        size = 0
        while size <= cap and (chunk := os.read(fd, min(cap + 1 - size, 1 << 20))):
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            raise FileRefusedError(f"is larger than {cap:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)

"""One run at a time on an event directory: ``lock_event`` holds ``DIR/lock`` while the event
runs, so that a second run on it, ``--resume`` included, is refused instead of playing the
same games."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from enginesrv.event.config import EventError

LOCK_NAME = "lock"
"""The lock file of an event directory (``lock_event``)."""

_held: set[Path] = set()
"""The event directories this process holds."""


@contextlib.contextmanager
def lock_event(out_dir: Path | None) -> Iterator[None]:
    """Hold the event directory ``out_dir`` (made if missing) while the block runs, so that a
    second run on it, ``--resume`` included, is refused instead of playing the same games.

    ``DIR/lock`` is locked with ``flock`` and holds the holder's PID. The kernel drops the lock
    when the process ends however it ends, so the file a killed run leaves blocks nothing; on
    leaving, the file is removed (while still locked: whoever opened it meanwhile sees that it
    is gone and takes a new one). Holding a directory this process already holds is a no-op;
    ``None`` (no ``--out``) holds nothing.

    Raises:
        EventError: another process holds the directory (the message names its PID), or the
            directory or its lock file cannot be made.
    """
    if out_dir is None or out_dir.resolve() in _held:
        yield
        return
    key = out_dir.resolve()
    # the directories made here, deepest first: removed on leaving if the run left them empty
    made = list(itertools.takewhile(lambda p: not p.exists(), (out_dir, *out_dir.parents)))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / LOCK_NAME
        fd = _take_lock(out_dir, path)
    except OSError as exc:
        _remove_empty(made)
        raise EventError(
            f"{out_dir}: cannot create the results directory: {exc.strerror or exc}"
        ) from None
    except EventError:
        _remove_empty(made)
        raise
    _held.add(key)
    try:
        yield
    finally:
        _held.discard(key)
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)
        _remove_empty(made)


def _remove_empty(dirs: list[Path]) -> None:
    """Remove ``dirs`` in turn, stopping at the first that is not empty."""
    for path in dirs:
        try:
            path.rmdir()
        except OSError:
            return


def _take_lock(out_dir: Path, path: Path) -> int:
    """Lock ``path`` for this process and write our PID into it; returns its descriptor."""
    # the directory may be crafted: a link planted as the lock is not followed (its target
    # would be truncated), nor is a hard link or anything but a regular file written
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    while True:
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise EventError(f"{path}: cannot open the lock file: {exc.strerror or exc}") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            raise EventError(
                f"{path} is not a lock file (a regular file of one link): it is left as it is"
            )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fd)
            os.close(fd)
            raise EventError(
                f"{out_dir} is in use by another run (PID {holder}); wait for it or stop it"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise EventError(f"{path}: cannot lock the directory: {exc.strerror or exc}") from None
        try:
            current: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(os.fstat(fd), current):
            break
        os.close(fd)  # the run that held it removed it as it left: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as exc:
        os.close(fd)
        raise EventError(f"{path}: cannot write the lock file: {exc.strerror or exc}") from None
    return fd


def _lock_holder(fd: int) -> str:
    """The PID written in a lock file another process holds (``unknown`` if none yet)."""
    for _ in range(20):  # the holder writes it just after locking
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return text
        time.sleep(0.005)
    return "unknown"

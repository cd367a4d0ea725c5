"""Where what an engine wrote (its standard error, its protocol trace) waits until its game is
over: out of every other process's reach, and capped.

Both may hold the engine's secrets (its Yin Yang laws), so no other engine may read them
while the game runs. An engine of the same user can open any file the user can, wherever it
is and whatever its mode, so they are kept in a file without a name (``O_TMPFILE``): the
only way to it is the arbiter's own table of open files, ``/proc/ARBITER/fd``, which the
arbiter closes to other processes by making itself undumpable (``enginesrv.reaper
.set_dumpable``; the CLI does it). Where the file system has no such files they are kept in
memory. Either way at most ``cap`` bytes are kept per game; the rest is counted and left out,
and the published log says so where it was cut.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOG_CAP = 64 << 20
"""The most bytes kept of one stream (standard error, protocol trace) of one engine in one
game (``--log-cap``)."""


def describe_bytes(count: int) -> str:
    """``count`` bytes for a person: ``64 MiB`` when whole mebibytes, else ``1234 bytes``."""
    return f"{count >> 20} MiB" if count and count % (1 << 20) == 0 else f"{count} bytes"


def _nameless_file() -> IO[bytes]:
    """A new file without a name in the temporary directory, or a buffer in memory where
    there can be none (a file system without ``O_TMPFILE``)."""
    flags = getattr(os, "O_TMPFILE", 0)
    if flags:
        # O_EXCL: the file can never be given a name, not even through /proc/self/fd
        with contextlib.suppress(OSError):
            fd = os.open(tempfile.gettempdir(), flags | os.O_RDWR | os.O_EXCL, 0o600)
            return os.fdopen(fd, "w+b")
    return io.BytesIO()


@dataclass
class Kept:
    """What a ``PrivateLog`` gathered between two ``take``s: ``size`` bytes in ``store``,
    and ``dropped`` bytes more that were left out (over the cap)."""

    store: IO[bytes]
    size: int
    dropped: int
    cap: int

    @classmethod
    def nothing(cls) -> Kept:
        """Nothing kept."""
        return cls(io.BytesIO(), 0, 0, 0)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.store.close()

    def head(self, limit: int) -> bytes:
        """The first ``limit`` bytes kept."""
        self.store.seek(0)
        return self.store.read(min(limit, self.size))

    def copy_to(self, target: IO[bytes]) -> None:
        """Write what was kept to ``target`` and, when some was left out, a line saying so."""
        self.store.seek(0)
        shutil.copyfileobj(self.store, target)
        if self.dropped:
            start = b"" if self.size == 0 or self._ends_a_line() else b"\n"
            target.write(
                start
                + f"[cut here: more than {describe_bytes(self.cap)} in one game; "
                f"{self.dropped} bytes more were left out]\n".encode()
            )

    def _ends_a_line(self) -> bool:
        self.store.seek(self.size - 1)
        ended = self.store.read(1) == b"\n"
        self.store.seek(0, io.SEEK_END)
        return ended


class PrivateLog:
    """The bytes of one stream of one engine, kept for the arbiter alone (module docstring)
    until ``take`` hands them over; at most ``cap`` bytes between two ``take``s. ``write``
    may be called from any thread."""

    def __init__(self, cap: int = LOG_CAP) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._store: IO[bytes] | None = None
        self._size = 0
        self._dropped = 0
        self.broken = False
        """Whether a write failed (a full disk): the rest of the game is left out."""
        self.closed = False
        """Whether ``close`` was called: what comes after is dropped."""

    @property
    def size(self) -> int:
        """Bytes kept since the last ``take``."""
        return self._size

    def room(self) -> int:
        """Bytes that may still be kept before the cap."""
        return max(0, self.cap - self._size)

    def write(self, data: bytes) -> None:
        """Keep ``data``, or as much of it as the cap allows; count the rest."""
        with self._lock:
            keep = data[: self.room()] if not (self.broken or self.closed) else b""
            self._dropped += len(data) - len(keep)
            if not keep:
                return
            try:
                if self._store is None:
                    self._store = _nameless_file()
                self._store.write(keep)
                self._size += len(keep)
            except OSError:
                self.broken = True
                self._dropped += len(keep)

    def take(self) -> Kept | None:
        """What was kept since the last call (None: nothing came), and begin afresh."""
        with self._lock:
            store, size, dropped = self._store, self._size, self._dropped
            self._store, self._size, self._dropped, self.broken = None, 0, 0, False
        if store is None and not dropped:
            return None
        return Kept(store or io.BytesIO(), size, dropped, self.cap)

    def head(self, limit: int) -> bytes:
        """The first ``limit`` bytes kept since the last ``take``, without taking them."""
        with self._lock:
            if self._store is None:
                return b""
            where = self._store.tell()
            try:
                self._store.seek(0)
                return self._store.read(min(limit, self._size))
            finally:
                self._store.seek(where)

    def close(self) -> None:
        """Drop what was not taken, and all that comes later."""
        with self._lock:
            self.closed = True
        kept = self.take()
        if kept is not None:
            kept.close()


def publish(kept: Kept, target: Path, header: str | None = None, *, append: bool = False) -> bool:
    """Write ``kept`` (then close it) to ``target``, after ``header`` (a ``#`` comment line)
    when given, replacing the file or appending to it; whether it was written. Blocking:
    call it in a thread."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "ab" if append else "wb") as public:
            if header is not None:
                public.write(f"# {header}\n".encode("utf-8", "backslashreplace"))
            kept.copy_to(public)
        return True
    except OSError:
        return False
    finally:
        kept.close()


class PipeDrain:
    """Reads a pipe (an engine's standard error) into a ``PrivateLog`` on a thread of its own
    until the pipe ends (every writer gone), so that the writer never waits on it. ``pump``
    reads what is in the pipe now from any thread: called before the log is taken, it puts
    everything the engine wrote so far in the game it was written in."""

    CHUNK = 1 << 16
    PUMP_LIMIT = 1 << 20
    """The most bytes one ``pump`` reads: enough to empty a pipe, bounded under a flood."""

    def __init__(self, fd: int, log: PrivateLog, name: str) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._log = log
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        while True:
            with contextlib.suppress(InterruptedError):
                poller.poll()
            if not self.pump(limit=None):
                return

    def pump(self, limit: int | None = PUMP_LIMIT) -> bool:
        """Move what is in the pipe now (at most ``limit`` bytes) to the log; False once
        the pipe has ended (then it is closed)."""
        with self._lock:
            moved = 0
            while self._fd >= 0 and (limit is None or moved < limit):
                try:
                    data = os.read(self._fd, self.CHUNK)
                except BlockingIOError:
                    return True
                except OSError:
                    data = b""
                if not data:
                    os.close(self._fd)
                    self._fd = -1
                    break
                self._log.write(data)
                moved += len(data)
            return self._fd >= 0

    def join(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the pipe's end; whether it came."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

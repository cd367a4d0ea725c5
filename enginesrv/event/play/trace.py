"""The protocol trace of an external engine (``--debug``): every line sent to it and read
from it, time-stamped, kept where no engine can read it (``PrivateLog``) until its game is
over, then published as one file per game and player. Each player's trace holds only its own
engine's lines: what its opponent was told never enters it.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import trio

from enginesrv.event.play.private_log import LOG_CAP, PrivateLog, describe_bytes, publish

_ARROWS: dict[str, str] = {"send": ">", "recv": "<", "end": "#"}
ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127) if c != 9}
"""Control characters in a line are written escaped: a trace is read on a terminal."""
ALL_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127, *range(0x80, 0xA0))}
"""The control characters escaped in a line quoted in a one-line message: tabs too."""
NAME_BYTES = 100
"""The most bytes of a player's name in a file name (a file name holds 255)."""
NOTE_ROOM = 200
"""Bytes kept beyond the cap for the note that says where the trace was cut."""


def file_safe_name(name: str) -> str:
    """A player's name as part of a file name: letters, digits and ``-_.=`` kept, any other
    character ``_``; a name longer than ``NAME_BYTES`` (in UTF-8) is cut, and ends with a
    hash of the whole name so that two long names stay apart."""
    safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in name)
    if len(safe.encode()) <= NAME_BYTES:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:12]
    cut = safe.encode()[: NAME_BYTES - len(digest) - 1].decode("utf-8", "ignore")
    return f"{cut}-{digest}"


def trace_file_name(game_id: int, seat: int, name: str) -> str:
    """The file of the trace of game ``game_id`` of the player ``name`` in seat ``seat`` (0 =
    p1), e.g. ``game-00001-p1-alphabeta.trace``; the name as ``file_safe_name`` makes it, as
    for the engine's standard error."""
    return f"game-{game_id:05d}-p{seat + 1}-{file_safe_name(name)}.trace"


def _stamp(now: float) -> str:
    """``now`` (``time.time()``) as UTC ISO 8601 with milliseconds: 2026-11-29T14:03:07.412Z."""
    whole = int(now)
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        + f".{int((now - whole) * 1000):03d}Z"
    )


class ProtocolTrace:
    """The protocol trace of one external engine: a ``TraceCallback`` for ``enginesrv.client``
    writing each line as ``TIME > LINE`` (sent to the engine), ``TIME < LINE`` (read from it)
    or ``TIME # NOTE`` (the connection ended, the trace was cut), ``TIME`` in UTC with
    milliseconds, to a ``PrivateLog``. ``publish`` hands what was gathered since the last
    time to a public file and begins afresh. At most ``cap`` bytes are kept between two
    publications; then one note says the rest is left out.
    """

    def __init__(self, cap: int = LOG_CAP) -> None:
        self.cap = cap
        self._log = PrivateLog(cap + NOTE_ROOM)
        self._cut = False

    def __call__(self, kind: str, line: str) -> None:
        if self._cut:
            return
        now = _stamp(time.time())
        entry = f"{now} {_ARROWS[kind]} {line.translate(ESCAPES)}\n".encode(
            "utf-8", "backslashreplace"
        )
        if self._log.size + len(entry) > self.cap:
            self._cut = True
            cap = describe_bytes(self.cap)
            entry = f"{now} # cut: more than {cap} in this game; the rest is left out\n".encode()
        self._log.write(entry)

    async def publish(self, target: Path, header: str) -> Path | None:
        """Write ``header`` (a ``#`` comment line) and the lines gathered since the last call
        to ``target`` (replaced if it exists: a game played again on ``--resume`` has a new
        trace), in a thread; the file written, or None when there was nothing to write or
        it could not be written."""
        kept = self._log.take()
        self._cut = False
        if kept is None:
            return None
        written = await trio.to_thread.run_sync(publish, kept, target, header)
        return target if written else None

    def close(self) -> None:
        """Drop what was not published (the lines after a player's last game)."""
        self._log.close()

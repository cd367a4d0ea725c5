"""msgpack-RPC itself, below the protocol's commands: the three envelopes, how each is packed,
and a bounded reader that cuts a byte stream into frames.

* request ``[0, msgid, method, [params]]``, response ``[1, msgid, error, result]``,
  notification ``[2, method, [params]]``; ``params`` is ``[]`` or ``[map]``.
* ``FrameReader`` decodes strictly (strings are UTF-8, map keys are strings) and within bounds:
  ``max_frame`` caps the bytes buffered and each frame, and the arrays, maps and items one
  frame may build are counted as they are built, so that a few bytes cannot announce a huge
  allocation. After a failure it is broken for good (msgpack-python's unpacker cannot go on)
  and raises the same fatal error again.

The protocol's framing (``protocol.mpack``) reads its frames with it, and so do the server's
search workers and their pool, which speak msgpack-RPC to each other over pipes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, cast

import msgpack

from protocol.errors import BAD_FRAME, FRAME_TOO_LARGE, ErrorCode, ProtocolError

REQUEST: Final = 0
RESPONSE: Final = 1
NOTIFY: Final = 2
DEFAULT_MAX_FRAME: Final = 1024 * 1024
"""The default largest frame (and buffer) in bytes."""
MAX_ARRAY: Final = 65536
"""The longest array a frame may hold (a ``position`` move list is the longest use)."""
MAX_MAP: Final = 256
"""The most keys a map may hold."""
MAX_ITEMS: Final = 131072
"""The most arrays, maps and items in them one frame may hold, nested ones included."""

Params: TypeAlias = Mapping[str, object]


def pack(frame: object) -> bytes:
    """One frame's bytes (strings as ``str``, bytes as ``bin``)."""
    return msgpack.packb(frame, use_bin_type=True)


def pack_request(msgid: int, method: str, params: Params | None = None) -> bytes:
    return pack([REQUEST, msgid, method, [dict(params)] if params is not None else []])


def pack_response(msgid: int, error: object, result: object) -> bytes:
    return pack([RESPONSE, msgid, error, result])


def pack_notification(method: str, params: Params | None = None) -> bytes:
    return pack([NOTIFY, method, [dict(params)] if params is not None else []])


@dataclass(frozen=True, slots=True)
class Envelope:
    """A frame of one of the three shapes, its parts taken apart. ``kind`` is ``REQUEST``,
    ``RESPONSE`` or ``NOTIFY``; ``msgid`` is None for a notification, ``method`` "" for a
    response; ``params`` is the params map ({} for ``[]``); ``error`` and ``result`` are a
    response's."""

    kind: int
    msgid: int | None
    method: str
    params: Params
    error: object = None
    result: object = None


def envelope(frame: object) -> Envelope | None:
    """``frame`` as an ``Envelope``, or None when it has none of the three shapes (or its
    params are not ``[]`` or ``[map]``)."""
    if not isinstance(frame, list) or not frame or type(frame[0]) is not int:
        return None
    kind = frame[0]
    if kind == RESPONSE and len(frame) == 4 and type(frame[1]) is int:
        return Envelope(RESPONSE, frame[1], "", {}, frame[2], frame[3])
    if kind == REQUEST and len(frame) == 4 and type(frame[1]) is int:
        msgid, method, raw = frame[1], frame[2], frame[3]
    elif kind == NOTIFY and len(frame) == 3:
        msgid, method, raw = None, frame[1], frame[2]
    else:
        return None
    if not isinstance(method, str) or not isinstance(raw, list) or len(raw) > 1:
        return None
    if raw and not isinstance(raw[0], dict):
        return None
    return Envelope(kind, msgid, method, cast(Params, raw[0]) if raw else {})


class _TooManyItemsError(Exception):
    """Raised inside the unpacker's hooks to stop a frame with too many values."""


class FrameReader:
    """Incremental, bounded reader of msgpack frames (module docstring)."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._items = 0
        self._frame_start = 0
        self.last_size = 0
        """The bytes of the last whole frame read."""
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_buffer_size=max_frame,
            max_array_len=min(max_frame, MAX_ARRAY),
            max_map_len=min(max_frame, MAX_MAP),
            list_hook=self._count_list,
            object_hook=self._count_map,
        )
        self._broken: ProtocolError | None = None

    def _check_size(self) -> None:
        """Refuse a frame, whole or not yet, of more than ``max_frame`` bytes (the buffer
        limit alone does not see the bytes already decoded into a frame still growing)."""
        if self._unpacker.tell() - self._frame_start > self.max_frame:
            raise self.break_with(FRAME_TOO_LARGE, f"a frame is longer than {self.max_frame} bytes")

    # A byte of msgpack can become a container of 60 bytes or more, so the bytes of a frame do
    # not bound what decoding it builds; these hooks count the containers and their items as
    # the unpacker builds them, and stop a frame that holds too many.
    def _count(self, items: int) -> None:
        self._items += items + 1
        if self._items > MAX_ITEMS:
            raise _TooManyItemsError

    def _count_list(self, value: list[object]) -> list[object]:
        self._count(len(value))
        return value

    def _count_map(self, value: dict[str, object]) -> dict[str, object]:
        self._count(len(value))
        return value

    def feed(self, data: bytes | bytearray) -> None:
        """Add received bytes.

        Raises:
            ProtocolError: fatal 102 when more than ``max_frame`` bytes would be buffered.
        """
        if self._broken is not None:
            raise self._broken
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise self.break_with(
                FRAME_TOO_LARGE, f"more than {self.max_frame} bytes buffered in one frame"
            ) from None

    def next_frame(self) -> tuple[bool, object]:
        """``(True, frame)`` for the next whole frame, ``(False, None)`` when more bytes are
        needed (a frame may itself be nil, hence the flag).

        Raises:
            ProtocolError: fatal 102 (too large) or 103 (not msgpack).
        """
        if self._broken is not None:
            raise self._broken
        try:
            frame = next(self._unpacker)
        except StopIteration:
            self._check_size()  # the unpacker keeps what it built of a frame not yet whole
            return False, None
        except _TooManyItemsError:
            raise self.break_with(
                FRAME_TOO_LARGE, f"a frame holds more than {MAX_ITEMS} values"
            ) from None
        except (ValueError, msgpack.UnpackException, RecursionError, TypeError) as exc:
            raise self.break_with(BAD_FRAME, f"invalid msgpack: {exc}") from None
        self._check_size()
        self._items = 0
        self.last_size = self._unpacker.tell() - self._frame_start
        self._frame_start = self._unpacker.tell()
        return True, frame

    def envelopes(self) -> Iterator[Envelope]:
        """The envelopes of the whole frames read so far; a frame of none of the three shapes
        is skipped (for peers that trust each other, as the server and its workers do).

        Raises:
            ProtocolError: as ``next_frame``.
        """
        while True:
            whole, frame = self.next_frame()
            if not whole:
                return
            message = envelope(frame)
            if message is not None:
                yield message

    def break_with(self, error: ErrorCode, message: str) -> ProtocolError:
        """Break the reader for good with this error (also for a caller that found a frame of
        the wrong shape), and return it to raise."""
        self._broken = ProtocolError(error, message)
        return self._broken

    def poison(self, error: ProtocolError) -> None:
        """Break the reader for good with ``error`` (a frame of the wrong shape): the stream
        cannot be trusted after it."""
        self._broken = error


def frames_problem(data: bytes) -> str | None:
    """What keeps ``data`` from being whole msgpack values one after another, or None when it
    is: a message-based transport (a WebSocket's binary messages) refuses such a message. The
    values are skipped, not built."""
    unpacker = msgpack.Unpacker(max_buffer_size=max(len(data), 1))
    unpacker.feed(data)
    end = 0
    try:
        while end < len(data):
            unpacker.skip()
            end = unpacker.tell()
    except msgpack.OutOfData:
        return f"it ends inside a msgpack frame (its last {len(data) - end} bytes)"
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        return f"byte {end} ({data[end]:#04x}) starts no msgpack value"
    return None

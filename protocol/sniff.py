"""Choosing the framing of a connection from its first byte.

A msgpack-RPC frame is an array, so its first byte is an array header: a fixarray (0x90-0x9f),
array 16 (0xdc) or array 32 (0xdd). A text command starts with a printable ASCII character or
white space. The two sets do not overlap, and neither includes, for example, 0x16 (the first
byte of a TLS handshake), which is refused.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

Framing: TypeAlias = Literal["text", "msgpack"]

MSGPACK_FIRST: Final = frozenset([*range(0x90, 0xA0), 0xDC, 0xDD])
TEXT_FIRST: Final = frozenset([*range(0x20, 0x7F), 0x09, 0x0A, 0x0D])


def sniff(first: int) -> Framing | None:
    """The framing a connection speaks, from its first byte; None when it speaks neither."""
    if first in MSGPACK_FIRST:
        return "msgpack"
    if first in TEXT_FIRST:
        return "text"
    return None

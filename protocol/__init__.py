"""The enginesrv wire protocol, version 1, sans I/O (docs/protocol.md is the specification).

What belongs here: the message model (``protocol.messages``), the text-line codec, a strict
superset of UGI (``protocol.text``), the msgpack-RPC codec (``protocol.mpack``), the framing
sniffer (``protocol.sniff``), the shared table of error codes (``protocol.errors``) and the
state machine of a session's search, which the server, the client and the web's refereed games
all keep (``protocol.state``).
Imports msgpack only, none of our packages: moves and positions are opaque strings here, and
no code in this package knows a rule of any game. Decoders are incremental (``feed`` bytes,
then take messages) and raise nothing but ``ProtocolError``.
"""

from __future__ import annotations

from protocol.errors import ERROR_CODES, ErrorCode, ProtocolError
from protocol.messages import PROTOCOL_VERSION, Command, Reply, ReplyLine, Request
from protocol.mpack import MsgpackDecoder
from protocol.sniff import Framing, sniff
from protocol.state import SearchEvent, SearchMachine, SearchState, SearchStateError
from protocol.text import TextDecoder

__all__ = [
    "ERROR_CODES",
    "PROTOCOL_VERSION",
    "Command",
    "ErrorCode",
    "Framing",
    "MsgpackDecoder",
    "ProtocolError",
    "Reply",
    "ReplyLine",
    "Request",
    "SearchEvent",
    "SearchMachine",
    "SearchState",
    "SearchStateError",
    "TextDecoder",
    "sniff",
]

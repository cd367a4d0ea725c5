"""The error table shared by both framings, and ``ProtocolError``.

Codes are grouped by hundreds: 1xx framing and syntax, 2xx game and session state, 3xx capacity,
5xx internal. A code is sent as ``error CODE NAME TEXT`` in the text framing and as
``[code, name, message, data]`` in a msgpack-RPC error. The table is the single source of the
names; docs/protocol.md lists the same codes with when each is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One row of the error table.

    Attributes:
        code: the number on the wire.
        name: the stable kebab-case name on the wire.
        fatal: whether the connection is closed after sending it (the framing can no longer be
            trusted, or a limit was exceeded).
        meaning: one line for the documentation and for ``error`` texts without detail.
    """

    code: int
    name: str
    fatal: bool
    meaning: str


UNKNOWN_COMMAND: Final = ErrorCode(100, "unknown-command", False, "the command is not known")
BAD_ARGUMENTS: Final = ErrorCode(
    101, "bad-arguments", False, "missing, extra or malformed arguments, or an unknown option"
)
FRAME_TOO_LARGE: Final = ErrorCode(
    102, "frame-too-large", True, "a line or msgpack frame exceeds the limit"
)
BAD_FRAME: Final = ErrorCode(
    103, "bad-frame", True, "invalid UTF-8, invalid msgpack, or a frame that is not a message"
)
UNSUPPORTED_VERSION: Final = ErrorCode(
    104, "unsupported-version", False, "the client asked for a protocol version we do not speak"
)
NO_GAME: Final = ErrorCode(200, "no-game", False, "no game or position has been set")
ILLEGAL_MOVE: Final = ErrorCode(201, "illegal-move", False, "the move is not legal here")
INVALID_POSITION: Final = ErrorCode(
    202, "invalid-position", False, "the position string is not valid for the game"
)
GAME_OVER: Final = ErrorCode(203, "game-over", False, "the game is over")
SEARCH_IN_PROGRESS: Final = ErrorCode(
    204, "search-in-progress", False, "the command cannot run while a search runs"
)
NOT_SEARCHING: Final = ErrorCode(205, "not-searching", False, "no search is running")
MOVES_HIDDEN: Final = ErrorCode(
    206, "moves-hidden", False, "the moves of the side to act depend on hidden information"
)
BUSY: Final = ErrorCode(300, "busy", False, "the server is at capacity")
TOO_MANY_REQUESTS: Final = ErrorCode(
    301, "too-many-requests", False, "too many requests are in flight on this connection"
)
IDLE_TIMEOUT: Final = ErrorCode(
    302, "idle-timeout", True, "the connection was idle for longer than the limit"
)
TOO_MANY_CONNECTIONS: Final = ErrorCode(
    303, "too-many-connections", True, "the server has no room for another connection"
)
SHUTTING_DOWN: Final = ErrorCode(304, "shutting-down", True, "the server is shutting down")
PLY_LIMIT: Final = ErrorCode(
    305, "ply-limit", False, "the session's game has reached the server's ply limit"
)
LOGIN_REFUSED: Final = ErrorCode(
    306, "login-refused", True, "the name and token were not accepted, or not tried now"
)
AUTH_REFUSED: Final = ErrorCode(
    307, "auth-refused", True, "the token was not accepted, not tried now, or not sent first"
)
INTERNAL: Final = ErrorCode(500, "internal", False, "an internal error; it has been logged")

ERROR_CODES: Final[tuple[ErrorCode, ...]] = (
    UNKNOWN_COMMAND,
    BAD_ARGUMENTS,
    FRAME_TOO_LARGE,
    BAD_FRAME,
    UNSUPPORTED_VERSION,
    NO_GAME,
    ILLEGAL_MOVE,
    INVALID_POSITION,
    GAME_OVER,
    SEARCH_IN_PROGRESS,
    NOT_SEARCHING,
    MOVES_HIDDEN,
    BUSY,
    TOO_MANY_REQUESTS,
    IDLE_TIMEOUT,
    TOO_MANY_CONNECTIONS,
    SHUTTING_DOWN,
    PLY_LIMIT,
    LOGIN_REFUSED,
    AUTH_REFUSED,
    INTERNAL,
)
BY_CODE: Final = {e.code: e for e in ERROR_CODES}
BY_NAME: Final = {e.name: e for e in ERROR_CODES}


class ProtocolError(Exception):
    """The only exception the decoders raise, for input that is not a valid message.

    A non-fatal error concerns one message (an unknown command, bad arguments); the decoder has
    consumed it and goes on with the next. After a fatal error (bad framing, a limit exceeded)
    the decoder is broken: every later call raises the same error again, and the connection
    should be answered with this error and closed.

    Attributes:
        error: the row of the error table.
        message: what was wrong, quoting the input.
        msgid: the msgpack-RPC id of the request it answers, when one could be read.
        method: the command or method name, when one could be read.
    """

    def __init__(
        self,
        error: ErrorCode,
        message: str,
        *,
        msgid: int | None = None,
        method: str | None = None,
    ) -> None:
        super().__init__(f"{error.code} {error.name}: {message}")
        self.error = error
        self.message = message
        self.msgid = msgid
        self.method = method

    @property
    def code(self) -> int:
        """The numeric code."""
        return self.error.code

    @property
    def fatal(self) -> bool:
        """Whether the connection must be closed after reporting it."""
        return self.error.fatal

"""The first message of a bot that connects out to a ladder (docs/protocol.md §11).

A ladder turns the roles of §2 around: the bot opens the connection and speaks first, with
``login NAME TOKEN`` as a text line or the notification ``[2, "login", [{"name": NAME,
"token": TOKEN}]]`` as a msgpack frame. That message picks the connection's framing (by its
first byte, as §2 does for a server), and from then on the bot speaks as an engine and the
ladder as an arbiter. ``LoginReader`` reads it from the connection's first bytes, at most
``MAX_LOGIN`` of them, and hands on whatever came after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import msgpack

from protocol.errors import BAD_ARGUMENTS, BAD_FRAME, FRAME_TOO_LARGE, ProtocolError
from protocol.rpc import NOTIFY, pack_notification
from protocol.sniff import Framing, sniff

MAX_LOGIN: Final = 512
"""The most bytes the login may take, its line end included."""
NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,31}")
TOKEN: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")


@dataclass(frozen=True, slots=True)
class Login:
    """Who a bot says it is, and the framing it speaks."""

    name: str
    token: str
    framing: Framing

    def __repr__(self) -> str:  # never the token, in a log or a traceback
        return f"Login(name={self.name!r}, token=..., framing={self.framing!r})"


def encode_login(name: str, token: str, framing: Framing) -> bytes:
    """The login's bytes in ``framing``."""
    if framing == "text":
        return f"login {name} {token}\n".encode()
    return pack_notification("login", {"name": name, "token": token})


class LoginReader:
    """Reads the login from the first bytes of a connection (``feed``); ``rest`` is what came
    after it. Every error is fatal (the connection is answered with it and closed) and names
    no part of a token."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.rest = b""

    def feed(self, data: bytes) -> Login | None:
        """The login, once the bytes fed so far hold it whole; None while more are needed.

        Raises:
            ProtocolError: 103 not a login in either framing, 102 longer than MAX_LOGIN
                bytes, 101 a name or token of the wrong form.
        """
        self._buffer += data
        if not self._buffer:
            return None
        framing = sniff(self._buffer[0])
        if framing is None:
            raise ProtocolError(BAD_FRAME, "the first byte is neither text nor msgpack")
        found = self._text() if framing == "text" else self._frame()
        if found is None and len(self._buffer) >= MAX_LOGIN:
            raise ProtocolError(FRAME_TOO_LARGE, f"no login within {MAX_LOGIN} bytes")
        return found

    def _text(self) -> Login | None:
        end = self._buffer.find(b"\n", 0, MAX_LOGIN)
        if end < 0:
            return None
        line = bytes(self._buffer[:end]).rstrip(b"\r")
        self.rest = bytes(self._buffer[end + 1 :])
        words = line.decode("ascii", "replace").split(" ")
        if len(words) != 3 or words[0] != "login":
            raise ProtocolError(BAD_FRAME, "the first line must be: login NAME TOKEN")
        return _checked(words[1], words[2], "text")

    def _frame(self) -> Login | None:
        unpacker = msgpack.Unpacker(
            raw=False, strict_map_key=True, max_buffer_size=2 * MAX_LOGIN,
            max_str_len=MAX_LOGIN, max_bin_len=0, max_array_len=3, max_map_len=2,
        )  # fmt: skip
        unpacker.feed(bytes(self._buffer[:MAX_LOGIN]))
        try:
            frame = next(unpacker)
        except StopIteration:
            return None
        except (ValueError, msgpack.UnpackException, RecursionError, TypeError):
            raise ProtocolError(BAD_FRAME, "the first frame is not msgpack") from None
        self.rest = bytes(self._buffer[unpacker.tell() :])
        shaped = (
            isinstance(frame, list)
            and len(frame) == 3
            and frame[0] == NOTIFY
            and frame[1] == "login"
            and isinstance(frame[2], list)
            and len(frame[2]) == 1
            and isinstance(frame[2][0], dict)
            and set(frame[2][0]) == {"name", "token"}
        )
        if not shaped:
            raise ProtocolError(BAD_FRAME, 'the first frame must be [2, "login", [{name, token}]]')
        params = frame[2][0]
        return _checked(params["name"], params["token"], "msgpack")


def _checked(name: object, token: object, framing: Framing) -> Login:
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise ProtocolError(
            BAD_ARGUMENTS, "login: a name is a letter, then up to 31 of A-Z a-z 0-9 _ . -"
        )
    if not isinstance(token, str) or TOKEN.fullmatch(token) is None:
        raise ProtocolError(BAD_ARGUMENTS, "login: a token is 1 to 128 of A-Z a-z 0-9 _ -")
    return Login(name, token, framing)

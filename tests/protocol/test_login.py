"""The ladder's login (``protocol.login``, docs/protocol.md §11): read in either framing from
any cut of the bytes, what follows handed on, and every wrong first message refused with a
fatal error that quotes no token."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import ProtocolError
from protocol.login import MAX_LOGIN, Login, LoginReader, encode_login
from protocol.sniff import Framing

TOKEN = "Zx_9-" + "a" * 38


@pytest.mark.parametrize("framing", ["text", "msgpack"])
@pytest.mark.parametrize("cut", [1, 2, 7, 1000])
def test_the_login_in_either_framing_from_any_cut(framing: Framing, cut: int) -> None:
    after = b"bestmove c3\n" if framing == "text" else msgpack.packb([1, 1, None, "ok"])
    data = encode_login("alice.bot-2", TOKEN, framing) + after
    reader = LoginReader()
    found = None
    for start in range(0, len(data), cut):
        assert found is None  # nothing is read twice
        found = reader.feed(data[start : start + cut])
        if found is not None:
            reader.rest += data[start + cut :]
            break
    assert found == Login("alice.bot-2", TOKEN, framing)
    assert reader.rest == after


def test_a_crlf_line_ends_the_login_too() -> None:
    assert LoginReader().feed(f"login bob {TOKEN}\r\n".encode()) == Login("bob", TOKEN, "text")


BAD_TEXT = [
    (b"\x16\x03\x01\x02\x00", "103", "neither text nor msgpack"),  # a TLS handshake
    (b"ugi\n", "103", "login NAME TOKEN"),
    (b"login bob\n", "103", "login NAME TOKEN"),
    (b"login  bob S3cretValue\n", "103", "login NAME TOKEN"),
    (b"login bob S3cretValue extra\n", "103", "login NAME TOKEN"),
    (b"login 9bob S3cretValue\n", "101", "a name is"),
    (b"login bob S3cret\xc3\xa9Value\n", "101", "a token is"),
    (b"login bob S3cretValue" + b"t" * 129 + b"\n", "101", "a token is"),
    (b"login bob " + b"t" * 600, "102", f"no login within {MAX_LOGIN} bytes"),
]


@pytest.mark.parametrize(("data", "code", "said"), BAD_TEXT)
def test_a_wrong_first_line_is_refused(data: bytes, code: str, said: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        LoginReader().feed(data)
    assert str(caught.value).startswith(code)
    assert said in caught.value.message
    assert "S3cret" not in caught.value.message


BAD_FRAMES = [
    [0, 1, "login", [{"name": "bob", "token": "S3cretValue"}]],  # a request, not a notification
    [2, "ugi", [{"name": "bob", "token": "S3cretValue"}]],
    [2, "login", [{"name": "bob"}]],
    [2, "login", [{"name": "bob", "token": "S3cretValue", "x": 1}]],
    [2, "login", []],
    [2, "login", [{"name": 7, "token": "S3cretValue"}]],
    [2, "login", [{"name": "bob", "token": ["S3cretValue"]}]],
]


@pytest.mark.parametrize("frame", BAD_FRAMES)
def test_a_wrong_first_frame_is_refused(frame: object) -> None:
    with pytest.raises(ProtocolError) as caught:
        LoginReader().feed(msgpack.packb(frame))
    assert "S3cret" not in caught.value.message


def test_the_token_is_in_no_repr() -> None:
    login = Login("bob", TOKEN, "text")
    assert TOKEN not in repr(login)
    assert TOKEN not in str(login)


@given(st.binary(max_size=600))
def test_any_bytes_give_a_login_more_to_read_or_a_protocol_error(data: bytes) -> None:
    reader = LoginReader()
    try:
        found = reader.feed(data)
    except ProtocolError:
        return
    if found is None:
        assert len(data) < MAX_LOGIN

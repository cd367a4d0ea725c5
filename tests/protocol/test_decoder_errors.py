"""Bad input: every error is a ProtocolError with the right code; non-fatal ones leave the
decoder usable, fatal ones break it for good. Then fuzzing of both framings."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import errors
from protocol import messages as m
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder, encode_request
from protocol.text import TextDecoder, encode_command


def text_error(line: bytes) -> ProtocolError:
    decoder = TextDecoder()
    decoder.feed(line + b"\nisready\n")
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert not info.value.fatal
    assert decoder.next_message() == m.Request(m.IsReady())  # the session goes on
    return info.value


@pytest.mark.parametrize(
    ("line", "code", "needle"),
    [
        (b"bogus", 100, "'bogus'"),
        (b"uci", 100, "'uci'"),
        (b"UGI", 100, "'UGI'"),
        (b"ugi now", 101, "ugi takes no arguments"),
        (b"isready 1", 101, "isready"),
        (b"ping", 101, "ping N"),
        (b"ping x", 101, "'x'"),
        (b"ping -1", 101, "below 0"),
        (b"ping 99999999999999999999", 101, "whole number"),
        (b"ping \xd9\xa1", 101, "whole number"),  # an Arabic-Indic digit is not a number here
        (b"setoption", 101, "setoption name NAME"),
        (b"setoption Hash 5", 101, "setoption name NAME"),
        (b"setoption name value 5", 101, "name is missing"),
        (b"uginewgame a b", 101, "uginewgame [GAME]"),
        (b"position", 101, "startpos|fen"),
        (b"position fen", 101, "missing"),
        (b"position fen moves a", 101, "missing"),
        (b"position startpos f6", 101, "unexpected 'f6'"),
        (b"position start", 101, "startpos|fen"),
        (b"go depth", 101, "needs a number"),
        (b"go depth 3 depth 4", 101, "twice"),
        (b"go infinite infinite", 101, "twice"),
        (b"go movetime -1", 101, "below 0"),
        (b"go wtime 100", 101, "unknown limit 'wtime'"),
        (b"query", 101, "nothing"),
        (b"query weather", 101, "'weather'"),
        (b"query moves now", 101, "query"),
        (b"play", 101, "play MOVE"),
        (b"play e1 e2", 101, "play MOVE"),
        (b"undo 0", 101, "below 1"),
        (b"undo 1 2", 101, "undo [N]"),
        (b"stop now", 101, "stop"),
    ],
)
def test_text_command_errors(line: bytes, code: int, needle: str) -> None:
    error = text_error(line)
    assert error.code == code
    assert needle in error.message


def test_long_line_is_fatal_102_and_the_limit_is_configurable() -> None:
    decoder = TextDecoder(max_line=16)
    decoder.feed(b"isready\n" + b"x" * 18)
    assert decoder.next_message() == m.Request(m.IsReady())
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert (info.value.code, info.value.fatal) == (102, True)
    decoder.feed(b"\nisready\n")
    with pytest.raises(ProtocolError):  # broken for good
        decoder.next_message()
    # a line of exactly the limit passes, with or without CR
    ok = TextDecoder(max_line=16)
    ok.feed(b"ping 12345678901\r\nping 12345678901\n")
    assert len(list(ok)) == 2


def test_default_line_limit_is_64_kib() -> None:
    decoder = TextDecoder()
    decoder.feed(b"position fen " + b"x" * (64 * 1024 - 13) + b"\n")
    assert decoder.next_message() is not None
    decoder.feed(b"position fen " + b"x" * (64 * 1024) + b"\n")
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert info.value.code == 102


def test_invalid_utf8_is_fatal_103() -> None:
    decoder = TextDecoder()
    decoder.feed(b"play \xff\xfe\n")
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert (info.value.code, info.value.fatal) == (103, True)


def feed_and_decode(decoder: MsgpackDecoder, data: bytes) -> object:
    decoder.feed(data)
    return decoder.next_message()


def mp_error(frame: bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        feed_and_decode(MsgpackDecoder(), frame)
    return info.value


@pytest.mark.parametrize(
    ("obj", "code", "needle"),
    [
        ({"method": "go"}, 103, "must be an array"),
        ("isready", 103, "must be an array"),
        (7, 103, "must be an array"),
        ([0, 1, "go"], 103, "not a request"),
        ([1, 1, None, {}], 103, "not a request"),
        ([3, 1, "go", []], 103, "not a request"),
        ([True, 1, "go", []], 103, "not a request"),
        ([0, -1, "go", []], 103, "request id"),
        ([0, 2**32, "go", []], 103, "request id"),
        ([0, "1", "go", []], 103, "request id"),
        ([0, 1, 5, []], 103, "method"),
        ([0, 1, "", []], 103, "method"),
        ([0, 1, "x" * 65, []], 103, "method"),
    ],
)
def test_msgpack_frame_errors_are_fatal(obj: object, code: int, needle: str) -> None:
    error = mp_error(msgpack.packb(obj))
    assert (error.code, error.fatal) == (code, True)
    assert needle in error.message


@pytest.mark.parametrize(
    ("obj", "code", "needle"),
    [
        ([0, 4, "bogus", []], 100, "'bogus'"),
        ([0, 4, "go", {"depth": 3}], 101, "params must be"),
        ([0, 4, "go", [{"depth": 3}, {}]], 101, "params must be"),
        ([0, 4, "go", ["depth"]], 101, "params must be"),
        ([0, 4, "go", [{"depth": "3"}]], 101, "'depth' must be an integer"),
        ([0, 4, "go", [{"depth": True}]], 101, "'depth' must be an integer"),
        ([0, 4, "go", [{"depth": 1.5}]], 101, "'depth' must be an integer"),
        ([0, 4, "go", [{"nodes": -2}]], 101, "at least 0"),
        ([0, 4, "go", [{"depth": 0}]], 101, "'depth' must be at least 1"),
        ([0, 4, "go", [{"infinite": 1}]], 101, "true or false"),
        ([0, 4, "ping", [{}]], 101, "'token' is required"),
        ([0, 4, "play", [{"move": "e1 e2"}]], 101, "one non-empty token"),
        ([0, 4, "play", [{"move": ""}]], 101, "one non-empty token"),
        ([0, 4, "play", [{"move": b"e1"}]], 101, "must be a string"),
        ([0, 4, "position", [{"moves": "f6"}]], 101, "array of strings"),
        ([0, 4, "position", [{"fen": "a\nb"}]], 101, "line break"),
        ([0, 4, "query", [{"what": "weather"}]], 101, "'weather'"),
        ([0, 4, "setoption", [{"name": " "}]], 101, "must not be empty"),
        ([0, 4, "setoption", [{"name": "X", "value": [1]}]], 101, "'value'"),
        ([0, 4, "undo", [{"n": 0}]], 101, "at least 1"),
    ],
)
def test_msgpack_request_errors_carry_the_id(obj: object, code: int, needle: str) -> None:
    decoder = MsgpackDecoder()
    decoder.feed(msgpack.packb(obj, use_bin_type=True) + encode_request(5, m.IsReady()))
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert (info.value.code, info.value.fatal, info.value.msgid) == (code, False, 4)
    assert needle in info.value.message
    assert decoder.next_message() == m.Request(m.IsReady(), 5)  # the connection goes on


def test_msgpack_invalid_bytes_and_utf8_are_fatal() -> None:
    assert mp_error(b"\xc1").code == 103  # 0xc1 is never used in msgpack
    bad_utf8 = b"\x94\x00\x01\xa4pl\xffy\x90"  # [0, 1, "pl\xffy", []]
    assert mp_error(bad_utf8).code == 103
    int_key = msgpack.packb([0, 1, "go", [{1: 2}]])
    assert mp_error(int_key).code == 103
    decoder = MsgpackDecoder()
    decoder.feed(b"\xc1")
    with pytest.raises(ProtocolError):
        decoder.next_message()
    with pytest.raises(ProtocolError):  # never reused after a failure
        decoder.feed(encode_request(1, m.IsReady()))


def test_frame_over_the_limit_is_fatal_102() -> None:
    decoder = MsgpackDecoder(max_frame=1024)
    big = encode_request(1, m.Position("x" * 2000))
    with pytest.raises(ProtocolError) as info:
        feed_and_decode(decoder, big)
    assert (info.value.code, info.value.fatal) == (102, True)
    # the default limit is 1 MiB: a frame just under it passes, one over it fails
    ok = MsgpackDecoder()
    ok.feed(encode_request(1, m.Position("x" * (1024 * 1024 - 64))))
    assert ok.next_message() is not None
    with pytest.raises(ProtocolError) as info2:
        feed_and_decode(MsgpackDecoder(), encode_request(1, m.Position("x" * (1024 * 1024 + 16))))
    assert info2.value.code == 102


def test_a_tiny_header_cannot_announce_a_huge_array() -> None:
    # array32 announcing 4 billion elements, then nothing
    error = mp_error(b"\xdd\xff\xff\xff\xff")
    assert error.code in (102, 103)
    assert error.fatal


def _decode_chunks(decoder: MsgpackDecoder, data: bytes, chunk: int) -> None:
    for i in range(0, len(data), chunk):
        decoder.feed(data[i : i + chunk])
        while decoder.next_message() is not None:
            pass


def _first_error(data: bytes, chunk: int = 1 << 20) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        _decode_chunks(MsgpackDecoder(), data, chunk)
    return caught.value


@pytest.mark.parametrize("chunk", [1 << 20, 4096])
def test_deep_nesting_is_a_bad_frame_not_a_recursion_error(chunk: int) -> None:
    error = _first_error(b"\x91" * 1000 + b"\xc0", chunk)
    assert error.code == 103
    assert len(error.message) < 120


def test_a_deep_value_in_the_params_is_quoted_briefly() -> None:
    deep: object = None
    for _ in range(1000):
        deep = [deep]
    error = _first_error(msgpack.packb([0, 7, "go", [{"depth": deep}]]))
    assert (error.code, error.msgid) == (101, 7)
    assert len(error.message) < 120


def test_a_huge_value_is_quoted_briefly() -> None:
    error = _first_error(msgpack.packb([0, 3, "go", [{"depth": [{}] * 60_000}]]))
    assert (error.code, error.msgid) == (101, 3)
    assert len(error.message) < 120


@pytest.mark.parametrize(
    "payload",
    [
        [[{}] * 60_000] * 3,  # one byte each, and each would build a map
        [[[]] * 60_000, [[]] * 60_000, [[]] * 60_000],
    ],
    ids=["maps", "nested-arrays"],
)
def test_a_frame_of_too_many_values_is_fatal_102(payload: object) -> None:
    # an ignored key still has to be decoded: what that builds is bounded too
    error = _first_error(msgpack.packb([0, 1, "isready", [{"ignored": payload}]]))
    assert error.code == 102
    assert error.fatal


def test_a_long_move_list_still_decodes() -> None:
    decoder = MsgpackDecoder()
    decoder.feed(msgpack.packb([0, 1, "position", [{"moves": ["a1"] * 60_000}]]))
    message = decoder.next_message()
    assert isinstance(message, m.Request)
    assert isinstance(message.command, m.Position)
    assert len(message.command.moves) == 60_000


def test_error_table_is_consistent() -> None:
    codes = [e.code for e in errors.ERROR_CODES]
    assert len(set(codes)) == len(codes)
    assert errors.BY_NAME["illegal-move"].code == 201
    assert {100, 101, 102, 103, 200, 201, 202, 203, 204, 300, 500} <= set(codes)
    closing = (102, 103, 302, 303, 304, 306, 307)
    assert all(e.fatal == (e.code in closing) for e in errors.ERROR_CODES)


# -- fuzzing ------------------------------------------------------------------------------------


def decode_all(decoder: TextDecoder | MsgpackDecoder, data: bytes, chunk: int) -> int:
    """Feed ``data`` in chunks; return the number of messages. Only ProtocolError may escape
    from the decoder, and after a fatal one it keeps raising."""
    count = 0
    fatal = False
    for i in range(0, max(len(data), 1), chunk):
        try:
            decoder.feed(data[i : i + chunk])
        except ProtocolError as exc:
            assert exc.fatal
            fatal = True
        while True:
            try:
                message = decoder.next_message()
            except ProtocolError as exc:
                if exc.fatal:
                    fatal = True
                    break
                assert not fatal
                continue
            if message is None:
                break
            assert not fatal
            count += 1
    return count


TEXT_WORDS = st.sampled_from(
    [
        "ugi",
        "isready",
        "ping",
        "setoption",
        "name",
        "value",
        "uginewgame",
        "position",
        "startpos",
        "fen",
        "moves",
        "go",
        "depth",
        "infinite",
        "p1time",
        "stop",
        "quit",
        "query",
        "moves",
        "play",
        "undo",
        "bots",
        "options",
        "show",
        "1",
        "-5",
        "e1-e8",
        " ",
        "\t",
        "\r",
        "\n",
        "\xff",
        "é",
    ]
)


TEXT_INPUT = {
    "data": st.one_of(
        st.binary(max_size=200),
        st.lists(TEXT_WORDS, max_size=30).map(lambda ws: " ".join(ws).encode("utf-8")),
    ),
    "chunk": st.integers(1, 64),
}
SHORT_FUZZ = settings(max_examples=400, deadline=None)
LONG_FUZZ = settings(
    max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def fuzz_text_decoder(data: bytes, chunk: int) -> None:
    decode_all(TextDecoder(max_line=128), data, chunk)


@SHORT_FUZZ
@given(**TEXT_INPUT)
def test_fuzz_text_decoder(data: bytes, chunk: int) -> None:
    fuzz_text_decoder(data, chunk)


@pytest.mark.slow
@LONG_FUZZ
@given(**TEXT_INPUT)
def test_fuzz_text_decoder_long(data: bytes, chunk: int) -> None:
    fuzz_text_decoder(data, chunk)


MSGPACK_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=10)
    | st.binary(max_size=5) | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=4),
    max_leaves=12,
)  # fmt: skip
FRAMES = st.one_of(
    st.tuples(st.sampled_from([0, 1, 2, 3]), st.integers(-2, 2**33), st.sampled_from(
        [*m.METHODS, "nope", ""]), st.lists(MSGPACK_VALUES, max_size=2)).map(list),
    st.tuples(st.just(2), st.sampled_from([*m.METHODS, "info"]),
              st.lists(st.dictionaries(st.sampled_from(
                  ["depth", "move", "moves", "fen", "what", "token", "name", "value", "n",
                   "infinite", "search", "game"]), MSGPACK_VALUES, max_size=4), max_size=1)
              ).map(list),
    MSGPACK_VALUES,
)  # fmt: skip


MSGPACK_INPUT = {
    "data": st.one_of(
        st.binary(max_size=200),
        st.lists(FRAMES, max_size=4).map(
            lambda fs: b"".join(msgpack.packb(f, use_bin_type=True) for f in fs)
        ),
    ),
    "garbage": st.binary(max_size=8),
    "chunk": st.integers(1, 64),
}


def fuzz_msgpack_decoder(data: bytes, garbage: bytes, chunk: int) -> None:
    decode_all(MsgpackDecoder(max_frame=4096), data + garbage, chunk)
    decode_all(MsgpackDecoder("client", max_frame=4096), data, chunk)


@SHORT_FUZZ
@given(**MSGPACK_INPUT)
def test_fuzz_msgpack_decoder(data: bytes, garbage: bytes, chunk: int) -> None:
    fuzz_msgpack_decoder(data, garbage, chunk)


@pytest.mark.slow
@LONG_FUZZ
@given(**MSGPACK_INPUT)
def test_fuzz_msgpack_decoder_long(data: bytes, garbage: bytes, chunk: int) -> None:
    fuzz_msgpack_decoder(data, garbage, chunk)


@settings(max_examples=300, deadline=None)
@given(
    command=st.one_of(
        st.builds(m.Ping, st.integers(0, 2**62)),
        st.builds(m.Play, st.text(st.characters(blacklist_categories=["Z", "C"]), min_size=1)),
        st.builds(
            m.Go,
            p1time=st.none() | st.integers(-1000, 10**9),
            depth=st.none() | st.integers(1, 99),
            infinite=st.booleans(),
        ),
        st.builds(
            m.Position,
            st.none() | st.just("4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51"),
            st.lists(st.sampled_from(["f6", "e1-e8", "x:a4-e4", "pass"]), max_size=5).map(tuple),
        ),
    )
)
def test_both_framings_agree(command: m.Command) -> None:
    text = TextDecoder()
    text.feed(encode_command(command))
    mp = MsgpackDecoder()
    mp.feed(encode_request(1, command))
    from_text = text.next_message()
    from_mp = mp.next_message()
    assert isinstance(from_text, m.Request)
    assert isinstance(from_mp, m.Request)
    assert from_text.command == from_mp.command == command


def test_a_frame_that_grows_past_the_limit_in_pieces_is_fatal_102() -> None:
    # the unpacker decodes a partial frame as it comes: the bytes it has taken count too
    decoder = MsgpackDecoder(max_frame=100_000)
    decoder.feed(b"\x94\x00\x01\xa7isready\x91\x81\xa1x\xdd\x00\x00\x10\x00")
    assert decoder.next_message() is None
    piece = msgpack.packb("y" * 30_000)
    with pytest.raises(ProtocolError) as caught:
        _decode_chunks(decoder, piece * 10, len(piece))
    assert caught.value.code == 102
    assert caught.value.fatal


def test_frames_just_under_the_limit_keep_coming() -> None:
    decoder = MsgpackDecoder(max_frame=10_000)
    frame = encode_request(1, m.Position("x" * 9_900))
    assert len(frame) <= 10_000
    for _ in range(5):
        decoder.feed(frame)
        assert isinstance(decoder.next_message(), m.Request)

"""msgpack-RPC below the commands (``protocol.rpc``): envelopes and the bounded frame reader
shared by the protocol's framing and the server's worker pipes."""

from __future__ import annotations

import msgpack
import pytest

from protocol import rpc
from protocol.errors import ProtocolError


def frames_of(data: bytes, reader: rpc.FrameReader | None = None) -> list[object]:
    reader = reader or rpc.FrameReader()
    reader.feed(data)
    out: list[object] = []
    while True:
        whole, frame = reader.next_frame()
        if not whole:
            return out
        out.append(frame)


def test_the_three_envelopes_round_trip() -> None:
    data = (
        rpc.pack_request(7, "search", {"a": 1})
        + rpc.pack_response(7, None, {"move": "c3"})
        + rpc.pack_notification("stop", {"search": 7})
        + rpc.pack_notification("ready")
    )
    got = [rpc.envelope(f) for f in frames_of(data)]
    assert got == [
        rpc.Envelope(rpc.REQUEST, 7, "search", {"a": 1}),
        rpc.Envelope(rpc.RESPONSE, 7, "", {}, None, {"move": "c3"}),
        rpc.Envelope(rpc.NOTIFY, None, "stop", {"search": 7}),
        rpc.Envelope(rpc.NOTIFY, None, "ready", {}),
    ]


@pytest.mark.parametrize(
    "frame",
    [
        None, 5, "x", [], [9, 1, "m", []], [0, "id", "m", []], [0, 1, 5, []], [0, 1, "m", {}],
        [0, 1, "m", [1]], [0, 1, "m", [{}, {}]], [2, "m"], [1, 1, None], [True, 1, "m", []],
    ],
)  # fmt: skip
def test_frames_of_no_envelope_shape_are_none(frame: object) -> None:
    assert rpc.envelope(frame) is None


def test_a_frame_split_anywhere_is_read_whole_and_a_nil_frame_is_a_frame() -> None:
    data = rpc.pack_request(1, "go", {"depth": 3}) + msgpack.packb(None)
    reader = rpc.FrameReader()
    got: list[object] = []
    for i in range(len(data)):
        got += frames_of(data[i : i + 1], reader)
    assert got == [[0, 1, "go", [{"depth": 3}]], None]


def test_a_frame_over_the_limit_breaks_the_reader_for_good() -> None:
    reader = rpc.FrameReader(max_frame=100)
    with pytest.raises(ProtocolError) as info:
        frames_of(rpc.pack_notification("info", {"pv": ["x" * 10] * 20}), reader)
    assert info.value.code == 102
    assert info.value.fatal
    with pytest.raises(ProtocolError):
        reader.next_frame()
    with pytest.raises(ProtocolError):
        reader.feed(b"\x90")


def test_a_small_frame_that_builds_too_much_is_refused() -> None:
    # nested empty arrays: one byte each, a container each to build
    deep = b"\x91" * 100 + b"\x90"
    assert frames_of(deep)  # within the count
    wide = b"\xdc\xff\xff" + b"\x90" * 65535  # 65535 empty arrays in one array
    with pytest.raises(ProtocolError) as info:
        frames_of(b"\x93" + wide * 3, rpc.FrameReader(max_frame=1 << 20))
    assert info.value.code == 102


def test_bytes_that_are_not_msgpack_are_bad_frame() -> None:
    with pytest.raises(ProtocolError) as info:
        frames_of(b"\xc1")  # a byte msgpack never uses
    assert info.value.code == 103


def test_envelopes_skips_frames_of_no_shape() -> None:
    reader = rpc.FrameReader()
    reader.feed(rpc.pack([9, 9]) + rpc.pack_notification("ready") + rpc.pack("x"))
    assert [e.method for e in reader.envelopes()] == ["ready"]
    assert list(reader.envelopes()) == []

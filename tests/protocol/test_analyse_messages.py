"""``analyse``, ``cancel`` and the answers of ``analyse`` in both framings: each message written
out as the protocol writes it, read back equal (whole, byte by byte, split anywhere), the same
object from either framing; the errors of malformed requests, each naming the id and what is
wrong; the rules of an id; and what a client makes of malformed answers."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, BAD_FRAME, ProtocolError
from protocol.mpack import MsgpackDecoder, encode_reply, encode_request
from protocol.text import (
    TextDecoder,
    analysis_of,
    encode_command,
    encode_reply_line,
    parse_reply_line,
)
from protocol.text import encode_reply as text_reply
from tests.protocol.test_codecs import all_feedings, drain, feed_split

POS = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"
"""A Yinsh position (its string has spaces)."""
LONGEST = "i" * m.MAX_ID
TOO_LONG = "i" * (m.MAX_ID + 1)
USAGE = (
    "usage: analyse [priority N] id ID [depth N] [nodes N] [movetime T] [multipv K] "
    "[searchmoves M ...] [avoidmoves M ...] startpos|fen POSITION [moves M ...] [id ...]"
)

ODD_IDS = ("none", "bestmove", "error", "é", LONGEST, "a-b_c.1", "ID")
"""Ids that are words of the answers, or not ASCII, or as long as may be, or in capitals (the
words of the line are lowercase: an id is compared exactly)."""

Item = m.AnalysisItem

# (command, its text line, its msgpack params map)
ANALYSES: list[tuple[m.Analyse, str, dict[str, Any]]] = [
    (
        m.Analyse((Item("a", depth=3),)),
        "analyse id a depth 3 startpos",
        {"positions": [{"id": "a", "depth": 3}]},
    ),
    (
        m.Analyse((Item("p1", None, ("f6", "e5"), nodes=5000, movetime=200, multipv=3),), 7),
        "analyse priority 7 id p1 nodes 5000 movetime 200 multipv 3 startpos moves f6 e5",
        {
            "positions": [
                {"id": "p1", "moves": ["f6", "e5"], "nodes": 5000, "movetime": 200, "multipv": 3}
            ],
            "priority": 7,
        },
    ),
    (
        m.Analyse(
            (
                Item("x", POS, ("e3-e6",), depth=2, searchmoves=("e3-e6", "e3-e7")),
                Item("y", POS, movetime=0, avoidmoves=("e3-e6",)),
            ),
            -2,
        ),
        f"analyse priority -2 id x depth 2 searchmoves e3-e6 e3-e7 fen {POS} moves e3-e6 "
        f"id y movetime 0 avoidmoves e3-e6 fen {POS}",
        {
            "positions": [
                {
                    "id": "x",
                    "fen": POS,
                    "moves": ["e3-e6"],
                    "depth": 2,
                    "searchmoves": ["e3-e6", "e3-e7"],
                },
                {"id": "y", "fen": POS, "movetime": 0, "avoidmoves": ["e3-e6"]},
            ],
            "priority": -2,
        },
    ),
    (
        m.Analyse(tuple(Item(i, nodes=1) for i in ODD_IDS)),
        " ".join(["analyse", *(f"id {i} nodes 1 startpos" for i in ODD_IDS)]),
        {"positions": [{"id": i, "nodes": 1} for i in ODD_IDS]},
    ),
    (
        m.Analyse((Item("top", depth=1),), 2**31 - 1),
        "analyse priority 2147483647 id top depth 1 startpos",
        {"positions": [{"id": "top", "depth": 1}], "priority": 2**31 - 1},
    ),
]
ANALYSE_IDS = [line[:60] for _, line, _ in ANALYSES]


def decode_text(line: str) -> m.Command:
    decoder = TextDecoder("server")
    decoder.feed(line.encode() + b"\n")
    request = decoder.next_message()
    assert isinstance(request, m.Request)
    return request.command


def decode_msgpack(method: str, params: dict[str, Any], msgid: int = 4) -> m.Command:
    decoder = MsgpackDecoder("server")
    decoder.feed(msgpack.packb([0, msgid, method, [params]]))
    request = decoder.next_message()
    assert isinstance(request, m.Request)
    assert request.msgid == msgid
    return request.command


# -- the requests -------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "line", "params"), ANALYSES, ids=ANALYSE_IDS)
def test_analyse_in_the_text_framing(command: m.Analyse, line: str, params: dict[str, Any]) -> None:
    del params
    data = (line + "\n").encode()
    assert encode_command(command) == data
    assert feed_split(TextDecoder, data, []) == [m.Request(command)]
    all_feedings(TextDecoder, data)
    spaced = TextDecoder()
    spaced.feed(b"  " + line.replace(" ", " \t ").encode() + b" \r\nisready\n")
    assert drain(spaced) == [m.Request(command), m.Request(m.IsReady())]


@pytest.mark.parametrize(("command", "line", "params"), ANALYSES, ids=ANALYSE_IDS)
def test_analyse_in_msgpack(command: m.Analyse, line: str, params: dict[str, Any]) -> None:
    data = encode_request(7, command)
    assert msgpack.unpackb(data) == [0, 7, "analyse", [params]]
    assert feed_split(MsgpackDecoder, data, []) == [m.Request(command, 7)]
    all_feedings(MsgpackDecoder, data)
    assert decode_msgpack("analyse", params) == command
    assert decode_text(line) == command  # the same object from either framing


def test_a_list_of_moves_runs_to_the_next_word() -> None:
    line = "analyse id a searchmoves c5 e3 depth 2 avoidmoves d5 multipv 2 startpos moves c5"
    assert decode_text(line) == m.Analyse(
        (Item("a", None, ("c5",), depth=2, multipv=2, searchmoves=("c5", "e3"),
              avoidmoves=("d5",)),)
    )  # fmt: skip
    # a position's moves run to the next id only: a word there is a (bad) move, for the server
    assert decode_text("analyse id a depth 1 startpos moves c5 depth 3") == m.Analyse(
        (Item("a", None, ("c5", "depth", "3"), depth=1),)
    )


@pytest.mark.parametrize(
    ("command", "line", "params"),
    [
        (m.Cancel(), "cancel", {}),
        (m.Cancel(("a",)), "cancel a", {"ids": ["a"]}),
        (
            m.Cancel(("b", "none", LONGEST)),
            f"cancel b none {LONGEST}",
            {"ids": ["b", "none", LONGEST]},
        ),
    ],
)
def test_cancel_in_both_framings(command: m.Cancel, line: str, params: dict[str, Any]) -> None:
    assert encode_command(command) == (line + "\n").encode()
    assert decode_text(line) == command
    assert msgpack.unpackb(encode_request(3, command)) == [0, 3, "cancel", [params]]
    assert decode_msgpack("cancel", params) == command
    all_feedings(TextDecoder, (line + "\n").encode())
    all_feedings(MsgpackDecoder, encode_request(3, command))


def test_cancel_names_each_id_once() -> None:
    assert decode_text("cancel b a b a") == m.Cancel(("b", "a"))
    assert decode_msgpack("cancel", {"ids": ["b", "a", "b"]}) == m.Cancel(("b", "a"))


# -- the requests' errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("analyse", f"analyse: no position given; {USAGE}"),
        ("analyse priority", "analyse: priority needs a number"),
        ("analyse priority x id a depth 1 startpos", "analyse: priority 'x' is not a whole number"),
        ("analyse priority 2147483648 id a depth 1 startpos",
         "analyse: priority 2147483648 is over 2147483647"),
        ("analyse priority -2147483648 id a depth 1 startpos",
         "analyse: priority '-2147483648' is below -2147483647"),
        ("analyse depth 1 startpos", f"analyse: expected id, got 'depth'; {USAGE}"),
        ("analyse id", f"analyse: id needs a value; {USAGE}"),
        ("analyse id a", f"analyse: id a: startpos or fen is missing; {USAGE}"),
        ("analyse id a depth 2", f"analyse: id a: startpos or fen is missing; {USAGE}"),
        ("analyse id a depth startpos", "analyse: id a: depth 'startpos' is not a whole number"),
        ("analyse id a depth 0 startpos", "analyse: id a: depth '0' is below 1"),
        ("analyse id a multipv 0 startpos", "analyse: id a: multipv '0' is below 1"),
        ("analyse id a nodes -1 startpos", "analyse: id a: nodes '-1' is below 0"),
        ("analyse id a movetime 1.5 startpos",
         "analyse: id a: movetime '1.5' is not a whole number"),
        ("analyse id a depth 1 depth 2 startpos", "analyse: id a: depth given twice"),
        ("analyse id a depth 1 searchmoves c5 searchmoves d5 startpos",
         "analyse: id a: searchmoves given twice"),
        ("analyse id a depth 1 infinite startpos",
         "analyse: id a: 'infinite' is not a limit (known: depth nodes movetime multipv "
         "searchmoves avoidmoves), or startpos or fen is missing"),
        ("analyse id a depth 1 searchmoves startpos",
         "analyse: id a: searchmoves needs at least one move"),
        ("analyse id a depth 1 avoidmoves", "analyse: id a: avoidmoves needs at least one move"),
        ("analyse id a depth 1 fen", "analyse: id a: the position string is missing"),
        ("analyse id a depth 1 fen moves c5", "analyse: id a: the position string is missing"),
        ("analyse id a depth 1 startpos c5", "analyse: id a: unexpected 'c5' after the position"),
        ("analyse id a depth 1 startpos moves c5 id", f"analyse: id needs a value; {USAGE}"),
        ("analyse id a depth 1 startpos id b nodes 9",
         f"analyse: id b: startpos or fen is missing; {USAGE}"),
        ("analyse id a depth 1 startpos id b depth x startpos",
         "analyse: id b: depth 'x' is not a whole number"),
        (f"analyse id {TOO_LONG} depth 1 startpos",
         f"analyse: id '{TOO_LONG}': an id has at most 64 characters, not 65"),
        ("cancel a depth", "cancel: id 'depth': 'depth' is a word of analyse, not an id"),
        (f"cancel {TOO_LONG}", f"cancel: id '{TOO_LONG}': an id has at most 64 characters, not 65"),
    ],
)  # fmt: skip
def test_a_malformed_text_request_is_error_101_naming_the_id(line: str, message: str) -> None:
    decoder = TextDecoder("server")
    decoder.feed(f"{line}\nisready\n".encode())
    with pytest.raises(ProtocolError) as caught:
        decoder.next_message()
    error = caught.value
    assert (error.code, error.message, error.fatal) == (BAD_ARGUMENTS.code, message, False)
    assert error.method == line.split(maxsplit=1)[0]
    assert decoder.next_message() == m.Request(m.IsReady())  # the decoder goes on


@pytest.mark.parametrize("word", sorted(m.ANALYSE_WORDS))
def test_no_word_of_the_line_is_an_id(word: str) -> None:
    problem = f"{word!r} is a word of analyse, not an id"
    assert m.id_problem(word) == problem
    with pytest.raises(ProtocolError) as caught:
        decode_text(f"analyse id {word} depth 1 startpos")
    assert caught.value.message == f"analyse: id {word!r}: {problem}"
    with pytest.raises(ProtocolError) as caught:
        decode_msgpack("analyse", {"positions": [{"id": word, "depth": 1}]})
    assert caught.value.message == f"analyse: positions[0]: id {word!r}: {problem}"
    with pytest.raises(ProtocolError) as caught:
        decode_msgpack("cancel", {"ids": ["a", word]})
    assert caught.value.message == f"cancel: ids: id {word!r}: {problem}"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("a", None),
        (LONGEST, None),
        ("Ünïcödé", None),
        ("", "an id is one token without spaces"),
        ("a b", "an id is one token without spaces"),
        (" a", "an id is one token without spaces"),
        ("a\tb", "an id is one token without spaces"),
        ("a\u2028b", "an id is one token without spaces"),  # a line separator is a space
        (TOO_LONG, "an id has at most 64 characters, not 65"),
        ("é" * 65, "an id has at most 64 characters, not 65"),
    ],
)
def test_what_an_id_may_be(value: str, problem: str | None) -> None:
    assert m.id_problem(value) == problem


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "analyse: 'positions' must be a non-empty array of maps"),
        ({"positions": []}, "analyse: 'positions' must be a non-empty array of maps"),
        ({"positions": "a"}, "analyse: 'positions' must be a non-empty array of maps"),
        ({"positions": [1]}, "analyse: positions[0] must be a map, got 1"),
        ({"positions": [{"depth": 1}]}, "analyse: positions[0]: an id must be a string, got None"),
        ({"positions": [{"id": 7}]}, "analyse: positions[0]: an id must be a string, got 7"),
        ({"positions": [{"id": "a b"}]},
         "analyse: positions[0]: id 'a b': an id is one token without spaces"),
        ({"positions": [{"id": "a", "depth": 1}, {"id": TOO_LONG, "depth": 1}]},
         f"analyse: positions[1]: id '{'i' * 17}...{'i' * 18}': an id has at most 64 "
         "characters, not 65"),  # the id quoted short
        ({"positions": [{"id": "a", "depth": 0}]},
         "analyse: id a: 'depth' must be at least 1, got 0"),
        ({"positions": [{"id": "a", "multipv": 0}]},
         "analyse: id a: 'multipv' must be at least 1, got 0"),
        ({"positions": [{"id": "a", "nodes": -1}]},
         "analyse: id a: 'nodes' must be at least 0, got -1"),
        ({"positions": [{"id": "a", "depth": "3"}]},
         "analyse: id a: 'depth' must be an integer, got '3'"),
        ({"positions": [{"id": "a", "depth": True}]},
         "analyse: id a: 'depth' must be an integer, got True"),
        ({"positions": [{"id": "a", "movetime": 2**63}]},
         "analyse: id a: 'movetime' must be an integer, got 9223372036854775808"),
        ({"positions": [{"id": "a", "fen": 5}]}, "analyse: id a: 'fen' must be a string, got int"),
        ({"positions": [{"id": "a", "fen": "x\ny"}]},
         "analyse: id a: 'fen' must not contain a line break"),
        ({"positions": [{"id": "a", "moves": "c5"}]},
         "analyse: id a: 'moves' must be an array of strings"),
        ({"positions": [{"id": "a", "moves": ["c5 d5"]}]},
         "analyse: id a: 'moves' must be one non-empty token without spaces, got 'c5 d5'"),
        ({"positions": [{"id": "a", "searchmoves": []}]},
         "analyse: id a: 'searchmoves' needs at least one move"),
        ({"positions": [{"id": "a", "avoidmoves": [""]}]},
         "analyse: id a: 'avoidmoves' must be one non-empty token without spaces, got ''"),
        ({"positions": [{"id": "a", "depth": 1}, {"id": "b", "depth": -1}]},
         "analyse: id b: 'depth' must be at least 1, got -1"),
        ({"positions": [{"id": "a", "depth": 1}], "priority": "x"},
         "analyse: 'priority' must be an integer, got 'x'"),
        ({"positions": [{"id": "a", "depth": 1}], "priority": 2**31},
         "analyse: 'priority' must be at most 2147483647, got 2147483648"),
        ({"positions": [{"id": "a", "depth": 1}], "priority": -(2**31)},
         "analyse: 'priority' must be at least -2147483647, got -2147483648"),
    ],
)  # fmt: skip
def test_malformed_msgpack_params_are_error_101_naming_the_id(
    params: dict[str, Any], message: str
) -> None:
    decoder = MsgpackDecoder("server")
    decoder.feed(msgpack.packb([0, 4, "analyse", [params]]) + encode_request(5, m.IsReady()))
    with pytest.raises(ProtocolError) as caught:
        decoder.next_message()
    error = caught.value
    assert (error.code, error.message, error.fatal, error.msgid) == (101, message, False, 4)
    assert decoder.next_message() == m.Request(m.IsReady(), 5)  # the decoder goes on


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ids": "a"}, "cancel: 'ids' must be an array of strings, got 'a'"),
        ({"ids": [1]}, "cancel: ids: an id must be a string, got 1"),
        ({"ids": ["a b"]}, "cancel: ids: id 'a b': an id is one token without spaces"),
    ],
)
def test_malformed_msgpack_cancel_is_error_101(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_msgpack("cancel", params, msgid=9)
    assert (caught.value.code, caught.value.message, caught.value.msgid) == (101, message, 9)


# -- the answers --------------------------------------------------------------------------------

LINE_1 = m.Info(
    depth=3, seldepth=4, score=m.Score("cp", 415), nodes=1287, time=1,
    pv=("c5", "4@b6", "d6"), multipv=1,
)  # fmt: skip
LINE_2 = m.Info(
    depth=3, seldepth=3, score=m.Score("cp", -20), nodes=1287, time=1, pv=("e3",), multipv=2
)
WON = m.Info(depth=2, score=m.Score("win", 3), nodes=40, time=0, pv=("c5",), multipv=1)
OVER = m.ErrorReply(203, "game-over", "analyse: id over: the game is over")

# (answer, its text, its msgpack params map)
ANSWERS: list[tuple[m.Analysis, str, dict[str, Any]]] = [
    (
        m.Analysis("a", "c5", (LINE_1, LINE_2), 1287, 1, request=3),
        "analysisinfo id a depth 3 seldepth 4 multipv 1 score cp 415 nodes 1287 time 1 "
        "pv c5 4@b6 d6\n"
        "analysisinfo id a depth 3 seldepth 3 multipv 2 score cp -20 nodes 1287 time 1 pv e3\n"
        "analysisok id a bestmove c5 nodes 1287 time 1\n",
        {
            "request": 3, "id": "a", "move": "c5",
            "lines": [
                {"depth": 3, "seldepth": 4, "multipv": 1, "nodes": 1287, "time": 1,
                 "score": {"cp": 415}, "pv": ["c5", "4@b6", "d6"]},
                {"depth": 3, "seldepth": 3, "multipv": 2, "nodes": 1287, "time": 1,
                 "score": {"cp": -20}, "pv": ["e3"]},
            ],
            "nodes": 1287, "time": 1,
        },
    ),
    (
        m.Analysis("run", "e4", (WON,), 9076472, 1006, stopped=True),
        "analysisinfo id run depth 2 multipv 1 score win 3 nodes 40 time 0 pv c5\n"
        "analysisok id run bestmove e4 nodes 9076472 time 1006 stopped\n",
        {
            "id": "run", "move": "e4",
            "lines": [{"depth": 2, "multipv": 1, "nodes": 40, "time": 0, "score": {"win": 3},
                       "pv": ["c5"]}],
            "nodes": 9076472, "time": 1006, "stopped": True,
        },
    ),
    (
        m.Analysis("w", None, cancelled=True),
        "analysisok id w bestmove none cancelled\n",
        {"id": "w", "move": None, "lines": [], "cancelled": True},
    ),
    (
        m.Analysis("over", None, error=OVER),
        "analysisok id over bestmove none error 203 game-over analyse: id over: the game is "
        "over\n",
        {"id": "over", "move": None, "lines": [],
         "error": {"code": 203, "name": "game-over", "message": OVER.message, "data": None}},
    ),
    (
        m.Analysis("f", "c5", stopped=True, error=m.ErrorReply(500, "internal", "search failed")),
        "analysisok id f bestmove c5 stopped error 500 internal search failed\n",
        {"id": "f", "move": "c5", "lines": [], "stopped": True,
         "error": {"code": 500, "name": "internal", "message": "search failed", "data": None}},
    ),
    *[
        (
            m.Analysis(word, None, cancelled=True),
            f"analysisok id {word} bestmove none cancelled\n",
            {"id": word, "move": None, "lines": [], "cancelled": True},
        )
        for word in ("bestmove", "none", "error", "stopped", "cancelled", LONGEST)
    ],
]  # fmt: skip
ANSWER_IDS = [text.split("\n")[-2][:50] for _, text, _ in ANSWERS]


def read_text_answer(data: bytes) -> m.Analysis:
    """An answer as a text client reads it: its lines, then its end."""
    lines = feed_split(lambda: TextDecoder("client"), data, [])
    *infos, end = lines
    assert isinstance(end, m.AnalysisOk)
    assert all(isinstance(i, m.AnalysisInfo) and i.id == end.id for i in infos)
    return analysis_of(end, [i.info for i in infos if isinstance(i, m.AnalysisInfo)])


@pytest.mark.parametrize(("answer", "text", "params"), ANSWERS, ids=ANSWER_IDS)
def test_an_answer_in_the_text_framing(
    answer: m.Analysis, text: str, params: dict[str, Any]
) -> None:
    del params
    data = text_reply(answer)
    assert data == text.encode()
    assert read_text_answer(data) == answer
    all_feedings(lambda: TextDecoder("client"), data)
    lines = feed_split(lambda: TextDecoder("client"), data, [])
    assert b"".join(encode_reply_line(line) for line in lines) == data  # type: ignore[arg-type]


@pytest.mark.parametrize(("answer", "text", "params"), ANSWERS, ids=ANSWER_IDS)
def test_an_answer_in_msgpack(answer: m.Analysis, text: str, params: dict[str, Any]) -> None:
    for msgid in (None, 8):  # always a notification, whatever request it answers
        data = encode_reply(msgid, answer)
        assert msgpack.unpackb(data) == [2, "analysis", [params]]
        [read] = feed_split(lambda: MsgpackDecoder("client"), data, [])
        assert read == answer
        assert isinstance(read, m.Analysis)
        assert read.request == answer.request
        all_feedings(lambda: MsgpackDecoder("client"), data)
        assert read == read_text_answer(text.encode())  # the same object from either framing


def test_an_answer_is_one_line_whatever_its_error_says() -> None:
    answer = m.Analysis("a", None, error=m.ErrorReply(500, "internal", "two\nlines\r"))
    data = text_reply(answer)
    assert data.count(b"\n") == 1
    assert data.startswith(b"analysisok id a bestmove none error 500 internal two")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("analysisok id a", "malformed 'analysisok' line: 'analysisok id a'"),
        ("analysisok a bestmove c5", "malformed 'analysisok' line: 'analysisok a bestmove c5'"),
        ("analysisok id a move c5", "malformed 'analysisok' line: 'analysisok id a move c5'"),
        ("analysisok id a bestmove c5 nodes",
         "malformed 'analysisok' line: 'analysisok id a bestmove c5 nodes'"),
        ("analysisok id a bestmove c5 pondered",
         "malformed 'analysisok' line: 'analysisok id a bestmove c5 pondered'"),
        ("analysisok id a bestmove c5 error 500",
         "malformed 'analysisok' line: 'analysisok id a bestmove c5 error 500'"),
        ("analysisok id a bestmove c5 nodes x", "analysisok: nodes 'x' is not a whole number"),
        ("analysisok id a bestmove c5 error x internal y",
         "analysisok: code 'x' is not a whole number"),
        ("analysisinfo a depth 1", "malformed 'analysisinfo' line: 'analysisinfo a depth 1'"),
        ("analysisinfo id", "malformed 'analysisinfo' line: 'analysisinfo id'"),
    ],
)  # fmt: skip
def test_a_malformed_answer_line_is_error_101_for_the_client(line: str, message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_reply_line(line)
    error = caught.value
    assert (error.code, error.message, error.fatal) == (BAD_ARGUMENTS.code, message, False)


def test_a_client_reads_a_sloppy_msgpack_answer_as_far_as_it_can() -> None:
    decoder = MsgpackDecoder("client")
    sloppy = {"id": "a", "move": 5, "lines": "x", "nodes": "9", "time": 3, "stopped": 1}
    decoder.feed(msgpack.packb([2, "analysis", [sloppy]]))
    assert drain(decoder) == [m.Analysis("a", None, (), None, 3)]
    decoder = MsgpackDecoder("client")
    decoder.feed(msgpack.packb([2, "analysis", [{"move": "c5", "lines": []}]]))
    with pytest.raises(ProtocolError) as caught:
        decoder.next_message()
    assert caught.value.code == BAD_FRAME.code
    assert caught.value.fatal
    assert "an analysis needs an id" in caught.value.message

"""Both framings against one table of (message, bytes) cases, in both directions."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgpack
import pytest

from protocol import messages as m
from protocol.errors import ProtocolError
from protocol.mpack import MsgpackDecoder, encode_notify, encode_reply, encode_request, parse_result
from protocol.sniff import sniff
from protocol.text import TextDecoder, encode_command, encode_reply_line
from protocol.text import encode_reply as text_reply

POS = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"

# (command, text line, msgpack params map)
COMMANDS: list[tuple[m.Command, str, dict[str, Any]]] = [
    (m.Ugi(), "ugi", {}),
    (m.IsReady(), "isready", {}),
    (m.Ping(42), "ping 42", {"token": 42}),
    (m.SetOption("Hash", "64"), "setoption name Hash value 64", {"name": "Hash", "value": "64"}),
    (
        m.SetOption("Move Overhead", "a b"),
        "setoption name Move Overhead value a b",
        {"name": "Move Overhead", "value": "a b"},
    ),
    (m.SetOption("Clear Hash"), "setoption name Clear Hash", {"name": "Clear Hash"}),
    (m.SetOption("Name", ""), "setoption name Name value ", {"name": "Name", "value": ""}),
    (m.NewGame(), "uginewgame", {}),
    (m.NewGame("yinsh+blitz"), "uginewgame yinsh+blitz", {"game": "yinsh+blitz"}),
    (m.Position(), "position startpos", {}),
    (
        m.Position(None, ("f6", "e5")),
        "position startpos moves f6 e5",
        {"moves": ["f6", "e5"]},
    ),
    (m.Position(POS), f"position fen {POS}", {"fen": POS}),
    (
        m.Position(POS, ("e3-e6", "x:a4-e4")),
        f"position fen {POS} moves e3-e6 x:a4-e4",
        {"fen": POS, "moves": ["e3-e6", "x:a4-e4"]},
    ),
    (m.Go(), "go", {}),
    (
        m.Go(p1time=60000, p2time=-20, p1inc=500, p2inc=500, movestogo=30),
        "go p1time 60000 p2time -20 p1inc 500 p2inc 500 movestogo 30",
        {"p1time": 60000, "p2time": -20, "p1inc": 500, "p2inc": 500, "movestogo": 30},
    ),
    (m.Go(movetime=1000), "go movetime 1000", {"movetime": 1000}),
    (m.Go(depth=6, nodes=100000), "go depth 6 nodes 100000", {"depth": 6, "nodes": 100000}),
    (m.Go(infinite=True), "go infinite", {"infinite": True}),
    (m.Stop(), "stop", {}),
    (m.Quit(), "quit", {}),
    *[(m.Query(w), f"query {w}", {"what": w}) for w in m.QUERY_WHATS],
    (m.Play("e1-e8"), "play e1-e8", {"move": "e1-e8"}),
    (m.Undo(), "undo", {}),
    (m.Undo(3), "undo 3", {"n": 3}),
    (m.Bots(), "bots", {}),
    (m.Options(), "options", {}),
    (m.Options(all=True), "options all", {"all": True}),
    (m.Show(), "show", {}),
]
COMMAND_IDS = [line for _, line, _ in COMMANDS]


def drain(decoder: TextDecoder | MsgpackDecoder) -> list[object]:
    return list(decoder)


def feed_split(
    make: Callable[[], TextDecoder | MsgpackDecoder], data: bytes, cuts: Iterable[int]
) -> list[object]:
    decoder = make()
    out: list[object] = []
    last = 0
    for cut in [*cuts, len(data)]:
        decoder.feed(data[last:cut])
        out.extend(drain(decoder))
        last = cut
    return out


def all_feedings(make: Callable[[], TextDecoder | MsgpackDecoder], data: bytes) -> None:
    """Whole, byte by byte, and split once at every boundary: always the same messages."""
    expected = feed_split(make, data, [])
    assert feed_split(make, data, range(1, len(data))) == expected
    for cut in range(1, len(data)):
        assert feed_split(make, data, [cut]) == expected


# -- commands -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "line", "params"), COMMANDS, ids=COMMAND_IDS)
def test_command_text(command: m.Command, line: str, params: dict[str, Any]) -> None:
    del params
    data = (line + "\n").encode()
    if command != m.SetOption("Name", ""):  # the encoder does not write a trailing space
        assert encode_command(command) == data
    assert feed_split(TextDecoder, data, []) == [m.Request(command)]
    all_feedings(TextDecoder, data)
    # followed by trailing data: a partial next line stays buffered, a full one decodes
    decoder = TextDecoder()
    decoder.feed(data + b"isready\nping")
    assert drain(decoder) == [m.Request(command), m.Request(m.IsReady())]
    assert decoder.buffered == 4
    # CRLF and extra spacing are accepted
    decoder = TextDecoder()
    decoder.feed(b"\n  " + line.replace(" ", "\t ").encode() + b"  \r\n")
    assert drain(decoder) == [m.Request(command)]


@pytest.mark.parametrize(("command", "line", "params"), COMMANDS, ids=COMMAND_IDS)
def test_command_msgpack(command: m.Command, line: str, params: dict[str, Any]) -> None:
    data = encode_request(7, command)
    assert msgpack.unpackb(data) == [0, 7, command.METHOD, [params]]
    assert feed_split(MsgpackDecoder, data, []) == [m.Request(command, 7)]
    all_feedings(MsgpackDecoder, data)
    # notification form, and params given as [] when empty
    notify = encode_notify(command)
    assert feed_split(MsgpackDecoder, notify, []) == [m.Request(command, None)]
    if not params:
        bare = msgpack.packb([0, 9, command.METHOD, []])
        assert feed_split(MsgpackDecoder, bare, []) == [m.Request(command, 9)]
    # trailing data: the next frame decodes, a partial one waits
    decoder = MsgpackDecoder()
    decoder.feed(data + encode_request(8, m.IsReady()) + data[:3])
    assert drain(decoder) == [m.Request(command, 7), m.Request(m.IsReady(), 8)]
    # the same message in both framings decodes to equal objects
    text = TextDecoder()
    text.feed((line + "\n").encode())
    [from_text] = drain(text)
    assert isinstance(from_text, m.Request)
    assert from_text.command == command


def test_unknown_msgpack_keys_are_ignored() -> None:
    data = msgpack.packb([0, 1, "go", [{"depth": 3, "future": {"x": 1}}]])
    assert feed_split(MsgpackDecoder, data, []) == [m.Request(m.Go(depth=3), 1)]


def test_setoption_values_of_other_types_become_text() -> None:
    for value, text in ((True, "true"), (False, "false"), (128, "128")):
        data = msgpack.packb([0, 1, "setoption", [{"name": "X", "value": value}]])
        assert feed_split(MsgpackDecoder, data, []) == [m.Request(m.SetOption("X", text), 1)]


# -- replies ------------------------------------------------------------------------------------

HANDSHAKE = m.Handshake(
    name="enginesrv",
    author="the enginesrv developers",
    version="0.1.0",
    protocol=1,
    games=(m.GameInfo("yinsh", ("White", "Black"), "4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51"),),
    bots=(m.BotInfo("random", ("yinsh", "yoxii")),),
    options=(
        m.OptionSpec("Game", "combo", "yinsh", vars=("yinsh", "yoxii")),
        m.OptionSpec("Hash", "spin", "64", 1, 4096),
        m.OptionSpec("Compat", "check", "false"),
        m.OptionSpec("Book File", "string", ""),
        m.OptionSpec("Clear Hash", "button"),
    ),
    limits=(m.LimitInfo("line", 65536), m.LimitInfo("frame", 1048576)),
)
HANDSHAKE_TEXT = """\
id name enginesrv
id author the enginesrv developers
id version 0.1.0
id protocol 1
game yinsh colours White Black start 4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51
bot random games yinsh yoxii
limit line 65536
limit frame 1048576
option name Game type combo default yinsh var yinsh var yoxii
option name Hash type spin default 64 min 1 max 4096
option name Compat type check default false
option name Book File type string default <empty>
option name Clear Hash type button
ugiok
"""
HANDSHAKE_LINES: list[m.ReplyLine] = [
    m.IdLine("name", "enginesrv"),
    m.IdLine("author", "the enginesrv developers"),
    m.IdLine("version", "0.1.0"),
    m.IdLine("protocol", "1"),
    *HANDSHAKE.games,
    *HANDSHAKE.bots,
    *HANDSHAKE.limits,
    *HANDSHAKE.options,
    m.UgiOk(),
]

INFO = m.Info(
    depth=7,
    seldepth=9,
    score=m.Score("cp", -35),
    nodes=120344,
    nps=81000,
    time=1486,
    hashfull=120,
    pv=("e1-e8", "x:e3-e7"),
    search=4,
)

# (reply, method it answers, text, lines a client reads back, msgpack result or None)
REPLIES: list[tuple[m.Reply, str, str, list[m.ReplyLine], object]] = [
    (HANDSHAKE, "ugi", HANDSHAKE_TEXT, HANDSHAKE_LINES, "map"),
    (m.ReadyOk(), "isready", "readyok\n", [m.ReadyOk()], {}),
    (m.Pong(42), "ping", "pong 42\n", [m.Pong(42)], {"token": 42}),
    (
        INFO,
        "go",
        "info depth 7 seldepth 9 score cp -35 nodes 120344 nps 81000 time 1486 hashfull 120 "
        "pv e1-e8 x:e3-e7\n",
        [INFO],
        None,
    ),
    (
        m.Info(depth=3, score=m.Score("win", 5, "lower")),
        "go",
        "info depth 3 score win 5 lowerbound\n",
        [m.Info(depth=3, score=m.Score("win", 5, "lower"))],
        None,
    ),
    (
        m.Info(string="loaded  2 books"),
        "go",
        "info string loaded  2 books\n",
        [m.Info(string="loaded  2 books")],
        None,
    ),
    (m.BestMove("e1-e8"), "go", "bestmove e1-e8\n", [m.BestMove("e1-e8")], {"move": "e1-e8"}),
    (m.BestMove(None), "go", "bestmove none\n", [m.BestMove(None)], {"move": None}),
    (
        m.BestMove("f6", ponder="e5"),
        "go",
        "bestmove f6 ponder e5\n",
        [m.BestMove("f6", "e5")],
        {"move": "f6", "ponder": "e5"},
    ),
    (m.Response(True), "query", "response true\n", [m.Response("true")], {"value": True}),
    (m.Response(None), "query", "response none\n", [m.Response("none")], {"value": None}),
    (m.Response("p1win"), "query", "response p1win\n", [m.Response("p1win")], {"value": "p1win"}),
    (
        m.Response(("a2-b2", "pass")),
        "query",
        "response a2-b2 pass\n",
        [m.Response("a2-b2 pass")],
        {"value": ["a2-b2", "pass"]},
    ),
    (m.Response(()), "query", "response\n", [m.Response("")], {"value": []}),
    (
        m.Response({"winner": "p1", "reason": "target-reached", "score_p1": 3}),
        "query",
        "response winner=p1 reason=target-reached score_p1=3\n",
        [m.Response("winner=p1 reason=target-reached score_p1=3")],
        {"value": {"winner": "p1", "reason": "target-reached", "score_p1": 3}},
    ),
    (m.Response(POS), "play", f"response {POS}\n", [m.Response(POS)], {"value": POS}),
    (
        m.OptionList((m.OptionSpec("Hash", "spin", "64", 1, 4096),)),
        "options",
        "option name Hash type spin default 64 min 1 max 4096\noptionsok\n",
        [m.OptionSpec("Hash", "spin", "64", 1, 4096), m.OptionsOk()],
        {"options": [{"name": "Hash", "type": "spin", "default": "64", "min": 1, "max": 4096}]},
    ),
    (
        m.BotList((m.BotInfo("greedy", ("yinsh",)),)),
        "bots",
        "bot greedy games yinsh\nbotsok\n",
        [m.BotInfo("greedy", ("yinsh",)), m.BotsOk()],
        {"bots": [{"name": "greedy", "games": ["yinsh"]}]},
    ),
    (
        m.ShowText(" a   b\n  .5  W3"),
        "show",
        "show  a   b\nshow   .5  W3\nshowok\n",
        [m.ShowLine(" a   b"), m.ShowLine("  .5  W3"), m.ShowOk()],
        {"text": " a   b\n  .5  W3"},
    ),
    (m.Ack(), "position", "", [], {}),
]
REPLY_IDS = [f"{method}-{i}" for i, (_, method, *_rest) in enumerate(REPLIES)]


@pytest.mark.parametrize(("reply", "method", "text", "lines", "result"), REPLIES, ids=REPLY_IDS)
def test_reply_text(
    reply: m.Reply, method: str, text: str, lines: list[m.ReplyLine], result: object
) -> None:
    del method, result
    data = text_reply(reply)
    assert data == text.encode()
    client = lambda: TextDecoder("client")  # noqa: E731
    assert feed_split(client, data, []) == lines
    all_feedings(client, data)
    assert b"".join(encode_reply_line(line) for line in lines) == data


@pytest.mark.parametrize(("reply", "method", "text", "lines", "result"), REPLIES, ids=REPLY_IDS)
def test_reply_msgpack(
    reply: m.Reply, method: str, text: str, lines: list[m.ReplyLine], result: object
) -> None:
    del text, lines
    data = encode_reply(5, reply)
    decoder = MsgpackDecoder("client")
    decoder.feed(data)
    [message] = drain(decoder)
    all_feedings(lambda: MsgpackDecoder("client"), data)
    if isinstance(reply, m.Info):
        assert message == reply
        assert isinstance(message, m.Info)
        assert message.search == reply.search
        return
    assert isinstance(message, m.RpcResult)
    assert message.msgid == 5
    assert message.error is None
    if result != "map":
        assert message.result == result
    assert parse_result(method, message.result) == reply


def test_bestmove_result_carries_the_search_figures() -> None:
    best = m.BestMove(
        "e1-e8", None, m.Score("loss", 4), 6, 9, 5000, 310, ("e1-e8", "f2-f3"), stopped=True
    )
    data = encode_reply(2, best)
    assert msgpack.unpackb(data) == [
        1,
        2,
        None,
        {
            "move": "e1-e8",
            "score": {"loss": 4},
            "depth": 6,
            "seldepth": 9,
            "nodes": 5000,
            "time": 310,
            "pv": ["e1-e8", "f2-f3"],
            "stopped": True,
        },
    ]
    decoder = MsgpackDecoder("client")
    decoder.feed(data)
    [message] = drain(decoder)
    assert isinstance(message, m.RpcResult)
    assert parse_result("go", message.result) == best


@pytest.mark.parametrize(
    ("reply", "text", "error"),
    [
        (
            m.ErrorReply(204, "search-in-progress", "position: a search is running"),
            "error 204 search-in-progress position: a search is running\n",
            [204, "search-in-progress", "position: a search is running", None],
        ),
        (
            m.InvalidMove("e1-e9", "the ring cannot reach that point"),
            "invalidmove e1-e9 the ring cannot reach that point\n",
            [
                201,
                "illegal-move",
                "e1-e9: the ring cannot reach that point",
                {"move": "e1-e9", "reason": "the ring cannot reach that point"},
            ],
        ),
    ],
)
def test_errors_in_both_framings(
    reply: m.ErrorReply | m.InvalidMove, text: str, error: list[object]
) -> None:
    assert text_reply(reply) == text.encode()
    decoder = TextDecoder("client")
    decoder.feed(text.encode())
    assert drain(decoder) == [reply]
    assert msgpack.unpackb(encode_reply(3, reply)) == [1, 3, error, None]
    client = MsgpackDecoder("client")
    client.feed(encode_reply(3, reply))
    [message] = drain(client)
    assert isinstance(message, m.RpcResult)
    assert message.error is not None
    assert [message.error.code, message.error.name, message.error.message] == error[:3]
    # without a request id an error travels as a notification
    client.feed(encode_reply(None, reply))
    [note] = drain(client)
    assert isinstance(note, m.ErrorReply)
    assert note.code == error[0]


def test_error_text_never_breaks_a_line() -> None:
    data = text_reply(m.ErrorReply(101, "bad-arguments", "two\nlines\r"))
    assert data.count(b"\n") == 1


def test_client_reads_uci_style_info_leniently() -> None:
    decoder = TextDecoder("client")
    decoder.feed(b"info depth 4 seldepth 4 score cp 200 time 0 nodes 473 tthits 38 pv f1 b1\n")
    decoder.feed(b"info depth 9 score mate -3 multipv 1 currmove e2e4\n")
    assert drain(decoder) == [
        m.Info(depth=4, seldepth=4, score=m.Score("cp", 200), time=0, nodes=473, pv=("f1", "b1")),
        m.Info(depth=9, score=m.Score("loss", 3), multipv=1),
    ]


def test_sniffer() -> None:
    assert sniff(encode_request(1, m.IsReady())[0]) == "msgpack"
    assert sniff(0xDC) == "msgpack"
    assert sniff(0xDD) == "msgpack"
    for line in (b"ugi", b"isready", b" go", b"\r\n", b"\tquit"):
        assert sniff(line[0]) == "text"
    for first in (0x16, 0x00, 0x80, 0xC1, 0xFF, 0x7F, 0xDE):
        assert sniff(first) is None


def test_protocol_errors_are_the_only_exception_in_the_package_api() -> None:
    assert issubclass(ProtocolError, Exception)
    assert not issubclass(ProtocolError, ValueError)

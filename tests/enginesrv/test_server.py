"""The server end to end: real sockets on port 0, scripted peers, both framings."""

from __future__ import annotations

from typing import Any, NoReturn

import msgpack
import pytest
import trio

from enginesrv.search.jobs import SearchJob
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import STOP_MARGIN
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.trio_run import trio_test

T7 = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"
OVER = "3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB - e 1-0 45"


@trio_test
async def test_text_handshake_and_ready() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("ugi")
        lines = await peer.until("ugiok")
        assert lines[0] == "id name enginesrv"
        assert "id protocol 1" in lines
        assert any(line.startswith("game yinsh colours White Black start 4/7/") for line in lines)
        assert any(line.startswith("option name Game type combo default yinsh") for line in lines)
        assert "limit line 65536" in lines
        await peer.send("isready", "ping 7")
        await peer.expect("readyok")
        assert await peer.line() == "pong 7"


@trio_test
async def test_text_position_queries_play_and_undo() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {T7}", "query turn", "query phase", "query moves")
        assert await peer.line() == "response p1"
        assert await peer.line() == "response m"
        moves = (await peer.expect("response ")).split()[1:]
        assert len(moves) == 63
        await peer.send("play e3-e6", "query moves", "query p1turn")
        assert await peer.line() == (
            "response 2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40"
        )
        assert await peer.line() == "response x:a4-e4"
        assert await peer.line() == "response true"
        await peer.send("undo", "query position", "undo")
        assert await peer.line() == f"response {T7}"
        assert await peer.line() == f"response {T7}"
        assert (await peer.line()).startswith("error 101 bad-arguments undo: only 0 move")


@trio_test
async def test_rejected_commands_change_nothing() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {T7}")
        await peer.send("position fen 4/7/8 w p 0-0 51")
        assert (await peer.line()).startswith("error 202 invalid-position position '4/7/8")
        await peer.send("position startpos moves f6 f6")
        assert await peer.line() == "invalidmove f6 f6 is occupied"
        await peer.send("play e3-e8")
        assert (await peer.line()).startswith("invalidmove e3-e8 ")
        await peer.send("setoption name Game value chess")
        assert (await peer.line()).startswith("error 101 bad-arguments setoption: unknown game")
        await peer.send("setoption name Colour value red", "frobnicate", "go wtime 5")
        assert (await peer.line()).startswith("error 101 bad-arguments setoption: unknown option")
        assert await peer.line() == "error 100 unknown-command unknown command 'frobnicate'"
        assert (await peer.line()).startswith("error 101 bad-arguments go: unknown limit 'wtime'")
        assert await peer.line() == "bestmove none"  # a refused go still gets its bestmove
        await peer.send("query position")
        assert await peer.line() == f"response {T7}"


@trio_test
async def test_go_gives_exactly_one_bestmove() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {T7}", "go depth 1", "isready")
        lines = await peer.until("readyok")
        lines += (
            [] if any(x.startswith("bestmove") for x in lines) else await peer.until("bestmove")
        )
        best = [x for x in lines if x.startswith("bestmove")]
        assert len(best) == 1
        move = best[0].split()[1]
        await peer.send(f"play {move}")
        assert (await peer.line()).startswith("response ")


@trio_test
async def test_go_infinite_answers_during_search_and_stops() -> None:
    async with running_server(bot="alphabeta", game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("setoption name Bot value random", "go infinite")
        await peer.send("isready", "query turn", "position startpos")
        lines = [await peer.line() for _ in range(3)]
        assert lines[0] == "readyok"
        assert lines[1] == "response p1"
        assert lines[2].startswith("error 204 search-in-progress position:")
        await peer.send("stop")
        best = await peer.until("bestmove")
        assert best[-1].split()[0] == "bestmove"
        await peer.send("stop", "isready")  # a stop without a search is ignored
        assert await peer.line() == "readyok"


@trio_test
async def test_go_on_a_finished_game() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {OVER}", "go depth 2", "query result", "play k7-k8")
        assert (await peer.line()).startswith("error 203 game-over")
        assert await peer.line() == "bestmove none"
        assert await peer.line() == "response p1win"
        assert (await peer.line()).startswith("error 203 game-over")


@trio_test
async def test_compat_turns_errors_into_info_strings() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("setoption name Compat value true", "hello", "position startpos moves a1")
        await peer.send("isready")
        assert await peer.line() == "info string invalidmove a1 a1 is not a point of the board"
        assert await peer.line() == "readyok"


@trio_test
async def test_options_bots_and_show() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("bots")
        bots = await peer.until("botsok")
        assert any(line.startswith("bot random games yinsh") for line in bots)
        await peer.send("setoption name Bot value alphabeta", "options")
        options = await peer.until("optionsok")
        assert "option name Depth type spin default 0 min 0 max 128" in options
        await peer.send("setoption name Depth value 3", "options")
        assert "option name Depth type spin default 3 min 0 max 128" in await peer.until(
            "optionsok"
        )
        await peer.send("show")
        drawing = await peer.until("showok")
        assert drawing[0] == "show  a   b   c   d   e   f   g   h   i   j   k"
        assert any("position: 4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51" in line for line in drawing)


@trio_test
async def test_no_game_is_error_200() -> None:
    async with running_server(game=None) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "query moves", "go depth 1", "setoption name Game value yoxii", "query turn"
        )
        assert (await peer.line()).startswith("error 200 no-game query:")
        assert (await peer.line()).startswith("error 200 no-game go:")
        assert await peer.line() == "bestmove none"
        assert await peer.line() == "response p1"


@trio_test
async def test_msgpack_session() -> None:
    async with running_server() as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "ugi", {"protocol": 1})
        hello = await peer.response(1)
        assert hello[2] is None
        assert hello[3]["protocol"] == 1
        assert {"line", "frame", "inflight", "idle"} <= set(hello[3]["limits"])
        await peer.request(2, "position", {"fen": T7})
        assert await peer.response(2) == [1, 2, None, {}]
        await peer.request(3, "go", {"depth": 1})
        best = await peer.response(3)
        assert best[2] is None
        assert isinstance(best[3]["move"], str)
        await peer.request(4, "play", {"move": "zz9"})
        error = await peer.response(4)
        assert error[2][:2] == [201, "illegal-move"]
        assert error[2][3] == {
            "move": "zz9",
            "reason": "'zz9' is not a point (lowercase column a-k, row 1-11)",
        }
        await peer.request(5, "stop", {"search": 77})
        assert (await peer.response(5))[2][:2] == [205, "not-searching"]
        await peer.request(6, "ugi", {"protocol": 9})
        assert (await peer.response(6))[2][0] == 104


@trio_test
async def test_msgpack_infinite_search_with_infos_and_stop_by_id() -> None:
    async with running_server(game="yoxii") as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "go", {"infinite": True})
        await peer.request(2, "isready")
        assert await peer.response(2) == [1, 2, None, {}]
        await peer.notify("stop", {"search": 1})
        best = await peer.response(1)
        assert best[2] is None
        assert best[3]["move"]


@trio_test
async def test_msgpack_go_on_a_finished_game() -> None:
    async with running_server() as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "position", {"fen": OVER})
        await peer.request(2, "go", {"depth": 1})
        await peer.response(1)
        answer = await peer.response(2)
        assert answer[2][:2] == [203, "game-over"]
        assert answer[2][3] == {"move": None}


@trio_test
async def test_msgpack_bad_frame_is_answered_then_closed() -> None:
    async with running_server() as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "isready")
        await peer.response(1)
        await peer.stream.send_all(msgpack.packb([7, 7]))
        note = await peer.frame()
        assert note[0] == 2
        assert note[1] == "error"
        assert note[2][0]["code"] == 103
        with trio.fail_after(5):
            assert await peer.stream.receive_some(10) == b""


@trio_test
async def test_unknown_first_byte_is_refused() -> None:
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.stream.send_all(b"\x16\x03\x01")
        line = await peer.line()
        assert line.startswith("error 103 bad-frame the first byte 0x16")
        assert await peer.closed()


@trio_test
async def test_line_limit_and_idle_timeout() -> None:
    async with running_server(limits=Limits(line=100, idle=0.3)) as (_, port):
        long_line = await TextPeer.connect(port)
        await long_line.send("position fen " + "x" * 200)
        assert (await long_line.line()).startswith("error 102 frame-too-large")
        assert await long_line.closed()
        idle = await TextPeer.connect(port)
        await idle.send("isready")
        assert await idle.line() == "readyok"
        assert (await idle.line()).startswith("error 302 idle-timeout")
        assert await idle.closed()


@trio_test
async def test_connection_limit() -> None:
    async with running_server(limits=Limits(connections=1)) as (_, port):
        first = await TextPeer.connect(port)
        await first.send("isready")
        assert await first.line() == "readyok"
        second = await TextPeer.connect(port)
        # over the cap: closed at once, before its framing is known, so nothing is sent
        assert await second.closed()
        assert second.buffer == b""
        await first.send("isready")
        assert await first.line() == "readyok"


@trio_test
async def test_shutdown_sends_best_moves_then_closes() -> None:
    async with running_server(game="yoxii") as (server, port):
        peer = await TextPeer.connect(port)
        await peer.send("go infinite", "isready")
        assert await peer.line() == "readyok"
        server.stop.set()
        lines = await peer.until("error 304")
        assert lines[0].startswith("bestmove ")
        assert await peer.closed()


class DeafRunner:
    """A search runner whose searches never end, whatever they are told (a runner gone
    wrong: the server's pool kills a worker that ignores its stop, this one cannot be)."""

    async def search(self, job: SearchJob, **_: Any) -> NoReturn:
        await trio.sleep_forever()


@trio_test
async def test_a_search_that_never_answers_its_stop_cannot_hold_the_servers_stop() -> None:
    """Past the workers' grace and ``STOP_MARGIN`` a stopping connection still waiting for
    its search is cancelled and closed, and the server's stop ends."""
    async with running_server(game="yoxii", runner=DeafRunner()) as (server, port):
        peer = await TextPeer.connect(port)
        await peer.send("go infinite", "isready")
        assert await peer.line() == "readyok"
        stopped = trio.current_time()
        server.stop.set()
        assert await peer.closed()
        assert peer.buffer == b""  # no best move: there is none to send
        assert trio.current_time() - stopped >= server.config.grace + STOP_MARGIN


@trio_test
async def test_an_internal_fault_is_error_500_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from enginesrv.serve.positions import Board

    def broken(self: Board) -> str:
        raise ZeroDivisionError

    monkeypatch.setattr(Board, "show", broken)
    async with running_server() as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("show", "isready")
        line = await peer.line()
        assert line.startswith("error 500 internal show: internal error (ZeroDivisionError)")
        assert await peer.line() == "readyok"


@trio_test
async def test_msgpack_go_must_be_a_request() -> None:
    async with running_server() as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.notify("go", {"depth": 1})
        note = await peer.frame()
        assert note[:2] == [2, "error"]
        assert note[2][0]["code"] == 101

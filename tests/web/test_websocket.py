"""The WebSocket endpoint /ws end to end: hypercorn in the test's trio run, real sockets."""

from __future__ import annotations

import random

import msgpack
import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from enginesrv.serve.connection import Limits
from tests.trio_run import trio_test
from tests.web.webpeer import TextSocket, Web, binary_socket, drop, running_web, text_socket


async def closed_with(web: Web, query: str) -> tuple[int, str]:
    """The close code and reason of a socket the server closes at once."""
    return await closed_at(web.ws(query))


async def closed_at(url: str) -> tuple[int, str]:
    """The close code and reason of the socket at ``url``, which the server closes at once."""
    async with open_websocket_url(url) as ws:
        try:
            with trio.fail_after(10):
                await ws.get_message()
        except ConnectionClosed as exc:
            await drop(ws)
            assert exc.reason is not None
            return exc.reason.code, exc.reason.reason or ""
    raise AssertionError("the socket was not closed")


@trio_test
async def test_one_text_message_holds_several_lines_and_the_last_needs_no_newline() -> None:
    async with running_web() as web, text_socket(web.ws()) as peer:
        await peer.send("uginewgame yoxii", "position startpos", "query turn", "ping 3")
        assert await peer.line() == "response p1"
        assert await peer.line() == "pong 3"
        await peer.ws.send_message("query phase\nquery position\n")
        assert await peer.line() == "response t"
        assert await peer.line() == "response 3/5/7/3T3/7/5/3 w t w:5553 b:5553"


@trio_test
async def test_a_search_and_its_progress_over_text() -> None:
    async with running_web() as web, text_socket(web.ws()) as peer:
        await peer.send("uginewgame yoxii", "setoption name Bot value alphabeta", "go depth 2")
        best = await peer.expect("bestmove ")
        assert best.split()[1] in (await peer.ask("query moves")).split()
        infos = [m for m in peer.messages if isinstance(m, str) and m.startswith("info ")]
        assert infos, "no progress reached the socket"


@trio_test
async def test_binary_messages_carry_msgpack_rpc() -> None:
    async with running_web() as web, binary_socket(web.ws()) as peer:
        await peer.request(1, "uginewgame", {"game": "yoxii"})
        await peer.request(2, "query", {"what": "moves"})
        assert (await peer.response(1))[2] is None
        reply = await peer.response(2)
        assert reply[2] is None
        assert "c5" in reply[3]["value"]
        # two frames in one message
        both = msgpack.packb([0, 3, "ping", [{"token": 9}]]) + msgpack.packb(
            [0, 4, "query", [{"what": "turn"}]]
        )
        await peer.ws.send_message(both)
        assert (await peer.response(3))[3] == {"token": 9}
        assert (await peer.response(4))[3] == {"value": "p1"}


@trio_test
async def test_a_socket_keeps_the_framing_of_its_first_message() -> None:
    async with running_web() as web, text_socket(web.ws()) as peer:
        await peer.send("ping 1")
        assert await peer.line() == "pong 1"
        await peer.ws.send_message(msgpack.packb([0, 1, "ping", [{"token": 2}]]))
        line = await peer.line()
        assert line.startswith("error 103 bad-frame a binary message of ")
        await peer.send("ping 2")  # the session goes on
        assert await peer.line() == "pong 2"
    async with running_web() as web, binary_socket(web.ws()) as bpeer:
        await bpeer.request(1, "ping", {"token": 1})
        assert (await bpeer.response(1))[3] == {"token": 1}
        await bpeer.ws.send_message("ping 5")
        frame = await bpeer.frame()
        assert frame[0] == 2
        assert frame[1] == "error"
        assert "text message" in frame[2][0]["message"]
        await bpeer.request(2, "ping", {"token": 2})
        assert (await bpeer.response(2))[3] == {"token": 2}


@trio_test
async def test_a_binary_message_that_ends_inside_a_frame_is_refused_whole() -> None:
    async with running_web() as web, binary_socket(web.ws()) as peer:
        whole = msgpack.packb([0, 1, "ping", [{"token": 1}]])
        cut = msgpack.packb([0, 2, "ping", [{"token": 2}]])[:-3]
        await peer.ws.send_message(whole + cut)
        frame = await peer.frame()
        assert frame[0] == 2
        assert "ends inside a msgpack frame" in frame[2][0]["message"]
        await peer.request(3, "ping", {"token": 3})
        assert (await peer.response(3))[3] == {"token": 3}
        # nothing of the refused message was run
        assert not [f for f in peer.frames if f[0] == 1 and f[1] in (1, 2)]


@trio_test
async def test_the_per_address_cap_of_websockets() -> None:
    async with running_web(peer_cap=2) as web:
        async with text_socket(web.ws()) as a, text_socket(web.ws()) as b:
            await a.send("ping 1")
            await b.send("ping 1")
            assert await a.line() == "pong 1"
            assert await b.line() == "pong 1"
            code, reason = await closed_with(web, "")
            assert code == 1013
            assert reason == "127.0.0.1 holds its limit of 2 WebSockets"
        async with text_socket(web.ws()) as c:  # the two closed: room again
            await c.send("ping 4")
            assert await c.line() == "pong 4"


@trio_test
async def test_a_socket_that_sends_nothing_is_closed_after_the_first_command_limit() -> None:
    async with (
        running_web(limits=Limits(first_command=0.3)) as web,
        open_websocket_url(web.ws()) as ws,
    ):
        with trio.fail_after(10):
            try:
                await ws.get_message()
            except ConnectionClosed as exc:
                assert exc.reason is not None
                assert exc.reason.code == 4408
                await drop(ws)
            else:
                raise AssertionError("a message came instead of the close")


@trio_test
async def test_a_bad_game_address_is_closed_with_its_reason() -> None:
    async with running_web() as web:
        code, reason = await closed_with(web, "game=chess&opponent=bot:random")
        assert code == 4400
        assert "chess" in reason
        code, reason = await closed_with(web, "game=yoxii&opponent=bot:nosuch")
        assert code == 4400
        assert "nosuch" in reason
        code, reason = await closed_with(web, "game=yoxii&opponent=bot:random&tc=fast")
        assert code == 4400
        assert "time control 'fast'" in reason
        code, reason = await closed_with(web, "game=yoxii&side=p3")
        assert code == 4400
        assert "side 'p3'" in reason
        code, reason = await closed_with(web, "game=yoxii&colour=red")
        assert code == 4400
        assert "unknown field 'colour'" in reason


async def play_out(peer: TextSocket, side: str, rng: random.Random, limit: int = 400) -> str:
    """Play random legal moves for ``side`` and ``go`` for the bot until the game ends."""
    for _ in range(limit):
        if await peer.ask("query gameover") == "true":
            return await peer.ask("query outcome")
        turn = await peer.ask("query turn")
        if turn == side:
            moves = (await peer.ask("query moves")).split()
            assert moves
            move = rng.choice(moves)
            position = await peer.ask(f"play {move}")
            assert position == await peer.ask("query position")
        else:
            await peer.send("go")
            best = await peer.expect("bestmove ")
            assert best != "bestmove none"
    raise AssertionError("the game did not end")


@trio_test
async def test_a_refereed_game_against_a_bot_to_its_end() -> None:
    rng = random.Random(5)
    async with running_web() as web:
        query = "game=yoxii&opponent=bot:random&side=p2&tc=60+1"
        async with text_socket(web.ws(query)) as peer:
            outcome = await play_out(peer, "p2", rng)
            assert outcome.startswith("winner=")
            played = (await peer.ask("query played")).split()
            (referee,) = list(web.app.referees)
            assert len(played) == referee.state.ply() == len(referee.shown)
            clock = await peer.ask("query clock")
            assert clock.startswith("p1=")
            assert "running=none" in clock
            await peer.send("play c5")
            assert (await peer.line()).startswith("error 203 game-over")


@trio_test
async def test_a_refereed_game_refuses_what_would_change_the_game() -> None:
    query = "game=yoxii&opponent=bot:random&side=p1"
    async with running_web() as web, text_socket(web.ws(query)) as peer:
        for command in ("uginewgame yinsh", "position startpos", "setoption name Bot value x"):
            await peer.send(command)
            line = await peer.line()
            assert line.startswith("error 101 bad-arguments")
            assert "referees" in line
        await peer.send("go")
        assert "your decision" in await peer.line()
        assert await peer.line() == "bestmove none"  # a refused go still ends with its bestmove
        await peer.send("play zz9")
        assert (await peer.line()).startswith("invalidmove zz9 ")
        await peer.ask("play c5")
        placement = (await peer.ask("query moves")).split()[0]
        await peer.ask(f"play {placement}")  # the placement half of White's turn
        await peer.send("play c4")
        assert "the bot's decision" in await peer.line()
        for _ in range(2):  # Black's turn: the Totem, then a placement
            await peer.send("go")
            await peer.expect("bestmove ")
        assert await peer.ask("query turn") == "p1"
        assert len((await peer.ask("query played")).split()) == 4
        # back to the start: the bot's two decisions and the person's two
        await peer.ask("undo 4")
        assert await peer.ask("query position") == "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
        assert await peer.ask("query played") == ""


@trio_test
async def test_two_people_at_one_screen_and_their_clocks() -> None:
    async with running_web() as web, text_socket(web.ws("game=yoxii&tc=1+0")) as peer:
        await peer.ask("play c5")
        assert await peer.ask("query turn") == "p1"  # the placement half of the turn
        await peer.send("go")
        assert "two people" in await peer.line()
        assert await peer.line() == "bestmove none"
        clock = await peer.ask("query clock")
        assert "running=p1" in clock
        await trio.sleep(1.2)  # White's clock runs out
        assert await peer.ask("query gameover") == "true"
        assert await peer.ask("query outcome") == "winner=p2 reason=time-forfeit"
        assert await peer.ask("query moves") == ""


@trio_test
async def test_the_server_stopping_closes_websockets() -> None:
    async with running_web() as web, text_socket(web.ws()) as peer:
        await peer.send("ping 1")
        assert await peer.line() == "pong 1"
        web.server.stop.set()
        with trio.fail_after(10):
            line = await peer.line()
            assert line.startswith("error 304 shutting-down")
            with trio.fail_after(10):
                try:
                    await peer.line()
                except ConnectionClosed:
                    await drop(peer.ws)
                else:
                    raise AssertionError("a line came after the shutdown error")


@trio_test
async def test_the_referee_says_when_a_game_of_hidden_laws_is_over() -> None:
    """Black's laws may leave it no move at its first turn: only the referee can tell, since
    the person's view does not hold Black's laws; the page is told the game is over."""
    async with running_web() as web:
        query = "game=yinyang&opponent=bot:random&side=p2"
        async with text_socket(web.ws(query)) as peer:
            await peer.send("go")
            assert await peer.line() == "bestmove laws:?,?,?,?"
            (referee,) = list(web.app.referees)
            # laws under which Black (to act first) can do nothing on the full start board
            referee.state.pop()
            referee.state.push(referee.state.parse_move("laws:....>*,....>*,....>*,....>*"))
            await peer.ask("play laws:....>*,....>*,..b.>....,b.ww>b..w")
            assert referee.state.is_terminal()
            assert await peer.ask("query gameover") == "true"
            assert await peer.ask("query turn") == "none"
            assert (await peer.ask("query outcome")).startswith("winner=p2 ")


@trio_test
async def test_a_socket_that_pings_stays_while_a_silent_one_is_closed_when_idle() -> None:
    """The page sends isready every 30 s so that a person who thinks long is not dropped by
    the idle limit (here 1 s): the pinging socket stays, the silent one gets error 302."""
    async with (
        running_web(limits=Limits(idle=1.0)) as web,
        text_socket(web.ws("game=yoxii&opponent=bot:random&side=p1")) as thinker,
        text_socket(web.ws()) as silent,
    ):
        await thinker.send("ping 1")
        await silent.send("ping 1")
        assert await thinker.line() == "pong 1"
        assert await silent.line() == "pong 1"
        for n in range(6):
            await trio.sleep(0.4)
            await thinker.send("isready")
            assert await thinker.line() == "readyok", n
        assert (await silent.line()).startswith("error 302 idle-timeout")
        with pytest.raises(ConnectionClosed):
            await silent.line()
        await drop(silent.ws)
        assert await thinker.ask("query turn") == "p1"  # the game is still there

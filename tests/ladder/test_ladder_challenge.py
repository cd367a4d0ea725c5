"""People against the ladder's bots from its page (``enginesrv.ladder.challenge``): a game on
``/ws?game=...&opponent=ladder:NAME`` refereed as the web app's bot games are, its bot lent
and given back, neither rated nor stored; the page's protocol session that replays records
and searches nothing; ``/recent.json`` and ``/players.json``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import trio

import games
from enginesrv.ladder.accounts import players
from enginesrv.ladder.state import Ladder
from tests.ladder.support import FakeBot, first_move, on_games, trio_test
from tests.ladder.test_ladder_web import get, web_ladder
from tests.web.test_websocket import closed_at
from tests.web.webpeer import TextSocket, text_socket


def challenge(page: str, name: str, side: str = "p1", tc: str = "60+1", game: str = "yoxii") -> str:
    query = urlencode({"game": game, "opponent": f"ladder:{name}", "side": side, "tc": tc})
    return page.replace("http", "ws") + "ws?" + query


async def until(predicate: Callable[[], bool], timeout: float = 10) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.01)


def free(ladder: Ladder, name: str) -> bool:
    return any(not link.busy and link.alive for link in ladder.lobby.links.get(name, []))


async def play_to_end(peer: TextSocket, side: str, rng: random.Random) -> str:
    """Random legal moves for ``side``, ``go`` for the bot, until the game ends."""
    for _ in range(400):
        if await peer.ask("query gameover") == "true":
            return await peer.ask("query outcome")
        if await peer.ask("query turn") == side:
            moves = (await peer.ask("query moves")).split()
            await peer.ask(f"play {rng.choice(moves)}")
        else:
            await peer.send("go")
            assert await peer.expect("bestmove ") != "bestmove none"
    raise AssertionError("the game did not end")


@trio_test
async def test_a_page_plays_a_house_bot_to_the_end_and_nothing_is_rated(tmp_path: Path) -> None:
    """The house bot is lent for the game (busy: the pairer passes it by), given back the
    moment the game ends with the page still open, and the game is neither stored nor
    rated; nothing is taken back in it."""
    async with web_ladder(tmp_path) as (ladder, page):
        async with text_socket(challenge(page, "house1", side="p2")) as peer:
            await peer.send("isready")
            assert await peer.line() == "readyok"
            assert not free(ladder, "house1")
            await peer.send("go")
            await peer.expect("bestmove ")
            await peer.send("undo")
            refused = "error 101 bad-arguments undo: nothing is taken back in a game against"
            assert (await peer.line()).startswith(refused)
            outcome = await play_to_end(peer, "p2", random.Random(3))
            assert outcome.startswith("winner=")
            await until(lambda: free(ladder, "house1"))
            await peer.send("undo")
            assert (await peer.line()).startswith(refused)
        assert ladder.sections["yoxii"].rows == []
        assert ladder.boards["yoxii"].games == 0


class Waiting(FakeBot):
    """A bot that answers ``go`` only when it is told ``stop`` (never: ``deaf``)."""

    def __init__(self, name: str, token: str, *, deaf: bool = False) -> None:
        super().__init__(name, token)
        self.asked = trio.Event()
        self.deaf = deaf

    def answer(self, line: str) -> str | None:
        if line.startswith("go"):
            self.gos += 1
            self.asked.set()
            return ""
        if line == "stop" and not self.deaf:
            return f"bestmove {first_move(self.state)}\n"
        return super().answer(line)


async def connected(ladder: Ladder, bot: FakeBot, nursery: trio.Nursery) -> None:
    nursery.start_soon(bot.run, ladder.address[1])
    await until(lambda: free(ladder, bot.name))


@trio_test
async def test_a_connected_bot_is_asked_with_the_clocks_and_given_back_when_the_page_goes(
    tmp_path: Path,
) -> None:
    bot = FakeBot("alice", players(tmp_path).add("alice"))
    async with web_ladder(tmp_path, house=()) as (ladder, page), trio.open_nursery() as nursery:
        await connected(ladder, bot, nursery)
        async with text_socket(challenge(page, "alice", side="p2", tc="30+2")) as peer:
            await peer.send("go")
            best = await peer.expect("bestmove ")
            start = games.load("yoxii").new_state()
            assert best == f"bestmove {first_move(start)}"
            assert not free(ladder, "alice")
            go = next(line for line in bot.commands if line.startswith("go "))
            assert "p1time" in go
            assert "p2time" in go
            assert "p1inc 2000" in go
        await until(lambda: free(ladder, "alice"))
        assert ladder.lobby.links["alice"][0].engine is not None
        assert ladder.sections["yoxii"].rows == []
        nursery.cancel_scope.cancel()


@trio_test
async def test_a_bot_thinking_when_the_page_goes_is_stopped_then_given_back(
    tmp_path: Path,
) -> None:
    """The bot is told ``stop`` and answers: its link plays on."""
    bot = Waiting("alice", players(tmp_path).add("alice"))
    async with web_ladder(tmp_path, house=()) as (ladder, page), trio.open_nursery() as nursery:
        await connected(ladder, bot, nursery)
        (link,) = ladder.lobby.links["alice"]
        async with text_socket(challenge(page, "alice", side="p2")) as peer:
            await peer.send("go")
            with trio.fail_after(10):
                await bot.asked.wait()
        await until(lambda: free(ladder, "alice"))
        asked = next(at for at, line in enumerate(bot.commands) if line.startswith("go"))
        after = bot.commands[asked:]
        assert "stop" in after
        assert ladder.lobby.links["alice"] == [link]
        assert link.alive
        nursery.cancel_scope.cancel()


@trio_test
async def test_a_bot_that_does_not_answer_stop_loses_on_time_and_its_link_is_closed(
    tmp_path: Path,
) -> None:
    bot = Waiting("alice", players(tmp_path).add("alice"), deaf=True)
    async with web_ladder(tmp_path, house=()) as (ladder, page), trio.open_nursery() as nursery:
        await connected(ladder, bot, nursery)
        (link,) = ladder.lobby.links["alice"]
        async with text_socket(challenge(page, "alice", side="p2", tc="1")) as peer:
            await peer.send("go")
            said = await peer.expect("info string ")
            assert said.startswith("info string p2 wins (time-forfeit): no bestmove within")
            assert await peer.line() == "bestmove none"
        await until(lambda: "alice" not in ladder.lobby.links)
        assert not link.alive
        status, body = await trio.to_thread.run_sync(get, page + "players.json")
        assert status == 200
        assert json.loads(body)["challenges"] == {"most": 4, "playing": 0}
        nursery.cancel_scope.cancel()


@trio_test
async def test_challenges_that_cannot_be_had_are_refused_with_their_reasons(
    tmp_path: Path,
) -> None:
    async with web_ladder(tmp_path) as (ladder, page):
        code, reason = await closed_at(challenge(page, "nobody"))
        assert (code, reason) == (4400, "opponent 'ladder:nobody': no such bot is connected")
        code, reason = await closed_at(challenge(page, "house1", game="yinsh"))
        assert (code, reason) == (4400, "game 'yinsh': the ladder plays yoxii")
        url = page.replace("http", "ws") + "ws?game=yoxii&opponent=bot:random"
        code, reason = await closed_at(url)
        assert code == 4400
        assert "against its ladder's bots: write ladder:NAME" in reason
        code, reason = await closed_at(challenge(page, "house1", tc="0.5"))
        assert code == 4400
        assert "time control '0.5'" in reason
        code, reason = await closed_at(challenge(page, "house1", tc="none"))
        assert (code, reason) == (4400, "tc: a game against the ladder's bots has a clock")
        code, reason = await closed_at(challenge(page, "house1", tc="1801"))
        assert code == 4400
        assert "over the server's limit of 1800 s" in reason
        code, reason = await closed_at(challenge(page, "house1", tc="60+11"))
        assert (code, reason) == (
            4400,
            "tc: an increment of at most 10 s against the ladder's bots",
        )
        async with text_socket(challenge(page, "house1")) as peer:
            await peer.send("isready")
            assert await peer.line() == "readyok"
            code, reason = await closed_at(challenge(page, "house1"))
            held = "127.0.0.1 plays a challenge game already: one at a time"
            assert (code, reason) == (1013, held)
        await until(lambda: free(ladder, "house1"))
        ladder.lobby.links["house1"][0].busy = True  # as in a rated game
        code, reason = await closed_at(challenge(page, "house1"))
        assert (code, reason) == (1013, "house1 plays a game now: try again when it is done")


@trio_test
async def test_a_page_that_never_asks_the_bot_loses_on_its_own_clock(tmp_path: Path) -> None:
    """Adversary 3. Promise: a page cannot hold a bot by leaving every clock still.

    The bot's clock runs only while it is asked; a page that never sends ``go`` on the bot's
    turn would have no clock running, and the bot would be held for as long as the page
    sends a command now and then. The person's clock runs until the page asks, from the
    moment the socket opens (a page that sends only lines the server refuses has run no
    command): the page loses on time, and the bot is given back."""
    async with web_ladder(tmp_path) as (ladder, page):
        url = challenge(page, "house1", side="p2", tc="1")
        async with text_socket(url) as peer:
            assert await peer.ask("query turn") == "p1"  # the bot's turn: no go comes
            await until(lambda: free(ladder, "house1"), timeout=5)
            assert await peer.ask("query outcome") == "winner=p1 reason=time-forfeit"
        async with text_socket(url) as peer:  # every line refused: no command ever runs
            for _ in range(3):
                await peer.send("\x01 not a command")
                assert (await peer.line()).startswith("error 100 unknown-command")
                await trio.sleep(0.5)
            await until(lambda: free(ladder, "house1"), timeout=5)
            assert await peer.ask("query outcome") == "winner=p1 reason=time-forfeit"


@trio_test
async def test_a_players_address_reaches_no_record_and_no_page(tmp_path: Path) -> None:
    """Adversary 3. Promise: a player's address is the operator's to know.

    A bot's connection dropping makes a forfeit whose words name the connection: stored in
    the game's record (served to anyone at ``/games/GAME/ID``) and told to the page of a
    challenge. They name the player, never its address."""
    token = players(tmp_path).add("alice")
    async with web_ladder(tmp_path, grace=0.0) as (ladder, page), trio.open_nursery() as nursery:
        ended, done = on_games(ladder, 1)
        nursery.start_soon(FakeBot("alice", token, drop_at=1).run, ladder.address[1])
        with trio.fail_after(20):
            await done.wait()
        row = ended[0].row
        assert row.reason == "disconnect"
        _, record = await trio.to_thread.run_sync(get, f"{page}games/yoxii/{row.id}")
        assert b"alice" in record
        assert b"127.0.0.1" not in record
        bot = FakeBot("alice", token, drop_at=1)
        ladder.lobby.links["house1"][0].busy = True  # no rated game takes alice meanwhile
        await connected(ladder, bot, nursery)
        async with text_socket(challenge(page, "alice", side="p2")) as peer:
            await peer.send("go")
            said = await peer.expect("info string ")
            assert said.startswith("info string p2 wins (disconnect)")
            assert "127.0.0.1" not in said
        nursery.cancel_scope.cancel()


@trio_test
async def test_a_ladder_without_challenges_refuses_them(tmp_path: Path) -> None:
    async with web_ladder(tmp_path, challenges=0) as (ladder, page):
        code, reason = await closed_at(challenge(page, "house1"))
        assert (code, reason) == (1013, "the ladder plays its 0 challenge games at once")
        assert free(ladder, "house1")


@trio_test
async def test_the_pages_session_replays_moves_but_searches_nothing(tmp_path: Path) -> None:
    async with web_ladder(tmp_path) as (ladder, page):
        state = games.load("yoxii").new_state()
        move = first_move(state)
        state.push(state.parse_move(move))
        async with text_socket(page.replace("http", "ws") + "ws") as peer:
            await peer.send("uginewgame yoxii", f"position startpos moves {move}")
            assert await peer.ask("query position") == state.to_string()
            await peer.send("go movetime 50")
            error = await peer.line()
            assert error.startswith("error 300 busy go: this server searches nothing")
            assert await peer.line() == "bestmove none"
            await peer.send("analyse id a movetime 50 startpos")
            assert (await peer.line()).startswith("error 300 busy analyse: this server")
        assert free(ladder, "house1")


@trio_test
async def test_recent_games_and_the_players_are_served(tmp_path: Path) -> None:
    bot = FakeBot("alice", players(tmp_path).add("alice"))
    async with web_ladder(tmp_path) as (ladder, page), trio.open_nursery() as nursery:
        ended, done = on_games(ladder, 2)
        nursery.start_soon(bot.run, ladder.address[1])
        with trio.fail_after(20):
            await done.wait()
        status, body = await trio.to_thread.run_sync(get, page + "recent.json")
        assert status == 200
        listed = json.loads(body)["games"]["yoxii"]
        stored = ladder.sections["yoxii"].rows[::-1]
        assert [game["id"] for game in listed] == [row.id for row in stored]
        first = listed[-1]
        row = ended[0].row
        assert (first["p1"], first["p2"], first["plies"]) == (row.p1, row.p2, row.plies)
        assert first["winner"] == str(row.winner)
        status, body = await trio.to_thread.run_sync(get, page + "players.json")
        assert status == 200
        found = json.loads(body)
        names = {entry["name"]: entry for entry in found["players"]}
        assert set(names) == {"alice", "house1"}
        assert names["house1"]["house"] is True
        assert names["alice"]["house"] is False
        assert names["alice"]["games"] == ["yoxii"]
        assert found["challenges"] == {"most": 4, "playing": 0}
        nursery.cancel_scope.cancel()

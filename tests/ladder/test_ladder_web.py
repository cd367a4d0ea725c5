"""The ladder's web port (``ladder run --web``; ``enginesrv.ladder.web``): a bot plays over a
WebSocket as over TCP, a page of another site cannot open that socket, and the standings,
records and live games are served."""

from __future__ import annotations

import contextlib
import functools
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import trio
from trio_websocket import open_websocket_url

import games
from enginesrv.event.play.players import PlayerSpec, parse_player
from enginesrv.ladder.accounts import players
from enginesrv.ladder.server import open_ladder, serve_ladder
from enginesrv.ladder.standings import ladder_json
from enginesrv.ladder.state import Ladder
from tests.ladder.support import first_move, ladder_run, on_games, trio_test
from tests.web.test_websocket_hostile import handshake_status

HOUSE = (parse_player("name=house1:bot:alphabeta:Depth=1"),)


@contextlib.asynccontextmanager
async def web_ladder(
    folder: Path, house: tuple[PlayerSpec, ...] = HOUSE, **changes: Any
) -> AsyncIterator[tuple[Ladder, str]]:
    """A Yoxii ladder with a web port (and the house bot house1, unless ``house`` says
    otherwise; ``changes``: the run's other settings), and the port's address (http)."""
    pages: list[str] = []
    run = ladder_run(folder, house=house, web=0, **changes)
    async with open_ladder(run) as ladder, trio.open_nursery() as nursery:
        await nursery.start(
            functools.partial(
                serve_ladder, ladder, on_ready=lambda h, p: None, on_page=pages.append
            )
        )
        try:
            yield ladder, pages[0]
        finally:
            ladder.stop.set()


async def play_as_engine(url: str, name: str, token: str, stop: trio.Event) -> None:
    """Log in over the WebSocket and answer as an engine (the first legal move by token)
    until ``stop`` is set; then close the socket."""
    game = games.load("yoxii")
    state = game.new_state()
    async with open_websocket_url(url.replace("http", "ws") + "bot") as ws:
        await ws.send_message(f"login {name} {token}")
        while not stop.is_set():
            message: str | bytes = ""
            with trio.move_on_after(0.05):
                message = await ws.get_message()
            assert isinstance(message, str)
            for line in message.splitlines():
                words = line.split()
                if words[:1] == ["ugi"]:
                    await ws.send_message("id name web-bot\nugiok")
                elif words[:1] == ["isready"]:
                    await ws.send_message("readyok")
                elif words[:1] == ["position"]:
                    state = game.new_state()
                    moves = words[words.index("moves") + 1 :] if "moves" in words else []
                    for token_ in moves:
                        state.push(state.parse_move(token_))
                elif words[:1] == ["go"]:
                    await ws.send_message(f"bestmove {first_move(state)}")


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status), bytes(answer.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


@trio_test
async def test_a_bot_plays_over_the_websocket_and_its_games_are_served(tmp_path: Path) -> None:
    """A bot logged in on ``/bot`` plays the house bot; the stored game is served at
    ``/games/yoxii/1`` as its record, ``/ladder.json`` is the ladder's standings, and an
    unknown game or number is a 404."""
    token = players(tmp_path).add("alice")
    async with web_ladder(tmp_path) as (ladder, page):
        ended, done = on_games(ladder, 1)
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_as_engine, page, "alice", token, stop)
            await done.wait()
            stop.set()
        row = ended[0].row
        assert {row.p1, row.p2} == {"alice", "house1"}
        status, body = await trio.to_thread.run_sync(get, f"{page}games/yoxii/{row.id}")
        assert status == 200
        assert f"# P1: {row.p1}\n# P2: {row.p2}\n".encode() in body
        status, body = await trio.to_thread.run_sync(get, f"{page}ladder.json")
        assert status == 200
        assert json.loads(body) == json.loads(
            json.dumps(ladder_json(ladder.boards, ladder.run.settings.tc))
        )
        for missing in ("games/yoxii/999999", "games/yinsh/1"):
            status, _ = await trio.to_thread.run_sync(get, page + missing)
            assert status == 404


@trio_test
async def test_a_page_of_another_site_cannot_open_the_bot_socket(tmp_path: Path) -> None:
    """A WebSocket handshake to ``/bot`` that names an origin (a browser's page does, even
    the ladder's own) is refused (HTTP 403) before a byte of a login is read; a program's,
    which names none, is taken."""
    async with web_ladder(tmp_path) as (ladder, page):
        for origin in (b"https://evil.example", page.rstrip("/").encode()):
            assert await handshake_status(page, origin, path="/bot") == 403
        assert await handshake_status(page, path="/bot") == 101
        assert ladder.door is not None
        assert ladder.door.accepted == 0


@trio_test
async def test_a_msgpack_login_over_the_socket_is_refused_in_msgpack(tmp_path: Path) -> None:
    """A binary message is a msgpack login: a wrong token is answered with a binary error
    frame (306), then the socket closes."""
    players(tmp_path).add("alice")
    async with web_ladder(tmp_path) as (_, page):
        login = msgpack.packb([2, "login", [{"name": "alice", "token": "x" * 43}]])
        async with open_websocket_url(page.replace("http", "ws") + "bot") as ws:
            await ws.send_message(login)
            answer = await ws.get_message()
        assert isinstance(answer, bytes)
        frame = msgpack.unpackb(answer)
        assert frame[0] == 2
        assert frame[1] == "error"
        assert frame[2][0]["code"] == 306


@trio_test
async def test_the_live_games_are_fed_to_watchers(tmp_path: Path) -> None:
    """``/events`` gives the watch feed: the event first, then each game as it begins, its
    moves, and its result."""
    token = players(tmp_path).add("alice")
    async with web_ladder(tmp_path) as (_, page):
        kinds: list[str] = []
        async with open_websocket_url(page.replace("http", "ws") + "events") as ws:
            kinds.append(json.loads(await ws.get_message())["type"])
            stop = trio.Event()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(play_as_engine, page, "alice", token, stop)
                with trio.move_on_after(10):
                    while "result" not in kinds:
                        kinds.append(json.loads(await ws.get_message())["type"])
                stop.set()
        assert kinds[0] == "event"
        assert "game" in kinds
        assert "move" in kinds
        assert "result" in kinds
        assert kinds.index("game") < kinds.index("move") < kinds.index("result")

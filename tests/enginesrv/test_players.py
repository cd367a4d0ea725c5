"""The players of matches: spec parsing, external engines over stdio (a scripted fake engine in
each of its misbehaviours) and TCP (our own server), and bots in a real worker pool."""

from __future__ import annotations

import shlex
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

import games
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.players import (
    Clocks,
    Deadlines,
    ForfeitError,
    GoRequest,
    PlayerSpec,
    PlayerSpecError,
    parse_player,
)
from enginesrv.search.pool import WorkerPool
from tests.enginesrv.peer import running_server
from tests.enginesrv.test_pool import children
from tests.trio_run import trio_test

FAKE = Path(__file__).parent / "fakes" / "fake_engine.py"
YOXII = games.load("yoxii")
LIMIT = 5.0
"""Seconds any one test may take (each is far quicker)."""


def fake(mode: str, *args: str) -> PlayerSpec:
    """The spec of the fake engine in ``mode``, written as a user would."""
    return parse_player("cmd:" + shlex.join([sys.executable, str(FAKE), mode, *args]))


def request(
    moves: tuple[str, ...] = (),
    clocks: Clocks | None = None,
    forfeit_at: float | None = None,
    *,
    game: games.Game = YOXII,
    history: bool = True,
) -> GoRequest:
    """A decision after ``moves`` from the start: given as start + moves (``history``) or as
    the position string alone."""
    state = game.new_state()
    for token in moves:
        state.push(state.parse_move(token))
    return GoRequest(
        seat=0 if state.to_move() == games.P1 else 1,
        position=state.to_string(),
        start=game.start_position if history else None,
        moves=moves if history else (),
        clocks=clocks or Clocks(),
        forfeit_at=forfeit_at,
    )


def legal(game: games.Game, moves: tuple[str, ...] = ()) -> set[str]:
    """The legal tokens after ``moves`` from the start."""
    state = game.new_state()
    for token in moves:
        state.push(state.parse_move(token))
    return {state.move_to_str(move) for move in state.legal_moves()}


# -- parse_player ---------------------------------------------------------------------------------


def test_parse_bot_with_options() -> None:
    spec = parse_player("bot:alphabeta:Depth=4, Seed = 7")
    assert spec.kind == "bot"
    assert spec.bot == "alphabeta"
    assert spec.options == (("Depth", "4"), ("Seed", "7"))
    assert spec.name == "alphabeta:Depth=4,Seed=7"
    plain = parse_player("  bot:random ")
    assert (plain.bot, plain.options, plain.name) == ("random", (), "random")


def test_parse_name_prefix() -> None:
    spec = parse_player("name=new:bot:alphabeta:Depth=4")
    assert (spec.name, spec.kind, spec.bot, spec.options) == (
        "new", "bot", "alphabeta", (("Depth", "4"),),
    )  # fmt: skip
    assert parse_player("name=srv:tcp:127.0.0.1:9").name == "srv"
    assert parse_player("name=old:cmd:./engine --old").name == "old"


def test_parse_cmd_splits_like_a_shell() -> None:
    spec = parse_player("""cmd:"/opt/my engine/run" --level 'a b' -x\\ y""")
    assert spec.kind == "cmd"
    assert spec.command == ("/opt/my engine/run", "--level", "a b", "-x y")
    assert spec.name == "run"


def test_parse_tcp_host_and_port() -> None:
    spec = parse_player("tcp:localhost:5000")
    assert (spec.kind, spec.host, spec.port) == ("tcp", "localhost", 5000)
    assert spec.name == "localhost:5000"
    assert parse_player("tcp:10.0.0.1:65535").port == 65535


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "robot:random",
        "bot:",
        "cmd:",
        "cmd:   ",
        "cmd:'unterminated",
        "bot:random:Seed",
        "bot:random:=3",
        "bot:random:Seed=1,",
        "tcp:host:0",
        "tcp:host:65536",
        "tcp:host:http",
        "tcp:host:",
        "tcp:5000",
        "tcp::5000",
        "name=:bot:random",
        "name=solo",
    ],
)
def test_parse_errors_name_the_input(text: str) -> None:
    with pytest.raises(PlayerSpecError) as info:
        parse_player(text)
    assert repr(text) in str(info.value)


# -- external engines over stdio ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["yoxii", "yohoho"])
@trio_test
async def test_a_good_engine_plays_legal_moves(name: str) -> None:
    game = games.load(name)
    player = TextEnginePlayer(fake("good"))
    with trio.fail_after(LIMIT):
        await player.start(game)
        try:
            assert player.alive
            assert player.hello.options == {"game", "seed"}
            await player.new_game("g1", 42)
            reply = await player.go(request(clocks=Clocks(depth=1), game=game))
            assert reply.token in legal(game)
            assert reply.elapsed > 0
            assert reply.depth == 1
            assert reply.nodes == len(legal(game))
            assert reply.score is not None
            assert (reply.score.kind, reply.score.value) == ("cp", 0)
            # the history is passed on: the reply is legal after the first move
            first = min(legal(game))
            reply = await player.go(request((first,), game=game))
            assert reply.token in legal(game, (first,))
            # and so is a bare position
            reply = await player.go(request((first,), game=game, history=False))
            assert reply.token in legal(game, (first,))
        finally:
            await player.close()
    assert not player.alive


@trio_test
async def test_a_plain_ugi_engine_is_enough() -> None:
    player = TextEnginePlayer(fake("ugi"))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            assert player.hello.options == set()
            assert player.hello.games == set()
            await player.new_game("g1", 1)
            for moves in [(), ("c3",)]:
                reply = await player.go(request(moves=moves, clocks=Clocks(movetime=100)))
                assert reply.token in legal(YOXII, moves)
                assert reply.elapsed > 0
        finally:
            await player.close()


@trio_test
async def test_an_engine_of_other_games_is_a_spec_error() -> None:
    before = children()
    player = TextEnginePlayer(fake("good", "yinsh,yohoho"))
    with trio.fail_after(LIMIT):
        with pytest.raises(PlayerSpecError, match="plays yinsh, yohoho, not yoxii"):
            await player.start(YOXII)
    assert player.process is None
    assert children() - before == set()


@trio_test
async def test_a_crash_on_the_second_go_is_a_crash() -> None:
    player = TextEnginePlayer(fake("crash", "2"))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        process = player.process
        try:
            await player.new_game("g1", 1)
            assert (await player.go(request())).token in legal(YOXII)
            with pytest.raises(ForfeitError) as info:
                await player.go(request(("c3",)))
            assert info.value.reason == "crash"
            assert "exited" in info.value.detail
            assert not player.alive
        finally:
            await player.close()
    assert process is not None
    assert process.returncode == 3


@trio_test
async def test_a_hang_with_a_clock_is_a_time_forfeit() -> None:
    player = TextEnginePlayer(fake("hang"))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        process = player.process
        try:
            await player.new_game("g1", 1)
            asked = trio.current_time()
            with pytest.raises(ForfeitError) as info:
                await player.go(
                    request(clocks=Clocks(p1time=250, p2time=250), forfeit_at=asked + 0.3)
                )
            assert info.value.reason == "time-forfeit"
            assert 0.3 <= trio.current_time() - asked < 1.0
            assert not player.alive
        finally:
            await player.close()
    assert process is not None
    assert process.returncode is not None  # killed: it never read the quit


@trio_test
async def test_a_hang_without_a_clock_is_a_stall() -> None:
    player = TextEnginePlayer(fake("hang"), Deadlines(ping_every=0.2, ready=0.3))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            await player.new_game("g1", 1)
            asked = trio.current_time()
            with pytest.raises(ForfeitError) as info:
                await player.go(request(clocks=Clocks(depth=30)))
            assert info.value.reason == "stall"
            assert "readyok" in info.value.detail
            assert 0.5 <= trio.current_time() - asked < 1.5
        finally:
            await player.close()


@trio_test
async def test_a_silent_engine_stalls_at_start() -> None:
    player = TextEnginePlayer(fake("silent"), Deadlines(startup=0.5))
    with trio.fail_after(LIMIT):
        try:
            with pytest.raises(ForfeitError) as info:
                await player.start(YOXII)
            assert info.value.reason == "stall"
            assert "ugiok" in info.value.detail
            assert not player.alive
        finally:
            await player.close()


@trio_test
async def test_no_readyok_after_a_new_game_is_a_stall() -> None:
    player = TextEnginePlayer(fake("noready"), Deadlines(ready=0.3))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)  # the isready of the handshake is answered
        try:
            with pytest.raises(ForfeitError) as info:
                await player.new_game("g1", 1)
            assert info.value.reason == "stall"
            assert "uginewgame" in info.value.detail
        finally:
            await player.close()


@trio_test
async def test_a_late_move_still_arrives_with_its_elapsed_time() -> None:
    player = TextEnginePlayer(fake("late", "400"))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            await player.new_game("g1", 1)
            movetime = 100
            reply = await player.go(request(clocks=Clocks(movetime=movetime)))
            assert reply.token in legal(YOXII)
            # past the move time (the fake sleeps 400 ms): the arbiter judges, not the player
            assert reply.elapsed >= 0.4 > movetime / 1000
        finally:
            await player.close()


@pytest.mark.parametrize(
    ("args", "error"),
    [((), games.InvalidMoveError), (("legal-but-wrong",), games.IllegalMoveError)],
)
@trio_test
async def test_an_illegal_move_is_returned_as_is(
    args: tuple[str, ...], error: type[games.GameError]
) -> None:
    player = TextEnginePlayer(fake("illegal", *args))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            await player.new_game("g1", 1)
            reply = await player.go(request(clocks=Clocks(depth=1)))
        finally:
            await player.close()
    assert reply.token is not None
    assert reply.token not in legal(YOXII)
    with pytest.raises(error):
        YOXII.new_state().parse_move(reply.token)


@pytest.mark.parametrize(
    "command",
    [
        ["/nonexistent/engine-that-is-not-there"],
        [sys.executable, "-c", "pass"],  # starts, then exits before its ugiok
    ],
)
@trio_test
async def test_an_engine_that_does_not_run_is_a_crash(command: list[str]) -> None:
    player = TextEnginePlayer(parse_player("cmd:" + shlex.join(command)))
    with trio.fail_after(LIMIT):
        try:
            with pytest.raises(ForfeitError) as info:
                await player.start(YOXII)
            assert info.value.reason == "crash"
            assert not player.alive
        finally:
            await player.close()


@trio_test
async def test_close_leaves_no_process_behind() -> None:
    before = children()
    players = [TextEnginePlayer(fake(mode)) for mode in ("good", "ugi", "hang")]
    with trio.fail_after(LIMIT):
        for player in players:
            await player.start(YOXII)
            await player.new_game("g1", 1)
        assert len(children() - before) == 3
        with trio.move_on_after(0.2):  # the hanging one is left searching
            await players[2].go(request())
        processes = [player.process for player in players]
        for player in players:
            await player.close()
    assert all(p is not None and p.returncode is not None for p in processes)
    assert children() - before == set()


# -- a server over TCP ----------------------------------------------------------------------------


@trio_test
async def test_a_server_over_tcp_plays_legal_moves() -> None:
    with trio.fail_after(LIMIT):
        async with running_server(game="yoxii", bot="random") as (_, port):
            player = TextEnginePlayer(parse_player(f"tcp:127.0.0.1:{port}"))
            await player.start(YOXII)
            try:
                assert "yoxii" in player.hello.games
                assert "game" in player.hello.options
                await player.new_game("g1", 3)
                for moves in [(), ("c3",)]:
                    reply = await player.go(request(moves=moves, clocks=Clocks(depth=1)))
                    assert reply.token in legal(YOXII, moves)
                    assert reply.elapsed > 0
            finally:
                await player.close()


def test_the_options_prefix_reaches_every_kind_of_player() -> None:
    spec = parse_player("name=srv:options=Bot=alphabeta,Hash=8:tcp:127.0.0.1:7777")
    assert (spec.name, spec.options) == ("srv", (("Bot", "alphabeta"), ("Hash", "8")))
    assert parse_player("options=Hash=8:cmd:engine --fast").options == (("Hash", "8"),)
    bot = parse_player("options=Depth=2:bot:alphabeta:Hash=8")
    assert bot.options == (("Hash", "8"), ("Depth", "2"))
    for bad in ("options=:bot:random", "options=Hash:bot:random", "options=Hash=1"):
        with pytest.raises(PlayerSpecError, match="options"):
            parse_player(bad)


@trio_test
async def test_options_are_set_on_a_server_before_the_game() -> None:
    with trio.fail_after(LIMIT):
        async with running_server(game="yoxii", bot="random") as (_, port):
            player = TextEnginePlayer(
                parse_player(f"options=Bot=alphabeta,Depth=2:tcp:127.0.0.1:{port}")
            )
            await player.start(YOXII)
            try:
                await player.new_game("g1", 3)
                reply = await player.go(request(clocks=Clocks(depth=5)))
                assert reply.token in legal(YOXII, ())
                assert reply.depth == 2  # alphabeta, capped by its Depth option; random says 0
            finally:
                await player.close()


@trio_test
async def test_a_closed_port_is_a_disconnect() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, and nobody listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    player = TextEnginePlayer(parse_player(f"tcp:127.0.0.1:{port}"))
    with trio.fail_after(LIMIT):
        with pytest.raises(ForfeitError) as info:
            await player.start(YOXII)
        await player.close()
    assert info.value.reason == "disconnect"
    assert str(port) in info.value.detail


# -- bots in a real worker pool -------------------------------------------------------------------


@asynccontextmanager
async def one_worker() -> AsyncIterator[WorkerPool]:
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 1)
        await pool.start()
        try:
            yield pool
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


@trio_test
async def test_a_bot_in_the_pool_plays_legal_and_seeded_moves() -> None:
    with trio.fail_after(LIMIT):
        async with one_worker() as pool:
            player = BotPlayer(parse_player("bot:random"), pool)
            await player.start(YOXII)
            assert player.alive
            tokens = []
            for seed in (5, 5):
                await player.new_game("g1", seed)
                reply = await player.go(request(clocks=Clocks(depth=1)))
                assert reply.token in legal(YOXII)
                assert reply.elapsed > 0
                tokens.append(reply.token)
            assert tokens[0] == tokens[1]  # same seed, same position: the same move
            reply = await player.go(request(("c3",), clocks=Clocks(depth=1)))
            assert reply.token in legal(YOXII, ("c3",))
            await player.close()
            assert not player.alive


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("bot:nosuchbot", "unknown bot 'nosuchbot'"),
        ("bot:random:Seed=abc", "not a whole number"),
        ("bot:random:Depth=3", "no option 'Depth'"),
    ],
)
@trio_test
async def test_a_bad_bot_spec_fails_at_start(text: str, why: str) -> None:
    with trio.fail_after(LIMIT):
        async with one_worker() as pool:
            player = BotPlayer(parse_player(text), pool)
            with pytest.raises(PlayerSpecError) as info:
                await player.start(YOXII)
    assert repr(text) in str(info.value)
    assert why in str(info.value)
    assert not player.alive


@trio_test
async def test_a_bound_is_not_taken_for_a_score() -> None:
    """``info depth 7 score cp 35 lowerbound nodes 1000``: the reply has that line's depth
    and nodes, and as its score (which resign and draw adjudication read) the last exact one,
    not the bound."""
    player = TextEnginePlayer(fake("bound"))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        try:
            await player.new_game("g1", 1)
            reply = await player.go(request(clocks=Clocks(depth=7)))
            assert reply.token in legal(YOXII)
            assert (reply.depth, reply.nodes) == (7, 1000)
            assert reply.score is not None
            assert (reply.score.kind, reply.score.value) == ("cp", -20)
        finally:
            await player.close()

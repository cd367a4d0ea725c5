"""The ladder's door (``enginesrv.ladder.door``) as a hostile bot meets it, over real TCP on
127.0.0.1 to a ladder served in this process: every refused login is the one fatal error
``306 login-refused`` in one line, then the end of the connection, in words that never quote
the token nor say which part was wrong; a malformed login is the protocol's error; an address
that failed five times is refused before its token is looked at; a player holding its links
is refused another. A good login is greeted as an engine (``ugi``) and plays."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
import trio

import games
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import parse_player
from enginesrv.event.play.records import parse_record
from enginesrv.ladder import door
from enginesrv.ladder.accounts import players
from enginesrv.ladder.state import Ladder
from enginesrv.tokens import Grant
from enginesrv.tries import Tries
from protocol.login import encode_login
from tests.ladder.support import (
    BOUND,
    FakeBot,
    Lines,
    answer_to,
    ladder_run,
    mock_trio_test,
    on_games,
    read_to_end,
    serving,
    trio_test,
)

WRONG = "W" * 43
"""A token of the right form that is nobody's."""
NOT_ACCEPTED = b"error 306 login-refused the name or the token is not accepted\n"
WAIT_12_S = b"error 306 login-refused too many failed logins from 127.0.0.1: try again in 12 s\n"


def login(name: str, token: str) -> bytes:
    return encode_login(name, token, "text")


def counted_checks(
    ladder: Ladder, monkeypatch: pytest.MonkeyPatch, gate: threading.Event | None = None
) -> list[str]:
    """The names the door checks a token of, from now on (the check itself still runs, once
    ``gate`` is set when there is one)."""
    assert ladder.door is not None
    tokens = ladder.door.tokens
    real = tokens.grant
    names: list[str] = []

    def grant(name: str, token: str) -> Grant | None:
        names.append(name)
        if gate is not None:
            assert gate.wait(BOUND)
        return real(name, token)

    monkeypatch.setattr(tokens, "grant", grant)
    return names


def frozen_tries(ladder: Ladder) -> list[float]:
    """Give the door a ``Tries`` on a clock the test moves (the list's one item)."""
    now = [1000.0]
    assert ladder.door is not None
    ladder.door.tries = Tries(clock=lambda: now[0])
    return now


async def until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds (the test's bound fails it otherwise)."""
    while not condition():
        await trio.sleep(0.005)


@trio_test
async def test_a_wrong_token_and_an_unknown_name_get_the_same_refusal(tmp_path: Path) -> None:
    """A wrong token for alice, alice's token under an unknown name, and her token with one
    character changed: the same one line each, then the end of the connection; no token in
    it; nobody joins."""
    token = players(tmp_path).add("alice")
    changed = token[:-1] + ("A" if token[-1] != "A" else "B")
    async with serving(ladder_run(tmp_path)) as ladder:
        port = ladder.address[1]
        for sent in (login("alice", WRONG), login("bob", token), login("alice", changed)):
            answer = await answer_to(port, sent)
            assert answer == NOT_ACCEPTED
            assert token.encode() not in answer
        assert ladder.door is not None
        assert (ladder.door.refused, ladder.door.accepted) == (3, 0)
        assert ladder.lobby.counts() == {}


@trio_test
async def test_a_refused_msgpack_login_is_refused_in_msgpack(tmp_path: Path) -> None:
    """A login in msgpack with a wrong token gets the same refusal as one frame, then the
    end of the connection."""
    players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        answer = await answer_to(ladder.address[1], encode_login("alice", WRONG, "msgpack"))
    message = "the name or the token is not accepted"
    refusal = {"code": 306, "name": "login-refused", "message": message, "data": None}
    assert msgpack.unpackb(answer) == [2, "error", [refusal]]


@trio_test
async def test_a_revoked_token_is_refused_at_once(tmp_path: Path) -> None:
    """Alice's token works; once she is revoked (the ladder still running) it gets the
    refusal a wrong token gets."""
    accounts = players(tmp_path)
    token = accounts.add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        port = ladder.address[1]
        bot = FakeBot("alice", token)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.run, port)
            await bot.first_seen.wait()
            nursery.cancel_scope.cancel()
        assert bot.first_line == "ugi"
        accounts.revoke("alice")
        assert await answer_to(port, login("alice", token)) == NOT_ACCEPTED


@pytest.mark.parametrize(
    ("sent", "answer"),
    [
        (b"hello there\n", b"error 103 bad-frame the first line must be: login NAME TOKEN\n"),
        (b"login alice\n", b"error 103 bad-frame the first line must be: login NAME TOKEN\n"),
        (
            b"login alice S3cretS3cret extra\n",
            b"error 103 bad-frame the first line must be: login NAME TOKEN\n",
        ),
        (
            b"login 9alice S3cretS3cret\n",
            b"error 101 bad-arguments login: a name is a letter, then up to 31 of "
            b"A-Z a-z 0-9 _ . -\n",
        ),
        (
            b"login alice S3cret/S3cret\n",
            b"error 101 bad-arguments login: a token is 1 to 128 of A-Z a-z 0-9 _ -\n",
        ),
        (
            b"\x16\x03\x01\x02\x00S3cretS3cret",
            b"error 103 bad-frame the first byte is neither text nor msgpack\n",
        ),
        (
            b"login alice " + b"S3cret" * 100,
            b"error 102 frame-too-large no login within 512 bytes\n",
        ),
    ],
)
@trio_test
async def test_a_malformed_login_gets_the_protocols_error(
    tmp_path: Path, sent: bytes, answer: bytes
) -> None:
    """Not a login, or a name or token of the wrong form: the protocol's fatal error in one
    text line (quoting nothing sent), then the end of the connection; no token is checked."""
    async with serving(ladder_run(tmp_path)) as ladder:
        got = await answer_to(ladder.address[1], sent)
        assert ladder.door is not None
        assert ladder.door.refused == 1
    assert got == answer
    assert b"S3cret" not in got


@mock_trio_test
async def test_no_login_within_10_s_is_refused(tmp_path: Path) -> None:
    """A connection that sends nothing, or half a login, is refused once ``LOGIN_TIMEOUT``
    (10 s) has passed, not before (on a mock clock)."""
    assert door.LOGIN_TIMEOUT == 10.0
    async with serving(ladder_run(tmp_path)) as ladder:
        for sent in (b"", b"login alice WWW"):
            began = trio.current_time()
            got = await answer_to(ladder.address[1], sent)
            assert got == b"error 306 login-refused no login within 10 s\n"
            assert trio.current_time() - began >= 10.0


@trio_test
async def test_the_sixth_try_of_an_address_is_refused_before_its_token_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five wrong tokens from 127.0.0.1 are each checked and refused; the sixth try, and a
    seventh with alice's right token, are refused saying to wait 12 s, their tokens not
    checked; 12 s later (on the door's clock) the right token is accepted."""
    token = players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        port = ladder.address[1]
        now = frozen_tries(ladder)
        checked = counted_checks(ladder, monkeypatch)
        for _ in range(5):
            assert await answer_to(port, login("alice", WRONG)) == NOT_ACCEPTED
        assert checked == ["alice"] * 5
        for sent in (login("alice", WRONG), login("alice", token)):
            answer = await answer_to(port, sent)
            assert answer == WAIT_12_S
            assert token.encode() not in answer
        assert checked == ["alice"] * 5
        now[0] += 12.0
        bot = FakeBot("alice", token)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.run, port)
            await bot.first_seen.wait()
            nursery.cancel_scope.cancel()
        assert bot.first_line == "ugi"
        assert checked == ["alice"] * 6


@trio_test
async def test_tries_at_once_from_one_address_get_no_more_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven wrong tokens sent at once from one address (the first check held until all
    seven are sent): no more than five are checked (the failures allowed), the other two
    refused saying to wait, as if they had come one by one."""
    players(tmp_path).add("alice")
    gate = threading.Event()
    async with serving(ladder_run(tmp_path)) as ladder:
        port = ladder.address[1]
        frozen_tries(ladder)
        checked = counted_checks(ladder, monkeypatch, gate)
        sent: list[int] = []
        answers: list[bytes] = []

        async def try_once() -> None:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(login("alice", WRONG))
                sent.append(1)
                answers.append(await read_to_end(stream))

        try:
            async with trio.open_nursery() as nursery:
                for _ in range(7):
                    nursery.start_soon(try_once)
                await until(lambda: len(sent) == 7)
                await trio.sleep(0.1)  # the door has read them: loopback, a few lines
                gate.set()
        finally:
            gate.set()  # the checks in their threads go on, whatever happened
    assert len(checked) == 5
    assert sorted(answers) == [NOT_ACCEPTED] * 5 + [WAIT_12_S] * 2


@trio_test
async def test_a_good_login_is_greeted_and_plays_a_stored_game(tmp_path: Path) -> None:
    """Alice logs in and is sent ``ugi`` first; as a plain UGI engine she plays the house bot
    a whole game of the ladder's first game, which is stored and rated: a row of the two, its
    record replaying to the end the row states, every move hers legal."""
    token = players(tmp_path).add("alice")
    house = (parse_player("name=house1:bot:alphabeta:Depth=1"),)
    async with serving(ladder_run(tmp_path, house)) as ladder:
        ended, done = on_games(ladder, 1)
        bot = FakeBot("alice", token)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.run, ladder.address[1])
            await done.wait()
            nursery.cancel_scope.cancel()
        section = ladder.sections["yoxii"]
        assert section.rows == [ended[0].row]
        assert ladder.boards["yoxii"].games == 1
    assert bot.first_line == "ugi"
    assert bot.commands[:3] == ["ugi", "isready", "uginewgame"]
    row, result = ended[0].row, ended[0].result
    assert (row.id, row.round, row.first, row.second) == (1, 1, "alice", "house1")
    assert (row.p1, row.p2) == ("alice", "house1")  # the first name in order is p1 at first
    assert result.outcome.termination is Termination.RULES
    assert result.failed == ()
    record = parse_record((tmp_path / "yoxii" / "season-1" / "games/game-00001.txt").read_text())
    assert (record.headers["P1"], record.headers["P2"]) == ("alice", "house1")
    state = games.load("yoxii").new_state()
    hers = 0  # the plies alice decided (a yoxii turn is two: the totem, then a piece)
    for move in record.moves:
        hers += state.to_move() == 0
        state.push(state.parse_move(move.token))
    assert state.is_terminal()
    assert len(record.moves) == row.plies > 0
    games_begun = [n for n, line in enumerate(bot.commands) if line == "uginewgame"]
    first_game = bot.commands[: [*games_begun, len(bot.commands)][1]]  # the next may have begun
    assert sum(line.startswith("go ") for line in first_game) == hers
    outcome = state.outcome()
    assert outcome is not None
    assert (outcome.winner_seat, outcome.reason) == (result.outcome.winner, row.reason)


@trio_test
async def test_an_engine_of_none_of_the_ladders_games_is_told_so(tmp_path: Path) -> None:
    """An engine whose handshake names only yohoho, on a yoxii ladder: after its ``ugiok``
    it is sent the refusal saying it plays none of the ladder's games (the words the
    ladder's client stops on), and the connection ends; it never joins."""
    token = players(tmp_path).add("alice")
    yohoho = games.load("yohoho")
    p1, p2 = (colour.lower() for colour in yohoho.colours)
    hello = f"id name fake\ngame yohoho colours {p1} {p2} start {yohoho.start_position}\nugiok\n"
    async with serving(ladder_run(tmp_path)) as ladder:
        stream = await trio.open_tcp_stream("127.0.0.1", ladder.address[1])
        async with stream:
            await stream.send_all(login("alice", token))
            lines = Lines(stream)
            assert await lines.line() == "ugi"
            await stream.send_all(hello.encode())
            rest = lines.buffer + await read_to_end(stream)
        assert ladder.lobby.counts() == {}
    refusal = b"error 306 login-refused the engine plays none of the ladder's games (yoxii)\n"
    assert refusal in rest, rest
    assert token.encode() not in rest


@trio_test
async def test_an_unreadable_token_file_refuses_in_the_logins_framing(tmp_path: Path) -> None:
    """While the token file is damaged, every login is refused saying the ladder cannot read
    its players (nothing of the file quoted): a text login with a text line, a msgpack login
    with a msgpack frame, as every other refusal of a msgpack login is."""
    token = players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        with (tmp_path / "tokens").open("a") as file:
            file.write("junk S3cretLine\n")
        port = ladder.address[1]
        text = await answer_to(port, login("alice", token))
        framed = await answer_to(port, encode_login("alice", token, "msgpack"))
    assert text == b"error 306 login-refused the ladder cannot read its players now\n"
    message = "the ladder cannot read its players now"
    refusal = {"code": 306, "name": "login-refused", "message": message, "data": None}
    assert framed == msgpack.packb([2, "error", [refusal]])


@trio_test
async def test_a_player_holding_its_links_is_refused_another(tmp_path: Path) -> None:
    """With two links a player, alice's third connection is refused naming the limit while
    she holds two; once one of hers has left, she may connect again."""
    token = players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path, links_per_player=2)) as ladder:
        port = ladder.address[1]
        first, second, third = (FakeBot("alice", token) for _ in range(3))
        async with trio.open_nursery() as nursery:
            first_scope = trio.CancelScope()
            nursery.start_soon(run_in, first_scope, first, port)
            nursery.start_soon(second.run, port)
            await until(lambda: ladder.lobby.counts() == {"alice": 2})
            answer = await answer_to(port, login("alice", token))
            assert answer == b"error 306 login-refused alice holds its limit of 2 connections\n"
            assert token.encode() not in answer
            first_scope.cancel()
            await until(lambda: ladder.lobby.counts() == {"alice": 1})
            nursery.start_soon(third.run, port)
            await until(lambda: ladder.lobby.counts() == {"alice": 2})
            nursery.cancel_scope.cancel()
    assert [bot.first_line for bot in (first, second, third)] == ["ugi"] * 3


async def run_in(scope: trio.CancelScope, bot: FakeBot, port: int) -> None:
    """``bot.run`` under ``scope`` (cancelled to make it leave)."""
    with scope:
        await bot.run(port)


@trio_test
async def test_links_logging_in_at_once_keep_to_the_limit(tmp_path: Path) -> None:
    """Three connections of alice (two links a player) logging in at once, each answering
    the greeting only once all three have heard from the ladder: no more than two ever join;
    the third is closed."""
    token = players(tmp_path).add("alice")
    bots: list[FakeBot] = []

    async def all_heard() -> None:
        for bot in bots:
            await bot.first_seen.wait()

    bots.extend(FakeBot("alice", token, hold=all_heard) for _ in range(3))
    ended = [trio.Event() for _ in bots]

    async def run(index: int, port: int) -> None:
        await bots[index].run(port)
        ended[index].set()

    async with (
        serving(ladder_run(tmp_path, links_per_player=2)) as ladder,
        trio.open_nursery() as nursery,
    ):
        for index in range(3):
            nursery.start_soon(run, index, ladder.address[1])
        await all_heard()

        def settled() -> bool:  # each connection joined, or closed
            joined = ladder.lobby.counts().get("alice", 0)
            return joined + sum(event.is_set() for event in ended) == 3

        await until(settled)
        held = ladder.lobby.counts()
        nursery.cancel_scope.cancel()
    assert held == {"alice": 2}

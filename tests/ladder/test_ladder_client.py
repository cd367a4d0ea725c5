"""The ladder's client (``enginesrv.ladder.client.run_client``) against a ladder served in this
process: a refusal that cannot change stops it before any engine is started; one that may
change (a player at its limit) is said and tried again later; a local engine it starts once
logged in plays the ladder's games, which ``enginesrv results DIR`` then lists."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from enginesrv.cli import main
from enginesrv.event.play.players import parse_player
from enginesrv.ladder.accounts import players
from enginesrv.ladder.client import ClientSettings, LadderClientError, run_client
from tests.ladder.support import FakeBot, ladder_run, on_games, serving, trio_test

FAKE_ENGINE = Path(__file__).parent.parent / "enginesrv" / "fakes" / "fake_engine.py"
WRONG = "W" * 43


@trio_test
async def test_a_wrong_token_stops_the_client_before_any_engine(tmp_path: Path) -> None:
    """The ladder refuses alice's wrong token: the client stops with the refusal in one
    line; the engine's command was never run."""
    players(tmp_path).add("alice")
    started = tmp_path / "started"
    async with serving(ladder_run(tmp_path)) as ladder:
        settings = ClientSettings(
            "127.0.0.1", ladder.address[1], "alice", WRONG, ("touch", str(started))
        )
        caught: list[BaseException] = []
        try:
            await run_client(settings, trio.Event())
        except* LadderClientError as group:
            caught.extend(group.exceptions)
    assert [str(exc) for exc in caught] == [
        "the ladder refused the login: error 306 login-refused the name or the token is not "
        "accepted"
    ]
    assert not started.exists()


@trio_test
async def test_a_player_at_its_limit_is_told_and_tries_again(tmp_path: Path) -> None:
    """With one link a player, held by alice's bot, the client's login is refused; it says
    so, and that it will connect again, and goes on until stopped."""
    token = players(tmp_path).add("alice")
    said: list[str] = []
    told = trio.Event()

    def say(text: str) -> None:
        said.append(text)
        told.set()

    async with serving(ladder_run(tmp_path, links_per_player=1)) as ladder:
        port = ladder.address[1]
        holder = FakeBot("alice", token)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(holder.run, port)
            while ladder.lobby.counts() != {"alice": 1}:
                await trio.sleep(0.005)
            stop = trio.Event()
            settings = ClientSettings("127.0.0.1", port, "alice", token, ("true",), say=say)
            nursery.start_soon(run_client, settings, stop)
            await told.wait()
            stop.set()
            nursery.cancel_scope.cancel()
    (line,) = said
    refused = (
        "the ladder refused the login: error 306 login-refused alice holds its limit of 1 "
        "connections; connecting again in "
    )
    assert line.startswith(refused)
    assert line.endswith(" s")
    assert 0.75 <= float(line.removeprefix(refused).removesuffix(" s")) <= 1.25


@trio_test
async def test_a_local_engine_plays_through_the_client(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The client logs alice in and starts a plain UGI engine (the tests' fake) once the
    ladder greets it; the engine plays the house bot a game that is stored with alice's name,
    and ``enginesrv results DIR`` lists her."""
    token = players(tmp_path).add("alice")
    house = (parse_player("name=house1:bot:alphabeta:Depth=1"),)
    said: list[str] = []
    async with serving(ladder_run(tmp_path, house)) as ladder:
        ended, done = on_games(ladder, 1)
        stop = trio.Event()
        command = (sys.executable, str(FAKE_ENGINE), "ugi")
        settings = ClientSettings(
            "127.0.0.1", ladder.address[1], "alice", token, command, quiet_engine=True,
            say=said.append,
        )  # fmt: skip
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_client, settings, stop)
            await done.wait()
            stop.set()
    assert said[0] == "logged in"
    row = ended[0].row
    assert (row.first, row.second, row.id) == ("alice", "house1", 1)
    assert ended[0].result.failed == ()
    capsys.readouterr()  # the ladder's logs
    code = main(["results", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(f"Ladder: game yoxii; {len(ended)} games; tc=2+0.05")
    points = [game.row.first_points for game in ended]  # alice is first by name
    form = "".join({1.0: "W", 0.5: "D", 0.0: "L"}[p] for p in points)
    score = f"{100 * sum(points) / len(points):.1f}%"
    leaderboard = out.split("\nplayer  elo  games   score  form\n", 1)[1]
    lines = [line.split() for line in leaderboard.splitlines()]
    assert ["alice", "-", str(len(ended)), score, form] in lines

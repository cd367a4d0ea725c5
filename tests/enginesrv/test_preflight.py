"""Before its first game a local event starts each of its external engines once: one that cannot
be started or reached (a missing or non-executable command, a refused port, no ``ugiok`` in
time) stops the event with one line naming the player and the reason, exit status 2, and leaves
no results behind; a resumed event whose engine has gone stops so too, its stored games left as
they were. The engines are checked at once: the check costs one start, not one per player."""

from __future__ import annotations

import shlex
import socket
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

import games
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.players import Deadlines, parse_player
from enginesrv.event.play.preflight import check_players
from enginesrv.event.prepared import prepare
from enginesrv.event.tournament import run_event
from tests.enginesrv.test_store import digest, listing, one_line_error, run

FAKE = Path(__file__).parent / "fakes" / "fake_engine.py"


def fake(mode: str) -> str:
    """The command line of the fake engine in ``mode``."""
    return shlex.join([sys.executable, str(FAKE), mode])


def _missing(tmp_path: Path) -> tuple[str, str]:
    return f"cmd:{tmp_path / 'missing' / 'engine'}", "No such file or directory"


def _not_executable(tmp_path: Path) -> tuple[str, str]:
    engine = tmp_path / "engine"
    engine.write_text("#!/bin/sh\n")
    engine.chmod(0o644)
    return f"name=noexec:cmd:{engine}", "Permission denied"


def _silent(tmp_path: Path) -> tuple[str, str]:
    del tmp_path
    return f"cmd:{fake('silent')}", "no ugiok within 0.3 s"


@pytest.mark.parametrize("case", [_missing, _not_executable, _silent])
def test_an_engine_that_cannot_start_stops_a_new_event_before_its_first_game(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: Callable[[Path], tuple[str, str]],
) -> None:
    player, reason = case(tmp_path)
    out = tmp_path / "event"
    status, stdout, err = run(
        capsys, "match", "yoxii", "bot:random", player, "--depth", "1", "--games", "2",
        "--startup-timeout", "0.3", "--out", str(out),
    )  # fmt: skip
    assert status == 2, err
    assert stdout == ""  # no game, no table
    one_line_error(err, f"enginesrv match: error: player {player!r} cannot play: ", reason)
    assert not out.exists()  # no store, no record, no log: the corrected command runs


def test_with_a_watching_page_the_error_is_one_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("hypercorn")  # the web extra
    player, reason = _missing(tmp_path)
    status, stdout, err = run(
        capsys, "match", "yoxii", "bot:random", player, "--depth", "1", "--web", "0"
    )
    assert status == 2, err
    assert stdout.startswith("web http://127.0.0.1:"), stdout  # the page was served first
    one_line_error(err, f"enginesrv match: error: player {player!r} cannot play: ", reason)


def test_a_refused_port_stops_a_tournament_before_its_first_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # bound but not listening: a connection to it is refused, and no other test can take it
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        player = f"tcp:127.0.0.1:{taken.getsockname()[1]}"
        out = tmp_path / "event"
        out.mkdir()  # a directory the user made is kept, empty
        status, stdout, err = run(
            capsys, "tournament", "yoxii", "bot:random", f"cmd:{fake('good')}", player,
            "--depth", "1", "--out", str(out),
        )  # fmt: skip
    assert status == 2, err
    assert stdout == ""
    one_line_error(err, f"enginesrv tournament: error: player {player!r} cannot play: ", "connect")
    assert listing(out) == []


def test_a_resumed_event_whose_engine_has_gone_stops_and_keeps_its_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = tmp_path / "engine"
    engine.write_text(f"#!/bin/sh\nexec {fake('good')}\n")
    engine.chmod(0o755)
    out = tmp_path / "event"
    event = prepare(
        EventConfig("yoxii", (f"name=gone:cmd:{engine}", f"name=kept:cmd:{fake('good')}"),
                    depth=1, games=4, max_plies=4),
        out, resume=False,
    )  # fmt: skip

    async def first_game_only() -> None:
        with trio.CancelScope() as scope:  # stopped after its first game, as by Ctrl-C
            await run_event(event, out, on_game=lambda _: scope.cancel())

    trio.run(first_game_only)
    db = sqlite3.connect(out / "results.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM games").fetchone() == (1,)
    finally:
        db.close()
    engine.unlink()
    before, files = digest(out / "results.sqlite"), listing(out)
    status, stdout, err = run(capsys, "match", "--resume", "--out", str(out))
    assert status == 2, err
    assert stdout == ""
    one_line_error(
        err, f"enginesrv match: error: player 'name=gone:cmd:{engine}' cannot play: ",
        "No such file or directory",
    )  # fmt: skip
    assert digest(out / "results.sqlite") == before
    assert listing(out) == files


def test_the_engines_are_checked_at_once_and_the_first_failure_is_named() -> None:
    specs = [parse_player(f"name=mute{i}:cmd:{fake('silent')}") for i in range(4)]
    specs.insert(0, parse_player("bot:random"))  # a bot is not started here

    async def check() -> float:
        started = trio.current_time()
        with pytest.raises(EventError) as caught:
            await check_players(specs, games.load("yoxii"), Deadlines(startup=0.5))
        assert str(caught.value).startswith(f"player {specs[1].text!r} cannot play: ")
        assert "\n" not in str(caught.value)
        return trio.current_time() - started

    # one after the other the four would take at least 2 s
    assert trio.run(check) < 1.75

"""``--debug``: a protocol trace of every external engine, per game, time-stamped, kept private
while its game runs and published under DIR/logs once it is over; each engine's trace holds
only its own lines (Yin Yang laws stay with their owner); bounded; kept by ``--resume``."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import trio

import games
from enginesrv.client import AsyncEngine
from enginesrv.event.config import EventConfig
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.players import Clocks
from enginesrv.event.play.records import parse_record
from enginesrv.event.play.trace import ProtocolTrace, trace_file_name
from enginesrv.event.prepared import prepare
from enginesrv.event.results.store import ResultsDB
from enginesrv.event.tournament import Finished, run_event
from tests.enginesrv.test_players import FAKE, YOXII, fake, request
from tests.enginesrv.test_tournament import ROOT, cli
from tests.enginesrv.test_tournament import stored as stored_rows
from tests.trio_run import trio_test

LIMIT = 10.0
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
LINE = re.compile(rf"{STAMP} ([<>#]) (.*)")
ENGINE = f"{sys.executable} -m enginesrv.cli engine"
FAKE_CMD = f"{sys.executable} {FAKE}"


def entries(path: Path) -> list[tuple[str, str]]:
    """The (direction, line) entries of a trace file, after its header; every line checked
    to carry a time stamp."""
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    assert header.startswith("# protocol trace of game ")
    out = []
    for line in lines:
        found = LINE.fullmatch(line)
        assert found, line
        out.append((found[1], found[2]))
    return out


def moves_by_seat(game: games.Game, record: Path) -> list[list[str]]:
    """The tokens each seat played in a stored game."""
    parsed = parse_record(record.read_text(encoding="utf-8"))
    state = game.new_state()
    played: list[list[str]] = [[], []]
    for move in parsed.moves:
        played[state.to_move()].append(move.token)
        state.push(state.parse_move(move.token))
    return played


def test_a_match_with_debug_writes_a_trace_per_game_and_engine(tmp_path: Path) -> None:
    out = tmp_path / "event"
    proc = cli(
        "match", "yoxii", f"name=fake:cmd:{FAKE_CMD} good", "bot:random", "--depth", "1",
        "--games", "2", "--max-plies", "8", "--debug", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    logs = out / "logs"
    # the engine was p1 in game 1 and p2 in game 2; the bot has no trace
    assert sorted(p.name for p in logs.glob("*.trace")) == [
        "game-00001-p1-fake.trace",
        "game-00002-p2-fake.trace",
    ]
    first = entries(logs / "game-00001-p1-fake.trace")
    second = entries(logs / "game-00002-p2-fake.trace")
    # the handshake belongs to the engine's first game; both games have their new game
    assert first[0] == (">", "ugi")
    assert ("<", "ugiok") in first
    assert (">", "setoption name Game value yoxii") in first
    assert (">", "ugi") not in second
    for trace in (first, second):
        assert (">", "uginewgame") in trace
        assert (">", "go depth 1") in trace
        assert any(d == "<" and line.startswith("info depth 1 ") for d, line in trace)
    # every move the engine made in a game is its bestmove in that game's trace
    for trace, game_id, seat in ((first, 1, 0), (second, 2, 1)):
        best = [line.split()[1] for d, line in trace if d == "<" and line.startswith("bestmove")]
        assert best == moves_by_seat(YOXII, out / "games" / f"game-{game_id:05d}.txt")[seat]
    # stored with the event, so that --resume keeps it
    db = sqlite3.connect(out / "results.sqlite")
    try:
        (stored,) = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    finally:
        db.close()
    assert json.loads(stored)["debug"] is True


@trio_test
async def test_a_trace_is_private_until_its_game_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))  # where private files could go
    logs = tmp_path / "logs"
    player = TextEnginePlayer(fake("good"), traces=logs)
    # the player is named after its command (python, python3.11, ...: the interpreter's)
    expected = trace_file_name(7, 1, player.name)
    assert expected.startswith("game-00007-p2-python")
    try:
        await played_and_published(player, logs, private, expected)
    finally:
        await player.close()
    assert sorted(p.name for p in logs.iterdir()) == [expected]
    assert not any(private.iterdir())


async def played_and_published(
    player: TextEnginePlayer, logs: Path, private: Path, expected: str
) -> None:
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        await player.go(request(clocks=Clocks(depth=1)))
        await player.go(request(moves=("c5",), clocks=Clocks(depth=1)))
        # during the game nothing of it has a name anywhere: not where the event's readers
        # look, not in the temporary directory (where a file without a name keeps it)
        assert not logs.exists() or not any(logs.iterdir())
        assert not any(private.iterdir())
        published = await player.publish_trace(7, 1)
        assert published == logs / expected
        assert [line for d, line in entries(published) if d == ">"].count("go depth 1") == 2
        await player.new_game("g2", 2)
        await player.go(request(clocks=Clocks(depth=1)))
        await player.close()  # not published: what came after the last game is dropped


def test_each_yinyang_engine_trace_holds_no_law_of_the_other(tmp_path: Path) -> None:
    out = tmp_path / "event"
    bot = f"{ENGINE} --game yinyang --bot random"
    proc = cli(
        "match", "yinyang", f"name=one:cmd:{bot}", f"name=two:cmd:{bot}", "--depth", "1",
        "--games", "1", "--max-plies", "4", "--debug", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    law = re.compile(r"[bw.]{4}>(?:[bw.]{4}|\*)")
    record = parse_record((out / "games" / "game-00001.txt").read_text(encoding="utf-8"))
    fields = record.headers["Final"].split(" ")[3:5]  # p1's laws, p2's laws
    hidden = [{e[1:] for e in f.split(",") if e.startswith("-")} for f in fields]
    # a hidden law's text is no secret when a revealed law reads the same (a player may write
    # one law twice, and reveal one of the two)
    revealed = {e[1:] for f in fields for e in f.split(",") if e.startswith("+")}
    traces = [
        (out / "logs" / name).read_text(encoding="utf-8")
        for name in ("game-00001-p1-one.trace", "game-00001-p2-two.trace")
    ]
    seen = [set(law.findall(text)) for text in traces]
    written = [
        set(law.findall(" ".join(line for line in text.splitlines() if " < bestmove " in line)))
        for text in traces
    ]
    for seat in (0, 1):
        other = 1 - seat
        assert hidden[seat], "every law was revealed: nothing to keep"
        assert hidden[seat] <= seen[seat]  # an engine's own trace has its own laws
        # the other's has none of them (but those it happened to write itself)
        assert not (hidden[seat] - revealed - written[other]) & seen[other]


def test_a_trace_is_cut_at_its_cap_and_control_characters_are_escaped(tmp_path: Path) -> None:
    trace = ProtocolTrace(cap=2000)
    trace("recv", "odd \x1b[2J line\r")
    for n in range(200):
        trace("send", f"go depth {n}")
    target = tmp_path / "logs" / "game-00001-p1-x.trace"
    assert trio.run(trace.publish, target, "protocol trace of game 1") == target
    lines = entries(target)
    assert lines[0] == ("<", "odd \\x1b[2J line\\x0d")
    assert lines[-1] == ("#", "cut: more than 2000 bytes in this game; the rest is left out")
    assert len(lines) < 100
    assert target.stat().st_size < 2000 + 200
    # the next game's trace starts afresh
    trace("send", "uginewgame")
    again = tmp_path / "logs" / "game-00002-p1-x.trace"
    assert trio.run(trace.publish, again, "protocol trace of game 2") == again
    assert entries(again) == [(">", "uginewgame")]
    assert trio.run(trace.publish, again, "nothing") is None  # nothing new: no file
    trace.close()


def test_an_engine_that_never_greets_has_its_attempt_traced(tmp_path: Path) -> None:
    # one that never greets at all stops the event before its first game (test_preflight);
    # this one greets the event's check and its first game, crashes in it, and is silent when
    # started afresh for the second
    engine = tmp_path / "engine"
    engine.write_text(
        '#!/bin/sh\nn=$(cat "$0.count" 2>/dev/null || echo 0)\necho $((n + 1)) > "$0.count"\n'
        f'if [ "$n" -lt 2 ]; then exec {FAKE_CMD} crash; fi\nexec {FAKE_CMD} silent\n'
    )
    engine.chmod(0o755)
    out = tmp_path / "event"
    proc = cli(
        "match", "yoxii", f"name=mute:cmd:{engine}", "bot:random", "--depth", "1",
        "--games", "2", "--startup-timeout", "2", "--debug", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [row[4] for row in stored_rows(out)] == ["crash", "stall"]
    lines = entries(out / "logs" / "game-00002-p2-mute.trace")
    assert lines[0] == (">", "ugi")
    assert lines[-1][0] == "#"
    assert "no answer to ugi within 2 s" in lines[-1][1]


def test_a_long_name_still_has_its_trace_and_its_standard_error(tmp_path: Path) -> None:
    # a name longer than a file name keeps of it (100 characters, 200 bytes): cut, with a
    # hash of the whole name (not lost)
    out = tmp_path / "event"
    name = "\u00e9" * 100
    proc = cli(
        "match", "yoxii", f"name={name}:cmd:{FAKE_CMD} good", "bot:random", "--depth", "1",
        "--games", "1", "--max-plies", "4", "--debug", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (trace,) = (out / "logs").glob("game-00001-p1-*.trace")
    assert entries(trace)[0] == (">", "ugi")
    assert len(list((out / "logs").glob("*.stderr"))) == 1


def test_long_names_are_cut_in_file_names_and_stay_apart() -> None:
    first, second = (trace_file_name(1, 0, "x" * 300 + end) for end in "ab")
    assert len(first.encode()) <= 255
    assert first != second
    assert trace_file_name(1, 0, "../a b") == "game-00001-p1-.._a_b.trace"


def test_debug_without_out_traces_into_a_temporary_directory_it_names(tmp_path: Path) -> None:
    proc = cli(
        "match", "yoxii", f"name=fake:cmd:{FAKE_CMD} good", "bot:random", "--depth", "1",
        "--games", "1", "--max-plies", "4", "--debug",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"^match: --debug without --out: the protocol traces go to (\S+)/$",
                      proc.stderr, re.M)  # fmt: skip
    assert found, proc.stderr
    where = Path(found[1])
    try:
        assert [p.name for p in where.iterdir()] == ["game-00001-p1-fake.trace"]
    finally:
        shutil.rmtree(where)
    # a bot has nothing to trace: said so, and nothing is made
    proc = cli("match", "yoxii", "bot:random", "bot:greedy", "--depth", "1", "--games", "1",
               "--max-plies", "2", "--debug")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "match: --debug traces cmd: and tcp: engines; this event has none" in proc.stderr
    assert "without --out" not in proc.stderr


def test_resume_with_debug_traces_the_rest_of_the_event(tmp_path: Path) -> None:
    out = tmp_path / "event"
    proc = cli(
        "match", "yoxii", f"name=fake:cmd:{FAKE_CMD} good", "bot:random", "--depth", "1",
        "--games", "2", "--max-plies", "4", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not list((out / "logs").glob("*.trace"))
    db = sqlite3.connect(out / "results.sqlite")
    with db:
        db.execute("DELETE FROM games WHERE id = 2")  # as if the run had been killed in game 2
    db.close()
    proc = cli("match", "--resume", "--out", str(out), "--debug")
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (out / "logs").glob("*.trace")] == ["game-00002-p2-fake.trace"]
    # a store from before the setting existed reads as without it
    config = json.loads(EventConfig("yoxii", ("bot:random", "bot:greedy")).to_json())
    del config["debug"]
    assert EventConfig.from_json(json.dumps(config)).debug is False


def test_a_stored_debug_setting_is_kept_by_a_bare_resume(tmp_path: Path) -> None:
    config = EventConfig("yoxii", ("bot:random", "bot:greedy"), depth=1, debug=True)
    ResultsDB.create(tmp_path / "results.sqlite", config).close()
    resumed = prepare(EventConfig("", ()), tmp_path, resume=True)
    assert resumed.config.debug is True


@trio_test
async def test_each_game_is_traced_when_it_ends_not_when_the_event_does(tmp_path: Path) -> None:
    config = EventConfig(
        "yoxii", (f"name=fake:cmd:{FAKE_CMD} good", "bot:random"), depth=1, games=3,
        max_plies=4, debug=True,
    )  # fmt: skip
    event = prepare(config, tmp_path, resume=False)
    seen: list[list[str]] = []

    def on_game(finished: Finished) -> None:
        seen.append(sorted(p.name[:10] for p in (tmp_path / "logs").glob("*.trace")))

    with trio.fail_after(LIMIT * 3):
        await run_event(event, tmp_path, on_game=on_game)
    assert seen == [
        ["game-00001"],
        ["game-00001", "game-00002"],
        ["game-00001", "game-00002", "game-00003"],
    ]


@trio_test
async def test_the_client_traces_msgpack_frames_as_json() -> None:
    lines: list[tuple[str, str]] = []
    command = [sys.executable, "-m", "enginesrv.cli", "engine", "--game", "yoxii"]
    with trio.fail_after(LIMIT):
        async with AsyncEngine.popen(
            [*command, "--framing", "msgpack"], framing="msgpack", stderr=subprocess.DEVNULL,
            trace=lambda kind, line: lines.append((kind, line)), cwd=str(ROOT),
        ) as engine:  # fmt: skip
            await engine.position()
            result = await engine.go(depth=1)
    frames = [(kind, json.loads(line)) for kind, line in lines if kind != "end"]
    assert frames[0] == ("send", [0, 1, "ugi", [{"protocol": 1, "client": "enginesrv.client"}]])
    assert ("send", [0, 3, "go", [{"depth": 1}]]) in frames
    answer = next(f for kind, f in frames if kind == "recv" and f[:2] == [1, 3])
    assert answer[3]["move"] == result.move
    assert lines[-1][0] == "end"

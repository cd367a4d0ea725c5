"""In-process matches: colours alternate, every move is checked, misbehaving bots forfeit,
records replay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

import games
from bots.engine import (
    Engine,
    InfoFn,
    Limits,
    Option,
    SearchResult,
    StopFn,
    ignore_info,
    never_stop,
)
from bots.simple import RandomBot
from enginesrv.match import (
    MatchLimits,
    PlayerSpecError,
    parse_player,
    play_game,
    run_match,
)
from enginesrv.records import parse_record

ROOT = Path(__file__).parent.parent.parent


def test_player_specs() -> None:
    spec = parse_player("bot:alphabeta:Hash=64,Depth=3")
    assert (spec.bot, spec.options) == ("alphabeta", (("Hash", "64"), ("Depth", "3")))
    assert spec.label == "alphabeta:Hash=64,Depth=3"
    assert parse_player("bot:random").options == ()
    for bad in ("random", "bot:", "cmd:engine", "bot:x:Hash"):
        with pytest.raises(PlayerSpecError):
            parse_player(bad)


@pytest.mark.parametrize("name", games.available())
def test_random_games_record_and_replay(name: str, tmp_path: Path) -> None:
    results = []
    score = run_match(
        games.load(name),
        (parse_player("bot:random"), parse_player("bot:random:Seed=3")),
        MatchLimits(depth=1),
        games_count=2,
        seed=4,
        out_dir=tmp_path,
        report=lambda result, running: results.append((result.players, running.games)),
        max_plies=300,
    )
    assert results == [((0, 1), 1), ((1, 0), 2)]  # colours alternate
    assert score.games == 2
    for path in sorted(tmp_path.iterdir()):
        record = parse_record(path.read_text(encoding="utf-8"))
        state = games.load(name).new_state()
        for entry in record.moves:
            state.push(state.parse_move(entry.token))
        assert state.to_string() == record.final
        outcome = state.outcome()
        if outcome is not None:
            assert record.headers["Result"] == outcome.winner
            assert record.headers["Reason"] == outcome.reason
        else:
            assert record.headers["Reason"] == "max-plies"


class _Illegal(Engine):
    name: ClassVar[str] = "illegal"

    def search(
        self,
        state: games.State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        return SearchResult(0, "zz9")


class _Crash(Engine):
    name: ClassVar[str] = "crash"
    options: ClassVar[tuple[Option, ...]] = ()

    def search(
        self,
        state: games.State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        raise RuntimeError("out of cheese")


@pytest.mark.parametrize(("bad", "reason"), [(_Illegal(), "illegal-move"), (_Crash(), "crash")])
def test_a_misbehaving_bot_forfeits_with_the_reason(bad: Engine, reason: str) -> None:
    game = games.load("yoxii")
    result = play_game(game, (RandomBot(), bad), ("random", bad.name), MatchLimits(depth=1))
    assert (result.winner, result.reason) == ("p1", reason)
    assert result.plies == 2  # p1's whole turn (totem move and placement), then p2 fails
    assert any("p2" in comment for comment in result.record.comments)


def test_max_plies_adjudicates_a_draw() -> None:
    game = games.load("yohoho")
    result = play_game(
        game, (RandomBot(), RandomBot()), ("a", "b"), MatchLimits(depth=1), max_plies=6
    )
    assert (result.winner, result.reason, result.plies) == ("draw", "max-plies", 6)


def test_match_command_end_to_end(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:random",
         "bot:random:Seed=9", "--games", "2", "--depth", "1", "--out", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("game 1/2: random (p1) vs random:Seed=9 (p2)")
    assert lines[1].startswith("game 2/2: random:Seed=9 (p1) vs random (p2)")
    assert lines[-1].startswith("result random vs random:Seed=9: +")
    assert len(list(tmp_path.iterdir())) == 2
    replay = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "replay", "yoxii",
         str(tmp_path / "yoxii-001.txt")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr


def test_match_command_errors_are_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:random",
         "bot:random:Speed=9"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("random has no option 'Speed' (its options: Seed)")
    assert proc.stderr.count("\n") <= 2


def test_plugin_example_installs_and_plays(tmp_path: Path) -> None:
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--target", str(target), str(ROOT / "examples" / "plugin_bot")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:mybot",
         "bot:random", "--games", "1", "--depth", "1"],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "mybot (p1) vs random (p2)" in proc.stdout

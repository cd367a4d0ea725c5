"""``enginesrv results`` as a tournament's users read it: the rating table, crosstable, end
reasons and search figures, in text and JSON; result lines in words; the rating table during
the run; the default event name."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "fakes" / "fake_engine.py"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", *args],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=240,
    )  # fmt: skip


@pytest.fixture(scope="module")
def event(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("ratings") / "ev"
    proc = cli(
        "tournament", "yoxii", "bot:greedy", "name=r1:bot:random:Seed=1",
        f"name=crasher:cmd:{sys.executable} {FAKE} crash 2", "bot:alphabeta",
        "--depth", "1", "--games", "2", "--rating-interval", "4", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_progress_lines_say_who_won_and_why(
    event: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, proc = event
    games = [line for line in proc.stdout.splitlines() if line.startswith("game ")]
    assert len(games) == 12
    for line in games:
        assert re.search(r": (\S+ wins: .+|draw: .+); \d+ plies$", line), line
        assert not re.search(r"\bp[12] [a-z-]+ after\b", line), line
    crashed = [line for line in games if "crasher crashed" in line]
    assert crashed, proc.stdout
    for line in crashed:
        # the winner is named first, the loser is the one that crashed
        winner = line.split(": ")[2].removesuffix(" wins")
        assert winner != "crasher"


def test_rating_table_every_n_games(event: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    _, proc = event
    text = proc.stdout
    assert "after 4 games:" in text
    assert "after 8 games:" in text
    assert "after 12 games:" not in text  # the final tables follow at the end
    assert text.count("ratings (average 0)") == 3


def test_results_text(event: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, _ = event
    proc = cli("results", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    today = dt.date.today().isoformat()
    assert lines[0] == f"Event: yoxii {today}; game yoxii; 12 games; depth=1"
    for title in ("ratings (average 0)", "crosstable (wins-draws-losses", "how the games ended",
                  "search (as the engines reported it"):  # fmt: skip
        assert any(line.startswith(title) for line in lines), title
    assert any(re.match(r"\s+crasher: .*lost crash \d", line) for line in lines), proc.stdout


def test_results_json(event: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, _ = event
    proc = cli("results", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert {"game", "games", "pairings", "ratings", "crosstable", "reasons"} <= set(payload)
    players = {"greedy", "r1", "crasher", "alphabeta"}
    assert {r["player"] for r in payload["ratings"]} == players
    for r in payload["ratings"]:
        assert {"player", "elo", "error", "games", "score"} <= set(r)
        assert r["games"] == 6
        cross = payload["crosstable"][r["player"]]
        assert sum(sum(wdl) for wdl in cross.values()) == 6
        assert sum(payload["reasons"][r["player"]].values()) == 6
        wins, draws, _ = (sum(col) for col in zip(*cross.values(), strict=True))
        assert r["score"] == pytest.approx((wins + draws / 2) / 6)
        if r["elo"] is None:
            assert r["note"]
        else:
            assert r["error"] is not None
            assert r["error"] > 0
    assert payload["reasons"]["crasher"].get("loss:crash", 0) >= 1
    # crosstables mirror each other
    for a, row in payload["crosstable"].items():
        for b, (w, d, loss) in row.items():
            assert payload["crosstable"][b][a] == [loss, d, w]
    assert payload["search"]["alphabeta"]["avg_depth"] == pytest.approx(1.0)
    assert payload["search"]["alphabeta"]["nps"] > 0


def test_anchor(event: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, _ = event
    proc = cli("results", str(out), "--json")
    rated = [r for r in json.loads(proc.stdout)["ratings"] if r["elo"] is not None]
    name = rated[-1]["player"]
    anchored = json.loads(cli("results", str(out), "--json", "--anchor", name).stdout)
    by_name = {r["player"]: r for r in anchored["ratings"]}
    assert by_name[name]["elo"] == 0.0
    for r in rated:
        assert by_name[r["player"]]["elo"] == pytest.approx(r["elo"] - rated[-1]["elo"], abs=0.01)
    bad = cli("results", str(out), "--anchor", "nobody")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "'nobody' is not a player" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_bad_anchor_prints_no_part_of_the_report(
    event: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = event
    bad = cli("results", str(out), "--anchor", "nobody")
    assert bad.stdout == ""

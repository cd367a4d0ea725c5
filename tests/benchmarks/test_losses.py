"""benchmarks/losses.py on a crafted match directory: a Yoxii game lost by ``new`` with the
scores it reported, and one it won (left out)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import games
from enginesrv.event.play.records import Record, RecordMove, format_record

ROOT = Path(__file__).resolve().parent.parent.parent
YOXII = games.load("yoxii")


def random_game(seed: int) -> list[tuple[str, int]]:
    """The tokens of a finished random Yoxii game, each with its mover's seat."""
    rng = random.Random(seed)
    state = YOXII.new_state()
    played = []
    while not state.is_terminal():
        moves = state.legal_moves()
        move = moves[rng.randrange(len(moves))]
        played.append((state.move_to_str(move), int(state.to_move())))
        state.push(move)
    return played


def write(run: Path, number: int, new_seat: int, result: str, scores: dict[int, int]) -> None:
    """A record of a random game in which ``new`` sits in ``new_seat``; ``scores``: by ply."""
    moves = [
        RecordMove(token, (("score", f"cp:{scores[ply]}"),) if ply in scores else ())
        for ply, (token, _) in enumerate(random_game(number))
    ]
    names = ["base", "base"]
    names[new_seat] = "new"
    headers = {
        "Game": "yoxii",
        "Start": "startpos",
        "P1": names[0],
        "P2": names[1],
        "Result": result,
        "Reason": "totem-blocked",
    }
    text = format_record(Record(headers=headers, moves=moves))
    (run / "games" / f"game-{number:05d}.txt").write_text(text)


def test_the_turning_point_and_the_largest_drop_of_a_loss(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    played = random_game(1)
    mine = [ply for ply, (_, seat) in enumerate(played) if seat == 0]
    assert len(mine) >= 4
    # new (p1) thinks itself ahead, then far behind after its third decision
    a, b, c, d = mine[:4]
    write(tmp_path, 1, 0, "p2", {a: 40, b: 30, c: -500, d: -900})
    write(tmp_path, 2, 1, "p2", {})  # won by new: not a loss
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "losses.py"), str(tmp_path), "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    losses = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(losses) == 1
    loss = losses[0]
    assert (loss["game"], loss["seat"], loss["plies"]) == ("game-00001.txt", 0, len(played))
    assert loss["turning"]["ply"] == b
    assert loss["turning"]["score"] == 30
    assert loss["to_end"] == len(played) - b
    before, after = loss["drop"]
    assert (before["ply"], after["ply"]) == (b, c)
    assert loss["between"] == [played[ply][0] for ply in range(b + 1, c) if played[ply][1] == 1]
    # the position before the turning point is the game's after its first b plies
    state = YOXII.new_state()
    for token, _ in played[:b]:
        state.push(state.parse_move(token))
    assert loss["turning"]["position"] == state.to_string()

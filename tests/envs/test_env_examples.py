"""The examples of docs/envs.md run: the random game of the page, examples/envs_random.py and
examples/envs_bot.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.enginesrv.test_client_docs import run

ROOT = Path(__file__).resolve().parents[2]


def test_the_random_game_of_the_page_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "envs.md").read_text(encoding="utf-8")
    program = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    script = tmp_path / "random_game.py"
    script.write_text(program, encoding="utf-8")
    proc = run([str(script)])
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"(p1|p2) wins .*|draw .*", proc.stdout.strip()), proc.stdout


@pytest.mark.parametrize("name", ["yoxii", "yinsh"])
def test_the_example_programs_play_a_game(name: str) -> None:
    proc = run(["examples/envs_random.py", name, "--seed", "3"])
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^outcome after \d+ decisions: ", proc.stdout, re.M), proc.stdout
    proc = run(["examples/envs_bot.py", name, "--depth", "1"])
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^returns: player_0 [+-]\d player_1 [+-]\d$", proc.stdout, re.M), proc.stdout

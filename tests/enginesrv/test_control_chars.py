"""Control characters (newline, carriage return, NUL...) in what reaches an engine are refused
where they enter: player specs, TOML settings, the event name; nothing the arbiter sends can
carry an extra line."""

from __future__ import annotations

from pathlib import Path

import pytest

from enginesrv.event.play.players import PlayerSpecError, parse_player
from tests.enginesrv.test_tournament import cli


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("name=a\nquit:bot:random", "the name"),
        ("bot:alphabeta:Depth=1\nquit", "the value of option 'Depth'"),
        ("options=Hash=16\r\nquit=1:tcp:127.0.0.1:7", "the value of option 'Hash'"),
        ("options=Bad\x00Name=1:bot:random", "option 'Bad\\x00Name'"),
        ("cmd:engine --x 'a\nb'", "the command"),
    ],
)
def test_a_control_character_in_a_player_spec_is_refused(spec: str, field: str) -> None:
    with pytest.raises(PlayerSpecError) as caught:
        parse_player(spec)
    message = str(caught.value)
    assert field in message
    assert "control character" in message
    assert not any(char in message for char in "\n\r\x00")


def _one_line_error(proc_stderr: str, *needles: str) -> None:
    assert proc_stderr.count("\n") == 1, proc_stderr
    assert "Traceback" not in proc_stderr
    for needle in needles:
        assert needle in proc_stderr


def test_the_command_line_and_toml_refuse_control_characters(tmp_path: Path) -> None:
    out = tmp_path / "event"
    proc = cli("match", "yoxii", "bot:random", "bot:greedy", "--depth", "1", "--games", "2",
               "--event", "cup\nquit", "--out", str(out))  # fmt: skip
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "--event", "control character (\\n)")
    assert not (out / "results.sqlite").exists()
    proc = cli("match", "yoxii", "name=x\ry:bot:random", "bot:greedy", "--depth", "1")
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "the name", "control character (\\r)")
    config = tmp_path / "event.toml"
    config.write_text(
        'game = "yoxii"\ndepth = 1\ngames = 2\n'
        '[[players]]\nspec = "bot:random"\noptions = { Seed = "1\\nquit" }\n'
        '[[players]]\nspec = "bot:greedy"\n',
        encoding="utf-8",
    )
    proc = cli("match", "--config", str(config))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "option 'Seed'", "control character (\\n)")

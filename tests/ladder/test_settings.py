"""What a ladder is (``enginesrv.ladder.settings.LadderSettings``): its games and control are
checked, written by the first run into ``DIR/ladder.json`` and held to by every later run;
the anchor is the first house bot of the first run that has one; a damaged or planted
settings file is refused in one line and kept as it is."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from enginesrv.ladder.settings import SETTINGS, LadderError, LadderSettings, read_settings


def readers(folder: Path) -> list[Callable[[], object]]:
    """The two ways the settings of ``folder`` are read: a run's (``kept``), ``results``'."""
    return [
        functools.partial(LadderSettings.make(["yoxii"], "2+0.05").kept, folder),
        functools.partial(read_settings, folder),
    ]


def one_line_error(caught: pytest.ExceptionInfo[LadderError]) -> str:
    """The refusal's text, checked to be one line."""
    text = str(caught.value)
    assert text
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("names", "tc", "said"),
    [
        ([], "2+0.05", "a ladder plays one game at least: give --game GAME"),
        (
            ["chess"],
            "2+0.05",
            "--game 'chess' is not a game; the games: yinsh, yinsh+blitz, yinyang, yohoho, yoxii",
        ),
        (["yoxii", "yohoho", "yoxii"], "2+0.05", "--game: each game once"),
        (["yoxii"], "inf", "--tc inf: a ladder's games are played on a clock"),
        (["yoxii"], "0+0", "--tc: time control '0+0': the clock must hold some time"),
    ],
)
def test_make_refuses_what_cannot_be_a_ladder(names: list[str], tc: str, said: str) -> None:
    """No game, an unknown game, a game twice, an infinite or empty clock: each refused in
    one line saying so."""
    with pytest.raises(LadderError) as caught:
        LadderSettings.make(names, tc)
    assert one_line_error(caught) == said


def test_make_refuses_a_control_that_is_not_one() -> None:
    """A control that does not parse is refused quoting it and the forms a control takes."""
    with pytest.raises(LadderError) as caught:
        LadderSettings.make(["yoxii"], "fast")
    assert one_line_error(caught).startswith("--tc: time control 'fast': write [MOVES/]TIME")


def test_make_keeps_the_control_in_its_own_words() -> None:
    """The games in the order given, the control as the arbiter writes it."""
    settings = LadderSettings.make(["yohoho", "yoxii"], "1:00+1", "house1")
    assert settings == LadderSettings(("yohoho", "yoxii"), "60+1", "house1")
    assert str(settings.control) == "60+1"


def test_the_first_run_writes_the_settings(tmp_path: Path) -> None:
    """``kept`` on a new folder writes ``ladder.json`` (games, control, anchor) and returns
    the settings as they were; ``read_settings`` reads them back."""
    assert read_settings(tmp_path) is None
    settings = LadderSettings.make(["yoxii", "yohoho"], "2+0.05")
    assert settings.kept(tmp_path) == settings
    path = tmp_path / SETTINGS
    assert json.loads(path.read_text()) == {
        "games": ["yoxii", "yohoho"],
        "tc": "2+0.05",
        "anchor": None,
    }
    assert path.read_text().endswith("}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [SETTINGS]  # no temporary left
    assert read_settings(tmp_path) == settings


def test_a_later_run_plays_the_same_games_at_the_same_control(tmp_path: Path) -> None:
    """The same games and control (in other words: 1:00+1 is 60+1) are kept; other games, or
    another control, are refused naming both the folder's and the ones asked for, and the
    file is left as it was."""
    LadderSettings.make(["yoxii", "yohoho"], "1:00+1").kept(tmp_path)
    before = (tmp_path / SETTINGS).read_bytes()
    same = LadderSettings.make(["yoxii", "yohoho"], "60+1")
    assert same.kept(tmp_path) == same
    for names, tc, asked in (
        (["yoxii"], "60+1", "yoxii at --tc 60+1"),
        (["yoxii", "yohoho"], "2+0.05", "yoxii, yohoho at --tc 2+0.05"),
        (["yohoho", "yoxii"], "60+1", "yohoho, yoxii at --tc 60+1"),
    ):
        with pytest.raises(LadderError) as caught:
            LadderSettings.make(names, tc).kept(tmp_path)
        assert one_line_error(caught) == (
            f"{tmp_path} is a ladder of yoxii, yohoho at --tc 60+1, not {asked}: give those, "
            "or another --out"
        )
    assert (tmp_path / SETTINGS).read_bytes() == before


def test_the_anchor_is_the_first_run_that_has_one_and_stays(tmp_path: Path) -> None:
    """A first run without house bots writes no anchor; the first run with one records it;
    every run after that keeps it, whether it has another first house bot or none."""
    assert LadderSettings.make(["yoxii"], "2+0.05").kept(tmp_path).anchor is None
    kept = LadderSettings.make(["yoxii"], "2+0.05", "house1").kept(tmp_path)
    assert kept.anchor == "house1"
    assert json.loads((tmp_path / SETTINGS).read_text())["anchor"] == "house1"
    for anchor in ("house2", None):
        kept = LadderSettings.make(["yoxii"], "2+0.05", anchor).kept(tmp_path)
        assert kept == LadderSettings(("yoxii",), "2+0.05", "house1")
    assert json.loads((tmp_path / SETTINGS).read_text())["anchor"] == "house1"
    assert read_settings(tmp_path) == LadderSettings(("yoxii",), "2+0.05", "house1")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "is damaged (Expecting property name"),
        ('{"games": ["yoxii"]}', "is damaged ('tc')"),
        ('{"games": "yoxii", "tc": "2+0.05"}', "is damaged (games)"),
        ('{"games": ["yoxii"], "tc": 2}', "is damaged (tc)"),
        ('{"games": ["yoxii"], "tc": "2+0.05", "anchor": 7}', "is damaged (anchor)"),
        ('{"games": ["chess"], "tc": "2+0.05"}', "is damaged (--game 'chess' is not a game"),
        ('{"games": ["yoxii"], "tc": "inf"}', "is damaged (--tc inf: a ladder's games"),
        ('{"games": ["yoxii"], "tc": "2+0.05"\n\n\n', "is damaged (Expecting ',' delimiter"),
    ],
)
def test_a_damaged_settings_file_is_refused_in_one_line(
    tmp_path: Path, text: str, why: str
) -> None:
    """Whatever is wrong with it, one line naming the file and what is wrong, and the file
    kept as it is, by a run and by ``results``."""
    path = tmp_path / SETTINGS
    path.write_text(text, encoding="utf-8")
    for read in readers(tmp_path):
        with pytest.raises(LadderError) as caught:
            read()
        said = one_line_error(caught)
        assert said.startswith(f"{path} {why}"), said
    assert path.read_text(encoding="utf-8") == text


def refused_folders(tmp_path: Path) -> list[tuple[Path, str]]:
    """Folders whose settings file is not read, and why: a symbolic link (to good settings),
    a FIFO, a file past the cap."""
    good = tmp_path / "elsewhere.json"
    good.write_text(LadderSettings.make(["yoxii"], "2+0.05").to_json())
    found = []
    for name, why in (
        ("linked", "is a symbolic link, which is not followed"),
        ("special", "is a FIFO, not a regular file"),
        ("large", "is larger than 4,096 bytes"),
    ):
        (tmp_path / name).mkdir()
        found.append((tmp_path / name, why))
    (tmp_path / "linked" / SETTINGS).symlink_to(good)
    os.mkfifo(tmp_path / "special" / SETTINGS)
    (tmp_path / "large" / SETTINGS).write_text(" " * 4000 + good.read_text() + " " * 100)
    return found


def test_a_linked_special_or_large_settings_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """A symbolic link is not followed, a FIFO not opened, a file past 4 KiB not read: each
    refused in one line saying why, by a run and by ``results``; the link is left in place."""
    for folder, why in refused_folders(tmp_path):
        for read in readers(folder):
            with pytest.raises(LadderError) as caught:
                read()
            assert one_line_error(caught).endswith(f"{why}: it is not read")
    assert (tmp_path / "linked" / SETTINGS).is_symlink()


def test_a_refused_settings_file_is_named_in_its_refusal(tmp_path: Path) -> None:
    """The refusal names the file it did not read, as a damaged file's does: ``DIR/ladder.json
    is a symbolic link, ...`` (the reason's words follow the file's name, as
    ``FileRefusedError`` means them to)."""
    for folder, why in refused_folders(tmp_path):
        with pytest.raises(LadderError) as caught:
            LadderSettings.make(["yoxii"], "2+0.05").kept(folder)
        assert str(caught.value) == f"{folder / SETTINGS} {why}: it is not read"
        with pytest.raises(LadderError) as caught:
            read_settings(folder)
        assert str(caught.value) == f"{folder / SETTINGS} {why}: it is not read"

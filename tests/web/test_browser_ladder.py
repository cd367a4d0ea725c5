"""A ladder's page in Chromium (`enginesrv ladder run --web`): its leaderboard and live games,
a stored game replayed on the board, and a game against a connected bot."""

from __future__ import annotations

import contextlib
import json
import random
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tests.processes import ended, line_within, stopping
from tests.web.browser import need_chromium
from tests.web.test_browser import (
    MOVE_TIMEOUT,
    browser,
    click_a_decision,
    moves_count,
    page,
    wait_for_turn,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["browser", "page"]

ENGINESRV = [sys.executable, "-m", "enginesrv.cli"]


@contextlib.contextmanager
def ladder_with_alice(page: Page, tmp_path: Path, games_at_once: int = 1) -> Iterator[str]:
    """A Yoxii ladder at 2+0.05 with a house bot (house1) and alice, a bot of
    ``ladder-client`` playing ``games_at_once`` games at once; its page's address. ``page``
    leaves it before it stops (its requests would fail)."""
    folder = tmp_path / "ladder"
    added = subprocess.run(
        [*ENGINESRV, "ladder", "add", "alice", "--out", str(folder)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    (tmp_path / "alice.token").write_text(added.stdout)
    ladder_command = [
        *ENGINESRV, "ladder", "run", "--game", "yoxii", "--tc", "2+0.05", "--out", str(folder),
        "--port", "0", "--web", "0", "--min-games", "2",
        "--house", "name=house1:bot:alphabeta:Depth=1",
    ]  # fmt: skip
    ladder = subprocess.Popen(ladder_command, stdout=subprocess.PIPE, text=True)
    with stopping(ladder, 30):
        client = None
        try:
            listening = line_within(ladder)
            web = line_within(ladder)
            assert listening.startswith("listening "), listening
            assert web.startswith("web http://"), web
            client = subprocess.Popen(
                [*ENGINESRV, "ladder-client", "--server", listening.split(" ")[1].strip(),
                 "--name", "alice", "--token-file", str(tmp_path / "alice.token"),
                 "--games", str(games_at_once), "bot:alphabeta:Depth=1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            yield web.split(" ", 1)[1].strip()
        finally:
            page.goto("about:blank")
            if client is not None:
                ended(client, 30)  # the client first, then the ladder (as the block ends)


def test_the_page_of_a_ladder_draws_its_leaderboard_and_its_live_games(
    page: Page, tmp_path: Path
) -> None:
    """The page follows the live games and draws the leaderboard, both players on it with
    their games, updated as games end."""
    need_chromium()
    with ladder_with_alice(page, tmp_path) as url:
        page.goto(url)
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=leaderboard] tbody tr').length == 2",
            timeout=MOVE_TIMEOUT,
        )
        board = str(page.locator("[data-testid=leaderboard]").text_content())
        assert "alice" in board
        assert "house1" in board
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=games] button').length >= 2",
            timeout=MOVE_TIMEOUT,
        )
        assert "alice" in str(page.locator("[data-testid=games]").text_content())
        assert page.evaluate("document.body.dataset.state") == "watching"


def challenges_playing(url: str) -> int:
    with urllib.request.urlopen(url + "players.json", timeout=10) as answer:
        return int(json.load(answer)["challenges"]["playing"])


def test_a_ladders_page_replays_a_stored_game_and_plays_a_connected_bot(
    page: Page, tmp_path: Path
) -> None:
    """A stored game from the list of recent ones is replayed move by move; the person then
    plays alice (whose second connection is free while the first plays house1) with the
    second move, and alice answers, with no Undo offered; a second game from the same page
    is refused meanwhile; back to the live games, alice is given back, and a new game shows
    nothing of the refusal."""
    need_chromium()
    with ladder_with_alice(page, tmp_path, games_at_once=2) as url:
        page.goto(url)
        recent = page.locator("[data-testid=recent] button").first
        recent.wait_for(timeout=MOVE_TIMEOUT)
        label = str(recent.text_content())
        found = re.search(r": alice vs house1|: house1 vs alice", label)
        assert found, label
        plies = re.search(r"(\d+) moves$", label)
        assert plies, label
        recent.click()
        page.locator("[data-testid=file-status]").filter(
            has_text=f"Replaying {plies.group(1)} moves."
        ).wait_for(timeout=MOVE_TIMEOUT)
        assert moves_count(page) == int(plies.group(1))

        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=challenge-bot] option')]"
            ".some((o) => o.value === 'alice')",
            timeout=MOVE_TIMEOUT,
        )
        page.select_option("[data-testid=challenge-bot]", "alice")
        page.select_option("[data-testid=challenge-side]", "p2")
        page.select_option("[data-testid=challenge-tc]", "60+1")
        page.locator("[data-testid=challenge-play]").click()
        assert wait_for_turn(page)
        first = moves_count(page)
        assert first >= 1  # alice moved first
        assert challenges_playing(url) == 1
        rng = random.Random(7)
        for mine in range(1, 5):  # the person's decisions, until alice has answered them
            click_a_decision(page, rng)
            assert wait_for_turn(page)
            if moves_count(page) > first + mine:
                break
        else:
            raise AssertionError("alice did not answer")
        assert page.locator("[data-testid=undo]").is_hidden()  # nothing is taken back
        page.locator("[data-testid=challenge-play]").click()  # one game an address
        status = page.locator("[data-testid=status]")
        status.filter(has_text="plays a challenge game already").wait_for(timeout=MOVE_TIMEOUT)
        page.locator("[data-testid=watch-live]").click()
        assert page.evaluate("document.body.dataset.state") == "watching"
        deadline = time.monotonic() + MOVE_TIMEOUT / 1000
        while challenges_playing(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert challenges_playing(url) == 0
        page.locator("[data-testid=challenge-play]").click()  # the last refusal is over
        assert wait_for_turn(page)
        assert "Cannot start" not in str(status.text_content())
        assert page.locator("[data-testid=undo]").is_hidden()

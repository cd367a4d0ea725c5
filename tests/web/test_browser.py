"""The page in a real browser (Debian's chromium, driven by Playwright): whole games by clicks
on the documented hooks (docs/web.md), analysis, hidden information, the keyboard."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import games
from tests.processes import line_within, stopping
from tests.web.browser import CHROMIUM, CHROMIUM_ARGS, ServerThread, need_chromium, server_thread

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, WebSocket

    from enginesrv.analyse.plies import Game as AnalysedGame
    from enginesrv.analyse.report import Judged
    from enginesrv.analyse.search import Found

playwright_api = pytest.importorskip("playwright.sync_api")

MOVE_TIMEOUT = 20_000
"""Milliseconds a bot reply or a redraw may take in these tests."""


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    need_chromium()
    with server_thread() as held:
        yield held


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    need_chromium()
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    yield opened
    context.close()
    assert not problems, problems


def base(server: ServerThread) -> str:
    assert server.web is not None
    return server.web.url


def wait_for_turn(page: Page) -> bool:
    """Wait until the person is to act (True) or the game is over (False)."""
    page.wait_for_function(
        "() => ['person', 'over'].includes(document.body.dataset.state)", timeout=MOVE_TIMEOUT
    )
    state: str = page.evaluate("document.body.dataset.state")
    return state == "person"


def moves_count(page: Page) -> int:
    return int(page.locator("[data-testid=moves] > *").count())


def click_a_decision(page: Page, rng: random.Random) -> None:
    """Click legal squares and choices until the page has played one decision."""
    before = moves_count(page)
    clicked: list[str] = []  # what each click hit, and the status line after it
    for _ in range(12):
        compose = page.locator("[data-testid=compose] [data-choice=random]")
        if compose.count():
            compose.click()
            page.locator("[data-testid=compose] [data-choice=submit]").click()
            clicked.append("compose")
        else:
            legal = page.locator("[data-legal=true]")
            choices = page.locator("[data-testid=choices] [data-choice]")
            targets = legal.count() + choices.count()
            assert targets, "the person is to act but nothing can be clicked"
            pick = rng.randrange(targets)
            target = legal.nth(pick) if pick < legal.count() else choices.nth(pick - legal.count())
            clicked.append(
                str(target.get_attribute("data-square") or target.get_attribute("data-choice"))
            )
            target.click()
        # either the move went out (the list grows) or the next step of it is offered
        # the page answers a click at once: a decision completed goes out (busy until the
        # server has answered), a step of one shows the next steps
        page.wait_for_function("() => document.body.dataset.state !== 'busy'", timeout=MOVE_TIMEOUT)
        if moves_count(page) > before:
            return
        clicked[-1] += f" -> {page.locator('[data-testid=status]').text_content()}"
    raise AssertionError(f"twelve clicks did not make a move: {clicked}")


def play_a_whole_game(page: Page, rng: random.Random, limit: int = 600) -> str:
    for _ in range(limit):
        if not wait_for_turn(page):
            return str(page.locator("[data-testid=result]").text_content())
        click_a_decision(page, rng)
    raise AssertionError("the game did not end")


GAMES = ["yinsh", "yohoho", "yoxii", "yinyang"]
OPPONENTS = {"yinsh": "bot:random", "yohoho": "bot:greedy", "yoxii": "bot:random",
             "yinyang": "bot:random"}  # fmt: skip
"""The bot each whole game is played against: a random one, but in Yohoho, whose rules do
not bound a game's length, the greedy one (two random sides sail for 200 to 1,200 plies;
against greedy a game takes 20 to 80)."""


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_game_against_a_bot_by_clicks(
    server: ServerThread, page: Page, game: str, tmp_path: Path
) -> None:
    rng = random.Random(game)
    page.goto(f"{base(server)}?game={game}&opponent={OPPONENTS[game]}&side=p1")
    page.wait_for_selector("[data-testid=board] [data-square]")
    page.screenshot(path=str(tmp_path / f"{game}-start.png"))
    result = play_a_whole_game(page, rng)
    assert_in_words(result)
    page.screenshot(path=str(tmp_path / f"{game}-end.png"))
    assert (tmp_path / f"{game}-end.png").stat().st_size > 5000
    # the moves list is the server's: one entry per decision (a Yin Yang game may end right
    # after both setups, when the laws leave the first player no move)
    assert moves_count(page) >= 2
    # ← steps back through the finished game, as a click on the list does; Escape comes back
    page.locator("body").press("ArrowLeft")
    shown = page.locator("[data-testid=moves] > [aria-current=true]")
    assert shown.get_attribute("data-ply") == str(moves_count(page) - 1)
    page.locator("body").press("Escape")
    assert shown.count() == 0


def test_the_deep_link_starts_that_game_and_flip_turns_the_board(
    server: ServerThread, page: Page
) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=bot:greedy&side=p2")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length >= 2",
        timeout=MOVE_TIMEOUT,
    )  # the bot moved first: a totem move and a placement
    assert page.locator("[data-testid=game-select]").input_value() == "yoxii"
    assert page.locator("[data-testid=opponent-select]").input_value() == "bot:greedy"
    first = page.locator("[data-square]").first.bounding_box()
    page.locator("[data-testid=flip]").click()
    flipped = page.locator("[data-square]").first.bounding_box()
    assert first != flipped


def test_analysis_starts_and_stops_with_live_lines(server: ServerThread, page: Page) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.wait_for_selector("[data-testid=board] [data-square]")
    page.locator("[data-testid=analyse]").click()
    page.wait_for_function(
        "() => /depth [0-9]+ .*\\npv \\S+/.test("
        "document.querySelector('[data-testid=analysis]').textContent)",
        timeout=MOVE_TIMEOUT,
    )
    page.wait_for_selector("[data-best=true]", timeout=MOVE_TIMEOUT)
    # a score in words a person reads: the chance to win beside the evaluation
    text = str(page.locator("[data-testid=analysis]").text_content())
    assert re.search(r"score (cp -?\d+ \(\d+% to win\)|(win|loss) in \d+ pl)", text), text
    page.locator("[data-testid=stop]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=analysis]').textContent.includes('best move')",
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=analyse]").is_enabled()


def test_an_analysis_belongs_to_its_position(server: ServerThread, page: Page) -> None:
    """A move, a step through a replay or another game ends the analysis shown: its search
    stops and its lines and marks go. A ply looked at in a replay is analysed on the board;
    a decision too large to list says it shows no lines."""
    analysis = page.locator("[data-testid=analysis]")
    best_lines = (
        "() => /pv \\S+/.test(document.querySelector('[data-testid=analysis]').textContent)"
    )
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.wait_for_selector("[data-testid=board] [data-legal=true]")
    for stop_first in (False, True):
        page.locator("[data-testid=analyse]").click()
        page.wait_for_function(best_lines, timeout=MOVE_TIMEOUT)
        page.wait_for_selector("[data-best=true]", timeout=MOVE_TIMEOUT)
        if stop_first:
            page.locator("[data-testid=stop]").click()
            analysis.filter(has_text="best move").wait_for(timeout=MOVE_TIMEOUT)
        click_a_decision(page, random.Random(1))
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=analyse]').disabled"
            " && document.querySelector('[data-testid=stop]').disabled",
            timeout=MOVE_TIMEOUT,
        )
        page.wait_for_timeout(300)  # a line of the old search, had it not been dropped
        assert analysis.text_content() == ""
        assert page.locator("[data-best], [data-score], [data-line]").count() == 0
    # an earlier ply of a replay, analysed on the board; a step away ends it
    tokens, _ = a_finished_game("yoxii", 4)
    replay_text(page, "\n".join(["# Game: yoxii", *tokens]))
    page.locator("[data-testid=file-status]").filter(has_text="Replaying").wait_for()
    page.locator("[data-testid=moves] > *").nth(5).click()
    page.locator("[data-testid=analyse]").click()
    page.wait_for_selector("[data-best=true]", timeout=MOVE_TIMEOUT)
    page.locator("[data-testid=moves] > *").nth(3).click()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=analyse]').disabled", timeout=MOVE_TIMEOUT
    )
    page.wait_for_timeout(300)
    assert analysis.text_content() == ""
    assert page.locator("[data-best=true]").count() == 0
    # a game's analysis: its summary goes with the game
    page.locator("[data-testid=review]").click()
    review = page.locator("[data-testid=review-status]")
    review.filter(has_text="Analysed").wait_for(timeout=60_000)
    replay_text(page, "\n".join(["# Game: yoxii", *tokens[:10]]))
    page.locator("[data-testid=file-status]").filter(has_text="Replaying 10 moves.").wait_for()
    assert review.text_content() == ""
    # Yin Yang's laws: a decision too large to list
    page.goto(f"{base(server)}?game=yinyang&opponent=human")
    page.wait_for_selector("[data-testid=compose] [data-choice=random]")
    page.locator("[data-testid=analyse]").click()
    analysis.filter(has_text="too large to list").wait_for(timeout=MOVE_TIMEOUT)
    page.locator("[data-testid=stop]").click()
    analysis.filter(has_text="best move laws:").wait_for(timeout=MOVE_TIMEOUT)


def test_the_page_with_the_keyboard_only(server: ServerThread, page: Page) -> None:
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    for _ in range(30):  # Tab to the game box
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.testid") == "game-select":
            break
    else:
        raise AssertionError("Tab never reached the game box")
    options = page.locator("[data-testid=game-select] option").all_text_contents()
    page.keyboard.press("Home")  # the first game, then down to Yoxii
    for _ in range(options.index("Yoxii")):
        page.keyboard.press("ArrowDown")
    assert page.locator("[data-testid=game-select]").input_value() == "yoxii"
    for _ in range(12):  # on to the New game button
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.testid") == "new-game":
            break
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-legal=true]", timeout=MOVE_TIMEOUT)
    # a legal square, reached with Tab and played with Enter
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('data-legal')") == "true":
            break
    else:
        raise AssertionError("Tab never reached a legal square")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length === 1",
        timeout=MOVE_TIMEOUT,
    )
    # the focus stays where the next decision is, through the bot's turn: Enter alone plays on
    on_a_step = (
        "() => document.activeElement.getAttribute('data-legal') === 'true'"
        " || document.activeElement.closest('#choices') !== null"
    )
    while True:
        page.wait_for_function(on_a_step, timeout=MOVE_TIMEOUT)
        if moves_count(page) >= 5:  # the person's second turn has begun
            break
        before = moves_count(page), page.evaluate("document.activeElement.outerHTML")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "([n, html]) => document.querySelectorAll('[data-testid=moves] > *').length > n"
            " || document.activeElement.outerHTML !== html",
            arg=list(before),
            timeout=MOVE_TIMEOUT,
        )
    # a move typed into the move box
    target = page.locator("[data-square][data-legal=true]").first.get_attribute("data-square")
    page.locator("[data-testid=move-input]").focus()
    page.keyboard.type(f"1@{target}")
    played = moves_count(page)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=moves] > *').length > n",
        arg=played,
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=moves] > *").nth(played).text_content() == f"1@{target}"


def test_two_people_at_one_screen_get_a_hand_over_screen_in_yin_yang(
    server: ServerThread, page: Page
) -> None:
    rng = random.Random(7)
    page.goto(f"{base(server)}?game=yinyang&opponent=human")
    page.wait_for_selector("[data-testid=compose] [data-choice=random]")
    page.locator("[data-testid=compose] [data-choice=random]").click()
    page.locator("[data-testid=compose] [data-choice=submit]").click()
    # White's turn to write: the board is hidden until White says it is there
    page.wait_for_selector("[data-testid=handover]", state="visible", timeout=MOVE_TIMEOUT)
    assert page.evaluate("document.body.dataset.state") == "handover"
    assert "White" in str(page.locator("[data-testid=handover]").text_content())
    assert str(page.locator("[data-testid=status]").text_content()).startswith("White to play")
    assert page.locator("#play").evaluate("node => getComputedStyle(node).visibility") == "hidden"
    page.locator("[data-testid=handover-ready]").click()
    assert page.evaluate("document.body.dataset.state") == "person"
    # Black's setup reaches White's screen as laws:?,?,?,? only
    assert page.locator("[data-testid=moves] > *").all_text_contents() == ["laws:?,?,?,?"]
    click_a_decision(page, rng)  # White writes its laws
    page.wait_for_selector("[data-testid=handover]", state="visible", timeout=MOVE_TIMEOUT)
    assert "Black" in str(page.locator("[data-testid=handover]").text_content())
    page.locator("[data-testid=handover-ready]").click()
    # between two people each move is listed as its mover's opponent was shown it: neither
    # setup is on the screen (each side's own laws are drawn on the board)
    listed = page.locator("[data-testid=moves] > *").all_text_contents()
    assert listed == ["laws:?,?,?,?", "laws:?,?,?,?"]


def law_fields(position: str) -> tuple[list[str], list[str]]:
    """Black's and White's law entries of a Yin Yang position string (rules §8.1)."""
    fields = position.split()
    return (
        [] if fields[3] == "none" else fields[3].split(","),
        [] if fields[4] == "none" else fields[4].split(","),
    )


POSITION = re.compile(
    r"[bw.]{4}/[bw.]{4}/[bw.]{4}/[bw.]{4} [bw] (?:setup|start|moved) (\S+) (\S+) \d+ \d+ \d+"
)
"""A Yin Yang position string (rules §8.1): its two law fields are groups 1 and 2."""


def test_no_frame_to_the_page_holds_the_bots_unrevealed_laws(
    server: ServerThread, page: Page
) -> None:
    """Every position the page is sent shows the bot's hidden laws as ``?``; every move of the
    bot it is sent hides what the bot wrote; the laws the bot never revealed are in no
    position, no move and no reply but the person's own move lists (``query moves`` lists
    every law an adaptation of the person's could write)."""
    frames: list[str] = []
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda data: frames.append(data if isinstance(data, str) else data.decode()),
        ),
    )
    assert server.web is not None
    before = set(server.web.app.referees)
    page.goto(f"{base(server)}?game=yinyang&opponent=bot:random&side=p1")
    page.wait_for_selector("[data-testid=board] [data-square]")
    play_a_whole_game(page, random.Random(11))
    (referee,) = set(server.web.app.referees) - before
    lines = [line for frame in frames for line in frame.splitlines()]
    positions = [found for line in lines for found in POSITION.finditer(line)]
    assert positions, "no position reached the page"
    for found in positions:
        bots = found.group(2)  # White's laws: the bot's, the person plays Black
        entries = [] if bots == "none" else bots.split(",")
        assert not [e for e in entries if e.startswith("-")], f"a hidden law shown: {found[0]}"
        assert all(e == "?" or e.startswith("+") for e in entries), found[0]
    bests = [line.split()[1] for line in lines if line.startswith("bestmove ")]
    assert bests[0] == "laws:?,?,?,?"
    for move in bests:
        assert "=" not in move or move.endswith("=?"), f"a bot's rewrite shown: {move}"
    # the laws the bot holds hidden at the end: nowhere but in the person's move lists
    _, final = law_fields(referee.state.to_string())
    # a text the person wrote too (Black's field, in full in every position) is theirs to see
    own = {e[1:] for found in positions for e in found.group(1).split(",") if e[:1] in "+-"}
    hidden = [entry[1:] for entry in final if entry.startswith("-") and entry[1:] not in own]
    elsewhere = [
        line for line in lines if not line.startswith("response ") or POSITION.search(line)
    ]
    for law in hidden:
        assert not [line for line in elsewhere if law in line], law


# -- records, stale state, bad links ----------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two finished Yoxii games of a match, as `enginesrv export` writes them (each record
    `# Start: startpos`, its moves with comments)."""
    where = tmp_path_factory.mktemp("event")
    tool = [sys.executable, "-m", "enginesrv.cli"]
    match = ["match", "yoxii", "name=a:bot:random", "name=b:bot:random", "--games", "2"]
    subprocess.run(
        [*tool, *match, "--st", "0.5", "--out", str(where / "e")],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    subprocess.run(
        [*tool, "export", str(where / "e"), "-o", str(where / "all.txt")],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return (where / "all.txt").read_text()


def record_moves(text: str) -> list[list[str]]:
    """The moves of each record of ``text``, without their comments."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("# Game:"):
            out.append([])
        elif line.strip() and not line.startswith("#"):
            out[-1].append(line.split("  ;")[0].strip())
    return out


def test_an_exported_event_replays_record_by_record_with_its_game(
    server: ServerThread, page: Page, exported: str
) -> None:
    games = record_moves(exported)
    assert len(games) == 2
    assert "# Start: startpos" in exported
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    # before any game: nothing to undo, flip or analyse
    for button in ("undo", "flip", "analyse"):
        assert page.locator(f"[data-testid={button}]").is_disabled(), button
    page.locator("[data-testid=game-select]").select_option("yinsh")
    page.locator("details#files summary").click()
    page.locator("[data-testid=load-text]").fill(exported)
    page.locator("[data-testid=load-record]").click()
    status = page.locator("[data-testid=file-status]")
    status.filter(has_text=f"Replaying {len(games[0])} moves.").wait_for(timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=game-select]").input_value() == "yoxii"
    assert page.locator("[data-testid=moves] > *").all_text_contents() == games[0]
    assert page.evaluate("document.body.dataset.state") == "replay"
    assert page.locator("[data-testid=result]").text_content()  # the game ended on the board
    assert page.locator("[data-testid=flip]").is_enabled()
    # the final position is over: the analysis says so instead of a search of nothing
    page.locator("[data-testid=analyse]").click()
    analysis = page.locator("[data-testid=analysis]")
    analysis.filter(has_text="over").wait_for(timeout=MOVE_TIMEOUT)
    assert "depth" not in str(analysis.text_content())
    # the other record of the file, chosen from the list; the old analysis goes
    choice = page.locator("[data-testid=record-choice]")
    assert choice.is_visible()
    assert choice.locator("option").count() == 2
    choice.select_option("1")
    status.filter(has_text=f"Replaying {len(games[1])} moves.").wait_for(timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=moves] > *").all_text_contents() == games[1]
    assert analysis.text_content() == ""


def test_a_bad_record_leaves_the_game_in_play_as_it_was(server: ServerThread, page: Page) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.wait_for_selector("[data-legal=true]", timeout=MOVE_TIMEOUT)
    click_a_decision(page, random.Random(3))
    page.locator("details#files summary").click()
    page.locator("[data-testid=load-text]").fill("# Game: yoxii\n# Start: startpos\nz9\n")
    page.locator("[data-testid=load-record]").click()
    status = page.locator("[data-testid=file-status]")
    status.filter(has_text="Cannot replay the record").wait_for(timeout=MOVE_TIMEOUT)
    assert "z9" in str(status.text_content())
    assert page.evaluate("document.body.dataset.state") == "person"
    assert moves_count(page) == 1
    click_a_decision(page, random.Random(4))  # the game goes on
    assert moves_count(page) == 2


def test_no_stale_export_note_position_text_or_game_selector(
    server: ServerThread, page: Page
) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.wait_for_selector("[data-legal=true]", timeout=MOVE_TIMEOUT)
    click_a_decision(page, random.Random(5))
    page.locator("details#files summary").click()
    with page.expect_download():
        page.locator("[data-testid=export-record]").click()
    status = page.locator("[data-testid=file-status]")
    assert status.text_content() == "Exported 1 moves."
    page.locator("[data-testid=undo]").click()
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length === 0"
    )
    page.wait_for_function("() => document.body.dataset.state === 'person'")
    assert status.text_content() == ""
    # a new game: the box no longer holds the last game's record
    assert page.locator("[data-testid=load-text]").input_value().startswith("# Game: yoxii")
    page.locator("[data-testid=game-select]").select_option("yinsh")
    page.locator("[data-testid=opponent-select]").select_option("human")
    page.locator("[data-testid=new-game]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=load-text]').value === ''",
        timeout=MOVE_TIMEOUT,
    )


def test_a_bad_deep_link_is_answered_with_a_message(server: ServerThread, page: Page) -> None:
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{base(server)}?game=nosuch")
    status = page.locator("[data-testid=status]")
    status.filter(has_text="nosuch").wait_for(timeout=MOVE_TIMEOUT)
    assert "does not play" in str(status.text_content())
    assert "error" in str(status.get_attribute("class"))
    assert not [url for url in asked if url.endswith("/.js")], asked
    assert page.locator("[data-testid=analyse]").is_disabled()
    # an opponent, side or clock the server does not offer is named, and no game starts
    for query, said in [
        ("game=yoxii&opponent=bot:nosuch", 'the opponent "bot:nosuch"'),
        ("game=yoxii&opponent=nobody&side=p2", 'the opponent "nobody"'),
        ("game=yoxii&side=p3", 'the side "p3" (p1 or p2)'),
        ("game=yoxii&tc=" + "9" * 5000, "which is not a time control"),
    ]:
        page.goto(f"{base(server)}?{query}")
        status.filter(has_text=said).wait_for(timeout=MOVE_TIMEOUT)
        assert page.evaluate("document.body.dataset.state") == "idle"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1200
    # a direction control in a link's value cannot turn the message around
    page.goto(f"{base(server)}?game=%E2%80%AEsuchno")
    status.filter(has_text="suchno").wait_for(timeout=MOVE_TIMEOUT)
    said = str(status.text_content())
    assert "\u202e" not in said
    assert "\ufffdsuchno" in said
    # a link that left yinsh+blitz's "+" unescaped still names it
    page.goto(f"{base(server)}?game=yinsh+blitz&opponent=human")
    page.wait_for_function("() => document.body.dataset.state === 'person'", timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=game-select]").input_value() == "yinsh+blitz"


def test_the_analysis_keeps_the_engines_notes_off_the_line(
    server: ServerThread, page: Page
) -> None:
    """A Yin Yang search notes its samples (`info ... pv ... string samples 8 ...`): the pv
    shown ends where the note begins. (Against alphabeta, whose laws always fit the start
    board: a random Black would lose at once in most games.)"""
    page.goto(f"{base(server)}?game=yinyang&opponent=bot:alphabeta:Depth=2&side=p2")
    page.wait_for_selector("[data-testid=compose] [data-choice=random]", timeout=MOVE_TIMEOUT)
    page.locator("[data-testid=compose] [data-choice=random]").click()
    page.locator("[data-testid=compose] [data-choice=submit]").click()
    if not wait_for_turn(page):
        pytest.skip("White's random laws left it no move")
    page.locator("[data-testid=analyse]").click()
    analysis = page.locator("[data-testid=analysis]")
    analysis.filter(has_text="samples").wait_for(timeout=MOVE_TIMEOUT)
    page.locator("[data-testid=stop]").click()
    lines = str(analysis.text_content()).split("\n")
    pv = next(line for line in lines if line.startswith("pv "))
    assert "string" not in pv
    assert "samples" not in pv
    assert any(line.startswith("(samples") for line in lines), lines


# -- results in words ---------------------------------------------------------------------------


def assert_in_words(result: str) -> None:
    """A result is a sentence, not the protocol's pairs (`score_p1=3`) or reason codes."""
    assert re.fullmatch(r"(White|Black) wins\b.*\.|Draw\b.*\.", result), result
    assert not re.search(r"[a-z]+-[a-z]+|_|=|\(\w+\)$", result), result


def a_finished_game(name: str, seed: int) -> tuple[list[str], games.Outcome]:
    """The moves and outcome of a game of random moves (the rules' own ending)."""
    states, tokens = a_game_to_a_turns_end(name, seed, plies=sys.maxsize)
    outcome = states[-1].outcome()
    assert outcome is not None
    return tokens, outcome


WORDS = {
    "goal-row": "Admiral reached row",
    "admiral-trapped": "Admiral is trapped",
    "no-legal-action": "has no legal move",
    "target-reached": "removed the rings needed to win",
    "pool-empty": "the markers ran out",
    "two-passes": "neither side could move",
    "totem-blocked": "the Totem is blocked",
    "goal": "piece stands on",
    "both-goals": "both goals were filled",
    "no-legal-token": "has no legal move",
}
"""What each of the rules' endings says, whoever won."""


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_the_rules_endings_are_said_in_words(server: ServerThread, page: Page, name: str) -> None:
    colours = games.load(name).colours
    seen = set()
    for seed in range(40):
        tokens, outcome = a_finished_game(name, seed)
        if (outcome.reason, outcome.winner) in seen or len(tokens) > 400:
            continue
        seen.add((outcome.reason, outcome.winner))  # each ending, won by either side
        page.goto(base(server))
        page.wait_for_selector("[data-testid=game-select] option", state="attached")
        page.locator("details#files summary").click()
        page.locator("[data-testid=load-text]").fill("\n".join([f"# Game: {name}", *tokens]))
        page.locator("[data-testid=load-record]").click()
        shown = page.locator("[data-testid=result]")
        shown.filter(has_text=".").wait_for(timeout=MOVE_TIMEOUT)
        text = str(shown.text_content())
        assert_in_words(text)
        assert WORDS[outcome.reason] in text, (outcome, text)
        if outcome.winner == "draw":
            assert text.startswith("Draw"), text
        else:
            assert text.startswith(f"{colours[0 if outcome.winner == 'p1' else 1]} wins"), text
        for key, value in outcome.scores:  # the score where the game has one
            if key.startswith("score"):
                assert str(value) in text, (key, value, text)
        scores = dict(outcome.scores)
        if "score_p2" in scores and outcome.winner != "draw":  # the winner's first
            mine, theirs = scores["score_p1"], scores["score_p2"]
            if outcome.winner == "p2":
                mine, theirs = theirs, mine
            assert f"{mine}\u2013{theirs}" in text, text
    assert seen


# -- the last turn, every decision of it --------------------------------------------------------


def a_game_to_a_turns_end(name: str, seed: int, plies: int) -> tuple[list[games.State], list[str]]:
    """The states and move tokens of a game of random moves from the start, cut at the end of
    a turn (the seat to act changes) after at least ``plies`` plies, or at its end."""
    game = games.load(name)
    rng = random.Random(seed)
    states = [game.new_state()]
    tokens: list[str] = []
    while not states[-1].is_terminal():
        state = states[-1].copy()
        moves = state.legal_moves()
        move = moves[rng.randrange(len(moves))]
        tokens.append(state.move_to_str(move))
        state.push(move)
        states.append(state)
        if len(tokens) >= plies and state.to_move() != states[-2].to_move():
            break
    return states, tokens


def last_turn(states: list[games.State]) -> int:
    """The first ply (1-based) of the last turn: the plies the last ply's mover made in a row."""
    first = len(states) - 1
    while first > 1 and states[first - 2].to_move() == states[-2].to_move():
        first -= 1
    return first


def yinsh_cells(state: games.State) -> dict[str, str]:
    """What stands on each occupied point of a Yinsh board: rings W B, markers w b."""
    from games.yinsh import POINT_NAMES, YinshState

    assert isinstance(state, YinshState)
    out: dict[str, str] = {}
    for seat, (ring, marker) in enumerate((("W", "w"), ("B", "b"))):
        for mask, letter in ((state.rings_mask(seat), ring), (state.markers_mask(seat), marker)):
            out.update({point: letter for i, point in enumerate(POINT_NAMES) if mask >> i & 1})
    return out


def law_cards(state: games.State) -> dict[str, str]:
    """Each Yin Yang law card (law-b1 ... law-w4) as the position string has it: its state and
    text (rules/yinyang.md §8)."""
    fields = state.to_string().split(" ")
    return {
        f"law-{colour}{k}": entry
        for colour, laws in (("b", fields[3]), ("w", fields[4]))
        for k, entry in enumerate(laws.split(","), 1)
    }


@pytest.mark.parametrize(
    ("name", "plies"), [("yinsh", 24), ("yohoho", 9), ("yoxii", 9), ("yinyang", 8)]
)
def test_every_decision_of_the_last_turn_is_marked(
    server: ServerThread, page: Page, name: str, plies: int
) -> None:
    """After a turn of several decisions (Yohoho's two sub-moves, Yoxii's Totem move and
    placement, Yin Yang's piece move and law, a Yinsh ring move and the markers it flipped),
    every place any of them touched is marked, ringed so that a piece keeps its colour."""
    least = 1 if name == "yinsh" else 2
    for seed in range(40):
        states, tokens = a_game_to_a_turns_end(name, seed, plies)
        first = last_turn(states)
        with_law = name != "yinyang" or any(t.startswith("L") for t in tokens[first - 1 :])
        if not states[-1].is_terminal() and len(tokens) - first + 1 >= least and with_law:
            break
    else:
        raise AssertionError("no game of 40 ended a turn of several decisions")
    turn = tokens[first - 1 :]
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    page.locator("details#files summary").click()
    page.locator("[data-testid=load-text]").fill("\n".join([f"# Game: {name}", *tokens]))
    page.locator("[data-testid=load-record]").click()
    page.locator("[data-testid=file-status]").filter(has_text="Replaying").wait_for()
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=moves] > *').length === {len(tokens)}",
        timeout=MOVE_TIMEOUT,
    )
    marked = set(
        page.eval_on_selector_all(
            "[data-square][data-last=true]", "nodes => nodes.map(n => n.dataset.square)"
        )
    )
    named = {square for token in turn for square in re.findall(r"[a-q](?:1[01]|[1-9])", token)}
    assert named <= marked, (turn, named - marked)
    if name == "yinyang":  # a law applied or rewritten (or revealed): its card is marked
        cards = page.eval_on_selector_all(
            "[data-place][data-last=true]", "nodes => nodes.map(n => n.dataset.place)"
        )
        was, now = law_cards(states[first - 1]), law_cards(states[-1])
        colour = "bw"[states[first - 1].to_move()]
        used = {
            f"law-{colour}{number}"
            for token in turn
            for number in re.findall(r"(?:^|:)L(\d)[@=]", token)
        }
        assert used, turn  # this turn applied a law
        assert set(cards) == used | {c for c in was if was[c] != now[c]}, (turn, cards)
    if name == "yinsh":
        was, now = yinsh_cells(states[first - 1]), yinsh_cells(states[-1])
        changed = {p for p in was.keys() | now.keys() if was.get(p) != now.get(p)}
        assert marked == named | changed, (turn, marked ^ (named | changed))
    if name == "yoxii":
        from games.yoxii import SQUARE_NAMES, YoxiiState

        before = states[first - 1]
        assert isinstance(before, YoxiiState)
        assert SQUARE_NAMES[before.totem()] in marked  # where the Totem left
    # a ring, not a fill: the piece under the mark keeps its colour
    style = page.eval_on_selector(
        "[data-square][data-last=true]",
        "n => [getComputedStyle(n).fill, getComputedStyle(n).strokeDasharray]",
    )
    assert style[0] in ("none", "transparent", "rgba(0, 0, 0, 0)"), style
    assert style[1] not in ("none", ""), style


def test_the_opponents_last_turn_stays_marked_while_a_turn_goes_on(
    server: ServerThread, page: Page
) -> None:
    """Yohoho: after the first sub-move of a turn, the places of the opponent's whole last
    turn are still marked, beside those of the sub-move."""
    for seed in range(40):
        states, tokens = a_game_to_a_turns_end("yohoho", seed, 9)
        going_on = states[-1].copy()
        if going_on.is_terminal():
            continue
        move = going_on.legal_moves()[0]
        first_step = going_on.move_to_str(move)
        going_on.push(move)
        if not going_on.is_terminal() and going_on.to_move() == states[-1].to_move():
            break
    else:
        raise AssertionError("no game of 40 had a turn of two decisions to begin")
    previous = tokens[last_turn(states) - 1 :]
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    replay_text(page, "\n".join(["# Game: yohoho", *tokens, first_step]))
    page.locator("[data-testid=file-status]").filter(
        has_text=f"Replaying {len(tokens) + 1} moves."
    ).wait_for(timeout=MOVE_TIMEOUT)
    marked = set(
        page.eval_on_selector_all(
            "[data-square][data-last=true]", "nodes => nodes.map(n => n.dataset.square)"
        )
    )
    named = {sq for token in [*previous, first_step] for sq in re.findall(r"[a-q][1-9]", token)}
    assert named <= marked, (previous, first_step, named - marked)


# -- levels and how to play ---------------------------------------------------------------------


def test_the_level_picker_offers_the_bots_levels_by_name_and_elo(
    server: ServerThread, page: Page
) -> None:
    from bots.levels import ELO, LEVELS

    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    page.locator("[data-testid=game-select]").select_option("yoxii")
    page.locator("[data-testid=opponent-select]").select_option("bot:alphabeta")
    offered = page.locator("[data-testid=level-select] option").all_text_contents()
    figures = ELO["yoxii"]
    assert offered == [
        f"{x.number} {x.name}, Elo {figures[x.number][0]} ± {figures[x.number][1]}"
        for x in reversed(LEVELS)
    ]
    page.locator("[data-testid=level-select]").select_option("1")
    page.locator("[data-testid=new-game]").click()
    page.wait_for_function("() => location.search.includes('Level')", timeout=MOVE_TIMEOUT)
    assert "opponent=bot%3Aalphabeta%3ALevel%3D1" in page.url
    # a bot without levels: no list
    page.locator("[data-testid=opponent-select]").select_option("bot:random")
    assert page.locator("[data-testid=level-select]").is_hidden()
    # a link's level is the list's
    page.goto(f"{base(server)}?game=yoxii&opponent=bot:alphabeta:Depth=3,Level=2&side=p1")
    page.wait_for_selector("[data-testid=board] [data-square]")
    assert page.locator("[data-testid=level-select]").input_value() == "2"
    assert page.locator("[data-testid=bot-options]").input_value() == "Depth=3"


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_how_to_play_is_one_click_from_the_game(
    server: ServerThread, page: Page, name: str
) -> None:
    page.goto(f"{base(server)}?game={name}&opponent=human")
    page.wait_for_selector("[data-testid=board] [data-square]")
    page.locator("[data-testid=how-to-play]").click()
    rules = page.locator("[data-testid=rules]")
    rules.locator("h2").wait_for()
    assert rules.is_visible()
    assert rules.get_attribute("data-game") == name
    text = str(rules.text_content())
    assert "Common mistakes" in text
    assert "cannot be drawn" not in text
    # opened at its title, not scrolled to its end
    assert page.evaluate("document.querySelector('#rules-dialog').scrollTop") == 0
    assert page.evaluate("document.activeElement.id") == "rules-title"
    # its diagrams are drawn by the game's own board, as pictures: the board's hooks stay the
    # board's alone
    figures = rules.locator("figure svg")
    assert figures.count() >= 2
    for i in range(figures.count()):
        assert figures.nth(i).locator(".sq").count() > 0
    assert rules.locator("[data-square], [data-choice]").count() == 0
    page.keyboard.press("Escape")
    rules.wait_for(state="hidden")


def test_the_status_line_follows_the_steps_of_a_move(server: ServerThread, page: Page) -> None:
    """After a ring is picked the line says where it goes, not "move a ring" still; a Yoxii
    square picked asks for the value."""
    state = games.load("yinsh").new_state()
    rng = random.Random(2)
    while not re.fullmatch(r"[a-k]\d+-[a-k]\d+", state.move_to_str(state.legal_moves()[0])):
        moves = state.legal_moves()
        state.push(moves[rng.randrange(len(moves))])
    query = urllib.parse.urlencode({"game": "yinsh", "opponent": "human", "position": str(state)})
    page.goto(f"{base(server)}?{query}")
    status = page.locator("[data-testid=status]")
    status.filter(has_text="move a ring").wait_for(timeout=MOVE_TIMEOUT)
    ring = page.locator("[data-legal=true]").first
    square = ring.get_attribute("data-square")
    ring.click()
    assert (
        status.text_content()
        == f"White: move the ring on {square}: click where it goes (Escape cancels)"
    )
    page.keyboard.press("Escape")
    assert status.text_content() == "White: move a ring"
    # Yoxii: the Totem moved, a square picked: its value next
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.locator("[data-legal=true]").first.click()
    status.filter(has_text="place a piece").wait_for(timeout=MOVE_TIMEOUT)
    target = page.locator("[data-legal=true]").first
    square = target.get_attribute("data-square")
    target.click()
    assert f"a piece on {square}: pick its value" in str(status.text_content())


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_a_phone_holds_the_board_and_controls_and_taps_play(
    server: ServerThread, browser: Browser, name: str
) -> None:
    """On a 390x844 phone screen (Chromium's mobile emulation, touch) nothing scrolls
    sideways, the board fits the width, and taps play moves."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    try:
        phone = context.new_page()
        phone.goto(f"{base(server)}?game={name}&opponent=human")
        phone.wait_for_selector("[data-testid=board] [data-square]")
        wide = phone.evaluate(
            "() => [...document.querySelectorAll('body *')].filter(e => e.checkVisibility() &&"
            " e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)"
            ".map(e => e.tagName + '#' + e.id)"
        )
        assert wide == []
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        board = phone.locator("[data-testid=board]").bounding_box()
        assert board is not None
        assert board["x"] >= 0
        assert board["x"] + board["width"] <= 390
        phone.locator("[data-testid=how-to-play]").tap()
        rules = phone.locator("#rules-dialog")
        rules.wait_for()
        box = rules.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 390
        phone.keyboard.press("Escape")
        # a decision by taps (the compose form of Yin Yang's setup by its buttons)
        if name == "yinyang":
            phone.locator("[data-testid=compose] [data-choice=random]").tap()
            phone.locator("[data-testid=compose] [data-choice=submit]").tap()
        else:
            for _ in range(4):
                if phone.locator("[data-testid=moves] > *").count():
                    break
                targets = phone.locator("[data-legal=true], [data-testid=choices] [data-choice]")
                targets.first.tap()
                phone.wait_for_function("() => document.body.dataset.state !== 'busy'")
        phone.wait_for_function(
            "() => document.querySelectorAll('[data-testid=moves] > *').length >= 1",
            timeout=MOVE_TIMEOUT,
        )
    finally:
        context.close()


def tab_to(page: Page, selector: str, presses: int = 80) -> None:
    """Press Tab until the focus is on an element matching ``selector``."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_yin_yang_by_the_keyboard_only(server: ServerThread, page: Page) -> None:
    """The law editor, How to play and the board, each reached with Tab and used with Enter."""
    page.goto(f"{base(server)}?game=yinyang&opponent=bot:alphabeta:Depth=2&side=p2")
    page.wait_for_selector("[data-testid=compose] [data-choice=random]", timeout=MOVE_TIMEOUT)
    tab_to(page, "[data-testid=how-to-play]")
    page.keyboard.press("Enter")
    page.locator("[data-testid=rules] h2").wait_for()
    page.keyboard.press("Escape")
    page.locator("[data-testid=rules]").wait_for(state="hidden")
    tab_to(page, "[data-testid=compose] [data-choice=random]")
    page.keyboard.press("Enter")
    tab_to(page, "[data-testid=compose] [data-choice=submit]")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length >= 2",
        timeout=MOVE_TIMEOUT,
    )
    if not wait_for_turn(page):
        pytest.skip("White's random laws left it no move")
    before = moves_count(page)
    # a piece move (two places) or a law (a button, then a place, maybe more): each Enter
    # keeps the focus where it was, and Tab goes on from there
    for _ in range(8):
        tab_to(page, "[data-legal=true], [data-testid=choices] [data-choice]")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.body.dataset.state !== 'busy'")
        if moves_count(page) > before:
            break
        assert page.evaluate("document.activeElement !== document.body"), "the focus was lost"
    assert moves_count(page) > before


def test_the_marks_differ_in_shape_not_only_in_colour(server: ServerThread, page: Page) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.locator("[data-legal=true]").first.click()  # the Totem moves: the last turn marked
    page.wait_for_function("() => document.body.dataset.state === 'person'")
    shape = (
        "s => { const c = getComputedStyle(document.querySelector(s));"
        " return [c.strokeWidth, c.strokeDasharray]; }"
    )
    shapes = {"legal": tuple(page.evaluate(shape, "[data-legal=true]"))}
    page.locator("[data-legal=true]").first.click()  # a square picked: its value next
    for mark in ("picked", "last"):
        shapes[mark] = tuple(page.evaluate(shape, f"[data-{mark}=true]"))
    assert len(set(shapes.values())) == 3, shapes


def test_the_analysis_shows_several_lines_numbered_on_the_board_and_every_root_move(
    server: ServerThread, page: Page
) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.wait_for_selector("[data-testid=board] [data-square]")
    page.locator("[data-testid=analysis-lines]").select_option("3")
    page.locator("[data-testid=analyse]").click()
    analysis = page.locator("[data-testid=analysis]")
    analysis.filter(has_text="line 3: score").wait_for(timeout=MOVE_TIMEOUT)
    # each line's first move is numbered on its places
    page.wait_for_function(
        "() => ['2', '3'].every(n => [...document.querySelectorAll('.line-label')]"
        ".some(l => l.textContent === n))",
        timeout=MOVE_TIMEOUT,
    )
    page.locator("[data-testid=stop]").click()
    analysis.filter(has_text="root moves:").wait_for(timeout=MOVE_TIMEOUT)
    text = str(analysis.text_content())
    roots = text.split("root moves: ")[1].split("\n", maxsplit=1)[0].split(", ")
    assert (
        "(on the board: ★ the best, + the upper third of the rest, = the middle, \u2212 the lower)"
        in text
    )
    # Yoxii's first decision: the Totem's eight steps from d4
    assert len(roots) == 8, roots
    assert len({root.split(" ")[0] for root in roots}) == 8
    # each coloured on its place by its rank: one best, the rest in thirds
    bands = page.eval_on_selector_all(
        "[data-score]", "nodes => nodes.map(n => [n.dataset.square, n.dataset.score])"
    )
    assert sorted(square for square, _ in bands) == sorted(r.split(" ")[0] for r in roots)
    assert [band for square, band in bands if square == roots[0].split(" ")[0]] == ["best"]
    assert sum(band == "best" for _, band in bands) == 1
    assert {band for _, band in bands} <= {"best", "good", "fair", "poor"}
    # and by a sign on it, not by its colour alone
    signs = page.eval_on_selector_all(
        "[data-score]",
        "nodes => nodes.map(n => [n.dataset.score,"
        " document.querySelector(`[data-sign='${n.dataset.square}']`).textContent])",
    )
    sign_of = {"best": "★", "good": "+", "fair": "=", "poor": "\u2212"}
    assert all(sign == sign_of[band] for band, sign in signs), signs
    # a move played: the marks of the old position go
    page.locator("[data-legal=true]").first.click()
    page.wait_for_function("() => !document.querySelector('[data-score]')")


def test_a_yoxii_value_is_picked_from_the_stock_beside_the_board(
    server: ServerThread, page: Page
) -> None:
    """The stock pieces are the value's buttons too, where the eye already is; before a square
    is picked they are not offered."""
    page.goto(f"{base(server)}?game=yoxii&opponent=human")
    page.locator("[data-legal=true]").first.click()  # the Totem
    page.wait_for_function("() => document.body.dataset.state === 'person'")
    stock = page.locator("[data-testid=board] g[data-choice='2']")
    assert stock.get_attribute("data-legal") is None
    square = page.locator("[data-legal=true][data-square]").first
    name = square.get_attribute("data-square")
    square.click()
    assert stock.get_attribute("data-legal") == "true"
    stock.click()
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length === 2",
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=moves] > *").nth(1).text_content() == f"2@{name}"
    # the values are offered beside the square picked too, and the keyboard goes to them
    page.locator("[data-legal=true][data-square]").first.click()  # the other side's Totem
    page.wait_for_function("() => document.body.dataset.state === 'person'")
    name = str(page.locator("[data-legal=true][data-square]").first.get_attribute("data-square"))
    square = page.locator(f"[data-testid=board] [data-square='{name}']")
    assert page.locator("[data-chip]").count() == 0
    square.focus()
    page.keyboard.press("Enter")
    chips = page.locator("[data-testid=board] [data-chip]")
    assert sorted(chips.evaluate_all("cs => cs.map(c => c.dataset.chip)")) == ["1", "2", "3", "4"]
    assert page.evaluate("document.activeElement.dataset.chip") == "1"
    placed, chip = square.bounding_box(), chips.nth(2).bounding_box()
    assert placed is not None
    assert chip is not None
    near = abs(chip["y"] - placed["y"]) + abs(chip["x"] - placed["x"])
    assert near < 3 * placed["height"], (placed, chip)
    chips.nth(2).click()
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=moves] > *').length === 4",
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=moves] > *").nth(3).text_content() == f"3@{name}"
    assert page.locator("[data-chip]").count() == 0


# -- what an attacker of the page tried -----------------------------------------------------


def replay_text(page: Page, text: str) -> None:
    """Replay the record ``text`` as if pasted: the box's value is set at once (Playwright's
    ``fill`` types a text of thousands of lines for tens of seconds on a busy machine)."""
    page.locator("details#files").evaluate("details => { details.open = true; }")
    page.locator("[data-testid=load-text]").evaluate(
        "(box, text) => { box.value = text; box.dispatchEvent(new Event('input')); }", text
    )
    page.locator("[data-testid=load-record]").click()


def test_a_bad_record_while_the_bot_thinks_costs_the_game_nothing(
    server: ServerThread, page: Page
) -> None:
    page.goto(f"{base(server)}?game=yoxii&opponent=bot:alphabeta:Depth=7&side=p2&tc=60+1")
    page.wait_for_function("() => document.body.dataset.state === 'bot'", timeout=MOVE_TIMEOUT)
    replay_text(page, "# Game: yoxii\nz9\n")
    page.locator("[data-testid=file-status]").filter(has_text="Cannot replay").wait_for()
    # the bot's move on its way is taken, and the person is to act
    page.wait_for_function("() => document.body.dataset.state === 'person'", timeout=MOVE_TIMEOUT)
    assert moves_count(page) == 2


def test_a_move_longer_than_the_server_line_limit_is_refused_and_the_page_goes_on(
    server: ServerThread, page: Page
) -> None:
    """A record or position whose request would be over the server's line limit (which would
    end the connection, error 102) is not sent: the page says why, and its game and its own
    session go on."""
    page.goto(f"{base(server)}?game=yoxii&opponent=bot:random&side=p1")
    page.wait_for_function("() => document.body.dataset.state === 'person'", timeout=MOVE_TIMEOUT)
    status = page.locator("[data-testid=file-status]")
    replay_text(page, "# Game: yoxii\n" + "x" * 70_000 + "\n")
    status.filter(has_text="over the server's limit of 65,536 bytes a line").wait_for()
    # a bad position (too long to send, or refused by the server) costs the game in play nothing
    page.locator("[data-testid=load-text]").fill("3/5/7/" + "7" * 70_000 + " w t w:5553 b:5553")
    page.locator("[data-testid=load-position]").click()
    status.filter(has_text="over the server's limit of 65,536 bytes a line").wait_for()
    page.locator("[data-testid=load-text]").fill("3/5/7/" + "7" * 30_000 + " w t w:5553 b:5553")
    page.locator("[data-testid=load-position]").click()
    status.filter(has_text="Cannot play from this position: position").wait_for()
    page.locator("[data-testid=load-text]").fill("3/5/7/3T3/7/5/3 w t w:5553 b:5553\nquit")
    page.locator("[data-testid=load-position]").click()
    status.filter(has_text="A position string is one line").wait_for()
    assert page.evaluate("document.body.dataset.state") == "person"
    # positions a plain session takes but a game's address does not (a finished one, one with
    # moves after it): the server refuses the new game, and the game in play goes on
    tokens, _ = a_finished_game("yoxii", 2)
    finished = games.replay(games.load("yoxii"), None, tokens).to_string()
    start = games.load("yoxii").new_state().to_string()
    played = moves_count(page)
    for position in (finished, f"{start} moves d5"):
        page.locator("[data-testid=load-text]").fill(position)
        page.locator("[data-testid=load-position]").click()
        page.locator("[data-testid=status]").filter(has_text="The game in play goes on").wait_for(
            timeout=MOVE_TIMEOUT
        )
        assert page.evaluate("document.body.dataset.state") == "person"
        assert moves_count(page) == played
    page.locator("[data-testid=board] [data-legal=true]").first.click()
    replay_text(page, "\n".join(["# Game: yoxii", *tokens]))
    status.filter(has_text=f"Replaying {len(tokens)} moves.").wait_for(timeout=MOVE_TIMEOUT)


LONG_LIST = (
    "b.ww/bwww/bwbw/bbbw b start +b.bw>*,-bwbw>*,+bwbb>bwb.,-.bw.>bbwb"
    " -b..w>...w,-.bbw>.b.w,-..b.>.wbw,-.b..>wb.w 8 10 5"
)
"""A Yin Yang position whose 4,865 moves (two adaptations, each rewriting any law) are longer
than a reply: its one piece move, a4-b4, sorts last."""


def test_a_move_list_longer_than_a_reply_is_gathered_and_played(
    server: ServerThread, page: Page
) -> None:
    """The page gathers a list the server cuts (`query moves start K`), so that the moves at
    its end can be played, and it never takes such a list for the law editor's setup."""
    query = urllib.parse.urlencode({"game": "yinyang", "opponent": "human", "position": LONG_LIST})
    page.goto(f"{base(server)}?{query}")
    ready = page.locator("[data-testid=handover-ready]")
    page.wait_for_function(
        "() => ['person', 'handover'].includes(document.body.dataset.state)", timeout=MOVE_TIMEOUT
    )
    if ready.is_visible():
        ready.click()
    page.locator("[data-testid=board] [data-square=a4][data-legal=true]").click()
    page.locator("[data-testid=board] [data-square=b4][data-legal=true]").click()
    page.locator("[data-testid=moves] > *").first.wait_for(timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=moves] > *").all_text_contents() == ["a4-b4"]
    assert page.locator("[data-testid=compose] *").count() == 0


def test_records_too_long_or_with_two_moves_a_line_are_refused_and_long_ones_replay(
    server: ServerThread, page: Page
) -> None:
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    status = page.locator("[data-testid=file-status]")
    replay_text(page, "# Game: yoxii\n" + "c5\n" * 4001)
    status.filter(has_text="4001 moves, more than the 4000").wait_for()
    replay_text(page, "# Game: yoxii\nc5\nd4 4@d3\n")
    status.filter(has_text="line 3: one move a line").wait_for()
    # a long real game replays whole (its requests stay small)
    for seed in range(50):
        tokens, _ = a_finished_game("yohoho", seed)
        if len(tokens) > 1200:
            break
    else:
        pytest.skip("no Yohoho game of random moves went past 1200 plies")
    replay_text(page, "\n".join(["# Game: yohoho", *tokens]))
    status.filter(has_text=f"Replaying {len(tokens)} moves.").wait_for(timeout=60_000)
    assert moves_count(page) == len(tokens)


def test_record_headers_named_like_object_properties_are_plain_text(
    server: ServerThread, page: Page
) -> None:
    """A stated result whose reason is `__proto__`, `constructor` or `toString` is shown as
    it is; the page fixture fails the test on any page error."""
    for reason in ("__proto__", "constructor", "toString", "hasOwnProperty"):
        page.goto(base(server))
        page.wait_for_selector("[data-testid=game-select] option", state="attached")
        replay_text(page, f"# Game: yoxii\n# __proto__: x\n# Result: p1\n# Reason: {reason}\nc5\n")
        page.locator("[data-testid=file-status]").filter(has_text="Replaying 1 moves.").wait_for()
        assert page.locator("[data-testid=result]").text_content() == f"White wins ({reason})."
    # a direction control in a record's names or reason cannot turn the page's text around
    record = "# Game: yoxii\n# P1: \u202eevil\n# P2: bob\n# Result: draw\n# Reason: \u202ex\nc5\n"
    replay_text(page, record + record)
    page.locator("[data-testid=file-status]").filter(has_text="Replaying 1 moves.").wait_for()
    shown = [
        str(page.locator("[data-testid=result]").text_content()),
        *page.locator("#record-choice option").all_text_contents(),
    ]
    assert all("\u202e" not in text for text in shown), shown
    assert "\ufffdx" in shown[0], shown
    assert "\ufffdevil" in shown[1], shown


def test_replays_and_an_analysis_in_quick_succession_end_right(
    server: ServerThread, page: Page
) -> None:
    yoxii = ["# Game: yoxii", *a_finished_game("yoxii", 1)[0]]
    yohoho_moves = a_finished_game("yohoho", 2)[0][:40]
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    replay_text(page, "\n".join(yoxii))
    page.locator("[data-testid=file-status]").filter(has_text="Replaying").wait_for()
    # another game's record, and an analysis asked for while it replays
    page.locator("[data-testid=load-text]").fill("\n".join(["# Game: yohoho", *yohoho_moves]))
    page.locator("[data-testid=load-record]").click()
    page.locator("[data-testid=analyse]").click()
    page.locator("[data-testid=file-status]").filter(
        has_text=f"Replaying {len(yohoho_moves)} moves."
    ).wait_for(timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=moves] > *").all_text_contents() == yohoho_moves
    # the analysis asked for ran on whichever position was shown then, or found it over
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stop]').disabled"
        " || !document.querySelector('[data-testid=analyse]').disabled",
        timeout=MOVE_TIMEOUT,
    )
    if page.locator("[data-testid=stop]").is_enabled():
        page.locator("[data-testid=stop]").click()
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=analyse]').disabled", timeout=MOVE_TIMEOUT
    )
    # two replays at once: the last one asked for is shown
    page.locator("[data-testid=load-text]").fill("\n".join(yoxii))
    page.locator("[data-testid=load-record]").click()
    page.locator("[data-testid=load-text]").fill("\n".join(["# Game: yohoho", *yohoho_moves]))
    page.locator("[data-testid=load-record]").click()
    page.locator("[data-testid=file-status]").filter(
        has_text=f"Replaying {len(yohoho_moves)} moves."
    ).wait_for(timeout=MOVE_TIMEOUT)
    page.wait_for_timeout(500)  # the first replay, had it not been dropped, would land now
    assert page.locator("[data-testid=game-select]").input_value() == "yohoho"
    assert page.locator("[data-testid=moves] > *").all_text_contents() == yohoho_moves


def test_a_refused_game_leaves_nothing_to_click(server: ServerThread, page: Page) -> None:
    """A game the server refuses is not started: with none in play there is nothing to
    click; with one in play, that game goes on as it was."""
    assert page.goto(base(server)) is not None
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    assert page.evaluate("document.body.dataset.state") == "idle"
    status = page.locator("[data-testid=status]")

    def ask_for_a_refused_game() -> None:
        page.locator("[data-testid=game-select]").select_option("yoxii")
        page.locator("[data-testid=opponent-select]").select_option("bot:alphabeta")
        page.locator("[data-testid=bot-options]").fill("Seed=1")
        page.locator("[data-testid=new-game]").click()
        status.filter(has_text="'Seed' is the server's to set").wait_for(timeout=MOVE_TIMEOUT)

    ask_for_a_refused_game()
    page.wait_for_function("() => document.body.dataset.state === 'idle'")
    assert page.locator("[data-legal=true]").count() == 0
    # the bot thinks on its turn (a Yoxii turn: two decisions) while the refused game is asked for
    page.goto(f"{base(server)}?game=yoxii&opponent=bot:alphabeta:Depth=6&side=p2")
    page.wait_for_function("() => document.body.dataset.state === 'bot'", timeout=MOVE_TIMEOUT)
    ask_for_a_refused_game()
    page.wait_for_function("() => document.body.dataset.state === 'person'", timeout=MOVE_TIMEOUT)
    # the bot's move is drawn, and the reason stays on the line a while over the game's hint
    assert "The game in play goes on" in str(status.text_content())
    assert moves_count(page) == 2
    assert page.locator("[data-legal=true]").count() > 0
    page.locator("[data-testid=board] [data-legal=true]").first.click()  # the person goes on
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=status]').textContent.includes('goes on')",
        timeout=MOVE_TIMEOUT,
    )


def test_the_watch_page_of_a_match_draws_its_standings_games_and_board(
    page: Page, tmp_path: Path
) -> None:
    """`enginesrv match ... --web 0`: the page lists the games as they are played, the
    standings, and draws the game followed; a click on a game follows it."""
    need_chromium()
    command = [
        sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "name=a:bot:random",
        "name=b:bot:random", "--games", "4", "--st", "0.3", "--concurrency", "2", "--web", "0",
        "--out", str(tmp_path / "event"),
    ]  # fmt: skip
    with stopping(subprocess.Popen(command, stdout=subprocess.PIPE, text=True), 30) as match:
        first = line_within(match)
        assert first.startswith("web http://"), first
        page.goto(first.split(" ", 1)[1].strip())
        page.locator("[data-testid=standings]").wait_for(timeout=MOVE_TIMEOUT)
        page.locator("[data-testid=board] [data-square]").first.wait_for(timeout=MOVE_TIMEOUT)
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=games] button').length >= 2",
            timeout=MOVE_TIMEOUT,
        )
        assert page.evaluate("document.body.dataset.state") == "watching"
        heading = str(page.locator("#watch h2").text_content())
        assert "Yoxii" in heading
        # the newest game is listed first, so the nth button can change under the test: the
        # game clicked is named by its number
        game = page.locator("[data-testid=games] button").nth(1).get_attribute("data-game")
        other = page.locator(f"[data-testid=games] button[data-game='{game}']")
        other.click()
        page.wait_for_function(
            f"() => document.querySelector(\"[data-testid=games] button[data-game='{game}']\")"
            ".getAttribute('aria-current') === 'true'",
            timeout=MOVE_TIMEOUT,
        )
        assert "vs" in str(other.text_content())


def test_a_replayed_game_analysed_whole_has_a_graph_and_its_mistakes_marked(
    server: ServerThread, page: Page
) -> None:
    """ "Analyse this game" on a replayed record: one point a ply on the graph, each move
    marked as `enginesrv analyse` would by the drop of the mover's winning chance; a click on
    a point shows that ply; a new replay takes the graph away."""
    tokens, _ = a_finished_game("yoxii", 3)
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    assert page.locator("[data-testid=review]").is_disabled()
    replay_text(page, "\n".join(["# Game: yoxii", *tokens]))
    page.locator("[data-testid=file-status]").filter(has_text="Replaying").wait_for()
    page.locator("[data-testid=review]").click()
    status = page.locator("[data-testid=review-status]")
    status.filter(has_text="Analysed").wait_for(timeout=60_000)
    graph = page.locator("[data-testid=eval-graph]")
    assert graph.locator("> *").count() == len(tokens)
    assert graph.locator("[tabindex]").count() == 0  # ← and → step through, not a tab stop a ply
    marked = graph.locator("[data-mark]").evaluate_all(
        "dots => dots.map(d => [Number(d.dataset.ply), d.dataset.mark])"
    )
    assert marked, "a game of random moves has no mistake"
    assert all(mark in ("?!", "?", "??") for _, mark in marked)
    listed = page.locator("[data-testid=moves] > [data-mark]").evaluate_all(
        "items => items.map(i => [Number(i.dataset.ply), i.dataset.mark])"
    )
    assert listed == marked
    counts = str(status.text_content())
    assert f"{sum(m == '??' for _, m in marked)} ??" in counts
    graph.locator("[data-ply='3']").click()
    assert (
        page.locator("[data-testid=moves] > [aria-current=true]").get_attribute("data-ply") == "3"
    )
    replay_text(page, "\n".join(["# Game: yoxii", *tokens[:6]]))
    page.locator("[data-testid=file-status]").filter(has_text="Replaying 6 moves.").wait_for()
    assert graph.count() == 0
    # a long game's analysis is stopped by Stop, and the page goes on
    long_tokens, _ = a_finished_game("yohoho", 1)
    replay_text(page, "\n".join(["# Game: yohoho", *long_tokens]))
    page.locator("[data-testid=file-status]").filter(
        has_text=f"Replaying {len(long_tokens)} moves."
    ).wait_for(timeout=60_000)
    page.locator("[data-testid=review]").click()
    status.filter(has_text="Analysing").wait_for()
    page.locator("[data-testid=stop]").click()
    status.filter(has_text="stopped").wait_for(timeout=MOVE_TIMEOUT)
    replay_text(page, "\n".join(["# Game: yoxii", *tokens]))
    page.locator("[data-testid=file-status]").filter(
        has_text=f"Replaying {len(tokens)} moves."
    ).wait_for(timeout=MOVE_TIMEOUT)


def test_a_game_analysed_in_the_page_is_judged_as_enginesrv_analyse_judges_it(
    server: ServerThread, page: Page
) -> None:
    """The page's losses, marks and accuracy table are those `enginesrv analyse`'s own judge
    (enginesrv.analyse.report) gives from the very scores the page received; the last move of
    a record that stops before the end is not judged, as there; a forced move's position is
    scored too."""
    from bots.eval import evaluator_for
    from enginesrv.analyse.plies import plies_of
    from enginesrv.analyse.report import judge_game
    from enginesrv.event.play.records import parse_record

    lines: list[str] = []

    def listen(socket: WebSocket) -> None:
        def take(payload: str | bytes) -> None:
            if isinstance(payload, str):
                lines.extend(payload.splitlines())

        socket.on("framereceived", take)

    page.on("websocket", listen)
    page.goto(base(server))
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    tokens, _ = a_finished_game("yoxii", 5)
    game = games.load("yoxii")
    status = page.locator("[data-testid=review-status]")
    for shown in (tokens, tokens[:-3]):
        lines.clear()
        text = "\n".join(["# Game: yoxii", *shown])
        replay_text(page, text)
        page.locator("[data-testid=file-status]").filter(
            has_text=f"Replaying {len(shown)} moves."
        ).wait_for(timeout=MOVE_TIMEOUT)
        page.locator("[data-testid=review-limit]").select_option("depth 3")
        page.locator("[data-testid=review]").click()
        status.filter(has_text="Analysed at depth 3").wait_for(timeout=60_000)
        record = plies_of(game, parse_record(text + "\n"), "test")
        answered = re.findall(r"^analysisok id ply(\d+) ", "\n".join(lines), re.M)
        assert sorted(map(int, answered)) == list(range(len(shown) + 1))
        found = _scores_received(lines, record)
        forced = [
            p for p in record.plies if len(game.state_from_string(p.position).legal_moves()) < 2
        ]
        assert forced, "this game has a forced move: its position is scored too"
        assert all(ply.position in found for ply in record.plies)
        judged = judge_game(record, found, evaluator_for("yoxii").expectation_scale)
        dots = page.locator("[data-testid=eval-graph] > *").evaluate_all(
            "dots => dots.map(d => [d.dataset.mark || null, d.dataset.loss ?? null])"
        )
        assert len(dots) == len(shown)
        for ply, ((mark, loss), want) in enumerate(zip(dots, judged, strict=True), 1):
            if want.verdict is None:
                assert loss is None, f"ply {ply} judged, and enginesrv analyse does not"
                continue
            assert loss is not None, f"ply {ply} not judged"
            assert float(loss) == pytest.approx(want.verdict.loss, abs=1e-9), ply
            assert mark == want.verdict.mark, ply
        if len(shown) < len(tokens):
            assert dots[-1][1] is None
        _check_summary(page, record, judged)


def _scores_received(lines: list[str], record: AnalysedGame) -> dict[str, Found]:
    """The best line's score of each ply's position, from the `analysisinfo` lines the page
    received (by their ids ``plyN``), as `enginesrv analyse`'s search would have found it."""
    from bots.engine import Score
    from enginesrv.analyse.search import Found

    found: dict[str, Found] = {}
    for line in lines:
        hit = re.match(r"analysisinfo id ply(\d+) .*? multipv 1 score (cp|win|loss) (-?\d+)", line)
        if hit and int(hit[1]) < len(record.plies):
            score = Score(hit[2], int(hit[3]))  # type: ignore[arg-type]
            found[record.plies[int(hit[1])].position] = Found(score, "", (), 3)
    return found


def _check_summary(page: Page, record: AnalysedGame, judged: list[Judged]) -> None:
    """The page's accuracy table says what `enginesrv analyse`'s summary of each seat does."""
    from enginesrv.analyse.judge import summarise

    for seat in (0, 1):
        mine = [
            j.verdict
            for ply, j in zip(record.plies, judged, strict=True)
            if ply.mover == seat and j.verdict is not None
        ]
        want = summarise(str(seat), mine)
        row = page.locator(f"[data-testid=review-summary] [data-seat='{seat}']")
        shown = {
            name: row.locator(f"[data-field='{name}']").text_content()
            for name in ("moves", "accuracy", "loss", *want.marks)
        }
        assert shown == {
            "moves": str(want.moves),
            "accuracy": f"{want.accuracy:.1f}",
            "loss": f"{want.mean_loss:.1f}",
            **{sign: str(count) for sign, count in want.marks.items()},
        }, seat

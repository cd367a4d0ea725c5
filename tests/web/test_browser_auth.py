"""Signing in on the page of a server that takes tokens (``enginesrv serve --web --tokens``;
docs/web.md, "Signing in"), in Debian's chromium driven by Playwright: the form, a refused
token, a game once signed in, where the token is kept (the tab's session storage only: in no
address, no link, no lasting storage, no cookie), a reload, signing out, a spectator, a token
revoked while the page is in use; and a server without tokens, whose page asks for none."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from enginesrv.tokens import TokenFile
from tests.processes import line_within, stopping
from tests.web.browser import ServerThread, need_chromium, server_thread
from tests.web.test_browser import (
    MOVE_TIMEOUT,
    browser,
    click_a_decision,
    moves_count,
    wait_for_turn,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, WebSocket

playwright_api = pytest.importorskip("playwright.sync_api")

__all__ = ["browser"]

KEY = "enginesrv-token"
"""The session storage's key of the page's token (app/signin.js)."""
GAME = "?game=yoxii&opponent=bot:random&side=p1"


@dataclass
class Tokened:
    """``enginesrv serve --web 0 --tokens FILE`` in a process of its own."""

    url: str
    file: TokenFile

    def token(self, name: str) -> str:
        """A new account's token as a person is given it, ``NAME:TOKEN``."""
        return f"{name}:{self.file.add(name)}"


@pytest.fixture(scope="module")
def tokened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tokened]:
    need_chromium()
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    file = TokenFile(path)
    file.add("operator")  # the file exists before the server reads it
    process = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--web", "0", "--tokens", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    with stopping(process, group=True):
        lines = [line_within(process).strip(), line_within(process).strip()]
        assert lines[1].startswith("web http://"), lines
        yield Tokened(lines[1].split()[1], file)


@dataclass
class Watched:
    """A page, what went wrong on it, and every WebSocket it opened with what it sent."""

    page: Page
    problems: list[str] = field(default_factory=list)
    sockets: list[tuple[str, list[str | bytes]]] = field(default_factory=list)

    def first_messages(self) -> list[str | bytes | None]:
        """The first message of each socket, once each has sent one (Playwright tells of a
        socket's frames a little after the page has gone on)."""
        for _ in range(100):
            if all(sent for _, sent in self.sockets):
                break
            self.page.wait_for_timeout(50)
        return [sent[0] if sent else None for _, sent in self.sockets]


@pytest.fixture
def pages(browser: Browser) -> Iterator[list[Watched]]:
    """``opened(pages)`` makes pages, each in a context (a tab's storage) of its own."""
    made: list[Watched] = []
    yield made
    for watched in made:
        watched.page.context.close()
    for watched in made:
        assert not watched.problems, watched.problems


def opened(browser: Browser, made: list[Watched]) -> Watched:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watched = Watched(context.new_page())
    made.append(watched)

    def socket(ws: WebSocket) -> None:
        sent: list[str | bytes] = []
        watched.sockets.append((ws.url, sent))

        def frame(payload: str | bytes) -> None:
            sent.append(payload)

        ws.on("framesent", frame)

    watched.page.on("websocket", socket)
    watched.page.on("pageerror", lambda error: watched.problems.append(f"page error: {error}"))
    watched.page.on(
        "console",
        lambda message: (
            watched.problems.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    watched.page.on("dialog", lambda shown: watched.problems.append(f"dialog: {shown.message}"))
    return watched


def kept(page: Page) -> str | None:
    value: str | None = page.evaluate(f"sessionStorage.getItem('{KEY}')")
    return value


def sign_in(page: Page, token: str) -> None:
    """Types ``token`` in the form, which has the focus, and presses Enter."""
    page.wait_for_selector("[data-testid=signin]", state="visible")
    assert page.evaluate("document.activeElement.id") == "signin-token"
    page.keyboard.type(token)
    page.keyboard.press("Enter")


def form_shown(page: Page) -> None:
    """Waits for the form to come back; if it does not, what the status line says."""
    try:
        page.wait_for_selector("[data-testid=signin-token]", state="visible", timeout=MOVE_TIMEOUT)
    except playwright_api.TimeoutError:
        status = page.locator("[data-testid=status]").text_content()
        raise AssertionError(f"no sign-in form; the status line says: {status}") from None


def assert_nowhere_but_the_tab(watched: Watched, token: str) -> None:
    """The token is in the tab's session storage and in the first message of each socket
    opened with it, and nowhere else the page shows or keeps."""
    page = watched.page
    secret = token.split(":", 1)[1]
    assert kept(page) == token
    assert secret not in page.url
    for url, _ in watched.sockets:
        assert secret not in url, url
    links: list[str] = page.evaluate("[...document.querySelectorAll('[href]')].map(a => a.href)")
    assert not [link for link in links if secret in link]
    stored: str = page.evaluate("JSON.stringify(Object.entries(localStorage))")
    assert secret not in stored
    assert secret not in page.evaluate("document.cookie")
    assert not [c for c in page.context.cookies() if secret in c["value"]]
    assert secret not in page.content()
    assert page.input_value("[data-testid=signin-token]") == ""  # the field was emptied


def test_signing_in_plays_a_game_and_keeps_the_token_in_the_tab_only(
    tokened: Tokened, browser: Browser, pages: list[Watched]
) -> None:
    token = tokened.token("alice")
    watched = opened(browser, pages)
    page = watched.page
    page.goto(tokened.url + GAME)
    # the form stands alone, its field focused; no socket is opened before there is a token
    page.wait_for_selector("[data-testid=signin-token]", state="visible")
    assert page.locator("label[for=signin-token]").text_content() == "Token (NAME:TOKEN)"
    assert page.get_attribute("[data-testid=signin-token]", "type") == "password"
    assert "enginesrv token add" in str(page.locator("[data-testid=signin]").text_content())
    assert page.locator("[data-testid=setup]").is_hidden()
    assert page.locator("[data-testid=board]").is_hidden()
    assert page.locator("[data-testid=sign-out]").is_hidden()
    assert watched.sockets == []

    wrong = "alice:" + "A" * 43
    sign_in(page, wrong)
    page.wait_for_function(
        "() => /not accepted/.test(document.querySelector('[data-testid=signin-problem]')"
        ".textContent)",
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=signin]").is_visible()
    assert kept(page) is None
    assert watched.first_messages() == [f"auth {wrong}"]

    sign_in(page, token)
    page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=signin]").is_hidden()
    assert page.locator("[data-testid=sign-out]").is_visible()
    assert "game=yoxii" in page.url  # the link the page was opened with
    assert wait_for_turn(page)
    click_a_decision(page, random.Random(1))
    # the lobby and the game: each socket's first message is the token, alone
    assert watched.first_messages()[1:] == [f"auth {token}"] * (len(watched.sockets) - 1)
    assert len(watched.sockets) >= 3
    assert_nowhere_but_the_tab(watched, token)

    before = len(watched.sockets)
    page.reload()
    page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    assert page.locator("[data-testid=signin]").is_hidden()
    assert kept(page) == token
    assert len(watched.sockets) >= before + 2  # the page's session and the game
    assert watched.first_messages()[before:] == [f"auth {token}"] * (len(watched.sockets) - before)

    page.locator("[data-testid=sign-out]").click()
    page.wait_for_selector("[data-testid=signin-token]", state="visible")
    assert kept(page) is None
    assert page.url == tokened.url
    assert page.evaluate("document.activeElement.id") == "signin-token"


def test_a_spectator_signs_in_to_watch_a_game_between_two_pages(
    tokened: Tokened, browser: Browser, pages: list[Watched]
) -> None:
    host = opened(browser, pages)
    token = tokened.token("bob")
    host.page.goto(tokened.url)
    sign_in(host.page, token)
    host.page.wait_for_selector("[data-testid=game-select] option", state="attached")
    host.page.locator("[data-testid=game-select]").select_option("yoxii")
    host.page.locator("[data-testid=invite]").click()
    host.page.wait_for_function(
        "() => /watch=/.test(document.querySelector('[data-testid=watch-link]').href)",
        timeout=MOVE_TIMEOUT,
    )
    link = str(host.page.locator("[data-testid=watch-link]").get_attribute("href"))
    assert_nowhere_but_the_tab(host, token)

    spectator = opened(browser, pages)
    spectator.page.goto(tokened.url.rstrip("/") + link)
    sign_in(spectator.page, tokened.token("carol"))
    spectator.page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    assert spectator.page.locator("[data-testid=watch]").is_visible()
    assert [url.split("?")[0].rsplit("/", 1)[1] for url, _ in spectator.sockets] == ["events"]
    assert spectator.first_messages() == [f"auth {kept(spectator.page)}"]


def test_a_token_refused_while_the_page_plays_is_asked_for_again(
    tokened: Tokened, browser: Browser, pages: list[Watched]
) -> None:
    """A refusal that is no revocation (here: the server cannot read its token file for a
    while, which revokes nothing) shows the form above the game, which goes on."""
    watched = opened(browser, pages)
    page = watched.page
    page.goto(tokened.url + GAME)
    sign_in(page, tokened.token("dave"))
    page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    with unreadable(tokened.file.path):
        page.locator("[data-testid=new-game]").click()
        # the form comes back above the game, which goes on, with the server's reason
        form_shown(page)
        assert "cannot read its tokens" in str(
            page.locator("[data-testid=signin-problem]").text_content()
        )
        assert page.evaluate("document.body.dataset.auth") == "again"
        assert page.locator("[data-testid=board]").is_visible()
        assert kept(page) is None
        page.wait_for_function(
            "() => /the game in play goes on/i.test(document.querySelector("
            "'[data-testid=status]').textContent)",
            timeout=MOVE_TIMEOUT,
        )
        # the server looks at the game's token every second: it is not taken for revoked
        page.wait_for_timeout(2500)
        assert wait_for_turn(page)
        played = moves_count(page)
        click_a_decision(page, random.Random(2))
        assert moves_count(page) == played + 1
        assert wait_for_turn(page)  # the game is still in play
        assert "closed" not in str(page.locator("[data-testid=status]").text_content())
    page.locator("[data-testid=signin-token]").click()  # back to the form, after playing
    new_game_with_a_new_token(tokened, watched)


def test_a_token_revoked_while_the_page_plays_ends_its_game_and_is_asked_for_again(
    tokened: Tokened, browser: Browser, pages: list[Watched]
) -> None:
    """The server closes a revoked token's sockets within a second, the game's with them
    (docs/security.md): the page says why, keeps the board in view and asks for a token."""
    watched = opened(browser, pages)
    page = watched.page
    page.goto(tokened.url + GAME)
    sign_in(page, tokened.token("frank"))
    page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    tokened.file.revoke("frank")
    form_shown(page)
    assert "the token was revoked" in str(
        page.locator("[data-testid=signin-problem]").text_content()
    )
    assert page.evaluate("document.body.dataset.auth") == "again"
    page.wait_for_function(
        "() => /closed: the token was revoked/.test(document.querySelector("
        "'[data-testid=status]').textContent)",
        timeout=MOVE_TIMEOUT,
    )
    assert page.locator("[data-testid=board]").is_visible()
    assert kept(page) is None
    new_game_with_a_new_token(tokened, watched)


def new_game_with_a_new_token(tokened: Tokened, watched: Watched) -> None:
    """Signs in again with a new account's token: New game starts a game with it."""
    page = watched.page
    before = len(watched.sockets)
    token = tokened.token(f"p{random.randrange(10**9)}")
    sign_in(page, token)
    assert page.locator("[data-testid=signin]").is_hidden()
    with page.expect_websocket(timeout=MOVE_TIMEOUT):
        page.locator("[data-testid=new-game]").click()
    # the new game starts (its start ends the refusal's notice) with the new token
    page.wait_for_function(
        "() => document.body.dataset.state === 'person' &&"
        " !/goes on|closed/.test(document.querySelector('[data-testid=status]').textContent)",
        timeout=MOVE_TIMEOUT,
    )
    assert kept(page) == token
    assert watched.first_messages()[before:] == [f"auth {token}"]


@contextmanager
def unreadable(path: Path) -> Iterator[None]:
    """The token file replaced by a link to itself, which the server does not follow: it
    cannot read the file (and so revokes nothing) until it is put back."""
    aside = path.with_name(path.name + ".aside")
    path.rename(aside)
    try:
        path.symlink_to(aside)
        yield
    finally:
        path.unlink(missing_ok=True)
        aside.rename(path)


@pytest.fixture(scope="module")
def open_server() -> Iterator[ServerThread]:
    need_chromium()
    with server_thread() as held:
        yield held


def test_a_server_without_tokens_asks_for_none(
    open_server: ServerThread, browser: Browser, pages: list[Watched]
) -> None:
    assert open_server.web is not None
    watched = opened(browser, pages)
    page = watched.page
    page.goto(open_server.web.url)
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    page.wait_for_function(
        "() => !/Connecting/.test(document.querySelector('#status').textContent)"
    )
    assert page.locator("[data-testid=signin]").is_hidden()
    assert page.locator("[data-testid=sign-out]").is_hidden()
    assert page.evaluate("document.body.dataset.auth") is None
    firsts = watched.first_messages()
    assert firsts
    assert all(isinstance(m, str) and not m.startswith("auth") for m in firsts), firsts


def test_the_form_sent_without_the_script_carries_no_token(
    tokened: Tokened, browser: Browser, pages: list[Watched]
) -> None:
    """Even sent by the browser itself (the page's script not there to stop it), the form
    puts no token in the address it goes to: its field has no name."""
    watched = opened(browser, pages)
    page = watched.page
    page.goto(tokened.url)
    page.wait_for_selector("[data-testid=signin-token]", state="visible")
    assert page.get_attribute("[data-testid=signin-token]", "name") is None
    problem = "alice:" + "B" * 43
    page.evaluate(
        "([token]) => { const f = document.querySelector('#signin');"
        " document.querySelector('#signin-token').value = token;"
        " HTMLFormElement.prototype.submit.call(f); }",
        [problem],
    )
    page.wait_for_load_state()
    assert "B" * 43 not in page.url

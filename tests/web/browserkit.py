"""What the Chromium tests of games between two pages share: a server of each module's own,
the page's text hooks, and browser contexts of a test's own whose page errors fail it.

A module that uses the fixtures imports them (``server``, ``contexts``, and ``browser``, which
``contexts`` takes) and names them in its ``__all__``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.browser import ServerThread, need_chromium, server_thread
from tests.web.test_browser import MOVE_TIMEOUT, browser
from tests.web.webpeer import Web

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Dialog, Page

__all__ = [
    "MOVE_TIMEOUT",
    "Contexts",
    "browser",
    "contexts",
    "invite_yoxii",
    "server",
    "text",
    "wait_text",
    "web_of",
]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    need_chromium()
    with server_thread() as held:
        assert held.web is not None
        # every table of a module is made from 127.0.0.1: more than the 8 an address may
        # hold, and a game left unfinished holds its place until its players' grace is over
        held.web.app.tables.per_peer = 64
        # and every browser of a test is on 127.0.0.1 too: three loading their pages at once
        # open more connections within a second (busy, so not to be closed for another) than
        # the 32 of one address
        held.web.server.admission.peer_connections = 128
        yield held


def web_of(server: ServerThread) -> Web:
    assert server.web is not None
    return server.web


def text(page: Page, testid: str) -> str:
    return str(page.locator(f"[data-testid={testid}]").text_content())


def wait_text(page: Page, testid: str, pattern: str) -> None:
    """Wait until the element's text matches ``pattern`` (a JavaScript regular expression)."""
    page.wait_for_function(
        "([testid, pattern]) => new RegExp(pattern).test("
        "document.querySelector(`[data-testid=${testid}]`).textContent)",
        arg=[testid, pattern],
        timeout=MOVE_TIMEOUT,
    )


def invite_yoxii(opened: Page, url: str) -> str:
    """``opened`` loads the page at ``url`` and invites a friend to Yoxii (the first player,
    no clock, as the form starts); the other player's link as the page shows it."""
    opened.goto(url)
    opened.wait_for_selector("[data-testid=game-select] option", state="attached")
    opened.locator("[data-testid=game-select]").select_option("yoxii")
    opened.locator("[data-testid=invite]").click()
    opened.wait_for_function(
        "() => /table=/.test(document.querySelector('[data-testid=invite-link]')"
        ".getAttribute('href') || '')",
        timeout=MOVE_TIMEOUT,
    )
    return str(opened.locator("[data-testid=invite-link]").get_attribute("href"))


class Contexts:
    """Browser contexts of a test's own (each a storage, so a browser key, of its own): every
    page error, console error and dialog of any of their pages is a problem, and the problems
    fail the test once its contexts are closed."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.made: list[BrowserContext] = []
        self.problems: list[str] = []

    def new(self, *scripts: str, name: str = "") -> BrowserContext:
        """A new context whose pages run ``scripts`` first; ``name`` starts its problems."""
        context = self.browser.new_context(viewport={"width": 1200, "height": 900})
        for script in scripts:
            context.add_init_script(script)
        context.on("page", lambda opened: self.watch(opened, f"{name}: " if name else ""))
        self.made.append(context)
        return context

    def watch(self, opened: Page, said: str) -> None:
        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.problems.append(f"{said}console: {message.text}")

        def dialog(shown: Dialog) -> None:
            self.problems.append(f"{said}dialog: {shown.message}")
            shown.dismiss()

        opened.on("pageerror", lambda error: self.problems.append(f"{said}page error: {error}"))
        opened.on("console", console)
        opened.on("dialog", dialog)

    def close(self) -> None:
        for context in self.made:
            context.close()
        assert not self.problems, self.problems


@pytest.fixture
def contexts(browser: Browser) -> Iterator[Contexts]:
    made = Contexts(browser)
    yield made
    made.close()

"""Make the screenshots of docs/web.md: ``python docs/screenshots.py [--only NAME ...]`` (needs
the web extra, Playwright and Debian's chromium). Each board after some random moves against
bot:random, the Yin Yang law editor, a game with a person at another page, the page
watching a match, a ladder's page (docs/ladder.md), and the sign-in of a server with
tokens."""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).parent
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
PLIES = {"yinsh": 24, "yohoho": 10, "yoxii": 12, "yinyang": 3}
SHOTS = ("games", "invite", "watch", "ladder", "signin")


def start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"{argv[0]} ended before it printed its web address")
        if line.startswith("web "):
            return process, line.split()[1]


def decide(page: Any, rng: random.Random) -> None:
    """Click until one decision is played (the steps of docs/web.md's hooks)."""
    before = page.locator("[data-testid=moves] > *").count()
    for _ in range(12):
        compose = page.locator("[data-testid=compose] [data-choice=random]")
        if compose.count():
            compose.click()
            page.locator("[data-testid=compose] [data-choice=submit]").click()
        else:
            targets = page.locator("[data-legal=true], [data-testid=choices] [data-choice]")
            targets.nth(rng.randrange(targets.count())).click()
        page.wait_for_function("() => document.body.dataset.state !== 'busy'")
        if page.locator("[data-testid=moves] > *").count() > before:
            return


def shoot_games(browser: Any, url: str, out: Path) -> None:
    for game, plies in PLIES.items():
        rng = random.Random(game)
        page = browser.new_page(viewport={"width": 1100, "height": 820})
        page.goto(f"{url}?game={game}&opponent=bot:random&side=p1")
        for _ in range(plies):
            page.wait_for_function("() => ['person', 'over'].includes(document.body.dataset.state)")
            if page.evaluate("document.body.dataset.state") == "over":
                break
            decide(page, rng)
        page.wait_for_function("() => ['person', 'over'].includes(document.body.dataset.state)")
        page.screenshot(path=str(out / f"web-{game}.png"))
        print(f"web-{game}.png")
        page.close()
    page = browser.new_page(viewport={"width": 1100, "height": 820})
    page.goto(f"{url}?game=yinyang&opponent=bot:alphabeta&side=p1")
    page.wait_for_selector("[data-testid=compose] [data-choice=random]")
    page.locator("[data-testid=compose] [data-choice=random]").click()
    page.locator("[data-testid=compose]").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "web-yinyang-laws.png"), full_page=True)
    print("web-yinyang-laws.png")
    page.close()


def shoot_invite(browser: Any, url: str, out: Path) -> None:
    """The inviter's page of a Yoxii game with a person at another page, who offers a draw."""
    rng = random.Random("invite")
    host = browser.new_page(viewport={"width": 1100, "height": 820})
    host.goto(url)
    host.select_option("[data-testid=game-select]", "yoxii")
    host.select_option("[data-testid=tc-select]", "300+3")
    host.click("[data-testid=invite]")
    host.wait_for_selector("[data-testid=invite-link]:not([hidden])")
    guest = browser.new_context().new_page()
    guest.goto(url.rstrip("/") + host.locator("[data-testid=invite-link]").get_attribute("href"))
    pages = [host, guest]
    waiting = "() => ['person', 'waiting'].includes(document.body.dataset.state)"
    for plies in range(1, 11):
        for page in pages:
            page.wait_for_function(waiting)
        mover = next(p for p in pages if p.evaluate("document.body.dataset.state") == "person")
        decide(mover, rng)
        for page in pages:
            page.wait_for_function(
                f"() => document.querySelectorAll('[data-testid=moves] > *').length >= {plies}"
            )
    guest.click("[data-testid=offer-draw]")
    host.wait_for_selector("[data-testid=accept-offer]:not([hidden])")
    host.screenshot(path=str(out / "web-invite.png"))
    print("web-invite.png")
    guest.context.close()
    host.close()


def shoot_watch(browser: Any, out: Path) -> None:
    process, url = start([
        sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:alphabeta", "bot:greedy",
        "--games", "4", "--st", "0.3", "--web", "0",
    ])  # fmt: skip
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 820})
        page.goto(url)
        page.wait_for_selector("[data-testid=standings]")
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=moves] > *').length >= 16",
            timeout=60_000,
        )
        page.screenshot(path=str(out / "web-watch.png"))
        print("web-watch.png")
        page.close()
    finally:
        process.terminate()
        process.wait(timeout=30)


def shoot_ladder(browser: Any, out: Path) -> None:
    """A ladder of two house bots and a bot of ``ladder-client``: its leaderboard, games and
    the board of a game against one of its bots."""
    cli = [sys.executable, "-m", "enginesrv.cli"]
    with tempfile.TemporaryDirectory() as temporary:
        token = Path(temporary) / "alice.token"
        folder = str(Path(temporary) / "yoxii-club")
        added = subprocess.run(
            [*cli, "ladder", "add", "alice", "--out", folder],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        token.write_text(added.stdout)
        ladder = subprocess.Popen(
            [*cli, "ladder", "run", "--game", "yoxii", "--tc", "2+0.05", "--out", folder,
             "--port", "0", "--web", "0", "--min-games", "4",
             "--house", "name=anchor:bot:alphabeta:Level=1",
             "--house", "name=club:bot:alphabeta:Level=2"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert ladder.stdout is not None
        address = ladder.stdout.readline().split()[1]
        url = ladder.stdout.readline().split()[1]
        client = subprocess.Popen(
            [*cli, "ladder-client", "--server", address, "--name", "alice", "--token-file",
             str(token), "--games", "2", "bot:alphabeta:Depth=2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1000})
            page.goto(url)
            page.wait_for_function(
                "() => document.querySelectorAll('[data-testid=recent] button').length >= 24",
                timeout=120_000,
            )
            page.screenshot(path=str(out / "web-ladder.png"), full_page=True)
            print("web-ladder.png")
            page.close()
        finally:
            for process in (client, ladder):
                process.terminate()
                process.wait(timeout=30)


def shoot_signin(browser: Any, out: Path) -> None:
    """The page of a server with tokens, asking for one after a wrong one."""
    cli = [sys.executable, "-m", "enginesrv.cli"]
    with tempfile.TemporaryDirectory() as temporary:
        tokens = str(Path(temporary) / "clients.tokens")
        subprocess.run(
            [*cli, "token", "add", "alice", "--file", tokens], capture_output=True, check=True
        )
        process, url = start(
            [*cli, "serve", "--port", "0", "--web", "0", "--workers", "1", "--tokens", tokens]
        )
        try:
            page = browser.new_page(viewport={"width": 820, "height": 280})
            page.goto(url + "?game=yoxii&opponent=bot:random")
            page.fill("[data-testid=signin-token]", "alice:" + "W" * 43)
            page.press("[data-testid=signin-token]", "Enter")
            page.wait_for_selector("[data-testid=signin-problem]:has-text('not accepted')")
            page.screenshot(path=str(out / "web-signin.png"))
            print("web-signin.png")
            page.close()
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (docs/)")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser")
    parser.add_argument("--only", nargs="+", choices=[*SHOTS], help="make only these")
    args = parser.parse_args()
    only = set(args.only or SHOTS)
    server, url = start([
        sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--web", "0",
        "--workers", "2",
    ])  # fmt: skip
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
            if "games" in only:
                shoot_games(browser, url, args.out)
            if "invite" in only:
                shoot_invite(browser, url, args.out)
            if "watch" in only:
                shoot_watch(browser, args.out)
            if "ladder" in only:
                shoot_ladder(browser, args.out)
            if "signin" in only:
                shoot_signin(browser, args.out)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

"""Games between two pages in a real browser (docs/web.md, "Playing a person at another page"):
two browser contexts play by the invite link, by clicks on the documented hooks, with a
reconnection, a spectator, resignation, offers of a draw, a takeback and a rematch, and a
player who leaves for good. Each context has a storage of its own, so a key of its own: the
seats are bound to the browsers that took them."""

from __future__ import annotations

import random
import re
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

import games
from tests.web.browser import ServerThread
from tests.web.browserkit import Contexts, browser, contexts, server, text, wait_text, web_of
from tests.web.tablekit import HELD
from tests.web.test_browser import (
    MOVE_TIMEOUT,
    POSITION,
    assert_in_words,
    click_a_decision,
    law_fields,
    moves_count,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page, WebSocket

    from enginesrv.web.table import Table

__all__ = ["browser", "contexts", "server"]  # the fixtures of browserkit

SETTLED = ("person", "waiting", "over")
"""The states of a page that has drawn the game as the server has it."""
PLY_CAP = 120
"""Decisions a whole game by random clicks may take here before the player to act resigns:
random play in Yohoho sails on for hundreds of plies, and each ply costs both pages a
redraw."""


def seat_of(server: ServerThread, token: str) -> tuple[Table, int]:
    """The table and the player of a player's token (read from the test's thread: no sweep)."""
    return web_of(server).app.tables._players[token]


# -- pages and what they receive ----------------------------------------------------------------


@dataclass
class Socket:
    """The text frames of one WebSocket of a page, each way."""

    url: str
    sent: list[str] = field(default_factory=list)
    received: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, list[str]]:
        """The fields of the socket's address."""
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.url).query, keep_blank_values=True)


@dataclass
class Player:
    """A page in a browser context of its own, with every WebSocket frame it got."""

    name: str
    page: Page
    sockets: list[Socket] = field(default_factory=list)

    def seats(self) -> list[Socket]:
        """The page's sockets at a seat (``/ws?table=...``), in order."""
        return [s for s in self.sockets if urllib.parse.urlsplit(s.url).path == "/ws"
                and "table" in s.fields()]  # fmt: skip

    def listen(self, ws: WebSocket) -> None:
        socket = Socket(ws.url)
        self.sockets.append(socket)
        ws.on("framesent", lambda data: socket.sent.append(text_of(data)))
        ws.on("framereceived", lambda data: socket.received.append(text_of(data)))


def text_of(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode()


@pytest.fixture
def open_page(contexts: Contexts) -> Callable[[str], Player]:
    """Opens a page in a new browser context (a player or a spectator of their own); every
    page error, console error and dialog of any of them fails the test (``contexts``)."""

    def make(name: str) -> Player:
        player = Player(name, contexts.new(name=name).new_page())
        player.page.on("websocket", player.listen)
        return player

    return make


@pytest.fixture
def grace(server: ServerThread) -> Iterator[Callable[[float], None]]:
    """Sets the seconds a player may be away for the tables made after it; set back after."""
    assert server.web is not None
    tables = server.web.app.tables
    before = tables.grace

    def set_grace(seconds: float) -> None:
        tables.grace = seconds

    yield set_grace
    tables.grace = before


# -- the page's hooks ---------------------------------------------------------------------------


def key_of(page: Page) -> str:
    """The key the page's browser drew and keeps (table.js): 16 random bytes, base64url."""
    key = page.evaluate("() => localStorage.getItem('enginesrv-key')")
    assert isinstance(key, str), key
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", key), key
    return key


def state(page: Page) -> str:
    return str(page.evaluate("document.body.dataset.state"))


def settle(pages: list[Page], plies: int, among: tuple[str, ...] = SETTLED) -> list[str]:
    """Wait until every page shows ``plies`` moves and has drawn the game (neither busy nor
    starting; in one of the states ``among``); their states."""
    for page in pages:
        page.wait_for_function(
            "([plies, among]) => document.querySelectorAll('[data-testid=moves] > *').length"
            " === plies && among.includes(document.body.dataset.state)",
            arg=[plies, list(among)],
            timeout=MOVE_TIMEOUT,
        )
    return [state(page) for page in pages]


def ended(pages: list[Page], plies: int) -> None:
    """Wait until every page shows the game over after ``plies`` moves."""
    settle(pages, plies, ("over",))


def to_act(a: Page, b: Page) -> Page:
    """The page whose player is to act: exactly one of the two, the other waiting."""
    states = [state(a), state(b)]
    assert sorted(states) == ["person", "waiting"], states
    return a if states[0] == "person" else b


def colours(game: str) -> tuple[str, str]:
    first, second = games.load(game).colours
    return first.capitalize(), second.capitalize()


@dataclass
class Invited:
    invite: str
    """The other player's link (absolute)."""
    watch: str
    """The spectators' link (absolute)."""


def invite(
    server: ServerThread, page: Page, game: str, *, side: str = "p1", tc: str = "none"
) -> Invited:
    """Page A invites a friend to ``game`` as the form sets it; the two links."""
    base = web_of(server).url
    page.goto(base)
    page.wait_for_selector("[data-testid=game-select] option", state="attached")
    page.locator("[data-testid=game-select]").select_option(game)
    page.locator("[data-testid=tc-select]").select_option(tc)
    page.locator("[data-testid=side-select]").select_option(side)
    page.locator("[data-testid=invite]").click()
    link = page.locator("[data-testid=invite-link]")
    page.wait_for_function(
        "() => /^\\/\\?table=[A-Za-z0-9_-]{22}$/.test("
        "document.querySelector('[data-testid=invite-link]').getAttribute('href') || '')",
        timeout=MOVE_TIMEOUT,
    )
    invite_href = str(link.get_attribute("href"))
    watch_href = str(page.locator("[data-testid=watch-link]").get_attribute("href"))
    assert re.fullmatch(r"/\?watch=[A-Za-z0-9_-]{22}", watch_href), watch_href
    assert text(page, "table-status") == "Waiting for the other player to open the link."
    # the inviter's address is its own seat's link, not the one it hands out
    own = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["table"][0]
    assert own != invite_href.split("=", 1)[1]
    return Invited(urllib.parse.urljoin(base, invite_href), urllib.parse.urljoin(base, watch_href))


def join(a: Page, b: Page, invited: Invited, game: str, a_side: str = "p1") -> None:
    """Page B opens the invite; both pages then show the game from its start, each its own
    seat, and A says that B is here; B's address is the invite link (its own token)."""
    b.goto(invited.invite)
    b.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    names = colours(game)
    b_seat = 1 if a_side == "p1" else 0
    wait_text(a, "table-status", f"^{names[b_seat]} is here\\.$")
    wait_text(b, "table-status", f"^{names[1 - b_seat]} is here\\.$")
    settle([a, b], 0)
    assert you(a) == f"{names[1 - b_seat]}: you"
    assert you(b) == f"{names[b_seat]}: you"
    # the invite is B's own link: B's address, which A no longer offers
    own = urllib.parse.urlsplit(b.url)
    assert re.fullmatch(r"table=[A-Za-z0-9_-]{22}", own.query), b.url
    assert b.url == invited.invite
    assert own.query != urllib.parse.urlsplit(a.url).query
    a.locator("[data-testid=invite-link]").wait_for(state="hidden", timeout=MOVE_TIMEOUT)


def listed(page: Page) -> list[str]:
    """The moves list's entries."""
    return page.locator("[data-testid=moves] > *").all_text_contents()


def you(page: Page) -> str:
    """The name on the clock of the page's own player (``White: you``)."""
    names = page.locator(".clock .who").all_text_contents()
    mine = [name for name in names if name.endswith(": you")]
    assert len(mine) == 1, names
    return mine[0]


def play_one(a: Page, b: Page, rng: random.Random) -> Page:
    """The player to act clicks one decision; both pages show it. The page that played."""
    mover = to_act(a, b)
    plies = moves_count(mover)
    click_a_decision(mover, rng)
    states = settle([a, b], plies + 1)
    assert states == ["over", "over"] or sorted(states) == ["person", "waiting"], states
    return mover


def resign(page: Page) -> None:
    """Press resign twice: the first press only asks to press again."""
    button = page.locator("[data-testid=resign]")
    button.click()
    assert button.text_content() == "Resign? Press again"
    button.click()


def start(
    server: ServerThread, open_page: Callable[[str], Player], game: str = "yoxii", tc: str = "300+3"
) -> tuple[Player, Player, Invited]:
    """A invites (as the first player), B joins."""
    a, b = open_page("A"), open_page("B")
    invited = invite(server, a.page, game, tc=tc)
    join(a.page, b.page, invited, game)
    # each seat is bound to its own browser's key: A's from its invite, B's from the link
    keys = key_of(a.page), key_of(b.page)
    assert keys[0] != keys[1]
    (inviting,) = [s for s in a.sockets if s.fields().get("opponent") == ["invite"]]
    assert inviting.fields()["key"] == [keys[0]]
    invite_token = urllib.parse.parse_qs(urllib.parse.urlsplit(invited.invite).query)["table"][0]
    assert [s.fields() for s in b.seats()] == [{"table": [invite_token], "key": [keys[1]]}]
    table, player = seat_of(server, invite_token)
    assert player == 1
    assert [p.key for p in table.players] == list(keys)
    return a, b, invited


# -- a whole game of each game ------------------------------------------------------------------


@dataclass
class Answered:
    """A line a page received, and the command it answers (None: a notification, or a line
    that could not be paired with its command)."""

    command: str | None
    line: str


def answered(socket: Socket) -> list[Answered]:
    """Every line ``socket`` received, each with the command it answers: the page sends each
    request as its commands and a barrier, ``ping N``, and the server answers each command
    with one line, in order, before ``pong N`` (proto.js); ``table`` notifications come
    between them."""
    requests: dict[str, list[str]] = {}
    for frame in socket.sent:
        lines = frame.split("\n")
        if lines[-1].startswith("ping "):
            requests[lines[-1][5:]] = lines[:-1]
    out: list[Answered] = []
    group: list[str] = []
    for line in (line for frame in socket.received for line in frame.splitlines()):
        if not line.startswith("pong "):
            group.append(line)
            continue
        commands = requests.get(line[5:], [])
        replies = [each for each in group if not each.startswith("table ")]
        if len(replies) == len(commands):
            out += [Answered(c, r) for c, r in zip(commands, replies, strict=True)]
        else:
            out += [Answered(None, r) for r in replies]
        out += [Answered(None, each) for each in group if each.startswith("table ")]
        group = []
    out += [Answered(None, each) for each in group]
    return out


def laws_over_the_game(table: Table) -> list[tuple[list[str], list[str]]]:
    """The law fields (Black's, White's) of every full position of the table's game, from
    the start: the game replayed from each decision as its mover played it."""
    referee = table.referee
    state = referee.game.new_state()
    fields = [law_fields(state.to_string())]
    for each in referee.record:
        state.push(state.parse_move(each.to[each.mover]))
        fields.append(law_fields(state.to_string()))
    assert state.to_string() == referee.state.to_string()
    return fields


def assert_no_secret_reached(player: Player, seat: int, table: Table) -> int:
    """No frame ``player`` (at ``seat``: 0 Black, 1 White) has received so far holds a law of
    the other player's that has not been revealed: every position shows the other's hidden
    laws as ``?``, and no other line (a decision as shown, a notification, a reply) quotes
    one; only the player's own lists of legal moves, which list every law an adaptation could
    write, may. Called while neither page is busy; the number of such laws."""
    over_the_game = laws_over_the_game(table)
    theirs = [fields[1 - seat] for fields in over_the_game]
    hidden = {e[1:] for laws in theirs for e in laws if e.startswith("-")}
    revealed = {e[1:] for laws in theirs for e in laws if e.startswith("+")}
    own = {e[1:] for fields in over_the_game for e in fields[seat] if e[:1] in "+-"}
    secrets = hidden - revealed - own
    lines = [each for socket in player.sockets for each in answered(socket)]
    positions = [found for each in lines for found in POSITION.finditer(each.line)]
    assert positions, f"no position reached page {player.name}"
    for found in positions:
        shown = found.group(2 - seat)  # the other player's law field
        entries = [] if shown == "none" else shown.split(",")
        assert all(e == "?" or e.startswith("+") for e in entries), found[0]
    listing = [(each.command or "").startswith("query moves") for each in lines]
    assert any(listing), f"no list of legal moves was told apart on page {player.name}"
    checked = [each.line for each, moves in zip(lines, listing, strict=True) if not moves]
    for law in secrets:
        leaks = [line for line in checked if law in line]
        assert not leaks, (player.name, law, leaks[:3])
    return len(secrets)


@pytest.mark.parametrize("game", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_a_whole_game_between_two_pages_by_the_invite_link(
    server: ServerThread, open_page: Callable[[str], Player], game: str
) -> None:
    assert server.web is not None
    rng = random.Random(f"table {game}")
    before = set(server.web.app.tables.tables)
    a, b, _ = start(server, open_page, game, tc="none")
    (table,) = set(server.web.app.tables.tables) - before
    plies = 0
    movers: list[str] = []
    secrets = {"A": 0, "B": 0}  # the most laws each page was not to be told at once
    resigned = False
    while settle([a.page, b.page], plies) != ["over", "over"]:
        if game == "yinyang":
            for player, seat in ((a, 0), (b, 1)):
                found = assert_no_secret_reached(player, seat, table)
                secrets[player.name] = max(secrets[player.name], found)
        if plies == PLY_CAP:
            resign(to_act(a.page, b.page))
            ended([a.page, b.page], plies)
            resigned = True
            break
        movers.append("A" if play_one(a.page, b.page, rng) is a.page else "B")
        plies += 1
        assert table.referee.plies() == plies
    ended([a.page, b.page], plies)
    assert {"A", "B"} <= set(movers)
    results = [text(a.page, "result"), text(b.page, "result")]
    assert results[0] == results[1], results
    assert_in_words(results[0])
    # a game can also end by the rules at the cap's very decision
    assert results[0].endswith(" resigned.") == resigned, results
    assert listed(a.page) == [m.to[0] for m in table.referee.record]
    assert listed(b.page) == [m.to[1] for m in table.referee.record]
    if game == "yinyang":
        assert_no_secret_reached(a, 0, table)
        assert_no_secret_reached(b, 1, table)
        # each side's laws were hidden from the other at least after both setups (fewer than
        # four texts when a random setup wrote one twice, or one the other wrote too)
        assert min(secrets.values()) > 0, secrets


# -- a reload, a spectator ----------------------------------------------------------------------


def observe_text(page: Page, testid: str) -> None:
    """Keep every text the element shows in ``window.seen[testid]``."""
    page.evaluate(
        """(testid) => {
          const node = document.querySelector(`[data-testid=${testid}]`);
          window.seen = window.seen || {};
          const seen = (window.seen[testid] = [node.textContent]);
          new MutationObserver(() => {
            if (seen[seen.length - 1] !== node.textContent) seen.push(node.textContent);
          }).observe(node, { childList: true, characterData: true, subtree: true });
        }""",
        testid,
    )


def seen(page: Page, testid: str) -> list[str]:
    return [str(each) for each in page.evaluate("(testid) => window.seen[testid]", testid)]


def play_until(a: Page, b: Page, rng: random.Random, who: Page, least: int = 1) -> int:
    """Play until ``who`` is to act after at least ``least`` decisions; the decisions played."""
    plies = 0
    while plies < least or to_act(a, b) is not who:
        play_one(a, b, rng)
        plies += 1
    return plies


def test_a_player_who_reloads_gets_the_game_back_and_plays_on(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(2)
    a, b, invited = start(server, open_page)
    own = b.page.url
    key = key_of(b.page)
    plies = play_until(a.page, b.page, rng, b.page, least=2)
    before = listed(b.page)
    observe_text(a.page, "table-status")
    b.page.reload()
    b.page.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    assert settle([a.page, b.page], plies) == ["waiting", "person"]
    wait_text(a.page, "table-status", "^Black is here\\.$")
    statuses = seen(a.page, "table-status")
    assert statuses[0] == "Black is here.", statuses
    away = [i for i, s in enumerate(statuses) if re.fullmatch(
        r"Black left: they lose in \d+ s unless they come back\.", s)]  # fmt: skip
    assert away, statuses
    assert statuses[-1] == "Black is here.", statuses
    # the game as it was, at B's own seat and address (the invite link), with B's key
    assert b.page.url == own == invited.invite
    assert key_of(b.page) == key
    # every socket B opened, before the reload and after it, presented the same key
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(own).query)["table"][0]
    seats = [s.fields() for s in b.seats()]
    assert len(seats) >= 2, seats
    assert all(each == {"table": [token], "key": [key]} for each in seats), seats
    assert listed(b.page) == before
    assert you(b.page) == "Black: you"
    assert text(b.page, "table-status") == "White is here."
    # and it goes on: B decides, then A
    assert play_one(a.page, b.page, rng) is b.page
    while to_act(a.page, b.page) is b.page:
        play_one(a.page, b.page, rng)
    assert play_one(a.page, b.page, rng) is a.page


def test_a_spectator_follows_the_game_live_and_cannot_act(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(3)
    a, b, invited = start(server, open_page)
    plies = play_until(a.page, b.page, rng, b.page, least=3)
    s = open_page("S").page
    s.goto(invited.watch)
    s.wait_for_function("() => document.body.dataset.state === 'watching'", timeout=MOVE_TIMEOUT)
    s.wait_for_function(
        "(plies) => document.querySelectorAll('[data-testid=moves] > *').length === plies",
        arg=plies,
        timeout=MOVE_TIMEOUT,
    )
    assert listed(s) == listed(a.page)
    play_one(a.page, b.page, rng)
    s.wait_for_function(
        "(plies) => document.querySelectorAll('[data-testid=moves] > *').length === plies",
        arg=plies + 1,
        timeout=MOVE_TIMEOUT,
    )
    assert listed(s) == listed(b.page)
    assert state(s) == "watching"
    assert s.locator("[data-testid=board] [data-square]").count() > 0
    assert s.locator("[data-legal=true]").count() == 0
    for testid in ("resign", "offer-draw", "takeback", "rematch", "accept-offer", "decline-offer",
                   "invite-link", "watch-link"):  # fmt: skip
        assert not s.locator(f"[data-testid={testid}]").is_visible(), testid


def test_a_third_browser_that_opens_the_invite_link_after_the_guest_is_refused(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    """Once the other player's browser has opened it, the invite link (the guest's seat) is
    refused to any other browser (the inviter's, who knew it, among them): a third page that
    opens it is told why, gets nothing to click, is told nothing of the game, and does not
    try again; the two players' pages go on as they were."""
    a, b, invited = start(server, open_page)
    c = open_page("C")
    c.page.goto(invited.invite)
    wait_text(c.page, "status", "^Cannot open the game: ")
    assert text(c.page, "status") == f"Cannot open the game: {HELD}"
    assert state(c.page) == "idle"
    assert c.page.locator("[data-legal=true]").count() == 0
    assert not c.page.locator("[data-testid=table]").is_visible()
    c.page.wait_for_timeout(1200)  # a retry would come within a second
    (tried,) = c.seats()
    assert tried.fields()["key"] == [key_of(c.page)]
    assert key_of(c.page) not in (key_of(a.page), key_of(b.page))
    assert tried.received == []
    assert [state(a.page), state(b.page)] == ["person", "waiting"]
    assert text(a.page, "table-status") == "Black is here."
    assert text(b.page, "table-status") == "White is here."
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(invited.invite).query)["table"][0]
    table, _ = seat_of(server, token)
    assert [p.sockets for p in table.players] == [1, 1]


# -- resignation, offers ------------------------------------------------------------------------


def test_a_resignation_takes_two_presses_and_ends_the_game_on_both_pages(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(4)
    a, b, _ = start(server, open_page)
    plies = play_until(a.page, b.page, rng, b.page, least=2)
    button = b.page.locator("[data-testid=resign]")
    assert button.text_content() == "Resign"
    button.click()
    assert button.text_content() == "Resign? Press again"
    assert [state(a.page), state(b.page)] == ["waiting", "person"]
    assert text(a.page, "result") == text(b.page, "result") == ""
    button.click()
    ended([a.page, b.page], plies)
    assert text(a.page, "result") == "White wins: Black resigned."
    assert text(b.page, "result") == "White wins: Black resigned."
    assert button.text_content() == "Resign"
    assert b.page.locator("[data-testid=resign]").is_disabled()
    assert a.page.locator("[data-testid=rematch]").is_visible()


def test_a_draw_offered_declined_then_offered_and_accepted(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(5)
    a, b, _ = start(server, open_page)
    plies = play_until(a.page, b.page, rng, b.page, least=2)
    accept = b.page.locator("[data-testid=accept-offer]")
    decline = b.page.locator("[data-testid=decline-offer]")
    assert not accept.is_visible()
    assert not decline.is_visible()
    a.page.locator("[data-testid=offer-draw]").click()
    accept.wait_for(state="visible", timeout=MOVE_TIMEOUT)
    assert decline.is_visible()
    assert text(b.page, "table-offer") == "White offers a draw."
    wait_text(a.page, "table-offer", "^You offered a draw: waiting for the answer\\.$")
    assert a.page.locator("[data-testid=offer-draw]").is_disabled()
    assert not a.page.locator("[data-testid=accept-offer]").is_visible()
    # declined: the game goes on, and A is told
    decline.click()
    wait_text(a.page, "table-offer", "^Black declined a draw\\.$")
    accept.wait_for(state="hidden", timeout=MOVE_TIMEOUT)
    assert settle([a.page, b.page], plies) == ["waiting", "person"]
    assert a.page.locator("[data-testid=offer-draw]").is_enabled()
    # offered again, and accepted
    a.page.locator("[data-testid=offer-draw]").click()
    accept.wait_for(state="visible", timeout=MOVE_TIMEOUT)
    accept.click()
    ended([a.page, b.page], plies)
    assert text(a.page, "result") == "Draw by agreement."
    assert text(b.page, "result") == "Draw by agreement."


def test_a_takeback_with_the_other_players_consent(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(6)
    a, b, _ = start(server, open_page)
    plies = play_until(a.page, b.page, rng, b.page, least=2)  # A's whole first turn
    first = listed(a.page)
    assert len(first) == plies == 2
    a.page.locator("[data-testid=takeback]").click()
    accept = b.page.locator("[data-testid=accept-offer]")
    accept.wait_for(state="visible", timeout=MOVE_TIMEOUT)
    assert text(b.page, "table-offer") == "White offers to take back their last move."
    accept.click()
    # A's last decision (the placement) is taken back: A is to place again
    assert settle([a.page, b.page], plies - 1) == ["person", "waiting"]
    assert listed(a.page) == first[:-1]
    assert listed(b.page) == first[:-1]
    assert text(a.page, "table-offer") == text(b.page, "table-offer") == ""
    assert not accept.is_visible()
    assert play_one(a.page, b.page, rng) is a.page
    assert to_act(a.page, b.page) is b.page


def test_the_takeback_button_waits_for_a_decision_of_ones_own(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(6)
    a, b, _ = start(server, open_page)
    play_until(a.page, b.page, rng, b.page, least=2)  # A's whole first turn; B has none
    assert a.page.locator("[data-testid=takeback]").is_enabled()
    assert b.page.locator("[data-testid=takeback]").is_disabled()


def test_a_rematch_swaps_the_colours(
    server: ServerThread, open_page: Callable[[str], Player]
) -> None:
    rng = random.Random(7)
    a, b, _ = start(server, open_page)
    assert to_act(a.page, b.page) is a.page  # A invited as the first player
    plies = play_until(a.page, b.page, rng, b.page, least=2)
    resign(a.page)
    ended([a.page, b.page], plies)
    assert text(b.page, "result") == "Black wins: White resigned."
    a.page.locator("[data-testid=rematch]").click()
    b.page.locator("[data-testid=accept-offer]").wait_for(state="visible", timeout=MOVE_TIMEOUT)
    assert text(b.page, "table-offer") == "White offers a rematch."
    wait_text(a.page, "table-offer", "^You offered a rematch: waiting for the answer\\.$")
    b.page.locator("[data-testid=rematch]").click()  # offering it too accepts it
    assert settle([a.page, b.page], 0) == ["waiting", "person"]
    assert you(a.page) == "Black: you"
    assert you(b.page) == "White: you"
    assert text(a.page, "result") == text(b.page, "result") == ""
    for page in (a.page, b.page):
        assert not page.locator("[data-testid=rematch]").is_visible()
        assert not page.locator("[data-testid=accept-offer]").is_visible()
        assert page.locator("[data-testid=resign]").is_enabled()
    assert play_one(a.page, b.page, rng) is b.page


# -- a player who leaves ------------------------------------------------------------------------


def test_a_player_who_leaves_for_good_loses_after_the_grace(
    server: ServerThread, open_page: Callable[[str], Player], grace: Callable[[float], None]
) -> None:
    grace(1.5)
    rng = random.Random(8)
    a, b, _ = start(server, open_page)
    plies = play_until(a.page, b.page, rng, b.page, least=2)
    b.page.context.close()
    wait_text(a.page, "table-status", "^Black left: they lose in [12] s unless they come back\\.$")
    assert state(a.page) == "waiting"
    ended([a.page], plies)
    assert text(a.page, "result") == "White wins: Black disconnected."
    assert text(a.page, "table-status") == "Black left."

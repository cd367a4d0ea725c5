"""Games between two pages (tables) attacked again, after their hardening: each seat bound to
the browser that first took it (its key), tables with nothing left to play giving their place
once alone for a grace, the grace of a player with several pages, rematches and takebacks
across games, the tokens, the keys and the server's log, and the page's own handling of
hostile links and of refusals (docs/web.md "Playing a person at another page",
docs/security.md "The other player at a table, a spectator, a stranger"). The angles here are
not those of ``test_tables_hostile.py``.

Each test asserts what should hold, as the adversary would try to break it. A test marked
``xfail(strict=True)`` is a weakness found: it passes once the server (or the page) is right.
"""

from __future__ import annotations

import itertools
import logging
import re
import time
import urllib.parse
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import pytest
import trio
from structlog.testing import capture_logs
from trio_websocket import ConnectionClosed, open_websocket_url

from enginesrv.web import table as table_module
from enginesrv.web import tables as tables_module
from tests.trio_run import trio_test
from tests.web.browser import ServerThread
from tests.web.browserkit import (
    MOVE_TIMEOUT,
    Contexts,
    browser,
    contexts,
    invite_yoxii,
    server,
    text,
    wait_text,
    web_of,
)
from tests.web.tablekit import (
    BAD_KEY,
    BLACK_LAWS,
    FAULTS,
    GUEST_KEY,
    HELD,
    HOST_KEY,
    NO_LINK,
    NO_WATCH,
    NOT_A_TABLE,
    ONLY_KEY,
    PLACE_GRACE,
    WAIT,
    WHITE_LAWS,
    YOXII,
    closed_with,
    events_url,
    held_invite,
    invite_and_go,
    law_forms,
    leaks,
    only_table,
    page,
    pairs,
    play_first,
    seat_url,
    socket_from,
    spectator,
    table,
    wait_for,
    write_laws,
)
from tests.web.webpeer import drop, running_web

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from enginesrv.web.table import Table

__all__ = ["browser", "contexts", "server"]  # the fixtures of browserkit

SPY_KEY = "inviters-second-browser-03"
"""A key of the inviter's other than ``HOST_KEY`` (a second browser, or a program)."""


async def first_answer(url: str, hold: trio.Event) -> str:
    """What a page that opens ``url`` and asks ``query table`` is answered (``closed CODE
    REASON`` when the server closes it); a page answered holds its socket until ``hold``."""
    async with open_websocket_url(url) as ws:
        try:
            await ws.send_message("query table\n")
            with trio.fail_after(WAIT):
                answer = str(await ws.get_message())
        except ConnectionClosed as exc:
            await drop(ws)
            assert exc.reason is not None
            return f"closed {exc.reason.code} {exc.reason.reason}"
        await hold.wait()
        return answer


# -- the guest's seat, bound to the browser that first takes it ------------------------------


@trio_test
async def test_pages_that_open_the_invite_at_once_seat_one_guest_only() -> None:
    """Six browsers (the guest's, those a forwarded copy of the link reached, the inviter's,
    a program with no key) open the invite at the same moment: exactly one takes the guest's
    seat, which is then its browser's; every other is refused as another browser's, is told
    nothing else, and holds no page of the seat; the one seated comes back to it."""
    async with running_web() as web, page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
        links = pairs(await host.ask("query table"))
        seated = only_table(web)
        keys: list[str | None] = [HOST_KEY, None, *(f"forwarded-link-key-{n:02}" for n in range(4))]
        answers: dict[str | None, str] = {}
        hold = trio.Event()

        async def visit(key: str | None) -> None:
            answers[key] = await first_answer(seat_url(web, links["invite"], key), hold)

        async with trio.open_nursery() as nursery:
            for key in keys:
                nursery.start_soon(visit, key)
            assert await wait_for(lambda: len(answers) == 5)
            assert seated.players[1].sockets == 1
            hold.set()
        won = [key for key, answer in answers.items() if answer.startswith("response ")]
        assert len(won) == 1, answers
        (winner,) = won
        refused = {key: answer for key, answer in answers.items() if key != winner}
        assert refused == dict.fromkeys(refused, f"closed 4400 {HELD}")
        assert len(refused) == 5
        values = pairs(answers[winner][9:].strip())
        assert (values["seat"], values["token"]) == ("p2", links["invite"])
        # a keyless winner's seat is bound to the key the server drew, which it was told
        assert seated.players[1].key == (winner or values["key"])
        assert values["key"] == (winner or seated.players[1].key) != ""
        assert web.app.tables.player(links["invite"]) == (seated, 1)
        # the browser seated comes back to its seat; the others still cannot
        again = trio.Event()
        again.set()
        answer = await first_answer(seat_url(web, links["invite"], winner or values["key"]), again)
        assert pairs(answer[9:].strip())["seat"] == "p2", answer
        for key in refused:
            assert await closed_with(seat_url(web, links["invite"], key)) == (4400, HELD), key


@trio_test
async def test_an_inviter_who_opens_its_own_invite_first_leaves_the_guest_told() -> None:
    """The inviter (who knows the invite) can beat the guest to the seat, from a browser of
    its own: what must hold is that the guest's browser is then told plainly, by the reason
    of a 4400, that the seat is another browser's, is never seated silently beside the
    inviter, and that the inviter's first page stops offering the link."""
    async with running_web() as web, page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
        links = pairs(await host.ask("query table"))
        async with page(seat_url(web, links["invite"], SPY_KEY)) as thief:
            stolen = pairs(await thief.ask("query table"))
            assert (stolen["seat"], stolen["token"]) == ("p2", links["invite"])
            for key in (GUEST_KEY, None):
                assert await closed_with(seat_url(web, links["invite"], key)) == (4400, HELD)
            assert pairs(await host.ask("query table"))["invite"] == "none"
            assert [p.sockets for p in only_table(web).players] == [1, 1]
        # the thief's page gone, the seat is still its browser's: the guest is told again
        assert await wait_for(lambda: only_table(web).players[1].sockets == 0)
        assert await closed_with(seat_url(web, links["invite"], GUEST_KEY)) == (4400, HELD)


@trio_test
async def test_a_first_visit_that_never_sent_a_message_does_not_lock_its_browser_out() -> None:
    """The guest's first socket opens the invite and is cut before it asks anything (a lost
    network); the guest's page, reloaded at the same link in the same browser (the same
    key), gets the seat back, and another browser does not."""
    async with running_web() as web, page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
        links = pairs(await host.ask("query table"))
        seated = only_table(web)
        first = "/ws?" + urllib.parse.urlencode({"table": links["invite"], "key": GUEST_KEY})
        async with socket_from(web, "127.0.0.2", first) as cut:
            assert await wait_for(lambda: seated.players[1].joined)
            await cut.ping()
        assert await wait_for(lambda: seated.players[1].sockets == 0)
        # the game has begun meanwhile, and the guest is away from it
        assert seated.started
        assert pairs(await host.ask("query table"))["p2"] == "away"
        assert await closed_with(seat_url(web, links["invite"], SPY_KEY)) == (4400, HELD)
        hold = trio.Event()
        hold.set()
        answer = await first_answer(seat_url(web, links["invite"], GUEST_KEY), hold)
        assert answer.startswith("response "), answer
        values = pairs(answer[9:].strip())
        assert (values["seat"], values["token"], values["p2"]) == ("p2", links["invite"], "here")
        assert (values["result"], values["p2grace"]) == ("none", "0")


@trio_test
async def test_an_inviter_who_took_the_guests_seat_first_never_reads_the_guests_laws() -> None:
    """The inviter opens its own invite from another browser and hands the guest the link.
    The guest's browser is refused, and told why, before a single message: it never plays,
    so never writes its laws, at a seat the inviter's page holds (the seat the inviter took
    is the only page at White's seat, and no law of White's is written)."""
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, page(web.ws(f"{query}&key={HOST_KEY}")) as host:
        links = pairs(await host.ask("query table"))
        seated = only_table(web)
        async with page(seat_url(web, links["invite"], SPY_KEY)) as spy:
            handed = pairs(await spy.ask("query table"))["token"]
            assert handed == links["invite"]
            assert await closed_with(seat_url(web, handed, GUEST_KEY)) == (4400, HELD)
            assert [p.sockets for p in seated.players] == [1, 1]
            assert [p.key for p in seated.players] == [HOST_KEY, SPY_KEY]
            await write_laws(host, spy, BLACK_LAWS)
            assert seated.referee.plies() == 1
            white = seated.referee.state.to_string().split()[4]
            assert white == "none", white
            assert leaks(spy.texts(), law_forms(WHITE_LAWS)) == []


@trio_test
async def test_malformed_table_and_watch_values_are_refused_alike_without_a_fault() -> None:
    """Raw values no page would send (a NUL, bytes that are no UTF-8, a lone surrogate, an
    empty value, 4 KiB, the field twice with nothing real) are answered as any unknown link,
    and fault nothing."""
    raw = ["", "%00", "%ff%fe", "%ED%A0%80", "%F0%9F%98%80" * 4, "x" * 4096, "a&table=b"]
    with capture_logs() as logs:
        async with running_web() as web, page(web.ws(YOXII)) as host:
            await host.ask("query table")
            for value in raw:
                assert await closed_with(web.ws(f"table={value}")) == (4400, NO_LINK), value
                url = events_url(web, value)
                assert await closed_with(url) == (4400, NO_WATCH), value
            assert await host.ask("query table")
    assert [entry for entry in logs if entry["event"] in FAULTS] == []


# -- the places of tables ------------------------------------------------------------------------


@trio_test
async def test_a_game_going_on_with_both_players_away_keeps_its_place() -> None:
    """A game begun, a move played, both players' pages gone (within their grace): neither
    another address nor the inviter's own can take its place for a new table, and a player
    who comes back plays on."""
    async with running_web() as web:
        tables = web.app.tables
        tables.grace = 5.0
        tables.most = 1
        async with table(web) as (host, guest, links):
            await play_first(host, guest)  # a Yoxii turn is two decisions: the host's again
        seated = only_table(web)
        assert await wait_for(lambda: seated.players_here() == 0)
        full = (1013, "the server holds its 1 games between two pages")
        assert await invite_and_go(web, "127.0.0.2") == full
        tables.per_peer = 1
        assert await invite_and_go(web, "127.0.0.1") == (
            1013,
            "127.0.0.1 has made 1 games between two pages still open",
        )
        assert set(tables.tables) == {seated}
        async with page(seat_url(web, links["token"], HOST_KEY)) as back:
            values = pairs(await back.ask("query table"))
            assert (values["result"], values["plies"]) == ("none", "1")
            move = (await back.ask("query moves")).split()[0]
            await back.ask(f"play {move}")
            assert pairs(await back.ask("query table"))["plies"] == "2"


@trio_test
async def test_a_stranger_cannot_drop_an_invite_whose_inviter_is_reloading() -> None:
    """The server holds all the tables it may (2 here: an invite held open by 127.0.0.2, and
    the victim's); the victim's inviter reloads its page (its socket gone for a moment) just
    as a stranger at 127.0.0.3 invites. The victim's table was left a moment ago, its invite
    is out, and its inviter is coming back: the stranger is refused, the inviter finds its
    game and its invite; only a table left alone for the whole grace gives way."""
    async with running_web() as web, AsyncExitStack() as stack:
        tables = web.app.tables
        tables.most = 2
        tables.grace = PLACE_GRACE
        full = (1013, "the server holds its 2 games between two pages")
        held = await held_invite(web, "127.0.0.2", stack)
        async with page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
            links = pairs(await host.ask("query table"))
        found = tables.player(links["token"])
        assert found is not None
        victim = found[0]
        assert await wait_for(victim.done_with)
        # the stranger's invite comes during the reload
        assert await invite_and_go(web, "127.0.0.3") == full
        assert trio.current_time() < victim.idle_since + PLACE_GRACE
        assert set(tables.tables) == {held, victim}
        # the reload: the inviter's game, its invite still out for the guest
        hold = trio.Event()
        hold.set()
        answer = await first_answer(seat_url(web, links["token"], HOST_KEY), hold)
        assert answer.startswith("response "), answer
        values = pairs(answer[9:].strip())
        assert (values["token"], values["invite"], values["p2"]) == (
            links["token"],
            links["invite"],
            "waiting",
        )
        assert tables.player(links["invite"]) == (victim, 1)
        # the reloaded page goes too: alone from then on, the grace counts again
        assert await wait_for(victim.done_with)
        assert await invite_and_go(web, "127.0.0.3") == full
        assert victim in tables.tables
        # alone for the whole grace, it gives its place (the one held open never does)
        await trio.sleep_until(victim.idle_since + PLACE_GRACE)
        assert await invite_and_go(web, "127.0.0.3") is None
        assert victim not in tables.tables
        assert held in tables.tables
        for token, key in ((links["token"], HOST_KEY), (links["invite"], GUEST_KEY)):
            assert await closed_with(seat_url(web, token, key)) == (4400, NO_LINK)


# -- several pages, rematches and takebacks ----------------------------------------------------


@trio_test
async def test_one_of_a_players_two_pages_closing_starts_no_grace() -> None:
    """The inviter holds two pages; one closes: they are still here (no grace runs, the other
    player is not told they left) well past the grace; the last one closing starts it, and a
    page coming back stops it."""
    async with running_web() as web:
        web.app.tables.grace = 0.6
        async with table(web) as (host, guest, links):
            seated = only_table(web)
            async with page(seat_url(web, links["token"], HOST_KEY)) as second:
                await second.ask("query table")
                assert await wait_for(lambda: seated.players[0].sockets == 2)
            assert await wait_for(lambda: seated.players[0].sockets == 1)
            await trio.sleep(0.9)
            values = pairs(await guest.ask("query table"))
            assert (values["p1"], values["p1grace"], values["result"]) == ("here", "0", "none")
            assert all(note.get("p1") != "away" for note in guest.notes)
            await host.socket.ws.aclose()
            note = await guest.note(p1="away")
            assert 0 < int(note["p1grace"]) <= 600
            async with page(seat_url(web, links["token"], HOST_KEY)) as back:
                await back.ask("query table")
                await guest.note(p1="here", p1grace=0)
                await trio.sleep(0.9)
                assert pairs(await back.ask("query table"))["result"] == "none"


@trio_test
async def test_a_rematch_agreed_while_the_offerer_reloads_finds_them_back_in_time() -> None:
    """The inviter offers a rematch and reloads; the guest accepts in the moment the inviter
    has no page at all: the next game starts (colours swapped) and the inviter, back within
    the grace, is here, told of game 2, and does not lose by disconnect."""
    async with running_web() as web:
        web.app.tables.grace = 0.6
        async with table(web) as (host, guest, links):
            seated = only_table(web)
            assert await guest.ask("resign") == "resigned"
            await host.note(result="p1win")
            assert await host.ask("offer rematch") == "offered"
            await guest.note(offer="rematch")
            await host.socket.ws.aclose()
            assert await wait_for(lambda: seated.players[0].sockets == 0)
            assert await guest.ask("offer rematch") == "agreed"
            async with page(seat_url(web, links["token"], HOST_KEY)) as back:
                values = pairs(await back.ask("query table"))
                assert (values["game"], values["seat"], values["result"]) == ("2", "p2", "none")
                assert (values["offer"], values["offered"]) == ("none", "none")
                await trio.sleep(0.9)
                values = pairs(await back.ask("query table"))
                assert (values["p2"], values["result"]) == ("here", "none")


@trio_test
async def test_an_offer_of_one_game_cannot_be_taken_up_in_the_next() -> None:
    """Offers and decisions do not cross a rematch: a takeback the inviter offered in game 1
    is not accepted by the guest's own offer in game 2, and a player cannot ask to take back,
    in game 2, a decision they made in game 1."""
    async with running_web() as web, table(web) as (host, guest, links):
        del links
        await play_first(host, guest)
        assert await host.ask("offer takeback") == "offered"
        await guest.note(offer="takeback")
        assert await guest.ask("resign") == "resigned"
        await host.note(result="p1win", offer="none")
        assert await host.ask("offer rematch") == "offered"
        await guest.note(offer="rematch")
        assert await guest.ask("offer rematch") == "agreed"
        await host.note(game=2)
        # game 2: the guest is p1 now and moves first; the host has decided nothing in it
        line = await host.reply("offer takeback")
        assert line.startswith("error 101 "), line
        await play_first(guest, host)
        assert await guest.ask("offer takeback") == "offered"
        values = pairs(await host.ask("query table"))
        assert (values["game"], values["plies"], values["offer"]) == ("2", "1", "takeback")
        assert pairs(await guest.ask("query table"))["plies"] == "1"


# -- the tokens and the log ----------------------------------------------------------------------


@trio_test
async def test_no_token_reaches_the_servers_log() -> None:
    """A whole table's life, with refusals of a seat to another browser's key, of a token
    beside another field, of a near-miss, of malformed keys, of a key where no table is, of
    a watch token on the seats' door and a seat's on the watchers', and commands refused: no
    player's or spectators' token, and no browser's key (well-formed or not), is in any log
    event (a log is read by more people than the players)."""
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    keep = Keep(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(keep)
    stranger = "strangers-browser-key-04"
    malformed = "malformed-key." + "m" * 20
    try:
        with capture_logs() as logs:
            async with running_web() as web, table(web) as (host, guest, links):
                guest_token = pairs(await guest.ask("query table"))["token"]
                assert guest_token == links["invite"]
                secrets = [links["token"], links["watch"], guest_token]
                secrets += [HOST_KEY, GUEST_KEY, stranger, malformed]
                for query, reason in (
                    (seat_url(web, links["invite"], stranger), HELD),
                    (seat_url(web, links["invite"], None), HELD),
                    (seat_url(web, links["token"], GUEST_KEY), HELD),
                    (web.ws(f"table={links['token']}&key={HOST_KEY}&game=yoxii"), ONLY_KEY),
                    (seat_url(web, links["token"][:-1], HOST_KEY), NO_LINK),
                    (seat_url(web, links["invite"], malformed), BAD_KEY),
                    (web.ws(f"game=yoxii&opponent=human&key={stranger}"), NOT_A_TABLE),
                    (seat_url(web, links["watch"], stranger), NO_LINK),
                ):
                    assert await closed_with(query) == (4400, reason), query
                assert await closed_with(events_url(web, links["token"])) == (4400, NO_WATCH)
                async with spectator(web, links["watch"]) as watcher:
                    await play_first(host, guest)
                    await watcher.until("move")
                for command in ("play nonsense", "undo 1", "decline draw"):
                    assert (await guest.reply(command)).startswith("error "), command
                assert await guest.ask("resign") == "resigned"
                assert await host.ask("offer rematch") == "offered"
                assert await guest.ask("offer rematch") == "agreed"
    finally:
        root.removeHandler(keep)
    assert logs, "nothing was logged: the test would prove nothing"
    refusals = [entry["reason"] for entry in logs if entry["event"] == "websocket_refused"]
    assert HELD in refusals  # the refusals were logged, with their reasons
    seen = [repr(entry) for entry in logs] + records
    assert [(secret, line) for line in seen for secret in secrets if secret in line] == []


# -- the page ----------------------------------------------------------------------------------


@pytest.fixture
def fresh(contexts: Contexts) -> Callable[[], tuple[Page, list[tuple[float, str]]]]:
    """Opens a page in a browser context of its own (``contexts``: its errors and dialogs
    fail the test): the page, and each WebSocket it opens (when, and its address)."""

    def make() -> tuple[Page, list[tuple[float, str]]]:
        opened = contexts.new(OPENED_IN_PAGE).new_page()
        sockets: list[tuple[float, str]] = []
        opened.on("websocket", lambda ws: sockets.append((time.monotonic(), ws.url)))
        return opened, sockets

    return make


HOSTILE = [
    "<script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "javascript:window.__pwned=1//\u202e\u2066ü漢字😀",
    "A" * 6000,
]
"""Values an adversary puts in a link it hands out: markup, script, direction controls and
characters of every plane, and a value far longer than any token."""


def test_a_hostile_table_or_watch_value_in_the_link_runs_nothing_and_is_tried_once(
    server: ServerThread, fresh: Callable[[], tuple[Page, list[tuple[float, str]]]]
) -> None:
    """``/?table=`` and ``/?watch=`` links with hostile values: the page runs none of it,
    injects no element, says that no game has the link, and opens the socket once (a
    refused link is not retried)."""
    base = web_of(server).url
    opened, sockets = fresh()
    for field, door, said in (
        ("table", "/ws?table=", "^Cannot open the game: table: no game has this link"),
        ("watch", "/events?watch=", "^The event's feed closed: watch: no game has this link"),
    ):
        for value in HOSTILE:
            sockets.clear()
            opened.goto(base + "?" + urllib.parse.urlencode({field: value}))
            wait_text(opened, "status", said)
            opened.wait_for_timeout(1200)  # a retry would come within a second
            assert opened.evaluate("window.__pwned") is None
            assert opened.locator("img[src=x], body script:not([src])").count() == 0
            tried = [url for _, url in sockets if door in url]
            assert len(tried) == 1, (field, value[:40], tried)
            assert urllib.parse.parse_qs(urllib.parse.urlsplit(tried[0]).query)[field] == [value]
            assert value[:40] not in text(opened, "status")


def invite_page(server: ServerThread, opened: Page) -> dict[str, str]:
    """``opened`` invites (yoxii, as the first player, no clock); its table's values."""
    invite_yoxii(opened, web_of(server).url)
    own = urllib.parse.parse_qs(urllib.parse.urlsplit(opened.url).query)["table"][0]
    watch = str(opened.locator("[data-testid=watch-link]").get_attribute("href"))
    return {"token": own, "watch": watch.split("=", 1)[1]}


def in_server(server: ServerThread, action: Callable[[], None]) -> None:
    """Runs ``action`` in the server's trio thread."""
    trio.from_thread.run_sync(action, trio_token=server._token)


OPENED_IN_PAGE = """
(() => {
  const Native = window.WebSocket;
  window.__opened = [];
  function Recorded(url, protocols) {
    window.__opened.push([performance.now() / 1000, String(url)]);
    return protocols === undefined ? new Native(url) : new Native(url, protocols);
  }
  Recorded.prototype = Native.prototype;
  for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Recorded[name] = Native[name];
  window.WebSocket = Recorded;
})();
"""
"""Each WebSocket the page opens, recorded in the page itself (``window.__opened``: seconds of
the page's clock, and the address): the times the page kept, not when the test heard of it."""


def opened_in_page(opened: Page) -> list[tuple[float, str]]:
    """The page's own record of the WebSockets it opened (``OPENED_IN_PAGE``)."""
    return [(float(when), str(url)) for when, url in opened.evaluate("() => window.__opened")]


CLOSE_OWN_SOCKET = """async () => {
  const { app } = await import('/static/app/state.js');
  app.session.socket.close();
}"""


def browser_key(opened: Page) -> str:
    """The key the page's browser drew and keeps (table.js)."""
    key = opened.evaluate("() => localStorage.getItem('enginesrv-key')")
    assert isinstance(key, str), key
    return key


def seat_tries(sockets: list[tuple[float, str]], token: str, key: str) -> list[float]:
    """When the page opened a socket at seat ``token``, with browser ``key`` (its address
    holds just these two fields)."""
    out = []
    for when, url in sockets:
        parts = urllib.parse.urlsplit(url)
        if parts.path != "/ws":
            continue
        fields = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        if fields.get("table") == [token]:
            assert fields == {"table": [token], "key": [key]}, url
            out.append(when)
    return out


def back_in_game(opened: Page, seated: Table) -> None:
    """Wait until the page shows its table again, its status no reconnection, and the server
    has its one page at the inviter's seat."""
    opened.wait_for_function("() => !document.querySelector('[data-testid=table]').hidden",
                             timeout=MOVE_TIMEOUT)  # fmt: skip
    wait_text(opened, "status", "^(?!.*Reconnecting)")
    deadline = time.monotonic() + WAIT
    while seated.players[0].sockets != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seated.players[0].sockets == 1


def tried_once(opened: Page, sockets: list[tuple[float, str]], token: str, key: str) -> None:
    """The page's socket at seat ``token`` closes, and its seat is refused for good: the
    page tries once, says that the game could not be reached, and tries no more."""
    sockets.clear()
    opened.evaluate(CLOSE_OWN_SOCKET)
    wait_text(opened, "status", "the game could not be reached again$")
    opened.wait_for_timeout(1500)  # a retry would come within a second
    assert len(seat_tries(sockets, token, key)) == 1, sockets


def test_the_pages_reconnection_is_paced_comes_back_and_stops_at_a_refused_link(
    server: ServerThread,
    fresh: Callable[[], tuple[Page, list[tuple[float, str]]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The inviter's socket closes under it: while the server refuses the seat for a cap
    (1013) the page tries again once a second, not faster, at once the first time; it takes
    the seat once it can, with the same browser key; a socket that closes within a second of
    opening waits a second before its first try; and once the link is refused as another
    browser's seat, or as no game's (the table gone: a restart, say), it tries no more and
    says so."""
    opened, sockets = fresh()
    values = invite_page(server, opened)
    web = web_of(server)
    seated, _ = web.app.tables._players[values["token"]]  # no sweep: not the server's thread
    key = browser_key(opened)
    assert seated.players[0].key == key
    token = values["token"]

    opened.wait_for_timeout(1100)  # the socket has been open more than a second
    monkeypatch.setattr(table_module, "SOCKETS_PER_PLAYER", 0)
    sockets.clear()
    closed = opened.evaluate("() => performance.now() / 1000")
    opened.evaluate(CLOSE_OWN_SOCKET)
    opened.wait_for_timeout(3300)
    times = [when for when in seat_tries(opened_in_page(opened), token, key) if when > closed]
    assert 3 <= len(times) <= 4, times
    assert times[0] - closed < 0.5, (closed, times)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(0.9 < gap < 1.8 for gap in gaps), gaps
    assert "Reconnecting" in text(opened, "status")

    monkeypatch.setattr(table_module, "SOCKETS_PER_PLAYER", 4)
    back_in_game(opened, seated)
    assert seated.players[0].key == key
    # back less than a second ago, and gone again: the first try waits a second
    reopened = seat_tries(sockets, token, key)[-1]
    sockets.clear()
    closed = time.monotonic()
    opened.evaluate(CLOSE_OWN_SOCKET)
    assert closed - reopened < 0.8, (reopened, closed)
    wait_text(opened, "status", "Reconnecting")
    back_in_game(opened, seated)
    times = seat_tries(sockets, token, key)
    assert len(times) == 1, times
    assert 0.9 < times[0] - closed < 1.8, (closed, times)

    # the seat is another browser's now: one try, refused, and the page says so
    opened.wait_for_timeout(1100)
    in_server(server, lambda: setattr(seated.players[0], "key", "another-browsers-key-05"))
    tried_once(opened, sockets, token, key)
    assert seated.players[0].sockets == 0

    # the seat given back to this browser, a reload (the same key) finds the game
    in_server(server, lambda: setattr(seated.players[0], "key", key))
    opened.reload()
    back_in_game(opened, seated)
    assert browser_key(opened) == key

    # the table gone: one try, refused, and the page says so
    opened.wait_for_timeout(1100)
    in_server(server, lambda: web.app.tables._drop(seated))
    tried_once(opened, sockets, token, key)


def test_a_spectator_refused_for_a_full_game_is_told_why_and_tried_again_later_each_time(
    server: ServerThread,
    fresh: Callable[[], tuple[Page, list[tuple[float, str]]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server refuses a spectator with 1013 (the game has all it takes): the page says
    why and when it tries again, and tries again after 2 s, then 5 s (not every second: a
    refused spectator's page does not hammer a server exactly when it is full); once there
    is room, it watches."""
    inviter, _ = fresh()
    values = invite_page(server, inviter)
    monkeypatch.setattr(tables_module, "WATCHERS_PER_TABLE", 0)
    watcher, sockets = fresh()
    refused = "Cannot watch: this game has its 0 spectators. Trying again in {} s."
    watcher.goto(web_of(server).url + "?watch=" + values["watch"])
    wait_text(watcher, "status", "^" + re.escape(refused.format(2)) + "$")
    watcher.wait_for_timeout(3300)
    tried = [when for when, url in sockets if "/events?watch=" in url]
    assert len(tried) == 2, tried
    # 2 s apart by the page's timer; the two sockets' times are taken as the browser reports
    # them, some 0.1 s apart from its timers: no retry after 1 s, none later than 3 s
    assert 1.5 < tried[1] - tried[0] < 3.0, tried
    assert text(watcher, "status") == refused.format(5)
    monkeypatch.setattr(tables_module, "WATCHERS_PER_TABLE", 32)
    watcher.wait_for_function("() => document.body.dataset.state === 'watching'",
                              timeout=MOVE_TIMEOUT)  # fmt: skip
    tried = [when for when, url in sockets if "/events?watch=" in url]
    assert len(tried) == 3, tried
    assert 4.9 < tried[2] - tried[1] < 6.0, tried

"""The browser key that binds a seat of a table (a game between two pages) attacked: what a
stranger or the inviter holding a player's token learns from a refusal, what different
spellings of a key open, the empty key of a program against a page's, a refused guest, the
inviter racing a guest who reconnects, two tabs of one browser, a browser that keeps no
storage, and whether refusals can make the server drop a table (docs/web.md "Playing a
person at another page", docs/security.md "The other player at a table, a spectator, a
stranger"; ``enginesrv/web/tables.py``, ``app.py`` ``_game_of``, ``static/app/table.js``).

Each test asserts what should hold, as the adversary would try to break it. A test marked
``xfail(strict=True)`` is a weakness found: it passes once the server (or the page) is right.
"""

from __future__ import annotations

import hmac
import secrets
import time
import urllib.parse
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest
import trio
from trio_websocket import ConnectionClosed

from enginesrv.web import tables as tables_module
from enginesrv.web.table import SOCKETS_PER_PLAYER, Table
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
    HELD,
    ONLY_KEY,
    TOO_MANY,
    WAIT,
    WHITE_LAWS,
    YINYANG,
    YOXII,
    closed_with,
    drawn_key,
    law_forms,
    only_table,
    page,
    refused,
    seat_url,
    table,
    wait_for,
    write_laws,
)
from tests.web.webpeer import drop, running_web

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["browser", "contexts", "server"]  # the fixtures of browserkit

# keys of this file's own: the tests of a key's spellings and near misses depend on them
HOST_KEY = "Hst" + "k" * 19
"""The inviter's browser key (22 characters, as a page draws one)."""
GUEST_KEY = "GsT-_0123456789abcdefg"
"""The guest's browser key (both cases, digits, ``-`` and ``_``: ``LOOK_ALIKES`` spell it)."""


def bound(seated: Table) -> str | None:
    """The key the guest's seat is bound to (None: no page has taken it yet)."""
    return seated.players[1].key


def snapshot(seated: Table) -> tuple[object, ...]:
    """What a refusal must leave as it was: the pages, keys, graces, changes told and the
    game."""
    players = tuple((p.sockets, p.joined, p.key, p.away_since) for p in seated.players)
    return players, seated.changes, seated.idle_since, seated.started, seated.referee.plies()


# -- what a refusal tells ------------------------------------------------------------------------


def wrong_keys(key: str) -> list[str | None]:
    """Keys a holder of the token tries against a seat bound to ``key``: near misses of every
    kind, and none (a program)."""
    flip = "A" if key[-1] != "A" else "B"
    return [
        key[:-1] + flip,  # all but the last character
        flip + key[1:],  # all but the first
        key.swapcase(),
        key[:16],  # a prefix as short as a key may be
        key + "x",
        (key * 3)[:64],
        secrets.token_urlsafe(16),
        None,
        "",
    ]


@trio_test
async def test_a_wrong_key_of_any_shape_gets_one_answer_compared_in_constant_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A holder of the guest's token (the inviter) tries near misses of the guest's key:
    every one gets the same close code and reason, before any message, nothing of the table
    changes, and every comparison is ``hmac.compare_digest`` (its time does not depend on
    how much of the key matches). With the guest's four pages open, a wrong key is still
    told the seat is held, not that the guest has four pages (no oracle of the guest's
    pages); and a malformed key is refused before the token is looked up, so that it tells
    nothing of the token."""
    compared: list[tuple[str, str]] = []

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return hmac.compare_digest(a, b)

    monkeypatch.setattr(tables_module, "hmac", SimpleNamespace(compare_digest=spy))
    async with running_web() as web, table(web, YOXII, HOST_KEY, GUEST_KEY) as (host, guest, links):
        seated = only_table(web)
        before = snapshot(seated)
        compared.clear()  # the inviter's own join compared its key
        tries = wrong_keys(GUEST_KEY)
        for key in tries:
            assert await closed_with(seat_url(web, links["invite"], key), "query table") == (
                4400,
                HELD,
            ), key
        assert snapshot(seated) == before
        assert sorted(compared) == sorted((GUEST_KEY, key or "") for key in tries)
        # the guest's pages at their cap: a wrong key is told the same
        async with page(seat_url(web, links["invite"], GUEST_KEY)) as second:
            await second.table()
            async with page(seat_url(web, links["invite"], GUEST_KEY)) as third:
                await third.table()
                async with page(seat_url(web, links["invite"], GUEST_KEY)) as fourth:
                    await fourth.table()
                    assert seated.players[1].sockets == SOCKETS_PER_PLAYER
                    for key in (HOST_KEY, None):
                        url = seat_url(web, links["invite"], key)
                        assert await closed_with(url) == (4400, HELD)
                    url = seat_url(web, links["invite"], GUEST_KEY)
                    assert await closed_with(url) == (1013, TOO_MANY)
        # a malformed key: the same answer with the real token, a wrong one, or none
        for token in (links["invite"], links["token"], "x" * 22):
            assert await closed_with(seat_url(web, token, "short")) == (4400, BAD_KEY)
        del host, guest


# -- spellings of a key ------------------------------------------------------------------------


def spelled(token: str, raw_key: str) -> str:
    """A seat's query with ``raw_key`` as written on the wire (already percent-encoded)."""
    return f"table={token}&key={raw_key}"


LOOK_ALIKES = [
    "\uff27sT-_0123456789abcdefg",  # a fullwidth G
    "G\u0455T-_0123456789abcdefg",  # a Cyrillic s
    "GsT-_0123456789abcdef\u0261",  # a Latin script g
    "GsT-_0123456789abcdefg\u200b",  # a zero-width space after it
    "GsT-_0123456789abcde\u212a",  # a Kelvin sign (K under a case-folding match)
    "GsT-_0123456789abcdefg\n",
    "GsT-_0123456789abcdefg\x00",
    "GsT-_0123456789abcdef\u0301g",  # a combining accent
]
"""Keys that look like ``GUEST_KEY`` or fold to a key, and are none."""


@trio_test
async def test_no_other_spelling_of_a_key_opens_a_seat_bound_to_another() -> None:
    """A seat bound to ``GUEST_KEY``: its percent-encoded spelling is the same key (the
    browser's ``URLSearchParams`` may encode it so); a key with its case changed, look-alike
    characters, a space for ``+`` or ``-``, a trailing newline or NUL is never that key, and
    one that is not 16 to 64 ASCII letters, digits, ``-`` or ``_`` is refused as malformed;
    a field named ``KEY`` is another field. Nothing of it faults or changes the table."""
    async with running_web() as web, table(web, YOXII, HOST_KEY, GUEST_KEY) as (host, guest, links):
        seated = only_table(web)
        token = links["invite"]
        encoded = "".join(f"%{ord(c):02X}" for c in GUEST_KEY)
        async with page(web.ws(spelled(token, encoded))) as same:
            assert (await same.table())["seat"] == "p2"
        assert await wait_for(lambda: seated.players[1].sockets == 1)
        await host.note(p2="here")  # the second page's coming and going told
        before = snapshot(seated)
        for key in LOOK_ALIKES:
            quoted = urllib.parse.quote(key, safe="")
            assert await closed_with(web.ws(spelled(token, quoted))) == (4400, BAD_KEY), key
        for raw, reason in (
            (GUEST_KEY.replace("-", "+"), BAD_KEY),  # + is a space in a query
            (GUEST_KEY.replace("-", "%2B"), BAD_KEY),
            (GUEST_KEY.replace("-", "%20"), BAD_KEY),
            (GUEST_KEY[:15], BAD_KEY),
            ("a" * 65, BAD_KEY),
            (GUEST_KEY + "%", BAD_KEY),
            (GUEST_KEY.replace("_", "%5F%5F"), HELD),  # decoded: another key, of two _
        ):
            assert await closed_with(web.ws(spelled(token, raw))) == (4400, reason), raw
        for raw in (
            GUEST_KEY.swapcase(),
            GUEST_KEY.replace("-", "_"),
            "a" * 64,
            "a" * 16,
        ):
            assert await closed_with(web.ws(spelled(token, raw))) == (4400, HELD), raw
        assert await closed_with(web.ws(f"table={token}&KEY={GUEST_KEY}")) == (4400, ONLY_KEY)
        assert snapshot(seated) == before
        del host, guest


@trio_test
async def test_a_key_of_16_or_64_characters_binds_a_seat_and_15_or_65_are_refused() -> None:
    """The bounds of a key, at the invite and at the guest's first visit: 16 and 64
    characters bind a seat that only that key opens again; 15 and 65 are refused as
    malformed, and bind nothing (the seat is then still free for the real guest)."""
    async with running_web() as web:
        for first, second in (("s" * 16, "L" * 64), ("L" * 64, "s" * 16)):
            async with page(web.ws(f"{YOXII}&key={first}")) as host:
                links = await host.table()
                seated = web.app.tables.player(links["invite"])
                assert seated is not None
                for bad in ("s" * 15, "L" * 65):
                    url = seat_url(web, links["invite"], bad)
                    assert await closed_with(url) == (4400, BAD_KEY)
                    assert await closed_with(seat_url(web, links["token"], bad)) == (4400, BAD_KEY)
                assert bound(seated[0]) is None
                async with page(seat_url(web, links["invite"], second)) as guest:
                    assert (await guest.table())["seat"] == "p2"
                assert bound(seated[0]) == second
                assert await closed_with(seat_url(web, links["invite"], first)) == (4400, HELD)
                assert await closed_with(seat_url(web, links["token"], second)) == (4400, HELD)


@trio_test
async def test_a_key_sent_twice_is_read_one_way_and_opens_only_the_seat_of_that_key() -> None:
    """``key=A&key=B``: whichever of the two the server reads, it reads the same one every
    time, binds the seat to that one only, and the other, alone, is then refused."""
    other = "other-browser-key-0009"
    async with running_web() as web, page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
        links = await host.table()
        seated = only_table(web)
        url = web.ws(f"table={links['invite']}&key={GUEST_KEY}&key={other}")
        async with page(url) as guest:
            assert (await guest.table())["seat"] == "p2"
        bound = seated.players[1].key
        assert bound in (GUEST_KEY, other)
        loser = other if bound == GUEST_KEY else GUEST_KEY
        assert await closed_with(seat_url(web, links["invite"], loser)) == (4400, HELD)
        # the same address again: read the same way
        assert await wait_for(lambda: seated.players[1].sockets == 0)
        async with page(url) as again:
            assert (await again.table())["seat"] == "p2"
        reversed_url = web.ws(f"table={links['invite']}&key={other}&key={GUEST_KEY}")
        if bound == other:  # the last is read: the reversed address presents GUEST_KEY
            assert await closed_with(reversed_url) == (4400, HELD)


# -- the empty key of a program, a page's key ----------------------------------------------------


@trio_test
async def test_a_seat_a_program_took_without_a_key_is_refused_to_a_page_and_the_reverse() -> None:
    """A program takes the guest's seat without a key: its seat is bound to a key the server
    draws (``query table``'s ``key``), so a page (of any key), another program with no key,
    or ``key=``, is refused it; the program comes back with the key it was told. A page
    takes it with its key: a program with no key, or ``key=``, is refused. The inviter's
    seat, made with a page's key, is refused to a program with no key."""
    async with running_web() as web:
        async with table(web, YOXII, HOST_KEY, None) as (host, guest, links):
            told = await guest.table()
            drawn = drawn_key(told, HOST_KEY, GUEST_KEY)
            assert only_table(web).players[1].key == drawn
            assert (await host.table())["key"] == HOST_KEY
            for key in (GUEST_KEY, HOST_KEY, None, ""):
                assert await closed_with(seat_url(web, links["invite"], key)) == (4400, HELD), key
            async with page(seat_url(web, links["invite"], drawn)) as again:
                assert await again.table() == told
            del host, guest
        async with table(web, YOXII, HOST_KEY, GUEST_KEY) as (host, guest, links):
            for url in (
                seat_url(web, links["invite"], None),
                web.ws(f"table={links['invite']}&key="),
            ):
                assert await closed_with(url) == (4400, HELD)
            assert await closed_with(seat_url(web, links["token"], None)) == (4400, HELD)
            del host, guest


@trio_test
async def test_the_inviter_cannot_share_the_seat_of_a_program_that_sent_no_key() -> None:
    """A program plays the guest with the invite it was given and no key (docs/web.md: "a
    program may leave it out (the empty key, then: it binds the seat too)"); it writes its
    laws. The inviter, who knows the invite, opens the seat with no key: it should be
    refused, as any other page of another browser, and never read the guest's laws nor act
    for it."""
    async with running_web() as web, table(web, YINYANG, HOST_KEY, None) as (host, guest, links):
        await write_laws(host, guest, BLACK_LAWS)
        await write_laws(guest, host, WHITE_LAWS)
        url = seat_url(web, links["invite"], None)
        read: list[str] = []
        resigned = ""
        async with page(url) as spy:
            try:
                await spy.table()
                await spy.reply("query position")
                read = spy.texts()
                resigned = await spy.reply("resign")
            except ConnectionClosed:
                await drop(spy.socket.ws)
        secret = law_forms(WHITE_LAWS)
        leaked = [law for law in secret for text in read if law in text]
        assert (leaked, resigned) == ([], "")
        assert only_table(web).players[1].sockets == 1
        assert only_table(web).referee.outcome() is None


# -- the guest refused, the guest away ------------------------------------------------------------


@trio_test
async def test_a_guest_refused_is_shown_nothing_and_what_it_sent_first_is_not_played() -> None:
    """The inviter opens its own invite first from another browser (the inviter is White, so
    the guest's seat, Black, writes first); the real guest's page sends ``query table``,
    ``query position`` and its laws at once: it is closed with the reason and gets no line
    (no view, no token, no link), none of its laws is played, and the inviter's page at the
    guest's seat is told nothing of it. The inviter's later play shows it none of the real
    guest's laws (it never wrote any)."""
    query = "game=yinyang&opponent=invite&side=p2"
    spy_key = "inviters-other-browser"
    async with running_web() as web, page(web.ws(f"{query}&key={HOST_KEY}")) as host:
        links = await host.table()
        seated = only_table(web)
        async with page(seat_url(web, links["invite"], spy_key)) as spy:
            assert (await spy.table())["seat"] == "p1"
            await host.note(p1="here")
            before = snapshot(seated)
            code, reason, got = await refused(
                seat_url(web, links["invite"], GUEST_KEY),
                "query table",
                "query position",
                "play laws:" + ",".join(BLACK_LAWS),
            )
            assert (code, reason, got) == (4400, HELD, [])
            assert snapshot(seated) == before
            assert seated.referee.plies() == 0
            assert (await spy.table())["plies"] == "0"
            assert spy.notes == []
            position = await spy.ask("query position")
            assert not [law for law in law_forms(BLACK_LAWS) if law in position]


@trio_test
async def test_the_inviter_cannot_race_a_guest_who_is_reconnecting() -> None:
    """The guest's socket drops in the middle of the game; while the guest's page reconnects,
    the inviter (who knows the invite) tries the seat with its own key, a key of its other
    browser, no key, and ``key=``: each is refused as the guest's browser's seat, the guest
    stays away with its grace counting from its drop (neither reset nor stopped), and the
    guest comes back to its seat with its key, the game as it was."""
    async with running_web() as web:
        web.app.tables.grace = 8.0
        async with page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
            links = await host.table()
            seated = only_table(web)
            async with page(seat_url(web, links["invite"], GUEST_KEY)) as guest:
                await guest.table()
                await host.note(p2="here")
                move = (await host.ask("query moves")).split()[0]
                await host.ask(f"play {move}")
                await guest.note(plies="1")
            assert await wait_for(lambda: seated.players[1].sockets == 0)
            away = seated.players[1].away_since
            assert away is not None
            before = snapshot(seated)
            for key in (HOST_KEY, "inviters-other-browser", None, ""):
                url = seat_url(web, links["invite"], key)
                assert await closed_with(url, "query table", "resign") == (4400, HELD), key
            assert snapshot(seated) == before
            asked = trio.current_time()
            left = int((await host.table())["p2grace"])
            assert 0 < left <= round((away + 8.0 - asked) * 1000)
            async with page(seat_url(web, links["invite"], GUEST_KEY)) as back:
                values = await back.table()
                assert (values["seat"], values["p2"], values["plies"]) == ("p2", "here", "1")
                assert values["result"] == "none"
            assert seated.players[1].key == GUEST_KEY


# -- one browser, two tabs -----------------------------------------------------------------------


@trio_test
async def test_two_tabs_of_one_browser_share_its_seat_and_no_other_browser_does() -> None:
    """Two tabs of the guest's browser (one key) open the invite at the same moment: both
    are seated at the guest's seat (neither is refused as another browser's), both see a
    move made at the other, and the inviter's page counts the guest as here once. A tab of
    another browser is refused while they are there."""
    async with running_web() as web, page(web.ws(f"{YOXII}&key={HOST_KEY}")) as host:
        links = await host.table()
        seated = only_table(web)
        answers: list[str] = []
        done = trio.Event()
        hold = trio.Event()

        async def tab() -> None:
            async with page(seat_url(web, links["invite"], GUEST_KEY)) as opened:
                answers.append((await opened.table())["seat"])
                if len(answers) == 2:
                    done.set()
                await hold.wait()
                await opened.note(plies="1")
                answers.append("told")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(tab)
            nursery.start_soon(tab)
            with trio.fail_after(WAIT):
                await done.wait()
            assert answers == ["p2", "p2"]
            assert seated.players[1].sockets == 2
            assert await closed_with(seat_url(web, links["invite"], "third-browser-key-0001")) == (
                4400,
                HELD,
            )
            await host.note(p2="here")
            move = (await host.ask("query moves")).split()[0]
            await host.ask(f"play {move}")
            hold.set()
        assert answers[2:] == ["told", "told"]


# -- dropping a table ----------------------------------------------------------------------------


@trio_test
async def test_refusals_cannot_make_the_server_drop_a_table_sooner() -> None:
    """A server that holds its most tables (2 here), one of them a victim's whose game is
    over and whose players just left (they may come back for a rematch): a stranger from
    another address knocks at both seats with wrong keys, again and again, and asks to
    make a table: it is refused (1013) until the victim's table has been alone for the
    grace, and the knocks neither move the time it was left nor the table's state; after
    the grace it gives its place (as documented), and only then."""
    grace = 1.5
    async with running_web() as web:
        tables = web.app.tables
        tables.grace = grace
        tables.most = 2
        async with page(web.ws(f"{YOXII}&key=fillers-browser-key-01")) as filler:
            await filler.table()
            async with table(web, YOXII, HOST_KEY, GUEST_KEY) as (host, guest, links):
                assert await guest.ask("resign") == "resigned"
                await host.note(result="p1win")
            (victim,) = [t for t in tables.tables if t.players[0].key == HOST_KEY]
            assert await wait_for(lambda: not victim.players_here())
            left = victim.idle_since
            before = snapshot(victim)
            stranger = web.ws(f"{YOXII}&key=strangers-browser-key1")
            deadline = left + grace - 0.3
            rounds = 0
            while trio.current_time() < deadline:
                for token in (links["invite"], links["token"]):
                    for key in ("strangers-browser-key1", None):
                        assert await closed_with(seat_url(web, token, key)) == (4400, HELD)
                code, reason = await closed_with(stranger)
                assert code == 1013, reason
                rounds += 1
            assert rounds >= 2
            assert snapshot(victim) == before
            assert victim in tables.tables
            await trio.sleep(max(0.0, left + grace - trio.current_time()) + 0.05)
            async with page(stranger) as made:
                await made.table()
                assert victim not in tables.tables
        del filler


# -- the page ----------------------------------------------------------------------------------


NO_STORAGE = """
Object.defineProperty(window, "localStorage", {
  configurable: true,
  get() { throw new DOMException("The user denied access to site data", "SecurityError"); },
});
"""
"""A browser that keeps no site data (Chromium with cookies blocked throws at the name)."""
NO_TAB_STORAGE = NO_STORAGE.replace("localStorage", "sessionStorage")
"""A browser that keeps not even the tab's data."""


def invite_link(server: ServerThread, opened: Page) -> str:
    """``opened`` invites (yoxii, the first player, no clock); the guest's absolute link."""
    base = web_of(server).url
    return urllib.parse.urljoin(base, invite_yoxii(opened, base))


def seated_guest(opened: Page) -> None:
    opened.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    wait_text(opened, "table-status", "^White is here\\.$")


def guest_pages(server: ServerThread, link: str) -> int:
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["table"][0]
    table_, player = web_of(server).app.tables._players[token]  # no sweep: another thread
    return table_.players[player].sockets


def test_two_tabs_of_one_browser_both_play_the_guests_seat(
    server: ServerThread, contexts: Contexts
) -> None:
    """The guest opens the invite in one tab and then in a second tab of the same browser:
    both show the game at the guest's seat (the browser's key is kept for every tab), and a
    move the inviter makes reaches both."""
    a = contexts.new().new_page()
    link = invite_link(server, a)
    guest = contexts.new()
    first, second = guest.new_page(), guest.new_page()
    first.goto(link)
    seated_guest(first)
    second.goto(link)
    seated_guest(second)
    assert guest_pages(server, link) == 2
    key = first.evaluate("() => localStorage.getItem('enginesrv-key')")
    assert key == second.evaluate("() => localStorage.getItem('enginesrv-key')")
    wait_text(a, "table-status", "^Black is here\\.$")
    a.wait_for_function("() => document.body.dataset.state === 'person'", timeout=MOVE_TIMEOUT)
    for opened in (first, second):
        assert opened.evaluate("document.body.dataset.state") == "waiting"


def test_a_browser_without_storage_keeps_its_seat_across_a_lost_connection(
    server: ServerThread, contexts: Contexts
) -> None:
    """A guest whose browser keeps no site data: the page still takes the seat (with a key
    of the page's own), and when its socket is lost it comes back to the seat with that
    same key."""
    a = contexts.new().new_page()
    link = invite_link(server, a)
    b = contexts.new(NO_STORAGE).new_page()
    b.goto(link)
    seated_guest(b)
    assert b.evaluate(
        "() => { try { localStorage; return 'kept'; } catch { return 'none'; } }"
    ) == ("none")
    b.evaluate(
        """async () => {
          const { app } = await import('/static/app/state.js');
          app.session.socket.close();
        }"""
    )
    wait_text(a, "table-status", "^Black (left|is here)")
    wait_text(b, "table-status", "^White is here\\.$")
    b.wait_for_function(
        "() => !/Reconnecting|could not be reached/.test("
        "document.querySelector('[data-testid=status]').textContent)",
        timeout=MOVE_TIMEOUT,
    )
    wait_text(a, "table-status", "^Black is here\\.$")
    deadline = time.monotonic() + WAIT
    while guest_pages(server, link) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert guest_pages(server, link) == 1


UNKEPT = (
    "This browser keeps no data for this site: a reload or another tab cannot take your seat back."
)
"""What the table panel ends with when the page can keep its key in no storage."""


def test_a_browser_keeping_only_the_tabs_data_gets_its_seat_back_after_a_reload(
    server: ServerThread, contexts: Contexts
) -> None:
    """The guest's browser keeps no site data (``localStorage`` throws) but keeps the tab's
    (``sessionStorage``): the page keeps its key there, and a reload in the same tab comes
    back to the seat with it, never told the seat is another browser's."""
    a = contexts.new().new_page()
    link = invite_link(server, a)
    b = contexts.new(NO_STORAGE).new_page()
    b.goto(link)
    seated_guest(b)
    key = b.evaluate("() => sessionStorage.getItem('enginesrv-key')")
    assert isinstance(key, str)
    assert len(key) >= 16
    assert not text(b, "table-status").endswith(UNKEPT)
    b.reload()
    seated_guest(b)
    assert b.evaluate("() => sessionStorage.getItem('enginesrv-key')") == key
    assert "another browser" not in text(b, "status")
    assert not text(b, "table-status").endswith(UNKEPT)


def test_a_browser_keeping_no_data_at_all_is_told_so_before_a_reload_refuses_it(
    server: ServerThread, contexts: Contexts
) -> None:
    """The guest's browser keeps neither the site's data nor the tab's (both storages
    throw): the page takes the seat with a key of its own and its table panel says plainly
    that a reload or another tab cannot take the seat back; after a reload the seat is
    refused, and the page shows the refusal."""
    a = contexts.new().new_page()
    link = invite_link(server, a)
    b = contexts.new(NO_STORAGE, NO_TAB_STORAGE).new_page()
    b.goto(link)
    b.wait_for_selector("[data-testid=board] [data-square]", timeout=MOVE_TIMEOUT)
    b.wait_for_function(
        "u => document.querySelector('[data-testid=table-status]').textContent === u",
        arg=f"White is here. {UNKEPT}",
        timeout=MOVE_TIMEOUT,
    )
    b.reload()
    b.wait_for_function(
        "() => /Cannot open/.test(document.querySelector('[data-testid=status]').textContent)",
        timeout=MOVE_TIMEOUT,
    )
    assert HELD in text(b, "status")
    assert b.evaluate("document.body.dataset.state") not in ("person", "waiting")

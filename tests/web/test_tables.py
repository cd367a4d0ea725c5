"""Games between two pages (tables) end to end: two real WebSockets of players, spectators'
feeds, over hypercorn in the test's trio run (the pages and feeds of ``tablekit``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import pytest
import trio

from enginesrv.web.table import SOCKETS_PER_PLAYER, Table
from enginesrv.web.tables import TABLES_PER_PEER
from tests.trio_run import trio_test
from tests.web.tablekit import (
    BAD_KEY,
    GUEST_KEY,
    HELD,
    HOST_KEY,
    NO_LINK,
    NO_WATCH,
    NOT_A_TABLE,
    ONLY_KEY,
    PLACE_GRACE,
    TOO_MANY,
    WAIT,
    YOXII,
    Page,
    Spectator,
    closed_with,
    drawn_key,
    events_url,
    hidden_laws,
    leaks,
    other,
    own_token,
    pairs,
    play_first,
    seat_url,
    spectator,
    table,
    wait_for,
    write_laws,
    yinyang_choice,
)
from tests.web.webpeer import BinarySocket, Web, binary_socket, running_web, text_socket

YOXII_START = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
OTHER_KEY = "another-browser-key_0003"
"""The key of a browser that is neither player's."""


@asynccontextmanager
async def watched_table() -> AsyncIterator[tuple[Page, Page, dict[str, str], Spectator]]:
    """A new server's table of ``YOXII`` (``table``) and a spectator of it from the start."""
    async with (
        running_web() as web,
        table(web, YOXII) as (host, guest, links),
        spectator(web, links["watch"]) as watcher,
    ):
        yield host, guest, links, watcher


# -- 1. invite and join ------------------------------------------------------------------------


@trio_test
async def test_an_invite_and_its_guest_each_get_their_own_seat_and_token() -> None:
    async with running_web() as web:
        query = f"game=yoxii&opponent=invite&side=p1&tc=60+1&key={HOST_KEY}"
        async with text_socket(web.ws(query)) as a:
            host = Page(a)
            alone = pairs(await host.ask("query table"))
            assert (alone["p1"], alone["p2"]) == ("here", "waiting")
            assert (alone["name"], alone["tc"], alone["result"]) == ("yoxii", "60+1", "none")
            assert (alone["game"], alone["seat"], alone["plies"]) == ("1", "p1", "0")
            await host.refused("offer draw")  # no one to offer it to yet
            async with text_socket(seat_url(web, alone["invite"], GUEST_KEY)) as b:
                guest = Page(b)
                came = await host.note(p2="here")
                mine = pairs(await host.ask("query table"))
                theirs = pairs(await guest.ask("query table"))
                assert came == mine
                # the invite is the guest's own link, its seat bound to the browser that took
                # it: a page of another browser (the inviter's among them), or of none, is
                # refused before it is told anything
                for key in (OTHER_KEY, HOST_KEY, None, ""):
                    code, reason = await closed_with(seat_url(web, alone["invite"], key))
                    assert (code, reason) == (4400, HELD), key
                # the guest's browser opens a second page at its seat
                async with text_socket(seat_url(web, alone["invite"], GUEST_KEY)) as c:
                    again = pairs(await Page(c).ask("query table"))
                    assert (again["seat"], again["token"]) == ("p2", alone["invite"])
                    assert (again["invite"], again["key"]) == ("none", GUEST_KEY)
                # and the inviter's seat is the inviter's browser's alike
                for key in (GUEST_KEY, None):
                    code, reason = await closed_with(seat_url(web, alone["token"], key))
                    assert (code, reason) == (4400, HELD), key
        assert (mine["seat"], theirs["seat"]) == ("p1", "p2")
        assert alone["invite"] != "none"
        assert mine["invite"] == theirs["invite"] == "none"
        assert theirs["token"] == alone["invite"]
        assert mine["token"] == alone["token"]
        assert (alone["key"], mine["key"], theirs["key"]) == (HOST_KEY, HOST_KEY, GUEST_KEY)
        assert mine["watch"] == theirs["watch"] == alone["watch"]
        tokens = {mine["token"], theirs["token"], mine["watch"]}
        assert len(tokens) == 3
        assert all(len(token) >= 20 for token in tokens)
        assert all(re.fullmatch(r"[A-Za-z0-9_-]+", token) for token in tokens)
        for values in (mine, theirs):
            assert (values["p1"], values["p2"]) == ("here", "here")
            assert values["p1grace"] == values["p2grace"] == "0"
            assert values["offer"] == values["offered"] == values["declined"] == "none"
        code, reason = await closed_with(web.ws("table=" + "x" * 22))
        assert (code, reason) == (4400, NO_LINK)
        code, reason = await closed_with(web.ws(f"table={theirs['token']}&game=yoxii"))
        assert (code, reason) == (4400, ONLY_KEY)
        code, reason = await closed_with(web.ws(f"table={theirs['token']}&key={GUEST_KEY}&side=p1"))
        assert (code, reason) == (4400, ONLY_KEY)
        code, reason = await closed_with(seat_url(web, mine["watch"], HOST_KEY))
        assert (code, reason) == (4400, NO_LINK)
        # every page gone, each seat is still its browser's
        code, reason = await closed_with(web.ws(f"table={alone['invite']}"))
        assert (code, reason) == (4400, HELD)
        async with text_socket(seat_url(web, alone["token"], HOST_KEY)) as back:
            values = pairs(await Page(back).ask("query table"))
            assert (values["seat"], values["p1"], values["p2"]) == ("p1", "here", "away")


@trio_test
async def test_a_key_is_16_to_64_url_safe_characters_and_only_a_tables() -> None:
    """A malformed key is refused whatever the address (before its token is looked up); a
    key of 16 or 64 letters, digits, ``-`` or ``_`` is taken; a game that is not between two
    pages (a bot's, one screen's, a plain session) takes none."""
    async with running_web() as web:
        invite = "game=yoxii&opponent=invite&side=p1"
        for key in (
            "k" * 15,
            "k" * 65,
            "k" * 15 + ".",
            "k" * 15 + "+",
            "k" * 15 + "é",
            "k" * 8 + " " * 8,
        ):
            for query in (
                f"{invite}&{urlencode({'key': key})}",
                urlencode({"table": "x" * 22, "key": key}),
            ):
                assert await closed_with(web.ws(query)) == (4400, BAD_KEY), (key, query)
        assert web.app.tables.tables == {}
        for key in ("k" * 16, "-_" * 32, "K0-_" * 4):
            async with text_socket(web.ws(f"{invite}&key={key}")) as a:
                values = pairs(await Page(a).ask("query table"))
                assert (values["seat"], values["p2"]) == ("p1", "waiting")
                found = web.app.tables.player(values["token"])
                assert found is not None
                assert found[0].players[0].key == key
        for query in (
            f"game=yoxii&opponent=human&key={OTHER_KEY}",
            f"game=yoxii&opponent=bot:greedy&side=p2&key={OTHER_KEY}",
            f"key={OTHER_KEY}",
        ):
            assert await closed_with(web.ws(query)) == (4400, NOT_A_TABLE), query
        # an empty key is no key: a plain session takes it
        async with text_socket(web.ws("key=")) as plain:
            assert (await Page(plain).reply("isready")) == "readyok"


# -- 2. a whole game -------------------------------------------------------------------------


async def both_clocks(pages: dict[str, Page], turn: str) -> None:
    """Both pages tell the clocks alike: the one of ``turn`` runs, the other's stands."""
    first = pairs(await pages["p1"].ask("query clock"))
    second = pairs(await pages["p2"].ask("query clock"))
    assert first["running"] == second["running"] == turn
    if turn == "none":
        assert first == second
    else:
        standing = other(turn)
        assert first[standing] == second[standing]
        assert 0 < int(second[turn]) <= int(first[turn]) <= 60_000 + 64 * 1000


@trio_test
async def test_a_whole_game_played_move_by_move_between_two_pages() -> None:
    query = "game=yoxii&opponent=invite&side=p2&tc=60+1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        assert links["seat"] == "p2"
        pages = {"p1": guest, "p2": host}
        go = await guest.reply("go")
        assert go.startswith("error 101 bad-arguments go: the other player decides here")
        assert await guest.following() == "bestmove none"
        assert await guest.ask("query turn") == "p1"
        played: list[str] = []
        for ply in range(400):
            turn = await host.ask("query turn")
            assert await guest.ask("query turn") == turn
            if ply % 16 == 0 or turn == "none":
                await both_clocks(pages, turn)
            if turn == "none":
                break
            played.append(await play_first(pages[turn], pages[other(turn)]))
        assert len(played) > 20  # a whole game, not a short cut
        for page in (host, guest):
            assert await page.ask("query gameover") == "true"
            assert await page.ask("query played") == " ".join(played)
            assert all(int(n["plies"]) <= len(played) for n in page.notes)
        outcome = await host.ask("query outcome")
        assert await guest.ask("query outcome") == outcome
        result = await host.ask("query result")
        assert outcome.split()[0] == "winner=" + result.removesuffix("win")
        for page in (host, guest):  # each page was told the end
            if not any(n["result"] == result for n in page.notes):
                await page.note(result=result)
        for page in (host, guest):
            assert (await page.reply("play c5")).startswith("error 203 game-over play: ")


# -- 3. hidden information ---------------------------------------------------------------------


# this file's own laws (its leak test depends on them): the lists of moves its pages read,
# which name laws, are searched for leaks too, and none of those lists names these
BLACK_LAWS = ("wwbb>ww.b", "b..w>bwww", "wbwb>*", "bbbb>bb.b")
WHITE_LAWS = ("bwwb>.wwb", "w..b>wbbb", "ww.b>*", "w.w.>wbwb")


@trio_test
async def test_no_page_and_no_spectator_is_ever_told_the_other_sides_secret_laws() -> None:
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        ((state_of, _),) = web.app.tables.tables.items()

        def secrets() -> tuple[set[str], set[str]]:
            """Black's and White's hidden laws now, in both forms."""
            full = state_of.referee.state.to_string()
            return hidden_laws(full, 0), hidden_laws(full, 1)

        async with spectator(web, links["watch"]) as watcher:
            assert (await watcher.next())["type"] == "event"
            assert await host.ask("query clock") == "none"
            await write_laws(host, guest, BLACK_LAWS)
            await write_laws(guest, host, WHITE_LAWS)
            wrote = ("laws:" + ",".join(BLACK_LAWS), "laws:" + ",".join(WHITE_LAWS))
            assert (await guest.ask("query played")) == f"laws:?,?,?,? {wrote[1]}"
            assert (await host.ask("query played")) == f"{wrote[0]} laws:?,?,?,?"
            pages = {"p1": host, "p2": guest}
            plies = 2
            hidden = {plies: set().union(*secrets())}
            for _ in range(200):
                turn = await host.ask("query turn")
                if turn == "none":
                    break
                move = yinyang_choice((await pages[turn].ask("query moves")).split())
                await pages[turn].ask(f"play {move}")
                plies += 1
                await pages[other(turn)].note(plies=plies)
                black, white = secrets()
                hidden[plies] = black | white
                assert black
                assert white
                assert leaks(guest.texts(), black) == []
                assert leaks(host.texts(), white) == []
            assert plies > 10
            result = await watcher.until("result")
            assert result["plies"] == plies
            black, white = secrets()
            assert leaks(guest.texts(), black) == []
            assert leaks(host.texts(), white) == []
            # each of the spectator's messages hides what was hidden when it was sent
            assert leaks(watcher.texts, black | white) == []
            for text, message in zip(watcher.texts, watcher.messages, strict=True):
                if message["type"] == "move" and message["ply"] >= 2:
                    assert leaks([text], hidden[message["ply"]]) == []
            moves = [m for m in watcher.messages if m["type"] == "move"]
            assert [m["ply"] for m in moves] == list(range(1, plies + 1))
            assert moves[0]["move"] == moves[1]["move"] == "laws:?,?,?,?"
            assert moves[1]["position"].split()[3:5] == ["?,?,?,?", "?,?,?,?"]


# -- 4. resign ---------------------------------------------------------------------------------


@trio_test
async def test_a_resignation_ends_the_game_for_both_pages_and_the_spectators() -> None:
    async with watched_table() as (host, guest, _, watcher):
        await play_first(host, guest)
        assert await guest.ask("resign") == "resigned"
        told = await host.note(result="p1win")
        assert told["plies"] == "1"
        assert (await guest.note(result="p1win"))["p1grace"] == "0"
        for page in (host, guest):
            assert await page.ask("query outcome") == "winner=p1 reason=resign"
            assert await page.ask("query gameover") == "true"
            assert await page.ask("query turn") == "none"
        assert pairs(await host.ask("query clock"))["running"] == "none"
        await host.refused("resign", 203)
        await guest.refused("offer draw", 203)
        result = await watcher.until("result")
        assert result == {
            "type": "result",
            "id": 1,
            "winner": "p1",
            "reason": "resign",
            "plies": 1,
            "text": "Host wins: Guest resigned",
        }
        assert [m["type"] for m in watcher.messages] == ["event", "game", "move", "result"]


# -- 5. a draw offered, declined, offered again and agreed -------------------------------------


@trio_test
async def test_a_draw_declined_then_offered_again_and_agreed() -> None:
    query = "game=yoxii&opponent=invite&side=p1&tc=60+1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        await host.refused("decline draw")  # nothing offered
        await play_first(host, guest)  # White's Totem; its placement is still due
        assert await guest.ask("offer draw") == "offered"
        assert (await host.note(offer="draw"))["offered"] == "none"
        await play_first(host, guest)  # a decision clears every offer
        assert guest.notes[-1]["offered"] == "none"
        assert pairs(await host.ask("query table"))["offer"] == "none"
        assert await host.ask("offer draw") == "offered"
        assert await host.ask("decline draw") == "withdrawn"
        assert (await guest.note(offer="none"))["declined"] == "none"
        assert await host.ask("offer draw") == "offered"
        assert (await guest.note(offer="draw"))["declined"] == "none"
        assert await guest.ask("decline draw") == "declined"
        told = await host.note(declined="draw")
        assert (told["offered"], told["offer"]) == ("none", "none")
        assert (await guest.note(offer="none"))["offered"] == "none"
        assert await guest.ask("query gameover") == "false"
        assert await host.ask("offer draw") == "offered"
        assert (await host.note(offered="draw"))["declined"] == "none"
        await guest.note(offer="draw")
        assert await guest.ask("offer draw") == "agreed"
        told = await host.note(result="draw")
        assert told["offer"] == told["offered"] == "none"
        told = await guest.note(result="draw")
        assert told["offer"] == told["offered"] == "none"
        for page in (host, guest):
            assert await page.ask("query outcome") == "winner=draw reason=agreement"
        await host.refused("offer draw", 203)


# -- 6. takeback -------------------------------------------------------------------------------


@trio_test
async def test_a_takeback_offered_and_accepted_and_one_with_nothing_to_take_back() -> None:
    async with watched_table() as (host, guest, _, watcher):
        assert "no decision to take back" in await host.refused("offer takeback")
        await guest.refused("offer takeback")
        await play_first(host, guest)
        assert "no decision to take back" in await guest.refused("offer takeback")
        await host.refused("undo")
        assert await host.ask("offer takeback") == "offered"
        await guest.note(offer="takeback")
        assert await guest.ask("offer takeback") == "agreed"
        for page in (host, guest):
            told = await page.note(plies=0)
            assert told["offer"] == told["offered"] == "none"
            assert await page.ask("query played") == ""
            assert await page.ask("query position") == YOXII_START
            assert await page.ask("query turn") == "p1"
        # the spectators are sent the game again from its start
        assert (await watcher.until("game"))["position"] == YOXII_START
        assert (await watcher.until("game"))["position"] == YOXII_START
        assert [m["type"] for m in watcher.messages] == ["event", "game", "move", "game"]
        again = await play_first(host, guest)  # the game goes on
        live = await watcher.next()
        assert (live["type"], live["ply"], live["move"]) == ("move", 1, again)


# -- 7. rematch --------------------------------------------------------------------------------


@trio_test
async def test_a_rematch_after_the_end_swaps_the_colours() -> None:
    async with watched_table() as (host, guest, links, watcher):
        token = await own_token(guest)
        await play_first(host, guest)
        assert "once the game is over" in await host.refused("offer rematch")
        assert await host.ask("resign") == "resigned"
        await guest.note(result="p2win")
        assert await host.ask("offer rematch") == "offered"
        await guest.note(offer="rematch")
        assert await guest.ask("offer rematch") == "agreed"
        mine, theirs = await host.note(game=2), await guest.note(game=2)
        assert (mine["seat"], theirs["seat"]) == ("p2", "p1")
        assert mine["plies"] == theirs["plies"] == "0"
        assert mine["result"] == theirs["result"] == "none"
        # each keeps its own token (the guest's is the invite), and no invite is offered
        assert (mine["token"], theirs["token"]) == (links["token"], token)
        assert token == links["invite"]
        assert (mine["invite"], theirs["invite"]) == ("none", "none")
        assert mine["offer"] == mine["offered"] == theirs["offer"] == theirs["offered"] == "none"
        for page in (host, guest):
            assert await page.ask("query gameover") == "false"
            assert await page.ask("query played") == ""
            assert await page.ask("query turn") == "p1"
        await play_first(guest, host)  # the guest now plays first
        assert pairs(await host.ask("query clock"))["running"] == "p1"
        game = await watcher.until("game", id=2)
        assert (game["p1"], game["p2"]) == ("Guest", "Host")
        assert (await watcher.until("move", id=2))["ply"] == 1


# -- 8. a player who goes and comes back, or does not --------------------------------------------


@trio_test
async def test_a_guest_who_reconnects_within_the_grace_plays_on() -> None:
    query = "game=yoxii&opponent=invite&side=p1&tc=60+1"
    async with running_web() as web, text_socket(web.ws(query)) as inviter:
        host = Page(inviter)  # a program's: no key
        links = pairs(await host.ask("query table"))
        host_key = drawn_key(links, GUEST_KEY)
        async with text_socket(seat_url(web, links["invite"], GUEST_KEY)) as first:
            guest = Page(first)
            await host.note(p2="here")
            theirs = pairs(await guest.ask("query table"))
            token = theirs["token"]
            assert (token, theirs["key"]) == (links["invite"], GUEST_KEY)
            await play_first(host, guest)
            await play_first(host, guest)
            await play_first(guest, host)
            before = await guest.ask("query played")
            position = await guest.ask("query position")
        away = await host.note(p2="away")
        assert 0 < int(away["p2grace"]) <= 30_000
        assert (away["p1"], away["p1grace"]) == ("here", "0")
        # the guest's seat is its browser's while it is away: the inviter, who knows the
        # link, is refused with no key or another one (its own seat's among them); the guest's
        # browser comes back to it
        for key in (None, "", HOST_KEY, host_key):
            code, reason = await closed_with(seat_url(web, links["invite"], key))
            assert (code, reason) == (4400, HELD)
        assert pairs(await host.ask("query table"))["p2"] == "away"
        async with text_socket(seat_url(web, token, GUEST_KEY)) as second:
            back = Page(second)
            start = trio.current_time()
            assert await back.ask("query position") == position
            assert trio.current_time() - start < 0.5
            again = await host.note(p2="here")
            assert (again["p2grace"], again["key"]) == ("0", host_key)
            assert pairs(await back.ask("query table"))["key"] == GUEST_KEY
            assert await back.ask("query played") == before
            assert await back.ask("query turn") == "p2"
            await play_first(back, host)
            assert await host.ask("query played") == await back.ask("query played")
            assert await host.ask("query gameover") == "false"


@trio_test
async def test_a_guest_who_stays_away_loses_after_the_grace() -> None:
    query = "game=yoxii&opponent=invite&side=p1&tc=60+1"
    async with running_web() as web:
        web.app.tables.grace = 1.0
        async with text_socket(web.ws(query)) as inviter:
            host = Page(inviter)
            links = pairs(await host.ask("query table"))
            async with spectator(web, links["watch"]) as watcher:
                host_key = drawn_key(links)
                async with text_socket(web.ws(f"table={links['invite']}")) as invited:
                    guest = Page(invited)
                    await host.note(p2="here")
                    drawn_key(pairs(await guest.ask("query table")), host_key)
                    await play_first(host, guest)
                away = await host.note(p2="away")
                told = trio.current_time()
                left = int(away["p2grace"]) / 1000
                assert 0.8 < left <= 1.0
                # nothing is sent: the server ends the game by itself
                end = await host.note(timeout=left + 0.5)
                assert trio.current_time() - told == pytest.approx(left, abs=0.25)
                assert (end["p2"], end["p2grace"], end["result"]) == ("away", "0", "p1win")
                assert await host.ask("query outcome") == "winner=p1 reason=disconnect"
                assert await host.ask("query gameover") == "true"
                result = await watcher.until("result")
                assert (result["winner"], result["reason"]) == ("p1", "disconnect")
                assert [m["type"] for m in watcher.messages] == ["event", "game", "move", "result"]


@pytest.mark.parametrize("inviter_key", [HOST_KEY, None])
@trio_test
async def test_a_client_with_no_key_gets_the_servers_and_comes_back_with_it_alone(
    inviter_key: str | None,
) -> None:
    """A seat taken with no key (or ``key=``) is bound to a key the server draws, told by
    ``query table`` and every notification: another keyless client, or one of ``key=``, is
    refused the seat; the client comes back with that key."""
    async with running_web() as web:
        query = "game=yoxii&opponent=invite&side=p1&tc=60+1"
        if inviter_key is not None:
            query += f"&key={inviter_key}"
        async with text_socket(web.ws(query)) as inviter:
            host = Page(inviter)
            links = pairs(await host.ask("query table"))
            if inviter_key is None:
                host_key = drawn_key(links)
            else:
                host_key = links["key"]
                assert host_key == inviter_key
            async with text_socket(seat_url(web, links["invite"], "")) as first:
                guest = Page(first)
                theirs = pairs(await guest.ask("query table"))
                guest_key = drawn_key(theirs, host_key)
                came = await host.note(p2="here")
                assert came["key"] == host_key
                assert came == pairs(await host.ask("query table"))
                # a second keyless client, or one of the other player's key, is refused the
                # seat the first keyless one took, its page still open or not
                for key in (None, "", host_key):
                    code, reason = await closed_with(seat_url(web, links["invite"], key))
                    assert (code, reason) == (4400, HELD), key
                await play_first(host, guest)
                assert (guest.notes[-1]["plies"], guest.notes[-1]["key"]) == ("1", guest_key)
            await host.note(p2="away")
            for key in (None, "", host_key):
                code, reason = await closed_with(seat_url(web, links["invite"], key))
                assert (code, reason) == (4400, HELD), key
            for key in (None, "", guest_key):
                code, reason = await closed_with(seat_url(web, links["token"], key))
                assert (code, reason) == (4400, HELD), key
            # the keyless client comes back with the key the server drew for it
            async with text_socket(seat_url(web, links["invite"], guest_key)) as second:
                back = pairs(await Page(second).ask("query table"))
                assert (back["seat"], back["token"], back["key"]) == (
                    "p2",
                    links["invite"],
                    guest_key,
                )
                assert (back["plies"], back["p2"], back["p2grace"]) == ("1", "here", "0")
                again = await host.note(p2="here")
                assert (again["p2grace"], again["key"]) == ("0", host_key)


# -- 9. spectators -----------------------------------------------------------------------------


@trio_test
async def test_a_spectator_joining_mid_game_gets_a_snapshot_then_each_move() -> None:
    query = "game=yoxii&opponent=invite&side=p1&tc=60+1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        played = [await play_first(host, guest), await play_first(host, guest)]
        played.append(await play_first(guest, host))
        async with spectator(web, links["watch"]) as watcher:
            snapshot = [await watcher.next() for _ in range(5)]
            assert [m["type"] for m in snapshot] == ["event", "game", "move", "move", "move"]
            event, game, *moves = snapshot
            assert event["game"] == "yoxii"
            assert event["players"] == ["Host", "Guest"]
            assert (game["id"], game["p1"], game["p2"]) == (1, "Host", "Guest")
            assert game["position"] == YOXII_START
            assert game["clock"] == {"p1": 60_000, "p2": 60_000}
            assert [m["move"] for m in moves] == played
            assert [m["ply"] for m in moves] == [1, 2, 3]
            assert moves[-1]["position"] == await host.ask("query position")
            played.append(await play_first(guest, host))
            live = await watcher.next()
            assert (live["type"], live["id"], live["ply"]) == ("move", 1, 4)
            assert live["move"] == played[-1]
            assert live["position"] == await guest.ask("query position")
            assert live["turn"] == await host.ask("query turn")
        for token in (links["token"], links["invite"], "x" * 22, ""):
            code, reason = await closed_with(events_url(web, token))
            assert (code, reason) == (4400, NO_WATCH)


# -- 10. msgpack -------------------------------------------------------------------------------


class BinaryPage:
    """A player's msgpack socket: the result of each request, the notifications kept."""

    def __init__(self, socket: BinarySocket) -> None:
        self.socket = socket
        self.notes: list[Any] = []
        self.msgid = 0

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The response frame of one request."""
        self.msgid += 1
        await self.socket.request(self.msgid, method, params)
        while True:
            frame = await self.socket.frame(WAIT)
            if frame[0] == 2:
                self.notes.append(frame)
                continue
            assert frame[:2] == [1, self.msgid], frame
            return frame

    async def value(self, method: str, params: dict[str, Any] | None = None) -> Any:
        frame = await self.call(method, params)
        assert frame[2] is None, frame
        return frame[3]["value"]

    async def note(self, **want: Any) -> dict[str, Any]:
        """The next ``table`` notification whose map includes ``want``."""
        while True:
            while self.notes:
                frame = self.notes.pop(0)
                assert len(frame) == 3, frame
                assert frame[:2] == [2, "table"], frame
                assert isinstance(frame[2], list), frame
                assert len(frame[2]) == 1, frame
                values: dict[str, Any] = frame[2][0]
                if all(values.get(k) == v for k, v in want.items()):
                    return values
            self.notes.append(await self.socket.frame(WAIT))


@asynccontextmanager
async def msgpack_inviter(web: Web) -> AsyncIterator[tuple[BinaryPage, dict[str, Any], Page]]:
    """A Yoxii table of an inviter's msgpack socket (p1), its ``query table`` before the guest
    came, and the guest's text page, joined (its first message not sent yet)."""
    async with binary_socket(web.ws(YOXII)) as inviter:
        host = BinaryPage(inviter)
        links = await host.value("query", {"what": "table"})
        assert isinstance(links, dict)
        async with text_socket(web.ws(f"table={links['invite']}")) as invited:
            yield host, links, Page(invited)


@trio_test
async def test_the_table_commands_over_msgpack() -> None:
    async with running_web() as web, msgpack_inviter(web) as (host, links, guest):
        assert (links["game"], links["seat"], links["plies"]) == (1, "p1", 0)
        assert (links["p1"], links["p2"], links["p1grace"]) == ("here", "waiting", 0)
        host_key = drawn_key(links)
        theirs = pairs(await guest.ask("query table"))
        assert theirs["token"] == links["invite"]
        drawn_key(theirs, host_key)
        now = await host.value("query", {"what": "table"})
        assert (now["p2"], now["token"], now["invite"]) == ("here", links["token"], "none")
        assert now["key"] == host_key
        assert await host.value("play", {"move": "c5"}) == "3/5/2T4/7/7/5/3 w p w:5553 b:5553"
        await guest.note(plies=1)
        assert await host.value("offer", {"kind": "draw"}) == "offered"
        await guest.note(offer="draw")
        assert (await host.value("query", {"what": "table"}))["offered"] == "draw"
        assert await guest.ask("decline draw") == "declined"
        now = await host.value("query", {"what": "table"})
        assert (now["declined"], now["offered"], now["plies"]) == ("draw", "none", 1)
        refused = await host.call("undo", {})
        assert refused[2][0] == 101
        refused = await host.call("offer", {"kind": "rematch"})
        assert refused[2][0] == 101
        assert await host.value("offer", {"kind": "takeback"}) == "offered"
        await guest.note(offer="takeback")
        assert await host.value("decline", {"kind": "takeback"}) == "withdrawn"
        await guest.note(offer="none")
        assert await host.value("resign") == "resigned"
        await guest.note(result="p2win")
        assert await guest.ask("query outcome") == "winner=p2 reason=resign"
        outcome = await host.value("query", {"what": "outcome"})
        assert outcome == {"winner": "p2", "reason": "resign"}


@trio_test
async def test_the_table_notification_over_msgpack() -> None:
    async with running_web() as web, msgpack_inviter(web) as (host, links, guest):
        drawn_key(pairs(await guest.ask("query table")), drawn_key(links))
        came = await host.note(p2="here")
        assert came == await host.value("query", {"what": "table"})
        assert came["key"] == links["key"]
        assert await guest.ask("offer draw") == "offered"
        assert (await host.note(offer="draw"))["plies"] == 0


# -- 11. caps ----------------------------------------------------------------------------------


async def kept(web: Web, query: str, refusal: tuple[int, str], *alone: Table) -> None:
    """A new invite of ``query`` is refused with ``refusal`` while the tables ``alone`` have
    been alone for less than the grace: each keeps its place."""
    assert await closed_with(web.ws(query)) == refusal
    tables = web.app.tables
    assert trio.current_time() < min(t.idle_since for t in alone) + tables.grace
    assert set(alone) <= set(tables.tables)


async def left_in_play(web: Web, query: str) -> tuple[Table, dict[str, str]]:
    """A table of ``query`` whose game goes on, both players' pages gone (each within its
    grace): the table and the inviter's links."""
    async with text_socket(web.ws(query)) as inviter:
        links = pairs(await Page(inviter).ask("query table"))
        async with text_socket(web.ws(f"table={links['invite']}")) as invited:
            await Page(invited).ask("query table")
    found = web.app.tables.player(links["token"])
    assert found is not None
    assert await wait_for(lambda: found[0].players_here() == 0)
    assert found[0].players[0].key == drawn_key(links)
    for key in (None, ""):  # a keyless inviter comes back only with the key it was told
        assert await closed_with(seat_url(web, links["token"], key)) == (4400, HELD), key
    return found[0], links


@trio_test
async def test_one_peer_may_make_only_so_many_open_tables() -> None:
    """A peer's tables that are still played at keep their places (a player's page is open
    there, or a game goes on while its players are away): one invite more is refused. A table
    with nothing left to play (no player's page, and its game over or never begun) keeps its
    place while it has been alone for less than the grace (a page reloading finds it), and
    then gives it to the next invite, the one left alone the longest first."""
    query = "game=yoxii&opponent=invite&side=p1"
    async with running_web() as web, AsyncExitStack() as stack:
        tables = web.app.tables
        peer = web.server.admission.peer("127.0.0.1")
        full = (1013, f"{peer} has made {TABLES_PER_PEER} games between two pages still open")

        async def invite() -> tuple[Page, dict[str, str]]:
            """A new invite, its inviter's page kept open, and its links."""
            page = Page(await stack.enter_async_context(text_socket(web.ws(query))))
            return page, pairs(await page.ask("query table"))

        def table_of(token: str) -> Table:
            found = tables.player(token)
            assert found is not None, token
            return found[0]

        on, going = await left_in_play(web, query)
        # the tables made from here on, and the places of all, have a short grace (the game
        # above keeps the players' 30 s it was made with)
        tables.grace = PLACE_GRACE
        # a game over, its guest gone, its inviter's page still open
        ended, over = await invite()
        async with text_socket(web.ws(f"table={over['invite']}")) as invited:
            await Page(invited).ask("query table")
            assert await ended.ask("resign") == "resigned"
        finished = table_of(over["token"])
        assert await wait_for(lambda: finished.players_here() == 1)
        # and invites waiting for their guests, their inviters' pages open
        waiting = [await invite() for _ in range(TABLES_PER_PEER - 2)]
        assert len(tables.tables) == TABLES_PER_PEER
        assert (on.started, on.referee.over(), finished.referee.over()) == (True, False, True)
        assert not any(t.done_with() for t in tables.tables)
        assert await closed_with(web.ws(query)) == full
        assert len(tables.tables) == TABLES_PER_PEER
        # the first waiting inviter goes, then the finished game's last page: nothing is left
        # to play at either (a rematch, or the guest's first visit, at most)
        first, first_links = waiting[0]
        left_first = table_of(first_links["token"])
        await first.socket.ws.aclose()
        assert await wait_for(left_first.done_with)
        await trio.sleep(0.05)
        await ended.socket.ws.aclose()
        assert await wait_for(finished.done_with)
        # alone for less than the grace, both keep their places
        await kept(web, query, full, left_first, finished)
        await trio.sleep_until(finished.idle_since + tables.grace)
        # the next invite takes the place of the one left alone the longest
        await invite()
        assert left_first not in tables.tables
        assert finished in tables.tables
        for token in (first_links["token"], first_links["invite"]):
            assert await closed_with(web.ws(f"table={token}")) == (4400, NO_LINK)
        # and the one after it, the finished game's
        await invite()
        assert finished not in tables.tables
        assert await closed_with(web.ws(f"table={over['token']}")) == (4400, NO_LINK)
        assert len(tables.tables) == TABLES_PER_PEER
        # the others are still played at: none gives way
        assert await closed_with(web.ws(query)) == full
        assert len(tables.tables) == TABLES_PER_PEER
        assert on in tables.tables
        for _, links in waiting[1:]:
            assert table_of(links["token"]) in tables.tables
        # the game that goes on is there for its players: the keyless inviter comes back with
        # the key the server drew for its seat (query table's; left_in_play: never with none)
        async with text_socket(seat_url(web, going["token"], going["key"])) as back:
            values = pairs(await Page(back).ask("query table"))
        assert (values["p1"], values["p2"], values["result"], values["key"]) == (
            "here",
            "away",
            "none",
            going["key"],
        )


@trio_test
async def test_one_player_may_hold_only_so_many_pages_at_a_table() -> None:
    query = "game=yoxii&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        token = await own_token(guest)
        link = seat_url(web, token, GUEST_KEY)
        async with AsyncExitStack() as stack:
            for _ in range(SOCKETS_PER_PLAYER - 1):
                more = Page(await stack.enter_async_context(text_socket(link)))
                assert pairs(await more.ask("query table"))["seat"] == "p2"
            code, reason = await closed_with(link)
            assert (code, reason) == (1013, TOO_MANY)
            # another browser is told the seat is not its own, full or not
            code, reason = await closed_with(seat_url(web, token, OTHER_KEY))
            assert (code, reason) == (4400, HELD)
        # the guest's first page is still open: never away
        assert pairs(await host.ask("query table"))["p2"] == "here"
        assert all(n["p2"] == "here" for n in host.notes)
        await play_first(host, guest)


# -- the inviter gone before the guest came; a takeback of what was revealed ------------------


@trio_test
async def test_an_inviter_gone_before_the_guest_came_is_away_from_the_start() -> None:
    async with running_web() as web:
        web.app.tables.grace = 1.0
        async with text_socket(web.ws("game=yoxii&opponent=invite&side=p1")) as inviter:
            links = pairs(await Page(inviter).ask("query table"))
        async with text_socket(web.ws(f"table={links['invite']}")) as invited:
            guest = Page(invited)
            start = trio.current_time()
            values = pairs(await guest.ask("query table"))
            assert (values["p1"], values["p2"]) == ("away", "here")
            drawn_key(values, drawn_key(links))
            left = int(values["p1grace"]) / 1000
            assert 0.8 < left <= 1.0
            end = await guest.note(timeout=left + 0.5, result="p2win")
            assert trio.current_time() - start == pytest.approx(left, abs=0.25)
            assert (end["p1"], end["p1grace"]) == ("away", "0")
            assert await guest.ask("query outcome") == "winner=p2 reason=disconnect"


@trio_test
async def test_a_takeback_never_hides_again_a_law_that_was_revealed() -> None:
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        await write_laws(host, guest, BLACK_LAWS)
        await write_laws(guest, host, WHITE_LAWS)
        move = yinyang_choice((await host.ask("query moves")).split())
        assert move.startswith("L")  # a full board: a law is applied, and revealed
        await host.ask(f"play {move}")
        await guest.note(plies=3)
        assert f"+{BLACK_LAWS[int(move[1]) - 1]}" in await guest.ask("query position")
        assert "revealed what was hidden" in await host.refused("offer takeback")
        # White's last decision (its laws) came before Black's law: taking it back takes both
        assert "revealed what was hidden" in await guest.refused("offer takeback")
        assert pairs(await host.ask("query table"))["offered"] == "none"


# -- server bugs -----------------------------------------------------------------------------


@trio_test
async def test_a_player_gone_when_a_rematch_starts_loses_after_the_grace() -> None:
    async with running_web() as web:
        web.app.tables.grace = 1.0
        async with text_socket(web.ws("game=yoxii&opponent=invite&side=p1")) as inviter:
            host = Page(inviter)
            links = pairs(await host.ask("query table"))
            async with text_socket(web.ws(f"table={links['invite']}")) as invited:
                guest = Page(invited)
                await guest.ask("query table")
                await host.note(p2="here")
                assert await guest.ask("resign") == "resigned"
                assert await guest.ask("offer rematch") == "offered"
            await host.note(p2="away", offer="rematch")
            assert await host.ask("offer rematch") == "agreed"
            start = trio.current_time()
            values = await host.note(game=2)
            assert (values["seat"], values["p1"]) == ("p2", "away")  # the guest is p1 now
            left = int(values["p1grace"]) / 1000
            assert 0.8 < left <= 1.0
            await host.note(timeout=left + 0.5, result="p2win")
            assert trio.current_time() - start == pytest.approx(left, abs=0.25)
            assert await host.ask("query outcome") == "winner=p2 reason=disconnect"


@trio_test
async def test_a_declined_offer_is_forgotten_in_the_next_game() -> None:
    query = "game=yoxii&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        await play_first(host, guest)
        assert await host.ask("offer draw") == "offered"
        assert await guest.ask("decline draw") == "declined"
        await host.note(declined="draw")
        assert await guest.ask("resign") == "resigned"
        assert await guest.ask("offer rematch") == "offered"
        assert await host.ask("offer rematch") == "agreed"
        mine = await host.note(game=2)
        assert (mine["seat"], mine["plies"], mine["offer"]) == ("p2", "0", "none")
        assert mine["declined"] == "none"


@trio_test
async def test_an_open_offer_ends_with_the_game() -> None:
    query = "game=yoxii&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        await play_first(host, guest)
        assert await host.ask("offer draw") == "offered"
        await guest.note(offer="draw")
        assert await guest.ask("resign") == "resigned"
        await guest.refused("offer draw", 203)  # the offer cannot be accepted any more
        mine, theirs = await host.note(result="p1win"), await guest.note(result="p1win")
        assert (mine["offered"], theirs["offer"]) == ("none", "none")

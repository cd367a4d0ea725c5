"""Games between two pages (tables) attacked: by the other player at the table (a hostile page,
or a program speaking the protocol with a player's token), by someone who has only the
spectators' link, by a stranger with no token at all, and by another site's page
(docs/web.md "Playing a person at another page", docs/protocol.md §4.1, docs/security.md).

Each test asserts what should hold, as the adversary would try to break it. A test marked
``xfail(strict=True)`` is a weakness found: it passes once the server is right.

hypercorn keeps a closed WebSocket's task until its next ping (``short_grace`` in
``conftest.py``); the tests shorten the table's grace and use the shortest clocks the server
takes (1 s) so that they stay quick.
"""

from __future__ import annotations

import string
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import msgpack
import pytest
import trio
from structlog.testing import capture_logs
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection
from wsproto.events import Request as WsRequest

import games
from enginesrv.serve.limits import Limits
from enginesrv.web import tables as tables_module
from enginesrv.web.gamespec import GameSpecError, parse_game_spec
from enginesrv.web.sockets import close_reason
from enginesrv.web.table import SOCKETS_PER_PLAYER, Table
from tests.trio_run import trio_test
from tests.web.tablekit import (
    BLACK_LAWS,
    FAULTS,
    GUEST_KEY,
    HELD,
    HOST_KEY,
    NO_LINK,
    NO_WATCH,
    PLACE_GRACE,
    WAIT,
    WHITE_LAWS,
    YOXII,
    Page,
    closed_with,
    drawn_key,
    events_url,
    held_invite,
    hidden_laws,
    invite_and_go,
    law_forms,
    leaks,
    only_table,
    other,
    own_token,
    page,
    pairs,
    play_first,
    seat_url,
    socket_from,
    spectator,
    table,
    wait_for,
    write_laws,
    yinyang_choice,
)
from tests.web.webpeer import TextSocket, Web, drop, http_get, running_web

BLACK_WROTE = "bwww/bwww/bbbw/bbbw w setup -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w none 8 10 0"
"""Black (p1) has written its laws; White writes next (docs/yinyang.md §5, example 1)."""
BOTH_WROTE = (
    "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
)
"""Both players' laws written, Black's first turn (example 2)."""


async def close_of(ws: WebSocketConnection) -> tuple[int, str] | None:
    """The close code and reason of a socket the server closes at once (None: it stays)."""
    try:
        with trio.move_on_after(WAIT):
            await ws.get_message()
        return None
    except ConnectionClosed as exc:
        assert exc.reason is not None
        return exc.reason.code, exc.reason.reason or ""


# -- (a) the other player: the opponent's hidden laws ----------------------------------------


@trio_test
async def test_the_inviter_cannot_open_the_guests_seat_and_read_its_laws() -> None:
    """The guest's link is the invite, which the inviter made and knows; but the guest's seat
    is bound to the guest's browser (its key): the inviter's page, with its own key, another
    one, an empty one or none, is refused with the reason before a single message, and the
    guest's laws never reach it."""
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        await write_laws(host, guest, BLACK_LAWS)
        await write_laws(guest, host, WHITE_LAWS)
        secret = law_forms(WHITE_LAWS)
        assert leaks(host.texts(), secret) == []
        # the inviter's own query table no longer offers the invite
        again = pairs(await host.ask("query table"))
        assert again["invite"] == "none"
        assert await own_token(guest) == links["invite"]
        # closed_with fails on any message before the close: the refused page is told nothing
        for key in (HOST_KEY, "inviter-other-key-003", "", None):
            assert await closed_with(seat_url(web, links["invite"], key)) == (4400, HELD), key
        assert await closed_with(web.ws("table=none")) == (4400, NO_LINK)
        seated = only_table(web)
        assert [p.sockets for p in seated.players] == [1, 1]
        assert [p.key for p in seated.players] == [HOST_KEY, GUEST_KEY]
        assert leaks(host.texts(), secret) == []
        assert pairs(await guest.ask("query table"))["p2"] == "here"


@trio_test
async def test_the_inviter_cannot_act_for_the_guest() -> None:
    """The inviter, with the invite it made (the guest's link), cannot accept its own offer as
    the guest, nor hold the guest's pages: a page of the inviter's browser, or of none, is
    refused each time, and the guest's browser still opens all its pages."""
    async with running_web() as web, table(web) as (host, guest, links), AsyncExitStack() as stack:
        await play_first(host, guest)
        await play_first(host, guest)
        assert await host.ask("offer draw") == "offered"
        await guest.note(offer="draw")
        for _ in range(SOCKETS_PER_PLAYER):
            for key in (HOST_KEY, None):
                assert await closed_with(seat_url(web, links["invite"], key)) == (4400, HELD)
        # the guest never agreed to a draw: the offer stands, the game goes on
        assert await guest.ask("query gameover") == "false"
        values = pairs(await guest.ask("query table"))
        assert (values["offer"], values["plies"], values["result"]) == ("draw", "2", "none")
        token = values["token"]
        assert token == links["invite"]
        for _ in range(SOCKETS_PER_PLAYER - 1):
            more = await stack.enter_async_context(page(seat_url(web, token, GUEST_KEY)))
            assert pairs(await more.ask("query table"))["seat"] == "p2"


async def secret_start_refused(web: Web, position: str, side: str) -> None:
    """An invite from ``position`` (which holds laws written) is refused with 4400 and the
    reason the server gives for it (cut, as a close frame's reason is, to 123 bytes), and
    makes no table."""
    query = urlencode({"game": "yinyang", "opponent": "invite", "side": side, "position": position})
    config = web.server.config
    with pytest.raises(GameSpecError) as refused:
        parse_game_spec(query, max_movetime=config.max_movetime, max_clock=config.max_clock)
    reason = str(refused.value)
    shown = repr(position[:40] + "...")
    assert reason.startswith(f"position {shown}: it holds what a player keeps secret")
    assert await closed_with(web.ws(query)) == (4400, close_reason(reason))
    assert web.app.tables.tables == {}


@trio_test
async def test_the_inviter_cannot_choose_the_guests_secret_laws_by_the_start_position() -> None:
    """A start position with the guest's laws in it (the inviter wrote them, and knows them)
    is refused, whichever colour the inviter takes: each player writes their own."""
    async with running_web() as web:
        for side in ("p1", "p2"):
            await secret_start_refused(web, BOTH_WROTE, side)
        # the same game from its start (no law written yet) is taken
        start = games.load("yinyang").new_state().to_string()
        query = urlencode(
            {"game": "yinyang", "opponent": "invite", "side": "p1", "position": start}
        )
        async with page(web.ws(query)) as host:
            assert pairs(await host.ask("query table"))["p2"] == "waiting"
            assert await host.ask("query position") == start


@trio_test
async def test_a_rematch_does_not_hand_the_guest_laws_the_inviter_wrote() -> None:
    """A start position with only the inviter's own laws written would be fair in the first
    game, but a rematch starts from it with the colours swapped, and those laws would be the
    guest's secret: such a start is refused from the invite on."""
    async with running_web() as web:
        for side in ("p1", "p2"):
            await secret_start_refused(web, BLACK_WROTE, side)


@trio_test
async def test_the_page_is_told_why_a_start_holding_a_secret_is_refused() -> None:
    async with running_web() as web:
        for position in (BLACK_WROTE, BOTH_WROTE):
            query = urlencode({"game": "yinyang", "opponent": "invite", "position": position})
            code, reason = await closed_with(web.ws(query))
            assert code == 4400
            assert reason.startswith("position "), reason
            assert ": it holds what a player keeps secret" in reason, reason


# -- (a) time, grace and the end when no one is there ----------------------------------------


@trio_test
async def test_a_clock_run_out_with_no_one_there_ends_the_game_before_a_later_grace() -> None:
    """With no one there nothing wakes the table; when a spectator comes, the clock that ran
    out before the first grace ended decides the game (on time), not that grace."""
    async with running_web() as web:
        web.app.tables.grace = 1.5
        async with page(web.ws("game=yoxii&opponent=invite&side=p1&tc=1+0")) as host:
            links = pairs(await host.ask("query table"))
            seated = only_table(web)
            async with page(web.ws(f"table={links['invite']}")) as guest:
                await guest.ask("query table")
            # the guest (p2) went first: it has 1.5 s to come back; the host (p1), whose
            # clock runs, goes at once after it, and its clock runs out 1 s after the start
            assert await wait_for(lambda: seated.players[1].sockets == 0)
        assert await wait_for(lambda: seated.players[0].sockets == 0)
        await trio.sleep(2.0)  # the clock ran out; then both graces ended, no one there
        async with spectator(web, links["watch"]) as watcher:
            result = await watcher.until("result")
        assert (result["winner"], result["reason"]) == ("p2", "time-forfeit"), result


@trio_test
async def test_a_rematch_agreed_while_the_offerer_is_away_gives_them_a_grace() -> None:
    """The offerer's page goes (a reload) before the other agrees: in the next game they are
    away and lose after the grace, or a game with no clock would be held for ever (found by
    this test, fixed in 06843ba)."""
    async with running_web() as web, AsyncExitStack() as stack:
        web.app.tables.grace = 1.0
        host = await stack.enter_async_context(page(web.ws("game=yoxii&opponent=invite")))
        links = pairs(await host.ask("query table"))
        seated = only_table(web)
        guest = await stack.enter_async_context(page(web.ws(f"table={links['invite']}")))
        await guest.ask("query table")
        assert await host.ask("resign") == "resigned"
        assert await host.ask("offer rematch") == "offered"
        await guest.note(offer="rematch")
        await host.socket.ws.aclose()  # a reload, a lost network: the offer stays open
        assert await wait_for(lambda: seated.players[0].sockets == 0)
        assert await guest.ask("offer rematch") == "agreed"
        told = await guest.note(game=2)
        assert told["p2"] == "away"  # the host plays p2 in the rematch
        assert int(told["p2grace"]) > 0, told
        await guest.note(timeout=2.0, result="p1win")
        assert await guest.ask("query outcome") == "winner=p1 reason=disconnect"


@trio_test
async def test_a_takeback_offered_across_the_others_accepts_theirs_as_documented() -> None:
    """``offer takeback`` while the other's takeback offer is open accepts it, whatever the
    sender meant (docs/protocol.md §4.1): what is taken back is the asker's last decision and
    every one after it, the sender's own included, and no decision before it."""
    async with running_web() as web, table(web) as (host, guest, _):
        # Yoxii: a turn is two decisions, a totem move and a placement
        turns = [(host, guest), (host, guest), (guest, host), (guest, host)]
        played = [await play_first(mover, waiting) for mover, waiting in turns]
        movers = [mover for mover, _ in turns]
        for each in (host, guest):
            assert await each.ask("query played") == " ".join(played)
        # the host (to act) asks to take back its turn; the guest, not told of it yet (its
        # notification is on the way), asks to take back its own last decision
        seated = only_table(web)
        assert await host.ask("offer takeback") == "offered"
        assert seated.players[0].offer == "takeback"
        assert await guest.reply("offer takeback") == "response agreed"
        # the asker is the host: its last decision (the second) and every one after it go
        asked = max(n for n, mover in enumerate(movers) if mover is host)
        assert asked == 1
        kept = played[:asked]
        for each in (host, guest):
            values = pairs(await each.ask("query table"))
            assert (values["plies"], values["offer"], values["offered"]) == ("1", "none", "none")
            assert await each.ask("query played") == " ".join(kept)
            assert await each.ask("query turn") == "p1"
        assert seated.referee.plies() == len(kept)
        # every decision taken back was the asker's (its last) or one made after it: the
        # guest's two, the one it meant to take back among them
        taken_back = movers[len(kept) :]
        assert taken_back == [host, guest, guest]
        assert all(mover is host or n > asked for n, mover in enumerate(movers) if n >= len(kept))
        assert [each.offer for each in seated.players] == [None, None]


# -- (a) the other player: what every reply, notification and feed tells ----------------------

FIRST_WHITE = ("ww..>*", "w..w>wbbw", "b.b.>*", "..w.>*")
"""The laws the guest writes first and takes back (no form of them is one of the others')."""
ANCHORS = [f"{f}{r}" for f in "abc" for r in "123"]
REWRITTEN = "b..b>*"
"""The law Black's adaptation writes in its L2, hidden from the others."""


async def probe_own_laws(host: Page) -> None:
    """The host, to act, applies each of its laws at every window where it does not apply
    (each refused: what does the reason say?), then draws the board."""
    legal = set(await host.moves())
    for slot in "1234":
        for anchor in ANCHORS:
            if f"L{slot}@{anchor}" not in legal:
                (refusal,) = await host.probe(f"play L{slot}@{anchor}")
                assert refusal.startswith("invalidmove "), refusal
    await host.probe("show")


async def probe_the_others_turn(host: Page) -> None:
    """The host asks what it can while the guest's decision is due."""
    await host.moves()
    for probe in ("query phase", "show", "query played"):
        await host.probe(probe)
    if await host.probe("offer takeback") == ["response offered"]:
        assert await host.ask("decline takeback") == "withdrawn"


async def write_again(guest: Page, host: Page) -> None:
    """The guest asks to write its laws again (a takeback of its setup); the host agrees."""
    assert await guest.ask("offer takeback") == "offered"
    await host.note(offer="takeback")
    assert await host.ask("offer takeback") == "agreed"
    await guest.note(plies=1)
    assert await host.ask("query played") == "laws:" + ",".join(BLACK_LAWS)
    await write_laws(guest, host, WHITE_LAWS)


@trio_test
async def test_yinyang_no_reply_note_takeback_or_feed_tells_a_player_the_others_laws() -> None:
    """The host probes every way it has (``query``, ``show``, illegal applications of its own
    laws, a takeback of the guest's setup, its resignation) while the guest plays; the
    guest's unrevealed laws, those it took back included, never reach the host's page or a
    spectator, and the host's never reach the guest's."""
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        seated = only_table(web)
        pages = {"p1": host, "p2": guest}
        taken_back = law_forms(FIRST_WHITE)
        async with spectator(web, links["watch"]) as watcher:

            async def no_leak(plies: int | None) -> None:
                full = seated.referee.state.to_string()
                black, white = hidden_laws(full, 0), hidden_laws(full, 1)
                assert leaks(host.texts(), white | taken_back) == []
                assert leaks(guest.texts(), black) == []
                if plies is not None:  # the spectators are told of the last decision
                    await watcher.until("move", ply=plies)
                assert leaks(watcher.texts, black | white | taken_back) == []

            await write_laws(host, guest, BLACK_LAWS)
            await write_laws(guest, host, FIRST_WHITE)
            await probe_the_others_turn(host)
            await no_leak(2)
            await write_again(guest, host)
            await no_leak(2)
            for ply in range(16):
                turn = await host.ask("query turn")
                if turn == "none":
                    break
                if turn == "p1" and ply < 4:
                    await probe_own_laws(host)
                elif turn == "p2":
                    await probe_the_others_turn(host)
                move = yinyang_choice(await pages[turn].moves())
                if ply == 0:  # Black's adaptation at a3 rewrites its L2, hidden: shown "L2=?"
                    move = f"L3@a3:L2={REWRITTEN}"
                await pages[turn].ask(f"play {move}")
                await pages[other(turn)].note(plies=3 + ply)
                await no_leak(3 + ply)
            if await host.ask("query gameover") == "false":
                assert await host.ask("resign") == "resigned"
                await guest.note(result="p2win")
            await watcher.until("result")
            for probe in ("query position", "show", "query played", "query outcome"):
                await host.probe(probe)
                await guest.probe(probe)
            await no_leak(None)
            assert "L3@a3:L2=?" in await guest.ask("query played")
            assert REWRITTEN in hidden_laws(seated.referee.state.to_string(), 0)


@trio_test
async def test_a_takeback_never_hides_again_a_law_that_was_applied_even_agreed() -> None:
    """The host applies a law (it is revealed), the guest moves; the host's takeback of that
    turn is refused when offered, whatever the guest would say; the guest's own decision after
    it can still be taken back."""
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, _):
        await write_laws(host, guest, BLACK_LAWS)
        await write_laws(guest, host, WHITE_LAWS)
        await host.ask("play L1@a2")  # bwbb>b.bb at a2: revealed
        await guest.note(plies=3)
        assert "+bwbb>b.bb" in await guest.ask("query position")
        move = yinyang_choice((await guest.ask("query moves")).split())
        await guest.ask(f"play {move}")
        await host.note(plies=4)
        refusal = await host.refused("offer takeback")
        assert "revealed what was hidden" in refusal
        assert pairs(await guest.ask("query table"))["offer"] == "none"
        assert "-" in move  # a piece move: the guest's turn goes on
        assert await guest.ask("offer takeback") == "offered"
        await host.note(offer="takeback")
        assert await host.ask("offer takeback") == "agreed"
        await guest.note(plies=3)
        assert "+bwbb>b.bb" in await guest.ask("query position")
        assert "+bwbb>b.bb" in await host.ask("query position")


# -- (a) the other player: acting out of turn, for the other seat, after the end -------------

BARRAGE = (
    "go",
    "go infinite",
    "undo",
    "undo 1",
    "position startpos",
    "uginewgame",
    "uginewgame yinyang",
    "setoption name Game value yinyang",
    "setoption name Depth value 1",
    "analyse id a startpos",
    "offer",
    "offer draws",
    "offer rematch now",
    "decline",
    "decline draw",
    "decline takeback",
    "decline rematch",
    "resign now",
    "play",
    "play " + "x" * 300,
    "play \x1b[31m",
    "query table now",
    "query tables",
    "query clock",
    "query outcome",
    "stop",
)


async def barrage(page: Page) -> list[str]:
    """Every line that answers ``BARRAGE``, one command at a time."""
    out = []
    for command in BARRAGE:
        out.extend(await page.probe(command))
    return out


async def response_frame(ws: WebSocketConnection, msgid: int) -> Any:
    """The msgpack response of request ``msgid`` (notifications before it skipped)."""
    unpacker = msgpack.Unpacker(raw=False)
    while True:
        for frame in unpacker:
            if frame[0] == 1:
                assert frame[1] == msgid, frame
                return frame
        with trio.fail_after(WAIT):
            data = await ws.get_message()
        assert isinstance(data, bytes)
        unpacker.feed(data)


@trio_test
async def test_hostile_commands_in_every_state_change_nothing_and_fault_nothing() -> None:
    """Commands a table's socket refuses, and malformed ones, sent by both players before the
    guest came, during the game, at its end and in a rematch, over both framings: none is a
    fault of the server (500, a logged exception), and none changes the game."""
    with capture_logs() as logs:
        async with running_web() as web, page(web.ws(YOXII)) as host:
            links = pairs(await host.ask("query table"))
            for command in ("resign", "offer draw", "offer takeback", "play c5", "offer rematch"):
                assert (await host.reply(command)).startswith("error 101 "), command
            before = await host.ask("query position")
            replies = await barrage(host)
            assert await host.ask("query position") == before
            host_key = drawn_key(links)
            async with page(web.ws(f"table={links['invite']}")) as guest:
                guest_key = drawn_key(pairs(await guest.ask("query table")), host_key)
                await host.note(p2="here")
                for mover, waiting in ((host, guest), (host, guest), (guest, host)):
                    await play_first(mover, waiting)
                played = await host.ask("query played")
                for each in (host, guest):
                    replies += await barrage(each)
                assert await guest.ask("query played") == played
                assert pairs(await host.ask("query table"))["plies"] == "3"
                assert await guest.ask("query gameover") == "false"
                # msgpack: the same commands, with wrong and extra params, on a second page
                # of the guest's (a program's, as the first: it presents the key the server drew
                # for its seat, query table's; its token is the invite)
                token = await own_token(guest)
                assert token == links["invite"]
                for key in (None, ""):
                    assert await closed_with(seat_url(web, token, key)) == (4400, HELD), key
                async with open_websocket_url(seat_url(web, token, guest_key)) as ws:
                    requests: list[tuple[str, dict[str, Any]]] = [
                        ("offer", {"kind": 3}),
                        ("offer", {"kind": "draw", "seat": "p1"}),
                        ("decline", {}),
                        ("play", {"move": ["c5"]}),
                        ("query", {"what": "table", "start": 5}),
                        ("undo", {"n": 99}),
                        ("go", {}),
                    ]
                    for msgid, (method, params) in enumerate(requests, start=1):
                        await ws.send_message(msgpack.packb([0, msgid, method, [params]]))
                        frame = await response_frame(ws, msgid)
                        error = frame[2]
                        assert error is None or error[0] != 500, (method, params, error)
                        if method == "offer" and params["kind"] != "draw":
                            assert error is not None
                await host.note(offer="draw")  # the guest's one well-formed offer, as its own
                assert pairs(await host.ask("query table"))["offered"] == "none"
                assert await host.ask("resign") == "resigned"
                await guest.note(result="p2win")
                for each in (host, guest):
                    replies += await barrage(each)
                    assert (await each.reply("play c5")).startswith("error 203 ")
                    assert (await each.reply("resign")).startswith("error 203 ")
                    assert (await each.reply("offer draw")).startswith("error 203 ")
                    assert (await each.reply("offer takeback")).startswith("error 203 ")
                assert await guest.ask("query outcome") == "winner=p2 reason=resign"
                assert await host.ask("offer rematch") == "offered"
                assert await guest.ask("offer rematch") == "agreed"
                await host.note(game=2)
                for each in (host, guest):
                    replies += await barrage(each)
                assert await host.ask("query played") == ""
    assert [line for line in replies if line.startswith("error 500")] == []
    assert [entry for entry in logs if entry.get("event") in FAULTS] == []
    assert [entry for entry in logs if entry.get("log_level") in ("error", "critical")] == []


@trio_test
async def test_a_player_can_play_only_its_own_seat_and_only_on_its_turn() -> None:
    async with running_web() as web, table(web) as (host, guest, _):
        start = await host.ask("query position")
        for token in (await guest.moves())[:5] + (await host.moves())[:5]:
            line = await guest.reply(f"play {token}")
            assert line.startswith(("error 101 ", "invalidmove ")), line
        assert await host.ask("query position") == start
        assert pairs(await host.ask("query table"))["plies"] == "0"
        await play_first(host, guest)
        await play_first(host, guest)
        # the host's turn is over: its moves are refused, the guest's stand
        for token in await guest.moves():
            assert (await host.reply(f"play {token}")).startswith("error 101 ")
        assert pairs(await guest.ask("query table"))["plies"] == "2"


# -- (a) flooding the other page, the server's memory and log ----------------------------------


@trio_test
async def test_an_opponent_offering_and_withdrawing_in_a_loop_is_told_at_most_every_50_ms() -> None:
    """200 offers and withdrawals sent as fast as the socket takes them reach the other page
    as a few notifications (at most one every 50 ms), the last one as the table ended."""
    async with running_web() as web, table(web) as (host, guest, _):
        seated = only_table(web)
        start = trio.current_time()
        for _ in range(4):  # 4 messages of 50 offers and withdrawals each
            await host.socket.send(*["offer draw", "decline draw"] * 25)
        lines = [await host.following() for _ in range(200)]
        assert lines == ["response offered", "response withdrawn"] * 100
        assert await host.ask("offer draw") == "offered"
        last = await guest.note(offer="draw")
        elapsed = trio.current_time() - start
        assert len(guest.notes) <= 2 + elapsed / tables_module.NOTE_GAP, (len(guest.notes), elapsed)
        assert last["offered"] == "none"
        # nothing of the flood is kept: one open offer
        assert [p.offer for p in seated.players] == ["draw", None]


# -- (b) a spectator: no way to act, nothing hidden, no player's token -------------------------


@trio_test
async def test_a_spectator_cannot_act_nor_learn_a_token_or_a_law() -> None:
    query = "game=yinyang&opponent=invite&side=p1"
    async with running_web() as web, table(web, query) as (host, guest, links):
        seated = only_table(web)
        async with spectator(web, links["watch"]) as watcher:
            await watcher.until("game")
            # what a program would send on the feed's socket: ignored
            for command in ("play laws:" + ",".join(BLACK_LAWS), "resign", "offer draw", "quit"):
                await watcher.ws.send_message(command)
                await watcher.ws.send_message(msgpack.packb([0, 1, "resign", []]))
            await write_laws(host, guest, BLACK_LAWS)
            await write_laws(guest, host, WHITE_LAWS)
            await watcher.until("move", ply=2)
            assert seated.referee.plies() == 2
            assert not seated.referee.over()
            assert [p.offer for p in seated.players] == [None, None]
            assert await host.ask("resign") == "resigned"
            await watcher.until("result")
        feed = "\n".join(watcher.texts)
        for token in (links["token"], links["invite"], links["watch"]):
            assert token not in feed
        assert leaks(watcher.texts, law_forms(BLACK_LAWS) | law_forms(WHITE_LAWS)) == []
        # the spectators' link opens no seat, and /ws takes no watch field
        assert await closed_with(web.ws(f"table={links['watch']}")) == (4400, NO_LINK)
        async with page(web.ws(f"watch={links['watch']}")) as plain:  # a plain session
            assert "only a game between two pages" in await plain.refused("query table")
            assert "only in a game the server referees" in await plain.refused("resign")
            await plain.refused("offer draw")
        invite_and_watch = f"game=yinyang&opponent=invite&watch={links['watch']}"
        assert (await closed_with(web.ws(invite_and_watch)))[0] == 4400
        # and a player's token opens no feed
        for token in (links["token"], links["invite"]):
            assert await closed_with(events_url(web, token)) == (4400, NO_WATCH)


# -- (c) a stranger: tokens, caps, many addresses ----------------------------------------------


def near_misses(token: str) -> list[str]:
    """Tokens a stranger might try from one it half knows, or guesses."""
    flip = token[:-1] + ("A" if token[-1] != "A" else "B")
    return [
        flip,
        token[:-1],
        token + "A",
        token.swapcase(),
        token + "=",
        token + " ",
        " " + token,
        token.upper(),
        token[:11],
        "",
        "*",
        "%",
        token.replace(token[0], "%00", 1),
        "0" * 22,
        "A" * 22,
    ]


@trio_test
async def test_a_stranger_learns_nothing_from_tokens_that_are_not_a_tables() -> None:
    """Every token that is not one is refused alike, whether any table exists or not (no
    oracle), and a stranger's tries change nothing of the table whose token it half knows."""
    async with running_web() as web:
        before = await closed_with(web.ws("table=" + "x" * 22))
        async with table(web) as (host, _, links):
            seated = only_table(web)
            for base in (links["token"], links["invite"]):
                for guess in near_misses(base):
                    url = web.ws("table=" + quote(guess, safe=""))
                    assert await closed_with(url) == (4400, NO_LINK), guess
            for guess in near_misses(links["watch"]):
                url = events_url(web, quote(guess, safe=""))
                assert await closed_with(url) == (4400, NO_WATCH), guess
            assert [p.sockets for p in seated.players] == [1, 1]
            assert await host.ask("query gameover") == "false"
        assert before == (4400, NO_LINK)
        # the tokens: 22 characters of the URL-safe alphabet, never twice the same
        alphabet = set(string.ascii_letters + string.digits + "-_")
        tokens = {links["token"], links["invite"], links["watch"]}
        for _ in range(5):
            async with page(web.ws(YOXII)) as more:
                values = pairs(await more.ask("query table"))
            tokens |= {values["token"], values["invite"], values["watch"]}
        assert len(tokens) == 18
        assert all(len(t) == 22 and set(t) <= alphabet for t in tokens)


@trio_test
async def test_a_player_holds_at_most_four_pages_and_the_other_player_none_of_them() -> None:
    async with running_web() as web, table(web) as (_, guest, links), AsyncExitStack() as stack:
        assert SOCKETS_PER_PLAYER == 4
        for _ in range(SOCKETS_PER_PLAYER - 1):
            more = await stack.enter_async_context(page(seat_url(web, links["token"], HOST_KEY)))
            assert pairs(await more.ask("query table"))["seat"] == "p1"
        code, reason = await closed_with(seat_url(web, links["token"], HOST_KEY))
        assert (code, reason) == (1013, "this player has 4 pages open at this game")
        # the host's pages take nothing of the guest's: three more pages of the guest's fit
        token = await own_token(guest)
        for _ in range(SOCKETS_PER_PLAYER - 1):
            more = await stack.enter_async_context(page(seat_url(web, token, GUEST_KEY)))
            assert pairs(await more.ask("query table"))["seat"] == "p2"
        code, reason = await closed_with(seat_url(web, token, GUEST_KEY))
        assert (code, reason) == (1013, "this player has 4 pages open at this game")
        # and neither player's browser opens the other's seat (the key is told before the
        # count: a full seat is refused to another browser as another browser's)
        assert await closed_with(seat_url(web, links["invite"], HOST_KEY)) == (4400, HELD)
        assert await closed_with(seat_url(web, links["token"], GUEST_KEY)) == (4400, HELD)
        assert [p.sockets for p in only_table(web).players] == [4, 4]


@trio_test
async def test_spectators_are_capped_per_table_in_all_and_give_way_to_players(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spectators of one table, of every table, and when the server is within the last
    quarter of its connections: a spectator is refused (1013) where a player still comes."""
    monkeypatch.setattr(tables_module, "WATCHERS_PER_TABLE", 2)
    monkeypatch.setattr(tables_module, "MAX_WATCHERS", 3)
    async with running_web(limits=Limits(connections=12)) as web, AsyncExitStack() as stack:
        first = await stack.enter_async_context(page(web.ws(YOXII)))
        one = pairs(await first.ask("query table"))
        second = await stack.enter_async_context(page(web.ws(YOXII)))
        two = pairs(await second.ask("query table"))
        for _ in range(2):
            watcher = await stack.enter_async_context(spectator(web, one["watch"]))
            await watcher.until("game")
        assert await closed_with(events_url(web, one["watch"])) == (
            1013,
            "this game has its 2 spectators",
        )
        watcher = await stack.enter_async_context(spectator(web, two["watch"]))
        await watcher.until("game")
        assert await closed_with(events_url(web, two["watch"])) == (
            1013,
            "the server has its 3 spectators",
        )
        monkeypatch.setattr(tables_module, "MAX_WATCHERS", 256)
        monkeypatch.setattr(tables_module, "WATCHERS_PER_TABLE", 32)
        # 5 held (2 players' pages, 3 spectators); the cap is 12, its last quarter 3: the
        # spectators of other addresses take 4 more, the next one is refused
        others = []
        assert web.server.admission.held == 5
        for n in range(2, 7):
            ws = await stack.enter_async_context(
                socket_from(web, f"127.0.0.{n}", f"/events?watch={two['watch']}")
            )
            others.append(ws)
        closes = [await close_of(ws) for ws in others]
        assert closes[:-1] == [None] * 4, closes
        assert closes[-1] == (
            1013,
            "the server is nearly full: its last connections are kept for players",
        )
        # a player comes still, from an address of its own
        ws = await stack.enter_async_context(
            socket_from(web, "127.0.0.9", f"/ws?table={two['invite']}")
        )
        player = Page(TextSocket(ws))
        assert pairs(await player.ask("query table"))["seat"] == "p2"


async def handshake_status(web: Web, path: str, *origins: bytes) -> int:
    """The HTTP status of a WebSocket handshake to ``path`` naming ``origins`` (101: taken)."""
    url = urlsplit(web.url)
    assert url.hostname is not None
    stream = await trio.open_tcp_stream(url.hostname, web.web_port)
    try:
        ws = WSConnection(ConnectionType.CLIENT)
        request = WsRequest(
            host=f"{url.hostname}:{web.web_port}",
            target=path,
            extra_headers=[(b"origin", origin) for origin in origins],
        )
        await stream.send_all(ws.send(request))
        with trio.fail_after(WAIT):
            while True:
                ws.receive_data(await stream.receive_some(65536))
                for event in ws.events():
                    if isinstance(event, AcceptConnection):
                        return 101
                    if isinstance(event, RejectConnection):
                        return event.status_code
    finally:
        await trio.aclose_forcefully(stream)


# -- (d) another site's page ---------------------------------------------------------------------


@trio_test
async def test_another_sites_page_cannot_take_a_seat_watch_or_invite() -> None:
    """A page of another site that learnt a table's links (or guesses none) is refused before
    its socket is a WebSocket: it neither joins the guest's seat (the clocks do not start),
    nor watches, nor makes a table in the visitor's name."""
    async with running_web() as web, page(web.ws(YOXII)) as host:
        links = pairs(await host.ask("query table"))
        seated = only_table(web)
        evil = b"http://evil.example"
        for path in (
            f"/ws?table={links['invite']}",
            f"/ws?table={links['token']}",
            f"/events?watch={links['watch']}",
            "/ws?" + YOXII,
        ):
            assert await handshake_status(web, path, evil) == 403, path
            assert await handshake_status(web, path, b"null") == 403, path
        assert [(p.sockets, p.joined) for p in seated.players] == [(1, True), (0, False)]
        assert seated.watchers == 0
        assert not seated.started
        assert len(web.app.tables.tables) == 1
        assert pairs(await host.ask("query table"))["p2"] == "waiting"
        own = f"http://127.0.0.1:{web.web_port}".encode()
        assert await handshake_status(web, f"/events?watch={links['watch']}", own) == 101


# -- timing and order ----------------------------------------------------------------------------


@trio_test
async def test_before_the_guest_comes_no_clock_runs_and_nothing_can_be_decided() -> None:
    async with running_web() as web, page(web.ws("game=yoxii&opponent=invite&tc=1+0")) as host:
        alone = pairs(await host.ask("query table"))
        assert (alone["p1"], alone["p2"], alone["plies"], alone["result"]) == (
            "here",
            "waiting",
            "0",
            "none",
        )
        assert (alone["p1grace"], alone["p2grace"], alone["offer"]) == ("0", "0", "none")
        for command in ("play c5", "resign", "offer draw", "offer takeback", "offer rematch"):
            assert "has not come yet" in await host.refused(command)
        await trio.sleep(1.2)  # longer than the whole clock
        assert await host.ask("query clock") == "p1=1000 p2=1000 running=none"
        assert await host.ask("query gameover") == "false"
        async with page(web.ws(f"table={alone['invite']}")) as guest:
            await guest.ask("query table")
            await host.note(p2="here")
            clock = pairs(await host.ask("query clock"))
            assert clock["running"] == "p1"
            assert int(clock["p1"]) > 800
            # and now the host's clock runs out while it thinks: the end is told unasked
            ended = await guest.note(timeout=2.0, result="p2win")
            assert ended["p1grace"] == ended["p2grace"] == "0"
        assert await host.ask("query outcome") == "winner=p2 reason=time-forfeit"


@trio_test
async def test_a_move_and_a_resignation_sent_together_end_the_same_way_for_both() -> None:
    async with running_web() as web, table(web) as (host, guest, _):
        await play_first(host, guest)
        move = (await host.moves())[0]
        await host.socket.send(f"play {move}")
        await guest.socket.send("resign")
        played, resigned = await host.following(), await guest.following()
        assert resigned == "response resigned"
        plies = "2" if played.startswith("response ") else "1"
        assert played.startswith(("response ", "error 203 ")), played
        for each in (host, guest):
            values = pairs(await each.ask("query table"))
            assert (values["plies"], values["result"]) == (plies, "p1win")
            assert await each.ask("query outcome") == "winner=p1 reason=resign"
        assert (await guest.reply(f"play {move}")).startswith("error 203 ")


@trio_test
async def test_offers_of_a_draw_that_cross_are_one_agreement() -> None:
    async with running_web() as web, table(web) as (host, guest, links):
        async with spectator(web, links["watch"]) as watcher:
            await host.socket.send("offer draw")
            await guest.socket.send("offer draw")
            answers = sorted([await host.following(), await guest.following()])
            assert answers == ["response agreed", "response offered"]
            result = await watcher.until("result")
        assert (result["winner"], result["reason"]) == ("draw", "agreement")
        for each in (host, guest):
            assert await each.ask("query outcome") == "winner=draw reason=agreement"
            values = pairs(await each.ask("query table"))
            assert values["offer"] == values["offered"] == "none"
        # crossing rematch offers: one agreement, one next game
        await host.socket.send("offer rematch")
        await guest.socket.send("offer rematch")
        answers = sorted([await host.following(), await guest.following()])
        assert answers == ["response agreed", "response offered"]
        assert pairs(await host.ask("query table"))["game"] == "2"
        assert only_table(web).number == 2


@trio_test
async def test_when_both_leave_the_first_to_go_loses_and_someone_who_comes_is_told() -> None:
    """No clock: the guest goes, then the host; once both graces have passed with no one
    there, the first to go has lost by disconnect, decided when a spectator comes and told in
    the feed; the one who comes back after it is told it won."""
    async with running_web() as web:
        web.app.tables.grace = 0.5
        async with page(web.ws("game=yoxii&opponent=invite")) as host:
            links = pairs(await host.ask("query table"))
            host_key = drawn_key(links)
            seated = only_table(web)
            assert seated.players[0].key == host_key
            async with page(web.ws(f"table={links['invite']}")) as guest:
                drawn_key(pairs(await guest.ask("query table")), host_key)
                await play_first(host, guest)
            assert await wait_for(lambda: seated.players[1].sockets == 0)
        await trio.sleep(0.8)
        assert not seated.referee.over()  # no one was there to wake it
        async with spectator(web, links["watch"]) as watcher:
            result = await watcher.until("result")
        assert (result["winner"], result["reason"], result["plies"]) == ("p1", "disconnect", 1)
        # the keyless inviter comes back with the key the server drew for it, not with none
        for key in (None, ""):
            assert await closed_with(seat_url(web, links["token"], key)) == (4400, HELD), key
        async with page(seat_url(web, links["token"], host_key)) as back:
            values = pairs(await back.ask("query table"))
            assert (values["result"], values["p2"], values["p2grace"]) == ("p1win", "away", "0")
            assert values["key"] == host_key
            assert await back.ask("query outcome") == "winner=p1 reason=disconnect"


@trio_test
async def test_a_clock_that_runs_out_with_only_a_spectator_there_ends_the_game_on_time() -> None:
    async with running_web() as web:
        web.app.tables.grace = 5.0
        async with page(web.ws("game=yoxii&opponent=invite&side=p1&tc=1+0")) as host:
            links = pairs(await host.ask("query table"))
            seated = only_table(web)
            async with spectator(web, links["watch"]) as watcher:
                async with page(web.ws(f"table={links['invite']}")) as guest:
                    await guest.ask("query table")
                    start = trio.current_time()
                assert await wait_for(lambda: seated.players[1].sockets == 0)
                await host.socket.ws.aclose()
                result = await watcher.until("result", timeout=2.0)
                assert trio.current_time() - start < 1.6
        assert (result["winner"], result["reason"]) == ("p2", "time-forfeit")


# -- (c) the tables of the server, from many addresses -------------------------------------------


@trio_test
async def test_a_peer_cannot_make_more_tables_than_its_share_from_one_address() -> None:
    """The invites an address holds open (their inviters' pages there) fill its share: one
    more is refused (1013); an invite its inviter left before anyone came keeps its place
    for the grace (its inviter may be reloading), then gives it to the next one; another
    address is another peer."""
    async with running_web() as web, AsyncExitStack() as stack:
        tables = web.app.tables.tables
        web.app.tables.per_peer = 2
        web.app.tables.grace = PLACE_GRACE
        full = (1013, "127.0.0.2 has made 2 games between two pages still open")
        assert await invite_and_go(web, "127.0.0.2") is None
        (left,) = tables
        held = await held_invite(web, "127.0.0.2", stack)
        assert set(tables) == {left, held}
        # the invite left a moment ago keeps its place
        assert await invite_and_go(web, "127.0.0.2") == full
        assert trio.current_time() < left.idle_since + PLACE_GRACE
        assert set(tables) == {left, held}
        # alone for the grace, it gives its place to the next, held or not
        await trio.sleep_until(left.idle_since + PLACE_GRACE)
        assert await invite_and_go(web, "127.0.0.2") is None
        assert left not in tables
        (left,) = set(tables) - {held}
        assert await invite_and_go(web, "127.0.0.2") == full
        await trio.sleep_until(left.idle_since + PLACE_GRACE)
        other_held = await held_invite(web, "127.0.0.2", stack)
        assert left not in tables
        assert set(tables) == {held, other_held}
        # both held: none gives way, however long
        await trio.sleep(PLACE_GRACE)
        assert await invite_and_go(web, "127.0.0.2") == full
        assert set(tables) == {held, other_held}
        # another address is another peer
        assert await invite_and_go(web, "127.0.0.3") is None
        assert len(tables) == 3


@trio_test
async def test_invites_no_one_can_ever_open_do_not_lock_out_the_next_visitor() -> None:
    """Invites whose inviters went at once without a message (never told the links) fill the
    server's tables: they keep their places for the grace, then give them to the next
    invites, those of the address that made the most first, then the one left alone the
    longest; only tables still played at fill the server for good (1013)."""
    async with running_web() as web, AsyncExitStack() as stack:
        tables = web.app.tables.tables
        web.app.tables.most = 4
        web.app.tables.per_peer = 2
        web.app.tables.grace = PLACE_GRACE
        full = (1013, "the server holds its 4 games between two pages")
        made: list[Table] = []
        for local in ("127.0.0.2", "127.0.0.3"):
            for _ in range(2):
                before = set(tables)
                assert await invite_and_go(web, local) is None
                made.extend(set(tables) - before)
                await trio.sleep(0.01)  # each left alone a while longer than the next
        assert set(tables) == set(made)
        assert sorted(made, key=lambda t: t.idle_since) == made
        # left a moment ago, they keep their places
        assert await invite_and_go(web, "127.0.0.6") == full
        assert trio.current_time() < made[0].idle_since + PLACE_GRACE
        assert set(tables) == set(made)
        await trio.sleep_until(made[-1].idle_since + PLACE_GRACE)
        # a visitor of another address, who holds nothing, would invite a friend: the two
        # addresses made two each, and the one left alone the longest gives its place
        before = set(tables)
        answer = await invite_answer(web)
        assert answer.startswith("response name=yoxii"), answer
        assert set(tables) == set(made[1:]) | (set(tables) - before)
        (visitor,) = set(tables) - before
        assert await wait_for(visitor.done_with)
        await trio.sleep_until(visitor.idle_since + PLACE_GRACE)
        # invites held open take the places of the others, one after the other: first
        # made[2] (127.0.0.3 has made two, 127.0.0.2 one), then made[1] (each address one:
        # alone the longest), then made[3], then the visitor's
        held = []
        remaining = [*made[1:], visitor]
        for local, gone in zip(
            ("127.0.0.4", "127.0.0.4", "127.0.0.5", "127.0.0.5"),
            (made[2], made[1], made[3], visitor),
            strict=True,
        ):
            held.append(await held_invite(web, local, stack))
            remaining.remove(gone)
            assert gone not in tables
            assert set(tables) == set(remaining) | set(held)
        assert await invite_and_go(web, "127.0.0.6") == full
        assert set(tables) == set(held)


async def invite_answer(web: Web) -> str:
    """What a new invite from 127.0.0.1 is answered to ``query table`` (or how it closed)."""
    async with open_websocket_url(web.ws(YOXII)) as ws:
        await ws.send_message("query table\n")
        try:
            with trio.fail_after(WAIT):
                return str(await ws.get_message())
        except ConnectionClosed as exc:
            await drop(ws)
            return f"closed {exc.reason}"


@asynccontextmanager
async def watched_after_its_end(web: Web) -> AsyncIterator[tuple[dict[str, str], Table]]:
    """A game resigned, both its players' pages gone, and a spectator watching it still
    (to the context's end): the inviter's links and the table."""
    async with page(web.ws(YOXII)) as host:
        links = pairs(await host.ask("query table"))
        found = web.app.tables.player(links["token"])
        assert found is not None
        seated = found[0]
        async with page(web.ws(f"table={links['invite']}")) as guest:
            await guest.ask("query table")
            async with spectator(web, links["watch"]) as watcher:
                assert await guest.ask("resign") == "resigned"
                await watcher.until("result")
                await guest.socket.ws.aclose()
                await host.socket.ws.aclose()
                assert await wait_for(seated.done_with)
                yield links, seated
                assert seated.watchers == 1  # it watched to the end


@trio_test
async def test_a_spectator_alone_cannot_keep_a_finished_table_in_the_inviters_share() -> None:
    """A spectator (the other player, say, who has the spectators' link) does not keep a
    game over whose players have gone: its place goes to the inviter's next invite once it
    has been alone for the grace, and it is dropped ``keep`` seconds after the last player
    went, watched or not."""
    async with running_web() as web:
        tables = web.app.tables
        tables.keep = 2.0
        tables.per_peer = 1
        tables.grace = PLACE_GRACE
        async with watched_after_its_end(web) as (links, seated):
            # the inviter would invite someone else: not while a reload may come back to it
            full = (1013, "127.0.0.1 has made 1 games between two pages still open")
            assert await closed_with(web.ws(YOXII)) == full
            assert trio.current_time() < seated.idle_since + PLACE_GRACE
            assert seated in tables.tables
            await trio.sleep_until(seated.idle_since + PLACE_GRACE)
            answer = await invite_answer(web)
            assert answer.startswith("response name=yoxii"), answer
            assert seated not in tables.tables
            assert await closed_with(web.ws(f"table={links['token']}")) == (4400, NO_LINK)
        # the invite just made gives its place to the next once it has been alone the grace
        (answered,) = tables.tables
        assert await wait_for(answered.done_with)
        await trio.sleep_until(answered.idle_since + PLACE_GRACE)
        async with watched_after_its_end(web) as (links, seated):
            assert answered not in tables.tables
            await trio.sleep_until(seated.idle_since + PLACE_GRACE)
            tables.sweep()
            assert seated in tables.tables  # kept a while for a rematch
            await trio.sleep_until(seated.idle_since + tables.keep)
            assert await closed_with(events_url(web, links["watch"])) == (4400, NO_WATCH)
            assert seated not in tables.tables


@trio_test
async def test_a_tables_link_loads_the_page_which_sends_no_referer() -> None:
    """A player's or the spectators' link is the page's address: the page it loads tells the
    browser to send no ``Referer``, so the token does not leak to another site's server."""
    async with running_web() as web:
        for path in ("/?table=" + "A" * 22, "/?watch=" + "B" * 22):
            status, headers, body = await http_get(web.url, path)
            assert status == 200
            assert b'<meta name="referrer" content="no-referrer">' in body
            assert b"A" * 22 not in body
            assert b"B" * 22 not in body
            assert "referrer-policy" not in headers or headers["referrer-policy"] == "no-referrer"

"""What the tests of games between two pages (tables) share: the server's refusals, two
browsers' keys, a player's text socket (``Page``), a table of two pages joined, a spectator's
feed, and the moves that set a game going.

A player's socket gets unsolicited ``table key=value ...`` lines between its replies:
``Page`` keeps them apart (``Page.notes``) so that a test waits for the reply to its command
and still asserts on every notification."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import trio
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    open_websocket_url,
    wrap_client_stream,
)

import games
from enginesrv.web.table import SOCKETS_PER_PLAYER, Table
from tests.enginesrv.peer import connect_from
from tests.web.webpeer import TextSocket, Web, drop, text_socket

WAIT = 3.0
"""Seconds any line, frame, feed message or close awaited may take (they come in
milliseconds; the machine may be loaded)."""

NO_LINK = "table: no game has this link (it may have ended long ago)"
NO_WATCH = "watch: no game has this link (it may have ended long ago)"
HELD = (
    "table: this seat is held by another browser: a player's link works only in the browser "
    "that first opened it"
)
"""The reason a page of another browser's key is refused a seat (4400)."""
BAD_KEY = "key: write 16 to 64 letters, digits, - or _ (the browser's own)"
ONLY_KEY = "table: a player's link has no other field but key"
NOT_A_TABLE = "key: only a game between two pages takes one"
TOO_MANY = f"this player has {SOCKETS_PER_PLAYER} pages open at this game"
OTHERS_DECISION = "error 101 bad-arguments play: it is the other player's decision"
FAULTS = frozenset({"connection_failed", "internal_error", "search_failed", "close_failed"})
"""Log events that mean a fault of the server."""

HOST_KEY = "host-browser-key_0001"
"""The inviter's browser key (``table``)."""
GUEST_KEY = "guest-browser-key_0002"
"""The guest's browser key (``table``)."""

YOXII = "game=yoxii&opponent=invite&side=p1&tc=60+1"
"""Yoxii with a clock, the inviter p1."""
YINYANG = "game=yinyang&opponent=invite&side=p1"
"""Yin Yang, the inviter p1 (Black: it writes its laws first)."""
PLACE_GRACE = 1.0
"""Seconds a table with nothing left to play keeps its place in the tests of the caps."""

# Yin Yang: Black's laws are the example laws of docs/yinyang.md §5
BLACK_LAWS = ("bwbb>b.bb", "..bb>bbbb", "bwbw>*", "bw.w>b..w")
WHITE_LAWS = ("wbww>w.ww", "..ww>wwww", "w.bb>*", ".bb.>wbbw")
"""White's laws: in neither form one of Black's (a leak test finds no false leak)."""


def pairs(text: str) -> dict[str, str]:
    """The ``key=value`` words of a line's value."""
    return dict(word.split("=", 1) for word in text.split())


def other(seat: str) -> str:
    return "p2" if seat == "p1" else "p1"


def drawn_key(values: dict[str, Any], *others: str) -> str:
    """The key the server drew for a seat whose first page presented none (``query table``'s
    ``key``): 22 URL-safe characters, never empty, nor any of ``others`` (the other seat's)."""
    key = values["key"]
    assert isinstance(key, str)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", key), key
    assert key not in others
    return key


# -- Yin Yang's secret laws ----------------------------------------------------------------------


def law_forms(laws: tuple[str, ...] | list[str]) -> set[str]:
    """Each law as its owner writes it and as the absolute pattern (reversed cells)."""
    out: set[str] = set()
    for law in laws:
        cause, effect = law.split(">")
        out.update({law, f"{cause[::-1]}>{effect[::-1]}"})
    return out


def hidden_laws(position: str, seat: int) -> set[str]:
    """``seat``'s hidden laws in a full Yin Yang position (0 Black, 1 White), in both forms."""
    field = position.split()[3 + seat]
    return law_forms([e[1:] for e in field.split(",") if e.startswith("-")])


def leaks(texts: list[str], secret: set[str]) -> list[tuple[str, str]]:
    return [(law, text) for text in texts for law in secret if law in text]


def yinyang_choice(moves: list[str]) -> str:
    """A piece move if there is one, else ``end``, else a law applied that rewrites none."""
    pieces = [move for move in moves if "-" in move]
    if pieces:
        return pieces[0]
    if "end" in moves:
        return "end"
    return next(move for move in moves if "=" not in move)


# -- the addresses -----------------------------------------------------------------------------


def seat_url(web: Web, token: str, key: str | None) -> str:
    """The address of a player's seat ``token`` as a page of browser ``key`` opens it (None:
    a program's, with no key)."""
    fields = {"table": token} if key is None else {"table": token, "key": key}
    return web.ws(urlencode(fields))


def events_url(web: Web, token: str) -> str:
    return web.url.replace("http://", "ws://") + f"events?watch={token}"


def only_table(web: Web) -> Table:
    (found,) = web.app.tables.tables
    return found


# -- a player's page ---------------------------------------------------------------------------


class Page:
    """A player's text socket: the reply to each command, the ``table`` notifications kept;
    each line awaited for ``wait`` seconds unless told otherwise."""

    def __init__(self, socket: TextSocket, wait: float = WAIT) -> None:
        self.socket = socket
        self.wait = wait
        self.notes: list[dict[str, str]] = []
        """Every ``table`` notification received, in order."""
        self.seen = 0
        """How many of ``notes`` ``note`` has looked at."""
        self.pings = 0
        self.listed: set[str] = set()
        """The replies of ``moves``, kept out of ``texts``."""

    async def _line(self, timeout: float | None = None) -> str | None:
        """The next line, or None for a notification (kept)."""
        line = await self.socket.line(self.wait if timeout is None else timeout)
        if line.startswith("table "):
            self.notes.append(pairs(line[6:]))
            return None
        return line

    async def following(self, timeout: float | None = None) -> str:
        """The next line that is not a notification."""
        while True:
            line = await self._line(timeout)
            if line is not None:
                return line

    async def reply(self, command: str) -> str:
        """The first line after ``command`` that is not a notification."""
        await self.socket.send(command)
        return await self.following()

    async def ask(self, command: str) -> str:
        """The value of the ``response`` to ``command``."""
        line = await self.reply(command)
        assert line == "response" or line.startswith("response "), f"{command}: {line}"
        return line[9:]

    async def refused(self, command: str, code: int = 101) -> str:
        """The error line that refuses ``command``."""
        line = await self.reply(command)
        assert line.startswith(f"error {code} "), f"{command}: {line}"
        return line

    async def table(self) -> dict[str, str]:
        """The values of ``query table``."""
        return pairs(await self.ask("query table"))

    async def note(self, timeout: float | None = None, **want: str | int) -> dict[str, str]:
        """The next notification (after those already looked at) whose values include
        ``want``; any other line meanwhile fails the test."""
        expected = {key: str(value) for key, value in want.items()}
        while True:
            while self.seen < len(self.notes):
                values = self.notes[self.seen]
                self.seen += 1
                if all(values.get(key) == value for key, value in expected.items()):
                    return values
            line = await self._line(timeout)
            assert line is None, f"a line while waiting for a table notification: {line}"

    async def probe(self, command: str) -> list[str]:
        """Every line (but notifications) that answers ``command``, however many."""
        self.pings += 1
        await self.socket.send(command, f"ping {self.pings}")
        lines = []
        while (line := await self.following()) != f"pong {self.pings}":
            lines.append(line)
        return lines

    async def moves(self) -> list[str]:
        """``query moves``: its reply is kept out of ``texts`` (the tokens of an adaptation
        name every law there is)."""
        line = await self.reply("query moves")
        assert line.startswith("response"), line
        self.listed.add(line)
        return line.split()[1:]

    def texts(self) -> list[str]:
        """Every line received but the move lists of ``moves``."""
        return [
            line
            for message in self.socket.messages
            if isinstance(message, str)
            for line in message.splitlines()
            if line not in self.listed
        ]


@asynccontextmanager
async def page(url: str) -> AsyncIterator[Page]:
    async with text_socket(url) as socket:
        yield Page(socket)


async def own_token(page: Page) -> str:
    """The token of ``page``'s player (``query table``): a guest's is the invite."""
    return (await page.table())["token"]


@asynccontextmanager
async def table(
    web: Web,
    query: str = YOXII,
    host_key: str | None = HOST_KEY,
    guest_key: str | None = GUEST_KEY,
) -> AsyncIterator[tuple[Page, Page, dict[str, str]]]:
    """An inviter's page (``query``, browser ``host_key``), its guest's page joined (browser
    ``guest_key``; None: a program with no key), and the inviter's ``query table`` before the
    guest came. Each page has sent its first message (the socket's framing: only then is it
    told of the table's changes), and the inviter has been told of the guest once."""
    async with page(web.ws(query if host_key is None else f"{query}&key={host_key}")) as host:
        links = await host.table()
        async with page(seat_url(web, links["invite"], guest_key)) as guest:
            theirs = await guest.table()
            assert theirs["seat"] == other(links["seat"])
            assert theirs["token"] == links["invite"]  # the invite is the guest's own link
            if theirs["seat"] == "p2":
                await host.note(p2="here")
            else:
                await host.note(p1="here")
            yield host, guest, links


# -- a spectator ---------------------------------------------------------------------------------


class Spectator:
    """A spectator's feed: every JSON message, and its text as it came; each awaited for
    ``wait`` seconds unless told otherwise."""

    def __init__(self, ws: WebSocketConnection, wait: float = WAIT) -> None:
        self.ws = ws
        self.wait = wait
        self.messages: list[dict[str, Any]] = []
        self.texts: list[str] = []

    async def next(self, timeout: float | None = None) -> dict[str, Any]:
        with trio.fail_after(self.wait if timeout is None else timeout):
            text = await self.ws.get_message()
        assert isinstance(text, str), f"a binary message on the feed: {text!r}"
        self.texts.append(text)
        message: dict[str, Any] = json.loads(text)
        self.messages.append(message)
        return message

    async def until(self, kind: str, timeout: float | None = None, **want: Any) -> dict[str, Any]:
        """The next message of type ``kind`` whose keys include ``want``."""
        while True:
            message = await self.next(timeout)
            if message["type"] == kind and all(message.get(k) == v for k, v in want.items()):
                return message


@asynccontextmanager
async def spectator(web: Web, token: str, wait: float = WAIT) -> AsyncIterator[Spectator]:
    async with open_websocket_url(events_url(web, token)) as ws:
        yield Spectator(ws, wait)


# -- sockets the server refuses, and waiting for the server --------------------------------------


async def refused(url: str, *first: str) -> tuple[int, str, list[str | bytes]]:
    """A socket the server should close at once: it sends ``first`` (a page's first
    commands) as soon as it is open; the close code and reason, and every message it got."""
    got: list[str | bytes] = []
    async with open_websocket_url(url) as ws:
        try:
            for line in first:
                await ws.send_message(line + "\n")
            with trio.fail_after(WAIT):
                while True:
                    got.append(await ws.get_message())
        except ConnectionClosed as exc:
            await drop(ws)
            assert exc.reason is not None
            return exc.reason.code, exc.reason.reason or "", got
    raise AssertionError(f"{url} was not closed")


async def closed_with(url: str, *first: str) -> tuple[int, str]:
    """The close code and reason of a socket the server closes before telling it anything
    (after ``first``, a page's first commands, if given)."""
    code, reason, got = await refused(url, *first)
    assert got == [], got
    return code, reason


async def wait_for(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    """Whether the server came to what ``predicate`` asks (a page's close, say) within
    ``timeout`` seconds."""
    with trio.move_on_after(timeout):
        while not predicate():
            await trio.sleep(0.01)
        return True
    return False


@asynccontextmanager
async def socket_from(web: Web, local: str, resource: str) -> AsyncIterator[WebSocketConnection]:
    """A WebSocket to the web port's ``resource`` (``/ws?...``) from the loopback address
    ``local`` (another peer to the server)."""
    stream = await connect_from(local, "127.0.0.1", web.web_port)
    async with trio.open_nursery() as nursery:
        ws = await wrap_client_stream(nursery, stream, f"127.0.0.1:{web.web_port}", resource)
        try:
            yield ws
        finally:
            with trio.move_on_after(1):
                await ws.aclose()
            await stream.aclose()


async def invite_and_go(web: Web, local: str) -> tuple[int, str] | None:
    """``local`` opens an invite and goes at once, without a message (it is never told the
    links): the close code and reason when the server refuses it; else None, once the server
    has made the table and seen its inviter go."""
    tables = web.app.tables.tables
    before = set(tables)
    async with socket_from(web, local, "/ws?" + YOXII) as ws:
        with trio.fail_after(WAIT):
            while not set(tables) - before:
                try:
                    with trio.move_on_after(0.01):
                        await ws.get_message()
                except ConnectionClosed as exc:
                    assert exc.reason is not None
                    return exc.reason.code, exc.reason.reason or ""
            # hypercorn pings each socket it accepts, and trio-websocket fails on a ping that
            # comes once it is closing: the answer to a ping of ours (a control frame, not a
            # message) comes after hypercorn's, which has then been answered
            await ws.ping()
        (made,) = set(tables) - before
    assert await wait_for(made.done_with)
    return None


async def held_invite(web: Web, local: str, stack: AsyncExitStack) -> Table:
    """An invite from ``local`` whose inviter's page stays open (until ``stack`` closes)."""
    before = set(web.app.tables.tables)
    ws = await stack.enter_async_context(socket_from(web, local, "/ws?" + YOXII))
    values = await Page(TextSocket(ws)).table()
    (made,) = set(web.app.tables.tables) - before
    assert made.players[0].token == values["token"]
    return made


# -- decisions ---------------------------------------------------------------------------------


async def play_first(mover: Page, waiting: Page) -> str:
    """``mover`` plays its first legal move; ``waiting`` is refused the same move first and
    told of it after (its notification's plies grown by one, no offer open). The move
    played."""
    plies = int((await mover.table())["plies"])
    move = (await mover.ask("query moves")).split()[0]
    assert await waiting.reply(f"play {move}") == OTHERS_DECISION
    position = await mover.ask(f"play {move}")
    assert position == await mover.ask("query position")
    told = await waiting.note(plies=plies + 1)
    assert told["offer"] == told["offered"] == "none"
    return move


async def write_laws(mover: Page, waiting: Page, laws: tuple[str, ...]) -> None:
    """``mover`` writes its Yin Yang laws (checked first on its view by the game's rules);
    ``waiting`` is told of it, and ``mover``'s position holds them, hidden."""
    values = await mover.table()
    plies = int(values["plies"])
    assert (await mover.moves())[0] == "count"  # kept out of texts: it names example laws
    view = games.load("yinyang").state_from_string(await mover.ask("query position"))
    token = "laws:" + ",".join(laws)
    assert view.move_to_str(view.parse_move(token)) == token
    await mover.ask(f"play {token}")
    await waiting.note(plies=plies + 1)
    own = 3 + (0 if values["seat"] == "p1" else 1)  # Black's field, then White's
    mine = (await mover.ask("query position")).split()[own].split(",")
    assert mine == [f"-{law}" for law in laws]

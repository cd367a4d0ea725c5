"""The tables of a web server (``enginesrv.web.table``): made by invites, found by their
tokens, dropped once no one holds them; the hooks a player's socket plays through
(``SeatGame``).

What a table costs is bounded: at most ``MAX_TABLES`` exist at once and one peer (an address
prefix, as the server's admission counts them) may have made at most ``TABLES_PER_PEER`` of
those. A table with nothing left to play (``Table.done_with``: no player's page is there, and
its game is over or never began) is dropped ``KEEP`` seconds after the last player's page
went, spectators or not, and sooner, once it has been alone for a grace, when its place is
wanted for a new table (its maker's, or anyone's when the server holds all it may: the peer
that made the most gives first); a game going on with no one there ends by its clock or its
players' grace first. Each player may hold ``table.SOCKETS_PER_PLAYER`` pages at
it. Spectators are counted per table (``WATCHERS_PER_TABLE``) and in all (``MAX_WATCHERS``),
and are refused once the server is within its reserve of connections, where players are still
admitted (``Tables.spectator_refusal``).
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections import Counter

import trio

import games
from enginesrv.admission import RESERVE_SHARE, Admission
from enginesrv.search.child import SearchRunner
from enginesrv.serve.connection import Connection
from enginesrv.serve.hooks import Decision
from enginesrv.serve.settings import request_error
from enginesrv.web.gamespec import GameSpec
from enginesrv.web.refereed import over_answer, refuse_another_game
from enginesrv.web.sockets import StarletteSocket, serve_feed
from enginesrv.web.table import GRACE, Table, TableError
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS

MAX_TABLES = 256
"""Tables at once, in all."""
TABLES_PER_PEER = 8
"""Tables one peer may have made that still exist."""
KEEP = 600.0
"""Seconds a table with nothing left to play is kept once no player's page holds it (for a
reload, a rematch, a late guest), unless its place is wanted for a new one."""
WATCHERS_PER_TABLE = 32
"""Spectators of one table at once."""
MAX_WATCHERS = 256
"""Spectators of every table together."""


KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""A browser's key (``key=`` of a table's address): the page draws one and keeps it."""


class SeatHeldError(TableError):
    """A seat held by another browser's page (the socket is closed with 4400)."""


class Tables:
    """Every table of the server, by token (module docstring)."""

    def __init__(
        self,
        runner: SearchRunner,
        *,
        max_plies: int,
        grace: float = GRACE,
        keep: float = KEEP,
        most: int = MAX_TABLES,
        per_peer: int = TABLES_PER_PEER,
    ) -> None:
        self.runner = runner
        self.max_plies = max_plies
        self.grace = grace
        self.keep = keep
        self.most = most
        self.per_peer = per_peer
        self.tables: dict[Table, str] = {}
        """Each table and the peer that made it."""
        self._players: dict[str, tuple[Table, int]] = {}
        self._watched: dict[str, Table] = {}
        self.watchers = 0

    def create(self, spec: GameSpec, peer: str, key: str) -> Table:
        """A new table of ``spec`` made by ``peer`` (``TableError`` when a cap is reached: a
        table no one plays at any more gives its place first)."""
        self.sweep()
        mine = [t for t, owner in self.tables.items() if owner == peer]
        if len(mine) >= self.per_peer and not self._drop_one(mine):
            raise TableError(f"{peer} has made {self.per_peer} games between two pages still open")
        if len(self.tables) >= self.most and not self._drop_one(list(self.tables)):
            raise TableError(f"the server holds its {self.most} games between two pages")
        table = Table(spec, self.runner, max_plies=self.max_plies, grace=self.grace)
        table.players[0].key = key or secrets.token_urlsafe(16)
        self.tables[table] = peer
        for player, holder in enumerate(table.players):
            self._players[holder.token] = (table, player)
        self._watched[table.watch_token] = table
        return table

    def join(self, table: Table, player: int, key: str) -> None:
        """A page of ``player`` holding the browser's ``key`` opens ``table``. A seat is bound
        to the key of the first page that takes it (the inviter's at the invite, the other
        player's at their first visit): a page of another key is refused (``SeatHeldError``), so
        that an inviter who opens the invite itself before handing it on holds a seat the
        other player is then refused, and told so, rather than one they share unknowing."""
        holder = table.players[player]
        if holder.key is not None and not hmac.compare_digest(holder.key, key):
            raise SeatHeldError(
                "table: this seat is held by another browser: a player's link works only in "
                "the browser that first opened it"
            )
        table.join(player)
        if holder.key is None:
            # a program that sent no key gets one of the server's, told by query table: a
            # seat is never bound to the empty key, which every keyless client would share
            holder.key = key or secrets.token_urlsafe(16)

    def player(self, token: str) -> tuple[Table, int] | None:
        """The table and the player (0: the inviter) of a player's token."""
        self.sweep()
        return self._players.get(token)

    def watched(self, token: str) -> Table | None:
        """The table of a spectators' token."""
        self.sweep()
        return self._watched.get(token)

    def sweep(self) -> None:
        """Drop the tables there is nothing left to play at (``Table.done_with``) once no
        player's page has held them for ``keep`` seconds; a spectator keeps none."""
        now = trio.current_time()
        for table in list(self.tables):
            table.tick()  # a game no one watches ends by its clock or a grace all the same
            if table.done_with() and table.idle_since + self.keep <= now:
                self._drop(table)

    def _drop_one(self, among: list[Table]) -> bool:
        """Drop one table of ``among`` there is nothing left to play at, alone for a grace at
        least (a page that reloads, a guest on the way, finds it kept): of the peer that made
        the most tables, the one left alone the longest. False when there is none."""
        now = trio.current_time()
        done = [t for t in among if t.done_with() and t.idle_since + self.grace <= now]
        if not done:
            return False
        made = Counter(self.tables.values())
        self._drop(min(done, key=lambda t: (-made[self.tables[t]], t.idle_since)))
        return True

    def _drop(self, table: Table) -> None:
        del self.tables[table]
        for holder in table.players:
            self._players.pop(holder.token, None)
        self._watched.pop(table.watch_token, None)

    def spectator_refusal(self, table: Table, admission: Admission) -> str | None:
        """Why a spectator may not watch ``table`` now (None: it may): spectators give way to
        players when the server is within its reserve of connections."""
        cap = admission.cap()
        if cap and admission.held > cap - cap // RESERVE_SHARE:
            return "the server is nearly full: its last connections are kept for players"
        if table.watchers >= WATCHERS_PER_TABLE:
            return f"this game has its {WATCHERS_PER_TABLE} spectators"
        if self.watchers >= MAX_WATCHERS:
            return f"the server has its {MAX_WATCHERS} spectators"
        return None


class SeatGame:
    """The ``RefereeHooks`` of a player's socket at a table: the player's own view, their
    decisions, resignation and offers; the other player's decisions come as notifications,
    so ``go`` is refused."""

    def __init__(self, table: Table, player: int, key: str = "") -> None:
        self.table = table
        self.player = player
        self.key = key
        """The browser's key the page presented (``Tables.join``)."""

    def admit(self, command: m.Command) -> None:
        self.table.tick()
        refuse_another_game(command, "a game between two pages")

    def view(self) -> tuple[games.Game, games.State, list[str]]:
        referee = self.table.referee
        seat = self.table.seat_of(self.player)
        return referee.game, referee.state.view(seat).copy(), referee.shown_to(seat)

    def play(self, token: str) -> None:
        self.table.play(self.player, token)

    def undo(self, n: int) -> None:
        del n
        raise request_error(BAD_ARGUMENTS, "undo: the other player must agree: send offer takeback")

    def query(self, what: str) -> m.ResponseValue | None:
        referee = self.table.referee
        if what == "clock":
            return referee.clock_value()
        if what == "table":
            return self.table.values(self.player)
        return over_answer(referee.outcome(), what)

    def go(self, *, notification: bool) -> None:
        del notification
        raise request_error(
            BAD_ARGUMENTS,
            "go: the other player decides here; a table notification tells when they have",
        )

    async def decide(self, stop: trio.Event) -> Decision:
        del stop  # never asked: go is refused
        await trio.lowlevel.checkpoint()
        return Decision(None, "the other player decides")

    def leave(self) -> None:
        """Nothing to stop: the socket's end is told to the table by the web side."""

    def changes(self) -> int:
        return self.table.changes

    def act(self, command: m.Resign | m.Offer | m.Decline) -> m.ResponseValue:
        table = self.table
        if isinstance(command, m.Resign):
            return table.resign(self.player)
        if isinstance(command, m.Offer):
            return table.offer(self.player, command.kind)
        return table.decline(self.player, command.kind)


NOTE_GAP = 0.05
"""Seconds at least between two notifications to one page: a burst of changes (an opponent
who offers and withdraws as fast as it can) is told as one, where it ended."""
SEND_DELAY = 0.1
"""Seconds a spectator's messages wait to be sent in one burst (``enginesrv.web.watch``)."""


async def tell_table(seat: SeatGame, connection: Connection) -> None:
    """Tell a player's page each change of its table (``table`` notifications), until the
    connection ends; the table is woken meanwhile when a clock or a grace runs out."""
    table = seat.table
    seen = table.changes
    while True:
        seen = await table.watch(seen)
        await connection.send(m.TableNote(table.values(seat.player)), None)
        await trio.sleep(NOTE_GAP)


async def watch_table(socket: StarletteSocket, table: Table, stop: trio.Event) -> None:
    """A spectator's feed of ``table``; the table is woken meanwhile when a clock or a grace
    runs out, so that its end is told when no player is there to see it."""

    async def keep_time() -> None:
        seen = table.changes
        while True:
            seen = await table.watch(seen)

    await serve_feed(socket, table.feed, stop, SEND_DELAY, keep_time)


__all__ = ["KEY", "SeatGame", "SeatHeldError", "TableError", "Tables", "tell_table", "watch_table"]

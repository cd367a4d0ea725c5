"""A game between two people at two pages (a *table*): one refereed game, its two players'
seats, its offers, and its spectators' feed.

The inviter's page opens ``/ws?game=...&opponent=invite`` and gets the table's links
(``query table``); the other player opens ``/ws?table=TOKEN``. Each player holds a token of
their own (``secrets.token_urlsafe``: 128 bits, never a number that can be guessed), which is
all a page needs to come back after a reload or a lost network; the invite is spent by the
other player's first visit, which gives them a new token that the inviter never saw
(``Tables.join``); the spectators' token only watches. The referee
(``enginesrv.web.referee``) keeps the full position; each player's page is given its own view
and the decisions as its player was shown them, and spectators the public view, through the
table's feed (``enginesrv.event.feed``, the watch page's messages).

What people expect of a game between two:

* the clocks start once both players have opened the game, and run as in a game against a
  bot (each player's while their decision is due);
* ``resign``; ``offer draw``, ``offer takeback`` (of the offerer's last decision and those
  after it, never past one that revealed what was hidden) and, once the game is over,
  ``offer rematch`` (colours swapped); an offer the other made is accepted by making it too,
  and refused (or one's own withdrawn) by ``decline``; a decision clears every offer;
* a player whose every page has gone loses after ``GRACE`` seconds away (``disconnect``),
  unless their clock runs out first; the other page is told how long is left.

Every change is told to each player's pages as a ``table`` notification (``Table.values``),
read by a task of each socket that also wakes the table when a clock or a grace runs out
(``Table.watch``), so that a game ends on time even when no one sends anything.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import trio

from enginesrv.event.feed import (
    Feed,
    Message,
    event_message,
    game_message,
    move_message,
    result_message,
)
from enginesrv.event.play.outcome import Outcome, Termination, seat_name
from enginesrv.event.results.wording import result_words
from enginesrv.search.child import SearchRunner
from enginesrv.serve.positions import result_text
from enginesrv.serve.settings import RequestError, request_error
from enginesrv.web.gamespec import GameSpec
from enginesrv.web.referee import Referee
from protocol.errors import BAD_ARGUMENTS, GAME_OVER

GRACE = 30.0
"""Seconds a player whose pages have all gone may stay away before losing the game."""
SOCKETS_PER_PLAYER = 4
"""Pages one player may hold open at a table at once (a reload opens one before the last
one's socket is seen to close)."""
FEED_QUEUE = 1024
"""Messages a spectator of a table may fall behind before it is dropped."""
ROLES = ("Host", "Guest")
"""How the feed names the players: the inviter, and the one who opened the invite."""


class TableError(ValueError):
    """A table cannot be joined (the reason is the message)."""


@dataclass
class Player:
    """One of a table's two players: their token and pages."""

    token: str
    sockets: int = 0
    joined: bool = False
    away_since: float | None = None
    """When their last page went (trio's time), while the game goes on and they are away."""
    offer: str | None = None
    """What they offer the other now (``protocol.messages.OFFER_KINDS``)."""
    declined: str | None = None
    """Their offer the other declined, until they offer again or someone decides."""
    key: str | None = None
    """The key of the browser that holds the seat (``Tables.join``); None until one has."""


class Table:
    """A game between two pages (module docstring)."""

    def __init__(
        self,
        spec: GameSpec,
        runner: SearchRunner,
        *,
        max_plies: int,
        grace: float = GRACE,
    ) -> None:
        self.spec = spec
        self.runner = runner
        self.max_plies = max_plies
        self.grace = grace
        self.players = (Player(secrets.token_urlsafe(16)), Player(secrets.token_urlsafe(16)))
        self.watch_token = secrets.token_urlsafe(16)
        self.number = 1
        """Which game of the table this is (a rematch starts the next)."""
        self.referee = self._referee()
        self.started = False
        self.changes = 0
        """Counts every change a player's page is told of."""
        self._changed = trio.Event()
        self.feed = Feed(queue=FEED_QUEUE, keep_finished=2)
        self.watchers = 0
        self.idle_since = trio.current_time()
        """When the last player's page left (or the table was made)."""
        self._moves: list[Message] = []
        """The feed's messages of the game's decisions so far."""
        self._ended = False
        game = self.referee.game
        control = "none" if spec.control is None else str(spec.control)
        self.feed.publish(event_message("A game between two people", game, list(ROLES), 0, control))
        self._publish_game()

    def _referee(self) -> Referee:
        return Referee(self.spec, self.runner, max_plies=self.max_plies)

    # -- who is who ----------------------------------------------------------------------------

    def seat_of(self, player: int) -> int:
        """The colour ``player`` (0: the inviter) plays in this game: the inviter's chosen
        side in the first, swapped at each rematch."""
        first = self.spec.side if player == 0 else 1 - self.spec.side
        return first ^ ((self.number - 1) & 1)

    def player_at(self, seat: int) -> int:
        return 0 if self.seat_of(0) == seat else 1

    def players_here(self) -> int:
        """The players' pages open at the table now."""
        return sum(p.sockets for p in self.players)

    def done_with(self) -> bool:
        """Whether nothing is left to play for: no player's page is here, and the game is
        over or never began (what is left is a rematch, or the other player's first visit)."""
        return not self.players_here() and (self.referee.over() or not self.started)

    # -- pages coming and going ----------------------------------------------------------------

    def join(self, player: int) -> None:
        """A page of ``player`` opened the table (``TableError`` when they hold too many)."""
        self.tick()
        holder = self.players[player]
        if holder.sockets >= SOCKETS_PER_PLAYER:
            raise TableError(f"this player has {SOCKETS_PER_PLAYER} pages open at this game")
        holder.sockets += 1
        holder.joined = True
        holder.away_since = None
        if not self.started and all(p.joined for p in self.players):
            self.started = True
            self.referee.tick()  # the clocks start
            for each in self.players:
                if not each.sockets:  # the inviter's page went while it waited
                    each.away_since = trio.current_time()
        self._notify()

    def leave(self, player: int) -> None:
        """A page of ``player`` went."""
        self.tick()
        holder = self.players[player]
        holder.sockets -= 1
        if holder.sockets == 0:
            if not self.players_here():
                self.idle_since = trio.current_time()
            if self.started and not self.referee.over():
                holder.away_since = trio.current_time()
        self._notify()

    # -- time ----------------------------------------------------------------------------------

    def tick(self) -> None:
        """End the game of a player out of time or away too long, whichever came first."""
        if not self.started or self.referee.over():
            return
        now = trio.current_time()
        flag = self.referee.flag_at()
        for player in sorted(range(2), key=self._grace_end):
            end = self._grace_end(player)
            if end <= now and (flag is None or end <= flag):
                seat = self.seat_of(player)
                detail = f"{self.referee.game.colours[seat]} left and did not come back"
                self.referee.end(Outcome.loss(seat, Termination.DISCONNECT), detail)
                break
        self.referee.tick()
        if self.referee.over():  # it ended now: on time, or a player away too long
            self._after_change()

    def _grace_end(self, player: int) -> float:
        away = self.players[player].away_since
        return float("inf") if away is None else away + self.grace

    def deadline(self) -> float:
        """When the game may end by itself next: a clock or a grace running out."""
        if not self.started or self.referee.over():
            return float("inf")
        flag = self.referee.flag_at()
        return min(self._grace_end(0), self._grace_end(1), float("inf") if flag is None else flag)

    async def watch(self, seen: int) -> int:
        """Wait until the table has changed since ``changes`` was ``seen``, ending the game
        meanwhile when a clock or a grace runs out; the new count of changes."""
        while self.changes == seen:
            with trio.move_on_at(self.deadline()):
                await self._changed.wait()
            self.tick()
        return self.changes

    def _notify(self) -> None:
        self.changes += 1
        self._changed.set()
        self._changed = trio.Event()

    # -- decisions and offers ------------------------------------------------------------------

    def _player_seat(self, player: int, verb: str) -> int:
        self.tick()
        if not self.started:
            raise request_error(BAD_ARGUMENTS, f"{verb}: the other player has not come yet")
        return self.seat_of(player)

    def play(self, player: int, token: str) -> None:
        seat = self._player_seat(player, "play")
        self.referee.play(token, seat)
        self._clear_offers()
        self._after_change()

    def _clear_offers(self) -> None:
        """A decision, an agreement or the end of the game: no offer stands any more."""
        for each in self.players:
            each.offer = each.declined = None

    def resign(self, player: int) -> str:
        self.referee.resign(self._player_seat(player, "resign"))
        self._after_change()
        return "resigned"

    def offer(self, player: int, kind: str) -> str:
        """``player`` offers ``kind``, or accepts the other's same offer; what came of it."""
        seat = self._player_seat(player, f"offer {kind}")
        me, other = self.players[player], self.players[1 - player]
        over = self.referee.over()
        if over != (kind == "rematch"):
            when = "once the game is over" if kind == "rematch" else "while the game goes on"
            raise request_error(GAME_OVER if over else BAD_ARGUMENTS, f"offer {kind}: only {when}")
        accepting = other.offer == kind
        if kind == "takeback":
            # the decision taken back is the one of whoever asked for it
            asker = 1 - seat if accepting else seat
            back = self.referee.last_of(asker)
        if not accepting:
            me.offer, me.declined = kind, None
            self._notify()
            return "offered"
        self._clear_offers()
        if kind == "draw":
            self.referee.end(Outcome.draw(Termination.AGREEMENT), "both players agreed")
        elif kind == "takeback":
            self.referee.undo(back, "offer takeback")
        else:
            self._rematch()
        self._after_change()
        return "agreed"

    def decline(self, player: int, kind: str) -> str:
        """``player`` refuses the other's offer of ``kind``, or withdraws their own."""
        self.tick()
        me, other = self.players[player], self.players[1 - player]
        if other.offer == kind:
            other.offer, other.declined = None, kind
            answer = "declined"
        elif me.offer == kind:
            me.offer = None
            answer = "withdrawn"
        else:
            raise request_error(BAD_ARGUMENTS, f"decline {kind}: no {kind} is offered")
        self._notify()
        return answer

    def _rematch(self) -> None:
        """The next game: the same clock and start, the colours swapped."""
        self.number += 1
        self.referee = self._referee()
        self._moves = []
        self._ended = False
        self._publish_game()
        self.referee.tick()  # the clocks start
        now = trio.current_time()
        for each in self.players:
            if not each.sockets:  # its page went after it offered the rematch
                each.away_since = now

    # -- what the pages and the spectators are told --------------------------------------------

    def values(self, player: int) -> dict[str, str | int]:
        """``query table``'s answer and a ``table`` notification's values for ``player``."""
        now = trio.current_time()
        me, other = self.players[player], self.players[1 - player]
        control = self.spec.control
        out: dict[str, str | int] = {
            "name": self.referee.game.name,
            "tc": "none" if control is None else str(control),
            "game": self.number,
            "seat": seat_name(self.seat_of(player)),
            "token": me.token,
            "key": me.key or "none",
            "invite": other.token if player == 0 and not other.joined else "none",
            "watch": self.watch_token,
            "plies": self.referee.plies(),
            "result": result_text(self.referee.outcome()),
            "takeback": self._takeback_size(self.seat_of(player)),
        }
        for seat in (0, 1):
            holder = self.players[self.player_at(seat)]
            name = seat_name(seat)
            if not holder.joined:
                out[name] = "waiting"
            elif holder.sockets:
                out[name] = "here"
            else:
                out[name] = "away"
            end = self._grace_end(self.player_at(seat))
            left = 0 if end == float("inf") or self.referee.over() else end - now
            out[f"{name}grace"] = max(0, round(left * 1000))
        out["offer"] = other.offer or "none"
        out["offered"] = me.offer or "none"
        out["declined"] = me.declined or "none"
        return out

    def _takeback_size(self, seat: int) -> int:
        """The decisions a takeback ``seat`` asked for would take back (0: it may ask none)."""
        try:
            return self.referee.last_of(seat)
        except RequestError:
            return 0

    def _after_change(self) -> None:
        """Tell the feed what is new of the game, and the pages that something changed."""
        referee = self.referee
        record = referee.record
        if len(self._moves) > len(record):  # taken back: the game again, from its start
            del self._moves[len(record) :]
            self._publish_game()
            for message in self._moves:
                self.feed.publish(message)
        if len(self._moves) < len(record):  # one decision more (each is told at once)
            state = referee.state
            ply = len(record)
            message = move_message(self.number, ply, record[-1].public, state, self._clocks())
            self._moves.append(message)
            self.feed.publish(message)
        if referee.over() and not self._ended:
            self._ended = True
            self._clear_offers()  # a draw or a takeback offered cannot be taken up any more
            self.feed.publish(
                result_message(self.number, self._outcome(), len(record), self.result())
            )
        self._notify()

    def _outcome(self) -> Outcome:
        referee = self.referee
        if referee.forfeit is not None:
            return referee.forfeit
        outcome = referee.state.outcome()
        assert outcome is not None, "a game over by its rules has an outcome"
        return Outcome.by_rules(outcome)

    def result(self) -> str:
        """The end of the game in words, as a spectator is told it."""
        outcome = self._outcome()
        names = (ROLES[self.player_at(0)], ROLES[self.player_at(1)])
        if outcome.termination is Termination.RESIGN and outcome.winner is not None:
            return f"{names[outcome.winner]} wins: {names[1 - outcome.winner]} resigned"
        return result_words(outcome, names)

    def _publish_game(self) -> None:
        """Tell the feed that the game begins (again, after a takeback)."""
        names = (ROLES[self.player_at(0)], ROLES[self.player_at(1)])
        control = self.spec.control
        base = None if control is None else control.base_ms
        game = self.referee.game
        first = game.state_from_string(self.spec.start) if self.spec.start else game.new_state()
        self.feed.publish(game_message(self.number, self.number, names, first, base))

    def _clocks(self) -> tuple[float, float] | None:
        clocks = self.referee.clocks
        if clocks is None:
            return None
        now = trio.current_time()
        return (max(0.0, clocks.left(0, now)), max(0.0, clocks.left(1, now)))

"""A game the server referees for a page: a person against a bot, two people at one screen, or
two people at two pages (a table, ``enginesrv.web.table``).

The referee holds the full position. The page's session holds only a view (docs/protocol.md
§8): the person's own, or in a game of two people at one screen the view of the side to act,
so that ``query``, ``show`` and every reply on the page's socket answer from what that player
may know; each decision is kept as each player and a spectator were shown it (``Shown``).
The bot is a ``BotPlayer`` with a session of its own in the worker pool, given its own view
before every decision, as the arbiter gives engines theirs; its searches report nothing
to the page but the move, shown as the person may see it. The page's session asks the referee
through ``RefereedGame`` (``enginesrv.web.refereed``); the game's address is read by
``enginesrv.web.gamespec``.

On the page's socket (docs/web.md):

* ``play <move>`` is the person's decision; ``go`` asks the bot for its decision and is
  answered ``bestmove <shown move>`` (``stop`` makes the bot move at once, and so does the
  page going away: its search never outlives the socket);
* ``undo [N]`` takes back decisions of either side; ``query clock`` gives the clocks;
* ``uginewgame``, ``position`` and ``setoption`` are refused: a refereed game is set when the
  socket opens, by its address (``/ws?game=...&opponent=...``).

Clocks are the referee's: a person's runs from the moment their decision is due to their
``play``; the bot's runs only while it searches (so that a page that never sends ``go`` makes
no one lose). A player whose clock has run out has lost on time (``time-forfeit``); each
decision adds the increment, as in the arbiter.
"""

from __future__ import annotations

import functools
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import structlog
import trio

import games
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.clock import GameClock
from enginesrv.event.play.outcome import Outcome, Termination
from enginesrv.event.play.players import ForfeitError, GoRequest, parse_player
from enginesrv.search.child import SearchRunner
from enginesrv.serve.settings import MAX_MOVETIME, MAX_PLIES, RequestError, request_error
from enginesrv.web.challenge import Opponent
from enginesrv.web.gamespec import GameSpec
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, GAME_OVER

log = structlog.get_logger("enginesrv.web.referee")


@dataclass(frozen=True, slots=True)
class Shown:
    """One decision as each seat (``to``: p1's, p2's) and a spectator (``public``) were shown
    it, and whose it was."""

    mover: int
    to: tuple[str, str]
    public: str


class Referee:
    """The full position of a refereed game and its players (module docstring)."""

    def __init__(
        self,
        spec: GameSpec,
        runner: SearchRunner,
        *,
        peer: str | None = None,
        seeds: random.Random | None = None,
        max_plies: int = MAX_PLIES,
        max_movetime: int = MAX_MOVETIME,
        opponent: Opponent | None = None,
    ) -> None:
        """``peer``: the page's address, whose share of the search workers the bot's
        searches use (the server's per-address search cap). ``seeds``: the source of the
        bot's seeds (None: the operating system's randomness, which no page can know).
        ``max_plies``: the game's length at most (the server's ``plies`` limit; 0: none):
        a game that reaches it is a draw (``max-plies``), as the arbiter adjudicates.
        ``max_movetime``: the most a bot's search takes from its clock (0: no limit).
        ``opponent``: the other player when it is not a bot of the server's (a challenge,
        ``enginesrv.web.challenge``): nothing is taken back in its game."""
        self.spec = spec
        self.max_plies = max_plies
        self.seeds = seeds
        self.game = games.load(spec.game)
        self.state = (
            self.game.state_from_string(spec.start)
            if spec.start is not None
            else self.game.new_state()
        )
        self.record: list[Shown] = []
        """Every decision, as each player and a spectator were shown it."""
        self.version = 0
        """Counts the changes of the game (a decision, one taken back, its end)."""
        self.first = self.state.ply()
        self.floor = self.first
        """The ply ``undo`` may not go below: the last decision that revealed hidden
        information (``State.reveals``) stays played, so that nothing shown is hidden again."""
        self.forfeit: Outcome | None = None
        """How the game ended other than by the rules: a forfeit, or the server's ply limit."""
        self.forfeit_detail = ""
        self.clocks = None if spec.control is None else GameClock.both(spec.control)
        self.started = False
        self.final = opponent is not None
        """Whether every decision is final (nothing taken back)."""
        self.bot: Opponent | None = opponent
        if spec.against_bot and opponent is None:
            self.bot = BotPlayer(
                parse_player(spec.opponent), runner, peer=peer, most_ms=max_movetime
            )

    async def start(self) -> None:
        if self.bot is not None:
            await self.bot.start(self.game)
            source = self.seeds or secrets.SystemRandom()
            await self.bot.new_game(
                secrets.token_hex(8), source.getrandbits(31), 1 + source.getrandbits(62)
            )

    # -- who may know what ---------------------------------------------------------------------

    @property
    def shown(self) -> list[str]:
        """Every decision as the page was shown it: the person's own view against a bot; at
        one screen each as the other player (the next to look) saw it."""
        if self.spec.against_bot:
            return self.shown_to(self.spec.side)
        return [each.to[1 - each.mover] for each in self.record]

    def shown_to(self, seat: int | None) -> list[str]:
        """Every decision as ``seat`` (None: a spectator) was shown it."""
        if seat is None:
            return [each.public for each in self.record]
        return [each.to[seat] for each in self.record]

    def viewer(self) -> int | None:
        """Whose view the page holds: the person's, or (two people) the side to act's; at the
        end of a game between two people, everything."""
        if self.spec.against_bot:
            return self.spec.side
        seat = self.state.to_move()
        return None if seat < 0 else seat

    def view(self) -> games.State:
        viewer = self.viewer()
        if viewer is None:
            return self.state.copy()
        return self.state.view(viewer).copy()

    def outcome(self) -> games.Outcome | None:
        """The end of the game, as the protocol reports one (``games.Outcome``)."""
        if self.forfeit is not None:
            return games.Outcome(self.forfeit.result, self.forfeit.reason)
        return self.state.outcome()

    def over(self) -> bool:
        return self.forfeit is not None or self.state.is_terminal()

    def person_to_act(self) -> bool:
        seat = self.state.to_move()
        return seat >= 0 and (not self.spec.against_bot or seat == self.spec.side)

    def plies(self) -> int:
        """The decisions played since the game's start."""
        return len(self.record)

    # -- clocks --------------------------------------------------------------------------------

    def settled(self) -> bool:
        """Whether the game is over, a clock that ran out since the last command counted
        (the clocks are not started by it)."""
        if self.started:
            self.tick()
        return self.over()

    def tick(self) -> None:
        """Start the clocks at the first command; end the game of a player out of time."""
        now = trio.current_time()
        if not self.started:
            self.started = True
            self._run_due(now)
        clocks = self.clocks
        if clocks is None or self.over() or clocks.running is None:
            return
        if clocks.left(clocks.running, now) <= 0:
            self._lose(clocks.running, Termination.TIME_FORFEIT, "its clock ran out")

    def _lose(self, seat: int, reason: Termination, detail: str) -> None:
        """``seat`` loses by forfeit (``reason``, as the arbiter names it); the clocks stop."""
        self.end(Outcome.loss(seat, reason), detail)

    def end(self, outcome: Outcome, detail: str) -> None:
        """The game ends other than by its rules (a forfeit, a resignation, a draw agreed);
        the clocks stop."""
        self.forfeit = outcome
        self.forfeit_detail = detail
        self.version += 1
        if self.clocks is not None:
            self.clocks.run(None, trio.current_time())

    def flag_at(self) -> float | None:
        """When the clock that runs now runs out, or ran out (trio's time; None: none runs)."""
        clocks = self.clocks
        if clocks is None or clocks.running is None or self.over():
            return None
        now = trio.current_time()
        return now + clocks.left(clocks.running, now) / 1000

    def _run_due(self, now: float) -> None:
        """Run the clock of the side to act if it is a person's (the bot's runs on ``go``);
        in a game against a challenged bot (``final``) the person's runs until it sends the
        bot's ``go`` too, so that a page that never asks cannot stop every clock."""
        if self.clocks is None:
            return
        seat = None
        if not self.over() and self.person_to_act():
            seat = self.state.to_move()
        elif not self.over() and self.final and self.state.to_move() >= 0:
            seat = self.spec.side
        self.clocks.run(seat, now)

    def clock_value(self) -> m.ResponseValue:
        if self.clocks is None:
            return "none"
        now = trio.current_time()
        running = self.clocks.running
        return {
            "p1": max(0, round(self.clocks.left(0, now))),
            "p2": max(0, round(self.clocks.left(1, now))),
            "running": "none" if running is None else f"p{running + 1}",
        }

    # -- decisions -----------------------------------------------------------------------------

    def play(self, token: str, seat: int | None = None) -> None:
        """The person's decision, or at a table ``seat``'s (raises ``RequestError`` with the
        reason)."""
        if self.over():
            raise request_error(GAME_OVER, f"play: the game is over ({self.outcome()})")
        if seat is not None and seat != self.state.to_move():
            raise request_error(BAD_ARGUMENTS, "play: it is the other player's decision")
        if not self.person_to_act():
            raise request_error(BAD_ARGUMENTS, "play: it is the bot's decision: send go")
        try:
            # checked on what the person may know first: their decision is theirs in full
            # (their own laws), never a shown form
            mine = self.view() if seat is None else self.state.view(seat)
            mine.parse_move(token)
            move = self.state.parse_move(token)
        except games.GameError as exc:
            raise RequestError(m.InvalidMove(token, exc.reason)) from None
        self._push(move)

    def _push(self, move: games.Move) -> None:
        seat = self.state.to_move()
        shown = (self.state.public_move_str(move, 0), self.state.public_move_str(move, 1))
        self.record.append(Shown(seat, shown, self.state.public_move_str(move, None)))
        reveals = self.state.reveals(move)
        self.state.push(move)
        self.version += 1
        if reveals:
            self.floor = self.state.ply()
        if self.clocks is not None:
            self.clocks.run(None, trio.current_time())
            self.clocks.decided(seat)
        if self.max_plies and len(self.record) >= self.max_plies and not self.state.is_terminal():
            # the server's ply limit: adjudicated as the arbiter adjudicates its --max-plies
            limit = f"the game reached the server's limit of {self.max_plies} plies"
            self.end(Outcome.draw(Termination.MAX_PLIES), limit)
            return
        self._run_due(trio.current_time())

    async def bot_decision(self, stop: trio.Event | None = None) -> str | None:
        """Ask the bot for its decision and play it: the move as the person is shown it, or
        None when the bot forfeited (the game is then over). ``stop`` set makes the bot move
        at once with what it has (a ``stop``, or the page going away)."""
        assert self.bot is not None
        seat = self.state.to_move()
        now = trio.current_time()
        on_hold: Callable[[bool], None] | None = None
        if self.clocks is not None:
            # the bot's clock runs only while its search holds a worker (``on_hold``)
            self.clocks.run(None, now)
            left = self.clocks.remaining
            control = self.clocks.controls[seat]  # the same for both seats
            inc = 0 if control is None else control.inc_ms
            clocks = m.Go(p1time=round(left[0]), p2time=round(left[1]), p1inc=inc, p2inc=inc)
            forfeit_at: float | None = now + max(0.0, left[seat]) / 1000
            on_hold = functools.partial(self._bot_holds, self.clocks, seat)
        else:
            clocks = m.Go(movetime=self.spec.movetime)
            forfeit_at = None
            on_hold = self._no_clock  # the move timeout counts only the searching too
        request = GoRequest(
            seat=seat,
            position=self.state.view(seat).to_string(),
            start=None,
            moves=(),
            clocks=clocks,
            forfeit_at=forfeit_at,
            turn=self.state.turn_position(),
            weight=self.state.time_weight(),
            expected=self.state.decisions_left(),
        )
        try:
            reply = await self.bot.go(request, stop, on_hold)
            if reply.token is None:
                raise ForfeitError(Termination.ILLEGAL_MOVE, "the bot had no move")
            move = self.state.parse_move(reply.token)
        except ForfeitError as exc:
            self._lose(seat, exc.reason, self._public(exc.detail))
            return None
        except games.GameError as exc:
            played = self._public(f"it played {exc.text!r}: {exc.reason}")
            self._lose(seat, Termination.ILLEGAL_MOVE, played)
            return None
        if self.clocks is not None and self.clocks.left(seat, trio.current_time()) <= 0:
            self._lose(seat, Termination.TIME_FORFEIT, "its clock ran out before it moved")
            return None
        self._push(move)
        return self.record[-1].to[self.spec.side]

    @staticmethod
    def _no_clock(holding: bool) -> None:
        """A bot without a clock: nothing to run or stop."""
        del holding

    @staticmethod
    def _bot_holds(clocks: GameClock, seat: int, holding: bool) -> None:
        """The bot's search took a worker (its clock runs) or was suspended (it stops)."""
        clocks.run(seat if holding else None, trio.current_time())

    def _public(self, detail: str) -> str:
        """What the page is told of the bot's forfeit: in a game of hidden information only
        that it forfeited, since the bot's move or error may quote its hidden decisions."""
        if self.game.hidden_information:
            log.info("refereed bot forfeited", detail=detail[:300])
            return "the bot's move or failure is not shown: it may tell what is hidden"
        return detail

    def resign(self, seat: int) -> None:
        """``seat`` gives up the game."""
        if self.over():
            raise request_error(GAME_OVER, f"resign: the game is over ({self.outcome()})")
        self._lose(seat, Termination.RESIGN, f"{self.game.colours[seat]} resigned")

    def last_of(self, seat: int) -> int:
        """How many decisions taking back ``seat``'s last one takes back (it and every one
        after it); raises ``RequestError`` when it has none that may be taken back."""
        for back, each in enumerate(reversed(self.record), start=1):
            if each.mover == seat:
                self.check_undo(back, "takeback")
                return back
        raise request_error(
            BAD_ARGUMENTS, f"takeback: {self.game.colours[seat]} has no decision to take back"
        )

    def check_undo(self, n: int, verb: str) -> None:
        """Refuse to take back ``n`` decisions when they may not be (``RequestError``)."""
        if self.forfeit is not None:
            raise request_error(
                GAME_OVER, f"{verb}: the game ended by {self.forfeit.reason}, which is final"
            )
        if self.final:
            raise request_error(
                BAD_ARGUMENTS, f"{verb}: nothing is taken back in a game against this bot"
            )
        available = min(len(self.record), self.state.ply() - self.floor)
        if n > available:
            why = (
                f"decision {self.floor - self.first} revealed what was hidden, which stays shown"
                if self.floor > self.first
                else "the game started there"
            )
            raise request_error(
                BAD_ARGUMENTS,
                f"{verb}: only {available} decision(s) can be taken back, not {n} ({why})",
            )

    def undo(self, n: int, verb: str = "undo") -> None:
        """Take back ``n`` decisions (``verb``: the command that asks, for its errors)."""
        self.check_undo(n, verb)
        for _ in range(n):
            self.state.pop()
            self.record.pop()
        self.version += 1
        self._run_due(trio.current_time())

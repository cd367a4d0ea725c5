"""A game the server referees for a page: a person against a bot, or two people at one screen.

The referee holds the full position. The page's session holds only a view (docs/protocol.md
§8): the person's own, or in a game of two people the view of the side to act, so that
``query``, ``show`` and every reply on the page's socket answer from what that player may
know. The bot is a ``BotPlayer`` with a session of its own in the worker pool, given its own
view before every decision, as the arbiter gives engines theirs; its searches report nothing
to the page but the move, shown as the person may see it.

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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import structlog
import trio

import games
from enginesrv.event.play.bot_player import BotPlayer, check_bot
from enginesrv.event.play.controls import TimeControl
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import ForfeitError, GoRequest, PlayerSpecError, parse_player
from enginesrv.search.child import SearchRunner
from enginesrv.serve.offload import offload
from enginesrv.serve.session import Session, _Search
from enginesrv.serve.settings import MAX_CLOCK, MAX_MOVETIME, MAX_PLIES, RequestError, request_error
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, GAME_OVER

log = structlog.get_logger("enginesrv.web.referee")
HUMAN = "human"
DEFAULT_MOVETIME = 1000
"""Milliseconds a bot is given per decision in a game without a clock."""
REFUSED = (m.NewGame, m.Position, m.SetOption)
MIN_CLOCK_MS = 1000
"""The least time a refereed game's clock may start with: less, and the bot (which keeps back
``BOT_OVERHEAD_MS`` and a trip to its worker) would lose on time before it could move."""
PAGE_OPTIONS = ("Depth", "Samples", "Quiescence", "Aspiration", "Level")
"""The bot options a refereed game's address may set: how strong the bot plays, nothing more.
The others are the server's: the seeds bear on the bot's secrets (a page that chose the seed
of the bot's hidden decisions could make them again), and ``Hash``, ``Threads`` and the like on
the server's memory and workers, which the server shares out itself."""


class GameSpecError(ValueError):
    """A refereed game's address cannot be used; the message names the field and why."""


@dataclass(frozen=True)
class GameSpec:
    """What a refereed game's address asks for (``/ws?game=yoxii&opponent=bot:random&...``)."""

    game: str
    opponent: str = HUMAN
    """``human`` (two people at one screen) or a ``bot:NAME[:OPTION=VALUE,...]`` player."""
    side: int = games.P1
    """The person's seat against a bot (0 = p1)."""
    control: TimeControl | None = None
    movetime: int = DEFAULT_MOVETIME
    start: str | None = None
    """A position string to start from (None: the game's start position)."""

    @property
    def against_bot(self) -> bool:
        return self.opponent != HUMAN


def parse_game_spec(
    query: str, *, max_movetime: int = MAX_MOVETIME, max_clock: int = MAX_CLOCK
) -> GameSpec | None:
    """The game asked for by a ``/ws`` address's query string; None when it asks for none
    (a plain protocol session). ``max_movetime`` and ``max_clock`` are the server's limits
    (ms; 0: none), which a refereed game's times keep to as a session's do.

    Raises:
        GameSpecError: a field that cannot be used (the message says which and why).
    """
    fields = dict(parse_qsl(query, keep_blank_values=True))
    if "game" not in fields and "opponent" not in fields:
        return None
    known = {"game", "opponent", "side", "tc", "movetime", "position"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise GameSpecError(f"unknown field {unknown[0]!r}: the fields are {', '.join(known)}")
    name = fields.get("game", "")
    try:
        game = games.load(name)
    except games.GameError as exc:
        raise GameSpecError(f"game {name!r}: {exc}") from None
    opponent = fields.get("opponent", HUMAN) or HUMAN
    if opponent != HUMAN:
        try:
            spec = parse_player(opponent)
        except PlayerSpecError as exc:
            raise GameSpecError(str(exc)) from None
        if spec.kind != "bot":
            raise GameSpecError(f"opponent {opponent!r}: write human or bot:NAME[:OPTIONS]")
        if spec.tc is not None:
            raise GameSpecError(f"opponent {opponent!r}: the tc field sets the clock, not tc=")
        _check_page_options(spec.options)
        try:
            check_bot(spec, game.name)
        except PlayerSpecError as exc:
            raise GameSpecError(str(exc)) from None
    side_text = fields.get("side", "p1")
    if side_text not in ("p1", "p2"):
        raise GameSpecError(f"side {side_text!r}: write p1 or p2")
    control = None
    tc = fields.get("tc", "").replace(" ", "+")  # a "+" left unescaped in an address
    if tc and tc != "none":
        try:
            control = TimeControl.parse(tc)
        except ValueError as exc:
            raise GameSpecError(str(exc)) from None
        if control.infinite:
            control = None  # no clock, as with none
        elif control.moves:
            raise GameSpecError(f"time control {tc!r}: write SECONDS[+INCREMENT]")
        elif control.base_ms < MIN_CLOCK_MS:
            raise GameSpecError(
                f"time control {tc!r}: at least {MIN_CLOCK_MS // 1000} s, or the bot could not "
                "move in time"
            )
        elif max_clock and max(control.base_ms, control.inc_ms) > max_clock:
            raise GameSpecError(
                f"time control {tc!r}: over the server's limit of {max_clock // 1000} s on a "
                "clock (limit clock)"
            )
    movetime_text = fields.get("movetime", str(DEFAULT_MOVETIME))
    most = max_movetime or 3_600_000
    if not movetime_text.isdigit() or len(movetime_text) > 9 or not 0 < int(movetime_text) <= most:
        raise GameSpecError(
            f"movetime {movetime_text[:20]!r}: write milliseconds, 1 to {most} (limit movetime)"
        )
    start = fields.get("position") or None
    if start is not None:
        try:
            state = game.state_from_string(start)
        except games.InvalidPositionError as exc:
            raise GameSpecError(f"position {start!r}: {exc.reason}") from None
        if state.is_terminal():
            raise GameSpecError(f"position {start!r}: the game is over there")
        if state.is_view():
            raise GameSpecError(
                f"position {start!r}: a view (it leaves something unknown); a refereed game "
                "starts from a full position"
            )
    return GameSpec(
        game.name,
        opponent,
        0 if side_text == "p1" else 1,
        control,
        int(movetime_text),
        start,
    )


def _check_page_options(options: tuple[tuple[str, str], ...]) -> None:
    """Refuse a bot option a page may not set (``PAGE_OPTIONS``)."""
    allowed = {name.lower() for name in PAGE_OPTIONS}
    for key, _ in options:
        if key.lower() not in allowed:
            raise GameSpecError(
                f"opponent: option {key!r} is the server's to set; a page may set "
                f"{', '.join(PAGE_OPTIONS)}"
            )


@dataclass
class Clocks:
    """Both players' time (ms) and whose runs since when (``trio.current_time``)."""

    control: TimeControl
    left: list[float] = field(default_factory=list)
    running: int | None = None
    since: float = 0.0

    def __post_init__(self) -> None:
        self.left = [float(self.control.base_ms)] * 2

    def now_left(self, seat: int, now: float) -> float:
        spent = (now - self.since) * 1000 if self.running == seat else 0.0
        return self.left[seat] - spent

    def run(self, seat: int | None, now: float) -> None:
        """Stop the running clock (its time is spent) and start ``seat``'s."""
        if self.running is not None:
            self.left[self.running] = self.now_left(self.running, now)
        self.running = seat
        self.since = now

    def decided(self, seat: int) -> None:
        self.left[seat] += self.control.inc_ms


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
    ) -> None:
        """``peer``: the page's address, whose share of the search workers the bot's
        searches use (the server's per-address search cap). ``seeds``: the source of the
        bot's seeds (None: the operating system's randomness, which no page can know).
        ``max_plies``: the game's length at most (the server's ``plies`` limit; 0: none):
        a game that reaches it is a draw (``max-plies``), as the arbiter adjudicates.
        ``max_movetime``: the most a bot's search takes from its clock (0: no limit)."""
        self.spec = spec
        self.max_plies = max_plies
        self.seeds = seeds
        self.game = games.load(spec.game)
        self.state = (
            self.game.state_from_string(spec.start)
            if spec.start is not None
            else self.game.new_state()
        )
        self.shown: list[str] = []
        """Every decision as the person (the page) was shown it."""
        self.first = self.state.ply()
        self.floor = self.first
        """The ply ``undo`` may not go below: the last decision that revealed hidden
        information (``State.reveals``) stays played, so that nothing shown is hidden again."""
        self.forfeit: games.Outcome | None = None
        self.forfeit_detail = ""
        self.clocks = None if spec.control is None else Clocks(spec.control)
        self.started = False
        self.bot: BotPlayer | None = None
        if spec.against_bot:
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
        return self.forfeit or self.state.outcome()

    def over(self) -> bool:
        return self.forfeit is not None or self.state.is_terminal()

    def person_to_act(self) -> bool:
        seat = self.state.to_move()
        return seat >= 0 and (not self.spec.against_bot or seat == self.spec.side)

    # -- clocks --------------------------------------------------------------------------------

    def tick(self) -> None:
        """Start the clocks at the first command; end the game of a player out of time."""
        now = trio.current_time()
        if not self.started:
            self.started = True
            self._run_due(now)
        clocks = self.clocks
        if clocks is None or self.over() or clocks.running is None:
            return
        if clocks.now_left(clocks.running, now) <= 0:
            self._lose(clocks.running, "time-forfeit", "its clock ran out")

    def _lose(self, seat: int, reason: str, detail: str) -> None:
        """``seat`` loses by forfeit (``reason``, as the arbiter names it); the clocks stop."""
        self.forfeit_detail = detail
        if self.clocks is not None:
            self.clocks.run(None, trio.current_time())
        self.forfeit = games.Outcome("p2" if seat == 0 else "p1", reason)

    def _run_due(self, now: float) -> None:
        """Run the clock of the side to act if it is a person's (the bot's runs on ``go``)."""
        if self.clocks is not None:
            due = self.person_to_act() and not self.over()
            self.clocks.run(self.state.to_move() if due else None, now)

    def clock_value(self) -> m.ResponseValue:
        if self.clocks is None:
            return "none"
        now = trio.current_time()
        running = self.clocks.running
        return {
            "p1": max(0, round(self.clocks.now_left(0, now))),
            "p2": max(0, round(self.clocks.now_left(1, now))),
            "running": "none" if running is None else f"p{running + 1}",
        }

    # -- decisions -----------------------------------------------------------------------------

    def play(self, token: str) -> None:
        """The person's decision (raises ``RequestError`` with the reason)."""
        if self.over():
            raise request_error(GAME_OVER, f"play: the game is over ({self.outcome()})")
        if not self.person_to_act():
            raise request_error(BAD_ARGUMENTS, "play: it is the bot's decision: send go")
        try:
            # checked on what the person may know first: their decision is theirs in full
            # (their own laws), never a shown form
            self.view().parse_move(token)
            move = self.state.parse_move(token)
        except games.GameError as exc:
            raise RequestError(m.InvalidMove(token, exc.reason)) from None
        self._push(move)

    def _push(self, move: games.Move) -> None:
        seat = self.state.to_move()
        viewer = self.spec.side if self.spec.against_bot else 1 - seat
        self.shown.append(self.state.public_move_str(move, viewer))
        reveals = self.state.reveals(move)
        self.state.push(move)
        if reveals:
            self.floor = self.state.ply()
        if self.clocks is not None:
            self.clocks.run(None, trio.current_time())
            self.clocks.decided(seat)
        if self.max_plies and len(self.shown) >= self.max_plies and not self.state.is_terminal():
            # the server's ply limit: adjudicated as the arbiter adjudicates its --max-plies
            self.forfeit = games.Outcome("draw", "max-plies")
            self.forfeit_detail = f"the game reached the server's limit of {self.max_plies} plies"
            if self.clocks is not None:
                self.clocks.run(None, trio.current_time())
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
            left = self.clocks.left
            inc = self.clocks.control.inc_ms
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
            self._lose(seat, "illegal-move", self._public(f"it played {exc.text!r}: {exc.reason}"))
            return None
        if self.clocks is not None and self.clocks.now_left(seat, trio.current_time()) <= 0:
            self._lose(seat, "time-forfeit", "its clock ran out before it moved")
            return None
        self._push(move)
        return self.shown[-1]

    @staticmethod
    def _no_clock(holding: bool) -> None:
        """A bot without a clock: nothing to run or stop."""
        del holding

    @staticmethod
    def _bot_holds(clocks: Clocks, seat: int, holding: bool) -> None:
        """The bot's search took a worker (its clock runs) or was suspended (it stops)."""
        clocks.run(seat if holding else None, trio.current_time())

    def _public(self, detail: str) -> str:
        """What the page is told of the bot's forfeit: in a game of hidden information only
        that it forfeited, since the bot's move or error may quote its hidden decisions."""
        if self.game.hidden_information:
            log.info("refereed bot forfeited", detail=detail[:300])
            return "the bot's move or failure is not shown: it may tell what is hidden"
        return detail

    def undo(self, n: int) -> None:
        if self.forfeit is not None:
            raise request_error(
                GAME_OVER, f"undo: the game ended by {self.forfeit.reason}, which is final"
            )
        available = min(len(self.shown), self.state.ply() - self.floor)
        if n > available:
            why = (
                f"decision {self.floor - self.first} revealed what was hidden, which stays shown"
                if self.floor > self.first
                else "the game started there"
            )
            raise request_error(
                BAD_ARGUMENTS,
                f"undo: only {available} decision(s) can be taken back, not {n} ({why})",
            )
        for _ in range(n):
            self.state.pop()
            self.shown.pop()
        self._run_due(trio.current_time())


class RefereeSession(Session):
    """The page's session of a refereed game (module docstring)."""

    def __init__(self, *args: Any, referee: Referee, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.referee = referee
        self.game = referee.game
        self.state = referee.view()

    def _sync(self) -> str:
        """Give the session the referee's view again; returns its position string."""
        view = self.referee.view()
        self.state = view
        self.played = list(self.referee.shown)
        return view.to_string()

    async def _dispatch(
        self, command: m.Command, msgid: int | None, nursery: trio.Nursery
    ) -> m.Reply | None:
        referee = self.referee
        referee.tick()
        if isinstance(command, REFUSED):
            raise request_error(
                BAD_ARGUMENTS,
                f"{command.METHOD}: this socket is a game the server referees; open a new "
                "socket for another game",
            )
        match command:
            case m.Play(token):
                referee.play(token)
                return m.Response(self._sync())
            case m.Undo(n):
                referee.undo(n)
                return m.Response(self._sync())
            case m.Go():
                await self._bot_go(msgid, nursery)
                return None
            case m.Query(what):
                if what == "moves":
                    return m.Response(await offload(self.peer, lambda: self._refereed_query(what)))
                return m.Response(self._refereed_query(what))
        return await super()._dispatch(command, msgid, nursery)

    def _refereed_query(self, what: str) -> m.ResponseValue:
        """``query``, from the view, but for the end of the game: the referee knows when it
        is over (a view may not: the side to act may have no move only under hidden laws)."""
        referee = self.referee
        if what == "clock":
            return referee.clock_value()
        outcome = referee.outcome()
        if outcome is None:
            return self._query(what)
        match what:
            case "gameover":
                return True
            case "p1turn":
                return False
            case "result":
                return "draw" if outcome.winner == "draw" else f"{outcome.winner}win"
            case "moves":
                return ()
            case "turn":
                return "none"
            case "outcome":
                return outcome.as_dict()
        return self._query(what)

    async def stop_search(self) -> None:
        """The page goes (``quit``, or its socket closed): the bot's search is stopped, and
        a bot that has not searched yet does not wait for a worker to search for no one
        (``BotPlayer.retry_stopped``): its place in the queue is freed at once."""
        if self.referee.bot is not None:
            self.referee.bot.retry_stopped = False
        await super().stop_search()

    async def _bot_go(self, msgid: int | None, nursery: trio.Nursery) -> None:
        referee = self.referee
        if self.framing == "msgpack" and msgid is None:
            raise request_error(BAD_ARGUMENTS, "go: send it as a request; its result is the move")
        if referee.over():
            await self._no_move(GAME_OVER, "go: the game is over", msgid)
            return
        if not referee.spec.against_bot:
            raise request_error(BAD_ARGUMENTS, "go: two people play this game: send play")
        if referee.person_to_act():
            raise request_error(BAD_ARGUMENTS, "go: it is your decision: send play")
        search = _Search(msgid, infinite=False)
        self.search = search
        nursery.start_soon(self._bot_move, search)

    async def _bot_move(self, search: _Search) -> None:
        try:
            shown = await self.referee.bot_decision(search.stop)
            self._sync()
            self.search = None
            if shown is None:
                outcome = self.referee.outcome()
                detail = self.referee.forfeit_detail
                await self.reply(m.Info(string=f"{outcome}: {detail}"), search.msgid)
            await self._send(m.BestMove(shown), search.msgid)
        finally:
            if self.search is search:
                self.search = None
            search.done.set()


def session_factory(referee: Referee) -> functools.partial[RefereeSession]:
    """What a ``Connection`` makes its session with, for a refereed game."""
    return functools.partial(RefereeSession, referee=referee)

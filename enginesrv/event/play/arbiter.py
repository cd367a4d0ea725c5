"""The arbiter of one game between two players (``enginesrv.event.play.players``).

The arbiter holds the full position and the clocks. Before every decision it gives the mover
its view and its clocks (``go p1time .. p2time .. p1inc .. p2inc .. [movestogo ..]``, or
``movetime``, ``depth``, ``nodes``); it measures the time from the ``go`` to the answer on its
own side, checks the token with the rules and plays it. A game of perfect information is sent
as its start position and the moves since; a game of hidden information (Yin Yang) as the
mover's view alone, before every ``go``, so an engine never learns what it may not see.

A game ends by the rules, or with a forfeit (design §6 reasons): ``illegal-move`` (a malformed
or illegal token, no move, or a shown form with ``?`` from the mover), ``time-forfeit`` (the
clock ran out, beyond the time margin), ``crash``, ``disconnect`` or ``stall``; or it is
adjudicated: ``max-plies`` (a draw at the ply cap), ``repetition`` (a draw when one position
has been seen the given number of times), ``resign`` (a player whose reported score stays at or
below minus the threshold for the given number of its moves loses) and ``score-adjudication``
(a draw when, past a move number, both players' scores stay within the threshold for the given
number of moves).

Clocks: a decision (one ply) is a move; the increment is added after each, and a control of N
moves adds the base time again after every N decisions of that player. Each seat may have a
control of its own (``GameSetup.own``, a player's ``tc=``), which replaces the event's clock or
move time for that seat: the mover's ``go`` then carries each side's own clock and increment
(``p1time``/``p1inc`` only for a p1 that has a clock), and its move time when it has none. A
seat under ``tc=inf`` has no clock: its ``go`` carries only the depth and node limits, and the
player's move timeout is the only bound on its time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

import games
from enginesrv.event.play.clock import GameClock
from enginesrv.event.play.controls import Adjudication, MoveLimits, TimeControl, describe_seats
from enginesrv.event.play.openings import Opening, opening_state
from enginesrv.event.play.outcome import Outcome, Termination
from enginesrv.event.play.players import (
    Clocks,
    ForfeitError,
    GameOptions,
    GoRequest,
    Player,
    Reply,
)
from enginesrv.event.play.records import Record, RecordMove
from games.base import Winner


@dataclass
class GameResult:
    """How a game ended and its record.

    Attributes:
        outcome: who won, and why: by the rules or the arbiter's reason (module docstring).
        record: the game record (design §6).
        plies: the plies the engines played (the opening's not counted).
        wall: seconds from the first ``new_game`` to the end.
        engine_time: seconds the players spent on their moves (``go`` to answer).
        search_time: seconds of search the players reported (the part of ``engine_time``
            spent searching; the rest is transport and process latency).
        failed: the seats of players that crashed, stalled or disconnected (to be restarted).
        detail: what the forfeited player did, in words (``""`` when nobody forfeited).
    """

    outcome: Outcome
    record: Record
    plies: int
    wall: float
    engine_time: float
    failed: tuple[int, ...] = ()
    search_time: float = 0.0
    detail: str = ""

    @property
    def winner(self) -> Winner:
        """``p1``, ``p2`` or ``draw`` (``Outcome.result``)."""
        return self.outcome.result

    @property
    def reason(self) -> str:
        """The game's outcome reason or the arbiter's (``Outcome.reason``)."""
        return self.outcome.reason


@dataclass
class _Adjudicator:
    rules: Adjudication
    seen: dict[int, int] = field(default_factory=dict)
    low: list[int] = field(default_factory=lambda: [0, 0])
    quiet: int = 0

    def position(self, key: int) -> bool:
        """Count a position; whether it has now been seen the repetition limit."""
        count = self.seen.get(key, 0) + 1
        self.seen[key] = count
        return 0 < self.rules.repetitions <= count

    def score(self, seat: int, reply: Reply, ply: int) -> Outcome | None:
        """Note a reported score; the end of the game when a rule is met (``seat`` resigns,
        or a draw by score adjudication)."""
        score = reply.score
        resign, draw = self.rules.resign, self.rules.draw
        if resign is not None:
            losing = score is not None and (
                score.kind == "loss" or (score.kind == "cp" and score.value <= -resign.score)
            )
            self.low[seat] = self.low[seat] + 1 if losing else 0
            if self.low[seat] >= resign.movecount:
                return Outcome.loss(seat, Termination.RESIGN)
        if draw is not None:
            level = score is not None and score.kind == "cp" and abs(score.value) <= draw.score
            self.quiet = self.quiet + 1 if level and ply >= draw.movenumber else 0
            if self.quiet >= 2 * draw.movecount:
                return Outcome.draw(Termination.SCORE_ADJUDICATION)
        return None


MoveObserver = Callable[[str, games.State, tuple[float, float] | None], None]
"""Told each move of a game: its token as a spectator sees it, the position after it, the
clocks."""


@dataclass(frozen=True, slots=True)
class GameSetup:
    """Everything about one game but the players themselves."""

    key: str
    names: tuple[str, str]
    limits: MoveLimits
    """The event's limits, each seat's unless it has a control of its own."""
    adjudication: Adjudication
    opening: Opening = field(default_factory=Opening)
    seeds: tuple[int, int] = (0, 0)
    secret_seeds: tuple[int, int] = (0, 0)
    event: str = "enginesrv match"
    own: tuple[TimeControl | None, TimeControl | None] = (None, None)
    """Each seat's own time control (a player's ``tc=``), replacing the event's clock or
    move time for that seat; None: the event's."""
    options: tuple[GameOptions, GameOptions] = ((), ())
    """Options of p1's and of p2's player for this game only, set after its spec's own (a
    tuning game's perturbed parameters); none by default."""

    @property
    def seat_limits(self) -> tuple[MoveLimits, MoveLimits]:
        """The limits of p1 and of p2."""
        return self.limits.own(self.own[0]), self.limits.own(self.own[1])


async def play_game(
    game: games.Game,
    players: tuple[Player, Player],
    setup: GameSetup,
    *,
    clock: Callable[[], float] = trio.current_time,
    on_move: MoveObserver | None = None,
) -> GameResult:
    """Play one game, ``players[0]`` as p1. Never raises for a player's misbehaviour: it ends
    the game with a forfeit (module docstring); a failed player is listed in ``failed``.
    ``on_move`` is told each move as a spectator is shown it, with the position after it and
    the clocks (ms; None without a clock)."""
    return await _Game(game, players, setup, clock, on_move).play()


class _Game:
    """One game being played (``play_game``): the position, the clocks, the record so far."""

    def __init__(
        self,
        game: games.Game,
        players: tuple[Player, Player],
        setup: GameSetup,
        clock: Callable[[], float],
        on_move: MoveObserver | None,
    ) -> None:
        self.game = game
        self.players = players
        self.setup = setup
        self.clock = clock
        self.on_move = on_move
        self.started = clock()
        self.state = opening_state(game, setup.opening)
        self.start_text = setup.opening.start or game.start_position
        self.tokens: list[str] = list(setup.opening.moves)
        self.moves = [
            RecordMove(t, (("book", "1"),), i + 1) for i, t in enumerate(setup.opening.moves)
        ]
        self.comments: list[str] = []
        self.outcome: Outcome | None = None
        self.detail = ""
        self.failed: list[int] = []
        self.engine_time = self.search_time = 0.0
        self.seat_limits = setup.seat_limits
        self.clocks = GameClock((self.seat_limits[0].clock, self.seat_limits[1].clock))
        self.judge = _Adjudicator(setup.adjudication)
        self.judge.position(self.state.key())
        self.plies = 0

    async def play(self) -> GameResult:
        if await self._new_game():
            while self.outcome is None and not self.state.is_terminal():
                if self.plies >= self.setup.adjudication.max_plies:
                    self.outcome = Outcome.draw(Termination.MAX_PLIES)
                    break
                await self._decision(self.state.to_move())
        if self.outcome is None:
            ended = self.state.outcome()
            assert ended is not None
            self.outcome = Outcome.by_rules(ended)
        return self._result(self.outcome)

    def _forfeit(self, seat: int, why: Termination, detail: str) -> None:
        self.outcome, self.detail = Outcome.loss(seat, why), detail
        self.comments.append(f"p{seat + 1} {self.setup.names[seat]}: {detail}")

    async def _new_game(self) -> bool:
        """Tell both players a game begins; whether both took it."""
        setup = self.setup
        for seat in (0, 1):
            try:
                await self.players[seat].new_game(
                    setup.key, setup.seeds[seat], setup.secret_seeds[seat], setup.options[seat]
                )
            except ForfeitError as exc:
                self.failed.append(seat)
                self._forfeit(seat, exc.reason, exc.detail)
                return False
        return True

    def _request(self, seat: int) -> tuple[GoRequest, float | None]:
        """The ``go`` of ``seat``'s decision, and the time it may take (ms, the margin
        included; None: no bound but the player's move timeout)."""
        limits, clocks = self.seat_limits[seat], self.clocks
        margin = self.setup.adjudication.timemargin_ms
        allowed: float | None
        if clocks.has_clock(seat):
            times = [round(clocks.left(i)) if clocks.has_clock(i) else None for i in (0, 1)]
            incs = [None if c is None else c.inc_ms for c in clocks.controls]
            go = Clocks(
                p1time=times[0],
                p2time=times[1],
                p1inc=incs[0],
                p2inc=incs[1],
                movestogo=clocks.moves_to_go(seat),
                depth=limits.depth,
                nodes=limits.nodes,
            )
            allowed = clocks.left(seat) + margin
        else:
            go = Clocks(movetime=limits.st_ms, depth=limits.depth, nodes=limits.nodes)
            allowed = None if limits.st_ms is None else float(limits.st_ms + margin)
        hidden = self.game.hidden_information
        request = GoRequest(
            seat=seat,
            position=self.state.view(seat).to_string(),
            start=None if hidden else self.start_text,
            moves=() if hidden else tuple(self.tokens),
            clocks=go,
            forfeit_at=None if allowed is None else self.clock() + max(0.0, allowed) / 1000,
            turn=self.state.turn_position(),
            weight=self.state.time_weight(),
            expected=self.state.decisions_left(),
        )
        return request, allowed

    async def _decision(self, seat: int) -> None:
        """Ask ``seat`` for its decision and play it, or end the game with a forfeit."""
        request, allowed = self._request(seat)
        try:
            reply = await self.players[seat].go(request)
        except ForfeitError as exc:
            self.failed.append(seat)  # whatever it was doing, it is restarted before its next game
            self._forfeit(seat, exc.reason, exc.detail)
            return
        self.engine_time += reply.elapsed
        self.search_time += (reply.search_ms or 0) / 1000
        used_ms = reply.elapsed * 1000
        limits = self.seat_limits[seat]
        given = None
        if self.clocks.has_clock(seat):
            given = self.clocks.left(seat)
        elif limits.st_ms is not None:
            given = float(limits.st_ms)
        if allowed is not None and used_ms > allowed:
            left = given if given is not None else 0.0
            detail = f"{used_ms:.0f} ms used of {left:.0f} ms"
            self._forfeit(seat, Termination.TIME_FORFEIT, detail)
            return
        self.clocks.decided(seat, used_ms)
        token = reply.token
        try:
            if token is None:
                raise games.IllegalMoveError("none", "the player had no move")
            move = self.state.parse_move(token)  # the mover's own: never a shown form
        except games.GameError as exc:
            detail = f"played {exc.text!r}: {exc.reason}"
            self._forfeit(seat, Termination.ILLEGAL_MOVE, detail)
            return
        notes = self._notes(seat, reply, move, used_ms, given)
        self.moves.append(RecordMove(token, notes, len(self.moves) + 1))
        self.tokens.append(token)
        self._push(seat, move, reply)

    def _notes(
        self, seat: int, reply: Reply, move: games.Move, used_ms: float, given: float | None
    ) -> tuple[tuple[str, str], ...]:
        """The annotations of a move in the record (design §6)."""
        notes = [("ms", str(round(used_ms)))]
        if given is not None:
            # the overrun: measured minus what the move was given (negative: time to spare)
            notes.append(("over", str(round(used_ms - given))))
        if reply.score is not None:
            notes.append(("score", f"{reply.score.kind}:{reply.score.value}"))
        if reply.depth:
            notes.append(("depth", str(reply.depth)))
        if reply.nodes:
            notes.append(("nodes", str(reply.nodes)))
        if self.game.hidden_information:
            shown = self.state.public_move_str(move, 1 - seat)
            if shown != reply.token:
                notes.append(("shown", shown))
        if self.clocks.has_clock(seat):
            notes.append(("clock", str(round(self.clocks.left(seat)))))
        return tuple(notes)

    def _push(self, seat: int, move: games.Move, reply: Reply) -> None:
        """Play ``move`` of ``seat``, tell the spectators, and adjudicate."""
        state = self.state
        public = state.public_move_str(move, None) if self.on_move is not None else ""
        state.push(move)
        self.plies += 1
        if self.on_move is not None:
            self.on_move(public, state, self.clocks.shown)
        verdict = self.judge.score(seat, reply, self.plies)
        if verdict is not None:
            self.outcome = verdict
            if verdict.termination is Termination.RESIGN:
                name = self.setup.names[seat]
                self.comments.append(f"p{seat + 1} {name} resigned by score adjudication")
        elif not state.is_terminal() and self.judge.position(state.key()):
            self.outcome = Outcome.draw(Termination.REPETITION)

    def _result(self, outcome: Outcome) -> GameResult:
        setup, opening = self.setup, self.setup.opening
        headers = {
            "Game": self.game.name,
            "Start": opening.start or "startpos",
            "Event": setup.event,
            "Date": dt.date.today().isoformat(),
            "P1": setup.names[0],
            "P2": setup.names[1],
            "TimeControl": describe_seats(self.seat_limits),
            "Result": outcome.result,
            "Reason": outcome.reason,
            "Final": self.state.to_string(),
        }
        if opening.label:
            headers["Opening"] = opening.label
        record = Record(headers=headers, moves=self.moves, comments=self.comments)
        return GameResult(
            outcome=outcome,
            record=record,
            plies=self.plies,
            wall=self.clock() - self.started,
            engine_time=self.engine_time,
            failed=tuple(sorted(set(self.failed))),
            search_time=self.search_time,
            detail=self.detail,
        )


def no_start(game: games.Game, setup: GameSetup, seat: int, exc: ForfeitError) -> GameResult:
    """The result of a game a player could not start: it loses with the reason."""
    outcome = Outcome.loss(seat, exc.reason)
    record = Record(
        headers={
            "Game": game.name,
            "Start": setup.opening.start or "startpos",
            "Event": setup.event,
            "P1": setup.names[0],
            "P2": setup.names[1],
            "TimeControl": describe_seats(setup.seat_limits),
            "Result": outcome.result,
            "Reason": outcome.reason,
        },
        moves=[],
        comments=[f"p{seat + 1} {setup.names[seat]} did not start: {exc.detail}"],
    )
    return GameResult(outcome, record, 0, 0.0, 0.0, (seat,), detail=exc.detail)

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
from enginesrv.event.play.controls import Adjudication, MoveLimits, TimeControl, describe_seats
from enginesrv.event.play.openings import Opening, opening_state
from enginesrv.event.play.players import Clocks, ForfeitError, GoRequest, Player, Reply
from enginesrv.event.play.records import Record, RecordMove

# -- time controls and adjudication ------------------------------------------------------------


# -- openings ----------------------------------------------------------------------------------


# -- one game ----------------------------------------------------------------------------------


@dataclass
class GameResult:
    """How a game ended and its record.

    Attributes:
        winner: ``p1``, ``p2`` or ``draw``.
        reason: the game's outcome reason or the arbiter's (module docstring).
        record: the game record (design §6).
        plies: the plies the engines played (the opening's not counted).
        wall: seconds from the first ``new_game`` to the end.
        engine_time: seconds the players spent on their moves (``go`` to answer).
        search_time: seconds of search the players reported (the part of ``engine_time``
            spent searching; the rest is transport and process latency).
        failed: the seats of players that crashed, stalled or disconnected (to be restarted).
        detail: what the forfeited player did, in words (``""`` when nobody forfeited).
    """

    winner: str
    reason: str
    record: Record
    plies: int
    wall: float
    engine_time: float
    failed: tuple[int, ...] = ()
    search_time: float = 0.0
    detail: str = ""


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

    def score(self, seat: int, reply: Reply, ply: int) -> str | None:
        """Note a reported score; ``resign`` or ``draw`` when a rule is met."""
        score = reply.score
        resign, draw = self.rules.resign, self.rules.draw
        if resign is not None:
            losing = score is not None and (
                score.kind == "loss" or (score.kind == "cp" and score.value <= -resign.score)
            )
            self.low[seat] = self.low[seat] + 1 if losing else 0
            if self.low[seat] >= resign.movecount:
                return "resign"
        if draw is not None:
            level = score is not None and score.kind == "cp" and abs(score.value) <= draw.score
            self.quiet = self.quiet + 1 if level and ply >= draw.movenumber else 0
            if self.quiet >= 2 * draw.movecount:
                return "draw"
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
    started = clock()
    opening = setup.opening
    state = opening_state(game, opening)
    start_text = opening.start or game.start_position
    tokens: list[str] = list(opening.moves)
    moves = [RecordMove(t, (("book", "1"),), i + 1) for i, t in enumerate(opening.moves)]
    comments: list[str] = []
    winner = reason = forfeit_detail = ""
    failed: list[int] = []
    engine_time = search_time = 0.0
    rules = setup.adjudication
    seat_limits = setup.seat_limits
    margin = rules.timemargin_ms
    controls = (seat_limits[0].clock, seat_limits[1].clock)
    remaining = [0.0 if tc is None else float(tc.base_ms) for tc in controls]
    both_clocks = controls[0] is not None and controls[1] is not None
    decisions = [0, 0]
    judge = _Adjudicator(rules)
    judge.position(state.key())
    plies = 0

    def forfeit(seat: int, why: str, detail: str) -> None:
        nonlocal winner, reason, forfeit_detail
        winner, reason, forfeit_detail = ("p2" if seat == 0 else "p1"), why, detail
        comments.append(f"p{seat + 1} {setup.names[seat]}: {detail}")

    for seat in (0, 1):
        try:
            await players[seat].new_game(setup.key, setup.seeds[seat], setup.secret_seeds[seat])
        except ForfeitError as exc:
            failed.append(seat)
            forfeit(seat, exc.reason, exc.detail)
            break

    while not winner and not state.is_terminal():
        if plies >= rules.max_plies:
            winner, reason = "draw", "max-plies"
            break
        seat = state.to_move()
        view = state.view(seat)
        limits, tc = seat_limits[seat], controls[seat]
        if tc is not None:
            togo = tc.moves - decisions[seat] % tc.moves if tc.moves else None
            times = [None if c is None else round(remaining[i]) for i, c in enumerate(controls)]
            incs = [None if c is None else c.inc_ms for c in controls]
            clocks = Clocks(
                p1time=times[0], p2time=times[1], p1inc=incs[0], p2inc=incs[1],
                movestogo=togo, depth=limits.depth, nodes=limits.nodes,
            )  # fmt: skip
            allowed: float | None = remaining[seat] + margin
        else:
            clocks = Clocks(movetime=limits.st_ms, depth=limits.depth, nodes=limits.nodes)
            allowed = None if limits.st_ms is None else float(limits.st_ms + margin)
        hidden = game.hidden_information
        request = GoRequest(
            seat=seat,
            position=view.to_string(),
            start=None if hidden else start_text,
            moves=() if hidden else tuple(tokens),
            clocks=clocks,
            forfeit_at=None if allowed is None else clock() + max(0.0, allowed) / 1000,
            turn=state.turn_position(),
        )
        try:
            reply = await players[seat].go(request)
        except ForfeitError as exc:
            failed.append(seat)  # whatever it was doing, it is restarted before its next game
            forfeit(seat, exc.reason, exc.detail)
            break
        engine_time += reply.elapsed
        search_time += (reply.search_ms or 0) / 1000
        used_ms = reply.elapsed * 1000
        given = None
        if tc is not None:
            given = remaining[seat]
        elif limits.st_ms is not None:
            given = float(limits.st_ms)
        if allowed is not None and used_ms > allowed:
            left = remaining[seat] if tc is not None else float(limits.st_ms or 0)
            forfeit(seat, "time-forfeit", f"{used_ms:.0f} ms used of {left:.0f} ms")
            break
        if tc is not None:
            remaining[seat] += tc.inc_ms - used_ms
            decisions[seat] += 1
            if tc.moves and decisions[seat] % tc.moves == 0:
                remaining[seat] += tc.base_ms
        token = reply.token
        try:
            if token is None:
                raise games.IllegalMoveError("none", "the player had no move")
            move = state.parse_move(token)  # the mover's own: never a shown form
        except games.GameError as exc:
            forfeit(seat, "illegal-move", f"played {exc.text!r}: {exc.reason}")
            break
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
        if hidden:
            shown = state.public_move_str(move, 1 - seat)
            if shown != token:
                notes.append(("shown", shown))
        if tc is not None:
            notes.append(("clock", str(round(remaining[seat]))))
        moves.append(RecordMove(token, tuple(notes), len(moves) + 1))
        tokens.append(token)
        public = state.public_move_str(move, None) if on_move is not None else ""
        state.push(move)
        plies += 1
        if on_move is not None:
            on_move(public, state, (remaining[0], remaining[1]) if both_clocks else None)
        verdict = judge.score(seat, reply, plies)
        if verdict == "resign":
            winner, reason = ("p2" if seat == 0 else "p1"), "resign"
            comments.append(f"p{seat + 1} {setup.names[seat]} resigned by score adjudication")
        elif verdict == "draw":
            winner, reason = "draw", "score-adjudication"
        elif not state.is_terminal() and judge.position(state.key()):
            winner, reason = "draw", "repetition"

    if not winner:
        outcome = state.outcome()
        assert outcome is not None
        winner, reason = outcome.winner, outcome.reason
    headers = {
        "Game": game.name,
        "Start": opening.start or "startpos",
        "Event": setup.event,
        "Date": dt.date.today().isoformat(),
        "P1": setup.names[0],
        "P2": setup.names[1],
        "TimeControl": describe_seats(seat_limits),
        "Result": winner,
        "Reason": reason,
        "Final": state.to_string(),
    }
    if opening.label:
        headers["Opening"] = opening.label
    record = Record(headers=headers, moves=moves, comments=comments)
    return GameResult(
        winner, reason, record, plies, clock() - started, engine_time,
        tuple(sorted(set(failed))), search_time, forfeit_detail,
    )  # fmt: skip


def no_start(game: games.Game, setup: GameSetup, seat: int, exc: ForfeitError) -> GameResult:
    """The result of a game a player could not start: it loses with the reason."""
    winner = "p2" if seat == 0 else "p1"
    record = Record(
        headers={
            "Game": game.name,
            "Start": setup.opening.start or "startpos",
            "Event": setup.event,
            "P1": setup.names[0],
            "P2": setup.names[1],
            "TimeControl": describe_seats(setup.seat_limits),
            "Result": winner,
            "Reason": exc.reason,
        },
        moves=[],
        comments=[f"p{seat + 1} {setup.names[seat]} did not start: {exc.detail}"],
    )
    return GameResult(winner, exc.reason, record, 0, 0.0, 0.0, (seat,), detail=exc.detail)

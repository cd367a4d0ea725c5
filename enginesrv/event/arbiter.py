"""The arbiter of one game between two players (``enginesrv.event.players``).

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
moves adds the base time again after every N decisions of that player.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

import games
from enginesrv.event.players import Clocks, ForfeitError, GoRequest, Player, Reply
from enginesrv.event.records import Record, RecordMove

DEFAULT_MAX_PLIES = 1000
"""Games longer than this are adjudicated a draw (``max-plies``); the rules of Yohoho and Yin
Yang let a game go on for ever."""


# -- time controls and adjudication ------------------------------------------------------------

_TC_RE = re.compile(r"(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``[MOVES/]SECONDS[+INCREMENT]``: a clock of ``base_ms``, plus ``inc_ms`` per move, plus
    ``base_ms`` again every ``moves`` moves when given."""

    base_ms: int
    inc_ms: int = 0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``40/60+0.6``, ``60+0.6`` or ``60`` (seconds).

        Raises:
            ValueError: another form, or a clock of no time; the message names the text.
        """
        m = _TC_RE.fullmatch(text.strip())
        if m is None:
            raise ValueError(
                f"time control {text!r}: write [MOVES/]SECONDS[+INCREMENT], e.g. 40/60+0.6, "
                "2+0.05 or 60"
            )
        moves = int(m.group(1)) if m.group(1) else None
        base = round(float(m.group(2)) * 1000)
        inc = round(float(m.group(3)) * 1000) if m.group(3) else 0
        if base <= 0 or moves == 0:
            raise ValueError(f"time control {text!r}: the clock must hold some time")
        return cls(base, inc, moves)

    def __str__(self) -> str:
        text = f"{self.base_ms / 1000:g}"
        if self.moves:
            text = f"{self.moves}/{text}"
        if self.inc_ms:
            text += f"+{self.inc_ms / 1000:g}"
        return text


@dataclass(frozen=True, slots=True)
class MoveLimits:
    """What bounds each decision: a clock, a time per move, a depth, a node count."""

    tc: TimeControl | None = None
    st_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def describe(self) -> str:
        """The record's ``TimeControl`` text."""
        parts = []
        if self.tc is not None:
            parts.append(f"tc={self.tc}")
        if self.st_ms is not None:
            parts.append(f"st={self.st_ms / 1000:g}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        return " ".join(parts) or "none"


def _key_values(text: str, what: str, keys: Sequence[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or key not in keys:
            raise ValueError(f"{what} {text!r}: {part!r} is not one of {', '.join(keys)}=N")
        try:
            values[key] = int(value)
        except ValueError:
            raise ValueError(f"{what} {text!r}: {value!r} is not a whole number") from None
        if values[key] < 0:
            raise ValueError(f"{what} {text!r}: {key} must not be negative")
    missing = [k for k in keys if k not in values]
    if missing:
        raise ValueError(f"{what} {text!r}: missing {', '.join(missing)}")
    return values


@dataclass(frozen=True, slots=True)
class ResignRule:
    """Resign for a player whose score is at most ``-score`` for ``movecount`` own moves."""

    movecount: int
    score: int

    @classmethod
    def parse(cls, text: str) -> ResignRule:
        """Parse ``movecount=N,score=CP``."""
        v = _key_values(text, "resign rule", ("movecount", "score"))
        return cls(max(1, v["movecount"]), v["score"])


@dataclass(frozen=True, slots=True)
class DrawRule:
    """A draw once, from ply ``movenumber`` on, both players' scores have stayed within
    ``score`` of zero for ``movecount`` moves in a row."""

    movenumber: int
    movecount: int
    score: int

    @classmethod
    def parse(cls, text: str) -> DrawRule:
        """Parse ``movenumber=N,movecount=N,score=CP``."""
        v = _key_values(text, "draw rule", ("movenumber", "movecount", "score"))
        return cls(v["movenumber"], max(1, v["movecount"]), v["score"])


@dataclass(frozen=True, slots=True)
class Adjudication:
    """How the arbiter ends games the rules do not end (module docstring)."""

    max_plies: int = DEFAULT_MAX_PLIES
    repetitions: int = 0
    """A draw when one position has been seen this many times (0: never)."""
    resign: ResignRule | None = None
    draw: DrawRule | None = None
    timemargin_ms: int = 0
    """How far past its clock a player may answer before it forfeits."""


# -- openings ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opening:
    """A start position (None: the game's) and moves played from it before the engines."""

    start: str | None = None
    moves: tuple[str, ...] = ()
    label: str = ""


class OpeningsError(ValueError):
    """A bad openings file; the message names the file, the line and the reason."""


def read_openings(path: Path, game: games.Game) -> list[Opening]:
    """The openings of a file (design §6): ``moves TOKEN ...`` from the start, or
    ``fen POSITION``; ``#`` starts a comment. Each is replayed to check it.

    Raises:
        OpeningsError: unreadable file, a bad line, or no opening at all.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningsError(f"{path}: cannot read the openings: {exc}") from None
    openings: list[Opening] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        rest = rest.strip()
        if kind == "moves":
            opening = Opening(None, tuple(rest.split()), line)
        elif kind == "fen" and rest:
            opening = Opening(rest, (), line)
        else:
            raise OpeningsError(
                f"{path}:{number}: write 'moves TOKEN TOKEN ...' or 'fen POSITION', not {line!r}"
            )
        try:
            state = opening_state(game, opening)
        except games.GameError as exc:
            raise OpeningsError(f"{path}:{number}: {exc}") from None
        if state.is_terminal():
            raise OpeningsError(f"{path}:{number}: the game is already over after this opening")
        openings.append(opening)
    if not openings:
        raise OpeningsError(f"{path}: no opening in the file")
    return openings


def opening_state(game: games.Game, opening: Opening) -> games.State:
    """The position an opening leads to.

    Raises:
        games.GameError: a bad position string or move.
    """
    return games.replay(game, opening.start or None, opening.moves)


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
    """

    winner: str
    reason: str
    record: Record
    plies: int
    wall: float
    engine_time: float
    failed: tuple[int, ...] = ()
    search_time: float = 0.0


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


@dataclass(frozen=True, slots=True)
class GameSetup:
    """Everything about one game but the players themselves."""

    key: str
    names: tuple[str, str]
    limits: MoveLimits
    adjudication: Adjudication
    opening: Opening = Opening()
    seeds: tuple[int, int] = (0, 0)
    secret_seeds: tuple[int, int] = (0, 0)
    event: str = "enginesrv match"


async def play_game(
    game: games.Game,
    players: tuple[Player, Player],
    setup: GameSetup,
    *,
    clock: Callable[[], float] = trio.current_time,
) -> GameResult:
    """Play one game, ``players[0]`` as p1. Never raises for a player's misbehaviour: it ends
    the game with a forfeit (module docstring); a failed player is listed in ``failed``."""
    started = clock()
    opening = setup.opening
    state = opening_state(game, opening)
    start_text = opening.start or game.start_position
    tokens: list[str] = list(opening.moves)
    moves = [RecordMove(t, (("book", "1"),), i + 1) for i, t in enumerate(opening.moves)]
    comments: list[str] = []
    winner = reason = ""
    failed: list[int] = []
    engine_time = search_time = 0.0
    limits, rules = setup.limits, setup.adjudication
    margin = rules.timemargin_ms
    tc = limits.tc
    remaining = [float(tc.base_ms), float(tc.base_ms)] if tc is not None else [0.0, 0.0]
    decisions = [0, 0]
    judge = _Adjudicator(rules)
    judge.position(state.key())
    plies = 0

    def forfeit(seat: int, why: str, detail: str) -> None:
        nonlocal winner, reason
        winner, reason = ("p2" if seat == 0 else "p1"), why
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
        if tc is not None:
            inc = tc.inc_ms
            togo = tc.moves - decisions[seat] % tc.moves if tc.moves else None
            clocks = Clocks(
                p1time=round(remaining[0]), p2time=round(remaining[1]), p1inc=inc, p2inc=inc,
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
            forfeit(seat, "time-forfeit", f"answered after {used_ms:.0f} ms with {left:.0f} ms")
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
        state.push(move)
        plies += 1
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
        "TimeControl": limits.describe(),
        "Result": winner,
        "Reason": reason,
        "Final": state.to_string(),
    }
    if opening.label:
        headers["Opening"] = opening.label
    record = Record(headers=headers, moves=moves, comments=comments)
    return GameResult(
        winner, reason, record, plies, clock() - started, engine_time,
        tuple(sorted(set(failed))), search_time,
    )  # fmt: skip

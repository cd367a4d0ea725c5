"""In-process matches between bots: ``enginesrv match``.

A match plays a number of games between two players, alternating colours, as a fair arbiter:
every move a bot returns is checked with the rules (a bad one forfeits the game), each player is
shown only its own view of the position (Yin Yang), long games are adjudicated at a ply cap, and
every game is written as a record (design §6) that ``enginesrv replay`` reads back.

Players are written ``bot:NAME[:OPTION=VALUE,...]``, e.g. ``bot:alphabeta:Hash=64,Depth=5``.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import games
from bots.engine import Engine, Limits, OptionError, SearchResult
from bots.registry import BotError, create_bot
from enginesrv.records import Record, RecordMove, format_record

DEFAULT_MAX_PLIES = 1000
"""Games longer than this are adjudicated a draw (``max-plies``); the rules of Yohoho and Yin
Yang let a game go on for ever."""


class PlayerSpecError(ValueError):
    """A player spec that cannot be used; the message names the spec and the reason."""


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A parsed ``bot:NAME[:OPT=V,...]``."""

    text: str
    bot: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """The display name: the bot and any options."""
        opts = ",".join(f"{k}={v}" for k, v in self.options)
        return f"{self.bot}:{opts}" if opts else self.bot


def parse_player(text: str) -> PlayerSpec:
    """Parse a player spec.

    Raises:
        PlayerSpecError: not of the form ``bot:NAME[:OPTION=VALUE,...]``.
    """
    kind, _, rest = text.partition(":")
    if kind != "bot" or not rest:
        raise PlayerSpecError(
            f"player {text!r}: write bot:NAME[:OPTION=VALUE,...] (e.g. bot:alphabeta:Hash=64)"
        )
    name, _, opts = rest.partition(":")
    options: list[tuple[str, str]] = []
    if opts:
        for pair in opts.split(","):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise PlayerSpecError(f"player {text!r}: option {pair!r} is not NAME=VALUE")
            options.append((key.strip(), value.strip()))
    return PlayerSpec(text, name, tuple(options))


def build_engine(spec: PlayerSpec, game: games.Game) -> Engine:
    """A configured engine for ``spec`` that plays ``game``.

    Raises:
        PlayerSpecError: unknown bot, a bot that does not play the game, or a bad option.
    """
    try:
        engine = create_bot(spec.bot)
    except BotError as exc:
        raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    if not engine.supports(game.name):
        raise PlayerSpecError(f"player {spec.text!r}: {spec.bot} does not play {game.name}")
    for key, value in spec.options:
        try:
            engine.set_option(key, value)
        except OptionError as exc:
            raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    return engine


@dataclass(frozen=True, slots=True)
class MatchLimits:
    """Per-move limits of a match: seconds per move, a depth or a node count."""

    seconds: float | None = None
    depth: int | None = None
    nodes: int | None = None

    def limits(self) -> Limits:
        """The search limits of one move."""
        return Limits(
            depth=self.depth, nodes=self.nodes, target=self.seconds, deadline=self.seconds
        )

    def describe(self) -> str:
        """The record's ``TimeControl`` text."""
        parts = []
        if self.seconds is not None:
            parts.append(f"st={self.seconds:g}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        return " ".join(parts) or "none"


@dataclass
class GameResult:
    """One finished game: who played which seat, the result and the record."""

    number: int
    players: tuple[int, int]  # index of the player (0 or 1 of the match) in seat p1, p2
    winner: str  # "p1", "p2" or "draw"
    reason: str
    record: Record
    plies: int
    final: str

    def points(self, player: int) -> float:
        """The points the match player ``player`` scored in this game."""
        if self.winner == "draw":
            return 0.5
        seat = 0 if self.winner == "p1" else 1
        return 1.0 if self.players[seat] == player else 0.0


@dataclass
class MatchScore:
    """The running score of a match, from the first player's side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    results: list[GameResult] = field(default_factory=list)

    def add(self, result: GameResult) -> None:
        """Count a finished game."""
        self.results.append(result)
        points = result.points(0)
        if points == 1.0:
            self.wins += 1
        elif points == 0.5:
            self.draws += 1
        else:
            self.losses += 1

    @property
    def points(self) -> float:
        """The first player's points."""
        return self.wins + self.draws / 2

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses


def play_game(
    game: games.Game,
    engines: tuple[Engine, Engine],
    labels: tuple[str, str],
    limits: MatchLimits,
    *,
    number: int = 1,
    players: tuple[int, int] = (0, 1),
    start: str | None = None,
    max_plies: int = DEFAULT_MAX_PLIES,
    event: str = "enginesrv match",
    clock: Callable[[], float] = time.monotonic,
) -> GameResult:
    """Play one game; ``engines[0]`` has seat p1. Never raises for a bot's misbehaviour: an
    illegal move or a bot error ends the game with a forfeit."""
    state = game.state_from_string(start) if start is not None else game.new_state()
    for engine in engines:
        engine.new_game(game)
    moves: list[RecordMove] = []
    comments: list[str] = []
    winner: str | None = None
    reason = ""
    while not state.is_terminal():
        if state.ply() >= max_plies:
            winner, reason = "draw", "max-plies"
            break
        seat = state.to_move()
        other = "p2" if seat == 0 else "p1"
        started = clock()
        try:
            result = engines[seat].search(state.view(seat), limits.limits())
        except Exception as exc:  # a bot's fault, of any kind, forfeits its game, nothing more
            winner, reason = other, "crash"
            comments.append(f"p{seat + 1} failed: {type(exc).__name__}: {exc}")
            break
        elapsed_ms = round((clock() - started) * 1000)
        try:
            if result.token is None:
                raise games.IllegalMoveError("none", "the bot returned no move")
            move = state.parse_move(result.token)
        except games.GameError as exc:
            winner, reason = other, "illegal-move"
            comments.append(f"p{seat + 1} played {exc.text!r}: {exc.reason}")
            break
        moves.append(RecordMove(result.token, _annotations(result, elapsed_ms), len(moves) + 1))
        state.push(move)
    outcome = state.outcome()
    if winner is None:
        assert outcome is not None
        winner, reason = outcome.winner, outcome.reason
    record = Record(
        headers={
            "Game": game.name,
            "Start": start or "startpos",
            "Event": event,
            "Date": dt.date.today().isoformat(),
            "P1": labels[players[0]],
            "P2": labels[players[1]],
            "TimeControl": limits.describe(),
            "Result": winner,
            "Reason": reason,
            "Final": state.to_string(),
        },
        moves=moves,
        comments=comments,
    )
    return GameResult(number, players, winner, reason, record, state.ply(), state.to_string())


def _annotations(result: SearchResult, elapsed_ms: int) -> tuple[tuple[str, str], ...]:
    out = [("ms", str(elapsed_ms))]
    if result.score is not None:
        out.append(("score", f"{result.score.kind}:{result.score.value}"))
    if result.depth:
        out.append(("depth", str(result.depth)))
    if result.nodes:
        out.append(("nodes", str(result.nodes)))
    return tuple(out)


def seed_engine(engine: Engine, seed: int) -> None:
    """Give a bot with a ``Seed`` option its seed for one game (others are left alone)."""
    if any(option.name == "Seed" for option in engine.options):
        engine.set_option("Seed", str(seed))


def run_match(
    game: games.Game,
    specs: tuple[PlayerSpec, PlayerSpec],
    limits: MatchLimits,
    *,
    games_count: int,
    seed: int,
    out_dir: Path | None,
    report: Callable[[GameResult, MatchScore], None],
    max_plies: int = DEFAULT_MAX_PLIES,
) -> MatchScore:
    """Play ``games_count`` games, alternating colours (the first player has p1 in odd-numbered
    games), reporting each, and writing records under ``out_dir``.

    Raises:
        PlayerSpecError: a player cannot be built.
        OSError: a record cannot be written.
    """
    engines = (build_engine(specs[0], game), build_engine(specs[1], game))
    labels = (specs[0].label, specs[1].label)
    if labels[0] == labels[1]:
        labels = (labels[0] + "#1", labels[1] + "#2")
    rng = random.Random(seed)
    score = MatchScore()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for number in range(1, games_count + 1):
        players = (0, 1) if number % 2 == 1 else (1, 0)
        for engine in engines:
            seed_engine(engine, rng.randrange(2**31))
        seated = (engines[players[0]], engines[players[1]])
        result = play_game(
            game, seated, labels, limits, number=number, players=players, max_plies=max_plies
        )
        score.add(result)
        if out_dir is not None:
            path = out_dir / f"{game.name.replace('+', '-')}-{number:03d}.txt"
            path.write_text(format_record(result.record), encoding="utf-8")
        report(result, score)
    return score

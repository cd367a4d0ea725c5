"""A tuning run's configuration (``TuneConfig``): the player tuned, its parameters, the gain
schedule and the rounding, stored beside the games' ``EventConfig`` (key ``tune`` of the
results store's meta table) so that ``--resume`` and ``tune-report`` read it back.

The games are an event of two players, the tuned player twice: ``NAME+`` plays with
``theta + c_k * flip`` and ``NAME-`` with ``theta - c_k * flip`` (``event_config``); every
other setting of the games (clock, openings, adjudication, containment, concurrency) is an
event's, checked as an event's is.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bots.engine import OptionError
from enginesrv.event.config import MAX_SCHEDULE, EventConfig, EventError, shown
from enginesrv.event.play.bot_player import check_bot
from enginesrv.event.play.players import PlayerSpecError, parse_player, renamed
from enginesrv.tune.spsa import (
    ALPHA,
    GAMMA,
    MAX_PARAMS,
    ROUNDINGS,
    Param,
    ParamError,
    Rounding,
    Schedule,
    engine_value,
)

MAX_GAMES = MAX_SCHEDULE
"""The most games of one run: one results store holds at most as many as an event's."""
SEEDS = frozenset({"seed", "secretseed"})
"""Options no run tunes: the arbiter gives each game its own (``Seed`` from the event's seed,
``SecretSeed`` from the system's randomness, so that no one who knows the run's seed can
compute a bot's secrets in a game of hidden information); a value a run chose would replace
them, and the seeds stored for audit would not be the ones played with."""
TUNE_KEY = "tune"
"""The meta key of a run's ``TuneConfig`` in its results store."""


@dataclass(frozen=True)
class TuneConfig:
    """What a tuning run tunes and how (module docstring)."""

    player: str
    """The tuned player's spec, as given (``bot:alphabeta``, ``cmd:./engine``)."""
    params: tuple[Param, ...]
    schedule: Schedule
    rounding: Rounding = "deterministic"

    @property
    def games(self) -> int:
        """The run's games: two per iteration."""
        return 2 * self.schedule.iterations

    @property
    def names(self) -> tuple[str, str]:
        """The display names of the ``+`` and ``-`` sides."""
        base = parse_player(self.player).name
        return f"{base}+", f"{base}-"

    @classmethod
    def of(
        cls,
        player: str,
        params: tuple[Param, ...],
        games: int,
        *,
        rounding: str = "deterministic",
        a_offset: float | None = None,
        alpha: float | None = None,
        gamma: float | None = None,
        r_end: float | None = None,
    ) -> TuneConfig:
        """A checked configuration of ``games`` games (an even number).

        Raises:
            EventError: a player that does not parse, no parameter or too many, a name given
                twice, an odd or out-of-range number of games, a schedule value out of range.
        """
        try:
            parse_player(player)
        except PlayerSpecError as exc:
            raise EventError(str(exc)) from None
        if not params:
            raise EventError("give at least one --param NAME=START:MIN:MAX[:STEP]")
        if len(params) > MAX_PARAMS:
            raise EventError(f"at most {MAX_PARAMS} parameters, not {len(params)}")
        seen: set[str] = set()
        for param in params:
            if param.name.lower() in SEEDS:
                raise EventError(
                    f"parameter {param.name!r} is a seed, which the arbiter draws for each game "
                    "(a secret one from the system's randomness): it has no best value"
                )
            if param.name.lower() in seen:
                raise EventError(f"parameter {param.name!r} is given twice")
            seen.add(param.name.lower())
        if isinstance(games, bool) or not isinstance(games, int) or not 2 <= games <= MAX_GAMES:
            raise EventError(f"games: {shown(games)} is not a whole number from 2 to {MAX_GAMES:,}")
        if games % 2:
            raise EventError(f"games: {games} is odd; each iteration plays a game pair")
        if rounding not in ROUNDINGS:
            raise EventError(f"rounding: {shown(rounding)} is not one of {', '.join(ROUNDINGS)}")
        try:
            schedule = Schedule.of(
                games // 2,
                a_offset=a_offset,
                alpha=ALPHA if alpha is None else alpha,
                gamma=GAMMA if gamma is None else gamma,
                r_end=r_end,
            )
        except ParamError as exc:
            raise EventError(str(exc)) from None
        return cls(player, params, schedule, rounding)

    @property
    def players(self) -> tuple[str, str]:
        """The specs of the ``+`` and ``-`` sides: the tuned player under each's name."""
        plus, minus = self.names
        return renamed(self.player, plus), renamed(self.player, minus)

    def event_config(self, base: EventConfig) -> EventConfig:
        """The event of the run's games: ``base``'s settings, the two sides as its players,
        and as many games as the run has."""
        return dataclasses.replace(base, players=self.players, games=self.games, rounds=1)

    def to_json(self) -> str:
        """The configuration as stored (``from_json`` reads it back)."""
        data = {
            "player": self.player,
            "params": [dataclasses.asdict(p) for p in self.params],
            "schedule": dataclasses.asdict(self.schedule),
            "rounding": self.rounding,
        }
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TuneConfig:
        """A stored configuration, checked as a new one is.

        Raises:
            EventError: not the JSON ``to_json`` writes, or a value out of range.
        """
        try:
            data = json.loads(text)
            player = data["player"]
            if not isinstance(player, str):
                raise ValueError(f"player is {shown(player)}, not a player spec")
            params = tuple(_stored_param(item) for item in data["params"])
            schedule = data["schedule"]
            config = cls.of(
                player,
                params,
                2 * _whole(schedule["iterations"]),
                rounding=data["rounding"],
                a_offset=_number(schedule["a_offset"]),
                alpha=_number(schedule["alpha"]),
                gamma=_number(schedule["gamma"]),
                r_end=_number(schedule["r_end"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise EventError(f"the stored tuning configuration is damaged: {exc}") from None
        except RecursionError:
            raise EventError(
                "the stored tuning configuration is damaged: it nests lists or objects too deep"
            ) from None
        return config


def check_params(tune: TuneConfig, game: str) -> None:
    """Check that a built-in or plug-in bot has each parameter as an option of the game
    ``game`` that takes both its bounds, and a value with a fraction where the parameter has
    them (an external engine's options are its own: a value it refuses forfeits the game,
    with the reason).

    Raises:
        EventError: the option that is missing or refuses a bound or a fraction, named.
    """
    spec = parse_player(tune.player)
    if spec.kind != "bot":
        return
    engine = check_bot(spec, game)
    for param in tune.params:
        try:
            option = engine.option(param.name)
        except OptionError as exc:
            raise EventError(f"player {spec.text!r}: {exc} (a --param)") from None
        if option.games is not None and game not in option.games:
            raise EventError(
                f"player {spec.text!r}: option {option.name} bears on {', '.join(option.games)}"
                f", not {game}: tuning it here would change nothing"
            )
    tries: tuple[tuple[str, Callable[[Param], float]], ...] = (
        ("a bound of a --param", lambda p: p.low),
        ("a bound of a --param", lambda p: p.high),
        # a bot's spin option refuses 4.5 once the run has begun: every game would be lost
        (
            "a --param written with a decimal point takes fractions",
            lambda p: p.low if p.integer else min(math.floor(p.low) + 0.5, p.high),
        ),
    )
    for what, value in tries:
        values = tuple((p.name, engine_value(p, value(p))) for p in tune.params)
        try:
            check_bot(dataclasses.replace(spec, options=(*spec.options, *values)), game)
        except PlayerSpecError as exc:
            raise EventError(f"{exc} ({what})") from None


def _stored_param(item: Any) -> Param:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise ValueError(f"a parameter is {shown(item)}")
    return Param.of(
        item["name"],
        _number(item["start"]),
        _number(item["low"]),
        _number(item["high"]),
        _number(item["c_end"]),
        integer=bool(item["integer"]),
    )


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{shown(value)} is not a number")
    return float(value)


def _whole(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{shown(value)} is not a whole number")
    return value

"""An event's configuration checked and parsed once (``PreparedEvent``), and the plan of each
of its games (``PreparedEvent.plan``).

``EventConfig`` is the event as it is stored and sent to a cluster's workers: strings and
numbers, as a flag or a TOML file gave them. ``prepare`` checks it (or loads it, resuming)
and parses it, once, into the typed values that the tournament loop and every runner use: the
game, the named player specs, the limits of a move, the adjudication rules, the deadlines and
the SPRT; nothing downstream parses a setting again (python-chess's ``Limit`` is the model).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import games
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import GameSetup
from enginesrv.event.play.bot_player import check_bot
from enginesrv.event.play.contain import check_containment
from enginesrv.event.play.controls import Adjudication, MoveLimits
from enginesrv.event.play.openings import Opening, read_openings
from enginesrv.event.play.plan import GamePlan
from enginesrv.event.play.players import Deadlines, GameOptions, PlayerSpec, PlayerSpecError
from enginesrv.event.results import stats
from enginesrv.event.results.store import stored_event
from enginesrv.event.results.wording import quoted
from enginesrv.event.schedule import ScheduledGame, game_seeds, named_specs


@dataclass(frozen=True)
class PreparedEvent:
    """An event ready to run: its stored configuration and what it says, parsed."""

    config: EventConfig
    """The event as stored (``--resume`` reads it back) and as a cluster's workers get it."""
    game: games.Game
    specs: tuple[PlayerSpec, ...]
    """The players, each named by its display name (``schedule.named_specs``)."""
    limits: MoveLimits
    adjudication: Adjudication
    deadlines: Deadlines
    sprt: stats.SprtParams | None
    trial_options: GameOptions = ()
    """Options each external engine is given, in a game of its own, when it is checked before
    the first game (``preflight``): a tuning run's start values, so that an engine that
    refuses a parameter stops the run at once instead of forfeiting every game."""

    @classmethod
    def of(cls, config: EventConfig, *, check_bots: bool = True) -> PreparedEvent:
        """Check ``config`` (``EventConfig.check``) and parse it; with ``check_bots``, each
        ``bot:`` player is checked to be a bot of this program that plays the game (a
        cluster's worker does not: there, a bot it lacks is that player's problem alone).

        Raises:
            EventError: a setting of the wrong type or out of range, settings that do not fit
                together, an unknown game, or a player that does not parse or is not a bot of
                this program that plays the game.
        """
        if config.game not in games.available():
            known = ", ".join(games.available())
            raise EventError(f"unknown game {quoted(config.game)}; known: {known}")
        if len(config.players) < 2:
            raise EventError("an event needs at least two players")
        config.check()  # every setting's type and range, whichever door it came by
        try:
            specs = tuple(named_specs(config.players))
            for spec in specs:
                if check_bots and spec.kind == "bot":
                    check_bot(spec, config.game)
        except PlayerSpecError as exc:
            raise EventError(str(exc)) from None
        return cls(
            config=config,
            game=games.load(config.game),
            specs=specs,
            limits=config.move_limits(),
            adjudication=config.adjudication(),
            deadlines=config.deadlines(),
            sprt=config.sprt_params(),
        )

    @property
    def names(self) -> list[str]:
        """The players' display names, in the event's order."""
        return [spec.name for spec in self.specs]

    @property
    def all_bots(self) -> bool:
        """Whether every player is a built-in or plug-in bot (no external engine)."""
        return all(spec.kind == "bot" for spec in self.specs)

    def openings(self) -> list[Opening]:
        """The event's openings (its file's, read and checked now), or the start alone.

        Raises:
            EventError: the openings file cannot be read, or a line of it is bad.
        """
        if not self.config.openings:
            return [Opening()]
        try:
            return read_openings(Path(self.config.openings), self.game)
        except ValueError as exc:
            raise EventError(str(exc)) from None

    def plan(self, item: ScheduledGame, openings: Sequence[Opening]) -> GamePlan:
        """The plan of the scheduled game ``item``, from ``openings`` (the event's)."""
        seats = item.seats
        own = (self.specs[seats[0]].tc, self.specs[seats[1]].tc)
        setup = GameSetup(
            key=f"g{item.id}",
            names=(self.specs[seats[0]].name, self.specs[seats[1]].name),
            limits=self.limits,
            adjudication=self.adjudication,
            opening=openings[item.opening],
            seeds=game_seeds(self.config, item.id),
            event=self.config.event,
            own=own,
        )
        return GamePlan(game_id=item.id, round=item.round, seats=seats, setup=setup)


def prepare(config: EventConfig, out_dir: Path | None, *, resume: bool) -> PreparedEvent:
    """Check the configuration (or load it, resuming) before anything runs, and parse it.

    Raises:
        EventError: a bad configuration, or a results directory that does not fit.
    """
    if resume:
        config = _resumed(config, out_dir)
    elif out_dir is not None and (out_dir / "results.sqlite").exists():
        raise EventError(
            f"{out_dir} already holds an event: add --resume to finish it, or choose another --out"
        )
    if config.game not in games.available():
        known = ", ".join(games.available())
        raise EventError(f"unknown game {quoted(config.game)}; known: {known}")
    check_containment(config)
    if not config.event:
        config = dataclasses.replace(config, event=f"{config.game} {dt.date.today().isoformat()}")
    event = PreparedEvent.of(config)
    if config.openings and not resume:
        # stored as an absolute path, so that --resume works from any directory
        config = dataclasses.replace(config, openings=str(Path(config.openings).resolve()))
        event = dataclasses.replace(event, config=config)
    return event


def _resumed(config: EventConfig, out_dir: Path | None) -> EventConfig:
    """The stored event of ``out_dir``, which the command line ``config`` must match (or be
    empty: ``--resume --out DIR``, perhaps with ``--debug``)."""
    if out_dir is None:
        raise EventError("--resume needs --out DIR, the directory of the event")
    stored, _ = stored_event(out_dir, "nothing to resume")
    if config.players and config.schedule_key() != stored.schedule_key():
        differ = [k for k, v in config.schedule_key().items() if stored.schedule_key()[k] != v]
        raise EventError(
            f"--resume: the command line differs from the stored event in {', '.join(differ)}"
            "; give only --resume --out DIR, or the same arguments"
        )
    if not config.players and config.debug:
        stored = dataclasses.replace(stored, debug=True)  # --resume --out DIR --debug
    resumed = stored if not config.players else config
    if not resumed.event:
        resumed = dataclasses.replace(resumed, event=stored.event)
    return resumed

"""The arguments of ``enginesrv tune`` and ``enginesrv tune-report``, and the configuration of a
tuning run from them: a TOML file (``--config``) and the flags, the flags winning.

A tuning run's file holds the event settings of its games (``tc``, ``openings``,
``concurrency``... as a match's file does, but no ``players``, ``rounds``, ``repeat``,
``sprt``, ``gauntlet`` nor ``rating-interval``) and its own: ``player``, ``games`` (in all),
``params`` (a list of ``NAME=START:MIN:MAX[:STEP]`` strings, or a table of tables with
``start``, ``min``, ``max`` and optionally ``step``), ``rounding``, ``a-offset``, ``alpha``,
``gamma`` and ``r-end``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import games
from enginesrv.cli.common import Subcommands
from enginesrv.cli.event_args import add_game_flags
from enginesrv.cli.event_config import event_config
from enginesrv.cli.event_toml import toml_settings
from enginesrv.event.config import EventConfig, EventError, shown
from enginesrv.event.play.openings import printable
from enginesrv.event.results.wording import MAX_QUOTED, cut
from enginesrv.tune.config import MAX_GAMES, TuneConfig
from enginesrv.tune.spsa import ALPHA, GAMMA, ROUNDINGS, Param, ParamError

TUNE_KEYS = frozenset({"player", "params", "rounding", "a_offset", "alpha", "gamma", "r_end"})
"""The settings of a tuning run's file that are its own (``games`` is an event's too)."""
NOT_TUNE = frozenset({"players", "rounds", "repeat", "sprt", "gauntlet", "rating_interval"})
"""The settings of an event's file that a tuning run's does not take."""
_SCHEDULE_FLAGS = (("a_offset", "--a-offset"), ("alpha", "--alpha"), ("gamma", "--gamma"))


def add_tune(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv tune``."""
    p = sub.add_parser(
        "tune",
        help="tune a player's parameters by SPSA",
        description="Find the best values of a player's numeric options by simultaneous "
        "perturbation stochastic approximation (SPSA, as fishtest runs it): each iteration "
        "plays a game pair, the player with theta + c_k*flip against itself with theta - "
        "c_k*flip from one opening, colours swapped, and moves theta by the result. The games "
        "are played by the arbiter as a match's are (clocks, forfeits, openings, concurrency, "
        "--out and --resume, --cluster). docs/tuning.md explains the schedule and its settings.",
    )
    p.add_argument("game", metavar="GAME", nargs="?", help="game: " + ", ".join(games.available()))
    p.add_argument(
        "player",
        metavar="PLAYER",
        nargs="?",
        help="the player to tune, written as a match's player (bot:alphabeta, cmd:./engine); "
        "each parameter is one of its options",
    )
    p.add_argument(
        "--param",
        metavar="NAME=START:MIN:MAX[:STEP]",
        action="append",
        dest="params",
        help="a parameter: an option of the player, its start, its bounds and STEP, the "
        "perturbation c at the last iteration (default: the range / 20); an integer unless a "
        "value has a decimal point. Repeat for each parameter",
    )
    p.add_argument(
        "--games",
        metavar="N",
        type=_typed(int, "a whole number"),
        help=f"games in all, two per iteration (an even number, at most {MAX_GAMES:,})",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="a TOML file of settings (game, player, games, params, and the flags)",
    )
    _add_schedule_flags(p)
    add_game_flags(p, tune=True)
    return p


def _add_schedule_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--r-end",
        metavar="R",
        type=_typed(float, "a number"),
        help="the learning rate at the last iteration: the last step is R * STEP * result "
        "(default 30 / iterations)",
    )
    p.add_argument(
        "--a-offset",
        metavar="A",
        type=_typed(float, "a number"),
        help="the offset A of the gain a_k = a / (A + k)^alpha (default: a tenth of the "
        "iterations)",
    )
    p.add_argument(
        "--alpha",
        metavar="X",
        type=_typed(float, "a number"),
        help=f"the decay of the gain a_k (default {ALPHA})",
    )
    p.add_argument(
        "--gamma",
        metavar="X",
        type=_typed(float, "a number"),
        help=f"the decay of the perturbation c_k ({GAMMA})",
    )
    p.add_argument(
        "--rounding",
        choices=ROUNDINGS,
        help="how an integer parameter's value is rounded for the engine: to the nearest "
        "(default), or up with the probability of its fraction (randomized)",
    )


def _typed(convert: Callable[[str], object], what: str) -> Callable[[str], object]:
    """The argument type of a number flag: ``convert`` of the text, or a refusal that quotes
    it and says what it should be (argparse's own names the function)."""

    def parse(text: str) -> object:
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None

    parse.__name__ = what
    return parse


def add_tune_report(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv tune-report``."""
    p = sub.add_parser(
        "tune-report",
        help="print what a tuning run found",
        description="Print the final values of the tuning run stored in DIR (the mean of the "
        "last tenth of its steps, with their spread), the lines to paste into a player spec "
        "or a TOML file, and write the trajectory of every parameter as an SVG picture. A run "
        "still going may be read too.",
    )
    p.add_argument("dir", metavar="DIR", help="the --out directory of the run")
    p.add_argument(
        "--svg",
        metavar="FILE",
        help="where to write the picture (default DIR/trajectory.svg; - for stdout)",
    )
    p.add_argument(
        "--table",
        action="store_true",
        help="also print theta after each step, one line per step",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (values: each parameter's final value; trajectory) and "
        "write no picture",
    )
    return p


def tune_configs(
    args: argparse.Namespace, fail: type[Exception]
) -> tuple[TuneConfig | None, EventConfig]:
    """The run's configuration from ``--config`` and the flags (the flags win), and the event
    of its games; with ``--resume`` and no player, None and a stand-in of the event (the
    stored run replaces both).

    Raises:
        fail: a setting that cannot be used, in one line naming it.
    """
    settings: dict[str, Any] = {}
    if args.config:
        settings = toml_settings(args.config, fail, extra=TUNE_KEYS, refused=NOT_TUNE)
    where = f"--config {printable(args.config)}: " if args.config else ""
    own = {key: settings.pop(key) for key in TUNE_KEYS if key in settings}
    player = args.player or own.get("player")
    game_count = args.games if args.games is not None else settings.get("games")
    args.players = []
    if player is None:
        if not args.resume:
            raise fail("give the GAME and the PLAYER to tune (or game and player in --config)")
        if args.params or args.games is not None:
            raise fail("--resume continues the stored run: give only --resume --out DIR")
        return None, event_config(args, fail, True, settings)
    if not isinstance(player, str):
        raise fail(f"{where}player: a player spec string, not {shown(player)}")
    try:
        params = _params(args.params, own.get("params"), where)
        tune = TuneConfig.of(
            player,
            params,
            _games(game_count),
            rounding=args.rounding or own.get("rounding", "deterministic"),
            a_offset=_flag_or(args, own, "a_offset"),
            alpha=_flag_or(args, own, "alpha"),
            gamma=_flag_or(args, own, "gamma"),
            r_end=_flag_or(args, own, "r_end"),
        )
    except (EventError, ParamError) as exc:
        raise fail(str(exc)) from None
    args.players = list(tune.players)
    args.games = tune.games
    settings.pop("games", None)
    return tune, event_config(args, fail, True, settings)


def _games(value: object) -> int:
    if value is None:
        raise EventError("give --games N, the games in all (or games in --config)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventError(f"games: {shown(value)} is not a whole number")
    return value


def _flag_or(args: argparse.Namespace, own: dict[str, Any], key: str) -> float | None:
    """A schedule setting from its flag, else from the file (checked as a number)."""
    value = getattr(args, key)
    if value is None:
        value = own.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise EventError(f"{key.replace('_', '-')}: {shown(value)} is not a number")
    return None if value is None else float(value)


def _params(flags: list[str] | None, from_file: object, where: str) -> tuple[Param, ...]:
    """The parameters of the flags, else of the file's ``params``."""
    if flags:
        return tuple(Param.parse(text) for text in flags)
    if from_file is None:
        return ()
    if isinstance(from_file, list):
        if not all(isinstance(item, str) for item in from_file):
            raise EventError(f"{where}params: a list of NAME=START:MIN:MAX[:STEP] strings")
        return tuple(Param.parse(text) for text in from_file)
    if isinstance(from_file, dict):
        return tuple(_table_param(name, table, where) for name, table in from_file.items())
    raise EventError(
        f"{where}params: a list of strings or a table of tables, not {shown(from_file)}"
    )


def _table_param(name: str, table: object, where: str) -> Param:
    """``[params.NAME]`` with ``start``, ``min``, ``max`` and optionally ``step``."""
    keys = {"start", "min", "max", "step"}
    where = f"{where}params.{cut(name, MAX_QUOTED)}"  # a key of the file may be long
    if not isinstance(table, dict) or not {"start", "min", "max"} <= set(table) <= keys:
        raise EventError(f"{where}: a table of start, min, max and optionally step")
    values = [table[k] for k in ("start", "min", "max")]
    step = table.get("step")
    for value in [*values, step]:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise EventError(f"{where}: {shown(value)} is not a number")
    integer = all(isinstance(v, int) for v in values)
    return Param.of(name, values[0], values[1], values[2], step, integer=integer)

"""The configuration of ``enginesrv match`` and ``enginesrv tournament`` as the command line
gives it: a TOML event file (``--config``, read by ``event_toml``) and the flags, the flags
winning, merged into one ``EventConfig`` and checked by ``EventConfig.check`` before anything
is built or started.

The flags' argument types (``setting_type``) apply the same checks as the file's values, so
the two doors accept the same settings; a setting refused is named as it was given, by its
key in the file or by its flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from enginesrv.cli.event_toml import SETTINGS, checked_out, toml_settings
from enginesrv.event.config import EventConfig, EventError, SettingError, check_setting
from enginesrv.event.play.openings import OPENINGS_CAP, check_regular_file, printable


def setting_type(key: str, convert: Callable[[str], object]) -> Callable[[str], object]:
    """The argument type of the flag of the setting ``key``: ``convert`` (``int``, ``float``)
    of the text, then the same check as a TOML file's value (``check_setting``)."""

    def parse(text: str) -> object:
        try:
            value: object = convert(text)
        except ValueError:
            value = text  # the message quotes it as given
        try:
            check_setting(key, value)
        except SettingError as exc:
            raise argparse.ArgumentTypeError(exc.reason) from None
        return value

    parse.__name__ = key.replace("_", " ")  # argparse may name the type
    return parse


def event_config(
    args: argparse.Namespace,
    fail: type[Exception],
    tournament: bool,
    settings: dict[str, Any] | None = None,
) -> EventConfig:
    """The event's configuration from ``--config`` (``settings``: its settings, read
    already) and the flags (the flags win), every value checked (``EventConfig.check``)
    before anything is built; with ``--resume`` and no players, a stand-in that ``prepare``
    replaces with the stored event."""
    if settings is None:
        settings = toml_settings(args.config, fail) if args.config else {}
    spelled = {key: key for key in settings}  # the settings from the file, until a flag wins
    if args.game:
        settings["game"] = args.game
        spelled.pop("game", None)
    if args.players:
        settings["players"] = tuple(args.players)
        spelled.pop("players", None)
    for name in SETTINGS:
        value = getattr(args, name, None)
        if value is not None:
            settings[name] = value
            spelled.pop(name, None)
    if args.out:
        settings["out"] = checked_out("--out", args.out, fail)
    args.out = settings.pop("out", None)
    if args.resume and "players" not in settings:
        if set(settings) - {"game", "debug"}:
            raise fail(
                "--resume continues the stored event with its stored settings: give only "
                "--resume --out DIR, and --debug to trace this run (or the very same arguments "
                "as the first run)"
            )
        debug = settings.get("debug", False)
        _check(lambda: check_setting("debug", debug), args, spelled, fail)
        game = settings.get("game", "")
        _check(lambda: check_setting("game", game) if game else None, args, spelled, fail)
        return EventConfig(game=game, players=(), debug=debug)
    if "game" not in settings:
        raise fail("give the GAME (or game in --config)")
    players = settings.get("players", ())
    if not tournament and isinstance(players, tuple) and len(players) != 2:
        raise fail(f"a match has two players, got {len(players)}")
    if all(settings.get(k) is None for k in ("tc", "st", "depth", "nodes")):
        settings["st"] = 1.0
    config = EventConfig(**settings)
    _check(config.check, args, spelled, fail)
    if config.openings:
        try:
            check_regular_file(Path(config.openings), OPENINGS_CAP)
        except ValueError as exc:
            where = f"--config {printable(args.config)}: " if "openings" in spelled else "--"
            raise fail(f"{where}openings: {printable(config.openings)}: {exc}") from None
    return config


def _check(
    check: Callable[[], None],
    args: argparse.Namespace,
    spelled: dict[str, str],
    fail: type[Exception],
) -> None:
    """Run ``check``; a setting it refuses is named as it was given: the key of the TOML
    file, or the flag."""
    try:
        check()
    except SettingError as exc:
        if exc.together:
            from_file = {exc.key, *exc.together} & set(spelled)
            where = f"--config {printable(args.config)}: " if from_file else ""
            raise fail(f"{where}{exc.reason}") from None
        if exc.key in spelled:
            where = f"--config {printable(args.config)}: {spelled[exc.key]}"
            raise fail(f"{where}: {exc.reason}") from None
        if exc.key == "players":
            raise fail(exc.reason) from None
        raise fail(f"--{exc.key.replace('_', '-')}: {exc.reason}") from None
    except EventError as exc:
        raise fail(str(exc)) from None

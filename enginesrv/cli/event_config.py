"""The configuration of ``enginesrv match`` and ``enginesrv tournament`` as the command line
gives it: a TOML event file (``--config``) and the flags, the flags winning, merged into one
``EventConfig`` and checked by ``EventConfig.check`` before anything is built or started.

A TOML file is read only when it is a regular file of at most ``CONFIG_CAP`` bytes; every
error names the file and the key, on one line. The flags' argument types (``setting_type``)
apply the same checks as the file's values, so the two doors accept the same settings.
"""

from __future__ import annotations

import argparse
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from enginesrv.event.config import (
    MAX_PATH,
    EventConfig,
    EventError,
    SettingError,
    check_setting,
    shown,
)
from enginesrv.event.play.controls import TimeControl
from enginesrv.event.play.openings import (
    OPENINGS_CAP,
    check_regular_file,
    printable,
    read_regular_file,
)
from enginesrv.event.play.players import PlayerSpecError, parse_player

# flag -> (EventConfig field, type); the TOML keys are the same names, dashes or underscores
SETTINGS: dict[str, str] = {
    "tc": "tc", "st": "st", "depth": "depth", "nodes": "nodes", "games": "games",
    "rounds": "rounds", "repeat": "repeat", "openings": "openings",
    "openings_order": "openings_order", "concurrency": "concurrency", "seed": "seed",
    "sprt": "sprt", "gauntlet": "gauntlet", "max_plies": "max_plies",
    "repetitions": "repetitions", "resign": "resign", "draw": "draw",
    "timemargin": "timemargin", "event": "event", "startup_timeout": "startup_timeout",
    "ready_timeout": "ready_timeout", "move_timeout": "move_timeout", "isolate": "isolate",
    "isolate_network": "isolate_network", "no_contain": "no_contain",
    "debug": "debug", "log_cap": "log_cap",
    "rating_interval": "rating_interval",
}  # fmt: skip
CONFIG_CAP = 1 << 20
"""The largest ``--config`` file read, in bytes (1 MiB)."""
_PLAYER_KEYS = frozenset({"name", "spec", "options", "tc"})
"""The keys of a player's table in a TOML file."""
MAX_KEY_PARTS = 8
"""The most parts of a dotted key or table header of an event file (``a.b.c`` has 3): an
event file needs 2 at most (``[players.options]``), and the TOML parser takes time and memory
that grow with the square of a key's parts (a key of 30,000 parts: 19 s and 3.5 GB)."""
MAX_NUMBER = 30
"""The most characters of a number in an event file (``0x`` and ``_`` included): every
setting's largest value has 19 digits, and a longer number costs the parser time and memory
(or cannot even be printed in a message)."""
_STRINGS_AND_COMMENTS = re.compile(
    r'''"""(?:[^"\\]|\\.|"(?!""))*+"""(?:""|")?'''  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*+'''(?:''|')?"  # multi-line literal string
    r'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'  # basic string
    r"|'[^'\n]*+'"  # literal string
    r"|#[^\n]*+",  # comment
    re.DOTALL,
)
"""What the scan of an event file (``_refuse_costly_toml``) leaves out: TOML's strings, as
the parser reads them, and its comments."""
_PART = r"(?:[A-Za-z0-9_-]++|\0)"
_LONG_KEY = re.compile(
    rf"(?<![A-Za-z0-9_\0-]){_PART}(?:[ \t]*+\.[ \t]*+{_PART}){{{MAX_KEY_PARTS}}}"
)
"""A dotted key of more than ``MAX_KEY_PARTS`` parts (bare words, or strings that the scan
wrote as a NUL): no number or date has more than one dot."""
_LONG_NUMBER = re.compile(rf"(?<![A-Za-z0-9_-])[+-]?[0-9][0-9A-Za-z_]{{{MAX_NUMBER}}}")
"""A number of more than ``MAX_NUMBER`` characters (a bare key that begins with a digit is
taken for one)."""


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


def toml_settings(path: str, fail: type[Exception]) -> dict[str, Any]:
    """The settings of the TOML file ``path``, by field (``max-plies`` is ``max_plies``).
    Each value is checked later, with the command line's, by
    ``EventConfig.check``; here only what a setting must be to be built at all: the file a
    regular one of at most ``CONFIG_CAP`` bytes of UTF-8 TOML, every key known, the players
    spec strings or tables of a spec, a name, options and a control.

    Raises:
        fail: one line naming the file, and the key where there is one.
    """
    where = f"--config {printable(path)}"
    try:
        text = read_regular_file(Path(path), CONFIG_CAP).decode("utf-8")
        _refuse_costly_toml(where, text, fail)
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"{where}: not TOML: {printable(exc)}") from None
    except ValueError as exc:  # not such a file, or not UTF-8
        raise fail(f"{where}: {printable(exc)}") from None
    except RecursionError:
        raise fail(f"{where}: not TOML: its arrays or tables are nested too deep") from None
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name in spelled:
            raise fail(f"{where}: {shown(key)} is given twice (as {shown(spelled[name])})")
        spelled[name] = key
        if name == "players":
            out["players"] = _toml_players(where, value, fail)
        elif name == "tc":
            out[name] = _toml_tc(where, "tc", value, fail)
        elif name == "out":
            out[name] = _checked_out(f"{where}: {key}", value, fail)
        elif name == "game" or name in SETTINGS:
            out[name] = value
        else:
            raise fail(f"{where}: unknown setting {shown(key)}")
    return out


def _refuse_costly_toml(where: str, text: str, fail: type[Exception]) -> None:
    """Refuse, before it is parsed, TOML that no event file needs and that would cost the
    parser more than the file's size: a dotted key or table header of more than
    ``MAX_KEY_PARTS`` parts, a number of more than ``MAX_NUMBER`` characters. Strings and
    comments are left out of the scan as the parser reads them, so dots and digits in a
    string (``openings = "a.b.c.txt"``) count for nothing.

    Raises:
        fail: one line naming the file, the line and the reason.
    """

    def blank(found: re.Match[str]) -> str:
        return "\0" + "\n" * found.group().count("\n")  # the lines keep their numbers

    bare = _STRINGS_AND_COMMENTS.sub(blank, text)
    for pattern, reason in (
        (_LONG_KEY, f"a key of more than {MAX_KEY_PARTS} parts"),
        (_LONG_NUMBER, f"a number of more than {MAX_NUMBER} characters"),
    ):
        found = pattern.search(bare)
        if found is not None:
            line = bare.count("\n", 0, found.start()) + 1
            raise fail(f"{where}: line {line}: {reason}")


def _toml_players(where: str, value: object, fail: type[Exception]) -> tuple[str, ...]:
    """The ``players`` of a TOML file as spec strings (a table's name, options and control
    become prefixes of its spec)."""
    if not isinstance(value, list):
        raise fail(f"{where}: players: a list of player specs, not {shown(value)}")
    players = []
    for item in value:
        if isinstance(item, str):
            players.append(item)
            continue
        if not isinstance(item, dict) or not isinstance(item.get("spec"), str):
            raise fail(
                f"{where}: players: a player is a spec string or a table with spec (and name, "
                f"options, tc), not {shown(item)}"
            )
        spec = item["spec"]
        unknown = sorted(set(item) - _PLAYER_KEYS)
        if unknown:
            raise fail(f"{where}: players: {shown(spec)} has no setting {shown(unknown[0])}")
        options = item.get("options", {})
        if not isinstance(options, dict):
            raise fail(f"{where}: players: options of {shown(spec)} must be a table")
        # the table becomes prefixes of the spec, which end at a ':' (and options at a
        # ','): a value holding one would be read as more of the spec
        for key, option in options.items():
            what = f"option {shown(key)} of {shown(spec)}"
            _toml_plain(where, what, key, ":,=", fail)
            _toml_plain(where, what, option, ":,", fail)
        name = item.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise fail(f"{where}: players: the name of {shown(spec)} is a string, not "
                           f"{shown(name)}")  # fmt: skip
            _toml_plain(where, f"the name of {shown(spec)}", name, ":", fail)
        tc = None
        if "tc" in item:
            tc = _toml_tc(where, f"tc of {shown(spec)}", item["tc"], fail)
            try:
                tc = str(TimeControl.parse(tc))  # its own form, which parse_player reads back
            except ValueError as exc:
                raise fail(f"{where}: players: tc of {shown(spec)}: {printable(exc)}") from None
        players.append(_toml_player_spec(where, spec, name=name, options=options, tc=tc, fail=fail))
    return tuple(players)


def _toml_player_spec(
    where: str, spec: str, *, name: str | None, options: dict[str, Any], tc: str | None,
    fail: type[Exception],
) -> str:  # fmt: skip
    """The spec string of a TOML player table: its ``spec`` after the prefixes ``name=``,
    ``options=`` and ``tc=`` of the table's other keys. The string is parsed back, and must
    give the very player of ``spec`` with that name, those options and that control, so
    that no value of the table is read as more of the spec (a ``tc`` that goes on with
    ``:cmd:...`` would make a command of the player)."""
    try:
        base = parse_player(spec)
    except PlayerSpecError as exc:
        raise fail(f"{where}: players: spec: {printable(exc)}") from None
    if tc is not None and base.tc is not None:
        raise fail(f"{where}: players: {shown(spec)} has a tc= of its own and a tc key")
    text = spec
    if options:
        pairs = ",".join(f"{k}={_toml_value(v)}" for k, v in options.items())
        text = f"options={pairs}:{text}"
    if tc is not None:
        text = f"tc={tc}:{text}"
    if name is not None:
        text = f"name={name}:{text}"
    try:
        read = parse_player(text)
    except PlayerSpecError as exc:  # a name or option the spec cannot hold
        raise fail(f"{where}: players: {exc}") from None
    wanted = replace(
        base,
        text=text,
        name=base.name if name is None else name,
        options=tuple(sorted((*base.options, *((k, _toml_value(v)) for k, v in options.items())))),
        tc=base.tc if tc is None else TimeControl.parse(tc),
    )
    if replace(read, options=tuple(sorted(read.options))) != wanted:
        given = {"name": name is not None, "options": bool(options), "tc": tc is not None}
        keys = [key for key, there in given.items() if there]
        raise fail(
            f"{where}: players: the {', '.join(keys)} of {shown(spec)} cannot be written "
            f"before its spec: {shown(text)} would be read as another player"
        )
    return text


def _checked_out(what: str, value: object, fail: type[Exception]) -> str:
    """The results directory ``out``: a path, not empty, with no NUL."""
    if not isinstance(value, str) or not value or "\0" in value or len(value) > MAX_PATH:
        raise fail(f"{what}: the path of a directory (up to {MAX_PATH} characters), not "
                   f"{shown(value)}")  # fmt: skip
    return value


def _toml_plain(where: str, what: str, value: object, banned: str, fail: type[Exception]) -> None:
    """Refuse a name or option of a TOML player table that is not a plain value (a string, a
    whole number, a finite number or a boolean) or holds one of the characters ``banned``,
    which a player spec cannot hold there."""
    plain = isinstance(value, str | int) or (isinstance(value, float) and math.isfinite(value))
    if not plain:
        raise fail(f"{where}: players: {what}: a string, a number or a boolean, not "
                   f"{shown(value)}")  # fmt: skip
    text = _toml_value(value)
    bad = [char for char in banned if char in text]
    if bad:
        raise fail(
            f"{where}: players: {what}: {shown(text)} cannot hold {bad[0]!r} in a player spec"
        )


def _toml_tc(where: str, what: str, value: object, fail: type[Exception]) -> str:
    """A ``tc`` from TOML: a string (``"1:00+1"``, ``"inf"``) or a number of seconds."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise fail(f'{where}: {what} is a time control such as "60+1", not {shown(value)}')


def _toml_value(value: object) -> str:
    """An option value from TOML as ``setoption`` text (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def event_config(args: argparse.Namespace, fail: type[Exception], tournament: bool) -> EventConfig:
    """The event's configuration from ``--config`` and the flags (the flags win), every value
    checked (``EventConfig.check``) before anything is built; with ``--resume`` and no
    players, a stand-in that ``prepare`` replaces with the stored event."""
    settings: dict[str, Any] = toml_settings(args.config, fail) if args.config else {}
    spelled = {key: key for key in settings}  # the settings from the file, until a flag wins
    if args.game:
        settings["game"] = args.game
        spelled.pop("game", None)
    if args.players:
        settings["players"] = tuple(args.players)
        spelled.pop("players", None)
    for flag, name in SETTINGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            settings[name] = value
            spelled.pop(name, None)
    if args.out:
        settings["out"] = _checked_out("--out", args.out, fail)
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
    check: Callable[[], None], args: argparse.Namespace, spelled: dict[str, str],
    fail: type[Exception],
) -> None:  # fmt: skip
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

"""The event file of ``enginesrv match`` and ``enginesrv tournament`` (``--config``): a TOML
file of the event's settings, read into the values ``event_config`` merges with the flags.

A TOML file is read only when it is a regular file of at most ``CONFIG_CAP`` bytes, and TOML
that would cost the parser more than its size is refused before it is parsed; every error
names the file and the key, on one line. A player's table becomes a player spec string, which
must read back as that very player.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from enginesrv.event.config import MAX_PATH, shown
from enginesrv.event.play.controls import TimeControl
from enginesrv.event.play.openings import printable, read_regular_file
from enginesrv.event.play.players import PlayerSpecError, parse_player

SETTINGS = (
    "tc",
    "st",
    "depth",
    "nodes",
    "games",
    "rounds",
    "repeat",
    "openings",
    "openings_order",
    "concurrency",
    "seed",
    "sprt",
    "gauntlet",
    "max_plies",
    "repetitions",
    "resign",
    "draw",
    "timemargin",
    "event",
    "startup_timeout",
    "ready_timeout",
    "move_timeout",
    "isolate",
    "isolate_network",
    "no_contain",
    "debug",
    "log_cap",
    "rating_interval",
)
"""The settings of an event that a flag and a ``--config`` key may both give, by their
``EventConfig`` field: the flag is the name with dashes (``--max-plies``), the key the name
with dashes or underscores."""
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


def toml_settings(
    path: str,
    fail: type[Exception],
    *,
    extra: frozenset[str] = frozenset(),
    refused: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The settings of the TOML file ``path``, by field (``max-plies`` is ``max_plies``).
    Each value is checked later, with the command line's, by
    ``EventConfig.check``; here only what a setting must be to be built at all: the file a
    regular one of at most ``CONFIG_CAP`` bytes of UTF-8 TOML, every key known, the players
    spec strings or tables of a spec, a name, options and a control. The keys ``extra`` (a
    command's own, such as ``tune``'s) are returned as the file has them, and the settings
    ``refused`` are not known (a command that has no such setting).

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
        if name == "players" and name not in refused:
            out["players"] = _toml_players(where, value, fail)
        elif name == "tc":
            out[name] = _toml_tc(where, "tc", value, fail)
        elif name == "out":
            out[name] = checked_out(f"{where}: {key}", value, fail)
        elif name in extra or ((name in SETTINGS or name == "game") and name not in refused):
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
                raise fail(
                    f"{where}: players: the name of {shown(spec)} is a string, not {shown(name)}"
                )
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
    where: str,
    spec: str,
    *,
    name: str | None,
    options: dict[str, Any],
    tc: str | None,
    fail: type[Exception],
) -> str:
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


def checked_out(what: str, value: object, fail: type[Exception]) -> str:
    """The results directory ``out``: a path, not empty, with no NUL."""
    if not isinstance(value, str) or not value or "\0" in value or len(value) > MAX_PATH:
        raise fail(
            f"{what}: the path of a directory (up to {MAX_PATH} characters), not {shown(value)}"
        )
    return value


def _toml_plain(where: str, what: str, value: object, banned: str, fail: type[Exception]) -> None:
    """Refuse a name or option of a TOML player table that is not a plain value (a string, a
    whole number, a finite number or a boolean) or holds one of the characters ``banned``,
    which a player spec cannot hold there."""
    plain = isinstance(value, str | int) or (isinstance(value, float) and math.isfinite(value))
    if not plain:
        raise fail(f"{where}: players: {what}: a string, a number or a boolean, not {shown(value)}")
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

"""Hostile event files and names: every value of a TOML event file (``--config``) is checked for
its type and range before anything is built or started, the files an event reads are regular
files under a size cap, and the names of events and players are refused where they could
break a record or a terminal. Each refusal is one line with exit status 2, never a traceback.

The hostile files are generated: every setting of an event file given each of a set of values
of the wrong type, out of range, at the edges of the range, or in range; each file is either
accepted, giving a configuration that passes ``EventConfig.check`` and whose schedule is
bounded, or refused in one line. No event is run: an accepted file is taken through the
configuration stage of the command line and ``prepare`` only.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import games
from enginesrv.cli import build_parser, main
from enginesrv.cli.common import CommandError
from enginesrv.cli.event_config import event_config
from enginesrv.event.config import MAX_SCHEDULE, EventConfig, EventError, schedule_size, shown
from enginesrv.event.play.openings import OpeningsError, read_openings
from enginesrv.event.play.players import name_problem, parse_player
from enginesrv.event.play.records import Record, format_record, parse_record
from enginesrv.event.play.trace import file_safe_name, trace_file_name
from enginesrv.event.prepared import prepare
from enginesrv.event.schedule import named_specs
from tests.enginesrv.test_tournament import cli

# -- writing TOML -----------------------------------------------------------------------------


class Raw(str):
    """A TOML value written as it is (a date, or text that is not TOML at all)."""


def toml_value(value: object) -> str:
    """``value`` as TOML text."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return toml_float(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's, but for DEL, which TOML wants escaped too
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = [f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()]
        return "{ " + ", ".join(pairs) + " }"
    raise TypeError(value)


def toml_float(value: float) -> str:
    """``value`` as TOML text, where the infinities and NaN have names of their own."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def toml_text(settings: dict[str, object]) -> str:
    return "".join(f"{json.dumps(key)} = {toml_value(value)}\n" for key, value in settings.items())


BASE: dict[str, object] = {"game": "yoxii", "players": ["bot:random", "bot:greedy"], "depth": 1}

VALUES: list[object] = [
    "x", "", "false", "1", [], [1], {}, {"spec": "bot:random"}, True, False, 0, 1, -1, 2, 3.0,
    0.5, 0.001, 5e-324, math.nan, math.inf, -math.inf, 1e300, 1000, 1001, 3000, 3001, 10_000,
    10_001, 86_400, 86_400.5, 100_000, 100_001,
    1_000_000, 1_000_001, 3_600_000, 3_600_001, 10**12, 10**12 + 1, 2**63 - 1, -(2**63),
    Raw("1979-05-27T07:32:00Z"), "\x00", "\x1b[2J", "a\nb", "\u202eevil", "\u00e9t\u00e9", " x",
    "x" * 101, "../..", "/dev/zero", "60+1", "inf", "1/", "elo0=0,elo1=5,alpha=0.05,beta=0.05",
    "movecount=3,score=600", "movenumber=40,movecount=8,score=10", "random", "yinsh",
]  # fmt: skip
"""The values every setting is tried with (58)."""

WHOLE: dict[str, tuple[int, int]] = {
    "games": (1, 10_000), "rounds": (1, 10_000), "concurrency": (1, 256),
    "max_plies": (1, 3000), "repetitions": (0, 1000), "timemargin": (0, 3_600_000),
    "seed": (0, 2**63 - 1), "depth": (1, 1000), "nodes": (1, 10**12), "log_cap": (1, 1024),
    "rating_interval": (0, 10_000),
}  # fmt: skip
"""The documented ranges (docs/tournaments.md, "Event files")."""
SECONDS = ("st", "startup_timeout", "ready_timeout", "move_timeout")
BOOLEANS = ("gauntlet", "repeat", "isolate", "isolate_network", "no_contain", "debug")
TEXTS = ("tc", "sprt", "resign", "draw", "openings_order", "event", "openings", "game", "out")
KEYS = (*WHOLE, *SECONDS, *BOOLEANS, *TEXTS, "players")


def in_own_range(key: str, value: object) -> bool:
    """Whether a whole-number, seconds or boolean setting's value is of its type and range, on
    its own."""
    if key in WHOLE:
        low, high = WHOLE[key]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if key in SECONDS:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and 0.001 <= value <= 86_400  # type: ignore[operator]
    return isinstance(value, bool)


def expected_verdict(key: str, value: object) -> bool | None:
    """Whether the file that gives ``key`` this value is accepted (None: not pinned here)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if key in WHOLE:
        low, high = WHOLE[key]
        if key == "rounds":  # two games a round (the default): 10,000 games at most
            high = 5_000
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if key in SECONDS:
        return number and 0.001 <= value <= 86_400  # type: ignore[operator]
    if key in BOOLEANS:  # (isolate_network without isolate is refused)
        return isinstance(value, bool) and not (key == "isolate_network" and value)
    if key == "openings_order":
        return value in ("sequential", "random")
    if key == "game":
        return value in games.available()
    if key == "event":
        return type(value) is str and (value == "" or name_problem(value) is None)
    if key in ("sprt", "resign", "draw", "tc", "out", "openings", "players"):
        return False if not isinstance(value, str | int | float | list) else None
    return None


# -- running the configuration stage ----------------------------------------------------------


PARSER = build_parser()


def config_stage(path: Path, command: str = "match") -> EventConfig:
    """What the command line makes of ``--config path`` before the event runs: the checked
    configuration, prepared (no directory, nothing started).

    Raises:
        CommandError, EventError: the refusal.
    """
    args = PARSER.parse_args([command, "--config", str(path)])
    config = event_config(args, CommandError, command == "tournament")
    event = prepare(config, None, resume=False)
    event.config.check()
    return event.config


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_refusal(
    capsys: pytest.CaptureFixture[str], path: Path, command: str = "match"
) -> str:
    """``enginesrv COMMAND --config path`` ends with one line on stderr and status 2."""
    code, out, err = run_main(capsys, command, "--config", str(path))
    assert (code, out) == (2, ""), (path.read_bytes()[:300], err)
    assert err.count("\n") == 1, err
    assert err.endswith("\n"), err
    assert err.startswith(f"enginesrv {command}: error: "), err
    assert "Traceback" not in err
    return err[:-1]


def assert_valid(config: EventConfig) -> None:
    config.check()
    size = schedule_size(len(config.players), config.gauntlet, config.games, config.rounds)
    assert size <= MAX_SCHEDULE
    assert name_problem(config.event) is None
    for text in config.players:
        assert name_problem(parse_player(text).name) is None


@pytest.mark.parametrize("key", KEYS)
def test_hostile_values_of_each_setting_are_accepted_valid_or_refused_in_one_line(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = accepted = 0
    for number, value in enumerate(VALUES):
        path = tmp_path / f"{key}-{number}.toml"
        settings = {**BASE, key: value}
        if key == "players" and isinstance(value, str):
            settings[key] = [value, "bot:greedy"]  # a spec that is a hostile string
        path.write_text(toml_text(settings), encoding="utf-8")
        try:
            config = config_stage(path)
        except (CommandError, EventError):
            line = assert_one_line_refusal(capsys, path)
            verdict = expected_verdict(key, value)
            assert verdict in (False, None), (key, value, line)
            refused += 1
            if key in (*WHOLE, *SECONDS, *BOOLEANS) and not in_own_range(key, value):
                assert line.startswith(f"enginesrv match: error: --config {path}: {key}: "), line
                parsed = tomllib.loads(path.read_text(encoding="utf-8"))[key]
                assert shown(parsed) in line
            continue
        assert expected_verdict(key, value) in (True, None), (key, value)
        assert_valid(config)
        accepted += 1
    assert refused + accepted == len(VALUES)
    assert refused
    assert accepted or key in ("players", "openings")


def test_at_least_127_hostile_files_are_tried() -> None:
    assert len(KEYS) * len(VALUES) >= 127 * 10


# -- files that are not settings of the right type --------------------------------------------


def _file(tmp_path: Path, text: str | bytes, name: str = "event.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


PLAYERS = 'game = "yoxii"\ndepth = 1\nplayers = ["bot:random", "bot:greedy"]\n'

MALFORMED: list[tuple[str, str | bytes, str]] = [
    ("not TOML", "game = \n", "not TOML: "),
    ("duplicate key", 'game = "yoxii"\ngame = "yoxii"\n', "not TOML: "),
    ("dash and underscore", PLAYERS + "max-plies = 3\nmax_plies = 4\n",
     "'max_plies' is given twice (as 'max-plies')"),
    ("nested arrays", "a = " + "[" * 50_000 + "]" * 50_000 + "\n", "not TOML: "),
    ("nested tables", "a = " + "{b = " * 50_000 + "1" + "}" * 50_000 + "\n", "not TOML: "),
    ("not UTF-8", b'game = "\xff\xfe"\n', "'utf-8' codec can't decode"),
    ("NUL byte", b'game = "yo\x00xii"\n', "not TOML: "),
    ("a table of settings", '[settings]\ngames = 2\n', "unknown setting 'settings'"),
    ("players not a list", 'game = "yoxii"\nplayers = "bot:random"\n',
     "players: a list of player specs, not 'bot:random'"),
    ("a player of a number", PLAYERS.replace('"bot:greedy"', "5"), "a player is a spec string"),
    ("a table without spec", PLAYERS.replace('"bot:greedy"', '{ name = "g" }'),
     "a player is a spec string"),
    ("spec not a string", PLAYERS.replace('"bot:greedy"', "{ spec = [1] }"),
     "a player is a spec string"),
    ("name a number", PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", name = 5 }'),
     "players: the name of 'bot:greedy' is a string, not 5"),
    ("name a table", PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", name = {} }'),
     "players: the name of 'bot:greedy' is a string, not {}"),
    ("options a list", PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", options = [1] }'),
     "options of 'bot:greedy' must be a table"),
    ("an option a list",
     PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", options = { Seed = [1] } }'),
     "option 'Seed' of 'bot:greedy': a string, a number or a boolean, not [1]"),
    ("an option NaN",
     PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", options = { Seed = nan } }'),
     "option 'Seed' of 'bot:greedy': a string, a number or a boolean, not nan"),
    ("an option a date", PLAYERS.replace(
        '"bot:greedy"', '{ spec = "bot:greedy", options = { Seed = 1979-05-27 } }'),
     "a string, a number or a boolean, not datetime.date(1979, 5, 27)"),
    ("an option out of range",
     PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", options = { Seed = -1 } }'),
     "greedy"),
    ("an option of 5000 digits",
     PLAYERS.replace('"bot:greedy"', '"bot:greedy:Seed=' + "9" * 5000 + '"'), "greedy"),
    ("an unknown key in a player", PLAYERS.replace(
        '"bot:greedy"', '{ spec = "bot:greedy", nmae = "g" }'),
     "players: 'bot:greedy' has no setting 'nmae'"),
    ("tc a list", PLAYERS + "tc = [60]\n", 'tc is a time control such as "60+1", not [60]'),
    ("tc a bool in a player", PLAYERS.replace('"bot:greedy"', '{ spec = "bot:greedy", tc = true }'),
     "is a time control such as"),
    ("tc of 10^300", PLAYERS + "tc = 1e300\n", "tc: time control '1e+300'"),
    ("st and tc", PLAYERS + 'st = 1\ntc = "60"\n', "--tc and --st exclude each other"),
    ("one player", 'game = "yoxii"\ndepth = 1\nplayers = ["bot:random"]\n',
     "a match has two players, got 1"),
    ("a schedule of 10^8 games", PLAYERS + "games = 10000\nrounds = 10000\n",
     "the event would have 100,000,000 games (pairings x games x rounds), more "
     "than 10,000"),
    ("repeat with odd games", PLAYERS + "repeat = true\ngames = 3\n",
     "--repeat plays each opening twice: games must be even, not 3"),
    ("sprt of NaN", PLAYERS + 'sprt = "elo0=nan,elo1=5,alpha=0.05,beta=0.05"\n', "finite"),
    ("sprt alpha 1", PLAYERS + 'sprt = "elo0=0,elo1=5,alpha=1,beta=0.05"\n', "alpha"),
    ("resign of 5000 digits", PLAYERS + f'resign = "movecount={"9" * 5000},score=1"\n',
     "is not a whole number"),
    ("openings a directory", PLAYERS + 'openings = "/"\n',
     "openings: /: a directory, not a regular file"),
    ("openings /dev/zero", PLAYERS + 'openings = "/dev/zero"\n',
     "openings: /dev/zero: a device, not a regular file"),
    ("openings missing", PLAYERS + 'openings = "/no/such/file"\n',
     "openings: /no/such/file: No such file or directory"),
    ("openings a NUL", PLAYERS + 'openings = "a\\u0000b"\n',
     "openings: the path of a file (up to 4096 characters), not 'a\\x00b'"),
    ("out a NUL", PLAYERS + 'out = "a\\u0000b"\n',
     "out: the path of a directory (up to 4096 characters), not 'a\\x00b'"),
    ("out a number", PLAYERS + "out = 5\n", "out: the path of a directory"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "text", "needle"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_event_file_is_refused_in_one_line_naming_it(
    what: str, text: str | bytes, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises((CommandError, EventError)):
        config_stage(path)
    line = assert_one_line_refusal(capsys, path)
    assert needle in line, (what, line)
    if what not in ("one player", "st and tc", "an option out of range",
                    "an option of 5000 digits", "sprt alpha 1", "sprt of NaN"):  # fmt: skip
        assert line.startswith(f"enginesrv match: error: --config {path}: "), line


COSTLY: list[tuple[str, str, str]] = [
    ("a key of 30,000 parts", PLAYERS + ".".join(["a"] * 30_000) + " = 1\n",
     "line 4: a key of more than 8 parts"),
    ("a table header of 30,000 parts", PLAYERS + "[" + ".".join(["a"] * 30_000) + "]\n",
     "line 4: a key of more than 8 parts"),
    ("an array of tables of 9 parts", PLAYERS + "[[" + ".".join("abcdefghi") + "]]\n",
     "line 4: a key of more than 8 parts"),
    ("quoted parts", PLAYERS + ".".join(['"a"', "'b'"] * 15_000) + " = 1\n",
     "line 4: a key of more than 8 parts"),
    ("parts apart", PLAYERS + "x = { " + " . ".join(["a"] * 9) + " = 1 }\n",
     "line 4: a key of more than 8 parts"),
    ("after a string of dots", 'event = """a\n"""\n' + ".".join(["1"] * 9) + " = 1\n",
     "line 3: a key of more than 8 parts"),
    ("a 1,000,000-digit integer", "x = " + "9" * 1_000_000 + "\n",
     "line 1: a number of more than 30 characters"),
    ("a negative one", PLAYERS + "seed = -" + "9" * 31 + "\n",
     "line 4: a number of more than 30 characters"),
    ("a 5000-digit hexadecimal", PLAYERS + "games = 0x" + "f" * 5000 + "\n",
     "line 4: a number of more than 30 characters"),
    ("digits apart", PLAYERS + "games = " + "1_" * 15 + "1\n",
     "line 4: a number of more than 30 characters"),
    ("a long fraction", PLAYERS + "st = 0." + "0" * 500_000 + "1\n",
     "line 4: a number of more than 30 characters"),
    ("a long exponent", PLAYERS + "st = 1e" + "0" * 30 + "\n",
     "line 4: a number of more than 30 characters"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "text", "reason"), COSTLY, ids=[c[0] for c in COSTLY])
def test_toml_that_would_cost_the_parser_dear_is_refused_before_it_is_parsed(
    what: str, text: str, reason: str, tmp_path: Path, *, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A dotted key of 30,000 parts took the TOML parser 19 s and 3.5 GB; a number of a
    million digits 155 MB: each is refused by a scan of the text, which never parses it."""

    def parsed(text: str) -> object:
        raise AssertionError(f"parsed: {what}")

    path = _file(tmp_path, text)
    monkeypatch.setattr(tomllib, "loads", parsed)
    started = time.monotonic()
    assert assert_one_line_refusal(capsys, path) == (
        f"enginesrv match: error: --config {path}: {reason}"
    )
    assert time.monotonic() - started < 2


def test_dots_and_digits_in_strings_and_comments_are_no_keys_nor_numbers(
    tmp_path: Path,
) -> None:
    openings = _file(tmp_path, "moves c5 4@d5\n", "a.b.c.d.e.f.g.h.i.txt")
    dots = ".".join("abcdefghij")
    options = ", ".join(f"O{i} = {i}.5" for i in range(12))
    nines = "9" * 40
    path = _file(tmp_path, f"""# a comment of dots: {dots} and digits: {"9" * 40}
game = "yoxii"
players = [
    {{ spec = "cmd:./engine.py --log {dots}", options = {{ {options} }} }},
    {{ spec = 'cmd:./engine.py', name = "v1.2.3.4.5.6.7.8.9.10", options = {{ K = "{nines}" }} }},
    "name={dots}:bot:random",
]
openings = "{openings}"
event = '''{dots}'''
st = 0.5
seed = 9_223_372_036_854_775_807
"players.options.a.b.c.d.e.f.g.h" = 1
""")  # fmt: skip
    with pytest.raises(CommandError) as caught:  # every key but the last one is known
        config_stage(path, "tournament")
    assert str(caught.value) == (
        f"--config {path}: unknown setting 'players.options.a.b.c.d.e.f.g.h'"
    )
    path.write_text(path.read_text().rsplit("\n", 2)[0] + "\n", encoding="utf-8")
    config = config_stage(path, "tournament")
    assert config.players == (
        f"options={options.replace(' = ', '=').replace(', ', ',')}:cmd:./engine.py --log {dots}",
        f"name=v1.2.3.4.5.6.7.8.9.10:options=K={nines}:cmd:./engine.py",
        f"name={dots}:bot:random",
    )
    assert (config.openings, config.event, config.st, config.seed) == (
        str(openings), dots, 0.5, 2**63 - 1,
    )  # fmt: skip


def test_a_player_tables_keys_cannot_be_read_as_more_of_its_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``tc`` that goes on with ``:cmd:...`` once made a command of a ``bot:`` player."""
    pwned = tmp_path / "pwned"
    tc = f"1:cmd:sh -c 'touch {pwned}; exec false'"
    out = toml_value(str(tmp_path / "ev"))
    path = _file(tmp_path, PLAYERS.replace('"bot:random"', toml_value(
        {"spec": "bot:random", "tc": tc})) + f"out = {out}\n")  # fmt: skip
    assert assert_one_line_refusal(capsys, path) == (
        f"enginesrv match: error: --config {path}: players: tc of 'bot:random': time control "
        f"{tc!r}: write [MOVES/]TIME[+INCREMENT], TIME in seconds, M:SS or H:MM:SS and "
        "INCREMENT in seconds (e.g. 40/60+0.6, 2+0.05, 1:30+1, 1:00:00), or inf"
    )
    assert not pwned.exists()
    assert not (tmp_path / "ev").exists()
    for table, line in [
        ({"spec": "bot:random", "options": {" Depth": 1}},
         "players: the options of 'bot:random' cannot be written before its spec: "
         "'options= Depth=1:bot:random' would be read as another player"),
        ({"spec": "name=a:bot:random", "name": "b"},
         "players: the name of 'name=a:bot:random' cannot be written before its spec: "
         "'name=b:name=a:bot:random' would be read as another player"),
        ({"spec": "tc=60:bot:random", "tc": 30},
         "players: 'tc=60:bot:random' has a tc= of its own and a tc key"),
        ({"spec": "tcp:host:99999", "tc": "inf"}, "players: spec: player 'tcp:host:99999': write "
         "tcp:HOST:PORT with a port 1-65535"),
    ]:  # fmt: skip
        path = _file(tmp_path, PLAYERS.replace('"bot:random"', toml_value(table)))
        assert assert_one_line_refusal(capsys, path) == (
            f"enginesrv match: error: --config {path}: {line}"
        )
    path = _file(tmp_path, PLAYERS.replace('"bot:random"', toml_value(
        {"spec": "bot:random", "tc": "1:30+1", "name": "r", "options": {"Seed": 3}})).replace(
        '"bot:greedy"', toml_value({"spec": "bot:greedy", "tc": 90.5})))  # fmt: skip
    assert config_stage(path).players == (
        "name=r:tc=90+1:options=Seed=3:bot:random",
        "tc=90.5:bot:greedy",
    )


def test_the_issues_files_are_refused_with_the_key_and_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text, line in [
        (PLAYERS + 'games = "x"\n',
         "games: 'x' is not a whole number of at least 1 and at most 10,000"),
        (PLAYERS + "games = 9223372036854775807\n",
         "games: 9223372036854775807 is not a whole number of at least 1 and at most 10,000"),
        (PLAYERS + 'debug = "false"\n', "debug: true or false, not 'false'"),
        (PLAYERS + "concurrency = 100000\n",
         "concurrency: 100000 is not a whole number of at least 1 and at most 256"),
        (PLAYERS + "move-timeout = inf\n",
         "move_timeout: inf is not a number of seconds of at least 0.001 and at most 86,400"),
        (PLAYERS.replace("depth = 1", "st = 5e-324"),
         "st: 5e-324 is not a number of seconds of at least 0.001 and at most 86,400"),
        (PLAYERS + "startup-timeout = 0.0009\n",
         "startup_timeout: 0.0009 is not a number of seconds of at least 0.001 and at most "
         "86,400"),
        (PLAYERS + "seed = -1\n", "seed: -1 is not a whole number of at least 0 and at most "
         "9,223,372,036,854,775,807"),
    ]:  # fmt: skip
        path = _file(tmp_path, text)
        assert assert_one_line_refusal(capsys, path) == (
            f"enginesrv match: error: --config {path}: {line}"
        )


def test_flags_take_the_same_ranges_as_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("match", "yoxii", "bot:random", "bot:greedy")
    for flag, value, line in [
        ("--games", "10001", "argument --games: 10001 is not a whole number of at least 1 "
         "and at most 10,000"),
        ("--concurrency", "257", "argument --concurrency: 257 is not a whole number of at least "
         "1 and at most 256"),
        ("--st", "nan", "argument --st: nan is not a number of seconds of at least 0.001 and "
         "at most 86,400"),
        ("--st", "0.0004", "argument --st: 0.0004 is not a number of seconds of at least 0.001 "
         "and at most 86,400"),
        ("--depth", "1.5", "argument --depth: '1.5' is not a whole number of at least 1 and at "
         "most 1,000"),
        ("--seed", "9" * 5000, "argument --seed: '" + "9" * 56 + "... is not a whole number of "
         "at least 0 and at most 9,223,372,036,854,775,807"),
    ]:  # fmt: skip
        code, out, err = run_main(capsys, *base, flag, value)
        assert (code, out) == (2, "")
        assert err == f"enginesrv match: error: {line} (see 'enginesrv match --help')\n"
    code, _, err = run_main(capsys, *base, "--games", "10000", "--rounds", "2")
    assert code == 2
    assert err == (
        "enginesrv match: error: the event would have 20,000 games (pairings x "
        "games x rounds), more than 10,000\n"
    )


def test_a_tournament_of_too_many_players_is_refused_before_its_schedule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    players = ", ".join(['"bot:random"'] * 1001)
    path = _file(tmp_path, f'game = "yoxii"\ndepth = 1\nplayers = [{players}]\n')
    line = assert_one_line_refusal(capsys, path, "tournament")
    assert line.endswith(f"--config {path}: players: 2 to 1000 players, not 1001")
    players = ", ".join(['"bot:random"'] * 1000)
    path = _file(tmp_path, f'game = "yoxii"\ndepth = 1\ngames = 4\nplayers = [{players}]\n')
    line = assert_one_line_refusal(capsys, path, "tournament")
    assert line.endswith(
        f"--config {path}: the event would have 1,998,000 games (pairings x games x rounds), "
        "more than 10,000"
    )


@contextlib.contextmanager
def fifo(tmp_path: Path, name: str) -> Iterator[Path]:
    path = tmp_path / name
    os.mkfifo(path)
    yield path


def test_the_event_file_must_be_a_regular_file_under_its_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = _file(tmp_path, PLAYERS + "#" * (1 << 20) + "\n", "big.toml")
    with fifo(tmp_path, "fifo.toml") as pipe:
        for path, reason in [
            (Path("/dev/zero"), "a device, not a regular file"),
            (tmp_path, "a directory, not a regular file"),
            (pipe, "a FIFO, not a regular file"),  # refused without waiting for a writer
            (big, f"{big.stat().st_size:,} bytes, more than the 1,048,576 a file may have here"),
            (tmp_path / "none.toml", "No such file or directory"),
        ]:
            started = time.monotonic()
            assert assert_one_line_refusal(capsys, path) == (
                f"enginesrv match: error: --config {path}: {reason}"
            )
            assert time.monotonic() - started < 5


def test_openings_are_read_from_a_regular_file_under_the_cap_only(tmp_path: Path) -> None:
    game = games.load("yoxii")
    big = _file(tmp_path, "moves c5 4@d5\n" * 80_000, "big.txt")
    binary = _file(tmp_path, b"moves \xff\n", "binary.txt")
    long_line = _file(tmp_path, "moves " + "x" * 100_000 + "\n", "long.txt")
    with fifo(tmp_path, "fifo.txt") as pipe:
        for path, message in [
            (Path("/dev/zero"), "/dev/zero: cannot read the openings: a device, not a regular "
             "file"),
            (pipe, f"{pipe}: cannot read the openings: a FIFO, not a regular file"),
            (tmp_path, f"{tmp_path}: cannot read the openings: a directory, not a regular file"),
            (big, f"{big}: cannot read the openings: 1,120,000 bytes, more than the 1,048,576 a "
             "file may have here"),
        ]:  # fmt: skip
            with pytest.raises(OpeningsError) as caught:
                read_openings(path, game)
            assert str(caught.value) == message
    with pytest.raises(OpeningsError) as caught:
        read_openings(binary, game)
    assert str(caught.value).startswith(f"{binary}: cannot read the openings: 'utf-8' codec")
    with pytest.raises(OpeningsError) as caught:
        read_openings(long_line, game)
    message = str(caught.value)
    assert message.startswith(f"{long_line}:1: ")
    assert len(message) < 300 + len(str(long_line))
    assert len(read_openings(_file(tmp_path, "moves c5 4@d5\n" * 20_000), game)) == 20_000


# -- names --------------------------------------------------------------------------------------

BAD_NAMES: list[tuple[str, str]] = [
    (" lead", "begins or ends with white space"),
    ("trail ", "begins or ends with white space"),
    ("\u00a0nbsp", "begins or ends with white space"),
    ("new\nline", "holds a control character (\\n)"),
    ("esc\x1b[31m", "holds a control character (\\x1b)"),
    ("csi\x9b31m", "holds a control character (\\x9b)"),
    ("bidi\u202eevil", "holds a control character (\\u202e)"),
    ("line\u2028sep", "holds a control character (\\u2028)"),
    ("x" * 101, "is longer than 100 characters (101)"),
    ("\u0301" * 100, "begins with a combining mark (\\u0301)"),
    ("\u0301admin", "begins with a combining mark (\\u0301)"),
    ("\u20ddx", "begins with a combining mark (\\u20dd)"),
    ("\u0903x", "begins with a combining mark (\\u0903)"),
    ("\u3164", "has no visible character"),
    ("\u115f\u1160", "has no visible character"),
    ("\uffa0\u0301", "has no visible character"),
    ("\u2800" * 100, "has no visible character"),
    ("\u3164 \u3000\u3164", "has no visible character"),
]
GOOD_NAMES = ["x]y", 'say "hi"', "..", "a/b", "../../etc", "x" * 100, "\u00e9t\u00e9 #1",
              "e\u0301t\u00e9", "\u3164x", "\u2800 \u28ff"]  # fmt: skip


@pytest.mark.parametrize(("name", "why"), BAD_NAMES)
def test_a_name_that_could_break_a_record_or_a_terminal_is_refused_before_any_game(
    name: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ev"
    base = ("match", "yoxii", "bot:random", "bot:greedy", "--depth", "1", "--out", str(out))
    code, _, err = run_main(capsys, *base, "--event", name)
    assert code == 2
    assert err == f"enginesrv match: error: --event: the name {shown(name)} {why}\n"
    spec = f"name={name}:bot:random"
    code, _, err = run_main(capsys, "match", "yoxii", spec, "bot:greedy", "--depth", "1",
                            "--out", str(out))  # fmt: skip
    assert code == 2
    if "\n" in name or "\x1b" in name:  # the spec's own check, before the name's
        assert err == (
            f"enginesrv match: error: player {spec!r}: the name contains a control character "
            f"({why.split('(')[1]}\n"
        )
    else:
        assert err == (
            f"enginesrv match: error: player {shown(spec)}: the name {shown(name)} {why}\n"
        )
    path = _file(tmp_path, PLAYERS.replace('"bot:greedy"', toml_value(
        {"spec": "bot:greedy", "name": name})) + f"out = {toml_value(str(out))}\n")  # fmt: skip
    line = assert_one_line_refusal(capsys, path)
    assert line.startswith(f"enginesrv match: error: --config {path}: players: player "), line
    assert line.endswith(why) or "control character" in line
    assert not out.exists()


def test_a_name_made_unique_keeps_within_the_cap() -> None:
    long = "x" * 100
    specs = [f"name={long}:bot:random"] * 11 + [f"name={'x' * 98}#2:bot:greedy"]
    names = [spec.name for spec in named_specs(specs)]
    assert names == [long, *(f"{'x' * (100 - len(f'#{n}'))}#{n}" for n in range(2, 12)),
                     f"{'x' * 97}#12"]  # fmt: skip
    assert len(set(names)) == len(names)
    assert all(name_problem(name) is None for name in names)


def test_a_long_default_name_is_refused_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "cmd:/bin/" + "e" * 120
    code, _, err = run_main(capsys, "match", "yoxii", spec, "bot:greedy", "--depth", "1")
    assert code == 2
    assert err == (
        f"enginesrv match: error: player {shown(spec)}: the name {shown('e' * 120)} is longer "
        "than 100 characters (120); give it another with name=NAME:\n"
    )


def test_names_a_record_can_hold_play_and_read_back(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    proc = cli("match", "yoxii", f"name={GOOD_NAMES[0]}:bot:random", f"name={GOOD_NAMES[1]}:"
               "bot:greedy", "--depth", "1", "--games", "2", "--max-plies", "6", "--event",
               "../../etc/passwd", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = sorted((out / "games").iterdir())
    assert [r.name for r in records] == ["game-00001.txt", "game-00002.txt"]
    headers = parse_record(records[0].read_text(encoding="utf-8")).headers
    assert (headers["Event"], headers["P1"], headers["P2"]) == (
        "../../etc/passwd", GOOD_NAMES[0], GOOD_NAMES[1],
    )  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["games", "results.sqlite"]
    for name in GOOD_NAMES:
        assert name_problem(name) is None
        assert "/" not in trace_file_name(1, 0, name)
        assert "/" not in file_safe_name(name)
        assert f"{file_safe_name(name)}.stderr" not in (".", "..")


def test_a_stored_event_with_a_bad_name_is_refused_on_resume_before_any_game(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ev"
    proc = cli("match", "yoxii", "bot:random", "bot:greedy", "--depth", "1", "--games", "2",
               "--max-plies", "4", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    db = sqlite3.connect(out / "results.sqlite")
    with db:
        [(text,)] = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
        config = json.loads(text)
        config.update(games=4, players=["name=x :bot:random", "bot:greedy"])
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
    db.close()
    proc = cli("match", "--resume", "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"enginesrv match: error: {out}")
    assert proc.stderr.count("\n") == 1
    assert (
        "players: player 'name=x :bot:random': the name 'x ' begins or ends with white space"
        in proc.stderr
    )
    assert len(list((out / "games").iterdir())) == 2


@given(st.text(max_size=120))
def test_every_name_accepted_reads_back_from_a_record_as_it_was_written(name: str) -> None:
    if name_problem(name) is not None:
        return
    record = Record(headers={"Game": "yoxii", "Event": name, "P1": name, "P2": name})
    assert parse_record(format_record(record)).headers == record.headers
    assert "\n" not in shown(name)
    assert "\x1b" not in shown(name)


# -- the figure ----------------------------------------------------------------------------------


def test_the_worst_hostile_file_is_refused_quickly_in_a_fresh_process(tmp_path: Path) -> None:
    """The costliest refusal of this module, in a process of its own: an openings file at its
    cap of good openings (each replayed) but for the last line. One line, status 2, within
    10 s, before any engine starts (docs/security.md gives its figures)."""
    good = "moves c5 4@d5\n"
    openings = _file(tmp_path, good * ((1 << 20) // len(good) - 1) + "moves zz9\n", "open.txt")
    assert openings.stat().st_size <= 1 << 20
    path = _file(tmp_path, PLAYERS + f"openings = {toml_value(str(openings))}\n")
    started = time.monotonic()
    proc = cli("match", "--config", str(path))
    assert time.monotonic() - started < 10
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"enginesrv match: error: {openings}:74898: move 1 'zz9': ")
    assert proc.stderr.count("\n") == 1

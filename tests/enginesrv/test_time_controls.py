"""Time controls as users write them: ``M:SS+INC``, ``H:MM:SS``, ``inf``, and a control of a
player's own (``tc=`` in a player spec or a TOML player table) that the arbiter keeps as that
seat's clock."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

import games
from enginesrv.cli.event_toml import toml_settings
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.feed import game_message
from enginesrv.event.play.arbiter import GameResult, GameSetup, play_game
from enginesrv.event.play.controls import INFINITE, Adjudication, MoveLimits, TimeControl
from enginesrv.event.play.players import (
    GameOptions,
    GoRequest,
    Player,
    PlayerSpec,
    PlayerSpecError,
    Reply,
    parse_player,
)
from enginesrv.event.play.records import parse_record
from enginesrv.event.prepared import prepare
from enginesrv.event.results.store import ResultsDB
from enginesrv.web.gamespec import GameSpecError, parse_game_spec

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).parent / "fakes" / "fake_engine.py"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", *args],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=240,
    )  # fmt: skip


# -- the forms of a time control -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "control"),
    [
        ("60", TimeControl(60_000)),
        ("2+0.05", TimeControl(2000, 50)),
        ("40/60+0.6", TimeControl(60_000, 600, 40)),
        ("1:30", TimeControl(90_000)),
        ("1:30+1", TimeControl(90_000, 1000)),
        ("0:00.5", TimeControl(500)),
        ("90:00", TimeControl(5_400_000)),
        ("1:00:00", TimeControl(3_600_000)),
        ("40/1:30:00+30", TimeControl(5_400_000, 30_000, 40)),
        (" 5+0 ", TimeControl(5000)),
        ("inf", INFINITE),
        ("INF", INFINITE),
    ],
)
def test_time_control_forms(text: str, control: TimeControl) -> None:
    parsed = TimeControl.parse(text)
    assert parsed == control
    assert TimeControl.parse(str(parsed)) == parsed


def test_time_controls_print_in_seconds_exactly() -> None:
    assert str(TimeControl.parse("1:30+1")) == "90+1"
    assert str(TimeControl.parse("40/1:00:00+0.25")) == "40/3600+0.25"
    assert str(INFINITE) == "inf"
    # exact milliseconds, never rounded to six digits or written with an exponent
    for ms in (1, 1234, 1_234_567, 1_000_000_000):
        control = TimeControl(ms, ms)
        assert TimeControl.parse(str(control)) == control
    assert str(TimeControl(1_234_567)) == "1234.567"
    assert str(TimeControl(1_000_000_000)) == "1000000"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("fast", "write [MOVES/]TIME[+INCREMENT]"),
        ("", "write [MOVES/]TIME[+INCREMENT]"),
        ("1:75", "below 60"),
        ("1:00:60", "below 60"),
        ("1:5", "is not a time"),
        ("1:00:00:00", "is not a time"),
        ("1.5:00", "is not a time"),
        ("0", "must hold some time"),
        ("0:00", "must hold some time"),
        ("0/60", "must hold some time"),
        ("-5", "write"),
        ("60+", "write"),
        ("inf+1", "write"),
        ("40/inf", "write"),
        ("\u0666\u0660", "write"),  # Arabic-Indic digits are not digits here
        ("99999999999", "at most"),
        ("60+99999999999", "at most"),
        # more digits than a float holds, or than an int converts from: still the same error
        ("60+" + "9" * 400, "at most"),
        ("9" * 5000, "at most"),
        ("9" * 5000 + "/60", "at most"),
    ],
)
def test_bad_time_controls_name_the_text(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="time control") as caught:
        TimeControl.parse(text)
    assert repr(text) in str(caught.value)
    assert why in str(caught.value)


def test_an_own_control_replaces_the_clock_or_move_time_but_not_depth() -> None:
    event = MoveLimits(st_ms=200, depth=3, nodes=900)
    own = TimeControl(30_000, 500)
    assert event.own(own) == MoveLimits(own, None, 3, 900)
    assert event.own(None) is event
    assert MoveLimits(tc=INFINITE, depth=2).clock is None
    assert MoveLimits(tc=own).clock == own
    assert MoveLimits(tc=INFINITE, depth=2).describe() == "tc=inf depth=2"


# -- tc= in a player spec --------------------------------------------------------------------------


def test_tc_prefix_in_player_specs() -> None:
    spec = parse_player("tc=1:00+1:bot:alphabeta:Depth=3")
    assert (spec.kind, spec.bot, spec.options, spec.tc) == (
        "bot", "alphabeta", (("Depth", "3"),), TimeControl(60_000, 1000),
    )  # fmt: skip
    assert spec.name == "alphabeta:Depth=3"  # the control is no part of the name
    spec = parse_player("name=x:tc=inf:options=Hash=8:cmd:./engine --fast")
    assert (spec.name, spec.tc, spec.command, spec.options) == (
        "x", INFINITE, ("./engine", "--fast"), (("Hash", "8"),),
    )  # fmt: skip
    spec = parse_player("tc=40/1:30:00+30:name=r:tcp:[::1]:7777")
    assert (spec.name, spec.host, spec.port) == ("r", "::1", 7777)
    assert spec.tc == TimeControl(5_400_000, 30_000, 40)
    assert parse_player("bot:greedy").tc is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("tc=fast:bot:greedy", "time control 'fast'"),
        ("tc=1:75+1:bot:greedy", "time control '1:75+1'"),
        ("tc=60", "write tc=TIMECONTROL:<player>"),
        ("tc=5:tc=6:bot:greedy", "tc= is given twice"),
        ("tc=:bot:greedy", "time control ''"),
        ("tc=60:nothing", "write bot:NAME"),
    ],
)
def test_bad_tc_prefixes(text: str, why: str) -> None:
    with pytest.raises(PlayerSpecError) as caught:
        parse_player(text)
    assert repr(text) in str(caught.value)
    assert why in str(caught.value)


def test_prepare_refuses_a_bad_own_control(tmp_path: Path) -> None:
    config = EventConfig("yoxii", ("tc=slow:bot:random", "bot:greedy"), depth=1)
    with pytest.raises(EventError, match="time control 'slow'"):
        prepare(config, tmp_path / "ev", resume=False)


def test_the_referee_reads_inf_as_no_clock_and_refuses_tc_in_the_opponent() -> None:
    spec = parse_game_spec("game=yoxii&opponent=bot:random&tc=inf")
    assert spec is not None
    assert spec.control is None
    with pytest.raises(GameSpecError, match="tc field"):
        parse_game_spec("game=yoxii&opponent=tc=60:bot:random")


# -- each seat's own clock in the arbiter ----------------------------------------------------------


class Recorder(Player):
    """Plays the first legal move after ``think`` seconds (mock clock), keeping each request."""

    def __init__(self, game: games.Game, think: float = 0.01) -> None:
        super().__init__(PlayerSpec("test", "bot", "recorder"))
        self.game = game
        self.think = think
        self.requests: list[GoRequest] = []
        self.alive = True

    async def start(self, game: games.Game) -> None:
        self.alive = True

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        pass

    async def go(self, request: GoRequest) -> Reply:
        self.requests.append(request)
        state = self.game.state_from_string(request.position)
        started = trio.current_time()
        await trio.sleep(self.think)
        token = state.move_to_str(state.legal_moves()[0])
        return Reply(token, trio.current_time() - started)

    async def close(self) -> None:
        self.alive = False


def play(
    players: tuple[Recorder, Recorder],
    limits: MoveLimits,
    own: tuple[TimeControl | None, TimeControl | None],
    max_plies: int = 8,
) -> GameResult:
    setup = GameSetup("g1", ("one", "two"), limits, Adjudication(max_plies=max_plies), own=own)

    async def main() -> GameResult:
        return await play_game(players[0].game, players, setup)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_each_seat_gets_its_own_clock_and_increment() -> None:
    game = games.load("yoxii")
    one, two = Recorder(game, think=0.1), Recorder(game, think=0.2)
    own = (TimeControl(60_000, 1000), TimeControl(30_000, 500))
    result = play((one, two), MoveLimits(tc=TimeControl(5000)), own)
    assert (result.winner, result.reason) == ("draw", "max-plies")
    first, later = one.requests[0].clocks, two.requests[0].clocks
    assert (first.p1time, first.p2time, first.p1inc, first.p2inc) == (60_000, 30_000, 1000, 500)
    assert one.requests[0].forfeit_at is not None
    # each clock loses what its player used (0.1 s a decision for p1, 0.2 s for p2) and gains
    # its own increment (1 s, 0.5 s); a Yoxii turn is two decisions of one player
    seen = [[(r.clocks.p1time, r.clocks.p2time) for r in p.requests] for p in (one, two)]
    assert seen[0] == [(60_000, 30_000), (60_900, 30_000), (61_800, 30_600), (62_700, 30_600)]
    assert seen[1] == [(61_800, 30_000), (61_800, 30_300), (63_600, 30_600), (63_600, 30_900)]
    assert (later.p1inc, later.p2inc) == (1000, 500)
    record = result.record
    assert record.headers["TimeControl"] == "p1 tc=60+1, p2 tc=30+0.5"
    clocks = [dict(move.annotations)["clock"] for move in record.moves]
    # the mover's clock after each decision, from its own base: 60 s + 1 - 0.1, 30 s + 0.5 - 0.2
    assert clocks == ["60900", "61800", "30300", "30600", "62700", "63600", "30900", "31200"]


def test_a_seat_with_its_own_clock_beside_a_move_time() -> None:
    game = games.load("yoxii")
    one, two = Recorder(game), Recorder(game)
    limits = MoveLimits(st_ms=300, depth=2)
    result = play((one, two), limits, (TimeControl(1000, 100), None))
    timed = [r.clocks for r in one.requests]
    assert all(c.p1time is not None and c.p2time is None for c in timed)
    assert all((c.p1inc, c.p2inc, c.movetime, c.depth) == (100, None, None, 2) for c in timed)
    fixed = [r.clocks for r in two.requests]
    assert all((c.movetime, c.p1time, c.p2time, c.depth) == (300, None, None, 2) for c in fixed)
    assert result.record.headers["TimeControl"] == "p1 tc=1+0.1 depth=2, p2 st=0.3 depth=2"


def test_the_own_clock_decides_a_time_forfeit() -> None:
    game = games.load("yoxii")
    one, two = Recorder(game, think=0.3), Recorder(game, think=0.3)
    # the event's clock would hold 60 s each; p2's own holds half a second
    result = play((one, two), MoveLimits(tc=TimeControl(60_000)), (None, TimeControl(500)), 40)
    assert (result.winner, result.reason) == ("p1", "time-forfeit")
    assert len(two.requests) == 2
    assert result.record.headers["TimeControl"] == "p1 tc=60, p2 tc=0.5"


def test_inf_has_no_clock_and_no_forfeit() -> None:
    game = games.load("yoxii")
    one, two = Recorder(game, think=30.0), Recorder(game)
    result = play((one, two), MoveLimits(tc=TimeControl(1000), depth=4), (INFINITE, None))
    assert (result.winner, result.reason) == ("draw", "max-plies")
    for request in one.requests:
        clocks = request.clocks
        assert request.forfeit_at is None
        assert (clocks.p1time, clocks.p2time, clocks.movetime, clocks.depth) == (
            None, None, None, 4,
        )  # fmt: skip
    assert all(r.clocks.p2time is not None and r.clocks.p1time is None for r in two.requests)
    assert result.record.headers["TimeControl"] == "p1 tc=inf depth=4, p2 tc=1 depth=4"
    clocked = [move for move in result.record.moves if "clock" in dict(move.annotations)]
    assert len(clocked) == len(two.requests)


def test_the_feed_shows_each_seat_its_own_starting_clock() -> None:
    start = games.load("yoxii").new_state()
    message = game_message(1, 1, ("a", "b"), start, (60_000, 30_000))
    assert message["clock"] == {"p1": 60_000, "p2": 30_000}
    assert game_message(1, 1, ("a", "b"), start, 5000)["clock"] == {"p1": 5000, "p2": 5000}


def test_an_event_under_tc_inf() -> None:
    config = EventConfig("yoxii", ("bot:random", "bot:greedy"), tc="inf", depth=1)
    assert config.move_limits() == MoveLimits(INFINITE, None, 1, None)
    with pytest.raises(EventError, match="exclude"):
        EventConfig("yoxii", ("bot:random", "bot:greedy"), tc="inf", st=1.0).move_limits()


# -- end to end: the go lines external engines receive -----------------------------------------


def _logged_engine(log: Path) -> str:
    """A ``cmd:`` spec of the fake engine behind ``tee``: what it receives is kept in ``log``."""
    inner = f"tee -a {shlex.quote(str(log))} | {shlex.quote(sys.executable)} {FAKE} good"
    return "cmd:sh -c " + shlex.quote(inner)


def test_a_match_with_per_player_controls_from_a_spec_and_toml(tmp_path: Path) -> None:
    logs = tmp_path / "a.in", tmp_path / "b.in"
    config = tmp_path / "event.toml"
    # a JSON string is a TOML basic string
    players = (
        f'{{ name = "a", spec = {json.dumps(_logged_engine(logs[0]))}, tc = "1:00+1" }}, '
        + json.dumps(f"name=b:tc=30+0.5:{_logged_engine(logs[1])}")
    )
    config.write_text(f'game = "yoxii"\nplayers = [{players}]\nmax-plies = 4\n')
    out = tmp_path / "ev"
    proc = cli("match", "--config", str(config), "--st", "5", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    gos = [
        [line.split()[1:] for line in log.read_text().splitlines() if line.startswith("go ")]
        for log in logs
    ]
    # game 1: a is p1 (60+1), b p2 (30+0.5); game 2 the other way round
    first = dict(zip(gos[0][0][::2], map(int, gos[0][0][1::2]), strict=True))
    assert first == {"p1time": 60_000, "p2time": 30_000, "p1inc": 1000, "p2inc": 500}
    for words in gos[0] + gos[1]:
        assert "movetime" not in words
        fields = dict(zip(words[::2], words[1::2], strict=True))
        assert {fields["p1inc"], fields["p2inc"]} == {"1000", "500"}
    headers = [
        parse_record(path.read_text()).headers["TimeControl"]
        for path in sorted((out / "games").iterdir())
    ]
    assert headers == ["p1 tc=60+1, p2 tc=30+0.5", "p1 tc=30+0.5, p2 tc=60+1"]
    # the specs, with their controls, are the stored event's: a resumed event keeps them
    db = sqlite3.connect(out / "results.sqlite")
    [(text,)] = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
    db.close()
    stored = json.loads(text)["players"]
    assert stored[0].startswith("name=a:tc=60+1:cmd:")  # a table's tc in its own form
    assert stored[1].startswith("name=b:tc=30+0.5:cmd:")
    resumed = prepare(EventConfig("", ()), out, resume=True)
    assert [parse_player(p).tc for p in resumed.config.players] == [
        TimeControl(60_000, 1000), TimeControl(30_000, 500),
    ]  # fmt: skip


def test_toml_controls_may_be_numbers(tmp_path: Path) -> None:
    config = tmp_path / "event.toml"
    config.write_text('tc = 60\nplayers = [{ spec = "bot:random", tc = 2.5 }, "bot:greedy"]\n')
    settings = toml_settings(str(config), ValueError)
    assert settings["tc"] == "60"
    assert settings["players"] == ("tc=2.5:bot:random", "bot:greedy")


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ('{ spec = "bot:random", name = "x:tc=0.001" }', "the name of 'bot:random'"),
        ('{ spec = "bot:random", options = { Seed = "5:tc=0.001" } }', "option 'Seed'"),
        ('{ spec = "bot:random", options = { Seed = "5,Hash=1" } }', "option 'Seed'"),
        ('{ spec = "bot:random", options = { "a:b" = "5" } }', "option 'a:b'"),
    ],
)
def test_a_toml_name_or_option_cannot_smuggle_in_a_control(
    tmp_path: Path, table: str, why: str
) -> None:
    # such a value would end its prefix early, the rest read as more of the spec (a tc=)
    config = tmp_path / "event.toml"
    config.write_text(f'players = [{table}, "bot:greedy"]\n')
    with pytest.raises(ValueError, match="cannot hold") as caught:
        toml_settings(str(config), ValueError)
    assert why in str(caught.value)


def test_command_line_errors_of_own_controls(tmp_path: Path) -> None:
    proc = cli("match", "yoxii", "tc=1:75:bot:random", "bot:greedy")
    assert proc.returncode == 2
    assert "time control '1:75'" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
    config = tmp_path / "event.toml"
    config.write_text(
        'game = "yoxii"\nplayers = [{ spec = "bot:random", tc = true }, "bot:greedy"]\n'
    )
    proc = cli("match", "--config", str(config))
    assert proc.returncode == 2
    assert "tc of 'bot:random' is a time control" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_resume_with_the_same_clock_written_another_way_is_the_same_event(
    tmp_path: Path,
) -> None:
    """``--resume`` with the full arguments compares the clock, not its spelling."""
    out = tmp_path / "ev"
    config = EventConfig("yoxii", ("bot:random", "bot:greedy"), tc="1:30+1", games=2)
    event = prepare(config, out, resume=False)
    out.mkdir()
    store = ResultsDB.create(out / "results.sqlite", event.config)
    store.close()
    again = dataclasses.replace(event.config, tc="90+1")
    assert prepare(again, out, resume=True).config.tc == "90+1"
    other = dataclasses.replace(event.config, tc="90+2")
    with pytest.raises(EventError, match="differs from the stored event in tc"):
        prepare(other, out, resume=True)

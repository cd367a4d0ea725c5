"""``enginesrv tune`` and ``enginesrv tune-report`` at the command line: every refusal one line
with status 2 that names the input, the TOML file's two forms of ``params``, and what a report
prints (``values``: the mean of the last tenth of the steps) and draws (a line per
parameter). Nothing here plays a game: a run's store is written as a run writes it."""

from __future__ import annotations

import itertools
import json
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from enginesrv.cli.common import CommandError
from enginesrv.cli.tune_args import tune_configs
from enginesrv.event.results.store import ResultsDB
from enginesrv.tune.config import TuneConfig
from enginesrv.tune.report import trajectory_svg
from enginesrv.tune.state import Step
from tests.enginesrv.test_event_files import PARSER, assert_one_line_refusal, run_main
from tests.enginesrv.tune_support import prepared, stored_run, tune_config

TUNE = ("tune", "yohoho", "bot:noisy")
AIM = ("--param", "Aim=100:0:1000:50")


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line ``enginesrv ARGV`` is refused with (status 2, nothing on stdout)."""
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert err.endswith("\n")
    assert "Traceback" not in err
    return err[:-1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((*TUNE, "--param", "Aim=1:2", "--games", "4"),
         "parameter 'Aim=1:2': not NAME=START:MIN:MAX[:STEP]"),
        ((*TUNE, "--param", "Aim=x:0:9", "--games", "4"),
         "parameter 'Aim=x:0:9': 'x' is not a number"),
        ((*TUNE, "--param", "Aim=5:0:9:9", "--games", "4"),
         "parameter 'Aim': STEP 9 is not above 0 and at most half the range (4.5)"),
        ((*TUNE, *AIM, "--games", "5"), "games: 5 is odd; each iteration plays a game pair"),
        ((*TUNE, *AIM), "give --games N, the games in all (or games in --config)"),
        ((*TUNE, *AIM, "--games", "0"), "games: 0 is not a whole number from 2 to 10,000"),
        ((*TUNE, *AIM, "--games", "10002"),
         "games: 10002 is not a whole number from 2 to 10,000"),
        ((*TUNE, *AIM, "--games", "x"),
         "argument --games: 'x' is not a whole number (see 'enginesrv tune --help')"),
        ((*TUNE, *AIM, "--games", "4", "--r-end", "x"),
         "argument --r-end: 'x' is not a number (see 'enginesrv tune --help')"),
        ((*TUNE, *AIM, "--games", "4", "--r-end", "0"),
         "r-end: 0.0 is not a number from 1e-09 to 1e+06"),
        ((*TUNE, *AIM, "--games", "4", "--a-offset", "-1"),
         "a-offset: -1.0 is not a number from 0 to 1e+09"),
        ((*TUNE, *AIM, "--games", "4", "--alpha", "nan"),
         "alpha: nan is not a number from 0 to 10"),
        ((*TUNE, *AIM, "--games", "4", "--gamma", "11"),
         "gamma: 11.0 is not a number from 0 to 10"),
        ((*TUNE, "--games", "4"), "give at least one --param NAME=START:MIN:MAX[:STEP]"),
        ((*TUNE, *AIM, "--param", "aim=1:0:9", "--games", "4"), "parameter 'aim' is given twice"),
        ((*TUNE, "--param", "Nope=1:0:2", "--games", "4"),
         "player 'bot:noisy': noisy has no option 'Nope' (its options: Seed, SecretSeed, Aim, "
         "Peak, Blur) (a --param)"),
        (("tune", "yohoho", "bot:alphabeta", "--param", "EvalYinshRace=66:0:264", "--games", "4"),
         "player 'bot:alphabeta': option EvalYinshRace bears on yinsh, yinsh+blitz, not yohoho: "
         "tuning it here would change nothing"),
        ((*TUNE, "--param", "Aim=100:0:2000", "--games", "4"),
         "player 'bot:noisy': option 'Aim': 2000 is not in 0..1000 (a bound of a --param)"),
        ((*TUNE, "--param", "Aim=-5:-10:10", "--games", "4"),
         "player 'bot:noisy': option 'Aim': -10 is not in 0..1000 (a bound of a --param)"),
        ((*TUNE, "--param", "Aim=5:0:10.5", "--games", "4"),
         "player 'bot:noisy': option 'Aim': '10.5' is not a whole number (a bound of a --param)"),
        ((*TUNE, "--param", "Aim=5.0:0.0:10.0", "--games", "4"),
         "player 'bot:noisy': option 'Aim': '0.5' is not a whole number (a --param written with "
         "a decimal point takes fractions)"),
        ((*TUNE, "--param", "Aim=3:0:9", "--param", "Blur=2.0:2.0:3.0", "--games", "4"),
         "player 'bot:noisy': option 'Blur': '2.5' is not a whole number (a --param written "
         "with a decimal point takes fractions)"),
        (("tune", "yohoho"),
         "give the GAME and the PLAYER to tune (or game and player in --config)"),
        (("tune", "nope", "bot:noisy", *AIM, "--games", "4"),
         "--game: unknown game 'nope'; known: yinsh, yinsh+blitz, yinyang, yohoho, yoxii"),
        (("tune", "--resume", "--out", "DIR", *AIM),
         "--resume continues the stored run: give only --resume --out DIR"),
        (("tune", "--resume", "--out", "DIR", "--games", "4"),
         "--resume continues the stored run: give only --resume --out DIR"),
        ((*TUNE, *AIM, "--games", "4", "--cluster", " "),
         "--cluster needs the scheduler's address: tcp://HOST:PORT"),
    ],
)  # fmt: skip
def test_a_refusal_is_one_line_naming_the_input(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    assert refusal(capsys, *argv) == f"enginesrv tune: error: {message}"


def test_a_refused_run_leaves_no_directory_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    refusal(capsys, *TUNE, "--param", "Nope=1:0:2", "--games", "4", "--out", str(out))
    assert not (out / "results.sqlite").exists()


# -- the TOML file -------------------------------------------------------------------------------

HEAD = 'game = "yohoho"\nplayer = "bot:noisy"\ngames = 6\nst = 0.3\n'


def _configs(path: Path, *flags: str) -> TuneConfig:
    tune, _ = tune_configs(PARSER.parse_args(["tune", "--config", str(path), *flags]), CommandError)
    assert tune is not None
    return tune


def test_params_as_a_list_of_strings_or_a_table_of_tables_are_the_flags(tmp_path: Path) -> None:
    flags = tune_configs(
        PARSER.parse_args(
            [*TUNE, "--games", "6", "--param", "Aim=100:0:1000:40", "--param", "Blur=2.5:0:10"]
        ),
        CommandError,
    )[0]
    assert flags is not None
    listed = tmp_path / "listed.toml"
    listed.write_text(HEAD + 'params = ["Aim=100:0:1000:40", "Blur=2.5:0:10"]\n')
    tabled = tmp_path / "tabled.toml"
    tabled.write_text(
        HEAD + "[params.Aim]\nstart = 100\nmin = 0\nmax = 1000\nstep = 40\n"
        "[params.Blur]\nstart = 2.5\nmin = 0\nmax = 10\n"
    )
    for path in (listed, tabled):
        assert _configs(path).to_json() == flags.to_json()
    assert [p.integer for p in flags.params] == [True, False]
    # the flags win over the file
    chosen = _configs(tabled, "--param", "Peak=5:0:9", "--games", "8", "--r-end", "0.5")
    assert [p.name for p in chosen.params] == ["Peak"]
    assert (chosen.games, chosen.schedule.r_end) == (8, 0.5)
    # the schedule from the file
    scheduled = tmp_path / "scheduled.toml"
    scheduled.write_text(
        HEAD + 'params = ["Aim=1:0:9"]\nrounding = "randomized"\na-offset = 3\nalpha = 0.7\n'
        "gamma = 0.2\nr-end = 0.25\n"
    )
    tune = _configs(scheduled)
    assert tune.rounding == "randomized"
    assert (tune.schedule.a_offset, tune.schedule.alpha, tune.schedule.gamma) == (3, 0.7, 0.2)
    assert tune.schedule.r_end == 0.25


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("params = 5", "{where}: params: a list of strings or a table of tables, not 5"),
        ("params = [5]", "{where}: params: a list of NAME=START:MIN:MAX[:STEP] strings"),
        ('params = ["Aim=1:2"]', "parameter 'Aim=1:2': not NAME=START:MIN:MAX[:STEP]"),
        ("[params.Aim]\nstart = 1\nmin = 0",
         "{where}: params.Aim: a table of start, min, max and optionally step"),
        ("[params.Aim]\nstart = 1\nmin = 0\nmax = 9\nsteps = 1",
         "{where}: params.Aim: a table of start, min, max and optionally step"),
        ("[params.Aim]\nstart = true\nmin = 0\nmax = 9",
         "{where}: params.Aim: True is not a number"),
        ('[params.Aim]\nstart = "1"\nmin = 0\nmax = 9', "{where}: params.Aim: '1' is not a number"),
        ("[params.Aim]\nstart = 1\nmin = 0\nmax = 9\nstep = nan",
         "parameter 'Aim': nan is not a finite number of at most 1e12"),
        ("params = []", "give at least one --param NAME=START:MIN:MAX[:STEP]"),
        ('params = ["Aim=1:0:9"]\nsprt = "elo0=0,elo1=5"', "{where}: unknown setting 'sprt'"),
        ('params = ["Aim=1:0:9"]\nplayers = ["bot:noisy", "bot:greedy"]',
         "{where}: unknown setting 'players'"),
        ('params = ["Aim=1:0:9"]\nrounds = 2', "{where}: unknown setting 'rounds'"),
        ('params = ["Aim=1:0:9"]\nrepeat = true', "{where}: unknown setting 'repeat'"),
        ('params = ["Aim=1:0:9"]\ngauntlet = true', "{where}: unknown setting 'gauntlet'"),
        ('params = ["Aim=1:0:9"]\nrating-interval = 2',
         "{where}: unknown setting 'rating-interval'"),
        ('params = ["Aim=1:0:9"]\nrounding = "up"',
         "rounding: 'up' is not one of deterministic, randomized"),
        ('params = ["Aim=1:0:9"]\nalpha = "x"', "alpha: 'x' is not a number"),
        ('params = ["Aim=1:0:9"]\nr-end = true', "r-end: True is not a number"),
    ],
)  # fmt: skip
def test_a_refused_file_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    path = tmp_path / "tune.toml"
    path.write_text(HEAD + body + "\n")
    expected = message.format(where=f"--config {path}")
    assert assert_one_line_refusal(capsys, path, "tune") == f"enginesrv tune: error: {expected}"


def test_a_file_without_a_player_or_with_one_of_the_wrong_type_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tune.toml"
    path.write_text('game = "yohoho"\ngames = 4\nparams = ["Aim=1:0:9"]\n')
    assert assert_one_line_refusal(capsys, path, "tune") == (
        "enginesrv tune: error: give the GAME and the PLAYER to tune (or game and player in "
        "--config)"
    )
    path.write_text('game = "yohoho"\nplayer = 7\ngames = 4\nparams = ["Aim=1:0:9"]\n')
    assert assert_one_line_refusal(capsys, path, "tune") == (
        f"enginesrv tune: error: --config {path}: player: a player spec string, not 7"
    )


# -- tune-report ---------------------------------------------------------------------------------


THREE = ("Aim=100:0:1000:50", "Blur=2.5:0:10", "Peak=500:0:1000:50")


def _thetas(steps: int) -> list[tuple[float, ...]]:
    return [(100 + 10 * k + 0.3, 0.1 * k, 600.0 - k) for k in range(1, steps + 1)]


def test_the_report_json_values_are_the_mean_of_the_last_tenth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """25 steps of 40: the last ceil(2.5) = 3 are averaged; Aim and Peak are integers, so
    their means are rounded, Blur's is not."""
    tune = tune_config(80, *THREE)
    out = tmp_path / "run"
    thetas = _thetas(25)
    stored_run(out, tune, thetas)
    code, text, err = run_main(capsys, "tune-report", str(out), "--json")
    assert (code, err) == (0, "")
    report = json.loads(text)
    tail = thetas[-3:]
    means = [statistics.fmean(t[i] for t in tail) for i in range(3)]
    assert means == pytest.approx([340.3, 2.4, 576.0])
    assert report["values"] == {"Aim": 340, "Blur": pytest.approx(2.4), "Peak": 576}
    assert isinstance(report["values"]["Aim"], int)
    assert report["spread"]["Aim"] == pytest.approx(statistics.pstdev(t[0] for t in tail))
    assert report["last"] == {"Aim": 350.3, "Blur": 2.5, "Peak": 575.0}
    assert (report["done"], report["iterations"]) == (25, 40)
    assert report["spec"] == "options=Aim=340,Blur=2.4,Peak=576:bot:noisy"
    assert [s["k"] for s in report["trajectory"]] == list(range(1, 26))
    assert not (out / "trajectory.svg").exists()  # --json draws nothing


def test_the_report_counts_the_games_lost_by_a_forfeit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tune = tune_config(80, *THREE)
    out = tmp_path / "run"
    stored_run(out, tune, _thetas(3), reasons=("time-forfeit", "crash"))
    code, text, err = run_main(capsys, "tune-report", str(out))
    assert (code, err) == (0, "")
    lines = text.splitlines()
    assert lines[1] == (
        "warning: 6 games lost by a forfeit (crash 3, time-forfeit 3): such a game tells of "
        "the machine or the engine, not of the weights (enginesrv results DIR)"
    )
    code, text, _ = run_main(capsys, "tune-report", str(out), "--json")
    assert json.loads(text)["forfeits"] == {"crash": 3, "time-forfeit": 3}
    clean = tmp_path / "clean"
    stored_run(clean, tune, _thetas(3))  # games won on the goal row: nothing to warn of
    code, text, _ = run_main(capsys, "tune-report", str(clean))
    assert code == 0
    assert "forfeit" not in text
    code, text, _ = run_main(capsys, "tune-report", str(clean), "--json")
    assert json.loads(text)["forfeits"] == {}


def test_a_report_before_any_step_gives_the_start_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tune = tune_config(80, *THREE)
    out = tmp_path / "run"
    stored_run(out, tune, [])
    code, text, _ = run_main(capsys, "tune-report", str(out), "--json")
    report = json.loads(text)
    assert (code, report["done"]) == (0, 0)
    assert report["values"] == {"Aim": 100, "Blur": 2.5, "Peak": 500}


def polylines(svg: str, count: int) -> list[list[tuple[float, float]]]:
    """The points of each line an SVG picture draws; there must be ``count``."""
    root = ET.fromstring(svg)
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == count
    return [
        [
            (float(x), float(y))
            for x, y in (pair.split(",") for pair in line.get("points", "").split())
        ]
        for line in lines
    ]


def test_the_report_draws_a_line_per_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tune = tune_config(80, *THREE)
    out = tmp_path / "run"
    stored_run(out, tune, _thetas(25))
    code, text, err = run_main(capsys, "tune-report", str(out), "--table")
    assert (code, err) == (0, "")
    lines = text.splitlines()
    assert lines[0] == "25 of 40 iterations (50 games); final value: the mean of the last 3 steps"
    assert "player options=Aim=340,Blur=2.4,Peak=576:bot:noisy" in lines
    assert "toml   options = { Aim = 340, Blur = 2.4, Peak = 576 }" in lines
    assert lines[-1] == f"picture {out / 'trajectory.svg'}"
    assert sum(1 for line in lines if line.split()[:2] == ["25", "25"]) == 1  # --table's last
    drawn = polylines((out / "trajectory.svg").read_text(), 3)
    # the start, then a point per step, left to right
    for points in drawn:
        assert len(points) == 26
        assert all(a[0] < b[0] for a, b in itertools.pairwise(points))
    # after the first step, Aim rises and Peak falls (y grows downwards)
    assert drawn[0][-1][1] < drawn[0][1][1]
    assert drawn[2][-1][1] > drawn[2][1][1]
    code, text, _ = run_main(capsys, "tune-report", str(out), "--svg", "-")
    assert code == 0
    polylines(text[text.index("<svg") :], 3)
    elsewhere = tmp_path / "picture.svg"
    code, text, _ = run_main(capsys, "tune-report", str(out), "--svg", str(elsewhere))
    assert (code, text.splitlines()[-1]) == (0, f"picture {elsewhere}")
    polylines(elsewhere.read_text(), 3)
    # the table is printed, then the picture that cannot be written is refused
    nowhere = tmp_path / "missing" / "picture.svg"
    code, text, err = run_main(capsys, "tune-report", str(out), "--svg", str(nowhere))
    assert (code, text.splitlines()[0]) == (2, lines[0])
    assert err == (
        f"enginesrv tune-report: error: {nowhere}: cannot write the picture: No such file or "
        "directory\n"
    )


def test_a_report_of_what_holds_no_tuning_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "results.sqlite"
    assert refusal(capsys, "tune-report", str(tmp_path)) == (
        f"enginesrv tune-report: error: {store} does not exist: no tuning run there"
    )
    config = prepared(tune_config(4), None).event.config
    ResultsDB.create(store, config).close()
    assert refusal(capsys, "tune-report", str(tmp_path)) == (
        f"enginesrv tune-report: error: {store} holds a match or tournament, not a tuning run"
    )


def test_a_long_run_is_drawn_with_at_most_600_points_a_line_ending_at_its_last_step() -> None:
    tune = tune_config(4000, *THREE)
    taken = [Step(k, k, 0, theta) for k, theta in enumerate(_thetas(1500), 1)]
    for panel, points in enumerate(polylines(trajectory_svg(tune, taken), 3)):
        assert len(points) == 1 + 500 + 1  # the start, every third step, and the last
        # a panel 300 wide, its plot from 46 to 286: the last step at 1500 of 2000
        assert points[-1][0] == pytest.approx(300 * panel + 46 + 240 * 1500 / 2000, abs=0.05)


def test_the_status_line_shows_the_forfeits_once_there_are_any() -> None:
    import io

    from enginesrv.cli.tune import TuneDisplay
    from enginesrv.tune.run import Stepped
    from enginesrv.tune.state import TuneState

    tune = tune_config(8)
    out, err = io.StringIO(), io.StringIO()
    display = TuneDisplay(out, err, prepared(tune, None), live=True)
    state = TuneState(tune, (100.0,))
    display.start(state)
    state.steps.append(Step(1, 1, 2, (150.0,)))
    display.step(Stepped(state.steps[-1], state, 10.0, 0))
    assert out.getvalue() == "iteration 1/4: result +2; Aim=150\n"
    assert err.getvalue().endswith("\r\x1b[K[1/4] time 10s eta 30s")
    state.forfeits["time-forfeit"] += 2
    state.steps.append(Step(2, 2, 0, (150.0,)))
    display.step(Stepped(state.steps[-1], state, 20.0, 0))
    assert err.getvalue().endswith("\r\x1b[K[2/4] time 20s eta 20s forfeits 2")
    display.close()


def test_a_resumed_runs_status_line_shows_its_forfeits_from_the_start() -> None:
    """The forfeits of the games stored before a resume are shown before its first step."""
    import io

    from enginesrv.cli.tune import TuneDisplay
    from enginesrv.tune.state import TuneState

    tune = tune_config(8)
    out, err = io.StringIO(), io.StringIO()
    display = TuneDisplay(out, err, prepared(tune, None), live=True)
    state = TuneState(tune, (150.0,), steps=[Step(1, 1, 2, (150.0,))])
    state.forfeits["crash"] += 1
    display.start(state)
    display.tick(5.0)
    assert err.getvalue().endswith("\r\x1b[K[1/4] time 5s eta - forfeits 1")
    display.close()

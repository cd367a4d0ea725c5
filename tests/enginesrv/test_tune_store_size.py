"""A tuning run whose results store could pass the cap every reader keeps to
(``files.MAX_STORE_BYTES``) is refused before it begins: 64 parameters written with a decimal
point over 10,000 games made a store of 42 MB, which neither ``tune --resume`` nor
``tune-report`` would then open. The largest run accepted makes a store under the cap."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bots.eval.tuning import tunables_for
from enginesrv.event.config import EventError
from enginesrv.event.results import files
from enginesrv.event.results.store import ResultsDB
from enginesrv.tune import size
from enginesrv.tune.config import TuneConfig
from enginesrv.tune.spsa import Param
from tests.enginesrv.test_event_files import run_main

WIDE_NAME = "\U0001f600" * 99
"""A name of 99 characters of 4 bytes (``NAME+`` and ``NAME-`` are at the cap of 100)."""


def _floats(count: int) -> tuple[Param, ...]:
    return tuple(Param.parse(f"P{i:02d}=0.5:0.0:1.0") for i in range(count))


def test_many_parameters_over_many_games_are_refused_naming_the_games_they_may_have(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["tune", "yinsh", "cmd:./engine", "--games", "10000"]
    for i in range(64):
        argv += ["--param", f"P{i:02d}=0.5:0.0:1.0"]
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, "")
    found = re.fullmatch(
        r"enginesrv tune: error: games: 64 parameters of 'cmd:\./engine' over 10,000 games "
        r"would make a results store past its cap of 25,165,824 bytes \(one that could not be "
        r"resumed nor reported\): give at most ([\d,]+) games, or fewer parameters\n",
        err,
    )
    assert found is not None, err
    most = int(found[1].replace(",", ""))
    assert 2_000 < most < 10_000
    size.check_store_size(TuneConfig.of("cmd:./engine", _floats(64), most), False, 2_000)
    with pytest.raises(EventError):
        size.check_store_size(TuneConfig.of("cmd:./engine", _floats(64), most + 200), False, 2_000)


@pytest.mark.parametrize("game", ["yinsh", "yohoho", "yoxii"])
def test_every_weight_of_an_evaluation_is_tuned_over_the_most_games(game: str) -> None:
    params = tuple(Param.of(t.name, t.default, t.low, t.high) for t in tunables_for(game))
    size.check_store_size(TuneConfig.of("bot:alphabeta", params, 10_000), False, 2_000)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("player", "params", "hidden"),
    [
        (f"name={WIDE_NAME}:cmd:./engine", _floats(64), True),
        (f"name={WIDE_NAME}:cmd:./engine", (Param.parse("Aim=0:-1000000000000:1"),), True),
    ],
)
def test_the_largest_run_accepted_makes_a_store_under_the_cap(
    tmp_path: Path, player: str, params: tuple[Param, ...], hidden: bool
) -> None:
    """Its every value written at its longest, in a store on disk as a run writes it."""
    games = 10_000
    while True:
        tune = TuneConfig.of(player, params, games)
        try:
            size.check_store_size(tune, hidden, 2_000)
            break
        except EventError:
            games -= 100
    path = tmp_path / "results.sqlite"
    written = size.write_widest(tune, hidden, path)
    files.check_store_file(path)
    assert path.stat().st_size == written <= files.MAX_STORE_BYTES
    ResultsDB(path, read_only=True).close()

"""A tuning run on a real Dask cluster (``--cluster``): a ``LocalCluster`` of two worker
processes on loopback, the coordinator in this process, as ``test_cluster`` plays events.
Marked slow: CI runs it in its stage of slow tests (``--run-slow``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from enginesrv.event.play.records import parse_record
from enginesrv.event.runners.cluster import ClusterVenue
from tests.enginesrv.cluster_support import local_scheduler
from tests.enginesrv.test_tournament import cli
from tests.enginesrv.tune_support import (
    AIM,
    Spy,
    SpyVenue,
    assert_complete,
    assert_given_the_stored_probes,
    play,
    prepared,
    probes,
    rows,
    tune_config,
)

scheduler = pytest.fixture(scope="module", name="scheduler")(local_scheduler)

distributed = pytest.importorskip("distributed")


@pytest.mark.slow  # a cluster's start and 16 games: some 12 s of the suite's 2 cores
def test_a_run_on_the_cluster_stores_every_game_and_step_as_a_local_run_does(
    scheduler: str, tmp_path: Path
) -> None:
    """With a learning rate so small that theta stays where it starts, each iteration's probe
    is the same whatever order its steps are taken in, so the cluster's run and a local one
    play the same games: equal results and moves show that the workers' bots played with the
    values they were sent."""
    tune = tune_config(8, r_end=1e-6)
    remote, local = tmp_path / "remote", tmp_path / "local"
    spy = Spy()
    state, seen = play(prepared(tune, remote), remote, SpyVenue(spy, ClusterVenue(scheduler)))
    play(prepared(tune, local), local)
    assert_complete(tune, remote)
    assert len(state.steps) == len(seen.steps) == 4
    assert sorted(g.game_id for g in spy.given) == list(range(1, 9))
    assert_given_the_stored_probes(tune, remote, spy.given)
    assert probes(remote) == probes(local)
    assert rows(remote) == rows(local)
    for game_id in range(1, 9):
        name = f"game-{game_id:05d}.txt"
        there = parse_record((remote / "games" / name).read_text())
        here = parse_record((local / "games" / name).read_text())
        assert there.tokens() == here.tokens()
        assert [c for c in there.comments if c.startswith("played on the worker tcp://")]


@pytest.mark.slow
def test_tune_with_cluster_at_the_command_line(scheduler: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = cli(
        "tune", "yohoho", "bot:noisy", "--param", AIM, "--games", "6", "--st", "0.3",
        "--cluster", scheduler, "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"on the cluster {scheduler}\n" in proc.stderr
    assert_complete(tune_config(6), out)
    assert len(re.findall(r"^iteration \d/3: ", proc.stdout, flags=re.MULTILINE)) == 3


@pytest.mark.slow
def test_an_engine_that_refuses_its_start_values_on_the_workers_stops_the_run(
    scheduler: str, tmp_path: Path
) -> None:
    """The workers' check gives each external engine the start values, as a local run's
    does: one that does not know a parameter would otherwise lose every game on the cluster,
    every pair a draw, and the run end at its start values."""
    import sys

    from enginesrv.event.config import EventError
    from enginesrv.event.runners.cluster import ClusterVenue as Venue

    fake = Path(__file__).with_name("fakes") / "tune_engine.py"
    command = f"{sys.executable} {fake} ignore Knob 500"
    tune = tune_config(4, "Knobb=500:0:1000", player=f"name=tf:cmd:{command}")
    out = tmp_path / "run"
    with pytest.raises(EventError) as caught:
        play(prepared(tune, out, max_plies=8, st=0.05), out, Venue(scheduler))
    text = str(caught.value)
    assert text.startswith("--cluster: no worker can run the players "), text
    assert (
        "setoption name Knobb value 500 was refused: error 101 bad-arguments: setoption: "
        "unknown option Knobb"
    ) in text
    assert not (out / "results.sqlite").exists()

"""Events played on a real Dask cluster (``--cluster``): a ``LocalCluster`` of two worker
processes with one thread each on loopback, the coordinator in this process."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.records import parse_record
from enginesrv.event.prepared import prepare
from enginesrv.event.runners.cluster import ClusterSettings, ClusterVenue
from enginesrv.event.tournament import Finished, run_event
from tests.enginesrv.cluster_support import local_scheduler, stored
from tests.processes import line_within, rest_within

scheduler = pytest.fixture(scope="module", name="scheduler")(local_scheduler)

distributed = pytest.importorskip("distributed")
ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "fakes" / "fake_engine.py"


def run(
    config: EventConfig,
    out: Path | None,
    cluster: str | None,
    settings: ClusterSettings | None = None,
) -> list[Finished]:
    seen: list[Finished] = []
    event = prepare(config, out, resume=False)
    venue = None if cluster is None else ClusterVenue(cluster, settings=settings)
    trio.run(lambda: run_event(event, out, on_game=seen.append, venue=venue))
    return seen


CONFIG = EventConfig(
    game="yoxii",
    players=("bot:alphabeta:Depth=2", "bot:greedy", "bot:random"),
    depth=2,
    games=2,
    event="cluster test",
)


def test_an_event_on_the_cluster_stores_what_a_local_run_stores(
    scheduler: str, tmp_path: Path
) -> None:
    remote, local = tmp_path / "remote", tmp_path / "local"
    played = run(CONFIG, remote, scheduler)
    run(CONFIG, local, None)
    assert sorted(f.game.id for f in played) == [1, 2, 3, 4, 5, 6]
    assert stored(remote) == stored(local)
    for name in sorted(p.name for p in (local / "games").iterdir()):
        there = parse_record((remote / "games" / name).read_text())
        here = parse_record((local / "games" / name).read_text())
        assert there.tokens() == here.tokens()
        assert there.headers["Result"] == here.headers["Result"]
        # where it was played, which a local record does not say
        assert [c for c in there.comments if c.startswith("played on the worker tcp://")]
        assert not [c for c in here.comments if c.startswith("played on")]


def test_an_external_engine_is_started_on_the_workers(scheduler: str, tmp_path: Path) -> None:
    """A ``cmd:`` player runs on the worker: a real ``enginesrv engine`` process there, kept
    from game to game, playing the same games as in a local run."""
    engine = f"name=ext:cmd:{sys.executable} -m enginesrv.cli engine --game yoxii"
    config = dataclasses.replace(CONFIG, players=(engine, "bot:greedy"), games=4, depth=2)
    remote, local = tmp_path / "remote", tmp_path / "local"
    run(config, remote, scheduler)
    run(config, local, None)
    assert [row[0] for row in stored(remote)] == [1, 2, 3, 4]
    assert stored(remote) == stored(local)


def test_the_engines_a_worker_kept_started_end_with_the_event(
    scheduler: str, tmp_path: Path
) -> None:
    """A worker keeps an external engine started from one game of an event to the next; when
    the event ends, the engine ends too, while the cluster lives on."""
    engine = tmp_path / "fake_engine_for_release.py"
    shutil.copy(FAKE, engine)
    config = dataclasses.replace(
        CONFIG, players=(f"name=bad:cmd:{sys.executable} {engine} good", "bot:greedy"),
        games=2, depth=1,
    )  # fmt: skip
    run(config, tmp_path / "ev", scheduler)
    deadline = time.monotonic() + 15
    while running(engine) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(engine)


def running(path: Path) -> bool:
    """Whether a process whose command line names ``path`` is alive."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(path).encode() in (entry / "cmdline").read_bytes():
                    return True
    return False


def test_a_game_of_hidden_information_keeps_its_secret_seeds_with_its_result(
    scheduler: str, tmp_path: Path
) -> None:
    """Yin Yang on the cluster: the bots' secret seeds are drawn on the worker, come back with
    the finished game and are kept for audit as in a local event, one pair per game."""
    config = dataclasses.replace(
        CONFIG, game="yinyang", players=("bot:alphabeta", "bot:random"), games=4, depth=1
    )
    out = tmp_path / "ev"
    run(config, out, scheduler)
    assert [row[0] for row in stored(out)] == [1, 2, 3, 4]
    db = sqlite3.connect(out / "results.sqlite")
    try:
        seeds = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'seeds:%'"))
    finally:
        db.close()
    assert sorted(seeds) == ["seeds:1", "seeds:2", "seeds:3", "seeds:4"]
    pairs = [tuple(json.loads(v)) for v in seeds.values()]
    assert all(len(p) == 2 and all(isinstance(s, int) and s > 0 for s in p) for p in pairs)
    assert len(set(pairs)) == 4  # drawn afresh for every game


def test_an_engine_on_a_worker_is_contained_in_a_game_with_hidden_information(
    scheduler: str, tmp_path: Path
) -> None:
    """A thief on a worker sees no other process (the worker's, its opponent's) unless the
    event says --no-contain; where it sees one it crashes, and its game says so."""
    hostile = f"{sys.executable} {FAKE.with_name('hostile_engine.py')}"
    players = (f"name=victim:cmd:{hostile} victim", f"name=thief:cmd:{hostile} thief-or-crash")
    config = dataclasses.replace(CONFIG, game="yinyang", players=players, games=2, depth=1)
    run(config, tmp_path / "contained", scheduler)
    assert [row[4] for row in stored(tmp_path / "contained")] == ["no-legal-token"] * 2
    run(dataclasses.replace(config, no_contain=True), tmp_path / "open", scheduler)
    assert [row[4] for row in stored(tmp_path / "open")] == ["crash"] * 2


def test_a_player_no_worker_can_run_stops_the_event_before_any_game(
    scheduler: str, tmp_path: Path
) -> None:
    config = dataclasses.replace(
        CONFIG, players=("bot:greedy", f"name=ghost:cmd:{tmp_path}/no-such-engine")
    )
    with pytest.raises(EventError, match="no worker can run the player ghost") as caught:
        run(config, tmp_path / "ev", scheduler)
    assert str(caught.value).count("tcp://") == 2  # both workers named, with their reasons
    assert not (tmp_path / "ev" / "results.sqlite").exists()


def test_an_unreachable_scheduler_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(EventError, match="cannot reach the scheduler"):
        run(CONFIG, None, closed_port(), ClusterSettings(connect_timeout=0.5))


def test_without_the_extra_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(EventError, match=r"pip install 'enginesrv\[distributed\]'"):
        run(CONFIG, None, "tcp://127.0.0.1:8786")


def test_the_command_line(scheduler: str, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:greedy", "bot:random",
         "--depth", "1", "--games", "2", "--cluster", scheduler, "--out", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"on the cluster {scheduler}" in proc.stderr
    games = sorted(line.split(":")[0] for line in proc.stdout.splitlines()[:2])
    assert games == ["game 1/2", "game 2/2"]
    assert len(stored(out)) == 2
    bad = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:greedy",
         f"cmd:{sys.executable} -m enginesrv.cli engine --game yoxii",
         "--depth", "1", "--cluster", scheduler, "--debug", "--out", str(tmp_path / "d")],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "--debug" in bad.stderr


def closed_port() -> str:
    """The address of a loopback port that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"tcp://127.0.0.1:{port}"


def test_a_worker_killed_mid_event_loses_no_game_and_doubles_none(
    scheduler: str, tmp_path: Path
) -> None:
    """One worker is killed (SIGKILL) while games run on both: its game runs again on a worker
    of the cluster, and the event ends with every scheduled game stored once, as a local run
    of the same event stores them."""
    config = dataclasses.replace(
        CONFIG, players=("bot:alphabeta:Depth=2", "bot:greedy"), games=8, depth=3
    )
    with distributed.Client(scheduler, set_as_default=False) as client:
        pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed: list[int] = []

    def kill_after_first(done: Finished) -> None:
        if not killed:
            killed.append(done.game.id)
            os.kill(victim, signal.SIGKILL)

    remote, local = tmp_path / "remote", tmp_path / "local"
    event = prepare(config, remote, resume=False)
    trio.run(
        lambda: run_event(event, remote, on_game=kill_after_first, venue=ClusterVenue(scheduler))
    )
    assert killed
    run(dataclasses.replace(event.config, openings=None), local, None)
    rows = stored(remote)
    assert [row[0] for row in rows] == list(range(1, 9))
    assert rows == stored(local)


def test_a_stopped_event_stops_the_games_running_on_the_workers(
    scheduler: str, tmp_path: Path
) -> None:
    """The coordinator is stopped (as by Ctrl-C) while two long games run on the workers:
    the workers drop them within a second or two, instead of playing them to their end."""
    # a second a move, and lateness forgiven (a busy machine must not end a game early)
    config = dataclasses.replace(
        CONFIG, players=("bot:alphabeta", "name=other:bot:alphabeta"), depth=None, st=1.0,
        timemargin=10_000,
    )  # fmt: skip
    event = prepare(config, tmp_path / "ev", resume=False)

    async def main() -> None:
        with trio.move_on_after(3):
            await run_event(
                event, tmp_path / "ev", on_game=lambda done: None, venue=ClusterVenue(scheduler)
            )

    trio.run(main)
    assert stored(tmp_path / "ev") == []
    # each game would hold its worker's one thread for about a minute (a second per move):
    # a task sent to each worker now runs as soon as that thread is free again
    with distributed.Client(scheduler, set_as_default=False) as client:
        started = time.monotonic()
        probes = [client.submit(time.monotonic, workers=[w], pure=False) for w in client.nthreads()]
        ran = client.gather(probes)
    assert max(ran) - started < 15


@pytest.mark.slow
def test_a_real_cluster_with_a_worker_killed_mid_event(tmp_path: Path) -> None:
    """``dask scheduler`` and two ``dask worker --nthreads 1`` processes (no nanny: a killed
    worker stays dead) on loopback; one worker is killed with SIGKILL once the event has
    stored its first games. The event ends with every scheduled game stored exactly once, and
    with the same results as a local run of the same event."""
    scheduler_file = tmp_path / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
    started: list[subprocess.Popen[bytes]] = []

    def spawn(*args: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [*args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )  # fmt: skip
        started.append(proc)
        return proc

    try:
        spawn(sys.executable, "-m", "dask", "scheduler", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))  # fmt: skip
        deadline = time.monotonic() + 30
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [
            spawn(
                sys.executable,
                "-m",
                "dask",
                "worker",
                "--scheduler-file",
                str(scheduler_file),
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
            )
            for _ in range(2)
        ]
        with distributed.Client(scheduler_file=str(scheduler_file), set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
            address = client.scheduler.address
        config = dataclasses.replace(
            CONFIG, players=("bot:alphabeta:Depth=3", "bot:greedy"), games=24, depth=3
        )
        out = tmp_path / "remote"
        err_path = tmp_path / "stderr.txt"
        with err_path.open("w") as err_file:
            event = subprocess.Popen(
                [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", *config.players,
                 "--depth", "3", "--games", "24", "--event", "cluster test", "--cluster",
                 address, "--out", str(out)],
                stdout=subprocess.PIPE, stderr=err_file, text=True, cwd=ROOT,
            )  # fmt: skip
        started.append(event)  # type: ignore[arg-type]
        lines = [line_within(event, 120) for _ in range(3)]
        assert all(line.startswith("game ") for line in lines), lines
        os.killpg(workers[0].pid, signal.SIGKILL)
        event.wait(timeout=240)
        rest = rest_within(event)
        assert event.returncode == 0, err_path.read_text()
        games = [line for line in [*lines, *rest.splitlines()] if line.startswith("game ")]
        assert sorted(int(line.split()[1].split("/")[0]) for line in games) == list(range(1, 25))
        local = tmp_path / "local"
        run(dataclasses.replace(config, players=config.players), local, None)
        rows = stored(out)
        assert [row[0] for row in rows] == list(range(1, 25))
        assert rows == stored(local)
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()


KILLER = """\
import os, pathlib, signal, sys
starts = pathlib.Path(sys.argv[1])
(starts / str(os.getpid())).touch()  # one file a start: two at once are both counted
if len(list(starts.iterdir())) > int(sys.argv[2]):
    # the Dask worker that started this engine: the parent of the reaper it runs under
    reaper = pathlib.Path(f"/proc/{os.getppid()}/stat").read_text()
    os.kill(int(reaper.rsplit(")", 1)[1].split()[1]), signal.SIGKILL)
os.execv(sys.executable, [sys.executable, "-m", "enginesrv.cli", "engine", "--game", "yoxii"])
"""


def test_a_game_that_keeps_killing_its_worker_stops_the_event_with_one_error(
    tmp_path: Path,
) -> None:
    """An engine that kills the worker it runs on, every time it starts after the preflight:
    the games kill both workers, the workers that their nannies start again die in their
    checks (and so get no game), and the event stops with one error naming the players, and
    keeps no half-played game."""
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    count = tmp_path / "starts"
    count.mkdir()
    # the preflight starts the engine once on each of the two workers; every later start kills
    engine = f"name=killer:cmd:{sys.executable} {script} {count} 2"
    config = dataclasses.replace(CONFIG, players=(engine, "bot:greedy"), games=2, depth=1)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    try:
        with pytest.raises(
            EventError, match=r"no worker left can run both (killer and greedy|greedy and killer)"
        ) as caught:
            run(config, tmp_path / "ev", cluster.scheduler_address)
    finally:
        cluster.close()
    assert "\n" not in str(caught.value)
    assert "left the cluster during its check" in str(caught.value)
    assert "game 1" in str(caught.value) or "game 2" in str(caught.value)
    # no game was stored: the store this run made is not left behind
    assert not (tmp_path / "ev" / "results.sqlite").exists()
    assert len(list(count.iterdir())) > 2 + 1  # the game was tried again after a kill

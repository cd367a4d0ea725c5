"""The engines' part of the threat model (docs/security.md), each test written as the hostile
engine would attack: nothing an engine starts outlives it (``enginesrv.reaper``), what it
writes is capped, and an engine of the same user finds no route into the arbiter's process,
its files or another engine's secrets.

The same-user attacks run the whole match without capabilities (``setpriv``), as any user
that is not root runs it: root with its capabilities may read every process, and no
threat model of a same-user engine holds against it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from enginesrv import reaper
from enginesrv.client import AsyncEngine
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.players import Clocks, ForfeitError, PlayerSpec, parse_player
from enginesrv.search.pool import WorkerPool
from tests.enginesrv.test_players import YOXII, request
from tests.enginesrv.test_tournament import ROOT
from tests.trio_run import trio_test

FAKES = Path(__file__).resolve().parent / "fakes"
HOSTILE = FAKES / "hostile_engine.py"
LIMIT = 20.0
PR_GET_DUMPABLE, PR_GET_CHILD_SUBREAPER = 3, 37


def hostile(mode: str, *args: str) -> PlayerSpec:
    return parse_player("cmd:" + shlex.join([sys.executable, str(HOSTILE), mode, *args]))


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def pids_in(path: Path, count: int) -> list[int]:
    """The ``count`` PIDs the engine wrote to ``path`` (it writes them as it starts)."""
    while True:
        with trio.move_on_after(0):
            lines = path.read_text().split() if path.exists() else []
            if len(lines) >= count:
                return [int(p) for p in lines]
        await trio.sleep(0.01)  # bounded by the caller's fail_after


@trio_test
async def test_nothing_an_engine_started_outlives_it_whatever_it_does(tmp_path: Path) -> None:
    # a new session, a new process group, a double fork; SIGTERM and quit ignored
    pidfile = tmp_path / "pids"
    player = TextEnginePlayer(hostile("escape", str(pidfile)))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        reply = await player.go(request(clocks=Clocks(depth=1)))
        assert reply.token is not None
        pids = await pids_in(pidfile, 4)
        assert all(alive(pid) for pid in pids)
        await player.close()
    assert [pid for pid in pids if alive(pid)] == []  # all gone when close returns


@trio_test
async def test_a_line_of_processes_that_regrows_what_is_killed_is_ended_whole(
    tmp_path: Path,
) -> None:
    # each link is told of its parent's death and grows a new bottom: one kill at a time
    # never reaches the end; a line that is stopped first cannot answer
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("a C compiler is needed to build the line of processes")
    program = tmp_path / "ladder"
    subprocess.run(
        [compiler, "-O1", "-o", str(program), str(FAKES / "ladder.c")], check=True, timeout=120
    )
    pidfile = tmp_path / "pids"
    player = TextEnginePlayer(hostile("ladder", str(pidfile), str(program)))
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        await player.go(request(clocks=Clocks(depth=1)))
        pids = await pids_in(pidfile, 3)
        await player.close()
    pids = [int(p) for p in pidfile.read_text().split()]
    assert [pid for pid in pids if alive(pid)] == []


def test_an_engine_that_kills_its_reaper_is_ended_by_the_arbiter(tmp_path: Path) -> None:
    # it clears its parent-death signal, leaves its session and kills its reaper: what it
    # is and what it started come to the arbiter, which ends them
    pidfile = tmp_path / "pids"
    engine = f"name=free:cmd:{sys.executable} {HOSTILE} unreap {pidfile}"
    match("yoxii", engine, "bot:random", "--games", "2", "--depth", "1", "--max-plies", "40",
          user=True)  # fmt: skip
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    assert [pid for pid in pids if alive(pid)] == []


def test_a_process_that_never_keeps_its_pid_is_ended_with_the_event() -> None:
    # it kills its reaper; its helper forks and leaves, over and over: the arbiter's sweeps
    # go on until none of it is left, and none of its zombies stay
    name = "hop" + os.urandom(4).hex()
    engine = f"name=hop:cmd:{sys.executable} {HOSTILE} hop {name}"
    match("yoxii", engine, "bot:random", "--games", "2", "--depth", "1", "--max-plies", "40",
          user=True)  # fmt: skip
    left = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == name:
                left.append(entry)
    assert left == []


@trio_test
async def test_an_engine_that_cannot_be_started_is_named_with_the_reason(tmp_path: Path) -> None:
    player = TextEnginePlayer(parse_player(f"cmd:{tmp_path / 'no-such-engine'} --flag"))
    with trio.fail_after(LIMIT), pytest.raises(ForfeitError) as info:
        await player.start(YOXII)
    assert info.value.reason == "crash"
    assert info.value.detail == (
        f"cannot start it: {tmp_path / 'no-such-engine'}: No such file or directory"
    )
    await player.close()


def test_the_reaper_ends_the_command_when_its_parent_is_gone(tmp_path: Path) -> None:
    # the parent is killed outright: no close, no signal to the reaper
    pidfile = tmp_path / "pid"
    command = reaper.command(
        [sys.executable, "-c", f"import os, time; open({str(pidfile)!r}, 'w').write("
         "str(os.getpid())); time.sleep(60)"],
        parent=0,
    )  # fmt: skip
    middle = (
        "import os, subprocess, sys, time\n"
        "argv = sys.argv[1:]\n"
        "argv[argv.index('--parent') + 1] = str(os.getpid())\n"
        "subprocess.Popen(argv)\n"
        f"while not os.path.exists({str(pidfile)!r}): time.sleep(0.01)\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", middle, *command], check=True, timeout=LIMIT)
    pid = int(pidfile.read_text())

    async def gone() -> None:
        with trio.fail_after(LIMIT):
            while alive(pid):
                await trio.sleep(0.02)

    trio.run(gone)


@trio_test
async def test_what_a_search_worker_started_ends_with_the_pool(tmp_path: Path) -> None:
    # a plug-in bot runs in a worker process: whatever it starts must end with that worker
    pidfile = tmp_path / "pids"
    worker = (
        f"import sys; sys.path.insert(0, {str(FAKES)!r}); from pathlib import Path\n"
        f"import hostile_engine; hostile_engine.escape(Path({str(pidfile)!r}))\n"
        "from enginesrv.search.worker import main; main()\n"
    )
    with trio.fail_after(LIMIT):
        async with trio.open_nursery() as nursery:
            pool = WorkerPool(nursery, 1, command=(sys.executable, "-c", worker))
            await pool.start()
            pids = await pids_in(pidfile, 3)
            assert all(alive(pid) for pid in pids)
            await pool.aclose()
    assert [pid for pid in pids if alive(pid)] == []


@trio_test
async def test_a_flood_on_standard_error_is_cut_at_the_cap_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "flood.stderr"
    player = TextEnginePlayer(hostile("flood", str(5 << 20)), stderr=log, log_cap=1 << 20)
    with trio.fail_after(LIMIT):
        await player.start(YOXII)
        await player.new_game("g1", 1)
        await player.go(request(clocks=Clocks(depth=1)))
        await player.go(request(moves=("c5",), clocks=Clocks(depth=1)))
        await player.new_game("g2", 2)  # the first game is over: published, cut at 1 MiB
        first = log.read_bytes()
        await player.go(request(clocks=Clocks(depth=1)))
        await player.close()
    note = b"\n[cut here: more than 1 MiB in one game; %d bytes more were left out]\n"
    assert first == b"x" * (1 << 20) + note % ((10 << 20) - (1 << 20))
    assert log.read_bytes() == first + b"x" * (1 << 20) + note % ((5 << 20) - (1 << 20))


@trio_test
async def test_the_client_library_sets_no_process_wide_state() -> None:
    # containment belongs to the arbiter: a program that only uses enginesrv.client keeps
    # its own settings (it is no subreaper, and stays dumpable)
    libc = ctypes.CDLL(None, use_errno=True)
    subreaper = ctypes.c_int(-1)
    before = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    with trio.fail_after(LIMIT):
        engine = await AsyncEngine.popen_in(None, [sys.executable, str(HOSTILE), "victim", "x"])
        await engine.aclose()
    assert libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(subreaper), 0, 0, 0) == 0
    assert subreaper.value == 0
    assert libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == before


def as_a_user(argv: list[str]) -> list[str]:
    """``argv`` run as a user without capabilities would run it (root keeps its uid)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to run without root's capabilities")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", *argv]


def match(
    *args: str, user: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``enginesrv match ARGS``, as a user without capabilities with ``user``
    (``as_a_user``); it must end well."""
    argv = [sys.executable, "-m", "enginesrv.cli", "match", *args]
    proc = subprocess.run(
        as_a_user(argv) if user else argv, capture_output=True, text=True, env=env, cwd=ROOT,
        timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc


def thief_match(tmp_path: Path, *flags: str, user: bool) -> list[str]:
    """A Yin Yang game of a victim, which writes a secret on its standard error and in its
    protocol trace (``--debug``) when it moves first, then of a thief, which attacks when it
    moves, TMPDIR elsewhere than /tmp; the thief's report lines (from its published
    standard error). One game: nothing of it is published before the thief attacks."""
    tmpdir = tmp_path / "elsewhere"
    tmpdir.mkdir()
    out = tmp_path / "event"
    engine = f"{sys.executable} {HOSTILE}"
    argv = [
        "yinyang", f"name=victim:cmd:{engine} victim", f"name=thief:cmd:{engine} thief",
        "--games", "1", "--depth", "1", "--debug", "--out", str(out), *flags,
    ]  # fmt: skip
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    match(*argv, user=user, env=env)
    (secret,) = set(re.findall("VICTIM" + r"-SECRET-[0-9a-f]{16}", victim_log(out)))
    assert secret in (out / "logs" / "game-00001-p1-victim.trace").read_text()
    report = (out / "logs" / "thief.stderr").read_text().splitlines()
    assert any(line.startswith("thief saw ") for line in report)  # it attacked
    # the files it found hold other events' secrets, published once their games were over
    return [line for line in report if line.startswith("thief ") and (
        not line.startswith("thief route other file ") or secret in line)]  # fmt: skip


def victim_log(out: Path) -> str:
    """The victim's standard error, published when its game was over: its secret is in it."""
    return (out / "logs" / "victim.stderr").read_text()


def test_a_same_user_engine_finds_no_route_into_the_arbiter(tmp_path: Path) -> None:
    # uncontained: the arbiter's files and process are no route (the victim's own process
    # is: the threat model says so, and containment closes it)
    report = thief_match(tmp_path, "--no-contain", user=True)
    saw = [line for line in report if line.startswith("thief saw ")]
    assert all(" arbiter=1 " in line for line in saw), saw  # it found the arbiter
    routes = [line for line in report if line.startswith("thief route ")]
    assert [r for r in routes if not r.startswith("thief route victim ")] == []
    assert any(r.startswith("thief route victim fd ") for r in routes)  # a real attacker


def test_a_worker_that_replaces_a_killed_one_cannot_be_caught_as_it_starts(tmp_path: Path) -> None:
    # a same-user engine kills the bot's workers and their spawner, and opens each new
    # process's memory the moment it appears: no worker is ever started while engines run
    # (each is forked, undumpable from its first instant, and a killed spawner is not started
    # again: the bot then loses its games)
    out = tmp_path / "event"
    engine = f"name=catcher:cmd:{sys.executable} {HOSTILE} catch 1.5"
    proc = match("yoxii", engine, "bot:random", "--games", "2", "--depth", "1", "--out", str(out),
                 user=True)  # fmt: skip
    (report,) = [
        line for line in (out / "logs" / "catcher.stderr").read_text().splitlines()
        if line.startswith("catch ")
    ]  # fmt: skip
    fields = dict(word.split("=") for word in report.split()[1:])
    assert int(fields["killed"]) >= 3  # the spawner and its two workers, at least
    assert fields["workers"] == "0"
    assert "no search worker left: the spawner of the search workers is gone" in proc.stdout


@pytest.mark.usefixtures("sandbox")
def test_a_contained_engine_sees_no_other_process_and_no_secret(tmp_path: Path) -> None:
    report = thief_match(tmp_path, user=False)  # Yin Yang: contained by default
    assert {line for line in report if line.startswith("thief saw ")} == {
        "thief saw arbiter=0 victim=0 reaper=0 other=0"  # its own processes alone
    }
    assert [line for line in report if line.startswith("thief route ")] == []


def test_log_cap_bounds_what_an_engine_writes_in_each_game(tmp_path: Path) -> None:
    out = tmp_path / "event"
    flood = f"name=flood:cmd:{sys.executable} {HOSTILE} flood {3 << 20}"
    match("yoxii", flood, "bot:random", "--games", "2", "--depth", "1", "--max-plies", "4",
          "--log-cap", "1", "--out", str(out))  # fmt: skip
    log = (out / "logs" / "flood.stderr").read_bytes()
    game = (
        rb"x{1048576}\n\[cut here: more than 1 MiB in one game; (\d+) bytes more were left out\]\n"
    )
    games = re.fullmatch(game * 2, log)  # each game: 1 MiB kept, then the note
    assert games is not None, log[-300:]
    assert len(games.groups()) == 2
    for dropped in games.groups():  # 3 MiB a move, a move or more a game, 1 MiB kept
        assert (int(dropped) + (1 << 20)) % (3 << 20) == 0


@pytest.mark.usefixtures("sandbox")
def test_a_contained_engine_run_by_root_has_no_capability_to_undo_its_sandbox(
    tmp_path: Path,
) -> None:
    out = tmp_path / "event"
    engine = f"name=root:cmd:{sys.executable} {HOSTILE} escalate"
    match("yinyang", engine, "bot:random", "--games", "1", "--depth", "1", "--out", str(out))
    report = [
        line for line in (out / "logs" / "root.stderr").read_text().splitlines()
        if line.startswith("escalate ")
    ]  # fmt: skip
    assert report == ["escalate caps=0000000000000000 umount=0 remount=0"]

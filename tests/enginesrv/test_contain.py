"""Containing ``cmd:`` engines (``enginesrv.event.play.contain``), tested as a hostile engine
attacks: a spy (``fake_engine.py spy``) that at every ``go`` reads what it finds in every
temporary directory of the host and in the arbiter's own ``TMPDIR`` (outside /tmp), looks
for the arbiter's process in /proc, and connects to a port the test listens on.

``--isolate`` leaves it nothing of these, ``--isolate-network`` gives back the network only;
in a game with hidden information (Yin Yang) an engine is contained without any flag, with
the network, and ``--no-contain`` runs it as it is (the control: what the spy finds there);
where bubblewrap cannot make namespaces the event runs uncontained, saying so in one line."""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import games
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play import contain
from enginesrv.event.play.contain import check_containment, sandbox_command, wrapper_for
from tests.enginesrv.test_tournament import ROOT, cli

FAKE = ROOT / "tests" / "enginesrv" / "fakes" / "fake_engine.py"
TOKEN = f"enginesrv-contain-marker-{os.getpid()}"


@dataclasses.dataclass
class Planted:
    """Secrets left where a contained engine must not see them."""

    tmpdir: Path
    """The arbiter's TMPDIR, outside /tmp, holding a marker."""
    out: Path
    """The event's directory."""
    port: int
    """A port listening on 127.0.0.1."""
    markers: list[Path]


@pytest.fixture
def planted(tmp_path: Path) -> Iterator[Planted]:
    base = Path.home() / ".cache" / "enginesrv-tests" / f"contain-{tmp_path.name}"
    shutil.rmtree(base, ignore_errors=True)
    tmpdir = base / "tmp"
    tmpdir.mkdir(parents=True)
    homes = [Path(p) for p in ("/tmp", "/var/tmp", "/dev/shm") if Path(p).is_dir()]
    markers = [home / TOKEN for home in [*homes, tmpdir]]
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        for marker in markers:
            marker.write_text("secret")
        yield Planted(tmpdir, base / "event", listener.getsockname()[1], markers)
    finally:
        listener.close()
        for marker in markers:
            marker.unlink(missing_ok=True)
        shutil.rmtree(base, ignore_errors=True)


def spy_match(
    planted: Planted, game: str, *flags: str, path: str | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, int]]]:
    """A one-game match of the spy (p1) against a quiet engine, with the arbiter's TMPDIR
    at ``planted.tmpdir``; its result and what the spy reported at each ``go``."""
    spy = f"name=spy:cmd:{sys.executable} {FAKE} spy {TOKEN} {planted.port} {planted.tmpdir}"
    env = {**os.environ, "TMPDIR": str(planted.tmpdir)}
    if path is not None:
        env["PATH"] = path
    proc = cli(
        "match", game, spy, f"name=quiet:cmd:{sys.executable} {FAKE} good", "--games", "1",
        "--st", "0.05", "--out", str(planted.out), *flags, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (planted.out / "logs" / "spy.stderr").read_text()
    seen = [
        {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}
        for line in text.splitlines()
        if line.startswith("spy ")
    ]
    assert seen, text
    return proc, seen


@pytest.mark.usefixtures("sandbox")
def test_isolate_hides_every_temporary_directory_the_arbiter_and_the_network(
    planted: Planted,
) -> None:
    proc, seen = spy_match(planted, "yoxii", "--isolate")
    assert all(s["found"] == 0 for s in seen), seen  # no marker in any temporary directory
    assert all(s["arbiter"] == 0 for s in seen), seen
    assert all(s["net"] == 0 for s in seen), seen
    assert all(s["tmp"] == 1 for s in seen), seen  # its own TMPDIR is a private, writable one
    assert "uncontained" not in proc.stderr


@pytest.mark.usefixtures("sandbox")
def test_isolate_network_gives_back_the_network_and_nothing_else(planted: Planted) -> None:
    _, seen = spy_match(planted, "yoxii", "--isolate", "--isolate-network")
    assert all(s["net"] == 1 for s in seen), seen
    assert all(s["found"] == 0 and s["arbiter"] == 0 for s in seen), seen


@pytest.mark.usefixtures("sandbox")
def test_an_engine_playing_yinyang_is_contained_without_a_flag_and_keeps_the_network(
    planted: Planted,
) -> None:
    proc, seen = spy_match(planted, "yinyang")
    assert all(s["found"] == 0 and s["arbiter"] == 0 for s in seen), seen
    assert all(s["net"] == 1 and s["tmp"] == 1 for s in seen), seen
    assert "uncontained" not in proc.stderr


def test_no_contain_runs_a_yinyang_engine_as_it_is(planted: Planted) -> None:
    # the control: what the spy finds of the host when nothing contains it
    proc, seen = spy_match(planted, "yinyang", "--no-contain")
    assert all(s["found"] == len(planted.markers) for s in seen), seen
    assert all(s["arbiter"] >= 1 and s["net"] == 1 for s in seen), seen
    assert "uncontained" not in proc.stderr  # asked for: no warning


def test_where_bubblewrap_fails_a_yinyang_event_runs_uncontained_saying_so_once(
    planted: Planted, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2; exit 1\n"
    )
    fake.chmod(0o755)
    proc, seen = spy_match(
        planted, "yinyang", path=f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    assert all(s["found"] == len(planted.markers) for s in seen), seen  # indeed uncontained
    lines = proc.stderr.splitlines()
    said = [i for i, line in enumerate(lines) if "uncontained" in line]
    assert len(said) == 1, proc.stderr
    assert lines[said[0]] == (
        "enginesrv match: warning: engines run uncontained: bubblewrap cannot make namespaces "
        "here (bwrap: No permissions to create a new namespace); an engine can read its "
        "opponent's pipes and files through /proc"
    )
    header = next(i for i, line in enumerate(lines) if line.startswith("match yinyang:"))
    assert said[0] < header  # before the first game
    assert "Traceback" not in proc.stderr


def test_isolate_with_no_contain_is_an_error() -> None:
    config = EventConfig("yoxii", ("cmd:./engine", "bot:random"), isolate=True, no_contain=True)
    with pytest.raises(EventError, match="--isolate and --no-contain exclude each other"):
        check_containment(config)


def test_isolate_network_goes_with_isolate() -> None:
    config = EventConfig("yinyang", ("bot:random", "bot:greedy"), isolate_network=True)
    with pytest.raises(EventError, match="--isolate-network goes with --isolate"):
        check_containment(config)


def test_which_events_are_contained_and_which_say_they_are_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    yinyang, yoxii = games.load("yinyang"), games.load("yoxii")
    engines = ("cmd:./engine", "bot:random")
    contain.sandbox_problem.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    try:
        none = wrapper_for(EventConfig("yinyang", engines), yinyang, None)
        assert none.wrap is None
        assert none.notice == (
            "engines run uncontained: bubblewrap (the bwrap command) is not installed; an "
            "engine can read its opponent's pipes and files through /proc"
        )
    finally:
        contain.sandbox_problem.cache_clear()
    # no secret to keep, no engine to contain, asked not to: nothing said
    assert wrapper_for(EventConfig("yoxii", engines), yoxii, None) == (None, None)
    bots = EventConfig("yinyang", ("bot:random", "bot:greedy"))
    assert wrapper_for(bots, yinyang, None) == (None, None)
    asked = EventConfig("yinyang", engines, no_contain=True)
    assert wrapper_for(asked, yinyang, None) == (None, None)
    # the coordinator of a cluster event starts no engine: each worker contains its own
    cluster = wrapper_for(EventConfig("yinyang", engines), yinyang, None, cluster=True)
    assert cluster == (None, None)
    isolated = wrapper_for(EventConfig("yoxii", engines, isolate=True), yoxii, None)
    assert isolated.wrap is not None
    assert isolated.notice is None
    assert "--unshare-net" in isolated.wrap(("./engine",))


def test_bubblewrap_is_probed_for_the_namespaces_the_engines_will_get(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a bubblewrap that makes every namespace but a network one
    fake = tmp_path / "bwrap"
    fake.write_text(
        '#!/bin/sh\nfor word; do [ "$word" = --unshare-net ] && '
        "{ echo 'bwrap: loopback: Failed RTM_NEWADDR' >&2; exit 1; }; done\nexit 0\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    engines = ("cmd:./engine", "bot:random")
    contain.sandbox_problem.cache_clear()
    try:
        with pytest.raises(EventError) as error:
            check_containment(EventConfig("yoxii", engines, isolate=True))
        assert str(error.value) == (
            "--isolate: bubblewrap cannot make namespaces here (bwrap: loopback: Failed "
            "RTM_NEWADDR): run the event where it can, or leave it out"
        )
        check_containment(EventConfig("yoxii", engines, isolate=True, isolate_network=True))
        default = wrapper_for(EventConfig("yinyang", engines), games.load("yinyang"), None)
        assert default.wrap is not None  # contained: it keeps the network
        assert default.notice is None
    finally:
        contain.sandbox_problem.cache_clear()


def test_the_sandbox_hides_each_temporary_directory_and_binds_back_what_the_command_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    base = Path.home() / ".cache" / "enginesrv-tests" / f"contain-{tmp_path.name}"
    shutil.rmtree(base, ignore_errors=True)
    tmpdir, out = base / "tmp", base / "event"
    work = tmpdir / "work"  # the engine's working directory, in the arbiter's TMPDIR
    (work / "arbiter").mkdir(parents=True)  # and the arbiter's own temporary directory in it
    out.mkdir()
    (out / "engine.bin").write_text("")
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", str(work / "arbiter"))
    monkeypatch.chdir(work)
    try:
        for network in (False, True):
            command = ("./engine", str(out / "engine.bin"))
            wrapper = sandbox_command(out, command, network=network)
            pairs = list(itertools.pairwise(wrapper))
            hidden = [path for flag, path in pairs if flag == "--tmpfs"]
            bound = [path for flag, path in pairs if flag == "--ro-bind"]
            assert {"/tmp", "/var/tmp", str(tmpdir), str(out)} <= set(hidden), wrapper
            assert bound == ["/", str(work)], wrapper  # never anything of the event's directory
            # the arbiter's directory, inside a bound one, is hidden again after it
            assert wrapper.index(str(work / "arbiter")) > wrapper.index(str(work))
            assert wrapper[wrapper.index("--setenv") :][:3] == ("--setenv", "TMPDIR", "/tmp")
            assert ("--unshare-net" in wrapper) is not network
            assert {"--unshare-pid", "--unshare-ipc"} <= set(wrapper)
    finally:
        shutil.rmtree(base, ignore_errors=True)

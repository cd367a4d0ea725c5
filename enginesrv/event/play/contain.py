"""Containing the ``cmd:`` engines of an event under bubblewrap (``bwrap``).

Two levels, one sandbox (``sandbox_command``): the file system read-only, a ``/proc`` and
``/dev`` of its own (its own PID namespace: it sees no other process), its own IPC and UTS
namespaces, a private empty tmpfs over every temporary directory of the host (``/tmp``,
``/var/tmp``, ``/dev/shm``, ``$TMPDIR`` and the arbiter's ``tempfile.gettempdir()``) and over
the event's directory, and ``TMPDIR=/tmp`` inside, so that an engine still has somewhere to
write. What the engine's command line needs from those places is bound back read-only
(``engine_paths``), never the event's directory nor the arbiter's own temporary directory.

* ``--isolate``: every ``cmd:`` engine, and no network either (``--isolate-network`` keeps
  the host's); without a working bubblewrap it is an error (``check_containment``).
* By default in a game with hidden information (Yin Yang), where what an engine could read of
  its opponent (its pipes and files through ``/proc``, its temporary files) is the opponent's
  secrets: the same sandbox with the host's network. ``--no-contain`` turns it off. Where
  bubblewrap cannot make namespaces (``sandbox_problem``, probed once per process), the
  engines run uncontained and the user is told so in one line (``Containment.notice``). On a
  cluster each worker contains the engines it starts, and a worker that cannot contain them
  gets no game (its check says why: ``enginesrv.event.runners.cluster``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeAlias

import games
from enginesrv import orphans
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.players import PlayerSpecError, parse_player

Wrap: TypeAlias = Callable[[tuple[str, ...]], tuple[str, ...]]
"""A ``cmd:`` engine's command to the command that runs it contained."""

PROBE_TIMEOUT = 10.0
"""The longest the probe of bubblewrap (``sandbox_problem``) may take, in seconds."""
PROBE_ERROR_CHARS = 200
"""The most characters of bubblewrap's complaint quoted in a notice or an error."""
UNCONTAINED = "an engine can read its opponent's pipes and files through /proc"
"""What an uncontained engine can do, as the notice says it."""
_TMP_ENVIRON = ("TMPDIR", "TEMP", "TMP")
"""The variables that name a temporary directory (``tempfile.gettempdir`` reads them)."""


class Containment(NamedTuple):
    """How an event's ``cmd:`` engines run: ``wrap`` (None: as they are) and, when they run
    uncontained in a game that wanted them contained, a one-line ``notice`` saying why."""

    wrap: Wrap | None
    notice: str | None = None


def check_containment(config: EventConfig) -> None:
    """Refuse the containment flags that cannot be honoured, before anything runs.

    Raises:
        EventError: ``--isolate`` with ``--no-contain``, ``--isolate-network`` without
            ``--isolate``, or ``--isolate`` where bubblewrap is missing or cannot make
            namespaces.
    """
    if config.isolate and config.no_contain:
        raise EventError(
            "--isolate and --no-contain exclude each other: --isolate contains every cmd: "
            "engine, --no-contain none; give one of them"
        )
    if config.isolate_network and not config.isolate:
        raise EventError(
            "--isolate-network goes with --isolate: give both, or neither (engines contained "
            "by default keep the network)"
        )
    if not config.isolate:
        return
    if shutil.which("bwrap") is None:
        raise EventError(
            "--isolate needs bubblewrap (the bwrap command), which is not installed: install "
            "it (Debian: apt-get install bubblewrap) or leave --isolate out"
        )
    problem = sandbox_problem(network=config.isolate_network)
    if problem is not None:
        raise EventError(f"--isolate: {problem}: run the event where it can, or leave it out")


def wrapper_for(
    config: EventConfig, game: games.Game, out_dir: Path | None, *, cluster: bool = False
) -> Containment:
    """How the ``cmd:`` engines of the event ``config`` (of ``game``, its directory
    ``out_dir``) run: under ``--isolate`` without network (``--isolate-network``: with), in a
    game with hidden information contained with the network unless ``--no-contain``, else as
    they are. Where the default containment cannot be had (no working bubblewrap) they run
    as they are, with a notice. The coordinator of a ``cluster`` event starts no engine: its
    workers contain theirs. May run bubblewrap once (``sandbox_problem``): call it from a
    thread in an event loop."""
    if not _has_command(config.players):
        return Containment(None)
    if config.isolate:
        network = config.isolate_network
        return Containment(lambda command: sandbox_command(out_dir, command, network=network))
    if not game.hidden_information or config.no_contain:
        return Containment(None)
    if cluster:
        return Containment(None)
    problem = sandbox_problem(network=True)
    if problem is not None:
        return Containment(None, f"engines run uncontained: {problem}; {UNCONTAINED}")
    return Containment(lambda command: sandbox_command(out_dir, command, network=True))


def _has_command(players: Iterable[str]) -> bool:
    """Whether one of ``players`` is a ``cmd:`` engine (a spec that does not parse is not)."""
    for text in players:
        with contextlib.suppress(PlayerSpecError):
            if parse_player(text).kind == "cmd":
                return True
    return False


@functools.cache
def sandbox_problem(*, network: bool) -> str | None:
    """Why bubblewrap cannot contain an engine here (not installed, no namespaces for it, no
    answer within ``PROBE_TIMEOUT``), as words that follow "engines run uncontained: ";
    None when it can. Without ``network`` (the engine keeps the host's) it must make a
    network namespace too. Probed once per process for each ``network``."""
    program = shutil.which("bwrap")
    if program is None:
        return "bubblewrap (the bwrap command) is not installed"
    probe = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    probe += [] if network else ["--unshare-net"]
    try:
        with orphans.spawning():  # a child of the arbiter it does not keep: not an orphan
            proc = subprocess.run(
                [*probe, "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
    except subprocess.TimeoutExpired:
        return f"bubblewrap did not make its namespaces within {PROBE_TIMEOUT:g} s"
    except OSError as exc:
        return f"bubblewrap cannot be run ({exc.strerror or exc})"
    if proc.returncode == 0:
        return None
    said = _one_line(proc.stderr) or f"exit status {proc.returncode}"
    return f"bubblewrap cannot make namespaces here ({said})"


def _one_line(data: bytes) -> str:
    """The first non-empty line of ``data``, control characters escaped, capped."""
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    first = next((line for line in lines if line), "")
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in first)
    if len(text) > PROBE_ERROR_CHARS:
        text = text[: PROBE_ERROR_CHARS - 3] + "..."
    return text


def sandbox_command(
    out_dir: Path | None, command: tuple[str, ...] = (), *, network: bool = False
) -> tuple[str, ...]:
    """The bubblewrap command put before the ``cmd:`` engine ``command`` (module docstring):
    with the host's ``network`` or none. The private directories (``temporary_dirs`` and
    ``out_dir``) are empty tmpfs; what the engine needs of them (``engine_paths``) is bound
    back read-only, and should one of these hold a private directory, an empty one is put
    over it again (``_mounts``)."""
    wrapper = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = set(temporary_dirs())
    event = out_dir.resolve() if out_dir is not None else None
    if event is not None and event.is_dir():  # (a missing one cannot be mounted over)
        hidden.add(event)
    needed = {
        path
        for path in engine_paths(command)
        if any(path.is_relative_to(root) for root in hidden)
        and (event is None or not path.is_relative_to(event))
    }
    wrapper += _mounts(hidden, needed)
    wrapper += ["--setenv", "TMPDIR", "/tmp"]
    wrapper += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    # run by root, bubblewrap would leave the engine root's capabilities, with which it could
    # unmount what hides the host's files or remount them writable: none are left
    wrapper += ["--cap-drop", "ALL"]
    wrapper += [] if network else ["--unshare-net"]
    wrapper += ["--die-with-parent", "--new-session", "--"]
    return tuple(wrapper)


def temporary_dirs() -> list[Path]:
    """Every temporary directory of the host that exists: ``/tmp``, ``/var/tmp``,
    ``/dev/shm``, those ``TMPDIR``, ``TEMP`` and ``TMP`` name, and the arbiter's own
    (``tempfile.gettempdir()``), resolved; never ``/`` (which cannot be hidden)."""
    names = ["/tmp", "/var/tmp", "/dev/shm", *(os.environ.get(k, "") for k in _TMP_ENVIRON)]
    names.append(tempfile.gettempdir())
    out: list[Path] = []
    for name in names:
        if not name:
            continue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            path = Path(name).resolve()
            if path.is_dir() and path != Path(path.anchor) and path not in out:
                out.append(path)
    return out


def _mounts(hidden: set[Path], needed: set[Path]) -> list[str]:
    """The bubblewrap mounts that make each of ``hidden`` an empty tmpfs and bind each of
    ``needed`` read-only over it, outer paths first: a path is mounted only where the mount
    it lies in differs (a bound directory brings what is inside it, a second mount inside a
    read-only one can fail), so that a private directory inside a bound one is hidden again
    and a needed path inside that one bound again. A path both hidden and needed is
    hidden."""
    kinds = dict.fromkeys(needed, "--ro-bind") | dict.fromkeys(hidden, "--tmpfs")
    made: list[tuple[Path, str]] = []
    out: list[str] = []
    for path in sorted(kinds, key=lambda p: (len(p.parts), p)):
        kind = kinds[path]
        # the innermost mount made so far that holds ``path`` (ancestors come first)
        within = next((k for p, k in reversed(made) if path.is_relative_to(p)), "--ro-bind")
        if kind == within:
            continue
        made.append((path, kind))
        out += [kind, str(path)] if kind == "--tmpfs" else [kind, str(path), str(path)]
    return out


def engine_paths(command: Sequence[str]) -> set[Path]:
    """The paths an engine run as ``command`` needs: the working directory, and each existing
    file or directory its words name (a word ``-x=PATH``: the PATH; the program: where
    ``PATH`` finds it) both as written, made absolute, and with its symbolic links resolved,
    with the ``program_dirs`` of each. As written, because a program may learn from the path
    it was named by where its own files are (a Python finds its virtual environment so:
    ``venv/bin/python`` is a link to the base interpreter)."""
    needed = {Path.cwd().resolve()}
    words = list(command)
    if words and os.sep not in words[0]:
        words[0] = shutil.which(words[0]) or words[0]
    for word in words:
        if word.startswith("-"):
            word = word.partition("=")[2]
        if not word:
            continue
        with contextlib.suppress(OSError, ValueError):
            written = Path(os.path.abspath(word))
            if not written.exists():
                continue
            resolved = written.resolve()
            needed |= {written, resolved, *program_dirs(written), *program_dirs(resolved)}
    return needed


def program_dirs(program: Path) -> list[Path]:
    """The directories a program at ``program`` needs beside itself to start: the Python
    virtual environment it is in (the directory of its ``pyvenv.cfg``, in the program's
    directory or the one above, where Python looks), with the installation of the base
    interpreter the environment names (its ``home``); and the installation a program in a
    ``bin`` directory belongs to (``PREFIX/bin/python3`` finds its standard library in
    ``PREFIX/lib``)."""
    out: list[Path] = []
    for venv in (program.parent, program.parent.parent):
        if (venv / "pyvenv.cfg").is_file():
            out.append(venv)
            home = _venv_home(venv / "pyvenv.cfg")
            if home is not None:
                out.append(home.parent if home.name == "bin" else home)
            break
    if program.parent.name == "bin":
        out.append(program.parent.parent)
    return out


def _venv_home(config: Path) -> Path | None:
    """The ``home`` of a virtual environment's ``pyvenv.cfg`` (the base interpreter's
    directory), resolved; None when the file cannot be read or has no such line."""
    try:
        with open(config, "rb") as file:
            text = file.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "home" and value.strip():
            with contextlib.suppress(OSError, ValueError):
                return Path(value.strip()).resolve()
    return None

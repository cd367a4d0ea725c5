"""The schedule of an event and its seeds: which games are played, in which order, with
which colours and openings, and the seeds every game's bots get. All of it follows from the
configuration alone, never from the order games finish in, so a resumed event ends with
exactly the games an uninterrupted one plays."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from enginesrv.event.config import EventConfig
from enginesrv.event.players import (
    PlayerSpec,
    parse_player,
)


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the schedule. ``first`` and ``second`` index the pairing's players (the
    first-named is ``first``); ``p1`` is the one that moves first."""

    id: int
    round: int
    pairing: int
    first: int
    second: int
    p1: int
    pair: int
    opening: int


def pairings(count: int, gauntlet: bool) -> list[tuple[int, int]]:
    """The pairings of ``count`` players: every two (round robin) or the first with each."""
    if gauntlet:
        return [(0, j) for j in range(1, count)]
    return [(i, j) for i in range(count) for j in range(i + 1, count)]


def make_schedule(config: EventConfig, openings: int) -> list[ScheduledGame]:
    """The games of the event, in the order they are started (module docstring)."""
    pairs = pairings(len(config.players), config.gauntlet)
    order = list(range(openings))
    if config.openings_order == "random":
        random.Random(f"openings:{config.seed}").shuffle(order)
    out: list[ScheduledGame] = []
    for rnd in range(config.rounds):
        for number, (i, j) in enumerate(pairs):
            for g in range(config.games):
                k = rnd * config.games + g
                pair = k // 2
                slot = pair if config.repeat else k
                out.append(
                    ScheduledGame(
                        id=len(out) + 1,
                        round=rnd + 1,
                        pairing=number,
                        first=i,
                        second=j,
                        p1=i if k % 2 == 0 else j,
                        pair=pair,
                        opening=order[slot % openings],
                    )
                )
    return out


def game_seeds(config: EventConfig, game_id: int) -> tuple[int, int]:
    """The ``Seed`` of p1's and p2's bots in one game: from the event seed and the game alone."""
    rng = random.Random(f"game:{config.seed}:{game_id}")
    return rng.randrange(2**31), rng.randrange(2**31)


def secret_seeds() -> tuple[int, int]:
    """The ``SecretSeed`` of p1's and p2's bots in a game with hidden information: drawn from the
    operating system, so that no one who knows the event's seed can compute a bot's secret
    choices (Yin Yang laws)."""
    return secrets.randbelow(2**31 - 1) + 1, secrets.randbelow(2**31 - 1) + 1


def isolation(out_dir: Path | None, command: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The bubblewrap command that ``--isolate`` puts before a ``cmd:`` engine: the file
    system read-only, a private /tmp, a /proc of its own (it sees no other process) and, over
    the event's directory, an empty one. What the engine needs from the real /tmp is bound
    into the private one, read-only, and nothing else of it: the working directory, the files
    its command line names (``engine_paths``) and what a program among them needs to start
    (``program_dirs``). Should one of these directories hold the arbiter's own temporary
    directory (where engines' logs wait until their game is over), an empty one is put over
    it too."""
    wrapper = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    wrapper += ["--tmpfs", "/tmp"]
    tmp = Path("/tmp")
    binds = outermost(p for p in engine_paths(command) if p.is_relative_to(tmp) and p != tmp)
    for path in binds:
        wrapper += ["--ro-bind", str(path), str(path)]
    hidden = [] if out_dir is None else [out_dir.resolve()]
    private = Path(tempfile.gettempdir()).resolve()
    if any(private.is_relative_to(path) for path in binds):
        hidden.append(private)
    for path in hidden:
        wrapper += ["--tmpfs", str(path)]  # after the binds: hidden even inside one of them
    wrapper += ["--unshare-pid", "--die-with-parent", "--new-session", "--"]
    return tuple(wrapper)


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


def outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` in order, less those inside another of them: a directory bound whole
    brings what is inside it, and a second mount inside a read-only one can fail."""
    out: list[Path] = []
    for path in sorted(set(paths)):
        if not any(path.is_relative_to(kept) for kept in out):
            out.append(path)
    return out


def named_specs(players: Iterable[str]) -> list[PlayerSpec]:
    """The event's player specs, each named by its display name (``display_names``).

    Raises:
        PlayerSpecError: a spec that does not parse.
    """
    specs = [parse_player(text) for text in players]
    names = display_names(specs)
    return [dataclasses.replace(s, name=n) for s, n in zip(specs, names, strict=True)]


def display_names(specs: Iterable[PlayerSpec]) -> list[str]:
    """Unique display names: a repeated name gets ``#2``, ``#3``..."""
    out: list[str] = []
    for spec in specs:
        name = spec.name
        n = 1
        while name in out:
            n += 1
            name = f"{spec.name}#{n}"
        out.append(name)
    return out

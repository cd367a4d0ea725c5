"""The self-play file: each game's rows as a part file of its own while the games go on
(``OUT.parts/game-NNNNNN.npz``, written whole and then renamed into place, so that a part is
there complete or not at all), and the parts joined into ``OUT`` at the end.

A row is one decision of the bot: its observation, the action played, the player, its ply,
the game's result for that player, and the scores of the first decisions its search scored
(``moves_*``, ``moves_count`` of them a row, in order: row ``i`` owns entries
``moves_offset[i]`` to ``moves_offset[i + 1]``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from enginesrv.safefiles import FileRefusedError, open_regular, read_capped

CONFIG = "config.json"
WINNER_DRAW, WINNER_NONE = -1, -2
"""``game_winner`` of a draw, and of a game truncated at ``max_plies`` (no result)."""


@dataclass
class GameRows:
    """The rows of one game as they are played."""

    number: int
    observations: list[npt.NDArray[np.float32]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    players: list[int] = field(default_factory=list)
    plies: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    move_actions: list[int] = field(default_factory=list)
    move_expectations: list[float] = field(default_factory=list)
    move_kinds: list[int] = field(default_factory=list)
    move_values: list[int] = field(default_factory=list)
    move_depths: list[int] = field(default_factory=list)
    trail: list[int] = field(default_factory=list)
    """Every action of the game, the random ones and the bot's, in order (a game can be
    replayed from them)."""

    def arrays(self, winner: int, length: int, shape: tuple[int, ...]) -> dict[str, Any]:
        """The part file's arrays, once the game has ended (``winner``: 0, 1, or
        ``WINNER_DRAW`` / ``WINNER_NONE``) after ``length`` decisions."""
        players = np.array(self.players, dtype=np.int8)
        if winner < 0:
            results = np.zeros(len(players), dtype=np.float32)
        else:
            results = np.where(players == winner, 1.0, -1.0).astype(np.float32)
        observations = (
            np.stack(self.observations) if self.observations else np.zeros((0, *shape), np.float32)
        )
        return {
            "observation": observations.astype(np.float32, copy=False),
            "action": np.array(self.actions, dtype=np.int32),
            "player": players,
            "ply": np.array(self.plies, dtype=np.int32),
            "result": results,
            "game": np.full(len(players), self.number, dtype=np.int32),
            "moves_count": np.array(self.counts, dtype=np.int32),
            "moves_action": np.array(self.move_actions, dtype=np.int32),
            "moves_expectation": np.array(self.move_expectations, dtype=np.float32),
            "moves_kind": np.array(self.move_kinds, dtype=np.int8),
            "moves_value": np.array(self.move_values, dtype=np.int32),
            "moves_depth": np.array(self.move_depths, dtype=np.int16),
            "game_number": np.array([self.number], dtype=np.int32),
            "game_winner": np.array([winner], dtype=np.int8),
            "game_plies": np.array([length], dtype=np.int32),
            "trail_action": np.array(self.trail, dtype=np.int32),
        }


PER_ROW = ("observation", "action", "player", "ply", "result", "game", "moves_count")
PER_MOVE = ("moves_action", "moves_expectation", "moves_kind", "moves_value", "moves_depth")
PER_GAME = ("game_number", "game_winner", "game_plies")
PER_ACTION = ("trail_action",)
"""Every action of every game, in order: game ``g``'s are the ``game_plies[g]`` entries from
``trail_offset[g]``."""


MAX_CONFIG = 1 << 16
"""The largest ``config.json`` read back (a run's is a few hundred bytes)."""
MAX_PART = 1 << 30
"""The largest part file read back (a game's rows are at most some megabytes)."""
PART = re.compile(r"game-(\d{6,})\.npz")


class DamagedPartsError(Exception):
    """Part files that are no game of this run: removed, to be played again."""

    def __init__(self, numbers: list[int]) -> None:
        super().__init__(f"{len(numbers)} damaged part files removed")
        self.numbers = numbers


class Parts:
    """The part files of a run (``OUT.parts``) and its settings. One run at a time writes
    them (a lock on the folder)."""

    def __init__(self, out: Path) -> None:
        if out.name in ("", ".", ".."):
            raise ValueError(f"{out}: name a file to write, not a folder")
        self.out = out
        self.folder = out.with_name(out.name + ".parts")
        self._lock: int | None = None

    def part(self, number: int) -> Path:
        return self.folder / f"game-{number:06d}.npz"

    def begin(self, config: dict[str, Any]) -> set[int]:
        """Start a run, or go on with the one whose parts are there: the games done. A
        temporary file a stopped run left is removed.

        Raises:
            ValueError: OUT is a folder or is there already, another run writes these parts,
                or the parts there are of other settings (which it names).
            OSError: the folder cannot be made or read.
        """
        if self.out.is_dir():
            raise ValueError(f"{self.out}: a folder; name a file to write")
        if self.out.exists() and not self.folder.exists():
            raise ValueError(f"{self.out}: it exists; remove it or write another file")
        self.folder.mkdir(exist_ok=True)
        self._take_lock()
        path = self.folder / CONFIG
        if path.exists() or path.is_symlink():
            _same_settings(_read_config(path), config, self.folder)
        else:
            _write_whole(path, json.dumps(config, sort_keys=True).encode())
        done = set()
        for entry in os.scandir(self.folder):
            if entry.name.startswith(".game-"):
                os.unlink(entry.path)  # a save cut off (the lock says no other run is here)
            elif (found := PART.fullmatch(entry.name)) and int(found[1]) < config["games"]:
                done.add(int(found[1]))
        return done

    def _take_lock(self) -> None:
        descriptor = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise ValueError(f"{self.folder}: another run writes it now") from None
        self._lock = descriptor

    def save(self, number: int, arrays: dict[str, Any]) -> None:
        """The part file of game ``number``, complete or not at all."""
        temporary = self.folder / f".game-{number:06d}.{os.getpid()}.npz"
        try:
            with temporary.open("wb") as file:
                np.savez(file, **arrays)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.part(number))
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def join(self, config: dict[str, Any], shape: tuple[int, ...]) -> dict[str, Any]:
        """Every part, in game order, joined into ``OUT`` (written whole, then renamed); the
        parts are removed after. The arrays written.

        Raises:
            DamagedPartsError: parts that are no game of this run (of ``shape`` observations):
                removed, for the caller to play those games again.
        """
        loaded, damaged = [], []
        for number in range(config["games"]):
            part = _load_part(self.part(number), number, shape)
            if part is None:
                self.part(number).unlink(missing_ok=True)
                damaged.append(number)
            else:
                loaded.append(part)
        if damaged:
            raise DamagedPartsError(damaged)
        joined: dict[str, Any] = {}
        for key in PER_ROW + PER_MOVE + PER_GAME + PER_ACTION:  # one array at a time
            joined[key] = np.concatenate([p.pop(key) for p in loaded])
        joined["moves_offset"] = _offsets(joined["moves_count"])
        joined["trail_offset"] = _offsets(joined["game_plies"])
        joined["config"] = np.array(json.dumps(config, sort_keys=True))
        temporary = self.out.with_name(f".{self.out.name}.{os.getpid()}.tmp")
        try:
            with temporary.open("wb") as file:
                np.savez_compressed(file, **joined)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.out)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        shutil.rmtree(self.folder)
        self.close()
        return joined

    def close(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _read_config(path: Path) -> dict[str, Any]:
    """A run's settings as it kept them.

    Raises:
        ValueError: it is no file of a run's settings (said with its path).
    """
    try:
        data = read_capped(open_regular(path, follow=False), MAX_CONFIG)
    except FileRefusedError as exc:
        raise ValueError(f"{path}: {exc.reason}; remove the folder to start anew") from None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        config = json.loads(data)
    except (ValueError, RecursionError):
        config = None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: not a run's settings; remove the folder to start anew")
    return config


def _same_settings(before: dict[str, Any], config: dict[str, Any], folder: Path) -> None:
    changed = sorted(k for k in set(config) | set(before) if config.get(k) != before.get(k))
    if changed:
        said = ", ".join(f"{k} {before.get(k)!r} (now {config.get(k)!r})" for k in changed)
        raise ValueError(
            f"{folder} holds the games of other settings: {said}; run it with them again to go "
            "on, or remove the folder"
        )


def _load_part(path: Path, number: int, shape: tuple[int, ...]) -> dict[str, Any] | None:
    """The arrays of game ``number``'s part, or None when it is no such part (not a file, too
    large, not an npz of the right arrays, another game's, or inconsistent)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_PART:
            return None
        with path.open("rb") as file, np.load(file, allow_pickle=False) as data:
            part = {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError):
        return None
    keys = PER_ROW + PER_MOVE + PER_GAME + PER_ACTION
    if set(part) != set(keys) or part["game_number"].tolist() != [number]:
        return None
    rows = len(part["action"])
    same = all(len(part[key]) == rows for key in PER_ROW)
    moves = all(len(part[key]) == int(part["moves_count"].sum()) for key in PER_MOVE)
    games = all(len(part[key]) == 1 for key in PER_GAME)
    trail = len(part["trail_action"]) == int(part["game_plies"][0])
    fits = part["observation"].shape[1:] == shape and part["observation"].dtype == np.float32
    return part if same and moves and games and trail and fits else None


def _offsets(counts: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
    """Where each run of entries begins, and the end: ``len(counts) + 1`` offsets."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _write_whole(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)

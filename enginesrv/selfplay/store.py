"""The self-play file: each game's rows as a part file of its own while the games go on
(``OUT.parts/game-NNNNNN.npz``, written whole and then renamed into place, so that a part is
there complete or not at all), and the parts joined into ``OUT`` at the end.

A row is one decision of the bot: its observation, the action played, the player, its ply,
the game's result for that player, and the scores of the first decisions its search scored
(``moves_*``, ``moves_count`` of them a row, in order: row ``i`` owns entries
``moves_offset[i]`` to ``moves_offset[i + 1]``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

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


class Parts:
    """The part files of a run (``OUT.parts``) and its settings."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.folder = out.with_name(out.name + ".parts")

    def part(self, number: int) -> Path:
        return self.folder / f"game-{number:06d}.npz"

    def begin(self, config: dict[str, Any]) -> set[int]:
        """Start a run, or go on with the one whose parts are there: the games done.

        Raises:
            ValueError: the parts there are of other settings (which it names).
            OSError: the folder cannot be made or read.
        """
        path = self.folder / CONFIG
        if path.exists():
            before = json.loads(path.read_text(encoding="utf-8"))
            changed = sorted(k for k in set(config) | set(before) if config.get(k) != before.get(k))
            if changed:
                said = ", ".join(f"{k} {before.get(k)!r} (now {config.get(k)!r})" for k in changed)
                raise ValueError(
                    f"{self.folder} holds the games of other settings: {said}; run it with "
                    "them again to go on, or remove the folder"
                )
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_whole(path, json.dumps(config, sort_keys=True).encode())
        return {n for n in range(config["games"]) if self.part(n).exists()}

    def save(self, number: int, arrays: dict[str, Any]) -> None:
        """The part file of game ``number``, complete or not at all."""
        temporary = self.folder / f".game-{number:06d}.{os.getpid()}.npz"
        with temporary.open("wb") as file:
            np.savez(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.part(number))

    def join(self, config: dict[str, Any]) -> dict[str, Any]:
        """Every part, in game order, joined into ``OUT`` (written whole, then renamed); the
        parts are removed after. The arrays written."""
        loaded = []
        for number in range(config["games"]):
            with np.load(self.part(number), allow_pickle=False) as part:
                loaded.append({key: part[key] for key in part.files})
        keys = PER_ROW + PER_MOVE + PER_GAME + PER_ACTION
        joined = {key: np.concatenate([p[key] for p in loaded]) for key in keys}
        joined["moves_offset"] = _offsets(joined["moves_count"])
        joined["trail_offset"] = _offsets(joined["game_plies"])
        joined["config"] = np.array(json.dumps(config, sort_keys=True))
        temporary = self.out.with_name(f".{self.out.name}.{os.getpid()}.tmp")
        with temporary.open("wb") as file:
            arrays: dict[str, Any] = joined
            np.savez_compressed(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.out)
        for number in range(config["games"]):
            self.part(number).unlink()
        (self.folder / CONFIG).unlink()
        self.folder.rmdir()
        return joined


def _offsets(counts: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
    """Where each run of entries begins, and the end: ``len(counts) + 1`` offsets."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _write_whole(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)

"""What a ladder is (``LadderSettings``): its games, its time control and the player its
ratings are anchored at, kept in its folder (``DIR/ladder.json``) by its first run, so that
every later run of the same folder plays the same games at the same control and its ratings
stay one scale. The anchor is the first house bot of the first run that has one. The rest
(the house bots, the grace, the address) belongs to a run and may change between runs."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import games
from enginesrv.event.play.controls import Adjudication, MoveLimits, TimeControl
from enginesrv.safefiles import FileRefusedError, open_regular, read_capped

SETTINGS = "ladder.json"
"""The settings' file in a ladder's folder."""
MAX_SETTINGS_BYTES = 4096
GRACE = 10.0
"""Seconds a player whose connection dropped during a game has to come back (a new
connection under its name) before it forfeits the game (``--grace``); never past its clock."""
MIN_GAMES = 10
"""The games a player needs before the leaderboard shows its rating (``--min-games``)."""
LINKS_PER_PLAYER = 8
"""The most connections one account may hold at once (``ladder-client --games N`` opens N);
a connection past it is refused."""


class LadderError(Exception):
    """A ladder that cannot run as asked, in one line."""


@dataclass(frozen=True, slots=True)
class LadderSettings:
    """A ladder's games and time control (module docstring)."""

    games: tuple[str, ...]
    tc: str
    anchor: str | None = None
    """The player the ratings are anchored at (0); None: the rated players average 0."""

    @classmethod
    def make(cls, names: list[str], tc: str, anchor: str | None = None) -> LadderSettings:
        """Settings from the command line's ``--game`` and ``--tc``, checked.

        Raises:
            LadderError: an unknown game, a game given twice, a bad or infinite control.
        """
        if not names:
            raise LadderError("a ladder plays one game at least: give --game GAME")
        for name in names:
            if name not in games.available():
                raise LadderError(
                    f"--game {name!r} is not a game; the games: {', '.join(games.available())}"
                )
        if len(set(names)) != len(names):
            raise LadderError("--game: each game once")
        try:
            control = TimeControl.parse(tc)
        except ValueError as exc:
            raise LadderError(f"--tc: {exc}") from None
        if control.infinite:
            raise LadderError("--tc inf: a ladder's games are played on a clock")
        return cls(tuple(names), str(control), anchor)

    @property
    def control(self) -> TimeControl:
        return TimeControl.parse(self.tc)

    @property
    def limits(self) -> MoveLimits:
        return MoveLimits(tc=self.control)

    def adjudication(self) -> Adjudication:
        """How the ladder's games end when the rules do not end them: the arbiter's defaults
        (a draw at its ply cap), with a time margin of 50 ms for the network's delay."""
        return Adjudication(timemargin_ms=50)

    def to_json(self) -> str:
        return json.dumps({"games": list(self.games), "tc": self.tc, "anchor": self.anchor})

    def kept(self, folder: Path) -> LadderSettings:
        """These settings, once they are the folder's: written by its first run, compared on
        every later one.

        Raises:
            LadderError: the folder's ladder plays other games or another control (both
                named), or its settings cannot be read or written.
        """
        path = folder / SETTINGS
        try:
            data = read_capped(open_regular(path, follow=False), MAX_SETTINGS_BYTES)
        except FileNotFoundError:
            self._write(path)
            return self
        except FileRefusedError as exc:
            raise LadderError(f"{path} {exc.reason}: it is not read") from None
        except OSError as exc:
            raise LadderError(f"{path}: {exc.strerror or exc}") from None
        stored = _parse(path, data)
        if (stored.games, stored.tc) != (self.games, self.tc):
            raise LadderError(
                f"{folder} is a ladder of {', '.join(stored.games)} at --tc {stored.tc}, not "
                f"{', '.join(self.games)} at --tc {self.tc}: give those, or another --out"
            )
        if stored.anchor is None and self.anchor is not None:
            self._write(path)  # its first house bot: the scale from now on
            return self
        return stored

    def _write(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".new")
        try:
            tmp.unlink(missing_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with open(os.open(tmp, flags, 0o644), "w", encoding="utf-8") as fh:
                fh.write(self.to_json() + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise LadderError(f"{path}: cannot write the ladder's settings: {exc}") from None


def _parse(path: Path, data: bytes) -> LadderSettings:
    try:
        raw = json.loads(data)
        names, tc, anchor = raw["games"], raw["tc"], raw.get("anchor")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TypeError("games")
        if not isinstance(tc, str):
            raise TypeError("tc")
        if anchor is not None and (not isinstance(anchor, str) or len(anchor) > 100):
            raise TypeError("anchor")
        return LadderSettings.make(list(names), tc, anchor)
    except RecursionError:
        raise LadderError(f"{path} is damaged (nested too deep); it is kept as it is") from None
    except (ValueError, KeyError, TypeError, LadderError) as exc:
        raise LadderError(f"{path} is damaged ({exc}); it is kept as it is") from None


def read_settings(folder: Path) -> LadderSettings | None:
    """The settings of the ladder kept in ``folder``; None when it is no ladder's folder.

    Raises:
        LadderError: the settings' file is damaged or cannot be read.
    """
    path = folder / SETTINGS
    try:
        data = read_capped(open_regular(path, follow=False), MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return None
    except FileRefusedError as exc:
        raise LadderError(f"{path} {exc.reason}: it is not read") from None
    except OSError as exc:
        raise LadderError(f"{path}: {exc.strerror or exc}") from None
    return _parse(path, data)

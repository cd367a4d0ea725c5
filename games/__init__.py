"""Rules engines: one module per game behind the interface of ``games.base``.

What belongs here: board geometry, move generation, make/unmake, notation, position strings,
outcomes and the registry. Standard library only; no I/O, no printing, no clocks. Game modules
are imported on first ``load``, so importing this package builds nothing.

>>> import games
>>> state = games.load("yinsh").new_state()
>>> state.to_string()
'4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from games.base import (
    NOBODY,
    P1,
    P2,
    Game,
    Move,
    Outcome,
    Player,
    State,
    perft,
    perft_divide,
    replay,
)
from games.errors import (
    GameError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    ReplayError,
    UnknownGameError,
)

__all__ = [
    "NOBODY",
    "P1",
    "P2",
    "Game",
    "GameError",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidPositionError",
    "Move",
    "Outcome",
    "Player",
    "ReplayError",
    "State",
    "UnknownGameError",
    "available",
    "load",
    "perft",
    "perft_divide",
    "replay",
]

# name -> (module, factory attribute, argument). A new game joins every generic test and CLI
# command by adding its line here.
_REGISTRY: dict[str, tuple[str, str, str]] = {
    "yinsh": ("games.yinsh", "YinshGame", "yinsh"),
    "yinsh+blitz": ("games.yinsh", "YinshGame", "yinsh+blitz"),
    "yohoho": ("games.yohoho", "YohohoGame", "yohoho"),
    "yoxii": ("games.yoxii", "YoxiiGame", "yoxii"),
    "yinyang": ("games.yinyang", "YinYangGame", "yinyang"),
}

_loaded: dict[str, Game] = {}


def available() -> list[str]:
    """The names of all registered games, sorted."""
    return sorted(_REGISTRY)


def load(name: str) -> Game:
    """The game registered as ``name`` (one shared, immutable ``Game`` object per name).

    Raises:
        UnknownGameError: ``name`` is not registered; the message lists the known names.
    """
    game = _loaded.get(name)
    if game is not None:
        return game
    entry = _REGISTRY.get(name)
    if entry is None:
        raise UnknownGameError(name, "unknown game; known games: " + ", ".join(available()))
    module_name, attr, arg = entry
    factory: Callable[[str], Game] = getattr(importlib.import_module(module_name), attr)
    game = factory(arg)
    _loaded[name] = game
    return game

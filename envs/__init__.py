"""The games as PettingZoo environments, for machine learning (docs/envs.md).

``make(name, **options)`` builds the AEC environment of a game (``yinsh``, ``yinsh+blitz``,
``yohoho``, ``yoxii``, ``yinyang``); ``bot_policy(bot, options)`` plays one of our bots inside
an environment loop. This package imports ``games`` and ``bots`` only (and numpy, gymnasium
and PettingZoo: the ``[envs]`` extra).
"""

from __future__ import annotations

import importlib
from typing import Any

from envs.adapter import Adapter, TokenAdapter
from envs.core import AGENTS, GameEnv
from envs.policy import BotPolicy, bot_policy

ADAPTERS: dict[str, str] = {
    "yinsh": "envs.yinsh:YinshAdapter",
    "yinsh+blitz": "envs.yinsh:BlitzAdapter",
    "yohoho": "envs.yohoho:YohohoAdapter",
    "yoxii": "envs.yoxii:YoxiiAdapter",
    "yinyang": "envs.yinyang:YinYangAdapter",
}
"""Each environment's adapter class (module:class), by name; a module is imported on first
use."""


def names() -> list[str]:
    """The names ``make`` takes."""
    return sorted(ADAPTERS)


def make(name: str, **options: Any) -> GameEnv:
    """The environment of game ``name``. Options: ``render_mode`` (None, ``"ansi"``: ``render``
    returns the board as text, ``"human"``: prints it after each step) and ``max_plies`` (the
    actions after which a game is truncated; each game's default is in docs/envs.md)."""
    if name not in ADAPTERS:
        raise ValueError(f"envs.make: no environment {name!r}; there are {', '.join(names())}")
    return GameEnv(adapter(name), **options)


def adapter(name: str) -> Adapter:
    """A new adapter of environment ``name`` (its action table and observations)."""
    module, cls = ADAPTERS[name].split(":")
    made = getattr(importlib.import_module(module), cls)()
    assert isinstance(made, Adapter)
    return made


__all__ = [
    "AGENTS",
    "Adapter",
    "BotPolicy",
    "GameEnv",
    "TokenAdapter",
    "adapter",
    "bot_policy",
    "make",
    "names",
]

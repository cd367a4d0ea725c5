"""Finding bots: the entry-point group ``enginesrv.bots``.

Every bot, the built-in ones included, is an entry point ``NAME = "module:Class"`` in that
group, so a plug-in package registers a bot the same way the project does (see
examples/plugin_bot). A plug-in that cannot be imported, or that does not name an ``Engine``
subclass, fails loudly with its name at start-up (``load_all``) instead of silently missing.
"""

from __future__ import annotations

from importlib import metadata

from bots.engine import Engine

GROUP = "enginesrv.bots"

# Used only when the package's own metadata is missing (running from a source tree that was
# never installed); an installed enginesrv registers these through its entry points.
_BUILT_IN = {
    "alphabeta": "bots.alphabeta:AlphaBeta",
    "greedy": "bots.simple:GreedyBot",
    "noisy": "bots.simple:NoisyBot",
    "random": "bots.simple:RandomBot",
}


class BotError(LookupError):
    """Raised for an unknown bot name, or for a plug-in that fails to load; the message names
    the bot and the reason."""


def _entry_points() -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        other = found.get(ep.name)
        if other is not None and other.value != ep.value:
            raise BotError(f"bot {ep.name!r} is registered twice: {other.value} and {ep.value}")
        found[ep.name] = ep
    for name, value in _BUILT_IN.items():
        found.setdefault(name, metadata.EntryPoint(name, value, GROUP))
    return found


def bot_names() -> list[str]:
    """The names of all registered bots, sorted (nothing is imported)."""
    return sorted(_entry_points())


def bot_class(name: str) -> type[Engine]:
    """The class of the bot called ``name``.

    Raises:
        BotError: no such bot, or its plug-in fails to load.
    """
    points = _entry_points()
    ep = points.get(name)
    if ep is None:
        raise BotError(f"unknown bot {name!r}; known bots: {', '.join(sorted(points))}")
    try:
        cls = ep.load()
    except Exception as exc:  # any failure of third-party code: report it with its name
        raise BotError(
            f"bot plug-in {name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Engine)):
        raise BotError(f"bot plug-in {name!r} ({ep.value}) is not an Engine subclass")
    return cls


def create_bot(name: str) -> Engine:
    """A new instance of the bot called ``name`` (see ``bot_class``)."""
    return bot_class(name)()


def load_all() -> dict[str, type[Engine]]:
    """Load every registered bot now, so that a broken plug-in stops start-up loudly.

    Raises:
        BotError: the first bot that fails to load, by name.
    """
    return {name: bot_class(name) for name in bot_names()}

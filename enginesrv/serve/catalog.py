"""What a server offers, built once and shared by every session: the games (with their colours
and start positions), the bots and the games each plays, and the bots' classes (for their
options)."""

from __future__ import annotations

import contextlib
import functools

import games
from bots import registry
from bots.engine import Engine, LevelInfo
from bots.registry import BotError
from protocol import messages as m


def prepare_handshake(default_bot: str) -> None:
    """Build now, once, what every handshake tells (the games, the bots and what each plays,
    the default bot's options). Built on the first client's ``ugi`` instead, it held the event
    loop, and so every other connection, for about a tenth of a second."""
    game_infos()
    bot_infos()
    with contextlib.suppress(BotError):
        bot_class(default_bot)


@functools.cache
def game_infos() -> tuple[m.GameInfo, ...]:
    """The handshake's games (built once: the registry does not change while serving)."""
    infos = []
    for name in games.available():
        game = games.load(name)
        infos.append(m.GameInfo(name, game.colours, game.start_position))
    return tuple(infos)


@functools.cache
def bot_names() -> tuple[str, ...]:
    """The registered bots (read once: scanning the installed distributions takes
    milliseconds, and the bots cannot change while a server runs)."""
    return tuple(registry.bot_names())


@functools.cache
def bot_class(name: str) -> type[Engine]:
    """The class of a registered bot (loaded once; see ``registry.bot_class``)."""
    return registry.bot_class(name)


@functools.cache
def bot_games(bot: str) -> tuple[str, ...] | None:
    """The games ``bot`` plays, None for every game (asked once per bot).

    Raises:
        BotError: the bot cannot be built.
    """
    return bot_class(bot)().game_names()


def supports(bot: str, game: str) -> bool:
    try:
        plays = bot_games(bot)
    except BotError:
        return False
    return plays is None or game in plays


def level_lines(
    bot: str, levels: tuple[LevelInfo, ...], plays: tuple[str, ...]
) -> tuple[m.LevelLine, ...]:
    """The ``level`` lines of a bot's levels: one per level and game measured, or one without
    a game for a level measured in none of the games the bot plays."""
    out = []
    for level in levels:
        measured = [(g, e, i) for g, e, i in level.elo if g in plays]
        out += [m.LevelLine(level.number, level.name, bot, g, e, i) for g, e, i in measured]
        if not measured:
            out.append(m.LevelLine(level.number, level.name, bot))
    return tuple(out)


@functools.cache
def bot_infos() -> tuple[m.BotInfo, ...]:
    """The bots and the games each plays (built once)."""
    out = []
    for name in bot_names():
        try:
            plays = bot_games(name)
        except BotError:
            continue
        every = tuple(plays) if plays is not None else tuple(games.available())
        cls = bot_class(name)
        offers = m.ANALYSIS_FEATURES if cls.analysis else ()
        scales = ((game, cls.expectation_scale(game)) for game in every)
        expectations = tuple(
            m.ExpectationLine(name, game, round(scale)) for game, scale in scales if scale
        )
        levels = level_lines(name, cls.levels, every)
        out.append(m.BotInfo(name, every, offers, levels, expectations))
    return tuple(out)

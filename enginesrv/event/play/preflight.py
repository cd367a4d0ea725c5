"""The check an event makes of its external engines before its first game.

A ``cmd:`` engine that cannot be started (a mistyped or missing command, a file that is not
executable, one that never answers ``ugi``) or a ``tcp:`` engine that cannot be reached would
otherwise lose every game it is scheduled in, each with the same reason, and the event would end
with a table of forfeits that says nothing of the players. ``check_players`` starts each distinct
external player once, as its games would (the same deadlines, the same ``--isolate`` wrapper),
and closes it again; the first that fails stops the event with one line naming it and the
reason. The players are checked at once, so the check costs one engine start, not one per
player. An engine that fails later, during a game, still loses that game only.

A built-in bot is checked when the event is prepared (``bot_player.check_bot``); an event on a
cluster checks its workers instead (``cluster.ClusterRunner.preflight``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio

import games
from enginesrv.event.config import EventError
from enginesrv.event.play.players import (
    Deadlines,
    ForfeitError,
    GameOptions,
    PlayerSpec,
    PlayerSpecError,
)
from enginesrv.event.play.slots import make_player


async def check_players(
    specs: Sequence[PlayerSpec],
    game: games.Game,
    deadlines: Deadlines,
    isolate: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
    options: GameOptions = (),
) -> None:
    """Start every distinct ``cmd:`` and ``tcp:`` player of ``specs`` once for ``game``, all
    at the same time, tell it of a new game with ``options`` (a tuning run's start values:
    ``Player.new_game``) when there are any, and close it again; ``isolate`` gives the
    command a ``cmd:`` engine runs under (``--isolate``), as for the event's games. Every wait
    is bounded by ``deadlines``.

    Raises:
        EventError: a player that cannot be started or reached, or whose engine refuses the
            game or an option; one line naming the first such player (in the order of
            ``specs``) and the reason.
    """
    external: dict[str, PlayerSpec] = {}
    for spec in specs:
        if spec.kind != "bot":
            external.setdefault(spec.text, spec)
    if not external:
        return
    failures: dict[str, str] = {}

    async def check(spec: PlayerSpec) -> None:
        reason = await _start_and_close(spec, game, deadlines, isolate, options)
        if reason is not None:
            failures[spec.text] = reason

    async with trio.open_nursery() as nursery:
        for spec in external.values():
            nursery.start_soon(check, spec)
    for text in external:
        if text in failures:
            raise EventError(failures[text])


async def _start_and_close(
    spec: PlayerSpec,
    game: games.Game,
    deadlines: Deadlines,
    isolate: Callable[[tuple[str, ...]], tuple[str, ...]] | None,
    options: GameOptions,
) -> str | None:
    """Start the player of ``spec`` (and give it ``options`` for a new game) and close it;
    None when it started, else the one-line error naming it and the reason."""
    wrapper = isolate(spec.command) if isolate is not None and spec.kind == "cmd" else ()
    player = make_player(spec, None, deadlines, wrapper=wrapper)
    try:
        await player.start(game)
        if options:
            await player.new_game("preflight", 0, 0, options)
    except ForfeitError as exc:
        return f"player {spec.text!r} cannot play: {_one_line(exc.detail)}"
    except PlayerSpecError as exc:
        return _one_line(str(exc))  # it names the player already
    except OSError as exc:  # a private file for its standard error could not be made
        return f"player {spec.text!r} cannot play: {exc.strerror or exc}"
    finally:
        await player.close()
    return None


def _one_line(text: str) -> str:
    """``text`` on one line: what an engine or the system said may hold line breaks."""
    return " ".join(text.splitlines())

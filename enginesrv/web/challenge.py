"""Games a page plays against a player the server does not run itself: a bot connected to a
ladder (``enginesrv.ladder.challenge``), challenged from the ladder's page.

Such a game is refereed as a bot game of the web app is (``enginesrv.web.referee``: the
page's session holds its view, the referee the full position and the clocks), its other
player an ``Opponent`` that ``Challenges.claim`` lends the game and ``Challenges.release``
takes back. Its address names the player by the challenges' kind:
``/ws?game=yoxii&opponent=ladder:NAME&side=p1&tc=300+3``. Such a game has a clock, and nothing
is taken back in it (the bot's time is its owner's: a page that played and took back for ever
would hold it for ever); the opponent is given back the moment the game ends, or when the
page goes, whichever comes first: a page left open holds no bot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

import games
from enginesrv.event.play.players import GameOptions, GoRequest, Reply
from enginesrv.web.gamespec import GameSpec

RELEASE_CHECK = 1.0
"""Seconds between two looks at the clock of a challenge's game whose clock runs (a person
out of time has lost, and the opponent is given back, without a command of theirs)."""


class Opponent(Protocol):
    """The other player of a refereed game: a bot of the server's (``BotPlayer``), or one
    lent by ``Challenges``."""

    async def start(self, game: games.Game) -> None:
        """Greet the player for ``game`` (raises ``ForfeitError`` or ``PlayerSpecError``)."""

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        """A new game begins (raises ``ForfeitError``)."""

    async def go(
        self,
        request: GoRequest,
        stop: trio.Event | None = None,
        on_hold: Callable[[bool], None] | None = None,
    ) -> Reply:
        """The player's decision; ``stop`` set makes it come at once; ``on_hold`` is told
        when the player's clock starts (True) and stops (False) running (raises
        ``ForfeitError``)."""


class Challenges(Protocol):
    """The players a page may challenge (module docstring)."""

    kind: str
    """The prefix of their opponent field: ``ladder`` for ``opponent=ladder:NAME``."""

    def claim(self, spec: GameSpec, name: str, owner: str) -> Opponent:
        """Lend ``name`` to the game ``spec`` for the page of address ``owner``.

        Raises:
            GameSpecError: there is no such player, it does not play the game, or not at
                its clock.
            TableError: it cannot be had now (it plays, or a cap is reached).
        """

    async def release(self, opponent: Opponent) -> None:
        """Take back what ``claim`` lent (once; never raises)."""


async def release_at_end(over: Callable[[], bool], flag_at: Callable[[], float | None]) -> None:
    """Return once the game is over (``over``), looking again every ``RELEASE_CHECK``
    seconds and the moment the running clock falls (``flag_at``: when it does)."""
    while not over():
        wait = RELEASE_CHECK
        flag = flag_at()
        if flag is not None:
            wait = min(wait, max(0.0, flag - trio.current_time()) + 0.01)
        await trio.sleep(wait)

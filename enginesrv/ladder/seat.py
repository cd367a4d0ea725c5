"""A connected player in one ladder game (``LadderSeat``): the arbiter's ``Player`` over the
player's link, spoken to as the arbiter speaks to a ``tcp:`` engine (``LinkedPlayer``), and
waited for when its connection drops.

Disconnections: a player whose connection drops during a game (between moves or while it
thinks) has ``grace`` seconds to come back, a new connection under its name, which is then
given this game before anything else: it is told the game (``uginewgame``) and asked for the
decision again from the whole position. Its clock runs while it is away, and the wait never
passes the time its clock leaves it. A player that does not come back in time forfeits the
game (``disconnect``). A crash, a stall or a time forfeit is not waited for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable

import trio

import games
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import (
    Deadlines,
    ForfeitError,
    GameOptions,
    GoRequest,
    Player,
    PlayerSpec,
    Reply,
)
from enginesrv.ladder.lobby import Link, Lobby


class LinkedPlayer(TextEnginePlayer):
    """A player's link as the arbiter's engine: already connected and greeted by the door."""

    def __init__(self, link: Link, deadlines: Deadlines) -> None:
        spec = PlayerSpec(f"ladder:{link.name}", "tcp", link.name, host=link.peer)
        super().__init__(spec, deadlines)
        self.link = link
        self.engine = link.engine

    async def start(self, game: games.Game) -> None:
        await self.prepare(game)


class LadderSeat(Player):
    """One player's seat in one game (module docstring)."""

    def __init__(self, link: Link, lobby: Lobby, deadlines: Deadlines, grace: float) -> None:
        super().__init__(PlayerSpec(f"ladder:{link.name}", "tcp", link.name, host=link.peer))
        self.lobby = lobby
        self.deadlines = deadlines
        self.grace = grace
        self.link = link
        self.player = LinkedPlayer(link, deadlines)
        self.game: games.Game | None = None
        self._new_game: tuple[str, int, int, GameOptions] = ("", 0, 0, ())
        self.links_used: list[Link] = [link]
        """Every link the seat played on (the first, and any that came back for it)."""

    async def start(self, game: games.Game) -> None:
        self.game = game
        await self._again(self.player.start(game), None)
        self.alive = True

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        self._new_game = (key, seed, secret_seed, options)
        await self._again(self.player.new_game(key, seed, secret_seed, options), None)

    async def go(self, request: GoRequest) -> Reply:
        asked = trio.current_time()
        while True:
            try:
                reply = await self.player.go(request)
                return dataclasses.replace(reply, elapsed=trio.current_time() - asked)
            except ForfeitError as exc:
                if exc.reason is not Termination.DISCONNECT:
                    raise
                await self._back(exc, request.forfeit_at)

    async def _again(self, step: Awaitable[None], forfeit_at: float | None) -> None:
        """Run ``step`` (a coroutine of the player); on a disconnection, wait for the player
        to come back and run the step's kind again on its new link."""
        try:
            await step
        except ForfeitError as exc:
            if exc.reason is not Termination.DISCONNECT:
                raise
            await self._back(exc, forfeit_at)

    async def _back(self, lost: ForfeitError, forfeit_at: float | None) -> None:
        """Wait for a new link of this player (at most the grace, and never past
        ``forfeit_at``) and ready it for the game; raise ``lost`` when none comes."""
        while True:
            wait, why = self.grace, f"the grace of {self.grace:g} s"
            if forfeit_at is not None and forfeit_at - trio.current_time() < wait:
                wait = forfeit_at - trio.current_time()
                why = f"the {max(0.0, wait):.1f} s its clock left"
            link = await self.lobby.reclaim(self.spec.name, wait)
            if link is None:
                raise ForfeitError(
                    Termination.DISCONNECT, f"{lost.detail}; it did not come back within {why}"
                )
            self.links_used.append(link)
            self.link = link
            self.player = LinkedPlayer(link, self.deadlines)
            try:
                assert self.game is not None
                await self.player.start(self.game)
                await self.player.new_game(*self._new_game)
                return
            except ForfeitError as exc:
                if exc.reason is not Termination.DISCONNECT:
                    raise
                lost = exc

    async def close(self) -> None:
        await self.player.close()

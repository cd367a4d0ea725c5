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
    PlayerSpecError,
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
        self.away = 0.0
        """Seconds the player has been away in this game, its comings back included: all of
        its absences together get one grace."""
        self.link = link
        self.player = LinkedPlayer(link, deadlines)
        self.game: games.Game | None = None
        self._new_game: tuple[str, int, int, GameOptions] = ("", 0, 0, ())
        self.links_used: list[Link] = [link]
        """Every link the seat played on (the first, and any that came back for it)."""

    async def start(self, game: games.Game) -> None:
        self.game = game
        await self._again(self.player.start(game))
        self.alive = True

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        self._new_game = (key, seed, secret_seed, options)
        await self._again(self.player.new_game(key, seed, secret_seed, options))

    async def go(self, request: GoRequest) -> Reply:
        asked = trio.current_time()
        sent = request
        while True:
            try:
                reply = await self.player.go(sent)
                return dataclasses.replace(reply, elapsed=trio.current_time() - asked)
            except ForfeitError as exc:
                if exc.reason is not Termination.DISCONNECT:
                    raise
                await self._back(exc, request.forfeit_at)
            # asked again from the whole position, with the clock as it is now
            sent = aged(request, trio.current_time() - asked)

    async def _again(self, step: Awaitable[None]) -> None:
        """Run ``step`` (a coroutine of the player); on a disconnection, wait for the player
        to come back (which readies its new link as the step would have)."""
        try:
            await step
        except ForfeitError as exc:
            if exc.reason is not Termination.DISCONNECT:
                raise
            await self._back(exc, None)

    async def _back(self, lost: ForfeitError, forfeit_at: float | None) -> None:
        """Wait for a new link of this player and ready it for the game, within what is left
        of its grace (and never past ``forfeit_at``); raise a forfeit when none is ready."""
        began = trio.current_time()
        try:
            while True:
                wait = self.grace - self.away - (trio.current_time() - began)
                why = f"the grace of {self.grace:g} s"
                if forfeit_at is not None and forfeit_at - trio.current_time() < wait:
                    wait = forfeit_at - trio.current_time()
                    why = f"the {max(0.0, wait):.1f} s its clock left"
                with trio.move_on_after(max(0.0, wait)):
                    again = await self._ready_new_link(wait)
                    if again is None:
                        return
                    lost = again
                    continue
                raise ForfeitError(
                    Termination.DISCONNECT, f"{lost.detail}; it did not come back within {why}"
                )
        finally:
            self.away += trio.current_time() - began

    async def _ready_new_link(self, wait: float) -> ForfeitError | None:
        """The next link of this player, readied for the game (None), or why it was lost
        again (a forfeit of another kind is raised)."""
        link = await self.lobby.reclaim(self.spec.name, wait)
        if link is None:
            await trio.sleep_forever()  # the caller's deadline ends the wait
        assert link is not None
        self.links_used.append(link)
        self.link = link
        self.player = LinkedPlayer(link, self.deadlines)
        assert self.game is not None
        try:
            await self.player.start(self.game)
            await self.player.new_game(*self._new_game)
        except ForfeitError as exc:
            if exc.reason is not Termination.DISCONNECT:
                raise
            return exc
        except PlayerSpecError as exc:  # it came back as an engine that will not play it
            raise ForfeitError(Termination.CRASH, f"when it came back: {exc}") from None
        return None

    async def close(self) -> None:
        await self.player.close()


def aged(request: GoRequest, seconds: float) -> GoRequest:
    """``request`` as it stands ``seconds`` after it was made: the mover's clock run down."""
    clocks = request.clocks
    spent = round(seconds * 1000)
    if request.seat == 0 and clocks.p1time is not None:
        clocks = dataclasses.replace(clocks, p1time=max(0, clocks.p1time - spent))
    elif request.seat == 1 and clocks.p2time is not None:
        clocks = dataclasses.replace(clocks, p2time=max(0, clocks.p2time - spent))
    elif clocks.movetime is not None:
        clocks = dataclasses.replace(clocks, movetime=max(1, clocks.movetime - spent))
    return dataclasses.replace(request, clocks=clocks)

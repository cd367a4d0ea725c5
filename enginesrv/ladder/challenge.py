"""People challenging the ladder's bots from its page (``LadderChallenges``: the web app's
``Challenges``, ``enginesrv.web.challenge``).

A page asks for ``/ws?game=GAME&opponent=ladder:NAME&side=p1&tc=300+3``; the game is refereed
as the web app's bot games are, against an idle link of NAME (a connected bot, or a house
bot), which the pairer passes by until the game ends or the page goes. Such a game is not
rated and not stored: the ladder's ratings are of bots against bots. At most ``most``
challenges are played at once, one for each address.

A connected bot's link is given back to the lobby as it was, or closed when it failed or may
still be thinking (it comes back as any link does): a page that goes, or a game that ends,
while the bot thinks has the bot told ``stop``, and the link is given back only once its
answer has come (within the ``ready`` deadline). A bot whose connection drops during a
challenge loses it at once: a grace would have its next connection given to a game no one
may be playing any more.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import structlog
import trio

import games
from enginesrv.client import ClientError
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.players import (
    ForfeitError,
    GameOptions,
    GoRequest,
    Reply,
    parse_player,
)
from enginesrv.ladder.lobby import Link
from enginesrv.ladder.seat import LadderSeat
from enginesrv.ladder.state import Ladder
from enginesrv.serve.settings import MAX_MOVETIME
from enginesrv.web.challenge import Opponent
from enginesrv.web.gamespec import GameSpec, GameSpecError
from enginesrv.web.table import TableError

INCREMENT_MS = 10_000
"""The largest increment of a challenge's clock (its start is at most half an hour: the
page's server's ``clock`` limit): with the ladder's ply limit it bounds how long a game
against a person may hold a bot."""
CLOSE_WAIT = 2.0
"""Seconds the closing of a bot's link that may not play on is waited for."""

log = structlog.get_logger("enginesrv.ladder.challenge")


class ChallengedSeat:
    """A connected bot's seat in a challenge (the web referee's ``Opponent``): a
    ``LadderSeat`` without a grace (a bot whose connection drops loses the challenge), whose
    clock runs from each question to its answer, and which is told ``stop`` when the page
    asks for the move at once."""

    def __init__(self, seat: LadderSeat) -> None:
        self.seat = seat
        self.clean = True
        """Whether the link is as a game leaves it: its last question answered in time."""
        self.asking: trio.Event | None = None
        """Set once the question in flight is over (None: none was asked)."""

    async def start(self, game: games.Game) -> None:
        await self.seat.start(game)

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        await self.seat.new_game(key, seed, secret_seed, options)

    async def go(
        self,
        request: GoRequest,
        stop: trio.Event | None = None,
        on_hold: Callable[[bool], None] | None = None,
    ) -> Reply:
        if on_hold is not None:
            on_hold(True)  # the bot thinks elsewhere: its clock runs until it answers
        asking = self.asking = trio.Event()
        self.clean = False
        failed: ForfeitError | None = None
        try:
            async with trio.open_nursery() as nursery:
                if stop is not None:
                    nursery.start_soon(self._stop_on, stop)
                try:
                    reply = await self.seat.go(request)
                except ForfeitError as exc:  # raised out of the nursery: not in a group
                    failed = exc
                nursery.cancel_scope.cancel()
            if failed is not None:
                raise failed
            self.clean = True
            return reply
        finally:
            asking.set()

    async def _stop_on(self, stop: trio.Event) -> None:
        await stop.wait()
        await self._stop()

    async def _stop(self) -> None:
        engine = self.seat.link.engine
        if engine is not None:
            with contextlib.suppress(ClientError), trio.move_on_after(self.seat.deadlines.ready):
                await engine.stop()

    async def settle(self) -> bool:
        """Whether the link may play on: a question in flight is stopped and its answer
        waited for (``ready`` seconds at most), and the last one was answered in time."""
        asking = self.asking
        if asking is not None and not asking.is_set():
            with trio.move_on_after(self.seat.deadlines.ready):
                await self._stop()
                await asking.wait()
        over = asking is None or asking.is_set()
        return over and self.clean and self.seat.link.alive


@dataclass
class Lent:
    """A link lent to a challenge, and to whom."""

    link: Link
    owner: str


class LadderChallenges:
    """The ladder's ``Challenges`` (module docstring)."""

    kind = "ladder"

    def __init__(self, ladder: Ladder, most: int) -> None:
        self.ladder = ladder
        self.most = most
        self.lent: dict[int, Lent] = {}
        """What each opponent (by ``id``) was lent."""

    @property
    def owners(self) -> set[str]:
        return {lent.owner for lent in self.lent.values()}

    def claim(self, spec: GameSpec, name: str, owner: str) -> Opponent:
        ladder = self.ladder
        game = spec.game
        if spec.control is not None and spec.control.inc_ms > INCREMENT_MS:
            raise GameSpecError(
                f"tc: an increment of at most {INCREMENT_MS // 1000} s against the ladder's bots"
            )
        if game not in ladder.run.settings.games:
            games_ = ", ".join(ladder.run.settings.games)
            raise GameSpecError(f"game {game!r}: the ladder plays {games_}")
        if name not in ladder.lobby.links:
            raise GameSpecError(f"opponent 'ladder:{name[:40]}': no such bot is connected")
        if ladder.stop.is_set():
            raise TableError("the ladder is stopping")
        if len(self.lent) >= self.most:
            raise TableError(f"the ladder plays its {self.most} challenge games at once")
        if owner in self.owners:
            raise TableError(f"{owner} plays a challenge game already: one at a time")
        referee = ladder.referee
        link = ladder.lobby.take(name, game)
        if link is None or referee is None:
            raise TableError(f"{name} plays a game now: try again when it is done")
        opponent: ChallengedSeat | BotPlayer
        if link.house:
            # a bot of its own, not the house bot's warm one: its searches count against the
            # page's address, and each takes at most MAX_MOVETIME, as the web app's bots'
            opponent = BotPlayer(
                parse_player(link.house),
                referee.pool,
                move_timeout=ladder.run.deadlines.move,
                peer=owner,
                most_ms=MAX_MOVETIME,
            )
        else:
            opponent = ChallengedSeat(LadderSeat(link, ladder.lobby, ladder.run.deadlines, 0.0))
        self.lent[id(opponent)] = Lent(link, owner)
        log.info("ladder_challenge", player=name, game=game, peer=owner)
        return opponent

    async def release(self, opponent: Opponent) -> None:
        lent = self.lent.pop(id(opponent), None)
        if lent is None:
            return
        lobby = self.ladder.lobby
        if isinstance(opponent, ChallengedSeat):
            link = opponent.seat.link  # the one it came back on, if its connection dropped
            fit = await opponent.settle() and not link.revoked
            if fit and not self.ladder.stop.is_set():
                lobby.idle(link)
            elif link.engine is not None:
                with trio.move_on_after(CLOSE_WAIT):
                    await link.engine.aclose()
            return
        assert isinstance(opponent, BotPlayer)
        await opponent.close()
        lobby.idle(lent.link)

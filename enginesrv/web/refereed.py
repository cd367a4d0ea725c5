"""A refereed game as the session of its page asks it (``RefereedGame``: the session's
``RefereeHooks``).

The page's socket is a protocol session like any other (``enginesrv.serve.session``), which
answers the protocol; this is all it asks the ``Referee`` (``enginesrv.web.referee``): the
page's decisions, the bot's, the view the page may know, the clocks, and the end of the game,
which a view may not show (the side to act may have no move only under hidden laws).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

import trio

import games
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.players import ForfeitError, PlayerSpecError
from enginesrv.serve.hooks import Decision
from enginesrv.serve.positions import result_text
from enginesrv.serve.settings import NoMoveError, request_error
from enginesrv.web.challenge import release_at_end
from enginesrv.web.referee import Referee
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, GAME_OVER

REFUSED = (m.NewGame, m.Position, m.SetOption, m.Analyse)
"""The commands that would set another game (a refereed game is set by its address), and
``analyse``, which searches positions of the client's choosing: a game of another socket."""

OVER: Final[dict[str, Callable[[games.Outcome], m.ResponseValue]]] = {
    "gameover": lambda outcome: True,
    "p1turn": lambda outcome: False,
    "result": result_text,
    "moves": lambda outcome: (),
    "turn": lambda outcome: "none",
    "outcome": lambda outcome: outcome.as_dict(),
}
"""The ``query`` answers of a game the referee knows is over, whatever the view shows."""


def refuse_another_game(command: m.Command, socket: str) -> None:
    """Refuse on a refereed game's socket (``socket``: what it is, in words) a command that
    would set another game, or search positions of the client's choosing (``REFUSED``)."""
    if isinstance(command, REFUSED):
        raise request_error(
            BAD_ARGUMENTS,
            f"{command.METHOD}: this socket is {socket}; open a new socket for another game",
        )


def over_answer(outcome: games.Outcome | None, what: str) -> m.ResponseValue | None:
    """The answer to ``query what`` the referee gives once the game is over (``OVER``), or
    None for the session's own."""
    answer = None if outcome is None else OVER.get(what)
    return None if outcome is None or answer is None else answer(outcome)


class RefereedGame:
    """The ``RefereeHooks`` of a page's session: its ``Referee`` (module docstring)."""

    def __init__(
        self, referee: Referee, release: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """``release``: gives back a challenged opponent (``enginesrv.web.challenge``)."""
        self.referee = referee
        self._release = release

    async def start(self) -> str | None:
        """Start the game's bot; None, or why it could not."""
        try:
            await self.referee.start()
        except (ForfeitError, PlayerSpecError) as exc:
            return f"the bot could not start the game: {exc}"
        return None

    async def release_at_end(self) -> None:
        """Start the clocks now, the socket open (a page whose every line is refused would
        never start them), and give back a challenged opponent once the game is over
        (``release_at_end``)."""
        referee = self.referee
        referee.tick()
        await release_at_end(referee.settled, referee.flag_at)
        await self.release()

    async def release(self) -> None:
        """Give back the game's challenged opponent, once (nothing for a bot of the server's),
        whole: the end of the page's socket does not cut it off (``Challenges.release`` is
        bounded)."""
        release, self._release = self._release, None
        if release is not None:
            with trio.CancelScope(shield=True):
                await release()

    def admit(self, command: m.Command) -> None:
        self.referee.tick()
        refuse_another_game(command, "a game the server referees")

    def view(self) -> tuple[games.Game, games.State, list[str]]:
        referee = self.referee
        return referee.game, referee.view(), list(referee.shown)

    def play(self, token: str) -> None:
        self.referee.play(token)

    def undo(self, n: int) -> None:
        self.referee.undo(n)

    def query(self, what: str) -> m.ResponseValue | None:
        if what == "clock":
            return self.referee.clock_value()
        return over_answer(self.referee.outcome(), what)

    def go(self, *, notification: bool) -> None:
        referee = self.referee
        if notification:
            raise request_error(BAD_ARGUMENTS, "go: send it as a request; its result is the move")
        if referee.over():
            raise NoMoveError(GAME_OVER, "go: the game is over")
        if not referee.spec.against_bot:
            raise request_error(BAD_ARGUMENTS, "go: two people play this game: send play")
        if referee.person_to_act():
            raise request_error(BAD_ARGUMENTS, "go: it is your decision: send play")

    async def decide(self, stop: trio.Event) -> Decision:
        referee = self.referee
        shown = await referee.bot_decision(stop)
        if shown is None:
            return Decision(None, f"{referee.outcome()}: {referee.forfeit_detail}")
        return Decision(shown)

    def changes(self) -> int:
        return self.referee.version

    def act(self, command: m.Resign | m.Offer | m.Decline) -> m.ResponseValue:
        referee = self.referee
        if not isinstance(command, m.Resign):
            raise request_error(
                BAD_ARGUMENTS,
                f"{command.METHOD}: offers are made in a game between two pages (an invite)",
            )
        referee.tick()
        seat = referee.spec.side if referee.spec.against_bot else referee.state.to_move()
        if seat < 0:  # between two people at one screen, when no one is to act
            raise request_error(GAME_OVER, f"resign: the game is over ({referee.outcome()})")
        referee.resign(seat)
        return "resigned"

    def leave(self) -> None:
        # a bot that has not searched yet does not wait for a worker to search for no one
        # (``BotPlayer.retry_stopped``): its place in the queue is freed at once
        if isinstance(self.referee.bot, BotPlayer):
            self.referee.bot.retry_stopped = False

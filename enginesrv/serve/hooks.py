"""What a game the server referees plugs into the session of its client (``RefereeHooks``).

A plain session keeps its own game: its client sets the position and asks the session's bot
for moves. In a game the server referees (the web's, ``enginesrv.web.referee``) a referee
keeps the full position and the players, and the client's session only shows it its view.
The session stays the one answering the protocol: the replies and their framing, the search
state of the ``go`` it runs (``protocol.state``), ``stop``, the one best move of every ``go``,
the options. The referee is asked, through these hooks, for everything about the game; it never
touches the session, and the session knows nothing of its players or clocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import trio

import games
from enginesrv.serve.positions import Board
from enginesrv.serve.settings import request_error
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS


@dataclass(frozen=True)
class Decision:
    """The answer to a refereed ``go``: the other side's move as the client is shown it, or
    None with the reason when there is none (it forfeited: the game is over)."""

    move: str | None
    reason: str = ""


class RefereeHooks(Protocol):
    """A referee as a session asks it (``Session.attach``). Methods that refuse a command
    raise ``RequestError`` (or ``NoMoveError``, for a ``go``) and change nothing."""

    def admit(self, command: m.Command) -> None:
        """Called before each command runs (after the session's own search-in-progress
        check): the referee's clocks are brought up to date here, and a command the refereed
        game does not take (one that would set another game) is refused."""

    def view(self) -> tuple[games.Game, games.State, list[str]]:
        """The game, the position the client may know (its view) and the moves played as the
        client was shown them: what the session answers ``query`` and ``show`` from."""

    def play(self, token: str) -> None:
        """The client's decision ``token``."""

    def undo(self, n: int) -> None:
        """Take back ``n`` decisions."""

    def query(self, what: str) -> m.ResponseValue | None:
        """An answer to ``query what`` the referee gives itself (the clocks; the end of the
        game, which a view may not show), or None for the session's, from the view."""

    def go(self, *, notification: bool) -> None:
        """Check that the client may ask for the other side's decision now (``notification``:
        the ``go`` came as a msgpack notification, which has no answer to carry a move)."""

    async def decide(self, stop: trio.Event) -> Decision:
        """The other side's decision, played. ``stop`` set makes it come at once."""

    def leave(self) -> None:
        """The client goes (``quit``, or its connection ends): a decision being made is for
        no one, and need not wait for a worker."""

    def changes(self) -> int:
        """A count of the game's changes: when it differs from the last one the session saw,
        the session takes its view again (in a game between two clients the other one's
        decisions change it)."""

    def act(self, command: m.Resign | m.Offer | m.Decline) -> m.ResponseValue:
        """The client's player resigns, offers or declines (``response``'s value: what came
        of it)."""


class Refereed:
    """A session's refereed game: its ``RefereeHooks`` and the session's board, which holds
    the view the referee gives the client, taken again after each change."""

    def __init__(self, hooks: RefereeHooks, board: Board) -> None:
        self.hooks = hooks
        self.board = board
        self.seen = 0
        """The referee's count of changes when the view was last taken."""
        self.take_view()

    def take_view(self) -> str:
        """Hold the referee's view again; its position string."""
        self.seen = self.hooks.changes()
        game, state, played = self.hooks.view()
        self.board.hold(game, state, played)
        return state.to_string()

    def admit(self, command: m.Command, *, searching: bool) -> None:
        """``RefereeHooks.admit``; the view taken again if the game changed meanwhile (not
        while a search runs, whose answers come from the position it started from)."""
        self.hooks.admit(command)
        if self.hooks.changes() != self.seen and not searching:
            self.take_view()

    def play(self, token: str) -> str:
        self.hooks.play(token)
        return self.take_view()

    def undo(self, n: int) -> str:
        self.hooks.undo(n)
        return self.take_view()

    def act(self, command: m.Resign | m.Offer | m.Decline) -> m.ResponseValue:
        value = self.hooks.act(command)
        self.take_view()
        return value

    def query(self, what: str) -> m.ResponseValue | None:
        value = self.hooks.query(what)
        if value is None and what == "table":
            raise request_error(BAD_ARGUMENTS, "query table: only a game between two pages has one")
        return value

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
from protocol import messages as m


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

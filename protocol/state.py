"""The search state of a protocol session, defined once (docs/protocol.md §3).

A session holds at most one search. The server's session, the client's connection and the
web's refereed game all keep the same state of it, each from its own side of the wire, so the
states, the events that move between them and the table of transitions live here, in the
manner of h11's ``_state.py``: no I/O, no clock, no rules of any game, nothing but the table.
The code that sends and receives messages tells the machine what happened (``process``), and
the machine says where the session is now, or raises ``SearchStateError`` when the event
cannot happen in the state the session is in.

The states:

* ``IDLE``: no search; every command runs.
* ``SEARCHING``: a ``go`` was accepted (server) or sent (client) and no ``stop`` yet. Commands
  that change the session are refused with error 204 meanwhile.
* ``STOPPING``: a ``stop`` (or ``quit``, or the server's shutdown) was asked for the running
  search. Commands that change the session now wait for the search's one answer.
* ``REFUSED``: the ``go`` was answered with an error, and in the text framing its
  ``bestmove none`` is still to come (§3: every ``go`` ends with one best move). Only a client
  sees this state: the server refuses a ``go`` before any search begins.
* ``CLOSED``: the connection is gone; no search starts again and no answer comes.

The protocol has no pondering (no ``go ponder``, no ``ponderhit``: a result's ``ponder`` move
is only a suggestion), so there is no pondering state. An ``infinite`` search that has finished
and waits for its ``stop`` is still ``SEARCHING``: nothing on the wire tells the two apart.

The events, each from the side that keeps the state:

* ``GO``: a ``go`` is accepted (server) or sent (client).
* ``STOP``: a ``stop`` is asked for the running search (again, for a second one).
* ``REFUSE``: the ``go``'s error came, and a ``bestmove none`` will follow it (text).
* ``ANSWER``: the search's one answer, its ``bestmove`` or its msgpack response (a result or an
  error), is sent (server) or received (client).
* ``ABANDON``: the client gives up the answer: its ``go`` never went out whole, or the
  ``bestmove none`` after a refusal never came (a plain UGI engine sends none).
* ``CLOSE``: the connection is gone (again: it may be told more than once).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from protocol.errors import INTERNAL, NOT_SEARCHING, SEARCH_IN_PROGRESS, ErrorCode, ProtocolError


class SearchState(enum.Enum):
    """Where a session's search is (module docstring)."""

    IDLE = "idle"
    SEARCHING = "searching"
    STOPPING = "stopping"
    REFUSED = "refused"
    CLOSED = "closed"


class SearchEvent(enum.Enum):
    """What moves a session's search from one state to another (module docstring)."""

    GO = "go"
    STOP = "stop"
    REFUSE = "refuse"
    ANSWER = "answer"
    ABANDON = "abandon"
    CLOSE = "close"


IDLE: Final = SearchState.IDLE
SEARCHING: Final = SearchState.SEARCHING
STOPPING: Final = SearchState.STOPPING
REFUSED: Final = SearchState.REFUSED
CLOSED: Final = SearchState.CLOSED

GO: Final = SearchEvent.GO
STOP: Final = SearchEvent.STOP
REFUSE: Final = SearchEvent.REFUSE
ANSWER: Final = SearchEvent.ANSWER
ABANDON: Final = SearchEvent.ABANDON
CLOSE: Final = SearchEvent.CLOSE

TRANSITIONS: Final[Mapping[SearchState, Mapping[SearchEvent, SearchState]]] = {
    IDLE: {GO: SEARCHING, CLOSE: CLOSED},
    SEARCHING: {
        STOP: STOPPING,
        REFUSE: REFUSED,
        ANSWER: IDLE,
        ABANDON: IDLE,
        CLOSE: CLOSED,
    },
    STOPPING: {
        # a second stop (a quit after a stop, a shutdown) changes nothing
        STOP: STOPPING,
        # a client may stop a go before its refusal comes back
        REFUSE: REFUSED,
        ANSWER: IDLE,
        ABANDON: IDLE,
        CLOSE: CLOSED,
    },
    REFUSED: {ANSWER: IDLE, ABANDON: IDLE, CLOSE: CLOSED},
    CLOSED: {CLOSE: CLOSED},
}
"""``TRANSITIONS[state][event]`` is the state ``event`` leads to; an event missing from a
state's row cannot happen there."""

HOLDING: Final = frozenset({SEARCHING, STOPPING, REFUSED})
"""The states in which the session holds a search that has not been answered."""


class SearchStateError(ProtocolError):
    """An event the session's search state does not allow: a ``go`` while a search is held,
    an answer or a stop with no search, anything but ``CLOSE`` once closed. Raised by
    ``SearchMachine.process``, which then leaves the state as it was.

    Its error code is a hint for a caller that answers a client with it: 204
    (``search-in-progress``) for a ``go`` while a search is held, 205 (``not-searching``) for
    an event that needs a running search, 500 (``internal``) for an event after the close,
    which only a fault of the program can cause.

    Attributes:
        state: the state the session was in.
        event: the event it could not take.
    """

    def __init__(self, state: SearchState, event: SearchEvent) -> None:
        allowed = ", ".join(e.value for e in TRANSITIONS[state]) or "none"
        super().__init__(
            _hint(state, event),
            f"event {event.value!r} cannot happen in search state {state.value!r} "
            f"(events it allows: {allowed})",
        )
        self.state = state
        self.event = event


def _hint(state: SearchState, event: SearchEvent) -> ErrorCode:
    if state is CLOSED:
        return INTERNAL
    if event is GO:
        return SEARCH_IN_PROGRESS
    return NOT_SEARCHING


class SearchMachine:
    """The search state of one session, moved by ``process`` along ``TRANSITIONS``."""

    def __init__(self, state: SearchState = IDLE) -> None:
        self.state = state

    def __repr__(self) -> str:
        return f"SearchMachine({self.state.value})"

    @property
    def holding(self) -> bool:
        """Whether a search is held that has not been answered (``HOLDING``)."""
        return self.state in HOLDING

    def allows(self, event: SearchEvent) -> bool:
        """Whether ``event`` can happen in the current state."""
        return event in TRANSITIONS[self.state]

    def process(self, event: SearchEvent) -> SearchState:
        """Move on by ``event`` and return the new state.

        Raises:
            SearchStateError: the current state does not allow ``event`` (the state is
                unchanged).
        """
        following = TRANSITIONS[self.state].get(event)
        if following is None:
            raise SearchStateError(self.state, event)
        self.state = following
        return following

"""The rules interface shared by every game: ``Game``, ``State``, ``Outcome`` and ``Move``.

Design (after OpenSpiel's Game/State and python-chess's Board):

* ``Game`` holds the static facts of one variant and builds states.
* ``State`` is mutable with make/unmake: ``push`` trusts its input (fast path, used by search),
  ``parse_move`` is the checked path for anything that comes from outside. ``pop`` restores the
  previous position exactly, from a snapshot stack.
* One decision is one ply and one move token. A compound turn is a sequence of phases of the
  state, so the same player may act several plies in a row; nothing outside the game module needs
  to know why.
* Moves are plain ints (``Move``). Their meaning is private to the game module; callers only hand
  back moves that the same game produced, and print them with ``move_to_str``. Ints keep
  transposition, killer and history tables cheap, and any finite move set can be numbered.
* Hidden information: ``view(player)`` is what that player may know and
  ``public_move_str(move, viewer)`` how a move is shown to someone. Games with perfect
  information return the state itself and the plain token, so callers use the hooks everywhere
  and a hidden-information game needs no special case in them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from games.errors import IllegalMoveError, InvalidMoveError, ReplayError

Move: TypeAlias = int
"""A move: an int whose encoding belongs to the game that produced it."""

Player: TypeAlias = int
"""A seat: 0 = p1, 1 = p2. Seats are not colours; ``Game.colours`` names them."""

P1: Player = 0
P2: Player = 1
NOBODY: Player = -1
"""``State.to_move()`` of a finished game."""

Winner: TypeAlias = Literal["p1", "p2", "draw"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game.

    Attributes:
        winner: ``"p1"``, ``"p2"`` or ``"draw"``.
        reason: the game's outcome reason as its rule file names it (``"target-reached"``...).
        scores: the game's own scores as ``(name, value)`` pairs in a fixed order, named as in
            the rule file (Yinsh: ``score_p1``, ``score_p2``, ``margin``).
    """

    winner: Winner
    reason: str
    scores: tuple[tuple[str, int], ...] = ()

    @property
    def winner_seat(self) -> Player | None:
        """0 or 1 for a win, None for a draw."""
        if self.winner == "draw":
            return None
        return P1 if self.winner == "p1" else P2

    def as_dict(self) -> dict[str, str | int]:
        """The outcome as a flat mapping: winner, reason, then the scores."""
        out: dict[str, str | int] = {"winner": self.winner, "reason": self.reason}
        out.update(self.scores)
        return out

    def __str__(self) -> str:
        head = "draw" if self.winner == "draw" else f"{self.winner} wins"
        tail = " ".join(f"{k}={v}" for k, v in self.scores)
        return f"{head} ({self.reason})" + (f" {tail}" if tail else "")


class Game(ABC):
    """Static facts about one game variant, and the factory of its states.

    Attributes:
        name: the registry name (``"yinsh+blitz"``).
        players: always 2.
        colours: the rule file's names of p1 and p2 (``("White", "Black")``).
        start_position: the canonical position string of the start.
        max_plies: a bound on the plies of any game from the start, or None when the rules let
            a game go on for ever (then a match runner adjudicates long games).
        hidden_information: whether a player's view may hide part of the position (then a
            player is given its view as a position, never the moves that led there).
    """

    name: str
    players: int = 2
    colours: tuple[str, str]
    start_position: str
    max_plies: int | None = None
    hidden_information: bool = False

    def new_state(self) -> State:
        """A fresh state at the start position."""
        return self.state_from_string(self.start_position)

    @abstractmethod
    def state_from_string(self, text: str) -> State:
        """Parse a position string.

        Raises:
            InvalidPositionError: the string breaks the grammar or a validity rule; the error
                names the field and the reason.
        """

    def __repr__(self) -> str:
        return f"<Game {self.name}>"


class State(ABC):
    """A mutable game position with make/unmake.

    Contract shared by all games:

    * ``legal_moves()`` is empty exactly when ``is_terminal()`` (a view of a hidden-information
      game may know fewer moves when the opponent acts; see ``view``).
    * ``push`` then ``pop`` restores ``to_string()`` and ``key()`` exactly.
    * ``format(parse(s)) == s``: ``game.state_from_string(s).to_string() == s`` for every valid s.
    """

    game: Game

    # -- whose turn, which moves -------------------------------------------------------------

    @abstractmethod
    def to_move(self) -> Player:
        """The seat that makes the next decision: 0, 1, or ``NOBODY`` when the game is over."""

    @abstractmethod
    def phase(self) -> str:
        """The name of the current phase of the turn, as the rule file names it."""

    def phase_name(self) -> str:
        """A readable name of the phase (``"remove own row"``); the code itself by default."""
        return self.phase()

    def turn_position(self) -> tuple[int, int]:
        """Where this decision stands in the side to act's turn: how many decisions of the turn
        it made before this one, and how many the turn holds in all as far as the rules say
        from here (Yohoho's first sub-move: ``(0, 2)``, its second: ``(1, 2)``). A time
        manager budgets the turn with it. ``(0, 1)`` by default: one decision a turn.
        """
        return 0, 1

    def time_weight(self) -> float:
        """The share of an ordinary decision's thinking time this decision deserves, for a
        time manager: 1.0 by default. A game whose setup decisions are many and settle little
        next to its play (Yinsh's ring placements) weighs them less, so that a clock spread
        over the game's decisions is not spent on its setup. Not a rule: a hint, in (0, 1]."""
        return 1.0

    def decisions_left(self) -> int | None:
        """An estimate of the decisions the side to act has left in the game, this one
        included, for a time manager's horizon where the clock gives no ``movestogo``. None by
        default: the game gives none, and the time manager assumes a game of its usual length.
        A game whose length shows in its position (Yoxii's pieces on the board) tells it, so
        that its clock is spread over the game it will be and not over a longer one. Not a
        rule: a hint, at least 1."""
        return None

    @abstractmethod
    def legal_moves(self) -> Sequence[Move]:
        """All legal moves of the player to act, in no particular order.

        A list for every game but those whose choice set is huge; such a game returns a lazy
        sequence that supports ``len()`` and indexing. Empty on a finished game.
        """

    def count_moves(self) -> int:
        """The number of legal moves; games may answer faster than ``len(legal_moves())``."""
        return len(self.legal_moves())

    def describe_moves(self) -> str:
        """One line telling how the legal tokens are written, for a move set too large to list
        (Yin Yang's setup); "" by default."""
        return ""

    def moves_hidden(self) -> bool:
        """Whether the side to act has moves this state cannot list because they depend on
        information hidden from it (a view, with the opponent to act). False by default."""
        return False

    @abstractmethod
    def push(self, move: Move) -> None:
        """Play a move. Trusted: ``move`` must come from ``legal_moves()`` or ``parse_move()``
        of this very position; anything else corrupts the state silently."""

    @abstractmethod
    def pop(self) -> Move:
        """Undo the last ``push`` and return its move.

        Raises:
            IndexError: nothing has been pushed.
        """

    @abstractmethod
    def copy(self) -> State:
        """An independent copy, including the undo history."""

    @abstractmethod
    def ply(self) -> int:
        """How many moves have been pushed on this state (the length of the undo history)."""

    # -- notation ----------------------------------------------------------------------------

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """The checked path: turn a token into a legal move of this position.

        Raises:
            InvalidMoveError: ``text`` is not a canonical move token of the game.
            IllegalMoveError: it is one, but not legal here.
        """

    def parse_shown_move(self, text: str) -> Move:
        """A move as a viewer was shown it: for a game of hidden information also the shown
        forms that hide what the mover wrote (Yin Yang rules §8.4), which ``parse_move``
        refuses; for the others the same as ``parse_move``.

        Raises:
            InvalidMoveError, IllegalMoveError: as ``parse_move``.
        """
        return self.parse_move(text)

    @abstractmethod
    def move_to_str(self, move: Move) -> str:
        """The canonical token of a move of this game."""

    @abstractmethod
    def to_string(self) -> str:
        """The canonical position string."""

    # -- the end -----------------------------------------------------------------------------

    @abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The outcome of a finished game; None while it goes on."""

    # -- hashing -----------------------------------------------------------------------------

    @abstractmethod
    def key(self) -> int:
        """A 64-bit Zobrist-style hash of everything that defines the position.

        Equal positions have equal keys; different positions collide only by chance.
        """

    # -- hidden information ------------------------------------------------------------------

    def view(self, player: Player | None) -> State:
        """What ``player`` may know of this position (None: a spectator).

        Perfect-information games return ``self``. A hidden-information game returns a new
        state in which the hidden parts unknown to ``player`` are unknown.
        """
        del player
        return self

    def is_view(self) -> bool:
        """Whether this state is a view: some part of the position is unknown to its holder
        (``view`` of a hidden-information game), so that it can be searched from but not
        refereed. A position string tells it too (Yin Yang's ``?`` laws). False by default."""
        return False

    def reveals(self, move: Move) -> bool:
        """Whether playing ``move`` here shows both players something one of them wrote in
        secret, even for a moment (Yin Yang: every law applied, revealed by its application,
        also one that rewrites itself at once). A referee that takes moves back never takes
        back such a move. False by default."""
        del move
        return False

    def revealed(self) -> frozenset[str]:
        """The hidden information this position shows to both players: each fact a player
        wrote in secret and the game has since made public (Yin Yang's revealed laws, as
        ``"Black L2 <law>"``). A referee that takes moves back never returns to a position
        that lacks a fact shown since (that would hide again what a player has seen). Empty
        by default."""
        return frozenset()

    def public_move_str(self, move: Move, viewer: Player | None) -> str:
        """The token of ``move`` as ``viewer`` is shown it (None: a spectator).

        Perfect-information games show every move in full.
        """
        del viewer
        return self.move_to_str(move)

    # -- presentation ------------------------------------------------------------------------

    @abstractmethod
    def render(self) -> str:
        """A multi-line ASCII drawing of the board with coordinates and the game's counters."""

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.to_string()!r}>"


def perft(state: State, depth: int) -> int:
    """Count the nodes at exactly ``depth`` plies below ``state``.

    A finished game reached before ``depth`` counts 0. The last ply is counted, not played
    (``count_moves``), which is the only shortcut: everything else uses the public push/pop.
    """
    if depth <= 0:
        return 1
    if depth == 1:
        return state.count_moves()
    total = 0
    for move in state.legal_moves():
        state.push(move)
        total += perft(state, depth - 1)
        state.pop()
    return total


def perft_divide(state: State, depth: int) -> list[tuple[str, int]]:
    """``perft`` split by root move: ``(token, count)`` sorted by token. ``depth`` >= 1."""
    rows: list[tuple[str, int]] = []
    for move in state.legal_moves():
        token = state.move_to_str(move)
        state.push(move)
        rows.append((token, perft(state, depth - 1)))
        state.pop()
    rows.sort()
    return rows


def replay(
    game: Game,
    start: str | State | None,
    tokens: Iterable[str],
    *,
    shown: bool = False,
    first: int = 1,
) -> State:
    """The position after ``tokens`` are played from ``start``: a position string, None for the
    game's start, or a state, which is played on in place and returned. Each token is checked
    (``State.parse_move``; with ``shown``, ``State.parse_shown_move``, for moves as a viewer
    was shown them).

    Raises:
        InvalidPositionError: ``start`` is not a position of the game.
        ReplayError: a token is not a move where it comes; it names the token, its number
            (counted from ``first``) and the reason.
    """
    if isinstance(start, State):
        state = start
    else:
        state = game.state_from_string(start) if start is not None else game.new_state()
    parse = state.parse_shown_move if shown else state.parse_move
    for number, token in enumerate(tokens, first):
        try:
            move = parse(token)
        except (InvalidMoveError, IllegalMoveError) as exc:
            raise ReplayError(number, exc) from None
        state.push(move)
    return state

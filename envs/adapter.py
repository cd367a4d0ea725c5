"""What a game gives its environment (``Adapter``): a fixed table of actions, the planes of an
observation, and how an action is played. ``TokenAdapter`` is the common case, where one
action is one move token (one ply); a game whose decision is too large for one action table
(Yin Yang's setup) splits it into several actions (``partial``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

import games
from games.base import Move

Planes = npt.NDArray[np.float32]
Partial = tuple[int, ...]
"""The actions already taken towards a decision that takes several (empty for most games)."""


class Adapter(ABC):
    """A game's actions and observations.

    Attributes:
        game: the name ``games.load`` takes (``yinsh+blitz``).
        size: how many actions there are (``Discrete(size)``).
        shape: the shape of an observation's planes, ``(planes, rows, columns)``.
        max_plies: the default truncation (None: the game ends by itself).
    """

    game: str
    size: int
    shape: tuple[int, int, int]
    max_plies: int | None = None

    @abstractmethod
    def token(self, action: int) -> str:
        """What ``action`` means, as a person reads it (the move token, or a part of one)."""

    @abstractmethod
    def legal(self, state: games.State, partial: Partial) -> tuple[list[int], list[Move]]:
        """The legal actions of the player to act, with the move each plays (for an action
        that only completes part of a decision, the move is ``-1``)."""

    def play(self, state: games.State, partial: Partial, action: int, move: Move) -> Partial:
        """Play ``action`` (legal, its ``move`` from ``legal``); the decision's actions so far
        (empty once the move is pushed)."""
        state.push(move)
        return ()

    def actions_of(self, state: games.State, token: str) -> list[int]:
        """The actions that play the move ``token`` (a bot's answer), in order."""
        return [self.index(token)]

    @abstractmethod
    def index(self, token: str) -> int:
        """The action of a one-action move ``token``."""

    @abstractmethod
    def observe(self, view: games.State, seat: int, partial: Partial) -> Planes:
        """The planes of ``view`` (what ``seat`` may know) from ``seat``'s side: its own
        pieces first, the opponent's next."""


class TokenAdapter(Adapter):
    """One action per move token: ``tokens[i]`` is the token of action ``i``."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens = tuple(tokens)
        self.size = len(self.tokens)
        self._index = {token: i for i, token in enumerate(self.tokens)}
        if len(self._index) != self.size:
            raise ValueError(f"{self.game}: an action table names a token twice")

    def token(self, action: int) -> str:
        return self.tokens[action]

    def index(self, token: str) -> int:
        try:
            return self._index[token]
        except KeyError:
            raise ValueError(f"{self.game}: {token!r} is no action of this game") from None

    def legal(self, state: games.State, partial: Partial) -> tuple[list[int], list[Move]]:
        moves = list(state.legal_moves())
        return [self._index[state.move_to_str(move)] for move in moves], moves

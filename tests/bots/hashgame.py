"""A game of hashes for testing the compiled search against the reference search.

Everything about a position is a function of a 64-bit hash that moves change by XOR (so
different orders of the same moves transpose): its moves (small ints that recur across
positions, so the history and killer tables matter), who acts next (often the same player
again), where the game ends and who wins, a static value, whether the position is quiet and
which moves are noisy. ``tests/bots/hashgame_core.c`` is the same game in C under
native/core/search.h; ``tests/bots/test_compiled.py`` builds it and compares the two searches.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.eval import Evaluator
from games import NOBODY, Game, IllegalMoveError, InvalidMoveError, Move, Outcome, State

MASK = (1 << 64) - 1
SIDE_KEY = 0x5DEECE66D1234567


def mix(x: int) -> int:
    """The splitmix64 finaliser: a well-spread 64-bit function of ``x``."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def zobrist(move: Move) -> int:
    """What playing ``move`` XORs into the hash."""
    return mix(move * 0x1000193 + 77)


class HashGame(Game):
    """Games of at most ``length`` plies from the hash ``seed``, at most ``width`` moves a
    position, one position in ``ending`` (after the second ply) where the game ends early."""

    colours = ("First", "Second")

    def __init__(self, seed: int, length: int = 14, width: int = 5, ending: int = 13) -> None:
        self.name = "hashgame"
        self.seed = seed & MASK
        self.length = length
        self.width = width
        self.ending = ending
        self.start_position = f"{self.seed} 0 0"

    def new_state(self) -> HashState:
        return self.state_from_string(self.start_position)

    def state_from_string(self, text: str) -> HashState:
        h, side, ply = (int(t) for t in text.split())
        return HashState(self, h, side, ply)


class HashState(State):
    """A position: the hash, the side to act and the plies played."""

    def __init__(self, game: HashGame, h: int, side: int, plies: int) -> None:
        self.game: HashGame = game
        self.h = h
        self.side = side
        self.plies = plies
        self.stack: list[tuple[int, int]] = []

    def is_terminal(self) -> bool:
        return self.plies >= self.game.length or (
            self.plies >= 2 and mix(self.h ^ 0xE0D) % self.game.ending == 0
        )

    def to_move(self) -> int:
        return NOBODY if self.is_terminal() else self.side

    def phase(self) -> str:
        return "play"

    def legal_moves(self) -> list[Move]:
        if self.is_terminal():
            return []
        count = 1 + mix(self.h ^ 0x3) % self.game.width
        out: list[Move] = []
        for i in range(count):
            move = mix(self.h + i) % 24
            if move not in out:
                out.append(move)
        return out

    def push(self, move: Move) -> None:
        self.stack.append((self.h, self.side))
        self.h ^= zobrist(move)
        self.plies += 1
        if mix(self.h ^ 0xA6A) % 3:
            self.side = 1 - self.side

    def pop(self) -> Move:
        self.h, self.side = self.stack.pop()
        self.plies -= 1
        return 0

    def copy(self) -> HashState:
        other = HashState(self.game, self.h, self.side, self.plies)
        other.stack = list(self.stack)
        return other

    def ply(self) -> int:
        return len(self.stack)

    def parse_move(self, text: str) -> Move:
        if not text.isdigit():
            raise InvalidMoveError(text, "not a number")
        if int(text) not in self.legal_moves():
            raise IllegalMoveError(text, "not a move here")
        return int(text)

    def move_to_str(self, move: Move) -> str:
        return str(move)

    def to_string(self) -> str:
        return f"{self.h} {self.side} {self.plies}"

    def outcome(self) -> Outcome | None:
        if not self.is_terminal():
            return None
        r = mix(self.h ^ 0x717) % 3
        return Outcome("draw" if r == 0 else "p1" if r == 1 else "p2", "hash")

    def key(self) -> int:
        return self.h ^ (SIDE_KEY if self.side else 0)

    def render(self) -> str:
        return self.to_string()


class HashEvaluator(Evaluator):
    """Values from the hash; one position in five is not quiet; moves divisible by 3 are noisy;
    the order puts moves by a hash of the position and the move (ties as generated)."""

    def __init__(self, spread: int = 1000) -> None:
        self.spread = spread

    def evaluate(self, state: State) -> int:
        assert isinstance(state, HashState)
        value = mix(state.h ^ 0xE7A1) % (2 * self.spread + 1) - self.spread
        return value if state.side == 0 else -value

    def is_quiet(self, state: State) -> bool:
        assert isinstance(state, HashState)
        return mix(state.h ^ 0x0B1E) % 5 != 0

    def noisy_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        return [m for m in moves if m % 3 == 0]

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        assert isinstance(state, HashState)
        h = state.h
        return sorted(moves, key=lambda m: mix(h ^ (m + 1000)) % 7)

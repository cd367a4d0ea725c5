"""Small games for testing the search core against exhaustive minimax.

``TreeGame``: a random game tree fixed by a seed. Who acts, how many moves there are, where the
game ends and who wins are all functions of the path, and the same player often acts several
plies in a row, as in Yinsh. Every position is its own path, so there are no transpositions and
alpha-beta at a fixed depth must return exactly the minimax value.

``Nim``: take 1, 2 or 3 stones; whoever takes the last stone wins. A heap that is a multiple of
4 is lost for the side to act, and the distance to the end is known exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from bots.eval import Evaluator
from games import NOBODY, Game, IllegalMoveError, InvalidMoveError, Move, Outcome, State


def _h(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class TreeGame(Game):
    """A seeded random tree of at most ``length`` plies."""

    colours = ("First", "Second")

    def __init__(self, seed: int, length: int = 7) -> None:
        self.name = f"tree-{seed}"
        self.seed = seed
        self.length = length
        self.start_position = ""

    def new_state(self) -> TreeState:
        return self.state_from_string(self.start_position)

    def state_from_string(self, text: str) -> TreeState:
        path = tuple(int(t) for t in text.split(",")) if text else ()
        return TreeState(self, path)


class TreeState(State):
    """A node of a ``TreeGame``: the path of move indices from the root."""

    def __init__(self, game: TreeGame, path: tuple[int, ...]) -> None:
        self.game: TreeGame = game
        self.path = path
        self.stack: list[tuple[int, ...]] = []

    def _hash(self, tag: str) -> int:
        return _h(self.game.seed, tag, self.path)

    def is_terminal(self) -> bool:
        return len(self.path) >= self.game.length or (
            len(self.path) >= 2 and self._hash("end") % 9 == 0
        )

    def to_move(self) -> int:
        if self.is_terminal():
            return NOBODY
        if not self.path:
            return 0
        parent = TreeState(self.game, self.path[:-1])
        # one time in three the player who just moved acts again
        return parent.to_move() if self._hash("again") % 3 == 0 else 1 - parent.to_move()

    def phase(self) -> str:
        return "play"

    def legal_moves(self) -> list[Move]:
        return [] if self.is_terminal() else list(range(2 + self._hash("width") % 3))

    def push(self, move: Move) -> None:
        self.stack.append(self.path)
        self.path = (*self.path, move)

    def pop(self) -> Move:
        move = self.path[-1]
        self.path = self.stack.pop()
        return move

    def copy(self) -> TreeState:
        other = TreeState(self.game, self.path)
        other.stack = list(self.stack)
        return other

    def ply(self) -> int:
        return len(self.stack)

    def parse_move(self, text: str) -> Move:
        if not text.isdigit():
            raise InvalidMoveError(text, "not a move index")
        if int(text) not in self.legal_moves():
            raise IllegalMoveError(text, "no such move here")
        return int(text)

    def move_to_str(self, move: Move) -> str:
        return str(move)

    def to_string(self) -> str:
        return ",".join(map(str, self.path))

    def outcome(self) -> Outcome | None:
        if not self.is_terminal():
            return None
        r = self._hash("winner") % 5
        return Outcome("draw" if r == 0 else "p1" if r % 2 else "p2", "tree")

    def key(self) -> int:
        return self._hash("key")

    def render(self) -> str:
        return self.to_string()

    def p1_value(self) -> int:
        """The static value for p1, in -1000..1000."""
        return self._hash("value") % 2001 - 1000


class TreeEvaluator(Evaluator):
    """The seeded static value, from the side to act."""

    def evaluate(self, state: State) -> int:
        assert isinstance(state, TreeState)
        value = state.p1_value()
        return value if state.to_move() == 0 else -value


class Nim(Game):
    """Take 1-3 stones from one heap; taking the last stone wins."""

    colours = ("First", "Second")

    def __init__(self, stones: int) -> None:
        self.name = "nim"
        self.start_position = f"{stones} 0"

    def state_from_string(self, text: str) -> NimState:
        heap, side = text.split()
        return NimState(self, int(heap), int(side))


class NimState(State):
    """A heap and the side to act (the side that just moved wins at 0)."""

    def __init__(self, game: Game, heap: int, side: int) -> None:
        self.game = game
        self.heap = heap
        self.side = side
        self.stack: list[tuple[int, int]] = []

    def to_move(self) -> int:
        return NOBODY if self.heap == 0 else self.side

    def phase(self) -> str:
        return "take"

    def legal_moves(self) -> list[Move]:
        return [n for n in (1, 2, 3) if n <= self.heap]

    def push(self, move: Move) -> None:
        self.stack.append((self.heap, self.side))
        self.heap -= move
        self.side = 1 - self.side

    def pop(self) -> Move:
        heap, self.side = self.stack.pop()
        move = heap - self.heap
        self.heap = heap
        return move

    def copy(self) -> NimState:
        other = NimState(self.game, self.heap, self.side)
        other.stack = list(self.stack)
        return other

    def ply(self) -> int:
        return len(self.stack)

    def parse_move(self, text: str) -> Move:
        if text not in ("1", "2", "3"):
            raise InvalidMoveError(text, "take 1, 2 or 3")
        if int(text) > self.heap:
            raise IllegalMoveError(text, "not that many stones")
        return int(text)

    def move_to_str(self, move: Move) -> str:
        return str(move)

    def to_string(self) -> str:
        return f"{self.heap} {self.side}"

    def is_terminal(self) -> bool:
        return self.heap == 0

    def outcome(self) -> Outcome | None:
        if self.heap:
            return None
        return Outcome("p2" if self.side == 0 else "p1", "last-stone")

    def key(self) -> int:
        return self.heap * 2 + self.side

    def render(self) -> str:
        return "o" * self.heap


class NimEvaluator(Evaluator):
    """Knows nothing: every unfinished position is even."""

    def evaluate(self, state: State) -> int:
        del state
        return 0

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        del state
        return sorted(moves)


class TwoHeaps(Game):
    """Take 1 or 2 stones from either of two heaps; taking the last stone wins. Orders of
    moves transpose, so a transposition table is exercised. The side to act loses exactly
    when ``a % 3 == b % 3`` (the Grundy values of the two heaps are equal)."""

    colours = ("First", "Second")

    def __init__(self, a: int, b: int) -> None:
        self.name = "two-heaps"
        self.start_position = f"{a} {b} 0"

    def state_from_string(self, text: str) -> TwoHeapsState:
        a, b, side = (int(t) for t in text.split())
        return TwoHeapsState(self, a, b, side)


class TwoHeapsState(NimState):
    """Heaps ``a`` and ``b``; moves are ``heap * 2 + take - 1``."""

    def __init__(self, game: Game, a: int, b: int, side: int) -> None:
        self.game = game
        self.a, self.b, self.side = a, b, side
        self.hstack: list[tuple[int, int, int]] = []

    @property
    def heap(self) -> int:  # type: ignore[override]
        return self.a + self.b

    def legal_moves(self) -> list[Move]:
        out: list[Move] = []
        for heap, size in enumerate((self.a, self.b)):
            out.extend(heap * 2 + take - 1 for take in (1, 2) if take <= size)
        return out

    def push(self, move: Move) -> None:
        self.hstack.append((self.a, self.b, self.side))
        take = move % 2 + 1
        if move < 2:
            self.a -= take
        else:
            self.b -= take
        self.side = 1 - self.side

    def pop(self) -> Move:
        a, b, side = self.hstack.pop()
        move = (0 if a != self.a else 2) + (abs(a - self.a) + abs(b - self.b)) - 1
        self.a, self.b, self.side = a, b, side
        return move

    def copy(self) -> TwoHeapsState:
        other = TwoHeapsState(self.game, self.a, self.b, self.side)
        other.hstack = list(self.hstack)
        return other

    def ply(self) -> int:
        return len(self.hstack)

    def to_string(self) -> str:
        return f"{self.a} {self.b} {self.side}"

    def key(self) -> int:
        return (self.a * 64 + self.b) * 2 + self.side

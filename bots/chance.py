"""A bot's two sources of chance: a public one that repeats, a secret one that does not.

In a game of hidden information some of a player's choices are shown to the opponent only in
part (Yin Yang: the four laws written at setup are shown as ``laws:?,?,?,?``, the new text of
a rewritten law as ``?``) or not at all (the worlds a determinized search samples). If the
opponent could compute those choices, it would know what the rules hide from it; so a bot
draws them from a generator nobody else can rebuild:

* the **public** generator, seeded by the ``Seed`` option, makes every choice the opponent
  sees in full, so that a game between bots repeats from the seeds (the arbiter derives each
  bot's ``Seed`` from the event's ``--seed``);
* the **secret** generator, seeded by ``SecretSeed``, makes the choices the opponent is not
  shown. Its default, 0, takes the operating system's randomness (``random.SystemRandom``),
  which no seed repeats; any other value repeats the secret choices too (for tests, or to
  replay an audited game: the arbiter draws a secret seed for each bot and game and stores it
  with the game's result once the game is over).

``pick`` makes a uniformly random choice among moves and splits it between the two: the
public generator chooses what the opponent will see, the secret one which of the moves shown
that way is played. Where the opponent cannot even list the mover's moves (the mover holds a
law the opponent has not seen, so which moves exist tells of it), the whole choice is secret.
A perfect-information game uses the public generator alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bots.engine import Option
from games import Move, State

SEED_OPTION = Option("Seed", "spin", 0, 0, 2**31 - 1)
"""The public generator's seed: the same seed, game and moves give the same public choices."""

SECRET_SEED_OPTION = Option("SecretSeed", "spin", 0, 0, 2**63 - 1)
"""The secret generator's seed; 0 (the default) takes the operating system's randomness."""

LIST_LIMIT = 100_000
"""Up to this many moves, the moves that show the same are listed to choose among them; above
it (Yin Yang's setup, 405^4 moves) they are found by drawing until one shows the same."""

DRAW_LIMIT = 10_000
"""How many secret draws are tried before the search for a move that shows the same falls back
to a scan (bounded work even for a game whose hidden choices are rare among its moves)."""


class Chance:
    """The two generators of one bot's search of one position.

    Both are derived afresh for each position from its seed, the position string and the
    number of moves pushed since it, so a choice depends on the seeds and the position alone:
    not on the moves searched before, nor on whether the bot began a new game or another
    worker answered (an arbiter starts each untimed search as a new game, and a worker may be
    replaced). The move counters of a position string (Yin Yang's turn) keep a board that
    recurs from repeating its choice.
    """

    def __init__(self, state: State, seed: int, secret_seed: int) -> None:
        where = f"{state.game.name}:{state.to_string()}:{state.ply()}"
        self._public = random.Random(f"public:{seed}:{where}")
        self._secret: random.Random = (
            random.Random(f"secret:{secret_seed}:{where}") if secret_seed else random.SystemRandom()
        )

    @property
    def public(self) -> random.Random:
        """The generator of the choices the opponent sees."""
        return self._public

    @property
    def secret(self) -> random.Random:
        """The generator of the choices the opponent is not shown."""
        return self._secret

    def pick(self, state: State, moves: Sequence[Move]) -> Move:
        """A uniformly random move of ``moves`` (legal moves of ``state``, not empty), its public
        part from the public generator and its hidden part from the secret one (module
        docstring)."""
        count = len(moves)
        if count == 1:
            return moves[0]
        if not state.game.hidden_information:
            return moves[self._public.randrange(count)]
        viewer = 1 - state.to_move()
        if state.view(viewer).moves_hidden():
            return moves[self._secret.randrange(count)]
        move = moves[self._public.randrange(count)]
        shown = state.public_move_str(move, viewer)
        if shown == state.move_to_str(move):
            return move
        return self._same_shown(state, moves, shown, viewer)

    def _same_shown(self, state: State, moves: Sequence[Move], shown: str, viewer: int) -> Move:
        """A uniformly random move of ``moves`` that ``viewer`` is shown as ``shown``, drawn
        with the secret generator."""
        count = len(moves)
        if count <= LIST_LIMIT:
            same = [m for m in moves if state.public_move_str(m, viewer) == shown]
            return same[self._secret.randrange(len(same))]
        # uniform over the moves shown so: each draw is uniform over all moves, and the first
        # that shows the same is kept (at Yin Yang's setup every move does)
        for _ in range(DRAW_LIMIT):
            move = moves[self._secret.randrange(count)]
            if state.public_move_str(move, viewer) == shown:
                return move
        start = self._secret.randrange(count)
        for offset in range(count):
            move = moves[(start + offset) % count]
            if state.public_move_str(move, viewer) == shown:
                return move
        raise ValueError(f"no move is shown as {shown!r}")  # the caller's move was one

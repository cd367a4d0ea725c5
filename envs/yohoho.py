"""Yohoho! as an environment (docs/envs.md, "Yohoho").

Actions (1653), every token that can ever be legal, in two blocks. ``CELLS`` is the order of
the rules' §2 cell table (Jocly's numbering: row 1 first, left to right; a1 = 0, i3 = 21,
q9 = 76):

==========  =====  =================================================================
actions     count  token
==========  =====  =================================================================
0-1575      1576   sub-move ``f-t`` (first or second): every ordered pair of distinct
                   cells on a common line (a Rock goes any distance in all six
                   directions), by origin (cell order), then destination (cell order):
                   ``MOVE_START[f] + k``, k the rank of t among f's line-mates
1576-1652   77     capture ``x:`` + ``CELLS[i]``: ``1576 + i``
==========  =====  =================================================================

Observation planes (14 x 9 x 17), ``[plane, row - 1, letter]`` (letter a = 0: the rules'
doubled columns, so a cell's six neighbours are two letters left and right and one letter
diagonally), from the side of the agent observing: 0-3 its Admiral, Galleons, Chebecs, Rock;
4-7 the opponent's alike; 8 the 77 cells; 9 its goal row (row 9 for White, ``player_0``; row 1
for Black); 10 all ones when it is to act; 11 all ones in phase 2 (a second sub-move is
pending); 12 in phase 2 the remembered cell (its piece may not move again); 13 all ones while
the first-turn flag is set (White's first turn is one sub-move). The position string holds
nothing else: no counters, no scores.

``max_plies`` 1000: the rules do not bound a game (positions can repeat, and alphabeta at depth 2
against itself sometimes goes round in circles). Bot games that end last 25 to 80 plies on
average and at most 418 in what we measured; uniformly random games wander: 712 plies at the
median, 29 % of them beyond 1000 (docs/envs.md, "Yohoho").
"""

from __future__ import annotations

import numpy as np

import games
from envs.adapter import Partial, Planes, TokenAdapter
from games.yohoho import CELL_NAMES, COORDS

CELLS: tuple[str, ...] = tuple(CELL_NAMES)
"""The 77 cells in the rules' §2 table order (a1 = 0, c1 = 1, ..., b2 = 9, ..., q9 = 76)."""


def _on_a_line(a: tuple[int, int], b: tuple[int, int]) -> bool:
    dx, dy = b[0] - a[0], b[1] - a[1]
    return a != b and (dy == 0 or dx == dy or dx == -dy)


LINE_MATES: tuple[tuple[int, ...], ...] = tuple(
    tuple(j for j, other in enumerate(COORDS) if _on_a_line(here, other)) for here in COORDS
)
"""Per cell, the cells on one of its three lines (itself excluded), in cell order."""
MOVE_START: tuple[int, ...] = tuple(
    sum(len(mates) for mates in LINE_MATES[:i]) for i in range(len(CELLS))
)
"""Per origin, the action of its first sub-move."""
SUBMOVES: tuple[tuple[int, int], ...] = tuple(
    (f, t) for f, mates in enumerate(LINE_MATES) for t in mates
)
CAPTURE = len(SUBMOVES)
"""The first capture action."""
TOKENS = tuple(f"{CELLS[f]}-{CELLS[t]}" for f, t in SUBMOVES) + tuple("x:" + c for c in CELLS)

PLANES = 14
MAX_PLIES = 1000
_ROWS, _COLUMNS = 9, 17
_CELL_OF_NAME = {name: (y - 1) * _COLUMNS + x for name, (x, y) in zip(CELLS, COORDS, strict=True)}
_STRING_CELLS = np.array(
    [(y - 1) * _COLUMNS + x for y in range(9, 0, -1) for x in range(17) if (x + y) % 2],
    dtype=np.intp,
)
"""The cells in the position string's order (row 9 down to row 1, left to right), each as its
index in a flattened 9 x 17 plane."""
_EXPAND = str.maketrans({"/": None, **{str(n): "." * n for n in range(1, 10)}})
_PIECES = (
    np.array([ord(c) for c in "AGCRagcr"], dtype=np.uint8)[:, None],
    np.array([ord(c) for c in "agcrAGCR"], dtype=np.uint8)[:, None],
)
"""Per seat, its Admiral, Galleons, Chebecs, Rock, then the opponent's."""


class YohohoAdapter(TokenAdapter):
    game = "yohoho"
    shape = (PLANES, _ROWS, _COLUMNS)
    max_plies = MAX_PLIES

    def __init__(self) -> None:
        super().__init__(TOKENS)
        board = np.zeros(_ROWS * _COLUMNS, dtype=np.float32)
        board[_STRING_CELLS] = 1.0
        self._board = board.reshape(_ROWS, _COLUMNS)
        self._goal = np.zeros((2, _ROWS, _COLUMNS), dtype=np.float32)
        self._goal[0, 8] = self._board[8]  # White sails to row 9
        self._goal[1, 0] = self._board[0]  # Black to row 1

    def observe(self, view: games.State, seat: int, partial: Partial) -> Planes:
        board, side, phase, first = view.to_string().split()
        planes = np.zeros(self.shape, dtype=np.float32)
        flat = planes.reshape(PLANES, _ROWS * _COLUMNS)
        cells = np.frombuffer(board.translate(_EXPAND).encode(), dtype=np.uint8)
        flat[0:8, _STRING_CELLS] = cells == _PIECES[seat]
        planes[8] = self._board
        planes[9] = self._goal[seat]
        if side == "wb"[seat] and not view.is_terminal():
            planes[10] = 1.0
        if phase != "1":
            planes[11] = 1.0
            flat[12, _CELL_OF_NAME[phase[2:]]] = 1.0
        if first == "1":
            planes[13] = 1.0
        return planes

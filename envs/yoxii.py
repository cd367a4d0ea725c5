"""Yoxii as an environment (docs/envs.md, "Yoxii").

Actions (185): ``0..36`` move the Totem to square ``SQUARES[i]``; ``37 + 37 * (v - 1) + i``
places a piece of value ``v`` (1 to 4) on ``SQUARES[i]``. ``SQUARES`` is the rules' canonical
order (rank 7 down to rank 1, files a to g within a rank: c7, d7, e7, b6, ...).

Observation planes (19 x 7 x 7), ``[plane, rank - 1, file]`` (file a = 0), from the side of the
agent observing: 0-3 its pieces of value 1-4; 4-7 the opponent's of value 1-4; 8 the Totem;
9 the 37 squares of the board; 10 all ones when the Totem is to be moved (phase ``t``), zeros
when a piece is to be placed; 11-14 its stock of value 1-4, as a share of the start stock
(5, 5, 5, 3), on every square; 15-18 the opponent's stock alike.
"""

from __future__ import annotations

import numpy as np

import games
from envs.adapter import Partial, Planes, TokenAdapter

WIDTHS = (3, 5, 7, 7, 7, 5, 3)
"""Squares of ranks 7 down to 1."""
START_STOCK = (5, 5, 5, 3)
SQUARES = tuple(
    f"{'abcdefg'[(7 - width) // 2 + i]}{rank}"
    for rank, width in zip(range(7, 0, -1), WIDTHS, strict=True)
    for i in range(width)
)
TOKENS = SQUARES + tuple(f"{value}@{square}" for value in range(1, 5) for square in SQUARES)
CELLS = tuple(("abcdefg".index(square[0]), int(square[1]) - 1) for square in SQUARES)
"""(file, rank - 1) of each square, in ``SQUARES`` order."""
PLANES = 19


class YoxiiAdapter(TokenAdapter):
    game = "yoxii"
    shape = (PLANES, 7, 7)
    max_plies = None

    def __init__(self) -> None:
        super().__init__(TOKENS)
        self._board = np.zeros((7, 7), dtype=np.float32)
        for f, r in CELLS:
            self._board[r, f] = 1.0

    def observe(self, view: games.State, seat: int, partial: Partial) -> Planes:
        board, _, phase, white, black = view.to_string().split()
        planes = np.zeros(self.shape, dtype=np.float32)
        own_upper = seat == 0  # p1 is White, whose pieces are upper case
        square = 0
        for cell in board.replace("/", ""):
            if cell.isdigit():
                square += int(cell)
                continue
            f, r = CELLS[square]
            if cell == "T":
                planes[8, r, f] = 1.0
            else:
                value = "abcd".index(cell.lower())
                mine = cell.isupper() == own_upper
                planes[(0 if mine else 4) + value, r, f] = 1.0
            square += 1
        planes[9] = self._board
        planes[10] = 1.0 if phase == "t" else 0.0
        stocks = (white[2:], black[2:]) if own_upper else (black[2:], white[2:])
        for first, stock in zip((11, 15), stocks, strict=True):
            for value, digit in enumerate(stock):
                planes[first + value] = int(digit) / START_STOCK[value]
        return planes

"""Yinsh and Yinsh blitz as environments (docs/envs.md, "Yinsh (and yinsh+blitz)").

Actions (2142), every token that can ever be legal, in five blocks. ``POINTS`` is the rules'
§2.6 point order (column a to k, lowest row first: a2 a3 a4 a5 b1 ... k10; f6 is 42):

==========  =====  =================================================================
actions     count  token
==========  =====  =================================================================
0-84        85     placement on ``POINTS[i]``: ``f6`` is 42
85-1932     1848   ring move ``o-t``: every ordered pair of distinct points on a common
                   line, by origin (point order), then destination (point order):
                   ``85 + MOVE_START[o] + k``, k the rank of t among o's line-mates
1933        1      ``pass``
1934-2056   123    row removal ``x:`` + ``WINDOWS[w]``: by axis (columns, equal row
                   numbers, diagonals), then first end in point order
2057-2141   85     ring removal ``r:`` + ``POINTS[i]``
==========  =====  =================================================================

Observation planes (15 x 11 x 11), ``[plane, row - 1, column]`` (column a = 0), from the side of
the agent observing: 0 its rings, 1 its markers, 2 the opponent's rings, 3 the opponent's
markers, 4 the 85 points of the board; 5 all ones when it is to act; the decision of the side to
act (all zeros once the game is over): 6 placement (``p``), 7 ring move (``m``, ``n``), 8 remove
a row (``x``, ``X``), 9 remove a ring (``r``, ``R``), 10 the removal is forced by the other
side's ring move (``X``, ``R``), 11 the other side has just passed (``n``: a pass now ends the
game); 12 the rings it has removed as a share of the target (3, blitz 1), 13 the opponent's
alike, 14 the markers left in the pool as a share of 51.

No ``max_plies``: a game ends by itself, within ``games.load("yinsh").max_plies`` = 173 plies
(every ring move puts a marker of the pool of 51 on the board, and only a row, which costs a
ring, gives markers back: at most 71 ring moves; rules §5).
"""

from __future__ import annotations

import numpy as np

import games
from envs.adapter import Partial, Planes, TokenAdapter
from games.yinsh import COORDS, POINT_NAMES

POINTS: tuple[str, ...] = tuple(POINT_NAMES)
"""The 85 points in the rules' §2.6 order (a2 = 0, f6 = 42, k10 = 84)."""
_INDEX = {xy: i for i, xy in enumerate(COORDS)}
AXES = ((0, 1), (1, 0), (1, 1))
"""(column step, row step) of the three line directions: columns, equal rows, diagonals."""


def _on_a_line(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a != b and (a[0] == b[0] or a[1] == b[1] or a[0] - a[1] == b[0] - b[1])


LINE_MATES: tuple[tuple[int, ...], ...] = tuple(
    tuple(j for j, other in enumerate(COORDS) if _on_a_line(here, other)) for here in COORDS
)
"""Per point, the points on one of its three lines (itself excluded), in point order."""
MOVE_START: tuple[int, ...] = tuple(
    sum(len(mates) for mates in LINE_MATES[:i]) for i in range(len(POINTS))
)
"""Per origin, the offset of its first ring move within the ring-move block."""
RING_MOVES: tuple[tuple[int, int], ...] = tuple(
    (o, t) for o, mates in enumerate(LINE_MATES) for t in mates
)
WINDOWS: tuple[str, ...] = tuple(
    f"{POINTS[p]}-{POINTS[_INDEX[(q + 4 * dq, r + 4 * dr)]]}"
    for dq, dr in AXES
    for p, (q, r) in enumerate(COORDS)
    if all((q + k * dq, r + k * dr) in _INDEX for k in range(1, 5))
)
"""The 123 five-point windows, named by their ends in canonical order (rules §2.4, §7)."""

PLACE, MOVE, PASS = 0, len(POINTS), len(POINTS) + len(RING_MOVES)
ROW = PASS + 1
RING = ROW + len(WINDOWS)
"""The first action of each block."""
TOKENS = (
    POINTS
    + tuple(f"{POINTS[o]}-{POINTS[t]}" for o, t in RING_MOVES)
    + ("pass",)
    + tuple("x:" + window for window in WINDOWS)
    + tuple("r:" + point for point in POINTS)
)

PLANES = 15
POOL = 51
_CELLS = np.array([(r - 1) * 11 + q for q, r in COORDS], dtype=np.intp)
"""Per point, its cell in a flattened 11 x 11 plane."""
_EXPAND = str.maketrans({"/": None, "0": "." * 9, **{str(n): "." * n for n in range(1, 10)}})
"""A board field to one character per point: ``1`` then ``0`` (ten) is 1 + 9 dots."""
_PIECES = (
    np.array([ord(c) for c in "WwBb"], dtype=np.uint8)[:, None],
    np.array([ord(c) for c in "BbWw"], dtype=np.uint8)[:, None],
)
"""Per seat, its rings, its markers, the opponent's rings and markers."""
_PHASE_PLANES = {"p": (6,), "m": (7,), "n": (7, 11), "x": (8,), "r": (9,), "X": (8, 10)}
_PHASE_PLANES["R"] = (9, 10)
_PHASE_PLANES["e"] = ()


class YinshAdapter(TokenAdapter):
    game = "yinsh"
    shape = (PLANES, 11, 11)
    max_plies = None
    target = 3
    """Rings a side removes to win."""

    def __init__(self) -> None:
        super().__init__(TOKENS)
        board = np.zeros(121, dtype=np.float32)
        board[_CELLS] = 1.0
        self._board = board.reshape(11, 11)

    def observe(self, view: games.State, seat: int, partial: Partial) -> Planes:
        board, side, phase, removed, pool = view.to_string().split()
        planes = np.zeros(self.shape, dtype=np.float32)
        flat = planes.reshape(PLANES, 121)
        points = np.frombuffer(board.translate(_EXPAND).encode(), dtype=np.uint8)
        flat[0:4, _CELLS] = points == _PIECES[seat]
        planes[4] = self._board
        if side == "wb"[seat]:
            planes[5] = 1.0
        for plane in _PHASE_PLANES[phase]:
            planes[plane] = 1.0
        counts = (int(removed[0]), int(removed[2]))
        planes[12] = counts[seat] / self.target
        planes[13] = counts[1 - seat] / self.target
        planes[14] = int(pool) / POOL
        return planes


class BlitzAdapter(YinshAdapter):
    game = "yinsh+blitz"
    target = 1

"""YINSH, variants ``yinsh`` (3 rings to win) and ``yinsh+blitz`` (1 ring), per rules/yinsh.md.

Phases (one decision = one ply = one token; the same player may act several plies in a row):

====  ==========================================================  ==================
code  decision                                                    token
====  ==========================================================  ==================
p     place a ring on an empty point                              ``f6``
m     ring move (or ``pass`` when there is none)                  ``e1-e8``/``pass``
n     ring move right after the opponent passed                   as in ``m``
x     remove an own row made by one's own ring move               ``x:e3-e7``
r     remove an own ring after ``x``                              ``r:a2``
X     remove an own row made by the opponent's ring move          ``x:a4-e4``
R     remove an own ring after ``X``                              ``r:k7``
e     game over (side ``-``)                                      none
====  ==========================================================  ==================

Position string: ``board side phase removed pool``, e.g. ``4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51``.

Representation. The 85 points are numbered column by column (a2 = 0, f6 = 42, k10 = 84), so
rings and markers of each colour are four Python-int bitboards. Everything geometric is a module
constant built once: rays per point and direction, the 123 five-point windows and, per point,
the windows through it, the points strictly between any two points on a line, and the Zobrist
numbers. A ring move changes only its origin and the markers it flips, and no row exists before
a ring move, so rows are found by testing only the windows through those points; afterwards a
removal can only break rows, never make one, so the pending rows are kept as a tuple and
filtered. ``pop`` restores a snapshot tuple.

Moves are ints: a placement is the point itself; other kinds carry a tag above bit 14.
"""

from __future__ import annotations

import functools
import operator
import random
import re
from collections.abc import Callable, Iterable
from typing import Final, Literal, Protocol, TypeAlias, cast, overload

from games.base import NOBODY, Game, Move, Outcome, Player, State, Winner
from games.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from games.native import native_module

Point: TypeAlias = int
Bitboard: TypeAlias = int
Window: TypeAlias = int

# ---------------------------------------------------------------------------------------------
# Geometry (rules §2)

COLUMNS: Final = "abcdefghijk"
ROW_RANGE: Final = {
    "a": (2, 5),
    "b": (1, 7),
    "c": (1, 8),
    "d": (1, 9),
    "e": (1, 10),
    "f": (2, 10),
    "g": (2, 11),
    "h": (3, 11),
    "i": (4, 11),
    "j": (5, 11),
    "k": (7, 10),
}


def _build_points() -> tuple[tuple[tuple[int, int], ...], dict[tuple[int, int], Point]]:
    coords: list[tuple[int, int]] = []
    for q, letter in enumerate(COLUMNS):
        low, high = ROW_RANGE[letter]
        coords.extend((q, r) for r in range(low, high + 1))
    return tuple(coords), {c: i for i, c in enumerate(coords)}


COORDS, _INDEX_OF = _build_points()
N_POINTS: Final = len(COORDS)  # 85
POINT_NAMES: Final = tuple(f"{COLUMNS[q]}{r}" for q, r in COORDS)
POINT_OF_NAME: Final = {name: i for i, name in enumerate(POINT_NAMES)}
BIT: Final = tuple(1 << p for p in range(N_POINTS))
FULL_MASK: Final = (1 << N_POINTS) - 1
COLUMN_LENGTHS: Final = tuple(ROW_RANGE[c][1] - ROW_RANGE[c][0] + 1 for c in COLUMNS)

# up, down, up-right, down-left, down-right, up-left as (d_col, d_row)
DIRECTIONS: Final = ((0, 1), (0, -1), (1, 1), (-1, -1), (1, 0), (-1, 0))
AXES: Final = ((0, 1), (1, 0), (1, 1))


def _ray(p: Point, dq: int, dr: int) -> tuple[Point, ...]:
    q, r = COORDS[p]
    out: list[Point] = []
    while (q + dq, r + dr) in _INDEX_OF:
        q, r = q + dq, r + dr
        out.append(_INDEX_OF[(q, r)])
    return tuple(out)


RAYS: Final = tuple(tuple(_ray(p, dq, dr) for dq, dr in DIRECTIONS) for p in range(N_POINTS))


def _build_windows() -> tuple[tuple[tuple[Point, ...], ...], tuple[Bitboard, ...]]:
    windows: list[tuple[Point, ...]] = []
    for dq, dr in AXES:
        for p in range(N_POINTS):
            q, r = COORDS[p]
            if (q - dq, r - dr) in _INDEX_OF:
                continue  # not the first point of its line
            line = (p, *_ray(p, dq, dr))
            windows.extend(line[i : i + 5] for i in range(len(line) - 4))
    masks = tuple(sum(BIT[p] for p in w) for w in windows)
    return tuple(windows), masks


WINDOW_POINTS, WINDOW_MASK = _build_windows()
N_WINDOWS: Final = len(WINDOW_POINTS)  # 123
WINDOW_NAMES: Final = tuple(f"{POINT_NAMES[w[0]]}-{POINT_NAMES[w[4]]}" for w in WINDOW_POINTS)
WINDOW_OF_ENDS: Final = {(w[0], w[4]): i for i, w in enumerate(WINDOW_POINTS)}
# per point: (window, mask) of every window through it (at most 15)
WINDOWS_AT: Final = tuple(
    tuple((w, WINDOW_MASK[w]) for w in range(N_WINDOWS) if p in WINDOW_POINTS[w])
    for p in range(N_POINTS)
)


def _build_between() -> list[Bitboard]:
    """Points strictly between o and t, indexed by ``o << 7 | t`` (only pairs on one line)."""
    table = [0] * (N_POINTS << 7)
    for o in range(N_POINTS):
        for ray in RAYS[o]:
            mask = 0
            for t in ray:
                table[o << 7 | t] = mask
                mask |= BIT[t]
    return table


BETWEEN: Final = _build_between()

# ---------------------------------------------------------------------------------------------
# Moves

KIND_SHIFT: Final = 14
RING_MOVE: Final = 1 << KIND_SHIFT
ROW_TAKE: Final = 2 << KIND_SHIFT
RING_TAKE: Final = 3 << KIND_SHIFT
PASS: Final = 4 << KIND_SHIFT
_LOW14: Final = (1 << KIND_SHIFT) - 1

# ---------------------------------------------------------------------------------------------
# Phases

PH_P, PH_M, PH_N, PH_X, PH_R, PH_XO, PH_RO, PH_E = range(8)
PHASE_CHARS: Final = "pmnxrXRe"
_PHASE_OF_CHAR: Final = {c: i for i, c in enumerate(PHASE_CHARS)}
PHASE_NAMES: Final = (
    "placement",
    "ring move",
    "ring move after a pass",
    "remove own row",
    "remove own ring",
    "remove row made by the opponent",
    "remove ring after that row",
    "game over",
)
_TURN_POSITION: Final = ((0, 1), (0, 1), (0, 1), (1, 3), (2, 3), (0, 3), (1, 3), (0, 1))
"""``turn_position`` by phase: a move alone; move, row, ring; row, ring, move."""
PLACEMENT_TIME_WEIGHT: Final = 0.08
"""``time_weight`` of a ring placement: ten of them open every game, and a search sees little
of what they decide (at 5+3 a placement's budget is then about 1 s, its deadline 3 s)."""
SIDE_CHARS: Final = "wb"
COLOURS: Final = ("White", "Black")

# ---------------------------------------------------------------------------------------------
# Zobrist numbers (fixed seed: keys are stable across runs and processes)

_rng = random.Random(0x59494E5348)
Z_RING: Final = tuple(tuple(_rng.getrandbits(64) for _ in range(N_POINTS)) for _ in range(2))
Z_MARK: Final = tuple(tuple(_rng.getrandbits(64) for _ in range(N_POINTS)) for _ in range(2))
Z_FLIP: Final = tuple(Z_MARK[0][p] ^ Z_MARK[1][p] for p in range(N_POINTS))


def _xor_all(values: Iterable[int]) -> int:
    return functools.reduce(operator.xor, values, 0)


Z_WINDOW: Final = tuple(
    tuple(_xor_all(Z_MARK[c][p] for p in WINDOW_POINTS[w]) for w in range(N_WINDOWS))
    for c in range(2)
)
# side/phase: index side * 8 + phase, side -1 (game over) maps to slot 16 + phase
Z_TURN: Final = tuple(_rng.getrandbits(64) for _ in range(24))
del _rng


def _turn_slot(side: int, phase: int) -> int:
    return (16 if side < 0 else side * 8) + phase


def _iter_bits(mask: Bitboard) -> list[Point]:
    out: list[Point] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _full_rows(markers: Bitboard) -> tuple[Window, ...]:
    """Every window fully covered by ``markers`` (a full scan; used when parsing)."""
    return tuple(w for w in range(N_WINDOWS) if WINDOW_MASK[w] & markers == WINDOW_MASK[w])


# wr, br, wm, bm, side, phase, rem_w, rem_b, pool, rows_w, rows_b, key, move
_Snapshot: TypeAlias = tuple[
    int, int, int, int, int, int, int, int, int, tuple[int, ...], tuple[int, ...], int, int
]

_MOVE_RE: Final = re.compile(r"[a-k](?:[1-9]|1[01])")


class YinshGame(Game):
    """YINSH or YINSH blitz: the variant only sets the number of rings that wins."""

    colours = COLOURS
    start_position = "4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51"
    # 10 placements, at most 71 ring moves (rules §5), a pass before each ring move but the
    # first (two in a row end the game), and 2 plies per removed row (at most 5 per side).
    max_plies = 10 + 71 + 72 + 2 * 10

    def __init__(self, variant: str = "yinsh") -> None:
        if variant not in ("yinsh", "yinsh+blitz"):
            raise ValueError(f"unknown Yinsh variant {variant!r}")
        self.name = variant
        self.target = 1 if variant == "yinsh+blitz" else 3

    def state_from_string(self, text: str) -> YinshState:
        return _parse_position(self, text)


class YinshState(State):
    """A YINSH position. See the module docstring for phases and representation."""

    __slots__ = (
        "_bm",
        "_br",
        "_key",
        "_phase",
        "_pool",
        "_rem_b",
        "_rem_w",
        "_rows_b",
        "_rows_w",
        "_side",
        "_stack",
        "_target",
        "_wm",
        "_wr",
        "game",
    )

    def __init__(
        self,
        game: YinshGame,
        *,
        rings: tuple[Bitboard, Bitboard],
        markers: tuple[Bitboard, Bitboard],
        side: int,
        phase: int,
        removed: tuple[int, int],
        pool: int,
    ) -> None:
        self.game: YinshGame = game
        self._target = game.target
        self._wr, self._br = rings
        self._wm, self._bm = markers
        self._side = side
        self._phase = phase
        self._rem_w, self._rem_b = removed
        self._pool = pool
        # Rows are only ever pending in phases x, r, X, R (none exist at a ring move).
        self._rows_w = _full_rows(self._wm)
        self._rows_b = _full_rows(self._bm)
        self._stack: list[_Snapshot] = []
        self._key = self._compute_key()

    def _compute_key(self) -> int:
        key = Z_TURN[_turn_slot(self._side, self._phase)]
        for c, rings, marks in ((0, self._wr, self._wm), (1, self._br, self._bm)):
            for p in _iter_bits(rings):
                key ^= Z_RING[c][p]
            for p in _iter_bits(marks):
                key ^= Z_MARK[c][p]
        return key

    # -- queries -----------------------------------------------------------------------------

    def to_move(self) -> Player:
        return self._side

    def phase(self) -> str:
        return PHASE_CHARS[self._phase]

    def phase_name(self) -> str:
        """A readable name of the phase (``"remove own row"``)."""
        return PHASE_NAMES[self._phase]

    def turn_position(self) -> tuple[int, int]:
        """A ring move (or placement) alone, unless a row was made: then a row and a ring are
        removed, after the mover's own move (``x``, ``r``) or, for a row the opponent made,
        before it (``X``, ``R``)."""
        return _TURN_POSITION[self._phase]

    def time_weight(self) -> float:
        """A ring placement weighs ``PLACEMENT_TIME_WEIGHT``; every other decision 1."""
        return PLACEMENT_TIME_WEIGHT if self._phase == PH_P else 1.0

    def is_terminal(self) -> bool:
        return self._phase == PH_E

    def removed(self) -> tuple[int, int]:
        """Rings removed by White and by Black."""
        return self._rem_w, self._rem_b

    def pool(self) -> int:
        """Markers left in the pool."""
        return self._pool

    def rings_mask(self, player: Player) -> Bitboard:
        """The bitboard of ``player``'s rings on the board."""
        return self._br if player else self._wr

    def markers_mask(self, player: Player) -> Bitboard:
        """The bitboard of the markers showing ``player``'s colour."""
        return self._bm if player else self._wm

    def pending_rows(self, player: Player) -> tuple[Window, ...]:
        """The windows that are rows of ``player``'s colour now (empty at a ring move)."""
        return self._rows_b if player else self._rows_w

    def outcome(self) -> Outcome | None:
        if self._phase != PH_E:
            return None
        w, b = self._rem_w, self._rem_b
        if w == self._target or b == self._target:
            reason = "target-reached"
        elif self._pool == 0:
            reason = "pool-empty"
        else:
            reason = "two-passes"
        winner: Winner = "p1" if w > b else "p2" if b > w else "draw"
        return Outcome(winner, reason, (("score_p1", w), ("score_p2", b), ("margin", abs(w - b))))

    def key(self) -> int:
        return self._key

    def ply(self) -> int:
        return len(self._stack)

    # -- move generation ---------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        phase = self._phase
        if phase == PH_M or phase == PH_N:
            moves = self._ring_moves()
            return moves if moves else [PASS]
        if phase == PH_P:
            occupied = self._wr | self._br
            return [p for p in range(N_POINTS) if not occupied >> p & 1]
        if phase == PH_X or phase == PH_XO:
            return [ROW_TAKE | w for w in (self._rows_b if self._side else self._rows_w)]
        if phase == PH_R or phase == PH_RO:
            return [RING_TAKE | p for p in _iter_bits(self._br if self._side else self._wr)]
        return []

    def _ring_moves(self) -> list[Move]:
        if _native is not None:
            own = self._br if self._side else self._wr
            return _native.ring_moves(own, self._wr | self._br, self._wm | self._bm, False)
        return self._ring_moves_python()

    def _ring_moves_python(self) -> list[Move]:
        """The ring moves in Python: the reference of the native ones."""
        rings = self._wr | self._br
        markers = self._wm | self._bm
        out: list[Move] = []
        append = out.append
        for o in _iter_bits(self._br if self._side else self._wr):
            base = RING_MOVE | o << 7
            for ray in RAYS[o]:
                jumped = False
                for t in ray:
                    if rings >> t & 1:
                        break
                    if markers >> t & 1:
                        jumped = True
                        continue
                    append(base | t)
                    if jumped:
                        break
        return out

    def count_moves(self) -> int:
        phase = self._phase
        if phase == PH_M or phase == PH_N:
            return self._count_ring_moves() or 1  # no ring move: the one move is pass
        if phase == PH_P:
            return N_POINTS - (self._wr | self._br).bit_count()
        if phase == PH_X or phase == PH_XO:
            return len(self._rows_b if self._side else self._rows_w)
        if phase == PH_R or phase == PH_RO:
            return (self._br if self._side else self._wr).bit_count()
        return 0

    def _count_ring_moves(self) -> int:
        if _native is not None:
            own = self._br if self._side else self._wr
            return _native.ring_moves(own, self._wr | self._br, self._wm | self._bm, True)
        rings = self._wr | self._br
        markers = self._wm | self._bm
        n = 0
        for o in _iter_bits(self._br if self._side else self._wr):
            for ray in RAYS[o]:
                jumped = False
                for t in ray:
                    if rings >> t & 1:
                        break
                    if markers >> t & 1:
                        jumped = True
                        continue
                    n += 1
                    if jumped:
                        break
        return n

    # -- make / unmake -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        self._stack.append(
            (
                self._wr,
                self._br,
                self._wm,
                self._bm,
                self._side,
                self._phase,
                self._rem_w,
                self._rem_b,
                self._pool,
                self._rows_w,
                self._rows_b,
                self._key,
                move,
            )
        )
        side = self._side
        phase = self._phase
        key = self._key ^ Z_TURN[_turn_slot(side, phase)]
        if phase == PH_M or phase == PH_N:
            if move != PASS:
                key = self._ring_move(move, side, key)
            elif phase == PH_M:
                self._side = side ^ 1
                self._phase = PH_N
            else:
                self._side = NOBODY
                self._phase = PH_E
        elif phase == PH_P:
            key = self._place(move, side, key)
        elif phase == PH_X or phase == PH_XO:
            key = self._take_row(move & _LOW14, side, phase, key)
        else:  # PH_R or PH_RO
            key = self._take_ring(move & _LOW14, side, phase, key)
        self._key = key ^ Z_TURN[_turn_slot(self._side, self._phase)]

    def _place(self, p: Point, side: int, key: int) -> int:
        if side:
            self._br |= BIT[p]
        else:
            self._wr |= BIT[p]
        if (self._wr | self._br).bit_count() == 10:
            self._side = 0
            self._phase = PH_M
        else:
            self._side = side ^ 1
        return key ^ Z_RING[side][p]

    def _take_row(self, w: Window, side: int, phase: int, key: int) -> int:
        # a removal breaks rows, never makes one: the rows left are those still full
        mask = WINDOW_MASK[w]
        if side:
            bm = self._bm ^ mask
            self._bm = bm
            self._rows_b = tuple(v for v in self._rows_b if WINDOW_MASK[v] & bm == WINDOW_MASK[v])
        else:
            wm = self._wm ^ mask
            self._wm = wm
            self._rows_w = tuple(v for v in self._rows_w if WINDOW_MASK[v] & wm == WINDOW_MASK[v])
        self._pool += 5
        self._phase = PH_R if phase == PH_X else PH_RO
        return key ^ Z_WINDOW[side][w]

    def _take_ring(self, p: Point, side: int, phase: int, key: int) -> int:
        if side:
            self._br ^= BIT[p]
            self._rem_b += 1
            count = self._rem_b
            has_row = bool(self._rows_b)
        else:
            self._wr ^= BIT[p]
            self._rem_w += 1
            count = self._rem_w
            has_row = bool(self._rows_w)
        if count == self._target:
            self._side = NOBODY
            self._phase = PH_E
        elif has_row:
            self._phase = PH_X if phase == PH_R else PH_XO
        elif phase == PH_R:
            self._mover_done(side)
        else:
            self._begin_ring_move(side)
        return key ^ Z_RING[side][p]

    def _ring_move(self, move: Move, side: int, key: int) -> int:
        o = move >> 7 & 0x7F
        t = move & 0x7F
        flipped = BETWEEN[o << 7 | t] & (self._wm | self._bm)
        z_ring = Z_RING[side]
        key ^= z_ring[o] ^ z_ring[t] ^ Z_MARK[side][o]
        if side:
            self._br ^= BIT[o] | BIT[t]
            self._bm |= BIT[o]
        else:
            self._wr ^= BIT[o] | BIT[t]
            self._wm |= BIT[o]
        self._pool -= 1
        changed = [o]
        if flipped:
            self._wm ^= flipped
            self._bm ^= flipped
            f = flipped
            while f:
                low = f & -f
                p = low.bit_length() - 1
                key ^= Z_FLIP[p]
                changed.append(p)
                f ^= low
        # New rows must run through a changed point; none existed before the move.
        wm = self._wm
        bm = self._bm
        rows_w: list[Window] = []
        rows_b: list[Window] = []
        for p in changed:
            if wm >> p & 1:
                for w, mask in WINDOWS_AT[p]:
                    if wm & mask == mask and w not in rows_w:
                        rows_w.append(w)
            else:
                for w, mask in WINDOWS_AT[p]:
                    if bm & mask == mask and w not in rows_b:
                        rows_b.append(w)
        self._rows_w = tuple(rows_w)
        self._rows_b = tuple(rows_b)
        if rows_b if side else rows_w:
            self._side = side
            self._phase = PH_X
        else:
            self._mover_done(side)
        return key

    def _mover_done(self, mover: int) -> None:
        other = mover ^ 1
        if self._rows_b if other else self._rows_w:
            self._side = other
            self._phase = PH_XO
        else:
            self._begin_ring_move(other)

    def _begin_ring_move(self, player: int) -> None:
        if self._pool == 0:
            self._side = NOBODY
            self._phase = PH_E
        else:
            self._side = player
            self._phase = PH_M

    def pop(self) -> Move:
        (
            self._wr,
            self._br,
            self._wm,
            self._bm,
            self._side,
            self._phase,
            self._rem_w,
            self._rem_b,
            self._pool,
            self._rows_w,
            self._rows_b,
            self._key,
            move,
        ) = self._stack.pop()
        return move

    def copy(self) -> YinshState:
        other = object.__new__(YinshState)
        for name in YinshState.__slots__:
            setattr(other, name, getattr(self, name))
        other._stack = list(self._stack)
        return other

    # -- notation ----------------------------------------------------------------------------

    def move_to_str(self, move: Move) -> str:
        kind = move >> KIND_SHIFT
        low = move & _LOW14
        if kind == 0:
            return POINT_NAMES[low]
        if kind == 1:
            return f"{POINT_NAMES[low >> 7]}-{POINT_NAMES[low & 0x7F]}"
        if kind == 2:
            return "x:" + WINDOW_NAMES[low]
        if kind == 3:
            return "r:" + POINT_NAMES[low]
        return "pass"

    def parse_move(self, text: str) -> Move:
        move = parse_token(text)
        if self._phase == PH_E:
            raise IllegalMoveError(text, "the game is over")
        if move not in self.legal_moves():
            raise IllegalMoveError(text, _why_illegal(self, move))
        return move

    def to_string(self) -> str:
        return (
            f"{format_board(self._wr, self._br, self._wm, self._bm)} "
            f"{SIDE_CHARS[self._side] if self._side >= 0 else '-'} {PHASE_CHARS[self._phase]} "
            f"{self._rem_w}-{self._rem_b} {self._pool}"
        )

    def render(self) -> str:
        return render_board(self)


# ---------------------------------------------------------------------------------------------
# Tokens


def parse_token(text: str) -> Move:
    """Parse a canonical Yinsh token into a move, without looking at any position.

    Raises:
        InvalidMoveError: not a canonical token (syntax, unknown point, ends not 4 apart on a
            line or in the wrong order).
    """
    if text == "pass":
        return PASS
    if text.startswith("x:"):
        ends = text[2:].split("-")
        if len(ends) != 2:
            raise InvalidMoveError(text, "a row is written x:<first end>-<last end>")
        a, b = (_parse_point(text, e) for e in ends)
        w = WINDOW_OF_ENDS.get((a, b))
        if w is None:
            if (b, a) in WINDOW_OF_ENDS:
                raise InvalidMoveError(
                    text,
                    "row ends in the wrong order (the first end is "
                    "the one with the smaller column, then smaller row)",
                )
            raise InvalidMoveError(text, "the ends are not 4 steps apart on one line")
        return ROW_TAKE | w
    if text.startswith("r:"):
        return RING_TAKE | _parse_point(text, text[2:])
    if "-" in text:
        ends = text.split("-")
        if len(ends) != 2:
            raise InvalidMoveError(text, "a ring move is written <from>-<to>")
        o, t = (_parse_point(text, e) for e in ends)
        return RING_MOVE | o << 7 | t
    return _parse_point(text, text)


def _parse_point(token: str, text: str) -> Point:
    p = POINT_OF_NAME.get(text)
    if p is None:
        if _MOVE_RE.fullmatch(text):
            raise InvalidMoveError(token, f"{text} is not a point of the board")
        raise InvalidMoveError(token, f"{text!r} is not a point (lowercase column a-k, row 1-11)")
    return p


_WANTED: Final = {
    PH_P: ((0,), "a placement (an empty point)"),
    PH_M: ((1, 4), "a ring move"),
    PH_N: ((1, 4), "a ring move"),
    PH_X: ((2,), "a row removal (x:...)"),
    PH_XO: ((2,), "a row removal (x:...)"),
    PH_R: ((3,), "a ring removal (r:...)"),
    PH_RO: ((3,), "a ring removal (r:...)"),
}
"""Per phase (but the end): the kinds of move it takes (``move >> KIND_SHIFT``), in words."""


def _why_illegal(state: YinshState, move: Move) -> str:
    kinds, wanted = _WANTED[state._phase]
    kind = move >> KIND_SHIFT
    if kind not in kinds:
        return f"phase {PHASE_CHARS[state._phase]} wants {wanted}"
    if move == PASS:
        return "pass is legal only when no ring move exists"
    side = state._side
    low = move & _LOW14
    if kind == 0:
        return f"{POINT_NAMES[low]} is occupied"
    if kind == 1:
        return _why_ring_move_illegal(state.rings_mask(side), side, low >> 7, low & 0x7F)
    if kind == 2:
        return f"{WINDOW_NAMES[low]} is not a row of {COLOURS[side]}'s colour"
    return f"no {COLOURS[side]} ring on {POINT_NAMES[low]}"


def _why_ring_move_illegal(own_rings: Bitboard, side: int, o: Point, t: Point) -> str:
    if o == t:
        return "a ring must move at least one point"
    if not any(t in ray for ray in RAYS[o]):
        return f"{POINT_NAMES[t]} is not on a line with {POINT_NAMES[o]}"
    if not own_rings >> o & 1:
        return f"no {COLOURS[side]} ring on {POINT_NAMES[o]}"
    return "the ring cannot reach that point (blocked, or past the first gap after markers)"


# ---------------------------------------------------------------------------------------------
# Position strings (rules §8)

_PIECE_CHARS: Final = "WBwb"
_COLUMN_RE: Final = re.compile(r"(?:[WBwb]|10|[1-9])+")
_NUM_RE: Final = re.compile(r"0|[1-9][0-9]*")


def _piece_char(boards: tuple[Bitboard, Bitboard, Bitboard, Bitboard], bit: int, empty: str) -> str:
    """The position-string letter on a point: ring W/B, marker w/b, else ``empty``."""
    for ch, board in zip("WBwb", boards, strict=True):
        if board & bit:
            return ch
    return empty


def format_board(wr: Bitboard, br: Bitboard, wm: Bitboard, bm: Bitboard) -> str:
    """The board field of the position string."""
    boards = (wr, br, wm, bm)
    columns: list[str] = []
    p = 0
    for length in COLUMN_LENGTHS:
        parts: list[str] = []
        empty = 0
        for _ in range(length):
            bit = BIT[p]
            ch = _piece_char(boards, bit, "")
            if ch:
                if empty:
                    parts.append(str(empty))
                    empty = 0
                parts.append(ch)
            else:
                empty += 1
            p += 1
        if empty:
            parts.append(str(empty))
        columns.append("".join(parts))
    return "/".join(columns)


_Bad: TypeAlias = Callable[[str, str], InvalidPositionError]
"""Builds the error of a position string from the field at fault and why."""


def _parse_position(game: YinshGame, text: str) -> YinshState:
    def bad(field: str, reason: str) -> InvalidPositionError:
        return InvalidPositionError(text, field, reason)

    if text != text.strip() or "  " in text:
        raise bad("syntax", "single spaces between fields, none before or after")
    fields = text.split(" ")
    if len(fields) != 5:
        raise bad("syntax", f"expected 5 fields (board side phase removed pool), got {len(fields)}")
    board, side_s, phase_s, removed_s, pool_s = fields
    rings, markers = _parse_board(board, bad)  # V1

    if side_s not in ("w", "b", "-"):
        raise bad("side", f"{side_s!r} is not w, b or -")
    if phase_s not in _PHASE_OF_CHAR:
        raise bad("phase", f"{phase_s!r} is not one of {' '.join(PHASE_CHARS)}")
    m = re.fullmatch(r"([0-9])-([0-9])", removed_s)
    if not m:
        raise bad("removed", f"{removed_s!r} is not <digit>-<digit>")
    removed = int(m.group(1)), int(m.group(2))
    if not _NUM_RE.fullmatch(pool_s) or int(pool_s) > 51:
        raise bad("pool", f"{pool_s!r} is not a number 0-51 without leading zeros")
    pool = int(pool_s)
    side = NOBODY if side_s == "-" else SIDE_CHARS.index(side_s)
    phase = _PHASE_OF_CHAR[phase_s]

    n_markers = (markers[0] | markers[1]).bit_count()
    if n_markers + pool != 51:  # V2
        raise bad("pool", f"{n_markers} markers on the board + pool {pool} is not 51")
    _check_rings(rings, removed, n_markers=n_markers, side=side, phase=phase, bad=bad)  # V3, V4
    if (side == NOBODY) != (phase == PH_E):  # V5
        raise bad("side", "side is '-' exactly when the phase is e")
    _check_removed(removed, game.target, phase, bad)  # V6
    state = YinshState(
        game, rings=rings, markers=markers, side=side, phase=phase, removed=removed, pool=pool
    )
    _check_rows(state, bad)  # V7, V8
    return state


def _parse_board(
    board: str, bad: _Bad
) -> tuple[tuple[Bitboard, Bitboard], tuple[Bitboard, Bitboard]]:
    """The rings and the markers of the board field, each of White and Black."""
    columns = board.split("/")
    if len(columns) != 11:
        raise bad("board", f"expected 11 columns a-k separated by '/', got {len(columns)}")
    rings = [0, 0]
    markers = [0, 0]
    p = 0
    for letter, col, length in zip(COLUMNS, columns, COLUMN_LENGTHS, strict=True):
        if not _COLUMN_RE.fullmatch(col):
            raise bad("board", f"column {letter} {col!r}: only W B w b and empty counts 1-10")
        filled = 0
        prev_digit = False
        for tok in re.findall(r"10|[1-9]|[WBwb]", col):
            if tok.isdigit():
                if prev_digit:
                    raise bad("board", f"column {letter} {col!r}: two empty counts in a row")
                prev_digit = True
                filled += int(tok)
                if filled > length:
                    break
                p += int(tok)
            else:
                prev_digit = False
                filled += 1
                if filled > length:
                    break
                kind = _PIECE_CHARS.index(tok)
                (rings if kind < 2 else markers)[kind % 2] |= BIT[p]
                p += 1
        if filled != length:
            raise bad(
                "board",
                f"column {letter} {col!r} describes {filled} points, but the column has {length}",
            )
    return (rings[0], rings[1]), (markers[0], markers[1])


def _check_rings(
    rings: tuple[Bitboard, Bitboard],
    removed: tuple[int, int],
    *,
    n_markers: int,
    side: int,
    phase: int,
    bad: _Bad,
) -> None:
    """The rings on the board agree with the phase, the side and the rings removed."""
    n_w, n_b = rings[0].bit_count(), rings[1].bit_count()
    rem_w, rem_b = removed
    if phase == PH_P:  # V3
        if n_markers or rem_w or rem_b:
            raise bad("phase", "in placement there are no markers and nothing is removed")
        if not ((n_w == n_b and side == 0) or (n_w == n_b + 1 and side == 1)):
            side_s = "-" if side == NOBODY else SIDE_CHARS[side]
            raise bad(
                "side",
                f"with {n_w} White and {n_b} Black rings placed, "
                f"it is not {side_s}'s turn to place",
            )
        if n_w + n_b > 9:
            raise bad("board", "at most 9 rings stand on the board in placement")
    elif n_w != 5 - rem_w or n_b != 5 - rem_b:  # V4
        raise bad(
            "removed",
            f"{n_w} White and {n_b} Black rings on the board do not match removed {rem_w}-{rem_b}",
        )


def _check_removed(removed: tuple[int, int], target: int, phase: int, bad: _Bad) -> None:
    """The rings removed reach the target exactly when the game is over."""
    rem_w, rem_b = removed
    if phase != PH_E:
        if rem_w >= target or rem_b >= target:
            raise bad(
                "removed", f"a removed count reached the target {target} but the game is not over"
            )
    elif rem_w > target or rem_b > target or rem_w == rem_b == target:
        raise bad("removed", f"impossible final count {rem_w}-{rem_b} for target {target}")


def _check_rows(state: YinshState, bad: _Bad) -> None:
    """The rows on the board agree with the phase."""
    rows = (state._rows_w, state._rows_b)
    phase, side = state._phase, state._side
    if phase in (PH_M, PH_N):  # V7
        if state._pool < 1:
            raise bad("pool", "a ring move needs at least one marker in the pool")
        if rows[0] or rows[1]:
            raise bad("board", "no row may stand on the board at a ring move")
    if phase in (PH_X, PH_XO) and not rows[side]:  # V8
        raise bad("phase", f"{COLOURS[side]} has no row to remove")
    if phase in (PH_XO, PH_RO) and rows[side ^ 1]:
        raise bad("phase", f"{COLOURS[side ^ 1]} still has a row, which would be removed first")


# ---------------------------------------------------------------------------------------------
# Drawing


def render_board(state: YinshState) -> str:
    """The board in the layout of rules §2.3: each point drawn as its piece and row number.

    ``W``/``B`` rings, ``w``/``b`` markers, ``.`` empty; the column letter heads each column.
    Below the board: the rings and markers counted, and a legend of the letters.
    """
    width = 4 * 10 + 4
    lines = [[" "] * width for _ in range(19)]
    boards = (state._wr, state._br, state._wm, state._bm)
    for p, (q, r) in enumerate(COORDS):
        bit = BIT[p]
        ch = _piece_char(boards, bit, ".")
        cell = f"{ch}{r}"
        y = 16 - 2 * r + q
        for i, c in enumerate(cell):
            lines[y][4 * q + 1 + i] = c
    header = "".join(f" {c}  " for c in COLUMNS).rstrip()
    body = ["".join(row).rstrip() for row in lines]
    rem_w, rem_b = state.removed()
    on_board = (state._wm | state._bm).bit_count()
    info = [
        f"rings on board: White {state._wr.bit_count()}, Black {state._br.bit_count()}; "
        f"removed: White {rem_w}, Black {rem_b} (target {state.game.target})",
        f"markers: {on_board} on the board, {state.pool()} in the pool",
        "W/B = White/Black ring, w/b = White/Black marker, . = empty; "
        "w7 under column d = White marker on d7",
    ]
    return "\n".join([header, *body, header, "", *info])


# ---------------------------------------------------------------------------------------------
# The native ring moves


class _Native(Protocol):
    """What ``games/_yinsh_native.c`` offers."""

    def init(self, rays: object, ring_move: int, /) -> None: ...

    @overload
    def ring_moves(
        self, own: int, rings: int, markers: int, count_only: Literal[False], /
    ) -> list[Move]: ...
    @overload
    def ring_moves(
        self, own: int, rings: int, markers: int, count_only: Literal[True], /
    ) -> int: ...


def _load_native() -> _Native | None:
    """The C ring moves, given this module's rays; None when they are not built, or
    ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("games._yinsh_native")
    if module is None:
        return None
    native = cast(_Native, module)
    native.init(RAYS, RING_MOVE)
    return native


_native = _load_native()

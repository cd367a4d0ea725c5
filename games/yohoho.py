"""Yohoho! (Philippe Matharel), per rules/yohoho.md: a sea battle on 77 hexagonal cells.

Phases (one decision = one ply = one token; a moving turn is two plies by the same player):

=====  ==================================================================  =================
phase  decision                                                            token
=====  ==================================================================  =================
1      start of a turn: capture one capturable enemy ship, or make the     ``x:h6``,
       first sub-move (under Arno's rule only freeing captures and         ``e1-b4``
       Admiral steps); White's very first turn is this one sub-move only,
       and an Admiral stopping on its goal row ends the turn at once
2      second sub-move, by any own piece but the one on the remembered     ``c1-a1``
       cell (``2:<cell>`` in the position string)
=====  ==================================================================  =================

The game ends (checked before every decision) when an Admiral stands on its goal row (1 point),
when the side to act has a trapped Admiral (2 points) or has no legal token (2 points).

Position string: ``board side phase first``, e.g. ``1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1``
(rows 9 down to 1; ``A G C R`` White, ``a g c r`` Black; phase ``1`` or ``2:<cell>``).

Representation. Cells are numbered as Jocly numbers them (a1 = 0, row by row, q9 = 76). With
rows of 9 and 8 cells alternating, every direction is one fixed index shift (E +1, NE +9, NW +8,
W -1, SW -9, SE -8), so a whole set of pieces steps at once: ``((pieces & SOURCE[d]) << 9) &
empty`` are the cells one NE step away, where ``SOURCE[d]`` (cells that have a neighbour in that
direction) stops steps from wrapping round an edge. Sliding counts are therefore a few shifts per
direction and distance, not a walk per piece. The eight piece bitboards (colour * 4 + kind) live
in one tuple that ``push`` replaces, so a snapshot for ``pop`` costs no copying.

Rule 13 (a first sub-move needs a possible second one) would naively cost a move generation per
first sub-move. It is decided exactly and cheaply instead: a first sub-move from f to t frees f
and fills t and changes nothing else, so another piece can move afterwards iff it had a free
step other than t, or f is one of its step cells. Two pieces with two free steps each therefore
make every first sub-move completable; only positions without them are checked move by move.

Moves are ints: a sub-move is ``from << 7 | to``; a capture is ``CAPTURE | cell``.
"""

from __future__ import annotations

import functools
import operator
import random
import re
from collections.abc import Callable
from typing import Final, Protocol, TypeAlias, cast

from games.base import NOBODY, Game, Move, Outcome, Player, State, Winner
from games.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from games.native import native_module

Cell: TypeAlias = int
Bitboard: TypeAlias = int

# ---------------------------------------------------------------------------------------------
# Geometry (rules §2)

LETTERS: Final = "abcdefghijklmnopq"
COORDS: Final = tuple((x, y) for y in range(1, 10) for x in range(17) if (x + y) % 2 == 1)
N_CELLS: Final = len(COORDS)  # 77
_INDEX_OF: Final = {xy: i for i, xy in enumerate(COORDS)}
CELL_NAMES: Final = tuple(f"{LETTERS[x]}{y}" for x, y in COORDS)
CELL_OF_NAME: Final = {name: i for i, name in enumerate(CELL_NAMES)}
BIT: Final = tuple(1 << c for c in range(N_CELLS))
FULL_MASK: Final = (1 << N_CELLS) - 1
ROW_CELLS: Final = tuple(
    tuple(c for c in range(N_CELLS) if COORDS[c][1] == y) for y in range(10)
)  # index 0 unused
ROW_MASK: Final = tuple(sum(BIT[c] for c in cells) for cells in ROW_CELLS)

# Directions in Jocly's order, with the index shift each one is (uniform over the board).
E, NE, NW, W, SW, SE = range(6)
DIR_NAMES: Final = ("E", "NE", "NW", "W", "SW", "SE")
DIR_XY: Final = ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1))
SHIFTS: Final = (1, 9, 8, -1, -9, -8)
SHIP_DIRS: Final = (NE, NW, W, SW, SE)  # never E: the wind blows from the east
ROCK_DIRS: Final = (E, NE, NW, W, SW, SE)


def _neighbour(c: Cell, d: int) -> Cell | None:
    x, y = COORDS[c]
    dx, dy = DIR_XY[d]
    return _INDEX_OF.get((x + dx, y + dy))


def _ray(c: Cell, d: int) -> tuple[Cell, ...]:
    out: list[Cell] = []
    n = _neighbour(c, d)
    while n is not None:
        out.append(n)
        n = _neighbour(n, d)
    return tuple(out)


RAYS: Final = tuple(tuple(_ray(c, d) for d in range(6)) for c in range(N_CELLS))
NBR: Final = tuple(sum(BIT[r[0]] for r in RAYS[c] if r) for c in range(N_CELLS))
"""All (up to six) neighbours: the cells that count for strength (rule 5)."""
SHIP_NBR: Final = tuple(
    sum(BIT[RAYS[c][d][0]] for d in SHIP_DIRS if RAYS[c][d]) for c in range(N_CELLS)
)
"""The cells a ship may step to (every neighbour but the one to the east)."""
SHIP_NBR_CELLS: Final = tuple(
    tuple(RAYS[c][d][0] for d in SHIP_DIRS if RAYS[c][d]) for c in range(N_CELLS)
)
STEP_NBR: Final = (SHIP_NBR, SHIP_NBR, SHIP_NBR, NBR)
"""Per kind: the cells one step away in the directions it may move (the Rock has all six)."""
RADIUS2: Final = tuple(
    functools.reduce(operator.or_, (NBR[n] for n in range(N_CELLS) if NBR[c] >> n & 1), NBR[c])
    for c in range(N_CELLS)
)
"""Cells within two steps: an enemy ship farther away cannot touch a neighbour of ``c``."""
SOURCE: Final = tuple(sum(BIT[c] for c in range(N_CELLS) if RAYS[c][d]) for d in range(6))
"""Per direction: the cells that have a neighbour that way (shifting others would wrap)."""

# Directions as (source mask, shift) split by the sign of the shift, for set-wise stepping.
_SHIP_UP: Final = tuple((SOURCE[d], SHIFTS[d]) for d in SHIP_DIRS if SHIFTS[d] > 0)
_SHIP_DOWN: Final = tuple((SOURCE[d], -SHIFTS[d]) for d in SHIP_DIRS if SHIFTS[d] < 0)


def _rock_lines(c: Cell) -> tuple[tuple[Bitboard, int, int], ...]:
    """Per direction (ray mask, signed shift, length): a Rock's reach is up to the first blocker."""
    return tuple(
        (sum(BIT[t] for t in RAYS[c][d]), SHIFTS[d], len(RAYS[c][d]))
        for d in ROCK_DIRS
        if RAYS[c][d]
    )


ROCK_LINES: Final = tuple(_rock_lines(c) for c in range(N_CELLS))

# ---------------------------------------------------------------------------------------------
# Pieces, sides, moves

ADMIRAL, GALLEON, CHEBEC, ROCK = range(4)
KIND_NAMES: Final = ("Admiral", "Galleon", "Chebec", "Rock")
STRENGTH: Final = (5, 3, 2, 0)
REACH: Final = (1, 2, 3, 8)  # a Rock goes as far as the board allows: 8 cells at most
PIECE_CHARS: Final = "AGCRagcr"  # index colour * 4 + kind
_PIECE_OF_CHAR: Final = {ch: i for i, ch in enumerate(PIECE_CHARS)}
SIDE_CHARS: Final = "wb"
COLOURS: Final = ("White", "Black")
GOAL_ROW: Final = (9, 1)
GOAL_MASK: Final = (ROW_MASK[9], ROW_MASK[1])
SAFE_LIMIT: Final = 5
"""An Admiral is capturable when the adjacent enemy strength exceeds this (rules 6, 7, 9)."""

CAPTURE: Final = 1 << 14
_CELL_BITS: Final = 0x7F
NO_CELL: Final = -1
"""``_p2`` in phase 1: no remembered cell."""

# Outcome codes: 0 = not over, -1 = not computed yet, else 1 + 2 * reason + winner seat.
_UNKNOWN: Final = -1
_ONGOING: Final = 0
REASONS: Final = ("goal-row", "admiral-trapped", "no-legal-action")
SCORES: Final = (1, 2, 2)
GOAL_REACHED, ADMIRAL_TRAPPED, NO_LEGAL_ACTION = range(3)


def _end_code(reason: int, winner: Player) -> int:
    return 1 + 2 * reason + winner


# ---------------------------------------------------------------------------------------------
# Zobrist numbers (fixed seed: keys are stable across runs and processes)

_rng = random.Random(0x594F484F484F)
Z_PIECE: Final = tuple(tuple(_rng.getrandbits(64) for _ in range(N_CELLS)) for _ in range(8))
Z_BLACK: Final = _rng.getrandbits(64)
Z_FIRST: Final = _rng.getrandbits(64)
Z_PHASE2: Final = tuple(_rng.getrandbits(64) for _ in range(N_CELLS))
del _rng

# pieces, occupied, side, p2 cell, first flag, key, status, move
_Snapshot: TypeAlias = tuple[tuple[int, ...], int, int, int, int, int, int, int]


# ---------------------------------------------------------------------------------------------
# Set-wise helpers (hot paths: module functions on plain ints)


def _enemy_strength(cell: Cell, ea: Bitboard, eg: Bitboard, ec: Bitboard) -> int:
    """``enemy(cell, S)`` of rule 5, given side S's opponent's Admiral, Galleons, Chebecs."""
    m = NBR[cell]
    s = 3 * (m & eg).bit_count() + 2 * (m & ec).bit_count()
    return s + 5 if m & ea else s


def _safe_cells(a: Cell, ea: Bitboard, eg: Bitboard, ec: Bitboard) -> Bitboard:
    """The ship-step cells D of an Admiral on ``a`` with ``enemy(D) <= 5`` (rule 7).

    Empty or not: a cell that the first sub-move frees may become a second sub-move's target.
    The enemy pieces never change within a moving turn, so one answer serves both sub-moves.
    """
    if not (eg | ec) & RADIUS2[a]:
        return SHIP_NBR[a]  # at most the enemy Admiral is near: 5 is not more than 5
    safe = 0
    for d in SHIP_NBR_CELLS[a]:
        m = NBR[d]
        s = 3 * (m & eg).bit_count() + 2 * (m & ec).bit_count()
        if m & ea:
            s += 5
        if s <= SAFE_LIMIT:
            safe |= BIT[d]
    return safe


def _count_slides_python(pieces: Bitboard, empty: Bitboard, reach: int) -> int:
    """Ship sub-moves of all ``pieces`` (one kind) of 1..``reach`` cells over ``empty`` cells
    (the reference of the native ``count_slides``).

    For a fixed direction and distance every destination has one origin, so the popcounts of
    the stepped sets add up to the number of moves.
    """
    n = 0
    for src, s in _SHIP_UP:
        cur = pieces
        for _ in range(reach):
            cur = ((cur & src) << s) & empty
            if not cur:
                break
            n += cur.bit_count()
    for src, s in _SHIP_DOWN:
        cur = pieces
        for _ in range(reach):
            cur = ((cur & src) >> s) & empty
            if not cur:
                break
            n += cur.bit_count()
    return n


def _add_slides_python(out: list[Move], pieces: Bitboard, empty: Bitboard, reach: int) -> None:
    """Append the sub-moves counted by ``_count_slides`` (the reference of the native
    ``add_slides``)."""
    append = out.append
    for src, s in _SHIP_UP:
        cur = pieces
        back = 0
        for _ in range(reach):
            cur = ((cur & src) << s) & empty
            if not cur:
                break
            back += s
            bits = cur
            while bits:
                low = bits & -bits
                t = low.bit_length() - 1
                append((t - back) << 7 | t)
                bits ^= low
    for src, s in _SHIP_DOWN:
        cur = pieces
        back = 0
        for _ in range(reach):
            cur = ((cur & src) >> s) & empty
            if not cur:
                break
            back += s
            bits = cur
            while bits:
                low = bits & -bits
                t = low.bit_length() - 1
                append((t + back) << 7 | t)
                bits ^= low


def _count_rock(r: Cell, occupied: Bitboard) -> int:
    """Rock sub-moves: each line up to the first occupied cell (shift = the step's index change)."""
    n = 0
    for mask, s, length in ROCK_LINES[r]:
        block = occupied & mask
        if not block:
            n += length
        elif s > 0:
            n += ((block & -block).bit_length() - 1 - r) // s - 1
        else:
            n += (r - block.bit_length() + 1) // -s - 1
    return n


def _add_rock(out: list[Move], r: Cell, occupied: Bitboard) -> None:
    base = r << 7
    for d in ROCK_DIRS:
        for t in RAYS[r][d]:
            if occupied >> t & 1:
                break
            out.append(base | t)


def _add_bits(out: list[Move], base: int, bits: Bitboard) -> None:
    while bits:
        low = bits & -bits
        out.append(base | (low.bit_length() - 1))
        bits ^= low


def _iter_bits(mask: Bitboard) -> list[Cell]:
    out: list[Cell] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _capturable(
    enemy_g: Bitboard, enemy_c: Bitboard, oa: Bitboard, og: Bitboard, oc: Bitboard
) -> list[Cell]:
    """The enemy Galleons and Chebecs whose adjacent own strength beats theirs (rule 6)."""
    out: list[Cell] = []
    own = oa | og | oc
    for bits, strength in ((enemy_g, 3), (enemy_c, 2)):
        while bits:
            low = bits & -bits
            bits ^= low
            x = low.bit_length() - 1
            m = NBR[x]
            if not m & own:
                continue
            s = 3 * (m & og).bit_count() + 2 * (m & oc).bit_count()
            if m & oa:
                s += 5
            if s > strength:
                out.append(x)
    return out


class _Mobility:
    """Per own piece: its step cells and its free steps now, for the completion rule (13)."""

    __slots__ = ("pieces",)

    def __init__(
        self, own: tuple[int, int, int, int], empty: Bitboard, safe: Bitboard, skip: Cell
    ) -> None:
        # (cell, step cells it may use, of which free now); an Admiral's step cells are its
        # safe ones, because the enemy pieces do not change within the turn.
        self.pieces: list[tuple[Cell, Bitboard, Bitboard]] = []
        for kind in (ADMIRAL, GALLEON, CHEBEC, ROCK):
            for c in _iter_bits(own[kind]):
                if c == skip:
                    continue
                steps = SHIP_NBR[c] & safe if kind == ADMIRAL else STEP_NBR[kind][c]
                self.pieces.append((c, steps, steps & empty))

    def completable(self, f: Cell, t: Cell) -> bool:
        """Whether, after the piece on ``f`` moves to ``t``, another piece can move."""
        fb = BIT[f]
        not_t = ~BIT[t]
        return any(c != f and (free & not_t or steps & fb) for c, steps, free in self.pieces)


def _robust_pieces(own: tuple[int, int, int, int], empty: Bitboard) -> int:
    """How many non-Admiral own pieces have two or more free steps (counting stops at 2).

    Two such pieces make every first sub-move completable: at least one of them stays put, and
    the first sub-move fills at most one of its free steps.
    """
    n = 0
    r = own[ROCK]
    if (NBR[r.bit_length() - 1] & empty).bit_count() >= 2:
        n = 1
    bits = own[GALLEON] | own[CHEBEC]
    while bits and n < 2:
        low = bits & -bits
        bits ^= low
        if (SHIP_NBR[low.bit_length() - 1] & empty).bit_count() >= 2:
            n += 1
    return n


# ---------------------------------------------------------------------------------------------
# Game and state


class YohohoGame(Game):
    """Yohoho!: one variant, no options."""

    colours = COLOURS
    start_position = "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1"

    def __init__(self, variant: str = "yohoho") -> None:
        if variant != "yohoho":
            raise ValueError(f"unknown Yohoho variant {variant!r}")
        self.name = variant

    def state_from_string(self, text: str) -> YohohoState:
        return _parse_position(self, text)


class YohohoState(State):
    """A Yohoho position. See the module docstring for phases and representation."""

    __slots__ = ("_first", "_key", "_occ", "_p2", "_pcs", "_side", "_stack", "_status", "game")

    def __init__(
        self, game: YohohoGame, *, pieces: tuple[int, ...], side: int, p2: Cell, first: int
    ) -> None:
        self.game: YohohoGame = game
        self._pcs = pieces
        occ = 0
        for bb in pieces:
            occ |= bb
        self._occ = occ
        self._side = side
        self._p2 = p2
        self._first = first
        self._status = _UNKNOWN
        self._stack: list[_Snapshot] = []
        self._key = self._compute_key()

    def _compute_key(self) -> int:
        key = Z_BLACK if self._side else 0
        if self._first:
            key ^= Z_FIRST
        if self._p2 >= 0:
            key ^= Z_PHASE2[self._p2]
        for i, bb in enumerate(self._pcs):
            for c in _iter_bits(bb):
                key ^= Z_PIECE[i][c]
        return key

    # -- queries -----------------------------------------------------------------------------

    def to_move(self) -> Player:
        return NOBODY if self.is_terminal() else self._side

    def side(self) -> Player:
        """The side named in the position string (kept on a finished game, unlike ``to_move``)."""
        return self._side

    def phase(self) -> str:
        """``"1"`` (start of a turn) or ``"2"`` (second sub-move pending), as in rules §4."""
        return "1" if self._p2 < 0 else "2"

    def phase_name(self) -> str:
        """A readable name of the phase."""
        if self.is_terminal():
            return "game over"
        if self._p2 >= 0:
            return f"second sub-move, not by the piece on {CELL_NAMES[self._p2]}"
        if self._first:
            return "start of White's first turn (a single sub-move)"
        return "start of a turn"

    def turn_position(self) -> tuple[int, int]:
        """Two sub-moves a turn (White's first turn: one); the second is the turn's last."""
        if self._p2 >= 0:
            return 1, 2
        return (0, 1) if self._first else (0, 2)

    def remembered_cell(self) -> str | None:
        """In phase 2, the cell of the piece that made the first sub-move; else None."""
        return CELL_NAMES[self._p2] if self._p2 >= 0 else None

    def is_first_turn(self) -> bool:
        """The first-turn flag: White's first turn, which is a single sub-move (rule 10)."""
        return bool(self._first)

    def packed_pieces(self) -> tuple[Bitboard, ...]:
        """All eight bitboards at once: White's Admiral, Galleons, Chebecs and Rock, then
        Black's (``pieces_mask(p, k)`` is item ``4 * p + k``)."""
        return tuple(self._pcs)

    def first_cell(self) -> int:
        """In phase 2, the cell index of the piece that made the first sub-move; else -1."""
        return self._p2

    def pieces_mask(self, player: Player, kind: int) -> Bitboard:
        """The bitboard of ``player``'s pieces of ``kind`` (ADMIRAL, GALLEON, CHEBEC, ROCK)."""
        return self._pcs[player * 4 + kind]

    def attack_on_admiral(self, player: Player) -> int:
        """``enemy(own Admiral's cell, player)``: above 5 the Admiral is capturable (rule 6)."""
        pcs = self._pcs
        e = 4 - player * 4
        a = pcs[player * 4 + ADMIRAL].bit_length() - 1
        return _enemy_strength(a, pcs[e], pcs[e + 1], pcs[e + 2])

    def is_terminal(self) -> bool:
        status = self._status
        if status < 0:
            status = self._status = self._compute_status()
        return status != _ONGOING

    def outcome(self) -> Outcome | None:
        if not self.is_terminal():
            return None
        reason, seat = divmod(self._status - 1, 2)
        winner: Winner = "p2" if seat else "p1"
        return Outcome(winner, REASONS[reason], (("score", SCORES[reason]),))

    def key(self) -> int:
        return self._key

    def ply(self) -> int:
        return len(self._stack)

    def _own_enemy(self) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
        p = self._pcs
        if self._side:
            return (p[4], p[5], p[6], p[7]), (p[0], p[1], p[2], p[3])
        return (p[0], p[1], p[2], p[3]), (p[4], p[5], p[6], p[7])

    def _compute_status(self) -> int:
        """The end test of rules §6, in its order: goal row, trapped Admiral, no legal token."""
        pcs = self._pcs
        if pcs[0] & GOAL_MASK[0]:
            return _end_code(GOAL_REACHED, 0)
        if pcs[4] & GOAL_MASK[1]:
            return _end_code(GOAL_REACHED, 1)
        opponent = self._side ^ 1
        if self._p2 < 0:
            own, enemy = self._own_enemy()
            ea, eg, ec, _ = enemy
            a = own[ADMIRAL].bit_length() - 1
            attack = _enemy_strength(a, ea, eg, ec)
            if attack > SAFE_LIMIT:
                empty = FULL_MASK ^ self._occ
                escapes = SHIP_NBR[a] & empty & _safe_cells(a, ea, eg, ec)
                if not escapes and not self._freeing_captures(own, enemy, a, attack):
                    return _end_code(ADMIRAL_TRAPPED, opponent)
        if not self._has_legal_token():
            return _end_code(NO_LEGAL_ACTION, opponent)
        return _ONGOING

    def _has_legal_token(self) -> bool:
        """Whether the side to act has a legal token (ignoring the goal-row end)."""
        if self._p2 < 0 and not self._first:
            # The usual case, cheaply: a normal turn with two freely moving pieces.
            own, enemy = self._own_enemy()
            a = own[ADMIRAL].bit_length() - 1
            if _enemy_strength(a, *enemy[:3]) <= SAFE_LIMIT and (
                _robust_pieces(own, FULL_MASK ^ self._occ) >= 2
            ):
                return True
        return self._count_tokens() > 0

    # -- move generation ---------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        if self.is_terminal():
            return []
        if self._p2 >= 0:
            return self._second_submoves()
        return self._first_tokens()

    def count_moves(self) -> int:
        status = self._status
        if status > 0:
            return 0
        pcs = self._pcs
        if pcs[0] & GOAL_MASK[0] or pcs[4] & GOAL_MASK[1]:
            return 0
        # A trapped Admiral leaves no token (rules §6), so no other end test is needed here.
        return self._count_tokens()

    def _count_tokens(self) -> int:
        """The number of legal tokens, not looking at the goal-row end."""
        own, enemy = self._own_enemy()
        oa, og, oc, orr = own
        ea, eg, ec, _ = enemy
        occ = self._occ
        empty = FULL_MASK ^ occ
        a = oa.bit_length() - 1
        p2 = self._p2
        if p2 >= 0:
            moved = BIT[p2]
            n = 0
            if not oa & moved:
                n = (SHIP_NBR[a] & empty & _safe_cells(a, ea, eg, ec)).bit_count()
            if og:
                n += _count_slides(og & ~moved, empty, 2)
            if oc:
                n += _count_slides(oc & ~moved, empty, 3)
            if not orr & moved:
                n += _count_rock(orr.bit_length() - 1, occ)
            return n
        attack = _enemy_strength(a, ea, eg, ec)
        if attack > SAFE_LIMIT:
            return len(self._first_tokens())
        if not self._first and _robust_pieces(own, empty) < 2:
            return len(self._first_tokens())  # rule 13 must be checked move by move
        n = len(_capturable(eg, ec, oa, og, oc)) if (eg | ec) else 0
        n += (SHIP_NBR[a] & empty & _safe_cells(a, ea, eg, ec)).bit_count()
        if og:
            n += _count_slides(og, empty, 2)
        if oc:
            n += _count_slides(oc, empty, 3)
        return n + _count_rock(orr.bit_length() - 1, occ)

    def _freeing_captures(
        self,
        own: tuple[int, int, int, int],
        enemy: tuple[int, int, int, int],
        a: Cell,
        attack: int,
    ) -> list[Cell]:
        """Rule 9a: adjacent attackers whose removal brings the attack to 5 or less."""
        near = NBR[a]
        out: list[Cell] = []
        for x in _capturable(enemy[GALLEON] & near, enemy[CHEBEC] & near, *own[:3]):
            strength = 3 if enemy[GALLEON] >> x & 1 else 2
            if attack - strength <= SAFE_LIMIT:
                out.append(x)
        return out

    def _first_tokens(self) -> list[Move]:
        """Phase 1 tokens (rules 1-13), not looking at the end of the game."""
        own, enemy = self._own_enemy()
        oa, og, oc, orr = own
        ea, eg, ec, _ = enemy
        occ = self._occ
        empty = FULL_MASK ^ occ
        a = oa.bit_length() - 1
        safe = _safe_cells(a, ea, eg, ec)
        goal = GOAL_MASK[self._side]
        attack = _enemy_strength(a, ea, eg, ec)
        out: list[Move]
        if attack > SAFE_LIMIT:
            # Arno's rule: a freeing capture, or the Admiral steps first to a safe cell.
            out = [CAPTURE | x for x in self._freeing_captures(own, enemy, a, attack)]
            escapes = SHIP_NBR[a] & empty & safe
            if escapes:
                base = a << 7
                if self._first:
                    _add_bits(out, base, escapes)
                else:
                    mobility = _Mobility(own, empty, safe, a)
                    for t in _iter_bits(escapes):
                        if goal >> t & 1 or mobility.completable(a, t):
                            out.append(base | t)
            return out
        out = [CAPTURE | x for x in _capturable(eg, ec, oa, og, oc)] if (eg | ec) else []
        if self._first or _robust_pieces(own, empty) >= 2:
            _add_bits(out, a << 7, SHIP_NBR[a] & empty & safe)
            if og:
                _add_slides(out, og, empty, 2)
            if oc:
                _add_slides(out, oc, empty, 3)
            _add_rock(out, orr.bit_length() - 1, occ)
            return out
        subs: list[Move] = []
        _add_bits(subs, a << 7, SHIP_NBR[a] & empty & safe)
        if og:
            _add_slides(subs, og, empty, 2)
        if oc:
            _add_slides(subs, oc, empty, 3)
        _add_rock(subs, orr.bit_length() - 1, occ)
        mobility = _Mobility(own, empty, safe, NO_CELL)
        for m in subs:
            f = m >> 7
            t = m & _CELL_BITS
            if (f == a and goal >> t & 1) or mobility.completable(f, t):
                out.append(m)
        return out

    def _second_submoves(self) -> list[Move]:
        """Phase 2 tokens: any own piece but the one on the remembered cell (rule 12)."""
        own, enemy = self._own_enemy()
        oa, og, oc, orr = own
        occ = self._occ
        empty = FULL_MASK ^ occ
        moved = BIT[self._p2]
        out: list[Move] = []
        if not oa & moved:
            a = oa.bit_length() - 1
            _add_bits(out, a << 7, SHIP_NBR[a] & empty & _safe_cells(a, *enemy[:3]))
        if og:
            _add_slides(out, og & ~moved, empty, 2)
        if oc:
            _add_slides(out, oc & ~moved, empty, 3)
        if not orr & moved:
            _add_rock(out, orr.bit_length() - 1, occ)
        return out

    # -- make / unmake -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        pcs = self._pcs
        side = self._side
        key = self._key
        self._stack.append((pcs, self._occ, side, self._p2, self._first, key, self._status, move))
        self._status = _UNKNOWN
        first = self._first
        if first:
            key ^= Z_FIRST
            self._first = 0
        if self._p2 >= 0:
            key ^= Z_PHASE2[self._p2]
        if move & CAPTURE:
            x = move & _CELL_BITS
            i = 5 if side == 0 else 1  # the enemy's Galleons, else its Chebecs
            if not pcs[i] >> x & 1:
                i += 1
            lst = list(pcs)
            lst[i] ^= BIT[x]
            self._pcs = tuple(lst)
            self._occ ^= BIT[x]
            self._p2 = NO_CELL
            self._side = side ^ 1
            self._key = key ^ Z_PIECE[i][x] ^ Z_BLACK
            return
        f = move >> 7
        t = move & _CELL_BITS
        i = side * 4
        while not pcs[i] >> f & 1:
            i += 1
        lst = list(pcs)
        lst[i] ^= BIT[f] | BIT[t]
        self._pcs = tuple(lst)
        self._occ ^= BIT[f] | BIT[t]
        z = Z_PIECE[i]
        key ^= z[f] ^ z[t]
        if self._p2 >= 0 or first or (i & 3 == ADMIRAL and GOAL_MASK[side] >> t & 1):
            # Second sub-move, White's single first sub-move, or an Admiral home (rule 11).
            self._p2 = NO_CELL
            self._side = side ^ 1
            key ^= Z_BLACK
        else:
            self._p2 = t
            key ^= Z_PHASE2[t]
        self._key = key

    def pop(self) -> Move:
        (
            self._pcs,
            self._occ,
            self._side,
            self._p2,
            self._first,
            self._key,
            self._status,
            move,
        ) = self._stack.pop()
        return move

    def copy(self) -> YohohoState:
        other = object.__new__(YohohoState)
        for name in YohohoState.__slots__:
            setattr(other, name, getattr(self, name))
        other._stack = list(self._stack)
        return other

    # -- notation ----------------------------------------------------------------------------

    def move_to_str(self, move: Move) -> str:
        if move & CAPTURE:
            return "x:" + CELL_NAMES[move & _CELL_BITS]
        return f"{CELL_NAMES[move >> 7 & _CELL_BITS]}-{CELL_NAMES[move & _CELL_BITS]}"

    def parse_move(self, text: str) -> Move:
        move = parse_token(text)
        if self.is_terminal():
            outcome = self.outcome()
            raise IllegalMoveError(text, f"the game is over ({outcome})")
        if move not in self.legal_moves():
            raise IllegalMoveError(text, _why_illegal(self, move))
        return move

    def to_string(self) -> str:
        phase = "1" if self._p2 < 0 else "2:" + CELL_NAMES[self._p2]
        return f"{format_board(self._pcs)} {SIDE_CHARS[self._side]} {phase} {self._first}"

    def render(self) -> str:
        return render_board(self)


# ---------------------------------------------------------------------------------------------
# Tokens (rules §7)

_CELL_RE: Final = re.compile(r"[a-q][1-9]")


def parse_token(text: str) -> Move:
    """Parse a canonical Yohoho token (``e1-b4`` or ``x:h6``) without looking at a position.

    Raises:
        InvalidMoveError: not a token of the game (syntax, or a name that is not a cell).
    """
    if text.startswith("x:"):
        return CAPTURE | _parse_cell(text, text[2:])
    parts = text.split("-")
    if len(parts) != 2:
        raise InvalidMoveError(text, "a token is <from>-<to> (a sub-move) or x:<cell> (a capture)")
    f, t = (_parse_cell(text, p) for p in parts)
    return f << 7 | t


def _parse_cell(token: str, text: str) -> Cell:
    c = CELL_OF_NAME.get(text)
    if c is None:
        if _CELL_RE.fullmatch(text):
            raise InvalidMoveError(
                token,
                f"{text} is not a cell of the board "
                "(odd rows use columns a c e ... q, even rows b d f ... p)",
            )
        raise InvalidMoveError(token, f"{text!r} is not a cell (lowercase column a-q, row 1-9)")
    return c


def _piece_at(state: YohohoState, c: Cell) -> int | None:
    """The piece index (colour * 4 + kind) on ``c``, or None."""
    for i, bb in enumerate(state._pcs):
        if bb >> c & 1:
            return i
    return None


def _describe(i: int, c: Cell) -> str:
    return f"the {COLOURS[i >> 2]} {KIND_NAMES[i & 3]} on {CELL_NAMES[c]}"


def _direction(f: Cell, t: Cell) -> tuple[int, int] | None:
    """(direction, distance) when ``t`` lies on a straight line from ``f``."""
    for d in range(6):
        ray = RAYS[f][d]
        if t in ray:
            return d, ray.index(t) + 1
    return None


def _why_illegal(state: YohohoState, move: Move) -> str:
    """The reason a well-formed token is not legal in ``state`` (which is not terminal)."""
    own, enemy = state._own_enemy()
    a = own[ADMIRAL].bit_length() - 1
    attack = _enemy_strength(a, *enemy[:3])
    if move & CAPTURE:
        return _why_capture_illegal(state, move & _CELL_BITS, own, attack)
    return _why_sail_illegal(state, move >> 7, move & _CELL_BITS, enemy, attack)


def _why_capture_illegal(state: YohohoState, x: Cell, own: tuple[int, ...], attack: int) -> str:
    """Why capturing on ``x`` is not legal; ``attack`` is the strength next to the mover's
    Admiral."""
    me = COLOURS[state._side]
    if state._p2 >= 0:
        return "phase 2 wants a second sub-move; a capture is a whole turn"
    i = _piece_at(state, x)
    if i is None:
        return f"{CELL_NAMES[x]} is empty"
    if i >> 2 == state._side:
        return f"{CELL_NAMES[x]} holds one of {me}'s own pieces"
    if i & 3 == ROCK:
        return "Rocks are never captured"
    if i & 3 == ADMIRAL:
        return "an Admiral is never captured (a trapped Admiral ends the game instead)"
    strength = _enemy_strength(x, *own[:3])
    if strength <= STRENGTH[i & 3]:
        return (
            f"{_describe(i, x)} is not capturable: adjacent {me} strength {strength} "
            f"is not more than its {STRENGTH[i & 3]}"
        )
    return (
        f"Arno's rule: {me}'s Admiral is under attack ({attack} > 5); only a capture of an "
        "adjacent attacker that brings the attack to 5 or less is allowed"
    )


def _why_sail_illegal(
    state: YohohoState, f: Cell, t: Cell, enemy: tuple[int, ...], attack: int
) -> str:
    """Why moving the piece on ``f`` to ``t`` is not legal; ``attack`` is the strength next
    to the mover's Admiral."""
    me = COLOURS[state._side]
    if f == t:
        return "a piece must move at least one cell"
    i = _piece_at(state, f)
    if i is None:
        return f"{CELL_NAMES[f]} is empty"
    if i >> 2 != state._side:
        return f"{CELL_NAMES[f]} holds a {COLOURS[i >> 2]} piece; {me} is to act"
    if state._p2 == f:
        return f"{_describe(i, f)} made the first sub-move; the second must move another piece"
    why = _why_unreachable(state, i & 3, f, t)
    if why is not None:
        return why
    if i & 3 == ADMIRAL:
        strength = _enemy_strength(t, *enemy[:3])
        if strength > SAFE_LIMIT:
            return f"Admiral safety: the enemy strength next to {CELL_NAMES[t]} is {strength} > 5"
    elif state._p2 < 0 and attack > SAFE_LIMIT:
        return (
            f"Arno's rule: {me}'s Admiral is under attack ({attack} > 5); the turn must start "
            "with an Admiral step or a freeing capture"
        )
    return "the completion rule: no other piece could make a second sub-move after it"


def _why_unreachable(state: YohohoState, kind: int, f: Cell, t: Cell) -> str | None:
    """Why a piece of ``kind`` cannot sail from ``f`` to ``t`` at all, if it cannot."""
    line = _direction(f, t)
    if line is None:
        return f"{CELL_NAMES[t]} is not on a straight line from {CELL_NAMES[f]}"
    d, dist = line
    if d == E and kind != ROCK:
        return "ships never move east, into the wind (only Rocks may)"
    if dist > REACH[kind]:
        return f"a {KIND_NAMES[kind]} moves at most {REACH[kind]} cell(s), not {dist}"
    for c in RAYS[f][d][:dist]:
        if state._occ >> c & 1:
            where = "the destination" if c == t else "the way"
            return f"{where} {CELL_NAMES[c]} is occupied"
    return None


# ---------------------------------------------------------------------------------------------
# Position strings (rules §8)

_ROW_RE: Final = re.compile(r"[AGCRagcr1-9]+")
_PHASE_RE: Final = re.compile(r"1|2:([a-q][1-9])")
PIECE_LIMITS: Final = (1, 2, 4, 1)  # at most this many per kind; Admiral and Rock exactly one


def format_board(pieces: tuple[int, ...]) -> str:
    """The board field of the position string."""
    rows: list[str] = []
    for y in range(9, 0, -1):
        parts: list[str] = []
        empty = 0
        for c in ROW_CELLS[y]:
            for i, bb in enumerate(pieces):
                if bb >> c & 1:
                    if empty:
                        parts.append(str(empty))
                        empty = 0
                    parts.append(PIECE_CHARS[i])
                    break
            else:
                empty += 1
        if empty:
            parts.append(str(empty))
        rows.append("".join(parts))
    return "/".join(rows)


_Bad: TypeAlias = Callable[[str, str], InvalidPositionError]
"""Builds the error of a position string from the field at fault and why."""


def _parse_position(game: YohohoGame, text: str) -> YohohoState:
    def bad(field: str, reason: str) -> InvalidPositionError:
        return InvalidPositionError(text, field, reason)

    fields = text.split(" ")
    if len(fields) != 4 or not all(fields):
        raise bad("syntax", "expected 4 fields (board side phase first) separated by single spaces")
    board, side_s, phase_s, first_s = fields
    pieces = _parse_board(board, bad)
    _check_pieces(pieces, bad)
    if side_s not in ("w", "b"):
        raise bad("side", f"{side_s!r} is not w or b")
    side = SIDE_CHARS.index(side_s)
    p2 = _parse_phase(phase_s, pieces, side, bad)
    if first_s not in ("0", "1"):
        raise bad("first", f"{first_s!r} is not 1 or 0")
    first = int(first_s)
    if first and (side != 0 or p2 != NO_CELL):
        raise bad("first", "the first-turn flag is 1 only with side w and phase 1")
    return YohohoState(game, pieces=tuple(pieces), side=side, p2=p2, first=first)


def _parse_board(board: str, bad: _Bad) -> list[Bitboard]:
    """The board field: a bitboard per piece (White's Admiral, Galleons, Chebecs, Rock, then
    Black's)."""
    rows = board.split("/")
    if len(rows) != 9:
        raise bad("board", f"expected 9 rows (row 9 first) separated by '/', got {len(rows)}")
    pieces = [0] * 8
    for row_text, y in zip(rows, range(9, 0, -1), strict=True):
        cells = ROW_CELLS[y]
        if not _ROW_RE.fullmatch(row_text):
            raise bad("board", f"row {y} {row_text!r}: only A G C R a g c r and counts 1-9")
        k = 0
        prev_digit = False
        for ch in row_text:
            if ch in "123456789":
                if prev_digit:
                    raise bad("board", f"row {y} {row_text!r}: two empty counts in a row")
                prev_digit = True
                k += int(ch)
            else:
                prev_digit = False
                if k < len(cells):
                    pieces[_PIECE_OF_CHAR[ch]] |= BIT[cells[k]]
                k += 1
            if k > len(cells):
                break
        if k != len(cells):
            raise bad(
                "board",
                f"row {y} {row_text!r} describes {k} cells, but the row has {len(cells)}",
            )
    return pieces


def _check_pieces(pieces: list[Bitboard], bad: _Bad) -> None:
    """Each side has as many pieces of each kind as it may, and one Admiral at most is home."""
    for i, bb in enumerate(pieces):
        kind = i & 3
        n = bb.bit_count()
        limit = PIECE_LIMITS[kind]
        if kind in (ADMIRAL, ROCK) and n != 1:
            raise bad(
                "board", f"{COLOURS[i >> 2]} must have exactly one {KIND_NAMES[kind]}, has {n}"
            )
        if n > limit:
            raise bad(
                "board", f"{COLOURS[i >> 2]} has {n} {KIND_NAMES[kind]}s, at most {limit} allowed"
            )
    if pieces[0] & GOAL_MASK[0] and pieces[4] & GOAL_MASK[1]:
        raise bad("board", "both Admirals stand on their goal rows; at most one may")


def _parse_phase(phase_s: str, pieces: list[Bitboard], side: int, bad: _Bad) -> Cell:
    """The phase field: the cell of the piece that made the first sub-move (phase 2), else
    ``NO_CELL``."""
    m = _PHASE_RE.fullmatch(phase_s)
    if not m:
        raise bad("phase", f"{phase_s!r} is not 1 or 2:<cell>")
    if not m.group(1):
        return NO_CELL
    name = m.group(1)
    if name not in CELL_OF_NAME:
        raise bad("phase", f"{name} is not a cell of the board")
    p2 = CELL_OF_NAME[name]
    if not any(pieces[side * 4 + k] >> p2 & 1 for k in range(4)):
        raise bad("phase", f"{name} does not hold a {COLOURS[side]} piece")
    return p2


# ---------------------------------------------------------------------------------------------
# Drawing


def render_board(state: YohohoState) -> str:
    """The board as in rules §2: each cell drawn below its column letter, beside its row number.

    ``A G C R`` White, ``a g c r`` Black, ``.`` empty; the piece that made the first sub-move
    of a pending turn is bracketed. The wind arrow points the way the wind blows (to the west).
    """
    pcs = state._pcs
    header = "     " + " ".join(LETTERS)
    lines = [
        "  west <======== wind ======== east   (from the east edge: ships never move east)",
        header,
    ]
    for y in range(9, 0, -1):
        row = [" "] * 35
        for c in ROW_CELLS[y]:
            x = COORDS[c][0]
            i = _piece_at(state, c)
            row[2 * x + 1] = "." if i is None else PIECE_CHARS[i]
            if c == state._p2:
                row[2 * x] = "["
                row[2 * x + 2] = "]"
        lines.append(f"  {y} {''.join(row)}  {y}")
    lines.append(header)
    lines.append("")
    for seat in (0, 1):
        counts = [pcs[seat * 4 + k].bit_count() for k in range(4)]
        attack = state.attack_on_admiral(seat)
        danger = " > 5: capturable" if attack > SAFE_LIMIT else ""
        lines.append(
            f"{COLOURS[seat]:5} {PIECE_CHARS[seat * 4 : seat * 4 + 4]}: Admiral {counts[0]}  "
            f"Galleons {counts[1]}  Chebecs {counts[2]}  Rock {counts[3]}   "
            f"goal row {GOAL_ROW[seat]}   attack on Admiral {attack}{danger}"
        )
    extras: list[str] = []
    if state._first:
        extras.append("first turn: White makes a single sub-move")
    if state._p2 >= 0:
        extras.append(f"second sub-move pending; {CELL_NAMES[state._p2]} moved first")
    if extras:
        lines.append("; ".join(extras))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The native slides


class _Native(Protocol):
    """What ``games/_yohoho_native.c`` offers."""

    def init(self, up: object, down: object, /) -> None: ...

    def count_slides(self, pieces: Bitboard, empty: Bitboard, reach: int, /) -> int: ...

    def add_slides(
        self, out: list[Move], pieces: Bitboard, empty: Bitboard, reach: int, /
    ) -> None: ...


def _load_native() -> _Native | None:
    """The C slides, given this module's tables; None when they are not built, or
    ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("games._yohoho_native")
    if module is None:
        return None
    native = cast(_Native, module)
    native.init(_SHIP_UP, _SHIP_DOWN)
    return native


_native = _load_native()
_count_slides = _count_slides_python if _native is None else _native.count_slides
_add_slides = _add_slides_python if _native is None else _native.add_slides

"""YOXII, per rules/yoxii.md: a neutral Totem, 37 squares, pieces worth 1-4 placed next to it.

Phases (one decision = one ply = one token; both plies of a turn belong to the same player):

=====  ===================================================================  ==========
code   decision                                                             token
=====  ===================================================================  ==========
t      move the Totem: a step to an empty neighbour, or a straight jump     ``d5``
       over an unbroken run of one's own pieces to the empty square after
p      place a piece of a value still in stock on an empty neighbour of     ``3@c5``
       the Totem, or on any empty square when the Totem has none
=====  ===================================================================  ==========

The game ends when a phase ``t`` position arises in which the player to act cannot move the
Totem (outcome reason ``totem-blocked``); the position string keeps its side and phase ``t``,
while ``to_move()`` answers ``NOBODY``. The region around the Totem then scores: higher sum of
values wins, then more pieces, else a draw; ``margin`` is the difference of the sums.

Position string: ``board side phase wstock bstock``, e.g. ``3/5/7/3T3/7/5/3 w t w:5553 b:5553``
(ranks 7 to 1, ``T`` the Totem, ``A``-``D`` White 1-4, ``a``-``d`` Black 1-4, digits empty runs).

Representation. The 37 squares are numbered in the canonical order of the position string
(c7 = 0, d4 = 18, e1 = 36), so the pieces of each colour are one Python-int bitboard, and all
values sit in one more int holding ``value - 1`` in two bits per square. Neighbour masks and, per
Totem square and neighbour, the squares beyond that neighbour on the same line are module
constants, so a Totem move is found with a mask operation (steps) plus a short walk per own
neighbour (jumps). Stocks are packed 3 bits per value, 12 bits per player. Whether the game is
over depends only on the position, so it is decided once, when a placement hands the Totem to the
other player, and kept in the snapshot that ``pop`` restores.

Moves are ints: a Totem move is its destination square; a placement is
``PLACE | (value - 1) << 6 | square``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Final, NamedTuple, TypeAlias

from games.base import NOBODY, Game, Move, Outcome, Player, State, Winner
from games.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError

Square: TypeAlias = int
Bitboard: TypeAlias = int

# ---------------------------------------------------------------------------------------------
# Geometry (rules §2)

FILES: Final = "abcdefg"
RANK_WIDTHS: Final = (3, 5, 7, 7, 7, 5, 3)  # ranks 7 down to 1, as in the position string


def _is_on_board(f: int, r: int) -> bool:
    """The on-board test of rules §2.1 (``f``, ``r`` zero-based)."""
    return 0 <= f <= 6 and 0 <= r <= 6 and min(f, 6 - f) + min(r, 6 - r) >= 2


def _build_squares() -> tuple[tuple[int, int], ...]:
    """(file index, rank index) of each square in canonical order: rank 7 to 1, file a to g."""
    return tuple((f, r) for r in range(6, -1, -1) for f in range(7) if _is_on_board(f, r))


COORDS: Final = _build_squares()
N_SQUARES: Final = len(COORDS)  # 37
_INDEX_OF: Final = {c: i for i, c in enumerate(COORDS)}
SQUARE_NAMES: Final = tuple(f"{FILES[f]}{r + 1}" for f, r in COORDS)
SQUARE_OF_NAME: Final = {name: i for i, name in enumerate(SQUARE_NAMES)}
BIT: Final = tuple(1 << s for s in range(N_SQUARES))
FULL_MASK: Final = (1 << N_SQUARES) - 1
RANK_SQUARES: Final = {
    number: tuple(s for s, (_, r) in enumerate(COORDS) if r == number - 1) for number in range(1, 8)
}
"""The squares of each rank (1-7), file a to g."""

# N, NE, E, SE, S, SW, W, NW as (d_file, d_rank)
DIRECTIONS: Final = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))


def _ray(s: Square, df: int, dr: int) -> tuple[Square, ...]:
    """The squares from ``s`` (excluded) to the edge in one direction. The board is convex
    along every direction, so the walk can stop at the first square off the board."""
    f, r = COORDS[s]
    out: list[Square] = []
    while (f + df, r + dr) in _INDEX_OF:
        f, r = f + df, r + dr
        out.append(_INDEX_OF[(f, r)])
    return tuple(out)


RAYS: Final = tuple(tuple(_ray(s, df, dr) for df, dr in DIRECTIONS) for s in range(N_SQUARES))
"""``RAYS[s][d]``: the squares from ``s`` outwards in direction ``d`` (empty at the edge)."""

NEIGHBOURS_MASK: Final = tuple(sum(BIT[ray[0]] for ray in RAYS[s] if ray) for s in range(N_SQUARES))
"""The neighbourhood of each square (4, 5, 7 or 8 squares): placement and scoring region."""

BEYOND: Final = tuple(
    {ray[0]: tuple(BIT[q] for q in ray[1:]) for ray in RAYS[s] if ray} for s in range(N_SQUARES)
)
"""``BEYOND[t][s1]``: bits of the squares past the neighbour ``s1`` of ``t``, on the line from
``t`` through ``s1``, in walking order. A jump walks them (a neighbour fixes the direction)."""

# ---------------------------------------------------------------------------------------------
# Pieces, stocks, moves

INITIAL_STOCK: Final = (5, 5, 5, 3)  # values 1, 2, 3, 4
PIECE_CHARS: Final = ("ABCD", "abcd")  # [colour][value - 1]
_STOCK_BITS: Final = 3  # a stock count is at most 5 (rules V3 rejects larger digits)
_PLAYER_BITS: Final = 4 * _STOCK_BITS  # Black's stock sits above White's
_PLAYER_STOCK_MASK: Final = (1 << _PLAYER_BITS) - 1


def _stock_shift(player: int, value_index: int) -> int:
    """Where the stock count of ``player`` for value ``value_index + 1`` sits in the packed int."""
    return (player * 4 + value_index) * _STOCK_BITS


# Per packed 12-bit stock of one player: the indices (value - 1) that are still in stock.
_AVAILABLE: Final = tuple(
    tuple(v for v in range(4) if s >> v * _STOCK_BITS & 7) for s in range(1 << _PLAYER_BITS)
)
_N_AVAILABLE: Final = tuple(len(a) for a in _AVAILABLE)
# stock decrement per (player, value index), so a placement is one subtraction
_STOCK_ONE: Final = tuple(tuple(1 << _stock_shift(c, v) for v in range(4)) for c in range(2))

PLACE: Final = 1 << 8
"""Tag of a placement move: ``PLACE | (value - 1) << 6 | square``. A Totem move is < 64."""

# ---------------------------------------------------------------------------------------------
# Phases

PH_T, PH_P = 0, 1
PHASE_CHARS: Final = "tp"
PHASE_NAMES: Final = ("Totem move", "placement")
SIDE_CHARS: Final = "wb"
COLOURS: Final = ("White", "Black")
REASON: Final = "totem-blocked"
EXPECTED_TURNS: Final = 25
"""``decisions_left``'s estimate of a game's length in turns (pieces placed): over 3,000 games
between our bots from the ladder's openings, the turns still to come after ``n`` pieces were
placed averaged ``25 - n`` up to ``n = 16`` and fell slower after (2 to 4 turns from 22 on; the
median game ended at 26, the longest at 32)."""

# ---------------------------------------------------------------------------------------------
# Zobrist numbers (fixed seed: keys are stable across runs and processes). Stocks are implied by
# the board (rules V3) and whether the game is over by the position, so neither is hashed.

_rng = random.Random(0x594F584949)
Z_PIECE: Final = tuple(
    tuple(tuple(_rng.getrandbits(64) for _ in range(N_SQUARES)) for _ in range(4)) for _ in range(2)
)
"""``Z_PIECE[colour][value - 1][square]``."""
Z_TOTEM: Final = tuple(_rng.getrandbits(64) for _ in range(N_SQUARES))
Z_TURN: Final = tuple(_rng.getrandbits(64) for _ in range(4))
"""Indexed ``side * 2 + phase``."""
del _rng
# the side/phase change of each kind of ply: t -> p (same side), p -> t (other side)
_Z_T_TO_P: Final = (Z_TURN[0] ^ Z_TURN[1], Z_TURN[2] ^ Z_TURN[3])
_Z_P_TO_T: Final = (Z_TURN[1] ^ Z_TURN[2], Z_TURN[3] ^ Z_TURN[0])
# moving the Totem from a to b: Z_TOTEM_MOVE[a][b]
Z_TOTEM_MOVE: Final = tuple(
    tuple(Z_TOTEM[a] ^ Z_TOTEM[b] for b in range(N_SQUARES)) for a in range(N_SQUARES)
)


def _iter_bits(mask: Bitboard) -> list[Square]:
    out: list[Square] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def totem_destinations(totem: Square, own: Bitboard, opp: Bitboard) -> Bitboard:
    """The squares the Totem may move to (rules R1-R4) as a bitboard.

    Args:
        totem: the Totem's square.
        own: the pieces of the player to act; they can be jumped.
        opp: the opponent's pieces; they block.
    """
    empty = FULL_MASK ^ (own | opp | BIT[totem])
    neighbours = NEIGHBOURS_MASK[totem]
    dests = neighbours & empty  # R2: steps
    runs = neighbours & own
    if runs:  # R3: each own neighbour starts a run; its direction yields at most one square
        beyond = BEYOND[totem]
        while runs:
            low = runs & -runs
            runs ^= low
            for bit in beyond[low.bit_length() - 1]:
                if not own & bit:
                    if empty & bit:
                        dests |= bit
                    break
    return dests


def _has_totem_move(totem: Square, own: Bitboard, opp: Bitboard) -> bool:
    """Whether ``totem_destinations`` is not empty (rules E1), answering early when it can."""
    if NEIGHBOURS_MASK[totem] & ~(own | opp):  # an empty neighbour: a step, the usual case
        return True
    return bool(totem_destinations(totem, own, opp))


# white, black, values, totem, stock, side, phase, over, key, move
_Snapshot: TypeAlias = tuple[int, int, int, int, int, int, int, bool, int, int]

_TOKEN_RE: Final = re.compile(r"(?:([1-4])@)?([a-g][1-7])")


class YoxiiGame(Game):
    """YOXII: p1 = White (moves first), p2 = Black."""

    colours = COLOURS
    start_position = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
    max_plies = 72  # every turn (two plies) places a piece: at most 36 turns (rules §6)

    def __init__(self, name: str = "yoxii") -> None:
        if name != "yoxii":
            raise ValueError(f"unknown Yoxii variant {name!r}")
        self.name = name

    def state_from_string(self, text: str) -> YoxiiState:
        return _parse_position(self, text)


class YoxiiState(State):
    """A YOXII position. See the module docstring for phases and representation."""

    __slots__ = (
        "_black",
        "_key",
        "_over",
        "_phase",
        "_side",
        "_stack",
        "_stock",
        "_totem",
        "_values",
        "_white",
        "game",
    )

    def __init__(
        self,
        game: YoxiiGame,
        *,
        pieces: tuple[Bitboard, Bitboard],
        values: int,
        totem: Square,
        stock: int,
        side: int,
        phase: int,
    ) -> None:
        """Build a state from already validated parts (``_parse_position`` checks them).

        Args:
            pieces: White's and Black's pieces.
            values: ``value - 1`` of the piece on each square in two bits per square.
            totem: the Totem's square.
            stock: both stocks, packed as ``_stock_shift`` says.
            side: 0 or 1, the player to act (also on a finished game).
            phase: ``PH_T`` or ``PH_P``.
        """
        self.game: YoxiiGame = game
        self._white, self._black = pieces
        self._values = values
        self._totem = totem
        self._stock = stock
        self._side = side
        self._phase = phase
        self._over = phase == PH_T and not self._can_move_totem()
        self._stack: list[_Snapshot] = []
        self._key = self._compute_key()

    def _can_move_totem(self) -> bool:
        if self._side:
            return _has_totem_move(self._totem, self._black, self._white)
        return _has_totem_move(self._totem, self._white, self._black)

    def _compute_key(self) -> int:
        key = Z_TURN[self._side * 2 + self._phase] ^ Z_TOTEM[self._totem]
        for c, pieces in ((0, self._white), (1, self._black)):
            for s in _iter_bits(pieces):
                key ^= Z_PIECE[c][self.value_at(s) - 1][s]
        return key

    # -- queries -----------------------------------------------------------------------------

    def to_move(self) -> Player:
        return NOBODY if self._over else self._side

    def phase(self) -> str:
        return PHASE_CHARS[self._phase]

    def phase_name(self) -> str:
        """``"Totem move"`` or ``"placement"``; on a finished game, why it is over."""
        if self._over:
            return f"game over: {COLOURS[self._side]} cannot move the Totem"
        return PHASE_NAMES[self._phase]

    def turn_position(self) -> tuple[int, int]:
        """A Totem move, then a placement."""
        return (1, 2) if self._phase == PH_P else (0, 2)

    def decisions_left(self) -> int:
        """``EXPECTED_TURNS`` less the pieces on the board (the turns made), at least 2: the
        turns left in the game, of which the side to act makes half, two decisions each."""
        return max(2, EXPECTED_TURNS - (self._white | self._black).bit_count())

    def is_terminal(self) -> bool:
        return self._over

    def totem(self) -> Square:
        """The Totem's square."""
        return self._totem

    def pieces_mask(self, player: Player) -> Bitboard:
        """The bitboard of ``player``'s pieces on the board."""
        return self._black if player else self._white

    def value_at(self, square: Square) -> int:
        """The value (1-4) of the piece on ``square``; meaningless on a square without one."""
        return (self._values >> 2 * square & 3) + 1

    def stock(self, player: Player) -> tuple[int, int, int, int]:
        """How many pieces of value 1, 2, 3 and 4 ``player`` has not placed yet."""
        s = self._stock
        return (
            s >> _stock_shift(player, 0) & 7,
            s >> _stock_shift(player, 1) & 7,
            s >> _stock_shift(player, 2) & 7,
            s >> _stock_shift(player, 3) & 7,
        )

    def region_scores(self) -> tuple[int, int, int, int]:
        """``(score_p1, score_p2, count_p1, count_p2)`` over the neighbourhood of the Totem now
        (rules E3-E4); the final result when the game is over, a running tally before."""
        region = NEIGHBOURS_MASK[self._totem]
        sums = [0, 0]
        counts = [0, 0]
        for c, pieces in ((0, self._white), (1, self._black)):
            for s in _iter_bits(region & pieces):
                sums[c] += self.value_at(s)
                counts[c] += 1
        return sums[0], sums[1], counts[0], counts[1]

    def outcome(self) -> Outcome | None:
        if not self._over:
            return None
        a, b, ca, cb = self.region_scores()
        # E5: sum first, then the piece count, then a draw
        winner: Winner
        if a != b:
            winner = "p1" if a > b else "p2"
        elif ca != cb:
            winner = "p1" if ca > cb else "p2"
        else:
            winner = "draw"
        scores = (
            ("score_p1", a),
            ("score_p2", b),
            ("count_p1", ca),
            ("count_p2", cb),
            ("margin", abs(a - b)),
        )
        return Outcome(winner, REASON, scores)

    def key(self) -> int:
        return self._key

    def ply(self) -> int:
        return len(self._stack)

    # -- move generation ---------------------------------------------------------------------

    def _placement_targets(self) -> Bitboard:
        """R5/R6: empty neighbours of the Totem, or every empty square when there are none."""
        empty = FULL_MASK ^ (self._white | self._black | BIT[self._totem])
        return NEIGHBOURS_MASK[self._totem] & empty or empty

    def legal_moves(self) -> list[Move]:
        if self._over:
            return []
        if self._phase == PH_T:
            if self._side:
                return _iter_bits(totem_destinations(self._totem, self._black, self._white))
            return _iter_bits(totem_destinations(self._totem, self._white, self._black))
        squares = _iter_bits(self._placement_targets())
        available = _AVAILABLE[self._stock >> self._side * _PLAYER_BITS & _PLAYER_STOCK_MASK]
        return [PLACE | v << 6 | s for v in available for s in squares]

    def count_moves(self) -> int:
        if self._over:
            return 0
        if self._phase == PH_T:
            if self._side:
                return totem_destinations(self._totem, self._black, self._white).bit_count()
            return totem_destinations(self._totem, self._white, self._black).bit_count()
        # every (value in stock, target square) pair is a move: no list needed to count them
        n_values = _N_AVAILABLE[self._stock >> self._side * _PLAYER_BITS & _PLAYER_STOCK_MASK]
        return self._placement_targets().bit_count() * n_values

    # -- make / unmake -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        side = self._side
        self._stack.append(
            (
                self._white,
                self._black,
                self._values,
                self._totem,
                self._stock,
                side,
                self._phase,
                self._over,
                self._key,
                move,
            )
        )
        if move < PLACE:  # Totem move: same player, now to place
            self._key ^= Z_TOTEM_MOVE[self._totem][move] ^ _Z_T_TO_P[side]
            self._totem = move
            self._phase = PH_P
            return
        s = move & 63
        v = move >> 6 & 3
        bit = BIT[s]
        self._values |= v << 2 * s  # a square is filled once and never emptied
        self._stock -= _STOCK_ONE[side][v]
        self._phase = PH_T
        self._side = side ^ 1
        self._key ^= Z_PIECE[side][v][s] ^ _Z_P_TO_T[side]
        # E1: the terminal test, made once for the new phase t position
        if side:
            black = self._black | bit
            self._black = black
            self._over = not _has_totem_move(self._totem, self._white, black)
        else:
            white = self._white | bit
            self._white = white
            self._over = not _has_totem_move(self._totem, self._black, white)

    def pop(self) -> Move:
        (
            self._white,
            self._black,
            self._values,
            self._totem,
            self._stock,
            self._side,
            self._phase,
            self._over,
            self._key,
            move,
        ) = self._stack.pop()
        return move

    def copy(self) -> YoxiiState:
        other = object.__new__(YoxiiState)
        for name in YoxiiState.__slots__:
            setattr(other, name, getattr(self, name))
        other._stack = list(self._stack)
        return other

    # -- notation ----------------------------------------------------------------------------

    def move_to_str(self, move: Move) -> str:
        if move < PLACE:
            return SQUARE_NAMES[move]
        return f"{(move >> 6 & 3) + 1}@{SQUARE_NAMES[move & 63]}"

    def parse_move(self, text: str) -> Move:
        move = parse_token(text)
        if self._over:
            raise IllegalMoveError(
                text, f"the game is over ({COLOURS[self._side]} cannot move the Totem)"
            )
        if move not in self.legal_moves():
            raise IllegalMoveError(text, _why_illegal(self, move))
        return move

    def to_string(self) -> str:
        return (
            f"{format_board(self._white, self._black, self._values, self._totem)} "
            f"{SIDE_CHARS[self._side]} {PHASE_CHARS[self._phase]} "
            f"w:{''.join(map(str, self.stock(0)))} b:{''.join(map(str, self.stock(1)))}"
        )

    def render(self) -> str:
        return render_board(self)


# ---------------------------------------------------------------------------------------------
# Tokens (rules §7)


def parse_token(text: str) -> Move:
    """Parse a canonical Yoxii token into a move, without looking at any position.

    Raises:
        InvalidMoveError: not a canonical token: wrong syntax or spelling, a value outside 1-4,
            or one of the 12 corner names that are not squares.
    """
    m = _TOKEN_RE.fullmatch(text)
    if m is None:
        raise InvalidMoveError(text, _why_invalid(text))
    value, name = m.groups()
    square = SQUARE_OF_NAME.get(name)
    if square is None:
        raise InvalidMoveError(text, f"{name} is not a square of the board (a cut-off corner)")
    if value is None:
        return square
    return PLACE | (int(value) - 1) << 6 | square


def _why_invalid(text: str) -> str:
    if "@" in text:
        value, _, square = text.partition("@")
        if re.fullmatch(r"[a-g][1-7]", value) and re.fullmatch(r"[1-4]", square):
            return "a placement is written <value>@<square>, value first (3@c5)"
        if not re.fullmatch(r"[1-4]", value):
            return f"{value!r} is not a piece value (1, 2, 3 or 4) in <value>@<square>"
        return f"{square!r} is not a square (lowercase file a-g, rank 1-7) in <value>@<square>"
    return (
        "not a move token: a Totem move is its destination square (d5), a placement is "
        "<value>@<square> (3@c5), in lowercase without spaces"
    )


def _why_illegal(state: YoxiiState, move: Move) -> str:
    """Why a well-formed ``move`` is not legal in ``state`` (a game that goes on)."""
    side = state._side
    totem = state._totem
    totem_name = SQUARE_NAMES[totem]
    if state._phase == PH_T:
        if move >= PLACE:
            return f"phase t: {COLOURS[side]} must first move the Totem (a destination square)"
        return _why_totem_move_illegal(state, move)
    if move < PLACE:
        return f"phase p: {COLOURS[side]} must place a piece (<value>@<square>), not move the Totem"
    s = move & 63
    v = (move >> 6 & 3) + 1
    name = SQUARE_NAMES[s]
    if not state.stock(side)[v - 1]:
        return f"{COLOURS[side]} has no piece of value {v} left in stock"
    if s == totem:
        return f"the Totem stands on {name}"
    if (state._white | state._black) & BIT[s]:
        return f"{name} is occupied"
    return (
        f"{name} is not next to the Totem on {totem_name}, "
        "which still has an empty neighbour to place on"
    )


def _why_totem_move_illegal(state: YoxiiState, dest: Square) -> str:
    totem = state._totem
    own = state._black if state._side else state._white
    opp = state._white if state._side else state._black
    name = SQUARE_NAMES[dest]
    if dest == totem:
        return f"the Totem is on {name} already; it must move"
    if (own | opp) & BIT[dest]:
        return f"{name} is occupied"
    for ray in RAYS[totem]:
        if dest in ray:
            between = ray[: ray.index(dest)]
            if any(opp & BIT[q] for q in between):
                return "the Totem cannot jump over the opponent's pieces"
            return (
                "the Totem steps to an empty neighbour or jumps an unbroken run of own pieces; "
                f"it cannot slide over the empty squares between {SQUARE_NAMES[totem]} and {name}"
            )
    return f"{name} is not on a line with the Totem on {SQUARE_NAMES[totem]}"


# ---------------------------------------------------------------------------------------------
# Position strings (rules §8)

_RANK_RE: Final = re.compile(r"[TABCDabcd1-7]+")
_STOCK_RE: Final = re.compile(r"([0-9])([0-9])([0-9])([0-9])")
_VALUE_OF_CHAR: Final = {ch: (c, v) for c in range(2) for v, ch in enumerate(PIECE_CHARS[c])}


def format_board(white: Bitboard, black: Bitboard, values: int, totem: Square) -> str:
    """The board field of the position string."""
    ranks: list[str] = []
    s = 0
    for width in RANK_WIDTHS:
        parts: list[str] = []
        empty = 0
        for _ in range(width):
            bit = BIT[s]
            if s == totem:
                ch = "T"
            elif white & bit:
                ch = PIECE_CHARS[0][values >> 2 * s & 3]
            elif black & bit:
                ch = PIECE_CHARS[1][values >> 2 * s & 3]
            else:
                ch = ""
            if ch:
                if empty:
                    parts.append(str(empty))
                    empty = 0
                parts.append(ch)
            else:
                empty += 1
            s += 1
        if empty:
            parts.append(str(empty))
        ranks.append("".join(parts))
    return "/".join(ranks)


_Bad: TypeAlias = Callable[[str, str], InvalidPositionError]
"""Builds the error of a position string from the field at fault and why."""


class _Board(NamedTuple):
    """The board field of a position string, read."""

    pieces: tuple[Bitboard, Bitboard]
    values: int
    totem: Square
    counts: tuple[list[int], list[int]]
    """Per colour, the pieces of each value (1-4 at 0-3) on the board."""


def _parse_position(game: YoxiiGame, text: str) -> YoxiiState:
    def bad(field: str, reason: str) -> InvalidPositionError:
        return InvalidPositionError(text, field, reason)

    fields = text.split(" ")
    if len(fields) != 5 or not all(fields):
        raise bad(
            "syntax",
            "expected 5 fields (board side phase wstock bstock) separated by single spaces",
        )
    board_s, side_s, phase_s, wstock_s, bstock_s = fields
    board = _parse_board(board_s, bad)  # V1, V2, V6
    if side_s not in ("w", "b"):
        raise bad("side", f"{side_s!r} is not w or b")
    if phase_s not in ("t", "p"):
        raise bad("phase", f"{phase_s!r} is not t (Totem move) or p (placement)")
    side = SIDE_CHARS.index(side_s)
    phase = PHASE_CHARS.index(phase_s)
    stock = _parse_stocks((wstock_s, bstock_s), board.counts, bad)  # V3

    # V4: White starts and every turn adds one piece
    white, black = board.pieces
    n_w, n_b = white.bit_count(), black.bit_count()
    if (side == 0 and n_w != n_b) or (side == 1 and n_w != n_b + 1):
        raise bad(
            "side",
            f"with {n_w} White and {n_b} Black pieces on the board, it is not {side_s}'s turn "
            "(White to act needs equal counts, Black to act one White piece more)",
        )
    # V5: a placement needs a free square
    if phase == PH_P and (white | black).bit_count() + 1 == N_SQUARES:
        raise bad("phase", "phase p needs an empty square, but the board is full")

    return YoxiiState(
        game,
        pieces=board.pieces,
        values=board.values,
        totem=board.totem,
        stock=stock,
        side=side,
        phase=phase,
    )


def _parse_board(board: str, bad: _Bad) -> _Board:
    ranks = board.split("/")
    if len(ranks) != 7:
        raise bad("board", f"expected 7 ranks (7 down to 1) separated by '/', got {len(ranks)}")
    pieces = [0, 0]
    values = 0
    totems: list[Square] = []
    counts = ([0] * 4, [0] * 4)
    s = 0
    for number, rank, width in zip(range(7, 0, -1), ranks, RANK_WIDTHS, strict=True):
        if not _RANK_RE.fullmatch(rank):
            raise bad("board", f"rank {number} {rank!r}: only T A-D a-d and empty runs 1-7")
        filled = 0
        prev_digit = False
        for ch in rank:
            if ch in "1234567":
                if prev_digit:
                    raise bad("board", f"rank {number} {rank!r}: two empty runs in a row")
                prev_digit = True
                filled += int(ch)
                if filled > width:
                    break
                s += int(ch)
                continue
            prev_digit = False
            filled += 1
            if filled > width:
                break
            if ch == "T":
                totems.append(s)
            else:
                c, v = _VALUE_OF_CHAR[ch]
                pieces[c] |= BIT[s]
                values |= v << 2 * s
                counts[c][v] += 1
            s += 1
        if filled != width:
            raise bad(
                "board",
                f"rank {number} {rank!r} describes {filled} squares, but the rank has {width} "
                f"({' '.join(SQUARE_NAMES[q] for q in RANK_SQUARES[number])})",
            )
    if len(totems) != 1:
        raise bad("board", f"the board must hold exactly one Totem T, not {len(totems)}")
    return _Board((pieces[0], pieces[1]), values, totems[0], counts)


def _parse_stocks(fields: tuple[str, str], counts: tuple[list[int], list[int]], bad: _Bad) -> int:
    """The packed stocks of both fields: each digit completes the pieces of its value on the
    board to the initial count."""
    stock = 0
    for c, (prefix, field_s) in enumerate(zip(("w:", "b:"), fields, strict=True)):
        field = "wstock" if c == 0 else "bstock"
        m = _STOCK_RE.fullmatch(field_s[2:]) if field_s.startswith(prefix) else None
        if m is None:
            raise bad(field, f"{field_s!r} is not {prefix} followed by 4 digits")
        for v in range(4):
            digit = int(m.group(v + 1))
            if counts[c][v] + digit != INITIAL_STOCK[v]:
                raise bad(
                    field,
                    f"{COLOURS[c]} has {_pieces(counts[c][v])} of value {v + 1} on the board and "
                    f"{digit} in stock; the two must add up to {INITIAL_STOCK[v]}",
                )
            stock |= digit << _stock_shift(c, v)
    return stock


def _pieces(n: int) -> str:
    return f"{n} piece" if n == 1 else f"{n} pieces"


# ---------------------------------------------------------------------------------------------
# Drawing

_CELL: Final = 5  # characters per file column
_LEFT: Final = 6  # x of the first character of file a


def _edge_x(first_file: int) -> tuple[int, int]:
    """x of the left and right outline of a rank whose first square is on ``first_file``."""
    return _LEFT + first_file * _CELL - 1, _LEFT + (7 - first_file) * _CELL


def _outline(upper: int | None, lower: int | None, width: int) -> str:
    """The horizontal outline between two ranks, given their first files (None: no rank)."""
    line = [" "] * width
    spans = [f for f in (upper, lower) if f is not None]
    outer, inner = min(spans), max(spans)
    ol, orr = _edge_x(outer)
    il, ir = _edge_x(inner)
    for x in range(ol, orr + 1):
        line[x] = "-"
    if len(spans) == 2:  # the two ranks share the middle: only the steps are drawn
        for x in range(il + 1, ir):
            line[x] = " "
        line[il] = line[ir] = "+"
    line[ol] = line[orr] = "+"
    return "".join(line).rstrip()


def render_board(state: YoxiiState) -> str:
    """The octagon as in rules §2.1, outlined, with coordinates on all four sides.

    A square shows ``.`` when empty, ``*`` when empty and next to the Totem (where a piece goes
    in phase p, and the scoring region at the end), ``T`` for the Totem, and ``W3``/``B3`` for a
    White/Black piece of value 3. Below the board: both stocks and the running tally of the
    region around the Totem.
    """
    totem = state._totem
    region = NEIGHBOURS_MASK[totem]
    width = _LEFT + 7 * _CELL + 4
    header = (" " * _LEFT + "".join(f"{f:^{_CELL}}" for f in FILES)).rstrip()
    first_files: list[int | None] = [None]
    lines = [header]
    for number in range(7, 0, -1):
        squares = RANK_SQUARES[number]
        first = COORDS[squares[0]][0]
        if first != first_files[-1]:
            lines.append(_outline(first_files[-1], first, width))
        first_files.append(first)
        row = [" "] * width
        row[2] = row[-1] = str(number)
        left, right = _edge_x(first)
        row[left] = row[right] = "|"
        for s in squares:
            bit = BIT[s]
            if s == totem:
                cell = "T"
            elif state._white & bit:
                cell = f"W{state.value_at(s)}"
            elif state._black & bit:
                cell = f"B{state.value_at(s)}"
            else:
                cell = "*" if region & bit else "."
            x = _LEFT + COORDS[s][0] * _CELL
            row[x : x + _CELL] = f"{cell:^{_CELL}}"
        lines.append("".join(row))
    lines.append(_outline(first_files[-1], None, width))
    lines.append(header)

    a, b, ca, cb = state.region_scores()
    lines.append("")
    lines.append("stock        1  2  3  4  left")
    for c in range(2):
        stock = state.stock(c)
        counts = "".join(f"{n:>3}" for n in stock)
        lines.append(f"{COLOURS[c]} (p{c + 1}) {counts}{sum(stock):>6}")
    n = NEIGHBOURS_MASK[totem].bit_count()
    lines.append(
        f"Totem on {SQUARE_NAMES[totem]}, {n} squares around it: "
        f"White {a} points ({_pieces(ca)}), Black {b} points ({_pieces(cb)})"
    )
    lines.append("W3/B3 = White/Black piece of value 3, T = Totem, * = empty next to the Totem")
    return "\n".join(lines)

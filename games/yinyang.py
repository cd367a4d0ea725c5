"""Yin Yang (Gauthier Fourcade), per rules/yinyang.md: laws on a 4x4 board, hidden information.

Phases (one decision = one ply = one token; a turn is one or two plies by the same player):

=======  ===========================================================  ==========================
phase    decision                                                     tokens
=======  ===========================================================  ==========================
setup    Black, then White, writes its four laws (405^4 choices)      ``laws:<l1>,<l2>,<l3>,<l4>``
start    move an own piece to an adjacent empty square, or apply an   ``b2-c2``, ``L1@a2``,
         own law (an adaptation also rewrites a law or keeps them)    ``L3@a3:keep``,
                                                                      ``L3@c1:L2=....>.b.b``
moved    after a piece move: apply an own law, or end the turn        ``L1@a2``..., ``end``
=======  ===========================================================  ==========================

A law application or ``end`` ends the turn; then the end-of-game test runs (rules §6): a black
piece on d4 and/or a white piece on a1 wins (both: the player who completed the turn), and a
player with no legal token at the start of its turn loses. Outcome reasons ``goal``,
``both-goals``, ``no-legal-token``; no draws, no scores. Positions may repeat for ever
(``YinYangGame.max_plies`` is None).

Notation (rules §7): squares ``a1``-``d4`` and window anchors ``a1``-``c3`` (the bottom-left square
of a 2x2 window) are absolute, as Black sees the board. A law ``CAUSE>EFFECT`` lists its cells
top-left, top-right, bottom-left, bottom-right as its owner sees the board, so a White law reads
on the board as its reversed strings (R4).

Position string (rules §8): ``board side phase lawsB lawsW resB resW turn``, for example
``bwww/bwww/bbbw/bbbw b setup none none 8 10 0``. Law entries are ``+law`` (revealed), ``-law``
(hidden) or ``?`` (hidden and unknown to the holder of the string: views only).

Hidden information and views (design §2):

* ``view(player)`` is a new state whose opponent's hidden laws are ``?`` (``view(None)``: both
  players', the spectator view); its ``to_string()`` is the view string of rules §8.3, and
  ``state_from_string`` parses view strings back. A ``?`` law is never applicable and never
  blocks (it is hidden), so ``legal_moves()`` of a view is complete when the view's owner is to
  act and otherwise lists only the moves that depend on no hidden law (piece moves, ``end``,
  applications of known laws).
* A view reports the end of the game only when it can prove it. Checks 1-3 of §6 look at the
  board only. Check 4 (no legal token) for a player with ``?`` laws is decided only when the
  player has a known token (the game goes on) or when no ``?`` law could possibly apply (every
  window's pattern is the cause of a revealed law); otherwise the view answers "not over"
  (``is_terminal()`` False, ``outcome()`` None) even if its ``legal_moves()`` is empty: the
  referee decides, and the arbiter or GUI sends the next view.
* ``public_move_str(move, viewer)`` is the shown form of rules §8.4 for anyone but the mover,
  who is the side to act of the state it is called on: call it on the position before the move
  is pushed. The mover sees the full token.
* ``parse_shown_move`` (the view API) also accepts the shown forms ``laws:?,?,?,?`` (the
  mover's four laws become ``?``) and ``L<k>@<anchor>:L<j>=?`` (slot j becomes ``?``);
  ``parse_move``, what the side to act may play, refuses them. Both accept any adaptation token
  of a ``?`` law: only an adaptation law with exactly the window's pattern as cause can have
  been applied, so the view learns that law and marks it revealed. A plain ``L<k>@<anchor>`` of
  a ``?`` law is rejected (``IllegalMoveError``): its effect depends on the hidden law, so the
  holder needs the next view as a position.

Representation. Squares are numbered ``4 * (rank - 1) + file`` (a1 = 0, d4 = 15); the board is
two 16-bit ints (black, white). The 405 valid laws are numbered in the sorted order of their
texts, so setup moves enumerate in sorted token order. Matching works on pattern codes: a 2x2
pattern in absolute order (TL TR BL BR as Black sees it) is a base-3 number (``.`` 0, ``b`` 1,
``w`` 2), the nine window codes of a board come from four row lookups, and a law applies on the
windows whose code equals its absolute cause code. Laws are per player a tuple of four law
numbers (``UNKNOWN`` for ``?``) and a 4-bit revealed mask. ``pop`` restores a snapshot tuple; the
Zobrist key is updated incrementally from fixed-seed numbers and leaves out the turn counter,
which changes nothing in the game (rules §6: a repetition differs only in it).

Moves are ints, kind in bits 0-2: a piece move ``from << 3 | to << 7``; an application
``slot << 3 | anchor << 5`` (slot 0-3, anchor 0-8), a rewrite adding ``j << 9 | law << 11``; a
setup ``law1 << 3 | law2 << 12 | law3 << 21 | law4 << 30``. The setup ply returns a lazy
sequence (``SetupMoves``) of its 26,904,200,625 moves instead of a list: callers use ``len()``
and indexing; plain iteration raises ``TypeError`` at once instead of running for days.
"""

from __future__ import annotations

import itertools
import operator
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Final, SupportsIndex, TypeAlias, overload

from games.base import NOBODY, Game, Move, Outcome, Player, State
from games.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError

Square: TypeAlias = int
Bitboard: TypeAlias = int
Anchor: TypeAlias = int
LawId: TypeAlias = int
Laws: TypeAlias = tuple[int, int, int, int]

# ---------------------------------------------------------------------------------------------
# Geometry (rules §2)

FILES: Final = "abcd"
SQUARE_NAMES: Final = tuple(f"{FILES[i % 4]}{i // 4 + 1}" for i in range(16))
SQUARE_OF_NAME: Final = {name: i for i, name in enumerate(SQUARE_NAMES)}
FULL_MASK: Final = 0xFFFF
FILE_A_MASK: Final = 0x1111
FILE_D_MASK: Final = 0x8888
A1_BIT: Final = 1
D4_BIT: Final = 1 << 15

# Anchors a1 b1 c1 a2 b2 c2 a3 b3 c3 (index 3 * (rank - 1) + file).
ANCHOR_SQUARES: Final = tuple(4 * r + f for r in range(3) for f in range(3))
ANCHOR_NAMES: Final = tuple(SQUARE_NAMES[s] for s in ANCHOR_SQUARES)
ANCHOR_OF_NAME: Final = {name: a for a, name in enumerate(ANCHOR_NAMES)}
N_ANCHORS: Final = 9
# The absolute squares of each window in absolute order TL, TR, BL, BR (Black's column, §2).
WINDOW_SQUARES: Final = tuple((s + 4, s + 5, s, s + 1) for s in ANCHOR_SQUARES)
# Per anchor, a 4-bit set of absolute window positions (bit i = position i) -> board mask.
CELL_MASKS: Final = tuple(
    tuple(sum(1 << cells[i] for i in range(4) if m >> i & 1) for m in range(16))
    for cells in WINDOW_SQUARES
)

EMPTY, BLACK, WHITE = 0, 1, 2
CELL_CHARS: Final = ".bw"
_CELL_VALUE: Final = {".": EMPTY, "b": BLACK, "w": WHITE}


def pattern_code(pattern: str) -> int:
    """The base-3 code of a 4-cell pattern string (``.`` 0, ``b`` 1, ``w`` 2; first cell high)."""
    code = 0
    for ch in pattern:
        code = 3 * code + _CELL_VALUE[ch]
    return code


def code_pattern(code: int) -> str:
    """The 4-cell pattern string of a base-3 code (inverse of ``pattern_code``)."""
    cells = []
    for _ in range(4):
        cells.append(CELL_CHARS[code % 3])
        code //= 3
    return "".join(reversed(cells))


def _row_pairs(index: int) -> tuple[int, int, int]:
    """For one row (black bits | white bits << 4), the code ``3 * cell(f) + cell(f + 1)`` of the
    cell pairs starting on files a, b, c."""
    black, white = index & 15, index >> 4

    def cell(f: int) -> int:
        return BLACK if black >> f & 1 else WHITE if white >> f & 1 else EMPTY

    return (3 * cell(0) + cell(1), 3 * cell(1) + cell(2), 3 * cell(2) + cell(3))


ROW_PAIRS: Final = tuple(_row_pairs(i) for i in range(256))
# The same, times 9: the pair of the upper row of a window is its high half (TL, TR).
ROW_PAIRS_HIGH: Final = tuple(tuple(9 * p for p in pairs) for pairs in ROW_PAIRS)


def window_codes(black: Bitboard, white: Bitboard) -> tuple[int, ...]:
    """The absolute pattern code of each of the nine windows, in anchor order."""
    r0 = ROW_PAIRS[(black & 15) | (white & 15) << 4]
    r1 = ROW_PAIRS[(black >> 4 & 15) | (white & 0xF0)]
    r2 = ROW_PAIRS[(black >> 8 & 15) | (white >> 4 & 0xF0)]
    h1 = ROW_PAIRS_HIGH[(black >> 4 & 15) | (white & 0xF0)]
    h2 = ROW_PAIRS_HIGH[(black >> 8 & 15) | (white >> 4 & 0xF0)]
    h3 = ROW_PAIRS_HIGH[(black >> 12 & 15) | (white >> 8 & 0xF0)]
    return (
        h1[0] + r0[0],
        h1[1] + r0[1],
        h1[2] + r0[2],
        h2[0] + r1[0],
        h2[1] + r1[1],
        h2[2] + r1[2],
        h3[0] + r2[0],
        h3[1] + r2[1],
        h3[2] + r2[2],
    )


# ---------------------------------------------------------------------------------------------
# Laws (rules R2-R4)

DESTRUCTION, REGENERATION, ADAPTATION = 0, 1, 2
KIND_NAMES: Final = ("destruction", "regeneration", "adaptation")
_LAW_SYNTAX: Final = r"[bw.]{4}>(?:[bw.]{4}|\*)"
_LAW_RE: Final = re.compile(_LAW_SYNTAX)


def law_kind(text: str) -> int | None:
    """The kind of a law text (``DESTRUCTION``, ``REGENERATION``, ``ADAPTATION``), or None when
    the text is not a valid law (R2, R3)."""
    if not _LAW_RE.fullmatch(text):
        return None
    cause, effect = text[:4], text[5:]
    if effect == "*":
        return ADAPTATION
    diff = [i for i in range(4) if cause[i] != effect[i]]
    if len(diff) == 1 and cause[diff[0]] != "." and effect[diff[0]] == ".":
        return DESTRUCTION
    if len(diff) == 2:
        i, j = diff
        if cause[i] == cause[j] == "." and effect[i] == effect[j]:
            return REGENERATION
    return None


def _why_invalid_law(text: str) -> str:
    if not _LAW_RE.fullmatch(text):
        return (
            f"{text!r} is not a law: CAUSE>EFFECT, four cells of b w . each "
            "(top-left, top-right, bottom-left, bottom-right as the owner sees the board), "
            "the effect four cells or *"
        )
    return (
        f"{text!r} is not a valid law (R3): the effect must remove exactly one piece "
        "(destruction), add two pieces of one colour on empty cells (regeneration), or be * "
        "(adaptation)"
    )


def _all_law_texts() -> tuple[str, ...]:
    patterns = ["".join(p) for p in itertools.product(".bw", repeat=4)]
    texts = [f"{c}>{e}" for c in patterns for e in [*patterns, "*"]]
    return tuple(sorted(t for t in texts if law_kind(t) is not None))


LAW_TEXTS: Final = _all_law_texts()
N_LAWS: Final = len(LAW_TEXTS)  # 405
LAW_OF_TEXT: Final = {text: i for i, text in enumerate(LAW_TEXTS)}
UNKNOWN: Final = N_LAWS
"""The law number of a ``?`` entry: a hidden law whose text the holder of the state ignores."""
LAW_KIND: Final = tuple(law_kind(t) or 0 for t in LAW_TEXTS)


def _absolute(text: str, owner: int) -> str:
    """A pattern or effect as it lies on the board: White's is reversed (R4)."""
    return text[::-1] if owner else text


# ABS_CAUSE[owner][law]: the absolute cause code of the law when ``owner`` (0 Black, 1 White)
# owns it; UNKNOWN maps to -1, which no window has.
ABS_CAUSE: Final = tuple(
    (*(pattern_code(_absolute(t[:4], o)) for t in LAW_TEXTS), -1) for o in (0, 1)
)


def _effect_positions(text: str, owner: int) -> int:
    """The absolute window positions a destruction empties or a regeneration fills (4 bits)."""
    if text[5:] == "*":
        return 0
    cause, effect = _absolute(text[:4], owner), _absolute(text[5:], owner)
    return sum(1 << i for i in range(4) if cause[i] != effect[i])


EFFECT_POSITIONS: Final = tuple(tuple(_effect_positions(t, o) for t in LAW_TEXTS) for o in (0, 1))


# The colour a regeneration adds (BLACK or WHITE); EMPTY for the other kinds.
def _regen_colour(text: str) -> int:
    if law_kind(text) != REGENERATION:
        return EMPTY
    return max(_CELL_VALUE[e] for c, e in zip(text[:4], text[5:], strict=True) if c != e)


REGEN_COLOUR: Final = tuple(_regen_colour(t) for t in LAW_TEXTS)
# ADAPT_LAW[owner][absolute cause code]: the adaptation law with that absolute cause.
ADAPT_LAW: Final = tuple(
    tuple(LAW_OF_TEXT[_absolute(code_pattern(c), o) + ">*"] for c in range(81)) for o in (0, 1)
)

# ---------------------------------------------------------------------------------------------
# Moves

K_PIECE, K_END, K_APPLY, K_KEEP, K_REWRITE, K_REWRITE_HIDDEN, K_SETUP, K_SETUP_HIDDEN = range(8)
END: Final = K_END
SETUP_HIDDEN: Final = K_SETUP_HIDDEN
"""The shown setup token ``laws:?,?,?,?``: the mover's four laws become unknown."""
REWRITE_SUFFIXES: Final = tuple(j << 9 | law << 11 for j in range(4) for law in range(N_LAWS))
TOKENS_PER_ADAPTATION: Final = 1 + len(REWRITE_SUFFIXES)  # 1621
SETUP_COUNT: Final = N_LAWS**4


def setup_move(laws: Sequence[LawId]) -> Move:
    """The setup move writing ``laws`` (four law numbers) into slots 1-4."""
    l1, l2, l3, l4 = laws
    return K_SETUP | l1 << 3 | l2 << 12 | l3 << 21 | l4 << 30


class SetupMoves(Sequence[Move]):
    """The legal moves of a setup ply: all 405^4 choices of four laws, without a list.

    Supports ``len()``, indexing (also negative, and slices, which return lists: keep them
    small), ``in`` and ``index`` in constant time. Index order is sorted token order.

    Plain iteration raises ``TypeError`` at once: walking 26.9 billion moves (``list(moves)``,
    a comprehension, a ``for`` loop) would exhaust memory or run for days, and is always a
    caller's mistake, so it fails loudly instead. ``generate(start)`` walks it on purpose.
    """

    __slots__ = ()

    def __len__(self) -> int:
        return SETUP_COUNT

    @overload
    def __getitem__(self, index: SupportsIndex) -> Move: ...

    @overload
    def __getitem__(self, index: slice) -> list[Move]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Move | list[Move]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(SETUP_COUNT))]
        i = operator.index(index)
        if i < 0:
            i += SETUP_COUNT
        if not 0 <= i < SETUP_COUNT:
            raise IndexError("setup move index out of range")
        i, l4 = divmod(i, N_LAWS)
        i, l3 = divmod(i, N_LAWS)
        l1, l2 = divmod(i, N_LAWS)
        return setup_move((l1, l2, l3, l4))

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and _setup_laws(value) is not None

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        laws = _setup_laws(value) if isinstance(value, int) else None
        if laws is None:
            raise ValueError(f"{value!r} is not a setup move")
        l1, l2, l3, l4 = laws
        i = ((l1 * N_LAWS + l2) * N_LAWS + l3) * N_LAWS + l4
        if not range(SETUP_COUNT)[start:stop].count(i):
            raise ValueError(f"{value!r} is not in the given range")
        return i

    def count(self, value: object) -> int:
        return int(value in self)

    def __iter__(self) -> Iterator[Move]:
        raise TypeError(
            f"the {SETUP_COUNT:,} setup moves are not iterated: use len() and indexing "
            "(moves[i]), or SetupMoves.generate() to walk them on purpose"
        )

    def generate(self, start: int = 0) -> Iterator[Move]:
        """The moves from index ``start`` on, lazily, in index (sorted token) order."""
        for i in range(start, SETUP_COUNT):
            yield self[i]

    def __repr__(self) -> str:
        return f"<SetupMoves: {SETUP_COUNT} choices of four laws>"


SETUP_MOVES: Final = SetupMoves()


def _setup_laws(move: int) -> Laws | None:
    """The four law numbers of a setup move, or None if ``move`` is not one."""
    if move < 0 or move & 7 != K_SETUP or move >> 39:
        return None
    laws = (move >> 3 & 511, move >> 12 & 511, move >> 21 & 511, move >> 30 & 511)
    if max(laws) >= N_LAWS:
        return None
    return laws


# ---------------------------------------------------------------------------------------------
# Phases, sides, outcomes

SETUP, START, MOVED = 0, 1, 2
PHASE_CODES: Final = ("setup", "start", "moved")
PHASE_NAMES: Final = ("writing laws", "start of a turn", "after a piece move")
SIDE_CHARS: Final = "bw"
COLOURS: Final = ("Black", "White")
_PLAYER_NAMES: Final = ("p1", "p2")
_OUTCOME_GOAL: Final = (Outcome("p1", "goal"), Outcome("p2", "goal"))
_OUTCOME_BOTH: Final = (Outcome("p1", "both-goals"), Outcome("p2", "both-goals"))
_OUTCOME_STUCK: Final = (Outcome("p1", "no-legal-token"), Outcome("p2", "no-legal-token"))

# ---------------------------------------------------------------------------------------------
# Zobrist numbers (fixed seed: keys are stable across runs and processes)

_rng = random.Random(0x59494E59414E47)
Z_SQUARE: Final = tuple(tuple(_rng.getrandbits(64) for _ in range(16)) for _ in range(2))
Z_SIDE_PHASE: Final = tuple(_rng.getrandbits(64) for _ in range(6))  # side * 3 + phase
Z_NO_LAWS: Final = tuple(_rng.getrandbits(64) for _ in range(2))
# Z_LAW[player][slot][law * 2 + revealed], UNKNOWN included.
Z_LAW: Final = tuple(
    tuple(tuple(_rng.getrandbits(64) for _ in range(2 * N_LAWS + 2)) for _ in range(4))
    for _ in range(2)
)
Z_RESERVE: Final = tuple(tuple(_rng.getrandbits(64) for _ in range(11)) for _ in range(2))
del _rng


def _laws_key(player: int, laws: Laws | None, revealed: int) -> int:
    if laws is None:
        return Z_NO_LAWS[player]
    z = Z_LAW[player]
    return (
        z[0][laws[0] * 2 + (revealed & 1)]
        ^ z[1][laws[1] * 2 + (revealed >> 1 & 1)]
        ^ z[2][laws[2] * 2 + (revealed >> 2 & 1)]
        ^ z[3][laws[3] * 2 + (revealed >> 3 & 1)]
    )


def _iter_bits(mask: Bitboard) -> Iterator[Square]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# black, white, side, phase, laws, revealed, res_b, res_w, turn, key, outcome, move
_Snapshot: TypeAlias = tuple[
    int,
    int,
    int,
    int,
    tuple[Laws | None, Laws | None],
    tuple[int, int],
    int,
    int,
    int,
    int,
    Outcome | None,
    int,
]

START_POSITION: Final = "bwww/bwww/bbbw/bbbw b setup none none 8 10 0"


class YinYangGame(Game):
    """Yin Yang: p1 = Black moves first, p2 = White. Games may go on for ever."""

    colours = COLOURS
    start_position = START_POSITION
    max_plies = None
    hidden_information = True

    def __init__(self, name: str = "yinyang") -> None:
        if name != "yinyang":
            raise ValueError(f"unknown Yin Yang variant {name!r}")
        self.name = name

    def state_from_string(self, text: str) -> YinYangState:
        """Parse a referee string or a view string (with ``?`` entries), rules §8."""
        return _parse_position(self, text)


class YinYangState(State):
    """A Yin Yang position, or a player's or spectator's view of one (see the module docstring).

    Attributes are private; ``board_masks``, ``law_entries``, ``reserves`` and ``turn`` read them.
    """

    __slots__ = (
        "_b",
        "_key",
        "_laws",
        "_outcome",
        "_phase",
        "_res_b",
        "_res_w",
        "_rev",
        "_side",
        "_stack",
        "_turn",
        "_w",
        "game",
    )

    def __init__(
        self,
        game: YinYangGame,
        *,
        board: tuple[Bitboard, Bitboard],
        side: int,
        phase: int,
        laws: tuple[Laws | None, Laws | None],
        revealed: tuple[int, int],
        reserves: tuple[int, int],
        turn: int,
    ) -> None:
        self.game: YinYangGame = game
        self._b, self._w = board
        self._side = side
        self._phase = phase
        self._laws = laws
        self._rev = revealed
        self._res_b, self._res_w = reserves
        self._turn = turn
        self._stack: list[_Snapshot] = []
        self._key = self._compute_key()
        self._outcome = self._settle() if phase == START else None

    def _compute_key(self) -> int:
        key = Z_SIDE_PHASE[self._side * 3 + self._phase]
        for sq in _iter_bits(self._b):
            key ^= Z_SQUARE[0][sq]
        for sq in _iter_bits(self._w):
            key ^= Z_SQUARE[1][sq]
        for p in (0, 1):
            key ^= _laws_key(p, self._laws[p], self._rev[p])
        return key ^ Z_RESERVE[0][self._res_b] ^ Z_RESERVE[1][self._res_w]

    # -- queries -----------------------------------------------------------------------------

    def to_move(self) -> Player:
        return NOBODY if self._outcome is not None else self._side

    def phase(self) -> str:
        return PHASE_CODES[self._phase]

    def phase_name(self) -> str:
        """A readable name of the phase (``"after a piece move"``)."""
        return PHASE_NAMES[self._phase]

    def turn_position(self) -> tuple[int, int]:
        """A piece move, then a law (or ``end``); the laws at setup are a turn of their own."""
        if self._phase == SETUP:
            return 0, 1
        return (1, 2) if self._phase == MOVED else (0, 2)

    def is_terminal(self) -> bool:
        """Whether the game is over. On a view: only when the view can prove it (module doc)."""
        return self._outcome is not None

    def outcome(self) -> Outcome | None:
        """The outcome (reasons ``goal``, ``both-goals``, ``no-legal-token``; no scores)."""
        return self._outcome

    def key(self) -> int:
        """The Zobrist key of everything in the position string but the turn counter."""
        return self._key

    def ply(self) -> int:
        return len(self._stack)

    def board_masks(self) -> tuple[Bitboard, Bitboard]:
        """The black and the white pieces as 16-bit masks (bit ``4 * (rank - 1) + file``)."""
        return self._b, self._w

    def reserves(self) -> tuple[int, int]:
        """The black and the white regeneration reserves."""
        return self._res_b, self._res_w

    def turn(self) -> int:
        """The turn counter: 0 during setup, then 1 for Black's first turn, +1 per turn."""
        return self._turn

    def side(self) -> Player:
        """The side to act as written in the position string, even when the game is over."""
        return self._side

    def law_entries(self, player: Player) -> tuple[str, ...] | None:
        """``player``'s four law entries as in the position string (``+law``, ``-law``, ``?``),
        or None before that player has written its laws."""
        laws = self._laws[player]
        if laws is None:
            return None
        rev = self._rev[player]
        return tuple(_entry(law, rev >> i & 1) for i, law in enumerate(laws))

    def moves_hidden(self) -> bool:
        """Whether the side to act has a ``?`` law here: its moves then depend on a law this
        view does not know (only the moves that depend on no hidden law are listed)."""
        if self._outcome is not None or self._phase == SETUP:
            return False
        laws = self._laws[self._side]
        return laws is not None and UNKNOWN in laws

    def is_view(self) -> bool:
        """Whether some law is ``?`` here (a view that ignores a hidden law)."""
        return any(laws is not None and UNKNOWN in laws for laws in self._laws)

    def reveals(self, move: Move) -> bool:
        """Whether ``move`` applies a law (``State.reveals``): applying one reveals it
        (rules R6.1), even when the same decision rewrites it, hidden, at once."""
        return move & 7 in (K_APPLY, K_KEEP, K_REWRITE, K_REWRITE_HIDDEN)

    def revealed(self) -> frozenset[str]:
        """Every revealed law, as ``"<colour> L<slot> <law>"`` (``State.revealed``)."""
        facts = set()
        for p, laws in enumerate(self._laws):
            if laws is None:
                continue
            rev = self._rev[p]
            for i, law in enumerate(laws):
                if rev >> i & 1 and law != UNKNOWN:
                    facts.add(f"{COLOURS[p]} L{i + 1} {LAW_TEXTS[law]}")
        return frozenset(facts)

    def laws(self, player: Player) -> tuple[Laws | None, int]:
        """``player``'s four law numbers (indices into ``LAW_TEXTS``, ``UNKNOWN`` for ``?``)
        and the mask of its revealed slots (bit i = slot i + 1); ``(None, 0)`` before setup."""
        return self._laws[player], self._rev[player]

    def applications(self, player: Player) -> list[tuple[int, Anchor, LawId]]:
        """Every ``(slot, anchor, law)`` of ``player``'s known laws that R5 allows on this
        board, whoever is to act (match, no conflict with a revealed law, reserve)."""
        return self._applications(player)

    def with_laws(self, player: Player, laws: Laws) -> YinYangState:
        """A new state (empty history) where ``player``'s laws are ``laws``, revealed flags
        unchanged: how a ``?`` of a view is filled in with a guess."""
        both: list[Laws | None] = list(self._laws)
        both[player] = laws
        return self._with_all_laws(both[0], both[1])

    def _with_all_laws(self, black: Laws | None, white: Laws | None) -> YinYangState:
        """A new state (empty history) like this one but with these laws."""
        return YinYangState(
            self.game,
            board=(self._b, self._w),
            side=self._side,
            phase=self._phase,
            laws=(black, white),
            revealed=self._rev,
            reserves=(self._res_b, self._res_w),
            turn=self._turn,
        )

    # -- move generation ---------------------------------------------------------------------

    def legal_moves(self) -> Sequence[Move]:
        """The legal moves: a ``SetupMoves`` sequence in setup, otherwise a list.

        On a view the list holds only moves that depend on no ``?`` law (module docstring).
        """
        if self._outcome is not None:
            return []
        phase = self._phase
        if phase == SETUP:
            return SETUP_MOVES
        side = self._side
        out = self._piece_moves(side) if phase == START else []
        for slot, anchor, law in self._applications(side):
            base = slot << 3 | anchor << 5
            if LAW_KIND[law] == ADAPTATION:
                out.append(K_KEEP | base)
                rewrite = K_REWRITE | base
                out.extend([rewrite | suffix for suffix in REWRITE_SUFFIXES])
            else:
                out.append(K_APPLY | base)
        if phase == MOVED:
            out.append(END)
        return out

    def base_moves(self) -> list[Move]:
        """The legal moves outside setup with each applicable adaptation given only by its
        ``:keep`` token (its 1,620 rewrites left out): the skeleton a bot adds its own choice
        of rewrites to. Empty in setup and when the game is over."""
        if self._outcome is not None or self._phase == SETUP:
            return []
        side = self._side
        out = self._piece_moves(side) if self._phase == START else []
        for slot, anchor, law in self._applications(side):
            kind = K_KEEP if LAW_KIND[law] == ADAPTATION else K_APPLY
            out.append(kind | slot << 3 | anchor << 5)
        if self._phase == MOVED:
            out.append(END)
        return out

    def count_moves(self) -> int:
        if self._outcome is not None:
            return 0
        phase = self._phase
        if phase == SETUP:
            return SETUP_COUNT
        side = self._side
        n = self._count_piece_moves(side) if phase == START else 1  # 1: end
        for _, _, law in self._applications(side):
            n += TOKENS_PER_ADAPTATION if LAW_KIND[law] == ADAPTATION else 1
        return n

    def describe_moves(self) -> str:
        """How a legal token is written when there are too many to list (setup), else ""."""
        if self._phase != SETUP or self._outcome is not None:
            return ""
        return (
            f"laws:<law>,<law>,<law>,<law> writes {COLOURS[self._side]}'s laws into slots 1-4; "
            "each <law> is any of the 405 valid laws CAUSE>EFFECT, cells b w . listed top-left, "
            "top-right, bottom-left, bottom-right as the writer sees the board: a destruction "
            "(the effect empties one occupied cell, e.g. bwbb>b.bb), a regeneration (fills two "
            "empty cells with one colour, e.g. ..bb>bbbb) or an adaptation (effect *, e.g. "
            "bwbw>*)"
        )

    def _empty(self) -> Bitboard:
        return ~(self._b | self._w) & FULL_MASK

    def _piece_moves(self, side: int) -> list[Move]:
        own = self._w if side else self._b
        empty = self._empty()
        out: list[Move] = []
        # (targets, from = to - delta) per direction; E/W must not wrap round a rank.
        for targets, delta in (
            ((own << 4) & empty, 4),
            ((own >> 4) & empty, -4),
            (((own & ~FILE_D_MASK) << 1) & empty, 1),
            (((own & ~FILE_A_MASK) >> 1) & empty, -1),
        ):
            for to in _iter_bits(targets):
                out.append(K_PIECE | (to - delta) << 3 | to << 7)
        return out

    def _count_piece_moves(self, side: int) -> int:
        own = self._w if side else self._b
        empty = self._empty()
        return (
            ((own << 4) & empty).bit_count()
            + ((own >> 4) & empty).bit_count()
            + (((own & ~FILE_D_MASK) << 1) & empty).bit_count()
            + (((own & ~FILE_A_MASK) >> 1) & empty).bit_count()
        )

    def _revealed_causes(self) -> list[tuple[int, int]]:
        """``(player * 4 + slot, absolute cause code)`` of every revealed law (R5.2)."""
        out: list[tuple[int, int]] = []
        for p in (0, 1):
            laws = self._laws[p]
            rev = self._rev[p]
            if laws is None or not rev:
                continue
            causes = ABS_CAUSE[p]
            for i in range(4):
                if rev >> i & 1:
                    out.append((p * 4 + i, causes[laws[i]]))
        return out

    def _applications(self, side: int) -> list[tuple[int, Anchor, LawId]]:
        """Every applicable ``(slot, anchor, law)`` of ``side``'s known laws (R5)."""
        laws = self._laws[side]
        if laws is None:
            return []
        codes = window_codes(self._b, self._w)
        causes = ABS_CAUSE[side]
        revealed: list[tuple[int, int]] | None = None
        out: list[tuple[int, Anchor, LawId]] = []
        for slot in range(4):
            law = laws[slot]
            cause = causes[law]
            if cause not in codes:  # also skips UNKNOWN, whose cause is -1
                continue
            if revealed is None:
                revealed = self._revealed_causes()
            me = side * 4 + slot
            if any(c == cause and who != me for who, c in revealed):
                continue
            colour = REGEN_COLOUR[law]
            if colour and (self._res_b if colour == BLACK else self._res_w) < 2:
                continue
            out.extend((slot, a, law) for a in range(N_ANCHORS) if codes[a] == cause)
        return out

    def _has_piece_move(self, side: int) -> bool:
        own = self._w if side else self._b
        empty = self._empty()
        return bool(
            ((own << 4) | (own >> 4) | ((own & ~FILE_D_MASK) << 1) | ((own & ~FILE_A_MASK) >> 1))
            & empty
        )

    def _unknown_may_apply(self) -> bool:
        """Whether some ``?`` law could apply: some window's pattern is the cause of no revealed
        law (then an adaptation with that cause would be legal there)."""
        blocked = {c for _, c in self._revealed_causes()}
        return any(c not in blocked for c in window_codes(self._b, self._w))

    def _settle(self) -> Outcome | None:
        """The end-of-game test of rules §6 on a position in phase ``start``."""
        b, w = self._b, self._w
        side = self._side
        if b & D4_BIT:
            return _OUTCOME_BOTH[side ^ 1] if w & A1_BIT else _OUTCOME_GOAL[0]
        if w & A1_BIT:
            return _OUTCOME_GOAL[1]
        if self._has_piece_move(side) or self._applications(side):
            return None
        laws = self._laws[side]
        if laws is not None and UNKNOWN in laws and self._unknown_may_apply():
            return None  # a view: the player's hidden laws may hold a token
        return _OUTCOME_STUCK[side ^ 1]

    # -- make / unmake -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        side = self._side
        phase = self._phase
        key = self._key
        self._stack.append(
            (
                self._b,
                self._w,
                side,
                phase,
                self._laws,
                self._rev,
                self._res_b,
                self._res_w,
                self._turn,
                key,
                self._outcome,
                move,
            )
        )
        kind = move & 7
        if kind == K_PIECE:
            frm = move >> 3 & 15
            to = move >> 7 & 15
            bits = 1 << frm | 1 << to
            if side:
                self._w ^= bits
            else:
                self._b ^= bits
            z = Z_SQUARE[side]
            self._key = (
                key
                ^ z[frm]
                ^ z[to]
                ^ Z_SIDE_PHASE[side * 3 + START]
                ^ Z_SIDE_PHASE[side * 3 + MOVED]
            )
            self._phase = MOVED
            return
        if kind == K_END:
            self._end_turn(key)
            return
        if kind >= K_SETUP:
            laws = _setup_laws(move) if kind == K_SETUP else None
            written: Laws = laws if laws is not None else (UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN)
            key ^= Z_NO_LAWS[side] ^ _laws_key(side, written, 0)
            if side == 0:
                self._laws = (written, self._laws[1])
                self._side = 1
                self._key = key ^ Z_SIDE_PHASE[SETUP] ^ Z_SIDE_PHASE[3 + SETUP]
            else:
                # White's setup ends the setup exactly as an end of turn would: Black, turn 1.
                self._laws = (self._laws[0], written)
                self._end_turn(key)
            return

        self._apply_law(move, kind, side, key)

    def _apply_law(self, move: Move, kind: int, side: int, key: int) -> None:
        """A law application (R6), which ends the turn."""
        slot = move >> 3 & 3
        anchor = move >> 5 & 15
        own = self._laws[side]
        assert own is not None
        rev = self._rev[side]
        key ^= _laws_key(side, own, rev)
        law = own[slot]
        new = list(own)
        if law == UNKNOWN:
            # Only an adaptation whose cause is the window's pattern can have been applied.
            law = ADAPT_LAW[side][window_codes(self._b, self._w)[anchor]]
            new[slot] = law
        rev |= 1 << slot
        if kind == K_APPLY:
            key = self._regenerate(CELL_MASKS[anchor][EFFECT_POSITIONS[side][law]], law, key)
        elif kind != K_KEEP:
            j = move >> 9 & 3
            new[j] = move >> 11 & 511 if kind == K_REWRITE else UNKNOWN
            rev &= ~(1 << j)
        laws_new: Laws = (new[0], new[1], new[2], new[3])
        key ^= _laws_key(side, laws_new, rev)
        if side:
            self._laws = (self._laws[0], laws_new)
            self._rev = (self._rev[0], rev)
        else:
            self._laws = (laws_new, self._laws[1])
            self._rev = (rev, self._rev[1])
        self._end_turn(key)

    def _regenerate(self, mask: Bitboard, law: int, key: int) -> int:
        """The effect of ``law`` on the squares of ``mask``: emptied, or filled from a reserve;
        the key with it."""
        colour = REGEN_COLOUR[law]
        if colour == EMPTY:
            if self._b & mask:
                self._b ^= mask
                key ^= Z_SQUARE[0][mask.bit_length() - 1]
            else:
                self._w ^= mask
                key ^= Z_SQUARE[1][mask.bit_length() - 1]
        elif colour == BLACK:
            self._b |= mask
            for sq in _iter_bits(mask):
                key ^= Z_SQUARE[0][sq]
            key ^= Z_RESERVE[0][self._res_b] ^ Z_RESERVE[0][self._res_b - 2]
            self._res_b -= 2
        else:
            self._w |= mask
            for sq in _iter_bits(mask):
                key ^= Z_SQUARE[1][sq]
            key ^= Z_RESERVE[1][self._res_w] ^ Z_RESERVE[1][self._res_w - 2]
            self._res_w -= 2
        return key

    def _end_turn(self, key: int) -> None:
        """Pass the turn to the opponent (phase start, turn + 1) and run the end test."""
        side = self._side
        self._key = (
            key ^ Z_SIDE_PHASE[side * 3 + self._phase] ^ Z_SIDE_PHASE[(side ^ 1) * 3 + START]
        )
        self._side = side ^ 1
        self._phase = START
        self._turn += 1
        self._outcome = self._settle()

    def pop(self) -> Move:
        (
            self._b,
            self._w,
            self._side,
            self._phase,
            self._laws,
            self._rev,
            self._res_b,
            self._res_w,
            self._turn,
            self._key,
            self._outcome,
            move,
        ) = self._stack.pop()
        return move

    def copy(self) -> YinYangState:
        other = object.__new__(YinYangState)
        for name in YinYangState.__slots__:
            setattr(other, name, getattr(self, name))
        other._stack = list(self._stack)
        return other

    # -- hidden information ------------------------------------------------------------------

    def view(self, player: Player | None) -> YinYangState:
        """``player``'s view (None: the spectator's): every hidden law of the other player(s)
        becomes ``?``. A new state with an empty history (the history would tell hidden laws);
        its outcome is what the view can prove (module docstring)."""
        laws: list[Laws | None] = list(self._laws)
        for p in (0, 1):
            own = laws[p]
            if p == player or own is None:
                continue
            rev = self._rev[p]
            a, b, c, d = (law if rev >> i & 1 else UNKNOWN for i, law in enumerate(own))
            laws[p] = (a, b, c, d)
        return self._with_all_laws(laws[0], laws[1])

    def public_move_str(self, move: Move, viewer: Player | None) -> str:
        """The token of ``move`` as ``viewer`` is shown it (rules §8.4).

        The mover is this state's side to act: call it on the position before ``move`` is
        pushed. The mover gets the full token; anyone else (None: a spectator) the shown form,
        ``laws:?,?,?,?`` for a setup and ``L<k>@<anchor>:L<j>=?`` for a rewrite.
        """
        if viewer == self._side:
            return self.move_to_str(move)
        kind = move & 7
        if kind == K_SETUP:
            return "laws:?,?,?,?"
        if kind == K_REWRITE:
            return self.move_to_str(move & ~(511 << 11) & ~7 | K_REWRITE_HIDDEN)
        return self.move_to_str(move)

    # -- notation ----------------------------------------------------------------------------

    def move_to_str(self, move: Move) -> str:
        return move_to_str(move)

    def parse_move(self, text: str) -> Move:
        """The checked path for what the side to act may play: never a shown form
        (``laws:?,?,?,?``, ``...:L<j>=?``), which hides what the mover wrote; a viewer given
        the opponent's moves in their shown forms reads them with ``parse_shown_move``.

        Raises:
            InvalidMoveError: not a token (grammar of rules §7, an invalid law, a square or
                anchor off the board).
            IllegalMoveError: a token that is not legal here, a shown form, or a token whose
                effect depends on a law this state does not know (then the reason says to send
                the next view).
        """
        move = parse_token(text)
        if move & 7 in (K_SETUP_HIDDEN, K_REWRITE_HIDDEN):
            raise IllegalMoveError(
                text,
                "a shown form (with ?): the mover writes its move in full; a viewer given "
                "the opponent's shown move reads it as shown (parse_shown_move)",
            )
        return self._check(text, move)

    def parse_shown_move(self, text: str) -> Move:
        """As ``parse_move``, and also the shown forms (rules §8.4) where their effect is
        computable: the moves of the opponent as a view is shown them.

        Raises:
            InvalidMoveError: as ``parse_move``.
            IllegalMoveError: as ``parse_move``, but for the shown forms.
        """
        return self._check(text, parse_token(text))

    def _check(self, text: str, move: Move) -> Move:
        if self._outcome is not None:
            raise IllegalMoveError(text, "the game is over")
        kind = move & 7
        phase = self._phase
        colour = COLOURS[self._side]
        if phase == SETUP:
            if kind >= K_SETUP:
                return move
            raise IllegalMoveError(
                text, f"in the setup phase {colour} writes its laws: laws:<law>,<law>,<law>,<law>"
            )
        if kind >= K_SETUP:
            raise IllegalMoveError(text, "laws are written only in the setup phase")
        if kind == K_END:
            if phase == MOVED:
                return move
            raise IllegalMoveError(
                text,
                "end is legal only after a piece move (phase moved); at the start of a turn "
                "move a piece or apply a law",
            )
        if kind == K_PIECE:
            self._check_piece_move(text, move)
            return move
        self._check_application(text, move)
        return move

    def _check_piece_move(self, text: str, move: Move) -> None:
        if self._phase == MOVED:
            raise IllegalMoveError(
                text, "a piece has already moved this turn: apply a law or end the turn"
            )
        frm = move >> 3 & 15
        to = move >> 7 & 15
        side = self._side
        own = self._w if side else self._b
        if not own >> frm & 1:
            raise IllegalMoveError(text, f"no {COLOURS[side].lower()} piece on {SQUARE_NAMES[frm]}")
        if abs(frm % 4 - to % 4) + abs(frm // 4 - to // 4) != 1:
            raise IllegalMoveError(
                text,
                f"{SQUARE_NAMES[to]} is not orthogonally adjacent to {SQUARE_NAMES[frm]}",
            )
        if (self._b | self._w) >> to & 1:
            raise IllegalMoveError(text, f"{SQUARE_NAMES[to]} is occupied")

    def _check_application(self, text: str, move: Move) -> None:
        side = self._side
        kind = move & 7
        slot = move >> 3 & 3
        anchor = move >> 5 & 15
        laws = self._laws[side]
        assert laws is not None
        law = laws[slot]
        name = f"L{slot + 1}"
        codes = window_codes(self._b, self._w)
        window = _absolute(code_pattern(codes[anchor]), side)
        has_adapt_part = kind != K_APPLY
        if law == UNKNOWN:
            if not has_adapt_part:
                raise IllegalMoveError(
                    text,
                    f"{name} of {COLOURS[side]} is unknown in this position, and its effect "
                    "depends on the hidden law; send the new view as a position",
                )
            # Only the adaptation with the window's pattern as cause fits; it is checked below.
            law = ADAPT_LAW[side][codes[anchor]]
        else:
            described = f"{name} ({LAW_TEXTS[law]}, {KIND_NAMES[LAW_KIND[law]]})"
            if LAW_KIND[law] == ADAPTATION and not has_adapt_part:
                raise IllegalMoveError(
                    text, f"{described} needs an adaptation part: :keep or :L<j>=<law>"
                )
            if LAW_KIND[law] != ADAPTATION and has_adapt_part:
                raise IllegalMoveError(text, f"{described} takes no adaptation part")
            if ABS_CAUSE[side][law] != codes[anchor]:
                raise IllegalMoveError(
                    text,
                    f"{described} does not match window {ANCHOR_NAMES[anchor]}, which reads "
                    f"{window} as {COLOURS[side]} sees it",
                )
        cause = ABS_CAUSE[side][law]
        me = side * 4 + slot
        for who, c in self._revealed_causes():
            if c == cause and who != me:
                p, i = divmod(who, 4)
                other = self._laws[p]
                assert other is not None
                raise IllegalMoveError(
                    text,
                    f"{name} conflicts with the revealed law L{i + 1} of {COLOURS[p]} "
                    f"({LAW_TEXTS[other[i]]}): same absolute cause {code_pattern(cause)}",
                )
        colour = REGEN_COLOUR[law]
        if colour:
            reserve = self._res_b if colour == BLACK else self._res_w
            if reserve < 2:
                raise IllegalMoveError(
                    text,
                    f"the {COLOURS[colour - 1].lower()} reserve holds {reserve}: "
                    "a regeneration needs 2",
                )

    def to_string(self) -> str:
        b, w = self._b, self._w
        rows = []
        for r in range(3, -1, -1):
            rows.append(
                "".join(
                    "b" if b >> sq & 1 else "w" if w >> sq & 1 else "."
                    for sq in range(4 * r, 4 * r + 4)
                )
            )
        return (
            f"{'/'.join(rows)} {SIDE_CHARS[self._side]} {PHASE_CODES[self._phase]} "
            f"{_format_laws(self._laws[0], self._rev[0])} "
            f"{_format_laws(self._laws[1], self._rev[1])} "
            f"{self._res_b} {self._res_w} {self._turn}"
        )

    def render(self) -> str:
        return render_state(self)


# ---------------------------------------------------------------------------------------------
# Tokens (rules §7)

_SETUP_RE: Final = re.compile(
    rf"laws:({_LAW_SYNTAX}),({_LAW_SYNTAX}),({_LAW_SYNTAX}),({_LAW_SYNTAX})"
)
_PIECE_RE: Final = re.compile(r"([a-d][1-4])-([a-d][1-4])")
_APPLY_RE: Final = re.compile(r"L([1-4])@([a-d][1-4])(?::(?:(keep)|L([1-4])=(.*)))?")


def parse_token(text: str) -> Move:
    """Parse a Yin Yang token (or a shown form) into a move, without looking at a position.

    Raises:
        InvalidMoveError: not a canonical token: wrong syntax or case, an invalid law, a square
            off the board, an anchor that is no window's bottom-left square.
    """
    if text == "end":
        return END
    if text.startswith("laws:"):
        if text == "laws:?,?,?,?":
            return SETUP_HIDDEN
        m = _SETUP_RE.fullmatch(text)
        if m is None or any(t not in LAW_OF_TEXT for t in m.groups()):
            parts = text[5:].split(",")
            if len(parts) != 4:
                raise InvalidMoveError(
                    text, f"a setup token lists 4 laws separated by commas, not {len(parts)}"
                )
            for i, part in enumerate(parts, 1):
                if part not in LAW_OF_TEXT:
                    raise InvalidMoveError(text, f"law {i}: {_why_invalid_law(part)}")
        assert m is not None
        return setup_move([LAW_OF_TEXT[t] for t in m.groups()])
    m = _PIECE_RE.fullmatch(text)
    if m is not None:
        frm, to = (SQUARE_OF_NAME[s] for s in m.groups())
        return K_PIECE | frm << 3 | to << 7
    m = _APPLY_RE.fullmatch(text)
    if m is not None:
        slot_s, anchor_s, keep, j_s, new_s = m.groups()
        anchor = ANCHOR_OF_NAME.get(anchor_s)
        if anchor is None:
            raise InvalidMoveError(
                text,
                f"{anchor_s} is not a window anchor: a window is named by its bottom-left "
                "square, a1 to c3",
            )
        base = (int(slot_s) - 1) << 3 | anchor << 5
        if keep is not None:
            return K_KEEP | base
        if j_s is None:
            return K_APPLY | base
        j = int(j_s) - 1
        if new_s == "?":
            return K_REWRITE_HIDDEN | base | j << 9
        law = LAW_OF_TEXT.get(new_s)
        if law is None:
            raise InvalidMoveError(text, f"the rewrite: {_why_invalid_law(new_s)}")
        return K_REWRITE | base | j << 9 | law << 11
    raise InvalidMoveError(text, _why_invalid_token(text))


def _why_invalid_token(text: str) -> str:
    if text.startswith(("L", "l")):
        return (
            "a law application is L<slot>@<anchor> with slot 1-4 and anchor a1-c3, followed "
            "for an adaptation by :keep or :L<slot>=<law> (uppercase L, no spaces)"
        )
    if "-" in text:
        return "a piece move is <from>-<to>, squares a1 to d4 in lowercase"
    return (
        "not a move token: a piece move (b2-c2), a law application (L1@a2, L3@a3:keep, "
        "L3@c1:L2=....>.b.b), end, or a setup laws:<law>,<law>,<law>,<law>"
    )


def move_to_str(move: Move) -> str:
    """The canonical token of a move (the shown form for the two redacted kinds)."""
    kind = move & 7
    if kind == K_PIECE:
        return f"{SQUARE_NAMES[move >> 3 & 15]}-{SQUARE_NAMES[move >> 7 & 15]}"
    if kind == K_END:
        return "end"
    if kind == K_SETUP:
        laws = _setup_laws(move)
        assert laws is not None
        return "laws:" + ",".join(LAW_TEXTS[law] for law in laws)
    if kind == K_SETUP_HIDDEN:
        return "laws:?,?,?,?"
    head = f"L{(move >> 3 & 3) + 1}@{ANCHOR_NAMES[move >> 5 & 15]}"
    if kind == K_APPLY:
        return head
    if kind == K_KEEP:
        return head + ":keep"
    j = (move >> 9 & 3) + 1
    if kind == K_REWRITE:
        return f"{head}:L{j}={LAW_TEXTS[move >> 11 & 511]}"
    return f"{head}:L{j}=?"


# ---------------------------------------------------------------------------------------------
# Position strings (rules §8)

_ROW_RE: Final = re.compile(r"[bw.]{4}")
_NUM_RE: Final = re.compile(r"0|[1-9][0-9]*")
_RESERVE_MAX: Final = (8, 10)


def _entry(law: int, revealed: int) -> str:
    if law == UNKNOWN:
        return "?"
    return ("+" if revealed else "-") + LAW_TEXTS[law]


def _format_laws(laws: Laws | None, revealed: int) -> str:
    if laws is None:
        return "none"
    return ",".join(_entry(law, revealed >> i & 1) for i, law in enumerate(laws))


def _parse_laws(text: str, field: str, value: str) -> tuple[Laws | None, int]:
    """A law field: ``none`` or four entries; returns (law numbers, revealed mask)."""
    if value == "none":
        return None, 0
    entries = value.split(",")
    if len(entries) != 4:
        raise InvalidPositionError(
            text, field, f"{value!r} is neither none nor four entries separated by commas"
        )
    laws: list[int] = []
    revealed = 0
    for i, entry in enumerate(entries):
        if entry == "?":
            laws.append(UNKNOWN)
            continue
        law = LAW_OF_TEXT.get(entry[1:])
        if entry[:1] not in ("+", "-") or law is None:
            reason = (
                _why_invalid_law(entry[1:])
                if entry[:1] in ("+", "-")
                else "an entry is +law (revealed), -law (hidden) or ? (unknown)"
            )
            raise InvalidPositionError(text, field, f"slot {i + 1} {entry!r}: {reason}")
        laws.append(law)
        if entry[0] == "+":
            revealed |= 1 << i
    return (laws[0], laws[1], laws[2], laws[3]), revealed


def _parse_int(text: str, field: str, value: str, limit: int | None) -> int:
    if not _NUM_RE.fullmatch(value):
        raise InvalidPositionError(
            text, field, f"{value!r} is not a whole number without leading zeros"
        )
    try:
        number = int(value)
    except ValueError:  # more digits than int() takes
        raise InvalidPositionError(text, field, f"{value[:20]}... is too large") from None
    if limit is not None and number > limit:
        raise InvalidPositionError(text, field, f"{number} is above the maximum {limit}")
    return number


_Bad: TypeAlias = Callable[[str, str], InvalidPositionError]
"""Builds the error of a position string from the field at fault and why."""


def _parse_position(game: YinYangGame, text: str) -> YinYangState:
    def bad(field: str, reason: str) -> InvalidPositionError:
        return InvalidPositionError(text, field, reason)

    fields = text.split(" ")
    if len(fields) != 8:
        raise bad(
            "syntax",
            "expected 8 fields separated by single spaces (board side phase lawsB lawsW resB "
            f"resW turn), got {len(fields)}",
        )
    board_s, side_s, phase_s, laws_b_s, laws_w_s, res_b_s, res_w_s, turn_s = fields
    board = _parse_board(board_s, bad)
    if side_s not in ("b", "w"):
        raise bad("side", f"{side_s!r} is not b or w")
    if phase_s not in PHASE_CODES:
        raise bad("phase", f"{phase_s!r} is not setup, start or moved")
    laws_b, rev_b = _parse_laws(text, "lawsB", laws_b_s)
    laws_w, rev_w = _parse_laws(text, "lawsW", laws_w_s)
    res_b = _parse_int(text, "resB", res_b_s, _RESERVE_MAX[0])
    res_w = _parse_int(text, "resW", res_w_s, _RESERVE_MAX[1])
    turn = _parse_int(text, "turn", turn_s, None)
    side = SIDE_CHARS.index(side_s)
    phase = PHASE_CODES.index(phase_s)
    if phase == SETUP:
        _check_setup(turn, side, (laws_b, laws_w), rev_b, bad)
    else:
        _check_after_setup(turn, side, (laws_b, laws_w), bad)
    return YinYangState(
        game,
        board=board,
        side=side,
        phase=phase,
        laws=(laws_b, laws_w),
        revealed=(rev_b, rev_w),
        reserves=(res_b, res_w),
        turn=turn,
    )


def _parse_board(board: str, bad: _Bad) -> tuple[Bitboard, Bitboard]:
    """The black and the white stones of the board field."""
    rows = board.split("/")
    if len(rows) != 4 or not all(_ROW_RE.fullmatch(row) for row in rows):
        raise bad("board", "four rows of four cells b w . (rank 4 first), separated by '/'")
    black = white = 0
    for r, row in zip(range(3, -1, -1), rows, strict=True):
        for f, ch in enumerate(row):
            if ch == "b":
                black |= 1 << (4 * r + f)
            elif ch == "w":
                white |= 1 << (4 * r + f)
    return black, white


def _check_setup(
    turn: int, side: int, laws: tuple[Laws | None, Laws | None], rev_b: int, bad: _Bad
) -> None:
    """In the setup, Black writes its laws (hidden), then White."""
    if turn != 0:
        raise bad("turn", "the turn counter is 0 during setup")
    laws_b, laws_w = laws
    if side == 0:
        if laws_b is not None:
            raise bad("lawsB", "Black writes its laws in the setup phase: none before it")
        if laws_w is not None:
            raise bad("lawsW", "White writes its laws after Black: none before it")
        return
    if laws_b is None:
        raise bad("lawsB", "Black has written its laws when White writes")
    if rev_b:
        raise bad("lawsB", "every law is hidden until it is applied")
    if laws_w is not None:
        raise bad("lawsW", "White's laws are none until White writes them")


def _check_after_setup(
    turn: int, side: int, laws: tuple[Laws | None, Laws | None], bad: _Bad
) -> None:
    """After the setup, both have written their laws, and Black acts in odd turns."""
    if turn == 0:
        raise bad("turn", "turn 0 is the setup phase; turns count from 1")
    if laws[0] is None:
        raise bad("lawsB", "both players have written their laws after setup")
    if laws[1] is None:
        raise bad("lawsW", "both players have written their laws after setup")
    if side != (turn + 1) % 2:
        raise bad("side", f"in turn {turn} the side to act is {SIDE_CHARS[(turn + 1) % 2]}")


# ---------------------------------------------------------------------------------------------
# Drawing


def _law_diagram(entry: str, slot: int) -> list[str]:
    """Five lines of one law as its owner sees it: title, kind, and the 2x2 cause and effect."""
    title = f"L{slot + 1} " + {"+": "revealed", "-": "hidden", "?": "unknown"}[entry[0]]
    if entry == "?":
        return [title, "?", "? ?", "? ?"]
    text = entry[1:]
    cause, effect = text[:4], text[5:]
    kind = KIND_NAMES[LAW_KIND[LAW_OF_TEXT[text]]]
    if effect == "*":
        return [title, kind, f"{cause[0]} {cause[1]} -> *", f"{cause[2]} {cause[3]}"]
    return [
        title,
        kind,
        f"{cause[0]} {cause[1]} -> {effect[0]} {effect[1]}",
        f"{cause[2]} {cause[3]}    {effect[2]} {effect[3]}",
    ]


def render_state(state: YinYangState) -> str:
    """The board (rank 4 on top, as Black sees it), reserves, turn, and both players' laws as
    2x2 diagrams drawn as their owner sees the board (White's turned 180 degrees on the board).

    A hidden law shows its text only where this state knows it: in a player's view the
    opponent's hidden laws are drawn as ``?`` (unknown).
    """
    b, w = state.board_masks()
    lines = ["    a b c d"]
    for r in range(3, -1, -1):
        cells = " ".join(
            "b" if b >> sq & 1 else "w" if w >> sq & 1 else "." for sq in range(4 * r, 4 * r + 4)
        )
        note = {3: "   d4: Black's goal", 0: "   a1: White's goal"}.get(r, "")
        lines.append(f" {r + 1}  {cells}  {r + 1}{note}")
    lines.append("    a b c d")
    res_b, res_w = state.reserves()
    lines.append(f"reserves: black {res_b}, white {res_w}; turn {state.turn()}")
    for player in (0, 1):
        entries = state.law_entries(player)
        head = f"{COLOURS[player]} ({_PLAYER_NAMES[player]}) laws"
        if entries is None:
            lines.append(f"{head}: not written yet")
            continue
        lines.append(f"{head}, as {COLOURS[player]} sees the board:")
        diagrams = [_law_diagram(e, i) for i, e in enumerate(entries)]
        for row in zip(*diagrams, strict=True):
            lines.append("  " + "".join(f"{cell:<16}" for cell in row).rstrip())
    return "\n".join(lines)

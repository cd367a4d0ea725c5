"""The evaluation of Yinsh (``yinsh`` and ``yinsh+blitz``) for the alpha-beta bot.

Scale: one removed ring is worth 1,000, so every positional term has room below it. Each
feature is counted for White and for Black by the same code and the value is White's sum minus
Black's, returned from the side to act: the evaluation is exactly colour-symmetric.

Features and weights (``Weights``). The weights were fitted by logistic regression of game
results on the features of quiet positions from self-play (the mover has no row to make), twice
over (the second time on games of the first fit), and each fit won its match against the
weights before it (31/40, then 27/40). SPSA then moved them (``enginesrv tune``, 1,600 games
at 5+0.05), and the tuned set beat the fitted one in its SPRT (+43 +- 33 Elo over 446 games at
5+0.05, benchmarks/README.md). Blitz uses the same weights: a set fitted on blitz games
did no better there (49/100). Every weight but ``ring`` (the unit) is an option of alphabeta,
``EvalYinsh...`` (``bots.eval.tuning``), for a tuner to move. The signs are what the games
taught; the reason for each:

* **Rings removed**: ``ring`` 1000 each, plus ``race`` 84 per ring for every marker the pool
  holds below ``race_pool`` 12. Removing rings is the goal; when the pool runs low the game is
  likely to end by an empty pool, where more removed rings wins, so a lead grows in value (at
  pool 1 a ring is worth about 2,000).
* **Pending rows and rings** (phases ``x r X R``): a row on the board is a ring its owner
  takes off within two plies, and in the ring-removal phases the ring about to go is as good as
  removed; both count like removed rings. Runs of six and crossing rows count once.
* **Ring threats**, ``threat_next`` 299 / ``threat_other`` 297 (near the win, one ring short
  of the target and so always in blitz: ``threat_win_next`` 3811 / ``threat_win_other`` 874):
  four markers and a ring of one colour in a window. Moving that ring away (almost
  any of its moves) completes the row. The player with the next ring move cashes it at once
  (quiescence finds it); the other one's threat must be parried by a flip, which often fails.
* **Four markers**, the fifth point an opponent's marker: ``four_flip_next`` 17 /
  ``four_flip_other`` 99. A jump across that marker completes the row, so the player to
  move must watch the other's; his own are mostly used by quiescence already.
* **Four markers**, fifth point empty or a ring (a ring threat adds its own weight):
  ``four_next`` -5 / ``four_other`` -33. They are as much a target as an asset: a ring that
  jumps along them flips all four to the other colour.
* **Three in a window**: with no opponent marker ``three_next`` -10 / ``three_other`` -6,
  mixed with opponent markers ``three_mixed_next`` 14 / ``three_mixed_other`` 3; **two in a
  window** (no opponent marker) ``two_next`` -18 / ``two_other`` -28. Loose lines of one
  colour are material for the other side's jumps; lines already contested by the opponent's
  markers are the ones that turn into rows.
* **Markers**: ``marker`` 74 per marker of one's colour on the board: the raw material of
  rows, and the score of the flipping battle.
* **Ring contact**: ``contact`` 50 per ring and direction with a marker next to the ring.
  Such a ring can jump and flip: it takes part in the fight.
* **Ring mobility**: ``mobility`` -20 per empty point next to one's rings. Rings out in empty
  space are idle; during placement mobility is an asset (+4).
* **Ring centrality**: ``centre3`` 2, ``centre2`` 75, ``centre1`` -29 per ring
  within distance 3, 2, 1 of f6. Central rings reach more lines, the very centre is crowded.
  Placement uses only centrality (21, 20, 8) and mobility, since there is nothing else yet.
* **Tempo**: ``tempo`` 42 for the player who makes the next ring move.

Speed: the evaluation runs in pure Python at every leaf, so the board is worked on as bitboards.
The four bitboards of the rules engine (column by column) and the empty points are packed into
one int and moved into a lattice layout (point (q, r) at bit 9q + r - 2) with seven masked
shifts. In that layout the line axes are shifts by 1, 10 and 9, so one bit-sliced adder over
five shifted copies counts the markers of every window of every axis and both colours at once
(six copies in one int); a few ``bit_count`` calls then give every feature. About 8 us a call;
values are also cached by position key.

Search advice: the noisy moves are exactly the ring moves that complete a row of the mover,
found without playing them (see ``row_moves``); they are also ordered first. Positions with a
row or a ring to remove are not quiet, so quiescence plays the removals out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol, TypeAlias, cast

from bots.eval import MAX_EVAL, Evaluator, tuning
from games import Move, State
from games.native import native_module
from games.yinsh import (
    BETWEEN,
    BIT,
    COORDS,
    KIND_SHIFT,
    N_POINTS,
    RAYS,
    RING_MOVE,
    WINDOW_MASK,
    WINDOW_POINTS,
    YinshState,
)

# ---------------------------------------------------------------------------------------------
# Weights


class Weights(NamedTuple):
    """The weights of the features (see the module docstring); 1000 = one removed ring.

    ``_next`` weights apply to the player who makes the next ring move, ``_other`` to the other.
    """

    ring: int = 1000
    race: int = 84
    race_pool: int = 12
    tempo: int = 42
    marker: int = 74
    mobility: int = -20
    contact: int = 50
    centre3: int = 2
    centre2: int = 75
    centre1: int = -29
    two_next: int = -18
    two_other: int = -28
    three_next: int = -10
    three_other: int = -6
    three_mixed_next: int = 14
    three_mixed_other: int = 3
    four_next: int = -5
    four_other: int = -33
    four_flip_next: int = 17
    four_flip_other: int = 99
    threat_next: int = 299
    threat_other: int = 297
    threat_win_next: int = 3811
    threat_win_other: int = 874


STANDARD_WEIGHTS = Weights()
BLITZ_WEIGHTS = STANDARD_WEIGHTS
PLACEMENT_WEIGHTS = Weights(*[0] * len(Weights._fields))._replace(
    race_pool=STANDARD_WEIGHTS.race_pool, mobility=4, centre3=21, centre2=20, centre1=8
)
"""In placement only the rings' mobility and centrality count: there is nothing else yet."""

# ---------------------------------------------------------------------------------------------
# The lattice layout: point (q, r) at bit 9q + r - 2 (0..98). Column-major order (the rules
# engine's) already has this form inside each column, and the offsets of the columns d to h
# agree, so seven masked shifts convert a bitboard. Several boards travel in one int, one copy
# every STRIDE bits. STRIDE leaves 41 spare bits above each copy: shifting a copy down by up to
# four steps of 10 drops its low bits into the spare bits of the copy below, never onto a
# window start, and every result is masked with the window starts.

STRIDE = 140
S2 = 2 * STRIDE
S3 = 3 * STRIDE
S4 = 4 * STRIDE
S6 = 6 * STRIDE
S8 = 8 * STRIDE
S10 = 10 * STRIDE
_N_COPIES = 6


def _lattice(p: int) -> int:
    q, r = COORDS[p]
    return 9 * q + r - 2


LATTICE = tuple(_lattice(p) for p in range(N_POINTS))


def _hex_distance(p: int) -> int:
    """Steps from the centre f6."""
    q, r = COORDS[p]
    return max(abs(q - 5), abs(r - 6), abs(q - r + 1))


def _replicate(mask: int, copies: int = _N_COPIES) -> int:
    return sum(mask << (k * STRIDE) for k in range(copies))


def _conversion_groups() -> tuple[tuple[int, int], ...]:
    groups: dict[int, int] = {}
    for p in range(N_POINTS):
        shift = LATTICE[p] - p
        groups[shift] = groups.get(shift, 0) | BIT[p]
    return tuple(sorted((shift, _replicate(mask)) for shift, mask in groups.items()))


_GROUPS = _conversion_groups()
assert [g[0] for g in _GROUPS] == [0, 4, 6, 7, 8, 10, 14], _GROUPS
G0, G4, G6, G7, G8, G10, G14 = (g[1] for g in _GROUPS)


def to_lattice(x: int) -> int:
    """A column-major bitboard (or several packed every STRIDE bits) in the lattice layout."""
    return (
        (x & G0)
        | (x & G4) << 4
        | (x & G6) << 6
        | (x & G7) << 7
        | (x & G8) << 8
        | (x & G10) << 10
        | (x & G14) << 14
    )


LOW1 = (1 << STRIDE) - 1
"""The first copy (White's)."""
LOW2 = (1 << S2) - 1
"""The first two copies (White's and Black's)."""
WHITE6 = LOW1 | LOW1 << S2 | LOW1 << S4
"""The White copies of the six-copy window layout (one White and one Black copy per axis)."""
WHITE12 = WHITE6 | WHITE6 << (6 * STRIDE)
"""The White copies of twelve (six directions, two colours)."""


def _window_starts() -> tuple[dict[int, int], dict[int, tuple[int, ...]]]:
    starts = {1: 0, 9: 0, 10: 0}
    windows: dict[int, list[int]] = {1: [-1] * STRIDE, 9: [-1] * STRIDE, 10: [-1] * STRIDE}
    for w, points in enumerate(WINDOW_POINTS):
        first = LATTICE[points[0]]
        step = LATTICE[points[1]] - first
        assert all(LATTICE[p] == first + i * step for i, p in enumerate(points))
        starts[step] |= 1 << first
        windows[step][first] = w
    return starts, {k: tuple(v) for k, v in windows.items()}


_STARTS, _WINDOW_AT_START = _window_starts()
# Window starts of the six-copy layout: columns (step 1) in copies 0-1, diagonals (step 10) in
# copies 2-3, rows (step 9) in copies 4-5.
STARTS6 = (
    _replicate(_STARTS[1], 2) | _replicate(_STARTS[10], 2) << S2 | _replicate(_STARTS[9], 2) << S4
)
WIN1, WIN9, WIN10 = _WINDOW_AT_START[1], _WINDOW_AT_START[9], _WINDOW_AT_START[10]
ST1_1, ST9_1, ST10_1 = _STARTS[1], _STARTS[9], _STARTS[10]


def _neighbour_sources() -> tuple[tuple[int, int], ...]:
    """Per direction: (lattice step, the points that have a neighbour that way, 2 copies)."""
    coords = set(COORDS)
    out = []
    for dq, dr in ((0, 1), (0, -1), (1, 1), (-1, -1), (1, 0), (-1, 0)):
        mask = 0
        for p in range(N_POINTS):
            q, r = COORDS[p]
            if (q + dq, r + dr) in coords:
                mask |= 1 << LATTICE[p]
        out.append((9 * dq + dr, _replicate(mask, 2)))
    return tuple(out)


_NEIGHBOUR_SOURCES = _neighbour_sources()
(NS_UP, NS_DOWN, NS_UR, NS_DL, NS_DR, NS_UL) = (m for _, m in _NEIGHBOUR_SOURCES)
assert [s for s, _ in _NEIGHBOUR_SOURCES] == [1, -1, 10, -10, 9, -9]


def _centre_masks() -> tuple[int, int, int]:
    """Column-major masks of the points at hex distance <= 3, 2, 1 from f6."""
    masks = [0, 0, 0]
    for p in range(N_POINTS):
        dist = _hex_distance(p)
        for i, limit in enumerate((3, 2, 1)):
            if dist <= limit:
                masks[i] |= BIT[p]
    return masks[0], masks[1], masks[2]


C3, C2, C1 = _centre_masks()
FULL = (1 << N_POINTS) - 1

# Direction (index into RAYS[o]) from o towards d when both are on one line, else -1; and the
# axis (0 column, 1 diagonal, 2 row) of each direction index of RAYS.
_DIR_TO = tuple(
    tuple(next((i for i, ray in enumerate(RAYS[o]) if d in ray), -1) for d in range(N_POINTS))
    for o in range(N_POINTS)
)
_AXIS_OF_DIR = (0, 0, 1, 1, 2, 2)

# Placements are tried from the centre out; ring removals from the edge in. Indexed by the move
# (a placement is the point; a ring removal carries the point in its low bits).
_PLACEMENT_RANK = tuple(_hex_distance(p) for p in range(N_POINTS))
_REMOVAL_RANK = tuple(-_hex_distance(p) for p in range(N_POINTS))
_POINT_MASK = (1 << KIND_SHIFT) - 1

LIMIT = MAX_EVAL - 1
_CACHE_SIZE = 1 << 17
_PHASE_RING_MOVE = ("m", "n")
_REMOVAL = {"x": 0, "X": 1, "r": 2, "R": 3}


class Terms(NamedTuple):
    """The raw counts behind the evaluation, per colour (``_w`` White, ``_b`` Black)."""

    removed_w: int
    removed_b: int
    next_mover: int
    pool: int
    target: int
    markers_w: int
    markers_b: int
    mobility_w: int
    mobility_b: int
    contact_w: int
    contact_b: int
    centre3_w: int
    centre3_b: int
    centre2_w: int
    centre2_b: int
    centre1_w: int
    centre1_b: int
    two_w: int
    two_b: int
    three_w: int
    three_b: int
    three_mixed_w: int
    three_mixed_b: int
    four_w: int
    four_b: int
    four_flip_w: int
    four_flip_b: int
    threat_w: int
    threat_b: int


def terms(s: YinshState) -> Terms:
    """Count every feature of the position for both colours (see the module docstring)."""
    return Terms(*_counts(s))


def _removals(s: YinshState) -> tuple[int, int, int]:
    """Rings removed by White and by Black, counting the rows and rings about to be removed,
    and the player who makes the next ring move."""
    rem_w, rem_b = s.removed()
    phase = s.phase()
    side = s.to_move()
    removal = _REMOVAL.get(phase)
    if removal is None:
        return rem_w, rem_b, side
    rem_w += _disjoint_rows(s.pending_rows(0))
    rem_b += _disjoint_rows(s.pending_rows(1))
    if removal >= 2:  # a ring of the side to act goes now
        if side:
            rem_b += 1
        else:
            rem_w += 1
    # the next ring move is the opponent's after x and r, the side's own after X and R
    return rem_w, rem_b, side ^ 1 if removal in (0, 2) else side


def _counts_native(s: YinshState) -> tuple[int, ...]:
    """``_counts_python``, the board counts done by ``bots/eval/_yinsh_native.c``."""
    wm = s.markers_mask(0)
    bm = s.markers_mask(1)
    wr = s.rings_mask(0)
    br = s.rings_mask(1)
    assert _native is not None
    board = _native.counts(wm, bm, wr, br)
    return (
        *_removals(s),
        s.pool(),
        s.game.target,
        wm.bit_count(),
        bm.bit_count(),
        *board[:4],
        (wr & C3).bit_count(),
        (br & C3).bit_count(),
        (wr & C2).bit_count(),
        (br & C2).bit_count(),
        (wr & C1).bit_count(),
        (br & C1).bit_count(),
        *board[4:],
    )


def _counts_python(s: YinshState) -> tuple[int, ...]:
    """The fields of ``Terms`` as a plain tuple (a NamedTuple costs a Python call to build):
    the reference of the native counts."""
    wm = s.markers_mask(0)
    bm = s.markers_mask(1)
    wr = s.rings_mask(0)
    br = s.rings_mask(1)
    rem_w, rem_b, next_mover = _removals(s)

    # Pack White markers, Black markers, White rings, Black rings and the empty points.
    empty = FULL ^ (wm | bm | wr | br)
    x = to_lattice(wm | bm << STRIDE | wr << S2 | br << S3 | empty << S4)
    q = (x >> S2) & LOW2

    m = x & LOW2
    mob_w, mob_b, contact_w, contact_b = _ring_neighbours(q, m, x >> S4)

    # Windows. One White and one Black copy per axis: columns (step 1), diagonals (10), rows (9).
    md = m << S2
    mr = m << S4
    m6 = m | md | mr
    x1 = m >> 1 | md >> 10 | mr >> 9
    x2 = m >> 2 | md >> 20 | mr >> 18
    x3 = m >> 3 | md >> 30 | mr >> 27
    x4 = m >> 4 | md >> 40 | mr >> 36
    # A bit-sliced adder: the number of own markers in each window, as bits b2 b1 b0.
    t = m6 ^ x1
    s1 = t ^ x2
    c1 = (m6 & x1) | (t & x2)
    t = s1 ^ x3
    b0 = (t ^ x4) & STARTS6
    c2 = (s1 & x3) | (t & x4)
    b1 = (c1 ^ c2) & STARTS6
    b2 = c1 & c2 & STARTS6
    own = m6 | x1 | x2 | x3 | x4
    opp = (own >> STRIDE & WHITE6) | (own & WHITE6) << STRIDE  # the other colour's copy
    k2 = b1 & ~b0 & ~opp
    k3 = b1 & b0
    k3o = k3 & ~opp
    k3x = k3 & opp
    k4 = b2 & ~b0
    k4f = k4 & opp
    k4o = k4 ^ k4f
    t1_w, t1_b = _ring_threats(k4o, m | q) if k4o else (0, 0)
    k2_w = (k2 & WHITE6).bit_count()
    k3o_w = (k3o & WHITE6).bit_count()
    k3x_w = (k3x & WHITE6).bit_count()
    k4o_w = (k4o & WHITE6).bit_count()
    k4f_w = (k4f & WHITE6).bit_count()
    return (
        rem_w,
        rem_b,
        next_mover,
        s.pool(),
        s.game.target,
        wm.bit_count(),
        bm.bit_count(),
        mob_w,
        mob_b,
        contact_w,
        contact_b,
        (wr & C3).bit_count(),
        (br & C3).bit_count(),
        (wr & C2).bit_count(),
        (br & C2).bit_count(),
        (wr & C1).bit_count(),
        (br & C1).bit_count(),
        k2_w,
        k2.bit_count() - k2_w,
        k3o_w,
        k3o.bit_count() - k3o_w,
        k3x_w,
        k3x.bit_count() - k3x_w,
        k4o_w,
        k4o.bit_count() - k4o_w,
        k4f_w,
        k4f.bit_count() - k4f_w,
        t1_w,
        t1_b,
    )


def _ring_neighbours(q: int, m: int, e1: int) -> tuple[int, int, int, int]:
    """The neighbours of the rings ``q`` (two copies, lattice layout), per direction: empty
    ones (mobility, counted once per point) and markers ``m`` (contact, counted per ring and
    direction: a ring next to markers can jump them); ``e1`` holds the empty points. White's
    mobility and Black's, then White's contact and Black's."""
    n_up = (q & NS_UP) << 1
    n_down = (q & NS_DOWN) >> 1
    n_ur = (q & NS_UR) << 10
    n_dl = (q & NS_DL) >> 10
    n_dr = (q & NS_DR) << 9
    n_ul = (q & NS_UL) >> 9
    adj = (n_up | n_down | n_ur | n_dl | n_dr | n_ul) & (e1 | e1 << STRIDE)
    mob_b = (adj >> STRIDE).bit_count()
    am = (m | m >> STRIDE) & LOW1
    am |= am << STRIDE
    contact = (
        (n_up & am)
        | (n_down & am) << S2
        | (n_ur & am) << S4
        | (n_dl & am) << S6
        | (n_dr & am) << S8
        | (n_ul & am) << S10
    )
    contact_w = (contact & WHITE12).bit_count()
    return adj.bit_count() - mob_b, mob_b, contact_w, contact.bit_count() - contact_w


def _ring_threats(k4o: int, u: int) -> tuple[int, int]:
    """Of the windows ``k4o`` with four own markers and no opponent's marker, those whose
    fifth point is an own ring (``u``: markers and rings, two copies): the ring leaving
    completes the row. White's count and Black's."""
    ud = u << S2
    ur = u << S4
    t1 = (
        k4o
        & (u | ud | ur)
        & (u >> 1 | ud >> 10 | ur >> 9)
        & (u >> 2 | ud >> 20 | ur >> 18)
        & (u >> 3 | ud >> 30 | ur >> 27)
        & (u >> 4 | ud >> 40 | ur >> 36)
    )
    t1_w = (t1 & WHITE6).bit_count()
    return t1_w, t1.bit_count() - t1_w


def combine(t: tuple[int, ...], w: Weights) -> int:
    """The value for White of the counts ``t`` (``Terms`` or the same plain tuple) under the
    weights ``w`` (not clamped)."""
    (
        rem_w,
        rem_b,
        next_mover,
        pool,
        target,
        mk_w,
        mk_b,
        mob_w,
        mob_b,
        ct_w,
        ct_b,
        c3_w,
        c3_b,
        c2_w,
        c2_b,
        c1_w,
        c1_b,
        k2_w,
        k2_b,
        k3_w,
        k3_b,
        k3x_w,
        k3x_b,
        k4_w,
        k4_b,
        k4f_w,
        k4f_b,
        t1_w,
        t1_b,
    ) = t
    (
        ring,
        race,
        race_pool,
        tempo,
        marker,
        mobility,
        contact,
        centre3,
        centre2,
        centre1,
        two_n,
        two_o,
        three_n,
        three_o,
        three_x_n,
        three_x_o,
        four_n,
        four_o,
        four_f_n,
        four_f_o,
        threat_n,
        threat_o,
        threat_win_n,
        threat_win_o,
    ) = w
    if pool < race_pool:
        ring += race * (race_pool - pool)
    value = (
        ring * (rem_w - rem_b)
        + marker * (mk_w - mk_b)
        + mobility * (mob_w - mob_b)
        + contact * (ct_w - ct_b)
        + centre3 * (c3_w - c3_b)
        + centre2 * (c2_w - c2_b)
        + centre1 * (c1_w - c1_b)
    )
    # Window terms weigh differently for the player who makes the next ring move (he can use
    # his threats at once) and for the other one (he must survive a move first).
    if next_mover:
        rel = (
            tempo
            + two_n * k2_b
            - two_o * k2_w
            + three_n * k3_b
            - three_o * k3_w
            + three_x_n * k3x_b
            - three_x_o * k3x_w
            + four_n * k4_b
            - four_o * k4_w
            + four_f_n * k4f_b
            - four_f_o * k4f_w
        )
        if t1_b:
            rel += (threat_win_n if rem_b == target - 1 else threat_n) * t1_b
        if t1_w:
            rel -= (threat_win_o if rem_w == target - 1 else threat_o) * t1_w
        return value - rel
    rel = (
        tempo
        + two_n * k2_w
        - two_o * k2_b
        + three_n * k3_w
        - three_o * k3_b
        + three_x_n * k3x_w
        - three_x_o * k3x_b
        + four_n * k4_w
        - four_o * k4_b
        + four_f_n * k4f_w
        - four_f_o * k4f_b
    )
    if t1_w:
        rel += (threat_win_n if rem_w == target - 1 else threat_n) * t1_w
    if t1_b:
        rel -= (threat_win_o if rem_b == target - 1 else threat_o) * t1_b
    return value + rel


class YinshEvaluator(Evaluator):
    """Yinsh evaluation; see the module docstring for the features and their weights.

    The weight sets can be replaced to experiment: ``weights`` for ring moves and removals in
    standard Yinsh, ``blitz_weights`` for blitz (by default the same fitted set) and
    ``placement_weights`` for the placement phase of both.
    """

    def __init__(
        self,
        weights: Weights = STANDARD_WEIGHTS,
        blitz_weights: Weights = BLITZ_WEIGHTS,
        placement_weights: Weights = PLACEMENT_WEIGHTS,
    ) -> None:
        self.weights = weights
        self.blitz_weights = blitz_weights
        self.placement_weights = placement_weights
        self._cache: dict[int, int] = {}
        self._blitz_cache: dict[int, int] = {}  # keys do not tell the variants apart
        self._rows_cache: dict[int, list[Move]] = {}

    @classmethod
    def tuned(cls, game: str, values: Mapping[str, int]) -> YinshEvaluator:
        """The ring-move options set the variant's own set (``weights`` in ``yinsh``,
        ``blitz_weights`` in ``yinsh+blitz``), the placement options ``placement_weights``."""
        placement = tuning.apply(PLACEMENT_WEIGHTS, tuning.YINSH_PLACEMENT, values)
        if game == "yinsh+blitz":
            blitz = tuning.apply(BLITZ_WEIGHTS, tuning.YINSH_PLAY, values)
            return cls(blitz_weights=blitz, placement_weights=placement)
        weights = tuning.apply(STANDARD_WEIGHTS, tuning.YINSH_PLAY, values)
        return cls(weights, placement_weights=placement)

    # -- the evaluation -------------------------------------------------------------------------

    def evaluate(self, state: State) -> int:
        s = state
        assert isinstance(s, YinshState)
        key = s.key()
        blitz = s.game.target == 1
        cache = self._blitz_cache if blitz else self._cache
        value = cache.get(key)
        if value is None:
            if s.phase() == "p":
                weights = self.placement_weights
            else:
                weights = self.blitz_weights if blitz else self.weights
            value = combine(_counts(s), weights)
            if value > LIMIT:
                value = LIMIT
            elif value < -LIMIT:
                value = -LIMIT
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[key] = value
        return -value if s.to_move() else value

    # -- advice to the search -------------------------------------------------------------------

    def is_quiet(self, state: State) -> bool:
        # A row or a ring waiting to be removed: the removals are forced, play them out.
        return state.phase() not in _REMOVAL

    def noisy_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """The ring moves that complete a row of the mover (none outside phases m and n)."""
        if state.phase() not in _PHASE_RING_MOVE:
            return []
        assert isinstance(state, YinshState)
        found = self._row_moves(state)
        if not found:
            return []
        return [m for m in found if m in moves]

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """Row-completing ring moves first; placements from the centre out; ring removals from
        the edge in (an edge ring is usually the cheapest to give up)."""
        phase = state.phase()
        if phase in _PHASE_RING_MOVE:
            assert isinstance(state, YinshState)
            found = self._row_moves(state)
            if not found:
                return list(moves)
            first = [m for m in found if m in moves]
            return first + [m for m in moves if m not in first]
        if phase == "p":
            return sorted(moves, key=_PLACEMENT_RANK.__getitem__)
        if phase in ("r", "R"):
            return sorted(moves, key=lambda m: _REMOVAL_RANK[m & _POINT_MASK])
        return list(moves)

    def _row_moves(self, s: YinshState) -> list[Move]:
        # Iterative deepening asks again for the same positions (a leaf's noisy moves, then
        # its ordering one iteration later): keep the answers.
        key = s.key()
        found = self._rows_cache.get(key)
        if found is None:
            found = row_moves(s)
            if len(self._rows_cache) >= _CACHE_SIZE:
                self._rows_cache.clear()
            self._rows_cache[key] = found
        return found


def _disjoint_rows(rows: tuple[int, ...]) -> int:
    """How many of the pending rows can be removed one after the other (a greedy count, in the
    order of the windows: the pending rows of one position may be listed in another order when
    it is reached by other moves, and its value, which the evaluation caches by position, must
    not depend on that)."""
    if not rows:
        return 0
    used = 0
    count = 0
    for w in sorted(rows):
        mask = WINDOW_MASK[w]
        if not used & mask:
            used |= mask
            count += 1
    return count


# ---------------------------------------------------------------------------------------------
# Row-completing ring moves
#
# A ring move from o to t puts a marker of the mover's colour on o and flips the markers F
# strictly between o and t, so the mover's markers become (mine ^ F) | o. A window becomes a row
# only if every point of it is then the mover's marker, which needs (no row stands before a
# ring move):
#
# 1. four own markers and an own ring on the fifth point, the ring moving away (not across the
#    window);
# 2. four own markers and an opponent's marker d, flipped by a jump across d on another line;
# 3. an own ring in the window, opponent's markers after it in the direction of a jump along
#    the window and own markers behind it.
#
# Every such window is covered by markers and own rings, with at most one own ring. Those
# windows are found with the lattice bitboards; then only the moves of the ring in the window,
# or the jumps over d, are generated and checked exactly.


def row_moves(s: YinshState) -> list[Move]:
    """The ring moves of the side to act that complete a row of its colour (phase m or n)."""
    me = s.to_move()
    mine = s.markers_mask(me)
    allm = mine | s.markers_mask(me ^ 1)
    my_rings = s.rings_mask(me)
    y = to_lattice(allm | my_rings)
    c1 = y & y >> 1 & y >> 2 & y >> 3 & y >> 4 & ST1_1
    c10 = y & y >> 10 & y >> 20 & y >> 30 & y >> 40 & ST10_1
    c9 = y & y >> 9 & y >> 18 & y >> 27 & y >> 36 & ST9_1
    if not (c1 | c10 | c9):
        return []
    all_rings = my_rings | s.rings_mask(me ^ 1)
    found: list[Move] = []
    for bits, table, axis in ((c1, WIN1, 0), (c10, WIN10, 1), (c9, WIN9, 2)):
        while bits:
            low = bits & -bits
            bits ^= low
            wmask = WINDOW_MASK[table[low.bit_length() - 1]]
            ring_bits = my_rings & wmask
            if not ring_bits:
                if (mine & wmask).bit_count() == 4:
                    _jumps_across(my_rings, wmask, axis, (mine, allm, all_rings), found)
            elif not ring_bits & (ring_bits - 1):  # two own rings: one move cannot clear both
                o = ring_bits.bit_length() - 1
                if (mine & wmask).bit_count() == 4:
                    _moves_away(o, wmask, axis, (mine, allm, all_rings), found)
                else:
                    _jumps_along(o, wmask, axis, (mine, allm, all_rings), found)
    return found


_Board: TypeAlias = tuple[int, int, int]
"""The markers of the side to act, all markers and all rings."""


def _moves_away(o: int, wmask: int, axis: int, board: _Board, found: list[Move]) -> None:
    """Case 1: every move of the ring on o completes the row of the window ``wmask``, except
    the moves along the window into it (they flip its markers)."""
    _, allm, all_rings = board
    base = RING_MOVE | o << 7
    rays = RAYS[o]
    for direction in range(6):
        ray = rays[direction]
        if not ray or (_AXIS_OF_DIR[direction] == axis and wmask >> ray[0] & 1):
            continue
        jumped = False
        for t in ray:
            if all_rings >> t & 1:
                break
            if allm >> t & 1:
                jumped = True
                continue
            if base | t not in found:
                found.append(base | t)
            if jumped:
                break


def _jumps_along(o: int, wmask: int, axis: int, board: _Board, found: list[Move]) -> None:
    """Case 3: a jump of the ring on o along the window ``wmask`` over the opponent's markers
    next to it."""
    mine, allm, all_rings = board
    base = RING_MOVE | o << 7
    rays = RAYS[o]
    for direction in (2 * axis, 2 * axis + 1):
        ray = rays[direction]
        if not ray or not wmask >> ray[0] & 1 or mine >> ray[0] & 1:
            continue
        target = _jump_over(o, direction, ray[0], all_rings, allm)
        if target < 0:
            continue
        flipped = BETWEEN[o << 7 | target] & allm
        if ((mine ^ flipped) | BIT[o]) & wmask == wmask and base | target not in found:
            found.append(base | target)


def _jumps_across(my_rings: int, wmask: int, axis: int, board: _Board, found: list[Move]) -> None:
    """Case 2: a jump of one of ``my_rings`` across the opponent's marker d in the window
    ``wmask``, on another line."""
    mine, allm, all_rings = board
    d = (wmask & ~mine).bit_length() - 1
    rings = my_rings
    while rings:
        low_r = rings & -rings
        rings ^= low_r
        o = low_r.bit_length() - 1
        direction = _DIR_TO[o][d]
        if direction < 0 or _AXIS_OF_DIR[direction] == axis:
            continue
        target = _jump_over(o, direction, d, all_rings, allm)
        if target < 0:
            continue
        move = RING_MOVE | o << 7 | target
        if move not in found:
            found.append(move)


def _jump_over(o: int, direction: int, d: int, all_rings: int, allm: int) -> int:
    """The landing point of the move of the ring on o in ``direction`` that jumps the marker on
    d, or -1 when no legal move does."""
    jumped = False
    for t in RAYS[o][direction]:
        if all_rings >> t & 1:
            return -1
        if allm >> t & 1:
            jumped = True
            continue
        if jumped:
            return t if BETWEEN[o << 7 | t] >> d & 1 else -1
    return -1


# ---------------------------------------------------------------------------------------------
# The native board counts


class _Native(Protocol):
    """What ``bots/eval/_yinsh_native.c`` offers."""

    def init(self, rays: object, windows: object, /) -> None: ...

    def counts(self, wm: int, bm: int, wr: int, br: int, /) -> tuple[int, ...]: ...


def _load_native() -> _Native | None:
    """The C board counts, given the rules' rays and windows; None when they are not built,
    or ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("bots.eval._yinsh_native")
    if module is None:
        return None
    native = cast(_Native, module)
    native.init(RAYS, WINDOW_POINTS)
    return native


_native = _load_native()
_counts = _counts_python if _native is None else _counts_native
"""The fields of ``Terms`` as a plain tuple, natively where built."""

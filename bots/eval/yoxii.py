"""Yoxii evaluation: exact one-turn closures, an endgame solver, and a totem-centred heuristic.

Scale: one point of score around the Totem is worth 100. Scores are from the side to act
(``state.to_move()``), called "me" below; "opp" is the other player.

How a game ends decides what matters. The game stops only when the player to act cannot move the
Totem, and the Totem's region then scores. A player can only be shut in by the opponent's last
placement: the opponent moves the Totem to a square with exactly one empty neighbour (always
the square the Totem just left, after a step), must fill it, and the game is over unless the
player shut in can jump one of their own runs to an empty square. So the evaluation is built in
three layers, cheapest first:

1. **Exact one-turn results** (proven, scored ``±(90_000 + 100 * margin + 10 * count
   difference)``, 0 for a draw; always within ``MAX_EVAL``):

   * phase t: for every Totem destination of mine, count the empty neighbours it will have (the
     square the Totem leaves included). One empty neighbour means my placement there is forced
     and closes the region unless the opponent can jump out; none (after a jump) means I place
     anywhere, and the region closes if the opponent has no jump, or exactly one jump landing,
     which I can fill. A closure is scored with my highest value in stock on the last square.
     The best winning closure is returned (the best, not the first found, so that the score
     does not depend on the order of the squares); if every destination closes, the best
     closure is the exact value; otherwise it is a floor under the heuristic (I can always
     take it).
   * phase p: with one empty neighbour left my placement is forced: if the opponent then
     cannot jump out, the result is exact. With none, I place anywhere: if the opponent has no
     jump the game ends whatever I do; with one landing square I may block it, so the closure
     is a floor.

2. **Endgame solver** ("solve exactly when few squares remain"): with at most
   ``SOLVE_EMPTIES`` (7) empty squares (8 in phase p, whose Totem move is already made), a
   private alpha-beta over whole turns (Totem move and placement as one step, each distinct
   stock value once) on bare bitboards finds the exact result and margin, within a cap of
   ``SOLVE_NODES`` (3,000) nodes (about 1.5 us a node, so ~5 ms at worst). Its full window
   maximises ``20 * sum difference + count difference``, the order of rules E5, so the sign is
   the result and the score is order-independent (a reflected position scores the same). The
   results, and the positions it could not finish, are cached by position key in a bounded
   dictionary, so a search that meets an endgame again pays once; past the cap the heuristic
   answers. On random games at 7 empties the median tree is 29 nodes, 9 in 10 under 1,000.
   The game mostly ends while many squares are still empty (the Totem is shut in locally), so
   the solver only covers long games; the exact one-turn closures above do the work earlier.

3. **Heuristic** (everything else), with these features and weights:

   ==============================  ======  ==================================================
   feature                         weight  why
   ==============================  ======  ==================================================
   value sum, region of the Totem  100     the score if the game ended here: the region of
   (my sum minus the opponent's)           the Totem is where the game is decided, and the
                                           Totem moves one step per turn, so it stays close
   value sum, squares at king      30      the regions of the squares the Totem can reach next
   distance 2 from the Totem               turn overlap this ring: a likely future region
   value sum, distance 3           10      the same, one turn further, less certain
   piece count, region             20      the tie-break of the rules (count wins on equal
                                           sums), and each own neighbour is a run start that
                                           only I can jump: an escape from being shut in
   Totem mobility, mine minus the  15      the number of destinations from the Totem's square
   opponent's                              for each side. Only own pieces can be jumped, so the
                                           same square gives each side different moves; few
                                           moves means being forced into bad squares or shut
                                           in, many moves means choice and escapes
   stock left, per value 1/2/3/4   0/5/    a piece still in stock is the value a closure can
                                   10/20   add later: a 4 kept for the last placement is what
                                           decides close regions. Small, so that placing a 4
                                           into the region still pays (400 > 20)
   tempo, side to act: before its  320/6   a side with its whole turn ahead (a Totem move to
   Totem move / before its                 its best square, then a piece) is worth about
   placement                               three points more than the heuristic says; before
                                           its placement, with the Totem moved, about nothing.
                                           Without it the value swings by some 350 from a
                                           Totem-move position to a placement position,
                                           and a search comparing values a decision apart
                                           (late move reductions, the table, the aspiration
                                           window) compares unlike with unlike
   ==============================  ======  ==================================================

   Each weight is an option of alphabeta, ``EvalYoxii...`` (``bots.eval.tuning``), for a tuner
   to move. The heuristic is clamped to ±50,000, well below the proven scores. Self-play at
   2,000 and 8,000 nodes a move (120-200 games each) found no variation clearly better:
   without the outer rings, mobility 0 or 40, count 0 or 50, stock weights 0 or doubled, or a
   region weight growing with the region's fill all scored within the noise or worse; the
   tactics of layers 1-2 and the search decide most games. The tempo terms are the exception:
   ``benchmarks/tempo.py`` measured the swing (a position's best child against the position,
   static values, over 144 games at 5+0.05: +325 from a Totem-move position, +370 from a
   placement position, closed by tempi of 347 and 23), ``enginesrv tune`` moved both from 0
   to 320 and 6 in 800 games at 5+0.05, and SPRT accepted them (benchmarks/README.md).

Speed: 4.7 us per call over 9,000 middle-game positions of random games (plies 10-44) on an
idle core, 7 us with the machine loaded; alphabeta searches about 110,000-170,000 nodes/s on
the bench position rand-04. Value sums use two bit planes of the piece values (built from the
packed value field with two 64K-entry tables, 16 bits at a time), so a region sum is three
popcounts. ``order_moves`` and ``noisy_moves`` keep the defaults: there are no captures, a
placement's effect shows only through the closures the evaluation already scores exactly, and
the search's killer and history tables order the few moves well.

Strength (scratch matches from the start, colours alternated, 100,000 nodes a move, about one
second): 19/20 against greedy, 20/20 against random.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final, NamedTuple, Protocol, cast

from bots.eval import MAX_EVAL, Evaluator, tuning
from games import State
from games.native import native_module
from games.yoxii import (
    COORDS,
    FULL_MASK,
    N_SQUARES,
    NEIGHBOURS_MASK,
    RAYS,
    YoxiiState,
    totem_destinations,
)

SOLVED: Final = 90_000
"""Base of a proven score; margin and count difference are added on top (at most ~3,300)."""
HEURISTIC_CAP: Final = 50_000
SOLVE_EMPTIES: Final = 7
"""The endgame solver runs when at most this many squares are empty."""
SOLVE_NODES: Final = 3_000
"""Node cap of one solver run (about 1.5 us a node)."""
_WIDE: Final = 1_000
"""Beyond any solver value (``20 * 32 + 8``)."""
CACHE_SIZE: Final = 50_000
"""Entries of the solver's result cache before it is emptied."""

_STOCK_BITS: Final = 3
"""Bits per value in the packed stock, as in ``games.yoxii`` (12 bits per player)."""
_PLAYER_STOCK: Final = (1 << 4 * _STOCK_BITS) - 1


class Weights(NamedTuple):
    """The heuristic weights (see the module docstring); tuning code passes other ones
    (``bots.eval.tuning`` makes them from a bot's options, ``EvalYoxii...``)."""

    ring1: int = 100
    ring2: int = 30
    ring3: int = 10
    count1: int = 20
    mobility: int = 15
    stock: tuple[int, int, int, int] = (0, 5, 10, 20)
    tempo_totem: int = 320
    tempo_place: int = 6


# ---------------------------------------------------------------------------------------------
# Tables built at import


def _king_ring(t: int, k: int) -> int:
    """The squares at king distance exactly ``k`` from ``t``."""
    ft, rt = COORDS[t]
    mask = 0
    for s, (f, r) in enumerate(COORDS):
        if max(abs(f - ft), abs(r - rt)) == k:
            mask |= 1 << s
    return mask


_RING2: Final = tuple(_king_ring(t, 2) for t in range(N_SQUARES))
_RING3: Final = tuple(_king_ring(t, 3) for t in range(N_SQUARES))


def _plane_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For a 16-bit chunk of the value field (8 squares, ``value - 1`` in two bits each): the
    8-bit masks of the squares whose low bit and whose high bit is set."""
    lows: list[int] = []
    highs: list[int] = []
    for chunk in range(1 << 16):
        lo = hi = 0
        for i in range(8):
            v = chunk >> 2 * i & 3
            lo |= (v & 1) << i
            hi |= (v >> 1) << i
        lows.append(lo)
        highs.append(hi)
    return tuple(lows), tuple(highs)


_LO16, _HI16 = _plane_tables()

# Per packed stock of one player (12 bits, 3 per value):
_MAX_VALUE: Final = tuple(
    max((v + 1 for v in range(4) if st >> _STOCK_BITS * v & 7), default=0)
    for st in range(_PLAYER_STOCK + 1)
)
"""the highest value still in stock (0 when empty)."""
_AVAILABLE: Final = tuple(
    tuple(
        (1 << _STOCK_BITS * v, v & 1, v >> 1) for v in range(3, -1, -1) if st >> _STOCK_BITS * v & 7
    )
    for st in range(_PLAYER_STOCK + 1)
)
"""For each value in stock, highest first: the decrement of the packed stock, and the low and
high bit of ``value - 1`` (the value planes of a placed piece)."""


@functools.lru_cache(maxsize=16)
def _stock_table(weights: tuple[int, ...]) -> tuple[int, ...]:
    """Per packed stock of one player: the stock's worth under ``weights`` (built once per set
    of weights, in about 0.2 ms: every new evaluator, hence every new bot, would otherwise pay
    it; the last few sets are kept, so that a tuning run, which tries new weights game after
    game, does not keep them all). The count of value 1 is the lowest field of a packed stock,
    so it varies fastest."""
    per_value = [[weight * count for count in range(8)] for weight in weights]
    ones, twos, threes, fours = per_value
    return tuple(d + c + b + a for d in fours for c in threes for b in twos for a in ones)


# ---------------------------------------------------------------------------------------------
# Reading the state


def _raw(state: State) -> tuple[int, int, int, int, int, int, int]:
    """PRIVATE ACCESS, the only one in this module: the fields of a ``YoxiiState``.

    The public accessors give the same facts (``pieces_mask``, ``totem``, ``value_at`` per
    square, ``stock``, ``phase``), but ``value_at`` is a call per square and ``stock`` builds
    tuples; reading the packed fields once is what keeps an evaluation near 5 us. Returns
    ``(white, black, values, totem, stock, side, phase)`` with ``values`` holding ``value - 1``
    in two bits per square, ``stock`` 3 bits per value and 12 per player (Black above), and
    ``phase`` 0 for t, 1 for p.
    """
    s = state
    assert isinstance(s, YoxiiState)
    return s._white, s._black, s._values, s._totem, s._stock, s._side, s._phase


def _planes(values: int) -> tuple[int, int]:
    """The squares whose ``value - 1`` has its low bit set, and its high bit set."""
    lo = (
        _LO16[values & 0xFFFF]
        | _LO16[values >> 16 & 0xFFFF] << 8
        | _LO16[values >> 32 & 0xFFFF] << 16
        | _LO16[values >> 48 & 0xFFFF] << 24
        | _LO16[values >> 64] << 32
    )
    hi = (
        _HI16[values & 0xFFFF]
        | _HI16[values >> 16 & 0xFFFF] << 8
        | _HI16[values >> 32 & 0xFFFF] << 16
        | _HI16[values >> 48 & 0xFFFF] << 24
        | _HI16[values >> 64] << 32
    )
    return lo, hi


def _result(diff: int, cdiff: int) -> int:
    """The proven score of a finished game: sum difference, then count difference (rules E5)."""
    if diff > 0 or (diff == 0 and cdiff > 0):
        return SOLVED + 100 * diff + 10 * cdiff
    if diff == 0 and cdiff == 0:
        return 0
    return -SOLVED + 100 * diff + 10 * cdiff


# ---------------------------------------------------------------------------------------------
# The endgame solver


class _CapReachedError(Exception):
    """The solver used up its node budget."""


class _Solver:
    """Alpha-beta over whole turns on bare bitboards; values ``20 * sum diff + count diff``
    from the side to act, so the sign is the result of rules E5 (win, draw, loss)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.nodes = 0

    def turn(  # noqa: PLR0913, PLR0917  (positional: the recursion is the hot path)
        self,
        me: int,
        me_lo: int,
        me_hi: int,
        opp: int,
        opp_lo: int,
        opp_hi: int,
        t: int,
        st_me: int,
        st_opp: int,
        alpha: int,
        beta: int,
    ) -> int:
        """The value of a phase t position for the side to act (fail-soft)."""
        self.nodes += 1
        if self.nodes > self.cap:
            raise _CapReachedError
        dests = totem_destinations(t, me, opp)
        if not dests:  # rules E1: shut in, the region scores
            r = NEIGHBOURS_MASK[t]
            mine = (r & me).bit_count()
            theirs = (r & opp).bit_count()
            diff = (
                mine
                + (r & me_lo).bit_count()
                + 2 * (r & me_hi).bit_count()
                - theirs
                - (r & opp_lo).bit_count()
                - 2 * (r & opp_hi).bit_count()
            )
            return 20 * diff + mine - theirs
        empty = FULL_MASK ^ (me | opp | 1 << t)
        best = -MAX_EVAL
        while dests:
            low = dests & -dests
            dests ^= low
            # the Totem leaves t (now empty) for d
            empty_d = (empty ^ low) | 1 << t
            value = self.place(
                me,
                me_lo,
                me_hi,
                opp,
                opp_lo,
                opp_hi,
                low.bit_length() - 1,
                empty_d,
                st_me,
                st_opp,
                alpha,
                beta,
            )
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if value >= beta:
                        break
        return best

    def place(  # noqa: PLR0913, PLR0917  (positional: the recursion is the hot path)
        self,
        me: int,
        me_lo: int,
        me_hi: int,
        opp: int,
        opp_lo: int,
        opp_hi: int,
        t: int,
        empty: int,
        st_me: int,
        st_opp: int,
        alpha: int,
        beta: int,
    ) -> int:
        """The value of a phase p position (Totem on ``t``, ``empty`` the empty squares)."""
        targets = NEIGHBOURS_MASK[t] & empty or empty  # rules R5, R6
        best = -MAX_EVAL
        available = _AVAILABLE[st_me]
        while targets:
            sb = targets & -targets
            targets ^= sb
            for dec, lo_bit, hi_bit in available:
                value = -self.turn(
                    opp,
                    opp_lo,
                    opp_hi,
                    me | sb,
                    me_lo | sb * lo_bit,
                    me_hi | sb * hi_bit,
                    t,
                    st_opp,
                    st_me - dec,
                    -beta,
                    -alpha,
                )
                if value > best:
                    best = value
                    if value > alpha:
                        alpha = value
                        if value >= beta:
                            return best
        return best


# ---------------------------------------------------------------------------------------------
# The evaluator


class YoxiiEvaluator(Evaluator):
    """Exact closures, a capped endgame solver, then the totem-centred heuristic."""

    # The value swings between the totem ply and the placement ply. A root window of 200
    # against the default 50: 17/20 at 0.1 s per move (SPRT elo0=0 elo1=30 accepted H1), then
    # 36/60 at 0.2 s; the same change lost in Yinsh (15/40) and made no difference in Yohoho
    # (21/40), so it is Yoxii's alone. With the tempo terms, which took most of that swing
    # out, 50 scored the same as 200 (172-60-168 in 400 games at 0.1 s a move).
    aspiration = 200

    def __init__(self, weights: Weights | None = None, solve_nodes: int = SOLVE_NODES) -> None:
        w = weights if weights is not None else Weights()
        self.weights = w
        self._stock = _stock_table(w.stock)
        self._solver = _Solver(solve_nodes)
        self._cache: dict[int, int | None] = {}
        self._native = _native
        # the C evaluation's own copy of other weights or another node cap (its init took the
        # defaults)
        self._native_weights: object = None
        if _native is not None and (w != Weights() or solve_nodes != SOLVE_NODES):
            self._native_weights = _native.weights(_native_weights(w, solve_nodes), self._stock)

    @classmethod
    def tuned(cls, game: str, values: Mapping[str, int]) -> YoxiiEvaluator:
        del game
        return cls(tuning.apply(Weights(), tuning.YOXII, values))

    def evaluate(self, state: State) -> int:
        if self._native is not None:
            if self._native_weights is None:
                return self._native.evaluate(*_raw(state))
            return self._native.evaluate(*_raw(state), self._native_weights)
        return self.evaluate_python(state)

    def evaluate_python(self, state: State) -> int:  # noqa: C901, PLR0912, PLR0915  (mirrors the C evaluate)
        """The evaluation in Python: the reference the native one is checked against (it
        follows ``evaluate`` of ``_yoxii_native.c`` step for step, and both read best
        whole)."""
        white, black, values, t, stock, side, phase = _raw(state)
        if side:
            me, opp = black, white
            st_me, st_opp = stock >> 4 * _STOCK_BITS, stock & _PLAYER_STOCK
        else:
            me, opp = white, black
            st_me, st_opp = stock & _PLAYER_STOCK, stock >> 4 * _STOCK_BITS
        lo, hi = _planes(values)
        me_lo, me_hi, opp_lo, opp_hi = me & lo, me & hi, opp & lo, opp & hi
        empty = FULL_MASK ^ (me | opp | 1 << t)
        floor = -MAX_EVAL

        if phase == 0:
            # -- my one-turn closures ------------------------------------------------------
            dests = totem_destinations(t, me, opp)
            vmax = _MAX_VALUE[st_me]
            all_close = True
            best = -MAX_EVAL
            after = empty | 1 << t  # the Totem leaves t
            while dests:
                low = dests & -dests
                dests ^= low
                d = low.bit_length() - 1
                nb = NEIGHBOURS_MASK[d]
                left = nb & after
                if left & (left - 1):  # two or more empty neighbours: no closure
                    all_close = False
                    continue
                if left:  # forced placement on the last empty neighbour
                    if totem_destinations(d, opp, me | left):
                        all_close = False
                        continue
                    added, counted = vmax, 1
                else:  # jumped into a full pocket: I place anywhere
                    land = totem_destinations(d, opp, me)
                    if land & (land - 1):
                        all_close = False
                        continue
                    if land:
                        all_close = False  # closing is my choice (I block the landing)
                    added = counted = 0
                mine = (nb & me).bit_count()
                theirs = (nb & opp).bit_count()
                diff = (
                    mine
                    + (nb & me_lo).bit_count()
                    + 2 * (nb & me_hi).bit_count()
                    + added
                    - theirs
                    - (nb & opp_lo).bit_count()
                    - 2 * (nb & opp_hi).bit_count()
                )
                r = _result(diff, mine + counted - theirs)
                if r > best:
                    best = r
            # the best of all closures, not the first winning one: the score must not depend
            # on the order of the squares (a reflected position scores the same)
            if best > 0 or all_close:
                return best
            floor = best
        else:
            # -- my placement: forced closure? ---------------------------------------------
            nb = NEIGHBOURS_MASK[t]
            left = nb & empty
            if not left & (left - 1):
                if left:
                    closes = not totem_destinations(t, opp, me | left)
                    added, counted = _MAX_VALUE[st_me], 1
                    chosen = False
                else:
                    land = totem_destinations(t, opp, me)
                    closes = not land & (land - 1)
                    chosen = bool(land)  # one landing: I may block it, or not
                    added = counted = 0
                if closes:
                    mine = (nb & me).bit_count()
                    theirs = (nb & opp).bit_count()
                    diff = (
                        mine
                        + (nb & me_lo).bit_count()
                        + 2 * (nb & me_hi).bit_count()
                        + added
                        - theirs
                        - (nb & opp_lo).bit_count()
                        - 2 * (nb & opp_hi).bit_count()
                    )
                    r = _result(diff, mine + counted - theirs)
                    if not chosen or r > 0:
                        return r
                    floor = r

        # -- the endgame solver ------------------------------------------------------------
        if empty.bit_count() <= SOLVE_EMPTIES + phase:
            solved = self._solve(
                state.key(),
                me,
                me_lo,
                me_hi,
                opp,
                opp_lo,
                opp_hi,
                t,
                empty,
                st_me,
                st_opp,
                phase,
            )
            if solved is not None:
                return solved

        # -- the heuristic -----------------------------------------------------------------
        w = self.weights
        r1 = NEIGHBOURS_MASK[t]
        r2 = _RING2[t]
        r3 = _RING3[t]
        mine1 = (r1 & me).bit_count()
        theirs1 = (r1 & opp).bit_count()
        h = (
            w.ring1
            * (
                mine1
                + (r1 & me_lo).bit_count()
                + 2 * (r1 & me_hi).bit_count()
                - theirs1
                - (r1 & opp_lo).bit_count()
                - 2 * (r1 & opp_hi).bit_count()
            )
            + w.ring2
            * (
                (r2 & me).bit_count()
                + (r2 & me_lo).bit_count()
                + 2 * (r2 & me_hi).bit_count()
                - (r2 & opp).bit_count()
                - (r2 & opp_lo).bit_count()
                - 2 * (r2 & opp_hi).bit_count()
            )
            + w.ring3
            * (
                (r3 & me).bit_count()
                + (r3 & me_lo).bit_count()
                + 2 * (r3 & me_hi).bit_count()
                - (r3 & opp).bit_count()
                - (r3 & opp_lo).bit_count()
                - 2 * (r3 & opp_hi).bit_count()
            )
            + w.count1 * (mine1 - theirs1)
            + w.mobility
            * (
                totem_destinations(t, me, opp).bit_count()
                - totem_destinations(t, opp, me).bit_count()
            )
            + self._stock[st_me]
            - self._stock[st_opp]
            + (w.tempo_place if phase else w.tempo_totem)
        )
        if h > HEURISTIC_CAP:
            h = HEURISTIC_CAP
        elif h < -HEURISTIC_CAP:
            h = -HEURISTIC_CAP
        return h if h > floor else floor

    def _solve(  # noqa: PLR0913, PLR0917  (the unpacked position, as evaluate has it)
        self,
        key: int,
        me: int,
        me_lo: int,
        me_hi: int,
        opp: int,
        opp_lo: int,
        opp_hi: int,
        t: int,
        empty: int,
        st_me: int,
        st_opp: int,
        phase: int,
    ) -> int | None:
        """The proven score of a position with few empty squares, or None past the cap."""
        cache = self._cache
        if key in cache:
            return cache[key]
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        solver = self._solver
        solver.nodes = 0
        # A full window: the exact margin, and a score that does not depend on the order in
        # which the squares are tried (a null window would prove only the sign, ~3x faster).
        try:
            if phase:
                v = solver.place(
                    me, me_lo, me_hi, opp, opp_lo, opp_hi, t, empty, st_me, st_opp, -_WIDE, _WIDE
                )
            else:
                v = solver.turn(
                    me, me_lo, me_hi, opp, opp_lo, opp_hi, t, st_me, st_opp, -_WIDE, _WIDE
                )
        except _CapReachedError:
            cache[key] = None
            return None
        # v = 20 * sum difference + count difference
        diff = (v + 10) // 20  # |count difference| <= 8 < 10
        cdiff = v - 20 * diff
        result = _result(diff, cdiff)
        cache[key] = result
        return result


# ---------------------------------------------------------------------------------------------
# The native evaluation


class _Native(Protocol):
    """What ``bots/eval/_yoxii_native.c`` offers: ``init`` takes the tables and the default
    weights, ``weights`` checks other weights and returns them ready for ``evaluate``."""

    def init(self, *tables: object) -> None: ...

    def weights(self, weights: tuple[int, ...], stock_values: tuple[int, ...], /) -> object: ...

    def evaluate(
        self,
        white: int,
        black: int,
        values: int,
        t: int,
        stock: int,
        side: int,
        phase: int,
        weights: object = ...,
        /,
    ) -> int: ...

    def destinations(self, totem: int, own: int, opp: int, /) -> int: ...


def _native_weights(w: Weights, solve_nodes: int) -> tuple[int, ...]:
    """The weights ``w`` and the constants in the order ``_yoxii_native.init`` and ``weights``
    read them."""
    return (
        w.ring1,
        w.ring2,
        w.ring3,
        w.count1,
        w.mobility,
        w.tempo_totem,
        w.tempo_place,
        SOLVED,
        HEURISTIC_CAP,
        SOLVE_EMPTIES,
        solve_nodes,
        _WIDE,
        MAX_EVAL,
    )


def _load_native() -> _Native | None:
    """The C evaluation (``bots/eval/_yoxii_native.c``) with this module's tables and default
    weights; None when it is not built, or ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("bots.eval._yoxii_native")
    if module is None:
        return None
    native = cast(_Native, module)
    w = Weights()
    native.init(
        NEIGHBOURS_MASK,
        _RING2,
        _RING3,
        RAYS,
        FULL_MASK,
        _native_weights(w, SOLVE_NODES),
        _stock_table(w.stock),
    )
    return native


_native = _load_native()

"""The Yohoho! evaluation: a race of two Admirals through two fleets, in the wind.

A side wins by sailing its Admiral to the far row or by trapping the enemy Admiral (rules §6),
so most of the evaluation is about the two Admirals: how far each still has to sail past the
pieces in its way, whether it can be stopped or trapped, and who wins the race. Material comes
next, then threats. Scale: hundredths of a point, with a Chebec worth ``chebec`` = 72; the
positional terms stay within a few thousand, far inside ``MAX_EVAL``.

Features, weights (White's minus Black's unless said otherwise) and why:

=====================  ==================  ===================================================
feature                weight              why
=====================  ==================  ===================================================
material               Chebec 72,          a Galleon (strength 3) makes, with another
                       Galleon 133         Galleon, a wall of 6 that stops an Admiral and
                                           beats a Chebec alone; Chebecs (2) need three for
                                           that. Tuned (SPSA, 4,000 games at 5+0.05): a
                                           Galleon is worth about two Chebecs.
rows sailed            52 per row          plain progress of each Admiral towards its goal
                                           row; it rewards every step, so the bot never
                                           shuffles, even when the way is still blocked.
distance to the goal   prog[d]: 321 (1),   d = the fewest turns the Admiral needs to reach
row past the pieces    214, 118, 64, 32,   its goal row with steps NE/NW/W for White, SE/SW/W
(BFS)                  16, 5, 0            for Black (never east, into the wind), over cells
                                           that are not unsafe (enemy strength > 5, rule 7)
                                           and hold no enemy Rock; a cell of an enemy ship
                                           costs two turns, as the Admiral captures it first
                                           (any ship next to it is capturable): a blocker
                                           slows an Admiral, it does not stop it. Convex,
                                           because the last steps decide the game.
the race (side to      race[d]: 155 (2),   whoever reaches the goal row first wins: the side
act)                   103, 58, 32, 13     to act is ahead when its distance is not longer
                                           (it moves first); an Admiral that already made
                                           this turn's first sub-move needs one more turn.
a race decided         race_won 3154 less  an Admiral within race_horizon (4) turns whose
(side to act)          race_turn 154 per   route no defender can reach in time (``_race``:
                       turn to sail; it    occupy a cell of it, or bring strength above 5
                       replaces the race   next to one, moving at its speed and against the
                       term                wind), arriving before the other Admiral can:
                                           the game is won, whatever the material says.
Admiral's safe steps   -119 (none), -45    an Admiral with no safe step is one enemy ship
                       (one), -10 (two)    away from a trap; the wind takes the east step
                                           away, so only five cells count.
Admiral's robust       -49 (none),         the same with cells the enemy already touches
steps                  -16 (one)           with strength 4 or more (one more ship makes them
                                           unsafe): traps are prepared a turn ahead.
Rock in the way        12                  the own Rock in the enemy Admiral's forward cone
                                           (three rows): Rocks are never captured, so it is
                                           the blocker that lasts.
pressure               8 per strength      own ship strength within two cells of the enemy
                                           Admiral: the material for a trap (and a threat
                                           the enemy must answer with its turn).
capturable Admiral     attacked[escapes]:  phase 1 (own Admiral under Arno's rule): the side
(side to act)          333 ... 67, halved  to act must spend its turn escaping; phase 2
                       with a freeing      (enemy Admiral capturable after our first sub-
                       capture; 3242 when  move): it will have to. No escape and no freeing
                       trapped             capture is a trap next turn.
hanging ships (side    phase 1: own 22%/   capturable ships (adjacent enemy strength above
to act)                65% of the first/   their own, rules 5-6). The side to act can save
                       second, enemy 54%;  one (or take one in phase 1: quiescence searches
                       phase 2: own 27%/   the captures); a second one is usually lost.
                       83%, enemy 14%
goal step now          5000                the Admiral can step onto its goal row this very
(side to act)                              sub-move: the game is won.
tempo (side to act)    +12 in phase 1,     a whole turn ahead, or half a turn; fitted on
                       -23 in phase 2      self-play positions, then tuned.
=====================  ==================  ===================================================

The weights are the fields of ``Weights`` (the table's names in lower case), one set per
evaluator; alphabeta exposes most of them as options (``EvalYohoho...``, ``bots.eval.tuning``:
the tables ``prog``, ``race``, ``step_safe``, ``robust`` and ``attacked`` scaled in percent).

The search: quiescence runs over captures (``noisy_moves``), and positions where the side to
act is under Arno's rule are not quiet (its few forced tokens are searched). ``order_moves``
puts captures first and is otherwise free: the search's history and killer moves order the
rest better than any static rule measured here.

Speed: set-wise bitboard arithmetic on the game's tables, about 10 µs per position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol, cast

from bots.eval import MAX_EVAL, Evaluator, tuning
from games import Move, State
from games.native import native_module
from games.yohoho import (
    CAPTURE,
    CELL_OF_NAME,
    COORDS,
    FULL_MASK,
    GOAL_MASK,
    N_CELLS,
    NBR,
    NE,
    NW,
    RADIUS2,
    SE,
    SHIFTS,
    SHIP_NBR,
    SOURCE,
    SW,
    E,
    W,
    YohohoState,
)

# -- weights (see the module docstring) --------------------------------------------------------


class Weights(NamedTuple):
    """The weights of the features (see the module docstring); tuning code passes other ones
    (``bots.eval.tuning`` makes them from a bot's options)."""

    chebec: int = 72
    galleon: int = 133
    row_step: int = 52
    prog: tuple[int, ...] = (0, 321, 214, 118, 64, 32, 16, 5, 0, 0, 0, 0, 0)
    """By BFS distance 0..12 (at least ``_FAR`` + 1 entries)."""
    race: tuple[int, ...] = (0, 0, 155, 103, 58, 32, 13, 0, 0, 0, 0, 0, 0, 0)
    """By the leader's distance 0..13 (at least ``_FAR`` + 2 entries)."""
    step_safe: tuple[int, ...] = (-119, -45, -10, 0, 5, 8)
    """By the number of safe empty steps 0..5."""
    robust: tuple[int, ...] = (-49, -16, 0, 0, 0, 0)
    """By the number of empty steps with enemy strength <= 3."""
    rock_cone: int = 12
    pressure: int = 8
    attacked: tuple[int, ...] = (333, 278, 155, 100, 78, 67)
    """By the capturable Admiral's escapes 0..5."""
    trap_soon: int = 3242
    win_now: int = 5000
    own_hang_p1: tuple[int, ...] = (22, 65)
    """Percent of the first and second own capturable ship, phase 1."""
    enemy_hang_p1: int = 54
    """Percent of the best capturable enemy ship, phase 1."""
    own_hang_p2: tuple[int, ...] = (27, 83)
    enemy_hang_p2: int = 14
    tempo_p1: int = 12
    tempo_p2: int = -23
    race_horizon: int = 4
    """Races are judged when an Admiral is at most this many turns from its goal row."""
    race_won: int = 3154
    race_turn: int = 154
    """A race decided: ``race_won`` less ``race_turn`` per turn the winner still has to sail."""


DEFAULT_WEIGHTS = Weights()

LIMIT = MAX_EVAL - 1

# -- tables --------------------------------------------------------------------------------------

ROW_OF = tuple(COORDS[c][1] for c in range(N_CELLS))
_S_NE, _S_NW, _S_W, _S_SW, _S_SE = SOURCE[NE], SOURCE[NW], SOURCE[W], SOURCE[SW], SOURCE[SE]
_GOAL_W, _GOAL_B = GOAL_MASK
_FAR = 12
"""The distance reported when no route to the goal row exists within ``_FAR - 1`` steps."""


def _cone(c: int, up: bool) -> int:
    """The cells an Admiral on ``c`` may cross on its next three rows towards its goal row
    (the forward steps, widened by one step west on each row)."""
    out = 0
    front = 1 << c
    for _ in range(3):
        if up:
            nxt = ((front & _S_NE) << 9) | ((front & _S_NW) << 8)
        else:
            nxt = ((front & _S_SE) >> 8) | ((front & _S_SW) >> 9)
        nxt |= (nxt & _S_W) >> 1
        out |= nxt
        front = nxt
    return out


CONE_UP = tuple(_cone(c, True) for c in range(N_CELLS))
"""Per cell: the forward cone of a White Admiral standing there."""
CONE_DOWN = tuple(_cone(c, False) for c in range(N_CELLS))
"""Per cell: the forward cone of a Black Admiral standing there."""


# -- set-wise helpers (hot path: plain ints) ----------------------------------------------------


def _coverage(a: int, g: int, c: int) -> tuple[int, int, int]:
    """The cells next to which one side's strength (rule 5) is >= 3, >= 4 and >= 6.

    ``a``: that side's Admiral cell; ``g``, ``c``: its Galleon and Chebec bitboards. A ship of
    strength s on a cell of the first two sets is capturable by that side (Chebec 2 < 3,
    Galleon 3 < 4); an enemy Admiral may not stop on a cell of the third (rule 7). Counted
    bit-sliced: "covered by one, two, three Chebecs" as three masks, no loop over cells.
    """
    am = NBR[a]
    g1 = g2 = 0
    while g:
        low = g & -g
        g ^= low
        m = NBR[low.bit_length() - 1]
        g2 |= g1 & m
        g1 |= m
    c1 = c2 = c3 = 0
    while c:
        low = c & -c
        c ^= low
        m = NBR[low.bit_length() - 1]
        c3 |= c2 & m
        c2 |= c1 & m
        c1 |= m
    ge3 = am | g1 | c2
    ge4 = am | g2 | c2 | (g1 & c1)
    ge6 = (am & (g1 | c1)) | g2 | c3 | (g1 & c2)
    return ge3, ge4, ge6


def _dist_up(a_bit: int, passable: int, blockers: int) -> int:
    """The fewest turns the Admiral on ``a_bit`` needs to reach row 9 with steps NE, NW and W:
    one a step onto a ``passable`` cell, two onto a cell of ``blockers`` (an enemy ship that
    the Admiral, whose strength 5 beats any ship's, captures from the cell next to it first).

    A breadth-first search with the whole frontier as one bitboard: three shifts per step; a
    blocker reached joins the frontier one step later. Backward steps are left out: they never
    shorten a route past a static obstacle by much, and each step costs a turn anyway.
    """
    free = passable & ~a_bit
    hard = blockers & ~a_bit
    front = a_bit
    late = 0
    d = 0
    while (front or late) and d < _FAR - 1:
        d += 1
        reach = ((front & _S_NE) << 9) | ((front & _S_NW) << 8) | ((front & _S_W) >> 1)
        front = (reach & free) | late
        late = reach & hard
        hard ^= late
        if front & _GOAL_W:
            return d
        free &= ~front
    return _FAR


def _dist_down(a_bit: int, passable: int, blockers: int) -> int:
    """``_dist_up`` for Black's Admiral: to row 1 with steps SE, SW and W."""
    free = passable & ~a_bit
    hard = blockers & ~a_bit
    front = a_bit
    late = 0
    d = 0
    while (front or late) and d < _FAR - 1:
        d += 1
        reach = ((front & _S_SE) >> 8) | ((front & _S_SW) >> 9) | ((front & _S_W) >> 1)
        front = (reach & free) | late
        late = reach & hard
        hard ^= late
        if front & _GOAL_B:
            return d
        free &= ~front
    return _FAR


def _attacked(e: int, empty: int, unsafe: int, attacker: tuple[int, int, int], w: Weights) -> int:
    """The value, for the attacker, of the capturable enemy Admiral on ``e``.

    ``unsafe``: the cells where the attacker's strength exceeds 5; ``attacker``: its Admiral,
    Galleon and Chebec bitboards. The Admiral must escape or be freed (Arno's rule): with
    neither it is trapped.
    """
    a, g, c = attacker
    near = NBR[e]
    ng = near & g
    nc = near & c
    attack = 3 * ng.bit_count() + 2 * nc.bit_count() + (5 if near & a else 0)
    escapes = (SHIP_NBR[e] & empty & ~unsafe).bit_count()
    # A freeing capture removes one adjacent ship whose loss brings the attack to 5 or less;
    # every adjacent ship is capturable, because the Admiral alone has strength 5.
    freeing = (ng and attack <= 8) or (nc and attack <= 7)
    if not escapes and not freeing:
        return w.trap_soon
    return w.attacked[escapes] // (2 if freeing else 1)


# -- races ---------------------------------------------------------------------------------------
#
# An Admiral sails one cell a turn (a turn's two sub-moves move two different pieces), so an
# Admiral d open steps from its goal row arrives in d turns unless the other side gets in its
# way first: stands on a cell of its route, or brings strength above 5 next to one (rule 7:
# the Admiral may not stop there), before the Admiral gets there. ``_race`` asks whether the
# other side can do that anywhere on the Admiral's shortest routes, in the turns it has, with
# every defender moving at its own speed against the wind (ships never sail east) on the board
# as it stands. The defenders are counted generously (a whole group of ships counts once any
# of them arrives, and pieces pass through each other's cells), so an Admiral said to be
# unstoppable is; a material lead then counts for nothing against a race it cannot stop.

_OPPOSITE = {NE: SW, NW: SE, W: E, SE: NW, SW: NE, E: W}
_UP = (NE, NW, W)
_DOWN = (SE, SW, W)
_SHIP = (NE, NW, W, SW, SE)
_ALL = (E, NE, NW, W, SW, SE)


def _shifts(directions: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """Per direction: the cells with a neighbour that way, and the left and right shift that
    take a cell to it (one of them 0): what ``_step`` does, unrolled for the hot loops."""
    return tuple((SOURCE[d], max(0, SHIFTS[d]), max(0, -SHIFTS[d])) for d in directions)


_SHIP_SHIFTS = _shifts(_SHIP)
_ALL_SHIFTS = _shifts(_ALL)
_UP_SHIFTS = _shifts(_UP)
_DOWN_SHIFTS = _shifts(_DOWN)
_UP_BACK = _shifts(tuple(_OPPOSITE[d] for d in _UP))
_DOWN_BACK = _shifts(tuple(_OPPOSITE[d] for d in _DOWN))


def _dilate(cells: int) -> int:
    """The cells next to any of ``cells``."""
    out = 0
    for source, left, right in _ALL_SHIFTS:
        out |= ((cells & source) << left) >> right
    return out


def _moves(cells: int, empty: int, shifts: tuple[tuple[int, int, int], ...], reach: int) -> int:
    """Where pieces on ``cells`` can stop with one sub-move: up to ``reach`` empty cells in a
    straight line in one of the directions of ``shifts`` (set-wise: every piece at once)."""
    out = 0
    for source, left, right in shifts:
        front = cells
        for _ in range(reach):
            front = (((front & source) << left) >> right) & empty
            if not front:
                break
            out |= front
    return out


def _advance(cells: int, shifts: tuple[tuple[int, int, int], ...]) -> int:
    """The cells one step from ``cells`` in any of the directions of ``shifts``."""
    out = 0
    for source, left, right in shifts:
        out |= ((cells & source) << left) >> right
    return out


_RACES: dict[tuple[int, ...], int] = {}
"""Races already judged (siblings in a search tree often share one), by the position's pieces
and the horizon (the only weight a race reads); cleared when full."""
RACE_CACHE = 1 << 14


def _race_cached(
    admiral: int,
    up: bool,
    passable: int,
    empty: int,
    *,
    defenders: tuple[int, int, int, int],
    defenders_first: bool,
    horizon: int,
) -> int:
    """``_race``, remembered."""
    key = (admiral, up, passable, empty, *defenders, defenders_first, horizon)
    turns = _RACES.get(key)
    if turns is None:
        if len(_RACES) >= RACE_CACHE:
            _RACES.clear()
        turns = _RACES[key] = _race(
            admiral,
            up,
            passable,
            empty,
            defenders=defenders,
            defenders_first=defenders_first,
            horizon=horizon,
        )
    return turns


def _race(
    admiral: int,
    up: bool,
    passable: int,
    empty: int,
    *,
    defenders: tuple[int, int, int, int],
    defenders_first: bool,
    horizon: int,
) -> int:
    """The turns the Admiral on ``admiral`` needs to reach ``goal`` if the defenders cannot
    stop it, else 0 (also when it is farther than ``horizon`` turns, ``Weights.race_horizon``).

    ``up``: White's Admiral (to row 9), else Black's (to row 1); ``passable``: the cells it may
    cross now (no enemy piece, no enemy strength above 5); ``defenders``: their Admiral,
    Galleons, Chebecs and Rock; ``defenders_first``: whether they move before the Admiral's
    next step.
    """
    forward, back, goal = (
        (_UP_SHIFTS, _UP_BACK, _GOAL_W) if up else (_DOWN_SHIFTS, _DOWN_BACK, _GOAL_B)
    )
    layers: list[int] = []
    free = passable & ~admiral
    front = admiral
    while front and len(layers) < horizon:
        front = _advance(front, forward) & free
        free &= ~front
        layers.append(front)
        if front & goal:
            break
    else:
        return 0
    if not front & goal:
        return 0
    turns = len(layers)
    # the cells of the shortest routes, by the step on which the Admiral reaches them
    tube = [0] * turns
    tube[-1] = layers[-1] & goal
    for k in range(turns - 2, -1, -1):
        tube[k] = layers[k] & _advance(tube[k + 1], back)
    da, dg, dc, dr = defenders
    galleons, chebecs = dg.bit_count(), dc.bit_count()
    free = empty | da | dg | dc | dr  # the defenders pass through each other's cells
    route = admiral
    for k in range(turns):
        if k or defenders_first:  # one more defenders' turn before the Admiral's step k + 1
            da |= _moves(da, free, _SHIP_SHIFTS, 1)
            dg |= _moves(dg, free, _SHIP_SHIFTS, 2)
            dc |= _moves(dc, free, _SHIP_SHIFTS, 3)
            dr |= _moves(dr, free, _ALL_SHIFTS, 8)
        route = _advance(route, forward) & tube[k] & ~(da | dg | dc | dr)
        if not route:
            return 0
        # strength above 5 next to a cell: the Admiral and any ship, two Galleons, three
        # Chebecs, or a Galleon and two Chebecs
        near_g = _dilate(dg) if galleons else 0
        near_c = _dilate(dc) if chebecs else 0
        unsafe = _dilate(da) & (near_g | near_c) if da else 0
        if galleons >= 2:
            unsafe |= near_g
        if chebecs >= 3:
            unsafe |= near_c
        if galleons and chebecs >= 2:
            unsafe |= near_g & near_c
        route &= ~unsafe
        if not route:
            return 0
    return turns


class YohohoEvaluator(Evaluator):
    """The Yohoho! evaluation (see the module docstring for its features) under ``weights``."""

    def __init__(self, weights: Weights = DEFAULT_WEIGHTS) -> None:
        self.weights = weights
        # the C evaluation's own copy of other weights (its init took the defaults)
        self._native_weights: object = None
        if _native is not None and weights != DEFAULT_WEIGHTS:
            self._native_weights = _native.weights(_native_weights(weights))

    @classmethod
    def tuned(cls, game: str, values: Mapping[str, int]) -> YohohoEvaluator:
        del game
        return cls(tuning.apply(DEFAULT_WEIGHTS, tuning.YOHOHO, values))

    def evaluate(self, state: State) -> int:
        if _native is not None:
            s = state
            assert isinstance(s, YohohoState)
            if self._native_weights is None:
                return _native.evaluate(s.packed_pieces(), s.to_move(), s.first_cell())
            return _native.evaluate(
                s.packed_pieces(), s.to_move(), s.first_cell(), self._native_weights
            )
        return self.evaluate_python(state)

    def evaluate_python(self, state: State) -> int:  # noqa: C901, PLR0912, PLR0915  (mirrors the C evaluate_bb)
        """The evaluation in Python: the reference the native one is checked against (it
        follows ``evaluate_bb`` of ``_yohoho_native.c`` step for step, and both read best
        whole)."""
        s = state
        assert isinstance(s, YohohoState)
        mask = s.pieces_mask
        wa, wg, wc, wr = mask(0, 0), mask(0, 1), mask(0, 2), mask(0, 3)
        ba, bg, bc, br = mask(1, 0), mask(1, 1), mask(1, 2), mask(1, 3)
        side = s.to_move()
        cell = s.remembered_cell()
        p2 = -1 if cell is None else CELL_OF_NAME[cell]
        white = wa | wg | wc | wr
        black = ba | bg | bc | br
        empty = FULL_MASK ^ (white | black)
        aw = wa.bit_length() - 1
        ab = ba.bit_length() - 1
        # What each side's pieces attack: b6 is where White's Admiral may not stop, etc.
        b3, b4, b6 = _coverage(ab, bg, bc)
        w3, w4, w6 = _coverage(aw, wg, wc)

        # -- the terms for White, minus the same for Black -----------------------------------
        w = self.weights
        chebec, galleon = w.chebec, w.galleon
        score = chebec * (wc.bit_count() - bc.bit_count()) + galleon * (
            wg.bit_count() - bg.bit_count()
        )
        # Progress: rows sailed (White from row 3, Black from row 7), and the open route.
        score += w.row_step * (ROW_OF[aw] + ROW_OF[ab] - 10)
        # an enemy ship in the way costs a turn (its capture), unless its cell is unsafe
        dw = _dist_up(wa, FULL_MASK & ~(black | b6), (bg | bc) & ~b6)
        db = _dist_down(ba, FULL_MASK & ~(white | w6), (wg | wc) & ~w6)
        score += w.prog[dw] - w.prog[db]
        # The Admirals' room: safe steps now, and steps one enemy ship cannot close.
        nw = SHIP_NBR[aw] & empty
        nb = SHIP_NBR[ab] & empty
        step_safe, robust = w.step_safe, w.robust
        score += step_safe[(nw & ~b6).bit_count()] - step_safe[(nb & ~w6).bit_count()]
        score += robust[(nw & ~b4).bit_count()] - robust[(nb & ~w4).bit_count()]
        if wr & CONE_UP[ab]:
            score += w.rock_cone
        if br & CONE_DOWN[aw]:
            score -= w.rock_cone
        rb = RADIUS2[ab]
        rw = RADIUS2[aw]
        score += w.pressure * (
            3 * (wg & rb).bit_count()
            + 2 * (wc & rb).bit_count()
            - 3 * (bg & rw).bit_count()
            - 2 * (bc & rw).bit_count()
        )

        # -- from here on, for the side to act ------------------------------------------------
        if side:
            score = -score
            own_a, en_a = ba, wa
            own_hang_c, own_hang_g, en_hang_c, en_hang_g = bc & w3, bg & w4, wc & b3, wg & b4
            own_unsafe, en_unsafe = w6, b6
            own_d, en_d = db, dw
            own_pieces, en_pieces = (ba, bg, bc), (wa, wg, wc)
            own_win = SHIP_NBR[ab] & _GOAL_B & empty & ~w6
        else:
            own_a, en_a = wa, ba
            own_hang_c, own_hang_g, en_hang_c, en_hang_g = wc & b3, wg & b4, bc & w3, bg & w4
            own_unsafe, en_unsafe = b6, w6
            own_d, en_d = dw, db
            own_pieces, en_pieces = (wa, wg, wc), (ba, bg, bc)
            own_win = SHIP_NBR[aw] & _GOAL_W & empty & ~b6
        hang_g = own_hang_g.bit_count()
        hanging = hang_g + own_hang_c.bit_count()
        first = galleon if hang_g else chebec
        second = galleon if hang_g > 1 else chebec
        en_best = galleon if en_hang_g else (chebec if en_hang_c else 0)
        if p2 < 0:
            score += w.tempo_p1 + en_best * w.enemy_hang_p1 // 100
            if hanging:
                score -= first * w.own_hang_p1[0] // 100
                if hanging > 1:
                    score -= second * w.own_hang_p1[1] // 100
            if own_a & own_unsafe:
                # Arno's rule binds this turn: the fewer ways out, the closer to a trap.
                score -= _attacked(own_a.bit_length() - 1, empty, own_unsafe, en_pieces, w)
            if own_win:
                score += w.win_now
        else:
            score += w.tempo_p2 + en_best * w.enemy_hang_p2 // 100
            if hanging:
                score -= first * w.own_hang_p2[0] // 100
                if hanging > 1:
                    score -= second * w.own_hang_p2[1] // 100
            if en_a & en_unsafe:
                # Our first sub-move made the enemy Admiral capturable: after the second, the
                # enemy must escape or free it, and with neither it is trapped.
                score += _attacked(en_a.bit_length() - 1, empty, en_unsafe, own_pieces, w)
            if own_a >> p2 & 1:
                own_d += 1  # the Admiral has made this turn's step already
            elif own_win:
                score += w.win_now
        # The race: the side to act moves first, so it leads on equal distances.
        decided = 0
        if min(own_d, en_d) <= w.race_horizon:
            decided = self._race_verdict(
                s,
                p2,
                empty,
                passable=(FULL_MASK & ~(black | b6), FULL_MASK & ~(white | w6)),
                distances=(dw, db),
            )
        if decided:
            score += decided
        elif own_d <= en_d:
            score += w.race[own_d]
        else:
            score -= w.race[en_d]
        if score > LIMIT:
            return LIMIT
        if score < -LIMIT:
            return -LIMIT
        return score

    def _race_verdict(
        self,
        s: YohohoState,
        p2: int,
        empty: int,
        *,
        passable: tuple[int, int],
        distances: tuple[int, int],
    ) -> int:
        """For the side to act: ``race_won`` less the turns to sail when its Admiral wins a
        race the enemy cannot stop, the same negated when the enemy's Admiral does, else 0.

        ``p2``: the cell of this turn's first sub-move (-1 in phase 1); ``passable``: the
        cells White's and Black's Admirals may cross now; ``distances``: their open steps to
        the goal row (``_dist_up``, ``_dist_down``).
        """
        w = self.weights
        mask = s.pieces_mask
        side = s.to_move()
        pieces = [(mask(p, 0), mask(p, 1), mask(p, 2), mask(p, 3)) for p in (0, 1)]
        own_a, en_a = pieces[side][0], pieces[1 - side][0]
        own_d, en_d = distances[side], distances[1 - side]
        moved = p2 >= 0 and bool(own_a >> p2 & 1)  # the own Admiral made this turn's step
        # Turn i of the side to act comes before the enemy's turn i. An Admiral needs at
        # least as many turns as rows to its goal row, whatever is in its way.
        own_row, en_row = ROW_OF[own_a.bit_length() - 1], ROW_OF[en_a.bit_length() - 1]
        late = 1 if moved else 0
        own_rows = (own_row - 1 if side else 9 - own_row) + late
        en_rows = en_row - 1 if side == 0 else 9 - en_row
        if own_d + late <= en_rows:  # else the enemy may arrive first: no win to prove
            own = _race_cached(
                own_a,
                side == 0,
                passable[side],
                empty,
                defenders=pieces[1 - side],
                defenders_first=moved,
                horizon=w.race_horizon,
            )
            if own:
                return w.race_won - w.race_turn * (own + late)
        if en_d < own_rows:  # else the own Admiral arrives first, or at once
            enemy = _race_cached(
                en_a,
                side == 1,
                passable[1 - side],
                empty,
                defenders=pieces[side],
                defenders_first=True,
                horizon=w.race_horizon,
            )
            if enemy:
                return -(w.race_won - w.race_turn * enemy)
        return 0

    def noisy_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """The captures: only a phase-1 decision can be one (a capture is a whole turn)."""
        if state.phase() != "1":
            return []
        return [m for m in moves if m & CAPTURE]

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """Captures first, the rest as generated (the search's history orders them)."""
        if state.phase() != "1":
            return list(moves)
        captures = [m for m in moves if m & CAPTURE]
        if not captures:
            return list(moves)
        return captures + [m for m in moves if not m & CAPTURE]

    def is_quiet(self, state: State) -> bool:
        """Not quiet under Arno's rule: the side to act has only a few forced tokens (an
        Admiral step or a freeing capture), and standing pat would ignore the threat."""
        s = state
        assert isinstance(s, YohohoState)
        return s.phase() != "1" or s.attack_on_admiral(s.to_move()) <= 5


# -- the native evaluation -------------------------------------------------------------------


def _native_weights(w: Weights = DEFAULT_WEIGHTS) -> tuple[int, ...]:
    """The weights ``w`` in the order ``_yohoho_native.init`` and ``weights`` read them."""
    return (
        w.chebec,
        w.galleon,
        w.row_step,
        *w.prog,
        *w.race,
        *w.step_safe,
        *w.robust,
        w.rock_cone,
        w.pressure,
        *w.attacked,
        w.trap_soon,
        w.win_now,
        *w.own_hang_p1,
        w.enemy_hang_p1,
        *w.own_hang_p2,
        w.enemy_hang_p2,
        w.tempo_p1,
        w.tempo_p2,
        w.race_horizon,
        w.race_won,
        w.race_turn,
        LIMIT,
        _FAR,
    )


class _Native(Protocol):
    """What ``bots/eval/_yohoho_native.c`` offers: ``init`` takes the tables and the default
    weights, ``weights`` checks other weights and returns them ready for ``evaluate``."""

    def init(self, *tables: object) -> None: ...

    def weights(self, weights: tuple[int, ...], /) -> object: ...

    def evaluate(
        self, pieces: tuple[int, ...], side: int, p2: int, weights: object = ..., /
    ) -> int: ...


def _load_native() -> _Native | None:
    """The C evaluation (``bots/eval/_yohoho_native.c``), given this module's tables and
    weights; None when it is not built, or ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("bots.eval._yohoho_native")
    if module is None:
        return None
    native = cast(_Native, module)
    native.init(
        NBR,
        SHIP_NBR,
        RADIUS2,
        CONE_UP,
        CONE_DOWN,
        ROW_OF,
        SOURCE,
        SHIFTS,
        GOAL_MASK,
        FULL_MASK,
        _native_weights(),
    )
    return native


_native = _load_native()

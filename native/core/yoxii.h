/* Yoxii for the compiled search core: the rules of games/yoxii.py and the evaluation of
 * bots/eval/yoxii.py (exact one-turn closures, the capped endgame solver, the totem-centred
 * heuristic), move for move and value for value, under the contract of common.h.
 *
 * The 37 squares keep the reference's numbering (c7 = 0 ... e1 = 36, rank 7 down to rank 1),
 * so a bitboard is one uint64_t and moves are the reference's ints: a Totem move is its
 * destination, a placement PLACE | (value - 1) << 6 | square. A position is a small node
 * (pieces, the two bit planes of value - 1, stocks, key); push copies the node on top of the
 * position's own stack and changes the copy, pop drops it.
 *
 * Geometry is computed here and checked against the reference's tables at init; the Zobrist
 * numbers and the evaluation's constants are read from the reference modules.
 */
#ifndef ENGINESRV_CORE_YOXII_H
#define ENGINESRV_CORE_YOXII_H

#include "common.h"

#define CORE_GAME_NAME "yoxii"
#define CORE_MAX_MOVES 160 /* a placement anywhere (rule R6): 4 values x 36 squares at most */

#define YX_N 37
#define YX_FULL ((UINT64_C(1) << YX_N) - 1)
#define YX_PLACE 256
#define YX_PLAYER_STOCK 4095 /* 3 bits per value, 12 per player, Black above */
#define YX_CACHE_SLOTS 4096  /* the solver's results by position key (a power of two) */

static inline uint64_t yx_bit(int s) { return UINT64_C(1) << s; }
static inline int yx_highest(uint64_t x) { return 63 - __builtin_clzll(x); } /* x != 0 */

/* -- tables ---------------------------------------------------------------------------------- */

typedef struct {
    uint64_t nb[YX_N];                 /* the neighbourhood: placement and scoring region */
    uint64_t ring2[YX_N], ring3[YX_N]; /* squares at king distance 2 and 3 */
    /* beyond[t][n]: the squares past neighbour n of t on the line from t (0 for a square that
     * is not a neighbour); up[t][n]: whether that line runs to higher square numbers, so that
     * its first square is the lowest bit of a subset, else the highest */
    uint64_t beyond[YX_N][YX_N];
    uint8_t up[YX_N][YX_N];
    uint64_t z_piece[2][4][YX_N], z_totem[YX_N], z_turn[4];
    /* bots.eval.yoxii's constants (MAX_EVAL from bots.eval) */
    int64_t solved, heuristic_cap, solve_empties, wide, max_eval;
} YxTables;

static YxTables yx;
static PyObject *yx_state_type;     /* games.yoxii.YoxiiState */
static PyObject *yx_evaluator_type; /* bots.eval.yoxii.YoxiiEvaluator */

/* -- the position ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t white, black;
    uint64_t lo, hi; /* the squares whose piece has value - 1 with its low / high bit set */
    uint64_t key;
    int32_t stock; /* packed as the reference's: 3 bits per value, 12 per player */
    int8_t totem, side, phase, over;
} YxNode;

struct CorePos {
    int top;
    YxNode node[CORE_MAX_DEPTH + 1];
};
typedef struct CorePos CorePos;

typedef struct {
    uint64_t key;
    int32_t value;
    int32_t known; /* 0 empty, 1 solved (value), 2 past the cap */
} YxCacheEntry;

struct CoreEval {
    int64_t ring1, ring2, ring3, count1, mobility, tempo_totem, tempo_place, stock[4];
    int64_t solve_nodes;
    YxCacheEntry cache[YX_CACHE_SLOTS];
};
typedef struct CoreEval CoreEval;

/* -- the rules ------------------------------------------------------------------------------- */

/* games.yoxii.totem_destinations: steps to empty neighbours, and per own neighbour the first
 * square past the run of own pieces on that line when it is empty (rules R1-R4) */
static inline uint64_t yx_dests(int t, uint64_t own, uint64_t opp) {
    uint64_t nb = yx.nb[t];
    uint64_t dests = nb & ~(own | opp);
    uint64_t runs = nb & own;
    while (runs) {
        int n = lowest64(runs);
        runs &= runs - 1;
        uint64_t past = yx.beyond[t][n] & ~own;
        if (past) {
            int q = yx.up[t][n] ? lowest64(past) : yx_highest(past);
            dests |= yx_bit(q) & ~opp;
        }
    }
    return dests;
}

/* whether yx_dests is not empty, answering early for the usual step */
static inline int yx_can_move(int t, uint64_t own, uint64_t opp) {
    if (yx.nb[t] & ~(own | opp)) return 1;
    return yx_dests(t, own, opp) != 0;
}

static inline const YxNode *yx_top(const CorePos *pos) { return &pos->node[pos->top]; }

static int core_to_move(const CorePos *pos) { return yx_top(pos)->side; }
static int core_is_terminal(const CorePos *pos) { return yx_top(pos)->over; }
static uint64_t core_key(const CorePos *pos) { return yx_top(pos)->key; }

/* the region around the Totem: sum of values first, then piece count, else a draw (E5); hot
 * too, since the search scores every finished game it meets with it */
CORE_HOT static int core_winner(const CorePos *pos) {
    const YxNode *n = yx_top(pos);
    uint64_t r = yx.nb[n->totem];
    int a = popcount64(r & n->white) + popcount64(r & n->white & n->lo) +
            2 * popcount64(r & n->white & n->hi);
    int b = popcount64(r & n->black) + popcount64(r & n->black & n->lo) +
            2 * popcount64(r & n->black & n->hi);
    if (a != b) return a > b ? 0 : 1;
    int ca = popcount64(r & n->white), cb = popcount64(r & n->black);
    if (ca != cb) return ca > cb ? 0 : 1;
    return -1;
}

static int core_legal_moves(CorePos *pos, core_move *out) {
    const YxNode *n = yx_top(pos);
    if (n->over) return 0;
    int count = 0;
    if (n->phase == 0) {
        uint64_t d = n->side ? yx_dests(n->totem, n->black, n->white)
                             : yx_dests(n->totem, n->white, n->black);
        for (; d; d &= d - 1) out[count++] = lowest64(d);
        return count;
    }
    /* R5/R6: empty neighbours of the Totem, or every empty square when there are none */
    uint64_t empty = YX_FULL & ~(n->white | n->black | yx_bit(n->totem));
    uint64_t targets = yx.nb[n->totem] & empty;
    if (!targets) targets = empty;
    int st = n->stock >> (12 * n->side) & YX_PLAYER_STOCK;
    for (int v = 0; v < 4; v++) {
        if (!(st >> (3 * v) & 7)) continue;
        for (uint64_t s = targets; s; s &= s - 1) out[count++] = YX_PLACE | v << 6 | lowest64(s);
    }
    return count;
}

static int core_search_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)ev;
    return core_legal_moves(pos, out);
}

/* the evaluation keeps the default order (Evaluator.order_moves) */
static int core_order_moves(CorePos *pos, CoreEval *ev, core_move *moves, int n) {
    (void)pos, (void)ev, (void)moves;
    return n;
}

static void core_push(CorePos *pos, core_move move) {
    YxNode *n = &pos->node[pos->top + 1];
    *n = pos->node[pos->top];
    pos->top++;
    int side = n->side;
    if (move < YX_PLACE) { /* a Totem move: the same player now places */
        n->key ^= yx.z_totem[n->totem] ^ yx.z_totem[move] ^ yx.z_turn[2 * side] ^
                  yx.z_turn[2 * side + 1];
        n->totem = (int8_t)move;
        n->phase = 1;
        return;
    }
    int s = move & 63, v = move >> 6 & 3;
    uint64_t bit = yx_bit(s);
    n->lo |= (uint64_t)(v & 1) << s;
    n->hi |= (uint64_t)(v >> 1) << s;
    n->stock -= 1 << (3 * (4 * side + v));
    n->key ^= yx.z_piece[side][v][s] ^ yx.z_turn[2 * side + 1] ^ yx.z_turn[2 * (side ^ 1)];
    n->side = (int8_t)(side ^ 1);
    n->phase = 0;
    /* E1: the terminal test, once, for the new phase t position */
    if (side) {
        n->black |= bit;
        n->over = (int8_t)!yx_can_move(n->totem, n->white, n->black);
    } else {
        n->white |= bit;
        n->over = (int8_t)!yx_can_move(n->totem, n->black, n->white);
    }
}

static void core_pop(CorePos *pos) { pos->top--; }

/* -- the evaluation -------------------------------------------------------------------------- */

/* the sum of the values of the pieces p (planes plo, phi) on the squares r */
static inline int64_t yx_sum(uint64_t r, uint64_t p, uint64_t plo, uint64_t phi) {
    return popcount64(r & p) + popcount64(r & plo) + 2 * popcount64(r & phi);
}

static inline int yx_max_value(int st) { /* the highest value in one player's stock, or 0 */
    for (int v = 3; v >= 0; v--)
        if (st >> (3 * v) & 7) return v + 1;
    return 0;
}

/* _result: the proven score of a finished game from the sum and count differences (E5) */
static inline int64_t yx_result(int64_t diff, int64_t cdiff) {
    if (diff > 0 || (diff == 0 && cdiff > 0)) return yx.solved + 100 * diff + 10 * cdiff;
    if (diff == 0 && cdiff == 0) return 0;
    return -yx.solved + 100 * diff + 10 * cdiff;
}

/* The endgame solver (_Solver): alpha-beta over whole turns, values 20 * sum difference +
 * count difference for the side to act. Its node count and cap must be the reference's exactly
 * (past the cap the heuristic answers), so it visits the same nodes in the same order:
 * destinations and squares by rising number, values from the highest down. */
typedef struct {
    int64_t nodes, cap;
    int over; /* the cap was passed: every caller unwinds */
} YxSolver;

static int64_t yx_solve_turn(YxSolver *s, uint64_t me, uint64_t me_lo, uint64_t me_hi,
                             uint64_t opp, uint64_t opp_lo, uint64_t opp_hi, int t, int st_me,
                             int st_opp, int64_t alpha, int64_t beta);

/* the value of a phase p position: the Totem on t, empty the empty squares */
static inline int64_t yx_solve_place(YxSolver *s, uint64_t me, uint64_t me_lo, uint64_t me_hi,
                                     uint64_t opp, uint64_t opp_lo, uint64_t opp_hi, int t,
                                     uint64_t empty, int st_me, int st_opp, int64_t alpha,
                                     int64_t beta) {
    uint64_t targets = yx.nb[t] & empty;
    if (!targets) targets = empty;
    int64_t best = -yx.max_eval;
    for (; targets; targets &= targets - 1) {
        uint64_t sb = targets & (~targets + 1);
        for (int v = 3; v >= 0; v--) {
            if (!(st_me >> (3 * v) & 7)) continue;
            int64_t value = -yx_solve_turn(s, opp, opp_lo, opp_hi, me | sb,
                                           me_lo | ((v & 1) ? sb : 0), me_hi | ((v >> 1) ? sb : 0),
                                           t, st_opp, st_me - (1 << (3 * v)), -beta, -alpha);
            if (s->over) return 0;
            if (value > best) {
                best = value;
                if (value > alpha) {
                    alpha = value;
                    if (value >= beta) return best;
                }
            }
        }
    }
    return best;
}

/* the value of a phase t position (fail-soft) */
CORE_HOT static int64_t yx_solve_turn(YxSolver *s, uint64_t me, uint64_t me_lo, uint64_t me_hi,
                                      uint64_t opp, uint64_t opp_lo, uint64_t opp_hi, int t,
                                      int st_me, int st_opp, int64_t alpha, int64_t beta) {
    if (++s->nodes > s->cap) {
        s->over = 1;
        return 0;
    }
    uint64_t dests = yx_dests(t, me, opp);
    if (!dests) { /* E1: shut in, the region scores */
        uint64_t r = yx.nb[t];
        int64_t mine = popcount64(r & me), theirs = popcount64(r & opp);
        int64_t diff = yx_sum(r, me, me_lo, me_hi) - yx_sum(r, opp, opp_lo, opp_hi);
        return 20 * diff + mine - theirs;
    }
    uint64_t empty = YX_FULL & ~(me | opp | yx_bit(t));
    int64_t best = -yx.max_eval;
    for (; dests; dests &= dests - 1) {
        int d = lowest64(dests);
        /* the Totem leaves t (now empty) for d */
        uint64_t empty_d = (empty & ~yx_bit(d)) | yx_bit(t);
        int64_t value = yx_solve_place(s, me, me_lo, me_hi, opp, opp_lo, opp_hi, d, empty_d,
                                       st_me, st_opp, alpha, beta);
        if (s->over) return 0;
        if (value > best) {
            best = value;
            if (value > alpha) {
                alpha = value;
                if (value >= beta) break;
            }
        }
    }
    return best;
}

/* YoxiiEvaluator._solve: the proven score, or 0 with *found = 0 past the cap; cached by key
 * like the reference (a position's result does not depend on the cache) */
static int64_t yx_solve(CoreEval *ev, uint64_t key, uint64_t me, uint64_t me_lo, uint64_t me_hi,
                        uint64_t opp, uint64_t opp_lo, uint64_t opp_hi, int t, uint64_t empty,
                        int st_me, int st_opp, int phase, int *found) {
    YxCacheEntry *e = &ev->cache[key & (YX_CACHE_SLOTS - 1)];
    if (e->known && e->key == key) {
        *found = e->known == 1;
        return e->value;
    }
    YxSolver s = {0, ev->solve_nodes, 0};
    int64_t v;
    if (phase)
        v = yx_solve_place(&s, me, me_lo, me_hi, opp, opp_lo, opp_hi, t, empty, st_me, st_opp,
                           -yx.wide, yx.wide);
    else
        v = yx_solve_turn(&s, me, me_lo, me_hi, opp, opp_lo, opp_hi, t, st_me, st_opp, -yx.wide,
                          yx.wide);
    e->key = key;
    if (s.over) {
        e->known = 2;
        e->value = 0;
        *found = 0;
        return 0;
    }
    int64_t diff = floor_div(v + 10, 20); /* |count difference| <= 8 < 10 */
    int64_t result = yx_result(diff, v - 20 * diff);
    e->known = 1;
    e->value = (int32_t)result;
    *found = 1;
    return result;
}

/* the closure of the region nb when I add `added` points in `counted` pieces (0 or 1) */
static inline int64_t yx_closure(uint64_t nb, uint64_t me, uint64_t me_lo, uint64_t me_hi,
                                 uint64_t opp, uint64_t opp_lo, uint64_t opp_hi, int added,
                                 int counted) {
    int64_t mine = popcount64(nb & me), theirs = popcount64(nb & opp);
    int64_t diff = yx_sum(nb, me, me_lo, me_hi) + added - yx_sum(nb, opp, opp_lo, opp_hi);
    return yx_result(diff, mine + counted - theirs);
}

static int64_t yx_stock_worth(const CoreEval *ev, int st) {
    return ev->stock[0] * (st & 7) + ev->stock[1] * (st >> 3 & 7) + ev->stock[2] * (st >> 6 & 7) +
           ev->stock[3] * (st >> 9 & 7);
}

CORE_HOT static int core_evaluate(CorePos *pos, CoreEval *ev) {
    const YxNode *n = yx_top(pos);
    int t = n->totem, phase = n->phase;
    uint64_t me, opp;
    int st_me, st_opp;
    if (n->side) {
        me = n->black, opp = n->white;
        st_me = n->stock >> 12 & YX_PLAYER_STOCK, st_opp = n->stock & YX_PLAYER_STOCK;
    } else {
        me = n->white, opp = n->black;
        st_me = n->stock & YX_PLAYER_STOCK, st_opp = n->stock >> 12 & YX_PLAYER_STOCK;
    }
    uint64_t me_lo = me & n->lo, me_hi = me & n->hi, opp_lo = opp & n->lo, opp_hi = opp & n->hi;
    uint64_t empty = YX_FULL & ~(me | opp | yx_bit(t));
    int64_t floor_ = -yx.max_eval;

    if (phase == 0) {
        /* my one-turn closures: each destination with at most one empty neighbour left */
        uint64_t dests = yx_dests(t, me, opp);
        int vmax = yx_max_value(st_me);
        int all_close = 1;
        int64_t best = -yx.max_eval;
        uint64_t after = empty | yx_bit(t); /* the Totem leaves t */
        for (; dests; dests &= dests - 1) {
            int d = lowest64(dests);
            uint64_t nb = yx.nb[d];
            uint64_t left = nb & after;
            int added, counted;
            if (left & (left - 1)) {
                all_close = 0;
                continue;
            }
            if (left) { /* forced placement on the last empty neighbour */
                if (yx_dests(d, opp, me | left)) {
                    all_close = 0;
                    continue;
                }
                added = vmax, counted = 1;
            } else { /* jumped into a full pocket: I place anywhere */
                uint64_t land = yx_dests(d, opp, me);
                if (land & (land - 1)) {
                    all_close = 0;
                    continue;
                }
                if (land) all_close = 0; /* closing is my choice (I block the landing) */
                added = counted = 0;
            }
            int64_t r = yx_closure(nb, me, me_lo, me_hi, opp, opp_lo, opp_hi, added, counted);
            if (r > best) best = r;
        }
        if (best > 0 || all_close) return (int)best;
        floor_ = best;
    } else {
        /* my placement: a forced closure? */
        uint64_t nb = yx.nb[t];
        uint64_t left = nb & empty;
        if (!(left & (left - 1))) {
            int closes, chosen, added, counted;
            if (left) {
                closes = !yx_dests(t, opp, me | left);
                added = yx_max_value(st_me), counted = 1;
                chosen = 0;
            } else {
                uint64_t land = yx_dests(t, opp, me);
                closes = !(land & (land - 1));
                chosen = land != 0; /* one landing: I may block it, or not */
                added = counted = 0;
            }
            if (closes) {
                int64_t r = yx_closure(nb, me, me_lo, me_hi, opp, opp_lo, opp_hi, added, counted);
                if (!chosen || r > 0) return (int)r;
                floor_ = r;
            }
        }
    }

    if (popcount64(empty) <= yx.solve_empties + phase) {
        int found;
        int64_t solved = yx_solve(ev, n->key, me, me_lo, me_hi, opp, opp_lo, opp_hi, t, empty,
                                  st_me, st_opp, phase, &found);
        if (found) return (int)solved;
    }

    uint64_t r1 = yx.nb[t], r2 = yx.ring2[t], r3 = yx.ring3[t];
    int64_t mine1 = popcount64(r1 & me), theirs1 = popcount64(r1 & opp);
    int64_t h = ev->ring1 * (yx_sum(r1, me, me_lo, me_hi) - yx_sum(r1, opp, opp_lo, opp_hi)) +
                ev->ring2 * (yx_sum(r2, me, me_lo, me_hi) - yx_sum(r2, opp, opp_lo, opp_hi)) +
                ev->ring3 * (yx_sum(r3, me, me_lo, me_hi) - yx_sum(r3, opp, opp_lo, opp_hi)) +
                ev->count1 * (mine1 - theirs1) +
                ev->mobility *
                    (popcount64(yx_dests(t, me, opp)) - popcount64(yx_dests(t, opp, me))) +
                yx_stock_worth(ev, st_me) - yx_stock_worth(ev, st_opp) +
                (phase ? ev->tempo_place : ev->tempo_totem);
    if (h > yx.heuristic_cap)
        h = yx.heuristic_cap;
    else if (h < -yx.heuristic_cap)
        h = -yx.heuristic_cap;
    return (int)(h > floor_ ? h : floor_);
}

static int core_is_quiet(CorePos *pos, CoreEval *ev) {
    (void)pos, (void)ev;
    return 1;
}

static int core_noisy_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)pos, (void)ev, (void)out;
    return 0;
}

static void core_eval_reset(CoreEval *ev) { memset(ev->cache, 0, sizeof ev->cache); }

/* -- init: geometry, checked against the reference, and the reference's numbers --------------- */

/* N, NE, E, SE, S, SW, W, NW as (file step, rank step): games.yoxii.DIRECTIONS */
static const int YX_DIRS[8][2] = {{0, 1},  {1, 1},   {1, 0},  {1, -1},
                                  {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}};

static int yx_on_board(int f, int r) {
    if (f < 0 || f > 6 || r < 0 || r > 6) return 0;
    int a = f < 6 - f ? f : 6 - f, b = r < 6 - r ? r : 6 - r;
    return a + b >= 2;
}

/* square number of (file, rank index), or -1 off the board: rank 7 down to 1, file a to g */
static int yx_square(int f, int r) {
    if (!yx_on_board(f, r)) return -1;
    int s = 0;
    for (int rr = 6; rr > r; rr--)
        for (int ff = 0; ff < 7; ff++) s += yx_on_board(ff, rr);
    for (int ff = 0; ff < f; ff++) s += yx_on_board(ff, r);
    return s;
}

/* the attribute `name` of module `mod` (a new reference), or NULL with an exception */
static PyObject *yx_attr(PyObject *mod, const char *name) {
    return PyObject_GetAttrString(mod, name);
}

/* PySequence_Fast with a message naming the table when obj is not a sequence */
static PyObject *yx_fast(PyObject *obj, const char *name) {
    if (!PySequence_Check(obj)) {
        PyErr_Format(PyExc_ValueError, "%s: a sequence was expected, not %.80s", name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PySequence_Fast(obj, name);
}

/* a sequence of n bitboards of the reference, compared with ours */
static int yx_check_masks(PyObject *mod, const char *name, const uint64_t *ours, int n) {
    PyObject *seq = yx_attr(mod, name);
    if (!seq) return -1;
    PyObject *fast = yx_fast(seq, name);
    Py_DECREF(seq);
    if (!fast) return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %d entries were expected", name, n);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        u128 v;
        if (core_read_bits(PySequence_Fast_GET_ITEM(fast, i), YX_N, name, &v) < 0)
            rc = -1;
        else if ((uint64_t)v != ours[i]) {
            PyErr_Format(PyExc_ValueError, "%s: entry %d differs from the board's geometry", name,
                         i);
            rc = -1;
        }
    }
    Py_DECREF(fast);
    return rc;
}

/* games.yoxii.RAYS[s][d]: the squares from s outwards in direction d, compared with ours */
static int yx_check_rays(PyObject *mod, const int8_t rays[YX_N][8][7], const int8_t len[YX_N][8]) {
    PyObject *seq = yx_attr(mod, "RAYS");
    if (!seq) return -1;
    PyObject *fast = yx_fast(seq, "RAYS");
    Py_DECREF(seq);
    if (!fast) return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(fast) != YX_N) {
        PyErr_Format(PyExc_ValueError, "RAYS: %d entries were expected", YX_N);
        rc = -1;
    }
    for (int s = 0; rc == 0 && s < YX_N; s++) {
        long dirs[8][8];
        PyObject *per = yx_fast(PySequence_Fast_GET_ITEM(fast, s), "RAYS");
        if (!per) {
            rc = -1;
            break;
        }
        if (PySequence_Fast_GET_SIZE(per) != 8) {
            PyErr_SetString(PyExc_ValueError, "RAYS: 8 directions per square were expected");
            rc = -1;
        }
        for (int d = 0; rc == 0 && d < 8; d++) {
            if (core_read_table(PySequence_Fast_GET_ITEM(per, d), len[s][d], 0, YX_N - 1, "RAYS",
                                dirs[d]) < 0) {
                rc = -1;
                break;
            }
            for (int i = 0; i < len[s][d]; i++)
                if (dirs[d][i] != rays[s][d][i]) {
                    PyErr_Format(PyExc_ValueError,
                                 "RAYS: the ray of square %d, direction %d, differs from the "
                                 "board's geometry",
                                 s, d);
                    rc = -1;
                    break;
                }
        }
        Py_DECREF(per);
    }
    Py_DECREF(fast);
    return rc;
}

static int yx_read_u64s(PyObject *seq, Py_ssize_t n, const char *what, uint64_t *out) {
    PyObject *fast = yx_fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %zd entries were expected", what, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        u128 v;
        if (core_read_bits(PySequence_Fast_GET_ITEM(fast, i), 64, what, &v) < 0) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (uint64_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* the Zobrist numbers of games.yoxii: Z_PIECE[colour][value - 1][square], Z_TOTEM, Z_TURN */
static int yx_read_zobrist(PyObject *mod, YxTables *tb) {
    PyObject *zp = yx_attr(mod, "Z_PIECE");
    if (!zp) return -1;
    PyObject *fast = yx_fast(zp, "Z_PIECE");
    Py_DECREF(zp);
    if (!fast) return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(fast) != 2) {
        PyErr_SetString(PyExc_ValueError, "Z_PIECE: 2 colours were expected");
        rc = -1;
    }
    for (int c = 0; rc == 0 && c < 2; c++) {
        PyObject *per = yx_fast(PySequence_Fast_GET_ITEM(fast, c), "Z_PIECE");
        if (!per) {
            rc = -1;
            break;
        }
        if (PySequence_Fast_GET_SIZE(per) != 4) {
            PyErr_SetString(PyExc_ValueError, "Z_PIECE: 4 values per colour were expected");
            rc = -1;
        }
        for (int v = 0; rc == 0 && v < 4; v++)
            rc = yx_read_u64s(PySequence_Fast_GET_ITEM(per, v), YX_N, "Z_PIECE",
                              tb->z_piece[c][v]);
        Py_DECREF(per);
    }
    Py_DECREF(fast);
    if (rc < 0) return -1;
    PyObject *zt = yx_attr(mod, "Z_TOTEM");
    if (!zt) return -1;
    rc = yx_read_u64s(zt, YX_N, "Z_TOTEM", tb->z_totem);
    Py_DECREF(zt);
    if (rc < 0) return -1;
    PyObject *zu = yx_attr(mod, "Z_TURN");
    if (!zu) return -1;
    rc = yx_read_u64s(zu, 4, "Z_TURN", tb->z_turn);
    Py_DECREF(zu);
    return rc;
}

/* a module constant that must equal `expected` (the layout this file is written for) */
static int yx_check_const(PyObject *mod, const char *name, long expected) {
    long v;
    if (core_attr_int(mod, name, expected, expected, &v) < 0) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: %ld was expected", name, expected);
        }
        return -1;
    }
    return 0;
}

/* the geometry, checked against games.yoxii and bots.eval.yoxii */
static int yx_geometry(PyObject *games_mod, PyObject *eval_mod, YxTables *tb) {
    int sq[7][7], file[YX_N], rank[YX_N];
    for (int f = 0; f < 7; f++)
        for (int r = 0; r < 7; r++) {
            sq[f][r] = yx_square(f, r);
            if (sq[f][r] >= 0) file[sq[f][r]] = f, rank[sq[f][r]] = r;
        }
    int8_t rays[YX_N][8][7], len[YX_N][8];
    memset(tb->nb, 0, sizeof tb->nb);
    memset(tb->beyond, 0, sizeof tb->beyond);
    memset(tb->up, 0, sizeof tb->up);
    for (int s = 0; s < YX_N; s++) {
        for (int d = 0; d < 8; d++) {
            int f = file[s], r = rank[s], k = 0;
            while (yx_on_board(f + YX_DIRS[d][0], r + YX_DIRS[d][1])) {
                f += YX_DIRS[d][0], r += YX_DIRS[d][1];
                rays[s][d][k++] = (int8_t)sq[f][r];
            }
            len[s][d] = (int8_t)k;
            if (!k) continue;
            int n = rays[s][d][0];
            tb->nb[s] |= yx_bit(n);
            tb->up[s][n] = (uint8_t)(n > s);
            for (int i = 1; i < k; i++) tb->beyond[s][n] |= yx_bit(rays[s][d][i]);
        }
        tb->ring2[s] = tb->ring3[s] = 0;
        for (int q = 0; q < YX_N; q++) {
            int df = abs(file[q] - file[s]), dr = abs(rank[q] - rank[s]);
            int dist = df > dr ? df : dr;
            if (dist == 2) tb->ring2[s] |= yx_bit(q);
            if (dist == 3) tb->ring3[s] |= yx_bit(q);
        }
    }
    uint64_t full = YX_FULL;
    if (yx_check_const(games_mod, "N_SQUARES", YX_N) < 0 ||
        yx_check_const(games_mod, "PLACE", YX_PLACE) < 0 ||
        yx_check_const(games_mod, "_STOCK_BITS", 3) < 0 ||
        yx_check_const(games_mod, "_PLAYER_BITS", 12) < 0 ||
        yx_check_const(games_mod, "PH_T", 0) < 0 || yx_check_const(games_mod, "PH_P", 1) < 0 ||
        yx_check_masks(games_mod, "NEIGHBOURS_MASK", tb->nb, YX_N) < 0 ||
        yx_check_rays(games_mod, (const int8_t(*)[8][7])rays, (const int8_t(*)[8])len) < 0 ||
        yx_check_masks(eval_mod, "_RING2", tb->ring2, YX_N) < 0 ||
        yx_check_masks(eval_mod, "_RING3", tb->ring3, YX_N) < 0)
        return -1;
    PyObject *fm = yx_attr(games_mod, "FULL_MASK");
    if (!fm) return -1;
    u128 v;
    int rc = core_read_bits(fm, YX_N, "FULL_MASK", &v);
    Py_DECREF(fm);
    if (rc < 0) return -1;
    if ((uint64_t)v != full) {
        PyErr_SetString(PyExc_ValueError, "FULL_MASK: not the 37 squares of the board");
        return -1;
    }
    return 0;
}

/* the constants of the evaluation */
static int yx_eval_constants(PyObject *eval_mod, YxTables *tb) {
    long solved, cap, empties, wide, max_eval;
    if (core_attr_int(eval_mod, "SOLVED", 1, 100000000, &solved) < 0 ||
        core_attr_int(eval_mod, "HEURISTIC_CAP", 0, 100000000, &cap) < 0 ||
        core_attr_int(eval_mod, "SOLVE_EMPTIES", -1, YX_N, &empties) < 0 ||
        core_attr_int(eval_mod, "_WIDE", 1, 100000000, &wide) < 0 ||
        core_attr_int(eval_mod, "MAX_EVAL", 1, 100000000, &max_eval) < 0)
        return -1;
    tb->solved = solved, tb->heuristic_cap = cap, tb->solve_empties = empties;
    tb->wide = wide, tb->max_eval = max_eval;
    return 0;
}

/* A table of the wrong type or a missing one is damage like any other: its TypeError or
 * AttributeError (whose message names the table) becomes a ValueError with that message. */
static void yx_as_value_error(void) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_AttributeError))
        return;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *value = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
#endif
    PyObject *text = value ? PyObject_Str(value) : NULL;
    if (text)
        PyErr_Format(PyExc_ValueError, "%U", text);
    else
        PyErr_SetString(PyExc_ValueError, "yoxii: a damaged table");
    Py_XDECREF(text);
    Py_XDECREF(value);
}

static int core_init(PyObject *module) {
    (void)module;
    static YxTables fresh; /* filled whole before it replaces the live tables */
    PyObject *games_mod = PyImport_ImportModule("games.yoxii");
    if (!games_mod) return -1;
    PyObject *eval_mod = PyImport_ImportModule("bots.eval.yoxii");
    if (!eval_mod) {
        Py_DECREF(games_mod);
        return -1;
    }
    int rc = -1;
    PyObject *state_type = NULL, *eval_type = NULL;
    if (yx_geometry(games_mod, eval_mod, &fresh) < 0 || yx_read_zobrist(games_mod, &fresh) < 0 ||
        yx_eval_constants(eval_mod, &fresh) < 0)
        goto done;
    state_type = yx_attr(games_mod, "YoxiiState");
    eval_type = state_type ? yx_attr(eval_mod, "YoxiiEvaluator") : NULL;
    if (!eval_type) goto done;
    if (!PyType_Check(state_type) || !PyType_Check(eval_type)) {
        PyErr_SetString(PyExc_ValueError, "YoxiiState, YoxiiEvaluator: classes were expected");
        goto done;
    }
    yx = fresh;
    Py_XSETREF(yx_state_type, state_type);
    Py_XSETREF(yx_evaluator_type, eval_type);
    state_type = eval_type = NULL;
    rc = 0;
done:
    Py_XDECREF(state_type);
    Py_XDECREF(eval_type);
    Py_DECREF(games_mod);
    Py_DECREF(eval_mod);
    if (rc < 0) yx_as_value_error();
    return rc;
}

/* -- loading the reference's objects --------------------------------------------------------- */

static uint64_t yx_compute_key(const YxNode *n) {
    uint64_t key = yx.z_turn[2 * n->side + n->phase] ^ yx.z_totem[n->totem];
    for (int c = 0; c < 2; c++)
        for (uint64_t p = c ? n->black : n->white; p; p &= p - 1) {
            int s = lowest64(p);
            int v = (int)(n->lo >> s & 1) | (int)(n->hi >> s & 1) << 1;
            key ^= yx.z_piece[c][v][s];
        }
    return key;
}

static int core_load(CorePos *pos, PyObject *state) {
    if (!yx_state_type) {
        PyErr_SetString(PyExc_RuntimeError, "yoxii: the core is not initialised");
        return -1;
    }
    /* exactly the reference's class: a subclass may have other rules */
    if ((PyObject *)Py_TYPE(state) != yx_state_type) {
        PyErr_Format(PyExc_TypeError, "yoxii: a YoxiiState was expected, not %.80s",
                     Py_TYPE(state)->tp_name);
        return -1;
    }
    u128 white, black, values, key;
    long totem, stock, side, phase, over;
    if (core_attr_bits(state, "_white", YX_N, &white) < 0 ||
        core_attr_bits(state, "_black", YX_N, &black) < 0 ||
        core_attr_bits(state, "_values", 2 * YX_N, &values) < 0 ||
        core_attr_bits(state, "_key", 64, &key) < 0 ||
        core_attr_int(state, "_totem", 0, YX_N - 1, &totem) < 0 ||
        core_attr_int(state, "_stock", 0, (1L << 24) - 1, &stock) < 0 ||
        core_attr_int(state, "_side", 0, 1, &side) < 0 ||
        core_attr_int(state, "_phase", 0, 1, &phase) < 0 ||
        core_attr_int(state, "_over", 0, 1, &over) < 0)
        return -1;
    YxNode n;
    memset(&n, 0, sizeof n);
    n.white = (uint64_t)white, n.black = (uint64_t)black;
    if (n.white & n.black) {
        PyErr_SetString(PyExc_ValueError, "_white, _black: a square holds pieces of both colours");
        return -1;
    }
    if ((n.white | n.black) & yx_bit((int)totem)) {
        PyErr_SetString(PyExc_ValueError, "_totem: the Totem stands on a piece");
        return -1;
    }
    for (int s = 0; s < YX_N; s++) {
        int v = (int)(values >> (2 * s) & 3);
        if (v && !((n.white | n.black) >> s & 1)) {
            PyErr_Format(PyExc_ValueError, "_values: a value on square %d, which has no piece", s);
            return -1;
        }
        n.lo |= (uint64_t)(v & 1) << s;
        n.hi |= (uint64_t)(v >> 1) << s;
    }
    n.stock = (int32_t)stock, n.totem = (int8_t)totem, n.side = (int8_t)side;
    n.phase = (int8_t)phase;
    uint64_t own = side ? n.black : n.white, opp = side ? n.white : n.black;
    n.over = (int8_t)(phase == 0 && !yx_can_move(n.totem, own, opp));
    if (n.over != over) {
        PyErr_SetString(PyExc_ValueError, "_over: does not match the position");
        return -1;
    }
    n.key = yx_compute_key(&n);
    if (n.key != (uint64_t)key) {
        PyErr_SetString(PyExc_ValueError, "_key: does not match the position");
        return -1;
    }
    pos->top = 0;
    pos->node[0] = n;
    return 0;
}

/* a Weights field: bounded so that no sum of the heuristic can overflow */
static int yx_weight(PyObject *weights, const char *name, int64_t *out) {
    long v;
    if (core_attr_int(weights, name, -(1L << 40), 1L << 40, &v) < 0) return -1;
    *out = v;
    return 0;
}

static int core_eval_load(CoreEval *ev, PyObject *evaluator) {
    if (!yx_evaluator_type) {
        PyErr_SetString(PyExc_RuntimeError, "yoxii: the core is not initialised");
        return -1;
    }
    /* exactly the reference's class: a subclass may evaluate otherwise */
    if ((PyObject *)Py_TYPE(evaluator) != yx_evaluator_type) {
        PyErr_Format(PyExc_TypeError, "yoxii: a YoxiiEvaluator was expected, not %.80s",
                     Py_TYPE(evaluator)->tp_name);
        return -1;
    }
    PyObject *weights = PyObject_GetAttrString(evaluator, "weights");
    if (!weights) return -1;
    int rc = -1;
    PyObject *stock = NULL, *solver = NULL;
    if (yx_weight(weights, "ring1", &ev->ring1) < 0 ||
        yx_weight(weights, "ring2", &ev->ring2) < 0 ||
        yx_weight(weights, "ring3", &ev->ring3) < 0 ||
        yx_weight(weights, "count1", &ev->count1) < 0 ||
        yx_weight(weights, "mobility", &ev->mobility) < 0 ||
        yx_weight(weights, "tempo_totem", &ev->tempo_totem) < 0 ||
        yx_weight(weights, "tempo_place", &ev->tempo_place) < 0)
        goto done;
    stock = PyObject_GetAttrString(weights, "stock");
    if (!stock) goto done;
    long st[4];
    if (core_read_table(stock, 4, -(1L << 40), 1L << 40, "weights.stock", st) < 0) goto done;
    for (int v = 0; v < 4; v++) ev->stock[v] = st[v];
    solver = PyObject_GetAttrString(evaluator, "_solver");
    if (!solver) goto done;
    long cap;
    if (core_attr_int(solver, "cap", -(1L << 62), 1L << 62, &cap) < 0) goto done;
    ev->solve_nodes = cap;
    core_eval_reset(ev);
    rc = 0;
done:
    Py_XDECREF(solver);
    Py_XDECREF(stock);
    Py_DECREF(weights);
    return rc;
}

#endif

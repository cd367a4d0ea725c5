/* The rules of Yinsh (games/yinsh.py) and its evaluation (bots/eval/yinsh.py) in C, for the
 * compiled search core (the contract is at the top of common.h). Both variants run here: the
 * target (3 rings, or 1 in blitz) is read from the loaded State.
 *
 * Board layout. Point (q, r) (column q = 0..10 for a..k, row r = 1..11) is bit 11q + r - 1 of
 * a u128. The bits that are not points (holes) are never set, and a step from a point in any
 * of the six directions (+-1 along a column, +-11 along a row, +-12 along a diagonal) lands on
 * its neighbour or on a hole or outside bits 0..127, never on another point (the columns that
 * reach row 11 are not the ones that start at row 1). So neighbours are masked shifts, five
 * points in a line are five bits in an arithmetic progression, and the layout keeps the
 * reference's point order: iterating set bits upwards visits points in the reference's order.
 *
 * Moves are the reference's ints, which name points by their column-major index (a2 = 0):
 * the tables pt_bit and bit_pt convert. Each position keeps a byte per point (empty, marker,
 * ring) for the ring-move walks, its bitboards and key, and the pending rows as the list the
 * last ring move made: the reference filters that list as rows are taken, and the rows left
 * are exactly the listed windows still full, so the list is filtered when read instead. Push
 * saves the small fields in an undo record; pop restores them and the few bytes the move
 * changed.
 */
#ifndef ENGINESRV_CORE_YINSH_H
#define ENGINESRV_CORE_YINSH_H

#include "common.h"

#include <stddef.h>
#include <stdlib.h>

#define CORE_GAME_NAME "yinsh"
#define CORE_MAX_MOVES 160 /* 5 rings x at most 27 ring moves; 123 windows; 85 points */

#define Y_POINTS 85
#define Y_WINDOWS 123
#define Y_WEIGHTS 24
#define Y_HOLE 127 /* a bit that is never a point: the walks' end mark (a blocking "ring") */
#define Y_LIMIT 99999 /* bots.eval.yinsh.LIMIT: MAX_EVAL - 1 */

enum { PH_P, PH_M, PH_N, PH_X, PH_R, PH_XO, PH_RO, PH_E };
enum { CELL_EMPTY, CELL_MARKER, CELL_RING };

#define KIND_SHIFT 14
#define RING_MOVE (1 << KIND_SHIFT)
#define ROW_TAKE (2 << KIND_SHIFT)
#define RING_TAKE (3 << KIND_SHIFT)
#define PASS_MOVE (4 << KIND_SHIFT)
#define LOW14 ((1 << KIND_SHIFT) - 1)

/* -- tables (built by core_init, checked against the reference) ------------------------------ */

typedef struct {
    int8_t pt_bit[Y_POINTS]; /* point -> layout bit */
    int8_t bit_pt[128];      /* layout bit -> point, -1 on holes */
    int8_t q[128], r[128];   /* coordinates of each layout bit */
    u128 board;              /* every point */
    /* per point and direction (reference order: up, down, up-right, down-left, down-right,
     * up-left), the points outwards, ended by Y_HOLE */
    uint8_t ray[128][6][12];
    /* the windows in the reference's order: points, mask, and per point the windows through
     * it (ascending, ended by -1) */
    uint8_t win_pts[Y_WINDOWS][5];
    u128 win_mask[Y_WINDOWS];
    int8_t win_at[128][16];
    /* window starts per axis of row_moves' order (columns, diagonals, rows) and the window
     * of each start */
    u128 starts[3];
    int8_t win_of_start[3][128];
    uint64_t z_ring[2][128], z_mark[2][128], z_flip[128], z_window[2][Y_WINDOWS], z_turn[24];
    u128 centre[3];         /* hex distance <= 3, 2, 1 from f6 */
    int8_t hexdist[Y_POINTS]; /* by point */
} YinshTables;

static YinshTables YT;
static YinshTables YT_build; /* core_init fills this, and copies it to YT only on success */
static PyObject *YINSH_STATE_TYPE = NULL;
static PyObject *YINSH_EVAL_TYPE = NULL;

static const int8_t Y_LOW[11] = {2, 1, 1, 1, 1, 2, 2, 3, 4, 5, 7};
static const int8_t Y_HIGH[11] = {5, 7, 8, 9, 10, 10, 11, 11, 11, 11, 10};
static const int8_t Y_DQ[6] = {0, 0, 1, -1, 1, -1};
static const int8_t Y_DR[6] = {1, -1, 1, -1, 0, 0};
static const int8_t Y_AXIS_OF_DIR[6] = {0, 0, 1, 1, 2, 2}; /* columns, diagonals, rows */
static const int Y_AXIS_STEP[3] = {1, 12, 11};

static inline u128 bit128(int b) { return (u128)1 << b; }

/* -- the position ----------------------------------------------------------------------------- */

typedef struct {
    u128 ring[2], mark[2];
    uint64_t key;
    core_move move;
    int8_t side, phase, rem[2], pool;
    uint8_t nrows[2];
    uint16_t rows_at[2], rows_top;
} YinshUndo;

/* The pending rows' lists live in a stack of bytes: the loaded position's, then one pair per
 * ring move that made rows on the line being played. Such a move is followed by a ring
 * removal before the next ring move, and at most 2 * 3 - 1 rings are removed before the game
 * ends, so eight pairs of full lists always fit. */
#define Y_ROW_ARENA (8 * 2 * Y_WINDOWS)

typedef struct CorePos {
    u128 ring[2], mark[2];
    uint64_t key;
    int side, phase, rem[2], pool, target;
    int depth;
    uint8_t cell[128];
    uint8_t nrows[2];
    uint16_t rows_at[2], rows_top;
    uint8_t row_arena[Y_ROW_ARENA];
    YinshUndo undo[CORE_MAX_DEPTH];
} CorePos;

typedef struct CoreEval {
    /* the weight sets in Weights' field order: standard, blitz, placement */
    int64_t w[3][Y_WEIGHTS];
} CoreEval;

static inline int turn_slot(int side, int phase) { return (side < 0 ? 16 : side * 8) + phase; }

static inline int window_full(u128 markers, int w) {
    return (markers & YT.win_mask[w]) == YT.win_mask[w];
}

/* The pending rows of colour c: the listed windows still full (the reference's tuple). */
static inline int rows_view(const CorePos *pos, int c, uint8_t *out) {
    int n = 0;
    const uint8_t *list = pos->row_arena + pos->rows_at[c];
    for (int i = 0; i < pos->nrows[c]; i++)
        if (window_full(pos->mark[c], list[i])) out[n++] = list[i];
    return n;
}

static inline int has_rows(const CorePos *pos, int c) {
    const uint8_t *list = pos->row_arena + pos->rows_at[c];
    for (int i = 0; i < pos->nrows[c]; i++)
        if (window_full(pos->mark[c], list[i])) return 1;
    return 0;
}

/* Starts of the runs of five set bits along a step (a run of set bits is a line of points). */
static inline __attribute__((always_inline)) u128 five_in_line(u128 m, int s) {
    u128 two = m & m >> s;
    return two & two >> 2 * s & m >> 4 * s;
}

static inline int any_full_window(u128 m) {
    return (five_in_line(m, 1) | five_in_line(m, 11) | five_in_line(m, 12)) != 0;
}

static int core_to_move(const CorePos *pos) { return pos->side; }
static int core_is_terminal(const CorePos *pos) { return pos->phase == PH_E; }
static uint64_t core_key(const CorePos *pos) { return pos->key; }

static int core_winner(const CorePos *pos) {
    return pos->rem[0] > pos->rem[1] ? 0 : pos->rem[1] > pos->rem[0] ? 1 : -1;
}

/* -- move generation -------------------------------------------------------------------------- */

/* The ring moves of the side to act, in the reference's order: rings upwards, directions in
 * order, targets outwards (empty points, then past a run of markers the first empty point). */
static int ring_moves(const CorePos *pos, core_move *out) {
    const uint8_t *cell = pos->cell;
    int n = 0;
    u128 own = pos->ring[pos->side];
    while (own) {
        int o = lowest128(own);
        own &= own - 1;
        core_move base = RING_MOVE | (core_move)YT.bit_pt[o] << 7;
        for (int d = 0; d < 6; d++) {
            const uint8_t *ray = YT.ray[o][d];
            int t = *ray++;
            while (cell[t] == CELL_EMPTY) {
                out[n++] = base | YT.bit_pt[t];
                t = *ray++;
            }
            if (cell[t] == CELL_MARKER) {
                do t = *ray++;
                while (cell[t] == CELL_MARKER);
                if (cell[t] == CELL_EMPTY) out[n++] = base | YT.bit_pt[t];
            }
        }
    }
    return n;
}

static int core_legal_moves(CorePos *pos, core_move *out) {
    int n = 0;
    switch (pos->phase) {
    case PH_M:
    case PH_N:
        n = ring_moves(pos, out);
        if (!n) out[n++] = PASS_MOVE;
        return n;
    case PH_P: {
        u128 free = YT.board & ~(pos->ring[0] | pos->ring[1]);
        while (free) {
            out[n++] = YT.bit_pt[lowest128(free)];
            free &= free - 1;
        }
        return n;
    }
    case PH_X:
    case PH_XO: {
        uint8_t rows[Y_WINDOWS];
        int k = rows_view(pos, pos->side, rows);
        for (int i = 0; i < k; i++) out[n++] = ROW_TAKE | rows[i];
        return n;
    }
    case PH_R:
    case PH_RO: {
        u128 own = pos->ring[pos->side];
        while (own) {
            out[n++] = RING_TAKE | YT.bit_pt[lowest128(own)];
            own &= own - 1;
        }
        return n;
    }
    default:
        return 0;
    }
}

/* -- make and unmake -------------------------------------------------------------------------- */

static inline void begin_ring_move(CorePos *pos, int player) {
    if (pos->pool == 0) {
        pos->side = -1;
        pos->phase = PH_E;
    } else {
        pos->side = player;
        pos->phase = PH_M;
    }
}

static inline void mover_done(CorePos *pos, int mover) {
    int other = mover ^ 1;
    if (has_rows(pos, other)) {
        pos->side = other;
        pos->phase = PH_XO;
    } else {
        begin_ring_move(pos, other);
    }
}

/* The rows a ring move made, as the reference lists them: through each changed point (the
 * origin, then the flipped markers upwards), the windows of that point's colour in window
 * order, each once. */
static void collect_rows(CorePos *pos, int o, u128 flipped) {
    uint8_t seen[2][Y_WINDOWS / 8 + 1] = {{0}};
    uint8_t rows[2][Y_WINDOWS];
    int n[2] = {0, 0};
    int p = o;
    for (;;) {
        int c = (pos->mark[0] >> p & 1) ? 0 : 1;
        for (const int8_t *w = YT.win_at[p]; *w >= 0; w++) {
            if (window_full(pos->mark[c], *w) && !(seen[c][*w >> 3] >> (*w & 7) & 1)) {
                seen[c][*w >> 3] |= (uint8_t)(1 << (*w & 7));
                rows[c][n[c]++] = (uint8_t)*w;
            }
        }
        if (!flipped) break;
        p = lowest128(flipped);
        flipped &= flipped - 1;
    }
    int top = pos->rows_top;
    if (top + n[0] + n[1] > Y_ROW_ARENA) n[0] = n[1] = 0; /* cannot happen (see Y_ROW_ARENA) */
    for (int c = 0; c < 2; c++) {
        pos->rows_at[c] = (uint16_t)top;
        pos->nrows[c] = (uint8_t)n[c];
        memcpy(pos->row_arena + top, rows[c], (size_t)n[c]);
        top += n[c];
    }
    pos->rows_top = (uint16_t)top;
}

static void push_ring_move(CorePos *pos, core_move move, int side) {
    int o = YT.pt_bit[move >> 7 & 0x7F], t = YT.pt_bit[move & 0x7F];
    int dq = YT.q[t] - YT.q[o], dr = YT.r[t] - YT.r[o];
    int span = dq ? (dq > 0 ? dq : -dq) : (dr > 0 ? dr : -dr);
    int step = (t - o) / span;
    uint64_t key = pos->key ^ YT.z_ring[side][o] ^ YT.z_ring[side][t] ^ YT.z_mark[side][o];
    u128 flipped = 0;
    for (int p = o + step; p != t; p += step) {
        if (pos->cell[p] == CELL_MARKER) {
            flipped |= bit128(p);
            key ^= YT.z_flip[p];
        }
    }
    pos->ring[side] ^= bit128(o) | bit128(t);
    pos->mark[side] |= bit128(o);
    pos->mark[0] ^= flipped;
    pos->mark[1] ^= flipped;
    pos->cell[o] = CELL_MARKER;
    pos->cell[t] = CELL_RING;
    pos->pool--;
    pos->key = key;
    /* no row stands before a ring move: most moves make none, which the shifts tell at once */
    if (any_full_window(pos->mark[0]) || any_full_window(pos->mark[1])) {
        collect_rows(pos, o, flipped);
        if (pos->nrows[side]) {
            pos->phase = PH_X;
            return;
        }
    } else {
        pos->nrows[0] = pos->nrows[1] = 0;
    }
    mover_done(pos, side);
}

static void push_take_ring(CorePos *pos, int p, int side, int phase) {
    pos->ring[side] ^= bit128(p);
    pos->cell[p] = CELL_EMPTY;
    pos->key ^= YT.z_ring[side][p];
    pos->rem[side]++;
    if (pos->rem[side] == pos->target) {
        pos->side = -1;
        pos->phase = PH_E;
    } else if (has_rows(pos, side)) {
        pos->phase = phase == PH_R ? PH_X : PH_XO;
    } else if (phase == PH_R) {
        mover_done(pos, side);
    } else {
        begin_ring_move(pos, side);
    }
}

static void core_push(CorePos *pos, core_move move) {
    YinshUndo *u = &pos->undo[pos->depth++];
    u->ring[0] = pos->ring[0];
    u->ring[1] = pos->ring[1];
    u->mark[0] = pos->mark[0];
    u->mark[1] = pos->mark[1];
    u->key = pos->key;
    u->move = move;
    u->side = (int8_t)pos->side;
    u->phase = (int8_t)pos->phase;
    u->rem[0] = (int8_t)pos->rem[0];
    u->rem[1] = (int8_t)pos->rem[1];
    u->pool = (int8_t)pos->pool;
    u->nrows[0] = pos->nrows[0];
    u->nrows[1] = pos->nrows[1];
    u->rows_at[0] = pos->rows_at[0];
    u->rows_at[1] = pos->rows_at[1];
    u->rows_top = pos->rows_top;
    int side = pos->side, phase = pos->phase;
    pos->key ^= YT.z_turn[turn_slot(side, phase)];
    switch (phase) {
    case PH_M:
    case PH_N:
        if (move != PASS_MOVE) {
            push_ring_move(pos, move, side);
        } else if (phase == PH_M) {
            pos->side = side ^ 1;
            pos->phase = PH_N;
        } else {
            pos->side = -1;
            pos->phase = PH_E;
        }
        break;
    case PH_P: {
        int b = YT.pt_bit[move];
        pos->ring[side] |= bit128(b);
        pos->cell[b] = CELL_RING;
        pos->key ^= YT.z_ring[side][b];
        if (popcount128(pos->ring[0] | pos->ring[1]) == 10) {
            pos->side = 0;
            pos->phase = PH_M;
        } else {
            pos->side = side ^ 1;
        }
        break;
    }
    case PH_X:
    case PH_XO: {
        int w = move & LOW14;
        pos->mark[side] ^= YT.win_mask[w];
        for (int i = 0; i < 5; i++) pos->cell[YT.win_pts[w][i]] = CELL_EMPTY;
        pos->key ^= YT.z_window[side][w];
        pos->pool += 5;
        pos->phase = phase == PH_X ? PH_R : PH_RO;
        break;
    }
    default: /* PH_R, PH_RO */
        push_take_ring(pos, YT.pt_bit[move & LOW14], side, phase);
        break;
    }
    pos->key ^= YT.z_turn[turn_slot(pos->side, pos->phase)];
}

static void core_pop(CorePos *pos) {
    const YinshUndo *u = &pos->undo[--pos->depth];
    core_move move = u->move;
    switch (move >> KIND_SHIFT) {
    case 0:
        pos->cell[YT.pt_bit[move]] = CELL_EMPTY;
        break;
    case 1:
        pos->cell[YT.pt_bit[move >> 7 & 0x7F]] = CELL_RING;
        pos->cell[YT.pt_bit[move & 0x7F]] = CELL_EMPTY;
        break;
    case 2:
        for (int i = 0; i < 5; i++) pos->cell[YT.win_pts[move & LOW14][i]] = CELL_MARKER;
        break;
    case 3:
        pos->cell[YT.pt_bit[move & LOW14]] = CELL_RING;
        break;
    default: /* pass */
        break;
    }
    pos->ring[0] = u->ring[0];
    pos->ring[1] = u->ring[1];
    pos->mark[0] = u->mark[0];
    pos->mark[1] = u->mark[1];
    pos->key = u->key;
    pos->side = u->side;
    pos->phase = u->phase;
    pos->rem[0] = u->rem[0];
    pos->rem[1] = u->rem[1];
    pos->pool = u->pool;
    pos->nrows[0] = u->nrows[0];
    pos->nrows[1] = u->nrows[1];
    pos->rows_at[0] = u->rows_at[0];
    pos->rows_at[1] = u->rows_at[1];
    pos->rows_top = u->rows_top;
}

/* -- the evaluation ---------------------------------------------------------------------------- */

/* The fields of bots.eval.yinsh.Terms, in order. */
enum {
    T_REM_W, T_REM_B, T_NEXT, T_POOL, T_TARGET, T_MK_W, T_MK_B, T_MOB_W, T_MOB_B, T_CT_W,
    T_CT_B, T_C3_W, T_C3_B, T_C2_W, T_C2_B, T_C1_W, T_C1_B, T_K2_W, T_K2_B, T_K3_W, T_K3_B,
    T_K3X_W, T_K3X_B, T_K4_W, T_K4_B, T_K4F_W, T_K4F_B, T_T1_W, T_T1_B, T_COUNT
};

/* _disjoint_rows: how many of the rows can be taken one after the other (greedy, in the order
 * of the windows, whatever the order the rows are listed in). */
static int disjoint_rows(const CorePos *pos, int c) {
    u128 pending = 0, used = 0;
    int count = 0;
    const uint8_t *list = pos->row_arena + pos->rows_at[c];
    for (int i = 0; i < pos->nrows[c]; i++)
        if (window_full(pos->mark[c], list[i])) pending |= (u128)1 << list[i];
    while (pending) {
        int w = lowest128(pending);
        pending &= pending - 1;
        if (!(used & YT.win_mask[w])) {
            used |= YT.win_mask[w];
            count++;
        }
    }
    return count;
}

/* Per window start of one axis, a colour's markers in the window as bits b2 b1 b0 (a
 * bit-sliced adder over five shifted copies) and whether it has any there. The helpers below
 * are inlined with constant steps, so the shifts are by constants. */
typedef struct {
    u128 b0, b1, b2, any;
} WindowSums;

#define Y_INLINE static inline __attribute__((always_inline))

Y_INLINE void window_sums(u128 m, int s, u128 starts, WindowSums *out) {
    u128 x1 = m >> s, x2 = m >> 2 * s, x3 = m >> 3 * s, x4 = m >> 4 * s;
    u128 t = m ^ x1;
    u128 s1 = t ^ x2;
    u128 c1 = (m & x1) | (t & x2);
    t = s1 ^ x3;
    u128 c2 = (s1 & x3) | (t & x4);
    out->b0 = (t ^ x4) & starts;
    out->b1 = (c1 ^ c2) & starts;
    out->b2 = c1 & c2 & starts;
    out->any = (m | x1 | x2 | x3 | x4) & starts;
}

/* The window counts of both colours: two, three (open, mixed), four (open, flip), ring
 * threats. */
typedef struct {
    int64_t k2[2], k3o[2], k3x[2], k4o[2], k4f[2], t1[2];
} WindowCounts;

Y_INLINE void axis_counts(const u128 *mark, const u128 *own_u, int s, u128 starts,
                          WindowCounts *k) {
    WindowSums sum[2];
    window_sums(mark[0], s, starts, &sum[0]);
    window_sums(mark[1], s, starts, &sum[1]);
    for (int c = 0; c < 2; c++) {
        const WindowSums *w = &sum[c];
        u128 opp = sum[c ^ 1].any;
        u128 k3 = w->b1 & w->b0;
        u128 k4 = w->b2 & ~w->b0;
        u128 four_open = k4 & ~opp;
        k->k2[c] += popcount128(w->b1 & ~w->b0 & ~opp);
        k->k3o[c] += popcount128(k3 & ~opp);
        k->k3x[c] += popcount128(k3 & opp);
        k->k4o[c] += popcount128(four_open);
        k->k4f[c] += popcount128(k4 & opp);
        if (four_open) k->t1[c] += popcount128(four_open & five_in_line(own_u[c], s));
    }
}

/* A ring's neighbour one step away (s > 0 up the bits, else down). */
Y_INLINE void ring_neighbours(u128 rings, u128 markers, int s, u128 *adj, int *contact) {
    u128 n = s > 0 ? rings << s : rings >> -s;
    *adj |= n;
    *contact += popcount128(n & markers);
}

/* _counts: every feature of bots/eval/yinsh.py for both colours (Terms' order). */
CORE_HOT static void yinsh_counts(const CorePos *pos, int64_t *t) {
    u128 wm = pos->mark[0], bm = pos->mark[1], wr = pos->ring[0], br = pos->ring[1];
    int rem_w = pos->rem[0], rem_b = pos->rem[1], side = pos->side, phase = pos->phase;
    int next = side;
    if (phase >= PH_X && phase <= PH_RO) {
        rem_w += disjoint_rows(pos, 0);
        rem_b += disjoint_rows(pos, 1);
        if (phase == PH_R || phase == PH_RO) { /* a ring of the side to act goes now */
            if (side)
                rem_b++;
            else
                rem_w++;
        }
        if (phase == PH_X || phase == PH_R) next = side ^ 1;
    }
    t[T_REM_W] = rem_w;
    t[T_REM_B] = rem_b;
    t[T_NEXT] = next;
    t[T_POOL] = pos->pool;
    t[T_TARGET] = pos->target;
    t[T_MK_W] = popcount128(wm);
    t[T_MK_B] = popcount128(bm);

    /* mobility (empty neighbours, each once) and contact (ring and direction next to a
     * marker); the steps of the six directions */
    u128 markers = wm | bm;
    u128 empty = YT.board & ~(markers | wr | br);
    u128 adj[2] = {0, 0};
    int ct[2] = {0, 0};
    const u128 rings[2] = {wr, br};
    for (int c = 0; c < 2; c++) {
        ring_neighbours(rings[c], markers, 1, &adj[c], &ct[c]);
        ring_neighbours(rings[c], markers, -1, &adj[c], &ct[c]);
        ring_neighbours(rings[c], markers, 12, &adj[c], &ct[c]);
        ring_neighbours(rings[c], markers, -12, &adj[c], &ct[c]);
        ring_neighbours(rings[c], markers, 11, &adj[c], &ct[c]);
        ring_neighbours(rings[c], markers, -11, &adj[c], &ct[c]);
    }
    t[T_MOB_W] = popcount128(adj[0] & empty);
    t[T_MOB_B] = popcount128(adj[1] & empty);
    t[T_CT_W] = ct[0];
    t[T_CT_B] = ct[1];
    t[T_C3_W] = popcount128(wr & YT.centre[0]);
    t[T_C3_B] = popcount128(br & YT.centre[0]);
    t[T_C2_W] = popcount128(wr & YT.centre[1]);
    t[T_C2_B] = popcount128(br & YT.centre[1]);
    t[T_C1_W] = popcount128(wr & YT.centre[2]);
    t[T_C1_B] = popcount128(br & YT.centre[2]);

    /* windows, axis by axis (steps of Y_AXIS_STEP) */
    WindowCounts k;
    memset(&k, 0, sizeof k);
    const u128 own_u[2] = {wm | wr, bm | br};
    axis_counts(pos->mark, own_u, 1, YT.starts[0], &k);
    axis_counts(pos->mark, own_u, 12, YT.starts[1], &k);
    axis_counts(pos->mark, own_u, 11, YT.starts[2], &k);
    const int64_t *k2 = k.k2, *k3o = k.k3o, *k3x = k.k3x, *k4o = k.k4o, *k4f = k.k4f;
    const int64_t *t1 = k.t1;
    t[T_K2_W] = k2[0];
    t[T_K2_B] = k2[1];
    t[T_K3_W] = k3o[0];
    t[T_K3_B] = k3o[1];
    t[T_K3X_W] = k3x[0];
    t[T_K3X_B] = k3x[1];
    t[T_K4_W] = k4o[0];
    t[T_K4_B] = k4o[1];
    t[T_K4F_W] = k4f[0];
    t[T_K4F_B] = k4f[1];
    t[T_T1_W] = t1[0];
    t[T_T1_B] = t1[1];
}

/* combine: the value for White of the counts under the weights (not clamped). Weights are at
 * most 2^31 in size and counts a few hundred, so only the ring's worth needs 128 bits. */
static __int128 yinsh_combine(const int64_t *t, const int64_t *w) {
    __int128 ring = w[0];
    if (t[T_POOL] < w[2]) ring += (__int128)w[1] * (w[2] - t[T_POOL]);
    __int128 value = ring * (t[T_REM_W] - t[T_REM_B]);
    value += w[4] * (t[T_MK_W] - t[T_MK_B]) + w[5] * (t[T_MOB_W] - t[T_MOB_B]) +
             w[6] * (t[T_CT_W] - t[T_CT_B]) + w[7] * (t[T_C3_W] - t[T_C3_B]) +
             w[8] * (t[T_C2_W] - t[T_C2_B]) + w[9] * (t[T_C1_W] - t[T_C1_B]);
    /* the window terms weigh by who makes the next ring move ("n") and who does not ("o") */
    int nx = t[T_NEXT] ? 1 : 0, ot = nx ^ 1;
    int64_t rel = w[3] + w[10] * t[T_K2_W + nx] - w[11] * t[T_K2_W + ot] +
                  w[12] * t[T_K3_W + nx] - w[13] * t[T_K3_W + ot] + w[14] * t[T_K3X_W + nx] -
                  w[15] * t[T_K3X_W + ot] + w[16] * t[T_K4_W + nx] - w[17] * t[T_K4_W + ot] +
                  w[18] * t[T_K4F_W + nx] - w[19] * t[T_K4F_W + ot];
    int64_t t1_n = t[T_T1_W + nx], t1_o = t[T_T1_W + ot];
    int64_t rem_n = t[T_REM_W + nx], rem_o = t[T_REM_W + ot];
    if (t1_n) rel += (rem_n == t[T_TARGET] - 1 ? w[22] : w[20]) * t1_n;
    if (t1_o) rel -= (rem_o == t[T_TARGET] - 1 ? w[23] : w[21]) * t1_o;
    return nx ? value - rel : value + rel;
}

static int core_evaluate(CorePos *pos, CoreEval *ev) {
    int64_t t[T_COUNT];
    yinsh_counts(pos, t);
    const int64_t *w = pos->phase == PH_P ? ev->w[2] : pos->target == 1 ? ev->w[1] : ev->w[0];
    __int128 value = yinsh_combine(t, w);
    int v = value > Y_LIMIT ? Y_LIMIT : value < -Y_LIMIT ? -Y_LIMIT : (int)value;
    return pos->side ? -v : v;
}

static int core_is_quiet(CorePos *pos, CoreEval *ev) {
    (void)ev;
    return !(pos->phase >= PH_X && pos->phase <= PH_RO);
}

static void core_eval_reset(CoreEval *ev) { (void)ev; }

/* -- row-completing ring moves (bots.eval.yinsh.row_moves) ------------------------------------ */

typedef struct {
    u128 mine, allm, all_rings;
    core_move *found;
    int n;
} RowSearch;

static inline void found_add(RowSearch *rs, core_move move) {
    for (int i = 0; i < rs->n; i++)
        if (rs->found[i] == move) return;
    rs->found[rs->n++] = move;
}

static inline int dir_to(int o, int d) {
    int dq = YT.q[d] - YT.q[o], dr = YT.r[d] - YT.r[o];
    if (dq == 0) return dr > 0 ? 0 : dr < 0 ? 1 : -1;
    if (dr == 0) return dq > 0 ? 4 : 5;
    if (dq == dr) return dq > 0 ? 2 : 3;
    return -1;
}

/* _jump_over: where the move of the ring on o in direction dir that jumps the marker on d
 * lands, or -1 when no legal move does. */
static int jump_over(const RowSearch *rs, int o, int dir, int d) {
    int jumped = 0;
    for (const uint8_t *ray = YT.ray[o][dir]; *ray != Y_HOLE; ray++) {
        int t = *ray;
        if (rs->all_rings >> t & 1) return -1;
        if (rs->allm >> t & 1) {
            jumped = 1;
            continue;
        }
        if (!jumped) continue;
        /* d lies strictly between o and t: on this ray, before t */
        for (const uint8_t *p = YT.ray[o][dir]; *p != t; p++)
            if (*p == d) return t;
        return -1;
    }
    return -1;
}

/* Case 1: every move of the ring on o but the ones along the window into it. */
static void moves_away(RowSearch *rs, int o, u128 wmask, int axis) {
    core_move base = RING_MOVE | (core_move)YT.bit_pt[o] << 7;
    for (int d = 0; d < 6; d++) {
        const uint8_t *ray = YT.ray[o][d];
        if (*ray == Y_HOLE || (Y_AXIS_OF_DIR[d] == axis && (wmask >> *ray & 1))) continue;
        int jumped = 0;
        for (; *ray != Y_HOLE; ray++) {
            int t = *ray;
            if (rs->all_rings >> t & 1) break;
            if (rs->allm >> t & 1) {
                jumped = 1;
                continue;
            }
            found_add(rs, base | YT.bit_pt[t]);
            if (jumped) break;
        }
    }
}

/* Case 3: a jump of the ring on o along the window over the opponent's markers next to it. */
static void jumps_along(RowSearch *rs, int o, u128 wmask, int axis) {
    for (int d = 2 * axis; d < 2 * axis + 2; d++) {
        int first = YT.ray[o][d][0];
        if (first == Y_HOLE || !(wmask >> first & 1) || (rs->mine >> first & 1)) continue;
        int target = jump_over(rs, o, d, first);
        if (target < 0) continue;
        u128 flipped = 0;
        for (const uint8_t *p = YT.ray[o][d]; *p != target; p++) flipped |= bit128(*p);
        flipped &= rs->allm;
        if ((((rs->mine ^ flipped) | bit128(o)) & wmask) == wmask)
            found_add(rs, RING_MOVE | (core_move)YT.bit_pt[o] << 7 | YT.bit_pt[target]);
    }
}

/* Case 2: a jump of one of the rings across the opponent's marker in the window, on another
 * line. */
static void jumps_across(RowSearch *rs, u128 my_rings, u128 wmask, int axis) {
    int d = highest128(wmask & ~rs->mine);
    while (my_rings) {
        int o = lowest128(my_rings);
        my_rings &= my_rings - 1;
        int dir = dir_to(o, d);
        if (dir < 0 || Y_AXIS_OF_DIR[dir] == axis) continue;
        int target = jump_over(rs, o, dir, d);
        if (target >= 0)
            found_add(rs, RING_MOVE | (core_move)YT.bit_pt[o] << 7 | YT.bit_pt[target]);
    }
}

/* The ring moves of the side to act that complete a row of its colour (phase m or n), in the
 * reference's order. */
static int row_moves(const CorePos *pos, core_move *found) {
    int me = pos->side;
    u128 my_rings = pos->ring[me];
    RowSearch rs = {pos->mark[me], pos->mark[0] | pos->mark[1], pos->ring[0] | pos->ring[1],
                    found, 0};
    u128 y = rs.allm | my_rings;
    u128 cand[3];
    for (int a = 0; a < 3; a++) cand[a] = five_in_line(y, Y_AXIS_STEP[a]) & YT.starts[a];
    if (!(cand[0] | cand[1] | cand[2])) return 0;
    for (int a = 0; a < 3; a++) {
        u128 bits = cand[a];
        while (bits) {
            int start = lowest128(bits);
            bits &= bits - 1;
            u128 wmask = YT.win_mask[YT.win_of_start[a][start]];
            u128 ring_bits = my_rings & wmask;
            int own = popcount128(rs.mine & wmask);
            if (!ring_bits) {
                if (own == 4) jumps_across(&rs, my_rings, wmask, a);
            } else if (!(ring_bits & (ring_bits - 1))) {
                int o = lowest128(ring_bits);
                if (own == 4)
                    moves_away(&rs, o, wmask, a);
                else
                    jumps_along(&rs, o, wmask, a);
            }
        }
    }
    return rs.n;
}

static int core_search_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)ev;
    return core_legal_moves(pos, out);
}

static inline int move_in(const core_move *moves, int n, core_move m) {
    for (int i = 0; i < n; i++)
        if (moves[i] == m) return 1;
    return 0;
}

/* A stable counting sort of moves by rank 0..10 (Python's sort is stable: ties keep their
 * order). */
static void sort_by_rank(core_move *moves, int n, const uint8_t *rank) {
    int start[12] = {0};
    core_move out[CORE_MAX_MOVES];
    for (int i = 0; i < n; i++) start[rank[i] + 1]++;
    for (int r = 1; r < 12; r++) start[r] += start[r - 1];
    for (int i = 0; i < n; i++) out[start[rank[i]]++] = moves[i];
    memcpy(moves, out, (size_t)n * sizeof(core_move));
}

static int core_order_moves(CorePos *pos, CoreEval *ev, core_move *moves, int n) {
    (void)ev;
    int phase = pos->phase;
    if (phase == PH_M || phase == PH_N) {
        core_move found[CORE_MAX_MOVES], out[CORE_MAX_MOVES];
        int nf = row_moves(pos, found);
        if (!nf) return n;
        int k = 0;
        for (int i = 0; i < nf; i++)
            if (move_in(moves, n, found[i])) out[k++] = found[i];
        int first = k;
        for (int i = 0; i < n; i++)
            if (!move_in(out, first, moves[i])) out[k++] = moves[i];
        memcpy(moves, out, (size_t)k * sizeof(core_move));
        return k;
    }
    if (phase == PH_P || phase == PH_R || phase == PH_RO) {
        /* placements from the centre out, ring removals from the edge in */
        uint8_t rank[CORE_MAX_MOVES];
        for (int i = 0; i < n; i++) {
            int d = YT.hexdist[moves[i] & LOW14]; /* 0..10, checked by core_init */
            rank[i] = (uint8_t)(phase == PH_P ? d : 10 - d);
        }
        sort_by_rank(moves, n, rank);
    }
    return n;
}

static int core_noisy_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)ev;
    if (pos->phase != PH_M && pos->phase != PH_N) return 0;
    /* the row-completing moves are legal ring moves by construction: the reference's filter
     * by the legal moves keeps them all */
    return row_moves(pos, out);
}

/* -- building and checking the tables --------------------------------------------------------- */

static int table_error(const char *name, const char *why) {
    PyErr_Format(PyExc_ValueError, "%s: %s", name, why);
    return -1;
}

/* The board's tables; -1 if a table would overflow its room (which the fixed board never
 * does: lines of at most 10 points, 15 windows through a point, 123 windows). */
static int build_geometry(YinshTables *T) {
    memset(T, 0, sizeof *T);
    memset(T->bit_pt, -1, sizeof T->bit_pt);
    memset(T->q, -1, sizeof T->q);
    memset(T->r, -1, sizeof T->r);
    int p = 0;
    for (int q = 0; q < 11; q++) {
        for (int r = Y_LOW[q]; r <= Y_HIGH[q]; r++, p++) {
            int b = 11 * q + r - 1;
            T->pt_bit[p] = (int8_t)b;
            T->bit_pt[b] = (int8_t)p;
            T->q[b] = (int8_t)q;
            T->r[b] = (int8_t)r;
            T->board |= bit128(b);
            int dist = abs(q - 5);
            if (abs(r - 6) > dist) dist = abs(r - 6);
            if (abs(q - r + 1) > dist) dist = abs(q - r + 1);
            T->hexdist[p] = (int8_t)dist;
            for (int k = 0; k < 3; k++)
                if (dist <= 3 - k) T->centre[k] |= bit128(b);
        }
    }
    for (int b = 0; b < 128; b++) {
        for (int d = 0; d < 6; d++) {
            int len = 0;
            if (T->bit_pt[b] >= 0) {
                int q = T->q[b] + Y_DQ[d], r = T->r[b] + Y_DR[d];
                while (q >= 0 && q < 11 && r >= Y_LOW[q] && r <= Y_HIGH[q]) {
                    if (len == 11) return -1;
                    T->ray[b][d][len++] = (uint8_t)(11 * q + r - 1);
                    q += Y_DQ[d];
                    r += Y_DR[d];
                }
            }
            T->ray[b][d][len] = Y_HOLE;
        }
    }
    /* windows as the reference builds them: per axis (columns, rows, diagonals), per line
     * start in point order, the five-point slices of the line */
    static const int8_t axis_dq[3] = {0, 1, 1}, axis_dr[3] = {1, 0, 1};
    static const int8_t axis_dir[3] = {0, 4, 2}, axis_of_ref[3] = {0, 2, 1};
    int nw = 0;
    memset(T->win_of_start, -1, sizeof T->win_of_start);
    for (int ax = 0; ax < 3; ax++) {
        for (int pt = 0; pt < Y_POINTS; pt++) {
            int b = T->pt_bit[pt];
            int pq = T->q[b] - axis_dq[ax], pr = T->r[b] - axis_dr[ax];
            if (pq >= 0 && pq < 11 && pr >= Y_LOW[pq] && pr <= Y_HIGH[pq]) continue;
            int line[12], len = 0;
            line[len++] = b;
            for (const uint8_t *ray = T->ray[b][axis_dir[ax]]; *ray != Y_HOLE; ray++)
                line[len++] = *ray;
            for (int i = 0; i + 5 <= len; i++, nw++) {
                if (nw == Y_WINDOWS) return -1;
                for (int k = 0; k < 5; k++) {
                    T->win_pts[nw][k] = (uint8_t)line[i + k];
                    T->win_mask[nw] |= bit128(line[i + k]);
                }
                T->starts[axis_of_ref[ax]] |= bit128(line[i]);
                T->win_of_start[axis_of_ref[ax]][line[i]] = (int8_t)nw;
            }
        }
    }
    for (int b = 0; b < 128; b++) {
        int k = 0;
        for (int w = 0; w < Y_WINDOWS && T->bit_pt[b] >= 0; w++) {
            if (!(T->win_mask[w] >> b & 1)) continue;
            if (k == 15) return -1;
            T->win_at[b][k++] = (int8_t)w;
        }
        T->win_at[b][k] = -1;
    }
    return nw == Y_WINDOWS ? 0 : -1;
}

/* The table ``name`` of a reference module (a new reference); a missing one is damage. */
static PyObject *table_attr(PyObject *module, const char *name) {
    PyObject *obj = PyObject_GetAttrString(module, name);
    if (!obj && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: missing from the reference", name);
    }
    return obj;
}

/* The attribute ``name`` of ``module`` as a sequence of exactly n items (a new reference). */
static PyObject *table_items(PyObject *module, const char *name, Py_ssize_t n) {
    PyObject *obj = table_attr(module, name);
    if (!obj) return NULL;
    PyObject *fast = PySequence_Fast(obj, name);
    Py_DECREF(obj);
    if (!fast) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: a sequence was expected", name);
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %zd entries were expected", name, n);
        return NULL;
    }
    return fast;
}

/* A table of 64-bit numbers: n of them, or rows x n with rows > 0. */
static int read_u64_table(PyObject *module, const char *name, int rows, int n, uint64_t *out) {
    PyObject *outer = table_items(module, name, rows ? rows : n);
    if (!outer) return -1;
    for (int i = 0; i < (rows ? rows : 1); i++) {
        PyObject *inner = outer;
        if (rows) {
            inner = PySequence_Fast(PySequence_Fast_GET_ITEM(outer, i), name);
            if (!inner || PySequence_Fast_GET_SIZE(inner) != n) {
                Py_XDECREF(inner);
                Py_DECREF(outer);
                PyErr_Clear();
                return table_error(name, "a row of the wrong length");
            }
        }
        for (int k = 0; k < n; k++) {
            u128 v;
            if (core_read_bits(PySequence_Fast_GET_ITEM(inner, k), 64, name, &v) < 0) {
                if (rows) Py_DECREF(inner);
                Py_DECREF(outer);
                PyErr_Clear();
                return table_error(name, "an entry is not a 64-bit number");
            }
            out[i * n + k] = (uint64_t)v;
        }
        if (rows) Py_DECREF(inner);
    }
    Py_DECREF(outer);
    return 0;
}

/* A module constant that must equal ``want``. */
static int check_constant(PyObject *module, const char *name, long want) {
    PyObject *obj = table_attr(module, name);
    if (!obj) return -1;
    long value;
    int rc = core_read_int(obj, want, want, name, &value);
    Py_DECREF(obj);
    return rc;
}

/* A column-major mask of the reference that must equal the layout mask ``want``. */
static int check_mask(const YinshTables *T, PyObject *module, const char *name, u128 want) {
    PyObject *obj = table_attr(module, name);
    if (!obj) return -1;
    u128 v;
    int rc = core_read_bits(obj, Y_POINTS, name, &v);
    Py_DECREF(obj);
    if (rc < 0) return -1;
    u128 layout = 0;
    for (int p = 0; p < Y_POINTS; p++)
        if (v >> p & 1) layout |= bit128(T->pt_bit[p]);
    return layout == want ? 0 : table_error(name, "differs from the board's geometry");
}

/* The reference's geometry and move encoding equal to the ones built here. */
static int check_rules_module(YinshTables *T, PyObject *rules) {
    static const char *const names[] = {"N_POINTS", "N_WINDOWS", "KIND_SHIFT", "RING_MOVE",
                                        "ROW_TAKE", "RING_TAKE", "PASS", "PH_P", "PH_M",
                                        "PH_N", "PH_X", "PH_R", "PH_XO", "PH_RO", "PH_E"};
    const long values[] = {Y_POINTS, Y_WINDOWS, KIND_SHIFT, RING_MOVE, ROW_TAKE, RING_TAKE,
                           PASS_MOVE, PH_P, PH_M, PH_N, PH_X, PH_R, PH_XO, PH_RO, PH_E};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (check_constant(rules, names[i], values[i]) < 0) return -1;
    PyObject *coords = table_items(rules, "COORDS", Y_POINTS);
    if (!coords) return -1;
    for (int p = 0; p < Y_POINTS; p++) {
        int b = T->pt_bit[p];
        PyObject *want = Py_BuildValue("(ii)", T->q[b], T->r[b]);
        int eq = want ? PyObject_RichCompareBool(PySequence_Fast_GET_ITEM(coords, p), want,
                                                 Py_EQ)
                      : -1;
        Py_XDECREF(want);
        if (eq != 1) {
            Py_DECREF(coords);
            PyErr_Clear();
            return table_error("COORDS", "differs from the board's geometry");
        }
    }
    Py_DECREF(coords);
    PyObject *windows = table_items(rules, "WINDOW_POINTS", Y_WINDOWS);
    if (!windows) return -1;
    for (int w = 0; w < Y_WINDOWS; w++) {
        PyObject *pts = PySequence_Fast(PySequence_Fast_GET_ITEM(windows, w), "WINDOW_POINTS");
        int ok = pts && PySequence_Fast_GET_SIZE(pts) == 5;
        for (int k = 0; ok && k < 5; k++) {
            long p;
            ok = core_read_int(PySequence_Fast_GET_ITEM(pts, k), 0, Y_POINTS - 1,
                               "WINDOW_POINTS", &p) == 0 &&
                 T->pt_bit[p] == T->win_pts[w][k];
        }
        Py_XDECREF(pts);
        if (!ok) {
            Py_DECREF(windows);
            PyErr_Clear();
            return table_error("WINDOW_POINTS", "differs from the board's geometry");
        }
    }
    Py_DECREF(windows);

    uint64_t z[2 * Y_POINTS];
    if (read_u64_table(rules, "Z_RING", 2, Y_POINTS, z) < 0) return -1;
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < Y_POINTS; p++) T->z_ring[c][T->pt_bit[p]] = z[c * Y_POINTS + p];
    if (read_u64_table(rules, "Z_MARK", 2, Y_POINTS, z) < 0) return -1;
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < Y_POINTS; p++) T->z_mark[c][T->pt_bit[p]] = z[c * Y_POINTS + p];
    if (read_u64_table(rules, "Z_TURN", 0, 24, T->z_turn) < 0) return -1;
    /* the derived numbers are computed here, and must agree with the reference's */
    if (read_u64_table(rules, "Z_FLIP", 0, Y_POINTS, z) < 0) return -1;
    for (int p = 0; p < Y_POINTS; p++) {
        int b = T->pt_bit[p];
        T->z_flip[b] = T->z_mark[0][b] ^ T->z_mark[1][b];
        if (z[p] != T->z_flip[b]) return table_error("Z_FLIP", "differs from Z_MARK");
    }
    uint64_t zw[2 * Y_WINDOWS];
    if (read_u64_table(rules, "Z_WINDOW", 2, Y_WINDOWS, zw) < 0) return -1;
    for (int c = 0; c < 2; c++) {
        for (int w = 0; w < Y_WINDOWS; w++) {
            uint64_t k = 0;
            for (int i = 0; i < 5; i++) k ^= T->z_mark[c][T->win_pts[w][i]];
            T->z_window[c][w] = k;
            if (zw[c * Y_WINDOWS + w] != k) return table_error("Z_WINDOW", "differs from Z_MARK");
        }
    }
    return 0;
}

static int check_eval_module(YinshTables *T, PyObject *ev) {
    if (check_constant(ev, "LIMIT", Y_LIMIT) < 0) return -1;
    if (check_mask(T, ev, "C3", T->centre[0]) < 0 || check_mask(T, ev, "C2", T->centre[1]) < 0 ||
        check_mask(T, ev, "C1", T->centre[2]) < 0)
        return -1;
    long ranks[Y_POINTS];
    PyObject *obj = table_attr(ev, "_PLACEMENT_RANK");
    if (!obj) return -1;
    int rc = core_read_table(obj, Y_POINTS, 0, 10, "_PLACEMENT_RANK", ranks);
    Py_DECREF(obj);
    if (rc < 0) return -1;
    for (int p = 0; p < Y_POINTS; p++)
        if (ranks[p] != T->hexdist[p])
            return table_error("_PLACEMENT_RANK", "is not the distance from f6");
    obj = table_attr(ev, "_REMOVAL_RANK");
    if (!obj) return -1;
    rc = core_read_table(obj, Y_POINTS, -10, 0, "_REMOVAL_RANK", ranks);
    Py_DECREF(obj);
    if (rc < 0) return -1;
    for (int p = 0; p < Y_POINTS; p++)
        if (ranks[p] != -T->hexdist[p])
            return table_error("_REMOVAL_RANK", "is not minus the distance from f6");
    return 0;
}

/* Bounds the move lists rely on: no point sees more than 27 others along its lines. */
static int check_bounds(const YinshTables *T) {
    for (int p = 0; p < Y_POINTS; p++) {
        int b = T->pt_bit[p], seen = 0;
        for (int d = 0; d < 6; d++)
            for (const uint8_t *ray = T->ray[b][d]; *ray != Y_HOLE; ray++) seen++;
        if (5 * seen > CORE_MAX_MOVES) return table_error("RAYS", "more moves than CORE_MAX_MOVES");
    }
    return 0;
}

/* Any damage found at init as a ValueError (a table missing, or of the wrong type, is damage
 * too: the module is then taken as absent), keeping the message that names the table. */
static int init_failed(void) {
    if (PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *error = PyErr_GetRaisedException();
    PyObject *text = error ? PyObject_Str(error) : NULL;
    Py_XDECREF(error);
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
#endif
    PyErr_Clear();
    if (text) {
        PyErr_SetObject(PyExc_ValueError, text);
        Py_DECREF(text);
    } else {
        PyErr_SetString(PyExc_ValueError, "yinsh core: a table of the reference is damaged");
    }
    return -1;
}

/* Builds every table into YT_build and checks it against the reference modules; only a
 * complete, checked set is copied to YT, so a failed init leaves the tables as they were. */
static int check_tables(YinshTables *T, PyObject *rules, PyObject *ev) {
    if (build_geometry(T) < 0) return table_error("geometry", "does not fit the tables");
    if (check_bounds(T) < 0 || check_rules_module(T, rules) < 0 || check_eval_module(T, ev) < 0)
        return -1;
    return 0;
}

static int core_init(PyObject *module) {
    (void)module;
    PyObject *rules = PyImport_ImportModule("games.yinsh");
    if (!rules) return -1;
    PyObject *ev = PyImport_ImportModule("bots.eval.yinsh");
    if (!ev) {
        Py_DECREF(rules);
        return -1;
    }
    PyObject *state_type = NULL, *eval_type = NULL;
    if (check_tables(&YT_build, rules, ev) == 0) {
        state_type = table_attr(rules, "YinshState");
        eval_type = state_type ? table_attr(ev, "YinshEvaluator") : NULL;
    }
    Py_DECREF(rules);
    Py_DECREF(ev);
    if (!eval_type) {
        Py_XDECREF(state_type);
        return init_failed();
    }
    YT = YT_build;
    PyObject *old_state = YINSH_STATE_TYPE, *old_eval = YINSH_EVAL_TYPE;
    YINSH_STATE_TYPE = state_type;
    YINSH_EVAL_TYPE = eval_type;
    Py_XDECREF(old_state);
    Py_XDECREF(old_eval);
    return 0;
}

/* -- loading ---------------------------------------------------------------------------------- */

static int damaged(const char *field, const char *why) {
    PyErr_Format(PyExc_ValueError, "yinsh state: %s %s", field, why);
    return -1;
}

/* A column-major bitboard slot of the State in the layout. */
static int load_board(PyObject *state, const char *name, u128 *out) {
    u128 v;
    if (core_attr_bits(state, name, Y_POINTS, &v) < 0) return -1;
    u128 layout = 0;
    for (int p = 0; p < Y_POINTS; p++)
        if (v >> p & 1) layout |= bit128(YT.pt_bit[p]);
    *out = layout;
    return 0;
}

/* A pending-rows slot: windows that are full rows of the colour, each once, all of them. */
static int load_rows(CorePos *pos, PyObject *state, const char *name, int c) {
    PyObject *obj = PyObject_GetAttrString(state, name);
    if (!obj) return -1;
    if (!PyTuple_Check(obj)) {
        Py_DECREF(obj);
        PyErr_Format(PyExc_TypeError, "%s: a tuple was expected", name);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(obj);
    int all = 0;
    for (int w = 0; w < Y_WINDOWS; w++) all += window_full(pos->mark[c], w);
    if (n != all) {
        Py_DECREF(obj);
        return damaged(name, "does not list the rows on the board");
    }
    uint8_t seen[Y_WINDOWS] = {0};
    for (Py_ssize_t i = 0; i < n; i++) {
        long w;
        if (core_read_int(PyTuple_GET_ITEM(obj, i), 0, Y_WINDOWS - 1, name, &w) < 0) {
            Py_DECREF(obj);
            return -1;
        }
        if (seen[w] || !window_full(pos->mark[c], (int)w)) {
            Py_DECREF(obj);
            return damaged(name, "does not list the rows on the board");
        }
        seen[w] = 1;
        pos->row_arena[pos->rows_top + i] = (uint8_t)w;
    }
    pos->rows_at[c] = pos->rows_top;
    pos->nrows[c] = (uint8_t)n;
    pos->rows_top = (uint16_t)(pos->rows_top + n);
    Py_DECREF(obj);
    return 0;
}

/* The checks of the reference's position strings (rules §8), on the slots. */
static int check_position(const CorePos *pos) {
    int n_w = popcount128(pos->ring[0]), n_b = popcount128(pos->ring[1]);
    int markers = popcount128(pos->mark[0] | pos->mark[1]);
    u128 a = pos->ring[0], b = pos->ring[1], c = pos->mark[0], d = pos->mark[1];
    if ((a & b) || (a & c) || (a & d) || (b & c) || (b & d) || (c & d))
        return damaged("board", "has two pieces on one point");
    if (markers + pos->pool != 51) return damaged("_pool", "and the markers are not 51");
    if ((pos->side < 0) != (pos->phase == PH_E)) return damaged("_side", "does not fit the phase");
    if (pos->phase == PH_P) {
        if (markers || pos->rem[0] || pos->rem[1])
            return damaged("_phase", "is placement, with markers or rings removed");
        if (!((n_w == n_b && pos->side == 0) || (n_w == n_b + 1 && pos->side == 1)) ||
            n_w + n_b > 9)
            return damaged("_side", "does not fit the rings placed");
    } else if (n_w != 5 - pos->rem[0] || n_b != 5 - pos->rem[1]) {
        return damaged("_rem_w", "does not fit the rings on the board");
    }
    if (pos->phase != PH_E ? pos->rem[0] >= pos->target || pos->rem[1] >= pos->target
                           : pos->rem[0] == pos->target && pos->rem[1] == pos->target)
        return damaged("_rem_w", "does not fit the target and the phase");
    int rows_w = has_rows(pos, 0), rows_b = has_rows(pos, 1);
    if ((pos->phase == PH_M || pos->phase == PH_N) && (pos->pool < 1 || rows_w || rows_b))
        return damaged("_phase", "is a ring move with a row on the board or no marker left");
    if ((pos->phase == PH_X || pos->phase == PH_XO) && !has_rows(pos, pos->side))
        return damaged("_phase", "is a row removal without a row");
    if ((pos->phase == PH_XO || pos->phase == PH_RO) && has_rows(pos, pos->side ^ 1))
        return damaged("_phase", "leaves the opponent's row standing");
    return 0;
}

static uint64_t compute_key(const CorePos *pos) {
    uint64_t key = YT.z_turn[turn_slot(pos->side, pos->phase)];
    for (int c = 0; c < 2; c++) {
        for (u128 x = pos->ring[c]; x; x &= x - 1) key ^= YT.z_ring[c][lowest128(x)];
        for (u128 x = pos->mark[c]; x; x &= x - 1) key ^= YT.z_mark[c][lowest128(x)];
    }
    return key;
}

static int core_load(CorePos *pos, PyObject *state) {
    if (!YINSH_STATE_TYPE) {
        PyErr_SetString(PyExc_RuntimeError, "yinsh: the core's tables are not ready");
        return -1;
    }
    if ((PyObject *)Py_TYPE(state) != YINSH_STATE_TYPE) {
        PyErr_Format(PyExc_TypeError, "yinsh: a games.yinsh.YinshState was expected, not %.80s",
                     Py_TYPE(state)->tp_name);
        return -1;
    }
    long target, side, phase, rem_w, rem_b, pool, game_target;
    PyObject *game = PyObject_GetAttrString(state, "game");
    if (!game) return -1;
    int rc = core_attr_int(game, "target", 1, 3, &game_target);
    Py_DECREF(game);
    if (rc < 0 || core_attr_int(state, "_target", 1, 3, &target) < 0) return -1;
    if (target == 2 || target != game_target)
        return damaged("_target", "is not the game's target (1 or 3)");
    if (core_attr_int(state, "_side", -1, 1, &side) < 0 ||
        core_attr_int(state, "_phase", PH_P, PH_E, &phase) < 0 ||
        core_attr_int(state, "_rem_w", 0, target, &rem_w) < 0 ||
        core_attr_int(state, "_rem_b", 0, target, &rem_b) < 0 ||
        core_attr_int(state, "_pool", 0, 51, &pool) < 0)
        return -1;
    memset(pos, 0, offsetof(CorePos, undo));
    if (load_board(state, "_wr", &pos->ring[0]) < 0 ||
        load_board(state, "_br", &pos->ring[1]) < 0 ||
        load_board(state, "_wm", &pos->mark[0]) < 0 ||
        load_board(state, "_bm", &pos->mark[1]) < 0)
        return -1;
    pos->side = (int)side;
    pos->phase = (int)phase;
    pos->rem[0] = (int)rem_w;
    pos->rem[1] = (int)rem_b;
    pos->pool = (int)pool;
    pos->target = (int)target;
    pos->depth = 0;
    if (load_rows(pos, state, "_rows_w", 0) < 0 || load_rows(pos, state, "_rows_b", 1) < 0 ||
        check_position(pos) < 0)
        return -1;
    u128 key;
    if (core_attr_bits(state, "_key", 64, &key) < 0) return -1;
    pos->key = compute_key(pos);
    if ((uint64_t)key != pos->key) return damaged("_key", "is not the position's key");
    for (int b = 0; b < 128; b++) pos->cell[b] = YT.bit_pt[b] < 0 ? CELL_RING : CELL_EMPTY;
    for (int c = 0; c < 2; c++) {
        for (u128 x = pos->ring[c]; x; x &= x - 1) pos->cell[lowest128(x)] = CELL_RING;
        for (u128 x = pos->mark[c]; x; x &= x - 1) pos->cell[lowest128(x)] = CELL_MARKER;
    }
    return 0;
}

static int core_eval_load(CoreEval *ev, PyObject *evaluator) {
    if (!YINSH_EVAL_TYPE) {
        PyErr_SetString(PyExc_RuntimeError, "yinsh: the core's tables are not ready");
        return -1;
    }
    if ((PyObject *)Py_TYPE(evaluator) != YINSH_EVAL_TYPE) {
        PyErr_Format(PyExc_TypeError,
                     "yinsh: a bots.eval.yinsh.YinshEvaluator was expected, not %.80s",
                     Py_TYPE(evaluator)->tp_name);
        return -1;
    }
    static const char *const names[3] = {"weights", "blitz_weights", "placement_weights"};
    for (int i = 0; i < 3; i++) {
        PyObject *obj = PyObject_GetAttrString(evaluator, names[i]);
        if (!obj) return -1;
        long w[Y_WEIGHTS];
        int rc = core_read_table(obj, Y_WEIGHTS, -2147483647L, 2147483647L, names[i], w);
        Py_DECREF(obj);
        if (rc < 0) return -1;
        for (int k = 0; k < Y_WEIGHTS; k++) ev->w[i][k] = w[k];
    }
    return 0;
}

#endif /* ENGINESRV_CORE_YINSH_H */

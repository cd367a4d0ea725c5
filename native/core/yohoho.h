/* Yohoho! for the compiled search core: the rules of games/yohoho.py and the evaluation of
 * bots/eval/yohoho.py in C, token for token and point for point (the contract is at the top of
 * core/common.h; search.h builds the search on top of it).
 *
 * The board is one u128 per piece kind and colour (77 cells, Jocly's numbering: a1 = 0, row by
 * row, q9 = 76), so every direction is one fixed index shift and the reference's set-wise
 * expressions carry over unchanged. The geometry is computed here and checked against the
 * reference's tables at init; the Zobrist numbers are read from games.yohoho; the weights are
 * read from the evaluator (its Weights; LIMIT and _FAR from bots.eval.yohoho) each time an
 * evaluator is loaded, that is at the start of every search.
 *
 * A position keeps its end-of-game status up to date: every push computes it (every caller
 * asks for it right after a push anyway), every pop restores it from the undo record.
 */
#ifndef ENGINESRV_CORE_YOHOHO_H
#define ENGINESRV_CORE_YOHOHO_H

#include "common.h"

#define CORE_GAME_NAME "yohoho"
#define CORE_MAX_MOVES 160
/* more than any position has: Admiral 5, Galleons 2 x 10, Chebecs 4 x 15, Rock under 30,
 * captures 6 */

enum { YH_CELLS = 77, YH_CAPTURE = 1 << 14, YH_CELL_BITS = 0x7F, YH_SAFE_LIMIT = 5 };
enum { YH_E, YH_NE, YH_NW, YH_W, YH_SW, YH_SE };
enum { YH_ADMIRAL, YH_GALLEON, YH_CHEBEC, YH_ROCK };
enum { YH_GOAL_REACHED, YH_ADMIRAL_TRAPPED, YH_NO_LEGAL_ACTION };
#define YH_ONGOING 0
/* other status codes are the reference's: 1 + 2 * reason + winner seat */

#define YH_MAX_SEQ 66  /* PROG and RACE may be longer than the defaults, up to this */
#define YH_MAX_LAYERS 80 /* a race's layers grow by new cells each turn: never more than 77 */
#define YH_WEIGHT_CAP 1000000000L /* every weight is read within +-this: no int64 overflow */

/* -- tables ------------------------------------------------------------------------------------ */

static const int YH_SHIFT[6] = {1, 9, 8, -1, -9, -8}; /* E NE NW W SW SE: the index change */
static const int YH_DX[6] = {2, 1, -1, -2, -1, 1}, YH_DY[6] = {0, 1, 1, 0, -1, -1};

static u128 yh_nbr[YH_CELLS];      /* the six neighbours: the cells that count for strength */
static u128 yh_ship_nbr[YH_CELLS]; /* the neighbours but the east one: where a ship may step */
static u128 yh_radius2[YH_CELLS];  /* cells within two steps */
static u128 yh_cone_up[YH_CELLS], yh_cone_down[YH_CELLS]; /* the eval's forward cones */
static u128 yh_source[6];          /* per direction, the cells with a neighbour that way */
static u128 yh_goal[2], yh_full;   /* White's goal row (9), Black's (1); all cells */
static int yh_row_of[YH_CELLS];
static int yh_ray_len[YH_CELLS][6];    /* per cell and direction, the cells up to the edge */
static u128 yh_ray_mask[YH_CELLS][6];
static uint64_t yh_z_piece[8][YH_CELLS], yh_z_black, yh_z_first, yh_z_phase2[YH_CELLS];
static PyObject *yh_state_type, *yh_eval_type, *yh_eval_module; /* owned references */

/* the helpers are inlined into the few CORE_HOT entry points, so that their bit counts are
 * compiled into both copies of those */
#define YH_INLINE static inline __attribute__((always_inline))

YH_INLINE u128 yh_bit(int c) { return (u128)1 << c; }

/* one step of every cell of x in a direction (cells without a neighbour that way drop out) */
#define YH_STEP_E(x) (((x) & yh_source[YH_E]) << 1)
#define YH_STEP_NE(x) (((x) & yh_source[YH_NE]) << 9)
#define YH_STEP_NW(x) (((x) & yh_source[YH_NW]) << 8)
#define YH_STEP_W(x) (((x) & yh_source[YH_W]) >> 1)
#define YH_STEP_SW(x) (((x) & yh_source[YH_SW]) >> 9)
#define YH_STEP_SE(x) (((x) & yh_source[YH_SE]) >> 8)

/* -- the position -------------------------------------------------------------------------------- */

typedef struct CorePos CorePos;
typedef struct CoreEval CoreEval;

typedef struct {
    uint64_t key;
    core_move move;
    int8_t piece; /* the bitboard the move changed */
    int8_t side, p2, first, status;
} YhUndo;

struct CorePos {
    u128 pcs[8]; /* colour * 4 + kind, as the reference's _pcs */
    u128 occ;
    uint64_t key;
    int side, p2, first, status; /* p2: the remembered cell in phase 2, else -1 */
    int depth;
    YhUndo undo[CORE_MAX_DEPTH];
};

/* -- set-wise helpers (inlined into the CORE_HOT functions, where popcount is one instruction) */

/* enemy(cell) of rule 5 from the neighbour mask m of that cell */
YH_INLINE int yh_strength(u128 m, u128 ea, u128 eg, u128 ec) {
    int s = 3 * popcount128(m & eg) + 2 * popcount128(m & ec);
    return (m & ea) ? s + 5 : s;
}

/* _safe_cells: the ship-step cells of an Admiral on a with enemy strength <= 5 */
YH_INLINE u128 yh_safe_cells(int a, u128 ea, u128 eg, u128 ec) {
    if (!((eg | ec) & yh_radius2[a])) return yh_ship_nbr[a];
    u128 safe = 0;
    for (u128 b = yh_ship_nbr[a]; b; b &= b - 1) {
        int d = lowest128(b);
        if (yh_strength(yh_nbr[d], ea, eg, ec) <= YH_SAFE_LIMIT) safe |= yh_bit(d);
    }
    return safe;
}

/* _capturable: enemy Galleons then Chebecs (each low to high) beaten by the own strength */
YH_INLINE int yh_capturable(int *out, u128 enemy_g, u128 enemy_c, u128 oa, u128 og, u128 oc) {
    int n = 0;
    u128 own = oa | og | oc;
    for (u128 b = enemy_g; b; b &= b - 1) {
        int x = lowest128(b);
        u128 m = yh_nbr[x];
        if ((m & own) && yh_strength(m, oa, og, oc) > 3) out[n++] = x;
    }
    for (u128 b = enemy_c; b; b &= b - 1) {
        int x = lowest128(b);
        u128 m = yh_nbr[x];
        if ((m & own) && yh_strength(m, oa, og, oc) > 2) out[n++] = x;
    }
    return n;
}

/* _freeing_captures (rule 9a): adjacent attackers whose removal brings the attack to <= 5 */
YH_INLINE int yh_freeing(int *out, int a, int attack, const u128 *own, const u128 *enemy) {
    u128 near = yh_nbr[a];
    int cand[8];
    int k = yh_capturable(cand, enemy[1] & near, enemy[2] & near, own[0], own[1], own[2]);
    int n = 0;
    for (int i = 0; i < k; i++) {
        int strength = ((enemy[1] >> cand[i]) & 1) ? 3 : 2;
        if (attack - strength <= YH_SAFE_LIMIT) out[n++] = cand[i];
    }
    return n;
}

/* _robust_pieces(...) >= 2: two non-Admiral pieces with two free steps each */
YH_INLINE int yh_robust2(const u128 *own, u128 empty) {
    int n = 0;
    u128 x = yh_nbr[highest128(own[YH_ROCK])] & empty;
    if (x & (x - 1)) n = 1;
    for (u128 b = own[YH_GALLEON] | own[YH_CHEBEC]; b && n < 2; b &= b - 1) {
        x = yh_ship_nbr[lowest128(b)] & empty;
        if (x & (x - 1)) n++;
    }
    return n >= 2;
}

/* _Mobility: per own piece its step cells and the free ones, for the completion rule (13) */
typedef struct {
    int n;
    int cell[8];
    u128 steps[8], free[8];
} YhMobility;

YH_INLINE void yh_mobility(YhMobility *mob, const u128 *own, u128 empty, u128 safe,
                               int skip) {
    mob->n = 0;
    for (int kind = 0; kind < 4; kind++) {
        for (u128 b = own[kind]; b; b &= b - 1) {
            int c = lowest128(b);
            if (c == skip) continue;
            u128 steps = kind == YH_ADMIRAL ? yh_ship_nbr[c] & safe
                         : kind == YH_ROCK  ? yh_nbr[c]
                                            : yh_ship_nbr[c];
            mob->cell[mob->n] = c;
            mob->steps[mob->n] = steps;
            mob->free[mob->n] = steps & empty;
            mob->n++;
        }
    }
}

/* whether, after the piece on f moves to t, another piece can move */
YH_INLINE int yh_completable(const YhMobility *mob, int f, int t) {
    u128 fb = yh_bit(f), not_t = ~yh_bit(t);
    for (int i = 0; i < mob->n; i++)
        if (mob->cell[i] != f && ((mob->free[i] & not_t) || (mob->steps[i] & fb))) return 1;
    return 0;
}

/* -- move generation, in the reference's order ----------------------------------------------- */

/* the moves from t + delta to t for every t of bits, low to high (a word at a time: the low
 * cells are in the low word) */
YH_INLINE int yh_emit(core_move *out, int n, int delta, u128 bits) {
    int base = delta * 128;
    for (uint64_t lo = (uint64_t)bits; lo; lo &= lo - 1) out[n++] = base + 129 * lowest64(lo);
    for (uint64_t hi = (uint64_t)(bits >> 64); hi; hi &= hi - 1)
        out[n++] = base + 129 * (64 + lowest64(hi));
    return n;
}

/* base (a cell << 7) with every cell of bits, low to high */
YH_INLINE int yh_add_bits(core_move *out, int n, int base, u128 bits) {
    for (; bits; bits &= bits - 1) out[n++] = base | lowest128(bits);
    return n;
}

/* _add_slides: direction by direction (NE NW, then W SW SE), distance by distance, targets low
 * to high; every piece of the set at once */
#define YH_SLIDES(STEP, SHIFT)                                                                 \
    do {                                                                                       \
        u128 cur = pieces;                                                                     \
        for (int r = 1; r <= reach; r++) {                                                     \
            cur = STEP(cur) & empty;                                                           \
            if (!cur) break;                                                                   \
            n = yh_emit(out, n, -(SHIFT) * r, cur);                                            \
        }                                                                                      \
    } while (0)

YH_INLINE int yh_add_slides(core_move *out, int n, u128 pieces, u128 empty, int reach) {
    YH_SLIDES(YH_STEP_NE, 9);
    YH_SLIDES(YH_STEP_NW, 8);
    YH_SLIDES(YH_STEP_W, -1);
    YH_SLIDES(YH_STEP_SW, -9);
    YH_SLIDES(YH_STEP_SE, -8);
    return n;
}

/* _add_rock: E NE NW W SW SE, each ray up to the first occupied cell (the nearest blocker is
 * the lowest cell of the ray on a rising index, the highest on a falling one) */
#define YH_ROCK_RAY(D, SHIFT)                                                                  \
    do {                                                                                       \
        u128 block = occ & yh_ray_mask[r][D];                                                  \
        int free = !block         ? yh_ray_len[r][D]                                           \
                   : (SHIFT) > 0 ? (lowest128(block) - r) / (SHIFT) - 1                        \
                                 : (r - highest128(block)) / -(SHIFT) - 1;                     \
        for (int k = 1; k <= free; k++) out[n++] = base + k * (SHIFT);                         \
    } while (0)

YH_INLINE int yh_add_rock(core_move *out, int n, int r, u128 occ) {
    int base = r * 129; /* r << 7 | r: the move to the Rock's own cell, shifted along */
    YH_ROCK_RAY(YH_E, 1);
    YH_ROCK_RAY(YH_NE, 9);
    YH_ROCK_RAY(YH_NW, 8);
    YH_ROCK_RAY(YH_W, -1);
    YH_ROCK_RAY(YH_SW, -9);
    YH_ROCK_RAY(YH_SE, -8);
    return n;
}

/* all sub-moves of a phase-1 turn before rule 13: Admiral steps, Galleons, Chebecs, Rock */
YH_INLINE int yh_add_submoves(core_move *out, int n, const u128 *own, int a, u128 safe,
                                  u128 empty, u128 occ) {
    n = yh_add_bits(out, n, a << 7, yh_ship_nbr[a] & empty & safe);
    if (own[YH_GALLEON]) n = yh_add_slides(out, n, own[YH_GALLEON], empty, 2);
    if (own[YH_CHEBEC]) n = yh_add_slides(out, n, own[YH_CHEBEC], empty, 3);
    return yh_add_rock(out, n, highest128(own[YH_ROCK]), occ);
}

/* _first_tokens: phase-1 tokens (rules 1-13), not looking at the end of the game */
CORE_HOT static int yh_first_tokens(const CorePos *p, core_move *out) {
    const u128 *own = &p->pcs[p->side * 4], *enemy = &p->pcs[4 - p->side * 4];
    u128 occ = p->occ, empty = yh_full ^ occ;
    int a = highest128(own[YH_ADMIRAL]);
    u128 safe = yh_safe_cells(a, enemy[0], enemy[1], enemy[2]);
    u128 goal = yh_goal[p->side];
    int attack = yh_strength(yh_nbr[a], enemy[0], enemy[1], enemy[2]);
    int cells[8];
    int n = 0;
    if (attack > YH_SAFE_LIMIT) {
        /* Arno's rule: a freeing capture, or the Admiral steps first to a safe cell */
        int k = yh_freeing(cells, a, attack, own, enemy);
        for (int i = 0; i < k; i++) out[n++] = YH_CAPTURE | cells[i];
        u128 escapes = yh_ship_nbr[a] & empty & safe;
        if (!escapes) return n;
        if (p->first) return yh_add_bits(out, n, a << 7, escapes);
        YhMobility mob;
        yh_mobility(&mob, own, empty, safe, a);
        for (; escapes; escapes &= escapes - 1) {
            int t = lowest128(escapes);
            if (((goal >> t) & 1) || yh_completable(&mob, a, t)) out[n++] = a << 7 | t;
        }
        return n;
    }
    if (enemy[1] | enemy[2]) {
        int k = yh_capturable(cells, enemy[1], enemy[2], own[0], own[1], own[2]);
        for (int i = 0; i < k; i++) out[n++] = YH_CAPTURE | cells[i];
    }
    if (p->first || yh_robust2(own, empty)) return yh_add_submoves(out, n, own, a, safe, empty, occ);
    core_move subs[CORE_MAX_MOVES];
    int m = yh_add_submoves(subs, 0, own, a, safe, empty, occ);
    YhMobility mob;
    yh_mobility(&mob, own, empty, safe, -1);
    for (int i = 0; i < m; i++) {
        int f = subs[i] >> 7, t = subs[i] & YH_CELL_BITS;
        if ((f == a && ((goal >> t) & 1)) || yh_completable(&mob, f, t)) out[n++] = subs[i];
    }
    return n;
}

/* _second_submoves: any own piece but the one on the remembered cell (rule 12) */
CORE_HOT static int yh_second_submoves(const CorePos *p, core_move *out) {
    const u128 *own = &p->pcs[p->side * 4], *enemy = &p->pcs[4 - p->side * 4];
    u128 occ = p->occ, empty = yh_full ^ occ, moved = yh_bit(p->p2);
    int n = 0;
    if (!(own[YH_ADMIRAL] & moved)) {
        int a = highest128(own[YH_ADMIRAL]);
        n = yh_add_bits(out, n, a << 7,
                        yh_ship_nbr[a] & empty & yh_safe_cells(a, enemy[0], enemy[1], enemy[2]));
    }
    if (own[YH_GALLEON]) n = yh_add_slides(out, n, own[YH_GALLEON] & ~moved, empty, 2);
    if (own[YH_CHEBEC]) n = yh_add_slides(out, n, own[YH_CHEBEC] & ~moved, empty, 3);
    if (!(own[YH_ROCK] & moved)) n = yh_add_rock(out, n, highest128(own[YH_ROCK]), occ);
    return n;
}

/* -- the end of the game --------------------------------------------------------------------- */

static inline int yh_end_code(int reason, int winner) { return 1 + 2 * reason + winner; }

/* _has_legal_token: whether the side to act has a token (ignoring the goal-row end) */
YH_INLINE int yh_has_token(const CorePos *p, int attack) {
    const u128 *own = &p->pcs[p->side * 4], *enemy = &p->pcs[4 - p->side * 4];
    u128 empty = yh_full ^ p->occ;
    if (p->p2 >= 0) {
        /* a second sub-move exists iff some piece but the first one has a free step */
        u128 moved = yh_bit(p->p2);
        if (!(own[YH_ADMIRAL] & moved)) {
            int a = highest128(own[YH_ADMIRAL]);
            if (yh_ship_nbr[a] & empty & yh_safe_cells(a, enemy[0], enemy[1], enemy[2]))
                return 1;
        }
        u128 ships = (own[YH_GALLEON] | own[YH_CHEBEC]) & ~moved;
        if ((YH_STEP_NE(ships) | YH_STEP_NW(ships) | YH_STEP_W(ships) | YH_STEP_SW(ships) |
             YH_STEP_SE(ships)) & empty)
            return 1;
        return !(own[YH_ROCK] & moved) && (yh_nbr[highest128(own[YH_ROCK])] & empty);
    }
    if (!p->first && attack <= YH_SAFE_LIMIT && yh_robust2(own, empty)) return 1;
    core_move moves[CORE_MAX_MOVES];
    return yh_first_tokens(p, moves) > 0;
}

/* _compute_status: the end test of rules §6, in its order */
CORE_HOT static int yh_compute_status(const CorePos *p) {
    if (p->pcs[0] & yh_goal[0]) return yh_end_code(YH_GOAL_REACHED, 0);
    if (p->pcs[4] & yh_goal[1]) return yh_end_code(YH_GOAL_REACHED, 1);
    int opponent = p->side ^ 1;
    const u128 *own = &p->pcs[p->side * 4], *enemy = &p->pcs[4 - p->side * 4];
    int a = highest128(own[YH_ADMIRAL]);
    int attack = yh_strength(yh_nbr[a], enemy[0], enemy[1], enemy[2]);
    if (p->p2 < 0 && attack > YH_SAFE_LIMIT) {
        u128 empty = yh_full ^ p->occ;
        u128 escapes = yh_ship_nbr[a] & empty & yh_safe_cells(a, enemy[0], enemy[1], enemy[2]);
        int cells[8];
        if (!escapes && !yh_freeing(cells, a, attack, own, enemy))
            return yh_end_code(YH_ADMIRAL_TRAPPED, opponent);
    }
    if (!yh_has_token(p, attack)) return yh_end_code(YH_NO_LEGAL_ACTION, opponent);
    return YH_ONGOING;
}

/* -- the contract: rules ------------------------------------------------------------------ */

static inline int core_to_move(const CorePos *pos) { return pos->side; }
static inline int core_is_terminal(const CorePos *pos) { return pos->status != YH_ONGOING; }
static inline int core_winner(const CorePos *pos) { return (pos->status - 1) & 1; }
static inline uint64_t core_key(const CorePos *pos) { return pos->key; }

static inline int core_legal_moves(CorePos *pos, core_move *out) {
    if (pos->status != YH_ONGOING) return 0;
    return pos->p2 >= 0 ? yh_second_submoves(pos, out) : yh_first_tokens(pos, out);
}

static void core_push(CorePos *pos, core_move move) {
    YhUndo *u = &pos->undo[pos->depth++];
    int side = pos->side;
    uint64_t key = pos->key;
    u->key = key;
    u->move = move;
    u->side = (int8_t)side;
    u->p2 = (int8_t)pos->p2;
    u->first = (int8_t)pos->first;
    u->status = (int8_t)pos->status;
    int first = pos->first;
    if (first) {
        key ^= yh_z_first;
        pos->first = 0;
    }
    if (pos->p2 >= 0) key ^= yh_z_phase2[pos->p2];
    if (move & YH_CAPTURE) {
        int x = move & YH_CELL_BITS;
        int i = side == 0 ? 5 : 1; /* the enemy's Galleons, else its Chebecs */
        if (!((pos->pcs[i] >> x) & 1)) i++;
        u128 b = yh_bit(x);
        pos->pcs[i] ^= b;
        pos->occ ^= b;
        pos->p2 = -1;
        pos->side = side ^ 1;
        pos->key = key ^ yh_z_piece[i][x] ^ yh_z_black;
        u->piece = (int8_t)i;
    } else {
        int f = move >> 7, t = move & YH_CELL_BITS;
        int i = side * 4;
        while (!((pos->pcs[i] >> f) & 1)) i++;
        u128 b = yh_bit(f) | yh_bit(t);
        pos->pcs[i] ^= b;
        pos->occ ^= b;
        key ^= yh_z_piece[i][f] ^ yh_z_piece[i][t];
        if (pos->p2 >= 0 || first || ((i & 3) == YH_ADMIRAL && ((yh_goal[side] >> t) & 1))) {
            /* second sub-move, White's single first sub-move, or an Admiral home */
            pos->p2 = -1;
            pos->side = side ^ 1;
            key ^= yh_z_black;
        } else {
            pos->p2 = t;
            key ^= yh_z_phase2[t];
        }
        pos->key = key;
        u->piece = (int8_t)i;
    }
    pos->status = yh_compute_status(pos);
}

static void core_pop(CorePos *pos) {
    const YhUndo *u = &pos->undo[--pos->depth];
    core_move move = u->move;
    u128 b = (move & YH_CAPTURE) ? yh_bit(move & YH_CELL_BITS)
                                 : yh_bit(move >> 7) | yh_bit(move & YH_CELL_BITS);
    pos->pcs[u->piece] ^= b;
    pos->occ ^= b;
    pos->key = u->key;
    pos->side = u->side;
    pos->p2 = u->p2;
    pos->first = u->first;
    pos->status = u->status;
}

/* -- the evaluation ---------------------------------------------------------------------------- */

typedef struct {
    int64_t chebec, galleon, row_step, rock_cone, pressure, trap_soon, win_now;
    int64_t prog[YH_MAX_SEQ], race[YH_MAX_SEQ], step_safe[6], robust[6], attacked[6];
    int64_t own_hang_p1[2], enemy_hang_p1, own_hang_p2[2], enemy_hang_p2, tempo_p1, tempo_p2;
    int64_t race_horizon, race_won, race_turn, limit;
    int far;    /* _FAR: the distance reported when no route is found */
    int layers; /* RACE_HORIZON clamped to [0, YH_MAX_LAYERS]: the same races */
} YhWeights;

/* Values already computed, by position: in a search, leaves are reached again and again by
 * the two orders of a turn's sub-moves. A slot holds the whole position (what the evaluation
 * reads: the pieces, the side, the remembered cell), so a hit is exact, never a key collision;
 * slots of an older generation are empty. */
#define YH_EVAL_SLOTS 2048

typedef struct {
    u128 pcs[8];
    uint32_t gen;
    int32_t turn; /* side + 2 * (p2 + 1) */
    int32_t value;
} YhEvalSlot;

struct CoreEval {
    YhWeights w;
    uint32_t gen; /* the generation of the live slots; 0 is never live */
    YhEvalSlot slots[YH_EVAL_SLOTS];
};

/* _coverage: the cells next to which one side's strength is >= 3, >= 4 and >= 6 */
YH_INLINE void yh_coverage(int a, u128 g, u128 c, u128 *ge3, u128 *ge4, u128 *ge6) {
    u128 am = yh_nbr[a];
    u128 g1 = 0, g2 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (; g; g &= g - 1) {
        u128 m = yh_nbr[lowest128(g)];
        g2 |= g1 & m;
        g1 |= m;
    }
    for (; c; c &= c - 1) {
        u128 m = yh_nbr[lowest128(c)];
        c3 |= c2 & m;
        c2 |= c1 & m;
        c1 |= m;
    }
    *ge3 = am | g1 | c2;
    *ge4 = am | g2 | c2 | (g1 & c1);
    *ge6 = (am & (g1 | c1)) | g2 | c3 | (g1 & c2);
}

/* _dist_up / _dist_down: the fewest turns to the goal row with forward or west steps, a step
   onto a passable cell costing one and onto a blocker (an enemy ship, captured first) two */
YH_INLINE int yh_dist(u128 a_bit, u128 passable, u128 blockers, int up, int far) {
    u128 free = passable & ~a_bit, hard = blockers & ~a_bit, front = a_bit, late = 0;
    u128 goal = yh_goal[up ? 0 : 1];
    int d = 0;
    while ((front || late) && d < far - 1) {
        d++;
        u128 reach;
        if (up)
            reach = YH_STEP_NE(front) | YH_STEP_NW(front) | YH_STEP_W(front);
        else
            reach = YH_STEP_SE(front) | YH_STEP_SW(front) | YH_STEP_W(front);
        front = (reach & free) | late;
        late = reach & hard;
        hard ^= late;
        if (front & goal) return d;
        free &= ~front;
    }
    return far;
}

/* _attacked: the value, for the attacker, of the capturable enemy Admiral on e */
YH_INLINE int64_t yh_attacked(const YhWeights *ev, int e, u128 empty, u128 unsafe,
                                  const u128 *attacker) {
    u128 near = yh_nbr[e];
    u128 ng = near & attacker[1], nc = near & attacker[2];
    int attack = 3 * popcount128(ng) + 2 * popcount128(nc) + ((near & attacker[0]) ? 5 : 0);
    int escapes = popcount128(yh_ship_nbr[e] & empty & ~unsafe);
    int freeing = (ng && attack <= 8) || (nc && attack <= 7);
    if (!escapes && !freeing) return ev->trap_soon;
    return floor_div(ev->attacked[escapes], freeing ? 2 : 1);
}

YH_INLINE u128 yh_dilate(u128 x) {
    return YH_STEP_E(x) | YH_STEP_NE(x) | YH_STEP_NW(x) | YH_STEP_W(x) | YH_STEP_SW(x) |
           YH_STEP_SE(x);
}

/* _moves: where pieces on cells can stop with one sub-move of 1..reach cells (ships), or of
 * any length in all six directions (the Rock) */
#define YH_FILL(STEP)                                                                          \
    do {                                                                                       \
        u128 front = cells;                                                                    \
        for (int r = 0; r < reach; r++) {                                                      \
            front = STEP(front) & empty;                                                       \
            if (!front) break;                                                                 \
            out |= front;                                                                      \
        }                                                                                      \
    } while (0)

YH_INLINE u128 yh_ship_moves(u128 cells, u128 empty, int reach) {
    u128 out = 0;
    YH_FILL(YH_STEP_NE);
    YH_FILL(YH_STEP_NW);
    YH_FILL(YH_STEP_W);
    YH_FILL(YH_STEP_SW);
    YH_FILL(YH_STEP_SE);
    return out;
}

YH_INLINE u128 yh_rock_moves(u128 cells, u128 empty) {
    u128 out = 0;
    const int reach = 8;
    YH_FILL(YH_STEP_E);
    YH_FILL(YH_STEP_NE);
    YH_FILL(YH_STEP_NW);
    YH_FILL(YH_STEP_W);
    YH_FILL(YH_STEP_SW);
    YH_FILL(YH_STEP_SE);
    return out;
}

YH_INLINE u128 yh_forward(u128 x, int up) {
    return up ? YH_STEP_NE(x) | YH_STEP_NW(x) | YH_STEP_W(x)
              : YH_STEP_SE(x) | YH_STEP_SW(x) | YH_STEP_W(x);
}

YH_INLINE u128 yh_backward(u128 x, int up) { /* the opposite directions of yh_forward */
    return up ? YH_STEP_SW(x) | YH_STEP_SE(x) | YH_STEP_E(x)
              : YH_STEP_NW(x) | YH_STEP_NE(x) | YH_STEP_E(x);
}

/* _race: the turns the Admiral needs if the defenders cannot stop it, else 0 */
CORE_HOT static int yh_race(const YhWeights *ev, u128 admiral, int up, u128 passable, u128 empty,
                   const u128 *defenders, int defenders_first) {
    u128 goal = yh_goal[up ? 0 : 1];
    u128 layers[YH_MAX_LAYERS], tube[YH_MAX_LAYERS];
    int turns = 0;
    u128 free = passable & ~admiral, front = admiral;
    for (;;) {
        if (!front || turns >= ev->layers) return 0;
        front = yh_forward(front, up) & free;
        free &= ~front;
        layers[turns++] = front;
        if (front & goal) break;
    }
    tube[turns - 1] = layers[turns - 1] & goal;
    for (int k = turns - 2; k >= 0; k--) tube[k] = layers[k] & yh_backward(tube[k + 1], up);
    u128 da = defenders[0], dg = defenders[1], dc = defenders[2], dr = defenders[3];
    /* how many Galleons and Chebecs (at least one, two, three), before they spread */
    u128 dg2 = dg & (dg - 1), dc2 = dc & (dc - 1);
    int galleons = dg ? dg2 ? 2 : 1 : 0;
    int chebecs = dc ? dc2 ? (dc2 & (dc2 - 1)) ? 3 : 2 : 1 : 0;
    u128 dfree = empty | da | dg | dc | dr; /* the defenders pass through each other's cells */
    u128 route = admiral;
    for (int k = 0; k < turns; k++) {
        if (k || defenders_first) {
            da |= yh_ship_moves(da, dfree, 1);
            dg |= yh_ship_moves(dg, dfree, 2);
            dc |= yh_ship_moves(dc, dfree, 3);
            dr |= yh_rock_moves(dr, dfree);
        }
        route = yh_forward(route, up) & tube[k] & ~(da | dg | dc | dr);
        if (!route) return 0;
        u128 near_g = galleons ? yh_dilate(dg) : 0;
        u128 near_c = chebecs ? yh_dilate(dc) : 0;
        u128 unsafe = da ? yh_dilate(da) & (near_g | near_c) : 0;
        if (galleons >= 2) unsafe |= near_g;
        if (chebecs >= 3) unsafe |= near_c;
        if (galleons && chebecs >= 2) unsafe |= near_g & near_c;
        route &= ~unsafe;
        if (!route) return 0;
    }
    return turns;
}

/* _race_verdict: for the side to act, RACE_WON less the turns to sail when its Admiral wins a
 * race the enemy cannot stop, the same negated when the enemy's does, else 0 */
YH_INLINE int64_t yh_race_verdict(const YhWeights *ev, const CorePos *p, u128 empty,
                               const u128 *passable, const int *distances) {
    int side = p->side;
    const u128 *own = &p->pcs[side * 4], *enemy = &p->pcs[4 - side * 4];
    int own_d = distances[side], en_d = distances[1 - side];
    int moved = p->p2 >= 0 && ((own[0] >> p->p2) & 1);
    int own_row = yh_row_of[highest128(own[0])], en_row = yh_row_of[highest128(enemy[0])];
    int late = moved ? 1 : 0;
    int own_rows = (side ? own_row - 1 : 9 - own_row) + late;
    int en_rows = side == 0 ? en_row - 1 : 9 - en_row;
    if (own_d + late <= en_rows) {
        int turns = yh_race(ev, own[0], side == 0, passable[side], empty, enemy, moved);
        if (turns) return ev->race_won - ev->race_turn * (turns + late);
    }
    if (en_d < own_rows) {
        int turns = yh_race(ev, enemy[0], side == 1, passable[1 - side], empty, own, 1);
        if (turns) return -(ev->race_won - ev->race_turn * turns);
    }
    return 0;
}

CORE_HOT static int yh_evaluate(const CorePos *pos, const YhWeights *ev) {
    const u128 *pcs = pos->pcs;
    u128 wa = pcs[0], wg = pcs[1], wc = pcs[2], wr = pcs[3];
    u128 ba = pcs[4], bg = pcs[5], bc = pcs[6], br = pcs[7];
    int side = pos->side, p2 = pos->p2;
    u128 white = wa | wg | wc | wr, black = ba | bg | bc | br;
    u128 empty = yh_full ^ (white | black);
    int aw = highest128(wa), ab = highest128(ba);
    u128 b3, b4, b6, w3, w4, w6;
    yh_coverage(ab, bg, bc, &b3, &b4, &b6);
    yh_coverage(aw, wg, wc, &w3, &w4, &w6);

    /* the terms for White, minus the same for Black */
    int64_t score = ev->chebec * (popcount128(wc) - popcount128(bc)) +
                    ev->galleon * (popcount128(wg) - popcount128(bg));
    score += ev->row_step * (yh_row_of[aw] + yh_row_of[ab] - 10);
    u128 passable[2] = {yh_full & ~(black | b6), yh_full & ~(white | w6)};
    int dist[2] = {yh_dist(wa, passable[0], (bg | bc) & ~b6, 1, ev->far),
                   yh_dist(ba, passable[1], (wg | wc) & ~w6, 0, ev->far)};
    int dw = dist[0], db = dist[1];
    score += ev->prog[dw] - ev->prog[db];
    u128 nw = yh_ship_nbr[aw] & empty, nb = yh_ship_nbr[ab] & empty;
    score += ev->step_safe[popcount128(nw & ~b6)] - ev->step_safe[popcount128(nb & ~w6)];
    score += ev->robust[popcount128(nw & ~b4)] - ev->robust[popcount128(nb & ~w4)];
    if (wr & yh_cone_up[ab]) score += ev->rock_cone;
    if (br & yh_cone_down[aw]) score -= ev->rock_cone;
    u128 rb = yh_radius2[ab], rw = yh_radius2[aw];
    score += ev->pressure * (3 * popcount128(wg & rb) + 2 * popcount128(wc & rb) -
                             3 * popcount128(bg & rw) - 2 * popcount128(bc & rw));

    /* from here on, for the side to act */
    u128 own_a, en_a, own_hang_c, own_hang_g, en_hang_c, en_hang_g, own_unsafe, en_unsafe;
    u128 own_win;
    int own_d, en_d;
    const u128 *own_pieces, *en_pieces;
    if (side) {
        score = -score;
        own_a = ba, en_a = wa;
        own_hang_c = bc & w3, own_hang_g = bg & w4, en_hang_c = wc & b3, en_hang_g = wg & b4;
        own_unsafe = w6, en_unsafe = b6;
        own_d = db, en_d = dw;
        own_pieces = &pcs[4], en_pieces = &pcs[0];
        own_win = yh_ship_nbr[ab] & yh_goal[1] & empty & ~w6;
    } else {
        own_a = wa, en_a = ba;
        own_hang_c = wc & b3, own_hang_g = wg & b4, en_hang_c = bc & w3, en_hang_g = bg & w4;
        own_unsafe = b6, en_unsafe = w6;
        own_d = dw, en_d = db;
        own_pieces = &pcs[0], en_pieces = &pcs[4];
        own_win = yh_ship_nbr[aw] & yh_goal[0] & empty & ~b6;
    }
    int hang_g = popcount128(own_hang_g);
    int hanging = hang_g + popcount128(own_hang_c);
    int64_t first = hang_g ? ev->galleon : ev->chebec;
    int64_t second = hang_g > 1 ? ev->galleon : ev->chebec;
    int64_t en_best = en_hang_g ? ev->galleon : (en_hang_c ? ev->chebec : 0);
    if (p2 < 0) {
        score += ev->tempo_p1 + floor_div(en_best * ev->enemy_hang_p1, 100);
        if (hanging) {
            score -= floor_div(first * ev->own_hang_p1[0], 100);
            if (hanging > 1) score -= floor_div(second * ev->own_hang_p1[1], 100);
        }
        if (own_a & own_unsafe)
            score -= yh_attacked(ev, highest128(own_a), empty, own_unsafe, en_pieces);
        if (own_win) score += ev->win_now;
    } else {
        score += ev->tempo_p2 + floor_div(en_best * ev->enemy_hang_p2, 100);
        if (hanging) {
            score -= floor_div(first * ev->own_hang_p2[0], 100);
            if (hanging > 1) score -= floor_div(second * ev->own_hang_p2[1], 100);
        }
        if (en_a & en_unsafe)
            score += yh_attacked(ev, highest128(en_a), empty, en_unsafe, own_pieces);
        if ((own_a >> p2) & 1)
            own_d += 1; /* the Admiral has made this turn's step already */
        else if (own_win)
            score += ev->win_now;
    }
    /* the race: the side to act moves first, so it leads on equal distances */
    int64_t decided = 0;
    if ((own_d < en_d ? own_d : en_d) <= ev->race_horizon)
        decided = yh_race_verdict(ev, pos, empty, passable, dist);
    if (decided)
        score += decided;
    else if (own_d <= en_d)
        score += ev->race[own_d];
    else
        score -= ev->race[en_d];
    if (score > ev->limit) return (int)ev->limit;
    if (score < -ev->limit) return (int)-ev->limit;
    return (int)score;
}

static inline int core_evaluate(CorePos *pos, CoreEval *ev) {
    uint64_t key = pos->key;
    YhEvalSlot *slot = &ev->slots[(key ^ key >> 29) & (YH_EVAL_SLOTS - 1)];
    int32_t turn = pos->side + 2 * (pos->p2 + 1);
    u128 diff = 0;
    for (int i = 0; i < 8; i++) diff |= slot->pcs[i] ^ pos->pcs[i];
    if (slot->gen == ev->gen && slot->turn == turn && !diff) return slot->value;
    int value = yh_evaluate(pos, &ev->w);
    memcpy(slot->pcs, pos->pcs, sizeof slot->pcs);
    slot->gen = ev->gen;
    slot->turn = turn;
    slot->value = value;
    return value;
}

/* a new generation: every slot empty at once */
static void core_eval_reset(CoreEval *ev) {
    if (++ev->gen == 0) {
        memset(ev->slots, 0, sizeof ev->slots);
        ev->gen = 1;
    }
}

/* is_quiet: not quiet under Arno's rule (phase 1, own Admiral attacked above 5) */
CORE_HOT static int core_is_quiet(CorePos *pos, CoreEval *ev) {
    (void)ev;
    if (pos->p2 >= 0) return 1;
    const u128 *own = &pos->pcs[pos->side * 4], *enemy = &pos->pcs[4 - pos->side * 4];
    return yh_strength(yh_nbr[highest128(own[0])], enemy[0], enemy[1], enemy[2]) <=
           YH_SAFE_LIMIT;
}

static int core_search_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)ev;
    return core_legal_moves(pos, out);
}

/* order_moves: in phase 1 the captures first (stable), the rest as given */
static int core_order_moves(CorePos *pos, CoreEval *ev, core_move *moves, int n) {
    (void)ev;
    if (pos->p2 >= 0) return n;
    int k = 0;
    while (k < n && (moves[k] & YH_CAPTURE)) k++;
    for (int i = k + 1; i < n; i++) { /* rare: the generator already puts captures first */
        if (moves[i] & YH_CAPTURE) {
            core_move m = moves[i];
            memmove(&moves[k + 1], &moves[k], (size_t)(i - k) * sizeof *moves);
            moves[k++] = m;
        }
    }
    return n;
}

/* noisy_moves: the captures among the legal tokens (phase 1 only) */
CORE_HOT static int core_noisy_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    (void)ev;
    if (pos->p2 >= 0 || pos->status != YH_ONGOING) return 0;
    const u128 *own = &pos->pcs[pos->side * 4], *enemy = &pos->pcs[4 - pos->side * 4];
    int a = highest128(own[YH_ADMIRAL]);
    int attack = yh_strength(yh_nbr[a], enemy[0], enemy[1], enemy[2]);
    int cells[8], k;
    if (attack > YH_SAFE_LIMIT)
        k = yh_freeing(cells, a, attack, own, enemy);
    else if (enemy[1] | enemy[2])
        k = yh_capturable(cells, enemy[1], enemy[2], own[0], own[1], own[2]);
    else
        k = 0;
    for (int i = 0; i < k; i++) out[i] = YH_CAPTURE | cells[i];
    return k;
}

/* -- init: the geometry, checked against the reference, and the Zobrist numbers ------------- */

static int yh_cell_at(int x, int y) { /* the cell of (x, y), or -1 off the board */
    if (x < 0 || x > 16 || y < 1 || y > 9 || (x + y) % 2 != 1) return -1;
    /* rows of 9 (odd) and 8 (even) cells: 17 cells per two rows */
    int before = (y - 1) / 2 * 17 + ((y - 1) % 2 ? 9 : 0);
    return before + x / 2;
}

static void yh_geometry(void) {
    yh_full = ((u128)1 << YH_CELLS) - 1;
    yh_goal[0] = yh_goal[1] = 0;
    for (int d = 0; d < 6; d++) yh_source[d] = 0;
    for (int y = 1; y <= 9; y++) {
        for (int x = 0; x <= 16; x++) {
            int c = yh_cell_at(x, y);
            if (c < 0) continue;
            yh_row_of[c] = y;
            if (y == 9) yh_goal[0] |= yh_bit(c);
            if (y == 1) yh_goal[1] |= yh_bit(c);
            yh_nbr[c] = yh_ship_nbr[c] = 0;
            for (int d = 0; d < 6; d++) {
                int n = 0;
                yh_ray_mask[c][d] = 0;
                for (int t; (t = yh_cell_at(x + (n + 1) * YH_DX[d], y + (n + 1) * YH_DY[d])) >= 0;
                     n++)
                    yh_ray_mask[c][d] |= yh_bit(t);
                yh_ray_len[c][d] = n;
                if (!n) continue;
                int first = yh_cell_at(x + YH_DX[d], y + YH_DY[d]);
                yh_source[d] |= yh_bit(c);
                yh_nbr[c] |= yh_bit(first);
                if (d != YH_E) yh_ship_nbr[c] |= yh_bit(first);
            }
        }
    }
    for (int c = 0; c < YH_CELLS; c++) {
        u128 r = yh_nbr[c];
        for (u128 b = yh_nbr[c]; b; b &= b - 1) r |= yh_nbr[lowest128(b)];
        yh_radius2[c] = r;
        /* the eval's cones: three rows forward, each widened by one step west */
        for (int up = 0; up < 2; up++) {
            u128 out = 0, front = yh_bit(c);
            for (int k = 0; k < 3; k++) {
                u128 next = up ? YH_STEP_NE(front) | YH_STEP_NW(front)
                               : YH_STEP_SE(front) | YH_STEP_SW(front);
                next |= YH_STEP_W(next);
                out |= next;
                front = next;
            }
            if (up)
                yh_cone_up[c] = out;
            else
                yh_cone_down[c] = out;
        }
    }
}

/* a failure to read the table name as a ValueError naming it: a table that is missing or of
 * the wrong type is damage too */
static int yh_table_error(const char *name) {
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *text = PyObject_Str(exc);
    Py_DECREF(exc);
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
#endif
    if (!text) return -1;
    const char *what = PyUnicode_AsUTF8(text);
    if (what && !strncmp(what, name, strlen(name)))
        PyErr_SetString(PyExc_ValueError, what);
    else if (what)
        PyErr_Format(PyExc_ValueError, "%s: %s", name, what);
    Py_DECREF(text);
    return -1;
}

/* the attribute name of module as a sequence of n bitboards equal to expected */
static int yh_check_bits(PyObject *module, const char *name, const u128 *expected, Py_ssize_t n) {
    PyObject *seq = PyObject_GetAttrString(module, name);
    if (!seq) return -1;
    PyObject *fast = PySequence_Fast(seq, "a sequence was expected");
    Py_DECREF(seq);
    if (!fast) return -1;
    int rc = -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries were expected", name, n);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        u128 v;
        if (core_read_bits(PySequence_Fast_GET_ITEM(fast, i), YH_CELLS, name, &v) < 0) goto done;
        if (v != expected[i]) {
            PyErr_Format(PyExc_ValueError, "%s: entry %zd differs from the board's geometry",
                         name, i);
            goto done;
        }
    }
    rc = 0;
done:
    Py_DECREF(fast);
    return rc;
}

static int yh_check_int(PyObject *module, const char *name, long expected) {
    long v;
    if (core_attr_int(module, name, expected, expected, &v) < 0) return -1;
    return 0;
}

/* a sequence of n 64-bit ints (a Zobrist table) */
static int yh_read_u64s(PyObject *seq, const char *name, uint64_t *out, Py_ssize_t n) {
    PyObject *fast = PySequence_Fast(seq, "a sequence was expected");
    if (!fast) return -1;
    int rc = -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries were expected", name, n);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        u128 v;
        if (core_read_bits(PySequence_Fast_GET_ITEM(fast, i), 64, name, &v) < 0) goto done;
        out[i] = (uint64_t)v;
    }
    rc = 0;
done:
    Py_DECREF(fast);
    return rc;
}

static int yh_read_zobrist(PyObject *games_mod, uint64_t piece[8][YH_CELLS], uint64_t *black,
                           uint64_t *first, uint64_t *phase2) {
    PyObject *z = PyObject_GetAttrString(games_mod, "Z_PIECE");
    PyObject *fast = z ? PySequence_Fast(z, "Z_PIECE: a sequence was expected") : NULL;
    Py_XDECREF(z);
    if (!fast) return yh_table_error("Z_PIECE");
    if (PySequence_Fast_GET_SIZE(fast) != 8) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "Z_PIECE: 8 entries were expected");
        return -1;
    }
    for (int i = 0; i < 8; i++) {
        if (yh_read_u64s(PySequence_Fast_GET_ITEM(fast, i), "Z_PIECE", piece[i], YH_CELLS) < 0) {
            Py_DECREF(fast);
            return yh_table_error("Z_PIECE");
        }
    }
    Py_DECREF(fast);
    u128 v;
    if (core_attr_bits(games_mod, "Z_BLACK", 64, &v) < 0) return yh_table_error("Z_BLACK");
    *black = (uint64_t)v;
    if (core_attr_bits(games_mod, "Z_FIRST", 64, &v) < 0) return yh_table_error("Z_FIRST");
    *first = (uint64_t)v;
    PyObject *p2 = PyObject_GetAttrString(games_mod, "Z_PHASE2");
    int rc = p2 ? yh_read_u64s(p2, "Z_PHASE2", phase2, YH_CELLS) : -1;
    Py_XDECREF(p2);
    return rc < 0 ? yh_table_error("Z_PHASE2") : 0;
}

static int yh_check_geometry(PyObject *games_mod, PyObject *eval_mod) {
    if (yh_check_int(games_mod, "N_CELLS", YH_CELLS) < 0) return yh_table_error("N_CELLS");
    if (yh_check_int(games_mod, "CAPTURE", YH_CAPTURE) < 0) return yh_table_error("CAPTURE");
    u128 full = 0;
    if (core_attr_bits(games_mod, "FULL_MASK", YH_CELLS, &full) < 0)
        return yh_table_error("FULL_MASK");
    if (full != yh_full) {
        PyErr_SetString(PyExc_ValueError, "FULL_MASK: not the 77 cells");
        return -1;
    }
    long shifts[6];
    PyObject *seq = PyObject_GetAttrString(games_mod, "SHIFTS");
    int rc = seq ? core_read_table(seq, 6, -9, 9, "SHIFTS", shifts) : -1;
    Py_XDECREF(seq);
    if (rc < 0) return yh_table_error("SHIFTS");
    for (int d = 0; d < 6; d++) {
        if (shifts[d] != YH_SHIFT[d]) {
            PyErr_SetString(PyExc_ValueError, "SHIFTS: not the board's index shifts");
            return -1;
        }
    }
    long row_of[YH_CELLS];
    seq = PyObject_GetAttrString(eval_mod, "ROW_OF");
    rc = seq ? core_read_table(seq, YH_CELLS, 1, 9, "ROW_OF", row_of) : -1;
    Py_XDECREF(seq);
    if (rc < 0) return yh_table_error("ROW_OF");
    for (int c = 0; c < YH_CELLS; c++) {
        if (row_of[c] != yh_row_of[c]) {
            PyErr_SetString(PyExc_ValueError, "ROW_OF: not the rows of the cells");
            return -1;
        }
    }
    static const struct {
        int eval;
        const char *name;
        const u128 *table;
        Py_ssize_t n;
    } bits[] = {
        {0, "NBR", yh_nbr, YH_CELLS},        {0, "SHIP_NBR", yh_ship_nbr, YH_CELLS},
        {0, "RADIUS2", yh_radius2, YH_CELLS}, {0, "SOURCE", yh_source, 6},
        {0, "GOAL_MASK", yh_goal, 2},        {1, "CONE_UP", yh_cone_up, YH_CELLS},
        {1, "CONE_DOWN", yh_cone_down, YH_CELLS},
    };
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++) {
        PyObject *owner = bits[i].eval ? eval_mod : games_mod;
        if (yh_check_bits(owner, bits[i].name, bits[i].table, bits[i].n) < 0)
            return yh_table_error(bits[i].name);
    }
    return 0;
}

static int core_init(PyObject *module) {
    (void)module;
    yh_geometry();
    PyObject *games_mod = PyImport_ImportModule("games.yohoho");
    if (!games_mod) return -1;
    PyObject *eval_mod = PyImport_ImportModule("bots.eval.yohoho");
    if (!eval_mod) {
        Py_DECREF(games_mod);
        return -1;
    }
    /* read everything into locals first: a failed init changes nothing that was ready */
    static uint64_t piece[8][YH_CELLS], phase2[YH_CELLS];
    uint64_t black = 0, first = 0;
    PyObject *state_type = NULL, *eval_type = NULL;
    int rc = -1;
    if (yh_check_geometry(games_mod, eval_mod) < 0) goto done;
    if (yh_read_zobrist(games_mod, piece, &black, &first, phase2) < 0) goto done;
    state_type = PyObject_GetAttrString(games_mod, "YohohoState");
    if (!state_type) {
        yh_table_error("YohohoState");
        goto done;
    }
    eval_type = PyObject_GetAttrString(eval_mod, "YohohoEvaluator");
    if (!eval_type) {
        yh_table_error("YohohoEvaluator");
        goto done;
    }
    if (!PyType_Check(state_type) || !PyType_Check(eval_type)) {
        PyErr_SetString(PyExc_ValueError, "YohohoState, YohohoEvaluator: classes were expected");
        goto done;
    }
    memcpy(yh_z_piece, piece, sizeof piece);
    memcpy(yh_z_phase2, phase2, sizeof phase2);
    yh_z_black = black;
    yh_z_first = first;
    /* swap in the new references; the old ones (of an earlier init) go out below */
    PyObject *swap;
    swap = yh_state_type, yh_state_type = state_type, state_type = swap;
    swap = yh_eval_type, yh_eval_type = eval_type, eval_type = swap;
    swap = yh_eval_module, yh_eval_module = eval_mod, eval_mod = swap;
    rc = 0;
done:
    Py_XDECREF(state_type);
    Py_XDECREF(eval_type);
    Py_XDECREF(eval_mod);
    Py_DECREF(games_mod);
    return rc;
}

/* -- loading a reference State ------------------------------------------------------------------ */

static int yh_bad_state(const char *field, const char *why) {
    PyErr_Format(PyExc_ValueError, "yohoho state %s: %s", field, why);
    return -1;
}

static int yh_check_pieces(const CorePos *pos) {
    static const int limit[4] = {1, 2, 4, 1};
    u128 seen = 0;
    for (int i = 0; i < 8; i++) {
        int n = popcount128(pos->pcs[i]);
        if (((i & 3) == YH_ADMIRAL || (i & 3) == YH_ROCK) && n != 1)
            return yh_bad_state("_pcs", "each side needs exactly one Admiral and one Rock");
        if (n > limit[i & 3]) return yh_bad_state("_pcs", "too many pieces of a kind");
        if (seen & pos->pcs[i]) return yh_bad_state("_pcs", "two pieces on one cell");
        seen |= pos->pcs[i];
    }
    if ((pos->pcs[0] & yh_goal[0]) && (pos->pcs[4] & yh_goal[1]))
        return yh_bad_state("_pcs", "both Admirals stand on their goal rows");
    return 0;
}

static uint64_t yh_full_key(const CorePos *pos) {
    uint64_t key = pos->side ? yh_z_black : 0;
    if (pos->first) key ^= yh_z_first;
    if (pos->p2 >= 0) key ^= yh_z_phase2[pos->p2];
    for (int i = 0; i < 8; i++)
        for (u128 b = pos->pcs[i]; b; b &= b - 1) key ^= yh_z_piece[i][lowest128(b)];
    return key;
}

static int core_load(CorePos *pos, PyObject *state) {
    if (!yh_state_type) {
        PyErr_SetString(PyExc_RuntimeError, "yohoho core: not initialised");
        return -1;
    }
    /* exactly the reference's class: a subclass may have other rules */
    if ((PyObject *)Py_TYPE(state) != yh_state_type) {
        PyErr_Format(PyExc_TypeError, "a Yohoho state was expected, not %.80s",
                     Py_TYPE(state)->tp_name);
        return -1;
    }
    PyObject *pcs = PyObject_GetAttrString(state, "_pcs");
    if (!pcs) return -1;
    if (!PyTuple_Check(pcs) || PyTuple_GET_SIZE(pcs) != 8) {
        Py_DECREF(pcs);
        return yh_bad_state("_pcs", "a tuple of 8 bitboards was expected");
    }
    for (int i = 0; i < 8; i++) {
        if (core_read_bits(PyTuple_GET_ITEM(pcs, i), YH_CELLS, "_pcs", &pos->pcs[i]) < 0) {
            Py_DECREF(pcs);
            return -1;
        }
    }
    Py_DECREF(pcs);
    u128 occ, key;
    long side, p2, first;
    if (core_attr_bits(state, "_occ", YH_CELLS, &occ) < 0 ||
        core_attr_int(state, "_side", 0, 1, &side) < 0 ||
        core_attr_int(state, "_p2", -1, YH_CELLS - 1, &p2) < 0 ||
        core_attr_int(state, "_first", 0, 1, &first) < 0 ||
        core_attr_bits(state, "_key", 64, &key) < 0)
        return -1;
    pos->side = (int)side;
    pos->p2 = (int)p2;
    pos->first = (int)first;
    pos->depth = 0;
    if (yh_check_pieces(pos) < 0) return -1;
    pos->occ = 0;
    for (int i = 0; i < 8; i++) pos->occ |= pos->pcs[i];
    if (occ != pos->occ) return yh_bad_state("_occ", "not the union of the pieces");
    u128 own = 0;
    for (int k = 0; k < 4; k++) own |= pos->pcs[side * 4 + k];
    if (p2 >= 0 && !((own >> p2) & 1))
        return yh_bad_state("_p2", "the remembered cell holds no piece of the side to act");
    if (first && (side != 0 || p2 >= 0))
        return yh_bad_state("_first", "the first-turn flag is set only with White in phase 1");
    pos->key = yh_full_key(pos);
    if ((u128)pos->key != key) return yh_bad_state("_key", "does not match the position");
    pos->status = yh_compute_status(pos);
    return 0;
}

/* -- loading an evaluator: its weights (its Weights, and LIMIT and _FAR of bots.eval.yohoho) -- */

/* the int attribute name of obj (the evaluator's weights, or the module) */
static int yh_weight(PyObject *obj, const char *name, int64_t *out) {
    long v;
    if (core_attr_int(obj, name, -YH_WEIGHT_CAP, YH_WEIGHT_CAP, &v) < 0) return -1;
    *out = v;
    return 0;
}

/* a sequence weight of min_n to YH_MAX_SEQ entries, the first keep of them into out (the
 * reference reads no further); *n gets its length */
static int yh_weights(PyObject *obj, const char *name, Py_ssize_t min_n, int64_t *out,
                      Py_ssize_t keep, Py_ssize_t *n) {
    PyObject *seq = PyObject_GetAttrString(obj, name);
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Check(seq) ? PySequence_Size(seq) : -1;
    if (len < 0) {
        Py_DECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: a sequence of ints was expected", name);
        return -1;
    }
    if (len < min_n || len > YH_MAX_SEQ) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: %zd entries, not %zd to %d", name, len, min_n,
                     YH_MAX_SEQ);
        return -1;
    }
    long values[YH_MAX_SEQ];
    int rc = core_read_table(seq, len, -YH_WEIGHT_CAP, YH_WEIGHT_CAP, name, values);
    Py_DECREF(seq);
    if (rc < 0) return -1;
    for (Py_ssize_t i = 0; i < len && i < keep; i++) out[i] = values[i];
    if (n) *n = len;
    return 0;
}

/* the reference's hooks, which a subclass must not replace: the core does what they do */
static const char *const YH_HOOKS[] = {"evaluate",    "evaluate_python", "search_moves",
                                       "order_moves", "noisy_moves",     "is_quiet"};

static int yh_check_hooks(PyObject *evaluator) {
    PyObject *type = (PyObject *)Py_TYPE(evaluator);
    if (type == yh_eval_type) return 0;
    for (size_t i = 0; i < sizeof YH_HOOKS / sizeof *YH_HOOKS; i++) {
        PyObject *mine = PyObject_GetAttrString(type, YH_HOOKS[i]);
        PyObject *reference = mine ? PyObject_GetAttrString(yh_eval_type, YH_HOOKS[i]) : NULL;
        int same = mine && reference && mine == reference;
        Py_XDECREF(mine);
        Py_XDECREF(reference);
        if (PyErr_Occurred()) return -1;
        if (!same) {
            PyErr_Format(PyExc_TypeError,
                         "%.80s replaces YohohoEvaluator.%s: the compiled core cannot do what "
                         "it does",
                         ((PyTypeObject *)type)->tp_name, YH_HOOKS[i]);
            return -1;
        }
    }
    return 0;
}

static int core_eval_load(CoreEval *ev, PyObject *evaluator) {
    if (!yh_eval_type) {
        PyErr_SetString(PyExc_RuntimeError, "yohoho core: not initialised");
        return -1;
    }
    int is = PyObject_IsInstance(evaluator, yh_eval_type);
    if (is < 0) return -1;
    if (!is) {
        PyErr_Format(PyExc_TypeError, "a YohohoEvaluator was expected, not %.80s",
                     Py_TYPE(evaluator)->tp_name);
        return -1;
    }
    if (yh_check_hooks(evaluator) < 0) return -1;
    PyObject *w = PyObject_GetAttrString(evaluator, "weights");
    if (!w) return -1;
    YhWeights e;
    memset(&e, 0, sizeof e);
    int64_t far;
    Py_ssize_t n_prog, n_race;
    int bad = yh_weight(w, "chebec", &e.chebec) || yh_weight(w, "galleon", &e.galleon) ||
              yh_weight(w, "row_step", &e.row_step) || yh_weight(w, "rock_cone", &e.rock_cone) ||
              yh_weight(w, "pressure", &e.pressure) || yh_weight(w, "trap_soon", &e.trap_soon) ||
              yh_weight(w, "win_now", &e.win_now) ||
              yh_weight(w, "enemy_hang_p1", &e.enemy_hang_p1) ||
              yh_weight(w, "enemy_hang_p2", &e.enemy_hang_p2) ||
              yh_weight(w, "tempo_p1", &e.tempo_p1) || yh_weight(w, "tempo_p2", &e.tempo_p2) ||
              yh_weight(w, "race_horizon", &e.race_horizon) ||
              yh_weight(w, "race_won", &e.race_won) || yh_weight(w, "race_turn", &e.race_turn) ||
              yh_weights(w, "prog", 1, e.prog, YH_MAX_SEQ, &n_prog) ||
              yh_weights(w, "race", 1, e.race, YH_MAX_SEQ, &n_race) ||
              yh_weights(w, "step_safe", 6, e.step_safe, 6, NULL) ||
              yh_weights(w, "robust", 6, e.robust, 6, NULL) ||
              yh_weights(w, "attacked", 6, e.attacked, 6, NULL) ||
              yh_weights(w, "own_hang_p1", 2, e.own_hang_p1, 2, NULL) ||
              yh_weights(w, "own_hang_p2", 2, e.own_hang_p2, 2, NULL) ||
              yh_weight(yh_eval_module, "LIMIT", &e.limit) ||
              yh_weight(yh_eval_module, "_FAR", &far);
    Py_DECREF(w);
    if (bad) return -1;
    /* distances run 1.._FAR, and an Admiral that already moved one more: the tables' reach */
    if (far < 1 || far + 1 > n_prog || far + 2 > n_race) {
        PyErr_Format(PyExc_ValueError,
                     "_FAR: %lld needs prog of more than _FAR entries and race of two more",
                     (long long)far);
        return -1;
    }
    e.far = (int)far;
    e.layers = e.race_horizon < 0              ? 0
               : e.race_horizon > YH_MAX_LAYERS ? YH_MAX_LAYERS
                                                : (int)e.race_horizon;
    ev->w = e;
    core_eval_reset(ev); /* the values of other weights are gone */
    return 0;
}

#endif

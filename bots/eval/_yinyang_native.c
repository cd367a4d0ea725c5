/* The Yin Yang evaluation in C, and the two pieces of search advice that call it at every
 * node: YinYangEvaluator.evaluate, the evaluation over the samples of a determinized search
 * (_SampledThreats.evaluate), rewrite_laws (the laws search_moves lets an adaptation write) and
 * YinYangEvaluator.order_moves, each the same arithmetic as the reference, term for term.
 *
 * bots/eval/yinyang.py is the reference and the only place the tables and weights are defined:
 * it hands them to init() once (each checked: a ValueError names the damaged one, and a failed
 * init leaves the module unready), makes a plan() of a sampled evaluation's completions and
 * weights once per search, and calls the functions with a YinYangState, whose slots are read
 * and checked here. The expected scores go through exp() and log() in the order the reference
 * computes them, so the doubles, and the values rounded from them, are the reference's own
 * (tests/bots/test_eval_yinyang_native.py compares the two on many positions).
 */
#include "core/common.h"

#include <math.h>

#define N_LAWS 405
#define UNKNOWN N_LAWS /* a ``?`` law */
#define N_ANCHORS 9
#define N_CODES 81          /* 2x2 patterns of empty, black, white */
#define MAX_APPS (4 * N_ANCHORS)
#define MAX_BY_CAUSE 16     /* destructions and regenerations of one cause (12 at most) */
#define REWRITE_LAWS 3      /* bots/eval/yinyang.py's REWRITE_LAWS */
#define MAX_ORDERED 1024    /* order_moves takes lists this long (a search's are below 100) */
#define WEIGHT_LIMIT 1000000L /* weights and table values: far from any overflow of int64 */

enum { EMPTY, BLACK, WHITE };                   /* REGEN_COLOUR */
enum { DESTRUCTION, REGENERATION, ADAPTATION }; /* LAW_KIND */
enum { SETUP, START, MOVED };                   /* a state's _phase */
enum { K_PIECE, K_END, K_APPLY };               /* a move's kind, its low three bits */

typedef int64_t i64;

/* -- the tables (from bots/eval/yinyang.py and games/yinyang.py) ---------------------------- */

typedef struct {
    int cell_masks[N_ANCHORS][16];
    int effect_positions[2][N_LAWS];
    int regen_colour[N_LAWS];
    int law_kind[N_LAWS];
    int abs_cause[2][N_LAWS + 1]; /* -1 for UNKNOWN: no window has it */
    int row_pairs[256][3], row_pairs_high[256][3];
    int laws_by_cause[2][N_CODES][MAX_BY_CAUSE], n_by_cause[2][N_CODES];
    int race[2][4][256]; /* per player: least distance and proximity, low byte then high */
    int goal_bit[2], home_bit[2], goal_adjacent[2];
    int distance[2][16];
    int file_a, file_d;
    i64 w_distance, w_guarded_goal, w_home_guard, w_threat, w_threat_to_act, w_mobility;
    i64 w_law_count, w_adaptation, win_now, max_eval;
} Tables;

static Tables T;
static int ready = 0;
static unsigned char POP8[256];

static inline int pop16(unsigned x) { return POP8[x & 255] + POP8[x >> 8 & 255]; }

/* -- a position ------------------------------------------------------------------------------ */

typedef struct {
    unsigned b, w; /* 16-bit masks */
    int side, phase;
    int has_laws[2];
    int laws[2][4];
    int rev[2];
    long res_b, res_w;
    int codes[N_ANCHORS];
} Pos;

typedef struct {
    int slot, anchor, law;
} App;

static PyObject *NAME_B, *NAME_W, *NAME_SIDE, *NAME_PHASE, *NAME_LAWS, *NAME_REV, *NAME_RES_B,
    *NAME_RES_W;

static void window_codes(Pos *p) {
    unsigned b = p->b, w = p->w;
    const int *r0 = T.row_pairs[(b & 15) | (w & 15) << 4];
    const int *r1 = T.row_pairs[(b >> 4 & 15) | (w & 0xF0)];
    const int *r2 = T.row_pairs[(b >> 8 & 15) | (w >> 4 & 0xF0)];
    const int *h1 = T.row_pairs_high[(b >> 4 & 15) | (w & 0xF0)];
    const int *h2 = T.row_pairs_high[(b >> 8 & 15) | (w >> 4 & 0xF0)];
    const int *h3 = T.row_pairs_high[(b >> 12 & 15) | (w >> 8 & 0xF0)];
    for (int f = 0; f < 3; f++) {
        p->codes[f] = h1[f] + r0[f];
        p->codes[3 + f] = h2[f] + r1[f];
        p->codes[6 + f] = h3[f] + r2[f];
    }
}

/* -- the evaluation's terms (each named after the reference function it is) -------------------- */

static i64 race(unsigned own, unsigned enemy, int player) {
    unsigned lo = own & 255, hi = own >> 8;
    int min_lo = T.race[player][0][lo], min_hi = T.race[player][2][hi];
    i64 value = -T.w_distance * (min_lo < min_hi ? min_lo : min_hi) + T.race[player][1][lo] +
                T.race[player][3][hi];
    if (enemy & (unsigned)T.goal_bit[player])
        value -= T.w_guarded_goal;
    else if (!(own & (unsigned)T.goal_bit[player]) && (own & (unsigned)T.goal_adjacent[player]))
        value += T.w_threat;
    if (own & (unsigned)T.home_bit[player]) value += T.w_home_guard;
    return value;
}

static inline i64 board_value(unsigned black, unsigned white) {
    return race(black, white, 0) - race(white, black, 1);
}

static inline int piece_moves(unsigned own, unsigned empty) {
    return pop16((own << 4) & empty) + pop16((own >> 4) & empty) +
           pop16(((own & ~(unsigned)T.file_d) << 1) & empty) +
           pop16(((own & ~(unsigned)T.file_a) >> 1) & empty);
}

/* law (not UNKNOWN) applied by player on anchor: the reference's law_gain */
static i64 law_gain(unsigned black, unsigned white, int player, int anchor, int law) {
    unsigned b2 = black, w2 = white;
    if (T.law_kind[law] != ADAPTATION) {
        unsigned mask = (unsigned)T.cell_masks[anchor][T.effect_positions[player][law]];
        int colour = T.regen_colour[law];
        if (colour == EMPTY) {
            b2 = black & ~mask;
            w2 = white & ~mask;
        } else if (colour == BLACK) {
            b2 = black | mask;
        } else {
            w2 = white | mask;
        }
    }
    unsigned own2 = player == 0 ? b2 : w2, enemy2 = player == 0 ? w2 : b2;
    if (own2 & (unsigned)T.goal_bit[player]) return T.win_now;
    if (enemy2 & (unsigned)T.goal_bit[player ^ 1]) return -T.win_now;
    i64 before = board_value(black, white), after = board_value(b2, w2);
    return player == 0 ? after - before : before - after;
}

/* YinYangState._applications: every (slot, anchor, law) of side's known laws R5 allows */
static int applications(const Pos *p, int side, App *out) {
    if (!p->has_laws[side]) return 0;
    int who[8], cause_of[8], n_revealed = -1, n = 0;
    for (int slot = 0; slot < 4; slot++) {
        int law = p->laws[side][slot];
        int cause = T.abs_cause[side][law];
        int found = 0;
        for (int a = 0; a < N_ANCHORS; a++) found |= p->codes[a] == cause;
        if (!found) continue;
        if (n_revealed < 0) {
            n_revealed = 0;
            for (int q = 0; q < 2; q++) {
                if (!p->has_laws[q] || !p->rev[q]) continue;
                for (int i = 0; i < 4; i++) {
                    if (p->rev[q] >> i & 1) {
                        who[n_revealed] = q * 4 + i;
                        cause_of[n_revealed++] = T.abs_cause[q][p->laws[q][i]];
                    }
                }
            }
        }
        int me = side * 4 + slot, blocked = 0;
        for (int i = 0; i < n_revealed; i++) blocked |= cause_of[i] == cause && who[i] != me;
        if (blocked) continue;
        int colour = T.regen_colour[law];
        if (colour && (colour == BLACK ? p->res_b : p->res_w) < 2) continue;
        for (int a = 0; a < N_ANCHORS; a++)
            if (p->codes[a] == cause) out[n++] = (App){slot, a, law};
    }
    return n;
}

/* the revealed laws' causes (eval's revealed_causes), one bit per code */
static u128 revealed_causes(const Pos *p) {
    u128 blocked = 0;
    for (int q = 0; q < 2; q++) {
        if (!p->has_laws[q]) continue;
        for (int i = 0; i < 4; i++) {
            int law = p->laws[q][i];
            if (p->rev[q] >> i & 1 && law != UNKNOWN) blocked |= (u128)1 << T.abs_cause[q][law];
        }
    }
    return blocked;
}

/* YinYangEvaluator._board_terms: the race, the threat to act and mobility, Black's side */
static i64 board_terms(const Pos *p) {
    unsigned black = p->b, white = p->w;
    int side = p->side;
    i64 value = board_value(black, white);
    if (p->phase == START) {
        unsigned own = side ? white : black;
        if ((own & (unsigned)T.goal_adjacent[side]) && !((black | white) & (unsigned)T.goal_bit[side]))
            value += side == 0 ? T.w_threat_to_act : -T.w_threat_to_act;
    }
    unsigned empty = ~(black | white) & 0xFFFF;
    return value + T.w_mobility * (piece_moves(black, empty) - piece_moves(white, empty));
}

/* the known laws' part of a law term: best gain, count of destructions and regenerations,
 * and the adaptation bonus */
typedef struct {
    i64 best, count, adapt;
} Known;

static Known known_laws(const Pos *p, int player) {
    App apps[MAX_APPS];
    int n = applications(p, player, apps);
    Known k = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        int law = apps[i].law;
        if (T.law_kind[law] == ADAPTATION) {
            k.adapt = T.w_adaptation;
            continue;
        }
        k.count++;
        i64 gain = law_gain(p->b, p->w, player, apps[i].anchor, law);
        if (gain > k.best) k.best = gain;
    }
    return k;
}

static inline i64 term_of(i64 best, i64 count, i64 adapt, int share) {
    return floor_div(best * share, 10) + T.w_law_count * (count < 4 ? count : 4) + adapt;
}

/* YinYangEvaluator._law_term */
static i64 law_term(const Pos *p, int player) {
    Known k = known_laws(p, player);
    return term_of(k.best, k.count, k.adapt, player == p->side ? 9 : 3);
}

static i64 evaluate_plain(const Pos *p) {
    i64 value = board_terms(p);
    for (int player = 0; player < 2; player++) {
        i64 term = law_term(p, player);
        value += player ? -term : term;
    }
    return p->side ? -value : value;
}

/* -- reading a state -------------------------------------------------------------------------- */

static int attr_long(PyObject *state, PyObject *name, long low, long high, long *out) {
    PyObject *value = PyObject_GetAttr(state, name);
    if (!value) return -1;
    int rc = core_read_int(value, low, high, PyUnicode_AsUTF8(name), out);
    Py_DECREF(value);
    return rc;
}

static int read_laws(PyObject *laws, int player, Pos *p) {
    if (laws == Py_None) {
        p->has_laws[player] = 0;
        return 0;
    }
    if (!PyTuple_Check(laws) || PyTuple_GET_SIZE(laws) != 4) {
        PyErr_SetString(PyExc_ValueError, "_laws: None or four law numbers per player");
        return -1;
    }
    p->has_laws[player] = 1;
    for (int i = 0; i < 4; i++) {
        long law;
        if (core_read_int(PyTuple_GET_ITEM(laws, i), 0, UNKNOWN, "_laws", &law) < 0) return -1;
        p->laws[player][i] = (int)law;
    }
    return 0;
}

static int read_pair(PyObject *state, PyObject *name, PyObject **items) {
    PyObject *pair = PyObject_GetAttr(state, name);
    if (!pair) return -1;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_ValueError, "%U: a pair was expected", name);
        Py_DECREF(pair);
        return -1;
    }
    items[0] = PyTuple_GET_ITEM(pair, 0);
    items[1] = PyTuple_GET_ITEM(pair, 1);
    Py_INCREF(items[0]);
    Py_INCREF(items[1]);
    Py_DECREF(pair);
    return 0;
}

/* a YinYangState's slots into *p; -1 with an exception naming the field */
static int load(PyObject *state, Pos *p) {
    long b, w, side, phase, res_b, res_w, rev0, rev1;
    if (attr_long(state, NAME_B, 0, 0xFFFF, &b) || attr_long(state, NAME_W, 0, 0xFFFF, &w) ||
        attr_long(state, NAME_SIDE, 0, 1, &side) || attr_long(state, NAME_PHASE, 0, 2, &phase) ||
        attr_long(state, NAME_RES_B, LONG_MIN, LONG_MAX, &res_b) ||
        attr_long(state, NAME_RES_W, LONG_MIN, LONG_MAX, &res_w))
        return -1;
    PyObject *items[2];
    if (read_pair(state, NAME_REV, items)) return -1;
    int rc = core_read_int(items[0], 0, 15, "_rev", &rev0) ||
             core_read_int(items[1], 0, 15, "_rev", &rev1);
    Py_DECREF(items[0]);
    Py_DECREF(items[1]);
    if (rc) return -1;
    if (read_pair(state, NAME_LAWS, items)) return -1;
    rc = read_laws(items[0], 0, p) || read_laws(items[1], 1, p);
    Py_DECREF(items[0]);
    Py_DECREF(items[1]);
    if (rc) return -1;
    p->b = (unsigned)b;
    p->w = (unsigned)w;
    p->side = (int)side;
    p->phase = (int)phase;
    p->res_b = res_b;
    p->res_w = res_w;
    p->rev[0] = (int)rev0;
    p->rev[1] = (int)rev1;
    window_codes(p);
    return 0;
}

/* -- the evaluation over the samples ---------------------------------------------------------- */

#define PLAN_NAME "bots.eval._yinyang_native.plan"

typedef struct {
    Py_ssize_t n;         /* completions */
    int has[2];           /* whether the player has ``?`` slots at the root */
    int nslots[2];
    int slots[2][4];
    int *laws[2];         /* n * nslots[player]: the laws each completion puts in the slots */
    double *weights;      /* each completion's weight, as the reference's int becomes a float */
    i64 *per_world, *terms; /* scratch of one evaluation (the GIL is held throughout) */
    unsigned char *stuck, *fits;
    double scale;
} Plan;

/* _SampledThreats._sampled_terms: player's law term in each completion (into plan->terms) and
 * whether any of its laws fits there (plan->fits) */
static void sampled_terms(Plan *plan, const Pos *p, int player) {
    Py_ssize_t n = plan->n;
    int share = player == p->side ? 9 : 3;
    int open[4], n_open = 0;
    for (int i = 0; i < plan->nslots[player]; i++) {
        int slot = plan->slots[player][i];
        if (p->laws[player][slot] == UNKNOWN && !(p->rev[player] >> slot & 1)) open[n_open++] = i;
    }
    Known k = known_laws(p, player);
    if (!n_open) {
        i64 term = term_of(k.best, k.count, k.adapt, share);
        for (Py_ssize_t j = 0; j < n; j++) {
            plan->terms[j] = term;
            plan->fits[j] = k.count || k.adapt;
        }
        return;
    }
    u128 blocked = revealed_causes(p);
    const int *cause = T.abs_cause[player];
    int nslots = plan->nslots[player];
    for (Py_ssize_t j = 0; j < n; j++) {
        const int *hidden = plan->laws[player] + j * nslots;
        i64 best = k.best, count = k.count, adapt = k.adapt;
        for (int o = 0; o < n_open; o++) {
            int law = hidden[open[o]];
            int c = cause[law];
            int anywhere = 0;
            for (int a = 0; a < N_ANCHORS; a++) anywhere |= p->codes[a] == c;
            if (!anywhere || (blocked >> c & 1)) continue; /* c >= 0 when some window has it */
            if (T.law_kind[law] == ADAPTATION) {
                adapt = T.w_adaptation;
                continue;
            }
            int colour = T.regen_colour[law];
            if (colour && (colour == BLACK ? p->res_b : p->res_w) < 2) continue;
            for (int a = 0; a < N_ANCHORS; a++) {
                if (p->codes[a] != c) continue;
                count++;
                i64 gain = law_gain(p->b, p->w, player, a, law);
                if (gain > best) best = gain;
            }
        }
        plan->terms[j] = term_of(best, count, adapt, share);
        plan->fits[j] = count || adapt;
    }
}

/* Python's round() of a double: half to even */
static double round_half_even(double x) {
    double r = round(x);
    if (fabs(x - r) == 0.5) r = 2.0 * round(x / 2.0);
    return r;
}

/* _SampledThreats.logit_python: the logit of the mean expected score, before rounding; -1
 * with an AssertionError where the reference's assert fails */
static int sampled_logit(Plan *plan, const Pos *p, double *result) {
    Py_ssize_t n = plan->n;
    int side = p->side;
    i64 common = board_terms(p);
    for (Py_ssize_t j = 0; j < n; j++) {
        plan->per_world[j] = common;
        plan->stuck[j] = 0;
    }
    for (int player = 0; player < 2; player++) {
        i64 sign = player ? -1 : 1;
        if (!plan->has[player]) {
            i64 term = law_term(p, player);
            for (Py_ssize_t j = 0; j < n; j++) plan->per_world[j] += sign * term;
            continue;
        }
        if (!p->has_laws[player]) {
            PyErr_SetString(PyExc_AssertionError, "a player with ? laws at the root has none");
            return -1;
        }
        sampled_terms(plan, p, player);
        int all_fit = 1;
        for (Py_ssize_t j = 0; j < n; j++) {
            plan->per_world[j] += sign * plan->terms[j];
            all_fit &= plan->fits[j] != 0;
        }
        if (player == side && !all_fit) {
            /* without a token it knows of, the side to act must fire a hidden law, and in a
             * completion where none fits it has lost */
            int known = p->phase != START;
            if (!known) {
                unsigned empty = ~(p->b | p->w) & 0xFFFF;
                known = piece_moves(side ? p->w : p->b, empty) > 0;
            }
            if (!known) {
                App apps[MAX_APPS];
                known = applications(p, side, apps) > 0;
            }
            if (!known)
                for (Py_ssize_t j = 0; j < n; j++) plan->stuck[j] = !plan->fits[j];
        }
    }
    double scale = plan->scale, total = 0.0, weight_sum = 0.0;
    for (Py_ssize_t j = 0; j < n; j++) {
        double expectation;
        if (plan->stuck[j]) {
            expectation = 0.0;
        } else {
            i64 value = plan->per_world[j];
            i64 mine = side ? -value : value;
            double x = (double)(-mine) / scale;
            x = x < 60.0 ? x : 60.0; /* min(60.0, x) */
            x = x > -60.0 ? x : -60.0; /* max(-60.0, x) */
            expectation = 1.0 / (1.0 + exp(x));
        }
        total += plan->weights[j] * expectation;
        weight_sum += plan->weights[j];
    }
    double mean = total / weight_sum;
    mean = mean > 1e-9 ? mean : 1e-9;
    mean = mean < 1.0 - 1e-9 ? mean : 1.0 - 1e-9;
    *result = scale * log(mean / (1.0 - mean));
    return 0;
}

/* _SampledThreats.evaluate_python: the logit rounded and kept within the evaluations' range */
static int evaluate_sampled(Plan *plan, const Pos *p, i64 *result) {
    double logit;
    if (sampled_logit(plan, p, &logit) < 0) return -1;
    /* |logit| is far below 2**62: the scale is checked, and log() within 21 of 0 here */
    i64 value = (i64)round_half_even(logit), limit = T.max_eval - 1;
    *result = value > limit ? limit : value < -limit ? -limit : value;
    return 0;
}

static void plan_free(PyObject *capsule) {
    Plan *plan = PyCapsule_GetPointer(capsule, PLAN_NAME);
    if (!plan) {
        PyErr_Clear();
        return;
    }
    PyMem_Free(plan->laws[0]);
    PyMem_Free(plan->laws[1]);
    PyMem_Free(plan->weights);
    PyMem_Free(plan->per_world);
    PyMem_Free(plan->terms);
    PyMem_Free(plan->stuck);
    PyMem_Free(plan->fits);
    PyMem_Free(plan);
}

/* one player's entry of _SampledThreats.variants (None, or (slots, completions)) */
static int plan_player(Plan *plan, int player, PyObject *entry) {
    if (entry == Py_None) return 0;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
        PyErr_SetString(PyExc_ValueError, "variants: (slots, completions) per player");
        return -1;
    }
    PyObject *slots = PyTuple_GET_ITEM(entry, 0), *worlds = PyTuple_GET_ITEM(entry, 1);
    if (!PyTuple_Check(slots) || PyTuple_GET_SIZE(slots) > 4 || !PyList_Check(worlds) ||
        PyList_GET_SIZE(worlds) != plan->n) {
        PyErr_SetString(PyExc_ValueError,
                        "variants: a tuple of at most four slots and a list of one tuple of "
                        "laws per weight");
        return -1;
    }
    int nslots = (int)PyTuple_GET_SIZE(slots);
    plan->has[player] = 1;
    plan->nslots[player] = nslots;
    for (int i = 0; i < nslots; i++) {
        long slot;
        if (core_read_int(PyTuple_GET_ITEM(slots, i), 0, 3, "variants: a slot", &slot) < 0)
            return -1;
        plan->slots[player][i] = (int)slot;
    }
    plan->laws[player] = PyMem_Malloc(sizeof(int) * (size_t)(plan->n * nslots + 1));
    if (!plan->laws[player]) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < plan->n; j++) {
        PyObject *laws = PyList_GET_ITEM(worlds, j);
        if (!PyTuple_Check(laws) || PyTuple_GET_SIZE(laws) != nslots) {
            PyErr_SetString(PyExc_ValueError, "variants: a completion's laws, one per slot");
            return -1;
        }
        for (int i = 0; i < nslots; i++) {
            long law;
            if (core_read_int(PyTuple_GET_ITEM(laws, i), 0, UNKNOWN, "variants: a law", &law) < 0)
                return -1;
            plan->laws[player][j * nslots + i] = (int)law;
        }
    }
    return 0;
}

static int plan_fill(Plan *plan, PyObject *const *args) {
    PyObject *weights = args[2];
    if (!PyList_Check(weights) || PyList_GET_SIZE(weights) < 1) {
        PyErr_SetString(PyExc_ValueError, "weights: a list of at least one int");
        return -1;
    }
    Py_ssize_t n = plan->n = PyList_GET_SIZE(weights);
    plan->weights = PyMem_Malloc(sizeof(double) * (size_t)n);
    plan->per_world = PyMem_Malloc(sizeof(i64) * (size_t)n);
    plan->terms = PyMem_Malloc(sizeof(i64) * (size_t)n);
    plan->stuck = PyMem_Malloc((size_t)n);
    plan->fits = PyMem_Malloc((size_t)n);
    if (!plan->weights || !plan->per_world || !plan->terms || !plan->stuck || !plan->fits) {
        PyErr_NoMemory();
        return -1;
    }
    long sum = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        long w;
        if (core_read_int(PyList_GET_ITEM(weights, j), 0, 1L << 30, "weights", &w) < 0)
            return -1;
        plan->weights[j] = (double)w;
        sum += w;
    }
    if (sum == 0) {
        PyErr_SetString(PyExc_ValueError, "weights: their sum must be positive");
        return -1;
    }
    if (!PyFloat_Check(args[3])) {
        PyErr_SetString(PyExc_ValueError, "scale: a float was expected");
        return -1;
    }
    plan->scale = PyFloat_AS_DOUBLE(args[3]);
    if (!(plan->scale >= 1.0 && plan->scale <= 1e6)) {
        PyErr_SetString(PyExc_ValueError, "scale: a float in [1, 1e6] was expected");
        return -1;
    }
    return plan_player(plan, 0, args[0]) || plan_player(plan, 1, args[1]) ? -1 : 0;
}

static PyObject *py_plan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "plan(black_variants, white_variants, weights, scale)");
        return NULL;
    }
    Plan *plan = PyMem_Calloc(1, sizeof(Plan));
    if (!plan) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(plan, PLAN_NAME, plan_free);
    if (!capsule) {
        PyMem_Free(plan);
        return NULL;
    }
    if (plan_fill(plan, args) < 0) {
        Py_DECREF(capsule); /* frees what was filled */
        return NULL;
    }
    return capsule;
}

/* -- the laws an adaptation writes in the search ---------------------------------------------- */

typedef struct {
    i64 gain;
    int law, code;
} Scored;

/* the order of the reference's sorted (-gain, law, code) tuples */
static inline int scored_before(const Scored *x, const Scored *y) {
    if (x->gain != y->gain) return x->gain > y->gain;
    if (x->law != y->law) return x->law < y->law;
    return x->code < y->code;
}

/* rewrite_laws: the best destructions and regenerations side could write for this board, at
 * most REWRITE_LAWS, of different causes; returns their number */
static int rewrite_laws(const Pos *p, int side, unsigned black, unsigned white, int *out) {
    Scored scored[N_ANCHORS * MAX_BY_CAUSE];
    int n = 0, codes[N_ANCHORS];
    u128 blocked = revealed_causes(p), held = 0;
    for (int i = 0; p->has_laws[side] && i < 4; i++)
        if (p->laws[side][i] != UNKNOWN) held |= (u128)1 << T.abs_cause[side][p->laws[side][i]];
    Pos board = *p; /* the windows of the board given, which may not be the state's */
    board.b = black;
    board.w = white;
    window_codes(&board);
    memcpy(codes, board.codes, sizeof codes);
    for (int anchor = 0; anchor < N_ANCHORS; anchor++) {
        int code = codes[anchor];
        if ((blocked | held) >> code & 1) continue;
        for (int k = 0; k < T.n_by_cause[side][code]; k++) {
            int law = T.laws_by_cause[side][code][k];
            int colour = T.regen_colour[law];
            if (colour && (colour == BLACK ? p->res_b : p->res_w) < 2) continue;
            i64 gain = law_gain(black, white, side, anchor, law);
            if (gain <= 0) continue;
            /* insertion in order: the sorted list of the reference */
            int at = n++;
            Scored item = {gain, law, code};
            while (at > 0 && scored_before(&item, &scored[at - 1])) {
                scored[at] = scored[at - 1];
                at--;
            }
            scored[at] = item;
        }
    }
    int count = 0;
    u128 causes = 0;
    for (int i = 0; i < n && count < REWRITE_LAWS; i++) {
        int law = scored[i].law, code = scored[i].code, taken = 0;
        for (int j = 0; j < count; j++) taken |= out[j] == law;
        if ((causes >> code & 1) || taken) continue;
        out[count++] = law;
        causes |= (u128)1 << code;
    }
    return count;
}

/* -- the module's functions ------------------------------------------------------------------ */

static int unready(void) {
    if (ready) return 0;
    PyErr_SetString(PyExc_RuntimeError, "_yinyang_native: init() has not succeeded");
    return 1;
}

static PyObject *py_evaluate(PyObject *self, PyObject *state) {
    if (unready()) return NULL;
    Pos p;
    if (load(state, &p) < 0) return NULL;
    return PyLong_FromLongLong(evaluate_plain(&p));
}

/* the position and plan of evaluate_sampled(state, plan) and sampled_logit(state, plan) */
static Plan *sampled_args(PyObject *const *args, Py_ssize_t nargs, Pos *p) {
    if (unready()) return NULL;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "two arguments: state, plan");
        return NULL;
    }
    Plan *plan = PyCapsule_GetPointer(args[1], PLAN_NAME);
    return plan && load(args[0], p) == 0 ? plan : NULL;
}

static PyObject *py_evaluate_sampled(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Pos p;
    i64 value;
    Plan *plan = sampled_args(args, nargs, &p);
    if (!plan || evaluate_sampled(plan, &p, &value) < 0) return NULL;
    return PyLong_FromLongLong(value);
}

static PyObject *py_sampled_logit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Pos p;
    double logit;
    Plan *plan = sampled_args(args, nargs, &p);
    if (!plan || sampled_logit(plan, &p, &logit) < 0) return NULL;
    return PyFloat_FromDouble(logit);
}

/* YinYangEvaluator.order_moves: the moves by their score, best first, in a stable sort */
static PyObject *py_order_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static i64 scores[MAX_ORDERED];
    static PyObject *items[MAX_ORDERED];
    if (unready()) return NULL;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "order_moves(state, moves)");
        return NULL;
    }
    Pos p;
    if (load(args[0], &p) < 0) return NULL;
    PyObject *moves = PySequence_Fast(args[1], "order_moves: moves must be a sequence");
    if (!moves) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(moves);
    if (n > MAX_ORDERED) {
        Py_DECREF(moves);
        PyErr_SetString(PyExc_ValueError, "order_moves: too many moves");
        return NULL;
    }
    int side = p.side;
    const int *dist = T.distance[side];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(moves, i);
        long move;
        if (core_read_int(item, 0, 1L << 40, "order_moves: a move", &move) < 0) {
            Py_DECREF(moves);
            return NULL;
        }
        i64 score = 0;
        int kind = (int)(move & 7);
        if (kind == K_PIECE) {
            score = 10 * (dist[move >> 3 & 15] - dist[move >> 7 & 15]);
        } else if (kind == K_APPLY && p.has_laws[side]) {
            int law = p.laws[side][move >> 3 & 3], anchor = (int)(move >> 5 & 15);
            if (law == UNKNOWN || anchor >= N_ANCHORS) {
                Py_DECREF(moves);
                PyErr_SetString(PyExc_ValueError, "order_moves: an application of no law");
                return NULL;
            }
            score = law_gain(p.b, p.w, side, anchor, law);
        }
        /* insertion after every move of a score at least as high: sorted()'s stable order */
        Py_ssize_t at = i;
        while (at > 0 && scores[at - 1] < score) {
            scores[at] = scores[at - 1];
            items[at] = items[at - 1];
            at--;
        }
        scores[at] = score;
        items[at] = item;
    }
    PyObject *out = PyList_New(n);
    if (out)
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(items[i]);
            PyList_SET_ITEM(out, i, items[i]);
        }
    Py_DECREF(moves);
    return out;
}

static PyObject *py_rewrite_laws(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (unready()) return NULL;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "rewrite_laws(state, side, black, white)");
        return NULL;
    }
    Pos p;
    long side, black, white;
    if (load(args[0], &p) < 0 || core_read_int(args[1], 0, 1, "rewrite_laws: side", &side) ||
        core_read_int(args[2], 0, 0xFFFF, "rewrite_laws: black", &black) ||
        core_read_int(args[3], 0, 0xFFFF, "rewrite_laws: white", &white))
        return NULL;
    int laws[REWRITE_LAWS];
    int n = rewrite_laws(&p, (int)side, (unsigned)black, (unsigned)white, laws);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *law = PyLong_FromLong(laws[i]);
        if (!law) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, law);
    }
    return out;
}

/* -- init: the tables, checked ---------------------------------------------------------------- */

/* a nested tuple or list of ints with exactly the dimensions dims, each in [low, high], into
 * out (row-major); ValueError naming the table on any damage */
static int read_ints(PyObject *obj, const Py_ssize_t *dims, int ndims, long low, long high,
                     const char *name, long *out, Py_ssize_t *at) {
    if (ndims == 0) {
        if (!PyLong_Check(obj)) {
            PyErr_Format(PyExc_ValueError, "%s: an int was expected, not %.80s", name,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        return core_read_int(obj, low, high, name, &out[(*at)++]);
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_ValueError, "%s: a tuple or list was expected, not %.80s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t size = PySequence_Fast_GET_SIZE(obj);
    if (size != dims[0]) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries where %zd were expected", name, size,
                     dims[0]);
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        Py_INCREF(item);
        int rc = read_ints(item, dims + 1, ndims - 1, low, high, name, out, at);
        Py_DECREF(item);
        if (rc < 0) return -1;
    }
    return 0;
}

#define TABLE_CELLS 2048 /* the largest table: the race tables, 2 x 4 x 256 */

/* tables[name], of dimensions dims (ndims of them), into the ints at out */
static int table(PyObject *tables, const char *name, const Py_ssize_t *dims, int ndims,
                 long low, long high, int *out) {
    static long cells[TABLE_CELLS];
    PyObject *obj = PyDict_GetItemString(tables, name); /* borrowed */
    if (!obj) {
        PyErr_Format(PyExc_ValueError, "%s: missing", name);
        return -1;
    }
    Py_INCREF(obj);
    Py_ssize_t at = 0;
    int rc = read_ints(obj, dims, ndims, low, high, name, cells, &at);
    Py_DECREF(obj);
    if (rc < 0) return -1;
    for (Py_ssize_t i = 0; i < at; i++) out[i] = (int)cells[i];
    return 0;
}

static int scalar(PyObject *tables, const char *name, long low, long high, i64 *out) {
    int value;
    if (table(tables, name, NULL, 0, low, high, &value) < 0) return -1;
    *out = value;
    return 0;
}

/* a constant of the reference that this file has built in: checked to agree */
static int agrees(PyObject *tables, const char *name, long expected) {
    i64 value;
    if (scalar(tables, name, INT_MIN, INT_MAX, &value) < 0) return -1;
    if (value != expected) {
        PyErr_Format(PyExc_ValueError, "%s: %ld was expected (built into _yinyang_native.c)",
                     name, expected);
        return -1;
    }
    return 0;
}

/* LAWS_BY_CAUSE[owner][code]: tuples of at most MAX_BY_CAUSE laws, none an adaptation */
static int laws_by_cause(PyObject *tables, Tables *t) {
    static const char *name = "LAWS_BY_CAUSE";
    static const Py_ssize_t one[] = {1};
    PyObject *owners = PyDict_GetItemString(tables, name); /* borrowed */
    if (!owners || !PyTuple_Check(owners) || PyTuple_GET_SIZE(owners) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: a pair of tuples was expected", name);
        return -1;
    }
    for (int o = 0; o < 2; o++) {
        PyObject *by_code = PyTuple_GET_ITEM(owners, o);
        if (!PyTuple_Check(by_code) || PyTuple_GET_SIZE(by_code) != N_CODES) {
            PyErr_Format(PyExc_ValueError, "%s: %d causes per owner were expected", name, N_CODES);
            return -1;
        }
        for (int code = 0; code < N_CODES; code++) {
            PyObject *laws = PyTuple_GET_ITEM(by_code, code);
            if (!PyTuple_Check(laws) || PyTuple_GET_SIZE(laws) > MAX_BY_CAUSE) {
                PyErr_Format(PyExc_ValueError, "%s: a tuple of at most %d laws was expected",
                             name, MAX_BY_CAUSE);
                return -1;
            }
            int n = (int)PyTuple_GET_SIZE(laws);
            for (int k = 0; k < n; k++) {
                long law;
                Py_ssize_t at = 0;
                if (read_ints(PyTuple_GET_ITEM(laws, k), one, 0, 0, N_LAWS - 1, name, &law, &at))
                    return -1;
                if (t->law_kind[law] == ADAPTATION || t->abs_cause[o][law] != code) {
                    PyErr_Format(PyExc_ValueError, "%s: law %ld is not of its cause", name, law);
                    return -1;
                }
                t->laws_by_cause[o][code][k] = (int)law;
            }
            t->n_by_cause[o][code] = n;
        }
    }
    return 0;
}

static int read_tables(PyObject *tables, Tables *t) {
    static const Py_ssize_t cell_dims[] = {N_ANCHORS, 16}, laws2[] = {2, N_LAWS},
                            laws[] = {N_LAWS}, causes[] = {2, N_LAWS + 1}, rows[] = {256, 3},
                            race_dims[] = {2, 4, 256}, pair[] = {2},
                            distance[] = {2, 16};
    const long W = WEIGHT_LIMIT;
    if (agrees(tables, "N_LAWS", N_LAWS) || agrees(tables, "UNKNOWN", UNKNOWN) ||
        agrees(tables, "N_ANCHORS", N_ANCHORS) || agrees(tables, "ADAPTATION", ADAPTATION) ||
        agrees(tables, "EMPTY", EMPTY) || agrees(tables, "BLACK", BLACK) ||
        agrees(tables, "START", START) || agrees(tables, "K_PIECE", K_PIECE) ||
        agrees(tables, "REWRITE_LAWS", REWRITE_LAWS))
        return -1;
    if (table(tables, "CELL_MASKS", cell_dims, 2, 0, 0xFFFF, &t->cell_masks[0][0]) ||
        table(tables, "EFFECT_POSITIONS", laws2, 2, 0, 15, &t->effect_positions[0][0]) ||
        table(tables, "REGEN_COLOUR", laws, 1, EMPTY, WHITE, t->regen_colour) ||
        table(tables, "LAW_KIND", laws, 1, DESTRUCTION, ADAPTATION, t->law_kind) ||
        table(tables, "ABS_CAUSE", causes, 2, -1, N_CODES - 1, &t->abs_cause[0][0]) ||
        table(tables, "ROW_PAIRS", rows, 2, 0, 8, &t->row_pairs[0][0]) ||
        table(tables, "ROW_PAIRS_HIGH", rows, 2, 0, 72, &t->row_pairs_high[0][0]) ||
        table(tables, "RACE_TABLES", race_dims, 3, -W, W, &t->race[0][0][0]) ||
        table(tables, "GOAL_BIT", pair, 1, 0, 0xFFFF, t->goal_bit) ||
        table(tables, "HOME_BIT", pair, 1, 0, 0xFFFF, t->home_bit) ||
        table(tables, "GOAL_ADJACENT", pair, 1, 0, 0xFFFF, t->goal_adjacent) ||
        table(tables, "DISTANCE", distance, 2, 0, 6, &t->distance[0][0]) ||
        table(tables, "FILE_A_MASK", NULL, 0, 0, 0xFFFF, &t->file_a) ||
        table(tables, "FILE_D_MASK", NULL, 0, 0, 0xFFFF, &t->file_d))
        return -1;
    for (int p = 0; p < 2; p++) {
        if (t->abs_cause[p][UNKNOWN] != -1) {
            PyErr_SetString(PyExc_ValueError, "ABS_CAUSE: the cause of UNKNOWN must be -1");
            return -1;
        }
        for (int law = 0; law < N_LAWS; law++) {
            if (t->abs_cause[p][law] < 0) {
                PyErr_SetString(PyExc_ValueError, "ABS_CAUSE: a law without a cause");
                return -1;
            }
        }
    }
    if (scalar(tables, "W_DISTANCE", -W, W, &t->w_distance) ||
        scalar(tables, "W_GUARDED_GOAL", -W, W, &t->w_guarded_goal) ||
        scalar(tables, "W_HOME_GUARD", -W, W, &t->w_home_guard) ||
        scalar(tables, "W_THREAT", -W, W, &t->w_threat) ||
        scalar(tables, "W_THREAT_TO_ACT", -W, W, &t->w_threat_to_act) ||
        scalar(tables, "W_MOBILITY", -W, W, &t->w_mobility) ||
        scalar(tables, "W_LAW_COUNT", -W, W, &t->w_law_count) ||
        scalar(tables, "W_ADAPTATION", -W, W, &t->w_adaptation) ||
        scalar(tables, "WIN_NOW", -W, W, &t->win_now) ||
        scalar(tables, "MAX_EVAL", 1, 1L << 30, &t->max_eval))
        return -1;
    return laws_by_cause(tables, t);
}

static PyObject *py_init(PyObject *self, PyObject *tables) {
    static Tables staged;
    ready = 0; /* a failed init leaves the module unready, never half-written */
    if (!PyDict_Check(tables)) {
        PyErr_SetString(PyExc_TypeError, "init(tables): a dict of the tables by name");
        return NULL;
    }
    memset(&staged, 0, sizeof staged);
    if (read_tables(tables, &staged) < 0) return NULL;
    T = staged;
    ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_O, "init(tables): the tables and weights of bots/eval/yinyang.py."},
    {"evaluate", py_evaluate, METH_O, "evaluate(state): YinYangEvaluator.evaluate."},
    {"plan", (PyCFunction)(void (*)(void))py_plan, METH_FASTCALL,
     "plan(black_variants, white_variants, weights, scale): a sampled evaluation's completions "
     "and weights, for evaluate_sampled."},
    {"evaluate_sampled", (PyCFunction)(void (*)(void))py_evaluate_sampled, METH_FASTCALL,
     "evaluate_sampled(state, plan): _SampledThreats.evaluate."},
    {"sampled_logit", (PyCFunction)(void (*)(void))py_sampled_logit, METH_FASTCALL,
     "sampled_logit(state, plan): _SampledThreats.logit_python, the value before rounding."},
    {"order_moves", (PyCFunction)(void (*)(void))py_order_moves, METH_FASTCALL,
     "order_moves(state, moves): YinYangEvaluator.order_moves."},
    {"rewrite_laws", (PyCFunction)(void (*)(void))py_rewrite_laws, METH_FASTCALL,
     "rewrite_laws(state, side, black, white): bots.eval.yinyang.rewrite_laws."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yinyang_native",
    "The Yin Yang evaluation in C (see bots/eval/yinyang.py, the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yinyang_native(void) {
    for (int i = 0; i < 256; i++) POP8[i] = (unsigned char)((i & 1) + POP8[i >> 1]);
    static const char *names[] = {"_b",    "_w",   "_side",  "_phase",
                                  "_laws", "_rev", "_res_b", "_res_w"};
    PyObject **slots[] = {&NAME_B,    &NAME_W,   &NAME_SIDE,  &NAME_PHASE,
                          &NAME_LAWS, &NAME_REV, &NAME_RES_B, &NAME_RES_W};
    for (int i = 0; i < 8; i++) {
        if (!*slots[i] && !(*slots[i] = PyUnicode_InternFromString(names[i]))) return NULL;
    }
    return PyModule_Create(&module);
}

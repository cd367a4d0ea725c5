/* The Yoxii evaluation in C: exact one-turn closures, the capped endgame solver and the
 * totem-centred heuristic of bots/eval/yoxii.py, term for term.
 *
 * bots/eval/yoxii.py is the reference and defines the board tables and the weights: it hands
 * the tables and the default weights to init() once, and calls evaluate() with a state's packed
 * fields. An evaluator of other weights (or another solver cap) has them checked once by
 * weights(), which returns them as a capsule, and passes that capsule to every evaluate(): the
 * weights belong to the evaluator, never to the module. The tests compare the two on many
 * positions (tests/bots/test_native.py). The board has 37 squares: one uint64.
 * The Python evaluator caches solver results by position key; the result of a position does
 * not depend on the cache, so this one simply solves again (a capped run takes microseconds).
 */
#include "bitboard128.h"

#include <string.h>

typedef uint64_t u64;

#define N_SQUARES 37
#define N_DIRS 8  /* the rays of a square */
#define MAX_RAY 9 /* a neighbour and at most 8 squares beyond it */

static u64 NEIGHBOURS[N_SQUARES], RING2[N_SQUARES], RING3[N_SQUARES], FULL;
/* BEYOND_SQ[t][n] lists the squares past neighbour n of t, on the line from t, in walking
 * order; BEYOND_LEN[t][n] how many (neighbours only: other entries stay empty). */
static signed char BEYOND_SQ[N_SQUARES][N_SQUARES][MAX_RAY - 1];
static signed char BEYOND_LEN[N_SQUARES][N_SQUARES];
/* the weights of one evaluator: the heuristic's, its stock values, and the constants the
 * reference hands over with them (bots/eval/yoxii.py, _load_native) */
typedef struct {
    long W_RING1, W_RING2, W_RING3, W_COUNT1, W_MOBILITY, W_TEMPO_TOTEM, W_TEMPO_PLACE;
    long SOLVED, HEURISTIC_CAP, SOLVE_EMPTIES, SOLVE_NODES, WIDE, MAX_EVAL;
    long STOCK_VALUE[4096];
} Weights;

static Weights DEFAULTS; /* init()'s: what evaluate() reads without a capsule */
static const char *const CAPSULE = "bots.eval._yoxii_native.weights";
static int ready = 0; /* 1 only after an init that checked every table */

static inline int popcount(u64 x) { return __builtin_popcountll(x); }
static inline int lowest(u64 x) { return __builtin_ctzll(x); }

static u64 totem_destinations(int t, u64 own, u64 opp) {
    u64 empty = FULL ^ (own | opp | (1ULL << t));
    u64 neighbours = NEIGHBOURS[t];
    u64 dests = neighbours & empty;
    u64 runs = neighbours & own;
    while (runs) {
        int n = lowest(runs);
        runs &= runs - 1;
        for (int i = 0; i < BEYOND_LEN[t][n]; i++) {
            u64 bit = 1ULL << BEYOND_SQ[t][n][i];
            if (!(own & bit)) {
                if (empty & bit) dests |= bit;
                break;
            }
        }
    }
    return dests;
}

static inline int max_value(int st) { /* the highest value in a player's packed stock */
    for (int v = 3; v >= 0; v--)
        if ((st >> (3 * v)) & 7) return v + 1;
    return 0;
}

static inline long floordiv(long a, long b) {
    long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static long result(const Weights *w, long diff, long cdiff) {
    if (diff > 0 || (diff == 0 && cdiff > 0)) return w->SOLVED + 100 * diff + 10 * cdiff;
    if (diff == 0 && cdiff == 0) return 0;
    return -w->SOLVED + 100 * diff + 10 * cdiff;
}

/* -- the endgame solver: whole turns on bare bitboards ------------------------------------ */

typedef struct {
    long nodes;
    long cap;
    int over;   /* the cap was reached */
    long worst; /* below every value: -MAX_EVAL */
} Solver;

/* the solver counts bits at every leaf: both are hot (a popcnt copy calls the popcnt copy) */
static BB_HOT long place(Solver *s, u64 me, u64 me_lo, u64 me_hi, u64 opp, u64 opp_lo,
                         u64 opp_hi, int t, u64 empty, int st_me, int st_opp, long alpha,
                         long beta);

static BB_HOT long turn(Solver *s, u64 me, u64 me_lo, u64 me_hi, u64 opp, u64 opp_lo,
                        u64 opp_hi, int t, int st_me, int st_opp, long alpha, long beta) {
    s->nodes++;
    if (s->nodes > s->cap) {
        s->over = 1;
        return 0;
    }
    u64 dests = totem_destinations(t, me, opp);
    if (!dests) {
        u64 r = NEIGHBOURS[t];
        long mine = popcount(r & me), theirs = popcount(r & opp);
        long diff = mine + popcount(r & me_lo) + 2 * popcount(r & me_hi) - theirs -
                    popcount(r & opp_lo) - 2 * popcount(r & opp_hi);
        return 20 * diff + mine - theirs;
    }
    u64 empty = FULL ^ (me | opp | (1ULL << t));
    long best = s->worst;
    while (dests) {
        u64 low = dests & (~dests + 1);
        dests ^= low;
        u64 empty_d = (empty ^ low) | (1ULL << t);
        long value = place(s, me, me_lo, me_hi, opp, opp_lo, opp_hi, lowest(low), empty_d,
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

static BB_HOT long place(Solver *s, u64 me, u64 me_lo, u64 me_hi, u64 opp, u64 opp_lo,
                         u64 opp_hi, int t, u64 empty, int st_me, int st_opp, long alpha,
                         long beta) {
    u64 targets = NEIGHBOURS[t] & empty;
    if (!targets) targets = empty;
    long best = s->worst;
    while (targets) {
        u64 sb = targets & (~targets + 1);
        targets ^= sb;
        for (int v = 3; v >= 0; v--) {
            if (!((st_me >> (3 * v)) & 7)) continue;
            int dec = 1 << (3 * v);
            u64 lo = (v & 1) ? sb : 0, hi = (v >> 1) ? sb : 0;
            long value = -turn(s, opp, opp_lo, opp_hi, me | sb, me_lo | lo, me_hi | hi, t,
                               st_opp, st_me - dec, -beta, -alpha);
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

/* -- the evaluation ------------------------------------------------------------------------ */

static BB_HOT long evaluate(const Weights *w, u64 white, u64 black, u64 lo, u64 hi, int t,
                            int stock, int side, int phase) {
    u64 me, opp;
    int st_me, st_opp;
    if (side) {
        me = black;
        opp = white;
        st_me = stock >> 12;
        st_opp = stock & 4095;
    } else {
        me = white;
        opp = black;
        st_me = stock & 4095;
        st_opp = stock >> 12;
    }
    st_me &= 4095;
    u64 me_lo = me & lo, me_hi = me & hi, opp_lo = opp & lo, opp_hi = opp & hi;
    u64 empty = FULL ^ (me | opp | (1ULL << t));
    long floor_ = -w->MAX_EVAL;

    if (phase == 0) {
        u64 dests = totem_destinations(t, me, opp);
        int vmax = max_value(st_me);
        int all_close = 1;
        long best = -w->MAX_EVAL;
        u64 after = empty | (1ULL << t);
        while (dests) {
            int d = lowest(dests);
            dests &= dests - 1;
            u64 nb = NEIGHBOURS[d];
            u64 left = nb & after;
            long added, counted;
            if (left & (left - 1)) {
                all_close = 0;
                continue;
            }
            if (left) {
                if (totem_destinations(d, opp, me | left)) {
                    all_close = 0;
                    continue;
                }
                added = vmax;
                counted = 1;
            } else {
                u64 land = totem_destinations(d, opp, me);
                if (land & (land - 1)) {
                    all_close = 0;
                    continue;
                }
                if (land) all_close = 0;
                added = counted = 0;
            }
            long mine = popcount(nb & me), theirs = popcount(nb & opp);
            long diff = mine + popcount(nb & me_lo) + 2 * popcount(nb & me_hi) + added - theirs -
                        popcount(nb & opp_lo) - 2 * popcount(nb & opp_hi);
            long r = result(w, diff, mine + counted - theirs);
            if (r > best) best = r;
        }
        if (best > 0 || all_close) return best;
        floor_ = best;
    } else {
        u64 nb = NEIGHBOURS[t];
        u64 left = nb & empty;
        if (!(left & (left - 1))) {
            int closes, chosen;
            long added, counted;
            if (left) {
                closes = !totem_destinations(t, opp, me | left);
                added = max_value(st_me);
                counted = 1;
                chosen = 0;
            } else {
                u64 land = totem_destinations(t, opp, me);
                closes = !(land & (land - 1));
                chosen = land != 0;
                added = counted = 0;
            }
            if (closes) {
                long mine = popcount(nb & me), theirs = popcount(nb & opp);
                long diff = mine + popcount(nb & me_lo) + 2 * popcount(nb & me_hi) + added -
                            theirs - popcount(nb & opp_lo) - 2 * popcount(nb & opp_hi);
                long r = result(w, diff, mine + counted - theirs);
                if (!chosen || r > 0) return r;
                floor_ = r;
            }
        }
    }

    if (popcount(empty) <= w->SOLVE_EMPTIES + phase) {
        Solver s = {0, w->SOLVE_NODES, 0, -w->MAX_EVAL};
        long v;
        if (phase)
            v = place(&s, me, me_lo, me_hi, opp, opp_lo, opp_hi, t, empty, st_me, st_opp,
                      -w->WIDE, w->WIDE);
        else
            v = turn(&s, me, me_lo, me_hi, opp, opp_lo, opp_hi, t, st_me, st_opp, -w->WIDE,
                     w->WIDE);
        if (!s.over) {
            long diff = floordiv(v + 10, 20);
            long cdiff = v - 20 * diff;
            return result(w, diff, cdiff);
        }
    }

    u64 r1 = NEIGHBOURS[t], r2 = RING2[t], r3 = RING3[t];
    long mine1 = popcount(r1 & me), theirs1 = popcount(r1 & opp);
    long h = w->W_RING1 * (mine1 + popcount(r1 & me_lo) + 2 * popcount(r1 & me_hi) - theirs1 -
                        popcount(r1 & opp_lo) - 2 * popcount(r1 & opp_hi)) +
             w->W_RING2 * (popcount(r2 & me) + popcount(r2 & me_lo) + 2 * popcount(r2 & me_hi) -
                        popcount(r2 & opp) - popcount(r2 & opp_lo) - 2 * popcount(r2 & opp_hi)) +
             w->W_RING3 * (popcount(r3 & me) + popcount(r3 & me_lo) + 2 * popcount(r3 & me_hi) -
                        popcount(r3 & opp) - popcount(r3 & opp_lo) - 2 * popcount(r3 & opp_hi)) +
             w->W_COUNT1 * (mine1 - theirs1) +
             w->W_MOBILITY * (popcount(totem_destinations(t, me, opp)) -
                           popcount(totem_destinations(t, opp, me))) +
             w->STOCK_VALUE[st_me] - w->STOCK_VALUE[st_opp & 4095] +
             (phase ? w->W_TEMPO_PLACE : w->W_TEMPO_TOTEM);
    if (h > w->HEURISTIC_CAP)
        h = w->HEURISTIC_CAP;
    else if (h < -w->HEURISTIC_CAP)
        h = -w->HEURISTIC_CAP;
    return h > floor_ ? h : floor_;
}

/* -- the module ---------------------------------------------------------------------------- */

static int to_u64(PyObject *obj, u64 *out) {
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

/* n bitboards of the board's squares into out */
static int board_table(PyObject *seq, u64 *out, Py_ssize_t n, const char *name) {
    bb wide[N_SQUARES];
    if (bb_table(seq, N_SQUARES, wide, n, name) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) out[i] = (u64)wide[i];
    return 0;
}

/* RAYS[s][d]: the squares from s outwards in direction d, into BEYOND_SQ and BEYOND_LEN; the
 * first square of a ray must be a neighbour of s (NEIGHBOURS_MASK, read before) */
static int read_rays(PyObject *rays) {
    static signed char ray[N_SQUARES][N_DIRS][MAX_RAY], len[N_SQUARES][N_DIRS];
    if (bb_table_rays(rays, N_SQUARES, N_DIRS, MAX_RAY, "RAYS", &ray[0][0][0], &len[0][0]) < 0)
        return -1;
    memset(BEYOND_LEN, 0, sizeof BEYOND_LEN);
    for (int s = 0; s < N_SQUARES; s++) {
        for (int d = 0; d < N_DIRS; d++) {
            if (!len[s][d]) continue;
            int n = ray[s][d][0];
            if (!((NEIGHBOURS[s] >> n) & 1)) {
                PyErr_Format(PyExc_ValueError,
                             "RAYS[%d][%d]: starts at %d, not a neighbour of the square", s, d,
                             n);
                return -1;
            }
            BEYOND_LEN[s][n] = (signed char)(len[s][d] - 1);
            for (int i = 1; i < len[s][d]; i++) BEYOND_SQ[s][n][i - 1] = ray[s][d][i];
        }
    }
    return 0;
}

#define VALUE_MAX (1L << 30) /* far above any weight or value; their sums stay far from overflow */

/* weights: the seven terms' weights (signed), then SOLVED, HEURISTIC_CAP, SOLVE_EMPTIES (at most
 * the board), SOLVE_NODES, _WIDE and MAX_EVAL (none negative); stock values: a player's stock
 * worth by packed stock (4096 of them). Read whole and checked into out. */
static int read_weights(PyObject *weights, PyObject *stock_values, Weights *out) {
    enum { TERMS = 7, COUNT = TERMS + 6 };
    long w[COUNT];
    PyObject *fw = bb_sequence(weights, COUNT, "weights");
    if (!fw) return -1;
    for (int i = 0; i < COUNT; i++) {
        long low = i < TERMS ? -VALUE_MAX : 0, high = i == TERMS + 2 ? N_SQUARES : VALUE_MAX;
        if (bb_table_int(PySequence_Fast_GET_ITEM(fw, i), low, high, "weights", i, &w[i]) < 0) {
            Py_DECREF(fw);
            return -1;
        }
    }
    Py_DECREF(fw);
    if (bb_table_ints(stock_values, 4096, -VALUE_MAX, VALUE_MAX, "stock values",
                      out->STOCK_VALUE) < 0)
        return -1;
    long *const slot[COUNT] = {&out->W_RING1,       &out->W_RING2,         &out->W_RING3,
                               &out->W_COUNT1,      &out->W_MOBILITY,      &out->W_TEMPO_TOTEM,
                               &out->W_TEMPO_PLACE, &out->SOLVED,          &out->HEURISTIC_CAP,
                               &out->SOLVE_EMPTIES, &out->SOLVE_NODES,     &out->WIDE,
                               &out->MAX_EVAL};
    for (int i = 0; i < COUNT; i++) *slot[i] = w[i];
    return 0;
}

/* init(NEIGHBOURS_MASK, RING2, RING3, RAYS, FULL_MASK, weights, stock values): the tables and
 * default weights of bots/eval/yoxii.py. Unready from the first line on, and ready again only
 * when every table was read and checked. */
static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *neighbours, *ring2, *ring3, *rays, *full, *weights, *stock_values;
    ready = 0;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &neighbours, &ring2, &ring3, &rays, &full, &weights,
                          &stock_values))
        return NULL;
    bb full_board;
    if (board_table(neighbours, NEIGHBOURS, N_SQUARES, "NEIGHBOURS_MASK") < 0 ||
        board_table(ring2, RING2, N_SQUARES, "RING2") < 0 ||
        board_table(ring3, RING3, N_SQUARES, "RING3") < 0 || read_rays(rays) < 0 ||
        bb_table_board(full, N_SQUARES, "FULL_MASK", -1, &full_board) < 0 ||
        read_weights(weights, stock_values, &DEFAULTS) < 0)
        return NULL;
    FULL = (u64)full_board;
    ready = 1;
    Py_RETURN_NONE;
}

static void free_weights(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, CAPSULE));
}

/* weights(weights, stock values): other weights than init's, checked as init checks them, in
 * a capsule for evaluate() */
static PyObject *py_weights(PyObject *self, PyObject *args) {
    PyObject *weights, *stock_values;
    if (!PyArg_ParseTuple(args, "OO", &weights, &stock_values)) return NULL;
    Weights *kept = PyMem_Malloc(sizeof *kept);
    if (!kept) return PyErr_NoMemory();
    if (read_weights(weights, stock_values, kept) < 0) {
        PyMem_Free(kept);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(kept, CAPSULE, free_weights);
    if (!capsule) PyMem_Free(kept);
    return capsule;
}

static PyObject *unready(void) {
    PyErr_SetString(PyExc_RuntimeError,
                    "bots.eval._yoxii_native: init() has not succeeded (never called, or it "
                    "failed)");
    return NULL;
}

static PyObject *py_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) return unready();
    if (nargs != 7 && nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "evaluate(white, black, values, totem, stock, side, phase[, weights])");
        return NULL;
    }
    const Weights *w = &DEFAULTS;
    if (nargs == 8) {
        w = PyCapsule_GetPointer(args[7], CAPSULE);
        if (!w) return NULL;
    }
    u64 white, black;
    if (to_u64(args[0], &white) || to_u64(args[1], &black)) return NULL;
    /* values: value - 1 in two bits per square (74 bits): split into the two planes */
    bb values;
    if (bb_from_int(args[2], 2 * N_SQUARES, &values) < 0) return NULL;
    u64 lo = 0, hi = 0;
    for (int s = 0; s < N_SQUARES; s++) {
        int v = (int)((values >> (2 * s)) & 3);
        lo |= (u64)(v & 1) << s;
        hi |= (u64)(v >> 1) << s;
    }
    long f[4]; /* totem, stock, side, phase */
    for (int i = 0; i < 4; i++) {
        f[i] = PyLong_AsLong(args[3 + i]);
        if (f[i] == -1 && PyErr_Occurred()) return NULL;
    }
    long t = f[0], stock = f[1], side = f[2], phase = f[3];
    if (t < 0 || t >= N_SQUARES || stock < 0 || stock >= (1L << 24) || (side != 0 && side != 1) ||
        (phase != 0 && phase != 1)) {
        PyErr_SetString(PyExc_ValueError, "evaluate: a field out of range");
        return NULL;
    }
    if ((white | black) & ~FULL) {
        PyErr_SetString(PyExc_ValueError, "evaluate: a piece off the board");
        return NULL;
    }
    return PyLong_FromLong(
        evaluate(w, white, black, lo, hi, (int)t, (int)stock, (int)side, (int)phase));
}

static PyObject *py_destinations(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) return unready();
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "destinations(totem, own, opp)");
        return NULL;
    }
    long t = PyLong_AsLong(args[0]);
    if (t == -1 && PyErr_Occurred()) return NULL;
    u64 own, opp;
    if (to_u64(args[1], &own) || to_u64(args[2], &opp)) return NULL;
    if (t < 0 || t >= N_SQUARES) {
        PyErr_SetString(PyExc_ValueError, "destinations: a totem off the board");
        return NULL;
    }
    if ((own | opp) & ~FULL) {
        PyErr_SetString(PyExc_ValueError, "destinations: a piece off the board");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(totem_destinations((int)t, own, opp));
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "Take the tables and default weights of bots/eval/yoxii.py."},
    {"weights", py_weights, METH_VARARGS,
     "weights(weights, stock values): other weights, checked, in a capsule for evaluate()."},
    {"evaluate", (PyCFunction)(void (*)(void))py_evaluate, METH_FASTCALL,
     "evaluate(white, black, values, totem, stock, side, phase[, weights]): "
     "YoxiiEvaluator.evaluate, under init's weights or a capsule of weights()."},
    {"destinations", (PyCFunction)(void (*)(void))py_destinations, METH_FASTCALL,
     "destinations(totem, own, opp): games.yoxii.totem_destinations."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yoxii_native",
    "The Yoxii evaluation in C (see bots/eval/yoxii.py, the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yoxii_native(void) { return PyModule_Create(&module); }

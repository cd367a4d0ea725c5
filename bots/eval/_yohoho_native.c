/* The Yohoho! evaluation in C: the same arithmetic as bots/eval/yohoho.py, term for term.
 *
 * bots/eval/yohoho.py is the reference and the only place the tables and weights are defined:
 * it hands the tables and the default weights to init() once, and calls evaluate() with a
 * state's packed pieces. An evaluator of other weights has them checked once by weights(),
 * which returns them as a capsule, and passes that capsule to every evaluate(): the weights
 * belong to the evaluator, never to the module, so evaluators of different weights can take
 * turns in one process. The tests compare the two on many positions (tests/bots/test_native.py).
 * A board of 77 cells fits in one unsigned __int128, so the Python bitboard expressions carry
 * over as they are.
 */
#include "bitboard128.h"

#define N_CELLS 77
#define N_PROG 13
#define N_RACE 14

static bb NBR[N_CELLS], SHIP_NBR[N_CELLS], RADIUS2[N_CELLS], CONE_UP[N_CELLS], CONE_DOWN[N_CELLS];
static int ROW_OF[N_CELLS];
static bb SOURCE[6];
static int SHIFTS[6];
static bb GOAL_W, GOAL_B, FULL;
/* Python's ``//``: the quotient rounded down (C's ``/`` rounds towards zero, which differs for
 * a negative weight, as a tuning run may try). */
static inline long floor_div(long a, long b) {
    long q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* the weights of one evaluator (bots/eval/yohoho.py: Weights, then LIMIT and _FAR) */
typedef struct {
    int CHEBEC, GALLEON, ROW_STEP, ROCK_CONE, PRESSURE, TRAP_SOON, WIN_NOW;
    int PROG[N_PROG], RACE[N_RACE], STEP_SAFE[6], ROBUST[6], ATTACKED[6];
    int OWN_HANG_P1[2], ENEMY_HANG_P1, OWN_HANG_P2[2], ENEMY_HANG_P2, TEMPO_P1, TEMPO_P2;
    int RACE_HORIZON, RACE_WON, RACE_TURN, LIMIT, FAR;
} Weights;

static Weights DEFAULTS; /* init()'s: what evaluate() reads without a capsule */
static const char *const CAPSULE = "bots.eval._yohoho_native.weights";
static int ready = 0; /* 1 only after an init that checked every table */

/* directions, as in games/yohoho.py */
enum { E, NE, NW, W, SW, SE };
static const int UP[3] = {NE, NW, W}, DOWN[3] = {SE, SW, W};
static const int UP_BACK[3] = {SW, SE, E}, DOWN_BACK[3] = {NW, NE, E};
static const int SHIP[5] = {NE, NW, W, SW, SE}, ALL[6] = {E, NE, NW, W, SW, SE};

/* a piece's cell as the Python reference reads it (``bit_length() - 1``), -1 for none */
static inline int cell_of(bb single) { return single ? bb_highest(single) : -1; }

static inline bb step(bb cells, int d) {
    bb moved = cells & SOURCE[d];
    int s = SHIFTS[d];
    return s > 0 ? moved << s : moved >> -s;
}

/* -- the terms --------------------------------------------------------------------------------- */

static void coverage(int a, bb g, bb c, bb *ge3, bb *ge4, bb *ge6) {
    bb am = a >= 0 ? NBR[a] : 0;
    bb g1 = 0, g2 = 0, c1 = 0, c2 = 0, c3 = 0;
    while (g) {
        int i = bb_lowest(g);
        g &= g - 1;
        bb m = NBR[i];
        g2 |= g1 & m;
        g1 |= m;
    }
    while (c) {
        int i = bb_lowest(c);
        c &= c - 1;
        bb m = NBR[i];
        c3 |= c2 & m;
        c2 |= c1 & m;
        c1 |= m;
    }
    *ge3 = am | g1 | c2;
    *ge4 = am | g2 | c2 | (g1 & c1);
    *ge6 = (am & (g1 | c1)) | g2 | c3 | (g1 & c2);
}

/* _dist_up / _dist_down: the fewest turns to the goal row, a step onto a passable cell costing
   one and onto a blocker (an enemy ship, captured first) two */
static int dist(const Weights *w, bb a_bit, bb passable, bb blockers, const int *dirs, bb goal) {
    bb free = passable & ~a_bit, hard = blockers & ~a_bit, front = a_bit, late = 0;
    int d = 0;
    while ((front || late) && d < w->FAR - 1) {
        d++;
        bb reach = 0;
        for (int k = 0; k < 3; k++) reach |= step(front, dirs[k]);
        front = (reach & free) | late;
        late = reach & hard;
        hard ^= late;
        if (front & goal) return d;
        free &= ~front;
    }
    return w->FAR;
}

static BB_HOT int attacked(const Weights *w, int e, bb empty, bb unsafe, bb a, bb g, bb c) {
    bb near = NBR[e];
    bb ng = near & g, nc = near & c;
    int attack = 3 * bb_popcount(ng) + 2 * bb_popcount(nc) + ((near & a) ? 5 : 0);
    int escapes = bb_popcount(SHIP_NBR[e] & empty & ~unsafe);
    int freeing = (ng && attack <= 8) || (nc && attack <= 7);
    if (!escapes && !freeing) return w->TRAP_SOON;
    return (int)floor_div(w->ATTACKED[escapes], freeing ? 2 : 1);
}

static bb dilate(bb cells) {
    bb out = 0;
    for (int k = 0; k < 6; k++) out |= step(cells, ALL[k]);
    return out;
}

static bb moves(bb cells, bb empty, const int *dirs, int ndirs, int reach) {
    bb out = 0;
    for (int k = 0; k < ndirs; k++) {
        bb front = cells;
        for (int r = 0; r < reach; r++) {
            front = step(front, dirs[k]) & empty;
            if (!front) break;
            out |= front;
        }
    }
    return out;
}

static BB_HOT int race(const Weights *w, bb admiral, int up, bb passable, bb empty,
                       const bb *def, int defenders_first) {
    const int *forward = up ? UP : DOWN, *back = up ? UP_BACK : DOWN_BACK;
    bb goal = up ? GOAL_W : GOAL_B;
    bb layers[32], tube[32];
    int turns = 0;
    bb free = passable & ~admiral, front = admiral;
    int reached = 0;
    while (front && turns < w->RACE_HORIZON) {
        bb next = 0;
        for (int k = 0; k < 3; k++) next |= step(front, forward[k]);
        front = next & free;
        free &= ~front;
        layers[turns++] = front;
        if (front & goal) {
            reached = 1;
            break;
        }
    }
    if (!reached) return 0;
    tube[turns - 1] = layers[turns - 1] & goal;
    for (int k = turns - 2; k >= 0; k--) {
        bb b = 0;
        for (int j = 0; j < 3; j++) b |= step(tube[k + 1], back[j]);
        tube[k] = layers[k] & b;
    }
    bb da = def[0], dg = def[1], dc = def[2], dr = def[3];
    int galleons = bb_popcount(dg), chebecs = bb_popcount(dc);
    bb dfree = empty | da | dg | dc | dr;
    bb route = admiral;
    for (int k = 0; k < turns; k++) {
        if (k || defenders_first) {
            da |= moves(da, dfree, SHIP, 5, 1);
            dg |= moves(dg, dfree, SHIP, 5, 2);
            dc |= moves(dc, dfree, SHIP, 5, 3);
            dr |= moves(dr, dfree, ALL, 6, 8);
        }
        bb next = 0;
        for (int j = 0; j < 3; j++) next |= step(route, forward[j]);
        route = next & tube[k] & ~(da | dg | dc | dr);
        if (!route) return 0;
        bb near_g = galleons ? dilate(dg) : 0;
        bb near_c = chebecs ? dilate(dc) : 0;
        bb unsafe = da ? dilate(da) & (near_g | near_c) : 0;
        if (galleons >= 2) unsafe |= near_g;
        if (chebecs >= 3) unsafe |= near_c;
        if (galleons && chebecs >= 2) unsafe |= near_g & near_c;
        route &= ~unsafe;
        if (!route) return 0;
    }
    return turns;
}

/* hot as race() is: a popcnt copy calls race's popcnt copy directly */
static BB_HOT int race_verdict(const Weights *w, const bb *pcs, int side, int p2, bb empty,
                               bb pass_w, bb pass_b, int dw, int db) {
    int me = side ? 1 : 0, en = 1 - me;
    bb own_a = pcs[me * 4], en_a = pcs[en * 4];
    int moved = p2 >= 0 && ((own_a >> p2) & 1);
    int own_d = me ? db : dw, en_d = me ? dw : db;
    bb own_pass = me ? pass_b : pass_w, en_pass = me ? pass_w : pass_b;
    int own_row = ROW_OF[cell_of(own_a)], en_row = ROW_OF[cell_of(en_a)];
    int late = moved ? 1 : 0;
    int own_rows = (me ? own_row - 1 : 9 - own_row) + late;
    int en_rows = me == 0 ? en_row - 1 : 9 - en_row;
    if (own_d + late <= en_rows) {
        int own = race(w, own_a, me == 0, own_pass, empty, &pcs[en * 4], moved);
        if (own) return w->RACE_WON - w->RACE_TURN * (own + late);
    }
    if (en_d < own_rows) {
        int enemy = race(w, en_a, me == 1, en_pass, empty, &pcs[me * 4], 1);
        if (enemy) return -(w->RACE_WON - w->RACE_TURN * enemy);
    }
    return 0;
}

static BB_HOT long evaluate_bb(const Weights *w, const bb *pcs, int side, int p2) {
    bb wa = pcs[0], wg = pcs[1], wc = pcs[2], wr = pcs[3];
    bb ba = pcs[4], bg = pcs[5], bc = pcs[6], br = pcs[7];
    bb white = wa | wg | wc | wr, black = ba | bg | bc | br;
    bb empty = FULL ^ (white | black);
    int aw = cell_of(wa), ab = cell_of(ba);
    bb b3, b4, b6, w3, w4, w6;
    coverage(ab, bg, bc, &b3, &b4, &b6);
    coverage(aw, wg, wc, &w3, &w4, &w6);

    long score = (long)w->CHEBEC * (bb_popcount(wc) - bb_popcount(bc)) +
                 (long)w->GALLEON * (bb_popcount(wg) - bb_popcount(bg));
    score += (long)w->ROW_STEP * (ROW_OF[aw] + ROW_OF[ab] - 10);
    bb pass_w = FULL & ~(black | b6), pass_b = FULL & ~(white | w6);
    int dw = dist(w, wa, pass_w, (bg | bc) & ~b6, UP, GOAL_W);
    int db = dist(w, ba, pass_b, (wg | wc) & ~w6, DOWN, GOAL_B);
    score += w->PROG[dw] - w->PROG[db];
    bb nw = SHIP_NBR[aw] & empty, nb = SHIP_NBR[ab] & empty;
    score += w->STEP_SAFE[bb_popcount(nw & ~b6)] - w->STEP_SAFE[bb_popcount(nb & ~w6)];
    score += w->ROBUST[bb_popcount(nw & ~b4)] - w->ROBUST[bb_popcount(nb & ~w4)];
    if (wr & CONE_UP[ab]) score += w->ROCK_CONE;
    if (br & CONE_DOWN[aw]) score -= w->ROCK_CONE;
    bb rb = RADIUS2[ab], rw = RADIUS2[aw];
    score += (long)w->PRESSURE * (3 * bb_popcount(wg & rb) + 2 * bb_popcount(wc & rb) -
                               3 * bb_popcount(bg & rw) - 2 * bb_popcount(bc & rw));

    bb own_a, en_a, own_hang_c, own_hang_g, en_hang_c, en_hang_g, own_unsafe, en_unsafe, own_win;
    int own_d, en_d;
    const bb *own_pieces, *en_pieces;
    if (side) {
        score = -score;
        own_a = ba;
        en_a = wa;
        own_hang_c = bc & w3;
        own_hang_g = bg & w4;
        en_hang_c = wc & b3;
        en_hang_g = wg & b4;
        own_unsafe = w6;
        en_unsafe = b6;
        own_d = db;
        en_d = dw;
        own_pieces = &pcs[4];
        en_pieces = &pcs[0];
        own_win = SHIP_NBR[ab] & GOAL_B & empty & ~w6;
    } else {
        own_a = wa;
        en_a = ba;
        own_hang_c = wc & b3;
        own_hang_g = wg & b4;
        en_hang_c = bc & w3;
        en_hang_g = bg & w4;
        own_unsafe = b6;
        en_unsafe = w6;
        own_d = dw;
        en_d = db;
        own_pieces = &pcs[0];
        en_pieces = &pcs[4];
        own_win = SHIP_NBR[aw] & GOAL_W & empty & ~b6;
    }
    int hang_g = bb_popcount(own_hang_g);
    int hanging = hang_g + bb_popcount(own_hang_c);
    long first = hang_g ? w->GALLEON : w->CHEBEC;
    long second = hang_g > 1 ? w->GALLEON : w->CHEBEC;
    long en_best = en_hang_g ? w->GALLEON : (en_hang_c ? w->CHEBEC : 0);
    if (p2 < 0) {
        score += w->TEMPO_P1 + floor_div(en_best * w->ENEMY_HANG_P1, 100);
        if (hanging) {
            score -= floor_div(first * w->OWN_HANG_P1[0], 100);
            if (hanging > 1) score -= floor_div(second * w->OWN_HANG_P1[1], 100);
        }
        if (own_a & own_unsafe)
            score -= attacked(w, cell_of(own_a), empty, own_unsafe, en_pieces[0], en_pieces[1],
                              en_pieces[2]);
        if (own_win) score += w->WIN_NOW;
    } else {
        score += w->TEMPO_P2 + floor_div(en_best * w->ENEMY_HANG_P2, 100);
        if (hanging) {
            score -= floor_div(first * w->OWN_HANG_P2[0], 100);
            if (hanging > 1) score -= floor_div(second * w->OWN_HANG_P2[1], 100);
        }
        if (en_a & en_unsafe)
            score += attacked(w, cell_of(en_a), empty, en_unsafe, own_pieces[0], own_pieces[1],
                              own_pieces[2]);
        if ((own_a >> p2) & 1)
            own_d += 1;
        else if (own_win)
            score += w->WIN_NOW;
    }
    int decided = 0;
    if ((own_d < en_d ? own_d : en_d) <= w->RACE_HORIZON)
        decided = race_verdict(w, pcs, side, p2, empty, pass_w, pass_b, dw, db);
    if (decided)
        score += decided;
    else if (own_d <= en_d)
        score += w->RACE[own_d];
    else
        score -= w->RACE[en_d];
    if (score > w->LIMIT) return w->LIMIT;
    if (score < -w->LIMIT) return -w->LIMIT;
    return score;
}

/* -- the module ------------------------------------------------------------------------------ */

#define N_WEIGHTS (16 + N_PROG + N_RACE + 6 * 3 + 2 * 2)
/* 16 single weights; PROG, RACE, STEP_SAFE, ROBUST, ATTACKED; two pairs of shares */
#define WEIGHT_MAX (1L << 20) /* far above any weight, and sums of them stay far from overflow */

/* The weights, flat, in the order bots/eval/yohoho.py lists them (_native_weights), read whole
 * and checked into out; ValueError naming "weights" on any damage. */
static int read_weights(PyObject *seq, Weights *out) {
    long w[N_WEIGHTS];
    if (bb_table_ints(seq, N_WEIGHTS, -WEIGHT_MAX, WEIGHT_MAX, "weights", w) < 0) return -1;
    Weights e;
    const long *p = w;
    e.CHEBEC = (int)*p++;
    e.GALLEON = (int)*p++;
    e.ROW_STEP = (int)*p++;
    for (int i = 0; i < N_PROG; i++) e.PROG[i] = (int)*p++;
    for (int i = 0; i < N_RACE; i++) e.RACE[i] = (int)*p++;
    for (int i = 0; i < 6; i++) e.STEP_SAFE[i] = (int)*p++;
    for (int i = 0; i < 6; i++) e.ROBUST[i] = (int)*p++;
    e.ROCK_CONE = (int)*p++;
    e.PRESSURE = (int)*p++;
    for (int i = 0; i < 6; i++) e.ATTACKED[i] = (int)*p++;
    e.TRAP_SOON = (int)*p++;
    e.WIN_NOW = (int)*p++;
    e.OWN_HANG_P1[0] = (int)*p++;
    e.OWN_HANG_P1[1] = (int)*p++;
    e.ENEMY_HANG_P1 = (int)*p++;
    e.OWN_HANG_P2[0] = (int)*p++;
    e.OWN_HANG_P2[1] = (int)*p++;
    e.ENEMY_HANG_P2 = (int)*p++;
    e.TEMPO_P1 = (int)*p++;
    e.TEMPO_P2 = (int)*p++;
    e.RACE_HORIZON = (int)*p++;
    e.RACE_WON = (int)*p++;
    e.RACE_TURN = (int)*p++;
    e.LIMIT = (int)*p++;
    e.FAR = (int)*p++;
    /* race() keeps RACE_HORIZON layers in arrays of 32; PROG is read at distances up to FAR,
     * RACE up to FAR + 1 (an Admiral that moved) */
    if (e.RACE_HORIZON < 0 || e.RACE_HORIZON > 30) {
        PyErr_Format(PyExc_ValueError, "weights: RACE_HORIZON %d is outside [0, 30]",
                     e.RACE_HORIZON);
        return -1;
    }
    if (e.FAR < 1 || e.FAR > N_PROG - 1 || e.FAR > N_RACE - 2) {
        PyErr_Format(PyExc_ValueError, "weights: _FAR %d is outside [1, %d]", e.FAR,
                     N_PROG - 1 < N_RACE - 2 ? N_PROG - 1 : N_RACE - 2);
        return -1;
    }
    *out = e;
    return 0;
}

/* The tables, each read whole and checked. A table of ints is read into a long scratch
 * buffer and copied into place as int; the module stays unready until all are in. */
static int read_tables(PyObject *const *t) {
    long row_of[N_CELLS], shifts[6];
    bb goal_pair[2];
    if (bb_table(t[0], N_CELLS, NBR, N_CELLS, "NBR") < 0 ||
        bb_table(t[1], N_CELLS, SHIP_NBR, N_CELLS, "SHIP_NBR") < 0 ||
        bb_table(t[2], N_CELLS, RADIUS2, N_CELLS, "RADIUS2") < 0 ||
        bb_table(t[3], N_CELLS, CONE_UP, N_CELLS, "CONE_UP") < 0 ||
        bb_table(t[4], N_CELLS, CONE_DOWN, N_CELLS, "CONE_DOWN") < 0 ||
        bb_table_ints(t[5], N_CELLS, 1, 9, "ROW_OF", row_of) < 0 ||
        bb_table(t[6], N_CELLS, SOURCE, 6, "SOURCE") < 0 ||
        bb_table_ints(t[7], 6, -(N_CELLS - 1), N_CELLS - 1, "SHIFTS", shifts) < 0 ||
        bb_table(t[8], N_CELLS, goal_pair, 2, "GOAL_MASK") < 0 ||
        bb_table_board(t[9], N_CELLS, "FULL_MASK", -1, &FULL) < 0 ||
        read_weights(t[10], &DEFAULTS) < 0)
        return -1;
    /* the safe steps, robust steps and attack shares are indexed by a count of ship neighbours */
    for (int c = 0; c < N_CELLS; c++) {
        if (bb_popcount(SHIP_NBR[c]) > 5) {
            PyErr_Format(PyExc_ValueError, "SHIP_NBR[%d]: more than five cells", c);
            return -1;
        }
        ROW_OF[c] = (int)row_of[c];
    }
    for (int d = 0; d < 6; d++) SHIFTS[d] = (int)shifts[d];
    GOAL_W = goal_pair[0];
    GOAL_B = goal_pair[1];
    return 0;
}

/* init(NBR, SHIP_NBR, RADIUS2, CONE_UP, CONE_DOWN, ROW_OF, SOURCE, SHIFTS, GOAL_MASK,
 * FULL_MASK, weights): the tables and default weights of bots/eval/yohoho.py. Unready from the
 * first line on, and ready again only when every table was read and checked. */
static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *t[11];
    ready = 0;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOO", &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6],
                          &t[7], &t[8], &t[9], &t[10]))
        return NULL;
    if (read_tables(t) < 0) return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

static void free_weights(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, CAPSULE));
}

/* weights(flat weights): other weights than init's, checked as init checks them, in a capsule
 * for evaluate() */
static PyObject *py_weights(PyObject *self, PyObject *seq) {
    Weights e;
    if (read_weights(seq, &e) < 0) return NULL;
    Weights *kept = PyMem_Malloc(sizeof *kept);
    if (!kept) return PyErr_NoMemory();
    *kept = e;
    PyObject *capsule = PyCapsule_New(kept, CAPSULE, free_weights);
    if (!capsule) PyMem_Free(kept);
    return capsule;
}

static PyObject *py_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError,
                        "bots.eval._yohoho_native: init() has not succeeded (never called, or "
                        "it failed)");
        return NULL;
    }
    if (nargs != 3 && nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "evaluate(pieces, side, p2[, weights])");
        return NULL;
    }
    const Weights *w = &DEFAULTS;
    if (nargs == 4) {
        w = PyCapsule_GetPointer(args[3], CAPSULE);
        if (!w) return NULL;
    }
    PyObject *fast = PySequence_Fast(args[0], "pieces must be a sequence");
    if (!fast) return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != 8) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "pieces: eight bitboards");
        return NULL;
    }
    bb pcs[8];
    for (int i = 0; i < 8; i++) {
        if (bb_from_int(PySequence_Fast_GET_ITEM(fast, i), N_CELLS, &pcs[i]) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    long side = PyLong_AsLong(args[1]);
    if (side == -1 && PyErr_Occurred()) return NULL;
    long p2 = PyLong_AsLong(args[2]);
    if (p2 == -1 && PyErr_Occurred()) return NULL;
    for (int i = 0; i < 8; i++) {
        if (pcs[i] & ~FULL) {
            PyErr_SetString(PyExc_ValueError, "evaluate: a piece off the board");
            return NULL;
        }
    }
    if (!pcs[0] || !pcs[4] || p2 >= N_CELLS) {
        PyErr_SetString(PyExc_ValueError, "a position needs both Admirals");
        return NULL;
    }
    return PyLong_FromLong(evaluate_bb(w, pcs, (int)side, (int)p2));
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS,
     "Take the tables and default weights of bots/eval/yohoho.py."},
    {"weights", py_weights, METH_O,
     "weights(flat weights): other weights, checked, in a capsule for evaluate()."},
    {"evaluate", (PyCFunction)(void (*)(void))py_evaluate, METH_FASTCALL,
     "evaluate(pieces, side, p2[, weights]): YohohoEvaluator.evaluate on a state's packed "
     "fields, under init's weights or a capsule of weights()."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yohoho_native",
    "The Yohoho! evaluation in C (see bots/eval/yohoho.py, the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yohoho_native(void) { return PyModule_Create(&module); }

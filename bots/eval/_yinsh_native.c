/* The board counts of the Yinsh evaluation in C: what bots/eval/yinsh.py's _counts computes
 * with its bit-sliced lattice, computed here window by window.
 *
 * bots/eval/yinsh.py is the reference: it hands the board tables of games/yinsh.py (each
 * point's six neighbours, the 5-point windows) to init() once and calls counts() with the four
 * bitboards; the tests compare the two on many positions (tests/bots/test_native.py). The board
 * has 85 points: one unsigned __int128.
 */
#include "bitboard128.h"

#define N_POINTS 85
#define MAX_RAY 10
#define N_WINDOWS 123 /* the 5-point lines of the board */

static int NEIGHBOUR[N_POINTS][6]; /* -1 off the board */
static bb WINDOW[N_WINDOWS];
static int ready = 0; /* 1 only after an init that checked every table */

/* the windows: N_WINDOWS sequences of five distinct points */
static int read_windows(PyObject *windows) {
    char where[32];
    PyObject *fw = bb_sequence(windows, N_WINDOWS, "windows");
    if (!fw) return -1;
    for (Py_ssize_t w = 0; w < N_WINDOWS; w++) {
        PyOS_snprintf(where, sizeof where, "windows[%zd]", w);
        PyObject *points = bb_sequence(PySequence_Fast_GET_ITEM(fw, w), 5, where);
        if (!points) goto fail;
        bb mask = 0;
        for (Py_ssize_t i = 0; i < 5; i++) {
            long p;
            if (bb_table_int(PySequence_Fast_GET_ITEM(points, i), 0, N_POINTS - 1, where, i,
                             &p) < 0) {
                Py_DECREF(points);
                goto fail;
            }
            mask |= (bb)1 << p;
        }
        Py_DECREF(points);
        if (bb_popcount(mask) != 5) {
            PyErr_Format(PyExc_ValueError, "%s: a point twice", where);
            goto fail;
        }
        WINDOW[w] = mask;
    }
    Py_DECREF(fw);
    return 0;
fail:
    Py_DECREF(fw);
    return -1;
}

/* init(rays, windows): the tables of games/yinsh.py. The module is unready until every table
 * was read: a damaged one leaves it refusing calls, not counting on half a table. */
static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *rays, *windows;
    ready = 0;
    if (!PyArg_ParseTuple(args, "OO", &rays, &windows)) return NULL;
    /* the rays are read whole (every point checked), only their first points are kept */
    static signed char ray[N_POINTS][6][MAX_RAY], len[N_POINTS][6];
    if (bb_table_rays(rays, N_POINTS, 6, MAX_RAY, "rays", &ray[0][0][0], &len[0][0]) < 0 ||
        read_windows(windows) < 0)
        return NULL;
    for (int p = 0; p < N_POINTS; p++)
        for (int d = 0; d < 6; d++) NEIGHBOUR[p][d] = len[p][d] ? ray[p][d][0] : -1;
    ready = 1;
    Py_RETURN_NONE;
}

/* the counts of one position (the bit counting, the hot spot) into c */
static BB_HOT void count_board(const bb *board, long *c) {
    bb markers[2] = {board[0], board[1]}, rings[2] = {board[2], board[3]};
    bb all = board[0] | board[1] | board[2] | board[3];
    bb marker_any = markers[0] | markers[1];
    for (int colour = 0; colour < 2; colour++) {
        bb adjacent = 0;
        long contact = 0;
        bb r = rings[colour];
        while (r) {
            int p = bb_lowest(r);
            r &= r - 1;
            for (int d = 0; d < 6; d++) {
                int q = NEIGHBOUR[p][d];
                if (q < 0) continue;
                bb bit = (bb)1 << q;
                if (!(all & bit)) adjacent |= bit;
                if (marker_any & bit) contact++;
            }
        }
        c[0 + colour] = bb_popcount(adjacent);
        c[2 + colour] = contact;
    }
    for (int w = 0; w < N_WINDOWS; w++) {
        bb mask = WINDOW[w];
        int n0 = bb_popcount(mask & markers[0]), n1 = bb_popcount(mask & markers[1]);
        for (int colour = 0; colour < 2; colour++) {
            int own = colour ? n1 : n0, opp = colour ? n0 : n1;
            if (own == 2) {
                if (!opp) c[4 + colour]++;
            } else if (own == 3) {
                c[(opp ? 8 : 6) + colour]++;
            } else if (own == 4) {
                if (opp) {
                    c[12 + colour]++;
                } else {
                    c[10 + colour]++;
                    if ((mask & (markers[colour] | rings[colour])) == mask) c[14 + colour]++;
                }
            }
        }
    }
}

/* counts(wm, bm, wr, br): (mobility, contact, two, three, three mixed, four, four flip, ring
 * threat), each White's then Black's, as _counts returns them */
static PyObject *py_counts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError,
                        "bots.eval._yinsh_native: init() has not succeeded (never called, or "
                        "it failed)");
        return NULL;
    }
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "counts(white markers, black markers, white rings, "
                                         "black rings)");
        return NULL;
    }
    bb board[4];
    for (int i = 0; i < 4; i++)
        if (bb_from_int(args[i], N_POINTS, &board[i]) < 0) return NULL;
    long c[16] = {0};
    count_board(board, c);
    PyObject *out = PyTuple_New(16);
    if (!out) return NULL;
    for (int i = 0; i < 16; i++) {
        PyObject *v = PyLong_FromLong(c[i]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "Take the rays and windows of games/yinsh.py."},
    {"counts", (PyCFunction)(void (*)(void))py_counts, METH_FASTCALL,
     "counts(wm, bm, wr, br): the board counts of bots/eval/yinsh.py's _counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yinsh_native",
    "The board counts of the Yinsh evaluation in C (see bots/eval/yinsh.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yinsh_native(void) { return PyModule_Create(&module); }

/* Yinsh ring moves in C: what YinshState._ring_moves and _count_ring_moves of games/yinsh.py
 * compute, in the same order.
 *
 * games/yinsh.py is the reference: it hands its rays (per point, the points outwards in each
 * of the six directions) to init() once; the tests compare both on many positions
 * (tests/games/test_native.py). The board has 85 points: one unsigned __int128.
 */
#include "bitboard128.h"

#define N_POINTS 85
#define MAX_RAY 10

static signed char RAY[N_POINTS][6][MAX_RAY];
static signed char RAY_LEN[N_POINTS][6];
static long RING_MOVE_TAG = 0;
static int ready = 0; /* 1 only after an init that checked every table */

/* init(rays, ring move tag): the tables of games/yinsh.py. The module is unready from the first
 * line on and ready again only when everything was read: a damaged table leaves it refusing
 * calls rather than running on half-written tables. */
static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *rays, *tag;
    ready = 0;
    if (!PyArg_ParseTuple(args, "OO", &rays, &tag)) return NULL;
    /* a move is tag | ring << 7 | target: the tag must leave the low 14 bits free */
    long value;
    if (bb_table_rays(rays, N_POINTS, 6, MAX_RAY, "rays", &RAY[0][0][0], &RAY_LEN[0][0]) < 0 ||
        bb_table_int(tag, 0, 1L << 30, "ring move tag", -1, &value) < 0)
        return NULL;
    if (value & 0x3FFF) {
        PyErr_Format(PyExc_ValueError, "ring move tag: %R overlaps the points of a move", tag);
        return NULL;
    }
    RING_MOVE_TAG = value;
    ready = 1;
    Py_RETURN_NONE;
}

static PyObject *unready(void) {
    PyErr_SetString(PyExc_RuntimeError,
                    "games._yinsh_native: init() has not succeeded (never called, or it failed)");
    return NULL;
}

/* ring_moves(own rings, all rings, all markers, count_only): the moves of the rings of the side
 * to act as YinshState._ring_moves lists them, or with count_only their number */
static PyObject *py_ring_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) return unready();
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "ring_moves(own, rings, markers, count_only)");
        return NULL;
    }
    bb own, rings, markers;
    if (bb_from_int(args[0], N_POINTS, &own) || bb_from_int(args[1], N_POINTS, &rings) ||
        bb_from_int(args[2], N_POINTS, &markers))
        return NULL;
    int count_only = PyObject_IsTrue(args[3]);
    if (count_only < 0) return NULL;
    long moves[512];
    int n = 0;
    while (own) {
        int o = bb_lowest(own);
        own &= own - 1;
        long base = RING_MOVE_TAG | (long)o << 7;
        for (int d = 0; d < 6; d++) {
            int jumped = 0;
            for (int i = 0; i < RAY_LEN[o][d]; i++) {
                int t = RAY[o][d][i];
                bb bit = (bb)1 << t;
                if (rings & bit) break;
                if (markers & bit) {
                    jumped = 1;
                    continue;
                }
                if (n < 512) moves[n] = base | t;
                n++;
                if (jumped) break;
            }
        }
    }
    if (count_only) return PyLong_FromLong(n);
    if (n > 512) {
        PyErr_SetString(PyExc_ValueError, "ring_moves: too many moves");
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(moves[i]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "Take the rays and the ring-move tag of games/yinsh.py."},
    {"ring_moves", (PyCFunction)(void (*)(void))py_ring_moves, METH_FASTCALL,
     "ring_moves(own, rings, markers, count_only): YinshState._ring_moves, natively."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yinsh_native",
    "Yinsh ring moves in C (see games/yinsh.py, the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yinsh_native(void) { return PyModule_Create(&module); }

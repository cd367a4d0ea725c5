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
#define MAX_WINDOWS 256

static int NEIGHBOUR[N_POINTS][6]; /* -1 off the board */
static bb WINDOW[MAX_WINDOWS];
static int N_WINDOWS = 0;
static int ready = 0;

static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *rays, *windows;
    if (!PyArg_ParseTuple(args, "OO", &rays, &windows)) return NULL;
    PyObject *fr = PySequence_Fast(rays, "rays must be a sequence");
    if (!fr) return NULL;
    if (PySequence_Fast_GET_SIZE(fr) != N_POINTS) {
        Py_DECREF(fr);
        PyErr_SetString(PyExc_ValueError, "rays: one entry per point");
        return NULL;
    }
    for (int p = 0; p < N_POINTS; p++) {
        PyObject *dirs = PySequence_Fast(PySequence_Fast_GET_ITEM(fr, p), "rays of a point");
        if (!dirs || PySequence_Fast_GET_SIZE(dirs) != 6) {
            Py_XDECREF(dirs);
            Py_DECREF(fr);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "rays: six per point");
            return NULL;
        }
        for (int d = 0; d < 6; d++) {
            PyObject *ray = PySequence_Fast(PySequence_Fast_GET_ITEM(dirs, d), "a ray");
            if (!ray) {
                Py_DECREF(dirs);
                Py_DECREF(fr);
                return NULL;
            }
            NEIGHBOUR[p][d] = PySequence_Fast_GET_SIZE(ray)
                                  ? (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(ray, 0))
                                  : -1;
            Py_DECREF(ray);
        }
        Py_DECREF(dirs);
    }
    Py_DECREF(fr);
    PyObject *fw = PySequence_Fast(windows, "windows must be a sequence");
    if (!fw) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fw);
    if (n > MAX_WINDOWS) {
        Py_DECREF(fw);
        PyErr_SetString(PyExc_ValueError, "windows: too many");
        return NULL;
    }
    for (Py_ssize_t w = 0; w < n; w++) {
        PyObject *points = PySequence_Fast(PySequence_Fast_GET_ITEM(fw, w), "a window");
        if (!points) {
            Py_DECREF(fw);
            return NULL;
        }
        bb mask = 0;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(points); i++) {
            long p = PyLong_AsLong(PySequence_Fast_GET_ITEM(points, i));
            if (p < 0 || p >= N_POINTS) {
                Py_DECREF(points);
                Py_DECREF(fw);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "windows: a point");
                return NULL;
            }
            mask |= (bb)1 << p;
        }
        Py_DECREF(points);
        WINDOW[w] = mask;
    }
    Py_DECREF(fw);
    N_WINDOWS = (int)n;
    if (PyErr_Occurred()) return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

/* counts(wm, bm, wr, br): (mobility, contact, two, three, three mixed, four, four flip, ring
 * threat), each White's then Black's, as _counts returns them */
static PyObject *py_counts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "init() first");
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
    bb markers[2] = {board[0], board[1]}, rings[2] = {board[2], board[3]};
    bb all = board[0] | board[1] | board[2] | board[3];
    bb marker_any = markers[0] | markers[1];
    long c[16] = {0};
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

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
static int ready = 0;

static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *rays;
    long tag;
    if (!PyArg_ParseTuple(args, "Ol", &rays, &tag)) return NULL;
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
            Py_ssize_t len = PySequence_Fast_GET_SIZE(ray);
            if (len > MAX_RAY) {
                Py_DECREF(ray);
                Py_DECREF(dirs);
                Py_DECREF(fr);
                PyErr_SetString(PyExc_ValueError, "rays: a ray too long");
                return NULL;
            }
            RAY_LEN[p][d] = (signed char)len;
            for (Py_ssize_t i = 0; i < len; i++)
                RAY[p][d][i] = (signed char)PyLong_AsLong(PySequence_Fast_GET_ITEM(ray, i));
            Py_DECREF(ray);
        }
        Py_DECREF(dirs);
    }
    Py_DECREF(fr);
    if (PyErr_Occurred()) return NULL;
    RING_MOVE_TAG = tag;
    ready = 1;
    Py_RETURN_NONE;
}

/* ring_moves(own rings, all rings, all markers, count_only): the moves of the rings of the side
 * to act as YinshState._ring_moves lists them, or with count_only their number */
static PyObject *py_ring_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "init() first");
        return NULL;
    }
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

/* Yohoho! ship slides in C: what _count_slides and _add_slides of games/yohoho.py compute,
 * in the same order.
 *
 * games/yohoho.py is the reference: it hands its slide tables (per ship direction, the cells
 * that have a neighbour that way and the index shift to it) to init() once; the tests compare
 * both on many positions (tests/games/test_native.py). 77 cells: one unsigned __int128.
 */
#include "bitboard128.h"

#define N_CELLS 77
#define N_UP 2   /* the ship directions whose step is a shift up: NE, NW */
#define N_DOWN 3 /* and down: W, SW, SE */

static bb UP_SRC[N_UP], DOWN_SRC[N_DOWN];
static int UP_SHIFT[N_UP], DOWN_SHIFT[N_DOWN];
static int ready = 0; /* 1 only after an init that checked every table */

/* n (source cells, shift) pairs: the cells with a neighbour that way and the index shift to
 * it, at most a row's worth of cells */
static int read_pairs(PyObject *seq, Py_ssize_t n, const char *name, bb *src, int *shift) {
    char where[48];
    PyObject *fast = bb_sequence(seq, n, name);
    if (!fast) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyOS_snprintf(where, sizeof where, "%s[%zd]", name, i);
        PyObject *pair = bb_sequence(PySequence_Fast_GET_ITEM(fast, i), 2, where);
        long s = 0;
        int rc = !pair || bb_table_board(PySequence_Fast_GET_ITEM(pair, 0), N_CELLS, where, 0,
                                         &src[i]) < 0 ||
                 bb_table_int(PySequence_Fast_GET_ITEM(pair, 1), 1, N_CELLS - 1, where, 1, &s) < 0;
        Py_XDECREF(pair);
        if (rc) {
            Py_DECREF(fast);
            return -1;
        }
        shift[i] = (int)s;
    }
    Py_DECREF(fast);
    return 0;
}

/* init(up, down): the slide tables of games/yohoho.py. The module is unready until every
 * table was read: a damaged one leaves it refusing calls, not sliding on half a table. */
static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *up, *down;
    ready = 0;
    if (!PyArg_ParseTuple(args, "OO", &up, &down)) return NULL;
    if (read_pairs(up, N_UP, "up slides", UP_SRC, UP_SHIFT) < 0 ||
        read_pairs(down, N_DOWN, "down slides", DOWN_SRC, DOWN_SHIFT) < 0)
        return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

static int parse(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t first, bb *pieces,
                 bb *empty, long *reach) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError,
                        "games._yohoho_native: init() has not succeeded (never called, or it "
                        "failed)");
        return -1;
    }
    if (nargs != first + 3) {
        PyErr_SetString(PyExc_TypeError, "slides: pieces, empty, reach");
        return -1;
    }
    if (bb_from_int(args[first], N_CELLS, pieces) || bb_from_int(args[first + 1], N_CELLS, empty))
        return -1;
    *reach = PyLong_AsLong(args[first + 2]);
    if (*reach == -1 && PyErr_Occurred()) return -1;
    if (*reach < 0 || *reach > 16) {
        PyErr_SetString(PyExc_ValueError, "slides: a reach of 0 to 16");
        return -1;
    }
    return 0;
}

/* the number of slides of ``pieces`` into ``empty``: counted bits, the one hot spot here */
static BB_HOT long count(bb pieces, bb empty, long reach) {
    long n = 0;
    for (int d = 0; d < N_UP; d++) {
        bb cur = pieces;
        for (long r = 0; r < reach; r++) {
            cur = ((cur & UP_SRC[d]) << UP_SHIFT[d]) & empty;
            if (!cur) break;
            n += bb_popcount(cur);
        }
    }
    for (int d = 0; d < N_DOWN; d++) {
        bb cur = pieces;
        for (long r = 0; r < reach; r++) {
            cur = ((cur & DOWN_SRC[d]) >> DOWN_SHIFT[d]) & empty;
            if (!cur) break;
            n += bb_popcount(cur);
        }
    }
    return n;
}

/* count_slides(pieces, empty, reach): _count_slides */
static PyObject *py_count_slides(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    bb pieces, empty;
    long reach;
    if (parse(args, nargs, 0, &pieces, &empty, &reach) < 0) return NULL;
    return PyLong_FromLong(count(pieces, empty, reach));
}

static int append(PyObject *out, long move) {
    PyObject *v = PyLong_FromLong(move);
    if (!v) return -1;
    int rc = PyList_Append(out, v);
    Py_DECREF(v);
    return rc;
}

/* add_slides(out, pieces, empty, reach): _add_slides, appending to the list out */
static PyObject *py_add_slides(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    bb pieces, empty;
    long reach;
    if (nargs < 1 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "add_slides(out: list, pieces, empty, reach)");
        return NULL;
    }
    if (parse(args, nargs, 1, &pieces, &empty, &reach) < 0) return NULL;
    PyObject *out = args[0];
    for (int d = 0; d < N_UP; d++) {
        bb cur = pieces;
        int back = 0;
        for (long r = 0; r < reach; r++) {
            cur = ((cur & UP_SRC[d]) << UP_SHIFT[d]) & empty;
            if (!cur) break;
            back += UP_SHIFT[d];
            for (bb bits = cur; bits; bits &= bits - 1) {
                int t = bb_lowest(bits);
                if (append(out, (long)(t - back) << 7 | t) < 0) return NULL;
            }
        }
    }
    for (int d = 0; d < N_DOWN; d++) {
        bb cur = pieces;
        int back = 0;
        for (long r = 0; r < reach; r++) {
            cur = ((cur & DOWN_SRC[d]) >> DOWN_SHIFT[d]) & empty;
            if (!cur) break;
            back += DOWN_SHIFT[d];
            for (bb bits = cur; bits; bits &= bits - 1) {
                int t = bb_lowest(bits);
                if (append(out, (long)(t + back) << 7 | t) < 0) return NULL;
            }
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "Take the slide tables of games/yohoho.py."},
    {"count_slides", (PyCFunction)(void (*)(void))py_count_slides, METH_FASTCALL,
     "count_slides(pieces, empty, reach): games.yohoho._count_slides."},
    {"add_slides", (PyCFunction)(void (*)(void))py_add_slides, METH_FASTCALL,
     "add_slides(out, pieces, empty, reach): games.yohoho._add_slides."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yohoho_native",
    "Yohoho! ship slides in C (see games/yohoho.py, the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__yohoho_native(void) { return PyModule_Create(&module); }

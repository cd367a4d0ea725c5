/* Shared by the native accelerators (see setup.py): 128-bit bitboards read from Python ints.
 *
 * The boards of Yinsh (85 points) and Yohoho (77 cells) fit in one unsigned __int128, so the
 * Python reference's bitboard expressions carry over as they are.
 */
#ifndef ENGINESRV_BITBOARD128_H
#define ENGINESRV_BITBOARD128_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef unsigned __int128 bb;

static inline int bb_popcount(bb x) {
    return __builtin_popcountll((unsigned long long)x) +
           __builtin_popcountll((unsigned long long)(x >> 64));
}

/* the index of the lowest set bit (x != 0) */
static inline int bb_lowest(bb x) {
    unsigned long long lo = (unsigned long long)x;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((unsigned long long)(x >> 64));
}

/* the index of the highest set bit (x != 0), what Python's ``bit_length() - 1`` is */
static inline int bb_highest(bb x) {
    unsigned long long hi = (unsigned long long)(x >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((unsigned long long)x);
}

/* A Python int of at most ``bits`` bits (non-negative) into *out; -1 with an exception set
 * (TypeError for a non-int, OverflowError for a negative or too large one, ValueError for one
 * with bits beyond the board). */
static inline int bb_from_int(PyObject *obj, int bits, bb *out) {
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "a bitboard must be an int");
        return -1;
    }
    unsigned char bytes[16];
#if PY_VERSION_HEX >= 0x030D0000
    if (_PyLong_AsByteArray((PyLongObject *)obj, bytes, 16, 1, 0, 1) < 0) return -1;
#else
    if (_PyLong_AsByteArray((PyLongObject *)obj, bytes, 16, 1, 0) < 0) return -1;
#endif
    bb value = 0;
    for (int i = 15; i >= 0; i--) value = value << 8 | bytes[i];
    if (bits < 128 && value >> bits) {
        PyErr_SetString(PyExc_ValueError, "a bitboard off the board");
        return -1;
    }
    *out = value;
    return 0;
}

/* A sequence of ``n`` bitboards of at most ``bits`` bits into out. */
static inline int bb_table(PyObject *seq, int bits, bb *out, Py_ssize_t n) {
    PyObject *fast = PySequence_Fast(seq, "a table must be a sequence");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "a table of %zd bitboards was expected", n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (bb_from_int(PySequence_Fast_GET_ITEM(fast, i), bits, &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

#endif

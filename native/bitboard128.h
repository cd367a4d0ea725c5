/* Shared by the native accelerators (see setup.py): 128-bit bitboards, portable bit counting,
 * and checked readers of the Python ints and tables they are given.
 *
 * The boards of Yinsh (85 points) and Yohoho (77 cells) fit in one unsigned __int128, so the
 * Python reference's bitboard expressions carry over as they are. Only public C API is used
 * (PyLong_AsNativeBytes where it exists, 3.13, else the low 64 bits and the rest shifted down),
 * and the build passes no -m option: see BB_HOT for counting bits fast anyway.
 */
#ifndef ENGINESRV_BITBOARD128_H
#define ENGINESRV_BITBOARD128_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pyint128.h"
#include <stdint.h>

typedef unsigned __int128 bb;

/* -- bits ---------------------------------------------------------------------------------
 * Without -mpopcnt, __builtin_popcountll is a library call. A function marked BB_HOT is built
 * twice, with and without the popcnt instruction, and the dynamic loader picks one by what the
 * processor has. Mark the functions where bits are counted on the hot path: what is inlined
 * into them is compiled into both copies, and a marked function's popcnt copy calls the popcnt
 * copy of another marked one directly (objdump shows popcnt in the .popcnt copies only). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && \
    defined(__GLIBC__) /* the choice is made by an ifunc resolver: glibc's, not musl's */
#define BB_HOT __attribute__((target_clones("popcnt", "default"), noinline))
#else
#define BB_HOT
#endif

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

/* -- reading ints (pyint128.h) ----------------------------------------------------------- */

/* A bitboard argument of at most ``bits`` bits into *out; -1 with an exception otherwise:
 * TypeError for a non-int, OverflowError for a negative one or one beyond 128 bits (what
 * CPython's conversions raise), ValueError for one with bits beyond the board. */
static inline int bb_from_int(PyObject *obj, int bits, bb *out) {
    switch (bb_convert(obj, bits, out)) {
    case BB_OK:
        return 0;
    case BB_NOT_INT:
        PyErr_SetString(PyExc_TypeError, "a bitboard must be an int");
        return -1;
    case BB_NEGATIVE:
        PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
        return -1;
    case BB_TOO_WIDE:
        PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        return -1;
    case BB_OFF_BOARD:
        PyErr_SetString(PyExc_ValueError, "a bitboard off the board");
        return -1;
    default:
        return -1;
    }
}

/* -- reading the tables handed over on init -------------------------------------------------
 * Every reader below names the table (and the entry) in a ValueError on any damage: a wrong
 * length or nesting, a non-int, a value out of its range. A table damaged by a bug in the
 * reference must stop the import, not index past an array later. */

/* ``seq`` as a fast sequence of exactly ``n`` entries (n < 0: any length up to -n); NULL with
 * a ValueError naming ``name`` otherwise. The caller releases the result. */
static inline PyObject *bb_sequence(PyObject *seq, Py_ssize_t n, const char *name) {
    PyObject *fast = PySequence_Fast(seq, "");
    if (!fast) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: a sequence was expected, not %.80s", name,
                         Py_TYPE(seq)->tp_name);
        }
        return NULL;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (n >= 0 && len != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries, %zd expected", name, len, n);
        Py_DECREF(fast);
        return NULL;
    }
    if (n < 0 && len > -n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd entries, at most %zd expected", name, len, -n);
        Py_DECREF(fast);
        return NULL;
    }
    return fast;
}

/* An int in [low, high] into *out; -1 with a ValueError naming ``name`` (and ``index`` when it
 * is not negative) otherwise. */
static inline int bb_table_int(PyObject *obj, long low, long high, const char *name,
                               Py_ssize_t index, long *out) {
    long value = 0;
    int overflow = 0;
    if (PyLong_Check(obj)) {
        value = PyLong_AsLongAndOverflow(obj, &overflow);
        if (value == -1 && PyErr_Occurred()) return -1;
    }
    if (!PyLong_Check(obj) || overflow || value < low || value > high) {
        if (index >= 0)
            PyErr_Format(PyExc_ValueError, "%s[%zd]: %R is not an int in [%ld, %ld]", name,
                         index, obj, low, high);
        else
            PyErr_Format(PyExc_ValueError, "%s: %R is not an int in [%ld, %ld]", name, obj, low,
                         high);
        return -1;
    }
    *out = value;
    return 0;
}

/* A bitboard of at most ``bits`` bits into *out; -1 with a ValueError naming ``name`` (and
 * ``index`` when it is not negative) otherwise. */
static inline int bb_table_board(PyObject *obj, int bits, const char *name, Py_ssize_t index,
                                 bb *out) {
    static const char *const why[] = {
        [BB_NOT_INT] = "not an int",
        [BB_NEGATIVE] = "a negative int",
        [BB_TOO_WIDE] = "an int of more than 128 bits",
        [BB_OFF_BOARD] = "an int with bits beyond the board",
    };
    int rc = bb_convert(obj, bits, out);
    if (rc == BB_OK) return 0;
    if (rc == BB_RAISED) return -1;
    if (index >= 0)
        PyErr_Format(PyExc_ValueError, "%s[%zd]: %s (a bitboard of %d bits was expected)", name,
                     index, why[rc], bits);
    else
        PyErr_Format(PyExc_ValueError, "%s: %s (a bitboard of %d bits was expected)", name,
                     why[rc], bits);
    return -1;
}

/* A sequence of exactly ``n`` ints in [low, high] into out. */
static inline int bb_table_ints(PyObject *seq, Py_ssize_t n, long low, long high,
                                const char *name, long *out) {
    PyObject *fast = bb_sequence(seq, n, name);
    if (!fast) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (bb_table_int(PySequence_Fast_GET_ITEM(fast, i), low, high, name, i, &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* A sequence of exactly ``n`` bitboards of at most ``bits`` bits into out. */
static inline int bb_table(PyObject *seq, int bits, bb *out, Py_ssize_t n, const char *name) {
    PyObject *fast = bb_sequence(seq, n, name);
    if (!fast) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (bb_table_board(PySequence_Fast_GET_ITEM(fast, i), bits, name, i, &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* The rays of a board, as the references build them: per point, ``n_dirs`` rays, each the
 * points from it outwards (at most ``max_len``, each in [0, n_points)). Into the flat arrays
 * points[(p * n_dirs + d) * max_len + i] and lens[p * n_dirs + d]. */
static inline int bb_table_rays(PyObject *rays, int n_points, int n_dirs, int max_len,
                                const char *name, signed char *points, signed char *lens) {
    char where[64];
    PyObject *fr = bb_sequence(rays, n_points, name);
    if (!fr) return -1;
    for (int p = 0; p < n_points; p++) {
        PyOS_snprintf(where, sizeof where, "%s[%d]", name, p);
        PyObject *dirs = bb_sequence(PySequence_Fast_GET_ITEM(fr, p), n_dirs, where);
        if (!dirs) goto fail;
        for (int d = 0; d < n_dirs; d++) {
            PyOS_snprintf(where, sizeof where, "%s[%d][%d]", name, p, d);
            PyObject *ray = bb_sequence(PySequence_Fast_GET_ITEM(dirs, d), -max_len, where);
            if (!ray) {
                Py_DECREF(dirs);
                goto fail;
            }
            Py_ssize_t len = PySequence_Fast_GET_SIZE(ray);
            lens[p * n_dirs + d] = (signed char)len;
            for (Py_ssize_t i = 0; i < len; i++) {
                long q;
                if (bb_table_int(PySequence_Fast_GET_ITEM(ray, i), 0, n_points - 1, where, i,
                                 &q) < 0) {
                    Py_DECREF(ray);
                    Py_DECREF(dirs);
                    goto fail;
                }
                points[(p * n_dirs + d) * max_len + i] = (signed char)q;
            }
            Py_DECREF(ray);
        }
        Py_DECREF(dirs);
    }
    Py_DECREF(fr);
    return 0;
fail:
    Py_DECREF(fr);
    return -1;
}

#endif

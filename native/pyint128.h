/* Reading a Python int of up to 128 bits into an unsigned __int128, through the public C API
 * only (PyLong_AsNativeBytes where it exists, 3.13; before it the low 64 bits and the rest
 * shifted down). Shared by the native accelerators (bitboard128.h) and the compiled cores
 * (core/common.h), which raise their own errors from the codes below. */
#ifndef ENGINESRV_PYINT128_H
#define ENGINESRV_PYINT128_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum {
    BB_RAISED = -1, /* a Python exception is set (memory, say): pass it on */
    BB_OK = 0,
    BB_NOT_INT,
    BB_NEGATIVE,
    BB_TOO_WIDE,  /* more than 128 bits */
    BB_OFF_BOARD, /* a bit at ``bits`` or above */
};

/* A Python int into *out if it is a non-negative one of at most ``bits`` bits (bits <= 128);
 * otherwise one of the codes above, with no exception set but for BB_RAISED. */
static inline int bb_convert(PyObject *obj, int bits, unsigned __int128 *out) {
    if (!PyLong_Check(obj)) return BB_NOT_INT;
    unsigned __int128 value;
#if PY_VERSION_HEX >= 0x030D0000
    unsigned char bytes[16] = {0};
    Py_ssize_t need = PyLong_AsNativeBytes(obj, bytes, 16,
                                           Py_ASNATIVEBYTES_LITTLE_ENDIAN |
                                               Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                               Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (need < 0) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return BB_RAISED;
        PyErr_Clear(); /* the only ValueError it raises is for a negative int */
        return BB_NEGATIVE;
    }
    if (need > 16) return BB_TOO_WIDE;
    value = 0;
    for (int i = 15; i >= 0; i--) value = value << 8 | bytes[i];
#else
    /* one call, and no exception raised, for the ints that fit in 63 bits */
    int overflow = 0;
    long long small = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow < 0) return BB_NEGATIVE;
    if (overflow == 0) {
        if (small == -1 && PyErr_Occurred()) return BB_RAISED;
        if (small < 0) return BB_NEGATIVE;
        value = (unsigned long long)small;
    } else {
        unsigned long long low = PyLong_AsUnsignedLongLongMask(obj);
        if (low == (unsigned long long)-1 && PyErr_Occurred()) return BB_RAISED;
        PyObject *shift = PyLong_FromLong(64);
        if (!shift) return BB_RAISED;
        PyObject *rest = PyNumber_Rshift(obj, shift);
        Py_DECREF(shift);
        if (!rest) return BB_RAISED;
        unsigned long long high = PyLong_AsUnsignedLongLong(rest);
        Py_DECREF(rest);
        if (high == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return BB_RAISED;
            PyErr_Clear(); /* rest is positive here: it has more than 64 bits */
            return BB_TOO_WIDE;
        }
        value = (unsigned __int128)high << 64 | low;
    }
#endif
    if (bits < 128 && value >> bits) return BB_OFF_BOARD;
    *out = value;
    return BB_OK;
}

#endif

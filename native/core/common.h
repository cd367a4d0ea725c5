/* Shared by the compiled search cores (bots/_core_<game>.c): the contract a game implements,
 * portable bit operations and checked readers of Python values.
 *
 * A core is one translation unit: bots/_core_<game>.c includes the game's header
 * (native/core/<game>.h: rules and evaluation) and then native/core/search.h, which builds the
 * search and the module's functions on top of what the game defines. The Python code of the
 * game (games/<game>.py) and of its evaluation (bots/eval/<game>.py) is the reference: the core
 * must do exactly what they do, move for move, so that a fixed-depth search visits the same
 * nodes in the same order as bots/search.py (tests/bots/test_core_<game>.py compares them).
 *
 * What a game header defines before search.h is included
 * -------------------------------------------------------
 *   #define CORE_GAME_NAME   "yinsh"      the game, for messages
 *   #define CORE_MAX_MOVES   N            more than the moves of any position (any list below)
 *   typedef int32_t core_move;            (this header) moves are the reference's ints
 *
 *   typedef struct CorePos CorePos;       the position and its own undo stack, deep enough
 *                                         for CORE_MAX_DEPTH pushes from the loaded position
 *   typedef struct CoreEval CoreEval;     the evaluation's settings (weights, caps) and any
 *                                         scratch it needs; no Python objects inside
 *
 *   int  core_init(PyObject *module)      once at import: build or check every table; on any
 *                                         damage raise ValueError naming the table and return
 *                                         -1, leaving the module unready (search.h refuses
 *                                         to run until a later init succeeds)
 *   int  core_load(CorePos *pos, PyObject *state)
 *                                         the reference's State (its slots read directly) into
 *                                         pos; -1 with an exception (TypeError, ValueError
 *                                         naming the field) when it is not one the game knows
 *   int  core_eval_load(CoreEval *ev, PyObject *evaluator)
 *                                         the evaluator's settings; -1 with an exception
 *   void core_eval_reset(CoreEval *ev)    forget any cached values (a new search: optional
 *                                         work, must not change any result)
 *   int      core_to_move(const CorePos *pos)      seat 0 or 1 (not called once over)
 *   int      core_is_terminal(const CorePos *pos)
 *   int      core_winner(const CorePos *pos)       once over: seat 0 or 1, -1 for a draw
 *   uint64_t core_key(const CorePos *pos)          equal to State.key()
 *   int      core_legal_moves(CorePos *pos, core_move *out)
 *                                         State.legal_moves(), same order; returns the count
 *                                         (0 once the game is over)
 *   int      core_search_moves(CorePos *pos, CoreEval *ev, core_move *out)
 *                                         Evaluator.search_moves(state), same order
 *   int      core_order_moves(CorePos *pos, CoreEval *ev, core_move *moves, int n)
 *                                         Evaluator.order_moves(state, moves) in place,
 *                                         returns the new count (the reference's list length)
 *   void     core_push(CorePos *pos, core_move move)   a legal move (trusted, like State.push)
 *   void     core_pop(CorePos *pos)
 *   int      core_evaluate(CorePos *pos, CoreEval *ev) Evaluator.evaluate(state)
 *   int      core_is_quiet(CorePos *pos, CoreEval *ev) Evaluator.is_quiet(state)
 *   int      core_noisy_moves(CorePos *pos, CoreEval *ev, core_move *out)
 *                                         Evaluator.noisy_moves(state, LazyMoves(state)),
 *                                         same order; returns the count
 *
 * Every function above but the loaders and core_init trusts its input and never raises: a
 * position reached by pushing legal moves from a loaded one is always valid.
 *
 * Arithmetic: the reference's ``//`` and ``%`` floor; C's ``/`` and ``%`` truncate. Use
 * floor_div/floor_mod below wherever an operand can be negative.
 */
#ifndef ENGINESRV_CORE_COMMON_H
#define ENGINESRV_CORE_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "pyint128.h"

typedef int32_t core_move;
typedef unsigned __int128 u128;

#define CORE_MAX_DEPTH 1024
/* pushes a CorePos must take below the loaded position: the search's deepest line is MAX_PLY
 * (128) + QUIESCENCE_PLIES (8) of bots/search.py; random playouts (the rules benchmark) go on
 * to the end of a game or CORE_MAX_DEPTH - 8 plies */

/* -- bits ------------------------------------------------------------------------------------
 * Portable: the build passes no -mpopcnt, so __builtin_popcountll is a library call unless it
 * is compiled inside a function marked CORE_HOT: gcc then builds that function twice (with and
 * without the instruction) and picks one when the module loads, by what the processor has.
 * Mark the few big functions where bits are counted (an evaluation, a move generator) CORE_HOT
 * (gcc on x86-64 with glibc, whose load-time resolver picks the copy; elsewhere one copy);
 * the small helpers they call are inlined into both copies. */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define CORE_HOT __attribute__((target_clones("popcnt", "default"), noinline))
#else
#define CORE_HOT
#endif

static inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }
static inline int popcount128(u128 x) {
    return __builtin_popcountll((uint64_t)x) + __builtin_popcountll((uint64_t)(x >> 64));
}
static inline int lowest64(uint64_t x) { return __builtin_ctzll(x); } /* x != 0 */
static inline int lowest128(u128 x) {                                 /* x != 0 */
    uint64_t lo = (uint64_t)x;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(x >> 64));
}
static inline int highest128(u128 x) { /* x != 0: Python's x.bit_length() - 1 */
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)x);
}

static inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

/* -- reading Python values (public C API only) ----------------------------------------------- */

/* A non-negative Python int of at most ``bits`` bits (bits <= 128) into *out; -1 with an
 * exception naming ``what`` otherwise (TypeError for a non-int, ValueError for a negative one
 * or one with bits beyond ``bits``). */
static inline int core_read_bits(PyObject *obj, int bits, const char *what, u128 *out) {
    switch (bb_convert(obj, bits, out)) {
    case BB_OK:
        return 0;
    case BB_NOT_INT:
        PyErr_Format(PyExc_TypeError, "%s: an int was expected, not %.80s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    case BB_NEGATIVE:
        PyErr_Format(PyExc_ValueError, "%s: a negative int", what);
        return -1;
    case BB_TOO_WIDE:
    case BB_OFF_BOARD:
        PyErr_Format(PyExc_ValueError, "%s: more than %d bits", what, bits);
        return -1;
    default:
        return -1;
    }
}

/* A Python int in [low, high] into *out; -1 with an exception naming ``what`` otherwise. */
static inline int core_read_int(PyObject *obj, long low, long high, const char *what, long *out) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: an int was expected, not %.80s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (overflow || value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "%s: %R is outside [%ld, %ld]", what, obj, low, high);
        return -1;
    }
    *out = value;
    return 0;
}

/* The attribute ``name`` of ``obj`` read as core_read_int does (a slot of a reference State). */
static inline int core_attr_int(PyObject *obj, const char *name, long low, long high, long *out) {
    PyObject *value = PyObject_GetAttrString(obj, name);
    if (!value) return -1;
    int rc = core_read_int(value, low, high, name, out);
    Py_DECREF(value);
    return rc;
}

/* The attribute ``name`` of ``obj`` read as core_read_bits does. */
static inline int core_attr_bits(PyObject *obj, const char *name, int bits, u128 *out) {
    PyObject *value = PyObject_GetAttrString(obj, name);
    if (!value) return -1;
    int rc = core_read_bits(value, bits, name, out);
    Py_DECREF(value);
    return rc;
}

/* A sequence of exactly ``n`` ints in [low, high] (a table handed over by the reference) into
 * out; ValueError naming the table on any damage. */
static inline int core_read_table(PyObject *seq, Py_ssize_t n, long low, long high,
                                  const char *what, long *out) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %zd entries were expected", what, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (core_read_int(PySequence_Fast_GET_ITEM(fast, i), low, high, what, &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

#endif

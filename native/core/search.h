/* The compiled search: bots/search.py's Searcher in C over a game's core_* functions (see
 * common.h), and the module's functions. Included last by bots/_core_<game>.c, after the game.
 *
 * bots/search.py is the reference. With depth or node limits the search visits the same nodes
 * in the same order as the reference (same transposition table slots, same replacement, same
 * ordering, the same looks at the limits every CHECK_EVERY nodes), so node counts, best moves,
 * scores and principal variations are equal (tests/bots/test_compiled.py). Under a deadline it
 * looks at the clock as often as keeps a stop within a few milliseconds, measured by the
 * gaps between looks, but not on every node as the reference does: a node here costs about a
 * microsecond, a look at a Python clock a tenth of that.
 *
 * Time is read only through the ``clock`` callable handed in (Limits.clock), ``stop`` is polled
 * at every look, and either raising ends the search with their exception.
 *
 * The memory a bot keeps between searches lives in two Python bytearrays (bots/compiled.py):
 * the transposition table (TT_ENTRY_BYTES per slot, a power of two of slots) and the history of
 * moves that cut off (a small open-addressed map of move -> count with a header). Any core can
 * use them; the table's age is passed in.
 */
#ifndef ENGINESRV_CORE_SEARCH_H
#define ENGINESRV_CORE_SEARCH_H

#include "common.h"

#define WIN 10000000
#define PROVEN (WIN - 10000)
#define INF (WIN + 1)
#define MAX_EVAL 100000
#define MAX_PLY 128
#define QUIESCENCE_PLIES 8
#define CHECK_EVERY 128
/* Late move reductions (Searcher's options.reductions): at depth REDUCE_DEPTH and more, every
 * move from the REDUCE_AFTER-th on (index from 0) is first searched one ply shallower with a
 * null window; only a move that beats alpha there is searched again at full depth. */
#define REDUCE_DEPTH 3
#define REDUCE_AFTER 3
#define CHECK_GAP 0.004
#define PLY_SLOTS (MAX_PLY + QUIESCENCE_PLIES + 2)
#define EXACT 0
#define LOWER 1
#define UPPER 2

#if PLY_SLOTS > CORE_MAX_DEPTH
#error "CORE_MAX_DEPTH must cover the search's deepest ply"
#endif

/* -- the transposition table ----------------------------------------------------------------- */

/* A slot holds an entry only when its generation is the table's: clearing a table (a new
 * game) is a new generation, not a pass over memory that may be tens of megabytes (and whose
 * pages, once touched, stay ready for the next game). Zeroed memory is generation 0, empty. */
typedef struct {
    uint64_t key;
    int32_t score;
    int32_t move;
    int16_t depth;
    uint8_t bound;
    uint8_t age;
    uint32_t generation;
} TTEntry;

#define TT_ENTRY_BYTES ((int)sizeof(TTEntry))

typedef struct {
    TTEntry *slots;
    uint64_t mask;
    size_t size;
    uint8_t age;
    uint32_t generation;
} Table;

static inline int tt_used(const Table *t, const TTEntry *e) { return e->generation == t->generation; }

static inline TTEntry *tt_probe(Table *t, uint64_t key) {
    TTEntry *e = &t->slots[key & t->mask];
    return tt_used(t, e) && e->key == key ? e : NULL;
}

/* bots.search.TranspositionTable.store: replace an empty slot, an older search's entry, the
 * same position's or a shallower one; a store without a move keeps the position's old move. */
static inline void tt_store(Table *t, uint64_t key, int depth, int bound, int score,
                            core_move move) {
    TTEntry *old = &t->slots[key & t->mask];
    int used = tt_used(t, old);
    if (!used || old->age != t->age || old->key == key || depth >= old->depth) {
        if (move < 0 && used && old->key == key) move = old->move;
        old->key = key;
        old->depth = (int16_t)depth;
        old->bound = (uint8_t)bound;
        old->score = score;
        old->move = move;
        old->age = t->age;
        old->generation = t->generation;
    }
}

static int tt_hashfull(const Table *t) {
    size_t n = t->size < 1000 ? t->size : 1000;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) used += tt_used(t, &t->slots[i]) && t->slots[i].age == t->age;
    return (int)(used * 1000 / n);
}

/* -- the history of moves that cut off -------------------------------------------------------
 * The reference's dict of move -> sum of depth squared, kept for a whole game. Here: a header
 * (the number of moves held) and a power of two of (move + 1, count) slots, open addressing. A
 * full map takes no new moves (far more slots than any game has distinct moves). */

typedef struct {
    int64_t count;
    int64_t pad;
} HistoryHeader;

typedef struct {
    int64_t move1; /* move + 1; 0 = empty */
    int64_t value;
} HistorySlot;

#define HISTORY_SLOT_BYTES ((int)sizeof(HistorySlot))
#define HISTORY_HEADER_BYTES ((int)sizeof(HistoryHeader))

typedef struct {
    HistoryHeader *header;
    HistorySlot *slots;
    uint64_t mask;
} History;

static inline uint64_t history_hash(core_move move) {
    return ((uint64_t)(uint32_t)move * 0x9E3779B97F4A7C15ull) >> 17;
}

static inline int64_t history_get(const History *h, core_move move) {
    uint64_t i = history_hash(move) & h->mask;
    for (uint64_t probes = 0; probes <= h->mask; probes++, i = (i + 1) & h->mask) {
        if (h->slots[i].move1 == 0) return 0;
        if (h->slots[i].move1 == (int64_t)move + 1) return h->slots[i].value;
    }
    return 0;
}

static inline void history_add(History *h, core_move move, int64_t amount) {
    uint64_t i = history_hash(move) & h->mask;
    for (uint64_t probes = 0; probes <= h->mask; probes++, i = (i + 1) & h->mask) {
        if (h->slots[i].move1 == (int64_t)move + 1) {
            /* saturate: the memory is the caller's, and may hold any count (amount > 0) */
            int64_t value = h->slots[i].value;
            h->slots[i].value = value > INT64_MAX - amount ? INT64_MAX : value + amount;
            return;
        }
        if (h->slots[i].move1 == 0) {
            if ((uint64_t)h->header->count * 4 >= (h->mask + 1) * 3) return; /* full */
            h->slots[i].move1 = (int64_t)move + 1;
            h->slots[i].value = amount;
            h->header->count++;
            return;
        }
    }
}

/* -- one search -------------------------------------------------------------------------------- */

typedef struct {
    core_move moves[PLY_SLOTS][CORE_MAX_MOVES];
    core_move pv[PLY_SLOTS][PLY_SLOTS];
    int pv_len[PLY_SLOTS];
    core_move killers[PLY_SLOTS][2];
    int64_t sort_keys[CORE_MAX_MOVES];
    core_move sort_scratch[CORE_MAX_MOVES];
    int64_t sort_keys_scratch[CORE_MAX_MOVES];
    CorePos pos;
    CoreEval eval;
    Table table;
    History history;
    /* limits */
    int has_depth, has_nodes, has_deadline, has_target, search_forced;
    long max_depth;
    long long max_nodes;
    double deadline, target;
    PyObject *clock, *stop;
    /* options */
    int quiescence, aspiration, reductions;
    /* what to search at the root: lines (MultiPV), and only the moves allowed (if has_allowed) */
    int lines;
    int has_allowed, n_allowed;
    core_move allowed[CORE_MAX_MOVES];
    /* the last search of each root move: Searcher.root_scores */
    int n_scores;
    core_move score_moves[CORE_MAX_MOVES];
    int score_depth[CORE_MAX_MOVES], score_value[CORE_MAX_MOVES], score_bound[CORE_MAX_MOVES];
    /* progress */
    long long nodes, next_check;
    long long check_every;
    int seldepth;
    double started, last_check;
    int aborted; /* a limit or stop ended the search */
    int stopped; /* by stop or the deadline (not by the node limit) */
    int failed;  /* a Python error is set */
} Search;

typedef struct {
    int depth;
    int value;
    core_move move;
    core_move pv[PLY_SLOTS];
    int pv_len;
} Progress;

/* The clock's reading, or -1 with s->failed set. */
static double read_clock(Search *s) {
    PyObject *now = PyObject_CallNoArgs(s->clock);
    if (!now) {
        s->failed = s->aborted = 1;
        return -1;
    }
    double value = PyFloat_AsDouble(now);
    Py_DECREF(now);
    if (value == -1 && PyErr_Occurred()) {
        s->failed = s->aborted = 1;
        return -1;
    }
    return value;
}

/* Searcher._check: a look at the limits; sets aborted when one is reached. */
static void check_limits(Search *s) {
    if (s->has_deadline) {
        double now = read_clock(s);
        if (s->failed) return;
        double gap = now - s->last_check;
        s->last_check = now;
        if (gap > CHECK_GAP) {
            long long every = (long long)((double)s->check_every * CHECK_GAP / gap);
            s->check_every = every > 1 ? every : 1;
        } else if (gap < CHECK_GAP / 4 && s->check_every < CHECK_EVERY) {
            s->check_every *= 2;
        }
    }
    s->next_check = s->nodes + s->check_every;
    if (s->has_nodes && s->nodes >= s->max_nodes) {
        s->aborted = 1;
        return;
    }
    PyObject *answer = PyObject_CallNoArgs(s->stop);
    if (!answer) {
        s->failed = s->aborted = 1;
        return;
    }
    int truth = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    if (truth < 0) {
        s->failed = s->aborted = 1;
        return;
    }
    if (truth) {
        s->stopped = s->aborted = 1;
        return;
    }
    if (s->has_deadline) {
        double now = read_clock(s);
        if (s->failed) return;
        if (now - s->started >= s->deadline) s->stopped = s->aborted = 1;
    }
}

static inline void count_node(Search *s) {
    s->nodes++;
    if (s->nodes >= s->next_check) check_limits(s);
}

static inline int terminal_score(const CorePos *pos, int me, int ply) {
    int winner = core_winner(pos);
    if (winner < 0) return 0;
    return winner == me ? WIN - ply : -(WIN - ply);
}

static inline int to_table(int score, int ply) {
    return score >= PROVEN ? score + ply : score <= -PROVEN ? score - ply : score;
}

static inline int from_table(int score, int ply) {
    return score >= PROVEN ? score - ply : score <= -PROVEN ? score + ply : score;
}

static inline int contains(const core_move *moves, int n, core_move move) {
    for (int i = 0; i < n; i++)
        if (moves[i] == move) return 1;
    return 0;
}

/* Stable sort of moves by descending key (the reference's list.sort by -history). */
static void sort_by_history(Search *s, core_move *moves, int n) {
    int64_t *keys = s->sort_keys;
    int any = 0;
    for (int i = 0; i < n; i++) {
        keys[i] = history_get(&s->history, moves[i]);
        any |= keys[i] != 0;
    }
    if (!any) return;
    /* bottom-up merge sort: n can reach a few hundred */
    core_move *src = moves, *dst = s->sort_scratch;
    int64_t *ksrc = keys, *kdst = s->sort_keys_scratch;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (ksrc[j] > ksrc[i]) {
                    kdst[k] = ksrc[j];
                    dst[k++] = src[j++];
                } else {
                    kdst[k] = ksrc[i];
                    dst[k++] = src[i++];
                }
            }
            while (i < mid) {
                kdst[k] = ksrc[i];
                dst[k++] = src[i++];
            }
            while (j < hi) {
                kdst[k] = ksrc[j];
                dst[k++] = src[j++];
            }
        }
        core_move *t = src;
        src = dst;
        dst = t;
        int64_t *kt = ksrc;
        ksrc = kdst;
        kdst = kt;
    }
    if (src != moves) memcpy(moves, src, (size_t)n * sizeof(core_move));
}

/* Searcher._ordered: the evaluation's order, then by history, the table's move and the
 * killers in front. */
static int ordered_moves(Search *s, core_move tt_move, int ply, core_move *moves) {
    int n = core_search_moves(&s->pos, &s->eval, moves);
    n = core_order_moves(&s->pos, &s->eval, moves, n);
    if (s->history.header->count) sort_by_history(s, moves, n);
    core_move front[3];
    int nfront = 0;
    core_move specials[3] = {tt_move, s->killers[ply][0], s->killers[ply][1]};
    for (int i = 0; i < 3; i++) {
        core_move m = specials[i];
        if (m >= 0 && !contains(front, nfront, m) && contains(moves, n, m)) front[nfront++] = m;
    }
    if (nfront) {
        int k = n;
        /* move the others back, keeping their order, then put the front in */
        for (int i = n - 1; i >= 0; i--)
            if (!contains(front, nfront, moves[i])) moves[--k] = moves[i];
        for (int i = 0; i < nfront; i++) moves[i] = front[i];
    }
    return n;
}

static void reward(Search *s, core_move move, int depth, int ply) {
    core_move *killers = s->killers[ply];
    if (killers[0] != move) {
        killers[1] = killers[0];
        killers[0] = move;
    }
    history_add(&s->history, move, (int64_t)depth * depth);
}

static int quiesce(Search *s, int alpha, int beta, int ply, int qply) {
    CorePos *pos = &s->pos;
    if (!s->quiescence || qply >= QUIESCENCE_PLIES || ply >= MAX_PLY + QUIESCENCE_PLIES)
        return core_evaluate(pos, &s->eval);
    core_move *moves = s->moves[ply];
    int n, best;
    if (core_is_quiet(pos, &s->eval)) {
        int stand = core_evaluate(pos, &s->eval);
        if (stand >= beta) return stand;
        if (stand > alpha) alpha = stand;
        n = core_noisy_moves(pos, &s->eval, moves);
        best = stand;
    } else {
        n = core_search_moves(pos, &s->eval, moves);
        n = core_order_moves(pos, &s->eval, moves, n);
        best = -INF;
        if (!n) return core_evaluate(pos, &s->eval);
    }
    if (!n) return best;
    int me = core_to_move(pos);
    for (int i = 0; i < n; i++) {
        core_push(pos, moves[i]);
        count_node(s);
        if (s->aborted) {
            core_pop(pos);
            return 0;
        }
        if (ply + 1 > s->seldepth) s->seldepth = ply + 1;
        int value;
        if (core_is_terminal(pos))
            value = terminal_score(pos, me, ply + 1);
        else if (core_to_move(pos) == me)
            value = quiesce(s, alpha, beta, ply + 1, qply + 1);
        else
            value = -quiesce(s, -beta, -alpha, ply + 1, qply + 1);
        core_pop(pos);
        if (s->aborted) return 0;
        if (value > best) {
            best = value;
            if (value > alpha) {
                alpha = value;
                if (value >= beta) break;
            }
        }
    }
    return best;
}

static int negamax(Search *s, int depth, int alpha, int beta, int ply);

/* Searcher._child: the value for ``me`` of the position just pushed. */
static int child(Search *s, int me, int depth, int alpha, int beta, int ply) {
    CorePos *pos = &s->pos;
    if (core_is_terminal(pos)) {
        count_node(s);
        s->pv_len[ply] = 0;
        return terminal_score(pos, me, ply);
    }
    if (core_to_move(pos) == me) return negamax(s, depth, alpha, beta, ply);
    return -negamax(s, depth, -beta, -alpha, ply);
}

static inline void set_pv(Search *s, int ply, core_move move) {
    s->pv[ply][0] = move;
    int len = s->pv_len[ply + 1];
    if (len > PLY_SLOTS - 1) len = PLY_SLOTS - 1;
    memcpy(&s->pv[ply][1], s->pv[ply + 1], (size_t)len * sizeof(core_move));
    s->pv_len[ply] = len + 1;
}

static int negamax(Search *s, int depth, int alpha, int beta, int ply) {
    count_node(s);
    if (s->aborted) return 0;
    s->pv_len[ply] = 0;
    if (ply > s->seldepth) s->seldepth = ply;
    if (depth <= 0 || ply >= MAX_PLY) return quiesce(s, alpha, beta, ply, 0);

    CorePos *pos = &s->pos;
    uint64_t key = core_key(pos);
    int alpha_start = alpha;
    core_move tt_move = -1;
    TTEntry *entry = tt_probe(&s->table, key);
    if (entry) {
        tt_move = entry->move;
        if (entry->depth >= depth) {
            int score = from_table(entry->score, ply);
            int bound = entry->bound;
            if (bound == EXACT || (bound == LOWER && score >= beta) ||
                (bound == UPPER && score <= alpha))
                return score;
        }
    }
    core_move *moves = s->moves[ply];
    int n = ordered_moves(s, tt_move, ply, moves);
    if (!n) return core_evaluate(pos, &s->eval);
    int me = core_to_move(pos);
    int best = -INF;
    core_move best_move = -1;
    int reduce_from = s->reductions && depth >= REDUCE_DEPTH ? REDUCE_AFTER : n;
    for (int i = 0; i < n; i++) {
        core_move move = moves[i];
        core_push(pos, move);
        int value = 0;
        if (i == 0) {
            value = child(s, me, depth - 1, alpha, beta, ply + 1);
        } else {
            int reduced = i >= reduce_from;
            if (reduced) value = child(s, me, depth - 2, alpha, alpha + 1, ply + 1);
            if (!reduced || (!s->aborted && value > alpha)) {
                value = child(s, me, depth - 1, alpha, alpha + 1, ply + 1);
                if (!s->aborted && alpha < value && value < beta)
                    value = child(s, me, depth - 1, alpha, beta, ply + 1);
            }
        }
        core_pop(pos);
        if (s->aborted) return 0;
        if (value > best) {
            best = value;
            best_move = move;
            if (value > alpha) {
                alpha = value;
                set_pv(s, ply, move);
                if (value >= beta) {
                    reward(s, move, depth, ply);
                    break;
                }
            }
        }
    }
    int bound = best <= alpha_start ? UPPER : best >= beta ? LOWER : EXACT;
    tt_store(&s->table, key, depth, bound, to_table(best, ply), best_move);
    return best;
}

/* Searcher.root_scores[move] = (depth, value, bound) */
static void note_root_score(Search *s, core_move move, int depth, int value, int bound) {
    int i = 0;
    while (i < s->n_scores && s->score_moves[i] != move) i++;
    if (i == s->n_scores) {
        if (s->n_scores == CORE_MAX_MOVES) return; /* no more root moves than that */
        s->score_moves[s->n_scores++] = move;
    }
    s->score_depth[i] = depth;
    s->score_value[i] = value;
    s->score_bound[i] = bound;
}

/* Searcher._root: one iteration over the root moves; ``best`` takes a move proven better than
 * the previous iteration's even when the iteration is cut short. */
static int root(Search *s, int depth, int alpha, int beta, const core_move *root_moves, int n,
                Progress *best, int store, core_move *best_move_out) {
    CorePos *pos = &s->pos;
    int me = core_to_move(pos);
    int alpha_start = alpha;
    int best_value = -INF;
    core_move best_move = root_moves[0];
    for (int i = 0; i < n; i++) {
        core_move move = root_moves[i];
        core_push(pos, move);
        int value, low = alpha, high = beta;
        if (i == 0) {
            value = child(s, me, depth - 1, alpha, beta, 1);
        } else {
            high = alpha + 1;
            value = child(s, me, depth - 1, alpha, alpha + 1, 1);
            if (!s->aborted && alpha < value && value < beta) {
                high = beta;
                value = child(s, me, depth - 1, alpha, beta, 1);
            }
        }
        core_pop(pos);
        if (s->aborted) break;
        note_root_score(s, move, depth, value, value <= low ? UPPER : value >= high ? LOWER : EXACT);
        if (value > best_value) {
            best_value = value;
            best_move = move;
            set_pv(s, 0, move);
            if (i > 0 && value > alpha) {
                best->move = move;
                best->value = value;
                best->pv_len = s->pv_len[0];
                memcpy(best->pv, s->pv[0], (size_t)s->pv_len[0] * sizeof(core_move));
            }
            if (value > alpha) {
                alpha = value;
                if (value >= beta) break;
            }
        }
    }
    if (s->aborted) return 0;
    int bound = best_value <= alpha_start ? UPPER : best_value >= beta ? LOWER : EXACT;
    if (store) tt_store(&s->table, core_key(pos), depth, bound, best_value, best_move);
    *best_move_out = best_move;
    return best_value;
}

/* Searcher._aspiration: a window around the previous value, widened on a fail. */
static int aspiration(Search *s, int depth, int guess, const core_move *root_moves, int n,
                      Progress *best, int store, core_move *move) {
    if (depth < 3 || guess >= PROVEN || guess <= -PROVEN)
        return root(s, depth, -INF, INF, root_moves, n, best, store, move);
    long long delta = s->aspiration;
    long long alpha = guess - delta, beta = guess + delta;
    for (;;) {
        /* a window wider than [-INF, INF] searches as [-INF, INF] (every value lies inside),
         * and a wide aspiration would not fit an int */
        int value = root(s, depth, (int)(alpha < -INF ? -INF : alpha),
                         (int)(beta > INF ? INF : beta), root_moves, n, best, store, move);
        if (s->aborted) return 0;
        /* a search's values lie strictly within (-INF, INF), so a full window never fails; a
         * table damaged by the caller may give any int, which must not fail it for ever */
        if (value <= alpha && alpha > -INF) {
            alpha = alpha - delta * 4 > -INF ? alpha - delta * 4 : -INF;
        } else if (value >= beta && beta < INF) {
            beta = beta + delta * 4 < INF ? beta + delta * 4 : INF;
        } else {
            return value;
        }
        delta *= 4;
        if (delta > 4 * MAX_EVAL) {
            alpha = -INF;
            beta = INF;
        }
    }
}

static PyObject *moves_tuple(const core_move *moves, int n) {
    PyObject *out = PyTuple_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *m = PyLong_FromLong(moves[i]);
        if (!m) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, m);
    }
    return out;
}

/* on_info after each iteration, once per line: report(depth, seldepth, value, nodes, pv,
 * hashfull, elapsed, line), elapsed in seconds on the clock since the start, line the line's
 * index from 1 (0 when the search reports one line). */
static void report_iteration(Search *s, PyObject *report, const Progress *best, int line) {
    double now = read_clock(s);
    if (s->failed) return;
    PyObject *pv = moves_tuple(best->pv, best->pv_len);
    if (!pv) {
        s->failed = s->aborted = 1;
        return;
    }
    int seldepth = s->seldepth > best->depth ? s->seldepth : best->depth;
    PyObject *r = PyObject_CallFunction(report, "iiiLNidi", best->depth, seldepth, best->value,
                                        s->nodes, pv, tt_hashfull(&s->table), now - s->started,
                                        line);
    if (!r) {
        s->failed = s->aborted = 1;
        return;
    }
    Py_DECREF(r);
}

static void take_line(Progress *line, Search *s, int depth, int value, core_move move) {
    line->depth = depth;
    line->value = value;
    line->move = move;
    line->pv_len = s->pv_len[0];
    memcpy(line->pv, s->pv[0], (size_t)s->pv_len[0] * sizeof(core_move));
}

/* Searcher._iteration: a line per guess, each the best of the root moves the lines before it
 * did not take; found[0] is best, updated as soon as it is known. rest: scratch for n moves. */
static void lines_of(Search *s, int depth, const int *guesses, int lines, core_move *root_moves,
                     int n, Progress *best, Progress *found, core_move *rest) {
    core_move move = root_moves[0];
    int value = aspiration(s, depth, guesses[0], root_moves, n, best, !s->has_allowed, &move);
    if (s->aborted) return;
    take_line(best, s, depth, value, move);
    int left = 0;
    for (int i = 0; i < n; i++)
        if (root_moves[i] != move) rest[left++] = root_moves[i];
    for (int line = 1; line < lines; line++) {
        Progress *scratch = &found[line];
        scratch->depth = scratch->value = scratch->pv_len = 0;
        scratch->move = -1;
        move = rest[0];
        value = aspiration(s, depth, guesses[line], rest, left, scratch, 0, &move);
        if (s->aborted) return;
        take_line(scratch, s, depth, value, move);
        int kept = 0;
        for (int i = 0; i < left; i++)
            if (rest[i] != move) rest[kept++] = rest[i];
        left = kept;
    }
}

/* the lines' moves first, in their order, then the others as they were */
static void lines_first(core_move *root_moves, int n, const Progress *best, const Progress *found,
                        int lines, core_move *scratch) {
    int k = 0;
    scratch[k++] = best->move;
    for (int line = 1; line < lines; line++) scratch[k++] = found[line].move;
    for (int i = 0; i < n; i++) {
        int chosen = 0;
        for (int j = 0; j < lines && !chosen; j++) chosen = scratch[j] == root_moves[i];
        if (!chosen) scratch[k++] = root_moves[i];
    }
    memcpy(root_moves, scratch, (size_t)n * sizeof(core_move));
}

/* Searcher.run: iterative deepening until a limit; found: room for s->lines lines. */
static void iterate(Search *s, PyObject *report, core_move *root_moves, int n, Progress *best,
                    Progress *found) {
    int guesses[CORE_MAX_MOVES] = {0};
    core_move scratch[CORE_MAX_MOVES];
    int lines = s->lines;
    long max_depth = s->has_depth ? s->max_depth : MAX_PLY;
    for (int depth = 1; depth <= max_depth; depth++) {
        lines_of(s, depth, guesses, lines, root_moves, n, best, found, scratch);
        if (s->aborted) return;
        for (int line = 0; line < lines; line++) {
            report_iteration(s, report, line ? &found[line] : best, lines > 1 ? line + 1 : 0);
            if (s->aborted) return;
        }
        lines_first(root_moves, n, best, found, lines, scratch);
        guesses[0] = best->value;
        for (int line = 1; line < lines; line++) guesses[line] = found[line].value;
        int value = best->value;
        int magnitude = value < 0 ? -value : value;
        if (magnitude >= PROVEN && WIN - magnitude <= depth) return;
        if (s->has_target) {
            double now = read_clock(s);
            if (s->failed) return;
            if (now - s->started >= s->target * 0.6) return;
        }
    }
}

/* -- the module's functions ------------------------------------------------------------------ */

static Search *search_new(void) {
    Search *s = PyMem_Calloc(1, sizeof(Search));
    if (!s) PyErr_NoMemory();
    return s;
}

/* The position and the evaluator (NULL for the rules alone: perft, playouts) into a fresh
 * Search; NULL with an exception. */
static Search *search_load(PyObject *state, PyObject *evaluator) {
    Search *s = search_new();
    if (!s) return NULL;
    if (core_load(&s->pos, state) < 0 ||
        (evaluator && core_eval_load(&s->eval, evaluator) < 0)) {
        PyMem_Free(s);
        return NULL;
    }
    return s;
}

/* The memory (the table or the history): writable and contiguous. */
#define MEMORY_FLAGS (PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)

static int is_power_of_two(Py_ssize_t n) { return n > 0 && (n & (n - 1)) == 0; }

static int attach_memory(Search *s, Py_buffer *table, Py_buffer *history, int age,
                         PyObject *generation_obj) {
    /* a view into the middle of a buffer may start anywhere: the entries are read in place */
    if ((uintptr_t)table->buf % _Alignof(TTEntry) ||
        (uintptr_t)history->buf % _Alignof(HistorySlot)) {
        PyErr_SetString(PyExc_ValueError, "table, history: memory aligned to 8 bytes was expected");
        return -1;
    }
    Py_ssize_t slots = table->len / TT_ENTRY_BYTES;
    if (table->len % TT_ENTRY_BYTES || !is_power_of_two(slots)) {
        PyErr_Format(PyExc_ValueError, "table: a power of two of %d-byte slots was expected",
                     TT_ENTRY_BYTES);
        return -1;
    }
    Py_ssize_t hslots = (history->len - HISTORY_HEADER_BYTES) / HISTORY_SLOT_BYTES;
    if (history->len < HISTORY_HEADER_BYTES ||
        (history->len - HISTORY_HEADER_BYTES) % HISTORY_SLOT_BYTES || !is_power_of_two(hslots)) {
        PyErr_SetString(PyExc_ValueError,
                        "history: a header and a power of two of slots was expected");
        return -1;
    }
    if (age < 0 || age > 255) {
        PyErr_SetString(PyExc_ValueError, "age: 0 to 255 was expected");
        return -1;
    }
    long generation;
    if (core_read_int(generation_obj, 1, UINT32_MAX, "generation", &generation) < 0) return -1;
    s->table.slots = (TTEntry *)table->buf;
    s->table.size = (size_t)slots;
    s->table.mask = (uint64_t)slots - 1;
    s->table.age = (uint8_t)age;
    s->table.generation = (uint32_t)generation;
    s->history.header = (HistoryHeader *)history->buf;
    s->history.slots = (HistorySlot *)((char *)history->buf + HISTORY_HEADER_BYTES);
    s->history.mask = (uint64_t)hslots - 1;
    return 0;
}

/* An optional limit: None, or a number read into *out (*has set). */
static int optional_double(PyObject *obj, const char *what, int *has, double *out) {
    *has = obj != Py_None;
    if (!*has) return 0;
    *out = PyFloat_AsDouble(obj);
    if (*out == -1 && PyErr_Occurred()) return -1;
    if (!(*out >= 0)) {
        PyErr_Format(PyExc_ValueError, "%s: a non-negative number was expected", what);
        return -1;
    }
    return 0;
}

static int optional_count(PyObject *obj, const char *what, long long high, int *has,
                          long long *out) {
    *has = obj != Py_None;
    if (!*has) return 0;
    long value;
    if (core_read_int(obj, 0, high < LONG_MAX ? (long)high : LONG_MAX, what, &value) < 0)
        return -1;
    *out = value;
    return 0;
}

/* The result tuple (see py_search); elapsed is read on the clock unless the move was forced. */
static PyObject *search_result(Search *s, const Progress *best, int forced) {
    double elapsed = 0;
    if (!forced) {
        double now = read_clock(s);
        if (s->failed) return NULL;
        elapsed = now - s->started;
    }
    PyObject *pv = moves_tuple(best->pv, best->pv_len);
    if (!pv) return NULL;
    PyObject *scores = PyTuple_New(s->n_scores);
    if (!scores) {
        Py_DECREF(pv);
        return NULL;
    }
    for (int i = 0; i < s->n_scores; i++) {
        PyObject *one = Py_BuildValue("iiii", s->score_moves[i], s->score_depth[i],
                                      s->score_value[i], s->score_bound[i]);
        if (!one) {
            Py_DECREF(pv);
            Py_DECREF(scores);
            return NULL;
        }
        PyTuple_SET_ITEM(scores, i, one);
    }
    int seldepth = s->seldepth > best->depth ? s->seldepth : best->depth;
    return Py_BuildValue("iiiiLNiOOdN", best->move, best->value, best->depth, seldepth, s->nodes,
                         pv, forced ? 0 : tt_hashfull(&s->table), s->stopped ? Py_True : Py_False,
                         forced ? Py_True : Py_False, elapsed, scores);
}

/* Searcher._root_moves: the legal moves, or those of them allowed, in the generator's order;
 * -1 with an exception when an allowed move is not legal. */
static int allowed_root_moves(Search *s, core_move *root_moves) {
    int n = core_search_moves(&s->pos, &s->eval, root_moves);
    if (!s->has_allowed) return n;
    for (int j = 0; j < s->n_allowed; j++) {
        if (!contains(root_moves, n, s->allowed[j])) {
            PyErr_Format(PyExc_ValueError, "root_moves: move %ld is not legal here",
                         (long)s->allowed[j]);
            return -1;
        }
    }
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (contains(s->allowed, s->n_allowed, root_moves[i])) root_moves[kept++] = root_moves[i];
    return kept;
}

/* The driver of run(): None for no move; a forced move without search; else iterate. */
static PyObject *run_search(Search *s, PyObject *report) {
    core_move *root_moves = s->moves[PLY_SLOTS - 1];
    int n = allowed_root_moves(s, root_moves);
    if (n < 0) return NULL;
    if (!n) Py_RETURN_NONE;
    if (s->lines > n) s->lines = n;
    Progress *best = PyMem_Calloc((size_t)s->lines, sizeof(Progress));
    if (!best) return PyErr_NoMemory();
    best->move = root_moves[0];
    best->pv[0] = root_moves[0];
    best->pv_len = 1;
    PyObject *result = NULL;
    if (n == 1 && !s->has_allowed && !s->search_forced) {
        result = search_result(s, best, 1);
    } else {
        /* the reference reads its clock twice at the start: last look, then the start */
        s->last_check = read_clock(s);
        if (!s->failed) s->started = read_clock(s);
        s->check_every = s->has_deadline ? 8 : CHECK_EVERY;
        s->next_check = s->check_every;
        for (int ply = 0; ply < PLY_SLOTS; ply++) s->killers[ply][0] = s->killers[ply][1] = -1;
        /* the lines after the first live in best[1..lines-1] */
        if (!s->failed) iterate(s, report, root_moves, n, best, best);
        if (!s->failed) result = search_result(s, best, 0);
    }
    PyMem_Free(best);
    return result;
}

/* root_moves: None, or a sequence of distinct moves into s->allowed. */
static int read_allowed(Search *s, PyObject *obj) {
    s->has_allowed = obj != Py_None;
    if (!s->has_allowed) return 0;
    PyObject *fast = PySequence_Fast(obj, "root_moves: a sequence of ints was expected");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int ok = 0;
    if (n > CORE_MAX_MOVES) {
        PyErr_Format(PyExc_ValueError, "root_moves: at most %d moves were expected",
                     CORE_MAX_MOVES);
        ok = -1;
    }
    s->n_allowed = 0;
    for (Py_ssize_t i = 0; ok == 0 && i < n; i++) {
        long move;
        if (core_read_int(PySequence_Fast_GET_ITEM(fast, i), 0, INT32_MAX, "move", &move) < 0) {
            ok = -1;
        } else if (!contains(s->allowed, s->n_allowed, (core_move)move)) {
            s->allowed[s->n_allowed++] = (core_move)move;
        }
    }
    Py_DECREF(fast);
    return ok;
}

static PyObject *py_search(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"state",    "evaluator",  "table",      "history", "age",
                            "generation", "depth",    "nodes",      "deadline",   "target",
                            "search_forced", "clock",    "stop",       "report",     "quiescence",
                            "aspiration", "reductions", "lines",  "root_moves", NULL};
    PyObject *state, *evaluator, *table_obj, *history_obj, *depth, *nodes, *deadline, *target;
    PyObject *clock, *stop, *report, *generation, *allowed = Py_None;
    int age, search_forced, quiescence, aspiration_width, reductions = 0, lines = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOiOOOOOpOOOpi|piO:search", names, &state,
                                     &evaluator, &table_obj, &history_obj, &age, &generation,
                                     &depth, &nodes, &deadline, &target, &search_forced, &clock, &stop,
                                     &report, &quiescence, &aspiration_width, &reductions, &lines,
                                     &allowed))
        return NULL;
    if (!PyCallable_Check(clock) || !PyCallable_Check(stop) || !PyCallable_Check(report)) {
        PyErr_SetString(PyExc_TypeError, "clock, stop and report must be callables");
        return NULL;
    }
    if (aspiration_width < 1) {
        PyErr_SetString(PyExc_ValueError, "aspiration: a positive width was expected");
        return NULL;
    }
    if (lines < 1) {
        PyErr_SetString(PyExc_ValueError, "lines: a positive count was expected");
        return NULL;
    }
    Search *s = search_load(state, evaluator);
    if (!s) return NULL;
    s->lines = lines;
    if (read_allowed(s, allowed) < 0) {
        PyMem_Free(s);
        return NULL;
    }
    PyObject *result = NULL;
    Py_buffer table = {0}, history = {0};
    int have_table = 0, have_history = 0;
    long long max_depth = 0;
    if (PyObject_GetBuffer(table_obj, &table, MEMORY_FLAGS) < 0) goto done;
    have_table = 1;
    if (PyObject_GetBuffer(history_obj, &history, MEMORY_FLAGS) < 0) goto done;
    have_history = 1;
    if (attach_memory(s, &table, &history, age, generation) < 0) goto done;
    /* any depth, as the reference takes (a protocol's go depth may be large): past MAX_PLY
     * each iteration searches the tree again to MAX_PLY; the table holds 16-bit depths, so the
     * iterations stop at the 32767th */
    if (optional_count(depth, "depth", LLONG_MAX, &s->has_depth, &max_depth) < 0) goto done;
    s->max_depth = (long)(max_depth < INT16_MAX ? max_depth : INT16_MAX);
    if (optional_count(nodes, "nodes", LLONG_MAX, &s->has_nodes, &s->max_nodes) < 0) goto done;
    if (optional_double(deadline, "deadline", &s->has_deadline, &s->deadline) < 0) goto done;
    if (optional_double(target, "target", &s->has_target, &s->target) < 0) goto done;
    s->search_forced = search_forced;
    s->clock = clock;
    s->stop = stop;
    s->quiescence = quiescence;
    s->aspiration = aspiration_width;
    s->reductions = reductions;
    core_eval_reset(&s->eval);
    result = run_search(s, report);
done:
    if (have_history) PyBuffer_Release(&history);
    if (have_table) PyBuffer_Release(&table);
    PyMem_Free(s);
    return result;
}

/* -- what the tests compare with the reference --------------------------------------------- */

static PyObject *probe(Search *s) {
    CorePos *pos = &s->pos;
    core_move *legal = s->moves[0], *searched = s->moves[1], *ordered = s->moves[2];
    core_move *noisy = s->moves[3];
    int terminal = core_is_terminal(pos);
    int nl = core_legal_moves(pos, legal);
    int ns = terminal ? 0 : core_search_moves(pos, &s->eval, searched);
    memcpy(ordered, searched, (size_t)ns * sizeof(core_move));
    int no = terminal ? 0 : core_order_moves(pos, &s->eval, ordered, ns);
    PyObject *items[10] = {NULL};
    items[0] = PyLong_FromUnsignedLongLong(core_key(pos));
    items[1] = PyLong_FromLong(terminal ? -1 : core_to_move(pos));
    items[2] = PyBool_FromLong(terminal);
    items[3] = terminal ? PyLong_FromLong(core_winner(pos)) : Py_NewRef(Py_None);
    items[4] = moves_tuple(legal, nl);
    items[5] = moves_tuple(searched, ns);
    items[6] = moves_tuple(ordered, no);
    if (terminal) {
        items[7] = Py_NewRef(Py_None);
        items[8] = Py_NewRef(Py_None);
        items[9] = Py_NewRef(Py_None);
    } else {
        items[7] = PyLong_FromLong(core_evaluate(pos, &s->eval));
        items[8] = PyBool_FromLong(core_is_quiet(pos, &s->eval));
        items[9] = moves_tuple(noisy, core_noisy_moves(pos, &s->eval, noisy));
    }
    PyObject *out = PyTuple_New(10);
    for (int i = 0; i < 10; i++) {
        if (!items[i] || !out) {
            for (int j = 0; j < 10; j++) Py_XDECREF(items[j]);
            Py_XDECREF(out);
            return NULL;
        }
    }
    for (int i = 0; i < 10; i++) PyTuple_SET_ITEM(out, i, items[i]);
    return out;
}

static PyObject *py_inspect(PyObject *self, PyObject *args) {
    PyObject *state, *evaluator, *moves;
    if (!PyArg_ParseTuple(args, "OOO:inspect", &state, &evaluator, &moves)) return NULL;
    PyObject *fast = PySequence_Fast(moves, "moves: a sequence of ints was expected");
    if (!fast) return NULL;
    /* a tuple: loading the state and the evaluator may run Python code (a property), which
     * must not change the moves under the loop below */
    if (PyList_Check(fast)) Py_SETREF(fast, PyList_AsTuple(fast));
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > CORE_MAX_DEPTH - 8) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "moves: too many");
        return NULL;
    }
    Search *s = search_load(state, evaluator);
    if (!s) {
        Py_DECREF(fast);
        return NULL;
    }
    core_eval_reset(&s->eval);
    PyObject *out = PyList_New(0);
    uint64_t start_key = core_key(&s->pos);
    core_move *start_legal = s->moves[PLY_SLOTS - 1];
    int start_n = core_legal_moves(&s->pos, start_legal);
    Py_ssize_t pushed = 0;
    for (Py_ssize_t i = 0; out && i <= n; i++) {
        PyObject *row = probe(s);
        if (!row || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(row);
        if (i == n) break;
        long move;
        if (core_read_int(PySequence_Fast_GET_ITEM(fast, i), 0, INT32_MAX, "move", &move) < 0) {
            Py_CLEAR(out);
            break;
        }
        core_move *legal = s->moves[4];
        int nl = core_legal_moves(&s->pos, legal);
        if (!contains(legal, nl, (core_move)move)) {
            PyErr_Format(PyExc_ValueError, "move %ld is not legal after %zd moves", move, i);
            Py_CLEAR(out);
            break;
        }
        core_push(&s->pos, (core_move)move);
        pushed++;
    }
    while (pushed--) core_pop(&s->pos);
    if (out) {
        core_move *legal = s->moves[4];
        int nl = core_legal_moves(&s->pos, legal);
        if (core_key(&s->pos) != start_key || nl != start_n ||
            memcmp(legal, start_legal, (size_t)nl * sizeof(core_move))) {
            PyErr_SetString(PyExc_RuntimeError, "popping every move did not restore the start");
            Py_CLEAR(out);
        }
    }
    PyMem_Free(s);
    Py_DECREF(fast);
    return out;
}

static long long perft(Search *s, int depth) {
    if (depth <= 0) return 1;
    core_move *moves = s->moves[depth];
    int n = core_legal_moves(&s->pos, moves);
    if (depth == 1) return n;
    long long total = 0;
    for (int i = 0; i < n; i++) {
        core_push(&s->pos, moves[i]);
        total += perft(s, depth - 1);
        core_pop(&s->pos);
    }
    return total;
}

static PyObject *py_perft(PyObject *self, PyObject *args) {
    PyObject *state;
    int depth;
    if (!PyArg_ParseTuple(args, "Oi:perft", &state, &depth)) return NULL;
    if (depth < 0 || depth >= PLY_SLOTS) {
        PyErr_Format(PyExc_ValueError, "depth: 0 to %d was expected", PLY_SLOTS - 1);
        return NULL;
    }
    Search *s = search_load(state, NULL);
    if (!s) return NULL;
    long long count = perft(s, depth);
    PyMem_Free(s);
    return PyLong_FromLongLong(count);
}

static inline uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static PyObject *py_playouts(PyObject *self, PyObject *args) {
    PyObject *state, *max_turns_obj = Py_None;
    long count;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OlK|O:playouts", &state, &count, &seed, &max_turns_obj))
        return NULL;
    long max_turns = -1;
    if (max_turns_obj != Py_None &&
        core_read_int(max_turns_obj, 0, LONG_MAX, "max_turns", &max_turns) < 0)
        return NULL;
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "count: a non-negative number was expected");
        return NULL;
    }
    Search *s = search_load(state, NULL);
    if (!s) return NULL;
    uint64_t rng = seed;
    long long finished = 0, plies = 0;
    core_move *moves = s->moves[0];
    for (long g = 0; g < count; g++) {
        int depth = 0;
        long turns = 0;
        int mover = core_is_terminal(&s->pos) ? -1 : core_to_move(&s->pos);
        while (!core_is_terminal(&s->pos) && depth < CORE_MAX_DEPTH - 8) {
            if (max_turns >= 0 && turns >= max_turns) break;
            int n = core_legal_moves(&s->pos, moves);
            if (!n) break; /* no move, yet not over (a Yoxii placer whose stock was emptied
                            * by hand): this playout stops there, unfinished */
            core_push(&s->pos, moves[splitmix64(&rng) % (uint64_t)n]);
            depth++;
            if (max_turns >= 0 && !core_is_terminal(&s->pos) && core_to_move(&s->pos) != mover) {
                mover = core_to_move(&s->pos);
                turns++;
            }
        }
        finished += core_is_terminal(&s->pos);
        plies += depth;
        while (depth--) core_pop(&s->pos);
    }
    PyMem_Free(s);
    return Py_BuildValue("LL", finished, plies);
}

static PyMethodDef core_methods[] = {
    {"search", (PyCFunction)(void (*)(void))py_search, METH_VARARGS | METH_KEYWORDS,
     "search(state, evaluator, table, history, age, generation, depth, nodes, deadline, target, "
     "search_forced, "
     "clock, stop, report, quiescence, aspiration) -> (move, value, depth, seldepth, nodes, pv, "
     "hashfull, stopped, forced, elapsed) or None: one search of bots.search.Searcher.run "
     "(bots.compiled wraps it)."},
    {"inspect", py_inspect, METH_VARARGS,
     "inspect(state, evaluator, moves) -> list of (key, to_move, terminal, winner, legal, "
     "search, ordered, value, quiet, noisy) at the start and after each move."},
    {"perft", py_perft, METH_VARARGS, "perft(state, depth) -> the leaves at depth."},
    {"playouts", py_playouts, METH_VARARGS,
     "playouts(state, count, seed, max_turns=None) -> (finished, plies): random games."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, CORE_MODULE_NAME,
    "The compiled search core of " CORE_GAME_NAME " (native/core/search.h).", -1, core_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC CORE_INIT_FUNC(void) {
    PyObject *module = PyModule_Create(&core_module);
    if (!module) return NULL;
    if (PyModule_AddIntConstant(module, "TT_ENTRY_BYTES", TT_ENTRY_BYTES) < 0 ||
        PyModule_AddIntConstant(module, "HISTORY_SLOT_BYTES", HISTORY_SLOT_BYTES) < 0 ||
        PyModule_AddIntConstant(module, "HISTORY_HEADER_BYTES", HISTORY_HEADER_BYTES) < 0 ||
        PyModule_AddIntConstant(module, "WIN", WIN) < 0 ||
        PyModule_AddIntConstant(module, "PROVEN", PROVEN) < 0 ||
        PyModule_AddIntConstant(module, "MAX_EVAL", MAX_EVAL) < 0 ||
        PyModule_AddIntConstant(module, "MAX_PLY", MAX_PLY) < 0 ||
        PyModule_AddIntConstant(module, "QUIESCENCE_PLIES", QUIESCENCE_PLIES) < 0 ||
        PyModule_AddIntConstant(module, "CHECK_EVERY", CHECK_EVERY) < 0 ||
        PyModule_AddIntConstant(module, "MAX_MOVES", CORE_MAX_MOVES) < 0 ||
        PyModule_AddIntConstant(module, "MAX_DEPTH", CORE_MAX_DEPTH) < 0 ||
        core_init(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

#endif /* ENGINESRV_CORE_SEARCH_H */

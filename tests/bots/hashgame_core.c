/* tests/bots/hashgame.py in C under the compiled search (native/core/search.h): built by
 * tests/bots/test_compiled.py, which compares its searches with the reference's. */
#define CORE_MODULE_NAME "hashgame_core"
#define CORE_INIT_FUNC PyInit_hashgame_core
#define CORE_GAME_NAME "hashgame"
#define CORE_MAX_MOVES 32

#include "core/common.h"

#define SIDE_KEY 0x5DEECE66D1234567ull

typedef struct {
    uint64_t h;
    int side;
    int plies;
    int length;
    int width;
    long ending;
    int top;
    struct {
        uint64_t h;
        int side;
    } undo[CORE_MAX_DEPTH];
} CorePos;

typedef struct {
    long spread;
} CoreEval;

static inline uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint64_t zobrist(core_move m) { return mix((uint64_t)m * 0x1000193ull + 77); }

static int core_init(PyObject *module) { return 0; }

static int core_load(CorePos *pos, PyObject *state) {
    long side = 0, plies = 0, length = 0, width = 0, ending = 0;
    u128 h;
    PyObject *game = PyObject_GetAttrString(state, "game");
    if (!game) return -1;
    int bad = core_attr_int(game, "length", 1, 500, &length) < 0 ||
              core_attr_int(game, "width", 1, 24, &width) < 0 ||
              core_attr_int(game, "ending", 1, 1L << 40, &ending) < 0;
    Py_DECREF(game);
    if (bad || core_attr_bits(state, "h", 64, &h) < 0 ||
        core_attr_int(state, "side", 0, 1, &side) < 0 ||
        core_attr_int(state, "plies", 0, 500, &plies) < 0)
        return -1;
    pos->h = (uint64_t)h;
    pos->side = (int)side;
    pos->plies = (int)plies;
    pos->length = (int)length;
    pos->width = (int)width;
    pos->ending = ending;
    pos->top = 0;
    return 0;
}

static int core_eval_load(CoreEval *ev, PyObject *evaluator) {
    return core_attr_int(evaluator, "spread", 1, 100000, &ev->spread);
}

static void core_eval_reset(CoreEval *ev) { (void)ev; }

static int core_is_terminal(const CorePos *pos) {
    return pos->plies >= pos->length || (pos->plies >= 2 && mix(pos->h ^ 0xE0D) % (uint64_t)pos->ending == 0);
}

static int core_to_move(const CorePos *pos) { return pos->side; }

static int core_winner(const CorePos *pos) {
    uint64_t r = mix(pos->h ^ 0x717) % 3;
    return r == 0 ? -1 : r == 1 ? 0 : 1;
}

static uint64_t core_key(const CorePos *pos) { return pos->h ^ (pos->side ? SIDE_KEY : 0); }

static int core_legal_moves(CorePos *pos, core_move *out) {
    if (core_is_terminal(pos)) return 0;
    int count = 1 + (int)(mix(pos->h ^ 0x3) % (uint64_t)pos->width), n = 0;
    for (int i = 0; i < count; i++) {
        core_move m = (core_move)(mix(pos->h + (uint64_t)i) % 24);
        int seen = 0;
        for (int j = 0; j < n; j++) seen |= out[j] == m;
        if (!seen) out[n++] = m;
    }
    return n;
}

static int core_search_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    return core_legal_moves(pos, out);
}

static int core_order_moves(CorePos *pos, CoreEval *ev, core_move *moves, int n) {
    uint64_t keys[CORE_MAX_MOVES];
    for (int i = 0; i < n; i++) keys[i] = mix(pos->h ^ (uint64_t)(moves[i] + 1000)) % 7;
    for (int i = 1; i < n; i++) { /* stable insertion sort by key */
        core_move m = moves[i];
        uint64_t k = keys[i];
        int j = i - 1;
        while (j >= 0 && keys[j] > k) {
            moves[j + 1] = moves[j];
            keys[j + 1] = keys[j];
            j--;
        }
        moves[j + 1] = m;
        keys[j + 1] = k;
    }
    return n;
}

static void core_push(CorePos *pos, core_move move) {
    pos->undo[pos->top].h = pos->h;
    pos->undo[pos->top].side = pos->side;
    pos->top++;
    pos->h ^= zobrist(move);
    pos->plies++;
    if (mix(pos->h ^ 0xA6A) % 3) pos->side = 1 - pos->side;
}

static void core_pop(CorePos *pos) {
    pos->top--;
    pos->h = pos->undo[pos->top].h;
    pos->side = pos->undo[pos->top].side;
    pos->plies--;
}

static int core_evaluate(CorePos *pos, CoreEval *ev) {
    long value = (long)(mix(pos->h ^ 0xE7A1) % (uint64_t)(2 * ev->spread + 1)) - ev->spread;
    return (int)(pos->side == 0 ? value : -value);
}

static int core_is_quiet(CorePos *pos, CoreEval *ev) { return mix(pos->h ^ 0x0B1E) % 5 != 0; }

static int core_noisy_moves(CorePos *pos, CoreEval *ev, core_move *out) {
    core_move legal[CORE_MAX_MOVES];
    int n = core_legal_moves(pos, legal), k = 0;
    for (int i = 0; i < n; i++)
        if (legal[i] % 3 == 0) out[k++] = legal[i];
    return k;
}

#include "core/search.h"

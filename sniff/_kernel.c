/*
 * The compiled playout kernel: `playout.py`'s reference playout transcribed to C.
 *
 * It plays the rest of one round from a packed `PlayoutState` with the built-in
 * policies (random, greedy) and the documented generator (`prng.py`), and must
 * make exactly the reference's moves: `tests/test_playout_kernel.py` holds it to
 * that. The layout mirrors `layout.py` (covered sides per tile, the Sniff and its
 * rule, stub tiles, the counted-ends sum kept incrementally); the counted-ends
 * contribution tables are not recomputed here but handed over by `playout.py` at
 * import (`configure`), straight from `layout.PLAIN_CONTRIB` and
 * `layout.SNIFF_CONTRIB`, so what a tile counts cannot drift from the engine.
 *
 * Move codes (as `playout.code_of`): kind | tile << 2 | slot << 7 | orient << 15,
 * kind 0 lead, 1 place, 2 draw, 3 pass; slot = board tile * 8 + side; orient 0
 * none, 1 cross, 2 inline.
 *
 * Every entry point checks its input in full (tiles exactly once, placements
 * legal, a round still in play), so no input can crash the process or loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NT 28
#define NSLOT (NT * 8)
#define FULL_SET ((1u << NT) - 1u)
#define MAX_SEATS 4
#define MAX_MOVES 128
#define MAX_ACTIONS 1024
#define MAX_RULES 8
#define MAX_VARIANTS 8

enum { K_LEAD = 0, K_PLACE = 1, K_DRAW = 2, K_PASS = 3 };
enum { S_LOW = 0, S_HIGH = 1, S_LINE_A = 2, S_LINE_B = 3, S_BRANCH_A = 4, S_BRANCH_B = 5 };
enum { END_DOMINO = 0, END_BLOCKED = 1, END_WON = 2 };
enum { P_RANDOM = 0, P_GREEDY = 1 };

#define LOW_BIT (1 << S_LOW)
#define HIGH_BIT (1 << S_HIGH)
#define LINE_A_BIT (1 << S_LINE_A)
#define LINE_B_BIT (1 << S_LINE_B)
#define LINES (LINE_A_BIT | LINE_B_BIT)
/* Bits of line_b and branch_b in each tile's byte of the open-slot mask: a mirror
 * is dropped from the targets while its twin (the bit just below) is open. */
#define MIRRORS 0x2828282828282828ull

#if defined(__GNUC__) || defined(__clang__)
#define CTZ32(x) __builtin_ctz(x)
#define CTZ64(x) __builtin_ctzll(x)
#else
static int CTZ32(uint32_t x) { int n = 0; while (!(x & 1u)) { x >>= 1; n++; } return n; }
static int CTZ64(uint64_t x) { int n = 0; while (!(x & 1u)) { x >>= 1; n++; } return n; }
#endif

/* -- the set and the tables -------------------------------------------------- */

static int LOWV[NT], HIGHV[NT], IS_DBL[NT], PIPS[NT];
static uint32_t MATCHING[7], DOUBLES;
static int8_t SLOT_VALUE[NSLOT];

static int16_t PLAIN[NT * 64];
static int16_t RULE_TABLE[MAX_RULES][NT * 64];
static uint8_t RULE_STUBS[MAX_RULES];

typedef struct {
    int nrules;
    int rule[2];   /* global rule index, in the variant's order (cross first) */
    int orient[2]; /* 1 cross, 2 inline */
} VariantSpec;

static VariantSpec VARIANTS[MAX_VARIANTS];
static int n_variants = 0;

static void init_set(void) {
    int i = 0;
    for (int a = 0; a < 7; a++)
        for (int b = a; b < 7; b++, i++) {
            LOWV[i] = a;
            HIGHV[i] = b;
            IS_DBL[i] = a == b;
            PIPS[i] = a + b;
        }
    DOUBLES = 0;
    for (int v = 0; v < 7; v++) MATCHING[v] = 0;
    for (int t = 0; t < NT; t++) {
        MATCHING[LOWV[t]] |= 1u << t;
        MATCHING[HIGHV[t]] |= 1u << t;
        if (IS_DBL[t]) DOUBLES |= 1u << t;
    }
    for (int s = 0; s < NSLOT; s++) {
        int t = s >> 3, side = s & 7, v = -1;
        if (side < 6) {
            if (IS_DBL[t])
                v = side >= S_LINE_A ? LOWV[t] : -1;
            else if (side == S_LOW)
                v = LOWV[t];
            else if (side == S_HIGH)
                v = HIGHV[t];
        }
        SLOT_VALUE[s] = (int8_t)v;
    }
}

/* -- the generator (prng.py, exactly) ------------------------------------------ */

typedef struct {
    uint64_t s[4];
} Rng;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static void rng_seed(Rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        r->s[i] = z ^ (z >> 31);
    }
}

static inline uint64_t rng_next(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* x * n as a 128-bit product (n < 2**32), without compiler extensions. */
static inline void mul64x32(uint64_t x, uint32_t n, uint64_t *high, uint64_t *low) {
    uint64_t lo = (x & 0xFFFFFFFFull) * n;
    uint64_t hi = (x >> 32) * n;
    *low = lo + (hi << 32);
    *high = (hi + (lo >> 32)) >> 32;
}

/* A uniform index in [0, n), 1 <= n < 2**32: Lemire's multiply-and-reject. */
static inline uint32_t rng_below(Rng *r, uint32_t n) {
    uint64_t high, low;
    mul64x32(rng_next(r), n, &high, &low);
    if (low < n) {
        uint64_t threshold = (0 - (uint64_t)n) % n;
        while (low < threshold) mul64x32(rng_next(r), n, &high, &low);
    }
    return (uint32_t)high;
}

/* -- the layout (layout.py) ------------------------------------------------------ */

typedef struct {
    uint64_t open[4]; /* open slots, bit = tile * 8 + side */
    uint32_t stubs;   /* tiles on a stub branch: their outer end counts, never opens */
    uint32_t playable;
    int ends;
    int8_t covered[NT]; /* covered sides per tile, -1 while not on the layout */
    int8_t sniff;
    int8_t rule; /* the Sniff's global rule index, -1 before there is a Sniff */
    uint8_t cnt[7]; /* open slots per value */
    uint8_t nplaced;
} Layout;

static void layout_init(Layout *L) {
    memset(L, 0, sizeof *L);
    memset(L->covered, -1, sizeof L->covered);
    L->sniff = -1;
    L->rule = -1;
    L->playable = FULL_SET;
}

static inline void open_add(Layout *L, int slot) {
    L->open[slot >> 6] |= 1ull << (slot & 63);
    L->cnt[SLOT_VALUE[slot]]++;
}

static inline int is_open(const Layout *L, int slot) { return (int)(L->open[slot >> 6] >> (slot & 63) & 1u); }

static inline int is_target(const Layout *L, int slot) {
    uint64_t o = L->open[slot >> 6];
    uint64_t t = o & ~((o << 1) & MIRRORS);
    return (int)(t >> (slot & 63) & 1u);
}

/* The rule a Sniff placed with this orientation code follows; -1 if the variant has none. */
static inline int rule_of(const VariantSpec *V, int orient) {
    if (orient == 0) return V->nrules == 1 ? V->rule[0] : -1;
    if (V->nrules == 1) return -1;
    for (int i = 0; i < V->nrules; i++)
        if (V->orient[i] == orient) return V->rule[i];
    return -1;
}

static void place(Layout *L, const VariantSpec *V, int32_t code) {
    int tile = code >> 2 & 31, kind = code & 3;
    int dbl = IS_DBL[tile];
    const int16_t *table = PLAIN;
    if (dbl && L->sniff < 0) {
        L->sniff = (int8_t)tile;
        L->rule = (int8_t)rule_of(V, code >> 15);
        table = RULE_TABLE[L->rule];
    }
    if (kind == K_LEAD) {
        L->covered[tile] = 0;
        int first = tile * 8 + (dbl ? S_LINE_A : S_LOW);
        open_add(L, first);
        open_add(L, first + 1);
        L->ends = table[tile * 64];
    } else {
        int slot = code >> 7 & 255, board = slot >> 3, side = slot & 7;
        int value = SLOT_VALUE[slot];
        int cov = L->covered[board], ncov = cov | 1 << side;
        int ends = L->ends, stub = 0;
        L->covered[board] = (int8_t)ncov;
        L->open[slot >> 6] &= ~(1ull << (slot & 63));
        L->cnt[value]--;
        if (board == L->sniff) {
            const int16_t *bt = RULE_TABLE[L->rule];
            ends += bt[board * 64 + ncov] - bt[board * 64 + cov];
            if ((ncov & LINES) == LINES && (cov & LINES) != LINES) {
                open_add(L, board * 8 + S_BRANCH_A);
                open_add(L, board * 8 + S_BRANCH_B);
            } else if (side >= S_BRANCH_A && RULE_STUBS[L->rule]) {
                stub = 1;
                L->stubs |= 1u << tile;
            }
        } else {
            ends += PLAIN[board * 64 + ncov] - PLAIN[board * 64 + cov];
        }
        if (dbl) {
            L->covered[tile] = LINE_A_BIT;
            open_add(L, tile * 8 + S_LINE_B);
            ends += table[tile * 64 + LINE_A_BIT];
        } else if (LOWV[tile] == value) {
            L->covered[tile] = LOW_BIT;
            if (!stub) open_add(L, tile * 8 + S_HIGH);
            ends += HIGHV[tile];
        } else {
            L->covered[tile] = HIGH_BIT;
            if (!stub) open_add(L, tile * 8 + S_LOW);
            ends += LOWV[tile];
        }
        L->ends = ends;
    }
    L->nplaced++;
    uint32_t p = 0;
    for (int v = 0; v < 7; v++)
        if (L->cnt[v]) p |= MATCHING[v];
    L->playable = p;
}

/* The counted-ends sum a legal placement would leave (Layout.ends_after). */
static inline int ends_after(const Layout *L, const VariantSpec *V, int32_t code) {
    int tile = code >> 2 & 31;
    int dbl = IS_DBL[tile];
    const int16_t *nt = (dbl && L->sniff < 0) ? RULE_TABLE[rule_of(V, code >> 15)] : PLAIN;
    if ((code & 3) == K_LEAD) return nt[tile * 64];
    int slot = code >> 7 & 255, board = slot >> 3, side = slot & 7;
    const int16_t *bt = board == L->sniff ? RULE_TABLE[L->rule] : PLAIN;
    int cov = L->covered[board];
    int added = dbl ? nt[tile * 64 + LINE_A_BIT] : LOWV[tile] + HIGHV[tile] - SLOT_VALUE[slot];
    return L->ends - bt[board * 64 + cov] + bt[board * 64 + (cov | 1 << side)] + added;
}

static inline int points_for(int ends) { return ends > 0 && ends % 5 == 0 ? ends : 0; }

static inline int push(int32_t *out, int n, int32_t base, int tile, int choice, const VariantSpec *V) {
    if (choice && IS_DBL[tile]) {
        out[n++] = base | V->orient[0] << 15;
        out[n++] = base | V->orient[1] << 15;
    } else {
        out[n++] = base;
    }
    return n;
}

/* Canonical placements of `hand` (Layout.moves_for): by target slot, then tile; a Sniff
 * move twice (cross, inline) where the variant lets the player choose. */
static int moves_for(const Layout *L, const VariantSpec *V, uint32_t hand, int32_t *out) {
    int n = 0;
    int choice = L->sniff < 0 && (hand & DOUBLES) && V->nrules > 1;
    if (L->nplaced == 0) {
        while (hand) {
            int t = CTZ32(hand);
            hand &= hand - 1;
            n = push(out, n, K_LEAD | t << 2, t, choice, V);
        }
        return n;
    }
    for (int w = 0; w < 4; w++) {
        uint64_t o = L->open[w];
        uint64_t targets = o & ~((o << 1) & MIRRORS);
        while (targets) {
            int slot = w * 64 + CTZ64(targets);
            targets &= targets - 1;
            uint32_t m = hand & MATCHING[SLOT_VALUE[slot]];
            while (m) {
                int t = CTZ32(m);
                m &= m - 1;
                n = push(out, n, K_PLACE | t << 2 | slot << 7, t, choice, V);
            }
        }
    }
    return n;
}

/* -- the round (match.py's apply, for one round) ----------------------------------- */

typedef struct {
    Layout L;
    uint32_t hands[MAX_SEATS];
    uint8_t bone[NT];
    int nbone, seats, sides, turn, drawn, variant, target;
    int scores[MAX_SEATS];
} State;

typedef struct {
    int points[MAX_SEATS];
    int deductions[MAX_SEATS];
    int scores[MAX_SEATS];
    int end, finisher, winner, actions;
} Result;

static inline int team_of(int seat, int seats) { return seats == 4 ? seat & 1 : seat; }

static inline int legal_moves(const State *S, int pos, int32_t *out) {
    const Layout *L = &S->L;
    int s = S->turn;
    if (S->drawn >= 0) return moves_for(L, &VARIANTS[S->variant], 1u << S->drawn, out);
    if (S->hands[s] & L->playable) return moves_for(L, &VARIANTS[S->variant], S->hands[s], out);
    out[0] = pos < S->nbone ? K_DRAW : K_PASS;
    return 1;
}

static int blocked(const State *S) {
    uint32_t any = 0;
    for (int i = 0; i < S->seats; i++) any |= S->hands[i];
    return !(any & S->L.playable);
}

static void round_over(State *S, Result *R, int finisher) {
    for (int i = 0; i < S->seats; i++) {
        int pips = 0;
        uint32_t h = S->hands[i];
        while (h) {
            pips += PIPS[CTZ32(h)];
            h &= h - 1;
        }
        int rest = pips % 5;
        int d = rest <= 2 ? pips - rest : pips + 5 - rest;
        R->deductions[i] = d;
        S->scores[team_of(i, S->seats)] -= d;
    }
    R->end = finisher >= 0 ? END_DOMINO : END_BLOCKED;
    R->finisher = finisher;
}

/* Play the round out from S (changed in place). `first` is a legal move code made first,
 * or -1. Returns 0, or -1 when the action limit is passed (a state no round can be in). */
static int play(State *S, const uint8_t *policies, Rng *rng, int32_t first, int32_t *record,
                Result *R) {
    const VariantSpec *V = &VARIANTS[S->variant];
    Layout *L = &S->L;
    int32_t moves[MAX_MOVES];
    int pos = 0;
    memset(R, 0, sizeof *R);
    R->finisher = R->winner = -1;
    int32_t move = first;
    for (;;) {
        int s = S->turn;
        if (move < 0) {
            int n = legal_moves(S, pos, moves);
            if (n == 1) {
                move = moves[0];
            } else if (policies[s] == P_GREEDY) {
                int top = -1, tied = 0;
                int32_t best[MAX_MOVES];
                for (int i = 0; i < n; i++) {
                    int p = points_for(ends_after(L, V, moves[i]));
                    if (p > top) {
                        top = p;
                        tied = 0;
                    }
                    if (p == top) best[tied++] = moves[i];
                }
                move = tied == 1 ? best[0] : best[rng_below(rng, (uint32_t)tied)];
            } else {
                move = moves[rng_below(rng, (uint32_t)n)];
            }
        }
        if (R->actions >= MAX_ACTIONS) return -1;
        if (record) record[R->actions] = move;
        R->actions++;
        int kind = move & 3;
        if (kind <= K_PLACE) {
            int t = move >> 2 & 31;
            S->hands[s] ^= 1u << t;
            S->drawn = -1;
            place(L, V, move);
            int got = points_for(L->ends);
            if (got) {
                int side = team_of(s, S->seats);
                S->scores[side] += got;
                R->points[side] += got;
                if (S->scores[side] >= S->target) {
                    R->end = END_WON;
                    R->winner = s;
                    break;
                }
            }
            if (!S->hands[s]) {
                round_over(S, R, s);
                break;
            }
            if (pos == S->nbone && blocked(S)) {
                round_over(S, R, -1);
                break;
            }
            S->turn = (s + 1) % S->seats;
        } else if (kind == K_DRAW) {
            int t = S->bone[pos++];
            S->hands[s] |= 1u << t;
            if ((1u << t) & L->playable) {
                S->drawn = t;
            } else if (pos == S->nbone && blocked(S)) {
                round_over(S, R, -1);
                break;
            }
        } else {
            S->turn = (s + 1) % S->seats;
        }
        move = -1;
    }
    memcpy(R->scores, S->scores, sizeof R->scores);
    return 0;
}

/* -- reading a packed state (PlayoutState._pack) -------------------------------------- */

static int bad(const char *msg) {
    PyErr_SetString(PyExc_ValueError, msg);
    return -1;
}

/* A Python int in [lo, hi] into *out; -1 with an exception otherwise. */
static int read_int(PyObject *o, long lo, long hi, long *out, const char *what) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "playout kernel: %s is not a small integer", what);
        return -1;
    }
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "playout kernel: %s %ld is out of range", what, v);
        return -1;
    }
    *out = v;
    return 0;
}

/* Check one placement against the layout (Layout.check, condensed); 0 if legal. */
static int placement_ok(const Layout *L, const VariantSpec *V, long code) {
    int kind = (int)(code & 3), tile = (int)(code >> 2 & 31);
    int slot = (int)(code >> 7 & 255), orient = (int)(code >> 15);
    if (kind > K_PLACE || tile >= NT || orient > 2 || L->covered[tile] >= 0) return 0;
    if (kind == K_LEAD) {
        if (L->nplaced || slot) return 0;
    } else {
        if (!L->nplaced || slot >= NSLOT || !is_target(L, slot)) return 0;
        if (L->stubs >> (slot >> 3) & 1u) return 0;
        int v = SLOT_VALUE[slot];
        if (LOWV[tile] != v && HIGHV[tile] != v) return 0;
    }
    if (IS_DBL[tile] && L->sniff < 0) return rule_of(V, orient) >= 0;
    return orient == 0;
}

static int parse_state(PyObject *packed, State *S) {
    PyObject *f = NULL;
    long v;
    int rc = -1;
    memset(S, 0, sizeof *S);
    if (!PyTuple_Check(packed) || PyTuple_GET_SIZE(packed) != 9)
        return bad("playout kernel: a packed state is a 9-tuple");
#define ITEM(i) PyTuple_GET_ITEM(packed, i)
    if (read_int(ITEM(0), 0, n_variants - 1, &v, "variant")) return -1;
    S->variant = (int)v;
    if (read_int(ITEM(1), 2, 4, &v, "seats")) return -1;
    S->seats = (int)v;
    S->sides = S->seats == 4 ? 2 : S->seats;
    if (read_int(ITEM(2), 1, 1L << 30, &v, "target")) return -1;
    S->target = (int)v;
    const VariantSpec *V = &VARIANTS[S->variant];

    f = PySequence_Fast(ITEM(3), "playout kernel: scores must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) != S->sides) {
        bad("playout kernel: one score per side");
        goto done;
    }
    for (int i = 0; i < S->sides; i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), -(1L << 30), S->target - 1, &v, "score"))
            goto done;
        S->scores[i] = (int)v;
    }
    Py_CLEAR(f);

    layout_init(&S->L);
    f = PySequence_Fast(ITEM(4), "playout kernel: placements must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) > NT) {
        bad("playout kernel: more than 28 placements");
        goto done;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(f); i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 0, 3L << 15, &v, "placement")) goto done;
        if (!placement_ok(&S->L, V, v)) {
            bad("playout kernel: a placement is not legal on the layout");
            goto done;
        }
        place(&S->L, V, (int32_t)v);
    }
    Py_CLEAR(f);

    uint32_t seen = 0;
    for (int t = 0; t < NT; t++)
        if (S->L.covered[t] >= 0) seen |= 1u << t;
    f = PySequence_Fast(ITEM(5), "playout kernel: hands must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) != S->seats) {
        bad("playout kernel: one hand per seat");
        goto done;
    }
    for (int i = 0; i < S->seats; i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 1, FULL_SET, &v, "hand")) goto done;
        if ((uint32_t)v & seen) {
            bad("playout kernel: a tile is in two places");
            goto done;
        }
        S->hands[i] = (uint32_t)v;
        seen |= (uint32_t)v;
    }
    Py_CLEAR(f);

    f = PySequence_Fast(ITEM(6), "playout kernel: the boneyard must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) > NT) {
        bad("playout kernel: more than 28 tiles in the boneyard");
        goto done;
    }
    S->nbone = (int)PySequence_Fast_GET_SIZE(f);
    for (int i = 0; i < S->nbone; i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 0, NT - 1, &v, "boneyard tile")) goto done;
        if (seen >> v & 1u) {
            bad("playout kernel: a tile is in two places");
            goto done;
        }
        S->bone[i] = (uint8_t)v;
        seen |= 1u << v;
    }
    Py_CLEAR(f);
    if (seen != FULL_SET) {
        bad("playout kernel: the state does not hold all 28 tiles");
        goto done;
    }
    if (read_int(ITEM(7), 0, S->seats - 1, &v, "turn")) goto done;
    S->turn = (int)v;
    if (read_int(ITEM(8), -1, NT - 1, &v, "drawn")) goto done;
    S->drawn = (int)v;
    if (S->drawn >= 0 &&
        !((S->hands[S->turn] >> S->drawn & 1u) && (S->L.playable >> S->drawn & 1u))) {
        bad("playout kernel: the drawn tile is not in the hand or not placeable");
        goto done;
    }
    if (S->nbone == 0 && blocked(S)) {
        bad("playout kernel: the round is blocked already");
        goto done;
    }
    rc = 0;
#undef ITEM
done:
    Py_XDECREF(f);
    return rc;
}

static int read_policies(PyObject *o, int seats, uint8_t *out) {
    long v;
    PyObject *f = PySequence_Fast(o, "playout kernel: policies must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) != seats) {
        Py_DECREF(f);
        return bad("playout kernel: one policy per seat");
    }
    for (int i = 0; i < seats; i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 0, 1, &v, "policy")) {
            Py_DECREF(f);
            return -1;
        }
        out[i] = (uint8_t)v;
    }
    Py_DECREF(f);
    return 0;
}

static int first_ok(const State *S, long first) {
    int32_t moves[MAX_MOVES];
    if (first < 0) return 1;
    int n = legal_moves(S, 0, moves);
    for (int i = 0; i < n; i++)
        if (moves[i] == first) return 1;
    PyErr_SetString(PyExc_ValueError, "playout kernel: the first move is not legal");
    return 0;
}

static int read_seed(PyObject *o, uint64_t *out) {
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return bad("playout kernel: a seed is an integer from 0 to 2**64 - 1");
    }
    *out = (uint64_t)v;
    return 0;
}

static int configured = 0;

static int ready(void) {
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "playout kernel: configure() was not called");
        return 0;
    }
    return 1;
}

static PyObject *int_tuple(const int *values, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(values[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* -- the module's functions ----------------------------------------------------------- */

static PyObject *k_playout(PyObject *self, PyObject *args) {
    PyObject *packed, *pols, *seed_o;
    long first;
    int record;
    State S;
    uint8_t policies[MAX_SEATS];
    uint64_t seed;
    int32_t rec[MAX_ACTIONS];
    Result R;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOlp", &packed, &pols, &seed_o, &first, &record)) return NULL;
    if (!ready() || parse_state(packed, &S) || read_policies(pols, S.seats, policies) ||
        read_seed(seed_o, &seed) || !first_ok(&S, first))
        return NULL;
    Rng rng;
    rng_seed(&rng, seed);
    if (play(&S, policies, &rng, (int32_t)first, record ? rec : NULL, &R)) {
        PyErr_SetString(PyExc_RuntimeError, "playout kernel: the round did not end");
        return NULL;
    }
    PyObject *moves = PyTuple_New(record ? R.actions : 0);
    if (!moves) return NULL;
    for (int i = 0; record && i < R.actions; i++) {
        PyObject *x = PyLong_FromLong(rec[i]);
        if (!x) {
            Py_DECREF(moves);
            return NULL;
        }
        PyTuple_SET_ITEM(moves, i, x);
    }
    return Py_BuildValue("(NNiiiNNi)", moves, int_tuple(R.points, S.sides), R.end, R.finisher,
                         R.winner, int_tuple(R.deductions, S.seats), int_tuple(R.scores, S.sides),
                         R.actions);
}

static PyObject *k_rollouts(PyObject *self, PyObject *args) {
    PyObject *states_o, *pols, *seeds_o, *out = NULL;
    PyObject *states_f = NULL, *seeds_f = NULL, *gains = NULL, *ends = NULL, *winners = NULL;
    long first;
    State *states = NULL;
    uint64_t *seeds = NULL;
    int *res = NULL; /* per playout: sides gains, end, winner */
    uint8_t policies[MAX_SEATS];
    int failed = 0;
    long long actions = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOl", &states_o, &pols, &seeds_o, &first)) return NULL;
    if (!ready()) return NULL;
    states_f = PySequence_Fast(states_o, "playout kernel: states must be a sequence");
    seeds_f = states_f ? PySequence_Fast(seeds_o, "playout kernel: seeds must be a sequence") : NULL;
    if (!seeds_f) goto done;
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(states_f), n = PySequence_Fast_GET_SIZE(seeds_f);
    if (ns < 1 || (ns != 1 && ns != n)) {
        bad("playout kernel: give one state, or one per seed");
        goto done;
    }
    states = PyMem_RawMalloc(sizeof(State) * (size_t)ns);
    seeds = PyMem_RawMalloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
    res = PyMem_RawMalloc(sizeof(int) * (size_t)(n ? n : 1) * (MAX_SEATS + 2));
    if (!states || !seeds || !res) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        if (parse_state(PySequence_Fast_GET_ITEM(states_f, i), &states[i])) goto done;
        if (states[i].seats != states[0].seats) {
            bad("playout kernel: the states of one call have the same number of seats");
            goto done;
        }
        if (!first_ok(&states[i], first)) goto done;
    }
    if (read_policies(pols, states[0].seats, policies)) goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_seed(PySequence_Fast_GET_ITEM(seeds_f, i), &seeds[i])) goto done;
    int sides = states[0].sides, stride = sides + 2;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        State S = states[ns == 1 ? 0 : i];
        Result R;
        Rng rng;
        rng_seed(&rng, seeds[i]);
        if (play(&S, policies, &rng, (int32_t)first, NULL, &R)) {
            failed = 1;
            break;
        }
        int *row = res + i * stride;
        for (int side = 0; side < sides; side++) row[side] = R.points[side];
        for (int seat = 0; seat < S.seats; seat++)
            row[team_of(seat, S.seats)] -= R.deductions[seat];
        row[sides] = R.end;
        row[sides + 1] = R.winner;
        actions += R.actions;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_SetString(PyExc_RuntimeError, "playout kernel: a round did not end");
        goto done;
    }
    gains = PyList_New(n * sides);
    ends = PyList_New(n);
    winners = PyList_New(n);
    if (!gains || !ends || !winners) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        int *row = res + i * stride;
        for (int side = 0; side < sides; side++) {
            PyObject *x = PyLong_FromLong(row[side]);
            if (!x) goto done;
            PyList_SET_ITEM(gains, i * sides + side, x);
        }
        PyObject *e = PyLong_FromLong(row[sides]);
        if (!e) goto done;
        PyList_SET_ITEM(ends, i, e);
        PyObject *w = PyLong_FromLong(row[sides + 1]);
        if (!w) goto done;
        PyList_SET_ITEM(winners, i, w);
    }
    out = Py_BuildValue("(OOOL)", gains, ends, winners, actions);
done:
    Py_XDECREF(gains);
    Py_XDECREF(ends);
    Py_XDECREF(winners);
    Py_XDECREF(states_f);
    Py_XDECREF(seeds_f);
    PyMem_RawFree(states);
    PyMem_RawFree(seeds);
    PyMem_RawFree(res);
    return out;
}

static int read_table(PyObject *o, int16_t *out) {
    long v;
    PyObject *f = PySequence_Fast(o, "playout kernel: a contribution table must be a sequence");
    if (!f) return -1;
    if (PySequence_Fast_GET_SIZE(f) != NT * 64) {
        Py_DECREF(f);
        return bad("playout kernel: a contribution table has 28 * 64 entries");
    }
    for (int i = 0; i < NT * 64; i++) {
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 0, 24, &v, "contribution")) {
            Py_DECREF(f);
            return -1;
        }
        out[i] = (int16_t)v;
    }
    Py_DECREF(f);
    return 0;
}

/* configure(plain_table, variants): variants in `VARIANTS` order, each a sequence of its
 * rules (orientation code 1|2, stubs, contribution table), cross first. */
static PyObject *k_configure(PyObject *self, PyObject *args) {
    PyObject *plain, *variants, *vf = NULL;
    long v;
    int nrules = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &plain, &variants)) return NULL;
    configured = 0;
    if (read_table(plain, PLAIN)) return NULL;
    vf = PySequence_Fast(variants, "playout kernel: variants must be a sequence");
    if (!vf) return NULL;
    Py_ssize_t nv = PySequence_Fast_GET_SIZE(vf);
    if (nv < 1 || nv > MAX_VARIANTS) {
        Py_DECREF(vf);
        bad("playout kernel: 1 to 8 variants");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nv; i++) {
        PyObject *rf = PySequence_Fast(PySequence_Fast_GET_ITEM(vf, i),
                                       "playout kernel: a variant is a sequence of rules");
        if (!rf) goto fail;
        Py_ssize_t nr = PySequence_Fast_GET_SIZE(rf);
        if (nr < 1 || nr > 2 || nrules + nr > MAX_RULES) {
            Py_DECREF(rf);
            bad("playout kernel: a variant has one or two rules");
            goto fail;
        }
        VARIANTS[i].nrules = (int)nr;
        for (Py_ssize_t j = 0; j < nr; j++) {
            PyObject *rule = PySequence_Fast_GET_ITEM(rf, j);
            if (!PyTuple_Check(rule) || PyTuple_GET_SIZE(rule) != 3) {
                Py_DECREF(rf);
                bad("playout kernel: a rule is (orientation, stubs, table)");
                goto fail;
            }
            if (read_int(PyTuple_GET_ITEM(rule, 0), 1, 2, &v, "orientation")) {
                Py_DECREF(rf);
                goto fail;
            }
            int stubs = PyObject_IsTrue(PyTuple_GET_ITEM(rule, 1));
            if (stubs < 0 || read_table(PyTuple_GET_ITEM(rule, 2), RULE_TABLE[nrules])) {
                Py_DECREF(rf);
                goto fail;
            }
            RULE_STUBS[nrules] = (uint8_t)stubs;
            VARIANTS[i].orient[j] = (int)v;
            VARIANTS[i].rule[j] = nrules++;
        }
        Py_DECREF(rf);
    }
    Py_DECREF(vf);
    n_variants = (int)nv;
    configured = 1;
    Py_RETURN_NONE;
fail:
    Py_DECREF(vf);
    return NULL;
}

/* rng_draws(seed, bounds): for each bound, below(bound), or next() itself for a bound of
 * 0: the generator's test hook. */
static PyObject *k_rng_draws(PyObject *self, PyObject *args) {
    PyObject *seed_o, *bounds, *f, *out;
    uint64_t seed;
    Rng rng;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &seed_o, &bounds)) return NULL;
    if (read_seed(seed_o, &seed)) return NULL;
    f = PySequence_Fast(bounds, "playout kernel: bounds must be a sequence");
    if (!f) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
    out = PyList_New(n);
    if (!out) {
        Py_DECREF(f);
        return NULL;
    }
    rng_seed(&rng, seed);
    for (Py_ssize_t i = 0; i < n; i++) {
        long b;
        PyObject *x;
        if (read_int(PySequence_Fast_GET_ITEM(f, i), 0, 0xFFFFFFFFL, &b, "bound")) {
            Py_DECREF(f);
            Py_DECREF(out);
            return NULL;
        }
        if (b == 0)
            x = PyLong_FromUnsignedLongLong(rng_next(&rng));
        else
            x = PyLong_FromUnsignedLong(rng_below(&rng, (uint32_t)b));
        if (!x) {
            Py_DECREF(f);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, x);
    }
    Py_DECREF(f);
    return out;
}

static PyMethodDef methods[] = {
    {"configure", k_configure, METH_VARARGS,
     "configure(plain_table, variants): the engine's contribution tables and variants."},
    {"playout", k_playout, METH_VARARGS,
     "playout(packed_state, policies, seed, first, record) -> (moves, points, end, finisher, "
     "winner, deductions, scores, actions)"},
    {"rollouts", k_rollouts, METH_VARARGS,
     "rollouts(packed_states, policies, seeds, first) -> (gains, ends, winners, actions)"},
    {"rng_draws", k_rng_draws, METH_VARARGS,
     "rng_draws(seed, bounds) -> below(b) for each bound b, next() for a bound of 0"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel",
    "The compiled playout kernel (see sniff/playout.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    init_set();
    return PyModule_Create(&module);
}

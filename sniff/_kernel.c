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
#include <limits.h>
#include <time.h>

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
#define CLZ32(x) __builtin_clz(x)
#define CTZ64(x) __builtin_ctzll(x)
#else
static int CTZ32(uint32_t x) { int n = 0; while (!(x & 1u)) { x >>= 1; n++; } return n; }
static int CLZ32(uint32_t x) { int n = 0; while (!(x & 0x80000000u)) { x <<= 1; n++; } return n; }
static int CTZ64(uint64_t x) { int n = 0; while (!(x & 1u)) { x >>= 1; n++; } return n; }
#endif

/* -- the set and the tables -------------------------------------------------- */

static int LOWV[NT], HIGHV[NT], IS_DBL[NT], PIPS[NT];
static uint32_t MATCHING[7], DOUBLES;
static int8_t SLOT_VALUE[NSLOT];

static int16_t PLAIN[NT * 64];
static int16_t RULE_TABLE[MAX_RULES][NT * 64];
static uint8_t RULE_STUBS[MAX_RULES];
static uint8_t RULE_ORIENT[MAX_RULES]; /* 1 cross, 2 inline */

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

/* A Sniff decision as the facts note it (facts.RoundRecorder.before). */
typedef struct {
    int seat, index, dbl;
} Decision;

/* A round's facts as sniff.facts.RoundRecorder follows them, action by action. At most one
 * decision a placement, so NT + 1 is room enough. */
typedef struct {
    int index; /* placements so far */
    int maker, sniff_index, dbl, orient, covered_after;
    int sniff_points, sniff_points_maker_side;
    int points[MAX_SEATS], placements[MAX_SEATS], scoring[MAX_SEATS];
    int ndec;
    Decision dec[NT + 1];
} Facts;

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

static void facts_before(Facts *F, const State *S);
static void facts_after(Facts *F, const State *S, int seat, int got);

/* Play the round out from S (changed in place). Seat s draws its choices from rngs[s] (a
 * playout hands every seat the same generator, a bot match each bot its own). `first` is a
 * legal move code made first, or -1. `F`, when given, follows the round's facts. Returns 0,
 * or -1 when the action limit is passed (a state no round can be in). */
static int play(State *S, const uint8_t *policies, Rng *const *rngs, int32_t first,
                int32_t *record, Result *R, Facts *F) {
    const VariantSpec *V = &VARIANTS[S->variant];
    Layout *L = &S->L;
    int32_t moves[MAX_MOVES];
    int pos = 0;
    memset(R, 0, sizeof *R);
    R->finisher = R->winner = -1;
    int32_t move = first;
    for (;;) {
        int s = S->turn;
        if (F) facts_before(F, S);
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
                move = tied == 1 ? best[0] : best[rng_below(rngs[s], (uint32_t)tied)];
            } else {
                move = moves[rng_below(rngs[s], (uint32_t)n)];
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
            if (F) facts_after(F, S, s, got);
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

/* -- a round's facts (facts.RoundRecorder) -------------------------------------------- */

static void facts_init(Facts *F) {
    memset(F, 0, sizeof *F);
    F->maker = F->sniff_index = F->dbl = F->covered_after = -1;
}

/* A Sniff decision: before any Sniff, no drawn tile pending, the mover may place a double
 * and a non-double. Its double is the highest it may place. */
static void facts_before(Facts *F, const State *S) {
    if (F->maker >= 0 || S->drawn >= 0) return;
    uint32_t placeable = S->hands[S->turn] & S->L.playable;
    uint32_t doubles = placeable & DOUBLES;
    if (!doubles || placeable == doubles) return;
    Decision *d = &F->dec[F->ndec++];
    d->seat = S->turn;
    d->index = F->index;
    d->dbl = LOWV[31 - CLZ32(doubles)];
}

/* After a placement by `seat` that scored `got`, on the layout it left. */
static void facts_after(Facts *F, const State *S, int seat, int got) {
    const Layout *L = &S->L;
    int index = F->index++, sniff = L->sniff;
    F->placements[seat]++;
    if (F->maker < 0 && sniff >= 0) {
        F->maker = seat;
        F->sniff_index = index;
        F->dbl = LOWV[sniff];
        if (VARIANTS[S->variant].nrules > 1) F->orient = RULE_ORIENT[L->rule];
    } else if (F->covered_after < 0 && sniff >= 0 && (L->covered[sniff] & LINES) == LINES) {
        F->covered_after = index - F->sniff_index;
    }
    if (got) {
        F->points[seat] += got;
        F->scoring[seat]++;
        if (sniff >= 0) {
            int counted = RULE_TABLE[L->rule][sniff * 64 + L->covered[sniff]];
            F->sniff_points += counted;
            if (team_of(seat, S->seats) == team_of(F->maker, S->seats))
                F->sniff_points_maker_side += counted;
        }
    }
}

/* -- the dealer (dealing.py, docs/dealing.md): SHA-256 in counter mode ---------------- */

static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static inline uint32_t ror32(uint32_t x, int k) { return (x >> k) | (x << (32 - k)); }

/* SHA-256 of a message of at most 55 bytes (one block: every stream block's message is),
 * as eight big-endian words. */
static void sha256_short(const uint8_t *msg, int len, uint32_t out[8]) {
    uint8_t block[64] = {0};
    uint32_t w[64];
    memcpy(block, msg, (size_t)len);
    block[len] = 0x80;
    block[62] = (uint8_t)(len * 8 >> 8);
    block[63] = (uint8_t)(len * 8);
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
               (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) +
                      SHA_K[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    out[0] = h[0] + a, out[1] = h[1] + b, out[2] = h[2] + c, out[3] = h[3] + d;
    out[4] = h[4] + e, out[5] = h[5] + f, out[6] = h[6] + g, out[7] = h[7] + k;
}

/* seeds.bot_seed: the first 8 bytes, big-endian, of SHA-256 over the UTF-8 text
 * "sniff/bot/v1\0<seed in decimal>\0<seat in decimal>" (at most 35 bytes: one block). */
static uint64_t bot_seed(uint64_t seed, int seat) {
    static const char DOMAIN[] = "sniff/bot/v1";
    uint8_t msg[48];
    char digits[24];
    int n = sizeof DOMAIN - 1, d = 0;
    uint32_t words[8];
    memcpy(msg, DOMAIN, (size_t)n);
    msg[n++] = 0;
    do {
        digits[d++] = (char)('0' + seed % 10);
        seed /= 10;
    } while (seed);
    while (d) msg[n++] = (uint8_t)digits[--d];
    msg[n++] = 0;
    do {
        digits[d++] = (char)('0' + seat % 10);
        seat /= 10;
    } while (seat);
    while (d) msg[n++] = (uint8_t)digits[--d];
    sha256_short(msg, n, words);
    return (uint64_t)words[0] << 32 | words[1];
}

/* A stream (seed, round, purpose): its message is the prefix and a 4-byte counter. */
typedef struct {
    uint8_t msg[40];
    int len; /* the prefix's length; the counter follows */
    uint32_t counter, words[8];
    int next; /* the next word of `words` to read; 8 when a block must be hashed */
} Stream;

static void stream_open(Stream *st, uint64_t seed, int round, const char *purpose) {
    static const char DOMAIN[] = "sniff/rng/v1";
    int n = 0;
    memcpy(st->msg, DOMAIN, sizeof DOMAIN - 1);
    n = sizeof DOMAIN - 1;
    st->msg[n++] = 0;
    for (const char *p = purpose; *p; p++) st->msg[n++] = (uint8_t)*p;
    st->msg[n++] = 0;
    for (int i = 7; i >= 0; i--) st->msg[n++] = (uint8_t)(seed >> (8 * i));
    for (int i = 3; i >= 0; i--) st->msg[n++] = (uint8_t)((uint32_t)round >> (8 * i));
    st->len = n;
    st->counter = 0;
    st->next = 8;
}

static uint32_t stream_word(Stream *st) {
    if (st->next == 8) {
        for (int i = 3; i >= 0; i--) st->msg[st->len + 3 - i] = (uint8_t)(st->counter >> (8 * i));
        sha256_short(st->msg, st->len + 4, st->words);
        st->counter++;
        st->next = 0;
    }
    return st->words[st->next++];
}

/* uniform(n), 1 <= n <= 2**31 here: rejection below the largest multiple of n. */
static uint32_t stream_uniform(Stream *st, uint32_t n) {
    uint64_t limit = (1ull << 32) - (1ull << 32) % n;
    for (;;) {
        uint32_t x = stream_word(st);
        if (x < limit) return x % n;
    }
}

/* The round's 28 tiles in dealt order (Fisher-Yates from 27 down). */
static void shuffle_tiles(uint64_t seed, int round, uint8_t tiles[NT]) {
    Stream st;
    stream_open(&st, seed, round, "deal");
    for (int t = 0; t < NT; t++) tiles[t] = (uint8_t)t;
    for (int i = NT - 1; i > 0; i--) {
        int j = (int)stream_uniform(&st, (uint32_t)i + 1);
        uint8_t x = tiles[i];
        tiles[i] = tiles[j];
        tiles[j] = x;
    }
}

static int lot(uint64_t seed, int round, int seats) {
    Stream st;
    stream_open(&st, seed, round, "lot");
    return (int)stream_uniform(&st, (uint32_t)seats);
}

/* -- whole matches (match.py's Match with bots.play_match, facts.py's facts) ------------ */

#define MAX_ROUNDS 100000
static const int HAND_SIZE[MAX_SEATS + 1] = {0, 0, 7, 6, 5};

/* The rows play_matches returns, int32 each (the column orders are simulated.py's). */
enum { MATCH_COLS = 5 + MAX_SEATS, ROUND_COLS = 14 + 5 * MAX_SEATS, DECISION_COLS = 9 };
enum { OUT_PLAYED, OUT_HELD_SELF, OUT_HELD_PARTNER, OUT_HELD_OTHER, OUT_HELD_NEVER };
enum { MATCH_WON = 0, MATCH_LIMIT = 1 };

typedef struct {
    int32_t *data;
    size_t n, cap;
} Buf;

/* Room for `k` more values; NULL when memory runs out. */
static int32_t *buf_grow(Buf *b, size_t k) {
    if (b->n + k > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + k) cap *= 2;
        int32_t *data = PyMem_RawRealloc(b->data, cap * sizeof *data);
        if (!data) return NULL;
        b->data = data;
        b->cap = cap;
    }
    int32_t *at = b->data + b->n;
    b->n += k;
    return at;
}

typedef struct {
    int variant, seats, sides, target, round_limit; /* round_limit 0: none */
    uint8_t policies[MAX_SEATS];
} MatchSettings;

typedef struct {
    Buf matches, rounds, decisions, moves;
    int record;
} Out;

static int outcome(const Facts *F, const Decision *d, int seats) {
    if (d->index == F->sniff_index) return OUT_PLAYED;
    if (F->maker < 0) return OUT_HELD_NEVER;
    if (F->maker == d->seat) return OUT_HELD_SELF;
    if (team_of(F->maker, seats) == team_of(d->seat, seats)) return OUT_HELD_PARTNER;
    return OUT_HELD_OTHER;
}

/* The round's row, and its decisions' rows when it is complete (R ended it by a domino or a
 * block); -1 when memory runs out. */
static int put_round(Out *out, int m, int round, int leader, const Facts *F, const Result *R,
                     int seats) {
    int complete = R->end != END_WON;
    int32_t *row = buf_grow(&out->rounds, ROUND_COLS);
    if (!row) return -1;
    int side[MAX_SEATS] = {0};
    if (complete)
        for (int s = 0; s < seats; s++)
            side[team_of(s, seats)] += F->points[s] - R->deductions[s];
    int32_t head[14] = {m,
                        round,
                        leader,
                        complete,
                        F->maker,
                        F->sniff_index,
                        F->dbl,
                        F->orient,
                        F->covered_after,
                        complete ? R->end : -1,
                        complete ? R->finisher : -1,
                        R->actions,
                        F->sniff_points,
                        F->sniff_points_maker_side};
    memcpy(row, head, sizeof head);
    row += 14;
    for (int s = 0; s < MAX_SEATS; s++) {
        int here = s < seats;
        row[s] = here && complete ? side[team_of(s, seats)] : 0;
        row[MAX_SEATS + s] = here ? F->points[s] : 0;
        row[2 * MAX_SEATS + s] = here && complete ? R->deductions[s] : 0;
        row[3 * MAX_SEATS + s] = here ? F->placements[s] : 0;
        row[4 * MAX_SEATS + s] = here ? F->scoring[s] : 0;
    }
    if (!complete) return 0;
    int outcomes[NT + 1];
    for (int i = 0; i < F->ndec; i++) outcomes[i] = outcome(F, &F->dec[i], seats);
    for (int i = 0; i < F->ndec; i++) {
        int before = 0, after = 0;
        for (int j = 0; j < F->ndec; j++)
            if (outcomes[j] == outcomes[i]) {
                before += j < i;
                after += j > i;
            }
        int32_t *d = buf_grow(&out->decisions, DECISION_COLS);
        if (!d) return -1;
        const Decision *dec = &F->dec[i];
        int32_t values[DECISION_COLS] = {
            m, round, dec->seat, dec->index, dec->dbl, outcomes[i], dec->seat == leader,
            before, after};
        memcpy(d, values, sizeof values);
    }
    return 0;
}

/* Play match `m` seeded `seed`, seat s's bot drawing from a generator seeded bot_seeds[s],
 * and append its rows to `out`. 0; -1 when memory runs out; -2 when a round or the match
 * does not end (no lawful match does that). */
static int play_match(const MatchSettings *M, int m, uint64_t seed, const uint64_t *bot_seeds,
                      Out *out) {
    Rng gens[MAX_SEATS];
    Rng *rngs[MAX_SEATS];
    int seats = M->seats, size = HAND_SIZE[seats];
    int scores[MAX_SEATS] = {0};
    int next_leader = -1, first_leader = -1, winner = -1, ended = MATCH_WON, actions = 0;
    int round = 0;
    for (int s = 0; s < seats; s++) {
        rng_seed(&gens[s], bot_seeds[s]);
        rngs[s] = &gens[s];
    }
    for (;; round++) {
        if (round >= MAX_ROUNDS) return -2;
        State S;
        Result R;
        Facts F;
        uint8_t tiles[NT];
        memset(&S, 0, sizeof S);
        S.seats = seats;
        S.sides = M->sides;
        S.variant = M->variant;
        S.target = M->target;
        memcpy(S.scores, scores, sizeof scores);
        layout_init(&S.L);
        shuffle_tiles(seed, round, tiles);
        for (int i = 0; i < seats * size; i++) S.hands[i / size] |= 1u << tiles[i];
        S.nbone = NT - seats * size;
        memcpy(S.bone, tiles + seats * size, (size_t)S.nbone);
        int leader = next_leader >= 0 ? next_leader : lot(seed, round, seats);
        if (round == 0) first_leader = leader;
        S.turn = leader;
        S.drawn = -1;
        facts_init(&F);
        int32_t *rec = NULL;
        if (out->record && !(rec = buf_grow(&out->moves, MAX_ACTIONS))) return -1;
        if (play(&S, M->policies, rngs, -1, rec, &R, &F)) return -2;
        if (out->record) out->moves.n -= (size_t)(MAX_ACTIONS - R.actions);
        actions += R.actions;
        memcpy(scores, R.scores, sizeof scores);
        if (put_round(out, m, round, leader, &F, &R, seats)) return -1;
        if (R.end == END_WON) {
            winner = R.winner;
            break;
        }
        next_leader = R.finisher;
        if (M->round_limit && round + 1 >= M->round_limit) {
            /* The side ahead wins (a seat of it: the side's number); level on top, a draw. */
            int best = scores[0], top = 0;
            for (int i = 1; i < M->sides; i++)
                if (scores[i] > best) best = scores[i];
            for (int i = 0; i < M->sides; i++)
                if (scores[i] == best) {
                    if (!top++) winner = i;
                }
            if (top > 1) winner = -1;
            ended = MATCH_LIMIT;
            break;
        }
    }
    int32_t *row = buf_grow(&out->matches, MATCH_COLS);
    if (!row) return -1;
    int32_t head[5] = {winner, ended, round + 1, first_leader, actions};
    memcpy(row, head, sizeof head);
    for (int s = 0; s < MAX_SEATS; s++) row[5 + s] = s < seats ? scores[team_of(s, seats)] : 0;
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
    Rng *rngs[MAX_SEATS] = {&rng, &rng, &rng, &rng};
    rng_seed(&rng, seed);
    if (play(&S, policies, rngs, (int32_t)first, record ? rec : NULL, &R, NULL)) {
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
        Rng *rngs[MAX_SEATS] = {&rng, &rng, &rng, &rng};
        rng_seed(&rng, seeds[i]);
        if (play(&S, policies, rngs, (int32_t)first, NULL, &R, NULL)) {
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

/* A buffer's values as bytes (empty bytes for none). */
static PyObject *buf_bytes(const Buf *b) {
    return PyBytes_FromStringAndSize(b->data ? (const char *)b->data : "",
                                     (Py_ssize_t)(b->n * sizeof *b->data));
}

/* play_matches(variant, seats, target, round_limit, policies, seeds, bot_seeds, record) ->
 * (matches, rounds, decisions, moves): match i seeded seeds[i], seat s's bot seeded
 * bot_seeds[i * seats + s], or bot_seed(seeds[i], s) when bot_seeds is None (what a
 * simulation's matches use: deriving them here keeps Python out of the loop); round_limit
 * 0 for none. Each result is bytes of native int32
 * rows (their columns are simulated.py's); moves is empty unless `record`. */
static PyObject *k_play_matches(PyObject *self, PyObject *args) {
    int variant, seats, target, round_limit, record, rc = 0;
    PyObject *pols, *seeds_o, *bots_o, *seeds_f = NULL, *bots_f = NULL, *result = NULL;
    uint64_t *seeds = NULL;
    Out out;
    MatchSettings M;
    (void)self;
    memset(&out, 0, sizeof out);
    if (!PyArg_ParseTuple(args, "iiiiOOOp", &variant, &seats, &target, &round_limit, &pols,
                          &seeds_o, &bots_o, &record))
        return NULL;
    if (!ready()) return NULL;
    if (variant < 0 || variant >= n_variants || seats < 2 || seats > MAX_SEATS || target < 1 ||
        target > (1 << 30) || round_limit < 0) {
        bad("playout kernel: no match has these settings");
        return NULL;
    }
    M.variant = variant;
    M.seats = seats;
    M.sides = seats == 4 ? 2 : seats;
    M.target = target;
    M.round_limit = round_limit;
    out.record = record;
    if (read_policies(pols, seats, M.policies)) return NULL;
    seeds_f = PySequence_Fast(seeds_o, "playout kernel: seeds must be a sequence");
    if (!seeds_f) goto done;
    if (bots_o != Py_None) {
        bots_f = PySequence_Fast(bots_o, "playout kernel: bot seeds must be a sequence");
        if (!bots_f) goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seeds_f);
    if (bots_f && PySequence_Fast_GET_SIZE(bots_f) != n * seats) {
        bad("playout kernel: one bot seed per seat of each match");
        goto done;
    }
    seeds = PyMem_RawMalloc(sizeof(uint64_t) * (size_t)(n * (seats + 1) + 1));
    if (!seeds) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *bots = seeds + n;
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_seed(PySequence_Fast_GET_ITEM(seeds_f, i), &seeds[i])) goto done;
    if (bots_f) {
        for (Py_ssize_t i = 0; i < n * seats; i++)
            if (read_seed(PySequence_Fast_GET_ITEM(bots_f, i), &bots[i])) goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (!bots_f)
        for (Py_ssize_t i = 0; i < n; i++)
            for (int s = 0; s < seats; s++) bots[i * seats + s] = bot_seed(seeds[i], s);
    for (Py_ssize_t i = 0; i < n && !rc; i++)
        rc = play_match(&M, (int)i, seeds[i], bots + i * seats, &out);
    Py_END_ALLOW_THREADS
    if (rc == -1) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc) {
        PyErr_SetString(PyExc_RuntimeError, "playout kernel: a match did not end");
        goto done;
    }
    result = Py_BuildValue("(NNNN)", buf_bytes(&out.matches), buf_bytes(&out.rounds),
                           buf_bytes(&out.decisions), buf_bytes(&out.moves));
done:
    Py_XDECREF(seeds_f);
    Py_XDECREF(bots_f);
    PyMem_RawFree(seeds);
    PyMem_RawFree(out.matches.data);
    PyMem_RawFree(out.rounds.data);
    PyMem_RawFree(out.decisions.data);
    PyMem_RawFree(out.moves.data);
    return result;
}

/* columns(rows, width) -> the same int32 values column by column: `rows` holds n rows of
 * `width` native int32 values (play_matches' results); the result holds column 0 of every
 * row, then column 1, ... A bulk writer wants contiguous columns, and numpy's strided
 * transpose of these arrays cost a worker more than the rest of its conversion. */
static PyObject *k_columns(PyObject *self, PyObject *args) {
    Py_buffer view;
    int width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*i", &view, &width)) return NULL;
    if (width < 1 || view.len % ((Py_ssize_t)sizeof(int32_t) * width)) {
        PyBuffer_Release(&view);
        return PyErr_Format(PyExc_ValueError, "playout kernel: rows of %d int32 values", width);
    }
    Py_ssize_t n = view.len / ((Py_ssize_t)sizeof(int32_t) * width);
    PyObject *out = PyBytes_FromStringAndSize(NULL, view.len);
    if (out) {
        const int32_t *src = view.buf;
        int32_t *dst = (int32_t *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        enum { BLOCK = 256 };
        for (Py_ssize_t i0 = 0; i0 < n; i0 += BLOCK) {
            Py_ssize_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
            for (int c = 0; c < width; c++)
                for (Py_ssize_t i = i0; i < i1; i++) dst[c * n + i] = src[i * width + c];
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return out;
}

/* bot_seed(seed, seat) -> seeds.bot_seed(seed, seat), as the kernel derives it (test hook). */
static PyObject *k_bot_seed(PyObject *self, PyObject *args) {
    PyObject *seed_o;
    int seat;
    uint64_t seed;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oi", &seed_o, &seat)) return NULL;
    if (read_seed(seed_o, &seed)) return NULL;
    if (seat < 0) return PyErr_Format(PyExc_ValueError, "playout kernel: bad seat");
    return PyLong_FromUnsignedLongLong(bot_seed(seed, seat));
}

/* deal(seed, round, seats) -> (tiles in dealt order, lot): the dealer's test hook. */
static PyObject *k_deal(PyObject *self, PyObject *args) {
    PyObject *seed_o;
    int round, seats;
    uint64_t seed;
    uint8_t tiles[NT];
    int values[NT];
    (void)self;
    if (!PyArg_ParseTuple(args, "Oii", &seed_o, &round, &seats)) return NULL;
    if (read_seed(seed_o, &seed)) return NULL;
    if (round < 0 || seats < 1) return PyErr_Format(PyExc_ValueError, "playout kernel: bad deal");
    shuffle_tiles(seed, round, tiles);
    for (int t = 0; t < NT; t++) values[t] = tiles[t];
    return Py_BuildValue("(Ni)", int_tuple(values, NT), lot(seed, round, seats));
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
            RULE_ORIENT[nrules] = (uint8_t)v;
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

/* -- the exact solver (solver.py's search, transcribed) ---------------------------------
 *
 * The same game as `solver._Search`: the nodes are PlayoutStates with the scores kept as
 * the points each side still needs; a move is made as `_Search.step` makes it (the round
 * ends on a domino, a block, or a side reaching its need: no deductions then); forced
 * passes with an empty boneyard are skipped (`settle`). Two sides: negamax with alpha-beta,
 * fail-soft, the move order of `_Search._order` (table's best, immediate points, history,
 * canonical). Three sides: max^n, each seat playing the first move in canonical order of
 * the highest value for its side (`_Search.maxn`). Values are exact, so they and the
 * canonical best lines (sv_line_two, sv_line_maxn) are the Python search's; node counts
 * are not.
 *
 * The table differs from Python's. It has a fixed size (SOLVER_TT_BITS entries, 96 bytes
 * each, allocated once and reused by the next solve, a generation number making the old
 * entries stale; a solve that finds it in use by another thread's solve allocates its
 * own), four entries a bucket (a new result replaces the position's entry it supersedes,
 * else a stale one, else the one that cost the fewest nodes, so the same position may stay
 * at other ranges of scores, as Python keeps up to 16 a position), and every entry holds
 * its whole key, so a hash collision can only cost a miss, never give a wrong value. The
 * scores are handled as Python handles them: each result holds for a range of needs per
 * side, those at which every line it rests on ends as it did (`_Search`'s docstring;
 * sv_enter, sv_scored, sv_rests_on, sv_leave). Two sides key the layout as `_Search.key`
 * does (its counted ends, its Sniff, its other open sides as a sorted multiset of arms);
 * max^n as `_Search.exact_key` does (every tile's covered sides), since its tie rule
 * follows the canonical move order, which like layouts do not share.
 */

#define SOLVER_TT_BITS 18 /* 2**18 entries of 96 bytes: 24 MB */
#define SV_INF (1 << 28)
#define SV_MAX_PLACEMENT 45 /* solver.MAX_PLACEMENT_POINTS */
#define SV_TIME_CHECK 1024  /* solver._TIME_CHECK_EVERY */
#define SV_MAX_LINE MAX_ACTIONS

enum { SV_SOLVED = 0, SV_OUT_NODES = 1, SV_OUT_MILLIS = 2 };

typedef struct {
    Layout L;
    uint32_t hands[MAX_SEATS];
    int turn, drawn, pos;
    int needs[3];
} SNode;

/* A table key: zeroed before it is filled, so that it compares and hashes as bytes. */
typedef struct {
    uint32_t hands[MAX_SEATS];
    uint64_t layout[5]; /* two sides: arms, then ends and Sniff; max^n: covered sides, stubs */
    int8_t turn, drawn, pos, sniff;
} SKey;

#define SV_UNBOUNDED INT16_MAX /* an entry's `over` when its lines never won */
#define SV_NO_WIN (INT_MIN / 2)

typedef struct {
    SKey key;
    int32_t a, b, c;     /* two sides: low, high, unused; max^n: each side's gain */
    int16_t reach[3];    /* per side, the result holds for needs n with reach < n <= over */
    int16_t over[3];
    uint32_t gen;
    uint32_t work; /* nodes the result cost */
    int8_t best;   /* the best (or chosen) move's index, -1 none */
} SEntry;

typedef struct {
    SEntry *table;
    uint64_t mask;
    uint32_t gen;
    const VariantSpec *V;
    int seats, sides, nbone;
    int teams[MAX_SEATS];
    uint8_t bone[NT];
    int bone_pips[NT + 1];
    long long nodes, node_limit, check_at;
    double deadline; /* monotonic seconds; < 0: none */
    int reason;
    int lowest[3]; /* per side, the lowest positive need the lines searched reached, */
    int won[3];    /* and the highest need at a win (SV_NO_WIN: none) (_Search) */
    uint32_t history[1 << 15];
} Solver;

static SEntry *sv_table = NULL;
static uint32_t sv_generation = 0;
static int sv_table_busy = 0;

static double sv_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int sv_deduction(int pips) {
    int rest = pips % 5;
    return rest <= 2 ? pips - rest : pips + 5 - rest;
}

static int sv_pips(uint32_t h) {
    int pips = 0;
    while (h) {
        pips += PIPS[CTZ32(h)];
        h &= h - 1;
    }
    return pips;
}

/* Called when `nodes` reaches `check_at`: 1 (and the reason set) when the budget is spent. */
static int sv_check(Solver *sv) {
    if (sv->node_limit > 0 && sv->nodes >= sv->node_limit) {
        sv->reason = SV_OUT_NODES;
        return 1;
    }
    if (sv->deadline >= 0 && sv_now() >= sv->deadline) {
        sv->reason = SV_OUT_MILLIS;
        return 1;
    }
    long long next = sv->deadline >= 0 ? sv->nodes + SV_TIME_CHECK : LLONG_MAX;
    if (sv->node_limit > 0 && sv->node_limit < next) next = sv->node_limit;
    sv->check_at = next;
    return 0;
}

static int sv_blocked(const Solver *sv, const SNode *n) {
    uint32_t any = 0;
    for (int i = 0; i < sv->seats; i++) any |= n->hands[i];
    return !(any & n->L.playable);
}

static void sv_deductions(const Solver *sv, const SNode *n, int *ded) {
    for (int s = 0; s < sv->sides; s++) ded[s] = 0;
    for (int i = 0; i < sv->seats; i++) ded[sv->teams[i]] += sv_deduction(sv_pips(n->hands[i]));
}

/* _Search.step: make `move` (legal) at `n`. Its points in *got; 1 when the round ends
 * (per side the deductions taken in ded, none after a win), else 0 with the next node. */
static int sv_step(const Solver *sv, const SNode *n, int32_t move, SNode *c, int *got, int *ded) {
    int kind = move & 3, turn = n->turn;
    *c = *n;
    *got = 0;
    if (kind <= K_PLACE) {
        int t = move >> 2 & 31;
        c->hands[turn] ^= 1u << t;
        c->drawn = -1;
        place(&c->L, sv->V, move);
        int g = points_for(c->L.ends);
        *got = g;
        if (g) {
            int side = sv->teams[turn];
            c->needs[side] -= g;
            if (c->needs[side] <= 0) {
                for (int s = 0; s < sv->sides; s++) ded[s] = 0;
                return 1;
            }
        }
        if (!c->hands[turn] || (c->pos == sv->nbone && sv_blocked(sv, c))) {
            sv_deductions(sv, c, ded);
            return 1;
        }
        c->turn = (turn + 1) % sv->seats;
        return 0;
    }
    if (kind == K_DRAW) {
        int t = sv->bone[c->pos++];
        c->hands[turn] |= 1u << t;
        if ((1u << t) & c->L.playable) {
            c->drawn = t;
            return 0;
        }
        if (c->pos == sv->nbone && sv_blocked(sv, c)) {
            sv_deductions(sv, c, ded);
            return 1;
        }
        return 0;
    }
    c->turn = (turn + 1) % sv->seats;
    return 0;
}

/* _Search.settle: skip the passes forced with the boneyard empty. */
static void sv_settle(const Solver *sv, SNode *n) {
    if (n->drawn >= 0 || n->pos < sv->nbone) return;
    uint32_t playable = n->L.playable;
    while (!(n->hands[n->turn] & playable)) n->turn = (n->turn + 1) % sv->seats;
}

static int sv_legal(const Solver *sv, const SNode *n, int32_t *out) {
    const Layout *L = &n->L;
    uint32_t hand = n->hands[n->turn];
    if (n->drawn >= 0) return moves_for(L, sv->V, 1u << n->drawn, out);
    if (hand & L->playable) return moves_for(L, sv->V, hand, out);
    out[0] = n->pos < sv->nbone ? K_DRAW : K_PASS;
    return 1;
}

/* Per side: how many tiles its seats may still place (their hands and the boneyard). */
static int sv_tiles(const Solver *sv, const SNode *n, int side) {
    int tiles = sv->nbone - n->pos;
    for (int i = side; i < sv->seats; i += sv->sides) for (uint32_t h = n->hands[i]; h; h &= h - 1) tiles++;
    return tiles;
}

static void sv_key(const Solver *sv, const SNode *n, SKey *k) {
    const Layout *L = &n->L;
    memset(k, 0, sizeof *k);
    memcpy(k->hands, n->hands, sizeof k->hands);
    k->turn = (int8_t)n->turn;
    k->drawn = (int8_t)n->drawn;
    k->pos = (int8_t)n->pos;
    k->sniff = L->sniff;
    if (sv->sides == 2) {
        int codes[64], na = 0, sniff = L->sniff;
        for (int w = 0; w < 4; w++) {
            uint64_t o = L->open[w];
            uint64_t targets = o & ~((o << 1) & MIRRORS);
            while (targets) {
                int slot = w * 64 + CTZ64(targets);
                targets &= targets - 1;
                if ((slot >> 3) == sniff) continue;
                int code = 2 * SLOT_VALUE[slot] + IS_DBL[slot >> 3] + 1, j = na++;
                while (j > 0 && codes[j - 1] > code) {
                    codes[j] = codes[j - 1];
                    j--;
                }
                codes[j] = code;
            }
        }
        /* An arm a byte: a layout has at most four arms (two ends, two branches). */
        for (int i = 0; i < na && i < 32; i++)
            k->layout[i / 8] |= (uint64_t)codes[i] << (8 * (i % 8));
        k->layout[4] = (uint64_t)(uint32_t)L->ends | (uint64_t)(uint8_t)L->rule << 32 |
                       (uint64_t)(uint8_t)(sniff >= 0 ? L->covered[sniff] : -1) << 40;
    } else {
        memcpy(k->layout, L->covered, NT);
        k->layout[4] = (uint64_t)L->stubs | (uint64_t)(uint8_t)L->rule << 32;
    }
}

static uint64_t sv_hash(const SKey *k) {
    const uint64_t *w = (const uint64_t *)k;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof *k / 8; i++) {
        h ^= w[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return h;
}

/* _Search.enter: start following the lines of a node with these needs; `outer` keeps what
 * sv_leave needs. */
static inline void sv_enter(Solver *sv, const int *needs, int *outer) {
    for (int s = 0; s < sv->sides; s++) {
        outer[s] = sv->lowest[s];
        outer[3 + s] = sv->won[s];
        sv->lowest[s] = needs[s];
        sv->won[s] = SV_NO_WIN;
    }
}

/* _Search.rests_on: the result being found rests on lines reaching these needs. */
static inline void sv_rests_on(Solver *sv, const int *lowest, const int *won) {
    for (int s = 0; s < sv->sides; s++) {
        if (lowest[s] < sv->lowest[s]) sv->lowest[s] = lowest[s];
        if (won[s] > sv->won[s]) sv->won[s] = won[s];
    }
}

/* _Search.leave: a node's lines are lines of the enclosing node too. */
static inline void sv_leave(Solver *sv, const int *outer) { sv_rests_on(sv, outer, outer + 3); }

/* _Search.scored: a line searched brought `side` down to `need`. */
static inline void sv_scored(Solver *sv, int side, int need) {
    if (need > 0) {
        if (need < sv->lowest[side]) sv->lowest[side] = need;
    } else if (need > sv->won[side]) {
        sv->won[side] = need;
    }
}

#define SV_WAYS 4 /* entries a bucket */

/* Whether entry `e` holds at `needs`. */
static inline int sv_holds(const Solver *sv, const SEntry *e, const int *needs) {
    for (int s = 0; s < sv->sides; s++) {
        if (needs[s] <= e->reach[s]) return 0;
        if (e->over[s] != SV_UNBOUNDED && needs[s] > e->over[s]) return 0;
    }
    return 1;
}

/* The entry of the node `k` that holds at `needs` (_Search.lookup), the lines it rests on
 * then followed (sv_rests_on) when `follow`; else NULL. */
static SEntry *sv_probe(Solver *sv, const SKey *k, uint64_t h, const int *needs, int follow) {
    SEntry *e = sv->table + (h & sv->mask & ~(uint64_t)(SV_WAYS - 1));
    for (int i = 0; i < SV_WAYS; i++) {
        if (e[i].gen != sv->gen || memcmp(&e[i].key, k, sizeof *k) || !sv_holds(sv, &e[i], needs))
            continue;
        if (follow) {
            int lowest[3], won[3];
            for (int s = 0; s < sv->sides; s++) {
                lowest[s] = needs[s] - e[i].reach[s];
                won[s] = e[i].over[s] == SV_UNBOUNDED ? SV_NO_WIN : needs[s] - e[i].over[s];
            }
            sv_rests_on(sv, lowest, won);
        }
        return &e[i];
    }
    return NULL;
}

/* _Search.store: keep a result found at `needs` with the score range its lines allow: in
 * place of the node's entry that held at `needs` (superseded), else of a stale entry, else
 * of the one that cost the fewest nodes (the same node at other scores may stay). */
static void sv_store(Solver *sv, const SKey *k, uint64_t h, const int *needs, int a, int b,
                     int c, int best, long long work) {
    SEntry *e = sv->table + (h & sv->mask & ~(uint64_t)(SV_WAYS - 1)), *to = NULL;
    uint32_t w = work > 0xFFFFFFFFll ? 0xFFFFFFFFu : (uint32_t)work;
    for (int i = 0; i < SV_WAYS && !to; i++)
        if (e[i].gen == sv->gen && !memcmp(&e[i].key, k, sizeof *k) && sv_holds(sv, &e[i], needs))
            to = &e[i];
    for (int i = 0; i < SV_WAYS && !to; i++)
        if (e[i].gen != sv->gen) to = &e[i];
    if (!to) {
        to = &e[0];
        for (int i = 1; i < SV_WAYS; i++)
            if (e[i].work < to->work) to = &e[i];
    }
    to->key = *k;
    to->a = a;
    to->b = b;
    to->c = c;
    for (int s = 0; s < sv->sides; s++) {
        /* Points scored along a round's lines: at most 28 placements of 45, well in range. */
        to->reach[s] = (int16_t)(needs[s] - sv->lowest[s]);
        to->over[s] = sv->won[s] == SV_NO_WIN ? SV_UNBOUNDED : (int16_t)(needs[s] - sv->won[s]);
    }
    to->gen = sv->gen;
    to->work = w;
    to->best = (int8_t)best;
}

static inline int sv_hist(int32_t code) { return (code >> 2 & 0x1FFF) | (code >> 15) << 13; }

/* _Search._order: the table's best first, then by immediate points (most first), then by
 * history, then canonical. */
static void sv_order(const Solver *sv, const Layout *L, const int32_t *moves, int nm, int first,
                     int *order) {
    int pts[MAX_MOVES];
    uint32_t hist[MAX_MOVES];
    int k = 0;
    if (first >= 0) order[k++] = first;
    for (int i = 0; i < nm; i++) {
        pts[i] = points_for(ends_after(L, sv->V, moves[i]));
        hist[i] = sv->history[sv_hist(moves[i])];
    }
    int start = k;
    for (int i = 0; i < nm; i++) {
        if (i == first) continue;
        int j = k++;
        while (j > start) {
            int o = order[j - 1];
            if (pts[o] > pts[i] || (pts[o] == pts[i] && hist[o] >= hist[i])) break;
            order[j] = o;
            j--;
        }
        order[j] = i;
    }
}

static int sv_negamax(Solver *sv, const SNode *n, int alpha, int beta);

/* `move`'s value for `side` (the mover's), searched in the window (alpha, beta). */
static int sv_move_value(Solver *sv, const SNode *n, int32_t move, int side, int alpha,
                         int beta) {
    SNode c;
    int got, ded[3];
    int end = sv_step(sv, n, move, &c, &got, ded);
    if (got) sv_scored(sv, side, c.needs[side]);
    if (end) return got - ded[side] + ded[1 - side];
    sv_settle(sv, &c);
    if (sv->teams[c.turn] == side) return got + sv_negamax(sv, &c, alpha - got, beta - got);
    return got - sv_negamax(sv, &c, got - beta, got - alpha);
}

/* _Search.negamax: fail-soft; 0 with sv->reason set when the budget ran out. */
static int sv_negamax(Solver *sv, const SNode *n, int alpha, int beta) {
    int32_t moves[MAX_MOVES];
    int order[MAX_MOVES];
    if (++sv->nodes >= sv->check_at && sv_check(sv)) return 0;
    int nm = sv_legal(sv, n, moves);
    int side = sv->teams[n->turn];
    if (nm == 1) return sv_move_value(sv, n, moves[0], side, alpha, beta);
    SKey key;
    sv_key(sv, n, &key);
    uint64_t h = sv_hash(&key);
    long long start = sv->nodes;
    int low = -SV_INF, high = SV_INF, first = -1, outer[6];
    sv_enter(sv, n->needs, outer);
    SEntry *e = sv_probe(sv, &key, h, n->needs, 1);
    if (e) {
        low = e->a;
        high = e->b;
        first = e->best < nm ? e->best : -1;
        if (low >= beta || low == high || high <= alpha) {
            sv_leave(sv, outer);
            return low >= beta || low == high ? low : high;
        }
    }
    int a = alpha > low ? alpha : low, b = beta < high ? beta : high;
    int a0 = a, b0 = b, best = INT32_MIN, best_i = -1;
    sv_order(sv, &n->L, moves, nm, first, order);
    for (int k = 0; k < nm; k++) {
        int i = order[k];
        int v = sv_move_value(sv, n, moves[i], side, a, b);
        if (sv->reason) return 0;
        if (v > best) {
            best = v;
            best_i = i;
            if (v > a) {
                a = v;
                if (a >= b) break;
            }
        }
    }
    if (best > a0) sv->history[sv_hist(moves[best_i])]++;
    if (best <= a0) {
        if (best < high) high = best;
        best_i = first;
    } else if (best >= b0) {
        if (best > low) low = best;
    } else {
        low = high = best;
    }
    sv_store(sv, &key, h, n->needs, low, high, 0, best_i, sv->nodes - start);
    sv_leave(sv, outer);
    return best;
}

/* max^n's integer score of `gains` for `side`: value_for_side scaled by sides - 1. */
static inline int sv_maxn_score(const Solver *sv, const int *gains, int side) {
    int sum = 0;
    for (int s = 0; s < sv->sides; s++) sum += gains[s];
    return sv->sides * gains[side] - sum;
}

static void sv_maxn(Solver *sv, const SNode *n, int *gains);

/* _Search.move_gains: every side's gain from `n` on when `move` is made there. */
static void sv_move_gains(Solver *sv, const SNode *n, int32_t move, int *gains) {
    SNode c;
    int got, ded[3];
    int side = sv->teams[n->turn];
    int end = sv_step(sv, n, move, &c, &got, ded);
    if (got) sv_scored(sv, side, c.needs[side]);
    if (end) {
        for (int s = 0; s < sv->sides; s++) gains[s] = -ded[s];
    } else {
        sv_settle(sv, &c);
        sv_maxn(sv, &c, gains);
    }
    gains[side] += got;
}

/* _Search.maxn: sv->reason set (gains meaningless) when the budget ran out. */
static void sv_maxn(Solver *sv, const SNode *n, int *gains) {
    int32_t moves[MAX_MOVES];
    if (++sv->nodes >= sv->check_at && sv_check(sv)) return;
    int nm = sv_legal(sv, n, moves);
    if (nm == 1) {
        sv_move_gains(sv, n, moves[0], gains);
        return;
    }
    SKey key;
    sv_key(sv, n, &key);
    uint64_t h = sv_hash(&key);
    SEntry *e = sv_probe(sv, &key, h, n->needs, 1);
    if (e) {
        gains[0] = e->a;
        gains[1] = e->b;
        gains[2] = e->c;
        return;
    }
    int outer[6];
    sv_enter(sv, n->needs, outer);
    long long start = sv->nodes;
    int side = sv->teams[n->turn], top = INT32_MIN, best_i = -1, g[3], best[3] = {0, 0, 0};
    for (int i = 0; i < nm; i++) {
        sv_move_gains(sv, n, moves[i], g);
        if (sv->reason) return;
        int score = sv_maxn_score(sv, g, side);
        if (score > top) {
            top = score;
            best_i = i;
            memcpy(best, g, sizeof best);
        }
    }
    memcpy(gains, best, sizeof best);
    sv_store(sv, &key, h, n->needs, best[0], best[1], best[2], best_i, sv->nodes - start);
    sv_leave(sv, outer);
}

/* The canonical best line of two sides (solver._line_two): `move` (of value `value`), then
 * at each node the first move in canonical order whose value is the node's (a null-window
 * search proves it), to the round's end. Its length, or -1 when the budget ran out. */
static int sv_line_two(Solver *sv, const SNode *root, int32_t move, int value, int32_t *line) {
    SNode node = *root, c;
    int32_t moves[MAX_MOVES];
    int n = 0, got, ded[3], side = sv->teams[node.turn];
    line[n++] = move;
    for (;;) {
        if (sv_step(sv, &node, move, &c, &got, ded)) return n;
        value -= got;
        if (sv->teams[c.turn] != side) value = -value;
        node = c;
        side = sv->teams[node.turn];
        int nm = sv_legal(sv, &node, moves), found = nm == 1 ? 0 : -1;
        for (int i = 0; found < 0 && i < nm; i++) {
            int v = sv_move_value(sv, &node, moves[i], side, value - 1, value);
            if (sv->reason) return -1;
            if (v >= value) found = i;
        }
        if (found < 0 || n >= SV_MAX_LINE) return -2; /* no lawful round gets here */
        move = moves[found];
        line[n++] = move;
    }
}

/* max^n's line (solver._line_maxn): at each node the move max^n chose (searched again
 * when the table has lost it). Its length, or -1 when the budget ran out. */
static int sv_line_maxn(Solver *sv, const SNode *root, int32_t move, int32_t *line) {
    SNode node = *root, c;
    int32_t moves[MAX_MOVES];
    int n = 0, got, ded[3], g[3];
    line[n++] = move;
    for (;;) {
        if (sv_step(sv, &node, move, &c, &got, ded)) return n;
        node = c;
        int nm = sv_legal(sv, &node, moves), side = sv->teams[node.turn], found = 0;
        if (nm > 1) {
            int top = INT32_MIN;
            for (int i = 0; i < nm; i++) {
                sv_move_gains(sv, &node, moves[i], g);
                if (sv->reason) return -1;
                int score = sv_maxn_score(sv, g, side);
                if (score > top) {
                    top = score;
                    found = i;
                }
            }
        }
        if (n >= SV_MAX_LINE) return -2;
        move = moves[found];
        line[n++] = move;
    }
}

/* _Search.gain_bounds: per side, bounds on its gain from `n` from counting alone. */
static void sv_gain_bounds(const Solver *sv, const SNode *n, int *lo, int *hi) {
    int rest = sv->bone_pips[n->pos];
    for (int s = 0; s < sv->sides; s++) {
        int worst = 0;
        for (int i = s; i < sv->seats; i += sv->sides)
            worst += sv_deduction(sv_pips(n->hands[i]) + rest);
        lo[s] = -worst;
        hi[s] = SV_MAX_PLACEMENT * sv_tiles(sv, n, s);
    }
}

/* A root move's bounds when its search did not finish (solver._two_not_solved and
 * _maxn_not_solved): exact when the move ends the round or its child is in the table, else
 * from counting. Two sides: the value's bounds in lo[0], hi[0]; max^n: each side's gain. */
static int sv_move_bounds(Solver *sv, const SNode *root, int32_t move, int *lo, int *hi) {
    SNode c;
    int got, ded[3], side = sv->teams[root->turn];
    if (sv_step(sv, root, move, &c, &got, ded)) {
        for (int s = 0; s < sv->sides; s++) lo[s] = hi[s] = (s == side ? got : 0) - ded[s];
        if (sv->sides == 2) lo[0] = hi[0] = got - ded[side] + ded[1 - side];
        return 1;
    }
    sv_settle(sv, &c);
    int glo[3], ghi[3];
    sv_gain_bounds(sv, &c, glo, ghi);
    SKey key;
    sv_key(sv, &c, &key);
    SEntry *e = sv_probe(sv, &key, sv_hash(&key), c.needs, 0);
    if (sv->sides == 2) {
        int cs = sv->teams[c.turn];
        int low = glo[cs] - ghi[1 - cs], high = ghi[cs] - glo[1 - cs];
        if (e) { /* only nodes with a choice are stored */
            if (e->a > low) low = e->a;
            if (e->b < high) high = e->b;
        }
        if (cs != side) {
            int t = low;
            low = -high;
            high = -t;
        }
        lo[0] = got + low;
        hi[0] = got + high;
        return lo[0] == hi[0];
    }
    for (int s = 0; s < sv->sides; s++) {
        int add = s == side ? got : 0;
        if (e) {
            int v = s == 0 ? e->a : s == 1 ? e->b : e->c;
            lo[s] = hi[s] = v + add;
        } else {
            lo[s] = glo[s] + add;
            hi[s] = ghi[s] + add;
        }
    }
    return e != NULL;
}

/* The search of one solve, without the interpreter: the root's moves' values (two sides) or
 * gains (max^n) in lo/hi (equal where proven), the best line when all are. */
typedef struct {
    int nm, nline, failed;
    int32_t moves[MAX_MOVES];
    int lo[MAX_MOVES][3], hi[MAX_MOVES][3];
    int32_t line[SV_MAX_LINE];
} SolveOut;

static void sv_run(Solver *sv, const SNode *root, SolveOut *out) {
    int side = sv->teams[root->turn], done[MAX_MOVES] = {0}, order[MAX_MOVES], g[3];
    int nm = out->nm = sv_legal(sv, root, out->moves);
    out->nline = 0;
    out->failed = 0;
    int outer[6];
    sv_enter(sv, root->needs, outer); /* the root has no enclosing node */
    if (sv->sides == 2) {
        sv_order(sv, &root->L, out->moves, nm, -1, order);
        for (int k = 0; k < nm; k++) {
            int i = order[k];
            int v = sv_move_value(sv, root, out->moves[i], side, -SV_INF, SV_INF);
            if (sv->reason) break;
            out->lo[i][0] = out->hi[i][0] = v;
            done[i] = 1;
        }
    } else {
        for (int i = 0; i < nm; i++) {
            sv_move_gains(sv, root, out->moves[i], g);
            if (sv->reason) break;
            memcpy(out->lo[i], g, sizeof g);
            memcpy(out->hi[i], g, sizeof g);
            done[i] = 1;
        }
    }
    if (!sv->reason) {
        int best = 0, top = INT32_MIN;
        for (int i = 0; i < nm; i++) {
            int score = sv->sides == 2 ? out->lo[i][0] : sv_maxn_score(sv, out->lo[i], side);
            if (score > top) {
                top = score;
                best = i;
            }
        }
        int n = sv->sides == 2 ? sv_line_two(sv, root, out->moves[best], top, out->line)
                               : sv_line_maxn(sv, root, out->moves[best], out->line);
        if (n == -2) out->failed = 1;
        out->nline = n > 0 ? n : 0;
        if (n >= 0) return;
    }
    for (int i = 0; i < nm; i++)
        if (!done[i]) sv_move_bounds(sv, root, out->moves[i], out->lo[i], out->hi[i]);
}

static PyObject *sv_bounds_tuple(const int (*v)[3], int nm, int sides) {
    PyObject *t = PyTuple_New(nm);
    if (!t) return NULL;
    for (int i = 0; i < nm; i++) {
        PyObject *x = sides == 2 ? PyLong_FromLong(v[i][0]) : int_tuple(v[i], sides);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* solve(packed_state, node_limit, millis) -> (reason, nodes, moves, lows, highs, line):
 * solver.solve's search (node_limit 0: none; millis 0: none; not both). `reason` 0 when
 * solved, 1 when the node budget ran out, 2 the time budget. Per legal move in canonical
 * order (`moves`, their codes): two sides, its value's bounds; three, each side's gain's
 * bounds (a tuple); equal where proven. `line` the best line's codes (empty unless solved). */
static PyObject *k_solve(PyObject *self, PyObject *args) {
    PyObject *packed, *result = NULL;
    long long node_limit;
    double millis;
    State S;
    (void)self;
    if (!PyArg_ParseTuple(args, "OLd", &packed, &node_limit, &millis)) return NULL;
    if (!ready() || parse_state(packed, &S)) return NULL;
    if (node_limit < 0 || !(millis >= 0) || (node_limit == 0 && millis == 0)) {
        bad("solver kernel: a budget is a node limit and/or a time limit, positive");
        return NULL;
    }
    if (!sv_table) {
        sv_table = PyMem_RawCalloc((size_t)1 << SOLVER_TT_BITS, sizeof(SEntry));
        if (!sv_table) return PyErr_NoMemory();
    }
    Solver *sv = PyMem_RawCalloc(1, sizeof *sv);
    SolveOut *out = PyMem_RawMalloc(sizeof *out);
    int own = sv_table_busy; /* another thread's solve holds the shared table */
    SEntry *table = own ? PyMem_RawCalloc((size_t)1 << SOLVER_TT_BITS, sizeof(SEntry)) : sv_table;
    if (!sv || !out || !table) {
        PyMem_RawFree(sv);
        PyMem_RawFree(out);
        if (own) PyMem_RawFree(table);
        return PyErr_NoMemory();
    }
    if (!own) {
        sv_table_busy = 1;
        if (++sv_generation == 0) {
            memset(sv_table, 0, ((size_t)1 << SOLVER_TT_BITS) * sizeof(SEntry));
            sv_generation = 1;
        }
    }
    sv->table = table;
    sv->mask = ((uint64_t)1 << SOLVER_TT_BITS) - 1;
    sv->gen = own ? 1 : sv_generation;
    sv->V = &VARIANTS[S.variant];
    sv->seats = S.seats;
    sv->sides = S.sides;
    sv->nbone = S.nbone;
    for (int i = 0; i < S.seats; i++) sv->teams[i] = team_of(i, S.seats);
    memcpy(sv->bone, S.bone, sizeof sv->bone);
    sv->bone_pips[S.nbone] = 0;
    for (int i = S.nbone - 1; i >= 0; i--) sv->bone_pips[i] = sv->bone_pips[i + 1] + PIPS[S.bone[i]];
    sv->node_limit = node_limit;
    sv->deadline = -1;
    SNode root;
    memset(&root, 0, sizeof root);
    root.L = S.L;
    memcpy(root.hands, S.hands, sizeof root.hands);
    root.turn = S.turn;
    root.drawn = S.drawn;
    root.pos = 0;
    for (int s = 0; s < S.sides; s++) root.needs[s] = S.target - S.scores[s];
    Py_BEGIN_ALLOW_THREADS
    if (millis > 0) sv->deadline = sv_now() + millis / 1000.0;
    sv->check_at = 0;
    sv_check(sv); /* sets the first check; a budget cannot be spent at 0 nodes */
    sv->reason = SV_SOLVED;
    sv_run(sv, &root, out);
    Py_END_ALLOW_THREADS
    if (own)
        PyMem_RawFree(table);
    else
        sv_table_busy = 0;
    if (out->failed) {
        PyErr_SetString(PyExc_RuntimeError, "solver kernel: no move reaches the proven value");
    } else {
        int codes[MAX_MOVES];
        for (int i = 0; i < out->nm; i++) codes[i] = out->moves[i];
        int *line = PyMem_RawMalloc(sizeof(int) * (size_t)(out->nline ? out->nline : 1));
        if (!line) {
            PyErr_NoMemory();
        } else {
            for (int i = 0; i < out->nline; i++) line[i] = out->line[i];
            result = Py_BuildValue("(iLNNNN)", sv->reason, sv->nodes, int_tuple(codes, out->nm),
                                   sv_bounds_tuple((const int(*)[3])out->lo, out->nm, S.sides),
                                   sv_bounds_tuple((const int(*)[3])out->hi, out->nm, S.sides),
                                   int_tuple(line, out->nline));
            PyMem_RawFree(line);
        }
    }
    PyMem_RawFree(sv);
    PyMem_RawFree(out);
    return result;
}

/* -- Xoshiro256: the bots' generator (prng.py's, drawn without the interpreter) ---- */

/* The bots draw one `below(n)` per choice; in pure Python that costs about a
 * microsecond, here a method call. Same seeding, `next` and `below` as prng.py's
 * class (rng_seed, rng_next, rng_below above), so a bot's choices do not depend on
 * which one it was given: tests/test_playout_prng.py compares the two. */
typedef struct {
    PyObject_HEAD
    Rng rng;
} GenObject;

static PyObject *gen_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *seed_o;
    uint64_t seed;
    static char *kwlist[] = {"seed", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Xoshiro256", kwlist, &seed_o)) return NULL;
    if (!PyLong_Check(seed_o) || PyBool_Check(seed_o)) {
        PyErr_SetString(PyExc_ValueError, "a seed is an integer from 0 to 2**64 - 1");
        return NULL;
    }
    if (read_seed(seed_o, &seed)) return NULL;
    GenObject *self = (GenObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    rng_seed(&self->rng, seed);
    return (PyObject *)self;
}

static PyObject *gen_next(GenObject *self, PyObject *unused) {
    (void)unused;
    return PyLong_FromUnsignedLongLong(rng_next(&self->rng));
}

static PyObject *gen_below(GenObject *self, PyObject *arg) {
    unsigned long long n = PyLong_AsUnsignedLongLong(arg);
    if (n == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError))
            return NULL;
        PyErr_Clear();
        n = 0; /* negative, too large or not an int: refused below */
        if (!PyLong_Check(arg)) {
            PyErr_Format(PyExc_TypeError, "below(n) needs an int, not %.100s",
                         Py_TYPE(arg)->tp_name);
            return NULL;
        }
    }
    if (n < 1 || n > 0xFFFFFFFFull) {
        PyErr_Format(PyExc_ValueError, "below(n) needs 1 <= n < 2**32, not %R", arg);
        return NULL;
    }
    return PyLong_FromUnsignedLong(rng_below(&self->rng, (uint32_t)n));
}

static PyObject *gen_state(GenObject *self, void *closure) {
    (void)closure;
    const uint64_t *s = self->rng.s;
    return Py_BuildValue("(KKKK)", (unsigned long long)s[0], (unsigned long long)s[1],
                         (unsigned long long)s[2], (unsigned long long)s[3]);
}

static PyMethodDef gen_methods[] = {
    {"next", (PyCFunction)gen_next, METH_NOARGS, "next() -> the next 64-bit output"},
    {"below", (PyCFunction)gen_below, METH_O,
     "below(n) -> a uniform index in [0, n), 1 <= n < 2**32 (Lemire's method)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef gen_getset[] = {
    {"state", (getter)gen_state, NULL, "(s0, s1, s2, s3), as prng.Xoshiro256 holds them", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GenType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sniff._kernel.Xoshiro256",
    .tp_basicsize = sizeof(GenObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Xoshiro256(seed): prng.Xoshiro256 in C (same seeding, next and below).",
    .tp_new = gen_new,
    .tp_methods = gen_methods,
    .tp_getset = gen_getset,
};

static PyMethodDef methods[] = {
    {"configure", k_configure, METH_VARARGS,
     "configure(plain_table, variants): the engine's contribution tables and variants."},
    {"playout", k_playout, METH_VARARGS,
     "playout(packed_state, policies, seed, first, record) -> (moves, points, end, finisher, "
     "winner, deductions, scores, actions)"},
    {"rollouts", k_rollouts, METH_VARARGS,
     "rollouts(packed_states, policies, seeds, first) -> (gains, ends, winners, actions)"},
    {"play_matches", k_play_matches, METH_VARARGS,
     "play_matches(variant, seats, target, round_limit, policies, seeds, bot_seeds, record) -> "
     "(matches, rounds, decisions, moves): int32 rows as bytes"},
    {"columns", k_columns, METH_VARARGS,
     "columns(rows, width) -> the int32 rows' values column by column"},
    {"bot_seed", k_bot_seed, METH_VARARGS, "bot_seed(seed, seat) -> seeds.bot_seed(seed, seat)"},
    {"deal", k_deal, METH_VARARGS, "deal(seed, round, seats) -> (tiles in dealt order, lot)"},
    {"solve", k_solve, METH_VARARGS,
     "solve(packed_state, node_limit, millis) -> (reason, nodes, moves, lows, highs, line)"},
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
    PyObject *m;
    init_set();
    if (PyType_Ready(&GenType) < 0) return NULL;
    m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&GenType);
    if (PyModule_AddObject(m, "Xoshiro256", (PyObject *)&GenType) < 0) {
        Py_DECREF(&GenType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

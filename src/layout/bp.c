/* bp.c — Balanced Partitioning by recursive bisection (Hoag et al., LCTES 2023).
 *
 * Each bisection splits its node range in two halves (initially by input
 * order), then greedily swaps nodes between the halves to minimise, over the
 * utilities, the "uniform log-gap" cost -(L·log2(L+1) + R·log2(R+1)) of a
 * utility with L neighbours left and R right: convex, so it rewards putting a
 * utility's neighbours on one side. Halves recurse independently, which makes
 * them the unit of parallelism; each bisection draws from its own RNG seeded
 * by (seed, bucket id), so threads never change the result. */
#include "layout/layout.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define BP_LOG_CACHE 16384
#define BP_MAX_THREADS 64
/* Below this many nodes a thread costs more than the work it would take. */
#define BP_PARALLEL_MIN_NODES 256

void pk_bp_config_default(pk_bp_config *c)
{
    c->split_depth = 18;
    c->iterations = 40;
    c->skip_probability = 0.1;
    c->seed = 0;
    c->threads = 0;
}

typedef struct bp_shared {
    const pk_bp_problem *p;
    const pk_bp_config *cfg;
    const float *log2p1;    /* log2(x + 1) for x < BP_LOG_CACHE */
    unsigned parallel_depth;
} bp_shared;

/* Per-thread scratch: utility id → local id (UINT32_MAX when unused). */
typedef struct bp_scratch {
    uint32_t *map;
} bp_scratch;

static inline float bp_log2p1(const bp_shared *s, uint32_t x)
{
    return x < BP_LOG_CACHE ? s->log2p1[x] : (float)log2((double)x + 1.0);
}

static inline float bp_cost(const bp_shared *s, uint32_t l, uint32_t r)
{
    return -((float)l * bp_log2p1(s, l) + (float)r * bp_log2p1(s, r));
}

static inline uint64_t bp_rng_next(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double bp_rng_unit(uint64_t *st)
{
    return (double)(bp_rng_next(st) >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sort keys for the move lists: gain descending, then position ascending
 * (ties keep input order), packed in one u64 so a radix sort can order them. */
static inline uint64_t bp_gain_key(float gain, uint32_t pos)
{
    uint32_t u;
    memcpy(&u, &gain, sizeof u);
    u ^= (u >> 31) ? 0xffffffffu : 0x80000000u; /* ascending-sortable float bits */
    return (uint64_t)(~u) << 32 | pos;
}

/* LSD radix sort, 8-bit digits, skipping digits that are equal everywhere
 * (the high position bits usually are). Small inputs: insertion sort. */
static void bp_sort_keys(uint64_t *a, uint64_t *tmp, size_t n)
{
    if (n <= 48) {
        for (size_t i = 1; i < n; i++) {
            uint64_t x = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1] > x) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    uint64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[((src[i] >> shift) & 0xff) + 1]++;
        if (cnt[((src[0] >> shift) & 0xff) + 1] == n)
            continue;
        for (int d = 0; d < 256; d++)
            cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* Local view of one bisection: the utilities that can change the cost
 * (connected to at least 2 and fewer than all nodes of the range). */
typedef struct bp_local {
    size_t *off;         /* n + 1 */
    uint32_t *ut;        /* local utility ids */
    uint32_t n_ut;
    uint32_t *cnt[2];    /* neighbours on the left / right */
    float *gain[2];      /* cached gain of moving one neighbour L→R / R→L */
    uint8_t *valid;
    float *weight;
    uint8_t *side;       /* per node position */
    float *node_gain;    /* per node position, this iteration */
    uint64_t *gl, *gr, *tmp;
} bp_local;

static void bp_local_free(bp_local *L)
{
    free(L->off); free(L->ut); free(L->cnt[0]); free(L->cnt[1]);
    free(L->gain[0]); free(L->gain[1]); free(L->valid); free(L->weight);
    free(L->side); free(L->node_gain); free(L->gl); free(L->gr); free(L->tmp);
}

static int bp_local_build(const bp_shared *s, bp_scratch *sc, const uint32_t *nodes, size_t n,
                          bp_local *L)
{
    const pk_bp_problem *p = s->p;
    memset(L, 0, sizeof *L);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += p->util_off[nodes[i] + 1] - p->util_off[nodes[i]];
    L->off = malloc((n + 1) * sizeof *L->off);
    L->ut = malloc((m ? m : 1) * sizeof *L->ut);
    uint32_t *touched = malloc((m ? m : 1) * sizeof *touched);
    uint32_t *deg = malloc((m ? m : 1) * sizeof *deg);
    if (!L->off || !L->ut || !touched || !deg) {
        free(touched); free(deg);
        return -1;
    }
    /* First pass: provisional ids in order of first appearance, degrees. */
    uint32_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = nodes[i];
        for (size_t k = p->util_off[v]; k < p->util_off[v + 1]; k++) {
            uint32_t u = p->utils[k];
            if (sc->map[u] == UINT32_MAX) {
                sc->map[u] = nt;
                touched[nt] = u;
                deg[nt] = 0;
                nt++;
            }
            deg[sc->map[u]]++;
        }
    }
    /* Keep the utilities that can matter; renumber densely. */
    uint32_t nk = 0;
    for (uint32_t t = 0; t < nt; t++) {
        if (deg[t] >= 2 && deg[t] < n)
            deg[t] = nk++;
        else
            deg[t] = UINT32_MAX;
    }
    size_t e = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = nodes[i];
        L->off[i] = e;
        for (size_t k = p->util_off[v]; k < p->util_off[v + 1]; k++) {
            uint32_t id = deg[sc->map[p->utils[k]]];
            if (id != UINT32_MAX)
                L->ut[e++] = id;
        }
    }
    L->off[n] = e;
    L->n_ut = nk;
    size_t un = nk ? nk : 1;
    L->weight = malloc(un * sizeof *L->weight);
    if (L->weight) {
        for (uint32_t t = 0; t < nt; t++)
            if (deg[t] != UINT32_MAX)
                L->weight[deg[t]] = p->util_weight ? (float)p->util_weight[touched[t]] : 1.0f;
    }
    for (uint32_t t = 0; t < nt; t++)
        sc->map[touched[t]] = UINT32_MAX;
    free(touched);
    free(deg);
    L->cnt[0] = calloc(un, sizeof(uint32_t));
    L->cnt[1] = calloc(un, sizeof(uint32_t));
    L->gain[0] = malloc(un * sizeof(float));
    L->gain[1] = malloc(un * sizeof(float));
    L->valid = calloc(un, 1);
    L->side = malloc(n);
    L->node_gain = malloc(n * sizeof *L->node_gain);
    L->gl = malloc(n * sizeof *L->gl);
    L->gr = malloc(n * sizeof *L->gr);
    L->tmp = malloc(n * sizeof *L->tmp);
    if (!L->weight || !L->cnt[0] || !L->cnt[1] || !L->gain[0] || !L->gain[1] || !L->valid ||
        !L->side || !L->node_gain || !L->gl || !L->gr || !L->tmp)
        return -1;
    return 0;
}

static bool bp_move(const bp_local *L, size_t i, double skip, uint64_t *rng)
{
    if (skip > 0 && bp_rng_unit(rng) < skip)
        return false;
    uint8_t from = L->side[i], to = (uint8_t)!from;
    for (size_t k = L->off[i]; k < L->off[i + 1]; k++) {
        uint32_t u = L->ut[k];
        L->cnt[from][u]--;
        L->cnt[to][u]++;
        L->valid[u] = 0;
    }
    L->side[i] = to;
    return true;
}

/* Greedy swap iterations; on return L->side holds the partition. */
static void bp_iterate(const bp_shared *s, bp_local *L, size_t n, uint64_t *rng)
{
    size_t half = (n + 1) / 2;
    for (size_t i = 0; i < n; i++) {
        L->side[i] = i >= half;
        for (size_t k = L->off[i]; k < L->off[i + 1]; k++)
            L->cnt[L->side[i]][L->ut[k]]++;
    }
    if (L->n_ut == 0)
        return;
    for (unsigned it = 0; it < s->cfg->iterations; it++) {
        for (uint32_t u = 0; u < L->n_ut; u++) {
            if (L->valid[u])
                continue;
            uint32_t l = L->cnt[0][u], r = L->cnt[1][u];
            float c = bp_cost(s, l, r), w = L->weight[u];
            L->gain[0][u] = l > 0 ? (c - bp_cost(s, l - 1, r + 1)) * w : 0.0f;
            L->gain[1][u] = r > 0 ? (c - bp_cost(s, l + 1, r - 1)) * w : 0.0f;
            L->valid[u] = 1;
        }
        size_t cnt_l = 0;
        float max_l = -INFINITY, max_r = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const float *g = L->gain[L->side[i]];
            float sum = 0.0f;
            for (size_t k = L->off[i]; k < L->off[i + 1]; k++)
                sum += g[L->ut[k]];
            L->node_gain[i] = sum;
            if (L->side[i] == 0) {
                cnt_l++;
                max_l = sum > max_l ? sum : max_l;
            } else {
                max_r = sum > max_r ? sum : max_r;
            }
        }
        /* Only nodes that could take part in a move need sorting: a pair
         * moves only if gl + gr > 0, so a left node with gl <= -max(gr) is
         * never reached (and likewise on the right); positive gains are
         * always kept for the rebalancing moves below. Dropped nodes all rank
         * after the kept ones, so the outcome is that of a full sort. */
        float cut_l = -max_r < 0.0f ? -max_r : 0.0f, cut_r = -max_l < 0.0f ? -max_l : 0.0f;
        size_t nl = 0, nr = 0;
        for (size_t i = 0; i < n; i++) {
            float g = L->node_gain[i];
            if (L->side[i] == 0) {
                if (g > cut_l)
                    L->gl[nl++] = bp_gain_key(g, (uint32_t)i);
            } else if (g > cut_r) {
                L->gr[nr++] = bp_gain_key(g, (uint32_t)i);
            }
        }
        bp_sort_keys(L->gl, L->tmp, nl);
        bp_sort_keys(L->gr, L->tmp, nr);
        const float *ng = L->node_gain;
        size_t moved = 0, pairs = nl < nr ? nl : nr, k = 0;
        size_t cur_l = cnt_l;
        for (; k < pairs; k++) {
            uint32_t pl = (uint32_t)L->gl[k], pr = (uint32_t)L->gr[k];
            if (ng[pl] + ng[pr] <= 0.0f)
                break;
            if (bp_move(L, pl, s->cfg->skip_probability, rng)) {
                moved++;
                cur_l--;
            }
            if (bp_move(L, pr, s->cfg->skip_probability, rng)) {
                moved++;
                cur_l++;
            }
        }
        /* Skipped moves leave the halves off balance, and then the pairing
         * alone can get stuck with misplaced nodes on the larger side (their
         * partners would lose more than they gain). Single beneficial moves
         * from the larger to the smaller side improve both the cost and the
         * balance (LLVM does not do this). */
        size_t cur_r = n - cur_l;
        bool left_big = cur_l > cur_r;
        const uint64_t *big = left_big ? L->gl : L->gr;
        size_t nbig = left_big ? nl : nr, diff = left_big ? cur_l - cur_r : cur_r - cur_l;
        for (size_t j = k; j < nbig && diff >= 2 && ng[(uint32_t)big[j]] > 0.0f; j++) {
            uint32_t pb = (uint32_t)big[j];
            if (L->side[pb] != (left_big ? 0 : 1))
                continue;
            bp_move(L, pb, 0.0, rng);
            moved++;
            diff -= 2;
        }
        if (moved == 0)
            break;
    }
}

typedef struct bp_task {
    const bp_shared *s;
    bp_scratch *sc;
    uint32_t *nodes;
    size_t n;
    unsigned depth;
    uint64_t bucket;
    int rc;
} bp_task;

static int bp_bisect(const bp_shared *s, bp_scratch *sc, uint32_t *nodes, size_t n,
                     unsigned depth, uint64_t bucket);

static void *bp_task_main(void *arg)
{
    bp_task *t = arg;
    t->rc = bp_bisect(t->s, t->sc, t->nodes, t->n, t->depth, t->bucket);
    return NULL;
}

static int bp_bisect(const bp_shared *s, bp_scratch *sc, uint32_t *nodes, size_t n,
                     unsigned depth, uint64_t bucket)
{
    /* Sorting by node index = by input order: the initial split, and the
     * final order of a leaf. */
    qsort(nodes, n, sizeof *nodes, cmp_u32);
    if (n <= 1 || depth >= s->cfg->split_depth)
        return 0;
    uint64_t rng = pk_hash64(s->cfg->seed * 0x9e3779b97f4a7c15ULL ^ pk_hash64(bucket));
    bp_local L;
    if (bp_local_build(s, sc, nodes, n, &L) != 0) {
        bp_local_free(&L);
        return -1;
    }
    bp_iterate(s, &L, n, &rng);
    /* Stable partition: left side first. */
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        bp_local_free(&L);
        return -1;
    }
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        if (L.side[i] == 0)
            tmp[nl++] = nodes[i];
    size_t j = nl;
    for (size_t i = 0; i < n; i++)
        if (L.side[i] == 1)
            tmp[j++] = nodes[i];
    memcpy(nodes, tmp, n * sizeof *nodes);
    free(tmp);
    bp_local_free(&L);

    if (depth < s->parallel_depth && n >= BP_PARALLEL_MIN_NODES && nl > 0 && nl < n) {
        bp_scratch sc2;
        sc2.map = malloc((size_t)(s->p->n_utils ? s->p->n_utils : 1) * sizeof *sc2.map);
        if (sc2.map) {
            memset(sc2.map, 0xff, (size_t)(s->p->n_utils ? s->p->n_utils : 1) * sizeof *sc2.map);
            bp_task t = {s, &sc2, nodes, nl, depth + 1, 2 * bucket, 0};
            pthread_t th;
            if (pthread_create(&th, NULL, bp_task_main, &t) == 0) {
                int rc = bp_bisect(s, sc, nodes + nl, n - nl, depth + 1, 2 * bucket + 1);
                pthread_join(th, NULL);
                free(sc2.map);
                return rc | t.rc;
            }
            free(sc2.map);
        }
        /* No thread: fall through and do both halves here (same result). */
    }
    if (bp_bisect(s, sc, nodes, nl, depth + 1, 2 * bucket) != 0)
        return -1;
    return bp_bisect(s, sc, nodes + nl, n - nl, depth + 1, 2 * bucket + 1);
}

int pk_bp_run(const pk_bp_problem *p, const pk_bp_config *cfg, uint32_t *order, pk_err *err)
{
    if (p->n_nodes >= UINT32_MAX)
        return pk_err_set(err, "balanced partitioning: too many nodes (%zu)", p->n_nodes);
    for (size_t i = 0; i < p->n_nodes; i++) {
        if (p->util_off[i + 1] < p->util_off[i])
            return pk_err_set(err, "balanced partitioning: bad utility offsets at node %zu", i);
        for (size_t k = p->util_off[i]; k < p->util_off[i + 1]; k++)
            if (p->utils[k] >= p->n_utils)
                return pk_err_set(err, "balanced partitioning: node %zu has utility %u >= %u",
                                  i, p->utils[k], p->n_utils);
    }
    for (size_t i = 0; i < p->n_nodes; i++)
        order[i] = (uint32_t)i;
    if (p->n_nodes <= 1)
        return 0;

    float *lg = malloc(BP_LOG_CACHE * sizeof *lg);
    bp_scratch sc = {malloc((size_t)(p->n_utils ? p->n_utils : 1) * sizeof(uint32_t))};
    if (!lg || !sc.map) {
        free(lg); free(sc.map);
        return pk_err_set(err, "balanced partitioning: out of memory");
    }
    for (uint32_t x = 0; x < BP_LOG_CACHE; x++)
        lg[x] = (float)log2((double)x + 1.0);
    memset(sc.map, 0xff, (size_t)(p->n_utils ? p->n_utils : 1) * sizeof(uint32_t));

    unsigned threads = cfg->threads;
    if (threads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (unsigned)c : 1;
    }
    if (threads > BP_MAX_THREADS)
        threads = BP_MAX_THREADS;
    unsigned pd = 0;
    while ((1u << pd) < threads)
        pd++;
    bp_shared s = {p, cfg, lg, pd};
    int rc = bp_bisect(&s, &sc, order, p->n_nodes, 0, 1);
    free(lg);
    free(sc.map);
    if (rc != 0)
        return pk_err_set(err, "balanced partitioning: out of memory");
    return 0;
}

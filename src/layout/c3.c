/* c3.c — call-chain clustering (Ottoni & Maher, "Optimizing Function Placement
 * for Large-Scale Data-Center Applications", CGO 2017).
 *
 * Every hot function starts as its own cluster. Functions are visited by
 * decreasing density (samples per byte); each one's cluster is appended to the
 * cluster of its most frequent caller, so a callee lands right after the code
 * that calls it, unless the arc is unlikely, the merged cluster would be too
 * big to stay cache/TLB friendly, or the merge would dilute a dense caller
 * cluster too much. Clusters are finally laid out by decreasing density. */
#include "layout/layout.h"

#include <stdlib.h>

void pk_c3_config_default(pk_c3_config *c)
{
    c->min_arc_probability = 0.1;
    c->max_density_degradation = 8.0;
    c->max_cluster_size = 1u << 20;
}

typedef struct c3_cluster {
    uint64_t size, samples;
    uint32_t head, tail;   /* linked list of functions through next[] */
} c3_cluster;

static uint64_t c3_size(const uint64_t *sizes, size_t f)
{
    return sizes && sizes[f] ? sizes[f] : 1;
}

/* a has higher density than b: samples_a/size_a > samples_b/size_b, compared
 * without division (in long double to avoid overflow of the products). */
static int c3_denser(uint64_t sa, uint64_t za, uint64_t sb, uint64_t zb)
{
    long double x = (long double)sa * zb, y = (long double)sb * za;
    return (x > y) - (x < y);
}

typedef struct c3_key {
    uint64_t samples, size;
    uint32_t id;
} c3_key;

static int cmp_key_desc(const void *a, const void *b)
{
    const c3_key *x = a, *y = b;
    int d = c3_denser(x->samples, x->size, y->samples, y->size);
    if (d)
        return -d;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int pk_c3_order(size_t n_funcs, const uint64_t *sizes, const uint64_t *samples,
                const pk_c3_arc *arcs, size_t n_arcs, const pk_c3_config *cfg,
                uint32_t **order, size_t *order_len, pk_err *err)
{
    *order = NULL;
    *order_len = 0;
    if (n_funcs >= UINT32_MAX)
        return pk_err_set(err, "C3: too many functions (%zu)", n_funcs);
    for (size_t a = 0; a < n_arcs; a++)
        if (arcs[a].caller >= n_funcs || arcs[a].callee >= n_funcs)
            return pk_err_set(err, "C3: arc %zu (%u -> %u) out of range (%zu functions)", a,
                              arcs[a].caller, arcs[a].callee, n_funcs);
    size_t nf = n_funcs ? n_funcs : 1;
    uint64_t *in_total = calloc(nf, sizeof *in_total);
    uint64_t *best_w = calloc(nf, sizeof *best_w);
    uint32_t *best_pred = malloc(nf * sizeof *best_pred);
    uint64_t *hot = calloc(nf, sizeof *hot);
    uint32_t *cluster_of = malloc(nf * sizeof *cluster_of);
    uint32_t *next = malloc(nf * sizeof *next);
    c3_cluster *cl = calloc(nf, sizeof *cl);
    c3_key *keys = malloc(nf * sizeof *keys);
    uint32_t *out = malloc(nf * sizeof *out);
    int rc = 0;
    if (!in_total || !best_w || !best_pred || !hot || !cluster_of || !next || !cl || !keys || !out) {
        rc = pk_err_set(err, "C3: out of memory");
        goto done;
    }
    memset(best_pred, 0xff, nf * sizeof *best_pred);
    /* Merge parallel arcs first (a caller may appear several times). Self
     * arcs (recursion) say nothing about placement. */
    pk_u64map arcw;
    if (pk_u64map_init(&arcw, n_arcs * 2 + 16) != 0) {
        rc = pk_err_set(err, "C3: out of memory");
        goto done;
    }
    for (size_t a = 0; a < n_arcs; a++) {
        if (arcs[a].caller == arcs[a].callee || arcs[a].weight == 0)
            continue;
        uint64_t *w = pk_u64map_slot(&arcw, (uint64_t)arcs[a].caller << 32 | arcs[a].callee);
        if (!w) {
            pk_u64map_free(&arcw);
            rc = pk_err_set(err, "C3: out of memory");
            goto done;
        }
        *w += arcs[a].weight;
    }
    for (size_t i = 0; i < pk_u64map_end(&arcw); i++) {
        if (!pk_u64map_used(&arcw, i))
            continue;
        uint32_t caller = (uint32_t)(pk_u64map_key(&arcw, i) >> 32), callee = (uint32_t)pk_u64map_key(&arcw, i);
        uint64_t w = pk_u64map_val(&arcw, i);
        in_total[callee] += w;
        /* Heaviest caller; ties to the lower index, whatever the map order. */
        if (w > best_w[callee] || (w == best_w[callee] && caller < best_pred[callee])) {
            best_w[callee] = w;
            best_pred[callee] = caller;
        }
        hot[caller] = hot[callee] = 1;
    }
    pk_u64map_free(&arcw);

    size_t nk = 0;
    for (size_t f = 0; f < n_funcs; f++) {
        uint64_t s = samples ? samples[f] : 0;
        cluster_of[f] = UINT32_MAX;
        next[f] = UINT32_MAX;
        if (s == 0 && !hot[f])
            continue;
        /* A function known only from arcs: its calls are its hotness. */
        if (s == 0)
            s = in_total[f];
        cluster_of[f] = (uint32_t)f;
        cl[f] = (c3_cluster){c3_size(sizes, f), s, (uint32_t)f, (uint32_t)f};
        keys[nk++] = (c3_key){s, c3_size(sizes, f), (uint32_t)f};
    }
    qsort(keys, nk, sizeof *keys, cmp_key_desc);

    for (size_t k = 0; k < nk; k++) {
        uint32_t f = keys[k].id, c = cluster_of[f];
        uint32_t pred = best_pred[f];
        if (pred == UINT32_MAX)
            continue;
        /* The arc must bring a real share of the callee's calls. */
        uint64_t callee_total = in_total[f] > keys[k].samples ? in_total[f] : keys[k].samples;
        if ((double)best_w[f] < cfg->min_arc_probability * (double)callee_total)
            continue;
        uint32_t pc = cluster_of[pred];
        if (pc == UINT32_MAX || pc == c)
            continue;
        if (cl[pc].size + cl[c].size > cfg->max_cluster_size)
            continue;
        /* Caller density > merged density × degradation: the merge would
         * spread the caller's hot bytes too thin. */
        uint64_t ms = cl[pc].samples + cl[c].samples, mz = cl[pc].size + cl[c].size;
        if ((long double)cl[pc].samples * mz >
            (long double)cfg->max_density_degradation * ms * cl[pc].size)
            continue;
        /* Append cluster c after pc. */
        next[cl[pc].tail] = cl[c].head;
        cl[pc].tail = cl[c].tail;
        for (uint32_t g = cl[c].head; g != UINT32_MAX; g = next[g])
            cluster_of[g] = pc;
        cl[pc].size = mz;
        cl[pc].samples = ms;
        cl[c].head = cl[c].tail = UINT32_MAX;
    }

    /* Clusters left, by decreasing density (the head's index breaks ties). */
    size_t nc = 0;
    for (size_t k = 0; k < nk; k++) {
        uint32_t f = keys[k].id;
        if (cl[f].head != UINT32_MAX && cluster_of[f] == f)
            keys[nc++] = (c3_key){cl[f].samples, cl[f].size, f};
    }
    qsort(keys, nc, sizeof *keys, cmp_key_desc);
    size_t len = 0;
    for (size_t k = 0; k < nc; k++)
        for (uint32_t g = cl[keys[k].id].head; g != UINT32_MAX; g = next[g])
            out[len++] = g;
    *order = out;
    *order_len = len;
    out = NULL;
done:
    free(in_total); free(best_w); free(best_pred); free(hot); free(cluster_of);
    free(next); free(cl); free(keys); free(out);
    return rc;
}

/* store_rows.c — a version-2 raw profile as the store's rows: contexts by
 * key, the per-context counts and IP observations, the statistics words
 * (store.h lists the tables). */
#include "store/store_int.h"

#include "common/md5.h"

#include <stdio.h>
#include <stdlib.h>

#define K_UNWIND 1000
#define K_IP 2000
#define K_FLAGS 3000

int64_t pk_store_ctx_key(const uint64_t *off, uint32_t len)
{
    pk_md5_ctx c;
    uint8_t d[16], b[8];
    pk_md5_init(&c);
    for (uint32_t i = 0; i < len; i++) {
        pk_st64(b, off[i]);
        pk_md5_update(&c, b, 8);
    }
    pk_md5_final(&c, d);
    int64_t k = (int64_t)pk_ld64(d);
    return k ? k : 1;
}

char *pk_store_ctx_text(const uint64_t *off, uint32_t len, char *buf, size_t cap)
{
    size_t at = 0;
    for (uint32_t i = 0; i < len; i++) {
        int n = snprintf(buf + at, cap - at, "%s%lld", i ? "," : "", (long long)(int64_t)off[i]);
        if (n < 0 || (size_t)n >= cap - at)
            return NULL;
        at += (size_t)n;
    }
    if (!len && cap)
        buf[0] = 0;
    return buf;
}

size_t pk_store_stats_rows(const pk_rawprof2 *r, int64_t (*kv)[2])
{
    _Static_assert(sizeof(pk_agg_stats) / 8 <= K_UNWIND && sizeof(pk_unwind_stats) / 8 <= K_IP - K_UNWIND &&
                       sizeof(pk_ip_stats) / 8 <= K_FLAGS - K_IP,
                   "statistics fit their key ranges");
    _Static_assert(sizeof(pk_agg_stats) / 8 + sizeof(pk_unwind_stats) / 8 + sizeof(pk_ip_stats) / 8 + 32 <=
                       PK_STORE_MAX_STATS, "rows fit");
    size_t n = 0;
    const struct {
        const void *w;
        size_t size;
        int64_t k0;
    } parts[] = {{&r->flat.stats, sizeof r->flat.stats, 0},
                 {&r->unwind, sizeof r->unwind, K_UNWIND},
                 {&r->ip_stats, sizeof r->ip_stats, K_IP}};
    for (size_t p = 0; p < 3; p++) {
        const uint64_t *w = parts[p].w;
        for (size_t k = 0; k < parts[p].size / 8; k++)
            if (w[k]) {
                kv[n][0] = parts[p].k0 + (int64_t)k;
                kv[n++][1] = (int64_t)w[k];
            }
    }
    for (int bit = 0; bit < 32; bit++)
        if (r->flags >> bit & 1) {
            kv[n][0] = K_FLAGS + bit;
            kv[n++][1] = 1;
        }
    return n;
}

void pk_store_stats_put(pk_rawprof2 *r, int64_t k, uint64_t v)
{
    if (k >= 0 && (uint64_t)k < sizeof r->flat.stats / 8)
        ((uint64_t *)&r->flat.stats)[k] = v;
    else if (k >= K_UNWIND && (uint64_t)(k - K_UNWIND) < sizeof r->unwind / 8)
        ((uint64_t *)&r->unwind)[k - K_UNWIND] = v;
    else if (k >= K_IP && (uint64_t)(k - K_IP) < sizeof r->ip_stats / 8)
        ((uint64_t *)&r->ip_stats)[k - K_IP] = v;
    else if (k >= K_FLAGS && k < K_FLAGS + 32 && v)
        r->flags |= 1u << (k - K_FLAGS);
}

/* ---- rows ---- */

/* A table's rows (w columns each, count last) gather in a pk_vec whose
 * element is the row. */
static int push(pk_vec *t, const int64_t *x)
{
    void *slot = pk_vec_push(t);
    if (!slot)
        return -1;
    memcpy(slot, x, t->elem);
    return 0;
}

/* by every column but the count */
static int cmp_cols(const int64_t *x, const int64_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}
static int cmp_rows3(const void *a, const void *b) { return cmp_cols(a, b, 2); }
static int cmp_rows4(const void *a, const void *b) { return cmp_cols(a, b, 3); }

static void sort_rows(pk_vec *t)
{
    if (t->len) /* (qsort of NULL, 0 is undefined) */
        qsort(t->data, t->len, t->elem, t->elem == 3 * sizeof(int64_t) ? cmp_rows3 : cmp_rows4);
}

static int cmp_ctx(const void *a, const void *b)
{
    const pk_store_ctx_row *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The keys of a csraw's contexts (0: the empty address list), each context
 * noted in `seen` (key → its place in `words` + 1) and `words` on first
 * use. -2: two address lists share a key. */
typedef struct ctx_acc {
    pk_u64map seen;
    pk_vec words;                /* uint64_t: len, offsets..., per distinct context */
    size_t nctxs;
} ctx_acc;

static int keys_of(const pk_csraw *c, ctx_acc *acc, int64_t **keys)
{
    size_t n = pk_csraw_num_ctxs(c);
    *keys = calloc(n + 1, sizeof **keys);
    if (!*keys)
        return -1;
    uint64_t buf[512];
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const uint64_t *fr = pk_csraw_ctx(c, (uint32_t)i, &len);
        if (!len)
            continue;
        uint64_t *off = len <= 512 ? buf : malloc(len * sizeof *off);
        if (!off)
            return -1;
        for (uint32_t k = 0; k < len; k++)
            off[k] = fr[k] - c->base; /* (wraps for an unknown leaf, as the file stores it) */
        int64_t key = pk_store_ctx_key(off, len);
        (*keys)[i] = key;
        uint64_t *slot = pk_u64map_get(&acc->seen, (uint64_t)key);
        int rc = 0;
        if (slot) {
            const uint64_t *had = (const uint64_t *)acc->words.data + *slot - 1;
            if (had[0] != len || memcmp(had + 1, off, len * sizeof *off))
                rc = -2;
        } else {
            if (!(slot = pk_u64map_slot(&acc->seen, (uint64_t)key)) ||
                pk_vec_reserve(&acc->words, acc->words.len + len + 1))
                rc = -1;
            else {
                *slot = acc->words.len + 1; /* index of the length word + 1 */
                uint64_t *w = (uint64_t *)acc->words.data + acc->words.len;
                w[0] = len;
                memcpy(w + 1, off, len * sizeof *off);
                acc->words.len += len + 1;
                acc->nctxs++;
            }
        }
        if (off != buf)
            free(off);
        if (rc)
            return rc;
    }
    return 0;
}

/* A csraw's counts as rows: ranges/branches (w 4: ctx, a, b, n) or hits
 * (w 3: ctx, a, n). Marks the keys used. */
static int gather(pk_vec *t, const pk_csraw *c, const pk_pairmap *m, const int64_t *keys, pk_u64map *used)
{
    for (size_t i = 0; i < m->cap; i++) {
        const pk_pair_count *p = &m->e[i];
        if (!p->n)
            continue;
        uint32_t ctx;
        uint64_t a, b;
        pk_csraw_key(c, p, &ctx, &a, &b);
        int64_t x[4] = {keys[ctx], pk_store_off(a, c->base), pk_store_off(b, c->base), (int64_t)p->n};
        if (t->elem == 3 * sizeof(int64_t))
            x[2] = (int64_t)p->n;
        if (push(t, x) || (keys[ctx] && !pk_u64map_slot(used, (uint64_t)keys[ctx])))
            return -1;
    }
    return 0;
}

int pk_store_rows_build(pk_store_rows *rw, const pk_rawprof2 *r, pk_err *err)
{
    memset(rw, 0, sizeof *rw);
    ctx_acc acc = {0};
    pk_u64map used = {0};
    int64_t *lk = NULL, *ik = NULL;
    pk_vec ranges, branches, hits, calls, unplaced;
    pk_vec_init(&ranges, 4 * sizeof(int64_t));
    pk_vec_init(&branches, 4 * sizeof(int64_t));
    pk_vec_init(&hits, 3 * sizeof(int64_t));
    pk_vec_init(&calls, 4 * sizeof(int64_t));
    pk_vec_init(&unplaced, 3 * sizeof(int64_t));
    int rc = -1;
    pk_vec_init(&acc.words, sizeof(uint64_t));
    int krc = keys_of(&r->lbr, &acc, &lk);
    if (!krc)
        krc = keys_of(&r->ip, &acc, &ik);
    if (krc == -2) {
        pk_err_set(err, "%s: two calling contexts have the same key (a 64-bit hash collision): the store cannot "
                        "keep them apart", r->flat.path);
        goto out;
    }
    if (krc || gather(&ranges, &r->lbr, &r->lbr.ranges, lk, &used) ||
        gather(&branches, &r->lbr, &r->lbr.branches, lk, &used) || gather(&hits, &r->ip, &r->ip.ranges, ik, &used) ||
        gather(&calls, &r->ip, &r->ip.branches, ik, &used))
        goto oom;
    for (size_t i = 0; i < r->ip_unplaced.cap; i++) {
        const pk_pair_count *p = &r->ip_unplaced.e[i];
        int64_t x[3] = {(int64_t)p->a, (int64_t)p->b, (int64_t)p->n};
        if (p->n && push(&unplaced, x))
            goto oom;
    }
    /* the contexts the rows use, sorted by key */
    if (used.len && !(rw->ctxs = calloc(used.len, sizeof *rw->ctxs)))
        goto oom;
    const uint64_t *w = acc.words.data;
    for (size_t at = 0; at < acc.words.len; at += 1 + w[at]) {
        int64_t key = pk_store_ctx_key(w + at + 1, (uint32_t)w[at]);
        if (!pk_u64map_get(&used, (uint64_t)key))
            continue;
        rw->ctxs[rw->nctxs++] = (pk_store_ctx_row){key, w + at + 1, (uint32_t)w[at]};
        rw->nstacked += w[at] > 1;
    }
    if (rw->nctxs)
        qsort(rw->ctxs, rw->nctxs, sizeof *rw->ctxs, cmp_ctx);
    pk_vec *all[] = {&ranges, &branches, &hits, &calls, &unplaced};
    for (size_t i = 0; i < 5; i++) {
        sort_rows(all[i]);
        size_t ncol = all[i]->elem / sizeof(int64_t);
        const int64_t *v = all[i]->data;
        for (size_t k = 0; k < all[i]->len; k++)
            if (v[k * ncol + ncol - 1] < 0) {
                pk_err_set(err, "%s: a count of %llu does not fit a 64-bit signed integer", r->flat.path,
                           (unsigned long long)v[k * ncol + ncol - 1]);
                goto out;
            }
    }
    rw->ranges = ranges.data, rw->nranges = ranges.len;
    rw->branches = branches.data, rw->nbranches = branches.len;
    rw->hits = hits.data, rw->nhits = hits.len;
    rw->calls = calls.data, rw->ncalls = calls.len;
    rw->unplaced = unplaced.data, rw->nunplaced = unplaced.len;
    rw->words = acc.words.data; /* the contexts point into it */
    acc.words.data = NULL;
    ranges.data = branches.data = hits.data = calls.data = unplaced.data = NULL;
    rc = 0;
    goto out;
oom:
    pk_err_set(err, "out of memory");
out:
    free(lk);
    free(ik);
    pk_vec_free(&ranges);
    pk_vec_free(&branches);
    pk_vec_free(&hits);
    pk_vec_free(&calls);
    pk_vec_free(&unplaced);
    pk_vec_free(&acc.words);
    pk_u64map_free(&acc.seen);
    pk_u64map_free(&used);
    if (rc)
        pk_store_rows_free(rw);
    return rc;
}

void pk_store_rows_free(pk_store_rows *rw)
{
    free(rw->ranges);
    free(rw->branches);
    free(rw->hits);
    free(rw->calls);
    free(rw->unplaced);
    free(rw->ctxs);
    free(rw->words);
    memset(rw, 0, sizeof *rw);
}

/* csraw.c — the context-sensitive raw profile (pk_csraw, unwind.h): calling
 * contexts interned as lists of call-site addresses, and the ranges and
 * branches counted under each; the unwinder writes it, profgen and the raw
 * profile writers read it. */
#include "unwind/unwind_internal.h"

#include <stdlib.h>
#include <string.h>



int pk_csraw_init(pk_csraw *r, uint64_t base, pk_err *err)
{
    memset(r, 0, sizeof *r);
    r->base = base;
    pk_vec_init(&r->frames, sizeof(uint64_t));
    pk_vec_init(&r->ctxs, sizeof(pk_cs_ctx));
    /* distinct ranges in context: ~20k at 10k samples, ~33k at 100k; room
     * for the first without growing (each doubling rehashes them all) */
    if (pk_u64map_init(&r->ctx_by_hash, 1024) || pk_pairmap_init(&r->ranges, 1 << 15) ||
        pk_pairmap_init(&r->branches, 1 << 12)) {
        pk_csraw_free(r);
        return pk_err_set(err, "out of memory");
    }
    return 0;
}

void pk_csraw_free(pk_csraw *r)
{
    pk_vec_free(&r->frames);
    pk_vec_free(&r->ctxs);
    pk_u64map_free(&r->ctx_by_hash);
    pk_pairmap_free(&r->ranges);
    pk_pairmap_free(&r->branches);
}

int pk_csraw_intern(pk_csraw *r, const uint64_t *sites, uint32_t n, uint32_t *ctx, pk_err *err)
{
    uint64_t h = pk_hash_u64s(sites, n);
    /* Collisions of the 64-bit hash are resolved by probing h+1, h+2, ...:
     * each probe either finds the same list or an empty slot. */
    for (;; h++) {
        uint64_t *slot = pk_u64map_slot(&r->ctx_by_hash, h);
        if (!slot)
            return pk_err_set(err, "out of memory");
        if (*slot) {
            uint32_t id = (uint32_t)(*slot - 1), len;
            const uint64_t *have = pk_csraw_ctx(r, id, &len);
            if (len == n && (n == 0 || !memcmp(have, sites, n * sizeof *sites))) {
                *ctx = id;
                return 0;
            }
            continue;
        }
        if (r->ctxs.len >= UINT32_MAX - 1 || pk_vec_reserve(&r->frames, r->frames.len + n))
            return pk_err_set(err, "out of memory (contexts)");
        pk_cs_ctx *c = pk_vec_push(&r->ctxs);
        if (!c)
            return pk_err_set(err, "out of memory");
        c->first = (uint32_t)r->frames.len;
        c->len = n;
        if (n)
            memcpy((uint64_t *)r->frames.data + r->frames.len, sites, n * sizeof *sites);
        r->frames.len += n;
        *slot = r->ctxs.len; /* id + 1 */
        *ctx = (uint32_t)(r->ctxs.len - 1);
        return 0;
    }
}

void pk_csraw_key(const pk_csraw *r, const pk_pair_count *e, uint32_t *ctx, uint64_t *a, uint64_t *b)
{
    *ctx = (uint32_t)(e->a >> 32);
    uint32_t oa = (uint32_t)e->a;
    *a = oa == PK_CS_EXTERNAL_OFF ? PK_AGG_EXTERNAL : r->base + oa;
    *b = r->base + e->b;
}


int pk_csraw_add(pk_csraw *r, uint32_t ctx, int kind, uint64_t a, uint64_t b, uint64_t n, pk_err *err)
{
    bool ext = kind && a == PK_AGG_EXTERNAL;
    if ((!ext && !pk_csraw_fits(r, a)) || !pk_csraw_fits(r, b))
        return pk_err_set(err, "%s %llx-%llx: outside the binary", kind ? "branch" : "range", (unsigned long long)a,
                          (unsigned long long)b);
    uint64_t key = (uint64_t)ctx << 32 | (ext ? PK_CS_EXTERNAL_OFF : a - r->base);
    if (pk_pairmap_add(kind ? &r->branches : &r->ranges, key, b - r->base, n))
        return pk_err_set(err, "out of memory");
    return 0;
}

/* Adds src's range and branch counts to out's under the context ids
 * newid[src id]. `disjoint`: the keys are mostly new to out (room for both
 * tables); else mostly shared (room for the larger one). Either way out is
 * never smaller than src: a slot-order copy into a smaller table makes long
 * probe chains. */
static int add_counts(pk_csraw *out, const pk_csraw *src, const uint32_t *newid, bool disjoint, pk_err *err)
{
    for (int which = 0; which < 2; which++) {
        const pk_pairmap *from = which ? &src->branches : &src->ranges;
        pk_pairmap *to = which ? &out->branches : &out->ranges;
        size_t room = disjoint ? to->len + from->len : to->len > from->len ? to->len : from->len;
        if (pk_pairmap_reserve(to, room))
            return pk_err_set(err, "out of memory");
        for (size_t i = 0; i < from->cap; i++) {
            const pk_pair_count *e = &from->e[i];
            if (e->n && pk_pairmap_add(to, (uint64_t)newid[e->a >> 32] << 32 | (uint32_t)e->a, e->b, e->n))
                return pk_err_set(err, "out of memory");
        }
    }
    return 0;
}

int pk_csraw_move_counts(pk_csraw *r, pk_csraw *out, const uint32_t *newid, pk_err *err)
{
    if (add_counts(out, r, newid, true, err))
        return -1;
    pk_csraw_free(r);
    *r = *out;
    return 0;
}

static int ctx_cmp(const void *x, const void *y, void *arg)
{
    const pk_csraw *r = arg;
    uint32_t na, nb;
    const uint64_t *a = pk_csraw_ctx(r, *(const uint32_t *)x, &na), *b = pk_csraw_ctx(r, *(const uint32_t *)y, &nb);
    for (uint32_t i = 0; i < na && i < nb; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return na < nb ? -1 : na > nb;
}

int pk_csraw_intern_sorted(const pk_csraw *from, pk_csraw *out, uint32_t *newid, pk_err *err)
{
    size_t n = pk_csraw_num_ctxs(from);
    uint32_t *order = malloc((n + 1) * sizeof *order);
    if (!order)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, ctx_cmp, (void *)from);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t len;
        const uint64_t *fr = pk_csraw_ctx(from, order[i], &len);
        rc = pk_csraw_intern(out, fr, len, &newid[order[i]], err);
    }
    free(order);
    return rc;
}

int pk_csraw_canonicalize(pk_csraw *r, pk_err *err)
{
    size_t n = pk_csraw_num_ctxs(r);
    uint32_t *newid = malloc((n + 1) * sizeof *newid);
    pk_csraw out;
    if (!newid)
        return pk_err_set(err, "out of memory");
    if (pk_csraw_init(&out, r->base, err)) {
        free(newid);
        return -1;
    }
    int rc = pk_csraw_intern_sorted(r, &out, newid, err) || pk_csraw_move_counts(r, &out, newid, err) ? -1 : 0;
    if (rc)
        pk_csraw_free(&out); /* (on success move_counts made it r) */
    free(newid);
    return rc;
}

int pk_csraw_merge_trimmed(pk_csraw *dst, const pk_csraw *src, int max_depth, pk_err *err)
{
    size_t n = pk_csraw_num_ctxs(src);
    uint32_t *newid = malloc((n + 1) * sizeof *newid);
    if (!newid)
        return pk_err_set(err, "out of memory");
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const uint64_t *fr = pk_csraw_ctx(src, (uint32_t)i, &len);
        /* call sites, then the leaf entry */
        uint32_t sites = len ? len - 1 : 0, skip = 0;
        if (max_depth >= 0 && sites > (uint32_t)max_depth)
            skip = sites - (uint32_t)max_depth;
        if (pk_csraw_intern(dst, fr + skip, len - skip, &newid[i], err))
            goto done;
    }
    /* (the two walkers saw mostly the same keys) */
    rc = add_counts(dst, src, newid, false, err);
done:
    free(newid);
    return rc;
}

int pk_csraw_merge(pk_csraw *dst, const pk_csraw *src, pk_err *err)
{
    return pk_csraw_merge_trimmed(dst, src, -1, err);
}

int pk_csraw_add_flat(const pk_csraw *src, pk_rawprof *flat, pk_err *err)
{
    for (int w = 0; w < 2; w++) {
        const pk_pairmap *from = w ? &src->branches : &src->ranges;
        for (size_t i = 0; i < from->cap; i++) {
            uint32_t ctx;
            uint64_t a, b;
            if (!from->e[i].n)
                continue;
            pk_csraw_key(src, &from->e[i], &ctx, &a, &b);
            if (pk_pairmap_add(w ? &flat->branches : &flat->ranges, a, b, from->e[i].n))
                return pk_err_set(err, "out of memory");
        }
    }
    return 0;
}

/* block_overlap.c — the paper's block-overlap degree (see block_overlap.h). */
#include "profile/block_overlap.h"

#include <stdlib.h>

/* One function folded over all its instances: location → count. */
struct folded {
    pk_name_id name;              /* of its first instance */
    pk_u64map locs;
    pk_u64map calls;              /* locations holding call targets (call sites) */
    uint64_t total;
};

struct fold {
    pk_u64map index;              /* function GUID → index into funcs + 1 */
    pk_vec funcs;                 /* struct folded */
    uint64_t total;
};

static void fold_free(struct fold *f)
{
    for (size_t i = 0; i < f->funcs.len; i++)
        pk_u64map_free(&PK_VEC_AT(&f->funcs, struct folded, i).locs),
        pk_u64map_free(&PK_VEC_AT(&f->funcs, struct folded, i).calls);
    pk_vec_free(&f->funcs);
    pk_u64map_free(&f->index);
}

static int fold_one(const pk_profset *ps, const pk_fprof *f, struct fold *out, pk_err *err)
{
    uint64_t guid = pk_profset_name_guid(ps, f->name);
    uint64_t *idx = pk_u64map_slot(&out->index, guid);
    if (!idx)
        return pk_err_set(err, "out of memory");
    if (!*idx) {
        struct folded *n = pk_vec_push(&out->funcs);
        if (!n || pk_u64map_init(&n->locs, 64) || pk_u64map_init(&n->calls, 16))
            return pk_err_set(err, "out of memory");
        n->name = f->name;
        *idx = out->funcs.len;
    }
    size_t fi = *idx - 1;
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, f, &v, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        struct folded *fd = &PK_VEC_AT(&out->funcs, struct folded, fi);
        uint64_t *c = pk_u64map_slot(&fd->locs, pk_loc(v.body[i].line, v.body[i].disc));
        if (!c) {
            rc = pk_err_set(err, "out of memory");
            break;
        }
        *c = pk_sat_add(*c, v.body[i].count);
        if (v.body[i].ncalls && !pk_u64map_slot(&fd->calls, pk_loc(v.body[i].line, v.body[i].disc))) {
            rc = pk_err_set(err, "out of memory");
            break;
        }
        fd->total = pk_sat_add(fd->total, v.body[i].count);
        out->total = pk_sat_add(out->total, v.body[i].count);
    }
    for (size_t i = 0; i < v.nsites && !rc; i++)
        rc = fold_one(ps, v.sites[i].callee, out, err);
    pk_fprof_view_free(&v);
    return rc;
}

static int fold_set(const pk_profset *ps, struct fold *out, pk_err *err)
{
    memset(out, 0, sizeof *out);
    pk_vec_init(&out->funcs, sizeof(struct folded));
    if (pk_u64map_init(&out->index, 256))
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed && fold_one(ps, f, out, err))
            return -1;
    }
    return 0;
}

/* Σ counts of f's locations, without call sites when skipping them. */
static uint64_t folded_total(const struct folded *f, const struct folded *other, bool skip_calls)
{
    if (!skip_calls)
        return f->total;
    uint64_t sum = 0;
    for (size_t k = 0; k < pk_u64map_end(&f->locs); k++)
        if (pk_u64map_used(&f->locs, k) && !pk_u64map_get(&f->calls, pk_u64map_key(&f->locs, k)) &&
            !(other && pk_u64map_get(&other->calls, pk_u64map_key(&f->locs, k))))
            sum += pk_u64map_val(&f->locs, k);
    return sum;
}

static int func_cmp(const void *a, const void *b)
{
    const pk_block_overlap_func *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

int pk_profset_block_overlap(const pk_profset *test, const pk_profset *ref, pk_block_overlap *out, pk_err *err)
{
    return pk_profset_block_overlap_funcs(test, ref, out, NULL, NULL, err);
}

int pk_profset_block_overlap_funcs(const pk_profset *test, const pk_profset *ref, pk_block_overlap *out,
                                   pk_block_overlap_func **funcs, size_t *nfuncs, pk_err *err)
{
    memset(out, 0, sizeof *out);
    pk_vec rows;
    pk_vec_init(&rows, sizeof(pk_block_overlap_func));
    /* Probe ids tell blocks from call sites, and profile kinds count call
     * probes differently (range count, branch count, raised to the calls):
     * compare blocks only there. Source lines mix both and are kept. */
    bool skip_calls = (test->kind & ref->kind & PK_PROF_PROBE) != 0;
    struct fold t, r;
    int rc = -1;
    if (fold_set(test, &t, err)) {
        fold_free(&t);
        return -1;
    }
    if (fold_set(ref, &r, err))
        goto done;
    uint64_t ref_total = 0;
    for (size_t i = 0; i < r.funcs.len; i++)
        ref_total += folded_total(&PK_VEC_AT(&r.funcs, struct folded, i), NULL, skip_calls);
    for (size_t i = 0; i < pk_u64map_end(&r.index); i++) {
        if (!pk_u64map_used(&r.index, i))
            continue;
        const struct folded *rf = &PK_VEC_AT(&r.funcs, struct folded, pk_u64map_val(&r.index, i) - 1);
        uint64_t *ti = pk_u64map_get(&t.index, pk_u64map_key(&r.index, i));
        const struct folded *tf = ti ? &PK_VEC_AT(&t.funcs, struct folded, *ti - 1) : NULL;
        uint64_t rtot = folded_total(rf, tf, skip_calls);
        if (!rtot)
            continue;
        out->ref_functions++;
        double weight = (double)folded_total(rf, NULL, skip_calls) / (double)ref_total;
        uint64_t ttot = tf ? folded_total(tf, rf, skip_calls) : 0;
        pk_block_overlap_func *row = NULL;
        if (funcs) {
            if (!(row = pk_vec_push(&rows))) {
                pk_err_set(err, "out of memory");
                goto done;
            }
            row->name = rf->name;
            row->weight = weight;
            row->ref_samples = rtot;
            row->test_samples = ttot;
        }
        if (!ttot)
            continue;
        out->common_functions++;
        out->ref_weight_covered += weight;
        double sum = 0;
        for (size_t k = 0; k < pk_u64map_end(&rf->locs); k++) {
            if (!pk_u64map_used(&rf->locs, k))
                continue;
            uint64_t loc = pk_u64map_key(&rf->locs, k);
            if (skip_calls && (pk_u64map_get(&rf->calls, loc) || pk_u64map_get(&tf->calls, loc)))
                continue;
            uint64_t *tc = pk_u64map_get(&tf->locs, loc);
            if (!tc)
                continue;
            double a = (double)pk_u64map_val(&rf->locs, k) / (double)rtot, b = (double)*tc / (double)ttot;
            sum += a < b ? a : b;
        }
        out->overlap += weight * sum;
        if (row)
            row->overlap = sum;
    }
    if (funcs) {
        if (rows.len > 1)
            qsort(rows.data, rows.len, sizeof(pk_block_overlap_func), func_cmp);
        *funcs = rows.data;
        *nfuncs = rows.len;
        pk_vec_init(&rows, sizeof(pk_block_overlap_func));
    }
    rc = 0;
done:
    pk_vec_free(&rows);
    fold_free(&t);
    fold_free(&r);
    return rc;
}

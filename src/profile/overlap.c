/* overlap.c — see overlap.h for the metric definitions. */
#include "profile/overlap.h"
#include "profile/profile_int.h"

#include <math.h>
#include <stdlib.h>

#define OVERLAP_EPSILON 0.000005

struct ov {
    pk_overlap *o;
    const pk_profset *bps, *tps;
    pk_err *err;
};

struct fstats {
    uint64_t sum, max, hot;
};

static void func_stats(const pk_fprof *f, uint64_t thr, struct fstats *s)
{
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *sl = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        uint64_t count = sl->count;
        if (!pk_fprof_slot_in_body(f, i))
            continue;
        s->sum += count;
        if (count > s->max)
            s->max = count;
        if (count >= thr)
            s->hot++;
    }
    for (size_t i = 0; i < f->children.len; i++)
        func_stats(PK_VEC_AT(&f->children, pk_fprof *, i), thr, s);
}

static void hot_block(struct ov *v, uint64_t b, uint64_t t, uint64_t n)
{
    int bh = b >= v->o->base_hot_threshold, th = t >= v->o->test_hot_threshold;
    if (!bh && !th)
        return;
    v->o->hot_block_union += n;
    if (bh)
        v->o->hot_block_base += n;
    if (th)
        v->o->hot_block_test += n;
    if (bh && th)
        v->o->hot_block_overlap += n;
}

/* status: 0 matched, 1 base only, 2 test only */
static void update(struct ov *v, uint64_t b, uint64_t t, uint64_t nhot, pk_overlap_func *fo, double *diff, int status)
{
    if (status == 1) {
        t = 0;
        fo->base_unique_sample += b;
    } else if (status == 2) {
        b = 0;
        fo->test_unique_sample += t;
    }
    fo->union_sample += b > t ? b : t;
    fo->overlap_sample += b < t ? b : t;
    double bf = fo->base_sample ? (double)b / (double)fo->base_sample : 0.0;
    double tf = fo->test_sample ? (double)t / (double)fo->test_sample : 0.0;
    *diff += fabs(bf - tf);
    hot_block(v, b, t, nhot);
}

static void unmatched_callee(struct ov *v, const pk_fprof *f, pk_overlap_func *fo, double *diff, int status)
{
    struct fstats s = {0, 0, 0};
    if (status == 1) {
        func_stats(f, v->o->base_hot_threshold, &s);
        update(v, s.sum, 0, s.hot, fo, diff, status);
    } else {
        func_stats(f, v->o->test_hot_threshold, &s);
        update(v, 0, s.sum, s.hot, fo, diff, status);
    }
}

/* Compares callee names across two sets. */
static int cross_name_cmp(const pk_profset *a, pk_name_id x, const pk_profset *b, pk_name_id y)
{
    int gx = pk_profset_name_is_guid(a, x), gy = pk_profset_name_is_guid(b, y);
    if (gx || gy) {
        if (gx && gy) {
            uint64_t u = pk_profset_name_guid(a, x), w = pk_profset_name_guid(b, y);
            return u < w ? -1 : u > w;
        }
        return gx ? 1 : -1;
    }
    size_t lx = pk_profset_name_len(a, x), ly = pk_profset_name_len(b, y);
    int c = memcmp(pk_profset_name(a, x), pk_profset_name(b, y), lx < ly ? lx : ly);
    if (c)
        return c < 0 ? -1 : 1;
    return lx < ly ? -1 : lx > ly;
}

static int internal(struct ov *v, const pk_fprof *bf, const pk_fprof *tf, pk_overlap_func *fo, double *fis)
{
    pk_fprof_view bv, tv;
    if (pk_fprof_view_build(v->bps, bf, &bv, v->err))
        return -1;
    if (pk_fprof_view_build(v->tps, tf, &tv, v->err)) {
        pk_fprof_view_free(&bv);
        return -1;
    }
    double diff = 0;
    size_t i = 0, j = 0;
    while (i < bv.nbody || j < tv.nbody) {
        uint64_t lb = i < bv.nbody ? pk_loc(bv.body[i].line, bv.body[i].disc) : UINT64_MAX;
        uint64_t lt = j < tv.nbody ? pk_loc(tv.body[j].line, tv.body[j].disc) : UINT64_MAX;
        if (j == tv.nbody || (i < bv.nbody && lb < lt)) {
            update(v, bv.body[i].count, 0, 1, fo, &diff, 1);
            i++;
        } else if (i == bv.nbody || lt < lb) {
            update(v, 0, tv.body[j].count, 1, fo, &diff, 2);
            j++;
        } else {
            update(v, bv.body[i].count, tv.body[j].count, 1, fo, &diff, 0);
            i++;
            j++;
        }
    }
    /* callsites: grouped by location, callees by name within a location */
    i = j = 0;
    int rc = 0;
    while (!rc && (i < bv.nsites || j < tv.nsites)) {
        uint64_t lb = i < bv.nsites ? pk_loc(bv.sites[i].line, bv.sites[i].disc) : UINT64_MAX;
        uint64_t lt = j < tv.nsites ? pk_loc(tv.sites[j].line, tv.sites[j].disc) : UINT64_MAX;
        if (j == tv.nsites || (i < bv.nsites && lb < lt)) {
            unmatched_callee(v, bv.sites[i].callee, fo, &diff, 1);
            i++;
        } else if (i == bv.nsites || lt < lb) {
            unmatched_callee(v, tv.sites[j].callee, fo, &diff, 2);
            j++;
        } else {
            int c = cross_name_cmp(v->bps, bv.sites[i].callee->name, v->tps, tv.sites[j].callee->name);
            if (c < 0) {
                unmatched_callee(v, bv.sites[i].callee, fo, &diff, 1);
                i++;
            } else if (c > 0) {
                unmatched_callee(v, tv.sites[j].callee, fo, &diff, 2);
                j++;
            } else {
                double sub;
                rc = internal(v, bv.sites[i].callee, tv.sites[j].callee, fo, &sub);
                diff += 2.0 - 2 * sub;
                i++;
                j++;
            }
        }
    }
    pk_fprof_view_free(&bv);
    pk_fprof_view_free(&tv);
    *fis = (2.0 - diff) / 2;
    return rc;
}

static double weight_for_fs(const pk_overlap *o, double fis, uint64_t bs, uint64_t ts)
{
    double bf = (double)bs / (double)o->base_sample, tf = (double)ts / (double)o->test_sample;
    return fis * (1 - fabs(bf - tf));
}

static double by_importance(const pk_overlap *o, double fs, uint64_t bs, uint64_t ts)
{
    double bf = (double)bs / (double)o->base_sample / 2.0, tf = (double)ts / (double)o->test_sample / 2.0;
    return fs * (bf + tf);
}

/* Finds the base profile with the same context as a test profile. */
static const pk_fprof *match(const pk_profset *bps, const pk_profset *tps, const pk_fprof *tf, pk_err *err, int *fail)
{
    size_t n;
    const pk_ctx_frame *fr = pk_profset_ctx(tps, tf->ctx, &n);
    pk_ctx_frame tmp[64];
    pk_ctx_frame *m = n <= 64 ? tmp : malloc(n * sizeof *m);
    if (!m) {
        *fail = pk_err_set(err, "out of memory");
        return NULL;
    }
    const pk_fprof *r = NULL;
    size_t k = 0;
    for (; k < n; k++) {
        m[k] = fr[k];
        int rc = pk_profset_name_is_guid(tps, fr[k].name)
                     ? pk_profset_lookup_guid(bps, pk_profset_name_guid(tps, fr[k].name), &m[k].name)
                     : pk_profset_lookup_name(bps, pk_profset_name(tps, fr[k].name),
                                              pk_profset_name_len(tps, fr[k].name), &m[k].name);
        if (rc)
            break;
    }
    pk_ctx_id ctx;
    if (k == n && !pk_profset_lookup_ctx(bps, m, n, &ctx))
        r = pk_profset_find_ctx(bps, ctx);
    if (m != tmp)
        free(m);
    return r;
}

static uint64_t hot_threshold(const pk_profset *ps, pk_err *err, int *fail)
{
    if (ps->has_summary)
        return pk_summary_threshold(&ps->summary, 990000);
    pk_summary s;
    if (pk_profset_summary(ps, &s, err)) {
        *fail = -1;
        return 0;
    }
    return pk_summary_threshold(&s, 990000);
}

int pk_overlap_compute(const pk_profset *base, const pk_profset *test, pk_overlap *o, pk_err *err)
{
    memset(o, 0, sizeof *o);
    if ((base->kind ^ test->kind) & PK_PROF_PROBE)
        return pk_err_set(err, "cannot compare probe-based profile with non-probe-based profile");
    if ((base->kind ^ test->kind) & PK_PROF_CS)
        return pk_err_set(err, "cannot compare CS profile with non-CS profile");
    int fail = 0;
    o->base_hot_threshold = hot_threshold(base, err, &fail);
    o->test_hot_threshold = hot_threshold(test, err, &fail);
    if (fail)
        return -1;
    struct ov v = {o, base, test, err};
    /* per-function sums; base ones are also used for unmatched functions */
    size_t nb = base->top.len, nt = test->top.len;
    struct fstats *bst = calloc(nb ? nb : 1, sizeof *bst), *tst = calloc(nt ? nt : 1, sizeof *tst);
    uint8_t *bmatched = calloc(nb ? nb : 1, 1);
    o->funcs = calloc(nt ? nt : 1, sizeof *o->funcs);
    if (!bst || !tst || !bmatched || !o->funcs) {
        free(bst);
        free(tst);
        free(bmatched);
        pk_overlap_free(o);
        return pk_err_set(err, "out of memory");
    }
    /* index of each live base profile in base->top, for matched marking */
    for (size_t i = 0; i < nb; i++) {
        const pk_fprof *f = PK_VEC_AT(&base->top, pk_fprof *, i);
        if (f->removed)
            continue;
        func_stats(f, o->base_hot_threshold, &bst[i]);
        o->base_sample += bst[i].sum;
        o->union_funcs++;
    }
    for (size_t i = 0; i < nt; i++) {
        const pk_fprof *f = PK_VEC_AT(&test->top, pk_fprof *, i);
        if (f->removed)
            continue;
        func_stats(f, o->test_hot_threshold, &tst[i]);
        o->test_sample += tst[i].sum;
    }
    int rc = 0;
    pk_u64map bidx = {0};
    for (size_t i = 0; i < nb && !rc; i++) {
        uint64_t *slot = pk_u64map_slot(&bidx, (uint64_t)(uintptr_t)PK_VEC_AT(&base->top, pk_fprof *, i));
        if (!slot)
            rc = pk_err_set(err, "out of memory");
        else
            *slot = i;
    }
    if (rc || !o->base_sample || !o->test_sample)
        goto out;
    for (size_t i = 0; i < nt && !rc; i++) {
        const pk_fprof *tf = PK_VEC_AT(&test->top, pk_fprof *, i);
        if (tf->removed)
            continue;
        pk_overlap_func *fo = &o->funcs[o->nfuncs++];
        fo->test = tf;
        fo->test_sample = tst[i].sum;
        fo->test_max = tst[i].max;
        fo->test_weight = (double)fo->test_sample / (double)o->test_sample;
        const pk_fprof *bf = match(base, test, tf, err, &rc);
        if (rc)
            break;
        if (!bf) {
            o->test_unique_funcs++;
            o->test_unique_sample += tst[i].sum;
            fo->test_unique_sample = tst[i].sum;
            hot_block(&v, 0, tst[i].sum, tst[i].hot);
            o->union_funcs++;
            o->union_sample += tst[i].sum;
            continue;
        }
        size_t bi = (size_t)*pk_u64map_get(&bidx, (uint64_t)(uintptr_t)bf);
        bmatched[bi] = 1;
        o->overlap_funcs++;
        fo->base = bf;
        fo->base_sample = bst[bi].sum;
        fo->base_weight = (double)fo->base_sample / (double)o->base_sample;
        double fis;
        if ((rc = internal(&v, bf, tf, fo, &fis)))
            break;
        if (fabs(fis) < OVERLAP_EPSILON)
            fis = 0;
        fo->similarity = weight_for_fs(o, fis, fo->base_sample, fo->test_sample);
        o->similarity += by_importance(o, fo->similarity, fo->base_sample, fo->test_sample);
        o->overlap_sample += fo->overlap_sample;
        o->union_sample += fo->union_sample;
        o->base_unique_sample += fo->base_unique_sample;
        o->test_unique_sample += fo->test_unique_sample;
    }
    for (size_t i = 0; i < nb && !rc; i++) {
        const pk_fprof *f = PK_VEC_AT(&base->top, pk_fprof *, i);
        if (f->removed || bmatched[i])
            continue;
        o->base_unique_funcs++;
        o->base_unique_sample += bst[i].sum;
        hot_block(&v, bst[i].sum, 0, bst[i].hot);
        o->union_sample += bst[i].sum;
    }
    if (fabs(o->similarity - 1) < OVERLAP_EPSILON)
        o->similarity = 1;
    /* hot functions: max record count at or above the profile's threshold */
    for (size_t i = 0; i < nb; i++)
        if (!PK_VEC_AT(&base->top, pk_fprof *, i)->removed && bst[i].max >= o->base_hot_threshold)
            o->hot_func_base++;
    o->hot_func_union = 0;
    for (size_t i = 0; i < nt && !rc; i++) {
        const pk_fprof *tf = PK_VEC_AT(&test->top, pk_fprof *, i);
        if (tf->removed || tst[i].max < o->test_hot_threshold)
            continue;
        o->hot_func_test++;
    }
    /* overlap of hot sets: base-hot functions also hot in test */
    for (size_t k = 0; k < o->nfuncs; k++) {
        const pk_overlap_func *fo = &o->funcs[k];
        if (!fo->base)
            continue;
        size_t bi = (size_t)*pk_u64map_get(&bidx, (uint64_t)(uintptr_t)fo->base);
        if (bst[bi].max >= o->base_hot_threshold && fo->test_max >= o->test_hot_threshold)
            o->hot_func_overlap++;
    }
    o->hot_func_union = o->hot_func_base + o->hot_func_test - o->hot_func_overlap;
out:
    pk_u64map_free(&bidx);
    free(bst);
    free(tst);
    free(bmatched);
    if (rc)
        pk_overlap_free(o);
    return rc;
}

void pk_overlap_free(pk_overlap *o)
{
    free(o->funcs);
    o->funcs = NULL;
    o->nfuncs = 0;
}

/* cs_cold.c — cold-context merging and trimming for flat CS profiles (see
 * cs_cold.h and preinline.h). */
#include "profgen/cs_cold.h"
#include "profgen/preinline.h"

#include <stdlib.h>

int pk_cs_merge_cold(pk_profset *ps, uint32_t keep_frames, bool drop, uint64_t *merged, pk_err *err)
{
    *merged = 0;
    if (!(ps->kind & PK_PROF_CS))
        return pk_err_set(err, "cold-context merging: the profile is not context-sensitive");
    pk_summary sum;
    if (pk_profset_summary(ps, &sum, err))
        return -1;
    pk_cold_opts o = {.threshold = pk_summary_threshold(&sum, 990000), .trim = drop, .merge = !drop,
                      .keep_frames = keep_frames};
    return pk_cs_trim_merge_cold(ps, &o, merged, err);
}

typedef struct cold {
    pk_fprof *f;
    pk_ctx_id to;                /* the context it merges into */
} cold;

static int by_target(const void *a, const void *b)
{
    const cold *x = a, *y = b;
    return x->to < y->to ? -1 : x->to > y->to;
}

int pk_cs_trim_merge_cold(pk_profset *ps, const pk_cold_opts *o, uint64_t *moved, pk_err *err)
{
    *moved = 0;
    if (!(ps->kind & PK_PROF_CS))
        return pk_err_set(err, "cold contexts: the profile is not context-sensitive");
    if ((!o->trim && !o->merge) || !o->threshold)
        return 0;
    bool base_only = o->base_only && !o->merge;
    uint32_t keep = o->keep_frames ? o->keep_frames : 1;
    size_t n = ps->top.len;
    cold *c = malloc((n + 1) * sizeof *c);
    pk_ctx_frame *frames = malloc((keep + 1) * sizeof *frames);
    if (!c || !frames) {
        free(c);
        free(frames);
        return pk_err_set(err, "out of memory");
    }
    size_t nc = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        size_t nf;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, f->ctx, &nf);
        if (f->removed || f->total >= o->threshold || (base_only && nf != 1))
            continue;
        size_t k = nf < keep ? nf : keep;
        memcpy(frames, fr + nf - k, k * sizeof *frames);
        c[nc].f = f;
        rc = pk_profset_intern_ctx(ps, frames, k, &c[nc].to, err);
        nc++;
    }
    qsort(c, nc, sizeof *c, by_target);
    /* one target at a time: its cold contexts, and whether a profile that
     * is not cold holds that context already */
    for (size_t i = 0; i < nc && !rc;) {
        size_t j = i;
        uint64_t sum = 0;
        pk_fprof *self = NULL; /* a cold profile that is the target itself */
        for (; j < nc && c[j].to == c[i].to; j++) {
            sum = pk_sat_add(sum, c[j].f->total);
            if (c[j].f->ctx == c[i].to)
                self = c[j].f;
        }
        pk_fprof *live = pk_profset_find_ctx(ps, c[i].to);
        bool warm = live && live != self;
        pk_fprof *to = NULL;
        if (o->merge && !(o->trim && sum < o->threshold && !warm))
            to = warm ? live : self ? self : pk_profset_get_ctx(ps, c[i].to, err);
        if (o->merge && !to && !(o->trim && sum < o->threshold && !warm)) {
            rc = -1;
            break;
        }
        for (size_t k = i; k < j && !rc; k++) {
            pk_fprof *f = c[k].f;
            if (f == to)
                continue;
            if (to && pk_fprof_merge(ps, to, ps, f, 1, err)) {
                rc = -1;
                break;
            }
            (*moved)++;
            pk_profset_remove(ps, f);
        }
        i = j;
    }
    free(c);
    free(frames);
    return rc;
}

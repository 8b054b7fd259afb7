/* cs_cold.c — cold-context merging for flat CS profiles (see preinline.h). */
#include "profgen/preinline.h"

#include <stdlib.h>

int pk_cs_merge_cold(pk_profset *ps, uint32_t keep_frames, bool drop, uint64_t *merged, pk_err *err)
{
    *merged = 0;
    if (!(ps->kind & PK_PROF_CS))
        return pk_err_set(err, "cold-context merging: the profile is not context-sensitive");
    if (keep_frames == 0)
        keep_frames = 1;
    pk_summary sum;
    if (pk_profset_summary(ps, &sum, err))
        return -1;
    uint64_t hot = pk_summary_threshold(&sum, 990000);
    /* Snapshot the profiles: merging creates new top-level entries. */
    size_t n = ps->top.len;
    pk_fprof **list = malloc((n + 1) * sizeof *list);
    pk_ctx_frame *frames = malloc((keep_frames + 1) * sizeof *frames);
    if (!list || !frames) {
        free(list);
        free(frames);
        return pk_err_set(err, "out of memory");
    }
    memcpy(list, ps->top.data, n * sizeof *list);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        pk_fprof *f = list[i];
        size_t nf;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, f->ctx, &nf);
        if (f->removed || f->total >= hot || nf <= keep_frames)
            continue;
        (*merged)++;
        if (drop) {
            pk_profset_remove(ps, f);
            continue;
        }
        memcpy(frames, fr + nf - keep_frames, keep_frames * sizeof *frames);
        pk_ctx_id id;
        pk_fprof *to;
        if (pk_profset_intern_ctx(ps, frames, keep_frames, &id, err) ||
            !(to = pk_profset_get_ctx(ps, id, err)) || pk_fprof_merge(ps, to, ps, f, 1, err)) {
            rc = -1;
            break;
        }
        pk_profset_remove(ps, f);
    }
    free(list);
    free(frames);
    return rc;
}

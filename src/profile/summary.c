/* summary.c — the profile summary, computed the way LLVM's
 * SampleProfileSummaryBuilder does, so a stored summary matches
 * llvm-profdata's byte for byte (clang reads its hot/cold thresholds there):
 *  - every body entry of every top-level profile and of every nested inlinee
 *    is one count (zeros included); inlinees flagged DuplicatedIntoBase are
 *    skipped (their samples are already in the base profile);
 *  - functions and the max function count (= max head samples) consider
 *    top-level profiles only;
 *  - CS profiles are first flattened by leaf function (contexts merged), since
 *    per-context counts would lower the thresholds;
 *  - each cutoff walks distinct counts from the largest, accumulating
 *    count × frequency until floor(total × cutoff / 1e6) is reached. */
#include "profile/profile_int.h"
#include "aggregate/aggregate.h"

#include <stdlib.h>

const uint32_t pk_summary_default_cutoffs[16] = {
    10000, 100000, 200000, 300000, 400000, 500000, 600000, 700000,
    800000, 900000, 950000, 990000, 999000, 999900, 999990, 999999,
};

uint64_t pk_summary_threshold(const pk_summary *s, uint32_t cutoff)
{
    for (uint32_t i = 0; i < s->num_entries; i++)
        if (s->entries[i].cutoff >= cutoff)
            return s->entries[i].min_count;
    return 0;
}

struct sum_acc {
    pk_summary *s;
    pk_vec counts; /* uint64_t */
};

static int add_record(struct sum_acc *a, const pk_fprof *f, int is_callsite)
{
    if (!is_callsite) {
        a->s->num_functions++;
        if (f->head > a->s->max_function_count)
            a->s->max_function_count = f->head;
    } else if (f->attrs & PK_ATTR_DUPLICATED_INTO_BASE) {
        return 0;
    }
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *sl = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (!pk_fprof_slot_in_body(f, i))
            continue;
        uint64_t *c = pk_vec_push(&a->counts);
        if (!c)
            return -1;
        *c = sl->count;
        /* LLVM adds without saturation; so do we, to stay byte-identical */
        a->s->total_count += sl->count;
        if (sl->count > a->s->max_count)
            a->s->max_count = sl->count;
        a->s->num_counts++;
    }
    for (size_t i = 0; i < f->children.len; i++)
        if (add_record(a, PK_VEC_AT(&f->children, pk_fprof *, i), 1))
            return -1;
    return 0;
}

/* The counts of a flat CS profile as LLVM sees them once contexts are
 * merged by leaf function: one per (function, location), the sum over its
 * contexts; a function's head samples summed likewise. */
static int flat_cs_counts(const pk_profset *ps, struct sum_acc *a, pk_err *err)
{
    pk_pairmap seen = {0}, sums = {0};
    pk_u64map heads = {0};
    int rc = -1;
    if (pk_pairmap_init(&seen, 1024) || pk_pairmap_init(&sums, 1024) || pk_u64map_init(&heads, 256))
        goto oom;
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (f->removed)
            continue;
        uint64_t *h = pk_u64map_slot(&heads, f->name);
        if (!h)
            goto oom;
        *h = pk_sat_add(*h, f->head);
        for (size_t k = 0; k < f->slots.len; k++) {
            const struct pk_fprof_slot *sl = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, k);
            if (!pk_fprof_slot_in_body(f, k))
                continue;
            if (pk_pairmap_add(&seen, f->name, sl->loc, 1) ||
                (sl->count && pk_pairmap_add(&sums, f->name, sl->loc, sl->count)))
                goto oom;
        }
    }
    a->s->num_functions = heads.len;
    for (size_t j = 0; j < pk_u64map_end(&heads); j++)
        if (pk_u64map_used(&heads, j) && pk_u64map_val(&heads, j) > a->s->max_function_count)
            a->s->max_function_count = pk_u64map_val(&heads, j);
    if (pk_vec_reserve(&a->counts, seen.len))
        goto oom;
    for (size_t j = 0; j < seen.cap; j++) {
        const pk_pair_count *e = &seen.e[j];
        if (!e->n)
            continue;
        uint64_t count = pk_pairmap_get(&sums, e->a, e->b);
        ((uint64_t *)a->counts.data)[a->counts.len++] = count;
        a->s->total_count += count;
        if (count > a->s->max_count)
            a->s->max_count = count;
        a->s->num_counts++;
    }
    rc = 0;
    goto done;
oom:
    pk_err_set(err, "out of memory");
done:
    pk_pairmap_free(&seen);
    pk_pairmap_free(&sums);
    pk_u64map_free(&heads);
    return rc;
}

int pk_profset_summary_cutoffs(const pk_profset *ps, const uint32_t *cutoffs, size_t n, pk_summary *out,
                               pk_err *err)
{
    if (n > PK_SUMMARY_MAX_ENTRIES)
        return pk_err_set(err, "too many summary cutoffs");
    memset(out, 0, sizeof *out);
    struct sum_acc a = {out, {0}};
    pk_vec_init(&a.counts, sizeof(uint64_t));
    int rc = 0;
    pk_profset flat;
    const pk_profset *use = ps;
    int have_flat = 0;
    bool nested = false;
    for (size_t i = 0; i < ps->top.len && !nested; i++)
        nested = PK_VEC_AT(&ps->top, pk_fprof *, i)->children.len != 0;
    if ((ps->kind & PK_PROF_CS) && !nested) {
        /* flat contexts: sum by (leaf function, location) without building
         * the merged profiles */
        rc = flat_cs_counts(ps, &a, err);
        use = NULL;
    } else if (ps->kind & PK_PROF_CS) {
        if (pk_profset_init(&flat, err))
            return -1;
        have_flat = 1;
        for (size_t i = 0; i < ps->top.len && !rc; i++) {
            const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
            if (f->removed)
                continue;
            pk_name_id nm;
            pk_fprof *d;
            if (pk_profset_name_is_guid(ps, f->name))
                rc = pk_profset_intern_guid(&flat, pk_profset_name_guid(ps, f->name), &nm, err);
            else
                rc = pk_profset_intern(&flat, pk_profset_name(ps, f->name), pk_profset_name_len(ps, f->name), &nm, err);
            if (!rc && !(d = pk_profset_get_func(&flat, nm, err)))
                rc = -1;
            if (!rc)
                rc = pk_fprof_merge(&flat, d, ps, f, 1, err);
        }
        use = &flat;
    }
    for (size_t i = 0; use && i < use->top.len && !rc; i++) {
        const pk_fprof *f = PK_VEC_AT(&use->top, pk_fprof *, i);
        if (!f->removed && add_record(&a, f, 0))
            rc = pk_err_set(err, "out of memory");
    }
    if (!rc) {
        uint64_t *c = a.counts.data;
        size_t nc = a.counts.len, it = 0;
        if (pk_sort_by_u64(c, nc, sizeof *c, 0))
            rc = pk_err_set(err, "out of memory");
        /* largest first */
        for (size_t i = 0, j = nc ? nc - 1 : 0; i < j; i++, j--) {
            uint64_t t = c[i];
            c[i] = c[j];
            c[j] = t;
        }
        uint64_t cur_sum = 0, count = 0, seen = 0;
        for (size_t k = 0; k < n; k++) {
            unsigned __int128 want = (unsigned __int128)out->total_count * cutoffs[k] / 1000000;
            while (cur_sum < want && it < nc) {
                /* one distinct count with its frequency at a time, as LLVM's
                 * std::map<count, freq> walk does */
                count = c[it];
                uint64_t freq = 0;
                while (it < nc && c[it] == count) {
                    freq++;
                    it++;
                }
                cur_sum += count * freq;
                seen += freq;
            }
            out->entries[k].cutoff = cutoffs[k];
            out->entries[k].min_count = count;
            out->entries[k].num_counts = (uint32_t)seen; /* LLVM keeps CountsSeen in 32 bits */
        }
        out->num_entries = (uint32_t)n;
    }
    pk_vec_free(&a.counts);
    if (have_flat)
        pk_profset_free(&flat);
    return rc;
}

int pk_profset_summary(const pk_profset *ps, pk_summary *out, pk_err *err)
{
    return pk_profset_summary_cutoffs(ps, pk_summary_default_cutoffs, 16, out, err);
}

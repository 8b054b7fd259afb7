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

#include <stddef.h>
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
 * contexts; a function's head samples summed likewise.
 *
 * The contexts are taken function by function (sorted by name). Within a
 * function, locations without a discriminator and below FLAT_DIRECT (every
 * probe index, most line offsets) are summed in an array indexed by line;
 * the others are listed, sorted and summed. Two hash tables keyed by
 * (function, location) did this before at several times the cost, on the
 * pre-inliner's critical path. */
#define FLAT_DIRECT 65536

struct flat_acc {
    uint64_t *sum;       /* [FLAT_DIRECT] */
    uint8_t *seen;       /* [FLAT_DIRECT] */
    pk_vec touched;      /* uint32_t: lines seen in the current function */
    pk_vec rest;         /* struct flat_rest: other locations of the function */
};

struct flat_rest {
    uint64_t loc, count;
};

struct flat_order {
    uint64_t name, idx;
};

static int emit_count(struct sum_acc *a, uint64_t count)
{
    uint64_t *c = pk_vec_push(&a->counts);
    if (!c)
        return -1;
    *c = count;
    a->s->total_count += count;
    if (count > a->s->max_count)
        a->s->max_count = count;
    a->s->num_counts++;
    return 0;
}

/* Adds one context profile's body to the function being summed. */
static int flat_add(struct flat_acc *fa, const pk_fprof *f)
{
    const struct pk_fprof_slot *sl = f->slots.data;
    for (size_t k = 0; k < f->slots.len; k++) {
        if (!pk_fprof_slot_in_body(f, k))
            continue;
        uint64_t loc = sl[k].loc;
        uint32_t line = pk_loc_line(loc);
        if (pk_loc_disc(loc) == 0 && line < FLAT_DIRECT) {
            if (!fa->seen[line]) {
                uint32_t *t = pk_vec_push(&fa->touched);
                if (!t)
                    return -1;
                *t = line;
                fa->seen[line] = 1;
                fa->sum[line] = 0;
            }
            fa->sum[line] = pk_sat_add(fa->sum[line], sl[k].count);
        } else {
            struct flat_rest *r = pk_vec_push(&fa->rest);
            if (!r)
                return -1;
            *r = (struct flat_rest){loc, sl[k].count};
        }
    }
    return 0;
}

/* The function's counts out; the accumulator cleared for the next one. */
static int flat_flush(struct flat_acc *fa, struct sum_acc *a)
{
    for (size_t i = 0; i < fa->touched.len; i++) {
        uint32_t line = PK_VEC_AT(&fa->touched, uint32_t, i);
        fa->seen[line] = 0;
        if (emit_count(a, fa->sum[line]))
            return -1;
    }
    fa->touched.len = 0;
    struct flat_rest *r = fa->rest.data;
    size_t n = fa->rest.len;
    if (pk_sort_by_u64(r, n, sizeof *r, offsetof(struct flat_rest, loc)))
        return -1;
    for (size_t j = 0; j < n;) {
        uint64_t count = r[j].count;
        size_t k = j + 1;
        for (; k < n && r[k].loc == r[j].loc; k++)
            count = pk_sat_add(count, r[k].count);
        if (emit_count(a, count))
            return -1;
        j = k;
    }
    fa->rest.len = 0;
    return 0;
}

static int flat_cs_counts(const pk_profset *ps, struct sum_acc *a, pk_err *err)
{
    struct flat_acc fa = {0};
    pk_vec_init(&fa.rest, sizeof(struct flat_rest));
    pk_vec_init(&fa.touched, sizeof(uint32_t));
    struct flat_order *order = malloc((ps->top.len ? ps->top.len : 1) * sizeof *order);
    fa.sum = malloc(FLAT_DIRECT * sizeof *fa.sum);
    fa.seen = calloc(FLAT_DIRECT, 1);
    int rc = -1;
    if (!order || !fa.sum || !fa.seen)
        goto done;
    size_t n = 0;
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed)
            order[n++] = (struct flat_order){f->name, i};
    }
    if (pk_sort_by_u64(order, n, sizeof *order, offsetof(struct flat_order, name)))
        goto done;
    for (size_t i = 0; i < n;) {
        uint64_t head = 0;
        size_t j = i;
        for (; j < n && order[j].name == order[i].name; j++) {
            const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, order[j].idx);
            head = pk_sat_add(head, f->head);
            if (flat_add(&fa, f))
                goto done;
        }
        if (flat_flush(&fa, a))
            goto done;
        a->s->num_functions++;
        if (head > a->s->max_function_count)
            a->s->max_function_count = head;
        i = j;
    }
    rc = 0;
done:
    free(order);
    free(fa.sum);
    free(fa.seen);
    pk_vec_free(&fa.touched);
    pk_vec_free(&fa.rest);
    return rc ? pk_err_set(err, "out of memory") : 0;
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
        for (size_t i = 0, j = nc ? nc - 1 : 0; !rc && i < j; i++, j--) {
            uint64_t t = c[i];
            c[i] = c[j];
            c[j] = t;
        }
        uint64_t cur_sum = 0, count = 0, seen = 0;
        for (size_t k = 0; k < n && !rc; k++) {
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

static uint64_t body_entries(const pk_fprof *f)
{
    uint64_t n = pk_fprof_num_body(f);
    for (size_t i = 0; i < f->children.len; i++)
        n += body_entries(PK_VEC_AT(&f->children, pk_fprof *, i));
    return n;
}

typedef struct func_density {
    double density;
    uint64_t samples;
} func_density;

static int by_density(const void *a, const void *b)
{
    const func_density *x = a, *y = b;
    if (x->density != y->density)
        return x->density > y->density ? -1 : 1;
    return x->samples < y->samples ? -1 : x->samples > y->samples; /* (llvm's tie order) */
}

double pk_profset_density(const pk_profset *ps, uint32_t cutoff, pk_err *err)
{
    func_density *d = malloc((ps->top.len + 1) * sizeof *d);
    if (!d) {
        pk_err_set(err, "out of memory");
        return -1;
    }
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        uint64_t size = f->removed ? 0 : body_entries(f);
        if (!size)
            continue;
        uint64_t samples = pk_fprof_body_sum(f);
        d[n++] = (func_density){(double)samples / (double)size, samples};
        total = pk_sat_add(total, samples);
    }
    qsort(d, n, sizeof *d, by_density);
    double density = 0, want = (double)total * cutoff / 1000000.0;
    uint64_t acc = 0;
    for (size_t i = 0; i < n && (double)acc < want; i++) {
        acc = pk_sat_add(acc, d[i].samples);
        density = d[i].density;
    }
    free(d);
    return density;
}

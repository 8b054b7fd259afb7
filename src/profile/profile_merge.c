/* profile_merge.c — merging function profiles and profile sets (weighted,
 * across name tables and into MD5 sets), scaling, and raising body counts to
 * the calls they make. */
#include "profile/profile_int.h"

#include <stdlib.h>

static int map_name(pk_profset *dps, const pk_profset *sps, pk_name_id id, pk_name_id *out, pk_err *err)
{
    if (dps == sps) {
        *out = id;
        return 0;
    }
    /* an MD5 set holds GUIDs only: names from a plain set become theirs */
    if (pk_profset_name_is_guid(sps, id) || (dps->kind & PK_PROF_MD5))
        return pk_profset_intern_guid(dps, pk_profset_name_guid(sps, id), out, err);
    return pk_profset_intern(dps, pk_profset_name(sps, id), pk_profset_name_len(sps, id), out, err);
}

/* The body counts of src, times weight, into dst. Merged profiles of one
 * function mostly list the same locations in the same order (the probes of
 * one body), so dst's slot at the same position is tried before the index,
 * and an empty dst takes src's locations wholesale. */
static int merge_body(pk_fprof *dst, const pk_fprof *src, uint64_t weight, pk_err *err)
{
    const struct pk_fprof_slot *ss = src->slots.data;
    if (!dst->slots.len) {
        if (pk_vec_reserve(&dst->slots, src->slots.len))
            return pk_err_set(err, "out of memory");
        struct pk_fprof_slot *ds = dst->slots.data;
        for (size_t i = 0; i < src->slots.len; i++)
            if (pk_fprof_slot_in_body(src, i))
                ds[dst->slots.len++] = (struct pk_fprof_slot){ss[i].loc, pk_sat_mul(ss[i].count, weight)};
        dst->nbody = (uint32_t)dst->slots.len;
        if (dst->slots.len > PK_FPROF_SLOT_SCAN) {
            if (pk_fprof_slot_index_build(dst, pk_fprof_slot_bits_for(dst->slots.len, 6)))
                return pk_err_set(err, "out of memory");
        }
        return 0;
    }
    for (size_t i = 0; i < src->slots.len; i++) {
        if (!pk_fprof_slot_in_body(src, i))
            continue;
        uint64_t n = pk_sat_mul(ss[i].count, weight);
        struct pk_fprof_slot *ds = dst->slots.data;
        if (i < dst->slots.len && ds[i].loc == ss[i].loc && pk_fprof_slot_in_body(dst, i)) {
            ds[i].count = pk_sat_add(ds[i].count, n);
        } else if (pk_fprof_add_body(dst, pk_loc_line(ss[i].loc), pk_loc_disc(ss[i].loc), n, err)) {
            return -1;
        }
    }
    return 0;
}

int pk_fprof_merge(pk_profset *dps, pk_fprof *dst, const pk_profset *sps, const pk_fprof *src, uint64_t weight,
                   pk_err *err)
{
    if (dst->checksum == 0)
        dst->checksum = src->checksum;
    dst->attrs |= src->attrs;
    dst->total = pk_sat_add(dst->total, pk_sat_mul(src->total, weight));
    dst->head = pk_sat_add(dst->head, pk_sat_mul(src->head, weight));
    if (merge_body(dst, src, weight, err))
        return -1;
    for (size_t i = 0; i < pk_u64map_end(&src->calls); i++) {
        if (!pk_u64map_used(&src->calls, i))
            continue;
        uint64_t loc = PK_VEC_AT(&src->slots, struct pk_fprof_slot, pk_u64map_key(&src->calls, i) >> 32).loc;
        pk_name_id t;
        if (map_name(dps, sps, (pk_name_id)pk_u64map_key(&src->calls, i), &t, err) ||
            pk_fprof_add_call(dst, pk_loc_line(loc), pk_loc_disc(loc), t, pk_sat_mul(pk_u64map_val(&src->calls, i), weight), err))
            return -1;
    }
    for (size_t i = 0; i < pk_u64map_end(&src->sites); i++) {
        if (!pk_u64map_used(&src->sites, i))
            continue;
        uint64_t loc = PK_VEC_AT(&src->slots, struct pk_fprof_slot, pk_u64map_key(&src->sites, i) >> 32).loc;
        const pk_fprof *sc = PK_VEC_AT(&src->children, pk_fprof *, pk_u64map_val(&src->sites, i));
        pk_name_id callee;
        if (map_name(dps, sps, sc->name, &callee, err))
            return -1;
        pk_fprof *dc = pk_fprof_callsite(dps, dst, pk_loc_line(loc), pk_loc_disc(loc), callee, err);
        if (!dc || pk_fprof_merge(dps, dc, sps, sc, weight, err))
            return -1;
    }
    return 0;
}

bool pk_fprof_take(pk_fprof *dst, pk_fprof *src)
{
    if (dst->slots.len || dst->calls.len || dst->sites.len || dst->children.len)
        return false;
    if (dst->checksum == 0)
        dst->checksum = src->checksum;
    dst->attrs |= src->attrs;
    dst->total = pk_sat_add(dst->total, src->total);
    dst->head = pk_sat_add(dst->head, src->head);
    /* (dst's empty containers hold no memory but their own, swapped to src
     * and freed with it) */
    pk_vec tv = dst->slots;
    dst->slots = src->slots;
    src->slots = tv;
    src->slots.len = 0;
    free(dst->slot_of);
    dst->slot_of = src->slot_of;
    dst->slot_bits = src->slot_bits;
    src->slot_of = NULL;
    src->slot_bits = 0;
    free(dst->nobody);
    dst->nobody = src->nobody;
    dst->nobody_words = src->nobody_words;
    src->nobody = NULL;
    src->nobody_words = 0;
    pk_u64map tm = dst->calls;
    dst->calls = src->calls;
    src->calls = tm;
    tm = dst->sites;
    dst->sites = src->sites;
    src->sites = tm;
    tv = dst->children;
    dst->children = src->children;
    src->children = tv;
    dst->nbody = src->nbody;
    src->nbody = 0;
    src->total = src->head = 0;
    return true;
}

int pk_profset_merge(pk_profset *dst, const pk_profset *src, uint64_t weight, size_t *mismatches, pk_err *err)
{
    if (mismatches)
        *mismatches = 0;
    if (pk_profset_count(dst) && pk_profset_count(src)) {
        if ((dst->kind ^ src->kind) & PK_PROF_PROBE)
            return pk_err_set(err, "cannot merge a probe-based profile with a line-based one");
        if ((dst->kind ^ src->kind) & PK_PROF_CS)
            return pk_err_set(err, "cannot merge a context-sensitive profile with a non-context one");
    }
    if ((src->kind & PK_PROF_MD5) && !(dst->kind & PK_PROF_MD5) && pk_profset_count(dst)) {
        /* names must be compared as GUIDs from now on: rebuild dst as an
         * MD5 set (LLVM matches a name and its GUID as the same function) */
        pk_profset tmp;
        if (pk_profset_init(&tmp, err))
            return -1;
        tmp.kind = dst->kind | PK_PROF_MD5;
        if (pk_profset_merge(&tmp, dst, 1, NULL, err)) {
            pk_profset_free(&tmp);
            return -1;
        }
        pk_profset_free(dst);
        *dst = tmp;
    }
    if (!pk_profset_count(dst))
        dst->kind = src->kind | (dst->kind & PK_PROF_MD5);
    else
        dst->kind |= src->kind & (PK_PROF_PREINLINED | PK_PROF_FS | PK_PROF_MD5 | PK_PROF_PARTIAL);
    pk_vec frames;
    pk_vec_init(&frames, sizeof(pk_ctx_frame));
    int rc = 0;
    for (size_t i = 0; i < pk_u64map_end(&src->symbols) && !rc; i++) {
        pk_name_id id;
        if (pk_u64map_used(&src->symbols, i))
            rc = map_name(dst, src, (pk_name_id)pk_u64map_key(&src->symbols, i), &id, err) ||
                         pk_profset_add_symbol(dst, id, err)
                     ? -1
                     : 0;
    }
    for (size_t i = 0; i < src->top.len && !rc; i++) {
        const pk_fprof *sf = PK_VEC_AT(&src->top, pk_fprof *, i);
        if (sf->removed)
            continue;
        size_t n;
        const pk_ctx_frame *sfr = pk_profset_ctx(src, sf->ctx, &n);
        frames.len = 0;
        if (pk_vec_reserve(&frames, n)) {
            rc = pk_err_set(err, "out of memory");
            break;
        }
        for (size_t k = 0; k < n && !rc; k++) {
            pk_ctx_frame *d = pk_vec_push(&frames);
            *d = sfr[k];
            rc = map_name(dst, src, sfr[k].name, &d->name, err);
        }
        pk_ctx_id ctx;
        if (rc || (rc = pk_profset_intern_ctx(dst, frames.data, n, &ctx, err)))
            break;
        pk_fprof *df = pk_profset_get_ctx(dst, ctx, err);
        if (!df) {
            rc = -1;
            break;
        }
        if (df->checksum && sf->checksum && df->checksum != sf->checksum) {
            if (mismatches)
                (*mismatches)++;
            continue;
        }
        rc = pk_fprof_merge(dst, df, src, sf, weight, err);
    }
    pk_vec_free(&frames);
    return rc;
}

static uint64_t scale1(uint64_t v, uint64_t num, uint64_t den)
{
    unsigned __int128 r = (unsigned __int128)v * num / den;
    return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

static void fprof_scale(pk_fprof *f, uint64_t num, uint64_t den)
{
    f->total = scale1(f->total, num, den);
    f->head = scale1(f->head, num, den);
    for (size_t i = 0; i < f->slots.len; i++) {
        struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        s->count = scale1(s->count, num, den);
    }
    for (size_t i = 0; i < pk_u64map_end(&f->calls); i++)
        if (pk_u64map_used(&f->calls, i))
            *pk_u64map_valp(&f->calls, i) = scale1(pk_u64map_val(&f->calls, i), num, den);
    for (size_t i = 0; i < f->children.len; i++)
        fprof_scale(PK_VEC_AT(&f->children, pk_fprof *, i), num, den);
}

void pk_profset_scale(pk_profset *ps, uint64_t num, uint64_t den)
{
    if (!den)
        return;
    for (size_t i = 0; i < ps->top.len; i++)
        fprof_scale(PK_VEC_AT(&ps->top, pk_fprof *, i), num, den);
}

static void fprof_mark_inline(pk_fprof *f, bool inline_it)
{
    if (inline_it)
        f->attrs |= PK_ATTR_SHOULD_BE_INLINED;
    else
        f->attrs &= ~(uint32_t)PK_ATTR_SHOULD_BE_INLINED;
    for (size_t i = 0; i < f->children.len; i++)
        fprof_mark_inline(PK_VEC_AT(&f->children, pk_fprof *, i), inline_it);
}

static void profset_mark_inline(pk_profset *ps, bool inline_it)
{
    for (size_t i = 0; i < ps->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed)
            fprof_mark_inline(f, inline_it);
    }
}

void pk_profset_mark_preinlined(pk_profset *ps, bool every_context)
{
    ps->kind |= PK_PROF_PREINLINED;
    if (every_context)
        profset_mark_inline(ps, true);
}

void pk_profset_unmark_preinlined(pk_profset *ps)
{
    ps->kind &= ~(uint32_t)PK_PROF_PREINLINED;
    profset_mark_inline(ps, false);
}

int pk_fprof_raise_to_calls(pk_profset *ps, pk_fprof *f, bool nested, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, f, &v, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        uint64_t sum = 0;
        for (uint32_t k = 0; k < v.body[i].ncalls; k++)
            sum = pk_sat_add(sum, v.body[i].calls[k].count);
        if (sum > v.body[i].count)
            rc = pk_fprof_set_body(f, v.body[i].line, v.body[i].disc, sum, err);
    }
    for (size_t i = 0; nested && i < v.nsites && !rc; i++)
        rc = pk_fprof_raise_to_calls(ps, v.sites[i].callee, true, err);
    pk_fprof_view_free(&v);
    return rc;
}

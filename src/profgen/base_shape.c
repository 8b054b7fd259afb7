/* base_shape.c — base profiles of CSSPGO from IP samples take their
 * function's context-free shape (see base_shape.h). */
#include "profgen/base_shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pk_ip_flat_ranges(pk_binary *bin, const pk_ipraw *deep, const pk_ip_infer_opts *io, pk_rawprof *flat,
                      pk_err *err)
{
    pk_ipraw f;
    if (pk_ipraw_init(&f, &deep->code, deep->ctxs.base, 0, err))
        return -1;
    f.elf = deep->elf;
    f.allow_minus_one = deep->allow_minus_one;
    pk_ip_infer_stats st;
    int rc = pk_ipraw_flatten(deep, &f, err) || pk_ip_to_ranges(bin, &f, io, NULL, flat, &st, err) ? -1 : 0;
    pk_ipraw_free(&f);
    return rc;
}

static uint64_t scaled(uint64_t count, double s)
{
    double v = nearbyint((double)count * s);
    return v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)v;
}

/* A name of `from` as an id of `to`. */
static int same_name(pk_profset *to, const pk_profset *from, pk_name_id name, pk_name_id *id, pk_err *err)
{
    if (pk_profset_name_is_guid(from, name))
        return pk_profset_intern_guid(to, pk_profset_name_guid(from, name), id, err);
    return pk_profset_intern(to, pk_profset_name(from, name), pk_profset_name_len(from, name), id, err);
}

/* f's own body and calls from src, scaled to f's own body sum. 1 when
 * shaped, 0 when there is nothing to scale (no body on either side). */
static int shape_one(pk_profset *ps, pk_fprof *f, const pk_profset *fs, const pk_fprof *src, pk_err *err)
{
    pk_fprof_view own, flat;
    if (pk_fprof_view_build(ps, f, &own, err))
        return -1;
    if (pk_fprof_view_build(fs, src, &flat, err)) {
        pk_fprof_view_free(&own);
        return -1;
    }
    /* flat's counts where f has a body entry: a call site f has inlined
     * holds the inlinee alone, as the pre-inliner left it; the scale is
     * over those entries, so f's own mass stays */
    uint64_t own_sum = 0, flat_sum = 0, new_sum = 0;
    size_t *match = malloc((flat.nbody + 1) * sizeof *match);
    int rc = 0;
    if (!match) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < own.nbody; i++)
        own_sum = pk_sat_add(own_sum, own.body[i].count);
    size_t nmatch = 0;
    for (size_t i = 0, j = 0; i < flat.nbody; i++) {
        const pk_body_entry *b = &flat.body[i];
        while (j < own.nbody && pk_loc(own.body[j].line, own.body[j].disc) < pk_loc(b->line, b->disc))
            j++;
        if (j < own.nbody && own.body[j].line == b->line && own.body[j].disc == b->disc) {
            match[nmatch++] = i;
            flat_sum = pk_sat_add(flat_sum, b->count);
        }
    }
    if (!own_sum || !flat_sum)
        goto out;
    double s = (double)own_sum / (double)flat_sum;
    pk_fprof_clear_calls(f);
    for (size_t i = 0; i < own.nbody && !rc; i++)
        rc = pk_fprof_set_body(f, own.body[i].line, own.body[i].disc, 0, err);
    for (size_t m = 0; m < nmatch && !rc; m++) {
        const pk_body_entry *b = &flat.body[match[m]];
        uint64_t c = scaled(b->count, s);
        new_sum = pk_sat_add(new_sum, c);
        rc = pk_fprof_set_body(f, b->line, b->disc, c, err);
        for (uint32_t k = 0; k < b->ncalls && !rc; k++) {
            pk_name_id t;
            uint64_t tc = scaled(b->calls[k].count, s);
            rc = same_name(ps, fs, b->calls[k].name, &t, err) ||
                 (tc && pk_fprof_add_call(f, b->line, b->disc, t, tc, err));
        }
    }
    if (rc) {
        rc = -1;
        goto out;
    }
    f->head = scaled(src->head, s);
    f->total = f->total >= own_sum ? pk_sat_add(f->total - own_sum, new_sum) : new_sum;
    rc = 1;
out:
    free(match);
    pk_fprof_view_free(&own);
    pk_fprof_view_free(&flat);
    return rc;
}

int pk_cs_base_shape(pk_profset *nested, const pk_profset *flat, pk_base_shape_stats *st, pk_err *err)
{
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < nested->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&nested->top, pk_fprof *, i);
        size_t nframes;
        if (f->removed || (pk_profset_ctx(nested, f->ctx, &nframes), nframes != 1))
            continue;
        const pk_fprof *src = pk_profset_name_is_guid(nested, f->name)
                                  ? pk_profset_find_guid(flat, pk_profset_name_guid(nested, f->name))
                                  : pk_profset_find(flat, pk_profset_name(nested, f->name));
        if (!src || src->removed || (src->checksum && f->checksum && src->checksum != f->checksum)) {
            st->no_flat++;
            continue;
        }
        int r = shape_one(nested, f, flat, src, err);
        if (r < 0)
            return -1;
        st->profiles += r;
        st->no_flat += !r;
    }
    return 0;
}

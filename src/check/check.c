/* check.c — the staleness report (built here, sorted, totalled), the
 * probe-profile check (CFG checksums against `.pseudo_probe_desc`) and the
 * entry points. The line-based check is in check_lines.c. */
#include <stdio.h>
#include "check/check_int.h"
#include "binary/probe_loader.h"

#include <stdlib.h>

/* ---- report construction ---- */

int pk_check_build_init(pk_check_build *b, pk_check_report *r, const pk_profset *ps, pk_err *err)
{
    memset(b, 0, sizeof *b);
    b->r = r;
    b->ps = ps;
    pk_vec_init(&b->funcs, sizeof(pk_check_func));
    pk_vec_init(&b->locs, sizeof(struct pk_check_bloc));
    if (pk_u64map_init(&b->func_of, 64) || pk_u64map_init(&b->str_of, 64))
        return pk_err_set(err, "out of memory");
    return 0;
}

void pk_check_build_free(pk_check_build *b)
{
    pk_vec_free(&b->funcs);
    pk_vec_free(&b->locs);
    pk_u64map_free(&b->func_of);
    pk_u64map_free(&b->str_of);
}

const char *pk_check_build_str(pk_check_build *b, const char *str, size_t n, pk_err *err)
{
    char *s = malloc(n + 1);
    char **keep = s ? pk_vec_push(&b->r->strings_) : NULL;
    if (!keep) {
        free(s);
        pk_err_set(err, "out of memory");
        return NULL;
    }
    memcpy(s, str, n);
    s[n] = 0;
    *keep = s;
    return s;
}

/* The report's own copy of a profile name (the report outlives the set). */
static const char *report_name(pk_check_build *b, pk_name_id id, pk_err *err)
{
    uint64_t *slot = pk_u64map_slot(&b->str_of, id);
    if (!slot) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    if (!*slot) {
        const char *name = pk_profset_name(b->ps, id);
        size_t len = pk_profset_name_len(b->ps, id);
        if (pk_profset_name_is_guid(b->ps, id) && b->guid_name)
            b->guid_name(b->guid_ctx, pk_profset_name_guid(b->ps, id), &name, &len);
        const char *s = pk_check_build_str(b, name, len, err);
        if (!s)
            return NULL;
        *slot = (uint64_t)(uintptr_t)s;
    }
    return (const char *)(uintptr_t)*slot;
}

size_t pk_check_uniq_base(const char *name, size_t len)
{
    const char *u = memmem(name, len, ".__uniq.", 8);
    return u ? (size_t)(u - name) : len;
}

pk_check_func *pk_check_build_func(pk_check_build *b, pk_name_id name, size_t *index, pk_err *err)
{
    uint64_t *slot = pk_u64map_slot(&b->func_of, name);
    if (!slot) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    if (!*slot) {
        const char *s = report_name(b, name, err);
        if (!s)
            return NULL;
        pk_check_func *f = pk_vec_push(&b->funcs);
        if (!f) {
            pk_err_set(err, "out of memory");
            return NULL;
        }
        f->name = s;
        *slot = b->funcs.len;
    }
    *index = (size_t)(*slot - 1);
    return &PK_VEC_AT(&b->funcs, pk_check_func, *index);
}

static int add_loc(pk_check_build *b, size_t func, pk_name_id func_name, pk_name_id callee, uint32_t line,
                   uint32_t disc, uint32_t why, bool inlined, uint64_t samples, pk_err *err)
{
    const char *fn = report_name(b, func_name, err), *cn = NULL;
    if (!fn)
        return -1;
    if (callee != PK_NO_NAME && !(cn = report_name(b, callee, err)))
        return -1;
    struct pk_check_bloc *l = pk_vec_push(&b->locs);
    if (!l)
        return pk_err_set(err, "out of memory");
    *l = (struct pk_check_bloc){
        .loc = {.func = fn, .callee = cn, .line = line, .disc = disc, .why = why, .inlined = inlined,
                .samples = samples},
        .func = func};
    return 0;
}

int pk_check_build_loc(pk_check_build *b, size_t func, pk_name_id func_name, pk_name_id callee, uint32_t line,
                       uint32_t disc, uint32_t why, uint64_t samples, pk_err *err)
{
    return add_loc(b, func, func_name, callee, line, disc, why, false, samples, err);
}

int pk_check_build_inlinee(pk_check_build *b, size_t func, pk_name_id func_name, pk_name_id callee, uint32_t line,
                           uint32_t disc, uint32_t why, uint64_t samples, pk_err *err)
{
    return add_loc(b, func, func_name, callee, line, disc, why, true, samples, err);
}

static int func_cmp(const void *a, const void *b)
{
    const pk_check_func *x = a, *y = b;
    if (x->stale_samples != y->stale_samples)
        return x->stale_samples > y->stale_samples ? -1 : 1;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int loc_cmp(const void *a, const void *b)
{
    const struct pk_check_bloc *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->loc.samples != y->loc.samples)
        return x->loc.samples > y->loc.samples ? -1 : 1;
    int c = strcmp(x->loc.func, y->loc.func);
    if (c)
        return c;
    if (x->loc.line != y->loc.line)
        return x->loc.line < y->loc.line ? -1 : 1;
    if (x->loc.disc != y->loc.disc)
        return x->loc.disc < y->loc.disc ? -1 : 1;
    return strcmp(x->loc.callee ? x->loc.callee : "", y->loc.callee ? y->loc.callee : "");
}

int pk_check_build_finish(pk_check_build *b, pk_err *err)
{
    pk_check_report *r = b->r;
    size_t n = b->funcs.len;
    pk_check_func *f = b->funcs.data;
    /* sort the functions, remembering where each one went (first_loc holds
     * the old index meanwhile) */
    for (size_t i = 0; i < n; i++)
        f[i].first_loc = i;
    if (n)
        qsort(f, n, sizeof *f, func_cmp);
    size_t *where = malloc((n ? n : 1) * sizeof *where);
    if (!where)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        where[f[i].first_loc] = i;
    struct pk_check_bloc *bl = b->locs.data;
    size_t nl = b->locs.len;
    for (size_t i = 0; i < nl; i++)
        bl[i].func = where[bl[i].func];
    free(where);
    if (nl) /* none: b->locs.data is NULL */
        qsort(bl, nl, sizeof *bl, loc_cmp);
    r->locs = malloc((nl ? nl : 1) * sizeof *r->locs);
    if (!r->locs)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        f[i].first_loc = f[i].nlocs = 0;
    for (size_t i = 0; i < nl; i++) {
        r->locs[i] = bl[i].loc;
        pk_check_func *g = &f[bl[i].func];
        if (!g->nlocs)
            g->first_loc = i;
        g->nlocs++;
    }
    r->nlocs = nl;
    for (size_t i = 0; i < n; i++) {
        r->samples = pk_sat_add(r->samples, f[i].samples);
        r->stale_samples = pk_sat_add(r->stale_samples, f[i].stale_samples);
        r->stale_functions += !!f[i].flags;
        if (f[i].stale_samples) /* a key with no sample moved no weight */
            r->stale_function_samples = pk_sat_add(r->stale_function_samples, f[i].samples);
        r->missing_functions += !!(f[i].flags & PK_STALE_MISSING);
        r->checksum_functions += !!(f[i].flags & PK_STALE_CHECKSUM);
        r->line_functions += !!(f[i].flags & PK_STALE_LINES);
        r->call_functions += !!(f[i].flags & PK_STALE_CALLS);
    }
    for (size_t i = 0; i < nl; i++) {
        uint64_t s = r->locs[i].samples;
        switch (r->locs[i].why) {
        case PK_STALE_MISSING: r->missing_samples = pk_sat_add(r->missing_samples, s); break;
        case PK_STALE_CHECKSUM: r->checksum_samples = pk_sat_add(r->checksum_samples, s); break;
        case PK_STALE_LINES: r->line_samples = pk_sat_add(r->line_samples, s); break;
        default: r->call_samples = pk_sat_add(r->call_samples, s); break;
        }
    }
    r->funcs = f;
    r->nfuncs = r->functions = n;
    pk_vec_init(&b->funcs, sizeof(pk_check_func)); /* the report owns the array now */
    return 0;
}

/* ---- probe profiles ---- */

typedef struct probe_check {
    pk_check_build *b;
    const pk_probe_descs *descs;
} probe_check;

/* The descriptor of a profile name: by GUID (MD5 of the name, or the GUID
 * itself for an MD5 name table). */
static const pk_probe_desc *desc_of(const probe_check *pc, pk_name_id name)
{
    return pk_probe_descs_find(pc->descs, pk_profset_name_guid(pc->b->ps, name));
}

/* A missing function whose name differs from a descriptor's only in its
 * .__uniq. suffix: the hash of the source path changed, not the function. */
static int probe_uniq_hint(probe_check *pc, pk_check_func *cf, pk_name_id name, pk_err *err)
{
    const char *s = pk_profset_name(pc->b->ps, name);
    size_t len = pk_profset_name_len(pc->b->ps, name), base = pk_check_uniq_base(s, len);
    if (base == len)
        return 0;
    for (size_t i = 0; i < pc->descs->n; i++) {
        const pk_probe_desc *d = &pc->descs->descs[i];
        if (pk_check_uniq_base(d->name, d->name_len) == base && !memcmp(d->name, s, base)) {
            cf->same_but_uniq = pk_check_build_str(pc->b, d->name, d->name_len, err);
            return cf->same_but_uniq ? 0 : -1;
        }
    }
    return 0;
}

static int desc_name(void *ctx, uint64_t guid, const char **name, size_t *len)
{
    const pk_probe_desc *d = pk_probe_descs_find(ctx, guid);
    if (!d)
        return -1;
    *name = d->name;
    *len = d->name_len;
    return 0;
}

/* Inlinees of a profile whose checksum matched: clang checks theirs too. */
static int probe_inlinees(probe_check *pc, const pk_fprof *f, size_t fi, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(pc->b->ps, f, &v, err))
        return -1;
    int rc = -1;
    pk_check_func *cf = &PK_VEC_AT(&pc->b->funcs, pk_check_func, fi);
    for (size_t i = 0; i < v.nsites; i++) {
        const pk_fprof *c = v.sites[i].callee;
        uint64_t s = pk_fprof_body_sum(c);
        const pk_probe_desc *d = desc_of(pc, c->name);
        uint32_t why = !d ? PK_STALE_MISSING : c->checksum && c->checksum != d->cfg_hash ? PK_STALE_CHECKSUM : 0;
        cf->calls++;
        if (!why) {
            if (probe_inlinees(pc, c, fi, err))
                goto out;
            cf = &PK_VEC_AT(&pc->b->funcs, pk_check_func, fi);
            continue;
        }
        /* the function's own checksum matched: a stale inlinee is a call site
         * whose callee changed (or went away) */
        cf->stale_calls++;
        cf->flags |= PK_STALE_CALLS;
        cf->stale_samples = pk_sat_add(cf->stale_samples, s);
        if (pk_check_build_inlinee(pc->b, fi, f->name, c->name, v.sites[i].line, v.sites[i].disc, why, s, err))
            goto out;
        cf = &PK_VEC_AT(&pc->b->funcs, pk_check_func, fi);
    }
    rc = 0;
out:
    pk_fprof_view_free(&v);
    return rc;
}

static int check_probes(pk_binary *bin, pk_check_build *b, pk_err *err)
{
    pk_elf *elf = pk_binary_elf(bin);
    const pk_elf_section *sec = pk_elf_section_by_name(elf, ".pseudo_probe_desc");
    if (!sec)
        return pk_err_set(err, "%s: the profile is probe-based but the binary has no .pseudo_probe_desc section "
                          "(not built with -fpseudo-probe-for-profiling)", pk_elf_path(elf));
    const uint8_t *data;
    size_t size;
    if (pk_elf_section_data(elf, sec, &data, &size, err))
        return -1;
    pk_probe_descs descs;
    if (pk_probe_descs_decode(&descs, data, size, sec->offset, pk_elf_path(elf), err))
        return -1;
    b->r->bin_functions = descs.n;
    probe_check pc = {.b = b, .descs = &descs};
    b->guid_name = desc_name;
    b->guid_ctx = &descs;
    int rc = -1;
    for (size_t i = 0; i < b->ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&b->ps->top, pk_fprof *, i);
        if (f->removed)
            continue;
        size_t fi;
        pk_check_func *cf = pk_check_build_func(b, f->name, &fi, err);
        if (!cf)
            goto out;
        uint64_t s = pk_fprof_body_sum(f);
        cf->contexts++;
        cf->samples = pk_sat_add(cf->samples, s);
        const pk_probe_desc *d = desc_of(&pc, f->name);
        if (f->checksum)
            cf->profile_checksum = f->checksum;
        if (d)
            cf->binary_checksum = d->cfg_hash;
        uint32_t why = !d ? PK_STALE_MISSING : f->checksum && f->checksum != d->cfg_hash ? PK_STALE_CHECKSUM : 0;
        if (why) {
            cf->flags |= why;
            cf->stale_samples = pk_sat_add(cf->stale_samples, s);
            if (pk_check_build_loc(b, fi, f->name, PK_NO_NAME, 0, 0, why, s, err) ||
                (why == PK_STALE_MISSING && !cf->same_but_uniq && probe_uniq_hint(&pc, cf, f->name, err)))
                goto out;
            continue;
        }
        if (probe_inlinees(&pc, f, fi, err))
            goto out;
    }
    rc = 0;
out:
    b->guid_name = NULL;
    pk_probe_descs_free(&descs);
    return rc;
}

/* ---- entry points ---- */

int pk_check_profile(pk_binary *bin, const pk_profset *ps, const pk_check_opts *o, pk_check_report *out,
                     pk_err *err)
{
    memset(out, 0, sizeof *out);
    pk_vec_init(&out->strings_, sizeof(char *));
    out->kind = ps->kind & PK_PROF_PROBE ? PK_CHECK_PROBES : PK_CHECK_LINES;
    out->cs = !!(ps->kind & PK_PROF_CS);
    out->ignore_disc = o && o->ignore_disc;
    pk_check_build b;
    int rc = -1;
    if (pk_check_build_init(&b, out, ps, err))
        goto out;
    if (out->kind == PK_CHECK_PROBES ? check_probes(bin, &b, err) : pk_check_lines(bin, &b, out->ignore_disc, err))
        goto out;
    rc = pk_check_build_finish(&b, err);
out:
    pk_check_build_free(&b);
    return rc;
}

int pk_check_files(const char *binary, const pk_debug_opts *debug, const char *profile, pk_prof_format *fmt_out,
                   char *debug_origin, size_t debug_origin_size, pk_check_report *out, pk_err *err)
{
    memset(out, 0, sizeof *out);
    pk_vec_init(&out->strings_, sizeof(char *));
    pk_profset ps;
    if (pk_profset_init(&ps, err))
        return -1;
    pk_prof_format fmt = PK_FMT_AUTO;
    pk_binary *bin = NULL;
    int rc = -1;
    if (pk_prof_read_file(&ps, profile, PK_FMT_AUTO, &fmt, err))
        goto out;
    if (fmt_out)
        *fmt_out = fmt;
    if (pk_binary_open_opts(&bin, binary, debug, err))
        goto out;
    if (debug_origin && debug_origin_size)
        snprintf(debug_origin, debug_origin_size, "%s", pk_binary_debug_origin(bin));
    /* GCC's format has no discriminators: compare lines only */
    pk_check_opts o = {.ignore_disc = fmt == PK_FMT_GCC};
    rc = pk_check_profile(bin, &ps, &o, out, err);
out:
    if (bin)
        pk_binary_close(bin);
    pk_profset_free(&ps);
    return rc;
}

void pk_check_report_free(pk_check_report *r)
{
    for (size_t i = 0; i < r->strings_.len; i++)
        free(PK_VEC_AT(&r->strings_, char *, i));
    pk_vec_free(&r->strings_);
    free(r->funcs);
    free(r->locs);
    memset(r, 0, sizeof *r);
}

double pk_check_stale_share(const pk_check_report *r)
{
    return r->samples ? (double)r->stale_samples / (double)r->samples : 0.0;
}

bool pk_check_is_stale(const pk_check_report *r, double max_share)
{
    return pk_check_stale_share(r) > max_share;
}

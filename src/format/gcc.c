/* gcc.c — GCC AutoFDO profiles (.afdo) as gcc-12..15 read them
 * (AUTO_PROFILE_VERSION 2): 32-bit little-endian words, 64-bit counters as
 * two words (low first), strings as a byte length including the NUL then the
 * bytes, unpadded. The reader also takes format 1 / AutoFDO's "407*" files
 * (strings as a word count then NUL-padded words).
 *
 * gcc-12 keys positions and callsites by (line offset << 16) only: it masks
 * the discriminator off positions and computes callsite locations without
 * one, so the writer folds discriminators into line 0-discriminator entries
 * (max of the counts, as GCC's block counts are maxima of statement counts)
 * and merges inlined instances that only differ by discriminator. Totals are
 * not stored; the reader computes them as GCC does (every position count
 * adds to its instance and all enclosing ones). A sampled function is never
 * written with a head count of 0 (see pk_gcc_write). */
#include "format/format.h"

#include <stdlib.h>

#define GCC_MAGIC 0x67636461u
#define GCC_TAG_NAMES 0xaa000000u
#define GCC_TAG_FUNCS 0xac000000u
#define GCC_TAG_MODULES 0xae000000u
#define GCC_VERSION 2u
#define GCC_VERSION_407 0x3430372au
#define GCC_HIST_INDIR_CALL_TOPN 7u

/* ---- writer ---- */

struct gw {
    const pk_profset *ps;
    uint32_t *idx;     /* name id → string index (0 = unassigned; index 0 is the unused "") */
    uint32_t nidx;
    pk_vec order;      /* pk_name_id in string-table order */
    pk_err *err;
};

static int gw_name(struct gw *w, pk_name_id id, uint32_t *out)
{
    if (!w->idx[id]) {
        pk_name_id *s = pk_vec_push(&w->order);
        if (!s) {
            pk_err_set(w->err, "out of memory");
            return -1;
        }
        *s = id;
        w->idx[id] = ++w->nidx;
    }
    *out = w->idx[id];
    return 0;
}

static void put_counter(pk_buf *b, uint64_t v)
{
    pk_buf_u32(b, (uint32_t)v);
    pk_buf_u32(b, (uint32_t)(v >> 32));
}

/* Builds a scratch profile with discriminators folded away: merging the
 * inlinees of different discriminators into one (line, callee) instance. */
static int fold(pk_profset *tmp, pk_fprof *dst, const pk_profset *ps, const pk_fprof *src, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, src, &v, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        const pk_body_entry *e = &v.body[i];
        rc = pk_fprof_max_body(dst, e->line, 0, e->count, err);
        for (uint32_t k = 0; k < e->ncalls && !rc; k++)
            rc = pk_fprof_add_call(dst, e->line, 0, e->calls[k].name, e->calls[k].count, err);
    }
    for (size_t i = 0; i < v.nsites && !rc; i++) {
        pk_fprof *c = pk_fprof_callsite(tmp, dst, v.sites[i].line, 0, v.sites[i].callee->name, err);
        rc = c ? fold(tmp, c, ps, v.sites[i].callee, err) : -1;
    }
    pk_fprof_view_free(&v);
    return rc;
}

static int write_instance(struct gw *w, const pk_profset *tmp, const pk_fprof *f, pk_buf *b, unsigned depth)
{
    if (depth > 1024)
        return pk_err_set(w->err, "inline nesting too deep");
    pk_fprof_view v;
    if (pk_fprof_view_build(tmp, f, &v, w->err))
        return -1;
    uint32_t ni;
    int rc = gw_name(w, f->name, &ni);
    if (!rc) {
        pk_buf_u32(b, ni);
        pk_buf_u32(b, (uint32_t)v.nbody);
        pk_buf_u32(b, (uint32_t)v.nsites);
    }
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        const pk_body_entry *e = &v.body[i];
        pk_buf_u32(b, e->line << 16);
        pk_buf_u32(b, e->ncalls);
        put_counter(b, e->count);
        for (uint32_t k = 0; k < e->ncalls && !rc; k++) {
            uint32_t ti;
            rc = gw_name(w, e->calls[k].name, &ti);
            pk_buf_u32(b, GCC_HIST_INDIR_CALL_TOPN);
            put_counter(b, ti);
            put_counter(b, e->calls[k].count);
        }
    }
    for (size_t i = 0; i < v.nsites && !rc; i++) {
        pk_buf_u32(b, v.sites[i].line << 16);
        rc = write_instance(w, tmp, v.sites[i].callee, b, depth + 1);
    }
    pk_fprof_view_free(&v);
    return rc;
}

int pk_gcc_write(const pk_profset *ps, pk_buf *out, pk_err *err)
{
    if (ps->kind & (PK_PROF_CS | PK_PROF_PROBE))
        return pk_err_set(err, "the GCC format cannot hold context-sensitive or probe-based profiles");
    /* the scratch set interns the same names in the same order, so name ids
     * of ps are valid in tmp */
    pk_profset tmp;
    if (pk_profset_init(&tmp, err))
        return -1;
    struct gw w = {.ps = &tmp, .err = err};
    pk_vec_init(&w.order, sizeof(pk_name_id));
    pk_buf funcs = {0};
    pk_fprof **fs = NULL, **ds = NULL;
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < pk_profset_num_names(ps) && !rc; i++) {
        pk_name_id id;
        if (pk_profset_name_is_guid(ps, (pk_name_id)i))
            rc = pk_err_set(err, "the GCC format needs function names, not MD5 GUIDs");
        else
            rc = pk_profset_intern(&tmp, pk_profset_name(ps, (pk_name_id)i), pk_profset_name_len(ps, (pk_name_id)i),
                                   &id, err);
    }
    if (!rc)
        rc = pk_profset_sorted(ps, &fs, &n, err);
    if (!rc && !(ds = calloc(n ? n : 1, sizeof *ds)))
        rc = pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        pk_fprof *d = ds[i] = pk_profset_get_func(&tmp, fs[i]->name, err);
        if (!d) {
            rc = -1;
            break;
        }
        /* gcc-12 takes the head count as the function's entry count and
         * scales the function by it: a sampled function whose entry was
         * never sampled (head 0: called once, looping long) has all its
         * blocks annotated 0, as if it never ran. Such a function gets
         * LLVM's head estimate (the count at its lowest location, at least
         * 1), as clang would use. */
        d->head = pk_fprof_head_estimate(fs[i]);
        d->total = fs[i]->total;
        rc = fold(&tmp, d, ps, fs[i], err);
        /* The estimate's "at least 1 when sampled" trusts the stated total;
         * the file stores no total (its reader sums the counts), so a stated
         * 0 over nonzero counts (a hand-edited or corrupt input) must be
         * judged on the counts written, or the head changes when the file is
         * read back and written again. */
        if (!rc && !d->head && pk_fprof_recompute_total(d))
            d->head = 1;
    }
    w.idx = calloc(pk_profset_num_names(&tmp) + 1, sizeof *w.idx);
    if (!rc && !w.idx)
        rc = pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        pk_fprof *d = ds[i];
        put_counter(&funcs, d->head);
        rc = write_instance(&w, &tmp, d, &funcs, 0);
    }
    if (!rc) {
        pk_buf_u32(out, GCC_MAGIC);
        pk_buf_u32(out, GCC_VERSION);
        pk_buf_u32(out, 0);
        pk_buf names = {0};
        pk_buf_u32(&names, w.nidx + 1);
        pk_buf_u32(&names, 1);
        pk_buf_put(&names, "", 1);
        for (size_t i = 0; i < w.order.len; i++) {
            pk_name_id id = PK_VEC_AT(&w.order, pk_name_id, i);
            size_t len = pk_profset_name_len(&tmp, id);
            pk_buf_u32(&names, (uint32_t)len + 1);
            pk_buf_put(&names, pk_profset_name(&tmp, id), len + 1);
        }
        pk_buf_u32(out, GCC_TAG_NAMES);
        pk_buf_u32(out, (uint32_t)((names.len + 3) / 4));
        pk_buf_put(out, names.data, names.len);
        if (names.oom)
            out->oom = 1;
        pk_buf_free(&names);
        pk_buf_u32(out, GCC_TAG_FUNCS);
        pk_buf_u32(out, (uint32_t)((funcs.len + 4 + 3) / 4));
        pk_buf_u32(out, (uint32_t)n);
        pk_buf_put(out, funcs.data, funcs.len);
        if (funcs.oom)
            out->oom = 1;
        /* empty module-grouping section: GCC reads tag, length, count 0 */
        pk_buf_u32(out, GCC_TAG_MODULES);
        pk_buf_u32(out, 1);
        pk_buf_u32(out, 0);
    }
    free(fs);
    free(ds);
    free(w.idx);
    pk_vec_free(&w.order);
    pk_buf_free(&funcs);
    pk_profset_free(&tmp);
    return rc;
}

/* ---- reader ---- */

struct gr {
    pk_profset *ps;
    const char *path;
    pk_err *err;
    const uint8_t *base, *p, *end;
    int word_strings;
    pk_name_id *names;
    uint32_t nnames;
};

static int gr_fail(struct gr *r, const char *msg)
{
    pk_err_set(r->err, "%s: offset %llu: %s", r->path, (unsigned long long)(r->p - r->base), msg);
    return -1;
}

static int gr_u32(struct gr *r, uint32_t *v)
{
    if (r->end - r->p < 4)
        return gr_fail(r, "truncated GCC profile");
    *v = pk_ld32(r->p);
    r->p += 4;
    return 0;
}

static int gr_counter(struct gr *r, uint64_t *v)
{
    uint32_t lo, hi;
    if (gr_u32(r, &lo) || gr_u32(r, &hi))
        return -1;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

static int gr_name(struct gr *r, uint64_t idx, pk_name_id *id)
{
    if (idx >= r->nnames)
        return gr_fail(r, "string index out of range of the name table");
    /* index 0 is the table's unused "": a function (or call target) named
     * by it has no name, which no other format can carry */
    if (!pk_profset_name_len(r->ps, r->names[idx]))
        return gr_fail(r, "string index names the empty string: a function without a name");
    *id = r->names[idx];
    return 0;
}

/* Inline nesting deeper than this is corrupt (real trees are a few dozen
 * levels): it bounds the recursion and the stack of enclosing instances. */
#define GCC_MAX_DEPTH 1024

/* stack[0..depth] are f and its enclosing instances: as in GCC, every
 * position count adds to the totals of all of them. */
static int gr_instance(struct gr *r, pk_fprof **stack, unsigned depth)
{
    pk_fprof *f = stack[depth];
    uint32_t npos, nsites;
    if (gr_u32(r, &npos) || gr_u32(r, &nsites))
        return -1;
    for (uint32_t i = 0; i < npos; i++) {
        uint32_t loc, nt;
        uint64_t count;
        if (gr_u32(r, &loc) || gr_u32(r, &nt) || gr_counter(r, &count))
            return -1;
        if (pk_fprof_add_body(f, loc >> 16, loc & 0xffff, count, r->err))
            return -1;
        for (unsigned k = 0; k <= depth; k++)
            stack[k]->total = pk_sat_add(stack[k]->total, count);
        for (uint32_t k = 0; k < nt; k++) {
            uint32_t type;
            uint64_t ti, tc;
            pk_name_id t;
            if (gr_u32(r, &type) || gr_counter(r, &ti) || gr_counter(r, &tc) || gr_name(r, ti, &t) ||
                pk_fprof_add_call(f, loc >> 16, loc & 0xffff, t, tc, r->err))
                return -1;
        }
    }
    for (uint32_t i = 0; i < nsites; i++) {
        uint32_t loc, ni;
        pk_name_id callee;
        if (gr_u32(r, &loc) || gr_u32(r, &ni) || gr_name(r, ni, &callee))
            return -1;
        if (depth + 1 >= GCC_MAX_DEPTH) /* stack[depth + 1] must exist */
            return gr_fail(r, "inline nesting too deep");
        pk_fprof *c = pk_fprof_callsite(r->ps, f, loc >> 16, loc & 0xffff, callee, r->err);
        if (!c)
            return -1;
        stack[depth + 1] = c;
        if (gr_instance(r, stack, depth + 1))
            return -1;
    }
    return 0;
}

int pk_gcc_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err)
{
    struct gr r = {.ps = ps, .path = path, .err = err, .base = data, .p = data, .end = data + size};
    uint32_t magic, version, unused, tag, len, n;
    int rc = -1;
    pk_fprof *stack[GCC_MAX_DEPTH];
    if (gr_u32(&r, &magic) || gr_u32(&r, &version) || gr_u32(&r, &unused))
        return -1;
    if (magic != GCC_MAGIC) {
        r.p = data;
        return gr_fail(&r, "not a GCC AutoFDO profile (bad magic)");
    }
    if (version == 1 || version == GCC_VERSION_407)
        r.word_strings = 1;
    else if (version != GCC_VERSION) {
        r.p = data + 4;
        return gr_fail(&r, "unsupported AutoFDO profile version (known: 1, 2, \"407*\")");
    }
    if (gr_u32(&r, &tag) || gr_u32(&r, &len) || gr_u32(&r, &n))
        return -1;
    if (tag != GCC_TAG_NAMES) {
        r.p -= 12;
        return gr_fail(&r, "expected the string table tag 0xaa000000");
    }
    if (n > (size_t)(r.end - r.p) / 4)
        return gr_fail(&r, "string table size exceeds the file");
    r.names = malloc((n ? n : 1) * sizeof *r.names);
    if (!r.names)
        return pk_err_set(err, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sl;
        if (gr_u32(&r, &sl))
            goto out;
        uint64_t bytes = r.word_strings ? (uint64_t)sl * 4 : sl;
        if (bytes > (uint64_t)(r.end - r.p)) {
            gr_fail(&r, "string exceeds the file");
            goto out;
        }
        size_t slen = strnlen((const char *)r.p, (size_t)bytes);
        if (!r.word_strings && (sl == 0 || slen != bytes - 1)) {
            gr_fail(&r, "string length does not match its NUL terminator");
            goto out;
        }
        if (pk_profset_intern(ps, (const char *)r.p, slen, &r.names[i], err))
            goto out;
        r.p += bytes;
        r.nnames++;
    }
    if (gr_u32(&r, &tag) || gr_u32(&r, &len) || gr_u32(&r, &n))
        goto out;
    if (tag != GCC_TAG_FUNCS) {
        r.p -= 12;
        gr_fail(&r, "expected the function profile tag 0xac000000");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t head;
        uint32_t ni;
        pk_name_id id;
        pk_fprof *f;
        if (gr_counter(&r, &head) || gr_u32(&r, &ni) || gr_name(&r, ni, &id))
            goto out;
        if (!(f = pk_profset_get_func(ps, id, err)))
            goto out;
        stack[0] = f;
        if (gr_instance(&r, stack, 0))
            goto out;
        f->head = pk_sat_add(f->head, head);
    }
    rc = 0;
out:
    free(r.names);
    return rc;
}

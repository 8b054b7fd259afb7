/* extbinary_write.c — LLVM binary (SPF_Binary) and extensible binary
 * (SPF_Ext_Binary) writers, byte-compatible with llvm-profdata-19:
 *  - names sorted bytewise, referenced by index;
 *  - top-level records by total descending then context; body by location;
 *    targets by count descending then name; callsites by location, callee;
 *  - extbinary: the default 7-section layout (header order Summary, NameTable,
 *    CSNameTable, FuncOffsetTable, LBRProfile, ProfileSymbolList,
 *    FuncMetadata; written in order 0,1,2,4,5,3,6 because the offset table
 *    is only known after the profiles). clang needs the summary (it crashes
 *    without) and the offset table listed before LBRProfile (else it
 *    silently loads nothing), so both are always present.
 * FuncMetadata entries follow our write order; llvm-profdata uses hash-map
 * order there, so probe/CS files match it in content, not byte for byte. */
#include "format/extbinary_int.h"

#include <stdlib.h>
#include <zlib.h>

struct wr {
    const pk_profset *ps;
    uint32_t *name_idx;   /* name id → index in the written name table, UINT32_MAX = unused */
    pk_name_id *names;    /* written name table */
    size_t nnames;
    uint32_t *ctx_idx;    /* ctx id → index in the CS name table */
    pk_ctx_id *ctxs;
    size_t nctxs;
    pk_fprof **sorted;
    size_t nsorted;
    int cs;
    pk_err *err;
};

static void mark_name(struct wr *w, pk_name_id id) { w->name_idx[id] = 0; }

static void mark_cb(pk_name_id id, void *arg) { mark_name(arg, id); }

static int name_sort(const void *a, const void *b, void *arg)
{
    return pk_profset_name_cmp(arg, *(const pk_name_id *)a, *(const pk_name_id *)b);
}

static int ctx_sort(const void *a, const void *b, void *arg)
{
    return pk_profset_ctx_cmp(arg, *(const pk_ctx_id *)a, *(const pk_ctx_id *)b);
}

static void wr_free(struct wr *w)
{
    free(w->name_idx);
    free(w->names);
    free(w->ctx_idx);
    free(w->ctxs);
    free(w->sorted);
}

static int wr_init(struct wr *w, const pk_profset *ps, pk_err *err)
{
    memset(w, 0, sizeof *w);
    w->ps = ps;
    w->err = err;
    w->cs = !!(ps->kind & PK_PROF_CS);
    size_t nn = pk_profset_num_names(ps), nc = pk_profset_num_ctxs(ps);
    w->name_idx = malloc((nn ? nn : 1) * sizeof *w->name_idx);
    w->names = malloc((nn ? nn : 1) * sizeof *w->names);
    w->ctx_idx = malloc((nc ? nc : 1) * sizeof *w->ctx_idx);
    w->ctxs = malloc((nc ? nc : 1) * sizeof *w->ctxs);
    if (!w->name_idx || !w->names || !w->ctx_idx || !w->ctxs) {
        wr_free(w);
        return pk_err_set(err, "out of memory");
    }
    memset(w->name_idx, 0xff, (nn ? nn : 1) * sizeof *w->name_idx);
    memset(w->ctx_idx, 0xff, (nc ? nc : 1) * sizeof *w->ctx_idx);
    if (pk_profset_sorted(ps, &w->sorted, &w->nsorted, err)) {
        wr_free(w);
        return -1;
    }
    for (size_t i = 0; i < w->nsorted; i++) {
        const pk_fprof *f = w->sorted[i];
        size_t n;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, f->ctx, &n);
        if (!w->cs && n != 1) {
            wr_free(w);
            return pk_err_set(err, "a context profile in a set not marked context-sensitive");
        }
        for (size_t k = 0; k < n; k++) {
            mark_name(w, fr[k].name);
            /* the reader takes context lines up to 65535, like body lines */
            if (fr[k].line > 0xffff) {
                pk_err_set(err, "function %s: context line offset %u does not fit the format (max 65535)",
                           pk_profset_name(ps, fr[k].name), fr[k].line);
                wr_free(w);
                return -1;
            }
        }
        if (w->cs && w->ctx_idx[f->ctx] == UINT32_MAX) {
            w->ctx_idx[f->ctx] = 0;
            w->ctxs[w->nctxs++] = f->ctx;
        }
        pk_fprof_visit_names(f, mark_cb, w);
    }
    for (size_t i = 0; i < nn; i++)
        if (w->name_idx[i] == 0)
            w->names[w->nnames++] = (pk_name_id)i;
    qsort_r(w->names, w->nnames, sizeof *w->names, name_sort, (void *)ps);
    for (size_t i = 0; i < w->nnames; i++)
        w->name_idx[w->names[i]] = (uint32_t)i;
    qsort_r(w->ctxs, w->nctxs, sizeof *w->ctxs, ctx_sort, (void *)ps);
    for (size_t i = 0; i < w->nctxs; i++)
        w->ctx_idx[w->ctxs[i]] = (uint32_t)i;
    return 0;
}

static void write_summary(pk_buf *b, const pk_summary *s)
{
    pk_buf_uleb(b, s->total_count);
    pk_buf_uleb(b, s->max_count);
    pk_buf_uleb(b, s->max_function_count);
    pk_buf_uleb(b, s->num_counts);
    pk_buf_uleb(b, s->num_functions);
    pk_buf_uleb(b, s->num_entries);
    for (uint32_t i = 0; i < s->num_entries; i++) {
        pk_buf_uleb(b, s->entries[i].cutoff);
        pk_buf_uleb(b, s->entries[i].min_count);
        pk_buf_uleb(b, s->entries[i].num_counts);
    }
}

static void write_str_names(struct wr *w, pk_buf *b)
{
    pk_buf_uleb(b, w->nnames);
    for (size_t i = 0; i < w->nnames; i++)
        pk_buf_put(b, pk_profset_name(w->ps, w->names[i]), pk_profset_name_len(w->ps, w->names[i]) + 1);
}

static int check_loc(struct wr *w, const pk_fprof *f, uint32_t line)
{
    if (line > 0xffff)
        return pk_err_set(w->err, "function %s: line offset %u does not fit the format (max 65535)",
                          pk_profset_name(w->ps, f->name), line);
    return 0;
}

/* name/context index, total, records, callsites (recursively). */
static int write_body(struct wr *w, const pk_fprof *f, int top, pk_buf *b, unsigned depth)
{
    if (depth > 4096)
        return pk_err_set(w->err, "inline nesting too deep");
    if (top && w->cs)
        pk_buf_uleb(b, w->ctx_idx[f->ctx]);
    else
        pk_buf_uleb(b, w->name_idx[f->name]);
    pk_buf_uleb(b, f->total);
    pk_fprof_view v;
    if (pk_fprof_view_build(w->ps, f, &v, w->err))
        return -1;
    int rc = 0;
    pk_buf_uleb(b, v.nbody);
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        const pk_body_entry *e = &v.body[i];
        if ((rc = check_loc(w, f, e->line)))
            break;
        pk_buf_uleb(b, e->line);
        pk_buf_uleb(b, e->disc);
        pk_buf_uleb(b, e->count);
        pk_buf_uleb(b, e->ncalls);
        for (uint32_t k = 0; k < e->ncalls; k++) {
            pk_buf_uleb(b, w->name_idx[e->calls[k].name]);
            pk_buf_uleb(b, e->calls[k].count);
        }
    }
    if (!rc)
        pk_buf_uleb(b, v.nsites);
    for (size_t i = 0; i < v.nsites && !rc; i++) {
        if ((rc = check_loc(w, f, v.sites[i].line)))
            break;
        pk_buf_uleb(b, v.sites[i].line);
        pk_buf_uleb(b, v.sites[i].disc);
        rc = write_body(w, v.sites[i].callee, 0, b, depth + 1);
    }
    pk_fprof_view_free(&v);
    return rc;
}

static int write_metadata(struct wr *w, const pk_fprof *f, int top, pk_buf *b, int has_attr, unsigned depth)
{
    if (top && w->cs)
        pk_buf_uleb(b, w->ctx_idx[f->ctx]);
    else
        pk_buf_uleb(b, w->name_idx[f->name]);
    if (w->ps->kind & PK_PROF_PROBE)
        pk_buf_uleb(b, f->checksum);
    if (has_attr)
        pk_buf_uleb(b, f->attrs);
    if (w->cs)
        return 0;
    pk_fprof_view v;
    if (pk_fprof_view_build(w->ps, f, &v, w->err))
        return -1;
    int rc = 0;
    pk_buf_uleb(b, v.nsites);
    for (size_t i = 0; i < v.nsites && !rc; i++) {
        pk_buf_uleb(b, v.sites[i].line);
        pk_buf_uleb(b, v.sites[i].disc);
        rc = write_metadata(w, v.sites[i].callee, 0, b, has_attr, depth + 1);
    }
    pk_fprof_view_free(&v);
    return rc;
}

static void write_magic(pk_buf *b, uint8_t fmt)
{
    pk_buf_uleb(b, PK_SPROF_MAGIC_BASE | fmt);
    pk_buf_uleb(b, PK_SPROF_VERSION);
}

int pk_binary_write(const pk_profset *ps, pk_buf *out, pk_err *err)
{
    if (ps->kind & (PK_PROF_CS | PK_PROF_PROBE))
        return pk_err_set(err, "the binary format cannot hold context-sensitive or probe-based profiles (use extbinary)");
    if (ps->kind & PK_PROF_MD5)
        return pk_err_set(err, "the binary format cannot hold a profile with MD5 names (use extbinary)");
    struct wr w;
    if (wr_init(&w, ps, err))
        return -1;
    pk_summary s;
    int rc = pk_profset_summary(ps, &s, err);
    if (!rc) {
        write_magic(out, PK_SPROF_FMT_BINARY);
        write_summary(out, &s);
        write_str_names(&w, out);
        for (size_t i = 0; i < w.nsorted && !rc; i++) {
            pk_buf_uleb(out, w.sorted[i]->head);
            rc = write_body(&w, w.sorted[i], 1, out, 0);
        }
    }
    wr_free(&w);
    return rc;
}

struct sec {
    uint64_t type, flags, offset, size;
};

/* Appends a section payload (zlib-compressed when asked and non-empty). */
static int emit_section(pk_buf *out, struct sec *s, pk_buf *payload, int compress, pk_err *err)
{
    s->offset = out->len;
    if (compress && payload->len) {
        uLongf clen = compressBound(payload->len);
        uint8_t *c = malloc(clen);
        if (!c)
            return pk_err_set(err, "out of memory");
        if (compress2(c, &clen, payload->data, payload->len, Z_BEST_COMPRESSION) != Z_OK) {
            free(c);
            return pk_err_set(err, "zlib compression failed");
        }
        pk_buf_uleb(out, payload->len);
        pk_buf_uleb(out, clen);
        pk_buf_put(out, c, clen);
        free(c);
    } else {
        pk_buf_put(out, payload->data, payload->len);
    }
    s->size = out->len - s->offset;
    payload->len = 0;
    return 0;
}

int pk_extbin_write(const pk_profset *ps, const pk_write_opts *o, pk_buf *out, pk_err *err)
{
    struct wr w;
    if (wr_init(&w, ps, err))
        return -1;
    int md5 = o->use_md5 || (ps->kind & PK_PROF_MD5);
    int has_attr = !!(ps->kind & (PK_PROF_CS | PK_PROF_PREINLINED));
    int want_meta = !!(ps->kind & (PK_PROF_CS | PK_PROF_PREINLINED | PK_PROF_PROBE));
    uint64_t common = o->compress ? PK_SECFLAG_COMPRESS : 0;
    /* header order */
    struct sec secs[7] = {
        {PK_SEC_SUMMARY, common, 0, 0},   {PK_SEC_NAMETABLE, common, 0, 0}, {PK_SEC_CSNAMETABLE, common, 0, 0},
        {PK_SEC_FUNCOFFSET, common, 0, 0}, {PK_SEC_LBRPROFILE, common, 0, 0}, {PK_SEC_SYMLIST, common, 0, 0},
        {PK_SEC_FUNCMETA, common, 0, 0},
    };
    if (o->partial || (ps->kind & PK_PROF_PARTIAL))
        secs[0].flags |= PK_SECFLAG_SUMMARY_PARTIAL;
    if (w.cs)
        secs[0].flags |= PK_SECFLAG_SUMMARY_FULLCTX;
    if (ps->kind & PK_PROF_FS)
        secs[0].flags |= PK_SECFLAG_SUMMARY_FS;
    if (ps->kind & PK_PROF_PREINLINED)
        secs[0].flags |= PK_SECFLAG_SUMMARY_PREINLINED;
    if (md5)
        secs[1].flags |= PK_SECFLAG_NAME_MD5 | PK_SECFLAG_NAME_FIXEDMD5;
    if (ps->kind & PK_PROF_PROBE)
        secs[6].flags |= PK_SECFLAG_META_PROBE;
    if (has_attr)
        secs[6].flags |= PK_SECFLAG_META_ATTR;
    if (w.cs)
        secs[3].flags |= PK_SECFLAG_FUNCOFF_ORDERED;
    if (!md5)
        for (size_t i = 0; i < w.nnames; i++)
            if (memmem(pk_profset_name(ps, w.names[i]), pk_profset_name_len(ps, w.names[i]), ".__uniq.", 8)) {
                secs[1].flags |= PK_SECFLAG_NAME_UNIQ;
                break;
            }

    pk_buf pay = {0};
    uint64_t *offsets = malloc((w.nsorted ? w.nsorted : 1) * sizeof *offsets);
    pk_summary s;
    int rc = offsets ? pk_profset_summary(ps, &s, err) : pk_err_set(err, "out of memory");
    if (rc)
        goto out;
    write_magic(out, PK_SPROF_FMT_EXTBINARY);
    pk_buf_u64(out, 7);
    size_t hdr_at = out->len;
    for (int i = 0; i < 7 * 4; i++)
        pk_buf_u64(out, 0);

    write_summary(&pay, &s);
    if ((rc = emit_section(out, &secs[0], &pay, o->compress, err)))
        goto out;
    if (md5) {
        pk_buf_uleb(&pay, w.nnames);
        for (size_t i = 0; i < w.nnames; i++)
            pk_buf_u64(&pay, pk_profset_name_guid(ps, w.names[i]));
    } else {
        write_str_names(&w, &pay);
    }
    if ((rc = emit_section(out, &secs[1], &pay, o->compress, err)))
        goto out;
    if (w.cs) {
        pk_buf_uleb(&pay, w.nctxs);
        for (size_t i = 0; i < w.nctxs; i++) {
            size_t n;
            const pk_ctx_frame *fr = pk_profset_ctx(ps, w.ctxs[i], &n);
            pk_buf_uleb(&pay, n);
            for (size_t k = 0; k < n; k++) {
                pk_buf_uleb(&pay, w.name_idx[fr[k].name]);
                pk_buf_uleb(&pay, fr[k].line);
                pk_buf_uleb(&pay, fr[k].disc);
            }
        }
    } else {
        pk_buf_uleb(&pay, 0);
    }
    if ((rc = emit_section(out, &secs[2], &pay, o->compress, err)))
        goto out;
    for (size_t i = 0; i < w.nsorted && !rc; i++) {
        offsets[i] = pay.len;
        pk_buf_uleb(&pay, w.sorted[i]->head);
        rc = write_body(&w, w.sorted[i], 1, &pay, 0);
    }
    if (rc || (rc = emit_section(out, &secs[4], &pay, o->compress, err)))
        goto out;
    if (ps->symbols.len) {
        /* sorted, NUL-terminated, no count (llvm ProfileSymbolList::write) */
        pk_name_id *syms = malloc(ps->symbols.len * sizeof *syms);
        size_t ns = 0;
        if (!syms) {
            rc = pk_err_set(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < pk_u64map_end(&ps->symbols); i++)
            if (pk_u64map_used(&ps->symbols, i))
                syms[ns++] = (pk_name_id)pk_u64map_key(&ps->symbols, i);
        qsort_r(syms, ns, sizeof *syms, name_sort, (void *)ps);
        for (size_t i = 0; i < ns; i++)
            pk_buf_put(&pay, pk_profset_name(ps, syms[i]), pk_profset_name_len(ps, syms[i]) + 1);
        free(syms);
    }
    if ((rc = emit_section(out, &secs[5], &pay, o->compress, err)))
        goto out;
    pk_buf_uleb(&pay, w.nsorted);
    if (w.cs) {
        /* ordered by context = by CS name-table index */
        uint64_t *by_ctx = calloc(w.nctxs ? w.nctxs : 1, sizeof *by_ctx);
        if (!by_ctx) {
            rc = pk_err_set(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < w.nsorted; i++)
            by_ctx[w.ctx_idx[w.sorted[i]->ctx]] = offsets[i];
        for (size_t i = 0; i < w.nctxs; i++) {
            pk_buf_uleb(&pay, i);
            pk_buf_uleb(&pay, by_ctx[i]);
        }
        free(by_ctx);
    } else {
        for (size_t i = 0; i < w.nsorted; i++) {
            pk_buf_uleb(&pay, w.name_idx[w.sorted[i]->name]);
            pk_buf_uleb(&pay, offsets[i]);
        }
    }
    if ((rc = emit_section(out, &secs[3], &pay, o->compress, err)))
        goto out;
    if (want_meta)
        for (size_t i = 0; i < w.nsorted && !rc; i++)
            rc = write_metadata(&w, w.sorted[i], 1, &pay, has_attr, 0);
    if (rc || (rc = emit_section(out, &secs[6], &pay, o->compress, err)))
        goto out;
    if (out->oom) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < 7; i++) {
        uint8_t *h = out->data + hdr_at + (size_t)i * 32;
        pk_st64(h, secs[i].type);
        pk_st64(h + 8, secs[i].flags);
        pk_st64(h + 16, secs[i].offset);
        pk_st64(h + 24, secs[i].size);
    }
out:
    free(offsets);
    pk_buf_free(&pay);
    wr_free(&w);
    return rc;
}

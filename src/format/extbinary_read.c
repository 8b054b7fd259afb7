/* extbinary_read.c — readers of LLVM's raw binary (SPF_Binary) and
 * extensible binary (SPF_Ext_Binary) sample profiles. Every read is bounds
 * checked; errors name the file and the byte offset (for a compressed
 * section: the section's file offset and the offset inside its
 * decompressed payload). */
#include "format/extbinary_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define MAX_NEST 1024

struct rd {
    pk_profset *ps;
    const char *path;
    pk_err *err;
    const uint8_t *base, *p, *end; /* current buffer */
    uint64_t file_off;             /* file offset of base (uncompressed) */
    int compressed;                /* base is a decompressed section payload */
    uint64_t sec_off;              /* file offset of that section */
    pk_name_id *names;
    size_t nnames;
    pk_ctx_id *ctxs;
    size_t nctxs;
    int cs, probe, attr;
};

static int rd_fail(struct rd *r, const char *fmt, const char *what)
{
    uint64_t at = (uint64_t)(r->p - r->base);
    if (r->compressed)
        pk_err_set(r->err, "%s: section at offset %llu, offset %llu of its decompressed data: %s%s", r->path,
                   (unsigned long long)r->sec_off, (unsigned long long)at, fmt, what ? what : "");
    else
        pk_err_set(r->err, "%s: offset %llu: %s%s", r->path, (unsigned long long)(r->file_off + at), fmt,
                   what ? what : "");
    return -1;
}

static int rd_uleb(struct rd *r, uint64_t *v, const char *what)
{
    uint64_t x = 0;
    const uint8_t *p = r->p;
    for (unsigned shift = 0;; shift += 7) {
        if (p >= r->end)
            return rd_fail(r, "truncated data reading ", what);
        uint8_t c = *p++;
        if (shift == 63 && (c & 0x7e))
            return rd_fail(r, "LEB128 value overflows 64 bits reading ", what);
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            break;
        if (shift == 63)
            return rd_fail(r, "LEB128 value too long reading ", what);
    }
    r->p = p;
    *v = x;
    return 0;
}

static int rd_u32(struct rd *r, uint32_t *v, const char *what)
{
    uint64_t x;
    const uint8_t *save = r->p;
    if (rd_uleb(r, &x, what))
        return -1;
    if (x > UINT32_MAX) {
        r->p = save;
        return rd_fail(r, "value too large for 32 bits: ", what);
    }
    *v = (uint32_t)x;
    return 0;
}

static int rd_summary(struct rd *r)
{
    pk_summary *s = &r->ps->summary;
    memset(s, 0, sizeof *s);
    uint64_t n;
    if (rd_uleb(r, &s->total_count, "summary") || rd_uleb(r, &s->max_count, "summary") ||
        rd_uleb(r, &s->max_function_count, "summary") || rd_uleb(r, &s->num_counts, "summary") ||
        rd_uleb(r, &s->num_functions, "summary") || rd_uleb(r, &n, "summary"))
        return -1;
    if (n > PK_SUMMARY_MAX_ENTRIES)
        return rd_fail(r, "too many detailed summary entries", NULL);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t cutoff;
        if (rd_uleb(r, &cutoff, "summary entry") || rd_uleb(r, &s->entries[i].min_count, "summary entry") ||
            rd_uleb(r, &s->entries[i].num_counts, "summary entry"))
            return -1;
        if (cutoff > 1000000)
            return rd_fail(r, "summary cutoff above 1000000", NULL);
        s->entries[i].cutoff = (uint32_t)cutoff;
    }
    s->num_entries = (uint32_t)n;
    r->ps->has_summary = 1;
    return 0;
}

static int rd_names(struct rd *r, int md5, int fixed)
{
    uint64_t n;
    if (rd_uleb(r, &n, "name table size"))
        return -1;
    if (n > (uint64_t)(r->end - r->p))  /* every entry takes at least one byte */
        return rd_fail(r, "name table size exceeds the data", NULL);
    size_t old = r->nnames;
    pk_name_id *nn = pk_xrealloc_array(r->names, old + n ? old + n : 1, sizeof *nn);
    if (!nn)
        return pk_err_set(r->err, "out of memory");
    r->names = nn;
    for (uint64_t i = 0; i < n; i++) {
        pk_name_id id;
        if (md5 && fixed) {
            if (r->end - r->p < 8)
                return rd_fail(r, "truncated MD5 name table", NULL);
            uint64_t g = pk_ld64(r->p);
            r->p += 8;
            if (pk_profset_intern_guid(r->ps, g, &id, r->err))
                return -1;
        } else if (md5) {
            uint64_t g;
            if (rd_uleb(r, &g, "MD5 name") || pk_profset_intern_guid(r->ps, g, &id, r->err))
                return -1;
        } else {
            const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
            if (!z)
                return rd_fail(r, "unterminated name in the name table", NULL);
            if (pk_profset_intern(r->ps, (const char *)r->p, (size_t)(z - r->p), &id, r->err))
                return -1;
            r->p = z + 1;
        }
        r->names[r->nnames++] = id;
    }
    if (md5)
        r->ps->kind |= PK_PROF_MD5;
    return 0;
}

static int rd_name_idx(struct rd *r, pk_name_id *id)
{
    uint64_t i;
    const uint8_t *save = r->p;
    if (rd_uleb(r, &i, "name index"))
        return -1;
    if (i >= r->nnames) {
        r->p = save;
        return rd_fail(r, "name index out of range of the name table", NULL);
    }
    /* a function, callee or call target without a name: no format (the
     * text's "name:TOTAL:HEAD" first) can carry it */
    if (!pk_profset_name_len(r->ps, r->names[i])) {
        r->p = save;
        return rd_fail(r, "name index names the empty string", NULL);
    }
    *id = r->names[i];
    return 0;
}

static int rd_ctx_idx(struct rd *r, pk_ctx_id *ctx)
{
    if (r->cs) {
        uint64_t i;
        const uint8_t *save = r->p;
        if (rd_uleb(r, &i, "context index"))
            return -1;
        if (i >= r->nctxs) {
            r->p = save;
            return rd_fail(r, "context index out of range of the CS name table", NULL);
        }
        *ctx = r->ctxs[i];
        return 0;
    }
    pk_name_id id;
    if (rd_name_idx(r, &id))
        return -1;
    pk_ctx_frame fr = {id, 0, 0};
    return pk_profset_intern_ctx(r->ps, &fr, 1, ctx, r->err);
}

static int rd_cs_names(struct rd *r)
{
    uint64_t n;
    if (rd_uleb(r, &n, "CS name table size"))
        return -1;
    if (n > (uint64_t)(r->end - r->p))
        return rd_fail(r, "CS name table size exceeds the data", NULL);
    free(r->ctxs);
    r->nctxs = 0;
    r->ctxs = malloc((n ? n : 1) * sizeof *r->ctxs);
    pk_vec fr;
    pk_vec_init(&fr, sizeof(pk_ctx_frame));
    if (!r->ctxs)
        return pk_err_set(r->err, "out of memory");
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t nf;
        if ((rc = rd_uleb(r, &nf, "context frame count")))
            break;
        if (!nf || nf > (uint64_t)(r->end - r->p)) {
            rc = rd_fail(r, "bad context frame count", NULL);
            break;
        }
        fr.len = 0;
        for (uint64_t k = 0; k < nf && !rc; k++) {
            pk_ctx_frame *f = pk_vec_push(&fr);
            if (!f) {
                rc = pk_err_set(r->err, "out of memory");
                break;
            }
            uint64_t line = 0;
            rc = rd_name_idx(r, &f->name) || rd_uleb(r, &line, "context line") ||
                 rd_u32(r, &f->disc, "context discriminator");
            if (!rc && line > 0xffff)
                rc = rd_fail(r, "context line offset above 65535", NULL);
            f->line = (uint32_t)line;
        }
        if (!rc)
            rc = pk_profset_intern_ctx(r->ps, fr.data, fr.len, &r->ctxs[r->nctxs++], r->err);
    }
    pk_vec_free(&fr);
    return rc ? -1 : 0;
}

static int rd_body(struct rd *r, pk_fprof *f, unsigned depth)
{
    if (depth > MAX_NEST)
        return rd_fail(r, "inline nesting too deep", NULL);
    uint64_t total = 0;
    uint32_t nrec = 0, nsites = 0;
    if (rd_uleb(r, &total, "total samples") || rd_u32(r, &nrec, "number of records"))
        return -1;
    f->total = pk_sat_add(f->total, total);
    for (uint32_t i = 0; i < nrec; i++) {
        uint64_t line = 0, count = 0;
        uint32_t disc = 0, ncalls = 0;
        if (rd_uleb(r, &line, "line offset"))
            return -1;
        if (line > 0xffff)
            return rd_fail(r, "line offset above 65535", NULL);
        if (rd_u32(r, &disc, "discriminator") || rd_uleb(r, &count, "sample count") ||
            rd_u32(r, &ncalls, "number of call targets"))
            return -1;
        if (pk_fprof_add_body(f, (uint32_t)line, disc, count, r->err))
            return -1;
        for (uint32_t k = 0; k < ncalls; k++) {
            pk_name_id t;
            uint64_t c;
            if (rd_name_idx(r, &t) || rd_uleb(r, &c, "call target count") ||
                pk_fprof_add_call(f, (uint32_t)line, disc, t, c, r->err))
                return -1;
        }
    }
    if (rd_u32(r, &nsites, "number of inlined callsites"))
        return -1;
    for (uint32_t i = 0; i < nsites; i++) {
        uint64_t line = 0;
        uint32_t disc = 0;
        pk_name_id callee = 0;
        if (rd_uleb(r, &line, "callsite line offset"))
            return -1;
        if (line > 0xffff)
            return rd_fail(r, "callsite line offset above 65535", NULL);
        if (rd_u32(r, &disc, "callsite discriminator") || rd_name_idx(r, &callee))
            return -1;
        pk_fprof *c = pk_fprof_callsite(r->ps, f, (uint32_t)line, disc, callee, r->err);
        if (!c || rd_body(r, c, depth + 1))
            return -1;
    }
    return 0;
}

static int rd_top_record(struct rd *r)
{
    uint64_t head;
    pk_ctx_id ctx;
    if (rd_uleb(r, &head, "head samples") || rd_ctx_idx(r, &ctx))
        return -1;
    pk_fprof *f = pk_profset_get_ctx(r->ps, ctx, r->err);
    if (!f)
        return -1;
    f->head = pk_sat_add(f->head, head);
    return rd_body(r, f, 0);
}

static int rd_meta_nested(struct rd *r, pk_fprof *f, unsigned depth)
{
    if (depth > MAX_NEST)
        return rd_fail(r, "metadata nesting too deep", NULL);
    if (r->probe) {
        uint64_t ck = 0;
        if (rd_uleb(r, &ck, "CFG checksum"))
            return -1;
        if (f)
            f->checksum = ck;
    }
    if (r->attr) {
        uint32_t a = 0;
        if (rd_u32(r, &a, "attributes"))
            return -1;
        if (f)
            f->attrs = a;
    }
    if (r->cs)
        return 0;
    uint32_t n = 0;
    if (rd_u32(r, &n, "number of callsites in metadata"))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t line = 0;
        uint32_t disc = 0;
        pk_name_id callee = 0;
        if (rd_uleb(r, &line, "metadata callsite line") || rd_u32(r, &disc, "metadata callsite discriminator") ||
            rd_name_idx(r, &callee))
            return -1;
        pk_fprof *c = f && line <= 0xffff ? pk_fprof_find_callsite(f, (uint32_t)line, disc, callee) : NULL;
        if (rd_meta_nested(r, c, depth + 1))
            return -1;
    }
    return 0;
}

static int rd_meta(struct rd *r)
{
    while (r->p < r->end) {
        pk_ctx_id ctx;
        if (rd_ctx_idx(r, &ctx))
            return -1;
        if (rd_meta_nested(r, pk_profset_find_ctx(r->ps, ctx), 0))
            return -1;
    }
    return 0;
}

/* ProfileSymbolList: NUL-terminated names up to the end of the section. */
static int rd_symlist(struct rd *r)
{
    while (r->p < r->end) {
        const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
        pk_name_id id;
        if (!z)
            return rd_fail(r, "unterminated name in the profile symbol list", NULL);
        if (pk_profset_intern(r->ps, (const char *)r->p, (size_t)(z - r->p), &id, r->err) ||
            pk_profset_add_symbol(r->ps, id, r->err))
            return -1;
        r->p = z + 1;
    }
    return 0;
}

static int rd_offsets(struct rd *r)
{
    uint64_t n;
    if (rd_uleb(r, &n, "function offset table size"))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off;
        pk_ctx_id ctx;
        if (rd_ctx_idx(r, &ctx) || rd_uleb(r, &off, "function offset"))
            return -1;
    }
    return 0;
}

static int rd_magic(struct rd *r, uint8_t fmt)
{
    uint64_t magic, version;
    if (rd_uleb(r, &magic, "magic"))
        return -1;
    if (magic != (PK_SPROF_MAGIC_BASE | fmt)) {
        r->p = r->base;
        if ((magic & ~0xffULL) == PK_SPROF_MAGIC_BASE) {
            char what[64];
            snprintf(what, sizeof what, "0x%02x%s", (unsigned)(magic & 0xff),
                     (magic & 0xff) == 0x02 ? " (compact binary, dropped by LLVM)" : "");
            return rd_fail(r, "unsupported LLVM sample profile encoding: format byte ", what);
        }
        return rd_fail(r, "not an LLVM sample profile of the expected kind (bad magic)", NULL);
    }
    const uint8_t *v = r->p;
    if (rd_uleb(r, &version, "version"))
        return -1;
    if (version != PK_SPROF_VERSION) {
        r->p = v;
        return rd_fail(r, "unsupported sample profile version (only 103 is known)", NULL);
    }
    return 0;
}

static void rd_free(struct rd *r)
{
    free(r->names);
    free(r->ctxs);
}

int pk_binary_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err)
{
    struct rd r = {.ps = ps, .path = path, .err = err, .base = data, .p = data, .end = data + size};
    int rc = rd_magic(&r, PK_SPROF_FMT_BINARY) || rd_summary(&r) || rd_names(&r, 0, 0);
    while (!rc && r.p < r.end)
        rc = rd_top_record(&r);
    rd_free(&r);
    return rc ? -1 : 0;
}

int pk_extbin_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err)
{
    struct rd r = {.ps = ps, .path = path, .err = err, .base = data, .p = data, .end = data + size};
    if (rd_magic(&r, PK_SPROF_FMT_EXTBINARY))
        return -1;
    if (r.end - r.p < 8)
        return rd_fail(&r, "truncated section header table", NULL);
    uint64_t nsec = pk_ld64(r.p);
    r.p += 8;
    if (nsec > (uint64_t)(r.end - r.p) / 32)
        return rd_fail(&r, "section header table exceeds the file", NULL);
    const uint8_t *hdr = r.p;
    uint64_t hdr_end = (uint64_t)(hdr - data) + nsec * 32;
    /* the summary flags decide how the other sections are read */
    for (uint64_t i = 0; i < nsec; i++) {
        uint64_t type = pk_ld64(hdr + i * 32), flags = pk_ld64(hdr + i * 32 + 8);
        if (type == PK_SEC_SUMMARY) {
            if (flags & PK_SECFLAG_SUMMARY_FULLCTX)
                r.cs = 1;
            if (flags & PK_SECFLAG_SUMMARY_PREINLINED)
                ps->kind |= PK_PROF_PREINLINED;
            if (flags & PK_SECFLAG_SUMMARY_FS)
                ps->kind |= PK_PROF_FS;
            if (flags & PK_SECFLAG_SUMMARY_PARTIAL)
                ps->kind |= PK_PROF_PARTIAL;
        } else if (type == PK_SEC_FUNCMETA) {
            if (flags & PK_SECFLAG_META_PROBE)
                r.probe = 1;
            if (flags & PK_SECFLAG_META_ATTR)
                r.attr = 1;
        }
    }
    if (r.cs)
        ps->kind |= PK_PROF_CS;
    if (r.probe)
        ps->kind |= PK_PROF_PROBE;
    int rc = 0;
    for (uint64_t i = 0; i < nsec && !rc; i++) {
        const uint8_t *h = hdr + i * 32;
        uint64_t type = pk_ld64(h), flags = pk_ld64(h + 8), off = pk_ld64(h + 16), sz = pk_ld64(h + 24);
        r.base = r.p = data;
        r.end = data + size;
        r.file_off = 0;
        r.compressed = 0;
        if (off < hdr_end || off > size || sz > size - off) {
            r.p = h;
            rc = rd_fail(&r, "section lies outside the file", NULL);
            break;
        }
        if (!sz)
            continue;
        uint8_t *plain = NULL;
        r.base = r.p = data + off;
        r.end = r.p + sz;
        r.file_off = off;
        if (flags & PK_SECFLAG_COMPRESS) {
            uint64_t usz, csz;
            if ((rc = rd_uleb(&r, &usz, "uncompressed size")) || (rc = rd_uleb(&r, &csz, "compressed size")))
                break;
            if (csz != (uint64_t)(r.end - r.p)) {
                rc = rd_fail(&r, "compressed size does not match the section size", NULL);
                break;
            }
            /* zlib cannot expand more than ~1032:1: refuse absurd sizes */
            if (usz > csz * 1100 + 4096 || usz > ((uint64_t)1 << 34)) {
                rc = rd_fail(&r, "implausible uncompressed section size", NULL);
                break;
            }
            plain = malloc(usz ? usz : 1);
            uLongf dl = usz;
            if (!plain) {
                rc = pk_err_set(err, "out of memory");
                break;
            }
            if (uncompress(plain, &dl, r.p, csz) != Z_OK || dl != usz) {
                free(plain);
                rc = rd_fail(&r, "corrupt zlib data in a compressed section", NULL);
                break;
            }
            r.base = r.p = plain;
            r.end = plain + usz;
            r.compressed = 1;
            r.sec_off = off;
        }
        switch (type) {
        case PK_SEC_SUMMARY: rc = rd_summary(&r); break;
        case PK_SEC_NAMETABLE:
            rc = rd_names(&r, !!(flags & PK_SECFLAG_NAME_MD5), !!(flags & PK_SECFLAG_NAME_FIXEDMD5));
            break;
        case PK_SEC_CSNAMETABLE: rc = rd_cs_names(&r); break;
        case PK_SEC_FUNCOFFSET: rc = rd_offsets(&r); break;
        case PK_SEC_LBRPROFILE:
            while (!rc && r.p < r.end)
                rc = rd_top_record(&r);
            break;
        case PK_SEC_FUNCMETA: rc = rd_meta(&r); break;
        case PK_SEC_SYMLIST: rc = rd_symlist(&r); break;
        default: r.p = r.end; break; /* unknown sections: forward compatible */
        }
        if (!rc && r.p != r.end)
            rc = rd_fail(&r, "section not fully consumed (malformed)", NULL);
        free(plain);
    }
    rd_free(&r);
    return rc ? -1 : 0;
}

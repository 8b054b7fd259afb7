/* rawprof2.c — the version-2 raw profile in memory and on disk (see
 * rawprof2.h; the layout is in aggregate/rawprof.c). */
#include "unwind/rawprof2.h"

#include <stdlib.h>

#define NO_ID UINT32_MAX

int pk_rawprof2_init(pk_rawprof2 *r, const char *path, const uint8_t *build_id, uint8_t build_id_size,
                     uint64_t preferred_base, pk_err *err)
{
    memset(r, 0, sizeof *r);
    r->version = 2;
    if (pk_rawprof_init(&r->flat, path, build_id, build_id_size, preferred_base, err))
        return -1;
    if (pk_csraw_init(&r->lbr, preferred_base, err) || pk_csraw_init(&r->ip, preferred_base, err) ||
        (pk_pairmap_init(&r->ip_unplaced, 64) && pk_err_set(err, "out of memory"))) {
        pk_rawprof2_free(r);
        return -1;
    }
    return 0;
}

void pk_rawprof2_free(pk_rawprof2 *r)
{
    pk_rawprof_free(&r->flat);
    pk_csraw_free(&r->lbr);
    pk_csraw_free(&r->ip);
    pk_pairmap_free(&r->ip_unplaced);
}

bool pk_rawprof2_has_contexts(const pk_rawprof2 *r) { return r->lbr.ranges.len || r->lbr.branches.len; }

bool pk_rawprof2_has_ip(const pk_rawprof2 *r)
{
    return r->ip.ranges.len || r->ip.branches.len || r->ip_unplaced.len;
}

/* ---- writing ---- */

static uint64_t to_off(uint64_t vaddr, uint64_t base) { return vaddr == PK_AGG_EXTERNAL ? vaddr : vaddr - base; }

static int cmp_words(const uint64_t *a, const uint64_t *b, size_t w)
{
    for (size_t i = 0; i < w; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}
static int cmp3(const void *a, const void *b) { return cmp_words(a, b, 2); }  /* (key, key, count) */
static int cmp4(const void *a, const void *b) { return cmp_words(a, b, 3); }  /* (ctx, key, key, count) */

/* The contexts of the file: those of `lbr` and `ip` that have counts, one id
 * each (from 1), in the order of their address lists. */
typedef struct ctx_table {
    uint32_t *lbr_id, *ip_id;    /* csraw id → file id (0: none) */
    pk_vec words;                /* the CONTEXTS section */
} ctx_table;

static void used_ctxs(const pk_csraw *c, uint8_t *used)
{
    for (int w = 0; w < 2; w++) {
        const pk_pairmap *m = w ? &c->branches : &c->ranges;
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].n)
                used[m->e[i].a >> 32] = 1;
    }
}

static int build_ctx_table(const pk_rawprof2 *r, ctx_table *t, pk_err *err)
{
    size_t nl = pk_csraw_num_ctxs(&r->lbr), ni = pk_csraw_num_ctxs(&r->ip);
    pk_vec_init(&t->words, sizeof(uint64_t));
    t->lbr_id = calloc(nl + 1, sizeof *t->lbr_id);
    t->ip_id = calloc(ni + 1, sizeof *t->ip_id);
    uint8_t *ul = calloc(nl + 1, 1), *ui = calloc(ni + 1, 1);
    uint32_t *perm = calloc(nl + ni + 1, sizeof *perm);
    pk_csraw all = {0}, sorted = {0};
    bool all_init = false, sorted_init = false;
    int rc = -1;
    if (!t->lbr_id || !t->ip_id || !ul || !ui || !perm) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    if (pk_csraw_init(&all, r->flat.preferred_base, err))
        goto out;
    all_init = true;
    if (pk_csraw_init(&sorted, r->flat.preferred_base, err))
        goto out;
    sorted_init = true;
    used_ctxs(&r->lbr, ul);
    used_ctxs(&r->ip, ui);
    /* every used context once in `all`, then renumbered by address list */
    for (int w = 0; w < 2; w++) {
        const pk_csraw *c = w ? &r->ip : &r->lbr;
        const uint8_t *u = w ? ui : ul;
        uint32_t *to = w ? t->ip_id : t->lbr_id;
        for (size_t i = 0; i < (w ? ni : nl); i++) {
            uint32_t len;
            const uint64_t *fr = pk_csraw_ctx(c, (uint32_t)i, &len);
            if (!u[i] || !len)
                continue; /* (an empty address list is the flat context, id 0) */
            if (pk_csraw_intern(&all, fr, len, &to[i], err))
                goto out;
            to[i]++; /* all's id + 1 for now */
        }
    }
    if (pk_csraw_intern_sorted(&all, &sorted, perm, err))
        goto out;
    for (size_t i = 0; i < nl; i++)
        if (t->lbr_id[i])
            t->lbr_id[i] = perm[t->lbr_id[i] - 1] + 1;
    for (size_t i = 0; i < ni; i++)
        if (t->ip_id[i])
            t->ip_id[i] = perm[t->ip_id[i] - 1] + 1;
    for (size_t i = 0; i < pk_csraw_num_ctxs(&sorted); i++) {
        uint32_t len;
        const uint64_t *fr = pk_csraw_ctx(&sorted, (uint32_t)i, &len);
        if (pk_vec_reserve(&t->words, t->words.len + len + 1)) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        uint64_t *v = (uint64_t *)t->words.data + t->words.len;
        v[0] = len;
        for (uint32_t k = 0; k < len; k++)
            v[1 + k] = fr[k] - r->flat.preferred_base; /* (wraps for a leaf entry 0: read back exactly) */
        t->words.len += len + 1;
    }
    rc = 0;
out:
    free(ul);
    free(ui);
    free(perm);
    if (all_init)
        pk_csraw_free(&all);
    if (sorted_init)
        pk_csraw_free(&sorted);
    return rc;
}

/* A section's entries (w words each, count last) gather in a pk_vec whose
 * element is the entry. */
static int push(pk_vec *e, const uint64_t *x)
{
    void *slot = pk_vec_push(e);
    if (!slot)
        return -1;
    memcpy(slot, x, e->elem);
    return 0;
}

static int write_entries(pk_raw_writer *w, int id, pk_vec *e, pk_err *err)
{
    if (!e->len)
        return 0;
    qsort(e->data, e->len, e->elem, e->elem == 3 * sizeof(uint64_t) ? cmp3 : cmp4);
    return pk_raw_writer_section(w, id, e->len, err) ||
                   pk_raw_writer_words(w, e->data, e->len * (e->elem / sizeof(uint64_t)), err)
               ? -1
               : 0;
}

/* The entries of a csraw (ranges or branches: which) under the file's ids. */
static int gather_cs(pk_vec *e, const pk_csraw *c, int which, const uint32_t *ids, bool with_b)
{
    const pk_pairmap *m = which ? &c->branches : &c->ranges;
    for (size_t i = 0; i < m->cap; i++) {
        const pk_pair_count *p = &m->e[i];
        if (!p->n)
            continue;
        uint32_t ctx;
        uint64_t a, b;
        pk_csraw_key(c, p, &ctx, &a, &b);
        uint64_t x[4] = {ids[ctx], to_off(a, c->base), to_off(b, c->base), p->n};
        if (!with_b) /* (hits: ctx, address, count) */
            x[2] = p->n;
        if (push(e, x))
            return -1;
    }
    return 0;
}

static int gather_flat(pk_vec *e, const pk_pairmap *m, uint64_t base)
{
    for (size_t i = 0; i < m->cap; i++) {
        const pk_pair_count *p = &m->e[i];
        uint64_t x[4] = {0, to_off(p->a, base), to_off(p->b, base), p->n};
        if (p->n && push(e, x))
            return -1;
    }
    return 0;
}

static int write_stats(pk_raw_writer *w, int id, const void *stats, size_t size, pk_err *err)
{
    uint64_t v[64];
    size_t n = size / sizeof *v;
    memcpy(v, stats, size);
    return pk_raw_writer_section(w, id, n, err) || pk_raw_writer_words(w, v, n, err) ? -1 : 0;
}

int pk_rawprof2_write(const pk_rawprof2 *r, const char *path, pk_err *err)
{
    _Static_assert(sizeof(pk_agg_stats) <= 64 * 8 && sizeof(pk_unwind_stats) <= 64 * 8 &&
                       sizeof(pk_ip_stats) <= 64 * 8, "statistics fit the buffer");
    ctx_table t = {0};
    pk_vec ranges, branches, hits, calls, unplaced;
    pk_vec_init(&ranges, 4 * sizeof(uint64_t));
    pk_vec_init(&branches, 4 * sizeof(uint64_t));
    pk_vec_init(&hits, 3 * sizeof(uint64_t));
    pk_vec_init(&calls, 4 * sizeof(uint64_t));
    pk_vec_init(&unplaced, 3 * sizeof(uint64_t));
    pk_raw_writer w = {0};
    uint64_t base = r->flat.preferred_base;
    int rc = -1;
    if (build_ctx_table(r, &t, err))
        goto out;
    if (gather_flat(&ranges, &r->flat.ranges, base) || gather_flat(&branches, &r->flat.branches, base) ||
        gather_cs(&ranges, &r->lbr, 0, t.lbr_id, true) || gather_cs(&branches, &r->lbr, 1, t.lbr_id, true) ||
        gather_cs(&hits, &r->ip, 0, t.ip_id, false) || gather_cs(&calls, &r->ip, 1, t.ip_id, true)) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < r->ip_unplaced.cap; i++) {
        const pk_pair_count *p = &r->ip_unplaced.e[i];
        uint64_t x[3] = {p->a, p->b, p->n};
        if (p->n && push(&unplaced, x)) {
            pk_err_set(err, "out of memory");
            goto out;
        }
    }
    uint32_t nsec = 3 + !!t.words.len + !!ranges.len + !!branches.len + !!hits.len + !!calls.len + !!unplaced.len;
    if (pk_raw_writer_open(&w, path, &r->flat, r->flags, nsec, err))
        goto out;
    if (write_stats(&w, PK_RAWSEC_AGG_STATS, &r->flat.stats, sizeof r->flat.stats, err) ||
        write_stats(&w, PK_RAWSEC_UNWIND_STATS, &r->unwind, sizeof r->unwind, err) ||
        write_stats(&w, PK_RAWSEC_IP_STATS, &r->ip_stats, sizeof r->ip_stats, err) ||
        (t.words.len && (pk_raw_writer_section(&w, PK_RAWSEC_CONTEXTS, t.words.len, err) ||
                         pk_raw_writer_words(&w, t.words.data, t.words.len, err))) ||
        write_entries(&w, PK_RAWSEC_RANGES, &ranges, err) || write_entries(&w, PK_RAWSEC_BRANCHES, &branches, err) ||
        write_entries(&w, PK_RAWSEC_IP_HITS, &hits, err) || write_entries(&w, PK_RAWSEC_IP_CALLS, &calls, err) ||
        write_entries(&w, PK_RAWSEC_IP_UNPLACED, &unplaced, err)) {
        pk_raw_writer_abort(&w);
        goto out;
    }
    rc = pk_raw_writer_commit(&w, err);
out:
    if (rc)
        pk_err_prefix(err, "writing raw profile %s", path);
    free(t.lbr_id);
    free(t.ip_id);
    pk_vec_free(&t.words);
    pk_vec_free(&ranges);
    pk_vec_free(&branches);
    pk_vec_free(&hits);
    pk_vec_free(&calls);
    pk_vec_free(&unplaced);
    return rc;
}

/* ---- reading ---- */

typedef struct reader {
    pk_rawprof2 *r;
    const char *path;
    pk_err *err;
    uint64_t nctx;               /* contexts in the file (ids 1..nctx) */
    uint64_t *first;             /* word index of context k's length, k = 1..nctx */
    const uint8_t *words;
    uint32_t *lbr_id, *ip_id;    /* file id → csraw id (NO_ID: not yet) */
    uint64_t *scratch;
} reader;

static int parse_contexts(reader *rd, const pk_raw_section *s)
{
    /* count, then index */
    uint64_t n = 0;
    for (uint64_t at = 0; at < s->n; n++) {
        uint64_t len = pk_ld64(s->data + 8 * at);
        if (!len || len > s->n - at - 1)
            return pk_err_set(rd->err, "%s: offset %llu: context %llu of %llu addresses %s", rd->path,
                              (unsigned long long)(s->off + 8 * at), (unsigned long long)n + 1,
                              (unsigned long long)len, len ? "runs past its section" : "(empty: that is context 0)");
        at += 1 + len;
    }
    rd->nctx = n;
    rd->words = s->data;
    if (!(rd->first = calloc(n + 1, sizeof *rd->first)) || !(rd->lbr_id = malloc((n + 1) * sizeof *rd->lbr_id)) ||
        !(rd->ip_id = malloc((n + 1) * sizeof *rd->ip_id)) ||
        !(rd->scratch = malloc((s->n + 1) * sizeof *rd->scratch)))
        return pk_err_set(rd->err, "out of memory");
    memset(rd->lbr_id, 0xff, (n + 1) * sizeof *rd->lbr_id);
    memset(rd->ip_id, 0xff, (n + 1) * sizeof *rd->ip_id);
    uint64_t at = 0;
    for (uint64_t k = 1; k <= n; k++) {
        rd->first[k] = at;
        at += 1 + pk_ld64(s->data + 8 * at);
    }
    return 0;
}

/* The csraw id of file context k in c (interned on first use). */
static int ctx_id(reader *rd, pk_csraw *c, uint32_t *map, uint64_t k, uint64_t off, uint32_t *id)
{
    if (!k || k > rd->nctx)
        return pk_err_set(rd->err, "%s: offset %llu: context %llu %s", rd->path, (unsigned long long)off,
                          (unsigned long long)k, k ? "beyond the context table" : "(the flat context) where a "
                                                                                  "calling context is needed");
    if (map[k] == NO_ID) {
        uint64_t len = pk_ld64(rd->words + 8 * rd->first[k]);
        for (uint64_t i = 0; i < len; i++)
            rd->scratch[i] = pk_ld64(rd->words + 8 * (rd->first[k] + 1 + i)) + c->base;
        if (pk_csraw_intern(c, rd->scratch, (uint32_t)len, &map[k], rd->err))
            return -1;
    }
    *id = map[k];
    return 0;
}

/* A context entry's address as a pk_csraw key half: below 4 GiB from the
 * base, or (first halves only) external. */
static int key_off(reader *rd, uint64_t v, bool may_be_external, uint64_t off, uint64_t *out)
{
    if (v == PK_AGG_EXTERNAL && may_be_external) {
        *out = PK_CS_EXTERNAL_OFF;
        return 0;
    }
    if (v >= PK_CS_EXTERNAL_OFF)
        return pk_err_set(rd->err, "%s: offset %llu: address offset 0x%llx is not in the binary's first 4 GiB",
                          rd->path, (unsigned long long)off, (unsigned long long)v);
    *out = v;
    return 0;
}

static int add_or_oom(reader *rd, pk_pairmap *m, uint64_t a, uint64_t b, uint64_t n)
{
    return pk_pairmap_add(m, a, b, n) ? pk_err_set(rd->err, "%s: out of memory", rd->path) : 0;
}

/* RANGES or BRANCHES: context 0 to the flat profile, the others to lbr. */
static int read_counts(reader *rd, const pk_raw_section *s, bool branches)
{
    pk_rawprof2 *r = rd->r;
    uint64_t base = r->flat.preferred_base;
    for (uint64_t i = 0; i < s->n; i++) {
        const uint8_t *e = s->data + 32 * i;
        uint64_t off = s->off + 32 * i;
        uint64_t k = pk_ld64(e), a = pk_ld64(e + 8), b = pk_ld64(e + 16), n = pk_ld64(e + 24);
        if (!n)
            return pk_err_set(rd->err, "%s: offset %llu: entry with count 0", rd->path, (unsigned long long)off + 24);
        if (!k) {
            if (add_or_oom(rd, branches ? &r->flat.branches : &r->flat.ranges, a == PK_AGG_EXTERNAL ? a : a + base,
                           b == PK_AGG_EXTERNAL ? b : b + base, n))
                return -1;
            continue;
        }
        uint32_t id;
        uint64_t ka = 0, kb = 0;
        if (ctx_id(rd, &r->lbr, rd->lbr_id, k, off, &id) || key_off(rd, a, branches, off + 8, &ka) ||
            key_off(rd, b, false, off + 16, &kb) ||
            add_or_oom(rd, branches ? &r->lbr.branches : &r->lbr.ranges, (uint64_t)id << 32 | ka, kb, n))
            return -1;
    }
    return 0;
}

static int read_ip(reader *rd, const pk_raw_file *f)
{
    pk_rawprof2 *r = rd->r;
    const pk_raw_section *h = &f->sec[PK_RAWSEC_IP_HITS], *c = &f->sec[PK_RAWSEC_IP_CALLS],
                         *u = &f->sec[PK_RAWSEC_IP_UNPLACED];
    for (uint64_t i = 0; i < h->n; i++) {
        const uint8_t *e = h->data + 24 * i;
        uint64_t off = h->off + 24 * i, n = pk_ld64(e + 16), ka = 0;
        uint32_t id;
        if (!n)
            return pk_err_set(rd->err, "%s: offset %llu: entry with count 0", rd->path, (unsigned long long)off + 16);
        if (ctx_id(rd, &r->ip, rd->ip_id, pk_ld64(e), off, &id) || key_off(rd, pk_ld64(e + 8), false, off + 8, &ka) ||
            add_or_oom(rd, &r->ip.ranges, (uint64_t)id << 32 | ka, 0, n))
            return -1;
    }
    for (uint64_t i = 0; i < c->n; i++) {
        const uint8_t *e = c->data + 32 * i;
        uint64_t off = c->off + 32 * i, n = pk_ld64(e + 24), ka = 0, kb = 0;
        uint32_t id;
        if (!n)
            return pk_err_set(rd->err, "%s: offset %llu: entry with count 0", rd->path, (unsigned long long)off + 24);
        if (ctx_id(rd, &r->ip, rd->ip_id, pk_ld64(e), off, &id) || key_off(rd, pk_ld64(e + 8), false, off + 8, &ka) ||
            key_off(rd, pk_ld64(e + 16), false, off + 16, &kb) ||
            add_or_oom(rd, &r->ip.branches, (uint64_t)id << 32 | ka, kb, n))
            return -1;
    }
    for (uint64_t i = 0; i < u->n; i++) {
        const uint8_t *e = u->data + 24 * i;
        uint64_t off = u->off + 24 * i, n = pk_ld64(e + 16), ka = 0, kb = 0;
        if (!n)
            return pk_err_set(rd->err, "%s: offset %llu: entry with count 0", rd->path, (unsigned long long)off + 16);
        if (key_off(rd, pk_ld64(e), false, off, &ka) || key_off(rd, pk_ld64(e + 8), false, off + 8, &kb) ||
            add_or_oom(rd, &r->ip_unplaced, ka, kb, n))
            return -1;
    }
    return 0;
}

static void read_stats(const pk_raw_section *s, void *into, size_t size)
{
    uint64_t *d = into;
    for (uint64_t i = 0; i < s->n && i < size / 8; i++)
        d[i] = pk_ld64(s->data + 8 * i);
}

int pk_rawprof2_read_mem(pk_rawprof2 *r, const uint8_t *d, size_t size, const char *path, pk_err *err)
{
    memset(r, 0, sizeof *r);
    uint32_t version;
    if (pk_raw_file_version(d, size, path, &version, err))
        return -1;
    if (version == 1) {
        pk_rawprof flat;
        if (pk_rawprof_read_mem(&flat, d, size, path, err))
            return -1;
        int rc = pk_rawprof2_init(r, flat.path, flat.build_id, flat.build_id_size, flat.preferred_base, err);
        if (!rc) {
            pk_rawprof_free(&r->flat);
            r->flat = flat;
            r->version = 1;
        } else {
            pk_rawprof_free(&flat);
        }
        return rc;
    }
    pk_raw_file f;
    if (pk_raw_file_parse_v2(d, size, path, &f, err))
        return -1;
    char *p = strndup((const char *)f.path_bytes, f.path_len);
    if (!p)
        return pk_err_set(err, "%s: out of memory", path);
    int rc = pk_rawprof2_init(r, p, f.build_id, f.build_id_size, f.base, err);
    free(p);
    if (rc)
        return -1;
    r->flags = f.flags;
    read_stats(&f.sec[PK_RAWSEC_AGG_STATS], &r->flat.stats, sizeof r->flat.stats);
    read_stats(&f.sec[PK_RAWSEC_UNWIND_STATS], &r->unwind, sizeof r->unwind);
    read_stats(&f.sec[PK_RAWSEC_IP_STATS], &r->ip_stats, sizeof r->ip_stats);
    reader rd = {.r = r, .path = path, .err = err};
    rc = parse_contexts(&rd, &f.sec[PK_RAWSEC_CONTEXTS]) || read_counts(&rd, &f.sec[PK_RAWSEC_RANGES], false) ||
         read_counts(&rd, &f.sec[PK_RAWSEC_BRANCHES], true) || read_ip(&rd, &f);
    free(rd.first);
    free(rd.lbr_id);
    free(rd.ip_id);
    free(rd.scratch);
    if (rc) {
        pk_rawprof2_free(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    return 0;
}

int pk_rawprof2_read(pk_rawprof2 *r, const char *path, pk_err *err)
{
    memset(r, 0, sizeof *r);
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    int rc = pk_rawprof2_read_mem(r, f.data, f.size, path, err);
    pk_file_unmap(&f);
    return rc;
}

/* ---- merging ---- */

int pk_rawprof2_merge(pk_rawprof2 *dst, const pk_rawprof2 *src, pk_err *err)
{
    if (dst->flat.preferred_base != src->flat.preferred_base &&
        (pk_rawprof2_has_contexts(src) || pk_rawprof2_has_ip(src)))
        return pk_err_set(err, "cannot merge calling contexts or IP observations of %s recorded at preferred base "
                          "0x%llx into one at 0x%llx (no build-id tells they are the same binary)",
                          src->flat.path, (unsigned long long)src->flat.preferred_base,
                          (unsigned long long)dst->flat.preferred_base);
    if (pk_rawprof_merge(&dst->flat, &src->flat, err) || pk_csraw_merge(&dst->lbr, &src->lbr, err) ||
        pk_csraw_merge(&dst->ip, &src->ip, err))
        return -1;
    if (pk_pairmap_reserve(&dst->ip_unplaced, dst->ip_unplaced.len + src->ip_unplaced.len))
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < src->ip_unplaced.cap; i++) {
        const pk_pair_count *p = &src->ip_unplaced.e[i];
        if (p->n && pk_pairmap_add(&dst->ip_unplaced, p->a, p->b, p->n))
            return pk_err_set(err, "out of memory");
    }
    pk_unwind_stats_add(&dst->unwind, &src->unwind);
    pk_ip_stats_add(&dst->ip_stats, &src->ip_stats);
    dst->flags |= src->flags;
    if (src->version > dst->version)
        dst->version = src->version;
    return 0;
}

/* ---- the profgen pipeline's side ---- */

int pk_rawprof2_write_parts(const pk_rawprof *flat, const pk_csraw *cs, uint32_t flags,
                            const pk_unwind_stats *unwind, pk_ipraw *ip, const char *path, pk_err *err)
{
    /* a view: every member is borrowed */
    pk_rawprof2 v;
    memset(&v, 0, sizeof v);
    v.version = 2;
    v.flat = *flat;
    if (cs) {
        v.lbr = *cs;
        v.flags = flags;
    }
    if (unwind)
        v.unwind = *unwind;
    if (ip) {
        if (pk_ipraw_record_calls(ip, err))
            return -1;
        v.ip = ip->ctxs;
        v.ip.ranges = ip->hits;
        v.ip.branches = ip->calls;
        v.ip_unplaced = ip->unplaced;
        v.ip_stats = ip->stats;
    }
    return pk_rawprof2_write(&v, path, err);
}

int pk_rawprof2_add_to(const pk_rawprof2 *r, pk_rawprof2_sink *sink, pk_err *err)
{
    if (pk_rawprof_merge(sink->flat, &r->flat, err))
        return -1;
    pk_unwind_stats_add(sink->unwind, &r->unwind);
    if (pk_rawprof2_has_contexts(r)) {
        if (sink->cs ? pk_csraw_merge_trimmed(sink->cs, &r->lbr, sink->max_depth, err)
                     : pk_csraw_add_flat(&r->lbr, sink->flat, err))
            return -1;
        sink->contexts_flattened |= !sink->cs;
    }
    if (pk_rawprof2_has_ip(r)) {
        if (sink->ip && pk_ipraw_add_recorded(sink->ip, &r->ip, &r->ip_unplaced, &r->ip_stats, err))
            return -1;
        sink->ip_unused |= !sink->ip;
    }
    return 0;
}

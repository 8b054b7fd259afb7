/* llvm_unsym_out.c — see llvm_unsym_out.h. */
#include "profgen/llvm_unsym_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVM_EXTERNAL 1ull

int pk_llvm_unsym_write_flat(const pk_rawprof *raw, pk_binary *bin, uint64_t base, const char *path, pk_err *err)
{
    const pk_elf *elf = pk_binary_elf(bin);
    pk_rawprof kept;
    if (pk_rawprof_init(&kept, raw->path, NULL, 0, raw->preferred_base, err))
        return -1;
    int rc = 0;
    for (int part = 0; part < 2 && !rc; part++) {
        const pk_pairmap *m = part ? &raw->branches : &raw->ranges;
        for (size_t i = 0; i < m->cap && !rc; i++) {
            const pk_pair_count *e = &m->e[i];
            if (!e->n || !pk_elf_func_at(elf, e->b) ||
                (!part && (!pk_elf_func_at(elf, e->a) || pk_binary_range_crosses_uncond(bin, e->a, e->b))))
                continue;
            if (pk_pairmap_add(part ? &kept.branches : &kept.ranges, e->a, e->b, e->n))
                rc = pk_err_set(err, "out of memory");
        }
    }
    rc = rc ? -1 : pk_llvm_unsym_write(&kept, base, path, err);
    pk_rawprof_free(&kept);
    return rc;
}

typedef struct entry {
    const char *ctx;
    int kind; /* 0 range, 1 branch */
    uint64_t a, b, n;
} entry;

static int cmp_entry(const void *x, const void *y)
{
    const entry *p = x, *q = y;
    int c = strcmp(p->ctx, q->ctx);
    if (c)
        return c;
    if (p->kind != q->kind)
        return p->kind - q->kind;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* Sorts v (equal keys add up) and writes it as llvm-profgen does: per
 * context, in the order of their strings, its ranges then its branches. */
static int write_entries(entry *v, size_t n, uint64_t base, const char *path, pk_err *err)
{
    if (n)
        qsort(v, n, sizeof *v, cmp_entry);
    /* equal keys (contexts that differ only by their leaf function) add up */
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && !cmp_entry(&v[w - 1], &v[i]))
            v[w - 1].n += v[i].n;
        else
            v[w++] = v[i];
    }
    n = w;
    pk_out_file o;
    if (pk_out_open(&o, path, err))
        return -1;
    for (size_t i = 0; i < n;) {
        const char *ctx = v[i].ctx;
        if (pk_out_printf(&o, err, "[%s]\n", ctx))
            goto fail;
        for (int kind = 0; kind < 2; kind++) {
            size_t j = i;
            while (j < n && v[j].kind == kind && !strcmp(v[j].ctx, ctx))
                j++;
            if (pk_out_printf(&o, err, "  %zu\n", j - i))
                goto fail;
            for (; i < j; i++)
                if (pk_out_printf(&o, err, "  %llx%s%llx:%llu\n", (unsigned long long)(v[i].a - base),
                                  kind ? "->" : "-", (unsigned long long)(v[i].b - base),
                                  (unsigned long long)v[i].n))
                    goto fail;
        }
    }
    return pk_out_commit(&o, err);
fail:
    pk_out_abort(&o);
    return -1;
}

/* "0xSITE @ 0xSITE" of a context's callers (its last frame, the leaf
 * function, left out). */
static char *ctx_string(const pk_csraw *cs, uint32_t ctx, uint64_t base)
{
    uint32_t n;
    const uint64_t *fr = pk_csraw_ctx(cs, ctx, &n);
    size_t cap = (size_t)n * 24 + 1;
    char *s = malloc(cap), *p = s;
    if (!s)
        return NULL;
    *p = 0;
    for (uint32_t i = 0; i + 1 < n; i++)
        p += snprintf(p, cap - (size_t)(p - s), "%s0x%llx", i ? " @ " : "", (unsigned long long)(fr[i] - base));
    return s;
}

int pk_llvm_unsym_write_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const char *path, pk_err *err)
{
    const pk_elf *elf = pk_binary_elf(bin);
    size_t nctx = pk_csraw_num_ctxs(cs);
    char **names = calloc(nctx ? nctx : 1, sizeof *names);
    entry *v = malloc((cs->ranges.len + cs->branches.len + 1) * sizeof *v);
    size_t n = 0;
    int rc = -1;
    if (!names || !v) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < nctx; c++)
        if (!(names[c] = ctx_string(cs, (uint32_t)c, base))) {
            pk_err_set(err, "out of memory");
            goto out;
        }
    for (int kind = 0; kind < 2; kind++) {
        const pk_pairmap *m = kind ? &cs->branches : &cs->ranges;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].n)
                continue;
            uint32_t ctx;
            uint64_t a, b;
            pk_csraw_key(cs, &m->e[i], &ctx, &a, &b);
            if (!pk_elf_func_at(elf, b))
                continue;
            const char *name = names[ctx];
            if (a == PK_AGG_EXTERNAL || !pk_elf_func_at(elf, a)) {
                if (!kind)
                    continue;
                a = LLVM_EXTERNAL;
                name = ""; /* llvm-profgen keeps these in the root context, [] */
            } else if (!kind && pk_binary_range_crosses_uncond(bin, a, b)) {
                continue;
            }
            v[n++] = (entry){name, kind, a, b, m->e[i].n};
        }
    }
    rc = write_entries(v, n, base, path, err);
out:
    for (size_t c = 0; names && c < nctx; c++)
        free(names[c]);
    free(names);
    free(v);
    return rc;
}

/* ---- line-based contexts ---- */

typedef struct line_sink {
    const pk_elf *elf;
    pk_profset *names;
    pk_vec text;                 /* char *: the string of each key id (NULL until asked) */
    pk_vec v;                    /* entry */
} line_sink;

static int line_entry(void *cb, pk_ctx_id key, int kind, uint64_t a, uint64_t b, uint64_t n, bool leaf_inlined,
                      pk_err *err)
{
    (void)leaf_inlined;
    line_sink *s = cb;
    if (!pk_elf_func_at(s->elf, b))
        return 0;
    if (kind && (a == PK_AGG_EXTERNAL || !pk_elf_func_at(s->elf, a))) {
        a = LLVM_EXTERNAL; /* llvm-profgen keeps these in the root context, [] */
        key = PK_NO_CTX;
    }
    const char *text = "";
    if (key != PK_NO_CTX) {
        while (s->text.len <= key) {
            char **slot = pk_vec_push(&s->text);
            if (!slot)
                return pk_err_set(err, "out of memory");
            *slot = NULL;
        }
        char **slot = &PK_VEC_AT(&s->text, char *, key);
        if (!*slot) {
            size_t len = pk_profset_ctx_text(s->names, key, NULL, 0);
            if (!(*slot = malloc(len + 1)))
                return pk_err_set(err, "out of memory");
            pk_profset_ctx_text(s->names, key, *slot, len + 1);
        }
        text = *slot;
    }
    entry *e = pk_vec_push(&s->v);
    if (!e)
        return pk_err_set(err, "out of memory");
    *e = (entry){text, kind, a, b, n};
    return 0;
}

static void line_sink_free(line_sink *s)
{
    for (size_t i = 0; i < s->text.len; i++)
        free(PK_VEC_AT(&s->text, char *, i));
    pk_vec_free(&s->text);
    pk_vec_free(&s->v);
}

int pk_llvm_unsym_write_line_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const pk_profgen_opts *opts,
                                const char *path, pk_err *err)
{
    line_sink s = {.elf = pk_binary_elf(bin)};
    pk_vec_init(&s.text, sizeof(char *));
    pk_vec_init(&s.v, sizeof(entry));
    pk_profset names;
    if (pk_profset_init(&names, err))
        return -1;
    s.names = &names;
    int rc = pk_profgen_line_cs_keys(bin, cs, opts, &names, line_entry, &s, NULL, err);
    if (!rc)
        rc = write_entries(s.v.data, s.v.len, base, path, err);
    line_sink_free(&s);
    pk_profset_free(&names);
    return rc;
}

int pk_llvm_unsym_write_named(const pk_csraw *cs, pk_profset *ps, pk_binary *bin, uint64_t base, const char *path,
                              pk_err *err)
{
    line_sink s = {.elf = pk_binary_elf(bin), .names = ps};
    pk_vec_init(&s.text, sizeof(char *));
    pk_vec_init(&s.v, sizeof(entry));
    int rc = 0;
    for (int kind = 0; kind < 2 && !rc; kind++) {
        const pk_pairmap *m = kind ? &cs->branches : &cs->ranges;
        for (size_t i = 0; i < m->cap && !rc; i++) {
            if (!m->e[i].n)
                continue;
            uint32_t ctx, n;
            uint64_t a, b;
            pk_csraw_key(cs, &m->e[i], &ctx, &a, &b);
            const uint64_t *id = pk_csraw_ctx(cs, ctx, &n);
            pk_ctx_id key = n == 1 && id[0] != PK_LINE_CTX_NONE ? (pk_ctx_id)id[0] : PK_NO_CTX;
            rc = line_entry(&s, key, kind, a, b, m->e[i].n, false, err);
        }
    }
    if (!rc)
        rc = write_entries(s.v.data, s.v.len, base, path, err);
    line_sink_free(&s);
    return rc;
}

typedef struct ctx_reader {
    pk_rawprof *flat;
    pk_csraw *cs;
    pk_profset *ps;
    const char *path;
    bool in_ctx;
    uint32_t ctx;                /* the csraw context being read */
} ctx_reader;

static int read_context(void *cb, const char *text, size_t len, size_t lineno, pk_err *err)
{
    ctx_reader *r = cb;
    uint64_t id = PK_LINE_CTX_NONE;
    if (r->flat->ranges.len || r->flat->branches.len)
        return pk_err_set(err, "%s: line %zu: a context after counts without one", r->path, lineno);
    if (len >= 2 && text[0] == '0' && text[1] == 'x')
        return pk_err_set(err, "%s: line %zu: '[%.*s]': llvm-profgen's context text of a binary with "
                          "pseudo-probes (call-site addresses) is not supported as input", r->path, lineno,
                          (int)(len > 60 ? 60 : len), text);
    if (len) {
        pk_ctx_id cid;
        if (pk_profset_ctx_parse(r->ps, text, len, &cid, err)) {
            pk_err_prefix(err, "%s: line %zu", r->path, lineno);
            return -1;
        }
        id = cid;
    }
    r->in_ctx = true;
    return pk_csraw_intern(r->cs, &id, 1, &r->ctx, err);
}

static int read_count(void *cb, int kind, uint64_t a, uint64_t b, uint64_t n, size_t lineno, pk_err *err)
{
    ctx_reader *r = cb;
    if (!r->in_ctx) { /* a flat text (contexts, once begun, go on to the end) */
        pk_pairmap *m = kind ? &r->flat->branches : &r->flat->ranges;
        if (kind)
            r->flat->stats.branches += n;
        else
            r->flat->stats.ranges += n;
        return pk_pairmap_add(m, a, b, n) ? pk_err_set(err, "out of memory") : 0;
    }
    if (pk_csraw_add(r->cs, r->ctx, kind, a, b, n, err)) {
        pk_err_prefix(err, "%s: line %zu", r->path, lineno);
        return -1;
    }
    return 0;
}

int pk_llvm_unsym_read_ctx(pk_rawprof *flat, pk_csraw *cs, pk_profset *ps, const char *path, uint64_t base,
                           pk_err *err)
{
    ctx_reader r = {.flat = flat, .cs = cs, .ps = ps, .path = path};
    pk_llvm_unsym_sink sink = {.ctx = &r, .context = read_context, .count = read_count};
    return pk_llvm_unsym_parse(path, base, &sink, err);
}

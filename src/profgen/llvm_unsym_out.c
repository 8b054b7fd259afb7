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
    pk_out_file o;
    bool open = false;
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
            if (a == PK_AGG_EXTERNAL) {
                if (!kind)
                    continue;
                a = LLVM_EXTERNAL;
            } else if (!pk_elf_func_at(elf, a)) {
                if (!kind)
                    continue;
                a = LLVM_EXTERNAL;
            } else if (!kind && pk_binary_range_crosses_uncond(bin, a, b)) {
                continue;
            }
            v[n++] = (entry){names[ctx], kind, a, b, m->e[i].n};
        }
    }
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
    if (pk_out_open(&o, path, err))
        goto out;
    open = true;
    for (size_t i = 0; i < n;) {
        const char *ctx = v[i].ctx;
        if (pk_out_printf(&o, err, "[%s]\n", ctx))
            goto out;
        for (int kind = 0; kind < 2; kind++) {
            size_t j = i;
            while (j < n && v[j].kind == kind && !strcmp(v[j].ctx, ctx))
                j++;
            if (pk_out_printf(&o, err, "  %zu\n", j - i))
                goto out;
            for (; i < j; i++)
                if (pk_out_printf(&o, err, "  %llx%s%llx:%llu\n", (unsigned long long)(v[i].a - base),
                                  kind ? "->" : "-", (unsigned long long)(v[i].b - base),
                                  (unsigned long long)v[i].n))
                    goto out;
        }
    }
    open = false;
    rc = pk_out_commit(&o, err);
out:
    if (open)
        pk_out_abort(&o);
    for (size_t c = 0; names && c < nctx; c++)
        free(names[c]);
    free(names);
    free(v);
    return rc;
}

/* llvm_unsym.c — llvm-profgen's unsymbolized profile text (what its
 * --skip-symbolization writes and --unsymbolized-profile reads):
 *
 *     [context]          context-sensitive text only, before each block:
 *                        "0x5b0 @ 0x634" (call sites, pseudo-probe binaries),
 *                        "main:1 @ foo:3 @ bar" (source frames), "" (none)
 *     N                  number of fall-through ranges
 *     begin-end:count    hex addresses, end inclusive; N lines
 *     M                  number of branches
 *     source->target:count
 *
 * (the lines of a context's block are indented by two spaces). The flat
 * text is read here; the contexts are handed to the caller's sink
 * (pk_llvm_unsym_parse).
 * Addresses are relative to `base` (llvm-profgen's --use-offset, its
 * default: the first executable segment's page) or absolute (base 0). A
 * source outside the binary is llvm-profgen's external address, 1, written
 * relative to the base like any other (so it wraps below 0 for base > 1).
 * Entries are sorted by their absolute (begin, end), as llvm-profgen's map. */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LLVM_EXTERNAL 1ull

static int cmp_pair(const void *x, const void *y)
{
    const pk_pair_count *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

static int write_counter(pk_out_file *o, const pk_pairmap *m, const char *sep, uint64_t base, pk_err *err)
{
    size_t n = 0;
    pk_pair_count *v = pk_pairmap_sorted(m, &n);
    if (!v && n)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (v[i].a == PK_AGG_EXTERNAL)
            v[i].a = LLVM_EXTERNAL;
    if (n)
        qsort(v, n, sizeof *v, cmp_pair);
    int rc = pk_out_printf(o, err, "%zu\n", n);
    for (size_t i = 0; i < n && !rc; i++)
        rc = pk_out_printf(o, err, "%llx%s%llx:%llu\n", (unsigned long long)(v[i].a - base), sep,
                           (unsigned long long)(v[i].b - base), (unsigned long long)v[i].n);
    free(v);
    return rc;
}

int pk_llvm_unsym_write(const pk_rawprof *r, uint64_t base, const char *path, pk_err *err)
{
    pk_out_file o;
    if (pk_out_open(&o, path, err))
        return -1;
    if (write_counter(&o, &r->ranges, "-", base, err) || write_counter(&o, &r->branches, "->", base, err)) {
        pk_out_abort(&o);
        return -1;
    }
    return pk_out_commit(&o, err);
}

/* The next non-blank line of [p, end), trimmed: *line and *len, p advanced
 * past its newline, *lineno counting every line. */
static bool next_line(const char **p, const char *end, const char **line, size_t *len, size_t *lineno)
{
    while (*p < end) {
        const char *nl = memchr(*p, '\n', (size_t)(end - *p));
        *line = *p;
        *len = (size_t)((nl ? nl : end) - *p);
        *p = nl ? nl + 1 : end;
        (*lineno)++;
        while (*len && ((*line)[*len - 1] == '\r' || (*line)[*len - 1] == ' ' || (*line)[*len - 1] == '\t'))
            (*len)--;
        while (*len && (**line == ' ' || **line == '\t'))
            (*line)++, (*len)--;
        if (*len)
            return true;
    }
    return false;
}

static bool parse_u64(const char *s, size_t len, int radix, uint64_t *out)
{
    char buf[32];
    if (!len || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(buf, &e, radix);
    if (errno || *e || buf[0] == '-' || buf[0] == '+')
        return false;
    *out = v;
    return true;
}

int pk_llvm_unsym_parse(const char *path, uint64_t base, const pk_llvm_unsym_sink *sink, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    const char *p = (const char *)f.data, *end = p + f.size, *line;
    size_t len, lineno = 0;
    int rc = 0;
    bool any = false;
    while (!rc && p < end) {
        for (int part = 0; part < 2 && !rc; part++) {
            const char *sep = part ? "->" : "-";
            uint64_t n;
            if (!next_line(&p, end, &line, &len, &lineno)) {
                if (part == 0 && any)
                    goto done;
                rc = pk_err_set(err, "%s: line %zu: the file ends where a count of %s was expected", path,
                                lineno + 1, part ? "branches" : "ranges");
                break;
            }
            if (part == 0 && line[0] == '[') {
                if (!sink->context) {
                    rc = pk_err_set(err, "%s: line %zu: a calling context ('%.*s'): context-sensitive "
                                    "unsymbolized profiles are not supported here", path, lineno,
                                    (int)(len > 60 ? 60 : len), line);
                    break;
                }
                if (line[len - 1] != ']') {
                    rc = pk_err_set(err, "%s: line %zu: '%.*s': a context does not end with ']'", path, lineno,
                                    (int)(len > 60 ? 60 : len), line);
                    break;
                }
                if ((rc = sink->context(sink->ctx, line + 1, len - 2, lineno, err)))
                    break;
                if (!next_line(&p, end, &line, &len, &lineno)) {
                    rc = pk_err_set(err, "%s: line %zu: the file ends where a count of ranges was expected",
                                    path, lineno + 1);
                    break;
                }
            }
            if (!parse_u64(line, len, 10, &n)) {
                rc = pk_err_set(err, "%s: line %zu: '%.*s' is not a count of %s", path, lineno,
                                (int)(len > 60 ? 60 : len), line, part ? "branches" : "ranges");
                break;
            }
            for (uint64_t k = 0; k < n && !rc; k++) {
                if (!next_line(&p, end, &line, &len, &lineno)) {
                    rc = pk_err_set(err, "%s: line %zu: the file ends after %llu of %llu %s", path, lineno + 1,
                                    (unsigned long long)k, (unsigned long long)n, part ? "branches" : "ranges");
                    break;
                }
                const char *colon = memchr(line, ':', len);
                const char *s = colon ? memmem(line, (size_t)(colon - line), sep, strlen(sep)) : NULL;
                uint64_t a, b, c;
                if (!s || !parse_u64(line, (size_t)(s - line), 16, &a) ||
                    !parse_u64(s + strlen(sep), (size_t)(colon - s - strlen(sep)), 16, &b) ||
                    !parse_u64(colon + 1, len - (size_t)(colon + 1 - line), 10, &c)) {
                    rc = pk_err_set(err, "%s: line %zu: '%.*s' is not 'hex%shex:count'", path, lineno,
                                    (int)(len > 60 ? 60 : len), line, sep);
                    break;
                }
                a += base;
                b += base;
                if (part && a == LLVM_EXTERNAL)
                    a = PK_AGG_EXTERNAL;
                if (c && (rc = sink->count(sink->ctx, part, a, b, c, lineno, err)))
                    break;
            }
        }
        any = true;
    }
done:
    pk_file_unmap(&f);
    return rc ? -1 : 0;
}

static int flat_count(void *ctx, int kind, uint64_t a, uint64_t b, uint64_t c, size_t lineno, pk_err *err)
{
    (void)lineno;
    pk_rawprof *into = ctx;
    if (pk_pairmap_add(kind ? &into->branches : &into->ranges, a, b, c))
        return pk_err_set(err, "out of memory");
    if (kind)
        into->stats.branches += c;
    else
        into->stats.ranges += c;
    return 0;
}

int pk_llvm_unsym_read(pk_rawprof *into, const char *path, uint64_t base, pk_err *err)
{
    pk_llvm_unsym_sink sink = {.ctx = into, .count = flat_count};
    return pk_llvm_unsym_parse(path, base, &sink, err);
}

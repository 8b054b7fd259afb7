/* layout_io.c — function name tables, text inputs (traces, call graphs) and
 * ordering files for lld, gold and GNU ld. */
#include "layout/layout.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- names */

int pk_layout_names_init(pk_layout_names *t, pk_err *err)
{
    t->n = 0;
    pk_vec_init(&t->offs, sizeof(size_t));
    pk_vec_init(&t->chars, 1);
    if (pk_u64map_init(&t->index, 256) != 0)
        return pk_err_set(err, "names: out of memory");
    return 0;
}

void pk_layout_names_free(pk_layout_names *t)
{
    pk_vec_free(&t->offs);
    pk_vec_free(&t->chars);
    pk_u64map_free(&t->index);
    t->n = 0;
}

static bool name_eq(const pk_layout_names *t, size_t i, const char *name, size_t len)
{
    const char *s = pk_layout_name(t, i);
    return strncmp(s, name, len) == 0 && s[len] == '\0';
}

int64_t pk_layout_names_find(const pk_layout_names *t, const char *name, size_t len)
{
    /* Keys are the name hash, then hash+1, ... on a (rare) collision. */
    for (uint64_t h = pk_hash_bytes(name, len);; h++) {
        uint64_t *v = pk_u64map_get(&t->index, h);
        if (!v)
            return -1;
        if (name_eq(t, *v, name, len))
            return (int64_t)*v;
    }
}

int64_t pk_layout_names_intern(pk_layout_names *t, const char *name, size_t len, pk_err *err)
{
    for (uint64_t h = pk_hash_bytes(name, len);; h++) {
        uint64_t *v = pk_u64map_get(&t->index, h);
        if (v) {
            if (name_eq(t, *v, name, len))
                return (int64_t)*v;
            continue;
        }
        size_t off = t->chars.len;
        if (pk_vec_reserve(&t->chars, off + len + 1) != 0)
            break;
        memcpy((char *)t->chars.data + off, name, len);
        ((char *)t->chars.data)[off + len] = '\0';
        t->chars.len = off + len + 1;
        size_t *o = pk_vec_push(&t->offs);
        if (!o)
            break;
        *o = off;
        uint64_t *slot = pk_u64map_slot(&t->index, h);
        if (!slot)
            break;
        *slot = t->n;
        return (int64_t)t->n++;
    }
    pk_err_set(err, "names: out of memory");
    return -1;
}

/* ---------------------------------------------------------------- traces */

void pk_layout_trace_set_free(pk_layout_trace_set *s)
{
    for (size_t i = 0; i < s->traces.len; i++)
        free((void *)PK_VEC_AT(&s->traces, pk_layout_trace, i).funcs);
    pk_vec_free(&s->traces);
}

typedef struct line_reader {
    const char *p, *end, *base;
} line_reader;

static bool next_line(line_reader *r, const char **s, const char **e)
{
    if (r->p >= r->end)
        return false;
    *s = r->p;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    *e = nl ? nl : r->end;
    r->p = nl ? nl + 1 : r->end;
    if (*e > *s && (*e)[-1] == '\r')
        (*e)--;
    return true;
}

static const char *skip_blank(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static const char *token_end(const char *p, const char *e)
{
    while (p < e && *p != ' ' && *p != '\t')
        p++;
    return p;
}

static int parse_u64(const char *s, const char *e, uint64_t *v)
{
    if (s == e)
        return -1;
    uint64_t x = 0;
    for (const char *p = s; p < e; p++) {
        if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *v = x;
    return 0;
}

/* The trace being collected: function indexes, each kept once. */
typedef struct trace_acc {
    pk_vec funcs;        /* uint32_t */
    pk_u64map seen;
    uint64_t weight;
} trace_acc;

static int acc_add(trace_acc *a, int64_t f)
{
    uint64_t *s = pk_u64map_slot(&a->seen, (uint64_t)f);
    if (!s)
        return -1;
    if (*s)
        return 0;
    *s = 1;
    uint32_t *x = pk_vec_push(&a->funcs);
    if (!x)
        return -1;
    *x = (uint32_t)f;
    return 0;
}

static int acc_flush(trace_acc *a, pk_layout_trace_set *out)
{
    if (a->funcs.len == 0)
        return 0;
    pk_layout_trace *t = pk_vec_push(&out->traces);
    if (!t)
        return -1;
    t->funcs = a->funcs.data;
    t->len = a->funcs.len;
    t->weight = a->weight;
    pk_vec_init(&a->funcs, sizeof(uint32_t));
    pk_u64map_clear(&a->seen);
    return 0;
}

int pk_layout_read_text_traces(const char *path, pk_layout_names *names,
                               pk_layout_trace_set *out, pk_err *err)
{
    pk_vec_init(&out->traces, sizeof(pk_layout_trace));
    pk_mapped_file f;
    if (pk_file_map(&f, path, err) != 0)
        return -1;
    line_reader r = {(const char *)f.data, (const char *)f.data + f.size, (const char *)f.data};
    trace_acc a;
    pk_vec_init(&a.funcs, sizeof(uint32_t));
    a.weight = 1;
    if (pk_u64map_init(&a.seen, 256) != 0) {
        pk_file_unmap(&f);
        return pk_err_set(err, "%s: out of memory", path);
    }
    /* llvm-profdata's listing: skip its header up to the traces. */
    bool llvm = false;
    const char *tt = f.size ? memmem(f.data, f.size, "Temporal Profile Traces (", 25) : NULL;
    size_t lineno = 0;
    if (tt) {
        while (tt > r.p && tt[-1] != '\n')
            tt--;
        for (const char *q = r.p; q < tt; q++)
            lineno += *q == '\n';
        r.p = tt;
    }
    int rc = 0;
    const char *s, *e;
    while (rc == 0 && next_line(&r, &s, &e)) {
        lineno++;
        size_t off = (size_t)(s - r.base);
        if (memchr(s, '\0', (size_t)(e - s))) {
            rc = pk_err_set(err, "%s: line %zu (offset %zu): NUL byte: not a text trace file",
                            path, lineno, off);
            break;
        }
        const char *p = skip_blank(s, e);
        if (!llvm && e - p >= 23 && !memcmp(p, "Temporal Profile Traces", 23)) {
            llvm = true;
            continue;
        }
        if (llvm) {
            /* "  Temporal Profile Trace K (weight=W count=C):" then "    name" lines. */
            if (e - p >= 22 && !memcmp(p, "Temporal Profile Trace", 22)) {
                if (acc_flush(&a, out) != 0) {
                    rc = pk_err_set(err, "%s: out of memory", path);
                    break;
                }
                const char *w = memmem(p, (size_t)(e - p), "weight=", 7);
                uint64_t weight = 1;
                if (w) {
                    const char *ws = w + 7, *we = ws;
                    while (we < e && *we >= '0' && *we <= '9')
                        we++;
                    if (parse_u64(ws, we, &weight) != 0) {
                        rc = pk_err_set(err, "%s: line %zu (offset %zu): bad trace weight",
                                        path, lineno, (size_t)(ws - r.base));
                        break;
                    }
                }
                a.weight = weight;
                continue;
            }
            if (p == e || p - s < 4)
                continue; /* headers and blank lines */
            const char *te = token_end(p, e);
            const char *semi = NULL;
            for (const char *q = p; q < te; q++)
                if (*q == ';')
                    semi = q;
            if (semi)
                p = semi + 1;
            int64_t id = p < te ? pk_layout_names_intern(names, p, (size_t)(te - p), err) : -1;
            if (id < 0 || acc_add(&a, id) != 0) {
                rc = pk_err_set(err, "%s: line %zu (offset %zu): bad or unstorable name", path,
                                lineno, off);
                break;
            }
            continue;
        }
        if (p == e || *p == '#')
            continue;
        a.weight = 1;
        if (*p == '@') {
            const char *te = token_end(p, e);
            if (parse_u64(p + 1, te, &a.weight) != 0) {
                rc = pk_err_set(err, "%s: line %zu (offset %zu): bad weight '%.*s'", path, lineno,
                                (size_t)(p - r.base), (int)(te - p), p);
                break;
            }
            p = skip_blank(te, e);
        }
        while (p < e) {
            const char *te = token_end(p, e);
            int64_t id = pk_layout_names_intern(names, p, (size_t)(te - p), err);
            if (id < 0 || acc_add(&a, id) != 0) {
                rc = pk_err_set(err, "%s: line %zu: out of memory", path, lineno);
                break;
            }
            p = skip_blank(te, e);
        }
        if (rc == 0 && acc_flush(&a, out) != 0)
            rc = pk_err_set(err, "%s: out of memory", path);
    }
    if (rc == 0 && acc_flush(&a, out) != 0)
        rc = pk_err_set(err, "%s: out of memory", path);
    if (rc == 0 && out->traces.len == 0)
        rc = pk_err_set(err, "%s: no trace found (%zu bytes read)", path, f.size);
    pk_vec_free(&a.funcs);
    pk_u64map_free(&a.seen);
    pk_file_unmap(&f);
    if (rc != 0)
        pk_layout_trace_set_free(out);
    return rc;
}

/* ---------------------------------------------------------------- call graph */

void pk_layout_call_graph_init(pk_layout_call_graph *g)
{
    pk_vec_init(&g->sizes, sizeof(uint64_t));
    pk_vec_init(&g->samples, sizeof(uint64_t));
    pk_vec_init(&g->arcs, sizeof(pk_c3_arc));
}

void pk_layout_call_graph_free(pk_layout_call_graph *g)
{
    pk_vec_free(&g->sizes);
    pk_vec_free(&g->samples);
    pk_vec_free(&g->arcs);
}

int pk_layout_call_graph_touch(pk_layout_call_graph *g, size_t i, pk_err *err)
{
    while (g->sizes.len <= i)
        if (!pk_vec_push(&g->sizes) || !pk_vec_push(&g->samples))
            return pk_err_set(err, "call graph: out of memory");
    return 0;
}

int pk_layout_read_call_graph(const char *path, pk_layout_names *names,
                              pk_layout_call_graph *g, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err) != 0)
        return -1;
    line_reader r = {(const char *)f.data, (const char *)f.data + f.size, (const char *)f.data};
    const char *s, *e;
    size_t lineno = 0, records = 0;
    int rc = 0;
    while (rc == 0 && next_line(&r, &s, &e)) {
        lineno++;
        size_t off = (size_t)(s - r.base);
        const char *tok[4], *tend[4];
        int nt = 0;
        const char *p = skip_blank(s, e);
        if (p == e || *p == '#')
            continue;
        while (p < e && nt < 4) {
            tok[nt] = p;
            tend[nt] = token_end(p, e);
            p = skip_blank(tend[nt], e);
            nt++;
        }
        bool is_node = tend[0] - tok[0] == 4 && !memcmp(tok[0], "node", 4);
        bool is_arc = tend[0] - tok[0] == 3 && !memcmp(tok[0], "arc", 3);
        uint64_t a = 0, b = 0;
        if (nt != 4 || p != e || (!is_node && !is_arc) ||
            (is_node && (parse_u64(tok[2], tend[2], &a) || parse_u64(tok[3], tend[3], &b))) ||
            (is_arc && parse_u64(tok[3], tend[3], &a))) {
            rc = pk_err_set(err, "%s: line %zu (offset %zu): expected 'node NAME SIZE SAMPLES' "
                            "or 'arc CALLER CALLEE COUNT'", path, lineno, off);
            break;
        }
        int64_t x = pk_layout_names_intern(names, tok[1], (size_t)(tend[1] - tok[1]), err);
        int64_t y = is_arc ? pk_layout_names_intern(names, tok[2], (size_t)(tend[2] - tok[2]), err)
                           : x;
        if (x < 0 || y < 0 || pk_layout_call_graph_touch(g, (size_t)(x > y ? x : y), err) != 0) {
            rc = -1;
            break;
        }
        if (is_node) {
            PK_VEC_AT(&g->sizes, uint64_t, x) = a;
            PK_VEC_AT(&g->samples, uint64_t, x) = b;
        } else {
            pk_c3_arc *arc = pk_vec_push(&g->arcs);
            if (!arc) {
                rc = pk_err_set(err, "%s: out of memory", path);
                break;
            }
            *arc = (pk_c3_arc){(uint32_t)x, (uint32_t)y, a};
        }
        records++;
    }
    if (rc == 0 && records == 0)
        rc = pk_err_set(err, "%s: no node or arc found (%zu bytes read)", path, f.size);
    pk_file_unmap(&f);
    return rc;
}

/* ---------------------------------------------------------------- ordering files */

int pk_order_format_parse(const char *s, pk_order_format *f)
{
    if (!strcmp(s, "lld"))
        *f = PK_ORDER_LLD;
    else if (!strcmp(s, "gold"))
        *f = PK_ORDER_GOLD;
    else if (!strcmp(s, "ld-script") || !strcmp(s, "ld") || !strcmp(s, "bfd"))
        *f = PK_ORDER_LD_SCRIPT;
    else
        return -1;
    return 0;
}

static char *str_cat3(const char *a, const char *b, size_t blen)
{
    size_t al = strlen(a);
    char *s = malloc(al + blen + 1);
    if (!s)
        return NULL;
    memcpy(s, a, al);
    memcpy(s + al, b, blen);
    s[al + blen] = '\0';
    return s;
}

int pk_order_section_names(const char *sym, char **out, int max, pk_err *err)
{
    size_t len = strlen(sym);
    int n = 0;
    const char *const *prefixes;
    static const char *const normal[] = {".text.", ".text.hot.", ".text.startup.", ".text.exit.", NULL};
    static const char *const cold[] = {".text.unlikely.", ".text.split.", NULL};
    /* gcc's cold partition "f.cold" (or "f.cold.N" in older gcc) is emitted
     * into .text.unlikely.f; clang's machine function splitter uses .text.split.f. */
    const char *c = strstr(sym, ".cold");
    if (c && c > sym && (c[5] == '\0' || c[5] == '.')) {
        len = (size_t)(c - sym);
        prefixes = cold;
    } else {
        prefixes = normal;
    }
    for (int i = 0; prefixes[i]; i++) {
        if (n >= max) {
            while (n > 0)
                free(out[--n]);
            return pk_err_set(err, "section names: more than %d", max);
        }
        out[n] = str_cat3(prefixes[i], sym, len);
        if (!out[n]) {
            while (n > 0)
                free(out[--n]);
            return pk_err_set(err, "section names: out of memory");
        }
        n++;
    }
    return n;
}

/* A name a linker-script pattern can hold literally: anything but the glob
 * and script metacharacters. */
static bool script_safe(const char *s)
{
    for (; *s; s++)
        if (strchr("*?[]\\\"(){}; \t\n", *s))
            return false;
    return true;
}

int pk_layout_write_order(pk_out_file *o, pk_order_format fmt, const char *const *names,
                          const uint32_t *order, size_t n, const char *header, pk_err *err)
{
    if (header && fmt == PK_ORDER_LLD && pk_out_printf(o, err, "# %s\n", header) != 0)
        return -1;
    if (header && fmt == PK_ORDER_LD_SCRIPT && pk_out_printf(o, err, "/* %s */\n", header) != 0)
        return -1;
    if (fmt == PK_ORDER_LD_SCRIPT &&
        pk_out_printf(o, err, "/* GNU ld: -Wl,-T,<this file> with -ffunction-sections objects */\n"
                              "SECTIONS\n{\n  .text :\n  {\n") != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *sym = names[order[i]];
        if (fmt == PK_ORDER_LLD) {
            if (pk_out_printf(o, err, "%s\n", sym) != 0)
                return -1;
            continue;
        }
        if (fmt == PK_ORDER_LD_SCRIPT && !script_safe(sym))
            continue; /* cannot be written as a literal pattern; the linker keeps its default place */
        char *secs[8];
        int ns = pk_order_section_names(sym, secs, 8, err);
        if (ns < 0)
            return -1;
        int rc = 0;
        if (fmt == PK_ORDER_GOLD) {
            for (int k = 0; k < ns && rc == 0; k++)
                rc = pk_out_printf(o, err, "%s\n", secs[k]);
        } else {
            rc = pk_out_printf(o, err, "    *(");
            for (int k = 0; k < ns && rc == 0; k++)
                rc = pk_out_printf(o, err, k ? " %s" : "%s", secs[k]);
            if (rc == 0)
                rc = pk_out_printf(o, err, ")\n");
        }
        for (int k = 0; k < ns; k++)
            free(secs[k]);
        if (rc != 0)
            return -1;
    }
    if (fmt == PK_ORDER_LD_SCRIPT &&
        pk_out_printf(o, err, "  }\n}\nINSERT BEFORE .fini;\n") != 0)
        return -1;
    return 0;
}

/* report_src.c — the source view: the hottest functions' source lines with
 * their counts, when the binary has DWARF and the files it names are at
 * hand.
 *
 * Where a function is: DW_AT_decl_file and DW_AT_decl_line of its
 * subprogram, read through the symbolizer at an address of its code (its
 * entry for an outlined function; for one that only exists inlined, an
 * address inside an inlined copy found by walking the inline frames of the
 * profile's outlined functions).
 * Which line a location is:
 *   - line-based profiles: the function's start line + the line offset (the
 *     offsets are relative to DW_AT_decl_line, as the generator wrote them);
 *   - probe-based profiles: the line of the probe's address in the frame of
 *     the probe's function (its first copy, in probe-table order).
 * A line's count is the largest count of its locations (discriminators or
 * probes): how often the line's hottest block ran. */
#include "binary/probe_loader.h"
#include "common/md5.h"
#include "report/report_int.h"

#include <stdlib.h>

#define SRC_MAX_SPAN 600       /* lines shown per function, at most */
#define SRC_MAX_LINES 20000    /* lines in the whole view, at most */
#define SRC_SPAN_FUNCS 400     /* outlined functions searched for inlined-only ones */
#define SRC_MAX_BYTES (16u << 20) /* a larger "source file" is not one a person wrote */

struct src_func {
    const rep_func *f;
    const char *name;
    const char *file;          /* symbolizer-owned; NULL: not found */
    const char *comp_dir;      /* its unit's compilation directory (symbolizer-owned) */
    uint32_t start_line;
    uint64_t addr;             /* an address of its code, for inlined-only ones */
    bool have_addr;
    pk_u64map lines;           /* source line → max count + 1 */
    uint32_t lo, hi;           /* lines to show */
};

struct span_ctx {
    struct src_func *sf;
    size_t n;
    size_t missing;
};

/* Notes the first address of each inlined-only function still missing. */
static int span_cb(void *arg, uint64_t begin, uint64_t end, const pk_frames *fr, pk_err *err)
{
    struct span_ctx *c = arg;
    for (size_t k = 0; k < fr->count; k++) {
        if (!fr->frames[k].func)
            continue;
        for (size_t i = 0; i < c->n; i++)
            if (!c->sf[i].have_addr && !strcmp(c->sf[i].name, fr->frames[k].func)) {
                c->sf[i].addr = begin;
                c->sf[i].have_addr = true;
                c->missing--;
            }
    }
    return c->missing ? 0 : 1; /* stop once all are found */
}

/* The frame of `name` at vaddr: its decl file and line. */
static void locate(pk_symbolizer *sym, uint64_t vaddr, struct src_func *s)
{
    pk_frames fr;
    pk_err e;
    if (pk_symbolize(sym, vaddr, &fr, &e))
        return;
    for (size_t k = fr.count; k-- > 0;)
        if (fr.frames[k].func && !strcmp(fr.frames[k].func, s->name) && fr.frames[k].start_file) {
            s->file = fr.frames[k].start_file;
            s->comp_dir = fr.frames[k].comp_dir;
            s->start_line = fr.frames[k].start_line;
            return;
        }
}

static void set_line(struct src_func *s, uint32_t line, uint64_t count)
{
    uint64_t *v = pk_u64map_slot(&s->lines, line);
    if (v && *v < count + 1)
        *v = count + 1;
}

/* Probe-based: probe index → line of its first copy, for the wanted functions. */
static int probe_lines(rep *r, pk_symbolizer *sym, struct src_func *sf, size_t n, pk_err *err)
{
    pk_probe_info pi;
    if (pk_probe_info_load(&pi, pk_binary_elf(r->in->bin), NULL, err))
        return -1;
    pk_u64map by_guid = {0}; /* GUID → index + 1 */
    pk_u64map done = {0};    /* (function index, probe) seen */
    int rc = -1;
    if (pk_u64map_init(&by_guid, 64) || pk_u64map_init(&done, 1024)) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t *v = pk_u64map_slot(&by_guid, pk_md5_guid(sf[i].name, strlen(sf[i].name)));
        if (!v) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        *v = i + 1;
    }
    for (size_t p = 0; p < pi.table.n; p++) {
        const pk_probe *pr = &pi.table.probes[p];
        if (pr->attr & PK_PROBE_ATTR_SENTINEL)
            continue;
        uint64_t *fi = pk_u64map_get(&by_guid, pi.table.nodes[pr->node].guid);
        if (!fi)
            continue;
        struct src_func *s = &sf[*fi - 1];
        uint64_t *count = pk_u64map_get(&s->f->locs, pk_loc(pr->index, 0));
        if (!count)
            continue;
        uint64_t *seen = pk_u64map_slot(&done, ((*fi - 1) << 32) | pr->index);
        if (!seen) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        if (*seen)
            continue;
        *seen = 1;
        pk_frames fr;
        pk_err e;
        if (pk_symbolize(sym, pr->addr, &fr, &e))
            continue;
        for (size_t k = 0; k < fr.count; k++)
            if (fr.frames[k].func && !strcmp(fr.frames[k].func, s->name) && fr.frames[k].line) {
                set_line(s, fr.frames[k].line, *count);
                break;
            }
    }
    rc = 0;
out:
    pk_u64map_free(&by_guid);
    pk_u64map_free(&done);
    pk_probe_info_free(&pi);
    return rc;
}

static int file_cmp(const void *a, const void *b)
{
    const struct src_func *x = a, *y = b;
    int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    if (c)
        return c;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* One file: its blocks of lines (overlapping function spans merged). */
static void json_file(rep *r, struct src_func *sf, size_t n, size_t *budget)
{
    pk_json *j = &r->j;
    pk_mapped_file mf;
    pk_err e;
    /* The DWARF names the file: it is read only as a source file under a
     * compilation directory (of a unit naming it) or a --source-root. */
    const char **roots = calloc(n + r->in->nsource_roots, sizeof *roots);
    size_t nroots = 0;
    for (size_t i = 0; roots && i < r->in->nsource_roots; i++)
        roots[nroots++] = r->in->source_roots[i];
    for (size_t i = 0; roots && i < n; i++)
        if (sf[i].comp_dir && *sf[i].comp_dir)
            roots[nroots++] = sf[i].comp_dir;
    bool found = roots && pk_file_map_confined(&mf, sf[0].file, roots, nroots, SRC_MAX_BYTES, &e) == 0;
    free(roots);
    pk_json_begin_object(j, NULL);
    pk_json_str(j, "path", sf[0].file);
    pk_json_bool(j, "found", found);
    if (!found)
        pk_json_str(j, "why", roots ? e.msg : "out of memory");
    pk_json_begin_array(j, "functions");
    for (size_t i = 0; i < n; i++) {
        pk_json_begin_array(j, NULL);
        pk_json_i64(j, NULL, rep_name(r, sf[i].f->name));
        pk_json_u64(j, NULL, sf[i].start_line);
        pk_json_u64(j, NULL, sf[i].f->self);
        pk_json_end_array(j);
    }
    pk_json_end_array(j);
    pk_json_begin_array(j, "blocks");
    /* line starts, found lazily as the blocks go down the file */
    const uint8_t *p = found ? mf.data : NULL, *end = found ? mf.data + mf.size : NULL;
    uint32_t at = 1; /* line number p is at */
    for (size_t i = 0; i < n && found && *budget;) {
        uint32_t lo = sf[i].lo, hi = sf[i].hi;
        size_t k = i + 1;
        while (k < n && sf[k].lo <= hi + 3) {
            if (sf[k].hi > hi)
                hi = sf[k].hi;
            k++;
        }
        if (hi - lo + 1 > *budget)
            hi = lo + (uint32_t)*budget - 1;
        while (p < end && at < lo) {
            const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
            at++;
        }
        if (p >= end)
            break;
        pk_json_begin_object(j, NULL);
        pk_json_u64(j, "first", lo);
        pk_json_begin_array(j, "text");
        uint32_t last = lo;
        for (; p < end && at <= hi; at++, last++) {
            const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
            const uint8_t *le = nl ? nl : end;
            pk_json_strn(j, NULL, (const char *)p, (size_t)(le - p) - (le > p && le[-1] == '\r'));
            p = nl ? nl + 1 : end;
        }
        pk_json_end_array(j);
        pk_json_begin_array(j, "count");
        for (uint32_t line = lo; line < last; line++) {
            uint64_t best = 0;
            for (size_t m = i; m < k; m++) {
                uint64_t *v = pk_u64map_get(&sf[m].lines, line);
                if (v && *v > best)
                    best = *v;
            }
            pk_json_i64(j, NULL, best ? (int64_t)(best - 1) : -1);
        }
        pk_json_end_array(j);
        pk_json_end_object(j);
        *budget -= last - lo;
        i = k;
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    if (found)
        pk_file_unmap(&mf);
}

static void note_only(rep *r, const char *note)
{
    pk_json_begin_object(&r->j, "sources");
    pk_json_str(&r->j, "note", note);
    pk_json_begin_array(&r->j, "files");
    pk_json_end_array(&r->j);
    pk_json_end_object(&r->j);
}

int rep_json_sources(rep *r, pk_err *err)
{
    if (!r->in->bin) {
        note_only(r, "no binary given (--binary): source lines need its DWARF line tables");
        return 0;
    }
    pk_symbolizer *sym;
    pk_err serr;
    if (pk_binary_symbolizer(r->in->bin, &sym, &serr)) {
        note_only(r, serr.msg);
        return 0;
    }
    const pk_dwarf_func *dfs;
    size_t ndf;
    if (pk_dwarf_funcs(sym, &dfs, &ndf, &serr)) {
        note_only(r, serr.msg);
        return 0;
    }
    size_t nf;
    rep_func **fs = rep_sorted_funcs(r, &nf);
    if (!fs)
        return pk_err_set(err, "out of memory");
    size_t want = r->in->source_functions ? r->in->source_functions : 20;
    struct src_func *sf = calloc(want, sizeof *sf);
    size_t n = 0;
    int rc = -1;
    pk_u64map outlined = {0}; /* name hash → DWARF function index + 1 */
    if (!sf || pk_u64map_init(&outlined, 1024)) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ndf; i++) {
        uint64_t *v = pk_u64map_slot(&outlined, pk_hash_bytes(dfs[i].name, strlen(dfs[i].name)));
        if (!v) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        if (!*v)
            *v = i + 1;
    }
    for (size_t i = 0; i < nf && n < want && fs[i]->self; i++) {
        struct src_func *s = &sf[n++];
        s->f = fs[i];
        s->name = pk_profset_name(r->ps, fs[i]->name);
        if (pk_u64map_init(&s->lines, 64)) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        uint64_t *v = pk_u64map_get(&outlined, pk_hash_bytes(s->name, strlen(s->name)));
        if (v && !strcmp(dfs[*v - 1].name, s->name))
            locate(sym, dfs[*v - 1].entry_pc, s), s->have_addr = true;
    }
    /* functions that exist only inlined: find a copy inside the outlined
     * functions of the profile, hottest first */
    struct span_ctx sc = {sf, n, 0};
    for (size_t i = 0; i < n; i++)
        sc.missing += !sf[i].have_addr;
    for (size_t i = 0, searched = 0; i < nf && sc.missing && searched < SRC_SPAN_FUNCS; i++) {
        if (!fs[i]->contexts)
            continue;
        const char *nm = pk_profset_name(r->ps, fs[i]->name);
        uint64_t *v = pk_u64map_get(&outlined, pk_hash_bytes(nm, strlen(nm)));
        if (!v || strcmp(dfs[*v - 1].name, nm))
            continue;
        searched++;
        const pk_dwarf_func *df = &dfs[*v - 1];
        for (uint32_t k = 0; k < df->nranges && sc.missing; k++)
            if (pk_symbolize_spans(sym, df->ranges[k].begin, df->ranges[k].end, span_cb, &sc, &serr) && sc.missing)
                break; /* a DWARF error: what was found so far stands */
    }
    for (size_t i = 0; i < n; i++)
        if (!sf[i].file && sf[i].have_addr)
            locate(sym, sf[i].addr, &sf[i]);
    /* locations → lines */
    if (r->ps->kind & PK_PROF_PROBE) {
        if (probe_lines(r, sym, sf, n, &serr)) {
            note_only(r, serr.msg);
            rc = 0;
            goto out;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (!sf[i].file)
                continue;
            const pk_u64map *m = &sf[i].f->locs;
            for (size_t k = 0; k < pk_u64map_end(m); k++)
                if (pk_u64map_used(m, k))
                    set_line(&sf[i], sf[i].start_line + pk_loc_line(pk_u64map_key(m, k)), pk_u64map_val(m, k));
        }
    }
    size_t located = 0;
    for (size_t i = 0; i < n; i++) {
        struct src_func *s = &sf[i];
        if (!s->file)
            continue;
        located++;
        s->lo = s->start_line ? s->start_line : 1;
        s->hi = s->lo;
        for (size_t k = 0; k < pk_u64map_end(&s->lines); k++)
            if (pk_u64map_used(&s->lines, k)) {
                uint32_t line = (uint32_t)pk_u64map_key(&s->lines, k);
                if (line > s->hi && line - s->lo < SRC_MAX_SPAN)
                    s->hi = line;
                if (line < s->lo && s->lo - line < 8) /* a location above the declaration line */
                    s->lo = line;
            }
        s->hi++; /* the closing brace, usually */
    }
    qsort(sf, n, sizeof *sf, file_cmp);
    pk_json *j = &r->j;
    pk_json_begin_object(j, "sources");
    if (!located)
        pk_json_str(j, "note", "no DWARF location found for the hottest functions");
    pk_json_begin_array(j, "files");
    size_t budget = SRC_MAX_LINES;
    for (size_t i = 0; i < n;) {
        if (!sf[i].file) {
            i++;
            continue;
        }
        size_t k = i + 1;
        while (k < n && sf[k].file && !strcmp(sf[k].file, sf[i].file))
            k++;
        json_file(r, sf + i, k - i, &budget);
        i = k;
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    rc = 0;
out:
    for (size_t i = 0; sf && i < n; i++)
        pk_u64map_free(&sf[i].lines);
    free(sf);
    free(fs);
    pk_u64map_free(&outlined);
    return rc;
}

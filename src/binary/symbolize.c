/* symbolize.c — pk_symbolizer: open (sections, units, address → unit map),
 * address → inline frames (llvm-symbolizer's getInliningInfoForAddress),
 * DWARF function list, LLVM discriminator decoding. */
#include "binary/dwarf_internal.h"

#include <stdio.h>
#include <stdlib.h>

static int load_sect(pk_symbolizer *s, dw_sect *d, const char *name, pk_err *err)
{
    d->name = name;
    size_t size;
    if (pk_elf_debug_section(s->elf, name, &d->data, &size, err) < 0)
        return -1;
    d->size = size;
    return 0;
}

void pk_symbolizer_close(pk_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncus; i++) {
        pk_symbolizer_close(s->cus[i].dwo);
        dw_cu_free(&s->cus[i]);
    }
    free(s->cus);
    for (size_t i = 0; i < s->ntables; i++)
        dw_abbrevs_free(s->tables[i]);
    free(s->tables);
    pk_u64map_free(&s->table_by_off);
    free(s->aranges_tab);
    pk_vec_free(&s->frames);
    for (size_t i = 0; i < s->arena.len; i++)
        free(PK_VEC_AT(&s->arena, char *, i));
    pk_vec_free(&s->arena);
    free(s->funcs);
    free(s->func_ranges);
    free(s->func_map);
    free(s->want);
    pk_symbolizer_close(s->alt);
    dw_dwp_close(s->dwp);
    pk_elf_close(s->own_elf);
    free(s);
}

int pk_symbolizer_set_dwp(pk_symbolizer *s, pk_elf *dwp, pk_err *err)
{
    dw_dwp_close(s->dwp);
    s->dwp = NULL;
    return dwp ? dw_dwp_open(&s->dwp, dwp, err) : 0;
}

int pk_symbolizer_open(pk_symbolizer **out, pk_elf *elf, pk_err *err)
{
    return pk_symbolizer_open_alt(out, elf, NULL, err);
}

int pk_symbolizer_open_alt(pk_symbolizer **out, pk_elf *elf, pk_elf *alt, pk_err *err)
{
    *out = NULL;
    pk_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
    s->elf = elf;
    s->path = pk_elf_path(elf);
    pk_vec_init(&s->frames, sizeof(pk_frame));
    pk_vec_init(&s->arena, sizeof(char *));
    if (pk_u64map_init(&s->table_by_off, 64) < 0) {
        free(s);
        return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
    }
    /* before the units: their top DIEs may hold strings of the supplement */
    if (alt && pk_symbolizer_open(&s->alt, alt, err) < 0)
        goto fail;
    if (load_sect(s, &s->info, ".debug_info", err) < 0 || load_sect(s, &s->abbrev, ".debug_abbrev", err) < 0 ||
        load_sect(s, &s->str, ".debug_str", err) < 0 || load_sect(s, &s->line_str, ".debug_line_str", err) < 0 ||
        load_sect(s, &s->str_offsets, ".debug_str_offsets", err) < 0 ||
        load_sect(s, &s->addr, ".debug_addr", err) < 0 || load_sect(s, &s->ranges, ".debug_ranges", err) < 0 ||
        load_sect(s, &s->rnglists, ".debug_rnglists", err) < 0 || load_sect(s, &s->line, ".debug_line", err) < 0 ||
        load_sect(s, &s->aranges, ".debug_aranges", err) < 0)
        goto fail;
    if (!s->info.size) {
        pk_err_set(err, "%s: no DWARF debug information (.debug_info is missing)", s->path);
        goto fail;
    }
    if (dw_open_cus(s, err) < 0)
        goto fail;
    /* Split units (DWARF 5, and the GNU DWARF 4 flavour) are read from their
     * .dwo on first use. */
    for (size_t i = 0; i < s->ncus; i++)
        if (dw_cu_top(s, &s->cus[i], err) < 0)
            goto fail;
    if (dw_build_aranges(s, err) < 0)
        goto fail;
    *out = s;
    return 0;
fail:
    pk_symbolizer_close(s);
    return -1;
}

static int open_dwo(pk_symbolizer *s, dw_cu *cu, pk_err *err)
{
    /* the package first, as llvm-symbolizer does */
    dw_sect info, abbrev, str, str_offsets, rnglists;
    int in_dwp = s->dwp ? dw_dwp_unit(s->dwp, cu->dwo_id, &info, &abbrev, &str, &str_offsets, &rnglists, err) : 0;
    if (in_dwp < 0)
        return -1;
    pk_elf *e = NULL;
    if (!in_dwp) {
        char path[4096];
        const char *name = cu->dwo_name;
        if (!name)
            return dw_bad(s, err, &s->info, cu->off, "split DWARF skeleton unit without DW_AT_dwo_name");
        if (name[0] == '/' || !cu->comp_dir)
            snprintf(path, sizeof path, "%s", name);
        else
            snprintf(path, sizeof path, "%s/%s", cu->comp_dir, name);
        if (pk_elf_open(&e, path, err) < 0) {
            if (s->dwp)
                pk_err_prefix(err, "not in the split-DWARF package %s (DWO id 0x%llx), and", dw_dwp_path(s->dwp),
                              (unsigned long long)cu->dwo_id);
            return pk_err_prefix(err, "%s: .debug_info offset %llu: split DWARF unit", s->path,
                                 (unsigned long long)cu->off);
        }
    }
    pk_symbolizer *d = calloc(1, sizeof *d);
    if (!d) {
        pk_elf_close(e);
        return pk_err_set(err, "%s: out of memory", s->path);
    }
    d->elf = e ? e : s->elf;
    d->own_elf = e;
    d->path = e ? pk_elf_path(e) : dw_dwp_path(s->dwp);
    pk_vec_init(&d->frames, sizeof(pk_frame));
    pk_vec_init(&d->arena, sizeof(char *));
    cu->dwo = d;
    if (pk_u64map_init(&d->table_by_off, 16) < 0)
        return pk_err_set(err, "%s: out of memory", s->path);
    if (in_dwp) {
        d->info = info;
        d->abbrev = abbrev;
        d->str = str;
        d->str_offsets = str_offsets;
        d->rnglists = rnglists;
    } else if (load_sect(d, &d->info, ".debug_info.dwo", err) < 0 ||
               load_sect(d, &d->abbrev, ".debug_abbrev.dwo", err) < 0 ||
               load_sect(d, &d->str, ".debug_str.dwo", err) < 0 ||
               load_sect(d, &d->str_offsets, ".debug_str_offsets.dwo", err) < 0 ||
               load_sect(d, &d->rnglists, ".debug_rnglists.dwo", err) < 0) {
        return -1;
    }
    /* addresses, DWARF 4 range lists and line tables stay in the skeleton's file */
    d->addr = s->addr;
    d->ranges = s->ranges;
    d->line = s->line;
    d->line_str = s->line_str;
    if (dw_open_cus(d, err) < 0)
        return -1;
    dw_cu *u = NULL;
    for (size_t i = 0; i < d->ncus && !u; i++) {
        dw_cu *c = &d->cus[i];
        if (c->version >= 5 && c->unit_type != 5)
            continue;
        /* A split unit inherits the skeleton's address base, base address
         * and line table; its string offsets (and DWARF 5 range lists)
         * start after their section headers: one unit per .dwo. DWARF 4
         * (GNU) units have header-less string offsets and range list
         * offsets relative to the skeleton's DW_AT_GNU_ranges_base. */
        c->addr_base = cu->addr_base;
        c->has_addr_base = cu->has_addr_base;
        c->base = cu->base;
        c->has_base = cu->has_base;
        c->str_offsets_base = c->version < 5 ? 0 : c->offset_size == 8 ? 16 : 8;
        c->has_str_offsets_base = d->str_offsets.size > 0;
        c->rnglists_base = c->offset_size == 8 ? 20 : 12;
        c->has_rnglists_base = d->rnglists.size > 0;
        c->ranges_base = c->version < 5 ? cu->gnu_ranges_base : 0;
        if (dw_cu_top(d, c, err) < 0)
            return -1;
        if (c->dwo_id == cu->dwo_id)
            u = c;
    }
    if (!u)
        return pk_err_set(err, "%s: no split unit with DWO id 0x%llx (the skeleton at %s .debug_info offset %llu)",
                          d->path, (unsigned long long)cu->dwo_id, s->path, (unsigned long long)cu->off);
    u->stmt_list = cu->stmt_list;
    u->has_stmt_list = cu->has_stmt_list;
    u->comp_dir = cu->comp_dir;
    cu->dwo_cu = u;
    return 0;
}

int dw_cu_split(pk_symbolizer *s, dw_cu *cu, pk_symbolizer **ds, dw_cu **dcu, pk_err *err)
{
    *ds = s;
    *dcu = cu;
    if (!cu->is_skeleton && cu->unit_type != 4)
        return 0;
    if (!cu->dwo_cu) {
        if (cu->dwo_tried)
            return dw_bad(s, err, &s->info, cu->off, "the .dwo of this split unit could not be read");
        cu->dwo_tried = 1;
        if (open_dwo(s, cu, err) < 0)
            return -1;
    }
    *ds = cu->dwo;
    *dcu = cu->dwo_cu;
    return 0;
}

int pk_symbolizer_prepare(pk_symbolizer *s, pk_err *err)
{
    for (size_t i = 0; i < s->ncus; i++) {
        pk_symbolizer *ds;
        dw_cu *dcu;
        if (dw_cu_split(s, &s->cus[i], &ds, &dcu, err) < 0 || dw_cu_index(ds, dcu, err) < 0 ||
            dw_line_parse(s, &s->cus[i], err) < 0)
            return -1;
        for (size_t k = 0; k < dcu->nsubs; k++)
            if (dw_sub_resolve(ds, dcu, &dcu->subs[k], err) < 0)
                return -1;
    }
    return 0;
}

static int range_cmp(const void *a, const void *b)
{
    const pk_addr_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

int pk_symbolizer_want(pk_symbolizer *s, const pk_addr_range *ranges, size_t n, pk_err *err)
{
    pk_addr_range *w = malloc((n ? n : 1) * sizeof *w);
    if (!w)
        return pk_err_set(err, "%s: out of memory", s->path);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ranges[i].begin < ranges[i].end)
            w[k++] = ranges[i];
    qsort(w, k, sizeof *w, range_cmp);
    size_t m = 0; /* merge overlapping and touching ranges */
    for (size_t i = 0; i < k; i++) {
        if (m && w[i].begin <= w[m - 1].end) {
            if (w[i].end > w[m - 1].end)
                w[m - 1].end = w[i].end;
        } else {
            w[m++] = w[i];
        }
    }
    free(s->want);
    s->want = w;
    s->nwant = m;
    return 0;
}

int pk_symbolizer_index(pk_symbolizer *s, const pk_addr_range *ranges, size_t n, pk_err *err)
{
    if (pk_symbolizer_want(s, ranges, n, err))
        return -1;
    /* a private copy: indexing a unit indexed before for fewer ranges widens
     * (replaces) s->want under the loop */
    size_t nw = s->nwant;
    pk_addr_range *w = pk_xrealloc_array(NULL, nw ? nw : 1, sizeof *w);
    if (!w)
        return pk_err_set(err, "%s: out of memory", s->path);
    memcpy(w, s->want, nw * sizeof *w);
    int rc = 0;
    for (size_t i = 0; i < nw && !rc; i++) {
        uint64_t lo = w[i].begin, hi = w[i].end;
        while (lo < hi) { /* every unit the range crosses */
            size_t k = dw_arange_after(s, lo);
            if (k == s->naranges || s->aranges_tab[k].lo >= hi)
                break;
            if (s->aranges_tab[k].lo > lo)
                lo = s->aranges_tab[k].lo;
            uint64_t end = s->aranges_tab[k].hi < hi ? s->aranges_tab[k].hi : hi;
            dw_cu *cu = dw_cu_containing(s, s->aranges_tab[k].cu_off);
            pk_symbolizer *ds;
            dw_cu *dcu;
            if (cu && (dw_cu_split(s, cu, &ds, &dcu, err) < 0 || dw_cu_index_covering(ds, dcu, lo, end, err) < 0)) {
                rc = -1;
                break;
            }
            lo = end;
        }
    }
    free(w);
    return rc;
}

static pk_frame *push_frame(pk_symbolizer *s, pk_err *err)
{
    pk_frame *f = pk_vec_push(&s->frames);
    if (!f)
        pk_err_set(err, "%s: out of memory", s->path);
    return f;
}

/* Pushes the frames from DIE `leaf` out to its subprogram. With `full`,
 * files too, and the innermost frame gets vaddr's row of the unit's line
 * table when it has one (have_lt); without, only what the DIEs say. */
static int push_chain(pk_symbolizer *s, pk_symbolizer *ds, dw_cu *dcu, dw_cu *cu, int32_t leaf, int full,
                      int have_lt, uint64_t vaddr, pk_err *err)
{
    const dw_sub *prev = NULL;
    for (int32_t i = leaf; i >= 0;) {
        dw_sub *sub = &dcu->subs[i];
        if (dw_sub_resolve(ds, dcu, sub, err) < 0)
            return -1;
        pk_frame *f = push_frame(s, err);
        if (!f)
            return -1;
        memset(f, 0, sizeof *f);
        f->func = sub->name;
        f->start_line = sub->decl_line;
        f->start_file = full ? dw_sub_decl_file(ds, sub) : NULL;
        f->comp_dir = full ? cu->comp_dir : NULL;
        f->start_addr = sub->low_pc;
        f->has_start_addr = sub->has_low_pc;
        if (!prev) {
            ssize_t row = full && have_lt ? dw_line_lookup(&cu->line, vaddr) : -1;
            if (row >= 0) {
                const dw_row *r = &cu->line.rows[row];
                f->file = dw_line_file_path(s, cu, r->file);
                if (f->file) {
                    f->line = r->line;
                    f->column = r->column;
                    f->discriminator = r->discr;
                }
            }
        } else {
            f->file = full && have_lt ? dw_line_file_path(s, cu, prev->call_file) : NULL;
            f->line = prev->call_line;
            f->column = prev->call_column;
            f->discriminator = prev->call_discr;
        }
        if (!sub->inlined)
            break;
        prev = sub;
        i = sub->parent;
    }
    return 0;
}

int pk_symbolize(pk_symbolizer *s, uint64_t vaddr, pk_frames *out, pk_err *err)
{
    s->frames.len = 0;
    out->frames = NULL;
    out->count = 0;
    dw_cu *cu = dw_cu_for_addr(s, vaddr);
    if (!cu)
        return 0;
    pk_symbolizer *ds;   /* where the unit's DIEs live (a .dwo for split DWARF) */
    dw_cu *dcu;
    if (dw_cu_split(s, cu, &ds, &dcu, err) < 0 || dw_cu_index(ds, dcu, err) < 0)
        return -1;
    int have_lt = 0;
    if (cu->has_stmt_list) {
        if (dw_line_parse(s, cu, err) < 0)
            return -1;
        have_lt = 1;
    }
    int32_t leaf = dw_cu_sub_at(dcu, vaddr);
    if (leaf < 0) {
        /* No subroutine DIE: the line table alone still gives file and line. */
        ssize_t row = have_lt ? dw_line_lookup(&cu->line, vaddr) : -1;
        if (row >= 0) {
            const dw_row *r = &cu->line.rows[row];
            const char *file = dw_line_file_path(s, cu, r->file);
            if (file) {
                pk_frame *f = push_frame(s, err);
                if (!f)
                    return -1;
                memset(f, 0, sizeof *f);
                f->file = file;
                f->line = r->line;
                f->column = r->column;
                f->discriminator = r->discr;
            }
        }
        out->frames = s->frames.data;
        out->count = s->frames.len;
        return 0;
    }
    if (push_chain(s, ds, dcu, cu, leaf, 1, have_lt, vaddr, err) < 0)
        return -1;
    out->frames = s->frames.data;
    out->count = s->frames.len;
    return 0;
}

int pk_symbolize_spans(pk_symbolizer *s, uint64_t lo, uint64_t hi, pk_span_fn fn, void *arg, pk_err *err)
{
    while (lo < hi) {
        size_t k = dw_arange_after(s, lo);
        if (k == s->naranges || s->aranges_tab[k].lo >= hi)
            return 0;
        if (s->aranges_tab[k].lo > lo)
            lo = s->aranges_tab[k].lo;
        uint64_t unit_end = s->aranges_tab[k].hi < hi ? s->aranges_tab[k].hi : hi;
        dw_cu *cu = dw_cu_containing(s, s->aranges_tab[k].cu_off);
        if (!cu) {
            lo = unit_end;
            continue;
        }
        pk_symbolizer *ds;
        dw_cu *dcu;
        if (dw_cu_split(s, cu, &ds, &dcu, err) < 0 || dw_cu_index_covering(ds, dcu, lo, unit_end, err) < 0)
            return -1;
        /* the unit's flattened DIE map: the first entry ending after lo */
        size_t a = 0, b = dcu->nmap;
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (dcu->map_hi[mid] <= lo)
                a = mid + 1;
            else
                b = mid;
        }
        for (; a < dcu->nmap && dcu->map_lo[a] < unit_end; a++) {
            uint64_t begin = dcu->map_lo[a] > lo ? dcu->map_lo[a] : lo;
            uint64_t end = dcu->map_hi[a] < unit_end ? dcu->map_hi[a] : unit_end;
            if (begin >= end)
                continue;
            s->frames.len = 0;
            if (push_chain(s, ds, dcu, cu, dcu->map_sub[a], 0, 0, 0, err) < 0)
                return -1;
            pk_frames fr = {s->frames.data, s->frames.len};
            if (fn(arg, begin, end, &fr, err))
                return -1;
        }
        lo = unit_end;
    }
    return 0;
}

/* ---- DWARF functions ---- */

static int cmp_func(const void *a, const void *b)
{
    const pk_dwarf_func *x = a, *y = b;
    if (x->entry_pc != y->entry_pc)
        return x->entry_pc < y->entry_pc ? -1 : 1;
    return x->ranges < y->ranges ? -1 : x->ranges > y->ranges;
}

static int cmp_func_name(const void *a, const void *b)
{
    const pk_dwarf_func *x = *(const pk_dwarf_func *const *)a, *y = *(const pk_dwarf_func *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x < y ? -1 : x > y);
}

/* sym names f, or f with a suffix a profile drops (LLVM's ".llvm.N",
 * ".part.N", ".__uniq.N") */
static bool names_func(const char *sym, const char *f)
{
    size_t n = strlen(f);
    if (strncmp(sym, f, n))
        return false;
    return !sym[n] || !strncmp(sym + n, ".llvm.", 6) || !strncmp(sym + n, ".part.", 6) ||
           !strncmp(sym + n, ".__uniq.", 8);
}

/* Whether some ELF function symbol at f's entry names it. */
static bool entry_named(const pk_elf *elf, const pk_dwarf_func *f)
{
    size_t n;
    const pk_elf_symbol *all = pk_elf_funcs(elf, &n), *p = pk_elf_func_at(elf, f->entry_pc);
    if (!p || p->addr != f->entry_pc)
        return false;
    for (; p < all + n && p->addr == f->entry_pc; p++)
        if (p->name && names_func(p->name, f->name))
            return true;
    return false;
}

/* Links the DIEs that share a name (next_part) and marks which of them are
 * not the function's entry, as llvm-profgen decides: a part is an entry
 * when an ELF symbol of its name starts it. */
static int link_parts(pk_symbolizer *s, pk_dwarf_func *funcs, size_t n, pk_err *err)
{
    pk_dwarf_func **by = malloc((n ? n : 1) * sizeof *by);
    if (!by)
        return pk_err_set(err, "%s: out of memory", s->path);
    for (size_t i = 0; i < n; i++) {
        by[i] = &funcs[i];
        funcs[i].next_part = NULL;
        funcs[i].not_entry = false;
    }
    qsort(by, n, sizeof *by, cmp_func_name);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !strcmp(by[j]->name, by[i]->name))
            j++;
        for (size_t k = i; j - i > 1 && k < j; k++) {
            by[k]->next_part = by[k + 1 < j ? k + 1 : i];
            by[k]->not_entry = !entry_named(s->elf, by[k]);
        }
        i = j;
    }
    free(by);
    return 0;
}

typedef struct fmap { uint64_t lo, hi; uint32_t func; } fmap;

static int cmp_fmap(const void *a, const void *b)
{
    const fmap *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->func < y->func ? -1 : x->func > y->func;
}

int pk_dwarf_funcs(pk_symbolizer *s, const pk_dwarf_func **funcs, size_t *count, pk_err *err)
{
    *funcs = NULL;
    *count = 0;
    if (!s->funcs_built) {
        size_t nr = 0;
        for (size_t i = 0; i < s->ncus; i++) {
            pk_symbolizer *ds;
            dw_cu *dcu;
            if (dw_cu_split(s, &s->cus[i], &ds, &dcu, err) < 0 || dw_cu_index(ds, dcu, err) < 0)
                return -1;
            nr += dcu->nprog;
        }
        s->func_ranges = malloc((nr ? nr : 1) * sizeof *s->func_ranges);
        s->funcs = malloc((nr ? nr : 1) * sizeof *s->funcs);
        s->func_map = malloc((nr ? nr : 1) * sizeof *s->func_map);
        if (!s->func_ranges || !s->funcs || !s->func_map)
            return pk_err_set(err, "%s: out of memory", s->path);
        size_t nf = 0, k = 0;
        for (size_t i = 0; i < s->ncus; i++) {
            pk_symbolizer *ds;
            dw_cu *cu;
            if (dw_cu_split(s, &s->cus[i], &ds, &cu, err) < 0)
                return -1;
            for (size_t j = 0; j < cu->nprog;) {
                int32_t sub = cu->prog[j].sub;
                dw_sub *d = &cu->subs[sub];
                if (dw_sub_resolve(ds, cu, d, err) < 0)
                    return -1;
                pk_dwarf_func *f = &s->funcs[nf];
                f->name = d->name;
                f->start_line = d->decl_line;
                f->ranges = &s->func_ranges[k];
                f->entry_pc = d->has_low_pc ? d->low_pc : cu->prog[j].begin;
                f->nranges = 0;
                for (; j < cu->nprog && cu->prog[j].sub == sub; j++) {
                    s->func_ranges[k].begin = cu->prog[j].begin;
                    s->func_ranges[k].end = cu->prog[j].end;
                    k++;
                    f->nranges++;
                }
                if (f->name)
                    nf++;
                else
                    k -= f->nranges; /* LLVM skips nameless subprograms */
            }
        }
        qsort(s->funcs, nf, sizeof *s->funcs, cmp_func);
        if (link_parts(s, s->funcs, nf, err))
            return -1;
        size_t nm = 0;
        for (size_t i = 0; i < nf; i++)
            for (uint32_t r = 0; r < s->funcs[i].nranges; r++) {
                s->func_map[nm].lo = s->funcs[i].ranges[r].begin;
                s->func_map[nm].hi = s->funcs[i].ranges[r].end;
                s->func_map[nm].func = (uint32_t)i;
                nm++;
            }
        qsort(s->func_map, nm, sizeof *s->func_map, cmp_fmap);
        s->nfuncs = nf;
        s->nfunc_ranges = k;
        s->nfunc_map = nm;
        s->funcs_built = 1;
    }
    *funcs = s->funcs;
    *count = s->nfuncs;
    return 0;
}

/* The number of function ranges starting at or before vaddr. */
static size_t ranges_upto(const pk_symbolizer *s, uint64_t vaddr)
{
    size_t lo = 0, hi = s->nfunc_map;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->func_map[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t pk_dwarf_func_ranges_count(const pk_symbolizer *s) { return s->funcs_built ? s->nfunc_map : 0; }

size_t pk_dwarf_func_range_from(const pk_symbolizer *s, uint64_t vaddr)
{
    size_t n = s->funcs_built ? ranges_upto(s, vaddr) : 0;
    return n ? n - 1 : 0;
}

pk_addr_range pk_dwarf_func_range(const pk_symbolizer *s, size_t i)
{
    return (pk_addr_range){s->func_map[i].lo, s->func_map[i].hi};
}

const pk_dwarf_func *pk_dwarf_func_at(pk_symbolizer *s, uint64_t vaddr)
{
    const pk_dwarf_func *f;
    size_t n;
    pk_err err;
    if (!s->funcs_built && pk_dwarf_funcs(s, &f, &n, &err) < 0)
        return NULL;
    size_t lo = ranges_upto(s, vaddr);
    /* ranges of distinct functions do not overlap in sane DWARF; look back a little anyway */
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++)
        if (vaddr < s->func_map[i].hi && vaddr >= s->func_map[i].lo)
            return &s->funcs[s->func_map[i].func];
    return NULL;
}

/* ---- LLVM discriminator encoding ---- */

/* One prefix-encoded component: bit0 = 1 → value 0, 1 bit; else bit6 = 0 →
 * value bits 1–5, 7 bits; else 12-bit value in bits 1–5 and 7–13, 14 bits. */
static uint32_t discr_component(uint32_t d, uint32_t *rest)
{
    if (d & 1) {
        *rest = d >> 1;
        return 0;
    }
    if (!(d & 0x40)) {
        *rest = d >> 7;
        return (d >> 1) & 0x1f;
    }
    *rest = d >> 14;
    return ((d >> 1) & 0x1f) | ((d >> 2) & 0xfe0);
}

/* A pseudo-probe build (-fpseudo-probe-for-profiling) writes the call
 * instructions' probes into their discriminators: low three bits 0b111,
 * probe index in bits 3–18, or (bit 28 set, LLVM 19+) index in bits 3–15
 * and a DWARF base discriminator in bits 16–18. LLVM's base discriminator
 * of such a value is that DWARF one when present, else the probe index
 * (so two calls on one line stay apart: 3.7 and 3.8). */
static bool discr_is_probe(uint32_t d) { return (d & 7) == 7; }

uint32_t pk_discr_base(uint32_t d)
{
    if (discr_is_probe(d))
        return d & 0x10000000u ? (d >> 16) & 7 : (d >> 3) & 0xffff;
    uint32_t rest;
    return discr_component(d, &rest);
}

uint32_t pk_discr_dup_factor(uint32_t d)
{
    uint32_t rest, rest2;
    discr_component(d, &rest);
    uint32_t f = discr_component(rest, &rest2);
    return f ? f : 1;
}

uint32_t pk_discr_copy_id(uint32_t d)
{
    uint32_t r1, r2, r3;
    discr_component(d, &r1);
    discr_component(r1, &r2);
    return discr_component(r2, &r3);
}

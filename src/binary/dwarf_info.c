/* dwarf_info.c — units of .debug_info and the per-unit subroutine index
 * (LLVM's AddrDieMap rebuilt with the same update rule, then flattened for
 * binary search). The address → unit table is in dwarf_aranges.c. */
#include "binary/dwarf_internal.h"

#include <stddef.h>
#include <stdlib.h>

int dw_open_cus(pk_symbolizer *s, pk_err *err)
{
    pk_vec v;
    pk_vec_init(&v, sizeof(dw_cu));
    uint64_t off = 0;
    while (off < s->info.size) {
        pk_cursor c;
        pk_cursor_init(&c, s->info.data + off, s->info.size - off);
        unsigned offsz;
        uint64_t len = dw_initial_length(&c, &offsz);
        if (offsz == 4 && len >= 0xfffffff0) {
            pk_vec_free(&v);
            return dw_bad(s, err, &s->info, off, "reserved unit length 0x%llx", (unsigned long long)len);
        }
        if (c.bad || len > pk_cursor_left(&c)) {
            pk_vec_free(&v);
            return dw_bad(s, err, &s->info, off, "unit length %llu runs past the end of the section (%zu bytes)",
                          (unsigned long long)len, s->info.size);
        }
        uint64_t end = off + pk_cursor_offset(&c) + len;
        c.end = c.pos + len;
        dw_cu cu;
        memset(&cu, 0, sizeof cu);
        cu.off = off;
        cu.end = end;
        cu.offset_size = offsz;
        cu.version = (uint8_t)pk_cursor_u16(&c);
        int keep = 1;
        if (cu.version < 2 || cu.version > 5) {
            pk_vec_free(&v);
            return dw_bad(s, err, &s->info, off, "unsupported DWARF version %u", cu.version);
        }
        if (cu.version >= 5) {
            cu.unit_type = pk_cursor_u8(&c);
            cu.addr_size = pk_cursor_u8(&c);
            cu.abbrev_off = dw_uN(&c, offsz);
            switch (cu.unit_type) {
            case 1: case 3: break;                                      /* compile, partial */
            case 4: case 5: cu.dwo_id = pk_cursor_u64(&c); break;       /* skeleton, split: dwo_id */
            case 2: case 6: keep = 0; break;                            /* type units */
            default: keep = 0; break;
            }
        } else {
            cu.unit_type = 1;
            cu.abbrev_off = dw_uN(&c, offsz);
            cu.addr_size = pk_cursor_u8(&c);
        }
        if (c.bad) {
            pk_vec_free(&v);
            return dw_bad(s, err, &s->info, off, "truncated unit header");
        }
        if (keep && cu.addr_size != 4 && cu.addr_size != 8) {
            pk_vec_free(&v);
            return dw_bad(s, err, &s->info, off, "unsupported address size %u", cu.addr_size);
        }
        cu.die_off = off + pk_cursor_offset(&c);
        if (keep) {
            dw_cu *slot = pk_vec_push(&v);
            if (!slot) {
                pk_vec_free(&v);
                return pk_err_set(err, "%s: out of memory", s->path);
            }
            *slot = cu;
        }
        off = end;
    }
    s->cus = v.data;
    s->ncus = v.len;
    return 0;
}

/* ---- AddrDieMap: address → subroutine DIE ----
 * LLVM inserts each DIE's ranges in preorder into an ordered map keyed by
 * range start (DWARFUnit::updateAddressDieMap): a range inside an earlier
 * one splits it, and a lookup takes the entry with the greatest start <= the
 * address, if that entry's end is past it. When every range that overlaps
 * an earlier one lies inside it (parents before children: the normal case),
 * the answer is simply the last-inserted range covering the address, which
 * a sweep over the ranges sorted by start gives (covering ranges kept in a
 * max-heap by preorder). Groups of overlapping ranges that break that rule
 * (a later range sticking out of an earlier one, as the [0, size) ranges of
 * functions a linker discarded can) are run through LLVM's procedure
 * itself. The result is flattened into disjoint pieces for binary search. */

typedef struct heap_ent {
    int32_t sub;
    uint64_t hi;
} heap_ent;

static void heap_push(heap_ent *h, size_t *n, heap_ent e)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].sub < e.sub) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static void heap_pop(heap_ent *h, size_t *n)
{
    heap_ent last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].sub > h[c].sub)
            c++;
        if (h[c].sub <= last.sub)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
}

/* Appends [lo, hi) → sub to the flattened map, joined to the previous
 * piece when it continues it. */
static void map_append(dw_cu *cu, uint64_t lo, uint64_t hi, int32_t sub)
{
    size_t k = cu->nmap;
    if (k && cu->map_hi[k - 1] == lo && cu->map_sub[k - 1] == sub) {
        cu->map_hi[k - 1] = hi;
        return;
    }
    cu->map_lo[k] = lo;
    cu->map_hi[k] = hi;
    cu->map_sub[k] = sub;
    cu->nmap++;
}

/* The sweep over n ranges sorted by start (h: room for n). */
static void sweep(dw_cu *cu, const dw_die_range *r, size_t n, heap_ent *h)
{
    size_t nh = 0, i = 0;
    uint64_t pos = n ? r[0].lo : 0;
    while (i < n || nh) {
        while (nh && h[0].hi <= pos)
            heap_pop(h, &nh);
        if (!nh) {
            if (i == n)
                break;
            pos = r[i].lo;
        }
        while (i < n && r[i].lo <= pos) {
            if (r[i].hi > pos)
                heap_push(h, &nh, (heap_ent){r[i].sub, r[i].hi});
            i++;
        }
        while (nh && h[0].hi <= pos)
            heap_pop(h, &nh);
        if (!nh)
            continue;
        uint64_t end = h[0].hi;
        if (i < n && r[i].lo < end)
            end = r[i].lo;
        map_append(cu, pos, end, h[0].sub);
        pos = end;
    }
}

/* Whether n ranges sorted by start (then insertion order) all lie inside
 * every earlier-inserted range they overlap (st: room for n). */
static bool nested_in_order(const dw_die_range *r, size_t n, const dw_die_range **st)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        while (ns && st[ns - 1]->hi <= r[i].lo)
            ns--;
        for (size_t j = 0; j < ns; j++) { /* every open range overlaps r[i] */
            const dw_die_range *e = st[j];
            bool later = r[i].ord > e->ord;
            if (later ? r[i].hi > e->hi : (e->lo != r[i].lo || e->hi > r[i].hi))
                return false;
        }
        st[ns++] = &r[i];
    }
    return true;
}

/* LLVM's updateAddressDieMap over n ranges in insertion order, then its
 * lookup rule flattened into pieces (e: room for 2n + 1 entries). */
typedef struct llvm_ent {
    uint64_t key, end;
    int32_t sub;
} llvm_ent;

static size_t llvm_upper_bound(const llvm_ent *e, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void llvm_set(llvm_ent *e, size_t *n, uint64_t key, uint64_t end, int32_t sub)
{
    size_t i = llvm_upper_bound(e, *n, key);
    if (i > 0 && e[i - 1].key == key) {
        e[i - 1].end = end;
        e[i - 1].sub = sub;
        return;
    }
    memmove(e + i + 1, e + i, (*n - i) * sizeof *e);
    e[i] = (llvm_ent){key, end, sub};
    (*n)++;
}

static void emulate_llvm(dw_cu *cu, const dw_die_range *r, size_t n, llvm_ent *e)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = llvm_upper_bound(e, ne, r[i].lo);
        if (b > 0 && r[i].lo < e[b - 1].end) {
            llvm_ent p = e[b - 1];
            if (r[i].hi < p.end)
                llvm_set(e, &ne, r[i].hi, p.end, p.sub);
            if (r[i].lo > p.key)
                e[llvm_upper_bound(e, ne, p.key) - 1].end = r[i].lo;
        }
        llvm_set(e, &ne, r[i].lo, r[i].hi, r[i].sub);
    }
    for (size_t i = 0; i < ne; i++) {
        uint64_t end = i + 1 < ne && e[i + 1].key < e[i].end ? e[i + 1].key : e[i].end;
        if (e[i].key < end)
            map_append(cu, e[i].key, end, e[i].sub);
    }
}

int dw_build_die_map(dw_cu *cu, dw_die_range *r, size_t n)
{
    cu->nmap = 0;
    /* every range adds at most two keys (sweep: two pieces) */
    size_t cap = 2 * n + 1;
    cu->map_lo = malloc(cap * sizeof *cu->map_lo);
    cu->map_hi = malloc(cap * sizeof *cu->map_hi);
    cu->map_sub = malloc(cap * sizeof *cu->map_sub);
    heap_ent *h = malloc((n ? n : 1) * sizeof *h);
    const dw_die_range **st = malloc((n ? n : 1) * sizeof *st);
    dw_die_range *order = NULL;
    llvm_ent *e = NULL;
    int rc = -1;
    if (!cu->map_lo || !cu->map_hi || !cu->map_sub || !h || !st ||
        pk_sort_by_u64(r, n, sizeof *r, offsetof(dw_die_range, lo)))
        goto done;
    /* groups of overlapping ranges, in address order */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        uint64_t hi = r[i].hi;
        for (; j < n && r[j].lo < hi; j++)
            if (r[j].hi > hi)
                hi = r[j].hi;
        if (nested_in_order(r + i, j - i, st)) {
            sweep(cu, r + i, j - i, h);
        } else {
            if (!order && (!(order = malloc(n * sizeof *order)) || !(e = malloc(cap * sizeof *e))))
                goto done;
            memcpy(order, r + i, (j - i) * sizeof *order);
            if (pk_sort_by_u64(order, j - i, sizeof *order, offsetof(dw_die_range, ord)))
                goto done;
            emulate_llvm(cu, order, j - i, e);
        }
        i = j;
    }
    rc = 0;
done:
    free(h);
    free(st);
    free(order);
    free(e);
    return rc;
}

/* ---- the per-unit DIE walk ---- */

/* Whether any of the ranges meets the symbolizer's wanted ranges. */
static bool wanted(const pk_symbolizer *s, const pk_addr_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = s->nwant; /* first wanted range ending after r's begin */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->want[mid].end <= r[i].begin)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < s->nwant && s->want[lo].begin < r[i].end)
            return true;
    }
    return false;
}

int dw_cu_index(pk_symbolizer *s, dw_cu *cu, pk_err *err)
{
    if (cu->indexed)
        return cu->index_failed ? pk_err_set(err, "%s: unit at .debug_info offset %llu could not be indexed",
                                             s->path, (unsigned long long)cu->off)
                                : 0;
    cu->indexed = 1;
    cu->index_failed = 1;
    if (dw_cu_top(s, cu, err) < 0)
        return -1;
    if (s->want) {
        cu->idx_want = pk_xrealloc_array(NULL, s->nwant ? s->nwant : 1, sizeof *cu->idx_want);
        if (!cu->idx_want)
            return pk_err_set(err, "%s: out of memory", s->path);
        memcpy(cu->idx_want, s->want, s->nwant * sizeof *s->want);
        cu->nidx_want = s->nwant;
    }
    const dw_abbrev_table *tab = cu->abbrevs;
    pk_vec subs, anc, ranges, prog, defs;
    pk_vec_init(&defs, sizeof(uint64_t));
    pk_vec_init(&prog, sizeof(struct dw_prog_range));
    pk_vec_init(&subs, sizeof(dw_sub));
    pk_vec_init(&anc, sizeof(int32_t));
    pk_vec_init(&ranges, sizeof(pk_addr_range));
    pk_vec dranges;
    pk_vec_init(&dranges, sizeof(dw_die_range));
    /* a wanted subprogram nested in an unwanted one: its depth and the
     * skip_below to restore when its children end */
    struct resume { size_t depth, skip_below; };
    pk_vec resume;
    pk_vec_init(&resume, sizeof(struct resume));
    int rc = -1;
    pk_cursor c;
    pk_cursor_init(&c, s->info.data + cu->die_off, (size_t)(cu->end - cu->die_off));
    int32_t *a0 = pk_vec_push(&anc);
    if (!a0)
        goto oom;
    *a0 = -1;
    size_t depth = 0; /* anc[depth] = nearest subroutine above DIEs at this depth */
    size_t skip_below = SIZE_MAX; /* DIEs deeper than this belong to an unwanted subprogram */
    int seen_top = 0;
    while (c.pos < c.end) {
        uint64_t die_off = (uint64_t)(c.pos - s->info.data);
        uint64_t code = dw_uleb(&c);
        if (c.bad)
            break;
        if (code == 0) {
            if (depth == 0)
                continue; /* padding after the unit DIE's children */
            depth--;
            anc.len = depth + 1;
            const struct resume *rs = resume.len ? &PK_VEC_AT(&resume, struct resume, resume.len - 1) : NULL;
            if (rs && rs->depth == depth) {
                skip_below = rs->skip_below;
                resume.len--;
            } else if (depth == skip_below) {
                skip_below = SIZE_MAX;
            }
            if (depth == 0)
                break;
            continue;
        }
        const dw_abbrev *sa = depth > skip_below ? dw_abbrev_find(tab, code) : NULL;
        if (depth > skip_below && !sa) {
            dw_bad(s, err, &s->info, die_off, "unknown abbreviation code %llu", (unsigned long long)code);
            goto done;
        }
        if (sa && sa->tag != DW_TAG_subprogram) {
            /* inside a subprogram nobody asked about: step over the DIE (a
             * nested subprogram, e.g. GCC's outlined OpenMP bodies, has code
             * of its own elsewhere and is decided on its own ranges) */
            if (sa->fixed_size >= 0) {
                if ((size_t)sa->fixed_size > pk_cursor_left(&c)) {
                    dw_bad(s, err, &s->info, die_off, "DIE runs past the end of its unit");
                    goto done;
                }
                c.pos += sa->fixed_size;
            } else {
                for (uint32_t k = 0; k < sa->nattr; k++) {
                    const dw_attr_spec *sp = &tab->specs[sa->first + k];
                    dw_val v;
                    if (sp->size >= 0 && (size_t)sp->size <= pk_cursor_left(&c))
                        c.pos += sp->size;
                    else if (sp->form == DW_FORM_addrx || sp->form == DW_FORM_udata || sp->form == DW_FORM_strx)
                        (void)dw_uleb(&c);
                    else if (dw_skip_form(cu, &c, sp->form) &&
                             dw_read_form(s, cu, &s->info, &c, sp->form, sp->implicit_const, &v, err) < 0)
                        goto done;
                }
            }
            if (sa->children) {
                int32_t *slot = pk_vec_push(&anc);
                if (!slot)
                    goto oom;
                *slot = -1;
                depth++;
            }
            continue;
        }
        if (depth == 0 && seen_top)
            break;
        seen_top = 1;
        const dw_abbrev *a = dw_abbrev_find(tab, code);
        if (!a) {
            dw_bad(s, err, &s->info, die_off, "unknown abbreviation code %llu", (unsigned long long)code);
            goto done;
        }
        int is_sub = a->tag == DW_TAG_subprogram || a->tag == DW_TAG_inlined_subroutine;
        int32_t me = -1;
        if (!is_sub && a->fixed_size >= 0) {
            if ((size_t)a->fixed_size > pk_cursor_left(&c)) {
                dw_bad(s, err, &s->info, die_off, "DIE runs past the end of its unit");
                goto done;
            }
            c.pos += a->fixed_size;
        } else {
            dw_sub rec;
            memset(&rec, 0, sizeof rec);
            dw_val low = {0}, high = {0}, rng = {0};
            bool declaration = false;
            for (uint32_t k = 0; k < a->nattr; k++) {
                const dw_attr_spec *sp = &tab->specs[a->first + k];
                dw_val v;
                if (dw_read_form(s, cu, &s->info, &c, sp->form, sp->implicit_const, &v, err) < 0)
                    goto done;
                if (!is_sub)
                    continue;
                uint64_t u;
                switch (sp->attr) {
                case DW_AT_low_pc: low = v; break;
                case DW_AT_high_pc: high = v; break;
                case DW_AT_ranges: rng = v; break;
                case DW_AT_call_file: if (!dw_val_unsigned(&v, &u)) rec.call_file = (uint32_t)u; break;
                case DW_AT_call_line: if (!dw_val_unsigned(&v, &u)) rec.call_line = (uint32_t)u; break;
                case DW_AT_call_column: if (!dw_val_unsigned(&v, &u)) rec.call_column = (uint32_t)u; break;
                case DW_AT_GNU_discriminator: if (!dw_val_unsigned(&v, &u)) rec.call_discr = (uint32_t)u; break;
                case DW_AT_declaration: declaration = v.u != 0; break;
                case DW_AT_abstract_origin:
                    if (sp->form == DW_FORM_ref_addr || sp->form == DW_FORM_GNU_ref_alt ||
                        sp->form == DW_FORM_ref_sup4 || sp->form == DW_FORM_ref_sup8)
                        cu->cross_origins += a->tag == DW_TAG_inlined_subroutine;
                    break;
                default: break;
                }
            }
            if (is_sub && a->tag == DW_TAG_subprogram && !declaration) {
                uint64_t *d = pk_vec_push(&defs);
                if (!d)
                    goto oom;
                *d = die_off;
            }
            if (is_sub) {
                rec.die = die_off;
                rec.parent = PK_VEC_AT(&anc, int32_t, depth);
                rec.inlined = a->tag == DW_TAG_inlined_subroutine;
                me = (int32_t)subs.len;
                /* ranges: low/high pair, else DW_AT_ranges (LLVM's getAddressRanges) */
                ranges.len = 0;
                uint64_t lo, hi;
                if (low.cls != DV_NONE && dw_val_addr(s, cu, &low, &lo) == 0) {
                    rec.has_low_pc = 1;
                    rec.low_pc = lo;
                }
                if (rec.has_low_pc && high.cls != DV_NONE &&
                    (dw_val_addr(s, cu, &high, &hi) == 0 ||
                     (dw_val_unsigned(&high, &hi) == 0 && ((hi += lo), 1)))) {
                    pk_addr_range *r = pk_vec_push(&ranges);
                    if (!r)
                        goto oom;
                    r->begin = lo;
                    r->end = hi;
                } else if (rng.cls != DV_NONE) {
                    /* Like LLVM, a DIE whose range list is unreadable just has no ranges. */
                    pk_err ignored;
                    if (dw_ranges(s, cu, &rng, &ranges, &ignored) < 0)
                        ranges.len = 0;
                }
                if (s->want && !rec.inlined && rec.parent < 0 && !wanted(s, ranges.data, ranges.len)) {
                    /* not asked about: neither it nor its inline tree (inside
                     * a skipped subprogram, the outer skip goes on) */
                    if (a->children && skip_below == SIZE_MAX)
                        skip_below = depth;
                    me = -1;
                    ranges.len = 0;
                } else {
                    if (a->children && skip_below != SIZE_MAX) {
                        /* wanted, inside a skipped subprogram: its own
                         * children are read, the skip resumes after them */
                        struct resume *rs = pk_vec_push(&resume);
                        if (!rs)
                            goto oom;
                        *rs = (struct resume){depth, skip_below};
                        skip_below = SIZE_MAX;
                    }
                    dw_sub *slot = pk_vec_push(&subs);
                    if (!slot)
                        goto oom;
                    *slot = rec;
                }
                for (size_t k = 0; k < ranges.len; k++) {
                    pk_addr_range *r = &PK_VEC_AT(&ranges, pk_addr_range, k);
                    if (r->begin < r->end) {
                        dw_die_range *d = pk_vec_push(&dranges);
                        if (!d)
                            goto oom;
                        *d = (dw_die_range){r->begin, r->end, dranges.len - 1, me};
                    }
                    if (!rec.inlined && r->begin < r->end) {
                        struct dw_prog_range *pr = pk_vec_push(&prog);
                        if (!pr)
                            goto oom;
                        pr->sub = me;
                        pr->begin = r->begin;
                        pr->end = r->end;
                    }
                }
            }
        }
        if (a->children) {
            int32_t up = PK_VEC_AT(&anc, int32_t, depth);
            int32_t *slot = pk_vec_push(&anc);
            if (!slot)
                goto oom;
            *slot = is_sub ? me : up;
            depth++;
        }
    }
    if (c.bad) {
        dw_bad(s, err, &s->info, (uint64_t)(c.pos - s->info.data), "truncated DIE");
        goto done;
    }
    if (dw_build_die_map(cu, dranges.data, dranges.len))
        goto oom;
    cu->subs = subs.data;
    cu->nsubs = subs.len;
    subs.data = NULL;
    cu->prog = prog.data;
    cu->nprog = prog.len;
    prog.data = NULL;
    cu->defs = defs.data;
    cu->ndefs = defs.len;
    defs.data = NULL;
    rc = 0;
    cu->index_failed = 0;
    goto done;
oom:
    pk_err_set(err, "%s: out of memory indexing unit at .debug_info offset %llu", s->path,
               (unsigned long long)cu->off);
done:
    pk_vec_free(&dranges);
    pk_vec_free(&subs);
    pk_vec_free(&prog);
    pk_vec_free(&defs);
    pk_vec_free(&anc);
    pk_vec_free(&ranges);
    pk_vec_free(&resume);
    if (rc < 0) {
        free(cu->map_lo);
        free(cu->map_hi);
        free(cu->map_sub);
        cu->map_lo = cu->map_hi = NULL;
        cu->map_sub = NULL;
        cu->nmap = 0;
    }
    return rc;
}

int32_t dw_cu_sub_at(const dw_cu *cu, uint64_t addr)
{
    size_t lo = 0, hi = cu->nmap;
    while (lo < hi) { /* upper_bound */
        size_t mid = lo + (hi - lo) / 2;
        if (cu->map_lo[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    lo--;
    if (addr >= cu->map_hi[lo])
        return -1;
    return cu->map_sub[lo];
}

/* Drops the unit's DIE index (not its line table). */
static void drop_index(dw_cu *cu)
{
    free(cu->subs);
    free(cu->prog);
    free(cu->defs);
    free(cu->map_lo);
    free(cu->map_hi);
    free(cu->map_sub);
    free(cu->idx_want);
    cu->subs = NULL;
    cu->prog = NULL;
    cu->defs = NULL;
    cu->ndefs = cu->cross_origins = 0;
    cu->map_lo = cu->map_hi = NULL;
    cu->map_sub = NULL;
    cu->idx_want = NULL;
    cu->nsubs = cu->nprog = cu->nmap = cu->nidx_want = 0;
    cu->indexed = cu->index_failed = 0;
}

void dw_cu_free(dw_cu *cu)
{
    drop_index(cu);
    dw_line_free(&cu->line);
}

/* Whether the sorted disjoint ranges cover all of [lo, hi). */
static bool covers(const pk_addr_range *r, size_t n, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = n; /* the first range ending after lo */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r[mid].end <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (; a < n && r[a].begin <= lo; a++) {
        if (r[a].end >= hi)
            return true;
        lo = r[a].end;
    }
    return false;
}

int dw_cu_index_covering(pk_symbolizer *s, dw_cu *cu, uint64_t lo, uint64_t hi, pk_err *err)
{
    if (dw_cu_index(s, cu, err) < 0)
        return -1;
    if (cu->idx_want && !covers(cu->idx_want, cu->nidx_want, lo, hi)) {
        /* asked about code the filtered index left out: index again for
         * everything wanted so far, this range included */
        size_t n = cu->nidx_want + s->nwant + 1;
        pk_addr_range *all = pk_xrealloc_array(NULL, n, sizeof *all);
        if (!all)
            return pk_err_set(err, "%s: out of memory", s->path);
        memcpy(all, cu->idx_want, cu->nidx_want * sizeof *all);
        if (s->want)
            memcpy(all + cu->nidx_want, s->want, s->nwant * sizeof *all);
        all[n - 1] = (pk_addr_range){lo, hi};
        int rc = pk_symbolizer_want(s, all, n, err);
        free(all);
        if (rc)
            return -1;
        drop_index(cu);
    }
    return dw_cu_index(s, cu, err);
}

/* ---- names, start lines and start files through abstract_origin /
 * specification chains (LLVM's findRecursively: a LIFO worklist) ---- */

typedef struct die_facts {
    dw_val linkage, name, decl_line, decl_file, origin, spec;
    int has_linkage, has_name, has_decl_line, has_decl_file;
} die_facts;

static int read_facts(pk_symbolizer *s, uint64_t off, dw_cu **cu_out, die_facts *f, pk_err *err)
{
    memset(f, 0, sizeof *f);
    dw_cu *cu = dw_cu_containing(s, off);
    if (!cu || off < cu->die_off)
        return dw_bad(s, err, &s->info, off, "DIE reference outside any unit");
    if (dw_cu_top(s, cu, err) < 0)
        return -1;
    *cu_out = cu;
    pk_cursor c;
    pk_cursor_init(&c, s->info.data + off, (size_t)(cu->end - off));
    uint64_t code = dw_uleb(&c);
    if (c.bad || code == 0)
        return dw_bad(s, err, &s->info, off, "DIE reference to a null entry");
    const dw_abbrev *a = dw_abbrev_find(cu->abbrevs, code);
    if (!a)
        return dw_bad(s, err, &s->info, off, "unknown abbreviation code %llu", (unsigned long long)code);
    dw_val mips = {0}, link = {0};
    for (uint32_t k = 0; k < a->nattr; k++) {
        const dw_attr_spec *sp = &cu->abbrevs->specs[a->first + k];
        dw_val v;
        if (dw_read_form(s, cu, &s->info, &c, sp->form, sp->implicit_const, &v, err) < 0)
            return -1;
        switch (sp->attr) {
        case DW_AT_MIPS_linkage_name: if (mips.cls == DV_NONE) mips = v; break;
        case DW_AT_linkage_name: if (link.cls == DV_NONE) link = v; break;
        case DW_AT_name: if (!f->has_name) { f->name = v; f->has_name = 1; } break;
        case DW_AT_decl_line: if (!f->has_decl_line) { f->decl_line = v; f->has_decl_line = 1; } break;
        case DW_AT_decl_file: if (!f->has_decl_file) { f->decl_file = v; f->has_decl_file = 1; } break;
        case DW_AT_abstract_origin: if (f->origin.cls == DV_NONE) f->origin = v; break;
        case DW_AT_specification: if (f->spec.cls == DV_NONE) f->spec = v; break;
        default: break;
        }
    }
    /* find({MIPS_linkage_name, linkage_name}) tries them in that order */
    if (mips.cls != DV_NONE) {
        f->linkage = mips;
        f->has_linkage = 1;
    } else if (link.cls != DV_NONE) {
        f->linkage = link;
        f->has_linkage = 1;
    }
    return 0;
}

int dw_sub_resolve(pk_symbolizer *s, dw_cu *cu, dw_sub *sub, pk_err *err)
{
    if (sub->resolved)
        return 0;
    (void)cu;
    /* DIEs to read: (file, offset); a reference may lead into the dwz
     * supplementary file, whose own references stay inside it */
    struct die_ref { pk_symbolizer *in; uint64_t off; } work[32], seen[32];
    size_t nwork = 0, nseen = 0;
    work[nwork++] = (struct die_ref){s, sub->die};
    seen[nseen++] = work[0];
    const char *linkage = NULL, *name = NULL;
    int got_link = 0, got_name = 0, got_line = 0, got_file = 0;
    while (nwork > 0) {
        struct die_ref at = work[--nwork];
        dw_cu *dcu = NULL;
        die_facts f;
        if (read_facts(at.in, at.off, &dcu, &f, err) < 0)
            return -1;
        if (!got_link && f.has_linkage) {
            got_link = 1;
            linkage = dw_val_string(at.in, dcu, &f.linkage);
        }
        if (!got_name && f.has_name) {
            got_name = 1;
            name = dw_val_string(at.in, dcu, &f.name);
        }
        if (!got_line && f.has_decl_line) {
            got_line = 1;
            uint64_t u;
            sub->decl_line = dw_val_unsigned(&f.decl_line, &u) == 0 ? (uint32_t)u : 0;
        }
        if (!got_file && f.has_decl_file) {
            got_file = 1;
            uint64_t u;
            /* LLVM 19 builds implicit_const values without a unit, so
             * getAsFile fails on them: gcc's DWARF 5 decl_file gives no
             * start file in llvm-symbolizer. Same answer here. */
            if (f.decl_file.form != DW_FORM_implicit_const && dw_val_unsigned(&f.decl_file, &u) == 0) {
                sub->has_decl_file = 1;
                sub->decl_file_index = u;
                sub->decl_cu = dcu;
                sub->decl_sym = at.in;
            }
        }
        const dw_val *refs[2] = {&f.origin, &f.spec};
        for (int k = 0; k < 2; k++) {
            if (refs[k]->cls != DV_REF)
                continue;
            struct die_ref r = {refs[k]->alt ? at.in->alt : at.in, refs[k]->u};
            if (!r.in)
                return dw_bad(at.in, err, &at.in->info, at.off,
                              "DIE reference (form 0x%x) into a dwz supplementary file that was not found",
                              refs[k]->form);
            int dup = 0;
            for (size_t j = 0; j < nseen; j++)
                dup |= seen[j].in == r.in && seen[j].off == r.off;
            if (dup || nseen == 32 || nwork == 32)
                continue;
            seen[nseen++] = r;
            work[nwork++] = r;
        }
    }
    sub->name = linkage ? linkage : name;
    sub->resolved = 1;
    return 0;
}

const char *dw_sub_decl_file(pk_symbolizer *s, dw_sub *sub)
{
    if (!sub->decl_file_done) {
        sub->decl_file_done = 1;
        pk_err ignored;
        pk_symbolizer *in = sub->decl_sym ? sub->decl_sym : s;
        if (sub->has_decl_file && dw_line_parse(in, sub->decl_cu, &ignored) == 0)
            sub->decl_file = dw_line_file_path(in, sub->decl_cu, sub->decl_file_index);
    }
    return sub->decl_file;
}

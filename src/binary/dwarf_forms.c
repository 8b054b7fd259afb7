/* dwarf_forms.c — abbreviation tables, attribute forms (DWARF 2–5 and the
 * GNU extensions), string/address/range-list resolution, unit DIE bases. */
#include "binary/dwarf_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int dw_bad(pk_symbolizer *s, pk_err *err, const dw_sect *sec, uint64_t off, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pk_err_set(err, "%s: %s offset %llu: %s", s->path, sec->name, (unsigned long long)off, msg);
}

char *dw_arena_strdup(pk_symbolizer *s, const char *str, size_t len)
{
    if (len + 1 > s->arena_left) {
        size_t block = len + 1 > 65536 ? len + 1 : 65536;
        char **slot = pk_vec_push(&s->arena);
        if (!slot)
            return NULL;
        *slot = malloc(block);
        if (!*slot) {
            s->arena.len--;
            return NULL;
        }
        s->arena_cur = *slot;
        s->arena_left = block;
    }
    char *p = s->arena_cur;
    memcpy(p, str, len);
    p[len] = 0;
    s->arena_cur += len + 1;
    s->arena_left -= len + 1;
    return p;
}

/* ---- abbreviations ---- */

void dw_abbrevs_free(dw_abbrev_table *t)
{
    if (!t)
        return;
    free(t->abbrevs);
    free(t->specs);
    free(t->direct);
    free(t);
}

static int parse_abbrevs(pk_symbolizer *s, dw_abbrev_table *t, pk_err *err)
{
    pk_cursor c;
    if (t->offset >= s->abbrev.size)
        return dw_bad(s, err, &s->abbrev, t->offset, "abbreviation table offset beyond the section");
    pk_cursor_init(&c, s->abbrev.data + t->offset, s->abbrev.size - t->offset);
    pk_vec ab, sp;
    pk_vec_init(&ab, sizeof(dw_abbrev));
    pk_vec_init(&sp, sizeof(dw_attr_spec));
    uint64_t maxcode = 0;
    for (;;) {
        uint64_t code = dw_uleb(&c);
        if (c.bad || code == 0)
            break;
        dw_abbrev *a = pk_vec_push(&ab);
        if (!a)
            goto oom;
        a->code = code;
        a->tag = (uint16_t)dw_uleb(&c);
        a->children = pk_cursor_u8(&c);
        a->first = (uint32_t)sp.len;
        for (;;) {
            uint64_t at = dw_uleb(&c), form = dw_uleb(&c);
            if (c.bad || (at == 0 && form == 0))
                break;
            dw_attr_spec *x = pk_vec_push(&sp);
            if (!x)
                goto oom;
            x->attr = at > 0xffff ? 0xffff : (uint16_t)at;
            x->form = form > 0xffff ? 0xffff : (uint16_t)form;
            x->size = -2;
            if (form == DW_FORM_implicit_const)
                x->implicit_const = dw_sleb(&c);
        }
        a->nattr = (uint32_t)(sp.len - a->first);
        if (code > maxcode)
            maxcode = code;
    }
    if (c.bad) {
        pk_vec_free(&ab);
        pk_vec_free(&sp);
        return dw_bad(s, err, &s->abbrev, t->offset + pk_cursor_offset(&c), "truncated abbreviation table");
    }
    t->abbrevs = ab.data;
    t->n = ab.len;
    t->specs = sp.data;
    t->nspecs = sp.len;
    if (maxcode < 4 * (uint64_t)t->n + 64) {
        t->ndirect = (size_t)maxcode + 1;
        t->direct = calloc(t->ndirect, sizeof *t->direct);
        if (!t->direct)
            return pk_err_set(err, "%s: out of memory", s->path);
        for (size_t i = 0; i < t->n; i++)
            if (!t->direct[t->abbrevs[i].code])
                t->direct[t->abbrevs[i].code] = (uint32_t)i + 1;
    }
    for (size_t i = 0; i < t->n; i++)
        t->abbrevs[i].fixed_size = -2; /* unknown until a unit fixes sizes */
    return 0;
oom:
    pk_vec_free(&ab);
    pk_vec_free(&sp);
    return pk_err_set(err, "%s: out of memory", s->path);
}

dw_abbrev_table *dw_abbrevs_get(pk_symbolizer *s, uint64_t off, pk_err *err)
{
    uint64_t *slot = pk_u64map_get(&s->table_by_off, off);
    if (slot)
        return s->tables[*slot - 1];
    dw_abbrev_table *t = calloc(1, sizeof *t);
    dw_abbrev_table **nt = pk_xrealloc_array(s->tables, s->ntables + 1, sizeof *s->tables);
    if (!t || !nt) {
        free(t);
        pk_err_set(err, "%s: out of memory", s->path);
        return NULL;
    }
    s->tables = nt;
    t->offset = off;
    if (parse_abbrevs(s, t, err) < 0) {
        dw_abbrevs_free(t);
        return NULL;
    }
    slot = pk_u64map_slot(&s->table_by_off, off);
    if (!slot) {
        dw_abbrevs_free(t);
        pk_err_set(err, "%s: out of memory", s->path);
        return NULL;
    }
    s->tables[s->ntables++] = t;
    *slot = s->ntables;
    return t;
}

const dw_abbrev *dw_abbrev_find(const dw_abbrev_table *t, uint64_t code)
{
    if (code < t->ndirect) {
        uint32_t i = t->direct[code];
        return i ? &t->abbrevs[i - 1] : NULL;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->abbrevs[i].code == code)
            return &t->abbrevs[i];
    return NULL;
}

/* Size of a form when it does not depend on the bytes, else -1. */
static int form_fixed_size(uint16_t form, const dw_cu *cu)
{
    switch (form) {
    case DW_FORM_addr: return cu->addr_size;
    case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        return 1;
    case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2: return 2;
    case DW_FORM_strx3: case DW_FORM_addrx3: return 3;
    case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
        return 4;
    case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: return 8;
    case DW_FORM_data16: return 16;
    case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
        return cu->offset_size;
    case DW_FORM_ref_addr: return cu->version <= 2 ? cu->addr_size : cu->offset_size;
    case DW_FORM_flag_present: case DW_FORM_implicit_const: return 0;
    default: return -1;
    }
}

void dw_abbrev_fix_sizes(dw_abbrev_table *t, const dw_cu *cu)
{
    /* Tables shared by units of different address/offset sizes fall back to
     * per-attribute reading (fixed_size -1). */
    for (size_t i = 0; i < t->n; i++) {
        dw_abbrev *a = &t->abbrevs[i];
        int32_t sz = 0;
        for (uint32_t k = 0; k < a->nattr; k++) {
            dw_attr_spec *sp = &t->specs[a->first + k];
            int f = form_fixed_size(sp->form, cu);
            if (sp->size == -2)
                sp->size = (int8_t)(f > 127 ? -1 : f);
            else if (sp->size != f)
                sp->size = -1;
            if (f < 0 || sz < 0)
                sz = -1;
            else
                sz += f;
        }
        if (a->fixed_size == -2)
            a->fixed_size = sz;
        else if (a->fixed_size != sz)
            a->fixed_size = -1;
    }
}

int dw_skip_form(const dw_cu *cu, pk_cursor *c, uint16_t form)
{
    int f = form_fixed_size(form, cu);
    if (f >= 0) {
        if ((size_t)f > pk_cursor_left(c))
            c->bad = true;
        else
            c->pos += f;
        return 0;
    }
    uint64_t n;
    switch (form) {
    case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
    case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
        (void)dw_uleb(c);
        return 0;
    case DW_FORM_sdata:
        (void)dw_sleb(c);
        return 0;
    case DW_FORM_block1: n = pk_cursor_u8(c); break;
    case DW_FORM_block2: n = pk_cursor_u16(c); break;
    case DW_FORM_block4: n = pk_cursor_u32(c); break;
    case DW_FORM_block: case DW_FORM_exprloc: n = dw_uleb(c); break;
    case DW_FORM_string: {
        const uint8_t *z = c->bad ? NULL : memchr(c->pos, 0, (size_t)(c->end - c->pos));
        if (!z)
            c->bad = true;
        else
            c->pos = z + 1;
        return 0;
    }
    default:
        return -1; /* indirect and the rest: read them */
    }
    if (n > pk_cursor_left(c))
        c->bad = true;
    else
        c->pos += n;
    return 0;
}

static const char *sect_str(const dw_sect *sec, uint64_t off)
{
    if (off >= sec->size)
        return NULL;
    const char *p = (const char *)sec->data + off;
    return memchr(p, 0, sec->size - off) ? p : NULL;
}

int dw_read_form(pk_symbolizer *s, const dw_cu *cu, const dw_sect *sec, pk_cursor *c, uint16_t form,
                 int64_t implicit_const, dw_val *v, pk_err *err)
{
    v->form = form;
    v->str = NULL;
    v->u = 0;
    v->alt = 0;
    for (int depth = 0; depth < 4; depth++) {
        switch (form) {
        case DW_FORM_addr: v->cls = DV_ADDR; v->u = dw_uN(c, cu->addr_size); break;
        case DW_FORM_block1: v->cls = DV_BLOCK; v->u = pk_cursor_u8(c); pk_cursor_bytes(c, v->u); break;
        case DW_FORM_block2: v->cls = DV_BLOCK; v->u = pk_cursor_u16(c); pk_cursor_bytes(c, v->u); break;
        case DW_FORM_block4: v->cls = DV_BLOCK; v->u = pk_cursor_u32(c); pk_cursor_bytes(c, v->u); break;
        case DW_FORM_block: case DW_FORM_exprloc:
            v->cls = DV_BLOCK; v->u = dw_uleb(c);
            if (v->u > pk_cursor_left(c)) c->bad = true; else c->pos += v->u;
            break;
        case DW_FORM_data1: v->cls = DV_CONST; v->u = pk_cursor_u8(c); break;
        case DW_FORM_data2: v->cls = DV_CONST; v->u = pk_cursor_u16(c); break;
        case DW_FORM_data4: v->cls = DV_CONST; v->u = pk_cursor_u32(c); break;
        case DW_FORM_data8: v->cls = DV_CONST; v->u = pk_cursor_u64(c); break;
        case DW_FORM_data16: v->cls = DV_BLOCK; v->u = 16; pk_cursor_bytes(c, 16); break;
        case DW_FORM_udata: v->cls = DV_CONST; v->u = dw_uleb(c); break;
        case DW_FORM_sdata: v->cls = DV_SCONST; v->u = (uint64_t)dw_sleb(c); break;
        case DW_FORM_implicit_const: v->cls = DV_CONST; v->u = (uint64_t)implicit_const; break;
        case DW_FORM_flag: v->cls = DV_FLAG; v->u = pk_cursor_u8(c); break;
        case DW_FORM_flag_present: v->cls = DV_FLAG; v->u = 1; break;
        case DW_FORM_string: {
            const uint8_t *p = c->pos;
            const uint8_t *z = c->bad ? NULL : memchr(p, 0, (size_t)(c->end - p));
            if (!z) { c->bad = true; break; }
            v->cls = DV_STR; v->str = (const char *)p; c->pos = z + 1;
            break;
        }
        case DW_FORM_strp:
            v->cls = DV_STR; v->u = dw_uN(c, cu->offset_size); v->str = sect_str(&s->str, v->u); break;
        case DW_FORM_line_strp:
            v->cls = DV_STR; v->u = dw_uN(c, cu->offset_size); v->str = sect_str(&s->line_str, v->u); break;
        case DW_FORM_strp_sup: case DW_FORM_GNU_strp_alt:
            v->cls = DV_STR; v->u = dw_uN(c, cu->offset_size);
            v->str = s->alt ? sect_str(&s->alt->str, v->u) : NULL;
            break;
        /* offsets into the supplementary file's .debug_info */
        case DW_FORM_GNU_ref_alt: v->cls = DV_REF; v->alt = 1; v->u = dw_uN(c, cu->offset_size); break;
        case DW_FORM_ref_sup4: v->cls = DV_REF; v->alt = 1; v->u = pk_cursor_u32(c); break;
        case DW_FORM_ref_sup8: v->cls = DV_REF; v->alt = 1; v->u = pk_cursor_u64(c); break;
        case DW_FORM_ref_sig8: v->cls = DV_UNSUPPORTED; v->u = pk_cursor_u64(c); break;
        case DW_FORM_ref_addr:
            v->cls = DV_REF; v->u = dw_uN(c, cu->version <= 2 ? cu->addr_size : cu->offset_size); break;
        case DW_FORM_ref1: v->cls = DV_REF; v->u = cu->off + pk_cursor_u8(c); break;
        case DW_FORM_ref2: v->cls = DV_REF; v->u = cu->off + pk_cursor_u16(c); break;
        case DW_FORM_ref4: v->cls = DV_REF; v->u = cu->off + pk_cursor_u32(c); break;
        case DW_FORM_ref8: v->cls = DV_REF; v->u = cu->off + pk_cursor_u64(c); break;
        case DW_FORM_ref_udata: v->cls = DV_REF; v->u = cu->off + dw_uleb(c); break;
        case DW_FORM_sec_offset: v->cls = DV_SECOFF; v->u = dw_uN(c, cu->offset_size); break;
        case DW_FORM_strx: case DW_FORM_GNU_str_index: v->cls = DV_STRX; v->u = dw_uleb(c); break;
        case DW_FORM_strx1: v->cls = DV_STRX; v->u = pk_cursor_u8(c); break;
        case DW_FORM_strx2: v->cls = DV_STRX; v->u = pk_cursor_u16(c); break;
        case DW_FORM_strx3: v->cls = DV_STRX; v->u = dw_uN(c, 3); break;
        case DW_FORM_strx4: v->cls = DV_STRX; v->u = pk_cursor_u32(c); break;
        case DW_FORM_addrx: case DW_FORM_GNU_addr_index: v->cls = DV_ADDRX; v->u = dw_uleb(c); break;
        case DW_FORM_addrx1: v->cls = DV_ADDRX; v->u = pk_cursor_u8(c); break;
        case DW_FORM_addrx2: v->cls = DV_ADDRX; v->u = pk_cursor_u16(c); break;
        case DW_FORM_addrx3: v->cls = DV_ADDRX; v->u = dw_uN(c, 3); break;
        case DW_FORM_addrx4: v->cls = DV_ADDRX; v->u = pk_cursor_u32(c); break;
        case DW_FORM_loclistx: v->cls = DV_LOCLISTX; v->u = dw_uleb(c); break;
        case DW_FORM_rnglistx: v->cls = DV_RNGLISTX; v->u = dw_uleb(c); break;
        case DW_FORM_indirect:
            form = (uint16_t)dw_uleb(c);
            v->form = form;
            if (c->bad)
                break;
            if (form == DW_FORM_implicit_const || form == DW_FORM_indirect)
                return dw_bad(s, err, sec, (uint64_t)(c->pos - sec->data), "DW_FORM_indirect names form 0x%x",
                              form);
            continue;
        default:
            return dw_bad(s, err, sec, (uint64_t)(c->pos - sec->data), "unknown attribute form 0x%x", form);
        }
        break;
    }
    if (c->bad)
        return dw_bad(s, err, sec, (uint64_t)(c->pos - sec->data),
                      "attribute of form 0x%x runs past the end of its unit", form);
    return 0;
}

const char *dw_val_string(pk_symbolizer *s, const dw_cu *cu, const dw_val *v)
{
    if (v->cls == DV_STR)
        return v->str;
    if (v->cls != DV_STRX || !cu->has_str_offsets_base)
        return NULL;
    uint64_t at = cu->str_offsets_base + v->u * cu->offset_size;
    if (v->u > s->str_offsets.size || at + cu->offset_size > s->str_offsets.size || at < cu->str_offsets_base)
        return NULL;
    uint64_t off = cu->offset_size == 8 ? pk_ld64(s->str_offsets.data + at) : pk_ld32(s->str_offsets.data + at);
    return sect_str(&s->str, off);
}

static int pooled_addr(pk_symbolizer *s, const dw_cu *cu, uint64_t idx, uint64_t *addr)
{
    if (!cu->has_addr_base)
        return -1;
    uint64_t at = cu->addr_base + idx * cu->addr_size;
    if (idx > s->addr.size || at < cu->addr_base || at + cu->addr_size > s->addr.size)
        return -1;
    *addr = cu->addr_size == 8 ? pk_ld64(s->addr.data + at) : pk_ld32(s->addr.data + at);
    return 0;
}

int dw_val_addr(pk_symbolizer *s, const dw_cu *cu, const dw_val *v, uint64_t *addr)
{
    if (v->cls == DV_ADDR) {
        *addr = v->u;
        return 0;
    }
    if (v->cls == DV_ADDRX)
        return pooled_addr(s, cu, v->u, addr);
    return -1;
}

int dw_val_unsigned(const dw_val *v, uint64_t *out)
{
    /* LLVM's getAsUnsignedConstant: constants and flags, but not sdata. */
    if ((v->cls == DV_CONST && v->form != DW_FORM_data16) || v->cls == DV_FLAG) {
        *out = v->u;
        return 0;
    }
    return -1;
}

static int push_range(pk_vec *out, uint64_t lo, uint64_t hi)
{
    pk_addr_range *r = pk_vec_push(out);
    if (!r)
        return -1;
    r->begin = lo;
    r->end = hi;
    return 0;
}

static int rnglist(pk_symbolizer *s, const dw_cu *cu, uint64_t off, pk_vec *out, pk_err *err)
{
    if (off >= s->rnglists.size)
        return dw_bad(s, err, &s->rnglists, off, "range list offset beyond the section");
    pk_cursor c;
    pk_cursor_init(&c, s->rnglists.data + off, s->rnglists.size - off);
    uint64_t tomb = cu->addr_size == 4 ? 0xffffffffULL : UINT64_MAX;
    uint64_t base = cu->base;
    int has_base = cu->has_base;
    for (;;) {
        uint8_t kind = pk_cursor_u8(&c);
        uint64_t a = 0, b = 0, lo, hi;
        if (c.bad)
            break;
        switch (kind) {
        case 0: /* end_of_list */
            return 0;
        case 1: /* base_addressx */
            a = dw_uleb(&c);
            if (pooled_addr(s, cu, a, &base) < 0)
                base = a;
            has_base = 1;
            continue;
        case 5: /* base_address */
            base = dw_uN(&c, cu->addr_size);
            has_base = 1;
            continue;
        case 2: /* startx_endx */
            a = dw_uleb(&c); b = dw_uleb(&c);
            if (pooled_addr(s, cu, a, &lo) < 0) lo = 0;
            if (pooled_addr(s, cu, b, &hi) < 0) hi = 0;
            break;
        case 3: /* startx_length */
            a = dw_uleb(&c); b = dw_uleb(&c);
            if (pooled_addr(s, cu, a, &lo) < 0) lo = 0;
            hi = lo + b;
            break;
        case 4: /* offset_pair */
            a = dw_uleb(&c); b = dw_uleb(&c);
            lo = a; hi = b;
            if (has_base) {
                if (base == tomb)
                    continue;
                lo += base; hi += base;
            }
            break;
        case 6: /* start_end */
            lo = dw_uN(&c, cu->addr_size); hi = dw_uN(&c, cu->addr_size);
            break;
        case 7: /* start_length */
            lo = dw_uN(&c, cu->addr_size); hi = lo + dw_uleb(&c);
            break;
        default:
            return dw_bad(s, err, &s->rnglists, off + pk_cursor_offset(&c) - 1, "unknown range list entry kind %u",
                          kind);
        }
        if (c.bad)
            break;
        if (lo == tomb)
            continue;
        if (push_range(out, lo, hi) < 0)
            return pk_err_set(err, "%s: out of memory", s->path);
    }
    return dw_bad(s, err, &s->rnglists, off + pk_cursor_offset(&c), "truncated range list");
}

static int debug_ranges(pk_symbolizer *s, const dw_cu *cu, uint64_t off, pk_vec *out, pk_err *err)
{
    off += cu->ranges_base;
    if (off >= s->ranges.size)
        return dw_bad(s, err, &s->ranges, off, "range list offset beyond the section");
    pk_cursor c;
    pk_cursor_init(&c, s->ranges.data + off, s->ranges.size - off);
    uint64_t maxa = cu->addr_size == 4 ? 0xffffffffULL : UINT64_MAX;
    uint64_t tomb = maxa - 1;
    uint64_t base = cu->base;
    int has_base = cu->has_base;
    for (;;) {
        uint64_t lo = dw_uN(&c, cu->addr_size), hi = dw_uN(&c, cu->addr_size);
        if (c.bad)
            return dw_bad(s, err, &s->ranges, off + pk_cursor_offset(&c), "truncated range list");
        if (lo == 0 && hi == 0)
            return 0;
        if (lo == maxa) {
            base = hi;
            has_base = 1;
            continue;
        }
        if (lo == tomb)
            continue;
        if (has_base) {
            if (base == tomb)
                continue;
            lo += base;
            hi += base;
        }
        if (push_range(out, lo, hi) < 0)
            return pk_err_set(err, "%s: out of memory", s->path);
    }
}

int dw_ranges(pk_symbolizer *s, const dw_cu *cu, const dw_val *rv, pk_vec *out, pk_err *err)
{
    if (rv->cls == DV_RNGLISTX) {
        if (!cu->has_rnglists_base)
            return dw_bad(s, err, &s->info, cu->off, "DW_FORM_rnglistx without DW_AT_rnglists_base");
        uint64_t at = cu->rnglists_base + rv->u * cu->offset_size;
        if (rv->u > s->rnglists.size || at + cu->offset_size > s->rnglists.size)
            return dw_bad(s, err, &s->rnglists, cu->rnglists_base, "range list index %llu out of range",
                          (unsigned long long)rv->u);
        uint64_t rel = cu->offset_size == 8 ? pk_ld64(s->rnglists.data + at) : pk_ld32(s->rnglists.data + at);
        return rnglist(s, cu, cu->rnglists_base + rel, out, err);
    }
    if (rv->cls != DV_SECOFF && rv->cls != DV_CONST)
        return 0;
    if (cu->version >= 5)
        return rnglist(s, cu, rv->u, out, err);
    return debug_ranges(s, cu, rv->u, out, err);
}

dw_cu *dw_cu_containing(pk_symbolizer *s, uint64_t off)
{
    size_t lo = 0, hi = s->ncus;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->cus[mid].end <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ncus && s->cus[lo].off <= off ? &s->cus[lo] : NULL;
}

int dw_cu_top(pk_symbolizer *s, dw_cu *cu, pk_err *err)
{
    if (cu->top_parsed)
        return cu->top_failed ? pk_err_set(err, "%s: unit at .debug_info offset %llu is unreadable", s->path,
                                           (unsigned long long)cu->off)
                              : 0;
    cu->top_parsed = 1;
    cu->top_failed = 1;
    cu->abbrevs = dw_abbrevs_get(s, cu->abbrev_off, err);
    if (!cu->abbrevs) {
        /* the table's error starts with the file and its offset (as every
         * error does); which unit uses the table comes after */
        if (err) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, " (abbreviations of the unit at .debug_info offset %llu)",
                     (unsigned long long)cu->off);
        }
        return -1;
    }
    dw_abbrev_fix_sizes(cu->abbrevs, cu);
    pk_cursor c;
    pk_cursor_init(&c, s->info.data + cu->die_off, (size_t)(cu->end - cu->die_off));
    uint64_t code = dw_uleb(&c);
    const dw_abbrev *a = c.bad ? NULL : dw_abbrev_find(cu->abbrevs, code);
    if (!a)
        return dw_bad(s, err, &s->info, cu->die_off, "unit DIE has unknown abbreviation code %llu",
                      (unsigned long long)code);
    cu->tag = a->tag;
    dw_val low = {0}, high = {0}, entry = {0}, dwo = {0};
    for (uint32_t k = 0; k < a->nattr; k++) {
        const dw_attr_spec *sp = &cu->abbrevs->specs[a->first + k];
        dw_val v;
        if (dw_read_form(s, cu, &s->info, &c, sp->form, sp->implicit_const, &v, err) < 0)
            return -1;
        switch (sp->attr) {
        case DW_AT_low_pc: low = v; break;
        case DW_AT_high_pc: high = v; break;
        case DW_AT_entry_pc: entry = v; break;
        case DW_AT_ranges: cu->ranges = v; break;
        case DW_AT_stmt_list: cu->stmt_list = v.u; cu->has_stmt_list = v.cls == DV_SECOFF || v.cls == DV_CONST; break;
        case DW_AT_comp_dir: cu->comp_dir_val = v; break;
        case DW_AT_dwo_name: case DW_AT_GNU_dwo_name: dwo = v; cu->is_skeleton = 1; break;
        case DW_AT_GNU_dwo_id: if (!cu->dwo_id) cu->dwo_id = v.u; break;
        case DW_AT_GNU_ranges_base: cu->gnu_ranges_base = v.u; break;
        case DW_AT_str_offsets_base: cu->str_offsets_base = v.u; cu->has_str_offsets_base = 1; break;
        case DW_AT_addr_base: case DW_AT_GNU_addr_base: cu->addr_base = v.u; cu->has_addr_base = 1; break;
        case DW_AT_rnglists_base: cu->rnglists_base = v.u; cu->has_rnglists_base = 1; break;
        default: break;
        }
    }
    cu->comp_dir = dw_val_string(s, cu, &cu->comp_dir_val);
    if (cu->is_skeleton)
        cu->dwo_name = dw_val_string(s, cu, &dwo);
    /* LLVM's unit base address: DW_AT_low_pc, else DW_AT_entry_pc. */
    if (low.cls != DV_NONE)
        cu->has_base = dw_val_addr(s, cu, &low, &cu->base) == 0;
    else if (entry.cls != DV_NONE)
        cu->has_base = dw_val_addr(s, cu, &entry, &cu->base) == 0;
    if (low.cls != DV_NONE && cu->has_base && high.cls != DV_NONE) {
        uint64_t h;
        if (dw_val_addr(s, cu, &high, &h) == 0) {
            cu->low_pc = cu->base;
            cu->high_pc = h;
            cu->has_low_high = 1;
        } else if (dw_val_unsigned(&high, &h) == 0) {
            cu->low_pc = cu->base;
            cu->high_pc = cu->base + h;
            cu->has_low_high = 1;
        }
    }
    cu->top_failed = 0;
    return 0;
}

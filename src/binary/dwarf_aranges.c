/* dwarf_aranges.c — the address → unit table (LLVM's DWARFDebugAranges:
 * .debug_aranges sets plus the unit DIE ranges of every other unit). */
#include "binary/dwarf_internal.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct endpoint {
    uint64_t addr;
    uint64_t cu;
    int start;
} endpoint;

static int cmp_endpoint(const void *a, const void *b)
{
    const endpoint *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int push_endpoints(pk_vec *ep, uint64_t cu, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return 0;
    endpoint *a = pk_vec_push(ep), *b = a ? pk_vec_push(ep) : NULL;
    if (!b)
        return -1;
    a = &PK_VEC_AT(ep, endpoint, ep->len - 2);
    a->addr = lo; a->cu = cu; a->start = 1;
    b->addr = hi; b->cu = cu; b->start = 0;
    return 0;
}

static int parse_aranges(pk_symbolizer *s, pk_vec *ep, pk_u64map *parsed, pk_err *err)
{
    uint64_t off = 0;
    while (off < s->aranges.size) {
        pk_cursor c;
        pk_cursor_init(&c, s->aranges.data + off, s->aranges.size - off);
        unsigned offsz;
        uint64_t len = dw_initial_length(&c, &offsz);
        if (c.bad || len > pk_cursor_left(&c))
            return dw_bad(s, err, &s->aranges, off, "address range set length runs past the section");
        uint64_t hdr = pk_cursor_offset(&c);
        c.end = c.pos + len;
        uint64_t next = off + hdr + len;
        pk_cursor_u16(&c); /* version */
        uint64_t cu_off = dw_uN(&c, offsz);
        uint8_t asz = pk_cursor_u8(&c);
        pk_cursor_u8(&c); /* segment selector size */
        if (c.bad || (asz != 4 && asz != 8))
            return dw_bad(s, err, &s->aranges, off, "bad address range set header");
        /* tuples start at a multiple of twice the address size */
        size_t at = pk_cursor_offset(&c), align = 2u * asz;
        size_t pad = (align - at % align) % align;
        pk_cursor_bytes(&c, pad);
        for (;;) {
            uint64_t a = dw_uN(&c, asz), l = dw_uN(&c, asz);
            if (c.bad)
                return dw_bad(s, err, &s->aranges, off + pk_cursor_offset(&c), "truncated address range set");
            if (a == 0 && l == 0)
                break;
            if (push_endpoints(ep, cu_off, a, a + l) < 0)
                return pk_err_set(err, "%s: out of memory", s->path);
        }
        uint64_t *slot = pk_u64map_slot(parsed, cu_off);
        if (!slot)
            return pk_err_set(err, "%s: out of memory", s->path);
        *slot = 1;
        off = next;
    }
    return 0;
}

int dw_build_aranges(pk_symbolizer *s, pk_err *err)
{
    pk_vec ep, out, ranges;
    pk_vec_init(&ep, sizeof(endpoint));
    pk_vec_init(&out, sizeof(dw_arange));
    pk_vec_init(&ranges, sizeof(pk_addr_range));
    pk_u64map parsed;
    if (pk_u64map_init(&parsed, 64) < 0)
        return pk_err_set(err, "%s: out of memory", s->path);
    int rc = -1;
    if (s->aranges.size && parse_aranges(s, &ep, &parsed, err) < 0)
        goto done;
    for (size_t i = 0; i < s->ncus; i++) {
        dw_cu *cu = &s->cus[i];
        if (pk_u64map_get(&parsed, cu->off))
            continue;
        if (dw_cu_top(s, cu, err) < 0)
            goto done;
        if (cu->has_low_high) {
            if (push_endpoints(&ep, cu->off, cu->low_pc, cu->high_pc) < 0)
                goto oom;
        } else if (cu->ranges.cls != DV_NONE) {
            ranges.len = 0;
            if (dw_ranges(s, cu, &cu->ranges, &ranges, err) < 0)
                goto done;
            for (size_t k = 0; k < ranges.len; k++) {
                pk_addr_range *r = &PK_VEC_AT(&ranges, pk_addr_range, k);
                if (push_endpoints(&ep, cu->off, r->begin, r->end) < 0)
                    goto oom;
            }
        }
    }
    if (ep.len)
        qsort(ep.data, ep.len, sizeof(endpoint), cmp_endpoint);
    /* LLVM's construct(): walk endpoints keeping the multiset of open units;
     * a stretch goes to the lowest open unit offset, or extends the previous
     * stretch when that one ends here and its unit is still open. */
    uint64_t open_cu[64];
    uint32_t open_n[64];
    size_t nopen = 0;
    uint64_t prev = UINT64_MAX;
    for (size_t i = 0; i < ep.len; i++) {
        endpoint *e = &PK_VEC_AT(&ep, endpoint, i);
        if (prev < e->addr && nopen > 0) {
            dw_arange *last = out.len ? &PK_VEC_AT(&out, dw_arange, out.len - 1) : NULL;
            int last_open = 0;
            for (size_t k = 0; last && k < nopen; k++)
                last_open |= open_cu[k] == last->cu_off;
            if (last && last->hi == prev && last_open) {
                last->hi = e->addr;
            } else {
                uint64_t minc = open_cu[0];
                for (size_t k = 1; k < nopen; k++)
                    if (open_cu[k] < minc)
                        minc = open_cu[k];
                dw_arange *r = pk_vec_push(&out);
                if (!r)
                    goto oom;
                r->lo = prev;
                r->hi = e->addr;
                r->cu_off = minc;
            }
        }
        size_t k = 0;
        while (k < nopen && open_cu[k] != e->cu)
            k++;
        if (e->start) {
            if (k < nopen) {
                open_n[k]++;
            } else if (nopen < 64) {
                open_cu[nopen] = e->cu;
                open_n[nopen++] = 1;
            }
        } else if (k < nopen && --open_n[k] == 0) {
            open_cu[k] = open_cu[nopen - 1];
            open_n[k] = open_n[nopen - 1];
            nopen--;
        }
        prev = e->addr;
    }
    s->aranges_tab = out.data;
    s->naranges = out.len;
    out.data = NULL;
    rc = 0;
    goto done;
oom:
    pk_err_set(err, "%s: out of memory", s->path);
done:
    pk_vec_free(&ep);
    pk_vec_free(&out);
    pk_vec_free(&ranges);
    pk_u64map_free(&parsed);
    return rc;
}

size_t dw_arange_after(const pk_symbolizer *s, uint64_t addr)
{
    size_t lo = 0, hi = s->naranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->aranges_tab[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

dw_cu *dw_cu_for_addr(pk_symbolizer *s, uint64_t addr)
{
    size_t k = dw_arange_after(s, addr);
    if (k == s->naranges || addr < s->aranges_tab[k].lo)
        return NULL;
    return dw_cu_containing(s, s->aranges_tab[k].cu_off);
}


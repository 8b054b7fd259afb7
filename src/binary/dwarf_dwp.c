/* dwarf_dwp.c — split-DWARF packages (.dwp, made by llvm-dwp or dwp from the
 * .dwo files of a program): the unit index .debug_cu_index (DWARF 5, and the
 * GNU version 2 of DWARF 4) maps a skeleton's DWO id to the unit's
 * contributions to each section; a unit read through those slices looks
 * exactly like the unit of its own .dwo file. */
#include "binary/dwarf_internal.h"

#include <stdlib.h>

/* Section ids of the index's columns. */
enum { SECT_INFO = 1, SECT_ABBREV = 3, SECT_STR_OFFSETS = 6, SECT_V5_RNGLISTS = 8 };

struct dw_dwp {
    pk_elf *elf;
    const char *path;
    dw_sect info, abbrev, str, str_offsets, rnglists;
    uint32_t version, ncols, nunits, nslots;
    const uint8_t *sigs, *rows, *col_ids, *offs, *sizes;
};

static int bad_index(const dw_dwp *p, pk_err *err, uint64_t off, const char *what)
{
    return pk_err_set(err, "%s: .debug_cu_index offset %llu: %s", p->path, (unsigned long long)off, what);
}

static int load(dw_dwp *p, dw_sect *d, const char *name, pk_err *err)
{
    size_t size;
    d->name = name;
    if (pk_elf_debug_section(p->elf, name, &d->data, &size, err) < 0)
        return -1;
    d->size = size;
    return 0;
}

int dw_dwp_open(dw_dwp **out, pk_elf *elf, pk_err *err)
{
    *out = NULL;
    dw_dwp *p = calloc(1, sizeof *p);
    if (!p)
        return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
    p->elf = elf;
    p->path = pk_elf_path(elf);
    dw_sect index;
    if (load(p, &p->info, ".debug_info.dwo", err) < 0 || load(p, &p->abbrev, ".debug_abbrev.dwo", err) < 0 ||
        load(p, &p->str, ".debug_str.dwo", err) < 0 || load(p, &p->str_offsets, ".debug_str_offsets.dwo", err) < 0 ||
        load(p, &p->rnglists, ".debug_rnglists.dwo", err) < 0 || load(p, &index, ".debug_cu_index", err) < 0)
        goto fail;
    if (!index.size) {
        if (pk_elf_section_by_name(elf, ".debug_cu_index"))
            bad_index(p, err, 0, "the section is empty: not a split-DWARF package");
        else
            pk_err_set(err, "%s: not a split-DWARF package (no .debug_cu_index)", p->path);
        goto fail;
    }
    pk_cursor c;
    pk_cursor_init(&c, index.data, index.size);
    p->version = pk_cursor_u32(&c);
    if (p->version != 2)
        p->version &= 0xffff; /* DWARF 5: u16 version, u16 padding */
    p->ncols = pk_cursor_u32(&c);
    p->nunits = pk_cursor_u32(&c);
    p->nslots = pk_cursor_u32(&c);
    if (c.bad || (p->version != 2 && p->version != 5)) {
        bad_index(p, err, 0, "unsupported index version (2 and 5 are known)");
        goto fail;
    }
    if (p->nslots & (p->nslots - 1) || p->nunits > p->nslots || p->ncols == 0 || p->ncols > 16) {
        bad_index(p, err, 4, "implausible column, unit or slot count");
        goto fail;
    }
    uint64_t need = 16 + (uint64_t)p->nslots * 12 + (uint64_t)p->ncols * 4 + 2ull * p->nunits * p->ncols * 4;
    if (need > index.size) {
        bad_index(p, err, 16, "the index is truncated");
        goto fail;
    }
    p->sigs = index.data + 16;
    p->rows = p->sigs + (size_t)p->nslots * 8;
    p->col_ids = p->rows + (size_t)p->nslots * 4;
    p->offs = p->col_ids + (size_t)p->ncols * 4;
    p->sizes = p->offs + (size_t)p->nunits * p->ncols * 4;
    *out = p;
    return 0;
fail:
    free(p);
    return -1;
}

void dw_dwp_close(dw_dwp *p) { free(p); }
const char *dw_dwp_path(const dw_dwp *p) { return p->path; }

/* The unit's slice of `whole` in column `id`; an absent column gives an
 * empty slice. -1 when the slice lies outside the section. */
static int slice(const dw_dwp *p, uint32_t row, uint32_t id, const dw_sect *whole, dw_sect *out)
{
    *out = (dw_sect){NULL, 0, whole->name};
    for (uint32_t k = 0; k < p->ncols; k++) {
        if (pk_ld32(p->col_ids + k * 4) != id)
            continue;
        uint64_t off = pk_ld32(p->offs + ((size_t)row * p->ncols + k) * 4);
        uint64_t len = pk_ld32(p->sizes + ((size_t)row * p->ncols + k) * 4);
        if (off > whole->size || len > whole->size - off)
            return -1;
        out->data = whole->data + off;
        out->size = len;
    }
    return 0;
}

int dw_dwp_unit(const dw_dwp *p, uint64_t dwo_id, dw_sect *info, dw_sect *abbrev, dw_sect *str,
                dw_sect *str_offsets, dw_sect *rnglists, pk_err *err)
{
    if (!p->nslots)
        return 0;
    uint64_t mask = p->nslots - 1, h = dwo_id & mask, step = ((dwo_id >> 32) & mask) | 1;
    uint32_t row = 0;
    for (uint32_t probe = 0; probe < p->nslots; probe++, h = (h + step) & mask) {
        uint32_t r = pk_ld32(p->rows + h * 4);
        if (r == 0)
            return 0; /* an empty slot ends the search */
        if (pk_ld64(p->sigs + h * 8) == dwo_id) {
            row = r;
            break;
        }
    }
    if (row == 0)
        return 0;
    if (row > p->nunits)
        return bad_index(p, err, 16 + p->nslots * 8 + h * 4, "row index out of range");
    row--;
    uint32_t rng_id = p->version == 5 ? SECT_V5_RNGLISTS : 0;
    if (slice(p, row, SECT_INFO, &p->info, info) < 0 || slice(p, row, SECT_ABBREV, &p->abbrev, abbrev) < 0 ||
        slice(p, row, SECT_STR_OFFSETS, &p->str_offsets, str_offsets) < 0 ||
        (rng_id && slice(p, row, rng_id, &p->rnglists, rnglists) < 0))
        return bad_index(p, err, 0, "a unit's contribution lies outside its section");
    if (!rng_id)
        *rnglists = (dw_sect){NULL, 0, p->rnglists.name};
    *str = p->str;
    return 1;
}

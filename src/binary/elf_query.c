/* elf_query.c — lookups over an opened pk_elf: symbols by address and name,
 * segments and base addresses, build-id, debug links, separate debug files. */
#include "binary/binary.h"
#include "binary/elf_internal.h"

#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

int pk_elf_debug_section(pk_elf *e, const char *name, const uint8_t **data, size_t *size, pk_err *err)
{
    *data = NULL;
    *size = 0;
    const pk_elf_section *s = pk_elf_section_by_name(e, name);
    if (!s && !strncmp(name, ".debug_", 7)) {
        char z[128];
        snprintf(z, sizeof z, ".zdebug_%s", name + 7);
        s = pk_elf_section_by_name(e, z);
    }
    if (!s)
        return 0;
    return pk_elf_section_data(e, s, data, size, err);
}

bool pk_elf_has_dwarf(const pk_elf *e)
{
    const pk_elf_section *s = pk_elf_section_by_name(e, ".debug_info");
    if (!s)
        s = pk_elf_section_by_name(e, ".zdebug_info");
    return s && s->type != SHT_NOBITS && s->size > 0;
}

const pk_elf_symbol *pk_elf_funcs(const pk_elf *e, size_t *count)
{
    *count = e->nfuncs;
    return e->funcs;
}

const pk_elf_symbol *pk_elf_func_at(const pk_elf *e, uint64_t vaddr)
{
    size_t lo, hi;
    pk_addr_buckets_range(&e->func_buckets, vaddr, e->nfuncs, &lo, &hi);
    while (lo < hi) { /* first symbol with addr > vaddr */
        size_t mid = lo + (hi - lo) / 2;
        if (e->funcs[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Walk back over candidates: an earlier, larger symbol may still contain
     * vaddr when a smaller one sits in between (rare, e.g. nested labels). */
    for (size_t i = lo; i-- > 0;) {
        const pk_elf_symbol *f = &e->funcs[i];
        while (i > 0 && e->funcs[i - 1].addr == f->addr)
            f = &e->funcs[--i];
        /* f is now the primary of its address group; check the group. */
        for (size_t j = i; j < e->nfuncs && e->funcs[j].addr == f->addr; j++) {
            const pk_elf_symbol *g = &e->funcs[j];
            if (vaddr == g->addr || vaddr - g->addr < g->size)
                return f;
        }
        if (lo - i > 64)
            break;
    }
    return NULL;
}

const pk_elf_symbol *pk_elf_func_by_name(const pk_elf *e, const char *name)
{
    if (!e->name_hash_cap)
        return NULL;
    size_t cap = e->name_hash_cap;
    size_t j = pk_hash_bytes(name, strlen(name)) & (cap - 1);
    const pk_elf_symbol *best = NULL;
    while (e->name_hash[j]) {
        const pk_elf_symbol *f = &e->funcs[e->name_hash[j] - 1];
        if (!strcmp(f->name, name) && (!best || f < best))
            best = f;
        j = (j + 1) & (cap - 1);
    }
    return best;
}

int pk_elf_find_symbol(const pk_elf *e, const char *name, pk_elf_symbol *out)
{
    for (uint64_t i = 1; i < e->nsymtab; i++) {
        const uint8_t *s = e->symtab + i * 24;
        uint32_t nm = pk_ld32(s);
        uint16_t shndx = pk_ld16(s + 6);
        if (shndx == SHN_UNDEF || nm >= e->symstr_size)
            continue;
        const char *n = (const char *)e->symstr + nm;
        size_t max = e->symstr_size - nm;
        if (strnlen(n, max) == max || strcmp(n, name))
            continue;
        memset(out, 0, sizeof *out);
        out->name = n;
        out->addr = pk_ld64(s + 8);
        out->size = pk_ld64(s + 16);
        out->bind = ELF64_ST_BIND(s[4]);
        out->type = ELF64_ST_TYPE(s[4]);
        out->shndx = shndx;
        return 1;
    }
    return 0;
}

/* ---- llvm-symbolizer's view of the symbol table ---- */

static int cmp_llvm_sym(const void *a, const void *b)
{
    const elf_llvm_sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    /* stable sort in LLVM: symbol table order decides among equals */
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void build_llvm_syms(pk_elf *e)
{
    e->llvm_syms_built = 1;
    if (!e->nsymtab)
        return;
    e->llvm_syms = calloc(e->nsymtab, sizeof *e->llvm_syms);
    e->file_syms = calloc(e->nsymtab, sizeof *e->file_syms);
    if (!e->llvm_syms || !e->file_syms)
        return;
    size_t n = 0;
    for (uint64_t i = 1; i < e->nsymtab; i++) {
        const uint8_t *s = e->symtab + i * 24;
        uint8_t type = ELF64_ST_TYPE(s[4]);
        uint16_t shndx = pk_ld16(s + 6);
        if (type == STT_FILE) {
            uint32_t fn = pk_ld32(s);
            if (fn < e->symstr_size && memchr(e->symstr + fn, 0, e->symstr_size - fn)) {
                e->file_syms[e->nfile_syms].idx = i;
                e->file_syms[e->nfile_syms].name = (const char *)e->symstr + fn;
                e->nfile_syms++;
            }
            continue;
        }
        if (type != STT_NOTYPE && type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC)
            continue;
        const pk_elf_section *sec = shndx < SHN_LORESERVE ? pk_elf_symbol_section(e, shndx) : NULL;
        if (shndx == SHN_UNDEF || !sec)
            continue;
        if (!(sec->flags & SHF_ALLOC))
            continue;
        uint32_t nm = pk_ld32(s);
        if (nm >= e->symstr_size)
            continue;
        const char *name = (const char *)e->symstr + nm;
        if (strnlen(name, e->symstr_size - nm) == e->symstr_size - nm)
            continue;
        if (type == STT_NOTYPE && (!*name || !strncmp(name, ".L", 2) || !strncmp(name, "$", 1)))
            continue;
        e->llvm_syms[n].addr = pk_ld64(s + 8);
        e->llvm_syms[n].size = pk_ld64(s + 16);
        e->llvm_syms[n].name = name;
        e->llvm_syms[n].idx = i;
        e->llvm_syms[n].local = ELF64_ST_BIND(s[4]) == STB_LOCAL;
        n++;
    }
    qsort(e->llvm_syms, n, sizeof *e->llvm_syms, cmp_llvm_sym);
    /* keep the last (largest) of each address */
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && e->llvm_syms[i + 1].addr == e->llvm_syms[i].addr)
            continue;
        e->llvm_syms[o++] = e->llvm_syms[i];
    }
    e->nllvm_syms = o;
}

int pk_elf_symbolizer_name(pk_elf *e, uint64_t vaddr, const char **name, uint64_t *start, const char **file)
{
    *file = NULL;
    if (!e->llvm_syms_built)
        build_llvm_syms(e);
    size_t lo = 0, hi = e->nllvm_syms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->llvm_syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const elf_llvm_sym *s = &e->llvm_syms[lo - 1];
    if (s->size != 0 && s->addr + s->size <= vaddr)
        return 0;
    *name = s->name;
    *start = s->addr;
    if (s->local) { /* the STT_FILE symbol before a local symbol names its file */
        size_t a = 0, b = e->nfile_syms;
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (e->file_syms[mid].idx <= s->idx)
                a = mid + 1;
            else
                b = mid;
        }
        if (a > 0)
            *file = e->file_syms[a - 1].name;
    }
    return 1;
}

/* ---- segments ---- */

const pk_elf_segment *pk_elf_segments(const pk_elf *e, size_t *count)
{
    *count = e->nsegments;
    return e->segments;
}

uint64_t pk_elf_preferred_base(const pk_elf *e)
{
    const pk_elf_segment *low = NULL;
    for (size_t i = 0; i < e->nsegments; i++)
        if (!low || e->segments[i].vaddr < low->vaddr)
            low = &e->segments[i];
    if (!low)
        return 0;
    return (low->vaddr - low->offset) & ~0xfffULL;
}

static const pk_elf_segment *first_exec(const pk_elf *e)
{
    for (size_t i = 0; i < e->nsegments; i++)
        if (e->segments[i].flags & PF_X)
            return &e->segments[i];
    return NULL;
}

uint64_t pk_elf_first_exec_vaddr(const pk_elf *e)
{
    const pk_elf_segment *s = first_exec(e);
    return s ? s->vaddr & ~0xfffULL : 0;
}

uint64_t pk_elf_first_exec_offset(const pk_elf *e)
{
    const pk_elf_segment *s = first_exec(e);
    return s ? s->offset & ~0xfffULL : 0;
}

int pk_elf_offset_to_vaddr(const pk_elf *e, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < e->nsegments; i++) {
        const pk_elf_segment *s = &e->segments[i];
        if (off >= s->offset && off - s->offset < s->filesz) {
            *vaddr = off - s->offset + s->vaddr;
            return 0;
        }
    }
    return -1;
}

int pk_elf_vaddr_to_offset(const pk_elf *e, uint64_t vaddr, uint64_t *off)
{
    for (size_t i = 0; i < e->nsegments; i++) {
        const pk_elf_segment *s = &e->segments[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz) {
            *off = vaddr - s->vaddr + s->offset;
            return 0;
        }
    }
    return -1;
}

const uint8_t *pk_elf_vaddr_bytes(const pk_elf *e, uint64_t vaddr, size_t len)
{
    for (size_t i = 0; i < e->nsegments; i++) {
        const pk_elf_segment *s = &e->segments[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz && len <= s->filesz - (vaddr - s->vaddr))
            return e->file.data + s->offset + (vaddr - s->vaddr);
    }
    return NULL;
}

/* ---- build-id and debug links ---- */

void pk_elf_build_id(const pk_elf *e, const uint8_t **id, size_t *len)
{
    *id = e->build_id;
    *len = e->build_id_len;
}

void pk_elf_build_id_hex(const pk_elf *e, char *buf, size_t bufsize)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < e->build_id_len && o + 2 < bufsize; i++) {
        buf[o++] = hex[e->build_id[i] >> 4];
        buf[o++] = hex[e->build_id[i] & 15];
    }
    if (bufsize)
        buf[o < bufsize ? o : bufsize - 1] = 0;
}

const char *pk_elf_debuglink(const pk_elf *e, uint32_t *crc)
{
    const pk_elf_section *s = pk_elf_section_by_name(e, ".gnu_debuglink");
    if (!s || s->type == SHT_NOBITS || s->size < 6)
        return NULL;
    const char *name = (const char *)e->file.data + s->offset;
    size_t len = strnlen(name, s->size);
    size_t crc_off = (len + 4) & ~(size_t)3;
    if (len == 0 || len == s->size || crc_off + 4 > s->size)
        return NULL;
    if (crc)
        *crc = pk_ld32(name + crc_off);
    return name;
}

void pk_elf_release_pages(pk_elf *e) { pk_file_release_pages(&e->file); }

/* llvm-objdump and llvm-profgen walk every symbol of .symtab (ObjectFile::
 * symbols(): not .dynsym, the null entry skipped) that lies in a section;
 * an unnamed section symbol takes its section's name. */
int pk_elf_section_symbols(const pk_elf *e, pk_elf_section_sym **out, size_t *count, pk_err *err)
{
    *out = NULL;
    *count = 0;
    if (e->symsrc != e || !pk_elf_has_symtab(e) || !e->nsymtab)
        return 0;
    pk_elf_section_sym *syms = calloc(e->nsymtab, sizeof *syms);
    if (!syms)
        return pk_err_set(err, "%s: out of memory", e->file.path);
    size_t n = 0;
    for (uint64_t i = 1; i < e->nsymtab; i++) {
        const uint8_t *s = e->symtab + i * 24;
        uint16_t shndx = pk_ld16(s + 6);
        if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE || shndx >= e->nsections)
            continue;
        uint32_t nm = pk_ld32(s);
        if (nm >= e->symstr_size || strnlen((const char *)e->symstr + nm, e->symstr_size - nm) == e->symstr_size - nm) {
            free(syms);
            return pk_err_set(err, "%s: offset 0x%" PRIx64 ": symbol %" PRIu64 " has a name outside its string table",
                              e->file.path, e->symtab_off + i * 24, i);
        }
        const char *name = (const char *)e->symstr + nm;
        if (!*name && ELF64_ST_TYPE(s[4]) == STT_SECTION)
            name = e->sections[shndx].name;
        syms[n].name = name;
        syms[n].addr = pk_ld64(s + 8);
        syms[n].shndx = shndx;
        n++;
    }
    *out = syms;
    *count = n;
    return 0;
}

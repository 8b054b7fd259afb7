/* elf.c — ELF64 reading: sections (with decompression), function symbols,
 * PT_LOAD segments and base addresses, build-id, .gnu_debuglink. */
#include "binary/binary.h"
#include "binary/elf_internal.h"

#include <elf.h>
#include <stddef.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#define SYM_SIZE 24
#define SHDR_SIZE 64
#define PHDR_SIZE 56

static int bad(pk_err *err, const pk_elf *e, uint64_t off, const char *what)
{
    return pk_err_set(err, "%s: offset %llu: %s", e->file.path, (unsigned long long)off, what);
}

static bool in_file(const pk_elf *e, uint64_t off, uint64_t len)
{
    return off <= e->file.size && len <= e->file.size - off;
}

/* Names come from a string table: the name must end inside it. */
static const char *strtab_get(const uint8_t *tab, uint64_t tab_size, uint64_t off)
{
    if (off >= tab_size)
        return NULL;
    if (!memchr(tab + off, 0, tab_size - off))
        return NULL;
    return (const char *)tab + off;
}

static int bind_rank(uint8_t bind)
{
    return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static int cmp_sym(const void *a, const void *b)
{
    const pk_elf_symbol *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    int rx = bind_rank(x->bind), ry = bind_rank(y->bind);
    if (rx != ry)
        return rx - ry;
    /* is_alias temporarily holds nothing; keep table order via name pointer
     * (names are laid out in table order by most linkers, and any order is
     * deterministic for a given file). */
    return x->name < y->name ? -1 : x->name > y->name;
}

static int load_sections(pk_elf *e, pk_err *err)
{
    const uint8_t *d = e->file.data;
    uint64_t shoff = pk_ld64(d + 0x28);
    uint16_t shentsize = pk_ld16(d + 0x3a);
    uint64_t shnum = pk_ld16(d + 0x3c);
    uint64_t shstrndx = pk_ld16(d + 0x3e);
    if (shoff == 0)
        return 0; /* no section table: only segments are usable */
    if (shentsize != SHDR_SIZE)
        return bad(err, e, 0x3a, "section header entry size is not 64");
    if (!in_file(e, shoff, SHDR_SIZE))
        return bad(err, e, 0x28, "section header table lies outside the file");
    if (shnum == 0)
        shnum = pk_ld64(d + shoff + 0x20);
    if (shstrndx == SHN_XINDEX)
        shstrndx = pk_ld32(d + shoff + 0x28);
    if (shnum > (e->file.size - shoff) / SHDR_SIZE)
        return bad(err, e, shoff, "section header table is truncated");
    e->sections = calloc(shnum, sizeof *e->sections);
    e->cache = calloc(shnum, sizeof *e->cache);
    e->cache_len = calloc(shnum, sizeof *e->cache_len);
    if (!e->sections || !e->cache || !e->cache_len)
        return pk_err_set(err, "%s: out of memory", e->file.path);
    e->nsections = shnum;
    const uint8_t *shstr = NULL;
    uint64_t shstr_size = 0;
    if (shstrndx != 0) {
        if (shstrndx >= shnum)
            return bad(err, e, 0x3e, "section name table index out of range");
        const uint8_t *h = d + shoff + shstrndx * SHDR_SIZE;
        uint64_t o = pk_ld64(h + 0x18), s = pk_ld64(h + 0x20);
        if (!in_file(e, o, s))
            return bad(err, e, shoff + shstrndx * SHDR_SIZE, "section name table lies outside the file");
        shstr = d + o;
        shstr_size = s;
    }
    for (uint64_t i = 0; i < shnum; i++) {
        const uint8_t *h = d + shoff + i * SHDR_SIZE;
        pk_elf_section *s = &e->sections[i];
        s->index = (uint32_t)i;
        s->type = pk_ld32(h + 4);
        s->flags = pk_ld64(h + 8);
        s->addr = pk_ld64(h + 0x10);
        s->offset = pk_ld64(h + 0x18);
        s->size = pk_ld64(h + 0x20);
        uint32_t nm = pk_ld32(h);
        s->name = shstr ? strtab_get(shstr, shstr_size, nm) : "";
        if (!s->name)
            return bad(err, e, shoff + i * SHDR_SIZE, "section name offset outside the name table");
        if (s->type != SHT_NOBITS && i != 0 && !in_file(e, s->offset, s->size))
            return bad(err, e, shoff + i * SHDR_SIZE + 0x18, "section contents lie outside the file");
    }
    return 0;
}

static int load_segments(pk_elf *e, pk_err *err)
{
    const uint8_t *d = e->file.data;
    uint64_t phoff = pk_ld64(d + 0x20);
    uint16_t phentsize = pk_ld16(d + 0x36);
    uint64_t phnum = pk_ld16(d + 0x38);
    if (phoff == 0 || phnum == 0)
        return 0;
    if (phentsize != PHDR_SIZE)
        return bad(err, e, 0x36, "program header entry size is not 56");
    if (phnum == 0xffff && e->nsections > 0)
        phnum = pk_ld32(d + pk_ld64(d + 0x28) + 0x2c);
    if (!in_file(e, phoff, 0) || phnum > (e->file.size - phoff) / PHDR_SIZE)
        return bad(err, e, 0x20, "program header table lies outside the file");
    e->segments = calloc(phnum, sizeof *e->segments);
    if (!e->segments)
        return pk_err_set(err, "%s: out of memory", e->file.path);
    for (uint64_t i = 0; i < phnum; i++) {
        const uint8_t *h = d + phoff + i * PHDR_SIZE;
        uint32_t type = pk_ld32(h);
        uint64_t off = pk_ld64(h + 8), filesz = pk_ld64(h + 0x20);
        if (type == PT_NOTE && in_file(e, off, filesz) && !e->build_id)
            elf_scan_notes(e, d + off, filesz);
        if (type != PT_LOAD)
            continue;
        pk_elf_segment *s = &e->segments[e->nsegments++];
        s->flags = pk_ld32(h + 4);
        s->offset = off;
        s->vaddr = pk_ld64(h + 0x10);
        s->filesz = filesz;
        s->memsz = pk_ld64(h + 0x28);
        s->align = pk_ld64(h + 0x30);
        if (!in_file(e, s->offset, s->filesz))
            return bad(err, e, phoff + i * PHDR_SIZE + 8, "PT_LOAD segment lies outside the file");
    }
    return 0;
}

void elf_scan_notes(pk_elf *e, const uint8_t *p, uint64_t size)
{
    uint64_t o = 0;
    while (size - o >= 12) {
        uint32_t namesz = pk_ld32(p + o), descsz = pk_ld32(p + o + 4), type = pk_ld32(p + o + 8);
        uint64_t name_al = ((uint64_t)namesz + 3) & ~3ULL, desc_al = ((uint64_t)descsz + 3) & ~3ULL;
        if (name_al > size - o - 12 || desc_al > size - o - 12 - name_al)
            return;
        const uint8_t *name = p + o + 12;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz > 0) {
            e->build_id = name + name_al;
            e->build_id_len = descsz;
            return;
        }
        o += 12 + name_al + desc_al;
    }
}

static const pk_elf_section *full_symtab(const pk_elf *e)
{
    for (size_t i = 1; i < e->nsections; i++)
        if (e->sections[i].type == SHT_SYMTAB)
            return e->sections[i].size >= 2 * SYM_SIZE ? &e->sections[i] : NULL;
    return NULL;
}

/* Indexes the function symbols of `src`'s .symtab (else .dynsym) into e:
 * src is e itself, or the separate debug file of a fully stripped e. */
static int load_symbols(pk_elf *e, const pk_elf *src, pk_err *err)
{
    const pk_elf_section *tab = full_symtab(src);
    int from_dyn = 0;
    if (!tab) {
        for (size_t i = 1; i < src->nsections; i++)
            if (src->sections[i].type == SHT_DYNSYM) {
                tab = &src->sections[i];
                from_dyn = 1;
                break;
            }
    }
    e->symsrc = src;
    if (!tab)
        return 0;
    /* sh_link names the string table. */
    const uint8_t *h = src->file.data + pk_ld64(src->file.data + 0x28) + (uint64_t)tab->index * SHDR_SIZE;
    uint32_t link = pk_ld32(h + 0x28);
    if (link == 0 || link >= src->nsections || src->sections[link].type == SHT_NOBITS)
        return bad(err, src, tab->offset, "symbol table has no string table");
    const uint8_t *str = src->file.data + src->sections[link].offset;
    uint64_t str_size = src->sections[link].size;
    uint64_t n = tab->size / SYM_SIZE;
    e->symtab = src->file.data + tab->offset;
    e->nsymtab = n;
    e->symstr = str;
    e->symstr_size = str_size;
    e->symtab_off = tab->offset;
    e->funcs = calloc(n ? n : 1, sizeof *e->funcs);
    if (!e->funcs)
        return pk_err_set(err, "%s: out of memory", e->file.path);
    for (uint64_t i = 1; i < n; i++) {
        const uint8_t *s = e->symtab + i * SYM_SIZE;
        uint8_t info = s[4];
        uint8_t type = ELF64_ST_TYPE(info), bind = ELF64_ST_BIND(info);
        uint16_t shndx = pk_ld16(s + 6);
        if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
            continue;
        /* Sized untyped symbols in code are code too: a split function's
         * cold part ("foo.cold", which some compilers leave untyped), as
         * llvm-profgen, which disassembles every symbol of a code section.
         * (Labels and AArch64's mapping symbols "$x"/"$d" have no size.) */
        bool sized_code = type == STT_NOTYPE && pk_ld64(s + 16) && shndx < src->nsections &&
                          (src->sections[shndx].flags & SHF_EXECINSTR);
        if (type != STT_FUNC && type != STT_GNU_IFUNC && !sized_code)
            continue;
        const char *name = strtab_get(str, str_size, pk_ld32(s));
        if (!name)
            return bad(err, src, tab->offset + i * SYM_SIZE, "symbol name offset outside the string table");
        if (sized_code && (name[0] == '$' || !strncmp(name, ".L", 2)))
            continue;
        pk_elf_symbol *f = &e->funcs[e->nfuncs++];
        f->name = name;
        f->addr = pk_ld64(s + 8);
        f->size = pk_ld64(s + 16);
        f->bind = bind;
        f->type = type;
        f->shndx = shndx;
        f->from_dynsym = (uint8_t)from_dyn;
    }
    qsort(e->funcs, e->nfuncs, sizeof *e->funcs, cmp_sym);
    for (size_t i = 1; i < e->nfuncs; i++)
        e->funcs[i].is_alias = e->funcs[i].addr == e->funcs[i - 1].addr;
    /* name → index hash (open addressing over indexes + 1). */
    size_t cap = 16;
    while (cap < e->nfuncs * 2)
        cap <<= 1;
    e->name_hash = pk_zalloc(cap, sizeof *e->name_hash);
    if (!e->name_hash)
        return pk_err_set(err, "%s: out of memory", e->file.path);
    e->name_hash_cap = cap;
    for (size_t i = 0; i < e->nfuncs; i++) {
        size_t j = pk_hash_bytes(e->funcs[i].name, strlen(e->funcs[i].name)) & (cap - 1);
        while (e->name_hash[j])
            j = (j + 1) & (cap - 1);
        e->name_hash[j] = (uint32_t)i + 1;
    }
    /* pk_elf_func_at runs for every sampled address */
    if (pk_addr_buckets_build(&e->func_buckets, e->funcs, e->nfuncs, sizeof *e->funcs, offsetof(pk_elf_symbol, addr)))
        return pk_err_set(err, "%s: out of memory", e->file.path);
    return 0;
}

/* Validates and indexes e->file (mapped or borrowed); frees e on failure. */
static int elf_load(pk_elf **out, pk_elf *e, pk_err *err)
{
    const uint8_t *d = e->file.data;
    if (e->file.size < 64 || memcmp(d, ELFMAG, SELFMAG)) {
        bad(err, e, 0, "not an ELF file");
        goto fail;
    }
    if (d[EI_CLASS] != ELFCLASS64) {
        bad(err, e, EI_CLASS, "only 64-bit ELF files are supported");
        goto fail;
    }
    if (d[EI_DATA] != ELFDATA2LSB) {
        bad(err, e, EI_DATA, "only little-endian ELF files are supported");
        goto fail;
    }
    e->type = pk_ld16(d + 0x10);
    e->machine = pk_ld16(d + 0x12);
    e->arch = pk_arch_for_machine(e->machine);
    if (load_sections(e, err) < 0 || load_segments(e, err) < 0)
        goto fail;
    for (size_t i = 1; i < e->nsections && !e->build_id; i++) {
        pk_elf_section *s = &e->sections[i];
        if (s->type == SHT_NOTE && !(s->flags & SHF_COMPRESSED))
            elf_scan_notes(e, d + s->offset, s->size);
    }
    if (load_symbols(e, e, err) < 0)
        goto fail;
    *out = e;
    return 0;
fail:
    pk_elf_close(e);
    return -1;
}

int pk_elf_open(pk_elf **out, const char *path, pk_err *err)
{
    *out = NULL;
    pk_elf *e = calloc(1, sizeof *e);
    if (!e)
        return pk_err_set(err, "%s: out of memory", path);
    if (pk_file_map_regular(&e->file, path, err) < 0) {
        free(e);
        return -1;
    }
    return elf_load(out, e, err);
}

int pk_elf_open_mem(pk_elf **out, const void *data, size_t size, const char *name, pk_err *err)
{
    *out = NULL;
    pk_elf *e = calloc(1, sizeof *e);
    if (!e)
        return pk_err_set(err, "%s: out of memory", name);
    if (pk_file_borrow(&e->file, data, size, name, err) < 0) {
        free(e);
        return -1;
    }
    return elf_load(out, e, err);
}

static void free_symbols(pk_elf *e)
{
    free(e->funcs);
    free(e->name_hash);
    pk_addr_buckets_free(&e->func_buckets);
    free(e->llvm_syms);
    free(e->file_syms);
    e->funcs = NULL;
    e->nfuncs = 0;
    e->name_hash = NULL;
    e->name_hash_cap = 0;
    memset(&e->func_buckets, 0, sizeof e->func_buckets);
    e->llvm_syms = NULL;
    e->nllvm_syms = 0;
    e->file_syms = NULL;
    e->nfile_syms = 0;
    e->llvm_syms_built = 0;
    e->symtab = e->symstr = NULL;
    e->nsymtab = e->symstr_size = e->symtab_off = 0;
}

bool pk_elf_has_symtab(const pk_elf *e) { return full_symtab(e) != NULL; }

int pk_elf_adopt_symbols(pk_elf *e, const pk_elf *debug, pk_err *err)
{
    if (full_symtab(e) || !full_symtab(debug))
        return 0;
    free_symbols(e);
    if (load_symbols(e, debug, err) < 0) {
        free_symbols(e);
        return load_symbols(e, e, err) < 0 ? -1 : pk_err_prefix(err, "%s: symbols", e->file.path);
    }
    return 0;
}

const pk_elf_section *pk_elf_symbol_section(const pk_elf *e, uint16_t shndx)
{
    const pk_elf *src = e->symsrc ? e->symsrc : e;
    return shndx < src->nsections ? &src->sections[shndx] : NULL;
}

void pk_elf_close(pk_elf *e)
{
    if (!e)
        return;
    if (e->cache)
        for (size_t i = 0; i < e->nsections; i++)
            free(e->cache[i]);
    free(e->cache);
    free(e->cache_len);
    free(e->sections);
    free(e->segments);
    free_symbols(e);
    pk_file_unmap(&e->file);
    free(e);
}

const char *pk_elf_path(const pk_elf *e) { return e->file.path; }
uint16_t pk_elf_type(const pk_elf *e) { return e->type; }
uint16_t pk_elf_machine(const pk_elf *e) { return e->machine; }
const pk_arch *pk_elf_arch(const pk_elf *e) { return e->arch; }
const uint8_t *pk_elf_bytes(const pk_elf *e, size_t *size)
{
    *size = e->file.size;
    return e->file.data;
}
size_t pk_elf_num_sections(const pk_elf *e) { return e->nsections; }
const pk_elf_section *pk_elf_section_at(const pk_elf *e, size_t i)
{
    return i < e->nsections ? &e->sections[i] : NULL;
}

const pk_elf_section *pk_elf_section_by_name(const pk_elf *e, const char *name)
{
    for (size_t i = 1; i < e->nsections; i++)
        if (!strcmp(e->sections[i].name, name))
            return &e->sections[i];
    return NULL;
}

static int inflate_zlib(pk_elf *e, const pk_elf_section *sec, const uint8_t *src, size_t src_len,
                        uint8_t *dst, size_t dst_len, pk_err *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit(&zs) != Z_OK)
        return pk_err_set(err, "%s: zlib initialisation failed", e->file.path);
    int rc = Z_OK;
    size_t done_in = 0, done_out = 0;
    /* zlib counts in uInt; feed large sections in pieces. */
    while (rc == Z_OK) {
        size_t in_chunk = src_len - done_in > 0x40000000 ? 0x40000000 : src_len - done_in;
        size_t out_chunk = dst_len - done_out > 0x40000000 ? 0x40000000 : dst_len - done_out;
        zs.next_in = (Bytef *)(uintptr_t)(src + done_in);
        zs.avail_in = (uInt)in_chunk;
        zs.next_out = dst + done_out;
        zs.avail_out = (uInt)out_chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        done_in += in_chunk - zs.avail_in;
        done_out += out_chunk - zs.avail_out;
        if (rc == Z_OK && zs.avail_in == in_chunk && zs.avail_out == out_chunk)
            break; /* no progress */
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || done_out != dst_len)
        return bad(err, e, sec->offset, "corrupt zlib-compressed section");
    return 0;
}

int pk_elf_section_data(pk_elf *e, const pk_elf_section *sec, const uint8_t **data, size_t *size,
                        pk_err *err)
{
    *data = NULL;
    *size = 0;
    if (!sec || sec->type == SHT_NOBITS || sec->index == 0)
        return 0;
    const uint8_t *raw = e->file.data + sec->offset;
    size_t idx = sec->index;
    if (e->cache[idx]) {
        *data = e->cache[idx];
        *size = e->cache_len[idx];
        return 0;
    }
    int legacy = !strncmp(sec->name, ".zdebug", 7);
    if (!(sec->flags & SHF_COMPRESSED) && !legacy) {
        *data = raw;
        *size = sec->size;
        return 0;
    }
    uint64_t out_len, hdr;
    int kind;
    if (legacy) {
        if (sec->size < 12 || memcmp(raw, "ZLIB", 4))
            return bad(err, e, sec->offset, "legacy .zdebug section without a ZLIB header");
        out_len = 0;
        for (int i = 0; i < 8; i++)
            out_len = out_len << 8 | raw[4 + i];
        hdr = 12;
        kind = ELFCOMPRESS_ZLIB;
    } else {
        if (sec->size < 24)
            return bad(err, e, sec->offset, "compressed section shorter than its header");
        kind = (int)pk_ld32(raw);
        out_len = pk_ld64(raw + 8);
        hdr = 24;
    }
    if (out_len > (uint64_t)1 << 36 || out_len / 2048 > sec->size + 1024)
        return bad(err, e, sec->offset, "implausible decompressed section size");
    uint8_t *buf = malloc(out_len ? out_len : 1);
    if (!buf)
        return pk_err_set(err, "%s: out of memory decompressing %s", e->file.path, sec->name);
    if (kind == ELFCOMPRESS_ZLIB) {
        if (inflate_zlib(e, sec, raw + hdr, sec->size - hdr, buf, out_len, err) < 0) {
            free(buf);
            return -1;
        }
    } else if (kind == 2 /* ELFCOMPRESS_ZSTD */) {
        size_t r = ZSTD_decompress(buf, out_len, raw + hdr, sec->size - hdr);
        if (ZSTD_isError(r) || r != out_len) {
            free(buf);
            return bad(err, e, sec->offset, "corrupt zstd-compressed section");
        }
    } else {
        free(buf);
        return bad(err, e, sec->offset, "unknown section compression type");
    }
    e->cache[idx] = buf;
    e->cache_len[idx] = out_len;
    *data = buf;
    *size = out_len;
    return 0;
}

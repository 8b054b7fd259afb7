/* symtab.c — the function symbols of a profiled binary with PGO-style unique
 * names, for offline correlation of raw temporal profiles.
 *
 * ELF parsing is src/binary/'s (pk_elf); this file only adds what it does not
 * expose: the STT_FILE symbol preceding each local function in .symtab, so a
 * `static helper` of a.c is named "a.c:helper" like LLVM's PGO names for
 * internal linkage. */
#include "temporal/temporal.h"
#include "binary/binary.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t local_key(uint64_t addr, const char *name)
{
    return pk_hash64(addr) ^ pk_hash_bytes(name, strlen(name));
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Maps (addr, name) of each local function to the string-table offset of its
 * STT_FILE name (+1; 0 = none). */
static int index_local_files(pk_elf *elf, pk_u64map *files, const uint8_t **strtab,
                             size_t *strtab_size, pk_err *err)
{
    const pk_elf_section *sym = pk_elf_section_by_name(elf, ".symtab");
    const pk_elf_section *str = pk_elf_section_by_name(elf, ".strtab");
    *strtab = NULL; *strtab_size = 0;
    if (!sym || !str) return 0;
    const uint8_t *sd, *st;
    size_t ss, sts;
    if (pk_elf_section_data(elf, sym, &sd, &ss, err) != 0) return -1;
    if (pk_elf_section_data(elf, str, &st, &sts, err) != 0) return -1;
    *strtab = st; *strtab_size = sts;
    uint64_t file = 0;
    for (size_t off = 0; off + 24 <= ss; off += 24) {
        uint32_t name = pk_ld32(sd + off);
        uint8_t info = sd[off + 4];
        uint16_t shndx = pk_ld16(sd + off + 6);
        uint64_t value = pk_ld64(sd + off + 8);
        if (name >= sts || !memchr(st + name, 0, sts - name)) continue;
        if (ELF64_ST_TYPE(info) == STT_FILE) { file = name + 1; continue; }
        if (ELF64_ST_BIND(info) != STB_LOCAL || shndx == SHN_UNDEF || !file) continue;
        if (ELF64_ST_TYPE(info) != STT_FUNC && ELF64_ST_TYPE(info) != STT_GNU_IFUNC) continue;
        uint64_t *slot = pk_u64map_slot(files, local_key(value, (const char *)st + name));
        if (!slot) return pk_err_set(err, "out of memory");
        *slot = file;
    }
    return 0;
}

int pk_temporal_symtab_load(pk_temporal_symtab *s, const char *elf_path, pk_err *err)
{
    return pk_temporal_symtab_load_opts(s, elf_path, NULL, NULL, 0, err);
}

int pk_temporal_symtab_load_opts(pk_temporal_symtab *s, const char *elf_path, const pk_debug_opts *debug,
                                 char *debug_origin, size_t debug_origin_size, pk_err *err)
{
    memset(s, 0, sizeof *s);
    pk_binary *bin;
    if (pk_binary_open_opts(&bin, elf_path, debug, err) != 0) return -1;
    if (debug_origin && debug_origin_size)
        snprintf(debug_origin, debug_origin_size, "%s", pk_binary_debug_origin(bin));
    pk_elf *elf = pk_binary_elf(bin);
    /* a fully stripped binary's symbols (and their STT_FILE names) are its debug file's */
    pk_elf *symelf = !pk_elf_has_symtab(elf) && pk_binary_debug_elf(bin) ? pk_binary_debug_elf(bin) : elf;
    const uint8_t *id;
    size_t idlen;
    pk_elf_build_id(elf, &id, &idlen);
    if (idlen > PK_TEMPORAL_BUILD_ID_MAX) idlen = PK_TEMPORAL_BUILD_ID_MAX;
    if (idlen) memcpy(s->build_id, id, idlen);
    s->build_id_len = (uint32_t)idlen;

    pk_u64map files;
    if (pk_u64map_init(&files, 256) != 0) { pk_elf_close(elf); return pk_err_set(err, "out of memory"); }
    const uint8_t *strtab;
    size_t strtab_size;
    int rc = -1;
    if (index_local_files(symelf, &files, &strtab, &strtab_size, err) != 0) goto out;

    size_t n;
    const pk_elf_symbol *fs = pk_elf_funcs(elf, &n);
    size_t need = 0, count = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t pos = 0;
        count = 0;
        for (size_t i = 0; i < n; i++) {
            if (fs[i].is_alias) continue;
            const char *file = NULL;
            if (fs[i].bind == STB_LOCAL) {
                uint64_t *f = pk_u64map_get(&files, local_key(fs[i].addr, fs[i].name));
                if (f && *f) file = base_name((const char *)strtab + *f - 1);
            }
            size_t flen = file ? strlen(file) + 1 : 0, nlen = strlen(fs[i].name);
            if (pass == 1) {
                struct pk_temporal_sym *y = &s->syms[count];
                char *dst = s->strtab + pos;
                if (file) { memcpy(dst, file, flen - 1); dst[flen - 1] = ':'; }
                memcpy(dst + flen, fs[i].name, nlen + 1);
                y->addr = fs[i].addr;
                y->size = fs[i].size;
                y->name = dst;
                y->symbol = dst + flen;
                y->flags = fs[i].bind == STB_LOCAL ? PK_TEMPORAL_FUNC_LOCAL : 0;
            }
            pos += flen + nlen + 1;
            count++;
        }
        if (pass == 0) {
            need = pos;
            s->strtab = malloc(need ? need : 1);
            s->syms = calloc(count ? count : 1, sizeof *s->syms);
            if (!s->strtab || !s->syms) { pk_err_set(err, "out of memory"); goto out; }
        }
    }
    s->strtab_len = need;
    s->num_syms = count;
    if (!count) {
        pk_err_set(err, "%s: no function symbols (.symtab/.dynsym): cannot correlate", elf_path);
        goto out;
    }
    rc = 0;
out:
    pk_u64map_free(&files);
    pk_binary_close(bin);
    if (rc) pk_temporal_symtab_free(s);
    return rc;
}

void pk_temporal_symtab_free(pk_temporal_symtab *s)
{
    free(s->syms);
    free(s->strtab);
    memset(s, 0, sizeof *s);
}

const struct pk_temporal_sym *pk_temporal_symtab_lookup(const pk_temporal_symtab *s, uint64_t addr)
{
    size_t lo = 0, hi = s->num_syms;
    while (lo < hi) {   /* first symbol with addr > the address */
        size_t mid = lo + (hi - lo) / 2;
        if (s->syms[mid].addr <= addr) lo = mid + 1; else hi = mid;
    }
    if (!lo) return NULL;
    const struct pk_temporal_sym *y = &s->syms[lo - 1];
    uint64_t d = addr - y->addr;
    /* A size-0 symbol (hand-written assembly) still owns its first bytes,
     * where the entry hook sits. */
    return d < (y->size ? y->size : 16) ? y : NULL;
}

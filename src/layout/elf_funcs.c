/* elf_funcs.c — the function symbols of an ELF64 file with their code bytes:
 * what code-similarity utilities and C3 (sizes) need, nothing more. */
#include "layout/elf_funcs.h"

#include <elf.h>
#include <stdlib.h>

static int cmp_func_addr(const void *a, const void *b)
{
    const pk_layout_elf_func *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* Aliases at one address: global before local, then by name. */
    if (x->global != y->global)
        return x->global ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sorts by address, one entry per address (relocatable objects: per
 * section and offset). */
static void sort_unique(pk_layout_elf *e)
{
    qsort(e->funcs, e->n, sizeof *e->funcs, cmp_func_addr);
    size_t w = 0;
    for (size_t i = 0; i < e->n; i++)
        if (w == 0 || e->funcs[w - 1].addr != e->funcs[i].addr ||
            e->funcs[w - 1].section != e->funcs[i].section)
            e->funcs[w++] = e->funcs[i];
    e->n = w;
}

int pk_layout_elf_from_binary(pk_layout_elf *e, pk_binary *bin, pk_err *err)
{
    memset(e, 0, sizeof *e);
    const pk_elf *x = pk_binary_elf(bin);
    size_t n;
    const pk_elf_symbol *fs = pk_elf_funcs(x, &n);
    e->is_rel = pk_elf_type(x) == ET_REL;
    e->funcs = malloc((n ? n : 1) * sizeof *e->funcs);
    if (!e->funcs)
        return pk_err_set(err, "%s: out of memory", pk_elf_path(x));
    for (size_t i = 0; i < n; i++) {
        const pk_elf_section *sec = pk_elf_symbol_section(x, fs[i].shndx);
        if (!fs[i].size || !sec || !(sec->flags & SHF_EXECINSTR))
            continue;
        pk_layout_elf_func *f = &e->funcs[e->n++];
        f->name = fs[i].name;
        f->addr = fs[i].addr;
        f->size = fs[i].size;
        f->section = fs[i].shndx;
        f->global = fs[i].bind != STB_LOCAL;
        f->bytes = e->is_rel ? NULL : pk_elf_vaddr_bytes(x, fs[i].addr, fs[i].size);
    }
    sort_unique(e);
    return 0;
}

int pk_layout_elf_open(pk_layout_elf *e, const char *path, pk_err *err)
{
    memset(e, 0, sizeof *e);
    if (pk_file_map(&e->file, path, err) != 0)
        return -1;
    const uint8_t *d = e->file.data;
    size_t size = e->file.size;
    if (size < sizeof(Elf64_Ehdr) || memcmp(d, ELFMAG, SELFMAG) != 0) {
        pk_layout_elf_close(e);
        return pk_err_set(err, "%s: offset 0: not an ELF file", path);
    }
    if (d[EI_CLASS] != ELFCLASS64 || d[EI_DATA] != ELFDATA2LSB) {
        pk_layout_elf_close(e);
        return pk_err_set(err, "%s: offset 4: only little-endian ELF64 is supported", path);
    }
    Elf64_Ehdr eh;
    memcpy(&eh, d, sizeof eh);
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
        (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff) {
        pk_layout_elf_close(e);
        return pk_err_set(err, "%s: offset %llu: section header table out of the file", path,
                          (unsigned long long)eh.e_shoff);
    }
    e->is_rel = eh.e_type == ET_REL;
    Elf64_Shdr *sh = malloc((eh.e_shnum ? eh.e_shnum : 1) * sizeof *sh);
    if (!sh) {
        pk_layout_elf_close(e);
        return pk_err_set(err, "%s: out of memory", path);
    }
    memcpy(sh, d + eh.e_shoff, eh.e_shnum * sizeof *sh);
    int symtab = -1;
    for (int pass = 0; pass < 2 && symtab < 0; pass++)
        for (unsigned i = 0; i < eh.e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
                symtab = (int)i;
                break;
            }
    int rc = 0;
    if (symtab < 0) {
        rc = pk_err_set(err, "%s: no symbol table (stripped binary?)", path);
        goto out;
    }
    const Elf64_Shdr *st = &sh[symtab];
    if (st->sh_link >= eh.e_shnum || st->sh_offset > size || st->sh_size > size - st->sh_offset ||
        sh[st->sh_link].sh_offset > size || sh[st->sh_link].sh_size > size - sh[st->sh_link].sh_offset) {
        rc = pk_err_set(err, "%s: offset %llu: symbol table or its strings out of the file", path,
                        (unsigned long long)st->sh_offset);
        goto out;
    }
    const char *strs = (const char *)d + sh[st->sh_link].sh_offset;
    size_t strs_size = sh[st->sh_link].sh_size;
    size_t nsym = st->sh_size / sizeof(Elf64_Sym);
    e->funcs = malloc((nsym ? nsym : 1) * sizeof *e->funcs);
    if (!e->funcs) {
        rc = pk_err_set(err, "%s: out of memory", path);
        goto out;
    }
    for (size_t i = 0; i < nsym; i++) {
        Elf64_Sym s;
        memcpy(&s, d + st->sh_offset + i * sizeof s, sizeof s);
        unsigned type = ELF64_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_size == 0 ||
            s.st_shndx == SHN_UNDEF || s.st_shndx >= eh.e_shnum)
            continue;
        const Elf64_Shdr *sec = &sh[s.st_shndx];
        if (!(sec->sh_flags & SHF_EXECINSTR))
            continue;
        if (s.st_name >= strs_size || !memchr(strs + s.st_name, '\0', strs_size - s.st_name)) {
            rc = pk_err_set(err, "%s: offset %llu: symbol %zu has a name outside the string table",
                            path, (unsigned long long)(st->sh_offset + i * sizeof s), i);
            goto out;
        }
        pk_layout_elf_func *f = &e->funcs[e->n++];
        f->name = strs + s.st_name;
        f->size = s.st_size;
        f->global = ELF64_ST_BIND(s.st_info) != STB_LOCAL;
        f->section = s.st_shndx;
        uint64_t in_sec = e->is_rel ? s.st_value : s.st_value - sec->sh_addr;
        f->addr = e->is_rel ? s.st_value : s.st_value;
        f->bytes = NULL;
        if (sec->sh_type != SHT_NOBITS && (e->is_rel || s.st_value >= sec->sh_addr) &&
            in_sec <= sec->sh_size && s.st_size <= sec->sh_size - in_sec &&
            sec->sh_offset <= size && sec->sh_size <= size - sec->sh_offset)
            f->bytes = d + sec->sh_offset + in_sec;
    }
    sort_unique(e);
out:
    free(sh);
    if (rc != 0)
        pk_layout_elf_close(e);
    return rc;
}

void pk_layout_elf_close(pk_layout_elf *e)
{
    free(e->funcs);
    pk_file_unmap(&e->file);
    memset(e, 0, sizeof *e);
}

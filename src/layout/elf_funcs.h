/* elf_funcs.h — function symbols of an ELF64 file with their code bytes, for
 * code-similarity utilities and function sizes (C3, layout evaluation). */
#ifndef PK_LAYOUT_ELF_FUNCS_H
#define PK_LAYOUT_ELF_FUNCS_H

#include "common/pk_common.h"
#include "binary/binary.h"

typedef struct pk_layout_elf_func {
    const char *name;       /* points into the mapped file */
    uint64_t addr, size;
    const uint8_t *bytes;   /* size bytes of code, or NULL if not in the file */
    uint32_t section;
    bool global;
} pk_layout_elf_func;

typedef struct pk_layout_elf {
    pk_mapped_file file;
    pk_layout_elf_func *funcs;   /* sorted by address, one per address */
    size_t n;
    bool is_rel;
} pk_layout_elf;

/* Reads .symtab (or .dynsym) function symbols of non-zero size in executable
 * sections. Errors name the file and offset. */
int pk_layout_elf_open(pk_layout_elf *e, const char *path, pk_err *err);
/* The same from a binary opened through the binary stage: a fully stripped
 * binary's symbols come from its debug file. Names and bytes live until
 * pk_binary_close; relocatable objects get no bytes (use pk_layout_elf_open). */
int pk_layout_elf_from_binary(pk_layout_elf *e, pk_binary *bin, pk_err *err);
void pk_layout_elf_close(pk_layout_elf *e);

#endif

/* elf_internal.h — the pk_elf object, shared by elf*.c only. */
#ifndef PK_ELF_INTERNAL_H
#define PK_ELF_INTERNAL_H

#include "binary/binary.h"

/* A symbol as llvm-symbolizer's symbol table keeps it (functions, objects
 * and untyped symbols of allocated sections; one per address, the largest). */
typedef struct elf_llvm_sym {
    uint64_t addr, size;
    const char *name;
    uint64_t idx;        /* symbol table index */
    int local;
} elf_llvm_sym;

typedef struct elf_file_sym {
    uint64_t idx;
    const char *name;
} elf_file_sym;

struct pk_elf {
    pk_mapped_file file;
    uint16_t type, machine;
    const pk_arch *arch;   /* pk_arch_for_machine(machine), looked up once */
    pk_elf_section *sections;
    size_t nsections;
    uint8_t **cache;       /* decompressed section bytes, by section index */
    size_t *cache_len;
    pk_elf_segment *segments;
    size_t nsegments;
    const uint8_t *build_id;
    size_t build_id_len;
    /* the symbol table the functions came from: this file's, or that of
     * symsrc, the separate debug file of a fully stripped binary (its
     * section indexes are symsrc's; symsrc outlives this pk_elf) */
    const struct pk_elf *symsrc;
    const uint8_t *symtab;
    uint64_t nsymtab, symtab_off;
    const uint8_t *symstr;
    uint64_t symstr_size;
    pk_elf_symbol *funcs;
    size_t nfuncs;
    uint32_t *name_hash;   /* open addressing: func index + 1, 0 = empty */
    size_t name_hash_cap;
    pk_addr_buckets func_buckets; /* narrows pk_elf_func_at's search */
    elf_llvm_sym *llvm_syms; /* built on first pk_elf_symbolizer_name call */
    size_t nllvm_syms;
    elf_file_sym *file_syms;  /* STT_FILE symbols in table order */
    size_t nfile_syms;
    int llvm_syms_built;
};

void elf_scan_notes(pk_elf *e, const uint8_t *p, uint64_t size);

#endif

/* disasm_print.h — llvm-profgen's `--show-disassembly-only` listing of a
 * binary's code: every symbol of every executable section disassembled,
 * optionally with each instruction's inline context (source locations) and
 * the pseudo-probes placed at it, in llvm-profgen 19's text. x86-64 only. */
#ifndef PK_DISASM_PRINT_H
#define PK_DISASM_PRINT_H

#include "binary/binary.h"

#include <stdio.h>

typedef struct pk_disasm_opts {
    bool intel;               /* -x86-asm-syntax=intel (else AT&T) */
    bool source_locations;    /* --show-source-locations: "f:1 @ g:2" column */
    bool canonical_names;     /* --show-canonical-fname: names without .llvm.N / .part.N */
    bool pseudo_probes;       /* --show-pseudo-probe: descriptors, probes, probe indexes as lines */
    const char *const *funcs; /* --disassemble-functions: only these symbols (NULL: all) */
    size_t nfuncs;
} pk_disasm_opts;

/* Prints the listing of `bin` to `out`. `shown_path` is the file name the
 * header names (llvm-profgen prints the path it was given). Errors: not an
 * x86-64 binary, unreadable sections, corrupt DWARF or probe sections. */
int pk_disasm_print(FILE *out, pk_binary *bin, const char *shown_path, const pk_disasm_opts *opts, pk_err *err);

#endif

/* profgen_dumps.h — what `pgokit profgen` prints on request besides its
 * summary: the pre-inliner's decisions (pgokit's tab-separated trace, or
 * llvm-profgen's --debug-only=cs-preinliner wording), the recording's mmap
 * events and the return addresses at which stacks were cut (llvm-profgen's
 * --show-mmap-events and --show-detailed-warning texts). */
#ifndef PK_CLI_PROFGEN_DUMPS_H
#define PK_CLI_PROFGEN_DUMPS_H

#include "perf/perf_data.h"
#include "profgen/preinline.h"

#include <stdio.h>

typedef struct pk_preinline_printer {
    FILE *f;
    bool llvm;                 /* llvm-profgen's wording, else pgokit's trace */
    /* llvm wording: the function being processed, whose size-limit line
     * comes before its first candidate left over */
    uint64_t func_size;
    bool over_limit_said;
} pk_preinline_printer;

/* One pre-inliner step (pk_preinline_opts.trace's shape, ctx = the printer). */
void pk_print_preinline_step(pk_preinline_printer *p, const pk_profset *ps, const pk_preinline_step *st);
/* "Mmap: Binary FILE loaded at 0xADDR: " as llvm-profgen prints each mmap
 * event (to stdout; names escaped on a terminal). */
void pk_print_mmap_event(FILE *f, const pk_mmap_event *m);
/* llvm-profgen's detailed warning for a stack cut at a return address
 * that does not follow a call. */
void pk_print_bad_return(FILE *f, uint64_t addr);

/* `pgokit llvm-profgen --help`, laid out as llvm-profgen's. */
extern const char pk_llvm_profgen_help[];

#endif

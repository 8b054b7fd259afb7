/* fuzz_prof_binary.c — the LLVM/GCC sample-profile reader for PK_FMT_BINARY
 * (src/format/), then every writer on what it read: see fuzz_prof.h. */
#include "fuzz_prof.h"

PK_FUZZ_PROF_HARNESS(PK_FMT_BINARY)

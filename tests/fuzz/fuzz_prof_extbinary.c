/* fuzz_prof_extbinary.c — the LLVM/GCC sample-profile reader for PK_FMT_EXTBINARY
 * (src/format/), then every writer on what it read: see fuzz_prof.h. */
#include "fuzz_prof.h"

PK_FUZZ_PROF_HARNESS(PK_FMT_EXTBINARY)

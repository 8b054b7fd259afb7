/* fuzz_prof_gcc.c — the GCC .afdo reader (PK_FMT_GCC)
 * (src/format/), then every writer on what it read: see fuzz_prof.h. */
#include "fuzz_prof.h"

PK_FUZZ_PROF_HARNESS(PK_FMT_GCC)

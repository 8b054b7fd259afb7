/* overlap_exact.h — block overlap against the emulator's exact counts. */
#ifndef PK_CLI_OVERLAP_EXACT_H
#define PK_CLI_OVERLAP_EXACT_H

#include "binary/binary.h"
#include "profile/profile.h"

/* The reference profile of `bin` from exact-counts files (their counts
 * added: one per training command), at probe or line granularity. */
int pk_truth_profile(const char *const *exact_paths, size_t nexact, pk_binary *bin, const char *bin_path,
                     bool probes, pk_profset *out, pk_err *err);
/* `pgokit overlap --exact ...` (argv as given to the overlap command). */
int pk_cli_overlap_exact(int argc, char **argv);

#endif

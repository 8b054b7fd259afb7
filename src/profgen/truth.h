/* truth.h — the reference profile of a binary made from the emulator's
 * exact counts (pgokit record --exact-counts): every executed fall-through
 * range and taken branch of the run, counted exactly, turned into a profile
 * by the same generator that makes the profiles under test (probe ids for a
 * probe binary, line offsets otherwise). Block overlap against it
 * (profile/block_overlap.h) measures a profile's quality; `overlap --exact`
 * and `report --exact` use it. */
#ifndef PK_PROFGEN_TRUTH_H
#define PK_PROFGEN_TRUTH_H

#include "binary/binary.h"
#include "profile/profile.h"

/* The reference profile of `bin` from exact-counts files (their counts
 * added: one per training command), at probe or line granularity. The
 * counts of `bin` are found in each file by build-id, else by file name;
 * a file without them is an error naming it. */
int pk_truth_profile(const char *const *exact_paths, size_t nexact, pk_binary *bin, const char *bin_path,
                     bool probes, pk_profset *out, pk_err *err);

#endif

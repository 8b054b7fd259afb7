/* cs_cold.h — cold contexts of a flat context-sensitive profile, with
 * llvm-profgen's semantics (SampleContextTrimmer::trimAndMergeColdContextProfiles):
 * every context whose total is under `threshold` is taken out; with `merge`
 * the cold ones are merged by their last `keep_frames` frames (1: into the
 * function's base profile) and put back, unless `trim` and the merged
 * profile is still cold with no profile of that context left, where it is
 * dropped. `base_only` (trim without merge, after the pre-inliner) limits
 * all this to base profiles ([f]), which honours the pre-inliner's choices.
 * threshold 0, or neither trim nor merge: nothing happens. */
#ifndef PK_CS_COLD_H
#define PK_CS_COLD_H

#include "profile/profile.h"

typedef struct pk_cold_opts {
    uint64_t threshold;
    bool trim, merge, base_only;
    uint32_t keep_frames;        /* 0 is taken as 1 */
} pk_cold_opts;

/* *moved: cold contexts merged elsewhere or dropped. */
int pk_cs_trim_merge_cold(pk_profset *ps, const pk_cold_opts *o, uint64_t *moved, pk_err *err);

#endif

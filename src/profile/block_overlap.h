/* block_overlap.h — the CSSPGO paper's profile-quality metric (§IV-C):
 * for each function, the counts of its locations in the test and the
 * reference profile are normalized to sum 1, and the function's overlap is
 * Σ min(test, reference); the program's is the average weighted by each
 * function's share of the reference. 1.0 = identical block distribution.
 *
 * Both profiles are compared context- and inline-insensitively: every
 * instance of a function (top-level, inlined anywhere, any context) is
 * folded into one location → count map per function (locations are line
 * offsets with discriminators, or probe ids, as the profiles have them), so
 * profiles of different shape (AutoFDO, probe-only, pre-inlined CSSPGO) can
 * be compared against one reference made from the emulator's exact counts. */
#ifndef PK_BLOCK_OVERLAP_H
#define PK_BLOCK_OVERLAP_H

#include "profile/profile.h"

typedef struct pk_block_overlap {
    double overlap;               /* weighted program overlap in [0, 1] */
    uint64_t ref_functions;       /* functions with samples in the reference */
    uint64_t common_functions;    /* ... that also have samples in the test profile */
    double ref_weight_covered;    /* share of the reference in common functions */
} pk_block_overlap;

int pk_profset_block_overlap(const pk_profset *test, const pk_profset *ref, pk_block_overlap *out, pk_err *err);

/* One reference function's part of the program overlap. */
typedef struct pk_block_overlap_func {
    pk_name_id name;              /* in the reference set */
    double overlap;               /* Σ min over its locations, in [0, 1]; 0 when the test lacks it */
    double weight;                /* its share of the reference */
    uint64_t ref_samples;         /* Σ counts compared (reference) */
    uint64_t test_samples;        /* Σ counts compared (test; 0: not in the test profile) */
} pk_block_overlap_func;

/* The same, and every reference function with samples (heaviest first) in
 * *funcs (caller frees; *n of them): Σ weight × overlap over them is the
 * program overlap. */
int pk_profset_block_overlap_funcs(const pk_profset *test, const pk_profset *ref, pk_block_overlap *out,
                                   pk_block_overlap_func **funcs, size_t *n, pk_err *err);

#endif

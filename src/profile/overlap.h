/* overlap.h — similarity of two sample profiles, with the metrics
 * `llvm-profdata overlap --sample` reports (same definitions, so the numbers
 * agree):
 *  - per top-level profile f: SB(f), ST(f) = Σ body counts including nested
 *    inlinees; B = Σ SB, T = Σ ST;
 *  - inside a matched function, records match by location and inlinees by
 *    (location, callee), recursively; BS(i) = 1 − |b_i/SB − t_i/ST| (always
 *    relative to the top-level sums), D = Σ(1 − BS), a matched inlinee adds
 *    2 − 2·FIS(inlinee), FIS = (2 − D)/2; FS = FIS·(1 − |SB/B − ST/T|);
 *  - program similarity = Σ FS·(SB/B + ST/T)/2; sample overlap = Σmin/Σmax;
 *  - hot thresholds = each profile's 99% summary cutoff; hot functions by
 *    max record count; hot blocks per matched record, and an unmatched
 *    function/inlinee counts its hot records at once. */
#ifndef PK_OVERLAP_H
#define PK_OVERLAP_H

#include "profile/profile.h"

typedef struct pk_overlap_func {
    const pk_fprof *base, *test;   /* test is NULL for base-only (not reported) */
    double base_weight, test_weight, similarity;
    uint64_t base_sample, test_sample;
    uint64_t overlap_sample, union_sample, base_unique_sample, test_unique_sample;
    uint64_t test_max;             /* max record count in test (for --value-cutoff) */
} pk_overlap_func;

typedef struct pk_overlap {
    double similarity;
    uint64_t base_sample, test_sample;
    uint64_t overlap_sample, union_sample;
    uint64_t base_unique_sample, test_unique_sample;
    uint64_t overlap_funcs, base_unique_funcs, test_unique_funcs, union_funcs;
    uint64_t base_hot_threshold, test_hot_threshold;
    uint64_t hot_func_overlap, hot_func_base, hot_func_test, hot_func_union;
    uint64_t hot_block_overlap, hot_block_base, hot_block_test, hot_block_union;
    /* one entry per test profile, in test order */
    pk_overlap_func *funcs;
    size_t nfuncs;
} pk_overlap;

/* Computes the overlap. Refuses probe vs non-probe and CS vs non-CS. When a
 * profile's samples sum to 0 the result has base_sample or test_sample 0 and
 * nothing else is computed (the caller reports it). */
int pk_overlap_compute(const pk_profset *base, const pk_profset *test, pk_overlap *out, pk_err *err);
void pk_overlap_free(pk_overlap *o);

#endif

/* check.h — does a sample profile still fit a binary built from newer
 * sources? (`pgokit check --binary NEW PROFILE`)
 *
 * A sample profile is keyed by source positions of the program it was
 * collected on; compilers apply it to the next version silently, wherever
 * the keys happen to land. This stage finds the keys that no longer exist in
 * the new binary and says how much of the profile's weight sits on them:
 *
 *  - line-based profiles (LLVM text / binary / extbinary, GCC .afdo): a
 *    location is (line offset from the function's declaration line,
 *    discriminator). The new binary's locations of a function are those of
 *    every instruction attributed to it in DWARF, in any instance (outlined,
 *    or inlined anywhere: every inline frame counts), computed exactly as
 *    profgen computes them. A profiled location the new binary does not have
 *    is stale ("lines"); a call target or inlined callee profiled at a
 *    location where the new binary has no call to that function (a direct
 *    call, tail call or inlined instance; an indirect call matches any
 *    target) is stale ("calls"); a function the new binary has nowhere is
 *    "missing". Adding or deleting lines inside a function shifts the
 *    offsets below the edit: the offsets that fall outside the new ranges
 *    are reported, the ones that land on other existing lines cannot be told
 *    apart from fresh ones, so the share reported is a lower bound.
 *  - probe profiles (pseudo-probes, CSSPGO): a function whose CFG checksum
 *    differs from the one in the new binary's `.pseudo_probe_desc` is stale
 *    as a whole (clang drops its profile), inlinees too (what clang's
 *    `-mllvm -report-profile-staleness` counts as "function hash
 *    mismatch"); a function without a descriptor is missing.
 *
 * Samples are body counts: a location's share is its count over the sum of
 * every body count of the profile (inlinees included); a dropped function or
 * inlinee weighs the sum of its body counts. Context-sensitive profiles are
 * reported per leaf function, all its contexts together.
 */
#ifndef PK_CHECK_H
#define PK_CHECK_H

#include "binary/binary.h"
#include "common/pk_common.h"
#include "format/format.h"
#include "profile/profile.h"

enum pk_check_kind { PK_CHECK_LINES = 0, PK_CHECK_PROBES = 1 };

/* Why a function's profile is (partly) stale: pk_check_func.flags. */
enum {
    PK_STALE_MISSING = 1u << 0,  /* the function is nowhere in the new binary */
    PK_STALE_CHECKSUM = 1u << 1, /* probe profile: CFG checksum differs */
    PK_STALE_LINES = 1u << 2,    /* profiled locations the new binary lacks */
    PK_STALE_CALLS = 1u << 3,    /* profiled calls / inlinees the new binary lacks */
};

/* One stale key of a function's profile. */
typedef struct pk_check_loc {
    const char *func;   /* whose location: the function itself or an inlinee of it */
    const char *callee; /* NULL: a body location; else the call target or inlinee that no longer
                           matches there (for PK_STALE_CHECKSUM / MISSING of an inlinee: that inlinee) */
    uint32_t line, disc;
    uint32_t why;       /* PK_STALE_* */
    bool inlined;       /* callee: an inlined instance (else a call target) */
    uint64_t samples;
} pk_check_loc;

typedef struct pk_check_func {
    const char *name;
    uint32_t flags;            /* PK_STALE_*; 0 = fresh */
    uint32_t contexts;         /* top-level profiles of this function (CS: its contexts) */
    uint64_t samples;          /* body samples of its profile(s), inlinees included */
    uint64_t stale_samples;    /* of those, on stale keys (each sample counted once) */
    uint32_t locs, stale_locs; /* body locations checked, and not in the new binary */
    uint32_t calls, stale_calls; /* call targets and inlinees checked, and not matched */
    uint64_t profile_checksum; /* probe profiles: as profiled (0: none) */
    uint64_t binary_checksum;  /* and in the new binary's descriptor (0: none) */
    const char *same_but_uniq; /* missing, but the binary has this name, which differs only
                                  in its .__uniq.<hash> suffix (the source path changed); or NULL */
    size_t first_loc, nlocs;   /* its stale keys: locs[first_loc .. first_loc + nlocs) */
} pk_check_func;

typedef struct pk_check_report {
    uint32_t kind;             /* enum pk_check_kind */
    bool cs;                   /* context-sensitive profile */
    bool ignore_disc;          /* discriminators ignored (GCC profiles carry none) */
    uint64_t samples;          /* every body sample of the profile */
    uint64_t stale_samples;    /* on any stale key */
    uint64_t missing_samples, checksum_samples, line_samples, call_samples; /* by reason */
    uint64_t stale_function_samples; /* every sample of the functions with stale samples: in a
                                        line-based profile, the edits that made some keys stale
                                        moved more of them (stale_samples sees only those
                                        that no code has any more) */
    size_t functions;          /* profiled functions (entries of funcs) */
    size_t stale_functions, missing_functions, checksum_functions, line_functions, call_functions;
    pk_check_func *funcs;      /* stale samples descending, then samples descending, then name */
    size_t nfuncs;
    pk_check_loc *locs;        /* per function, samples descending, then location */
    size_t nlocs;
    /* what was read from the binary */
    uint64_t bin_functions;    /* DWARF functions walked (line check) or descriptors (probe check) */
    uint64_t bin_insns;        /* instructions symbolized (line check) */
    uint64_t bin_locations;    /* distinct (function, location) pairs found */
    /* private */
    pk_vec strings_;           /* char *: owned copies of the names above */
} pk_check_report;

typedef struct pk_check_opts {
    /* Compare line offsets only. Set by pk_check_files for GCC profiles. */
    bool ignore_disc;
} pk_check_opts;

/* Checks a profile set against a binary: line-based or probe-based after
 * ps->kind (a probe profile needs a binary with `.pseudo_probe_desc`; a
 * line-based one needs DWARF). *out is always initialised; free it with
 * pk_check_report_free, also after an error. */
int pk_check_profile(pk_binary *bin, const pk_profset *ps, const pk_check_opts *o, pk_check_report *out,
                     pk_err *err);

/* Opens the binary (its debug information found as `debug` says, which may
 * be NULL), reads the profile (any sample-profile format) and checks it.
 * *fmt_out (may be NULL) gets the profile's format; debug_origin (may be
 * NULL) gets pk_binary_debug_origin. */
int pk_check_files(const char *binary, const pk_debug_opts *debug, const char *profile, pk_prof_format *fmt_out,
                   char *debug_origin, size_t debug_origin_size, pk_check_report *out, pk_err *err);

void pk_check_report_free(pk_check_report *r);

/* stale_samples / samples (0 for an empty profile). */
double pk_check_stale_share(const pk_check_report *r);
/* True when the stale share is above max_share (a fraction: 0.01 = 1 %). */
bool pk_check_is_stale(const pk_check_report *r, double max_share);

#endif

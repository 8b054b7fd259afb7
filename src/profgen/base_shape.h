/* base_shape.h — CSSPGO from IP samples: the base profiles take their
 * function's context-free shape.
 *
 * Flow inference is not additive. A context-sensitive profile from IP
 * samples infers each calling context of a function from that context's own
 * hits (sparse ones borrowing their function's shape, see ip_ranges.h); the
 * pre-inliner then merges every context it does not inline into the
 * function's base profile, a sum of many small inferences, each with the
 * errors of its few samples. The probe-only profile infers the function once
 * from all of its hits. Where the two disagree the single inference is the
 * better estimate: on Lua's real cpu-clock recordings luaV_execute's base
 * profile (all its contexts merged) built 1.3 points more instructions than
 * the same function's counts from one inference (-5.3 % against -6.5 %
 * vs -O2; the whole profile so: -6.6 %), and SQLite's sqlite3VdbeExec did not
 * move (-11.0 / -11.2 %).
 *
 * So after pre-inlining and nesting, every top-level (base) profile's own
 * body counts and call targets are replaced by those of the function's
 * context-free profile, scaled to the base profile's own mass (the share of
 * the function's samples left in the base, after the contexts inlined
 * elsewhere took theirs). Its inlinees (contexts inlined into it) keep their
 * context-sensitive counts; so does the head count's ratio to the body.
 */
#ifndef PK_BASE_SHAPE_H
#define PK_BASE_SHAPE_H

#include "binary/binary.h"
#include "infer/ip_ranges.h"
#include "profile/profile.h"
#include "unwind/ip_stack.h"

/* The context-free ranges and branches of a finished IP profile with
 * contexts (`deep`), inferred with `io`, into `flat` (what the samples give
 * without their stacks). `deep` is left as it was. */
int pk_ip_flat_ranges(pk_binary *bin, const pk_ipraw *deep, const pk_ip_infer_opts *io, pk_rawprof *flat,
                      pk_err *err);

typedef struct pk_base_shape_stats {
    uint64_t profiles;           /* base profiles that took their function's shape */
    uint64_t no_flat;            /* base profiles without a context-free profile (left as they were) */
} pk_base_shape_stats;

/* In `nested` (pre-inlined and nested: top-level profiles are functions),
 * every top-level profile with a body found in `flat` (a probe-only profile
 * of the same samples) takes flat's body counts, call targets and head
 * count, scaled so that its own body sum stays what it was. Profiles whose
 * CFG checksums differ are left alone. */
int pk_cs_base_shape(pk_profset *nested, const pk_profset *flat, pk_base_shape_stats *st, pk_err *err);

#endif

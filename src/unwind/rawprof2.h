/* rawprof2.h — the raw profile, version 2: what one recording (or many,
 * merged) observed of one binary, per calling context, before anything is
 * inferred or symbolized (file layout: aggregate/rawprof.c).
 *
 * It holds exactly the counters the profgen pipeline has when reading is
 * done and generation has not begun: the flat ranges and branches (the
 * empty context: LBR samples without a usable stack, or every LBR sample of
 * a binary profiled without contexts), the unwinder's ranges and branches
 * per address context (call sites outermost first, recursion compressed,
 * then the leaf function's entry), and for IP samples the observations as
 * the stacks show them: hits per context and address, calls per caller
 * context and call site to a callee, and hits whose direct caller the stack
 * skipped. Tail-call frame inference, depth trimming, flow inference and the
 * pre-inliner run after the merge, on the sum: generating from merged raw
 * profiles runs the same code, on the same numbers, as generating from the
 * recordings themselves.
 *
 * Merging adds counts per context (the same address list is the same
 * context). A version-1 file reads as flat counts only (version = 1).
 */
#ifndef PK_RAWPROF2_H
#define PK_RAWPROF2_H

#include "unwind/ip_stack.h"

typedef struct pk_rawprof2 {
    uint32_t version;            /* of the file read (1 or 2); 2 when built in memory */
    uint32_t flags;              /* PK_RAW_CALLS_ONLY */
    pk_rawprof flat;             /* the binary; the empty context's ranges and branches; aggregation stats */
    pk_csraw lbr;                /* ranges and branches per context (pk_csraw keys) */
    pk_unwind_stats unwind;
    /* IP observations per context, in pk_csraw's key shape: ranges are the
     * hits (ctx << 32 | address offset, 0), branches the calls
     * (ctx << 32 | call-site offset, callee entry offset) */
    pk_csraw ip;
    pk_pairmap ip_unplaced;      /* (function entry offset, address offset) → samples */
    pk_ip_stats ip_stats;
} pk_rawprof2;

int pk_rawprof2_init(pk_rawprof2 *r, const char *path, const uint8_t *build_id, uint8_t build_id_size,
                     uint64_t preferred_base, pk_err *err);
void pk_rawprof2_free(pk_rawprof2 *r);
/* Whether it holds calling contexts (LBR) / IP observations. */
bool pk_rawprof2_has_contexts(const pk_rawprof2 *r);
bool pk_rawprof2_has_ip(const pk_rawprof2 *r);
/* Reads a version-1 or version-2 file; r is initialised by the call.
 * Corrupt or truncated input: an error naming the file and byte offset. */
int pk_rawprof2_read(pk_rawprof2 *r, const char *path, pk_err *err);
int pk_rawprof2_read_mem(pk_rawprof2 *r, const uint8_t *data, size_t size, const char *path, pk_err *err);
/* Writes a version-2 file, atomically. Only contexts that have counts are
 * written, numbered in the order of their addresses, entries sorted: equal
 * contents give equal bytes whatever order they were gathered in. */
int pk_rawprof2_write(const pk_rawprof2 *r, const char *path, pk_err *err);
/* Adds src into dst: the same binary (as pk_rawprof_merge decides);
 * contexts cannot be rebased (equal build-ids always share the base). */
int pk_rawprof2_merge(pk_rawprof2 *dst, const pk_rawprof2 *src, pk_err *err);

/* ---- the profgen pipeline's side ---- */

/* Writes the counters of a run as they are before generation: flat counts
 * (and the binary) in `flat`, contexts in `cs` (NULL: none), IP
 * observations in `ip` (NULL: none; its call observations are recorded
 * first, pk_ipraw_record_calls). Nothing is copied or freed. */
int pk_rawprof2_write_parts(const pk_rawprof *flat, const pk_csraw *cs, uint32_t flags,
                            const pk_unwind_stats *unwind, pk_ipraw *ip, const char *path, pk_err *err);

/* Where a raw profile's counts go in a run: flat counts into `flat`
 * (the same binary, pk_rawprof_merge), contexts into `cs` trimmed to their
 * max_depth innermost call sites (< 0: all) or, when cs is NULL, summed into
 * `flat` (contexts_flattened says so), IP observations into `ip` (NULL:
 * left out, ip_unused says so), unwinding statistics added to `unwind`. */
typedef struct pk_rawprof2_sink {
    pk_rawprof *flat;
    pk_csraw *cs;
    int max_depth;
    pk_ipraw *ip;
    pk_unwind_stats *unwind;
    bool contexts_flattened, ip_unused;
} pk_rawprof2_sink;
int pk_rawprof2_add_to(const pk_rawprof2 *r, pk_rawprof2_sink *sink, pk_err *err);

#endif

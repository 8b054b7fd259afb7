/* preinline.h — the CSSPGO pre-inliner (the paper's Algorithm 2) and the
 * context-sensitive code sizes it decides with (Algorithm 3).
 *
 * Context sizes: every instruction of every profiled function is attributed,
 * with its byte size, to its full inline context (DWARF inline frames; in
 * probe binaries the call-site locations are the call probes encoded in the
 * call discriminators), in a callee-first trie. The size of a context is the
 * size of the longest matching suffix; a context never seen in the binary
 * falls back to the same function's size under another context. Inlinees
 * whose code was optimized away but whose probes remain get size 0.
 *
 * Pre-inliner: over the profiled call graph (context trie edges, weights
 * summed per caller-callee pair, pairs heavier than the cold threshold),
 * functions are visited top-down (pk_cg_top_down: a recursion cycle from
 * the callers of its hottest edges). For each, all its
 * contexts not chosen for inlining by a caller are merged, with their whole
 * subtrees, into its base profile [f]; then its callee contexts are inlined
 * hottest first while the size stays under min(max(size × growth, min),
 * max) and each candidate's size is under a threshold that grows with the
 * call count (llvm-profgen's defaults: hot 1500, cold 0, growth 12, min 100,
 * max 50000, ×100 when the binary had inlined that context). Kept contexts
 * are marked ContextShouldBeInlined; the rest end up in base profiles.
 * pk_cs_nest then turns the flat result into the nested form clang reads.
 */
#ifndef PK_PREINLINE_H
#define PK_PREINLINE_H

#include "binary/binary.h"
#include "binary/probe_loader.h"
#include "profgen/cg_order.h"
#include "profile/profile.h"

typedef struct pk_ctx_sizes pk_ctx_sizes;

/* Sizes for the functions named in `ps` (frames of any context), from the
 * binary's instructions and DWARF. `probe_locations`: outer-frame locations
 * are probe ids decoded from call discriminators (probe binaries). */
int pk_ctx_sizes_build(pk_ctx_sizes **out, pk_binary *bin, const pk_profset *ps,
                       bool probe_locations, pk_err *err);
void pk_ctx_sizes_free(pk_ctx_sizes *s);

/* Size in bytes of a context (frames outermost first, as in pk_profset). */
uint32_t pk_ctx_sizes_lookup(const pk_ctx_sizes *s, const pk_ctx_frame *frames, size_t n);
/* Marks (size 0) a context whose code is gone but which the binary still
 * describes (an inline-tree node with probes and no instructions). */
int pk_ctx_sizes_add(pk_ctx_sizes *s, const pk_ctx_frame *frames, size_t n, uint32_t bytes, pk_err *err);
/* Probe binaries: every body of the probe inline trees of the functions the
 * profile names that still has probes gets a known size, 0 where no
 * instruction is left of it (an inlinee optimized away), as llvm-profgen's
 * trackInlineesOptimizedAway. Without it such a context took the size of
 * its function elsewhere (its outlined copy, often hundreds of bytes), so
 * the pre-inliner refused a context that costs nothing and merged its
 * counts into the base profile. */
int pk_ctx_sizes_add_probed(pk_ctx_sizes *s, const pk_probe_info *pi, pk_err *err);

/* One step of the pre-inliner, for a caller that wants to see why each
 * context was kept or merged (profgen --trace-preinline). */
typedef struct pk_preinline_step {
    /* OTHER_UNIT: small and hot enough, but its body is not in the unit
     * the function is compiled in (pk_preinline_opts.can_inline) */
    enum { PK_PI_FUNCTION, PK_PI_INLINE, PK_PI_KEEP_CALL, PK_PI_OVER_LIMIT, PK_PI_OTHER_UNIT } what;
    /* FUNCTION: the function whose base profile is processed (frames: just
     * it); the others: the candidate context, outermost frame first */
    const pk_ctx_frame *frames;
    size_t nframes;
    uint64_t count;                   /* max(call-site count, callee head estimate) */
    uint32_t size;                    /* the candidate's (or function's) code size */
    double threshold;                 /* size under which it is inlined */
    uint64_t final_size, limit;       /* the function's size so far, and its limit */
    bool was_inlined;                 /* the binary had inlined the candidate context */
} pk_preinline_step;

typedef struct pk_preinline_opts {
    uint32_t hot_threshold;           /* 1500 */
    uint32_t cold_threshold;          /* 0 */
    uint32_t growth_limit;            /* 12 */
    uint32_t limit_min, limit_max;    /* 100, 50000 */
    uint32_t prev_inline_multiplier;  /* 100 */
    bool replay;                      /* keep exactly what the binary inlined */
    bool use_sample_count_size;       /* size = number of body samples, not bytes */
    int cycle_order;                  /* enum pk_cg_cycle_order: members of a recursion cycle */
    /* Whether the compiler can inline `callee` into the function `root` at
     * all (without LTO: only callees of root's own compilation unit, see
     * pk_dwarf_units_can_inline); NULL: anything can, as llvm-profgen has it. */
    bool (*can_inline)(void *ctx, const char *root, const char *callee);
    void *can_inline_ctx;
    /* every decision, in order (NULL: none); names through ps */
    void (*trace)(void *ctx, const pk_profset *ps, const pk_preinline_step *step);
    void *trace_ctx;
} pk_preinline_opts;

void pk_preinline_defaults(pk_preinline_opts *o);

typedef struct pk_preinline_stats {
    uint64_t functions;               /* visited top-down */
    uint64_t inlined, not_inlined;    /* candidate decisions */
    uint64_t other_unit;              /* of not_inlined: its body is in another unit */
    uint64_t hit_size_limit;          /* functions that stopped on the size limit */
    uint64_t merged_into_base;        /* context profiles merged into a base profile */
    uint64_t contexts_before, contexts_after;
} pk_preinline_stats;

/* Runs on a flat context-sensitive set (PK_PROF_CS) in place. `sizes` may be
 * NULL when o->use_sample_count_size is set. */
int pk_preinline(pk_profset *ps, const pk_ctx_sizes *sizes, const pk_preinline_opts *o,
                 pk_preinline_stats *st, pk_err *err);
/* pk_preinline in two halves: _start builds what needs no code sizes (the
 * context trie, the summary's thresholds) on a thread of its own while the
 * caller builds the sizes (both only read ps); _finish waits, decides and
 * merges, and frees the job. Without a thread, _start does its half at once. */
typedef struct pk_preinline_job pk_preinline_job;
int pk_preinline_start(pk_preinline_job **job, pk_profset *ps, pk_err *err);
int pk_preinline_finish(pk_preinline_job *job, const pk_ctx_sizes *sizes, const pk_preinline_opts *o,
                        pk_preinline_stats *st, pk_err *err);
/* Ends a started job without pre-inlining (the caller failed meanwhile):
 * waits for its thread and frees it; ps is left as it was. */
void pk_preinline_cancel(pk_preinline_job *job);

/* Cold-context merging for flat CS profiles (llvm-profgen's
 * --csprof-merge-cold-context, on when the pre-inliner is off): a context
 * whose total is below the hot threshold (99% cutoff) is merged into its
 * last `keep_frames` frames (1: the function's base profile), so only hot
 * functions keep full contexts. With `drop`, such cold contexts are removed
 * instead (--trim-cold-profile). Returns the number of contexts merged. */
int pk_cs_merge_cold(pk_profset *ps, uint32_t keep_frames, bool drop, uint64_t *merged, pk_err *err);

/* Flat context-sensitive `in` → nested profile in `out` (an initialised,
 * normally empty set): every context under its caller's call site, the call
 * target it replaces removed from the caller; contexts whose caller has no
 * profile become top-level. `in` is not modified. */
int pk_cs_nest(const pk_profset *in, pk_profset *out, pk_err *err);

#endif

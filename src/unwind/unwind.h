/* unwind.h — the CSSPGO virtual unwinder: synchronized stack + LBR samples
 * → fall-through ranges and taken branches, each attributed to its full
 * calling context (the CSSPGO paper's Algorithm 1; llvm-profgen.md §4.1).
 *
 * A sample's call stack says where the program was when the sample was
 * taken; its LBR says how it got there. Walking the LBR from the newest
 * branch to the oldest, the unwinder moves backwards in time: crossing a
 * call backwards pops a frame (we were in the callee, we go back to the
 * caller), crossing a return backwards pushes one (we were in the caller
 * after the return, we go back into the callee at its ret), other branches
 * move within the frame. Each range of straight-line code between two
 * branches is recorded under the context current at that point.
 *
 * Contexts are address-based: the list of call-site addresses (link-time
 * vaddrs of the call instructions), outermost first, followed by the entry
 * address of the leaf function (0 if unknown) — so that a leaf reached by a
 * tail call can have its missing frames inferred like any other pair. Symbolization
 * (DWARF inline frames or pseudo-probe inline chains) happens later, once
 * per distinct context and address, not per sample. Recursion is compressed
 * and depth limited when a context is interned.
 *
 * Everything here is on link-time addresses of one binary: the caller maps
 * runtime addresses first (pk_agg_translate) and passes PK_AGG_EXTERNAL for
 * addresses outside the binary.
 */
#ifndef PK_UNWIND_H
#define PK_UNWIND_H

#include "aggregate/aggregate.h"

/* What the unwinder needs to know about the code. */
typedef struct pk_unwind_code {
    void *ctx;
    /* PK_INSN_* class of the instruction starting at vaddr; -1 when vaddr is
     * not an instruction boundary of a known function. */
    int (*insn_class)(void *ctx, uint64_t vaddr);
    /* The address of the call instruction that ends exactly at vaddr (vaddr
     * is a return address); -1 when the instruction before vaddr is not a call. */
    int (*call_before)(void *ctx, uint64_t vaddr, uint64_t *call_addr);
    /* Entry address of the function containing vaddr; 0 when unknown. *end
     * gets where the addresses that share this answer stop: the function's
     * end, or the next function's start if that comes first (entry + 1 is
     * always safe). */
    uint64_t (*func_entry)(void *ctx, uint64_t vaddr, uint64_t *end);
    /* Whether vaddr is one of the first two instructions of its function, a
     * return, or the instruction before one: a frame-pointer stack taken
     * there misses its caller or still shows the returning frame. May be
     * NULL (never). */
    bool (*prolog_epilog)(void *ctx, uint64_t vaddr);
    /* The address of the first instruction at or after vaddr, in vaddr's
     * function, that never falls through (pk_insn_is_uncond: a jump, call or
     * return); UINT64_MAX when there is none or nothing is known. May be
     * NULL (every range could have run). */
    uint64_t (*next_uncond)(void *ctx, uint64_t vaddr);
} pk_unwind_code;

/* The pk_binary implementation of pk_unwind_code (bin must outlive it). */
struct pk_binary;
void pk_unwind_code_from_binary(pk_unwind_code *code, struct pk_binary *bin);

/* Counters for the closing summary: why samples or parts of them were lost. */
typedef struct pk_unwind_stats {
    uint64_t samples, samples_unwound;
    uint64_t walks;                       /* LBR walks: identical samples share one */
    uint64_t walks_here;                  /* of those, walked on the reading thread (worker busy) */
    uint64_t samples_no_lbr, samples_no_stack;
    uint64_t samples_prolog_epilog;       /* dropped: leaf in a prologue or epilogue (drop_prolog_epilog_leaf) */
    uint64_t stack_truncated_external;    /* callers above an address outside the binary */
    uint64_t stack_truncated_not_call;    /* return address not preceded by a call */
    uint64_t call_mismatch;               /* LBR call source differs from the stack's call site */
    uint64_t return_not_after_call;       /* LBR return target not preceded by a call */
    uint64_t outside_entries;             /* LBR entries whose source is outside the binary's functions */
    uint64_t ranges, ranges_dropped;      /* recorded / invalid (backwards, too long, half external) */
    uint64_t branches;
    uint64_t recursion_compressed;        /* frames removed by recursion compression (once per distinct stack and leaf) */
    uint64_t depth_trimmed;               /* frames removed by the depth limit (likewise) */
    uint64_t entries_after_break;         /* LBR entries at or before a range that cannot have run:
                                             counted without calling context */
} pk_unwind_stats;

/* The context-sensitive raw profile: interned address contexts and, per
 * context, range and branch counts. Addresses are stored as offsets from
 * `base` (the binary's preferred base) and must be below 4 GiB from it. */
#define PK_CS_EXTERNAL_OFF 0xffffffffu

typedef struct pk_csraw {
    uint64_t base;
    pk_vec frames;            /* uint64_t: call-site vaddrs then the leaf entry, per context */
    pk_vec ctxs;              /* struct pk_cs_ctx */
    pk_u64map ctx_by_hash;    /* hash of the address list → ctx id + 1 (probing on collisions) */
    pk_pairmap ranges;        /* (ctx << 32 | begin offset, end offset) → count */
    pk_pairmap branches;      /* (ctx << 32 | source offset or PK_CS_EXTERNAL_OFF, target offset) → count */
} pk_csraw;

typedef struct pk_cs_ctx {
    uint32_t first, len;      /* slice of frames */
} pk_cs_ctx;

int pk_csraw_init(pk_csraw *r, uint64_t base, pk_err *err);
void pk_csraw_free(pk_csraw *r);
/* Interns a context (call-site vaddrs outermost first, then the leaf entry). */
int pk_csraw_intern(pk_csraw *r, const uint64_t *sites, uint32_t n, uint32_t *ctx, pk_err *err);
static inline const uint64_t *pk_csraw_ctx(const pk_csraw *r, uint32_t ctx, uint32_t *n)
{
    const pk_cs_ctx *c = &PK_VEC_AT(&r->ctxs, pk_cs_ctx, ctx);
    *n = c->len;
    return &PK_VEC_AT(&r->frames, uint64_t, c->first);
}
static inline size_t pk_csraw_num_ctxs(const pk_csraw *r) { return r->ctxs.len; }
/* Replaces r by out (contexts already interned there) after adding r's
 * counts to out under the context ids newid[old id]; r's old storage is freed.
 * On failure r is untouched and out still the caller's to free. */
int pk_csraw_move_counts(pk_csraw *r, pk_csraw *out, const uint32_t *newid, pk_err *err);
/* Renumbers the contexts in the order of their address lists, so that what
 * is built from them does not depend on the order samples came in (several
 * inputs, identical samples unwound late). */
int pk_csraw_canonicalize(pk_csraw *r, pk_err *err);
/* Interns every context of `from` into `out` in the canonical order (sorted
 * by their addresses); newid[old id] = id in out. */
int pk_csraw_intern_sorted(const pk_csraw *from, pk_csraw *out, uint32_t *newid, pk_err *err);
/* Adds src's contexts and counts to dst (src unchanged). */
int pk_csraw_merge(pk_csraw *dst, const pk_csraw *src, pk_err *err);
/* Adds src's contexts and counts to dst with every context trimmed to its
 * max_depth innermost call sites (< 0: as they are), as the unwinder trims
 * them when it interns a context; contexts that become equal add up. */
int pk_csraw_merge_trimmed(pk_csraw *dst, const pk_csraw *src, int max_depth, pk_err *err);
/* Adds src's counts, summed over its contexts, to a flat profile (its
 * ranges and branches keyed by vaddrs). */
int pk_csraw_add_flat(const pk_csraw *src, pk_rawprof *flat, pk_err *err);
/* Adds a count to context ctx: kind 0 a range (a..b), 1 a branch (a, or
 * PK_AGG_EXTERNAL, -> b); vaddrs must lie within 4 GiB above the base. */
int pk_csraw_add(pk_csraw *r, uint32_t ctx, int kind, uint64_t a, uint64_t b, uint64_t n, pk_err *err);
/* Decodes a range/branch key back into (ctx, begin/source vaddr or
 * PK_AGG_EXTERNAL, end/target vaddr). */
void pk_csraw_key(const pk_csraw *r, const pk_pair_count *e, uint32_t *ctx, uint64_t *a, uint64_t *b);

typedef struct pk_unwind_opts {
    int max_depth;            /* keep at most this many innermost call sites; < 0: unlimited */
    int compress_recursion;   /* longest repeated sequence removed; < 0: any length, 0: off */
    uint64_t max_range_len;   /* bytes; 0 → 1 MiB */
    /* pk_unwind_perf_sample walks samples on a second thread, overlapping
     * them with the reading (same result; worth it with two or more CPUs). */
    bool worker;
    /* With a worker: the reading thread also walks every Nth sample itself
     * (0: only when the worker is behind). Tests use it to exercise the
     * merge of the two threads' profiles deterministically. */
    uint32_t walk_here_every;
    /* Keep only the branches probe-based profiles use: calls, and jumps to a
     * function's entry (tail calls: missing-frame inference needs them). The
     * rest, nine in ten, are only counted. */
    bool calls_and_entries_only;
    /* A sample whose leaf is outside the binary keeps the binary's callers
     * below that code even when its branch stack shows no call back into
     * the binary (llvm-profgen's choice; see pk_unwind_sample). */
    bool outside_leaf_full_context;
    /* Drop samples whose leaf is in a prologue or epilogue
     * (pk_unwind_code.prolog_epilog), as llvm-profgen does: there a
     * frame-pointer stack misses the caller or still holds the returning
     * frame. With exact stacks (emulated recordings) nothing is wrong with
     * them, but CSSPGO profiles without them measured better on three of
     * five programs and level on the other two
     * (bench/results/cs-generalize-2026-11-27.md). */
    bool drop_prolog_epilog_leaf;
} pk_unwind_opts;

typedef struct pk_unwinder pk_unwinder;

pk_unwinder *pk_unwinder_new(const pk_unwind_code *code, const pk_unwind_opts *opts,
                             pk_csraw *out, pk_err *err);
void pk_unwinder_free(pk_unwinder *u);

/* Unwinds one sample given in link-time addresses (PK_AGG_EXTERNAL outside
 * the binary): `stack` is the call chain without context markers, leaf
 * first (stack[0] is the sample IP, then return addresses); `lbr` newest
 * first. */
int pk_unwind_sample(pk_unwinder *u, const uint64_t *stack, size_t nstack,
                     const pk_branch *lbr, size_t nlbr, uint64_t weight, pk_err *err);
const pk_unwind_stats *pk_unwinder_stats(const pk_unwinder *u);
/* Appends to `out` (uint64_t) the distinct return addresses at which stacks
 * were cut for not following a call (stack_truncated_not_call: a caller
 * without frame pointer), ascending: llvm-profgen's "invalid return
 * addresses" (its --show-detailed-warning). */
int pk_unwinder_bad_returns(const pk_unwinder *u, pk_vec *out, pk_err *err);
/* Appends the keys of an address set (a pk_u64map) to `out`, ascending. */
int pk_unwind_addr_list(const pk_u64map *set, pk_vec *out, pk_err *err);
/* Adds every counter of `from` to `into` (one run's stats to a total). */
void pk_unwind_stats_add(pk_unwind_stats *into, const pk_unwind_stats *from);

/* Glue for the perf reader, in place of pk_agg_on_sample: counts the
 * sample in the aggregator's statistics (not its ranges and branches),
 * translates its call chain and LBR through the aggregator's address spaces
 * (which must have seen the mmap, comm and task events before) and unwinds
 * it. Identical samples are unwound once with their count as weight, so
 * some are held back until pk_unwinder_finish, which must be called once
 * the input is read. */
int pk_unwind_perf_sample(pk_unwinder *u, pk_agg *agg, const pk_sample *s, pk_err *err);
int pk_unwinder_finish(pk_unwinder *u, pk_err *err);

/* ---- missing-frame inference for tail calls (llvm-profgen.md §4.8) ----
 * A function that ends in a tail call (jmp to another function) leaves no
 * frame: the context shows its caller calling a function it never calls.
 * For each adjacent pair of call sites in a context, when the function
 * reached is not what the call site calls but is reachable from it through
 * exactly one chain of tail calls (seen in the LBR or in the code), the tail
 * call sites are spliced in. Ambiguous chains are left alone and counted.
 *
 * PK_TAILCALL_INDIRECT_JUMPS: when no chain of direct or sampled tail calls
 * exists, an indirect jump (jmp *reg / *mem, BR) may be the tail call, to
 * the callee itself; spliced when that too is the only chain. For contexts
 * from IP samples, where no tail call is ever sampled: SQLite's getCellInfo
 * ends in `pPage->xParseCell(...)`, a jump through a function pointer, and
 * without its frame the hottest cell parsers' samples were charged to a
 * call site that calls getCellInfo (llvm-profgen, with LBR, learns such
 * edges from the branches and does not guess). */
#define PK_TAILCALL_INDIRECT_JUMPS 1u
typedef struct pk_tailcall_stats {
    uint64_t pairs;               /* adjacent call-site pairs examined */
    uint64_t mismatched;          /* callee is not the call's target: frames are missing */
    uint64_t recovered;           /* ... and a unique tail-call chain was spliced in */
    uint64_t ambiguous;           /* several chains */
    uint64_t unreachable;         /* no chain found */
    uint64_t through_indirect;    /* of recovered: through an indirect jump */
    uint64_t frames_added;
    uint64_t tail_call_edges;     /* distinct tail-call edges known */
} pk_tailcall_stats;

/* Rewrites the contexts of `raw` in place (counts are kept; contexts that
 * become equal are merged), renumbered in the canonical order that
 * pk_csraw_canonicalize gives. `max_depth` bounds the chain search (0: 64).
 * `added_sites` (may be NULL) gets, as keys, the call sites of the frames
 * spliced in: the only addresses of the new contexts the old ones lacked. */
int pk_infer_tail_frames(pk_csraw *raw, struct pk_binary *bin, uint32_t max_depth, unsigned flags,
                         pk_tailcall_stats *st, pk_u64map *added_sites, pk_err *err);

#endif

/* ip_stack.h — IP + call-stack samples → instruction hits per calling context.
 *
 * A sample without a branch stack says where one instruction was (the leaf
 * frame) and, through its call chain, who called it. There is no path to
 * walk: the context is the chain itself. Return addresses become call sites
 * (the call instruction before each), outermost first, followed by the leaf
 * function's entry — the same address contexts the LBR unwinder builds, so
 * everything downstream (tail-call frame inference, symbolization, the
 * generators) is shared once flow inference has turned hits into ranges and
 * branches (infer/ip_ranges.c).
 *
 * Besides the hit of the leaf, each sample says, for every frame above it,
 * that the caller's call site was calling the frame below: those
 * observations are what gives call targets (indirect calls included) and
 * ties a callee's entry count to its callers' call-site blocks.
 *
 * Frames are link-time addresses of the target binary (PK_AGG_EXTERNAL for
 * others), leaf first, as pk_agg_translate_user_chain gives them. A chain is
 * cut at the first frame outside the binary or whose return address does not
 * follow a call (frame-pointer chains through code without frame pointers),
 * and the cut is counted.
 */
#ifndef PK_IP_STACK_H
#define PK_IP_STACK_H

#include "unwind/unwind.h"

typedef struct pk_ip_stats {
    uint64_t samples;            /* samples without a branch stack looked at */
    uint64_t used;               /* leaf in one of the binary's functions: counted */
    uint64_t leaf_outside;       /* leaf in other code (libraries, kernel, vDSO) */
    uint64_t leaf_no_func;       /* leaf in the binary but in no function symbol */
    uint64_t no_user_frames;     /* a kernel-only chain */
    uint64_t stack_cut_external; /* callers dropped above a frame in other code */
    uint64_t stack_cut_not_call; /* callers dropped above a return address not after a call */
    uint64_t stack_cut_frame;    /* the direct caller unknown: the leaf has no frame pointer of its
                                    own, or was in a prologue or at a ret, where a frame-pointer
                                    chain skips it; its hit is shared out over the function's
                                    contexts (see pk_ipraw_finish) */
    uint64_t frames_repaired;    /* ... and put back: the first call site called a function with
                                    exactly one direct call to the leaf's function */
    uint64_t frames_minus_one;   /* return addresses found one byte further (pprof's pc-1 convention) */
    uint64_t no_frame_pointer;   /* of stack_cut_frame + frames_repaired: the leaf's function sets up
                                    no frame pointer at all (built without one), not a prologue or
                                    a ret: pk_ip_frame_pointer_warning */
    uint64_t recursion_compressed, depth_trimmed;
    uint64_t distinct_stacks;
    /* (appended: raw profiles keep these counters by position) */
    uint64_t stacks_unwound;     /* chains unwound from the sample's stack copy with the binary's CFI
                                    (perf record --call-graph dwarf) */
    uint64_t stacks_unwound_short; /* ... that stopped inside the binary: no FDE, a saved value outside
                                    the copy (a deep stack), a rule not evaluated */
    uint64_t time_weighted;      /* of samples: from an event that fires on time (cpu-clock, cycles:
                                    pk_perf_attr_counts_time), not on retired instructions */
    uint64_t stacks_unwound_leaf; /* of stacks_unwound_short: stopped before the leaf's direct caller
                                    (a copy shorter than the leaf's frame, the leaf without an FDE) */
    uint64_t stacks_unwound_no_fde; /* of stacks_unwound_short: stopped at code no FDE covers */
} pk_ip_stats;

typedef struct pk_ipraw {
    pk_csraw ctxs;               /* contexts only (its range and branch maps stay empty) */
    pk_pairmap hits;             /* (ctx << 32 | offset, 0) → samples */
    pk_pairmap calls;            /* (ctx << 32 | call-site offset, callee entry offset) → samples below */
    /* hits whose callers a frame-pointer chain skipped (leaf in a prologue
     * or at a ret): (leaf entry offset, address offset) → samples, shared
     * out over the leaf function's contexts at the end */
    pk_pairmap unplaced;
    pk_pairmap repairs;          /* (caller entry, callee entry) → its unique call site + 1, or 1 */
    pk_ip_stats stats;
    /* distinct stacks (callers and leaf entry), so that the contexts and
     * call observations of a stack are built once, not per sample */
    pk_csraw stacks;
    pk_vec stack_info;           /* struct pk_ip_stack per stack id */
    pk_unwind_code code;
    /* When set, the bytes of the code: a leaf sampled before its frame
     * pointer is set up (push %rbp; mov %rsp,%rbp) or at its ret has a
     * chain whose first return address belongs to its caller's caller. */
    const struct pk_elf *elf;
    int max_depth;               /* call sites kept per context; 0: the leaf function only */
    bool allow_minus_one;        /* non-leaf frames may be return address - 1 */
    bool calls_recorded;         /* pk_ipraw_record_calls ran */
    pk_u64map bad_returns;       /* distinct return addresses not after a call (stack_cut_not_call) */
    uint64_t *scratch;
    size_t scratch_cap;
    /* address → (call site | function entry) cache */
    struct pk_ip_addr *cache;
} pk_ipraw;

/* max_depth < 0: unlimited (recursion is compressed either way). */
int pk_ipraw_init(pk_ipraw *r, const pk_unwind_code *code, uint64_t base, int max_depth, pk_err *err);
void pk_ipraw_free(pk_ipraw *r);
/* One sample: frames leaf first (translated), weight = how many samples. */
int pk_ipraw_add(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, pk_err *err);
/* The same for a chain unwound with CFI (unwind/stack_cfi.h): every frame
 * is the caller of the one below, so none of a frame-pointer chain's
 * repairs apply (a leaf in a prologue or without a frame pointer keeps its
 * direct caller). */
int pk_ipraw_add_unwound(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, pk_err *err);
/* Builds the call observations of every distinct stack seen so far, and
 * shares the hits whose callers are unknown (a prologue or a ret under a
 * frame-pointer chain) out over their function's contexts in proportion to
 * the samples each context has: a prologue runs once per call, in the same
 * contexts as the rest of the function (left in the leaf-only context,
 * such hits starved the entry block of every real context). Contexts are
 * then numbered in the order of their address lists (what is inferred from
 * them does not depend on the order samples or raw profiles came in). Call
 * once after the last sample; adding more samples afterwards is an error. */
int pk_ipraw_finish(pk_ipraw *r, pk_err *err);

/* The call observations of every distinct stack seen so far, into `calls`
 * (what pk_ipraw_finish does first; a raw profile records them, so that
 * the stacks themselves need not be kept). Further samples are an error. */
int pk_ipraw_record_calls(pk_ipraw *r, pk_err *err);
/* Adds observations recorded by another run (a raw profile): contexts of
 * `obs` (pk_csraw key shape: ranges = hits, branches = calls), trimmed to
 * this profile's max_depth (recursion was compressed when they were
 * recorded), the hits whose callers were unknown, and the statistics. */
int pk_ipraw_add_recorded(pk_ipraw *r, const pk_csraw *obs, const pk_pairmap *unplaced, const pk_ip_stats *stats,
                          pk_err *err);

/* The context of `callee` called from `site` inside context `parent`
 * (interned if new): where the entries a call observation speaks of land. */
int pk_ipraw_child(pk_ipraw *r, uint32_t parent, uint64_t site, uint64_t callee, uint32_t *ctx, pk_err *err);

/* Decodes a hit or call key back into (ctx, address, address-or-0). */
static inline void pk_ipraw_key(const pk_ipraw *r, const pk_pair_count *e, uint32_t *ctx, uint64_t *a, uint64_t *b)
{
    *ctx = (uint32_t)(e->a >> 32);
    *a = r->ctxs.base + (uint32_t)e->a;
    *b = r->ctxs.base + e->b;
}

/* The context-free observations of a finished `deep` profile into `flat`
 * (initialized by the caller, max_depth 0, not yet finished): every hit and
 * call observation under its leaf function's own context, as if the
 * samples had been read without their stacks. Finishes `flat`. */
int pk_ipraw_flatten(const pk_ipraw *deep, pk_ipraw *flat, pk_err *err);
/* Adds every counter of `from` to `into`. */
void pk_ip_stats_add(pk_ip_stats *into, const pk_ip_stats *from);

/* Removes adjacent repetitions of windows of 1..max_len sites in place
 * (a b a b c → a b c); max_len < 0: any length. Returns the new length. */
size_t pk_compress_recursion(uint64_t *s, size_t n, int max_len);

/* One line for the user when more than 3 % of the used samples lost their
 * direct caller because their code has no frame pointer: what, how many,
 * the compiler flags that fix it. 0 and buf[0] = 0 when there is nothing to
 * say, else the length written (truncated to cap). */
int pk_ip_frame_pointer_warning(const pk_ip_stats *s, char *buf, size_t cap);
/* The same for stack copies (--call-graph dwarf) when more than 10 % of the
 * unwound chains stopped at code no FDE covers (built without unwind
 * tables). Chains cut at the end of a copy are not warned about: short
 * copies are what record takes by itself, and the loss that matters, calls
 * through pointers without a callee, has its own warning
 * (pk_ip_icall_warning). */
int pk_ip_cfi_warning(const pk_ip_stats *s, char *buf, size_t cap);
/* A note when most samples come from an event that fires on time: what it
 * does to the counts, and the event that weighs code by execution instead
 * (0 and buf[0] = 0 when there is nothing to say). */
int pk_ip_time_weight_note(const pk_ip_stats *s, char *buf, size_t cap);

#endif

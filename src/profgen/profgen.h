/* profgen.h — raw profile (ranges, branches) → sample profile.
 *
 * The line-based (AutoFDO) generator, with llvm-profgen's semantics where the
 * compiler depends on them (llvm-profgen.md §3):
 *   - ranges become per-instruction counts (instruction boundaries from the
 *     lazy decoder, only for functions that received samples); a range that
 *     does not start and end on instructions of one function, or that crosses
 *     an unconditional jump / call / return, is dropped and counted;
 *   - every instruction of a sampled function is symbolized (inline frames);
 *     its innermost location (line offset from the function's start line,
 *     base discriminator) gets MAX(count × duplication factor) over the
 *     location's instructions; unexecuted instructions give explicit 0 lines;
 *   - inline frames become nested callsite profiles;
 *   - branches into a function's entry from a call (or a tail-call jump into
 *     another function) give call targets at the call's location and head
 *     samples of the callee; branches from outside the binary give head
 *     samples only;
 *   - body lines are raised to the sum of their call targets;
 *   - totals: per byte of code (llvm-profgen, AutoFDO) or the sum of what is
 *     inside (body samples and inlinee totals).
 */
#ifndef PK_PROFGEN_H
#define PK_PROFGEN_H

#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "profile/profile.h"

enum pk_total_mode {
    PK_TOTAL_PER_BYTE = 0,       /* Σ count × instruction bytes (llvm-profgen) */
    PK_TOTAL_SUM,                /* Σ body samples + Σ inlinee totals */
};

typedef struct pk_profgen_opts {
    int total_mode;              /* enum pk_total_mode */
    bool no_dup_factor;          /* do not multiply by the duplication factor */
    /* Context-sensitive profiles: repeated windows of caller frames removed
     * from each context (llvm-profgen's --compress-recursion): 0 windows of
     * any length (the default), N > 0 windows up to N frames, < 0 none. */
    int compress_recursion;
    /* and only the max_context_depth innermost caller frames kept
     * (--csprof-max-context-depth), when depth_limited */
    bool depth_limited;
    uint32_t max_context_depth;
    /* line-based flat: every DWARF function of the binary gets a profile,
     * unsampled lines at 0 (llvm-profgen's --fill-zero-for-all-funcs) */
    bool fill_zero_all;
    /* line-based flat: a line's count is the sum of its instructions', no
     * duplication factor (instruction-pointer samples: llvm-profgen's
     * --leading-ip-only), instead of their maximum times the factor */
    bool sum_lines;
    /* contexts: a sample whose leaf is outside the binary keeps its callers
     * in the binary even without a callback in its branch stack, as
     * llvm-profgen does (pk_unwind_opts.outside_leaf_full_context) */
    bool outside_leaf_full_context;
    /* contexts: samples whose leaf is in a prologue or epilogue are kept;
     * by default they are dropped (pk_unwind_opts.drop_prolog_epilog_leaf) */
    bool keep_prolog_epilog_leaf;
    /* line-based flat: the ranges are counted as given, every instruction
     * of a DWARF function from a range's start to its end (the last
     * instruction's address), whether or not the range could have run
     * straight: ranges an unsymbolized profile text states, not pairs of
     * LBR entries to check (llvm-profgen's reading of that text) */
    bool ranges_as_given;
} pk_profgen_opts;

/* The caller frames of a context (ctx[0..n), outermost first) after
 * recursion compression and depth trimming as opts asks: returns the index
 * of the first frame kept; ctx[that..new n) are the frames, *n updated. */
size_t pk_profgen_shape_context(const pk_profgen_opts *opts, void *ctx, size_t *n, size_t elem);

typedef struct pk_profgen_stats {
    uint64_t ranges_in, ranges_used;          /* distinct ranges */
    uint64_t range_samples_used;              /* Σ counts of used ranges */
    uint64_t range_drop[PK_RANGE_DROP_N];     /* Σ counts, profgen reasons only */
    uint64_t branches_in;                     /* distinct branches */
    uint64_t calls, tail_calls, external_entries; /* Σ counts */
    uint64_t branches_not_call;               /* into an entry, not from a call/jump */
    uint64_t functions_sampled;               /* DWARF function ranges decoded */
    uint64_t insns_decoded, insns_symbolized;
    uint64_t insns_no_debug;                  /* instructions without line info */
    uint64_t insns_discriminated;             /* symbolized with a discriminator in some frame */
    uint64_t insns_line_split;                /* ran another number of times than the one before
                                                 them on the same line (a line over blocks) */
    uint64_t profiles;                        /* top-level profiles written */
    uint64_t total_samples;                   /* Σ top-level totals */
    uint64_t body_samples;                    /* Σ body counts */
    bool fs_discriminators;
} pk_profgen_stats;

/* Builds the line-based profile of `raw` (addresses = link-time vaddrs of
 * `bin`) into `out` (an initialised, normally empty set). */
int pk_profgen_line(pk_binary *bin, const pk_rawprof *raw, const pk_profgen_opts *opts,
                    pk_profset *out, pk_profgen_stats *stats, pk_err *err);

/* Context-sensitive line-based profile (binaries without pseudo-probes) of
 * the unwinder's contexts: a flat CS profile (PK_PROF_CS) whose contexts are
 * inline-expanded DWARF frames, ready for the pre-inliner and nesting. */
struct pk_csraw;
int pk_profgen_line_cs(pk_binary *bin, const struct pk_csraw *raw, const pk_profgen_opts *opts,
                       pk_profset *out, pk_profgen_stats *stats, pk_err *err);

/* The same from contexts already symbolized: each context of `raw` is one
 * element, the id of a context of `out` (its frames as llvm-profgen's
 * line-based unsymbolized text names them, the leaf's inline frames
 * included), or PK_LINE_CTX_NONE (its "[]": only head samples from outside).
 * Each instruction counts at its innermost location in the context as named;
 * a branch's call site is its source's innermost location. */
#define PK_LINE_CTX_NONE UINT64_MAX
int pk_profgen_line_cs_named(pk_binary *bin, const struct pk_csraw *raw, const pk_profgen_opts *opts,
                             pk_profset *out, pk_profgen_stats *stats, pk_err *err);

/* llvm-profgen's keys for the line-based unsymbolized text of `raw`: every
 * range split where the inline frames of its instructions change (walking
 * back from its end, as llvm-profgen's unwinder), each piece and each branch
 * keyed by the context's call sites and the inline frames of its first
 * instruction (of its source), recursion compressed and trimmed as opts
 * asks, interned into `names`; a key without debug information, or of a
 * branch from outside, is PK_NO_CTX. Ranges that did not run straight or
 * leave their DWARF function are left out (counted in `stats`, may be
 * NULL, by reason). emit() gets each piece. */
typedef int (*pk_line_key_fn)(void *cb, pk_ctx_id key, int kind, uint64_t a, uint64_t b, uint64_t n,
                              bool leaf_inlined, pk_err *err);
int pk_profgen_line_cs_keys(pk_binary *bin, const struct pk_csraw *raw, const pk_profgen_opts *opts,
                            pk_profset *names, pk_line_key_fn emit, void *cb, pk_profgen_stats *stats, pk_err *err);

/* A warning for a line profile of a binary whose line table tells no
 * block apart: lines whose instructions ran different numbers of times (so
 * over several blocks), and not one instruction with a DWARF
 * discriminator. clang emits discriminators only with
 * -fdebug-info-for-profiling (gcc always does); without them the blocks of
 * a source line share one count (the largest: a loop's test and increment,
 * an `if` and its body), and the profile-use build, whose blocks have
 * discriminators, finds none for all but one. Returns 1 and writes the
 * text into buf (cap bytes) when it applies, else 0. */
int pk_profgen_discriminator_warning(const pk_profgen_stats *s, char *buf, size_t cap);

/* The name clang looks a function profile up by: trailing ".llvm.<n>"
 * (ThinLTO promotion) and ".part.<n>" (GCC partial inlining) components are
 * removed; ".__uniq.<n>" (-funique-internal-linkage-names) is kept, since the
 * compiler keeps it when the profile has it (LLVM getCanonicalFnName with the
 * "selected" policy). Returns the length of the canonical prefix of name. */
size_t pk_profgen_canonical_len(const char *name);

#endif

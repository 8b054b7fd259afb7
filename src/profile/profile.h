/* profile.h — the in-memory sample-profile model shared by every reader,
 * writer and tool (profgen, show, merge, overlap, the CSSPGO pre-inliner).
 *
 * Vocabulary (LLVM's SampleProf terms in parentheses):
 *
 *  - pk_profset (SampleProfileMap + reader/writer globals): owns everything —
 *    the interned name table, the interned context table, every function
 *    profile (arena-allocated, so pk_fprof pointers stay valid until the set
 *    is freed), the profile kind flags.
 *  - pk_fprof (FunctionSamples): one function profile. Top-level profiles are
 *    keyed by a context (pk_ctx_id); a non-CS profile's context is the single
 *    frame [name]. Inlined instances hang below a parent at a callsite
 *    location and carry no head samples (the formats have none for them).
 *  - location (LineLocation): (line offset from the function's start line,
 *    discriminator). Probe-based profiles store the probe index as the line
 *    offset with discriminator 0 (exactly what LLVM's text/binary formats
 *    carry). Line offsets are 16 bits on disk (LLVM masks with 0xffff); the
 *    model keeps 32 bits but writers refuse offsets > 0xffff.
 *  - body entry (BodySamples[loc]): exists once a sample count OR a call
 *    target was added at loc (a "2: 0 foo:10" line). A location that only
 *    has inlined callsites is not a body entry.
 *
 * Adding counts is O(1) amortized: each profile keeps flat open-addressed
 * maps (loc → slot, (slot,target) → count, (slot,callee) → child); nothing is
 * sorted until a writer asks for a view (pk_fprof_view), which yields entries
 * in the order LLVM's writers use, so our output is deterministic and
 * byte-comparable with llvm-profdata's.
 *
 * Counts saturate at UINT64_MAX (as llvm-profdata does) instead of wrapping.
 *
 * Thread safety: none inside a set; use one set per thread and merge.
 *
 * Typical producer (AutoFDO, nested):
 *     pk_profset ps; pk_profset_init(&ps, err);
 *     pk_name_id main_id, foo_id;
 *     pk_profset_intern(&ps, "main", 4, &main_id, err);
 *     pk_fprof *m = pk_profset_get_func(&ps, main_id, err);
 *     m->head += 10;
 *     pk_fprof_max_body(m, 3, 0, 100, err);              // line offset 3
 *     pk_fprof_add_call(m, 3, 0, foo_id, 100, err);      // call target at 3
 *     pk_fprof *in = pk_fprof_callsite(&ps, m, 5, 0, foo_id, err);   // inlined foo at 5
 *     pk_fprof_max_body(in, 1, 0, 40, err);
 *     pk_fprof_recompute_total(m);                       // or keep your own totals
 *     pk_prof_write_file(&ps, &opts, "out.prof", err);   // format/format.h
 * Context-sensitive (flat): set ps.kind |= PK_PROF_CS, intern the frames
 * with pk_profset_intern_ctx (or parse "main:3 @ foo"), pk_profset_get_ctx.
 * Probe-based: ps.kind |= PK_PROF_PROBE, loc = (probe id, 0), f->checksum.
 */
#ifndef PK_PROFILE_H
#define PK_PROFILE_H

#include "common/pk_common.h"

typedef uint32_t pk_name_id;   /* index into the set's name table */
typedef uint32_t pk_ctx_id;    /* index into the set's context table */
#define PK_NO_CTX UINT32_MAX   /* inlined instances have no context id */

/* ---- profile kind (pk_profset.kind) ---- */
enum {
    PK_PROF_PROBE      = 1u << 0, /* pseudo-probe based: loc.line = probe id, checksums present */
    PK_PROF_CS         = 1u << 1, /* flat context-sensitive: top-level keys are [a:1 @ b] contexts */
    PK_PROF_PREINLINED = 1u << 2, /* pre-inliner ran (ContextShouldBeInlined attributes meaningful) */
    PK_PROF_FS         = 1u << 3, /* flow-sensitive discriminators */
    PK_PROF_MD5        = 1u << 4, /* names were read as GUIDs only (MD5 name table) */
    PK_PROF_PARTIAL    = 1u << 5, /* partial profile (summary flag) */
};

/* ---- context attributes (pk_fprof.attrs; LLVM ContextAttributeMask) ---- */
enum {
    PK_ATTR_WAS_INLINED       = 0x1, /* leaf was inlined in the profiled binary */
    PK_ATTR_SHOULD_BE_INLINED = 0x2, /* pre-inliner decision */
    PK_ATTR_DUPLICATED_INTO_BASE = 0x4, /* nested profile also merged into the base profile */
};

typedef struct pk_profset pk_profset;
typedef struct pk_fprof pk_fprof;

/* A location packed as one u64: (line << 32) | disc. Sorting packed keys
 * sorts by (line, discriminator), the order LLVM uses. */
static inline uint64_t pk_loc(uint32_t line, uint32_t disc) { return ((uint64_t)line << 32) | disc; }
static inline uint32_t pk_loc_line(uint64_t loc) { return (uint32_t)(loc >> 32); }
static inline uint32_t pk_loc_disc(uint64_t loc) { return (uint32_t)loc; }

/* One frame of a calling context. Callers carry the callsite location in
 * their own frame; the leaf frame's location is always 0.0. */
typedef struct pk_ctx_frame {
    pk_name_id name;
    uint32_t line;
    uint32_t disc;
} pk_ctx_frame;

struct pk_fprof {
    pk_name_id name;     /* the function (for a CS profile: the leaf function) */
    pk_ctx_id ctx;       /* top-level: its context; inlined instance: PK_NO_CTX */
    uint64_t total;      /* TotalSamples (as stored; see pk_fprof_recompute_total) */
    uint64_t head;       /* HeadSamples (top-level only) */
    uint64_t checksum;   /* CFG checksum of probe profiles (0 = none) */
    uint32_t attrs;      /* PK_ATTR_* */
    uint32_t removed;    /* removed from the set (pk_profset_remove), or an inlinee
                            removed from its caller (pk_profset_remove_ambiguous) */
    /* ---- private to profile.c: use the functions below ---- */
    pk_vec slots;        /* struct pk_fprof_slot: one per touched location */
    uint32_t *slot_of;   /* loc → slot index + 1, open addressing over 2^slot_bits
                            entries (0 = empty); NULL while slots are few */
    uint32_t slot_bits;
    uint32_t nobody_words;
    uint64_t *nobody;    /* bit i: slot i has no body entry (a call-site anchor);
                            NULL when every slot has one */
    pk_u64map calls;     /* (slot << 32 | target name) → count */
    pk_u64map sites;     /* (slot << 32 | callee name) → child index */
    pk_vec children;     /* pk_fprof *: inlined instances */
    uint32_t nbody;      /* number of body entries */
};

/* ---- profile summary (ProfileSummary, sample kind) ---- */
#define PK_SUMMARY_MAX_ENTRIES 64
typedef struct pk_summary_entry {
    uint32_t cutoff;      /* parts per million (990000 = 99%) */
    uint64_t min_count;
    uint64_t num_counts;
} pk_summary_entry;

typedef struct pk_summary {
    uint64_t total_count;        /* sum of every body count (nested inlinees included) */
    uint64_t max_count;          /* max body count */
    uint64_t max_function_count; /* max head samples of a top-level profile */
    uint64_t num_counts;         /* number of body entries (zeros included) */
    uint64_t num_functions;      /* top-level profiles (after context flattening for CS) */
    uint32_t num_entries;
    pk_summary_entry entries[PK_SUMMARY_MAX_ENTRIES];
} pk_summary;

/* LLVM's 16 default cutoffs (ProfileSummaryBuilder::DefaultCutoffs). */
extern const uint32_t pk_summary_default_cutoffs[16];

/* The count at a cutoff (MinCount of the first entry with cutoff >= the
 * requested one), e.g. the hot threshold is pk_summary_threshold(s, 990000).
 * Returns 0 when the summary has no such entry. */
uint64_t pk_summary_threshold(const pk_summary *s, uint32_t cutoff);

struct pk_profset {
    uint32_t kind;         /* PK_PROF_* */
    /* Summary read from a binary/extbinary file (has_summary = 1); writers
     * always recompute it with pk_profset_summary(). */
    int has_summary;
    pk_summary summary;
    /* Top-level profiles in insertion order. Entries with ->removed set are
     * to be skipped (pk_profset_sorted skips them). */
    pk_vec top;            /* pk_fprof * */
    /* ProfileSymbolList (extbinary): names of every function of the profiled
     * binary, so the compiler can tell "not sampled" from "unknown". A set
     * of name ids (value 1), kept apart from the profiles; merged as a union. */
    pk_u64map symbols;
    /* ---- private to profile.c ---- */
    struct pk_names *names;
    struct pk_ctxs *ctxs;
    pk_u64map top_of;      /* ctx id → index into top, +1 (0 = absent) */
    pk_vec arena;          /* chunks of pk_fprof */
    size_t arena_used;     /* used slots in the last chunk */
};

/* ---- set lifetime ---- */
int pk_profset_init(pk_profset *ps, pk_err *err);
void pk_profset_free(pk_profset *ps);

/* ---- names ----
 * Names are interned: the same bytes give the same id. The GUID of a name is
 * the low 64 bits of its MD5 (LLVM's MD5Hash / Function::getGUID of the
 * name), except for names interned by GUID (MD5 name tables), whose text is
 * the decimal GUID and whose GUID is that number (as llvm-profdata prints). */
int pk_profset_intern(pk_profset *ps, const char *s, size_t len, pk_name_id *id, pk_err *err);
int pk_profset_intern_guid(pk_profset *ps, uint64_t guid, pk_name_id *id, pk_err *err);
const char *pk_profset_name(const pk_profset *ps, pk_name_id id);       /* NUL-terminated */
size_t pk_profset_name_len(const pk_profset *ps, pk_name_id id);
uint64_t pk_profset_name_guid(const pk_profset *ps, pk_name_id id);
int pk_profset_name_is_guid(const pk_profset *ps, pk_name_id id);      /* interned by GUID */
size_t pk_profset_num_names(const pk_profset *ps);
/* Lookup without inserting: returns 0 and sets *id, or -1 if absent. */
int pk_profset_lookup_name(const pk_profset *ps, const char *s, size_t len, pk_name_id *id);
int pk_profset_lookup_guid(const pk_profset *ps, uint64_t guid, pk_name_id *id);
/* Order of two names: bytewise (memcmp, then shorter first); two GUID-only
 * names compare by GUID value; a GUID-only name sorts after any text name. */
int pk_profset_name_cmp(const pk_profset *ps, pk_name_id a, pk_name_id b);

/* ---- contexts ----
 * A context is an interned list of frames, outermost caller first, leaf
 * last; the leaf's location is forced to 0.0. A non-CS profile uses the
 * one-frame context [name]. Text form: "main:12 @ bar:3.1 @ foo" (without the
 * brackets the text format adds around it). */
int pk_profset_intern_ctx(pk_profset *ps, const pk_ctx_frame *frames, size_t n, pk_ctx_id *id, pk_err *err);
int pk_profset_lookup_ctx(const pk_profset *ps, const pk_ctx_frame *frames, size_t n, pk_ctx_id *id);
/* Frames of a context; the pointer is valid until the next intern call. */
const pk_ctx_frame *pk_profset_ctx(const pk_profset *ps, pk_ctx_id id, size_t *n);
size_t pk_profset_num_ctxs(const pk_profset *ps);
/* LLVM's SampleContext ordering: frame by frame (name, then location), then
 * shorter first. */
int pk_profset_ctx_cmp(const pk_profset *ps, pk_ctx_id a, pk_ctx_id b);
/* Writes the text form into buf (always NUL-terminated when cap > 0);
 * returns the length it needs (snprintf-style). */
size_t pk_profset_ctx_text(const pk_profset *ps, pk_ctx_id id, char *buf, size_t cap);
/* Parses "main:12 @ bar:3.1 @ foo" (no brackets). */
int pk_profset_ctx_parse(pk_profset *ps, const char *s, size_t len, pk_ctx_id *id, pk_err *err);

/* ---- top-level profiles ---- */
/* Find or create the top-level profile of a context / of a plain function. */
pk_fprof *pk_profset_get_ctx(pk_profset *ps, pk_ctx_id ctx, pk_err *err);
pk_fprof *pk_profset_get_func(pk_profset *ps, pk_name_id name, pk_err *err);
/* Find without creating (NULL if absent). */
pk_fprof *pk_profset_find_ctx(const pk_profset *ps, pk_ctx_id ctx);
pk_fprof *pk_profset_find(const pk_profset *ps, const char *name);      /* plain [name] context */
pk_fprof *pk_profset_find_guid(const pk_profset *ps, uint64_t guid);
/* Adds a name to the profile symbol list. */
int pk_profset_add_symbol(pk_profset *ps, pk_name_id name, pk_err *err);
size_t pk_profset_num_symbols(const pk_profset *ps);
/* Removes a top-level profile: its counts are freed at once, the (now
 * empty) struct stays allocated until the set is freed. */
void pk_profset_remove(pk_profset *ps, pk_fprof *f);
/* The compiler's initialisation functions (__cxx_global_var_init*,
 * __tls_init*): one binary has several under one canonical name, so their
 * merged profile says nothing about any of them. */
bool pk_name_is_ambiguous_init(const char *name);
/* Removes the profiles of those functions: top-level ones (a context's leaf)
 * and inlined instances anywhere below others (llvm-profgen's
 * filterAmbiguousProfile; the totals above them stay as they were). Returns
 * how many were removed. */
size_t pk_profset_remove_ambiguous(pk_profset *ps);
/* Live top-level profiles in LLVM writer order (total samples descending,
 * then context order). Caller frees the array. */
int pk_profset_sorted(const pk_profset *ps, pk_fprof ***out, size_t *n, pk_err *err);
size_t pk_profset_count(const pk_profset *ps);                          /* live top-level profiles */

/* ---- building a function profile ---- */
/* body[loc] += count (saturating); creates the body entry. */
int pk_fprof_add_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err);
/* A body entry (count 0 if new) at each of locs (packed pk_loc, repeats
 * allowed): what pk_fprof_add_body(..., 0) does one at a time, but an empty
 * profile gets its slots and index built at once (the zero-filled probes of
 * a sampled body). */
int pk_fprof_touch_bodies(pk_fprof *f, const uint64_t *locs, size_t n, pk_err *err);
/* body[loc] = max(body[loc], count) (line-based profgen aggregation). */
int pk_fprof_max_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err);
/* body[loc] = count. */
int pk_fprof_set_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err);
/* calls[loc][target] += count; creates the body entry (count 0) if needed. */
int pk_fprof_add_call(pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id target, uint64_t count, pk_err *err);
/* Drops f's own call targets (its inlinees keep theirs). */
void pk_fprof_clear_calls(pk_fprof *f);
/* Find or create the inlined instance of callee at loc (total 0). */
pk_fprof *pk_fprof_callsite(pk_profset *ps, pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id callee, pk_err *err);
/* Lookups (no creation). Return 0 when found. */
int pk_fprof_get_body(const pk_fprof *f, uint32_t line, uint32_t disc, uint64_t *count);
pk_fprof *pk_fprof_find_callsite(const pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id callee);
/* calls[loc][target]; 0 when found. */
int pk_fprof_get_call(const pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id target, uint64_t *count);
/* LLVM's getHeadSamplesEstimate: head samples if any, else the count at the
 * lowest location (a body entry, or the sum over the inlinees there), at
 * least 1 when the profile has samples. */
uint64_t pk_fprof_head_estimate(const pk_fprof *f);
static inline uint32_t pk_fprof_num_body(const pk_fprof *f) { return f->nbody; }
static inline size_t pk_fprof_num_callsites(const pk_fprof *f) { return f->children.len; }

/* total = Σ body + Σ callee totals, recursively (callees first). The text and
 * binary formats store totals as given; use this when a producer wants the
 * "sum of what is inside" convention. Returns the new total. */
uint64_t pk_fprof_recompute_total(pk_fprof *f);
/* Σ body counts of f and all nested inlinees (what overlap calls the
 * function's sample sum). */
uint64_t pk_fprof_body_sum(const pk_fprof *f);
/* Max body count of f and its inlinees. */
uint64_t pk_fprof_max_count(const pk_fprof *f);

/* Calls fn for every call-target name and inlinee name below f (recursively;
 * not f's own name), in no particular order, possibly more than once. */
void pk_fprof_visit_names(const pk_fprof *f, void (*fn)(pk_name_id, void *), void *arg);

/* Raises every body entry to at least the sum of its call targets (a line
 * runs at least as often as the calls it makes; profgen samples range and
 * branch counts separately). `nested`: inlinees too. */
int pk_fprof_raise_to_calls(pk_profset *ps, pk_fprof *f, bool nested, pk_err *err);

/* ---- sorted views (for writers, show, overlap) ---- */
typedef struct pk_call_target {
    pk_name_id name;
    uint64_t count;
} pk_call_target;

typedef struct pk_body_entry {
    uint32_t line, disc;
    uint64_t count;
    uint32_t ncalls;
    pk_call_target *calls;       /* count descending, then name ascending */
} pk_body_entry;

typedef struct pk_callsite_entry {
    uint32_t line, disc;
    pk_fprof *callee;
} pk_callsite_entry;

typedef struct pk_fprof_view {
    pk_body_entry *body;         /* by (line, disc) */
    size_t nbody;
    pk_callsite_entry *sites;    /* by (line, disc), then callee name */
    size_t nsites;
    pk_call_target *targets_;    /* storage */
} pk_fprof_view;

int pk_fprof_view_build(const pk_profset *ps, const pk_fprof *f, pk_fprof_view *v, pk_err *err);
void pk_fprof_view_free(pk_fprof_view *v);

/* ---- whole-set operations ---- */
/* Adds every profile of src (its counts × weight) into dst: totals and heads
 * added, body and targets per location, inlinees recursively. Refuses to mix
 * probe/non-probe or CS/non-CS. A profile whose non-zero checksum differs
 * from dst's is skipped and counted in *mismatches (may be NULL). When one
 * side has MD5 names (PK_PROF_MD5) the result does too: names are turned
 * into their GUIDs (dst is rebuilt if needed, so its pk_fprof pointers and
 * name ids are invalidated in that case). */
int pk_profset_merge(pk_profset *dst, const pk_profset *src, uint64_t weight, size_t *mismatches, pk_err *err);
/* Adds one function profile (from any set) into another, counts × weight. */
int pk_fprof_merge(pk_profset *dps, pk_fprof *dst, const pk_profset *sps, const pk_fprof *src, uint64_t weight, pk_err *err);
/* The same as pk_fprof_merge(ps, dst, ps, src, 1) when dst holds nothing yet
 * (no location, call or inlinee), without copying: dst takes src's counts,
 * and src is left empty. Returns false, changing nothing, when dst is not
 * empty. */
bool pk_fprof_take(pk_fprof *dst, pk_fprof *src);
/* Multiplies every count by num/den (rounded down, saturating). */
void pk_profset_scale(pk_profset *ps, uint64_t num, uint64_t den);
/* Marks the set pre-inlined (the summary section's IsPreInlined flag). Why
 * a line-based profile would say so: clang-19, reading a profile
 * that is context-sensitive, probe-based or pre-inlined, switches on the
 * profile-use pipeline made for CSSPGO (profi's count inference, iterative
 * block frequencies, ext-TSP block layout, the priority-ordered sample
 * inliner without function size limits), which line-based AutoFDO profiles
 * otherwise do not get. With every_context, every profile and inlined
 * instance also gets ContextShouldBeInlined, which makes clang inline each
 * nested inlinee where it can: the profiled binary's inlining replayed
 * (llvm-profgen's --mark-all-context-preinlined). */
void pk_profset_mark_preinlined(pk_profset *ps, bool every_context);
/* The reverse, for a profile without calling contexts: the flag and every
 * ContextShouldBeInlined cleared. */
void pk_profset_unmark_preinlined(pk_profset *ps);
/* The summary as LLVM's SampleProfileSummaryBuilder computes it with the 16
 * default cutoffs (CS profiles: on the context-flattened profile). */
int pk_profset_summary(const pk_profset *ps, pk_summary *out, pk_err *err);
/* Same, with explicit cutoffs (sorted ascending, each < 1000000). */
int pk_profset_summary_cutoffs(const pk_profset *ps, const uint32_t *cutoffs, size_t n, pk_summary *out, pk_err *err);
/* llvm-profgen's profile density: each top-level profile's body samples
 * (inlinees included) per body entry; taken hottest-density first until
 * their samples reach `cutoff` millionths of all, the last one's density.
 * 0 for an empty profile. A density under ~50 suggests more samples. */
double pk_profset_density(const pk_profset *ps, uint32_t cutoff, pk_err *err);


/* Saturating arithmetic used throughout. */
static inline uint64_t pk_sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }
static inline uint64_t pk_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif

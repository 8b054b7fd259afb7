/* pipeline.h — the whole of `profgen` as one library call: inputs (perf.data,
 * perf script text, raw profiles, pprof) → aggregation (and, with stacks, the
 * virtual unwinder) → tail-call frame inference → the generator of the
 * profile kind → cold-context merging or the pre-inliner and nesting → the
 * written profile.
 *
 * The order of the stages lives here, not in the command line, so that
 * `pgokit profgen`, the profile store and the tests run one pipeline. The
 * caller fills a request, gets a report back (every counter the closing
 * summary prints) and prints what it likes: nothing here prints or exits.
 */
#ifndef PK_PIPELINE_H
#define PK_PIPELINE_H

#include "aggregate/aggregate.h"
#include "format/format.h"
#include "profgen/base_shape.h"
#include "profgen/preinline.h"
#include "profgen/probe_gen.h"
#include "profgen/profgen.h"
#include "unwind/unwind.h"
#include "unwind/ip_stack.h"
#include "infer/ip_ranges.h"
#include "unwind/rawprof2.h"

enum pk_input_kind {
    PK_INPUT_PERF,       /* perf.data (file or pipe mode, "-" for stdin) */
    PK_INPUT_SCRIPT,     /* `perf script` text */
    PK_INPUT_RAW,        /* a raw profile written by --raw-only (version 1 or 2) */
    PK_INPUT_PPROF,      /* gzip-compressed profile.proto */
    PK_INPUT_LLVM_UNSYM, /* llvm-profgen's unsymbolized text (flat, or line-based contexts),
                            see llvm_absolute */
    PK_INPUT_PROFILE,    /* a sample profile (llvm-profgen's --llvm-sample-profile): only
                            the post-processing runs on it (cold trimming, the pre-inliner,
                            nesting); the only input */
};

typedef struct pk_pipeline_input {
    int kind;            /* enum pk_input_kind */
    const char *path;
} pk_pipeline_input;

/* Which samples the profile is built from. Auto: LBR branch stacks when the
 * inputs have them, else instruction pointers (+ call stacks). */
enum pk_sample_kind { PK_SAMPLES_AUTO, PK_SAMPLES_LBR, PK_SAMPLES_IP };

typedef struct pk_pipeline_request {
    const char *binary;              /* the profiled executable or shared library */
    pk_debug_opts debug;             /* where its debug information is looked for */
    const char *output;
    const pk_pipeline_input *inputs;
    size_t ninputs;
    pk_write_opts write;
    pk_profgen_opts gen;             /* line-based generator options */
    int64_t pid;                     /* only this process; -1: all */
    int samples;                     /* enum pk_sample_kind */
    bool raw_only;                   /* write the merged raw profile instead */
    /* raw_only: the raw profile's version. 0 or 1: version 1 (flat counts;
     * IP samples inferred into ranges first; what the store reads today);
     * 2: per calling context, IP observations as recorded, nothing inferred
     * (tail-call frames, depth trimming, flow inference: at generation) */
    uint32_t raw_version;
    bool raw_llvm_text;              /* raw_only: as llvm-profgen's unsymbolized text
                                        (--skip-symbolization) */
    /* llvm-profgen's sample selection and weighting: only these perf events
     * (perf script text's event field), the sampling period (an LBR sample
     * of n entries counts period / (n - 1) times; 0: unscaled), and profiles
     * from the samples' instruction pointers alone (ranges of one
     * instruction, summed per line; implies no contexts) */
    const char *const *perf_events;
    size_t nperf_events;
    uint64_t sample_period;
    bool leading_ip_only;
    bool llvm_absolute;
    bool llvm_first_loadable_base;   /* offsets from the first PT_LOAD's page instead
                                        (--use-first-loadable-segment-as-base) */              /* that text's addresses are vaddrs (llvm-profgen's
                                        --use-offset=0), else offsets from the first
                                        executable segment's page */
    bool ignore_stacks;              /* no contexts even with call stacks */
    bool stack_copy_limit;           /* IP samples with stack copies: unwind at most */
    uint32_t stack_copy_bytes;       /* this many bytes of each, as a smaller copy would have
                                        held (0: the leaf alone) */
    /* A flat profile made from samples that carry a call stack leaves out
     * those whose leaf is in a prologue or epilogue too (llvm-profgen, which
     * drops them while it reads the stack whether or not it then uses it).
     * Off by default: what makes such a sample wrong for contexts (a
     * frame-pointer stack missing the caller) does not touch its branch
     * stack, so a flat profile loses true counts by it, most at the entry of
     * small hot functions. */
    bool drop_prolog_epilog_flat;
    bool no_preinline;               /* CS: keep the flat context profile */
    bool line_cs;                    /* CS line-based profile of a binary without probes */
    bool dwarf_correlation;          /* line-based profile even with probes */
    bool no_infer_frames;            /* CS: no tail-call frame inference */
    bool worker;                     /* use a second thread where the work splits */
    unsigned threads;                /* IP samples: contexts inferred on this many threads
                                        at once (0 or 1: one; same profile either way) */
    uint32_t walk_here_every;        /* tests: walk every Nth sample on the reading thread */
    int flow_method;                 /* IP samples: enum pk_flow_method (0: min-cost flow) */
    int32_t ip_context_prior;        /* IP samples, see pk_ip_infer_opts.context_prior: 0 the
                                        default (PK_IP_CONTEXT_PRIOR), < 0 none */
    int flow_costs;                  /* IP samples: enum pk_ip_costs (0: the default) */
    bool ip_base_from_contexts;      /* CSSPGO from IP samples: base profiles keep the sum of
                                        their contexts' inferences (see base_shape.h; default:
                                        their function's context-free shape) */
    bool nonleaf_minus_one;          /* IP stacks may hold return address - 1 (pprof) */
    /* llvm-profgen's post-processing. The hot and cold thresholds are the
     * profile summary's counts at the percentile cutoffs (millionths; 0:
     * 990000 and 999999), unless given. */
    uint32_t cutoff_hot, cutoff_cold;
    bool hot_count_set, cold_count_set;
    uint64_t hot_count, cold_count;
    bool trim_cold;                  /* drop cold profiles (--trim-cold-profile) */
    int merge_cold;                  /* CS: merge cold contexts: 1 yes, -1 no, 0 when not pre-inlined */
    uint32_t cold_context_frames;    /* CS: frames a merged cold context keeps (0: 1) */
    bool no_csspgo_preinliner;       /* CS: no pre-inliner, nested all the same */
    bool preinline_across_units;     /* CS: the pre-inliner may inline a callee defined in another
                                        compilation unit (llvm-profgen's; right for LTO builds,
                                        which are detected anyway: pk_dwarf_units) */
    bool no_nest;                    /* CS: flat output (pre-inlined unless told otherwise) */
    pk_preinline_opts *preinline;    /* CS: the pre-inliner's thresholds (NULL: its defaults) */
    bool symbol_list;                /* the profile symbol list: every DWARF function */
    int mark_preinlined;             /* enum pk_preinlined_mark: how the written profile says it
                                        is pre-inlined (pk_profset_mark_preinlined); NONE: as made */
    uint32_t density_cutoff;         /* the profile density's cutoff, millionths (0: 990000) */
    /* Optional callbacks, for a caller that shows progress. */
    void *cb_ctx;
    /* every 65,536 samples of an input: its path, samples so far, and how far
     * into the file (offset, size; size 0 when unknown) */
    void (*progress)(void *ctx, const char *path, uint64_t samples, uint64_t offset, uint64_t size);
    /* a stage starts ("symbolizing") or all reading is done (NULL) */
    void (*phase)(void *ctx, const char *what);
    /* an input had nothing usable, but others may: the reason */
    void (*warning)(void *ctx, const char *msg);
    /* CSSPGO: every pre-inliner decision, in order (see pk_preinline_step) */
    void (*preinline_trace)(void *ctx, const pk_profset *ps, const pk_preinline_step *step);
    /* every mmap event of a perf.data or perf script input, as read (any
     * file, any process) */
    void (*mmap_event)(void *ctx, const pk_mmap_event *m);
    /* with call stacks: each distinct return address (link-time) at which
     * stacks were cut for not following a call (a caller without frame
     * pointer), ascending; LBR samples: once per input after unwinding; IP
     * samples (a profile built from them): once, before flow inference */
    void (*bad_return)(void *ctx, uint64_t addr);
} pk_pipeline_request;

enum pk_pipeline_mode {
    PK_MODE_RAW,         /* --raw-only: the raw profile was written */
    PK_MODE_LINE,        /* line-based AutoFDO */
    PK_MODE_PROBE,       /* probe-only */
    PK_MODE_CS,          /* CSSPGO (probes + contexts) */
    PK_MODE_LINE_CS,     /* context-sensitive line-based */
};

/* What the run did: everything the closing summary says. */
typedef struct pk_pipeline_report {
    char debug_origin[1024];         /* pk_binary_debug_origin, "" if not opened */
    int mode;                        /* enum pk_pipeline_mode */
    bool from_ip;                    /* built from IP samples (flow inference) */
    pk_ip_stats ip;                  /* IP samples seen (also when LBR samples won) */
    pk_ip_infer_stats ip_infer;      /* flow inference, when from_ip */
    pk_base_shape_stats base_shape;  /* CSSPGO from IP: base profiles given their function's shape */
    pk_agg_stats agg;                /* samples read, used, LBR entries, drops... */
    size_t distinct_branches, distinct_ranges;
    bool have_contexts;              /* distinct counts are per context */
    bool calls_only;                 /* only calls and jumps to entries were kept */
    bool line_stats_valid;           /* `line` below is filled (line-based flat) */
    pk_profgen_stats line;
    pk_probe_gen_stats probe;
    pk_unwind_stats unwind;
    bool tailcall_valid;
    pk_tailcall_stats tailcall;
    pk_preinline_stats preinline;
    size_t units;                    /* compilation units the pre-inliner kept apart (0: none known) */
    bool units_cross;                /* ... but they inline across each other (LTO): not kept apart */
    size_t contexts;                 /* address contexts before generation */
    size_t profiles;                 /* top-level profiles written */
    double density;                  /* the written profile's density (pk_profset_density) */
    size_t raw_v1_inputs;            /* raw profile inputs of version 1 (no contexts, IP inferred) */
    bool counted;                    /* every counter above is final (also when the run
                                        failed because no function received samples) */
} pk_pipeline_report;

/* Runs the pipeline and writes req->output (atomically: a failure leaves no
 * file). Returns 0, or -1 with err set (the report still holds the counters
 * gathered so far, e.g. for "no function received samples"). */
int pk_pipeline_run(const pk_pipeline_request *req, pk_pipeline_report *rep, pk_err *err);

#endif

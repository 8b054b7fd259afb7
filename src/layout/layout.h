/* layout.h — function ordering: Balanced Partitioning (start-up, from temporal
 * traces; optionally code similarity), C3 call-chain clustering (steady state,
 * from a weighted call graph), and ordering files for lld, gold and GNU ld.
 *
 * This stage works on its own plain inputs — functions are indexes 0..n-1 with
 * names kept by the caller, traces are index arrays, the call graph is an arc
 * list — so it depends neither on the temporal profile nor on the sample
 * profile model; `pgokit order` (src/cli/cmd_order.c) adapts those.
 *
 *     pk_layout_trace tr[] = {{funcs, len, 1}, ...};
 *     pk_layout_opts o; pk_layout_opts_default(&o);
 *     uint32_t *order; size_t n;
 *     pk_layout_startup_order(n_funcs, tr, n_traces, &o, &order, &n, &err);
 *     pk_layout_write_order(&out, PK_ORDER_LLD, names, order, n, &err);
 */
#ifndef PK_LAYOUT_H
#define PK_LAYOUT_H

#include "common/pk_common.h"

/* ============================ Balanced Partitioning ============================ */

/* A bipartite graph in CSR form: node i (0..n_nodes-1) is connected to the
 * utility ids utils[util_off[i] .. util_off[i+1]) (unique within a node).
 * The node index is also its *input order*: below the recursion depth limit,
 * and for the initial split of every bisection, nodes keep that order. */
typedef struct pk_bp_problem {
    size_t n_nodes;
    uint32_t n_utils;
    const size_t *util_off;        /* n_nodes + 1 entries */
    const uint32_t *utils;
    const uint32_t *util_weight;   /* n_utils weights, or NULL for all 1 */
} pk_bp_problem;

typedef struct pk_bp_config {
    unsigned split_depth;      /* recursion depth limit (18) */
    unsigned iterations;       /* max greedy iterations per bisection (40) */
    double skip_probability;   /* probability to skip a beneficial move (0.1) */
    uint64_t seed;             /* mixed with each bisection's bucket id (0) */
    unsigned threads;          /* worker threads, 0 = number of online CPUs (≤ 64) */
} pk_bp_config;

void pk_bp_config_default(pk_bp_config *c);

/* Orders the nodes: order[k] = node placed at position k (a permutation of
 * 0..n_nodes-1). Deterministic for a given seed, whatever the thread count:
 * each bisection draws from its own RNG seeded by (seed, bucket id). */
int pk_bp_run(const pk_bp_problem *p, const pk_bp_config *cfg, uint32_t *order, pk_err *err);

/* Builder of node ↔ utility edges. Utility ids are allocated by the add_*
 * functions; finish() dedups, drops utilities that cannot influence the order
 * (connected to ≤ 1 node) or that connect more than half of the nodes (as
 * LLVM does; `filter_common` = false keeps those), and renumbers them densely. */
typedef struct pk_bp_graph {
    size_t n_nodes;
    uint32_t n_utils;
    pk_vec edges;          /* uint64_t: node << 32 | utility */
    pk_vec weights;        /* uint32_t per utility id */
    /* after finish(): */
    size_t *util_off;
    uint32_t *utils;
    uint32_t *util_weight;
    pk_bp_problem problem;
} pk_bp_graph;

void pk_bp_graph_init(pk_bp_graph *g, size_t n_nodes);
void pk_bp_graph_free(pk_bp_graph *g);
/* A new utility of the given weight; returns its id or -1 on OOM. */
int64_t pk_bp_graph_new_util(pk_bp_graph *g, uint32_t weight, pk_err *err);
int pk_bp_graph_add_edge(pk_bp_graph *g, uint32_t node, uint32_t util, pk_err *err);
int pk_bp_graph_finish(pk_bp_graph *g, bool filter_common, pk_err *err);

/* ============================ traces and start-up order ============================ */

/* One run: function indexes in first-execution order (each at most once; later
 * repeats are ignored). Traces of weight 0 are ignored. */
typedef struct pk_layout_trace {
    const uint32_t *funcs;
    size_t len;
    uint64_t weight;
} pk_layout_trace;

/* Adds temporal utilities (LLVM's createBPFunctionNodes model): per trace,
 * windows of positions {0}, {1}, {2,3}, {4..7}, ... each get a utility, and a
 * function first executed in window w is connected to the utilities of
 * windows w..last. With `sizes` (bytes per function, may be NULL), a window
 * also closes when the cumulated code size doubles (lld's size-aware variant).
 * node_of_func maps a function index to a node (UINT32_MAX = not a node). */
int pk_bp_add_trace_utils(pk_bp_graph *g, const uint32_t *node_of_func, size_t n_funcs,
                          const pk_layout_trace *traces, size_t n_traces,
                          const uint64_t *sizes, pk_err *err);

/* Code content as sets of hashed 4-byte windows, per function (CSR form,
 * sorted and unique within a function). */
typedef struct pk_layout_content {
    size_t n_funcs;
    size_t *off;         /* n_funcs + 1 */
    uint32_t *hashes;
} pk_layout_content;

/* Hashes every 4-byte window of each function's bytes (bytes[i] may be NULL
 * when sizes[i] is 0 or the code is not available). */
int pk_layout_content_build(pk_layout_content *c, size_t n_funcs, const uint8_t *const *bytes,
                            const uint64_t *sizes, pk_err *err);
void pk_layout_content_free(pk_layout_content *c);
/* Adds one utility per hash value shared by the nodes given. */
int pk_bp_add_content_utils(pk_bp_graph *g, const uint32_t *node_of_func,
                            const pk_layout_content *c, pk_err *err);

typedef struct pk_layout_opts {
    pk_bp_config bp;
    const uint64_t *sizes;            /* per function or NULL: size-aware trace windows */
    const pk_layout_content *content; /* NULL: no code-similarity utilities */
    bool content_for_startup;         /* similarity utilities for the start-up set too */
    bool order_rest;                  /* append functions absent from every trace (needs
                                         content or sizes to know them: all n_funcs) */
} pk_layout_opts;

void pk_layout_opts_default(pk_layout_opts *o);

/* Start-up order: the functions of the traces, ordered by BP over temporal
 * utilities (initial order = earliest position over all traces, ties by
 * index); then, with order_rest, every other function (by BP over code
 * similarity when content is given, else by index). *order is malloc'ed. */
int pk_layout_startup_order(size_t n_funcs, const pk_layout_trace *traces, size_t n_traces,
                            const pk_layout_opts *o, uint32_t **order, size_t *order_len,
                            pk_err *err);

/* Offline estimate of start-up cost of a layout: functions placed in `order`
 * (aligned to `align` bytes, from address 0), every trace replayed: number of
 * distinct pages touched by the union of all traces, and the area under the
 * page-fault curve summed over traces (lld's metric). Functions missing from
 * the order count as one page each (they live elsewhere). */
typedef struct pk_layout_eval {
    uint64_t pages;
    uint64_t area;
} pk_layout_eval;

int pk_layout_evaluate(size_t n_funcs, const uint64_t *sizes, const uint32_t *order, size_t order_len,
                       const pk_layout_trace *traces, size_t n_traces, uint64_t page_size,
                       uint64_t align, pk_layout_eval *out, pk_err *err);

/* ============================ C3 (call-chain clustering) ============================ */

typedef struct pk_c3_arc {
    uint32_t caller, callee;
    uint64_t weight;
} pk_c3_arc;

typedef struct pk_c3_config {
    double min_arc_probability;      /* skip callers bringing < this share of the callee's calls (0.1) */
    double max_density_degradation;  /* refuse merges dividing the caller cluster's density by more (8) */
    uint64_t max_cluster_size;       /* bytes (1 MiB) */
} pk_c3_config;

void pk_c3_config_default(pk_c3_config *c);

/* Orders the hot functions (samples > 0 or on an arc of weight > 0) for
 * steady-state locality: functions processed by decreasing density
 * (samples/size), each cluster appended to its most likely caller's cluster,
 * clusters finally sorted by density. sizes of 0 count as 1. Ties are broken
 * by function index, so the result is deterministic. */
int pk_c3_order(size_t n_funcs, const uint64_t *sizes, const uint64_t *samples,
                const pk_c3_arc *arcs, size_t n_arcs, const pk_c3_config *cfg,
                uint32_t **order, size_t *order_len, pk_err *err);

/* ============================ names and text inputs ============================ */

/* An interning table of function names: index ↔ name. */
typedef struct pk_layout_names {
    size_t n;
    pk_vec offs;          /* size_t offset into chars per name */
    pk_vec chars;         /* NUL-terminated names */
    pk_u64map index;      /* hash (probed on collision) → index */
} pk_layout_names;

int pk_layout_names_init(pk_layout_names *t, pk_err *err);
void pk_layout_names_free(pk_layout_names *t);
/* Index of name (len bytes), adding it if absent; -1 on OOM. */
int64_t pk_layout_names_intern(pk_layout_names *t, const char *name, size_t len, pk_err *err);
/* Index or -1 when absent. */
int64_t pk_layout_names_find(const pk_layout_names *t, const char *name, size_t len);
static inline const char *pk_layout_name(const pk_layout_names *t, size_t i)
{
    return (const char *)t->chars.data + PK_VEC_AT(&t->offs, size_t, i);
}

/* Traces read from text, owning their arrays. */
typedef struct pk_layout_trace_set {
    pk_vec traces;        /* pk_layout_trace, funcs malloc'ed */
} pk_layout_trace_set;

void pk_layout_trace_set_free(pk_layout_trace_set *s);

/* Reads traces from text, in either form (detected):
 *  - plain: one trace per line, function names separated by blanks, an optional
 *    first token "@W" giving the weight, '#' starts a comment line;
 *  - the output of `llvm-profdata show --temporal-profile-traces` ("file;name"
 *    local names are reduced to the bare symbol).
 * Names are interned into `names`. An input without any trace is an error. */
int pk_layout_read_text_traces(const char *path, pk_layout_names *names,
                               pk_layout_trace_set *out, pk_err *err);

/* Reads a call graph in text form:
 *     node NAME SIZE SAMPLES
 *     arc CALLER CALLEE COUNT
 * ('#' comments). Functions only named by arcs get size 0 and samples 0. */
typedef struct pk_layout_call_graph {
    pk_vec sizes;         /* uint64_t per function index */
    pk_vec samples;       /* uint64_t per function index */
    pk_vec arcs;          /* pk_c3_arc */
} pk_layout_call_graph;

void pk_layout_call_graph_init(pk_layout_call_graph *g);
void pk_layout_call_graph_free(pk_layout_call_graph *g);
/* Makes sure function index i exists (zero size and samples); -1 on OOM. */
int pk_layout_call_graph_touch(pk_layout_call_graph *g, size_t i, pk_err *err);
int pk_layout_read_call_graph(const char *path, pk_layout_names *names,
                              pk_layout_call_graph *g, pk_err *err);

/* ============================ ordering files ============================ */

typedef enum pk_order_format {
    PK_ORDER_LLD,        /* --symbol-ordering-file: one symbol per line */
    PK_ORDER_GOLD,       /* --section-ordering-file: input section names */
    PK_ORDER_LD_SCRIPT,  /* GNU ld: SECTIONS { .text : { *(.text.f) ... } } INSERT BEFORE .fini; */
} pk_order_format;

/* "lld", "gold", "ld-script" (also "ld", "bfd"); -1 if unknown. */
int pk_order_format_parse(const char *s, pk_order_format *f);

/* Input section names a compiler gives to function `sym` with
 * -ffunction-sections: ".text.sym", and the prefixed forms gcc and clang use
 * for hot, start-up (gcc puts main and constructors there), exit and unlikely
 * code. gcc's split cold part "f.cold" lives in ".text.unlikely.f" (clang's in
 * ".text.split.f"). Writes at most max names into out (strings malloc'ed,
 * caller frees); returns the count or -1. */
int pk_order_section_names(const char *sym, char **out, int max, pk_err *err);

/* Writes the ordering file for `order` (indexes into names) through o.
 * `header` (may be NULL) becomes a comment at the top when the format has
 * comments (lld, ld-script; gold's parser reads every line as a pattern). */
int pk_layout_write_order(pk_out_file *o, pk_order_format fmt, const char *const *names,
                          const uint32_t *order, size_t n, const char *header, pk_err *err);

#endif

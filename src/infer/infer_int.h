/* infer_int.h — shared internals of src/infer/ (not part of the API). */
#ifndef PK_INFER_INT_H
#define PK_INFER_INT_H

#include "infer/infer.h"

#include <stdlib.h>

/* Capacity standing for "unbounded": above any sum of weights (2^16
 * blocks of PK_FLOW_MAX), yet sums of a few stay far from overflowing
 * int64 (profi uses 2^50 with no bound on weights). */
#define PK_MCF_INF ((int64_t)1 << 56)

/* ---- switch tables (jumptable.c, for every architecture) ---- */

/* The target of one table entry (its bytes), in the form the resolver
 * decoded from the code; `form` is the resolver's own description. */
typedef uint64_t (*pk_jt_entry_fn)(const uint8_t *entry, const void *form);

/* Reads the entries of the table at `table` (esize bytes each) into
 * `targets`, with pk_jtable_resolve's contract: `count` entries when a bound
 * was found, each an instruction of the function (or, with `cold_ok`,
 * executable code outside it), else 0; count 0 (no bound): entries while
 * they land on instructions of the function, at most 4096, kept when there
 * are two or more (returns 2). */
int pk_jt_read(const pk_elf *elf, const pk_insn *insns, size_t n, uint64_t table, size_t esize, uint32_t count,
               bool cold_ok, pk_jt_entry_fn entry, const void *form, pk_vec *targets, pk_err *err);

/* ---- graph helpers over a pk_cfg (cfg_graph.c) ---- */

/* Predecessor lists in CSR form: the in-edges of block b are
 * edge indexes pred_edge[pred_first[b] .. pred_first[b + 1]). */
typedef struct pk_cfg_preds {
    uint32_t *pred_first;  /* nblocks + 1 */
    uint32_t *pred_edge;   /* nedges */
} pk_cfg_preds;

int pk_cfg_preds_build(const pk_cfg *cfg, pk_cfg_preds *p);
void pk_cfg_preds_free(pk_cfg_preds *p);

/* Marks (mark[b] = 1) every block reachable from `start` along the edges
 * whose kind bit is not in skip_kinds (bit 1 << PK_CFG_*); `stack` has room
 * for nblocks entries. Blocks already marked stop the walk. */
void pk_cfg_reach(const pk_cfg *cfg, uint32_t start, uint8_t *mark, uint32_t *stack, unsigned skip_kinds);

/* The heads of the regions not marked yet (see infer.h on unresolved
 * indirect jumps): unmarked blocks without predecessor (other than
 * themselves) in address order, then the first block by address of each
 * cycle (strongly connected component) of what is left that nothing else
 * left enters. Writes their indexes to heads (room for nblocks) and
 * returns their number; marks everything. */
size_t pk_cfg_region_heads(const pk_cfg *cfg, const pk_cfg_preds *p, uint8_t *mark, uint32_t *stack,
                           unsigned skip_kinds, uint32_t *heads);

/* ---- min-cost flow (mcf.c) ---- */

typedef struct pk_mcf pk_mcf;

/* A network of nnodes nodes; edges are added in a fixed order, which makes
 * the result deterministic. */
pk_mcf *pk_mcf_new(uint32_t nnodes);
void pk_mcf_free(pk_mcf *g);
/* Adds an edge (cap > 0, cost >= 0, from != to) and returns its id, or
 * UINT32_MAX on OOM. */
uint32_t pk_mcf_add(pk_mcf *g, uint32_t from, uint32_t to, int64_t cap, int64_t cost);
/* Min-cost max-flow from s to t: successive shortest paths (Dijkstra with
 * potentials, costs are non-negative), each distance phase saturated by
 * augmenting paths found breadth-first, optionally spread evenly over the
 * DAG of equal-cost paths as profi does. -1 on OOM. */
int pk_mcf_solve(pk_mcf *g, uint32_t s, uint32_t t, bool even);
/* The flow on an edge after solving. */
int64_t pk_mcf_flow(const pk_mcf *g, uint32_t edge);

/* ---- methods (flow.c, adjust.c, propagate.c) ---- */

/* Per-block state shared by the flow read-out and the post-passes. */
typedef struct pk_flow_fn {
    const pk_cfg *cfg;
    const pk_cfg_preds *preds;
    const int64_t *weight;   /* after the entry fix-up */
    uint8_t *kept;           /* reachable and kept in the network */
    uint8_t *entry;          /* 1: primary or secondary entry */
    uint8_t *exit;           /* 1: exit or pseudo-exit */
    int64_t *bflow;          /* block counts */
    int64_t *eflow;          /* edge counts */
    int64_t *entry_flow;     /* flow entering block b from outside (entries) */
} pk_flow_fn;

void pk_flow_join_islands(pk_flow_fn *f);
void pk_flow_rebalance_unknown(pk_flow_fn *f);

int pk_flow_propagate(const pk_cfg *cfg, const int64_t *weight, int64_t entry_count, const pk_flow_opts *o,
                      uint64_t *block_count, uint64_t *edge_count, pk_err *err);

#endif

/* cg_order.h — the top-down order in which the pre-inliner visits functions.
 *
 * The pre-inliner decides for a caller before its callees, so that a
 * callee's contexts are merged into its base profile only after every
 * caller had the chance to inline them. A profiled call graph has cycles
 * (recursion through an interpreter's call path, mutual recursion), and
 * inside a cycle there is no top: whichever member is visited first keeps
 * its contexts, and whichever comes later finds its callers' contexts of it
 * already merged away. Every call from a member to one visited before it is
 * such a loss, weighted by its count; so the members are ordered to make the
 * weight of those backward calls small: a greedy minimum feedback arc set
 * (Eades, Lin and Smyth). llvm-profgen orders them by the cycle's maximum-
 * weight spanning tree, roots first (scc_member_iterator), which leaves any
 * call outside the tree free to go backward: on Duktape an interpreter
 * helper with 185,000 samples under the bytecode loop was a root of the tree
 * and visited before the loop (bench/results/cs-generalize-2026-11-27.md).
 * That order stays available (PK_CG_CYCLE_MST).
 */
#ifndef PK_CG_ORDER_H
#define PK_CG_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "common/pk_common.h"

/* How the members of a cycle are ordered. */
enum pk_cg_cycle_order {
    PK_CG_CYCLE_FAS,   /* least weight of calls to an earlier member (greedy
                          minimum feedback arc set, Eades-Lin-Smyth): the default */
    PK_CG_CYCLE_MST,   /* maximum-weight spanning tree, roots first (llvm-profgen's) */
};

typedef struct pk_cg_edge {
    uint32_t from, to;     /* function indices */
    uint64_t weight;       /* calls (max of call-site count and callee head) */
} pk_cg_edge;

/* Functions 0..nf-1 in top-down order into `order` (nf entries): Tarjan's
 * strongly connected components from a virtual entry that calls every
 * function, callers' components first, each component's members ordered as
 * above. `edges` (any order; sorted in place) may repeat a pair: weights of
 * a pair add up, and a pair whose sum is at most `cold` is left out (cold 0:
 * none). What the kept edges leave unordered follows the top-down order of
 * the whole graph, cold pairs included (a caller before its callee); with
 * nothing left out, the entry calls the functions in index order. */
int pk_cg_top_down(size_t nf, pk_cg_edge *edges, size_t ne, uint64_t cold, int cycle_order, uint32_t *order,
                   pk_err *err);

#endif

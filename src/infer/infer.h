/* infer.h — flow inference for profiles without LBR (issue 17): turns
 * instruction-pointer hit counts into block and edge counts that satisfy
 * flow conservation, so the LBR pipeline can consume them as synthetic
 * fall-through ranges and taken branches.
 *
 * Two parts:
 *   1. The control-flow graph of one function at binary level (pk_cfg):
 *      blocks by address, edges by kind, jump tables read from the binary.
 *   2. Flow inference over that graph (pk_flow_infer): profi's min-cost flow
 *      model (LLVM SampleProfileInference, see
 *      research/perf-data-inference-libs.md §3), AutoFDO-style propagation
 *      as a baseline, and a naive split for measurements.
 *
 * Typical use (per function, then per calling context):
 *     pk_cfg cfg;
 *     pk_cfg_build_binary(&cfg, bin, nr, ranges, nranges, entry, &err);
 *     pk_flow_block_weights(&cfg, addrs, hits, nhits, 16, weight);
 *     pk_flow_infer(&cfg, weight, PK_FLOW_UNKNOWN, &opts, bcount, ecount, &err);
 *     ... blocks → fall-through ranges, JUMP/TABLE edges → taken branches ...
 *     pk_cfg_free(&cfg);
 *
 * Nothing here prints, exits or keeps global state. A pk_cfg is read-only
 * after it is built: several threads may run pk_flow_infer on one pk_cfg. */
#ifndef PK_INFER_H
#define PK_INFER_H

#include "binary/binary.h"
#include "common/pk_common.h"

/* ======================================================================
 * Control-flow graph of one function
 * ======================================================================
 *
 * Blocks are split at the function entry, at the first instruction of every
 * contiguous run of instructions (a function may have several ranges, e.g.
 * gcc's .cold part), at every branch target inside the function (direct
 * jumps, conditional branches, resolved jump-table entries), and after every
 * control transfer: jmp, jcc, ret, indirect jmp, undecodable bytes, ud2 /
 * hlt / int3, and after every call. A block ends with each call and is
 * followed by a PK_CFG_AFTER_CALL edge to the block at the return address,
 * because the pipeline turns blocks into fall-through ranges and an LBR
 * range never crosses a call. Calls are never edges to other functions: a
 * call to the function itself (recursion) is just a call.
 *
 * A block is an exit (PK_CFG_EXIT) when control may leave the function at
 * its end: ret; a direct jmp or jcc whose target is not an instruction of
 * the function (tail call; for a jcc the fall-through edge stays); a call
 * that does not return (a stop of the hints: pk_cfg_build_binary finds a
 * known noreturn callee, see pk_cfg_noreturn, or a call followed by ud2 /
 * hlt / int3) or has no instruction at its return address; undecodable
 * bytes, ud2, hlt, int3;
 * an unresolved indirect jmp, and a resolved one with a table entry outside
 * the function's ranges; a block whose last instruction falls off the end
 * of a range.
 *
 * Jump tables: the indirect jumps of switch statements are resolved from the
 * binary (see pk_cfg_build_binary) and get one PK_CFG_TABLE edge per distinct
 * target. An unresolved indirect jump is an exit AND gets a
 * PK_CFG_UNKNOWN_IJMP edge to the head of every region the entry cannot
 * reach without it: every block other than the entry that has no
 * predecessor, then, for what is left (code reached only through cycles
 * that nothing else enters), the first block by address of each such
 * cycle.
 * (Why both: an unresolved indirect jump is a switch whose table we could
 * not read, whose cases are exactly such unreached regions, or a tail call
 * through a pointer, which leaves the function; the flow picks whichever
 * the samples support.)
 *
 * There are no parallel edges: a conditional branch whose target is its own
 * fall-through gives one PK_CFG_FALL edge; repeated table entries one edge.
 * Self-loops (a block branching to its own start) are allowed. */

enum pk_cfg_edge_kind {
    PK_CFG_FALL,          /* to the next block in memory, no branch taken */
    PK_CFG_JUMP,          /* taken direct jmp or jcc */
    PK_CFG_TABLE,         /* indirect jmp through a resolved jump table */
    PK_CFG_UNKNOWN_IJMP,  /* unresolved indirect jmp, conservative (see above) */
    PK_CFG_AFTER_CALL,    /* from a block ending in a call to the block at the return address */
};

enum pk_cfg_block_flag {
    PK_CFG_EXIT = 1,      /* control may leave the function after this block */
    PK_CFG_STOP = 2,      /* ends in an instruction after which execution does not go on
                             (ud2, hlt, int3, invalid bytes, noreturn call): also an exit */
};

typedef struct pk_cfg_block {
    uint64_t begin;       /* address of the first instruction */
    uint64_t last;        /* address of the last instruction */
    uint64_t end;         /* address after the last instruction */
    uint32_t ninsns;
    uint32_t first_succ;  /* its out-edges are edges[first_succ .. first_succ + nsucc) */
    uint32_t nsucc;
    uint8_t term;         /* PK_INSN_* class of the last instruction */
    uint8_t flags;        /* PK_CFG_EXIT | PK_CFG_STOP */
} pk_cfg_block;

typedef struct pk_cfg_edge {
    uint32_t from, to;    /* block indexes */
    uint8_t kind;         /* enum pk_cfg_edge_kind */
} pk_cfg_edge;

typedef struct pk_cfg {
    uint64_t entry;
    pk_cfg_block *blocks; /* sorted by address */
    size_t nblocks;
    uint32_t entry_block; /* index of the block starting at entry */
    pk_cfg_edge *edges;   /* grouped by from (block order); a block's edges: FALL
                             before JUMP, TABLE and UNKNOWN_IJMP by target */
    size_t nedges;
    uint32_t ijumps_resolved, ijumps_unresolved;
    uint32_t ijumps_guessed;   /* of the resolved: table size guessed (see pk_jtable_resolve) */
    uint32_t ijumps_untabled;  /* of the unresolved: no table form (pk_jtable_form), so
                                  calls through pointers in tail position, not
                                  switches the resolver missed (x86-64; set by
                                  pk_cfg_build_binary) */
} pk_cfg;

/* What the instructions alone do not say, found by reading the binary. */
typedef struct pk_cfg_jtable {
    uint64_t ijmp;              /* address of the indirect jmp */
    const uint64_t *targets;    /* every entry of its table (repeats allowed) */
    uint32_t ntargets;
    bool guessed;               /* its size was guessed (no bound check found) */
} pk_cfg_jtable;

typedef struct pk_cfg_hints {
    const pk_cfg_jtable *tables;  /* resolved indirect jumps, any order */
    size_t ntables;
    const uint64_t *stops;        /* sorted addresses of instructions after which
                                     execution does not go on: ud2, hlt, calls to
                                     noreturn functions */
    size_t nstops;
    const uint64_t *taken;        /* sorted addresses of the function that data holds
                                     (code addresses taken: computed-goto labels) */
    size_t ntaken;
} pk_cfg_hints;

/* Builds the CFG from the decoded instructions of one function: sorted by
 * address, without overlaps, as pk_binary_func_insns or
 * pk_binary_decode_range give them; several ranges are allowed (gaps
 * between them are not code of the function). `entry` must be the address
 * of one of the instructions. hints may be NULL (no jump tables: every
 * indirect jmp is unresolved; no stops other than invalid bytes).
 * A table target inside the ranges but not at an instruction start makes
 * that table unresolved; one outside the ranges makes the jump an exit too.
 * Errors: empty or unsorted input, entry not found, OOM.
 * On error *cfg is left empty (safe to pk_cfg_free). */
int pk_cfg_build(pk_cfg *cfg, const pk_insn *insns, size_t n, uint64_t entry,
                 const pk_cfg_hints *hints, pk_err *err);
void pk_cfg_free(pk_cfg *cfg);
/* The block containing addr (any byte of it), UINT32_MAX if none. */
uint32_t pk_cfg_block_at(const pk_cfg *cfg, uint64_t addr);

/* What one binary tells every CFG of its functions.
 * Noreturn callees: defined functions, PLT stubs and GOT
 * slots called indirectly (resolved through the slot's JUMP_SLOT / GLOB_DAT
 * relocation) whose name is a
 * well-known noreturn function of libc, libstdc++ and the unwinder (abort,
 * exit, _exit, __assert_fail, __stack_chk_fail, __cxa_throw, _Unwind_Resume,
 * longjmp, std::__throw_*, ...). Built once per binary, read-only after:
 * the noreturn attribute itself is not in the binary, so names are all we
 * have; a function missing from the list only costs an AFTER_CALL edge
 * that no flow will use.
 * Code addresses taken in data: the addends of the binary's RELATIVE
 * relocations that fall in executable sections (position-independent
 * binaries only: elsewhere nothing marks them). Inside a function (not at
 * its entry) they are the labels of computed gotos (`goto *table[op]`, an
 * interpreter's dispatch): block leaders, and the targets of the function's
 * unresolved indirect jumps.
 * The pk_binary must outlive it. */
typedef struct pk_cfg_noreturn pk_cfg_noreturn;
int pk_cfg_noreturn_open(pk_cfg_noreturn **out, pk_binary *bin, pk_err *err);
void pk_cfg_noreturn_close(pk_cfg_noreturn *nr);
/* True when a call to `target` does not return. */
bool pk_cfg_noreturn_call(const pk_cfg_noreturn *nr, uint64_t target);
/* True when the instruction at addr (len bytes) is an x86-64 call through a
 * GOT slot whose symbol the binary does not define (`call *slot(%rip)`, a
 * -fno-plt call into a shared library): its callee is other code. */
bool pk_cfg_icall_to_import(const pk_cfg_noreturn *nr, uint64_t addr, uint32_t len);

/* Convenience over pk_binary: decodes the ranges [begin, end) (any order,
 * not overlapping), resolves jump tables from the binary's bytes
 * (pk_jtable_resolve), marks ud2/hlt/int3, calls to noreturn functions
 * (direct, through a PLT stub or through a GOT slot; nr may be NULL) and
 * calls followed by ud2/hlt/int3 as stops, and builds the CFG. */
int pk_cfg_build_binary(pk_cfg *cfg, pk_binary *bin, const pk_cfg_noreturn *nr,
                        const pk_addr_range *ranges, size_t nranges, uint64_t entry, pk_err *err);

/* Jump tables of x86-64 switch statements as clang-19 and gcc-12 emit them
 * at -O2 (the instructions before the jmp are decoded again with Zydis,
 * walking back in address order: at most 64 instructions, 1024 for the
 * table's base register, which may be set once at the top of a function):
 *   non-PIE:  jmp *T(,%idx,8)                  or  mov T(,%idx,8),%r; jmp *%r
 *   PIE:      lea T(%rip),%b; movslq (%b,%idx,4),%r; add %b,%r; jmp *%r
 *             (the lea may be hoisted out of a loop; `add %r,%b; jmp *%b` too;
 *             when other writes of %b lie between in address order, on
 *             paths that do not reach the jump, the lea past them is taken,
 *             and then only a table with a bound check and every entry an
 *             instruction of insns[0..n))
 * The number of entries comes from the bound check on the index:
 * `cmp $N,%idx` and then (maybe after a few moves, which leave the flags)
 * ja/jbe (N+1 entries) or jae/jb (N entries), or `and $2^k-1,%idx`; the
 * index may be a register copy or zero-extension of the checked register
 * (made before or after the check), or loaded from the checked memory
 * (`cmpb $8,0x19(%rbx); ja; movzbl 0x19(%rbx),%eax`, its address register
 * possibly set from another by lea or mov in between). The table is
 * read from the file (pk_elf_vaddr_bytes); every entry must be the address
 * of an instruction of insns[0..n), or lie outside them in executable code
 * (a case in a .cold part that was not among the ranges: pk_cfg_build makes
 * the jump an exit as well), or the table is not resolved.
 * Without a bound check (clang omits it when the cases cover every value
 * of the index's type) the table's size is guessed: entries are read while
 * they are instructions of the function (at least 2, at most 4096); a
 * guess may take in entries of a following table of the same function,
 * extra edges that only widen what the flow may use.
 * Returns 1 (bounded) or 2 (size guessed) and appends the entries (table
 * order) to `targets` (a pk_vec of uint64_t), 0 when not resolved, -1 on
 * OOM. */
int pk_jtable_resolve(const pk_elf *elf, const pk_insn *insns, size_t n, size_t ijmp_index,
                      pk_vec *targets, pk_err *err);
/* Whether the x86-64 indirect jmp at insns[ijmp_index] takes its target
 * from a table: through memory with an index register, or from a register
 * loaded so (walking back as above), directly or added to a base. false:
 * a pointer loaded without an index (`mov 0x18(%rbx),%rax; ...; jmp *%rax`,
 * `jmp *p(%rip)`): a call in tail position, not a switch. */
bool pk_jtable_form(const pk_elf *elf, const pk_insn *insns, size_t n, size_t ijmp_index);
/* The same for AArch64 code (jumptable_a64.c): compressed tables of 1-, 2-
 * or 4-byte word offsets from an adr'd base label, bounded by cmp #N and an
 * unsigned b.cond (clang-19 and gcc-12 forms). */
int pk_jtable_resolve_a64(const pk_elf *elf, const pk_insn *insns, size_t n, size_t ijmp_index, pk_vec *targets,
                          pk_err *err);

/* ======================================================================
 * Flow inference
 * ====================================================================== */

#define PK_FLOW_UNKNOWN (-1)

enum pk_flow_cost_model { PK_FLOW_COSTS_FLAT, PK_FLOW_COSTS_POISSON };
/* Largest weight / entry count: sums over thousands of blocks stay far
 * from overflowing (about 10^12; scale counts down if needed). */
#define PK_FLOW_MAX ((int64_t)1 << 40)
#define PK_FLOW_MAX_COST ((int64_t)1 << 24)

enum pk_flow_method {
    PK_FLOW_MCF,        /* profi-style min-cost flow (default) */
    PK_FLOW_PROPAGATE,  /* AutoFDO equivalence classes + propagation (baseline) */
    PK_FLOW_NONE,       /* block count = its weight, edges split naively (for measuring) */
};

typedef struct pk_flow_opts {
    int method;                 /* enum pk_flow_method */
    /* MCF costs per unit of count changed (profi's defaults): */
    int64_t cost_inc;           /* raising a block above its weight: 10 */
    int64_t cost_dec;           /* lowering a block below its weight: 20 */
    int64_t cost_inc_entry;     /* raising the entry block (or the known entry count): 40 */
    int64_t cost_dec_entry;     /* lowering the entry block (or the known entry count): 10 */
    int64_t cost_inc_zero;      /* raising a block measured as zero: 11 */
    int64_t cost_inc_unknown;   /* raising a block of unknown weight: 0 (never lowered) */
    bool even_distribution;     /* spread flow evenly over equal-cost paths (on) */
    bool join_islands;          /* connect positive-flow components to the entry (on) */
    bool rebalance_unknown;     /* split flow evenly in unknown subgraphs (on) */
    uint32_t max_iterations;    /* PROPAGATE: bound on the passes of each phase (100) */
    /* MCF: how a block's costs depend on its samples (PK_FLOW_COSTS_FLAT:
     * not at all, profi's). Why they should: a weight is the mean of the
     * block's instructions' hits, and by Poisson statistics the mean of k
     * instructions with m hits each on average is off by about sqrt(m / k);
     * PK_FLOW_COSTS_POISSON makes the cost per unit of change 1/that,
     * sqrt(k / m) (m at least 1/2), so the solver moves the uncertain
     * weights (short blocks, many hits) and keeps the sure ones (long blocks,
     * few hits: a long block without a hit ran rarely). weight_scale: the
     * weights' units per hit per instruction (pk_flow_block_weights'
     * scale). */
    int cost_model;
    uint32_t weight_scale;
    /* MCF: convex costs (off): raising or lowering a block by more than half
     * its weight costs 4 times as much per unit, so that corrections spread
     * over many blocks rather than zeroing a few. */
    bool convex_costs;
} pk_flow_opts;

void pk_flow_defaults(pk_flow_opts *o);

/* Infers block and edge counts of cfg.
 *   weight[b]: the measured count of block b (0 .. PK_FLOW_MAX; 0 is a known
 *              zero), or PK_FLOW_UNKNOWN when nothing is known about it.
 *   entry_count: the number of times the function was entered, if known
 *              (from its callers' counts; 0 .. PK_FLOW_MAX), else
 *              PK_FLOW_UNKNOWN.
 * Outputs block_count[nblocks] and edge_count[nedges].
 *
 * PK_FLOW_MCF (profi): each block is two nodes joined by an edge whose flow
 * is the count; raising a count above its weight or lowering it below costs
 * per unit (costs above), so the solver keeps measured counts where they are
 * consistent and changes them as little as possible where they are not.
 * Edges carry no measurement (block-only input): flow on any edge, the
 * conservative UNKNOWN_IJMP ones included, costs nothing by itself.
 * Integers only, deterministic (same input, same output). Specifics:
 *   - no samples (no weight > 0, no entry_count > 0): every count is 0;
 *   - a known-zero entry block is raised to 1 when any block has samples;
 *   - a known entry_count is an edge from the source to the entry block with
 *     that weight (costs cost_inc_entry / cost_dec_entry), and the entry
 *     block then costs as any other block;
 *   - blocks the entry cannot reach get 0, except regions that hold
 *     samples (exception landing pads, code reached from outside): their
 *     heads (chosen as for unresolved indirect jumps above) are secondary
 *     entries;
 *   - blocks that reach no exit (infinite loops) may end the flow
 *     themselves (profi would drop them, losing e.g. a server's main loop);
 *   - post-passes join islands and rebalance unknown subgraphs as profi.
 * The result conserves flow at every block b kept:
 *   Σ in-edges + (entry flow if b is an entry) = block_count[b]
 *       = Σ out-edges + (exit flow if b is an exit or reaches no exit),
 * where an entry's flow is block_count − Σ its in-edges (for the entry
 * block: the function's entry count), and only blocks flagged PK_CFG_EXIT
 * (or reaching no exit) have exit flow = block_count − Σ out-edges.
 *
 * PK_FLOW_PROPAGATE and PK_FLOW_NONE do NOT guarantee conservation (that is
 * what they are measured for); unknown weights count as 0 in NONE.
 * Errors: a weight or entry count out of range, a cost outside
 * 0 .. PK_FLOW_MAX_COST, OOM. */
int pk_flow_infer(const pk_cfg *cfg, const int64_t *weight, int64_t entry_count,
                  const pk_flow_opts *o, uint64_t *block_count, uint64_t *edge_count, pk_err *err);

/* Block weights from per-instruction IP hits of the function:
 *   weight[b] = round(Σ hits of b's addresses × scale / ninsns(b)),
 * raised to 1 when the block has hits but the mean rounds to 0 (a block
 * with a hit ran). Blocks without hits get 0, a known zero: at binary level
 * every instruction can be sampled, so "no hit" is evidence, not absence of
 * information (research note §3.3).
 * Why the mean per instruction: every execution of a block executes each of
 * its instructions once, so each instruction's hits estimate the block's
 * count (times the sampling rate and the instruction's share of cycles);
 * the mean over the block makes blocks of different lengths comparable and
 * is the least noisy such estimate. The maximum (AutoFDO's choice over a
 * line's instructions) is biased upwards by noise and by skid (samples pile
 * on the instruction after a slow one); the sum grows with the block's
 * length. `scale` (e.g. 16) keeps precision for blocks hit a few times;
 * weights are capped at PK_FLOW_MAX.
 * addrs need not be sorted nor unique (hits add up). An address inside a
 * block but not on an instruction boundary (a decode that disagrees with
 * the sampled code) still counts for that block; an address in no block of
 * the function is ignored and counted in the return value.
 * Returns the number of addrs entries ignored (>= 0). */
size_t pk_flow_block_weights(const pk_cfg *cfg, const uint64_t *addrs, const uint64_t *hits, size_t nhits,
                             uint32_t scale, int64_t *weight);

/* Shrinks the block weights of a sparsely sampled part (one calling context
 * of a function, nhits samples) toward a reference shape (the function's
 * weights merged over all its contexts), keeping the part's own mass:
 *     w'[b] = (1 - l) w[b] + l * S * shape[b] / S_shape,   l = prior / (nhits + prior)
 * where S is the sum of w. Why: with few samples most blocks get no hit by
 * chance and would be taken for known zeros, while the merged shape has seen
 * every context's samples; a well-sampled part (nhits >> prior) keeps its
 * own shape. A block with a weight of its own stays at least 1. Nothing
 * changes when w or shape sums to 0 or prior is 0. */
void pk_flow_shrink_weights(int64_t *weight, size_t nblocks, uint64_t nhits, const double *shape, double prior);

#endif

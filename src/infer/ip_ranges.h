/* ip_ranges.h — instruction hits per context → fall-through ranges and taken
 * branches per context, through each function's CFG and flow inference.
 *
 * What an LBR sample measures directly (which code ran straight through, and
 * which branches were taken, how often), an IP sample only lets us estimate:
 * a block's count is the mean of its instructions' hits, and the CFG plus
 * minimum-cost flow turns those noisy block weights into counts that are
 * consistent (in = count = out at every block) and into edge counts. The
 * result is written as the ranges and branches an LBR recording would have
 * given (block begin .. last instruction; taken jumps; calls from call-site
 * blocks to the callees the stacks observed), so that tail-call frame
 * inference, symbolization, every generator and the pre-inliner run
 * unchanged.
 *
 * Calls tie the functions together: a call site's block runs at least as
 * often as the calls it makes, so after a first inference of every context
 * from its own hits, each call-site block is raised to the entry counts of
 * the callee contexts the stacks observed under it (shared out by
 * observation when a callee context has several callers), and its context is
 * inferred again. Call targets are the call-site block's count shared out in
 * proportion to the samples seen below each callee.
 */
#ifndef PK_IP_RANGES_H
#define PK_IP_RANGES_H

#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "unwind/ip_stack.h"

/* The context prior profgen uses. A context's own shape from cpu-clock
 * samples is mostly noise and time weighting: on the scoreboard's real
 * recordings (5 runs, 14-21k samples), CSSPGO builds made from every
 * leave-one-run-out subset ran, on average, -10.75 / -7.82 / -8.10 %
 * instructions against -O2 with a prior of 16 (SQLite / Lua / bzip2),
 * -11.09 / -7.86 / -8.58 % with 1,000 and -11.10 / -7.93 / -8.36 % with
 * 100,000 (every context its function's shape). With 1,000 only a context
 * holding thousands of samples (an interpreter loop's one context) keeps
 * much of its own shape; the others keep their mass, which is what the
 * pre-inliner's call counts come from. (Earlier, on Lua alone: no prior
 * -5.0 %, 16 and 64 -7.2 / -7.1 %.) */
#define PK_IP_CONTEXT_PRIOR 1000

/* The minimum-cost flow's costs for IP samples (see pk_flow_opts).
 * CONVEX, the default: Poisson-weighted and convex. Why: profi's linear,
 * uniform costs (made for LBR counts) settle the inconsistencies of noisy,
 * cycle-biased IP weights by zeroing a few blocks whole (at a merge point
 * of an interpreter's handlers, the handlers with the fewest hits lose all
 * their count); with convex costs the correction spreads over the blocks,
 * by how sure each weight is. Block overlap against exact counts, real
 * cpu-clock recordings (AutoFDO / probe-only / CSSPGO): Lua 0.892 / 0.852 /
 * 0.849 with PROFI, 0.918 / 0.899 / 0.903 with CONVEX; SQLite 0.865 / 0.837 /
 * 0.825 and 0.875 / 0.868 / 0.834; random CFGs at three sampling densities
 * in test_infer_noise. */
enum pk_ip_costs { PK_IP_COSTS_DEFAULT, PK_IP_COSTS_PROFI, PK_IP_COSTS_POISSON, PK_IP_COSTS_CONVEX };

typedef struct pk_ip_infer_opts {
    int method;                  /* enum pk_flow_method (infer.h); 0: min-cost flow */
    uint32_t scale;              /* counts per hit per instruction (0: the default, 64) */
    int costs;                   /* enum pk_ip_costs */
    /* How many samples' worth of its function's merged shape a context
     * borrows (see pk_ip_to_ranges); 0: none, each context alone. */
    uint32_t context_prior;
    bool no_call_tie;            /* tests: skip raising call-site blocks to callee entries */
    /* Threads that infer contexts at once (0 or 1: the caller's alone; at
     * most PK_IP_MAX_THREADS). Each context's inference is independent and
     * deterministic, so the result does not depend on it. */
    unsigned threads;
} pk_ip_infer_opts;

#define PK_IP_MAX_THREADS 64

typedef struct pk_ip_infer_stats {
    uint64_t contexts;           /* contexts inferred */
    uint64_t functions;          /* distinct functions whose CFG was built */
    uint64_t blocks;             /* blocks of those CFGs */
    uint64_t cfg_failed;         /* functions without a usable CFG: their hits dropped */
    uint64_t hits_dropped;       /* samples at addresses no block covers */
    uint64_t ijumps_resolved, ijumps_unresolved;
    uint64_t ijumps_untabled;    /* of the unresolved: calls through pointers (pk_cfg.ijumps_untabled) */
    uint64_t sites_raised;       /* call-site blocks raised to their callees' entries */
    uint64_t ranges, branches;   /* distinct ranges and branches written */
    /* How thinly the samples cover the code they show hot (pk_ip_density):
     * the samples inferred from, and the instructions of the hottest blocks
     * (a function's contexts summed) that ran PK_IP_HOT_SHARE of the
     * inferred instructions. */
    uint64_t samples_inferred;
    uint64_t hot_instructions;
    /* Calls through pointers in blocks that ran (calls into other binaries
     * through the GOT left out): the sites and their inferred calls (in the
     * weights' units), and of them those no sample's chain gave a callee
     * for, whose target the profile cannot name. */
    uint64_t icall_sites, icall_sites_untargeted;
    uint64_t icall_calls, icall_calls_untargeted;
} pk_ip_infer_stats;

/* Sampling density: the samples that fell in the hot code per instruction of
 * it, PK_IP_HOT_SHARE x samples / hot instructions. Below about one, what a
 * probe-only or CSSPGO profile from cpu-clock samples is worth is set by how
 * many samples there are: tcc (a C compiler) at 0.4-0.5 (5 runs merged)
 * gave 80 / 75 % of the same kind's LBR gain, at 1.2-1.4 (20 runs) 87 /
 * 93 %; Duktape at 0.5, 84 / 79 %; the scoreboard's programs, expat and
 * Duktape (20 runs), at 1.9 to 7.9, 82 to 111 % (bench/results/ip-generalize-2026-11-28.md).
 * AutoFDO's share depends on the samples' time weighting more than on their
 * number. 0 when nothing was inferred. */
#define PK_IP_HOT_SHARE 0.9
double pk_ip_density(const pk_ip_infer_stats *st);

/* Below this density, pk_ip_density_warning warns (the measurements above). */
#define PK_IP_THIN_DENSITY 1.0

/* A warning for the user when the density is below PK_IP_THIN_DENSITY
 * (buf: the text, without a prefix); 0, buf empty, when it is not. */
int pk_ip_density_warning(const pk_ip_infer_stats *st, char *buf, size_t cap);

/* A warning when at least half of the calls through pointers that ran have
 * no callee in any chain (buf: the text, without a prefix); 0, buf empty,
 * when not. */
int pk_ip_icall_warning(const pk_ip_infer_stats *st, char *buf, size_t cap);

/* A block as the density sees it: inferred count x instructions, and its
 * instructions. */
typedef struct pk_ip_block_mass {
    double mass;
    uint32_t ninsns;
} pk_ip_block_mass;

/* The instructions of the fewest blocks, heaviest first, whose mass reaches
 * `share` of the total (b is sorted in place; ties by fewer instructions
 * first, so the answer does not depend on the input order). */
uint64_t pk_ip_hot_instructions(pk_ip_block_mass *b, size_t n, double share);

/* A context with few samples cannot show its function's shape: most of its
 * blocks have no hit by chance, and flow inference takes each such block for
 * a zero. So before inference each context's block weights are shrunk toward
 * the shape of its function merged over all its contexts, the more the fewer
 * samples it has: with n samples and a prior of K,
 *     w'[b] = (n w[b] + K S w_f[b] / S_f) / (n + K)
 * (S and S_f the sums of the context's and the function's weights), so the
 * context keeps its own mass, a well-sampled one keeps its own shape, and a
 * sparse one takes its function's. A function seen in one context is left
 * as it is.
 *
 * Writes the ranges and branches of every context of `ip` (finished) into
 * `cs` (contexts interned there) when it is given, else context-free into
 * `flat`. */
int pk_ip_to_ranges(pk_binary *bin, pk_ipraw *ip, const pk_ip_infer_opts *o, pk_csraw *cs, pk_rawprof *flat,
                    pk_ip_infer_stats *st, pk_err *err);

#endif

/* probe_gen.h — pseudo-probe based profiles: probe-only (no context) and
 * context-sensitive (CSSPGO), from ranges and branches.
 *
 * Semantics follow what clang's sample loader expects from llvm-profgen
 * (llvm-profgen.md §3.7, §4.4):
 *  - every probe located inside an executed range gets the range's count;
 *    copies of one probe (duplicated code) are summed;
 *  - the entry probe (index 1) also gives head samples;
 *  - a call probe at a branch source gives a call target (the function whose
 *    entry the branch lands on);
 *  - every probe of a function body that received samples and got no count
 *    is written as an explicit 0, so the compiler can tell "not executed"
 *    from "optimized away";
 *  - each profile carries its function's CFG checksum from
 *    .pseudo_probe_desc; function names are the probe names.
 * Context-sensitive profiles count block probes only; a context is built from
 * the call probes at the caller call sites (each expanded with its inline
 * chain) followed by the leaf probe's inline chain; a call site without a
 * call probe cuts the context there (counted). An entry probe of an inlined
 * body also adds the count as body sample and call target at the inliner's
 * call-site probe, since no LBR branch exists for an inlined call.
 */
#ifndef PK_PROBE_GEN_H
#define PK_PROBE_GEN_H

#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "binary/probe_loader.h"
#include "profile/profile.h"
#include "profgen/profgen.h"
#include "unwind/unwind.h"

typedef struct pk_probe_gen_stats {
    uint64_t ranges, branches;            /* distinct entries read */
    uint64_t ranges_cross_uncond;         /* Σ counts of ranges dropped: a jump, call or return inside */
    uint64_t probes_hit;                  /* distinct probes with a count */
    uint64_t call_targets;                /* branches turned into call targets */
    uint64_t contexts;                    /* context profiles written (CS) */
    uint64_t contexts_truncated;          /* call site without a call probe */
    uint64_t missing_desc;                /* probes of a GUID without a descriptor: skipped */
    uint64_t lost_inlinee_probes;         /* CS: probes of an inlinee without inline stack: skipped */
    uint64_t profiles;                    /* top-level profiles */
} pk_probe_gen_stats;

/* Probe-only profile of `raw` (no calling contexts). */
int pk_profgen_probe(pk_binary *bin, const pk_probe_info *probes, const pk_rawprof *raw,
                     pk_profset *out, pk_probe_gen_stats *stats, pk_err *err);
/* The same, with opts->ranges_as_given (NULL opts: pk_profgen_probe): every
 * probe in a range counts, whether or not the range could have run straight
 * (an unsymbolized profile text's ranges). */
int pk_profgen_probe_opts(pk_binary *bin, const pk_probe_info *probes, const pk_rawprof *raw,
                          const pk_profgen_opts *opts, pk_profset *out, pk_probe_gen_stats *stats, pk_err *err);

/* Flat context-sensitive profile of `raw` (contexts from the unwinder).
 * raw's range counts are freed once counted (they are most of the memory
 * while the profiles are built); its contexts and branches stay. */
int pk_profgen_probe_cs(pk_binary *bin, const pk_probe_info *probes, pk_csraw *raw,
                        pk_profset *out, pk_probe_gen_stats *stats, pk_err *err);
/* Same, with the context depth limit of opts (the expanded contexts keep
 * their opts->max_context_depth innermost callers when depth_limited). */
int pk_profgen_probe_cs_opts(pk_binary *bin, const pk_probe_info *probes, pk_csraw *raw, const pk_profgen_opts *opts,
                             pk_profset *out, pk_probe_gen_stats *stats, pk_err *err);

/* The GUIDs (MD5 of every name at the function's address) of the functions
 * holding a sampled address of `cs` and/or `raw` (either may be NULL): the
 * top-level probe records worth decoding, as llvm-profgen decodes only
 * profiled functions. Adds to `keep`. */
int pk_probe_sampled_guids(const pk_elf *elf, const pk_csraw *cs, const pk_rawprof *raw, pk_u64map *keep,
                           pk_err *err);
/* The GUIDs of the functions holding the addresses that are keys of
 * `sites` (the call sites of inferred tail-call frames: see
 * pk_infer_tail_frames) that `keep` lacks, into `more` (added to keep as
 * well). */
int pk_probe_guids_at_sites(const pk_elf *elf, const pk_u64map *sites, pk_u64map *keep, pk_u64map *more,
                            pk_err *err);

#endif

/* pipeline.c — the order of profgen's stages (see pipeline.h). */
#include "profgen/pipeline.h"
#include "profgen/pipeline_feed.h"
#include "profgen/cs_cold.h"
#include "binary/binary.h"
#include "binary/probe_loader.h"
#include "profgen/cs_prep.h"
#include "profgen/llvm_unsym_out.h"
#include "infer/ip_ranges.h"
#include "pprof/pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void hex(char *out, const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = 0;
}

/* Why an input gave nothing usable (err is set from the aggregator's counts). */
static void explain_empty(const pk_agg_stats *s, const pk_ipraw *ip, const pk_pipeline_input *in,
                          const pk_agg_target *t, int64_t pid, pk_err *err)
{
    const pk_ip_stats *is = ip ? &ip->stats : NULL;
    if (!s->samples && !(is && is->samples))
        pk_err_set(err, "%s: no samples", in->path);
    else if (is && is->samples && s->samples_other_pid < s->samples && !s->mmaps_build_id_mismatch)
        pk_err_set(err, "%s: none of %llu samples without branch stack has its instruction pointer in %s "
                   "(%llu in other code, %llu outside every function symbol)", in->path,
                   (unsigned long long)is->samples, t->path, (unsigned long long)is->leaf_outside,
                   (unsigned long long)is->leaf_no_func);
    else if (!s->samples)
        pk_err_set(err, "%s: no samples", in->path);
    else if (s->samples_no_lbr == s->samples)
        pk_err_set(err, "%s: %llu samples but none has a branch stack (record with LBR: "
                   "`pgokit record`, or `perf record -b`)", in->path, (unsigned long long)s->samples);
    else if (s->samples_other_pid == s->samples)
        pk_err_set(err, "%s: all %llu samples belong to processes other than --pid %lld", in->path,
                   (unsigned long long)s->samples, (long long)pid);
    else if (s->mmaps_build_id_mismatch && !s->mmaps_target) {
        char h[41];
        hex(h, t->build_id, t->build_id_size);
        pk_err_set(err, "%s: the recorded program mapped a file named like %s but with another "
                   "build-id than this one (%s): the binary was rebuilt after recording?",
                   in->path, t->path, h);
    } else if (!s->mmaps_target && in->kind == PK_INPUT_PERF)
        pk_err_set(err, "%s: no mapping of %s in the recording (%llu mmap events)", in->path, t->path,
                   (unsigned long long)s->mmaps);
    else
        pk_err_set(err, "%s: none of %llu samples has branches in %s", in->path,
                   (unsigned long long)s->samples, t->path);
}

static void report_bad_returns(const pk_pipeline_request *req, const pk_vec *bad)
{
    for (size_t i = 0; i < bad->len; i++)
        req->bad_return(req->cb_ctx, PK_VEC_AT(bad, uint64_t, i));
}

/* Aggregates one perf.data / perf-script file into `into` (and `cs`).
 * 1: nothing usable in this input (err says why), not an error if another
 * input has samples. */

static int aggregate_one(const pk_pipeline_request *req, const pk_pipeline_input *in, const pk_agg_target *t,
                         bool calls_only, pk_rawprof *into, pk_binary *bin, pk_csraw *cs, pk_ipraw *ip,
                         pk_unwind_stats *ust, pk_err *err)
{
    pk_agg_opts ao = {.pid = req->pid, .assume_unrelocated_without_mmap = in->kind == PK_INPUT_SCRIPT};
    pk_agg *a = pk_agg_new(t, &ao, err);
    if (!a)
        return -1;
    pk_feed f = {.agg = a, .req = req, .err = err, .path = in->path, .ip = ip, .elf = pk_binary_elf(bin),
                 .bin = bin};
    pk_vec_init(&f.late, sizeof(uint64_t));
    uint64_t ip_before = ip ? ip->stats.used : 0;
    pk_unwind_code pe_code;
    if (req->drop_prolog_epilog_flat && !req->gen.keep_prolog_epilog_leaf) {
        pk_unwind_code_from_binary(&pe_code, bin);
        f.drop_pe = &pe_code;
    }
    if (cs) {
        pk_unwind_code code;
        pk_unwind_code_from_binary(&code, bin);
        /* (line-based contexts are trimmed once expanded into inline
         * frames, by the generator; probe contexts here, on call sites) */
        int cr = req->gen.compress_recursion;
        /* (a raw profile keeps every frame: contexts are trimmed after the merge) */
        bool trim = calls_only && req->gen.depth_limited && !req->raw_only;
        pk_unwind_opts uo = {.max_depth = trim ? (int)req->gen.max_context_depth : -1,
                             .compress_recursion = cr == 0 ? -1 : cr < 0 ? 0 : cr, .worker = req->worker,
                             .calls_and_entries_only = calls_only, .walk_here_every = req->walk_here_every,
                             .outside_leaf_full_context = req->gen.outside_leaf_full_context,
                             .drop_prolog_epilog_leaf = !req->gen.keep_prolog_epilog_leaf};
        if (!(f.unw = pk_unwinder_new(&code, &uo, cs, err))) {
            pk_agg_free(a);
            return -1;
        }
    }
    struct stat st;
    if (!stat(in->path, &st))
        f.size = (uint64_t)st.st_size;
    pk_agg_callbacks(a, err, &f.inner);
    pk_perf_callbacks cb;
    pk_feed_callbacks(&f, req, &cb);

    int rc;
    if (req->nperf_events && in->kind != PK_INPUT_SCRIPT) {
        rc = pk_err_set(err, "%s: --perf-event selects samples of perf script text (its event field); "
                        "for perf.data, print it with `perf script -F event,ip,brstack`", in->path);
    } else if (in->kind == PK_INPUT_PERF) {
        pk_perf_stats ps;
        rc = pk_perf_read(in->path, &cb, &ps, err);
        char w[512], msg[1200];
        if (!rc && req->warning && pk_perf_stats_warning(&ps, w, sizeof w)) {
            snprintf(msg, sizeof msg, "%s: %s", in->path, w);
            req->warning(req->cb_ctx, msg);
        }
    } else if (in->kind == PK_INPUT_PPROF) {
        /* non-leaf frames back to return addresses, as perf's chains */
        pk_pprof_opts po;
        pk_pprof_opts_init(&po);
        po.restore_return_addresses = true;
        pk_pprof_stats pst;
        f.weight_is_period = true;
        rc = pk_pprof_read_opts(in->path, &po, &cb, &pst, err);
    } else {
        pk_script_stats ss;
        rc = pk_perf_script_read(in->path, &cb, &ss, err);
        char w[1024], msg[1200];
        if (!rc && req->warning && pk_script_stats_warning(&ss, w, sizeof w)) {
            snprintf(msg, sizeof msg, "%s: %s", in->path, w);
            req->warning(req->cb_ctx, msg);
        }
    }
    if (!rc && f.unw)
        rc = pk_unwinder_finish(f.unw, err);
    if (!rc && f.unw && req->bad_return) {
        pk_vec bad;
        pk_vec_init(&bad, sizeof(uint64_t));
        if (!(rc = pk_unwinder_bad_returns(f.unw, &bad, err)))
            report_bad_returns(req, &bad);
        pk_vec_free(&bad);
    }
    if (!rc && f.late_samples)
        rc = pk_feed_ip_late(&f);
    pk_vec_free(&f.late);
    if (req->phase)
        req->phase(req->cb_ctx, NULL);
    if (!rc) {
        pk_rawprof *r = pk_agg_profile(a);
        bool ip_used = ip && ip->stats.used > ip_before;
        if (!r->stats.samples_used && !ip_used) {
            explain_empty(&r->stats, ip, in, t, req->pid, err);
            rc = 1;
        } else {
            rc = pk_rawprof_merge(into, r, err);
        }
    }
    free(f.frames);
    ust->samples_prolog_epilog += f.dropped_pe;
    if (f.unw) {
        pk_unwind_stats_add(ust, pk_unwinder_stats(f.unw));
        pk_unwinder_free(f.unw);
    }
    pk_agg_free(a);
    return rc;
}

/* Everything the stages share; freed in one place. */
typedef struct run {
    const pk_pipeline_request *req;
    pk_pipeline_report *rep;
    pk_binary *bin;
    pk_agg_segment *segs;
    pk_agg_target target;
    pk_rawprof raw;
    bool raw_init, cs_init, probes_init, ps_init, nested_init;
    bool named;                      /* csr's contexts are ps's (llvm-profgen's line-based text) */
    pk_csraw csr;
    pk_ipraw ip;                     /* IP samples, until inferred into ranges */
    bool ip_init;
    pk_cs_prep *prep;                /* probes and DWARF index, on a second thread */
    pk_u64map keep;                  /* GUIDs of the functions whose probes are decoded */
    pk_probe_info probes;
    pk_profset ps, nested;
    bool base_shape;                 /* raw holds the context-free inference of csr's IP samples */
    pk_profset flat;                 /* ... and this its probe profile, once generated */
    bool flat_init;
} run;

static int open_target(run *r, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    if (pk_binary_open_opts(&r->bin, req->binary, &req->debug, err))
        return -1;
    snprintf(r->rep->debug_origin, sizeof r->rep->debug_origin, "%s", pk_binary_debug_origin(r->bin));
    if (pk_agg_target_of_elf(&r->target, &r->segs, pk_binary_elf(r->bin), req->binary, err))
        return -1;
    if (pk_rawprof_init(&r->raw, req->binary, r->target.build_id, r->target.build_id_size,
                        r->target.preferred_base, err))
        return -1;
    r->raw_init = true;
    return 0;
}

/* Where llvm-profgen's unsymbolized addresses count from. */
static uint64_t llvm_base(const run *r, const pk_pipeline_request *req)
{
    if (req->llvm_absolute)
        return 0;
    size_t n;
    const pk_elf_segment *seg = pk_elf_segments(pk_binary_elf(r->bin), &n);
    /* llvm-profgen takes the first PT_LOAD whose page is not 0 (a zero
     * base reads as "not set yet" there) */
    for (size_t i = 0; req->llvm_first_loadable_base && i < n; i++)
        if (seg[i].vaddr & ~0xfffULL)
            return seg[i].vaddr & ~0xfffULL;
    return pk_elf_first_exec_vaddr(pk_binary_elf(r->bin));
}

/* One raw profile into the run, each part where a recording's samples
 * would have gone; what the run cannot take is said, not dropped silently. */
static int read_raw(run *r, const pk_pipeline_input *in, bool probe, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    pk_rawprof2 rp;
    if (pk_rawprof2_read(&rp, in->path, err))
        return -1;
    bool trim = probe && req->gen.depth_limited && !req->raw_only; /* as the unwinder would have */
    pk_rawprof2_sink sink = {.flat = &r->raw, .cs = r->cs_init ? &r->csr : NULL,
                             .max_depth = trim ? (int)req->gen.max_context_depth : -1,
                             .ip = r->ip_init ? &r->ip : NULL, .unwind = &r->rep->unwind};
    int rc = pk_rawprof2_add_to(&rp, &sink, err);
    r->rep->raw_v1_inputs += rp.version == 1;
    pk_rawprof2_free(&rp);
    if (rc) {
        pk_err_prefix(err, "%s", in->path);
        return -1;
    }
    char msg[1400];
    if (sink.contexts_flattened && req->warning) {
        snprintf(msg, sizeof msg, "%s: its calling contexts are summed into flat counts (no contexts are made "
                 "for this binary or with these options)", in->path);
        req->warning(req->cb_ctx, msg);
    }
    if (sink.ip_unused && req->warning) {
        snprintf(msg, sizeof msg, "%s: its IP samples are not used (--lbr)", in->path);
        req->warning(req->cb_ctx, msg);
    }
    return 0;
}

/* Reads every input into the raw profile (and the context profile). */
static int read_inputs(run *r, bool probe, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    size_t empty_inputs = 0;
    for (size_t i = 0; i < req->ninputs; i++) {
        const pk_pipeline_input *in = &req->inputs[i];
        if (in->kind == PK_INPUT_RAW) {
            if (read_raw(r, in, probe, err))
                return -1;
            continue;
        }
        if (in->kind == PK_INPUT_LLVM_UNSYM) {
            if (probe) {
                if (pk_llvm_unsym_read(&r->raw, in->path, llvm_base(r, req), err))
                    return -1;
                continue;
            }
            /* line-based contexts: named by their source frames, which
             * become the profile's contexts as they are */
            if (!r->ps_init && pk_profset_init(&r->ps, err))
                return -1;
            r->ps_init = true;
            if (!r->cs_init && pk_csraw_init(&r->csr, r->target.preferred_base, err))
                return -1;
            r->cs_init = true;
            if (pk_llvm_unsym_read_ctx(&r->raw, &r->csr, &r->ps, in->path, llvm_base(r, req), err))
                return -1;
            r->named = pk_csraw_num_ctxs(&r->csr) > 0;
            continue;
        }
        /* probe-based contexts use no branch but calls and tail calls */
        int a = aggregate_one(req, in, &r->target, probe && !req->raw_llvm_text, &r->raw, r->bin, r->cs_init ? &r->csr : NULL,
                              r->ip_init ? &r->ip : NULL, &r->rep->unwind, err);
        if (a < 0 || (a > 0 && req->ninputs == 1))
            return -1;
        if (a > 0) {
            if (req->warning)
                req->warning(req->cb_ctx, err->msg);
            empty_inputs++;
        }
    }
    if (empty_inputs == req->ninputs) {
        pk_err_prefix(err, "no input has samples of %s (last one)", req->binary);
        return -1;
    }
    return 0;
}

/* CSSPGO and line CS: tail-call frames, and (CSSPGO) the probes of the
 * sampled functions. Only the sampled functions' probes are decoded, as
 * llvm-profgen does (all of them would be most of the memory and time at
 * small sample counts). CSSPGO: those sampled so far are decoded on another
 * thread while tail-call frames are inferred here, and that thread goes on to
 * index the DWARF of the code sizes while the profile is built; the inferred
 * frames add call sites of functions that may have no sample of their own,
 * whose probes are decoded afterwards. */
static int prepare_contexts(run *r, int mode, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    pk_elf *elf = pk_binary_elf(r->bin);
    pk_tailcall_stats *tst = req->no_infer_frames ? NULL : &r->rep->tailcall;
    r->rep->tailcall_valid = tst != NULL;
    unsigned tflags = r->rep->from_ip ? PK_TAILCALL_INDIRECT_JUMPS : 0;
    if (mode == PK_MODE_LINE_CS)
        return tst ? pk_infer_tail_frames(&r->csr, r->bin, 0, tflags, tst, NULL, err) : pk_csraw_canonicalize(&r->csr, err);
    pk_u64map more = {0};
    if (pk_probe_sampled_guids(elf, &r->csr, NULL, &r->keep, err) ||
        pk_cs_prep_start(&r->prep, r->bin, &r->probes, &r->keep, !req->no_preinline && req->worker, err))
        return -1;
    r->probes_init = !r->prep; /* with a thread, once it says so */
    /* (the inference leaves contexts canonically numbered) */
    pk_u64map added = {0}; /* call sites of the inferred frames */
    int tr = tst ? pk_infer_tail_frames(&r->csr, r->bin, 0, tflags, tst, &added, err) : pk_csraw_canonicalize(&r->csr, err);
    if (r->prep) {
        int lr = pk_cs_prep_probes(r->prep, tr ? NULL : err);
        r->probes_init = !lr;
        tr = tr || lr;
    }
    tr = tr || pk_probe_guids_at_sites(elf, &added, &r->keep, &more, err) ||
         pk_probe_info_load_more(&r->probes, elf, &more, err);
    pk_u64map_free(&more);
    pk_u64map_free(&added);
    pk_cs_prep_index(r->prep); /* the table is final: the DWARF of its functions */
    return tr ? -1 : 0;
}

static int preinline_contexts(run *r, int mode, pk_err *err);

/* The hot and cold thresholds of a profile, as llvm-profgen computes them. */
static int thresholds(const pk_pipeline_request *req, const pk_profset *ps, uint64_t *hot, uint64_t *cold,
                      pk_err *err)
{
    pk_summary sum;
    if ((!req->hot_count_set || !req->cold_count_set) && pk_profset_summary(ps, &sum, err))
        return -1;
    *hot = req->hot_count_set ? req->hot_count : pk_summary_threshold(&sum, req->cutoff_hot ? req->cutoff_hot : 990000);
    *cold = req->cold_count_set ? req->cold_count
                                : pk_summary_threshold(&sum, req->cutoff_cold ? req->cutoff_cold : 999999);
    return 0;
}

/* Flat profiles: --trim-cold-profile drops the top-level profiles under
 * the cold threshold. */
static int trim_flat(const pk_pipeline_request *req, pk_profset *ps, pk_err *err)
{
    uint64_t hot, cold;
    if (!req->trim_cold || thresholds(req, ps, &hot, &cold, err))
        return req->trim_cold ? -1 : 0;
    for (size_t i = 0; i < ps->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed && f->total < cold)
            pk_profset_remove(ps, f);
    }
    return 0;
}

/* Every function with code in the binary's DWARF, for the profile symbol
 * list (the compiler tells "not sampled" from "not in the profile"). */
static int add_symbol_list(pk_binary *bin, pk_profset *ps, pk_err *err)
{
    pk_symbolizer *sym;
    const pk_dwarf_func *funcs;
    size_t n;
    if (pk_binary_symbolizer(bin, &sym, err) || pk_dwarf_funcs(sym, &funcs, &n, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        pk_name_id id;
        const char *name = funcs[i].name;
        if (!name || !*name)
            continue;
        if (pk_profset_intern(ps, name, strlen(name), &id, err) || pk_profset_add_symbol(ps, id, err))
            return -1;
    }
    return 0;
}

/* The flat context profile → pre-inlined (unless --csspgo-preinliner=0),
 * cold contexts merged or trimmed, nested (unless --gen-cs-nested-profile=0). */
static int finish_contexts(run *r, int mode, const pk_profset **result, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    bool pre = !req->no_preinline && !req->no_csspgo_preinliner;
    bool nest = !req->no_preinline && !req->no_nest;
    if (pre && preinline_contexts(r, mode, err))
        return -1;
    /* the thresholds of the profile as it is now (llvm-profgen computes
     * them before the pre-inliner; it changes no count, only contexts) */
    uint64_t hot, cold;
    if (thresholds(req, &r->ps, &hot, &cold, err))
        return -1;
    pk_cold_opts co = {.threshold = hot, .trim = req->trim_cold,
                       .merge = req->merge_cold ? req->merge_cold > 0 : !pre, .base_only = pre,
                       .keep_frames = req->cold_context_frames};
    uint64_t moved;
    if (pk_cs_trim_merge_cold(&r->ps, &co, &moved, err))
        return -1;
    if (!nest)
        return 0;
    if (pk_profset_init(&r->nested, err))
        return -1;
    r->nested_init = true;
    *result = &r->nested;
    return pk_cs_nest(&r->ps, &r->nested, err);
}

static bool units_can_inline(void *units, const char *root, const char *callee)
{
    return pk_dwarf_units_can_inline(units, root, callee);
}

/* The binary's compilation units, for the pre-inliner: NULL (inline
 * anything) when asked to, when it only replays the binary's inlining, or
 * when the binary has no DWARF to tell. */
static int units_for_preinline(run *r, const pk_preinline_opts *po, pk_dwarf_units **units, pk_err *err)
{
    *units = NULL;
    if (r->req->preinline_across_units || po->replay)
        return 0;
    pk_symbolizer *sym;
    pk_err ignored;
    if (pk_binary_symbolizer(r->bin, &sym, &ignored))
        return 0;
    return pk_dwarf_units_build(sym, units, err);
}

/* The pre-inliner over the flat context profile, in place. */
static int preinline_contexts(run *r, int mode, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    pk_ctx_sizes *sizes = NULL;
    pk_preinline_opts po;
    pk_preinline_defaults(&po);
    if (req->preinline)
        po = *req->preinline;
    po.trace = req->preinline_trace;
    po.trace_ctx = req->cb_ctx;
    /* the pre-inliner's context trie and summary on another thread while
     * the code sizes are built here */
    pk_preinline_job *pj = NULL;
    int g = 0;
    if (req->worker)
        g = pk_preinline_start(&pj, &r->ps, err);
    g = g || pk_ctx_sizes_build(&sizes, r->bin, &r->ps, mode == PK_MODE_CS, err);
    g = g || (r->probes_init && pk_ctx_sizes_add_probed(sizes, &r->probes, err));
    pk_dwarf_units *units = NULL;
    g = g || units_for_preinline(r, &po, &units, err);
    if (units) {
        po.can_inline = units_can_inline;
        po.can_inline_ctx = units;
        r->rep->units = pk_dwarf_units_count(units);
        r->rep->units_cross = pk_dwarf_units_cross(units);
    }
    pk_binary_drop_caches(r->bin); /* DWARF and instructions are not needed past here */
    if (r->probes_init) {
        pk_probe_info_free(&r->probes);
        r->probes_init = false;
    }
    if (pj && g)
        pk_preinline_cancel(pj);
    else if (pj)
        g = pk_preinline_finish(pj, sizes, &po, &r->rep->preinline, err);
    else
        g = g || pk_preinline(&r->ps, sizes, &po, &r->rep->preinline, err);
    pk_ctx_sizes_free(sizes);
    pk_dwarf_units_free(units);
    return g ? -1 : 0;
}

static int generate(run *r, int mode, const pk_profset **result, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    pk_pipeline_report *rep = r->rep;
    if (!r->ps_init && pk_profset_init(&r->ps, err))
        return -1;
    r->ps_init = true;
    *result = &r->ps;
    if (req->phase)
        req->phase(req->cb_ctx, "symbolizing");
    if (r->named) {
        pk_binary_drop_insns(r->bin);
    } else if (mode == PK_MODE_CS || mode == PK_MODE_LINE_CS) {
        if (prepare_contexts(r, mode, err))
            return -1;
        /* The unwinder's decoded functions: done with. (No malloc_trim here
         * or below: the heap grows again at once and reuses what was freed,
         * so trimming only turned into page faults and TLB shootdowns, 7 %
         * of the run at 10k samples, for no lower peak at 1M.) */
        pk_binary_drop_insns(r->bin);
    } else if (mode == PK_MODE_PROBE) {
        pk_elf *elf = pk_binary_elf(r->bin);
        if (pk_probe_sampled_guids(elf, NULL, &r->raw, &r->keep, err) ||
            pk_probe_info_load(&r->probes, elf, &r->keep, err))
            return -1;
        r->probes_init = true;
    }
    /* An unsymbolized profile text states its ranges (llvm-profgen counts
     * every instruction in them): they are not LBR pairs whose fall-through
     * could be checked. Mixed with recordings, whose ranges are checked,
     * they are checked too (one set of counts). (llvm-profgen's probe-only
     * reading decodes the probes of the functions a range starts in or a
     * branch touches only, so a range running on into another function
     * counts nothing there; pgokit counts what the range covers, as both
     * do for line-based profiles.) */
    pk_profgen_opts go = req->gen;
    go.ranges_as_given = req->ninputs > 0;
    for (size_t i = 0; i < req->ninputs; i++)
        go.ranges_as_given &= req->inputs[i].kind == PK_INPUT_LLVM_UNSYM;
    if (mode == PK_MODE_LINE) {
        rep->line_stats_valid = true;
        return pk_profgen_line(r->bin, &r->raw, &go, &r->ps, &rep->line, err) || trim_flat(req, &r->ps, err);
    }
    if (mode == PK_MODE_PROBE)
        return pk_profgen_probe_opts(r->bin, &r->probes, &r->raw, &go, &r->ps, &rep->probe, err) ||
               trim_flat(req, &r->ps, err);
    if (r->base_shape && mode == PK_MODE_CS) {
        pk_probe_gen_stats fst;
        if (pk_profset_init(&r->flat, err))
            return -1;
        r->flat_init = true;
        if (pk_profgen_probe_opts(r->bin, &r->probes, &r->raw, &go, &r->flat, &fst, err))
            return -1;
        pk_pairmap_free(&r->raw.ranges); /* (counted: what remains is the CS profile's) */
        pk_pairmap_free(&r->raw.branches);
    }
    rep->distinct_ranges = r->csr.ranges.len;
    int g = mode == PK_MODE_CS ? pk_profgen_probe_cs_opts(r->bin, &r->probes, &r->csr, &req->gen, &r->ps, &rep->probe, err)
          : r->named ? pk_profgen_line_cs_named(r->bin, &r->csr, &req->gen, &r->ps, &rep->line, err)
                     : pk_profgen_line_cs(r->bin, &r->csr, &req->gen, &r->ps, &rep->line, err);
    /* The counts are in the profile now: free the address-level data
     * before the pre-inliner's peak (the context count is kept for the
     * summary; ranges were counted before probe_cs freed them). */
    rep->contexts = pk_csraw_num_ctxs(&r->csr);
    rep->distinct_branches = r->csr.branches.len;
    pk_pairmap_free(&r->csr.ranges);
    pk_pairmap_free(&r->csr.branches);
    int pr = pk_cs_prep_finish(r->prep, g ? NULL : err); /* the DWARF index is ready */
    r->prep = NULL;
    if (g || pr || finish_contexts(r, mode, result, err))
        return -1;
    if (r->flat_init && *result == &r->nested)
        return pk_cs_base_shape(&r->nested, &r->flat, &rep->base_shape, err);
    return 0;
}

static void cleanup(run *r)
{
    if (r->prep) { /* an error while the thread ran: it finishes first */
        if (!pk_cs_prep_probes(r->prep, NULL))
            r->probes_init = true;
        pk_cs_prep_finish(r->prep, NULL);
    }
    pk_u64map_free(&r->keep);
    if (r->nested_init)
        pk_profset_free(&r->nested);
    if (r->flat_init)
        pk_profset_free(&r->flat);
    if (r->ps_init)
        pk_profset_free(&r->ps);
    if (r->probes_init)
        pk_probe_info_free(&r->probes);
    if (r->cs_init)
        pk_csraw_free(&r->csr);
    if (r->ip_init)
        pk_ipraw_free(&r->ip);
    if (r->raw_init)
        pk_rawprof_free(&r->raw);
    pk_binary_close(r->bin);
    free(r->segs);
}

/* LBR samples win when there are any (an IP sample carries far less); else
 * the IP samples become ranges and branches through flow inference. */
static int choose_ip(run *r, bool probe, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    pk_pipeline_report *rep = r->rep;
    rep->ip = r->ip.stats;
    bool lbr = r->raw.stats.samples_used || rep->unwind.samples_unwound;
    if (req->samples != PK_SAMPLES_IP && (lbr || !r->ip.stats.used))
        return 0;
    if (pk_ipraw_finish(&r->ip, err))
        return -1;
    if (req->bad_return) {
        pk_vec bad;
        pk_vec_init(&bad, sizeof(uint64_t));
        int rc = pk_unwind_addr_list(&r->ip.bad_returns, &bad, err);
        if (!rc)
            report_bad_returns(req, &bad);
        pk_vec_free(&bad);
        if (rc)
            return -1;
    }
    pk_ip_infer_opts io = {
        .threads = req->threads,
        .method = req->flow_method,
        .costs = req->flow_costs,
        .context_prior = req->ip_context_prior < 0    ? 0
                         : req->ip_context_prior == 0 ? PK_IP_CONTEXT_PRIOR
                                                      : (uint32_t)req->ip_context_prior,
    };
    /* nested CSSPGO: the same samples without their stacks too, whose
     * inference the base profiles take their shape from (base_shape.h) */
    if (r->cs_init && probe && !req->ip_base_from_contexts && !req->no_preinline && !req->no_nest) {
        if (pk_ip_flat_ranges(r->bin, &r->ip, &io, &r->raw, err))
            return -1;
        r->base_shape = true;
    }
    if (pk_ip_to_ranges(r->bin, &r->ip, &io, r->cs_init ? &r->csr : NULL, &r->raw, &rep->ip_infer, err))
        return -1;
    rep->from_ip = true;
    rep->ip = r->ip.stats;
    r->raw.stats.samples_used = r->ip.stats.used;
    pk_ipraw_free(&r->ip);
    r->ip_init = false;
    return 0;
}

/* --llvm-sample-profile: the profile read, then what follows generation. */
static int post_process_profile(run *r, const pk_profset **result, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    if (req->ninputs != 1)
        return pk_err_set(err, "a sample profile as input (%s) must be the only input", req->inputs[0].path);
    if (pk_profset_init(&r->ps, err))
        return -1;
    r->ps_init = true;
    *result = &r->ps;
    if (pk_prof_read_file(&r->ps, req->inputs[0].path, PK_FMT_AUTO, NULL, err))
        return -1;
    bool probe = r->ps.kind & PK_PROF_PROBE;
    r->rep->mode = r->ps.kind & PK_PROF_CS ? (probe ? PK_MODE_CS : PK_MODE_LINE_CS) : (probe ? PK_MODE_PROBE : PK_MODE_LINE);
    if (!(r->ps.kind & PK_PROF_CS))
        return trim_flat(req, &r->ps, err);
    if (probe && !req->no_preinline && !req->no_csspgo_preinliner) {
        /* the pre-inliner sizes inlinees by their probes */
        if (pk_probe_info_load(&r->probes, pk_binary_elf(r->bin), NULL, err))
            return -1;
        r->probes_init = true;
    }
    return finish_contexts(r, r->rep->mode, result, err);
}

/* What every profile goes through last, made or read: the symbol list, the
 * pre-inlined mark, the density, the writer. */
static int write_result(run *r, pk_profset *ps, pk_err *err)
{
    const pk_pipeline_request *req = r->req;
    if (req->symbol_list && add_symbol_list(r->bin, ps, err))
        return -1;
    if (req->mark_preinlined)
        pk_profset_mark_preinlined(ps, req->mark_preinlined == PK_PREINLINED_ALL);
    if ((r->rep->density = pk_profset_density(ps, req->density_cutoff ? req->density_cutoff : 990000, err)) < 0)
        return -1;
    return pk_prof_write_file(ps, &req->write, req->output, err);
}

int pk_pipeline_run(const pk_pipeline_request *req, pk_pipeline_report *rep, pk_err *err)
{
    memset(rep, 0, sizeof *rep);
    run r = {.req = req, .rep = rep};
    int rc = -1;
    /* before any work: the output must be able to say it */
    if (req->mark_preinlined && req->raw_only)
        return pk_err_set(err, "a raw profile holds samples, not a sample profile: it cannot be marked pre-inlined");
    if (pk_prof_format_check_preinlined(req->write.format, req->mark_preinlined, err))
        return -1;
    if (open_target(&r, err))
        goto out;
    if (req->ninputs && req->inputs[0].kind == PK_INPUT_PROFILE) {
        const pk_profset *done = NULL;
        if (post_process_profile(&r, &done, err))
            goto out;
        rep->counted = true;
        pk_profset_remove_ambiguous((pk_profset *)done);
        rep->profiles = pk_profset_count(done);
        rc = write_result(&r, (pk_profset *)done, err);
        goto out;
    }
    bool probe = !req->dwarf_correlation && pk_elf_has_pseudo_probes(pk_binary_elf(r.bin));
    /* llvm-profgen's unsymbolized text of samples with stacks would hold
     * contexts: they are read (and refused below) rather than flattened; a
     * raw profile of version 2 keeps them, one of version 1 cannot */
    bool raw_v2 = req->raw_only && !req->raw_llvm_text && req->raw_version >= 2;
    bool try_cs = (probe || req->line_cs) && !req->ignore_stacks &&
                  (!req->raw_only || req->raw_llvm_text || raw_v2);
    for (size_t i = 0; i < req->ninputs; i++)
        if (req->inputs[i].kind == PK_INPUT_LLVM_UNSYM)
            try_cs = false;
    if (try_cs) {
        if (pk_csraw_init(&r.csr, r.target.preferred_base, err))
            goto out;
        r.cs_init = true;
    }
    rep->calls_only = probe;
    /* IP samples: contexts as deep as the stacks when contexts are wanted,
     * else the leaf function only (its call observations still give call
     * targets) */
    pk_unwind_code code;
    pk_unwind_code_from_binary(&code, r.bin);
    if (req->samples != PK_SAMPLES_LBR) {
        if (pk_ipraw_init(&r.ip, &code, r.target.preferred_base, try_cs ? -1 : 0, err))
            goto out;
        r.ip_init = true;
        r.ip.allow_minus_one = req->nonleaf_minus_one;
        r.ip.elf = pk_binary_elf(r.bin);
    }
    if (read_inputs(&r, probe, err))
        goto out;
    if (raw_v2) {
        rep->mode = PK_MODE_RAW;
        rep->agg = r.raw.stats;
        rep->ip = r.ip_init ? r.ip.stats : rep->ip;
        rep->distinct_branches = r.raw.branches.len + (r.cs_init ? r.csr.branches.len : 0);
        rep->distinct_ranges = r.raw.ranges.len + (r.cs_init ? r.csr.ranges.len : 0);
        rep->have_contexts = r.cs_init && pk_csraw_num_ctxs(&r.csr);
        /* the counters as they are now, before anything is inferred */
        rc = pk_rawprof2_write_parts(&r.raw, r.cs_init ? &r.csr : NULL, rep->calls_only ? PK_RAW_CALLS_ONLY : 0,
                                     &rep->unwind, r.ip_init ? &r.ip : NULL, req->output, err);
        goto out;
    }
    if (r.ip_init && choose_ip(&r, probe, err))
        goto out;
    rep->agg = r.raw.stats;
    rep->distinct_branches = r.raw.branches.len;
    rep->distinct_ranges = r.raw.ranges.len;
    if (req->raw_only) {
        rep->mode = PK_MODE_RAW;
        if (!req->raw_llvm_text) {
            rc = pk_rawprof_write(&r.raw, req->output, err);
        } else if (r.cs_init && (r.csr.ranges.len || r.csr.branches.len)) {
            uint64_t base = llvm_base(&r, req);
            rc = probe     ? pk_llvm_unsym_write_cs(&r.csr, r.bin, base, req->output, err)
                 : r.named ? pk_llvm_unsym_write_named(&r.csr, &r.ps, r.bin, base, req->output, err)
                           : pk_llvm_unsym_write_line_cs(&r.csr, r.bin, base, &req->gen, req->output, err);
        } else {
            rc = pk_llvm_unsym_write_flat(&r.raw, r.bin, llvm_base(&r, req), req->output, err);
        }
        goto out;
    }
    if (!r.raw.ranges.len && !r.raw.branches.len && !(r.cs_init && (r.csr.ranges.len || r.csr.branches.len)) &&
        !req->gen.fill_zero_all) {
        pk_err_set(err, "no samples of %s in the input", req->binary);
        goto out;
    }
    bool have_ctx = r.cs_init && (rep->unwind.samples_unwound || rep->from_ip || r.named) && pk_csraw_num_ctxs(&r.csr);
    rep->have_contexts = have_ctx;
    if (r.cs_init && rep->raw_v1_inputs && req->warning) {
        char msg[300];
        snprintf(msg, sizeof msg, "%zu raw profile%s of version 1 hold%s no calling contexts: %s", rep->raw_v1_inputs,
                 rep->raw_v1_inputs > 1 ? "s" : "", rep->raw_v1_inputs > 1 ? "" : "s",
                 have_ctx ? "their counts are not in the context-sensitive profile (write them again with "
                            "profgen --raw-only from the recordings)"
                          : "the profile is made without contexts");
        req->warning(req->cb_ctx, msg);
    }
    rep->mode = probe ? (have_ctx ? PK_MODE_CS : PK_MODE_PROBE) : (have_ctx ? PK_MODE_LINE_CS : PK_MODE_LINE);
    const pk_profset *result = NULL;
    int g = generate(&r, rep->mode, &result, err);
    if (req->phase)
        req->phase(req->cb_ctx, NULL);
    if (g)
        goto out;
    rep->counted = true;
    /* as llvm-profgen, after nesting: inlinees too */
    pk_profset_remove_ambiguous((pk_profset *)result);
    rep->profiles = pk_profset_count(result);
    if (!rep->profiles) {
        char h[41];
        hex(h, r.target.build_id, r.target.build_id_size);
        pk_err_set(err, "no function of %s (build-id %s) received samples; nothing written", req->binary,
                   r.target.build_id_size ? h : "none");
        goto out;
    }
    rc = write_result(&r, (pk_profset *)result, err);
out:
    cleanup(&r);
    return rc;
}

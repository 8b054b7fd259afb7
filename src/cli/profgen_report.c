/* profgen_report.c — `pgokit profgen`'s summary lines (see profgen_report.h). */
#include "cli/profgen_report.h"
#include "cli/cli.h"
#include "infer/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ", N what" when N is not 0: the optional parts of a summary line. */
static void count_part(const char *fmt, uint64_t n)
{
    if (n)
        fprintf(stderr, fmt, (unsigned long long)n);
}

/* A line profile of a binary without discriminators (see
 * pk_profgen_discriminator_warning). */
static void print_discriminator_warning(const pk_pipeline_report *rep)
{
    char w[512];
    if (rep->line_stats_valid && rep->mode == PK_MODE_LINE && pk_profgen_discriminator_warning(&rep->line, w, sizeof w))
        fprintf(stderr, "profgen: warning: %s\n", w);
}

/* The samples of an IP profile: what was counted, what flow inference did. */
static void print_ip_summary(const pk_pipeline_report *rep)
{
    const pk_ip_stats *s = &rep->ip;
    const pk_ip_infer_stats *f = &rep->ip_infer;
    fprintf(stderr, "profgen: from IP samples (no branch stacks): %llu read, %llu used", (unsigned long long)s->samples,
            (unsigned long long)s->used);
    count_part(", %llu other pid", rep->agg.samples_other_pid);
    count_part(", %llu in other code", s->leaf_outside);
    count_part(", %llu outside every function", s->leaf_no_func);
    count_part(", %llu without user frames", s->no_user_frames);
    fprintf(stderr, "; %llu distinct stacks; stacks cut: %llu at other code, %llu at a non-call return address, "
            "%llu with the direct caller unknown (a leaf without frame pointer, a prologue, a ret: shared out over "
            "the function's contexts)",
            (unsigned long long)s->distinct_stacks, (unsigned long long)s->stack_cut_external,
            (unsigned long long)s->stack_cut_not_call, (unsigned long long)s->stack_cut_frame);
    count_part(", %llu with a skipped caller put back", s->frames_repaired);
    count_part("; %llu chains unwound from stack copies with the binary's CFI", s->stacks_unwound);
    count_part(" (%llu of them stopped inside the binary: no FDE, a stack deeper than the copy",
               s->stacks_unwound_short);
    count_part("; %llu at code without an FDE", s->stacks_unwound_no_fde);
    count_part("; %llu before the leaf's caller", s->stacks_unwound_leaf);
    if (s->stacks_unwound_short)
        fputc(')', stderr);
    count_part(", %llu frames were return address - 1", s->frames_minus_one);
    count_part("; %llu from an event that fires on time", s->time_weighted);
    fprintf(stderr, "\nprofgen: flow inference: %llu contexts over %llu functions (%llu blocks), %llu call-site "
            "blocks raised to their callees' entries; jump tables %llu resolved, %llu not",
            (unsigned long long)f->contexts, (unsigned long long)f->functions, (unsigned long long)f->blocks,
            (unsigned long long)f->sites_raised, (unsigned long long)f->ijumps_resolved,
            (unsigned long long)(f->ijumps_unresolved - f->ijumps_untabled));
    count_part(" (and %llu indirect jumps through pointers: calls in tail position)", f->ijumps_untabled);
    fprintf(stderr, "; %llu ranges and %llu branches synthesized", (unsigned long long)f->ranges,
            (unsigned long long)f->branches);
    if (f->icall_sites)
        fprintf(stderr, "; %llu of %llu calls through pointers that ran without a callee in any chain%s",
                (unsigned long long)f->icall_sites_untargeted, (unsigned long long)f->icall_sites,
                f->contexts > f->functions ? " (call sites counted once per calling context)" : "");
    if (f->cfg_failed || f->hits_dropped)
        fprintf(stderr, "; %llu functions without a CFG, %llu samples dropped", (unsigned long long)f->cfg_failed,
                (unsigned long long)f->hits_dropped);
    if (f->hot_instructions)
        fprintf(stderr, "; %.2f samples per hot instruction (%llu instructions ran %.0f %% of the work)",
                pk_ip_density(f), (unsigned long long)f->hot_instructions, 100 * PK_IP_HOT_SHARE);
    fprintf(stderr, "\n");
    const pk_base_shape_stats *b = &rep->base_shape;
    if (b->profiles)
        fprintf(stderr, "profgen: base profiles: %llu of %llu take their function's shape inferred from all its "
                "samples at once (--ip-base-shape contexts: the sum of their contexts' inferences)\n",
                (unsigned long long)b->profiles, (unsigned long long)(b->profiles + b->no_flat));
    char fp[768];
    /* the frame-pointer warning names the cause of lost callers and its
     * remedies: the indirect-call warning is for chains lost otherwise */
    int no_fp = pk_ip_frame_pointer_warning(s, fp, sizeof fp);
    if (no_fp)
        fprintf(stderr, "profgen: warning: %s\n", fp);
    if (pk_ip_cfi_warning(s, fp, sizeof fp))
        fprintf(stderr, "profgen: warning: %s\n", fp);
    if (pk_ip_density_warning(f, fp, sizeof fp))
        fprintf(stderr, "profgen: warning: %s\n", fp);
    if (!no_fp && pk_ip_icall_warning(f, fp, sizeof fp))
        fprintf(stderr, "profgen: warning: %s\n", fp);
    if (pk_ip_time_weight_note(s, fp, sizeof fp))
        fprintf(stderr, "profgen: note: %s\n", fp);
    print_discriminator_warning(rep);
}

void pk_profgen_print_summary(const pk_pipeline_report *rep)
{
    if (rep->from_ip) {
        print_ip_summary(rep);
        return;
    }
    const pk_agg_stats *s = &rep->agg;
    const pk_profgen_stats *g = rep->line_stats_valid && rep->mode == PK_MODE_LINE ? &rep->line : NULL;
    fprintf(stderr, "profgen: samples: %llu read, %llu used", (unsigned long long)s->samples,
            (unsigned long long)s->samples_used);
    count_part(", %llu other pid", s->samples_other_pid);
    count_part(", %llu without branch stack", s->samples_no_lbr);
    count_part(", %llu entirely outside the binary", s->samples_outside);
    if (!rep->contexts && rep->unwind.samples_prolog_epilog)
        fprintf(stderr, ", %llu left out with the leaf in a prologue or epilogue",
                (unsigned long long)rep->unwind.samples_prolog_epilog);
    if (s->samples_no_mapping)
        fprintf(stderr, ", %llu of unknown processes (global mapping used)",
                (unsigned long long)s->samples_no_mapping);
    const char *per = rep->have_contexts ? " in context" : "";
    const char *kept = *per && rep->calls_only ? " calls and jumps to entries" : "";
    fprintf(stderr, "\nprofgen: LBR: %llu entries, %llu branches counted (%zu distinct%s%s), %llu to other code; "
            "%llu ranges counted (%zu distinct%s)\n",
            (unsigned long long)s->lbr_entries, (unsigned long long)s->branches, rep->distinct_branches, kept,
            per, (unsigned long long)s->branches_external, (unsigned long long)s->ranges, rep->distinct_ranges,
            per);
    uint64_t drops[PK_RANGE_DROP_N];
    uint64_t any = 0;
    for (int i = 0; i < PK_RANGE_DROP_N; i++) {
        drops[i] = s->range_drop[i] + (g ? g->range_drop[i] : 0);
        any += drops[i];
    }
    if (any) {
        fprintf(stderr, "profgen: ranges dropped:");
        const char *sep = " ";
        for (int i = 0; i < PK_RANGE_DROP_N; i++)
            if (drops[i]) {
                fprintf(stderr, "%s%llu %s", sep, (unsigned long long)drops[i], pk_range_drop_names[i]);
                sep = ", ";
            }
        fprintf(stderr, "\n");
    }
    if (s->mmaps_build_id_mismatch)
        fprintf(stderr, "profgen: warning: %llu mappings had the binary's name but another build-id "
                "(ignored)\n", (unsigned long long)s->mmaps_build_id_mismatch);
    if (g)
        fprintf(stderr, "profgen: %llu functions sampled (%llu instructions decoded, %llu symbolized); "
                "calls %llu, tail calls %llu, entries from other code %llu\n",
                (unsigned long long)g->functions_sampled, (unsigned long long)g->insns_decoded,
                (unsigned long long)g->insns_symbolized, (unsigned long long)g->calls,
                (unsigned long long)g->tail_calls, (unsigned long long)g->external_entries);
    print_discriminator_warning(rep);
}

void pk_profgen_print_unwind(const pk_pipeline_report *rep)
{
    const pk_unwind_stats *u = &rep->unwind;
    if (!rep->from_ip) { /* (IP contexts come from the stacks themselves) */
        fprintf(stderr, "profgen: unwinder: %llu of %llu samples unwound in %llu walks (%llu on the reading thread, "
                "%llu without stack, %llu dropped in a prologue or epilogue), %zu contexts; "
                "stacks cut: %llu at other code, %llu at a non-call return address; %llu call mismatches, "
                "%llu LBR entries from outside code walked through; %llu ranges dropped; "
                "%llu LBR entries at or before a range that cannot have run (counted without context)\n",
                (unsigned long long)u->samples_unwound, (unsigned long long)u->samples,
                (unsigned long long)u->walks, (unsigned long long)u->walks_here, (unsigned long long)u->samples_no_stack,
                (unsigned long long)u->samples_prolog_epilog, rep->contexts,
                (unsigned long long)u->stack_truncated_external, (unsigned long long)u->stack_truncated_not_call,
                (unsigned long long)u->call_mismatch, (unsigned long long)u->outside_entries,
                (unsigned long long)u->ranges_dropped, (unsigned long long)u->entries_after_break);
    }
    const pk_tailcall_stats *tc = &rep->tailcall;
    char indirect[64] = "";
    if (tc->through_indirect)
        snprintf(indirect, sizeof indirect, ", %llu through an indirect jump",
                 (unsigned long long)tc->through_indirect);
    if (rep->tailcall_valid)
        fprintf(stderr, "profgen: tail calls: %llu frames re-inserted (%llu contexts recovered%s, %llu ambiguous, "
                "%llu unreachable)\n", (unsigned long long)tc->frames_added,
                (unsigned long long)tc->recovered, indirect, (unsigned long long)tc->ambiguous,
                (unsigned long long)tc->unreachable);
}

/* A GCC .afdo file stores no totals: GCC (and every reader) adds up the
 * line counts, which the writer folded over discriminators (max). The
 * totals the generator computed are not in the file, so the summary reads
 * the file back and reports what `pgokit show` and GCC see. */
static bool gcc_file_totals(const char *path, size_t *nfuncs, uint64_t *total)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a pipe or a device: gone */
        return false;
    pk_err err;
    pk_profset ps;
    if (pk_profset_init(&ps, &err))
        return false;
    bool ok = pk_prof_read_file(&ps, path, PK_FMT_GCC, NULL, &err) == 0;
    *nfuncs = 0;
    *total = 0;
    for (size_t i = 0; ok && i < ps.top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps.top, pk_fprof *, i);
        if (f->removed)
            continue;
        (*nfuncs)++;
        *total = pk_sat_add(*total, f->total);
    }
    pk_profset_free(&ps);
    return ok;
}

void pk_profgen_print_written(const pk_pipeline_request *rq, const pk_pipeline_report *rep)
{
    const char *fmt = pk_prof_format_name(rq->write.format);
    const char *shape = rq->no_preinline ? ", flat" : ", pre-inlined, nested";
    const char *marked = rq->mark_preinlined == PK_PREINLINED_ALL ? ", marked pre-inlined, every context"
                         : rq->mark_preinlined ? ", marked pre-inlined" : "";
    size_t gcc_funcs;
    uint64_t gcc_total;
    switch (rep->mode) {
    case PK_MODE_LINE:
        if (rq->write.format == PK_FMT_GCC && gcc_file_totals(rq->output, &gcc_funcs, &gcc_total)) {
            fprintf(stderr, "profgen: wrote %s (gcc, line-based AutoFDO): %zu functions, total samples %llu "
                    "(the sum of the line counts, discriminators folded, as GCC reads it)\n", rq->output,
                    gcc_funcs, (unsigned long long)gcc_total);
            break;
        }
        fprintf(stderr, "profgen: wrote %s (%s, line-based AutoFDO%s): %zu functions, total samples %llu, "
                "body samples %llu\n", rq->output, fmt, marked, rep->profiles,
                (unsigned long long)rep->line.total_samples, (unsigned long long)rep->line.body_samples);
        break;
    case PK_MODE_PROBE:
        fprintf(stderr, "profgen: wrote %s (%s, probe-based%s): %zu functions, %llu probes hit\n", rq->output, fmt,
                marked, rep->profiles, (unsigned long long)rep->probe.probes_hit);
        break;
    case PK_MODE_LINE_CS:
        fprintf(stderr, "profgen: wrote %s (%s, context-sensitive line-based%s): %zu top-level profiles, "
                "%llu context profiles before pre-inlining\n", rq->output, fmt, shape, rep->profiles,
                (unsigned long long)rep->line.profiles);
        break;
    default:
        fprintf(stderr, "profgen: wrote %s (%s, CSSPGO%s): %zu top-level profiles from %llu contexts "
                "(%llu truncated at a call without probe)\n", rq->output, fmt, shape, rep->profiles,
                (unsigned long long)rep->probe.contexts, (unsigned long long)rep->probe.contexts_truncated);
    }
    if ((rep->mode == PK_MODE_CS || rep->mode == PK_MODE_PROBE) && rep->probe.ranges_cross_uncond)
        fprintf(stderr, "profgen: %llu range samples dropped: a jump, call or return inside (not a fall-through; "
                "duplicated LBR entries)\n", (unsigned long long)rep->probe.ranges_cross_uncond);
    if ((rep->mode == PK_MODE_CS || rep->mode == PK_MODE_LINE_CS) && !rq->no_preinline) {
        fprintf(stderr, "profgen: pre-inliner: %llu inlined, %llu not inlined, %llu contexts merged into "
                "base profiles", (unsigned long long)rep->preinline.inlined,
                (unsigned long long)rep->preinline.not_inlined, (unsigned long long)rep->preinline.merged_into_base);
        if (rep->units && rep->units_cross)
            fprintf(stderr, "; %zu compilation units, inlined across each other (LTO): any callee may be "
                    "inlined", rep->units);
        else if (rep->units)
            fprintf(stderr, "; %zu compilation units: %llu callees not inlined, their bodies are in another unit "
                    "(no LTO; --preinline-across-units to inline them all the same)", rep->units,
                    (unsigned long long)rep->preinline.other_unit);
        fputc('\n', stderr);
    }
}


/* cmd_profgen.c — `pgokit profgen`: perf.data / perf-script / raw profiles →
 * an AutoFDO (line-based) sample profile, or a raw profile (--raw-only). */
#include "cli/cli.h"
#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "format/format.h"
#include "binary/probe_loader.h"
#include "profgen/preinline.h"
#include "profgen/probe_gen.h"
#include "profgen/cs_prep.h"
#include "profgen/profgen.h"
#include "unwind/unwind.h"

#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

const char pk_cmd_profgen_summary[] = "perf.data / perf script / raw profile -> AutoFDO or CSSPGO sample profile";

static const char usage_text[] =
    "usage: pgokit profgen --binary BIN (--perf perf.data | --perfscript FILE | --raw FILE)... -o OUT\n"
    "                      [--format extbinary|text|binary|gcc] [--debug-binary F] [--pid N]\n"
    "                      [--raw-only] [--total per-byte|sum] [--no-dup-factor]\n"
    "                      [--ignore-stack-samples] [--no-preinline] [--use-dwarf-correlation]\n"
    "                      [--cs] [--threads N] [-q]\n"
    "\n"
    "Which profile: a binary built with -fpseudo-probe-for-profiling and samples with call\n"
    "stacks give a CSSPGO profile (contexts, pre-inlined, nested); probes without stacks\n"
    "(or --ignore-stack-samples) a probe-based profile; otherwise a line-based AutoFDO profile,\n"
    "or with --cs a line-based context-sensitive one.\n"
    "\n"
    "  --binary BIN        the profiled executable or shared library (matched by build-id,\n"
    "                      else by path or file name, in the recording's mmap events)\n"
    "  --perf FILE         a perf.data file (LBR branch stacks), repeatable\n"
    "  --perfscript FILE   `perf script -F ip,brstack [--show-mmap-events]` text, repeatable\n"
    "  --raw FILE          a raw profile written by --raw-only, repeatable (counts add up)\n"
    "  -o, --output OUT    output file\n"
    "  --format F          extbinary (default, like llvm-profgen), text, binary, or gcc\n"
    "                      (GCC 12+ -fauto-profile; line-based profiles only)\n"
    "  --raw-only          write the merged raw (unsymbolized, context-free) profile instead\n"
    "  --debug-binary F    read DWARF from F (e.g. objcopy --only-keep-debug output)\n"
    "  --pid N             only samples of process N\n"
    "  --total MODE        line-based function totals: per-byte (llvm-profgen/AutoFDO) or sum\n"
    "                      of body samples\n"
    "  --no-dup-factor     do not scale counts by the discriminator duplication factor\n"
    "  --ignore-stack-samples  no calling contexts even when samples have call stacks\n"
    "  --no-preinline      CSSPGO: keep the flat context profile (cold contexts merged),\n"
    "                      no pre-inliner, no nesting\n"
    "  --no-infer-missing-frames  CSSPGO: do not re-insert frames lost to tail calls\n"
    "  --use-dwarf-correlation    line-based profile even for a pseudo-probe binary\n"
    "  --cs                a binary without probes: context-sensitive line-based profile\n"
    "                      (DWARF inline contexts, pre-inlined and nested unless --no-preinline)\n"
    "  --threads N         2 (default with two or more CPUs): context-sensitive samples are\n"
    "                      walked on a second thread while reading goes on (same profile;\n"
    "                      1.27x faster on 1M samples); 1: one thread (better on a machine\n"
    "                      whose CPUs are all busy)\n"
    "  -q, --quiet         no progress, no summary\n";

typedef struct input {
    int kind;  /* 'p' perf, 's' script, 'r' raw */
    const char *path;
} input;

typedef struct progress {
    pk_perf_callbacks inner;
    pk_agg *agg;
    pk_unwinder *unw;            /* CSSPGO: every sample also goes to the unwinder */
    int64_t pid;
    pk_err *err;
    bool on;
    const char *name;
    uint64_t size, n;
    time_t last;
} progress;

static int prog_sample(void *c, const pk_sample *s)
{
    progress *p = c;
    if (p->on && (++p->n & 0xffff) == 0) {
        time_t now = time(NULL);
        if (now != p->last) {
            p->last = now;
            if (p->size && s->file_offset <= p->size)
                fprintf(stderr, "\rprofgen: %s: %llu samples (%.0f%%)  ", p->name,
                        (unsigned long long)p->n, 100.0 * (double)s->file_offset / (double)p->size);
            else
                fprintf(stderr, "\rprofgen: %s: %llu samples  ", p->name, (unsigned long long)p->n);
        }
    }
    /* A sample with a stack goes to the unwinder, which counts it in the
     * aggregator's statistics; its range and branch counts are the
     * unwinder's, per context (those of a stack without user frames go to
     * the flat profile). */
    if (p->unw && s->callchain_nr && (p->pid < 0 || s->pid == (uint32_t)p->pid))
        return pk_unwind_perf_sample(p->unw, p->agg, s, p->err);
    return p->inner.sample(p->inner.ctx, s);
}
static int prog_mmap(void *c, const pk_mmap_event *m) { progress *p = c; return p->inner.mmap(p->inner.ctx, m); }
static int prog_comm(void *c, const pk_comm_event *e) { progress *p = c; return p->inner.comm(p->inner.ctx, e); }
static int prog_task(void *c, const pk_task_event *t) { progress *p = c; return p->inner.task(p->inner.ctx, t); }
static int prog_bid(void *c, const pk_build_id_event *b) { progress *p = c; return p->inner.build_id(p->inner.ctx, b); }

static void hex(char *out, const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = 0;
}

/* Aggregates one perf.data / perf-script file into `into`. */
static int aggregate_one(const input *in, const pk_agg_target *t, int64_t pid, bool show_progress, bool worker,
                         bool calls_only, pk_rawprof *into, pk_binary *bin, pk_csraw *cs, pk_unwind_stats *ust,
                         pk_err *err)
{
    pk_agg_opts ao = {.pid = pid, .assume_unrelocated_without_mmap = in->kind == 's'};
    pk_agg *a = pk_agg_new(t, &ao, err);
    if (!a)
        return -1;
    progress p = {.on = show_progress, .name = in->path, .agg = a, .pid = pid, .err = err};
    if (cs) {
        pk_unwind_code code;
        pk_unwind_code_from_binary(&code, bin);
        pk_unwind_opts uo = {.max_depth = -1, .compress_recursion = -1, .worker = worker,
                             .calls_and_entries_only = calls_only};
        /* tests: walk every Nth sample on the reading thread */
        const char *every = getenv("PGOKIT_WALK_HERE_EVERY");
        if (every)
            uo.walk_here_every = (uint32_t)strtoul(every, NULL, 10);
        if (!(p.unw = pk_unwinder_new(&code, &uo, cs, err))) {
            pk_agg_free(a);
            return -1;
        }
    }
    struct stat st;
    if (!stat(in->path, &st))
        p.size = (uint64_t)st.st_size;
    pk_agg_callbacks(a, err, &p.inner);
    pk_perf_callbacks cb = {.ctx = &p, .sample = prog_sample, .mmap = prog_mmap, .comm = prog_comm,
                            .task = prog_task, .build_id = prog_bid};
    int rc;
    if (in->kind == 'p') {
        pk_perf_stats ps;
        rc = pk_perf_read(in->path, &cb, &ps, err);
    } else {
        pk_script_stats ss;
        char w[1024];
        rc = pk_perf_script_read(in->path, &cb, &ss, err);
        if (!rc && pk_script_stats_warning(&ss, w, sizeof w))
            fprintf(stderr, "profgen: warning: %s: %s\n", in->path, w);
    }
    if (!rc && p.unw)
        rc = pk_unwinder_finish(p.unw, err);
    if (show_progress)
        fprintf(stderr, "\r\033[K");
    if (!rc) {
        pk_rawprof *r = pk_agg_profile(a);
        if (!r->stats.samples_used) {
            const pk_agg_stats *s = &r->stats;
            if (!s->samples)
                pk_err_set(err, "%s: no samples", in->path);
            else if (s->samples_no_lbr == s->samples)
                pk_err_set(err, "%s: %llu samples but none has a branch stack (record with LBR: "
                           "`pgokit record`, or `perf record -b`)", in->path,
                           (unsigned long long)s->samples);
            else if (s->samples_other_pid == s->samples)
                pk_err_set(err, "%s: all %llu samples belong to processes other than --pid %lld",
                           in->path, (unsigned long long)s->samples, (long long)pid);
            else if (s->mmaps_build_id_mismatch && !s->mmaps_target) {
                char h[41];
                hex(h, t->build_id, t->build_id_size);
                pk_err_set(err, "%s: the recorded program mapped a file named like %s but with another "
                           "build-id than this one (%s): the binary was rebuilt after recording?",
                           in->path, t->path, h);
            }
            else if (!s->mmaps_target && in->kind == 'p')
                pk_err_set(err, "%s: no mapping of %s in the recording (%llu mmap events)", in->path,
                           t->path, (unsigned long long)s->mmaps);
            else
                pk_err_set(err, "%s: none of %llu samples has branches in %s", in->path,
                           (unsigned long long)s->samples, t->path);
            rc = 1;  /* nothing usable in this input: not an error if another input has samples */
        } else {
            rc = pk_rawprof_merge(into, r, err);
        }
    }
    if (p.unw) {
        pk_unwind_stats_add(ust, pk_unwinder_stats(p.unw));
        pk_unwinder_free(p.unw);
    }
    pk_agg_free(a);
    return rc;
}

/* Distinct branches and ranges in context (when contexts were built), and
 * whether only calls and jumps to entries were kept (probe contexts). */
typedef struct ctx_counts {
    size_t branches, ranges;
    bool calls_only;
} ctx_counts;

static void print_summary(const pk_rawprof *r, const pk_profgen_stats *g, const ctx_counts *cc)
{
    const pk_agg_stats *s = &r->stats;
    fprintf(stderr, "profgen: samples: %llu read, %llu used", (unsigned long long)s->samples,
            (unsigned long long)s->samples_used);
    if (s->samples_other_pid)
        fprintf(stderr, ", %llu other pid", (unsigned long long)s->samples_other_pid);
    if (s->samples_no_lbr)
        fprintf(stderr, ", %llu without branch stack", (unsigned long long)s->samples_no_lbr);
    if (s->samples_outside)
        fprintf(stderr, ", %llu entirely outside the binary", (unsigned long long)s->samples_outside);
    if (s->samples_no_mapping)
        fprintf(stderr, ", %llu of unknown processes (global mapping used)",
                (unsigned long long)s->samples_no_mapping);
    const char *per = cc && (cc->branches || cc->ranges) ? " in context" : "";
    const char *kept = *per && cc->calls_only ? " calls and jumps to entries" : "";
    fprintf(stderr, "\nprofgen: LBR: %llu entries, %llu branches counted (%zu distinct%s%s), %llu to other code; "
            "%llu ranges counted (%zu distinct%s)\n",
            (unsigned long long)s->lbr_entries, (unsigned long long)s->branches,
            *per ? cc->branches : r->branches.len, kept, per, (unsigned long long)s->branches_external,
            (unsigned long long)s->ranges, *per ? cc->ranges : r->ranges.len, per);
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
}

static void print_unwind(const pk_unwind_stats *u, size_t contexts, const pk_tailcall_stats *tc)
{
    fprintf(stderr, "profgen: unwinder: %llu of %llu samples unwound in %llu walks (%llu on the reading thread, "
            "%llu without stack), %zu contexts; "
            "stacks cut: %llu at other code, %llu at a non-call return address; %llu call mismatches, "
            "%llu LBR entries from outside code walked through; %llu ranges dropped\n",
            (unsigned long long)u->samples_unwound, (unsigned long long)u->samples,
            (unsigned long long)u->walks, (unsigned long long)u->walks_here, (unsigned long long)u->samples_no_stack,
            contexts,
            (unsigned long long)u->stack_truncated_external, (unsigned long long)u->stack_truncated_not_call,
            (unsigned long long)u->call_mismatch, (unsigned long long)u->outside_entries,
            (unsigned long long)u->ranges_dropped);
    if (tc)
        fprintf(stderr, "profgen: tail calls: %llu frames re-inserted (%llu contexts recovered, %llu ambiguous, "
                "%llu unreachable)\n", (unsigned long long)tc->frames_added,
                (unsigned long long)tc->recovered, (unsigned long long)tc->ambiguous,
                (unsigned long long)tc->unreachable);
}

enum gen_mode { GEN_LINE, GEN_PROBE, GEN_CS, GEN_LINE_CS };

int pk_cmd_profgen(int argc, char **argv)
{
    const char *cmd = "profgen", *binary = NULL, *out = NULL, *debug = NULL, *fmt_name = "extbinary";
    int64_t pid = -1;
    bool raw_only = false, quiet = false, ignore_stacks = false, no_preinline = false, line_cs = false;
    bool dwarf_corr = false, no_infer = false;
    /* Peak memory is a target: a fixed mmap threshold keeps glibc from
     * raising it after the first large free, so big tables (maps, probe and
     * slot arrays) go back to the system when freed instead of fragmenting
     * the heap. */
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    /* One arena for every thread: per-thread arenas grew a page run at a
     * time (a hundred mprotect calls at 10k samples) and held 1-2 MiB of
     * peak memory apart; the threads allocate little, so the shared lock
     * costs nothing measurable. The top pad makes the main heap grow in
     * 1 MiB steps (fewer brk calls and re-faulted pages). */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TOP_PAD, 1 << 20);
    bool worker = sysconf(_SC_NPROCESSORS_ONLN) > 1;
    pk_profgen_opts go = {0};
    input *ins = calloc((size_t)argc + 1, sizeof *ins);
    size_t nin = 0;
    int rc = 1;
    if (!ins)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        const char *eq = NULL;
        if (!strncmp(a, "--", 2) && (eq = strchr(a, '=')))
            val = eq + 1;
#define OPT(name) ((eq ? (size_t)(eq - a) == strlen(name) && !strncmp(a, name, strlen(name)) \
                       : !strcmp(a, name)) && (val || (i + 1 < argc && (val = argv[++i]))))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            free(ins);
            return 0;
        } else if (!strcmp(a, "--raw-only")) {
            raw_only = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--no-dup-factor")) {
            go.no_dup_factor = true;
        } else if (!strcmp(a, "--ignore-stack-samples")) {
            ignore_stacks = true;
        } else if (!strcmp(a, "--no-preinline")) {
            no_preinline = true;
        } else if (!strcmp(a, "--cs")) {
            line_cs = true;
        } else if (!strcmp(a, "--no-infer-missing-frames")) {
            no_infer = true;
        } else if (!strcmp(a, "--use-dwarf-correlation")) {
            dwarf_corr = true;
        } else if (OPT("--binary")) {
            binary = val;
        } else if (OPT("--debug-binary")) {
            debug = val;
        } else if (OPT("-o") || OPT("--output")) {
            out = val;
        } else if (OPT("--format")) {
            fmt_name = val;
        } else if (OPT("--perf") || OPT("--perfdata")) {
            ins[nin++] = (input){'p', val};
        } else if (OPT("--perfscript")) {
            ins[nin++] = (input){'s', val};
        } else if (OPT("--raw")) {
            ins[nin++] = (input){'r', val};
        } else if (OPT("--threads")) {
            if (strcmp(val, "1") && strcmp(val, "2")) {
                free(ins);
                return pk_cli_usage(cmd, "--threads must be 1 or 2, not '%s'", val);
            }
            worker = val[0] == '2';
        } else if (OPT("--pid")) {
            char *end;
            long long v = strtoll(val, &end, 10);
            if (*end || v < 0 || v > UINT32_MAX) {
                free(ins);
                return pk_cli_usage(cmd, "bad --pid '%s'", val);
            }
            pid = v;
        } else if (OPT("--total")) {
            if (!strcmp(val, "per-byte"))
                go.total_mode = PK_TOTAL_PER_BYTE;
            else if (!strcmp(val, "sum"))
                go.total_mode = PK_TOTAL_SUM;
            else {
                free(ins);
                return pk_cli_usage(cmd, "--total must be per-byte or sum, not '%s'", val);
            }
        } else {
            free(ins);
            return pk_cli_usage(cmd, "unknown or incomplete option '%s'", a);
        }
#undef OPT
    }
    if (!binary || !out || !nin) {
        free(ins);
        return pk_cli_usage(cmd, "--binary, an input (--perf, --perfscript or --raw) and -o are required");
    }
    pk_write_opts wo = {0};
    if (!raw_only && pk_prof_format_parse(fmt_name, &wo.format)) {
        free(ins);
        return pk_cli_usage(cmd, "unsupported --format '%s' (extbinary, text, binary or gcc)", fmt_name);
    }

    pk_err err = {{0}};
    pk_binary *bin = NULL;
    pk_rawprof raw;
    bool raw_init = false, cs_init = false, probes_init = false;
    pk_cs_prep *prep = NULL;              /* probes and DWARF index, on a second thread */
    pk_u64map keep = {0};                 /* GUIDs of the functions whose probes are decoded */
    pk_csraw csr;
    pk_unwind_stats ust = {0};
    size_t ncontexts = 0;
    ctx_counts ctx_distinct = {0};
    pk_probe_info probes;
    pk_profset ps, nested;
    bool ps_init = false, nested_init = false;
    pk_agg_segment *segs = NULL;
    if (pk_binary_open(&bin, binary, debug, &err))
        goto fail;
    pk_elf *elf = pk_binary_elf(bin);
    size_t nseg;
    const pk_elf_segment *es = pk_elf_segments(elf, &nseg);
    segs = calloc(nseg + 1, sizeof *segs);
    if (!segs) {
        pk_err_set(&err, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < nseg; i++)
        segs[i] = (pk_agg_segment){es[i].vaddr, es[i].memsz, es[i].offset, es[i].filesz, es[i].flags};
    const uint8_t *bid;
    size_t bid_len;
    pk_elf_build_id(elf, &bid, &bid_len);
    if (bid_len > 20)
        bid_len = 20;
    pk_agg_target t = {.path = binary, .build_id_size = (uint8_t)bid_len,
                       .preferred_base = pk_elf_preferred_base(elf), .segs = segs, .nsegs = nseg};
    if (bid_len)
        memcpy(t.build_id, bid, bid_len);
    if (pk_rawprof_init(&raw, binary, t.build_id, t.build_id_size, t.preferred_base, &err))
        goto fail;
    raw_init = true;

    /* Contexts need every input to carry stacks: raw profiles have none. */
    bool probe = !dwarf_corr && pk_elf_has_pseudo_probes(elf);
    bool try_cs = (probe || line_cs) && !ignore_stacks && !raw_only;
    for (size_t i = 0; i < nin; i++)
        if (ins[i].kind == 'r')
            try_cs = false;
    if (try_cs) {
        if (pk_csraw_init(&csr, t.preferred_base, &err))
            goto fail;
        cs_init = true;
    }
    bool show = pk_cli_progress_wanted(quiet);
    size_t empty_inputs = 0;
    for (size_t i = 0; i < nin; i++) {
        if (ins[i].kind == 'r') {
            pk_rawprof r;
            if (pk_rawprof_read(&r, ins[i].path, &err))
                goto fail;
            int m = pk_rawprof_merge(&raw, &r, &err);
            pk_rawprof_free(&r);
            if (m) {
                pk_err_prefix(&err, "%s", ins[i].path);
                goto fail;
            }
        } else {
            /* probe-based contexts use no branch but calls and tail calls */
            int a = aggregate_one(&ins[i], &t, pid, show, worker, probe, &raw, bin, cs_init ? &csr : NULL, &ust,
                                  &err);
            if (a < 0 || (a > 0 && nin == 1))
                goto fail;
            if (a > 0) {
                if (!quiet)
                    fprintf(stderr, "profgen: warning: %s\n", err.msg);
                empty_inputs++;
            }
        }
    }
    if (empty_inputs == nin) {
        pk_err_prefix(&err, "no input has samples of %s (last one)", binary);
        goto fail;
    }
    if (raw_only) {
        if (pk_rawprof_write(&raw, out, &err))
            goto fail;
        if (!quiet) {
            print_summary(&raw, NULL, NULL);
            fprintf(stderr, "profgen: wrote raw profile %s\n", out);
        }
        rc = 0;
        goto done;
    }
    if (!raw.ranges.len && !raw.branches.len && !(cs_init && (csr.ranges.len || csr.branches.len))) {
        pk_err_set(&err, "no samples of %s in the input", binary);
        goto fail;
    }
    bool have_ctx = cs_init && ust.samples_unwound && pk_csraw_num_ctxs(&csr);
    int mode = probe ? (have_ctx ? GEN_CS : GEN_PROBE) : (have_ctx ? GEN_LINE_CS : GEN_LINE);
    if (pk_profset_init(&ps, &err))
        goto fail;
    ps_init = true;
    if (show)
        fprintf(stderr, "profgen: symbolizing...");
    pk_profgen_stats gs;
    memset(&gs, 0, sizeof gs);
    pk_probe_gen_stats pst;
    memset(&pst, 0, sizeof pst);
    pk_tailcall_stats tst;
    memset(&tst, 0, sizeof tst);
    pk_preinline_stats pis;
    memset(&pis, 0, sizeof pis);
    const pk_profset *result = &ps;
    int g;
    /* Only the sampled functions' probes are decoded, as llvm-profgen does
     * (all of them would be most of the memory and time at small sample
     * counts). CSSPGO: those sampled so far are decoded on another thread
     * while tail-call frames are inferred here, and that thread goes on to
     * index the DWARF of the code sizes while the profile is built; the
     * inferred frames add call sites of functions that may have no sample
     * of their own, whose probes are decoded afterwards. */
    if (mode == GEN_CS) {
        pk_u64map more = {0};
        if (pk_probe_sampled_guids(elf, &csr, NULL, &keep, &err) ||
            pk_cs_prep_start(&prep, bin, &probes, &keep, !no_preinline && worker, &err))
            goto fail;
        probes_init = !prep; /* with a thread, once it says so */
        /* (the inference leaves contexts canonically numbered) */
        pk_u64map added = {0}; /* call sites of the inferred frames */
        int tr = no_infer ? pk_csraw_canonicalize(&csr, &err)
                          : pk_infer_tail_frames(&csr, bin, 0, &tst, &added, &err);
        if (prep) {
            int lr = pk_cs_prep_probes(prep, tr ? NULL : &err);
            probes_init = !lr;
            tr = tr || lr;
        }
        tr = tr || pk_probe_guids_at_sites(elf, &added, &keep, &more, &err) ||
             pk_probe_info_load_more(&probes, elf, &more, &err);
        pk_u64map_free(&more);
        pk_u64map_free(&added);
        pk_cs_prep_index(prep); /* the table is final: the DWARF of its functions */
        if (tr)
            goto fail;
    } else if (mode == GEN_LINE_CS) {
        if (no_infer ? pk_csraw_canonicalize(&csr, &err) : pk_infer_tail_frames(&csr, bin, 0, &tst, NULL, &err))
            goto fail;
    } else if (mode == GEN_PROBE) {
        if (pk_probe_sampled_guids(elf, NULL, &raw, &keep, &err) || pk_probe_info_load(&probes, elf, &keep, &err))
            goto fail;
        probes_init = true;
    }
    if (mode == GEN_CS || mode == GEN_LINE_CS) {
        /* The unwinder's decoded functions: done with. (No malloc_trim here
         * or below: the heap grows again at once and reuses what was freed,
         * so trimming only turned into page faults and TLB shootdowns, 7 %
         * of the run at 10k samples, for no lower peak at 1M.) */
        pk_binary_drop_insns(bin);
    }
    if (mode == GEN_LINE) {
        g = pk_profgen_line(bin, &raw, &go, &ps, &gs, &err);
    } else if (mode == GEN_PROBE) {
        g = pk_profgen_probe(bin, &probes, &raw, &ps, &pst, &err);
    } else {
        ctx_distinct.ranges = csr.ranges.len;
        g = mode == GEN_CS ? pk_profgen_probe_cs(bin, &probes, &csr, &ps, &pst, &err)
                               : pk_profgen_line_cs(bin, &csr, &go, &ps, &gs, &err);
        /* The counts are in the profile now: free the address-level data
         * before the pre-inliner's peak (the context count is kept for the
         * summary). */
        ncontexts = pk_csraw_num_ctxs(&csr);
        ctx_distinct.branches = csr.branches.len;
        ctx_distinct.calls_only = probe;
        /* (ranges: counted before probe_cs freed them) */
        pk_pairmap_free(&csr.ranges);
        pk_pairmap_free(&csr.branches);
        int pr = pk_cs_prep_finish(prep, g ? NULL : &err); /* the DWARF index is ready */
        prep = NULL;
        g = g || pr;
        if (probes_init) {
            pk_probe_info_free(&probes);
            probes_init = false;
        }
        if (!g && !no_preinline) {
            pk_ctx_sizes *sizes = NULL;
            pk_preinline_opts po;
            pk_preinline_defaults(&po);
            /* the pre-inliner's context trie and summary on another thread
             * while the code sizes are built here */
            pk_preinline_job *pj = NULL;
            if (worker)
                g = pk_preinline_start(&pj, &ps, &err);
            g = g || pk_ctx_sizes_build(&sizes, bin, &ps, mode == GEN_CS, &err);
            pk_binary_drop_caches(bin); /* DWARF and instructions are not needed past here */
            if (pj && g) {
                pk_preinline_cancel(pj);
            } else if (pj) {
                g = pk_preinline_finish(pj, sizes, &po, &pis, &err);
            } else {
                g = g || pk_preinline(&ps, sizes, &po, &pis, &err);
            }
            pk_ctx_sizes_free(sizes);
            if (!g && !(g = pk_profset_init(&nested, &err))) {
                nested_init = true;
                g = pk_cs_nest(&ps, &nested, &err);
                result = &nested;
            }
        } else if (!g) {
            uint64_t merged;
            g = pk_cs_merge_cold(&ps, 1, false, &merged, &err);
        }
    }
    if (show)
        fprintf(stderr, "\r\033[K");
    if (g)
        goto fail;
    size_t nprof = pk_profset_count(result);
    if (!nprof) {
        char h[41];
        hex(h, t.build_id, t.build_id_size);
        pk_err_set(&err, "no function of %s (build-id %s) received samples; nothing written", binary,
                   t.build_id_size ? h : "none");
        if (!quiet)
            print_summary(&raw, mode == GEN_LINE ? &gs : NULL, cs_init ? &ctx_distinct : NULL);
        goto fail;
    }
    if (pk_prof_write_file(result, &wo, out, &err))
        goto fail;
    if (!quiet) {
        print_summary(&raw, mode == GEN_LINE ? &gs : NULL, cs_init ? &ctx_distinct : NULL);
        if (mode == GEN_CS || mode == GEN_LINE_CS)
            print_unwind(&ust, ncontexts, no_infer ? NULL : &tst);
        if (mode == GEN_LINE)
            fprintf(stderr, "profgen: wrote %s (%s, line-based AutoFDO): %zu functions, total samples %llu, "
                    "body samples %llu\n", out, pk_prof_format_name(wo.format), nprof,
                    (unsigned long long)gs.total_samples, (unsigned long long)gs.body_samples);
        else if (mode == GEN_PROBE)
            fprintf(stderr, "profgen: wrote %s (%s, probe-based): %zu functions, %llu probes hit\n", out,
                    pk_prof_format_name(wo.format), nprof, (unsigned long long)pst.probes_hit);
        else if (mode == GEN_LINE_CS)
            fprintf(stderr, "profgen: wrote %s (%s, context-sensitive line-based%s): %zu top-level profiles, "
                    "%llu context profiles before pre-inlining\n", out, pk_prof_format_name(wo.format),
                    no_preinline ? ", flat" : ", pre-inlined, nested", nprof, (unsigned long long)gs.profiles);
        else
            fprintf(stderr, "profgen: wrote %s (%s, CSSPGO%s): %zu top-level profiles from %llu contexts "
                    "(%llu truncated at a call without probe)\n", out, pk_prof_format_name(wo.format),
                    no_preinline ? ", flat" : ", pre-inlined, nested", nprof,
                    (unsigned long long)pst.contexts, (unsigned long long)pst.contexts_truncated);
        if ((mode == GEN_CS || mode == GEN_LINE_CS) && !no_preinline)
            fprintf(stderr, "profgen: pre-inliner: %llu inlined, %llu not inlined, %llu contexts merged into "
                    "base profiles\n", (unsigned long long)pis.inlined, (unsigned long long)pis.not_inlined,
                    (unsigned long long)pis.merged_into_base);
    }
    rc = 0;
    goto done;
fail:
    rc = pk_cli_fail(cmd, &err);
done:
    if (prep) { /* an error while the thread ran: it finishes first */
        if (!pk_cs_prep_probes(prep, NULL))
            probes_init = true;
        pk_cs_prep_finish(prep, NULL);
    }
    pk_u64map_free(&keep);
    if (nested_init)
        pk_profset_free(&nested);
    if (ps_init)
        pk_profset_free(&ps);
    if (probes_init)
        pk_probe_info_free(&probes);
    if (cs_init)
        pk_csraw_free(&csr);
    if (raw_init)
        pk_rawprof_free(&raw);
    pk_binary_close(bin);
    free(segs);
    free(ins);
    return rc;
}

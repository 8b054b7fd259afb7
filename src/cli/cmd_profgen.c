/* cmd_profgen.c — `pgokit profgen`: perf.data / perf-script / raw profiles →
 * an AutoFDO (line-based) sample profile, or a raw profile (--raw-only). */
#include "cli/cli.h"
#include "cli/profgen_dumps.h"
#include "cli/profgen_report.h"
#include "profgen/pipeline.h"
#include "infer/infer.h"
#include "infer/ip_ranges.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

/* --threads: at most PK_IP_MAX_THREADS; by default one per CPU up to
 * DEFAULT_MAX_THREADS, so that profgen on a large build machine does not
 * take every CPU unasked */
#define DEFAULT_MAX_THREADS 8

const char pk_cmd_profgen_summary[] = "perf.data / perf script / raw profile -> AutoFDO or CSSPGO sample profile";

static const char usage_text[] =
    "usage: pgokit profgen --binary BIN (--perf perf.data | --perfscript FILE | --raw FILE | --pprof FILE)...\n"
    "                      -o OUT [--format extbinary|text|binary|gcc] [--debug-binary F] [--pid N]\n"
    "                      [--ip | --lbr] [--flow mcf|propagate|none]\n"
    "                      [--raw-only] [--total per-byte|sum] [--no-dup-factor]\n"
    "                      [--ignore-stack-samples] [--no-preinline] [--use-dwarf-correlation]\n"
    "                      [--cs] [--threads N] [-q]\n"
    "\n"
    "Which profile: a binary built with -fpseudo-probe-for-profiling and samples with call\n"
    "stacks give a CSSPGO profile (contexts, pre-inlined, nested); probes without stacks\n"
    "(or --ignore-stack-samples) a probe-based profile; otherwise a line-based AutoFDO profile,\n"
    "or with --cs a line-based context-sensitive one.\n"
    "Samples: LBR branch stacks when the inputs have them; otherwise instruction pointers with\n"
    "call stacks (`pgokit record --ip`, `perf record -e cpu-clock --call-graph fp`, pprof): block\n"
    "and edge counts then come from flow inference over each sampled function's CFG.\n"
    "\n"
    "  --binary BIN        the profiled executable or shared library (matched by build-id,\n"
    "                      else by path or file name, in the recording's mmap events)\n"
    "  --perf FILE         a perf.data file (LBR branch stacks), repeatable\n"
    "  --perfscript FILE   `perf script -F ip,brstack [--show-mmap-events]` text, repeatable\n"
    "  --raw FILE          a raw profile written by --raw-only (version 1 or 2), repeatable\n"
    "                      (counts add up per context; IP samples are inferred once, on the sum)\n"
    "  --pprof FILE        a pprof profile (profile.proto, gzip-compressed) whose locations\n"
    "                      carry addresses, e.g. from Go's runtime/pprof, Parca, Pyroscope or\n"
    "                      `pgokit convert`; repeatable\n"
    "  --ip                build from instruction-pointer samples even when branch stacks exist\n"
    "  --lbr               use branch stacks only (samples without one are ignored)\n"
    "  --flow M            IP samples: mcf (minimum-cost flow, default), propagate (AutoFDO's\n"
    "                      equivalence classes), none (block count = its samples; for measuring)\n"
    "  --ip-context-prior K IP samples, contexts: each context's block weights borrow K samples'\n"
    "                      worth of its function's merged shape (default 1000; 0: none)\n"
    "  --ip-base-shape S   IP samples, CSSPGO: function (default: a base profile takes the shape\n"
    "                      of its function's inference from all its samples at once), contexts\n"
    "                      (the sum of its merged contexts' inferences)\n"
    "  --flow-costs C      IP samples, mcf: convex (default: costs by each block's Poisson\n"
    "                      evidence, dearer beyond half its weight), poisson (not convex), profi\n"
    "                      (profi's uniform linear costs, made for LBR counts)\n"
    "  -o, --output OUT    output file\n"
    "  --format F          extbinary (default, like llvm-profgen), text, binary, or gcc\n"
    "                      (GCC 12+ -fauto-profile; line-based profiles only)\n"
    "  --raw-only          write the merged raw (unsymbolized) profile instead: per calling\n"
    "                      context, IP samples as observed; contexts are trimmed, tail-call\n"
    "                      frames and IP block counts inferred when a profile is made of it\n"
    "                      (after merging: `pgokit merge`, or several --raw)\n"
    "  --raw-version N     --raw-only: 2 (default), or 1: flat counts only, IP samples\n"
    "                      inferred first (what pgokit before version 2 and the store read)\n"
    "  --skip-symbolization  write llvm-profgen's unsymbolized text instead (ranges and\n"
    "                      branches; with stacks, per context: call-site addresses with\n"
    "                      pseudo-probes, source frames without; offsets as --use-offset says)\n"
    "  --unsymbolized-profile FILE  llvm-profgen's unsymbolized text as an input (flat, or\n"
    "                      with source-frame contexts: a context-sensitive profile)\n"
    "  --llvm-sample-profile FILE  a sample profile as the only input: only the\n"
    "                      post-processing runs (cold trimming, pre-inliner, nesting)\n"
    "  --perf-event NAME   perf script text: only samples of this event (its event field;\n"
    "                      repeatable; --perf-events A,B), as llvm-profgen's option\n"
    "  --sample-period N   LBR samples without stacks count N / (entries - 1) times each\n"
    "                      (llvm-profgen's scaling; IP samples N times)\n"
    "  --leading-ip-only   a profile from the samples' instruction pointers alone: counts\n"
    "                      summed per line, no duplication factor (llvm-profgen's option)\n"
    "  --fill-zero-for-all-funcs  line-based: every function of the binary gets a profile\n"
    "                      (unsampled lines at 0), as llvm-profgen's option\n"
    "  --use-offset=false  that text's addresses are virtual addresses, not offsets from\n"
    "                      the first executable segment (llvm-profgen's default)\n"
    "  --use-first-loadable-segment-as-base  offsets from the first loadable segment\n"
PK_CLI_DEBUG_HELP
    "  --pid N             only samples of process N\n"
    "  --total MODE        line-based function totals: per-byte (llvm-profgen/AutoFDO) or sum\n"
    "                      of body samples\n"
    "  --no-dup-factor     do not scale counts by the discriminator duplication factor\n"
    "  --mark-preinlined   extbinary: flag the profile pre-inlined, no call site forced. clang-19\n"
    "                      then treats a line-based AutoFDO profile as it treats CSSPGO and probe\n"
    "                      profiles: profi infers block counts, ext-TSP lays out blocks, the\n"
    "                      priority-ordered sample inliner decides. Measured on 7 programs\n"
    "                      (bench/results/afdo-preinlined-*.md): fewer instructions on most,\n"
    "                      more on tcc and Duktape; build with and without, keep the faster\n"
    "  --ignore-stack-samples  no calling contexts even when samples have call stacks\n"
    "  --stack-copy-bytes N  IP samples with stack copies (--call-graph dwarf): unwind only the\n"
    "                      first N bytes of each, what a recording with dwarf,N would have kept\n"
    "                      (0: none, the sampled addresses alone)\n"
    "  --no-preinline      CSSPGO: keep the flat context profile (cold contexts merged),\n"
    "                      no pre-inliner, no nesting\n"
    "  --outside-leaf-context C  contexts of a sample taken outside the binary (malloc,\n"
    "                      memcpy) whose branches show no call back into it: cut (default:\n"
    "                      its callers in the binary are not kept; measured better) or full\n"
    "                      (kept, as llvm-profgen does; `pgokit llvm-profgen` uses it)\n"
    "  --prolog-epilog-leaf P  samples whose stack's leaf is in a prologue or epilogue\n"
    "                      (its frame-pointer stack misses a frame): drop (default) leaves\n"
    "                      them out of contexts, keep keeps them, drop-all also leaves them\n"
    "                      out of flat profiles made from samples with stacks (as\n"
    "                      llvm-profgen; `pgokit llvm-profgen` uses it)\n"
    "  --preinline-cycle-order O  CSSPGO: the order in which the pre-inliner visits the\n"
    "                      members of a recursion cycle: fas (default; least weight of calls\n"
    "                      into a member visited before its caller) or mst (the cycle's\n"
    "                      maximum-weight spanning tree, roots first, as llvm-profgen)\n"
    "  --trace-preinline FILE  CSSPGO: write every pre-inliner decision to FILE (- for stderr),\n"
    "                      one per line: step (function, inline, keep-call, over-limit), count,\n"
    "                      size, size threshold, the function's size so far/limit, the context\n"
    "  --trace-preinline-wording W  pgokit (that, default) or llvm (llvm-profgen's\n"
    "                      --debug-only=cs-preinliner lines: Process..., Inlined context...)\n"
    "  --preinline-across-units  CSSPGO: the pre-inliner may inline a callee whose body is in\n"
    "                      another compilation unit than its caller's, as llvm-profgen's does\n"
    "                      (default: only where the binary's DWARF shows cross-unit inlining,\n"
    "                      i.e. an LTO build; without LTO the compiler cannot, and the callee's\n"
    "                      unit would find no profile for those calls)\n"
    "  --csspgo-replay-preinline  CSSPGO: the pre-inliner inlines what the binary inlined and\n"
    "                      nothing else, within its size limits (llvm-profgen's option)\n"
    "  --use-context-cost-for-preinliner=false  CSSPGO: a context's size for the pre-inliner\n"
    "                      is its number of body sample lines, not its bytes of code in the\n"
    "                      binary under that inline context (llvm-profgen's option; default true)\n"
    "  --show-mmap-events  print every mmap event of the inputs (stdout), as llvm-profgen:\n"
    "                      \"Mmap: Binary FILE loaded at 0xADDR: \"\n"
    "  --show-detailed-warning  CS: a warning for each return address at which call stacks\n"
    "                      were cut for not following a call (a caller without frame pointer)\n"
    "  --no-infer-missing-frames  CSSPGO: do not re-insert frames lost to tail calls\n"
    "  --use-dwarf-correlation    line-based profile even for a pseudo-probe binary\n"
    "  --cs                a binary without probes: context-sensitive line-based profile\n"
    "                      (DWARF inline contexts, pre-inlined and nested unless --no-preinline)\n"
    "  --threads N         1 to 64 (default: the CPUs, at most 8): with two or more,\n"
    "                      context-sensitive samples are walked on a second thread while\n"
    "                      reading goes on (1.27x faster on 1M samples), and the flow\n"
    "                      inference of IP samples runs on N threads; the profile is the\n"
    "                      same. 1: one thread (better on a machine whose CPUs are all busy)\n"
    "  -q, --quiet         no progress, no summary\n"
    "\n"
    "llvm-profgen's options, with its meanings (--opt=V or --opt V; booleans --opt or --opt=true|false):\n"
    "  --compress-recursion N            CS: remove repeated windows of up to N caller frames\n"
    "                                    (-1: any length, the default; 0: keep recursion)\n"
    "  --csprof-max-context-depth N      CS: keep the N innermost callers of each context (-1: all)\n"
    "  --profile-summary-hot-count N     the hot threshold (else the count at the hot cutoff)\n"
    "  --profile-summary-cold-count N    the cold threshold (else the count at the cold cutoff)\n"
    "  --profile-summary-cutoff-hot N, --profile-summary-cutoff-cold N\n"
    "                                    those cutoffs, in millionths (990000, 999999)\n"
    "  --trim-cold-profile               drop profiles under the cold threshold (CS: contexts\n"
    "                                    under the hot one; base profiles only when pre-inlined)\n"
    "  --csprof-merge-cold-context       CS: merge contexts under the hot threshold into their\n"
    "                                    last frames (default: on without the pre-inliner)\n"
    "  --csprof-max-cold-context-depth N CS: frames a merged cold context keeps (1)\n"
    "  --csspgo-preinliner=false         CS: no pre-inliner (contexts still nested)\n"
    "  --gen-cs-nested-profile=false     CS: flat contexts (pre-inlined unless told otherwise)\n"
    "  --sample-profile-hot-inline-threshold N, --sample-profile-cold-inline-threshold N\n"
    "                                    CS: the pre-inliner's size thresholds (1500, 0)\n"
    "  --update-total-samples            line-based: totals are the sums of what is inside\n"
    "                                    (= --total sum; probe profiles keep theirs)\n"
    "  --show-density                    print the profile density (hot functions' samples per\n"
    "                                    body entry); under --profile-density-threshold (50) a\n"
    "                                    warning says how many times more samples would help\n"
    "  --profile-density-cutoff-hot N    the share of samples the density covers (990000)\n"
    "  --use-md5                         extbinary: MD5 name table\n"
    "  --populate-profile-symbol-list    extbinary: list every function of the binary, so the\n"
    "                                    compiler tells \"not sampled\" from \"not profiled\"\n"
    "  --mark-all-context-preinlined     every profile and inlinee ContextShouldBeInlined, the\n"
    "                                    profile pre-inlined (llvm-profgen's option, after 19):\n"
    "                                    clang inlines every nested inlinee it can, and uses its\n"
    "                                    CSSPGO profile-use pipeline (see --mark-preinlined);\n"
    "                                    extbinary or text\n";

typedef struct progress {
    bool on;
    time_t last;
    pk_preinline_printer trace;  /* --trace-preinline (trace.f NULL: none) */
} progress;

static void on_progress(void *ctx, const char *path, uint64_t n, uint64_t offset, uint64_t size)
{
    progress *p = ctx;
    time_t now = time(NULL);
    if (!p->on || now == p->last)
        return;
    p->last = now;
    if (size && offset <= size)
        fprintf(stderr, "\rprofgen: %s: %llu samples (%.0f%%)  ", path, (unsigned long long)n,
                100.0 * (double)offset / (double)size);
    else
        fprintf(stderr, "\rprofgen: %s: %llu samples  ", path, (unsigned long long)n);
}

static void on_phase(void *ctx, const char *what)
{
    progress *p = ctx;
    if (!p->on)
        return;
    if (what)
        fprintf(stderr, "\rprofgen: %s...", what);
    else
        fprintf(stderr, "\r\033[K");
}

static void on_preinline_step(void *ctx, const pk_profset *ps, const pk_preinline_step *st)
{
    pk_print_preinline_step(&((progress *)ctx)->trace, ps, st);
}

static void on_mmap_event(void *ctx, const pk_mmap_event *m)
{
    (void)ctx;
    pk_print_mmap_event(stdout, m);
}

static void on_bad_return(void *ctx, uint64_t addr)
{
    (void)ctx;
    pk_print_bad_return(stderr, addr);
}

static void on_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "profgen: warning: %s\n", msg);
}

/* llvm's boolean options: --name (true), --name=true|false|1|0. 1 when
 * `a` is that option (*v set, or *bad when its value is none of those). */
static int bool_opt(const char *a, const char *name, bool *v, bool *bad)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) || (a[n] && a[n] != '='))
        return 0;
    const char *val = a[n] ? a + n + 1 : "true";
    if (!strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "TRUE") || !strcmp(val, "True"))
        *v = true;
    else if (!strcmp(val, "false") || !strcmp(val, "0") || !strcmp(val, "FALSE") || !strcmp(val, "False"))
        *v = false;
    else
        *bad = true;
    return 1;
}

/* A decimal integer in [lo, hi]; false when `val` is not one. */
static bool int_val(const char *val, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (!*val || *end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int pk_cmd_profgen(int argc, char **argv)
{
    const char *cmd = "profgen", *fmt_name = "extbinary";
    bool quiet = false;
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
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pk_pipeline_request rq = {.pid = -1, .raw_version = 2,
                              .threads = ncpu < 1 ? 1 : ncpu > DEFAULT_MAX_THREADS ? DEFAULT_MAX_THREADS : (unsigned)ncpu};
    pk_preinline_opts po;
    pk_preinline_defaults(&po);
    bool flag, bad = false, show_density = false, show_mmaps = false, detailed_warnings = false;
    bool trace_llvm = false;
    double density_threshold = 50;
    pk_cli_debug dbg = {0};
    pk_pipeline_input *ins = calloc((size_t)argc + 1, sizeof *ins);
    /* --perf-events a,b,c: at most one name per two characters of argv */
    size_t events_room = 1;
    for (int i = 1; i < argc; i++)
        events_room += strlen(argv[i]) / 2 + 1;
    const char **events = calloc(events_room, sizeof *events);
    size_t nevents = 0;
    size_t nin = 0;
    const char *trace_path = NULL;
    FILE *trace = NULL;
    if (!ins || !events) {
        free(ins);
        free(events);
        return 1;
    }
    int rc = 2;
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
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--raw-only")) {
            rq.raw_only = true;
        } else if (bool_opt(a, "--skip-symbolization", &flag, &bad)) {
            rq.raw_only = rq.raw_llvm_text = flag;
        } else if (bool_opt(a, "--leading-ip-only", &flag, &bad)) {
            rq.leading_ip_only = rq.gen.sum_lines = flag;
        } else if (OPT("--perf-event") || OPT("--perf-events")) {
            /* --perf-events: comma-separated (the names have no commas) */
            for (char *tok = strtok((char *)val, ","); tok; tok = strtok(NULL, ","))
                events[nevents++] = tok;
        } else if (OPT("--sample-period")) {
            long long v;
            if (!int_val(val, 1, INT64_MAX, &v)) {
                rc = pk_cli_usage(cmd, "--sample-period must be a positive count, not '%s'", val);
                goto done;
            }
            rq.sample_period = (uint64_t)v;
        } else if (bool_opt(a, "--fill-zero-for-all-funcs", &flag, &bad)) {
            rq.gen.fill_zero_all = flag;
        } else if (bool_opt(a, "--use-first-loadable-segment-as-base", &flag, &bad)) {
            rq.llvm_first_loadable_base = flag;
        } else if (bool_opt(a, "--use-offset", &flag, &bad)) {
            rq.llvm_absolute = !flag;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--no-dup-factor")) {
            rq.gen.no_dup_factor = true;
        } else if (!strcmp(a, "--ignore-stack-samples")) {
            rq.ignore_stacks = true;
        } else if (OPT("--stack-copy-bytes")) {
            long long v;
            if (!int_val(val, 0, 65528, &v)) {
                rc = pk_cli_usage(cmd, "--stack-copy-bytes must be 0 .. 65528, not '%s'", val);
                goto done;
            }
            rq.stack_copy_limit = true;
            rq.stack_copy_bytes = (uint32_t)v;
        } else if (!strcmp(a, "--no-preinline")) {
            rq.no_preinline = true;
        } else if (OPT("--outside-leaf-context")) {
            if (strcmp(val, "cut") && strcmp(val, "full")) {
                rc = pk_cli_usage(cmd, "--outside-leaf-context must be cut or full, not '%s'", val);
                goto done;
            }
            rq.gen.outside_leaf_full_context = val[0] == 'f';
        } else if (OPT("--prolog-epilog-leaf")) {
            if (strcmp(val, "keep") && strcmp(val, "drop") && strcmp(val, "drop-all")) {
                rc = pk_cli_usage(cmd, "--prolog-epilog-leaf must be keep, drop or drop-all, not '%s'", val);
                goto done;
            }
            rq.gen.keep_prolog_epilog_leaf = val[0] == 'k';
            rq.drop_prolog_epilog_flat = !strcmp(val, "drop-all");
        } else if (OPT("--preinline-cycle-order")) {
            if (!strcmp(val, "mst"))
                po.cycle_order = PK_CG_CYCLE_MST;
            else if (!strcmp(val, "fas"))
                po.cycle_order = PK_CG_CYCLE_FAS;
            else {
                rc = pk_cli_usage(cmd, "--preinline-cycle-order must be mst or fas, not '%s'", val);
                goto done;
            }
            rq.preinline = &po;
        } else if (OPT("--trace-preinline")) {
            trace_path = val;
        } else if (OPT("--trace-preinline-wording")) {
            if (strcmp(val, "llvm") && strcmp(val, "pgokit")) {
                rc = pk_cli_usage(cmd, "--trace-preinline-wording must be pgokit or llvm, not '%s'", val);
                goto done;
            }
            trace_llvm = !strcmp(val, "llvm");
        } else if (bool_opt(a, "--use-context-cost-for-preinliner", &flag, &bad)) {
            po.use_sample_count_size = !flag;
            rq.preinline = &po;
        } else if (bool_opt(a, "--preinline-across-units", &flag, &bad)) {
            rq.preinline_across_units = flag;
        } else if (bool_opt(a, "--csspgo-replay-preinline", &flag, &bad)) {
            po.replay = flag;
            rq.preinline = &po;

        } else if (bool_opt(a, "--show-mmap-events", &flag, &bad)) {
            show_mmaps = flag;
        } else if (bool_opt(a, "--show-detailed-warning", &flag, &bad)) {
            detailed_warnings = flag;
        } else if (!strcmp(a, "--cs")) {
            rq.line_cs = true;
        } else if (!strcmp(a, "--no-infer-missing-frames")) {
            rq.no_infer_frames = true;
        } else if (!strcmp(a, "--ip")) {
            rq.samples = PK_SAMPLES_IP;
        } else if (!strcmp(a, "--lbr")) {
            rq.samples = PK_SAMPLES_LBR;
        } else if (bool_opt(a, "--trim-cold-profile", &flag, &bad)) {
            rq.trim_cold = flag;
        } else if (bool_opt(a, "--csprof-merge-cold-context", &flag, &bad)) {
            rq.merge_cold = flag ? 1 : -1;
        } else if (bool_opt(a, "--csspgo-preinliner", &flag, &bad)) {
            rq.no_csspgo_preinliner = !flag;
        } else if (bool_opt(a, "--gen-cs-nested-profile", &flag, &bad)) {
            rq.no_nest = !flag;
        } else if (bool_opt(a, "--show-density", &flag, &bad)) {
            show_density = flag;
        } else if (OPT("--profile-density-threshold") || OPT("--profile-density-cutoff-hot")) {
            long long v;
            bool cut = strstr(a, "cutoff") != NULL;
            if (!int_val(val, cut ? 1 : 0, cut ? 1000000 : INT32_MAX, &v)) {
                rc = pk_cli_usage(cmd, "%s: '%s' is not a valid value", cut ? "--profile-density-cutoff-hot"
                                  : "--profile-density-threshold", val);
                goto done;
            }
            if (cut)
                rq.density_cutoff = (uint32_t)v;
            else
                density_threshold = (double)v;
        } else if (bool_opt(a, "--update-total-samples", &flag, &bad)) {
            rq.gen.total_mode = flag ? PK_TOTAL_SUM : PK_TOTAL_PER_BYTE;
        } else if (bool_opt(a, "--use-md5", &flag, &bad)) {
            rq.write.use_md5 = flag;
        } else if (bool_opt(a, "--populate-profile-symbol-list", &flag, &bad)) {
            rq.symbol_list = flag;
        } else if (bool_opt(a, "--mark-all-context-preinlined", &flag, &bad)) {
            rq.mark_preinlined = flag ? PK_PREINLINED_ALL : PK_PREINLINED_NONE;
        } else if (!strcmp(a, "--mark-preinlined")) {
            if (rq.mark_preinlined != PK_PREINLINED_ALL)
                rq.mark_preinlined = PK_PREINLINED_FLAG;
        } else if (OPT("--compress-recursion") || OPT("--csprof-max-context-depth") ||
                   OPT("--csprof-max-cold-context-depth") || OPT("--profile-summary-hot-count") ||
                   OPT("--profile-summary-cold-count") || OPT("--profile-summary-cutoff-hot") ||
                   OPT("--profile-summary-cutoff-cold") || OPT("--sample-profile-hot-inline-threshold") ||
                   OPT("--sample-profile-cold-inline-threshold")) {
            /* llvm-profgen's numeric options, with its meanings */
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
            long long v;
            bool ok;
            if (!strcmp(name, "--compress-recursion")) {
                /* -1: repeats of any length; 0: none; N: windows up to N */
                if ((ok = int_val(val, -1, INT32_MAX, &v)))
                    rq.gen.compress_recursion = v < 0 ? 0 : v == 0 ? -1 : (int)v;
            } else if (!strcmp(name, "--csprof-max-context-depth")) {
                if ((ok = int_val(val, -1, UINT32_MAX, &v))) {
                    rq.gen.depth_limited = v >= 0;
                    rq.gen.max_context_depth = v >= 0 ? (uint32_t)v : 0;
                }
            } else if (!strcmp(name, "--csprof-max-cold-context-depth")) {
                if ((ok = int_val(val, 1, UINT32_MAX, &v)))
                    rq.cold_context_frames = (uint32_t)v;
            } else if (!strcmp(name, "--profile-summary-hot-count") || !strcmp(name, "--profile-summary-cold-count")) {
                bool hot = name[18] == 'h';
                if ((ok = int_val(val, 0, INT64_MAX, &v))) {
                    *(hot ? &rq.hot_count : &rq.cold_count) = (uint64_t)v;
                    *(hot ? &rq.hot_count_set : &rq.cold_count_set) = true;
                }
            } else if (!strcmp(name, "--profile-summary-cutoff-hot") || !strcmp(name, "--profile-summary-cutoff-cold")) {
                if ((ok = int_val(val, 1, 1000000, &v)))
                    *(name[25] == 'h' ? &rq.cutoff_hot : &rq.cutoff_cold) = (uint32_t)v;
            } else {
                if ((ok = int_val(val, 0, UINT32_MAX, &v))) {
                    *(name[17] == 'h' ? &po.hot_threshold : &po.cold_threshold) = (uint32_t)v;
                    rq.preinline = &po;
                }
            }
            if (!ok) {
                rc = pk_cli_usage(cmd, "%s: '%s' is not a valid value", name, val);
                goto done;
            }
        } else if (OPT("--ip-context-prior")) {
            long long v;
            if (!int_val(val, 0, 1000000, &v)) {
                rc = pk_cli_usage(cmd, "--ip-context-prior must be 0 .. 1000000, not '%s'", val);
                goto done;
            }
            rq.ip_context_prior = v ? (int32_t)v : -1;
        } else if (OPT("--ip-base-shape")) {
            if (strcmp(val, "function") && strcmp(val, "contexts")) {
                rc = pk_cli_usage(cmd, "--ip-base-shape must be function or contexts, not '%s'", val);
                goto done;
            }
            rq.ip_base_from_contexts = !strcmp(val, "contexts");
        } else if (OPT("--flow-costs")) {
            if (!strcmp(val, "profi"))
                rq.flow_costs = PK_IP_COSTS_PROFI;
            else if (!strcmp(val, "poisson"))
                rq.flow_costs = PK_IP_COSTS_POISSON;
            else if (!strcmp(val, "convex"))
                rq.flow_costs = PK_IP_COSTS_CONVEX;
            else {
                rc = pk_cli_usage(cmd, "--flow-costs must be convex, poisson or profi, not '%s'", val);
                goto done;
            }
        } else if (OPT("--flow")) {
            if (!strcmp(val, "mcf"))
                rq.flow_method = PK_FLOW_MCF;
            else if (!strcmp(val, "propagate"))
                rq.flow_method = PK_FLOW_PROPAGATE;
            else if (!strcmp(val, "none"))
                rq.flow_method = PK_FLOW_NONE;
            else {
                rc = pk_cli_usage(cmd, "--flow must be mcf, propagate or none, not '%s'", val);
                goto done;
            }
        } else if (!strcmp(a, "--use-dwarf-correlation")) {
            rq.dwarf_correlation = true;
        } else if (OPT("--binary")) {
            rq.binary = val;
        } else if (OPT("--debug-binary") || OPT("--debug-dir") || OPT("--dwp")) {
            if (pk_cli_debug_option(&dbg, cmd, eq ? a : argv[i - 1], val) < 0)
                goto done;
        } else if (OPT("-o") || OPT("--output")) {
            rq.output = val;
        } else if (OPT("--format")) {
            fmt_name = val;
        } else if (OPT("--perf") || OPT("--perfdata")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_PERF, val};
        } else if (OPT("--perfscript")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_SCRIPT, val};
        } else if (OPT("--raw")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_RAW, val};
        } else if (OPT("--llvm-sample-profile")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_PROFILE, val};
        } else if (OPT("--unsymbolized-profile")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_LLVM_UNSYM, val};
        } else if (OPT("--pprof")) {
            ins[nin++] = (pk_pipeline_input){PK_INPUT_PPROF, val};
        } else if (OPT("--threads")) {
            char *end;
            unsigned long n = strtoul(val, &end, 10);
            if (!*val || *end || n < 1 || n > PK_IP_MAX_THREADS) {
                rc = pk_cli_usage(cmd, "--threads must be 1 to %d, not '%s'", PK_IP_MAX_THREADS, val);
                goto done;
            }
            rq.threads = (unsigned)n;
        } else if (OPT("--raw-version")) {
            if (strcmp(val, "1") && strcmp(val, "2")) {
                rc = pk_cli_usage(cmd, "bad --raw-version '%s' (1 or 2)", val);
                goto done;
            }
            rq.raw_version = (uint32_t)(val[0] - '0');
        } else if (OPT("--pid")) {
            char *end;
            long long v = strtoll(val, &end, 10);
            if (*end || v < 0 || v > UINT32_MAX) {
                rc = pk_cli_usage(cmd, "bad --pid '%s'", val);
                goto done;
            }
            rq.pid = v;
        } else if (OPT("--total")) {
            if (!strcmp(val, "per-byte"))
                rq.gen.total_mode = PK_TOTAL_PER_BYTE;
            else if (!strcmp(val, "sum"))
                rq.gen.total_mode = PK_TOTAL_SUM;
            else {
                rc = pk_cli_usage(cmd, "--total must be per-byte or sum, not '%s'", val);
                goto done;
            }
        } else {
            rc = pk_cli_usage(cmd, "unknown or incomplete option '%s'", a);
            goto done;
        }
        if (bad) {
            rc = pk_cli_usage(cmd, "%s: the value must be true or false (1 or 0)", a);
            goto done;
        }
#undef OPT
    }
    if (!rq.binary || !rq.output || !nin) {
        rc = pk_cli_usage(cmd, "--binary, an input (--perf, --perfscript, --raw or --pprof) and -o are required");
        goto done;
    }
    if (pk_cli_check_output(cmd, rq.output, argc, argv)) {
        rc = 1;
        goto done;
    }
    if (!rq.raw_only && pk_prof_format_parse(fmt_name, &rq.write.format)) {
        rc = pk_cli_usage(cmd, "unsupported --format '%s' (extbinary, text, binary or gcc)", fmt_name);
        goto done;
    }
    rq.inputs = ins;
    rq.ninputs = nin;
    rq.debug = dbg.opts;
    rq.perf_events = events;
    rq.nperf_events = nevents;
    if (rq.leading_ip_only)
        rq.ignore_stacks = true;
    rq.worker = rq.threads > 1;
    /* tests: walk every Nth sample on the reading thread */
    const char *every = getenv("PGOKIT_WALK_HERE_EVERY");
    if (every)
        rq.walk_here_every = (uint32_t)strtoul(every, NULL, 10);
    if (trace_path && !strcmp(trace_path, "-"))
        trace = stderr;
    else if (trace_path && !(trace = fopen(trace_path, "w"))) {
        rc = pk_cli_usage(cmd, "cannot write %s: %s", trace_path, strerror(errno));
        goto done;
    }
    progress pg = {.on = pk_cli_progress_wanted(quiet), .trace = {.f = trace, .llvm = trace_llvm}};
    rq.cb_ctx = &pg;
    if (trace)
        rq.preinline_trace = on_preinline_step;
    if (show_mmaps)
        rq.mmap_event = on_mmap_event;
    if (detailed_warnings && !quiet)
        rq.bad_return = on_bad_return;
    rq.progress = on_progress;
    rq.phase = on_phase;
    if (!quiet)
        rq.warning = on_warning;

    pk_err err = {{0}};
    pk_pipeline_report rep;
    if (pk_pipeline_run(&rq, &rep, &err)) {
        if (!quiet && rep.counted)
            pk_profgen_print_summary(&rep);
        if (!quiet && rep.debug_origin[0])
            fprintf(stderr, "profgen: debug info: %s\n", rep.debug_origin);
        rc = pk_cli_fail(cmd, &err);
        goto done;
    }
    /* llvm-profgen's density check: too few samples for the hot code. Not
     * for IP samples: their profile's counts are inferred flow, not samples
     * (their own density, samples per hot instruction, is in the summary) */
    uint32_t cutoff = rq.density_cutoff ? rq.density_cutoff : 990000;
    if (!quiet && rep.mode != PK_MODE_RAW && rep.density == 0)
        fprintf(stderr, "profgen: warning: the output profile is empty or --profile-density-cutoff-hot is set "
                "too low\n");
    else if (!quiet && rep.mode != PK_MODE_RAW && !rep.from_ip && rep.density < density_threshold)
        fprintf(stderr, "profgen: warning: sample PGO is estimated to optimize better with %.1fx more samples "
                "(profile density %.1f, under %.0f): sample more often or longer\n",
                density_threshold / rep.density, rep.density, density_threshold);
    if (show_density && rep.mode != PK_MODE_RAW)
        printf("Functions with density >= %.1f account for %.2f%% total sample counts.\n", rep.density,
               (double)cutoff / 10000);
    if (!quiet) {
        pk_profgen_print_summary(&rep);
        fprintf(stderr, "profgen: debug info: %s\n", rep.debug_origin);
        if (rep.mode == PK_MODE_RAW)
            fprintf(stderr, "profgen: wrote raw profile %s\n", rq.output);
        else {
            if (rep.mode == PK_MODE_CS || rep.mode == PK_MODE_LINE_CS)
                pk_profgen_print_unwind(&rep);
            pk_profgen_print_written(&rq, &rep);
        }
    }
    rc = 0;
done:
    if (trace && trace != stderr && fclose(trace) && rc == 0)
        rc = pk_cli_usage(cmd, "writing %s failed", trace_path);
    free(ins);
    free(events);
    return rc;
}

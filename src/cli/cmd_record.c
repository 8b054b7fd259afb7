/* cmd_record.c — `pgokit record`: sample a program, or attach to a running
 * process, into perf.data. The options become a pk_recording, which the
 * library runs (src/record/recording.c: the mode, the recorder, Ctrl-C, the
 * emulated processes' files); this file prints what it says and the closing
 * summary, and streams the result for `-o -`. */
#include "cli/cli.h"
#include "cli/record_stream.h"
#include "record/record.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

const char pk_cmd_record_summary[] = "record samples of a program or a process: LBR or IP + call chains (perf.data)";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit record [-o FILE] [--ip] [--emulate | --hardware] [--freq HZ | --period N]\n"
            "                     [--lbr-depth N] [--no-callchain | --call-graph fp|dwarf[,BYTES]]\n"
            "                     [--exact-counts FILE] [--seed N] [-q]\n"
            "                     -- CMD ARGS...\n"
            "       pgokit record [-o FILE] [--ip | --hardware] [--freq HZ | --period N]\n"
            "                     --pid PID [--duration SECONDS]\n"
            "       pgokit record --print-exact FILE\n"
            "\n"
            "modes (one line on stderr says which one was chosen and why):\n"
            "  (none)              hardware LBR when the PMU records branch stacks, else --ip\n"
            "  --ip                IP samples + call chains with perf record (see --call-graph)\n"
            "                      (instructions:u every %d retired instructions where the PMU\n"
            "                      counts them: samples in proportion to how often code runs;\n"
            "                      else cpu-clock:u at %d Hz, in proportion to the time it takes;\n"
            "                      user space only; build-ids in the MMAP2 records where the kernel can)\n"
            "  --hardware          LBR branch stacks + call chains from the PMU (perf record -b);\n"
            "                      fails without a PMU that records branch stacks\n"
            "  --emulate           exact LBR under qemu-x86_64 / qemu-aarch64 with the pgokit plugin (no PMU needed)\n"
            "  --emulate --ip      IP samples + call chains under qemu-x86_64 / qemu-aarch64\n"
            "\n"
            "  -o FILE             output perf.data (default perf.data; an existing one is kept as\n"
            "                      FILE.old). -o - streams pipe-mode perf.data to standard output\n"
            "                      (the program's own standard output then goes to standard error)\n"
            "  -F, --freq HZ       --ip with perf: samples per CPU-second (cpu-clock default %d; capped at\n"
            "                      kernel.perf_event_max_sample_rate). Implies --ip. Each sample\n"
            "                      costs the program ~20 us on a PMU-less VM (about 10 %% at 4999 Hz,\n"
            "                      bench/results/record-ip-overhead-*.md): lower it for production\n"
            "  --period N          events between samples: taken branches in the LBR modes\n"
            "                      (default %d), retired instructions with --emulate --ip\n"
            "                      (default %d), instructions or cpu-clock nanoseconds with --ip (instead\n"
            "                      of --freq). Emulation jitters it uniformly in [N/2, 3N/2]\n"
            "  --lbr-depth N       branch-stack entries per sample when emulated (1..64, default 32)\n"
            "  --no-callchain      no call chains\n"
            "  --call-graph MODE   --ip's call chains: fp follows frame pointers; dwarf[,BYTES]\n"
            "                      copies BYTES (default 8192) of the user stack into each sample,\n"
            "                      unwound by profgen with the binary's CFI (.eh_frame): whole chains\n"
            "                      through code built without frame pointers (-O2's default), at the\n"
            "                      cost of larger files. Implies --ip. Default: fp when the program\n"
            "                      sets up frame pointers in half its code or more (or has no\n"
            "                      .eh_frame), else dwarf,%d (the program's direct callers)\n"
            "  --exact-counts FILE also write the exact count of every taken branch and fall-through\n"
            "                      range of the run (format in src/record/record.h). Implies --emulate\n"
            "  --print-exact FILE  print an exact-counts file readably and exit\n"
            "  --seed N            seed of the emulated sampling jitter (default 1)\n"
            "  -p, --pid PID       attach perf to a running process (its threads, and the ones it\n"
            "                      starts) instead of running a command; not with --emulate\n"
            "  --duration SECONDS  with --pid: record this long once attached (default: until\n"
            "                      Ctrl-C or the process exits)\n"
            "  -q                  quiet (no mode line, no summary; perf -q)\n"
            "\n"
            "Processes: the program's children are recorded too, each under its pid, as by perf\n"
            "record: perf inherits; the emulator follows fork() and exec() (scripts run through\n"
            "their #! interpreter, a script as CMD too) and record merges the processes' samples.\n"
            "The summary gives the samples per process; a process that ran unrecorded (a program\n"
            "the emulator cannot run, such as a 32-bit or set-user-ID one, or one killed by\n"
            "SIGKILL) is named, with why. Emulated, when CMD ends record waits for the processes\n"
            "it left running (Ctrl-C or SIGTERM stops them; their samples are kept).\n"
            "Ctrl-C or SIGTERM stops the recording and keeps the samples so far: perf (or the\n"
            "plugin, when the emulated program dies of the signal) finishes perf.data, and record\n"
            "waits for it. The file appears under its name only when complete.\n"
            "exit status: the program's (128+N when it died of signal N); when stopped by\n"
            "SIGINT or SIGTERM, 130 or 143 with a command, 0 with --pid (the usual way to end an\n"
            "attach); 1 when no readable perf.data was written; 2 for usage errors.\n"
            "environment: PGOKIT_QEMU (default qemu-x86_64; aarch64 programs: PGOKIT_QEMU_AARCH64,\n"
            "default qemu-aarch64 -L /usr/aarch64-linux-gnu unless QEMU_LD_PREFIX is set or the host has\n"
            "libc6:arm64, whose own loader and libraries are used then), PGOKIT_LBR_PLUGIN (default\n"
            "pgokit-lbr.so next to the pgokit binary, one directory up, or in ../lib/pgokit/)\n",
            PK_RECORD_DEFAULT_INSN_PERIOD, PK_RECORD_DEFAULT_FREQ, PK_RECORD_DEFAULT_FREQ,
            PK_RECORD_DEFAULT_PERIOD, PK_RECORD_DEFAULT_IP_PERIOD, PK_RECORD_AUTO_STACK);
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || !*s || *end || s[0] == '-')
        return false;
    *v = x;
    return true;
}

static void print_hex(const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        printf("%02x", b[i]);
}

static int print_exact(const char *path)
{
    pk_exact_counts c;
    pk_err err;
    if (pk_exact_read(path, &c, &err) != 0)
        return pk_cli_fail("record", &err);
    printf("# pgokit exact counts v1: %zu binaries, %" PRIu64 " unmapped\n", c.nbins, c.unmapped);
    for (size_t i = 0; i < c.nbins; i++) {
        const pk_exact_binary *b = &c.bins[i];
        printf("binary %s build-id ", b->path);
        print_hex(b->build_id, b->build_id_size);
        printf("\n  ranges %zu\n", b->nranges);
        for (size_t k = 0; k < b->nranges; k++)
            printf("    %" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n", b->ranges[k].a, b->ranges[k].b,
                   b->ranges[k].count);
        printf("  branches %zu\n", b->nbranches);
        for (size_t k = 0; k < b->nbranches; k++) {
            const pk_exact_entry *e = &b->branches[k];
            if (e->a == PK_EXACT_EXTERNAL)
                printf("    external->%" PRIx64 ":%" PRIu64 "\n", e->b, e->count);
            else if (e->b == PK_EXACT_EXTERNAL)
                printf("    %" PRIx64 "->external:%" PRIu64 "\n", e->a, e->count);
            else
                printf("    %" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n", e->a, e->b, e->count);
        }
    }
    pk_exact_free(&c);
    return 0;
}

static void print_summary(enum pk_record_mode mode, const char *path, const pk_record_tally *t)
{
    fprintf(stderr, "pgokit record: %s: wrote %s: %" PRIu64 " samples (%" PRIu64 " with call chains",
            pk_record_mode_name(mode), path, t->samples, t->with_callchain);
    if (mode == PK_MODE_HW_LBR || mode == PK_MODE_EMU_LBR)
        fprintf(stderr, ", %" PRIu64 " with branch stacks", t->with_branches);
    if (t->lost)
        fprintf(stderr, ", %" PRIu64 " lost", t->lost);
    fprintf(stderr, ")");
    /* samples per process, name[pid]; a process that exec'd shows once per
     * program */
    size_t shown = t->procs.len < 8 ? t->procs.len : 8;
    if (t->nprocs > 1 || t->procs.len > 1)
        fprintf(stderr, "; %zu processes%s", t->nprocs, t->procs.len > t->nprocs ? " (with their execs)" : "");
    for (size_t i = 0; i < shown; i++) {
        const pk_record_proc *p = &PK_VEC_AT(&t->procs, pk_record_proc, i);
        fprintf(stderr, "%s %s[%" PRIu32 "] %" PRIu64, i ? "," : t->procs.len > 1 ? ":" : "; per process:",
                p->comm[0] ? p->comm : "?", p->pid, p->samples);
    }
    if (t->procs.len > shown)
        fprintf(stderr, ", %zu more", t->procs.len - shown);
    fprintf(stderr, "\n");
    if (t->samples == 0)
        fprintf(stderr, "pgokit record: warning: %s holds no samples (did the program run for less than "
                        "one sampling period?)\n", path);
}

typedef struct rec_args {
    pk_record_opts o;
    bool quiet, ip, hw, emu, period_set, freq_set, depth_set, seed_set, chains_set;
    char **cmd;
} rec_args;

/* Options; returns -1 to go on, else the exit status (help, usage error,
 * --print-exact). */
static int parse(int argc, char **argv, rec_args *a)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
        if (!strcmp(s, "--")) {
            i++;
            break;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(s, "-o") && next) {
            a->o.output = argv[++i];
        } else if (!strcmp(s, "--period") && next) {
            if (!parse_u64(argv[++i], &v) || v == 0)
                return pk_cli_usage("record", "--period wants a positive integer, not '%s'", argv[i]);
            a->o.period = v;
            a->period_set = true;
        } else if ((!strcmp(s, "--freq") || !strcmp(s, "-F")) && next) {
            if (!parse_u64(argv[++i], &v) || v == 0 || v > UINT32_MAX)
                return pk_cli_usage("record", "%s wants samples per second (a positive integer), not '%s'", s,
                                    argv[i]);
            a->o.freq = v;
            a->freq_set = true;
        } else if (!strcmp(s, "--lbr-depth") && next) {
            if (!parse_u64(argv[++i], &v) || v == 0 || v > 64)
                return pk_cli_usage("record", "--lbr-depth wants 1..64, not '%s'", argv[i]);
            a->o.lbr_depth = (unsigned)v;
            a->depth_set = true;
        } else if (!strcmp(s, "--seed") && next) {
            if (!parse_u64(argv[++i], &v))
                return pk_cli_usage("record", "--seed wants an integer, not '%s'", argv[i]);
            a->o.seed = v;
            a->seed_set = true;
        } else if ((!strcmp(s, "--pid") || !strcmp(s, "-p")) && next) {
            if (!parse_u64(argv[++i], &v) || v == 0 || v > INT_MAX)
                return pk_cli_usage("record", "%s wants a process id, not '%s'", s, argv[i]);
            a->o.pid = (int)v;
        } else if (!strcmp(s, "--duration") && next) {
            char *end;
            errno = 0;
            a->o.duration = strtod(argv[++i], &end);
            if (errno || end == argv[i] || *end || !(a->o.duration >= 0.001) || a->o.duration > 1e7)
                return pk_cli_usage("record", "--duration wants seconds > 0, not '%s'", argv[i]);
        } else if (!strcmp(s, "--exact-counts") && next) {
            a->o.exact_counts = argv[++i];
        } else if (!strcmp(s, "--print-exact") && next) {
            return print_exact(argv[i + 1]);
        } else if (!strcmp(s, "--emulate")) {
            a->emu = true;
        } else if (!strcmp(s, "--hardware")) {
            a->hw = true;
        } else if (!strcmp(s, "--ip")) {
            a->ip = true;
        } else if (!strcmp(s, "--no-callchain")) {
            a->o.callchain = false;
            a->chains_set = true;
        } else if (!strcmp(s, "--call-graph") && next) {
            const char *m = argv[++i];
            a->chains_set = true;
            if (!strcmp(m, "fp")) {
                a->o.dwarf_stack = 0;
            } else if (!strcmp(m, "dwarf")) {
                a->o.dwarf_stack = 8192;
            } else if (!strncmp(m, "dwarf,", 6) && parse_u64(m + 6, &v) && v >= 8 && v <= 65528) {
                a->o.dwarf_stack = (uint32_t)(v & ~7ull); /* perf takes multiples of 8 */
            } else {
                return pk_cli_usage("record", "--call-graph wants fp, dwarf or dwarf,BYTES (8 .. 65528), not '%s'",
                                    m);
            }
        } else if (!strcmp(s, "-q")) {
            a->quiet = true;
        } else if (s[0] == '-') {
            return pk_cli_usage("record", "unknown option '%s'", s);
        } else {
            break;   /* the command, without a "--" */
        }
    }
    a->cmd = i < argc ? argv + i : NULL;
    if (!a->cmd && !a->o.pid)
        return pk_cli_usage("record", "no command to record (pgokit record [options] -- CMD ARGS..., or --pid PID)");
    if (a->cmd && a->o.pid)
        return pk_cli_usage("record", "--pid attaches to a running process: give no command");
    if (a->o.duration > 0 && !a->o.pid)
        return pk_cli_usage("record", "--duration goes with --pid (a command is recorded until it ends)");
    if (a->hw && a->emu)
        return pk_cli_usage("record", "--emulate and --hardware exclude each other");
    if (a->hw && a->ip)
        return pk_cli_usage("record", "--hardware records LBR branch stacks; --ip alone samples IPs with perf");
    if (a->hw && a->o.exact_counts)
        return pk_cli_usage("record", "--exact-counts needs --emulate (the PMU only samples)");
    /* options only the emulator has bring it along, as --exact-counts always did */
    if (a->o.exact_counts || a->depth_set)
        a->emu = true;
    if (a->o.pid && a->emu)
        return pk_cli_usage("record", "--pid needs perf (--ip or --hardware): QEMU runs a program from its "
                                      "start and cannot attach to a process (--emulate, --exact-counts and "
                                      "--lbr-depth need it)");
    if (a->freq_set && (a->emu || a->hw))
        return pk_cli_usage("record", "--freq is for IP sampling with perf (--ip); %s counts events: use --period",
                            a->emu ? "emulation" : "--hardware");
    if (a->freq_set && a->period_set)
        return pk_cli_usage("record", "--freq and --period exclude each other");
    if (a->freq_set)
        a->ip = true;
    if (a->depth_set && a->ip)
        return pk_cli_usage("record", "--lbr-depth is for LBR recording; --ip records no branch stacks");
    if (a->seed_set && !a->emu)
        return pk_cli_usage("record", "--seed is for emulated recording (--emulate)");
    if (a->o.dwarf_stack && (a->emu || a->hw))
        return pk_cli_usage("record", "--call-graph dwarf is for IP sampling with perf (--ip): %s",
                            a->emu ? "the emulator records exact call chains" :
                                     "LBR unwinding reads frame-pointer chains");
    if (a->o.dwarf_stack && !a->o.callchain)
        return pk_cli_usage("record", "--call-graph dwarf and --no-callchain exclude each other");
    if (a->o.dwarf_stack)
        a->ip = true;
    return -1;
}

static int record(rec_args a);

int pk_cmd_record(int argc, char **argv)
{
    rec_args a;
    memset(&a, 0, sizeof a);
    a.o = (pk_record_opts){.output = "perf.data", .lbr_depth = 32, .callchain = true, .seed = 1};
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    a.o.quiet = a.quiet;
    if (pk_cli_check_output("record", a.o.output, argc, argv) ||
        pk_cli_check_output("record", a.o.exact_counts, argc, argv))
        return 1;
    if (strcmp(a.o.output, "-"))
        return record(a);
    /* -o -: pipe-mode perf.data on standard output, as perf record -o -
     * streams it. The recording goes to a private file first (emulated
     * processes are merged at the end, and record reads its file back),
     * then out; the program's and the recorder's own standard output go to
     * standard error meanwhile, so that nothing but the data reaches it. */
    char *path = NULL;
    int data_fd = pk_record_stream_begin(&path);
    if (data_fd < 0)
        return 1;
    a.o.output = path;
    rc = record(a);
    return pk_record_stream_end(data_fd, path, rc);
}

static void on_note(void *ctx, enum pk_record_note_level level, const char *line)
{
    const bool *quiet = ctx;
    if (level == PK_NOTE_PROGRESS && *quiet)
        return;
    /* file names and the program's arguments reach the terminal escaped */
    char buf[2048 * 4 + 1];
    pk_escape(buf, sizeof buf, line, strnlen(line, 2048), PK_ESC_KEEP_UTF8);
    fprintf(stderr, "pgokit record: %s\n", buf);
}

/* The processes that ran unrecorded (nothing when there are none). */
static void report_unrecorded(const pk_emu_outcome *res, const char *out)
{
    size_t n = res->missing.len;
    if (!n)
        return;
    fprintf(stderr, "pgokit record: warning: %zu process%s ran unrecorded (no samples of %s in %s):\n", n,
            n == 1 ? "" : "es", n == 1 ? "it" : "them", out);
    for (size_t i = 0; i < n && i < 20; i++) {
        const pk_record_unrec *u = &PK_VEC_AT(&res->missing, pk_record_unrec, i);
        fprintf(stderr, "pgokit record:   %s[%" PRIu32 "]: %s\n", u->comm[0] ? u->comm : "?", u->pid, u->why);
    }
    if (n > 20)
        fprintf(stderr, "pgokit record:   ... and %zu more\n", n - 20);
}

/* The recording itself, into a.o.output. */
static int record(rec_args a)
{
    pk_recording r;
    memset(&r, 0, sizeof r);
    r.o = a.o;
    r.cmd = a.cmd;
    r.ip = a.ip;
    r.emulate = a.emu;
    r.hardware = a.hw;
    r.period_set = a.period_set;
    r.freq_set = a.freq_set;
    r.depth_set = a.depth_set;
    r.chains_set = a.chains_set;
    r.note = on_note;
    r.note_ctx = &a.quiet;
    pk_err err;
    if (pk_record_execute(&r, &err) != 0) {
        int status = r.exit_status;
        if (r.usage_error)
            status = pk_cli_usage("record", "%s", err.msg);
        else
            pk_cli_fail("record", &err);
        if (r.emulated && !a.quiet)
            report_unrecorded(&r.emu, r.o.output);
        pk_recording_free(&r);
        return status;
    }
    if (!a.quiet) {
        if (r.tallied)
            print_summary(r.mode, r.o.output, &r.tally);
        else
            fprintf(stderr, "pgokit record: %s: wrote %s\n", pk_record_mode_name(r.mode), r.o.output);
        if (r.emulated)
            report_unrecorded(&r.emu, r.o.output);
        if (r.tallied && r.o.exact_counts)
            fprintf(stderr, "pgokit record: exact counts in %s\n", r.o.exact_counts);
        if (r.rate_now)
            fprintf(stderr, "pgokit record: warning: the kernel lowered kernel.perf_event_max_sample_rate to %"
                            PRIu32 " during the recording (sampling interrupts took too long): fewer samples "
                            "than %" PRIu64 " per CPU-second\n", r.rate_now, r.o.freq);
    }
    int status = r.exit_status;
    pk_recording_free(&r);
    return status;
}

/* cmd_record.c — `pgokit record`: sample a program, or attach to a running
 * process, into perf.data, in one of four modes (src/record/pmu.c chooses):
 * hardware LBR with `perf record -b` when the PMU records branch stacks, IP
 * samples with frame-pointer call chains through `perf record` on any Linux
 * machine, and the same two emulated under QEMU with the pgokit plugin
 * (plugin/lbr.c), which give exact branch data. Ctrl-C and SIGTERM end the
 * recording and keep the samples so far (record_run.c). Emulated, every
 * process of the run writes its own files into a session directory, merged
 * at the end (record_session.c). */
#include "cli/cli.h"
#include "cli/record_run.h"
#include "cli/record_stream.h"
#include "cli/record_session.h"
#include "record/record.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char pk_cmd_record_summary[] = "record samples of a program or a process: LBR or IP + call chains (perf.data)";

/* LBR modes: taken branches between samples. SQLite speedtest1 retires
 * 1.19e9 taken branches per native CPU-second (counted with --exact-counts,
 * see bench/record_cost.sh), so 20011 gives ~60,000 samples per native
 * second there, and still >= 10,000 for code with 5x fewer taken branches
 * (2e8/s, about one per 15 instructions). Prime, so it does not divide loop
 * trip counts; emulation also jitters it. */
#define DEFAULT_PERIOD 20011
/* Emulated IP mode: retired instructions between samples (jittered
 * uniformly in [N/2, 3N/2] by the plugin). At 1-3e9 instructions per native
 * second that is 100,000-300,000 samples per native second: IP samples say
 * less than a 32-entry branch stack each, so they come denser, for about
 * the same file size per second as the LBR default. Prime, like the above. */
#define DEFAULT_IP_PERIOD 10007
/* perf IP mode: samples per second of the program's CPU time. perf's own
 * default is 4000 Hz; 4999 keeps >= 4,000 samples per CPU-second even when
 * a fifth of the ticks land in the kernel (user-space sampling drops them),
 * and, prime, it does not run in step with work driven by the kernel tick
 * (HZ 100/250/1000) or by round-numbered timers. */
#define DEFAULT_FREQ 4999

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit record [-o FILE] [--ip] [--emulate | --hardware] [--freq HZ | --period N]\n"
            "                     [--lbr-depth N] [--no-callchain] [--exact-counts FILE] [--seed N] [-q]\n"
            "                     -- CMD ARGS...\n"
            "       pgokit record [-o FILE] [--ip | --hardware] [--freq HZ | --period N]\n"
            "                     --pid PID [--duration SECONDS]\n"
            "       pgokit record --print-exact FILE\n"
            "\n"
            "modes (one line on stderr says which one was chosen and why):\n"
            "  (none)              hardware LBR when the PMU records branch stacks, else --ip\n"
            "  --ip                IP samples + frame-pointer call chains with perf record\n"
            "                      (cycles:u where the PMU has it, else cpu-clock:u; user space\n"
            "                      only; build-ids in the MMAP2 records where the kernel can)\n"
            "  --hardware          LBR branch stacks + call chains from the PMU (perf record -b);\n"
            "                      fails without a PMU that records branch stacks\n"
            "  --emulate           exact LBR under qemu-x86_64 / qemu-aarch64 with the pgokit plugin (no PMU needed)\n"
            "  --emulate --ip      IP samples + call chains under qemu-x86_64 / qemu-aarch64\n"
            "\n"
            "  -o FILE             output perf.data (default perf.data; an existing one is kept as\n"
            "                      FILE.old). -o - streams pipe-mode perf.data to standard output\n"
            "                      (the program's own standard output then goes to standard error)\n"
            "  -F, --freq HZ       --ip with perf: samples per CPU-second (default %d; capped at\n"
            "                      kernel.perf_event_max_sample_rate). Implies --ip. Each sample\n"
            "                      costs the program ~20 us on a PMU-less VM (about 10 %% at 4999 Hz,\n"
            "                      bench/results/record-ip-overhead-*.md): lower it for production\n"
            "  --period N          events between samples: taken branches in the LBR modes\n"
            "                      (default %d), retired instructions with --emulate --ip\n"
            "                      (default %d), cycles or cpu-clock nanoseconds with --ip (instead\n"
            "                      of --freq). Emulation jitters it uniformly in [N/2, 3N/2]\n"
            "  --lbr-depth N       branch-stack entries per sample when emulated (1..64, default 32)\n"
            "  --no-callchain      no call chains\n"
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
            DEFAULT_FREQ, DEFAULT_PERIOD, DEFAULT_IP_PERIOD);
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

static char *find_plugin(void)
{
    const char *env = getenv("PGOKIT_LBR_PLUGIN");
    if (env && *env)
        return strdup(env);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *dir = dirname(exe);
    /* the build tree (build/pgokit, build/san/pgokit), then `make install`'s
     * layout: PREFIX/bin/pgokit and PREFIX/lib/pgokit/pgokit-lbr.so */
    const char *cands[] = {"%s/pgokit-lbr.so", "%s/../pgokit-lbr.so", "%s/../lib/pgokit/pgokit-lbr.so"};
    for (unsigned i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char *p = NULL;
        if (asprintf(&p, cands[i], dir) < 0)
            return NULL;
        char *real = realpath(p, NULL);
        free(p);
        if (real)
            return real;
    }
    return NULL;
}

/* qemu-x86_64 does not search PATH for the guest program: do it here. */
static char *resolve_path(const char *name)
{
    if (strchr(name, '/'))
        return strdup(name);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char *cand = NULL;
        if (asprintf(&cand, "%.*s/%s", (int)n, n ? path : ".", name) < 0)
            return NULL;
        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
        path += n + (path[n] == ':');
    }
    return strdup(name);
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

/* Fails before anything runs when the output cannot be created where it
 * goes (missing or read-only directory), rather than after the program ran
 * (QEMU reported that as "plugin failed to load"). perf.data must be a
 * regular file for perf (it seeks back to write the header); the plugin
 * also writes in place into a device or FIFO. */
static int check_output(const char *path, const char *what, bool regular_only)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "pgokit record: %s %s is a directory\n", what, path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            if (!regular_only)
                return 0;
            fprintf(stderr, "pgokit record: %s %s is not a regular file (perf writes its header last, "
                            "seeking back)\n", what, path);
            return -1;
        }
    }
    char *probe = NULL;
    if (asprintf(&probe, "%s.tmp.%d", path, (int)getpid()) < 0)
        return -1;
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    free(probe);
    if (fd < 0 && e != EEXIST) {
        char *copy = strdup(path);
        fprintf(stderr, "pgokit record: cannot create the %s %s in %s: %s (nothing was run)\n", what, path,
                copy ? dirname(copy) : ".", strerror(e));
        free(copy);
        return -1;
    }
    return 0;
}

/* As perf record does: an existing non-empty output is kept as "<out>.old"
 * (replacing an older one), here only once the new recording is ready to
 * take its place. Returns the .old name (malloc'd) when one was made. */
static char *keep_old_output(const char *out)
{
    struct stat st;
    char *old = NULL;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || asprintf(&old, "%s.old", out) < 0)
        return NULL;
    if (rename(out, old) != 0) {
        fprintf(stderr, "pgokit record: warning: cannot keep %s as %s: %s\n", out, old, strerror(errno));
        free(old);
        return NULL;
    }
    return old;
}

/* perf's temporary, done with (renamed or removed) */
static void untrack_free(char *perf_tmp)
{
    if (perf_tmp)
        pk_out_untrack_temporary(perf_tmp);
    free(perf_tmp);
}

static const char *signame(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
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
    bool quiet, ip, hw, emu, period_set, freq_set, depth_set, seed_set;
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

/* The recording itself, into a.o.output. */
static int record(rec_args a)
{
    int rc;
    pk_record_opts *o = &a.o;
    pk_pmu_info pmu;
    pk_record_probe_pmu(&pmu);
    enum pk_record_mode mode;
    char why[512];
    pk_err err;
    if (pk_record_choose_mode(a.ip, a.emu, a.hw, &pmu, &mode, why, sizeof why, &err) != 0) {
        fprintf(stderr, "pgokit record: %s\n", err.msg);
        return 1;
    }
    bool emulated = mode == PK_MODE_EMU_LBR || mode == PK_MODE_EMU_IP;
    if (!emulated && a.depth_set)
        return pk_cli_usage("record", "--lbr-depth is for emulated LBR (%s chosen: %s)", pk_record_mode_name(mode),
                            why);
    if (!a.period_set)
        o->period = mode == PK_MODE_EMU_IP ? DEFAULT_IP_PERIOD : DEFAULT_PERIOD;
    o->ip = mode == PK_MODE_EMU_IP;
    o->buildid_mmap = pmu.buildid_mmap;
    const char *event = pk_record_ip_event(&pmu);
    if (mode == PK_MODE_PERF_IP && !a.period_set) {
        if (!a.freq_set)
            o->freq = DEFAULT_FREQ;
        if (pmu.max_sample_rate && o->freq > pmu.max_sample_rate) {
            fprintf(stderr, "pgokit record: %" PRIu64 " Hz is above kernel.perf_event_max_sample_rate (%" PRIu32
                            "): sampling at %" PRIu32 " Hz (sysctl kernel.perf_event_max_sample_rate=N raises "
                            "the limit)\n", o->freq, pmu.max_sample_rate, pmu.max_sample_rate);
            o->freq = pmu.max_sample_rate;
        }
    }
    if (o->pid && kill(o->pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "pgokit record: --pid %d: no such process\n", o->pid);
        return 1;
    }
    if (a.cmd) {
        /* a missing program is this run's error, before any recorder starts
         * (perf would write an empty perf.data, QEMU a cryptic message) */
        char *exe = resolve_path(a.cmd[0]);
        int bad = !exe ? ENOMEM : access(exe, X_OK) != 0 ? errno : 0;
        free(exe);
        if (bad) {
            fprintf(stderr, "pgokit record: cannot run %s: %s\n", a.cmd[0], strerror(bad));
            return 127;
        }
    }
    if (check_output(o->output, "output", !emulated) != 0 ||
        (o->exact_counts && check_output(o->exact_counts, "exact-counts file", false) != 0))
        return 1;

    /* perf writes into a temporary beside the output (created here, as
     * every output's is, under a name nobody can plant a symlink at),
     * renamed once it is read back whole: a failed or killed run never
     * leaves a half file under the name asked. The plugin does the same
     * itself. The temporary goes if a signal ends pgokit first. */
    const char *final_out = o->output;
    char *perf_tmp = NULL;
    if (!emulated) {
        int fd = pk_out_create_temporary(final_out, &perf_tmp, &err);
        if (fd < 0)
            return pk_cli_fail("record", &err);
        close(fd);
        pk_out_track_temporary(perf_tmp);
        o->output = perf_tmp;
    }
    pk_vec av;
    char *plugin = NULL, *resolved = NULL, *session = NULL, comm[16];
    pk_exec_plan plan;
    memset(&plan, 0, sizeof plan);
    char details[256];
    if (mode == PK_MODE_HW_LBR) {
        rc = pk_record_hw_argv(pmu.vendor, pmu.amd_lbr_v2, o, a.cmd, &av, &err);
        snprintf(details, sizeof details, "perf record -b, a sample every %" PRIu64 " events%s", o->period,
                 o->callchain ? ", call chains" : "");
    } else if (mode == PK_MODE_PERF_IP) {
        rc = pk_record_perf_ip_argv(event, o, a.cmd, &av, &err);
        if (o->freq)
            snprintf(details, sizeof details, "perf record -e %s at %" PRIu64 " Hz%s", event, o->freq,
                     o->callchain ? ", frame-pointer call chains" : "");
        else
            snprintf(details, sizeof details, "perf record -e %s every %" PRIu64 " events%s", event, o->period,
                     o->callchain ? ", frame-pointer call chains" : "");
    } else {
        plugin = find_plugin();
        if (!plugin) {
            fprintf(stderr, "pgokit record: cannot find pgokit-lbr.so next to the pgokit binary "
                            "or in ../lib/pgokit/ (set PGOKIT_LBR_PLUGIN)\n");
            return 1;
        }
        const char *qemu = getenv("PGOKIT_QEMU");
        resolved = resolve_path(a.cmd[0]);
        /* what the kernel would run: a script runs its #! interpreter, which
         * QEMU does not do by itself */
        if (!resolved || pk_record_exec_plan(resolved, a.cmd, &plan, &err) != 0) {
            fprintf(stderr, "pgokit record: out of memory\n");
            free(plugin);
            free(resolved);
            return 1;
        }
        if (plan.how == PK_EXEC_FAILS && plan.err == ENOEXEC) {
            /* a script without "#!": /bin/sh runs it, as execvp (and so
             * perf record, and a shell) would */
            size_t n = 0;
            while (a.cmd[n])
                n++;
            char **sh = calloc(n + 2, sizeof *sh);
            if (sh) {
                sh[0] = "/bin/sh";
                sh[1] = resolved;
                memcpy(sh + 2, a.cmd + 1, n * sizeof *sh);   /* a.cmd[1..n], NULL included */
                if (pk_record_exec_plan("/bin/sh", sh, &plan, &err) != 0)
                    plan.how = PK_EXEC_FAILS;
            }
            free(sh);
        }
        if (plan.how != PK_EXEC_EMULATE) {
            if (plan.how == PK_EXEC_FAILS)
                fprintf(stderr, "pgokit record: cannot run %s: %s%s\n", a.cmd[0], strerror(plan.err),
                        plan.err == ENOEXEC ? " (neither an ELF program nor a #! script)" : "");
            else
                fprintf(stderr, "pgokit record: %s is %s: the emulators run x86-64 and aarch64 programs "
                                "only; record it with --ip (perf)\n", a.cmd[0], plan.why);
            free(plugin);
            free(resolved);
            return plan.how == PK_EXEC_FAILS ? 127 : 1;
        }
        /* the name the kernel gives the process: the file's, a script's too */
        const char *base = strrchr(a.cmd[0], '/');
        snprintf(comm, sizeof comm, "%s", base ? base + 1 : a.cmd[0]);
        o->comm = comm;
        o->argv0 = plan.argv[0];
        if (!(session = pk_emu_session_create(final_out))) {
            pk_record_exec_plan_free(&plan);
            free(plugin);
            free(resolved);
            return 1;
        }
        pk_out_track_directory(session);
        o->session_dir = session;
        char **prog = plan.argv;
        char *argv0 = prog[0];
        prog[0] = plan.elf;   /* qemu loads the ELF file; -0 gives argv[0] */
        /* the emulator of the program's machine (its ELF header says which);
         * a dynamic cross program finds its loader and libraries under the
         * target's sysroot unless QEMU_LD_PREFIX already says where, or the
         * host has the target's own libc (see pk_record_cross_sysroot) */
        const char *emu = pk_record_qemu_name(plan.machine);
        if (plan.machine == EM_AARCH64) {
            qemu = getenv("PGOKIT_QEMU_AARCH64");
            const char *prefix = getenv("QEMU_LD_PREFIX");
            if (plan.dynamic && !(prefix && *prefix))
                o->ld_prefix = pk_record_cross_sysroot(plan.machine, "");
        }
        /* every QEMU of the run (forks and execs included) watches this
         * pipe and dies with record: PR_SET_PDEATHSIG only reaches the
         * first one. Only record holds the write end (close-on-exec); the
         * read end is inherited. */
        int alive[2];
        if (pipe2(alive, O_CLOEXEC) == 0 && fcntl(alive[0], F_SETFD, 0) == 0)
            o->alive_fd = alive[0];
        rc = pk_record_qemu_argv(qemu && *qemu ? qemu : emu, plugin, o, prog, &av, &err);
        prog[0] = argv0;
        if (mode == PK_MODE_EMU_IP)
            snprintf(details, sizeof details, "%s, a sample every ~%" PRIu64 " instructions%s", emu,
                     o->period, o->callchain ? ", call chains" : "");
        else
            snprintf(details, sizeof details, "%s, a sample every ~%" PRIu64 " taken branches, "
                     "%u-entry branch stacks%s", emu, o->period, o->lbr_depth, o->callchain ? ", call chains" : "");
    }
    if (rc != 0) {
        if (session) {
            pk_out_untrack_directory(session);
            rmdir(session);
        }
        free(session);
        pk_record_exec_plan_free(&plan);
        free(plugin);
        free(resolved);
        if (perf_tmp)
            unlink(perf_tmp);
        untrack_free(perf_tmp);
        return pk_cli_fail("record", &err);
    }
    if (!a.quiet) {
        char attach[96] = "";
        if (o->pid && o->duration > 0)
            snprintf(attach, sizeof attach, ", attached to pid %d for %g s", o->pid, o->duration);
        else if (o->pid)
            snprintf(attach, sizeof attach, ", attached to pid %d until Ctrl-C", o->pid);
        fprintf(stderr, "pgokit record: %s (%s%s): %s\n", pk_record_mode_name(mode), details, attach, why);
    }

    pk_run_result r;
    char msg[256] = "";
    /* If pgokit is killed: perf stops on SIGTERM and ends the program it
     * started; QEMU is the program, and nothing would read what it writes. */
    int run_rc = pk_record_run_child((char **)av.data, emulated ? SIGKILL : SIGTERM, &r, msg, sizeof msg);
    pk_record_argv_free(&av);
    pk_record_exec_plan_free(&plan);
    free(plugin);
    free(resolved);
    if (run_rc != 0) {
        fprintf(stderr, "pgokit record: %s\n", msg);
        if (session) {
            pk_out_untrack_directory(session);
            rmdir(session);
        }
        free(session);
        if (perf_tmp)
            unlink(perf_tmp);
        untrack_free(perf_tmp);
        return 1;
    }
    if (r.signal && !a.quiet)
        fprintf(stderr, "pgokit record: stopped by %s\n", signame(r.signal));
    /* The status when the file is good: the program's, or the stop's. An
     * attach has no program status (perf ends 130 or 143 when stopped, or
     * when the process exits before --duration): 0. */
    int ok_status = o->pid ? 0 : r.signal ? 128 + r.signal : r.status;
    int fail_status = r.status && !r.signal ? r.status : 1;

    pk_record_tally t;
    pk_emu_outcome emu;
    memset(&emu, 0, sizeof emu);
    pk_vec_init(&emu.missing, sizeof(pk_record_unrec));
    if (!emulated) {
        struct stat st;
        if (stat(perf_tmp, &st) != 0 || st.st_size == 0) { /* created here, empty until perf writes */
            fprintf(stderr, "pgokit record: perf wrote no profile (it exited with status %d)\n", r.status);
            unlink(perf_tmp);
            untrack_free(perf_tmp);
            return fail_status;
        }
        if (pk_record_tally_file(perf_tmp, &t, &err) != 0) {
            fprintf(stderr, "pgokit record: perf left an unreadable file (removed): %s\n", err.msg);
            unlink(perf_tmp);
            untrack_free(perf_tmp);
            return 1;
        }
        if (!t.samples && r.status && !r.signal) {
            /* perf failed (it writes its header even when the workload or an
             * event could not start): an empty file would hide that */
            fprintf(stderr, "pgokit record: perf exited with status %d and recorded no sample: nothing "
                            "written\n", r.status);
            unlink(perf_tmp);
            untrack_free(perf_tmp);
            pk_record_tally_free(&t);
            return r.status;
        }
        free(keep_old_output(final_out));
        if (rename(perf_tmp, final_out) != 0) {
            fprintf(stderr, "pgokit record: rename %s to %s: %s\n", perf_tmp, final_out, strerror(errno));
            unlink(perf_tmp);
            untrack_free(perf_tmp);
            pk_record_tally_free(&t);
            return 1;
        }
        untrack_free(perf_tmp);
        o->output = final_out;
    } else {
        /* every process of the run wrote its own file: merged into one */
        char *old = keep_old_output(final_out);
        int frc = pk_emu_session_finish(session, final_out, o->exact_counts, r.status, a.quiet, &emu);
        pk_out_untrack_directory(session);
        free(session);
        if (frc != 0 && old && access(final_out, F_OK) != 0)
            rename(old, final_out); /* nothing new: the previous output stays where it was */
        free(old);
        if (frc != 0) {
            if (!a.quiet)
                pk_emu_outcome_report(&emu, final_out);
            pk_emu_outcome_free(&emu);
            return fail_status;
        }
        struct stat after;
        if (stat(final_out, &after) != 0 || !S_ISREG(after.st_mode)) {
            if (!a.quiet) {
                fprintf(stderr, "pgokit record: %s: wrote %s\n", pk_record_mode_name(mode), final_out);
                pk_emu_outcome_report(&emu, final_out);
            }
            pk_emu_outcome_free(&emu);
            return ok_status;
        }
        if (pk_record_tally_file(final_out, &t, &err) != 0) {
            fprintf(stderr, "pgokit record: the plugin wrote an unreadable file: %s\n", err.msg);
            pk_emu_outcome_free(&emu);
            return 1;
        }
    }
    if (!a.quiet) {
        print_summary(mode, final_out, &t);
        if (emulated)
            pk_emu_outcome_report(&emu, final_out);
        if (o->exact_counts)
            fprintf(stderr, "pgokit record: exact counts in %s\n", o->exact_counts);
        uint32_t now = pk_record_max_sample_rate();
        if (mode == PK_MODE_PERF_IP && o->freq && now && now < o->freq)
            fprintf(stderr, "pgokit record: warning: the kernel lowered kernel.perf_event_max_sample_rate to %"
                            PRIu32 " during the recording (sampling interrupts took too long): fewer samples "
                            "than %" PRIu64 " per CPU-second\n", now, o->freq);
    }
    pk_record_tally_free(&t);
    pk_emu_outcome_free(&emu);
    return ok_status;
}

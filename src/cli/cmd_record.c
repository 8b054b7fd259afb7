/* cmd_record.c — `pgokit record`: sample a program with branch stacks and
 * call chains into perf.data, on the PMU when it offers branch stacks, else
 * under QEMU with the pgokit LBR plugin (see plugin/lbr.c). */
#include "cli/cli.h"
#include "record/record.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char pk_cmd_record_summary[] = "run a program and record branch stacks + call chains (perf.data)";

/* Taken branches between samples. SQLite speedtest1 retires 1.19e9 taken
 * branches per native CPU-second (counted with --exact-counts, see
 * bench/record_cost.sh), so 20011 gives ~60,000 samples per native second
 * there, and still >= 10,000 for code with 5x fewer taken branches (2e8/s,
 * about one per 15 instructions). Prime, so it does not divide loop trip
 * counts; emulation also jitters it. */
#define DEFAULT_PERIOD 20011

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit record [-o FILE] [--period N] [--lbr-depth N] [--emulate | --hardware]\n"
            "                     [--no-callchain] [--exact-counts FILE] [--seed N] [-q] -- CMD ARGS...\n"
            "       pgokit record --print-exact FILE\n"
            "\n"
            "  -o FILE             output perf.data (default perf.data)\n"
            "  --period N          taken branches between samples (default %d; jittered\n"
            "                      uniformly in [N/2, 3N/2] when emulated)\n"
            "  --lbr-depth N       branch-stack entries per sample when emulated (1..64, default 32)\n"
            "  --emulate           run CMD under qemu-x86_64 with the pgokit LBR plugin\n"
            "  --hardware          use perf record with the PMU's branch stacks (fails without one)\n"
            "                      (default: hardware when the PMU offers branch stacks, else emulation)\n"
            "  --no-callchain      branch stacks only (no call chains)\n"
            "  --exact-counts FILE emulated only: also write the exact count of every taken branch\n"
            "                      and fall-through range of the run (format in src/record/record.h)\n"
            "  --print-exact FILE  print an exact-counts file readably and exit\n"
            "  --seed N            seed of the emulated sampling jitter (default 1)\n"
            "  -q                  quiet\n"
            "environment: PGOKIT_QEMU (default qemu-x86_64), PGOKIT_LBR_PLUGIN (default\n"
            "pgokit-lbr.so next to the pgokit binary, one directory up, or in ../lib/pgokit/)\n",
            DEFAULT_PERIOD);
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

static int run(char **argv, const char *what)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "pgokit record: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "pgokit record: cannot run %s (%s): %s\n", argv[0], what, strerror(errno));
        _exit(127);
    }
    /* The program owns the terminal's ^C; we only report how it ended. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
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

int pk_cmd_record(int argc, char **argv)
{
    pk_record_opts o = {.output = "perf.data", .period = DEFAULT_PERIOD, .lbr_depth = 32,
                        .callchain = true, .seed = 1};
    bool quiet = false, want_hw = false, want_emu = false;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") && next) {
            o.output = argv[++i];
        } else if (!strcmp(a, "--period") && next) {
            if (!parse_u64(argv[++i], &v) || v == 0)
                return pk_cli_usage("record", "--period wants a positive integer, not '%s'", argv[i]);
            o.period = v;
        } else if (!strcmp(a, "--lbr-depth") && next) {
            if (!parse_u64(argv[++i], &v) || v == 0 || v > 64)
                return pk_cli_usage("record", "--lbr-depth wants 1..64, not '%s'", argv[i]);
            o.lbr_depth = (unsigned)v;
        } else if (!strcmp(a, "--seed") && next) {
            if (!parse_u64(argv[++i], &v))
                return pk_cli_usage("record", "--seed wants an integer, not '%s'", argv[i]);
            o.seed = v;
        } else if (!strcmp(a, "--exact-counts") && next) {
            o.exact_counts = argv[++i];
        } else if (!strcmp(a, "--print-exact") && next) {
            return print_exact(argv[i + 1]);
        } else if (!strcmp(a, "--emulate")) {
            want_emu = true;
        } else if (!strcmp(a, "--hardware")) {
            want_hw = true;
        } else if (!strcmp(a, "--no-callchain")) {
            o.callchain = false;
        } else if (!strcmp(a, "-q")) {
            quiet = true;
        } else if (a[0] == '-') {
            return pk_cli_usage("record", "unknown option '%s'", a);
        } else {
            break;   /* the command, without a "--" */
        }
    }
    if (i >= argc)
        return pk_cli_usage("record", "no command to record (pgokit record [options] -- CMD ARGS...)");
    if (want_hw && want_emu)
        return pk_cli_usage("record", "--emulate and --hardware exclude each other");
    if (want_hw && o.exact_counts)
        return pk_cli_usage("record", "--exact-counts needs --emulate (the PMU only samples)");
    char **cmd = argv + i;

    bool hw = false;
    pk_pmu_info pmu;
    if (!want_emu && !o.exact_counts) {
        pk_record_probe_pmu(&pmu);
        if (want_hw && !pmu.branch_stack) {
            fprintf(stderr, "pgokit record: --hardware: %s\n", pmu.reason);
            return 1;
        }
        hw = pmu.branch_stack;
    }

    pk_err err;
    pk_vec av;
    char *plugin = NULL, *resolved = NULL;
    if (hw) {
        if (pk_record_hw_argv(pmu.vendor, pmu.amd_lbr_v2, &o, cmd, &av, &err) != 0)
            return pk_cli_fail("record", &err);
    } else {
        plugin = find_plugin();
        if (!plugin) {
            fprintf(stderr, "pgokit record: cannot find pgokit-lbr.so next to the pgokit binary "
                            "or in ../lib/pgokit/ (set PGOKIT_LBR_PLUGIN)\n");
            return 1;
        }
        const char *qemu = getenv("PGOKIT_QEMU");
        resolved = resolve_path(cmd[0]);
        if (!resolved) {
            free(plugin);
            return 1;
        }
        cmd[0] = resolved;
        int rc = pk_record_qemu_argv(qemu && *qemu ? qemu : "qemu-x86_64", plugin, &o, cmd, &av, &err);
        if (rc != 0) {
            free(plugin);
            free(resolved);
            return pk_cli_fail("record", &err);
        }
    }
    if (!quiet)
        fprintf(stderr, "pgokit record: %s mode, period %" PRIu64 "%s\n", hw ? "hardware" : "emulated",
                o.period, hw ? "" : " (QEMU user-mode emulation)");
    struct stat before;
    bool existed = stat(o.output, &before) == 0;
    int status = run((char **)av.data, hw ? "perf" : "qemu");
    pk_record_argv_free(&av);
    free(plugin);
    free(resolved);
    if (status < 0)
        return 1;
    struct stat after;
    if (stat(o.output, &after) != 0 ||
        (existed && after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
         after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_ino == before.st_ino)) {
        fprintf(stderr, "pgokit record: no profile was written to %s (the command exited with %d)\n",
                o.output, status);
        return status ? status : 1;
    }
    if (!quiet)
        fprintf(stderr, "pgokit record: wrote %s (%lld bytes)%s%s\n", o.output, (long long)after.st_size,
                o.exact_counts ? " and " : "", o.exact_counts ? o.exact_counts : "");
    return status;
}

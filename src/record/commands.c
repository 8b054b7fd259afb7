/* commands.c — PMU probing and the command lines `pgokit record` runs:
 * `perf record` with branch stacks on real hardware, `qemu-x86_64` with our
 * plugin otherwise. The builders are pure so each vendor's line is testable
 * on a machine without that vendor's PMU. */
#include "record/record.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

void pk_record_probe_pmu(pk_pmu_info *info)
{
    memset(info, 0, sizeof *info);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "vendor_id", 9)) {
                if (strstr(line, "GenuineIntel"))
                    info->vendor = PK_VENDOR_INTEL;
                else if (strstr(line, "AuthenticAMD"))
                    info->vendor = PK_VENDOR_AMD;
            } else if (!strncmp(line, "flags", 5)) {
                if (strstr(line, " amd_lbr_v2"))
                    info->amd_lbr_v2 = true;
                break;
            }
        }
        fclose(f);
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.sample_period = 100003;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK;
    a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd >= 0) {
        close((int)fd);
        info->branch_stack = true;
        return;
    }
    int e = errno;
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
        snprintf(info->reason, sizeof info->reason,
                 "this CPU has no PMU that records branch stacks (perf_event_open: %s); "
                 "use --emulate", strerror(e));
    else if (e == EACCES || e == EPERM)
        snprintf(info->reason, sizeof info->reason,
                 "perf_event_open refused a branch-stack event (%s): check "
                 "/proc/sys/kernel/perf_event_paranoid", strerror(e));
    else
        snprintf(info->reason, sizeof info->reason, "perf_event_open for a branch-stack event failed: %s",
                 strerror(e));
}

static int push(pk_vec *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int push(pk_vec *v, const char *fmt, ...)
{
    char **slot = pk_vec_push(v);
    if (!slot)
        return -1;
    if (!fmt)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(slot, fmt, ap);
    va_end(ap);
    if (r < 0) {
        *slot = NULL;
        return -1;
    }
    return 0;
}

static int push_cmd(pk_vec *v, char *const *cmd)
{
    for (; *cmd; cmd++)
        if (push(v, "%s", *cmd) != 0)
            return -1;
    return push(v, NULL) == 0 ? 0 : -1;   /* the NULL terminator */
}

void pk_record_argv_free(pk_vec *argv)
{
    for (size_t i = 0; i < argv->len; i++)
        free(PK_VEC_AT(argv, char *, i));
    pk_vec_free(argv);
}

int pk_record_hw_argv(enum pk_cpu_vendor vendor, bool amd_lbr_v2, const pk_record_opts *o,
                      char *const *cmd, pk_vec *argv, pk_err *err)
{
    pk_vec_init(argv, sizeof(char *));
    /* Intel: sample on retired taken branches with precise IPs, as the CSSPGO
     * paper does. AMD Zen 4 (LbrExtV2): retired taken branches; the AMD
     * event has no precise modifier (branch stacks come from the LBR, not from
     * IBS). Other CPUs: cycles, the only event every PMU names the same. */
    const char *event = vendor == PK_VENDOR_INTEL ? "br_inst_retired.near_taken:uppp"
                        : vendor == PK_VENDOR_AMD && amd_lbr_v2 ? "ex_ret_brn_tkn:u"
                                                                : "cycles:u";
    if (push(argv, "perf") || push(argv, "record") || push(argv, "-e") || push(argv, "%s", event) ||
        push(argv, "-c") || push(argv, "%llu", (unsigned long long)o->period) || push(argv, "-j") ||
        push(argv, "any,u") || push(argv, "-o") || push(argv, "%s", o->output))
        goto oom;
    if (o->callchain && (push(argv, "--call-graph") || push(argv, "fp")))
        goto oom;
    if (push(argv, "--") || push_cmd(argv, cmd))
        goto oom;
    return 0;
oom:
    pk_record_argv_free(argv);
    return pk_err_set(err, "out of memory building the perf command");
}

int pk_record_qemu_argv(const char *qemu, const char *plugin, const pk_record_opts *o,
                        char *const *cmd, pk_vec *argv, pk_err *err)
{
    pk_vec_init(argv, sizeof(char *));
    const char *paths[] = {plugin, o->output, o->exact_counts};
    for (unsigned i = 0; i < 3; i++)
        if (paths[i] && strchr(paths[i], ','))
            return pk_err_set(err, "%s: QEMU plugin arguments cannot hold a ','; rename the path",
                              paths[i]);
    /* comm as the kernel keeps it: at most 15 bytes; ',' would end the option */
    char comm[16];
    const char *base = o->comm;
    if (!base) {
        base = strrchr(cmd[0], '/');
        base = base ? base + 1 : cmd[0];
    }
    snprintf(comm, sizeof comm, "%s", base);
    for (char *c = comm; *c; c++)
        if (*c == ',' || *c == '=')
            *c = '_';
    /* The program's real path lets the plugin announce its mappings before
     * any sample (optional: skipped when the path cannot ride in the option). */
    char *exe = realpath(cmd[0], NULL);
    if (exe && strchr(exe, ',')) {
        free(exe);
        exe = NULL;
    }
    char *spec = NULL;
    int r = asprintf(&spec, "%s,out=%s,period=%llu,depth=%u,callchain=%s,seed=%llu,comm=%s%s%s%s%s", plugin,
                     o->output, (unsigned long long)o->period, o->lbr_depth, o->callchain ? "on" : "off",
                     (unsigned long long)o->seed, comm, exe ? ",exe=" : "", exe ? exe : "",
                     o->exact_counts ? ",exact=" : "", o->exact_counts ? o->exact_counts : "");
    free(exe);
    if (r < 0)
        return pk_err_set(err, "out of memory building the qemu command");
    int bad = push(argv, "%s", qemu) || push(argv, "-plugin") || push(argv, "%s", spec) ||
              push_cmd(argv, cmd);
    free(spec);
    if (bad) {
        pk_record_argv_free(argv);
        return pk_err_set(err, "out of memory building the qemu command");
    }
    return 0;
}

/* commands.c — the command lines `pgokit record` runs: `perf record` with
 * branch stacks on real hardware, `perf record` of IP samples with call
 * chains, `qemu-x86_64` with our plugin. The builders are pure so each
 * vendor's line is testable on a machine without that vendor's PMU. */
#include "record/record.h"

#include <elf.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* What both perf command lines end with: output, call chains, build-ids,
 * then the process to attach to or the command to run. */
static int push_perf_tail(pk_vec *argv, const pk_record_opts *o, char *const *cmd)
{
    if (push(argv, "-o") || push(argv, "%s", o->output))
        return -1;
    if (o->callchain && (push(argv, "--call-graph") ||
                         (o->dwarf_stack ? push(argv, "dwarf,%u", o->dwarf_stack) : push(argv, "fp"))))
        return -1;
    /* --buildid-mmap: the kernel puts each mapping's build-id into its MMAP2
     * record (perf synthesizes them for mappings that exist at attach), so
     * perf skips its end-of-run pass over every sample. Without it, that
     * pass writes the BUILD_ID feature; the build-id cache (copies of every
     * hit binary in ~/.debug) is of no use to pgokit and is skipped. */
    if (push(argv, "%s", o->buildid_mmap ? "--buildid-mmap" : "--no-buildid-cache"))
        return -1;
    /* perf's start-up otherwise synthesizes an event for every BPF program
     * loaded in the kernel: 0.9 s of its 1.3 s start here, for kernel symbols
     * a user-space recording never needs */
    if (push(argv, "--no-bpf-event"))
        return -1;
    if (o->quiet && push(argv, "-q"))
        return -1;
    if (o->pid > 0) {
        if (push(argv, "-p") || push(argv, "%d", o->pid))
            return -1;
        /* perf starts its workload once the events are enabled, so `sleep`
         * times the recording itself, not perf's start-up (which takes a
         * good part of a second on a busy machine); perf stops when the
         * workload ends, or earlier when the process exits */
        if (o->duration > 0 && (push(argv, "--") || push(argv, "sleep") || push(argv, "%.3f", o->duration)))
            return -1;
        return push(argv, NULL);   /* the NULL terminator */
    }
    if (push(argv, "--"))
        return -1;
    return push_cmd(argv, cmd);
}

int pk_record_hw_argv(enum pk_cpu_vendor vendor, bool amd_lbr_v2, const pk_record_opts *o,
                      char *const *cmd, pk_vec *argv, pk_err *err)
{
    pk_vec_init(argv, sizeof(char *));
    /* Intel: sample on retired taken branches with precise IPs, as the CSSPGO
     * paper does. AMD Zen 4 (LbrExtV2): retired taken branches; the AMD
     * event has no precise modifier (branch stacks come from the LBR, not from
     * IBS). Arm (BRBE, Linux 6.17+): the driver fills a branch stack on any
     * sampling event and core PMUs name their taken-branch events
     * differently, so cycles, as for other CPUs: the only event every PMU
     * names the same. The rest of the line (-j any,u, frame-pointer call
     * chains) is the same for all. */
    const char *event = vendor == PK_VENDOR_INTEL ? "br_inst_retired.near_taken:uppp"
                        : vendor == PK_VENDOR_AMD && amd_lbr_v2 ? "ex_ret_brn_tkn:u"
                                                                : "cycles:u";
    if (push(argv, "perf") || push(argv, "record") || push(argv, "-e") || push(argv, "%s", event) ||
        push(argv, "-c") || push(argv, "%llu", (unsigned long long)o->period) || push(argv, "-j") ||
        push(argv, "any,u") || push_perf_tail(argv, o, cmd))
        goto oom;
    return 0;
oom:
    pk_record_argv_free(argv);
    return pk_err_set(err, "out of memory building the perf command");
}

int pk_record_perf_ip_argv(const char *event, const pk_record_opts *o, char *const *cmd, pk_vec *argv,
                           pk_err *err)
{
    pk_vec_init(argv, sizeof(char *));
    /* A frequency makes the kernel adjust the period of cycles to the rate
     * asked; cpu-clock turns it into a fixed period of 1e9/freq ns of the
     * task's CPU time. Either way about freq samples per CPU-second. */
    if (push(argv, "perf") || push(argv, "record") || push(argv, "-e") || push(argv, "%s", event))
        goto oom;
    if (o->freq ? push(argv, "-F") || push(argv, "%llu", (unsigned long long)o->freq)
                : push(argv, "-c") || push(argv, "%llu", (unsigned long long)o->period))
        goto oom;
    if (push_perf_tail(argv, o, cmd))
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
    const char *paths[] = {plugin, o->session_dir ? o->session_dir : o->output, o->exact_counts};
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
    /* IP mode: ip=N (retired instructions between samples) instead of the
     * taken-branch period and the ring depth, which the plugin then ignores. */
    char sampling[64];
    if (o->ip)
        snprintf(sampling, sizeof sampling, "ip=%llu", (unsigned long long)o->period);
    else
        snprintf(sampling, sizeof sampling, "period=%llu,depth=%u", (unsigned long long)o->period,
                 o->lbr_depth);
    /* With a session directory every process writes its own files there
     * (exact=on: counts too), and record merges them. */
    const char *exact = o->session_dir && o->exact_counts ? "on" : o->exact_counts;
    if (o->ld_prefix && strchr(o->ld_prefix, ','))
        return pk_err_set(err, "%s: QEMU plugin arguments cannot hold a ','; rename the path", o->ld_prefix);
    /* sysroot= tells the plugin the -L to give the emulator of an exec'd program */
    char alive[32] = "";
    if (o->alive_fd > 0)
        snprintf(alive, sizeof alive, ",alive=%d", o->alive_fd);
    int r = asprintf(&spec, "%s,%s=%s,%s,callchain=%s,seed=%llu,comm=%s%s%s%s%s%s%s%s", plugin,
                     o->session_dir ? "dir" : "out", o->session_dir ? o->session_dir : o->output, sampling,
                     o->callchain ? "on" : "off", (unsigned long long)o->seed, comm, exe ? ",exe=" : "",
                     exe ? exe : "", exact ? ",exact=" : "", exact ? exact : "", o->ld_prefix ? ",sysroot=" : "",
                     o->ld_prefix ? o->ld_prefix : "", alive);
    free(exe);
    if (r < 0)
        return pk_err_set(err, "out of memory building the qemu command");
    int bad = push(argv, "%s", qemu) || (o->ld_prefix && (push(argv, "-L") || push(argv, "%s", o->ld_prefix))) ||
              push(argv, "-plugin") || push(argv, "%s", spec) ||
              (o->argv0 && (push(argv, "-0") || push(argv, "%s", o->argv0))) ||
              /* qemu takes a program name starting with '-' for an option */
              (cmd[0][0] == '-' ? push(argv, "./%s", cmd[0]) || push_cmd(argv, cmd + 1) : push_cmd(argv, cmd));
    free(spec);
    if (bad) {
        pk_record_argv_free(argv);
        return pk_err_set(err, "out of memory building the qemu command");
    }
    return 0;
}

const char *pk_record_qemu_name(uint16_t machine)
{
    return machine == EM_AARCH64 ? "qemu-aarch64" : "qemu-x86_64";
}

const char *pk_record_cross_sysroot(uint16_t machine, const char *host_root)
{
    if (machine != EM_AARCH64)
        return NULL;
    /* A host with the target's own multiarch libc (libc6:arm64) has its
     * loader at the path the program asks for, and the host's ld.so.cache
     * (which the guest reads) lists that libc's libraries. A -L prefix would
     * pair the cross package's loader with them, two builds of glibc that
     * must not meet (a forked child hangs): use the host's set as it is. */
    char loader[PATH_MAX];
    snprintf(loader, sizeof loader, "%s/lib/ld-linux-aarch64.so.1", host_root ? host_root : "");
    if (access(loader, F_OK) == 0)
        return NULL;
    /* Debian's cross packages (libc6-dev-arm64-cross) install here */
    return "/usr/aarch64-linux-gnu";
}

int pk_record_spe_argv(const char *spe_pmu, const pk_record_opts *o, char *const *cmd, pk_vec *argv,
                       pk_err *err)
{
    pk_vec_init(argv, sizeof(char *));
    /* jitter=1 randomises the interval (as the emulator's jittered periods
     * do: no aliasing with loops); ts_enable=1 gives the records times */
    pk_record_opts spe = *o;
    spe.callchain = false;
    if (push(argv, "perf") || push(argv, "record") || push(argv, "-e") ||
        push(argv, "%s/branch_filter=1,jitter=1,ts_enable=1/u", spe_pmu) || push(argv, "-c") ||
        push(argv, "%llu", (unsigned long long)o->period) || push_perf_tail(argv, &spe, cmd)) {
        pk_record_argv_free(argv);
        return pk_err_set(err, "out of memory building the perf command");
    }
    return 0;
}

/* pmu.c — what this machine's PMU and kernel offer `pgokit record`, and the
 * recording mode that follows from them and the user's flags. The probes
 * open (and close at once) disabled events on this process: no sample is
 * ever taken. */
#include "record/record.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *pk_record_mode_name(enum pk_record_mode m)
{
    switch (m) {
    case PK_MODE_HW_LBR:
        return "hardware LBR";
    case PK_MODE_PERF_IP:
        return "IP sampling";
    case PK_MODE_EMU_LBR:
        return "emulated LBR";
    case PK_MODE_EMU_IP:
        return "emulated IP sampling";
    }
    return "?";
}

/* errno of perf_event_open for attr on this thread (0: it opened). */
static int try_open(struct perf_event_attr *a)
{
    a->size = sizeof *a;
    a->disabled = 1;
    long fd = syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
    if (fd < 0)
        return errno;
    close((int)fd);
    return 0;
}

uint32_t pk_record_max_sample_rate(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
    if (!f)
        return 0;
    unsigned long v = 0;
    if (fscanf(f, "%lu", &v) != 1 || v > UINT32_MAX)
        v = 0;
    fclose(f);
    return (uint32_t)v;
}

enum pk_cpu_vendor pk_record_cpuinfo_vendor(const char *text, bool *amd_lbr_v2)
{
    enum pk_cpu_vendor v = PK_VENDOR_UNKNOWN;
    *amd_lbr_v2 = false;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t len = strcspn(line, "\n");
        if (!strncmp(line, "vendor_id", 9)) {
            if (memmem(line, len, "GenuineIntel", 12))
                v = PK_VENDOR_INTEL;
            else if (memmem(line, len, "AuthenticAMD", 12))
                v = PK_VENDOR_AMD;
        } else if (!strncmp(line, "CPU implementer", 15)) {
            return PK_VENDOR_ARM;
        } else if (!strncmp(line, "flags", 5)) {
            *amd_lbr_v2 = memmem(line, len, " amd_lbr_v2", 11) != NULL;
            break;
        }
    }
    return v;
}

bool pk_record_find_spe_pmu(const char *devices_dir, char *out, size_t out_size)
{
    /* arm_spe_0 on every kernel so far; the lowest N if there are several */
    for (int i = 0; i < 8; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/arm_spe_%d", devices_dir, i);
        if (access(path, F_OK) == 0) {
            snprintf(out, out_size, "arm_spe_%d", i);
            return true;
        }
    }
    if (out_size)
        out[0] = 0;
    return false;
}

void pk_record_probe_pmu(pk_pmu_info *info)
{
    memset(info, 0, sizeof *info);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        /* the first processor's lines are enough */
        char text[16384];
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        info->vendor = pk_record_cpuinfo_vendor(text, &info->amd_lbr_v2);
    }
    if (info->vendor == PK_VENDOR_ARM)
        pk_record_find_spe_pmu("/sys/bus/event_source/devices", info->spe_pmu, sizeof info->spe_pmu);
    info->max_sample_rate = pk_record_max_sample_rate();

    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.sample_period = PK_RECORD_DEFAULT_INSN_PERIOD;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    info->instructions = try_open(&a) == 0;

    /* What `perf record --buildid-mmap` checks before it starts. */
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.exclude_kernel = 1;
    a.mmap2 = 1;
    a.build_id = 1;
    info->buildid_mmap = try_open(&a) == 0;

    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.sample_period = 100003;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK;
    a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int e = try_open(&a);
    if (e == 0) {
        info->branch_stack = true;
        return;
    }
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
        snprintf(info->reason, sizeof info->reason,
                 "this CPU has no PMU that records branch stacks (perf_event_open: %s)", strerror(e));
    else if (e == EACCES || e == EPERM)
        snprintf(info->reason, sizeof info->reason,
                 "perf_event_open refused a branch-stack event (%s): check "
                 "/proc/sys/kernel/perf_event_paranoid", strerror(e));
    else
        snprintf(info->reason, sizeof info->reason, "perf_event_open for a branch-stack event failed: %s",
                 strerror(e));
    /* an arm64 core without BRBE may still sample branches with SPE: say so,
     * since pgokit builds that command line but cannot read its AUX data yet */
    if (info->spe_pmu[0]) {
        size_t n = strlen(info->reason);
        snprintf(info->reason + n, sizeof info->reason - n, " (the CPU has SPE, %s, which pgokit does not read yet)",
                 info->spe_pmu);
    }
}

int pk_record_choose_mode(bool ip, bool emulate, bool hardware, const pk_pmu_info *pmu,
                          enum pk_record_mode *mode, char *why, size_t why_size, pk_err *err)
{
    if (emulate) {
        *mode = ip ? PK_MODE_EMU_IP : PK_MODE_EMU_LBR;
        snprintf(why, why_size, "asked with --emulate%s", ip ? " --ip" : "");
        return 0;
    }
    if (hardware) {
        if (!pmu->branch_stack)
            return pk_err_set(err, "--hardware: %s; --emulate records LBR under QEMU, --ip records "
                                   "IP samples", pmu->reason);
        *mode = PK_MODE_HW_LBR;
        snprintf(why, why_size, "asked with --hardware");
        return 0;
    }
    if (ip) {
        *mode = PK_MODE_PERF_IP;
        snprintf(why, why_size, "asked with --ip");
        return 0;
    }
    if (pmu->branch_stack) {
        *mode = PK_MODE_HW_LBR;
        snprintf(why, why_size, "no mode flag, and the PMU records branch stacks (--ip for IP samples)");
    } else {
        *mode = PK_MODE_PERF_IP;
        snprintf(why, why_size, "no mode flag, and %s; --emulate records LBR under QEMU", pmu->reason);
    }
    return 0;
}

const char *pk_record_ip_event(const pk_pmu_info *pmu)
{
    return pmu->instructions ? "instructions:u" : "cpu-clock:u";
}

void pk_record_ip_rate(enum pk_record_mode mode, const pk_pmu_info *pmu, bool period_set, bool freq_set,
                       pk_record_opts *o)
{
    if (period_set)
        return;
    if (mode == PK_MODE_PERF_IP && freq_set)
        return;
    if (mode == PK_MODE_PERF_IP && pmu->instructions) {
        o->freq = 0;
        o->period = PK_RECORD_DEFAULT_INSN_PERIOD;
    } else if (mode == PK_MODE_PERF_IP) {
        o->freq = PK_RECORD_DEFAULT_FREQ;
    } else {
        o->period = mode == PK_MODE_EMU_IP ? PK_RECORD_DEFAULT_IP_PERIOD : PK_RECORD_DEFAULT_PERIOD;
    }
}

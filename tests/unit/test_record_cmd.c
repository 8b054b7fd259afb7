/* test_record_cmd.c — the command lines `pgokit record` runs (per vendor,
 * per mode), the mode it picks for flags and PMU, and the sample tally it
 * closes with. */
#include "test.h"
#include "perf/perf_data.h"
#include "record/record.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *joined(pk_vec *v)
{
    static char buf[2048];
    buf[0] = 0;
    for (size_t i = 0; i < v->len; i++) {
        char *s = PK_VEC_AT(v, char *, i);
        if (!s) {
            CHECK(i + 1 == v->len);   /* only the terminator is NULL */
            break;
        }
        if (i)
            strcat(buf, " ");
        strcat(buf, s);
    }
    return buf;
}

static char *cmd[] = {"./app", "-x", "in put", NULL};

TEST(hw_intel_taken_branches_precise)
{
    pk_record_opts o = {.output = "out.data", .period = 200003, .callchain = true};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_INTEL, false, &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e br_inst_retired.near_taken:uppp -c 200003 -j any,u -o out.data "
                          "--call-graph fp --no-buildid-cache --no-bpf-event -- ./app -x in put");
    CHECK(PK_VEC_AT(&v, char *, v.len - 1) == NULL);
    pk_record_argv_free(&v);
}

TEST(hw_amd_zen4_lbr_v2)
{
    pk_record_opts o = {.output = "p.data", .period = 10007, .callchain = true};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_AMD, true, &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e ex_ret_brn_tkn:u -c 10007 -j any,u -o p.data --call-graph fp "
                          "--no-buildid-cache --no-bpf-event -- ./app -x in put");
    pk_record_argv_free(&v);
}

TEST(hw_other_cpu_and_no_callchain)
{
    pk_record_opts o = {.output = "p.data", .period = 5, .callchain = false};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_AMD, false, &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e cycles:u -c 5 -j any,u -o p.data --no-buildid-cache --no-bpf-event "
                          "-- ./app -x in put");
    pk_record_argv_free(&v);
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_UNKNOWN, false, &o, cmd, &v, &e), &e);
    CHECK(strstr(joined(&v), "-e cycles:u ") != NULL);
    pk_record_argv_free(&v);
}

TEST(qemu_command_carries_every_option)
{
    pk_record_opts o = {.output = "/t/p.data", .period = 999, .lbr_depth = 16, .callchain = false,
                        .exact_counts = "/t/e.bin", .seed = 7};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_qemu_argv("qemu-x86_64", "/b/pgokit-lbr.so", &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "qemu-x86_64 -plugin /b/pgokit-lbr.so,out=/t/p.data,period=999,depth=16,"
                          "callchain=off,seed=7,comm=app,exact=/t/e.bin ./app -x in put");
    pk_record_argv_free(&v);
}

/* An aarch64 program: qemu-aarch64 with the cross sysroot as -L, which the
 * plugin also gets (sysroot=) for the emulator of an exec'd program. */
TEST(qemu_command_aarch64_sysroot)
{
    pk_record_opts o = {.output = "/t/p.data", .period = 999, .lbr_depth = 16, .callchain = true, .seed = 7,
                        .ld_prefix = pk_record_cross_sysroot(183, "/nonexistent-root")};
    pk_vec v;
    pk_err e;
    CHECK_STR(pk_record_qemu_name(183), "qemu-aarch64");
    CHECK_STR(pk_record_qemu_name(62), "qemu-x86_64");
    CHECK(pk_record_cross_sysroot(62, "/nonexistent-root") == NULL);
    CHECK_OK(pk_record_qemu_argv(pk_record_qemu_name(183), "/b/pgokit-lbr.so", &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "qemu-aarch64 -L /usr/aarch64-linux-gnu -plugin /b/pgokit-lbr.so,out=/t/p.data,"
                          "period=999,depth=16,callchain=on,seed=7,comm=app,sysroot=/usr/aarch64-linux-gnu "
                          "./app -x in put");
    pk_record_argv_free(&v);
    o.ld_prefix = "/a,b";
    CHECK(pk_record_qemu_argv("q", "/p.so", &o, cmd, &v, &e) == -1);
    CHECK(strstr(e.msg, "/a,b") != NULL);
}

/* A host with libc6:arm64 installed: its loader at /lib/ld-linux-aarch64.so.1
 * and the host's ld.so.cache listing its libraries; -L with the cross
 * sysroot would mix two glibc builds (a forked child hung), so no prefix. */
TEST(aarch64_sysroot_host_multiarch)
{
    char root[] = "/tmp/pk-sysroot.XXXXXX", lib[64], loader[96];
    CHECK(mkdtemp(root) != NULL);
    CHECK_STR(pk_record_cross_sysroot(183, root), "/usr/aarch64-linux-gnu");
    snprintf(lib, sizeof lib, "%s/lib", root);
    snprintf(loader, sizeof loader, "%s/ld-linux-aarch64.so.1", lib);
    CHECK(mkdir(lib, 0700) == 0);
    FILE *f = fopen(loader, "w");
    CHECK(f != NULL);
    fclose(f);
    CHECK(pk_record_cross_sysroot(183, root) == NULL);
    CHECK(pk_record_cross_sysroot(62, root) == NULL);
    unlink(loader);
    rmdir(lib);
    rmdir(root);
}

/* arm64 hosts: BRBE fills perf's branch stacks like LBR (cycles as the
 * sampling event), SPE samples branches into the AUX area. */
TEST(arm64_brbe_and_spe_commands)
{
    pk_record_opts o = {.output = "p.data", .period = 20011, .callchain = true, .buildid_mmap = true};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_ARM, false, &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e cycles:u -c 20011 -j any,u -o p.data --call-graph fp --buildid-mmap "
                          "--no-bpf-event -- ./app -x in put");
    pk_record_argv_free(&v);
    o.period = 4096;
    CHECK_OK(pk_record_spe_argv("arm_spe_0", &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e arm_spe_0/branch_filter=1,jitter=1,ts_enable=1/u -c 4096 -o p.data "
                          "--buildid-mmap --no-bpf-event -- ./app -x in put");
    pk_record_argv_free(&v);
}

TEST(cpuinfo_vendor_and_spe_pmu)
{
    bool v2 = true;
    CHECK_EQ_U64(pk_record_cpuinfo_vendor("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lbr\n", &v2),
                 PK_VENDOR_INTEL);
    CHECK(!v2);
    CHECK_EQ_U64(pk_record_cpuinfo_vendor("vendor_id\t: AuthenticAMD\nflags\t\t: fpu amd_lbr_v2 x\n", &v2),
                 PK_VENDOR_AMD);
    CHECK(v2);
    /* Graviton 3 (Neoverse V1): no vendor_id, an implementer code */
    CHECK_EQ_U64(pk_record_cpuinfo_vendor("processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd\n"
                                          "CPU implementer\t: 0x41\nCPU architecture: 8\n", &v2),
                 PK_VENDOR_ARM);
    CHECK(!v2);
    CHECK_EQ_U64(pk_record_cpuinfo_vendor("", &v2), PK_VENDOR_UNKNOWN);
    char dir[512], spe[32];
    snprintf(dir, sizeof dir, "%s/devices", pk_test_tmpdir());
    mkdir(dir, 0755);
    CHECK(!pk_record_find_spe_pmu(dir, spe, sizeof spe));
    CHECK_STR(spe, "");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/arm_spe_0", dir);
    mkdir(sub, 0755);
    CHECK(pk_record_find_spe_pmu(dir, spe, sizeof spe));
    CHECK_STR(spe, "arm_spe_0");
}

TEST(qemu_command_rejects_commas_and_sanitizes_comm)
{
    pk_record_opts o = {.output = "a,b.data", .period = 1, .lbr_depth = 32, .callchain = true};
    pk_vec v;
    pk_err e;
    CHECK(pk_record_qemu_argv("q", "/p.so", &o, cmd, &v, &e) == -1);
    CHECK(strstr(e.msg, "a,b.data") != NULL);
    char *c2[] = {"/x/a,very=long-program-name", NULL};
    o.output = "p.data";
    CHECK_OK(pk_record_qemu_argv("q", "/p.so", &o, c2, &v, &e), &e);
    CHECK(strstr(joined(&v), "comm=a_very_long-pro ") != NULL);
    pk_record_argv_free(&v);
}

TEST(hw_attach_with_buildid_mmap_quiet)
{
    pk_record_opts o = {.output = "p.data", .period = 20011, .callchain = true, .pid = 4242,
                        .buildid_mmap = true, .quiet = true, .duration = 2.5};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_INTEL, false, &o, NULL, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e br_inst_retired.near_taken:uppp -c 20011 -j any,u -o p.data "
                          "--call-graph fp --buildid-mmap --no-bpf-event -q -p 4242 -- sleep 2.500");
    CHECK(PK_VEC_AT(&v, char *, v.len - 1) == NULL);
    pk_record_argv_free(&v);
}

TEST(perf_ip_frequency_cpu_clock)
{
    pk_pmu_info pmu;
    memset(&pmu, 0, sizeof pmu);
    pk_record_opts o = {.output = "ip.data", .period = 77, .freq = 4999, .callchain = true, .buildid_mmap = true};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_perf_ip_argv(pk_record_ip_event(&pmu), &o, cmd, &v, &e), &e);
    /* no branch stack (-j/-b), user space only (:u), frequency wins over period */
    CHECK_STR(joined(&v), "perf record -e cpu-clock:u -F 4999 -o ip.data --call-graph fp --buildid-mmap "
                          "--no-bpf-event -- ./app -x in put");
    CHECK(PK_VEC_AT(&v, char *, v.len - 1) == NULL);
    pk_record_argv_free(&v);
}

TEST(perf_ip_dwarf_stacks)
{
    pk_pmu_info pmu;
    memset(&pmu, 0, sizeof pmu);
    pk_record_opts o = {.output = "ip.data", .freq = 999, .callchain = true, .dwarf_stack = 16384};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_perf_ip_argv(pk_record_ip_event(&pmu), &o, cmd, &v, &e), &e);
    /* the stack copies instead of frame-pointer chains */
    CHECK_STR(joined(&v), "perf record -e cpu-clock:u -F 999 -o ip.data --call-graph dwarf,16384 --no-buildid-cache "
                          "--no-bpf-event -- ./app -x in put");
    pk_record_argv_free(&v);
}

TEST(perf_ip_period_instructions_attach_no_callchain)
{
    pk_pmu_info pmu;
    memset(&pmu, 0, sizeof pmu);
    pmu.instructions = true;
    pk_record_opts o = {.output = "ip.data", .period = 1000003, .callchain = false, .pid = 17};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_perf_ip_argv(pk_record_ip_event(&pmu), &o, NULL, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e instructions:u -c 1000003 -o ip.data --no-buildid-cache --no-bpf-event "
                          "-p 17");
    pk_record_argv_free(&v);
    /* without an instructions counter (cycles would weigh code by its
     * time, as cpu-clock does), the hrtimer is what every machine has */
    pmu.instructions = false;
    CHECK_STR(pk_record_ip_event(&pmu), "cpu-clock:u");
}

TEST(ip_rate_defaults)
{
    pk_pmu_info none, counts;
    memset(&none, 0, sizeof none);
    memset(&counts, 0, sizeof counts);
    counts.instructions = true;
    pk_record_opts o;
    /* perf IP where the PMU counts instructions: a fixed period of them, no frequency */
    o = (pk_record_opts){.period = 1, .freq = 0};
    pk_record_ip_rate(PK_MODE_PERF_IP, &counts, false, false, &o);
    CHECK_EQ_U64(o.period, PK_RECORD_DEFAULT_INSN_PERIOD);
    CHECK_EQ_U64(o.freq, 0);
    /* without: cpu-clock at the default frequency */
    o = (pk_record_opts){.period = 1, .freq = 0};
    pk_record_ip_rate(PK_MODE_PERF_IP, &none, false, false, &o);
    CHECK_EQ_U64(o.freq, PK_RECORD_DEFAULT_FREQ);
    /* what the user asked stays */
    o = (pk_record_opts){.period = 0, .freq = 99};
    pk_record_ip_rate(PK_MODE_PERF_IP, &counts, false, true, &o);
    CHECK_EQ_U64(o.freq, 99);
    o = (pk_record_opts){.period = 777, .freq = 0};
    pk_record_ip_rate(PK_MODE_PERF_IP, &counts, true, false, &o);
    CHECK_EQ_U64(o.period, 777);
    CHECK_EQ_U64(o.freq, 0);
    /* the other modes count their own events */
    o = (pk_record_opts){0};
    pk_record_ip_rate(PK_MODE_EMU_IP, &counts, false, false, &o);
    CHECK_EQ_U64(o.period, PK_RECORD_DEFAULT_IP_PERIOD);
    o = (pk_record_opts){0};
    pk_record_ip_rate(PK_MODE_EMU_LBR, &none, false, false, &o);
    CHECK_EQ_U64(o.period, PK_RECORD_DEFAULT_PERIOD);
    o = (pk_record_opts){0};
    pk_record_ip_rate(PK_MODE_HW_LBR, &counts, false, false, &o);
    CHECK_EQ_U64(o.period, PK_RECORD_DEFAULT_PERIOD);
    CHECK_EQ_U64(o.freq, 0);
}

TEST(qemu_ip_mode_passes_ip_instead_of_period)
{
    pk_record_opts o = {.output = "/t/p.data", .period = 10007, .lbr_depth = 32, .callchain = true, .seed = 3,
                        .ip = true};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_qemu_argv("qemu-x86_64", "/b/pgokit-lbr.so", &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "qemu-x86_64 -plugin /b/pgokit-lbr.so,out=/t/p.data,ip=10007,callchain=on,seed=3,"
                          "comm=app ./app -x in put");
    pk_record_argv_free(&v);
}

TEST(mode_choice)
{
    pk_pmu_info none, lbr;
    memset(&none, 0, sizeof none);
    snprintf(none.reason, sizeof none.reason, "no branch stacks here");
    memset(&lbr, 0, sizeof lbr);
    lbr.branch_stack = true;
    enum pk_record_mode m;
    char why[512];
    pk_err e;
    /* no flag: the PMU decides, and the line says why */
    CHECK_OK(pk_record_choose_mode(false, false, false, &none, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_PERF_IP);
    CHECK(strstr(why, "no mode flag") && strstr(why, "no branch stacks here") && strstr(why, "--emulate"));
    CHECK_OK(pk_record_choose_mode(false, false, false, &lbr, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_HW_LBR);
    CHECK(strstr(why, "records branch stacks") != NULL);
    /* flags win over the PMU */
    CHECK_OK(pk_record_choose_mode(true, false, false, &lbr, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_PERF_IP);
    CHECK_OK(pk_record_choose_mode(false, true, false, &lbr, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_EMU_LBR);
    CHECK_OK(pk_record_choose_mode(true, true, false, &none, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_EMU_IP);
    CHECK_OK(pk_record_choose_mode(false, false, true, &lbr, &m, why, sizeof why, &e), &e);
    CHECK(m == PK_MODE_HW_LBR);
    /* --hardware without branch stacks is an error that says why */
    CHECK(pk_record_choose_mode(false, false, true, &none, &m, why, sizeof why, &e) == -1);
    CHECK(strstr(e.msg, "no branch stacks here") != NULL);
    CHECK_STR(pk_record_mode_name(PK_MODE_EMU_IP), "emulated IP sampling");
}

/* A perf.data with two processes, one forked from the other (no COMM of its
 * own), samples with and without user call chains. */
static int write_tally_fixture(const char *path, pk_err *e)
{
    pk_perf_writer_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.sample_period = 1000;
    wo.callchain = true;
    pk_perf_writer *w = pk_perf_writer_open(path, &wo, e);
    if (!w)
        return -1;
    pk_comm_event c = {100, 100, true, "server", 1};
    pk_comm_event th = {100, 101, false, "worker-thread", 2};   /* a thread's name */
    pk_task_event f = {true, 200, 100, 200, 100, 3};
    if (pk_perf_write_comm(w, &c, e) || pk_perf_write_comm(w, &th, e) || pk_perf_write_task(w, &f, e))
        goto fail;
    uint64_t chain[] = {PK_CONTEXT_USER, 0x401000, 0x401100};
    uint64_t kchain[] = {PK_CONTEXT_KERNEL, 0xffffffff81000000ull};
    for (int i = 0; i < 7; i++) {
        pk_sample s;
        memset(&s, 0, sizeof s);
        s.pid = i < 5 ? 100 : 200;
        s.tid = s.pid + (i & 1);
        s.ip = 0x401000;
        s.time = 10 + (uint64_t)i;
        s.callchain = i == 3 ? kchain : chain;
        s.callchain_nr = i == 3 ? 2 : 3;
        if (pk_perf_write_sample(w, &s, e))
            goto fail;
    }
    return pk_perf_writer_close(w, e);
fail:
    pk_perf_writer_abort(w);
    return -1;
}

TEST(tally_counts_samples_per_process)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tally.data", pk_test_tmpdir());
    pk_err e;
    CHECK_OK(write_tally_fixture(path, &e), &e);
    pk_record_tally t;
    CHECK_OK(pk_record_tally_file(path, &t, &e), &e);
    CHECK_EQ_U64(t.samples, 7);
    CHECK_EQ_U64(t.with_callchain, 6);   /* the kernel-only chain has no user frame */
    CHECK_EQ_U64(t.with_branches, 0);
    CHECK_EQ_U64(t.procs.len, 2);
    if (t.procs.len == 2) {
        pk_record_proc *p0 = &PK_VEC_AT(&t.procs, pk_record_proc, 0), *p1 = &PK_VEC_AT(&t.procs, pk_record_proc, 1);
        CHECK_EQ_U64(p0->pid, 100);
        CHECK_EQ_U64(p0->samples, 5);
        CHECK_STR(p0->comm, "server");
        CHECK_EQ_U64(p1->pid, 200);
        CHECK_EQ_U64(p1->samples, 2);
        CHECK_STR(p1->comm, "server");
    }
    pk_record_tally_free(&t);
}

TEST(tally_reports_a_truncated_file)
{
    char path[512], cut[600];
    snprintf(path, sizeof path, "%s/tally_full.data", pk_test_tmpdir());
    snprintf(cut, sizeof cut, "%s/tally_cut.data", pk_test_tmpdir());
    pk_err e;
    CHECK_OK(write_tally_fixture(path, &e), &e);
    FILE *in = fopen(path, "rb");
    CHECK(in != NULL);
    if (!in)
        return;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    FILE *out = fopen(cut, "wb");
    CHECK(out != NULL);
    if (!out)
        return;
    fwrite(buf, 1, n > 200 ? 200 : n / 2, out);
    fclose(out);
    pk_record_tally t;
    CHECK(pk_record_tally_file(cut, &t, &e) == -1);
    CHECK(strstr(e.msg, "tally_cut.data") != NULL);
}

TEST(pmu_probe_never_fails)
{
    pk_pmu_info p;
    pk_record_probe_pmu(&p);
    CHECK(p.branch_stack || p.reason[0] != 0);
    CHECK(p.max_sample_rate == pk_record_max_sample_rate());
}

int main(void) { return pk_test_main(); }

/* test_record_cmd.c — the command lines `pgokit record` runs, per vendor. */
#include "test.h"
#include "record/record.h"

#include <stdlib.h>

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
                          "--call-graph fp -- ./app -x in put");
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
                          "-- ./app -x in put");
    pk_record_argv_free(&v);
}

TEST(hw_other_cpu_and_no_callchain)
{
    pk_record_opts o = {.output = "p.data", .period = 5, .callchain = false};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_hw_argv(PK_VENDOR_AMD, false, &o, cmd, &v, &e), &e);
    CHECK_STR(joined(&v), "perf record -e cycles:u -c 5 -j any,u -o p.data -- ./app -x in put");
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

TEST(pmu_probe_never_fails)
{
    pk_pmu_info p;
    pk_record_probe_pmu(&p);
    CHECK(p.branch_stack || p.reason[0] != 0);
}

int main(void) { return pk_test_main(); }

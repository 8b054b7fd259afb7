/* test_aggregate_perfdata.c — the aggregator fed by pk_perf_read from a
 * perf.data written with the perf writer: MMAP2 with build-id, FORK into a
 * child that inherits the mappings, exec in the parent, --pid. */
#include "test.h"
#include "aggregate/aggregate.h"

static const pk_agg_segment segs[] = {{0x1000, 0x2000, 0x1000, 0x2000, 5}};
static const uint8_t bid[20] = {0xab, 0xcd, 1, 2, 3};

static int write_data(const char *path)
{
    pk_err e;
    pk_perf_writer_opts o = {.sample_period = 1, .branch_stack = true, .callchain = false};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    if (!w) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    pk_comm_event c = {.pid = 10, .tid = 10, .comm = "app"};
    pk_mmap_event m = {.is_mmap2 = true, .pid = 10, .tid = 10, .addr = 0x555555555000, .len = 0x2000,
                       .pgoff = 0x1000, .prot = 5, .has_build_id = true, .build_id_size = 20,
                       .filename = "/opt/app"};
    memcpy(m.build_id, bid, 20);
    pk_task_event f = {.is_fork = true, .pid = 11, .ppid = 10, .tid = 11, .ptid = 10};
    pk_comm_event x = {.pid = 10, .tid = 10, .exec = true, .comm = "sh"};
    /* one loop iteration: 0x1100..0x1120 then jump back to 0x1100 */
    pk_branch b[2] = {{0x555555555120, 0x555555555100, 0}, {0x555555555120, 0x555555555100, 0}};
    pk_sample s = {.pid = 10, .tid = 10, .ip = 0x555555555100, .branch_nr = 2, .branches = b};
    pk_sample s11 = s;
    s11.pid = s11.tid = 11;
    int rc = pk_perf_write_comm(w, &c, &e) || pk_perf_write_mmap(w, &m, &e) ||
             pk_perf_write_sample(w, &s, &e) || pk_perf_write_task(w, &f, &e) ||
             pk_perf_write_comm(w, &x, &e) ||
             pk_perf_write_sample(w, &s, &e) ||   /* after exec: not the app any more */
             pk_perf_write_sample(w, &s11, &e) || /* the child still runs it */
             pk_perf_write_sample(w, &s11, &e);
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        pk_perf_writer_abort(w);
        return -1;
    }
    return pk_perf_writer_close(w, &e);
}

static pk_agg *run(const char *path, int64_t pid)
{
    pk_agg_target t = {.path = "/elsewhere/renamed", .build_id_size = 20, .segs = segs, .nsegs = 1};
    memcpy(t.build_id, bid, 20);
    pk_agg_opts o = {.pid = pid};
    pk_err e;
    pk_agg *a = pk_agg_new(&t, &o, &e);
    if (!a)
        return NULL;
    pk_perf_callbacks cb;
    pk_agg_callbacks(a, &e, &cb);
    pk_perf_stats st;
    if (pk_perf_read(path, &cb, &st, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        pk_agg_free(a);
        return NULL;
    }
    return a;
}

TEST(fork_exec_and_build_id_through_perf_data)
{
    char path[600];
    snprintf(path, sizeof path, "%s/agg.data", pk_test_tmpdir());
    if (write_data(path)) {
        CHECK(!"write perf.data");
        return;
    }
    pk_agg *a = run(path, -1);
    CHECK(a != NULL);
    if (!a)
        return;
    pk_rawprof *r = pk_agg_profile(a);
    CHECK_EQ_U64(r->stats.samples, 4);
    CHECK_EQ_U64(r->stats.samples_used, 3);   /* the post-exec sample of pid 10 is outside */
    CHECK_EQ_U64(r->stats.samples_outside, 1);
    CHECK_EQ_U64(r->stats.forks, 1);
    CHECK_EQ_U64(r->stats.execs, 1);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x1100, 0x1120), 3);
    CHECK_EQ_U64(pk_pairmap_get(&r->branches, 0x1120, 0x1100), 6);
    pk_agg_free(a);

    a = run(path, 11);
    CHECK(a != NULL);
    if (!a)
        return;
    r = pk_agg_profile(a);
    CHECK_EQ_U64(r->stats.samples_other_pid, 2);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x1100, 0x1120), 2);
    pk_agg_free(a);
}

int main(void) { return pk_test_main(); }

/* test_aggregate_lbr.c — LBR stacks → fall-through ranges and branch counts,
 * with the drop reasons (backwards, too long, one end outside the binary). */
#include "test.h"
#include "aggregate/aggregate.h"

#include <stdlib.h>

/* A non-PIE binary: one R+X segment at 0x401000 (file offset 0x1000). */
static const pk_agg_segment segs[] = {
    {0x400000, 0x1000, 0, 0x1000, 4},
    {0x401000, 0x10000, 0x1000, 0x10000, 5},
};

static pk_agg *new_agg(void)
{
    pk_agg_target t = {.path = "/bin/prog", .preferred_base = 0x400000, .segs = segs, .nsegs = 2};
    pk_agg_opts o = {.pid = -1, .max_range_len = 0x1000};
    pk_err e;
    pk_agg *a = pk_agg_new(&t, &o, &e);
    if (!a)
        fprintf(stderr, "pk_agg_new: %s\n", e.msg);
    pk_mmap_event m = {.is_mmap2 = true, .pid = 7, .tid = 7, .addr = 0x401000, .len = 0x10000,
                       .pgoff = 0x1000, .prot = 5, .filename = "/bin/prog"};
    pk_agg_on_mmap(a, &m, &e);
    return a;
}

static void sample(pk_agg *a, const pk_branch *b, size_t n)
{
    pk_sample s = {.pid = 7, .tid = 7, .ip = b[0].to, .branch_nr = n, .branches = b};
    pk_err e;
    pk_agg_on_sample(a, &s, &e);
}

TEST(valid_stack_gives_ranges_between_consecutive_entries)
{
    pk_agg *a = new_agg();
    /* newest first: ... 0x401050→0x401100, then 0x401120→0x401060, then 0x401070→0x401200 */
    pk_branch b[] = {
        {0x401070, 0x401200, 0},
        {0x401120, 0x401060, 0},
        {0x401050, 0x401100, 0},
    };
    sample(a, b, 3);
    sample(a, b, 3);
    pk_rawprof *r = pk_agg_profile(a);
    CHECK_EQ_U64(r->branches.len, 3);
    CHECK_EQ_U64(pk_pairmap_get(&r->branches, 0x401070, 0x401200), 2);
    CHECK_EQ_U64(pk_pairmap_get(&r->branches, 0x401050, 0x401100), 2);
    CHECK_EQ_U64(r->ranges.len, 2);
    /* [older.to, newer.from] */
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x401100, 0x401120), 2);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x401060, 0x401070), 2);
    /* nothing from the newest target (0x401200) to the sample ip */
    CHECK_EQ_U64(r->stats.ranges, 4);
    CHECK_EQ_U64(r->stats.samples_used, 2);
    pk_agg_free(a);
}

/* A sample of weight 3 (a perf script repeat count) counts as three. */
TEST(weighted_sample_counts_as_its_weight)
{
    pk_branch b[] = {
        {0x401070, 0x401200, 0},
        {0x401120, 0x401060, 0},
        {0x401050, 0x401100, 0},
    };
    pk_agg *x = new_agg(), *y = new_agg();
    for (int i = 0; i < 3; i++)
        sample(x, b, 3);
    pk_sample s = {.pid = 7, .tid = 7, .ip = b[0].to, .branch_nr = 3, .branches = b, .weight = 3};
    pk_err e;
    CHECK_OK(pk_agg_on_sample(y, &s, &e), &e);
    pk_rawprof *rx = pk_agg_profile(x), *ry = pk_agg_profile(y);
    CHECK_EQ_U64(pk_pairmap_get(&ry->branches, 0x401070, 0x401200), 3);
    CHECK_EQ_U64(pk_pairmap_get(&ry->ranges, 0x401100, 0x401120), 3);
    CHECK(!memcmp(&rx->stats, &ry->stats, sizeof rx->stats));
    CHECK_EQ_U64(ry->stats.samples, 3);
    CHECK_EQ_U64(ry->stats.samples_used, 3);
    pk_agg_free(x);
    pk_agg_free(y);
}

TEST(backwards_and_long_ranges_are_dropped_and_counted)
{
    pk_agg *a = new_agg();
    pk_branch b[] = {
        {0x401010, 0x401300, 0},   /* range [0x401800, 0x401010]: backwards */
        {0x401900, 0x401800, 0},
        {0x401100, 0x402000, 0},   /* range [0x402000, 0x401900]: backwards */
        {0x40a000, 0x401000, 0},   /* range [0x401000, 0x401100]: ok */
        {0x401000, 0x405000, 0},   /* range [0x405000, 0x40a000]: > 0x1000 long */
    };
    sample(a, b, 5);
    pk_rawprof *r = pk_agg_profile(a);
    CHECK_EQ_U64(r->stats.range_drop[PK_RANGE_DROP_BACKWARDS], 2);
    CHECK_EQ_U64(r->stats.range_drop[PK_RANGE_DROP_TOO_LONG], 1);
    CHECK_EQ_U64(r->ranges.len, 1);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x401000, 0x401100), 1);
    CHECK_EQ_U64(r->branches.len, 5);
    pk_agg_free(a);
}

TEST(external_ends_keep_incoming_branches_only)
{
    pk_agg *a = new_agg();
    pk_branch b[] = {
        {0x7f0000001000, 0x401400, 0}, /* return from libc into the binary: branch kept */
        {0x401300, 0x7f0000000800, 0}, /* call into libc: target external, no branch */
        {0x401200, 0x401280, 0},       /* range [0x401280, 0x401300] ok */
        {0x7f0000002000, 0x7f0000003000, 0}, /* all outside */
    };
    sample(a, b, 4);
    pk_rawprof *r = pk_agg_profile(a);
    CHECK_EQ_U64(pk_pairmap_get(&r->branches, PK_AGG_EXTERNAL, 0x401400), 1);
    CHECK_EQ_U64(pk_pairmap_get(&r->branches, 0x401200, 0x401280), 1);
    CHECK_EQ_U64(r->branches.len, 2);
    CHECK_EQ_U64(r->stats.branches_external, 2);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x401280, 0x401300), 1);
    /* [0x7f..800, 0x7f..1000] is entirely outside: ignored, not a drop;
       [0x7f..3000, 0x401200] has one end outside: dropped */
    CHECK_EQ_U64(r->stats.range_drop[PK_RANGE_DROP_EXTERNAL], 1);
    CHECK_EQ_U64(r->ranges.len, 1);
    pk_agg_free(a);
}

TEST(empty_slots_end_the_stack_and_pid_filter)
{
    pk_agg_target t = {.path = "/bin/prog", .preferred_base = 0x400000, .segs = segs, .nsegs = 2};
    pk_agg_opts o = {.pid = 7};
    pk_err e;
    pk_agg *a = pk_agg_new(&t, &o, &e);
    CHECK(a != NULL);
    pk_mmap_event m = {.pid = 7, .addr = 0x401000, .len = 0x10000, .pgoff = 0x1000, .filename = "prog"};
    CHECK_OK(pk_agg_on_mmap(a, &m, &e), &e);
    pk_branch b[] = {{0x401010, 0x401020, 0}, {0x401000, 0x401008, 0}, {0, 0, 0}, {0x401500, 0x401400, 0}};
    pk_sample s = {.pid = 7, .branch_nr = 4, .branches = b};
    CHECK_OK(pk_agg_on_sample(a, &s, &e), &e);
    s.pid = 8;
    CHECK_OK(pk_agg_on_sample(a, &s, &e), &e);
    pk_sample none = {.pid = 7};
    CHECK_OK(pk_agg_on_sample(a, &none, &e), &e);
    pk_rawprof *r = pk_agg_profile(a);
    CHECK_EQ_U64(r->branches.len, 2);
    CHECK_EQ_U64(r->ranges.len, 1);
    CHECK_EQ_U64(pk_pairmap_get(&r->ranges, 0x401008, 0x401010), 1);
    CHECK_EQ_U64(r->stats.samples, 3);
    CHECK_EQ_U64(r->stats.samples_other_pid, 1);
    CHECK_EQ_U64(r->stats.samples_no_lbr, 1);
    pk_agg_free(a);
}

TEST(pairmap_grows_and_sorts)
{
    pk_pairmap m;
    CHECK(pk_pairmap_init(&m, 4) == 0);
    for (uint64_t i = 0; i < 5000; i++)
        CHECK(pk_pairmap_add(&m, 5000 - i, i * 3, i + 1) == 0);
    CHECK(pk_pairmap_add(&m, 1, 4999 * 3, 10) == 0);
    CHECK_EQ_U64(m.len, 5000);
    CHECK_EQ_U64(pk_pairmap_get(&m, 1, 4999 * 3), 5010);
    CHECK_EQ_U64(pk_pairmap_get(&m, 2, 2), 0);
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&m, &n);
    CHECK_EQ_U64(n, 5000);
    for (size_t i = 1; v && i < n; i++)
        CHECK(v[i - 1].a < v[i].a);
    free(v);
    pk_pairmap_free(&m);
}

/* fuzz_rawprof: two entries of a raw profile whose counts add up to 2^64
 * wrapped to 0, which marks a slot free: the entry vanished from the sorted
 * list but not from len (a written raw profile then read as truncated), and
 * keys probed past it were no longer found. */
TEST(pairmap_counts_saturate)
{
    pk_pairmap m;
    CHECK(pk_pairmap_init(&m, 4) == 0);
    CHECK(pk_pairmap_add(&m, 1, 2, UINT64_MAX) == 0);
    CHECK(pk_pairmap_add(&m, 1, 2, 1) == 0);
    CHECK_EQ_U64(pk_pairmap_get(&m, 1, 2), UINT64_MAX);
    pk_pair_count items[] = {{1, 2, 5}, {3, 4, UINT64_MAX}, {3, 4, 7}};
    CHECK(pk_pairmap_add_batch(&m, items, 3) == 0);
    CHECK_EQ_U64(pk_pairmap_get(&m, 1, 2), UINT64_MAX);
    CHECK_EQ_U64(pk_pairmap_get(&m, 3, 4), UINT64_MAX);
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&m, &n);
    CHECK_EQ_U64(n, m.len);
    CHECK_EQ_U64(n, 2);
    free(v);
    pk_pairmap_free(&m);
}

int main(void) { return pk_test_main(); }

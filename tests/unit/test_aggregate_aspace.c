/* test_aggregate_aspace.c — address spaces: PIE and shared-library
 * relocation through PT_LOAD, build-id vs path matching, FORK and exec. */
#include "test.h"
#include "aggregate/aggregate.h"

/* A PIE laid out like lld output: R at 0 (offset 0), R+X at 0x1640 (offset
 * 0x640), RW at 0x2800 (offset 0x800). */
static const pk_agg_segment pie_segs[] = {
    {0x0, 0x640, 0x0, 0x640, 4},
    {0x1640, 0x1000, 0x640, 0x1000, 5},
    {0x2640, 0x200, 0x1640, 0x200, 6},
};

static const uint8_t bid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

static pk_agg *new_pie(int with_bid)
{
    pk_agg_target t = {.path = "/home/u/app", .preferred_base = 0, .segs = pie_segs, .nsegs = 3};
    if (with_bid) {
        memcpy(t.build_id, bid, 20);
        t.build_id_size = 20;
    }
    pk_agg_opts o = {.pid = -1};
    pk_err e;
    return pk_agg_new(&t, &o, &e);
}

static void mmap_ev(pk_agg *a, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
                    const char *fn, const uint8_t *id)
{
    pk_mmap_event m = {.is_mmap2 = true, .pid = pid, .tid = pid, .addr = addr, .len = len,
                       .pgoff = pgoff, .prot = 5, .filename = fn};
    if (id) {
        m.has_build_id = true;
        m.build_id_size = 20;
        memcpy(m.build_id, id, 20);
    }
    pk_err e;
    CHECK(pk_agg_on_mmap(a, &m, &e) == 0);
}

TEST(pie_runtime_to_vaddr)
{
    pk_agg *a = new_pie(0);
    /* the kernel maps the executable segment page-aligned: file page 0 */
    mmap_ev(a, 100, 0x555555554000, 0x2000, 0, "/home/u/app", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 100, 0x555555554000 + 0x640), 0x1640);
    CHECK_EQ_U64(pk_agg_translate(a, 100, 0x555555554000 + 0x700), 0x1700);
    CHECK_EQ_U64(pk_agg_translate(a, 100, 0x555555554000 + 0x1650), 0x2650);
    CHECK_EQ_U64(pk_agg_translate(a, 100, 0x555555556000), PK_AGG_EXTERNAL); /* past the map */
    CHECK_EQ_U64(pk_agg_translate(a, 101, 0x555555554700), 0x1700);          /* unknown pid: global */
    pk_agg_free(a);
}

TEST(shared_library_by_basename_and_pgoff)
{
    pk_agg *a = new_pie(0);
    mmap_ev(a, 5, 0x7f0000000000, 0x1000, 0, "/usr/lib/libc.so.6", NULL);
    /* the library's executable segment mapped alone with its file offset */
    mmap_ev(a, 5, 0x7f1000001000, 0x1000, 0x0, "/opt/lib/app", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 5, 0x7f1000001000 + 0x700), 0x1700);
    CHECK_EQ_U64(pk_agg_translate(a, 5, 0x7f0000000100), PK_AGG_EXTERNAL);
    pk_agg_free(a);
}

TEST(build_id_decides_over_the_name)
{
    pk_agg *a = new_pie(1);
    uint8_t other[20] = {9};
    mmap_ev(a, 1, 0x1000000, 0x2000, 0, "/home/u/app", other);           /* stale copy */
    mmap_ev(a, 2, 0x2000000, 0x2000, 0, "/tmp/renamed", bid);             /* right binary */
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1000700), PK_AGG_EXTERNAL);
    CHECK_EQ_U64(pk_agg_translate(a, 2, 0x2000700), 0x1700);
    CHECK_EQ_U64(pk_agg_profile(a)->stats.mmaps_build_id_mismatch, 1);
    /* BUILD_ID feature: plain MMAP events take their build-id from it */
    pk_build_id_event b = {.pid = -1, .size = 20, .filename = "/x/app"};
    memcpy(b.build_id, other, 20);
    pk_err e;
    CHECK(pk_agg_on_build_id(a, &b, &e) == 0);
    mmap_ev(a, 3, 0x3000000, 0x2000, 0, "/x/app", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 3, 0x3000700), PK_AGG_EXTERNAL);
    pk_agg_free(a);
}

TEST(fork_copies_and_exec_flushes)
{
    pk_agg *a = new_pie(0);
    mmap_ev(a, 10, 0x1000000, 0x2000, 0, "/home/u/app", NULL);
    pk_err e;
    pk_task_event f = {.is_fork = true, .pid = 11, .ppid = 10, .tid = 11, .ptid = 10};
    CHECK(pk_agg_on_task(a, &f, &e) == 0);
    CHECK_EQ_U64(pk_agg_translate(a, 11, 0x1000700), 0x1700);
    /* the child remaps elsewhere: the parent is not affected */
    mmap_ev(a, 11, 0x1000000, 0x2000, 0, "/usr/bin/other", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 11, 0x1000700), PK_AGG_EXTERNAL);
    CHECK_EQ_U64(pk_agg_translate(a, 10, 0x1000700), 0x1700);
    /* exec in the parent drops its mappings; the new image maps elsewhere */
    pk_comm_event c = {.pid = 10, .tid = 10, .exec = true, .comm = "x"};
    CHECK(pk_agg_on_comm(a, &c, &e) == 0);
    mmap_ev(a, 10, 0x5000000, 0x1000, 0, "/usr/bin/sh", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 10, 0x1000700), PK_AGG_EXTERNAL);
    pk_agg_free(a);
}

TEST(partial_overlap_splits_mappings)
{
    pk_agg *a = new_pie(0);
    mmap_ev(a, 1, 0x1000000, 0x3000, 0, "/home/u/app", NULL);
    mmap_ev(a, 1, 0x1000800, 0x800, 0, "[anon]", NULL); /* punches a hole */
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1000700), 0x1700);
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1000900), PK_AGG_EXTERNAL);
    /* the tail keeps its page offset: runtime 0x1001650 is file offset 0x1650 */
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1001650), 0x2650);
    /* a new mapping strictly inside splits the old one in two */
    mmap_ev(a, 1, 0x1001700, 0x10, 0, "[anon]", NULL);
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1001708), PK_AGG_EXTERNAL);
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1001650), 0x2650);
    CHECK_EQ_U64(pk_agg_translate(a, 1, 0x1001710), 0x2710);
    pk_agg_free(a);
}

TEST(no_mmap_assume_unrelocated)
{
    pk_agg_target t = {.path = "app", .segs = pie_segs, .nsegs = 3};
    pk_agg_opts o = {.pid = -1, .assume_unrelocated_without_mmap = true};
    pk_err e;
    pk_agg *a = pk_agg_new(&t, &o, &e);
    CHECK_EQ_U64(pk_agg_translate(a, 0, 0x1700), 0x1700);
    CHECK_EQ_U64(pk_agg_translate(a, 0, 0x9000), PK_AGG_EXTERNAL);
    pk_agg_free(a);
}

int main(void) { return pk_test_main(); }

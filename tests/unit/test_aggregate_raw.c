/* test_aggregate_raw.c — the raw profile file: round trip, merge by
 * addition, refusal to merge different binaries, truncation and corruption. */
#include "test.h"
#include "aggregate/aggregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void fill(pk_rawprof *r, uint64_t k)
{
    pk_pairmap_add(&r->ranges, 0x401000, 0x401010, 5 * k);
    pk_pairmap_add(&r->ranges, 0x401020, 0x401044, 1 * k);
    pk_pairmap_add(&r->branches, 0x401010, 0x401020, 4 * k);
    pk_pairmap_add(&r->branches, PK_AGG_EXTERNAL, 0x401000, 2 * k);
    r->stats.samples = 10 * k;
    r->stats.range_drop[PK_RANGE_DROP_BACKWARDS] = k;
}

TEST(round_trip_keeps_everything)
{
    pk_rawprof r, q;
    pk_err e;
    CHECK_OK(pk_rawprof_init(&r, "/bin/prog", bid, 20, 0x400000, &e), &e);
    fill(&r, 1);
    CHECK_OK(pk_rawprof_write(&r, pk_test_path("a.raw"), &e), &e);
    CHECK_OK(pk_rawprof_read(&q, pk_test_path("a.raw"), &e), &e);
    CHECK_STR(q.path, "/bin/prog");
    CHECK_EQ_U64(q.build_id_size, 20);
    CHECK(!memcmp(q.build_id, bid, 20));
    CHECK_EQ_U64(q.preferred_base, 0x400000);
    CHECK_EQ_U64(q.ranges.len, 2);
    CHECK_EQ_U64(q.branches.len, 2);
    CHECK_EQ_U64(pk_pairmap_get(&q.ranges, 0x401000, 0x401010), 5);
    CHECK_EQ_U64(pk_pairmap_get(&q.branches, PK_AGG_EXTERNAL, 0x401000), 2);
    CHECK_EQ_U64(q.stats.samples, 10);
    CHECK_EQ_U64(q.stats.range_drop[PK_RANGE_DROP_BACKWARDS], 1);
    pk_rawprof_free(&q);
    pk_rawprof_free(&r);
}

TEST(merge_adds_counts_and_checks_binary)
{
    pk_rawprof a, b, c;
    pk_err e;
    CHECK_OK(pk_rawprof_init(&a, "/bin/prog", bid, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof_init(&b, "/elsewhere/prog", bid, 20, 0x400000, &e), &e);
    fill(&a, 1);
    fill(&b, 3);
    pk_pairmap_add(&b.ranges, 0x401100, 0x401104, 7);
    CHECK_OK(pk_rawprof_merge(&a, &b, &e), &e);
    CHECK_EQ_U64(pk_pairmap_get(&a.ranges, 0x401000, 0x401010), 20);
    CHECK_EQ_U64(pk_pairmap_get(&a.ranges, 0x401100, 0x401104), 7);
    CHECK_EQ_U64(pk_pairmap_get(&a.branches, PK_AGG_EXTERNAL, 0x401000), 8);
    CHECK_EQ_U64(a.stats.samples, 40);
    uint8_t other[20] = {1};
    CHECK_OK(pk_rawprof_init(&c, "/bin/prog", other, 20, 0x400000, &e), &e);
    CHECK(pk_rawprof_merge(&a, &c, &e) == -1);
    CHECK(strstr(e.msg, "different binaries") != NULL);
    pk_rawprof_free(&a);
    pk_rawprof_free(&b);
    pk_rawprof_free(&c);
}

static int write_bytes(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(d, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

TEST(truncated_and_corrupt_files_are_errors_with_offsets)
{
    pk_rawprof r, q;
    pk_err e;
    CHECK_OK(pk_rawprof_init(&r, "/bin/prog", bid, 20, 0x400000, &e), &e);
    fill(&r, 2);
    CHECK_OK(pk_rawprof_write(&r, pk_test_path("b.raw"), &e), &e);
    pk_rawprof_free(&r);
    pk_mapped_file f;
    CHECK_OK(pk_file_map(&f, pk_test_path("b.raw"), &e), &e);
    uint8_t *copy = malloc(f.size);
    memcpy(copy, f.data, f.size);
    size_t size = f.size;
    pk_file_unmap(&f);

    /* every truncation point fails, none crashes */
    for (size_t cut = 0; cut < size; cut += 7) {
        CHECK(write_bytes(pk_test_path("t.raw"), copy, cut) == 0);
        if (pk_rawprof_read(&q, pk_test_path("t.raw"), &e) == 0) {
            fprintf(stderr, "cut %zu accepted\n", cut);
            CHECK(0);
            pk_rawprof_free(&q);
        } else {
            CHECK(strstr(e.msg, "t.raw") != NULL);
            CHECK(strstr(e.msg, "offset") != NULL);
        }
    }
    /* a flipped bit in the counts */
    copy[size - 20] ^= 0x10;
    CHECK(write_bytes(pk_test_path("c.raw"), copy, size) == 0);
    CHECK(pk_rawprof_read(&q, pk_test_path("c.raw"), &e) == -1);
    CHECK(strstr(e.msg, "checksum") != NULL);
    copy[size - 20] ^= 0x10;
    /* a future version */
    copy[8] = 9;
    CHECK(write_bytes(pk_test_path("v.raw"), copy, size) == 0);
    CHECK(pk_rawprof_read(&q, pk_test_path("v.raw"), &e) == -1);
    CHECK(strstr(e.msg, "version 9") != NULL);
    copy[8] = 1;
    /* huge counts in the header */
    pk_st64(copy + 56, UINT64_MAX / 2);
    CHECK(write_bytes(pk_test_path("h.raw"), copy, size) == 0);
    CHECK(pk_rawprof_read(&q, pk_test_path("h.raw"), &e) == -1);
    CHECK(strstr(e.msg, "offset 56") != NULL);
    /* not a raw profile */
    CHECK(write_bytes(pk_test_path("n.raw"), (const uint8_t *)"hello world", 11) == 0);
    CHECK(pk_rawprof_read(&q, pk_test_path("n.raw"), &e) == -1);
    CHECK(strstr(e.msg, "magic") != NULL);
    free(copy);
}

int main(void) { return pk_test_main(); }

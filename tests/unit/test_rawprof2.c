/* test_rawprof2.c — the version-2 raw profile: round trip of every part
 * (flat counts, per-context ranges and branches, IP hits, calls and hits of
 * unknown caller, statistics), the same bytes whatever order the counts came
 * in, merge by addition per context, version-1 files read by the version-2
 * reader and version-2 flat files by the version-1 reader (contexts refused,
 * not dropped), truncated and corrupt files as errors naming file and offset. */
#include "test.h"
#include "unwind/rawprof2.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BASE 0x400000ULL

static const uint8_t bid[20] = {0xca, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};

/* contexts: call sites outermost first, then the leaf entry */
static const uint64_t ctx_a[] = {BASE + 0x1100, BASE + 0x1200};
static const uint64_t ctx_b[] = {BASE + 0x1100, BASE + 0x1300, BASE + 0x1400};
static const uint64_t ctx_c[] = {BASE + 0x1500};

static uint32_t intern(pk_csraw *c, const uint64_t *ctx, uint32_t n)
{
    uint32_t id = 0;
    pk_err e;
    if (pk_csraw_intern(c, ctx, n, &id, &e))
        CHECK(0);
    return id;
}

static uint64_t key(uint32_t ctx, uint64_t vaddr) { return (uint64_t)ctx << 32 | (vaddr - BASE); }

/* k times a fixed set of counts; `reverse` interns and adds in another order */
static int fill(pk_rawprof2 *r, uint64_t k, bool reverse, pk_err *e)
{
    if (pk_rawprof2_init(r, "/bin/prog", bid, 20, BASE, e))
        return -1;
    uint32_t a, b, c;
    if (reverse) {
        c = intern(&r->ip, ctx_c, 1);
        b = intern(&r->lbr, ctx_b, 3);
        a = intern(&r->lbr, ctx_a, 2);
    } else {
        a = intern(&r->lbr, ctx_a, 2);
        b = intern(&r->lbr, ctx_b, 3);
        c = intern(&r->ip, ctx_c, 1);
    }
    uint32_t ipb = intern(&r->ip, ctx_b, 3);
    pk_pairmap_add(&r->flat.ranges, BASE + 0x1000, BASE + 0x1010, 5 * k);
    pk_pairmap_add(&r->flat.branches, PK_AGG_EXTERNAL, BASE + 0x1000, 2 * k);
    pk_pairmap_add(&r->lbr.ranges, key(a, BASE + 0x1200), 0x1220, 7 * k);
    pk_pairmap_add(&r->lbr.ranges, key(b, BASE + 0x1400), 0x1408, 3 * k);
    pk_pairmap_add(&r->lbr.branches, key(a, BASE + 0x1100), 0x1200, 6 * k);
    pk_pairmap_add(&r->lbr.branches, (uint64_t)b << 32 | PK_CS_EXTERNAL_OFF, 0x1400, 1 * k);
    pk_pairmap_add(&r->ip.ranges, key(c, BASE + 0x1504), 0, 11 * k);
    pk_pairmap_add(&r->ip.ranges, key(ipb, BASE + 0x1404), 0, 4 * k);
    pk_pairmap_add(&r->ip.branches, key(c, BASE + 0x1510), 0x1400, 9 * k);
    pk_pairmap_add(&r->ip_unplaced, 0x1400, 0x1400, 2 * k);
    r->flags = PK_RAW_CALLS_ONLY;
    r->flat.stats.samples = 30 * k;
    r->unwind.samples_unwound = 20 * k;
    r->ip_stats.used = 17 * k;
    return 0;
}

static uint64_t ctx_count(const pk_csraw *c, const uint64_t *ctx, uint32_t n, int which, uint64_t a, uint64_t b)
{
    size_t before = pk_csraw_num_ctxs(c);
    uint32_t id = intern((pk_csraw *)c, ctx, n);
    if (pk_csraw_num_ctxs(c) != before)
        return 0; /* not there */
    const pk_pairmap *m = which ? &c->branches : &c->ranges;
    return pk_pairmap_get(m, (uint64_t)id << 32 | (a == PK_AGG_EXTERNAL ? PK_CS_EXTERNAL_OFF : a - BASE), b);
}

static void check_counts(pk_rawprof2 *q, uint64_t k, size_t more_ranges)
{
    CHECK_STR(q->flat.path, "/bin/prog");
    CHECK_EQ_U64(q->flat.build_id_size, 20);
    CHECK(!memcmp(q->flat.build_id, bid, 20));
    CHECK_EQ_U64(q->flat.preferred_base, BASE);
    CHECK_EQ_U64(q->flags, PK_RAW_CALLS_ONLY);
    CHECK_EQ_U64(pk_pairmap_get(&q->flat.ranges, BASE + 0x1000, BASE + 0x1010), 5 * k);
    CHECK_EQ_U64(pk_pairmap_get(&q->flat.branches, PK_AGG_EXTERNAL, BASE + 0x1000), 2 * k);
    CHECK_EQ_U64(ctx_count(&q->lbr, ctx_a, 2, 0, BASE + 0x1200, 0x1220), 7 * k);
    CHECK_EQ_U64(ctx_count(&q->lbr, ctx_b, 3, 0, BASE + 0x1400, 0x1408), 3 * k);
    CHECK_EQ_U64(ctx_count(&q->lbr, ctx_a, 2, 1, BASE + 0x1100, 0x1200), 6 * k);
    CHECK_EQ_U64(ctx_count(&q->lbr, ctx_b, 3, 1, PK_AGG_EXTERNAL, 0x1400), 1 * k);
    CHECK_EQ_U64(ctx_count(&q->ip, ctx_c, 1, 0, BASE + 0x1504, 0), 11 * k);
    CHECK_EQ_U64(ctx_count(&q->ip, ctx_b, 3, 0, BASE + 0x1404, 0), 4 * k);
    CHECK_EQ_U64(ctx_count(&q->ip, ctx_c, 1, 1, BASE + 0x1510, 0x1400), 9 * k);
    CHECK_EQ_U64(pk_pairmap_get(&q->ip_unplaced, 0x1400, 0x1400), 2 * k);
    CHECK_EQ_U64(q->lbr.ranges.len, 2 + more_ranges);
    CHECK_EQ_U64(q->lbr.branches.len, 2);
    CHECK_EQ_U64(q->ip.ranges.len, 2);
    CHECK_EQ_U64(q->ip.branches.len, 1);
    CHECK_EQ_U64(q->flat.stats.samples, 30 * k);
    CHECK_EQ_U64(q->unwind.samples_unwound, 20 * k);
    CHECK_EQ_U64(q->ip_stats.used, 17 * k);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    pk_mapped_file f;
    pk_err e;
    if (pk_file_map(&f, path, &e))
        return NULL;
    uint8_t *d = malloc(f.size + 1);
    memcpy(d, f.data, f.size);
    *size = f.size;
    pk_file_unmap(&f);
    return d;
}

static int write_bytes(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(d, 1, n, f);
    return fclose(f) || w != n ? -1 : 0;
}

TEST(round_trip_keeps_every_part)
{
    pk_rawprof2 r, q;
    pk_err e;
    CHECK_OK(fill(&r, 1, false, &e), &e);
    CHECK_OK(pk_rawprof2_write(&r, pk_test_path("a.raw"), &e), &e);
    CHECK_OK(pk_rawprof2_read(&q, pk_test_path("a.raw"), &e), &e);
    CHECK_EQ_U64(q.version, 2);
    check_counts(&q, 1, 0);
    CHECK(pk_rawprof2_has_contexts(&q) && pk_rawprof2_has_ip(&q));
    pk_rawprof2_free(&q);
    pk_rawprof2_free(&r);
}

TEST(equal_contents_give_equal_bytes)
{
    pk_rawprof2 r, s, q;
    pk_err e;
    CHECK_OK(fill(&r, 2, false, &e), &e);
    CHECK_OK(fill(&s, 2, true, &e), &e);
    CHECK_OK(pk_rawprof2_write(&r, pk_test_path("o1.raw"), &e), &e);
    CHECK_OK(pk_rawprof2_write(&s, pk_test_path("o2.raw"), &e), &e);
    /* read and written again: the same bytes too */
    CHECK_OK(pk_rawprof2_read(&q, pk_test_path("o2.raw"), &e), &e);
    CHECK_OK(pk_rawprof2_write(&q, pk_test_path("o3.raw"), &e), &e);
    size_t n1 = 0, n2 = 0, n3 = 0;
    uint8_t *d1 = slurp(pk_test_path("o1.raw"), &n1), *d2 = slurp(pk_test_path("o2.raw"), &n2), *d3 = slurp(pk_test_path("o3.raw"), &n3);
    CHECK(d1 && d2 && d3);
    CHECK(n1 == n2 && n1 == n3 && d1 && d2 && d3 && !memcmp(d1, d2, n1) && !memcmp(d1, d3, n1));
    free(d1);
    free(d2);
    free(d3);
    pk_rawprof2_free(&q);
    pk_rawprof2_free(&r);
    pk_rawprof2_free(&s);
}

TEST(merge_adds_per_context)
{
    pk_rawprof2 a, b, q;
    pk_err e;
    CHECK_OK(fill(&a, 1, false, &e), &e);
    CHECK_OK(fill(&b, 3, true, &e), &e);
    /* a context only b has */
    static const uint64_t ctx_d[] = {BASE + 0x1100, BASE + 0x1300, BASE + 0x1600};
    uint32_t d = intern(&b.lbr, ctx_d, 3);
    pk_pairmap_add(&b.lbr.ranges, key(d, BASE + 0x1600), 0x1610, 8);
    b.flags = 0;
    CHECK_OK(pk_rawprof2_write(&b, pk_test_path("mb.raw"), &e), &e);
    pk_rawprof2_free(&b);
    CHECK_OK(pk_rawprof2_read(&b, pk_test_path("mb.raw"), &e), &e);
    CHECK_OK(pk_rawprof2_merge(&a, &b, &e), &e);
    CHECK_OK(pk_rawprof2_write(&a, pk_test_path("m.raw"), &e), &e);
    CHECK_OK(pk_rawprof2_read(&q, pk_test_path("m.raw"), &e), &e);
    check_counts(&q, 4, 1);
    CHECK_EQ_U64(ctx_count(&q.lbr, ctx_d, 3, 0, BASE + 0x1600, 0x1610), 8);
    CHECK_EQ_U64(pk_csraw_num_ctxs(&q.lbr), 3); /* a, b, d: the same address list is one context */
    pk_rawprof2_free(&q);

    /* contexts of another base without a build-id to match them: refused */
    pk_rawprof2 o;
    CHECK_OK(fill(&o, 1, false, &e), &e);
    o.flat.build_id_size = 0;
    o.flat.preferred_base = o.lbr.base = o.ip.base = BASE + 0x10000;
    pk_rawprof2 n;
    CHECK_OK(pk_rawprof2_init(&n, "/bin/prog", NULL, 0, BASE, &e), &e);
    CHECK(pk_rawprof2_merge(&n, &o, &e) == -1);
    CHECK(strstr(e.msg, "preferred base") != NULL);
    pk_rawprof2_free(&n);
    pk_rawprof2_free(&o);
    pk_rawprof2_free(&a);
    pk_rawprof2_free(&b);
}

TEST(versions_read_each_other_where_nothing_is_lost)
{
    pk_err e;
    /* version 1 through the version-2 reader: flat, version 1 */
    pk_rawprof v1, f;
    CHECK_OK(pk_rawprof_init(&v1, "/bin/prog", bid, 20, BASE, &e), &e);
    pk_pairmap_add(&v1.ranges, BASE + 0x1000, BASE + 0x1010, 5);
    v1.stats.samples = 9;
    CHECK_OK(pk_rawprof_write(&v1, pk_test_path("v1.raw"), &e), &e);
    pk_rawprof2 q;
    CHECK_OK(pk_rawprof2_read(&q, pk_test_path("v1.raw"), &e), &e);
    CHECK_EQ_U64(q.version, 1);
    CHECK_EQ_U64(pk_pairmap_get(&q.flat.ranges, BASE + 0x1000, BASE + 0x1010), 5);
    CHECK_EQ_U64(q.flat.stats.samples, 9);
    CHECK(!pk_rawprof2_has_contexts(&q) && !pk_rawprof2_has_ip(&q));
    /* written as version 2 (flat only), read by the version-1 reader */
    CHECK_OK(pk_rawprof2_write(&q, pk_test_path("v2flat.raw"), &e), &e);
    CHECK_OK(pk_rawprof_read(&f, pk_test_path("v2flat.raw"), &e), &e);
    CHECK_EQ_U64(pk_pairmap_get(&f.ranges, BASE + 0x1000, BASE + 0x1010), 5);
    CHECK_EQ_U64(f.stats.samples, 9);
    CHECK_STR(f.path, "/bin/prog");
    pk_rawprof_free(&f);
    pk_rawprof2_free(&q);
    pk_rawprof_free(&v1);
    /* with contexts: the version-1 reader refuses, naming what it would lose */
    pk_rawprof2 r;
    CHECK_OK(fill(&r, 1, false, &e), &e);
    CHECK_OK(pk_rawprof2_write(&r, pk_test_path("v2ctx.raw"), &e), &e);
    pk_rawprof2_free(&r);
    CHECK(pk_rawprof_read(&f, pk_test_path("v2ctx.raw"), &e) == -1);
    CHECK(strstr(e.msg, "v2ctx.raw: offset ") != NULL);
    CHECK(strstr(e.msg, "calling contexts") != NULL);
}

static void fix_checksum(uint8_t *d, size_t n) { pk_st64(d + n - 8, pk_hash_bytes(d, n - 8)); }

/* Reads `d` (checksum made right first when `fix`) expecting an error whose
 * message holds `want`. */
static void expect_error(uint8_t *d, size_t n, bool fix, const char *want)
{
    pk_rawprof2 q;
    pk_err e;
    if (fix)
        fix_checksum(d, n);
    CHECK(write_bytes(pk_test_path("x.raw"), d, n) == 0);
    if (pk_rawprof2_read(&q, pk_test_path("x.raw"), &e) == 0) {
        fprintf(stderr, "accepted, wanted an error with '%s'\n", want);
        CHECK(0);
        pk_rawprof2_free(&q);
        return;
    }
    if (!strstr(e.msg, "x.raw: offset ") || !strstr(e.msg, want)) {
        fprintf(stderr, "error '%s' lacks 'x.raw: offset' or '%s'\n", e.msg, want);
        CHECK(0);
    }
}

/* The file offset of section `id`'s header (0: absent). */
static size_t section_at(const uint8_t *d, size_t n, uint32_t id)
{
    size_t off = 64 + (pk_ld32(d + 28) + 7) / 8 * 8;
    while (off + 16 <= n - 8) {
        if (pk_ld32(d + off) == id)
            return off;
        off += 16 + pk_ld32(d + off + 4) * pk_ld64(d + off + 8);
    }
    return 0;
}

TEST(truncated_and_corrupt_files_are_errors_with_offsets)
{
    pk_rawprof2 r;
    pk_err e;
    CHECK_OK(fill(&r, 1, false, &e), &e);
    CHECK_OK(pk_rawprof2_write(&r, pk_test_path("c.raw"), &e), &e);
    pk_rawprof2_free(&r);
    size_t n = 0;
    uint8_t *good = slurp(pk_test_path("c.raw"), &n), *d = malloc(n);
    CHECK(good && d);
    if (!good || !d)
        return;
    /* every truncation fails with file and offset (checksum right or not) */
    for (size_t cut = 0; cut < n; cut += 5) {
        memcpy(d, good, cut);
        expect_error(d, cut, false, "");
        if (cut >= 72) {
            memcpy(d, good, cut);
            expect_error(d, cut, true, "");
        }
    }
    /* a flipped bit */
    memcpy(d, good, n);
    d[n - 30] ^= 4;
    expect_error(d, n, false, "checksum");
    /* behind the checksum: a count of 0, a context beyond the table, an
     * unknown section, sections out of order, an empty context */
    size_t ranges = section_at(good, n, PK_RAWSEC_RANGES), ctxs = section_at(good, n, PK_RAWSEC_CONTEXTS);
    CHECK(ranges && ctxs);
    memcpy(d, good, n);
    pk_st64(d + ranges + 16 + 24, 0);
    expect_error(d, n, true, "count 0");
    memcpy(d, good, n);
    pk_st64(d + ranges + 16 + 32 * 2, 99); /* (entries 0 and 1: the flat range and ...) */
    expect_error(d, n, true, "beyond the context table");
    memcpy(d, good, n);
    pk_st32(d + ranges, 77);
    expect_error(d, n, true, "unknown section 77");
    memcpy(d, good, n);
    pk_st32(d + ranges, PK_RAWSEC_AGG_STATS);
    expect_error(d, n, true, "out of order");
    memcpy(d, good, n);
    pk_st64(d + ctxs + 16, 0);
    expect_error(d, n, true, "empty");
    memcpy(d, good, n);
    pk_st64(d + ctxs + 8, UINT64_MAX / 4);
    expect_error(d, n, true, "runs past the end");
    /* a future version */
    memcpy(d, good, n);
    d[8] = 3;
    expect_error(d, n, false, "version 3");
    free(good);
    free(d);
}

int main(void) { return pk_test_main(); }

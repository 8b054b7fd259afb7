/* test_temporal_indexed.c — indexed temporal profiles: reservoir sampling
 * (limits, determinism, rough uniformity), merge, write/load round trip, and
 * rejection of every truncation and every single-byte corruption. */
#include "test.h"
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>

static void build(pk_temporal_profile *p, uint64_t reservoir, uint64_t maxlen, int ntraces, pk_err *e)
{
    pk_temporal_init(p, reservoir, maxlen);
    char name[32];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, i % 7 ? "f%d" : "file.c:f%d", i);
        int64_t k = pk_temporal_intern(p, name, name + (i % 7 ? 0 : 7), 0x1000 + 16 * i, 16, i % 7 ? 0 : PK_TEMPORAL_FUNC_LOCAL, e);
        if (k != i) return;
    }
    for (int t = 0; t < ntraces; t++) {
        uint32_t tr[20];
        uint32_t len = 1 + (uint32_t)t % 20;
        for (uint32_t i = 0; i < len; i++) tr[i] = (uint32_t)(t * 7 + i * 3) % 50;
        tr[0] = (uint32_t)t % 50;  /* identifies the run */
        for (uint32_t i = 0; i < len; i++) p->funcs[tr[i]].covered_runs++;
        p->num_runs++;
        if (pk_temporal_add_trace(p, tr, len, 1, e) != 0) return;
    }
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    *size = (size_t)n;
    return b;
}

TEST(reservoir_limits)
{
    pk_temporal_profile p;
    pk_err e;
    build(&p, 10, 5, 500, &e);
    CHECK_EQ_U64(p.num_funcs, 50);
    CHECK_EQ_U64(p.num_traces, 10);
    CHECK_EQ_U64(p.traces_seen, 500);
    for (uint64_t t = 0; t < p.num_traces; t++) CHECK(p.traces[t].len <= 5);
    pk_temporal_free(&p);
}

TEST(reservoir_is_deterministic)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.pgotemporal", pk_test_tmpdir());
    snprintf(b, sizeof b, "%s/b.pgotemporal", pk_test_tmpdir());
    pk_err e;
    pk_temporal_profile p, q;
    build(&p, 10, 0, 500, &e);
    build(&q, 10, 0, 500, &e);
    CHECK_OK(pk_temporal_write(&p, a, &e), &e);
    CHECK_OK(pk_temporal_write(&q, b, &e), &e);
    size_t na, nb;
    uint8_t *da = slurp(a, &na), *db = slurp(b, &nb);
    CHECK(da && db && na == nb && !memcmp(da, db, na));
    free(da); free(db);
    pk_temporal_free(&p);
    pk_temporal_free(&q);
}

TEST(reservoir_is_roughly_uniform)
{
    /* 2000 runs, reservoir 100: the kept runs should come from all over the
     * stream (algorithm R), not only from its start or its end. */
    pk_temporal_profile p;
    pk_err e;
    pk_temporal_init(&p, 100, 0);
    for (int i = 0; i < 2000; i++) {
        char n[16];
        snprintf(n, sizeof n, "r%d", i);
        CHECK(pk_temporal_intern(&p, n, n, 0, 0, 0, &e) == i);
        uint32_t f = (uint32_t)i;
        CHECK_OK(pk_temporal_add_trace(&p, &f, 1, 1, &e), &e);
    }
    int early = 0;
    for (uint64_t t = 0; t < p.num_traces; t++) early += p.traces[t].funcs[0] < 1000;
    CHECK(early > 30 && early < 70);
    pk_temporal_free(&p);
}

TEST(round_trip)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rt.pgotemporal", pk_test_tmpdir());
    pk_err e;
    pk_temporal_profile p, q;
    build(&p, 100, 0, 30, &e);
    p.flags = PK_TEMPORAL_HAS_COUNTS;
    p.funcs[3].entry_count = 123456789012ull;
    p.build_id_len = 20;
    for (int i = 0; i < 20; i++) p.build_id[i] = (uint8_t)i;
    CHECK_OK(pk_temporal_write(&p, path, &e), &e);
    CHECK_OK(pk_temporal_load(&q, path, &e), &e);
    CHECK_EQ_U64(q.num_funcs, p.num_funcs);
    CHECK_EQ_U64(q.num_traces, 30);
    CHECK_EQ_U64(q.traces_seen, 30);
    CHECK_EQ_U64(q.num_runs, 30);
    CHECK_EQ_U64(q.flags, PK_TEMPORAL_HAS_COUNTS);
    CHECK_EQ_U64(q.build_id_len, 20);
    CHECK(!memcmp(q.build_id, p.build_id, 20));
    for (uint64_t i = 0; i < q.num_funcs; i++) {
        CHECK_STR(q.funcs[i].name, p.funcs[i].name);
        CHECK_STR(q.funcs[i].symbol, p.funcs[i].symbol);
        CHECK_EQ_U64(q.funcs[i].addr, p.funcs[i].addr);
        CHECK_EQ_U64(q.funcs[i].covered_runs, p.funcs[i].covered_runs);
        CHECK_EQ_U64(q.funcs[i].entry_count, p.funcs[i].entry_count);
        CHECK_EQ_U64(q.funcs[i].flags, p.funcs[i].flags);
    }
    CHECK_STR(q.funcs[7].name, "file.c:f7");
    CHECK_STR(q.funcs[7].symbol, "f7");
    for (uint64_t t = 0; t < q.num_traces; t++) {
        CHECK_EQ_U64(q.traces[t].len, p.traces[t].len);
        CHECK(!memcmp(q.traces[t].funcs, p.traces[t].funcs, q.traces[t].len * 4));
    }
    pk_temporal_free(&p);
    pk_temporal_free(&q);
}

TEST(merge_unsaturated_concatenates_and_saturated_keeps_limit)
{
    pk_err e;
    pk_temporal_profile a, b;
    build(&a, 100, 0, 30, &e);
    build(&b, 100, 0, 40, &e);
    uint64_t cov = a.funcs[0].covered_runs + b.funcs[0].covered_runs;
    CHECK_OK(pk_temporal_merge(&a, &b, &e), &e);
    CHECK_EQ_U64(a.num_traces, 70);
    CHECK_EQ_U64(a.traces_seen, 70);
    CHECK_EQ_U64(a.num_runs, 70);
    CHECK_EQ_U64(a.funcs[0].covered_runs, cov);
    CHECK_EQ_U64(a.num_funcs, 50);
    CHECK_OK(pk_temporal_merge(&a, &b, &e), &e);
    CHECK_EQ_U64(a.num_traces, 100);
    CHECK_EQ_U64(a.traces_seen, 110);
    for (uint64_t t = 0; t < a.num_traces; t++) {
        CHECK(a.traces[t].len >= 1);
        for (uint32_t i = 0; i < a.traces[t].len; i++) CHECK(a.traces[t].funcs[i] < a.num_funcs);
    }
    b.build_id_len = 1; b.build_id[0] = 1;
    a.build_id_len = 1; a.build_id[0] = 2;
    CHECK(pk_temporal_merge(&a, &b, &e) == -1);
    CHECK(strstr(e.msg, "build-id mismatch") != NULL);
    pk_temporal_free(&a);
    pk_temporal_free(&b);
}

TEST(every_truncation_and_every_flipped_byte_is_rejected)
{
    char path[512];
    snprintf(path, sizeof path, "%s/c.pgotemporal", pk_test_tmpdir());
    pk_err e;
    pk_temporal_profile p, q;
    build(&p, 100, 0, 12, &e);
    CHECK_OK(pk_temporal_write(&p, path, &e), &e);
    pk_temporal_free(&p);
    size_t n;
    uint8_t *d = slurp(path, &n);
    CHECK(d != NULL);
    if (!d) return;
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, d, len);
        if (pk_temporal_parse(&q, c, len, "cut", &e) == 0) { bad++; pk_temporal_free(&q); }
        else if (!strstr(e.msg, "cut: offset ")) bad++;
        free(c);
    }
    CHECK_EQ_U64(bad, 0);
    for (size_t i = 0; i < n; i++) {
        if (i >= 24 && i < 32) continue; /* the checksum itself: still a mismatch, tested below */
        d[i] ^= 0x20;
        if (pk_temporal_parse(&q, d, n, "flip", &e) == 0) { bad++; pk_temporal_free(&q); }
        d[i] ^= 0x20;
    }
    d[25] ^= 1;
    CHECK(pk_temporal_parse(&q, d, n, "flip", &e) == -1);
    CHECK(strstr(e.msg, "checksum") != NULL);
    d[25] ^= 1;
    CHECK_EQ_U64(bad, 0);
    CHECK_OK(pk_temporal_parse(&q, d, n, "good", &e), &e);
    pk_temporal_free(&q);
    free(d);
}

/* fuzz_temporal_indexed: a trace count bounded only by the reservoir size the
 * file declares sized an allocation (calloc of 2^57 bytes: "out of memory"
 * for a corrupt 160-byte file). */
TEST(trace_count_is_bounded_by_the_file)
{
    uint8_t d[PK_TEMPORAL_INDEXED_HEADER_SIZE + 16];
    memset(d, 0, sizeof d);
    memcpy(d, PK_TEMPORAL_INDEXED_MAGIC, 8);
    pk_st32(d + 8, PK_TEMPORAL_INDEXED_VERSION);
    pk_st64(d + 16, sizeof d);
    pk_st64(d + 40, 1ull << 52);   /* traces */
    pk_st64(d + 56, 1ull << 60);   /* reservoir size */
    pk_st64(d + 24, pk_temporal_checksum(d, sizeof d));
    pk_temporal_profile q;
    pk_err e;
    CHECK(pk_temporal_parse(&q, d, sizeof d, "big", &e) == -1);
    CHECK(strstr(e.msg, "big: offset 40: ") != NULL);
    CHECK(strstr(e.msg, "traces do not fit") != NULL);
}

/* fuzz_temporal_indexed: a profile that claims 2^63 runs, merged twice: the
 * run total wrapped to 0 and every trace was kept, more than the reservoir
 * holds (the profile written could not be loaded back). */
TEST(merge_of_huge_run_counts_keeps_the_reservoir_size)
{
    pk_err e;
    pk_temporal_profile src, m;
    build(&src, 100, 0, 4, &e);
    src.traces_seen = 1ull << 63;
    pk_temporal_init(&m, 3, 8);
    CHECK_OK(pk_temporal_merge(&m, &src, &e), &e);
    CHECK_OK(pk_temporal_merge(&m, &src, &e), &e);
    CHECK(m.num_traces <= 3);
    CHECK_EQ_U64(m.traces_seen, UINT64_MAX);
    char path[512];
    snprintf(path, sizeof path, "%s/huge.pgotemporal", pk_test_tmpdir());
    CHECK_OK(pk_temporal_write(&m, path, &e), &e);
    pk_temporal_profile back;
    CHECK_OK(pk_temporal_load(&back, path, &e), &e);
    pk_temporal_free(&back);
    pk_temporal_free(&m);
    pk_temporal_free(&src);
}

int main(void) { return pk_test_main(); }

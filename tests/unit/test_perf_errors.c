/* test_perf_errors.c — the perf.data reader on malformed input: header
 * and record-bounds errors name the offset, and in-process mutation fuzzing
 * (run under ASan+UBSan in the san build) never crashes. */
#include "test.h"
#include "perf/perf_data.h"
#include "perf_fixtures.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- header and bounds errors ---- */

static void expect_error(const void *d, size_t n, const char *needle)
{
    const char *path = pk_test_path("bad.data");
    pf_write_file(path, d, n);
    pf_got g;
    pk_perf_callbacks cb = pf_callbacks(&g);
    pk_err e;
    e.msg[0] = 0;
    int rc = pk_perf_read(path, &cb, NULL, &e);
    CHECK(rc != 0);
    if (!strstr(e.msg, needle) || !strstr(e.msg, "bad.data")) {
        pk_test_failed_checks++;
        fprintf(stderr, "error \"%s\" does not mention \"%s\"\n", e.msg, needle);
    }
}

TEST(header_errors_are_clear)
{
    uint8_t h[128];
    memset(h, 0, sizeof h);
    memcpy(h, "PERFFILE", 8);
    pk_st64(h + 8, 104);
    expect_error(h, sizeof h, "PERFFILE");
    memcpy(h, "2ELIFREP", 8);
    expect_error(h, sizeof h, "byte order");
    memcpy(h, "PERFILE2", 8);
    pk_st64(h + 8, 99);
    expect_error(h, sizeof h, "unknown header size 99");
    memcpy(h, "NOTPERF!", 8);
    expect_error(h, sizeof h, "not a perf.data");
    expect_error(h, 5, "too short");
    expect_error(h, 0, "empty");
}

TEST(record_bounds_errors_name_the_offset)
{
    const char *path = pk_test_path("ref.data");
    pk_err e;
    CHECK_OK(pf_write_reference(path, false, false, 3, &e), &e);
    FILE *f = fopen(path, "rb");
    uint8_t d[65536];
    size_t n = fread(d, 1, sizeof d, f);
    fclose(f);
    uint64_t data_off = pk_ld64(d + 40), data_size = pk_ld64(d + 48);
    /* cut in the middle of the data, at the data end (no feature table) */
    expect_error(d, (size_t)(data_off + data_size / 2), "offset");
    expect_error(d, (size_t)(data_off + data_size), "feature table");
    /* record size < 8 */
    uint8_t c[65536];
    memcpy(c, d, n);
    pk_st16(c + data_off + 6, 4);
    expect_error(c, n, "smaller than 8");
    /* record size past the data end */
    memcpy(c, d, n);
    pk_st16(c + data_off + 6, 65000);
    expect_error(c, n, "runs past");
    /* find the first SAMPLE and corrupt its callchain nr and its branch nr */
    uint64_t pos = data_off;
    while (pos < data_off + data_size && pk_ld32(d + pos) != 9)
        pos += pk_ld16(d + pos + 6);
    CHECK(pos < data_off + data_size);
    memcpy(c, d, n);
    pk_st64(c + pos + 8 + 32, 1ull << 60);     /* callchain nr after ip,tid,time,period */
    expect_error(c, n, "callchain nr");
    char want[64];
    snprintf(want, sizeof want, "offset %llu", (unsigned long long)pos);
    expect_error(c, n, want);
    memcpy(c, d, n);
    pk_st16(c + pos + 6, 8 + 16);               /* sample shorter than its fields */
    pk_st32(c + pos + 24, 9);                   /* keep the stream in sync: fake next header */
    pk_st16(c + pos + 24 + 6, (uint16_t)(pk_ld16(d + pos + 6) - 24));
    expect_error(c, n, "overflows the record");
    /* attr with a sample_type bit we cannot lay out */
    memcpy(c, d, n);
    pk_st64(c + pk_ld64(d + 24) + 24, 1ull << 40);
    expect_error(c, n, "sample_type");
}

/* ---- mutation fuzzing in-process (runs under ASan+UBSan in the san build) ---- */

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(*n);
    if (fread(d, 1, *n, f) != *n)
        abort();
    fclose(f);
    return d;
}

static void fuzz_bytes(const uint8_t *orig, size_t n, int iters, uint64_t seed)
{
    uint8_t *d = malloc(n);
    const char *path = pk_test_path("fuzz.data");
    int errors = 0;
    for (int it = 0; it < iters; it++) {
        memcpy(d, orig, n);
        size_t len = n;
        int k = 1 + (int)(lcg(&seed) % 4);
        for (int j = 0; j < k; j++) {
            size_t at = lcg(&seed) % n;
            switch (lcg(&seed) % 4) {
            case 0: d[at] = (uint8_t)lcg(&seed); break;
            case 1: d[at] ^= (uint8_t)(1u << (lcg(&seed) % 8)); break;
            case 2: d[at] = 0xff; break;
            default: if (lcg(&seed) % 4 == 0) len = at; break;
            }
        }
        pf_write_file(path, d, len);
        pf_got g;
        pk_perf_callbacks cb = pf_callbacks(&g);
        pk_err e;
        if (pk_perf_read(path, &cb, NULL, &e)) {
            errors++;
            CHECK(strstr(e.msg, "fuzz.data") != NULL);
        }
    }
    CHECK(errors > 0);      /* the mutations do hit the checks */
    free(d);
}

/* A pipe-mode stream with 1-3 bytes after its last record (a writer that
 * stopped, padding): the records before are read, the tail is reported
 * with its offset, whether the stream comes as a file, from memory or
 * through a pipe. A file-mode data section cut the same way stays an
 * error (its header promised the bytes). */
TEST(pipe_mode_tail_is_a_warning)
{
    pf_bbuf b = {0};
    pf_pipe_stream(&b);
    size_t whole = b.len;
    pf_got g0;
    pk_perf_callbacks cb0 = pf_callbacks(&g0);
    pk_perf_stats st0;
    pk_err e;
    CHECK_OK(pk_perf_read_mem(b.d, whole, "p.data", &cb0, &st0, &e), &e);
    CHECK(st0.samples > 0);
    CHECK_EQ_U64(st0.tail_bytes, 0);
    for (size_t k = 1; k <= 3; k++) {
        pf_bbuf t = {0};
        pf_pipe_stream(&t);
        for (size_t i = 0; i < k; i++)
            pf_bput(&t, "x", 1);
        pk_perf_stats st;
        pf_got g;
        pk_perf_callbacks cb = pf_callbacks(&g);
        CHECK_OK(pk_perf_read_mem(t.d, t.len, "p.data", &cb, &st, &e), &e);
        CHECK_EQ_U64(st.samples, st0.samples);
        CHECK_EQ_U64(st.tail_bytes, k);
        CHECK_EQ_U64(st.tail_offset, whole);
        char w[512];
        char want[64];
        snprintf(want, sizeof want, "offset %zu: %zu bytes after the last record", whole, k);
        CHECK(pk_perf_stats_warning(&st, w, sizeof w) > 0 && strstr(w, want));
        /* through a pipe (the stream fits in its buffer) */
        int fds[2];
        CHECK(pipe(fds) == 0);
        CHECK(write(fds[1], t.d, t.len) == (ssize_t)t.len);
        close(fds[1]);
        CHECK_OK(pk_perf_read_fd(fds[0], "-", &cb, &st, &e), &e);
        close(fds[0]);
        CHECK_EQ_U64(st.samples, st0.samples);
        CHECK_EQ_U64(st.tail_bytes, k);
        CHECK_EQ_U64(st.tail_offset, whole);
        free(t.d);
    }
    free(b.d);
}

TEST(mutated_files_give_errors_never_crashes)
{
    const char *ref = pk_test_path("fz-ref.data"), *z = pk_test_path("fz-z.data");
    pk_err e;
    CHECK_OK(pf_write_reference(ref, true, true, 12, &e), &e);
    pf_compress_copy(ref, z, 500);
    size_t n;
    uint8_t *d = slurp(ref, &n);
    fuzz_bytes(d, n, 1500, 1);
    free(d);
    d = slurp(z, &n);
    fuzz_bytes(d, n, 800, 2);
    free(d);
    pf_bbuf b = {0};
    pf_all_fields_stream(&b, 16);
    fuzz_bytes(b.d, b.len, 800, 3);
    b.len = 0;
    pf_pipe_stream(&b);
    fuzz_bytes(b.d, b.len, 800, 4);
    free(b.d);
}

int main(void) { return pk_test_main(); }

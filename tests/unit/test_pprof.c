/* test_pprof.c — the pprof reader on hand-built protobuf messages (every
 * field placed by hand, so the test does not share the reader's encoder
 * assumptions), errors that name the offset, gzip limits, mutation fuzzing
 * (run under ASan+UBSan in the san build), and writer → reader round trips. */
#include "test.h"
#include "pprof/pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

/* ---- a tiny protobuf encoder ---- */
typedef struct pb {
    uint8_t d[1 << 16];
    size_t n;
} pb;

static void pb_byte(pb *b, uint8_t c)
{
    if (b->n < sizeof b->d)
        b->d[b->n++] = c;
}
static void pb_varint(pb *b, uint64_t v)
{
    do {
        pb_byte(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
    } while (v);
}
static void pb_tag(pb *b, unsigned num, unsigned wt) { pb_varint(b, (uint64_t)num << 3 | wt); }
static void pb_u(pb *b, unsigned num, uint64_t v) { pb_tag(b, num, 0); pb_varint(b, v); }
static void pb_bytes(pb *b, unsigned num, const void *p, size_t n)
{
    pb_tag(b, num, 2);
    pb_varint(b, n);
    for (size_t i = 0; i < n; i++)
        pb_byte(b, ((const uint8_t *)p)[i]);
}
static void pb_msg(pb *b, unsigned num, const pb *m) { pb_bytes(b, num, m->d, m->n); }
static void pb_str(pb *b, const char *s) { pb_bytes(b, 6, s, strlen(s)); }
static void pb_packed(pb *b, unsigned num, const uint64_t *v, size_t n)
{
    pb m = {.n = 0};
    for (size_t i = 0; i < n; i++)
        pb_varint(&m, v[i]);
    pb_msg(b, num, &m);
}

/* Strings of the reference profile, by index. */
enum { S_EMPTY, S_SAMPLES, S_COUNT, S_CPU, S_NS, S_EXE, S_BID, S_LIBC, S_GOBID, S_MAIN, S_FILE, S_NSTR };
static const char *const strs[S_NSTR] = {
    "", "samples", "count", "cpu", "nanoseconds", "/bin/app", "0123456789abcdef0123456789abcdef01234567",
    "/lib/libc.so.6", "abcDEF/ghi_jk/lmn", "main", "app.go",
};

static void value_type(pb *b, unsigned field, uint64_t type, uint64_t unit)
{
    pb m = {.n = 0};
    pb_u(&m, 1, type);
    pb_u(&m, 2, unit);
    pb_msg(b, field, &m);
}

static void mapping(pb *b, uint64_t id, uint64_t start, uint64_t limit, uint64_t off, uint64_t file, uint64_t bid)
{
    pb m = {.n = 0};
    pb_u(&m, 1, id);
    pb_u(&m, 2, start);
    pb_u(&m, 3, limit);
    pb_u(&m, 4, off);
    pb_u(&m, 5, file);
    pb_u(&m, 6, bid);
    pb_msg(b, 3, &m);
}

static void location(pb *b, uint64_t id, uint64_t map, uint64_t addr, int lines)
{
    pb m = {.n = 0};
    pb_u(&m, 1, id);
    if (map)
        pb_u(&m, 2, map);
    if (addr)
        pb_u(&m, 3, addr);
    for (int i = 0; i < lines; i++) {
        pb l = {.n = 0};
        pb_u(&l, 1, 1);
        pb_u(&l, 2, (uint64_t)(10 + i));
        pb_msg(&m, 4, &l);
    }
    pb_msg(b, 4, &m);
}

static void sample(pb *b, const uint64_t *locs, size_t n, int64_t v0, int64_t v1)
{
    pb m = {.n = 0};
    pb_packed(&m, 1, locs, n);
    uint64_t v[2] = {(uint64_t)v0, (uint64_t)v1};
    pb_packed(&m, 2, v, 2);
    pb_msg(b, 2, &m);
}

/* The reference: samples/count + cpu/nanoseconds; the exe (hex build-id) and
 * libc (a Go-style build id); locations 1-3 in the exe (2 has inlined
 * lines), 4 in libc, 5 a kernel address without mapping; samples written
 * before the locations and strings last, as Go does. */
static void reference(pb *b, bool kernel_sample)
{
    b->n = 0;
    value_type(b, 1, S_SAMPLES, S_COUNT);
    value_type(b, 1, S_CPU, S_NS);
    uint64_t s1[] = {1, 2, 3}, s2[] = {4, 2, 3}, s3[] = {5, 1, 2, 3};
    sample(b, s1, 3, 7, 70000000);
    sample(b, s2, 3, 2, 20000000);
    if (kernel_sample)
        sample(b, s3, 4, 1, 10000000);
    mapping(b, 1, 0x400000, 0x500000, 0x1000, S_EXE, S_BID);
    mapping(b, 2, 0x7f0000000000, 0x7f0000100000, 0, S_LIBC, S_GOBID);
    location(b, 1, 1, 0x401234, 1);
    location(b, 2, 1, 0x402000, 2);
    location(b, 3, 1, 0x403000, 1);
    location(b, 4, 2, 0x7f0000000100, 0);
    location(b, 5, 0, 0xffffffff81000010ull, 0);
    {
        pb f = {.n = 0};
        pb_u(&f, 1, 1);
        pb_u(&f, 2, S_MAIN);
        pb_u(&f, 4, S_FILE);
        pb_msg(b, 5, &f);
    }
    value_type(b, 11, S_CPU, S_NS);
    pb_u(b, 12, 10000000);
    for (int i = 0; i < S_NSTR; i++)
        pb_str(b, strs[i]);
}

/* ---- what the callbacks saw ---- */
typedef struct got {
    int attrs, mmaps, samples;
    pk_mmap_event m[8];
    char files[8][64];
    uint64_t ip[8], period[8], nr[8], chain[8][16];
    uint32_t pid[8];
    uint16_t misc[8];
    const pk_pprof_stats *st;
    bool nonleaf_seen;          /* stats.nonleaf_minus_one was set at the first sample */
} got;

static int g_attr(void *ctx, const pk_perf_attr *a)
{
    got *g = ctx;
    g->attrs++;
    CHECK_EQ_U64(a->sample_type & PK_SAMPLE_CALLCHAIN, PK_SAMPLE_CALLCHAIN);
    return 0;
}
static int g_mmap(void *ctx, const pk_mmap_event *m)
{
    got *g = ctx;
    if (g->mmaps < 8) {
        g->m[g->mmaps] = *m;
        snprintf(g->files[g->mmaps], sizeof g->files[0], "%s", m->filename);
    }
    g->mmaps++;
    return 0;
}
static int g_sample(void *ctx, const pk_sample *s)
{
    got *g = ctx;
    if (!g->samples)
        g->nonleaf_seen = g->st->nonleaf_minus_one;
    if (g->samples < 8) {
        int i = g->samples;
        g->ip[i] = s->ip;
        g->period[i] = s->period;
        g->pid[i] = s->pid;
        g->misc[i] = s->misc;
        g->nr[i] = s->callchain_nr;
        for (uint64_t k = 0; k < s->callchain_nr && k < 16; k++)
            g->chain[i][k] = s->callchain[k];
    }
    g->samples++;
    return 0;
}

static int read_pb(const void *d, size_t n, const pk_pprof_opts *o, got *g, pk_pprof_stats *st, pk_err *e)
{
    memset(g, 0, sizeof *g);
    g->st = st;
    pk_perf_callbacks cb = {0};
    cb.ctx = g;
    cb.attr = g_attr;
    cb.mmap = g_mmap;
    cb.sample = g_sample;
    e->msg[0] = 0;
    return pk_pprof_read_mem(d, n, "t.pb", o, &cb, st, e);
}

TEST(reference_profile_becomes_perf_events)
{
    static pb b;
    reference(&b, true);
    got g;
    pk_pprof_stats st;
    pk_err e;
    CHECK_OK(read_pb(b.d, b.n, NULL, &g, &st, &e), &e);
    CHECK_EQ_U64(g.attrs, 1);
    CHECK_EQ_U64(g.mmaps, 2);
    CHECK_EQ_U64(g.m[0].addr, 0x400000);
    CHECK_EQ_U64(g.m[0].len, 0x100000);
    CHECK_EQ_U64(g.m[0].pgoff, 0x1000);
    CHECK_STR(g.files[0], "/bin/app");
    CHECK(g.m[0].has_build_id && g.m[0].build_id_size == 20);
    CHECK_EQ_U64(g.m[0].build_id[0], 0x01);
    CHECK_EQ_U64(g.m[0].build_id[19], 0x67);
    CHECK(!g.m[1].has_build_id); /* "abcDEF/ghi_jk/lmn" is no GNU build-id */
    CHECK_STR(g.files[1], "/lib/libc.so.6");
    CHECK_EQ_U64(st.build_ids_hex, 1);
    CHECK_EQ_U64(st.build_ids_other, 1);
    CHECK_EQ_U64(g.samples, 3);
    /* value: the "samples" type by default */
    CHECK_EQ_U64(st.value_index, 0);
    CHECK_STR(st.value_type, "samples");
    CHECK_EQ_U64(g.period[0], 7);
    CHECK_EQ_U64(g.period[1], 2);
    CHECK_EQ_U64(st.value_total, 10);
    /* user chain: marker, then the addresses as stored, leaf first */
    CHECK_EQ_U64(g.ip[0], 0x401234);
    CHECK_EQ_U64(g.nr[0], 4);
    CHECK_EQ_U64(g.chain[0][0], PK_CONTEXT_USER);
    CHECK_EQ_U64(g.chain[0][1], 0x401234);
    CHECK_EQ_U64(g.chain[0][2], 0x402000);
    CHECK_EQ_U64(g.chain[0][3], 0x403000);
    CHECK_EQ_U64(g.chain[1][1], 0x7f0000000100);
    /* kernel leaf: kernel marker, then user marker, as perf writes */
    CHECK_EQ_U64(g.ip[2], 0xffffffff81000010ull);
    CHECK_EQ_U64(g.misc[2] & 7, PK_CPUMODE_KERNEL);
    CHECK_EQ_U64(g.nr[2], 6);
    CHECK_EQ_U64(g.chain[2][0], PK_CONTEXT_KERNEL);
    CHECK_EQ_U64(g.chain[2][1], 0xffffffff81000010ull);
    CHECK_EQ_U64(g.chain[2][2], PK_CONTEXT_USER);
    CHECK_EQ_U64(g.chain[2][3], 0x401234);
    /* stats */
    CHECK_EQ_U64(st.locations, 5);
    CHECK_EQ_U64(st.locations_inline, 1);
    CHECK_EQ_U64(st.locations_no_mapping, 1);
    CHECK_EQ_U64(st.period, 10000000);
    CHECK_STR(st.period_type, "cpu");
    CHECK(st.producer == PK_PPROF_PRODUCER_GO); /* a function in a .go file */
    CHECK(st.nonleaf_minus_one && g.nonleaf_seen);
    CHECK(!st.gzip);
}

TEST(value_choice_and_return_addresses)
{
    static pb b;
    reference(&b, false);
    got g;
    pk_pprof_stats st;
    pk_err e;
    pk_pprof_opts o;
    pk_pprof_opts_init(&o);
    o.sample_type = "cpu";
    CHECK_OK(read_pb(b.d, b.n, &o, &g, &st, &e), &e);
    CHECK_EQ_U64(g.period[0], 70000000);
    CHECK_STR(st.value_unit, "nanoseconds");
    o.sample_type = "cpu/nanoseconds";
    CHECK_OK(read_pb(b.d, b.n, &o, &g, &st, &e), &e);
    CHECK_EQ_U64(st.value_index, 1);
    o.sample_type = "cpu/seconds";
    CHECK(read_pb(b.d, b.n, &o, &g, &st, &e) != 0);
    CHECK(strstr(e.msg, "no sample type 'cpu/seconds'") && strstr(e.msg, "samples/count, cpu/nanoseconds"));
    o.sample_type = NULL;
    o.sample_index = 1;
    CHECK_OK(read_pb(b.d, b.n, &o, &g, &st, &e), &e);
    CHECK_EQ_U64(g.period[1], 20000000);
    o.sample_index = 2;
    CHECK(read_pb(b.d, b.n, &o, &g, &st, &e) != 0 && strstr(e.msg, "index 2"));
    /* non-leaf frames back to return addresses; the leaf stays */
    pk_pprof_opts_init(&o);
    o.restore_return_addresses = true;
    o.pid = 42;
    CHECK_OK(read_pb(b.d, b.n, &o, &g, &st, &e), &e);
    CHECK(st.restored_return_addresses);
    CHECK_EQ_U64(g.chain[0][1], 0x401234);
    CHECK_EQ_U64(g.chain[0][2], 0x402001);
    CHECK_EQ_U64(g.chain[0][3], 0x403001);
    CHECK_EQ_U64(g.pid[0], 42);
    CHECK_EQ_U64(g.m[0].pid, 42);
    /* ... unless the producer is said to store return addresses already */
    o.nonleaf = PK_PPROF_NONLEAF_RETURN;
    CHECK_OK(read_pb(b.d, b.n, &o, &g, &st, &e), &e);
    CHECK(!st.nonleaf_minus_one && !st.restored_return_addresses);
    CHECK_EQ_U64(g.chain[0][2], 0x402000);
}

/* perf_data_converter's layout: "<event>_sample" and "<event>_event" types,
 * "perf-version:" comments, no "samples" type: the first type is used. */
TEST(perf_data_converter_layout)
{
    static const char *const pdc[] = {"", "cpu-clock_sample", "count", "cpu-clock_event", "perf-version:6.1", "/bin/x"};
    static pb b;
    b.n = 0;
    value_type(&b, 1, 1, 2);
    value_type(&b, 1, 3, 2);
    pb_u(&b, 14, 3); /* default_sample_type: the event type (not what we weigh by) */
    pb_u(&b, 13, 4);
    mapping(&b, 1, 0x400000, 0x401000, 0, 5, 0);
    location(&b, 1, 1, 0x400100, 0);
    location(&b, 2, 1, 0x400200 - 1, 0);
    uint64_t s1[] = {1, 2};
    sample(&b, s1, 2, 3, 3000);
    for (size_t i = 0; i < sizeof pdc / sizeof pdc[0]; i++)
        pb_str(&b, pdc[i]);
    got g;
    pk_pprof_stats st;
    pk_err e;
    CHECK_OK(read_pb(b.d, b.n, NULL, &g, &st, &e), &e);
    CHECK(st.producer == PK_PPROF_PRODUCER_PERF_DATA_CONVERTER);
    CHECK(st.nonleaf_minus_one);
    CHECK_STR(st.value_type, "cpu-clock_sample");
    CHECK_EQ_U64(g.period[0], 3);
    CHECK_EQ_U64(g.chain[0][2], 0x4001ff);
    CHECK(!g.m[0].has_build_id);
    CHECK_EQ_U64(st.build_ids_hex + st.build_ids_other, 0);
}

/* Ids need not be dense or ordered; a limit on table sizes holds. */
TEST(sparse_ids_and_entry_limit)
{
    static pb b;
    b.n = 0;
    value_type(&b, 1, S_SAMPLES, S_COUNT);
    value_type(&b, 1, S_CPU, S_NS);
    mapping(&b, 77, 0x400000, 0x500000, 0, S_EXE, 0);
    location(&b, 9000, 77, 0x400300, 0);
    location(&b, 5, 77, 0x400100, 0);
    location(&b, 1ull << 40, 77, 0x400200, 0);
    uint64_t s1[] = {5, 1ull << 40, 9000};
    sample(&b, s1, 3, 4, 40);
    for (int i = 0; i < S_NSTR; i++)
        pb_str(&b, strs[i]);
    got g;
    pk_pprof_stats st;
    pk_err e;
    CHECK_OK(read_pb(b.d, b.n, NULL, &g, &st, &e), &e);
    CHECK_EQ_U64(g.samples, 1);
    CHECK_EQ_U64(g.chain[0][1], 0x400100);
    CHECK_EQ_U64(g.chain[0][2], 0x400200);
    CHECK_EQ_U64(g.chain[0][3], 0x400300);
    pk_pprof_opts o;
    pk_pprof_opts_init(&o);
    o.max_entries = 3;
    CHECK(read_pb(b.d, b.n, &o, &g, &st, &e) != 0 && strstr(e.msg, "4 locations and mappings, more than the limit of 3"));
}

/* Locations without address: stacks cut, leaves skipped, and an error when
 * nothing is left. */
TEST(symbolic_only_locations)
{
    static pb b;
    b.n = 0;
    value_type(&b, 1, S_SAMPLES, S_COUNT);
    uint64_t s1[] = {1, 2, 3}, s2[] = {2, 1};
    sample(&b, s1, 3, 5, 0);
    mapping(&b, 1, 0x400000, 0x500000, 0, S_EXE, 0);
    location(&b, 1, 1, 0x401000, 1);
    location(&b, 2, 0, 0, 1);
    location(&b, 3, 1, 0x403000, 1);
    for (int i = 0; i < S_NSTR; i++)
        pb_str(&b, strs[i]);
    got g;
    pk_pprof_stats st;
    pk_err e;
    /* Samples carry 2 values but 1 sample type is declared: an error. */
    CHECK(read_pb(b.d, b.n, NULL, &g, &st, &e) != 0);
    CHECK(strstr(e.msg, "2 values") && strstr(e.msg, "1 sample types") && strstr(e.msg, "t.pb: offset "));

    b.n = 0;
    value_type(&b, 1, S_SAMPLES, S_COUNT);
    value_type(&b, 1, S_CPU, S_NS);
    sample(&b, s1, 3, 5, 0);
    sample(&b, s2, 2, 3, 0);
    mapping(&b, 1, 0x400000, 0x500000, 0, S_EXE, 0);
    location(&b, 1, 1, 0x401000, 1);
    location(&b, 2, 0, 0, 1);
    location(&b, 3, 1, 0x403000, 1);
    for (int i = 0; i < S_NSTR; i++)
        pb_str(&b, strs[i]);
    CHECK_OK(read_pb(b.d, b.n, NULL, &g, &st, &e), &e);
    CHECK_EQ_U64(g.samples, 1);
    CHECK_EQ_U64(g.nr[0], 2); /* marker + leaf: cut at location 2 */
    CHECK_EQ_U64(st.samples_cut, 1);
    CHECK_EQ_U64(st.frames_dropped, 2);
    CHECK_EQ_U64(st.samples_no_address, 1);
    CHECK_EQ_U64(st.locations_no_address, 1);

    b.n = 0;
    value_type(&b, 1, S_SAMPLES, S_COUNT);
    uint64_t s3[] = {1};
    pb m = {.n = 0};
    pb_packed(&m, 1, s3, 1);
    pb_u(&m, 2, 4);
    pb_msg(&b, 2, &m);
    location(&b, 1, 0, 0, 1);
    for (int i = 0; i < S_NSTR; i++)
        pb_str(&b, strs[i]);
    CHECK(read_pb(b.d, b.n, NULL, &g, &st, &e) != 0);
    CHECK(strstr(e.msg, "nothing usable") && strstr(e.msg, "symbolic-only"));
}

static void expect_error(const pb *b, const char *needle)
{
    got g;
    pk_pprof_stats st;
    pk_err e;
    int rc = read_pb(b->d, b->n, NULL, &g, &st, &e);
    CHECK(rc != 0);
    if (rc == 0 || !strstr(e.msg, needle) || !strstr(e.msg, "t.pb")) {
        pk_test_failed_checks++;
        fprintf(stderr, "error \"%s\" does not mention \"%s\"\n", e.msg, needle);
    }
}

TEST(corrupt_structure_errors)
{
    static pb b, r;
    reference(&r, false);
    /* a sample pointing at a location that does not exist */
    b = r;
    uint64_t bad[] = {1, 99};
    sample(&b, bad, 2, 1, 1);
    expect_error(&b, "location id 99 (frame 1) does not exist");
    /* a location pointing at a mapping that does not exist */
    b = r;
    size_t loc_at = b.n;
    location(&b, 6, 7, 0x1000, 0);
    char want[64];
    snprintf(want, sizeof want, "offset %zu: Location 6 refers to mapping 7", loc_at);
    expect_error(&b, want);
    /* duplicate ids */
    b = r;
    mapping(&b, 1, 0, 0x10, 0, 0, 0);
    expect_error(&b, "Mapping id 1 appears twice");
    b = r;
    loc_at = b.n;
    location(&b, 2, 1, 0x401000, 0);
    snprintf(want, sizeof want, "offset %zu: Location id 2 appears twice", loc_at);
    expect_error(&b, want);
    /* a string index past the table */
    b = r;
    mapping(&b, 3, 0x10000, 0x20000, 0, 500, 0);
    expect_error(&b, "string index 500 is outside the string table");
    /* a mapping that ends before it starts */
    b = r;
    mapping(&b, 3, 0x20000, 0x10000, 0, 0, 0);
    expect_error(&b, "ends (0x10000) before it starts (0x20000)");
    /* wire type that does not fit the schema: Sample.location_id as 32-bit */
    b = r;
    {
        pb m = {.n = 0};
        pb_tag(&m, 1, 5);
        for (int i = 0; i < 4; i++)
            pb_byte(&m, 1);
        pb_msg(&b, 2, &m);
    }
    expect_error(&b, "Sample.location_id (field 1) has wire type 32-bit");
    /* a length far past the end */
    b = r;
    size_t at = b.n;
    pb_tag(&b, 4, 2);
    pb_varint(&b, 1ull << 62);
    snprintf(want, sizeof want, "offset %zu: Profile: field 4 (location): length", at + 1);
    expect_error(&b, want);
    /* a group */
    b = r;
    pb_tag(&b, 20, 3);
    expect_error(&b, "group");
    /* a Profile field of the wrong type */
    b = r;
    pb_tag(&b, 6, 0);
    pb_varint(&b, 1);
    expect_error(&b, "Profile.string_table (field 6) has wire type 0");
    /* a truncated varint inside a packed field */
    b = r;
    {
        pb m = {.n = 0};
        pb_tag(&m, 1, 2);
        pb_varint(&m, 1);
        pb_byte(&m, 0x81);
        pb_msg(&b, 2, &m);
    }
    expect_error(&b, "packed varints end in a truncated");
    /* an empty input */
    b.n = 0;
    expect_error(&b, "empty file");
}

/* Every prefix and every single-byte change of the reference: no crash
 * (the san build runs this under ASan+UBSan), and an error names the file. */
TEST(truncation_and_mutation_fuzz)
{
    static pb r;
    reference(&r, true);
    static uint8_t d[1 << 16];
    got g;
    pk_pprof_stats st;
    pk_err e;
    unsigned errors = 0, ok = 0;
    for (size_t n = 1; n < r.n; n++) {
        int rc = read_pb(r.d, n, NULL, &g, &st, &e);
        if (rc) {
            errors++;
            CHECK(strstr(e.msg, "t.pb") != NULL);
        } else {
            ok++;
        }
    }
    CHECK(errors > r.n / 2); /* most cuts fall inside a field */
    static const uint8_t flips[] = {0xff, 0x80, 0x01, 0x7f};
    for (size_t i = 0; i < r.n; i++)
        for (size_t k = 0; k < sizeof flips; k++) {
            memcpy(d, r.d, r.n);
            d[i] ^= flips[k];
            if (read_pb(d, r.n, NULL, &g, &st, &e))
                CHECK(strstr(e.msg, "t.pb") != NULL);
        }
    (void)ok;
}

/* ---- gzip ---- */
static size_t gzip_bytes(const void *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int zr = deflate(&z, Z_FINISH);
    CHECK(zr == Z_STREAM_END);
    size_t len = z.total_out;
    deflateEnd(&z);
    return len;
}

TEST(gzip_input_and_its_limits)
{
    static pb r;
    reference(&r, false);
    static uint8_t gz[1 << 17];
    size_t n = gzip_bytes(r.d, r.n, gz, sizeof gz);
    got g;
    pk_pprof_stats st;
    pk_err e;
    CHECK_OK(read_pb(gz, n, NULL, &g, &st, &e), &e);
    CHECK(st.gzip);
    CHECK_EQ_U64(st.proto_bytes, r.n);
    CHECK_EQ_U64(g.samples, 2);
    /* two members, as `cat a.gz b.gz` makes: one stream (cut after the
     * two sample types the reference starts with) */
    static uint8_t two[1 << 18];
    static pb head;
    value_type(&head, 1, S_SAMPLES, S_COUNT);
    value_type(&head, 1, S_CPU, S_NS);
    size_t n1 = gzip_bytes(r.d, head.n, two, sizeof two);
    size_t n2 = gzip_bytes(r.d + head.n, r.n - head.n, two + n1, sizeof two - n1);
    CHECK_OK(read_pb(two, n1 + n2, NULL, &g, &st, &e), &e);
    CHECK_EQ_U64(st.proto_bytes, r.n);
    CHECK_EQ_U64(g.samples, 2);
    /* truncated, corrupt, trailing garbage */
    CHECK(read_pb(gz, n - 9, NULL, &g, &st, &e) != 0 && strstr(e.msg, "truncated") && strstr(e.msg, "t.pb"));
    memcpy(two, gz, n);
    two[n / 2] ^= 0x55;
    two[n / 2 + 1] ^= 0xaa;
    CHECK(read_pb(two, n, NULL, &g, &st, &e) != 0 && strstr(e.msg, "t.pb: "));
    memcpy(two, gz, n);
    memcpy(two + n, "junk", 4);
    CHECK(read_pb(two, n + 4, NULL, &g, &st, &e) != 0 && strstr(e.msg, "garbage after the gzip stream"));
    /* a bomb: 8 MiB of zeros against a 1 MiB cap */
    size_t big = 8u << 20;
    uint8_t *zeros = calloc(1, big);
    uint8_t *bomb = malloc(1 << 16);
    size_t bn = gzip_bytes(zeros, big, bomb, 1 << 16);
    pk_pprof_opts o;
    pk_pprof_opts_init(&o);
    o.max_bytes = 1 << 20;
    CHECK(read_pb(bomb, bn, &o, &g, &st, &e) != 0 && strstr(e.msg, "more than 1048576 bytes"));
    free(zeros);
    free(bomb);
}

/* ---- writer → reader ---- */
TEST(writer_round_trip)
{
    pk_err e;
    pk_pprof_writer *w = pk_pprof_writer_new(NULL, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    pk_perf_attr a = {0};
    a.type = 1;
    a.sample_period = 250000;
    CHECK_OK(pk_pprof_writer_on_attr(w, &a, &e), &e);
    pk_mmap_event m = {0};
    m.is_mmap2 = true;
    m.pid = m.tid = 7;
    m.addr = 0x555500001000;
    m.len = 0x2000;
    m.pgoff = 0x1000;
    m.prot = 5;
    m.filename = "/usr/bin/prog";
    m.has_build_id = true;
    m.build_id_size = 20;
    for (int i = 0; i < 20; i++)
        m.build_id[i] = (uint8_t)(0xa0 + i);
    CHECK_OK(pk_pprof_writer_on_mmap(w, &m, &e), &e);
    pk_task_event fork_ev = {true, 8, 7, 8, 7, 0};
    CHECK_OK(pk_pprof_writer_on_task(w, &fork_ev, &e), &e);
    /* three samples, two with the same stack (one in the forked child) */
    uint64_t c1[] = {PK_CONTEXT_USER, 0x555500001100, 0x555500001805, 0x555500002a00};
    uint64_t c2[] = {PK_CONTEXT_USER, 0x555500001200, 0x555500001805};
    pk_sample s = {0};
    s.pid = s.tid = 7;
    s.misc = PK_CPUMODE_USER;
    s.ip = 0x555500001100;
    s.period = 250000;
    s.callchain = c1;
    s.callchain_nr = 4;
    CHECK_OK(pk_pprof_writer_on_sample(w, &s, &e), &e);
    s.pid = s.tid = 8;
    CHECK_OK(pk_pprof_writer_on_sample(w, &s, &e), &e);
    s.pid = s.tid = 7;
    s.ip = 0x555500001200;
    s.callchain = c2;
    s.callchain_nr = 3;
    s.period = 100;
    CHECK_OK(pk_pprof_writer_on_sample(w, &s, &e), &e);
    char path[512];
    snprintf(path, sizeof path, "%s/w.pb.gz", pk_test_tmpdir());
    pk_pprof_write_stats ws;
    CHECK_OK(pk_pprof_writer_write(w, path, &ws, &e), &e);
    pk_pprof_writer_free(w);
    CHECK_EQ_U64(ws.samples_in, 3);
    CHECK_EQ_U64(ws.samples, 2);
    CHECK_EQ_U64(ws.mappings, 1);
    CHECK_EQ_U64(ws.locations, 4);
    CHECK_EQ_U64(ws.frames_unmapped, 0);

    got g;
    pk_pprof_stats st;
    memset(&g, 0, sizeof g);
    g.st = &st;
    pk_perf_callbacks cb = {0};
    cb.ctx = &g;
    cb.attr = g_attr;
    cb.mmap = g_mmap;
    cb.sample = g_sample;
    pk_pprof_opts o;
    pk_pprof_opts_init(&o);
    CHECK_OK(pk_pprof_read_opts(path, &o, &cb, &st, &e), &e);
    CHECK(st.gzip);
    CHECK(st.producer == PK_PPROF_PRODUCER_PGOKIT);
    CHECK_STR(st.value_type, "samples");
    CHECK_STR(st.period_type, "cpu");
    CHECK_EQ_U64(st.period, 250000);
    CHECK_EQ_U64(g.mmaps, 1);
    CHECK_EQ_U64(g.m[0].addr, 0x555500001000);
    CHECK_EQ_U64(g.m[0].len, 0x2000);
    CHECK_EQ_U64(g.m[0].pgoff, 0x1000);
    CHECK(g.m[0].has_build_id && g.m[0].build_id[19] == 0xa0 + 19);
    CHECK_STR(g.files[0], "/usr/bin/prog");
    CHECK_EQ_U64(g.samples, 2);
    CHECK_EQ_U64(g.period[0], 2); /* two samples of the first stack */
    CHECK_EQ_U64(g.chain[0][1], 0x555500001100);
    CHECK_EQ_U64(g.chain[0][2], 0x555500001804); /* return address - 1 on the wire */
    CHECK_EQ_U64(g.chain[0][3], 0x5555000029ff);
    CHECK_EQ_U64(g.period[1], 1);
    /* the period values */
    o.sample_index = 1;
    CHECK_OK(pk_pprof_read_opts(path, &o, &cb, &st, &e), &e);
    CHECK_EQ_U64(st.value_total, 500100);
    /* restored: perf's chains again */
    pk_pprof_opts_init(&o);
    o.restore_return_addresses = true;
    memset(&g, 0, sizeof g);
    g.st = &st;
    CHECK_OK(pk_pprof_read_opts(path, &o, &cb, &st, &e), &e);
    CHECK_EQ_U64(g.nr[0], 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U64(g.chain[0][i], c1[i]);
    CHECK_EQ_U64(g.chain[1][2], c2[2]);
}

int main(void) { return pk_test_main(); }

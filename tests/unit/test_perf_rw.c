/* test_perf_rw.c — perf.data writer → reader round trips (file mode, pipe mode
 * through a real pipe, a zstd-compressed copy), a handcrafted multi-attr
 * file, every SAMPLE field, the reader's errors on malformed input, and
 * in-process mutation fuzzing. The perf script reader: test_perf_script.c. */
#include "test.h"
#include "perf/perf_data.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* ---- a growable byte buffer for handcrafted files ---- */
typedef struct bbuf {
    uint8_t *d;
    size_t len, cap;
} bbuf;

static void bput(bbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
}
static void b64(bbuf *b, uint64_t v) { bput(b, &v, 8); }
static void b32(bbuf *b, uint32_t v) { bput(b, &v, 4); }
static void b16(bbuf *b, uint16_t v) { bput(b, &v, 2); }
static void bzero_(bbuf *b, size_t n) { static const uint8_t z[256]; while (n) { size_t k = n < 256 ? n : 256; bput(b, z, k); n -= k; } }
static void rec_hdr(bbuf *b, uint32_t type, uint16_t misc, uint16_t size) { b32(b, type); b16(b, misc); b16(b, size); }

static char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ & 7];
    snprintf(p, 512, "%s/%s", pk_test_tmpdir(), name);
    return p;
}

static void write_file(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(d, 1, n, f);
    fclose(f);
}

/* ---- collecting everything the reader reports ---- */
typedef struct got {
    int order;                  /* sequence number of callbacks */
    int first_record_at, build_id_at;
    int nattr;
    const pk_perf_attr *attr_ptr[4];
    uint64_t attr_sample_type[4];
    pk_perf_attr attr[4];       /* copies: the reader's attrs die with the read */
    uint64_t attr_ids[4][4];
    int nsamples;
    pk_sample s[64];
    uint64_t chain[64][16];
    pk_branch br[64][40];
    const pk_perf_attr *sattr[64];
    int nmmap;
    pk_mmap_event m[8];
    char mname[8][128];
    int ncomm;
    pk_comm_event c[4];
    char cname[4][32];
    int ntask;
    pk_task_event t[8];
    int nbid;
    pk_build_id_event b[4];
    char bname[4][128];
    char hostname[64];
    int features_seen;
} got;

static int g_attr(void *ctx, const pk_perf_attr *a)
{
    got *g = ctx;
    g->order++;
    if (g->nattr < 4) {
        g->attr_ptr[g->nattr] = a;
        g->attr_sample_type[g->nattr] = a->sample_type;
        g->attr[g->nattr] = *a;
        for (uint32_t k = 0; k < a->nr_ids && k < 4; k++)
            g->attr_ids[g->nattr][k] = a->ids[k];
    }
    g->nattr++;
    return 0;
}
static void mark_record(got *g) { if (!g->first_record_at) g->first_record_at = ++g->order; }
static int g_sample(void *ctx, const pk_sample *s)
{
    got *g = ctx;
    mark_record(g);
    if (g->nsamples < 64) {
        int i = g->nsamples;
        g->s[i] = *s;
        g->sattr[i] = s->attr;
        for (uint64_t k = 0; k < s->callchain_nr && k < 16; k++)
            g->chain[i][k] = pk_ld64((const uint8_t *)s->callchain + 8 * k);
        for (uint64_t k = 0; k < s->branch_nr && k < 40; k++) {
            const uint8_t *e = (const uint8_t *)s->branches + 24 * k;
            g->br[i][k].from = pk_ld64(e);
            g->br[i][k].to = pk_ld64(e + 8);
            g->br[i][k].flags = pk_ld64(e + 16);
        }
    }
    g->nsamples++;
    return 0;
}
static int g_mmap(void *ctx, const pk_mmap_event *m)
{
    got *g = ctx;
    mark_record(g);
    if (g->nmmap < 8) {
        g->m[g->nmmap] = *m;
        snprintf(g->mname[g->nmmap], 128, "%s", m->filename);
    }
    g->nmmap++;
    return 0;
}
static int g_comm(void *ctx, const pk_comm_event *c)
{
    got *g = ctx;
    mark_record(g);
    if (g->ncomm < 4) {
        g->c[g->ncomm] = *c;
        snprintf(g->cname[g->ncomm], 32, "%s", c->comm);
    }
    g->ncomm++;
    return 0;
}
static int g_task(void *ctx, const pk_task_event *t)
{
    got *g = ctx;
    mark_record(g);
    if (g->ntask < 8)
        g->t[g->ntask] = *t;
    g->ntask++;
    return 0;
}
static int g_bid(void *ctx, const pk_build_id_event *b)
{
    got *g = ctx;
    if (!g->build_id_at)
        g->build_id_at = ++g->order;
    if (g->nbid < 4) {
        g->b[g->nbid] = *b;
        snprintf(g->bname[g->nbid], 128, "%s", b->filename);
    }
    g->nbid++;
    return 0;
}
static int g_feature(void *ctx, uint32_t id, const void *data, uint64_t size)
{
    got *g = ctx;
    g->features_seen++;
    if (id == 3 && size > 4)
        snprintf(g->hostname, sizeof g->hostname, "%s", (const char *)data + 4);
    return 0;
}

static pk_perf_callbacks cbs(got *g)
{
    memset(g, 0, sizeof *g);
    pk_perf_callbacks cb = {.ctx = g, .attr = g_attr, .sample = g_sample, .mmap = g_mmap, .comm = g_comm,
                            .task = g_task, .build_id = g_bid, .feature = g_feature};
    return cb;
}

/* ---- writing a reference file ---- */
static const uint8_t BID[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void sample_fill(int i, pk_sample *s, uint64_t *chain, pk_branch *br)
{
    memset(s, 0, sizeof *s);
    s->pid = 100;
    s->tid = 100 + (uint32_t)(i & 1);
    s->cpu = (uint32_t)i % 3;
    s->time = 5000 + (uint64_t)i * 10;
    s->ip = 0x401000 + (uint64_t)i;
    s->period = i == 2 ? 0 : 777 + (uint64_t)i;  /* 0 → opts.sample_period */
    chain[0] = PK_CONTEXT_USER;
    for (int k = 1; k < 5; k++)
        chain[k] = 0x402000 + (uint64_t)(i * 16 + k);
    s->callchain = chain;
    s->callchain_nr = (uint64_t)(i % 5);
    for (int k = 0; k < 32; k++) {
        br[k].from = 0x403000 + (uint64_t)(i * 100 + k);
        br[k].to = 0x404000 + (uint64_t)(i * 100 + k);
        br[k].flags = (uint64_t)(k & 3) | ((uint64_t)k << 4) | ((uint64_t)(k % 7) << 20);
    }
    s->branches = br;
    s->branch_nr = i == 3 ? 0 : (uint64_t)(32 - i % 32);
    s->hw_idx = 7 + (uint64_t)i;
    s->has_hw_idx = true;
}

static int write_reference(const char *path, bool hw_idx, bool cpu, int nsamples, pk_err *e)
{
    pk_perf_writer_opts o = {.sample_period = 4999, .branch_stack = true, .callchain = true, .hw_idx = hw_idx,
                             .cpu = cpu, .hostname = "host-x", .os_release = "rel-y", .cmdline = "a b c"};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, e);
    if (!w)
        return -1;
    pk_comm_event c = {.pid = 100, .tid = 100, .exec = true, .comm = "prog", .time = 1000};
    pk_mmap_event m1 = {.is_mmap2 = true, .pid = 100, .tid = 100, .addr = 0x401000, .len = 0x2000, .pgoff = 0x1000,
                        .prot = 5, .flags = 2, .filename = "/bin/prog", .time = 1001, .has_build_id = true,
                        .build_id_size = 20};
    memcpy(m1.build_id, BID, 20);
    pk_mmap_event m2 = {.is_mmap2 = true, .pid = 100, .tid = 101, .addr = 0x7f0000, .len = 0x3000, .pgoff = 0x2000,
                        .maj = 8, .min = 1, .ino = 123456, .ino_generation = 9, .prot = 5, .flags = 2,
                        .filename = "/lib/libc.so.6", .time = 1002};
    pk_task_event f = {.is_fork = true, .pid = 100, .ppid = 100, .tid = 101, .ptid = 100, .time = 1003};
    if (pk_perf_write_comm(w, &c, e) || pk_perf_write_mmap(w, &m1, e) || pk_perf_write_mmap(w, &m2, e) ||
        pk_perf_write_mmap(w, &m1, e) || pk_perf_write_task(w, &f, e))
        goto fail;
    for (int i = 0; i < nsamples; i++) {
        pk_sample s;
        uint64_t chain[5];
        pk_branch br[32];
        sample_fill(i, &s, chain, br);
        if (pk_perf_write_sample(w, &s, e))
            goto fail;
    }
    pk_task_event x = {.is_fork = false, .pid = 100, .ppid = 100, .tid = 101, .ptid = 100, .time = 9000};
    if (pk_perf_write_lost(w, 5, e) || pk_perf_write_task(w, &x, e))
        goto fail;
    return pk_perf_writer_close(w, e);
fail:
    pk_perf_writer_abort(w);
    return -1;
}

static void check_reference(got *g, const pk_perf_stats *st, bool hw_idx, bool cpu, int nsamples)
{
    CHECK_EQ_U64(g->nattr, 1);
    CHECK_EQ_U64(st->samples, nsamples);
    CHECK_EQ_U64(g->nsamples, nsamples);
    CHECK_EQ_U64(st->lost_events, 5);
    CHECK_EQ_U64(g->ncomm, 1);
    CHECK_EQ_U64(g->c[0].pid, 100);
    CHECK_EQ_U64(g->c[0].exec, 1);
    CHECK_EQ_U64(g->c[0].time, 1000);
    CHECK_STR(g->cname[0], "prog");
    CHECK_EQ_U64(g->nmmap, 3);
    CHECK(g->m[0].is_mmap2 && g->m[0].has_build_id);
    CHECK_EQ_U64(g->m[0].build_id_size, 20);
    CHECK(!memcmp(g->m[0].build_id, BID, 20));
    CHECK_EQ_U64(g->m[0].addr, 0x401000);
    CHECK_EQ_U64(g->m[0].len, 0x2000);
    CHECK_EQ_U64(g->m[0].pgoff, 0x1000);
    CHECK_EQ_U64(g->m[0].prot, 5);
    CHECK_EQ_U64(g->m[0].flags, 2);
    CHECK_EQ_U64(g->m[0].time, 1001);
    CHECK_STR(g->mname[0], "/bin/prog");
    CHECK(!g->m[1].has_build_id);
    CHECK_EQ_U64(g->m[1].tid, 101);
    CHECK_EQ_U64(g->m[1].maj, 8);
    CHECK_EQ_U64(g->m[1].min, 1);
    CHECK_EQ_U64(g->m[1].ino, 123456);
    CHECK_EQ_U64(g->m[1].ino_generation, 9);
    CHECK_STR(g->mname[1], "/lib/libc.so.6");
    CHECK_EQ_U64(g->ntask, 2);
    CHECK(g->t[0].is_fork && !g->t[1].is_fork);
    CHECK_EQ_U64(g->t[0].tid, 101);
    CHECK_EQ_U64(g->t[0].ptid, 100);
    CHECK_EQ_U64(g->t[1].time, 9000);
    /* the build-id is reported once (deduplicated), before any record */
    CHECK_EQ_U64(g->nbid, 1);
    CHECK(g->build_id_at && g->build_id_at < g->first_record_at);
    CHECK_STR(g->bname[0], "/bin/prog");
    CHECK_EQ_U64(g->b[0].size, 20);
    CHECK(!memcmp(g->b[0].build_id, BID, 20));
    for (int i = 0; i < nsamples && i < 64; i++) {
        pk_sample want;
        uint64_t chain[5];
        pk_branch br[32];
        sample_fill(i, &want, chain, br);
        const pk_sample *s = &g->s[i];
        CHECK(g->sattr[i] == g->attr_ptr[0]);
        CHECK_EQ_U64(s->ip, want.ip);
        CHECK_EQ_U64(s->pid, want.pid);
        CHECK_EQ_U64(s->tid, want.tid);
        CHECK_EQ_U64(s->time, want.time);
        CHECK_EQ_U64(s->period, want.period ? want.period : 4999);
        CHECK_EQ_U64(s->cpu, cpu ? want.cpu : 0);
        CHECK_EQ_U64(s->misc & 7, PK_CPUMODE_USER);
        CHECK_EQ_U64(s->callchain_nr, want.callchain_nr);
        for (uint64_t k = 0; k < want.callchain_nr; k++)
            CHECK_EQ_U64(g->chain[i][k], chain[k]);
        CHECK_EQ_U64(s->branch_nr, want.branch_nr);
        for (uint64_t k = 0; k < want.branch_nr; k++) {
            CHECK_EQ_U64(g->br[i][k].from, br[k].from);
            CHECK_EQ_U64(g->br[i][k].to, br[k].to);
            CHECK_EQ_U64(g->br[i][k].flags, br[k].flags);
        }
        CHECK_EQ_U64(s->has_hw_idx, hw_idx);
        if (hw_idx)
            CHECK_EQ_U64(s->hw_idx, want.hw_idx);
    }
    CHECK_STR(g->hostname, "host-x");
}

TEST(writer_reader_round_trip_all_fields)
{
    for (int variant = 0; variant < 4; variant++) {
        bool hw = variant & 1, cpu = variant & 2;
        const char *path = tmp_path("rt.data");
        pk_err e;
        CHECK_OK(write_reference(path, hw, cpu, 20, &e), &e);
        got g;
        pk_perf_callbacks cb = cbs(&g);
        pk_perf_stats st;
        CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
        CHECK(!st.pipe_mode && !st.compressed);
        CHECK_EQ_U64(g.attr_sample_type[0] & PK_SAMPLE_CPU, cpu ? PK_SAMPLE_CPU : 0);
        CHECK_EQ_U64(g.attr[0].branch_sample_type & PK_BRANCH_HW_INDEX, hw ? PK_BRANCH_HW_INDEX : 0);
        CHECK(st.features[0] & (1ull << 15));   /* BRANCH_STACK marker */
        CHECK(st.features[0] & (1ull << 2));    /* BUILD_ID */
        check_reference(&g, &st, hw, cpu, 20);
    }
}

TEST(writer_leaves_nothing_on_abort_and_file_only_on_close)
{
    const char *path = tmp_path("abort.data");
    pk_perf_writer_opts o = {.sample_period = 1};
    pk_err e;
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    struct stat st;
    CHECK(stat(path, &st) != 0);
    pk_perf_writer_abort(w);
    CHECK(stat(path, &st) != 0);
}

static int stop_after_two(void *ctx, const pk_sample *s)
{
    int *n = ctx;
    return ++*n == 2 ? 7 : 0;
}

TEST(callback_stop_is_returned)
{
    const char *path = tmp_path("stop.data");
    pk_err e;
    CHECK_OK(write_reference(path, false, false, 5, &e), &e);
    int n = 0;
    pk_perf_callbacks cb = {.ctx = &n, .sample = stop_after_two};
    CHECK_EQ_U64(pk_perf_read(path, &cb, NULL, &e), 7);
    CHECK_EQ_U64(n, 2);
}

/* ---- compression: rewrite a file's data section as COMPRESSED records ---- */

static void compress_copy(const char *src, const char *dst, size_t chunk)
{
    FILE *f = fopen(src, "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n);
    if (fread(d, 1, n, f) != n)
        abort();
    fclose(f);
    uint64_t data_off = pk_ld64(d + 40), data_size = pk_ld64(d + 48);
    bbuf out = {0};
    bput(&out, d, data_off);
    ZSTD_CStream *cs = ZSTD_createCStream();
    ZSTD_initCStream(cs, 3);
    uint8_t zbuf[60000];
    /* one continuous stream, flushed every `chunk` input bytes: records
     * straddle COMPRESSED records, and the frame is never closed (like perf) */
    for (uint64_t pos = 0; pos < data_size; pos += chunk) {
        size_t len = data_size - pos < chunk ? (size_t)(data_size - pos) : chunk;
        ZSTD_inBuffer in = {d + data_off + pos, len, 0};
        for (;;) {
            ZSTD_outBuffer ob = {zbuf, 30000, 0};
            size_t r = ZSTD_compressStream2(cs, &ob, &in, ZSTD_e_flush);
            if (ob.pos) {
                /* COMPRESSED (81) records are not padded: every byte after
                 * the header is zstd data, so later records are unaligned */
                rec_hdr(&out, 81, 0, (uint16_t)(8 + ob.pos));
                bput(&out, zbuf, ob.pos);
            }
            if (r == 0 && in.pos == in.size)
                break;
        }
    }
    ZSTD_freeCStream(cs);
    uint64_t new_size = out.len - data_off;
    /* copy the feature table and payloads, shifting their offsets */
    int64_t shift = (int64_t)new_size - (int64_t)data_size;
    uint64_t table = data_off + data_size;
    int nf = 0;
    for (int i = 0; i < 4; i++)
        nf += __builtin_popcountll(pk_ld64(d + 72 + 8 * i));
    size_t tail_start = out.len;
    bput(&out, d + table, n - table);
    for (int i = 0; i < nf; i++) {
        uint8_t *ent = out.d + tail_start + 16 * i;
        pk_st64(ent, (uint64_t)((int64_t)pk_ld64(ent) + shift));
    }
    pk_st64(out.d + 48, new_size);
    write_file(dst, out.d, out.len);
    free(out.d);
    free(d);
}

TEST(compressed_stream_round_trip_with_straddling_records)
{
    const char *plain = tmp_path("plain.data"), *z = tmp_path("z.data");
    pk_err e;
    CHECK_OK(write_reference(plain, true, true, 60, &e), &e);
    size_t chunks[] = {37, 1000, 65536};
    for (int c = 0; c < 3; c++) {
        compress_copy(plain, z, chunks[c]);
        got g;
        pk_perf_callbacks cb = cbs(&g);
        pk_perf_stats st;
        CHECK_OK(pk_perf_read(z, &cb, &st, &e), &e);
        CHECK(st.compressed);
        CHECK(st.decompressed_bytes > 0);
        check_reference(&g, &st, true, true, 60);
    }
    /* the compressed copy cut in the middle of its data: an error naming an offset */
    compress_copy(plain, z, 1000);
    FILE *f = fopen(z, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)n);
    if (fread(d, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    const char *cut = tmp_path("zcut.data");
    write_file(cut, d, (size_t)(pk_ld64(d + 40) + pk_ld64(d + 48) / 2));
    got g;
    pk_perf_callbacks cb = cbs(&g);
    CHECK(pk_perf_read(cut, &cb, NULL, &e) != 0);
    CHECK(strstr(e.msg, "zcut.data") && strstr(e.msg, "offset"));
    free(d);
}

/* ---- pipe mode through a real pipe ---- */

static void pipe_stream(bbuf *b)
{
    b64(b, 0x32454c4946524550ull);
    b64(b, 16);
    /* HEADER_ATTR: attr of 120 bytes (VER6), then two ids */
    size_t at = b->len;
    rec_hdr(b, 64, 0, 8 + 120 + 16);
    b32(b, 0);   /* type */
    b32(b, 120);
    b64(b, 0);   /* config */
    b64(b, 1000);
    b64(b, PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_ID | PK_SAMPLE_BRANCH_STACK);
    b64(b, 0);
    b64(b, 1ull << 18);  /* sample_id_all */
    bzero_(b, 72 - 48);
    b64(b, PK_BRANCH_ANY | PK_BRANCH_HW_INDEX);
    bzero_(b, 120 - 80);
    b64(b, 77);
    b64(b, 78);
    (void)at;
    /* HEADER_FEATURE hostname with an odd size: everything after is unaligned */
    rec_hdr(b, 80, 0, 8 + 8 + 4 + 9);
    b64(b, 3);
    b32(b, 9);
    bput(b, "pipehost", 9);
    /* HEADER_BUILD_ID */
    rec_hdr(b, 67, 0x8002, 36 + 16);
    b32(b, (uint32_t)-1);
    bput(b, BID, 20);
    b32(b, 20);
    bput(b, "/bin/piped\0\0\0\0\0\0", 16);
    /* MMAP2 (inode) with trailer {pid,tid}{time}{id} */
    rec_hdr(b, 10, 2, 72 + 8 + 24);
    b32(b, 5); b32(b, 6);
    b64(b, 0x1000); b64(b, 0x2000); b64(b, 0);
    b32(b, 1); b32(b, 2); b64(b, 3); b64(b, 4);
    b32(b, 5); b32(b, 2);
    bput(b, "/bin/x\0", 8);
    b32(b, 5); b32(b, 6); b64(b, 4444); b64(b, 77);
    /* AUXTRACE with 5 bytes of payload after it, to be skipped */
    rec_hdr(b, 71, 0, 48);
    b64(b, 5);
    bzero_(b, 32);
    bput(b, "AUXAU", 5);
    /* SAMPLE: ip, pid/tid, time, id, branch nr 2, hw_idx, 2 entries */
    rec_hdr(b, 9, 2, 8 + 32 + 16 + 48);
    b64(b, 0x1234);
    b32(b, 5); b32(b, 6);
    b64(b, 4500);
    b64(b, 78);
    b64(b, 2);
    b64(b, 99);
    b64(b, 0x10); b64(b, 0x20); b64(b, 1);
    b64(b, 0x30); b64(b, 0x40); b64(b, 2);
    /* an unknown record type: skipped and counted */
    rec_hdr(b, 200, 0, 12);
    b32(b, 0);
    /* LOST_SAMPLES */
    rec_hdr(b, 13, 0, 16 + 24);
    b64(b, 11);
    bzero_(b, 24);
}

static void check_pipe(got *g, pk_perf_stats *st)
{
    CHECK(st->pipe_mode);
    CHECK_EQ_U64(g->nattr, 1);
    CHECK_EQ_U64(g->attr[0].nr_ids, 2);
    CHECK_EQ_U64(g->attr_ids[0][1], 78);
    CHECK_STR(g->hostname, "pipehost");
    CHECK_EQ_U64(g->nbid, 1);
    CHECK_STR(g->bname[0], "/bin/piped");
    CHECK_EQ_U64(g->nmmap, 1);
    CHECK_EQ_U64(g->m[0].time, 4444);
    CHECK_EQ_U64(g->m[0].ino, 3);
    CHECK_STR(g->mname[0], "/bin/x");
    CHECK_EQ_U64(g->nsamples, 1);
    CHECK_EQ_U64(g->s[0].ip, 0x1234);
    CHECK_EQ_U64(g->s[0].id, 78);
    CHECK_EQ_U64(g->s[0].time, 4500);
    CHECK_EQ_U64(g->s[0].hw_idx, 99);
    CHECK_EQ_U64(g->s[0].branch_nr, 2);
    CHECK_EQ_U64(g->br[0][1].from, 0x30);
    CHECK_EQ_U64(g->br[0][1].flags, 2);
    CHECK_EQ_U64(st->lost_events, 11);
    CHECK_EQ_U64(st->skipped_records, 2);
}

typedef struct feeder {
    int fd;
    bbuf *b;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    /* dribble in small writes so records arrive split across reads */
    for (size_t pos = 0; pos < f->b->len;) {
        size_t n = f->b->len - pos < 7 ? f->b->len - pos : 7;
        ssize_t w = write(f->fd, f->b->d + pos, n);
        if (w <= 0)
            break;
        pos += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

TEST(pipe_mode_through_a_pipe_and_from_a_file)
{
    bbuf b = {0};
    pipe_stream(&b);
    int fds[2];
    CHECK(pipe(fds) == 0);
    feeder f = {fds[1], &b};
    pthread_t th;
    pthread_create(&th, NULL, feed, &f);
    got g;
    pk_perf_callbacks cb = cbs(&g);
    pk_perf_stats st;
    pk_err e;
    int rc = pk_perf_read_fd(fds[0], "<pipe>", &cb, &st, &e);
    pthread_join(th, NULL);
    close(fds[0]);
    CHECK_OK(rc, &e);
    check_pipe(&g, &st);

    const char *path = tmp_path("pipe.data");
    write_file(path, b.d, b.len);
    cb = cbs(&g);
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    check_pipe(&g, &st);

    /* cut inside the sample record: error naming the offset */
    write_file(path, b.d, b.len - 60);
    cb = cbs(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "pipe.data: offset ") != NULL);
    free(b.d);
}

/* ---- several attrs tied by IDENTIFIER ---- */

static void multi_attr_file(bbuf *b)
{
    uint64_t st0 = PK_SAMPLE_IDENTIFIER | PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME;
    uint64_t st1 = st0 | PK_SAMPLE_PERIOD | PK_SAMPLE_CALLCHAIN | PK_SAMPLE_CPU;
    b64(b, 0x32454c4946524550ull);
    b64(b, 104);
    b64(b, 136 + 16);           /* attr_size: a VER8 attr (136) */
    b64(b, 104 + 24);           /* attrs at 128 (after 3 ids) */
    b64(b, 2 * 152);
    uint64_t data_off = 128 + 2 * 152;
    b64(b, data_off);
    size_t data_size_at = b->len;
    b64(b, 0);
    b64(b, 0); b64(b, 0);
    b64(b, 0); b64(b, 0); b64(b, 0); b64(b, 0);
    b64(b, 10); b64(b, 20); b64(b, 21);    /* ids at 104 */
    for (int a = 0; a < 2; a++) {
        b32(b, 1);
        b32(b, 136);
        b64(b, (uint64_t)a);
        b64(b, 1);
        b64(b, a ? st1 : st0);
        b64(b, 0);
        b64(b, 1ull << 18);
        bzero_(b, 136 - 48);
        b64(b, a ? 112 : 104);
        b64(b, a ? 16 : 8);
    }
    size_t start = b->len;
    /* COMM with trailer {pid,tid}{time}{identifier} */
    rec_hdr(b, 3, 0, 8 + 8 + 8 + 24);
    b32(b, 1); b32(b, 1);
    bput(b, "two\0\0\0\0\0", 8);
    b32(b, 1); b32(b, 1); b64(b, 50); b64(b, 20);
    for (int i = 0; i < 4; i++) {
        if (i % 2 == 0) {
            rec_hdr(b, 9, 2, 8 + 32);
            b64(b, 10);
            b64(b, 0x100 + (uint64_t)i);
            b32(b, 1); b32(b, 1);
            b64(b, 60 + (uint64_t)i);
        } else {
            rec_hdr(b, 9, 2, 8 + 32 + 8 + 8 + 8 + 16);
            b64(b, i == 1 ? 20 : 21);
            b64(b, 0x200 + (uint64_t)i);
            b32(b, 1); b32(b, 1);
            b64(b, 60 + (uint64_t)i);
            b32(b, 3); b32(b, 0);
            b64(b, 999);
            b64(b, 2); b64(b, 0xaaa); b64(b, 0xbbb);
        }
    }
    pk_st64(b->d + data_size_at, b->len - start);
}

TEST(several_attrs_tied_by_identifier)
{
    bbuf b = {0};
    multi_attr_file(&b);
    const char *path = tmp_path("multi.data");
    write_file(path, b.d, b.len);
    got g;
    pk_perf_callbacks cb = cbs(&g);
    pk_perf_stats st;
    pk_err e;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(g.nattr, 2);
    CHECK_EQ_U64(g.attr[1].size, 136);
    CHECK_EQ_U64(g.attr[1].nr_ids, 2);
    CHECK_EQ_U64(g.ncomm, 1);
    CHECK_EQ_U64(g.c[0].time, 50);
    CHECK_EQ_U64(g.nsamples, 4);
    CHECK(g.sattr[0] == g.attr_ptr[0]);
    CHECK(g.sattr[1] == g.attr_ptr[1]);
    CHECK(g.sattr[2] == g.attr_ptr[0]);
    CHECK(g.sattr[3] == g.attr_ptr[1]);
    CHECK_EQ_U64(g.s[1].ip, 0x201);
    CHECK_EQ_U64(g.s[1].cpu, 3);
    CHECK_EQ_U64(g.s[1].period, 999);
    CHECK_EQ_U64(g.s[3].id, 21);
    CHECK_EQ_U64(g.s[3].callchain_nr, 2);
    CHECK_EQ_U64(g.chain[3][1], 0xbbb);
    CHECK_EQ_U64(g.s[2].time, 62);
    /* an id that matches no attr is an error, not a silent guess */
    pk_st64(b.d + b.len - 72, 99);
    write_file(path, b.d, b.len);
    cb = cbs(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "matches no attr") != NULL);
    free(b.d);
}

/* ---- every SAMPLE field, in the kernel's order: decoding stays in sync ---- */

static void all_fields_sample(bbuf *b, uint64_t ip, uint64_t stack_size)
{
    size_t at = b->len;
    rec_hdr(b, 9, 2, 0);
    b64(b, ip);                           /* IP */
    b32(b, 7); b32(b, 8);                 /* TID */
    b64(b, 1234);                         /* TIME */
    b64(b, 0xadd);                        /* ADDR */
    b64(b, 55);                           /* ID */
    b64(b, 56);                           /* STREAM_ID */
    b32(b, 3); b32(b, 0);                 /* CPU */
    b64(b, 4321);                         /* PERIOD */
    b64(b, 2); b64(b, 111);               /* READ group: nr, time_enabled */
    b64(b, 1); b64(b, 55); b64(b, 0);     /*   value, id, lost */
    b64(b, 2); b64(b, 56); b64(b, 0);
    b64(b, 2); b64(b, PK_CONTEXT_USER); b64(b, ip);   /* CALLCHAIN */
    b32(b, 12); bput(b, "raw-payload!", 12);          /* RAW: 4 + 12 = 16 */
    b64(b, 1); b64(b, 0xf0); b64(b, 0xf1); b64(b, 1); /* BRANCH_STACK (no hw_idx) */
    b64(b, 2); b64(b, 1); b64(b, 2); b64(b, 3);       /* REGS_USER: abi, 3 regs */
    b64(b, stack_size); bzero_(b, 16); b64(b, 16);    /* STACK_USER */
    b64(b, 9);                            /* WEIGHT */
    b64(b, 10);                           /* DATA_SRC */
    b64(b, 11);                           /* TRANSACTION */
    b64(b, 0);                            /* REGS_INTR: abi 0, no regs */
    b64(b, 12); b64(b, 13); b64(b, 14); b64(b, 15);   /* PHYS_ADDR CGROUP DATA/CODE_PAGE_SIZE */
    b64(b, 8); b64(b, 0xa0a0);            /* AUX */
    pk_st16(b->d + at + 6, (uint16_t)(b->len - at));
}

static void all_fields_stream(bbuf *b, uint64_t stack_size)
{
    uint64_t st = PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_ADDR | PK_SAMPLE_ID |
                  PK_SAMPLE_STREAM_ID | PK_SAMPLE_CPU | PK_SAMPLE_PERIOD | PK_SAMPLE_READ |
                  PK_SAMPLE_CALLCHAIN | PK_SAMPLE_RAW | PK_SAMPLE_BRANCH_STACK | PK_SAMPLE_REGS_USER |
                  PK_SAMPLE_STACK_USER | PK_SAMPLE_WEIGHT | PK_SAMPLE_DATA_SRC | (1ull << 17) |
                  (1ull << 18) | (1ull << 19) | (1ull << 20) | (1ull << 21) | (1ull << 22) | (1ull << 23);
    b64(b, 0x32454c4946524550ull);
    b64(b, 16);
    rec_hdr(b, 64, 0, 8 + 128 + 8);
    b32(b, 1); b32(b, 128); b64(b, 0); b64(b, 1);
    b64(b, st);
    b64(b, 1 | 4 | 8 | 16);               /* read_format: ENABLED|ID|GROUP|LOST */
    b64(b, 1ull << 18);                   /* sample_id_all */
    bzero_(b, 72 - 48);
    b64(b, PK_BRANCH_ANY);
    b64(b, 0x7);                          /* sample_regs_user: 3 registers */
    b32(b, 64); b32(b, 0);
    b64(b, 0x3);                          /* sample_regs_intr */
    bzero_(b, 128 - 104);
    b64(b, 55);
    /* MMAP (v1) with the trailer {pid,tid}{time}{id}{stream_id}{cpu,res} */
    rec_hdr(b, 1, 2, 40 + 8 + 40);
    b32(b, 7); b32(b, 8); b64(b, 0x1000); b64(b, 0x100); b64(b, 0);
    bput(b, "/v1map\0", 8);
    b32(b, 7); b32(b, 8); b64(b, 777); b64(b, 55); b64(b, 56); b32(b, 3); b32(b, 0);
    all_fields_sample(b, 0x5000, stack_size);
    all_fields_sample(b, 0x6000, 16);
}

TEST(every_sample_field_decoded_or_skipped_in_sync)
{
    bbuf b = {0};
    all_fields_stream(&b, 16);
    const char *path = tmp_path("all.data");
    write_file(path, b.d, b.len);
    got g;
    pk_perf_callbacks cb = cbs(&g);
    pk_perf_stats st;
    pk_err e;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(g.nmmap, 1);
    CHECK(!g.m[0].is_mmap2);
    CHECK_EQ_U64(g.m[0].time, 777);
    CHECK_STR(g.mname[0], "/v1map");
    CHECK_EQ_U64(g.nsamples, 2);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_U64(g.s[i].ip, i ? 0x6000 : 0x5000);
        CHECK_EQ_U64(g.s[i].tid, 8);
        CHECK_EQ_U64(g.s[i].addr, 0xadd);
        CHECK_EQ_U64(g.s[i].id, 55);
        CHECK_EQ_U64(g.s[i].cpu, 3);
        CHECK_EQ_U64(g.s[i].period, 4321);
        CHECK_EQ_U64(g.s[i].callchain_nr, 2);
        CHECK_EQ_U64(g.chain[i][1], g.s[i].ip);
        CHECK_EQ_U64(g.s[i].branch_nr, 1);
        CHECK_EQ_U64(g.br[i][0].to, 0xf1);
        CHECK(!g.s[i].has_hw_idx);
    }
    /* a STACK_USER size running past the record is an error, not a misread */
    b.len = 0;
    all_fields_stream(&b, 1u << 20);
    write_file(path, b.d, b.len);
    cb = cbs(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "STACK_USER") != NULL);
    free(b.d);
}

/* ---- header and bounds errors ---- */

static void expect_error(const void *d, size_t n, const char *needle)
{
    const char *path = tmp_path("bad.data");
    write_file(path, d, n);
    got g;
    pk_perf_callbacks cb = cbs(&g);
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
    const char *path = tmp_path("ref.data");
    pk_err e;
    CHECK_OK(write_reference(path, false, false, 3, &e), &e);
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
    const char *path = tmp_path("fuzz.data");
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
        write_file(path, d, len);
        got g;
        pk_perf_callbacks cb = cbs(&g);
        pk_err e;
        if (pk_perf_read(path, &cb, NULL, &e)) {
            errors++;
            CHECK(strstr(e.msg, "fuzz.data") != NULL);
        }
    }
    CHECK(errors > 0);      /* the mutations do hit the checks */
    free(d);
}

TEST(mutated_files_give_errors_never_crashes)
{
    const char *ref = tmp_path("fz-ref.data"), *z = tmp_path("fz-z.data");
    pk_err e;
    CHECK_OK(write_reference(ref, true, true, 12, &e), &e);
    compress_copy(ref, z, 500);
    size_t n;
    uint8_t *d = slurp(ref, &n);
    fuzz_bytes(d, n, 1500, 1);
    free(d);
    d = slurp(z, &n);
    fuzz_bytes(d, n, 800, 2);
    free(d);
    bbuf b = {0};
    all_fields_stream(&b, 16);
    fuzz_bytes(b.d, b.len, 800, 3);
    b.len = 0;
    pipe_stream(&b);
    fuzz_bytes(b.d, b.len, 800, 4);
    free(b.d);
}

int main(void) { return pk_test_main(); }

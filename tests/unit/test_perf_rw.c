/* test_perf_rw.c — perf.data writer → reader round trips (file mode, pipe mode
 * through a real pipe, a zstd-compressed copy), a handcrafted multi-attr
 * file, every SAMPLE field, the reader's errors on malformed input, and
 * in-process mutation fuzzing. The perf script reader: test_perf_script.c. */
#include "test.h"
#include "perf/perf_data.h"
#include "perf_fixtures.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static void check_reference(pf_got *g, const pk_perf_stats *st, bool hw_idx, bool cpu, int nsamples)
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
    CHECK(!memcmp(g->m[0].build_id, pf_BID, 20));
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
    CHECK(!memcmp(g->b[0].build_id, pf_BID, 20));
    for (int i = 0; i < nsamples && i < 64; i++) {
        pk_sample want;
        uint64_t chain[5];
        pk_branch br[32];
        pf_sample_fill(i, &want, chain, br);
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
        const char *path = pk_test_path("rt.data");
        pk_err e;
        CHECK_OK(pf_write_reference(path, hw, cpu, 20, &e), &e);
        pf_got g;
        pk_perf_callbacks cb = pf_callbacks(&g);
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
    const char *path = pk_test_path("abort.data");
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

/* fuzz_perf_write: a file without events used to have data_size 0, which
 * reads as a killed recording: the reader went on into the feature table. */
TEST(writer_without_events_reads_back)
{
    const char *path = pk_test_path("empty.data");
    pk_perf_writer_opts o = {.sample_period = 1, .branch_stack = true};
    pk_err e;
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_OK(pk_perf_writer_close(w, &e), &e);
    pk_perf_stats st;
    CHECK_OK(pk_perf_read(path, NULL, &st, &e), &e);
    CHECK_EQ_U64(st.records, 1);
    CHECK_EQ_U64(st.samples, 0);
    CHECK(st.data_size > 0);
}

static int arch_feature(void *ctx, uint32_t id, const void *data, uint64_t size)
{
    char *out = ctx;
    if (id == 6 && size >= 5)   /* u32 length, the string padded with NULs */
        snprintf(out, 64, "%.*s", (int)(size - 4 < 63 ? size - 4 : 63), (const char *)data + 4);
    return 0;
}

/* HEADER_ARCH: present (between OSRELEASE and CMDLINE, in id order) only
 * when asked for, so that x86-64 recordings stay as they were. */
TEST(writer_arch_feature)
{
    const char *path = pk_test_path("arch.data");
    pk_perf_writer_opts o = {.sample_period = 1, .arch = "aarch64", .hostname = "h", .cmdline = "c",
                             .branch_stack = true};
    pk_err e;
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_OK(pk_perf_writer_close(w, &e), &e);
    char arch[64] = "";
    pk_perf_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = arch;
    cb.feature = arch_feature;
    pk_perf_stats st;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    CHECK(st.features[0] & (1ull << 6));
    CHECK_STR(arch, "aarch64");
    o.arch = NULL;
    w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    CHECK_OK(pk_perf_writer_close(w, &e), &e);
    CHECK_OK(pk_perf_read(path, NULL, &st, &e), &e);
    CHECK(!(st.features[0] & (1ull << 6)));
}

static int stop_after_two(void *ctx, const pk_sample *s)
{
    int *n = ctx;
    return ++*n == 2 ? 7 : 0;
}

TEST(callback_stop_is_returned)
{
    const char *path = pk_test_path("stop.data");
    pk_err e;
    CHECK_OK(pf_write_reference(path, false, false, 5, &e), &e);
    int n = 0;
    pk_perf_callbacks cb = {.ctx = &n, .sample = stop_after_two};
    CHECK_EQ_U64(pk_perf_read(path, &cb, NULL, &e), 7);
    CHECK_EQ_U64(n, 2);
}

TEST(compressed_stream_round_trip_with_straddling_records)
{
    const char *plain = pk_test_path("plain.data"), *z = pk_test_path("z.data");
    pk_err e;
    CHECK_OK(pf_write_reference(plain, true, true, 60, &e), &e);
    size_t chunks[] = {37, 1000, 65536};
    for (int c = 0; c < 3; c++) {
        pf_compress_copy(plain, z, chunks[c]);
        pf_got g;
        pk_perf_callbacks cb = pf_callbacks(&g);
        pk_perf_stats st;
        CHECK_OK(pk_perf_read(z, &cb, &st, &e), &e);
        CHECK(st.compressed);
        CHECK(st.decompressed_bytes > 0);
        check_reference(&g, &st, true, true, 60);
    }
    /* the compressed copy cut in the middle of its data: an error naming an offset */
    pf_compress_copy(plain, z, 1000);
    FILE *f = fopen(z, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)n);
    if (fread(d, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    const char *cut = pk_test_path("zcut.data");
    pf_write_file(cut, d, (size_t)(pk_ld64(d + 40) + pk_ld64(d + 48) / 2));
    pf_got g;
    pk_perf_callbacks cb = pf_callbacks(&g);
    CHECK(pk_perf_read(cut, &cb, NULL, &e) != 0);
    CHECK(strstr(e.msg, "zcut.data") && strstr(e.msg, "offset"));
    free(d);
}

static void check_pipe(pf_got *g, pk_perf_stats *st)
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
    pf_bbuf *b;
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
    pf_bbuf b = {0};
    pf_pipe_stream(&b);
    int fds[2];
    CHECK(pipe(fds) == 0);
    feeder f = {fds[1], &b};
    pthread_t th;
    pthread_create(&th, NULL, feed, &f);
    pf_got g;
    pk_perf_callbacks cb = pf_callbacks(&g);
    pk_perf_stats st;
    pk_err e;
    int rc = pk_perf_read_fd(fds[0], "<pipe>", &cb, &st, &e);
    pthread_join(th, NULL);
    close(fds[0]);
    CHECK_OK(rc, &e);
    check_pipe(&g, &st);

    const char *path = pk_test_path("pipe.data");
    pf_write_file(path, b.d, b.len);
    cb = pf_callbacks(&g);
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    check_pipe(&g, &st);

    /* cut inside the sample record: error naming the offset */
    pf_write_file(path, b.d, b.len - 60);
    cb = pf_callbacks(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "pipe.data: offset ") != NULL);
    free(b.d);
}

TEST(several_attrs_tied_by_identifier)
{
    pf_bbuf b = {0};
    pf_multi_attr_file(&b);
    const char *path = pk_test_path("multi.data");
    pf_write_file(path, b.d, b.len);
    pf_got g;
    pk_perf_callbacks cb = pf_callbacks(&g);
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
    pf_write_file(path, b.d, b.len);
    cb = pf_callbacks(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "matches no attr") != NULL);
    free(b.d);
}

TEST(every_sample_field_decoded_or_skipped_in_sync)
{
    pf_bbuf b = {0};
    pf_all_fields_stream(&b, 16);
    const char *path = pk_test_path("all.data");
    pf_write_file(path, b.d, b.len);
    pf_got g;
    pk_perf_callbacks cb = pf_callbacks(&g);
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
    pf_all_fields_stream(&b, 1u << 20);
    pf_write_file(path, b.d, b.len);
    cb = pf_callbacks(&g);
    CHECK(pk_perf_read(path, &cb, &st, &e) != 0);
    CHECK(strstr(e.msg, "STACK_USER") != NULL);
    free(b.d);
}

int main(void) { return pk_test_main(); }

/* test_perf_order.c — the reader hands records over in time order, round by
 * round (perf's ordered events): files whose samples precede their COMM and
 * MMAP2 in file order, plain, compressed, in memory and through a pipe;
 * records held back no longer than a round; records without a time in file
 * order; a record older than a finished round counted as unordered. */
#include "perf_fixtures.h"
#include "test.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* What was delivered, in order: 'C' comm, 'M' mmap, 'F' fork, 'X' exit,
 * 'S' sample, with its time. */
typedef struct seen {
    char kind[20000];
    uint64_t time[20000];
    size_t n;
} seen;

static void push(seen *s, char k, uint64_t t)
{
    if (s->n < sizeof s->kind) {
        s->kind[s->n] = k;
        s->time[s->n] = t;
    }
    s->n++;
}
static int on_s(void *c, const pk_sample *x) { push(c, 'S', x->time); return 0; }
static int on_m(void *c, const pk_mmap_event *x) { push(c, 'M', x->time); return 0; }
static int on_c(void *c, const pk_comm_event *x) { push(c, 'C', x->time); return 0; }
static int on_t(void *c, const pk_task_event *x) { push(c, x->is_fork ? 'F' : 'X', x->time); return 0; }

static pk_perf_callbacks seen_cb(seen *s)
{
    memset(s, 0, sizeof *s);
    pk_perf_callbacks cb = {.ctx = s, .sample = on_s, .mmap = on_m, .comm = on_c, .task = on_t};
    return cb;
}

static bool times_ascending(const seen *s)
{
    for (size_t i = 1; i < s->n && i < sizeof s->kind; i++)
        if (s->time[i] < s->time[i - 1])
            return false;
    return true;
}

static int write_sample(pk_perf_writer *w, uint64_t time, pk_err *e)
{
    pk_sample s;
    uint64_t chain[5];
    pk_branch br[32];
    pf_sample_fill(0, &s, chain, br);
    s.time = time;
    return pk_perf_write_sample(w, &s, e);
}

/* A program's exec as perf may write it: the samples of a CPU's buffer
 * first, then (from the other CPU's buffer) the COMM and MMAP2 that precede
 * them in time; all in the first round. */
static int write_samples_first(const char *path, int nsamples, pk_err *e)
{
    pk_perf_writer_opts o = {.sample_period = 4999, .branch_stack = true, .callchain = true};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, e);
    if (!w)
        return -1;
    for (int i = 0; i < nsamples; i++)
        if (write_sample(w, 2000 + 10 * (uint64_t)i, e))
            goto fail;
    pk_comm_event c = {.pid = 100, .tid = 100, .exec = true, .comm = "prog", .time = 1000};
    pk_mmap_event m = {.is_mmap2 = true, .pid = 100, .tid = 100, .addr = 0x401000, .len = 0x2000,
                       .prot = 5, .flags = 2, .filename = "/bin/prog", .time = 1001};
    pk_task_event x = {.is_fork = false, .pid = 100, .ppid = 100, .tid = 100, .ptid = 100, .time = 1500};
    if (pk_perf_write_comm(w, &c, e) || pk_perf_write_mmap(w, &m, e) || pk_perf_write_task(w, &x, e))
        goto fail;
    return pk_perf_writer_close(w, e);
fail:
    pk_perf_writer_abort(w);
    return -1;
}

static void check_exec_first(const seen *s, int nsamples)
{
    CHECK_EQ_U64(s->n, (size_t)nsamples + 3);
    CHECK(s->n > 3 && s->kind[0] == 'C' && s->kind[1] == 'M' && s->kind[2] == 'X');
    for (size_t i = 3; i < s->n; i++)
        CHECK(s->kind[i] == 'S');
    CHECK(times_ascending(s));
}

TEST(samples_before_their_mmap_in_the_file_come_after_it)
{
    pk_err e = {0};
    const char *path = pk_test_path("first.data"), *z = pk_test_path("first.zst.data");
    CHECK_OK(write_samples_first(path, 50, &e), &e);
    seen s;
    pk_perf_callbacks cb = seen_cb(&s);
    pk_perf_stats st;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    check_exec_first(&s, 50);
    CHECK_EQ_U64(st.unordered_events, 0);
    CHECK_EQ_U64(st.samples, 50);
    /* the same from a compressed stream: records held back are copies */
    pf_compress_copy(path, z, 700);
    cb = seen_cb(&s);
    CHECK_OK(pk_perf_read(z, &cb, &st, &e), &e);
    CHECK(st.compressed);
    check_exec_first(&s, 50);
}

TEST(pipe_input_is_ordered_too)
{
    pk_err e = {0};
    const char *path = pk_test_path("first2.data");
    CHECK_OK(write_samples_first(path, 30, &e), &e);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t kid = fork();
    if (kid == 0) {
        /* a pipe carries a file-mode file's bytes only as pipe mode; feed the
         * records behind a pipe header instead */
        close(fds[0]);
        FILE *f = fopen(path, "rb");
        static uint8_t d[1 << 20];
        size_t n = fread(d, 1, sizeof d, f);
        uint64_t data_off, data_size, attr_off;
        memcpy(&attr_off, d + 24, 8);
        memcpy(&data_off, d + 40, 8);
        memcpy(&data_size, d + 48, 8);
        pf_bbuf b = {0};
        pf_b64(&b, 0x32454c4946524550ull);
        pf_b64(&b, 16);
        pf_rec_hdr(&b, 64, 0, 8 + 128);         /* HEADER_ATTR: the file's attr, no ids */
        pf_bput(&b, d + attr_off, 128);
        pf_bput(&b, d + data_off, (size_t)data_size);
        (void)n;
        if (write(fds[1], b.d, b.len) != (ssize_t)b.len)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    seen s;
    pk_perf_callbacks cb = seen_cb(&s);
    pk_perf_stats st;
    int rc = pk_perf_read_fd(fds[0], "<pipe>", &cb, &st, &e);
    close(fds[0]);
    int status = 0;
    waitpid(kid, &status, 0);
    CHECK_OK(rc, &e);
    CHECK(st.pipe_mode);
    check_exec_first(&s, 30);
}

TEST(records_are_held_back_one_round_only)
{
    /* 10 rounds of samples in time order: delivered in order, and no more
     * than about two rounds' worth held at once */
    pk_err e = {0};
    const char *path = pk_test_path("rounds.data");
    pk_perf_writer_opts o = {.sample_period = 4999, .branch_stack = true, .callchain = true};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    int n = 4096 * 10;
    for (int i = 0; i < n; i++)
        CHECK_OK(write_sample(w, 5000 + (uint64_t)i, &e), &e);
    CHECK_OK(pk_perf_writer_close(w, &e), &e);
    seen *s = malloc(sizeof *s);
    pk_perf_callbacks cb = seen_cb(s);
    pk_perf_stats st;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(st.samples, (uint64_t)n);
    CHECK(times_ascending(s));
    CHECK(st.finished_rounds >= 10);
    uint64_t per_round = st.data_size / st.finished_rounds;
    CHECK(st.max_queued_bytes > per_round);          /* a round is held back... */
    CHECK(st.max_queued_bytes < 2 * per_round + 4096); /* ...no more than two */
    free(s);
}

TEST(a_record_older_than_a_finished_round_is_counted_and_still_delivered)
{
    pk_err e = {0};
    const char *path = pk_test_path("late.data");
    pk_perf_writer_opts o = {.sample_period = 4999, .branch_stack = true, .callchain = true};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    if (!w)
        return;
    for (int i = 0; i < 4096 * 3; i++)
        CHECK_OK(write_sample(w, 5000 + (uint64_t)i, &e), &e);
    CHECK_OK(write_sample(w, 100, &e), &e);  /* older than everything: its rounds are gone */
    CHECK_OK(pk_perf_writer_close(w, &e), &e);
    seen *s = malloc(sizeof *s);
    pk_perf_callbacks cb = seen_cb(s);
    pk_perf_stats st;
    CHECK_OK(pk_perf_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(st.samples, 4096 * 3 + 1);
    CHECK_EQ_U64(st.unordered_events, 1);
    free(s);
}

TEST(records_without_a_time_keep_file_order)
{
    /* pipe mode, one attr without PERF_SAMPLE_TIME nor sample_id_all:
     * SAMPLE, COMM, SAMPLE come out as written */
    pf_bbuf b = {0};
    pf_b64(&b, 0x32454c4946524550ull);
    pf_b64(&b, 16);
    pf_rec_hdr(&b, 64, 0, 8 + 64);
    pf_b32(&b, 0);
    pf_b32(&b, 64);
    pf_b64(&b, 0);
    pf_b64(&b, 1000);
    pf_b64(&b, PK_SAMPLE_IP | PK_SAMPLE_TID);
    pf_bzero(&b, 64 - 32);
    for (int k = 0; k < 3; k++) {
        if (k == 1) {
            pf_rec_hdr(&b, 3, 0x2000, 8 + 8 + 8);
            pf_b32(&b, 7);
            pf_b32(&b, 7);
            pf_bput(&b, "prog\0\0\0", 8);
        } else {
            pf_rec_hdr(&b, 9, 2, 8 + 16);
            pf_b64(&b, 0x401000 + (uint64_t)k);
            pf_b32(&b, 7);
            pf_b32(&b, 7);
        }
    }
    pf_rec_hdr(&b, 68, 0, 8);
    seen s;
    pk_perf_callbacks cb = seen_cb(&s);
    pk_perf_stats st;
    pk_err e = {0};
    CHECK_OK(pk_perf_read_mem(b.d, b.len, "mem", &cb, &st, &e), &e);
    CHECK_EQ_U64(s.n, 3);
    CHECK(s.kind[0] == 'S' && s.kind[1] == 'C' && s.kind[2] == 'S');
    CHECK_EQ_U64(st.max_queued_bytes, 0);
    free(b.d);
}

int main(void) { return pk_test_main(); }

/* merge.c — one perf.data from the per-process files of an emulated
 * recording, in time order, as `perf record` writes a whole process tree.
 *
 * Each process of the run writes its own file (plugin/follow.c), in time
 * order. The merged file must be in time order too: perf flushes its event
 * queue at every FINISHED_ROUND and counts anything older as "out of order",
 * and readers that go front to back (pgokit's own) must see a parent's
 * MMAP2 records before a child's FORK copies them, and a pid's old program
 * before its exec. So this is a k-way merge by timestamp.
 *
 * The reader (pk_perf_read) pushes events through callbacks; a k-way merge
 * needs to pull one event at a time from each file. Each file is read on
 * its own thread, and exactly one thread runs at a time: the merger hands
 * the baton to the file whose next event is the oldest, with a time limit
 * (the next event of every other file); that thread writes its events
 * itself while they are within the limit, then stops on the first one past
 * it (held: the reader's pointers stay valid while its callback waits) and
 * hands the baton back. Processes that run one after another (a script's
 * commands) thus cost one hand-over each, not one per event; files start
 * their threads only when the merge reaches their first event, so a run of
 * many short processes has few threads at once. */
#include "record/record.h"

#include "perf/perf_data.h"

#include <pthread.h>
#include <stdlib.h>

enum { EV_SAMPLE, EV_MMAP, EV_COMM, EV_TASK };

typedef struct merge_ctx merge_ctx;

typedef struct msrc {
    merge_ctx *m;
    int idx;
    const char *path;
    pthread_t th;
    bool started, done, joined, head;
    uint64_t first;          /* time of the file's first event (peek) */
    uint64_t time;           /* of the held event */
    int kind;
    const void *ev;
    int rc;
    pk_err err;
    pk_perf_attr attr;       /* the file's (first) attr */
    bool has_attr, has_event;
    char arch[32];           /* its HEADER_ARCH string ("" without one) */
} msrc;

struct merge_ctx {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;                /* -1: the merger runs; else the source that does */
    uint64_t limit;          /* the running source writes events up to this time */
    bool stop;
    pk_perf_writer *w;
    pk_err werr;
    bool wfailed;
};

/* ---- peeking: the attr and the first event's time ---- */

static int peek_attr(void *ctx, const pk_perf_attr *a)
{
    msrc *s = ctx;
    if (!s->has_attr) {
        s->attr = *a;
        s->attr.ids = NULL;
        s->has_attr = true;
    }
    return 0;
}

static int peek_at(msrc *s, uint64_t t)
{
    s->first = t;
    s->has_event = true;
    return 1;   /* enough: stop reading */
}
static int peek_sample(void *c, const pk_sample *e) { return peek_at(c, e->time); }
static int peek_mmap(void *c, const pk_mmap_event *e) { return peek_at(c, e->time); }
static int peek_comm(void *c, const pk_comm_event *e) { return peek_at(c, e->time); }
static int peek_task(void *c, const pk_task_event *e) { return peek_at(c, e->time); }

/* HEADER_ARCH: the merged file keeps it, else perf would read an aarch64
 * recording as the host's. */
static int peek_feature(void *ctx, uint32_t id, const void *data, uint64_t size)
{
    msrc *s = ctx;
    size_t n;
    const char *str = id == PK_FEAT_ARCH ? pk_perf_feature_string(data, size, &n) : NULL;
    if (str && n < sizeof s->arch) {
        memcpy(s->arch, str, n);
        s->arch[n] = 0;
    }
    return 0;
}

static int peek(msrc *s, pk_err *err)
{
    pk_perf_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = s;
    cb.attr = peek_attr;
    cb.sample = peek_sample;
    cb.mmap = peek_mmap;
    cb.comm = peek_comm;
    cb.task = peek_task;
    cb.feature = peek_feature;
    pk_perf_stats st;
    int rc = pk_perf_read(s->path, &cb, &st, err);
    if (rc < 0)
        return -1;
    if (!s->has_attr)
        return pk_err_set(err, "%s: offset 0: no event attribute", s->path);
    return 0;
}

/* ---- the sources' threads ---- */

static int write_event(merge_ctx *m, int kind, const void *ev)
{
    int rc = kind == EV_SAMPLE ? pk_perf_write_sample(m->w, ev, &m->werr)
             : kind == EV_MMAP ? pk_perf_write_mmap(m->w, ev, &m->werr)
             : kind == EV_COMM ? pk_perf_write_comm(m->w, ev, &m->werr)
                               : pk_perf_write_task(m->w, ev, &m->werr);
    if (rc != 0)
        m->wfailed = true;
    return rc;
}

/* Called with the baton: writes the event, or holds it and waits for the
 * baton to come back when it is past the limit. */
static int deliver(msrc *s, int kind, const void *ev, uint64_t t)
{
    merge_ctx *m = s->m;
    if (t > m->limit) {
        s->kind = kind;
        s->ev = ev;
        s->time = t;
        s->head = true;
        pthread_mutex_lock(&m->mu);
        m->turn = -1;
        pthread_cond_broadcast(&m->cv);
        while (m->turn != s->idx)
            pthread_cond_wait(&m->cv, &m->mu);
        pthread_mutex_unlock(&m->mu);
        s->head = false;
    }
    if (m->stop)
        return pk_err_set(&s->err, "%s: merge stopped", s->path);
    return write_event(m, kind, ev);
}

static int on_sample(void *c, const pk_sample *e) { return deliver(c, EV_SAMPLE, e, e->time); }
static int on_mmap(void *c, const pk_mmap_event *e) { return deliver(c, EV_MMAP, e, e->time); }
static int on_comm(void *c, const pk_comm_event *e) { return deliver(c, EV_COMM, e, e->time); }
static int on_task(void *c, const pk_task_event *e) { return deliver(c, EV_TASK, e, e->time); }

static void *source_main(void *arg)
{
    msrc *s = arg;
    merge_ctx *m = s->m;
    pthread_mutex_lock(&m->mu);
    while (m->turn != s->idx)
        pthread_cond_wait(&m->cv, &m->mu);
    pthread_mutex_unlock(&m->mu);
    pk_perf_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = s;
    cb.sample = on_sample;
    cb.mmap = on_mmap;
    cb.comm = on_comm;
    cb.task = on_task;
    pk_perf_stats st;
    s->rc = m->stop ? 0 : pk_perf_read(s->path, &cb, &st, &s->err);
    pthread_mutex_lock(&m->mu);
    s->done = true;
    s->head = false;
    m->turn = -1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* Hands the baton to s and waits for it to come back. */
static void run_source(merge_ctx *m, msrc *s)
{
    pthread_mutex_lock(&m->mu);
    m->turn = s->idx;
    pthread_cond_broadcast(&m->cv);
    while (m->turn != -1)
        pthread_cond_wait(&m->cv, &m->mu);
    pthread_mutex_unlock(&m->mu);
}

static int by_first(const void *a, const void *b)
{
    const msrc *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

static bool same_layout(const pk_perf_attr *a, const pk_perf_attr *b)
{
    return a->type == b->type && a->config == b->config && a->sample_type == b->sample_type &&
           a->branch_sample_type == b->branch_sample_type;
}

int pk_record_merge_perf(char *const *paths, size_t n, const char *out, pk_err *err)
{
    msrc *src = calloc(n ? n : 1, sizeof *src);
    merge_ctx m;
    memset(&m, 0, sizeof m);
    pthread_mutex_init(&m.mu, NULL);
    pthread_cond_init(&m.cv, NULL);
    m.turn = -1;
    int rc = -1;
    size_t ns = 0;
    if (!src) {
        pk_err_set(err, "%s: out of memory", out);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        msrc *s = &src[ns];
        s->path = paths[i];
        if (peek(s, err) != 0)
            goto out;
        if (ns && !same_layout(&s->attr, &src[0].attr)) {
            pk_err_set(err, "%s: recorded with another event or sample layout than %s", s->path, src[0].path);
            goto out;
        }
        if (s->has_event || !ns)
            ns++;   /* a file without events adds nothing (the first one gives the attr) */
    }
    qsort(src, ns, sizeof *src, by_first);
    const pk_perf_attr *a = &src[0].attr;
    for (size_t i = 0; i < ns; i++) {
        src[i].m = &m;
        src[i].idx = (int)i;
    }
    pk_perf_writer_opts o;
    memset(&o, 0, sizeof o);
    o.event_type = a->type;
    o.event_config = a->config;
    o.sample_period = a->sample_period;
    o.callchain = a->sample_type & PK_SAMPLE_CALLCHAIN;
    o.branch_stack = a->sample_type & PK_SAMPLE_BRANCH_STACK;
    o.hw_idx = a->branch_sample_type & PK_BRANCH_HW_INDEX;
    o.cpu = a->sample_type & PK_SAMPLE_CPU;
    o.arch = src[0].arch[0] ? src[0].arch : NULL;
    if (!(m.w = pk_perf_writer_open(out, &o, err)))
        goto out;

    size_t next = 0;   /* the next source to start, by first event */
    bool failed = false;
    for (;;) {
        /* the oldest held event, and the one after it */
        msrc *run = NULL;
        uint64_t second = UINT64_MAX;
        for (size_t i = 0; i < next; i++) {
            msrc *s = &src[i];
            if (!s->head)
                continue;
            if (!run || s->time < run->time) {
                if (run)
                    second = run->time;
                run = s;
            } else if (s->time < second) {
                second = s->time;
            }
        }
        if (next < ns && (!run || src[next].first <= run->time)) {
            /* a file whose events start now: its thread runs to its first
             * event and holds it */
            msrc *s = &src[next++];
            if (pthread_create(&s->th, NULL, source_main, s) != 0) {
                pk_err_set(err, "%s: cannot start a thread to read it", s->path);
                failed = true;
                break;
            }
            s->started = true;
            m.limit = 0;
            run_source(&m, s);
        } else if (run) {
            m.limit = next < ns && src[next].first < second ? src[next].first : second;
            run_source(&m, run);
        } else {
            break;   /* every file read */
        }
        for (size_t i = 0; i < next; i++) {
            if (!src[i].done || src[i].joined)
                continue;
            /* a finished file's thread goes now: a run of a thousand
             * short processes does not keep a thousand stacks */
            pthread_join(src[i].th, NULL);
            src[i].joined = true;
            if (src[i].rc != 0 && !failed) {
                if (m.wfailed)
                    pk_err_set(err, "%s", m.werr.msg);
                else
                    *err = src[i].err;
                failed = true;
            }
        }
        if (failed)
            break;
    }
    /* unwind the threads still waiting with an event held */
    m.stop = true;
    for (size_t i = 0; i < next; i++) {
        if (src[i].started && !src[i].done)
            run_source(&m, &src[i]);
        if (src[i].started && !src[i].joined)
            pthread_join(src[i].th, NULL);
    }
    if (failed) {
        pk_perf_writer_abort(m.w);
        goto out;
    }
    rc = pk_perf_writer_close(m.w, err);
out:
    pthread_mutex_destroy(&m.mu);
    pthread_cond_destroy(&m.cv);
    free(src);
    return rc;
}

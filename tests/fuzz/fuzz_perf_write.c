/* fuzz_perf_write.c — the perf.data writer round trip: whatever the reader
 * accepts is written again with pk_perf_writer (one attr shaped like the
 * input's first) and read back; the events must come back equal, field by
 * field, as far as the writer's format can carry them:
 *   - every COMM, FORK/EXIT and MMAP (written as MMAP2) with its pid, tid,
 *     addresses, names, build-id and time;
 *   - every sample's ip, pid, tid, time, period, misc, cpu (when the attr
 *     has CPU), call chain (when it has CALLCHAIN; a chain longer than a
 *     record keeps its leaf-most entries) and branch stack with hw_idx
 *     (when it has BRANCH_STACK).
 * A sample whose branch stack, or a name that cannot fit the writer's
 * record (its records carry a sample_id trailer the input's may lack) are
 * the refusals allowed: the writer says so, leaves no file, and nothing is
 * compared then. */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ev {
    int kind;                   /* 1 sample, 2 mmap, 3 comm, 4 task */
    pk_sample s;
    pk_mmap_event m;
    pk_comm_event c;
    pk_task_event t;
    uint64_t *chain;
    pk_branch *br;
    char *str;
} ev;

typedef struct evlist {
    ev *e;
    size_t n, cap;
    bool have_attr;
    pk_perf_attr attr;
} evlist;

static ev *push(evlist *l, int kind)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
        if (!l->e)
            pk_fuzz_fail("out of memory");
    }
    ev *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    return e;
}

static char *dup_str(const char *s) { return strdup(s ? s : ""); }

static int on_attr(void *ctx, const pk_perf_attr *a)
{
    evlist *l = ctx;
    if (!l->have_attr) {
        l->attr = *a;
        l->attr.ids = NULL;
        l->have_attr = true;
    }
    return 0;
}

static int on_sample(void *ctx, const pk_sample *s)
{
    ev *e = push(ctx, 1);
    e->s = *s;
    e->s.attr = NULL;
    e->chain = malloc(8 * (size_t)s->callchain_nr + 1);
    e->br = malloc(sizeof(pk_branch) * (size_t)s->branch_nr + 1);
    /* the reader's arrays may be unaligned (perf_data.h): copied as bytes */
    if (s->callchain_nr)
        memcpy(e->chain, (const void *)s->callchain, 8 * (size_t)s->callchain_nr);
    if (s->branch_nr)
        memcpy(e->br, (const void *)s->branches, sizeof(pk_branch) * (size_t)s->branch_nr);
    e->s.callchain = e->chain;
    e->s.branches = e->br;
    return 0;
}

static int on_mmap(void *ctx, const pk_mmap_event *m)
{
    ev *e = push(ctx, 2);
    e->m = *m;
    e->m.filename = e->str = dup_str(m->filename);
    return 0;
}

static int on_comm(void *ctx, const pk_comm_event *c)
{
    ev *e = push(ctx, 3);
    e->c = *c;
    e->c.comm = e->str = dup_str(c->comm);
    return 0;
}

static int on_task(void *ctx, const pk_task_event *t)
{
    push(ctx, 4)->t = *t;
    return 0;
}

static void collect(pk_perf_callbacks *cb, evlist *l)
{
    memset(cb, 0, sizeof *cb);
    cb->ctx = l;
    cb->attr = on_attr;
    cb->sample = on_sample;
    cb->mmap = on_mmap;
    cb->comm = on_comm;
    cb->task = on_task;
}

static void evlist_free(evlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].chain);
        free(l->e[i].br);
        free(l->e[i].str);
    }
    free(l->e);
}

static int write_all(const evlist *in, const pk_perf_writer_opts *o, const char *path, pk_err *err)
{
    pk_perf_writer *w = pk_perf_writer_open(path, o, err);
    if (!w)
        pk_fuzz_fail("writer_open: %s", err->msg);
    int rc = 0;
    for (size_t i = 0; i < in->n && !rc; i++) {
        const ev *e = &in->e[i];
        switch (e->kind) {
        case 1: rc = pk_perf_write_sample(w, &e->s, err); break;
        case 2: rc = pk_perf_write_mmap(w, &e->m, err); break;
        case 3: rc = pk_perf_write_comm(w, &e->c, err); break;
        default: rc = pk_perf_write_task(w, &e->t, err); break;
        }
    }
    if (rc) {
        pk_perf_writer_abort(w);
        return -1;
    }
    return pk_perf_writer_close(w, err);
}

#define SAME(what, a, b)                                                                         \
    do {                                                                                         \
        if ((uint64_t)(a) != (uint64_t)(b)) {                                                    \
            if (fail)                                                                            \
                pk_fuzz_fail("event %zu: %s differs after the round trip: %llu vs %llu", i, what, \
                             (unsigned long long)(a), (unsigned long long)(b));                  \
            return false;                                                                        \
        }                                                                                        \
    } while (0)
#define DIFFERS(...)                                                                             \
    do {                                                                                         \
        if (fail)                                                                                \
            pk_fuzz_fail(__VA_ARGS__);                                                           \
        return false;                                                                            \
    } while (0)

/* The call-chain entries a 64 KiB record has room for next to this sample's
 * other fields (the writer keeps the leaf-most ones). */
static uint64_t chain_room(const pk_perf_writer_opts *o, const pk_sample *s)
{
    uint64_t fixed = 8 + 8 * (4 + (uint64_t)o->cpu);
    uint64_t br = o->branch_stack ? 16 + 24 * s->branch_nr : 0;
    return (65528 - fixed - 8 - br) / 8;
}

/* Whether y is x read back (fail: say where not, and stop). */
static bool event_equal(const ev *x, const ev *y, const pk_perf_writer_opts *o, size_t i, bool fail)
{
    SAME("kind", x->kind, y->kind);
    if (x->kind == 1) {
        const pk_sample *s = &x->s, *t = &y->s;
        SAME("ip", s->ip, t->ip);
        SAME("pid", s->pid, t->pid);
        SAME("tid", s->tid, t->tid);
        SAME("time", s->time, t->time);
        SAME("period", s->period ? s->period : o->sample_period, t->period);
        SAME("misc", s->misc ? s->misc : PK_CPUMODE_USER, t->misc);
        if (o->cpu)
            SAME("cpu", s->cpu, t->cpu);
        if (o->callchain) {
            uint64_t room = chain_room(o, s), n = s->callchain_nr < room ? s->callchain_nr : room;
            SAME("callchain_nr", n, t->callchain_nr);
            if (n && memcmp(s->callchain, t->callchain, 8 * (size_t)n))
                DIFFERS("event %zu: call chain differs", i);
        }
        if (o->branch_stack) {
            SAME("branch_nr", s->branch_nr, t->branch_nr);
            if (s->branch_nr && memcmp(s->branches, t->branches, sizeof(pk_branch) * (size_t)s->branch_nr))
                DIFFERS("event %zu: branch stack differs", i);
            if (o->hw_idx)
                SAME("hw_idx", s->has_hw_idx ? s->hw_idx : UINT64_MAX, t->hw_idx);
        }
    } else if (x->kind == 2) {
        const pk_mmap_event *m = &x->m, *n = &y->m;
        SAME("mmap pid", m->pid, n->pid);
        SAME("mmap tid", m->tid, n->tid);
        SAME("mmap addr", m->addr, n->addr);
        SAME("mmap len", m->len, n->len);
        SAME("mmap pgoff", m->pgoff, n->pgoff);
        SAME("mmap time", m->time, n->time);
        SAME("mmap has_build_id", m->has_build_id, n->has_build_id);
        if (m->has_build_id) {
            SAME("build-id size", m->build_id_size, n->build_id_size);
            if (memcmp(m->build_id, n->build_id, m->build_id_size))
                DIFFERS("event %zu: build-id differs", i);
        } else {
            SAME("mmap maj", m->maj, n->maj);
            SAME("mmap ino", m->ino, n->ino);
        }
        SAME("mmap prot", m->prot, n->prot);
        if (strcmp(m->filename, n->filename))
            DIFFERS("event %zu: mmap name differs", i);
    } else if (x->kind == 3) {
        SAME("comm pid", x->c.pid, y->c.pid);
        SAME("comm tid", x->c.tid, y->c.tid);
        SAME("comm exec", x->c.exec, y->c.exec);
        SAME("comm time", x->c.time, y->c.time);
        if (strcmp(x->c.comm, y->c.comm))
            DIFFERS("event %zu: comm differs", i);
    } else {
        SAME("task fork", x->t.is_fork, y->t.is_fork);
        SAME("task pid", x->t.pid, y->t.pid);
        SAME("task ppid", x->t.ppid, y->t.ppid);
        SAME("task tid", x->t.tid, y->t.tid);
        SAME("task ptid", x->t.ptid, y->t.ptid);
        SAME("task time", x->t.time, y->t.time);
    }
    return true;
}

/* The reader hands records over in time order; records the input had out of
 * that order (late ones, or ones without a time: the writer gives every
 * record one) can come back in another order, so each event is matched
 * with an equal one of its kind not matched yet. */
static void compare(const evlist *a, const evlist *b, const pk_perf_writer_opts *o)
{
    if (a->n != b->n)
        pk_fuzz_fail("%zu events written, %zu read back", a->n, b->n);
    bool *used = calloc(b->n ? b->n : 1, sizeof *used);
    if (!used)
        pk_fuzz_fail("out of memory");
    for (size_t i = 0; i < a->n; i++) {
        const ev *x = &a->e[i];
        size_t first = b->n, j;
        for (j = 0; j < b->n; j++) {
            if (used[j] || b->e[j].kind != x->kind)
                continue;
            if (first == b->n)
                first = j;
            if (event_equal(x, &b->e[j], o, i, false))
                break;
        }
        if (j == b->n) {
            if (first == b->n)
                pk_fuzz_fail("event %zu: no event of kind %d left when read back", i, x->kind);
            event_equal(x, &b->e[first], o, i, true);
            pk_fuzz_fail("event %zu: no equal event read back", i);
        }
        used[j] = true;
    }
    free(used);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    evlist in = {0}, back = {0};
    pk_perf_callbacks cb;
    collect(&cb, &in);
    if (pk_perf_read_mem(data, size, PK_FUZZ_NAME, &cb, NULL, &err) || !in.have_attr) {
        evlist_free(&in);
        return 0;
    }
    pk_perf_writer_opts o;
    memset(&o, 0, sizeof o);
    o.event_type = in.attr.type;
    o.event_config = in.attr.config;
    o.sample_period = in.attr.sample_period;
    o.callchain = in.attr.sample_type & PK_SAMPLE_CALLCHAIN;
    o.branch_stack = in.attr.sample_type & PK_SAMPLE_BRANCH_STACK;
    o.hw_idx = o.branch_stack && (in.attr.branch_sample_type & PK_BRANCH_HW_INDEX);
    o.cpu = in.attr.sample_type & PK_SAMPLE_CPU;
    char path[128];
    snprintf(path, sizeof path, "%s/rt.data", pk_fuzz_tmpdir());
    if (write_all(&in, &o, path, &err)) {
        if (!strstr(err.msg, "does not fit in a record") && !strstr(err.msg, "too long"))
            pk_fuzz_fail("the writer refused what the reader accepted: %s", err.msg);
        if (access(path, F_OK) == 0)
            pk_fuzz_fail("a failed write left %s behind", path);
        evlist_free(&in);
        return 0;
    }
    collect(&cb, &back);
    if (pk_perf_read(path, &cb, NULL, &err))
        pk_fuzz_fail("the reader refused what the writer wrote: %s", err.msg);
    compare(&in, &back, &o);
    unlink(path);
    evlist_free(&in);
    evlist_free(&back);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return pk_fuzz_perf_mutate(data, size, max_size, seed);
}

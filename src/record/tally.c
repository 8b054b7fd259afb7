/* tally.c — what a finished recording holds: samples per process, read back
 * through the perf.data reader. `record` closes with this count instead of
 * the file's size, and reading the file is also the check that perf (or the
 * plugin) left a complete, readable file, after a Ctrl-C too. */
#include "record/record.h"

#include "perf/perf_data.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct tally_ctx {
    pk_record_tally *t;
    size_t last;          /* index of the last process seen: samples come in runs */
    pk_err *err;
} tally_ctx;

static pk_record_proc *proc_of(tally_ctx *c, uint32_t pid)
{
    pk_vec *v = &c->t->procs;
    if (c->last < v->len && PK_VEC_AT(v, pk_record_proc, c->last).pid == pid)
        return &PK_VEC_AT(v, pk_record_proc, c->last);
    /* a handful of processes: a linear search is enough; the newest entry
     * of a pid is its current program */
    for (size_t i = v->len; i-- > 0;)
        if (PK_VEC_AT(v, pk_record_proc, i).pid == pid) {
            c->last = i;
            return &PK_VEC_AT(v, pk_record_proc, i);
        }
    pk_record_proc *p = pk_vec_push(v);
    if (!p) {
        pk_err_set(c->err, "out of memory counting samples");
        return NULL;
    }
    p->pid = pid;
    c->last = v->len - 1;
    return p;
}

/* An address after the [user] marker (or before any marker: chains from
 * perf script text have none). */
static bool has_user_frame(const pk_sample *s)
{
    bool user = true;
    for (uint64_t i = 0; i < s->callchain_nr; i++) {
        uint64_t a = pk_ld64(&s->callchain[i]);
        if (a >= PK_CONTEXT_MAX)
            user = a == PK_CONTEXT_USER;
        else if (user)
            return true;
    }
    return false;
}

static int on_sample(void *ctx, const pk_sample *s)
{
    tally_ctx *c = ctx;
    pk_record_proc *p = proc_of(c, s->pid);
    if (!p)
        return -1;
    p->samples++;
    c->t->samples++;
    /* a chain: a stack copy (--call-graph dwarf), or a user frame in the
     * call chain */
    if (s->stack_size || has_user_frame(s))
        c->t->with_callchain++;
    if (s->branch_nr)
        c->t->with_branches++;
    return 0;
}

/* A process's name is the COMM of its main thread (tid == pid); threads may
 * name themselves otherwise. An exec starts a new entry for the same pid
 * once the old program has samples: a script and the program it execs are
 * counted apart. */
static int on_comm(void *ctx, const pk_comm_event *e)
{
    tally_ctx *c = ctx;
    if (e->pid != e->tid)
        return 0;
    pk_record_proc *p = proc_of(c, e->pid);
    if (p && e->exec && p->samples) {
        if (!(p = pk_vec_push(&c->t->procs))) {
            pk_err_set(c->err, "out of memory counting samples");
            return -1;
        }
        p->pid = e->pid;
        c->last = c->t->procs.len - 1;
    }
    if (!p)
        return -1;
    snprintf(p->comm, sizeof p->comm, "%s", e->comm);
    return 0;
}

/* A forked process has its parent's name until it execs (perf writes no
 * COMM for it). */
static int on_task(void *ctx, const pk_task_event *e)
{
    tally_ctx *c = ctx;
    if (!e->is_fork || e->pid == e->ppid)
        return 0;
    pk_record_proc *parent = proc_of(c, e->ppid);
    if (!parent)
        return -1;
    char comm[16];
    memcpy(comm, parent->comm, sizeof comm);
    pk_record_proc *p = proc_of(c, e->pid);
    if (!p)
        return -1;
    if (!p->comm[0])
        memcpy(p->comm, comm, sizeof comm);
    return 0;
}

static int by_samples(const void *a, const void *b)
{
    const pk_record_proc *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int pk_record_tally_file(const char *path, pk_record_tally *t, pk_err *err)
{
    memset(t, 0, sizeof *t);
    pk_vec_init(&t->procs, sizeof(pk_record_proc));
    tally_ctx c = {t, 0, err};
    pk_perf_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = &c;
    cb.sample = on_sample;
    cb.comm = on_comm;
    cb.task = on_task;
    pk_perf_stats st;
    if (pk_perf_read(path, &cb, &st, err) != 0) {
        pk_record_tally_free(t);
        return -1;
    }
    t->lost = st.lost_events;
    /* processes that only have a COMM (perf's own "perf-exec" before the
     * exec) are not worth listing */
    size_t n = 0;
    for (size_t i = 0; i < t->procs.len; i++)
        if (PK_VEC_AT(&t->procs, pk_record_proc, i).samples)
            PK_VEC_AT(&t->procs, pk_record_proc, n++) = PK_VEC_AT(&t->procs, pk_record_proc, i);
    t->procs.len = n;
    if (n > 1)
        qsort(t->procs.data, n, sizeof(pk_record_proc), by_samples);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = PK_VEC_AT(&t->procs, pk_record_proc, k).pid == PK_VEC_AT(&t->procs, pk_record_proc, i).pid;
        t->nprocs += !seen;
    }
    return 0;
}

void pk_record_tally_free(pk_record_tally *t)
{
    pk_vec_free(&t->procs);
}

/* perf_reorder.c — test helper for perf_order.sh, linked with libpgokit.a.
 *
 *   perf_reorder copy IN OUT      IN's records (read in time order) written
 *                                 again with the project's writer, same attr
 *   perf_reorder shuffle IN OUT   the same records, but inside each round of
 *                                 the writer (ROUND records) the samples come
 *                                 first and the COMM / MMAP2 / FORK / EXIT
 *                                 after them, as perf writes one CPU's buffer
 *                                 after another's: a sample precedes the
 *                                 mapping it needs in file order, never
 *                                 across a FINISHED_ROUND
 *   perf_reorder tally FILE       record's closing summary of FILE (per process)
 *
 * Records are kept in memory: for test-sized recordings only. */
#include "perf/perf_data.h"
#include "record/record.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUND 4096 /* the writer's FINISHED_ROUND interval (perf_write.c) */

typedef struct rec {
    char kind;                  /* S, M, C, T */
    pk_sample s;
    pk_mmap_event m;
    pk_comm_event c;
    pk_task_event t;
    uint64_t *chain;
    pk_branch *br;
    char *name;
} rec;

typedef struct ctx {
    rec *v;
    size_t n, cap;
    pk_perf_writer_opts o;
    uint64_t lost;
} ctx;

static rec *add(ctx *c, char kind)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4096;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
        if (!c->v)
            abort();
    }
    rec *r = &c->v[c->n++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    return r;
}

static int on_attr(void *p, const pk_perf_attr *a)
{
    ctx *c = p;
    c->o.event_type = a->type;
    c->o.event_config = a->config;
    c->o.sample_period = a->sample_period;
    c->o.callchain = a->sample_type & PK_SAMPLE_CALLCHAIN;
    c->o.branch_stack = a->sample_type & PK_SAMPLE_BRANCH_STACK;
    c->o.hw_idx = a->branch_sample_type & PK_BRANCH_HW_INDEX;
    c->o.cpu = a->sample_type & PK_SAMPLE_CPU;
    return 0;
}

static int on_sample(void *p, const pk_sample *s)
{
    rec *r = add(p, 'S');
    r->s = *s;
    r->chain = malloc(8 * (s->callchain_nr + 1));
    memcpy(r->chain, s->callchain, 8 * s->callchain_nr);
    r->s.callchain = r->chain;
    r->br = malloc(sizeof(pk_branch) * (s->branch_nr + 1));
    memcpy(r->br, s->branches, sizeof(pk_branch) * s->branch_nr);
    r->s.branches = r->br;
    return 0;
}

static int on_mmap(void *p, const pk_mmap_event *m)
{
    rec *r = add(p, 'M');
    r->m = *m;
    r->m.filename = r->name = strdup(m->filename);
    return 0;
}

static int on_comm(void *p, const pk_comm_event *e)
{
    rec *r = add(p, 'C');
    r->c = *e;
    r->c.comm = r->name = strdup(e->comm);
    return 0;
}

static int on_task(void *p, const pk_task_event *t)
{
    add(p, 'T')->t = *t;
    return 0;
}

static int write_one(pk_perf_writer *w, const rec *r, pk_err *e)
{
    switch (r->kind) {
    case 'S': return pk_perf_write_sample(w, &r->s, e);
    case 'M': return pk_perf_write_mmap(w, &r->m, e);
    case 'C': return pk_perf_write_comm(w, &r->c, e);
    default: return pk_perf_write_task(w, &r->t, e);
    }
}

static int rewrite(const char *in, const char *out, bool shuffle)
{
    ctx c = {0};
    pk_perf_callbacks cb = {.ctx = &c, .attr = on_attr, .sample = on_sample, .mmap = on_mmap, .comm = on_comm,
                            .task = on_task};
    pk_perf_stats st;
    pk_err e = {0};
    if (pk_perf_read(in, &cb, &st, &e)) {
        fprintf(stderr, "perf_reorder: %s\n", e.msg);
        return 1;
    }
    pk_perf_writer *w = pk_perf_writer_open(out, &c.o, &e);
    if (!w) {
        fprintf(stderr, "perf_reorder: %s\n", e.msg);
        return 1;
    }
    size_t moved = 0;
    for (size_t b = 0; b < c.n; b += ROUND) {
        size_t end = b + ROUND < c.n ? b + ROUND : c.n;
        for (int pass = 0; pass < (shuffle ? 2 : 1); pass++)
            for (size_t i = b; i < end; i++) {
                bool sample = c.v[i].kind == 'S';
                if (shuffle && sample != (pass == 0))
                    continue;
                if (shuffle && !sample && i > b && c.v[i - 1].kind == 'S')
                    moved++;
                if (write_one(w, &c.v[i], &e)) {
                    fprintf(stderr, "perf_reorder: %s\n", e.msg);
                    pk_perf_writer_abort(w);
                    return 1;
                }
            }
    }
    if (st.lost_events && pk_perf_write_lost(w, st.lost_events, &e)) {
        fprintf(stderr, "perf_reorder: %s\n", e.msg);
        pk_perf_writer_abort(w);
        return 1;
    }
    if (pk_perf_writer_close(w, &e)) {
        fprintf(stderr, "perf_reorder: %s\n", e.msg);
        return 1;
    }
    printf("%zu records, %zu runs of non-sample records moved behind later samples\n", c.n, moved);
    for (size_t i = 0; i < c.n; i++) {
        free(c.v[i].chain);
        free(c.v[i].br);
        free(c.v[i].name);
    }
    free(c.v);
    return 0;
}

static int tally(const char *path)
{
    pk_record_tally t;
    pk_err e = {0};
    if (pk_record_tally_file(path, &t, &e)) {
        fprintf(stderr, "perf_reorder: %s\n", e.msg);
        return 1;
    }
    printf("samples %" PRIu64 " callchain %" PRIu64 " branches %" PRIu64 " lost %" PRIu64 " processes %zu\n",
           t.samples, t.with_callchain, t.with_branches, t.lost, t.nprocs);
    for (size_t i = 0; i < t.procs.len; i++) {
        const pk_record_proc *p = &PK_VEC_AT(&t.procs, pk_record_proc, i);
        printf("%s[%" PRIu32 "] %" PRIu64 "\n", p->comm[0] ? p->comm : "?", p->pid, p->samples);
    }
    pk_record_tally_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && (!strcmp(argv[1], "copy") || !strcmp(argv[1], "shuffle")))
        return rewrite(argv[2], argv[3], !strcmp(argv[1], "shuffle"));
    if (argc == 3 && !strcmp(argv[1], "tally"))
        return tally(argv[2]);
    fprintf(stderr, "usage: perf_reorder copy|shuffle IN OUT | tally FILE\n");
    return 2;
}

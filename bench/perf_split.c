/* perf_split.c — cuts one perf.data recording into N host-sized pieces of
 * consecutive samples (in the reader's time order), for
 * bench/store_sparse_fleet.sh: a fleet where each host saw a short, sparse
 * slice of the same workload.
 *
 *   perf_split IN.data OUTDIR N MIN MAX [SEED]
 *
 * Piece sizes are drawn uniformly from MIN..MAX (a fixed LCG, SEED default
 * 1) and scaled so that the N pieces hold every sample of IN exactly once;
 * the last piece takes the rounding remainder. Every piece starts with the
 * COMM/MMAP/FORK/EXIT records seen before its first sample (a host's
 * process is mapped before it is sampled), so each is a complete recording
 * on its own. Writes OUTDIR/host-NNNNN.data and prints "total min max" of
 * the piece sizes; the caller checks them against MIN..MAX. */
#include "perf/perf_data.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct saved_event {
    int kind;                   /* 0 comm, 1 mmap, 2 task */
    pk_comm_event comm;
    pk_mmap_event mmap;
    pk_task_event task;
} saved_event;

typedef struct splitter {
    const char *outdir;
    pk_perf_writer_opts opts;
    bool have_attr;
    saved_event *ev;
    size_t nev, capev;
    uint64_t *sizes;            /* samples per piece */
    size_t npieces, piece;      /* the piece being written */
    uint64_t in_piece;          /* samples written to it */
    pk_perf_writer *w;
    pk_err *err;
} splitter;

static int count_sample(void *ctx, const pk_sample *s)
{
    (void)s;
    ++*(uint64_t *)ctx;
    return 0;
}

static int on_attr(void *ctx, const pk_perf_attr *a)
{
    splitter *sp = ctx;
    if (sp->have_attr)
        return 0;
    sp->have_attr = true;
    sp->opts.event_type = a->type;
    sp->opts.event_config = a->config;
    sp->opts.sample_period = a->sample_period;
    sp->opts.callchain = a->sample_type & PK_SAMPLE_CALLCHAIN;
    sp->opts.branch_stack = a->sample_type & PK_SAMPLE_BRANCH_STACK;
    sp->opts.hw_idx = a->branch_sample_type & PK_BRANCH_HW_INDEX;
    sp->opts.cpu = a->sample_type & PK_SAMPLE_CPU;
    sp->opts.cmdline = "bench/perf_split";
    return 0;
}

static int write_event(splitter *sp, const saved_event *e)
{
    switch (e->kind) {
    case 0: return pk_perf_write_comm(sp->w, &e->comm, sp->err);
    case 1: return pk_perf_write_mmap(sp->w, &e->mmap, sp->err);
    default: return pk_perf_write_task(sp->w, &e->task, sp->err);
    }
}

/* Keeps a copy (for the pieces still to come) and writes it to the open one. */
static int save_event(splitter *sp, saved_event e)
{
    if (sp->nev == sp->capev) {
        sp->capev = sp->capev ? 2 * sp->capev : 64;
        saved_event *n = realloc(sp->ev, sp->capev * sizeof *n);
        if (!n)
            return pk_err_set(sp->err, "out of memory");
        sp->ev = n;
    }
    if (e.kind == 0 && !(e.comm.comm = strdup(e.comm.comm)))
        return pk_err_set(sp->err, "out of memory");
    if (e.kind == 1 && !(e.mmap.filename = strdup(e.mmap.filename)))
        return pk_err_set(sp->err, "out of memory");
    sp->ev[sp->nev++] = e;
    return sp->w ? write_event(sp, &e) : 0;
}

static int on_comm(void *ctx, const pk_comm_event *c) { return save_event(ctx, (saved_event){.kind = 0, .comm = *c}); }
static int on_mmap(void *ctx, const pk_mmap_event *m) { return save_event(ctx, (saved_event){.kind = 1, .mmap = *m}); }
static int on_task(void *ctx, const pk_task_event *t) { return save_event(ctx, (saved_event){.kind = 2, .task = *t}); }

static int on_sample(void *ctx, const pk_sample *s)
{
    splitter *sp = ctx;
    if (sp->w && sp->in_piece == sp->sizes[sp->piece]) {
        if (pk_perf_writer_close(sp->w, sp->err) != 0) {
            sp->w = NULL;
            return -1;
        }
        sp->w = NULL;
        sp->piece++;
    }
    if (!sp->w) {
        if (sp->piece >= sp->npieces)
            return pk_err_set(sp->err, "more samples than on the counting pass");
        char path[4096];
        snprintf(path, sizeof path, "%s/host-%05zu.data", sp->outdir, sp->piece);
        if (!(sp->w = pk_perf_writer_open(path, &sp->opts, sp->err)))
            return -1;
        sp->in_piece = 0;
        for (size_t i = 0; i < sp->nev; i++)
            if (write_event(sp, &sp->ev[i]) != 0)
                return -1;
    }
    sp->in_piece++;
    return pk_perf_write_sample(sp->w, s, sp->err);
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 7) {
        fprintf(stderr, "usage: perf_split IN.data OUTDIR N MIN MAX [SEED]\n");
        return 2;
    }
    size_t n = strtoull(argv[3], NULL, 10);
    uint64_t lo = strtoull(argv[4], NULL, 10), hi = strtoull(argv[5], NULL, 10);
    uint64_t seed = argc == 7 ? strtoull(argv[6], NULL, 10) : 1;
    if (n == 0 || lo == 0 || hi < lo) {
        fprintf(stderr, "perf_split: want N > 0 and 0 < MIN <= MAX\n");
        return 2;
    }
    pk_err err = {0};
    uint64_t total = 0;
    pk_perf_callbacks cc = {.ctx = &total, .sample = count_sample};
    if (pk_perf_read(argv[1], &cc, NULL, &err) != 0) {
        fprintf(stderr, "perf_split: %s\n", err.msg);
        return 1;
    }
    if (total < n) {
        fprintf(stderr, "perf_split: %s: %" PRIu64 " samples, fewer than %zu pieces\n", argv[1], total, n);
        return 1;
    }
    /* draw, then scale to the total: every sample in exactly one piece */
    uint64_t *sizes = calloc(n, sizeof *sizes), drawn = 0, x = seed * 6364136223846793005ull + 1;
    double *r = calloc(n, sizeof *r);
    if (!sizes || !r)
        return 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        r[i] = (double)(lo + (x >> 33) % (hi - lo + 1));
        drawn += (uint64_t)r[i];
    }
    uint64_t assigned = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        sizes[i] = (uint64_t)(r[i] * (double)total / (double)drawn + 0.5);
        if (sizes[i] == 0)
            sizes[i] = 1;
        assigned += sizes[i];
    }
    if (assigned >= total) {
        fprintf(stderr, "perf_split: %" PRIu64 " samples do not fill %zu pieces\n", total, n);
        return 1;
    }
    sizes[n - 1] = total - assigned;
    uint64_t mn = UINT64_MAX, mx = 0;
    for (size_t i = 0; i < n; i++) {
        mn = sizes[i] < mn ? sizes[i] : mn;
        mx = sizes[i] > mx ? sizes[i] : mx;
    }

    splitter sp = {.outdir = argv[2], .sizes = sizes, .npieces = n, .err = &err};
    pk_perf_callbacks cb = {.ctx = &sp, .attr = on_attr, .sample = on_sample,
                            .mmap = on_mmap, .comm = on_comm, .task = on_task};
    int rc = pk_perf_read(argv[1], &cb, NULL, &err);
    if (rc == 0 && sp.w) {
        rc = pk_perf_writer_close(sp.w, &err);
        sp.w = NULL;
    }
    if (rc == 0 && (sp.piece + 1 != n || sp.in_piece != sizes[n - 1]))
        rc = pk_err_set(&err, "wrote %zu pieces, not %zu", sp.piece + 1, n);
    if (rc != 0) {
        if (sp.w)
            pk_perf_writer_abort(sp.w);
        fprintf(stderr, "perf_split: %s\n", err.msg);
        return 1;
    }
    printf("%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", total, mn, mx);
    return 0;
}

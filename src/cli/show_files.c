/* show_files.c — `pgokit show` on the files pgokit writes that are not
 * sample profiles: raw profiles (profgen --raw-only), samples (perf.data from
 * record, pprof from convert) and exact counts (record --exact-counts). Each
 * gets a short readable summary and the command that turns it into what a
 * compiler reads. Names and paths from the file are printed escaped. */
#include "aggregate/aggregate.h"
#include "unwind/rawprof2.h"
#include "cli/cli.h"
#include "cli/show.h"
#include "perf/perf_data.h"
#include "pprof/pprof.h"
#include "record/record.h"

#include <inttypes.h>
#include <stdlib.h>

static void put_esc(const char *s)
{
    char buf[1024];
    pk_escape(buf, sizeof buf, s, strlen(s), PK_ESC_KEEP_UTF8);
    fputs(buf, stdout);
}

static void put_build_id(const uint8_t *id, unsigned n)
{
    if (!n)
        fputs("none", stdout);
    for (unsigned i = 0; i < n; i++)
        printf("%02x", id[i]);
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* ---- raw profile ---- */

static int by_count_desc(const void *a, const void *b)
{
    const pk_pair_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->a < y->a ? -1 : x->a > y->a ? 1 : (x->b > y->b) - (x->b < y->b);
}

static void put_addr(uint64_t a)
{
    if (a == PK_AGG_EXTERNAL)
        fputs("external", stdout);
    else
        printf("0x%" PRIx64, a);
}

/* The top entries of a pair map, count descending. */
static int list_top(const pk_pairmap *m, size_t top, const char *what, bool ranges)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(m, &n);
    if (!v && m->len)
        return -1;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum = pk_sat_add(sum, v[i].n);
    qsort(v, n, sizeof *v, by_count_desc);
    size_t shown = top && top < n ? top : n;
    printf("Top %zu %s by count:\n%14s %8s  %s\n", shown, what, "count", "%", ranges ? "begin-end (bytes)" : "source -> target");
    for (size_t i = 0; i < shown; i++) {
        printf("%14" PRIu64 " %7.3f%%  ", v[i].n, pct(v[i].n, sum));
        if (ranges) {
            printf("0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 ")\n", v[i].a, v[i].b, v[i].b - v[i].a + 1);
        } else {
            put_addr(v[i].a);
            fputs(" -> ", stdout);
            put_addr(v[i].b);
            fputc('\n', stdout);
        }
    }
    free(v);
    return 0;
}

int pk_show_rawprof(const char *path, size_t top)
{
    pk_rawprof2 r2;
    pk_err err;
    if (pk_rawprof2_read(&r2, path, &err))
        return pk_cli_fail("show", &err);
    pk_rawprof r = r2.flat;
    const pk_agg_stats *s = &r.stats;
    size_t nctx = pk_csraw_num_ctxs(&r2.lbr); /* (the reader interns only contexts with counts) */
    printf("Profile: %s\n", path);
    printf("Format: pgokit raw profile, version %u (unsymbolized branch and range counts%s; "
           "`pgokit profgen --binary BIN --raw FILE -o OUT` makes a sample profile of it)\n",
           r2.version, r2.version == 1 ? ", flat" : " per calling context, IP samples as observed");
    fputs("Binary: ", stdout);
    put_esc(r.path);
    fputs(", build-id ", stdout);
    put_build_id(r.build_id, r.build_id_size);
    printf(", preferred base 0x%" PRIx64 "\n", r.preferred_base);
    printf("Samples: %" PRIu64 " read, %" PRIu64 " used", s->samples, s->samples_used);
    if (s->samples_other_pid)
        printf(", %" PRIu64 " other pid", s->samples_other_pid);
    if (s->samples_no_lbr)
        printf(", %" PRIu64 " without branch stack", s->samples_no_lbr);
    if (s->samples_outside)
        printf(", %" PRIu64 " entirely outside the binary", s->samples_outside);
    if (nctx)
        printf("\nContexts: %zu calling contexts (%" PRIu64 " samples unwound): %zu distinct ranges and %zu "
               "distinct branches in them%s", nctx, r2.unwind.samples_unwound, r2.lbr.ranges.len,
               r2.lbr.branches.len, r2.flags & PK_RAW_CALLS_ONLY ? " (calls and jumps to function entries only)" : "");
    if (pk_rawprof2_has_ip(&r2))
        printf("\nIP samples: %" PRIu64 " used of %" PRIu64 "; %zu distinct (context, address) hits, %zu call "
               "observations, %zu addresses of unknown caller (block counts are inferred when a profile is made)",
               r2.ip_stats.used, r2.ip_stats.samples, r2.ip.ranges.len, r2.ip.branches.len, r2.ip_unplaced.len);
    /* the lists below: summed over the contexts */
    if (pk_csraw_add_flat(&r2.lbr, &r2.flat, &err)) {
        pk_rawprof2_free(&r2);
        return pk_cli_fail("show", &err);
    }
    r = r2.flat;
    printf("\nBranches: %zu distinct, %" PRIu64 " taken branches counted, %" PRIu64 " LBR entries to other code\n",
           r.branches.len, s->branches, s->branches_external);
    printf("Ranges: %zu distinct, %" PRIu64 " counted", r.ranges.len, s->ranges);
    const char *sep = "; dropped: ";
    for (int i = 0; i < PK_RANGE_DROP_N; i++)
        if (s->range_drop[i]) {
            printf("%s%" PRIu64 " %s", sep, s->range_drop[i], pk_range_drop_names[i]);
            sep = ", ";
        }
    printf("\nProcesses: %" PRIu64 " (%" PRIu64 " forks, %" PRIu64 " execs); mappings: %" PRIu64 ", of the binary %" PRIu64
           "\n", s->processes, s->forks, s->execs, s->mmaps, s->mmaps_target);
    int rc = list_top(&r.branches, top, "branches", false) || list_top(&r.ranges, top, "ranges", true);
    pk_rawprof2_free(&r2);
    if (rc) {
        pk_err_set(&err, "out of memory");
        return pk_cli_fail("show", &err);
    }
    return 0;
}

/* ---- perf.data and pprof ---- */

typedef struct samples_ctx {
    uint64_t samples, with_branches, with_chain, period, build_ids, mmaps, comms;
    pk_u64map pids;
    char names[8][64];
    unsigned nnames;
} samples_ctx;

static int on_sample(void *vc, const pk_sample *s)
{
    samples_ctx *c = vc;
    c->samples++;
    c->with_branches += s->branch_nr > 0;
    c->with_chain += s->callchain_nr > 0;
    c->period = pk_sat_add(c->period, s->period);
    return pk_u64map_slot(&c->pids, s->pid) ? 0 : -1;
}

static int on_comm(void *vc, const pk_comm_event *e)
{
    samples_ctx *c = vc;
    c->comms++;
    for (unsigned i = 0; i < c->nnames; i++)
        if (!strncmp(c->names[i], e->comm, sizeof c->names[i] - 1))
            return 0;
    if (c->nnames < 8)
        snprintf(c->names[c->nnames++], sizeof c->names[0], "%s", e->comm);
    return 0;
}

static int on_mmap(void *vc, const pk_mmap_event *m)
{
    ((samples_ctx *)vc)->mmaps++;
    return 0;
}

static int on_build_id(void *vc, const pk_build_id_event *b)
{
    ((samples_ctx *)vc)->build_ids++;
    return 0;
}

int pk_show_samples(const char *path, bool pprof)
{
    samples_ctx c;
    memset(&c, 0, sizeof c);
    pk_err err;
    if (pk_u64map_init(&c.pids, 64)) {
        pk_err_set(&err, "out of memory");
        return pk_cli_fail("show", &err);
    }
    pk_perf_callbacks cb = {.ctx = &c, .sample = on_sample, .comm = on_comm, .mmap = on_mmap,
                            .build_id = on_build_id};
    pk_perf_stats ps;
    pk_pprof_stats pp;
    int rc = pprof ? pk_pprof_read(path, &cb, &pp, &err) : pk_perf_read(path, &cb, &ps, &err);
    if (rc) {
        pk_u64map_free(&c.pids);
        return pk_cli_fail("show", &err);
    }
    printf("File: %s\n", path);
    if (pprof)
        printf("Format: pprof (%s; samples, not a sample profile)\n", pp.gzip ? "gzip-compressed" : "uncompressed");
    else
        printf("Format: perf.data (%s mode%s; samples, not a sample profile)\n", ps.pipe_mode ? "pipe" : "file",
               ps.compressed ? ", zstd-compressed" : "");
    printf("Samples: %" PRIu64 " (%" PRIu64 " with branch stacks, %" PRIu64 " with call chains), %" PRIu64
           " processes, period sum %" PRIu64 "\n", c.samples, c.with_branches, c.with_chain, c.pids.len, c.period);
    if (pprof) {
        printf("Value: %s/%s; locations %" PRIu64 ", functions %" PRIu64 ", mappings %" PRIu64 "\n", pp.value_type,
               pp.value_unit, pp.locations, pp.functions, pp.mappings);
    } else {
        printf("Mappings: %" PRIu64 ", build-ids: %" PRIu64 ", lost events: %" PRIu64 "\n", c.mmaps, c.build_ids,
               ps.lost_events);
    }
    if (c.nnames) {
        fputs("Commands:", stdout);
        for (unsigned i = 0; i < c.nnames; i++) {
            fputc(' ', stdout);
            put_esc(c.names[i]);
        }
        fputs(c.comms > c.nnames ? " ...\n" : "\n", stdout);
    }
    printf("`pgokit profgen --binary BIN --%s %s -o OUT` makes a sample profile of it%s\n", pprof ? "pprof" : "perf",
           path, pprof ? "" : "; `pgokit dump` lists it");
    pk_u64map_free(&c.pids);
    return 0;
}

/* ---- exact counts ---- */

int pk_show_exact(const char *path)
{
    pk_exact_counts c;
    pk_err err;
    if (pk_exact_read(path, &c, &err))
        return pk_cli_fail("show", &err);
    printf("File: %s\n", path);
    printf("Format: pgokit exact counts (every taken branch and fall-through range of one emulated run; "
           "`pgokit overlap --exact` compares profiles with them)\n");
    printf("Binaries: %zu, unmapped branches: %" PRIu64 "\n", c.nbins, c.unmapped);
    for (size_t i = 0; i < c.nbins; i++) {
        const pk_exact_binary *b = &c.bins[i];
        uint64_t rs = 0, bs = 0;
        for (size_t k = 0; k < b->nranges; k++)
            rs = pk_sat_add(rs, b->ranges[k].count);
        for (size_t k = 0; k < b->nbranches; k++)
            bs = pk_sat_add(bs, b->branches[k].count);
        fputs("  ", stdout);
        put_esc(b->path);
        fputs(" build-id ", stdout);
        put_build_id(b->build_id, b->build_id_size);
        printf(": %zu ranges (%" PRIu64 " executions), %zu branches (%" PRIu64 " taken)\n", b->nranges, rs,
               b->nbranches, bs);
    }
    printf("`pgokit record --print-exact %s` lists every count\n", path);
    pk_exact_free(&c);
    return 0;
}

/* pipeline_feed.h — inside the pipeline: the sample feed between a reader
 * and the aggregator (pipeline_feed.c). */
#ifndef PK_PIPELINE_FEED_H
#define PK_PIPELINE_FEED_H

#include "profgen/pipeline.h"
#include "binary/binary.h"
#include "infer/ip_ranges.h"
#include "unwind/unwind.h"

/* Sits between the reader and the aggregator: progress, and samples with a
 * stack to the unwinder. */
typedef struct pk_feed {
    pk_perf_callbacks inner;
    pk_agg *agg;
    pk_unwinder *unw;            /* CSSPGO: every sample also goes to the unwinder */
    pk_ipraw *ip;                /* samples without a branch stack (or all, with IP forced) */
    uint64_t *frames;            /* translation scratch for IP samples */
    size_t frames_cap;
    bool weight_is_period;       /* pprof: a sample's value counts samples */
    /* IP samples whose leaf mapped nowhere yet, kept to try again at the
     * end: perf writes each CPU's buffer in turn and orders records only by
     * time, so a sample can come in the file before the MMAP2 of the exec
     * that made its code (a reader that sorts rounds by time would not see
     * it; this one reads in file order) */
    pk_vec late;                 /* uint64_t: pid, weight, n, then n raw user frames */
    uint64_t late_samples;
    const pk_pipeline_request *req;
    pk_err *err;
    const char *path;
    uint64_t size, n;
    const pk_elf *elf;           /* the target (--sample-period counts its entries) */
    pk_binary *bin;              /* the target: its CFI unwinds samples that carry a stack copy */
    /* not NULL: samples with a stack that do not go to the unwinder are left
     * out when their leaf is in a prologue or epilogue (drop_prolog_epilog_flat) */
    const pk_unwind_code *drop_pe;
    uint64_t dropped_pe;         /* samples so left out (pk_unwind_stats.samples_prolog_epilog:
                                    raw profiles keep the aggregation statistics by position) */
} pk_feed;

/* The reader's callbacks into f (f->inner: the aggregator's). */
void pk_feed_callbacks(pk_feed *f, const pk_pipeline_request *req, pk_perf_callbacks *cb);
/* The IP samples kept for a second translation, now that every mapping is
 * known (once the input is read). */
int pk_feed_ip_late(pk_feed *f);

#endif

/* pipeline_feed.c — the sample feed between a reader and the aggregator:
 * progress, llvm-profgen's sample scaling, IP samples to the IP profile and
 * samples with a stack to the unwinder. */
#include "profgen/pipeline_feed.h"
#include "unwind/stack_cfi.h"

#include <stdlib.h>

/* An IP sample: its user frames, leaf first, into the IP profile. */
#define LATE_MAX (1u << 22) /* samples kept for a second translation */

static int frames_room(pk_feed *f, size_t need)
{
    if (need > f->frames_cap) {
        uint64_t *fr = realloc(f->frames, need * 2 * sizeof *fr);
        if (!fr)
            return pk_err_set(f->err, "out of memory");
        f->frames = fr;
        f->frames_cap = need * 2;
    }
    return 0;
}

typedef struct link_ctx {
    pk_agg *agg;
    uint32_t pid;
} link_ctx;

static uint64_t to_link(void *ctx, uint64_t runtime)
{
    const link_ctx *l = ctx;
    return pk_agg_translate(l->agg, l->pid, runtime); /* PK_AGG_EXTERNAL is UINT64_MAX */
}

/* A sample with the user registers and a stack copy (perf record
 * --call-graph dwarf): its chain unwound with the binary's CFI. 1: the
 * sample has no usable registers, or its leaf is not (yet) in the binary:
 * left to the other paths. */
static int unwound_sample(pk_feed *f, const pk_sample *s, uint64_t w)
{
    const pk_cfi *cfi;
    if (!f->bin)
        return 1;
    if (pk_binary_cfi(f->bin, &cfi, f->err) || frames_room(f, 2 * PK_STACK_MAX_FRAMES))
        return -1;
    link_ctx l = {f->agg, s->pid};
    size_t n;
    pk_stack_stop stop;
    pk_sample shorter;
    if (f->req->stack_copy_limit && s->stack_size > f->req->stack_copy_bytes) {
        /* (no bytes: no copy, and the sample goes on as one without) */
        shorter = *s;
        shorter.stack_size = f->req->stack_copy_bytes;
        s = &shorter;
    }
    if (pk_stack_unwind_sample(cfi, to_link, &l, s, f->frames + PK_STACK_MAX_FRAMES, f->frames, PK_STACK_MAX_FRAMES,
                               &n, &stop, f->err))
        return -1;
    if (!n || f->frames[0] == PK_AGG_EXTERNAL)
        return 1;
    f->ip->stats.stacks_unwound += w;
    if (stop != PK_STACK_END && stop != PK_STACK_EXTERNAL) {
        f->ip->stats.stacks_unwound_short += w;
        if (n == 1)
            f->ip->stats.stacks_unwound_leaf += w;
        if (stop == PK_STACK_NO_FDE)
            f->ip->stats.stacks_unwound_no_fde += w;
    }
    return pk_ipraw_add_unwound(f->ip, f->frames, n, w, f->err);
}

static int ip_sample(pk_feed *f, const pk_sample *s)
{
    if (f->req->pid >= 0 && s->pid != (uint32_t)f->req->pid)
        return 0;
    uint64_t w = (f->weight_is_period && s->period ? s->period : 1) * pk_sample_weight(s);
    if (s->attr && pk_perf_attr_counts_time(s->attr))
        f->ip->stats.time_weighted += w;
    if (s->stack_size) {
        int u = unwound_sample(f, s, w);
        if (u <= 0)
            return u;
    }
    if (frames_room(f, s->callchain_nr + 1))
        return -1;
    size_t n;
    if (s->callchain_nr) {
        n = pk_agg_translate_user_chain(f->agg, s->pid, (const uint8_t *)s->callchain, s->callchain_nr, f->frames);
    } else if ((s->misc & 7) == PK_CPUMODE_USER) { /* recorded without call chains */
        f->frames[0] = pk_agg_translate(f->agg, s->pid, s->ip);
        n = 1;
    } else {
        n = 0;
    }
    if (n && f->frames[0] == PK_AGG_EXTERNAL && s->callchain_nr && f->late_samples < LATE_MAX) {
        /* raw user frames, to translate again once every mapping is known */
        size_t k = 0, at = f->late.len;
        if (pk_vec_reserve(&f->late, at + 3 + s->callchain_nr))
            return pk_err_set(f->err, "out of memory");
        uint64_t *v = (uint64_t *)f->late.data + at;
        bool user = true;
        for (uint64_t i = 0; i < s->callchain_nr; i++) {
            uint64_t a = pk_ld64((const uint8_t *)s->callchain + 8 * i);
            if (a >= PK_CONTEXT_MAX)
                user = a == PK_CONTEXT_USER;
            else if (user)
                v[3 + k++] = a;
        }
        v[0] = s->pid;
        v[1] = w;
        v[2] = k;
        f->late.len = at + 3 + k;
        f->late_samples++;
        return 0;
    }
    return pk_ipraw_add(f->ip, f->frames, n, w, f->err);
}

/* The IP samples kept by ip_sample, translated with every mapping known. */
int pk_feed_ip_late(pk_feed *f)
{
    const uint64_t *v = (const uint64_t *)f->late.data;
    for (size_t at = 0; at < f->late.len;) {
        uint32_t pid = (uint32_t)v[at];
        uint64_t w = v[at + 1], k = v[at + 2];
        for (uint64_t i = 0; i < k; i++)
            f->frames[i] = pk_agg_translate(f->agg, pid, v[at + 3 + i]);
        if (pk_ipraw_add(f->ip, f->frames, (size_t)k, w, f->err))
            return -1;
        at += 3 + k;
    }
    return 0;
}

static int feed_sample_scaled(pk_feed *f, const pk_sample *s);

/* llvm-profgen's --leading-ip-only: the sample's instruction pointer as a
 * range of one instruction, nothing else. */
static int leading_ip(pk_feed *f, const pk_sample *s, uint64_t w)
{
    pk_rawprof *r = pk_agg_profile(f->agg);
    r->stats.samples += w;
    if (f->req->pid >= 0 && s->pid != (uint32_t)f->req->pid) {
        r->stats.samples_other_pid += w;
        return 0;
    }
    uint64_t v = s->ip ? pk_agg_translate(f->agg, s->pid, s->ip) : PK_AGG_EXTERNAL;
    if (v == PK_AGG_EXTERNAL) {
        r->stats.samples_outside += w;
        return 0;
    }
    r->stats.samples_used += w;
    r->stats.ranges += w;
    return pk_pairmap_add(&r->ranges, v, v, w) ? pk_err_set(f->err, "out of memory") : 0;
}

static int feed_sample(void *c, const pk_sample *s)
{
    pk_feed *f = c;
    if (f->req->progress && (++f->n & 0xffff) == 0)
        f->req->progress(f->req->cb_ctx, f->path, f->n, s->file_offset, f->size);
    if (f->req->sample_period || f->req->leading_ip_only) {
        /* llvm-profgen scales LBR-only samples (not those with stacks) */
        uint64_t w = pk_sample_weight(s);
        if (f->req->sample_period && (!s->callchain_nr || f->req->leading_ip_only)) {
            w = pk_sat_mul(w, f->req->sample_period);
            /* the entries llvm-profgen keeps: those with an end in the
             * binary's functions */
            uint64_t kept = 0;
            for (uint64_t i = 0; i < s->branch_nr && !f->req->leading_ip_only; i++) {
                uint64_t from = pk_ld64((const uint8_t *)&s->branches[i].from);
                uint64_t to = pk_ld64((const uint8_t *)&s->branches[i].to);
                uint64_t a = pk_agg_translate(f->agg, s->pid, from), b = pk_agg_translate(f->agg, s->pid, to);
                kept += (a != PK_AGG_EXTERNAL && pk_elf_func_at(f->elf, a)) ||
                        (b != PK_AGG_EXTERNAL && pk_elf_func_at(f->elf, b));
            }
            if (kept > 1)
                w /= kept - 1;
        }
        if (f->req->leading_ip_only)
            return w ? leading_ip(f, s, w) : 0;
        if (!w)
            return 0;
        pk_sample scaled = *s;
        scaled.weight = w;
        s = &scaled;
        return feed_sample_scaled(f, s);
    }
    return feed_sample_scaled(f, s);
}

static int feed_sample_scaled(pk_feed *f, const pk_sample *s)
{
    if (f->ip && (!s->branch_nr || f->req->samples == PK_SAMPLES_IP)) {
        /* the aggregator counts it (samples, without branch stack, other
         * pid) and, having no branch stack to count, does nothing else */
        if (!s->branch_nr && f->inner.sample(f->inner.ctx, s))
            return -1;
        return ip_sample(f, s);
    }
    /* A sample with a stack goes to the unwinder, which counts it in the
     * aggregator's statistics; its range and branch counts are the
     * unwinder's, per context (those of a stack without user frames go to
     * the flat profile). */
    if (f->unw && s->callchain_nr && (f->req->pid < 0 || s->pid == (uint32_t)f->req->pid))
        return pk_unwind_perf_sample(f->unw, f->agg, s, f->err);
    if (f->drop_pe && s->callchain_nr && s->branch_nr && (f->req->pid < 0 || s->pid == (uint32_t)f->req->pid)) {
        /* the leaf: the stack's first user frame, as the unwinder takes it */
        if (frames_room(f, s->callchain_nr + 1))
            return -1;
        size_t n = pk_agg_translate_user_chain(f->agg, s->pid, (const uint8_t *)s->callchain, s->callchain_nr,
                                               f->frames);
        if (n && f->frames[0] != PK_AGG_EXTERNAL && f->drop_pe->prolog_epilog(f->drop_pe->ctx, f->frames[0])) {
            pk_rawprof *r = pk_agg_profile(f->agg);
            uint64_t w = pk_sample_weight(s);
            r->stats.samples += w;
            f->dropped_pe += w;
            return 0;
        }
    }
    return f->inner.sample(f->inner.ctx, s);
}
static int feed_mmap(void *c, const pk_mmap_event *m)
{
    pk_feed *f = c;
    if (f->req->mmap_event)
        f->req->mmap_event(f->req->cb_ctx, m);
    return f->inner.mmap(f->inner.ctx, m);
}
static int feed_comm(void *c, const pk_comm_event *e) { pk_feed *f = c; return f->inner.comm(f->inner.ctx, e); }
static int feed_task(void *c, const pk_task_event *t) { pk_feed *f = c; return f->inner.task(f->inner.ctx, t); }
static int feed_bid(void *c, const pk_build_id_event *b) { pk_feed *f = c; return f->inner.build_id(f->inner.ctx, b); }


void pk_feed_callbacks(pk_feed *f, const pk_pipeline_request *req, pk_perf_callbacks *cb)
{
    *cb = (pk_perf_callbacks){.ctx = f, .sample = feed_sample, .mmap = feed_mmap, .comm = feed_comm,
                              .task = feed_task, .build_id = feed_bid, .sample_weights = true,
                              .events = req->perf_events, .nevents = req->nperf_events};
}

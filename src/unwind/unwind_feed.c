/* unwind_feed.c — perf samples into the unwinder (pk_unwind_perf_sample).
 *
 * Each sample is translated to link-time addresses, then identical samples
 * (a hot loop fills the LBR with the same entries under the same stack) are
 * merged: a small direct-mapped cache of recent samples, each one walked
 * once with its count as weight when it is evicted or at the end.
 *
 * With a worker (pk_unwind_opts.worker), the walks run on a second thread
 * while this one goes on reading, translating and merging; the walks touch
 * only the unwinder and the binary while the reading side touches only the
 * aggregator and this feed. Walks are handed over through a ring of sample
 * buffers (swapped, not copied). Walking costs more than reading, so when
 * the ring is full this thread walks the sample itself, with a walker and
 * a raw profile of its own, merged into the main one at the end: both
 * CPUs walk. Contexts are renumbered canonically afterwards
 * (pk_csraw_canonicalize), so the result does not depend on which thread
 * walked what.
 */
#include "unwind/unwind_internal.h"

#include <pthread.h>
#include <stdlib.h>

#define SAMPLE_CACHE 2048 /* samples kept for merging */
#define RING 256          /* samples in flight to the worker */
/* A sleeping worker is woken once this many samples wait, not at the first:
 * a wake-up per sample made thousands of context switches per 10k samples
 * (a few microseconds each, on both CPUs). */
#define WAKE_BATCH 32

typedef struct sample_buf {
    uint64_t hash, weight;   /* weight 0: empty */
    uint32_t nstack, nlbr;
    uint64_t *words;         /* the stack, then (from, to, 0) per LBR entry */
    size_t cap;
} sample_buf;

struct pk_unwind_feed {
    pk_unwinder *u;
    sample_buf *cache;
    uint64_t *tstack;        /* translation scratch */
    pk_branch *tlbr;
    size_t tcap;
    uint64_t counted, no_lbr, no_stack; /* samples with nothing to walk */
    /* the worker */
    bool started, closing, failed, waiting_take;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t can_take;  /* the feeder never waits: a full ring is walked here */
    sample_buf ring[RING];
    size_t head, count;
    pk_err werr;             /* the worker's error, when failed */
    /* this thread's own walker, for samples the worker has no room for */
    pthread_mutex_t code_lock;
    pk_unwinder *local;
    pk_csraw local_raw;
    uint32_t here_every, submitted;
};

static int walk(pk_unwinder *u, sample_buf *b, pk_err *err)
{
    int rc = pk_unwind_sample(u, b->words, b->nstack, (const pk_branch *)(b->words + b->nstack), b->nlbr,
                              b->weight, err);
    b->weight = 0;
    return rc;
}

static void *worker_main(void *arg)
{
    struct pk_unwind_feed *f = arg;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->count && !f->closing) {
            f->waiting_take = true;
            pthread_cond_wait(&f->can_take, &f->mu);
            f->waiting_take = false;
        }
        size_t n = f->count, first = f->head;
        if (!n)
            break; /* closing and drained */
        pthread_mutex_unlock(&f->mu);
        /* the feeding side never touches the n taken slots meanwhile */
        pk_err err;
        bool bad = false;
        for (size_t i = 0; i < n && !bad; i++)
            bad = walk(f->u, &f->ring[(first + i) % RING], &err) != 0;
        pthread_mutex_lock(&f->mu);
        if (bad) {
            f->werr = err;
            f->failed = true;
            f->count = 0;
            break;
        }
        f->head = (first + n) % RING;
        f->count -= n;
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* Hands a sample over (swapping buffers with a free ring slot), or walks it
 * here without a worker. *b is empty afterwards. */
static int submit(struct pk_unwind_feed *f, sample_buf *b, pk_err *err)
{
    if (!f->started)
        return walk(f->u, b, err);
    bool forced = f->here_every && ++f->submitted % f->here_every == 0;
    pthread_mutex_lock(&f->mu);
    if ((f->count == RING || forced) && !f->failed) {
        /* the worker is behind: walk this one here */
        pthread_mutex_unlock(&f->mu);
        if (!f->local) {
            if (pk_csraw_init(&f->local_raw, pk_unwinder_out(f->u)->base, err))
                return -1;
            if (!(f->local = pk_unwinder_clone(f->u, &f->local_raw, err))) {
                pk_csraw_free(&f->local_raw);
                return -1;
            }
        }
        pk_unwinder_count_walk_here(f->local);
        return walk(f->local, b, err);
    }
    if (f->failed) {
        *err = f->werr;
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    sample_buf *slot = &f->ring[(f->head + f->count) % RING], t = *slot;
    *slot = *b;
    *b = t;
    b->weight = 0;
    f->count++;
    if (f->waiting_take && f->count >= WAKE_BATCH)
        pthread_cond_signal(&f->can_take);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static struct pk_unwind_feed *feed_new(pk_unwinder *u, pk_err *err)
{
    struct pk_unwind_feed *f = calloc(1, sizeof *f);
    if (!f || !(f->cache = pk_zalloc(SAMPLE_CACHE, sizeof *f->cache))) {
        free(f);
        pk_err_set(err, "out of memory");
        return NULL;
    }
    f->u = u;
    f->here_every = pk_unwinder_opts(u)->walk_here_every;
    /* without a thread to be had, every sample is walked here */
    if (!pk_unwinder_opts(u)->worker || pthread_mutex_init(&f->code_lock, NULL))
        return f;
    if (pthread_mutex_init(&f->mu, NULL))
        goto no_mu;
    if (pthread_cond_init(&f->can_take, NULL))
        goto no_cond;
    pk_unwinder_set_code_lock(u, &f->code_lock);
    if (pthread_create(&f->th, NULL, worker_main, f) == 0) {
        f->started = true;
        return f;
    }
    pk_unwinder_set_code_lock(u, NULL);
    pthread_cond_destroy(&f->can_take);
no_cond:
    pthread_mutex_destroy(&f->mu);
no_mu:
    pthread_mutex_destroy(&f->code_lock);
    return f;
}

/* Waits for the worker to drain the ring and stop; its error, if any. */
static int stop_worker(struct pk_unwind_feed *f, pk_err *err)
{
    if (!f->started)
        return 0;
    pthread_mutex_lock(&f->mu);
    f->closing = true;
    pthread_cond_signal(&f->can_take);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->th, NULL);
    f->started = false;
    pthread_cond_destroy(&f->can_take);
    pthread_mutex_destroy(&f->mu);
    pk_unwinder_set_code_lock(f->u, NULL);
    if (f->local)
        pk_unwinder_set_code_lock(f->local, NULL);
    pthread_mutex_destroy(&f->code_lock);
    if (f->failed) {
        if (err)
            *err = f->werr;
        return -1;
    }
    return 0;
}

static void drop_local(struct pk_unwind_feed *f)
{
    if (f->local) {
        pk_unwinder_free(f->local);
        pk_csraw_free(&f->local_raw);
        f->local = NULL;
    }
}

void pk_unwind_feed_free(struct pk_unwind_feed *f)
{
    if (!f)
        return;
    stop_worker(f, NULL);
    for (size_t i = 0; i < SAMPLE_CACHE; i++)
        free(f->cache[i].words);
    for (size_t i = 0; i < RING; i++)
        free(f->ring[i].words);
    free(f->cache);
    free(f->tstack);
    free(f->tlbr);
    drop_local(f);
    free(f);
}

int pk_unwinder_finish(pk_unwinder *u, pk_err *err)
{
    struct pk_unwind_feed *f = *pk_unwinder_feed(u);
    if (!f)
        return 0;
    for (size_t i = 0; i < SAMPLE_CACHE; i++)
        if (f->cache[i].weight && submit(f, &f->cache[i], err)) {
            stop_worker(f, NULL);
            return -1;
        }
    if (stop_worker(f, err))
        return -1;
    if (f->local) { /* this thread's walks join the main profile */
        int m = pk_csraw_merge(pk_unwinder_out(u), &f->local_raw, err);
        if (!m)
            m = pk_unwinder_add_stats(u, f->local, err);
        drop_local(f);
        if (m)
            return -1;
    }
    pk_unwinder_add_counted(u, f->counted, f->no_lbr, f->no_stack);
    f->counted = f->no_lbr = f->no_stack = 0;
    return 0;
}

/* A word-at-a-time hash of a translated sample, in four independent lanes
 * (one lane's multiply chain made it latency-bound: 5 % of reading a
 * 100k-sample recording). */
static uint64_t hash_words(const uint64_t *w, size_t n)
{
    const uint64_t m = 0xff51afd7ed558ccdULL;
    uint64_t h0 = n * 0x9e3779b97f4a7c15ULL, h1 = h0 ^ 0x243f6a8885a308d3ULL, h2 = h0 ^ 0x13198a2e03707344ULL,
             h3 = h0 ^ 0xa4093822299f31d0ULL;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h0 = (h0 ^ w[i]) * m + (h0 >> 29);
        h1 = (h1 ^ w[i + 1]) * m + (h1 >> 29);
        h2 = (h2 ^ w[i + 2]) * m + (h2 >> 29);
        h3 = (h3 ^ w[i + 3]) * m + (h3 >> 29);
    }
    for (; i < n; i++)
        h0 = (h0 ^ w[i]) * m + (h0 >> 29);
    return pk_hash64(h0 ^ pk_hash64(h1) ^ (pk_hash64(h2) * 3) ^ (pk_hash64(h3) * 5));
}

int pk_unwind_perf_sample(pk_unwinder *u, pk_agg *agg, const pk_sample *s, pk_err *err)
{
    struct pk_unwind_feed **fp = pk_unwinder_feed(u), *f = *fp;
    if (!f && !(f = *fp = feed_new(u, err)))
        return -1;
    size_t need = s->callchain_nr + s->branch_nr + 1;
    if (need > f->tcap) {
        uint64_t *ts = realloc(f->tstack, need * sizeof *ts);
        if (ts)
            f->tstack = ts;
        pk_branch *tl = realloc(f->tlbr, need * sizeof *tl);
        if (tl)
            f->tlbr = tl;
        if (!ts || !tl)
            return pk_err_set(err, "out of memory");
        f->tcap = need;
    }
    size_t nl;
    if (pk_agg_count_sample(agg, s, f->tlbr, &nl, err))
        return -1;
    /* user frames only: the entries after PERF_CONTEXT_USER (or all of them
     * when there is no marker) */
    size_t ns = pk_agg_translate_user_chain(agg, s->pid, (const uint8_t *)s->callchain, s->callchain_nr, f->tstack);
    uint64_t weight = pk_sample_weight(s);
    if (!nl || !ns) { /* only counted: nothing to walk */
        f->counted += weight;
        f->no_lbr += nl ? 0 : weight;
        f->no_stack += nl && !ns ? weight : 0;
        /* no user frames (a kernel-only call chain): its branches still
         * count in the flat profile, used when no sample has a context */
        return nl ? pk_agg_add_translated(agg, f->tlbr, nl, weight, err) : 0;
    }
    /* the translated LBR is (from, to, 0) words: the sample is ns + 3 nl words */
    const uint64_t *lw = (const uint64_t *)f->tlbr;
    size_t nw = ns + 3 * nl;
    /* the whole stack, the newest LBR entries: equality is checked in full */
    uint64_t h = hash_words(f->tstack, ns) * 31 ^ hash_words(lw, 3 * (nl < 8 ? nl : 8)) ^ nl;
    sample_buf *c = &f->cache[h & (SAMPLE_CACHE - 1)];
    if (c->weight && c->hash == h && c->nstack == ns && c->nlbr == nl &&
        !memcmp(c->words, f->tstack, ns * sizeof *f->tstack) && !memcmp(c->words + ns, lw, 3 * nl * sizeof *lw)) {
        c->weight += weight;
        return 0;
    }
    if (c->weight && submit(f, c, err))
        return -1;
    if (nw > c->cap) {
        uint64_t *w = realloc(c->words, nw * sizeof *w);
        if (!w)
            return pk_err_set(err, "out of memory");
        c->words = w;
        c->cap = nw;
    }
    memcpy(c->words, f->tstack, ns * sizeof *f->tstack);
    memcpy(c->words + ns, lw, 3 * nl * sizeof *lw);
    c->hash = h;
    c->nstack = (uint32_t)ns;
    c->nlbr = (uint32_t)nl;
    c->weight = weight;
    return 0;
}

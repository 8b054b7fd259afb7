/* unwind_internal.h — private to src/unwind/: what unwind_feed.c (perf
 * samples in, on a worker thread when it pays) needs of the unwinder. */
#ifndef PK_UNWIND_INTERNAL_H
#define PK_UNWIND_INTERNAL_H

#include "unwind/unwind.h"

/* True when address a can be kept as an offset from r's base. */
static inline bool pk_csraw_fits(const pk_csraw *r, uint64_t a)
{
    return a - r->base < PK_CS_EXTERNAL_OFF; /* below base wraps around to huge */
}

struct pk_unwind_feed;
/* The unwinder's feed slot (NULL until the first perf sample). */
struct pk_unwind_feed **pk_unwinder_feed(pk_unwinder *u);
/* Samples counted without a walk (no LBR, no stack): added to the stats. */
void pk_unwinder_add_counted(pk_unwinder *u, uint64_t samples, uint64_t no_lbr, uint64_t no_stack);
/* Stops the worker if it runs and frees the feed (NULL is fine). */
void pk_unwind_feed_free(struct pk_unwind_feed *f);

/* A second walker over the same code and options (no worker of its own),
 * writing into `out`; code queries go through the same lock as u's. */
pk_unwinder *pk_unwinder_clone(const pk_unwinder *u, pk_csraw *out, pk_err *err);
/* Code queries (instruction classes, calls before return addresses) under
 * `lock`: two walkers share one binary, whose decoding caches are not
 * thread-safe. Set before any walk. */
#include <pthread.h>
void pk_unwinder_set_code_lock(pk_unwinder *u, pthread_mutex_t *lock);
pk_csraw *pk_unwinder_out(pk_unwinder *u);
/* Adds the other walker's counters to u's. */
int pk_unwinder_add_stats(pk_unwinder *u, const pk_unwinder *other, pk_err *err);
const pk_unwind_opts *pk_unwinder_opts(const pk_unwinder *u);
void pk_unwinder_count_walk_here(pk_unwinder *u);

#endif

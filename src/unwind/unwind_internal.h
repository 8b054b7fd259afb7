/* unwind_internal.h — private to src/unwind/: what unwind_feed.c (perf
 * samples in, on a worker thread when it pays) needs of the unwinder. */
#ifndef PK_UNWIND_INTERNAL_H
#define PK_UNWIND_INTERNAL_H

#include "unwind/unwind.h"

struct pk_unwind_feed;
/* The unwinder's feed slot (NULL until the first perf sample). */
struct pk_unwind_feed **pk_unwinder_feed(pk_unwinder *u);
/* Samples counted without a walk (no LBR, no stack): added to the stats. */
void pk_unwinder_add_counted(pk_unwinder *u, uint64_t samples, uint64_t no_lbr, uint64_t no_stack);
/* pk_unwind_opts.worker as given. */
bool pk_unwinder_wants_worker(const pk_unwinder *u);
/* Stops the worker if it runs and frees the feed (NULL is fine). */
void pk_unwind_feed_free(struct pk_unwind_feed *f);

#endif

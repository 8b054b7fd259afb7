/* profile_int.h — private to src/profile/: pieces shared by names.c,
 * profile.c, profile_merge.c and summary.c. */
#ifndef PK_PROFILE_INT_H
#define PK_PROFILE_INT_H

#include "profile/profile.h"

/* 16 bytes: slots are most of a context-sensitive profile's memory (every
 * probe of a sampled body, zeros included). Whether a slot holds a body
 * entry is in the profile's `nobody` bitmap, set only for the rare slots
 * that exist just to anchor inlinee call sites. */
struct pk_fprof_slot {
    uint64_t loc;
    uint64_t count;
};

static inline bool pk_fprof_slot_in_body(const pk_fprof *f, size_t i)
{
    return !f->nobody || i >= (size_t)f->nobody_words * 64 || !((f->nobody[i >> 6] >> (i & 63)) & 1);
}

/* A profile scans its slots for a location up to this many; past it, a
 * hash index of slot numbers is built (pk_fprof_slot_index_build). */
#define PK_FPROF_SLOT_SCAN 16
/* Rebuilds f's location -> slot index with 2^bits entries; -1 when out of memory. */
int pk_fprof_slot_index_build(pk_fprof *f, uint32_t bits);
/* The index size (log2, at least `from`) that keeps n slots at most half full. */
static inline uint32_t pk_fprof_slot_bits_for(size_t n, uint32_t from)
{
    uint32_t bits = from;
    while (n * 2 > ((size_t)1 << bits))
        bits++;
    return bits;
}

int pk_names_new(pk_profset *ps, pk_err *err);
void pk_names_free(pk_profset *ps);

#endif

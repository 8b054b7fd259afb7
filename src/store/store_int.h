/* store_int.h — what store.c, store_query.c and store_map.c share. */
#ifndef PK_STORE_INT_H
#define PK_STORE_INT_H

#include "store/backend.h"
#include "store/store.h"

struct pk_store {
    const pk_store_backend *be;
    pk_store_db *db;
};

/* A query whose single row is integers: up to n values into out (NULL → 0). */
int pk_store_query_ints(pk_store *s, const char *sql, int np, const pk_store_val *p, int64_t *out, int n,
                        pk_err *err);
/* Ends the transaction in progress (error paths; errors ignored). */
void pk_store_rollback(pk_store *s);

void pk_store_hex(char *out, const uint8_t *b, unsigned n);
/* Lowercase hex → bytes (at most 20); -1 on anything else. */
int pk_store_unhex(const char *hex, uint8_t *out, uint8_t *n);

/* The build-id key of every row (profiles and the count tables), the column
 * a sharded store partitions them on: the build-id's first 8 bytes, big
 * endian, zero-padded, as a signed 64-bit integer. Build-ids are hashes, so
 * this spreads evenly; two build-ids that share it only share a partition
 * (reads filter on profile ids too). Computed here, not by the engine: no
 * lookup table to keep in step across servers. */
static inline int64_t pk_store_bid_key(const uint8_t *build_id, uint8_t size)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < 8; i++)
        k = k << 8 | (i < size ? build_id[i] : 0);
    return (int64_t)k;
}

/* addresses ↔ stored values: offsets from the preferred base as signed
 * 64-bit integers (PK_AGG_EXTERNAL is -1) */
static inline int64_t pk_store_off(uint64_t addr, uint64_t base)
{
    return addr == PK_AGG_EXTERNAL ? -1 : (int64_t)(addr - base);
}
static inline uint64_t pk_store_addr(int64_t off, uint64_t base)
{
    return off == -1 ? PK_AGG_EXTERNAL : (uint64_t)off + base;
}

#endif

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

/* ---- the rows of one upload (store_rows.c) ----
 * Everything but the flat counts, as the count tables hold them: offsets
 * (pk_store_off), contexts by key, rows sorted (so the content hash does not
 * depend on the order the counts were gathered in). */
typedef struct pk_store_ctx_row {
    int64_t key;                 /* ckey: pk_store_ctx_key of the offsets */
    const uint64_t *off;         /* offsets from the base (into the rows' words) */
    uint32_t len;
} pk_store_ctx_row;

typedef struct pk_store_rows {
    int64_t *ranges, *branches;  /* ctx, a, b, n: the contexts' ranges and branches */
    int64_t *hits;               /* ctx, a, n */
    int64_t *calls;              /* ctx, a, b, n */
    int64_t *unplaced;           /* a, b, n */
    size_t nranges, nbranches, nhits, ncalls, nunplaced;
    pk_store_ctx_row *ctxs;      /* the contexts the rows use, by key */
    size_t nctxs, nstacked;      /* of those, with a call site */
    uint64_t *words;
} pk_store_rows;

/* The key of a context: its offsets hashed, never 0 (the flat context). */
int64_t pk_store_ctx_key(const uint64_t *off, uint32_t len);
int pk_store_rows_build(pk_store_rows *rw, const pk_rawprof2 *r, pk_err *err);
void pk_store_rows_free(pk_store_rows *rw);
/* "off,off,..." (signed decimal) into buf; NULL when it does not fit. */
char *pk_store_ctx_text(const uint64_t *off, uint32_t len, char *buf, size_t cap);
/* The statistics words of a raw profile as stats rows (k, v), nonzero only;
 * returns how many (at most PK_STORE_MAX_STATS). */
#define PK_STORE_MAX_STATS 256
size_t pk_store_stats_rows(const pk_rawprof2 *r, int64_t (*kv)[2]);
/* A stats row back into r (words of a newer pgokit are ignored). */
void pk_store_stats_put(pk_rawprof2 *r, int64_t k, uint64_t v);

#endif

/* pseudo_probe.h — decoding clang's pseudo-probe sections (clang-14 to 19).
 *
 * `.pseudo_probe_desc` lists, per function that received probes, its GUID
 * (MD5 of the probe name), its CFG checksum and its name. `.pseudo_probe`
 * holds one record per top-level function body: probes (index, type,
 * attributes, address as a delta chain, optional discriminator) and, nested,
 * the records of the functions inlined into it at call-site probes. The
 * encoding is described in ../shared/research/llvm-profgen.md §5.
 *
 * Decoding is driven by the caller: it supplies the section bytes, a resolver
 * from a GUID to the address of the function (or section) symbol whose MD5 is
 * that GUID — delta chains start there —, and optionally the set of top-level
 * GUIDs worth keeping (only sampled functions), so the rest is parsed past and
 * not stored. Malformed bytes give an error naming the section offset;
 * probes whose address chain has no known origin (a record with no symbol and
 * no sentinel) are skipped and counted, never placed at a guessed address.
 */
#ifndef PK_PSEUDO_PROBE_H
#define PK_PSEUDO_PROBE_H

#include "common/pk_common.h"

enum pk_probe_type { PK_PROBE_BLOCK = 0, PK_PROBE_INDIRECT_CALL = 1, PK_PROBE_DIRECT_CALL = 2 };
enum {
    PK_PROBE_ATTR_RESERVED = 1,
    PK_PROBE_ATTR_SENTINEL = 2,         /* restarts the address chain; not a probe */
    PK_PROBE_ATTR_HAS_DISCRIMINATOR = 4,
};
#define PK_PROBE_NO_NODE UINT32_MAX

typedef struct pk_probe_desc {
    uint64_t guid;
    uint64_t cfg_hash;                  /* written to profiles as !CFGChecksum */
    const char *name;                   /* points into the section: not NUL-terminated */
    uint32_t name_len;
} pk_probe_desc;

typedef struct pk_probe_descs {
    pk_probe_desc *descs;               /* in section order */
    size_t n;
    pk_u64map by_guid;                  /* guid → index into descs */
} pk_probe_descs;

int pk_probe_descs_decode(pk_probe_descs *out, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where, pk_err *err);
const pk_probe_desc *pk_probe_descs_find(const pk_probe_descs *d, uint64_t guid);
void pk_probe_descs_free(pk_probe_descs *d);

/* A node of the inline forest: a function body, top-level or inlined into its
 * parent at the parent's call-site probe `callsite_probe`. */
typedef struct pk_probe_node {
    uint64_t guid;
    uint32_t parent;                    /* PK_PROBE_NO_NODE for a top-level body */
    uint32_t callsite_probe;
    uint32_t depth;                     /* 0 for top-level */
} pk_probe_node;

typedef struct pk_probe {
    uint64_t addr;
    uint32_t index;                     /* 1 = entry block */
    uint32_t node;                      /* the body it belongs to (index into nodes) */
    uint32_t discriminator;
    uint8_t type;                       /* enum pk_probe_type */
    uint8_t attr;
    uint64_t order;                     /* offset in the section: ties at one address keep it */
} pk_probe;

typedef struct pk_probe_stats {
    uint64_t records;                   /* top-level function records seen */
    uint64_t kept_records;
    uint64_t unresolved_records;        /* records with probes whose address was unknown */
    uint64_t unresolved_probes;         /* probes skipped: no known origin for their delta */
    uint64_t sentinels, unresolved_sentinels;
    uint64_t probes;
} pk_probe_stats;

typedef struct pk_probe_table {
    pk_probe *probes;                   /* sorted by address, then decode order */
    size_t n;
    pk_probe_node *nodes;
    size_t n_nodes;
    pk_probe_stats stats;
    pk_addr_buckets buckets;            /* narrows address lookups */
    /* every top-level record, kept or not: (GUID, offset in the section),
     * so that more of them can be decoded without walking the section */
    struct pk_probe_record { uint64_t guid, off; } *records;
    size_t n_records;
    bool addr_based;                    /* clang-14 encoding: records chain addresses */
} pk_probe_table;

/* Resolves a GUID (MD5 of a symbol name) to that symbol's address. Returns 0
 * and sets *addr when known, -1 when not. */
typedef int (*pk_probe_resolver)(void *ctx, uint64_t guid, uint64_t *addr);

/* Decodes `.pseudo_probe`. `keep` (may be NULL: keep all) holds the top-level
 * GUIDs to keep as keys (a record whose GUID `resolve` does not know, a body
 * without a symbol, is kept too: no caller can name it). `where` names the file for messages; offsets in
 * errors are the section's file offset plus the position in the section. */
int pk_probe_table_decode(pk_probe_table *out, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where,
                          pk_probe_resolver resolve, void *resolve_ctx,
                          const pk_u64map *keep, pk_err *err);
/* Decodes the records of the GUIDs in `more` too (not the symbol-less ones:
 * the first decode kept those) and adds them to t, as if both sets had been
 * decoded at once (same probe order; node numbers of the new bodies follow
 * the old ones). */
int pk_probe_table_decode_more(pk_probe_table *t, const uint8_t *data, size_t size, uint64_t section_file_offset,
                               const char *where, pk_probe_resolver resolve, void *resolve_ctx,
                               const pk_u64map *more, pk_err *err);
void pk_probe_table_free(pk_probe_table *t);

/* The probes at exactly `addr` (*count of them), or NULL. */
const pk_probe *pk_probe_table_at(const pk_probe_table *t, uint64_t addr, size_t *count);
/* The first probe at an address >= addr (index into probes; n if none). */
size_t pk_probe_table_lower_bound(const pk_probe_table *t, uint64_t addr);

const char *pk_probe_type_name(uint8_t type); /* "Block", "IndirectCall", "DirectCall" */

#endif

/* pseudo_probe.c — decoding `.pseudo_probe_desc` and `.pseudo_probe`.
 * See pseudo_probe.h for the model and ../shared/research/llvm-profgen.md §5
 * for the byte layout. */
#include "binary/pseudo_probe.h"

#include <stddef.h>
#include <stdlib.h>

/* Inline nesting deeper than this is treated as corrupt: it bounds recursion
 * on hostile input (real inline trees are a few dozen levels at most). */
#define PROBE_MAX_DEPTH 512

static int bad_at(pk_err *err, const char *where, uint64_t base, const pk_cursor *c, const char *what)
{
    return pk_err_set(err, "%s: offset %llu: %s", where,
                      (unsigned long long)(base + pk_cursor_offset(c)), what);
}

int pk_probe_descs_decode(pk_probe_descs *out, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where, pk_err *err)
{
    memset(out, 0, sizeof *out);
    pk_vec v;
    pk_vec_init(&v, sizeof(pk_probe_desc));
    if (pk_u64map_init(&out->by_guid, 64))
        return pk_err_set(err, "%s: out of memory", where);
    pk_cursor c;
    pk_cursor_init(&c, data, size);
    while (pk_cursor_left(&c) > 0) {
        pk_cursor rec = c;
        uint64_t guid = pk_cursor_u64(&c);
        uint64_t hash = pk_cursor_u64(&c);
        uint64_t len = pk_cursor_uleb(&c);
        const uint8_t *name = (!c.bad && len <= pk_cursor_left(&c)) ? pk_cursor_bytes(&c, len) : NULL;
        if (c.bad || !name) {
            pk_vec_free(&v);
            pk_u64map_free(&out->by_guid);
            return bad_at(err, where, section_file_offset, &rec,
                          ".pseudo_probe_desc record truncated");
        }
        pk_probe_desc *d = pk_vec_push(&v);
        uint64_t *slot = pk_u64map_slot(&out->by_guid, guid);
        if (!d || !slot) {
            pk_vec_free(&v);
            pk_u64map_free(&out->by_guid);
            return pk_err_set(err, "%s: out of memory", where);
        }
        d->guid = guid;
        d->cfg_hash = hash;
        d->name = (const char *)name;
        d->name_len = (uint32_t)len;
        *slot = v.len - 1; /* a duplicate GUID keeps the last descriptor */
    }
    out->descs = v.data;
    out->n = v.len;
    return 0;
}

const pk_probe_desc *pk_probe_descs_find(const pk_probe_descs *d, uint64_t guid)
{
    uint64_t *i = pk_u64map_get(&d->by_guid, guid);
    return i ? &d->descs[*i] : NULL;
}

void pk_probe_descs_free(pk_probe_descs *d)
{
    free(d->descs);
    pk_u64map_free(&d->by_guid);
    memset(d, 0, sizeof *d);
}

struct decoder {
    pk_cursor c;
    uint64_t base;
    const char *where;
    pk_probe_resolver resolve;
    void *resolve_ctx;
    pk_vec probes, nodes;
    pk_probe_stats stats;
    /* One running address for the whole section. clang-15 and later start
     * each top-level record at its function's symbol; clang-14 chains deltas
     * across records from one absolute address ("address-based" encoding,
     * detected by the first absolute non-sentinel address, and sticky). */
    uint64_t last_addr;
    bool addr_based;
    /* Whether last_addr is trustworthy: set by a resolved record start, an
     * absolute address or a resolved sentinel. Records of bodies that live
     * inside another function's symbol have no symbol of their own and begin
     * with a sentinel naming that function. */
    bool origin_known;
    bool record_unresolved;
    pk_err *err;
};

/* Decodes one function record (GUID, counts, probes, inlinees) at the cursor.
 * `store` is false while skipping a top-level record that is not wanted; the
 * bytes are still parsed, since records have no length prefix. */
static int decode_record(struct decoder *d, uint32_t parent, uint32_t callsite,
                         uint32_t depth, bool store)
{
    if (depth > PROBE_MAX_DEPTH)
        return bad_at(d->err, d->where, d->base, &d->c, "inline nesting too deep in .pseudo_probe");
    pk_cursor rec = d->c;
    uint64_t guid = pk_cursor_u64(&d->c);
    uint64_t nprobes = pk_cursor_uleb(&d->c);
    uint64_t ninlinees = pk_cursor_uleb(&d->c);
    if (d->c.bad)
        return bad_at(d->err, d->where, d->base, &rec, ".pseudo_probe record header truncated");
    /* Each probe takes at least 2 bytes and each inlinee at least 11: a count
     * beyond what is left is corrupt, and checking it bounds the loops. */
    if (nprobes > pk_cursor_left(&d->c) / 2 || ninlinees > pk_cursor_left(&d->c) / 11)
        return bad_at(d->err, d->where, d->base, &rec, "probe or inlinee count exceeds the section");

    uint32_t node = PK_PROBE_NO_NODE;
    if (store) {
        pk_probe_node *n = pk_vec_push(&d->nodes);
        if (!n)
            return pk_err_set(d->err, "%s: out of memory", d->where);
        n->guid = guid;
        n->parent = parent;
        n->callsite_probe = callsite;
        n->depth = depth;
        node = (uint32_t)(d->nodes.len - 1);
    }
    for (uint64_t i = 0; i < nprobes; i++) {
        pk_cursor at = d->c;
        uint64_t index = pk_cursor_uleb(&d->c);
        uint8_t kind = pk_cursor_u8(&d->c);
        uint8_t type = kind & 0xf, attr = (kind >> 4) & 0x7;
        bool delta = kind & 0x80;
        uint64_t addr;
        if (delta)
            addr = d->last_addr + (uint64_t)pk_cursor_sleb(&d->c);
        else
            addr = pk_cursor_u64(&d->c);
        uint64_t disc = (attr & PK_PROBE_ATTR_HAS_DISCRIMINATOR) ? pk_cursor_uleb(&d->c) : 0;
        if (d->c.bad)
            return bad_at(d->err, d->where, d->base, &at, "probe truncated");
        if (type > PK_PROBE_DIRECT_CALL)
            return bad_at(d->err, d->where, d->base, &at, "unknown probe type");
        if (index > UINT32_MAX) /* 0 is legal: sentinels carry it */
            return bad_at(d->err, d->where, d->base, &at, "invalid probe index");
        if (attr & PK_PROBE_ATTR_SENTINEL) {
            /* The address field of a non-delta sentinel is the GUID of the
             * symbol where the next part of the function starts (.cold). */
            d->stats.sentinels++;
            if (!delta) {
                uint64_t start;
                if (d->resolve && d->resolve(d->resolve_ctx, addr, &start) == 0) {
                    d->last_addr = start;
                    d->origin_known = true;
                } else {
                    d->stats.unresolved_sentinels++;
                    d->origin_known = false;
                }
            } else {
                d->last_addr = addr;
            }
            continue;
        }
        if (!delta) {
            d->addr_based = true;
            d->origin_known = true;
        }
        d->last_addr = addr;
        if (!store)
            continue;
        if (!d->origin_known) {
            /* llvm-profgen would continue the previous record's chain here
             * and place these probes inside an unrelated function. */
            d->stats.unresolved_probes++;
            d->record_unresolved = true;
            continue;
        }
        pk_probe *p = pk_vec_push(&d->probes);
        if (!p)
            return pk_err_set(d->err, "%s: out of memory", d->where);
        p->addr = addr;
        p->index = (uint32_t)index;
        p->node = node;
        p->discriminator = (uint32_t)disc;
        p->type = type;
        p->attr = attr;
        /* its place in the section: the same tie order whichever records
         * were decoded together (pk_probe_table_merge) */
        p->order = (uint64_t)(at.pos - d->c.start);
        d->stats.probes++;
    }
    for (uint64_t i = 0; i < ninlinees; i++) {
        pk_cursor at = d->c;
        uint64_t site = pk_cursor_uleb(&d->c);
        if (d->c.bad || site > UINT32_MAX)
            return bad_at(d->err, d->where, d->base, &at, "inlinee call-site index truncated or invalid");
        if (decode_record(d, node, (uint32_t)site, depth + 1, store))
            return -1;
    }
    return 0;
}

static int table_decode(pk_probe_table *out, const uint8_t *data, size_t size, uint64_t section_file_offset,
                        const char *where, pk_probe_resolver resolve, void *resolve_ctx, const pk_u64map *keep,
                        bool keep_symbolless, pk_err *err);
static int records_decode(pk_probe_table *out, const pk_probe_table *t, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where, pk_probe_resolver resolve,
                          void *resolve_ctx, const pk_u64map *more, pk_err *err);

int pk_probe_table_decode(pk_probe_table *out, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where,
                          pk_probe_resolver resolve, void *resolve_ctx,
                          const pk_u64map *keep, pk_err *err)
{
    return table_decode(out, data, size, section_file_offset, where, resolve, resolve_ctx, keep, true, err);
}

int pk_probe_table_decode_more(pk_probe_table *t, const uint8_t *data, size_t size, uint64_t section_file_offset,
                               const char *where, pk_probe_resolver resolve, void *resolve_ctx,
                               const pk_u64map *more, pk_err *err)
{
    pk_probe_table add;
    if (!t->addr_based && t->records ? records_decode(&add, t, data, size, section_file_offset, where, resolve,
                                                      resolve_ctx, more, err)
                                     : table_decode(&add, data, size, section_file_offset, where, resolve,
                                                    resolve_ctx, more, false, err))
        return -1;
    /* the new probes by (address, section order), then merged with the
     * table's, which are in that order already */
    uint32_t off = (uint32_t)t->n_nodes;
    for (size_t i = 0; i < add.n; i++)
        add.probes[i].node += off;
    size_t n = t->n + add.n, nn = t->n_nodes + add.n_nodes;
    pk_probe *merged = pk_xrealloc_array(NULL, n ? n : 1, sizeof *merged);
    pk_probe_node *nodes = merged ? pk_xrealloc_array(t->nodes, nn ? nn : 1, sizeof *nodes) : NULL;
    if (nodes)
        t->nodes = nodes;
    if (!nodes || pk_sort_by_u64(add.probes, add.n, sizeof(pk_probe), offsetof(pk_probe, order)) ||
        pk_sort_by_u64(add.probes, add.n, sizeof(pk_probe), offsetof(pk_probe, addr))) {
        free(merged);
        pk_probe_table_free(&add);
        return pk_err_set(err, "%s: out of memory", where);
    }
    for (size_t i = 0; i < add.n_nodes; i++) {
        nodes[t->n_nodes + i] = add.nodes[i];
        if (add.nodes[i].parent != PK_PROBE_NO_NODE)
            nodes[t->n_nodes + i].parent += off;
    }
    size_t a = 0, b = 0, k = 0;
    while (a < t->n || b < add.n) {
        bool take_a = b == add.n || (a < t->n && (t->probes[a].addr < add.probes[b].addr ||
                                                  (t->probes[a].addr == add.probes[b].addr &&
                                                   t->probes[a].order < add.probes[b].order)));
        merged[k++] = take_a ? t->probes[a++] : add.probes[b++];
    }
    free(t->probes);
    t->probes = merged;
    t->n = n;
    t->n_nodes = nn;
    t->stats.kept_records += add.stats.kept_records;
    t->stats.probes += add.stats.probes;
    pk_probe_table_free(&add);
    pk_addr_buckets_free(&t->buckets);
    if (pk_addr_buckets_build(&t->buckets, t->probes, t->n, sizeof *t->probes, offsetof(pk_probe, addr)))
        return pk_err_set(err, "%s: out of memory", where);
    return 0;
}

static void decoder_init(struct decoder *d, pk_probe_table *out, const uint8_t *data, size_t size,
                         uint64_t section_file_offset, const char *where, pk_probe_resolver resolve,
                         void *resolve_ctx, pk_err *err)
{
    memset(out, 0, sizeof *out);
    *d = (struct decoder){.base = section_file_offset, .where = where, .resolve = resolve,
                          .resolve_ctx = resolve_ctx, .err = err};
    pk_cursor_init(&d->c, data, size);
    pk_vec_init(&d->probes, sizeof(pk_probe));
    pk_vec_init(&d->nodes, sizeof(pk_probe_node));
}

static int table_decode(pk_probe_table *out, const uint8_t *data, size_t size, uint64_t section_file_offset,
                        const char *where, pk_probe_resolver resolve, void *resolve_ctx, const pk_u64map *keep,
                        bool keep_symbolless, pk_err *err)
{
    struct decoder d;
    decoder_init(&d, out, data, size, section_file_offset, where, resolve, resolve_ctx, err);
    pk_vec records;
    pk_vec_init(&records, sizeof(struct pk_probe_record));
    while (pk_cursor_left(&d.c) > 0) {
        if (pk_cursor_left(&d.c) < 8) {
            bad_at(err, where, d.base, &d.c, ".pseudo_probe record header truncated");
            goto fail;
        }
        uint64_t guid = pk_ld64(d.c.pos);
        struct pk_probe_record *r = pk_vec_push(&records);
        if (!r) {
            pk_err_set(err, "%s: out of memory", where);
            goto fail;
        }
        *r = (struct pk_probe_record){guid, (uint64_t)(d.c.pos - d.c.start)};
        d.stats.records++;
        uint64_t start;
        bool has_symbol = resolve && resolve(resolve_ctx, guid, &start) == 0;
        /* a body without a symbol cannot be named by the caller's set: kept
         * by the first decode, never by decode_more (whatever its set says:
         * the first decode has it already) */
        bool symbolless = resolve && !has_symbol;
        bool want = symbolless ? keep_symbolless : !keep || pk_u64map_get(keep, guid);
        if (!d.addr_based) {
            d.origin_known = has_symbol;
            if (d.origin_known)
                d.last_addr = start;
        }
        if (want)
            d.stats.kept_records++;
        d.record_unresolved = false;
        if (decode_record(&d, PK_PROBE_NO_NODE, 0, 0, want))
            goto fail;
        d.stats.unresolved_records += d.record_unresolved;
    }
    /* by address, ties in decode order (the order probes were pushed in) */
    if (pk_sort_by_u64(d.probes.data, d.probes.len, sizeof(pk_probe), offsetof(pk_probe, addr))) {
        pk_err_set(err, "%s: out of memory sorting probes", where);
        goto fail;
    }
    pk_vec_shrink(&d.probes);
    pk_vec_shrink(&d.nodes);
    out->probes = d.probes.data;
    out->n = d.probes.len;
    out->nodes = d.nodes.data;
    out->n_nodes = d.nodes.len;
    out->stats = d.stats;
    pk_vec_shrink(&records);
    out->records = records.data;
    out->n_records = records.len;
    out->addr_based = d.addr_based;
    if (pk_addr_buckets_build(&out->buckets, out->probes, out->n, sizeof *out->probes, offsetof(pk_probe, addr))) {
        pk_probe_table_free(out);
        return pk_err_set(err, "%s: out of memory", where);
    }
    return 0;
fail:
    pk_vec_free(&d.probes);
    pk_vec_free(&d.nodes);
    pk_vec_free(&records);
    return -1;
}

/* The records of the GUIDs in `more`, read where the first decode saw them:
 * with each record starting at its own function's symbol (not the clang-14
 * chained encoding), nothing before a record matters to it. */
static int records_decode(pk_probe_table *out, const pk_probe_table *t, const uint8_t *data, size_t size,
                          uint64_t section_file_offset, const char *where, pk_probe_resolver resolve,
                          void *resolve_ctx, const pk_u64map *more, pk_err *err)
{
    struct decoder d;
    decoder_init(&d, out, data, size, section_file_offset, where, resolve, resolve_ctx, err);
    for (size_t i = 0; i < t->n_records; i++) {
        const struct pk_probe_record *r = &t->records[i];
        uint64_t start;
        if (!pk_u64map_get(more, r->guid) || r->off >= size || !resolve || resolve(resolve_ctx, r->guid, &start))
            continue;
        d.c.pos = d.c.start + r->off;
        d.c.bad = false;
        d.origin_known = true;
        d.last_addr = start;
        d.stats.kept_records++;
        d.record_unresolved = false;
        if (decode_record(&d, PK_PROBE_NO_NODE, 0, 0, true)) {
            pk_vec_free(&d.probes);
            pk_vec_free(&d.nodes);
            return -1;
        }
        d.stats.unresolved_records += d.record_unresolved;
    }
    out->probes = d.probes.data;
    out->n = d.probes.len;
    out->nodes = d.nodes.data;
    out->n_nodes = d.nodes.len;
    out->stats = d.stats;
    return 0;
}

void pk_probe_table_free(pk_probe_table *t)
{
    free(t->probes);
    free(t->nodes);
    free(t->records);
    pk_addr_buckets_free(&t->buckets);
    memset(t, 0, sizeof *t);
}

size_t pk_probe_table_lower_bound(const pk_probe_table *t, uint64_t addr)
{
    size_t lo, hi;
    pk_addr_buckets_range(&t->buckets, addr, t->n, &lo, &hi);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->probes[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const pk_probe *pk_probe_table_at(const pk_probe_table *t, uint64_t addr, size_t *count)
{
    size_t i = pk_probe_table_lower_bound(t, addr), j = i;
    while (j < t->n && t->probes[j].addr == addr)
        j++;
    *count = j - i;
    return j > i ? &t->probes[i] : NULL;
}

const char *pk_probe_type_name(uint8_t type)
{
    switch (type) {
    case PK_PROBE_BLOCK: return "Block";
    case PK_PROBE_INDIRECT_CALL: return "IndirectCall";
    case PK_PROBE_DIRECT_CALL: return "DirectCall";
    }
    return "Unknown";
}

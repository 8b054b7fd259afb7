/* perf_order.c — handing records over in time order, as perf's ordered
 * events do.
 *
 * perf writes each CPU's ring buffer in turn, so in file order a sample can
 * come before the COMM / MMAP2 of the exec it ran in. perf promises only that
 * no record crosses a PERF_RECORD_FINISHED_ROUND the wrong way: when a round
 * ends, every record older than the newest one of the round before has been
 * written. So records with a time are queued; at the end of a round the ones
 * not newer than the previous round's newest are sorted by time (file order
 * between equal times) and delivered; the end of the input delivers the rest.
 * The queue holds about two rounds; a file whose rounds are missing or huge is
 * bounded by PK_ORDER_MAX_BYTES (the older half is delivered then, as perf's
 * OE_FLUSH__HALF does). Records without a time (no PERF_SAMPLE_TIME, or no
 * sample_id_all on non-sample records) are delivered at once, in file order.
 *
 * Records of a mmapped file (outside compressed streams) stay where they are
 * and are pointed at; records of a pipe or a decompression window are copied
 * into an arena. */
#include "perf/perf_internal.h"

#include <stdlib.h>

#define PK_ORDER_MAX_BYTES (64u << 20)

struct pk_order_entry {
    uint64_t time, seq;
    uint64_t off, comp_off;     /* for messages: as when the record was read */
    const uint8_t *mapped;      /* the record in the mmapped file, or NULL: in the arena */
    size_t arena_off;
    uint32_t size;
    bool in_decompressed;
};

static uint64_t entry_offset_in_map(const pk_reader *r, const pk_order_entry *e)
{
    return (uint64_t)(e->mapped - r->map_base);
}

/* The time a record is delivered by, or false when it has none. Records whose
 * time cannot be found because they are malformed are delivered at once: the
 * decoder reports them, at their own offset. */
static bool record_time(const pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t *time)
{
    if (r->nr_attrs == 0)
        return false;
    if (type == PK_REC_SAMPLE) {
        const pk_perf_attr *a = pk_reader_sample_attr(r, rec, size);
        if (!a || !(a->sample_type & PK_SAMPLE_TIME))
            return false;
        uint64_t st = a->sample_type;
        size_t pos = 8 + 8u * (size_t)__builtin_popcountll(st & (PK_SAMPLE_IDENTIFIER | PK_SAMPLE_IP | PK_SAMPLE_TID));
        if (pos + 8 > size)
            return false;
        *time = pk_ld64(rec + pos);
        return true;
    }
    uint64_t st = r->sample_type0;
    if (!r->sample_id_all || !(st & PK_SAMPLE_TIME))
        return false;
    /* the trailer, read backwards: IDENTIFIER, CPU, STREAM_ID, ID come after TIME */
    size_t after = 8u * (size_t)(!!(st & PK_SAMPLE_ID) + !!(st & PK_SAMPLE_STREAM_ID) + !!(st & PK_SAMPLE_CPU) +
                                 !!(st & PK_SAMPLE_IDENTIFIER));
    if (8 + after + 8 > size)
        return false;
    *time = pk_ld64(rec + size - after - 8);
    return true;
}

static int by_time(const void *a, const void *b)
{
    const pk_order_entry *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int deliver(pk_reader *r, const pk_order_entry *e)
{
    const uint8_t *rec = e->mapped ? e->mapped : r->ord.arena + e->arena_off;
    bool was_in = r->in_decompressed;
    uint64_t was_comp = r->cur_comp_offset;
    r->in_decompressed = e->in_decompressed;
    r->cur_comp_offset = e->comp_off;
    int rc = pk_reader_event(r, pk_ld32(rec), rec, e->size, e->off);
    r->in_decompressed = was_in;
    r->cur_comp_offset = was_comp;
    if (e->time > r->ord.last_delivered)
        r->ord.last_delivered = e->time;
    r->ord.delivered_any = true;
    return rc;
}

/* Delivers, in time order, the queued records not newer than `limit`, and
 * keeps the others (their copies moved to the front of a fresh arena). */
static int flush_upto(pk_reader *r, uint64_t limit)
{
    pk_order *o = &r->ord;
    size_t n = o->len, k = 0;
    for (size_t i = 0; i < n; i++)
        if (o->q[i].time <= limit) {
            if (i != k) {
                pk_order_entry t = o->q[k];
                o->q[k] = o->q[i];
                o->q[i] = t;
            }
            k++;
        }
    bool sorted = true;
    for (size_t i = 1; i < k && sorted; i++)
        sorted = by_time(&o->q[i - 1], &o->q[i]) < 0;
    if (!sorted)
        qsort(o->q, k, sizeof *o->q, by_time);
    for (size_t i = 0; i < k; i++) {
        int rc = deliver(r, &o->q[i]);
        if (rc)
            return rc;
    }
    /* keep the rest; copies move to the spare arena */
    size_t alen = 0;
    o->bytes = 0;
    for (size_t i = k; i < n; i++) {
        pk_order_entry *e = &o->q[i - k];
        *e = o->q[i];
        o->bytes += e->size;
        if (!e->mapped) {
            memcpy(o->spare + alen, o->arena + e->arena_off, e->size);
            e->arena_off = alen;
            alen += e->size;
        }
    }
    o->len = n - k;
    uint8_t *t = o->arena;
    o->arena = o->spare;
    o->spare = t;
    o->arena_len = alen;
    return 0;
}

static int grow(pk_reader *r, uint64_t off, size_t need_arena)
{
    pk_order *o = &r->ord;
    if (o->len == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 1024;
        pk_order_entry *nq = pk_xrealloc_array(o->q, nc, sizeof *nq);
        if (!nq)
            return pk_reader_fail(r, off, "out of memory ordering records by time");
        o->q = nq;
        o->cap = nc;
    }
    if (need_arena > o->arena_cap) {
        size_t nc = o->arena_cap ? o->arena_cap : 1u << 20;
        while (nc < need_arena)
            nc *= 2;
        uint8_t *a = realloc(o->arena, nc), *s = a ? realloc(o->spare, nc) : NULL;
        if (a)
            o->arena = a;
        if (!a || !s)
            return pk_reader_fail(r, off, "out of memory ordering records by time");
        o->spare = s;
        o->arena_cap = nc;
    }
    return 0;
}

int pk_order_record(pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t off)
{
    uint64_t time;
    if (!record_time(r, type, rec, size, &time))
        return pk_reader_event(r, type, rec, size, off);
    pk_order *o = &r->ord;
    if (o->bytes + size > PK_ORDER_MAX_BYTES && o->len > 1) {
        /* no round ended for too long: deliver the older half */
        qsort(o->q, o->len, sizeof *o->q, by_time);
        int rc = flush_upto(r, o->q[o->len / 2 - 1].time);
        if (rc)
            return rc;
        o->half_flushes++;
    }
    bool stable = r->map_records && !r->in_decompressed;
    if (grow(r, off, stable ? 0 : o->arena_len + size))
        return -1;
    if (o->delivered_any && time < o->last_delivered)
        r->st->unordered_events++;  /* too late for its place: delivered at the next flush, as perf does */
    pk_order_entry *e = &o->q[o->len++];
    e->time = time;
    e->seq = o->seq++;
    e->off = off;
    e->comp_off = r->cur_comp_offset;
    e->in_decompressed = r->in_decompressed;
    e->size = (uint32_t)size;
    e->mapped = stable ? rec : NULL;
    if (!stable) {
        memcpy(o->arena + o->arena_len, rec, size);
        e->arena_off = o->arena_len;
        o->arena_len += size;
    }
    o->bytes += size;
    if (o->bytes > r->st->max_queued_bytes)
        r->st->max_queued_bytes = o->bytes;
    if (time > o->max_time)
        o->max_time = time;
    return 0;
}

int pk_order_round(pk_reader *r)
{
    pk_order *o = &r->ord;
    int rc = 0;
    if (o->have_limit)
        rc = flush_upto(r, o->next_limit);
    o->next_limit = o->max_time;
    o->have_limit = true;
    return rc;
}

int pk_order_finish(pk_reader *r)
{
    return flush_upto(r, UINT64_MAX);
}

uint64_t pk_order_oldest_mapped(const pk_reader *r, uint64_t pos)
{
    for (size_t i = 0; i < r->ord.len; i++)
        if (r->ord.q[i].mapped && entry_offset_in_map(r, &r->ord.q[i]) < pos)
            pos = entry_offset_in_map(r, &r->ord.q[i]);
    return pos;
}

void pk_order_free(pk_reader *r)
{
    free(r->ord.q);
    free(r->ord.arena);
    free(r->ord.spare);
    memset(&r->ord, 0, sizeof r->ord);
}

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
 * into an arena, behind the offsets their messages need. A queue entry is
 * 24 bytes: on IP recordings the queue's own traffic is most of the cost. */
#include "perf/perf_internal.h"

#include <stdlib.h>

#define PK_ORDER_MAX_BYTES (64u << 20)

/* loc: the record's offset from rec_base, or, with LOC_ARENA, its copy's
 * offset in the arena (a arena_hdr first); LOC_DECOMPRESSED: it came from a
 * compressed stream. */
#define LOC_ARENA (1ull << 63)
#define LOC_DECOMPRESSED (1ull << 62)
#define LOC_MASK (LOC_DECOMPRESSED - 1)

struct pk_order_entry {
    uint64_t time;
    uint64_t loc;
    uint32_t seq;               /* file order, modulo 2^32: compared as a difference */
    uint32_t size;
};

typedef struct arena_hdr {
    uint64_t off, comp_off;     /* for messages: as when the record was read */
} arena_hdr;

/* The time a record is delivered by, or false when it has none. Records whose
 * time cannot be found because they are malformed are delivered at once: the
 * decoder reports them, at their own offset. */
static bool record_time(const pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t *time)
{
    if (r->nr_attrs == 0)
        return false;
    int32_t pos;
    if (type == PK_REC_SAMPLE) {
        const pk_attr_int *a = r->nr_attrs == 1 ? r->attrs[0]
                                                : (const pk_attr_int *)pk_reader_sample_attr(r, rec, size);
        if (!a || a->time_pos < 0)
            return false;
        pos = a->time_pos;
    } else {
        if (r->trailer_time_back < 0 || (size_t)r->trailer_time_back + 8 > size)
            return false;
        pos = (int32_t)size - r->trailer_time_back;
    }
    if ((size_t)pos + 8 > size)
        return false;
    *time = pk_ld64(rec + pos);
    return true;
}

static int by_time(const void *a, const void *b)
{
    const pk_order_entry *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    int32_t d = (int32_t)(x->seq - y->seq);
    return (d > 0) - (d < 0);
}

static int deliver(pk_reader *r, const pk_order_entry *e)
{
    pk_order *o = &r->ord;
    const uint8_t *rec;
    uint64_t off;
    bool was_in = r->in_decompressed;
    uint64_t was_comp = r->cur_comp_offset;
    if (e->loc & LOC_ARENA) {
        const uint8_t *at = o->arena + (e->loc & LOC_MASK);
        arena_hdr h;
        memcpy(&h, at, sizeof h);
        rec = at + sizeof h;
        off = h.off;
        r->cur_comp_offset = h.comp_off;
        r->in_decompressed = (e->loc & LOC_DECOMPRESSED) != 0;
    } else {
        rec = o->rec_base + e->loc;
        off = e->loc;
        r->in_decompressed = false;
    }
    int rc = pk_reader_event(r, pk_ld32(rec), rec, e->size, off);
    r->in_decompressed = was_in;
    r->cur_comp_offset = was_comp;
    if (e->time > o->last_delivered)
        o->last_delivered = e->time;
    o->delivered_any = true;
    return rc;
}

/* The queue in (time, file order). Records mostly arrive in time order
 * (one CPU's buffer at a time); only a queue that received an older record
 * after a newer one is sorted. */
static void sort_queue(pk_order *o)
{
    if (o->unsorted)
        qsort(o->q, o->len, sizeof *o->q, by_time);
    o->unsorted = false;
}

/* Delivers, in time order, the queued records not newer than `limit`, and
 * keeps the others (their copies moved to the front of a fresh arena). */
static int flush_upto(pk_reader *r, uint64_t limit)
{
    pk_order *o = &r->ord;
    sort_queue(o);
    size_t n = o->len, k = 0;
    while (k < n && o->q[k].time <= limit)
        k++;
    for (size_t i = 0; i < k; i++) {
        int rc = deliver(r, &o->q[i]);
        if (rc)
            return rc;
    }
    if (k && k < n)
        memmove(o->q, o->q + k, (n - k) * sizeof *o->q);
    o->len = n - k;
    o->bytes = 0;
    for (size_t i = 0; i < o->len; i++)
        o->bytes += o->q[i].size;
    if (o->arena_len) {
        /* keep the copies still queued; they move to the spare arena */
        size_t alen = 0;
        for (size_t i = 0; i < o->len; i++) {
            pk_order_entry *e = &o->q[i];
            if (e->loc & LOC_ARENA) {
                size_t at = (size_t)(e->loc & LOC_MASK), n_bytes = sizeof(arena_hdr) + e->size;
                memcpy(o->spare + alen, o->arena + at, n_bytes);
                e->loc = (e->loc & ~LOC_MASK) | alen;
                alen += n_bytes;
            }
        }
        uint8_t *t = o->arena;
        o->arena = o->spare;
        o->spare = t;
        o->arena_len = alen;
    }
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
        sort_queue(o);
        int rc = flush_upto(r, o->q[o->len / 2 - 1].time);
        if (rc)
            return rc;
    }
    bool mapped = r->rec_base && !r->in_decompressed;
    if (mapped)
        o->rec_base = r->rec_base;
    size_t copy = mapped ? 0 : sizeof(arena_hdr) + size;
    if (grow(r, off, o->arena_len + copy))
        return -1;
    if (o->delivered_any && time < o->last_delivered)
        r->st->unordered_events++;  /* too late for its place: delivered at the next flush, as perf does */
    if (o->len && time < o->q[o->len - 1].time)
        o->unsorted = true;
    pk_order_entry *e = &o->q[o->len++];
    e->time = time;
    e->seq = o->seq++;
    e->size = (uint32_t)size;
    if (mapped) {
        e->loc = (uint64_t)(rec - r->rec_base);
    } else {
        arena_hdr h = {off, r->cur_comp_offset};
        memcpy(o->arena + o->arena_len, &h, sizeof h);
        memcpy(o->arena + o->arena_len + sizeof h, rec, size);
        e->loc = LOC_ARENA | (r->in_decompressed ? LOC_DECOMPRESSED : 0) | o->arena_len;
        o->arena_len += copy;
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
    /* only a mapped file's pages are dropped: there rec_base is map_base */
    for (size_t i = 0; i < r->ord.len; i++)
        if (!(r->ord.q[i].loc & LOC_ARENA) && r->ord.q[i].loc < pos)
            pos = r->ord.q[i].loc;
    return pos;
}

void pk_order_free(pk_reader *r)
{
    free(r->ord.q);
    free(r->ord.arena);
    free(r->ord.spare);
    memset(&r->ord, 0, sizeof r->ord);
}

/* perf_internal.h — private to src/perf/: the reader's state, shared by the
 * container layer (perf_read.c: header, features, pipe/file/compressed
 * streams) and the record decoder (perf_read_records.c). */
#ifndef PK_PERF_INTERNAL_H
#define PK_PERF_INTERNAL_H

#include "perf/perf_data.h"

#include <zstd.h>

/* Record types (uapi perf_event.h and perf's own user-space types). */
enum {
    PK_REC_MMAP = 1, PK_REC_LOST = 2, PK_REC_COMM = 3, PK_REC_EXIT = 4,
    PK_REC_FORK = 7, PK_REC_SAMPLE = 9, PK_REC_MMAP2 = 10, PK_REC_LOST_SAMPLES = 13,
    PK_REC_HEADER_ATTR = 64, PK_REC_HEADER_TRACING_DATA = 66, PK_REC_HEADER_BUILD_ID = 67,
    PK_REC_FINISHED_ROUND = 68, PK_REC_ID_INDEX = 69, PK_REC_AUXTRACE = 71,
    PK_REC_HEADER_FEATURE = 80, PK_REC_COMPRESSED = 81, PK_REC_FINISHED_INIT = 82,
    PK_REC_COMPRESSED2 = 83,
};

/* sample_type bits beyond the public enum, in the kernel's output order. */
#define PK_SAMPLE_TRANSACTION     (1ull << 17)
#define PK_SAMPLE_REGS_INTR       (1ull << 18)
#define PK_SAMPLE_PHYS_ADDR       (1ull << 19)
#define PK_SAMPLE_AUX             (1ull << 20)
#define PK_SAMPLE_CGROUP          (1ull << 21)
#define PK_SAMPLE_DATA_PAGE_SIZE  (1ull << 22)
#define PK_SAMPLE_CODE_PAGE_SIZE  (1ull << 23)
#define PK_SAMPLE_WEIGHT_STRUCT   (1ull << 24)
#define PK_SAMPLE_KNOWN_MASK      ((1ull << 25) - 1)

#define PK_BRANCH_COUNTERS        (1ull << 19)

enum { PK_FORMAT_TOTAL_TIME_ENABLED = 1, PK_FORMAT_TOTAL_TIME_RUNNING = 2,
       PK_FORMAT_ID = 4, PK_FORMAT_GROUP = 8, PK_FORMAT_LOST = 16 };

#define PK_ATTR_FLAG_SAMPLE_ID_ALL (1ull << 18)
#define PK_ATTR_FLAG_FREQ (1ull << 10)

#define PK_PERF_MAGIC2   0x32454c4946524550ull  /* "PERFILE2" */
#define PK_PERF_MAGIC1   0x454c494646524550ull  /* "PERFFILE" */
#define PK_FILE_HEADER_SIZE 104
#define PK_PIPE_HEADER_SIZE 16

typedef struct pk_attr_int {
    pk_perf_attr pub;           /* first: a pk_perf_attr * of the reader is a pk_attr_int * */
    uint64_t *ids_owned;
    int32_t time_pos;           /* byte offset of a SAMPLE's time in its record; -1: none */
} pk_attr_int;

/* The time-ordering queue (perf_order.c). */
typedef struct pk_order_entry pk_order_entry;
typedef struct pk_order {
    pk_order_entry *q;          /* queued records: in (time, seq) order unless unsorted */
    size_t len, cap;
    uint8_t *arena, *spare;     /* copies of records that do not stay mapped */
    size_t arena_len, arena_cap;
    bool unsorted;              /* a record older than the last one queued came in */
    uint64_t bytes;             /* bytes of all queued records */
    uint32_t seq;               /* file order, the tie-break between equal times */
    const uint8_t *rec_base;    /* where mapped entries' offsets count from */
    uint64_t max_time;          /* newest time queued so far */
    uint64_t next_limit;        /* the previous round's newest time */
    bool have_limit;
    uint64_t last_delivered;
    bool delivered_any;
} pk_order;

/* Where an error happened: the outer file offset, and for records inside a
 * compressed stream also the decompressed offset. */
typedef struct pk_reader {
    const char *name;
    const pk_perf_callbacks *cb;
    pk_perf_stats *st;
    pk_err *err;

    pk_attr_int **attrs;
    uint32_t nr_attrs, cap_attrs;
    pk_u64map id2attr;          /* event id → attr index */
    bool any_branch_counters;

    /* layout of ids, decided by the first attr (perf requires all attrs
     * to agree on the position of ID/IDENTIFIER) */
    uint64_t sample_type0;
    bool sample_id_all;
    int32_t trailer_time_back;  /* non-sample records: bytes from the record's end
                                   to the trailer's time; -1: no time */

    /* compressed stream */
    ZSTD_DStream *zds;
    uint8_t *win;               /* decompression window */
    size_t win_cap, win_len;    /* win_len: bytes held (carry-over + new) */
    uint64_t dec_base;          /* decompressed offset of win[0] */
    uint64_t dec_skip;          /* extra payload still to skip in the stream */
    uint64_t cur_comp_offset;   /* file offset of the COMPRESSED record being fed */
    bool in_decompressed;

    /* the mmapped file: pages already decoded are dropped so the resident
     * set stays bounded on multi-gigabyte files */
    const uint8_t *map_base;
    uint64_t map_dropped;
    const uint8_t *rec_base;    /* records read now lie at rec_base + their offset, in the
                                   mapping (or the caller's memory), and stay there */

    pk_order ord;
} pk_reader;

/* Decodes one complete record (rec[0..size), size already validated >= 8 and
 * equal to the header's size). `off` is its offset for messages (decompressed
 * offset when r->in_decompressed). *extra receives the number of payload bytes
 * following the record that must be skipped (AUXTRACE, TRACING_DATA). */
int pk_reader_record(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off, uint64_t *extra);
/* Decodes and hands over one SAMPLE, MMAP, MMAP2, COMM, FORK or EXIT record
 * (the records that are delivered in time order). */
int pk_reader_event(pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t off);
/* The attr a SAMPLE record belongs to; NULL when it cannot be told (the
 * decoder reports why). */
const pk_perf_attr *pk_reader_sample_attr(const pk_reader *r, const uint8_t *rec, size_t size);

/* Time ordering (perf_order.c): queues a time-ordered record (or delivers it
 * at once when it has no time); a FINISHED_ROUND; the end of the input. */
int pk_order_record(pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t off);
int pk_order_round(pk_reader *r);
int pk_order_finish(pk_reader *r);
/* The lowest mapped-file offset, below pos, that a queued record still
 * points at (pos when none): pages before it may be dropped. */
uint64_t pk_order_oldest_mapped(const pk_reader *r, uint64_t pos);
void pk_order_free(pk_reader *r);

/* Feeds one COMPRESSED record's payload into the stream. */
int pk_reader_decompress(pk_reader *r, const uint8_t *data, size_t len, uint64_t off);
/* Checks that the decompressed stream ended on a record boundary. */
int pk_reader_decompress_finish(pk_reader *r);
/* Adds an attr (copied); `raw` is the on-disk perf_event_attr of `avail` bytes. */
int pk_reader_add_attr(pk_reader *r, const uint8_t *raw, size_t avail, const uint8_t *ids,
                       uint64_t nr_ids, uint64_t off);
/* Parses BUILD_ID feature records in data[0..size). */
int pk_reader_build_ids(pk_reader *r, const uint8_t *data, uint64_t size, uint64_t off);
/* Formats "name: offset N" or "name: decompressed offset N (COMPRESSED record at M)". */
int pk_reader_fail(pk_reader *r, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

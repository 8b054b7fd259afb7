/* perf_model.h — perf.data as the structure-aware mutator sees it
 * (perf_model.c decodes and lays it out, perf_mutator.c changes it): the
 * file header's words, attrs with their ids, the records of the data
 * section or pipe stream, the feature sections. */
#ifndef PK_FUZZ_PERF_MODEL_H
#define PK_FUZZ_PERF_MODEL_H

#include "fuzz_util.h"

#include <stdbool.h>

#define MAX_RECS 4096
#define MAX_ATTRS 8
#define MAX_FEATS 32
#define MAX_REC 0xffff

enum { T_MMAP = 1, T_LOST = 2, T_COMM = 3, T_EXIT = 4, T_FORK = 7, T_SAMPLE = 9, T_MMAP2 = 10,
       T_HEADER_ATTR = 64, T_TRACING = 66, T_BUILD_ID = 67, T_ROUND = 68, T_ID_INDEX = 69,
       T_AUXTRACE = 71, T_FEATURE = 80, T_COMPRESSED = 81, T_COMPRESSED2 = 83 };

typedef struct blob {
    uint8_t *p;
    size_t n;
} blob;

typedef struct model {
    bool pipe;
    blob attrs[MAX_ATTRS];   /* perf_event_attr bytes (file mode: attr_size - 16) */
    blob ids[MAX_ATTRS];     /* that attr's event ids */
    size_t nattrs;
    blob recs[MAX_RECS];     /* whole records; AUXTRACE/TRACING_DATA keep their payload */
    size_t nrecs;
    blob tail;               /* data bytes that did not decode as records */
    uint32_t feat_id[MAX_FEATS];
    blob feats[MAX_FEATS];   /* ascending ids, as the feature table lists them */
    size_t nfeats;
    /* header words patched after layout (file mode), to make them lie */
    int npatch;
    struct { size_t off; uint64_t v; } patch[2];
} model;

/* xorshift64: the mutator's randomness, seeded by libFuzzer */
typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rnd(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}
static inline size_t below(rng *r, size_t n) { return n ? (size_t)(rnd(r) % n) : 0; }

/* Copies n bytes into b (replacing what it held); false on OOM. */
bool pm_blob_set(blob *b, const void *p, size_t n);
/* Replaces bytes [at, at + del) with ins bytes of src (random if NULL). */
bool pm_blob_splice(blob *b, size_t at, size_t del, const uint8_t *src, size_t ins, rng *r);
void pm_model_free(model *m);
/* A record's type (0 for fewer than 8 bytes). */
uint32_t pm_rec_type(const blob *b);
/* Sets a record's header size to its length (AUXTRACE and TRACING_DATA
 * excepted: their size excludes the payload kept after them). */
void pm_rec_fix_size(blob *b);
/* Splits [p, end) into records; what does not decode goes to the tail. */
void pm_split_records(model *m, const uint8_t *p, const uint8_t *end);
/* File or pipe mode; false for anything else (not a PERFILE2 file). */
bool pm_decode(model *m, const uint8_t *d, size_t size);
/* Lays the model out in dst; 0 if it does not fit in cap. */
size_t pm_encode(const model *m, uint8_t *dst, size_t cap);
/* The records zstd-compressed in a COMPRESSED record's payload (at most 1 MiB). */
bool pm_inflate_payload(const uint8_t *p, size_t n, blob *out);
/* Replaces recs[i, j) by one COMPRESSED (v2: COMPRESSED2) record holding them. */
bool pm_compress_range(model *m, size_t i, size_t j, bool v2);
/* attrs and features become HEADER_ATTR / HEADER_FEATURE records, and back */
void pm_to_pipe(model *m);
void pm_to_file(model *m);

#endif

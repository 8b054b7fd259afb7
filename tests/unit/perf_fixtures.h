/* perf_fixtures.h — perf.data fixtures for the unit tests: a byte builder
 * for handcrafted files, temporary paths, a reference file written with the
 * writer, a compressed copy, a pipe-mode stream, a multi-attr file and a
 * stream with every SAMPLE field. Shared by test_perf_rw.c (round trips) and
 * test_perf_errors.c (bounds errors, mutation fuzzing). */
#ifndef PK_PERF_FIXTURES_H
#define PK_PERF_FIXTURES_H

#include "perf/perf_data.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pf_bbuf {
    uint8_t *d;
    size_t len, cap;
} pf_bbuf;

void pf_bput(pf_bbuf *b, const void *p, size_t n);
void pf_b64(pf_bbuf *b, uint64_t v);
void pf_b32(pf_bbuf *b, uint32_t v);
void pf_b16(pf_bbuf *b, uint16_t v);
void pf_bzero(pf_bbuf *b, size_t n);
void pf_rec_hdr(pf_bbuf *b, uint32_t type, uint16_t misc, uint16_t size);
void pf_write_file(const char *path, const void *d, size_t n);

/* The build-id of the reference file's binary. */
extern const uint8_t pf_BID[20];
/* Sample i of the reference file, as written. */
void pf_sample_fill(int i, pk_sample *s, uint64_t *chain, pk_branch *br);
int pf_write_reference(const char *path, bool hw_idx, bool cpu, int nsamples, pk_err *e);
/* Rewrites src's data section as COMPRESSED records of `chunk` bytes. */
void pf_compress_copy(const char *src, const char *dst, size_t chunk);
void pf_pipe_stream(pf_bbuf *b);
void pf_multi_attr_file(pf_bbuf *b);
void pf_all_fields_sample(pf_bbuf *b, uint64_t ip, uint64_t stack_size);
void pf_all_fields_stream(pf_bbuf *b, uint64_t stack_size);


/* Everything the reader reports, copied (pointers die with the callback). */
typedef struct pf_got {
    int order;                  /* sequence number of callbacks */
    int first_record_at, build_id_at;
    int nattr;
    const pk_perf_attr *attr_ptr[4];
    uint64_t attr_sample_type[4];
    pk_perf_attr attr[4];       /* copies: the reader's attrs die with the read */
    uint64_t attr_ids[4][4];
    int nsamples;
    pk_sample s[64];
    uint64_t chain[64][16];
    pk_branch br[64][40];
    const pk_perf_attr *sattr[64];
    int nmmap;
    pk_mmap_event m[8];
    char mname[8][128];
    int ncomm;
    pk_comm_event c[4];
    char cname[4][32];
    int ntask;
    pk_task_event t[8];
    int nbid;
    pk_build_id_event b[4];
    char bname[4][128];
    char hostname[64];
    int features_seen;
} pf_got;
/* Callbacks that fill g (zeroed first). */
pk_perf_callbacks pf_callbacks(pf_got *g);

#endif

/* pprof_convert.h — whole-file conversions between the two sample formats
 * (perf.data and pprof), for `pgokit convert`. Outputs are written
 * atomically; a failure leaves no output file. */
#ifndef PK_PPROF_CONVERT_H
#define PK_PPROF_CONVERT_H

#include "pprof/pprof.h"

typedef enum pk_sample_file {
    PK_SAMPLES_UNKNOWN = 0,   /* neither magic: a sample profile, or raw protobuf */
    PK_SAMPLES_PERF,          /* "PERFILE2" (file or pipe mode) */
    PK_SAMPLES_PPROF,         /* gzip: pprof's usual form */
} pk_sample_file;

/* Sniffs the first bytes of path. */
int pk_sample_file_kind(const char *path, pk_sample_file *kind, pk_err *err);

/* perf.data → pprof (see pprof.h, WRITER). An input without samples is an error. */
int pk_perf_to_pprof(const char *in, const char *out, const pk_pprof_writer_opts *wo, pk_perf_stats *ps,
                     pk_pprof_write_stats *ws, pk_err *err);
/* pprof → perf.data: the reader's events (one attr, MMAP2 per mapping, a
 * COMM naming the process after the main mapping, one SAMPLE with a call
 * chain per pprof sample, its period the chosen value), non-leaf addresses
 * restored to return addresses. There is no pprof → pprof: a pk_sample
 * carries one value, a pprof sample several. */
int pk_pprof_to_perf(const char *in, const pk_pprof_opts *ro, const char *out, pk_pprof_stats *rs, pk_err *err);
#endif

/* format.h — reading and writing sample profiles on disk.
 *
 * Formats (byte layouts in /work/shared/research/autofdo-and-formats.md):
 *  - PK_FMT_TEXT:      LLVM sample-profile text (nested inlinees, call targets,
 *                      !CFGChecksum, !Attributes, [a:1 @ b] contexts).
 *  - PK_FMT_BINARY:    LLVM raw binary (SPF_Binary, magic ...ff), non-CS,
 *                      non-probe only (as llvm-profdata).
 *  - PK_FMT_EXTBINARY: LLVM extensible binary (SPF_Ext_Binary, magic ...04),
 *                      the default 7-section layout llvm-profdata-19 writes.
 *  - PK_FMT_GCC:       GCC AutoFDO .afdo, format version 2 (gcc 12..15).
 *
 * Readers add into the given set (reading twice adds the counts, as LLVM's
 * readers do for duplicate functions). Bad input gives an error naming the
 * file and the byte offset (binary) or line (text).
 */
#ifndef PK_FORMAT_H
#define PK_FORMAT_H

#include "common/pk_common.h"
#include "profile/profile.h"

typedef enum pk_prof_format {
    PK_FMT_AUTO = 0,
    PK_FMT_TEXT,
    PK_FMT_BINARY,
    PK_FMT_EXTBINARY,
    PK_FMT_GCC,
} pk_prof_format;

typedef struct pk_write_opts {
    pk_prof_format format;
    int use_md5;          /* extbinary: fixed-length MD5 name table (--use-md5) */
    int compress;         /* extbinary: zlib every non-empty section (--compress-all-sections) */
    int partial;          /* extbinary: set the summary's Partial flag */
} pk_write_opts;

/* Growable byte buffer the writers produce. */
typedef struct pk_buf {
    uint8_t *data;
    size_t len, cap;
    int oom;              /* an append failed: the buffer is incomplete */
} pk_buf;

void pk_buf_free(pk_buf *b);
void pk_buf_put(pk_buf *b, const void *p, size_t n);
void pk_buf_uleb(pk_buf *b, uint64_t v);
void pk_buf_u32(pk_buf *b, uint32_t v);
void pk_buf_u64(pk_buf *b, uint64_t v);
void pk_buf_printf(pk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *pk_prof_format_name(pk_prof_format f);
/* "text", "binary", "extbinary", "gcc" (also "afdo"). */
int pk_prof_format_parse(const char *s, pk_prof_format *f);
/* How a profile is marked pre-inlined before it is written
 * (pk_profset_mark_preinlined): FLAG, the extbinary summary's IsPreInlined
 * flag alone; ALL, every profile and inlinee ContextShouldBeInlined too,
 * which the text format also carries (its readers infer the flag from the
 * attributes). LLVM's raw binary and GCC's formats carry neither. */
enum pk_preinlined_mark { PK_PREINLINED_NONE, PK_PREINLINED_FLAG, PK_PREINLINED_ALL };
/* 0 when format f can carry the mark; else -1, the error saying why. */
int pk_prof_format_check_preinlined(pk_prof_format f, int mark, pk_err *err);
/* Guesses the format from the first bytes (PK_FMT_TEXT when nothing else matches). */
pk_prof_format pk_prof_detect(const uint8_t *data, size_t size);

/* ---- what a file is (identify.c): every kind of file pgokit writes, and a
 * few it is often handed by mistake. Sample-profile readers refuse the
 * others with a message naming the kind. ---- */
typedef enum pk_file_kind {
    PK_KIND_UNKNOWN = 0,      /* binary data of no known kind */
    PK_KIND_EMPTY,
    PK_KIND_TEXT,             /* printable text: an LLVM text profile, or not a profile */
    PK_KIND_LLVM_BINARY,
    PK_KIND_LLVM_EXTBINARY,
    PK_KIND_GCC,
    PK_KIND_RAWPROF,          /* "PKRAWPRF": aggregate/rawprof.c */
    PK_KIND_TEMPORAL_RAW,     /* libpgokit_rt output */
    PK_KIND_TEMPORAL_INDEXED, /* merge --temporal output */
    PK_KIND_PERF_DATA,
    PK_KIND_PPROF,            /* gzip (a pprof profile as pgokit and Go write them) */
    PK_KIND_EXACT,            /* record --exact-counts */
    PK_KIND_ELF,
    PK_KIND_LLVM_INSTR,       /* .profraw / .profdata */
} pk_file_kind;

pk_file_kind pk_file_identify(const uint8_t *data, size_t size);
/* "a perf.data file (samples; ...)": a phrase for messages. */
const char *pk_file_kind_describe(pk_file_kind k);
/* Sets the error for a file that is not a sample profile: names the kind,
 * or for unknown data "not a profile in any known format" with its first
 * bytes escaped (never raw bytes in a message). Returns -1. */
int pk_file_not_a_profile(pk_err *err, const char *path, pk_file_kind k, const uint8_t *data, size_t size);

/* path is only used in error messages. *fmt_out (may be NULL) gets the format read. */
int pk_prof_read_mem(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_prof_format fmt,
                     pk_prof_format *fmt_out, pk_err *err);
int pk_prof_read_file(pk_profset *ps, const char *path, pk_prof_format fmt, pk_prof_format *fmt_out, pk_err *err);

int pk_prof_write_mem(const pk_profset *ps, const pk_write_opts *o, pk_buf *out, pk_err *err);
/* Writes through pk_out_file: a failure leaves no file under path. The path
 * "-" writes to standard output (file descriptor 1). */
int pk_prof_write_file(const pk_profset *ps, const pk_write_opts *o, const char *path, pk_err *err);

/* Per-format entry points (used by the dispatchers above and by tests). */
int pk_text_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err);
int pk_text_write(const pk_profset *ps, pk_buf *out, pk_err *err);
/* One top-level profile in text form (header, body, inlinees, metadata). */
int pk_text_write_one(const pk_profset *ps, const pk_fprof *f, pk_buf *out, pk_err *err);
int pk_extbin_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err);
int pk_extbin_write(const pk_profset *ps, const pk_write_opts *o, pk_buf *out, pk_err *err);
int pk_binary_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err);
int pk_binary_write(const pk_profset *ps, pk_buf *out, pk_err *err);
int pk_gcc_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err);
int pk_gcc_write(const pk_profset *ps, pk_buf *out, pk_err *err);

#endif

/* fuzz_util.h — shared by the libFuzzer harnesses of tests/fuzz/ (one per
 * reader; see tests/fuzz/README.md).
 *
 * The oracles every harness applies besides the sanitizers:
 *  - a reader that fails says why: a non-empty message that starts with the
 *    name the input was given and points into it ("offset N", or "line N"
 *    for text formats); out-of-memory messages and a few conditions of the
 *    whole input ("no samples", "nothing usable") are exempt;
 *  - callbacks touch every byte an event points to (call chains, branch
 *    stacks, names), so an event that reaches past its record is caught by
 *    AddressSanitizer where it is handed out, not later.
 * A broken oracle aborts with the input's message, which libFuzzer records
 * as a crash like any sanitizer report. */
#ifndef PK_FUZZ_UTIL_H
#define PK_FUZZ_UTIL_H

#include "perf/perf_data.h"

#include <stddef.h>
#include <stdint.h>

#define PK_FUZZ_NAME "fuzz-input"

/* Aborts unless err names PK_FUZZ_NAME and a position: "offset" or, when
 * where_word is given, that word too ("line", "field"). */
void pk_fuzz_check_error(const pk_err *err, const char *where_word);
/* Aborts with a message (printf-style): an oracle that does not hold. */
void pk_fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A running hash of every event and of every byte it points to. */
typedef struct pk_fuzz_digest {
    uint64_t h;
    uint64_t events;
} pk_fuzz_digest;
void pk_fuzz_digest_bytes(pk_fuzz_digest *d, const void *p, size_t n);
void pk_fuzz_digest_u64(pk_fuzz_digest *d, uint64_t v);
/* Callbacks that fold every event into *d. */
void pk_fuzz_perf_callbacks(pk_perf_callbacks *cb, pk_fuzz_digest *d);

/* The body of a harness for a checksummed format: reads the input as it is
 * (read_one), then, when it holds at least min_size bytes, a copy with its
 * checksum made right by fix_checksum, since a mutated input almost never
 * passes the check and the reader behind it would go unfuzzed. The fixed copy
 * is also written to $PK_FUZZ_FIXED_OUT when that is set: run a harness on a
 * finding with it set to get the input the command line reads the same way
 * (a regression input for tests/fuzz/corpus/). */
void pk_fuzz_read_with_fixed_checksum(const uint8_t *data, size_t size, size_t min_size,
                                      void (*fix_checksum)(uint8_t *data, size_t size),
                                      void (*read_one)(const uint8_t *data, size_t size));

/* A private scratch directory (created on first use, under /dev/shm when it
 * exists): only the writer round trip needs files, since pk_perf_writer
 * writes through pk_out_file. */
const char *pk_fuzz_tmpdir(void);

/* The structure-aware perf.data mutator (perf_mutator.c): decodes the input
 * into header, attrs, records and features, changes one of them the way a
 * corrupt or unusual recording would differ (record sizes and types, attr
 * fields and sample_type bits, call-chain and branch-stack counts, records
 * moved into or out of a zstd-compressed stream, file mode <-> pipe mode) and
 * lays the file out again. Falls back to LLVMFuzzerMutate for bytes that do
 * not decode. */
size_t pk_fuzz_perf_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed);

/* libFuzzer's byte mutator, available to custom mutators. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#endif

/* pprof.h — reading and writing pprof profiles (profile.proto, usually
 * gzip-compressed: Go's runtime/pprof, perf_data_converter's perf_to_profile,
 * continuous profilers) at the level of binaries and addresses.
 *
 * READER. pk_pprof_read turns one pprof file into the callbacks the
 * perf.data reader drives (perf/perf_data.h), so everything that consumes a
 * recording consumes a pprof profile the same way:
 *   1. cb->attr once: a synthesized attr (SOFTWARE/cpu-clock for a cpu
 *      period type, else SOFTWARE/dummy; sample_type IP|TID|CALLCHAIN|PERIOD;
 *      sample_period = Profile.period).
 *   2. cb->mmap once per Mapping, in file order: an MMAP2 event with
 *      addr = memory_start, len = memory_limit - memory_start,
 *      pgoff = file_offset, filename, prot r-x, pid = tid = opts.pid, and
 *      the build-id as bytes when the mapping's build_id string is hex of at
 *      most 20 bytes (a GNU build-id). Other build ids (Go's own
 *      "xxxx/yyyy" ids, 32-byte hashes) are not passed on: counted in
 *      stats.build_ids_other. Mappings above the canonical user half
 *      ([kernel.kallsyms], modules) get pid -1 and cpumode kernel, as perf
 *      writes them. Empty mappings (limit == start) are skipped.
 *   3. cb->sample once per usable Sample, in file order: pid = tid = opts.pid,
 *      callchain = PERF_CONTEXT_USER (PERF_CONTEXT_KERNEL before kernel
 *      frames, as perf writes) then the location addresses leaf first,
 *      ip = the leaf address, period = the chosen value (below), no branch
 *      stack, file_offset = the Sample message's offset in the (decompressed)
 *      protobuf stream. A Location with several Line entries (inlined frames)
 *      is one address, one frame.
 * Samples are not aggregated further and not expanded (a Sample with value
 * 5 is one callback with period 5).
 *
 * The value used as period. A Sample has one value per Profile.sample_type.
 * By default the "samples" type (Go: samples/count; pgokit's own files) is
 * used when present, else the first type (perf_data_converter's first type
 * is "<event>_sample"/count): a count of samples, which is what
 * sample-based profile generation weighs. opts.sample_type ("cpu",
 * "cpu/nanoseconds") or opts.sample_index choose another; stats.value_*
 * say which was used. Samples whose chosen value is 0 or negative are
 * skipped (counted).
 *
 * Locations without an address (symbolic-only profiles: only Line entries)
 * cannot be placed in a binary: a sample whose leaf has no address is
 * skipped, and a stack is cut at its first address-less frame (the frames
 * leaf-side of it are kept, like a truncated perf stack). Both are counted;
 * when samples exist but none is usable the read fails with an error saying
 * why.
 *
 * ADDRESS CONVENTION of non-leaf frames. perf.data call chains hold return
 * addresses (the instruction after each call). pprof producers store
 * something else for every frame but the leaf:
 *   - Go's runtime/pprof: the return PC - 1 (runtime.Frames.Next steps
 *     every PC but a function entry back by one before symbolizing, and
 *     runtime/pprof writes that Frame.PC as Location.address; the signal PC
 *     of the leaf is stored +1 by the traceback and so comes back exact).
 *     Checked in Go 1.19's runtime/symtab.go, traceback.go, pprof/proto.go,
 *     and in the current symtab.go (inline unwinder, same pc--).
 *   - perf_data_converter (perf_to_profile): callchain entry - 1 for every
 *     frame after the leaf ("so we point to the call instead of the return
 *     addr", since its first version), and for LBR call stacks the
 *     branch source, i.e. the call instruction itself.
 *   - pgokit's writer (below): return address - 1, like both.
 * In every case a non-leaf address lies inside the call instruction, as
 * profile.proto's own comment says ("a non-leaf address may be in the
 * middle of a call instruction"). stats.nonleaf_minus_one is true for all
 * of these; it is set before the first callback, so a consumer can read it
 * from the stats while samples arrive. opts.nonleaf overrides the guess for
 * a producer that stores plain return addresses. With
 * opts.restore_return_addresses the reader adds 1 to every non-leaf frame
 * when nonleaf_minus_one holds, so the call chains follow perf's convention
 * exactly and the perf.data path can consume them unchanged (a pprof
 * written by pgokit from perf.data then gives back the original chains;
 * for perf_data_converter's LBR call stacks it gives call address + 1,
 * still inside the call).
 *
 * Several files: call pk_pprof_read once per file. Each call emits its own
 * attr and mappings again.
 *
 * Corrupt input (bad gzip, truncated or malformed protobuf, wire types that
 * do not match the schema, ids that point nowhere, string indexes past the
 * table, lengths past the end) fails with an error naming the file and the
 * byte offset (in the decompressed stream for gzip input, with the field
 * and message concerned). Memory is bounded: the decompressed size is
 * capped (opts.max_bytes, 1 GiB by default; a gzip bomb stops there with an
 * error) and so is the number of locations and mappings (opts.max_entries).
 *
 * WRITER. pk_pprof_writer consumes the same callbacks (attach it to
 * pk_perf_read with pk_pprof_writer_callbacks) and writes a gzip-compressed
 * profile.proto: sample types samples/count and the period (cpu/nanoseconds
 * for cpu-clock and task-clock, else events/count), one Mapping per distinct
 * mmap (file, start, limit, offset; build_id as hex from MMAP2 build-ids or
 * the BUILD_ID feature), one Location per distinct (mapping, address) with
 * its mapping_id and address only (no Function/Line: symbolize with the
 * binaries), one Sample per distinct stack (identical stacks aggregated:
 * values = [number of samples, sum of periods]), non-leaf addresses as
 * return address - 1. Kernel frames are kept. The mapping holding the most
 * samples' leaves comes first (pprof treats mapping 1 as the main binary).
 * The file is written atomically (pk_out_file).
 */
#ifndef PK_PPROF_H
#define PK_PPROF_H

#include "common/pk_common.h"
#include "perf/perf_data.h"

typedef enum pk_pprof_producer {
    PK_PPROF_PRODUCER_UNKNOWN = 0,
    PK_PPROF_PRODUCER_GO,                  /* Go runtime/pprof (functions in .go files) */
    PK_PPROF_PRODUCER_PERF_DATA_CONVERTER, /* perf_to_profile ("perf-version:" comments, <event>_sample types) */
    PK_PPROF_PRODUCER_PGOKIT,              /* pk_pprof_writer (a "pgokit" comment) */
} pk_pprof_producer;

const char *pk_pprof_producer_name(pk_pprof_producer p);

typedef enum pk_pprof_nonleaf {
    PK_PPROF_NONLEAF_AUTO = 0,    /* return address - 1 (every known producer) */
    PK_PPROF_NONLEAF_MINUS_ONE,   /* force: non-leaf addresses are return address - 1 */
    PK_PPROF_NONLEAF_RETURN,      /* force: non-leaf addresses are return addresses */
} pk_pprof_nonleaf;

typedef struct pk_pprof_opts {
    const char *sample_type;      /* "type" or "type/unit"; NULL: default (see above) */
    int sample_index;             /* >= 0: this sample_type index; < 0: not set */
    uint32_t pid;                 /* pid and tid of every event (default 0) */
    pk_pprof_nonleaf nonleaf;
    bool restore_return_addresses;/* non-leaf + 1 when nonleaf_minus_one */
    uint64_t max_bytes;           /* protobuf size limit; 0: 1 GiB */
    uint64_t max_entries;         /* locations + mappings limit; 0: 1 << 25 */
} pk_pprof_opts;

/* sample_index -1 and everything else 0 / default. */
void pk_pprof_opts_init(pk_pprof_opts *o);

typedef struct pk_pprof_stats {
    bool gzip;
    uint64_t file_bytes;          /* as stored */
    uint64_t proto_bytes;         /* the protobuf stream (decompressed) */
    uint64_t sample_types, mappings, locations, functions, strings;
    uint64_t samples;             /* Sample messages in the file */
    uint64_t samples_emitted;     /* handed to cb->sample */
    uint64_t samples_zero;        /* chosen value 0: skipped */
    uint64_t samples_negative;    /* chosen value < 0: skipped */
    uint64_t samples_no_address;  /* no location, or a leaf without address: skipped */
    uint64_t samples_cut;         /* stack cut at an address-less frame */
    uint64_t frames_dropped;      /* frames lost to those cuts */
    uint64_t frames;              /* frames emitted (markers not counted) */
    uint64_t locations_no_address;
    uint64_t locations_inline;    /* more than one Line: inlined frames in one address */
    uint64_t locations_no_mapping;/* mapping_id 0 */
    uint64_t locations_outside_mapping; /* address outside its mapping's range */
    uint64_t mappings_emitted;
    uint64_t mappings_empty;      /* limit == start: not emitted */
    uint64_t mappings_overlapping;/* overlaps an earlier mapping (several
                                     processes merged into one profile) */
    uint64_t build_ids_hex;       /* passed on as bytes */
    uint64_t build_ids_other;     /* present but not a hex GNU build-id */
    uint64_t value_total;         /* sum of the emitted periods */
    int value_index;              /* the sample_type used as period (-1: none) */
    char value_type[48], value_unit[48];
    char period_type[48], period_unit[48];
    int64_t period;               /* Profile.period */
    int64_t duration_nanos;
    pk_pprof_producer producer;
    bool nonleaf_minus_one;       /* see ADDRESS CONVENTION; set before any callback */
    bool restored_return_addresses; /* the reader added 1 to non-leaf frames */
} pk_pprof_stats;

/* Reads one pprof file (gzip-compressed or raw protobuf; "-" is standard
 * input) with default options. Returns 0, -1 with err naming the file and
 * offset, or the non-zero value a callback returned (reading stops). */
int pk_pprof_read(const char *path, const pk_perf_callbacks *cb, pk_pprof_stats *st, pk_err *err);
int pk_pprof_read_opts(const char *path, const pk_pprof_opts *opts, const pk_perf_callbacks *cb,
                       pk_pprof_stats *st, pk_err *err);
/* The same over bytes in memory; `name` is for messages. */
int pk_pprof_read_mem(const void *data, size_t size, const char *name, const pk_pprof_opts *opts,
                      const pk_perf_callbacks *cb, pk_pprof_stats *st, pk_err *err);

/* True when the bytes start like a gzip stream (pprof's usual form). */
bool pk_pprof_is_gzip(const void *data, size_t size);

/* ---- writer ---- */
typedef struct pk_pprof_writer pk_pprof_writer;

typedef struct pk_pprof_writer_opts {
    int level;                    /* gzip level 1-9; 0: 6 */
    const char *comment;          /* extra free-form comment (e.g. the input name); may be NULL */
} pk_pprof_writer_opts;

typedef struct pk_pprof_write_stats {
    uint64_t samples_in;          /* samples received */
    uint64_t samples_no_ip;       /* no ip and no call chain: dropped */
    uint64_t samples;             /* distinct stacks written */
    uint64_t locations, mappings;
    uint64_t frames_unmapped;     /* addresses in no known mmap (mapping_id 0) */
    uint64_t period_total;
    uint64_t bytes;               /* compressed bytes written */
} pk_pprof_write_stats;

pk_pprof_writer *pk_pprof_writer_new(const pk_pprof_writer_opts *opts, pk_err *err);
void pk_pprof_writer_free(pk_pprof_writer *w);
/* Fills callbacks that feed the writer (attr, mmap, comm, task, build_id,
 * sample); callback errors go into *err. */
void pk_pprof_writer_callbacks(pk_pprof_writer *w, pk_err *err, pk_perf_callbacks *cb);
int pk_pprof_writer_on_attr(pk_pprof_writer *w, const pk_perf_attr *a, pk_err *err);
int pk_pprof_writer_on_mmap(pk_pprof_writer *w, const pk_mmap_event *m, pk_err *err);
int pk_pprof_writer_on_comm(pk_pprof_writer *w, const pk_comm_event *c, pk_err *err);
int pk_pprof_writer_on_task(pk_pprof_writer *w, const pk_task_event *t, pk_err *err);
int pk_pprof_writer_on_build_id(pk_pprof_writer *w, const pk_build_id_event *b, pk_err *err);
int pk_pprof_writer_on_sample(pk_pprof_writer *w, const pk_sample *s, pk_err *err);
/* Writes everything received so far to path (gzip, atomically). */
int pk_pprof_writer_write(pk_pprof_writer *w, const char *path, pk_pprof_write_stats *st, pk_err *err);

#endif

/* aggregate.h — samples → per-binary fall-through range and branch counts.
 *
 * The aggregator follows the process tree of a recording (MMAP/MMAP2, FORK,
 * COMM exec) so that every sampled address can be attributed to the mapping
 * it was executed from, matches the target binary by build-id (MMAP2 build-id
 * records or the BUILD_ID feature) or else by path, and converts runtime
 * addresses to link-time virtual addresses through the binary's PT_LOAD
 * segments (ip − map start + pgoff = file offset → vaddr), so PIE executables
 * and shared libraries need no special casing.
 *
 * From each LBR stack (newest entry first) it counts, as llvm-profgen and
 * AutoFDO do:
 *   - every taken branch (from, to) whose target lies in the binary (the
 *     source may be outside: PK_AGG_EXTERNAL);
 *   - every fall-through range [e[i+1].to, e[i].from] (straight-line code run
 *     between two consecutive taken branches) whose ends both lie in the
 *     binary. The code after the newest entry's target is not counted: the
 *     sample does not say where execution stopped.
 * Ranges that run backwards or are implausibly long are dropped here and
 * counted by reason; the checks that need instruction boundaries (a range
 * crossing an unconditional jump, starting inside an instruction) belong to
 * profgen, which decodes the sampled functions anyway.
 *
 * The result is the "raw profile" (pk_rawprof): unsymbolized, keyed by
 * link-time addresses, mergeable by addition, written to and read from a
 * small versioned file (see rawprof.c for the layout).
 */
#ifndef PK_AGGREGATE_H
#define PK_AGGREGATE_H

#include "common/pk_common.h"
#include "perf/perf_data.h"

/* Address outside the binary (another DSO, the kernel, the vDSO, unmapped). */
#define PK_AGG_EXTERNAL UINT64_MAX

/* ---- flat open-addressed map (u64, u64) → count ----
 * Entries with count 0 are empty slots, so only positive counts are stored. */
typedef struct pk_pair_count {
    uint64_t a, b, n;
} pk_pair_count;

typedef struct pk_pairmap {
    pk_pair_count *e;
    size_t cap;   /* power of two, 0 when unallocated */
    size_t len;
} pk_pairmap;

int pk_pairmap_init(pk_pairmap *m, size_t initial_cap);
void pk_pairmap_free(pk_pairmap *m);
/* Room for n entries without growing. Copying one map into another slot by
 * slot needs it: entries come out in hash order, and a smaller destination
 * piles them onto a few long probe chains until it has grown. -1 on OOM. */
int pk_pairmap_reserve(pk_pairmap *m, size_t n);
/* Adds n (> 0) to (a, b); -1 on OOM. */
int pk_pairmap_add(pk_pairmap *m, uint64_t a, uint64_t b, uint64_t n);
/* Adds every (a, b, n) of items (n 0: skipped), the table's slots
 * prefetched 64 at a time: adds whose keys scatter over a table larger than
 * the cache wait on one miss at a time otherwise. -1 on OOM. */
int pk_pairmap_add_batch(pk_pairmap *m, const pk_pair_count *items, size_t n);
uint64_t pk_pairmap_get(const pk_pairmap *m, uint64_t a, uint64_t b);
/* Copies the entries into a new array sorted by (a, b); caller frees.
 * Returns NULL only on OOM when len > 0 (*out_len = 0 and NULL when empty). */
pk_pair_count *pk_pairmap_sorted(const pk_pairmap *m, size_t *out_len);

/* ---- the target binary, as the aggregator needs to know it ---- */
typedef struct pk_agg_segment {  /* one PT_LOAD */
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;              /* PF_X = 1, PF_W = 2, PF_R = 4 */
} pk_agg_segment;

typedef struct pk_agg_target {
    const char *path;            /* as given by the user; basename is matched too */
    uint8_t build_id[20];
    uint8_t build_id_size;       /* 0: the binary has no build-id */
    uint64_t preferred_base;     /* page-aligned vaddr of the first executable PT_LOAD */
    const pk_agg_segment *segs;
    size_t nsegs;
} pk_agg_target;

/* The target as a binary describes itself: path, build-id, preferred base
 * and PT_LOAD segments (*segs: allocated here, freed by the caller once
 * the aggregators using t are gone). */
struct pk_elf;
int pk_agg_target_of_elf(pk_agg_target *t, pk_agg_segment **segs, const struct pk_elf *elf, const char *path,
                         pk_err *err);

/* ---- counters reported in the closing summary ---- */
enum pk_agg_range_drop {
    PK_RANGE_DROP_BACKWARDS,     /* start after end */
    PK_RANGE_DROP_TOO_LONG,      /* longer than opts.max_range_len */
    PK_RANGE_DROP_EXTERNAL,      /* one end outside the binary (calls into other DSOs) */
    PK_RANGE_DROP_CROSS_UNCOND,  /* (profgen) an unconditional jump/call/ret strictly inside */
    PK_RANGE_DROP_NO_FUNC,       /* (profgen) outside every DWARF function (PLT stubs, code
                                    without debug info): not a bogus range, just not profiled */
    PK_RANGE_DROP_NOT_CODE,      /* (profgen) start or end not an instruction boundary */
    PK_RANGE_DROP_CROSS_FUNC,    /* (profgen) runs past the end of its function */
    PK_RANGE_DROP_N
};
extern const char *const pk_range_drop_names[PK_RANGE_DROP_N];

typedef struct pk_agg_stats {
    uint64_t samples;            /* sample records seen */
    uint64_t samples_used;       /* contributed at least one range or branch */
    uint64_t samples_other_pid;  /* filtered by --pid */
    uint64_t samples_no_lbr;     /* no branch stack */
    uint64_t samples_outside;    /* branch stack entirely outside the binary */
    uint64_t samples_no_mapping; /* pid unknown, fell back to the global mapping */
    uint64_t lbr_entries;        /* entries looked at */
    uint64_t branches;           /* taken branches counted (sum of counts) */
    uint64_t branches_external;  /* entries whose target lies outside the binary */
    uint64_t ranges;             /* ranges counted (sum of counts) */
    uint64_t range_drop[PK_RANGE_DROP_N];
    uint64_t mmaps, mmaps_target;
    uint64_t mmaps_build_id_mismatch; /* same name, different build-id: not used */
    uint64_t processes, forks, execs;
} pk_agg_stats;

/* Sums counters (for merging raw profiles). */
void pk_agg_stats_add(pk_agg_stats *into, const pk_agg_stats *s);

/* ---- the raw profile: what aggregation produces ---- */
typedef struct pk_rawprof {
    char *path;                  /* binary path (informational) */
    uint8_t build_id[20];
    uint8_t build_id_size;
    uint64_t preferred_base;
    pk_pairmap ranges;           /* (begin vaddr, end vaddr inclusive) → count */
    pk_pairmap branches;         /* (source vaddr or PK_AGG_EXTERNAL, target vaddr) → count */
    pk_agg_stats stats;
} pk_rawprof;

int pk_rawprof_init(pk_rawprof *r, const char *path, const uint8_t *build_id,
                    uint8_t build_id_size, uint64_t preferred_base, pk_err *err);
void pk_rawprof_free(pk_rawprof *r);
/* Writes the version-1 (flat) file (atomically, through pk_out_file). */
int pk_rawprof_write(const pk_rawprof *r, const char *path, pk_err *err);
/* Reads a file written by pk_rawprof_write (version 1), or a version-2 file
 * whose counts are all in the empty context (flat LBR data); a version-2
 * file with calling contexts or IP observations is refused, naming the
 * reader that takes it (pk_rawprof2_read): dropping them would be silent.
 * Corrupt or truncated input gives an error naming the file and byte
 * offset. r is initialised by the call. */
int pk_rawprof_read(pk_rawprof *r, const char *path, pk_err *err);
/* Same over bytes in memory; `path` is for messages. */
int pk_rawprof_read_mem(pk_rawprof *r, const uint8_t *data, size_t size, const char *path, pk_err *err);
/* Adds src's counts into dst. The binaries must be the same: equal build-ids
 * when both have one, else equal paths. Addresses are rebased if the preferred
 * bases differ (they cannot for the same build-id, but paths can lie). */
int pk_rawprof_merge(pk_rawprof *dst, const pk_rawprof *src, pk_err *err);

/* ---- the file's version-2 primitives (rawprof.c has the layout; the
 * container with contexts and IP observations is unwind/rawprof2.h) ---- */
#define PK_RAW_VERSION_MAX 2u
#define PK_RAW_CALLS_ONLY 1u     /* flags: context branches are calls and jumps to entries only */
enum pk_raw_section_id {
    PK_RAWSEC_AGG_STATS = 1, PK_RAWSEC_UNWIND_STATS, PK_RAWSEC_IP_STATS, PK_RAWSEC_CONTEXTS,
    PK_RAWSEC_RANGES, PK_RAWSEC_BRANCHES, PK_RAWSEC_IP_HITS, PK_RAWSEC_IP_CALLS, PK_RAWSEC_IP_UNPLACED,
    PK_RAWSEC_N
};
typedef struct pk_raw_section {
    const uint8_t *data;         /* the first entry */
    uint64_t n;                  /* entries (0 when the section is absent) */
    uint64_t off;                /* file offset of the first entry, for messages */
} pk_raw_section;
typedef struct pk_raw_file {
    uint32_t version, flags;
    uint64_t base;
    uint8_t build_id[20];
    uint8_t build_id_size;
    const uint8_t *path_bytes;   /* not NUL-terminated */
    uint32_t path_len;
    pk_raw_section sec[PK_RAWSEC_N];
} pk_raw_file;
/* The version of a raw profile in memory (magic and header size checked). */
int pk_raw_file_version(const uint8_t *d, size_t size, const char *path, uint32_t *version, pk_err *err);
/* Checks a version-2 file (header, sizes, section order and entry sizes,
 * checksum) and finds its sections; errors name `path` and the offset. */
int pk_raw_file_parse_v2(const uint8_t *d, size_t size, const char *path, pk_raw_file *f, pk_err *err);
/* Bytes per entry of a section (0: unknown id). */
unsigned pk_raw_section_entry_size(int id);
/* A version-2 writer: header, then sections in increasing id order, then
 * commit (checksum, atomic rename). Errors after open leave no file once
 * pk_raw_writer_abort is called (commit aborts by itself on failure). */
typedef struct pk_raw_writer {
    pk_out_file *o;
    uint64_t h;
} pk_raw_writer;
/* (nsections: how many pk_raw_writer_section calls follow) */
int pk_raw_writer_open(pk_raw_writer *w, const char *path, const pk_rawprof *identity, uint32_t flags,
                       uint32_t nsections, pk_err *err);
int pk_raw_writer_section(pk_raw_writer *w, int id, uint64_t n, pk_err *err);
int pk_raw_writer_words(pk_raw_writer *w, const uint64_t *v, size_t n, pk_err *err);
int pk_raw_writer_commit(pk_raw_writer *w, pk_err *err);
void pk_raw_writer_abort(pk_raw_writer *w);

/* llvm-profgen's unsymbolized profile text (--skip-symbolization output,
 * --unsymbolized-profile input), flat profiles only: ranges then branches,
 * hex addresses relative to `base` (0: absolute), llvm-profgen's external
 * address 1 for PK_AGG_EXTERNAL. The reader adds into `into` (initialised by
 * the caller); a calling context ("[...]") is refused, errors name the line
 * (see pk_llvm_unsym_parse for context-sensitive text). */
int pk_llvm_unsym_write(const pk_rawprof *r, uint64_t base, const char *path, pk_err *err);
int pk_llvm_unsym_read(pk_rawprof *into, const char *path, uint64_t base, pk_err *err);
/* The same text, contexts and all, handed over piece by piece: a context's
 * text between its brackets (sink->context NULL: a context is an error),
 * then each count (kind 0: range begin..end, 1: branch source or
 * PK_AGG_EXTERNAL -> target; absolute addresses). A callback's nonzero
 * return stops the reading (err set). */
typedef struct pk_llvm_unsym_sink {
    void *ctx;
    int (*context)(void *ctx, const char *text, size_t len, size_t lineno, pk_err *err);
    int (*count)(void *ctx, int kind, uint64_t a, uint64_t b, uint64_t n, size_t lineno, pk_err *err);
} pk_llvm_unsym_sink;
int pk_llvm_unsym_parse(const char *path, uint64_t base, const pk_llvm_unsym_sink *sink, pk_err *err);

/* ---- the aggregator ---- */
typedef struct pk_agg_opts {
    int64_t pid;                 /* only this process (and nothing else); -1: all */
    uint64_t max_range_len;      /* bytes; 0 → 1 MiB */
    /* When no mapping of the binary has been seen at all (perf-script text
     * without mmap lines), take addresses as link-time addresses if they fall
     * in a PT_LOAD, like llvm-profgen's preferred-base fallback. */
    bool assume_unrelocated_without_mmap;
} pk_agg_opts;

typedef struct pk_agg pk_agg;

pk_agg *pk_agg_new(const pk_agg_target *target, const pk_agg_opts *opts, pk_err *err);
void pk_agg_free(pk_agg *a);

/* Event handlers, in recording order. Each returns 0 or -1 (OOM). A sample
 * counts pk_sample_weight(s) times. */
int pk_agg_on_mmap(pk_agg *a, const pk_mmap_event *m, pk_err *err);
int pk_agg_on_comm(pk_agg *a, const pk_comm_event *c, pk_err *err);
int pk_agg_on_task(pk_agg *a, const pk_task_event *t, pk_err *err);
int pk_agg_on_build_id(pk_agg *a, const pk_build_id_event *b, pk_err *err);
int pk_agg_on_sample(pk_agg *a, const pk_sample *s, pk_err *err);
/* Like pk_agg_on_sample for the statistics, but instead of adding the
 * sample's ranges and branches to the profile, writes its LBR entries
 * translated (link-time vaddrs or PK_AGG_EXTERNAL, flags 0; up to the first
 * unused slot) into lbr_out, which holds s->branch_nr entries. *nlbr_out is
 * 0 for a sample the aggregator skips (another pid, no branch stack). The
 * context-sensitive path uses it: its counts come from the unwinder. */
int pk_agg_count_sample(pk_agg *a, const pk_sample *s, pk_branch *lbr_out, size_t *nlbr_out, pk_err *err);
/* Adds entries translated by pk_agg_count_sample to the flat branch and
 * range counts, `weight` times (the sample's pk_sample_weight; statistics
 * untouched: that call counted them): for a sample the unwinder cannot
 * walk (no user frames in its stack). */
int pk_agg_add_translated(pk_agg *a, const pk_branch *lbr, size_t n, uint64_t weight, pk_err *err);

/* Fills callbacks that feed the aggregator (errors go into *err; they take
 * sample weights). */
void pk_agg_callbacks(pk_agg *a, pk_err *err, pk_perf_callbacks *cb);

/* Translates a runtime address of process pid to a link-time vaddr of the
 * target, or PK_AGG_EXTERNAL. Exposed for tests and for the unwinder. */
uint64_t pk_agg_translate(pk_agg *a, uint32_t pid, uint64_t ip);
/* The user frames of a perf callchain (the entries after PERF_CONTEXT_USER,
 * or all of them without context markers) translated into out (room for n);
 * returns how many. */
size_t pk_agg_translate_user_chain(pk_agg *a, uint32_t pid, const uint8_t *chain, uint64_t n, uint64_t *out);

/* The counts so far (owned by the aggregator). */
pk_rawprof *pk_agg_profile(pk_agg *a);
/* Moves the counts out; the aggregator keeps an empty profile. */
int pk_agg_take_profile(pk_agg *a, pk_rawprof *out, pk_err *err);

#endif

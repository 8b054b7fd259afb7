/* perf_data.h — reading and writing perf.data, and reading `perf script` text.
 *
 * A perf.data file (file mode or pipe mode, optionally zstd-compressed) is read
 * once, front to back, and each record is handed to a callback, as perf's own
 * session does. Memory does not grow with the file: records are decoded in
 * place from the mmapped file (or from a bounded decompression window), and the
 * pointers inside an event are valid only during the callback.
 *
 * The writer emits what `pgokit record` produces: one attr, COMM / MMAP2 /
 * FORK / EXIT / SAMPLE records, the BUILD_ID and BRANCH_STACK features. perf,
 * llvm-profgen and create_llvm_prof read its files.
 *
 * Layout references: ../shared/research/perf-data-inference-libs.md §1–2.
 */
#ifndef PK_PERF_DATA_H
#define PK_PERF_DATA_H

#include "common/pk_common.h"

/* ---- constants from the kernel ABI (uapi/linux/perf_event.h) ---- */
enum {
    PK_SAMPLE_IP = 1u << 0, PK_SAMPLE_TID = 1u << 1, PK_SAMPLE_TIME = 1u << 2,
    PK_SAMPLE_ADDR = 1u << 3, PK_SAMPLE_READ = 1u << 4, PK_SAMPLE_CALLCHAIN = 1u << 5,
    PK_SAMPLE_ID = 1u << 6, PK_SAMPLE_CPU = 1u << 7, PK_SAMPLE_PERIOD = 1u << 8,
    PK_SAMPLE_STREAM_ID = 1u << 9, PK_SAMPLE_RAW = 1u << 10, PK_SAMPLE_BRANCH_STACK = 1u << 11,
    PK_SAMPLE_REGS_USER = 1u << 12, PK_SAMPLE_STACK_USER = 1u << 13, PK_SAMPLE_WEIGHT = 1u << 14,
    PK_SAMPLE_DATA_SRC = 1u << 15, PK_SAMPLE_IDENTIFIER = 1u << 16,
};
enum { PK_BRANCH_USER = 1u << 0, PK_BRANCH_ANY = 1u << 3, PK_BRANCH_HW_INDEX = 1u << 17 };

/* Call-chain context markers: any entry >= PK_CONTEXT_MAX is a marker. */
#define PK_CONTEXT_HV           ((uint64_t)-32)
#define PK_CONTEXT_KERNEL       ((uint64_t)-128)
#define PK_CONTEXT_USER         ((uint64_t)-512)
#define PK_CONTEXT_GUEST        ((uint64_t)-2048)
#define PK_CONTEXT_MAX          ((uint64_t)-4095)

/* misc & 7 */
enum { PK_CPUMODE_KERNEL = 1, PK_CPUMODE_USER = 2 };

typedef struct pk_perf_attr {
    uint32_t type;
    uint64_t config;
    uint64_t sample_period;     /* or frequency when freq */
    uint64_t sample_type;       /* PK_SAMPLE_* */
    uint64_t read_format;
    uint64_t flags;             /* the bitfield word at offset 40 */
    uint64_t branch_sample_type;
    uint64_t sample_regs_user;
    uint64_t sample_regs_intr;
    uint32_t size;              /* as written in the file */
    const uint64_t *ids;        /* event ids tied to this attr */
    uint32_t nr_ids;
} pk_perf_attr;

/* One branch-stack entry: newest first in pk_sample.branches. */
typedef struct pk_branch {
    uint64_t from, to;
    uint64_t flags;             /* bit 0 mispred, 1 predicted, 4..19 cycles, 20..23 type */
} pk_branch;
#define PK_BRANCH_TYPE_MASK (0xfull << 20) /* PERF_BR_* (0: unknown) */

typedef struct pk_sample {
    const pk_perf_attr *attr;   /* the attr this sample belongs to */
    uint16_t misc;              /* cpumode = misc & 7 */
    uint32_t pid, tid;
    uint32_t cpu;
    uint64_t ip, time, addr, id, period;
    uint64_t callchain_nr;      /* entries as written: markers included, leaf first */
    const uint64_t *callchain;  /* may be unaligned in pipe mode: read with pk_ld64 */
    uint64_t branch_nr;
    const pk_branch *branches;  /* newest first; may be unaligned: read with pk_ld64 */
    uint64_t hw_idx;
    bool has_hw_idx;
    uint64_t file_offset;       /* where the record starts (in the decompressed
                                   stream for compressed files; the line
                                   number for perf script text) */
    /* perf record --call-graph dwarf: the user registers (regs_abi 0: none;
     * one value per bit of regs_mask, in bit order, may be unaligned) and
     * the copy of the user stack from the stack pointer up (stack_size
     * valid bytes: the dynamic size perf recorded, not the reserved one) */
    uint64_t regs_abi, regs_mask;
    const uint8_t *regs_user;
    uint64_t stack_size;
    const uint8_t *stack_user;
    uint64_t weight;            /* Added: how many identical samples this one
                                   stands for (a perf script repeat count); 0
                                   or 1: one. Above 1 only for callbacks that
                                   set pk_perf_callbacks.sample_weights. */
} pk_sample;
/* The number of samples s stands for. */
static inline uint64_t pk_sample_weight(const pk_sample *s) { return s->weight ? s->weight : 1; }
/* Whether the event fires on time (cpu-clock, task-clock, CPU, bus or
 * reference cycles): its samples land on code in proportion to the time it
 * takes, not to how often it runs. The low half of config names the event;
 * the upper half of a hardware event's config may carry a hybrid PMU's type. */
static inline bool pk_perf_attr_counts_time(const pk_perf_attr *a)
{
    uint32_t event = (uint32_t)a->config;
    if (a->type == 1)  /* PERF_TYPE_SOFTWARE: CPU_CLOCK, TASK_CLOCK */
        return event == 0 || event == 1;
    if (a->type == 0)  /* PERF_TYPE_HARDWARE: CPU_CYCLES, BUS_CYCLES, REF_CPU_CYCLES */
        return event == 0 || event == 6 || event == 9;
    return false;
}
/* Reader notes: without PK_SAMPLE_PERIOD in a fixed-period attr, period is
 * the attr's sample_period (as perf reports it). Samples from perf script
 * text have pid/tid/time 0, period 1, a callchain without context markers
 * and ip 0 when the LBR-only line carried no ip. */

typedef struct pk_mmap_event {
    bool is_mmap2;
    uint16_t misc;
    uint32_t pid, tid;
    uint64_t addr, len, pgoff;
    /* MMAP2 inode flavour */
    uint32_t maj, min;
    uint64_t ino, ino_generation;
    uint32_t prot, flags;
    /* MMAP2 build-id flavour (misc & PK_MISC_MMAP_BUILD_ID) */
    bool has_build_id;
    uint8_t build_id_size;
    uint8_t build_id[20];
    const char *filename;
    uint64_t time;              /* from the sample_id trailer, 0 if absent */
} pk_mmap_event;

enum { PK_MISC_COMM_EXEC = 1u << 13, PK_MISC_MMAP_BUILD_ID = 1u << 14 };

typedef struct pk_comm_event {
    uint32_t pid, tid;
    bool exec;                  /* misc & PK_MISC_COMM_EXEC */
    const char *comm;
    uint64_t time;
} pk_comm_event;

typedef struct pk_task_event {  /* FORK and EXIT */
    bool is_fork;
    uint32_t pid, ppid, tid, ptid;
    uint64_t time;
} pk_task_event;

/* A build-id from the BUILD_ID feature or a HEADER_BUILD_ID record. */
typedef struct pk_build_id_event {
    int32_t pid;
    uint16_t misc;
    uint8_t size;               /* 20 for SHA-1 */
    uint8_t build_id[20];
    const char *filename;
} pk_build_id_event;

/* Callbacks: any may be NULL; zero-initialise the struct (fields get added).
 * A non-zero return stops reading and is returned by pk_perf_read (the
 * callback sets err itself if it wants a message). In file mode, build_id
 * callbacks (from the BUILD_ID feature) come before any record. */
typedef struct pk_perf_callbacks {
    void *ctx;
    int (*attr)(void *ctx, const pk_perf_attr *attr);
    int (*sample)(void *ctx, const pk_sample *s);
    int (*mmap)(void *ctx, const pk_mmap_event *m);
    int (*comm)(void *ctx, const pk_comm_event *c);
    int (*task)(void *ctx, const pk_task_event *t);
    int (*build_id)(void *ctx, const pk_build_id_event *b);
    /* Added: every feature section (file mode: before any record, after the
     * build-ids; pipe mode: each HEADER_FEATURE record), raw payload. */
    int (*feature)(void *ctx, uint32_t id, const void *data, uint64_t size);
    /* Added: the sample callback counts a sample pk_sample_weight(s) times.
     * Without it, a sample standing for N identical ones is handed over N
     * times: a 1e9 repeat count in a tiny perf script file is 1e9 calls. */
    bool sample_weights;
    /* Added, perf script text only: keep only the samples whose event field
     * (perf's "event:" word, e.g. "br_inst_retired.near_taken:upp:") names
     * one of these (without its last ':'); samples without an event field
     * are kept (llvm-profgen's --perf-event). nevents 0: every sample. */
    const char *const *events;
    size_t nevents;
} pk_perf_callbacks;

typedef struct pk_perf_stats {
    uint64_t records;           /* every record seen, including skipped ones */
    uint64_t samples;
    uint64_t mmaps, comms, forks, exits;
    uint64_t lost_events;       /* sum of LOST / LOST_SAMPLES counts */
    uint64_t skipped_records;   /* types we do not interpret */
    uint64_t compressed_bytes, decompressed_bytes;
    bool pipe_mode, compressed;
    /* Added: */
    uint64_t features[4];       /* feature bitmap (file mode: header; pipe: seen) */
    uint32_t nr_attrs;
    uint64_t data_offset, data_size; /* file mode data section */
    uint64_t finished_rounds;
    uint64_t branch_entries, callchain_entries;
    /* Pipe mode: 1-7 bytes after the last record (no record header fits:
     * a writer stopped mid-record, or padding) are ignored, as perf ignores
     * them; how many and where, for a warning. */
    uint64_t tail_bytes, tail_offset;
    /* Added: records are handed over in time order (see pk_perf_read).
     * unordered_events: records older than ones already handed over (their
     * round had ended: a writer that broke perf's promise), delivered late;
     * max_queued_bytes: the most record bytes held back at once. */
    uint64_t unordered_events;
    uint64_t max_queued_bytes;
} pk_perf_stats;

/* Added: "build_id", "hostname", ... for a feature id; NULL when unknown. */
const char *pk_perf_feature_name(uint32_t id);
/* Added: the feature ids (perf's HEADER_* numbers) that pgokit reads or writes. */
enum {
    PK_FEAT_BUILD_ID = 2, PK_FEAT_HOSTNAME = 3, PK_FEAT_OSRELEASE = 4, PK_FEAT_ARCH = 6,
    PK_FEAT_CMDLINE = 11, PK_FEAT_BRANCH_STACK = 15, PK_FEAT_COMPRESSED = 27,
};
/* Added: the string of a string feature's payload (u32 length, then the
 * NUL-padded string: hostname, arch, ...), its length without the padding
 * in *len; NULL when the payload is too short to hold one. */
const char *pk_perf_feature_string(const void *data, uint64_t size, size_t *len);

/* A one-line warning about what the reader ignored (a pipe-mode tail): 0
 * and buf[0] = 0 when nothing, else the length written (truncated to cap). */
int pk_perf_stats_warning(const pk_perf_stats *st, char *buf, size_t cap);

/* Reads a perf.data file; path "-" reads standard input (pipe mode). Streams:
 * a compressed file is decompressed through a bounded window. Returns 0 or -1
 * with err naming the file and byte offset of the problem.
 *
 * SAMPLE, MMAP, MMAP2, COMM, FORK and EXIT records are handed over in time
 * order, as perf's ordered events do: they are held back until the
 * FINISHED_ROUND after the one they were written in (or the end of the
 * input), so a sample never comes before the mapping or exec that precedes
 * it in time. Equal times keep file order; records without a time (no
 * PERF_SAMPLE_TIME, or no sample_id_all on non-sample records) are handed
 * over as they are read. Memory held back: about two rounds, at most 64 MiB. */
int pk_perf_read(const char *path, const pk_perf_callbacks *cb, pk_perf_stats *stats, pk_err *err);
/* Same, from an open descriptor (file or pipe); `name` is for messages. */
int pk_perf_read_fd(int fd, const char *name, const pk_perf_callbacks *cb, pk_perf_stats *stats, pk_err *err);
/* Same, over a whole file already in memory (file or pipe layout); `name`
 * is for messages. */
int pk_perf_read_mem(const void *data, size_t size, const char *name, const pk_perf_callbacks *cb,
                     pk_perf_stats *stats, pk_err *err);

/* ---- writer ----
 * Not thread-safe: threads sharing one writer must serialise every call
 * (pk_perf_write_*, close, abort) with their own lock. Records are written in
 * call order; FINISHED_ROUND markers are inserted every 4096 records, so
 * callers should write each thread's records in time order. A call chain too
 * long for a 64 KiB record keeps its leaf-most entries. */
typedef struct pk_perf_writer pk_perf_writer;

typedef struct pk_perf_writer_opts {
    uint32_t event_type;        /* default 0 (HARDWARE); with config 0 shows as cycles */
    uint64_t event_config;
    uint64_t sample_period;
    bool callchain;             /* PK_SAMPLE_CALLCHAIN */
    bool branch_stack;          /* PK_SAMPLE_BRANCH_STACK, branch_sample_type USER|ANY */
    bool hw_idx;                /* write the hw_idx word (PK_BRANCH_HW_INDEX) */
    bool cpu;                   /* PK_SAMPLE_CPU */
    const char *hostname, *os_release, *cmdline; /* optional string features */
    /* Added: HEADER_ARCH, uname's machine ("aarch64"): perf reads a file
     * without it as the host's architecture, so a recording of another
     * architecture's program must say so. NULL: no feature. */
    const char *arch;
} pk_perf_writer_opts;

/* Creates "<path>.tmp.<pid>"; the final name appears only on successful close. */
pk_perf_writer *pk_perf_writer_open(const char *path, const pk_perf_writer_opts *opts, pk_err *err);
int pk_perf_write_comm(pk_perf_writer *w, const pk_comm_event *c, pk_err *err);
/* Writes MMAP2 (build-id flavour when m->has_build_id); remembers the build-id
 * for the BUILD_ID feature. */
int pk_perf_write_mmap(pk_perf_writer *w, const pk_mmap_event *m, pk_err *err);
int pk_perf_write_task(pk_perf_writer *w, const pk_task_event *t, pk_err *err);
/* Uses s->ip, pid, tid, time, cpu, period (0 → opts.sample_period), callchain,
 * branches (newest first), hw_idx. */
int pk_perf_write_sample(pk_perf_writer *w, const pk_sample *s, pk_err *err);
int pk_perf_write_lost(pk_perf_writer *w, uint64_t lost, pk_err *err);
/* Writes the feature sections, patches the header, renames into place, frees w. */
int pk_perf_writer_close(pk_perf_writer *w, pk_err *err);
/* Discards everything written; frees w. */
void pk_perf_writer_abort(pk_perf_writer *w);

/* Writes the perf.data file at path onto fd in pipe mode, as `perf record
 * -o -` streams it (perf script -i - and pgokit's readers take it): for
 * `pgokit record -o -`. out_name names fd in messages. */
int pk_perf_file_to_pipe(const char *path, int fd, const char *out_name, pk_err *err);

/* ---- `perf script` text (the forms llvm-profgen accepts, and perf's own) ----
 * LBR-only: one line per sample with "0xFROM/0xTO/..." entries.
 * Stack + LBR: call-stack lines (one address per line, leaf first) followed by
 * one LBR line, blocks separated by blank lines. Also PERF_RECORD_MMAP2 lines
 * (from `perf script --show-mmap-events`). Leading spaces and event-name
 * padding are tolerated; malformed lines are an error naming line and column.
 * A bare decimal number at column 1 counts the next sample that many times
 * (llvm-profgen's aggregated scripts): one callback with weight N when the
 * callbacks take weights (sample_weights), else N callbacks.
 * perf's other fields are read where they help: a sample header line (comm,
 * pid[/tid], time, event) gives the sample's pid, "(dso)" after a call-chain
 * address or a branch address names its file.
 *
 * Call-chain addresses come out absolute (runtime addresses, as in perf.data)
 * whether the text prints them absolute or, like perf 6.1, relative to their
 * file: the mmap lines place them back (see script_frames.h). Without a pid
 * in the text, samples have pid 0 and every process's mappings are used. */
typedef struct pk_script_stats {
    uint64_t lines, samples, mmaps;
    uint64_t frames;            /* call-chain entries read */
    uint64_t frames_rebased;    /* file-relative entries made absolute */
    uint64_t frames_guessed;    /* of those, entries that fit several mapped files (the
                                   line names none): placed in the file the sample's
                                   branches ran in, else the neighbouring frame's */
    uint64_t frames_guessed_lbr;/* of those, placed by the sample's branches */
    uint64_t frames_unplaced;   /* relative entries whose file has no mmap line (or the
                                   text none at all): left as read, outside every binary */
    uint64_t frames_unmapped;   /* entries in no mapping at all (perf's "[unknown]"):
                                   left as read, as a perf.data reader sees them too */
    bool relative;              /* some call chains were file-relative (perf 6.1) */
    /* Lines that are not perf script (a wrapper's banner, a comment, a
     * damaged line) are skipped and counted, with the sample whose stack
     * they interrupt; the input is refused only when no sample remains. */
    uint64_t lines_skipped, samples_skipped;
    char first_skipped[256];    /* "line N, column C: why" of the first one */
    /* with an event filter: samples of other events (dropped), samples
     * without an event field (kept) */
    uint64_t samples_other_event, samples_no_event;
} pk_script_stats;

int pk_perf_script_read(const char *path, const pk_perf_callbacks *cb, pk_script_stats *stats, pk_err *err);
/* Same over text already in memory; `name` is for messages. */
int pk_perf_script_read_mem(const void *data, size_t size, const char *name, const pk_perf_callbacks *cb,
                            pk_script_stats *stats, pk_err *err);

/* A one-line warning when call-chain entries were guessed or could not be
 * placed (what, how many, why, what to do): 0 and buf[0] = 0 when there is
 * nothing to warn about, else the length written (truncated to cap). */
int pk_script_stats_warning(const pk_script_stats *st, char *buf, size_t cap);

#endif

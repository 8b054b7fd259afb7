/* temporal.h — temporal profiles: raw profiles written by the pgokit runtime
 * (rt/), their offline correlation with the binary, and the *indexed temporal
 * profile* that `pgokit merge --temporal` writes and `pgokit order` (src/layout/)
 * reads.
 *
 * ---- For readers (Balanced Partitioning, `pgokit order`) ----
 *
 *     pk_temporal_profile p;
 *     pk_err err;
 *     if (pk_temporal_load(&p, "app.pgotemporal", &err) != 0) fail(err.msg);
 *     for (uint64_t t = 0; t < p.num_traces; t++) {
 *         const pk_temporal_trace *tr = &p.traces[t];
 *         for (uint32_t i = 0; i < tr->len; i++) {
 *             const pk_temporal_func *f = &p.funcs[tr->funcs[i]];
 *             // f->symbol: ELF symbol name (what an lld ordering file wants)
 *             // f->name:   unique name, "file.c:sym" for local (static) symbols
 *         }
 *     }
 *     pk_temporal_free(&p);
 *
 * A trace is one run of the program (one raw profile): the functions it
 * executed, each once, in first-execution order. Traces were kept by reservoir
 * sampling (at most reservoir_size of traces_seen runs), each truncated to
 * max_trace_len. funcs[] holds every function covered by at least one merged
 * run (even if the sampled traces no longer mention it), with its coverage
 * (number of runs that executed it) and, when the runs were recorded in
 * counting mode, its summed entry count (runs recorded in trace mode add
 * coverage and order but no counts; PK_TEMPORAL_HAS_COUNTS says whether any
 * counting-mode run was merged).
 *
 * ---- Names ----
 * Functions are named like LLVM's PGO names: a global symbol is its own name;
 * a local symbol (STB_LOCAL, e.g. a C `static`) is "<file>:<symbol>", <file>
 * being the basename of the source file from the preceding STT_FILE symbol of
 * .symtab (so two `static helper` in a.c and b.c stay distinct: "a.c:helper",
 * "b.c:helper"). `symbol` always points at the bare ELF symbol.
 *
 * ---- File formats (all little-endian) ----
 * Raw profile (runtime output, rt/pgokit_rt.c), version PK_TEMPORAL_RAW_VERSION:
 *   0  char  magic[8] = "PGOKRAW\n"
 *   8  u32   version
 *  12  u32   flags        PK_TEMPORAL_RAW_COUNTS | PK_TEMPORAL_RAW_OVERFLOW
 *  16  u64   total_size   byte length of the whole file (truncation check)
 *  24  u64   checksum     FNV-1a 64 of the whole file with this field zeroed
 *  32  u64   pid
 *  40  u32   num_modules
 *  44  u32   redirected   caller call sites retargeted past hooks (informational)
 *  48  u64   num_records
 *  56  u64   dropped      functions not recorded (table full)
 *  64  modules: num_modules × { u32 build_id_len, u32 path_len, u64 load_bias,
 *                                build_id bytes, path bytes, zero pad to 8 }
 *      records: num_records × { u64 addr, u32 module, u32 reserved, u64 count }
 *      in first-execution order; addr = link-time address (runtime address −
 *      load bias) of the hook call's return address − 5: the start of a 5-byte
 *      `call __fentry__`, or a byte inside gcc's 6-byte forms, always within
 *      the function's entry; count = entries (counting mode) or 1. A record
 *      whose address fell in no module has module = UINT32_MAX.
 * Module 0 is the main executable.
 *
 * Indexed temporal profile, version PK_TEMPORAL_INDEXED_VERSION:
 *   0  char  magic[8] = "PGOKTMP\n"
 *   8  u32   version
 *  12  u32   flags        PK_TEMPORAL_HAS_COUNTS
 *  16  u64   total_size
 *  24  u64   checksum     FNV-1a 64 of the whole file with this field zeroed
 *  32  u64   num_funcs
 *  40  u64   num_traces
 *  48  u64   traces_seen
 *  56  u64   reservoir_size
 *  64  u64   max_trace_len
 *  72  u64   num_runs
 *  80  u32   build_id_len (≤ 64)
 *  84  u32   reserved
 *  88  u8    build_id[64]
 * 152  u64   strtab_size
 * 160  funcs: num_funcs × { u64 addr, u64 size, u64 entry_count, u64 covered_runs,
 *                           u32 name_off, u32 name_len, u32 symbol_start, u32 flags }
 *      traces: num_traces × { u64 weight, u32 len, u32 reserved, len × u32 func, pad to 8 }
 *      strtab: strtab_size bytes (names, each NUL-terminated)
 */
#ifndef PK_TEMPORAL_H
#define PK_TEMPORAL_H

#include "common/pk_common.h"
#include "binary/binary.h"

#define PK_TEMPORAL_RAW_MAGIC "PGOKRAW\n"
#define PK_TEMPORAL_RAW_VERSION 1u
#define PK_TEMPORAL_RAW_HEADER_SIZE 64u
#define PK_TEMPORAL_RAW_COUNTS 1u    /* counting mode: every entry counted */
#define PK_TEMPORAL_RAW_OVERFLOW 2u  /* the runtime's table filled up */

#define PK_TEMPORAL_INDEXED_MAGIC "PGOKTMP\n"
#define PK_TEMPORAL_INDEXED_VERSION 1u
#define PK_TEMPORAL_INDEXED_HEADER_SIZE 160u
#define PK_TEMPORAL_HAS_COUNTS 1u    /* entry counts come from counting-mode runs */

#define PK_TEMPORAL_DEFAULT_RESERVOIR 100u
#define PK_TEMPORAL_DEFAULT_MAX_TRACE_LEN 10000u
#define PK_TEMPORAL_BUILD_ID_MAX 64u

#define PK_TEMPORAL_FUNC_LOCAL 1u    /* local (static) symbol: name is "file:symbol" */

/* ======================= indexed temporal profile ======================= */

typedef struct pk_temporal_func {
    const char *name;      /* unique name ("sym" or "file.c:sym"), NUL-terminated */
    const char *symbol;    /* bare ELF symbol (points inside name) */
    uint64_t addr;         /* link-time address in the profiled binary */
    uint64_t size;         /* symbol size (0 if unknown) */
    uint64_t entry_count;  /* summed over counting-mode runs (0 otherwise) */
    uint64_t covered_runs; /* runs that executed the function at least once */
    uint32_t flags;        /* PK_TEMPORAL_FUNC_* */
} pk_temporal_func;

typedef struct pk_temporal_trace {
    uint64_t weight;       /* 1 per run unless merged with weights */
    uint32_t len;
    uint32_t *funcs;       /* indexes into pk_temporal_profile.funcs, first-execution order */
} pk_temporal_trace;

typedef struct pk_temporal_profile {
    uint32_t flags;              /* PK_TEMPORAL_HAS_COUNTS */
    uint32_t build_id_len;
    uint8_t build_id[PK_TEMPORAL_BUILD_ID_MAX];
    uint64_t num_funcs;
    pk_temporal_func *funcs;
    uint64_t num_traces;
    pk_temporal_trace *traces;
    uint64_t traces_seen;        /* runs offered to the reservoir */
    uint64_t num_runs;           /* raw profiles merged (coverage denominator) */
    uint64_t reservoir_size;
    uint64_t max_trace_len;
    /* private: */
    void *arena;                 /* name storage (never moves) */
    char *image;                 /* loaded file's strings */
    uint64_t funcs_cap, traces_cap;
    uint64_t rng;                /* reservoir RNG state (fixed seed) */
    pk_u64map name_index;        /* name hash → func index (collisions: rehash) */
} pk_temporal_profile;

/* Loads an indexed temporal profile. Errors name the file and byte offset. */
int pk_temporal_load(pk_temporal_profile *p, const char *path, pk_err *err);
/* Same from memory (path is only used in messages). */
int pk_temporal_parse(pk_temporal_profile *p, const uint8_t *data, size_t size,
                      const char *path, pk_err *err);
void pk_temporal_free(pk_temporal_profile *p);

/* True when the file starts with the raw or indexed magic (cheap: reads 8 bytes). */
bool pk_temporal_is_profile(const char *path);
bool pk_temporal_is_raw(const char *path);

/* ---- building (merge; also handy for tests of src/layout/) ---- */
/* An empty profile with the given limits (0 = defaults). */
void pk_temporal_init(pk_temporal_profile *p, uint64_t reservoir_size, uint64_t max_trace_len);
/* Index of the function with this unique name, adding it if absent
 * (addr/size/flags are kept from the first addition); -1 on OOM. */
int64_t pk_temporal_intern(pk_temporal_profile *p, const char *name, const char *symbol,
                           uint64_t addr, uint64_t size, uint32_t flags, pk_err *err);
/* Offers one run's trace to the reservoir (Vitter's algorithm R, fixed-seed
 * RNG: the same sequence of calls gives the same profile). The trace is
 * truncated to max_trace_len; an empty trace is ignored. Does not touch
 * coverage or counts (the caller updates funcs[]). */
int pk_temporal_add_trace(pk_temporal_profile *p, const uint32_t *funcs, uint32_t len,
                          uint64_t weight, pk_err *err);
/* Merges another indexed profile into p (functions matched by unique name,
 * counts and coverage added, reservoirs merged as if src's runs had been
 * offered one by one). Refuses a different non-empty build-id. */
int pk_temporal_merge(pk_temporal_profile *p, const pk_temporal_profile *src, pk_err *err);
/* Writes p (atomically, through pk_out_file). */
int pk_temporal_write(const pk_temporal_profile *p, const char *path, pk_err *err);

/* ============================ raw profiles ============================ */

typedef struct pk_temporal_raw_module {
    const uint8_t *build_id;
    uint32_t build_id_len;
    const char *path;        /* not NUL-terminated: path_len bytes */
    uint32_t path_len;
    uint64_t load_bias;
} pk_temporal_raw_module;

typedef struct pk_temporal_raw_record {
    uint64_t addr;           /* link-time address of the entry call site */
    uint32_t module;         /* index into modules, UINT32_MAX = unknown */
    uint64_t count;
} pk_temporal_raw_record;

typedef struct pk_temporal_raw {
    pk_mapped_file file;
    uint32_t version, flags;
    uint64_t pid, dropped;
    uint32_t redirected;     /* informational: call sites retargeted by the runtime */
    uint32_t num_modules;
    pk_temporal_raw_module *modules;
    uint64_t num_records;
    const uint8_t *records;  /* raw bytes; read with pk_temporal_raw_record_at */
} pk_temporal_raw;

/* Opens and fully validates (magic, version, length, checksum, bounds) a raw profile. */
int pk_temporal_raw_open(pk_temporal_raw *r, const char *path, pk_err *err);
/* Same over bytes in memory (they must outlive r); `name` is for messages. */
int pk_temporal_raw_open_mem(pk_temporal_raw *r, const void *data, size_t size, const char *name, pk_err *err);
void pk_temporal_raw_close(pk_temporal_raw *r);
pk_temporal_raw_record pk_temporal_raw_record_at(const pk_temporal_raw *r, uint64_t i);

/* FNV-1a 64 over a buffer, skipping the 8-byte checksum field at offset 24. */
uint64_t pk_temporal_checksum(const uint8_t *data, size_t size);

/* ============================ correlation ============================ */

/* Function symbols of one ELF binary, sorted by address, with unique names. */
typedef struct pk_temporal_symtab {
    uint8_t build_id[PK_TEMPORAL_BUILD_ID_MAX];
    uint32_t build_id_len;
    uint64_t num_syms;
    struct pk_temporal_sym {
        uint64_t addr, size;
        const char *name;    /* unique name, owned by strtab */
        const char *symbol;
        uint32_t flags;
    } *syms;
    char *strtab;
    size_t strtab_len;
} pk_temporal_symtab;

/* Reads .symtab (falls back to .dynsym) and the GNU build-id note of an ELF file. */
int pk_temporal_symtab_load(pk_temporal_symtab *s, const char *elf_path, pk_err *err);
/* The same with the binary's debug information found as `debug` says (a
 * fully stripped binary's symbols come from its debug file); debug_origin
 * (may be NULL) gets which debug file was used. */
int pk_temporal_symtab_load_opts(pk_temporal_symtab *s, const char *elf_path, const pk_debug_opts *debug,
                                 char *debug_origin, size_t debug_origin_size, pk_err *err);
void pk_temporal_symtab_free(pk_temporal_symtab *s);
/* The function containing addr (an entry-hook call site may sit a few bytes
 * after the symbol, e.g. behind endbr64), or NULL. */
const struct pk_temporal_sym *pk_temporal_symtab_lookup(const pk_temporal_symtab *s, uint64_t addr);

typedef struct pk_temporal_correlate_stats {
    uint64_t records;        /* records of the selected module */
    uint64_t unresolved;     /* addresses outside every function symbol */
    uint64_t other_modules;  /* records of other modules (ignored) */
} pk_temporal_correlate_stats;

/* Adds one raw profile to p: picks the module whose build-id equals the
 * symtab's (refusing the file with a clear error if none does — a build-id
 * mismatch), maps every record to a function, offers the run's trace to the
 * reservoir, and adds coverage and (counting mode) entry counts. On error p is
 * unchanged. */
int pk_temporal_add_raw(pk_temporal_profile *p, const pk_temporal_raw *raw,
                        const pk_temporal_symtab *syms, uint64_t weight,
                        pk_temporal_correlate_stats *stats, pk_err *err);

#endif

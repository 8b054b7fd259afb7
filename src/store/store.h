/* store.h — the profile store: raw profiles of many hosts as rows of a SQL
 * database, merged by the engine.
 *
 * Each `add` is one upload: a raw profile (the map step reduced the samples
 * to it on the host: symbol-free, keyed by build-id; version 1, flat, or
 * version 2, per calling context with IP observations as recorded) plus
 * metadata (binary name, host, job, time), inserted in one transaction as
 *   profiles(id, content_hash, build_id, bin_name, path, preferred_base,
 *            host, job, ts, added, samples, nranges, nbranches, bid,
 *            raw_version, ncontexts, nstacked, nip)
 *   contexts(bid, ckey, addrs)       calling contexts, shared by the uploads
 *                                    of a build-id: addrs the address list
 *                                    (call sites outermost first, then the
 *                                    leaf function's entry; offsets from the
 *                                    base, decimal, comma-separated), ckey a
 *                                    64-bit hash of it (never 0)
 *   ranges(profile_id, bid, ctx, a, b, n)    fall-through ranges, offsets
 *   branches(profile_id, bid, ctx, a, b, n)  taken branches (source -1: external)
 *   ip_hits(profile_id, bid, ctx, a, n)      IP samples with the leaf at a
 *   ip_calls(profile_id, bid, ctx, a, b, n)  call site a in context ctx to callee entry b
 *   ip_unplaced(profile_id, bid, a, b, n)    hits at b in the function at a, caller unknown
 *   stats(profile_id, bid, k, v)     nonzero statistics words: k < 1000
 *                                    pk_agg_stats, 1000 + i pk_unwind_stats,
 *                                    2000 + i pk_ip_stats, 3000 + bit: the
 *                                    raw profile's flag bit is set (v = 1)
 * ctx is a context's ckey, 0 for the flat (empty) context. ncontexts: the
 * upload's contexts; nstacked: those with a call site plus its IP call
 * observations (what shows call stacks: CSSPGO can be made); nip: its IP
 * observation rows. bid is the
 * build-id key (store_int.h): the count tables and contexts can be
 * hash-partitioned on it, over several servers
 * (scripts/store_shard_setup.sql), and a pull reads only the rows of its key.
 * An upload whose content hash (the profile's counts and statistics, host
 * and job) is already stored adds nothing, so a retried upload is harmless.
 * `pull` merges every profile of one build-id in the engine (GROUP BY ctx,
 * a, b with SUM(n) over the rows of that key and those profiles, streamed
 * out) and writes the raw profile that merging the uploads as files would
 * write, byte for byte (version 1 when every upload was version 1, as
 * `pgokit merge` writes; else version 2). Nothing is inferred in the store:
 * IP observations are inferred by profgen, once, on the merged sum.
 *
 * The target is a file path (SQLite) or a postgresql:// (postgres://)
 * connection string (PostgreSQL). The schema is versioned (schema_version
 * table); `pk_store_init` creates or migrates it, every other entry point
 * refuses a database at another version. Nothing here prints or exits.
 */
#ifndef PK_STORE_H
#define PK_STORE_H

#include "binary/binary.h"
#include "aggregate/aggregate.h"
#include "unwind/rawprof2.h"

#define PK_STORE_SCHEMA_VERSION 4

typedef struct pk_store pk_store;

/* Opens (create: for init, making an SQLite file if absent). Without create
 * the schema must be at PK_STORE_SCHEMA_VERSION. */
int pk_store_open(pk_store **out, const char *target, bool create, pk_err *err);
void pk_store_close(pk_store *s);
const char *pk_store_engine(const pk_store *s);
/* Creates or migrates the schema; *from and *to: versions before and after. */
int pk_store_init(pk_store *s, int *from, int *to, pk_err *err);
/* Bytes the database occupies, -1 when unknown. */
int64_t pk_store_size(pk_store *s);

/* ---- the map step: inputs → one raw profile ----
 * Inputs are perf.data, perf-script text, pprof or raw profiles (told apart
 * by content). With a binary, everything goes through pk_pipeline_run
 * (which checks build-ids) and comes out as a version-2 raw profile (calling
 * contexts when the samples have stacks, IP observations not inferred); raw
 * profiles alone need none (version-1 ones stay flat: the warning callback
 * says so once). build_id (hex, NULL: any) is the build-id the result must
 * have. */
int pk_store_reduce(const char *binary, const char *build_id, const char *const *inputs, size_t n,
                    pk_rawprof2 *out, pk_err *err);
/* Same, with a callback for inputs that had nothing usable while others
 * did (the pipeline's warnings; NULL: dropped), where the binary's debug
 * information is (NULL: the default search; a fully stripped binary needs
 * its symbols) and, if debug_origin is not NULL, which debug file was used
 * ("" when no binary was opened). */
int pk_store_reduce_warn(const char *binary, const char *build_id, const char *const *inputs, size_t n,
                         void (*warning)(void *ctx, const char *msg), void *ctx, const pk_debug_opts *debug,
                         char *debug_origin, size_t debug_origin_size, pk_rawprof2 *out, pk_err *err);

/* ---- add ---- */
typedef struct pk_store_meta {
    const char *binary_name;     /* NULL: the basename of the profile's path */
    const char *host;
    const char *job;             /* may be "" */
    int64_t time;                /* seconds since the epoch */
    /* optional: called every 1,024 rows sent, and once before the commit
     * (tests kill the writer or stop the server there) */
    void (*progress)(void *ctx, uint64_t rows);
    void *cb_ctx;
} pk_store_meta;

typedef struct pk_store_add_result {
    bool duplicate;              /* the content hash was already stored: nothing added */
    int64_t id;
    char hash[33];
    char build_id[41];
    uint64_t ranges, branches, samples, rows;
    uint64_t contexts, contexts_new;     /* the upload's contexts; of those, not stored before */
    uint64_t ip;                         /* IP observation rows */
} pk_store_add_result;

int pk_store_add(pk_store *s, const pk_rawprof2 *r, const pk_store_meta *m, pk_store_add_result *res,
                 pk_err *err);
/* The same for a flat profile: stored as a version-1 upload. */
int pk_store_add_flat(pk_store *s, const pk_rawprof *r, const pk_store_meta *m, pk_store_add_result *res,
                      pk_err *err);

/* ---- list, select ---- */
/* What `profgen` can make of a revision's pull. */
enum {
    PK_STORE_KIND_AUTOFDO = 1,   /* line-based AutoFDO (clang, gcc): some range, branch or IP sample counted */
    PK_STORE_KIND_PROBE = 2,     /* probe-based, from the same counts, if the binary has pseudo-probes
                                  * (the store cannot tell: it keeps no binary) */
    PK_STORE_KIND_CSSPGO = 4,    /* context-sensitive: some calling context with a call site stored */
    PK_STORE_KIND_IP = 8,        /* not a kind: the counts include IP samples (inferred by profgen) */
};

typedef struct pk_store_rev {
    char binary[256];
    char build_id[41];
    uint64_t profiles, hosts, samples;
    int64_t first, last;         /* earliest and latest profile time */
    uint64_t ranges, branches;   /* distinct ranges and branches, summed over the profiles */
    uint64_t stacked;            /* contexts with a call site and IP call observations, summed */
    uint64_t ip;                 /* IP observation rows, summed over the profiles */
    uint64_t v1;                 /* uploads that were version-1 (flat) raw profiles */
    unsigned kinds;              /* PK_STORE_KIND_*: what a pull of it can make */
    const char *no_csspgo;       /* why not CSSPGO (static text), NULL when it can */
} pk_store_rev;

/* Every (binary, build-id), binaries by name, newest revision first, with
 * the kinds of profile a pull of it can make. */
int pk_store_list(pk_store *s, pk_store_rev **out, size_t *n, pk_err *err);
/* The revisions of `binary` with profiles since `since`, and which one the
 * AutoFDO rule picks: the most recent (latest first profile) with at least
 * threshold (0..1) of the samples of the most-sampled one. *chosen indexes
 * out. Error when there is none. */
int pk_store_select(pk_store *s, const char *binary, int64_t since, double threshold, pk_store_rev **out,
                    size_t *n, size_t *chosen, pk_err *err);

/* ---- pull, prune ---- */
typedef struct pk_store_filter {
    const char *build_id;        /* hex */
    int64_t since;               /* INT64_MIN: all */
    const char *job;             /* NULL: all */
} pk_store_filter;

typedef struct pk_store_pull_result {
    uint64_t profiles, ranges, branches;   /* ranges and branches: flat and per context */
    uint64_t contexts, ip;                 /* contexts; IP observations (hits, calls, unplaced) */
    uint32_t version;                      /* of the raw profile written */
} pk_store_pull_result;

/* Merges in the engine and writes the raw profile to out_path (atomically;
 * nothing is written when no profile matches). */
int pk_store_pull(pk_store *s, const pk_store_filter *f, const char *out_path, pk_store_pull_result *res,
                  pk_err *err);
/* Deletes the profiles older than `before`, in one transaction. */
int pk_store_prune(pk_store *s, int64_t before, uint64_t *profiles, uint64_t *rows, pk_err *err);

/* ---- times ----
 * "1700000000" (epoch seconds), "2026-11-24", "2026-11-24T22:50:00[Z]",
 * "2026-11-24 22:50:00" (UTC), or a duration before now: "90s", "30m",
 * "12h", "14d", "2w". */
int pk_store_parse_time(const char *s, int64_t now, int64_t *out, pk_err *err);
/* "2026-11-24T22:50:00Z" */
void pk_store_format_time(int64_t t, char *out, size_t cap);

#endif

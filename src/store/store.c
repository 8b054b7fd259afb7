/* store.c — the profile store: connection, schema and migrations, add,
 * prune (list, select and pull are in store_query.c, the map step and times
 * in store_map.c). */
#include "store/store_int.h"

#include "common/md5.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

/* ---- connection ---- */

/* A URI, or libpq's keyword/value form ("host=h dbname=d ...") when no file
 * has that name. */
static bool is_pg(const char *t)
{
    if (!strncmp(t, "postgresql://", 13) || !strncmp(t, "postgres://", 11))
        return true;
    size_t k = strspn(t, " \t"), w = strspn(t + k, "abcdefghijklmnopqrstuvwxyz_");
    size_t e = k + w + strspn(t + k + w, " \t");
    struct stat st;
    return w && t[e] == '=' && stat(t, &st) != 0;
}

static int check_schema(pk_store *s, const char *target, pk_err *err);

int pk_store_open(pk_store **out, const char *target, bool create, pk_err *err)
{
    *out = NULL;
    pk_store *s = calloc(1, sizeof *s);
    if (!s)
        return pk_err_set(err, "out of memory");
    s->be = is_pg(target) ? &pk_store_pg : &pk_store_sqlite;
    if (!(s->db = s->be->open(target, create, err))) {
        free(s);
        return -1;
    }
    char *shown = pk_store_masked(target);
    if (!shown) {
        pk_store_close(s);
        return pk_err_set(err, "out of memory");
    }
    int rc = (!create && check_schema(s, shown, err)) || (s->be->ready && s->be->ready(s->db, err));
    free(shown);
    if (rc) {
        pk_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void pk_store_close(pk_store *s)
{
    if (!s)
        return;
    s->be->close(s->db);
    free(s);
}

const char *pk_store_engine(const pk_store *s) { return s->be->name; }

int64_t pk_store_size(pk_store *s)
{
    int64_t size;
    pk_err err;
    return pk_store_query_ints(s, s->be->size_sql, 0, NULL, &size, 1, &err) ? -1 : size;
}

void pk_store_rollback(pk_store *s) { s->be->exec(s->db, "ROLLBACK", NULL); }

typedef struct ints_ctx {
    int64_t *out;
    int n, rows;
} ints_ctx;

static int ints_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    ints_ctx *c = ctx;
    for (int i = 0; i < c->n && i < ncols; i++)
        c->out[i] = v[i] ? strtoll(v[i], NULL, 10) : 0;
    c->rows++;
    return 0;
}

int pk_store_query_ints(pk_store *s, const char *sql, int np, const pk_store_val *p, int64_t *out, int n,
                        pk_err *err)
{
    for (int i = 0; i < n; i++)
        out[i] = 0;
    ints_ctx c = {out, n, 0};
    return s->be->query(s->db, sql, np, p, ints_row, &c, err);
}

void pk_store_hex(char *out, const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        out[2 * i] = "0123456789abcdef"[b[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
    }
    out[2 * n] = 0;
}

int pk_store_unhex(const char *hex, uint8_t *out, uint8_t *n)
{
    size_t len = strlen(hex);
    if (!len || len % 2 || len > 40)
        return -1;
    for (size_t i = 0; i < len; i += 2) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[i + (size_t)k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        out[i / 2] = (uint8_t)v;
    }
    *n = (uint8_t)(len / 2);
    return 0;
}

/* ---- schema ----
 * Migration k takes the schema from version k-1 to k. "%ID%" is the
 * engine's auto-numbered primary key. No foreign keys: every row of an
 * upload is written in the profile's transaction, and a per-row key check
 * would double the cost of COPY. */
static const char *const migration1[] = {
    "CREATE TABLE profiles (%ID%, content_hash TEXT NOT NULL UNIQUE, build_id TEXT NOT NULL, "
    "bin_name TEXT NOT NULL, path TEXT NOT NULL, preferred_base BIGINT NOT NULL, host TEXT NOT NULL, "
    "job TEXT NOT NULL, ts BIGINT NOT NULL, added BIGINT NOT NULL, samples BIGINT NOT NULL, "
    "nranges BIGINT NOT NULL, nbranches BIGINT NOT NULL)",
    "CREATE INDEX profiles_build_ts ON profiles (build_id, ts)",
    "CREATE TABLE ranges (profile_id BIGINT NOT NULL, a BIGINT NOT NULL, b BIGINT NOT NULL, n BIGINT NOT NULL)",
    "CREATE INDEX ranges_profile ON ranges (profile_id)",
    "CREATE TABLE branches (profile_id BIGINT NOT NULL, a BIGINT NOT NULL, b BIGINT NOT NULL, n BIGINT NOT NULL)",
    "CREATE INDEX branches_profile ON branches (profile_id)",
    "CREATE TABLE stats (profile_id BIGINT NOT NULL, k INTEGER NOT NULL, v BIGINT NOT NULL, "
    "PRIMARY KEY (profile_id, k))",
    NULL,
};
/* 2: `select` and `list` look profiles up by binary name and time */
static const char *const migration2[] = {
    "CREATE INDEX profiles_bin_ts ON profiles (bin_name, ts)",
    NULL,
};
/* 3: the build-id key (bid, pk_store_bid_key) on every row, so that the
 * count tables can be hash-partitioned on it across servers
 * (scripts/store_shard_setup.sql) and a pull's aggregate reads one
 * partition. Rows stored before get it from their profile (fill_bid_key).
 * The default only serves that ALTER: every writer sets the key. */
static const char *const migration3[] = {
    "ALTER TABLE profiles ADD COLUMN bid BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE ranges ADD COLUMN bid BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE branches ADD COLUMN bid BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE stats ADD COLUMN bid BIGINT NOT NULL DEFAULT 0",
    NULL,
};

/* 4: raw profiles of version 2: calling contexts as rows of their own per
 * build-id key (bid, ckey, the address list), the count rows name theirs
 * (ctx; 0 the flat context, every row stored before), IP observations in
 * three tables. The profile's raw version (every stored one was 1), its
 * contexts and IP rows serve list and pull without reading count rows.
 * contexts has no unique key: a sharded store cannot enforce one across
 * foreign partitions, so add looks a context up before inserting it and a
 * pull reads duplicates (two writers racing) as one. */
static const char *const migration4[] = {
    "ALTER TABLE profiles ADD COLUMN raw_version BIGINT NOT NULL DEFAULT 1",
    "ALTER TABLE profiles ADD COLUMN ncontexts BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE profiles ADD COLUMN nstacked BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE profiles ADD COLUMN nip BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE ranges ADD COLUMN ctx BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE branches ADD COLUMN ctx BIGINT NOT NULL DEFAULT 0",
    "CREATE TABLE contexts (bid BIGINT NOT NULL, ckey BIGINT NOT NULL, addrs TEXT NOT NULL)",
    "CREATE INDEX contexts_key ON contexts (bid, ckey)",
    "CREATE TABLE ip_hits (profile_id BIGINT NOT NULL, bid BIGINT NOT NULL, ctx BIGINT NOT NULL, "
    "a BIGINT NOT NULL, n BIGINT NOT NULL)",
    "CREATE INDEX ip_hits_profile ON ip_hits (profile_id)",
    "CREATE TABLE ip_calls (profile_id BIGINT NOT NULL, bid BIGINT NOT NULL, ctx BIGINT NOT NULL, "
    "a BIGINT NOT NULL, b BIGINT NOT NULL, n BIGINT NOT NULL)",
    "CREATE INDEX ip_calls_profile ON ip_calls (profile_id)",
    "CREATE TABLE ip_unplaced (profile_id BIGINT NOT NULL, bid BIGINT NOT NULL, a BIGINT NOT NULL, "
    "b BIGINT NOT NULL, n BIGINT NOT NULL)",
    "CREATE INDEX ip_unplaced_profile ON ip_unplaced (profile_id)",
    NULL,
};

typedef struct build_ids {
    char (*v)[41];
    size_t n, cap;
} build_ids;

static int build_id_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    build_ids *b = ctx;
    if (b->n == b->cap) {
        size_t nc = b->cap * 2 + 16;
        char(*nv)[41] = pk_xrealloc_array(b->v, nc, sizeof *nv);
        if (!nv)
            return pk_err_set(err, "out of memory");
        b->v = nv;
        b->cap = nc;
    }
    snprintf(b->v[b->n++], 41, "%s", ncols > 0 && v[0] ? v[0] : "");
    return 0;
}

/* Sets the key of the profiles already stored (per build-id, computed here
 * as add computes it), then of their count rows, in the migration's
 * transaction. The build-ids are read to the end before the updates: a
 * connection streams one result at a time. */
static int fill_bid_key(pk_store *s, pk_err *err)
{
    build_ids b = {0};
    int rc = s->be->query(s->db, "SELECT DISTINCT build_id FROM profiles", 0, NULL, build_id_row, &b, err);
    for (size_t i = 0; i < b.n && !rc; i++) {
        uint8_t raw[20], n;
        if (pk_store_unhex(b.v[i], raw, &n)) {
            rc = pk_err_set(err, "a stored build-id is not hex: '%s'", b.v[i]);
            break;
        }
        pk_store_val p[2] = {pk_sv_int(pk_store_bid_key(raw, n)), pk_sv_text(b.v[i])};
        rc = s->be->query(s->db, "UPDATE profiles SET bid = $1 WHERE build_id = $2", 2, p, NULL, NULL, err);
    }
    free(b.v);
    static const char *const rows[] = {
        "UPDATE ranges SET bid = p.bid FROM profiles p WHERE p.id = ranges.profile_id",
        "UPDATE branches SET bid = p.bid FROM profiles p WHERE p.id = branches.profile_id",
        "UPDATE stats SET bid = p.bid FROM profiles p WHERE p.id = stats.profile_id",
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows && !rc; i++)
        rc = s->be->exec(s->db, rows[i], err);
    return rc;
}

/* the statements of a migration, then its data step (NULL: none) */
static const struct {
    const char *const *sql;
    int (*fill)(pk_store *s, pk_err *err);
} migrations[PK_STORE_SCHEMA_VERSION] = {{migration1, NULL}, {migration2, NULL}, {migration3, fill_bid_key}, {migration4, NULL}};

static int read_version(pk_store *s, int64_t *v, pk_err *err)
{
    pk_store_val t = pk_sv_text("schema_version");
    int64_t n;
    if (pk_store_query_ints(s, s->be->table_exists, 1, &t, &n, 1, err))
        return -1;
    if (!n) {
        *v = -1;
        return 0;
    }
    return pk_store_query_ints(s, "SELECT max(version) FROM schema_version", 0, NULL, v, 1, err);
}

static int check_schema(pk_store *s, const char *target, pk_err *err)
{
    int64_t v;
    if (read_version(s, &v, err))
        return -1;
    if (v < 0)
        return pk_err_set(err, "%s: not a pgokit profile store (no schema_version table; create one with "
                               "`pgokit store init`)", target);
    if (v > PK_STORE_SCHEMA_VERSION)
        return pk_err_set(err, "%s: unknown schema version %lld (this pgokit knows versions up to %d; "
                               "use a newer pgokit)", target, (long long)v, PK_STORE_SCHEMA_VERSION);
    if (v < PK_STORE_SCHEMA_VERSION)
        return pk_err_set(err, "%s: schema version %lld is older than %d: migrate it with `pgokit store init`",
                          target, (long long)v, PK_STORE_SCHEMA_VERSION);
    return 0;
}

static int run_ddl(pk_store *s, const char *sql, pk_err *err)
{
    char buf[1024];
    const char *id = strstr(sql, "%ID%");
    if (id) {
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(id - sql), sql, s->be->id_column, id + 4);
        sql = buf;
    }
    return s->be->exec(s->db, sql, err);
}

int pk_store_init(pk_store *s, int *from, int *to, pk_err *err)
{
    const pk_store_backend *be = s->be;
    if (be->exec(s->db, be->begin_write, err))
        return -1;
    int64_t v;
    if (read_version(s, &v, err))
        goto fail;
    if (v < 0) {
        if (be->exec(s->db, "CREATE TABLE schema_version (version INTEGER NOT NULL)", err) ||
            be->exec(s->db, "INSERT INTO schema_version (version) VALUES (0)", err))
            goto fail;
        v = 0;
    }
    *from = (int)v;
    if (v > PK_STORE_SCHEMA_VERSION) {
        pk_err_set(err, "unknown schema version %lld (this pgokit knows versions up to %d; use a newer "
                        "pgokit)", (long long)v, PK_STORE_SCHEMA_VERSION);
        goto fail;
    }
    for (int64_t k = v; k < PK_STORE_SCHEMA_VERSION; k++) {
        int mrc = 0;
        for (const char *const *q = migrations[k].sql; *q && !mrc; q++)
            mrc = run_ddl(s, *q, err);
        if (mrc || (migrations[k].fill && migrations[k].fill(s, err))) {
            pk_err_prefix(err, "migrating the schema to version %lld", (long long)k + 1);
            goto fail;
        }
    }
    pk_store_val nv = pk_sv_int(PK_STORE_SCHEMA_VERSION);
    if (be->query(s->db, "UPDATE schema_version SET version = $1", 1, &nv, NULL, NULL, err) ||
        be->exec(s->db, "COMMIT", err))
        goto fail;
    *to = PK_STORE_SCHEMA_VERSION;
    return 0;
fail:
    pk_store_rollback(s);
    return -1;
}

/* ---- add ---- */

static uint64_t profile_samples(const pk_rawprof2 *r, const pk_pair_count *rg, size_t nr)
{
    if (r->flat.stats.samples_used)
        return r->flat.stats.samples_used;
    if (r->flat.stats.samples)
        return r->flat.stats.samples;
    if (r->ip_stats.used)
        return r->ip_stats.used;
    if (r->unwind.samples)
        return r->unwind.samples;
    uint64_t t = 0; /* IP profiles inferred into ranges: their executions */
    for (size_t i = 0; i < nr; i++)
        t += rg[i].n;
    return t;
}

static void hash_str(pk_md5_ctx *c, const char *s)
{
    pk_md5_update(c, s, strlen(s) + 1);
}

static void hash_pairs(pk_md5_ctx *c, const pk_pair_count *v, size_t n, uint64_t base)
{
    uint8_t buf[24 * 256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        pk_st64(buf + k, (uint64_t)pk_store_off(v[i].a, base));
        pk_st64(buf + k + 8, (uint64_t)pk_store_off(v[i].b, base));
        pk_st64(buf + k + 16, v[i].n);
        if ((k += 24) == sizeof buf) {
            pk_md5_update(c, buf, k);
            k = 0;
        }
    }
    pk_md5_update(c, buf, k);
}

static void hash_words(pk_md5_ctx *c, const int64_t *v, size_t n)
{
    uint8_t buf[8 * 512];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        pk_st64(buf + k, (uint64_t)v[i]);
        if ((k += 8) == sizeof buf) {
            pk_md5_update(c, buf, k);
            k = 0;
        }
    }
    pk_md5_update(c, buf, k);
}

/* The content hash. A version-1 profile hashes as every pgokit hashed it
 * (its uploads stay recognised across migrations); version 2 adds what
 * only it holds: flags, the IP statistics and the rows of the contexts and
 * IP observations (contexts by key: a hash of their addresses). Not the
 * unwinding statistics: some of them depend on the unwinder's threads
 * (walks done on the reading thread, recursion compressed once per stack
 * cached), so the same perf.data reduced again would not be recognised. */
static void content_hash(const pk_rawprof2 *r, const pk_pair_count *rg, size_t nr, const pk_pair_count *br,
                         size_t nb, const pk_store_rows *rw, const pk_store_meta *m, char out[33])
{
    pk_md5_ctx c;
    pk_md5_init(&c);
    hash_str(&c, "pgokit-store-1");
    pk_md5_update(&c, &r->flat.build_id_size, 1);
    pk_md5_update(&c, r->flat.build_id, r->flat.build_id_size);
    hash_str(&c, r->flat.path);
    pk_md5_update(&c, &r->flat.stats, sizeof r->flat.stats);
    hash_pairs(&c, rg, nr, r->flat.preferred_base);
    hash_pairs(&c, br, nb, r->flat.preferred_base);
    if (r->version >= 2) {
        hash_str(&c, "pgokit-store-2");
        uint8_t f[4];
        pk_st32(f, r->flags);
        pk_md5_update(&c, f, 4);
        pk_md5_update(&c, &r->ip_stats, sizeof r->ip_stats);
        const struct {
            const int64_t *v;
            size_t n;
        } t[] = {{rw->ranges, 4 * rw->nranges}, {rw->branches, 4 * rw->nbranches}, {rw->hits, 3 * rw->nhits},
                 {rw->calls, 4 * rw->ncalls}, {rw->unplaced, 3 * rw->nunplaced}};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            int64_t n = (int64_t)t[i].n;
            hash_words(&c, &n, 1);
            hash_words(&c, t[i].v, t[i].n);
        }
    }
    hash_str(&c, m->host);
    hash_str(&c, m->job);
    uint8_t dig[16];
    pk_md5_final(&c, dig);
    pk_store_hex(out, dig, 16);
}

typedef struct copier {
    pk_store *s;
    const pk_store_meta *m;
    uint64_t rows;
} copier;

/* Rows of w values (the last a count) into table(cols), after profile_id
 * and bid; `flat`: rows of the flat context (pairs, ctx 0 first). */
static int copy_rows(copier *c, const char *table, const char *cols, int64_t id, int64_t bid, const int64_t *v,
                     size_t n, size_t w, pk_err *err)
{
    pk_store *s = c->s;
    if (!n)
        return 0;
    if (s->be->copy_begin(s->db, table, cols, (int)w + 2, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        int64_t row[8] = {id, bid};
        memcpy(row + 2, v + i * w, w * sizeof *v);
        rc = s->be->copy_row(s->db, row, err);
        if (!(++c->rows & 1023) && c->m->progress)
            c->m->progress(c->m->cb_ctx, c->rows);
    }
    pk_err e2;
    if (s->be->copy_end(s->db, rc ? &e2 : err))
        rc = -1;
    return rc;
}

/* The flat counts as rows (ctx 0, a, b, n), in the order the hash read them. */
static int64_t *flat_rows(const pk_pair_count *v, size_t n, uint64_t base)
{
    int64_t *t = malloc((n ? n : 1) * 4 * sizeof *t);
    for (size_t i = 0; t && i < n; i++) {
        t[4 * i] = 0;
        t[4 * i + 1] = pk_store_off(v[i].a, base);
        t[4 * i + 2] = pk_store_off(v[i].b, base);
        t[4 * i + 3] = (int64_t)v[i].n;
    }
    return t;
}

/* The contexts of an upload not stored yet for its key, inserted; a stored
 * one under the same key must have the same addresses (else: a hash
 * collision, refused). Batches: one lookup of up to 256 keys (one list
 * parameter), inserts of up to 64 rows per statement. */
#define CTX_BATCH 256
#define CTX_INSERT (PK_STORE_MAX_PARAMS / 3)

typedef struct ctx_check {
    const pk_store_rows *rw;
    size_t lo, hi;               /* the batch: rw->ctxs[lo, hi) */
    uint8_t *stored;             /* per context of the batch */
    const char *path;
} ctx_check;

static int ctx_found(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    ctx_check *c = ctx;
    if (ncols < 2 || !v[0] || !v[1])
        return pk_err_set(err, "unexpected row in the stored contexts");
    int64_t key = strtoll(v[0], NULL, 10);
    size_t lo = c->lo, hi = c->hi;
    while (lo < hi) { /* the batch is sorted by key */
        size_t mid = lo + (hi - lo) / 2;
        if (c->rw->ctxs[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->hi || c->rw->ctxs[lo].key != key)
        return 0;
    const pk_store_ctx_row *x = &c->rw->ctxs[lo];
    char *text = malloc((size_t)x->len * 21 + 1);
    if (!text)
        return pk_err_set(err, "out of memory");
    bool same = pk_store_ctx_text(x->off, x->len, text, (size_t)x->len * 21 + 1) && !strcmp(text, v[1]);
    free(text);
    if (!same)
        return pk_err_set(err, "%s: a calling context has the key %lld of another one stored for this build-id (a "
                               "64-bit hash collision): the store cannot keep them apart", c->path, (long long)key);
    c->stored[lo - c->lo] = 1;
    return 0;
}

static int store_contexts(pk_store *s, const pk_store_rows *rw, int64_t bid, const char *path, uint64_t *added,
                          pk_err *err)
{
    const pk_store_backend *be = s->be;
    uint8_t stored[CTX_BATCH];
    char cond[128];
    snprintf(cond, sizeof cond, be->in_list, "ckey", "$2");
    char lookup[256];
    snprintf(lookup, sizeof lookup, "SELECT ckey, addrs FROM contexts WHERE bid = $1 AND %s", cond);
    char *ids = malloc(CTX_BATCH * 22 + 3);
    pk_store_val *p = calloc(3 * CTX_INSERT, sizeof *p);
    char **texts = calloc(CTX_INSERT, sizeof *texts);
    char *sql = malloc(64 + CTX_INSERT * 40);
    int rc = -1;
    if (!ids || !p || !texts || !sql) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    *added = 0;
    for (size_t lo = 0; lo < rw->nctxs; lo += CTX_BATCH) {
        size_t hi = lo + CTX_BATCH < rw->nctxs ? lo + CTX_BATCH : rw->nctxs, len = 0;
        ids[len++] = be->list_open;
        for (size_t i = lo; i < hi; i++)
            len += (size_t)sprintf(ids + len, "%s%lld", i > lo ? "," : "", (long long)rw->ctxs[i].key);
        ids[len++] = be->list_close;
        ids[len] = 0;
        memset(stored, 0, sizeof stored);
        ctx_check cc = {rw, lo, hi, stored, path};
        pk_store_val lp[2] = {pk_sv_int(bid), pk_sv_text(ids)};
        if (be->query(s->db, lookup, 2, lp, ctx_found, &cc, err))
            goto out;
        for (size_t i = lo; i < hi;) {
            size_t n = 0, at = (size_t)sprintf(sql, "INSERT INTO contexts (bid, ckey, addrs) VALUES ");
            for (; i < hi && n < CTX_INSERT; i++) {
                if (stored[i - lo])
                    continue;
                const pk_store_ctx_row *x = &rw->ctxs[i];
                size_t cap = (size_t)x->len * 21 + 1;
                if (!(texts[n] = malloc(cap))) {
                    pk_err_set(err, "out of memory");
                    goto out;
                }
                pk_store_ctx_text(x->off, x->len, texts[n], cap);
                p[3 * n] = pk_sv_int(bid);
                p[3 * n + 1] = pk_sv_int(x->key);
                p[3 * n + 2] = pk_sv_text(texts[n]);
                at += (size_t)sprintf(sql + at, "%s($%zu, $%zu, $%zu)", n ? ", " : "", 3 * n + 1, 3 * n + 2,
                                      3 * n + 3);
                n++;
            }
            int qrc = n ? be->query(s->db, sql, (int)(3 * n), p, NULL, NULL, err) : 0;
            for (size_t k = 0; k < n; k++) {
                free(texts[k]);
                texts[k] = NULL;
            }
            if (qrc)
                goto out;
            *added += n;
        }
    }
    rc = 0;
out:
    free(ids);
    free(p);
    if (texts)
        for (size_t k = 0; k < CTX_INSERT; k++)
            free(texts[k]);
    free(texts);
    free(sql);
    return rc;
}

int pk_store_add_flat(pk_store *s, const pk_rawprof *r, const pk_store_meta *m, pk_store_add_result *res,
                      pk_err *err)
{
    pk_rawprof2 v; /* a view: nothing but the flat counts */
    memset(&v, 0, sizeof v);
    v.version = 1;
    v.flat = *r;
    return pk_store_add(s, &v, m, res, err);
}

int pk_store_add(pk_store *s, const pk_rawprof2 *r, const pk_store_meta *m, pk_store_add_result *res,
                 pk_err *err)
{
    memset(res, 0, sizeof *res);
    const pk_rawprof *fl = &r->flat;
    if (!fl->build_id_size)
        return pk_err_set(err, "%s: the profile has no build-id; the store keys profiles by build-id", fl->path);
    size_t nr, nb;
    pk_pair_count *rg = pk_pairmap_sorted(&fl->ranges, &nr);
    pk_pair_count *br = pk_pairmap_sorted(&fl->branches, &nb);
    int64_t *frg = NULL, *fbr = NULL;
    pk_store_rows rw = {0};
    int rc = -1;
    if ((!rg && fl->ranges.len) || (!br && fl->branches.len) ||
        !(frg = flat_rows(rg, nr, fl->preferred_base)) || !(fbr = flat_rows(br, nb, fl->preferred_base))) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nr + nb; i++) {
        const pk_pair_count *p = i < nr ? &rg[i] : &br[i - nr];
        if (p->n > (uint64_t)INT64_MAX) {
            pk_err_set(err, "%s: a count of %llu does not fit a 64-bit signed integer", fl->path,
                       (unsigned long long)p->n);
            goto out;
        }
    }
    if (pk_store_rows_build(&rw, r, err))
        goto out;
    /* the content: what the profile counts, and where it came from */
    content_hash(r, rg, nr, br, nb, &rw, m, res->hash);
    pk_store_hex(res->build_id, fl->build_id, fl->build_id_size);
    res->ranges = nr + rw.nranges;
    res->branches = nb + rw.nbranches;
    res->samples = profile_samples(r, rg, nr);
    res->contexts = rw.nctxs;
    res->ip = rw.nhits + rw.ncalls + rw.nunplaced;

    const char *bn = m->binary_name;
    if (!bn || !*bn) {
        bn = strrchr(fl->path, '/');
        bn = bn ? bn + 1 : fl->path;
    }
    const pk_store_backend *be = s->be;
    if (be->exec(s->db, be->begin_write, err))
        goto out;
    int64_t bid = pk_store_bid_key(fl->build_id, fl->build_id_size);
    pk_store_val p[17] = {
        pk_sv_text(res->hash), pk_sv_text(res->build_id), pk_sv_text(bn), pk_sv_text(fl->path),
        pk_sv_int((int64_t)fl->preferred_base), pk_sv_text(m->host), pk_sv_text(m->job), pk_sv_int(m->time),
        pk_sv_int((int64_t)time(NULL)), pk_sv_int((int64_t)res->samples), pk_sv_int((int64_t)res->ranges),
        pk_sv_int((int64_t)res->branches), pk_sv_int(bid), pk_sv_int(r->version >= 2 ? 2 : 1),
        pk_sv_int((int64_t)rw.nctxs), pk_sv_int((int64_t)(rw.nstacked + rw.ncalls)), pk_sv_int((int64_t)res->ip),
    };
    int64_t id = 0;
    if (pk_store_query_ints(s,
                            "INSERT INTO profiles (content_hash, build_id, bin_name, path, preferred_base, host, "
                            "job, ts, added, samples, nranges, nbranches, bid, raw_version, ncontexts, nstacked, "
                            "nip) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, "
                            "$17) ON CONFLICT (content_hash) DO NOTHING RETURNING id",
                            17, p, &id, 1, err))
        goto abort;
    if (!id) { /* stored before: a retried upload */
        res->duplicate = true;
        if (be->exec(s->db, "ROLLBACK", err))
            goto out;
        rc = 0;
        goto out;
    }
    res->id = id;
    if (store_contexts(s, &rw, bid, fl->path, &res->contexts_new, err))
        goto abort;
    copier cp = {s, m, 0};
    const char *c6 = "profile_id, bid, ctx, a, b, n", *c5 = "profile_id, bid, ctx, a, n";
    if (copy_rows(&cp, "ranges", c6, id, bid, frg, nr, 4, err) ||
        copy_rows(&cp, "ranges", c6, id, bid, rw.ranges, rw.nranges, 4, err) ||
        copy_rows(&cp, "branches", c6, id, bid, fbr, nb, 4, err) ||
        copy_rows(&cp, "branches", c6, id, bid, rw.branches, rw.nbranches, 4, err) ||
        copy_rows(&cp, "ip_hits", c5, id, bid, rw.hits, rw.nhits, 3, err) ||
        copy_rows(&cp, "ip_calls", c6, id, bid, rw.calls, rw.ncalls, 4, err) ||
        copy_rows(&cp, "ip_unplaced", "profile_id, bid, a, b, n", id, bid, rw.unplaced, rw.nunplaced, 3, err))
        goto abort;
    /* the statistics words and flags (store.h) */
    int64_t kv[PK_STORE_MAX_STATS][2];
    size_t nkv = pk_store_stats_rows(r, kv);
    uint64_t rows_before = cp.rows;
    if (copy_rows(&cp, "stats", "profile_id, bid, k, v", id, bid, &kv[0][0], nkv, 2, err))
        goto abort;
    cp.rows = rows_before; /* statistics are not counted as rows */
    res->rows = cp.rows;
    if (m->progress) /* every row sent, nothing committed yet */
        m->progress(m->cb_ctx, cp.rows);
    if (be->exec(s->db, "COMMIT", err))
        goto abort;
    rc = 0;
    goto out;
abort:
    pk_store_rollback(s);
out:
    free(rg);
    free(br);
    free(frg);
    free(fbr);
    pk_store_rows_free(&rw);
    return rc;
}

/* ---- prune ---- */

int pk_store_prune(pk_store *s, int64_t before, uint64_t *profiles, uint64_t *rows, pk_err *err)
{
    *profiles = *rows = 0;
    const pk_store_backend *be = s->be;
    if (be->exec(s->db, be->begin_write, err))
        return -1;
    pk_store_val t = pk_sv_int(before);
    int64_t c[3];
    if (pk_store_query_ints(s, "SELECT count(*), COALESCE(sum(nranges), 0), COALESCE(sum(nbranches), 0) + "
                               "COALESCE(sum(nip), 0) FROM profiles WHERE ts < $1", 1, &t, c, 3, err))
        goto fail;
    static const char *const del[] = {
        "DELETE FROM ranges WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM branches WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM ip_hits WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM ip_calls WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM ip_unplaced WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM stats WHERE profile_id IN (SELECT id FROM profiles WHERE ts < $1)",
        "DELETE FROM profiles WHERE ts < $1",
    };
    for (size_t i = 0; i < sizeof del / sizeof *del; i++)
        if (be->query(s->db, del[i], 1, &t, NULL, NULL, err))
            goto fail;
    /* the contexts of build-ids no profile is left of (those of a build-id
     * still profiled stay, used or not: finding the unused ones means
     * reading every count row of the key) */
    if (be->exec(s->db, "DELETE FROM contexts WHERE bid NOT IN (SELECT bid FROM profiles)", err))
        goto fail;
    if (be->exec(s->db, "COMMIT", err))
        goto fail;
    *profiles = (uint64_t)c[0];
    *rows = (uint64_t)(c[1] + c[2]);
    return 0;
fail:
    pk_store_rollback(s);
    return -1;
}

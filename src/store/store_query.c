/* store_query.c — reading the profile store: list, select (the revision to
 * profile) and pull (the merge, done by the engine). */
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct revs {
    pk_store_rev *v;
    size_t n, cap;
} revs;

static int rev_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    revs *r = ctx;
    if (ncols < 9)
        return pk_err_set(err, "unexpected result shape");
    if (r->n == r->cap) {
        size_t nc = r->cap * 2 + 16;
        pk_store_rev *nv = pk_xrealloc_array(r->v, nc, sizeof *nv);
        if (!nv)
            return pk_err_set(err, "out of memory");
        r->v = nv;
        r->cap = nc;
    }
    pk_store_rev *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->binary, sizeof e->binary, "%s", v[0] ? v[0] : "");
    snprintf(e->build_id, sizeof e->build_id, "%s", v[1] ? v[1] : "");
    e->profiles = v[2] ? strtoull(v[2], NULL, 10) : 0;
    e->hosts = v[3] ? strtoull(v[3], NULL, 10) : 0;
    e->samples = v[4] ? strtoull(v[4], NULL, 10) : 0;
    e->first = v[5] ? strtoll(v[5], NULL, 10) : 0;
    e->last = v[6] ? strtoll(v[6], NULL, 10) : 0;
    e->ranges = v[7] ? strtoull(v[7], NULL, 10) : 0;
    e->branches = v[8] ? strtoull(v[8], NULL, 10) : 0;
    /* A pull is a flat raw profile: the raw-profile API and the schema
     * carry no calling contexts, so whatever the uploads were recorded
     * with, CSSPGO (contexts) cannot come out of the store. */
    e->kinds = e->ranges || e->branches ? PK_STORE_KIND_AUTOFDO | PK_STORE_KIND_PROBE : 0;
    e->no_csspgo = "no calling contexts stored";
    return 0;
}

#define REV_COLUMNS                                                                                           \
    "bin_name, build_id, count(*), count(DISTINCT host), sum(samples), min(ts), max(ts), sum(nranges), " \
    "sum(nbranches)"

int pk_store_list(pk_store *s, pk_store_rev **out, size_t *n, pk_err *err)
{
    revs r = {0};
    int rc = s->be->query(s->db,
                          "SELECT " REV_COLUMNS " FROM profiles GROUP BY bin_name, build_id "
                          "ORDER BY bin_name, min(ts) DESC, build_id",
                          0, NULL, rev_row, &r, err);
    if (rc) {
        free(r.v);
        r.v = NULL;
        r.n = 0;
    }
    *out = r.v;
    *n = r.n;
    return rc;
}

int pk_store_select(pk_store *s, const char *binary, int64_t since, double threshold, pk_store_rev **out,
                    size_t *n, size_t *chosen, pk_err *err)
{
    revs r = {0};
    *out = NULL;
    *n = 0;
    pk_store_val p[2] = {pk_sv_text(binary), pk_sv_int(since)};
    if (s->be->query(s->db,
                     "SELECT " REV_COLUMNS " FROM profiles WHERE bin_name = $1 AND ts >= $2 "
                     "GROUP BY bin_name, build_id ORDER BY min(ts) DESC, build_id",
                     2, p, rev_row, &r, err)) {
        free(r.v);
        return -1;
    }
    if (!r.n) {
        free(r.v);
        return pk_err_set(err, "no profiles of binary '%s' in the time window", binary);
    }
    uint64_t most = 0;
    for (size_t i = 0; i < r.n; i++)
        if (r.v[i].samples > most)
            most = r.v[i].samples;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < r.n; i++) {
        if ((double)r.v[i].samples < threshold * (double)most)
            continue;
        if (best == SIZE_MAX || r.v[i].first > r.v[best].first ||
            (r.v[i].first == r.v[best].first && r.v[i].samples > r.v[best].samples))
            best = i;
    }
    *out = r.v;
    *n = r.n;
    *chosen = best; /* the most-sampled one always qualifies */
    return 0;
}

/* ---- pull ---- */

typedef struct head {
    char *path;
    int64_t base;
} head;

static int head_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    head *h = ctx;
    free(h->path);
    if (!(h->path = strdup(v[0] ? v[0] : "")))
        return pk_err_set(err, "out of memory");
    h->base = v[1] ? strtoll(v[1], NULL, 10) : 0;
    return 0;
}

typedef struct sink {
    pk_pairmap *m;
    uint64_t base;
    pk_agg_stats *stats;
} sink;

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s)
        return -1;
    *out = strtoull(s, &end, 10);
    return *end ? -1 : 0;
}

static int pair_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    sink *k = ctx;
    uint64_t n;
    if (ncols < 3 || !v[0] || !v[1] || parse_u64(v[2], &n) || !n)
        return pk_err_set(err, "unexpected row in the merged counts");
    uint64_t a = pk_store_addr(strtoll(v[0], NULL, 10), k->base);
    uint64_t b = pk_store_addr(strtoll(v[1], NULL, 10), k->base);
    if (pk_pairmap_add(k->m, a, b, n))
        return pk_err_set(err, "out of memory");
    return 0;
}

static int stat_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    sink *k = ctx;
    uint64_t w;
    long idx = v[0] ? strtol(v[0], NULL, 10) : -1;
    if (ncols < 2 || parse_u64(v[1], &w))
        return pk_err_set(err, "unexpected row in the merged statistics");
    if (idx >= 0 && (size_t)idx < sizeof *k->stats / 8)
        ((uint64_t *)k->stats)[idx] = w; /* words of a newer pgokit are ignored */
    return 0;
}

/* the profiles a pull merges: $1 build-id, $2 since, $3 job or NULL */
#define PULL_WHERE "p.build_id = $1 AND p.ts >= $2 AND (CAST($3 AS TEXT) IS NULL OR p.job = CAST($3 AS TEXT))"

/* their ids, as the engine's list text (backend.h, in_list) */
typedef struct id_list {
    char *s;
    size_t len, cap;
} id_list;

static int id_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    id_list *l = ctx;
    size_t need = l->len + 24;
    if (ncols < 1 || !v[0])
        return pk_err_set(err, "unexpected row in the profile ids");
    if (need > l->cap) {
        size_t nc = need * 2;
        char *ns = realloc(l->s, nc);
        if (!ns)
            return pk_err_set(err, "out of memory");
        l->s = ns;
        l->cap = nc;
    }
    l->len += (size_t)snprintf(l->s + l->len, l->cap - l->len, "%s%lld", l->len > 1 ? "," : "",
                               strtoll(v[0], NULL, 10));
    return 0;
}

/* One aggregate of a count table over the pulled profiles: $1 the build-id
 * key, $2 the profile ids. Only the count table is read (no join with
 * profiles), and the key is both filtered and grouped on: on a table
 * hash-partitioned by the key, the filter leaves one partition and
 * grouping by the partition key lets the whole GROUP BY ... SUM run where
 * that partition is (postgres_fdw ships it to the shard, with
 * enable_partitionwise_aggregate). cols: the grouped columns. */
static int pull_sum(pk_store *s, const char *table, const char *cols, const char *sum, const id_list *ids,
                    int64_t key, pk_store_row_fn fn, void *ctx, pk_err *err)
{
    char cond[128], sql[512];
    snprintf(cond, sizeof cond, s->be->in_list, "x.profile_id", "$2");
    snprintf(sql, sizeof sql, "SELECT %s, sum(x.%s) FROM %s x WHERE x.bid = $1 AND %s GROUP BY x.bid, %s", cols, sum,
             table, cond, cols);
    pk_store_val p[2] = {pk_sv_int(key), pk_sv_text(ids->s)};
    return s->be->query(s->db, sql, 2, p, fn, ctx, err);
}

int pk_store_pull(pk_store *s, const pk_store_filter *f, const char *out_path, pk_store_pull_result *res,
                  pk_err *err)
{
    memset(res, 0, sizeof *res);
    uint8_t bid[20], bn;
    char want[41];
    snprintf(want, sizeof want, "%s", f->build_id ? f->build_id : "");
    for (char *q = want; *q; q++)
        if (*q >= 'A' && *q <= 'F')
            *q = (char)(*q - 'A' + 'a');
    if (pk_store_unhex(want, bid, &bn))
        return pk_err_set(err, "build-id '%s' is not 2 to 40 hex digits", f->build_id ? f->build_id : "");
    const pk_store_backend *be = s->be;
    pk_store_val p[3] = {pk_sv_text(want), pk_sv_int(f->since), pk_sv_text(f->job)};
    if (be->exec(s->db, be->begin_read, err))
        return -1;
    int rc = -1;
    head h = {0};
    id_list ids = {0};
    pk_rawprof r;
    bool have_r = false;
    int64_t cnt[2];
    if (pk_store_query_ints(s, "SELECT count(*), min(p.id) FROM profiles p WHERE " PULL_WHERE, 3, p, cnt, 2,
                            err))
        goto out;
    if (!cnt[0]) {
        pk_err_set(err, "no profiles of build-id %s%s%s%s", want, f->since != INT64_MIN ? " in the time window" : "",
                   f->job ? " for job " : "", f->job ? f->job : "");
        goto out;
    }
    res->profiles = (uint64_t)cnt[0];
    /* the merged profile keeps the first upload's path, as a file merge
     * keeps its first input's */
    pk_store_val idp = pk_sv_int(cnt[1]);
    if (be->query(s->db, "SELECT path, preferred_base FROM profiles WHERE id = $1", 1, &idp, head_row, &h, err))
        goto out;
    if (pk_rawprof_init(&r, h.path, bid, bn, (uint64_t)h.base, err))
        goto out;
    have_r = true;
    /* the ids go to the engine as one list: the count rows of a sharded
     * store are on other servers than the profiles table */
    ids.cap = 64;
    if (!(ids.s = malloc(ids.cap))) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    ids.s[0] = be->list_open;
    ids.s[ids.len = 1] = 0;
    if (be->query(s->db, "SELECT p.id FROM profiles p WHERE " PULL_WHERE " ORDER BY p.id", 3, p, id_row, &ids,
                  err))
        goto out;
    ids.s[ids.len++] = be->list_close; /* id_row leaves room */
    ids.s[ids.len] = 0;
    int64_t key = pk_store_bid_key(bid, bn);
    sink k = {&r.ranges, r.preferred_base, &r.stats};
    if (pull_sum(s, "stats", "x.k", "v", &ids, key, stat_row, &k, err) ||
        pull_sum(s, "ranges", "x.a, x.b", "n", &ids, key, pair_row, &k, err))
        goto out;
    k.m = &r.branches;
    if (pull_sum(s, "branches", "x.a, x.b", "n", &ids, key, pair_row, &k, err))
        goto out;
    res->ranges = r.ranges.len;
    res->branches = r.branches.len;
    be->exec(s->db, "COMMIT", NULL);
    rc = pk_rawprof_write(&r, out_path, err);
    goto done;
out:
    pk_store_rollback(s);
done:
    if (have_r)
        pk_rawprof_free(&r);
    free(h.path);
    free(ids.s);
    return rc;
}

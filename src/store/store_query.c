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
    if (ncols < 12)
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
    e->stacked = v[9] ? strtoull(v[9], NULL, 10) : 0;
    e->ip = v[10] ? strtoull(v[10], NULL, 10) : 0;
    e->v1 = v[11] ? strtoull(v[11], NULL, 10) : 0;
    /* Flat counts, contexts and IP observations all give line- and
     * probe-based profiles; CSSPGO needs calling contexts with call sites
     * (LBR or IP samples with call stacks). */
    e->kinds = e->ranges || e->branches || e->ip ? PK_STORE_KIND_AUTOFDO | PK_STORE_KIND_PROBE : 0;
    if (e->stacked)
        e->kinds |= PK_STORE_KIND_CSSPGO;
    if (e->ip)
        e->kinds |= PK_STORE_KIND_IP;
    e->no_csspgo = e->stacked           ? NULL
                   : e->v1 == e->profiles ? "no calling contexts stored: version-1 (flat) uploads"
                                          : "no calling contexts stored: the samples had no call stacks";
    return 0;
}

#define REV_COLUMNS                                                                                           \
    "bin_name, build_id, count(*), count(DISTINCT host), sum(samples), min(ts), max(ts), sum(nranges), " \
    "sum(nbranches), sum(nstacked), sum(nip), sum(CASE WHEN raw_version = 1 THEN 1 ELSE 0 END)"

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

/* What the merged rows go into: the flat counts, or a context's (looked
 * up by key, interned in lbr or ip on first use). */
typedef struct stored_ctx {
    size_t first;                /* its offsets in the words */
    uint32_t len, lbr_id, ip_id; /* UINT32_MAX: not interned there yet */
} stored_ctx;

typedef struct sink {
    pk_rawprof2 *r;
    pk_u64map by_key;            /* ckey → index in ctxs + 1 */
    pk_vec ctxs;                 /* stored_ctx */
    pk_vec words;                /* uint64_t offsets */
    uint64_t *scratch;
    size_t scratch_cap;
    int table;                   /* which count table the rows are of (T_*) */
    uint64_t rows;
} sink;

enum { T_RANGES, T_BRANCHES, T_HITS, T_CALLS, T_UNPLACED };

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s)
        return -1;
    *out = strtoull(s, &end, 10);
    return *end ? -1 : 0;
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    *out = strtoll(s, &end, 10);
    return *end ? -1 : 0;
}

/* a stored context: its key and address list */
static int ctx_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    sink *k = ctx;
    int64_t key;
    if (ncols < 2 || parse_i64(v[0], &key) || !v[1])
        return pk_err_set(err, "unexpected row in the stored contexts");
    size_t first = k->words.len;
    for (const char *p = v[1]; *p;) {
        char *end;
        int64_t off = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ','))
            return pk_err_set(err, "stored context %lld: bad address list '%s'", (long long)key, v[1]);
        uint64_t *w = pk_vec_push(&k->words);
        if (!w)
            return pk_err_set(err, "out of memory");
        *w = (uint64_t)off;
        p = *end ? end + 1 : end;
    }
    uint32_t len = (uint32_t)(k->words.len - first);
    uint64_t *slot = pk_u64map_get(&k->by_key, (uint64_t)key);
    if (slot) { /* stored twice (two writers raced): the same addresses */
        const stored_ctx *had = &PK_VEC_AT(&k->ctxs, stored_ctx, *slot - 1);
        const uint64_t *w = k->words.data;
        if (had->len != len || memcmp(w + had->first, w + first, len * sizeof *w))
            return pk_err_set(err, "stored context %lld has two different address lists", (long long)key);
        k->words.len = first;
        return 0;
    }
    if (!len)
        return pk_err_set(err, "stored context %lld has no addresses", (long long)key);
    stored_ctx *c = pk_vec_push(&k->ctxs);
    if (!c || !(slot = pk_u64map_slot(&k->by_key, (uint64_t)key)))
        return pk_err_set(err, "out of memory");
    *c = (stored_ctx){first, len, UINT32_MAX, UINT32_MAX};
    *slot = k->ctxs.len;
    return 0;
}

/* The id in `cs` (r->lbr or r->ip) of stored context `key`. */
static int ctx_id(sink *k, int64_t key, pk_csraw *cs, uint32_t *id, pk_err *err)
{
    uint64_t *slot = pk_u64map_get(&k->by_key, (uint64_t)key);
    if (!slot)
        return pk_err_set(err, "a count row names context %lld, which is not stored", (long long)key);
    stored_ctx *c = &PK_VEC_AT(&k->ctxs, stored_ctx, *slot - 1);
    uint32_t *have = cs == &k->r->lbr ? &c->lbr_id : &c->ip_id;
    if (*have == UINT32_MAX) {
        if (c->len > k->scratch_cap) {
            uint64_t *ns = pk_xrealloc_array(k->scratch, c->len, sizeof *ns);
            if (!ns)
                return pk_err_set(err, "out of memory");
            k->scratch = ns;
            k->scratch_cap = c->len;
        }
        const uint64_t *w = (const uint64_t *)k->words.data + c->first;
        for (uint32_t i = 0; i < c->len; i++)
            k->scratch[i] = w[i] + cs->base;
        if (pk_csraw_intern(cs, k->scratch, c->len, have, err))
            return -1;
    }
    *id = *have;
    return 0;
}

/* A context row's address as a pk_csraw key half (external: sources only). */
static int key_half(int64_t off, bool may_be_external, uint64_t *out, pk_err *err)
{
    if (off == -1 && may_be_external) {
        *out = PK_CS_EXTERNAL_OFF;
        return 0;
    }
    if (off < 0 || off >= (int64_t)PK_CS_EXTERNAL_OFF)
        return pk_err_set(err, "a stored context's count row has address offset %lld, not in the binary's first "
                               "4 GiB", (long long)off);
    *out = (uint64_t)off;
    return 0;
}

/* One merged row: (ctx,) a, (b,) sum, by table. */
static int count_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    sink *k = ctx;
    pk_rawprof2 *r = k->r;
    uint64_t base = r->flat.preferred_base;
    int want = k->table == T_HITS || k->table == T_UNPLACED ? 3 : 4;
    int64_t x[3] = {0};
    uint64_t n;
    if (ncols < want || parse_u64(v[want - 1], &n) || !n)
        return pk_err_set(err, "unexpected row in the merged counts");
    for (int i = 0; i < want - 1; i++)
        if (parse_i64(v[i], &x[i]))
            return pk_err_set(err, "unexpected row in the merged counts");
    k->rows++;
    uint32_t id;
    uint64_t a = 0, b = 0;
    int bad = 0;
    switch (k->table) {
    case T_RANGES:
    case T_BRANCHES:
        if (!x[0]) { /* the flat context */
            bad = pk_pairmap_add(k->table == T_RANGES ? &r->flat.ranges : &r->flat.branches,
                                 pk_store_addr(x[1], base), pk_store_addr(x[2], base), n);
            break;
        }
        if (ctx_id(k, x[0], &r->lbr, &id, err) || key_half(x[1], k->table == T_BRANCHES, &a, err) ||
            key_half(x[2], false, &b, err))
            return -1;
        bad = pk_pairmap_add(k->table == T_RANGES ? &r->lbr.ranges : &r->lbr.branches, (uint64_t)id << 32 | a, b, n);
        break;
    case T_HITS:
        if (ctx_id(k, x[0], &r->ip, &id, err) || key_half(x[1], false, &a, err))
            return -1;
        bad = pk_pairmap_add(&r->ip.ranges, (uint64_t)id << 32 | a, 0, n);
        break;
    case T_CALLS:
        if (ctx_id(k, x[0], &r->ip, &id, err) || key_half(x[1], false, &a, err) || key_half(x[2], false, &b, err))
            return -1;
        bad = pk_pairmap_add(&r->ip.branches, (uint64_t)id << 32 | a, b, n);
        break;
    default:
        if (key_half(x[0], false, &a, err) || key_half(x[1], false, &b, err))
            return -1;
        bad = pk_pairmap_add(&r->ip_unplaced, a, b, n);
    }
    return bad ? pk_err_set(err, "out of memory") : 0;
}

static int stat_row(void *ctx, int ncols, const char *const *v, pk_err *err)
{
    sink *k = ctx;
    uint64_t w;
    int64_t idx;
    if (ncols < 2 || parse_i64(v[0], &idx) || parse_u64(v[1], &w))
        return pk_err_set(err, "unexpected row in the merged statistics");
    pk_store_stats_put(k->r, idx, w);
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
    pk_rawprof2 r;
    bool have_r = false;
    sink k = {0};
    pk_vec_init(&k.ctxs, sizeof(stored_ctx));
    pk_vec_init(&k.words, sizeof(uint64_t));
    int64_t cnt[4];
    if (pk_store_query_ints(s, "SELECT count(*), min(p.id), max(p.raw_version), sum(p.ncontexts) FROM profiles p "
                               "WHERE " PULL_WHERE, 3, p, cnt, 4, err))
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
    if (pk_rawprof2_init(&r, h.path, bid, bn, (uint64_t)h.base, err))
        goto out;
    have_r = true;
    /* version 1 when every upload was: what `pgokit merge` of them writes */
    r.version = cnt[2] >= 2 ? 2 : 1;
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
    k.r = &r;
    pk_store_val kp = pk_sv_int(key);
    /* the contexts of the key (those of every upload of the build-id, and
     * of any build-id sharing the key: only those the rows name are used) */
    if (cnt[3] > 0 && be->query(s->db, "SELECT c.ckey, c.addrs FROM contexts c WHERE c.bid = $1", 1, &kp, ctx_row,
                                &k, err))
        goto out;
    static const struct {
        const char *table, *cols, *sum;
        int kind;
    } parts[] = {
        {"ranges", "x.ctx, x.a, x.b", "n", T_RANGES},
        {"branches", "x.ctx, x.a, x.b", "n", T_BRANCHES},
        {"ip_hits", "x.ctx, x.a", "n", T_HITS},
        {"ip_calls", "x.ctx, x.a, x.b", "n", T_CALLS},
        {"ip_unplaced", "x.a, x.b", "n", T_UNPLACED},
    };
    if (pull_sum(s, "stats", "x.k", "v", &ids, key, stat_row, &k, err))
        goto out;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        k.table = parts[i].kind;
        uint64_t before = k.rows;
        if (pull_sum(s, parts[i].table, parts[i].cols, parts[i].sum, &ids, key, count_row, &k, err))
            goto out;
        if (parts[i].kind == T_RANGES)
            res->ranges = k.rows - before;
        else if (parts[i].kind == T_BRANCHES)
            res->branches = k.rows - before;
        else
            res->ip += k.rows - before;
    }
    res->contexts = pk_csraw_num_ctxs(&r.lbr) + pk_csraw_num_ctxs(&r.ip);
    be->exec(s->db, "COMMIT", NULL);
    if (r.version == 1) {
        if (r.flags || pk_rawprof2_has_contexts(&r) || pk_rawprof2_has_ip(&r)) {
            pk_err_set(err, "the stored version-1 uploads of build-id %s have version-2 rows: the store is damaged",
                       want);
            goto done;
        }
        rc = pk_rawprof_write(&r.flat, out_path, err);
    } else {
        rc = pk_rawprof2_write(&r, out_path, err);
    }
    res->version = r.version;
    goto done;
out:
    pk_store_rollback(s);
done:
    if (have_r)
        pk_rawprof2_free(&r);
    free(h.path);
    free(ids.s);
    pk_u64map_free(&k.by_key);
    pk_vec_free(&k.ctxs);
    pk_vec_free(&k.words);
    free(k.scratch);
    return rc;
}

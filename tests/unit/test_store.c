/* test_store.c — the profile store on SQLite, in process: schema, add
 * (idempotent), pull == merging the profiles as files (byte for byte, with
 * external sources and addresses below the base), the revision choice,
 * prune, and the time syntax. (PostgreSQL: tests/e2e/store_postgres.sh.) */
#include "test.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>

static const uint8_t bid1[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
static const uint8_t bid2[20] = {9, 9, 9, 9, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

static void fill(pk_rawprof *r, uint64_t k)
{
    pk_pairmap_add(&r->ranges, 0x401000, 0x401010, 5 * k);
    pk_pairmap_add(&r->ranges, 0x401020 + k, 0x401044, 1 * k);
    pk_pairmap_add(&r->ranges, 0x1000, 0x1008, 3);              /* below the base */
    pk_pairmap_add(&r->branches, 0x401010, 0x401020, 4 * k);
    pk_pairmap_add(&r->branches, PK_AGG_EXTERNAL, 0x401000, 2 * k);
    pk_pairmap_add(&r->branches, 0x7fffffff00000000ULL, 0x401000, (uint64_t)1 << 40);
    r->stats.samples = 10 * k;
    r->stats.samples_used = 9 * k;
    r->stats.processes = 1;
}

static int file_bytes(const char *path, char **out, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc(*n ? *n : 1);
    size_t got = fread(*out, 1, *n, f);
    fclose(f);
    return got == *n ? 0 : -1;
}

static bool same_file(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    if (file_bytes(a, &x, &nx) || file_bytes(b, &y, &ny))
        return false;
    bool same = nx == ny && !memcmp(x, y, nx);
    free(x);
    free(y);
    return same;
}

TEST(add_pull_equals_file_merge)
{
    pk_err e = {{0}};
    pk_store *s;
    const char *db = pk_test_path("a.db");
    CHECK(pk_store_open(&s, db, false, &e) == -1); /* not created yet */
    CHECK(strstr(e.msg, "no such store") != NULL);
    CHECK_OK(pk_store_open(&s, db, true, &e), &e);
    int from, to;
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    CHECK_EQ_U64(from, 0);
    CHECK_EQ_U64(to, PK_STORE_SCHEMA_VERSION);
    pk_rawprof a, b, m;
    CHECK_OK(pk_rawprof_init(&a, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof_init(&b, "/other/prog", bid1, 20, 0x400000, &e), &e);
    fill(&a, 1);
    fill(&b, 3);
    pk_store_meta meta = {.host = "h1", .job = "j", .time = 1000};
    pk_store_add_result res;
    CHECK_OK(pk_store_add_flat(s, &a, &meta, &res, &e), &e);
    CHECK(!res.duplicate);
    CHECK_EQ_U64(res.samples, 9);
    CHECK_OK(pk_store_add_flat(s, &a, &meta, &res, &e), &e);
    CHECK(res.duplicate);
    meta.host = "h2";
    meta.time = 2000;
    CHECK_OK(pk_store_add_flat(s, &b, &meta, &res, &e), &e);
    CHECK(!res.duplicate);

    pk_store_filter f = {.build_id = "0102030405060708090A0B0C0D0E0F1011121314", .since = INT64_MIN};
    pk_store_pull_result pr;
    CHECK_OK(pk_store_pull(s, &f, pk_test_path("pulled.raw"), &pr, &e), &e);
    CHECK_EQ_U64(pr.profiles, 2);
    CHECK_OK(pk_rawprof_init(&m, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof_merge(&m, &a, &e), &e);
    CHECK_OK(pk_rawprof_merge(&m, &b, &e), &e);
    CHECK_OK(pk_rawprof_write(&m, pk_test_path("merged.raw"), &e), &e);
    CHECK(same_file(pk_test_path("pulled.raw"), pk_test_path("merged.raw")));

    f.since = 1500; /* only b, but the path of b */
    CHECK_OK(pk_store_pull(s, &f, pk_test_path("pulled_b.raw"), &pr, &e), &e);
    CHECK_OK(pk_rawprof_write(&b, pk_test_path("b.raw"), &e), &e);
    CHECK(same_file(pk_test_path("pulled_b.raw"), pk_test_path("b.raw")));

    f.job = "nope";
    CHECK(pk_store_pull(s, &f, pk_test_path("none.raw"), &pr, &e) == -1);
    CHECK(strstr(e.msg, "no profiles of build-id") != NULL);
    FILE *none = fopen(pk_test_path("none.raw"), "rb");
    CHECK(none == NULL);
    if (none)
        fclose(none);
    f.build_id = "xyz";
    CHECK(pk_store_pull(s, &f, pk_test_path("none.raw"), &pr, &e) == -1);

    uint64_t np, nr;
    CHECK_OK(pk_store_prune(s, 1500, &np, &nr, &e), &e);
    CHECK_EQ_U64(np, 1);
    CHECK_EQ_U64(nr, 6);
    pk_store_rev *v;
    size_t n;
    CHECK_OK(pk_store_list(s, &v, &n, &e), &e);
    CHECK_EQ_U64(n, 1);
    if (n) {
        CHECK_STR(v[0].binary, "prog");
        CHECK_EQ_U64(v[0].profiles, 1);
        CHECK_EQ_U64(v[0].samples, 27);
    }
    free(v);
    pk_rawprof_free(&a);
    pk_rawprof_free(&b);
    pk_rawprof_free(&m);
    pk_store_close(s);
}

/* Two build-ids with the same first 8 bytes share the build-id key (one
 * partition of a sharded store): each pull still merges its own profiles. */
TEST(pull_separates_build_ids_sharing_a_key)
{
    static const uint8_t bid3[20] = {1, 2, 3, 4, 5, 6, 7, 8, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99};
    pk_err e = {{0}};
    pk_store *s;
    int from, to;
    CHECK_OK(pk_store_open(&s, pk_test_path("key.db"), true, &e), &e);
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    pk_rawprof a, c;
    CHECK_OK(pk_rawprof_init(&a, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof_init(&c, "/bin/prog", bid3, 20, 0x400000, &e), &e);
    fill(&a, 1);
    fill(&c, 2);
    pk_store_meta meta = {.host = "h1", .job = "", .time = 1000};
    pk_store_add_result res;
    CHECK_OK(pk_store_add_flat(s, &a, &meta, &res, &e), &e);
    CHECK_OK(pk_store_add_flat(s, &c, &meta, &res, &e), &e);
    pk_store_filter f = {.build_id = "0102030405060708090a0b0c0d0e0f1011121314", .since = INT64_MIN};
    pk_store_pull_result pr;
    CHECK_OK(pk_store_pull(s, &f, pk_test_path("key_a.raw"), &pr, &e), &e);
    CHECK_EQ_U64(pr.profiles, 1);
    CHECK_OK(pk_rawprof_write(&a, pk_test_path("key_a_file.raw"), &e), &e);
    CHECK(same_file(pk_test_path("key_a.raw"), pk_test_path("key_a_file.raw")));
    f.build_id = "0102030405060708636363636363636363636363";
    CHECK_OK(pk_store_pull(s, &f, pk_test_path("key_c.raw"), &pr, &e), &e);
    CHECK_EQ_U64(pr.profiles, 1);
    CHECK_OK(pk_rawprof_write(&c, pk_test_path("key_c_file.raw"), &e), &e);
    CHECK(same_file(pk_test_path("key_c.raw"), pk_test_path("key_c_file.raw")));
    pk_rawprof_free(&a);
    pk_rawprof_free(&c);
    pk_store_close(s);
}

/* list: a revision with counts can give AutoFDO and probe profiles, one
 * without any gives nothing; none gives CSSPGO (no contexts stored) */
TEST(list_says_what_a_pull_can_make)
{
    pk_err e = {{0}};
    pk_store *s;
    int from, to;
    CHECK_OK(pk_store_open(&s, pk_test_path("kinds.db"), true, &e), &e);
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    pk_rawprof a, empty;
    CHECK_OK(pk_rawprof_init(&a, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof_init(&empty, "/bin/prog", bid2, 20, 0x400000, &e), &e);
    fill(&a, 1);
    empty.stats.samples = 5; /* samples, none in the binary */
    pk_store_meta meta = {.host = "h1", .job = "", .time = 1000};
    pk_store_add_result res;
    CHECK_OK(pk_store_add_flat(s, &a, &meta, &res, &e), &e);
    meta.time = 2000;
    CHECK_OK(pk_store_add_flat(s, &empty, &meta, &res, &e), &e);
    pk_store_rev *v;
    size_t n;
    CHECK_OK(pk_store_list(s, &v, &n, &e), &e);
    CHECK_EQ_U64(n, 2);
    for (size_t i = 0; i < n; i++) {
        bool counted = !strcmp(v[i].build_id, "0102030405060708090a0b0c0d0e0f1011121314");
        CHECK_EQ_U64(v[i].kinds, counted ? PK_STORE_KIND_AUTOFDO | PK_STORE_KIND_PROBE : 0);
        CHECK(v[i].no_csspgo && strstr(v[i].no_csspgo, "no calling contexts"));
    }
    free(v);
    pk_rawprof_free(&a);
    pk_rawprof_free(&empty);
    pk_store_close(s);
}

TEST(select_prefers_recent_revision_with_enough_samples)
{
    pk_err e = {{0}};
    pk_store *s;
    int from, to;
    CHECK_OK(pk_store_open(&s, pk_test_path("sel.db"), true, &e), &e);
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    pk_rawprof old, nw;
    CHECK_OK(pk_rawprof_init(&old, "/x/app", bid1, 20, 0, &e), &e);
    CHECK_OK(pk_rawprof_init(&nw, "/x/app", bid2, 20, 0, &e), &e);
    pk_pairmap_add(&old.ranges, 1, 2, 1);
    pk_pairmap_add(&nw.ranges, 1, 2, 1);
    old.stats.samples_used = 1000;
    nw.stats.samples_used = 150;
    pk_store_meta m = {.host = "a", .job = "", .time = 100};
    pk_store_add_result r;
    CHECK_OK(pk_store_add_flat(s, &old, &m, &r, &e), &e);
    m.time = 200;
    CHECK_OK(pk_store_add_flat(s, &nw, &m, &r, &e), &e);
    pk_store_rev *v;
    size_t n, c;
    CHECK_OK(pk_store_select(s, "app", 0, 0.2, &v, &n, &c, &e), &e);
    CHECK_EQ_U64(n, 2);
    CHECK_STR(v[c].build_id, "0102030405060708090a0b0c0d0e0f1011121314"); /* 15 % < 20 % */
    free(v);
    CHECK_OK(pk_store_select(s, "app", 0, 0.1, &v, &n, &c, &e), &e);
    CHECK_STR(v[c].build_id, "0909090905060708090a0b0c0d0e0f1011121314");
    free(v);
    CHECK_OK(pk_store_select(s, "app", 150, 0.2, &v, &n, &c, &e), &e); /* the old one is outside */
    CHECK_EQ_U64(n, 1);
    free(v);
    CHECK(pk_store_select(s, "nope", 0, 0.2, &v, &n, &c, &e) == -1);
    pk_rawprof_free(&old);
    pk_rawprof_free(&nw);
    pk_store_close(s);
}

TEST(a_profile_without_build_id_is_refused)
{
    pk_err e = {{0}};
    pk_store *s;
    int from, to;
    CHECK_OK(pk_store_open(&s, pk_test_path("nobid.db"), true, &e), &e);
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    pk_rawprof r;
    CHECK_OK(pk_rawprof_init(&r, "/x/app", NULL, 0, 0, &e), &e);
    pk_store_meta m = {.host = "a", .job = "", .time = 1};
    pk_store_add_result res;
    CHECK(pk_store_add_flat(s, &r, &m, &res, &e) == -1);
    CHECK(strstr(e.msg, "no build-id") != NULL);
    pk_rawprof_free(&r);
    pk_store_close(s);
}

/* Version 2 in memory: contexts (one of them with an unknown leaf, entry 0,
 * below the base), an external branch source in a context, IP hits, calls
 * and unplaced hits, unwinding and IP statistics and a flag. */
static void fill2(pk_rawprof2 *r, uint64_t k, pk_err *e)
{
    const uint64_t base = r->flat.preferred_base;
    fill(&r->flat, k);
    uint64_t c1[] = {base + 0x100, base + 0x2000}, c2[] = {base + 0x104, base + 0x200, 0}, c3[] = {base + 0x3000};
    uint32_t i1, i2, j1, j3;
    pk_csraw_intern(&r->lbr, c1, 2, &i1, e);
    pk_csraw_intern(&r->lbr, c2, 3, &i2, e);
    pk_pairmap_add(&r->lbr.ranges, (uint64_t)i1 << 32 | 0x2000, 0x2010, 7 * k);
    pk_pairmap_add(&r->lbr.branches, (uint64_t)i1 << 32 | PK_CS_EXTERNAL_OFF, 0x2000, 2 * k);
    pk_pairmap_add(&r->lbr.ranges, (uint64_t)i2 << 32 | 0x10, 0x18, k);
    pk_csraw_intern(&r->ip, c3, 1, &j3, e);
    pk_csraw_intern(&r->ip, c1, 2, &j1, e);
    pk_pairmap_add(&r->ip.ranges, (uint64_t)j3 << 32 | 0x3004, 0, 3 * k);
    pk_pairmap_add(&r->ip.ranges, (uint64_t)j1 << 32 | 0x2008, 0, k);
    pk_pairmap_add(&r->ip.branches, (uint64_t)j3 << 32 | 0x3010, 0x2000, 5 * k);
    pk_pairmap_add(&r->ip_unplaced, 0x2000, 0x2001, k);
    r->unwind.samples = 11 * k;
    r->ip_stats.used = 4 * k;
    r->flags = PK_RAW_CALLS_ONLY;
}

TEST(version_2_add_pull_equals_file_merge)
{
    pk_err e = {{0}};
    pk_store *s;
    int from, to;
    CHECK_OK(pk_store_open(&s, pk_test_path("v2.db"), true, &e), &e);
    CHECK_OK(pk_store_init(s, &from, &to, &e), &e);
    pk_rawprof2 a, b, m;
    CHECK_OK(pk_rawprof2_init(&a, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof2_init(&b, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    fill2(&a, 1, &e);
    fill2(&b, 3, &e);
    pk_pairmap_add(&b.lbr.ranges, 0x30, 0x38, 1); /* context 0 of b's lbr: c1 again */
    pk_store_meta meta = {.host = "h", .job = "", .time = 100};
    pk_store_add_result res;
    CHECK_OK(pk_store_add(s, &a, &meta, &res, &e), &e);
    CHECK_EQ_U64(res.contexts, 3);
    CHECK_EQ_U64(res.contexts_new, 3);
    CHECK_EQ_U64(res.ip, 4);
    CHECK_OK(pk_store_add(s, &a, &meta, &res, &e), &e);
    CHECK(res.duplicate);
    meta.host = "h2";
    CHECK_OK(pk_store_add(s, &b, &meta, &res, &e), &e);
    CHECK(!res.duplicate);
    CHECK_EQ_U64(res.contexts_new, 0);
    pk_store_filter f = {.build_id = "0102030405060708090a0b0c0d0e0f1011121314", .since = INT64_MIN};
    pk_store_pull_result pr;
    CHECK_OK(pk_store_pull(s, &f, pk_test_path("v2_pulled.raw"), &pr, &e), &e);
    CHECK_EQ_U64(pr.version, 2);
    CHECK_EQ_U64(pr.profiles, 2);
    CHECK_OK(pk_rawprof2_init(&m, "/bin/prog", bid1, 20, 0x400000, &e), &e);
    CHECK_OK(pk_rawprof2_merge(&m, &a, &e), &e);
    CHECK_OK(pk_rawprof2_merge(&m, &b, &e), &e);
    CHECK_OK(pk_rawprof2_write(&m, pk_test_path("v2_merged.raw"), &e), &e);
    CHECK(same_file(pk_test_path("v2_pulled.raw"), pk_test_path("v2_merged.raw")));
    pk_store_rev *v;
    size_t n;
    CHECK_OK(pk_store_list(s, &v, &n, &e), &e);
    CHECK_EQ_U64(n, 1);
    CHECK_EQ_U64(v[0].kinds, PK_STORE_KIND_AUTOFDO | PK_STORE_KIND_PROBE | PK_STORE_KIND_CSSPGO | PK_STORE_KIND_IP);
    CHECK(v[0].no_csspgo == NULL);
    free(v);
    pk_rawprof2_free(&a);
    pk_rawprof2_free(&b);
    pk_rawprof2_free(&m);
    pk_store_close(s);
}

TEST(times)
{
    pk_err e;
    int64_t t;
    CHECK_OK(pk_store_parse_time("1700000000", 0, &t, &e), &e);
    CHECK_EQ_U64(t, 1700000000);
    CHECK_OK(pk_store_parse_time("14d", 2000000, &t, &e), &e);
    CHECK_EQ_U64(t, 2000000 - 14 * 86400);
    CHECK_OK(pk_store_parse_time("2w", 2000000, &t, &e), &e);
    CHECK_EQ_U64(t, 2000000 - 14 * 86400);
    CHECK_OK(pk_store_parse_time("90s", 1000, &t, &e), &e);
    CHECK_EQ_U64(t, 910);
    CHECK_OK(pk_store_parse_time("1970-01-02", 0, &t, &e), &e);
    CHECK_EQ_U64(t, 86400);
    CHECK_OK(pk_store_parse_time("2026-11-24T22:50:00Z", 0, &t, &e), &e);
    CHECK_EQ_U64(t, 1795560600);
    CHECK_OK(pk_store_parse_time("2026-11-24 22:50:00", 0, &t, &e), &e);
    CHECK_EQ_U64(t, 1795560600);
    char buf[32];
    pk_store_format_time(1795560600, buf, sizeof buf);
    CHECK_STR(buf, "2026-11-24T22:50:00Z");
    CHECK(pk_store_parse_time("14x", 0, &t, &e) == -1);
    CHECK(pk_store_parse_time("", 0, &t, &e) == -1);
    CHECK(pk_store_parse_time("2026-13-40", 0, &t, &e) == -1);
    CHECK(pk_store_parse_time("-5d", 0, &t, &e) == -1);
}

int main(void) { return pk_test_main(); }

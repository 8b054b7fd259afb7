/* test_temporal_raw.c — raw temporal profile reader (synthetic files written
 * here byte by byte, following the format in temporal.h), the symbol table
 * with local-name disambiguation, and correlation (names, trace, counts,
 * build-id refusal). */
#include "test.h"
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int local_marker(int x) { return x * 3; }
int (*volatile keep_marker)(int) = local_marker;

struct buf { uint8_t d[4096]; size_t n; };
static void put(struct buf *b, const void *p, size_t n) { memcpy(b->d + b->n, p, n); b->n += n; }
static void p32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void p64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* A raw profile: module 0 with build-id `id`, records (addr, count). */
static size_t make_raw(uint8_t *out, const uint8_t *id, uint32_t idlen, const uint64_t *addrs,
                       const uint64_t *counts, uint32_t n, uint32_t flags)
{
    struct buf b = {{0}, 0};
    const char *path = "/bin/prog";
    put(&b, PK_TEMPORAL_RAW_MAGIC, 8);
    p32(&b, 1); p32(&b, flags);
    p64(&b, 0); p64(&b, 0);             /* size, checksum: patched */
    p64(&b, 4242); p32(&b, 1); p32(&b, 0);
    p64(&b, n); p64(&b, 0);
    p32(&b, idlen); p32(&b, (uint32_t)strlen(path)); p64(&b, 0x555500000000ull);
    put(&b, id, idlen); put(&b, path, strlen(path));
    while (b.n % 8) b.d[b.n++] = 0;
    for (uint32_t i = 0; i < n; i++) { p64(&b, addrs[i]); p32(&b, 0); p32(&b, 0); p64(&b, counts[i]); }
    pk_st64(b.d + 16, b.n);
    pk_st64(b.d + 24, pk_temporal_checksum(b.d, b.n));
    memcpy(out, b.d, b.n);
    return b.n;
}

static int write_file(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(d, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

TEST(raw_reader_accepts_good_and_rejects_every_truncation)
{
    uint8_t id[20], file[4096];
    for (int i = 0; i < 20; i++) id[i] = (uint8_t)(0xa0 + i);
    uint64_t addrs[3] = {0x1130, 0x1200, 0x1180}, counts[3] = {1, 5, 7};
    size_t n = make_raw(file, id, 20, addrs, counts, 3, PK_TEMPORAL_RAW_COUNTS);
    char path[512];
    snprintf(path, sizeof path, "%s/good.pgoraw", pk_test_tmpdir());
    CHECK(write_file(path, file, n) == 0);
    pk_temporal_raw r;
    pk_err e;
    CHECK_OK(pk_temporal_raw_open(&r, path, &e), &e);
    CHECK(pk_temporal_is_raw(path));
    CHECK(pk_temporal_is_profile(path));
    CHECK_EQ_U64(r.num_records, 3);
    CHECK_EQ_U64(r.pid, 4242);
    CHECK_EQ_U64(r.num_modules, 1);
    CHECK_EQ_U64(r.modules[0].build_id_len, 20);
    CHECK(!memcmp(r.modules[0].build_id, id, 20));
    pk_temporal_raw_record x = pk_temporal_raw_record_at(&r, 1);
    CHECK_EQ_U64(x.addr, 0x1200);
    CHECK_EQ_U64(x.count, 5);
    pk_temporal_raw_close(&r);

    char cut[512];
    snprintf(cut, sizeof cut, "%s/cut.pgoraw", pk_test_tmpdir());
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        CHECK(write_file(cut, file, len) == 0);
        if (pk_temporal_raw_open(&r, cut, &e) == 0) { bad++; pk_temporal_raw_close(&r); }
        else if (!strstr(e.msg, "cut.pgoraw: ")) bad++;
    }
    CHECK_EQ_U64(bad, 0);
    for (size_t i = 0; i < n; i++) {
        file[i] ^= 0x10;
        CHECK(write_file(cut, file, n) == 0);
        if (pk_temporal_raw_open(&r, cut, &e) == 0) { bad++; pk_temporal_raw_close(&r); }
        file[i] ^= 0x10;
    }
    CHECK_EQ_U64(bad, 0);
}

TEST(symtab_names_locals_by_file)
{
    pk_temporal_symtab s;
    pk_err e;
    CHECK_OK(pk_temporal_symtab_load(&s, "/proc/self/exe", &e), &e);
    CHECK(s.build_id_len > 0);
    const struct pk_temporal_sym *m = NULL;
    for (uint64_t i = 0; i < s.num_syms; i++)
        if (!strcmp(s.syms[i].name, "test_temporal_raw.c:local_marker")) m = &s.syms[i];
    CHECK(m != NULL);
    if (m) {
        CHECK_STR(m->symbol, "local_marker");
        CHECK(m->flags & PK_TEMPORAL_FUNC_LOCAL);
        CHECK(pk_temporal_symtab_lookup(&s, m->addr) == m);
        CHECK(pk_temporal_symtab_lookup(&s, m->addr + 1) == m);
    }
    const struct pk_temporal_sym *g = NULL;
    for (uint64_t i = 0; i < s.num_syms; i++)
        if (!strcmp(s.syms[i].name, "pk_temporal_checksum")) g = &s.syms[i];
    CHECK(g != NULL && !(g->flags & PK_TEMPORAL_FUNC_LOCAL));
    pk_temporal_symtab_free(&s);
}

TEST(correlate_trace_counts_and_build_id)
{
    pk_temporal_symtab s;
    pk_err e;
    CHECK_OK(pk_temporal_symtab_load(&s, "/proc/self/exe", &e), &e);
    /* Three functions of this very binary, as the runtime would record them
     * (hook call site = function start or a few bytes in). */
    uint64_t addrs[4] = {0, 0, 0, 0x10}, counts[4] = {3, 1, 9, 1};
    const char *want[3] = {"test_temporal_raw.c:local_marker", "pk_temporal_checksum", "pk_temporal_raw_open"};
    for (int k = 0; k < 3; k++)
        for (uint64_t i = 0; i < s.num_syms; i++)
            if (!strcmp(s.syms[i].name, want[k])) addrs[k] = s.syms[i].addr + (k == 1 ? 4 : 0);
    CHECK(addrs[0] && addrs[1] && addrs[2]);
    uint8_t file[4096];
    size_t n = make_raw(file, s.build_id, s.build_id_len, addrs, counts, 4, PK_TEMPORAL_RAW_COUNTS);
    char path[512];
    snprintf(path, sizeof path, "%s/self.pgoraw", pk_test_tmpdir());
    CHECK(write_file(path, file, n) == 0);
    pk_temporal_raw r;
    CHECK_OK(pk_temporal_raw_open(&r, path, &e), &e);
    pk_temporal_profile p;
    pk_temporal_init(&p, 0, 0);
    pk_temporal_correlate_stats st;
    CHECK_OK(pk_temporal_add_raw(&p, &r, &s, 1, &st, &e), &e);
    CHECK_EQ_U64(st.records, 4);
    CHECK_EQ_U64(st.unresolved, 1);   /* address 0x10 is in no function */
    CHECK_EQ_U64(p.num_traces, 1);
    CHECK_EQ_U64(p.traces[0].len, 3);
    for (int k = 0; k < 3 && p.traces[0].len == 3; k++) {
        CHECK_STR(p.funcs[p.traces[0].funcs[k]].name, want[k]);
        CHECK_EQ_U64(p.funcs[p.traces[0].funcs[k]].entry_count, counts[k]);
        CHECK_EQ_U64(p.funcs[p.traces[0].funcs[k]].covered_runs, 1);
    }
    CHECK(p.flags & PK_TEMPORAL_HAS_COUNTS);
    pk_temporal_raw_close(&r);

    /* Same records, another build-id: refused, profile untouched. */
    uint8_t other[20] = {1, 2, 3};
    n = make_raw(file, other, 20, addrs, counts, 4, 0);
    CHECK(write_file(path, file, n) == 0);
    CHECK_OK(pk_temporal_raw_open(&r, path, &e), &e);
    CHECK(pk_temporal_add_raw(&p, &r, &s, 1, &st, &e) == -1);
    CHECK(strstr(e.msg, "build-id mismatch") != NULL);
    CHECK_EQ_U64(p.num_runs, 1);
    CHECK_EQ_U64(p.traces_seen, 1);
    pk_temporal_raw_close(&r);
    pk_temporal_free(&p);
    pk_temporal_symtab_free(&s);
}

int main(void) { return pk_test_main(); }

/* test_probe.c — pseudo-probe decoding on the byte sequence of
 * research/llvm-profgen.md §5.2 (clang-19, main at 0x11d0), truncations,
 * corruptions and the descriptor section. */
#include "test.h"
#include "binary/pseudo_probe.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t example[] = {
    0xfa, 0xd5, 0x8d, 0xe7, 0x36, 0x64, 0x95, 0xdb, /* GUID(main) */
    0x07, 0x01,
    0x01, 0x80, 0x06, 0x02, 0x80, 0x0a, 0x05, 0x80, 0x13, 0x06, 0x80, 0x00,
    0x07, 0x80, 0x00, 0x0b, 0x80, 0x00, 0x0c, 0x82, 0x17,
    0x03,                                           /* inlinee at probe 3 */
    0xcd, 0x5d, 0x38, 0xa3, 0x4b, 0x4a, 0x2e, 0xa5, /* GUID(atoi) */
    0x02, 0x00,
    0x01, 0x80, 0x56, 0x02, 0x82, 0x0b,
};
#define GUID_MAIN 0xdb956436e78dd5faull
#define GUID_ATOI 0xa52e4a4ba3385dcdull

static int resolve_main(void *ctx, uint64_t guid, uint64_t *addr)
{
    (void)ctx;
    if (guid != GUID_MAIN)
        return -1;
    *addr = 0x11d0;
    return 0;
}

TEST(decodes_worked_example)
{
    pk_probe_table t;
    pk_err e;
    CHECK_OK(pk_probe_table_decode(&t, example, sizeof example, 0x100, "ex", resolve_main, NULL, NULL, &e), &e);
    CHECK_EQ_U64(t.n, 9);
    CHECK_EQ_U64(t.n_nodes, 2);
    CHECK_EQ_U64(t.nodes[0].guid, GUID_MAIN);
    CHECK_EQ_U64(t.nodes[1].guid, GUID_ATOI);
    CHECK_EQ_U64(t.nodes[1].parent, 0);
    CHECK_EQ_U64(t.nodes[1].callsite_probe, 3);
    size_t n;
    const pk_probe *p = pk_probe_table_at(&t, 0x11d6, &n);
    CHECK(p && n == 1 && p->index == 1 && p->node == 0 && p->type == PK_PROBE_BLOCK);
    /* 0x11e0 holds main's probe 2 and atoi's probe 1, in decode order. */
    p = pk_probe_table_at(&t, 0x11e0, &n);
    CHECK(p && n == 2);
    if (p && n == 2) {
        CHECK(p[0].index == 2 && p[0].node == 0);
        CHECK(p[1].index == 1 && p[1].node == 1);
    }
    p = pk_probe_table_at(&t, 0x11f3, &n);
    CHECK(p && n == 4 && p[0].index == 5 && p[3].index == 11);
    p = pk_probe_table_at(&t, 0x120a, &n);
    CHECK(p && n == 1 && p->index == 12 && p->type == PK_PROBE_DIRECT_CALL);
    p = pk_probe_table_at(&t, 0x11eb, &n);
    CHECK(p && n == 1 && p->index == 2 && p->node == 1 && p->type == PK_PROBE_DIRECT_CALL);
    CHECK_EQ_U64(pk_probe_table_lower_bound(&t, 0x11e1), 3);
    CHECK_EQ_U64(t.stats.records, 1);
    CHECK_EQ_U64(t.stats.probes, 9);
    pk_probe_table_free(&t);
}

TEST(address_based_encoding_chains_across_records)
{
    /* clang-14: the first probe is absolute and later records continue the
     * delta chain instead of restarting at their function's symbol. */
    static const uint8_t old_scheme[] = {
        0x67, 0x1e, 0x2a, 0xe7, 0xd9, 0xa3, 0xd5, 0x00, 0x01, 0x00,
        0x01, 0x00, 0x40, 0x15, 0, 0, 0, 0, 0, 0,            /* absolute 0x1540 */
        0xfa, 0xd5, 0x8d, 0xe7, 0x36, 0x64, 0x95, 0xdb, 0x02, 0x00,
        0x01, 0x80, 0x13, 0x02, 0x80, 0x05,                  /* +0x13, +5 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
        0x00, 0x20, 0xfa, 0xd5, 0x8d, 0xe7, 0x36, 0x64, 0x95, 0xdb, /* sentinel, index 0 */
    };
    pk_probe_table t;
    pk_err e;
    CHECK_OK(pk_probe_table_decode(&t, old_scheme, sizeof old_scheme, 0, "old", resolve_main, NULL, NULL, &e), &e);
    CHECK_EQ_U64(t.n, 3);
    if (t.n == 3) {
        CHECK_EQ_U64(t.probes[0].addr, 0x1540);
        CHECK_EQ_U64(t.probes[1].addr, 0x1553);
        CHECK_EQ_U64(t.probes[2].addr, 0x1558);
    }
    CHECK_EQ_U64(t.stats.sentinels, 1);
    CHECK_EQ_U64(t.stats.unresolved_records, 0);
    pk_probe_table_free(&t);
}

TEST(unresolved_or_unwanted_records_are_skipped_and_counted)
{
    pk_probe_table t;
    pk_err e;
    CHECK_OK(pk_probe_table_decode(&t, example, sizeof example, 0, "ex", NULL, NULL, NULL, &e), &e);
    CHECK_EQ_U64(t.n, 0);
    CHECK_EQ_U64(t.stats.unresolved_records, 1);
    CHECK_EQ_U64(t.stats.unresolved_probes, 9);
    pk_probe_table_free(&t);

    pk_u64map keep;
    CHECK(pk_u64map_init(&keep, 4) == 0);
    *pk_u64map_slot(&keep, 12345) = 1;
    CHECK_OK(pk_probe_table_decode(&t, example, sizeof example, 0, "ex", resolve_main, NULL, &keep, &e), &e);
    CHECK_EQ_U64(t.n, 0);
    CHECK_EQ_U64(t.stats.kept_records, 0);
    pk_probe_table_free(&t);
    pk_u64map_free(&keep);
}

/* Decoding one set of functions and then more of them gives the table one
 * decode of both gives: same probes in the same order (ties at an address
 * in section order), bodies with the same inline trees. */
#define GUID_F 0x1111222233334444ull
static int resolve_two(void *ctx, uint64_t guid, uint64_t *addr)
{
    (void)ctx;
    if (guid == GUID_MAIN)
        *addr = 0x11d0;
    else if (guid == GUID_F)
        *addr = 0x11d6; /* shares main's first probe address */
    else
        return -1;
    return 0;
}

TEST(decode_more_equals_one_decode)
{
    uint8_t two[sizeof example + 13];
    memcpy(two, example, sizeof example);
    static const uint8_t rec_f[13] = {0x44, 0x44, 0x33, 0x33, 0x22, 0x22, 0x11, 0x11, 0x01, 0x00, 0x01, 0x80, 0x00};
    memcpy(two + sizeof example, rec_f, sizeof rec_f);
    pk_u64map both, first, more;
    CHECK(pk_u64map_init(&both, 4) == 0 && pk_u64map_init(&first, 4) == 0 && pk_u64map_init(&more, 4) == 0);
    *pk_u64map_slot(&both, GUID_MAIN) = 1;
    *pk_u64map_slot(&both, GUID_F) = 1;
    *pk_u64map_slot(&first, GUID_F) = 1;
    *pk_u64map_slot(&more, GUID_MAIN) = 1;
    pk_probe_table full, t;
    pk_err e;
    CHECK_OK(pk_probe_table_decode(&full, two, sizeof two, 0, "two", resolve_two, NULL, &both, &e), &e);
    CHECK_OK(pk_probe_table_decode(&t, two, sizeof two, 0, "two", resolve_two, NULL, &first, &e), &e);
    CHECK_EQ_U64(t.n, 1);
    CHECK_OK(pk_probe_table_decode_more(&t, two, sizeof two, 0, "two", resolve_two, NULL, &more, &e), &e);
    CHECK_EQ_U64(full.n, 10);
    CHECK_EQ_U64(t.n, full.n);
    CHECK_EQ_U64(t.n_nodes, full.n_nodes);
    for (size_t i = 0; i < t.n && i < full.n; i++) {
        const pk_probe *a = &t.probes[i], *b = &full.probes[i];
        CHECK_EQ_U64(a->addr, b->addr);
        CHECK_EQ_U64(a->index, b->index);
        CHECK_EQ_U64(a->type, b->type);
        CHECK_EQ_U64(a->order, b->order);
        CHECK_EQ_U64(t.nodes[a->node].guid, full.nodes[b->node].guid);
        uint32_t pa = t.nodes[a->node].parent, pb = full.nodes[b->node].parent;
        CHECK_EQ_U64(pa == PK_PROBE_NO_NODE ? 0 : t.nodes[pa].guid, pb == PK_PROBE_NO_NODE ? 0 : full.nodes[pb].guid);
    }
    /* at 0x11d6: main's probe 1 comes before f's (section order) */
    size_t n;
    const pk_probe *p = pk_probe_table_at(&t, 0x11d6, &n);
    CHECK(p && n == 2 && t.nodes[p[0].node].guid == GUID_MAIN && t.nodes[p[1].node].guid == GUID_F);
    pk_probe_table_free(&full);
    pk_probe_table_free(&t);
    pk_u64map_free(&both);
    pk_u64map_free(&first);
    pk_u64map_free(&more);
}

/* fuzz_probes: in the clang-14 (address-based) encoding decode_more walks
 * the whole section again, and a body without a symbol named in its set was
 * decoded a second time (the first decode keeps those already). */
TEST(decode_more_never_repeats_a_symbolless_body)
{
    static const uint8_t old_scheme[] = {
        0x67, 0x1e, 0x2a, 0xe7, 0xd9, 0xa3, 0xd5, 0x00, 0x01, 0x00,
        0x01, 0x00, 0x40, 0x15, 0, 0, 0, 0, 0, 0,            /* no symbol: absolute 0x1540 */
        0xfa, 0xd5, 0x8d, 0xe7, 0x36, 0x64, 0x95, 0xdb, 0x02, 0x00,
        0x01, 0x80, 0x13, 0x02, 0x80, 0x05,                  /* main: +0x13, +5 */
    };
    pk_u64map first, more;
    CHECK(pk_u64map_init(&first, 4) == 0 && pk_u64map_init(&more, 4) == 0);
    *pk_u64map_slot(&first, GUID_MAIN) = 1;
    *pk_u64map_slot(&more, 0x00d5a3d9e72a1e67ull) = 1;
    pk_probe_table full, t;
    pk_err e;
    CHECK_OK(pk_probe_table_decode(&full, old_scheme, sizeof old_scheme, 0, "old", resolve_main, NULL, NULL, &e), &e);
    CHECK_OK(pk_probe_table_decode(&t, old_scheme, sizeof old_scheme, 0, "old", resolve_main, NULL, &first, &e), &e);
    CHECK_EQ_U64(t.n, 3);
    CHECK_OK(pk_probe_table_decode_more(&t, old_scheme, sizeof old_scheme, 0, "old", resolve_main, NULL, &more, &e),
             &e);
    CHECK_EQ_U64(full.n, 3);
    CHECK_EQ_U64(t.n, full.n);
    CHECK_EQ_U64(t.n_nodes, full.n_nodes);
    pk_probe_table_free(&full);
    pk_probe_table_free(&t);
    pk_u64map_free(&first);
    pk_u64map_free(&more);
}

TEST(every_truncation_is_an_error_with_offset)
{
    for (size_t cut = 1; cut < sizeof example; cut++) {
        pk_probe_table t;
        pk_err e = {{0}};
        int rc = pk_probe_table_decode(&t, example, cut, 0x100, "cut.bin", resolve_main, NULL, NULL, &e);
        CHECK(rc == -1);
        CHECK(strstr(e.msg, "cut.bin: offset ") != NULL);
        if (rc == 0)
            pk_probe_table_free(&t);
    }
}

TEST(corruptions_never_crash)
{
    /* Flip every byte to a few values; decoding must fail cleanly or succeed. */
    uint8_t buf[sizeof example];
    static const uint8_t vals[] = {0x00, 0x7f, 0x80, 0xff, 0x0f, 0xf2};
    int errors = 0;
    for (size_t i = 0; i < sizeof example; i++) {
        for (size_t v = 0; v < sizeof vals; v++) {
            memcpy(buf, example, sizeof buf);
            buf[i] = vals[v];
            pk_probe_table t;
            pk_err e = {{0}};
            if (pk_probe_table_decode(&t, buf, sizeof buf, 0, "x", resolve_main, NULL, NULL, &e) == 0)
                pk_probe_table_free(&t);
            else
                errors++;
        }
    }
    CHECK(errors > 0);
}

TEST(descriptors)
{
    uint8_t d[64];
    size_t n = 0;
    uint64_t g = GUID_MAIN, h = 0x1000000112233ull;
    memcpy(d + n, &g, 8); n += 8;
    memcpy(d + n, &h, 8); n += 8;
    d[n++] = 4;
    memcpy(d + n, "main", 4); n += 4;
    pk_probe_descs ds;
    pk_err e;
    CHECK_OK(pk_probe_descs_decode(&ds, d, n, 0, "desc", &e), &e);
    CHECK_EQ_U64(ds.n, 1);
    const pk_probe_desc *m = pk_probe_descs_find(&ds, GUID_MAIN);
    CHECK(m && m->cfg_hash == h && m->name_len == 4 && !memcmp(m->name, "main", 4));
    CHECK(pk_probe_descs_find(&ds, 1) == NULL);
    pk_probe_descs_free(&ds);
    for (size_t cut = 1; cut < n; cut++) {
        CHECK(pk_probe_descs_decode(&ds, d, cut, 0, "desc", &e) == -1);
        CHECK(strstr(e.msg, "desc: offset 0") != NULL);
    }
}

/* A section without bytes in the file (SHT_NOBITS, or empty) comes as NULL
 * and 0: no descriptors, and no arithmetic on the NULL pointer (gcc's UBSan
 * does not flag NULL + 0; clang's does, in the elf_dwarf harness's replay of
 * tests/fuzz/corpus/elf_dwarf/ok-nobits-probe-desc). */
TEST(descriptors_empty_section)
{
    pk_probe_descs ds;
    pk_err e;
    CHECK_OK(pk_probe_descs_decode(&ds, NULL, 0, 0, "desc", &e), &e);
    CHECK_EQ_U64(ds.n, 0);
    CHECK(pk_probe_descs_find(&ds, GUID_MAIN) == NULL);
    pk_probe_descs_free(&ds);
    pk_cursor c;
    pk_cursor_init(&c, NULL, 0);
    CHECK_EQ_U64(pk_cursor_left(&c), 0);
    CHECK(!pk_cursor_need(&c, 1) && c.bad);
}

int main(void) { return pk_test_main(); }

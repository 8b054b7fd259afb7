/* test_unwind.c — the virtual unwinder on a hand-made program:
 *   main 0x1000: cjmp 0x1008→0x100c, call foo at 0x1010 (returns to 0x1015)
 *   foo  0x2000: call bar at 0x200b (→0x2010), cjmp 0x2018→0x201c, call bar at 0x2020 (→0x2025)
 *   bar  0x3000: ret at 0x3010
 * and the LBR of one sample taken in bar's second call, traced by hand. */
#include "test.h"
#include "unwind/unwind.h"
#include "binary/binary.h"
#include "aggregate/aggregate.h"
#include "perf/perf_data.h"

static int fake_class(void *ctx, uint64_t a)
{
    (void)ctx;
    switch (a) {
    case 0x1010: case 0x200b: case 0x2020: return PK_INSN_CALL;
    case 0x3010: return PK_INSN_RET;
    case 0x1008: case 0x2018: return PK_INSN_CJMP;
    }
    return (a >= 0x1000 && a < 0x1100) || (a >= 0x2000 && a < 0x2100) || (a >= 0x3000 && a < 0x3100)
               ? PK_INSN_OTHER : -1;
}

static int fake_call_before(void *ctx, uint64_t a, uint64_t *site)
{
    (void)ctx;
    switch (a) {
    case 0x1015: *site = 0x1010; return 0;
    case 0x2010: *site = 0x200b; return 0;
    case 0x2025: *site = 0x2020; return 0;
    }
    return -1;
}

static uint64_t fake_entry(void *ctx, uint64_t a, uint64_t *end)
{
    (void)ctx;
    uint64_t e = a >= 0x1000 && a < 0x3100 ? a & ~(uint64_t)0xfff : 0;
    *end = e ? (e == 0x3000 ? 0x3100 : e + 0x1000) : 0;
    return e;
}

static const pk_unwind_code fake = {NULL, fake_class, fake_call_before, fake_entry, NULL, NULL};

static uint64_t range_count(const pk_csraw *r, const uint64_t *ctx, uint32_t n, uint64_t b, uint64_t e)
{
    uint32_t id;
    pk_err err;
    /* interning an existing context returns its id (and adds nothing) */
    size_t before = pk_csraw_num_ctxs(r);
    if (pk_csraw_intern((pk_csraw *)r, ctx, n, &id, &err) || pk_csraw_num_ctxs(r) != before)
        return (uint64_t)-1;
    return pk_pairmap_get(&r->ranges, (uint64_t)id << 32 | (b - r->base), e - r->base);
}

TEST(walks_calls_and_returns_backwards)
{
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    CHECK(u != NULL);
    const uint64_t stack[] = {0x3004, 0x2025, 0x1015};
    const pk_branch lbr[] = {
        {0x2020, 0x3000, 0}, {0x2018, 0x201c, 0}, {0x3010, 0x2010, 0},
        {0x200b, 0x3000, 0}, {0x1010, 0x2000, 0}, {0x1008, 0x100c, 0},
    };
    CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 6, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 6, 2, &err), &err);
    /* contexts: call sites, then the leaf function's entry */
    const uint64_t foo_in_main[] = {0x1010, 0x2000}, bar_in_foo[] = {0x1010, 0x200b, 0x3000};
    const uint64_t main_root[] = {0x1000};
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x201c, 0x2020), 3);
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2010, 0x2018), 3);
    CHECK_EQ_U64(range_count(&r, bar_in_foo, 3, 0x3000, 0x3010), 3);
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2000, 0x200b), 3);
    CHECK_EQ_U64(range_count(&r, main_root, 1, 0x100c, 0x1010), 3);
    CHECK_EQ_U64(r.ranges.len, 5);
    CHECK_EQ_U64(pk_csraw_num_ctxs(&r), 3);
    /* the call into bar's second instance is a branch of foo's context */
    uint32_t id;
    CHECK_OK(pk_csraw_intern(&r, foo_in_main, 2, &id, &err), &err);
    CHECK_EQ_U64(pk_pairmap_get(&r.branches, (uint64_t)id << 32 | 0x2020, 0x3000), 3);
    const pk_unwind_stats *st = pk_unwinder_stats(u);
    CHECK_EQ_U64(st->samples_unwound, 3); /* a weight is a number of identical samples */
    CHECK_EQ_U64(st->call_mismatch, 0);
    CHECK_EQ_U64(st->ranges_dropped, 0);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

/* A sample taken in a prologue or epilogue (bar's entry and its second
 * instruction, bar's ret and the instruction before it) is dropped when the
 * option asks, counted, and walked otherwise; one taken elsewhere in bar is
 * walked either way. */
static bool fake_prolog_epilog(void *ctx, uint64_t a)
{
    (void)ctx;
    return a == 0x3000 || a == 0x3001 || a == 0x300c || a == 0x3010;
}

TEST(samples_in_prologues_and_epilogues_are_dropped_when_asked)
{
    pk_unwind_code code = fake;
    code.prolog_epilog = fake_prolog_epilog;
    const pk_branch lbr[] = {{0x2020, 0x3000, 0}, {0x2018, 0x201c, 0}};
    const uint64_t leaves[] = {0x3000, 0x3001, 0x300c, 0x3010, 0x3004};
    for (int drop = 0; drop <= 1; drop++) {
        pk_csraw r;
        pk_err err;
        CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
        pk_unwind_opts o = {.max_depth = -1, .drop_prolog_epilog_leaf = drop};
        pk_unwinder *u = pk_unwinder_new(&code, &o, &r, &err);
        CHECK(u != NULL);
        for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++) {
            const uint64_t stack[] = {leaves[i], 0x2025, 0x1015};
            CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 2, 1, &err), &err);
        }
        const pk_unwind_stats *st = pk_unwinder_stats(u);
        CHECK_EQ_U64(st->samples, 5);
        CHECK_EQ_U64(st->samples_prolog_epilog, drop ? 4 : 0);
        CHECK_EQ_U64(st->samples_unwound, drop ? 1 : 5);
        const uint64_t foo_in_main[] = {0x1010, 0x2000};
        CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x201c, 0x2020), drop ? 1 : 5);
        pk_unwinder_free(u);
        pk_csraw_free(&r);
    }
}

/* Branch types in the LBR entries (perf's save_type, pgokit record) are
 * used before the instruction: a code view that knows no calls nor returns
 * gives the same contexts when the entries say what they are. */
static int blind_class(void *ctx, uint64_t a)
{
    (void)ctx;
    return (a >= 0x1000 && a < 0x1100) || (a >= 0x2000 && a < 0x2100) || (a >= 0x3000 && a < 0x3100)
               ? PK_INSN_OTHER : -1;
}

TEST(lbr_branch_types_classify_entries)
{
    pk_unwind_code blind = fake;
    blind.insn_class = blind_class;
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&blind, NULL, &r, &err);
    CHECK(u != NULL);
    const uint64_t stack[] = {0x3004, 0x2025, 0x1015};
    const uint64_t call = 4ull << 20, ret = 6ull << 20, cond = 1ull << 20;
    const pk_branch lbr[] = {
        {0x2020, 0x3000, call}, {0x2018, 0x201c, cond}, {0x3010, 0x2010, ret},
        {0x200b, 0x3000, call}, {0x1010, 0x2000, call}, {0x1008, 0x100c, cond},
    };
    CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 6, 1, &err), &err);
    const uint64_t foo_in_main[] = {0x1010, 0x2000}, bar_in_foo[] = {0x1010, 0x200b, 0x3000};
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x201c, 0x2020), 1);
    CHECK_EQ_U64(range_count(&r, bar_in_foo, 3, 0x3000, 0x3010), 1);
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2000, 0x200b), 1);
    CHECK_EQ_U64(pk_csraw_num_ctxs(&r), 3);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(external_frames_and_lbr_entries_cut_the_walk)
{
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    /* foo called from a library: its caller frame is external */
    const uint64_t stack[] = {0x2004, PK_AGG_EXTERNAL, 0x1015};
    const pk_branch lbr[] = {
        {0x2018, 0x201c, 0}, {PK_AGG_EXTERNAL, 0x2000, 0}, {0x1008, 0x100c, 0},
    };
    CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 3, 1, &err), &err);
    const pk_unwind_stats *st = pk_unwinder_stats(u);
    CHECK_EQ_U64(st->stack_truncated_external, 1);
    CHECK_EQ_U64(st->outside_entries, 1);
    CHECK_EQ_U64(st->ranges_dropped, 1);  /* main's range ends in outside code */
    const uint64_t foo_root[] = {0x2000};
    CHECK_EQ_U64(range_count(&r, foo_root, 1, 0x2000, 0x2018), 1);
    CHECK_EQ_U64(r.ranges.len, 1);        /* nothing older than the external entry */
    CHECK_EQ_U64(pk_pairmap_get(&r.branches, (uint64_t)PK_CS_EXTERNAL_OFF, 0x2000), 1);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(return_addresses_not_after_a_call_are_listed_once_each)
{
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    /* foo's caller frame 0x1014 (main) and 0x1004 follow no call (a caller
     * without frame pointer): each stack is cut there */
    const pk_branch lbr[] = {{0x2018, 0x201c, 0}, {0x200b, 0x3000, 0}, {0x3010, 0x2010, 0}};
    const uint64_t a[] = {0x2004, 0x1014}, b[] = {0x2008, 0x1014}, c[] = {0x2004, 0x1004}, ok[] = {0x2004, 0x1015};
    CHECK_OK(pk_unwind_sample(u, a, 2, lbr, 3, 2, &err), &err);
    CHECK_OK(pk_unwind_sample(u, b, 2, lbr, 3, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(u, c, 2, lbr, 3, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(u, ok, 2, lbr, 3, 1, &err), &err);
    CHECK_EQ_U64(pk_unwinder_stats(u)->stack_truncated_not_call, 4);
    pk_vec bad;
    pk_vec_init(&bad, sizeof(uint64_t));
    CHECK_OK(pk_unwinder_bad_returns(u, &bad, &err), &err);
    CHECK_EQ_U64(bad.len, 2);
    CHECK_EQ_U64(PK_VEC_AT(&bad, uint64_t, 0), 0x1004);
    CHECK_EQ_U64(PK_VEC_AT(&bad, uint64_t, 1), 0x1014);
    pk_vec_free(&bad);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(calls_into_outside_code_are_walked_through)
{
    /* foo (called from main) called libc at 0x2020 before the sample: the
     * LBR holds the return from libc, libc's own branches, the call into
     * it, and older code of foo that must keep its context. */
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    const uint64_t stack[] = {0x2028, 0x1015};
    const pk_branch lbr[] = {
        {PK_AGG_EXTERNAL, 0x2025, 0},          /* return from libc */
        {PK_AGG_EXTERNAL, PK_AGG_EXTERNAL, 0}, /* inside libc */
        {0x2020, PK_AGG_EXTERNAL, 0},          /* the call into libc */
        {0x1010, 0x2000, 0},                   /* main calls foo */
        {0x1008, 0x100c, 0},
    };
    CHECK_OK(pk_unwind_sample(u, stack, 2, lbr, 5, 1, &err), &err);
    const uint64_t foo_in_main[] = {0x1010, 0x2000}, main_root[] = {0x1000};
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2000, 0x2020), 1);
    CHECK_EQ_U64(range_count(&r, main_root, 1, 0x100c, 0x1010), 1);
    const pk_unwind_stats *st = pk_unwinder_stats(u);
    CHECK_EQ_U64(st->call_mismatch, 0);
    CHECK_EQ_U64(st->outside_entries, 2);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(callbacks_from_outside_code_keep_the_callers)
{
    /* foo (called from main) calls a library at 0x2020, which calls bar
     * back; the library then returns to foo, where the sample is taken.
     * bar's contexts start at the library; foo keeps main as its caller
     * on both sides of the library call. */
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    const uint64_t stack[] = {0x2028, 0x1015};
    const pk_branch lbr[] = {
        {PK_AGG_EXTERNAL, 0x2025, 0}, /* the library returns to foo */
        {0x3010, PK_AGG_EXTERNAL, 0}, /* bar returns to the library */
        {PK_AGG_EXTERNAL, 0x3000, 0}, /* the library calls bar */
        {0x2020, PK_AGG_EXTERNAL, 0}, /* foo calls the library */
        {0x2018, 0x201c, 0},
    };
    CHECK_OK(pk_unwind_sample(u, stack, 2, lbr, 5, 1, &err), &err);
    /* the same moment seen from inside bar: the stack holds the library's
     * frames between bar and foo */
    const uint64_t stack2[] = {0x3004, PK_AGG_EXTERNAL, PK_AGG_EXTERNAL, 0x2025, 0x1015};
    CHECK_OK(pk_unwind_sample(u, stack2, 5, lbr + 2, 3, 1, &err), &err);
    /* and from inside the library, its own frames under the leaf */
    const uint64_t stack3[] = {PK_AGG_EXTERNAL, PK_AGG_EXTERNAL, 0x2025, 0x1015};
    const pk_branch lbr3[] = {{PK_AGG_EXTERNAL, PK_AGG_EXTERNAL, 0}, {0x3010, PK_AGG_EXTERNAL, 0},
                              {PK_AGG_EXTERNAL, 0x3000, 0}, {0x2020, PK_AGG_EXTERNAL, 0}, {0x2018, 0x201c, 0}};
    CHECK_OK(pk_unwind_sample(u, stack3, 4, lbr3, 5, 1, &err), &err);
    const uint64_t foo_in_main[] = {0x1010, 0x2000}, bar_root[] = {0x3000};
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x201c, 0x2020), 3);
    CHECK_EQ_U64(range_count(&r, bar_root, 1, 0x3000, 0x3010), 2);
    uint32_t bar_id;
    CHECK_OK(pk_csraw_intern(&r, bar_root, 1, &bar_id, &err), &err);
    CHECK_EQ_U64(pk_pairmap_get(&r.branches, (uint64_t)bar_id << 32 | PK_CS_EXTERNAL_OFF, 0x3000), 3);
    const pk_unwind_stats *st = pk_unwinder_stats(u);
    CHECK_EQ_U64(st->call_mismatch, 0);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(recursion_is_compressed_and_depth_trimmed)
{
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    /* foo recursing through its call at 0x200b three times under main */
    const uint64_t stack[] = {0x2004, 0x2010, 0x2010, 0x2010, 0x1015};
    const pk_branch lbr[] = {{0x2018, 0x201c, 0}};
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    CHECK_OK(pk_unwind_sample(u, stack, 5, lbr, 1, 1, &err), &err);
    /* the branch interned the compressed context only */
    CHECK_EQ_U64(pk_csraw_num_ctxs(&r), 1);
    uint32_t n;
    const uint64_t *got = pk_csraw_ctx(&r, 0, &n);
    CHECK(n == 3 && got[0] == 0x1010 && got[1] == 0x200b && got[2] == 0x2000);
    CHECK_EQ_U64(pk_unwinder_stats(u)->recursion_compressed, 2);
    pk_unwinder_free(u);

    pk_unwind_opts o = {.max_depth = 1, .compress_recursion = 0};
    u = pk_unwinder_new(&fake, &o, &r, &err);
    const pk_branch lbr2[] = {{0x2018, 0x201c, 0}, {0x1008, 0x2000, 0}};
    CHECK_OK(pk_unwind_sample(u, stack, 5, lbr2, 2, 1, &err), &err);
    const uint64_t trimmed[] = {0x200b, 0x2000};
    CHECK_EQ_U64(range_count(&r, trimmed, 2, 0x2000, 0x2018), 1);
    CHECK(pk_unwinder_stats(u)->depth_trimmed >= 3); /* counted per interning */
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

TEST(interning_is_stable_under_many_contexts)
{
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    uint64_t sites[3];
    for (uint64_t i = 0; i < 20000; i++) {
        sites[0] = i; sites[1] = i * 3; sites[2] = i ^ 0x55;
        uint32_t id;
        CHECK_OK(pk_csraw_intern(&r, sites, 1 + i % 3, &id, &err), &err);
        CHECK_EQ_U64(id, i);
    }
    for (uint64_t i = 0; i < 20000; i += 997) {
        sites[0] = i; sites[1] = i * 3; sites[2] = i ^ 0x55;
        uint32_t id, n;
        CHECK_OK(pk_csraw_intern(&r, sites, 1 + i % 3, &id, &err), &err);
        CHECK_EQ_U64(id, i);
        const uint64_t *got = pk_csraw_ctx(&r, id, &n);
        CHECK(n == 1 + i % 3 && got[0] == i);
    }
    pk_csraw_free(&r);
}

/* Two samples of the walks_calls_and_returns_backwards program: the second
 * one taken in foo after bar's first call. */
static const uint64_t s1_stack[] = {0x3004, 0x2025, 0x1015};
static const pk_branch s1_lbr[] = {
    {0x2020, 0x3000, 0}, {0x2018, 0x201c, 0}, {0x3010, 0x2010, 0},
    {0x200b, 0x3000, 0}, {0x1010, 0x2000, 0}, {0x1008, 0x100c, 0},
};
static const uint64_t s2_stack[] = {0x2014, 0x1015};
static const pk_branch s2_lbr[] = {{0x3010, 0x2010, 0}, {0x200b, 0x3000, 0}, {0x1010, 0x2000, 0}};

static bool same_counts(const pk_csraw *a, const pk_csraw *b)
{
    if (a->ranges.len != b->ranges.len || a->branches.len != b->branches.len ||
        pk_csraw_num_ctxs(a) != pk_csraw_num_ctxs(b))
        return false;
    for (int which = 0; which < 2; which++) {
        const pk_pairmap *ma = which ? &a->branches : &a->ranges, *mb = which ? &b->branches : &b->ranges;
        for (size_t i = 0; i < ma->cap; i++) {
            const pk_pair_count *e = &ma->e[i];
            if (!e->n)
                continue;
            /* the same context (by its address list) in b */
            uint32_t n, id;
            const uint64_t *fr = pk_csraw_ctx(a, (uint32_t)(e->a >> 32), &n);
            pk_err err;
            size_t before = pk_csraw_num_ctxs(b);
            if (pk_csraw_intern((pk_csraw *)b, fr, n, &id, &err) || pk_csraw_num_ctxs(b) != before)
                return false;
            if (pk_pairmap_get(mb, (uint64_t)id << 32 | (uint32_t)e->a, e->b) != e->n)
                return false;
        }
    }
    return true;
}

TEST(a_weight_counts_like_repeated_samples)
{
    pk_csraw once, twice;
    pk_err err;
    CHECK_OK(pk_csraw_init(&once, 0, &err), &err);
    CHECK_OK(pk_csraw_init(&twice, 0, &err), &err);
    pk_unwinder *u1 = pk_unwinder_new(&fake, NULL, &once, &err), *u2 = pk_unwinder_new(&fake, NULL, &twice, &err);
    CHECK(u1 && u2);
    CHECK_OK(pk_unwind_sample(u1, s1_stack, 3, s1_lbr, 6, 3, &err), &err);
    for (int i = 0; i < 3; i++)
        CHECK_OK(pk_unwind_sample(u2, s1_stack, 3, s1_lbr, 6, 1, &err), &err);
    CHECK(same_counts(&once, &twice));
    CHECK_EQ_U64(pk_unwinder_stats(u1)->samples_unwound, 3);
    CHECK_EQ_U64(pk_unwinder_stats(u1)->walks, 1);
    CHECK_EQ_U64(pk_unwinder_stats(u2)->walks, 3);
    pk_unwinder_free(u1);
    pk_unwinder_free(u2);
    pk_csraw_free(&once);
    pk_csraw_free(&twice);
}

TEST(canonical_contexts_do_not_depend_on_sample_order)
{
    pk_csraw a, b;
    pk_err err;
    CHECK_OK(pk_csraw_init(&a, 0, &err), &err);
    CHECK_OK(pk_csraw_init(&b, 0, &err), &err);
    pk_unwinder *ua = pk_unwinder_new(&fake, NULL, &a, &err), *ub = pk_unwinder_new(&fake, NULL, &b, &err);
    CHECK(ua && ub);
    CHECK_OK(pk_unwind_sample(ua, s1_stack, 3, s1_lbr, 6, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(ua, s2_stack, 2, s2_lbr, 3, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(ub, s2_stack, 2, s2_lbr, 3, 1, &err), &err);
    CHECK_OK(pk_unwind_sample(ub, s1_stack, 3, s1_lbr, 6, 1, &err), &err);
    CHECK(same_counts(&a, &b));
    /* first-seen order differs ... */
    uint32_t na, nb;
    const uint64_t *fa = pk_csraw_ctx(&a, 0, &na), *fb = pk_csraw_ctx(&b, 0, &nb);
    CHECK(na != nb || memcmp(fa, fb, na * sizeof *fa) != 0);
    /* ... canonical order does not, and keeps the counts */
    CHECK_OK(pk_csraw_canonicalize(&a, &err), &err);
    CHECK_OK(pk_csraw_canonicalize(&b, &err), &err);
    CHECK(same_counts(&a, &b));
    for (uint32_t i = 0; i < pk_csraw_num_ctxs(&a); i++) {
        fa = pk_csraw_ctx(&a, i, &na);
        fb = pk_csraw_ctx(&b, i, &nb);
        CHECK(na == nb && !memcmp(fa, fb, na * sizeof *fa));
    }
    for (size_t i = 0; i < a.ranges.cap; i++)
        if (a.ranges.e[i].n)
            CHECK_EQ_U64(pk_pairmap_get(&b.ranges, a.ranges.e[i].a, a.ranges.e[i].b), a.ranges.e[i].n);
    pk_unwinder_free(ua);
    pk_unwinder_free(ub);
    pk_csraw_free(&a);
    pk_csraw_free(&b);
}

/* A sample whose call chain has no user frames (a kernel-only chain) cannot
 * be walked; its branches still go into the aggregator's flat profile,
 * which profgen falls back on when no sample had a context. A sample with
 * user frames is walked and stays out of the flat profile. */
TEST(samples_without_user_frames_count_flat)
{
    static const pk_agg_segment seg[] = {{0x1000, 0x3000, 0x1000, 0x3000, 5}};
    pk_agg_target t = {.path = "/bin/prog", .preferred_base = 0x1000, .segs = seg, .nsegs = 1};
    pk_agg_opts ao = {.pid = -1, .assume_unrelocated_without_mmap = true};
    pk_err err;
    pk_agg *a = pk_agg_new(&t, &ao, &err);
    CHECK(a != NULL);
    if (!a)
        return;
    pk_csraw r;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&fake, NULL, &r, &err);
    CHECK(u != NULL);
    /* in foo: cjmp 0x2018 -> 0x201c, after main's call 0x1010 -> foo */
    pk_branch br[2] = {{0x2018, 0x201c, 0}, {0x1010, 0x2000, 0}};
    uint64_t kernel_only[2] = {PK_CONTEXT_KERNEL, 0xffffffff81000000ull};
    uint64_t with_user[3] = {PK_CONTEXT_USER, 0x201c, 0x1015};
    pk_sample s = {.pid = 7, .tid = 7, .ip = 0x201c, .branch_nr = 2, .branches = br};
    s.callchain = kernel_only;
    s.callchain_nr = 2;
    CHECK_OK(pk_unwind_perf_sample(u, a, &s, &err), &err);
    s.callchain = with_user;
    s.callchain_nr = 3;
    CHECK_OK(pk_unwind_perf_sample(u, a, &s, &err), &err);
    CHECK_OK(pk_unwinder_finish(u, &err), &err);
    const pk_rawprof *flat = pk_agg_profile(a);
    CHECK_EQ_U64(pk_pairmap_get(&flat->branches, 0x2018, 0x201c), 1);
    CHECK_EQ_U64(pk_pairmap_get(&flat->branches, 0x1010, 0x2000), 1);
    CHECK_EQ_U64(pk_pairmap_get(&flat->ranges, 0x2000, 0x2018), 1);
    CHECK_EQ_U64(flat->stats.lbr_entries, 4); /* both samples counted in the statistics, once */
    CHECK_EQ_U64(pk_unwinder_stats(u)->samples_unwound, 1);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
    pk_agg_free(a);
}

/* The first instruction at or after a that never falls through (calls and
 * returns here), in a's function. */
static uint64_t fake_next_uncond(void *ctx, uint64_t a)
{
    for (uint64_t x = a; fake_class(ctx, x) >= 0; x++)
        if (pk_insn_is_uncond(fake_class(ctx, x)))
            return x;
    return UINT64_MAX;
}

/* The LBR of walks_calls_and_returns_backwards with bar's first return
 * recorded twice: the "range" from its target, foo's 0x2010, to the same
 * return at 0x3010 cannot have run (foo's call at 0x2020 is in between, and
 * it leaves foo). What ran before it, with branches the LBR may have lost, is
 * counted in its functions' root contexts; what ran after keeps its context.
 * A range going backwards breaks the walk the same way. */
TEST(entries_before_a_range_that_cannot_have_run_lose_their_context)
{
    pk_unwind_code code = fake;
    code.next_uncond = fake_next_uncond;
    const uint64_t stack[] = {0x3004, 0x2025, 0x1015};
    const pk_branch lbr[] = {
        {0x2020, 0x3000, 0}, {0x2018, 0x201c, 0}, {0x3010, 0x2010, 0}, {0x3010, 0x2010, 0},
        {0x200b, 0x3000, 0}, {0x1010, 0x2000, 0}, {0x1008, 0x100c, 0},
    };
    const pk_branch backwards[] = {{0x2018, 0x201c, 0}, {0x2018, 0x201c, 0}, {0x3010, 0x2010, 0}};
    pk_csraw r;
    pk_err err;
    CHECK_OK(pk_csraw_init(&r, 0, &err), &err);
    pk_unwinder *u = pk_unwinder_new(&code, NULL, &r, &err);
    CHECK(u != NULL);
    if (!u)
        return;
    CHECK_OK(pk_unwind_sample(u, stack, 3, lbr, 7, 1, &err), &err);
    const uint64_t foo_in_main[] = {0x1010, 0x2000}, bar_root[] = {0x3000}, foo_root[] = {0x2000};
    const uint64_t main_root[] = {0x1000};
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x201c, 0x2020), 1);
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2010, 0x2018), 1);
    CHECK_EQ_U64(range_count(&r, bar_root, 1, 0x3000, 0x3010), 1);
    CHECK_EQ_U64(range_count(&r, foo_root, 1, 0x2000, 0x200b), 1);
    CHECK_EQ_U64(range_count(&r, main_root, 1, 0x100c, 0x1010), 1);
    CHECK_EQ_U64(r.ranges.len, 5);
    uint32_t id;
    CHECK_OK(pk_csraw_intern(&r, bar_root, 1, &id, &err), &err);
    CHECK_EQ_U64(pk_pairmap_get(&r.branches, (uint64_t)id << 32 | 0x3010, 0x2010), 1);
    CHECK_EQ_U64(pk_unwinder_stats(u)->ranges_dropped, 1);
    CHECK_EQ_U64(pk_unwinder_stats(u)->entries_after_break, 4);
    /* backwards: the range [0x201c, 0x2018] */
    const uint64_t stack2[] = {0x2004, 0x1015};
    CHECK_OK(pk_unwind_sample(u, stack2, 2, backwards, 3, 1, &err), &err);
    CHECK_EQ_U64(range_count(&r, foo_root, 1, 0x2010, 0x2018), 1);
    CHECK_EQ_U64(pk_unwinder_stats(u)->ranges_dropped, 2);
    /* one end outside the binary: from foo's 0x2004 straight into other
     * code (a duplicated return from a library) cannot have run either;
     * a range with both ends outside is code that ran there */
    const uint64_t x = PK_AGG_EXTERNAL;
    const pk_branch outside[] = {{x, 0x2004, 0}, {x, 0x2004, 0}, {0x2002, x, 0}, {0x1010, 0x2000, 0}};
    CHECK_OK(pk_unwind_sample(u, stack2, 2, outside, 4, 1, &err), &err);
    CHECK_EQ_U64(pk_unwinder_stats(u)->ranges_dropped, 3);
    CHECK_EQ_U64(range_count(&r, foo_root, 1, 0x2000, 0x2002), 1);
    CHECK_EQ_U64(range_count(&r, foo_in_main, 2, 0x2000, 0x2002), 0);
    pk_unwinder_free(u);
    pk_csraw_free(&r);
}

int main(void) { return pk_test_main(); }

/* test_ip_stack.c — IP + call-stack samples into contexts, hits and call
 * observations, on a hand-made program:
 *   main 0x1000: call foo at 0x1010 (returns to 0x1015), call bar at 0x1020 (→0x1025)
 *   foo  0x2000: call bar at 0x200b (→0x2010), call foo at 0x2030 (→0x2035, recursion)
 *   bar  0x3000
 * Frames are leaf first, as pk_agg_translate_user_chain gives them. */
#include "test.h"
#include <string.h>
#include "unwind/ip_stack.h"
#include "binary/binary.h"
#include "perf/perf_data.h"

static int fake_class(void *ctx, uint64_t a)
{
    (void)ctx;
    switch (a) {
    case 0x1010: case 0x1020: case 0x200b: case 0x2030: return PK_INSN_CALL;
    }
    return a >= 0x1000 && a < 0x3100 ? PK_INSN_OTHER : -1;
}

static int fake_call_before(void *ctx, uint64_t a, uint64_t *site)
{
    (void)ctx;
    switch (a) {
    case 0x1015: *site = 0x1010; return 0;
    case 0x1025: *site = 0x1020; return 0;
    case 0x2010: *site = 0x200b; return 0;
    case 0x2035: *site = 0x2030; return 0;
    }
    return -1;
}

static uint64_t fake_entry(void *ctx, uint64_t a, uint64_t *end)
{
    (void)ctx;
    uint64_t e = a >= 0x1000 && a < 0x3100 ? a & ~(uint64_t)0xfff : 0;
    *end = e ? e + 0x100 : 0;
    return e;
}

static const pk_unwind_code code = {NULL, fake_class, fake_call_before, fake_entry, NULL, NULL};

/* The address list of a context, as text: "0x1010 0x2000". */
static const char *ctx_str(const pk_ipraw *r, uint32_t ctx)
{
    static char buf[256];
    uint32_t n;
    const uint64_t *f = pk_csraw_ctx(&r->ctxs, ctx, &n);
    size_t k = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s0x%llx", i ? " " : "", (unsigned long long)f[i]);
    return buf;
}

/* The hit count at (context text, address). */
static uint64_t hit(const pk_ipraw *r, const char *ctx, uint64_t addr)
{
    for (uint32_t c = 0; c < pk_csraw_num_ctxs(&r->ctxs); c++)
        if (!strcmp(ctx_str(r, c), ctx))
            return pk_pairmap_get(&r->hits, (uint64_t)c << 32 | (addr - r->ctxs.base), 0);
    return 0;
}

static uint64_t call(const pk_ipraw *r, const char *ctx, uint64_t site, uint64_t callee)
{
    for (uint32_t c = 0; c < pk_csraw_num_ctxs(&r->ctxs); c++)
        if (!strcmp(ctx_str(r, c), ctx))
            return pk_pairmap_get(&r->calls, (uint64_t)c << 32 | (site - r->ctxs.base), callee - r->ctxs.base);
    return 0;
}

TEST(contexts_hits_and_calls)
{
    pk_err err;
    pk_ipraw r;
    CHECK_OK(pk_ipraw_init(&r, &code, 0, -1, &err), &err);
    /* bar called from foo called from main, 3 samples; bar from main, 1 */
    const uint64_t s1[] = {0x3004, 0x2010, 0x1015};
    const uint64_t s2[] = {0x3008, 0x1025};
    const uint64_t s3[] = {0x2004, 0x1015}; /* in foo itself */
    CHECK_OK(pk_ipraw_add(&r, s1, 3, 2, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, s1, 3, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, s2, 2, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, s3, 2, 5, &err), &err);
    CHECK_OK(pk_ipraw_finish(&r, &err), &err);
    CHECK_EQ_U64(hit(&r, "0x1010 0x200b 0x3000", 0x3004), 3);
    CHECK_EQ_U64(hit(&r, "0x1020 0x3000", 0x3008), 1);
    CHECK_EQ_U64(hit(&r, "0x1010 0x2000", 0x2004), 5);
    /* the calls seen above the samples, in the caller's context */
    CHECK_EQ_U64(call(&r, "0x1010 0x2000", 0x200b, 0x3000), 3);
    CHECK_EQ_U64(call(&r, "0x1000", 0x1010, 0x2000), 3 + 5);
    CHECK_EQ_U64(call(&r, "0x1000", 0x1020, 0x3000), 1);
    CHECK_EQ_U64(r.stats.samples, 9);
    CHECK_EQ_U64(r.stats.used, 9);
    CHECK_EQ_U64(r.stats.distinct_stacks, 3);
    pk_ipraw_free(&r);
}

TEST(flat_contexts_keep_the_leaf_function_only)
{
    pk_err err;
    pk_ipraw r;
    CHECK_OK(pk_ipraw_init(&r, &code, 0, 0, &err), &err);
    const uint64_t s1[] = {0x3004, 0x2010, 0x1015};
    const uint64_t s2[] = {0x3004, 0x1025};
    CHECK_OK(pk_ipraw_add(&r, s1, 3, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, s2, 2, 1, &err), &err);
    CHECK_OK(pk_ipraw_finish(&r, &err), &err);
    CHECK_EQ_U64(hit(&r, "0x3000", 0x3004), 2);
    CHECK_EQ_U64(call(&r, "0x2000", 0x200b, 0x3000), 1);
    CHECK_EQ_U64(call(&r, "0x1000", 0x1010, 0x2000), 1);
    CHECK_EQ_U64(call(&r, "0x1000", 0x1020, 0x3000), 1);
    pk_ipraw_free(&r);
}

TEST(chains_are_cut_where_they_stop_making_sense)
{
    pk_err err;
    pk_ipraw r;
    CHECK_OK(pk_ipraw_init(&r, &code, 0, -1, &err), &err);
    const uint64_t ext[] = {0x3004, 0x2010, PK_AGG_EXTERNAL, 0x1015};
    const uint64_t notcall[] = {0x3004, 0x2011, 0x1015}; /* 0x2011 follows no call */
    const uint64_t outside[] = {PK_AGG_EXTERNAL, 0x2010};
    const uint64_t nofunc[] = {0x5000};
    CHECK_OK(pk_ipraw_add(&r, ext, 4, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, notcall, 3, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, outside, 2, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, nofunc, 1, 1, &err), &err);
    CHECK_OK(pk_ipraw_add(&r, NULL, 0, 1, &err), &err);
    CHECK_EQ_U64(r.stats.stack_cut_external, 1);
    CHECK_EQ_U64(r.stats.stack_cut_not_call, 1);
    CHECK_EQ_U64(r.stats.leaf_outside, 1);
    CHECK_EQ_U64(r.stats.leaf_no_func, 1);
    CHECK_EQ_U64(r.stats.no_user_frames, 1);
    CHECK_EQ_U64(r.stats.used, 2);
    CHECK_EQ_U64(hit(&r, "0x200b 0x3000", 0x3004), 1); /* callers above the external frame dropped */
    CHECK_EQ_U64(hit(&r, "0x3000", 0x3004), 1);        /* nothing above the bad return address */
    /* pprof's convention: return address - 1 */
    r.allow_minus_one = true;
    const uint64_t m1[] = {0x3004, 0x200f, 0x1014};
    CHECK_OK(pk_ipraw_add(&r, m1, 3, 1, &err), &err);
    CHECK_EQ_U64(r.stats.frames_minus_one, 2);
    CHECK_EQ_U64(hit(&r, "0x1010 0x200b 0x3000", 0x3004), 1);
    pk_ipraw_free(&r);
}

TEST(recursion_is_compressed_and_children_found)
{
    pk_err err;
    pk_ipraw r;
    CHECK_OK(pk_ipraw_init(&r, &code, 0, -1, &err), &err);
    /* foo → foo → foo → bar, from main */
    const uint64_t s[] = {0x3004, 0x2010, 0x2035, 0x2035, 0x1015};
    CHECK_OK(pk_ipraw_add(&r, s, 5, 1, &err), &err);
    CHECK_OK(pk_ipraw_finish(&r, &err), &err);
    CHECK_EQ_U64(hit(&r, "0x1010 0x2030 0x200b 0x3000", 0x3004), 1);
    CHECK(r.stats.recursion_compressed >= 1);
    /* the child of main's context through the call at 0x1010 is foo's */
    uint32_t parent = UINT32_MAX, child;
    for (uint32_t c = 0; c < pk_csraw_num_ctxs(&r.ctxs); c++)
        if (!strcmp(ctx_str(&r, c), "0x1000"))
            parent = c;
    CHECK(parent != UINT32_MAX);
    if (parent == UINT32_MAX)
        return;
    CHECK_OK(pk_ipraw_child(&r, parent, 0x1010, 0x2000, &child, &err), &err);
    CHECK_STR(ctx_str(&r, child), "0x1010 0x2000");
    pk_ipraw_free(&r);
}

/* Which events weigh code by time: software clocks and cycle counters;
 * retired instructions and branches count executions. */
TEST(events_that_fire_on_time)
{
    pk_perf_attr a = {.type = 1, .config = 0}; /* cpu-clock */
    CHECK(pk_perf_attr_counts_time(&a));
    a.config = 1; /* task-clock */
    CHECK(pk_perf_attr_counts_time(&a));
    a.config = 2; /* page-faults */
    CHECK(!pk_perf_attr_counts_time(&a));
    a = (pk_perf_attr){.type = 0, .config = 0}; /* cycles */
    CHECK(pk_perf_attr_counts_time(&a));
    a.config = 9; /* ref-cycles */
    CHECK(pk_perf_attr_counts_time(&a));
    a.config = (8ull << 32) | 0; /* cycles of a hybrid PMU (type 8 in the upper half) */
    CHECK(pk_perf_attr_counts_time(&a));
    a.config = 1; /* instructions */
    CHECK(!pk_perf_attr_counts_time(&a));
    a.config = 4; /* branch-instructions */
    CHECK(!pk_perf_attr_counts_time(&a));
    a = (pk_perf_attr){.type = 4, .config = 0xc0}; /* a raw event: not known */
    CHECK(!pk_perf_attr_counts_time(&a));
}

/* The note speaks when most samples are timed, and only then. */
TEST(time_weight_note)
{
    pk_ip_stats st = {0};
    char buf[768], small[16];
    CHECK(pk_ip_time_weight_note(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    st.samples = 100;
    st.time_weighted = 50;
    CHECK(pk_ip_time_weight_note(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    st.time_weighted = 51;
    int n = pk_ip_time_weight_note(&st, buf, sizeof buf);
    CHECK(n > 0 && (size_t)n == strlen(buf));
    CHECK(strstr(buf, "51 % of the samples (51 of 100)") != NULL);
    CHECK(strstr(buf, "instructions") != NULL);
    CHECK(pk_ip_time_weight_note(&st, small, sizeof small) == 15 && small[15] == 0);
}

TEST(cfi_warning_threshold)
{
    char buf[768];
    pk_ip_stats st = {0};
    CHECK(pk_ip_cfi_warning(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    /* every copy cut at its end, most before the leaf's caller (short
     * copies, frames larger than them): no warning */
    st.stacks_unwound = 1000;
    st.stacks_unwound_short = 1000;
    st.stacks_unwound_leaf = 600;
    st.stacks_unwound_no_fde = 100;
    CHECK(pk_ip_cfi_warning(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    /* more than a tenth at code without an FDE: one warning, with the share */
    st.stacks_unwound_no_fde = 101;
    CHECK(pk_ip_cfi_warning(&st, buf, sizeof buf) > 0);
    CHECK(strstr(buf, "10.1 % of the stack copies (101 of 1000) stopped at code no FDE") &&
          strstr(buf, "-fno-asynchronous-unwind-tables"));
    char small[16];
    CHECK(pk_ip_cfi_warning(&st, small, sizeof small) == 15 && small[15] == 0);
}

int main(void) { return pk_test_main(); }

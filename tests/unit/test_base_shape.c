/* test_base_shape.c — pk_cs_base_shape: a base profile of CSSPGO from IP
 * samples takes its function's context-free body (counts and call targets)
 * scaled to its own mass; its inlinees, and functions whose checksum
 * differs or that the context-free profile lacks, stay as they were. And
 * pk_ipraw_flatten: the observations under their leaf functions. */
#include "test.h"
#include "format/format.h"
#include "profgen/base_shape.h"

#include <string.h>

/* f: three own body entries (sum 80), an inlinee at 4, head 10. */
static const char nested_text[] =
    "f:1000:10\n"
    " 1: 10\n"
    " 2: 40 g:40\n"
    " 3: 30\n"
    " 4: h:100\n"
    "  1: 100\n"
    "  !CFGChecksum: 5\n"
    " !CFGChecksum: 7\n"
    "k:50:5\n"
    " 1: 50\n"
    " !CFGChecksum: 9\n"
    "m:20:2\n"
    " 1: 20\n"
    " !CFGChecksum: 11\n";

/* f inferred once: another shape (entry 1 : 3 = 1 : 8 instead of 1 : 3),
 * other call targets at 2, a body entry at 4 (the call site f inlined);
 * k's checksum differs; m is absent. */
static const char flat_text[] =
    "f:600:20\n"
    " 1: 20\n"
    " 2: 20 g:10 q:10\n"
    " 3: 160\n"
    " 4: 40 h:40\n"
    " !CFGChecksum: 7\n"
    "k:10:1\n"
    " 1: 10\n"
    " !CFGChecksum: 999\n";

static int read_text(pk_profset *ps, const char *t, pk_err *e)
{
    return pk_profset_init(ps, e) || pk_text_read(ps, (const uint8_t *)t, strlen(t), "t.prof", e) ? -1 : 0;
}

static uint64_t body(const pk_fprof *f, uint32_t line)
{
    uint64_t c = UINT64_MAX;
    pk_fprof_get_body(f, line, 0, &c);
    return c;
}

static uint64_t call(pk_profset *ps, const pk_fprof *f, uint32_t line, const char *target)
{
    pk_name_id id;
    uint64_t c = 0;
    if (pk_profset_lookup_name(ps, target, strlen(target), &id) == 0)
        pk_fprof_get_call(f, line, 0, id, &c);
    return c;
}

TEST(a_base_profile_takes_its_functions_shape_at_its_own_mass)
{
    pk_profset nested, flat;
    pk_err e;
    CHECK_OK(read_text(&nested, nested_text, &e), &e);
    CHECK_OK(read_text(&flat, flat_text, &e), &e);
    pk_base_shape_stats st;
    CHECK_OK(pk_cs_base_shape(&nested, &flat, &st, &e), &e);
    CHECK_EQ_U64(st.profiles, 1);
    CHECK_EQ_U64(st.no_flat, 2);
    pk_fprof *f = pk_profset_find(&nested, "f");
    CHECK(f != NULL);
    if (f) {
        /* flat's 20 / 20 / 160 at the entries f has (sum 200) scaled to
         * f's 80: x 0.4 */
        CHECK_EQ_U64(body(f, 1), 8);
        CHECK_EQ_U64(body(f, 2), 8);
        CHECK_EQ_U64(body(f, 3), 64);
        CHECK_EQ_U64(call(&nested, f, 2, "g"), 4);
        CHECK_EQ_U64(call(&nested, f, 2, "q"), 4);
        CHECK_EQ_U64(f->head, 8);
        CHECK_EQ_U64(f->total, 1000); /* its own mass is what it was */
        /* the inlined call site keeps the inlinee alone */
        CHECK_EQ_U64(body(f, 4), UINT64_MAX);
        CHECK_EQ_U64(call(&nested, f, 4, "h"), 0);
        pk_name_id h;
        CHECK(pk_profset_lookup_name(&nested, "h", 1, &h) == 0);
        const pk_fprof *in = pk_fprof_find_callsite(f, 4, 0, h);
        CHECK(in != NULL);
        if (in)
            CHECK_EQ_U64(body(in, 1), 100);
    }
    const pk_fprof *k = pk_profset_find(&nested, "k"), *m = pk_profset_find(&nested, "m");
    CHECK(k && m);
    if (k && m) {
        CHECK_EQ_U64(body(k, 1), 50); /* another CFG: left alone */
        CHECK_EQ_U64(body(m, 1), 20); /* nothing to take */
    }
    pk_profset_free(&nested);
    pk_profset_free(&flat);
}

TEST(flattening_ip_observations_keeps_the_leaf_functions)
{
    pk_unwind_code code = {0};
    pk_ipraw deep, flat;
    pk_err e;
    const uint64_t base = 0x400000, main_site = 0x401010, f_entry = 0x402000, g_site = 0x402020, g_entry = 0x403000;
    CHECK_OK(pk_ipraw_init(&deep, &code, base, -1, &e), &e);
    CHECK_OK(pk_ipraw_init(&flat, &code, base, 0, &e), &e);
    /* the same leaf function g under two contexts, f under one */
    const uint64_t c1[] = {main_site, g_site, g_entry}, c2[] = {g_site, g_entry}, c3[] = {main_site, f_entry};
    uint32_t a, b, c;
    CHECK_OK(pk_csraw_intern(&deep.ctxs, c1, 3, &a, &e), &e);
    CHECK_OK(pk_csraw_intern(&deep.ctxs, c2, 2, &b, &e), &e);
    CHECK_OK(pk_csraw_intern(&deep.ctxs, c3, 2, &c, &e), &e);
    pk_pairmap_add(&deep.hits, (uint64_t)a << 32 | (g_entry + 4 - base), 0, 3);
    pk_pairmap_add(&deep.hits, (uint64_t)b << 32 | (g_entry + 4 - base), 0, 5);
    pk_pairmap_add(&deep.hits, (uint64_t)c << 32 | (f_entry + 8 - base), 0, 7);
    pk_pairmap_add(&deep.calls, (uint64_t)c << 32 | (g_site - base), g_entry - base, 3);
    deep.calls_recorded = true;
    CHECK_OK(pk_ipraw_flatten(&deep, &flat, &e), &e);
    CHECK_EQ_U64(pk_csraw_num_ctxs(&flat.ctxs), 2); /* [f], [g] */
    uint64_t hits_g = 0, hits_f = 0, calls = 0;
    for (size_t i = 0; i < flat.hits.cap; i++) {
        const pk_pair_count *h = &flat.hits.e[i];
        if (!h->n)
            continue;
        uint32_t n;
        const uint64_t *w = pk_csraw_ctx(&flat.ctxs, (uint32_t)(h->a >> 32), &n);
        CHECK_EQ_U64(n, 1);
        if (w[0] == g_entry)
            hits_g += h->n;
        if (w[0] == f_entry)
            hits_f += h->n;
    }
    for (size_t i = 0; i < flat.calls.cap; i++)
        calls += flat.calls.e[i].n;
    CHECK_EQ_U64(hits_g, 8);
    CHECK_EQ_U64(hits_f, 7);
    CHECK_EQ_U64(calls, 3);
    /* a profile that keeps contexts is refused */
    pk_ipraw deep2;
    CHECK_OK(pk_ipraw_init(&deep2, &code, base, -1, &e), &e);
    CHECK(pk_ipraw_flatten(&deep, &deep2, &e) == -1);
    pk_ipraw_free(&deep2);
    pk_ipraw_free(&deep);
    pk_ipraw_free(&flat);
}

int main(void) { return pk_test_main(); }

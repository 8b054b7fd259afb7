/* test_profile_model.c — the in-memory profile model: building, views in
 * LLVM order, merge arithmetic, summary (numbers from llvm-profdata-19
 * show --detailed-summary on the same profile), contexts. */
#include "test.h"
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>

static pk_name_id nm(pk_profset *ps, const char *s)
{
    pk_name_id id = 0;
    pk_err e;
    if (pk_profset_intern(ps, s, strlen(s), &id, &e))
        abort();
    return id;
}

/* The example of the format note: main (with an inlinee) and foo. */
static void build_example(pk_profset *ps, uint64_t w)
{
    pk_err e;
    pk_fprof *m = pk_profset_get_func(ps, nm(ps, "main"), &e);
    m->total += 1000 * w;
    m->head += 10 * w;
    pk_fprof_add_body(m, 1, 0, 10 * w, &e);
    pk_fprof_add_body(m, 2, 0, 100 * w, &e);
    pk_fprof_add_call(m, 2, 0, nm(ps, "foo"), 60 * w, &e);
    pk_fprof_add_call(m, 2, 0, nm(ps, "bar"), 40 * w, &e);
    pk_fprof_add_body(m, 3, 2, 50 * w, &e);
    pk_fprof *in = pk_fprof_callsite(ps, m, 4, 0, nm(ps, "inlined_fn"), &e);
    in->total += 300 * w;
    pk_fprof_add_body(in, 1, 0, 200 * w, &e);
    pk_fprof_add_body(in, 2, 1, 100 * w, &e);
    pk_fprof_add_call(in, 2, 1, nm(ps, "baz"), 100 * w, &e);
    pk_fprof *f = pk_profset_get_func(ps, nm(ps, "foo"), &e);
    f->total += 500 * w;
    f->head += 60 * w;
    pk_fprof_add_body(f, 0, 0, 60 * w, &e);
    pk_fprof_add_body(f, 1, 0, 440 * w, &e);
}

TEST(intern_is_stable)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_name_id a = nm(&ps, "alpha"), b = nm(&ps, "beta");
    CHECK(a != b);
    CHECK_EQ_U64(nm(&ps, "alpha"), a);
    char buf[32];
    for (int i = 0; i < 5000; i++) {   /* forces table growth */
        snprintf(buf, sizeof buf, "f%d", i);
        nm(&ps, buf);
    }
    CHECK_EQ_U64(nm(&ps, "beta"), b);
    CHECK_STR(pk_profset_name(&ps, a), "alpha");
    CHECK_EQ_U64(pk_profset_name_guid(&ps, nm(&ps, "main")), 15822663052811949562ULL);
    pk_name_id g;
    CHECK_OK(pk_profset_intern_guid(&ps, 42, &g, &e), &e);
    CHECK_STR(pk_profset_name(&ps, g), "42");
    CHECK_EQ_U64(pk_profset_name_guid(&ps, g), 42);
    CHECK(pk_profset_name_is_guid(&ps, g));
    pk_profset_free(&ps);
}

TEST(views_follow_llvm_order)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    build_example(&ps, 1);
    pk_fprof *m = pk_profset_find(&ps, "main");
    CHECK(m != NULL);
    pk_fprof_view v;
    CHECK_OK(pk_fprof_view_build(&ps, m, &v, &e), &e);
    CHECK_EQ_U64(v.nbody, 3);
    CHECK_EQ_U64(v.body[0].line, 1);
    CHECK_EQ_U64(v.body[1].line, 2);
    CHECK_EQ_U64(v.body[1].ncalls, 2);
    CHECK_STR(pk_profset_name(&ps, v.body[1].calls[0].name), "foo"); /* count descending */
    CHECK_STR(pk_profset_name(&ps, v.body[1].calls[1].name), "bar");
    CHECK_EQ_U64(v.body[2].disc, 2);
    CHECK_EQ_U64(v.nsites, 1);
    CHECK_EQ_U64(v.sites[0].line, 4);
    pk_fprof_view_free(&v);
    pk_fprof **fs;
    size_t n;
    CHECK_OK(pk_profset_sorted(&ps, &fs, &n, &e), &e);
    CHECK_EQ_U64(n, 2);
    CHECK_STR(pk_profset_name(&ps, fs[0]->name), "main");
    free(fs);
    CHECK_EQ_U64(pk_fprof_body_sum(m), 10 + 100 + 50 + 200 + 100);
    CHECK_EQ_U64(pk_fprof_max_count(m), 200);
    pk_profset_free(&ps);
}

TEST(summary_matches_llvm)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    build_example(&ps, 1);
    pk_summary s;
    CHECK_OK(pk_profset_summary(&ps, &s, &e), &e);
    CHECK_EQ_U64(s.total_count, 960);
    CHECK_EQ_U64(s.max_count, 440);
    CHECK_EQ_U64(s.max_function_count, 60);
    CHECK_EQ_U64(s.num_counts, 7);
    CHECK_EQ_U64(s.num_functions, 2);
    CHECK_EQ_U64(s.num_entries, 16);
    static const uint64_t want[16][2] = {{440, 1}, {440, 1}, {440, 1}, {440, 1}, {440, 1}, {200, 2},
                                         {200, 2}, {100, 4}, {100, 4}, {60, 5},  {50, 6},  {50, 6},
                                         {10, 7},  {10, 7},  {10, 7},  {10, 7}};
    for (int i = 0; i < 16; i++) {
        CHECK_EQ_U64(s.entries[i].cutoff, pk_summary_default_cutoffs[i]);
        CHECK_EQ_U64(s.entries[i].min_count, want[i][0]);
        CHECK_EQ_U64(s.entries[i].num_counts, want[i][1]);
    }
    CHECK_EQ_U64(pk_summary_threshold(&s, 990000), 50);
    pk_profset_free(&ps);
}

TEST(merge_adds_with_weights)
{
    pk_profset a, b;
    pk_err e;
    CHECK_OK(pk_profset_init(&a, &e), &e);
    CHECK_OK(pk_profset_init(&b, &e), &e);
    build_example(&a, 1);
    nm(&b, "unrelated");   /* different name ids in the source set */
    build_example(&b, 1);
    size_t mm;
    CHECK_OK(pk_profset_merge(&a, &b, 3, &mm, &e), &e);
    CHECK_EQ_U64(mm, 0);
    pk_fprof *m = pk_profset_find(&a, "main");
    CHECK_EQ_U64(m->total, 4000);
    CHECK_EQ_U64(m->head, 40);
    uint64_t c = 0;
    CHECK(pk_fprof_get_body(m, 2, 0, &c) == 0);
    CHECK_EQ_U64(c, 400);
    pk_name_id inl;
    CHECK(pk_profset_lookup_name(&a, "inlined_fn", 10, &inl) == 0);
    pk_fprof *in = pk_fprof_find_callsite(m, 4, 0, inl);
    CHECK(in != NULL);
    CHECK_EQ_U64(in->total, 1200);
    pk_fprof_view v;
    CHECK_OK(pk_fprof_view_build(&a, in, &v, &e), &e);
    CHECK_EQ_U64(v.body[1].calls[0].count, 400);
    pk_fprof_view_free(&v);
    CHECK_EQ_U64(pk_profset_count(&a), 2);
    /* saturation instead of wraparound */
    pk_fprof_add_body(m, 1, 0, UINT64_MAX, &e);
    CHECK(pk_fprof_get_body(m, 1, 0, &c) == 0);
    CHECK_EQ_U64(c, UINT64_MAX);
    /* recompute: Σ body + Σ inlinee totals */
    pk_fprof *f = pk_profset_find(&a, "foo");
    CHECK_EQ_U64(pk_fprof_recompute_total(f), 2000);
    pk_profset_free(&a);
    pk_profset_free(&b);
}

TEST(merge_refuses_mixed_kinds_and_checksum_mismatch)
{
    pk_profset a, b;
    pk_err e;
    CHECK_OK(pk_profset_init(&a, &e), &e);
    CHECK_OK(pk_profset_init(&b, &e), &e);
    build_example(&a, 1);
    build_example(&b, 1);
    b.kind = PK_PROF_PROBE;
    CHECK(pk_profset_merge(&a, &b, 1, NULL, &e) == -1);
    CHECK(strstr(e.msg, "probe") != NULL);
    a.kind = PK_PROF_PROBE;
    pk_profset_find(&a, "main")->checksum = 1;
    pk_profset_find(&b, "main")->checksum = 2;
    size_t mm = 0;
    CHECK_OK(pk_profset_merge(&a, &b, 1, &mm, &e), &e);
    CHECK_EQ_U64(mm, 1);
    CHECK_EQ_U64(pk_profset_find(&a, "main")->total, 1000); /* dropped */
    CHECK_EQ_U64(pk_profset_find(&a, "foo")->total, 1000);
    pk_profset_free(&a);
    pk_profset_free(&b);
}

TEST(contexts_text_round_trip)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    const char *t = "main:12 @ bar:3.1 @ foo";
    pk_ctx_id c, c2;
    CHECK_OK(pk_profset_ctx_parse(&ps, t, strlen(t), &c, &e), &e);
    char buf[128];
    CHECK_EQ_U64(pk_profset_ctx_text(&ps, c, buf, sizeof buf), strlen(t));
    CHECK_STR(buf, t);
    CHECK_OK(pk_profset_ctx_parse(&ps, t, strlen(t), &c2, &e), &e);
    CHECK_EQ_U64(c, c2);
    size_t n;
    const pk_ctx_frame *fr = pk_profset_ctx(&ps, c, &n);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(fr[1].line, 3);
    CHECK_EQ_U64(fr[1].disc, 1);
    /* names with colons: the location is after the last colon */
    const char *t2 = "ns::f(int):4 @ g";
    CHECK_OK(pk_profset_ctx_parse(&ps, t2, strlen(t2), &c2, &e), &e);
    fr = pk_profset_ctx(&ps, c2, &n);
    CHECK_STR(pk_profset_name(&ps, fr[0].name), "ns::f(int)");
    CHECK(pk_profset_ctx_parse(&ps, "main @ foo", 10, &c2, &e) == -1);
    CHECK(pk_profset_ctx_parse(&ps, "main:x @ foo", 12, &c2, &e) == -1);
    CHECK(pk_profset_ctx_parse(&ps, ":1 @ foo", 8, &c2, &e) == -1);
    /* ordering: frame by frame, then shorter first */
    pk_ctx_id a1, a2;
    CHECK_OK(pk_profset_ctx_parse(&ps, "main", 4, &a1, &e), &e);
    CHECK_OK(pk_profset_ctx_parse(&ps, "main:3 @ foo", 12, &a2, &e), &e);
    CHECK(pk_profset_ctx_cmp(&ps, a1, a2) < 0);
    /* a removed profile disappears from lookups and sorted output */
    pk_fprof *f = pk_profset_get_ctx(&ps, a2, &e);
    CHECK(f != NULL);
    CHECK_EQ_U64(pk_profset_count(&ps), 1);
    pk_profset_remove(&ps, f);
    CHECK_EQ_U64(pk_profset_count(&ps), 0);
    CHECK(pk_profset_find_ctx(&ps, a2) == NULL);
    pk_profset_free(&ps);
}

TEST(many_counts_scale)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_fprof *f = pk_profset_get_func(&ps, nm(&ps, "hot"), &e);
    for (uint32_t i = 0; i < 200000; i++)
        pk_fprof_add_body(f, i % 5000, i % 7, 1, &e);
    CHECK_EQ_U64(pk_fprof_num_body(f), 35000); /* (i % 5000, i % 7) cycles every 35000 */
    CHECK_EQ_U64(pk_fprof_body_sum(f), 200000);
    pk_profset_scale(&ps, 1, 2);
    CHECK_EQ_U64(pk_fprof_body_sum(f), 25000 * 3 + 10000 * 2); /* 25000 slots had 6, 10000 had 5 */
    pk_profset_free(&ps);
}

/* Zero-filled bodies: repeats collapse, and a profile left with few slots
 * but an index keeps finding what is added later (a lookup that missed the
 * index once made a second slot for one location). */
TEST(touch_bodies_then_add)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_fprof *f = pk_profset_get_func(&ps, nm(&ps, "dup"), &e);
    uint64_t locs[20];
    for (int i = 0; i < 20; i++)
        locs[i] = pk_loc((uint32_t)(i % 15) + 1, 0); /* 15 distinct, 5 repeats */
    CHECK_OK(pk_fprof_touch_bodies(f, locs, 20, &e), &e);
    CHECK_EQ_U64(pk_fprof_num_body(f), 15);
    CHECK_OK(pk_fprof_add_body(f, 3, 0, 84, &e), &e);
    CHECK_OK(pk_fprof_add_body(f, 40, 0, 1, &e), &e);
    CHECK_OK(pk_fprof_add_call(f, 40, 0, nm(&ps, "callee"), 1, &e), &e);
    CHECK_OK(pk_fprof_add_body(f, 40, 0, 2, &e), &e);
    CHECK_EQ_U64(pk_fprof_num_body(f), 16);
    uint64_t c = 0;
    CHECK(pk_fprof_get_body(f, 40, 0, &c) == 0);
    CHECK_EQ_U64(c, 3);
    CHECK(pk_fprof_get_body(f, 3, 0, &c) == 0);
    CHECK_EQ_U64(c, 84);
    /* past SLOT_SCAN and into a larger index */
    for (uint32_t i = 100; i < 300; i++)
        CHECK_OK(pk_fprof_add_body(f, i, 0, i, &e), &e);
    CHECK_OK(pk_fprof_touch_bodies(f, locs, 20, &e), &e);
    CHECK_EQ_U64(pk_fprof_num_body(f), 216);
    CHECK(pk_fprof_get_body(f, 299, 0, &c) == 0);
    CHECK_EQ_U64(c, 299);
    CHECK_EQ_U64(pk_fprof_body_sum(f), 84 + 3 + (100 + 299) * 200 / 2);
    pk_profset_free(&ps);
}

/* A context profile as probe_cs leaves them: every probe touched, counts on
 * some, call targets, an inlinee. */
static pk_fprof *build_ctx_like(pk_profset *ps, const char *name)
{
    pk_err e;
    pk_fprof *f = pk_profset_get_func(ps, nm(ps, name), &e);
    f->total = 777;
    f->head = 7;
    f->checksum = 0x1234;
    f->attrs = 2;
    uint64_t locs[40];
    for (uint32_t i = 0; i < 40; i++)
        locs[i] = pk_loc(i + 1, 0);
    if (pk_fprof_touch_bodies(f, locs, 40, &e) || pk_fprof_add_body(f, 5, 0, 50, &e) ||
        pk_fprof_add_body(f, 39, 0, 390, &e) || pk_fprof_add_call(f, 5, 0, nm(ps, "callee"), 30, &e) ||
        pk_fprof_add_call(f, 90, 0, nm(ps, "other"), 9, &e))
        abort();
    /* an inlinee at 95: a slot anchoring the call site, with no body entry */
    pk_fprof *in = pk_fprof_callsite(ps, f, 95, 0, nm(ps, "inl"), &e);
    if (!in || pk_fprof_add_body(in, 1, 0, 11, &e))
        abort();
    return f;
}

static void check_views_equal(pk_profset *ps, const pk_fprof *a, const pk_fprof *b)
{
    pk_fprof_view va, vb;
    pk_err e;
    CHECK_OK(pk_fprof_view_build(ps, a, &va, &e), &e);
    CHECK_OK(pk_fprof_view_build(ps, b, &vb, &e), &e);
    CHECK_EQ_U64(va.nbody, vb.nbody);
    for (size_t i = 0; i < va.nbody && i < vb.nbody; i++) {
        CHECK_EQ_U64(va.body[i].line, vb.body[i].line);
        CHECK_EQ_U64(va.body[i].count, vb.body[i].count);
        CHECK_EQ_U64(va.body[i].ncalls, vb.body[i].ncalls);
        for (uint32_t k = 0; k < va.body[i].ncalls && k < vb.body[i].ncalls; k++) {
            CHECK_EQ_U64(va.body[i].calls[k].name, vb.body[i].calls[k].name);
            CHECK_EQ_U64(va.body[i].calls[k].count, vb.body[i].calls[k].count);
        }
    }
    CHECK_EQ_U64(va.nsites, vb.nsites);
    for (size_t i = 0; i < va.nsites && i < vb.nsites; i++) {
        CHECK_EQ_U64(va.sites[i].line, vb.sites[i].line);
        CHECK_EQ_U64(va.sites[i].callee->name, vb.sites[i].callee->name);
        CHECK_EQ_U64(pk_fprof_body_sum(va.sites[i].callee), pk_fprof_body_sum(vb.sites[i].callee));
    }
    pk_fprof_view_free(&va);
    pk_fprof_view_free(&vb);
}

/* The pre-inliner moves a context into a fresh base profile with
 * pk_fprof_take: the same result as merging it there, without copying. */
TEST(take_equals_merge_into_empty)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_fprof *s1 = build_ctx_like(&ps, "s1"), *s2 = build_ctx_like(&ps, "s2");
    pk_fprof *d1 = pk_profset_get_func(&ps, nm(&ps, "d1"), &e);
    pk_fprof *d2 = pk_profset_get_func(&ps, nm(&ps, "d2"), &e);
    CHECK_OK(pk_fprof_merge(&ps, d1, &ps, s1, 1, &e), &e);
    CHECK(pk_fprof_take(d2, s2));
    CHECK_EQ_U64(d2->total, d1->total);
    CHECK_EQ_U64(d2->head, d1->head);
    CHECK_EQ_U64(d2->checksum, d1->checksum);
    CHECK_EQ_U64(d2->attrs, d1->attrs);
    check_views_equal(&ps, d1, d2);
    /* src is left empty; dst keeps working (lookups through the moved index) */
    CHECK_EQ_U64(pk_fprof_num_body(s2), 0);
    CHECK_EQ_U64(s2->total, 0);
    CHECK_EQ_U64(pk_fprof_body_sum(s2), 0);
    CHECK(pk_fprof_find_callsite(s2, 95, 0, nm(&ps, "inl")) == NULL);
    CHECK(pk_fprof_find_callsite(d2, 95, 0, nm(&ps, "inl")) != NULL);
    uint64_t c = 0;
    CHECK(pk_fprof_get_body(s2, 39, 0, &c) != 0);
    for (pk_fprof *d = d1;; d = d2) {
        CHECK_OK(pk_fprof_add_body(d, 39, 0, 1, &e), &e);
        CHECK_OK(pk_fprof_add_call(d, 90, 0, nm(&ps, "other"), 1, &e), &e);
        CHECK(pk_fprof_get_body(d, 39, 0, &c) == 0);
        CHECK_EQ_U64(c, 391);
        if (d == d2)
            break;
    }
    check_views_equal(&ps, d1, d2);
    /* a second take into the now non-empty profile is refused, unchanged */
    pk_fprof *s3 = build_ctx_like(&ps, "s3");
    CHECK(!pk_fprof_take(d2, s3));
    CHECK_EQ_U64(pk_fprof_num_body(s3), 41); /* 40 touched + the call at 90 */
    CHECK(pk_fprof_get_body(d2, 39, 0, &c) == 0);
    CHECK_EQ_U64(c, 391);
    pk_profset_free(&ps);
}

/* Views list the body in location order whatever order it was built in:
 * short bodies, long ones (sorted by another path), already sorted ones. */
TEST(view_sorts_long_bodies)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    static const uint32_t sizes[] = {5, 33, 500};
    for (size_t s = 0; s < 3; s++) {
        for (int sorted = 0; sorted < 2; sorted++) {
            char name[32];
            snprintf(name, sizeof name, "f%zu_%d", s, sorted);
            pk_fprof *f = pk_profset_get_func(&ps, nm(&ps, name), &e);
            uint32_t n = sizes[s];
            for (uint32_t i = 0; i < n; i++) {
                /* a permutation of 0..n-1 (n is not a multiple of 7) */
                uint32_t j = sorted ? i : (i * 7 + 3) % n;
                CHECK_OK(pk_fprof_add_body(f, j / 3 + 1, j % 3, 1000 + j, &e), &e);
                if (j % 5 == 0)
                    CHECK_OK(pk_fprof_add_call(f, j / 3 + 1, j % 3, nm(&ps, "t"), j, &e), &e);
            }
            pk_fprof_view v;
            CHECK_OK(pk_fprof_view_build(&ps, f, &v, &e), &e);
            CHECK_EQ_U64(v.nbody, n);
            for (uint32_t i = 0; i < v.nbody; i++) {
                CHECK_EQ_U64(v.body[i].line, i / 3 + 1);
                CHECK_EQ_U64(v.body[i].disc, i % 3);
                CHECK_EQ_U64(v.body[i].count, 1000 + i);
                CHECK_EQ_U64(v.body[i].ncalls, i % 5 == 0);
                if (v.body[i].ncalls)
                    CHECK_EQ_U64(v.body[i].calls[0].count, i);
            }
            pk_fprof_view_free(&v);
        }
    }
    pk_profset_free(&ps);
}

/* The summary of a flat CS profile (contexts summed by leaf function and
 * location without building merged profiles) equals the summary of the
 * profiles merged by leaf function the ordinary way. */
TEST(flat_cs_summary_equals_merged)
{
    pk_profset cs, merged;
    pk_err e;
    CHECK_OK(pk_profset_init(&cs, &e), &e);
    CHECK_OK(pk_profset_init(&merged, &e), &e);
    cs.kind |= PK_PROF_CS;
    uint64_t rng = 777;
#define RND(m) (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng % (m))
    const char *leaves[] = {"f0", "f1", "f2", "f3", "f4"};
    for (int c = 0; c < 120; c++) {
        pk_ctx_frame fr[3] = {{nm(&cs, "main"), 1 + (uint32_t)RND(4), 0},
                              {nm(&cs, c % 2 ? "g" : "h"), 2 + (uint32_t)RND(3), (uint32_t)RND(2)},
                              {nm(&cs, leaves[RND(5)]), 0, 0}};
        size_t nfr = 2 + RND(2);
        if (nfr == 2)
            fr[1] = fr[2];
        pk_ctx_id id;
        CHECK_OK(pk_profset_intern_ctx(&cs, fr, nfr, &id, &e), &e);
        pk_fprof *f = pk_profset_get_ctx(&cs, id, &e);
        CHECK(f != NULL);
        if (!f)
            break;
        f->head += RND(50);
        for (int k = 0; k < 12; k++) {
            /* zeros, discriminators and lines past the direct array included */
            uint32_t line = RND(10) == 0 ? 70000 + (uint32_t)RND(3) : 1 + (uint32_t)RND(30);
            uint32_t disc = RND(4) == 0 ? 1 + (uint32_t)RND(2) : 0;
            uint64_t count = RND(3) ? RND(1000) : 0;
            CHECK_OK(pk_fprof_add_body(f, line, disc, count, &e), &e);
        }
        pk_fprof_recompute_total(f);
    }
#undef RND
    for (size_t i = 0; i < cs.top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&cs.top, pk_fprof *, i);
        pk_name_id id;
        CHECK_OK(pk_profset_intern(&merged, pk_profset_name(&cs, f->name), pk_profset_name_len(&cs, f->name), &id,
                                   &e), &e);
        pk_fprof *d = pk_profset_get_func(&merged, id, &e);
        CHECK(d != NULL);
        if (d)
            CHECK_OK(pk_fprof_merge(&merged, d, &cs, f, 1, &e), &e);
    }
    pk_summary a, b;
    CHECK_OK(pk_profset_summary(&cs, &a, &e), &e);
    CHECK_OK(pk_profset_summary(&merged, &b, &e), &e);
    CHECK(a.num_counts > 100);
    CHECK_EQ_U64(a.total_count, b.total_count);
    CHECK_EQ_U64(a.max_count, b.max_count);
    CHECK_EQ_U64(a.max_function_count, b.max_function_count);
    CHECK_EQ_U64(a.num_counts, b.num_counts);
    CHECK_EQ_U64(a.num_functions, b.num_functions);
    CHECK_EQ_U64(a.num_entries, b.num_entries);
    for (uint32_t k = 0; k < a.num_entries && k < b.num_entries; k++) {
        CHECK_EQ_U64(a.entries[k].min_count, b.entries[k].min_count);
        CHECK_EQ_U64(a.entries[k].num_counts, b.entries[k].num_counts);
    }
    pk_profset_free(&cs);
    pk_profset_free(&merged);
}

int main(void) { return pk_test_main(); }

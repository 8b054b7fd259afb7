/* test_preinline.c — the pre-inliner on a hand-made flat CS profile:
 * a hot context is kept (ContextShouldBeInlined), a cold one is merged into
 * the callee's base profile, and the merge carries its subtree along. */
#include "test.h"
#include "profgen/preinline.h"

static pk_fprof *ctx_prof(pk_profset *ps, const char *text)
{
    pk_ctx_id id;
    pk_err err;
    if (pk_profset_ctx_parse(ps, text, strlen(text), &id, &err))
        return NULL;
    return pk_profset_get_ctx(ps, id, &err);
}

static pk_name_id name(pk_profset *ps, const char *s)
{
    pk_name_id id = 0;
    pk_err err;
    pk_profset_intern(ps, s, strlen(s), &id, &err);
    return id;
}

/* The hot chain main -> foo -> bar: main's body 3 x 1000, foo called 1000
 * times, bar 500 times from foo. Returns false when a context could not be
 * made. */
static bool hot_chain(pk_profset *ps, pk_fprof **m, pk_fprof **mf, pk_fprof **mfb)
{
    pk_err err;
    *m = ctx_prof(ps, "main");
    *mf = ctx_prof(ps, "main:1 @ foo");
    *mfb = ctx_prof(ps, "main:1 @ foo:2 @ bar");
    if (!*m || !*mf || !*mfb)
        return false;
    for (int i = 1; i <= 3; i++)
        pk_fprof_add_body(*m, i, 0, 1000, &err);
    pk_fprof_add_call(*m, 1, 0, name(ps, "foo"), 1000, &err);
    (*mf)->head = 1000;
    pk_fprof_add_body(*mf, 1, 0, 1000, &err);
    pk_fprof_add_body(*mf, 2, 0, 500, &err);
    pk_fprof_add_call(*mf, 2, 0, name(ps, "bar"), 500, &err);
    (*mfb)->head = 500;
    pk_fprof_add_body(*mfb, 1, 0, 500, &err);
    return true;
}

TEST(hot_context_kept_cold_context_merged)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    ps.kind = PK_PROF_CS | PK_PROF_PROBE;
    pk_fprof *m, *mf, *mfb;
    bool chain = hot_chain(&ps, &m, &mf, &mfb);
    pk_fprof *bf = ctx_prof(&ps, "baz:3 @ foo");
    pk_fprof *bfq = ctx_prof(&ps, "baz:3 @ foo:4 @ qux");
    pk_fprof *bz = ctx_prof(&ps, "baz");
    CHECK(chain && bf && bfq && bz);
    if (!chain || !bf || !bfq || !bz)
        return;
    pk_fprof_add_body(bz, 1, 0, 3, &err);
    pk_fprof_add_call(bz, 3, 0, name(&ps, "foo"), 1, &err);
    bf->head = 1;
    pk_fprof_add_body(bf, 1, 0, 1, &err);
    pk_fprof_add_body(bf, 4, 0, 1, &err);
    bfq->head = 1;
    pk_fprof_add_body(bfq, 1, 0, 1, &err);
    for (size_t i = 0; i < ps.top.len; i++)
        pk_fprof_recompute_total(PK_VEC_AT(&ps.top, pk_fprof *, i));

    pk_preinline_opts o;
    pk_preinline_defaults(&o);
    o.use_sample_count_size = true;
    pk_preinline_stats st;
    CHECK_OK(pk_preinline(&ps, NULL, &o, &st, &err), &err);
    CHECK(ps.kind & PK_PROF_PREINLINED);
    /* kept: the hot chain under main */
    CHECK(!mf->removed && (mf->attrs & PK_ATTR_SHOULD_BE_INLINED));
    CHECK(!mfb->removed && (mfb->attrs & PK_ATTR_SHOULD_BE_INLINED));
    /* merged: the cold context of foo under baz, into [foo], with its child */
    CHECK(bf->removed && bfq->removed);
    pk_fprof *base_foo = pk_profset_find(&ps, "foo");
    CHECK(base_foo != NULL);
    if (base_foo) {
        uint64_t c = 0;
        CHECK(pk_fprof_get_body(base_foo, 4, 0, &c) == 0 && c == 1);
    }
    /* qux has no hot caller, so it is visited first and its only context is
     * promoted straight into [qux]. Survivors: three bases, the hot chain. */
    CHECK_EQ_U64(pk_profset_count(&ps), 6);
    CHECK(pk_profset_find(&ps, "baz") != NULL && pk_profset_find(&ps, "main") != NULL);
    pk_fprof *base_qux = pk_profset_find(&ps, "qux");
    CHECK(base_qux != NULL && base_qux->head == 1);
    CHECK_EQ_U64(st.contexts_before, 6);
    CHECK(st.inlined >= 2);
    CHECK(st.merged_into_base >= 2);
    pk_profset_free(&ps);
}

/* main's unit has foo's body, not bar's (bar is defined in another unit). */
static bool same_unit_as_main(void *ctx, const char *root, const char *callee)
{
    (*(int *)ctx)++;
    return strcmp(root, "main") || strcmp(callee, "bar");
}

TEST(callee_of_another_unit_kept_as_a_call)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    ps.kind = PK_PROF_CS | PK_PROF_PROBE;
    pk_fprof *m, *mf, *mfb;
    bool chain = hot_chain(&ps, &m, &mf, &mfb);
    CHECK(chain);
    if (!chain)
        return;
    for (size_t i = 0; i < ps.top.len; i++)
        pk_fprof_recompute_total(PK_VEC_AT(&ps.top, pk_fprof *, i));
    pk_preinline_opts o;
    pk_preinline_defaults(&o);
    o.use_sample_count_size = true;
    o.cold_threshold = 10; /* every context here is small enough */
    /* the same profile without the callback inlines bar too */
    pk_profset ps2;
    CHECK_OK(pk_profset_init(&ps2, &err), &err);
    ps2.kind = ps.kind;
    CHECK_OK(pk_profset_merge(&ps2, &ps, 1, NULL, &err), &err);
    pk_preinline_stats st2;
    CHECK_OK(pk_preinline(&ps2, NULL, &o, &st2, &err), &err);
    CHECK(st2.inlined == 2 && st2.other_unit == 0);
    pk_profset_free(&ps2);
    int asked = 0;
    o.can_inline = same_unit_as_main;
    o.can_inline_ctx = &asked;
    pk_preinline_stats st;
    CHECK_OK(pk_preinline(&ps, NULL, &o, &st, &err), &err);
    /* foo (main's unit) inlined; bar, as hot and as small, stays a call: its
     * counts go to [bar], where bar's own unit finds them */
    CHECK(!mf->removed && (mf->attrs & PK_ATTR_SHOULD_BE_INLINED));
    CHECK(mfb->removed);
    pk_fprof *base_bar = pk_profset_find(&ps, "bar");
    CHECK(base_bar != NULL && base_bar->head == 500);
    CHECK_EQ_U64(st.other_unit, 1);
    CHECK(asked >= 2);
    pk_profset_free(&ps);
}

TEST(refuses_non_cs_profiles)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    pk_preinline_opts o;
    pk_preinline_defaults(&o);
    pk_preinline_stats st;
    CHECK(pk_preinline(&ps, NULL, &o, &st, &err) == -1);
    CHECK(strstr(err.msg, "context-sensitive") != NULL);
    pk_profset_free(&ps);
}

TEST(nesting_moves_contexts_under_their_call_sites)
{
    pk_profset in, out;
    pk_err err;
    CHECK_OK(pk_profset_init(&in, &err), &err);
    CHECK_OK(pk_profset_init(&out, &err), &err);
    in.kind = PK_PROF_CS | PK_PROF_PROBE | PK_PROF_PREINLINED;
    pk_fprof *m = ctx_prof(&in, "main");
    pk_fprof *mf = ctx_prof(&in, "main:2 @ foo");
    pk_fprof *orphan = ctx_prof(&in, "gone:7 @ bar"); /* its caller has no profile */
    if (!m || !mf || !orphan) {
        CHECK(0);
        return;
    }
    pk_fprof_add_body(m, 1, 0, 10, &err);
    pk_fprof_add_body(m, 2, 0, 30, &err);
    pk_fprof_add_call(m, 2, 0, name(&in, "foo"), 30, &err);   /* replaced by the inlinee */
    pk_fprof_add_body(m, 3, 0, 5, &err);
    pk_fprof_add_call(m, 3, 0, name(&in, "baz"), 5, &err);    /* stays a call */
    m->head = 10;
    mf->checksum = 77;
    mf->attrs = PK_ATTR_SHOULD_BE_INLINED;
    pk_fprof_add_body(mf, 1, 0, 30, &err);
    pk_fprof_add_body(orphan, 1, 0, 4, &err);
    orphan->head = 4;
    pk_fprof_recompute_total(m);
    pk_fprof_recompute_total(mf);
    pk_fprof_recompute_total(orphan);
    CHECK_OK(pk_cs_nest(&in, &out, &err), &err);
    CHECK(!(out.kind & PK_PROF_CS) && (out.kind & PK_PROF_PREINLINED));
    pk_fprof *om = pk_profset_find(&out, "main");
    CHECK(om != NULL);
    if (om) {
        uint64_t c;
        CHECK(pk_fprof_get_body(om, 2, 0, &c) != 0);             /* emptied: removed */
        CHECK(pk_fprof_get_body(om, 3, 0, &c) == 0 && c == 5);
        pk_name_id foo;
        CHECK(pk_profset_lookup_name(&out, "foo", 3, &foo) == 0);
        pk_fprof *in_foo = pk_fprof_find_callsite(om, 2, 0, foo);
        CHECK(in_foo && in_foo->checksum == 77 && in_foo->attrs == PK_ATTR_SHOULD_BE_INLINED);
        CHECK_EQ_U64(om->total, 10 + 5 + 30);                    /* 45 - 30 removed + 30 nested */
        CHECK_EQ_U64(om->head, 10);
    }
    pk_fprof *ob = pk_profset_find(&out, "bar");
    CHECK(ob != NULL && ob->head == 4 && ob->total == 4);
    CHECK_EQ_U64(pk_profset_count(&out), 2);
    pk_profset_free(&in);
    pk_profset_free(&out);
}

TEST(cold_contexts_merge_into_their_base)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    ps.kind = PK_PROF_CS;
    pk_fprof *hot = ctx_prof(&ps, "main:1 @ foo");
    pk_fprof *cold = ctx_prof(&ps, "bar:2 @ foo");
    pk_fprof *base = ctx_prof(&ps, "foo");
    if (!hot || !cold || !base) {
        CHECK(0);
        return;
    }
    for (int i = 1; i <= 50; i++)
        pk_fprof_add_body(hot, i, 0, 1000, &err);
    pk_fprof_add_body(cold, 1, 0, 1, &err);
    pk_fprof_add_body(base, 2, 0, 2, &err);
    pk_fprof_recompute_total(hot);
    pk_fprof_recompute_total(cold);
    pk_fprof_recompute_total(base);
    uint64_t merged;
    CHECK_OK(pk_cs_merge_cold(&ps, 1, false, &merged, &err), &err);
    CHECK_EQ_U64(merged, 1);
    CHECK(!hot->removed && cold->removed && !base->removed);
    uint64_t c = 0;
    CHECK(pk_fprof_get_body(base, 1, 0, &c) == 0 && c == 1);
    CHECK_EQ_U64(base->total, 3);
    pk_profset_free(&ps);
}

/* An interpreter's recursion: exec calls handle hot (its context of handle
 * is worth inlining), handle calls exec back, cold. handle is met first in
 * the profile, so an order that follows discovery visits handle first and
 * merges [exec:1 @ handle] into handle's base profile before exec could
 * inline it. The cycle must be entered at exec, the caller of its hot edge. */
TEST(recursion_cycle_is_decided_by_the_caller_of_its_hot_edge)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    ps.kind = PK_PROF_CS | PK_PROF_PROBE;
    /* (created last, handle is met first: the trie lists newest first) */
    pk_fprof *m = ctx_prof(&ps, "main");
    pk_fprof *mx = ctx_prof(&ps, "main:1 @ exec");
    pk_fprof *x = ctx_prof(&ps, "exec");
    pk_fprof *xh = ctx_prof(&ps, "exec:1 @ handle");
    pk_fprof *h = ctx_prof(&ps, "handle");
    pk_fprof *hx = ctx_prof(&ps, "handle:3 @ exec");
    if (!h || !hx || !x || !xh || !m || !mx) {
        CHECK(0);
        return;
    }
    pk_fprof_add_body(h, 1, 0, 2, &err);
    pk_fprof_add_call(h, 3, 0, name(&ps, "exec"), 2, &err);
    h->head = 2;
    hx->head = 2;
    pk_fprof_add_body(hx, 1, 0, 2, &err);
    for (int i = 1; i <= 4; i++)
        pk_fprof_add_body(x, i, 0, 5000, &err);
    pk_fprof_add_call(x, 1, 0, name(&ps, "handle"), 5000, &err);
    x->head = 10;
    xh->head = 5000;
    for (int i = 1; i <= 3; i++)
        pk_fprof_add_body(xh, i, 0, 5000, &err);
    pk_fprof_add_body(m, 1, 0, 1, &err);
    pk_fprof_add_call(m, 1, 0, name(&ps, "exec"), 1, &err);
    mx->head = 1;
    pk_fprof_add_body(mx, 1, 0, 1, &err);
    /* a tail of lukewarm code elsewhere, so that the summary's cold count is
     * low (as in any real profile) and the recursive call is not cold */
    pk_fprof *other = ctx_prof(&ps, "other");
    for (int i = 1; other && i <= 100; i++)
        pk_fprof_add_body(other, (uint32_t)i, 0, (uint64_t)i, &err);
    for (size_t i = 0; i < ps.top.len; i++)
        pk_fprof_recompute_total(PK_VEC_AT(&ps.top, pk_fprof *, i));

    pk_preinline_opts o;
    pk_preinline_defaults(&o);
    o.use_sample_count_size = true;
    pk_preinline_stats st;
    CHECK_OK(pk_preinline(&ps, NULL, &o, &st, &err), &err);
    /* kept where exec inlines it, not merged into handle's base */
    CHECK(!xh->removed && (xh->attrs & PK_ATTR_SHOULD_BE_INLINED));
    pk_fprof *base_h = pk_profset_find(&ps, "handle");
    CHECK(base_h != NULL);
    if (base_h) {
        uint64_t c = 0;
        CHECK(pk_fprof_get_body(base_h, 2, 0, &c) != 0 || c == 0); /* none of [exec:1 @ handle]'s lines */
        CHECK(base_h->total < 100);
    }
    pk_profset_free(&ps);
}

/* llvm-profgen's cs-preinline shape: main calls foo, foo calls bar, every
 * call as cold as the coldest count, so the hot call graph has no edge.
 * The callee's context must still be decided by its caller first: visited
 * callee first, [main:1 @ foo:3 @ bar] would be merged into [bar] before foo
 * could inline it. foo is too large for main under the cold threshold (50
 * lines), bar is small (1 line): foo keeps [foo:3 @ bar]. */
TEST(cold_calls_are_decided_caller_first)
{
    pk_profset ps;
    pk_err err;
    CHECK_OK(pk_profset_init(&ps, &err), &err);
    ps.kind = PK_PROF_CS;
    pk_fprof *m = ctx_prof(&ps, "main");
    pk_fprof *mf = ctx_prof(&ps, "main:1 @ foo");
    pk_fprof *mfb = ctx_prof(&ps, "main:1 @ foo:3 @ bar");
    if (!m || !mf || !mfb) {
        CHECK(0);
        return;
    }
    pk_fprof_add_body(m, 1, 0, 14, &err);
    pk_fprof_add_call(m, 1, 0, name(&ps, "foo"), 14, &err);
    mf->head = 14;
    for (uint32_t i = 1; i <= 50; i++)
        pk_fprof_add_body(mf, i, 0, 14, &err);
    pk_fprof_add_call(mf, 3, 0, name(&ps, "bar"), 14, &err);
    mfb->head = 14;
    pk_fprof_add_body(mfb, 1, 0, 14, &err);
    for (size_t i = 0; i < ps.top.len; i++)
        pk_fprof_recompute_total(PK_VEC_AT(&ps.top, pk_fprof *, i));

    pk_preinline_opts o;
    pk_preinline_defaults(&o);
    o.use_sample_count_size = true;
    o.hot_threshold = 3000;
    o.cold_threshold = 45;
    pk_preinline_stats st;
    CHECK_OK(pk_preinline(&ps, NULL, &o, &st, &err), &err);
    CHECK_EQ_U64(st.inlined, 1);
    pk_ctx_id fb;
    CHECK_OK(pk_profset_ctx_parse(&ps, "foo:3 @ bar", strlen("foo:3 @ bar"), &fb, &err), &err);
    pk_fprof *kept = pk_profset_find_ctx(&ps, fb);
    CHECK(kept != NULL && !kept->removed && (kept->attrs & PK_ATTR_SHOULD_BE_INLINED));
    CHECK(pk_profset_find(&ps, "bar") == NULL);
    CHECK(pk_profset_find(&ps, "foo") != NULL && pk_profset_find(&ps, "main") != NULL);
    pk_profset_free(&ps);
}

int main(void) { return pk_test_main(); }

/* test_report.c — the report's model (context tree, function fold,
 * decisions) and the page it builds, on hand-made profiles. */
#include "test.h"
#include "report/report_int.h"

#include <stdlib.h>

static pk_name_id intern(pk_profset *ps, const char *s)
{
    pk_name_id id = 0;
    pk_err err;
    pk_profset_intern(ps, s, strlen(s), &id, &err);
    return id;
}

/* [main] 10, [main:3 @ foo] 100 (inlined by the pre-inliner), [main:5 @ foo] 40 (not) */
static void flat_cs(pk_profset *ps)
{
    pk_err err;
    pk_profset_init(ps, &err);
    ps->kind |= PK_PROF_CS | PK_PROF_PREINLINED;
    static const struct { const char *ctx; uint64_t count; uint32_t attrs; } rows[] = {
        {"main", 10, 0}, {"main:3 @ foo", 100, PK_ATTR_SHOULD_BE_INLINED}, {"main:5 @ foo", 40, 0},
    };
    for (size_t i = 0; i < 3; i++) {
        pk_ctx_id c;
        pk_profset_ctx_parse(ps, rows[i].ctx, strlen(rows[i].ctx), &c, &err);
        pk_fprof *f = pk_profset_get_ctx(ps, c, &err);
        pk_fprof_add_body(f, 1, 0, rows[i].count, &err);
        f->total = rows[i].count;
        f->attrs = rows[i].attrs;
    }
}

static char *page(const pk_profset *ps, const char *title, size_t *len)
{
    pk_report_input in = {.ps = ps, .profile_path = "t.prof", .format = PK_FMT_TEXT, .title = title};
    char *html = NULL;
    pk_err err;
    if (pk_report_build(&in, &html, len, &err)) {
        fprintf(stderr, "pk_report_build: %s\n", err.msg);
        return NULL;
    }
    return html;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

TEST(context_tree_paths_and_inclusive_totals)
{
    pk_profset ps;
    flat_cs(&ps);
    pk_report_input in = {.ps = &ps};
    rep r;
    memset(&r, 0, sizeof r);
    r.in = &in;
    r.ps = &ps;
    pk_err err;
    CHECK_OK(rep_model_build(&r, &err), &err);
    /* root, main, foo@3, foo@5 */
    CHECK_EQ_U64(r.nodes.len, 4);
    const rep_node *n = r.nodes.data;
    CHECK_EQ_U64(n[0].total, 150);
    CHECK_EQ_U64(n[1].name, intern(&ps, "main"));
    CHECK_EQ_U64(n[1].self, 10);
    CHECK_EQ_U64(n[1].total, 150);
    for (int i = 2; i < 4; i++) {
        CHECK_EQ_U64(n[i].parent, 1);
        CHECK_EQ_U64(n[i].depth, 2);
        CHECK(n[i].flags & REP_NODE_PROFILE);
    }
    CHECK_EQ_U64(n[2].line, 3);
    CHECK(n[2].flags & REP_NODE_SHOULD_INLINE);
    CHECK(!(n[3].flags & REP_NODE_SHOULD_INLINE));
    /* foo folded over its two contexts */
    size_t nf;
    rep_func **fs = rep_sorted_funcs(&r, &nf);
    CHECK_EQ_U64(nf, 2);
    if (fs && nf == 2) {
        CHECK_EQ_U64(fs[0]->name, intern(&ps, "foo"));
        CHECK_EQ_U64(fs[0]->self, 140);
        CHECK_EQ_U64(fs[0]->contexts, 2);
        uint64_t *at1 = pk_u64map_get(&fs[0]->locs, pk_loc(1, 0));
        CHECK(at1 && *at1 == 140);
    }
    free(fs);
    rep_model_free(&r);
    pk_profset_free(&ps);
}

TEST(flat_decisions_come_from_should_be_inlined)
{
    pk_profset ps;
    flat_cs(&ps);
    size_t len;
    char *html = page(&ps, NULL, &len);
    CHECK(html != NULL);
    if (html) {
        CHECK(!strncmp(html, "<!DOCTYPE html>", 15));
        CHECK_EQ_U64(strlen(html), len);
        CHECK(strstr(html, "content=\"default-src 'none';") != NULL);
        CHECK(strstr(html, "\"mode\":\"flat\",\"inlined\":1,\"not_inlined\":1,\"inlined_samples\":100,"
                           "\"not_inlined_samples\":40") != NULL);
        CHECK(strstr(html, "\"context\":\"main:3 @ foo\"") != NULL);
        CHECK(strstr(html, "\"samples\":150") != NULL);
        CHECK(strstr(html, "<title>pgokit report: t.prof</title>") != NULL);
    }
    free(html);
    pk_profset_free(&ps);
}

TEST(nested_decisions_are_the_marked_callsites)
{
    pk_profset ps;
    pk_err err;
    pk_profset_init(&ps, &err);
    pk_fprof *m = pk_profset_get_func(&ps, intern(&ps, "main"), &err);
    pk_fprof_add_body(m, 1, 0, 5, &err);
    pk_fprof *in = pk_fprof_callsite(&ps, m, 3, 0, intern(&ps, "foo"), &err);
    pk_fprof_add_body(in, 1, 0, 70, &err);
    in->attrs = PK_ATTR_SHOULD_BE_INLINED | PK_ATTR_WAS_INLINED;
    pk_fprof *b = pk_profset_get_func(&ps, intern(&ps, "foo"), &err);
    pk_fprof_add_body(b, 1, 0, 30, &err);
    pk_fprof_recompute_total(m);
    pk_fprof_recompute_total(b);
    size_t len;
    char *html = page(&ps, NULL, &len);
    CHECK(html != NULL);
    if (html) {
        CHECK(strstr(html, "\"mode\":\"nested\",\"inlined\":1,\"not_inlined\":0,\"inlined_samples\":70") != NULL);
        CHECK(strstr(html, "\"binary_inlined\":true") != NULL);
        CHECK(strstr(html, "\"base_profiles\":2,\"base_samples\":35,") != NULL);
        /* base profiles [name, own, with inlinees]: main 5/75, foo 30/30 (name indexes vary) */
        CHECK(strstr(html, ",5,75]") != NULL);
        CHECK(strstr(html, ",30,30]") != NULL);
        CHECK(strstr(html, "\"preinlined\":true") != NULL);
    }
    free(html);
    pk_profset_free(&ps);
}

TEST(names_and_title_cannot_break_out_of_the_page)
{
    pk_profset ps;
    pk_err err;
    pk_profset_init(&ps, &err);
    const char *evil = "x</script><img src=y onerror=alert(1)>&";
    pk_fprof *f = pk_profset_get_func(&ps, intern(&ps, evil), &err);
    pk_fprof_add_body(f, 1, 0, 9, &err);
    f->total = 9;
    size_t len;
    char *html = page(&ps, "a <b>title</b> & \"more\"", &len);
    CHECK(html != NULL);
    if (html) {
        CHECK(!strstr(html, "<img"));
        CHECK(!strstr(html, "</script><"));
        /* the data element and the script element close, nothing else */
        CHECK_EQ_U64(count_of(html, "</script>"), 2);
        CHECK(strstr(html, "x\\u003c/script\\u003e\\u003cimg src=y onerror=alert(1)\\u003e\\u0026") != NULL);
        CHECK(strstr(html, "<title>a &lt;b&gt;title&lt;/b&gt; &amp; &quot;more&quot;</title>") != NULL);
    }
    free(html);
    pk_profset_free(&ps);
}

TEST(empty_profile_still_makes_a_page)
{
    pk_profset ps;
    pk_err err;
    pk_profset_init(&ps, &err);
    size_t len;
    char *html = page(&ps, NULL, &len);
    CHECK(html != NULL);
    if (html) {
        CHECK(strstr(html, "\"samples\":0") != NULL);
        CHECK(strstr(html, "\"mode\":\"none\"") != NULL);
        CHECK(strstr(html, "</html>\n") != NULL);
    }
    free(html);
    pk_profset_free(&ps);
}

int main(void) { return pk_test_main(); }

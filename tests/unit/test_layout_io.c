/* Text traces (plain and llvm-profdata listings), call graphs, names, and the
 * ordering-file writers for lld, gold and GNU ld. */
#include "layout/layout.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>

static const char *write_tmp(const char *name, const char *text)
{
    char *p = pk_test_path(name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

static char *slurp(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

TEST(names_intern_find)
{
    pk_layout_names t;
    pk_err err;
    CHECK_OK(pk_layout_names_init(&t, &err), &err);
    CHECK_EQ_U64(pk_layout_names_intern(&t, "main", 4, &err), 0);
    CHECK_EQ_U64(pk_layout_names_intern(&t, "foo_bar", 3, &err), 1); /* "foo" */
    CHECK_EQ_U64(pk_layout_names_intern(&t, "main", 4, &err), 0);
    CHECK_EQ_U64(pk_layout_names_find(&t, "foo", 3), 1);
    CHECK(pk_layout_names_find(&t, "fo", 2) < 0);
    for (int i = 0; i < 5000; i++) {
        char b[32];
        int n = snprintf(b, sizeof b, "f%d", i);
        CHECK_EQ_U64(pk_layout_names_intern(&t, b, (size_t)n, &err), (uint64_t)i + 2);
    }
    CHECK_STR(pk_layout_name(&t, 1), "foo");
    CHECK_STR(pk_layout_name(&t, 4001), "f3999");
    pk_layout_names_free(&t);
}

TEST(plain_traces)
{
    const char *p = write_tmp("plain.txt",
                              "# comment\n"
                              "main a b a c\n"
                              "\n"
                              "@3  main\tc d\r\n");
    pk_layout_names t;
    pk_layout_trace_set s;
    pk_err err;
    CHECK_OK(pk_layout_names_init(&t, &err), &err);
    CHECK_OK(pk_layout_read_text_traces(p, &t, &s, &err), &err);
    CHECK_EQ_U64(s.traces.len, 2);
    const pk_layout_trace *t0 = &PK_VEC_AT(&s.traces, pk_layout_trace, 0);
    const pk_layout_trace *t1 = &PK_VEC_AT(&s.traces, pk_layout_trace, 1);
    CHECK_EQ_U64(t0->len, 4); /* the repeated "a" is dropped */
    CHECK_EQ_U64(t0->weight, 1);
    CHECK_EQ_U64(t1->len, 3);
    CHECK_EQ_U64(t1->weight, 3);
    CHECK_STR(pk_layout_name(&t, t0->funcs[3]), "c");
    CHECK_STR(pk_layout_name(&t, t1->funcs[2]), "d");
    CHECK_EQ_U64(t1->funcs[1], t0->funcs[3]);
    pk_layout_trace_set_free(&s);
    pk_layout_names_free(&t);
}

TEST(llvm_listing_traces)
{
    const char *p = write_tmp("llvm.txt",
                              "Instrumentation level: IR  entry_first = 0\n"
                              "Total functions: 5\n"
                              "Temporal Profile Traces (samples=2 seen=2):\n"
                              "  Temporal Profile Trace 0 (weight=1 count=3):\n"
                              "    main\n"
                              "    t.c;sf\n"
                              "    a\n"
                              "  Temporal Profile Trace 1 (weight=7 count=2):\n"
                              "    main\n"
                              "    c\n");
    pk_layout_names t;
    pk_layout_trace_set s;
    pk_err err;
    CHECK_OK(pk_layout_names_init(&t, &err), &err);
    CHECK_OK(pk_layout_read_text_traces(p, &t, &s, &err), &err);
    CHECK_EQ_U64(s.traces.len, 2);
    CHECK_EQ_U64(t.n, 4);
    const pk_layout_trace *t0 = &PK_VEC_AT(&s.traces, pk_layout_trace, 0);
    const pk_layout_trace *t1 = &PK_VEC_AT(&s.traces, pk_layout_trace, 1);
    CHECK_EQ_U64(t0->len, 3);
    CHECK_STR(pk_layout_name(&t, t0->funcs[1]), "sf");
    CHECK_EQ_U64(t1->weight, 7);
    pk_layout_trace_set_free(&s);
    pk_layout_names_free(&t);
}

TEST(bad_trace_inputs)
{
    pk_layout_names t;
    pk_layout_trace_set s;
    pk_err err = {{0}};
    CHECK_OK(pk_layout_names_init(&t, &err), &err);
    CHECK(pk_layout_read_text_traces(write_tmp("empty.txt", "# nothing\n\n"), &t, &s, &err) != 0);
    CHECK(strstr(err.msg, "no trace") != NULL);
    CHECK(pk_layout_read_text_traces(write_tmp("badw.txt", "a b\n@x1 c\n"), &t, &s, &err) != 0);
    CHECK(strstr(err.msg, "line 2") != NULL && strstr(err.msg, "offset 4") != NULL);
    char bin[16] = "a b\n\0\1\2";
    FILE *f = fopen(write_tmp("bin.txt", ""), "w");
    fwrite(bin, 1, 8, f);
    fclose(f);
    char path[512];
    snprintf(path, sizeof path, "%s/bin.txt", pk_test_tmpdir());
    CHECK(pk_layout_read_text_traces(path, &t, &s, &err) != 0);
    CHECK(strstr(err.msg, "NUL") != NULL);
    CHECK(pk_layout_read_text_traces("/nonexistent/x", &t, &s, &err) != 0);
    pk_layout_names_free(&t);
}

TEST(call_graph_text)
{
    const char *p = write_tmp("cg.txt", "# g\nnode main 100 10\narc main foo 7\nnode foo 32 70\n");
    pk_layout_names t;
    pk_layout_call_graph g;
    pk_err err = {{0}};
    CHECK_OK(pk_layout_names_init(&t, &err), &err);
    pk_layout_call_graph_init(&g);
    CHECK_OK(pk_layout_read_call_graph(p, &t, &g, &err), &err);
    CHECK_EQ_U64(g.sizes.len, 2);
    CHECK_EQ_U64(PK_VEC_AT(&g.sizes, uint64_t, 1), 32);
    CHECK_EQ_U64(PK_VEC_AT(&g.samples, uint64_t, 1), 70);
    CHECK_EQ_U64(g.arcs.len, 1);
    CHECK_EQ_U64(PK_VEC_AT(&g.arcs, pk_c3_arc, 0).weight, 7);
    CHECK(pk_layout_read_call_graph(write_tmp("cg2.txt", "node a 1 1\narc a b\n"), &t, &g, &err) != 0);
    CHECK(strstr(err.msg, "line 2") != NULL);
    pk_layout_call_graph_free(&g);
    pk_layout_names_free(&t);
}

TEST(section_names)
{
    char *s[8];
    pk_err err;
    int n = pk_order_section_names("foo", s, 8, &err);
    CHECK_EQ_U64(n, 4);
    CHECK_STR(s[0], ".text.foo");
    CHECK_STR(s[1], ".text.hot.foo");
    CHECK_STR(s[2], ".text.startup.foo");
    for (int i = 0; i < n; i++)
        free(s[i]);
    n = pk_order_section_names("foo.cold", s, 8, &err);
    CHECK_EQ_U64(n, 2);
    CHECK_STR(s[0], ".text.unlikely.foo");
    CHECK_STR(s[1], ".text.split.foo");
    for (int i = 0; i < n; i++)
        free(s[i]);
    n = pk_order_section_names("bar.part.0", s, 8, &err); /* not a cold part */
    CHECK_STR(s[0], ".text.bar.part.0");
    for (int i = 0; i < n; i++)
        free(s[i]);
    CHECK(pk_order_section_names("foo", s, 2, &err) < 0);
}

TEST(writers)
{
    const char *names[] = {"main", "f1", "f2.cold", "op[]"};
    uint32_t order[] = {1, 0, 2, 3};
    pk_order_format f;
    CHECK(pk_order_format_parse("gold", &f) == 0 && f == PK_ORDER_GOLD);
    CHECK(pk_order_format_parse("ld-script", &f) == 0 && f == PK_ORDER_LD_SCRIPT);
    CHECK(pk_order_format_parse("lld", &f) == 0 && f == PK_ORDER_LLD);
    CHECK(pk_order_format_parse("msvc", &f) != 0);
    char path[512];
    snprintf(path, sizeof path, "%s/o.txt", pk_test_tmpdir());
    pk_out_file o;
    pk_err err;

    CHECK_OK(pk_out_open(&o, path, &err), &err);
    CHECK_OK(pk_layout_write_order(&o, PK_ORDER_LLD, names, order, 4, "hdr", &err), &err);
    CHECK_OK(pk_out_commit(&o, &err), &err);
    CHECK_STR(slurp(path), "# hdr\nf1\nmain\nf2.cold\nop[]\n");

    CHECK_OK(pk_out_open(&o, path, &err), &err);
    CHECK_OK(pk_layout_write_order(&o, PK_ORDER_GOLD, names, order, 2, "hdr", &err), &err);
    CHECK_OK(pk_out_commit(&o, &err), &err);
    CHECK_STR(slurp(path), ".text.f1\n.text.hot.f1\n.text.startup.f1\n.text.exit.f1\n"
                           ".text.main\n.text.hot.main\n.text.startup.main\n.text.exit.main\n");

    CHECK_OK(pk_out_open(&o, path, &err), &err);
    CHECK_OK(pk_layout_write_order(&o, PK_ORDER_LD_SCRIPT, names, order, 4, "hdr", &err), &err);
    CHECK_OK(pk_out_commit(&o, &err), &err);
    const char *s = slurp(path);
    CHECK(strstr(s, "/* hdr */\n") == s);
    CHECK(strstr(s, "SECTIONS\n{\n  .text :\n  {\n"
                    "    *(.text.f1 .text.hot.f1 .text.startup.f1 .text.exit.f1)\n"
                    "    *(.text.main .text.hot.main .text.startup.main .text.exit.main)\n"
                    "    *(.text.unlikely.f2 .text.split.f2)\n"
                    "  }\n}\nINSERT BEFORE .fini;\n") != NULL);
    CHECK(strstr(s, "op[]") == NULL); /* glob characters cannot be literal */
}

int main(void) { return pk_test_main(); }

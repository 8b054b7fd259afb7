/* test_format_text.c — LLVM text profiles: canonical round trip, every
 * feature of the grammar, and rejection of malformed lines (with the line
 * number in the error). */
#include "test.h"
#include "format/format.h"

#include <stdlib.h>

/* Canonical (llvm-profdata merge --text) form: reading and writing it again
 * must give the same bytes. */
#include "profile_fixtures.h"

static const char cs[] =
    "[main]:300:0\n"
    " 3: 10 foo:10\n"
    "[main:3 @ foo]:100:10\n"
    " 2: 50 bar:50\n"
    " !Attributes: 2\n"
    "[main:3 @ foo:2.1 @ bar]:50:50\n"
    " 1: 50\n"
    " !Attributes: 1\n";

static int read_text(pk_profset *ps, const char *t, pk_err *e)
{
    if (pk_profset_init(ps, e))
        return -1;
    return pk_text_read(ps, (const uint8_t *)t, strlen(t), "t.prof", e);
}

static void round_trip(const char *t)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(read_text(&ps, t, &e), &e);
    pk_buf b = {0};
    CHECK_OK(pk_text_write(&ps, &b, &e), &e);
    CHECK_EQ_U64(b.len, strlen(t));
    CHECK(b.len == strlen(t) && !memcmp(b.data, t, b.len));
    if (b.len != strlen(t) || memcmp(b.data, t, b.len))
        fprintf(stderr, "got:\n%.*s\n", (int)b.len, (char *)b.data);
    pk_buf_free(&b);
    pk_profset_free(&ps);
}

TEST(round_trip_plain_probe_cs)
{
    round_trip(plain);
    round_trip(probe);
    round_trip(cs);
}

TEST(reader_semantics)
{
    pk_profset ps;
    pk_err e;
    /* comments, blank lines, names with colons and spaces, unsorted input,
     * duplicate functions add up */
    const char *t = "# comment\n"
                    "\n"
                    "operator new(unsigned long):30:3\n"
                    " 1: 30 ns::f(int):10 operator delete(void*):20\n"
                    "   # indented comment\n"
                    "operator new(unsigned long):5:1\n"
                    " 1: 5\n";
    CHECK_OK(read_text(&ps, t, &e), &e);
    pk_fprof *f = pk_profset_find(&ps, "operator new(unsigned long)");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_EQ_U64(f->total, 35);
    CHECK_EQ_U64(f->head, 4);
    pk_fprof_view v;
    CHECK_OK(pk_fprof_view_build(&ps, f, &v, &e), &e);
    CHECK_EQ_U64(v.nbody, 1);
    CHECK_EQ_U64(v.body[0].count, 35);
    CHECK_EQ_U64(v.body[0].ncalls, 2);
    CHECK_STR(pk_profset_name(&ps, v.body[0].calls[0].name), "operator delete(void*)");
    CHECK_STR(pk_profset_name(&ps, v.body[0].calls[1].name), "ns::f(int)");
    pk_fprof_view_free(&v);
    CHECK(!(ps.kind & (PK_PROF_PROBE | PK_PROF_CS)));
    pk_profset_free(&ps);

    CHECK_OK(read_text(&ps, probe, &e), &e);
    CHECK(ps.kind & PK_PROF_PROBE);
    CHECK_EQ_U64(pk_profset_find(&ps, "main")->checksum, 123456);
    pk_profset_free(&ps);
    CHECK_OK(read_text(&ps, cs, &e), &e);
    CHECK(ps.kind & PK_PROF_CS);
    CHECK(ps.kind & PK_PROF_PREINLINED);
    CHECK_EQ_U64(pk_profset_count(&ps), 3);
    pk_profset_free(&ps);
}

static void expect_error(const char *t, const char *what)
{
    pk_profset ps;
    pk_err e;
    e.msg[0] = 0;
    int rc = read_text(&ps, t, &e);
    CHECK(rc == -1);
    if (rc != -1 || !strstr(e.msg, what))
        fprintf(stderr, "input %s: message '%s' lacks '%s'\n", t, e.msg, what);
    CHECK(strstr(e.msg, "t.prof: line") != NULL);
    pk_profset_free(&ps);
}

/* fuzz_prof_extbinary: an MD5 profile written as text names its inlinees by
 * decimal GUIDs ("10: 9204417991963109735:560"), which read as a bad count. */
TEST(inlinee_named_by_a_guid_reads_back)
{
    round_trip("15822663052811949562:560:0\n"
               " 10: 9204417991963109735:560\n"
               "  3: 42 4395024877212874786:7\n");
    expect_error("main:1:2\n 1: 12:\n", "line 2");              /* no total */
}

/* fuzz_prof_binary, fuzz_prof_gcc: names from a binary format that text
 * cannot carry (a line break, a leading space, '#' or '[' first) were
 * written anyway and the text could not be read back: refused now. */
TEST(names_text_cannot_carry_are_refused)
{
    static const char *bad[] = {"a\nb", " f", "#f", "[f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pk_profset ps;
        pk_err e;
        CHECK_OK(pk_profset_init(&ps, &e), &e);
        pk_name_id id, ok;
        pk_profset_intern(&ps, bad[i], strlen(bad[i]), &id, &e);
        pk_profset_intern(&ps, "main", 4, &ok, &e);
        pk_fprof *f = pk_profset_get_func(&ps, i < 2 ? ok : id, &e);
        pk_fprof_add_body(f, 1, 0, 5, &e);
        if (i < 2)  /* as a call target and as an inlinee */
            pk_fprof_add_call(f, 1, 0, id, 5, &e), pk_fprof_callsite(&ps, f, 2, 0, id, &e);
        pk_buf b = {0};
        CHECK(pk_text_write(&ps, &b, &e) == -1);
        CHECK(strstr(e.msg, "cannot be written as a text profile") != NULL);
        pk_buf_free(&b);
        pk_profset_free(&ps);
    }
    round_trip("main:5:0\n 1: 5 a#b:5 x[1]:0\n 2: f#:5\n  1: 5\n");  /* '#', '[' inside names */
}

TEST(malformed_lines_are_rejected)
{
    expect_error("main:10\n", "line 1");
    expect_error("main:x:1\n", "line 1");
    expect_error("main:1:2\n 1:5\n", "line 2");                 /* no space */
    expect_error("main:1:2\n 1:  5\n", "line 2");               /* two spaces */
    expect_error("main:1:2\n\t1: 5\n", "line 2");               /* tab indent */
    expect_error("main:1:2\n 1: 5 foo\n", "line 2");            /* target without count */
    expect_error("main:1:2\n 70000: 5\n", "line 2");            /* offset > 0xffff */
    expect_error("main:1:2\n 1.x: 5\n", "line 2");
    expect_error("main:1:2\n 1: 99999999999999999999999\n", "line 2"); /* overflow */
    expect_error("main:1:2\n   1: 5\n", "line 2");              /* too deep */
    expect_error(" 1: 5\n", "line 1");                          /* body before header */
    expect_error("main:1:2\n !CFGChecksum: 1\n 1: 5\n", "line 3"); /* data after metadata */
    expect_error("main:1:2\n !Bogus: 1\n", "line 2");
    expect_error("main:1:2\n 1: foo\n", "line 2");              /* callsite without total */
    expect_error("[main:1 @ foo]:1:1\nbar:1:1\n", "line 2");    /* CS mixed with plain */
    expect_error("[main:x @ foo]:1:1\n", "line 1");
    expect_error("[main:70000 @ foo]:1:1\n", "line 1");     /* context line > 0xffff */
    pk_profset ps;
    pk_err e;
    static const char nul[] = "main:1:2\n 1: 5\0\n";
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK(pk_text_read(&ps, (const uint8_t *)nul, sizeof nul - 1, "t.prof", &e) == -1);
    CHECK(strstr(e.msg, "t.prof: line 2") != NULL);
    pk_profset_free(&ps);
}

TEST(bad_input_never_crashes)
{
    /* every prefix and a few byte substitutions of a valid profile: the
     * reader either succeeds or fails cleanly (ASan checks the rest) */
    size_t n = strlen(probe);
    char *buf = malloc(n + 1);
    for (size_t cut = 0; cut <= n; cut++) {
        pk_profset ps;
        pk_err e;
        pk_profset_init(&ps, &e);
        pk_text_read(&ps, (const uint8_t *)probe, cut, "t.prof", &e);
        pk_profset_free(&ps);
    }
    static const char subst[] = " :.\n!@[]0x";
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof subst - 1; k++) {
            memcpy(buf, probe, n);
            buf[i] = subst[k];
            pk_profset ps;
            pk_err e;
            pk_profset_init(&ps, &e);
            pk_text_read(&ps, (const uint8_t *)buf, n, "t.prof", &e);
            pk_profset_free(&ps);
        }
    free(buf);
}

int main(void) { return pk_test_main(); }

/* test_format_binary.c — LLVM binary / extbinary and GCC .afdo: round trips
 * through our writers and readers (every variant), and malformed input:
 * every truncation and every single-byte corruption must give a clean
 * error or a clean read, never a crash (this runs under ASan too). */
#include "test.h"
#include "format/format.h"

#include <stdlib.h>

#include "profile_fixtures.h"

static const char cs[] =
    "[main]:300:0\n"
    " 3: 10 foo:10\n"
    " !CFGChecksum: 4\n"
    "[main:3 @ foo]:100:10\n"
    " 2: 50 bar:50\n"
    " !CFGChecksum: 5\n"
    " !Attributes: 2\n"
    "[main:3 @ foo:2.1 @ bar]:50:50\n"
    " 1: 50\n"
    " !CFGChecksum: 6\n"
    " !Attributes: 1\n";

/* GCC keeps no totals and no discriminators: a profile already in that shape. */
static const char gccable[] =
    "main:1410:10\n"
    " 1: 10\n"
    " 2: 100 foo:60 bar:40\n"
    " 4: inlined_fn:1300\n"
    "  1: 200\n"
    "  2: 1100 baz:100\n"
    "foo:500:60\n"
    " 0: 60\n"
    " 1: 440\n";

static void to_text(const pk_profset *ps, pk_buf *b)
{
    pk_err e;
    b->len = 0;
    if (pk_text_write(ps, b, &e))
        fprintf(stderr, "text write failed: %s\n", e.msg);
}

/* Whether ps writes as exactly the text want (the text written on stderr when not). */
static bool text_is(const pk_profset *ps, pk_buf *b, const char *want)
{
    to_text(ps, b);
    bool same = b->len == strlen(want) && !memcmp(b->data, want, b->len);
    if (!same)
        fprintf(stderr, "got\n%.*s\n", (int)b->len, (char *)b->data);
    return same;
}

static int load_text(pk_profset *ps, const char *t, pk_err *e)
{
    if (pk_profset_init(ps, e))
        return -1;
    return pk_text_read(ps, (const uint8_t *)t, strlen(t), "in.prof", e);
}

static void round_trip(const char *t, const pk_write_opts *o, const char *expect_text)
{
    pk_profset ps, back;
    pk_err e;
    CHECK_OK(load_text(&ps, t, &e), &e);
    pk_buf bin = {0}, txt = {0};
    CHECK_OK(pk_prof_write_mem(&ps, o, &bin, &e), &e);
    CHECK_OK(pk_profset_init(&back, &e), &e);
    pk_prof_format got;
    CHECK_OK(pk_prof_read_mem(&back, bin.data, bin.len, "mem", PK_FMT_AUTO, &got, &e), &e);
    CHECK_EQ_U64(got, o->format);
    to_text(&back, &txt);
    const char *want = expect_text ? expect_text : t;
    int same = txt.len == strlen(want) && !memcmp(txt.data, want, txt.len);
    CHECK(same);
    if (!same)
        fprintf(stderr, "format %d md5 %d: got\n%.*s\n", o->format, o->use_md5, (int)txt.len, (char *)txt.data);
    if (o->format != PK_FMT_GCC && o->format != PK_FMT_TEXT) {
        CHECK(back.has_summary);
        pk_summary s;
        CHECK_OK(pk_profset_summary(&ps, &s, &e), &e);
        CHECK_EQ_U64(back.summary.total_count, s.total_count);
        CHECK_EQ_U64(back.summary.num_entries, 16);
    }
    pk_buf_free(&bin);
    pk_buf_free(&txt);
    pk_profset_free(&ps);
    pk_profset_free(&back);
}

TEST(round_trips)
{
    pk_write_opts ext = {PK_FMT_EXTBINARY, 0, 0, 0}, extz = {PK_FMT_EXTBINARY, 0, 1, 0};
    pk_write_opts bin = {PK_FMT_BINARY, 0, 0, 0}, gcc = {PK_FMT_GCC, 0, 0, 0};
    round_trip(plain, &ext, NULL);
    round_trip(plain, &extz, NULL);
    round_trip(plain, &bin, NULL);
    round_trip(probe, &ext, NULL);
    round_trip(probe, &extz, NULL);
    round_trip(cs, &ext, NULL);
    round_trip(cs, &extz, NULL);
    round_trip(gccable, &gcc, NULL);
    /* discriminators fold (max) and totals are recomputed for GCC */
    round_trip(plain, &gcc,
               "foo:500:60\n"
               " 0: 60\n"
               " 1: 440\n"
               "main:460:10\n"
               " 1: 10\n"
               " 2: 100 foo:60 bar:40\n"
               " 3: 50\n"
               " 4: inlined_fn:300\n"
               "  1: 200\n"
               "  2: 100 baz:100\n");
}

/* gcc-12 annotates a function whose head count is 0 as never run: a sampled
 * function gets LLVM's head estimate instead (lowest location's count, at
 * least 1); an unsampled one keeps 0. */
TEST(gcc_head_never_zero_for_sampled_functions)
{
    pk_write_opts gcc = {PK_FMT_GCC, 0, 0, 0};
    round_trip("loop:300:0\n"
               " 0: 0\n"
               " 3: 300\n"
               "low:90:0\n"
               " 1: 40\n"
               " 2: 50\n"
               "idle:0:0\n"
               " 1: 0\n",
               &gcc,
               "loop:300:1\n"
               " 0: 0\n"
               " 3: 300\n"
               "low:90:40\n"
               " 1: 40\n"
               " 2: 50\n"
               "idle:0:0\n"
               " 1: 0\n");
}

TEST(md5_names)
{
    pk_profset ps, back;
    pk_err e;
    CHECK_OK(load_text(&ps, plain, &e), &e);
    pk_write_opts o = {PK_FMT_EXTBINARY, 1, 0, 0};
    pk_buf b = {0};
    CHECK_OK(pk_prof_write_mem(&ps, &o, &b, &e), &e);
    CHECK_OK(pk_profset_init(&back, &e), &e);
    CHECK_OK(pk_prof_read_mem(&back, b.data, b.len, "mem", PK_FMT_AUTO, NULL, &e), &e);
    CHECK(back.kind & PK_PROF_MD5);
    pk_fprof *m = pk_profset_find_guid(&back, 15822663052811949562ULL); /* "main" */
    CHECK(m != NULL);
    if (m)
        CHECK_EQ_U64(m->total, 1000);
    /* writing it again keeps the GUIDs (an MD5 table is forced: llvm-profdata
     * would write the decimal GUIDs as names, which no compiler matches) */
    pk_write_opts plain_opts = {PK_FMT_EXTBINARY, 0, 0, 0};
    pk_buf b2 = {0}, t1 = {0}, t2 = {0};
    CHECK_OK(pk_prof_write_mem(&back, &plain_opts, &b2, &e), &e);
    pk_profset again;
    CHECK_OK(pk_profset_init(&again, &e), &e);
    CHECK_OK(pk_prof_read_mem(&again, b2.data, b2.len, "mem2", PK_FMT_AUTO, NULL, &e), &e);
    CHECK(again.kind & PK_PROF_MD5);
    to_text(&back, &t1);
    to_text(&again, &t2);
    CHECK(t1.len == t2.len && !memcmp(t1.data, t2.data, t1.len));
    CHECK(t1.len > 20 && !memcmp(t1.data, "15822663052811949562:1000:10\n", 29));
    pk_buf_free(&t1);
    pk_buf_free(&t2);
    pk_profset_free(&again);
    /* GCC needs real names */
    pk_write_opts g = {PK_FMT_GCC, 0, 0, 0};
    b2.len = 0;
    CHECK(pk_prof_write_mem(&back, &g, &b2, &e) == -1);
    pk_buf_free(&b);
    pk_buf_free(&b2);
    pk_profset_free(&ps);
    pk_profset_free(&back);
}

TEST(writers_refuse_what_formats_cannot_hold)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(load_text(&ps, probe, &e), &e);
    pk_buf b = {0};
    pk_write_opts bin = {PK_FMT_BINARY, 0, 0, 0}, gcc = {PK_FMT_GCC, 0, 0, 0};
    CHECK(pk_prof_write_mem(&ps, &bin, &b, &e) == -1);
    CHECK(pk_prof_write_mem(&ps, &gcc, &b, &e) == -1);
    pk_profset_free(&ps);
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_name_id id;
    pk_profset_intern(&ps, "f", 1, &id, &e);
    pk_fprof *f = pk_profset_get_func(&ps, id, &e);
    pk_fprof_add_body(f, 70000, 0, 1, &e);
    pk_write_opts ext = {PK_FMT_EXTBINARY, 0, 0, 0};
    CHECK(pk_prof_write_mem(&ps, &ext, &b, &e) == -1);
    CHECK(strstr(e.msg, "65535") != NULL);
    pk_buf_free(&b);
    pk_profset_free(&ps);
    /* a context line the reader would refuse (fuzz_prof_text: written, then
     * refused on reading: "context line offset above 65535") */
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_ctx_frame fr[2];
    pk_profset_intern(&ps, "main", 4, &fr[0].name, &e);
    pk_profset_intern(&ps, "g", 1, &fr[1].name, &e);
    fr[0].line = 70000;
    fr[0].disc = fr[1].line = fr[1].disc = 0;
    pk_ctx_id ctx;
    CHECK_OK(pk_profset_intern_ctx(&ps, fr, 2, &ctx, &e), &e);
    ps.kind |= PK_PROF_CS;
    f = pk_profset_get_ctx(&ps, ctx, &e);
    pk_fprof_add_body(f, 1, 0, 1, &e);
    CHECK(pk_prof_write_mem(&ps, &ext, &b, &e) == -1);
    CHECK(strstr(e.msg, "context line offset 70000") != NULL);
    pk_buf_free(&b);
    pk_profset_free(&ps);
}

/* ps written as o and read back: still marked pre-inlined, and the text want. */
static void marked_reads_back(const pk_profset *ps, const pk_write_opts *o, pk_buf *b, pk_buf *t, const char *want)
{
    pk_err e;
    pk_profset back;
    b->len = 0;
    CHECK_OK(pk_prof_write_mem(ps, o, b, &e), &e);
    CHECK_OK(pk_profset_init(&back, &e), &e);
    CHECK_OK(pk_prof_read_mem(&back, b->data, b->len, "mem", PK_FMT_AUTO, NULL, &e), &e);
    CHECK(back.kind & PK_PROF_PREINLINED);
    CHECK(text_is(&back, t, want));
    pk_profset_free(&back);
}

/* A profile marked pre-inlined: flag alone (extbinary only), or every
 * profile and inlinee ContextShouldBeInlined (text too, which carries the
 * mark through its attributes). clang's reader sees what llvm-profdata-19
 * shows of the same bytes (tests/e2e/afdo_preinlined.sh). */
TEST(preinlined_marks)
{
    static const char all[] =
        "main:1000:10\n"
        " 1: 10\n"
        " 2: 100 foo:60 bar:40\n"
        " 3.2: 50\n"
        " 4: inlined_fn:300\n"
        "  1: 200\n"
        "  2.1: 100 baz:100\n"
        "  !Attributes: 2\n"
        " !Attributes: 2\n"
        "foo:500:60\n"
        " 0: 60\n"
        " 1: 440\n"
        " !Attributes: 2\n";
    pk_err e;
    pk_write_opts ext = {PK_FMT_EXTBINARY, 0, 0, 0}, txt = {PK_FMT_TEXT, 0, 0, 0};
    pk_profset ps;
    pk_buf b = {0}, t = {0};
    /* the flag alone: the counts and attributes stay as they were */
    CHECK_OK(load_text(&ps, plain, &e), &e);
    CHECK(!(ps.kind & PK_PROF_PREINLINED));
    pk_profset_mark_preinlined(&ps, false);
    CHECK(ps.kind & PK_PROF_PREINLINED);
    marked_reads_back(&ps, &ext, &b, &t, plain);
    /* every context: nested inlinees too, through text and extbinary alike */
    pk_profset_mark_preinlined(&ps, true);
    CHECK(text_is(&ps, &t, all));
    marked_reads_back(&ps, &ext, &b, &t, all);
    marked_reads_back(&ps, &txt, &b, &t, all);
    pk_profset_free(&ps);
    pk_buf_free(&b);
    pk_buf_free(&t);
    /* which formats can say it */
    CHECK(pk_prof_format_check_preinlined(PK_FMT_GCC, PK_PREINLINED_NONE, &e) == 0);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_EXTBINARY, PK_PREINLINED_FLAG, &e) == 0);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_EXTBINARY, PK_PREINLINED_ALL, &e) == 0);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_TEXT, PK_PREINLINED_ALL, &e) == 0);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_TEXT, PK_PREINLINED_FLAG, &e) == -1);
    CHECK(strstr(e.msg, "needs extbinary") != NULL);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_BINARY, PK_PREINLINED_ALL, &e) == -1);
    CHECK(strstr(e.msg, "binary format cannot") != NULL);
    CHECK(pk_prof_format_check_preinlined(PK_FMT_GCC, PK_PREINLINED_FLAG, &e) == -1);
    CHECK(strstr(e.msg, "gcc format cannot") != NULL);
}

/* fuzz_prof_extbinary: a name index naming an empty string of the name
 * table made a nameless inlinee, written as text (" 3: :560") that the
 * text reader refused. */
TEST(extbinary_name_index_of_the_empty_string)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_name_id id, empty;
    pk_profset_intern(&ps, "f", 1, &id, &e);
    pk_profset_intern(&ps, "", 0, &empty, &e);
    pk_fprof *f = pk_profset_get_func(&ps, id, &e);
    pk_fprof_add_body(f, 1, 0, 5, &e);
    pk_fprof *c = pk_fprof_callsite(&ps, f, 3, 0, empty, &e);
    pk_fprof_add_body(c, 1, 0, 5, &e);
    pk_buf b = {0};
    pk_write_opts ext = {PK_FMT_EXTBINARY, 0, 0, 0};
    CHECK_OK(pk_prof_write_mem(&ps, &ext, &b, &e), &e);
    pk_profset_free(&ps);
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK(pk_prof_read_mem(&ps, b.data, b.len, "e.prof", PK_FMT_EXTBINARY, NULL, &e) == -1);
    CHECK(strstr(e.msg, "e.prof: offset ") != NULL && strstr(e.msg, "empty string") != NULL);
    pk_profset_free(&ps);
    pk_buf_free(&b);
}

/* Every strict prefix must fail with a message naming the file; every
 * single-byte change must fail cleanly or read. */
static void abuse(const char *t, const pk_write_opts *o)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(load_text(&ps, t, &e), &e);
    pk_buf b = {0};
    CHECK_OK(pk_prof_write_mem(&ps, o, &b, &e), &e);
    pk_profset_free(&ps);
    uint8_t *copy = malloc(b.len);
    size_t failures = 0;
    for (size_t cut = 0; cut < b.len; cut++) {
        memcpy(copy, b.data, cut); /* a fresh allocation-sized view is what ASan needs */
        uint8_t *tight = malloc(cut ? cut : 1);
        memcpy(tight, b.data, cut);
        pk_profset r;
        pk_profset_init(&r, &e);
        e.msg[0] = 0;
        int rc = pk_prof_read_mem(&r, tight, cut, "cut.prof", o->format, NULL, &e);
        /* raw binary ends at any record boundary; GCC's trailing 12-byte
         * module section is optional (gcc reads EOF as an empty one) */
        int may_succeed = o->format == PK_FMT_BINARY || (o->format == PK_FMT_GCC && cut + 12 >= b.len);
        if (rc == 0 && !may_succeed) {
            failures++;
            fprintf(stderr, "format %d: prefix of %zu/%zu bytes read without error\n", o->format, cut, b.len);
        }
        if (rc && !strstr(e.msg, "cut.prof"))
            failures++;
        pk_profset_free(&r);
        free(tight);
    }
    CHECK_EQ_U64(failures, 0);
    static const uint8_t vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01};
    for (size_t i = 0; i < b.len; i++)
        for (size_t k = 0; k < sizeof vals; k++) {
            memcpy(copy, b.data, b.len);
            copy[i] = vals[k];
            pk_profset r;
            pk_profset_init(&r, &e);
            pk_prof_read_mem(&r, copy, b.len, "flip.prof", o->format, NULL, &e);
            pk_profset_free(&r);
        }
    free(copy);
    pk_buf_free(&b);
}

TEST(truncated_and_corrupt_inputs)
{
    pk_write_opts ext = {PK_FMT_EXTBINARY, 0, 0, 0}, extz = {PK_FMT_EXTBINARY, 0, 1, 0};
    pk_write_opts md5 = {PK_FMT_EXTBINARY, 1, 0, 0}, bin = {PK_FMT_BINARY, 0, 0, 0};
    pk_write_opts gcc = {PK_FMT_GCC, 0, 0, 0};
    abuse(plain, &ext);
    abuse(plain, &extz);
    abuse(plain, &md5);
    abuse(plain, &bin);
    abuse(probe, &ext);
    abuse(cs, &ext);
    abuse(gccable, &gcc);
}

TEST(corrupt_leb128_is_named)
{
    pk_profset ps;
    pk_err e;
    CHECK_OK(load_text(&ps, plain, &e), &e);
    pk_buf b = {0};
    pk_write_opts bin = {PK_FMT_BINARY, 0, 0, 0};
    CHECK_OK(pk_prof_write_mem(&ps, &bin, &b, &e), &e);
    pk_profset_free(&ps);
    /* the summary's total count starts at byte 10: make it an endless LEB */
    uint8_t *c = malloc(b.len);
    memcpy(c, b.data, b.len);
    for (size_t i = 10; i < 22 && i < b.len; i++)
        c[i] = 0xff;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK(pk_prof_read_mem(&ps, c, b.len, "leb.prof", PK_FMT_AUTO, NULL, &e) == -1);
    CHECK(strstr(e.msg, "leb.prof: offset") != NULL);
    CHECK(strstr(e.msg, "LEB128") != NULL);
    pk_profset_free(&ps);
    /* a name index past the table */
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    c[0] = 0;
    CHECK(pk_prof_read_mem(&ps, c, b.len, "leb.prof", PK_FMT_BINARY, NULL, &e) == -1);
    CHECK(strstr(e.msg, "magic") != NULL);
    pk_profset_free(&ps);
    free(c);
    pk_buf_free(&b);
}

int main(void) { return pk_test_main(); }

/* fuzz_prof_gcc: a function named by string 0, the table's unused "", read
 * as a function without a name, which the text writer then wrote as
 * ":0:0" and the text reader refused. */
TEST(gcc_function_named_by_the_empty_string)
{
    static const uint8_t afdo[] = {
        'a', 'd', 'c', 'g', 2, 0, 0, 0, 0, 0, 0, 0,   /* magic, version 2, unused */
        0, 0, 0, 0xaa, 2, 0, 0, 0, 1, 0, 0, 0,       /* string table: 1 string */
        1, 0, 0, 0, 0,                                /* "" (length 1 with its NUL) */
        0, 0, 0, 0xac, 5, 0, 0, 0, 1, 0, 0, 0,       /* 1 function */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,           /* head 0, name index 0 */
        0, 0, 0, 0, 0, 0, 0, 0,                       /* no positions, no callsites */
    };
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK(pk_prof_read_mem(&ps, afdo, sizeof afdo, "e.afdo", PK_FMT_GCC, NULL, &e) == -1);
    CHECK(strstr(e.msg, "e.afdo: offset 53: ") != NULL);
    CHECK(strstr(e.msg, "empty string") != NULL);
    pk_profset_free(&ps);
}

/* hostile.py's million-level GCC profile (cut after 1100 levels): the stack
 * of enclosing instances was written one slot past its end at depth 1023
 * (ASan: stack-buffer-overflow) before the depth check of the next level. */
TEST(gcc_nesting_beyond_the_limit)
{
    pk_buf b = {0};
    pk_buf_u32(&b, 0x67636461);
    pk_buf_u32(&b, 2);
    pk_buf_u32(&b, 0);
    pk_buf_u32(&b, 0xaa000000);
    pk_buf_u32(&b, 4);
    pk_buf_u32(&b, 2);
    pk_buf_u32(&b, 2);
    pk_buf_put(&b, "f", 2);
    pk_buf_u32(&b, 2);
    pk_buf_put(&b, "g", 2);
    pk_buf_u32(&b, 0xac000000);
    pk_buf_u32(&b, 0);
    pk_buf_u32(&b, 1);
    pk_buf_u64(&b, 1);     /* head */
    pk_buf_u32(&b, 0);     /* "f" */
    for (int d = 0; d < 1100; d++) {
        pk_buf_u32(&b, 0); /* positions */
        pk_buf_u32(&b, 1); /* callsites */
        pk_buf_u32(&b, 1u << 16);
        pk_buf_u32(&b, 1); /* "g" */
    }
    pk_profset ps;
    pk_err e;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK(pk_prof_read_mem(&ps, b.data, b.len, "deep.afdo", PK_FMT_GCC, NULL, &e) == -1);
    CHECK(strstr(e.msg, "deep.afdo: offset ") != NULL && strstr(e.msg, "too deep") != NULL);
    pk_profset_free(&ps);
    pk_buf_free(&b);
}

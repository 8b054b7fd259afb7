/* fuzz_prof.h — the body of the sample-profile harnesses
 * (fuzz_prof_{text,binary,extbinary,gcc}.c): one reader of src/format/ on
 * the input; then, for what it accepts, every writer, and each written
 * profile read back by its own reader (a writer must not produce what its
 * reader refuses), written and read again: the first trip may lose what the
 * format cannot carry (text loses nothing), the second must change nothing
 * (byte for byte; for GCC, whose string table follows the order names were
 * met, as extbinary).
 * Writers may refuse what their format cannot carry (contexts in a GCC
 * profile, ...); they must say so. An empty profile is an empty text file,
 * which no reader takes for a profile (as llvm-profdata). */
#ifndef PK_FUZZ_PROF_H
#define PK_FUZZ_PROF_H

#include "fuzz_util.h"
#include "format/format.h"

#include <stdbool.h>

static void must_write(const pk_profset *ps, pk_prof_format fmt, pk_buf *out)
{
    pk_write_opts o = {.format = fmt};
    pk_err err = {{0}};
    if (pk_prof_write_mem(ps, &o, out, &err))
        pk_fuzz_fail("the %s writer refused a profile its reader read: %s", pk_prof_format_name(fmt), err.msg);
}

static void must_read(const pk_buf *in, pk_prof_format fmt, pk_profset *ps)
{
    pk_err err = {{0}};
    if (pk_profset_init(ps, &err))
        pk_fuzz_fail("profset_init: %s", err.msg);
    if (pk_prof_read_mem(ps, in->data, in->len, PK_FUZZ_NAME, fmt, NULL, &err))
        pk_fuzz_fail("the %s reader refused what its writer wrote: %s", pk_prof_format_name(fmt), err.msg);
}

static bool same(const pk_buf *x, const pk_buf *y)
{
    return x->len == y->len && (!x->len || !memcmp(x->data, y->data, x->len));
}

static void write_read_write(const pk_profset *ps, pk_prof_format fmt)
{
    pk_write_opts o = {.format = fmt};
    pk_buf a = {0}, b = {0}, c = {0};
    pk_err err = {{0}};
    if (pk_prof_write_mem(ps, &o, &a, &err)) {
        if (!err.msg[0])
            pk_fuzz_fail("the %s writer failed without a message", pk_prof_format_name(fmt));
        pk_buf_free(&a);
        return;
    }
    /* no functions: nothing to write as text, and an empty file is not a
     * profile (llvm-profdata refuses it too) */
    if (fmt == PK_FMT_TEXT && pk_profset_count(ps) == 0) {
        pk_buf_free(&a);
        return;
    }
    /* The first trip may drop what the format cannot carry (attributes in
     * a binary profile, and the summary computed from them); from then on
     * nothing may change. */
    pk_profset p1, p2;
    must_read(&a, fmt, &p1);
    must_write(&p1, fmt, &b);
    must_read(&b, fmt, &p2);
    must_write(&p2, fmt, &c);
    /* text carries everything the model holds: not even the first trip
     * may change it (but MD5 GUIDs come back as names, which sort apart) */
    if (fmt == PK_FMT_TEXT && !(ps->kind & PK_PROF_MD5) && !same(&a, &b))
        pk_fuzz_fail("text: write(read(write(p))) differs from write(p) (%zu vs %zu bytes)", a.len, b.len);
    if (fmt != PK_FMT_GCC) {
        if (!same(&b, &c))
            pk_fuzz_fail("%s: a profile changed on its second trip through the format (%zu vs %zu bytes)",
                         pk_prof_format_name(fmt), b.len, c.len);
    } else {
        /* extbinary sorts its name table: the same profile, the same bytes */
        pk_buf t1 = {0}, t2 = {0};
        must_write(&p1, PK_FMT_EXTBINARY, &t1);
        must_write(&p2, PK_FMT_EXTBINARY, &t2);
        if (!same(&t1, &t2))
            pk_fuzz_fail("gcc: a profile changed on its second trip through the format");
        pk_buf_free(&t1);
        pk_buf_free(&t2);
    }
    pk_profset_free(&p1);
    pk_profset_free(&p2);
    pk_buf_free(&a);
    pk_buf_free(&b);
    pk_buf_free(&c);
}

static int fuzz_prof(const uint8_t *data, size_t size, pk_prof_format fmt)
{
    pk_profset ps;
    pk_err err = {{0}};
    if (pk_profset_init(&ps, &err))
        pk_fuzz_fail("profset_init: %s", err.msg);
    if (pk_prof_read_mem(&ps, data, size, PK_FUZZ_NAME, fmt, NULL, &err)) {
        pk_fuzz_check_error(&err, fmt == PK_FMT_TEXT ? "line" : NULL);
    } else {
        static const pk_prof_format all[] = {PK_FMT_TEXT, PK_FMT_EXTBINARY, PK_FMT_BINARY, PK_FMT_GCC};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            write_read_write(&ps, all[i]);
    }
    pk_profset_free(&ps);
    return 0;
}

#define PK_FUZZ_PROF_HARNESS(fmt)                                           \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);           \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_prof(data, size, fmt); }

#endif

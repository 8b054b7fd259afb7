/* format.c — byte buffer, format detection and the read/write dispatchers. */
#include "format/format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void pk_buf_free(pk_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(pk_buf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (b->len + n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void pk_buf_put(pk_buf *b, const void *p, size_t n)
{
    if (!n || buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void pk_buf_uleb(pk_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        tmp[n++] = c | (v ? 0x80 : 0);
    } while (v);
    pk_buf_put(b, tmp, n);
}

void pk_buf_u32(pk_buf *b, uint32_t v)
{
    uint8_t t[4];
    for (int i = 0; i < 4; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    pk_buf_put(b, t, 4);
}

void pk_buf_u64(pk_buf *b, uint64_t v)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    pk_buf_put(b, t, 8);
}

void pk_buf_printf(pk_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        pk_buf_put(b, small, (size_t)n);
        return;
    }
    if (buf_reserve(b, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *pk_prof_format_name(pk_prof_format f)
{
    switch (f) {
    case PK_FMT_TEXT: return "text";
    case PK_FMT_BINARY: return "binary";
    case PK_FMT_EXTBINARY: return "extbinary";
    case PK_FMT_GCC: return "gcc";
    default: return "auto";
    }
}

int pk_prof_format_check_preinlined(pk_prof_format f, int mark, pk_err *err)
{
    if (mark == PK_PREINLINED_NONE || f == PK_FMT_EXTBINARY || (f == PK_FMT_TEXT && mark == PK_PREINLINED_ALL))
        return 0;
    if (f == PK_FMT_TEXT)
        return pk_err_set(err, "the text format marks a profile pre-inlined only through its contexts' "
                               "ShouldBeInlined attributes: the pre-inlined flag alone needs extbinary");
    return pk_err_set(err, "the %s format cannot mark a profile pre-inlined (extbinary can%s)",
                      pk_prof_format_name(f), mark == PK_PREINLINED_ALL ? ", and text" : "");
}

int pk_prof_format_parse(const char *s, pk_prof_format *f)
{
    if (!strcmp(s, "text"))
        *f = PK_FMT_TEXT;
    else if (!strcmp(s, "binary"))
        *f = PK_FMT_BINARY;
    else if (!strcmp(s, "extbinary") || !strcmp(s, "ext-binary"))
        *f = PK_FMT_EXTBINARY;
    else if (!strcmp(s, "gcc") || !strcmp(s, "afdo"))
        *f = PK_FMT_GCC;
    else
        return -1;
    return 0;
}

pk_prof_format pk_prof_detect(const uint8_t *d, size_t n)
{
    static const uint8_t tail[8] = {0xd0, 0xb1, 0xf4, 0xc9, 0x94, 0xa8, 0x53};
    if (n >= 9 && !memcmp(d + 2, tail, 7) && (d[1] & 0xf0) == 0xe0)
        /* other format bytes (compact binary 0x02, ...) go to the extbinary
         * reader, which names the encoding it does not support */
        return d[0] == 0xff ? PK_FMT_BINARY : PK_FMT_EXTBINARY;
    if (n >= 4 && pk_ld32(d) == 0x67636461u)
        return PK_FMT_GCC;
    return PK_FMT_TEXT;
}

/* The first line that is not blank or a '#' comment is a function header,
 * "NAME:TOTAL:HEAD" (or "[CONTEXT]:TOTAL:HEAD"), unindented; a file of
 * comments only is an empty profile. */
static bool text_profile_start(const uint8_t *d, size_t n)
{
    const char *p = (const char *)d, *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        p = nl ? nl + 1 : end;
        while (le > s && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
            le--;
        const char *t = s;
        while (t < le && (*t == ' ' || *t == '\t'))
            t++;
        if (t == le || *t == '#')
            continue;
        if (t != s)
            return false;
        /* ":digits:digits" at the end */
        for (int field = 0; field < 2; field++) {
            const char *q = le;
            while (q > s && q[-1] >= '0' && q[-1] <= '9')
                q--;
            if (q == le || q == s || q[-1] != ':')
                return false;
            le = q - 1;
        }
        return le > s;
    }
    return true;
}

int pk_prof_read_mem(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_prof_format fmt,
                     pk_prof_format *fmt_out, pk_err *err)
{
    /* a 0-byte profile is what failed generators (llvm-profgen) leave
     * behind: refuse it rather than read it as an empty profile */
    if (size == 0)
        return pk_err_set(err, "%s: offset 0: the file is empty (not a profile)", path);
    if (fmt == PK_FMT_AUTO) {
        /* other pgokit files, binaries and random bytes get a message that
         * says what they are, not a text parser's complaint about line 1 */
        pk_file_kind k = pk_file_identify(data, size);
        if ((k == PK_KIND_TEXT && !text_profile_start(data, size)) ||
            (k != PK_KIND_TEXT && k != PK_KIND_LLVM_BINARY && k != PK_KIND_LLVM_EXTBINARY && k != PK_KIND_GCC))
            return pk_file_not_a_profile(err, path, k == PK_KIND_TEXT ? PK_KIND_UNKNOWN : k, data, size);
        fmt = pk_prof_detect(data, size);
    }
    if (fmt_out)
        *fmt_out = fmt;
    switch (fmt) {
    case PK_FMT_TEXT: return pk_text_read(ps, data, size, path, err);
    case PK_FMT_BINARY: return pk_binary_read(ps, data, size, path, err);
    case PK_FMT_EXTBINARY: return pk_extbin_read(ps, data, size, path, err);
    case PK_FMT_GCC: return pk_gcc_read(ps, data, size, path, err);
    default: return pk_err_set(err, "%s: unknown profile format", path);
    }
}

int pk_prof_read_file(pk_profset *ps, const char *path, pk_prof_format fmt, pk_prof_format *fmt_out, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    int rc = pk_prof_read_mem(ps, f.data, f.size, path, fmt, fmt_out, err);
    pk_file_unmap(&f);
    return rc;
}

int pk_prof_write_mem(const pk_profset *ps, const pk_write_opts *o, pk_buf *out, pk_err *err)
{
    int rc;
    switch (o->format) {
    case PK_FMT_TEXT: rc = pk_text_write(ps, out, err); break;
    case PK_FMT_BINARY: rc = pk_binary_write(ps, out, err); break;
    case PK_FMT_AUTO:
    case PK_FMT_EXTBINARY: rc = pk_extbin_write(ps, o, out, err); break;
    case PK_FMT_GCC: rc = pk_gcc_write(ps, out, err); break;
    default: return pk_err_set(err, "unknown output format");
    }
    if (!rc && out->oom)
        return pk_err_set(err, "out of memory while writing the profile");
    return rc;
}

int pk_prof_write_file(const pk_profset *ps, const pk_write_opts *o, const char *path, pk_err *err)
{
    pk_buf b = {0};
    if (pk_prof_write_mem(ps, o, &b, err)) {
        pk_buf_free(&b);
        return pk_err_prefix(err, "%s", path);
    }
    if (!strcmp(path, "-")) { /* standard output: nothing to rename */
        size_t off = 0;
        while (off < b.len) {
            ssize_t n = write(1, b.data + off, b.len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                pk_buf_free(&b);
                return pk_err_errno(err, "writing the profile to standard output");
            }
            off += (size_t)n;
        }
        pk_buf_free(&b);
        return 0;
    }
    pk_out_file out;
    int rc = pk_out_open(&out, path, err);
    if (!rc) {
        rc = pk_out_write(&out, b.data, b.len, err);
        if (rc)
            pk_out_abort(&out);
        else
            rc = pk_out_commit(&out, err);
    }
    pk_buf_free(&b);
    return rc;
}

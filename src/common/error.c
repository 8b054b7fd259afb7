/* error.c — pk_err helpers: errors as values, never printed by the library. */
#include "common/pk_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int pk_err_set(pk_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int pk_err_prefix(pk_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[PK_ERR_MAX], old[PK_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Assembled by hand: the result is deliberately cut at PK_ERR_MAX. */
    size_t lp = strnlen(prefix, sizeof prefix), lo = strnlen(old, sizeof old), at = 0;
    const size_t room = sizeof err->msg - 1;
    for (size_t i = 0; i < lp && at < room; i++) err->msg[at++] = prefix[i];
    for (size_t i = 0; i < 2 && at < room; i++) err->msg[at++] = ": "[i];
    for (size_t i = 0; i < lo && at < room; i++) err->msg[at++] = old[i];
    err->msg[at] = 0;
    return -1;
}

int pk_err_errno(pk_err *err, const char *fmt, ...)
{
    int saved = errno;
    if (!err)
        return -1;
    char what[PK_ERR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err->msg, sizeof err->msg, "%s: %s", what, strerror(saved));
    return -1;
}

/* Length of the valid UTF-8 sequence (2..4 bytes, no overlongs, no
 * surrogates) starting at p, or 0. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
        (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return len;
}

/* Characters that are valid UTF-8 but act on a terminal or on the text
 * around them: the C1 controls (U+0080..U+009F; U+009B is CSI, an escape
 * sequence's start on many terminals) and the bidirectional formatting
 * characters (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069),
 * which reorder what is shown. */
static bool utf8_is_control(const uint8_t *p, size_t len)
{
    if (len == 2)
        return (p[0] == 0xc2 && p[1] < 0xa0) || (p[0] == 0xd8 && p[1] == 0x9c);
    if (len != 3)
        return false;
    uint32_t cp = ((uint32_t)(p[0] & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
    return cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t pk_escape(char *out, size_t cap, const void *data, size_t n, unsigned flags)
{
    const uint8_t *p = data;
    size_t at = 0;
#define PUT(c) do { if (at + 1 < cap) out[at] = (char)(c); at++; } while (0)
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        size_t u;
        if (c >= 0x20 && c < 0x7f && !(c == '\\' && (flags & PK_ESC_BACKSLASH))) {
            PUT(c);
        } else if (c >= 0x80 && (flags & PK_ESC_KEEP_UTF8) && (u = utf8_seq(p + i, n - i)) &&
                   !utf8_is_control(p + i, u)) {
            for (size_t k = 0; k < u; k++)
                PUT(p[i + k]);
            i += u - 1;
        } else if (c == '\n' || c == '\t' || c == '\r' || c == '\\') {
            PUT('\\');
            PUT(c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\');
        } else {
            PUT('\\');
            PUT('x');
            PUT("0123456789abcdef"[c >> 4]);
            PUT("0123456789abcdef"[c & 15]);
        }
    }
#undef PUT
    if (cap)
        out[at < cap ? at : cap - 1] = 0;
    return at;
}

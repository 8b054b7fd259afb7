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

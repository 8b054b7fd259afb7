/* store_mask.c — connection strings as messages show them: every password
 * in them masked, whichever way libpq accepts it. */
#include "store/backend.h"

#include <ctype.h>
#include <stdlib.h>

#define MAX_SPANS 16

/* The byte ranges [b, e) that hold a password in target:
 *   postgresql://user:PW@host/db         (userinfo)
 *   postgresql://host/db?password=PW&... (URI query parameter)
 *   host=h password=PW  /  password = 'P W'   (keyword/value conninfo) */
static size_t password_spans(const char *t, size_t spans[][2])
{
    size_t n = 0, len = strlen(t);
    const char *scheme = strstr(t, "://");
    if (scheme) {
        const char *p = scheme + 3;
        size_t auth = strcspn(p, "/?#");
        const char *at = memchr(p, '@', auth);
        const char *colon = at ? memchr(p, ':', (size_t)(at - p)) : NULL;
        if (colon && n < MAX_SPANS) {
            spans[n][0] = (size_t)(colon + 1 - t);
            spans[n++][1] = (size_t)(at - t);
        }
        const char *q = strchr(p, '?');
        while (q && *q && n < MAX_SPANS) {
            q++;
            size_t plen = strcspn(q, "&#");
            if (plen >= 9 && !strncmp(q, "password=", 9)) {
                spans[n][0] = (size_t)(q + 9 - t);
                spans[n++][1] = (size_t)(q + plen - t);
            }
            q = q[plen] == '&' ? q + plen : NULL;
        }
        return n;
    }
    for (size_t i = 0; i + 8 <= len && n < MAX_SPANS; i++) {
        if (strncmp(t + i, "password", 8) || (i && !isspace((unsigned char)t[i - 1])))
            continue;
        size_t k = i + 8;
        while (isspace((unsigned char)t[k]))
            k++;
        if (t[k] != '=')
            continue;
        k++;
        while (isspace((unsigned char)t[k]))
            k++;
        size_t b = k;
        if (t[k] == '\'') {
            b = ++k;
            while (t[k] && t[k] != '\'')
                k += t[k] == '\\' && t[k + 1] ? 2 : 1;
        } else {
            while (t[k] && !isspace((unsigned char)t[k]))
                k++;
        }
        spans[n][0] = b;
        spans[n++][1] = k;
        i = k;
    }
    return n;
}

char *pk_store_masked(const char *target)
{
    size_t spans[MAX_SPANS][2];
    size_t n = password_spans(target, spans), len = strlen(target);
    char *s = malloc(len + 3 * n + 1);
    if (!s)
        return NULL;
    size_t o = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(s + o, target + at, spans[i][0] - at);
        o += spans[i][0] - at;
        memcpy(s + o, "***", 3);
        o += 3;
        at = spans[i][1];
    }
    memcpy(s + o, target + at, len - at + 1);
    return s;
}

void pk_store_scrub(char *msg, const char *target)
{
    size_t spans[MAX_SPANS][2];
    size_t n = password_spans(target, spans);
    for (size_t i = 0; i < n; i++) {
        size_t plen = spans[i][1] - spans[i][0];
        if (plen < 3) /* a shorter one would mask ordinary words of the message */
            continue;
        char *pw = strndup(target + spans[i][0], plen);
        for (char *hit = pw ? strstr(msg, pw) : NULL; hit; hit = strstr(hit + 3, pw)) {
            memmove(hit + 3, hit + plen, strlen(hit + plen) + 1);
            memcpy(hit, "***", 3);
        }
        free(pw);
    }
}

/* demangle.c — readable C++ names through __cxa_demangle (demangle.h). */
#include "common/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++ (and libc++abi) export it; <cxxabi.h> is C++ only. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.';
}

static bool reserve(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    char *q = realloc(*p, nc);
    if (!q)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

/* The demangled form of word[0..n) (NUL-terminated in d->dm), or NULL. */
static const char *demangle_word(pk_demangler *d, const char *w, size_t n)
{
    if (n < 3 || w[0] != '_' || w[1] != 'Z')
        return NULL;
    if (!reserve(&d->word, &d->word_cap, n + 1))
        return NULL;
    memcpy(d->word, w, n);
    d->word[n] = 0;
    int status = 0;
    size_t len = d->dm_cap;
    /* __cxa_demangle reallocs a buffer it is given (malloc'ed) */
    char *r = __cxa_demangle(d->word, d->dm, d->dm ? &len : NULL, &status);
    if (status != 0 || !r)
        return NULL;
    d->dm = r;
    if (len > d->dm_cap)
        d->dm_cap = len;
    else if (!d->dm_cap)
        d->dm_cap = strlen(r) + 1;
    return r;
}

const char *pk_demangle_text(pk_demangler *d, const char *text)
{
    if (d->off || !text || !strstr(text, "_Z"))
        return text;
    size_t used = 0;
    const char *p = text;
    while (*p) {
        size_t n = 0;
        const char *put = p, *dm = NULL;
        if (word_char(*p)) {
            while (word_char(p[n]))
                n++;
            dm = demangle_word(d, p, n);
        } else {
            n = 1;
        }
        size_t k = dm ? strlen(dm) : n;
        if (dm)
            put = dm;
        if (!reserve(&d->out, &d->out_cap, used + k + 1))
            return text;
        memcpy(d->out + used, put, k);
        used += k;
        p += n;
    }
    d->out[used] = 0;
    return d->out;
}

void pk_demangler_free(pk_demangler *d)
{
    free(d->out);
    free(d->word);
    free(d->dm);
    d->out = d->word = d->dm = NULL;
    d->out_cap = d->word_cap = d->dm_cap = 0;
}

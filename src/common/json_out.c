/* json_out.c — see json_out.h. */
#include "common/json_out.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void pk_json_init(pk_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

static void newline(pk_json *j)
{
    if (j->compact)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

static void quote(pk_json *j, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', j->out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', j->out);
            fputc(c, j->out);
        } else if (c < 0x20) {
            if (c == '\t')
                fputs("\\t", j->out);
            else if (c == '\n')
                fputs("\\n", j->out);
            else if (c == '\r')
                fputs("\\r", j->out);
            else
                fprintf(j->out, "\\u%04x", c);
        } else if (j->html_safe && (c == '<' || c == '>' || c == '&')) {
            fprintf(j->out, "\\u%04x", c);
        } else if (c < 0x80) {
            fputc(c, j->out);
        } else {
            /* keep a valid UTF-8 sequence, replace an invalid byte */
            size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
            bool ok = n && i + n <= len;
            for (size_t k = 1; ok && k < n; k++)
                ok = (p[i + k] & 0xc0) == 0x80;
            if (ok && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0) ||
                       (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90)))
                ok = false;
            if (ok) {
                fwrite(p + i, 1, n, j->out);
                i += n - 1;
            } else {
                fputs("\xef\xbf\xbd", j->out);
            }
        }
    }
    fputc('"', j->out);
}

/* Separator, newline and key before a value. */
static void value_begin(pk_json *j, const char *key)
{
    if (j->has_value[j->depth])
        fputc(',', j->out);
    if (j->depth > 0)
        newline(j);
    j->has_value[j->depth] = true;
    if (key) {
        quote(j, key, strlen(key));
        fputs(j->compact ? ":" : ": ", j->out);
    }
}

static void open_(pk_json *j, const char *key, char c)
{
    value_begin(j, key);
    fputc(c, j->out);
    if (j->depth < PK_JSON_MAX_DEPTH)
        j->depth++;
    j->has_value[j->depth] = false;
}

static void close_(pk_json *j, char c)
{
    bool had = j->has_value[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had)
        newline(j);
    fputc(c, j->out);
}

void pk_json_begin_object(pk_json *j, const char *key) { open_(j, key, '{'); }
void pk_json_end_object(pk_json *j) { close_(j, '}'); }
void pk_json_begin_array(pk_json *j, const char *key) { open_(j, key, '['); }
void pk_json_end_array(pk_json *j) { close_(j, ']'); }

void pk_json_u64(pk_json *j, const char *key, uint64_t v)
{
    value_begin(j, key);
    fprintf(j->out, "%" PRIu64, v);
}

void pk_json_i64(pk_json *j, const char *key, int64_t v)
{
    value_begin(j, key);
    fprintf(j->out, "%" PRId64, v);
}

void pk_json_double(pk_json *j, const char *key, double v)
{
    value_begin(j, key);
    if (isfinite(v))
        fprintf(j->out, "%.10g", v);
    else
        fputs("null", j->out); /* JSON has no NaN or infinity */
}

void pk_json_bool(pk_json *j, const char *key, bool v)
{
    value_begin(j, key);
    fputs(v ? "true" : "false", j->out);
}

void pk_json_strn(pk_json *j, const char *key, const char *s, size_t len)
{
    value_begin(j, key);
    quote(j, s, len);
}

void pk_json_str(pk_json *j, const char *key, const char *s) { pk_json_strn(j, key, s, strlen(s)); }

void pk_json_finish(pk_json *j) { fputc('\n', j->out); }

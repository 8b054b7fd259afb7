/* json_out.h — a small streaming JSON writer: the one JSON producer of
 * pgokit (`--json` outputs and the data of the HTML report). By default it
 * pretty-prints as LLVM's json::OStream does with an indent of 2 (so `pgokit
 * show --json` output can be compared byte for byte with `llvm-profdata show
 * --sample --json`). Keys and values are written in call order; strings are
 * escaped as LLVM does (\" \\ \t \n \r, other controls as \u00XX) and
 * invalid UTF-8 becomes U+FFFD, so the output is always valid JSON.
 * Two switches, set after pk_json_init: `compact` drops the newlines and
 * indentation (large embedded data), `html_safe` also writes '<', '>' and
 * '&' as \u003c, \u003e, \u0026 so the text can sit inside an HTML
 * <script> element whatever the strings hold (no "</script>" can appear). */
#ifndef PK_JSON_OUT_H
#define PK_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PK_JSON_MAX_DEPTH 256

typedef struct pk_json {
    FILE *out;
    int depth;
    bool compact;    /* no newlines or indentation */
    bool html_safe;  /* < > & escaped as \u00XX */
    bool has_value[PK_JSON_MAX_DEPTH + 1];
} pk_json;

void pk_json_init(pk_json *j, FILE *out);
/* key: the attribute name inside an object, NULL inside an array or at the top. */
void pk_json_begin_object(pk_json *j, const char *key);
void pk_json_end_object(pk_json *j);
void pk_json_begin_array(pk_json *j, const char *key);
void pk_json_end_array(pk_json *j);
void pk_json_u64(pk_json *j, const char *key, uint64_t v);
void pk_json_i64(pk_json *j, const char *key, int64_t v);
void pk_json_double(pk_json *j, const char *key, double v);
void pk_json_bool(pk_json *j, const char *key, bool v);
void pk_json_str(pk_json *j, const char *key, const char *s);
void pk_json_strn(pk_json *j, const char *key, const char *s, size_t len);
/* Ends the document with a newline. */
void pk_json_finish(pk_json *j);

#endif

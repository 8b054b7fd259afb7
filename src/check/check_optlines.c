/* check_optlines.c — lines only an optimized build gives code to (see
 * check_int.h): the next function's declaration bounds a function's text,
 * and a line holding only braces, "do" or "else" carries no statement. */
#include "check/check_int.h"

#include <stdlib.h>
#include <string.h>

struct optfunc {
    uint32_t id;
    uint32_t line;              /* declaration line */
    uint32_t next;              /* the next function's declaration line in the file (UINT32_MAX: none) */
    uint32_t last;              /* the last line the new binary gives the function code on */
    const char *file;
};

int pk_optlines_init(pk_optlines *o, pk_err *err)
{
    memset(o, 0, sizeof *o);
    pk_vec_init(&o->funcs, sizeof(struct optfunc));
    pk_vec_init(&o->line_at, sizeof(size_t));
    if (pk_u64map_init(&o->index, 256))
        return pk_err_set(err, "out of memory");
    return 0;
}

int pk_optlines_func(pk_optlines *o, uint32_t id, const char *file, uint32_t decl, uint32_t line, pk_err *err)
{
    uint64_t *slot = pk_u64map_slot(&o->index, id);
    if (!slot)
        return pk_err_set(err, "out of memory");
    if (*slot) {
        struct optfunc *f = &PK_VEC_AT(&o->funcs, struct optfunc, *slot - 1);
        if (line > f->last)
            f->last = line;
        return 0;
    }
    if (!decl)
        return 0;
    if (o->sorted)
        return pk_err_set(err, "check: a function recorded after the first query");
    struct optfunc *f = pk_vec_push(&o->funcs);
    if (!f)
        return pk_err_set(err, "out of memory");
    *f = (struct optfunc){id, decl, UINT32_MAX, line, file};
    *slot = o->funcs.len;
    return 0;
}

static int by_file_line(const void *a, const void *b)
{
    const struct optfunc *x = a, *y = b;
    int c = x->file == y->file ? 0 : !x->file ? -1 : !y->file ? 1 : strcmp(x->file, y->file);
    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

static void sort_funcs(pk_optlines *o)
{
    struct optfunc *f = o->funcs.data;
    size_t n = o->funcs.len;
    qsort(f, n, sizeof *f, by_file_line);
    for (size_t i = n; i-- > 0;) {
        bool same = i + 1 < n && f[i].file && f[i + 1].file &&
                    (f[i + 1].file == f[i].file || !strcmp(f[i + 1].file, f[i].file));
        f[i].next = !same ? UINT32_MAX : f[i + 1].line > f[i].line ? f[i + 1].line : f[i + 1].next;
        uint64_t *slot = pk_u64map_slot(&o->index, f[i].id);
        if (slot)
            *slot = i + 1;
    }
    o->sorted = true;
}

/* Holds `path`'s text and its line offsets; false when it cannot be read. */
static bool load_source(pk_optlines *o, const char *path)
{
    if (o->src_path && !strcmp(o->src_path, path))
        return o->src_ok;
    if (o->src_ok)
        pk_file_unmap(&o->src);
    free(o->src_path);
    o->src_ok = false;
    o->line_at.len = 0;
    if (!(o->src_path = strdup(path)))
        return false;
    pk_err err;
    if (pk_file_map_regular(&o->src, path, &err))
        return false;
    o->src_ok = true;
    size_t *first = pk_vec_push(&o->line_at);
    if (!first)
        return o->src_ok = false;
    *first = 0;
    for (size_t i = 0; i < o->src.size; i++)
        if (o->src.data[i] == '\n') {
            size_t *p = pk_vec_push(&o->line_at);
            if (!p)
                return false;
            *p = i + 1;
        }
    return true;
}

/* Whether text[0..n) holds only braces, parentheses' closing "){", "do",
 * "else", semicolons, blanks and comments, and at least one brace or
 * keyword: no statement of its own. A blank or comment-only line is not
 * one: an edit that inserts comments shifts offsets onto such lines. */
static bool structural(const char *t, size_t n)
{
    bool any = false;
    for (size_t i = 0; i < n;) {
        char ch = t[i];
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ';' || ch == ')') {
            i++;
        } else if (ch == '{' || ch == '}') {
            any = true;
            i++;
        } else if (ch == '/' && i + 1 < n && t[i + 1] == '/') {
            break;
        } else if (ch == '/' && i + 1 < n && t[i + 1] == '*') {
            const char *end = memmem(t + i + 2, n - i - 2, "*/", 2);
            if (!end)
                break;
            i = (size_t)(end - t) + 2;
        } else if (n - i >= 2 && !memcmp(t + i, "do", 2) && (i + 2 == n || !((t[i + 2] | 32) >= 'a' && (t[i + 2] | 32) <= 'z'))) {
            any = true;
            i += 2;
        } else if (n - i >= 4 && !memcmp(t + i, "else", 4) && (i + 4 == n || !((t[i + 4] | 32) >= 'a' && (t[i + 4] | 32) <= 'z'))) {
            any = true;
            i += 4;
        } else {
            return false;
        }
    }
    return any;
}

bool pk_optlines_excused(pk_optlines *o, uint32_t id, uint32_t offset)
{
    if (!o->sorted)
        sort_funcs(o);
    const uint64_t *slot = pk_u64map_get(&o->index, id);
    if (!slot || !*slot)
        return false;
    const struct optfunc *f = &PK_VEC_AT(&o->funcs, struct optfunc, *slot - 1);
    /* line 0 (code of no line: the compiler's), stored as its offset from
     * the declaration masked to 16 bits: 31038 for a function declared at
     * line 34498 */
    if (offset == ((0u - f->line) & 0xffff))
        return true;
    uint64_t line = (uint64_t)f->line + (offset & 0xffff);
    /* another function's text (functions declared inside this one, lambdas,
     * come before its last line) */
    if (f->next != UINT32_MAX && line >= f->next && line > f->last)
        return true;
    if (!f->file || !load_source(o, f->file) || line > o->line_at.len)
        return false;
    size_t from = PK_VEC_AT(&o->line_at, size_t, line - 1);
    size_t to = line < o->line_at.len ? PK_VEC_AT(&o->line_at, size_t, line) : o->src.size;
    return structural((const char *)o->src.data + from, to - from);
}

void pk_optlines_free(pk_optlines *o)
{
    if (o->src_ok)
        pk_file_unmap(&o->src);
    free(o->src_path);
    pk_vec_free(&o->funcs);
    pk_vec_free(&o->line_at);
    pk_u64map_free(&o->index);
    memset(o, 0, sizeof *o);
}

/* text.c — LLVM sample-profile text format (reader and writer).
 *
 * Writer output is the canonical form of `llvm-profdata merge --sample
 * --text`: functions by total descending then name/context, body lines by
 * (line, discriminator), targets by count descending then name, callsites by
 * location then callee name, one space of indent per nesting level,
 * !CFGChecksum for probe profiles, !Attributes only when non-zero. */
#include "format/format.h"

#include <inttypes.h>
#include <stdlib.h>

/* ---- writer ---- */

static void put_loc(pk_buf *b, uint32_t line, uint32_t disc)
{
    if (disc)
        pk_buf_printf(b, "%u.%u", line, disc);
    else
        pk_buf_printf(b, "%u", line);
}

static void put_indent(pk_buf *b, unsigned n)
{
    static const char sp[] = "                                ";
    while (n > 32) {
        pk_buf_put(b, sp, 32);
        n -= 32;
    }
    pk_buf_put(b, sp, n);
}

static void put_name(pk_buf *b, const pk_profset *ps, pk_name_id id)
{
    pk_buf_put(b, pk_profset_name(ps, id), pk_profset_name_len(ps, id));
}

/* Names the text cannot carry: a line break ends the line, a leading space
 * reads as indentation (or as a second space after the location), and at
 * the start of a line '#' starts a comment and '[' a context; control
 * characters make the file look binary (pk_file_identify). After
 * "LOC: ", an inlinee's name that starts with a digit reads as a sample
 * count unless its first word holds a ':' (an MD5 GUID name, "123:45").
 * Call targets are separated by spaces; a target's name may hold spaces
 * (llvm-profdata writes "operator delete(void*):3") but not ":COUNT ". A profile read from a binary format may hold
 * them; written as text, it could not be read back. */
enum name_at { NAME_TOP, NAME_INLINEE, NAME_TARGET };

/* Whether a call target's name would not come back whole from
 * parse_targets: it takes the first ':' (past the name's first byte)
 * followed by digits and a space or the end as the name's end, so a
 * name holding ":123 " would be read as two targets. */
static bool target_splits(const char *s, size_t n)
{
    for (size_t c = 1; c < n; c++) {
        if (s[c] != ':')
            continue;
        size_t d = c + 1;
        while (d < n && s[d] >= '0' && s[d] <= '9')
            d++;
        if (d > c + 1 && d < n && s[d] == ' ')
            return true;
    }
    return false;
}

/* C0 controls other than tab, and DEL: no text profile holds them, and
 * pk_file_identify takes a file that does for binary data. */
static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

static int check_name(const pk_profset *ps, pk_name_id id, enum name_at at, pk_err *err)
{
    const char *s = pk_profset_name(ps, id);
    size_t n = pk_profset_name_len(ps, id);
    const char *sp = n ? memchr(s, ' ', n) : NULL;
    const char *why = !n                                   ? "is empty"
                      : memchr(s, '\n', n) || memchr(s, '\r', n) ? "holds a line break"
                      : has_control(s, n)                  ? "holds a control character"
                      : s[0] == ' '                        ? "starts with a space"
                      : at == NAME_TOP && (s[0] == '#' || s[0] == '[') ? "starts with '#' or '['"
                      : at == NAME_INLINEE && s[0] >= '0' && s[0] <= '9' && sp && !memchr(s, ':', (size_t)(sp - s))
                          ? "starts with a digit and holds a space (it would read as a sample count)"
                      : at == NAME_TARGET && target_splits(s, n) ? "is a call target holding ':COUNT ' (it would read as two targets)"
                                                                 : NULL;
    if (why)
        return pk_err_set(err, "the function name \"%.60s\" %s: it cannot be written as a text profile", s, why);
    return 0;
}

static int write_fprof(const pk_profset *ps, const pk_fprof *f, unsigned indent, pk_buf *b, pk_err *err)
{
    if ((indent || !(ps->kind & PK_PROF_CS)) && check_name(ps, f->name, indent ? NAME_INLINEE : NAME_TOP, err))
        return -1;
    if (indent == 0 && (ps->kind & PK_PROF_CS)) {
        size_t need = pk_profset_ctx_text(ps, f->ctx, NULL, 0);
        char *t = malloc(need + 1);
        if (!t)
            return pk_err_set(err, "out of memory");
        pk_profset_ctx_text(ps, f->ctx, t, need + 1);
        pk_buf_put(b, "[", 1);
        pk_buf_put(b, t, need);
        pk_buf_put(b, "]", 1);
        free(t);
    } else {
        put_name(b, ps, f->name);
    }
    if (indent == 0)
        pk_buf_printf(b, ":%" PRIu64 ":%" PRIu64 "\n", f->total, f->head);
    else
        pk_buf_printf(b, ":%" PRIu64 "\n", f->total);
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, f, &v, err))
        return -1;
    for (size_t i = 0; i < v.nbody; i++) {
        const pk_body_entry *e = &v.body[i];
        put_indent(b, indent + 1);
        put_loc(b, e->line, e->disc);
        pk_buf_printf(b, ": %" PRIu64, e->count);
        for (uint32_t k = 0; k < e->ncalls; k++) {
            if (check_name(ps, e->calls[k].name, NAME_TARGET, err)) {
                pk_fprof_view_free(&v);
                return -1;
            }
            pk_buf_put(b, " ", 1);
            put_name(b, ps, e->calls[k].name);
            pk_buf_printf(b, ":%" PRIu64, e->calls[k].count);
        }
        pk_buf_put(b, "\n", 1);
    }
    for (size_t i = 0; i < v.nsites; i++) {
        put_indent(b, indent + 1);
        put_loc(b, v.sites[i].line, v.sites[i].disc);
        pk_buf_put(b, ": ", 2);
        if (write_fprof(ps, v.sites[i].callee, indent + 1, b, err)) {
            pk_fprof_view_free(&v);
            return -1;
        }
    }
    pk_fprof_view_free(&v);
    if (ps->kind & PK_PROF_PROBE) {
        put_indent(b, indent + 1);
        pk_buf_printf(b, "!CFGChecksum: %" PRIu64 "\n", f->checksum);
    }
    if (f->attrs) {
        put_indent(b, indent + 1);
        pk_buf_printf(b, "!Attributes: %u\n", f->attrs);
    }
    return 0;
}

int pk_text_write_one(const pk_profset *ps, const pk_fprof *f, pk_buf *out, pk_err *err)
{
    return write_fprof(ps, f, 0, out, err);
}

int pk_text_write(const pk_profset *ps, pk_buf *out, pk_err *err)
{
    pk_fprof **fs;
    size_t n;
    if (pk_profset_sorted(ps, &fs, &n, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (write_fprof(ps, fs[i], 0, out, err)) {
            free(fs);
            return -1;
        }
    }
    free(fs);
    return 0;
}

/* ---- reader ---- */

#define TEXT_MAX_DEPTH 1024

struct text_rd {
    pk_profset *ps;
    const char *path;
    size_t lineno;
    pk_err *err;
};

static int rd_fail(struct text_rd *r, const char *line, size_t len, const char *what)
{
    pk_err_set(r->err, "%s: line %zu: %s: '%.*s'", r->path, r->lineno, what, (int)(len > 200 ? 200 : len), line);
    return -1;
}

/* Parses a decimal u64 occupying exactly [s, s+len). */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (!len || len > 20)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_loc(const char *s, size_t len, uint32_t *line, uint32_t *disc)
{
    const char *dot = memchr(s, '.', len);
    uint64_t l, d = 0;
    if (dot) {
        if (parse_u64(s, (size_t)(dot - s), &l) || parse_u64(dot + 1, len - (size_t)(dot - s) - 1, &d))
            return -1;
    } else if (parse_u64(s, len, &l)) {
        return -1;
    }
    if (l > 0xffff || d > UINT32_MAX)
        return -1;
    *line = (uint32_t)l;
    *disc = (uint32_t)d;
    return 0;
}

/* "name:TOTAL:HEAD" (header) — split at the last two colons. */
static int parse_header(struct text_rd *r, const char *s, size_t len, pk_fprof **out)
{
    const char *c2 = NULL, *c1 = NULL;
    for (size_t i = len; i-- > 0;) {
        if (s[i] == ':') {
            if (!c2)
                c2 = s + i;
            else {
                c1 = s + i;
                break;
            }
        }
    }
    uint64_t total, head;
    if (!c1 || c1 == s || parse_u64(c1 + 1, (size_t)(c2 - c1 - 1), &total) ||
        parse_u64(c2 + 1, (size_t)(s + len - c2 - 1), &head))
        return rd_fail(r, s, len, "expected 'name:TOTAL:HEAD'");
    size_t nlen = (size_t)(c1 - s);
    pk_fprof *f;
    int is_ctx = s[0] == '[';
    size_t nprof = r->ps->top.len;
    if (nprof && !!(r->ps->kind & PK_PROF_CS) != is_ctx)
        return rd_fail(r, s, len, "mixing context-sensitive and plain function profiles");
    if (is_ctx) {
        if (nlen < 3 || s[nlen - 1] != ']')
            return rd_fail(r, s, len, "bad context header");
        pk_ctx_id ctx;
        if (pk_profset_ctx_parse(r->ps, s + 1, nlen - 2, &ctx, r->err))
            return pk_err_prefix(r->err, "%s: line %zu", r->path, r->lineno);
        size_t nf;
        const pk_ctx_frame *fr = pk_profset_ctx(r->ps, ctx, &nf);
        for (size_t i = 0; i < nf; i++)
            if (fr[i].line > 0xffff) /* as body lines: the binary formats hold 16 bits */
                return rd_fail(r, s, len, "context line offset above 65535");
        r->ps->kind |= PK_PROF_CS;
        f = pk_profset_get_ctx(r->ps, ctx, r->err);
    } else {
        pk_name_id id;
        if (pk_profset_intern(r->ps, s, nlen, &id, r->err))
            return -1;
        f = pk_profset_get_func(r->ps, id, r->err);
    }
    if (!f)
        return -1;
    f->total = pk_sat_add(f->total, total);
    f->head = pk_sat_add(f->head, head);
    *out = f;
    return 0;
}

/* Call targets: " name:COUNT name:COUNT ...", where names may contain ':'
 * and spaces; an anchor is a ':' followed by an integer word. */
static int parse_targets(struct text_rd *r, pk_fprof *f, uint32_t line, uint32_t disc, const char *s, size_t len,
                         const char *whole, size_t wlen)
{
    size_t pos = 0;
    while (pos < len) {
        while (pos < len && s[pos] == ' ')
            pos++;
        if (pos == len)
            break;
        size_t start = pos;
        int found = 0;
        for (size_t c = pos; c < len; c++) {
            if (s[c] != ':' || c == start)
                continue;
            size_t we = c + 1;
            while (we < len && s[we] != ' ')
                we++;
            uint64_t cnt;
            if (parse_u64(s + c + 1, we - c - 1, &cnt) == 0) {
                pk_name_id id;
                if (pk_profset_intern(r->ps, s + start, c - start, &id, r->err) ||
                    pk_fprof_add_call(f, line, disc, id, cnt, r->err))
                    return -1;
                pos = we;
                found = 1;
                break;
            }
        }
        if (!found)
            return rd_fail(r, whole, wlen, "bad call target list");
    }
    return 0;
}

int pk_text_read(pk_profset *ps, const uint8_t *data, size_t size, const char *path, pk_err *err)
{
    struct text_rd r = {ps, path, 0, err};
    pk_fprof *stack[TEXT_MAX_DEPTH];
    unsigned char meta[TEXT_MAX_DEPTH];
    size_t depth = 0; /* profiles on the stack */
    const char *p = (const char *)data, *end = p + size;
    int any_checksum = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        size_t len = (size_t)(le - s);
        p = nl ? nl + 1 : end;
        r.lineno++;
        if (len && s[len - 1] == '\r')
            len--;
        if (memchr(s, 0, len))
            return rd_fail(&r, s, len, "NUL byte in text profile");
        size_t ind = 0;
        while (ind < len && s[ind] == ' ')
            ind++;
        if (ind == len || s[ind] == '#')
            continue;
        if (ind == 0) {
            pk_fprof *f = NULL;
            if (parse_header(&r, s, len, &f))
                return -1;
            stack[0] = f;
            meta[0] = 0;
            depth = 1;
            continue;
        }
        if (!depth)
            return rd_fail(&r, s, len, "body line before any function header");
        if (ind > depth || ind >= TEXT_MAX_DEPTH)
            return rd_fail(&r, s, len, "unexpected indentation");
        depth = ind;
        pk_fprof *f = stack[depth - 1];
        const char *b = s + ind;
        size_t blen = len - ind;
        if (b[0] == '!') {
            uint64_t v;
            if (blen > 14 && !memcmp(b, "!CFGChecksum: ", 14) && !parse_u64(b + 14, blen - 14, &v)) {
                f->checksum = v;
                any_checksum = 1;
            } else if (blen > 13 && !memcmp(b, "!Attributes: ", 13) && !parse_u64(b + 13, blen - 13, &v) &&
                       v <= UINT32_MAX) {
                f->attrs = (uint32_t)v;
                if (v & PK_ATTR_SHOULD_BE_INLINED)
                    ps->kind |= PK_PROF_PREINLINED;
            } else {
                return rd_fail(&r, s, len, "unknown metadata line");
            }
            meta[depth - 1] = 1;
            continue;
        }
        if (meta[depth - 1])
            return rd_fail(&r, s, len, "found non-metadata after metadata");
        const char *colon = memchr(b, ':', blen);
        uint32_t line, disc;
        if (!colon || parse_loc(b, (size_t)(colon - b), &line, &disc))
            return rd_fail(&r, s, len, "expected 'LINE[.DISCRIMINATOR]: ...' (line offsets <= 65535)");
        const char *rest = colon + 1;
        size_t rlen = (size_t)(s + len - rest);
        if (rlen < 2 || rest[0] != ' ' || rest[1] == ' ')
            return rd_fail(&r, s, len, "expected exactly one space after the location");
        rest++;
        rlen--;
        size_t ce = 0;
        while (ce < rlen && rest[ce] != ' ')
            ce++;
        /* A count is a word of digits; digits followed by ':' are a callee
         * named by its MD5 GUID (llvm-profdata and we write MD5 profiles as
         * text that way; llvm-profdata's own reader refuses the line). */
        if (rest[0] >= '0' && rest[0] <= '9' && !memchr(rest, ':', ce)) {
            uint64_t cnt;
            if (parse_u64(rest, ce, &cnt))
                return rd_fail(&r, s, len, "bad sample count");
            if (pk_fprof_add_body(f, line, disc, cnt, err) ||
                parse_targets(&r, f, line, disc, rest + ce, rlen - ce, s, len))
                return -1;
        } else {
            const char *lc = NULL;
            for (size_t i = rlen; i-- > 0;)
                if (rest[i] == ':') {
                    lc = rest + i;
                    break;
                }
            uint64_t total;
            if (!lc || lc == rest || parse_u64(lc + 1, (size_t)(rest + rlen - lc - 1), &total))
                return rd_fail(&r, s, len, "expected 'LOC: callee:TOTAL'");
            if (depth + 1 >= TEXT_MAX_DEPTH)
                return rd_fail(&r, s, len, "inlining too deep");
            pk_name_id id;
            pk_fprof *c;
            if (pk_profset_intern(ps, rest, (size_t)(lc - rest), &id, err) ||
                !(c = pk_fprof_callsite(ps, f, line, disc, id, err)))
                return -1;
            c->total = pk_sat_add(c->total, total);
            stack[depth] = c;
            meta[depth] = 0;
            depth++;
        }
    }
    if (any_checksum)
        ps->kind |= PK_PROF_PROBE;
    return 0;
}

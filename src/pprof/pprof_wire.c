/* pprof_wire.c — the protobuf wire walk under the pprof reader: fields with
 * their offsets, a schema check that names the first bad byte (protobuf-c's
 * unpack only answers yes or no), and gzip decompression with a size cap. */
#include "pprof/pprof_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

/* ---- the schema of profile.proto, field by field ---- */
#define N(a) (sizeof a / sizeof a[0])
static const pw_fspec value_type_f[] = {
    {1, PWK_VARINT, "type", NULL}, {2, PWK_VARINT, "unit", NULL},
};
const pw_mspec pw_value_type = {"ValueType", value_type_f, N(value_type_f)};

static const pw_fspec label_f[] = {
    {1, PWK_VARINT, "key", NULL}, {2, PWK_VARINT, "str", NULL},
    {3, PWK_VARINT, "num", NULL}, {4, PWK_VARINT, "num_unit", NULL},
};
static const pw_mspec pw_label = {"Label", label_f, N(label_f)};

static const pw_fspec sample_f[] = {
    {1, PWK_REP_VARINT, "location_id", NULL}, {2, PWK_REP_VARINT, "value", NULL},
    {3, PWK_MSG, "label", &pw_label},
};
const pw_mspec pw_sample = {"Sample", sample_f, N(sample_f)};

static const pw_fspec mapping_f[] = {
    {1, PWK_VARINT, "id", NULL}, {2, PWK_VARINT, "memory_start", NULL},
    {3, PWK_VARINT, "memory_limit", NULL}, {4, PWK_VARINT, "file_offset", NULL},
    {5, PWK_VARINT, "filename", NULL}, {6, PWK_VARINT, "build_id", NULL},
    {7, PWK_VARINT, "has_functions", NULL}, {8, PWK_VARINT, "has_filenames", NULL},
    {9, PWK_VARINT, "has_line_numbers", NULL}, {10, PWK_VARINT, "has_inline_frames", NULL},
};
const pw_mspec pw_mapping = {"Mapping", mapping_f, N(mapping_f)};

static const pw_fspec line_f[] = {
    {1, PWK_VARINT, "function_id", NULL}, {2, PWK_VARINT, "line", NULL},
    {3, PWK_VARINT, "column", NULL},
};
static const pw_mspec pw_line = {"Line", line_f, N(line_f)};

static const pw_fspec location_f[] = {
    {1, PWK_VARINT, "id", NULL}, {2, PWK_VARINT, "mapping_id", NULL},
    {3, PWK_VARINT, "address", NULL}, {4, PWK_MSG, "line", &pw_line},
    {5, PWK_VARINT, "is_folded", NULL},
};
const pw_mspec pw_location = {"Location", location_f, N(location_f)};

static const pw_fspec function_f[] = {
    {1, PWK_VARINT, "id", NULL}, {2, PWK_VARINT, "name", NULL},
    {3, PWK_VARINT, "system_name", NULL}, {4, PWK_VARINT, "filename", NULL},
    {5, PWK_VARINT, "start_line", NULL},
};
const pw_mspec pw_function = {"Function", function_f, N(function_f)};

static const pw_fspec profile_f[] = {
    {1, PWK_MSG, "sample_type", &pw_value_type}, {2, PWK_MSG, "sample", &pw_sample},
    {3, PWK_MSG, "mapping", &pw_mapping}, {4, PWK_MSG, "location", &pw_location},
    {5, PWK_MSG, "function", &pw_function}, {6, PWK_BYTES, "string_table", NULL},
    {7, PWK_VARINT, "drop_frames", NULL}, {8, PWK_VARINT, "keep_frames", NULL},
    {9, PWK_VARINT, "time_nanos", NULL}, {10, PWK_VARINT, "duration_nanos", NULL},
    {11, PWK_MSG, "period_type", &pw_value_type}, {12, PWK_VARINT, "period", NULL},
    {13, PWK_REP_VARINT, "comment", NULL}, {14, PWK_VARINT, "default_sample_type", NULL},
    {15, PWK_VARINT, "doc_url", NULL},
};
const pw_mspec pw_profile = {"Profile", profile_f, N(profile_f)};
#undef N

const pw_fspec *pw_spec_field(const pw_mspec *m, uint32_t num)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->f[i].num == num)
            return &m->f[i];
    return NULL;
}

/* ---- wire walk ---- */
bool pw_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    size_t p = *pos;
    for (unsigned i = 0; i < 10; i++) {
        if (p >= end)
            return false;
        uint8_t c = b[p++];
        if (i == 9 && c > 1) /* bits past 64 */
            return false;
        x |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = x;
            *pos = p;
            return true;
        }
    }
    return false;
}

static int pw_fail(pw_error *e, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pw_fail(pw_error *e, size_t off, const char *fmt, ...)
{
    va_list ap;
    e->off = off;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *field_name(const pw_mspec *m, uint32_t num, char *buf, size_t cap)
{
    const pw_fspec *fs = m ? pw_spec_field(m, num) : NULL;
    if (fs)
        snprintf(buf, cap, "field %u (%s)", num, fs->name);
    else
        snprintf(buf, cap, "field %u", num);
    return buf;
}

int pw_next(const uint8_t *b, size_t end, size_t *pos, pw_field *f, const pw_mspec *m, pw_error *e)
{
    if (*pos >= end)
        return 0;
    size_t p = *pos;
    uint64_t tag;
    f->off = p;
    if (!pw_varint(b, end, &p, &tag))
        return pw_fail(e, p, "truncated or overlong field tag");
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
        return pw_fail(e, f->off, "invalid field number %llu", (unsigned long long)(tag >> 3));
    f->num = (uint32_t)(tag >> 3);
    f->wt = (uint8_t)(tag & 7);
    f->v = 0;
    f->data = f->len = 0;
    char fname[64]; /* "field 4 (location)": filled on errors only (this is the hot path) */
#define FNAME field_name(m, f->num, fname, sizeof fname)
    switch (f->wt) {
    case PW_VARINT: {
        size_t vp = p;
        if (!pw_varint(b, end, &p, &f->v))
            return pw_fail(e, vp, "%s: truncated or overlong varint", FNAME);
        break;
    }
    case PW_I64:
    case PW_I32: {
        size_t w = f->wt == PW_I64 ? 8 : 4;
        if (end - p < w)
            return pw_fail(e, p, "%s: truncated %zu-byte value", FNAME, w);
        for (size_t i = 0; i < w; i++)
            f->v |= (uint64_t)b[p + i] << (8 * i);
        p += w;
        break;
    }
    case PW_LEN: {
        size_t lp = p;
        uint64_t len;
        if (!pw_varint(b, end, &p, &len))
            return pw_fail(e, lp, "%s: truncated or overlong length", FNAME);
        if (len > end - p)
            return pw_fail(e, lp, "%s: length %llu runs past the end of its message (%zu bytes left)", FNAME,
                           (unsigned long long)len, end - p);
        f->data = p;
        f->len = (size_t)len;
        p += (size_t)len;
        break;
    }
    default:
        return pw_fail(e, f->off, "%s: wire type %u is not used by profile.proto%s", FNAME, f->wt,
                       f->wt == PW_SGROUP || f->wt == PW_EGROUP ? " (a group)" : " (invalid)");
    }
    *pos = p;
    return 1;
#undef FNAME
}

/* Replaces e's message, cut to fit (a prefixed message may not). */
static void set_msg(pw_error *e, const char *s)
{
    size_t n = strnlen(s, sizeof e->msg - 1);
    memcpy(e->msg, s, n);
    e->msg[n] = 0;
}

static const char *wt_name(uint8_t wt)
{
    static const char *const names[] = {"varint", "64-bit", "length-delimited", "group start", "group end", "32-bit"};
    return wt < 6 ? names[wt] : "invalid";
}

static int check_depth(const pw_mspec *m, const uint8_t *b, size_t start, size_t end, int depth, pw_error *e)
{
    if (depth > 8) /* profile.proto nests 3 deep */
        return pw_fail(e, start, "%s nested too deeply", m->name);
    size_t pos = start;
    pw_field f;
    int r;
    while ((r = pw_next(b, end, &pos, &f, m, e)) > 0) {
        const pw_fspec *fs = pw_spec_field(m, f.num);
        if (!fs)
            continue; /* unknown field: skipped, as protobuf readers do */
        bool ok;
        switch (fs->kind) {
        case PWK_VARINT: ok = f.wt == PW_VARINT; break;
        case PWK_REP_VARINT: ok = f.wt == PW_VARINT || f.wt == PW_LEN; break;
        default: ok = f.wt == PW_LEN; break;
        }
        if (!ok)
            return pw_fail(e, f.off, "%s.%s (field %u) has wire type %s, expected %s", m->name, fs->name, f.num,
                           wt_name(f.wt), fs->kind == PWK_VARINT ? "varint" : fs->kind == PWK_REP_VARINT ? "varint or packed" : "length-delimited");
        if (fs->kind == PWK_REP_VARINT && f.wt == PW_LEN) {
            size_t p = f.data, q = f.data + f.len;
            uint64_t v;
            while (p < q)
                if (!pw_varint(b, q, &p, &v))
                    return pw_fail(e, p, "%s.%s (field %u): packed varints end in a truncated or overlong varint",
                                   m->name, fs->name, f.num);
        } else if (fs->kind == PWK_MSG) {
            if (check_depth(fs->msg, b, f.data, f.data + f.len, depth + 1, e)) {
                char full[sizeof e->msg + 128];
                snprintf(full, sizeof full, "in %s.%s at offset %zu: %s", m->name, fs->name, f.off, e->msg);
                set_msg(e, full);
                return -1;
            }
        }
    }
    if (r < 0) {
        char full[sizeof e->msg + 64];
        snprintf(full, sizeof full, "%s: %s", m->name, e->msg);
        set_msg(e, full);
    }
    return r;
}

int pw_check(const pw_mspec *m, const uint8_t *b, size_t start, size_t end, pw_error *e)
{
    return check_depth(m, b, start, end, 0, e);
}

/* ---- gzip ---- */
int pk_pprof_gunzip(const uint8_t *in, size_t n, uint64_t max, uint8_t **out, size_t *out_len,
                    const char *name, pk_err *err)
{
    *out = NULL;
    *out_len = 0;
    /* The trailer's ISIZE (size mod 2^32 of the last member) is a hint for
     * the first allocation, never trusted beyond the cap, nor beyond what
     * deflate can make of the input (at most 1032 bytes per byte): a
     * 30-byte file claiming 1 GiB gets a small buffer that grows if the
     * data really is that large. */
    size_t cap = 1 << 16;
    if (n >= 18) {
        uint32_t isize = pk_ld32(in + n - 4);
        if (isize > cap && isize <= max && isize / 1032 <= n)
            cap = isize;
    }
    if (cap > max)
        cap = (size_t)max;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return pk_err_set(err, "%s: out of memory", name);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        free(buf);
        return pk_err_set(err, "%s: cannot start gzip decompression", name);
    }
    size_t len = 0, member = 0;
    int rc = 0;
    for (;;) {
        /* zlib counts in uInt: feed the input in slices. */
        size_t done_in = member + z.total_in;
        if (z.avail_in == 0 && done_in < n) {
            z.next_in = (Bytef *)(in + done_in);
            z.avail_in = (uInt)(n - done_in > (1u << 30) ? (1u << 30) : n - done_in);
        }
        if (len == cap) {
            if (cap >= max) {
                rc = pk_err_set(err, "%s: decompresses to more than %llu bytes (the limit; a gzip bomb?), "
                                "at compressed offset %zu", name, (unsigned long long)max, member + (size_t)z.total_in);
                break;
            }
            size_t ncap = cap * 2 > max ? (size_t)max : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                rc = pk_err_set(err, "%s: out of memory decompressing (%zu bytes)", name, ncap);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        z.next_out = buf + len;
        z.avail_out = (uInt)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
        uInt before = z.avail_out;
        int zr = inflate(&z, Z_NO_FLUSH);
        len += before - z.avail_out;
        if (zr == Z_STREAM_END) {
            member += z.total_in;
            /* Another member may follow (concatenated gzip files). */
            if (member >= n)
                break;
            if (n - member < 2 || in[member] != 0x1f || in[member + 1] != 0x8b) {
                rc = pk_err_set(err, "%s: offset %zu: %zu bytes of garbage after the gzip stream", name, member,
                                n - member);
                break;
            }
            inflateReset(&z);
            z.avail_in = 0;
            continue;
        }
        if (zr == Z_OK)
            continue;
        if (zr == Z_BUF_ERROR && z.avail_out > 0 && member + z.total_in >= n) {
            rc = pk_err_set(err, "%s: compressed offset %zu: gzip stream truncated (no end marker)", name, n);
            break;
        }
        if (zr == Z_BUF_ERROR && z.avail_out == 0)
            continue; /* output full: grow */
        rc = pk_err_set(err, "%s: compressed offset %zu: bad gzip data (%s)", name, member + (size_t)z.total_in,
                        z.msg ? z.msg : zr == Z_MEM_ERROR ? "out of memory" : "inflate failed");
        break;
    }
    inflateEnd(&z);
    if (rc) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

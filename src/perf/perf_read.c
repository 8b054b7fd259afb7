/* perf_read.c — the container layer of the perf.data reader: file header,
 * attr table, feature sections, the record loop over an mmapped file or a
 * pipe, and the zstd stream of PERF_RECORD_COMPRESSED.
 *
 * Memory stays bounded whatever the file size: a regular file is mmapped and
 * walked front to back (MADV_SEQUENTIAL lets the kernel drop pages behind
 * us), a pipe goes through a fixed buffer, and a compressed stream through a
 * fixed decompression window whose unfinished tail record is carried over to
 * the next chunk. */
#include "perf/perf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PK_WIN_SIZE (1u << 20)          /* decompression window */
#define PK_PIPE_BUF (1u << 18)          /* > 64 KiB, the largest record */

/* ---- compressed stream ---- */

static int parse_window(pk_reader *r)
{
    size_t pos = 0;
    int rc = 0;
    r->in_decompressed = true;
    while (pos < r->win_len) {
        size_t avail = r->win_len - pos;
        if (r->dec_skip) {
            size_t n = r->dec_skip < avail ? (size_t)r->dec_skip : avail;
            r->dec_skip -= n;
            pos += n;
            continue;
        }
        if (avail < 8)
            break;
        const uint8_t *rec = r->win + pos;
        uint16_t size = pk_ld16(rec + 6);
        if (size < 8) {
            rc = pk_reader_fail(r, r->dec_base + pos, "record size %u is smaller than 8 (type %u)", size, pk_ld32(rec));
            break;
        }
        if (size > avail)
            break;
        uint64_t extra;
        rc = pk_reader_record(r, rec, size, r->dec_base + pos, &extra);
        if (rc)
            break;
        pos += size;
        r->dec_skip = extra;
    }
    r->in_decompressed = false;
    if (rc)
        return rc;
    if (pos) {
        memmove(r->win, r->win + pos, r->win_len - pos);
        r->win_len -= pos;
        r->dec_base += pos;
    }
    return 0;
}

int pk_reader_decompress(pk_reader *r, const uint8_t *data, size_t len, uint64_t off)
{
    r->cur_comp_offset = off;
    r->st->compressed_bytes += len;
    if (!r->zds) {
        r->zds = ZSTD_createDStream();
        r->win = malloc(PK_WIN_SIZE);
        if (!r->zds || !r->win)
            return pk_reader_fail(r, off, "out of memory for the decompression window");
        ZSTD_initDStream(r->zds);
        r->win_cap = PK_WIN_SIZE;
    }
    ZSTD_inBuffer in = {data, len, 0};
    bool out_full = false;
    while (in.pos < in.size || out_full) {
        ZSTD_outBuffer out = {r->win + r->win_len, r->win_cap - r->win_len, 0};
        size_t zr = ZSTD_decompressStream(r->zds, &out, &in);
        if (ZSTD_isError(zr))
            return pk_err_set(r->err, "%s: offset %llu: COMPRESSED record: zstd: %s", r->name,
                              (unsigned long long)off, ZSTD_getErrorName(zr));
        out_full = out.pos == out.size;
        r->win_len += out.pos;
        r->st->decompressed_bytes += out.pos;
        int rc = parse_window(r);
        if (rc)
            return rc;
        if (r->win_len == r->win_cap)   /* cannot happen: records are < 64 KiB */
            return pk_reader_fail(r, off, "decompression window full");
        if (out.pos == 0 && in.pos == in.size)
            break;
    }
    return 0;
}

int pk_reader_decompress_finish(pk_reader *r)
{
    if (!r->zds)
        return 0;
    if (r->win_len || r->dec_skip) {
        r->in_decompressed = true;
        int rc = pk_reader_fail(r, r->dec_base, "compressed stream ends inside a record (%zu bytes left over)",
                                r->win_len);
        r->in_decompressed = false;
        return rc;
    }
    return 0;
}

/* ---- records in memory (mmapped file, file or pipe mode) ---- */

/* Pages already read are dropped in chunks this large: memory stays flat
 * whatever the file size (4 MiB measured as fast as 32 MiB, a third of the
 * RSS on a 197 MB recording). */
#define PK_DROP_CHUNK (4u << 20)
#define PK_PREFETCH (2u << 10)      /* bytes fetched ahead of the record walk */

static void drop_behind(pk_reader *r, uint64_t pos)
{
    /* records held back for time ordering are read where they lie */
    uint64_t upto = pk_order_oldest_mapped(r, pos) & ~(uint64_t)(PK_DROP_CHUNK - 1);
    if (r->map_base && upto > r->map_dropped + PK_DROP_CHUNK) {
        madvise((void *)(r->map_base + r->map_dropped), (size_t)(upto - r->map_dropped), MADV_DONTNEED);
        r->map_dropped = upto;
    }
}

static int mem_records(pk_reader *r, const uint8_t *base, uint64_t start, uint64_t end)
{
    uint64_t pos = start, next_drop = start + PK_DROP_CHUNK, fetched = start;
    int rc = 0;
    r->rec_base = base;
    while (pos < end) {
        if (pos >= next_drop) {
            drop_behind(r, pos);
            next_drop = pos + PK_DROP_CHUNK;
        }
        if (end - pos < 8 && r->st->pipe_mode) {
            r->st->tail_bytes = end - pos;
            r->st->tail_offset = pos;
            break;
        }
        /* Records are queued for time ordering after a glance at their
         * header, and decoded a round later: walking from header to header
         * would wait on memory at each record (a third more CPU time on a
         * recording of 1.4 M LBR samples). Fetching the bytes ahead brings
         * that down to a few percent; 2 KiB ahead measured best (1 to 64
         * KiB tried: farther evicts what the round's delivery still reads). */
        for (uint64_t ahead = pos + PK_PREFETCH < end ? pos + PK_PREFETCH : end; fetched < ahead; fetched += 64)
            __builtin_prefetch(base + fetched);
        if (end - pos < 8)
            return pk_reader_fail(r, pos, "truncated record header: %llu bytes left before the end of the data at %llu",
                                  (unsigned long long)(end - pos), (unsigned long long)end);
        const uint8_t *rec = base + pos;
        uint16_t size = pk_ld16(rec + 6);
        if (size < 8)
            return pk_reader_fail(r, pos, "record size %u is smaller than 8 (type %u)", size, pk_ld32(rec));
        if (size > end - pos)
            return pk_reader_fail(r, pos, "record of %u bytes (type %u) runs past the end of the data at %llu",
                                  size, pk_ld32(rec), (unsigned long long)end);
        uint64_t extra;
        rc = pk_reader_record(r, rec, size, pos, &extra);
        if (rc)
            return rc;
        pos += size;
        if (extra) {
            if (extra > end - pos)
                return pk_reader_fail(r, pos - size, "record's extra payload of %llu bytes runs past the end of the data at %llu",
                                      (unsigned long long)extra, (unsigned long long)end);
            pos += extra;
        }
    }
    rc = pk_order_finish(r);
    return rc ? rc : pk_reader_decompress_finish(r);
}

static int check_magic(pk_reader *r, const uint8_t *p, size_t avail)
{
    if (avail < 16)
        return pk_err_set(r->err, "%s: offset 0: file of %zu bytes is too short to be a perf.data", r->name, avail);
    uint64_t magic = pk_ld64(p);
    if (magic == PK_PERF_MAGIC2)
        return 0;
    if (magic == __builtin_bswap64(PK_PERF_MAGIC2))
        return pk_err_set(r->err, "%s: offset 0: perf.data in the other byte order (big-endian) is not supported", r->name);
    if (magic == PK_PERF_MAGIC1 || magic == __builtin_bswap64(PK_PERF_MAGIC1))
        return pk_err_set(r->err, "%s: offset 0: old perf.data format (magic PERFFILE, version 1) is not supported", r->name);
    return pk_err_set(r->err, "%s: offset 0: not a perf.data file (bad magic)", r->name);
}

static int sect_check(pk_reader *r, const char *what, uint64_t off, uint64_t size, uint64_t fsize, uint64_t at)
{
    if (off > fsize || size > fsize - off)
        return pk_err_set(r->err, "%s: offset %llu: %s section [%llu, +%llu) lies outside the file (%llu bytes): truncated?",
                          r->name, (unsigned long long)at, what, (unsigned long long)off,
                          (unsigned long long)size, (unsigned long long)fsize);
    return 0;
}

static int file_mode(pk_reader *r, const uint8_t *d, uint64_t fsize)
{
    if (fsize < PK_FILE_HEADER_SIZE)
        return pk_err_set(r->err, "%s: offset %llu: file header truncated", r->name, (unsigned long long)fsize);
    uint64_t attr_size = pk_ld64(d + 16);
    uint64_t attrs_off = pk_ld64(d + 24), attrs_size = pk_ld64(d + 32);
    uint64_t data_off = pk_ld64(d + 40), data_size = pk_ld64(d + 48);
    for (int i = 0; i < 4; i++)
        r->st->features[i] = pk_ld64(d + 72 + 8 * i);
    if (attr_size < 16 + 64 || attr_size > (1u << 16))
        return pk_err_set(r->err, "%s: offset 16: implausible attr entry size %llu", r->name, (unsigned long long)attr_size);
    if (sect_check(r, "attrs", attrs_off, attrs_size, fsize, 24) ||
        sect_check(r, "data", data_off, data_size, fsize, 40))
        return -1;
    if (attrs_size % attr_size)
        return pk_err_set(r->err, "%s: offset 32: attrs section size %llu is not a multiple of the entry size %llu",
                          r->name, (unsigned long long)attrs_size, (unsigned long long)attr_size);
    if (data_size == 0 && fsize > data_off) {
        /* perf record killed before it wrote the header back: perf itself
         * reads to the end of the file; the feature table is unknown. */
        data_size = fsize - data_off;
        memset(r->st->features, 0, sizeof r->st->features);
    }
    r->st->data_offset = data_off;
    r->st->data_size = data_size;

    for (uint64_t i = 0; i < attrs_size / attr_size; i++) {
        uint64_t at = attrs_off + i * attr_size;
        const uint8_t *raw = d + at;
        uint64_t avail = attr_size - 16;
        uint64_t ids_off = pk_ld64(raw + avail), ids_size = pk_ld64(raw + avail + 8);
        if (sect_check(r, "attr ids", ids_off, ids_size, fsize, at + avail))
            return -1;
        if (ids_size % 8)
            return pk_err_set(r->err, "%s: offset %llu: attr ids size %llu is not a multiple of 8", r->name,
                              (unsigned long long)(at + avail + 8), (unsigned long long)ids_size);
        int rc = pk_reader_add_attr(r, raw, (size_t)avail, d + ids_off, ids_size / 8, at);
        if (rc)
            return rc;
    }
    if (r->nr_attrs == 0)
        return pk_err_set(r->err, "%s: offset 24: no attrs in the file", r->name);

    /* Feature table: one {offset, size} per set bit, right after the data. */
    uint64_t nfeat = 0;
    for (int i = 0; i < 4; i++)
        nfeat += (uint64_t)__builtin_popcountll(r->st->features[i]);
    uint64_t table = data_off + data_size;
    if (nfeat && sect_check(r, "feature table", table, nfeat * 16, fsize, 72))
        return -1;
    uint64_t k = 0;
    for (uint32_t id = 0; id < 256; id++) {
        if (!(r->st->features[id / 64] >> (id % 64) & 1))
            continue;
        uint64_t ent = table + 16 * k++;
        uint64_t foff = pk_ld64(d + ent), fsz = pk_ld64(d + ent + 8);
        if (sect_check(r, pk_perf_feature_name(id) ? pk_perf_feature_name(id) : "feature", foff, fsz, fsize, ent))
            return -1;
        int rc = 0;
        if (id == PK_FEAT_BUILD_ID)
            rc = pk_reader_build_ids(r, d + foff, fsz, foff);
        if (!rc && r->cb->feature)
            rc = r->cb->feature(r->cb->ctx, id, d + foff, fsz);
        if (rc)
            return rc;
    }
    return mem_records(r, d, data_off, data_off + data_size);
}

static int read_mapped(pk_reader *r, const uint8_t *d, uint64_t fsize)
{
    if (check_magic(r, d, (size_t)(fsize < 16 ? fsize : 16)))
        return -1;
    uint64_t hsize = pk_ld64(d + 8);
    if (hsize == PK_PIPE_HEADER_SIZE) {
        r->st->pipe_mode = true;
        return mem_records(r, d, PK_PIPE_HEADER_SIZE, fsize);
    }
    if (hsize != PK_FILE_HEADER_SIZE)
        return pk_err_set(r->err, "%s: offset 8: unknown header size %llu (expected 104, or 16 for pipe mode)",
                          r->name, (unsigned long long)hsize);
    return file_mode(r, d, fsize);
}

/* ---- pipe input ---- */

typedef struct pipe_in {
    int fd;
    uint8_t *buf;
    size_t start, len;          /* valid bytes buf[start, start + len) */
    uint64_t off;               /* stream offset of buf[start] */
} pipe_in;

static int pipe_fill(pk_reader *r, pipe_in *p, size_t need)
{
    if (p->len >= need)
        return 0;
    if (p->start + need > PK_PIPE_BUF) {
        memmove(p->buf, p->buf + p->start, p->len);
        p->start = 0;
    }
    while (p->len < need) {
        ssize_t n = read(p->fd, p->buf + p->start + p->len, PK_PIPE_BUF - p->start - p->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return pk_err_errno(r->err, "%s: offset %llu: read failed", r->name, (unsigned long long)(p->off + p->len));
        if (n == 0)
            break;
        p->len += (size_t)n;
    }
    return 0;
}

static void pipe_consume(pipe_in *p, size_t n)
{
    p->start += n;
    p->len -= n;
    p->off += n;
}

static int pipe_skip(pk_reader *r, pipe_in *p, uint64_t n, uint64_t rec_off)
{
    while (n) {
        if (pipe_fill(r, p, 1))
            return -1;
        if (p->len == 0)
            return pk_reader_fail(r, rec_off, "record's extra payload runs past the end of the input (%llu bytes missing)",
                                  (unsigned long long)n);
        size_t k = n < p->len ? (size_t)n : p->len;
        pipe_consume(p, k);
        n -= k;
    }
    return 0;
}

static int read_pipe(pk_reader *r, int fd)
{
    pipe_in p = {fd, malloc(PK_PIPE_BUF), 0, 0, 0};
    if (!p.buf)
        return pk_err_set(r->err, "%s: out of memory", r->name);
    int rc = pipe_fill(r, &p, 16);
    if (!rc)
        rc = check_magic(r, p.buf, p.len);
    if (!rc) {
        uint64_t hsize = pk_ld64(p.buf + 8);
        if (hsize == PK_FILE_HEADER_SIZE)
            rc = pk_err_set(r->err, "%s: offset 8: a file-mode perf.data cannot be read from a pipe; pass the file itself", r->name);
        else if (hsize != PK_PIPE_HEADER_SIZE)
            rc = pk_err_set(r->err, "%s: offset 8: unknown header size %llu (expected 16 for pipe mode)", r->name,
                            (unsigned long long)hsize);
    }
    if (!rc) {
        r->st->pipe_mode = true;
        pipe_consume(&p, 16);
    }
    while (!rc) {
        if ((rc = pipe_fill(r, &p, 8)))
            break;
        if (p.len == 0)
            break;
        if (p.len < 8) { /* a tail no record header fits in */
            r->st->tail_bytes = p.len;
            r->st->tail_offset = p.off;
            break;
        }
        const uint8_t *rec = p.buf + p.start;
        uint16_t size = pk_ld16(rec + 6);
        if (size < 8) {
            rc = pk_reader_fail(r, p.off, "record size %u is smaller than 8 (type %u)", size, pk_ld32(rec));
            break;
        }
        if ((rc = pipe_fill(r, &p, size)))
            break;
        rec = p.buf + p.start;
        if (p.len < size) {
            rc = pk_reader_fail(r, p.off, "record of %u bytes (type %u) runs past the end of the input (%zu bytes left)",
                                size, pk_ld32(rec), p.len);
            break;
        }
        uint64_t extra, at = p.off;
        if ((rc = pk_reader_record(r, rec, size, at, &extra)))
            break;
        pipe_consume(&p, size);
        if (extra)
            rc = pipe_skip(r, &p, extra, at);
    }
    if (!rc)
        rc = pk_order_finish(r);
    if (!rc)
        rc = pk_reader_decompress_finish(r);
    free(p.buf);
    return rc;
}

/* ---- entry points ---- */

int pk_perf_stats_warning(const pk_perf_stats *st, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!st->tail_bytes)
        return 0;
    int n = snprintf(buf, cap, "offset %llu: %llu bytes after the last record, too few for a record header "
                     "(a truncated tail), ignored; the %llu samples before it are read",
                     (unsigned long long)st->tail_offset, (unsigned long long)st->tail_bytes,
                     (unsigned long long)st->samples);
    return pk_snprintf_len(n, cap);
}

static void reader_free(pk_reader *r)
{
    for (uint32_t i = 0; i < r->nr_attrs; i++) {
        free(r->attrs[i]->ids_owned);
        free(r->attrs[i]);
    }
    free(r->attrs);
    pk_u64map_free(&r->id2attr);
    if (r->zds)
        ZSTD_freeDStream(r->zds);
    free(r->win);
    pk_order_free(r);
}

static int reader_init(pk_reader *r, const char *name, const pk_perf_callbacks *cb, pk_perf_stats *stats,
                       pk_perf_stats *local, pk_err *err)
{
    static const pk_perf_callbacks none;
    memset(r, 0, sizeof *r);
    r->name = name;
    r->cb = cb ? cb : &none;
    r->st = stats ? stats : local;
    r->err = err;
    memset(r->st, 0, sizeof *r->st);
    if (pk_u64map_init(&r->id2attr, 16))
        return pk_err_set(err, "%s: out of memory", name);
    return 0;
}

int pk_perf_read_mem(const void *data, size_t size, const char *name, const pk_perf_callbacks *cb,
                     pk_perf_stats *stats, pk_err *err)
{
    pk_perf_stats local;
    pk_reader r;
    if (reader_init(&r, name, cb, stats, &local, err))
        return -1;
    int rc = size ? read_mapped(&r, data, size)
                  : pk_err_set(err, "%s: offset 0: empty file, not a perf.data", name);
    reader_free(&r);
    return rc;
}

int pk_perf_read_fd(int fd, const char *name, const pk_perf_callbacks *cb, pk_perf_stats *stats, pk_err *err)
{
    pk_perf_stats local;
    pk_reader r;
    if (reader_init(&r, name, cb, stats, &local, err))
        return -1;
    struct stat st;
    int rc;
    if (fstat(fd, &st) < 0) {
        rc = pk_err_errno(err, "%s: cannot stat", name);
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        uint64_t fsize = (uint64_t)st.st_size;
        void *m = mmap(NULL, (size_t)fsize, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            rc = pk_err_errno(err, "%s: cannot mmap", name);
        } else {
            madvise(m, (size_t)fsize, MADV_SEQUENTIAL);
            r.map_base = m;
            rc = read_mapped(&r, m, fsize);
            munmap(m, (size_t)fsize);
        }
    } else if (S_ISREG(st.st_mode)) {
        rc = pk_err_set(err, "%s: offset 0: empty file, not a perf.data", name);
    } else {
        rc = read_pipe(&r, fd);
    }
    reader_free(&r);
    return rc;
}

int pk_perf_read(const char *path, const pk_perf_callbacks *cb, pk_perf_stats *stats, pk_err *err)
{
    if (!strcmp(path, "-"))
        return pk_perf_read_fd(0, "<stdin>", cb, stats, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pk_err_errno(err, "%s: cannot open", path);
    int rc = pk_perf_read_fd(fd, path, cb, stats, err);
    close(fd);
    return rc;
}

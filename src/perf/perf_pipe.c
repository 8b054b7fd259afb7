/* perf_pipe.c — a perf.data file re-written in pipe mode (`perf record -o -`
 * layout) onto a descriptor: the 16-byte header, one HEADER_ATTR record per
 * attr (its ids inline), one HEADER_FEATURE record per feature section that
 * fits in a record, then the data section's records as they are. Build-ids
 * travel in the MMAP2 records (pgokit's and perf --buildid-mmap's), not in
 * the BUILD_ID feature (a table perf's pipe mode sends otherwise). */
#include "perf/perf_internal.h"

#include <errno.h>
#include <unistd.h>

static int put(int fd, const void *data, size_t len, const char *name, pk_err *err)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return pk_err_errno(err, "%s: write failed", name);
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int put_record(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen,
                      const char *name, pk_err *err)
{
    uint8_t h[8];
    pk_st32(h, type);
    pk_st16(h + 4, 0);
    pk_st16(h + 6, (uint16_t)(8 + alen + blen));
    return put(fd, h, 8, name, err) || put(fd, a, alen, name, err) || (blen && put(fd, b, blen, name, err)) ? -1 : 0;
}

int pk_perf_file_to_pipe(const char *path, int fd, const char *out_name, pk_err *err)
{
    /* the reader checks every section of it first */
    pk_perf_callbacks none = {0};
    pk_perf_stats st;
    memset(&st, 0, sizeof st);
    if (pk_perf_read(path, &none, &st, err))
        return -1;
    if (st.pipe_mode)
        return pk_err_set(err, "%s: already in pipe mode", path);
    pk_mapped_file f;
    if (pk_file_map_regular(&f, path, err))
        return -1;
    const uint8_t *d = f.data;
    uint64_t attr_size = pk_ld64(d + 16), attrs_off = pk_ld64(d + 24), attrs_size = pk_ld64(d + 32);
    int rc = 0;
    uint8_t hdr[16];
    pk_st64(hdr, PK_PERF_MAGIC2);
    pk_st64(hdr + 8, PK_PIPE_HEADER_SIZE);
    rc = put(fd, hdr, sizeof hdr, out_name, err);
    for (uint64_t i = 0; !rc && i < attrs_size / attr_size; i++) {
        const uint8_t *raw = d + attrs_off + i * attr_size;
        uint64_t alen = attr_size - 16;
        uint64_t ids_off = pk_ld64(raw + alen), ids_size = pk_ld64(raw + alen + 8);
        if (8 + alen + ids_size > 0xffff)
            rc = pk_err_set(err, "%s: attr %llu has too many ids (%llu) for a pipe-mode record", path,
                            (unsigned long long)i, (unsigned long long)(ids_size / 8));
        else
            rc = put_record(fd, PK_REC_HEADER_ATTR, raw, (size_t)alen, d + ids_off, (size_t)ids_size, out_name, err);
    }
    uint64_t table = st.data_offset + st.data_size, k = 0;
    for (uint32_t id = 0; !rc && id < 256; id++) {
        if (!(st.features[id / 64] >> (id % 64) & 1))
            continue;
        uint64_t ent = table + 16 * k++;
        uint64_t foff = pk_ld64(d + ent), fsz = pk_ld64(d + ent + 8);
        if (id == PK_FEAT_BUILD_ID || 16 + fsz > 0xffff)
            continue;
        uint8_t fid[8];
        pk_st64(fid, id);
        rc = put_record(fd, PK_REC_HEADER_FEATURE, fid, 8, d + foff, (size_t)fsz, out_name, err);
    }
    if (!rc)
        rc = put(fd, d + st.data_offset, (size_t)st.data_size, out_name, err);
    pk_file_unmap(&f);
    return rc;
}

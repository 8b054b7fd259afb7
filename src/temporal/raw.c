/* raw.c — reader of the raw profiles written by libpgokit_rt (format in
 * temporal.h). The whole file is validated before anything is used: a
 * truncated or corrupt file is refused with its path and the offending offset. */
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

uint64_t pk_temporal_checksum(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= (i >= 24 && i < 32) ? 0 : data[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static bool has_magic(const char *path, const char *magic)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[8];
    ssize_t n = read(fd, buf, 8);
    close(fd);
    return n == 8 && !memcmp(buf, magic, 8);
}

static int raw_validate(pk_temporal_raw *r, pk_err *err);

bool pk_temporal_is_raw(const char *path) { return has_magic(path, PK_TEMPORAL_RAW_MAGIC); }

bool pk_temporal_is_profile(const char *path)
{
    return has_magic(path, PK_TEMPORAL_RAW_MAGIC) || has_magic(path, PK_TEMPORAL_INDEXED_MAGIC);
}

int pk_temporal_raw_open(pk_temporal_raw *r, const char *path, pk_err *err)
{
    memset(r, 0, sizeof *r);
    if (pk_file_map(&r->file, path, err) != 0) return -1;
    return raw_validate(r, err);
}

int pk_temporal_raw_open_mem(pk_temporal_raw *r, const void *data, size_t size, const char *name, pk_err *err)
{
    memset(r, 0, sizeof *r);
    if (pk_file_borrow(&r->file, data, size, name, err) != 0) return -1;
    return raw_validate(r, err);
}

/* Checks r->file (mapped or borrowed) whole; closes r on failure. */
static int raw_validate(pk_temporal_raw *r, pk_err *err)
{
    const char *path = r->file.path;
    const uint8_t *d = r->file.data;
    size_t size = r->file.size;
    if (size < 8 || memcmp(d, PK_TEMPORAL_RAW_MAGIC, 8) != 0) {
        pk_err_set(err, "%s: offset 0: not a pgokit raw temporal profile (bad magic)", path);
        goto fail;
    }
    if (size < PK_TEMPORAL_RAW_HEADER_SIZE) {
        pk_err_set(err, "%s: offset %zu: truncated raw profile: header needs %u bytes, file has %zu",
                   path, size, PK_TEMPORAL_RAW_HEADER_SIZE, size);
        goto fail;
    }
    r->version = pk_ld32(d + 8);
    if (r->version != PK_TEMPORAL_RAW_VERSION) {
        pk_err_set(err, "%s: offset 8: unsupported raw profile version %u (this pgokit reads %u)",
                   path, r->version, PK_TEMPORAL_RAW_VERSION);
        goto fail;
    }
    r->flags = pk_ld32(d + 12);
    uint64_t total = pk_ld64(d + 16);
    if (total != size) {
        pk_err_set(err, "%s: offset 16: %s raw profile: header says %llu bytes, file has %zu",
                   path, total > size ? "truncated" : "corrupt", (unsigned long long)total, size);
        goto fail;
    }
    uint64_t sum = pk_temporal_checksum(d, size);
    if (sum != pk_ld64(d + 24)) {
        pk_err_set(err, "%s: offset 24: checksum mismatch (stored %016llx, computed %016llx): corrupt raw profile",
                   path, (unsigned long long)pk_ld64(d + 24), (unsigned long long)sum);
        goto fail;
    }
    r->pid = pk_ld64(d + 32);
    r->num_modules = pk_ld32(d + 40);
    r->redirected = pk_ld32(d + 44);
    r->num_records = pk_ld64(d + 48);
    r->dropped = pk_ld64(d + 56);
    if (r->num_modules > 65536) {
        pk_err_set(err, "%s: offset 40: implausible module count %u", path, r->num_modules);
        goto fail;
    }
    r->modules = calloc(r->num_modules ? r->num_modules : 1, sizeof *r->modules);
    if (!r->modules) { pk_err_set(err, "%s: out of memory", path); goto fail; }
    size_t off = PK_TEMPORAL_RAW_HEADER_SIZE;
    for (uint32_t i = 0; i < r->num_modules; i++) {
        if (size - off < 16) {
            pk_err_set(err, "%s: offset %zu: module %u header runs past the end", path, off, i);
            goto fail;
        }
        pk_temporal_raw_module *m = &r->modules[i];
        m->build_id_len = pk_ld32(d + off);
        m->path_len = pk_ld32(d + off + 4);
        m->load_bias = pk_ld64(d + off + 8);
        uint64_t body = (uint64_t)m->build_id_len + m->path_len;
        uint64_t padded = (body + 7) & ~7ull;
        if (m->build_id_len > PK_TEMPORAL_BUILD_ID_MAX || padded > size - off - 16) {
            pk_err_set(err, "%s: offset %zu: module %u: build-id/path lengths %u/%u run past the end",
                       path, off, i, m->build_id_len, m->path_len);
            goto fail;
        }
        m->build_id = d + off + 16;
        m->path = (const char *)d + off + 16 + m->build_id_len;
        off += 16 + padded;
    }
    if (r->num_records > (size - off) / 24 || r->num_records * 24 != size - off) {
        pk_err_set(err, "%s: offset %zu: %llu records of 24 bytes do not fill the remaining %zu bytes",
                   path, off, (unsigned long long)r->num_records, size - off);
        goto fail;
    }
    r->records = d + off;
    for (uint64_t i = 0; i < r->num_records; i++) {
        uint32_t mod = pk_ld32(r->records + i * 24 + 8);
        if (mod != UINT32_MAX && mod >= r->num_modules) {
            pk_err_set(err, "%s: offset %llu: record %llu names module %u of %u", path,
                       (unsigned long long)(off + i * 24 + 8), (unsigned long long)i, mod, r->num_modules);
            goto fail;
        }
    }
    return 0;
fail:
    pk_temporal_raw_close(r);
    return -1;
}

void pk_temporal_raw_close(pk_temporal_raw *r)
{
    free(r->modules);
    r->modules = NULL;
    pk_file_unmap(&r->file);
}

pk_temporal_raw_record pk_temporal_raw_record_at(const pk_temporal_raw *r, uint64_t i)
{
    const uint8_t *p = r->records + i * 24;
    pk_temporal_raw_record rec = {pk_ld64(p), pk_ld32(p + 8), pk_ld64(p + 16)};
    return rec;
}

/* fuzz_rawprof.c — pgokit's raw (unsymbolized) profile readers: version 1
 * and flat version 2 (src/aggregate/rawprof.c, pk_rawprof_read_mem), and
 * version 2 with contexts and IP observations (src/unwind/rawprof2.c,
 * pk_rawprof2_read_mem). The file ends in a checksum, so each input is read
 * twice: as it is, and with the checksum made right (what lies behind the
 * check is reached too). A profile read is written back and read again: the
 * same binary, base, ranges, branches and counts (version 1); the same bytes
 * when written once more (version 2: the writer's output is canonical). */
#include "fuzz_util.h"
#include "aggregate/aggregate.h"
#include "unwind/rawprof2.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void same_pairs(const pk_pairmap *a, const pk_pairmap *b, const char *what)
{
    size_t na, nb;
    pk_pair_count *x = pk_pairmap_sorted(a, &na), *y = pk_pairmap_sorted(b, &nb);
    if (na != nb || (na && memcmp(x, y, na * sizeof *x)))
        pk_fuzz_fail("%s differ after a write and read (%zu vs %zu)", what, na, nb);
    free(x);
    free(y);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    pk_mapped_file f;
    pk_err err;
    if (pk_file_map(&f, path, &err))
        pk_fuzz_fail("reading back %s: %s", path, err.msg);
    uint8_t *d = malloc(f.size + 1);
    if (!d)
        pk_fuzz_fail("out of memory");
    memcpy(d, f.data, f.size);
    *size = f.size;
    pk_file_unmap(&f);
    return d;
}

/* version 2: read, written, read, written: the two files are the same */
static void one_v2(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_rawprof2 r;
    if (pk_rawprof2_read_mem(&r, data, size, PK_FUZZ_NAME, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    char p1[128], p2[128];
    snprintf(p1, sizeof p1, "%s/raw2a.prof", pk_fuzz_tmpdir());
    snprintf(p2, sizeof p2, "%s/raw2b.prof", pk_fuzz_tmpdir());
    if (pk_rawprof2_write(&r, p1, &err))
        pk_fuzz_fail("writing what was read (version 2): %s", err.msg);
    pk_rawprof2 back;
    if (pk_rawprof2_read(&back, p1, &err))
        pk_fuzz_fail("reading what was written (version 2): %s", err.msg);
    if (pk_rawprof2_write(&back, p2, &err))
        pk_fuzz_fail("writing it again (version 2): %s", err.msg);
    size_t n1, n2;
    uint8_t *d1 = slurp(p1, &n1), *d2 = slurp(p2, &n2);
    if (n1 != n2 || memcmp(d1, d2, n1))
        pk_fuzz_fail("version 2: written twice, different bytes (%zu vs %zu)", n1, n2);
    free(d1);
    free(d2);
    unlink(p1);
    unlink(p2);
    pk_rawprof2_free(&back);
    pk_rawprof2_free(&r);
}

static void one(const uint8_t *data, size_t size)
{
    one_v2(data, size);
    pk_err err = {{0}};
    pk_rawprof r;
    if (pk_rawprof_read_mem(&r, data, size, PK_FUZZ_NAME, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/raw.prof", pk_fuzz_tmpdir());
    if (pk_rawprof_write(&r, path, &err))
        pk_fuzz_fail("writing what was read: %s", err.msg);
    pk_rawprof back;
    if (pk_rawprof_read(&back, path, &err))
        pk_fuzz_fail("reading what was written: %s", err.msg);
    if (strcmp(r.path, back.path) || r.build_id_size != back.build_id_size ||
        memcmp(r.build_id, back.build_id, r.build_id_size) || r.preferred_base != back.preferred_base)
        pk_fuzz_fail("binary identity differs after a write and read");
    same_pairs(&r.ranges, &back.ranges, "ranges");
    same_pairs(&r.branches, &back.branches, "branches");
    unlink(path);
    pk_rawprof_free(&back);
    pk_rawprof_free(&r);
}

/* the trailing hash of everything before it */
static void fix_checksum(uint8_t *data, size_t size)
{
    pk_st64(data + size - 8, pk_hash_bytes(data, size - 8));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_fuzz_read_with_fixed_checksum(data, size, 16, fix_checksum, one);
    return 0;
}

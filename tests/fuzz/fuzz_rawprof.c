/* fuzz_rawprof.c — pgokit's raw (unsymbolized) profile reader
 * (src/aggregate/rawprof.c, pk_rawprof_read_mem). The file ends in a
 * checksum, so each input is read twice: as it is, and with the checksum
 * made right (what lies behind the check is reached too). A profile read
 * is written back (pk_rawprof_write) and read again: the same binary, base,
 * ranges, branches and counts. */
#include "fuzz_util.h"
#include "aggregate/aggregate.h"

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

static void one(const uint8_t *data, size_t size)
{
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

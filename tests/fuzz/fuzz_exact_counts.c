/* fuzz_exact_counts.c — the emulator's exact-count files
 * (src/record/exact_counts.c, pk_exact_read_mem). What is read is written
 * back (pk_exact_write) and read again: the same binaries and entries. */
#include "fuzz_util.h"
#include "record/record.h"

#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_exact_counts c;
    if (pk_exact_read_mem(data, size, PK_FUZZ_NAME, &c, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return 0;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/x.exact", pk_fuzz_tmpdir());
    if (pk_exact_write(path, &c, &err))
        pk_fuzz_fail("writing what was read: %s", err.msg);
    pk_exact_counts back;
    if (pk_exact_read(path, &back, &err))
        pk_fuzz_fail("reading what was written: %s", err.msg);
    if (back.nbins != c.nbins || back.unmapped != c.unmapped)
        pk_fuzz_fail("binaries differ after a write and read");
    for (size_t i = 0; i < c.nbins; i++) {
        const pk_exact_binary *a = &c.bins[i], *b = &back.bins[i];
        if (strcmp(a->path, b->path) || a->nranges != b->nranges || a->nbranches != b->nbranches ||
            (a->nranges && memcmp(a->ranges, b->ranges, a->nranges * sizeof *a->ranges)) ||
            (a->nbranches && memcmp(a->branches, b->branches, a->nbranches * sizeof *a->branches)))
            pk_fuzz_fail("binary %zu differs after a write and read", i);
    }
    unlink(path);
    pk_exact_free(&back);
    pk_exact_free(&c);
    return 0;
}

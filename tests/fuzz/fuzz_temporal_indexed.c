/* fuzz_temporal_indexed.c — indexed temporal profiles (src/temporal/
 * indexed.c, pk_temporal_parse), read as they are and with their size and
 * checksum made right; what parses is merged into a profile with a smaller
 * reservoir (reservoir sampling, name matching), written and loaded back. */
#include "fuzz_util.h"
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void one(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_temporal_profile p;
    if (pk_temporal_parse(&p, data, size, PK_FUZZ_NAME, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    pk_temporal_profile m;
    pk_temporal_init(&m, 3, 8);
    if (pk_temporal_merge(&m, &p, &err) || pk_temporal_merge(&m, &p, &err)) {
        if (!err.msg[0])
            pk_fuzz_fail("merge failed without a message");
    } else {
        char path[128];
        snprintf(path, sizeof path, "%s/m.pgotemporal", pk_fuzz_tmpdir());
        if (pk_temporal_write(&m, path, &err))
            pk_fuzz_fail("writing a merged profile: %s", err.msg);
        pk_temporal_profile back;
        if (pk_temporal_load(&back, path, &err))
            pk_fuzz_fail("loading what was written: %s", err.msg);
        if (back.num_funcs != m.num_funcs || back.num_traces != m.num_traces)
            pk_fuzz_fail("the merged profile changed on its way through the file");
        pk_temporal_free(&back);
        unlink(path);
    }
    pk_temporal_free(&m);
    pk_temporal_free(&p);
}

/* the header's size and checksum fields (offsets 16 and 24) */
static void fix_checksum(uint8_t *data, size_t size)
{
    pk_st64(data + 16, size);
    pk_st64(data + 24, pk_temporal_checksum(data, size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_fuzz_read_with_fixed_checksum(data, size, 32, fix_checksum, one);
    return 0;
}

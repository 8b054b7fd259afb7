/* fuzz_pprof.c — the pprof reader (src/pprof/: gzip, protobuf wire checks,
 * the four walks of pprof_read.c) from memory, with the default options and
 * with the ones profgen uses (restore_return_addresses) and a sample type
 * named by the input's last byte; what reads is handed to the pprof writer
 * (aggregation, location and mapping tables, gzip) as `pgokit convert`
 * does. A small cap on the decompressed size keeps gzip bombs cheap here;
 * the default cap is checked by the regression inputs. */
#include "fuzz_util.h"
#include "pprof/pprof.h"

#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_fuzz_digest d = {0, 0};
    pk_perf_callbacks cb;
    pk_fuzz_perf_callbacks(&cb, &d);
    pk_pprof_stats st;
    pk_pprof_opts o;
    pk_pprof_opts_init(&o);
    o.max_bytes = 64u << 20;
    if (pk_pprof_read_mem(data, size, PK_FUZZ_NAME, &o, &cb, &st, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return 0;
    }
    o.restore_return_addresses = true;
    o.sample_index = size ? data[size - 1] % 4 : 0;
    pk_pprof_read_mem(data, size, PK_FUZZ_NAME, &o, &cb, &st, &err);

    pk_pprof_writer *w = pk_pprof_writer_new(NULL, &err);
    if (!w)
        pk_fuzz_fail("writer_new: %s", err.msg);
    pk_perf_callbacks wcb;
    pk_pprof_writer_callbacks(w, &err, &wcb);
    pk_pprof_opts_init(&o);
    o.max_bytes = 64u << 20;
    if (pk_pprof_read_mem(data, size, PK_FUZZ_NAME, &o, &wcb, &st, &err))
        pk_fuzz_fail("a profile that read once failed into the writer: %s", err.msg);
    char path[128];
    snprintf(path, sizeof path, "%s/out.pb.gz", pk_fuzz_tmpdir());
    pk_pprof_write_stats ws;
    if (pk_pprof_writer_write(w, path, &ws, &err) && !err.msg[0])
        pk_fuzz_fail("the pprof writer failed without a message");
    pk_pprof_writer_free(w);
    unlink(path);
    return 0;
}

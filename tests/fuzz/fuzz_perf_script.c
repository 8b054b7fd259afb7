/* fuzz_perf_script.c — the `perf script` text reader (src/perf/perf_script.c,
 * script_frames.c): LBR-only and stack+LBR forms, mmap lines, perf's header
 * fields, repeat counts, file-relative call chains. Every sample callback
 * touches the whole call chain and branch stack it is handed. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_fuzz_digest d = {0, 0};
    pk_perf_callbacks cb;
    pk_fuzz_perf_callbacks(&cb, &d);
    pk_script_stats st;
    if (pk_perf_script_read_mem(data, size, PK_FUZZ_NAME, &cb, &st, &err)) {
        pk_fuzz_check_error(&err, "line");
    } else {
        char w[1024];
        pk_script_stats_warning(&st, w, sizeof w);
    }
    return 0;
}
